/* Owns the mlx-cpu -> MLX half of the primitive mapping: for each of our
 * primitives that MLX can read back, the records of MLX primitives (with
 * their state, as mlx/export.cpp serializes it) that compute it.
 *
 * Where our nodes are more general than MLX's primitives, the exporter
 * writes what MLX's ops would have built: Binary, Select and the matmuls
 * broadcast while they run here, MLX's need inputs of the output's shape
 * (a Broadcast record first); a take is MLX's Gather then Reshape; a mean
 * is a Sum times 1/n; a few unary functions that MLX composes (reciprocal,
 * isnan) are written as MLX's compositions; fast.h's norms and attention
 * are written as the fallbacks MLX's CPU build runs in their place (MLX's
 * own primitives for them cannot run on its CPU). */
#include <math.h>
#include <string.h>

#include "graph/primitive.h"
#include "graph/prims_binary.h"
#include "graph/prims_conv.h"
#include "graph/prims_copy.h"
#include "graph/prims_create.h"
#include "graph/prims_fast.h"
#include "graph/prims_fft.h"
#include "graph/prims_index.h"
#include "graph/prims_linalg.h"
#include "graph/prims_matmul.h"
#include "graph/prims_misc.h"
#include "graph/prims_mm_ext.h"
#include "graph/prims_quant.h"
#include "graph/prims_random.h"
#include "graph/prims_reduce.h"
#include "graph/prims_scan.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "graph/prims_sort.h"
#include "graph/prims_unary.h"
#include "graph/prims_view.h"
#include "io/mlxfn_prims.h"
#include "runtime/error.h"
#include "simd/reduce.h"

typedef const mc_mlxfn_node node_t;

static int unsupported(mc_mlxfn_exp *x, node_t *n, const char *why)
{
    return mc_error("[%s] Unable to export primitive %s: %s.", mc_mlxfn_fn(x), mc_prim_name(n->prim, n->params),
                    why);
}

static mc_meta meta_with(mlx_dtype dtype, int ndim, const int *shape)
{
    mc_meta m;
    m.dtype = dtype;
    m.ndim = ndim;
    if (ndim)
        memcpy(m.shape, shape, sizeof(int) * (size_t)ndim);
    return m;
}

static bool same_shape(const mc_meta *a, int ndim, const int *shape)
{
    return a->ndim == ndim && (!ndim || !memcmp(a->shape, shape, sizeof(int) * (size_t)ndim));
}

/* id, broadcast to shape if it has another one (MLX's broadcast_to). */
static uint64_t bcast(mc_mlxfn_exp *x, uint64_t id, const mc_meta *m, int ndim, const int *shape)
{
    if (same_shape(m, ndim, shape))
        return id;
    mc_meta out = meta_with(m->dtype, ndim, shape);
    uint64_t r = mc_mlxfn_begin(x, "Broadcast", 1, &id);
    mc_wb_ints(mc_mlxfn_state(x), ndim, shape);
    mc_mlxfn_end(x, &out);
    return r;
}

static uint64_t reshape(mc_mlxfn_exp *x, uint64_t id, const mc_meta *m, int ndim, const int *shape)
{
    if (same_shape(m, ndim, shape))
        return id;
    mc_meta out = meta_with(m->dtype, ndim, shape);
    uint64_t r = mc_mlxfn_begin(x, "Reshape", 1, &id);
    mc_wb_ints(mc_mlxfn_state(x), ndim, shape);
    mc_mlxfn_end(x, &out);
    return r;
}

/* ids[0..n) (metas m) broadcast to out's shape, as MLX's broadcast_arrays:
 * a Broadcast record for each that has another shape. In a shapeless
 * export the record also takes the others (through StopGradient), from
 * which MLX infers the shape again when the inputs change, as MLX's own
 * dynamic tracing writes it. */
static void bcast_n(mc_mlxfn_exp *x, uint64_t *ids, const mc_meta *m, int n, const mc_meta *out)
{
    if (!mc_mlxfn_shapeless(x)) {
        for (int i = 0; i < n; i++)
            ids[i] = bcast(x, ids[i], &m[i], out->ndim, out->shape);
        return;
    }
    uint64_t orig[4], sg[4] = {0, 0, 0, 0};
    memcpy(orig, ids, sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (same_shape(&m[i], out->ndim, out->shape))
            continue;
        uint64_t args[4] = {orig[i]};
        int k = 1;
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            if (!sg[j])
                sg[j] = mc_mlxfn_node1(x, "StopGradient", 1, &orig[j], &m[j]);
            args[k++] = sg[j];
        }
        mc_meta o = meta_with(m[i].dtype, out->ndim, out->shape);
        ids[i] = mc_mlxfn_begin(x, "Broadcast", k, args);
        mc_wb_ints(mc_mlxfn_state(x), out->ndim, out->shape);
        mc_mlxfn_end(x, &o);
    }
}

/* A stateless record of name over in[0..n), each broadcast to the output. */
static int elementwise(mc_mlxfn_exp *x, const char *name, node_t *n, const uint64_t *in, const mc_meta *im,
                       uint64_t *id)
{
    uint64_t b[3];
    memcpy(b, in, sizeof(uint64_t) * (size_t)n->n_in);
    bcast_n(x, b, im, n->n_in, n->meta);
    *id = mc_mlxfn_node1(x, name, n->n_in, b, n->meta);
    return 0;
}

/* id converted to dtype (its meta m updated). */
static uint64_t to_dtype(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, mlx_dtype dtype)
{
    if (m->dtype == dtype)
        return id;
    m->dtype = dtype;
    uint64_t r = mc_mlxfn_begin(x, "AsType", 1, &id);
    mc_wb_dtype(mc_mlxfn_state(x), dtype);
    mc_mlxfn_end(x, m);
    return r;
}

/* name(a, b), both broadcast to out's shape. */
static uint64_t binop(mc_mlxfn_exp *x, const char *name, uint64_t a, const mc_meta *ma, uint64_t b,
                      const mc_meta *mb, const mc_meta *out)
{
    uint64_t args[2] = {a, b};
    mc_meta m[2] = {*ma, *mb};
    bcast_n(x, args, m, 2, out);
    return mc_mlxfn_node1(x, name, 2, args, out);
}

/* a op v, v a scalar of a's dtype; 0 on failure (reported). */
static uint64_t scalar_op(mc_mlxfn_exp *x, const char *name, uint64_t a, const mc_meta *m, double v)
{
    uint64_t k = mc_mlxfn_scalar(x, v, m->dtype);
    if (!k)
        return 0;
    mc_meta m0 = meta_with(m->dtype, 0, NULL);
    return binop(x, name, a, m, k, &m0, m);
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
    mc_meta ms[2] = {*m, meta_with(m->dtype, 0, NULL)};
    bcast_n(x, args, ms, 2, out);
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
        mc_meta m[2] = {meta_with(im[0].dtype, 0, NULL), im[0]};
        bcast_n(x, args, m, 2, n->meta);
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
        mc_meta m[2] = {im[0], meta_with(im[0].dtype, 0, NULL)};
        bcast_n(x, args, m, 2, n->meta);
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
    bcast_n(x, b, im, 2, n->meta);
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

/* MLX's Arange record from start towards stop by step, of dtype. */
static uint64_t arange_rec(mc_mlxfn_exp *x, int start, int stop, int step, mlx_dtype dtype)
{
    int len = (stop - start + step + (step > 0 ? -1 : 1)) / step;
    mc_meta m = meta_with(dtype, 1, &len);
    uint64_t r = mc_mlxfn_begin(x, "Arange", 0, NULL);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_f64(st, start);
    mc_wb_f64(st, stop);
    mc_wb_f64(st, step);
    mc_mlxfn_end(x, &m);
    return r;
}

/* MLX's slice op: a Slice record (stop written as given), none when it
 * keeps all of m; *out gets the result's meta. Positive strides only. */
static uint64_t slice_rec(mc_mlxfn_exp *x, uint64_t a, const mc_meta *m, const int *start, const int *stop,
                          const int *strides, mc_meta *out)
{
    mc_meta o = *m;
    for (int i = 0; i < m->ndim; i++)
        o.shape[i] = (stop[i] - start[i] + strides[i] - 1) / strides[i];
    *out = o;
    if (same_shape(m, o.ndim, o.shape))
        return a;
    uint64_t r = mc_mlxfn_begin(x, "Slice", 1, &a);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, m->ndim, start);
    mc_wb_ints(st, m->ndim, stop);
    mc_wb_ints(st, m->ndim, strides);
    mc_mlxfn_end(x, &o);
    return r;
}

