/* Owns the strided views: Slice, AsStrided, Diagonal and Contiguous. Each
 * output shares its input's buffer with new shape, strides and start; only
 * Contiguous of a scattered input copies. Every infer recomputes the shape
 * from the input's, so a shapeless compiled tape replays them on new
 * shapes. */
#include <limits.h>
#include <string.h>

#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

/* ---- Slice ---- */

int mc_slice_normalize(int ndim, const int *shape, const mc_slice_params *p, int *out_start, int *out_shape,
                       bool *neg, const char *fn)
{
    if (p->ndim != ndim)
        return mc_error("[%s] Invalid number of indices or strides for array with dimension %d.", fn, ndim);
    *neg = false;
    for (int i = 0; i < ndim; i++) {
        /* 64-bit: start + n, and the extent arithmetic, overflow int for
         * starts, stops or steps near INT_MIN/INT_MAX */
        int64_t len = shape[i], s = p->start[i], e = p->stop[i], step = p->strides[i];
        if (step == 0)
            return mc_error("[%s] Slice step cannot be zero (axis %d).", fn, i);
        if (s < 0)
            s += len;
        if (e < 0)
            e += len;
        int64_t b, count;
        if (step < 0) {
            *neg = true;
            b = s < len - 1 ? s : len - 1;
            int64_t end = e > -1 ? e : -1;
            if (end > b)
                end = b;
            count = (b - end - step - 1) / -step;
        } else {
            b = s < 0 ? 0 : (s > len ? len : s);
            int64_t end = e < 0 ? 0 : (e > len ? len : e);
            if (end < b)
                end = b;
            count = (end - b + step - 1) / step;
        }
        out_start[i] = (int)b;
        out_shape[i] = (int)count;
    }
    return 0;
}

static int slice_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    bool neg;
    int start[MC_MAX_NDIM];
    const mc_array *x = in[0];
    if (mc_slice_normalize(x->ndim, x->shape, params, start, out->shape, &neg, fn))
        return 1;
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    return 0;
}

static int slice_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_slice_params *p = params;
    mc_array *x = in[0];
    bool neg;
    int start[MC_MAX_NDIM], shape[MC_MAX_NDIM];
    if (mc_slice_normalize(x->ndim, x->shape, p, start, shape, &neg, "slice"))
        return 1;
    int64_t strides[MC_MAX_NDIM];
    int64_t off = 0;
    for (int i = 0; i < x->ndim; i++) {
        strides[i] = x->strides[i] * p->strides[i];
        off += (int64_t)start[i] * x->strides[i];
    }
    /* an empty slice may start past the end: keep its pointer in range */
    char *data = (char *)x->data;
    if (out->size)
        data += off * (int64_t)mc_dtype_size(x->dtype);
    mc_array_set_view(out, x, data, strides);
    return 0;
}

/* ---- AsStrided ---- */

static int as_strided_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_as_strided_params *p = params;
    const mc_array *x = in[0];
    size_t size;
    if (!mc_shape_size(p->ndim, p->shape, &size))
        return mc_error("[%s] Negative or too large dimensions in the view's shape.", fn);
    if (size) {
        /* the lowest and highest element the view reaches must be in x */
        int64_t lo = p->offset, hi = p->offset;
        bool ovf = false;
        for (int i = 0; i < p->ndim; i++) {
            int64_t d;
            ovf |= __builtin_mul_overflow(p->strides[i], (int64_t)(p->shape[i] - 1), &d);
            ovf |= d < 0 ? __builtin_add_overflow(lo, d, &lo) : __builtin_add_overflow(hi, d, &hi);
        }
        if (ovf || lo < 0 || hi >= (int64_t)x->size) {
            char s[256];
            return mc_error("[%s] The view of shape %s with offset %lld reaches outside the %zu elements of "
                            "the input.", fn, mc_shape_str(s, sizeof s, p->ndim, p->shape),
                            (long long)p->offset, x->size);
        }
    }
    out->dtype = x->dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof(int) * (size_t)p->ndim);
    return 0;
}

static int as_strided_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_as_strided_params *p = params;
    mc_array *x = in[0];
    /* the op feeds a Contiguous node, so x is row-major and its flat
     * element offsets are the user's */
    if (!(x->flags & MC_FLAG_ROW_CONTIG))
        return mc_error("[as_strided] The input view is not row-contiguous.");
    char *data = (char *)x->data;
    if (out->size)
        data += p->offset * (int64_t)mc_dtype_size(x->dtype);
    mc_array_set_view(out, x, data, p->strides);
    return 0;
}

/* ---- Diagonal ---- */

