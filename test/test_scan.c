/* The scans suite: cumsum, cumprod, cummax, cummin and logcumsumexp
 * (src/ops/scan.c, the Scan primitive in src/graph/prims_scan.c, the
 * kernels of simd/scan_k.c and simd/reduce_complex.c).
 *
 * - every op and real dtype along each axis (positive and negative),
 *   forward and reverse, inclusive and exclusive, on contiguous,
 *   transposed, strided and broadcast inputs, against numpy 1.24
 *   (test/reduce_cases.py wrote test/scan_cases.h);
 * - NaN propagation, -0.0, the exclusive identities, complex64, large
 *   threaded scans against float64, the output reusing a dying input;
 * - every ISA's row and column scan kernels against the scalar reference;
 * - the errors (one message each, the result handle untouched). */
#include <complex.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "runtime/alloc.h"
#include "simd/reduce.h"
#include "test_util.h"

#define S tu_stream()
#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define OK(call) assert_int_equal((call), 0)

typedef struct scan_case {
    const char *op;
    int dtype, layout, axis, reverse, inclusive, out_dtype, offset;
} scan_case;
#include "scan_cases.h"

static void tolerance(mlx_dtype d, double *rtol, double *atol)
{
    *rtol = *atol = 0;
    if (d == MLX_FLOAT16) {
        *rtol = 2e-3;
        *atol = 1e-3;
    } else if (d == MLX_BFLOAT16) {
        *rtol = 1.6e-2;
        *atol = 1e-2;
    } else if (d == MLX_FLOAT32) {
        *rtol = 2e-6;
        *atol = 1e-6;
    } else if (d == MLX_FLOAT64) {
        *rtol = *atol = 1e-12;
    }
}

static void check_values(mlx_array r, mlx_dtype dtype, const double *want, size_t n, const char *what)
{
    OK(mlx_array_eval(r));
    if (mlx_array_dtype(r) != dtype)
        fail_msg("%s: dtype %d, expected %d", what, (int)mlx_array_dtype(r), (int)dtype);
    assert_int_equal(mlx_array_size(r), n);
    double rtol, atol;
    tolerance(dtype, &rtol, &atol);
    for (size_t i = 0; i < n; i++) {
        double got = tu_get(r, i), w = want[i];
        bool ok = isnan(w) ? isnan(got) : isinf(w) ? got == w : fabs(got - w) <= atol + rtol * fabs(w);
        if (!ok)
            fail_msg("%s: element %zu is %.17g, expected %.17g", what, i, got, w);
    }
}

typedef int (*scan_fn)(mlx_array *, const mlx_array, int, bool, bool, const mlx_stream);

static scan_fn scan_of(const char *op)
{
    if (!strcmp(op, "cumsum"))
        return mlx_cumsum;
    if (!strcmp(op, "cumprod"))
        return mlx_cumprod;
    if (!strcmp(op, "cummax"))
        return mlx_cummax;
    if (!strcmp(op, "cummin"))
        return mlx_cummin;
    return mlx_logcumsumexp;
}

static void test_scans_match_numpy_for_every_dtype_axis_and_direction(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_(scan_cases); i++) {
        const scan_case *c = &scan_cases[i];
        char what[128];
        snprintf(what, sizeof what, "case %zu: %s dtype %d layout %d axis %d reverse %d inclusive %d", i, c->op,
                 c->dtype, c->layout, c->axis, c->reverse, c->inclusive);
        mlx_array x = tu_case_input(c->dtype, c->layout, 2, 3, 4);
        mlx_array r = mlx_array_new();
        if (scan_of(c->op)(&r, x, c->axis, c->reverse, c->inclusive, S) != 0)
            fail_msg("%s: failed: %s", what, tu_last_error());
        assert_true(tu_shape_is(r, 3, (const int[]){2, 3, 4}));
        check_values(r, c->out_dtype, scan_vals + c->offset, 24, what);
        TU_FREE(x, r);
    }
}

