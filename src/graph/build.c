/* Owns the node constructors of build.h: single nodes, and the scope that
 * holds the nodes of a composition. */
#include "graph/build.h"

#include <string.h>

#include "graph/prims_binary.h"
#include "graph/prims_copy.h"
#include "graph/prims_create.h"
#include "graph/prims_index.h"
#include "graph/prims_reduce.h"
#include "graph/prims_scan.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "graph/prims_unary.h"
#include "graph/prims_view.h"
#include "runtime/error.h"

/* ---- single nodes ---- */

mc_array *mc_node_astype(mc_array *a, mlx_dtype dtype, const char *fn)
{
    if (a->dtype == dtype)
        return mc_array_retain(a);
    mc_astype_params p = {dtype};
    return mc_node_new(fn, MC_PRIM_ASTYPE, &a, 1, &p, sizeof p);
}

mc_array *mc_node_dims(int prim, mc_array *a, int ndim, const int *dims, const char *fn)
{
    mc_dims_params p;
    memset(&p, 0, sizeof p);
    p.ndim = ndim;
    if (ndim)
        memcpy(p.dims, dims, sizeof(int) * (size_t)ndim);
    return mc_node_new(fn, prim, &a, 1, &p, mc_dims_params_size(ndim));
}

mc_array *mc_node_broadcast(mc_array *a, int ndim, const int *shape, const char *fn)
{
    if (mc_array_has_shape(a, ndim, shape))
        return mc_array_retain(a);
    return mc_node_dims(MC_PRIM_BROADCAST, a, ndim, shape, fn);
}

mc_array *mc_node_reshape(mc_array *a, int ndim, const int *shape, const char *fn)
{
    if (mc_array_has_shape(a, ndim, shape))
        return mc_array_retain(a);
    size_t size;
    if (!mc_shape_size(ndim, shape, &size) || size != a->size) {
        char s[512];
        mc_error("[%s] Cannot reshape array of size %zu into shape %s.", fn, a->size,
                 mc_shape_str(s, sizeof s, ndim, shape));
        return NULL;
    }
    return mc_node_dims(MC_PRIM_RESHAPE, a, ndim, shape, fn);
}

mc_array *mc_node_transpose(mc_array *a, const int *perm, const char *fn)
{
    bool identity = true;
    for (int i = 0; i < a->ndim; i++)
        identity &= perm[i] == i;
    if (identity)
        return mc_array_retain(a);
    return mc_node_dims(MC_PRIM_TRANSPOSE, a, a->ndim, perm, fn);
}

static mc_array *axes_node(int prim, mc_array *a, const int *axes, int n, const char *fn)
{
    if (n == 0)
        return mc_array_retain(a);
    mc_axes_params p;
    memset(&p, 0, sizeof p);
    p.n = n;
    memcpy(p.axes, axes, sizeof(int) * (size_t)n);
    return mc_node_new(fn, prim, &a, 1, &p, sizeof p);
}

mc_array *mc_node_expand_dims(mc_array *a, const int *axes, int n, const char *fn)
{
    return axes_node(MC_PRIM_EXPAND_DIMS, a, axes, n, fn);
}

mc_array *mc_node_squeeze(mc_array *a, const int *axes, int n, const char *fn)
{
    return axes_node(MC_PRIM_SQUEEZE, a, axes, n, fn);
}

mc_array *mc_node_reduce(mc_array *a, int kind, int ddof, const int *sorted, int n, const char *fn)
{
    mc_reduce_params p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.ddof = ddof;
    p.n = n;
    memcpy(p.axes, sorted, sizeof(int) * (size_t)n);
    return mc_node_new(fn, MC_PRIM_REDUCE, &a, 1, &p, sizeof p);
}

mc_array *mc_node_like(const mc_array *node, mc_array *const *inputs, int n, const char *fn)
{
    return mc_node_new(fn, node->prim, inputs, n, node->params, node->params_size);
}

/* ---- rules shared by primitives ---- */

mc_array *mc_jvp_linear(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    return mc_node_like(node, tans, 1, fn);
}

int mc_vjp_reshape_back(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                        const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_array *in = node->inputs[0];
    vjps[0] = mc_node_reshape(cot, in->ndim, in->shape, fn);
    return vjps[0] ? 0 : 1;
}