/* In 64 bits: negating an offset of INT_MIN overflows an int. */
static int diag_len(const mc_array *x, const mc_diagonal_params *p)
{
    int64_t off1 = p->offset < 0 ? -(int64_t)p->offset : 0;
    int64_t off2 = p->offset > 0 ? p->offset : 0;
    int64_t a = (int64_t)x->shape[p->axis1] - off1, b = (int64_t)x->shape[p->axis2] - off2;
    int64_t m = a < b ? a : b;
    return m > 0 ? (int)m : 0;
}

static int diagonal_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_diagonal_params *p = params;
    const mc_array *x = in[0];
    if (x->ndim < 2 || p->axis1 < 0 || p->axis2 < 0 || p->axis1 >= x->ndim || p->axis2 >= x->ndim ||
        p->axis1 == p->axis2)
        return mc_error("[%s] Invalid axes %d and %d for array with %d dimensions.", fn, p->axis1, p->axis2,
                        x->ndim);
    out->dtype = x->dtype;
    out->ndim = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != p->axis1 && i != p->axis2)
            out->shape[out->ndim++] = x->shape[i];
    out->shape[out->ndim++] = diag_len(x, p);
    return 0;
}

static int diagonal_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_diagonal_params *p = params;
    mc_array *x = in[0];
    int64_t strides[MC_MAX_NDIM];
    int k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != p->axis1 && i != p->axis2)
            strides[k++] = x->strides[i];
    int64_t s1 = x->strides[p->axis1], s2 = x->strides[p->axis2];
    strides[k] = s1 + s2;
    char *data = (char *)x->data;
    if (out->size) {
        int64_t off = p->offset < 0 ? -(int64_t)p->offset * s1 : (int64_t)p->offset * s2;
        data += off * (int64_t)mc_dtype_size(x->dtype);
    }
    mc_array_set_view(out, x, data, strides);
    return 0;
}

/* ---- Contiguous ---- */

static int contiguous_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    (void)fn;
    const mc_array *x = in[0];
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    return 0;
}

static int contiguous_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_contiguous_params *p = params;
    mc_array *x = in[0];
    /* Sharing keeps the whole input buffer alive: as MLX, only when it is
     * not much larger than the result. */
    size_t nbytes = out->size * mc_dtype_size(out->dtype);
    bool layout_ok = (x->flags & MC_FLAG_ROW_CONTIG) || (p->allow_col_major && (x->flags & MC_FLAG_COL_CONTIG));
    if (layout_ok && x->buf->nbytes <= nbytes + 16384) {
        mc_array_set_view(out, x, x->data, x->strides);
        return 0;
    }
    return mc_run_unary(out, x, mc_kernels()->convert[x->dtype][x->dtype], "contiguous");
}

/* ---- derivatives of Slice and Contiguous (linear: jvp is the
 * primitive on the tangent) ---- */

/* The cotangent written into zeros of the input's shape (MLX: Slice's vjp
 * is a slice_update of zeros). */
static int slice_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *zeros = mc_gb_zeros_like(&s, node->inputs[0]);
    vjps[0] = mc_gb_finish_ref(&s, mc_gb_slice_update(&s, zeros, cot, node->params));
    return vjps[0] ? 0 : 1;
}

static int contiguous_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                          const char *fn)
{
    (void)node;
    (void)argnums;
    (void)nargs;
    (void)fn;
    vjps[0] = mc_array_retain(cot);
    return 0;
}

int mc_slice_params_prepend_batch(mc_slice_params *q, int batch, const char *fn)
{
    if (mc_vmap_check_ndim(q->ndim, fn))
        return 1;
    for (int i = q->ndim; i > 0; i--) {
        q->start[i] = q->start[i - 1];
        q->stop[i] = q->stop[i - 1];
        q->strides[i] = q->strides[i - 1];
    }
    q->ndim++;
    q->start[0] = 0;
    q->stop[0] = batch;
    q->strides[0] = 1;
    return 0;
}

