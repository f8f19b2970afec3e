/* The reductions suite: sum, prod, max, min, all, any, mean, var, std,
 * logsumexp, softmax, argmax and argmin (src/ops/reduce*.c, the Reduce,
 * ArgReduce, LogSumExp and Softmax primitives, the kernels of
 * simd/reduce_*.c).
 *
 * - every op, real dtype and axes form (none, one, negative, several,
 *   keepdims) on contiguous, transposed, strided and broadcast inputs
 *   against numpy 1.24 (test/reduce_cases.py wrote test/reduce_cases.h);
 * - empty reductions, NaN / inf rules, complex64, the errors (one message
 *   each, the result handle untouched);
 * - accuracy: a float32 sum of 16M elements against its float64 sum
 *   (1M when MC_TEST_SMALL is set, as under valgrind), and every threaded
 *   path (many rows, few long rows, long columns) against float64 sums;
 * - every ISA's kernels against the scalar reference kernels;
 * - infer of a built node on a new input shape (shapeless compile). */
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
#include "graph/prims_reduce.h"
#include "runtime/alloc.h"
#include "simd/reduce.h"
#include "test_util.h"

#define S tu_stream()
#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define OK(call) assert_int_equal((call), 0)

/* The call fails with one message starting with prefix and containing
 * text, and leaves the result handle as it was. */
