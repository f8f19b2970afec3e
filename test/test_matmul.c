/* Tests of the linear algebra ops (src/ops/linalg.c) and their primitives
 * (src/graph/prims_matmul.c, src/graph/blas.c): matmul in every operand
 * shape and layout, addmm, inner, outer, tensordot, kron, and their errors.
 *
 * References: a naive product in double written here (with its own batch
 * broadcasting), and a few results computed with numpy 1.24 and pasted as
 * constants (they pin the axis conventions of tensordot, inner, outer and
 * kron). Inputs are mostly multiples of 1/4 in [-1, 1], so products are
 * exact in every dtype and tolerances only cover the output's rounding. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "graph/blas.h"
#include "graph/prims_matmul.h"
#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"
#include "runtime/alloc.h"
#include "runtime/buffer_cache.h"
#include "simd/half_convert.h"

/* ---- error recording ---- */

static char last_error[1024];
static int error_count;

static void record_error(const char *msg, void *data)
{
    (void)data;
    snprintf(last_error, sizeof last_error, "%s", msg);
    error_count++;
}

/* The default CPU stream, made in group_setup (mlx-c refuses an empty one). */
static mlx_stream S;

static int group_setup(void **state)
{
    (void)state;
    mlx_set_error_handler(record_error, NULL, NULL);
    S = mlx_default_cpu_stream_new();
    return S.ctx ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return mlx_stream_free(S);
}

static int test_teardown(void **state)
{
    (void)state;
    if (error_count)
        fail_msg("unexpected error: %s", last_error);
    return 0;
}

static void expect_error(const char *want)
{
    assert_int_equal(error_count, 1);
    assert_string_equal(last_error, want);
    error_count = 0;
}

static void expect_error_prefix(const char *prefix)
{
    assert_int_equal(error_count, 1);
    if (strncmp(last_error, prefix, strlen(prefix)))
        fail_msg("error '%s' does not start with '%s'", last_error, prefix);
    error_count = 0;
}


/* ---- building inputs ---- */

static size_t count_of(int ndim, const int *shape)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    return n;
}

/* Value i of a deterministic input: a multiple of 1/4 in [-1, 1]. */
static double quarter(unsigned seed, size_t i)
{
    uint32_t x = (uint32_t)(i * 2654435761u) ^ (seed * 40503u + 7u);
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (double)((int)(x % 9u) - 4) / 4.0;
}

/* An array of dtype dt with values f(seed, i), and those values in v. */
static mlx_array make(mlx_dtype dt, int ndim, const int *shape, unsigned seed, double *v)
{
    size_t n = count_of(ndim, shape);
    unsigned char *buf = mc_xmalloc(n * 8 + 8);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        double x = quarter(seed, i);
        v[i] = x;
        switch (dt) {
        case MLX_FLOAT32: ((float *)buf)[i] = (float)x; break;
        case MLX_FLOAT64: ((double *)buf)[i] = x; break;
        case MLX_FLOAT16: ((uint16_t *)buf)[i] = mc_f32_to_f16((float)x); break;
        case MLX_BFLOAT16: ((uint16_t *)buf)[i] = mc_f32_to_bf16((float)x); break;
        case MLX_INT32: ((int32_t *)buf)[i] = (int32_t)(x * 4); v[i] = x * 4; break;
        default: fail_msg("make: dtype %d not handled", (int)dt);
        }
    }
    mlx_array a = mlx_array_new_data(buf, shape, ndim, dt);
    mc_xfree(buf);
    assert_non_null(a.ctx);
    return a;
}

static mlx_array from_f32(const float *v, int ndim, const int *shape)
{
    mlx_array a = mlx_array_new_data(v, shape, ndim, MLX_FLOAT32);
    assert_non_null(a.ctx);
    return a;
}

/* A view of an evaluated array's buffer: `offset` elements past its first
 * element, with the given shape and strides. */
static mlx_array view_of(mlx_array src, int ndim, const int *shape, int64_t offset, const int64_t *strides)
{
    assert_int_equal(mlx_array_eval(src), 0);
    mc_array *s = mc_arr(src);
    mc_array *v = mc_array_alloc("test", s->dtype, ndim, shape);
    assert_non_null(v);
    mc_array_set_view(v, s, (char *)s->data + offset * (int64_t)mc_dtype_size(s->dtype), strides);
    return mc_handle(v);
}

/* ---- reading results ---- */

static double elem(const mc_array *x, size_t flat)
{
    int64_t off = 0;
    for (int d = x->ndim - 1; d >= 0; d--) {
        size_t idx = flat % (size_t)x->shape[d];
        flat /= (size_t)x->shape[d];
        off += (int64_t)idx * x->strides[d];
    }
    const char *p = (const char *)x->data + off * (int64_t)mc_dtype_size(x->dtype);
    switch (x->dtype) {
    case MLX_FLOAT32: return *(const float *)p;
    case MLX_FLOAT64: return *(const double *)p;
    case MLX_FLOAT16: return mc_f16_to_f32(*(const uint16_t *)p);
    case MLX_BFLOAT16: return mc_bf16_to_f32(*(const uint16_t *)p);
    case MLX_INT32: return *(const int32_t *)p;
    case MLX_INT64: return (double)*(const int64_t *)p;
    default: fail_msg("elem: dtype %d not handled", (int)x->dtype);
    }
    return 0;
}

/* Evaluates r, checks its dtype and shape, and every value within tol
 * (relative to max(1, |want|)); frees r. */
static void expect_values(mlx_array r, mlx_dtype dt, int ndim, const int *shape, const double *want, double tol)
{
    assert_non_null(r.ctx);
    assert_int_equal(mlx_array_eval(r), 0);
    mc_array *x = mc_arr(r);
    assert_int_equal(x->dtype, dt);
    assert_int_equal(x->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(x->shape[i], shape[i]);
    for (size_t i = 0; i < x->size; i++) {
        double got = elem(x, i), w = want[i];
        double scale = fabs(w) > 1 ? fabs(w) : 1;
        if (!(fabs(got - w) <= tol * scale))
            fail_msg("element %zu: got %.9g, want %.9g", i, got, w);
    }
    mlx_array_free(r);
}

/* ---- the reference product ---- */

/* out = a @ b with numpy's rules (1-D operands, broadcast batch dims), in
 * double. Returns the output's ndim and fills oshape. */
static int ref_matmul(const double *a, int an, const int *ashp, const double *b, int bn, const int *bshp,
                      double *out, int *oshape)
{
    int as[16], bs[16];
    int na = an, nb = bn;
    if (an == 1) {
        as[0] = 1;
        as[1] = ashp[0];
        na = 2;
    } else {
        memcpy(as, ashp, sizeof(int) * (size_t)an);
    }
    if (bn == 1) {
        bs[0] = bshp[0];
        bs[1] = 1;
        nb = 2;
    } else {
        memcpy(bs, bshp, sizeof(int) * (size_t)bn);
    }
    int m = as[na - 2], k = as[na - 1], n = bs[nb - 1];
    assert_int_equal(k, bs[nb - 2]);
    int bat = (na > nb ? na : nb) - 2;
    int batch[16];
    for (int d = 0; d < bat; d++) {
        int ia = d - (bat - (na - 2)), ib = d - (bat - (nb - 2));
        int da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
        assert_true(da == db || da == 1 || db == 1);
        batch[d] = da == 1 ? db : da;
    }
    size_t nbatch = count_of(bat, batch);
    for (size_t t = 0; t < nbatch; t++) {
        /* offsets of this batch in a and b (row-major, broadcast dims fixed at 0) */
        size_t rem = t, oa = 0, ob = 0, sa = (size_t)m * k, sb = (size_t)k * n;
        for (int d = bat - 1; d >= 0; d--) {
            size_t idx = rem % (size_t)batch[d];
            rem /= (size_t)batch[d];
            int ia = d - (bat - (na - 2)), ib = d - (bat - (nb - 2));
            if (ia >= 0) {
                if (as[ia] != 1)
                    oa += idx * sa;
                sa *= (size_t)as[ia];
            }
            if (ib >= 0) {
                if (bs[ib] != 1)
                    ob += idx * sb;
                sb *= (size_t)bs[ib];
            }
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int p = 0; p < k; p++)
                    acc += a[oa + (size_t)i * k + p] * b[ob + (size_t)p * n + j];
                out[t * (size_t)m * n + (size_t)i * n + j] = acc;
            }
    }
    int nd = 0;
    for (int d = 0; d < bat; d++)
        oshape[nd++] = batch[d];
    if (an != 1)
        oshape[nd++] = m;
    if (bn != 1)
        oshape[nd++] = n;
    return nd;
}

