/* Suite 'binary': the elementwise functions of two arrays beyond the four
 * arithmetic ones (src/ops/binary.c, logic.c) and isclose (misc.c).
 * Expected values were computed with numpy 1.24 (Python's divmod for the
 * integer floor division); where MLX differs from numpy the test follows
 * MLX and says so. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/alloc.h" /* mc_fault_fail_after */
#include "test_util.h"

typedef int (*binary_fn)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);

/* ---- helpers ---- */

static mlx_array vec_of(mlx_dtype d, const double *v, int n)
{
    int shape[1] = {n};
    return tu_array_of(d, v, shape, 1);
}

static mlx_array vec_via_f32(mlx_dtype d, const float *v, int n)
{
    int shape[1] = {n};
    mlx_array f = tu_f32(v, shape, 1), r = mlx_array_new();
    assert_int_equal(mlx_astype(&r, f, d, tu_stream()), 0);
    mlx_array_free(f);
    return r;
}

static bool close_enough(double got, double want, double rtol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= rtol * fabs(want);
}

static void expect_values(mlx_array r, const double *want, int n, double rtol, const char *what)
{
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mlx_array_size(r), (size_t)n);
    for (int i = 0; i < n; i++) {
        double got = tu_get(r, (size_t)i);
        if (!close_enough(got, want[i], rtol))
            fail_msg("%s [%d]: got %.17g, want %.17g", what, i, got, want[i]);
    }
}

static mlx_array run(binary_fn f, mlx_array a, mlx_array b, mlx_dtype want_dtype)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(f(&r, a, b, tu_stream()), 0);
    tu_expect_no_error();
    assert_int_equal(mlx_array_dtype(r), want_dtype);
    return r;
}

/* f(a, b) with a and b of dtypes da, db from values, checked against want. */
static void check(binary_fn f, mlx_dtype da, const double *a, mlx_dtype db, const double *b, int n,
                  mlx_dtype want_dtype, const double *want, const char *what)
{
    mlx_array x = vec_of(da, a, n), y = vec_of(db, b, n);
    mlx_array r = run(f, x, y, want_dtype);
    /* floating results within 3 float32 ULP, integers exactly */
    bool inexact = want_dtype >= MLX_FLOAT16;
    expect_values(r, want, n, inexact ? 4e-7 : 0, what);
    TU_FREE(x, y, r);
}

static void expect_fail(binary_fn f, mlx_array a, mlx_array b, const char *message)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(f(&r, a, b, tu_stream()), 1);
    tu_expect_error(message);
    assert_null(r.ctx);
}

/* ---- floating values against numpy ---- */

static void check_float_values(mlx_dtype d, double rtol)
{
    static const double a[8] = {-7.5, -3, -1, 0, 0.5, 2, 5, 7.25};
    static const double b[8] = {2, -2, 3, -4, 0.25, 3, -1.5, 2.5};
    static const double fd[8] = {-4.0, 1.0, -1.0, -0.0, 2.0, 0.0, -4.0, 2.0};
    static const double rem[8] = {0.5, -1.0, 2.0, -0.0, 0.0, 2.0, -1.0, 2.25};
    static const double p[8] = {2, 0.5, 3, 10, 1.5, 0, 4, 9};
    static const double q[8] = {3, -1, 0.5, -2, 2, 0, 0.5, 1.5};
    static const double pw[8] = {8.0, 2.0, 1.7320508075688772, 0.01, 2.25, 1.0, 2.0, 27.0};
    static const double y[8] = {1, -1, 1, -1, 0, 0, 3, -2};
    static const double x[8] = {1, 1, -1, -1, 1, -1, 0, 5};
    static const double at[8] = {0.7853981633974483, -0.7853981633974483, 2.356194490192345, -2.356194490192345,
                                 0.0, 3.141592653589793, 1.5707963267948966, -0.3805063771123649};
    mlx_array r;
    mlx_array va = vec_of(d, a, 8), vb = vec_of(d, b, 8);
    r = run(mlx_floor_divide, va, vb, d);
    expect_values(r, fd, 8, 0, "floor_divide");
    mlx_array_free(r);
    r = run(mlx_remainder, va, vb, d);
    expect_values(r, rem, 8, 0, "remainder");
    mlx_array_free(r);
    TU_FREE(va, vb);
    va = vec_of(d, p, 8);
    vb = vec_of(d, q, 8);
    r = run(mlx_power, va, vb, d);
    expect_values(r, pw, 8, rtol, "power");
    TU_FREE(va, vb, r);
    va = vec_of(d, y, 8);
    vb = vec_of(d, x, 8);
    r = run(mlx_arctan2, va, vb, d);
    expect_values(r, at, 8, rtol, "arctan2");
    TU_FREE(va, vb, r);

    static const float l[8] = {0, 1, -2, 100, -INFINITY, 3, INFINITY, -1};
    static const float m[8] = {0, 2, -2, 100, -INFINITY, -50, 1, INFINITY};
    static const double lae[8] = {0.6931471805599453, 2.313261687518223, -1.3068528194400546, 100.69314718055995,
                                  -INFINITY, 3.0, INFINITY, INFINITY};
    va = vec_via_f32(d, l, 8);
    vb = vec_via_f32(d, m, 8);
    r = run(mlx_logaddexp, va, vb, d);
    expect_values(r, lae, 8, rtol, "logaddexp");
    TU_FREE(va, vb, r);
}

static void test_float_functions_match_numpy_in_float32(void **state)
{
    (void)state;
    check_float_values(MLX_FLOAT32, 4e-7);
}

