/* Suite 'promotion': the dtype of binary results for every pair of the 14
 * dtypes, against MLX's promotion table (mlx/dtype.cpp, written out here
 * independently of src/array/dtype.c), for maximum, power, equal (always
 * bool), floor_divide (refuses complex64), logaddexp and arctan2 (at least
 * float). Each pair is also evaluated, so no pair builds a node without a
 * kernel. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

enum {
    B = MLX_BOOL,
    U8 = MLX_UINT8,
    U16 = MLX_UINT16,
    U32 = MLX_UINT32,
    U64 = MLX_UINT64,
    I8 = MLX_INT8,
    I16 = MLX_INT16,
    I32 = MLX_INT32,
    I64 = MLX_INT64,
    F16 = MLX_FLOAT16,
    F32 = MLX_FLOAT32,
    F64 = MLX_FLOAT64,
    BF = MLX_BFLOAT16,
    C64 = MLX_COMPLEX64,
    ND = C64 + 1
};

/* MLX's type_rules, rows and columns in mlx-c enum order (the same order
 * as MLX's Dtype::Val). */
static const int table[ND][ND] = {
    /*        B    U8   U16  U32  U64  I8   I16  I32  I64  F16  F32  F64  BF   C64 */
    /* B   */ {B, U8, U16, U32, U64, I8, I16, I32, I64, F16, F32, F64, BF, C64},
    /* U8  */ {U8, U8, U16, U32, U64, I16, I16, I32, I64, F16, F32, F64, BF, C64},
    /* U16 */ {U16, U16, U16, U32, U64, I32, I32, I32, I64, F16, F32, F64, BF, C64},
    /* U32 */ {U32, U32, U32, U32, U64, I64, I64, I64, I64, F16, F32, F64, BF, C64},
    /* U64 */ {U64, U64, U64, U64, U64, F32, F32, F32, F32, F16, F32, F64, BF, C64},
    /* I8  */ {I8, I16, I32, I64, F32, I8, I16, I32, I64, F16, F32, F64, BF, C64},
    /* I16 */ {I16, I16, I32, I64, F32, I16, I16, I32, I64, F16, F32, F64, BF, C64},
    /* I32 */ {I32, I32, I32, I64, F32, I32, I32, I32, I64, F16, F32, F64, BF, C64},
    /* I64 */ {I64, I64, I64, I64, F32, I64, I64, I64, I64, F16, F32, F64, BF, C64},
    /* F16 */ {F16, F16, F16, F16, F16, F16, F16, F16, F16, F16, F32, F64, F32, C64},
    /* F32 */ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F64, F32, C64},
    /* F64 */ {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C64},
    /* BF  */ {BF, BF, BF, BF, BF, BF, BF, BF, BF, F32, F32, F64, BF, C64},
    /* C64 */ {C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64},
};

static const char *const names[ND] = {"bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
                                      "int32", "int64", "float16", "float32", "float64", "bfloat16", "complex64"};

static bool inexact(int d) { return d >= F16; }

typedef int (*binary_fn)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);

/* Two elements per operand; bools get 0/1 patterns, others small numbers
 * every dtype holds exactly. */
static void operands(int d, const double *num, const double *flag, double *out)
{
    out[0] = d == B ? flag[0] : num[0];
    out[1] = d == B ? flag[1] : num[1];
}

typedef double (*ref_fn)(double, double);
static double ref_max(double a, double b) { return a > b ? a : b; }
static double ref_pow(double a, double b) { return pow(a, b); }
static double ref_eq(double a, double b) { return a == b; }
static double ref_fdiv(double a, double b) { return floor(a / b); }

typedef struct table_case {
    const char *name;
    binary_fn f;
    ref_fn ref;
    double a_num[2], a_flag[2], b_num[2], b_flag[2];
} table_case;

/* out dtype: -1 for an error */
typedef int (*rule_fn)(int a, int b);
static int rule_promote(int a, int b) { return table[a][b]; }
static int rule_bool(int a, int b)
{
    (void)a;
    (void)b;
    return B;
}
static int rule_no_complex(int a, int b) { return table[a][b] == C64 ? -1 : table[a][b]; }

