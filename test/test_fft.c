/* Suite 'fft': fft.h's semantics that numpy cannot show (MLX's checks and
 * messages, dtypes, the result being the input for no axes), values
 * against a direct DFT in double for strided inputs, inner axes and
 * Bluestein lengths, the decompositions of long transforms, and the plan
 * cache under threads. Accuracy at every
 * length 1..1024 and at large primes is test/oracle/fft.py's. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/fft_plan.h"
#include "mlx/c/mlx.h"
#include "test_util.h"

/* x[j] of a test signal (complex: re, im), deterministic in j. */
static void signal(int n, float *re_im)
{
    for (int j = 0; j < n; j++) {
        re_im[2 * j] = (float)sin(0.37 * j + 0.1) + 0.25f * (float)(j % 5);
        re_im[2 * j + 1] = (float)cos(1.3 * j) - 0.5f;
    }
}

/* The DFT of n complex values in double (sign -1 forward, +1 inverse). */
static void dft(int n, const float *x, double *y, int sign)
{
    for (int k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (int j = 0; j < n; j++) {
            double a = sign * 2 * M_PI * (double)((int64_t)j * k % n) / n;
            re += x[2 * j] * cos(a) - x[2 * j + 1] * sin(a);
            im += x[2 * j] * sin(a) + x[2 * j + 1] * cos(a);
        }
        y[2 * k] = re;
        y[2 * k + 1] = im;
    }
}

static void expect_close_c64(mlx_array r, const double *want, size_t count, double tol)
{
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
    const float *o = (const float *)mlx_array_data_complex64(r);
    double err = 0, norm = 0;
    for (size_t i = 0; i < 2 * count; i++) {
        err += (o[i] - want[i]) * (o[i] - want[i]);
        norm += want[i] * want[i];
    }
    if (!(sqrt(err) <= tol * sqrt(norm)))
        fail_msg("relative error %g", sqrt(err / norm));
}

static mlx_array c64_array(const float *v, const int *shape, int ndim)
{
    return mlx_array_new_data(v, shape, ndim, MLX_COMPLEX64);
}

static void test_fft_matches_a_direct_dft_at_plain_and_bluestein_lengths(void **state)
{
    (void)state;
    const int lengths[] = {1, 2, 3, 7, 12, 31, 37, 61, 127, 210, 1031};
    for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++) {
        int n = lengths[t];
        float *x = malloc(sizeof(float) * 2 * (size_t)n);
        double *y = malloc(sizeof(double) * 2 * (size_t)n);
        signal(n, x);
        mlx_array a = c64_array(x, &n, 1), r = mlx_array_new();
        assert_int_equal(mlx_fft_fft(&r, a, n, 0, tu_stream()), 0);
        dft(n, x, y, -1);
        expect_close_c64(r, y, (size_t)n, 1e-5);
        assert_int_equal(mlx_fft_ifft(&r, a, n, -1, tu_stream()), 0);
        dft(n, x, y, 1);
        for (int i = 0; i < 2 * n; i++)
            y[i] /= n;
        expect_close_c64(r, y, (size_t)n, 1e-5);
        TU_FREE(a, r);
        free(x);
        free(y);
    }
}

/* A transposed (non-contiguous) input, transformed along its inner axis
 * (lines strided in memory) and along its outer one. */
static void test_fft_reads_strided_inputs_along_any_axis(void **state)
{
    (void)state;
    enum { R = 6, C = 5 };
    float x[2 * R * C];
    signal(R * C, x);
    int shape[2] = {R, C};
    mlx_array a = c64_array(x, shape, 2), at = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_transpose(&at, a, tu_stream()), 0);     /* (C, R): at[c][r] = x[r][c] */
    assert_int_equal(mlx_fft_fft(&r, at, C, 0, tu_stream()), 0); /* along c: lines of x's rows */
    assert_int_equal(mlx_array_eval(r), 0);
    const float *o = (const float *)mlx_array_data_complex64(r);
    for (int row = 0; row < R; row++) {
        double y[2 * C];
        float line[2 * C];
        memcpy(line, x + 2 * row * C, sizeof line);
        dft(C, line, y, -1);
        /* r has shape (C, R): r[k][row] */
        for (int k = 0; k < C; k++) {
            assert_float_equal(o[2 * (k * R + row)], y[2 * k], 1e-4);
            assert_float_equal(o[2 * (k * R + row) + 1], y[2 * k + 1], 1e-4);
        }
    }
    TU_FREE(a, at, r);
}

