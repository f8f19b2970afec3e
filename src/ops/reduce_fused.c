/* Owns the ops backed by fused row kernels: logsumexp and softmax (plain,
 * _axis and _axes forms). MLX (mlx/ops.cpp) runs its fused primitive only
 * for the last axis and composes max/exp/sum otherwise; ours is fused for
 * any axes, with MLX's results: the input is cast to at least float32,
 * logsumexp gives max where max is infinite, and a softmax that MLX would
 * compose (axes other than the trailing ones) is cast back to the input's
 * dtype, as MLX's composition does. complex64 takes MLX's composition of
 * max, exp, sum and log (max orders complex values lexicographically). */
#include <string.h>

#include "graph/prims_reduce.h"
#include "ops/ew.h"
#include "ops/reduce_internal.h"
#include "runtime/error.h"

static mc_array *fused_node(int prim, mc_array *x, const int *sorted, int n, bool precise, const char *fn)
{
    mc_softmax_params p;
    memset(&p, 0, sizeof p);
    p.n = n;
    memcpy(p.axes, sorted, sizeof(int) * (size_t)n);
    p.precise = precise;
    return mc_node_new(fn, prim, &x, 1, &p, sizeof p);
}

/* logsumexp of complex64 x over the sorted axes, as MLX composes it:
 * m = max(x), log(sum(exp(x - m))) + m, or m itself where m is infinite. */
/* The steps logsumexp and softmax of complex64 share, in scope s: m =
 * max(x) and e = exp(x - m) (returned), and their sum over the sorted axes
 * (dims kept). */
static mc_array *complex_exp_shifted(mc_gb *s, mc_array *x, const int *sorted, int k, mc_array **m,
                                     mc_array **sum)
{
    *m = mc_gb_hold(s, mc_node_reduce(x, MC_RK_MAX, 0, sorted, k, s->fn));
    mc_array *e = mc_gb_unary(s, MC_U_EXP, mc_gb_binary(s, MC_B_SUBTRACT, x, *m, MLX_COMPLEX64));
    *sum = e ? mc_gb_hold(s, mc_node_reduce(e, MC_RK_SUM, 0, sorted, k, s->fn)) : NULL;
    return e;
}

static int complex_logsumexp(mlx_array *res, mc_array *x, const int *sorted, int k, bool keepdims,
                             const char *fn)
{
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *m, *sum;
    complex_exp_shifted(&s, x, sorted, k, &m, &sum);
    mc_array *out = mc_gb_binary(&s, MC_B_ADD, mc_gb_unary(&s, MC_U_LOG, sum), m, MLX_COMPLEX64);
    out = mc_gb_where(&s, mc_ew_float_class(&s, MC_U_ISINF, m), m, out);
    out = out ? mc_reduce_finish_keepdims(mc_array_retain(out), sorted, k, keepdims, fn) : NULL;
    return mc_ew_finish(&s, res, mc_gb_hold(&s, out));
}

static int logsumexp_op(mlx_array *res, mlx_array a, const int *axes, size_t n, bool keepdims)
{
    static const char fn[] = "logsumexp";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->size == 0)
        return mc_error("[%s] Received empty array.", fn);
    if (x->ndim == 0 && n > 0)
        return mc_error("[%s] Received non-empty axes for array with 0 dimensions.", fn);
    int sorted[MC_MAX_NDIM], k;
    if (mc_reduce_axes(axes, n, x->ndim, sorted, &k, fn))
        return 1;
    if (x->dtype == MLX_COMPLEX64)
        return complex_logsumexp(res, x, sorted, k, keepdims, fn);
    mc_array *xf = mc_node_astype(x, mc_at_least_float(x->dtype), fn);
    mc_array *out = xf ? fused_node(MC_PRIM_LOGSUMEXP, xf, sorted, k, false, fn) : NULL;
    mc_array_release(xf);
    return mc_op_store(res, mc_reduce_finish_keepdims(out, sorted, k, keepdims, fn), fn);
}

int mlx_logsumexp(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    int axes[MC_MAX_NDIM];
    return logsumexp_op(res, a, axes, mc_reduce_all_axes(mc_arr(a), axes), keepdims);
}

int mlx_logsumexp_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return logsumexp_op(res, a, &axis, 1, keepdims);
}

int mlx_logsumexp_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                       const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return logsumexp_op(res, a, axes, axes_num, keepdims);
}

/* MLX's test for its fused softmax, on the axes as given: the last one is
 * the last dim, and any before it are consecutive dims of size 1. */
static bool softmax_last_dim(const mc_array *x, const int *axes, size_t n)
{
    if (n == 0 || (axes[n - 1] != x->ndim - 1 && axes[n - 1] != -1))
        return false;
    for (size_t i = n - 1; i-- > 0;) {
        int d = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (axes[i] + 1 != axes[i + 1] || d < 0 || d >= x->ndim || x->shape[d] != 1)
            return false;
    }
    return true;
}

/* softmax of complex64 x over the sorted axes, as MLX composes it (precise
 * has no effect): e = exp(x - max(x)), e / sum(e). */
static int complex_softmax(mlx_array *res, mc_array *x, const int *sorted, int k, const char *fn)
{
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *m, *sum;
    mc_array *e = complex_exp_shifted(&s, x, sorted, k, &m, &sum);
    return mc_ew_finish(&s, res, mc_gb_binary(&s, MC_B_DIVIDE, e, sum, MLX_COMPLEX64));
}

static int softmax_op(mlx_array *res, mlx_array a, const int *axes, size_t n, bool precise)
{
    static const char fn[] = "softmax";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->size == 0)
        return mc_op_store(res, mc_array_retain(x), fn);
    if (x->ndim == 0 && n > 0)
        return mc_error("[%s] Received non-empty axes for array with 0 dimensions.", fn);
    if (n && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, n);
    int sorted[MC_MAX_NDIM], k;
    if (mc_reduce_axes(axes, n, x->ndim, sorted, &k, fn))
        return 1;
    if (x->dtype == MLX_COMPLEX64)
        return complex_softmax(res, x, sorted, k, fn);
    bool fused = softmax_last_dim(x, axes, n);
    mc_array *xf = mc_node_astype(x, mc_at_least_float(x->dtype), fn);
    mc_array *y = xf ? fused_node(MC_PRIM_SOFTMAX, xf, sorted, k, precise, fn) : NULL;
    mc_array *out = !y ? NULL : fused ? mc_array_retain(y) : mc_node_astype(y, x->dtype, fn);
    mc_array_release(xf);
    mc_array_release(y);
    return mc_op_store(res, out, fn);
}

int mlx_softmax(mlx_array *res, const mlx_array a, bool precise, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    int axes[MC_MAX_NDIM];
    return softmax_op(res, a, axes, mc_reduce_all_axes(mc_arr(a), axes), precise);
}

int mlx_softmax_axis(mlx_array *res, const mlx_array a, int axis, bool precise, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return softmax_op(res, a, &axis, 1, precise);
}

int mlx_softmax_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool precise,
                     const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return softmax_op(res, a, axes, axes_num, precise);
}
