/* The one place that calls cblas: batched matrix products and scaling over
 * raw pointers, for the matmul family (prims_matmul.c). Nothing here knows
 * arrays or graphs; every operand is described by a pointer, a transpose
 * flag, a leading dimension and per-batch strides, all in elements.
 *
 * Threading: OpenBLAS runs one thread (src/runtime/pool.c sets
 * openblas_set_num_threads(1)); a large product is split into pieces, one
 * cblas call each, run by the worker pool. OpenBLAS's own threads would
 * spin (sched_yield) between calls, taking a core from the pool's workers
 * while elementwise kernels run, and wait on each other when a core is
 * busy; the pool's threads are the only ones. These functions make sure
 * the pool has applied the count before the first BLAS call, and must not
 * be called from inside a pool worker (they would then run inline). */
#ifndef MC_GRAPH_BLAS_H
#define MC_GRAPH_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "mlx/c/array.h"

/* One operand of a batched product: the matrix of batch 0 starts at data;
 * batch index (i0, i1, ...) adds sum(i_j * bstrides[j]) elements. Stored
 * row-major with leading dimension ld, or, with trans, stored as its
 * transpose (column-major) with leading dimension ld. */
typedef struct mc_blas_operand {
    const void *data;
    bool trans;
    int64_t ld;
    const int64_t *bstrides; /* batch_ndim entries; 0 on broadcast dims */
} mc_blas_operand;

/* C[batch] = alpha * A[batch] @ B[batch] + beta * C[batch], for every index
 * of batch_shape. A is m x k, B is k x n; C is dense row-major (ldc = n),
 * batch after batch. dtype is float32, float64 or complex64 (alpha and
 * beta are real). With beta == 0, C is written without being read. */
typedef struct mc_blas_matmul_args {
    mlx_dtype dtype;
    int m, n, k;
    float alpha, beta;
    mc_blas_operand a, b;
    void *c;
    int batch_ndim;
    const int *batch_shape;
} mc_blas_matmul_args;

/* Runs the product. Requires m, n, k >= 1, ld >= the stored row length
 * (as cblas does) and a supported dtype; returns 0, or 1 with an error
 * reported naming fn if the arguments do not fit cblas's int sizes. */
int mc_blas_matmul(const mc_blas_matmul_args *args, const char *fn);

/* One product on the calling thread, never split (so a pool worker may
 * call it): C (m x n, row-major, ldc) = A (m x k, row-major, lda) times
 * the transpose of B (n x k, row-major, ldb), for float32 or float64.
 * The convolution kernels call it per block of im2col rows. Requires
 * m, n, k >= 1 within cblas's int. */
void mc_blas_gemm_nt(mlx_dtype dtype, int m, int n, int k, const void *a, int64_t lda, const void *b,
                     int64_t ldb, void *c, int64_t ldc);
/* One single-threaded float32 product for a caller that splits the work
 * itself (a pool worker may call it): C (m x n, leading dimension ldc) =
 * A (m x k, row-major, lda) times B^T (B stored n x k row-major, ldb) when
 * b_trans, else times B (stored k x n, ldb). Sizes fit int (the caller
 * tiles). */
void mc_blas_sgemm_tile(int m, int n, int k, const float *a, int64_t lda, const float *b, int64_t ldb,
                        bool b_trans, float *c, int64_t ldc);

/* x[i] *= alpha for i < n (dtype as above; n may exceed INT_MAX). */
void mc_blas_scale(mlx_dtype dtype, size_t n, float alpha, void *x);

/* The thread count OpenBLAS uses now (1 once the pool has set it), or 0
 * when the BLAS library is not OpenBLAS. */
int mc_blas_threads(void);

/* Counters for tests: BLAS calls made and operands that had to be copied
 * before a call (counted by the caller through mc_blas_note_copy). */
typedef struct mc_blas_stats {
    long gemm, gemv, copies;
} mc_blas_stats;
mc_blas_stats mc_blas_stats_get(void);
void mc_blas_note_copy(void);

#endif
