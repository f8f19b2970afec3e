/* Tests of the printed form of arrays (src/api/array_print.c) against the
 * exact text MLX prints. The expected strings were derived from MLX's
 * print_array / print_subarray (mlx/utils.cpp); test/printing_cases.py
 * checks each of them against a Python model of those rules and, where
 * the two print alike, against numpy's repr. Each test here is named like
 * its case there (test_<name>). */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/array_print.h"
#include "array/array.h"
#include "mlx/c/error.h"
#include "runtime/alloc.h"
#include "simd/half_convert.h"

/* ---- helpers ---- */

static char last_error[512];
static int error_count;

static void record_error(const char *msg, void *data)
{
    (void)data;
    snprintf(last_error, sizeof last_error, "%s", msg);
    error_count++;
}

static int setup(void **state)
{
    (void)state;
    mlx_set_error_handler(record_error, NULL, NULL);
    return 0;
}

static mc_array *make(mlx_dtype dt, int ndim, const int *shape, const void *data)
{
    mc_array *a = mc_array_from_data("test", data, ndim, shape, dt);
    assert_non_null(a);
    return a;
}

/* A view of src's buffer starting `offset` elements into src's data. */
static mc_array *view_of(mc_array *src, int ndim, const int *shape, int64_t offset, const int64_t *strides)
{
    mc_array *v = mc_array_alloc("test", src->dtype, ndim, shape);
    assert_non_null(v);
    char *start = (char *)src->data + offset * (int64_t)mc_dtype_size(src->dtype);
    mc_array_set_view(v, src, start, strides);
    return v;
}

/* Formats a (then releases it) and compares with the expected text. */
static void expect_opts(mc_array *a, const mc_print_options *o, const char *want)
{
    error_count = 0;
    char *s = mc_array_format_opts(a, o, "test");
    assert_non_null(s);
    assert_string_equal(s, want);
    assert_int_equal(error_count, 0);
    mc_xfree(s);
    mc_array_release(a);
}

static void expect(mc_array *a, const char *want) { expect_opts(a, NULL, want); }