#define EXPECT_FAIL(res, call, prefix, text)                                   \
    do {                                                                       \
        void *before_ = (res).ctx;                                             \
        if ((call) == 0)                                                       \
            fail_msg("%s succeeded; expected a %s error", #call, prefix);      \
        if (!tu_last_error_has(text))                                          \
            fail_msg("%s: message '%s' lacks '%s'", #call, tu_last_error(),    \
                     text);                                                    \
        tu_expect_error(prefix);                                               \
        assert_ptr_equal((res).ctx, before_);                                  \
    } while (0)

typedef struct reduce_case {
    const char *op;
    int dtype, layout, form, naxes, axes[3], keepdims, ddof, out_dtype, out_ndim, out_shape[3], offset;
} reduce_case;
#include "reduce_cases.h"

/* ---- inputs (the formula of test/reduce_cases.py) ---- */

/* ---- comparing results ---- */

static void tolerance(mlx_dtype d, double *rtol, double *atol)
{
    switch (d) {
    case MLX_FLOAT16:
        *rtol = 2e-3;
        *atol = 1e-3;
        break;
    case MLX_BFLOAT16:
        *rtol = 1.6e-2;
        *atol = 1e-2;
        break;
    case MLX_FLOAT32:
        *rtol = 3e-6;
        *atol = 1e-6;
        break;
    case MLX_FLOAT64:
        *rtol = 1e-12;
        *atol = 1e-12;
        break;
    default:
        *rtol = *atol = 0;
        break;
    }
}

static bool close_to(double got, double want, double rtol, double atol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

/* r has dtype, shape and the n values want; what names the case. */
static void check_result(mlx_array r, mlx_dtype dtype, int ndim, const int *shape, const double *want,
                         const char *what)
{
    OK(mlx_array_eval(r));
    if (mlx_array_dtype(r) != dtype)
        fail_msg("%s: dtype %d, expected %d", what, (int)mlx_array_dtype(r), (int)dtype);
    if (!tu_shape_is(r, ndim, shape))
        fail_msg("%s: wrong shape (ndim %zu)", what, mlx_array_ndim(r));
    double rtol, atol;
    tolerance(dtype, &rtol, &atol);
    size_t n = mlx_array_size(r);
    for (size_t i = 0; i < n; i++) {
        double got = tu_get(r, i);
        if (!close_to(got, want[i], rtol, atol))
            fail_msg("%s: element %zu is %.17g, expected %.17g", what, i, got, want[i]);
    }
}

/* ---- the numpy cases ---- */

static int call_case(mlx_array *r, const reduce_case *c, mlx_array x)
{
    const char *op = c->op;
    bool k = c->keepdims != 0;
    int ax = c->axes[0];
    const int *axes = c->axes;
    size_t na = (size_t)c->naxes;
#define FORMS(name)                                                            \
    if (!strcmp(op, #name))                                                    \
        return c->form == 0   ? mlx_##name(r, x, k, S)                         \
               : c->form == 1 ? mlx_##name##_axis(r, x, ax, k, S)              \
                              : mlx_##name##_axes(r, x, axes, na, k, S);
    FORMS(sum)
    FORMS(prod)
    FORMS(max)
    FORMS(min)
    FORMS(all)
    FORMS(any)
    FORMS(mean)
    FORMS(logsumexp)
#undef FORMS
#define MOMENT(name)                                                           \
    if (!strcmp(op, #name))                                                    \
        return c->form == 0   ? mlx_##name(r, x, k, c->ddof, S)                \
               : c->form == 1 ? mlx_##name##_axis(r, x, ax, k, c->ddof, S)     \
                              : mlx_##name##_axes(r, x, axes, na, k, c->ddof, S);
    MOMENT(var)
    MOMENT(std)
#undef MOMENT
    if (!strcmp(op, "softmax")) /* keepdims holds `precise` */
        return c->form == 0   ? mlx_softmax(r, x, k, S)
               : c->form == 1 ? mlx_softmax_axis(r, x, ax, k, S)
                              : mlx_softmax_axes(r, x, axes, na, k, S);
    if (!strcmp(op, "argmax"))
        return c->form == 0 ? mlx_argmax(r, x, k, S) : mlx_argmax_axis(r, x, ax, k, S);
    if (!strcmp(op, "argmin"))
        return c->form == 0 ? mlx_argmin(r, x, k, S) : mlx_argmin_axis(r, x, ax, k, S);
    fail_msg("unknown op %s", op);
    return 1;
}

static void test_ops_match_numpy_for_every_dtype_axes_and_layout(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_(reduce_cases); i++) {
        const reduce_case *c = &reduce_cases[i];
        char what[160];
        snprintf(what, sizeof what, "case %zu: %s dtype %d layout %d form %d axes (%d,%d) keep %d ddof %d", i,
                 c->op, c->dtype, c->layout, c->form, c->axes[0], c->axes[1], c->keepdims, c->ddof);
        mlx_array x = tu_case_input(c->dtype, c->layout, 3, 4, 5);
        mlx_array r = mlx_array_new();
        if (call_case(&r, c, x) != 0)
            fail_msg("%s: failed: %s", what, tu_last_error());
        check_result(r, c->out_dtype, c->out_ndim, c->out_shape, reduce_vals + c->offset, what);
        TU_FREE(x, r);
    }
}

/* ---- empty arrays, NaN and inf, complex ---- */

static void test_empty_reductions_give_identities_or_errors(void **state)
{
    (void)state;
    mlx_array x = tu_f32(NULL, (const int[]){2, 0}, 2), r = mlx_array_new();
    OK(mlx_sum_axis(&r, x, 1, false, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){2}, (const double[]){0, 0}, "sum of nothing");
    OK(mlx_prod_axis(&r, x, 1, true, S));
    check_result(r, MLX_FLOAT32, 2, (const int[]){2, 1}, (const double[]){1, 1}, "prod of nothing");
    OK(mlx_all_axis(&r, x, 1, false, S));
    check_result(r, MLX_BOOL, 1, (const int[]){2}, (const double[]){1, 1}, "all of nothing");
    OK(mlx_any(&r, x, false, S));
    check_result(r, MLX_BOOL, 0, NULL, (const double[]){0}, "any of nothing");
    OK(mlx_mean_axis(&r, x, 1, false, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){2}, (const double[]){NAN, NAN}, "mean of nothing");
    OK(mlx_var_axis(&r, x, 1, false, 0, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){2}, (const double[]){NAN, NAN}, "var of nothing");
    /* reducing the non-empty axis of an empty array gives an empty result */
    OK(mlx_sum_axis(&r, x, 0, false, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){0}, NULL, "sum keeping the empty axis");
    OK(mlx_max_axis(&r, x, 0, false, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){0}, NULL, "max keeping the empty axis");
    /* softmax of an empty array is the array */
    OK(mlx_softmax(&r, x, false, S));
    assert_ptr_equal(r.ctx, x.ctx);
    EXPECT_FAIL(r, mlx_max_axis(&r, x, 1, false, S), "[max]", "Cannot max reduce over axis 1 with size 0.");
    EXPECT_FAIL(r, mlx_min(&r, x, false, S), "[min]", "Cannot min reduce over axis 1 with size 0.");
    EXPECT_FAIL(r, mlx_argmax(&r, x, false, S), "[argmax]", "Cannot argmax reduce zero size array.");
    EXPECT_FAIL(r, mlx_argmin_axis(&r, x, 0, false, S), "[argmin]", "Cannot argmin reduce zero size array.");
    EXPECT_FAIL(r, mlx_logsumexp(&r, x, false, S), "[logsumexp]", "Received empty array.");
    TU_FREE(x, r);
}

static void test_nan_and_inf_follow_mlx(void **state)
{
    (void)state;
    const double v[] = {1, NAN, 3, -2, NAN, INFINITY, -0.0, 0, NAN, 5, 7, 7};
    mlx_array x = tu_f64(v, (const int[]){4, 3}, 2), r = mlx_array_new();
    /* max / min propagate NaN */
    OK(mlx_max_axis(&r, x, 1, false, S));
    check_result(r, MLX_FLOAT64, 1, (const int[]){4}, (const double[]){NAN, NAN, NAN, 7}, "max with NaN");
    /* argmax skips NaN unless it comes first (MLX compares with >) */
    OK(mlx_argmax_axis(&r, x, 1, false, S));
    check_result(r, MLX_UINT32, 1, (const int[]){4}, (const double[]){2, 2, 0, 1}, "argmax with NaN");
    OK(mlx_argmin_axis(&r, x, 0, false, S));
    check_result(r, MLX_UINT32, 1, (const int[]){3}, (const double[]){1, 0, 0}, "argmin with NaN");
    /* -0.0 is zero, NaN is not */
    mlx_array y = tu_f32((const float[]){-0.0f, 0.0f, NAN, 1}, (const int[]){2, 2}, 2);
    OK(mlx_any_axis(&r, y, 1, false, S));
    check_result(r, MLX_BOOL, 1, (const int[]){2}, (const double[]){0, 1}, "any of -0.0");
    OK(mlx_all_axis(&r, y, 0, false, S));
    check_result(r, MLX_BOOL, 1, (const int[]){2}, (const double[]){0, 0}, "all");
    /* logsumexp is the max where the max is infinite */
    mlx_array w = tu_f32((const float[]){INFINITY, 1, -INFINITY, -INFINITY, 1000, 1000}, (const int[]){3, 2}, 2);
    OK(mlx_logsumexp_axis(&r, w, 1, false, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){3}, (const double[]){INFINITY, -INFINITY, 1000 + log(2.0)},
                 "logsumexp with inf");
    /* softmax stays finite for large inputs (max subtracted) */
    OK(mlx_softmax_axis(&r, w, 1, false, S));
    OK(mlx_array_eval(r));
    assert_true(fabs(tu_get(r, 4) - 0.5) < 1e-7 && fabs(tu_get(r, 5) - 0.5) < 1e-7);
    TU_FREE(x, y, w, r);
}

static void test_complex64_sums_products_and_order(void **state)
{
    (void)state;
    const float _Complex v[] = {1 + 2 * I, 3 - 1 * I, 3 + 0.5f * I, -1 + 0 * I};
    mlx_array x = mlx_array_new_data(v, (const int[]){2, 2}, 2, MLX_COMPLEX64), r = mlx_array_new();
    OK(mlx_sum_axis(&r, x, 0, false, S));
    OK(mlx_array_eval(r));
    assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
    const float _Complex *d = mlx_array_data_complex64(r);
    assert_true(d[0] == 4 + 2.5f * I && d[1] == 2 - 1 * I);
    OK(mlx_prod(&r, x, false, S));
    float _Complex p;
    OK(mlx_array_item_complex64(&p, r));
    float _Complex want = (1 + 2 * I) * (3 - 1 * I) * (3 + 0.5f * I) * (-1);
    assert_true(cabsf(p - want) < 1e-5f);
    /* order is lexicographic: (3+0.5j) > (3-1j) */
    OK(mlx_argmax(&r, x, false, S));
    assert_int_equal((int)tu_get(r, 0), 2);
    OK(mlx_max(&r, x, false, S));
    OK(mlx_array_item_complex64(&p, r));
    assert_true(p == 3 + 0.5f * I);
    OK(mlx_mean(&r, x, false, S));
    OK(mlx_array_item_complex64(&p, r));
    assert_true(cabsf(p - (6 + 1.5f * I) / 4) < 1e-6f);
    /* 1j is non-zero */
    const float _Complex j1[] = {1 * I, 0};
    mlx_array y = mlx_array_new_data(j1, (const int[]){2}, 1, MLX_COMPLEX64);
    OK(mlx_any(&r, y, false, S));
    assert_true(tu_get(r, 0) == 1);
    OK(mlx_all(&r, y, false, S));
    assert_true(tu_get(r, 0) == 0);
    TU_FREE(x, y, r);
}

/* MLX (since its fix #4260): var of complex64 is the float32 mean squared
 * magnitude of the deviations, as numpy's; std its square root. */
static void test_var_and_std_of_complex64_are_float32_magnitudes(void **state)
{
    (void)state;
    const float _Complex v[] = {1 + 2 * I, 3 - 1 * I, 3 + 0.5f * I, -1 + 0 * I};
    mlx_array x = mlx_array_new_data(v, (const int[]){2, 2}, 2, MLX_COMPLEX64), r = mlx_array_new();
    /* over axis 0: columns {1+2j, 3+0.5j} and {3-1j, -1} */
    OK(mlx_var_axis(&r, x, 0, false, 0, S));
    OK(mlx_array_eval(r));
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    assert_int_equal(mlx_array_ndim(r), 1);
    /* deviations +-(1 - 0.75j) and +-(2 - 0.5j): |.|^2 = 1.5625, 4.25 */
    assert_true(fabs(tu_get(r, 0) - 1.5625) < 1e-6 && fabs(tu_get(r, 1) - 4.25) < 1e-6);
    /* ddof 1 divides by N - 1 = 1, keepdims keeps (1, 2) */
    OK(mlx_var_axis(&r, x, 0, true, 1, S));
    assert_int_equal(mlx_array_ndim(r), 2);
    assert_true(fabs(tu_get(r, 0) - 3.125) < 1e-6 && fabs(tu_get(r, 1) - 8.5) < 1e-6);
    /* all elements: mean 1.5+0.375j */
    OK(mlx_std(&r, x, false, 0, S));
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    double want = 0;
    for (int i = 0; i < 4; i++)
        want += pow(cabs(v[i] - (1.5 + 0.375 * I)), 2);
    assert_true(fabs(tu_get(r, 0) - sqrt(want / 4)) < 1e-6);
    /* ddof >= N divides by 0, as MLX: inf */
    OK(mlx_var(&r, x, false, 4, S));
    assert_true(isinf(tu_get(r, 0)));
    TU_FREE(x, r);
}

/* MLX composes logsumexp and softmax of complex64 from max (lexicographic),
 * exp, sum and log; rows of x below: {1+2j, 3-1j} and {3+0.5j, -1}. */
static void test_logsumexp_and_softmax_of_complex64_compose_as_mlx(void **state)
{
    (void)state;
    const float _Complex v[] = {1 + 2 * I, 3 - 1 * I, 3 + 0.5f * I, -1 + 0 * I};
    const float _Complex mx[2] = {3 - 1 * I, 3 + 0.5f * I}; /* row maxima */
    mlx_array x = mlx_array_new_data(v, (const int[]){2, 2}, 2, MLX_COMPLEX64), r = mlx_array_new();
    OK(mlx_softmax_axis(&r, x, -1, false, S));
    OK(mlx_array_eval(r));
    assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
    const float _Complex *d = mlx_array_data_complex64(r);
    for (int row = 0; row < 2; row++) {
        double complex e0 = cexp(v[2 * row] - mx[row]), e1 = cexp(v[2 * row + 1] - mx[row]);
        assert_true(cabs(d[2 * row] - e0 / (e0 + e1)) < 1e-5);
        assert_true(cabs(d[2 * row + 1] - e1 / (e0 + e1)) < 1e-5);
    }
    OK(mlx_logsumexp_axis(&r, x, -1, true, S));
    OK(mlx_array_eval(r));
    assert_int_equal(mlx_array_ndim(r), 2);
    d = mlx_array_data_complex64(r);
    for (int row = 0; row < 2; row++) {
        double complex sum = cexp(v[2 * row] - mx[row]) + cexp(v[2 * row + 1] - mx[row]);
        assert_true(cabs(d[row] - (clog(sum) + mx[row])) < 1e-5);
    }
    /* an infinite maximum passes through, as MLX's where(isinf(max), ...) */
    const float _Complex w[] = {INFINITY + 0 * I, 1 + 1 * I};
    mlx_array y = mlx_array_new_data(w, (const int[]){2}, 1, MLX_COMPLEX64);
    OK(mlx_logsumexp(&r, y, false, S));
    float _Complex got;
    OK(mlx_array_item_complex64(&got, r));
    assert_true(isinf(crealf(got)) && crealf(got) > 0);
    TU_FREE(x, y, r);
}

static void test_noop_reductions_follow_mlx(void **state)
{
    (void)state;
    mlx_array x = tu_i32((const int32_t[]){1, 2, 3}, (const int[]){1, 3}, 2), r = mlx_array_new();
    /* no axes: sum, prod, max and min give the input itself */
    OK(mlx_sum_axes(&r, x, NULL, 0, false, S));
    assert_ptr_equal(r.ctx, x.ctx);
    /* a reduced dim of size 1: a cast (int32 stays, mean gives float32) */
    OK(mlx_mean_axis(&r, x, 0, false, S));
    check_result(r, MLX_FLOAT32, 1, (const int[]){3}, (const double[]){1, 2, 3}, "mean over size 1");
    OK(mlx_all_axis(&r, x, 0, true, S));
    check_result(r, MLX_BOOL, 2, (const int[]){1, 3}, (const double[]){1, 1, 1}, "all over size 1");
    OK(mlx_argmax_axis(&r, x, 0, false, S));
    check_result(r, MLX_UINT32, 1, (const int[]){3}, (const double[]){0, 0, 0}, "argmax over size 1");
    /* 0-d inputs */
    mlx_array z = tu_f32((const float[]){2.5f}, NULL, 0);
    OK(mlx_var(&r, z, false, 1, S));
    check_result(r, MLX_FLOAT32, 0, NULL, (const double[]){NAN}, "var of a scalar, ddof 1");
    OK(mlx_logsumexp(&r, z, false, S));
    check_result(r, MLX_FLOAT32, 0, NULL, (const double[]){2.5}, "logsumexp of a scalar");
    OK(mlx_softmax(&r, z, false, S));
    check_result(r, MLX_FLOAT32, 0, NULL, (const double[]){1}, "softmax of a scalar");
    OK(mlx_argmax(&r, z, true, S));
    check_result(r, MLX_UINT32, 0, NULL, (const double[]){0}, "argmax of a scalar");
    TU_FREE(x, z, r);
}

/* ---- errors ---- */

static void test_bad_axes_report_one_message(void **state)
{
    (void)state;
    mlx_array x = tu_f32((const float[]){1, 2, 3, 4, 5, 6}, (const int[]){2, 3}, 2), r = mlx_array_new();
    EXPECT_FAIL(r, mlx_sum_axis(&r, x, 2, false, S), "[sum]", "Invalid axis 2 for array with 2 dimensions.");
    EXPECT_FAIL(r, mlx_max_axes(&r, x, (const int[]){0, -3}, 2, false, S), "[max]",
                "Invalid axis -3 for array with 2 dimensions.");
    EXPECT_FAIL(r, mlx_prod_axes(&r, x, (const int[]){1, -1}, 2, false, S), "[prod]",
                "Duplicate axes detected in reduction.");
    EXPECT_FAIL(r, mlx_mean_axis(&r, x, -3, false, S), "[mean]", "axis -3 is out of bounds for array with 2 dimensions.");
    EXPECT_FAIL(r, mlx_std_axes(&r, x, (const int[]){0, 0}, 2, false, 1, S), "[std]", "Duplicate axes");
    EXPECT_FAIL(r, mlx_var_axis(&r, x, 5, false, 0, S), "[var]", "axis 5 is out of bounds");
    EXPECT_FAIL(r, mlx_argmax_axis(&r, x, 2, false, S), "[argmax]", "Invalid axis 2");
    EXPECT_FAIL(r, mlx_logsumexp_axes(&r, x, (const int[]){1, 1}, 2, false, S), "[logsumexp]", "Duplicate axes");
    EXPECT_FAIL(r, mlx_softmax_axis(&r, x, 2, false, S), "[softmax]", "Invalid axis 2");
    EXPECT_FAIL(r, mlx_all_axes(&r, x, NULL, 1, false, S), "[all]", "axes pointer is NULL");
    mlx_array z = tu_f32((const float[]){1}, NULL, 0);
    EXPECT_FAIL(r, mlx_softmax_axis(&r, z, 0, false, S), "[softmax]",
                "Received non-empty axes for array with 0 dimensions.");
    EXPECT_FAIL(r, mlx_logsumexp_axis(&r, z, 0, false, S), "[logsumexp]",
                "Received non-empty axes for array with 0 dimensions.");
    assert_int_not_equal(mlx_sum(NULL, x, false, S), 0);
    tu_expect_error("[sum]");
    EXPECT_FAIL(r, mlx_sum(&r, (mlx_array){NULL}, false, S), "[sum]", "empty array handle");
    TU_FREE(x, z, r);
}

/* ---- accuracy and the threaded paths ---- */

static size_t big_n(void) { return getenv("MC_TEST_SMALL") ? (1u << 20) : (16u << 20); }

/* Fills x with n values of magnitudes 1..2 and random low bits, so that a
 * sequential float32 sum loses digits; returns their float64 sum. */
static double fill_hard(float *x, size_t n, uint32_t seed)
{
    double s = 0;
    uint32_t st = seed;
    for (size_t i = 0; i < n; i++) {
        st = st * 1664525u + 1013904223u;
        x[i] = 1.0f + (float)(st >> 8) * (1.0f / 16777216.0f);
        s += x[i];
    }
    return s;
}

static void test_float32_sum_of_16m_is_within_1e6_of_float64(void **state)
{
    (void)state;
    size_t n = big_n();
    float *v = malloc(n * sizeof(float));
    assert_non_null(v);
    double want = fill_hard(v, n, 12345);
    mlx_array x = mlx_array_new_data(v, (const int[]){(int)n}, 1, MLX_FLOAT32), r = mlx_array_new();
    free(v);
    OK(mlx_sum(&r, x, false, S));
    float got;
    OK(mlx_array_item_float32(&got, r));
    double rel = fabs(got - want) / want;
    if (rel > 1e-6)
        fail_msg("sum of %zu: %.9g vs %.9g (relative %.3g)", n, got, want, rel);
    /* mean too, and the sum of a strided view (a copy, then the same) */
    OK(mlx_mean(&r, x, false, S));
    OK(mlx_array_item_float32(&got, r));
    assert_true(fabs(got - want / (double)n) / (want / (double)n) < 1e-6);
    TU_FREE(x, r);
}

/* Sums every threaded layout of a (rows, cols) float32 array and checks
 * each output against float64. */
static void check_sums_2d(int rows, int cols)
{
    size_t n = (size_t)rows * (size_t)cols;
    float *v = malloc(n * sizeof(float));
    double *rs = calloc((size_t)rows, sizeof(double)), *cs = calloc((size_t)cols, sizeof(double));
    assert_true(v && rs && cs);
    fill_hard(v, n, (uint32_t)rows);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            rs[i] += v[(size_t)i * (size_t)cols + (size_t)j];
            cs[j] += v[(size_t)i * (size_t)cols + (size_t)j];
        }
    mlx_array x = mlx_array_new_data(v, (const int[]){rows, cols}, 2, MLX_FLOAT32), r = mlx_array_new();
    free(v);
    OK(mlx_sum_axis(&r, x, 1, false, S));
    OK(mlx_array_eval(r));
    const float *d = mlx_array_data_float32(r);
    for (int i = 0; i < rows; i++)
        if (fabs(d[i] - rs[i]) > 1e-6 * rs[i])
            fail_msg("(%d, %d) row %d: %.9g vs %.9g", rows, cols, i, d[i], rs[i]);
    OK(mlx_sum_axis(&r, x, 0, false, S));
    OK(mlx_array_eval(r));
    d = mlx_array_data_float32(r);
    for (int j = 0; j < cols; j++)
        if (fabs(d[j] - cs[j]) > 1e-6 * cs[j])
            fail_msg("(%d, %d) column %d: %.9g vs %.9g", rows, cols, j, d[j], cs[j]);
    TU_FREE(x, r);
    free(rs);
    free(cs);
}

static void test_threaded_row_and_column_sums_match_float64(void **state)
{
    (void)state;
    int big = (int)(big_n() / 8);
    check_sums_2d(3, big);     /* few long rows: pieces; few columns of a short axis */
    check_sums_2d(big, 3);     /* long columns: pieces of rows */
    check_sums_2d(1000, 1000); /* many rows; column chunks */
    check_sums_2d(1, 5);
}

static void test_threaded_integer_and_max_paths_are_exact(void **state)
{
    (void)state;
    size_t n = big_n() / 4;
    int32_t *v = malloc(n * sizeof(int32_t));
    assert_non_null(v);
    int64_t want = 0;
    int32_t mx = INT32_MIN;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = (int32_t)((i * 2654435761u) % 2001) - 1000;
        want += v[i];
        if (v[i] > mx) {
            mx = v[i];
            at = i;
        }
    }
    mlx_array x = mlx_array_new_data(v, (const int[]){(int)n}, 1, MLX_INT32), r = mlx_array_new();
    free(v);
    OK(mlx_sum(&r, x, false, S));
    assert_true(tu_get(r, 0) == (double)(int32_t)want);
    OK(mlx_max(&r, x, false, S));
    assert_true(tu_get(r, 0) == mx);
    OK(mlx_argmax(&r, x, false, S));
    assert_true(tu_get(r, 0) == (double)at);
    TU_FREE(x, r);
}

/* ---- ISA kernels against the scalar reference ---- */

static uint32_t lcg(uint32_t *st)
{
    *st = *st * 1664525u + 1013904223u;
    return *st >> 8;
}

static size_t dsize(int d) { return mlx_dtype_size((mlx_dtype)d); }

/* Element i of a buffer of dtype d, as a double. */
static double elem(const void *p, int d, size_t i)
{
    const char *c = (const char *)p + i * dsize(d);
    switch (d) {
    case MLX_BOOL: return *(const uint8_t *)c;
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

/* n random elements of dtype d: small integers (bool 0/1), or floats in
 * [lo, hi) with NaN at every nan_every-th element (0: none). */
static void *random_data(int d, size_t n, uint32_t seed, double lo, double hi, size_t nan_every)
{
    char *p = malloc(n * dsize(d) + 8);
    assert_non_null(p);
    uint32_t st = seed;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = lcg(&st);
        double f = lo + (hi - lo) * (u / 16777216.0);
        bool nan = nan_every && i % nan_every == nan_every - 1;
        char *c = p + i * dsize(d);
        switch (d) {
        case MLX_BOOL: *(uint8_t *)c = u & 1; break;
        case MLX_UINT8: *(uint8_t *)c = (uint8_t)(u % 7); break;
        case MLX_UINT16: *(uint16_t *)c = (uint16_t)(u % 300); break;
        case MLX_UINT32: *(uint32_t *)c = u * 977u; break;
        case MLX_UINT64: *(uint64_t *)c = (uint64_t)u * 1000003u; break;
        case MLX_INT8: *(int8_t *)c = (int8_t)(u % 7) - 3; break;
        case MLX_INT16: *(int16_t *)c = (int16_t)(u % 300) - 150; break;
        case MLX_INT32: *(int32_t *)c = (int32_t)(u * 977u); break;
        case MLX_INT64: *(int64_t *)c = (int64_t)u * 1000003 - 7000000000LL; break;
        case MLX_FLOAT16: *(uint16_t *)c = nan ? 0x7e00 : tu_f16_bits((float)(round(f * 64) / 64)); break;
        case MLX_BFLOAT16: *(uint16_t *)c = nan ? 0x7fc0 : tu_bf16_bits((float)(round(f * 16) / 16)); break;
        case MLX_FLOAT32: *(float *)c = nan ? NAN : (float)f; break;
        default: *(double *)c = nan ? NAN : f; break;
        }
    }
    return p;
}

/* Compares n outputs of dtype d; sums of floats may differ in rounding. */
static void same_outputs(const void *a, const void *b, int d, size_t n, double rtol, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double x = elem(a, d, i), y = elem(b, d, i);
        if (isnan(x) && isnan(y))
            continue;
        if (!(x == y || fabs(x - y) <= rtol * fabs(y) + (rtol ? 1e-30 : 0)))
            fail_msg("%s: output %zu is %.17g, the scalar reference gives %.17g", what, i, x, y);
    }
}

static const int real_dtypes[] = {MLX_BOOL,  MLX_UINT8, MLX_UINT16,  MLX_UINT32,  MLX_UINT64,
                                  MLX_INT8,  MLX_INT16, MLX_INT32,   MLX_INT64,   MLX_FLOAT16,
                                  MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16};

static double sum_rtol(int acc)
{
    return acc == MLX_FLOAT64 ? 1e-13 : acc == MLX_FLOAT32 ? 1e-5 : 0;
}

static void compare_reduce_kernels(const mc_reduce_table *t, const mc_reduce_table *ref)
{
    static const size_t lens[] = {0, 1, 3, 17, 64, 100, 257, 1000, 4099};
    char what[128];
    for (size_t di = 0; di < N_(real_dtypes); di++) {
        int d = real_dtypes[di];
        for (int op = 0; op < MC_R_COUNT; op++) {
            int acc = mc_reduce_acc_dtype(op, d);
            assert_true((t->row[op][d] == NULL) == (ref->row[op][d] == NULL));
            if (!ref->row[op][d])
                continue;
            /* products of values near 1, so that they neither vanish nor overflow */
            double lo = op == MC_R_PROD ? 0.9 : -3, hi = op == MC_R_PROD ? 1.1 : 5;
            size_t nan_every = (op == MC_R_MAX || op == MC_R_MIN) ? 97 : 0;
            double rtol = op == MC_R_SUM || op == MC_R_PROD ? sum_rtol(acc) : 0;
            for (size_t li = 0; li < N_(lens); li++) {
                size_t n = lens[li], rows = 3, ld = n + 2;
                void *x = random_data(d, rows * ld + 1, (uint32_t)(n * 31 + (size_t)op), lo, hi, nan_every);
                char a[3 * 8], b[3 * 8];
                t->row[op][d](x, n, rows, ld, a);
                ref->row[op][d](x, n, rows, ld, b);
                snprintf(what, sizeof what, "%s row op %d dtype %d n %zu", t->isa, op, d, n);
                same_outputs(a, b, acc, rows, rtol, what);
                /* columns: n rows of m = 3 (fewer than the lanes), 37 or 300 */
                size_t m = li % 3 == 0 ? 3 : n % 2 ? 37 : 300, nr = n < 64 ? n : 64, lc = m + 5;
                void *y = random_data(d, nr * lc + 1, (uint32_t)n + 7u, lo, hi, nan_every);
                char *ca = malloc(m * 8), *cb = malloc(m * 8);
                assert_true(ca && cb);
                t->col[op][d](y, nr, m, lc, ca);
                ref->col[op][d](y, nr, m, lc, cb);
                snprintf(what, sizeof what, "%s col op %d dtype %d n %zu", t->isa, op, d, nr);
                same_outputs(ca, cb, acc, m, rtol, what);
                free(ca);
                free(cb);
                free(x);
                free(y);
            }
        }
    }
}

static void compare_arg_kernels(const mc_reduce_table *t, const mc_reduce_table *ref)
{
    static const size_t lens[] = {1, 2, 5, 16, 33, 100, 300, 1001};
    char what[128];
    for (size_t di = 0; di < N_(real_dtypes); di++) {
        int d = real_dtypes[di];
        for (int op = 0; op < MC_ARG_COUNT; op++) {
            for (size_t li = 0; li < N_(lens); li++) {
                size_t n = lens[li], rows = 4, ld = n + 1;
                /* NaNs every 13th element: some rows start with one */
                void *x = random_data(d, rows * ld, (uint32_t)(n + 3 * (size_t)op), -4, 4, 13);
                uint32_t a[4], b[4];
                t->arg_row[op][d](x, n, rows, ld, a);
                ref->arg_row[op][d](x, n, rows, ld, b);
                snprintf(what, sizeof what, "%s arg row op %d dtype %d n %zu", t->isa, op, d, n);
                same_outputs(a, b, MLX_UINT32, rows, 0, what);
                size_t m = li % 2 ? 70 : 5;
                uint32_t ca[70], cb[70];
                void *y = random_data(d, n * (m + 3), (uint32_t)n, -4, 4, 13);
                t->arg_col[op][d](y, n, m, m + 3, ca);
                ref->arg_col[op][d](y, n, m, m + 3, cb);
                snprintf(what, sizeof what, "%s arg col op %d dtype %d n %zu", t->isa, op, d, n);
                same_outputs(ca, cb, MLX_UINT32, m, 0, what);
                free(x);
                free(y);
            }
        }
    }
}

static void compare_fused_kernels(const mc_reduce_table *t, const mc_reduce_table *ref)
{
    static const int fl[] = {MLX_FLOAT16, MLX_BFLOAT16, MLX_FLOAT32, MLX_FLOAT64};
    static const size_t lens[] = {1, 7, 64, 129, 1000, 3000};
    char what[128];
    for (size_t di = 0; di < N_(fl); di++) {
        int d = fl[di];
        /* one output rounding of the half types; SLEEF vs libm exp otherwise */
        double rtol = d == MLX_FLOAT64 ? 1e-13 : d == MLX_FLOAT32 ? 4e-6 : d == MLX_FLOAT16 ? 2e-3 : 1.6e-2;
        for (size_t li = 0; li < N_(lens); li++) {
            size_t n = lens[li], rows = 3;
            void *x = random_data(d, rows * n, (uint32_t)n + 11u, -6, 6, 0);
            char a[3 * 8], b[3 * 8];
            char *ya = malloc(rows * n * 8), *yb = malloc(rows * n * 8);
            assert_true(ya && yb);
            snprintf(what, sizeof what, "%s fused dtype %d n %zu", t->isa, d, n);
            for (int ddof = 0; ddof < 2; ddof++) {
                t->var_row[d](x, n, rows, n, ddof, ddof, a);
                ref->var_row[d](x, n, rows, n, ddof, ddof, b);
                same_outputs(a, b, d, rows, rtol, what);
            }
            t->lse_row[d](x, n, rows, n, a);
            ref->lse_row[d](x, n, rows, n, b);
            same_outputs(a, b, d, rows, rtol, what);
            t->softmax_row[d](x, ya, n, rows, n);
            ref->softmax_row[d](x, yb, n, rows, n);
            for (size_t i = 0; i < rows * n; i++) {
                double u = elem(ya, d, i), v = elem(yb, d, i);
                if (fabs(u - v) > rtol * fabs(v) + 1e-7)
                    fail_msg("%s: softmax %zu: %.9g vs %.9g", what, i, u, v);
            }
            free(ya);
            free(yb);
            free(x);
        }
    }
}

static void test_every_isa_matches_the_scalar_reference(void **state)
{
    (void)state;
    const mc_reduce_table *ref = mc_reduce_kernels_for("scalar");
    assert_non_null(ref);
    static const char *const isas[] = {"scalar", "avx2", "avx512", "neon"};
    int checked = 0;
    for (size_t i = 0; i < N_(isas); i++) {
        const mc_reduce_table *t = mc_reduce_kernels_for(isas[i]);
        if (!t)
            continue;
        assert_string_equal(t->isa, isas[i]);
        compare_reduce_kernels(t, ref);
        compare_arg_kernels(t, ref);
        compare_fused_kernels(t, ref);
        checked++;
    }
    assert_true(checked >= 1);
    /* the reduction layer runs the elementwise layer's ISA */
    assert_string_equal(mc_reduce_kernels()->isa, mc_kernels()->isa);
}

/* The scalar reference itself, on hand-computed answers. */
static void test_scalar_reference_kernels_give_known_answers(void **state)
{
    (void)state;
    const mc_reduce_table *t = mc_reduce_kernels_for("scalar");
    const int8_t i8[] = {-3, 7, 7, -128, 5};
    int32_t s32;
    t->row[MC_R_SUM][MLX_INT8](i8, 5, 1, 5, &s32);
    assert_int_equal(s32, -112);
    int8_t m8;
    t->row[MC_R_MIN][MLX_INT8](i8, 5, 1, 5, &m8);
    assert_int_equal(m8, -128);
    uint32_t idx;
    t->arg_row[MC_ARG_MAX][MLX_INT8](i8, 5, 1, 5, &idx);
    assert_int_equal(idx, 1);
    const uint8_t u8[] = {200, 100, 250};
    uint32_t su;
    t->row[MC_R_SUM][MLX_UINT8](u8, 3, 1, 3, &su);
    assert_int_equal(su, 550);
    const double cols[] = {1, 2, 3, 10, 20, 30};
    double cs[3];
    t->col[MC_R_SUM][MLX_FLOAT64](cols, 2, 3, 3, cs);
    assert_true(cs[0] == 11 && cs[1] == 22 && cs[2] == 33);
    uint8_t all;
    const float f[] = {1, -0.0f, 2};
    t->row[MC_R_AND][MLX_FLOAT32](f, 3, 1, 3, &all);
    assert_int_equal(all, 0);
}

/* ---- graph ---- */

static void test_infer_runs_again_on_a_new_input_shape(void **state)
{
    (void)state;
    static const float zeros[210];
    mlx_array x = tu_f32(zeros, (const int[]){2, 3, 4}, 3), r = mlx_array_new();
    OK(mlx_sum_axes(&r, x, (const int[]){-1, 0}, 2, true, S));
    mc_array *node = mc_arr(r);
    assert_int_equal(node->prim, MC_PRIM_REDUCE);
    mlx_array y = tu_f32(zeros, (const int[]){5, 6, 7}, 3);
    mc_array *in[1] = {mc_arr(y)};
    mc_meta meta;
    OK(mc_prims[MC_PRIM_REDUCE]->infer(&meta, in, 1, node->params, "sum"));
    assert_int_equal(meta.ndim, 3);
    assert_true(meta.shape[0] == 1 && meta.shape[1] == 6 && meta.shape[2] == 1);
    assert_int_equal(meta.dtype, MLX_FLOAT32);
    /* too few dims for the recorded axes: reported, not a crash */
    mlx_array z = tu_f32(zeros, (const int[]){5}, 1);
    in[0] = mc_arr(z);
    assert_int_not_equal(mc_prims[MC_PRIM_REDUCE]->infer(&meta, in, 1, node->params, "sum"), 0);
    tu_expect_error("[sum]");
    assert_string_equal(mc_prim_name(MC_PRIM_REDUCE, node->params), "Sum");
    TU_FREE(x, y, z, r);
}

/* ---- allocation failures ---- */

#ifdef MC_FAULT_INJECTION
static mlx_array fx;

static int f_sum_transposed(mlx_array *y) { return mlx_sum_axes(y, fx, (const int[]){0, 2}, 2, false, S); }
static int f_mean_keep(mlx_array *y) { return mlx_mean_axis(y, fx, 1, true, S); }
static int f_var(mlx_array *y) { return mlx_std_axis(y, fx, 0, false, 1, S); }
static int f_softmax0(mlx_array *y) { return mlx_softmax_axis(y, fx, 0, true, S); }
static int f_logsumexp(mlx_array *y) { return mlx_logsumexp_axes(y, fx, (const int[]){2, 1}, 2, false, S); }
static int f_argmin(mlx_array *y) { return mlx_argmin(y, fx, true, S); }
static int f_max_half(mlx_array *y)
{
    mlx_array h = mlx_array_new();
    int rc = mlx_astype(&h, fx, MLX_FLOAT16, S);
    if (!rc)
        rc = mlx_max_axis(y, h, -1, false, S);
    mlx_array_free(h);
    return rc;
}
#endif

static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    fx = tu_case_input(MLX_FLOAT32, 1, 3, 4, 5);
    int (*ops[])(mlx_array *) = {f_sum_transposed, f_mean_keep, f_var, f_softmax0, f_logsumexp, f_argmin, f_max_half};
    for (size_t k = 0; k < N_(ops); k++) {
        for (long n = 0;; n++) {
            mlx_array y = mlx_array_new();
            mc_fault_fail_after(n);
            int rc = ops[k](&y);
            if (!rc)
                rc = mlx_array_eval(y);
            mc_fault_fail_after(-1);
            mlx_array_free(y);
            if (!rc) {
                tu_expect_no_error();
                break;
            }
            if (tu_error_count() != 1)
                fail_msg("op %zu, allocation %ld: %d messages, last \"%s\"", k, n, tu_error_count(),
                         tu_last_error());
            tu_reset_errors();
            assert_true(n < 1000);
        }
    }
    mlx_array_free(fx);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_ops_match_numpy_for_every_dtype_axes_and_layout),
        T(test_empty_reductions_give_identities_or_errors),
        T(test_nan_and_inf_follow_mlx),
        T(test_complex64_sums_products_and_order),
        T(test_var_and_std_of_complex64_are_float32_magnitudes),
        T(test_logsumexp_and_softmax_of_complex64_compose_as_mlx),
        T(test_noop_reductions_follow_mlx),
        T(test_bad_axes_report_one_message),
        T(test_float32_sum_of_16m_is_within_1e6_of_float64),
        T(test_threaded_row_and_column_sums_match_float64),
        T(test_threaded_integer_and_max_paths_are_exact),
        T(test_every_isa_matches_the_scalar_reference),
        T(test_scalar_reference_kernels_give_known_answers),
        T(test_infer_runs_again_on_a_new_input_shape),
        T(test_allocation_failures_report_once_and_leak_nothing),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
