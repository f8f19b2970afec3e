/* Linear algebra: mlx-c v0.6.0's linalg.h, with MLX 0.31.1's semantics.
 *
 * Every function follows ops.h's contract (lazy results the caller frees;
 * 0, or 1 with one error reported and the results left as they were), and:
 * - Matrices are the last two axes; leading axes are a batch, and every
 *   matrix of a batch is factorized on its own.
 * - The factorizations (inv, tri_inv, cholesky, qr, svd, eig, eigh, lu)
 *   take float32 or float64 (svd, eig and eigh also complex64) and run
 *   LAPACK from OpenBLAS. A batch is split over the library's worker
 *   threads, with LAPACK single-threaded inside each matrix; one matrix
 *   runs on one thread. A failure LAPACK reports (a singular matrix for
 *   inv, tri_inv, lu, lu_factor and solve) is reported when the result is
 *   evaluated, with MLX's message.
 * - None of them has a derivative in MLX 0.31.1: asking vjp or jvp for one
 *   reports "Not implemented" as MLX does. norm (but its "nuc" and 2/-2
 *   orders), cross, and solve and solve_triangular in b are compositions of
 *   differentiable ops. */
#ifndef MLX_LINALG_H
#define MLX_LINALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The Cholesky factor of each symmetric positive definite matrix: lower
 * (a = L L^T), or upper (a = U^T U) if upper. The other triangle is zero.
 * Only the triangle LAPACK reads is used. As MLX, a matrix that is not
 * positive definite is not an error: the result is LAPACK's partial
 * factor. */
int mlx_linalg_cholesky(
    mlx_array* res,
    const mlx_array a,
    bool upper,
    const mlx_stream s);
/* The inverse of A = L L^T (or U^T U if upper) from its factor L (or U). */
int mlx_linalg_cholesky_inv(
    mlx_array* res,
    const mlx_array a,
    bool upper,
    const mlx_stream s);
/* The cross product along axis (of size 2 or 3; a size-2 vector has a zero
 * third component) of a and b, which broadcast. */
int mlx_linalg_cross(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    int axis,
    const mlx_stream s);
/* Eigenvalues (res_0, shape (..., n)) and right eigenvectors (res_1, the
 * columns of (..., n, n), each of unit norm) of a general square matrix,
 * both complex64, in LAPACK's order (geev, as MLX calls it). */
int mlx_linalg_eig(
    mlx_array* res_0,
    mlx_array* res_1,
    const mlx_array a,
    const mlx_stream s);
/* Eigenvalues (ascending, real: float32 for complex64 input) and
 * eigenvectors (columns) of a symmetric or Hermitian matrix. UPLO ("L" or
 * "U"; only its first letter counts) is passed to LAPACK as MLX passes it,
 * which reads it on the transposed matrix: "L" uses the upper triangle of
 * the row-major matrix, "U" the lower one (the same for a symmetric
 * matrix). Another UPLO is an error (MLX hands it to LAPACK). */
int mlx_linalg_eigh(
    mlx_array* res_0,
    mlx_array* res_1,
    const mlx_array a,
    const char* UPLO,
    const mlx_stream s);
/* The eigenvalues of mlx_linalg_eig and mlx_linalg_eigh alone. */
int mlx_linalg_eigvals(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_linalg_eigvalsh(
    mlx_array* res,
    const mlx_array a,
    const char* UPLO,
    const mlx_stream s);
/* The inverse of each square matrix; a singular one is an error. */
int mlx_linalg_inv(mlx_array* res, const mlx_array a, const mlx_stream s);
/* LU with partial pivoting: res gets (P, L, U), P the uint32 row indices
 * with a[..., i, :] = (L @ U)[..., P[i], :], L (m x k) unit lower and U
 * (k x n) upper, k = min(m, n). A singular matrix is an error (as MLX). */
int mlx_linalg_lu(mlx_vector_array* res, const mlx_array a, const mlx_stream s);
/* The packed LU factors (res_0, L below the diagonal, U on and above) and
 * LAPACK's pivots (res_1, uint32, 0-based: row i was swapped with row
 * pivots[i]). */
int mlx_linalg_lu_factor(
    mlx_array* res_0,
    mlx_array* res_1,
    const mlx_array a,
    const mlx_stream s);
/* Vector norm (one axis: ord 0, 1, 2, inf, -inf or any p) or matrix norm
 * (two axes: ord 1, -1, inf, -inf, 2 or -2, the last two by SVD) over
 * axis (NULL: every axis of a, which must then be 1 or 2 axes). The
 * result is at least float32. */
int mlx_linalg_norm(
    mlx_array* res,
    const mlx_array a,
    double ord,
    const int* axis /* may be null */,
    size_t axis_num,
    bool keepdims,
    const mlx_stream s);
/* Matrix norm over two axes: ord "f" or "fro" (Frobenius) or "nuc" (the
 * sum of singular values). */
int mlx_linalg_norm_matrix(
    mlx_array* res,
    const mlx_array a,
    const char* ord,
    const int* axis /* may be null */,
    size_t axis_num,
    bool keepdims,
    const mlx_stream s);
/* The 2-norm over one or two axes, or (axis NULL) of the flattened a. */
int mlx_linalg_norm_l2(
    mlx_array* res,
    const mlx_array a,
    const int* axis /* may be null */,
    size_t axis_num,
    bool keepdims,
    const mlx_stream s);
/* The Moore-Penrose pseudo-inverse by SVD, singular values below
 * 10 * max(m, n) * eps times the largest counting as zero. */
int mlx_linalg_pinv(mlx_array* res, const mlx_array a, const mlx_stream s);
/* The reduced QR factorization: Q (m x k, orthonormal columns) and R
 * (k x n, upper triangular), k = min(m, n); float32 or float64. */
int mlx_linalg_qr(
    mlx_array* res_0,
    mlx_array* res_1,
    const mlx_array a,
    const mlx_stream s);
/* x with a @ x = b, for square a; b is (..., n) or (..., n, nrhs). As MLX,
 * by LU (lu), then two triangular solves (solve_triangular). */
int mlx_linalg_solve(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
/* x with a @ x = b for triangular a (lower, or upper if upper), as MLX:
 * tri_inv(a) @ b. */
int mlx_linalg_solve_triangular(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    bool upper,
    const mlx_stream s);
/* With compute_uv, res gets (U, S, Vt) with a = U[..., :, :k] diag(S)
 * Vt[..., :k, :], U m x m, Vt n x n; else (S). S descends and is real
 * (float32 for complex64 input). LAPACK's gesdd, as MLX. */
int mlx_linalg_svd(
    mlx_vector_array* res,
    const mlx_array a,
    bool compute_uv,
    const mlx_stream s);
/* The inverse of a triangular matrix (lower, or upper if upper); only that
 * triangle is read, the other is zero in the result. */
int mlx_linalg_tri_inv(
    mlx_array* res,
    const mlx_array a,
    bool upper,
    const mlx_stream s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
