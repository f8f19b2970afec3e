/* Owns the mlx-cpu -> MLX half of the primitive mapping: for each of our
 * primitives that MLX can read back, the records of MLX primitives (with
 * their state, as mlx/export.cpp serializes it) that compute it. This file
 * holds the dispatch and the elementwise, view, indexing, reduction,
 * matmul and convolution families; fast.h, quantization, random draws and
 * the factorizations have files of their own (mlxfn_export.h).
 *
 * Where our nodes are more general than MLX's primitives, the exporter
 * writes what MLX's ops would have built: Binary, Select and the matmuls
 * broadcast while they run here, MLX's need inputs of the output's shape
 * (a Broadcast record first); a take is MLX's Gather then Reshape; a mean
 * is a Sum times 1/n, var and std MLX's compositions; the unary functions
 * that MLX composes (reciprocal, isnan, isinf, ...) are written as MLX's
 * compositions; a diagonal is MLX's Gather, Squeeze and Transpose. */
#include <math.h>
#include <string.h>

#include "graph/primitive.h"
#include "graph/prims_binary.h"
#include "graph/prims_conv.h"
#include "graph/prims_copy.h"
#include "graph/prims_create.h"
#include "graph/prims_fft.h"
#include "graph/prims_index.h"
#include "graph/prims_matmul.h"
#include "graph/prims_misc.h"
#include "graph/prims_mm_ext.h"
#include "graph/prims_reduce.h"
#include "graph/prims_scan.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "graph/prims_sort.h"
#include "graph/prims_unary.h"
#include "graph/prims_view.h"
#include "io/mlxfn_export.h"
#include "runtime/error.h"
#include "simd/reduce.h"

typedef const mc_mlxfn_node node_t;

/* A stateless record of name over in[0..n), each broadcast to the output. */
static int elementwise(mc_mlxfn_exp *x, const char *name, node_t *n, const uint64_t *in, const mc_meta *im,
                       uint64_t *id)
{
    uint64_t b[3];
    memcpy(b, in, sizeof(uint64_t) * (size_t)n->n_in);
    mc_xp_bcast_n(x, b, im, n->n_in, n->meta);
    *id = mc_mlxfn_node1(x, name, n->n_in, b, n->meta);
    return 0;
}

/* ---- elementwise ---- */

/* equal(a, v): v a 0-d constant of a's dtype, broadcast as MLX's equal
 * does; 0 on failure (reported). */
static uint64_t equal_to(mc_mlxfn_exp *x, uint64_t a, const mc_meta *m, double v, const mc_meta *out)
{
    uint64_t k = mc_mlxfn_scalar(x, v, m->dtype);
    if (!k)
        return 0;
    uint64_t args[2] = {a, k};
    mc_meta ms[2] = {*m, mc_xp_meta_with(m->dtype, 0, NULL)};
    mc_xp_bcast_n(x, args, ms, 2, out);
    uint64_t r = mc_mlxfn_begin(x, "Equal", 2, args);
    mc_wb_bool(mc_mlxfn_state(x), false);
    mc_mlxfn_end(x, out);
    return r;
}

/* MLX's compositions (mlx/ops.cpp) for a floating a: isposinf and
 * isneginf compare with +-inf, isinf is their or, isfinite is
 * not(isinf or isnan). (Our ops give integer inputs a constant.) */
static int float_class(mc_mlxfn_exp *x, mc_unary_op op, uint64_t a, const mc_meta *m, const mc_meta *out,
                       uint64_t *id)
{
    uint64_t pos = 0, neg = 0;
    if (op != MC_U_ISNEGINF && !(pos = equal_to(x, a, m, INFINITY, out)))
        return 1;
    if (op != MC_U_ISPOSINF && !(neg = equal_to(x, a, m, -INFINITY, out)))
        return 1;
    if (op == MC_U_ISPOSINF || op == MC_U_ISNEGINF) {
        *id = op == MC_U_ISPOSINF ? pos : neg;
        return 0;
    }
    uint64_t args[2] = {pos, neg};
    uint64_t inf = mc_mlxfn_node1(x, "LogicalOr", 2, args, out);
    if (op == MC_U_ISINF) {
        *id = inf;
        return 0;
    }
    uint64_t same[2] = {a, a};
    args[0] = inf;
    args[1] = mc_mlxfn_node1(x, "NotEqual", 2, same, out);
    uint64_t bad = mc_mlxfn_node1(x, "LogicalOr", 2, args, out);
    *id = mc_mlxfn_node1(x, "LogicalNot", 1, &bad, out);
    return 0;
}

