/* Suite 'unary': the elementwise functions of one array (src/ops/unary.c,
 * logic.c, misc.c; src/graph/prims_unary.c). Expected values were computed
 * with numpy 1.24 in float64 from the same (exactly representable) inputs;
 * where MLX differs from numpy the test follows MLX and says so. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "graph/primitive.h"
#include "runtime/alloc.h" /* mc_fault_fail_after */
#include "test_util.h"

typedef int (*unary_fn)(mlx_array *, const mlx_array, const mlx_stream);

/* ---- helpers ---- */

static mlx_array vec_of(mlx_dtype d, const double *v, int n)
{
    int shape[1] = {n};
    return tu_array_of(d, v, shape, 1);
}

/* A float32 array converted to dtype d by the library (for NaN and
 * infinities, which tu_array_of cannot write as float16). */
static mlx_array vec_via_f32(mlx_dtype d, const float *v, int n)
{
    int shape[1] = {n};
    mlx_array f = tu_f32(v, shape, 1), r = mlx_array_new();
    assert_int_equal(mlx_astype(&r, f, d, tu_stream()), 0);
    mlx_array_free(f);
    return r;
}

static bool close_enough(double got, double want, double rtol, double atol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

static void expect_values(mlx_array r, const double *want, int n, double rtol, double atol, const char *what)
{
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mlx_array_size(r), (size_t)n);
    for (int i = 0; i < n; i++) {
        double got = tu_get(r, (size_t)i);
        if (!close_enough(got, want[i], rtol, atol))
            fail_msg("%s [%d]: got %.17g, want %.17g", what, i, got, want[i]);
    }
}

/* Runs f on a, checks the dtype, and returns the result. */
static mlx_array run(unary_fn f, mlx_array a, mlx_dtype want_dtype)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(f(&r, a, tu_stream()), 0);
    tu_expect_no_error();
    assert_int_equal(mlx_array_dtype(r), want_dtype);
    return r;
}

/* ---- values of the floating functions ---- */

#define IN_A 0 /* general inputs */
#define IN_B 1 /* non-negative inputs */
#define IN_C 2 /* inputs in [-1, 1] */
static const double inputs[3][8] = {
    {-2.5, -1, -0.5, 0, 0.25, 0.75, 1.5, 3},
    {0, 0.25, 0.5, 1, 1.5, 2, 10, 100},
    {-1, -0.75, -0.5, 0, 0.25, 0.5, 0.875, 1},
};

typedef struct fcase {
    const char *name;
    unary_fn f;
    int in;
    double want[8];
} fcase;

static const fcase fcases[] = {
    {"abs", mlx_abs, IN_A, {2.5, 1.0, 0.5, 0.0, 0.25, 0.75, 1.5, 3.0}},
    {"negative", mlx_negative, IN_A, {2.5, 1.0, 0.5, -0.0, -0.25, -0.75, -1.5, -3.0}},
    {"sign", mlx_sign, IN_A, {-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0}},
    {"square", mlx_square, IN_A, {6.25, 1.0, 0.25, 0.0, 0.0625, 0.5625, 2.25, 9.0}},
    {"exp", mlx_exp, IN_A, {0.0820849986238988, 0.3678794411714424, 0.6065306597126334, 1.0, 1.2840254166877414, 2.1170000166126743, 4.481689070338065, 20.085536923187668}},
    {"expm1", mlx_expm1, IN_A, {-0.9179150013761012, -0.6321205588285577, -0.3934693402873666, 0.0, 0.2840254166877415, 1.1170000166126746, 3.481689070338065, 19.085536923187668}},
    {"sin", mlx_sin, IN_A, {-0.5984721441039564, -0.8414709848078965, -0.47942553860420295, 0.0, 0.24740395925452296, 0.6816387600233341, 0.9974949866040544, 0.1411200080598672}},
    {"cos", mlx_cos, IN_A, {-0.8011436155469338, 0.5403023058681397, 0.8775825618903725, 1.0, 0.968912421710645, 0.731688868873821, 0.0707372016677029, -0.9899924966004454}},
    {"tan", mlx_tan, IN_A, {0.7470222972386602, -1.557407724654902, -0.5463024898437905, 0.0, 0.25534192122103627, 0.9315964599440725, 14.10141994717172, -0.1425465430742778}},
    {"arctan", mlx_arctan, IN_A, {-1.1902899496825317, -0.7853981633974483, -0.4636476090008061, 0.0, 0.24497866312686414, 0.6435011087932844, 0.982793723247329, 1.2490457723982544}},
    {"sinh", mlx_sinh, IN_A, {-6.0502044810397875, -1.1752011936438014, -0.5210953054937474, 0.0, 0.2526123168081683, 0.8223167319358299, 2.1292794550948173, 10.017874927409903}},
    {"cosh", mlx_cosh, IN_A, {6.132289479663686, 1.5430806348152437, 1.1276259652063807, 1.0, 1.031413099879573, 1.2946832846768446, 2.352409615243247, 10.067661995777764}},
    {"tanh", mlx_tanh, IN_A, {-0.9866142981514303, -0.7615941559557649, -0.46211715726000974, 0.0, 0.24491866240370913, 0.6351489523872873, 0.9051482536448665, 0.9950547536867305}},
    {"arcsinh", mlx_arcsinh, IN_A, {-1.6472311463710958, -0.881373587019543, -0.48121182505960347, 0.0, 0.24746646154726346, 0.6931471805599453, 1.1947632172871092, 1.8184464592320668}},
    {"sigmoid", mlx_sigmoid, IN_A, {0.07585818002124355, 0.2689414213699951, 0.3775406687981454, 0.5, 0.5621765008857981, 0.679178699175393, 0.8175744761936437, 0.9525741268224334}},
    {"erf", mlx_erf, IN_A, {-0.999593047982555, -0.8427007929497149, -0.5204998778130465, 0.0, 0.2763263901682369, 0.7111556336535151, 0.9661051464753108, 0.9999779095030014}},
    {"floor", mlx_floor, IN_A, {-3.0, -1.0, -1.0, 0.0, 0.0, 0.0, 1.0, 3.0}},
    {"ceil", mlx_ceil, IN_A, {-2.0, -1.0, -0.0, 0.0, 1.0, 1.0, 2.0, 3.0}},
    {"reciprocal", mlx_reciprocal, IN_A, {-0.4, -1.0, -2.0, INFINITY, 4.0, 1.3333333333333333, 0.6666666666666666, 0.3333333333333333}},
    {"degrees", mlx_degrees, IN_A, {-143.2394487827058, -57.29577951308232, -28.64788975654116, 0.0, 14.32394487827058, 42.97183463481174, 85.94366926962348, 171.88733853924697}},
    {"radians", mlx_radians, IN_A, {-0.04363323129985824, -0.017453292519943295, -0.008726646259971648, 0.0, 0.004363323129985824, 0.013089969389957472, 0.026179938779914945, 0.05235987755982989}},
    {"sqrt", mlx_sqrt, IN_B, {0.0, 0.5, 0.7071067811865476, 1.0, 1.224744871391589, 1.4142135623730951, 3.1622776601683795, 10.0}},
    {"rsqrt", mlx_rsqrt, IN_B, {INFINITY, 2.0, 1.414213562373095, 1.0, 0.8164965809277261, 0.7071067811865475, 0.31622776601683794, 0.1}},
    {"log", mlx_log, IN_B, {-INFINITY, -1.3862943611198906, -0.6931471805599453, 0.0, 0.4054651081081644, 0.6931471805599453, 2.3025850929940455, 4.605170185988091}},
    {"log1p", mlx_log1p, IN_B, {0.0, 0.22314355131420974, 0.4054651081081644, 0.6931471805599453, 0.916290731874155, 1.0986122886681096, 2.3978952727983707, 4.61512051684126}},
    {"log2", mlx_log2, IN_B, {-INFINITY, -2.0, -1.0, 0.0, 0.5849625007211562, 1.0, 3.321928094887362, 6.643856189774724}},
    {"log10", mlx_log10, IN_B, {-INFINITY, -0.6020599913279624, -0.3010299956639812, 0.0, 0.17609125905568124, 0.3010299956639812, 1.0, 2.0}},
    {"arccosh", mlx_arccosh, IN_B, {NAN, NAN, NAN, 0.0, 0.9624236501192069, 1.3169578969248168, 2.993222846126381, 5.298292365610485}},
    {"arcsin", mlx_arcsin, IN_C, {-1.5707963267948966, -0.8480620789814809, -0.5235987755982989, 0.0, 0.25268025514207865, 0.5235987755982989, 1.0654358165107394, 1.5707963267948966}},
    {"arccos", mlx_arccos, IN_C, {3.141592653589793, 2.4188584057763776, 2.0943951023931957, 1.5707963267948966, 1.318116071652818, 1.0471975511965976, 0.5053605102841573, 0.0}},
    {"arctanh", mlx_arctanh, IN_C, {-INFINITY, -0.9729550745276566, -0.5493061443340549, 0.0, 0.25541281188299536, 0.5493061443340549, 1.354025100551105, INFINITY}},
    {"erfinv", mlx_erfinv, IN_C, {-INFINITY, -0.8134198475976185, -0.4769362762044699, 0.0, 0.2253120550121781, 0.4769362762044699, 1.0847870400692832, INFINITY}},
};
enum { N_FCASES = sizeof fcases / sizeof fcases[0] };

