/* Owns MLX's ops as tape records for the exporters (mlxfn_export.h):
 * broadcasting as MLX's broadcast_arrays and broadcast_to write it
 * (shapeless: with the StopGradient inputs MLX's dynamic tracing gives
 * Broadcast and BroadcastAxes), the shape ops, constants combined with an
 * array, and MLX's matmul op. */
#include <string.h>

#include "graph/primitive.h"
#include "io/mlxfn_export.h"
#include "runtime/error.h"

typedef const mc_mlxfn_node node_t;

int mc_xp_unsupported(mc_mlxfn_exp *x, node_t *n, const char *why)
{
    return mc_error("[%s] Unable to export primitive %s: %s.", mc_mlxfn_fn(x), mc_prim_name(n->prim, n->params),
                    why);
}

mc_meta mc_xp_meta_with(mlx_dtype dtype, int ndim, const int *shape)
{
    mc_meta m;
    m.dtype = dtype;
    m.ndim = ndim;
    if (ndim)
        memcpy(m.shape, shape, sizeof(int) * (size_t)ndim);
    return m;
}

bool mc_xp_same_shape(const mc_meta *a, int ndim, const int *shape)
{
    return a->ndim == ndim && (!ndim || !memcmp(a->shape, shape, sizeof(int) * (size_t)ndim));
}

/* id, broadcast to shape if it has another one (MLX's broadcast_to). */
uint64_t mc_xp_bcast(mc_mlxfn_exp *x, uint64_t id, const mc_meta *m, int ndim, const int *shape)
{
    if (mc_xp_same_shape(m, ndim, shape))
        return id;
    mc_meta out = mc_xp_meta_with(m->dtype, ndim, shape);
    uint64_t r = mc_mlxfn_begin(x, "Broadcast", 1, &id);
    mc_wb_ints(mc_mlxfn_state(x), ndim, shape);
    mc_mlxfn_end(x, &out);
    return r;
}

