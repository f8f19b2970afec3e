/* Owns the linalg ops that are one LAPACK factorization each: inv,
 * tri_inv, cholesky, qr, svd, eig, eigvals, eigh, eigvalsh, lu and
 * lu_factor. Each checks its arguments as MLX's linalg.cpp does, builds one
 * node of its primitive (prims_linalg.h) on a row-contiguous input, and
 * slices its outputs out of the node's packed result. */
#include <string.h>

#include "graph/prims_linalg.h"
#include "ops/linalg_internal.h"
#include "ops/op_util.h"
#include "runtime/error.h"

int mc_la_check_float(const mc_array *a, bool cplx, const char *prefix)
{
    if (a->dtype == MLX_FLOAT32 || a->dtype == MLX_FLOAT64 || (cplx && a->dtype == MLX_COMPLEX64))
        return 0;
    return mc_error("[%s] Arrays must have type float32%s. Received array with type %s.", prefix,
                    cplx ? ", float64 or complex64" : " or float64", mc_dtype_name(a->dtype));
}

int mc_la_check_ndim(const mc_array *a, const char *prefix)
{
    if (a->ndim >= 2)
        return 0;
    return mc_error("[%s] Arrays must have >= 2 dimensions. Received array with %d dimensions.", prefix, a->ndim);
}

static int rows(const mc_array *a) { return a->shape[a->ndim - 2]; }
static int cols(const mc_array *a) { return a->shape[a->ndim - 1]; }

/* One node of prim on a made row-contiguous (LAPACK reads it in place). */
static int la_node(mlx_array *res, mlx_array a, int prim, mc_linalg_params p, const char *fn, mlx_stream s)
{
    mlx_array c = mlx_array_new();
    int rc = mlx_contiguous(&c, a, false, s);
    if (!rc) {
        mc_array *in[1] = {mc_arr(c)};
        rc = mc_op_store(res, mc_node_new(fn, prim, in, 1, &p, sizeof p), fn);
    }
    mlx_array_free(c);
    return rc;
}

/* Elements [off, off + len) of the packed last axis of each matrix's
 * outputs, shaped batch + dims (nd of them). */
static int unpack(mlx_array *res, mlx_array packed, int off, int len, int nd, const int *dims, mlx_stream s)
{
    const mc_array *p = mc_arr(packed);
    int bnd = p->ndim - 1, start[MC_MAX_NDIM], stop[MC_MAX_NDIM], str[MC_MAX_NDIM], shape[MC_MAX_NDIM];
    for (int i = 0; i < p->ndim; i++)
        start[i] = 0, stop[i] = p->shape[i], str[i] = 1, shape[i] = p->shape[i];
    start[bnd] = off;
    stop[bnd] = off + len;
    for (int i = 0; i < nd; i++)
        shape[bnd + i] = dims[i];
    mlx_array t = mlx_array_new();
    int rc = mlx_slice(&t, packed, start, (size_t)p->ndim, stop, (size_t)p->ndim, str, (size_t)p->ndim, s) ||
             mlx_reshape(res, t, shape, (size_t)(bnd + nd), s);
    mlx_array_free(t);
    return rc;
}

/* The real part when the packed values are complex (eigh, svd). */
static int real_if_complex(mlx_array *x, mlx_stream s)
{
    return mc_arr(*x)->dtype == MLX_COMPLEX64 ? mlx_real(x, *x, s) : 0;
}

/* -- inverses and Cholesky ------------------------------------------------ */

static int inv_impl(mlx_array *res, mlx_array a, bool tri, bool upper, mlx_stream s)
{
    static const char fn[] = "linalg::inv";
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res, fn) || !x || mc_la_check_float(x, false, fn) || mc_la_check_ndim(x, fn))
        return 1;
    if (rows(x) != cols(x))
        return mc_error("[%s] Inverses are only defined for square matrices.", fn);
    mc_linalg_params p = {.tri = tri, .upper = upper};
    return la_node(res, a, MC_PRIM_INVERSE, p, fn, s);
}

int mlx_linalg_inv(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return inv_impl(res, a, false, true, s);
}

int mlx_linalg_tri_inv(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return inv_impl(res, a, true, upper, s);
}

int mlx_linalg_cholesky(mlx_array *res, const mlx_array a, bool upper, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::cholesky";
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res, fn) || !x || mc_la_check_float(x, false, fn) || mc_la_check_ndim(x, fn))
        return 1;
    if (rows(x) != cols(x))
        return mc_error("[%s] Cholesky decomposition is only defined for square matrices.", fn);
    mc_linalg_params p = {.upper = upper};
    return la_node(res, a, MC_PRIM_CHOLESKY, p, fn, s);
}