static void test_real_transforms_give_mlx_shapes_and_dtypes_and_round_trip(void **state)
{
    (void)state;
    float v[9] = {1, -2, 3.5f, 0.25f, 7, -1, 2, 0, 4};
    int n = 9;
    mlx_array a = tu_f32(v, &n, 1), f = mlx_array_new(), b = mlx_array_new();
    assert_int_equal(mlx_fft_rfft(&f, a, 9, 0, tu_stream()), 0);
    assert_true(tu_shape_is(f, 1, (int[]){5}));
    assert_int_equal(mlx_array_dtype(f), MLX_COMPLEX64);
    assert_int_equal(mlx_fft_irfft(&b, f, 9, 0, tu_stream()), 0);
    assert_true(tu_shape_is(b, 1, (int[]){9}));
    assert_int_equal(mlx_array_dtype(b), MLX_FLOAT32);
    for (int i = 0; i < 9; i++)
        assert_float_equal(tu_get(b, (size_t)i), v[i], 1e-5);
    /* the default-sized inverse (n = 2 * (5 - 1)) cuts the last sample */
    assert_int_equal(mlx_fft_irfft(&b, f, 8, 0, tu_stream()), 0);
    assert_true(tu_shape_is(b, 1, (int[]){8}));
    TU_FREE(a, f, b);
}