static void test_float_functions_match_numpy_in_float64(void **state)
{
    (void)state;
    check_float_values(MLX_FLOAT64, 1e-15);
}

static void test_float_functions_in_half_precision(void **state)
{
    (void)state;
    check_float_values(MLX_FLOAT16, 1e-3);
    check_float_values(MLX_BFLOAT16, 8e-3);
}

/* MLX's floor_divide of floats is floor(divide(a, b)): the quotient is
 * rounded to the dtype first. 3 / 0.300048828125 is 9.9984 in float32
 * but 10 in float16. */
static void test_floor_divide_of_floats_floors_the_rounded_quotient(void **state)
{
    (void)state;
    static const double a[2] = {3.0, -3.0}, b[2] = {0.300048828125, 0.300048828125};
    check(mlx_floor_divide, MLX_FLOAT16, a, MLX_FLOAT16, b, 2, MLX_FLOAT16, (double[]){10, -10}, "fd16");
    check(mlx_floor_divide, MLX_FLOAT32, a, MLX_FLOAT32, b, 2, MLX_FLOAT32, (double[]){9, -10}, "fd32");
}

/* ---- integer division ---- */

static const double ia[9] = {-7, 7, -7, 7, -1, 1, -5, 5, 120};
static const double ib[9] = {2, 2, -2, -2, 3, -3, 3, -3, -27};

/* MLX's floor_divide of integers builds its Divide primitive, whose kernel
 * is C's / (mlx/ops.cpp floor_divide; backend/cpu binary_ops.h): the
 * quotient truncates toward zero, as does its divmod (tested below). */
static void test_floor_divide_of_integers_truncates_as_mlx(void **state)
{
    (void)state;
    static const double want[9] = {-3, 3, 3, -3, 0, 0, -1, -1, -4};
    check(mlx_floor_divide, MLX_INT32, ia, MLX_INT32, ib, 9, MLX_INT32, want, "fd int32");
    check(mlx_floor_divide, MLX_INT8, ia, MLX_INT8, ib, 9, MLX_INT8, want, "fd int8");
    check(mlx_floor_divide, MLX_INT64, ia, MLX_INT64, ib, 9, MLX_INT64, want, "fd int64");
    static const double ua[3] = {7, 200, 3}, ub[3] = {2, 7, 5};
    check(mlx_floor_divide, MLX_UINT8, ua, MLX_UINT8, ub, 3, MLX_UINT8, (double[]){3, 28, 0}, "fd uint8");
    /* uint8 with int8 divides in int16 */
    check(mlx_floor_divide, MLX_UINT8, (double[]){200}, MLX_INT8, (double[]){-3}, 1, MLX_INT16, (double[]){-66},
          "fd u8/i8");
    static const double ba[2] = {1, 0}, bb[2] = {1, 1};
    check(mlx_floor_divide, MLX_BOOL, ba, MLX_BOOL, bb, 2, MLX_BOOL, (double[]){1, 0}, "fd bool");
    /* the extremes: INT8_MIN / -1 wraps, / 1 is exact */
    check(mlx_floor_divide, MLX_INT8, (double[]){-128, -128, 127}, MLX_INT8, (double[]){-1, 1, -128}, 3, MLX_INT8,
          (double[]){-128, -128, 0}, "fd int8 extremes");
}

static void test_remainder_takes_the_divisor_sign(void **state)
{
    (void)state;
    static const double want[9] = {1, 1, -1, -1, 2, -2, 1, -1, -15}; /* Python's % */
    check(mlx_remainder, MLX_INT32, ia, MLX_INT32, ib, 9, MLX_INT32, want, "rem int32");
    check(mlx_remainder, MLX_INT8, ia, MLX_INT8, ib, 9, MLX_INT8, want, "rem int8");
    check(mlx_remainder, MLX_FLOAT32, ia, MLX_FLOAT32, ib, 9, MLX_FLOAT32, want, "rem float32");
    static const double ua[3] = {7, 200, 3}, ub[3] = {2, 7, 5};
    check(mlx_remainder, MLX_UINT16, ua, MLX_UINT16, ub, 3, MLX_UINT16, (double[]){1, 4, 3}, "rem uint16");
}

static void expect_divmod(mlx_dtype d, const double *a, const double *b, int n, const double *q, const double *r)
{
    mlx_array x = vec_of(d, a, n), y = vec_of(d, b, n);
    mlx_vector_array v = mlx_vector_array_new();
    assert_int_equal(mlx_divmod(&v, x, y, tu_stream()), 0);
    assert_int_equal(mlx_vector_array_size(v), 2);
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&out, v, 0), 0);
    assert_int_equal(mlx_array_dtype(out), d);
    expect_values(out, q, n, 0, "divmod quotient");
    assert_int_equal(mlx_vector_array_get(&out, v, 1), 0);
    assert_int_equal(mlx_array_dtype(out), d);
    expect_values(out, r, n, 0, "divmod remainder");
    TU_FREE(x, y, out);
    mlx_vector_array_free(v);
}

/* MLX 0.31.1's DivMod kernel (backend/cpu/binary.cpp) is C's: the quotient
 * truncates toward zero and the remainder takes the dividend's sign (fmod
 * for floats), for integers and floats alike, although its docstring says
 * (a // b, a % b). Expected values from MLX's CPU build. */