/* -- QR and SVD ------------------------------------------------------------- */

int mlx_linalg_qr(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::qr";
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res_0, fn) || mc_op_check_res(res_1, fn) || !x || mc_la_check_float(x, false, fn) ||
        mc_la_check_ndim(x, fn))
        return 1;
    int m = rows(x), n = cols(x), k = m < n ? m : n, qd[2] = {m, k}, rd[2] = {k, n};
    mlx_array packed = mlx_array_new(), q = mlx_array_new(), r = mlx_array_new();
    mc_linalg_params p = {0};
    int rc = la_node(&packed, a, MC_PRIM_QRF, p, fn, s) || unpack(&q, packed, 0, m * k, 2, qd, s) ||
             unpack(&r, packed, m * k, k * n, 2, rd, s) || mlx_array_set(res_0, q) || mlx_array_set(res_1, r);
    mlx_array_free(packed), mlx_array_free(q), mlx_array_free(r);
    return rc;
}

int mlx_linalg_svd(mlx_vector_array *res, const mlx_array a, bool compute_uv, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::svd";
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res, fn) || !x || mc_la_check_float(x, true, fn))
        return 1;
    if (x->ndim < 2)
        return mc_error("[%s] Input array must have >= 2 dimensions. Received array with %d dimensions.", fn,
                        x->ndim);
    int m = rows(x), n = cols(x), k = m < n ? m : n, ud[2] = {m, m}, vd[2] = {n, n};
    mc_linalg_params p = {.vectors = compute_uv};
    mlx_array packed = mlx_array_new(), u = mlx_array_new(), sv = mlx_array_new(), vt = mlx_array_new();
    int rc = la_node(&packed, a, MC_PRIM_SVD, p, fn, s);
    if (!rc && !compute_uv) {
        rc = mlx_vector_array_set_data(res, &packed, 1);
    } else if (!rc) {
        rc = unpack(&u, packed, 0, m * m, 2, ud, s) || unpack(&sv, packed, m * m, k, 1, &k, s) ||
             real_if_complex(&sv, s) || unpack(&vt, packed, m * m + k, n * n, 2, vd, s);
        mlx_array outs[3] = {u, sv, vt};
        rc = rc || mlx_vector_array_set_data(res, outs, 3);
    }
    mlx_array_free(packed), mlx_array_free(u), mlx_array_free(sv), mlx_array_free(vt);
    return rc;
}

/* -- eigenproblems ------------------------------------------------------------ */

static int validate_eig(const mc_array *x, const char *fn)
{
    if (mc_la_check_float(x, true, fn) || mc_la_check_ndim(x, fn))
        return 1;
    if (rows(x) != cols(x))
        return mc_error("[%s] Only defined for square matrices.", fn);
    return 0;
}

/* MLX hands UPLO's first letter to LAPACK, which accepts L or U in either
 * case; anything else is refused here rather than by LAPACK's xerbla. */
static int check_uplo(const char *uplo, const char *fn)
{
    if (uplo && (uplo[0] == 'L' || uplo[0] == 'U' || uplo[0] == 'l' || uplo[0] == 'u'))
        return 0;
    return mc_error("[%s] UPLO must be \"L\" or \"U\", not %s%s%s.", fn, uplo ? "\"" : "", uplo ? uplo : "NULL",
                    uplo ? "\"" : "");
}

/* Values (..., n) and, with res_1, vectors (..., n, n) of Eig or Eigh. */
static int eig_impl(mlx_array *res_0, mlx_array *res_1, mlx_array a, int prim, const char *uplo, const char *fn,
                    mlx_stream s)
{
    mc_array *x = mc_op_arg(a, fn, "a");
    if (mc_op_check_res(res_0, fn) || (res_1 && mc_op_check_res(res_1, fn)) || !x || validate_eig(x, fn) ||
        (prim == MC_PRIM_EIGH && check_uplo(uplo, fn)))
        return 1;
    int n = cols(x), vd[2] = {n, n};
    mc_linalg_params p = {.vectors = res_1 != NULL, .uplo = prim == MC_PRIM_EIGH ? uplo[0] : 0};
    if (!res_1)
        return la_node(res_0, a, prim, p, fn, s);
    mlx_array packed = mlx_array_new(), w = mlx_array_new(), v = mlx_array_new();
    int rc = la_node(&packed, a, prim, p, fn, s) || unpack(&w, packed, 0, n, 1, &n, s) ||
             (prim == MC_PRIM_EIGH && real_if_complex(&w, s)) || unpack(&v, packed, n, n * n, 2, vd, s) ||
             mlx_array_set(res_0, w) || mlx_array_set(res_1, v);
    mlx_array_free(packed), mlx_array_free(w), mlx_array_free(v);
    return rc;
}