static void test_nan_propagates_and_identities_start_exclusive_scans(void **state)
{
    (void)state;
    mlx_array x = tu_f32((const float[]){2, NAN, 1, -0.0f}, (const int[]){4}, 1), r = mlx_array_new();
    OK(mlx_cummax(&r, x, 0, false, true, S));
    check_values(r, MLX_FLOAT32, (const double[]){2, NAN, NAN, NAN}, 4, "cummax NaN");
    OK(mlx_cummin(&r, x, 0, true, true, S));
    check_values(r, MLX_FLOAT32, (const double[]){NAN, NAN, -0.0, -0.0}, 4, "reverse cummin NaN");
    OK(mlx_cummin(&r, x, 0, false, false, S));
    check_values(r, MLX_FLOAT32, (const double[]){INFINITY, 2, NAN, NAN}, 4, "exclusive cummin");
    OK(mlx_logcumsumexp(&r, x, 0, true, false, S));
    OK(mlx_array_eval(r));
    assert_true(tu_get(r, 3) == -INFINITY && tu_get(r, 2) == -0.0 && isnan(tu_get(r, 0)));
    /* an inclusive sum keeps a -0.0 first element, as MLX copies it */
    mlx_array z = tu_f32((const float[]){-0.0f, 1}, (const int[]){2}, 1);
    OK(mlx_cumsum(&r, z, 0, false, true, S));
    OK(mlx_array_eval(r));
    assert_true(signbit(tu_get(r, 0)));
    OK(mlx_cumsum(&r, z, 0, false, false, S));
    OK(mlx_array_eval(r));
    assert_false(signbit(tu_get(r, 0)));
    /* integer limits start exclusive max / min scans */
    mlx_array u = tu_array_of(MLX_UINT16, (const double[]){5, 3}, (const int[]){2}, 1);
    OK(mlx_cummin(&r, u, 0, false, false, S));
    check_values(r, MLX_UINT16, (const double[]){65535, 5}, 2, "exclusive uint16 cummin");
    OK(mlx_cummax(&r, u, 0, true, false, S));
    check_values(r, MLX_UINT16, (const double[]){3, 0}, 2, "exclusive reverse uint16 cummax");
    /* bool: sums count in int32, products are and */
    mlx_array b = tu_array_of(MLX_BOOL, (const double[]){1, 1, 0, 1}, (const int[]){4}, 1);
    OK(mlx_cumsum(&r, b, 0, false, true, S));
    check_values(r, MLX_INT32, (const double[]){1, 2, 2, 3}, 4, "bool cumsum");
    OK(mlx_cumprod(&r, b, 0, false, true, S));
    check_values(r, MLX_BOOL, (const double[]){1, 1, 0, 0}, 4, "bool cumprod");
    /* integers wrap in their own width */
    mlx_array i8 = tu_array_of(MLX_INT8, (const double[]){100, 100, -100}, (const int[]){3}, 1);
    OK(mlx_cumsum(&r, i8, 0, false, true, S));
    check_values(r, MLX_INT8, (const double[]){100, -56, 100}, 3, "int8 cumsum wraps");
    TU_FREE(x, z, u, b, i8, r);
}

static void test_complex64_scans(void **state)
{
    (void)state;
    const float _Complex v[] = {1 + 1 * I, 2 - 1 * I, 0 + 3 * I, 1 + 0 * I};
    mlx_array x = mlx_array_new_data(v, (const int[]){2, 2}, 2, MLX_COMPLEX64), r = mlx_array_new();
    OK(mlx_cumsum(&r, x, 0, false, true, S));
    OK(mlx_array_eval(r));
    const float _Complex *d = mlx_array_data_complex64(r);
    assert_true(d[0] == v[0] && d[1] == v[1] && d[2] == v[0] + v[2] && d[3] == v[1] + v[3]);
    OK(mlx_cumprod(&r, x, 1, true, false, S));
    OK(mlx_array_eval(r));
    d = mlx_array_data_complex64(r);
    assert_true(d[0] == v[1] && d[1] == 1 && d[2] == v[3] && d[3] == 1);
    OK(mlx_cummax(&r, x, 1, false, true, S));
    OK(mlx_array_eval(r));
    d = mlx_array_data_complex64(r);
    assert_true(d[0] == v[0] && d[1] == v[1] && d[2] == v[2] && d[3] == v[3]);
    assert_int_not_equal(mlx_logcumsumexp(&r, x, 0, false, true, S), 0);
    tu_expect_error("[logcumsumexp]");
    TU_FREE(x, r);
}

/* Scans of a (rows, cols) float32 array along each axis against float64
 * running sums, large enough for the threaded paths. */
static void test_large_scans_match_float64(void **state)
{
    (void)state;
    int rows = 300, cols = getenv("MC_TEST_SMALL") ? 700 : 3000;
    size_t n = (size_t)rows * (size_t)cols;
    float *v = malloc(n * sizeof(float));
    assert_non_null(v);
    uint32_t st = 7;
    for (size_t i = 0; i < n; i++) {
        st = st * 1664525u + 1013904223u;
        v[i] = (float)(st >> 8) / 16777216.0f - 0.25f;
    }
    mlx_array x = mlx_array_new_data(v, (const int[]){rows, cols}, 2, MLX_FLOAT32), r = mlx_array_new();
    for (int axis = 0; axis < 2; axis++) {
        OK(mlx_cumsum(&r, x, axis, axis == 1, true, S));
        OK(mlx_array_eval(r));
        const float *d = mlx_array_data_float32(r);
        /* check a few lines fully */
        for (int line = 0; line < 5; line++) {
            int len = axis == 0 ? rows : cols;
            int other = line * 37 % (axis == 0 ? cols : rows);
            double s = 0, mag = 0;
            for (int k = 0; k < len; k++) {
                int kk = axis == 1 ? len - 1 - k : k;
                size_t at = axis == 0 ? (size_t)kk * (size_t)cols + (size_t)other
                                      : (size_t)other * (size_t)cols + (size_t)kk;
                s += v[at];
                mag += fabs(v[at]);
                if (fabs(d[at] - s) > 1e-6 * mag + 1e-6)
                    fail_msg("axis %d line %d step %d: %.9g vs %.9g", axis, other, k, d[at], s);
            }
        }
    }
    free(v);
    TU_FREE(x, r);
}