static void test_divmod_truncates_as_mlx(void **state)
{
    (void)state;
    static const double q[9] = {-3, 3, 3, -3, 0, 0, -1, -1, -4};
    static const double r[9] = {-1, 1, -1, 1, -1, 1, -2, 2, 12};
    expect_divmod(MLX_INT32, ia, ib, 9, q, r);
    expect_divmod(MLX_INT8, ia, ib, 9, q, r);
    expect_divmod(MLX_INT64, ia, ib, 9, q, r);
    expect_divmod(MLX_FLOAT32, ia, ib, 9, q, r);
    expect_divmod(MLX_FLOAT64, ia, ib, 9, q, r);
    expect_divmod(MLX_FLOAT16, (double[]){-7.5, 5.5}, (double[]){2, -2}, 2, (double[]){-3, -2},
                  (double[]){-1.5, 1.5});
    static const double ua[3] = {7, 200, 3}, ub[3] = {2, 7, 5};
    expect_divmod(MLX_UINT32, ua, ub, 3, (double[]){3, 28, 0}, (double[]){1, 4, 3});
    /* the extremes: INT8_MIN / -1 wraps, its remainder is 0 */
    expect_divmod(MLX_INT8, (double[]){-128, -128, 127}, (double[]){-1, 1, -128}, 3, (double[]){-128, -128, 0},
                  (double[]){0, 0, 127});
}

static void test_divmod_promotes_broadcasts_and_refuses_complex(void **state)
{
    (void)state;
    static const double a[3] = {-7, 8, 9};
    mlx_array x = vec_of(MLX_INT16, a, 3), y = mlx_array_new_float(2.0f);
    mlx_vector_array v = mlx_vector_array_new();
    assert_int_equal(mlx_divmod(&v, x, y, tu_stream()), 0);
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&out, v, 0), 0);
    assert_int_equal(mlx_array_dtype(out), MLX_FLOAT32);
    expect_values(out, (double[]){-3, 4, 4}, 3, 0, "divmod q");
    assert_int_equal(mlx_vector_array_get(&out, v, 1), 0);
    expect_values(out, (double[]){-1, 0, 1}, 3, 0, "divmod r");
    mlx_array c = mlx_array_new_complex(1, 2);
    assert_int_equal(mlx_divmod(&v, x, c, tu_stream()), 1);
    tu_expect_error("[divmod] Complex type not supported.");
    assert_int_equal(mlx_vector_array_size(v), 2); /* unchanged */
    assert_int_equal(mlx_divmod(NULL, x, y, tu_stream()), 1);
    tu_expect_error("[divmod]");
    TU_FREE(x, y, out, c);
    mlx_vector_array_free(v);
}

/* The kernels define x / 0 and x % 0 as 0 for integers (C would trap);
 * MLX's C++ leaves them undefined. What matters is that nothing crashes. */
static void test_integer_division_by_zero_does_not_crash(void **state)
{
    (void)state;
    static const mlx_dtype ds[4] = {MLX_INT32, MLX_UINT8, MLX_INT8, MLX_INT64};
    static const double a[3] = {5, -128, 0}, b[3] = {0, -1, 0};
    for (int k = 0; k < 4; k++) {
        mlx_array x = vec_of(ds[k], a, 3), y = vec_of(ds[k], b, 3), r = mlx_array_new();
        assert_int_equal(mlx_floor_divide(&r, x, y, tu_stream()), 0);
        assert_int_equal(mlx_array_eval(r), 0);
        assert_int_equal(mlx_remainder(&r, x, y, tu_stream()), 0);
        assert_int_equal(mlx_array_eval(r), 0);
        mlx_vector_array v = mlx_vector_array_new();
        assert_int_equal(mlx_divmod(&v, x, y, tu_stream()), 0);
        assert_int_equal(mlx_eval(v), 0);
        mlx_vector_array_free(v);
        TU_FREE(x, y, r);
    }
}

/* ---- power, maximum, minimum ---- */

static void test_power_of_integers_stays_integer(void **state)
{
    (void)state;
    static const double b[6] = {2, -2, 3, 2, 7, 1};
    static const double e[6] = {10, 3, 0, -1, 2, -5};
    /* MLX: a negative exponent of a signed integer gives 0 */
    check(mlx_power, MLX_INT32, b, MLX_INT32, e, 6, MLX_INT32, (double[]){1024, -8, 1, 0, 49, 0}, "pow int32");
    /* int8: 2**10 wraps to 0, 7**2 = 49 */
    check(mlx_power, MLX_INT8, b, MLX_INT8, e, 6, MLX_INT8, (double[]){0, -8, 1, 0, 49, 0}, "pow int8");
    static const double ub[3] = {3, 2, 0}, ue[3] = {5, 8, 0};
    check(mlx_power, MLX_UINT8, ub, MLX_UINT8, ue, 3, MLX_UINT8, (double[]){243, 0, 1}, "pow uint8");
    /* an integer base with a float exponent promotes */
    check(mlx_power, MLX_INT32, (double[]){4}, MLX_FLOAT32, (double[]){0.5}, 1, MLX_FLOAT32, (double[]){2}, "pow mixed");
}