static void check_float_functions(mlx_dtype d, double rtol, double atol)
{
    for (int k = 0; k < N_FCASES; k++) {
        const fcase *c = &fcases[k];
        mlx_array a = vec_of(d, inputs[c->in], 8);
        mlx_array r = run(c->f, a, d);
        char what[64];
        snprintf(what, sizeof what, "%s(%s)", c->name, d == MLX_FLOAT32 ? "float32" : "other");
        expect_values(r, c->want, 8, rtol, atol, what);
        TU_FREE(a, r);
    }
}

static void test_float_functions_match_numpy_in_float32(void **state)
{
    (void)state;
    check_float_functions(MLX_FLOAT32, 4e-7, 0);
}

static void test_float_functions_match_numpy_in_float64(void **state)
{
    (void)state;
    /* degrees and radians multiply by a float64 constant: exact to 1 ULP too */
    check_float_functions(MLX_FLOAT64, 1e-15, 0);
}

static void test_float_functions_keep_float16(void **state)
{
    (void)state;
    /* float16 computes in float32 and rounds once: half a float16 ULP is
     * 2^-11 relative; degrees also rounds its constant to float16 */
    check_float_functions(MLX_FLOAT16, 1e-3, 0);
}

static void test_float_functions_keep_bfloat16(void **state)
{
    (void)state;
    check_float_functions(MLX_BFLOAT16, 8e-3, 0);
}

/* Integer and bool inputs run in float32: the same values as converting
 * first. */
static void test_integer_and_bool_inputs_become_float32(void **state)
{
    (void)state;
    static const double small[4] = {0, 1, 2, 3};
    static const mlx_dtype ints[] = {MLX_BOOL, MLX_UINT8, MLX_UINT16, MLX_UINT32, MLX_UINT64,
                                     MLX_INT8, MLX_INT16, MLX_INT32, MLX_INT64};
    for (size_t t = 0; t < sizeof ints / sizeof ints[0]; t++) {
        mlx_array a = vec_of(ints[t], small, 4), f = mlx_array_new();
        assert_int_equal(mlx_astype(&f, a, MLX_FLOAT32, tu_stream()), 0);
        for (int k = 0; k < N_FCASES; k++) {
            const fcase *c = &fcases[k];
            /* these keep an integer dtype */
            if (c->f == mlx_abs || c->f == mlx_negative || c->f == mlx_sign || c->f == mlx_square ||
                c->f == mlx_floor || c->f == mlx_ceil)
                continue;
            mlx_array r = run(c->f, a, MLX_FLOAT32), want = run(c->f, f, MLX_FLOAT32);
            double w[4];
            for (int i = 0; i < 4; i++)
                w[i] = tu_get(want, (size_t)i);
            expect_values(r, w, 4, 0, 0, c->name);
            TU_FREE(r, want);
        }
        TU_FREE(a, f);
    }
}

