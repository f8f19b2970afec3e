/* Owns gather_mm, block_masked_mm, segmented_mm and depends: MLX's
 * argument checks and messages (mlx/ops.cpp), in MLX's order, then one
 * node (src/graph/prims_mm_ext.c, prims_depends.c). A 1-d operand is a
 * row (a) or a column (b) whose axis leaves the result, as in matmul.
 *
 * Where MLX leaves a case undefined: gather_mm's indices are converted to
 * uint32 as MLX converts them, and one past the last matrix reads the last
 * matrix (a negative index becomes a large one); segmented_mm's bounds
 * past K read as K, and its operands' inner dims must agree (MLX does not
 * check them); depends needs at least one input (MLX reads inputs[0]). */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_mm_ext.h"
#include "handles/vector.h"
#include "ops/op_util.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* ---- shared checks ---- */

static int zero_dim_error(const char *fn)
{
    return mc_error("[%s] Got 0 dimension input. Inputs must have at least one dimension.", fn);
}

static int float_error(const mc_array *a, const mc_array *b, mlx_dtype t, const char *fn)
{
    return mc_error("[%s] Only real floating point types are supported but %s and %s were provided which "
                    "results in %s, which is not a real floating point type.",
                    fn, mc_dtype_name(a->dtype), mc_dtype_name(b->dtype), mc_dtype_name(t));
}

/* x with a size-1 axis inserted at `at` (from the front when >= 0, else
 * from the back: -1 appends, -2 goes before the last axis). */
static mc_array *with_unit_axis(mc_gb *s, mc_array *x, int at)
{
    if (s->failed || !x)
        return NULL;
    int pos = at >= 0 ? at : x->ndim + 1 + at;
    if (pos < 0 || x->ndim + 1 > MC_MAX_NDIM) {
        s->failed = true;
        mc_error("[%s] Cannot insert an axis at %d of an array of %d dimensions.", s->fn, at, x->ndim);
        return NULL;
    }
    int shape[MC_MAX_NDIM];
    for (int d = 0, k = 0; d <= x->ndim; d++)
        shape[d] = d == pos ? 1 : x->shape[k++];
    return mc_gb_reshape(s, x, x->ndim + 1, shape);
}

/* MLX's operand preparation for the two products: 1-d a as a row, 1-d b
 * as a column, the inner dims checked (with the shapes as expanded), both
 * converted to their promoted floating type. */
static int matrix_operands(mc_gb *s, mc_array *x, mc_array *y, mc_array **ax, mc_array **by)
{
    const char *fn = s->fn;
    if (x->ndim == 0 || y->ndim == 0)
        return zero_dim_error(fn);
    *ax = x->ndim == 1 ? with_unit_axis(s, x, 0) : x;
    *by = y->ndim == 1 ? with_unit_axis(s, y, 1) : y;
    if (!*ax || !*by)
        return 1;
    const mc_array *a = *ax, *b = *by;
    if (a->shape[a->ndim - 1] != b->shape[b->ndim - 2]) {
        char s1[512], s2[512];
        return mc_error("[%s] Last dimension of first input with shape %s must match second to last "
                        "dimension of second input with shape %s.",
                        fn, mc_shape_str(s1, sizeof s1, a->ndim, a->shape),
                        mc_shape_str(s2, sizeof s2, b->ndim, b->shape));
    }
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (!mc_dtype_is_float(t))
        return float_error(x, y, t, fn);
    *ax = mc_gb_astype(s, *ax, t);
    *by = mc_gb_astype(s, *by, t);
    return *ax && *by ? 0 : 1;
}

/* The product r without the axes the 1-d operands added. */
static mc_array *squeeze_vectors(mc_gb *s, mc_array *r, const mc_array *x, const mc_array *y)
{
    if (!r)
        return NULL;
    int axes[2], n = 0;
    if (x->ndim == 1)
        axes[n++] = r->ndim - 2;
    if (y->ndim == 1)
        axes[n++] = r->ndim - 1;
    return n ? mc_gb_squeeze(s, r, axes, n) : r;
}

/* ---- gather_mm ---- */