static mc_array *arange_i32(int n, int ndim, const int *shape)
{
    int32_t *v = mc_xmalloc((size_t)(n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < n; i++)
        v[i] = i;
    mc_array *a = make(MLX_INT32, ndim, shape, v);
    mc_xfree(v);
    return a;
}

/* ---- 0-d ---- */

static void test_scalar_int32_has_no_brackets(void **state)
{
    (void)state;
    int32_t v = 1;
    expect(make(MLX_INT32, 0, NULL, &v), "array(1, dtype=int32)");
}

static void test_scalar_float32_prints_one_without_point(void **state)
{
    (void)state;
    float v = 1.0f;
    expect(make(MLX_FLOAT32, 0, NULL, &v), "array(1, dtype=float32)");
}

static void test_scalar_bool_is_lowercase_by_default(void **state)
{
    (void)state;
    uint8_t v = 1;
    expect(make(MLX_BOOL, 0, NULL, &v), "array(true, dtype=bool)");
}

static void test_scalar_bool_capitalized_as_python_prints(void **state)
{
    (void)state;
    uint8_t v = 0;
    mc_print_options o = {true, -1};
    expect_opts(make(MLX_BOOL, 0, NULL, &v), &o, "array(False, dtype=bool)");
}

static void test_zero_d_view_prints_the_viewed_element(void **state)
{
    (void)state;
    int shape[1] = {6};
    mc_array *src = arange_i32(6, 1, shape);
    mc_array *v = view_of(src, 0, NULL, 3, NULL);
    mc_array_release(src);
    expect(v, "array(3, dtype=int32)");
}

static void test_every_dtype_prints_its_name(void **state)
{
    (void)state;
    static const struct {
        mlx_dtype dt;
        const char *want;
    } cases[] = {
        {MLX_BOOL, "array(false, dtype=bool)"},
        {MLX_UINT8, "array(0, dtype=uint8)"},
        {MLX_UINT16, "array(0, dtype=uint16)"},
        {MLX_UINT32, "array(0, dtype=uint32)"},
        {MLX_UINT64, "array(0, dtype=uint64)"},
        {MLX_INT8, "array(0, dtype=int8)"},
        {MLX_INT16, "array(0, dtype=int16)"},
        {MLX_INT32, "array(0, dtype=int32)"},
        {MLX_INT64, "array(0, dtype=int64)"},
        {MLX_FLOAT16, "array(0, dtype=float16)"},
        {MLX_FLOAT32, "array(0, dtype=float32)"},
        {MLX_FLOAT64, "array(0, dtype=float64)"},
        {MLX_BFLOAT16, "array(0, dtype=bfloat16)"},
        {MLX_COMPLEX64, "array(0+0j, dtype=complex64)"},
    };
    unsigned char zeros[16] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(make(cases[i].dt, 0, NULL, zeros), cases[i].want);
}

/* ---- layout and nesting ---- */

static void test_one_d_int32(void **state)
{
    (void)state;
    int32_t v[3] = {1, 0, 1};
    int shape[1] = {3};
    expect(make(MLX_INT32, 1, shape, v), "array([1, 0, 1], dtype=int32)");
}

static void test_six_items_not_summarized(void **state)
{
    (void)state;
    int32_t v[6] = {1, 1, 1, 1, 1, 1};
    int shape[1] = {6};
    expect(make(MLX_INT32, 1, shape, v), "array([1, 1, 1, 1, 1, 1], dtype=int32)");
}

static void test_seven_items_summarized(void **state)
{
    (void)state;
    int32_t v[7] = {1, 1, 1, 1, 1, 1, 1};
    int shape[1] = {7};
    expect(make(MLX_INT32, 1, shape, v), "array([1, 1, 1, ..., 1, 1, 1], dtype=int32)");
}

static void test_two_d_rows_indented_under_first(void **state)
{
    (void)state;
    int32_t v[6] = {1, 2, 1, 2, 1, 2};
    int shape[2] = {3, 2};
    expect(make(MLX_INT32, 2, shape, v), "array([[1, 2],\n       [1, 2],\n       [1, 2]], dtype=int32)");
}

static void test_two_d_seven_rows_summarized(void **state)
{
    (void)state;
    int32_t v[14];
    for (int i = 0; i < 14; i++)
        v[i] = 1 + i % 2;
    int shape[2] = {7, 2};
    expect(make(MLX_INT32, 2, shape, v),
           "array([[1, 2],\n       [1, 2],\n       [1, 2],\n       ...,\n"
           "       [1, 2],\n       [1, 2],\n       [1, 2]], dtype=int32)");
}

static void test_three_d_no_blank_line(void **state)
{
    (void)state;
    int shape[3] = {2, 2, 2};
    expect(arange_i32(8, 3, shape),
           "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
}

static void test_four_d(void **state)
{
    (void)state;
    int shape[4] = {2, 1, 2, 2};
    expect(arange_i32(8, 4, shape),
           "array([[[[0, 1],\n         [2, 3]]],\n       [[[4, 5],\n         [6, 7]]]], dtype=int32)");
}

static void test_three_d_summarized_outer(void **state)
{
    (void)state;
    int shape[3] = {8, 2, 2};
    expect(arange_i32(32, 3, shape),
           "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]],\n"
           "       [[8, 9],\n        [10, 11]],\n       ...,\n"
           "       [[20, 21],\n        [22, 23]],\n       [[24, 25],\n        [26, 27]],\n"
           "       [[28, 29],\n        [30, 31]]], dtype=int32)");
}

/* ---- summarization ---- */

static void test_arange_2000(void **state)
{
    (void)state;
    int shape[1] = {2000};
    expect(arange_i32(2000, 1, shape), "array([0, 1, 2, ..., 1997, 1998, 1999], dtype=int32)");
}

static void test_hundred_by_hundred(void **state)
{
    (void)state;
    int shape[2] = {100, 100};
    expect(arange_i32(10000, 2, shape),
           "array([[0, 1, 2, ..., 97, 98, 99],\n"
           "       [100, 101, 102, ..., 197, 198, 199],\n"
           "       [200, 201, 202, ..., 297, 298, 299],\n"
           "       ...,\n"
           "       [9700, 9701, 9702, ..., 9797, 9798, 9799],\n"
           "       [9800, 9801, 9802, ..., 9897, 9898, 9899],\n"
           "       [9900, 9901, 9902, ..., 9997, 9998, 9999]], dtype=int32)");
}

static void test_hundred_by_hundred_float(void **state)
{
    (void)state;
    static float v[10000];
    for (int i = 0; i < 10000; i++)
        v[i] = (float)i / 4.0f;
    int shape[2] = {100, 100};
    expect(make(MLX_FLOAT32, 2, shape, v),
           "array([[0, 0.25, 0.5, ..., 24.25, 24.5, 24.75],\n"
           "       [25, 25.25, 25.5, ..., 49.25, 49.5, 49.75],\n"
           "       [50, 50.25, 50.5, ..., 74.25, 74.5, 74.75],\n"
           "       ...,\n"
           "       [2425, 2425.25, 2425.5, ..., 2449.25, 2449.5, 2449.75],\n"
           "       [2450, 2450.25, 2450.5, ..., 2474.25, 2474.5, 2474.75],\n"
           "       [2475, 2475.25, 2475.5, ..., 2499.25, 2499.5, 2499.75]], dtype=float32)");
}

/* ---- floating formats ---- */

static void test_float32_g_format(void **state)
{
    (void)state;
    float v[5] = {0.1f, 1.5f, -2.25f, 123456.0f, 3.14159265f};
    int shape[1] = {5};
    expect(make(MLX_FLOAT32, 1, shape, v), "array([0.1, 1.5, -2.25, 123456, 3.14159], dtype=float32)");
}

static void test_float32_switches_to_exponent(void **state)
{
    (void)state;
    float v[6] = {1e6f, 1234567.0f, 999999.5f, 0.0001f, 1e-5f, 1.5e-5f};
    int shape[1] = {6};
    expect(make(MLX_FLOAT32, 1, shape, v),
           "array([1e+06, 1.23457e+06, 1e+06, 0.0001, 1e-05, 1.5e-05], dtype=float32)");
}

static void test_float32_extremes(void **state)
{
    (void)state;
    float v[4] = {FLT_MAX, FLT_MIN, 1.401298464e-45f, 1e38f};
    int shape[1] = {4};
    expect(make(MLX_FLOAT32, 1, shape, v), "array([3.40282e+38, 1.17549e-38, 1.4013e-45, 1e+38], dtype=float32)");
}

static void test_float32_nan_inf_negative_zero(void **state)
{
    (void)state;
    float v[5] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
    int shape[1] = {5};
    expect(make(MLX_FLOAT32, 1, shape, v), "array([nan, inf, -inf, -0, 0], dtype=float32)");
}

static void test_float32_negative_nan(void **state)
{
    (void)state;
    float v[1] = {copysignf(NAN, -1.0f)};
    int shape[1] = {1};
    expect(make(MLX_FLOAT32, 1, shape, v), "array([-nan], dtype=float32)");
}

static void test_float_no_column_padding(void **state)
{
    (void)state;
    float v[4] = {1.0f, 22.5f, 333.0f, 4.0f};
    int shape[2] = {2, 2};
    expect(make(MLX_FLOAT32, 2, shape, v), "array([[1, 22.5],\n       [333, 4]], dtype=float32)");
}

static void test_float64(void **state)
{
    (void)state;
    double v[5] = {1e300, 1e-300, 0.5, 2.0 / 3.0, -1e-7};
    int shape[1] = {5};
    expect(make(MLX_FLOAT64, 1, shape, v), "array([1e+300, 1e-300, 0.5, 0.666667, -1e-07], dtype=float64)");
}

static void test_float16(void **state)
{
    (void)state;
    float f[5] = {1.2f, 65504.0f, 5.9604645e-08f, -0.0f, INFINITY};
    uint16_t v[5];
    for (int i = 0; i < 5; i++)
        v[i] = mc_f32_to_f16(f[i]);
    int shape[1] = {5};
    expect(make(MLX_FLOAT16, 1, shape, v), "array([1.2002, 65504, 5.96046e-08, -0, inf], dtype=float16)");
}

static void test_bfloat16(void **state)
{
    (void)state;
    float f[4] = {1.2f, 3.0e38f, -0.5f, 1.203125f};
    uint16_t v[4];
    for (int i = 0; i < 4; i++)
        v[i] = mc_f32_to_bf16(f[i]);
    int shape[1] = {4};
    /* 1.203125 is a tie at 6 digits: printf rounds it to even */
    expect(make(MLX_BFLOAT16, 1, shape, v), "array([1.20312, 3.00406e+38, -0.5, 1.20312], dtype=bfloat16)");
}

static void test_complex64(void **state)
{
    (void)state;
    float v[8] = {1, 2, 1, -1, -1.5f, 0, 0, -0.0f};
    int shape[1] = {4};
    expect(make(MLX_COMPLEX64, 1, shape, v), "array([1+2j, 1-1j, -1.5+0j, 0+-0j], dtype=complex64)");
}

static void test_complex64_nan_inf(void **state)
{
    (void)state;
    float v[6] = {NAN, NAN, 1, -INFINITY, 0.1f, 1e6f};
    int shape[1] = {3};
    expect(make(MLX_COMPLEX64, 1, shape, v), "array([nan+nanj, 1-infj, 0.1+1e+06j], dtype=complex64)");
}

static void test_precision_fixed(void **state)
{
    (void)state;
    float v[2] = {1.123456789f, -0.5f};
    int shape[1] = {2};
    mc_print_options o = {false, 4};
    expect_opts(make(MLX_FLOAT32, 1, shape, v), &o, "array([1.1235, -0.5000], dtype=float32)");
}

static void test_precision_complex(void **state)
{
    (void)state;
    float v[4] = {1, 2, 0.5f, -0.25f};
    int shape[1] = {2};
    mc_print_options o = {false, 2};
    expect_opts(make(MLX_COMPLEX64, 1, shape, v), &o, "array([1.00+2.00j, 0.50-0.25j], dtype=complex64)");
}

/* C++ streams print in the "C" locale whatever the program's locale, so a
 * comma-decimal locale must not leak into the text. Skipped when no such
 * locale is installed. */
static void test_decimal_point_ignores_program_locale(void **state)
{
    (void)state;
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE", "fr_FR"};
    const char *set = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !set; i++)
        set = setlocale(LC_NUMERIC, names[i]);
    if (!set)
        skip();
    float v[3] = {1.5f, -2.25e-7f, 1e6f};
    float c[2] = {0.5f, -0.25f};
    int shape[1] = {3}, one[1] = {1};
    mc_print_options o = {false, 2};
    expect(make(MLX_FLOAT32, 1, shape, v), "array([1.5, -2.25e-07, 1e+06], dtype=float32)");
    expect_opts(make(MLX_COMPLEX64, 1, one, c), &o, "array([0.50-0.25j], dtype=complex64)");
}

static int restore_c_locale(void **state)
{
    (void)state;
    setlocale(LC_NUMERIC, "C");
    return 0;
}

/* ---- bool and integers ---- */

static void test_bool_lowercase(void **state)
{
    (void)state;
    uint8_t v[3] = {1, 0, 1};
    int shape[1] = {3};
    expect(make(MLX_BOOL, 1, shape, v), "array([true, false, true], dtype=bool)");
}

static void test_bool_capitalized(void **state)
{
    (void)state;
    uint8_t v[3] = {1, 0, 1};
    int shape[1] = {3};
    mc_print_options o = {true, -1};
    expect_opts(make(MLX_BOOL, 1, shape, v), &o, "array([True, False, True], dtype=bool)");
}

static void test_uint64_max(void **state)
{
    (void)state;
    uint64_t v[1] = {UINT64_MAX};
    int shape[1] = {1};
    expect(make(MLX_UINT64, 1, shape, v), "array([18446744073709551615], dtype=uint64)");
}

static void test_uint64_max_and_zero_unpadded(void **state)
{
    (void)state;
    uint64_t v[2] = {UINT64_MAX, 0};
    int shape[1] = {2};
    expect(make(MLX_UINT64, 1, shape, v), "array([18446744073709551615, 0], dtype=uint64)");
}

static void test_int64_min_max(void **state)
{
    (void)state;
    int64_t v[2] = {INT64_MIN, INT64_MAX};
    int shape[1] = {2};
    expect(make(MLX_INT64, 1, shape, v), "array([-9223372036854775808, 9223372036854775807], dtype=int64)");
}

static void test_int8_prints_numbers_not_chars(void **state)
{
    (void)state;
    int8_t v[3] = {-128, 127, 0};
    int shape[1] = {3};
    expect(make(MLX_INT8, 1, shape, v), "array([-128, 127, 0], dtype=int8)");
}

static void test_uint8(void **state)
{
    (void)state;
    uint8_t v[2] = {0, 255};
    int shape[1] = {2};
    expect(make(MLX_UINT8, 1, shape, v), "array([0, 255], dtype=uint8)");
}

static void test_int16_uint16_uint32(void **state)
{
    (void)state;
    int16_t a[2] = {-32768, 32767};
    uint16_t b[1] = {65535};
    uint32_t c[1] = {4294967295u};
    int two[1] = {2}, one[1] = {1};
    expect(make(MLX_INT16, 1, two, a), "array([-32768, 32767], dtype=int16)");
    expect(make(MLX_UINT16, 1, one, b), "array([65535], dtype=uint16)");
    expect(make(MLX_UINT32, 1, one, c), "array([4294967295], dtype=uint32)");
}

/* ---- empty arrays ---- */

static void test_empty_1d(void **state)
{
    (void)state;
    int shape[1] = {0};
    expect(make(MLX_FLOAT32, 1, shape, NULL), "array([], dtype=float32)");
}

static void test_empty_0_by_3(void **state)
{
    (void)state;
    int shape[2] = {0, 3};
    expect(make(MLX_FLOAT32, 2, shape, NULL), "array([], dtype=float32)");
}

static void test_empty_3_by_0(void **state)
{
    (void)state;
    int shape[2] = {3, 0};
    expect(make(MLX_FLOAT32, 2, shape, NULL), "array([[],\n       [],\n       []], dtype=float32)");
}

static void test_empty_8_by_0_summarized(void **state)
{
    (void)state;
    int shape[2] = {8, 0};
    expect(make(MLX_INT32, 2, shape, NULL),
           "array([[],\n       [],\n       [],\n       ...,\n       [],\n       [],\n       []], dtype=int32)");
}

static void test_empty_2_0_3(void **state)
{
    (void)state;
    int shape[3] = {2, 0, 3};
    expect(make(MLX_INT32, 3, shape, NULL), "array([[],\n       []], dtype=int32)");
}

/* ---- views: strides walked, not memory order ---- */

static void test_transposed(void **state)
{
    (void)state;
    int shape[2] = {2, 3}, tshape[2] = {3, 2};
    int64_t strides[2] = {1, 3};
    mc_array *src = arange_i32(6, 2, shape);
    mc_array *v = view_of(src, 2, tshape, 0, strides);
    mc_array_release(src);
    expect(v, "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int32)");
}

static void test_broadcast_rows(void **state)
{
    (void)state;
    int32_t d[3] = {1, 2, 3};
    int shape[1] = {3}, bshape[2] = {2, 3};
    int64_t strides[2] = {0, 1};
    mc_array *src = make(MLX_INT32, 1, shape, d);
    mc_array *v = view_of(src, 2, bshape, 0, strides);
    mc_array_release(src);
    expect(v, "array([[1, 2, 3],\n       [1, 2, 3]], dtype=int32)");
}

static void test_negative_stride(void **state)
{
    (void)state;
    int shape[1] = {5};
    int64_t strides[1] = {-1};
    mc_array *src = arange_i32(5, 1, shape);
    mc_array *v = view_of(src, 1, shape, 4, strides);
    mc_array_release(src);
    expect(v, "array([4, 3, 2, 1, 0], dtype=int32)");
}

static void test_negative_stride_summarized(void **state)
{
    (void)state;
    int shape[1] = {20}, vshape[1] = {10};
    int64_t strides[1] = {-2};
    mc_array *src = arange_i32(20, 1, shape);
    mc_array *v = view_of(src, 1, vshape, 19, strides);
    mc_array_release(src);
    expect(v, "array([19, 17, 15, ..., 5, 3, 1], dtype=int32)");
}

static void test_strided_slice(void **state)
{
    (void)state;
    int shape[2] = {3, 4}, vshape[2] = {2, 2};
    int64_t strides[2] = {8, 2};
    mc_array *src = arange_i32(12, 2, shape);
    mc_array *v = view_of(src, 2, vshape, 1, strides);
    mc_array_release(src);
    expect(v, "array([[1, 3],\n       [9, 11]], dtype=int32)");
}

static void test_broadcast_scalar_summarized(void **state)
{
    (void)state;
    int32_t seven = 7;
    int vshape[2] = {8, 8};
    int64_t strides[2] = {0, 0};
    mc_array *src = make(MLX_INT32, 0, NULL, &seven);
    mc_array *v = view_of(src, 2, vshape, 0, strides);
    mc_array_release(src);
    expect(v, "array([[7, 7, 7, ..., 7, 7, 7],\n       [7, 7, 7, ..., 7, 7, 7],\n"
              "       [7, 7, 7, ..., 7, 7, 7],\n       ...,\n       [7, 7, 7, ..., 7, 7, 7],\n"
              "       [7, 7, 7, ..., 7, 7, 7],\n       [7, 7, 7, ..., 7, 7, 7]], dtype=int32)");
}

static void test_transposed_summarized(void **state)
{
    (void)state;
    int shape[2] = {10, 10};
    int64_t strides[2] = {1, 10};
    mc_array *src = arange_i32(100, 2, shape);
    mc_array *v = view_of(src, 2, shape, 0, strides);
    mc_array_release(src);
    expect(v, "array([[0, 10, 20, ..., 70, 80, 90],\n       [1, 11, 21, ..., 71, 81, 91],\n"
              "       [2, 12, 22, ..., 72, 82, 92],\n       ...,\n"
              "       [7, 17, 27, ..., 77, 87, 97],\n       [8, 18, 28, ..., 78, 88, 98],\n"
              "       [9, 19, 29, ..., 79, 89, 99]], dtype=int32)");
}

/* ---- errors ---- */

static void test_null_array_reports(void **state)
{
    (void)state;
    error_count = 0;
    assert_null(mc_array_format(NULL, "mlx_array_tostring"));
    assert_int_equal(error_count, 1);
    assert_non_null(strstr(last_error, "[mlx_array_tostring]"));
}

static void test_array_without_data_reports(void **state)
{
    (void)state;
    int shape[1] = {3};
    mc_array *a = mc_array_alloc("test", MLX_FLOAT32, 1, shape);
    assert_non_null(a);
    error_count = 0;
    assert_null(mc_array_format(a, "mlx_array_tostring"));
    assert_int_equal(error_count, 1);
    assert_non_null(strstr(last_error, "[mlx_array_tostring]"));
    mc_array_release(a);
}

/* With the allocator failing after n allocations, for every n until the
 * call succeeds: NULL, one message naming the function, nothing leaked
 * (valgrind checks the last). Only meaningful with -Dfault_injection. */
static void test_out_of_memory_fails_cleanly(void **state)
{
    (void)state;
#ifdef MC_FAULT_INJECTION
    int shape[2] = {100, 100};
    mc_array *a = arange_i32(10000, 2, shape);
    char *s = NULL;
    for (long n = 0; n < 100 && !s; n++) {
        error_count = 0;
        mc_fault_fail_after(n);
        s = mc_array_format(a, "mlx_array_tostring");
        mc_fault_fail_after(-1);
        if (!s) {
            assert_int_equal(error_count, 1);
            assert_non_null(strstr(last_error, "[mlx_array_tostring]"));
        }
    }
    assert_non_null(s);
    mc_xfree(s);
    mc_array_release(a);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_int32_has_no_brackets),
        cmocka_unit_test(test_scalar_float32_prints_one_without_point),
        cmocka_unit_test(test_scalar_bool_is_lowercase_by_default),
        cmocka_unit_test(test_scalar_bool_capitalized_as_python_prints),
        cmocka_unit_test(test_zero_d_view_prints_the_viewed_element),
        cmocka_unit_test(test_every_dtype_prints_its_name),
        cmocka_unit_test(test_one_d_int32),
        cmocka_unit_test(test_six_items_not_summarized),
        cmocka_unit_test(test_seven_items_summarized),
        cmocka_unit_test(test_two_d_rows_indented_under_first),
        cmocka_unit_test(test_two_d_seven_rows_summarized),
        cmocka_unit_test(test_three_d_no_blank_line),
        cmocka_unit_test(test_four_d),
        cmocka_unit_test(test_three_d_summarized_outer),
        cmocka_unit_test(test_arange_2000),
        cmocka_unit_test(test_hundred_by_hundred),
        cmocka_unit_test(test_hundred_by_hundred_float),
        cmocka_unit_test(test_float32_g_format),
        cmocka_unit_test(test_float32_switches_to_exponent),
        cmocka_unit_test(test_float32_extremes),
        cmocka_unit_test(test_float32_nan_inf_negative_zero),
        cmocka_unit_test(test_float32_negative_nan),
        cmocka_unit_test(test_float_no_column_padding),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_float16),
        cmocka_unit_test(test_bfloat16),
        cmocka_unit_test(test_complex64),
        cmocka_unit_test(test_complex64_nan_inf),
        cmocka_unit_test(test_precision_fixed),
        cmocka_unit_test(test_precision_complex),
        cmocka_unit_test_teardown(test_decimal_point_ignores_program_locale, restore_c_locale),
        cmocka_unit_test(test_bool_lowercase),
        cmocka_unit_test(test_bool_capitalized),
        cmocka_unit_test(test_uint64_max),
        cmocka_unit_test(test_uint64_max_and_zero_unpadded),
        cmocka_unit_test(test_int64_min_max),
        cmocka_unit_test(test_int8_prints_numbers_not_chars),
        cmocka_unit_test(test_uint8),
        cmocka_unit_test(test_int16_uint16_uint32),
        cmocka_unit_test(test_empty_1d),
        cmocka_unit_test(test_empty_0_by_3),
        cmocka_unit_test(test_empty_3_by_0),
        cmocka_unit_test(test_empty_8_by_0_summarized),
        cmocka_unit_test(test_empty_2_0_3),
        cmocka_unit_test(test_transposed),
        cmocka_unit_test(test_broadcast_rows),
        cmocka_unit_test(test_negative_stride),
        cmocka_unit_test(test_negative_stride_summarized),
        cmocka_unit_test(test_strided_slice),
        cmocka_unit_test(test_broadcast_scalar_summarized),
        cmocka_unit_test(test_transposed_summarized),
        cmocka_unit_test(test_null_array_reports),
        cmocka_unit_test(test_array_without_data_reports),
        cmocka_unit_test(test_out_of_memory_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