/* Checks matmul of fresh arrays of the given shapes and dtype against the
 * reference. */
static void check_matmul(mlx_dtype dt, int an, const int *as, int bn, const int *bs, double tol)
{
    double va[512], vb[512], want[1024];
    assert_true(count_of(an, as) <= 512 && count_of(bn, bs) <= 512);
    mlx_array a = make(dt, an, as, 1, va), b = make(dt, bn, bs, 2, vb);
    int os[16];
    int on = ref_matmul(va, an, as, vb, bn, bs, want, os);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    expect_values(r, dt, on, os, want, tol);
    mlx_array_free(a);
    mlx_array_free(b);
}

/* ---- matmul: shapes ---- */

static void test_matmul_2d_matches_numpy(void **state)
{
    (void)state;
    float a[12], b[20];
    for (int i = 0; i < 12; i++)
        a[i] = (float)i / 2;
    for (int i = 0; i < 20; i++)
        b[i] = (float)i - 7;
    static const double want[15] = {14, 17, 20, 23, 26, 18, 29, 40, 51, 62, 22, 41, 60, 79, 98};
    int as[2] = {3, 4}, bs[2] = {4, 5}, os[2] = {3, 5};
    mlx_array x = from_f32(a, 2, as), y = from_f32(b, 2, bs), r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, x, y, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    mlx_array_free(x);
    mlx_array_free(y);
}

static void test_matmul_2d_matches_reference(void **state)
{
    (void)state;
    int as[2] = {3, 4}, bs[2] = {4, 5};
    check_matmul(MLX_FLOAT32, 2, as, 2, bs, 0);
    int cs[2] = {17, 9}, ds[2] = {9, 23};
    check_matmul(MLX_FLOAT32, 2, cs, 2, ds, 0);
}

static void test_matmul_vector_times_matrix_drops_the_row_dim(void **state)
{
    (void)state;
    int as[1] = {4}, bs[2] = {4, 5};
    check_matmul(MLX_FLOAT32, 1, as, 2, bs, 0);
}

static void test_matmul_matrix_times_vector_drops_the_column_dim(void **state)
{
    (void)state;
    int as[2] = {3, 4}, bs[1] = {4};
    check_matmul(MLX_FLOAT32, 2, as, 1, bs, 0);
}

static void test_matmul_vector_times_vector_is_a_scalar(void **state)
{
    (void)state;
    int as[1] = {7}, bs[1] = {7};
    check_matmul(MLX_FLOAT32, 1, as, 1, bs, 0);
}

static void test_matmul_vector_cases_use_gemv(void **state)
{
    (void)state;
    int as[1] = {4}, bs[2] = {4, 5}, cs[2] = {3, 4}, ds[1] = {4};
    mc_blas_stats s0 = mc_blas_stats_get();
    check_matmul(MLX_FLOAT32, 1, as, 2, bs, 0);
    check_matmul(MLX_FLOAT32, 2, cs, 1, ds, 0);
    mc_blas_stats s1 = mc_blas_stats_get();
    assert_int_equal(s1.gemv - s0.gemv, 2);
    assert_int_equal(s1.gemm - s0.gemm, 0);
    assert_int_equal(s1.copies - s0.copies, 0);
}

static void test_matmul_batched_times_matrix_is_one_gemm(void **state)
{
    (void)state;
    int as[3] = {2, 3, 4}, bs[2] = {4, 5};
    mc_blas_stats s0 = mc_blas_stats_get();
    check_matmul(MLX_FLOAT32, 3, as, 2, bs, 0);
    mc_blas_stats s1 = mc_blas_stats_get();
    /* the batches of a are consecutive rows: one (6,4) x (4,5) product */
    assert_int_equal(s1.gemm - s0.gemm, 1);
}

static void test_matmul_batched_both_sides(void **state)
{
    (void)state;
    int as[3] = {3, 2, 4}, bs[3] = {3, 4, 5};
    mc_blas_stats s0 = mc_blas_stats_get();
    check_matmul(MLX_FLOAT32, 3, as, 3, bs, 0);
    mc_blas_stats s1 = mc_blas_stats_get();
    assert_int_equal(s1.gemm - s0.gemm, 3);
    int cs[3] = {3, 2, 4}, ds[1] = {4};
    check_matmul(MLX_FLOAT32, 3, cs, 1, ds, 0);
    int es[1] = {4}, fs[3] = {3, 4, 5};
    check_matmul(MLX_FLOAT32, 1, es, 3, fs, 0);
}

static void test_matmul_broadcasts_batch_dims(void **state)
{
    (void)state;
    int as[3] = {1, 3, 4}, bs[3] = {2, 4, 5};
    check_matmul(MLX_FLOAT32, 3, as, 3, bs, 0);
    int cs[2] = {3, 4}, ds[3] = {2, 4, 5};
    check_matmul(MLX_FLOAT32, 2, cs, 3, ds, 0);
    int es[4] = {2, 1, 3, 4}, fs[3] = {3, 4, 5};
    check_matmul(MLX_FLOAT32, 4, es, 3, fs, 0);
    int gs[3] = {2, 3, 4}, hs[3] = {1, 4, 5};
    check_matmul(MLX_FLOAT32, 3, gs, 3, hs, 0);
}

static void test_matmul_of_larger_random_matrices(void **state)
{
    (void)state;
    /* non-dyadic values: the sums round, so compare with a tolerance */
    enum { M = 37, K = 65, N = 29 };
    static float a[M * K], b[K * N];
    static double want[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)sin(0.37 * i);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)cos(0.11 * i + 1);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int p = 0; p < K; p++)
                acc += (double)a[i * K + p] * b[p * N + j];
            want[i * N + j] = acc;
        }
    int as[2] = {M, K}, bs[2] = {K, N}, os[2] = {M, N};
    mlx_array x = from_f32(a, 2, as), y = from_f32(b, 2, bs), r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, x, y, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 1e-5);
    mlx_array_free(x);
    mlx_array_free(y);
}

/* ---- matmul: layouts ---- */

