/* Owns the diagonal and triangle ops: diag, diagonal, trace, tri, tril,
 * triu, and the small constant builders (scalars, aranges, masks) they
 * and the other shape ops share. */
#include <limits.h>
#include <string.h>

#include "graph/prims_binary.h"
#include "graph/prims_create.h"
#include "graph/prims_index.h"
#include "graph/prims_slice.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

mc_array *mc_sh_scalar(double v, mlx_dtype dtype, const char *fn)
{
    mc_array *a = mc_array_alloc(fn, dtype, 0, NULL);
    if (!a)
        return NULL;
    if (mc_array_alloc_data(a, fn)) {
        mc_array_release(a);
        return NULL;
    }
    mc_kernels()->convert[MLX_FLOAT64][dtype](&v, a->data, 1);
    return a;
}

mc_array *mc_sh_arange(double start, int count, mlx_dtype dtype, const char *fn)
{
    mc_arange_params p;
    memset(&p, 0, sizeof p);
    p.start = start;
    p.step = 1;
    p.dtype = dtype;
    p.count = count;
    return mc_node_new(fn, MC_PRIM_ARANGE, NULL, 0, &p, sizeof p);
}

mc_array *mc_sh_tri_mask(int n, int m, int64_t k, bool diagonal_only, const char *fn)
{
    /* rows i + k as a column against columns j as a row, in 64 bits so
     * that no k overflows */
    int rs[2] = {n, 1}, cs[2] = {1, m};
    mc_array *r0 = mc_sh_arange((double)k, n, MLX_INT64, fn);
    mc_array *c0 = r0 ? mc_sh_arange(0, m, MLX_INT64, fn) : NULL;
    mc_array *in[2] = {NULL, NULL};
    mc_array *out = NULL;
    if (!c0)
        goto done;
    in[0] = mc_node_reshape(r0, 2, rs, fn);
    in[1] = in[0] ? mc_node_reshape(c0, 2, cs, fn) : NULL;
    if (!in[1])
        goto done;
    mc_binary_params p = {diagonal_only ? MC_B_EQUAL : MC_B_GREATER_EQUAL};
    out = mc_node_new(fn, MC_PRIM_BINARY, in, 2, &p, sizeof p);
done:
    mc_array_release(r0);
    mc_array_release(c0);
    mc_array_release(in[0]);
    mc_array_release(in[1]);
    return out;
}

int mlx_tri(mlx_array *res, int n, int m, int k, mlx_dtype type, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "tri";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(type, fn))
        return 1;
    if (n < 0 || m < 0)
        return mc_error("[%s] N and M must be non-negative (got N=%d, M=%d).", fn, n, m);
    mc_array *mask = mc_sh_tri_mask(n, m, k, false, fn);
    mc_array *out = mask ? mc_node_astype(mask, type, fn) : NULL;
    mc_array_release(mask);
    return mc_op_store(res, out, fn);
}

/* tril keeps j <= i + k; triu keeps j >= i + k, i.e. zeroes j <= i + k - 1. */
static int triangle(mlx_array *res, mlx_array xh, int k, bool lower, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(xh, fn, "x");
    if (!x)
        return 1;
    if (x->ndim < 2)
        return mc_error("[%s] array must be at least 2-D (got %d dimensions).", fn, x->ndim);
    int64_t kk = lower ? k : (int64_t)k - 1;
    mc_array *mask = mc_sh_tri_mask(x->shape[x->ndim - 2], x->shape[x->ndim - 1], kk, false, fn);
    mc_array *zero = mask ? mc_sh_scalar(0, x->dtype, fn) : NULL;
    mc_array *out = zero ? (lower ? mc_sh_where(mask, x, zero, fn) : mc_sh_where(mask, zero, x, fn)) : NULL;
    mc_array_release(mask);
    mc_array_release(zero);
    return mc_op_store(res, out, fn);
}

int mlx_tril(mlx_array *res, const mlx_array x, int k, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return triangle(res, x, k, true, "tril");
}

int mlx_triu(mlx_array *res, const mlx_array x, int k, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return triangle(res, x, k, false, "triu");
}