static void test_maximum_and_minimum_propagate_nan(void **state)
{
    (void)state;
    static const float a[5] = {NAN, 1, NAN, -0.5f, 3};
    static const float b[5] = {1, NAN, NAN, -1, INFINITY};
    mlx_array x = vec_via_f32(MLX_FLOAT32, a, 5), y = vec_via_f32(MLX_FLOAT32, b, 5);
    mlx_array r = run(mlx_maximum, x, y, MLX_FLOAT32);
    expect_values(r, (double[]){NAN, NAN, NAN, -0.5, INFINITY}, 5, 0, "maximum");
    mlx_array_free(r);
    r = run(mlx_minimum, x, y, MLX_FLOAT32);
    expect_values(r, (double[]){NAN, NAN, NAN, -1, 3}, 5, 0, "minimum");
    TU_FREE(x, y, r);
    static const double ia2[3] = {-5, 200, 7}, ib2[3] = {3, -1, 7};
    check(mlx_maximum, MLX_UINT8, ia2 + 1, MLX_INT8, ib2 + 1, 2, MLX_INT16, (double[]){200, 7}, "max u8/i8");
    check(mlx_minimum, MLX_INT32, ia2, MLX_INT32, ib2, 3, MLX_INT32, (double[]){-5, -1, 7}, "min int32");
}

/* ---- comparisons and logic ---- */

static void test_comparisons_promote_then_compare(void **state)
{
    (void)state;
    /* int32 vs float32 compares in float32 */
    static const double i[3] = {1, 0, -1}, f[3] = {0.5, 0, -0.5};
    check(mlx_greater, MLX_INT32, i, MLX_FLOAT32, f, 3, MLX_BOOL, (double[]){1, 0, 0}, "greater");
    check(mlx_less_equal, MLX_INT32, i, MLX_FLOAT32, f, 3, MLX_BOOL, (double[]){0, 1, 1}, "less_equal");
    check(mlx_equal, MLX_INT32, i, MLX_FLOAT32, f, 3, MLX_BOOL, (double[]){0, 1, 0}, "equal");
    check(mlx_not_equal, MLX_INT32, i, MLX_FLOAT32, f, 3, MLX_BOOL, (double[]){1, 0, 1}, "not_equal");
    check(mlx_less, MLX_INT32, i, MLX_FLOAT32, f, 3, MLX_BOOL, (double[]){0, 0, 1}, "less");
    check(mlx_greater_equal, MLX_INT32, i, MLX_FLOAT32, f, 3, MLX_BOOL, (double[]){1, 1, 0}, "greater_equal");
    /* uint8 vs int8 compare in int16: 200 > -1 */
    check(mlx_greater, MLX_UINT8, (double[]){200}, MLX_INT8, (double[]){-1}, 1, MLX_BOOL, (double[]){1}, "u8>i8");
    /* uint64 vs int64 compare in float32 (MLX's table): 2^24 + 1 == 2^24 there */
    check(mlx_equal, MLX_UINT64, (double[]){16777217}, MLX_INT64, (double[]){16777216}, 1, MLX_BOOL,
          (double[]){1}, "u64==i64");
    /* NaN: unequal to everything, itself included */
    static const float n[3] = {NAN, NAN, 1};
    static const float m[3] = {NAN, 1, 1};
    mlx_array x = vec_via_f32(MLX_FLOAT32, n, 3), y = vec_via_f32(MLX_FLOAT32, m, 3);
    mlx_array r = run(mlx_equal, x, y, MLX_BOOL);
    expect_values(r, (double[]){0, 0, 1}, 3, 0, "nan ==");
    mlx_array_free(r);
    r = run(mlx_not_equal, x, y, MLX_BOOL);
    expect_values(r, (double[]){1, 1, 0}, 3, 0, "nan !=");
    mlx_array_free(r);
    r = run(mlx_greater_equal, x, y, MLX_BOOL);
    expect_values(r, (double[]){0, 0, 1}, 3, 0, "nan >=");
    TU_FREE(x, y, r);
}

static void test_comparisons_of_complex(void **state)
{
    (void)state;
    static const float a[6] = {1, 2, 1, 2, 3, 0};
    static const float b[6] = {1, 2, 1, -2, 2, 5};
    int shape[1] = {3};
    mlx_array x = mlx_array_new_data(a, shape, 1, MLX_COMPLEX64);
    mlx_array y = mlx_array_new_data(b, shape, 1, MLX_COMPLEX64);
    mlx_array r = run(mlx_equal, x, y, MLX_BOOL);
    expect_values(r, (double[]){1, 0, 0}, 3, 0, "c64 ==");
    mlx_array_free(r);
    r = run(mlx_not_equal, x, y, MLX_BOOL);
    expect_values(r, (double[]){0, 1, 1}, 3, 0, "c64 !=");
    mlx_array_free(r);
    /* a real array promotes to complex64 */
    mlx_array one = mlx_array_new_float(1.0f);
    r = run(mlx_equal, x, one, MLX_BOOL);
    expect_values(r, (double[]){0, 0, 0}, 3, 0, "c64 == 1");
    TU_FREE(x, y, r, one);
}

static void test_logical_ops_cast_both_sides_to_bool(void **state)
{
    (void)state;
    static const float a[4] = {0, 2.5f, NAN, -0.0f};
    static const double b[4] = {1, 0, 3, 1};
    mlx_array x = vec_via_f32(MLX_FLOAT32, a, 4), y = vec_of(MLX_INT32, b, 4);
    mlx_array r = run(mlx_logical_and, x, y, MLX_BOOL);
    expect_values(r, (double[]){0, 0, 1, 0}, 4, 0, "and"); /* NaN is true */
    mlx_array_free(r);
    r = run(mlx_logical_or, x, y, MLX_BOOL);
    expect_values(r, (double[]){1, 1, 1, 1}, 4, 0, "or");
    TU_FREE(x, y, r);
}

/* ---- bitwise ---- */