static void test_matmul_transposed_inputs_go_to_blas_without_copies(void **state)
{
    (void)state;
    /* at = (64,48)^T and bt = (3,64)^T: both are column-major views */
    enum { M = 48, K = 64, N = 3 };
    double va[M * K], vb[K * N], ta[M * K], tb[K * N], want[M * N];
    int ash[2] = {K, M}, bsh[2] = {N, K};
    mlx_array a = make(MLX_FLOAT32, 2, ash, 3, va), b = make(MLX_FLOAT32, 2, bsh, 4, vb);
    for (int i = 0; i < M; i++)
        for (int p = 0; p < K; p++)
            ta[i * K + p] = va[p * M + i];
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++)
            tb[p * N + j] = vb[j * K + p];
    int ts[2] = {M, K}, us[2] = {K, N}, os[16];
    int on = ref_matmul(ta, 2, ts, tb, 2, us, want, os);
    mlx_array at = mlx_array_new(), bt = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_transpose(&at, a, S), 0);
    assert_int_equal(mlx_transpose(&bt, b, S), 0);
    assert_int_equal(mlx_array_eval(at), 0);
    assert_int_equal(mlx_array_eval(bt), 0);
    assert_int_equal(mlx_matmul(&r, at, bt, S), 0);

    size_t active0 = mc_mem_active();
    mc_mem_reset_peak();
    mc_blas_stats s0 = mc_blas_stats_get();
    assert_int_equal(mlx_array_eval(r), 0);
    mc_blas_stats s1 = mc_blas_stats_get();
    assert_int_equal(s1.copies - s0.copies, 0);
    assert_int_equal(s1.gemm - s0.gemm, 1);
    /* only the output was allocated: a copy of at would add 12 KiB */
    assert_true(mc_mem_peak() - active0 <= mc_data_capacity(M * N * sizeof(float)));
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(at);
    mlx_array_free(bt);
    mlx_array_free(a);
    mlx_array_free(b);
}

static void test_matmul_sliced_rows_go_to_blas_with_a_leading_dim(void **state)
{
    (void)state;
    /* a = big[1:4, 2:6] of a (5,7) array: row stride 7, column stride 1 */
    double vbig[35], vb[20], va[12], want[15];
    int bigs[2] = {5, 7}, bs[2] = {4, 5}, as[2] = {3, 4}, os[16];
    mlx_array big = make(MLX_FLOAT32, 2, bigs, 5, vbig), b = make(MLX_FLOAT32, 2, bs, 6, vb);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            va[i * 4 + j] = vbig[(i + 1) * 7 + j + 2];
    int64_t st[2] = {7, 1};
    mlx_array a = view_of(big, 2, as, 7 + 2, st);
    int on = ref_matmul(va, 2, as, vb, 2, bs, want, os);
    mlx_array r = mlx_array_new();
    mc_blas_stats s0 = mc_blas_stats_get();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mc_blas_stats_get().copies - s0.copies, 0);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    /* and the same slice transposed, as the right operand */
    double wt[12 * 3];
    int cs[2] = {3, 3};
    double vc[9];
    mlx_array c = make(MLX_FLOAT32, 2, cs, 7, vc);
    int64_t tst[2] = {1, 7};
    int ts[2] = {4, 3};
    mlx_array a_t = view_of(big, 2, ts, 7 + 2, tst); /* (4,3) view of big[1:4, 2:6]^T */
    double vat[12];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            vat[i * 3 + j] = va[j * 4 + i];
    on = ref_matmul(vat, 2, ts, vc, 2, cs, wt, os);
    r = mlx_array_new();
    s0 = mc_blas_stats_get();
    assert_int_equal(mlx_matmul(&r, a_t, c, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mc_blas_stats_get().copies - s0.copies, 0);
    expect_values(r, MLX_FLOAT32, on, os, wt, 0);
    mlx_array_free(a);
    mlx_array_free(a_t);
    mlx_array_free(big);
    mlx_array_free(b);
    mlx_array_free(c);
}

static void test_matmul_strided_columns_are_copied_first(void **state)
{
    (void)state;
    /* every other column of a (3,8) array: column stride 2, not BLAS-able */
    double vbig[24], vb[20], va[12], want[15];
    int bigs[2] = {3, 8}, bs[2] = {4, 5}, as[2] = {3, 4}, os[16];
    mlx_array big = make(MLX_FLOAT32, 2, bigs, 8, vbig), b = make(MLX_FLOAT32, 2, bs, 9, vb);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            va[i * 4 + j] = vbig[i * 8 + 2 * j];
    int64_t st[2] = {8, 2};
    mlx_array a = view_of(big, 2, as, 0, st);
    int on = ref_matmul(va, 2, as, vb, 2, bs, want, os);
    mlx_array r = mlx_array_new();
    mc_blas_stats s0 = mc_blas_stats_get();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mc_blas_stats_get().copies - s0.copies, 1);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(a);
    mlx_array_free(big);
    mlx_array_free(b);
}

static void test_matmul_strided_vector_goes_to_gemv_with_an_increment(void **state)
{
    (void)state;
    /* a column of a (4,3) array as the vector: stride 3 */
    double vbig[12], vb[20], va[4], want[5];
    int bigs[2] = {4, 3}, bs[2] = {4, 5}, as[1] = {4}, os[16];
    mlx_array big = make(MLX_FLOAT32, 2, bigs, 10, vbig), b = make(MLX_FLOAT32, 2, bs, 11, vb);
    for (int i = 0; i < 4; i++)
        va[i] = vbig[i * 3 + 1];
    int64_t st[1] = {3};
    mlx_array a = view_of(big, 1, as, 1, st);
    int on = ref_matmul(va, 1, as, vb, 2, bs, want, os);
    mlx_array r = mlx_array_new(), r2 = mlx_array_new();
    mc_blas_stats s0 = mc_blas_stats_get();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    /* and as the right operand of b^T (5,4) @ a */
    mlx_array btr = mlx_array_new();
    assert_int_equal(mlx_transpose(&btr, b, S), 0);
    assert_int_equal(mlx_matmul(&r2, btr, a, S), 0);
    assert_int_equal(mlx_array_eval(r2), 0);
    mc_blas_stats s1 = mc_blas_stats_get();
    assert_int_equal(s1.copies - s0.copies, 0);
    assert_int_equal(s1.gemv - s0.gemv, 2);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    expect_values(r2, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(btr);
    mlx_array_free(a);
    mlx_array_free(big);
    mlx_array_free(b);
}

static void test_matmul_batched_transposes_and_broadcast_views_are_not_copied(void **state)
{
    (void)state;
    /* a: (2,4,3) transposed to (2,3,4) by its last two axes; b: (4,5)
     * broadcast to (2,4,5) (batch stride 0) */
    double va0[24], vb[20], va[24], want[30];
    int a0s[3] = {2, 4, 3}, bs[2] = {4, 5}, as[3] = {2, 3, 4}, os[16];
    mlx_array a0 = make(MLX_FLOAT32, 3, a0s, 12, va0), b = make(MLX_FLOAT32, 2, bs, 13, vb);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 3; i++)
            for (int p = 0; p < 4; p++)
                va[t * 12 + i * 4 + p] = va0[t * 12 + p * 3 + i];
    int64_t st[3] = {12, 1, 3};
    mlx_array a = view_of(a0, 3, as, 0, st);
    int bbs[3] = {2, 4, 5};
    mlx_array bb = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_broadcast_to(&bb, b, bbs, 3, S), 0);
    assert_int_equal(mlx_array_eval(bb), 0);
    int on = ref_matmul(va, 3, as, vb, 2, bs, want, os);
    mc_blas_stats s0 = mc_blas_stats_get();
    assert_int_equal(mlx_matmul(&r, a, bb, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    mc_blas_stats s1 = mc_blas_stats_get();
    assert_int_equal(s1.copies - s0.copies, 0);
    assert_int_equal(s1.gemm - s0.gemm, 2);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(a);
    mlx_array_free(a0);
    mlx_array_free(b);
    mlx_array_free(bb);
}

/* ---- matmul: dtypes ---- */

static void test_matmul_float64(void **state)
{
    (void)state;
    int as[3] = {2, 3, 4}, bs[3] = {2, 4, 5}, cs[1] = {4};
    check_matmul(MLX_FLOAT64, 3, as, 3, bs, 0);
    check_matmul(MLX_FLOAT64, 1, cs, 3, bs, 0);
}

static void test_matmul_float16_computes_in_float32(void **state)
{
    (void)state;
    int as[3] = {2, 3, 4}, bs[2] = {4, 5}, cs[1] = {4};
    check_matmul(MLX_FLOAT16, 3, as, 2, bs, 1e-3);
    check_matmul(MLX_FLOAT16, 1, cs, 2, bs, 1e-3);
    /* a sum that float16 accumulation would lose: 2048 + 1 + 1 ... */
    enum { K = 64 };
    uint16_t a[K], b[K];
    for (int i = 0; i < K; i++) {
        a[i] = mc_f32_to_f16(i == 0 ? 1024.0f : 0.25f);
        b[i] = mc_f32_to_f16(i == 0 ? 2.0f : 0.25f);
    }
    int ks[1] = {K}, none[1] = {0};
    mlx_array x = mlx_array_new_data(a, ks, 1, MLX_FLOAT16), y = mlx_array_new_data(b, ks, 1, MLX_FLOAT16);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, x, y, S), 0);
    double want = 2048.0 + 63.0 / 16.0; /* 2051.9375: float16 rounds it to 2052 */
    double w16 = mc_f16_to_f32(mc_f32_to_f16((float)want));
    expect_values(r, MLX_FLOAT16, 0, none, &w16, 0);
    mlx_array_free(x);
    mlx_array_free(y);
}