/* The given indices, or MLX's default: 0, 1, ... over x's batch dims,
 * shaped as them. Checked integral, then converted to uint32. */
static mc_array *gather_indices(mc_gb *s, mlx_array given, const mc_array *x, const char *name)
{
    mc_array *idx;
    if (given.ctx) {
        idx = mc_arr(given);
    } else {
        int count = 1;
        for (int d = 0; d < x->ndim - 2; d++)
            count *= x->shape[d];
        idx = mc_gb_reshape(s, mc_gb_arange(s, count, MLX_UINT32), x->ndim - 2, x->shape);
    }
    if (idx && !mc_dtype_is_integer(idx->dtype)) {
        s->failed = true;
        mc_error("[%s] Got %s with invalid dtype. Indices must be integral.", s->fn, name);
        return NULL;
    }
    return mc_gb_astype(s, idx, MLX_UINT32);
}

static mc_array *gather_mm_node(mc_gb *s, mc_array *x, mc_array *y, mlx_array lhs, mlx_array rhs, bool sorted)
{
    mc_array *a, *b;
    if (matrix_operands(s, x, y, &a, &b))
        return NULL;
    mc_array *li = gather_indices(s, lhs, a, "lhs_indices");
    mc_array *ri = li ? gather_indices(s, rhs, b, "rhs_indices") : NULL;
    if (!ri)
        return NULL;
    int nd, shape[MC_MAX_NDIM];
    if (mc_broadcast_shapes(li->ndim, li->shape, ri->ndim, ri->shape, &nd, shape, s->fn))
        return NULL;
    li = mc_gb_broadcast(s, li, nd, shape);
    ri = mc_gb_broadcast(s, ri, nd, shape);
    mc_array *r = mc_gb_gather_mm(s, a, b, li, ri, sorted && !rhs.ctx, sorted && !lhs.ctx);
    return squeeze_vectors(s, r, x, y);
}

int mlx_gather_mm(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_array lhs_indices,
                  const mlx_array rhs_indices, bool sorted_indices, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "gather_mm";
    if (!lhs_indices.ctx && !rhs_indices.ctx)
        return mlx_matmul(res, a, b, s);
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *y = x ? mc_op_arg(b, fn, "b") : NULL;
    if (!y)
        return 1;
    mc_gb sc;
    mc_gb_begin(&sc, fn);
    mc_array *r = gather_mm_node(&sc, x, y, lhs_indices, rhs_indices, sorted_indices);
    return mc_op_store(res, mc_gb_finish_ref(&sc, r), fn);
}

/* ---- block_masked_mm ---- */

static mc_array *block_masked_node(mc_gb *s, mc_array *x, mc_array *y, int bs, mc_array *mo, mc_array *ml,
                                   mc_array *mr)
{
    mc_array *a, *b;
    if (matrix_operands(s, x, y, &a, &b))
        return NULL;
    /* a 1-d operand's masks gain the same unit axes as the operand (two
     * vectors: two trailing axes, as MLX's expand_dims(mask, {-2, -1})) */
    if (mo && x->ndim == 1)
        mo = with_unit_axis(s, mo, y->ndim == 1 ? -1 : -2);
    if (mo && y->ndim == 1)
        mo = with_unit_axis(s, mo, -1);
    if (ml && x->ndim == 1)
        ml = with_unit_axis(s, ml, -2);
    if (mr && y->ndim == 1)
        mr = with_unit_axis(s, mr, -1);
    if (s->failed)
        return NULL;
    return squeeze_vectors(s, mc_gb_block_masked_mm(s, a, b, bs, mo, ml, mr), x, y);
}

int mlx_block_masked_mm(mlx_array *res, const mlx_array a, const mlx_array b, int block_size,
                        const mlx_array mask_out, const mlx_array mask_lhs, const mlx_array mask_rhs,
                        const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "block_masked_mm";
    if (!mask_out.ctx && !mask_lhs.ctx && !mask_rhs.ctx)
        return mlx_matmul(res, a, b, s);
    if (mc_op_check_res(res, fn))
        return 1;
    if (block_size != 32 && block_size != 64)
        return mc_error("[%s] Only block_sizes 32, 64 are supported.Got block size %d.", fn, block_size);
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *y = x ? mc_op_arg(b, fn, "b") : NULL;
    if (!y)
        return 1;
    mc_gb sc;
    mc_gb_begin(&sc, fn);
    mc_array *r = block_masked_node(&sc, x, y, block_size, mc_arr(mask_out), mc_arr(mask_lhs), mc_arr(mask_rhs));
    return mc_op_store(res, mc_gb_finish_ref(&sc, r), fn);
}

