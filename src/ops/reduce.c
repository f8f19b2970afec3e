/* Owns the reduction ops: sum, prod, max, min, all, any, mean, var, std
 * (plain, _axis and _axes forms) and argmax / argmin. Argument checks and
 * dtype rules are MLX's (mlx/ops.cpp): axes are checked in the order
 * given ("Invalid axis"), then for duplicates; a reduction whose reduced
 * dims all have size 1 is a cast (or the input itself); keepdims = false
 * squeezes the reduced dims of the Reduce node's output. var and std of
 * complex64 are composed as MLX composes them: float32, the mean squared
 * magnitude of the deviations. */
#include <string.h>

#include "graph/prims_reduce.h"
#include "ops/ew.h"
#include "ops/reduce_internal.h"
#include "runtime/error.h"

int mc_reduce_axes(const int *axes, size_t n, int ndim, int *sorted, int *count, const char *fn)
{
    if (n && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, n);
    bool seen[MC_MAX_NDIM] = {false};
    bool dup = false;
    for (size_t i = 0; i < n; i++) {
        int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
        if (a < 0 || a >= ndim)
            return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, axes[i], ndim);
        dup |= seen[a];
        seen[a] = true;
    }
    if (dup)
        return mc_error("[%s] Duplicate axes detected in reduction.", fn);
    *count = 0;
    for (int a = 0; a < ndim; a++)
        if (seen[a])
            sorted[(*count)++] = a;
    return 0;
}

mc_array *mc_reduce_finish_keepdims(mc_array *r, const int *sorted, int n, bool keepdims, const char *fn)
{
    if (!r || keepdims || n == 0)
        return r;
    mc_array *s = mc_node_squeeze(r, sorted, n, fn);
    mc_array_release(r);
    return s;
}

/* sum, prod, max, min, all, any. */
static int reduce_op(mlx_array *res, mlx_array a, const int *axes, size_t n, bool keepdims, int kind,
                     const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    /* MLX returns the input itself for no axes (all, any and max cast or
     * reduce nothing, which comes to the same) */
    if (n == 0 && kind != MC_RK_ALL && kind != MC_RK_ANY)
        return mc_op_store(res, mc_array_retain(x), fn);
    int sorted[MC_MAX_NDIM], k;
    if (mc_reduce_axes(axes, n, x->ndim, sorted, &k, fn))
        return 1;
    bool noop = true;
    for (int i = 0; i < k; i++) {
        int d = x->shape[sorted[i]];
        if ((kind == MC_RK_MAX || kind == MC_RK_MIN) && d == 0)
            return mc_error("[%s] Cannot %s reduce over axis %d with size 0.", fn, fn, sorted[i]);
        noop &= d == 1;
    }
    mc_array *out;
    if (!noop)
        out = mc_node_reduce(x, kind, 0, sorted, k, fn);
    else if (kind == MC_RK_MAX || kind == MC_RK_MIN)
        out = mc_array_retain(x);
    else
        out = mc_node_astype(x, mc_reduce_out_dtype(kind, x->dtype), fn);
    return mc_op_store(res, mc_reduce_finish_keepdims(out, sorted, k, keepdims, fn), fn);
}

/* var (kind MC_RK_VAR) or std of complex64 x over the sorted axes, as MLX:
 * d = x - mean(x), v = sum(real(d * conj(d))) in float32, divided by
 * max(N - ddof, 0) when ddof != 0, else times 1/N; std is sqrt(v). */