/* The diagonal view after MLX's checks, which name the two axes apart. */
static mc_array *diagonal(mc_array *x, int offset, int axis1, int axis2, const char *fn)
{
    int nd = x->ndim;
    if (nd < 2) {
        mc_error("[%s] Array must have at least two dimensions, but got %d dimensions.", fn, nd);
        return NULL;
    }
    int a1 = axis1 < 0 ? axis1 + nd : axis1, a2 = axis2 < 0 ? axis2 + nd : axis2;
    if (a1 < 0 || a1 >= nd) {
        mc_error("[%s] Invalid axis1 %d for array with %d dimensions.", fn, axis1, nd);
        return NULL;
    }
    if (a2 < 0 || a2 >= nd) {
        mc_error("[%s] Invalid axis2 %d for array with %d dimensions.", fn, axis2, nd);
        return NULL;
    }
    if (a1 == a2) {
        mc_error("[%s] axis1 and axis2 cannot be the same axis.", fn);
        return NULL;
    }
    mc_diagonal_params p;
    memset(&p, 0, sizeof p);
    p.offset = offset;
    p.axis1 = a1;
    p.axis2 = a2;
    return mc_node_new(fn, MC_PRIM_DIAGONAL, &x, 1, &p, sizeof p);
}

int mlx_diagonal(mlx_array *res, const mlx_array a, int offset, int axis1, int axis2, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "diagonal";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    return mc_op_store(res, diagonal(x, offset, axis1, axis2, fn), fn);
}

/* diag of a vector: where(j == i + k, v padded to n along the right axis, 0).
 * For k >= 0 element (r, r + k) is v[r]: v is a column; for k < 0 element
 * (c - k, c) is v[c]: v is a row. */
static mc_array *diag_matrix(mc_array *v, int k, const char *fn)
{
    int64_t ak = k < 0 ? -(int64_t)k : k;
    int64_t n64 = (int64_t)v->size + ak;
    if (n64 > INT_MAX) {
        mc_error("[%s] The result would have %lld rows, more than a dimension holds.", fn, (long long)n64);
        return NULL;
    }
    int n = (int)n64;
    mc_array *zero = mc_sh_scalar(0, v->dtype, fn);
    if (!zero)
        return NULL;
    mc_pad_params pp;
    memset(&pp, 0, sizeof pp);
    pp.n = 1;
    pp.axes[0] = 0;
    pp.high[0] = (int)ak;
    mc_array *pin[2] = {v, zero};
    mc_array *padded = mc_node_new(fn, MC_PRIM_PAD, pin, 2, &pp, sizeof pp);
    int col[2] = {n, 1}, row[2] = {1, n};
    mc_array *shaped = padded ? mc_node_reshape(padded, 2, k >= 0 ? col : row, fn) : NULL;
    mc_array *mask = shaped ? mc_sh_tri_mask(n, n, k, true, fn) : NULL;
    mc_array *out = mask ? mc_sh_where(mask, shaped, zero, fn) : NULL;
    mc_array_release(zero);
    mc_array_release(padded);
    mc_array_release(shaped);
    mc_array_release(mask);
    return out;
}

int mlx_diag(mlx_array *res, const mlx_array a, int k, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "diag";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->ndim == 1)
        return mc_op_store(res, diag_matrix(x, k, fn), fn);
    if (x->ndim == 2)
        return mc_op_store(res, diagonal(x, k, 0, 1, fn), fn);
    return mc_error("[%s] array must be 1-D or 2-D, got array with %d dimensions.", fn, x->ndim);
}

int mlx_trace(mlx_array *res, const mlx_array a, int offset, int axis1, int axis2, mlx_dtype dtype,
              const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "trace";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    mc_array *d = diagonal(x, offset, axis1, axis2, fn);
    mc_array *c = d ? mc_node_astype(d, dtype, fn) : NULL;
    mc_array_release(d);
    if (!c)
        return 1;
    /* the reduction accepts these checked arguments, so its own name
     * never appears in a message */
    mlx_array out = mlx_array_new();
    int rc = mlx_sum_axis(&out, mc_handle(c), -1, false, s);
    mc_array_release(c);
    if (rc)
        return 1;
    return mc_op_store(res, mc_arr(out), fn);
}