static int ex_unary(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    mc_unary_op op = ((const mc_unary_params *)n->params)->op;
    mc_wb *st;
    switch (op) {
    case MC_U_LOG:
    case MC_U_LOG2:
    case MC_U_LOG10:
        *id = mc_mlxfn_begin(x, "Log", 1, in);
        mc_wb_i32(mc_mlxfn_state(x), op == MC_U_LOG2 ? 0 : op == MC_U_LOG10 ? 1 : 2);
        mc_mlxfn_end(x, n->meta);
        return 0;
    case MC_U_SQRT:
    case MC_U_RSQRT:
        *id = mc_mlxfn_begin(x, "Sqrt", 1, in);
        st = mc_mlxfn_state(x);
        mc_wb_bool(st, op == MC_U_RSQRT);
        mc_mlxfn_end(x, n->meta);
        return 0;
    case MC_U_RECIPROCAL: { /* MLX: divide(1, x) */
        uint64_t one = mc_mlxfn_scalar(x, 1.0, im[0].dtype);
        if (!one)
            return 1;
        uint64_t args[2] = {one, in[0]};
        mc_meta m[2] = {mc_xp_meta_with(im[0].dtype, 0, NULL), im[0]};
        mc_xp_bcast_n(x, args, m, 2, n->meta);
        *id = mc_mlxfn_node1(x, "Divide", 2, args, n->meta);
        return 0;
    }
    case MC_U_ISNAN: { /* MLX: not_equal(x, x) */
        uint64_t args[2] = {in[0], in[0]};
        *id = mc_mlxfn_node1(x, "NotEqual", 2, args, n->meta);
        return 0;
    }
    case MC_U_BITWISE_INVERT: { /* MLX 0.31 cannot read BitwiseInvert: x ^ ~0 is the same bits */
        uint64_t ones = mc_mlxfn_all_ones(x, im[0].dtype);
        if (!ones)
            return 1;
        uint64_t args[2] = {in[0], ones};
        mc_meta m[2] = {im[0], mc_xp_meta_with(im[0].dtype, 0, NULL)};
        mc_xp_bcast_n(x, args, m, 2, n->meta);
        *id = mc_mlxfn_begin(x, "BitwiseBinary", 2, args);
        mc_wb_i32(mc_mlxfn_state(x), 2); /* Xor */
        mc_mlxfn_end(x, n->meta);
        return 0;
    }
    case MC_U_ISINF:
    case MC_U_ISFINITE:
    case MC_U_ISPOSINF:
    case MC_U_ISNEGINF: return float_class(x, op, in[0], &im[0], n->meta, id);
    default:
        /* the rest have MLX's names (prims_unary.c) */
        *id = mc_mlxfn_node1(x, mc_prim_name(n->prim, n->params), 1, in, n->meta);
        return 0;
    }
}

static int ex_binary(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    mc_binary_op op = ((const mc_binary_params *)n->params)->op;
    uint64_t b[2] = {in[0], in[1]};
    mc_xp_bcast_n(x, b, im, 2, n->meta);
    switch (op) {
    case MC_B_EQUAL:
    case MC_B_EQUAL_NAN:
        *id = mc_mlxfn_begin(x, "Equal", 2, b);
        mc_wb_bool(mc_mlxfn_state(x), op == MC_B_EQUAL_NAN);
        mc_mlxfn_end(x, n->meta);
        return 0;
    case MC_B_BITWISE_AND:
    case MC_B_BITWISE_OR:
    case MC_B_BITWISE_XOR:
    case MC_B_LEFT_SHIFT:
    case MC_B_RIGHT_SHIFT:
        *id = mc_mlxfn_begin(x, "BitwiseBinary", 2, b);
        mc_wb_i32(mc_mlxfn_state(x), (int)(op - MC_B_BITWISE_AND)); /* MLX: And, Or, Xor, LeftShift, RightShift */
        mc_mlxfn_end(x, n->meta);
        return 0;
    case MC_B_FLOOR_DIVIDE: /* MLX: divide for integers, floor(divide) otherwise */
        if (mc_dtype_is_integer(n->meta->dtype)) {
            *id = mc_mlxfn_node1(x, "Divide", 2, b, n->meta);
        } else {
            uint64_t q = mc_mlxfn_node1(x, "Divide", 2, b, n->meta);
            *id = mc_mlxfn_node1(x, "Floor", 1, &q, n->meta);
        }
        return 0;
    default: *id = mc_mlxfn_node1(x, mc_prim_name(n->prim, n->params), 2, b, n->meta); return 0;
    }
}

static int ex_select(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    return elementwise(x, "Select", n, in, im, id);
}

static int ex_plain(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    *id = mc_mlxfn_node1(x, mc_prim_name(n->prim, n->params), n->n_in, in, n->meta);
    return 0;
}

/* ---- dtypes and views ---- */