int mc_vjp_zeros(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)cot;
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        if (mc_vjp_store(vjps, k, &s, mc_gb_zeros_like(&s, node->inputs[argnums[k]])))
            return 1;
    }
    return 0;
}

mc_array *mc_jvp_zeros(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)tans;
    (void)argnums;
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, node));
}

int mc_vjp_none(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)vjps, (void)cot, (void)argnums, (void)nargs, (void)fn;
    /* MLX's Primitive::vjp default, word for word */
    return mc_error("[Primitive::vjp] Not implemented for %s.", mc_prim_name(node->prim, node->params));
}

mc_array *mc_jvp_none(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)tans, (void)argnums, (void)nargs, (void)fn;
    mc_error("[Primitive::jvp] Not implemented for %s.", mc_prim_name(node->prim, node->params));
    return NULL;
}

int mc_vjp_store(mc_array **vjps, int k, mc_gb *s, mc_array *g)
{
    vjps[k] = mc_gb_finish_ref(s, g);
    if (vjps[k])
        return 0;
    while (k > 0)
        mc_array_release(vjps[--k]);
    return 1;
}

/* ---- the scope ---- */

void mc_gb_begin(mc_gb *s, const char *fn)
{
    s->fn = fn;
    s->failed = false;
    s->n = 0;
}

void mc_gb_end(mc_gb *s)
{
    /* newest first: a later node holds references on earlier ones, so this
     * order frees each at its last release without deep chains */
    while (s->n > 0)
        mc_array_release(s->held[--s->n]);
}

mc_array *mc_gb_finish_ref(mc_gb *s, mc_array *r)
{
    if (r && !s->failed)
        mc_array_retain(r);
    else
        r = NULL;
    mc_gb_end(s);
    return r;
}

mc_array *mc_gb_hold(mc_gb *s, mc_array *a)
{
    if (!a) {
        s->failed = true;
        return NULL;
    }
    if (s->n == MC_GB_MAX_HELD) {
        mc_array_release(a);
        s->failed = true;
        mc_error("[%s] Internal: too many intermediate arrays.", s->fn);
        return NULL;
    }
    s->held[s->n++] = a;
    return a;
}

mc_array *mc_gb_astype(mc_gb *s, mc_array *a, mlx_dtype dtype)
{
    /* a is held by the scope or by the caller, which outlives the scope:
     * no reference is needed to hand it back */
    if (s->failed || !a)
        return NULL;
    if (a->dtype == dtype)
        return a;
    return mc_gb_hold(s, mc_node_astype(a, dtype, s->fn));
}

mc_array *mc_gb_unary(mc_gb *s, mc_unary_op op, mc_array *a)
{
    if (s->failed || !a)
        return NULL;
    mc_unary_params p = {op};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_UNARY, &a, 1, &p, sizeof p));
}

mc_array *mc_gb_binary(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b, mlx_dtype dtype)
{
    mc_array *in[2] = {mc_gb_astype(s, a, dtype), NULL};
    in[1] = mc_gb_astype(s, in[0] ? b : NULL, dtype);
    if (!in[1])
        return NULL;
    mc_binary_params p = {op};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_BINARY, in, 2, &p, sizeof p));
}

mc_array *mc_gb_promoted(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b, bool to_float)
{
    if (s->failed || !a || !b)
        return NULL;
    mlx_dtype t = mc_promote(a->dtype, b->dtype);
    if (to_float && !mc_dtype_is_inexact(t))
        t = MLX_FLOAT32;
    return mc_gb_binary(s, op, a, b, t);
}

mc_array *mc_gb_op(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b)
{
    return a ? mc_gb_binary(s, op, a, b, a->dtype) : NULL;
}

mc_array *mc_gb_scalar(mc_gb *s, double v, mlx_dtype dtype)
{
    /* converted by the same kernel astype uses, so a constant of a
     * float16 or bool array rounds exactly as a converted array would */
    if (s->failed)
        return NULL;
    mc_convert_kernel k = mc_kernels()->convert[MLX_FLOAT64][dtype];
    if (!k) {
        s->failed = true;
        mc_error("[%s] Cannot make a %s constant.", s->fn, mc_dtype_name(dtype));
        return NULL;
    }
    unsigned char bytes[16];
    k(&v, bytes, 1);
    return mc_gb_hold(s, mc_array_scalar(s->fn, dtype, bytes));
}