/* ---- the dtype rule of every op, for every dtype ---- */

enum rule {
    R_SAME,       /* keeps the dtype */
    R_FLOAT,      /* at_least_float */
    R_FLOAT_NC,   /* at_least_float, refuses complex64 */
    R_SAME_NC,    /* keeps the dtype, refuses complex64 */
    R_ABS,        /* keeps the dtype; complex64 -> float32 */
    R_NEG,        /* keeps the dtype, refuses bool */
    R_BOOL,       /* bool result */
    R_INT,        /* keeps the dtype, refuses float and complex */
};

typedef struct rcase {
    const char *name;
    unary_fn f;
    enum rule rule;
} rcase;

static int round0(mlx_array *r, const mlx_array a, const mlx_stream s) { return mlx_round(r, a, 0, s); }
static int round2(mlx_array *r, const mlx_array a, const mlx_stream s) { return mlx_round(r, a, 2, s); }

static const rcase rcases[] = {
    {"abs", mlx_abs, R_ABS},
    {"negative", mlx_negative, R_NEG},
    {"sign", mlx_sign, R_SAME},
    {"square", mlx_square, R_SAME},
    {"sqrt", mlx_sqrt, R_FLOAT},
    {"rsqrt", mlx_rsqrt, R_FLOAT},
    {"reciprocal", mlx_reciprocal, R_FLOAT},
    {"exp", mlx_exp, R_FLOAT},
    {"expm1", mlx_expm1, R_FLOAT_NC},
    {"log", mlx_log, R_FLOAT},
    {"log1p", mlx_log1p, R_FLOAT},
    {"log2", mlx_log2, R_FLOAT},
    {"log10", mlx_log10, R_FLOAT},
    {"sin", mlx_sin, R_FLOAT},
    {"cos", mlx_cos, R_FLOAT},
    {"tan", mlx_tan, R_FLOAT},
    {"arcsin", mlx_arcsin, R_FLOAT},
    {"arccos", mlx_arccos, R_FLOAT},
    {"arctan", mlx_arctan, R_FLOAT},
    {"sinh", mlx_sinh, R_FLOAT},
    {"cosh", mlx_cosh, R_FLOAT},
    {"tanh", mlx_tanh, R_FLOAT},
    {"arcsinh", mlx_arcsinh, R_FLOAT},
    {"arccosh", mlx_arccosh, R_FLOAT},
    {"arctanh", mlx_arctanh, R_FLOAT},
    {"sigmoid", mlx_sigmoid, R_FLOAT_NC},
    {"erf", mlx_erf, R_FLOAT_NC},
    {"erfinv", mlx_erfinv, R_FLOAT_NC},
    {"degrees", mlx_degrees, R_FLOAT},
    {"radians", mlx_radians, R_FLOAT},
    {"floor", mlx_floor, R_SAME_NC},
    {"ceil", mlx_ceil, R_SAME_NC},
    {"round", round0, R_SAME},
    {"round", round2, R_SAME},
    {"logical_not", mlx_logical_not, R_BOOL},
    {"isnan", mlx_isnan, R_BOOL},
    {"isinf", mlx_isinf, R_BOOL},
    {"isfinite", mlx_isfinite, R_BOOL},
    {"isposinf", mlx_isposinf, R_BOOL},
    {"isneginf", mlx_isneginf, R_BOOL},
    {"bitwise_invert", mlx_bitwise_invert, R_INT},
    {"stop_gradient", mlx_stop_gradient, R_SAME},
    {"conjugate", mlx_conjugate, R_SAME},
    {"real", mlx_real, R_ABS},
    {"imag", mlx_imag, R_ABS},
};

static bool is_inexact(mlx_dtype d)
{
    return d == MLX_FLOAT16 || d == MLX_FLOAT32 || d == MLX_FLOAT64 || d == MLX_BFLOAT16 || d == MLX_COMPLEX64;
}

/* The expected dtype, or -1 for an error. */
static int expected_dtype(enum rule r, mlx_dtype d)
{
    switch (r) {
    case R_SAME: return d;
    case R_FLOAT: return is_inexact(d) ? (int)d : MLX_FLOAT32;
    case R_FLOAT_NC: return d == MLX_COMPLEX64 ? -1 : is_inexact(d) ? (int)d : MLX_FLOAT32;
    case R_SAME_NC: return d == MLX_COMPLEX64 ? -1 : (int)d;
    case R_ABS: return d == MLX_COMPLEX64 ? MLX_FLOAT32 : (int)d;
    case R_NEG: return d == MLX_BOOL ? -1 : (int)d;
    case R_BOOL: return MLX_BOOL;
    case R_INT: return is_inexact(d) ? -1 : (int)d;
    }
    return -1;
}

static void test_every_op_has_mlx_dtype_rule_and_evaluates_for_every_dtype(void **state)
{
    (void)state;
    static const double ones[2] = {1, 0};
    for (int d = 0; d <= MLX_COMPLEX64; d++) {
        mlx_array a = vec_of((mlx_dtype)d, ones, 2);
        for (size_t k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
            const rcase *c = &rcases[k];
            int want = expected_dtype(c->rule, (mlx_dtype)d);
            mlx_array r = mlx_array_new();
            int rc = c->f(&r, a, tu_stream());
            if (want < 0) {
                if (rc == 0)
                    fail_msg("%s on dtype %d should fail", c->name, d);
                char prefix[64];
                snprintf(prefix, sizeof prefix, "[%s]", c->name);
                tu_expect_error(prefix);
                assert_null(r.ctx);
            } else {
                if (rc != 0)
                    fail_msg("%s on dtype %d failed: %s", c->name, d, tu_last_error());
                if ((int)mlx_array_dtype(r) != want)
                    fail_msg("%s on dtype %d gave dtype %d, want %d", c->name, d, (int)mlx_array_dtype(r), want);
                /* no op may build a node whose kernel is missing */
                if (mlx_array_eval(r) != 0)
                    fail_msg("%s on dtype %d does not evaluate: %s", c->name, d, tu_last_error());
                assert_int_equal(mlx_array_size(r), 2);
            }
            mlx_array_free(r);
        }
        mlx_array_free(a);
    }
}

/* ---- special values and per-dtype behaviour ---- */