static void test_bitwise_ops_on_integers_and_bools(void **state)
{
    (void)state;
    static const double a[3] = {12, -1, 5}, b[3] = {10, 7, 0};
    check(mlx_bitwise_and, MLX_INT32, a, MLX_INT32, b, 3, MLX_INT32, (double[]){8, 7, 0}, "and");
    check(mlx_bitwise_or, MLX_INT32, a, MLX_INT32, b, 3, MLX_INT32, (double[]){14, -1, 5}, "or");
    check(mlx_bitwise_xor, MLX_INT32, a, MLX_INT32, b, 3, MLX_INT32, (double[]){6, -8, 5}, "xor");
    /* uint8 with int8 works in int16 */
    check(mlx_bitwise_or, MLX_UINT8, (double[]){255}, MLX_INT8, (double[]){-128}, 1, MLX_INT16, (double[]){-1},
          "or u8/i8");
    static const double t[2] = {1, 0}, u[2] = {1, 1};
    check(mlx_bitwise_xor, MLX_BOOL, t, MLX_BOOL, u, 2, MLX_BOOL, (double[]){0, 1}, "xor bool");
    check(mlx_bitwise_and, MLX_BOOL, t, MLX_BOOL, u, 2, MLX_BOOL, (double[]){1, 0}, "and bool");
}

static void test_shifts(void **state)
{
    (void)state;
    static const double a[3] = {1, -8, 3}, s[3] = {4, 1, 0};
    check(mlx_left_shift, MLX_INT32, a, MLX_INT32, s, 3, MLX_INT32, (double[]){16, -16, 3}, "<<");
    /* signed right shift is arithmetic, as numpy */
    check(mlx_right_shift, MLX_INT32, a, MLX_INT32, s, 3, MLX_INT32, (double[]){0, -4, 3}, ">>");
    check(mlx_right_shift, MLX_UINT8, (double[]){255}, MLX_UINT8, (double[]){4}, 1, MLX_UINT8, (double[]){15}, ">>u8");
    check(mlx_left_shift, MLX_UINT8, (double[]){255}, MLX_UINT8, (double[]){1}, 1, MLX_UINT8, (double[]){254}, "<<u8");
    check(mlx_left_shift, MLX_INT64, (double[]){1}, MLX_INT64, (double[]){40}, 1, MLX_INT64,
          (double[]){1099511627776.0}, "<<i64");
    /* shifting bools shifts uint8 */
    static const double t[2] = {1, 1}, u[2] = {1, 0};
    check(mlx_left_shift, MLX_BOOL, t, MLX_BOOL, u, 2, MLX_UINT8, (double[]){2, 1}, "<<bool");
    check(mlx_right_shift, MLX_BOOL, t, MLX_BOOL, u, 2, MLX_UINT8, (double[]){0, 1}, ">>bool");
}

static void test_bitwise_ops_refuse_floats_with_mlx_message(void **state)
{
    (void)state;
    mlx_array f = mlx_array_new_float(1.0f), i = mlx_array_new_int(1), h = mlx_array_new();
    assert_int_equal(mlx_astype(&h, f, MLX_FLOAT16, tu_stream()), 0);
    expect_fail(mlx_bitwise_and, f, i, "[bitwise_and] Only allowed on integer or boolean types but got types float32 and int32.");
    expect_fail(mlx_bitwise_or, i, h, "[bitwise_or] Only allowed on integer or boolean types but got types int32 and float16.");
    expect_fail(mlx_bitwise_xor, f, f, "[bitwise_xor] Only allowed on integer or boolean types but got types float32 and float32.");
    expect_fail(mlx_left_shift, i, h, "[left_shift] Only allowed on integer or boolean types but got types int32 and float16.");
    /* MLX converts before checking in right_shift, so both read the promoted type */
    expect_fail(mlx_right_shift, i, h, "[right_shift] Only allowed on integer or boolean types but got types float16 and float16.");
    mlx_array c = mlx_array_new_complex(1, 0);
    expect_fail(mlx_bitwise_and, c, i, "[bitwise_and] Only allowed on integer or boolean types but got types complex64 and int32.");
    TU_FREE(f, i, h, c);
}

/* ---- at least float, complex refusals ---- */

static void test_arctan2_and_logaddexp_are_at_least_float(void **state)
{
    (void)state;
    check(mlx_arctan2, MLX_INT32, (double[]){1}, MLX_INT8, (double[]){1}, 1, MLX_FLOAT32, (double[]){0.7853981633974483},
          "atan2 int");
    check(mlx_logaddexp, MLX_BOOL, (double[]){0}, MLX_UINT8, (double[]){0}, 1, MLX_FLOAT32, (double[]){0.6931471805599453},
          "lae int");
    check(mlx_logaddexp, MLX_FLOAT16, (double[]){0}, MLX_INT64, (double[]){0}, 1, MLX_FLOAT16, (double[]){0.693359375},
          "lae f16");
    mlx_array c = mlx_array_new_complex(1, 1), f = mlx_array_new_float(1.0f);
    expect_fail(mlx_arctan2, f, c, "[arctan2] Not supported for complex64.");
    expect_fail(mlx_logaddexp, c, f, "[logaddexp]");
    expect_fail(mlx_remainder, c, f, "[remainder] Complex type not supported.");
    expect_fail(mlx_floor_divide, f, c, "[floor_divide] Not supported for complex64.");
    /* power and maximum take complex */
    mlx_array r = run(mlx_power, c, f, MLX_COMPLEX64);
    assert_int_equal(mlx_array_eval(r), 0);
    mlx_array_free(r);
    r = run(mlx_maximum, c, f, MLX_COMPLEX64);
    assert_int_equal(mlx_array_eval(r), 0);
    TU_FREE(c, f, r);
}