static int ex_astype(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    *id = mc_mlxfn_begin(x, n->prim == MC_PRIM_VIEW ? "View" : "AsType", 1, in);
    mc_wb_dtype(mc_mlxfn_state(x), n->meta->dtype);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_copy(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    if (im[0].dtype != n->meta->dtype)
        return ex_astype(x, n, in, im, id);
    *id = mc_mlxfn_node1(x, "Copy", 1, in, n->meta);
    return 0;
}

static int ex_dims(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_dims_params *p = n->params;
    *id = mc_mlxfn_begin(x, mc_prim_name(n->prim, n->params), 1, in);
    mc_wb_ints(mc_mlxfn_state(x), p->ndim, p->dims);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_axes(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_axes_params *p = n->params;
    *id = mc_mlxfn_begin(x, mc_prim_name(n->prim, n->params), 1, in);
    mc_wb_ints(mc_mlxfn_state(x), p->n, p->axes);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_flatten(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_flatten_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Flatten", 1, in);
    mc_wb_i32(mc_mlxfn_state(x), p->start);
    mc_wb_i32(mc_mlxfn_state(x), p->end);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_unflatten(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_unflatten_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Unflatten", 1, in);
    mc_wb_i32(mc_mlxfn_state(x), p->axis);
    mc_wb_ints(mc_mlxfn_state(x), p->n, p->shape);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* MLX's Slice state: starts and ends normalised, ends past the last
 * element read (-1 below index 0 for a negative stride). */
static int slice_state(mc_mlxfn_exp *x, const mc_slice_params *p, const mc_meta *src)
{
    int start[MC_MAX_NDIM], shape[MC_MAX_NDIM], end[MC_MAX_NDIM];
    bool neg;
    if (mc_slice_normalize(src->ndim, src->shape, p, start, shape, &neg, mc_mlxfn_fn(x)))
        return 1;
    for (int i = 0; i < src->ndim; i++) {
        int64_t e = (int64_t)start[i] + (int64_t)shape[i] * p->strides[i];
        if (e > src->shape[i])
            e = src->shape[i];
        if (e < -1)
            e = -1;
        end[i] = (int)e;
    }
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, src->ndim, start);
    mc_wb_ints(st, src->ndim, end);
    mc_wb_ints(st, src->ndim, p->strides);
    return 0;
}

static int ex_slice(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    *id = mc_mlxfn_begin(x, n->prim == MC_PRIM_SLICE ? "Slice" : "SliceUpdate", n->n_in, in);
    if (slice_state(x, n->params, &im[0]))
        return 1;
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* MLX's diagonal (mlx/ops.cpp): a Gather at (arange, arange) over the two
 * axes, those axes squeezed, the diagonal's axis moved last. */
static int ex_diagonal(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_diagonal_params *p = n->params;
    const mc_meta *a = &im[0];
    int nd = a->ndim, ax1 = p->axis1 < 0 ? p->axis1 + nd : p->axis1, ax2 = p->axis2 < 0 ? p->axis2 + nd : p->axis2;
    int off1 = p->offset < 0 ? -p->offset : 0, off2 = p->offset > 0 ? p->offset : 0;
    int len = n->meta->shape[n->meta->ndim - 1];
    uint64_t args[3] = {in[0], mc_xp_arange_rec(x, off1, off1 + len, 1, MLX_INT32),
                        mc_xp_arange_rec(x, off2, off2 + len, 1, MLX_INT32)};
    int axes[2] = {ax1, ax2}, sizes[MC_MAX_NDIM];
    mc_meta g = *a;
    g.ndim = nd + 1;
    g.shape[0] = len;
    for (int i = 0; i < nd; i++)
        g.shape[i + 1] = sizes[i] = i == ax1 || i == ax2 ? 1 : a->shape[i];
    uint64_t r = mc_mlxfn_begin(x, "Gather", 3, args);
    mc_wb_ints(mc_mlxfn_state(x), 2, axes);
    mc_wb_ints(mc_mlxfn_state(x), nd, sizes);
    mc_mlxfn_end(x, &g);
    int sq[2] = {ax1 < ax2 ? ax1 + 1 : ax2 + 1, ax1 < ax2 ? ax2 + 1 : ax1 + 1};
    mc_meta q = g;
    q.ndim = 0;
    for (int i = 0; i < g.ndim; i++)
        if (i != sq[0] && i != sq[1])
            q.shape[q.ndim++] = g.shape[i];
    r = mc_mlxfn_begin(x, "Squeeze", 1, &r);
    mc_wb_ints(mc_mlxfn_state(x), 2, sq); /* sorted, as MLX's squeeze */
    mc_mlxfn_end(x, &q);
    if (q.ndim > 1) {
        int perm[MC_MAX_NDIM];
        for (int i = 0; i < q.ndim - 1; i++)
            perm[i] = i + 1;
        perm[q.ndim - 1] = 0;
        r = mc_mlxfn_begin(x, "Transpose", 1, &r);
        mc_wb_ints(mc_mlxfn_state(x), q.ndim, perm);
        mc_mlxfn_end(x, n->meta);
    }
    *id = r;
    return 0;
}

static int ex_as_strided(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_as_strided_params *p = n->params;
    *id = mc_mlxfn_begin(x, "AsStrided", 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, p->ndim, p->shape);
    mc_wb_u64(st, (uint64_t)p->ndim);
    for (int i = 0; i < p->ndim; i++)
        mc_wb_u64(st, (uint64_t)p->strides[i]);
    mc_wb_u64(st, (uint64_t)p->offset);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- joins and indexing ---- */

static int ex_concatenate(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    *id = mc_mlxfn_begin(x, "Concatenate", n->n_in, in);
    mc_wb_i32(mc_mlxfn_state(x), ((const mc_concat_params *)n->params)->axis);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_pad(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_pad_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Pad", 2, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, p->n, p->axes);
    mc_wb_ints(st, p->n, p->low);
    mc_wb_ints(st, p->n, p->high);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_gather_axis(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_gather_axis_params *p = n->params;
    const mc_meta *a = &im[0], *idx = &im[1];
    if (p->along) {
        /* take_along_axis: MLX's GatherAxis wants the indices broadcast */
        uint64_t args[2] = {in[0], mc_xp_bcast(x, in[1], idx, n->meta->ndim, n->meta->shape)};
        *id = mc_mlxfn_begin(x, "GatherAxis", 2, args);
        mc_wb_i32(mc_mlxfn_state(x), p->axis);
        mc_mlxfn_end(x, n->meta);
        return 0;
    }
    /* take: as MLX's take, Gather of one index array on axis, the gathered
     * axis (now of size 1) dropped, and the index dims moved to axis */
    if (idx->ndim + a->ndim > MC_MAX_NDIM)
        return mc_xp_unsupported(x, n, "too many dimensions");
    int sizes[MC_MAX_NDIM];
    memcpy(sizes, a->shape, sizeof(int) * (size_t)a->ndim);
    sizes[p->axis] = 1;
    mc_meta g = mc_xp_meta_with(a->dtype, idx->ndim, idx->shape);
    memcpy(g.shape + idx->ndim, sizes, sizeof(int) * (size_t)a->ndim);
    g.ndim = idx->ndim + a->ndim;
    uint64_t gid = mc_mlxfn_begin(x, "Gather", 2, in);
    mc_wb_ints(mc_mlxfn_state(x), 1, &p->axis);
    mc_wb_ints(mc_mlxfn_state(x), a->ndim, sizes);
    mc_mlxfn_end(x, &g);
    mc_meta sq = g;
    sq.ndim--;
    memmove(sq.shape + idx->ndim + p->axis, sq.shape + idx->ndim + p->axis + 1,
            sizeof(int) * (size_t)(a->ndim - p->axis - 1));
    uint64_t r = mc_xp_reshape(x, gid, &g, sq.ndim, sq.shape);
    if (p->axis && idx->ndim) {
        int perm[MC_MAX_NDIM], k = 0;
        for (int i = 0; i < p->axis; i++)
            perm[k++] = idx->ndim + i;
        for (int i = 0; i < idx->ndim; i++)
            perm[k++] = i;
        for (int i = idx->ndim + p->axis; i < sq.ndim; i++)
            perm[k++] = i;
        uint64_t t = mc_mlxfn_begin(x, "Transpose", 1, &r);
        mc_wb_ints(mc_mlxfn_state(x), sq.ndim, perm);
        mc_mlxfn_end(x, n->meta);
        r = t;
    }
    *id = r;
    return 0;
}

static int ex_gather(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_gather_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Gather", n->n_in, in);
    mc_wb_ints(mc_mlxfn_state(x), p->nidx, p->axes);
    mc_wb_ints(mc_mlxfn_state(x), im[0].ndim, p->slice_sizes);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* slice_update_dynamic: our Scatter of one 0-d start per axis is MLX's
 * DynamicSliceUpdate of (src, update, start), the starts joined again
 * into the 1-d start it takes. */
static int dynamic_slice_update(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_scatter_params *p = n->params;
    uint64_t st[MC_MAX_NDIM];
    mc_meta sm[MC_MAX_NDIM];
    for (int i = 0; i < p->nidx; i++) {
        if (im[1 + i].ndim != 0)
            return mc_xp_unsupported(x, n, "MLX's DynamicSliceUpdate takes one start per axis");
        sm[i] = im[1 + i];
        st[i] = mc_xp_expand_rec(x, in[1 + i], &sm[i], 0);
    }
    mc_meta jm = sm[0];
    uint64_t start = p->nidx > 1 ? mc_xp_concat_rec(x, st, sm, p->nidx, 0, &jm) : st[0];
    uint64_t args[3] = {in[0], in[n->n_in - 1], start};
    *id = mc_mlxfn_begin(x, "DynamicSliceUpdate", 3, args);
    mc_wb_ints(mc_mlxfn_state(x), p->nidx, p->axes);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_scatter(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    int type;
    int red = n->prim == MC_PRIM_SCATTER ? ((const mc_scatter_params *)n->params)->reduce
                                         : ((const mc_scatter_axis_params *)n->params)->reduce;
    if (n->prim == MC_PRIM_SCATTER_AXIS) {
        if (red != MC_SCATTER_SUM && red != MC_SCATTER_NONE)
            return mc_xp_unsupported(x, n, "MLX's ScatterAxis only adds or replaces");
        *id = mc_mlxfn_begin(x, "ScatterAxis", 3, in);
        mc_wb_i32(mc_mlxfn_state(x), red == MC_SCATTER_SUM ? 0 : 1);
        mc_wb_i32(mc_mlxfn_state(x), ((const mc_scatter_axis_params *)n->params)->axis);
        mc_mlxfn_end(x, n->meta);
        return 0;
    }
    switch (red) {
    case MC_SCATTER_MAX: type = 0; break;
    case MC_SCATTER_MIN: type = 1; break;
    case MC_SCATTER_SUM: type = 2; break;
    case MC_SCATTER_PROD: type = 3; break;
    case MC_SCATTER_NONE: type = 4; break;
    case MC_SCATTER_SLICE_UPDATE: return dynamic_slice_update(x, n, in, im, id);
    default: return mc_xp_unsupported(x, n, "no MLX Scatter has this reduction");
    }
    const mc_scatter_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Scatter", n->n_in, in);
    mc_wb_i32(mc_mlxfn_state(x), type);
    mc_wb_ints(mc_mlxfn_state(x), p->nidx, p->axes);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_fft(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_fft_params *p = n->params;
    *id = mc_mlxfn_begin(x, "FFT", 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_u64(st, (uint64_t)p->naxes);
    for (int i = 0; i < p->naxes; i++)
        mc_wb_u64(st, (uint64_t)p->axes[i]);
    mc_wb_bool(st, p->inverse);
    mc_wb_bool(st, p->real);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- reductions, scans, sorts ---- */

/* A Reduce record of type (MLX's Reduce::ReduceType) over p's axes, its
 * output the kept-dims meta out. */
static uint64_t reduce_rec(mc_mlxfn_exp *x, int type, uint64_t a, const mc_reduce_params *p, const mc_meta *out)
{
    uint64_t r = mc_mlxfn_begin(x, "Reduce", 1, &a);
    mc_wb_i32(mc_mlxfn_state(x), type);
    mc_wb_ints(mc_mlxfn_state(x), p->n, p->axes);
    mc_mlxfn_end(x, out);
    return r;
}

/* MLX's var (mlx/ops.cpp) of a floating input: d = x - mean(x), v =
 * sum(d^2) times 1/N, or divided by max(N - ddof, 0) when ddof != 0, N
 * MLX's NumberOfElements (so it follows the shape in a shapeless file);
 * std is sqrt(var). Our node keeps the reduced dims, as MLX's Reduce does. */
static int ex_moment(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_reduce_params *p = n->params;
    const mc_meta *km = n->meta;
    mlx_dtype dt = km->dtype;
    mc_meta m0 = mc_xp_meta_with(dt, 0, NULL);
    uint64_t s = reduce_rec(x, 2, in[0], p, km);
    uint64_t mu = mc_xp_binop(x, "Multiply", s, km, mc_xp_inv_count(x, in[0], p->n, p->axes, dt), &m0, km);
    uint64_t d = mc_xp_binop(x, "Subtract", in[0], &im[0], mu, km, &im[0]);
    uint64_t sq = mc_mlxfn_node1(x, "Square", 1, &d, &im[0]);
    uint64_t v = reduce_rec(x, 2, sq, p, km);
    if (p->ddof == 0) {
        v = mc_xp_binop(x, "Multiply", v, km, mc_xp_inv_count(x, in[0], p->n, p->axes, dt), &m0, km);
    } else {
        uint64_t cnt = mc_mlxfn_begin(x, "NumberOfElements", 1, in);
        mc_wb *st = mc_mlxfn_state(x);
        mc_wb_ints(st, p->n, p->axes);
        mc_wb_bool(st, false);
        mc_wb_dtype(st, dt);
        mc_mlxfn_end(x, &m0);
        uint64_t dof = mc_xp_scalar_op(x, "Subtract", cnt, &m0, p->ddof);
        uint64_t pos = dof ? mc_xp_scalar_op(x, "Maximum", dof, &m0, 0.0) : 0;
        if (!pos)
            return 1;
        v = mc_xp_binop(x, "Divide", v, km, pos, &m0, km);
    }
    if (p->kind == MC_RK_STD) {
        uint64_t r = mc_mlxfn_begin(x, "Sqrt", 1, &v);
        mc_wb_bool(mc_mlxfn_state(x), false);
        mc_mlxfn_end(x, km);
        v = r;
    }
    *id = v;
    return 0;
}

static int ex_reduce(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_reduce_params *p = n->params;
    int type;
    switch (p->kind) {
    case MC_RK_ALL: type = 0; break;
    case MC_RK_ANY: type = 1; break;
    case MC_RK_SUM: type = 2; break;
    case MC_RK_PROD: type = 3; break;
    case MC_RK_MIN: type = 4; break;
    case MC_RK_MAX: type = 5; break;
    case MC_RK_MEAN: type = 2; break;
    case MC_RK_VAR:
    case MC_RK_STD: return ex_moment(x, n, in, im, id);
    default: return mc_xp_unsupported(x, n, "no MLX reduction has this kind");
    }
    if (p->kind != MC_RK_MEAN) {
        *id = mc_mlxfn_begin(x, "Reduce", 1, in);
        mc_wb_i32(mc_mlxfn_state(x), type);
        mc_wb_ints(mc_mlxfn_state(x), p->n, p->axes);
        mc_mlxfn_end(x, n->meta);
        return 0;
    }
    /* MLX's mean: the sum in the output type times 1/count */
    mlx_dtype dt = n->meta->dtype;
    uint64_t src = in[0];
    if (im[0].dtype != dt) {
        mc_meta c = mc_xp_meta_with(dt, im[0].ndim, im[0].shape);
        src = mc_mlxfn_begin(x, "AsType", 1, in);
        mc_wb_dtype(mc_mlxfn_state(x), dt);
        mc_mlxfn_end(x, &c);
    }
    uint64_t sum = mc_mlxfn_begin(x, "Reduce", 1, &src);
    mc_wb_i32(mc_mlxfn_state(x), 2);
    mc_wb_ints(mc_mlxfn_state(x), p->n, p->axes);
    mc_mlxfn_end(x, n->meta);
    uint64_t args[2] = {sum, mc_xp_inv_count(x, in[0], p->n, p->axes, dt)};
    mc_meta m[2] = {*n->meta, mc_xp_meta_with(dt, 0, NULL)};
    mc_xp_bcast_n(x, args, m, 2, n->meta);
    *id = mc_mlxfn_node1(x, "Multiply", 2, args, n->meta);
    return 0;
}

static int ex_argreduce(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_argreduce_params *p = n->params;
    *id = mc_mlxfn_begin(x, "ArgReduce", 1, in);
    mc_wb_i32(mc_mlxfn_state(x), p->op ? 0 : 1); /* MLX: ArgMin, ArgMax */
    mc_wb_i32(mc_mlxfn_state(x), p->axis);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* A Reduce of type over axes[0..k), the dims kept (out). */
static uint64_t reduce_axes(mc_mlxfn_exp *x, int type, uint64_t a, int k, const int *axes, const mc_meta *out)
{
    uint64_t r = mc_mlxfn_begin(x, "Reduce", 1, &a);
    mc_wb_i32(mc_mlxfn_state(x), type);
    mc_wb_ints(mc_mlxfn_state(x), k, axes);
    mc_mlxfn_end(x, out);
    return r;
}

/* MLX's softmax and logsumexp are its primitives over the last axis (after
 * leading axes of size 1), else compositions of max, exp and sum, which
 * this writes (mlx/ops.cpp). Our nodes keep the reduced dims. */
static int ex_softmax(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_softmax_params *p = n->params;
    const mc_meta *a = &im[0];
    bool last = p->n > 0 && p->axes[p->n - 1] == a->ndim - 1;
    for (int i = p->n - 2; i >= 0 && last; i--)
        last = p->axes[i] + 1 == p->axes[i + 1] && a->shape[p->axes[i]] == 1;
    bool sm = n->prim == MC_PRIM_SOFTMAX;
    if (last) {
        *id = mc_mlxfn_begin(x, sm ? "Softmax" : "LogSumExp", 1, in);
        if (sm)
            mc_wb_bool(mc_mlxfn_state(x), p->precise);
        mc_mlxfn_end(x, n->meta);
        return 0;
    }
    mc_meta am = *a;
    uint64_t v = in[0];
    if (sm && p->precise)
        v = mc_xp_to_dtype(x, v, &am, MLX_FLOAT32);
    mc_meta km = am;
    for (int i = 0; i < p->n; i++)
        km.shape[p->axes[i]] = 1;
    uint64_t mx = reduce_axes(x, 5 /* Max */, v, p->n, p->axes, &km);
    mx = mc_mlxfn_node1(x, "StopGradient", 1, &mx, &km);
    uint64_t ex = mc_mlxfn_node1(x, "Exp", 1, &(uint64_t){mc_xp_binop(x, "Subtract", v, &am, mx, &km, &am)}, &am);
    uint64_t sum = reduce_axes(x, 2 /* Sum */, ex, p->n, p->axes, &km);
    if (sm) {
        mc_meta om = am;
        *id = mc_xp_to_dtype(x, mc_xp_binop(x, "Divide", ex, &am, sum, &km, &am), &om, a->dtype);
        return 0;
    }
    uint64_t lg = mc_mlxfn_begin(x, "Log", 1, &sum);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* natural */
    mc_mlxfn_end(x, &km);
    uint64_t out = mc_xp_binop(x, "Add", lg, &km, mx, &km, &km);
    mc_meta bm = km;
    bm.dtype = MLX_BOOL;
    uint64_t inf;
    if (float_class(x, MC_U_ISINF, mx, &km, &bm, &inf))
        return 1;
    uint64_t sel[3] = {inf, mx, out};
    *id = mc_mlxfn_node1(x, "Select", 3, sel, &km);
    return 0;
}

static int ex_scan(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_scan_params *p = n->params;
    static const int types[MC_S_COUNT] = {
        [MC_S_MAX] = 0, [MC_S_MIN] = 1, [MC_S_SUM] = 2, [MC_S_PROD] = 3, [MC_S_LOGADDEXP] = 4};
    *id = mc_mlxfn_begin(x, "Scan", 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_i32(st, types[p->op]);
    mc_wb_i32(st, p->axis);
    mc_wb_bool(st, p->reverse);
    mc_wb_bool(st, p->inclusive);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_sort(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_sort_params *p = n->params;
    *id = mc_mlxfn_begin(x, mc_prim_name(n->prim, n->params), 1, in);
    if (n->prim == MC_PRIM_PARTITION || n->prim == MC_PRIM_ARGPARTITION)
        mc_wb_i32(mc_mlxfn_state(x), p->kth);
    mc_wb_i32(mc_mlxfn_state(x), p->axis);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- creation ---- */

static int ex_arange(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_arange_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Arange", 0, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_f64(st, p->start);
    mc_wb_f64(st, p->start + p->step * p->count);
    mc_wb_f64(st, p->step);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_numel(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_numel_params *p = n->params;
    *id = mc_mlxfn_begin(x, "NumberOfElements", 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, p->n, p->axes);
    mc_wb_bool(st, p->inverted);
    mc_wb_dtype(st, p->dtype);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- matmul family, convolution, quantized matmul ---- */

/* MLX's matmul op: 1-d operands made matrices, batch dims broadcast, then
 * the primitive (AddMM with c, broadcast to the product, if has_c), then
 * the added dims dropped to reach out's shape (NULL: keep the product's,
 * returned in *prod). */
static uint64_t matmul_rec(mc_mlxfn_exp *x, uint64_t ia, mc_meta a, uint64_t ib, mc_meta b, const uint64_t *c,
                           const mc_meta *cm, const mc_addmm_params *p, mlx_dtype dt, const mc_meta *out,
                           mc_meta *prod)
{
    if (a.ndim == 1) {
        int s[2] = {1, a.shape[0]};
        ia = mc_xp_reshape(x, ia, &a, 2, s);
        a = mc_xp_meta_with(a.dtype, 2, s);
    }
    if (b.ndim == 1) {
        int s[2] = {b.shape[0], 1};
        ib = mc_xp_reshape(x, ib, &b, 2, s);
        b = mc_xp_meta_with(b.dtype, 2, s);
    }
    int nb = a.ndim > b.ndim ? a.ndim - 2 : b.ndim - 2;
    int sa[MC_MAX_NDIM], sb[MC_MAX_NDIM], so[MC_MAX_NDIM];
    for (int i = 0; i < nb; i++) {
        int da = i - (nb - (a.ndim - 2)), db = i - (nb - (b.ndim - 2));
        int ea = da >= 0 ? a.shape[da] : 1, eb = db >= 0 ? b.shape[db] : 1;
        sa[i] = sb[i] = so[i] = ea == 1 ? eb : ea;
    }
    sa[nb] = a.shape[a.ndim - 2];
    sa[nb + 1] = a.shape[a.ndim - 1];
    sb[nb] = b.shape[b.ndim - 2];
    sb[nb + 1] = b.shape[b.ndim - 1];
    so[nb] = sa[nb];
    so[nb + 1] = sb[nb + 1];
    uint64_t args[3] = {mc_xp_bcast(x, ia, &a, nb + 2, sa), mc_xp_bcast(x, ib, &b, nb + 2, sb), 0};
    mc_meta o = mc_xp_meta_with(dt, nb + 2, so);
    uint64_t r;
    if (c) {
        args[2] = mc_xp_bcast(x, *c, cm, nb + 2, so);
        r = mc_mlxfn_begin(x, "AddMM", 3, args);
        mc_wb_f32(mc_mlxfn_state(x), p->alpha);
        mc_wb_f32(mc_mlxfn_state(x), p->beta);
        mc_mlxfn_end(x, &o);
    } else {
        r = mc_mlxfn_node1(x, "Matmul", 2, args, &o);
    }
    if (prod)
        *prod = o;
    return out ? mc_xp_reshape(x, r, &o, out->ndim, out->shape) : r;
}

static int ex_matmul(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    if (n->prim == MC_PRIM_MATMUL) {
        mc_meta o;
        *id = mc_xp_matmul_op(x, in[0], im[0], in[1], im[1], &o);
        return 0;
    }
    /* MLX's addmm broadcasts to fixed shapes even when shapeless */
    *id = matmul_rec(x, in[0], im[0], in[1], im[1], &in[2], &im[2], n->params, n->meta->dtype, n->meta, NULL);
    return 0;
}

static int ex_convolution(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_conv_params *p = n->params;
    *id = mc_mlxfn_begin(x, "Convolution", 2, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, p->nsp, p->stride);
    mc_wb_ints(st, p->nsp, p->pad_lo);
    mc_wb_ints(st, p->nsp, p->pad_hi);
    mc_wb_ints(st, p->nsp, p->kdil);
    mc_wb_ints(st, p->nsp, p->idil);
    mc_wb_i32(st, p->groups);
    mc_wb_bool(st, p->flip);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

static int ex_gather_mm(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_gather_mm_params *p = n->params;
    *id = mc_mlxfn_begin(x, "GatherMM", 4, in);
    mc_wb_bool(mc_mlxfn_state(x), p->left_sorted);
    mc_wb_bool(mc_mlxfn_state(x), p->right_sorted);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* Our masks are MLX's primitive's inputs (padded and broadcast by the op). */
static int ex_block_masked_mm(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    *id = mc_mlxfn_begin(x, "BlockMaskedMM", n->n_in, in);
    mc_wb_i32(mc_mlxfn_state(x), ((const mc_block_mm_params *)n->params)->block_size);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- ops.h's rest, random ---- */

static int ex_hadamard(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    *id = mc_mlxfn_begin(x, "Hadamard", 1, in);
    mc_wb_f32(mc_mlxfn_state(x), ((const mc_hadamard_params *)n->params)->scale);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- quantization ---- */

/* ---- linalg ---- */

/* ---- fast.h: MLX's CPU fallbacks, which MLX's CPU build runs ---- */

/* MLX has these primitives but no serializer for them (mlx/export.cpp), or
 * (ConvertFP8) writes none, so it could not read them back. */
static int ex_unreadable(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)in, (void)im, (void)id;
    return mc_xp_unsupported(x, n, "MLX 0.31 cannot read it from a file");
}

mc_mlxfn_export_fn mc_mlxfn_exporter(int prim)
{
    switch (prim) {
    case MC_PRIM_UNARY: return ex_unary;
    case MC_PRIM_BINARY: return ex_binary;
    case MC_PRIM_WHERE: return ex_select;
    case MC_PRIM_STOP_GRADIENT: return ex_plain;
    case MC_PRIM_ASTYPE:
    case MC_PRIM_VIEW: return ex_astype;
    case MC_PRIM_COPY:
    case MC_PRIM_CONTIGUOUS: return ex_copy;
    case MC_PRIM_RESHAPE:
    case MC_PRIM_TRANSPOSE:
    case MC_PRIM_BROADCAST: return ex_dims;
    case MC_PRIM_EXPAND_DIMS:
    case MC_PRIM_SQUEEZE: return ex_axes;
    case MC_PRIM_FLATTEN: return ex_flatten;
    case MC_PRIM_UNFLATTEN: return ex_unflatten;
    case MC_PRIM_SLICE:
    case MC_PRIM_SLICE_UPDATE: return ex_slice;
    case MC_PRIM_AS_STRIDED: return ex_as_strided;
    case MC_PRIM_CONCATENATE: return ex_concatenate;
    case MC_PRIM_PAD: return ex_pad;
    case MC_PRIM_GATHER_AXIS: return ex_gather_axis;
    case MC_PRIM_GATHER: return ex_gather;
    case MC_PRIM_SCATTER:
    case MC_PRIM_SCATTER_AXIS: return ex_scatter;
    case MC_PRIM_FFT: return ex_fft;
    case MC_PRIM_REDUCE: return ex_reduce;
    case MC_PRIM_ARGREDUCE: return ex_argreduce;
    case MC_PRIM_SOFTMAX:
    case MC_PRIM_LOGSUMEXP: return ex_softmax;
    case MC_PRIM_SCAN: return ex_scan;
    case MC_PRIM_SORT:
    case MC_PRIM_ARGSORT:
    case MC_PRIM_PARTITION:
    case MC_PRIM_ARGPARTITION: return ex_sort;
    case MC_PRIM_ARANGE: return ex_arange;
    case MC_PRIM_NUMBER_OF_ELEMENTS: return ex_numel;
    case MC_PRIM_MATMUL:
    case MC_PRIM_ADDMM: return ex_matmul;
    case MC_PRIM_CONVOLUTION: return ex_convolution;
    case MC_PRIM_QUANTIZED_MATMUL: return mc_xp_quantized_matmul;
    case MC_PRIM_RMS_NORM:
    case MC_PRIM_LAYER_NORM: return mc_xp_norm;
    case MC_PRIM_GATHER_MM: return ex_gather_mm;
    case MC_PRIM_BLOCK_MASKED_MM: return ex_block_masked_mm;
    case MC_PRIM_HADAMARD: return ex_hadamard;
    case MC_PRIM_RANDOM_BITS: return mc_xp_random_bits;
    case MC_PRIM_RANDOM_DIST: return mc_xp_random_dist;
    case MC_PRIM_RANDOM_PERMUTATION: return mc_xp_random_permutation;
    case MC_PRIM_DIAGONAL: return ex_diagonal;
    case MC_PRIM_QUANTIZE: return mc_xp_quantize;
    case MC_PRIM_DEQUANTIZE: return mc_xp_dequantize;
    case MC_PRIM_DEPENDS: return ex_plain;
    case MC_PRIM_INVERSE:
    case MC_PRIM_CHOLESKY:
    case MC_PRIM_QRF:
    case MC_PRIM_SVD:
    case MC_PRIM_EIG:
    case MC_PRIM_EIGH: return mc_xp_linalg;
    case MC_PRIM_LUF:
    case MC_PRIM_SOLVE:
    case MC_PRIM_SEGMENTED_MM:
    case MC_PRIM_QQMATMUL:
    case MC_PRIM_CONVERT_FP8: return ex_unreadable;
    case MC_PRIM_ROPE: return mc_xp_rope;
    case MC_PRIM_SDPA: return mc_xp_sdpa;
    default: return NULL;
    }
}
