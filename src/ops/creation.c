/* Owns the creation ops: zeros, ones, full, their _like forms, arange,
 * linspace, eye and identity. */
#include <math.h>
#include <limits.h>
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_binary.h"
#include "graph/prims_copy.h"
#include "graph/prims_create.h"
#include "ops/op_util.h"
#include "runtime/error.h"

/* MLX's full: the value broadcast to the shape, then materialised (a Copy
 * node), converted to dtype. */
static mc_array *mc_full(const int *shape, int ndim, mc_array *vals, mlx_dtype dtype, const char *fn)
{
    mc_array *v = mc_node_astype(vals, dtype, fn);
    if (!v)
        return NULL;
    mc_array *b = mc_node_broadcast(v, ndim, shape, fn);
    mc_array_release(v);
    if (!b)
        return NULL;
    mc_astype_params p = {dtype};
    mc_array *out = mc_node_new(fn, MC_PRIM_COPY, &b, 1, &p, sizeof p);
    mc_array_release(b);
    return out;
}

static int mc_full_scalar(mlx_array *res, const int *shape, size_t num, double value, mlx_dtype dtype,
                          const char *fn)
{
    if (mc_op_check_res(res, fn) || mc_op_check_shape(shape, num, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *v = mc_array_scalar(fn, MLX_FLOAT64, &value);
    if (!v)
        return 1;
    mc_array *out = mc_full(shape, (int)num, v, dtype, fn);
    mc_array_release(v);
    return mc_op_store(res, out, fn);
}

int mlx_zeros(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mc_full_scalar(res, shape, shape_num, 0.0, dtype, "zeros");
}

int mlx_ones(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mc_full_scalar(res, shape, shape_num, 1.0, dtype, "ones");
}

int mlx_full(mlx_array *res, const int *shape, size_t shape_num, const mlx_array vals, mlx_dtype dtype,
             const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "full";
    if (mc_op_check_res(res, fn) || mc_op_check_shape(shape, shape_num, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *v = mc_op_arg(vals, fn, "vals");
    if (!v)
        return 1;
    return mc_op_store(res, mc_full(shape, (int)shape_num, v, dtype, fn), fn);
}

static int mc_full_like(mlx_array *res, mlx_array a, mc_array *v, mlx_dtype dtype, const char *fn)
{
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    /* MLX broadcasts a and vals against each other; the value decides
     * nothing of the shape unless it has more dimensions */
    int nd;
    int shape[MC_MAX_NDIM];
    if (mc_broadcast_shapes(x->ndim, x->shape, v->ndim, v->shape, &nd, shape, fn))
        return 1;
    return mc_op_store(res, mc_full(shape, nd, v, dtype, fn), fn);
}

int mlx_zeros_like(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "zeros_like";
    if (mc_op_check_res(res, fn) || !mc_op_arg(a, fn, "a"))
        return 1;
    double zero = 0;
    mc_array *v = mc_array_scalar(fn, MLX_FLOAT64, &zero);
    if (!v)
        return 1;
    int rc = mc_full_like(res, a, v, mc_arr(a)->dtype, fn);
    mc_array_release(v);
    return rc;
}

int mlx_ones_like(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "ones_like";
    if (mc_op_check_res(res, fn) || !mc_op_arg(a, fn, "a"))
        return 1;
    double one = 1;
    mc_array *v = mc_array_scalar(fn, MLX_FLOAT64, &one);
    if (!v)
        return 1;
    int rc = mc_full_like(res, a, v, mc_arr(a)->dtype, fn);
    mc_array_release(v);
    return rc;
}

int mlx_full_like(mlx_array *res, const mlx_array a, const mlx_array vals, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "full_like";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *v = mc_op_arg(vals, fn, "vals");
    if (!v)
        return 1;
    return mc_full_like(res, a, v, dtype, fn);
}

static mc_array *mc_arange(double start, double stop, double step, mlx_dtype dtype, const char *fn)
{
    if (dtype == MLX_BOOL) {
        mc_error("[%s] bool not supported for arange.", fn);
        return NULL;
    }
    if (dtype == MLX_COMPLEX64) {
        mc_error("[%s] complex64 not supported for arange.", fn);
        return NULL;
    }
    if (isnan(start) || isnan(stop) || isnan(step) || isinf(start) || isinf(stop)) {
        mc_error("[%s] Cannot compute length.", fn);
        return NULL;
    }
    if (step == 0) {
        mc_error("[%s] step must be nonzero.", fn);
        return NULL;
    }
    double real = isinf(step) ? ((step > 0) == (start < stop) ? 1 : 0) : ceil((stop - start) / step);
    if (real > INT_MAX) {
        mc_error("[%s] Maximum size exceeded.", fn);
        return NULL;
    }
    mc_arange_params p;
    memset(&p, 0, sizeof p);
    p.start = start;
    p.step = isinf(step) ? 0 : step;
    p.dtype = dtype;
    p.count = real > 0 ? (int)real : 0;
    return mc_node_new(fn, MC_PRIM_ARANGE, NULL, 0, &p, sizeof p);
}

int mlx_arange(mlx_array *res, double start, double stop, double step, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "arange";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    return mc_op_store(res, mc_arange(start, stop, step, dtype, fn), fn);
}

int mlx_linspace(mlx_array *res, double start, double stop, int num, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linspace";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    if (num < 0)
        return mc_error("[%s] number of samples, %d, must be non-negative.", fn, num);
    /* sample i is start + i * (stop - start) / (num - 1), computed as MLX
     * does: (1 - t) * start + t * stop with t = i / (num - 1) */
    mlx_dtype inner = dtype == MLX_FLOAT64 ? MLX_FLOAT64 : MLX_FLOAT32;
    if (num == 1) {
        mc_array *v = mc_array_scalar(fn, MLX_FLOAT64, &start);
        if (!v)
            return 1;
        int one = 1;
        mc_array *out = mc_full(&one, 1, v, dtype, fn);
        mc_array_release(v);
        return mc_op_store(res, out, fn);
    }
    mlx_array t = mlx_array_new(), tb = mlx_array_new(), a = mlx_array_new(), b = mlx_array_new();
    mlx_array den = mlx_array_new(), one = mlx_array_new(), vs = mlx_array_new(), ve = mlx_array_new();
    mlx_array idx = {mc_arange(0, num, 1, inner, fn)};
    int rc = !idx.ctx;
    double dn = num - 1, d1 = 1;
    rc = rc || mlx_array_set_double(&den, dn) || mlx_array_set_double(&one, d1) ||
         mlx_array_set_double(&vs, start) || mlx_array_set_double(&ve, stop);
    rc = rc || mlx_astype(&den, den, inner, s) || mlx_astype(&one, one, inner, s) ||
         mlx_astype(&vs, vs, inner, s) || mlx_astype(&ve, ve, inner, s);
    rc = rc || mlx_divide(&t, idx, den, s) || mlx_subtract(&tb, one, t, s) || mlx_multiply(&a, tb, vs, s) ||
         mlx_multiply(&b, t, ve, s) || mlx_add(&a, a, b, s) || mlx_astype(&a, a, dtype, s);
    if (!rc)
        rc = mlx_array_set(res, a);
    mlx_array hs[] = {t, tb, a, b, den, one, vs, ve, idx};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        mlx_array_free(hs[i]);
    return rc;
}

/* MLX's eye: row i has its one at column i + k. A column of row indices
 * (shifted by k) is compared with a row of column indices, and the
 * comparison (already dense) converted to dtype. Built from nodes named
 * after fn, so a failure names the function the user called. */
static int eye(mlx_array *res, int n, int m, int k, mlx_dtype dtype, const char *fn)
{
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    if (n < 0 || m < 0)
        return mc_error("[%s] N and M must be positive integers (got N=%d, M=%d).", fn, n, m);
    int rs[2] = {n, 1}, cs[2] = {1, m};
    mc_array *r0 = mc_arange(k, (double)n + k, 1, MLX_INT32, fn);
    mc_array *c0 = r0 ? mc_arange(0, m, 1, MLX_INT32, fn) : NULL;
    mc_array *in[2] = {r0 ? mc_node_reshape(r0, 2, rs, fn) : NULL, NULL};
    in[1] = in[0] && c0 ? mc_node_reshape(c0, 2, cs, fn) : NULL;
    mc_array *eq = NULL, *out = NULL;
    if (in[1]) {
        mc_binary_params p = {MC_B_EQUAL};
        eq = mc_node_new(fn, MC_PRIM_BINARY, in, 2, &p, sizeof p);
    }
    if (eq)
        out = mc_node_astype(eq, dtype, fn);
    mc_array *held[5] = {r0, c0, in[0], in[1], eq};
    for (int i = 0; i < 5; i++)
        if (held[i])
            mc_array_release(held[i]);
    return mc_op_store(res, out, fn);
}

int mlx_eye(mlx_array *res, int n, int m, int k, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return eye(res, n, m, k, dtype, "eye");
}

int mlx_identity(mlx_array *res, int n, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return eye(res, n, n, 0, dtype, "identity");
}