static void test_matmul_bfloat16_computes_in_float32(void **state)
{
    (void)state;
    int as[2] = {3, 4}, bs[3] = {2, 4, 5};
    check_matmul(MLX_BFLOAT16, 2, as, 3, bs, 1.0 / 128);
}

static void test_matmul_promotes_mixed_dtypes(void **state)
{
    (void)state;
    double va[12], vb[20], want[15];
    int as[2] = {3, 4}, bs[2] = {4, 5}, os[16];
    mlx_array a = make(MLX_FLOAT16, 2, as, 14, va), b = make(MLX_FLOAT32, 2, bs, 15, vb);
    int on = ref_matmul(va, 2, as, vb, 2, bs, want, os);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(a);
    /* int32 with float32 promotes to float32 */
    a = make(MLX_INT32, 2, as, 16, va);
    on = ref_matmul(va, 2, as, vb, 2, bs, want, os);
    r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(a);
    mlx_array_free(b);
}

static void test_matmul_complex64_uses_cgemm(void **state)
{
    (void)state;
    /* (2,3) @ (3,2) complex, values small Gaussian integers */
    float a[12], b[12];
    for (int i = 0; i < 12; i++) {
        a[i] = (float)((i * 5) % 7 - 3);
        b[i] = (float)((i * 3) % 5 - 2);
    }
    int as[2] = {2, 3}, bs[2] = {3, 2};
    mlx_array x = mlx_array_new_data(a, as, 2, MLX_COMPLEX64), y = mlx_array_new_data(b, bs, 2, MLX_COMPLEX64);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, x, y, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    mc_array *o = mc_arr(r);
    assert_int_equal(o->dtype, MLX_COMPLEX64);
    assert_int_equal(o->ndim, 2);
    const float *got = o->data;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double re = 0, im = 0;
            for (int p = 0; p < 3; p++) {
                double ar = a[2 * (i * 3 + p)], ai = a[2 * (i * 3 + p) + 1];
                double br = b[2 * (p * 2 + j)], bi = b[2 * (p * 2 + j) + 1];
                re += ar * br - ai * bi;
                im += ar * bi + ai * br;
            }
            assert_true(got[2 * (i * 2 + j)] == (float)re);
            assert_true(got[2 * (i * 2 + j) + 1] == (float)im);
        }
    mlx_array_free(r);
    mlx_array_free(x);
    mlx_array_free(y);
}

/* ---- matmul: empty dims ---- */

static void test_matmul_empty_inner_dim_gives_zeros(void **state)
{
    (void)state;
    float none[1] = {0};
    int as[2] = {3, 0}, bs[2] = {0, 4}, os[2] = {3, 4};
    mlx_array a = mlx_array_new_data(none, as, 2, MLX_FLOAT32), b = mlx_array_new_data(none, bs, 2, MLX_FLOAT32);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    double want[12] = {0};
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    mlx_array_free(a);
    mlx_array_free(b);
}

static void test_matmul_empty_rows_give_an_empty_result(void **state)
{
    (void)state;
    float v[20] = {0};
    int as[2] = {0, 4}, bs[2] = {4, 5}, os[2] = {0, 5};
    mlx_array a = mlx_array_new_data(v, as, 2, MLX_FLOAT32), b = mlx_array_new_data(v, bs, 2, MLX_FLOAT32);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, a, b, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, NULL, 0);
    int cs[3] = {0, 3, 4}, ps[3] = {0, 3, 5};
    mlx_array c = mlx_array_new_data(v, cs, 3, MLX_FLOAT32);
    r = mlx_array_new();
    assert_int_equal(mlx_matmul(&r, c, b, S), 0);
    expect_values(r, MLX_FLOAT32, 3, ps, NULL, 0);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c);
}

/* ---- matmul: errors ---- */

static void test_matmul_inner_dim_mismatch_fails_with_mlx_message(void **state)
{
    (void)state;
    double v[64];
    int as[2] = {2, 3}, bs[2] = {4, 5}, cs[1] = {3};
    mlx_array a = make(MLX_FLOAT32, 2, as, 1, v), b = make(MLX_FLOAT32, 2, bs, 1, v);
    mlx_array c = make(MLX_FLOAT32, 1, cs, 1, v), r = mlx_array_new();
    assert_int_not_equal(mlx_matmul(&r, a, b, S), 0);
    expect_error("[matmul] Last dimension of first input with shape (2,3) must match second to last "
                 "dimension of second input with shape (4,5).");
    assert_null(r.ctx);
    assert_int_not_equal(mlx_matmul(&r, c, b, S), 0);
    expect_error("[matmul] Last dimension of first input with shape (1,3) must match second to last "
                 "dimension of second input with shape (4,5).");
    assert_int_not_equal(mlx_matmul(&r, b, c, S), 0);
    expect_error("[matmul] Last dimension of first input with shape (4,5) must match second to last "
                 "dimension of second input with shape (3,1).");
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c);
}

static void test_matmul_zero_dim_input_fails(void **state)
{
    (void)state;
    double v[8];
    int as[1] = {3};
    mlx_array a = make(MLX_FLOAT32, 1, as, 1, v), s = mlx_array_new_float(2.0f), r = mlx_array_new();
    assert_int_not_equal(mlx_matmul(&r, a, s, S), 0);
    expect_error("[matmul] Got 0 dimension input. Inputs must have at least one dimension.");
    assert_int_not_equal(mlx_matmul(&r, s, a, S), 0);
    expect_error("[matmul] Got 0 dimension input. Inputs must have at least one dimension.");
    assert_null(r.ctx);
    mlx_array_free(a);
    mlx_array_free(s);
}

static void test_matmul_integer_inputs_fail_as_in_mlx(void **state)
{
    (void)state;
    double v[64];
    int as[2] = {2, 3}, bs[2] = {3, 2};
    mlx_array a = make(MLX_INT32, 2, as, 1, v), b = make(MLX_INT32, 2, bs, 1, v), r = mlx_array_new();
    assert_int_not_equal(mlx_matmul(&r, a, b, S), 0);
    expect_error("[matmul] Only inexact types are supported but int32 and int32 were provided which "
                 "results in int32, which is not a floating point type.");
    assert_null(r.ctx);
    mlx_array_free(a);
    mlx_array_free(b);
}

static void test_matmul_unbroadcastable_batch_dims_fail(void **state)
{
    (void)state;
    double v[128];
    int as[3] = {2, 3, 4}, bs[3] = {3, 4, 5};
    mlx_array a = make(MLX_FLOAT32, 3, as, 1, v), b = make(MLX_FLOAT32, 3, bs, 1, v), r = mlx_array_new();
    assert_int_not_equal(mlx_matmul(&r, a, b, S), 0);
    expect_error("[matmul] Shapes (2) and (3) cannot be broadcast.");
    mlx_array_free(a);
    mlx_array_free(b);
}