mc_array *mc_gb_full_like(mc_gb *s, double v, mlx_dtype dtype, const mc_array *like)
{
    mc_array *c = like ? mc_gb_scalar(s, v, dtype) : NULL;
    if (!c)
        return NULL;
    return mc_gb_hold(s, mc_node_broadcast(c, like->ndim, like->shape, s->fn));
}

mc_array *mc_gb_zeros_like(mc_gb *s, const mc_array *like)
{
    return like ? mc_gb_full_like(s, 0.0, like->dtype, like) : NULL;
}

mc_array *mc_gb_where(mc_gb *s, mc_array *cond, mc_array *x, mc_array *y)
{
    if (s->failed || !cond || !x || !y)
        return NULL;
    mc_array *in[3] = {cond, x, y};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_WHERE, in, 3, NULL, 0));
}

mc_array *mc_gb_broadcast(mc_gb *s, mc_array *a, int ndim, const int *shape)
{
    return s->failed || !a ? NULL : mc_gb_hold(s, mc_node_broadcast(a, ndim, shape, s->fn));
}

mc_array *mc_gb_broadcast_like(mc_gb *s, mc_array *a, const mc_array *like)
{
    return s->failed || !a || !like ? NULL : mc_gb_broadcast(s, a, like->ndim, like->shape);
}

mc_array *mc_gb_imag_unit(mc_gb *s)
{
    if (s->failed)
        return NULL;
    const float parts[2] = {0.0f, 1.0f};
    return mc_gb_hold(s, mc_array_scalar(s->fn, MLX_COMPLEX64, parts));
}

mc_array *mc_gb_reshape(mc_gb *s, mc_array *a, int ndim, const int *shape)
{
    return s->failed || !a ? NULL : mc_gb_hold(s, mc_node_reshape(a, ndim, shape, s->fn));
}

mc_array *mc_gb_transpose(mc_gb *s, mc_array *a, const int *perm)
{
    return s->failed || !a ? NULL : mc_gb_hold(s, mc_node_transpose(a, perm, s->fn));
}

mc_array *mc_gb_squeeze(mc_gb *s, mc_array *a, const int *axes, int n)
{
    return s->failed || !a ? NULL : mc_gb_hold(s, mc_node_squeeze(a, axes, n, s->fn));
}

mc_array *mc_gb_matmul(mc_gb *s, mc_array *a, mc_array *b)
{
    if (s->failed || !a || !b)
        return NULL;
    mc_array *in[2] = {a, b};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_MATMUL, in, 2, NULL, 0));
}

mc_array *mc_gb_swap_last(mc_gb *s, mc_array *a)
{
    if (s->failed || !a)
        return NULL;
    int perm[MC_MAX_NDIM];
    for (int i = 0; i < a->ndim; i++)
        perm[i] = i;
    perm[a->ndim - 1] = a->ndim - 2;
    perm[a->ndim - 2] = a->ndim - 1;
    return mc_gb_transpose(s, a, perm);
}

mc_array *mc_gb_like(mc_gb *s, const mc_array *node, mc_array *const *inputs, int n)
{
    for (int i = 0; i < n; i++)
        if (!inputs[i])
            s->failed = true;
    return s->failed ? NULL : mc_gb_hold(s, mc_node_like(node, inputs, n, s->fn));
}

mc_array *mc_gb_slice(mc_gb *s, mc_array *a, const void *p)
{
    if (s->failed || !a)
        return NULL;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SLICE, &a, 1, p, sizeof(mc_slice_params)));
}

mc_array *mc_gb_slice_update(mc_gb *s, mc_array *src, mc_array *upd, const void *p)
{
    if (s->failed || !src || !upd)
        return NULL;
    mc_array *in[2] = {src, upd};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SLICE_UPDATE, in, 2, p, sizeof(mc_slice_params)));
}

