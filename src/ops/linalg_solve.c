/* Owns the linalg ops that MLX composes from the factorizations: solve
 * (lu, then two triangular solves), solve_triangular (tri_inv @ b), pinv
 * (from svd) and cholesky_inv (from tri_inv), in MLX's steps, so results
 * and gradients (through matmul, take_along_axis...) are MLX's. */
#include <float.h>

#include "ops/linalg_internal.h"
#include "ops/op_util.h"
#include "runtime/error.h"

static int validate_solve(mlx_array a, mlx_array b, const char *fn)
{
    char sa[160], sb[160];
    mc_array *x = mc_op_arg(a, fn, "a"), *y = x ? mc_op_arg(b, fn, "b") : NULL;
    if (!y)
        return 1;
    if (x->ndim < 2)
        return mc_error("[%s] First input must have >= 2 dimensions. Received array with %d dimensions.", fn,
                        x->ndim);
    if (y->ndim < 1)
        return mc_error("[%s] Second input must have >= 1 dimensions. Received array with %d dimensions.", fn,
                        y->ndim);
    mc_shape_str(sa, sizeof sa, x->ndim, x->shape);
    mc_shape_str(sb, sizeof sb, y->ndim, y->shape);
    if (x->shape[x->ndim - 1] != x->shape[x->ndim - 2])
        return mc_error("[%s] First input must be a square matrix. Received array with shape %s.", fn, sa);
    int last = y->ndim > 1 ? y->ndim - 2 : y->ndim - 1;
    if (x->shape[x->ndim - 1] != y->shape[last])
        return mc_error("[%s] Last dimension of first input with shape %s must match second to last dimension of "
                        "second input with shape %s.", fn, sa, sb);
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (t != MLX_FLOAT32 && t != MLX_FLOAT64)
        return mc_error("[%s] Input arrays must promote to float32 or float64.  Received arrays with type %s and %s.",
                        fn, mc_dtype_name(x->dtype), mc_dtype_name(y->dtype));
    return 0;
}

int mlx_linalg_solve_triangular(mlx_array *res, const mlx_array a, const mlx_array b, bool upper,
                                const mlx_stream s)
{
    static const char fn[] = "linalg::solve_triangular";
    if (mc_op_check_res(res, fn) || validate_solve(a, b, fn))
        return 1;
    mlx_array inv = mlx_array_new();
    int rc = mlx_linalg_tri_inv(&inv, a, upper, s) || mlx_matmul(res, inv, b, s);
    mlx_array_free(inv);
    return rc;
}

int mlx_linalg_solve(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    static const char fn[] = "linalg::solve";
    if (mc_op_check_res(res, fn) || validate_solve(a, b, fn))
        return 1;
    mlx_vector_array plu = mlx_vector_array_new();
    mlx_array p = mlx_array_new(), l = mlx_array_new(), u = mlx_array_new(), perm = mlx_array_new();
    mlx_array pb = mlx_array_new(), y = mlx_array_new();
    bool matrix_b = mc_arr(b)->ndim >= 2;
    /* a = P L U with a[i] = (L U)[P[i]], so b is gathered at argsort(P) */
    int rc = mlx_linalg_lu(&plu, a, s) || mlx_vector_array_get(&p, plu, 0) || mlx_vector_array_get(&l, plu, 1) ||
             mlx_vector_array_get(&u, plu, 2) || mlx_argsort_axis(&perm, p, -1, s) ||
             (matrix_b && mlx_expand_dims(&perm, perm, -1, s)) ||
             mlx_take_along_axis(&pb, b, perm, matrix_b ? -2 : -1, s) ||
             mlx_linalg_solve_triangular(&y, l, pb, false, s) || mlx_linalg_solve_triangular(res, u, y, true, s);
    mlx_vector_array_free(plu);
    mlx_array_free(p), mlx_array_free(l), mlx_array_free(u), mlx_array_free(perm);
    mlx_array_free(pb), mlx_array_free(y);
    return rc;
}

