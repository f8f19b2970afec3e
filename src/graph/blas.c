/* Owns every cblas call of the library: batched gemm (gemv when one side
 * is a vector; a large gemm split across the pool), scaling, and the
 * counters tests read. The batch loop walks
 * stride offsets, so broadcast batch dims (stride 0) cost nothing; when the
 * right operand is the same for every batch and the left one's batches
 * are stacked rows, the whole batch is one call with m * batch rows. */
#include "graph/blas.h"

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "array/array.h"
#include "runtime/error.h"
#include "runtime/pool.h"

/* cblas's integer: 32-bit in the usual builds, 64-bit in OpenBLAS's
 * INTERFACE64 builds. */
#ifdef OPENBLAS_VERSION
typedef blasint mc_bint;
#else
typedef int mc_bint;
#endif
#define MC_BINT_MAX ((int64_t)(sizeof(mc_bint) >= 8 ? INT64_MAX : INT_MAX))

static atomic_long n_gemm, n_gemv, n_copies;

mc_blas_stats mc_blas_stats_get(void)
{
    mc_blas_stats s = {
        atomic_load_explicit(&n_gemm, memory_order_relaxed),
        atomic_load_explicit(&n_gemv, memory_order_relaxed),
        atomic_load_explicit(&n_copies, memory_order_relaxed),
    };
    return s;
}

void mc_blas_note_copy(void) { atomic_fetch_add_explicit(&n_copies, 1, memory_order_relaxed); }

int mc_blas_threads(void)
{
    (void)mc_pool_threads();
#ifdef OPENBLAS_VERSION
    return openblas_get_num_threads();
#else
    return 0;
#endif
}

static size_t item_size(mlx_dtype d)
{
    switch (d) {
    case MLX_FLOAT64:
    case MLX_COMPLEX64:
        return 8;
    default:
        return 4;
    }
}

/* y = alpha * op(A) x + beta * y, with A stored row-major rows x cols. */
static void gemv(const mc_blas_matmul_args *p, bool trans, mc_bint rows, mc_bint cols, const void *a,
                 mc_bint lda, const void *x, mc_bint incx, void *y)
{
    enum CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
    atomic_fetch_add_explicit(&n_gemv, 1, memory_order_relaxed);
    switch (p->dtype) {
    case MLX_FLOAT32:
        cblas_sgemv(CblasRowMajor, t, rows, cols, p->alpha, a, lda, x, incx, p->beta, y, 1);
        break;
    case MLX_FLOAT64:
        cblas_dgemv(CblasRowMajor, t, rows, cols, (double)p->alpha, a, lda, x, incx, (double)p->beta, y, 1);
        break;
    default: {
        const float al[2] = {p->alpha, 0.0f}, be[2] = {p->beta, 0.0f};
        cblas_cgemv(CblasRowMajor, t, rows, cols, al, a, lda, x, incx, be, y, 1);
        break;
    }
    }
}

/* A product of the whole of A's m rows with B's columns [0, n) (B and C
 * already offset to the first of them); C's rows are p->n apart. */
static void gemm(const mc_blas_matmul_args *p, const char *a, const char *b, char *c, mc_bint m, mc_bint n)
{
    mc_bint k = p->k, ldc = p->n;
    mc_bint lda = (mc_bint)p->a.ld, ldb = (mc_bint)p->b.ld;
    enum CBLAS_TRANSPOSE ta = p->a.trans ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = p->b.trans ? CblasTrans : CblasNoTrans;
    switch (p->dtype) {
    case MLX_FLOAT32:
        cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, p->alpha, (const float *)a, lda, (const float *)b, ldb,
                    p->beta, (float *)c, ldc);
        break;
    case MLX_FLOAT64:
        cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, (double)p->alpha, (const double *)a, lda,
                    (const double *)b, ldb, (double)p->beta, (double *)c, ldc);
        break;
    default: {
        const float al[2] = {p->alpha, 0.0f}, be[2] = {p->beta, 0.0f};
        cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
        break;
    }
    }
}

/* Products below this many multiply-adds run on one thread: splitting
 * them costs more (each piece packs its own panels) than it saves. */
#define MC_SPLIT_MIN_MACS (1 << 20)
/* Each piece keeps at least this many rows (or columns) of C. */
enum { MC_SPLIT_MIN_EDGE = 16 };

typedef struct split_ctx {
    const mc_blas_matmul_args *p;
    const char *a, *b;
    char *c;
    mc_bint m;
    bool by_rows; /* pieces are rows of C, else columns */
} split_ctx;

static void gemm_piece(void *arg, size_t begin, size_t end)
{
    const split_ctx *s = arg;
    const mc_blas_matmul_args *p = s->p;
    size_t isz = item_size(p->dtype), len = end - begin;
    if (s->by_rows) {
        /* row r of op(A): a row of A, or a column of the stored A^T */
        size_t aoff = p->a.trans ? begin : begin * (size_t)p->a.ld;
        gemm(p, s->a + aoff * isz, s->b, s->c + begin * (size_t)p->n * isz, (mc_bint)len, p->n);
    } else {
        size_t boff = p->b.trans ? begin * (size_t)p->b.ld : begin;
        gemm(p, s->a, s->b + boff * isz, s->c + begin * isz, s->m, (mc_bint)len);
    }
}

/* One product of m rows: picks gemv when a side is a vector (gemm's
 * packing costs more than the product itself there), else gemm, split
 * into one piece per pool thread along C's longer side when large enough.
 * OpenBLAS itself runs one thread (see src/runtime/pool.c), so the pool's
 * workers are the only threads in use, for BLAS and for every other kernel. */