static int complex_moment(mlx_array *res, mc_array *x, const int *sorted, int k, bool keepdims, int kind,
                          int ddof, const char *fn)
{
    double count = 1;
    for (int i = 0; i < k; i++)
        count *= x->shape[sorted[i]];
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *mu = mc_gb_hold(&s, mc_node_reduce(x, MC_RK_MEAN, 0, sorted, k, fn));
    mc_array *d = mc_gb_binary(&s, MC_B_SUBTRACT, x, mu, MLX_COMPLEX64);
    mc_array *dd = mc_gb_binary(&s, MC_B_MULTIPLY, d, mc_gb_unary(&s, MC_U_CONJUGATE, d), MLX_COMPLEX64);
    mc_array *sq = mc_gb_unary(&s, MC_U_REAL, dd);
    mc_array *v = sq ? mc_gb_hold(&s, mc_node_reduce(sq, MC_RK_SUM, 0, sorted, k, fn)) : NULL;
    if (ddof != 0) {
        float n = (float)count - (float)ddof; /* float32 arithmetic, as MLX */
        v = mc_gb_binary(&s, MC_B_DIVIDE, v, mc_gb_scalar(&s, n > 0 ? n : 0, MLX_FLOAT32), MLX_FLOAT32);
    } else {
        v = mc_gb_binary(&s, MC_B_MULTIPLY, v, mc_gb_scalar(&s, 1.0 / count, MLX_FLOAT32), MLX_FLOAT32);
    }
    if (kind != MC_RK_VAR)
        v = mc_gb_unary(&s, MC_U_SQRT, v);
    mc_array *out = v ? mc_reduce_finish_keepdims(mc_array_retain(v), sorted, k, keepdims, fn) : NULL;
    return mc_ew_finish(&s, res, mc_gb_hold(&s, out));
}

/* mean, var, std: axes checked as MLX's mean does, then duplicates. */
static int moment_op(mlx_array *res, mlx_array a, const int *axes, size_t n, bool keepdims, int kind, int ddof,
                     const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (n && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, n);
    for (size_t i = 0; i < n; i++)
        if (axes[i] < -x->ndim || axes[i] >= x->ndim)
            return mc_error("[%s] axis %d is out of bounds for array with %d dimensions.", fn, axes[i], x->ndim);
    int sorted[MC_MAX_NDIM], k;
    if (mc_reduce_axes(axes, n, x->ndim, sorted, &k, fn))
        return 1;
    if (kind != MC_RK_MEAN && x->dtype == MLX_COMPLEX64)
        return complex_moment(res, x, sorted, k, keepdims, kind, ddof, fn);
    mlx_dtype dt = mc_at_least_float(x->dtype);
    mc_array *out = NULL;
    if (kind == MC_RK_MEAN) {
        bool noop = true;
        for (int i = 0; i < k; i++)
            noop &= x->shape[sorted[i]] == 1;
        out = noop ? mc_node_astype(x, dt, fn) : mc_node_reduce(x, kind, 0, sorted, k, fn);
    } else {
        mc_array *xf = mc_node_astype(x, dt, fn);
        if (xf)
            out = mc_node_reduce(xf, kind, ddof, sorted, k, fn);
        mc_array_release(xf);
    }
    return mc_op_store(res, mc_reduce_finish_keepdims(out, sorted, k, keepdims, fn), fn);
}

/* The plain forms reduce over every axis of a. */
static int reduce_all(mlx_array *res, mlx_array a, bool keepdims, int kind, const char *fn)
{
    int axes[MC_MAX_NDIM];
    size_t n = mc_reduce_all_axes(mc_arr(a), axes);
    return reduce_op(res, a, axes, n, keepdims, kind, fn);
}

static int moment_all(mlx_array *res, mlx_array a, bool keepdims, int kind, int ddof, const char *fn)
{
    int axes[MC_MAX_NDIM];
    size_t n = mc_reduce_all_axes(mc_arr(a), axes);
    return moment_op(res, a, axes, n, keepdims, kind, ddof, fn);
}

int mlx_sum(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_all(res, a, keepdims, MC_RK_SUM, "sum");
}

int mlx_sum_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, &axis, 1, keepdims, MC_RK_SUM, "sum");
}

int mlx_sum_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, axes, axes_num, keepdims, MC_RK_SUM, "sum");
}

int mlx_prod(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_all(res, a, keepdims, MC_RK_PROD, "prod");
}

int mlx_prod_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, &axis, 1, keepdims, MC_RK_PROD, "prod");
}

int mlx_prod_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, axes, axes_num, keepdims, MC_RK_PROD, "prod");
}

int mlx_max(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_all(res, a, keepdims, MC_RK_MAX, "max");
}

int mlx_max_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, &axis, 1, keepdims, MC_RK_MAX, "max");
}

int mlx_max_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, axes, axes_num, keepdims, MC_RK_MAX, "max");
}