/* ---- shapes ---- */

static void test_operands_broadcast(void **state)
{
    (void)state;
    static const double col[2] = {1, 5}, row[3] = {0, 3, 6};
    mlx_array a = tu_array_of(MLX_INT32, col, (int[]){2, 1}, 2), b = tu_array_of(MLX_INT32, row, (int[]){3}, 1);
    mlx_array r = run(mlx_maximum, a, b, MLX_INT32);
    assert_true(tu_shape_is(r, 2, (int[]){2, 3}));
    expect_values(r, (double[]){1, 3, 6, 5, 5, 6}, 6, 0, "broadcast max");
    mlx_array_free(r);
    /* a 0-d operand */
    mlx_array s = mlx_array_new_int(3);
    r = run(mlx_less, s, b, MLX_BOOL);
    assert_true(tu_shape_is(r, 1, (int[]){3}));
    expect_values(r, (double[]){0, 0, 1}, 3, 0, "0-d <");
    mlx_array_free(r);
    /* empty with (1, 3) gives (0, 3) */
    mlx_array e = tu_array_of(MLX_FLOAT32, NULL, (int[]){0, 3}, 2);
    r = run(mlx_power, e, b, MLX_FLOAT32);
    assert_true(tu_shape_is(r, 2, (int[]){0, 3}));
    assert_int_equal(mlx_array_eval(r), 0);
    mlx_array_free(r);
    mlx_array bad = tu_array_of(MLX_INT32, (double[]){1, 2, 3, 4}, (int[]){4}, 1);
    mlx_array m = tu_array_of(MLX_INT32, (double[]){1, 2, 3, 4, 5, 6}, (int[]){2, 3}, 2);
    expect_fail(mlx_maximum, m, bad, "[maximum] Shapes (2,3) and (4) cannot be broadcast.");
    TU_FREE(a, b, s, e, bad, m);
}

static void test_non_contiguous_operands(void **state)
{
    (void)state;
    static const double v[6] = {1, 2, 3, 4, 5, 6};
    mlx_array a = tu_array_of(MLX_FLOAT32, v, (int[]){2, 3}, 2), t = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, tu_stream()), 0); /* (3, 2): 1 4 / 2 5 / 3 6 */
    mlx_array b = tu_array_of(MLX_FLOAT32, (double[]){2, 3, 2, 3, 2, 3}, (int[]){3, 2}, 2);
    mlx_array r = run(mlx_remainder, t, b, MLX_FLOAT32);
    expect_values(r, (double[]){1, 1, 0, 2, 1, 0}, 6, 0, "strided remainder");
    mlx_array_free(r);
    r = run(mlx_greater, t, b, MLX_BOOL);
    expect_values(r, (double[]){0, 1, 0, 1, 1, 1}, 6, 0, "strided greater");
    TU_FREE(a, t, b, r);
}

/* ---- isclose ---- */