static void check_table(const table_case *c, rule_fn rule, const char *error_prefix)
{
    for (int da = 0; da < ND; da++) {
        for (int db = 0; db < ND; db++) {
            double av[2], bv[2];
            operands(da, c->a_num, c->a_flag, av);
            operands(db, c->b_num, c->b_flag, bv);
            mlx_array a = tu_array_of((mlx_dtype)da, av, (int[]){2}, 1);
            mlx_array b = tu_array_of((mlx_dtype)db, bv, (int[]){2}, 1);
            mlx_array r = mlx_array_new();
            int want = rule(da, db);
            int rc = c->f(&r, a, b, tu_stream());
            if (want < 0) {
                if (rc == 0)
                    fail_msg("%s(%s, %s) should fail", c->name, names[da], names[db]);
                tu_expect_error(error_prefix);
            } else {
                if (rc != 0)
                    fail_msg("%s(%s, %s) failed: %s", c->name, names[da], names[db], tu_last_error());
                int got = (int)mlx_array_dtype(r);
                if (got != want)
                    fail_msg("%s(%s, %s) has dtype %s, want %s", c->name, names[da], names[db], names[got],
                             names[want]);
                if (mlx_array_eval(r) != 0)
                    fail_msg("%s(%s, %s) does not evaluate: %s", c->name, names[da], names[db], tu_last_error());
                for (int i = 0; i < 2; i++) {
                    double w = c->ref(av[i], bv[i]), g = tu_get(r, (size_t)i);
                    double tol = inexact(want) ? 1e-6 * fabs(w) : 0;
                    if (!(fabs(g - w) <= tol))
                        fail_msg("%s(%s, %s)[%d] = %g, want %g", c->name, names[da], names[db], i, g, w);
                }
            }
            TU_FREE(a, b, r);
        }
    }
}

static void test_maximum_promotes_every_pair(void **state)
{
    (void)state;
    table_case c = {"maximum", mlx_maximum, ref_max, {1, 5}, {0, 1}, {3, 2}, {1, 0}};
    check_table(&c, rule_promote, "");
}

static void test_power_promotes_every_pair(void **state)
{
    (void)state;
    /* integer ** integer stays integer; 5 ** 2 and 1 ** 3 fit every dtype */
    table_case c = {"power", mlx_power, ref_pow, {1, 5}, {0, 1}, {3, 2}, {1, 0}};
    check_table(&c, rule_promote, "");
}

static void test_equal_is_bool_for_every_pair(void **state)
{
    (void)state;
    table_case c = {"equal", mlx_equal, ref_eq, {1, 2}, {1, 0}, {1, 3}, {1, 1}};
    check_table(&c, rule_bool, "");
}

static void test_floor_divide_promotes_every_pair_but_complex(void **state)
{
    (void)state;
    table_case c = {"floor_divide", mlx_floor_divide, ref_fdiv, {7, 9}, {1, 0}, {2, 3}, {1, 1}};
    check_table(&c, rule_no_complex, "[floor_divide] Not supported for complex64.");
}

static int at_least_float(int t) { return inexact(t) ? t : F32; }

static void check_float_pairs(binary_fn f, const char *name, bool complex_refused, const char *error_prefix)
{
    for (int da = 0; da < ND; da++) {
        for (int db = 0; db < ND; db++) {
            mlx_array a = tu_array_of((mlx_dtype)da, (double[]){1}, (int[]){1}, 1);
            mlx_array b = tu_array_of((mlx_dtype)db, (double[]){1}, (int[]){1}, 1);
            mlx_array r = mlx_array_new();
            int want = at_least_float(table[da][db]);
            int rc = f(&r, a, b, tu_stream());
            if (want == C64 && complex_refused) {
                if (rc == 0)
                    fail_msg("%s(%s, %s) should fail", name, names[da], names[db]);
                tu_expect_error(error_prefix);
            } else {
                if (rc != 0)
                    fail_msg("%s(%s, %s) failed: %s", name, names[da], names[db], tu_last_error());
                if ((int)mlx_array_dtype(r) != want)
                    fail_msg("%s(%s, %s) has dtype %s, want %s", name, names[da], names[db],
                             names[mlx_array_dtype(r)], names[want]);
                assert_int_equal(mlx_array_eval(r), 0);
            }
            TU_FREE(a, b, r);
        }
    }
}

static void test_arctan2_is_at_least_float_of_the_promoted_type(void **state)
{
    (void)state;
    check_float_pairs(mlx_arctan2, "arctan2", true, "[arctan2] Not supported for complex64.");
}

static void test_logaddexp_is_at_least_float_of_the_promoted_type(void **state)
{
    (void)state;
    /* MLX builds LogAddExp for complex64 but has no kernel for it; here
     * the op refuses it when the node is built */
    check_float_pairs(mlx_logaddexp, "logaddexp", true, "[logaddexp]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_maximum_promotes_every_pair, tu_test_teardown),
        cmocka_unit_test_teardown(test_power_promotes_every_pair, tu_test_teardown),
        cmocka_unit_test_teardown(test_equal_is_bool_for_every_pair, tu_test_teardown),
        cmocka_unit_test_teardown(test_floor_divide_promotes_every_pair_but_complex, tu_test_teardown),
        cmocka_unit_test_teardown(test_arctan2_is_at_least_float_of_the_promoted_type, tu_test_teardown),
        cmocka_unit_test_teardown(test_logaddexp_is_at_least_float_of_the_promoted_type, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("promotion", tests, tu_group_setup, tu_group_teardown);
}