int mlx_linalg_eig(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return eig_impl(res_0, res_1, a, MC_PRIM_EIG, NULL, "linalg::eig", s);
}

int mlx_linalg_eigvals(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return eig_impl(res, NULL, a, MC_PRIM_EIG, NULL, "linalg::eigvals", s);
}

int mlx_linalg_eigh(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const char *UPLO, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return eig_impl(res_0, res_1, a, MC_PRIM_EIGH, UPLO, "linalg::eigh", s);
}

int mlx_linalg_eigvalsh(mlx_array *res, const mlx_array a, const char *UPLO, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return eig_impl(res, NULL, a, MC_PRIM_EIGH, UPLO, "linalg::eigvalsh", s);
}

/* -- LU --------------------------------------------------------------------- */

/* LUF of a: the packed factors, and (each if asked) the pivots and MLX's
 * row indices as uint32. */
static int luf_parts(mlx_array a, mlx_array *lu, mlx_array *piv, mlx_array *row_idx, const char *fn, mlx_stream s)
{
    mc_array *x = mc_arr(a);
    int m = rows(x), n = cols(x), k = m < n ? m : n, ld[2] = {m, n};
    mlx_array packed = mlx_array_new();
    mc_linalg_params p = {0};
    int rc = la_node(&packed, a, MC_PRIM_LUF, p, fn, s) || unpack(lu, packed, 0, m * n, 2, ld, s);
    if (piv)
        rc = rc || unpack(piv, packed, m * n, k, 1, &k, s) || mlx_astype(piv, *piv, MLX_UINT32, s);
    if (row_idx)
        rc = rc || unpack(row_idx, packed, m * n + k, m, 1, &m, s) || mlx_astype(row_idx, *row_idx, MLX_UINT32, s);
    mlx_array_free(packed);
    return rc;
}

static int validate_lu(mlx_array a, const char *fn)
{
    mc_array *x = mc_op_arg(a, fn, "a");
    return !x || mc_la_check_float(x, false, fn) || mc_la_check_ndim(x, fn);
}

int mlx_linalg_lu_factor(mlx_array *res_0, mlx_array *res_1, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::lu_factor";
    if (mc_op_check_res(res_0, fn) || mc_op_check_res(res_1, fn) || validate_lu(a, fn))
        return 1;
    mlx_array lu = mlx_array_new(), piv = mlx_array_new();
    int rc = luf_parts(a, &lu, &piv, NULL, fn, s) || mlx_array_set(res_0, lu) || mlx_array_set(res_1, piv);
    mlx_array_free(lu), mlx_array_free(piv);
    return rc;
}

int mlx_linalg_lu(mlx_vector_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::lu";
    if (mc_op_check_res(res, fn) || validate_lu(a, fn))
        return 1;
    mc_array *x = mc_arr(a);
    int nd = x->ndim, m = rows(x), n = cols(x), k = m < n ? m : n;
    mlx_array lu = mlx_array_new(), ri = mlx_array_new(), l = mlx_array_new(), u = mlx_array_new();
    mlx_array eye = mlx_array_new();
    int rc = luf_parts(a, &lu, NULL, &ri, fn, s) || mlx_tril(&l, lu, -1, s) || mlx_triu(&u, lu, 0, s);
    int start[MC_MAX_NDIM] = {0}, stop[MC_MAX_NDIM], str[MC_MAX_NDIM];
    for (int i = 0; i < nd; i++)
        stop[i] = x->shape[i], str[i] = 1;
    /* L keeps k columns, U k rows */
    if (!rc && n != k) {
        stop[nd - 1] = k;
        rc = mlx_slice(&l, l, start, (size_t)nd, stop, (size_t)nd, str, (size_t)nd, s);
    } else if (!rc && m != k) {
        stop[nd - 2] = k;
        rc = mlx_slice(&u, u, start, (size_t)nd, stop, (size_t)nd, str, (size_t)nd, s);
    }
    rc = rc || mlx_eye(&eye, m, k, 0, x->dtype, s) || mlx_add(&l, l, eye, s);
    mlx_array outs[3] = {ri, l, u};
    rc = rc || mlx_vector_array_set_data(res, outs, 3);
    mlx_array_free(lu), mlx_array_free(ri), mlx_array_free(l), mlx_array_free(u), mlx_array_free(eye);
    return rc;
}