uint64_t mc_xp_reshape(mc_mlxfn_exp *x, uint64_t id, const mc_meta *m, int ndim, const int *shape)
{
    if (mc_xp_same_shape(m, ndim, shape))
        return id;
    mc_meta out = mc_xp_meta_with(m->dtype, ndim, shape);
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
void mc_xp_bcast_n(mc_mlxfn_exp *x, uint64_t *ids, const mc_meta *m, int n, const mc_meta *out)
{
    if (!mc_mlxfn_shapeless(x)) {
        for (int i = 0; i < n; i++)
            ids[i] = mc_xp_bcast(x, ids[i], &m[i], out->ndim, out->shape);
        return;
    }
    uint64_t orig[4], sg[4] = {0, 0, 0, 0};
    memcpy(orig, ids, sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (mc_xp_same_shape(&m[i], out->ndim, out->shape))
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
        mc_meta o = mc_xp_meta_with(m[i].dtype, out->ndim, out->shape);
        ids[i] = mc_mlxfn_begin(x, "Broadcast", k, args);
        mc_wb_ints(mc_mlxfn_state(x), out->ndim, out->shape);
        mc_mlxfn_end(x, &o);
    }
}

/* id converted to dtype (its meta m updated). */
uint64_t mc_xp_to_dtype(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, mlx_dtype dtype)
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
uint64_t mc_xp_binop(mc_mlxfn_exp *x, const char *name, uint64_t a, const mc_meta *ma, uint64_t b,
                     const mc_meta *mb, const mc_meta *out)
{
    uint64_t args[2] = {a, b};
    mc_meta m[2] = {*ma, *mb};
    mc_xp_bcast_n(x, args, m, 2, out);
    return mc_mlxfn_node1(x, name, 2, args, out);
}

/* a op v, v a scalar of a's dtype; 0 on failure (reported). */
uint64_t mc_xp_scalar_op(mc_mlxfn_exp *x, const char *name, uint64_t a, const mc_meta *m, double v)
{
    uint64_t k = mc_mlxfn_scalar(x, v, m->dtype);
    if (!k)
        return 0;
    mc_meta m0 = mc_xp_meta_with(m->dtype, 0, NULL);
    return mc_xp_binop(x, name, a, m, k, &m0, m);
}

/* MLX's Arange record from start towards stop by step, of dtype. */
uint64_t mc_xp_arange_rec(mc_mlxfn_exp *x, int start, int stop, int step, mlx_dtype dtype)
{
    int len = (stop - start + step + (step > 0 ? -1 : 1)) / step;
    mc_meta m = mc_xp_meta_with(dtype, 1, &len);
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
uint64_t mc_xp_slice_rec(mc_mlxfn_exp *x, uint64_t a, const mc_meta *m, const int *start, const int *stop,
                         const int *strides, mc_meta *out)
{
    mc_meta o = *m;
    for (int i = 0; i < m->ndim; i++)
        o.shape[i] = (stop[i] - start[i] + strides[i] - 1) / strides[i];
    *out = o;
    if (mc_xp_same_shape(m, o.ndim, o.shape))
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
uint64_t mc_xp_concat_rec(mc_mlxfn_exp *x, const uint64_t *ids, const mc_meta *m, int n, int axis, mc_meta *out)
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

uint64_t mc_xp_axes_rec(mc_mlxfn_exp *x, const char *name, uint64_t a, int axis, const mc_meta *out)
{
    uint64_t r = mc_mlxfn_begin(x, name, 1, &a);
    mc_wb_ints(mc_mlxfn_state(x), 1, &axis);
    mc_mlxfn_end(x, out);
    return r;
}

uint64_t mc_xp_expand_rec(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, int axis)
{
    mc_meta o = *m;
    o.ndim = m->ndim + 1;
    o.shape[axis] = 1;
    memcpy(o.shape + axis + 1, m->shape + axis, sizeof(int) * (size_t)(m->ndim - axis));
    *m = o;
    return mc_xp_axes_rec(x, "ExpandDims", id, axis, &o);
}

/* (..., d0, d1, ...) with axis split into (a, b). */
uint64_t mc_xp_unflatten_rec(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, int axis, int a, int b)
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

/* BitwiseBinary op (MLX's BitwiseBinary::Op) of a and b, both broadcast
 * to out. */
uint64_t mc_xp_bitwise_rec(mc_mlxfn_exp *x, int op, uint64_t a, const mc_meta *ma, uint64_t b, const mc_meta *mb,
                           const mc_meta *out)
{
    uint64_t args[2] = {a, b};
    mc_meta m[2] = {*ma, *mb};
    mc_xp_bcast_n(x, args, m, 2, out);
    uint64_t r = mc_mlxfn_begin(x, "BitwiseBinary", 2, args);
    mc_wb_i32(mc_mlxfn_state(x), op);
    mc_mlxfn_end(x, out);
    return r;
}

/* a broadcast against b over all but the last two axes: MLX's
 * broadcast_arrays with ignored axes (-2, -1). Shapeless, the record is a
 * BroadcastAxes that takes b too (through StopGradient), from which MLX
 * infers the batch shape again when the inputs change. */
static uint64_t bcast_batch(mc_mlxfn_exp *x, uint64_t a, mc_meta *am, uint64_t b, const mc_meta *bm, int nb,
                            const int *batch, uint64_t *sg_b)
{
    mc_meta o = mc_xp_meta_with(am->dtype, nb + 2, batch);
    o.shape[nb] = am->shape[am->ndim - 2];
    o.shape[nb + 1] = am->shape[am->ndim - 1];
    if (mc_xp_same_shape(am, o.ndim, o.shape))
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
uint64_t mc_xp_matmul_op(mc_mlxfn_exp *x, uint64_t ia, mc_meta a, uint64_t ib, mc_meta b, mc_meta *out)
{
    int nda = a.ndim, ndb = b.ndim;
    if (nda == 1)
        ia = mc_xp_expand_rec(x, ia, &a, 0);
    if (ndb == 1)
        ib = mc_xp_expand_rec(x, ib, &b, 1);
    mc_meta o;
    uint64_t r;
    if (nda > 2 && ndb <= 2) {
        mc_meta orig = a;
        int rows = 1;
        for (int i = 0; i < a.ndim - 1; i++)
            rows *= a.shape[i];
        mc_meta f = mc_xp_meta_with(a.dtype, 2, (int[]){rows, a.shape[a.ndim - 1]});
        uint64_t fa = mc_mlxfn_begin(x, "Flatten", 1, &ia);
        mc_wb_i32(mc_mlxfn_state(x), 0);
        mc_wb_i32(mc_mlxfn_state(x), a.ndim - 2);
        mc_mlxfn_end(x, &f);
        uint64_t args[2] = {fa, ib};
        mc_meta p = mc_xp_meta_with(a.dtype, 2, (int[]){rows, b.shape[1]});
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

/* 1 / (the product of a's sizes on axes), a 0-d array of dtype: MLX's
 * NumberOfElements, which follows a's shape in a shapeless export. */
uint64_t mc_xp_inv_count(mc_mlxfn_exp *x, uint64_t a, int n, const int *axes, mlx_dtype dtype)
{
    mc_meta m0 = mc_xp_meta_with(dtype, 0, NULL);
    uint64_t r = mc_mlxfn_begin(x, "NumberOfElements", 1, &a);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_ints(st, n, axes);
    mc_wb_bool(st, true);
    mc_wb_dtype(st, dtype);
    mc_mlxfn_end(x, &m0);
    return r;
}