int mlx_linalg_cholesky_inv(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s)
{
    static const char fn[] = "linalg::cholesky_inv";
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res, fn) || !x || mc_la_check_float(x, false, fn) || mc_la_check_ndim(x, fn))
        return 1;
    if (x->shape[x->ndim - 1] != x->shape[x->ndim - 2])
        return mc_error("[%s] Cholesky inverse is only defined for square matrices.", fn);
    mlx_array inv = mlx_array_new(), t = mlx_array_new();
    int rc = mlx_linalg_tri_inv(&inv, a, upper, s) || mlx_swapaxes(&t, inv, -1, -2, s) ||
             (upper ? mlx_matmul(res, inv, t, s) : mlx_matmul(res, t, inv, s));
    mlx_array_free(inv), mlx_array_free(t);
    return rc;
}

int mlx_linalg_pinv(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    static const char fn[] = "linalg::pinv";
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res, fn) || !x || mc_la_check_float(x, false, fn))
        return 1;
    if (x->ndim < 2)
        return mc_error("[%s] Arrays must have >= 2 dimensions. Received array with %d dimensions.", fn, x->ndim);
    int nd = x->ndim, m = x->shape[nd - 2], n = x->shape[nd - 1], k = m < n ? m : n;
    int start[MC_MAX_NDIM] = {0}, stop[MC_MAX_NDIM], str[MC_MAX_NDIM];
    for (int i = 0; i < nd; i++)
        stop[i] = x->shape[i], str[i] = 1;
    double eps = x->dtype == MLX_FLOAT64 ? DBL_EPSILON : (double)FLT_EPSILON;
    double rcond = 10.0 * (m > n ? m : n) * eps;
    mlx_vector_array usv = mlx_vector_array_new();
    mlx_array u = mlx_array_new(), sv = mlx_array_new(), v = mlx_array_new(), cut = mlx_array_new();
    mlx_array rc_arr = mlx_array_new_float64(rcond), zero = mlx_array_new_float32(0.0f);
    mlx_array mask = mlx_array_new(), rs = mlx_array_new();
    int rc = mlx_linalg_svd(&usv, a, true, s) || mlx_vector_array_get(&u, usv, 0) ||
             mlx_vector_array_get(&sv, usv, 1) || mlx_vector_array_get(&v, usv, 2);
    /* U[..., :m, :k]^T and Vt[..., :k, :n]^T */
    stop[nd - 2] = m, stop[nd - 1] = k;
    rc = rc || mlx_slice(&u, u, start, (size_t)nd, stop, (size_t)nd, str, (size_t)nd, s) ||
         mlx_swapaxes(&u, u, -1, -2, s);
    stop[nd - 2] = k, stop[nd - 1] = n;
    rc = rc || mlx_slice(&v, v, start, (size_t)nd, stop, (size_t)nd, str, (size_t)nd, s) ||
         mlx_swapaxes(&v, v, -1, -2, s);
    rc = rc || mlx_astype(&rc_arr, rc_arr, x->dtype, s) || mlx_astype(&zero, zero, x->dtype, s) ||
         mlx_expand_dims(&sv, sv, -2, s) || mlx_max_axis(&cut, sv, -1, true, s) ||
         mlx_multiply(&cut, rc_arr, cut, s) || mlx_greater(&mask, sv, cut, s) || mlx_reciprocal(&rs, sv, s) ||
         mlx_where(&rs, mask, rs, zero, s) || mlx_multiply(&v, v, rs, s) || mlx_matmul(res, v, u, s);
    mlx_vector_array_free(usv);
    mlx_array_free(u), mlx_array_free(sv), mlx_array_free(v), mlx_array_free(cut);
    mlx_array_free(rc_arr), mlx_array_free(zero), mlx_array_free(mask), mlx_array_free(rs);
    return rc;
}
