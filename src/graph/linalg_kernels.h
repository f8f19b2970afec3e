/* The factorizations behind the linalg primitives, over raw row-major
 * matrices: each runs LAPACK (lapack.h) on one matrix at a time, with the
 * same routine, arguments and post-processing as MLX's CPU backend, and
 * writes that matrix's outputs packed one after another. Nothing here knows
 * arrays, graphs or threads: the caller (prims_linalg.c) gives each pool
 * worker a range of matrices, and LAPACK runs single-threaded inside. */
#ifndef MC_GRAPH_LINALG_KERNELS_H
#define MC_GRAPH_LINALG_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "mlx/c/array.h"

typedef enum mc_la_kind {
    MC_LA_INVERSE,  /* getrf + getri, or trtri (tri) */
    MC_LA_CHOLESKY, /* potrf */
    MC_LA_QRF,      /* geqrf + orgqr: Q (m x k) then R (k x n) */
    MC_LA_SVD,      /* gesdd: U (m x m), S (k), Vt (n x n); or S alone */
    MC_LA_EIG,      /* geev (left vectors of the transpose): values (n), vectors (n x n) */
    MC_LA_EIGH,     /* syevd / heevd: values (n), vectors (n x n) */
    MC_LA_LUF,      /* getrf: LU (m x n), pivots (k), row indices (m) */
} mc_la_kind;

typedef struct mc_la_job {
    mc_la_kind kind;
    mlx_dtype dtype; /* the input's: float32, float64 or (svd, eig, eigh) complex64 */
    int m, n;        /* each matrix is m x n, row-major, batch after batch */
    bool tri;        /* inverse: of a triangular matrix */
    bool upper;      /* inverse (tri), cholesky: which triangle */
    bool vectors;    /* svd (compute_uv), eig, eigh: more than the values */
    char uplo;       /* eigh: the character given to LAPACK, as MLX passes it */
} mc_la_job;

/* The dtype of the packed output, and its elements per matrix. Values that
 * are real beside complex factors are stored as complex with a zero
 * imaginary part; LUF's integer pivots and row indices as values of the
 * matrix's dtype. */
mlx_dtype mc_la_out_dtype(const mc_la_job *j);
size_t mc_la_out_per(const mc_la_job *j);

/* Why a matrix failed: LAPACK's info at one step, or no memory. */
typedef enum mc_la_stage {
    MC_LA_NO_MEMORY,
    MC_LA_STEP_FACTOR, /* getrf (inverse, luf), potrf, gesdd, geev, syevd */
    MC_LA_STEP_INVERT, /* getri, trtri */
} mc_la_stage;

typedef struct mc_la_fail {
    size_t index; /* the failing matrix */
    int info;
    mc_la_stage stage;
} mc_la_fail;

/* Solves a[i] x[i] = b[i] for matrices [begin, end): a n x n (j->n),
 * b and x n x nrhs, all row-major; dtype float32 or float64. As MLX's
 * solve, a singular a fails (MC_LA_STEP_FACTOR, getrf's info). Returns 0
 * or 1 with *fail set. */
int mc_la_solve(mlx_dtype dtype, int n, int nrhs, const void *a, const void *b, void *x, size_t begin, size_t end,
                mc_la_fail *fail);

/* Runs matrices [begin, end) of `in` into `out` (mc_la_out_per elements
 * each), with workspace for the range allocated once. Returns 0, or 1
 * after the first failing matrix with *fail describing it. */
int mc_la_run(const mc_la_job *j, const void *in, void *out, size_t begin, size_t end, mc_la_fail *fail);

#endif