static void test_special_float_values(void **state)
{
    (void)state;
    static const float in[5] = {-INFINITY, -1.0f, -0.0f, INFINITY, NAN};
    mlx_array a = vec_via_f32(MLX_FLOAT32, in, 5);
    struct {
        unary_fn f;
        double want[5];
    } cases[] = {
        {mlx_exp, {0, 0.36787944117144233, 1, INFINITY, NAN}},
        {mlx_log, {NAN, NAN, -INFINITY, INFINITY, NAN}},
        {mlx_sqrt, {NAN, NAN, 0, INFINITY, NAN}},
        {mlx_tanh, {-1, -0.7615941559557649, 0, 1, NAN}},
        {mlx_sigmoid, {0, 0.2689414213699951, 0.5, 1, NAN}},
        {mlx_floor, {-INFINITY, -1, 0, INFINITY, NAN}},
        {mlx_abs, {INFINITY, 1, 0, INFINITY, NAN}},
        /* MLX: sign(NaN) is 0 (numpy: NaN) */
        {mlx_sign, {-1, -1, 0, 1, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mlx_array r = run(cases[k].f, a, MLX_FLOAT32);
        expect_values(r, cases[k].want, 5, 2e-6, 0, "special");
        mlx_array_free(r);
    }
    /* negative and abs of zero: signed zeros */
    mlx_array r = run(mlx_negative, a, MLX_FLOAT32);
    assert_true(signbit(tu_get(r, 2)) == 0);
    mlx_array_free(r);
    r = run(mlx_abs, a, MLX_FLOAT32);
    assert_true(signbit(tu_get(r, 2)) == 0);
    TU_FREE(a, r);
}

static void test_round_is_half_to_even(void **state)
{
    (void)state;
    static const double in[8] = {0.5, 1.5, 2.5, -0.5, -1.5, 0.25, 2.75, -3.5};
    static const double want[8] = {0, 2, 2, -0.0, -2, 0, 3, -4};
    static const mlx_dtype ds[4] = {MLX_FLOAT32, MLX_FLOAT64, MLX_FLOAT16, MLX_BFLOAT16};
    for (int k = 0; k < 4; k++) {
        mlx_array a = vec_of(ds[k], in, 8), r = mlx_array_new();
        assert_int_equal(mlx_round(&r, a, 0, tu_stream()), 0);
        assert_int_equal(mlx_array_dtype(r), ds[k]);
        expect_values(r, want, 8, 0, 0, "round");
        TU_FREE(a, r);
    }
}

/* MLX rounds to decimals as rint(a * s) * (1 / s) with s = 10^decimals
 * as a float32 (and its reciprocal computed in float32). Expected values
 * are numpy float32 arithmetic done the same way, which differs from
 * numpy's own round (it divides by s). */
static void test_round_with_decimals_scales_in_float(void **state)
{
    (void)state;
    static const float in[6] = {1.2345f, 2.675f, -1.005f, 0.125f, 1234.5678f, -0.0049f};
    /* np.float32(np.rint(x * np.float32(100)) * (np.float32(1) / np.float32(100))) */
    static const double want2[6] = {1.2300000190734863, 2.679999828338623, -1.0,
                                    0.11999999731779099, 1234.5699462890625, -0.0};
    /* decimals -2: np.rint(x * np.float32(0.01)) * np.float32(100) */
    static const double want_m2[6] = {0, 0, -0.0, 0, 1200, -0.0};
    mlx_array a = tu_f32(in, (int[]){6}, 1), r = mlx_array_new();
    assert_int_equal(mlx_round(&r, a, 2, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    expect_values(r, want2, 6, 0, 0, "round(2)");
    assert_int_equal(mlx_round(&r, a, -2, tu_stream()), 0);
    expect_values(r, want_m2, 6, 0, 0, "round(-2)");
    TU_FREE(a, r);
}

static void test_round_of_integers(void **state)
{
    (void)state;
    static const double in[5] = {1234, 1250, -1251, 7, 1350};
    mlx_array a = vec_of(MLX_INT32, in, 5), r = mlx_array_new();
    /* decimals 0 and positive decimals leave integers as they are */
    assert_int_equal(mlx_round(&r, a, 0, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    expect_values(r, in, 5, 0, 0, "round(int, 0)");
    assert_int_equal(mlx_round(&r, a, 3, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    expect_values(r, in, 5, 0, 0, "round(int, 3)");
    /* negative decimals round to hundreds through float32, half to even */
    static const double want[5] = {1200, 1200, -1300, 0, 1400};
    assert_int_equal(mlx_round(&r, a, -2, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    expect_values(r, want, 5, 0, 0, "round(int, -2)");
    TU_FREE(a, r);
}

static void test_integer_arithmetic_keeps_dtype_and_wraps(void **state)
{
    (void)state;
    static const double i8[4] = {-128, -5, 0, 16};
    mlx_array a = vec_of(MLX_INT8, i8, 4);
    mlx_array r = run(mlx_abs, a, MLX_INT8);
    expect_values(r, (double[]){-128, 5, 0, 16}, 4, 0, 0, "abs(int8)"); /* wraps, as numpy */
    mlx_array_free(r);
    r = run(mlx_negative, a, MLX_INT8);
    expect_values(r, (double[]){-128, 5, 0, -16}, 4, 0, 0, "negative(int8)");
    mlx_array_free(r);
    r = run(mlx_sign, a, MLX_INT8);
    expect_values(r, (double[]){-1, -1, 0, 1}, 4, 0, 0, "sign(int8)");
    mlx_array_free(r);
    r = run(mlx_square, a, MLX_INT8);
    expect_values(r, (double[]){0, 25, 0, 0}, 4, 0, 0, "square(int8)"); /* 256 wraps to 0 */
    mlx_array_free(r);
    r = run(mlx_floor, a, MLX_INT8);
    expect_values(r, i8, 4, 0, 0, "floor(int8)");
    mlx_array_free(r);
    r = run(mlx_ceil, a, MLX_INT8);
    expect_values(r, i8, 4, 0, 0, "ceil(int8)");
    TU_FREE(a, r);

    static const double u8[3] = {0, 1, 200};
    a = vec_of(MLX_UINT8, u8, 3);
    r = run(mlx_negative, a, MLX_UINT8);
    expect_values(r, (double[]){0, 255, 56}, 3, 0, 0, "negative(uint8)");
    mlx_array_free(r);
    r = run(mlx_sign, a, MLX_UINT8);
    expect_values(r, (double[]){0, 1, 1}, 3, 0, 0, "sign(uint8)");
    mlx_array_free(r);
    r = run(mlx_abs, a, MLX_UINT8);
    expect_values(r, u8, 3, 0, 0, "abs(uint8)");
    TU_FREE(a, r);

    static const double i64[2] = {-3000000000.0, 4000000000.0};
    a = vec_of(MLX_INT64, i64, 2);
    r = run(mlx_abs, a, MLX_INT64);
    expect_values(r, (double[]){3000000000.0, 4000000000.0}, 2, 0, 0, "abs(int64)");
    TU_FREE(a, r);
}

static void test_bool_inputs(void **state)
{
    (void)state;
    static const double b[2] = {0, 1};
    mlx_array a = vec_of(MLX_BOOL, b, 2), r = mlx_array_new();
    assert_int_equal(mlx_negative(&r, a, tu_stream()), 1);
    tu_expect_error("[negative] Not supported for bool, use logical_not instead.");
    assert_null(r.ctx);
    unary_fn same[4] = {mlx_abs, mlx_sign, mlx_square, mlx_floor};
    for (int k = 0; k < 4; k++) {
        r = run(same[k], a, MLX_BOOL);
        expect_values(r, b, 2, 0, 0, "bool identity");
        mlx_array_free(r);
    }
    r = run(mlx_logical_not, a, MLX_BOOL);
    expect_values(r, (double[]){1, 0}, 2, 0, 0, "logical_not(bool)");
    mlx_array_free(r);
    r = run(mlx_bitwise_invert, a, MLX_BOOL); /* MLX: logical_not */
    expect_values(r, (double[]){1, 0}, 2, 0, 0, "bitwise_invert(bool)");
    TU_FREE(a, r);
}

static void test_logical_not_of_numbers_is_true_at_zero(void **state)
{
    (void)state;
    static const float in[5] = {0.0f, -0.0f, 2.5f, NAN, -INFINITY};
    mlx_array a = vec_via_f32(MLX_FLOAT32, in, 5);
    mlx_array r = run(mlx_logical_not, a, MLX_BOOL);
    expect_values(r, (double[]){1, 1, 0, 0, 0}, 5, 0, 0, "logical_not(float32)"); /* NaN is true */
    TU_FREE(a, r);
    static const double iv[3] = {0, 7, -1};
    a = vec_of(MLX_INT16, iv, 3);
    r = run(mlx_logical_not, a, MLX_BOOL);
    expect_values(r, (double[]){1, 0, 0}, 3, 0, 0, "logical_not(int16)");
    TU_FREE(a, r);
}

/* ---- complex64 ---- */

static mlx_array cvec(const float *parts, int n)
{
    int shape[1] = {n};
    return mlx_array_new_data(parts, shape, 1, MLX_COMPLEX64);
}

static void expect_complex(mlx_array r, const float *parts, int n, float tol)
{
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
    const float *got = (const float *)mlx_array_data_complex64(r);
    for (int i = 0; i < 2 * n; i++)
        if (!(fabsf(got[i] - parts[i]) <= tol))
            fail_msg("complex part %d: got %g, want %g", i, (double)got[i], (double)parts[i]);
}

static void test_complex_functions(void **state)
{
    (void)state;
    static const float z[6] = {3, 4, -4, 0, 0, 0};
    mlx_array a = cvec(z, 3);
    mlx_array r = run(mlx_abs, a, MLX_FLOAT32);
    expect_values(r, (double[]){5, 4, 0}, 3, 0, 0, "abs(complex)");
    mlx_array_free(r);
    r = run(mlx_real, a, MLX_FLOAT32);
    expect_values(r, (double[]){3, -4, 0}, 3, 0, 0, "real");
    mlx_array_free(r);
    r = run(mlx_imag, a, MLX_FLOAT32);
    expect_values(r, (double[]){4, 0, 0}, 3, 0, 0, "imag");
    mlx_array_free(r);
    r = run(mlx_conjugate, a, MLX_COMPLEX64);
    expect_complex(r, (float[]){3, -4, -4, -0.0f, 0, -0.0f}, 3, 0);
    mlx_array_free(r);
    r = run(mlx_sign, a, MLX_COMPLEX64); /* z / |z|, and 0 at 0 */
    expect_complex(r, (float[]){0.6f, 0.8f, -1, 0, 0, 0}, 3, 1e-6f);
    mlx_array_free(r);
    r = run(mlx_sqrt, a, MLX_COMPLEX64); /* numpy: [2+1j, 2j, 0] */
    expect_complex(r, (float[]){2, 1, 0, 2, 0, 0}, 3, 1e-6f);
    mlx_array_free(r);
    r = run(mlx_exp, a, MLX_COMPLEX64); /* numpy: exp(3+4j), exp(-4), 1 */
    expect_complex(r, (float[]){-13.128783f, -15.200784f, 0.018315639f, 0, 1, 0}, 3, 2e-5f);
    mlx_array_free(r);
    r = run(mlx_square, a, MLX_COMPLEX64);
    expect_complex(r, (float[]){-7, 24, 16, 0, 0, 0}, 3, 0);
    mlx_array_free(r);
    r = run(mlx_negative, a, MLX_COMPLEX64);
    expect_complex(r, (float[]){-3, -4, 4, -0.0f, -0.0f, -0.0f}, 3, 0);
    mlx_array_free(r);
    /* MLX refuses these for complex64 */
    unary_fn refused[6] = {mlx_expm1, mlx_sigmoid, mlx_erf, mlx_erfinv, mlx_floor, mlx_ceil};
    const char *names[6] = {"[expm1]", "[sigmoid]", "[erf]", "[erfinv]", "[floor]", "[ceil]"};
    for (int k = 0; k < 6; k++) {
        r = mlx_array_new();
        assert_int_equal(refused[k](&r, a, tu_stream()), 1);
        tu_expect_error(names[k]);
        assert_null(r.ctx);
    }
    r = mlx_array_new();
    assert_int_equal(mlx_floor(&r, a, tu_stream()), 1);
    assert_true(tu_last_error_has("Not supported for complex64."));
    tu_reset_errors();
    TU_FREE(a, r);
}

static void test_complex_parts_of_real_arrays(void **state)
{
    (void)state;
    static const double v[3] = {-2, 0, 5};
    mlx_array a = vec_of(MLX_INT32, v, 3);
    mlx_array r = run(mlx_real, a, MLX_INT32);
    assert_ptr_equal(r.ctx, a.ctx); /* MLX returns a itself */
    mlx_array_free(r);
    r = run(mlx_conjugate, a, MLX_INT32);
    assert_ptr_equal(r.ctx, a.ctx);
    mlx_array_free(r);
    r = run(mlx_imag, a, MLX_INT32); /* zeros_like(a) */
    assert_true(tu_shape_is(r, 1, (int[]){3}));
    expect_values(r, (double[]){0, 0, 0}, 3, 0, 0, "imag(int32)");
    TU_FREE(a, r);
}

/* ---- float classes ---- */

static void test_float_class_tests(void **state)
{
    (void)state;
    static const float in[6] = {1.0f, NAN, INFINITY, -INFINITY, -0.0f, 3.0e38f};
    struct {
        unary_fn f;
        double want[6];
    } cases[] = {
        {mlx_isnan, {0, 1, 0, 0, 0, 0}},
        {mlx_isinf, {0, 0, 1, 1, 0, 0}},
        {mlx_isfinite, {1, 0, 0, 0, 1, 1}},
        {mlx_isposinf, {0, 0, 1, 0, 0, 0}},
        {mlx_isneginf, {0, 0, 0, 1, 0, 0}},
    };
    static const mlx_dtype ds[4] = {MLX_FLOAT32, MLX_FLOAT64, MLX_FLOAT16, MLX_BFLOAT16};
    for (int t = 0; t < 4; t++) {
        /* 3e38 overflows float16 to inf: skip that element there */
        int n = ds[t] == MLX_FLOAT16 ? 5 : 6;
        mlx_array a = vec_via_f32(ds[t], in, n);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            mlx_array r = run(cases[k].f, a, MLX_BOOL);
            expect_values(r, cases[k].want, n, 0, 0, "float class");
            mlx_array_free(r);
        }
        mlx_array_free(a);
    }
}

static void test_float_class_tests_of_integers_are_constants(void **state)
{
    (void)state;
    static const double v[6] = {0, 1, 2, 3, 4, 5};
    int shape[2] = {2, 3};
    mlx_array a = tu_array_of(MLX_INT32, v, shape, 2);
    unary_fn fs[5] = {mlx_isnan, mlx_isinf, mlx_isposinf, mlx_isneginf, mlx_isfinite};
    for (int k = 0; k < 5; k++) {
        mlx_array r = run(fs[k], a, MLX_BOOL);
        assert_true(tu_shape_is(r, 2, shape));
        double w = k == 4 ? 1 : 0;
        expect_values(r, (double[]){w, w, w, w, w, w}, 6, 0, 0, "int class");
        /* a constant: the node does not read a */
        mlx_array_free(r);
    }
    mlx_array_free(a);
}

static void test_float_class_tests_of_complex(void **state)
{
    (void)state;
    static const float z[8] = {INFINITY, 0, INFINITY, 1, 1, -INFINITY, NAN, 0};
    mlx_array a = cvec(z, 4);
    mlx_array r = run(mlx_isposinf, a, MLX_BOOL); /* MLX: a == inf + 0j */
    expect_values(r, (double[]){1, 0, 0, 0}, 4, 0, 0, "isposinf(c64)");
    mlx_array_free(r);
    r = run(mlx_isinf, a, MLX_BOOL); /* either part infinite */
    expect_values(r, (double[]){1, 1, 1, 0}, 4, 0, 0, "isinf(c64)");
    mlx_array_free(r);
    r = run(mlx_isnan, a, MLX_BOOL);
    expect_values(r, (double[]){0, 0, 0, 1}, 4, 0, 0, "isnan(c64)");
    TU_FREE(a, r);
}

/* ---- nan_to_num ---- */

static const mlx_optional_float NONE = {0.0f, false};

static void test_nan_to_num_defaults_are_the_dtype_limits(void **state)
{
    (void)state;
    static const float in[4] = {NAN, INFINITY, -INFINITY, 1.5f};
    struct {
        mlx_dtype d;
        double max;
    } cases[3] = {{MLX_FLOAT32, 3.4028234663852886e38}, {MLX_FLOAT16, 65504}, {MLX_BFLOAT16, 3.3895313892515355e38}};
    for (int k = 0; k < 3; k++) {
        mlx_array a = vec_via_f32(cases[k].d, in, 4), r = mlx_array_new();
        assert_int_equal(mlx_nan_to_num(&r, a, 0.0f, NONE, NONE, tu_stream()), 0);
        assert_int_equal(mlx_array_dtype(r), cases[k].d);
        expect_values(r, (double[]){0, cases[k].max, -cases[k].max, 1.5}, 4, 0, 0, "nan_to_num");
        TU_FREE(a, r);
    }
}

static void test_nan_to_num_with_given_values(void **state)
{
    (void)state;
    static const float in[5] = {NAN, INFINITY, -INFINITY, 1.5f, -2.0f};
    mlx_array a = vec_via_f32(MLX_FLOAT32, in, 5), r = mlx_array_new();
    mlx_optional_float hi = {100.0f, true}, lo = {-7.0f, true};
    assert_int_equal(mlx_nan_to_num(&r, a, 5.0f, hi, lo, tu_stream()), 0);
    expect_values(r, (double[]){5, 100, -7, 1.5, -2}, 5, 0, 0, "nan_to_num(given)");
    /* only posinf given: neginf is the limit */
    assert_int_equal(mlx_nan_to_num(&r, a, 0.0f, hi, NONE, tu_stream()), 0);
    expect_values(r, (double[]){0, 100, -3.4028234663852886e38, 1.5, -2}, 5, 0, 0, "nan_to_num(hi)");
    mlx_array_free(a);

    /* float64: MLX has no limit for it, so both bounds must be given */
    a = vec_via_f32(MLX_FLOAT64, in, 5);
    mlx_array keep = r;
    assert_int_equal(mlx_nan_to_num(&r, a, 0.0f, NONE, NONE, tu_stream()), 1);
    tu_expect_error("[nan_to_num] Does not yet support given type: float64.");
    assert_ptr_equal(r.ctx, keep.ctx); /* *res untouched on failure */
    assert_int_equal(mlx_nan_to_num(&r, a, 0.0f, hi, lo, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT64);
    expect_values(r, (double[]){0, 100, -7, 1.5, -2}, 5, 0, 0, "nan_to_num(f64)");
    mlx_array_free(a);

    /* integers: a itself */
    static const double iv[2] = {1, 2};
    a = vec_of(MLX_INT32, iv, 2);
    assert_int_equal(mlx_nan_to_num(&r, a, 0.0f, NONE, NONE, tu_stream()), 0);
    assert_ptr_equal(r.ctx, a.ctx);
    TU_FREE(a, r);
}

/* ---- bitwise_invert ---- */

static void test_bitwise_invert(void **state)
{
    (void)state;
    static const double iv[3] = {0, -1, 5};
    mlx_array a = vec_of(MLX_INT32, iv, 3);
    mlx_array r = run(mlx_bitwise_invert, a, MLX_INT32);
    expect_values(r, (double[]){-1, 0, -6}, 3, 0, 0, "~int32");
    TU_FREE(a, r);
    static const double uv[3] = {0, 255, 1};
    a = vec_of(MLX_UINT8, uv, 3);
    r = run(mlx_bitwise_invert, a, MLX_UINT8);
    expect_values(r, (double[]){255, 0, 254}, 3, 0, 0, "~uint8");
    TU_FREE(a, r);
    a = vec_of(MLX_FLOAT32, uv, 3);
    r = mlx_array_new();
    assert_int_equal(mlx_bitwise_invert(&r, a, tu_stream()), 1);
    tu_expect_error("[bitwise_invert] Bitwise inverse only allowed on integer types.");
    TU_FREE(a, r);
}

/* ---- layouts and shapes ---- */

static void test_stop_gradient_is_the_identity(void **state)
{
    (void)state;
    static const float v[6] = {1, 2, 3, 4, 5, 6};
    mlx_array a = tu_f32(v, (int[]){2, 3}, 2), t = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, tu_stream()), 0);
    assert_int_equal(mlx_stop_gradient(&r, t, tu_stream()), 0);
    assert_true(tu_shape_is(r, 2, (int[]){3, 2}));
    assert_string_equal(mc_prim_name(mc_arr(r)->prim, mc_arr(r)->params), "StopGradient");
    expect_values(r, (double[]){1, 4, 2, 5, 3, 6}, 6, 0, 0, "stop_gradient");
    TU_FREE(a, t, r);
}

static void test_node_names_are_mlx_primitive_names(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(0.5f), r = mlx_array_new();
    struct {
        unary_fn f;
        const char *name;
    } cases[] = {{mlx_exp, "Exp"}, {mlx_rsqrt, "Rsqrt"}, {mlx_arcsinh, "ArcSinh"}, {mlx_erfinv, "ErfInv"},
                 {mlx_log2, "Log2"}, {mlx_logical_not, "LogicalNot"}, {mlx_floor, "Floor"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        assert_int_equal(cases[k].f(&r, a, tu_stream()), 0);
        assert_string_equal(mc_prim_name(mc_arr(r)->prim, mc_arr(r)->params), cases[k].name);
    }
    TU_FREE(a, r);
}

static void test_empty_and_scalar_shapes(void **state)
{
    (void)state;
    mlx_array e = tu_array_of(MLX_INT32, NULL, (int[]){0, 3}, 2), r = mlx_array_new();
    assert_int_equal(mlx_exp(&r, e, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    assert_true(tu_shape_is(r, 2, (int[]){0, 3}));
    assert_int_equal(mlx_array_eval(r), 0);
    assert_int_equal(mlx_array_size(r), 0);
    assert_int_equal(mlx_isnan(&r, e, tu_stream()), 0);
    assert_true(tu_shape_is(r, 2, (int[]){0, 3}));
    assert_int_equal(mlx_array_eval(r), 0);
    mlx_array s = mlx_array_new_float(4.0f);
    assert_int_equal(mlx_sqrt(&r, s, tu_stream()), 0);
    assert_int_equal(mlx_array_ndim(r), 0);
    float f = 0;
    assert_int_equal(mlx_array_item_float32(&f, r), 0);
    assert_true(f == 2.0f);
    TU_FREE(e, r, s);
}

static void test_strided_and_broadcast_inputs(void **state)
{
    (void)state;
    static const float v[6] = {0, 1, 2, 3, 4, 5};
    mlx_array a = tu_f32(v, (int[]){2, 3}, 2), t = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, tu_stream()), 0);
    assert_int_equal(mlx_square(&r, t, tu_stream()), 0);
    expect_values(r, (double[]){0, 9, 1, 16, 4, 25}, 6, 0, 0, "square(transposed)");
    mlx_array two = mlx_array_new_float(2.0f), b = mlx_array_new();
    assert_int_equal(mlx_broadcast_to(&b, two, (int[]){2, 2}, 2, tu_stream()), 0);
    assert_int_equal(mlx_negative(&r, b, tu_stream()), 0);
    expect_values(r, (double[]){-2, -2, -2, -2}, 4, 0, 0, "negative(broadcast)");
    TU_FREE(a, t, r, b, two);
}

/* Large contiguous work is split across the pool; every element must
 * still be computed once, in place when the input is donated. */
static void test_large_arrays_are_computed_everywhere(void **state)
{
    (void)state;
    enum { N = 200003 };
    float *v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < N; i++)
        v[i] = (float)(i % 1000) * 0.01f - 5.0f;
    mlx_array a = tu_f32(v, (int[]){N}, 1), r = mlx_array_new();
    assert_int_equal(mlx_tanh(&r, a, tu_stream()), 0);
    mlx_array_free(a); /* r's input is now donatable */
    assert_int_equal(mlx_array_eval(r), 0);
    const float *y = mlx_array_data_float32(r);
    for (int i = 0; i < N; i++)
        if (!(fabs((double)y[i] - tanh((double)v[i])) <= 2e-6))
            fail_msg("tanh[%d] = %g, want %g", i, (double)y[i], tanh((double)v[i]));
    mlx_array_free(r);
    free(v);
}

/* ---- allocation failures ---- */

#ifdef MC_FAULT_INJECTION
static mlx_array fx, fi;

static int f_round(mlx_array *r) { return mlx_round(r, fx, 2, tu_stream()); }
static int f_nan_to_num(mlx_array *r) { return mlx_nan_to_num(r, fx, 0.0f, NONE, NONE, tu_stream()); }
static int f_degrees(mlx_array *r) { return mlx_degrees(r, fi, tu_stream()); }
static int f_imag(mlx_array *r) { return mlx_imag(r, fi, tu_stream()); }
static int f_isinf(mlx_array *r) { return mlx_isinf(r, fi, tu_stream()); }
static int f_stop_gradient(mlx_array *r) { return mlx_stop_gradient(r, fx, tu_stream()); }
static int f_exp(mlx_array *r) { return mlx_exp(r, fi, tu_stream()); }
#endif

/* Fails the 1st, 2nd, ... allocation of building and evaluating each op
 * until it succeeds: every failure is one report and (under valgrind)
 * frees everything it took. Only in a -Dfault_injection=true build. */
static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    fx = vec_via_f32(MLX_FLOAT16, (float[]){NAN, 1.25f, -INFINITY}, 3);
    fi = vec_of(MLX_INT8, (double[]){1, -2, 3}, 3);
    int (*ops[])(mlx_array *) = {f_round, f_nan_to_num, f_degrees, f_imag, f_isinf, f_stop_gradient, f_exp};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
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
    TU_FREE(fx, fi);
#endif
}

/* ---- errors and result handling ---- */

static void test_bad_arguments_report_one_error_naming_the_op(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(1.0f), empty = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_exp(NULL, a, tu_stream()), 1);
    tu_expect_error("[exp]");
    assert_int_equal(mlx_exp(&r, empty, tu_stream()), 1);
    tu_expect_error("[exp]");
    assert_null(r.ctx);
    assert_int_equal(mlx_round(&r, empty, 2, tu_stream()), 1);
    tu_expect_error("[round]");
    assert_int_equal(mlx_nan_to_num(NULL, a, 0.0f, NONE, NONE, tu_stream()), 1);
    tu_expect_error("[nan_to_num]");
    assert_int_equal(mlx_degrees(&r, empty, tu_stream()), 1);
    tu_expect_error("[degrees]");
    assert_int_equal(mlx_isnan(&r, empty, tu_stream()), 1);
    tu_expect_error("[isnan]");
    assert_int_equal(mlx_stop_gradient(&r, empty, tu_stream()), 1);
    tu_expect_error("[stop_gradient]");
    assert_int_equal(mlx_imag(NULL, a, tu_stream()), 1);
    tu_expect_error("[imag]");
    TU_FREE(a, r);
}

static void test_result_replaces_res_and_may_alias_the_input(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(0.0f);
    /* in place: a's old array stays alive through the node */
    assert_int_equal(mlx_exp(&a, a, tu_stream()), 0);
    assert_int_equal(mlx_cos(&a, a, tu_stream()), 0);
    float f = 0;
    assert_int_equal(mlx_array_item_float32(&f, a), 0);
    assert_true(fabsf(f - 0.5403023f) < 1e-6f);
    mlx_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_float_functions_match_numpy_in_float32, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_functions_match_numpy_in_float64, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_functions_keep_float16, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_functions_keep_bfloat16, tu_test_teardown),
        cmocka_unit_test_teardown(test_integer_and_bool_inputs_become_float32, tu_test_teardown),
        cmocka_unit_test_teardown(test_every_op_has_mlx_dtype_rule_and_evaluates_for_every_dtype, tu_test_teardown),
        cmocka_unit_test_teardown(test_special_float_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_round_is_half_to_even, tu_test_teardown),
        cmocka_unit_test_teardown(test_round_with_decimals_scales_in_float, tu_test_teardown),
        cmocka_unit_test_teardown(test_round_of_integers, tu_test_teardown),
        cmocka_unit_test_teardown(test_integer_arithmetic_keeps_dtype_and_wraps, tu_test_teardown),
        cmocka_unit_test_teardown(test_bool_inputs, tu_test_teardown),
        cmocka_unit_test_teardown(test_logical_not_of_numbers_is_true_at_zero, tu_test_teardown),
        cmocka_unit_test_teardown(test_complex_functions, tu_test_teardown),
        cmocka_unit_test_teardown(test_complex_parts_of_real_arrays, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_class_tests, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_class_tests_of_integers_are_constants, tu_test_teardown),
        cmocka_unit_test_teardown(test_float_class_tests_of_complex, tu_test_teardown),
        cmocka_unit_test_teardown(test_nan_to_num_defaults_are_the_dtype_limits, tu_test_teardown),
        cmocka_unit_test_teardown(test_nan_to_num_with_given_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_bitwise_invert, tu_test_teardown),
        cmocka_unit_test_teardown(test_stop_gradient_is_the_identity, tu_test_teardown),
        cmocka_unit_test_teardown(test_node_names_are_mlx_primitive_names, tu_test_teardown),
        cmocka_unit_test_teardown(test_empty_and_scalar_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_strided_and_broadcast_inputs, tu_test_teardown),
        cmocka_unit_test_teardown(test_large_arrays_are_computed_everywhere, tu_test_teardown),
        cmocka_unit_test_teardown(test_allocation_failures_report_once_and_leak_nothing, tu_test_teardown),
        cmocka_unit_test_teardown(test_bad_arguments_report_one_error_naming_the_op, tu_test_teardown),
        cmocka_unit_test_teardown(test_result_replaces_res_and_may_alias_the_input, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("unary", tests, tu_group_setup, tu_group_teardown);
}