static void test_isclose(void **state)
{
    (void)state;
    static const float a[8] = {1.0f, 1.0f, INFINITY, INFINITY, -INFINITY, NAN, 0.0f, 100.0f};
    static const float b[8] = {1.000001f, 1.1f, INFINITY, -INFINITY, -INFINITY, NAN, 1e-9f, 100.0009f};
    mlx_array x = vec_via_f32(MLX_FLOAT32, a, 8), y = vec_via_f32(MLX_FLOAT32, b, 8), r = mlx_array_new();
    /* numpy.isclose(a, b) with rtol 1e-5, atol 1e-8 (NaN unequal) */
    assert_int_equal(mlx_isclose(&r, x, y, 1e-5, 1e-8, false, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_BOOL);
    expect_values(r, (double[]){1, 0, 1, 0, 1, 0, 1, 1}, 8, 0, "isclose");
    assert_int_equal(mlx_isclose(&r, x, y, 1e-5, 1e-8, true, tu_stream()), 0);
    expect_values(r, (double[]){1, 0, 1, 0, 1, 1, 1, 1}, 8, 0, "isclose(equal_nan)");
    /* a looser rtol takes in 1.1 */
    assert_int_equal(mlx_isclose(&r, x, y, 0.2, 0, false, tu_stream()), 0);
    expect_values(r, (double[]){1, 1, 1, 0, 1, 0, 0, 1}, 8, 0, "isclose(rtol 0.2)");
    TU_FREE(x, y, r);
}

static void test_isclose_of_integers_and_broadcast(void **state)
{
    (void)state;
    mlx_array a = tu_array_of(MLX_INT32, (double[]){5, 6, 100000}, (int[]){3}, 1);
    mlx_array b = mlx_array_new_int(5), r = mlx_array_new();
    assert_int_equal(mlx_isclose(&r, a, b, 0, 0, false, tu_stream()), 0);
    expect_values(r, (double[]){1, 0, 0}, 3, 0, "isclose int");
    assert_int_equal(mlx_isclose(&r, a, b, 0.25, 0, false, tu_stream()), 0);
    expect_values(r, (double[]){1, 1, 0}, 3, 0, "isclose int rtol");
    mlx_array c = tu_array_of(MLX_INT32, (double[]){1, 2}, (int[]){2, 1}, 2);
    assert_int_equal(mlx_isclose(&r, a, c, 0, 0, false, tu_stream()), 0);
    assert_true(tu_shape_is(r, 2, (int[]){2, 3}));
    TU_FREE(a, b, r, c);
}

/* ---- allclose and array_equal: 0-d bool results ---- */

static bool item_bool(mlx_array r)
{
    assert_int_equal(mlx_array_ndim(r), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_BOOL);
    bool v = false;
    assert_int_equal(mlx_array_item_bool(&v, r), 0);
    return v;
}

static void test_allclose(void **state)
{
    (void)state;
    static const float a[3] = {1.0f, 2.0f, NAN}, b[3] = {1.000001f, 2.0f, NAN};
    mlx_array x = vec_via_f32(MLX_FLOAT32, a, 3), y = vec_via_f32(MLX_FLOAT32, b, 3), r = mlx_array_new();
    assert_int_equal(mlx_allclose(&r, x, y, 1e-5, 1e-8, false, tu_stream()), 0);
    assert_false(item_bool(r)); /* NaN != NaN */
    assert_int_equal(mlx_allclose(&r, x, y, 1e-5, 1e-8, true, tu_stream()), 0);
    assert_true(item_bool(r));
    assert_int_equal(mlx_allclose(&r, x, y, 0, 0, true, tu_stream()), 0);
    assert_false(item_bool(r));
    /* broadcasting: a scalar against every element */
    mlx_array one = mlx_array_new_float(1.0f);
    assert_int_equal(mlx_allclose(&r, x, one, 1e-5, 1e-8, false, tu_stream()), 0);
    assert_false(item_bool(r));
    mlx_array e = tu_array_of(MLX_FLOAT32, NULL, (int[]){0}, 1);
    assert_int_equal(mlx_allclose(&r, e, one, 1e-5, 1e-8, false, tu_stream()), 0);
    assert_true(item_bool(r)); /* vacuously */
    assert_int_equal(mlx_allclose(NULL, x, y, 1e-5, 1e-8, false, tu_stream()), 1);
    tu_expect_error("[allclose]");
    TU_FREE(x, y, r, one, e);
}

static void test_array_equal(void **state)
{
    (void)state;
    mlx_array a = tu_array_of(MLX_INT32, (double[]){1, 2, 3}, (int[]){3}, 1);
    mlx_array b = tu_array_of(MLX_FLOAT32, (double[]){1, 2, 3}, (int[]){3}, 1);
    mlx_array c = tu_array_of(MLX_INT32, (double[]){1, 2, 4}, (int[]){3}, 1);
    mlx_array d = tu_array_of(MLX_INT32, (double[]){1, 2, 3}, (int[]){1, 3}, 2);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_array_equal(&r, a, b, false, tu_stream()), 0);
    assert_true(item_bool(r)); /* dtypes may differ */
    assert_int_equal(mlx_array_equal(&r, a, c, false, tu_stream()), 0);
    assert_false(item_bool(r));
    /* shapes that differ (even if they broadcast) are unequal, not an error */
    assert_int_equal(mlx_array_equal(&r, a, d, false, tu_stream()), 0);
    assert_false(item_bool(r));
    /* NaN equals NaN only with equal_nan */
    static const float n[2] = {NAN, 1};
    mlx_array x = vec_via_f32(MLX_FLOAT32, n, 2), h = vec_via_f32(MLX_FLOAT16, n, 2);
    assert_int_equal(mlx_array_equal(&r, x, x, false, tu_stream()), 0);
    assert_false(item_bool(r));
    assert_int_equal(mlx_array_equal(&r, x, h, true, tu_stream()), 0);
    assert_true(item_bool(r));
    /* 0-d and empty arrays */
    mlx_array s = mlx_array_new_int(7), t = mlx_array_new_float(7.0f);
    assert_int_equal(mlx_array_equal(&r, s, t, false, tu_stream()), 0);
    assert_true(item_bool(r));
    mlx_array e1 = tu_array_of(MLX_INT32, NULL, (int[]){0, 2}, 2), e2 = tu_array_of(MLX_BOOL, NULL, (int[]){0, 2}, 2);
    assert_int_equal(mlx_array_equal(&r, e1, e2, false, tu_stream()), 0);
    assert_true(item_bool(r));
    assert_int_equal(mlx_array_equal(&r, a, mlx_array_new(), false, tu_stream()), 1);
    tu_expect_error("[array_equal]");
    TU_FREE(a, b, c, d, r, x, h, s, t, e1, e2);
}

/* ---- allocation failures ---- */

#ifdef MC_FAULT_INJECTION
static mlx_array fa, fb;

static int f_isclose(mlx_array *r) { return mlx_isclose(r, fa, fb, 1e-5, 1e-8, true, tu_stream()); }
static int f_floor_divide(mlx_array *r) { return mlx_floor_divide(r, fa, fb, tu_stream()); }
static int f_right_shift(mlx_array *r) { return mlx_right_shift(r, fa, fb, tu_stream()); }
static int f_logaddexp(mlx_array *r) { return mlx_logaddexp(r, fa, fb, tu_stream()); }
static int f_allclose(mlx_array *r) { return mlx_allclose(r, fa, fb, 1e-5, 1e-8, false, tu_stream()); }
static int f_array_equal(mlx_array *r) { return mlx_array_equal(r, fa, fb, true, tu_stream()); }
static int f_divmod(mlx_array *r)
{
    mlx_vector_array v = mlx_vector_array_new();
    if (!v.ctx)
        return -1;
    int rc = mlx_divmod(&v, fa, fb, tu_stream());
    if (!rc)
        rc = mlx_vector_array_get(r, v, 0);
    mlx_vector_array_free(v);
    return rc;
}
#endif

/* Fails the 1st, 2nd, ... allocation of building and evaluating each
 * composed op until it succeeds: every failure is one report and (under
 * valgrind) frees everything it took. Only in a -Dfault_injection=true
 * build; skipped otherwise. */