static void test_output_may_reuse_the_dying_input(void **state)
{
    (void)state;
    mlx_array a = tu_f32((const float[]){1, 2, 3, 4, 5, 6}, (const int[]){2, 3}, 2), t = mlx_array_new(),
              r = mlx_array_new();
    OK(mlx_cumsum(&t, a, 1, false, true, S)); /* t is only referenced by the next node */
    OK(mlx_cumsum(&r, t, 0, true, false, S));
    mlx_array_free(t);
    check_values(r, MLX_FLOAT32, (const double[]){4, 9, 15, 0, 0, 0}, 6, "chained scans");
    TU_FREE(a, r);
}

static void test_bad_axes_report_one_message(void **state)
{
    (void)state;
    mlx_array x = tu_f32((const float[]){1, 2, 3, 4}, (const int[]){2, 2}, 2), r = mlx_array_new();
    void *before = r.ctx;
    assert_int_not_equal(mlx_cumsum(&r, x, 2, false, true, S), 0);
    assert_true(tu_last_error_has("[cumsum] Axis 2 is out of bounds for array with 2 dimensions."));
    tu_expect_error("[cumsum]");
    assert_int_not_equal(mlx_cummax(&r, x, -3, false, true, S), 0);
    assert_true(tu_last_error_has("Axis -3 is out of bounds"));
    tu_expect_error("[cummax]");
    mlx_array z = tu_f32((const float[]){1}, NULL, 0);
    assert_int_not_equal(mlx_logcumsumexp(&r, z, 0, false, true, S), 0);
    tu_expect_error("[logcumsumexp]");
    assert_int_not_equal(mlx_cumprod(&r, (mlx_array){NULL}, 0, false, true, S), 0);
    tu_expect_error("[cumprod]");
    assert_ptr_equal(r.ctx, before);
    TU_FREE(x, z, r);
}

/* ---- ISA kernels against the scalar reference ---- */

static size_t dsize(int d) { return mlx_dtype_size((mlx_dtype)d); }

static double elem(const void *p, int d, size_t i)
{
    const char *c = (const char *)p + i * dsize(d);
    switch (d) {
    case MLX_BOOL:
    case MLX_UINT8: return *(const uint8_t *)c;
    case MLX_UINT16: return *(const uint16_t *)c;
    case MLX_UINT32: return *(const uint32_t *)c;
    case MLX_UINT64: return (double)*(const uint64_t *)c;
    case MLX_INT8: return *(const int8_t *)c;
    case MLX_INT16: return *(const int16_t *)c;
    case MLX_INT32: return *(const int32_t *)c;
    case MLX_INT64: return (double)*(const int64_t *)c;
    case MLX_FLOAT16: return tu_f16_value(*(const uint16_t *)c);
    case MLX_BFLOAT16: return tu_bf16_value(*(const uint16_t *)c);
    case MLX_FLOAT32: return *(const float *)c;
    default: return *(const double *)c;
    }
}

static void *random_data(int d, size_t n, uint32_t seed)
{
    char *p = malloc(n * dsize(d) + 8);
    assert_non_null(p);
    uint32_t st = seed;
    for (size_t i = 0; i < n; i++) {
        st = st * 1664525u + 1013904223u;
        uint32_t u = st >> 8;
        double f = 0.8 + 0.4 * (u / 16777216.0); /* near 1: products stay finite */
        bool nan = i % 41 == 40;
        char *c = p + i * dsize(d);
        switch (d) {
        case MLX_BOOL: *(uint8_t *)c = u & 1; break;
        case MLX_UINT8: *(uint8_t *)c = (uint8_t)u; break;
        case MLX_UINT16: *(uint16_t *)c = (uint16_t)u; break;
        case MLX_UINT32: *(uint32_t *)c = u * 977u; break;
        case MLX_UINT64: *(uint64_t *)c = (uint64_t)u * 1000003u; break;
        case MLX_INT8: *(int8_t *)c = (int8_t)u; break;
        case MLX_INT16: *(int16_t *)c = (int16_t)u; break;
        case MLX_INT32: *(int32_t *)c = (int32_t)(u * 977u); break;
        case MLX_INT64: *(int64_t *)c = (int64_t)u * 1000003 - 7000000000LL; break;
        case MLX_FLOAT16: *(uint16_t *)c = nan ? 0x7e00 : tu_f16_bits((float)(round(f * 256) / 256)); break;
        case MLX_BFLOAT16: *(uint16_t *)c = nan ? 0x7fc0 : tu_bf16_bits((float)(round(f * 64) / 64)); break;
        case MLX_FLOAT32: *(float *)c = nan ? NAN : (float)f; break;
        default: *(double *)c = nan ? NAN : f; break;
        }
    }
    return p;
}

