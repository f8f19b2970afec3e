/* Owns the linalg ops that MLX composes from the factorizations: solve
 * (one Solve node: the same solution as MLX's lu and two triangular solves,
 * in one pass, with the derivatives of MLX's composition), solve_triangular (tri_inv @ b), pinv
 * (from svd) and cholesky_inv (from tri_inv), in MLX's steps, so results
 * and gradients (through matmul, take_along_axis...) are MLX's. */
#include <float.h>
#include <string.h>

#include "graph/elementwise.h"
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
                        "second input with shape %s.",
                        fn, sa, sb);
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (t != MLX_FLOAT32 && t != MLX_FLOAT64)
        return mc_error(
            "[%s] Input arrays must promote to float32 or float64.  Received arrays with type %s and %s.", fn,
            mc_dtype_name(x->dtype), mc_dtype_name(y->dtype));
    return 0;
}

int mlx_linalg_solve_triangular(mlx_array *res, const mlx_array a, const mlx_array b, bool upper,
                                const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::solve_triangular";
    if (mc_op_check_res(res, fn) || validate_solve(a, b, fn))
        return 1;
    mlx_array inv = mlx_array_new();
    int rc = mlx_linalg_tri_inv(&inv, a, upper, s) || mlx_matmul(res, inv, b, s);
    mlx_array_free(inv);
    return rc;
}

/* a and b, cast to their promoted dtype, broadcast to one batch and made
 * row-contiguous, into one Solve node. MLX's composition (lu, take_along_axis
 * of b at the permutation, two solve_triangular) accepts exactly these
 * shapes; its take_along_axis refuses a b of another rank. */
int mlx_linalg_solve(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::solve";
    if (mc_op_check_res(res, fn) || validate_solve(a, b, fn))
        return 1;
    mc_array *x = mc_arr(a), *y = mc_arr(b);
    if (mc_la_check_float(x, false, "linalg::lu"))
        return 1;
    bool vec = y->ndim == 1;
    int perm_nd = vec ? x->ndim - 1 : x->ndim;
    if (perm_nd != y->ndim)
        return mc_error("[take_along_axis] Indices of dimension %d does not match array of dimension %d.", perm_nd,
                        y->ndim);
    int bnd, batch[MC_MAX_NDIM], as[MC_MAX_NDIM], bs[MC_MAX_NDIM], n = x->shape[x->ndim - 1];
    if (mc_broadcast_shapes(x->ndim - 2, x->shape, x->ndim - 2, y->shape, &bnd, batch, fn))
        return 1;
    memcpy(as, batch, sizeof(int) * (size_t)bnd);
    memcpy(bs, batch, sizeof(int) * (size_t)bnd);
    as[bnd] = as[bnd + 1] = n;
    bs[bnd] = n;
    bs[bnd + 1] = vec ? 1 : y->shape[y->ndim - 1];
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    mlx_array ac = mlx_array_new(), bc = mlx_array_new(), out = mlx_array_new();
    int rc = mlx_astype(&ac, a, t, s) || mlx_broadcast_to(&ac, ac, as, (size_t)bnd + 2, s) ||
             mlx_contiguous(&ac, ac, false, s) || mlx_astype(&bc, b, t, s) ||
             /* a vector b (a is then one matrix) is one column */
             (vec ? mlx_reshape(&bc, bc, bs, 2, s) : mlx_broadcast_to(&bc, bc, bs, (size_t)bnd + 2, s)) ||
             mlx_contiguous(&bc, bc, false, s);
    if (!rc) {
        mc_array *in[2] = {mc_arr(ac), mc_arr(bc)};
        rc = mc_op_store(&out, mc_node_new(fn, MC_PRIM_SOLVE, in, 2, NULL, 0), fn);
    }
    rc = rc || (vec ? mlx_reshape(res, out, &n, 1, s) : mlx_array_set(res, out));
    mlx_array_free(ac), mlx_array_free(bc), mlx_array_free(out);
    return rc;
}

int mlx_linalg_cholesky_inv(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
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
    MC_STREAM_REQUIRED(s);
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
    int rc = !usv.ctx || mlx_linalg_svd(&usv, a, true, s) || mlx_vector_array_get(&u, usv, 0) ||
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