/* MLX's concatenate of ids[0..n) (metas m) along axis; *out its meta. */
static uint64_t concat_rec(mc_mlxfn_exp *x, const uint64_t *ids, const mc_meta *m, int n, int axis, mc_meta *out)
{
    mc_meta o = m[0];
    for (int i = 1; i < n; i++)
        o.shape[axis] += m[i].shape[axis];
    *out = o;
    uint64_t r = mc_mlxfn_begin(x, "Concatenate", n, ids);
    mc_wb_i32(mc_mlxfn_state(x), axis);
    mc_mlxfn_end(x, &o);
    return r;
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
    uint64_t args[3] = {in[0], arange_rec(x, off1, off1 + len, 1, MLX_INT32),
                        arange_rec(x, off2, off2 + len, 1, MLX_INT32)};
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
        uint64_t args[2] = {in[0], bcast(x, in[1], idx, n->meta->ndim, n->meta->shape)};
        *id = mc_mlxfn_begin(x, "GatherAxis", 2, args);
        mc_wb_i32(mc_mlxfn_state(x), p->axis);
        mc_mlxfn_end(x, n->meta);
        return 0;
    }
    /* take: as MLX's take, Gather of one index array on axis, the gathered
     * axis (now of size 1) dropped, and the index dims moved to axis */
    if (idx->ndim + a->ndim > MC_MAX_NDIM)
        return unsupported(x, n, "too many dimensions");
    int sizes[MC_MAX_NDIM];
    memcpy(sizes, a->shape, sizeof(int) * (size_t)a->ndim);
    sizes[p->axis] = 1;
    mc_meta g = meta_with(a->dtype, idx->ndim, idx->shape);
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
    uint64_t r = reshape(x, gid, &g, sq.ndim, sq.shape);
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