static void test_matmul_empty_handle_fails(void **state)
{
    (void)state;
    double v[8];
    int as[1] = {3};
    mlx_array a = make(MLX_FLOAT32, 1, as, 1, v), r = mlx_array_new();
    assert_int_not_equal(mlx_matmul(&r, a, mlx_array_new(), S), 0);
    expect_error_prefix("[matmul]");
    assert_int_not_equal(mlx_matmul(NULL, a, a, S), 0);
    expect_error_prefix("[matmul]");
    mlx_array_free(a);
}

static void test_matmul_infer_reruns_on_new_shapes(void **state)
{
    (void)state;
    /* a shapeless compiled tape replays a node through infer alone */
    int as[3] = {2, 3, 4}, bs[2] = {4, 5}, cs[3] = {7, 1, 4}, ds[2] = {5, 4};
    mc_array *a = mc_array_alloc("test", MLX_FLOAT32, 3, as), *b = mc_array_alloc("test", MLX_FLOAT32, 2, bs);
    mc_array *c = mc_array_alloc("test", MLX_FLOAT32, 3, cs), *d = mc_array_alloc("test", MLX_FLOAT32, 2, ds);
    assert_true(a && b && c && d);
    mc_meta m;
    mc_array *in[3] = {a, b, NULL};
    assert_int_equal(mc_prims[MC_PRIM_MATMUL]->infer(&m, in, 2, NULL, "matmul"), 0);
    assert_int_equal(m.ndim, 3);
    assert_true(m.shape[0] == 2 && m.shape[1] == 3 && m.shape[2] == 5);
    in[0] = c;
    assert_int_equal(mc_prims[MC_PRIM_MATMUL]->infer(&m, in, 2, NULL, "matmul"), 0);
    assert_true(m.ndim == 3 && m.shape[0] == 7 && m.shape[1] == 1 && m.shape[2] == 5);
    in[1] = d;
    assert_int_not_equal(mc_prims[MC_PRIM_MATMUL]->infer(&m, in, 2, NULL, "matmul"), 0);
    expect_error("[matmul] Last dimension of first input with shape (7,1,4) must match second to last "
                 "dimension of second input with shape (5,4).");
    /* AddMM: c must still broadcast to the new output */
    mc_addmm_params p = {1, 1};
    in[0] = a;
    in[1] = b;
    in[2] = c; /* (7,1,4) against an output (2,3,5) */
    assert_int_not_equal(mc_prims[MC_PRIM_ADDMM]->infer(&m, in, 3, &p, "addmm"), 0);
    expect_error("[addmm] Shapes (7,1,4) and (2,3,5) cannot be broadcast.");
    mc_array_release(a);
    mc_array_release(b);
    mc_array_release(c);
    mc_array_release(d);
}

/* ---- addmm ---- */

/* alpha * a @ b + beta * c against the reference, c of shape cs. */
static void check_addmm(mlx_dtype dt, int an, const int *as, int bn, const int *bs, int cn, const int *cs,
                        float alpha, float beta, double tol)
{
    double va[256], vb[256], vc[256], ab[512], want[512];
    mlx_array a = make(dt, an, as, 21, va), b = make(dt, bn, bs, 22, vb), c = make(dt, cn, cs, 23, vc);
    int os[16];
    int on = ref_matmul(va, an, as, vb, bn, bs, ab, os);
    size_t n = count_of(on, os);
    for (size_t i = 0; i < n; i++) {
        /* c broadcast: index c by the trailing dims of the output */
        size_t rem = i, ci = 0, cstride = 1;
        for (int d = on - 1, e = cn - 1; d >= 0; d--, e--) {
            size_t idx = rem % (size_t)os[d];
            rem /= (size_t)os[d];
            if (e >= 0) {
                if (cs[e] != 1)
                    ci += idx * cstride;
                cstride *= (size_t)cs[e];
            }
        }
        want[i] = (double)alpha * ab[i] + (double)beta * vc[ci];
    }
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_addmm(&r, c, a, b, alpha, beta, S), 0);
    expect_values(r, dt, on, os, want, tol);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c);
}

static void test_addmm_scales_and_adds_a_broadcast_c(void **state)
{
    (void)state;
    int as[2] = {3, 4}, bs[2] = {4, 5}, c1[1] = {5}, c2[2] = {3, 5}, c3[2] = {3, 1}, c0[1] = {1};
    check_addmm(MLX_FLOAT32, 2, as, 2, bs, 1, c1, 2.0f, 0.5f, 0);
    check_addmm(MLX_FLOAT32, 2, as, 2, bs, 2, c2, 1.0f, 1.0f, 0);
    check_addmm(MLX_FLOAT32, 2, as, 2, bs, 2, c3, -0.5f, 2.0f, 0);
    check_addmm(MLX_FLOAT32, 2, as, 2, bs, 1, c0, 1.0f, 0.0f, 0);
    check_addmm(MLX_FLOAT32, 2, as, 2, bs, 0, c0, 0.25f, -1.0f, 0);
}

static void test_addmm_with_vectors_and_batches(void **state)
{
    (void)state;
    int v4[1] = {4}, bs[2] = {4, 5}, c5[1] = {5}, as[2] = {3, 4}, c3[1] = {3};
    check_addmm(MLX_FLOAT32, 1, v4, 2, bs, 1, c5, 2.0f, 3.0f, 0);
    check_addmm(MLX_FLOAT32, 2, as, 1, v4, 1, c3, 2.0f, 3.0f, 0);
    int ba[3] = {2, 3, 4}, bb[3] = {2, 4, 5}, cb[3] = {2, 1, 5};
    check_addmm(MLX_FLOAT32, 3, ba, 3, bb, 3, cb, 0.5f, 0.5f, 0);
    check_addmm(MLX_FLOAT32, 3, ba, 2, bs, 1, c5, 1.0f, 2.0f, 0);
    check_addmm(MLX_FLOAT64, 3, ba, 3, bb, 2, (int[2]){3, 5}, 0.5f, -1.0f, 0);
}

static void test_addmm_half_types_compute_in_float32(void **state)
{
    (void)state;
    int as[2] = {3, 4}, bs[2] = {4, 5}, cs[1] = {5};
    check_addmm(MLX_FLOAT16, 2, as, 2, bs, 1, cs, 2.0f, 0.5f, 1e-3);
    check_addmm(MLX_BFLOAT16, 2, as, 2, bs, 1, cs, 2.0f, 0.5f, 1.0 / 128);
}

static void test_addmm_accumulates_into_a_donated_c(void **state)
{
    (void)state;
    /* c is an intermediate no one else holds: its buffer becomes the output */
    double va[12], vb[20], vc[15], ab[15], want[15];
    int as[2] = {3, 4}, bs[2] = {4, 5}, cs[2] = {3, 5}, os[16];
    mlx_array a = make(MLX_FLOAT32, 2, as, 31, va), b = make(MLX_FLOAT32, 2, bs, 32, vb);
    mlx_array c0 = make(MLX_FLOAT32, 2, cs, 33, vc), c = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_add(&c, c0, c0, S), 0);
    int on = ref_matmul(va, 2, as, vb, 2, bs, ab, os);
    for (int i = 0; i < 15; i++)
        want[i] = 3.0 * ab[i] + 0.5 * (2 * vc[i]);
    assert_int_equal(mlx_addmm(&r, c, a, b, 3.0f, 0.5f, S), 0);
    mlx_array_free(c);
    expect_values(r, MLX_FLOAT32, on, os, want, 0);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c0);
}