mc_array *mc_gb_scan(mc_gb *s, mc_array *a, int op, int axis, bool reverse, bool inclusive)
{
    if (s->failed || !a)
        return NULL;
    mc_scan_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.axis = axis;
    p.reverse = reverse;
    p.inclusive = inclusive;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SCAN, &a, 1, &p, sizeof p));
}

mc_array *mc_gb_reduce(mc_gb *s, mc_array *a, int kind, const int *sorted, int n)
{
    if (s->failed || !a)
        return NULL;
    return mc_gb_hold(s, mc_node_reduce(a, kind, 0, sorted, n, s->fn));
}

mc_array *mc_gb_sum(mc_gb *s, mc_array *a, const int *sorted, int n)
{
    if (s->failed || !a)
        return NULL;
    return n == 0 ? a : mc_gb_reduce(s, a, MC_RK_SUM, sorted, n);
}

mc_array *mc_gb_sum_to_shape(mc_gb *s, mc_array *a, int ndim, const int *shape)
{
    if (s->failed || !a)
        return NULL;
    if (mc_array_has_shape(a, ndim, shape))
        return a;
    /* a's shape is shape broadcast: `lead` new leading axes, then axes
     * where shape has 1 and a does not */
    int lead = a->ndim - ndim, axes[MC_MAX_NDIM], n = 0;
    for (int d = 0; d < a->ndim; d++)
        if (d < lead || (shape[d - lead] == 1 && a->shape[d] != 1))
            axes[n++] = d;
    mc_array *r = mc_gb_sum(s, a, axes, n);
    return mc_gb_reshape(s, r, ndim, shape);
}

mc_array *mc_gb_zeros(mc_gb *s, int ndim, const int *shape, mlx_dtype dtype)
{
    return mc_gb_broadcast(s, mc_gb_scalar(s, 0.0, dtype), ndim, shape);
}

mc_array *mc_gb_arange(mc_gb *s, int count, mlx_dtype dtype)
{
    if (s->failed)
        return NULL;
    mc_arange_params p;
    memset(&p, 0, sizeof p);
    p.start = 0;
    p.step = 1;
    p.dtype = dtype;
    p.count = count;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_ARANGE, NULL, 0, &p, sizeof p));
}

mc_array *mc_gb_iota(mc_gb *s, int n, int axis, int ndim)
{
    int shape[MC_MAX_NDIM];
    for (int d = 0; d < ndim; d++)
        shape[d] = d == axis ? n : 1;
    return mc_gb_reshape(s, mc_gb_arange(s, n, MLX_INT32), ndim, shape);
}

mc_array *mc_gb_contiguous(mc_gb *s, mc_array *a)
{
    if (s->failed || !a)
        return NULL;
    mc_contiguous_params p;
    memset(&p, 0, sizeof p);
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_CONTIGUOUS, &a, 1, &p, sizeof p));
}

mc_array *mc_gb_gather_axis(mc_gb *s, mc_array *a, mc_array *idx, int axis, int along)
{
    if (s->failed || !a || !idx)
        return NULL;
    mc_gather_axis_params p;
    memset(&p, 0, sizeof p);
    p.axis = axis;
    p.along = along;
    mc_array *in[2] = {a, idx};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_GATHER_AXIS, in, 2, &p, sizeof p));
}

mc_array *mc_gb_scatter_axis(mc_gb *s, mc_array *a, mc_array *idx, mc_array *upd, int axis, int reduce)
{
    if (s->failed || !a || !idx || !upd)
        return NULL;
    mc_scatter_axis_params p;
    memset(&p, 0, sizeof p);
    p.axis = axis;
    p.reduce = reduce;
    mc_array *in[3] = {a, idx, upd};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SCATTER_AXIS, in, 3, &p, sizeof p));
}

mc_array *mc_gb_gather(mc_gb *s, mc_array *a, mc_array *const *idx, int nidx, const int *axes,
                       const int *slice_sizes)
{
    if (s->failed || !a)
        return NULL;
    mc_gather_params p;
    memset(&p, 0, sizeof p);
    p.nidx = nidx;
    mc_array *in[1 + MC_MAX_NDIM];
    in[0] = a;
    for (int j = 0; j < nidx; j++) {
        if (!idx[j])
            return NULL;
        p.axes[j] = axes[j];
        in[1 + j] = idx[j];
    }
    memcpy(p.slice_sizes, slice_sizes, sizeof(int) * (size_t)a->ndim);
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_GATHER, in, 1 + nidx, &p, sizeof p));
}