static void product(const mc_blas_matmul_args *p, const char *a, const char *b, char *c, mc_bint m)
{
    mc_bint n = p->n, k = p->k;
    mc_bint lda = (mc_bint)p->a.ld, ldb = (mc_bint)p->b.ld;
    if (n == 1) {
        /* c (m) = A (m x k) times the column of b */
        mc_bint incb = p->b.trans ? 1 : ldb;
        if (p->a.trans)
            gemv(p, true, k, m, a, lda, b, incb, c);
        else
            gemv(p, false, m, k, a, lda, b, incb, c);
        return;
    }
    if (m == 1) {
        /* c (n) = B^T (n x k) times the row of a */
        mc_bint inca = p->a.trans ? lda : 1;
        if (p->b.trans)
            gemv(p, false, n, k, b, ldb, a, inca, c);
        else
            gemv(p, true, k, n, b, ldb, a, inca, c);
        return;
    }
    atomic_fetch_add_explicit(&n_gemm, 1, memory_order_relaxed);
    size_t threads = (size_t)mc_pool_threads();
    size_t edge = (size_t)(m >= n ? m : n);
    if (threads > 1 && edge >= 2 * MC_SPLIT_MIN_EDGE && (double)m * (double)n * (double)k >= MC_SPLIT_MIN_MACS) {
        split_ctx s = {p, a, b, c, m, m >= n};
        /* the pool makes edge / grain pieces, rounding down */
        size_t grain = edge / threads;
        mc_parallel_for(edge, grain < MC_SPLIT_MIN_EDGE ? MC_SPLIT_MIN_EDGE : grain, gemm_piece, &s);
        return;
    }
    gemm(p, a, b, c, m, n);
}

/* True if every batch of A follows the previous one as more rows (each
 * batch dim's stride is the rows below it times ld) and B is shared: then
 * the batched product is one product of m * batch rows. */
static bool batches_are_rows(const mc_blas_matmul_args *p, size_t count)
{
    /* a transposed A's rows are not rows in memory */
    if (p->a.trans || (int64_t)count * p->m > MC_BINT_MAX)
        return false;
    int64_t expect = (int64_t)p->m * p->a.ld;
    for (int d = p->batch_ndim - 1; d >= 0; d--) {
        int s = p->batch_shape[d];
        if (s == 1)
            continue;
        if (p->b.bstrides[d] != 0 || p->a.bstrides[d] != expect)
            return false;
        expect *= s;
    }
    return true;
}

int mc_blas_matmul(const mc_blas_matmul_args *p, const char *fn)
{
    /* m, n and k are ints, which cblas's integer holds */
    if (p->a.ld > MC_BINT_MAX || p->b.ld > MC_BINT_MAX)
        return mc_error("[%s] Matrix dimensions exceed what the BLAS library accepts.", fn);
    /* the pool applies its thread count to OpenBLAS when first read */
    (void)mc_pool_threads();

    size_t count = 1;
    for (int d = 0; d < p->batch_ndim; d++)
        count *= (size_t)p->batch_shape[d];
    if (count == 0)
        return 0;
    size_t isz = item_size(p->dtype);
    const char *a = p->a.data, *b = p->b.data;
    char *c = p->c;
    if (count == 1 || batches_are_rows(p, count)) {
        product(p, a, b, c, (mc_bint)((int64_t)p->m * (int64_t)count));
        return 0;
    }

    size_t cstep = (size_t)p->m * (size_t)p->n * isz;
    int idx[MC_MAX_NDIM] = {0};
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < count; i++) {
        product(p, a + oa * (int64_t)isz, b + ob * (int64_t)isz, c + i * cstep, p->m);
        for (int d = p->batch_ndim - 1; d >= 0; d--) {
            if (++idx[d] < p->batch_shape[d]) {
                oa += p->a.bstrides[d];
                ob += p->b.bstrides[d];
                break;
            }
            oa -= p->a.bstrides[d] * (p->batch_shape[d] - 1);
            ob -= p->b.bstrides[d] * (p->batch_shape[d] - 1);
            idx[d] = 0;
        }
    }
    return 0;
}

void mc_blas_gemm_nt(mlx_dtype dtype, int m, int n, int k, const void *a, int64_t lda, const void *b,
                     int64_t ldb, void *c, int64_t ldc)
{
    atomic_fetch_add_explicit(&n_gemm, 1, memory_order_relaxed);
    if (dtype == MLX_FLOAT64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, (mc_bint)lda, b, (mc_bint)ldb, 0.0,
                    c, (mc_bint)ldc);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, (mc_bint)lda, b, (mc_bint)ldb,
                    0.0f, c, (mc_bint)ldc);
}

void mc_blas_sgemm_tile(int m, int n, int k, const float *a, int64_t lda, const float *b, int64_t ldb,
                        bool b_trans, float *c, int64_t ldc)
{
    atomic_fetch_add_explicit(&n_gemm, 1, memory_order_relaxed);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
                (mc_bint)lda, b, (mc_bint)ldb, 0.0f, c, (mc_bint)ldc);
}

void mc_blas_scale(mlx_dtype dtype, size_t n, float alpha, void *x)
{
    size_t isz = item_size(dtype);
    char *p = x;
    while (n) {
        mc_bint len = n > (size_t)MC_BINT_MAX ? (mc_bint)MC_BINT_MAX : (mc_bint)n;
        switch (dtype) {
        case MLX_FLOAT32:
            cblas_sscal(len, alpha, (float *)p, 1);
            break;
        case MLX_FLOAT64:
            cblas_dscal(len, (double)alpha, (double *)p, 1);
            break;
        default:
            cblas_csscal(len, alpha, p, 1);
            break;
        }
        p += (size_t)len * isz;
        n -= (size_t)len;
    }
}