static void test_fft_converts_inputs_and_no_axes_returns_the_input(void **state)
{
    (void)state;
    double v[4] = {1, 2, 3, 4};
    int n = 4;
    mlx_array a = tu_f64(v, &n, 1), r = mlx_array_new();
    assert_int_equal(mlx_fft_fft(&r, a, 4, 0, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
    assert_int_equal(mlx_fft_rfft(&r, a, 4, 0, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
    /* as MLX: no axes, no transform, no conversion */
    assert_int_equal(mlx_fft_fftn(&r, a, NULL, 0, NULL, 0, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT64);
    assert_ptr_equal(r.ctx, a.ctx);
    assert_int_equal(mlx_fft_fftshift(&r, a, NULL, 0, tu_stream()), 0);
    assert_ptr_equal(r.ctx, a.ctx);
    TU_FREE(a, r);
}

static void test_fft_reports_mlx_errors_and_leaves_the_result_alone(void **state)
{
    (void)state;
    float v[6] = {1, 2, 3, 4, 5, 6};
    int shape[2] = {2, 3};
    mlx_array a = tu_f32(v, shape, 2), z = mlx_array_new_float32(1.0f), r = mlx_array_new();
    tu_reset_errors();
    assert_int_not_equal(mlx_fft_fft(&r, z, 1, 0, tu_stream()), 0);
    tu_expect_error("[fftn] Requires array with at least one dimension.");
    int n2[2] = {2, 3}, ax1[1] = {0};
    assert_int_not_equal(mlx_fft_fftn(&r, a, n2, 2, ax1, 1, tu_stream()), 0);
    tu_expect_error("[fftn] Shape and axes have different sizes.");
    int dup[2] = {0, -2};
    assert_int_not_equal(mlx_fft_fft2(&r, a, n2, 2, dup, 2, tu_stream()), 0);
    tu_expect_error("[fftn] Duplicated axis received (0,-2)");
    assert_int_not_equal(mlx_fft_fft(&r, a, 3, 2, tu_stream()), 0);
    tu_expect_error("[fftn] Invalid axis received for array with 2 dimensions.");
    assert_int_not_equal(mlx_fft_fft(&r, a, 3, -3, tu_stream()), 0);
    tu_expect_error("[fftn] Invalid axis received for array with 2 dimensions.");
    int bad_n[2] = {2, 0}, ax2[2] = {0, 1};
    assert_int_not_equal(mlx_fft_rfft2(&r, a, bad_n, 2, ax2, 2, tu_stream()), 0);
    tu_expect_error("[fftn] Invalid FFT output size requested (2,0)");
    int ax_bad[1] = {2};
    assert_int_not_equal(mlx_fft_ifftshift(&r, a, ax_bad, 1, tu_stream()), 0);
    tu_expect_error("[ifftshift] Invalid axis 2 for array with 2 dimensions.");
    assert_int_not_equal(mlx_fft_irfft(&r, mlx_array_new(), 4, 0, tu_stream()), 0);
    tu_expect_error("[fftn]");
    assert_null(r.ctx);
    TU_FREE(a, z, r);
}

static void test_shifts_roll_by_half_as_mlx(void **state)
{
    (void)state;
    float v[5] = {0, 1, 2, 3, 4};
    int n = 5, ax = 0;
    mlx_array a = tu_f32(v, &n, 1), r = mlx_array_new();
    assert_int_equal(mlx_fft_fftshift(&r, a, &ax, 1, tu_stream()), 0);
    const float want[5] = {3, 4, 0, 1, 2};
    for (int i = 0; i < 5; i++)
        assert_float_equal(tu_get(r, (size_t)i), want[i], 0);
    assert_int_equal(mlx_fft_ifftshift(&r, r, &ax, 1, tu_stream()), 0);
    for (int i = 0; i < 5; i++)
        assert_float_equal(tu_get(r, (size_t)i), v[i], 0);
    TU_FREE(a, r);
}

/* The full spectrum of a Hermitian half x (h = n/2 + 1 pairs), the
 * imaginary parts of the zero and Nyquist frequencies dropped as c2r does. */
static void hermitian(int n, const float *x, float *full)
{
    for (int k = 0; k < n; k++) {
        int s = k <= n / 2 ? k : n - k;
        full[2 * k] = x[2 * s];
        full[2 * k + 1] = k <= n / 2 ? x[2 * s + 1] : -x[2 * s + 1];
        if (k == 0 || 2 * k == n)
            full[2 * k + 1] = 0;
    }
}

/* fft, ifft, rfft and irfft of one signal of n points against the DFT */
static void expect_transforms_of_length(int n)
{
    float *x = malloc(sizeof(float) * 2 * (size_t)n), *full = malloc(sizeof(float) * 2 * (size_t)n);
    float *re = malloc(sizeof(float) * (size_t)n);
    double *y = malloc(sizeof(double) * 2 * (size_t)n);
    signal(n, x);
    int h = n / 2 + 1;
    mlx_array a = c64_array(x, &n, 1), half = c64_array(x, &h, 1), r = mlx_array_new();
    assert_int_equal(mlx_fft_fft(&r, a, n, 0, tu_stream()), 0);
    dft(n, x, y, -1);
    expect_close_c64(r, y, (size_t)n, 1e-5);
    assert_int_equal(mlx_fft_ifft(&r, a, n, 0, tu_stream()), 0);
    dft(n, x, y, 1);
    for (int i = 0; i < 2 * n; i++)
        y[i] /= n;
    expect_close_c64(r, y, (size_t)n, 1e-5);
    /* rfft of the real parts */
    for (int j = 0; j < n; j++) {
        re[j] = x[2 * j];
        full[2 * j] = x[2 * j];
        full[2 * j + 1] = 0;
    }
    mlx_array ra = tu_f32(re, &n, 1);
    assert_int_equal(mlx_fft_rfft(&r, ra, n, 0, tu_stream()), 0);
    dft(n, full, y, -1);
    expect_close_c64(r, y, (size_t)h, 1e-5);
    /* irfft of the first h values of x, taken as a Hermitian half */
    assert_int_equal(mlx_fft_irfft(&r, half, n, 0, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    hermitian(n, x, full);
    dft(n, full, y, 1);
    const float *o = mlx_array_data_float32(r);
    double err = 0, norm = 0;
    for (int j = 0; j < n; j++) {
        err += (o[j] - y[2 * j] / n) * (o[j] - y[2 * j] / n);
        norm += y[2 * j] / n * (y[2 * j] / n);
    }
    if (!(sqrt(err) <= 1e-5 * sqrt(norm)))
        fail_msg("irfft n=%d: relative error %g", n, sqrt(err / norm));
    TU_FREE(a, half, ra, r);
    free(x);
    free(full);
    free(re);
    free(y);
}

/* The four-step decomposition (fft_large.c) and the split step of real
 * transforms, reached at short lengths by lowering the threshold: square
 * and oblong factorisations, odd lengths, a real length whose half is a
 * Bluestein length, single transforms (split across the pool) and
 * batches along either axis (one transform per thread). */
static void test_long_transform_decompositions_match_a_direct_dft(void **state)
{
    (void)state;
    mc_fft_set_wide_min(256);
    const int lengths[] = {256, 1000, 1024, 2187, 2310, 2062, 1536};
    for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++)
        expect_transforms_of_length(lengths[t]);
    /* a batch of 3 lines of 1000 along each axis */
    enum { B = 3, N = 1000 };
    float *x = malloc(sizeof(float) * 2 * B * N), *line = malloc(sizeof(float) * 2 * N);
    double *y = malloc(sizeof(double) * 2 * N), *want = malloc(sizeof(double) * 2 * B * N);
    signal(B * N, x);
    int rows[2] = {B, N}, cols[2] = {N, B};
    mlx_array a = c64_array(x, rows, 2), c = c64_array(x, cols, 2), r = mlx_array_new();
    assert_int_equal(mlx_fft_fft(&r, a, N, 1, tu_stream()), 0);
    for (int b = 0; b < B; b++)
        dft(N, x + 2 * b * N, want + 2 * b * N, -1);
    expect_close_c64(r, want, (size_t)B * N, 1e-5);
    assert_int_equal(mlx_fft_fft(&r, c, N, 0, tu_stream()), 0);
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < N; i++) {
            line[2 * i] = x[2 * (i * B + b)];
            line[2 * i + 1] = x[2 * (i * B + b) + 1];
        }
        dft(N, line, y, -1);
        for (int k = 0; k < N; k++) {
            want[2 * (k * B + b)] = y[2 * k];
            want[2 * (k * B + b) + 1] = y[2 * k + 1];
        }
    }
    expect_close_c64(r, want, (size_t)B * N, 1e-5);
    TU_FREE(a, c, r);
    free(x);
    free(line);
    free(y);
    free(want);
    mc_fft_set_wide_min(0);
}

/* Threads transforming at once share complex plans and each get their
 * own real ones; the cache stays bounded. */
static void *fft_worker(void *arg)
{
    int base = *(int *)arg;
    for (int it = 0; it < 40; it++) {
        int n = base + it % 7 * 2;
        float *x = calloc((size_t)n, sizeof(float));
        x[1 % n] = 1;
        mlx_array a = mlx_array_new_data(x, &n, 1, MLX_FLOAT32), f = mlx_array_new(), b = mlx_array_new();
        mlx_stream st = mlx_default_cpu_stream_new();
        int rc = mlx_fft_rfft(&f, a, n, 0, st) || mlx_fft_irfft(&b, f, n, 0, st) || mlx_array_eval(b);
        mlx_stream_free(st);
        const float *o = rc ? NULL : mlx_array_data_float32(b);
        for (int i = 0; o && i < n; i++)
            if (fabsf(o[i] - x[i]) > 1e-5f)
                rc = 1;
        mlx_array_free(a);
        mlx_array_free(f);
        mlx_array_free(b);
        free(x);
        if (rc)
            return (void *)1;
    }
    return NULL;
}

static void test_plans_are_shared_safely_between_threads(void **state)
{
    (void)state;
    pthread_t th[4];
    int base[4] = {16, 16, 30, 1000};
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fft_worker, &base[i]), 0);
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        assert_null(ret);
    }
    assert_true(mc_fft_plan_cached() <= 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fft_matches_a_direct_dft_at_plain_and_bluestein_lengths, tu_test_teardown),
        cmocka_unit_test_teardown(test_fft_reads_strided_inputs_along_any_axis, tu_test_teardown),
        cmocka_unit_test_teardown(test_real_transforms_give_mlx_shapes_and_dtypes_and_round_trip,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_fft_converts_inputs_and_no_axes_returns_the_input, tu_test_teardown),
        cmocka_unit_test_teardown(test_fft_reports_mlx_errors_and_leaves_the_result_alone, tu_test_teardown),
        cmocka_unit_test_teardown(test_shifts_roll_by_half_as_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_plans_are_shared_safely_between_threads, tu_test_teardown),
        cmocka_unit_test_teardown(test_long_transform_decompositions_match_a_direct_dft, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("fft", tests, tu_group_setup, tu_group_teardown);
}