static void same(const void *a, const void *b, int d, size_t n, double rtol, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double x = elem(a, d, i), y = elem(b, d, i);
        if ((isnan(x) && isnan(y)) || x == y || fabs(x - y) <= rtol * fabs(y))
            continue;
        fail_msg("%s: output %zu is %.17g, the scalar reference gives %.17g", what, i, x, y);
    }
}

static void test_every_isa_matches_the_scalar_reference(void **state)
{
    (void)state;
    static const int dts[] = {MLX_BOOL,  MLX_UINT8,   MLX_UINT16,  MLX_UINT32,  MLX_UINT64,
                              MLX_INT8,  MLX_INT16,   MLX_INT32,   MLX_INT64,   MLX_FLOAT16,
                              MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16};
    static const char *const isas[] = {"avx2", "avx512", "neon"};
    const mc_reduce_table *ref = mc_reduce_kernels_for("scalar");
    assert_non_null(ref);
    char what[128];
    for (size_t k = 0; k < N_(isas); k++) {
        const mc_reduce_table *t = mc_reduce_kernels_for(isas[k]);
        if (!t)
            continue;
        for (size_t di = 0; di < N_(dts); di++) {
            int d = dts[di];
            for (int op = 0; op < MC_S_COUNT; op++) {
                int od = mc_scan_out_dtype(op, d);
                /* logaddexp: SLEEF's exp / log1p against libm's */
                double rtol = op != MC_S_LOGADDEXP ? 0
                              : d == MLX_FLOAT64 ? 1e-14 : d == MLX_FLOAT32 ? 1e-6 : 0.01;
                for (int flags = 0; flags < 8; flags++) {
                    int rev = flags & 1, incl = (flags >> 1) & 1;
                    /* 77 columns, or 3: fewer than the lanes */
                    size_t n = 19, m = flags & 4 ? 3 : 77, ld = 80;
                    void *x = random_data(d, n * ld, (uint32_t)(op * 4 + flags));
                    char *ya = calloc(n * ld, 8), *yb = calloc(n * ld, 8);
                    assert_true(ya && yb);
                    t->scan_col[op][d](x, ya, n, m, ld, rev, incl);
                    ref->scan_col[op][d](x, yb, n, m, ld, rev, incl);
                    snprintf(what, sizeof what, "%s col scan op %d dtype %d flags %d", t->isa, op, d, flags);
                    same(ya, yb, od, n * ld, rtol, what);
                    t->scan_row[op][d](x, ya, m, 3, rev, incl);
                    ref->scan_row[op][d](x, yb, m, 3, rev, incl);
                    snprintf(what, sizeof what, "%s row scan op %d dtype %d flags %d", t->isa, op, d, flags);
                    same(ya, yb, od, 3 * m, rtol, what);
                    free(x);
                    free(ya);
                    free(yb);
                }
            }
        }
    }
}

/* ---- allocation failures ---- */

static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    mlx_array x = tu_case_input(MLX_FLOAT32, 2, 2, 3, 4);
    for (int axis = 0; axis < 3; axis++) {
        for (long n = 0;; n++) {
            mlx_array y = mlx_array_new();
            mc_fault_fail_after(n);
            int rc = mlx_cumsum(&y, x, axis, axis == 1, axis != 2, S);
            if (!rc)
                rc = mlx_array_eval(y);
            mc_fault_fail_after(-1);
            mlx_array_free(y);
            if (!rc) {
                tu_expect_no_error();
                break;
            }
            if (tu_error_count() != 1)
                fail_msg("axis %d, allocation %ld: %d messages, last \"%s\"", axis, n, tu_error_count(),
                         tu_last_error());
            tu_reset_errors();
            assert_true(n < 1000);
        }
    }
    mlx_array_free(x);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_scans_match_numpy_for_every_dtype_axis_and_direction),
        T(test_nan_propagates_and_identities_start_exclusive_scans),
        T(test_complex64_scans),
        T(test_large_scans_match_float64),
        T(test_output_may_reuse_the_dying_input),
        T(test_bad_axes_report_one_message),
        T(test_every_isa_matches_the_scalar_reference),
        T(test_allocation_failures_report_once_and_leak_nothing),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