/* The batch first, taken whole. */
static int slice_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                      const char *fn)
{
    mc_slice_params q;
    mc_vmap_params(&q, sizeof q, node);
    if (mc_slice_params_prepend_batch(&q, in[0]->shape[axes[0]], fn))
        return 1;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_slice = {
    .name = "Slice",
    .arity = 1,
    .infer = slice_infer,
    .eval = slice_eval,
    .vjp = slice_vjp,
    .jvp = mc_jvp_linear,
    .vmap = slice_vmap,
};

/* AsStrided's derivatives (MLX's AsStrided::vjp and jvp). */

/* The cotangent scatter-added into zeros of the input's size through the
 * flat positions the view read (the same view of 0, 1, ..., n - 1), so an
 * element read by several windows gets the sum of their parts. */
static int as_strided_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                          const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_array *x = node->inputs[0];
    if (x->size > INT_MAX || cot->size > INT_MAX)
        return mc_error("[%s] Cannot differentiate as_strided over more than %d elements.", fn, INT_MAX);
    int n = (int)x->size, m = (int)cot->size;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *pos = mc_gb_arange(&s, n, MLX_INT32);
    mc_array *read = mc_gb_reshape(&s, mc_gb_like(&s, node, &pos, 1), 1, &m);
    mc_array *g = mc_gb_scatter_axis(&s, mc_gb_zeros(&s, 1, &n, x->dtype), read, mc_gb_reshape(&s, cot, 1, &m), 0,
                                     MC_SCATTER_SUM);
    vjps[0] = mc_gb_finish_ref(&s, mc_gb_reshape(&s, g, x->ndim, x->shape));
    return vjps[0] ? 0 : 1;
}

/* Linear: the same view of the tangent, made row-contiguous first since
 * the view reads its input's row-major elements (a tangent may be a
 * broadcast or a transposed view). */
static mc_array *as_strided_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                                const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *t = mc_gb_contiguous(&s, tans[0]);
    return mc_gb_finish_ref(&s, mc_gb_like(&s, node, &t, 1));
}

const mc_prim_info mc_prim_as_strided = {
    .name = "AsStrided",
    .arity = 1,
    .infer = as_strided_infer,
    .eval = as_strided_eval,
    .vjp = as_strided_vjp,
    .jvp = as_strided_jvp,
    .vmap = mc_vmap_unsupported,
};

/* Diagonal's vjp: the cotangent on the offset diagonal of zeros of the
 * input's shape (MLX builds diagonal from as_strided, whose vjp scatters
 * into zeros the same way). The cotangent is padded along its last axis
 * to axis1's length (element k at row k + row offset), spread along axis2,
 * moved to the input's axis order, and kept where column - row = offset. */
static int diagonal_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                        const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_diagonal_params *p = node->params;
    mc_array *x = node->inputs[0];
    int nd = x->ndim, len = node->shape[node->ndim - 1];
    int s1 = x->shape[p->axis1], s2 = x->shape[p->axis2];
    /* |offset| < the axis length when len > 0; else row0 is unused */
    int row0 = len > 0 && p->offset < 0 ? -p->offset : 0;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r;
    if (len == 0) {
        r = mc_gb_zeros_like(&s, x);
    } else {
        mc_array *rows = mc_gb_pad_zeros(&s, cot, node->ndim - 1, row0, s1 - row0 - len);
        int shape[MC_MAX_NDIM], perm[MC_MAX_NDIM], k = 0;
        for (int d = 0; d < nd; d++) {
            if (d == p->axis1) {
                perm[d] = nd - 2;
            } else if (d == p->axis2) {
                perm[d] = nd - 1;
            } else {
                shape[k] = x->shape[d];
                perm[d] = k++;
            }
        }
        shape[nd - 2] = s1;
        shape[nd - 1] = 1;
        mc_array *col = mc_gb_reshape(&s, rows, nd, shape);
        shape[nd - 1] = s2;
        mc_array *spread = mc_gb_transpose(&s, mc_gb_broadcast(&s, col, nd, shape), perm);
        mc_array *cols = mc_gb_iota(&s, s2, p->axis2, nd), *rows_at = mc_gb_iota(&s, s1, p->axis1, nd);
        mc_array *diff = mc_gb_op(&s, MC_B_SUBTRACT, cols, rows_at);
        mc_array *mask = mc_gb_op(&s, MC_B_EQUAL, diff, mc_gb_scalar(&s, p->offset, MLX_INT32));
        r = mc_gb_where(&s, mask, spread, mc_gb_scalar(&s, 0, x->dtype));
    }
    vjps[0] = mc_gb_finish_ref(&s, r);
    return vjps[0] ? 0 : 1;
}

/* MLX's diagonal is a Gather (which it batches); ours is a view of its
 * own and batches as one: the batch first, both axes shifted past it. */
static int diagonal_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                         const char *fn)
{
    mc_diagonal_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.axis1++;
    q.axis2++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_diagonal = {
    .name = "Diagonal",
    .arity = 1,
    .infer = diagonal_infer,
    .eval = diagonal_eval,
    .vjp = diagonal_vjp,
    .jvp = mc_jvp_linear,
    .vmap = diagonal_vmap,
};

const mc_prim_info mc_prim_contiguous = {
    .name = "Contiguous",
    .arity = 1,
    .infer = contiguous_infer,
    .eval = contiguous_eval,
    .vjp = contiguous_vjp,
    .jvp = mc_jvp_linear,
    .vmap = mc_vmap_same_axis,
};