static void test_addmm_empty_inner_dim_gives_beta_c(void **state)
{
    (void)state;
    float none[1] = {0}, cv[4] = {1, -2, 3, 0.5f};
    int as[2] = {3, 0}, bs[2] = {0, 4}, cs[1] = {4}, os[2] = {3, 4};
    mlx_array a = mlx_array_new_data(none, as, 2, MLX_FLOAT32), b = mlx_array_new_data(none, bs, 2, MLX_FLOAT32);
    mlx_array c = mlx_array_new_data(cv, cs, 1, MLX_FLOAT32), r = mlx_array_new();
    assert_int_equal(mlx_addmm(&r, c, a, b, 5.0f, 2.0f, S), 0);
    double want[12];
    for (int i = 0; i < 12; i++)
        want[i] = 2.0 * cv[i % 4];
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    r = mlx_array_new();
    assert_int_equal(mlx_addmm(&r, c, a, b, 5.0f, 1.0f, S), 0);
    for (int i = 0; i < 12; i++)
        want[i] = cv[i % 4];
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c);
}

static void test_addmm_complex_is_alpha_ab_plus_beta_c(void **state)
{
    (void)state;
    /* MLX composes complex addmm from matmul, multiply and add */
    float a[4] = {1, 2, 0, -1}, b[4] = {3, 0, 1, 1}, c[2] = {0.5f, -0.5f};
    int as[1] = {2}, bs[1] = {2}, none[1] = {0};
    mlx_array x = mlx_array_new_data(a, as, 1, MLX_COMPLEX64), y = mlx_array_new_data(b, bs, 1, MLX_COMPLEX64);
    mlx_array z = mlx_array_new_data(c, none, 0, MLX_COMPLEX64), r = mlx_array_new();
    assert_int_equal(mlx_addmm(&r, z, x, y, 2.0f, 4.0f, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    mc_array *o = mc_arr(r);
    assert_int_equal(o->dtype, MLX_COMPLEX64);
    assert_int_equal(o->ndim, 0);
    /* (1+2i)(3) + (-i)(1+i) = 3+6i + 1-i = 4+5i; 2*(4+5i) + 4*(0.5-0.5i) = 10+8i */
    const float *got = o->data;
    assert_true(got[0] == 10.0f && got[1] == 8.0f);
    mlx_array_free(r);
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(z);
}

static void test_addmm_errors(void **state)
{
    (void)state;
    double v[128];
    int as[2] = {3, 4}, bs[2] = {4, 5}, bad[2] = {3, 5}, c2[1] = {3}, c3[3] = {2, 3, 5};
    mlx_array a = make(MLX_FLOAT32, 2, as, 1, v), b = make(MLX_FLOAT32, 2, bs, 1, v);
    mlx_array x = make(MLX_FLOAT32, 2, bad, 1, v), c = make(MLX_FLOAT32, 1, c2, 1, v);
    mlx_array big = make(MLX_FLOAT32, 3, c3, 1, v), s = mlx_array_new_float(1.0f);
    mlx_array ia = make(MLX_INT32, 2, as, 1, v), ib = make(MLX_INT32, 2, bs, 1, v), r = mlx_array_new();
    assert_int_not_equal(mlx_addmm(&r, s, a, x, 1, 1, S), 0);
    expect_error("[addmm] Last dimension of first input with shape (3,4) must match second to last "
                 "dimension of second input with shape (3,5).");
    assert_int_not_equal(mlx_addmm(&r, s, s, b, 1, 1, S), 0);
    expect_error("[addmm] Got 0 dimension input. Inputs must have at least one dimension.");
    assert_int_not_equal(mlx_addmm(&r, c, a, b, 1, 1, S), 0);
    expect_error("[addmm] Shapes (3) and (3,5) cannot be broadcast.");
    assert_int_not_equal(mlx_addmm(&r, big, a, b, 1, 1, S), 0);
    expect_error("[addmm] input c must broadcast to the output shape");
    assert_int_not_equal(mlx_addmm(&r, ia, ia, ib, 1, 1, S), 0);
    expect_error("[addmm] Only real floating point types are supported but int32, int32 and int32 were "
                 "provided which results in int32, which is not a real floating point type.");
    assert_null(r.ctx);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(x);
    mlx_array_free(c);
    mlx_array_free(big);
    mlx_array_free(s);
    mlx_array_free(ia);
    mlx_array_free(ib);
}

/* ---- inner, outer, tensordot, kron (numpy 1.24 results) ---- */

static void test_inner_matches_numpy(void **state)
{
    (void)state;
    float a[6], b[12];
    for (int i = 0; i < 6; i++)
        a[i] = (float)i;
    for (int i = 0; i < 12; i++)
        b[i] = (float)i - 5;
    static const double want[8] = {-10, -1, 8, 17, -46, -10, 26, 62};
    int as[2] = {2, 3}, bs[2] = {4, 3}, os[2] = {2, 4};
    mlx_array x = from_f32(a, 2, as), y = from_f32(b, 2, bs), r = mlx_array_new();
    mc_blas_stats s0 = mc_blas_stats_get();
    assert_int_equal(mlx_inner(&r, x, y, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    /* b enters the product transposed, as a view */
    assert_int_equal(mc_blas_stats_get().copies - s0.copies, 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    /* a 0-d operand multiplies */
    mlx_array two = mlx_array_new_float(2.0f);
    r = mlx_array_new();
    assert_int_equal(mlx_inner(&r, two, x, S), 0);
    double w2[6] = {0, 2, 4, 6, 8, 10};
    expect_values(r, MLX_FLOAT32, 2, as, w2, 0);
    r = mlx_array_new();
    int cs[2] = {2, 4};
    mlx_array z = from_f32(b, 2, cs);
    assert_int_not_equal(mlx_inner(&r, x, z, S), 0);
    expect_error("[inner] a and b must have the same last dimension.");
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(z);
    mlx_array_free(two);
}

static void test_outer_matches_numpy(void **state)
{
    (void)state;
    float a[3] = {1, 2, 3}, b[4] = {1, -1, 2, 0.5f};
    static const double want[12] = {1, -1, 2, 0.5, 2, -2, 4, 1, 3, -3, 6, 1.5};
    int as[1] = {3}, bs[2] = {2, 2}, os[2] = {3, 4};
    mlx_array x = from_f32(a, 1, as), y = from_f32(b, 2, bs), r = mlx_array_new();
    assert_int_equal(mlx_outer(&r, x, y, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    mlx_array_free(x);
    mlx_array_free(y);
}

static void test_tensordot_axis_matches_numpy(void **state)
{
    (void)state;
    float a[24], b[60];
    for (int i = 0; i < 24; i++)
        a[i] = (float)i / 8;
    for (int i = 0; i < 60; i++)
        b[i] = (float)i / 16 - 1;
    static const double want[10] = {11.515625, 12.03125, 12.546875, 13.0625, 13.578125,
                                    24.453125, 26.09375, 27.734375, 29.375,  31.015625};
    int as[3] = {2, 3, 4}, bs[3] = {3, 4, 5}, os[2] = {2, 5};
    mlx_array x = from_f32(a, 3, as), y = from_f32(b, 3, bs), r = mlx_array_new();
    assert_int_equal(mlx_tensordot_axis(&r, x, y, 2, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    /* axis 0 is the outer product */
    r = mlx_array_new();
    assert_int_equal(mlx_tensordot_axis(&r, x, y, 0, S), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mlx_array_ndim(r), 6);
    mlx_array_free(r);
    r = mlx_array_new();
    assert_int_not_equal(mlx_tensordot_axis(&r, x, y, -1, S), 0);
    expect_error("[tensordot] axis must be greater or equal to 0.");
    assert_int_not_equal(mlx_tensordot_axis(&r, x, y, 4, S), 0);
    expect_error("[tensordot] axis must be less than the number of dimensions of a and b.");
    assert_int_not_equal(mlx_tensordot_axis(&r, x, x, 1, S), 0);
    expect_error("[tensordot] a and b must have the same shape on the contracted axes.");
    mlx_array_free(x);
    mlx_array_free(y);
}

static void test_tensordot_axes_lists_match_numpy(void **state)
{
    (void)state;
    float a[60], b[24];
    for (int i = 0; i < 60; i++)
        a[i] = (float)i / 8;
    for (int i = 0; i < 24; i++)
        b[i] = (float)i / 4 - 2;
    static const double want[10] = {55.0, 65.3125, 56.125, 66.8125, 57.25, 68.3125, 58.375, 69.8125, 59.5, 71.3125};
    int as[3] = {3, 4, 5}, bs[3] = {4, 3, 2}, os[2] = {5, 2};
    int axa[2] = {1, 0}, axb[2] = {0, 1}, neg[2] = {-2, -3};
    mlx_array x = from_f32(a, 3, as), y = from_f32(b, 3, bs), r = mlx_array_new();
    assert_int_equal(mlx_tensordot(&r, x, y, axa, 2, axb, 2, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    r = mlx_array_new();
    assert_int_equal(mlx_tensordot(&r, x, y, neg, 2, axb, 2, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    r = mlx_array_new();
    assert_int_not_equal(mlx_tensordot(&r, x, y, axa, 2, axb, 1, S), 0);
    expect_error("[tensordot] axes must have the same size.");
    int far[1] = {3};
    assert_int_not_equal(mlx_tensordot(&r, x, y, far, 1, axb, 1, S), 0);
    expect_error("[tensordot] Axis 3 is out of bounds for array with 3 dimensions.");
    int same[2] = {0, 0};
    assert_int_not_equal(mlx_tensordot(&r, x, y, same, 2, axb, 2, S), 0);
    expect_error_prefix("[tensordot]");
    assert_null(r.ctx);
    mlx_array_free(x);
    mlx_array_free(y);
}

static void test_kron_matches_numpy(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[6] = {0, 5, 1, 6, 7, -1};
    static const double want[24] = {0, 5, 1, 0, 10, 2, 6, 7, -1, 12, 14, -2,
                                    0, 15, 3, 0, 20, 4, 18, 21, -3, 24, 28, -4};
    int as[2] = {2, 2}, bs[2] = {2, 3}, os[2] = {4, 6};
    mlx_array x = from_f32(a, 2, as), y = from_f32(b, 2, bs), r = mlx_array_new();
    assert_int_equal(mlx_kron(&r, x, y, S), 0);
    expect_values(r, MLX_FLOAT32, 2, os, want, 0);
    /* different ndims, integer dtype kept: kron([1,2,3], [[1],[10]]) */
    int32_t p[3] = {1, 2, 3}, q[2] = {1, 10};
    int ps[1] = {3}, qs[2] = {2, 1}, ks[2] = {2, 3};
    static const double w2[6] = {1, 2, 3, 10, 20, 30};
    mlx_array u = mlx_array_new_data(p, ps, 1, MLX_INT32), w = mlx_array_new_data(q, qs, 2, MLX_INT32);
    r = mlx_array_new();
    assert_int_equal(mlx_kron(&r, u, w, S), 0);
    expect_values(r, MLX_INT32, 2, ks, w2, 0);
    int es[2] = {0, 3};
    mlx_array e = mlx_array_new_data(b, es, 2, MLX_FLOAT32);
    r = mlx_array_new();
    assert_int_not_equal(mlx_kron(&r, x, e, S), 0);
    expect_error("[kron] Input arrays cannot be empty.");
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(u);
    mlx_array_free(w);
    mlx_array_free(e);
}

/* ---- shapeless compile ---- */

/* (a, b, c) -> matmul(a, b), addmm(c, a, b, 2, 0.5): one node each, whose
 * infer follows new shapes when the compiled tape is replayed. */
static int shapeless_runs;

static int shapeless_body(mlx_vector_array *res, const mlx_vector_array in)
{
    shapeless_runs++;
    mlx_array a = mlx_array_new(), b = mlx_array_new(), c = mlx_array_new(), m = mlx_array_new(),
              am = mlx_array_new();
    int rc = mlx_vector_array_get(&a, in, 0) || mlx_vector_array_get(&b, in, 1) ||
             mlx_vector_array_get(&c, in, 2) || mlx_matmul(&m, a, b, S) ||
             mlx_addmm(&am, c, a, b, 2.0f, 0.5f, S);
    if (!rc) {
        mlx_array outs[2] = {m, am};
        rc = mlx_vector_array_set_data(res, outs, 2);
    }
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c);
    mlx_array_free(m);
    mlx_array_free(am);
    return rc;
}

static void test_shapeless_compile_replays_matmul_on_new_shapes(void **state)
{
    (void)state;
    mlx_closure body = mlx_closure_new_func(shapeless_body), cf = mlx_closure_new();
    assert_int_equal(mlx_compile(&cf, body, true), 0);
    shapeless_runs = 0;
    const int shapes[3][4] = {{2, 3, 4, 5}, {6, 1, 4, 3}, {1, 5, 7, 2}}; /* batch, m, k, n */
    for (int t = 0; t < 3; t++) {
        const int *d = shapes[t];
        int as[3] = {d[0], d[1], d[2]}, bs[2] = {d[2], d[3]}, cs[1] = {d[3]}, os[16];
        double va[256], vb[256], vc[16], ab[256], want[256];
        mlx_array a = make(MLX_FLOAT32, 3, as, 51, va), b = make(MLX_FLOAT32, 2, bs, 52, vb);
        mlx_array c = make(MLX_FLOAT32, 1, cs, 53, vc);
        int on = ref_matmul(va, 3, as, vb, 2, bs, ab, os);
        size_t n = count_of(on, os);
        for (size_t i = 0; i < n; i++)
            want[i] = 2.0 * ab[i] + 0.5 * vc[i % (size_t)d[3]];
        mlx_array ins[3] = {a, b, c};
        mlx_vector_array in = mlx_vector_array_new_data(ins, 3), out = mlx_vector_array_new();
        assert_int_equal(mlx_closure_apply(&out, cf, in), 0);
        assert_int_equal(mlx_vector_array_size(out), 2);
        mlx_array m = mlx_array_new(), am = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&m, out, 0), 0);
        assert_int_equal(mlx_vector_array_get(&am, out, 1), 0);
        expect_values(m, MLX_FLOAT32, on, os, ab, 0);
        expect_values(am, MLX_FLOAT32, on, os, want, 0);
        mlx_vector_array_free(in);
        mlx_vector_array_free(out);
        mlx_array_free(a);
        mlx_array_free(b);
        mlx_array_free(c);
    }
    assert_int_equal(shapeless_runs, 1); /* traced once, replayed twice */
    mlx_closure_free(cf);
    mlx_closure_free(body);
}

/* ---- threads ---- */

static void test_openblas_runs_one_thread_whatever_the_pool_count(void **state)
{
    (void)state;
    int before = mlx_cpu_get_num_threads();
    if (mc_blas_threads() == 0)
        skip(); /* another cblas: its threading is its own */
    assert_int_equal(mc_blas_threads(), 1);
    assert_int_equal(mlx_cpu_set_num_threads(3), 0);
    assert_int_equal(mc_blas_threads(), 1);
    int as[2] = {3, 4}, bs[2] = {4, 5};
    check_matmul(MLX_FLOAT32, 2, as, 2, bs, 0);
    assert_int_equal(mlx_cpu_set_num_threads(before), 0);
    assert_int_equal(mc_blas_threads(), 1);
}

/* A float32 (rows x cols) of small integers, so that every product below
 * is exact; vals gets a copy in doubles. */
static mlx_array int_matrix(int rows, int cols, int seed, double *vals)
{
    float *v = test_malloc(sizeof(float) * (size_t)rows * (size_t)cols);
    for (int i = 0; i < rows * cols; i++) {
        v[i] = (float)((i * 5 + i / 11 + seed * 3) % 7 - 3);
        vals[i] = v[i];
    }
    int shape[2] = {rows, cols};
    mlx_array a = mlx_array_new_data(v, shape, 2, MLX_FLOAT32);
    test_free(v);
    return a;
}

/* op(A) (m x k) @ op(B) (k x n), each operand stored transposed when asked
 * (a transposed view), on 2 threads: large enough that the product is
 * split across the pool (by rows when m >= n, else by columns). */
static void check_split_product(int m, int n, int k, bool ta, bool tb)
{
    double *va = test_malloc(sizeof(double) * (size_t)m * (size_t)k);
    double *vb = test_malloc(sizeof(double) * (size_t)k * (size_t)n);
    double *want = test_malloc(sizeof(double) * (size_t)m * (size_t)n);
    mlx_array a = ta ? int_matrix(k, m, 1, va) : int_matrix(m, k, 1, va);
    mlx_array b = tb ? int_matrix(n, k, 2, vb) : int_matrix(k, n, 2, vb);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int t = 0; t < k; t++)
                acc += (ta ? va[(size_t)t * m + i] : va[(size_t)i * k + t]) *
                       (tb ? vb[(size_t)j * k + t] : vb[(size_t)t * n + j]);
            want[(size_t)i * n + j] = acc;
        }
    mlx_array opa = mlx_array_new(), opb = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(ta ? mlx_transpose(&opa, a, S) : mlx_array_set(&opa, a), 0);
    assert_int_equal(tb ? mlx_transpose(&opb, b, S) : mlx_array_set(&opb, b), 0);
    assert_int_equal(mlx_matmul(&r, opa, opb, S), 0);
    int os[2] = {m, n};
    expect_values(r, MLX_FLOAT32, 2, os, want, 0); /* frees r */
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(opa);
    mlx_array_free(opb);
    test_free(va);
    test_free(vb);
    test_free(want);
}

static void test_large_products_split_across_the_pool_match_the_reference(void **state)
{
    (void)state;
    int before = mlx_cpu_get_num_threads();
    assert_int_equal(mlx_cpu_set_num_threads(2), 0);
    for (int t = 0; t < 4; t++) {
        bool ta = t & 1, tb = t & 2;
        check_split_product(200, 80, 96, ta, tb); /* by rows */
        check_split_product(97, 90, 130, ta, tb); /* by rows, odd count */
        check_split_product(40, 121, 300, ta, tb); /* by columns, odd count */
    }
    assert_int_equal(mlx_cpu_set_num_threads(before), 0);
}

/* ---- failures ---- */

#ifdef MC_FAULT_INJECTION
/* Builds and evaluates `which` under an allocator failing after n
 * allocations; returns the op's or eval's result code. */
static int run_failing(int which, long n, mlx_array a, mlx_array b, mlx_array c)
{
    int axa[2] = {1, 0}, axb[2] = {0, 1};
    mlx_array r = mlx_array_new();
    mc_fault_fail_after(n);
    int rc = which == 0 ? mlx_addmm(&r, c, a, b, 2.0f, 0.5f, S)
                        : mlx_tensordot(&r, a, c, axa, 2, axb, 2, S);
    if (rc == 0)
        rc = mlx_array_eval(r);
    mc_fault_fail_after(-1);
    mlx_array_free(r);
    return rc;
}
#endif

static void test_failed_allocations_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifdef MC_FAULT_INJECTION
    /* float16 operands and a transposed b: scratch copies, conversions
     * and an accumulator, each an allocation that can fail */
    double va[24], vb[20], vc[20], vd[24];
    int as[3] = {2, 3, 4}, bs[2] = {5, 4};
    int c5[1] = {5}, c3[3] = {3, 2, 4};
    mlx_array a = make(MLX_FLOAT16, 3, as, 41, va), b0 = make(MLX_FLOAT16, 2, bs, 42, vb);
    mlx_array c = make(MLX_FLOAT16, 1, c5, 43, vc), d = make(MLX_FLOAT16, 3, c3, 44, vd);
    mlx_array b = mlx_array_new();
    assert_int_equal(mlx_transpose(&b, b0, S), 0);
    assert_int_equal(mlx_array_eval(b), 0);
    for (int which = 0; which < 2; which++) {
        bool ok = false;
        for (long n = 0; n < 500 && !ok; n++) {
            error_count = 0;
            ok = run_failing(which, n, a, b, which == 0 ? c : d) == 0;
            if (!ok)
                assert_int_equal(error_count, 1);
            error_count = 0;
        }
        assert_true(ok);
    }
    mlx_array_free(a);
    mlx_array_free(b0);
    mlx_array_free(b);
    mlx_array_free(c);
    mlx_array_free(d);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, test_teardown)
        T(test_matmul_2d_matches_numpy),
        T(test_matmul_2d_matches_reference),
        T(test_matmul_vector_times_matrix_drops_the_row_dim),
        T(test_matmul_matrix_times_vector_drops_the_column_dim),
        T(test_matmul_vector_times_vector_is_a_scalar),
        T(test_matmul_vector_cases_use_gemv),
        T(test_matmul_batched_times_matrix_is_one_gemm),
        T(test_matmul_batched_both_sides),
        T(test_matmul_broadcasts_batch_dims),
        T(test_matmul_of_larger_random_matrices),
        T(test_matmul_transposed_inputs_go_to_blas_without_copies),
        T(test_matmul_sliced_rows_go_to_blas_with_a_leading_dim),
        T(test_matmul_strided_columns_are_copied_first),
        T(test_matmul_strided_vector_goes_to_gemv_with_an_increment),
        T(test_matmul_batched_transposes_and_broadcast_views_are_not_copied),
        T(test_matmul_float64),
        T(test_matmul_float16_computes_in_float32),
        T(test_matmul_bfloat16_computes_in_float32),
        T(test_matmul_promotes_mixed_dtypes),
        T(test_matmul_complex64_uses_cgemm),
        T(test_matmul_empty_inner_dim_gives_zeros),
        T(test_matmul_empty_rows_give_an_empty_result),
        T(test_matmul_inner_dim_mismatch_fails_with_mlx_message),
        T(test_matmul_zero_dim_input_fails),
        T(test_matmul_integer_inputs_fail_as_in_mlx),
        T(test_matmul_unbroadcastable_batch_dims_fail),
        T(test_matmul_empty_handle_fails),
        T(test_matmul_infer_reruns_on_new_shapes),
        T(test_addmm_scales_and_adds_a_broadcast_c),
        T(test_addmm_with_vectors_and_batches),
        T(test_addmm_half_types_compute_in_float32),
        T(test_addmm_accumulates_into_a_donated_c),
        T(test_addmm_empty_inner_dim_gives_beta_c),
        T(test_addmm_complex_is_alpha_ab_plus_beta_c),
        T(test_addmm_errors),
        T(test_inner_matches_numpy),
        T(test_outer_matches_numpy),
        T(test_tensordot_axis_matches_numpy),
        T(test_tensordot_axes_lists_match_numpy),
        T(test_kron_matches_numpy),
        T(test_shapeless_compile_replays_matmul_on_new_shapes),
        T(test_openblas_runs_one_thread_whatever_the_pool_count),
        T(test_large_products_split_across_the_pool_match_the_reference),
        T(test_failed_allocations_report_once_and_leak_nothing),
#undef T
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