mc_array *mc_gb_scatter(mc_gb *s, mc_array *a, mc_array *const *idx, int nidx, const int *axes, mc_array *upd,
                        int reduce)
{
    if (s->failed || !a || !upd)
        return NULL;
    mc_scatter_params p;
    memset(&p, 0, sizeof p);
    p.nidx = nidx;
    p.reduce = reduce;
    mc_array *in[2 + MC_MAX_NDIM];
    in[0] = a;
    for (int j = 0; j < nidx; j++) {
        if (!idx[j])
            return NULL;
        p.axes[j] = axes[j];
        in[1 + j] = idx[j];
    }
    in[1 + nidx] = upd;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SCATTER, in, 2 + nidx, &p, sizeof p));
}

mc_array *mc_gb_softmax(mc_gb *s, mc_array *a, const int *sorted, int n, bool precise)
{
    if (s->failed || !a)
        return NULL;
    mc_softmax_params p;
    memset(&p, 0, sizeof p);
    p.n = n;
    memcpy(p.axes, sorted, sizeof(int) * (size_t)n);
    p.precise = precise;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SOFTMAX, &a, 1, &p, sizeof p));
}

int mc_gb_divmod(mc_gb *s, mc_array *x, mc_array *y, mlx_dtype t, mc_array *out[2])
{
    x = mc_gb_astype(s, x, t);
    y = mc_gb_astype(s, y, t);
    mc_array *zero = mc_gb_scalar(s, 0.0, t);
    mc_array *d = mc_gb_binary(s, MC_B_DIVIDE, x, y, t);
    if (mc_dtype_is_float(t)) {
        /* Remainder of the magnitudes is fmod's magnitude (both floor and
         * truncation agree on non-negative operands); the dividend gives
         * the sign. */
        out[0] = mc_gb_where(s, mc_gb_binary(s, MC_B_LESS, d, zero, t), mc_gb_unary(s, MC_U_CEIL, d),
                             mc_gb_unary(s, MC_U_FLOOR, d));
        mc_array *m = mc_gb_binary(s, MC_B_REMAINDER, mc_gb_unary(s, MC_U_ABS, x), mc_gb_unary(s, MC_U_ABS, y), t);
        out[1] = mc_gb_where(s, mc_gb_binary(s, MC_B_LESS, x, zero, t), mc_gb_unary(s, MC_U_NEGATIVE, m), m);
    } else {
        /* Integer Divide already truncates. Remainder takes the divisor's
         * sign: where it is non-zero and the operands' signs differ, C's
         * remainder is it less the divisor (exact, and no abs, which
         * would overflow at the type's minimum). */
        out[0] = d;
        mc_array *r = mc_gb_binary(s, MC_B_REMAINDER, x, y, t);
        mc_array *signs = mc_gb_binary(s, MC_B_NOT_EQUAL, mc_gb_binary(s, MC_B_LESS, r, zero, t),
                                       mc_gb_binary(s, MC_B_LESS, x, zero, t), MLX_BOOL);
        mc_array *adj =
            mc_gb_binary(s, MC_B_LOGICAL_AND, mc_gb_binary(s, MC_B_NOT_EQUAL, r, zero, t), signs, MLX_BOOL);
        out[1] = mc_gb_where(s, adj, mc_gb_binary(s, MC_B_SUBTRACT, r, y, t), r);
    }
    return out[0] && out[1] ? 0 : 1;
}

mc_array *mc_gb_pad_zeros(mc_gb *s, mc_array *a, int axis, int low, int high)
{
    mc_array *zero = a ? mc_gb_scalar(s, 0, a->dtype) : NULL;
    if (!zero)
        return NULL;
    if (low == 0 && high == 0)
        return a;
    mc_pad_params p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    p.axes[0] = axis;
    p.low[0] = low;
    p.high[0] = high;
    mc_array *in[2] = {a, zero};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_PAD, in, 2, &p, sizeof p));
}