/* ---- segmented_mm ---- */

int mlx_segmented_mm(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_array segments,
                     const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "segmented_mm";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *y = x ? mc_op_arg(b, fn, "b") : NULL;
    mc_array *g = y ? mc_op_arg(segments, fn, "segments") : NULL;
    if (!g)
        return 1;
    if (x->ndim != 2 || y->ndim != 2)
        return mc_error("[%s] Batched matmul not supported", fn);
    if (g->ndim < 1 || g->shape[g->ndim - 1] != 2) {
        char sh[512];
        return mc_error("[%s] The segments should have shape (..., 2) but %s was provided.", fn,
                        mc_shape_str(sh, sizeof sh, g->ndim, g->shape));
    }
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (!mc_dtype_is_float(t))
        return float_error(x, y, t, fn);
    if (!mc_dtype_is_integer(g->dtype))
        return mc_error("[%s] Got segments with invalid dtype. Segments must be integral.", fn);
    mc_gb sc;
    mc_gb_begin(&sc, fn);
    mc_array *in[3] = {mc_gb_astype(&sc, x, t), mc_gb_astype(&sc, y, t), mc_gb_astype(&sc, g, MLX_UINT32)};
    mc_array *r = NULL;
    if (!sc.failed)
        r = mc_gb_hold(&sc, mc_node_new(fn, MC_PRIM_SEGMENTED_MM, in, 3, NULL, 0));
    return mc_op_store(res, mc_gb_finish_ref(&sc, r), fn);
}

/* ---- depends ---- */

/* The arrays of a vector argument (borrowed), or NULL with an error if an
 * item is empty; *n gets the count. */
static mc_array *const *vector_items(mlx_vector_array v, size_t *n, const char *fn, const char *name)
{
    static mc_array *const none[1] = {NULL};
    *n = mc_vec_len(v);
    if (!*n)
        return none;
    for (size_t i = 0; i < *n; i++)
        if (!mc_vec_at(v, i)) {
            mc_error("[%s] Array %zu of %s is empty.", fn, i, name);
            return NULL;
        }
    return mc_vec_arrays(v.ctx);
}

int mlx_depends(mlx_vector_array *res, const mlx_vector_array inputs, const mlx_vector_array dependencies)
{
    static const char fn[] = "depends";
    if (!res)
        return mc_error("[%s] The result pointer is NULL.", fn);
    size_t n, nd;
    mc_array *const *ins = vector_items(inputs, &n, fn, "inputs");
    mc_array *const *deps = ins ? vector_items(dependencies, &nd, fn, "dependencies") : NULL;
    if (!deps)
        return 1;
    if (n == 0)
        return mc_error("[%s] At least one input is needed.", fn);
    if (nd >= (size_t)INT32_MAX)
        return mc_error("[%s] Too many dependencies (%zu).", fn, nd);
    int rc = 1;
    mc_array **node_in = mc_xcalloc(nd + 1, sizeof *node_in);
    mc_array **outs = mc_xcalloc(n, sizeof *outs);
    if (!node_in || !outs) {
        mc_error_oom(fn, (nd + 1 + n) * sizeof *outs);
        goto done;
    }
    if (nd)
        memcpy(node_in + 1, deps, nd * sizeof *node_in);
    for (size_t i = 0; i < n; i++) {
        node_in[0] = ins[i];
        if (!(outs[i] = mc_node_new(fn, MC_PRIM_DEPENDS, node_in, (int)nd + 1, NULL, 0)))
            goto done;
    }
    rc = mc_vec_assign(fn, res, outs, n);
done:
    for (size_t i = 0; outs && i < n; i++)
        mc_array_release(outs[i]);
    mc_xfree(outs);
    mc_xfree(node_in);
    return rc;
}