int mlx_min(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_all(res, a, keepdims, MC_RK_MIN, "min");
}

int mlx_min_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, &axis, 1, keepdims, MC_RK_MIN, "min");
}

int mlx_min_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, axes, axes_num, keepdims, MC_RK_MIN, "min");
}

int mlx_all(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_all(res, a, keepdims, MC_RK_ALL, "all");
}

int mlx_all_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, &axis, 1, keepdims, MC_RK_ALL, "all");
}

int mlx_all_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, axes, axes_num, keepdims, MC_RK_ALL, "all");
}

int mlx_any(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_all(res, a, keepdims, MC_RK_ANY, "any");
}

int mlx_any_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, &axis, 1, keepdims, MC_RK_ANY, "any");
}

int mlx_any_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return reduce_op(res, a, axes, axes_num, keepdims, MC_RK_ANY, "any");
}

int mlx_mean(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_all(res, a, keepdims, MC_RK_MEAN, 0, "mean");
}

int mlx_mean_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_op(res, a, &axis, 1, keepdims, MC_RK_MEAN, 0, "mean");
}

int mlx_mean_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_op(res, a, axes, axes_num, keepdims, MC_RK_MEAN, 0, "mean");
}

int mlx_var(mlx_array *res, const mlx_array a, bool keepdims, int ddof, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_all(res, a, keepdims, MC_RK_VAR, ddof, "var");
}

int mlx_var_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, int ddof, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_op(res, a, &axis, 1, keepdims, MC_RK_VAR, ddof, "var");
}

int mlx_var_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims, int ddof,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_op(res, a, axes, axes_num, keepdims, MC_RK_VAR, ddof, "var");
}

int mlx_std(mlx_array *res, const mlx_array a, bool keepdims, int ddof, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_all(res, a, keepdims, MC_RK_STD, ddof, "std");
}

int mlx_std_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, int ddof, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_op(res, a, &axis, 1, keepdims, MC_RK_STD, ddof, "std");
}

int mlx_std_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims, int ddof,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return moment_op(res, a, axes, axes_num, keepdims, MC_RK_STD, ddof, "std");
}

/* ---- argmax / argmin ---- */

static mc_array *arg_node(mc_array *x, int op, int axis, const char *fn)
{
    mc_argreduce_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.axis = axis;
    return mc_node_new(fn, MC_PRIM_ARGREDUCE, &x, 1, &p, sizeof p);
}

static int arg_axis(mlx_array *res, mlx_array a, int axis, bool keepdims, int op, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->size == 0)
        return mc_error("[%s] Cannot %s reduce zero size array.", fn, fn);
    int ax, k;
    if (mc_reduce_axes(&axis, 1, x->ndim, &ax, &k, fn))
        return 1;
    mc_array *out = arg_node(x, op, ax, fn);
    return mc_op_store(res, mc_reduce_finish_keepdims(out, &ax, 1, keepdims, fn), fn);
}

/* Over the flattened array: the index into it, shaped () or (1,...,1). */
static int arg_all(mlx_array *res, mlx_array a, bool keepdims, int op, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->size == 0)
        return mc_error("[%s] Cannot %s reduce zero size array.", fn, fn);
    int ones[MC_MAX_NDIM];
    for (int i = 0; i < x->ndim; i++)
        ones[i] = 1;
    mc_array *flat = mc_sh_flatten(x, 0, x->ndim > 0 ? x->ndim - 1 : 0, fn);
    mc_array *r = flat ? arg_node(flat, op, 0, fn) : NULL;
    mc_array *out = r ? mc_node_reshape(r, keepdims ? x->ndim : 0, ones, fn) : NULL;
    mc_array_release(flat);
    mc_array_release(r);
    return mc_op_store(res, out, fn);
}

int mlx_argmax(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return arg_all(res, a, keepdims, 0, "argmax");
}

int mlx_argmax_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return arg_axis(res, a, axis, keepdims, 0, "argmax");
}

int mlx_argmin(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return arg_all(res, a, keepdims, 1, "argmin");
}

int mlx_argmin_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return arg_axis(res, a, axis, keepdims, 1, "argmin");
}
