/* Inputs found by the fuzzer (fuzz/fuzz_ops.c) that once crashed the
 * library or broke its error contract, each reduced to the calls that
 * mattered. They run in every build; the sanitizer builds
 * (scripts/test.sh all) are where most of them would fail again. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()

/* mc_row_strides and mc_array_update_flags skipped 0 dims when multiplying
 * strides, so with a 0 dim the product of the other dims went unchecked and
 * overflowed int64 (UBSan: signed overflow in src/array/array.c). An empty
 * array with huge other dims is legal: it has no elements to address. */
static void test_empty_shape_with_huge_other_dims_has_no_stride_overflow(void **state)
{
    (void)state;
    const int shape[5] = {0, INT_MAX, INT_MAX, INT_MAX, 3};
    mlx_array z = mlx_array_new();
    assert_int_equal(mlx_zeros(&z, shape, 5, MLX_FLOAT32, S), 0);
    assert_true(mlx_array_size(z) == 0);
    assert_int_equal(mlx_array_eval(z), 0);
    mlx_array t = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, z, S), 0);
    assert_int_equal(mlx_array_eval(t), 0);
    TU_FREE(z, t);
}

static int exp_plus_x(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_exp(&y, x, S) || mlx_add(&y, y, x, S);
    if (rc == 0)
        *res = mlx_vector_array_new_value(y);
    TU_FREE(x, y);
    return rc;
}

/* The fused kernel (src/compile/fused_prim.c) merged the dims of its output
 * before checking it was empty: for shape (5, INT_MAX, 0) the merged dim
 * 5 * INT_MAX overflowed int (UBSan). */
static void test_fused_chain_on_empty_array_with_huge_dims(void **state)
{
    (void)state;
    const int shape[3] = {5, INT_MAX, 0};
    mlx_array x = mlx_array_new();
    assert_int_equal(mlx_zeros(&x, shape, 3, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_set_compile_mode(MLX_COMPILE_MODE_ENABLED), 0);
    mlx_closure body = mlx_closure_new_func(exp_plus_x), fn = mlx_closure_new();
    assert_int_equal(mlx_compile(&fn, body, false), 0);
    mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&out, fn, in), 0);
    assert_int_equal(mlx_eval(out), 0);
    mlx_array y = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&y, out, 0), 0);
    assert_true(tu_shape_is(y, 3, shape));
    TU_FREE(x, y);
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
    mlx_closure_free(fn);
    mlx_closure_free(body);
}

/* The column scans (simd/scan_k.c) keep int16/uint16 running products in
 * 16-bit lanes; with fewer columns than vector lanes they run as scalars,
 * where C promotes both operands to int and 65535 * 46080 overflowed
 * (UBSan). The product wraps modulo 2^16 like every 16-bit product. */
static void test_16_bit_column_cumprod_wraps_without_signed_overflow(void **state)
{
    (void)state;
    /* two columns, scanned down axis 0; the row scan of the first column
     * (accumulated in 32 bits) gives the same values */
    const double v[8] = {65535, 65535, 46080, 46080, 65535, 65535, 65535, 65535};
    const double w[8] = {-1, -1, -20480, -20480, -1, -1, -1, -1};
    const int shape[2] = {4, 2};
    const mlx_dtype types[2] = {MLX_UINT16, MLX_INT16};
    for (int k = 0; k < 2; k++) {
        mlx_array a = tu_array_of(types[k], k ? w : v, shape, 2), p = mlx_array_new();
        assert_int_equal(mlx_cumprod(&p, a, 0, false, true, S), 0);
        /* rows: x, x*y, x*y*x, x*y*x*x with 65535*46080 = 19456 (mod 2^16),
         * and -1 * -20480 = 20480 as int16 */
        const double want_u[4] = {65535, 19456, 46080, 19456}, want_i[4] = {-1, 20480, -20480, 20480};
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 2; c++)
                assert_true(tu_get(p, (size_t)(2 * r + c)) == (k ? want_i : want_u)[r]);
        TU_FREE(a, p);
    }
}

/* Printing walked an empty array's blocks adding its strides in int64:
 * those of (2, INT_MAX, INT_MAX, INT_MAX, 0) overflow (UBSan in
 * src/api/array_print.c). Nothing is read; the text only shows the blocks. */
static void test_printing_empty_array_with_huge_dims(void **state)
{
    (void)state;
    const int shape[5] = {2, INT_MAX, INT_MAX, INT_MAX, 0};
    mlx_array z = mlx_array_new();
    assert_int_equal(mlx_zeros(&z, shape, 5, MLX_INT8, S), 0);
    assert_int_equal(mlx_array_eval(z), 0);
    mlx_string str = mlx_string_new();
    assert_int_equal(mlx_array_tostring(&str, z), 0);
    const char *text = mlx_string_data(str);
    assert_non_null(text);
    assert_int_equal(strncmp(text, "array([[[[[],", 13), 0);
    assert_non_null(strstr(text, "...,"));
    assert_non_null(strstr(text, "dtype=int8)"));
    mlx_string_free(str);
    mlx_array_free(z);
}

/* tensordot (src/ops/linalg.c) multiplied the operands' dims in int64
 * before checking them: (INT_MAX, INT_MAX, INT_MAX, 0) overflowed before
 * its 0 was reached. The product of an empty operand is 0; the result is
 * empty. */
static void test_tensordot_of_empty_operand_with_huge_dims(void **state)
{
    (void)state;
    const int sa[4] = {INT_MAX, INT_MAX, INT_MAX, 0}, sb[1] = {2};
    const int want[5] = {INT_MAX, INT_MAX, INT_MAX, 0, 2};
    mlx_array a = mlx_array_new(), b = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_zeros(&a, sa, 4, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_ones(&b, sb, 1, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_tensordot_axis(&r, a, b, 0, S), 0);
    assert_true(tu_shape_is(r, 5, want));
    assert_int_equal(mlx_array_eval(r), 0);
    TU_FREE(a, b, r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_empty_shape_with_huge_other_dims_has_no_stride_overflow),
        T(test_fused_chain_on_empty_array_with_huge_dims),
        T(test_16_bit_column_cumprod_wraps_without_signed_overflow),
        T(test_printing_empty_array_with_huge_dims),
        T(test_tensordot_of_empty_operand_with_huge_dims),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