static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    fa = tu_array_of(MLX_INT16, (double[]){-7, 8, 120}, (int[]){3}, 1);
    fb = tu_array_of(MLX_INT8, (double[]){2, -3, -27}, (int[]){3}, 1);
    int (*ops[])(mlx_array *) = {f_isclose,  f_floor_divide, f_right_shift, f_logaddexp,
                                 f_allclose, f_array_equal,  f_divmod};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        for (long n = 0;; n++) {
            mlx_array y = mlx_array_new();
            mc_fault_fail_after(n);
            int rc = ops[k](&y);
            if (rc < 0) { /* the harness's own allocation failed */
                mc_fault_fail_after(-1);
                tu_reset_errors();
                continue;
            }
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
    TU_FREE(fa, fb);
#endif
}

/* ---- errors ---- */

static void test_bad_arguments_report_one_error_naming_the_op(void **state)
{
    (void)state;
    struct {
        binary_fn f;
        const char *prefix;
    } ops[] = {
        {mlx_floor_divide, "[floor_divide]"}, {mlx_remainder, "[remainder]"}, {mlx_power, "[power]"},
        {mlx_maximum, "[maximum]"}, {mlx_minimum, "[minimum]"}, {mlx_arctan2, "[arctan2]"},
        {mlx_logaddexp, "[logaddexp]"}, {mlx_equal, "[equal]"}, {mlx_not_equal, "[not_equal]"},
        {mlx_less, "[less]"}, {mlx_less_equal, "[less_equal]"}, {mlx_greater, "[greater]"},
        {mlx_greater_equal, "[greater_equal]"}, {mlx_logical_and, "[logical_and]"},
        {mlx_logical_or, "[logical_or]"}, {mlx_bitwise_and, "[bitwise_and]"}, {mlx_bitwise_or, "[bitwise_or]"},
        {mlx_bitwise_xor, "[bitwise_xor]"}, {mlx_left_shift, "[left_shift]"}, {mlx_right_shift, "[right_shift]"},
    };
    mlx_array a = mlx_array_new_int(1), empty = mlx_array_new(), r = mlx_array_new();
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        void *before = r.ctx;
        assert_int_equal(ops[k].f(NULL, a, a, tu_stream()), 1);
        tu_expect_error(ops[k].prefix);
        assert_int_equal(ops[k].f(&r, empty, a, tu_stream()), 1);
        tu_expect_error(ops[k].prefix);
        assert_int_equal(ops[k].f(&r, a, empty, tu_stream()), 1);
        tu_expect_error(ops[k].prefix);
        assert_ptr_equal(r.ctx, before); /* *res untouched on failure */
        /* and a good call works */
        assert_int_equal(ops[k].f(&r, a, a, tu_stream()), 0);
        assert_int_equal(mlx_array_eval(r), 0);
    }
    assert_int_equal(mlx_isclose(&r, empty, a, 1e-5, 1e-8, false, tu_stream()), 1);
    tu_expect_error("[isclose]");
    TU_FREE(a, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_float_functions_match_numpy_in_float32, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_functions_match_numpy_in_float64, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_functions_in_half_precision, tu_test_teardown),
        cmocka_unit_test_teardown(test_floor_divide_of_floats_floors_the_rounded_quotient, tu_test_teardown),
        cmocka_unit_test_teardown(test_floor_divide_of_integers_truncates_as_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_remainder_takes_the_divisor_sign, tu_test_teardown),
        cmocka_unit_test_teardown(test_divmod_truncates_as_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_divmod_promotes_broadcasts_and_refuses_complex, tu_test_teardown),
        cmocka_unit_test_teardown(test_integer_division_by_zero_does_not_crash, tu_test_teardown),
        cmocka_unit_test_teardown(test_power_of_integers_stays_integer, tu_test_teardown),
        cmocka_unit_test_teardown(test_maximum_and_minimum_propagate_nan, tu_test_teardown),
        cmocka_unit_test_teardown(test_comparisons_promote_then_compare, tu_test_teardown),
        cmocka_unit_test_teardown(test_comparisons_of_complex, tu_test_teardown),
        cmocka_unit_test_teardown(test_logical_ops_cast_both_sides_to_bool, tu_test_teardown),
        cmocka_unit_test_teardown(test_bitwise_ops_on_integers_and_bools, tu_test_teardown),
        cmocka_unit_test_teardown(test_shifts, tu_test_teardown),
        cmocka_unit_test_teardown(test_bitwise_ops_refuse_floats_with_mlx_message, tu_test_teardown),
        cmocka_unit_test_teardown(test_arctan2_and_logaddexp_are_at_least_float, tu_test_teardown),
        cmocka_unit_test_teardown(test_operands_broadcast, tu_test_teardown),
        cmocka_unit_test_teardown(test_non_contiguous_operands, tu_test_teardown),
        cmocka_unit_test_teardown(test_isclose, tu_test_teardown),
        cmocka_unit_test_teardown(test_isclose_of_integers_and_broadcast, tu_test_teardown),
        cmocka_unit_test_teardown(test_allclose, tu_test_teardown),
        cmocka_unit_test_teardown(test_array_equal, tu_test_teardown),
        cmocka_unit_test_teardown(test_allocation_failures_report_once_and_leak_nothing, tu_test_teardown),
        cmocka_unit_test_teardown(test_bad_arguments_report_one_error_naming_the_op, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("binary", tests, tu_group_setup, tu_group_teardown);
}