static int ex_scatter(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    int type;
    int red = n->prim == MC_PRIM_SCATTER ? ((const mc_scatter_params *)n->params)->reduce
                                         : ((const mc_scatter_axis_params *)n->params)->reduce;
    if (n->prim == MC_PRIM_SCATTER_AXIS) {
        if (red != MC_SCATTER_SUM && red != MC_SCATTER_NONE)
            return unsupported(x, n, "MLX's ScatterAxis only adds or replaces");
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
    default: return unsupported(x, n, "a dynamic slice update has no Scatter equivalent in MLX's files");
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

/* 1 / (the product of a's sizes on axes), a 0-d array of dtype: MLX's
 * NumberOfElements, which follows a's shape in a shapeless export. */
static uint64_t inv_count(mc_mlxfn_exp *x, uint64_t a, int n, const int *axes, mlx_dtype dtype)
{
    mc_meta m0 = meta_with(dtype, 0, NULL);
    uint64_t r = mc_mlxfn_begin(x, "NumberOfElements", 1, &a);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, n, axes);
    mc_wb_bool(st, true);
    mc_wb_dtype(st, dtype);
    mc_mlxfn_end(x, &m0);
    return r;
}

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
    mc_meta m0 = meta_with(dt, 0, NULL);
    uint64_t s = reduce_rec(x, 2, in[0], p, km);
    uint64_t mu = binop(x, "Multiply", s, km, inv_count(x, in[0], p->n, p->axes, dt), &m0, km);
    uint64_t d = binop(x, "Subtract", in[0], &im[0], mu, km, &im[0]);
    uint64_t sq = mc_mlxfn_node1(x, "Square", 1, &d, &im[0]);
    uint64_t v = reduce_rec(x, 2, sq, p, km);
    if (p->ddof == 0) {
        v = binop(x, "Multiply", v, km, inv_count(x, in[0], p->n, p->axes, dt), &m0, km);
    } else {
        uint64_t cnt = mc_mlxfn_begin(x, "NumberOfElements", 1, in);
        mc_wb *st = mc_mlxfn_state(x);
        mc_wb_ints(st, p->n, p->axes);
        mc_wb_bool(st, false);
        mc_wb_dtype(st, dt);
        mc_mlxfn_end(x, &m0);
        uint64_t dof = scalar_op(x, "Subtract", cnt, &m0, p->ddof);
        uint64_t pos = dof ? scalar_op(x, "Maximum", dof, &m0, 0.0) : 0;
        if (!pos)
            return 1;
        v = binop(x, "Divide", v, km, pos, &m0, km);
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
    default: return unsupported(x, n, "no MLX reduction has this kind");
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
        mc_meta c = meta_with(dt, im[0].ndim, im[0].shape);
        src = mc_mlxfn_begin(x, "AsType", 1, in);
        mc_wb_dtype(mc_mlxfn_state(x), dt);
        mc_mlxfn_end(x, &c);
    }
    uint64_t sum = mc_mlxfn_begin(x, "Reduce", 1, &src);
    mc_wb_i32(mc_mlxfn_state(x), 2);
    mc_wb_ints(mc_mlxfn_state(x), p->n, p->axes);
    mc_mlxfn_end(x, n->meta);
    uint64_t args[2] = {sum, inv_count(x, in[0], p->n, p->axes, dt)};
    mc_meta m[2] = {*n->meta, meta_with(dt, 0, NULL)};
    bcast_n(x, args, m, 2, n->meta);
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

static int ex_softmax(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_softmax_params *p = n->params;
    if (p->n != 1 || p->axes[0] != im[0].ndim - 1)
        return unsupported(x, n, "MLX's primitive works on the last axis only");
    bool sm = n->prim == MC_PRIM_SOFTMAX;
    *id = mc_mlxfn_begin(x, sm ? "Softmax" : "LogSumExp", 1, in);
    if (sm)
        mc_wb_bool(mc_mlxfn_state(x), p->precise);
    mc_mlxfn_end(x, n->meta);
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

static uint64_t axes_rec(mc_mlxfn_exp *x, const char *name, uint64_t a, int axis, const mc_meta *out)
{
    uint64_t r = mc_mlxfn_begin(x, name, 1, &a);
    mc_wb_ints(mc_mlxfn_state(x), 1, &axis);
    mc_mlxfn_end(x, out);
    return r;
}

static uint64_t expand_rec(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, int axis)
{
    mc_meta o = *m;
    o.ndim = m->ndim + 1;
    o.shape[axis] = 1;
    memcpy(o.shape + axis + 1, m->shape + axis, sizeof(int) * (size_t)(m->ndim - axis));
    *m = o;
    return axes_rec(x, "ExpandDims", id, axis, &o);
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
        ia = reshape(x, ia, &a, 2, s);
        a = meta_with(a.dtype, 2, s);
    }
    if (b.ndim == 1) {
        int s[2] = {b.shape[0], 1};
        ib = reshape(x, ib, &b, 2, s);
        b = meta_with(b.dtype, 2, s);
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
    uint64_t args[3] = {bcast(x, ia, &a, nb + 2, sa), bcast(x, ib, &b, nb + 2, sb), 0};
    mc_meta o = meta_with(dt, nb + 2, so);
    uint64_t r;
    if (c) {
        args[2] = bcast(x, *c, cm, nb + 2, so);
        r = mc_mlxfn_begin(x, "AddMM", 3, args);
        mc_wb_f32(mc_mlxfn_state(x), p->alpha);
        mc_wb_f32(mc_mlxfn_state(x), p->beta);
        mc_mlxfn_end(x, &o);
    } else {
        r = mc_mlxfn_node1(x, "Matmul", 2, args, &o);
    }
    if (prod)
        *prod = o;
    return out ? reshape(x, r, &o, out->ndim, out->shape) : r;
}

/* a broadcast against b over all but the last two axes: MLX's
 * broadcast_arrays with ignored axes (-2, -1). Shapeless, the record is a
 * BroadcastAxes that takes b too (through StopGradient), from which MLX
 * infers the batch shape again when the inputs change. */
static uint64_t bcast_batch(mc_mlxfn_exp *x, uint64_t a, mc_meta *am, uint64_t b, const mc_meta *bm, int nb,
                            const int *batch, uint64_t *sg_b)
{
    mc_meta o = meta_with(am->dtype, nb + 2, batch);
    o.shape[nb] = am->shape[am->ndim - 2];
    o.shape[nb + 1] = am->shape[am->ndim - 1];
    if (same_shape(am, o.ndim, o.shape))
        return a;
    uint64_t r;
    if (!mc_mlxfn_shapeless(x)) {
        r = mc_mlxfn_begin(x, "Broadcast", 1, &a);
        mc_wb_ints(mc_mlxfn_state(x), o.ndim, o.shape);
    } else {
        if (!*sg_b)
            *sg_b = mc_mlxfn_node1(x, "StopGradient", 1, &b, bm);
        uint64_t args[2] = {a, *sg_b};
        int ignore[2] = {-2, -1};
        r = mc_mlxfn_begin(x, "BroadcastAxes", 2, args);
        mc_wb_ints(mc_mlxfn_state(x), 2, ignore);
    }
    mc_mlxfn_end(x, &o);
    *am = o;
    return r;
}

/* MLX's matmul op (mlx/ops.cpp) on inputs of type dt: a 1-d operand
 * gains an axis (ExpandDims); a batched a times a matrix b is a Flatten,
 * a Matmul and an Unflatten; otherwise the batch axes broadcast; the gained
 * axes are squeezed at the end. *out gets the result's meta. */
static uint64_t matmul_op(mc_mlxfn_exp *x, uint64_t ia, mc_meta a, uint64_t ib, mc_meta b, mc_meta *out)
{
    int nda = a.ndim, ndb = b.ndim;
    if (nda == 1)
        ia = expand_rec(x, ia, &a, 0);
    if (ndb == 1)
        ib = expand_rec(x, ib, &b, 1);
    mc_meta o;
    uint64_t r;
    if (nda > 2 && ndb <= 2) {
        mc_meta orig = a;
        int rows = 1;
        for (int i = 0; i < a.ndim - 1; i++)
            rows *= a.shape[i];
        mc_meta f = meta_with(a.dtype, 2, (int[]){rows, a.shape[a.ndim - 1]});
        uint64_t fa = mc_mlxfn_begin(x, "Flatten", 1, &ia);
        mc_wb_i32(mc_mlxfn_state(x), 0);
        mc_wb_i32(mc_mlxfn_state(x), a.ndim - 2);
        mc_mlxfn_end(x, &f);
        uint64_t args[2] = {fa, ib};
        mc_meta p = meta_with(a.dtype, 2, (int[]){rows, b.shape[1]});
        uint64_t mm = mc_mlxfn_node1(x, "Matmul", 2, args, &p);
        o = orig;
        o.shape[o.ndim - 1] = b.shape[1];
        r = mc_mlxfn_begin(x, "Unflatten", 1, &mm);
        mc_wb_i32(mc_mlxfn_state(x), 0);
        mc_wb_ints(mc_mlxfn_state(x), orig.ndim - 1, orig.shape);
        mc_mlxfn_end(x, &o);
    } else {
        if (ndb > 2) {
            int nb = a.ndim > b.ndim ? a.ndim - 2 : b.ndim - 2, batch[MC_MAX_NDIM];
            for (int i = 0; i < nb; i++) {
                int da = i - (nb - (a.ndim - 2)), db = i - (nb - (b.ndim - 2));
                int ea = da >= 0 ? a.shape[da] : 1, eb = db >= 0 ? b.shape[db] : 1;
                batch[i] = ea == 1 ? eb : ea;
            }
            mc_meta a0 = a, b0 = b;
            uint64_t sg_a = 0, sg_b = 0;
            uint64_t na = bcast_batch(x, ia, &a, ib, &b0, nb, batch, &sg_b);
            uint64_t nb_id = bcast_batch(x, ib, &b, ia, &a0, nb, batch, &sg_a);
            ia = na;
            ib = nb_id;
        }
        o = a;
        o.shape[o.ndim - 1] = b.shape[b.ndim - 1];
        uint64_t args[2] = {ia, ib};
        r = mc_mlxfn_node1(x, "Matmul", 2, args, &o);
    }
    int axes[2], k = 0;
    if (nda == 1)
        axes[k++] = o.ndim - 2;
    if (ndb == 1)
        axes[k++] = o.ndim - 1;
    if (k) {
        mc_meta sq = o;
        int j = 0;
        for (int i = 0; i < o.ndim; i++)
            if (!((nda == 1 && i == o.ndim - 2) || (ndb == 1 && i == o.ndim - 1)))
                sq.shape[j++] = o.shape[i];
        sq.ndim = j;
        r = mc_mlxfn_begin(x, "Squeeze", 1, &r);
        mc_wb_ints(mc_mlxfn_state(x), k, axes);
        mc_mlxfn_end(x, &sq);
        o = sq;
    }
    *out = o;
    return r;
}

static int ex_matmul(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    if (n->prim == MC_PRIM_MATMUL) {
        mc_meta o;
        *id = matmul_op(x, in[0], im[0], in[1], im[1], &o);
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

static int ex_quantized_matmul(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_quant_params *p = n->params;
    *id = mc_mlxfn_begin(x, "QuantizedMatmul", n->n_in, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_i32(st, p->group_size);
    mc_wb_i32(st, p->bits);
    mc_wb_i32(st, p->mode);
    mc_wb_bool(st, p->transpose);
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

static int ex_random_bits(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_random_bits_params *p = n->params;
    *id = mc_mlxfn_begin(x, "RandomBits", 1, in);
    mc_wb_ints(mc_mlxfn_state(x), p->ndim, p->shape);
    mc_wb_i32(mc_mlxfn_state(x), p->width);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* MLX's uniform over [0, 1) of dtype t (mlx/random.cpp): 32 random bits as
 * float32, / 2^32, capped below 1 (the largest value below 1 of t), as t.
 * 0 on failure (reported). */
static uint64_t unit_uniform(mc_mlxfn_exp *x, uint64_t key, const mc_meta *out, mlx_dtype t)
{
    static const double below_one[] = {0.99999994039535522, 0.99951171875, 0.99609375};
    double upper = below_one[t == MLX_FLOAT16 ? 1 : t == MLX_BFLOAT16 ? 2 : 0];
    mc_meta bm = *out;
    bm.dtype = MLX_UINT32;
    uint64_t b = mc_mlxfn_begin(x, "RandomBits", 1, &key);
    mc_wb_ints(mc_mlxfn_state(x), out->ndim, out->shape);
    mc_wb_i32(mc_mlxfn_state(x), 4);
    mc_mlxfn_end(x, &bm);
    b = to_dtype(x, b, &bm, MLX_FLOAT32);
    if (!(b = scalar_op(x, "Divide", b, &bm, 4294967295.0)) || !(b = scalar_op(x, "Minimum", b, &bm, upper)))
        return 0;
    return to_dtype(x, b, &bm, t);
}

/* MLX's uniform(lo, hi) of dtype t with constant bounds: range * u + lo,
 * range = hi - lo written as MLX writes it (a Subtract of constants). */
static uint64_t uniform_const(mc_mlxfn_exp *x, uint64_t key, const mc_meta *shape, double lo, double hi,
                              mlx_dtype t)
{
    mc_meta m0 = meta_with(t, 0, NULL), um = *shape;
    um.dtype = t;
    uint64_t l = mc_mlxfn_scalar(x, lo, t), h = l ? mc_mlxfn_scalar(x, hi, t) : 0;
    uint64_t u = h ? unit_uniform(x, key, shape, t) : 0;
    if (!u)
        return 0;
    uint64_t range = binop(x, "Subtract", h, &m0, l, &m0, &m0);
    u = binop(x, "Multiply", range, &m0, u, &um, &um);
    return binop(x, "Add", u, &um, l, &m0, &um);
}

/* RandomDist is ours (a fused draw); MLX writes the ops it fuses
 * (mlx/random.cpp), which this writes. */
static int ex_random_dist(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_random_dist_params *p = n->params;
    const mc_meta *out = n->meta;
    mlx_dtype t = p->dtype;
    const double below_minus_one = -0.99999994039535522; /* nextafter(-1, 0) in float32 */
    mc_meta fm = *out;
    fm.dtype = MLX_FLOAT32;
    uint64_t u, e;
    switch (p->kind) {
    case MC_RD_UNIFORM: /* range * u + low, both given in t */
        if (!(u = unit_uniform(x, in[0], out, t)))
            return 1;
        u = binop(x, "Multiply", in[2], &im[2], u, out, out);
        *id = binop(x, "Add", u, out, in[1], &im[1], out);
        return 0;
    case MC_RD_NORMAL: /* erfinv(uniform(-1+, 1) in float32) as t, times p0, plus p1 */
        if (!(u = uniform_const(x, in[0], out, below_minus_one, 1.0, MLX_FLOAT32)))
            return 1;
        e = to_dtype(x, mc_mlxfn_node1(x, "ErfInv", 1, &u, &fm), &fm, t);
        e = binop(x, "Multiply", in[1], &im[1], e, out, out);
        if (p->n_params > 1)
            e = binop(x, "Add", in[2], &im[2], e, out, out);
        *id = e;
        return 0;
    case MC_RD_GUMBEL: /* -log(-log(uniform(0, 1) in t)) */
        if (!(u = uniform_const(x, in[0], out, 0.0, 1.0, t)))
            return 1;
        for (int k = 0; k < 2; k++) {
            uint64_t l = mc_mlxfn_begin(x, "Log", 1, &u);
            mc_wb_i32(mc_mlxfn_state(x), 2); /* natural */
            mc_mlxfn_end(x, out);
            u = mc_mlxfn_node1(x, "Negative", 1, &l, out);
        }
        *id = u;
        return 0;
    case MC_RD_LAPLACE: { /* sign(v) * log1p(-1 * |v|), v uniform(-1+, 1) in float32 */
        if (!(u = uniform_const(x, in[0], out, below_minus_one, 1.0, MLX_FLOAT32)))
            return 1;
        mlx_dtype pt = t == MLX_FLOAT64 ? MLX_FLOAT64 : MLX_FLOAT32; /* t promoted with float32 */
        mc_meta am = fm, m0 = meta_with(t, 0, NULL), sm = fm;
        uint64_t a = to_dtype(x, mc_mlxfn_node1(x, "Abs", 1, &u, &fm), &am, pt);
        uint64_t k = mc_mlxfn_scalar(x, -1.0, t);
        if (!k)
            return 1;
        k = to_dtype(x, k, &m0, pt);
        uint64_t l = mc_mlxfn_node1(x, "Log1p", 1, &(uint64_t){binop(x, "Multiply", k, &m0, a, &am, &am)}, &am);
        uint64_t sg = to_dtype(x, mc_mlxfn_node1(x, "Sign", 1, &u, &fm), &sm, pt);
        e = binop(x, "Multiply", sg, &sm, l, &am, &am);
        e = to_dtype(x, e, &am, t);
        if (p->has_scale && p->scale != 1.0f) {
            uint64_t c = mc_mlxfn_scalar(x, p->scale, t);
            mc_meta c0 = meta_with(t, 0, NULL);
            e = c ? binop(x, "Multiply", c, &c0, e, out, out) : 0;
        }
        if (e && p->has_loc && p->loc != 0.0f) {
            uint64_t c = mc_mlxfn_scalar(x, p->loc, t);
            mc_meta c0 = meta_with(t, 0, NULL);
            e = c ? binop(x, "Add", c, &c0, e, out, out) : 0;
        }
        *id = e;
        return !e;
    }
    case MC_RD_TRUNCATED: { /* max(min(hi, s2 erfinv(uniform(erf(lo / s2), erf(hi / s2)))), lo) */
        mc_meta m0 = meta_with(t, 0, NULL), lm = im[1], hm = im[2];
        uint64_t s2 = mc_mlxfn_scalar(x, sqrt(2.0), t);
        if (!s2)
            return 1;
        uint64_t a = mc_mlxfn_node1(x, "Erf", 1, &(uint64_t){binop(x, "Divide", in[1], &lm, s2, &m0, &lm)}, &lm);
        uint64_t b = mc_mlxfn_node1(x, "Erf", 1, &(uint64_t){binop(x, "Divide", in[2], &hm, s2, &m0, &hm)}, &hm);
        const mc_meta *rm = lm.ndim >= hm.ndim ? &lm : &hm; /* one element each, or the output's shape */
        if (!same_shape(&lm, rm->ndim, rm->shape) || !same_shape(&hm, rm->ndim, rm->shape))
            rm = out;
        uint64_t range = binop(x, "Subtract", b, &hm, a, &lm, rm);
        if (!(u = unit_uniform(x, in[0], out, t)))
            return 1;
        u = binop(x, "Add", binop(x, "Multiply", range, rm, u, out, out), out, a, &lm, out);
        e = binop(x, "Multiply", s2, &m0, mc_mlxfn_node1(x, "ErfInv", 1, &u, out), out, out);
        e = binop(x, "Minimum", in[2], &hm, e, out, out);
        *id = binop(x, "Maximum", e, out, in[1], &lm, out);
        return 0;
    }
    default: return unsupported(x, n, "no MLX composition is known for this distribution");
    }
}

/* MLX's permutation of n: argsort of n random words. */
static int ex_random_permutation(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    int len = ((const mc_random_perm_params *)n->params)->n, axis = 0;
    mc_meta bm = meta_with(MLX_UINT32, 1, &len);
    uint64_t b = mc_mlxfn_begin(x, "RandomBits", 1, in);
    mc_wb_ints(mc_mlxfn_state(x), 1, &len);
    mc_wb_i32(mc_mlxfn_state(x), 4);
    mc_mlxfn_end(x, &bm);
    *id = mc_mlxfn_begin(x, "ArgSort", 1, &b);
    mc_wb_i32(mc_mlxfn_state(x), axis);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* ---- quantization ---- */

/* MLX's mxfp4 quantize on the CPU (mlx/ops.cpp), writing both outputs
 * (ids[0] the codes, ids[1] the scales): per group of 32, the scale is
 * the power of two nearest max|w| / 6 (e8m0, stored + 127), and each
 * w / scale is the nearest e2m1 value (argmin over the table), eight
 * nibbles to a word. 0, or 1 (reported). */
static int quantize_mxfp4(mc_mlxfn_exp *x, uint64_t w, const mc_meta *wm, int gs, uint64_t ids[2])
{
    static const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    mlx_dtype t = wm->dtype;
    int count = 1;
    for (int i = 0; i < wm->ndim; i++)
        count *= wm->shape[i];
    int rows = count / gs, g2[2] = {rows, gs}, s2[2] = {rows, 1}, ax1 = 1;
    mc_meta gm = meta_with(t, 2, g2), sm = meta_with(t, 2, s2), m0 = meta_with(t, 0, NULL);
    uint64_t q = reshape(x, w, wm, 2, g2);
    uint64_t a = mc_mlxfn_node1(x, "Abs", 1, &q, &gm);
    uint64_t mx = mc_mlxfn_begin(x, "Reduce", 1, &a);
    mc_wb_i32(mc_mlxfn_state(x), 5); /* Max */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax1);
    mc_mlxfn_end(x, &sm);
    uint64_t sc = scalar_op(x, "Divide", mx, &sm, 6.0);
    uint64_t z = sc ? mc_mlxfn_scalar(x, 0, t) : 0;
    if (!z)
        return 1;
    /* e8m0: round(log2(scale)) as int32, 0 where the scale is 0 */
    uint64_t l = mc_mlxfn_begin(x, "Log", 1, &sc);
    mc_wb_i32(mc_mlxfn_state(x), 0); /* base 2 */
    mc_mlxfn_end(x, &sm);
    mc_meta im32 = sm;
    uint64_t e = to_dtype(x, mc_mlxfn_node1(x, "Round", 1, &l, &sm), &im32, MLX_INT32);
    mc_meta bm = meta_with(MLX_BOOL, 2, s2);
    uint64_t eqa[2] = {sc, z};
    mc_meta eqm[2] = {sm, m0};
    bcast_n(x, eqa, eqm, 2, &sm);
    uint64_t eq = mc_mlxfn_begin(x, "Equal", 2, eqa);
    mc_wb_bool(mc_mlxfn_state(x), false);
    mc_mlxfn_end(x, &bm);
    e = to_dtype(x, e, &im32, t);
    uint64_t sel[3] = {eq, z, e};
    mc_meta selm[3] = {bm, m0, sm};
    bcast_n(x, sel, selm, 3, &sm);
    e = mc_mlxfn_node1(x, "Select", 3, sel, &sm);
    uint64_t two = mc_mlxfn_scalar(x, 2.0, t);
    uint64_t k127 = two ? mc_mlxfn_scalar(x, 127, MLX_INT32) : 0;
    if (!k127)
        return 1;
    uint64_t p2 = binop(x, "Power", two, &m0, e, &sm, &sm);
    q = binop(x, "Divide", q, &gm, p2, &sm, &gm);
    mc_meta k0 = meta_with(MLX_INT32, 0, NULL);
    k127 = to_dtype(x, k127, &k0, t);
    mc_meta um = sm;
    ids[1] = to_dtype(x, binop(x, "Add", e, &sm, k127, &k0, &sm), &um, MLX_UINT8);
    /* the nearest table entry of each w / scale */
    uint64_t lut = mc_mlxfn_floats(x, e2m1, 16, t);
    if (!lut)
        return 1;
    int n16 = 16, d3[3] = {rows, gs, 16}, ax2 = 2;
    mc_meta lm = meta_with(t, 1, &n16), em = gm, dm = meta_with(t, 3, d3);
    uint64_t qe = expand_rec(x, q, &em, 2);
    uint64_t d = mc_mlxfn_node1(x, "Abs", 1, &(uint64_t){binop(x, "Subtract", qe, &em, lut, &lm, &dm)}, &dm);
    mc_meta am = dm;
    am.dtype = MLX_UINT32;
    am.shape[2] = 1;
    uint64_t idx = mc_mlxfn_begin(x, "ArgReduce", 1, &d);
    mc_wb_i32(mc_mlxfn_state(x), 0); /* ArgMin */
    mc_wb_i32(mc_mlxfn_state(x), 2);
    mc_mlxfn_end(x, &am);
    mc_meta cm = meta_with(MLX_UINT32, 2, g2);
    idx = axes_rec(x, "Squeeze", idx, 2, &cm);
    /* eight nibbles to a word: codes times 16^i, summed */
    int n8 = 8, w3[3] = {count / 32, 4, 8}, w2[2] = {count / 32, 4};
    uint64_t base = mc_mlxfn_scalar(x, 2, MLX_UINT32);
    if (!base)
        return 1;
    mc_meta u0 = meta_with(MLX_UINT32, 0, NULL), shm = meta_with(MLX_UINT32, 1, &n8);
    uint64_t shifts = binop(x, "Power", base, &u0, arange_rec(x, 0, 32, 4, MLX_UINT32), &shm, &shm);
    mc_meta rm = meta_with(MLX_UINT32, 3, w3);
    idx = reshape(x, idx, &cm, 3, w3);
    idx = binop(x, "Multiply", idx, &rm, shifts, &shm, &rm);
    mc_meta km = rm;
    km.shape[2] = 1;
    idx = mc_mlxfn_begin(x, "Reduce", 1, &idx);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* Sum */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax2);
    mc_mlxfn_end(x, &km);
    mc_meta pm = meta_with(MLX_UINT32, 2, w2);
    idx = axes_rec(x, "Squeeze", idx, 2, &pm);
    /* back to w's leading shape */
    mc_meta wq = *wm, ws = *wm;
    wq.dtype = MLX_UINT32;
    wq.shape[wm->ndim - 1] = wm->shape[wm->ndim - 1] / 8;
    ws.dtype = MLX_UINT8;
    ws.shape[wm->ndim - 1] = wm->shape[wm->ndim - 1] / gs;
    ids[0] = reshape(x, idx, &pm, wq.ndim, wq.shape);
    ids[1] = reshape(x, ids[1], &um, ws.ndim, ws.shape);
    return 0;
}

/* Affine quantization is MLX's fast::Quantize on every device, one record
 * of three outputs; ours is one node per output: the first writes the
 * record, its siblings find it. The fp modes run as a composition on
 * MLX's CPU. */
static int ex_quantize(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_quant_params *p = n->params;
    if (p->mode != MC_QMODE_AFFINE && (p->mode != MC_QMODE_MXFP4 || n->n_in != 1))
        return unsupported(x, n, "MLX's CPU build encodes fp8 with ConvertFP8, which MLX cannot write");
    struct {
        uint64_t in;
        int group_size, bits, mode, pad;
    } key = {in[0], p->group_size, p->bits, p->mode, 0};
    uint64_t ids[4] = {0, 0, 0, 0};
    if (mc_mlxfn_memo_get(x, &key, sizeof key, ids)) { /* a sibling wrote it */
        *id = ids[p->which];
        return 0;
    }
    if (p->mode == MC_QMODE_MXFP4) {
        if (quantize_mxfp4(x, in[0], &im[0], p->group_size, ids))
            return 1;
        mc_mlxfn_memo_put(x, &key, sizeof key, ids);
        *id = ids[p->which];
        return 0;
    }
    mc_meta outs[3] = {im[0], im[0], im[0]};
    int last = im[0].ndim - 1;
    outs[0].dtype = MLX_UINT32;
    outs[0].shape[last] = im[0].shape[last] * p->bits / 32;
    outs[1].shape[last] = outs[2].shape[last] = im[0].shape[last] / p->group_size;
    uint64_t r = mc_mlxfn_begin(x, "Quantize", 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_i32(st, p->group_size);
    mc_wb_i32(st, p->bits);
    mc_wb_i32(st, p->mode);
    mc_wb_bool(st, false); /* quantize, not dequantize */
    mc_mlxfn_end_multi(x, r, 3, outs, ids);
    mc_mlxfn_memo_put(x, &key, sizeof key, ids);
    *id = ids[p->which];
    return 0;
}

/* BitwiseBinary op (MLX's BitwiseBinary::Op) of a and b, both broadcast
 * to out. */
static uint64_t bitwise_rec(mc_mlxfn_exp *x, int op, uint64_t a, const mc_meta *ma, uint64_t b, const mc_meta *mb,
                            const mc_meta *out)
{
    uint64_t args[2] = {a, b};
    mc_meta m[2] = {*ma, *mb};
    bcast_n(x, args, m, 2, out);
    uint64_t r = mc_mlxfn_begin(x, "BitwiseBinary", 2, args);
    mc_wb_i32(mc_mlxfn_state(x), op);
    mc_mlxfn_end(x, out);
    return r;
}

enum { BW_AND = 0, BW_LEFT_SHIFT = 3, BW_RIGHT_SHIFT = 4 };

/* The codes of w (..., Kp) uint32 as MLX's affine dequantize unpacks
 * them, in row-major order: *cm gets their meta, (..., Kp, 32 / bits) for
 * a power-of-two width, else (..., Kp * 32 / bits). 0 on failure
 * (reported). */
static uint64_t unpack_codes(mc_mlxfn_exp *x, uint64_t w, const mc_meta *wm, int bits, mc_meta *cm)
{
    int nd = wm->ndim;
    mc_meta u0 = meta_with(MLX_UINT32, 0, NULL);
    if (!(bits & (bits - 1))) { /* each code shifted up to the top, then down */
        int per = 32 / bits;
        uint64_t parts[32];
        mc_meta pm[32];
        for (int k = 0; k < per; k++) {
            uint64_t up = mc_mlxfn_scalar(x, 32 - (k * bits + bits), MLX_UINT32);
            uint64_t down = up ? mc_mlxfn_scalar(x, 32 - bits, MLX_UINT32) : 0;
            if (!down)
                return 0;
            uint64_t r = bitwise_rec(x, BW_LEFT_SHIFT, w, wm, up, &u0, wm);
            r = bitwise_rec(x, BW_RIGHT_SHIFT, r, wm, down, &u0, wm);
            pm[k] = *wm;
            parts[k] = expand_rec(x, r, &pm[k], nd);
        }
        return concat_rec(x, parts, pm, per, nd, cm);
    }
    /* every bit of each word, regrouped by code and summed back */
    mc_meta e = *wm;
    uint64_t r = expand_rec(x, w, &e, nd);
    mc_meta bm = e;
    bm.shape[nd] = 32;
    uint64_t one = mc_mlxfn_scalar(x, 1, MLX_UINT32);
    if (!one)
        return 0;
    int n32 = 32;
    mc_meta am = meta_with(MLX_UINT32, 1, &n32);
    r = bitwise_rec(x, BW_RIGHT_SHIFT, r, &e, arange_rec(x, 0, 32, 1, MLX_UINT32), &am, &bm);
    r = bitwise_rec(x, BW_AND, r, &bm, one, &u0, &bm);
    int gs[MC_MAX_NDIM];
    memcpy(gs, wm->shape, sizeof(int) * (size_t)nd);
    gs[nd - 1] = wm->shape[nd - 1] * 32 / bits;
    gs[nd] = bits;
    r = reshape(x, r, &bm, nd + 1, gs);
    mc_meta gm = meta_with(MLX_UINT32, nd + 1, gs), sm = meta_with(MLX_UINT32, 1, &bits);
    r = bitwise_rec(x, BW_LEFT_SHIFT, r, &gm, arange_rec(x, 0, bits, 1, MLX_UINT32), &sm, &gm);
    mc_meta km = gm;
    km.shape[nd] = 1;
    int ax = nd;
    r = mc_mlxfn_begin(x, "Reduce", 1, &r);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* Sum */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax);
    mc_mlxfn_end(x, &km);
    *cm = meta_with(MLX_UINT32, nd, gs);
    return axes_rec(x, "Squeeze", r, nd, cm);
}

/* MLX's mxfp4 dequantize on the CPU (mlx/ops.cpp): each byte's two
 * nibbles looked up in the fp4 (e2m1) table, times 2^(scale - 127). The
 * other fp modes decode their fp8 bytes with ConvertFP8, which MLX cannot
 * write. */
static int ex_dequantize_mxfp4(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    static const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    mlx_dtype t = ((const mc_quant_params *)n->params)->dtype;
    const mc_meta *w = &im[0], *sc = &im[1];
    int words = 1, scales = 1;
    for (int i = 0; i < w->ndim; i++)
        words *= w->shape[i];
    for (int i = 0; i < sc->ndim; i++)
        scales *= sc->shape[i];
    int rows = words / 4;
    uint64_t lut = mc_mlxfn_floats(x, e2m1, 16, t);
    uint64_t low = lut ? mc_mlxfn_scalar(x, 15, MLX_INT8) : 0, four = low ? mc_mlxfn_scalar(x, 4, MLX_INT8) : 0;
    if (!four)
        return 1;
    int rshape[2] = {rows, 4}, bshape[2] = {rows, 16};
    mc_meta bm = meta_with(MLX_INT8, 2, bshape), i0 = meta_with(MLX_INT8, 0, NULL);
    uint64_t b = reshape(x, in[0], w, 2, rshape);
    uint64_t v = mc_mlxfn_begin(x, "View", 1, &b);
    mc_wb_dtype(mc_mlxfn_state(x), MLX_INT8);
    mc_mlxfn_end(x, &bm);
    /* the high nibble by an arithmetic shift: -8..-1 index from the end */
    uint64_t idx[2] = {bitwise_rec(x, BW_AND, v, &bm, low, &i0, &bm),
                       bitwise_rec(x, BW_RIGHT_SHIFT, v, &bm, four, &i0, &bm)};
    int g3[3] = {rows, 16, 1}, axis = 0, one = 1;
    mc_meta gm = meta_with(t, 3, g3), half[2] = {gm, gm}, cm;
    uint64_t part[2];
    for (int k = 0; k < 2; k++) {
        uint64_t args[2] = {lut, idx[k]};
        part[k] = mc_mlxfn_begin(x, "Gather", 2, args);
        mc_wb_ints(mc_mlxfn_state(x), 1, &axis);
        mc_wb_ints(mc_mlxfn_state(x), 1, &one);
        mc_mlxfn_end(x, &gm);
    }
    uint64_t c = concat_rec(x, part, half, 2, 2, &cm);
    int gshape[2] = {scales, words * 8 / scales}, sshape[2] = {scales, 1};
    c = reshape(x, c, &cm, 2, gshape);
    mc_meta s1 = meta_with(sc->dtype, 2, sshape), m0 = meta_with(t, 0, NULL), om = meta_with(t, 2, gshape);
    uint64_t e = to_dtype(x, reshape(x, in[1], sc, 2, sshape), &s1, t);
    uint64_t two = (e = scalar_op(x, "Subtract", e, &s1, 127)) ? mc_mlxfn_scalar(x, 2.0, t) : 0;
    if (!two)
        return 1;
    e = binop(x, "Power", two, &m0, e, &s1, &s1);
    c = binop(x, "Multiply", c, &om, e, &s1, &om);
    *id = reshape(x, c, &om, n->meta->ndim, n->meta->shape);
    return 0;
}

/* MLX's affine dequantize on the CPU (mlx/ops.cpp): the codes unpacked
 * from their uint32 words, grouped, times the group's scale plus its
 * bias. */
static int ex_dequantize(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_quant_params *p = n->params;
    if (p->mode == MC_QMODE_MXFP4 && n->n_in == 2)
        return ex_dequantize_mxfp4(x, n, in, im, id);
    if (p->mode != MC_QMODE_AFFINE)
        return unsupported(x, n, "MLX's CPU build decodes fp8 with ConvertFP8, which MLX cannot write");
    const mc_meta *w = &im[0], *sc = &im[1];
    mlx_dtype t = sc->dtype;
    int nd = w->ndim;
    mc_meta cm;
    uint64_t c = unpack_codes(x, in[0], w, p->bits, &cm);
    if (!c)
        return 1;
    int gshape[MC_MAX_NDIM];
    memcpy(gshape, w->shape, sizeof(int) * (size_t)(nd - 1));
    gshape[nd - 1] = sc->shape[nd - 1];
    gshape[nd] = p->group_size;
    c = reshape(x, c, &cm, nd + 1, gshape);
    mc_meta gm = meta_with(t, nd + 1, gshape), em = *sc, bm = im[2];
    cm = meta_with(MLX_UINT32, nd + 1, gshape);
    c = to_dtype(x, c, &cm, t);
    uint64_t se = expand_rec(x, in[1], &em, nd), be = expand_rec(x, in[2], &bm, nd);
    c = binop(x, "Multiply", c, &gm, se, &em, &gm);
    c = binop(x, "Add", c, &gm, be, &bm, &gm);
    *id = reshape(x, c, &gm, n->meta->ndim, n->meta->shape);
    return 0;
}

/* ---- linalg ---- */

/* MLX's factorizations. Ours pack a matrix's outputs along one last axis
 * (prims_linalg.h), which the linalg ops slice; where MLX's primitive has
 * several outputs, its record is followed by their packing (each output
 * flattened per matrix, of the packed dtype, concatenated), so the slices
 * after it read what they read here. */
static int ex_linalg(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_linalg_params *p = n->params;
    const mc_meta *a = &im[0];
    int nb = a->ndim - 2, m = a->shape[nb], c = a->shape[nb + 1], k = m < c ? m : c;
    mlx_dtype real = a->dtype == MLX_COMPLEX64 ? MLX_FLOAT32 : a->dtype;
    mc_meta outs[3];
    int n_out = 0;
    const char *name = mc_prim_name(n->prim, n->params);
    uint64_t r = mc_mlxfn_begin(x, name, 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    switch (n->prim) {
    case MC_PRIM_INVERSE:
        mc_wb_bool(st, p->tri);
        mc_wb_bool(st, p->upper);
        break;
    case MC_PRIM_CHOLESKY: mc_wb_bool(st, p->upper); break;
    case MC_PRIM_QRF: /* Q (m x k), R (k x n) */
        outs[0] = *a;
        outs[0].shape[nb + 1] = k;
        outs[1] = *a;
        outs[1].shape[nb] = k;
        n_out = 2;
        break;
    case MC_PRIM_SVD: /* U (m x m), S (k), Vt (n x n); S alone without vectors */
        mc_wb_bool(st, p->vectors);
        if (p->vectors) {
            outs[0] = outs[1] = outs[2] = *a;
            outs[0].shape[nb + 1] = m;
            outs[1] = meta_with(real, nb + 1, a->shape);
            outs[1].shape[nb] = k;
            outs[2].shape[nb] = c;
            n_out = 3;
        }
        break;
    case MC_PRIM_EIG:
    case MC_PRIM_EIGH: { /* values (n), vectors (n x n) */
        if (n->prim == MC_PRIM_EIGH) {
            char uplo[2] = {(char)p->uplo, 0};
            mc_wb_string(st, uplo);
        }
        mc_wb_bool(st, p->vectors);
        if (p->vectors) {
            mlx_dtype vt = n->prim == MC_PRIM_EIG ? MLX_COMPLEX64 : a->dtype;
            outs[0] = meta_with(n->prim == MC_PRIM_EIG ? MLX_COMPLEX64 : real, nb + 1, a->shape);
            outs[1] = meta_with(vt, a->ndim, a->shape);
            n_out = 2;
        }
        break;
    }
    default: return unsupported(x, n, "MLX 0.31 cannot read it back from a file");
    }
    if (!n_out) {
        mc_mlxfn_end(x, n->meta);
        *id = r;
        return 0;
    }
    uint64_t ids[3];
    mc_mlxfn_end_multi(x, r, n_out, outs, ids);
    for (int i = 0; i < n_out; i++) { /* (batch..., elements) of the packed dtype */
        mc_meta o = outs[i];
        ids[i] = to_dtype(x, ids[i], &o, n->meta->dtype);
        if (o.ndim == nb + 2) {
            mc_meta f = o;
            f.ndim = nb + 1;
            f.shape[nb] = o.shape[nb] * o.shape[nb + 1];
            uint64_t fl = mc_mlxfn_begin(x, "Flatten", 1, &ids[i]);
            mc_wb_i32(mc_mlxfn_state(x), nb);
            mc_wb_i32(mc_mlxfn_state(x), nb + 1);
            mc_mlxfn_end(x, &f);
            ids[i] = fl;
            o = f;
        }
        outs[i] = o;
    }
    mc_meta packed;
    *id = concat_rec(x, ids, outs, n_out, nb, &packed);
    return 0;
}

/* ---- fast.h: MLX's CPU fallbacks, which MLX's CPU build runs ---- */

/* mean over the last axis, kept; *out its meta. 0 on failure. */
static uint64_t mean_last(mc_mlxfn_exp *x, uint64_t a, const mc_meta *m, mc_meta *out)
{
    *out = *m;
    out->shape[m->ndim - 1] = 1;
    int ax = m->ndim - 1;
    uint64_t s = mc_mlxfn_begin(x, "Reduce", 1, &a);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* Sum */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax);
    mc_mlxfn_end(x, out);
    mc_meta m0 = meta_with(m->dtype, 0, NULL);
    return binop(x, "Multiply", s, out, inv_count(x, a, 1, &ax, m->dtype), &m0, out);
}

/* x * rsqrt(v + eps), v (..., 1) broadcast; x and v float32. */
static uint64_t normalize(mc_mlxfn_exp *x, uint64_t xc, const mc_meta *xm, uint64_t v, const mc_meta *vm,
                          float eps)
{
    uint64_t a = scalar_op(x, "Add", v, vm, eps);
    if (!a)
        return 0;
    uint64_t r = mc_mlxfn_begin(x, "Sqrt", 1, &a);
    mc_wb_bool(mc_mlxfn_state(x), true);
    mc_mlxfn_end(x, vm);
    return binop(x, "Multiply", xc, xm, r, vm, xm);
}

static int ex_norm(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    float eps = ((const mc_norm_params *)n->params)->eps;
    if (im[0].ndim == 0 || im[0].shape[im[0].ndim - 1] == 0)
        return unsupported(x, n, "no last axis to normalise");
    mc_meta xm = im[0], sm;
    uint64_t xf = to_dtype(x, in[0], &xm, MLX_FLOAT32), xc = xf, v;
    if (n->prim == MC_PRIM_LAYER_NORM) { /* x - mean(x), then its mean square */
        uint64_t mu = mean_last(x, xf, &xm, &sm);
        if (!mu)
            return 1;
        xc = binop(x, "Subtract", xf, &xm, mu, &sm, &xm);
    }
    uint64_t sq = mc_mlxfn_node1(x, "Square", 1, &xc, &xm);
    if (!(v = mean_last(x, sq, &xm, &sm)) || !(v = normalize(x, xc, &xm, v, &sm, eps)))
        return 1;
    v = to_dtype(x, v, &xm, n->meta->dtype);
    v = binop(x, "Multiply", v, &xm, in[1], &im[1], n->meta);
    if (n->prim == MC_PRIM_LAYER_NORM)
        v = binop(x, "Add", v, n->meta, in[2], &im[2], n->meta);
    *id = v;
    return 0;
}

/* (..., d0, d1, ...) with axis split into (a, b). */
static uint64_t unflatten_rec(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, int axis, int a, int b)
{
    mc_meta o = *m;
    o.ndim = m->ndim + 1;
    o.shape[axis] = a;
    o.shape[axis + 1] = b;
    memcpy(o.shape + axis + 2, m->shape + axis + 1, sizeof(int) * (size_t)(m->ndim - axis - 1));
    int s[2] = {a, b};
    uint64_t r = mc_mlxfn_begin(x, "Unflatten", 1, &id);
    mc_wb_i32(mc_mlxfn_state(x), axis);
    mc_wb_ints(mc_mlxfn_state(x), 2, s);
    mc_mlxfn_end(x, &o);
    *m = o;
    return r;
}

/* The rotated halves, with MLX's operand order (x1, x2 of meta xm; c and
 * sn the cosines and sines of meta cm). */
static void rotate(mc_mlxfn_exp *x, bool forward, uint64_t x1, uint64_t x2, const mc_meta *xm, uint64_t c,
                   uint64_t sn, const mc_meta *cm, uint64_t out[2])
{
    /* forward: x1 c - x2 s, x1 s + x2 c; inverse: x2 s + x1 c, x2 c - x1 s */
    uint64_t u = forward ? x1 : x2, w = forward ? x2 : x1;
    uint64_t uc = binop(x, "Multiply", u, xm, forward ? c : sn, cm, xm);
    uint64_t ws = binop(x, "Multiply", w, xm, forward ? sn : c, cm, xm);
    out[0] = binop(x, forward ? "Subtract" : "Add", uc, xm, ws, xm, xm);
    uint64_t us = binop(x, "Multiply", u, xm, forward ? sn : c, cm, xm);
    uint64_t wc = binop(x, "Multiply", w, xm, forward ? c : sn, cm, xm);
    out[1] = binop(x, forward ? "Add" : "Subtract", us, xm, wc, xm, xm);
}

/* MLX's rope fallback (mlx/fast.cpp), which its CPU build runs: x seen as
 * (B, N, T, D); positions (arange(T) + offset) * scale in float32; angles
 * positions times the inverse frequencies (1 / freqs, or exp(-i log(base)
 * / (dims/2))); the first dims features rotated as halves, or as pairs
 * (traditional), the rest copied. */
static int ex_rope(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_rope_params *p = n->params;
    mc_meta xm = im[0];
    uint64_t xi = in[0];
    if (xm.ndim == 3) {
        xi = expand_rec(x, xi, &xm, 1);
    } else if (xm.ndim > 4) {
        int lead = 1;
        for (int i = 1; i < xm.ndim - 2; i++)
            lead *= xm.shape[i];
        mc_meta f =
            meta_with(xm.dtype, 4, (int[]){xm.shape[0], lead, xm.shape[xm.ndim - 2], xm.shape[xm.ndim - 1]});
        uint64_t r = mc_mlxfn_begin(x, "Flatten", 1, &xi);
        mc_wb_i32(mc_mlxfn_state(x), 1);
        mc_wb_i32(mc_mlxfn_state(x), xm.ndim - 3);
        mc_mlxfn_end(x, &f);
        xi = r;
        xm = f;
    }
    int B = xm.shape[0], N = xm.shape[1], T = xm.shape[2], D = xm.shape[3], dims = p->dims, half = dims / 2;
    mlx_dtype t = xm.dtype;

    /* positions: (T,), or (B, 1, T) for one offset per batch entry */
    mc_meta om = im[1], ar = meta_with(MLX_FLOAT32, 1, &T), pm;
    uint64_t off = in[1];
    if (om.ndim == 1 && om.shape[0] > 1) {
        int ax[2] = {1, 2};
        mc_meta e = meta_with(om.dtype, 3, (int[]){om.shape[0], 1, 1});
        uint64_t r = mc_mlxfn_begin(x, "ExpandDims", 1, &off);
        mc_wb_ints(mc_mlxfn_state(x), 2, ax);
        mc_mlxfn_end(x, &e);
        off = r;
        om = e;
    }
    uint64_t pos = arange_rec(x, 0, T, 1, MLX_FLOAT32);
    off = to_dtype(x, off, &om, MLX_FLOAT32);
    pm = om.ndim == 3 ? meta_with(MLX_FLOAT32, 3, (int[]){om.shape[0], 1, T}) : ar;
    pos = binop(x, "Add", pos, &ar, off, &om, &pm);
    if (!(pos = scalar_op(x, "Multiply", pos, &pm, p->scale)))
        return 1;

    mc_meta fm = meta_with(MLX_FLOAT32, 1, &half), m0 = meta_with(MLX_FLOAT32, 0, NULL);
    uint64_t inv;
    if (p->has_freqs) { /* reciprocal(freqs) */
        uint64_t one = mc_mlxfn_scalar(x, 1.0, MLX_FLOAT32);
        if (!one)
            return 1;
        inv = binop(x, "Divide", one, &m0, in[2], &im[2], &im[2]);
    } else {
        uint64_t k = arange_rec(x, 0, -half, -1, MLX_FLOAT32);
        if (!(k = scalar_op(x, "Multiply", k, &fm, (double)(logf(p->base) / (float)half))))
            return 1;
        inv = mc_mlxfn_node1(x, "Exp", 1, &k, &fm);
    }
    uint64_t pe = expand_rec(x, pos, &pm, pm.ndim);
    mc_meta cm = pm;
    cm.shape[pm.ndim - 1] = half;
    uint64_t theta = binop(x, "Multiply", pe, &pm, inv, &fm, &cm);
    mc_meta sm = cm;
    uint64_t c = to_dtype(x, mc_mlxfn_node1(x, "Cos", 1, &theta, &cm), &cm, t);
    uint64_t sn = to_dtype(x, mc_mlxfn_node1(x, "Sin", 1, &theta, &sm), &sm, t);

    int zero[4] = {0, 0, 0, 0}, ones[4] = {1, 1, 1, 1}, full[4] = {B, N, T, D}, rest[4] = {0, 0, 0, dims};
    uint64_t outs[3], o;
    mc_meta hm, om2[3], out;
    if (p->traditional) {
        int odd[4] = {0, 0, 0, 1}, stop[4] = {B, N, T, dims}, two[4] = {1, 1, 1, 2};
        uint64_t x1 = slice_rec(x, xi, &xm, zero, stop, two, &hm);
        uint64_t x2 = slice_rec(x, xi, &xm, odd, stop, two, &hm);
        rotate(x, p->forward, x1, x2, &hm, c, sn, &cm, outs);
        mc_meta em = hm;
        outs[0] = expand_rec(x, outs[0], &em, 4);
        em = hm;
        outs[1] = expand_rec(x, outs[1], &em, 4);
        om2[0] = om2[1] = em;
        o = concat_rec(x, outs, om2, 2, 4, &out);
        o = reshape(x, o, &out, 4, stop);
        out = meta_with(t, 4, stop);
        if (dims < D) {
            outs[0] = o;
            om2[0] = out;
            outs[1] = slice_rec(x, xi, &xm, rest, full, ones, &om2[1]);
            o = concat_rec(x, outs, om2, 2, 3, &out);
        }
    } else {
        int stop[4] = {B, N, T, half}, start[4] = {0, 0, 0, half};
        uint64_t x1 = slice_rec(x, xi, &xm, zero, stop, ones, &hm);
        stop[3] = dims;
        uint64_t x2 = slice_rec(x, xi, &xm, start, stop, ones, &hm);
        rotate(x, p->forward, x1, x2, &hm, c, sn, &cm, outs);
        om2[0] = om2[1] = hm;
        int k = 2;
        if (dims < D)
            outs[k] = slice_rec(x, xi, &xm, rest, full, ones, &om2[k]), k++;
        o = concat_rec(x, outs, om2, k, 3, &out);
    }
    *id = reshape(x, o, &out, im[0].ndim, im[0].shape);
    return 0;
}

/* MLX's attention fallback (mlx/fast.cpp), which its CPU build runs:
 * scores = (scale * q) @ k^T, masked (causal: key position <= query
 * position + Lk - Lq), softmax (precise), @ v; grouped heads as groups of
 * the key/value heads. */
static int ex_sdpa(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_sdpa_params *p = n->params;
    mc_meta q = im[0], k = im[1], v = im[2];
    mlx_dtype dt = q.dtype;
    int hq = q.shape[1], hkv = k.shape[1], rep = hq / hkv;
    uint64_t sc = mc_mlxfn_scalar(x, p->scale, dt);
    if (!sc)
        return 1;
    mc_meta m0 = meta_with(dt, 0, NULL);
    uint64_t iq = binop(x, "Multiply", sc, &m0, in[0], &q, &q), ik = in[1], iv = in[2];
    if (rep > 1) {
        iq = unflatten_rec(x, iq, &q, 1, hkv, rep);
        ik = expand_rec(x, ik, &k, 2);
        iv = expand_rec(x, iv, &v, 2);
    }
    int perm[MC_MAX_NDIM];
    for (int i = 0; i < k.ndim; i++)
        perm[i] = i;
    perm[k.ndim - 2] = k.ndim - 1;
    perm[k.ndim - 1] = k.ndim - 2;
    mc_meta kt = k;
    kt.shape[k.ndim - 2] = k.shape[k.ndim - 1];
    kt.shape[k.ndim - 1] = k.shape[k.ndim - 2];
    uint64_t ikt = mc_mlxfn_begin(x, "Transpose", 1, &ik);
    mc_wb_ints(mc_mlxfn_state(x), k.ndim, perm);
    mc_mlxfn_end(x, &kt);
    mc_meta sm;
    uint64_t s = matmul_op(x, iq, q, ikt, kt, &sm);
    if (p->causal || p->has_mask) {
        uint64_t mask;
        mc_meta mm;
        if (p->causal) {
            int kl = k.shape[k.ndim - 2], ql = q.shape[q.ndim - 2], off = kl - ql;
            int s1[2] = {ql, 1}, s2[2] = {1, kl}, s3[2] = {ql, kl};
            mc_meta e1 = meta_with(MLX_INT32, 2, s1), e2 = meta_with(MLX_INT32, 2, s2);
            uint64_t qi = axes_rec(x, "ExpandDims", arange_rec(x, off, ql + off, 1, MLX_INT32), 1, &e1);
            uint64_t ki = axes_rec(x, "ExpandDims", arange_rec(x, 0, kl, 1, MLX_INT32), 0, &e2);
            mm = meta_with(MLX_BOOL, 2, s3);
            mask = binop(x, "GreaterEqual", qi, &e1, ki, &e2, &mm);
        } else {
            mask = in[3];
            mm = im[3];
            if (rep > 1 && mm.ndim >= 3) {
                int ax = mm.ndim - 3;
                mask =
                    mm.shape[ax] == 1 ? expand_rec(x, mask, &mm, ax) : unflatten_rec(x, mask, &mm, ax, hkv, rep);
            }
        }
        if (mm.dtype == MLX_BOOL) {
            double lowest = dt == MLX_FLOAT16    ? -65504.0
                            : dt == MLX_BFLOAT16 ? -3.38953138925153547e38
                            : dt == MLX_FLOAT64  ? -1.7976931348623157e308
                                                 : -3.40282346638528859e38;
            uint64_t low = mc_mlxfn_scalar(x, lowest, dt);
            if (!low)
                return 1;
            uint64_t args[3] = {mask, s, low};
            mc_meta ms[3] = {mm, sm, m0};
            bcast_n(x, args, ms, 3, &sm);
            s = mc_mlxfn_node1(x, "Select", 3, args, &sm);
        } else {
            s = binop(x, "Add", s, &sm, mask, &mm, &sm);
        }
    }
    if (p->has_sinks) { /* a sink column first, sliced off after the softmax */
        int at = 3 + (p->has_mask ? 1 : 0), sax[3] = {0, 2, 3};
        mc_meta km = meta_with(im[at].dtype, 4, (int[]){1, hq, 1, 1});
        uint64_t sk = mc_mlxfn_begin(x, "ExpandDims", 1, &in[at]);
        mc_wb_ints(mc_mlxfn_state(x), 3, sax);
        mc_mlxfn_end(x, &km);
        if (sm.ndim == 5)
            sk = unflatten_rec(x, sk, &km, 1, hkv, rep);
        mc_meta bm = sm;
        bm.shape[sm.ndim - 1] = 1;
        uint64_t parts[2] = {bcast(x, sk, &km, bm.ndim, bm.shape), s};
        mc_meta pm[2] = {bm, sm};
        s = concat_rec(x, parts, pm, 2, sm.ndim - 1, &sm);
    }
    uint64_t sw = mc_mlxfn_begin(x, "Softmax", 1, &s);
    mc_wb_bool(mc_mlxfn_state(x), true);
    mc_mlxfn_end(x, &sm);
    if (p->has_sinks) {
        int start[MC_MAX_NDIM] = {0}, str[MC_MAX_NDIM];
        for (int i = 0; i < sm.ndim; i++)
            str[i] = 1;
        start[sm.ndim - 1] = 1;
        mc_meta cut;
        sw = slice_rec(x, sw, &sm, start, sm.shape, str, &cut);
        sm = cut;
    }
    mc_meta om;
    uint64_t o = matmul_op(x, sw, sm, iv, v, &om);
    if (rep > 1) {
        uint64_t f = mc_mlxfn_begin(x, "Flatten", 1, &o);
        mc_wb_i32(mc_mlxfn_state(x), 1);
        mc_wb_i32(mc_mlxfn_state(x), 2);
        mc_mlxfn_end(x, n->meta);
        o = f;
    }
    *id = o;
    return 0;
}

/* MLX has these primitives but no serializer for them (mlx/export.cpp), or
 * (ConvertFP8) writes none, so it could not read them back. */
static int ex_unreadable(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)in, (void)im, (void)id;
    return unsupported(x, n, "MLX 0.31 cannot read it from a file");
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
    case MC_PRIM_QUANTIZED_MATMUL: return ex_quantized_matmul;
    case MC_PRIM_RMS_NORM:
    case MC_PRIM_LAYER_NORM: return ex_norm;
    case MC_PRIM_GATHER_MM: return ex_gather_mm;
    case MC_PRIM_BLOCK_MASKED_MM: return ex_block_masked_mm;
    case MC_PRIM_HADAMARD: return ex_hadamard;
    case MC_PRIM_RANDOM_BITS: return ex_random_bits;
    case MC_PRIM_RANDOM_DIST: return ex_random_dist;
    case MC_PRIM_RANDOM_PERMUTATION: return ex_random_permutation;
    case MC_PRIM_DIAGONAL: return ex_diagonal;
    case MC_PRIM_QUANTIZE: return ex_quantize;
    case MC_PRIM_DEQUANTIZE: return ex_dequantize;
    case MC_PRIM_DEPENDS: return ex_plain;
    case MC_PRIM_INVERSE:
    case MC_PRIM_CHOLESKY:
    case MC_PRIM_QRF:
    case MC_PRIM_SVD:
    case MC_PRIM_EIG:
    case MC_PRIM_EIGH: return ex_linalg;
    case MC_PRIM_LUF:
    case MC_PRIM_SOLVE:
    case MC_PRIM_SEGMENTED_MM:
    case MC_PRIM_QQMATMUL:
    case MC_PRIM_CONVERT_FP8: return ex_unreadable;
    case MC_PRIM_ROPE: return ex_rope;
    case MC_PRIM_SDPA: return ex_sdpa;
    default: return NULL;
    }
}
