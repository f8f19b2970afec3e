/* The errors suite: every bad input the foundation can be given (NULL
 * result pointers, empty handles, bad shapes and dtypes, mismatched
 * shapes) must make the call fail, report exactly one message naming the
 * function, leave the result handle as it was and leak nothing (run under
 * valgrind). Also the error handler itself: restoring the default, the
 * data destructor, and the per-thread last message. */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()

/* The call returns non-zero and reports one message starting with prefix. */
#define EXPECT_FAIL(call, prefix)                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ == 0)                                                          \
            fail_msg("%s succeeded; expected a %s error", #call, prefix);      \
        tu_expect_error(prefix);                                               \
    } while (0)

/* A constructor returns an empty handle and reports one message. */
#define EXPECT_EMPTY(call, prefix)                                             \
    do {                                                                       \
        mlx_array h_ = (call);                                                 \
        if (h_.ctx) {                                                          \
            mlx_array_free(h_);                                                \
            fail_msg("%s made an array; expected a %s error", #call, prefix);  \
        }                                                                      \
        tu_expect_error(prefix);                                               \
    } while (0)

/* A handle that failed ops must leave alone: it keeps its array and value. */
typedef struct keeper {
    mlx_array r;
    void *ctx;
} keeper;

static keeper keep_new(void)
{
    keeper k = {mlx_array_new_int(42), NULL};
    k.ctx = k.r.ctx;
    return k;
}

static void keep_check(keeper *k)
{
    assert_ptr_equal(k->r.ctx, k->ctx);
    int32_t v = 0;
    assert_int_equal(mlx_array_item_int32(&v, k->r), 0);
    assert_int_equal(v, 42);
    mlx_array_free(k->r);
}

/* ---- NULL result pointers ---- */

static void test_ops_with_null_result_pointer_fail(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(1);
    int shape[1] = {2};
    EXPECT_FAIL(mlx_add(NULL, a, a, S), "[add]");
    EXPECT_FAIL(mlx_subtract(NULL, a, a, S), "[subtract]");
    EXPECT_FAIL(mlx_multiply(NULL, a, a, S), "[multiply]");
    EXPECT_FAIL(mlx_divide(NULL, a, a, S), "[divide]");
    EXPECT_FAIL(mlx_zeros(NULL, shape, 1, MLX_FLOAT32, S), "[zeros]");
    EXPECT_FAIL(mlx_ones(NULL, shape, 1, MLX_FLOAT32, S), "[ones]");
    EXPECT_FAIL(mlx_full(NULL, shape, 1, a, MLX_FLOAT32, S), "[full]");
    EXPECT_FAIL(mlx_zeros_like(NULL, a, S), "[zeros_like]");
    EXPECT_FAIL(mlx_ones_like(NULL, a, S), "[ones_like]");
    EXPECT_FAIL(mlx_full_like(NULL, a, a, MLX_FLOAT32, S), "[full_like]");
    EXPECT_FAIL(mlx_arange(NULL, 0, 3, 1, MLX_FLOAT32, S), "[arange]");
    EXPECT_FAIL(mlx_linspace(NULL, 0, 3, 4, MLX_FLOAT32, S), "[linspace]");
    EXPECT_FAIL(mlx_eye(NULL, 2, 2, 0, MLX_FLOAT32, S), "[eye]");
    EXPECT_FAIL(mlx_identity(NULL, 2, MLX_FLOAT32, S), "[identity]");
    EXPECT_FAIL(mlx_astype(NULL, a, MLX_INT32, S), "[astype]");
    EXPECT_FAIL(mlx_reshape(NULL, a, shape, 0, S), "[reshape]");
    EXPECT_FAIL(mlx_transpose(NULL, a, S), "[transpose]");
    EXPECT_FAIL(mlx_broadcast_to(NULL, a, shape, 1, S), "[broadcast_to]");
    mlx_array_free(a);
}

static void test_array_calls_with_null_out_pointer_fail(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(1);
    float v = 1;
    int shape[1] = {1};
    EXPECT_FAIL(mlx_array_set(NULL, a), "[mlx_array_set]");
    EXPECT_FAIL(mlx_array_set_bool(NULL, true), "[mlx_array_set_bool]");
    EXPECT_FAIL(mlx_array_set_int(NULL, 1), "[mlx_array_set_int]");
    EXPECT_FAIL(mlx_array_set_float32(NULL, 1), "[mlx_array_set_float32]");
    EXPECT_FAIL(mlx_array_set_float(NULL, 1), "[mlx_array_set_float]");
    EXPECT_FAIL(mlx_array_set_float64(NULL, 1), "[mlx_array_set_float64]");
    EXPECT_FAIL(mlx_array_set_double(NULL, 1), "[mlx_array_set_double]");
    EXPECT_FAIL(mlx_array_set_complex(NULL, 1, 1), "[mlx_array_set_complex]");
    EXPECT_FAIL(mlx_array_set_data(NULL, &v, shape, 1, MLX_FLOAT32), "[mlx_array_set_data]");
    EXPECT_FAIL(mlx_array_item_float32(NULL, a), "[mlx_array_item_float32]");
    EXPECT_FAIL(_mlx_array_is_available(NULL, a), "[_mlx_array_is_available]");
    EXPECT_FAIL(_mlx_array_is_contiguous(NULL, a), "[_mlx_array_is_contiguous]");
    EXPECT_FAIL(_mlx_array_is_row_contiguous(NULL, a), "[_mlx_array_is_row_contiguous]");
    EXPECT_FAIL(_mlx_array_is_col_contiguous(NULL, a), "[_mlx_array_is_col_contiguous]");
    EXPECT_FAIL(mlx_array_tostring(NULL, a), "[mlx_array_tostring]");
    EXPECT_FAIL(mlx_get_active_memory(NULL), "[mlx_get_active_memory]");
    EXPECT_FAIL(mlx_get_peak_memory(NULL), "[mlx_get_peak_memory]");
    mlx_array_free(a);
}

/* ---- empty handles ---- */

static void test_ops_given_an_empty_handle_fail(void **state)
{
    (void)state;
    mlx_array e = mlx_array_new(), a = mlx_array_new_float(1);
    int shape[1] = {1};
    keeper k = keep_new();
    EXPECT_FAIL(mlx_add(&k.r, e, a, S), "[add]");
    EXPECT_FAIL(mlx_add(&k.r, a, e, S), "[add]");
    EXPECT_FAIL(mlx_subtract(&k.r, e, a, S), "[subtract]");
    EXPECT_FAIL(mlx_multiply(&k.r, a, e, S), "[multiply]");
    EXPECT_FAIL(mlx_divide(&k.r, e, e, S), "[divide]");
    EXPECT_FAIL(mlx_astype(&k.r, e, MLX_INT32, S), "[astype]");
    EXPECT_FAIL(mlx_reshape(&k.r, e, shape, 1, S), "[reshape]");
    EXPECT_FAIL(mlx_transpose(&k.r, e, S), "[transpose]");
    EXPECT_FAIL(mlx_broadcast_to(&k.r, e, shape, 1, S), "[broadcast_to]");
    EXPECT_FAIL(mlx_full(&k.r, shape, 1, e, MLX_FLOAT32, S), "[full]");
    EXPECT_FAIL(mlx_full_like(&k.r, e, a, MLX_FLOAT32, S), "[full_like]");
    EXPECT_FAIL(mlx_full_like(&k.r, a, e, MLX_FLOAT32, S), "[full_like]");
    EXPECT_FAIL(mlx_zeros_like(&k.r, e, S), "[zeros_like]");
    EXPECT_FAIL(mlx_ones_like(&k.r, e, S), "[ones_like]");
    keep_check(&k);
    mlx_array_free(a);
}

static void test_queries_on_an_empty_handle_fail(void **state)
{
    (void)state;
    mlx_array e = mlx_array_new();
    assert_int_equal(mlx_array_itemsize(e), 0);
    tu_expect_error("[mlx_array_itemsize]");
    assert_int_equal(mlx_array_size(e), 0);
    tu_expect_error("[mlx_array_size]");
    assert_int_equal(mlx_array_nbytes(e), 0);
    tu_expect_error("[mlx_array_nbytes]");
    assert_int_equal(mlx_array_ndim(e), 0);
    tu_expect_error("[mlx_array_ndim]");
    assert_null(mlx_array_shape(e));
    tu_expect_error("[mlx_array_shape]");
    assert_null(mlx_array_strides(e));
    tu_expect_error("[mlx_array_strides]");
    assert_int_equal(mlx_array_dim(e, 0), 0);
    tu_expect_error("[mlx_array_dim]");
    (void)mlx_array_dtype(e);
    tu_expect_error("[mlx_array_dtype]");
    EXPECT_FAIL(mlx_array_eval(e), "[mlx_array_eval]");
    EXPECT_FAIL(_mlx_array_wait(e), "[_mlx_array_wait]");
    bool b;
    EXPECT_FAIL(_mlx_array_is_available(&b, e), "[_mlx_array_is_available]");
    EXPECT_FAIL(_mlx_array_is_contiguous(&b, e), "[_mlx_array_is_contiguous]");
    EXPECT_FAIL(_mlx_array_is_row_contiguous(&b, e), "[_mlx_array_is_row_contiguous]");
    EXPECT_FAIL(_mlx_array_is_col_contiguous(&b, e), "[_mlx_array_is_col_contiguous]");
    mlx_string str = mlx_string_new();
    EXPECT_FAIL(mlx_array_tostring(&str, e), "[mlx_array_tostring]");
    mlx_string_free(str);
}

static void test_accessors_on_an_empty_handle_fail(void **state)
{
    (void)state;
    mlx_array e = mlx_array_new();
    bool b;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    float f;
    double d;
    mlx_complex64_t c;
    EXPECT_FAIL(mlx_array_item_bool(&b, e), "[mlx_array_item_bool]");
    EXPECT_FAIL(mlx_array_item_uint8(&u8, e), "[mlx_array_item_uint8]");
    EXPECT_FAIL(mlx_array_item_uint16(&u16, e), "[mlx_array_item_uint16]");
    EXPECT_FAIL(mlx_array_item_uint32(&u32, e), "[mlx_array_item_uint32]");
    EXPECT_FAIL(mlx_array_item_uint64(&u64, e), "[mlx_array_item_uint64]");
    EXPECT_FAIL(mlx_array_item_int8(&i8, e), "[mlx_array_item_int8]");
    EXPECT_FAIL(mlx_array_item_int16(&i16, e), "[mlx_array_item_int16]");
    EXPECT_FAIL(mlx_array_item_int32(&i32, e), "[mlx_array_item_int32]");
    EXPECT_FAIL(mlx_array_item_int64(&i64, e), "[mlx_array_item_int64]");
    EXPECT_FAIL(mlx_array_item_float32(&f, e), "[mlx_array_item_float32]");
    EXPECT_FAIL(mlx_array_item_float64(&d, e), "[mlx_array_item_float64]");
    EXPECT_FAIL(mlx_array_item_complex64(&c, e), "[mlx_array_item_complex64]");
#ifdef HAS_FLOAT16
    float16_t h;
#else
    uint16_t h;
#endif
#ifdef HAS_BFLOAT16
    bfloat16_t bh;
#else
    uint16_t bh;
#endif
    EXPECT_FAIL(mlx_array_item_float16(&h, e), "[mlx_array_item_float16]");
    EXPECT_FAIL(mlx_array_item_bfloat16(&bh, e), "[mlx_array_item_bfloat16]");
    assert_null(mlx_array_data_bool(e));
    tu_expect_error("[mlx_array_data_bool]");
    assert_null(mlx_array_data_uint64(e));
    tu_expect_error("[mlx_array_data_uint64]");
    assert_null(mlx_array_data_int8(e));
    tu_expect_error("[mlx_array_data_int8]");
    assert_null(mlx_array_data_float32(e));
    tu_expect_error("[mlx_array_data_float32]");
    assert_null(mlx_array_data_float64(e));
    tu_expect_error("[mlx_array_data_float64]");
    assert_null(mlx_array_data_complex64(e));
    tu_expect_error("[mlx_array_data_complex64]");
    assert_null(mlx_array_data_float16(e));
    tu_expect_error("[mlx_array_data_float16]");
    assert_null(mlx_array_data_bfloat16(e));
    tu_expect_error("[mlx_array_data_bfloat16]");
}

static void test_eval_of_an_empty_vector_handle_fails(void **state)
{
    (void)state;
    mlx_vector_array none = {NULL};
    EXPECT_FAIL(mlx_eval(none), "[mlx_eval]");
    EXPECT_FAIL(mlx_async_eval(none), "[mlx_async_eval]");
}

static void test_set_from_an_empty_handle_fails(void **state)
{
    (void)state;
    /* mlx-c reads src with mlx_array_get_, which rejects an empty handle
     * ("expected a non-empty mlx_array"); the target keeps its array */
    keeper k = keep_new();
    EXPECT_FAIL(mlx_array_set(&k.r, mlx_array_new()), "[mlx_array_set]");
    keep_check(&k);
}

/* ---- bad shapes ---- */

static void test_negative_dimensions_are_refused(void **state)
{
    (void)state;
    int shape[2] = {2, -1};
    float v[4] = {0};
    keeper k = keep_new();
    mlx_array a = mlx_array_new_float(1);
    EXPECT_FAIL(mlx_zeros(&k.r, shape, 2, MLX_FLOAT32, S), "[zeros]");
    EXPECT_FAIL(mlx_ones(&k.r, shape, 2, MLX_FLOAT32, S), "[ones]");
    EXPECT_FAIL(mlx_full(&k.r, shape, 2, a, MLX_FLOAT32, S), "[full]");
    EXPECT_FAIL(mlx_broadcast_to(&k.r, a, shape, 2, S), "[broadcast_to]");
    int neg2[2] = {-2, -2};
    EXPECT_FAIL(mlx_reshape(&k.r, a, neg2, 2, S), "[reshape]");
    EXPECT_EMPTY(mlx_array_new_data(v, shape, 2, MLX_FLOAT32), "[mlx_array_new_data]");
    EXPECT_EMPTY(mlx_array_new_data_managed(v, shape, 2, MLX_FLOAT32, NULL), "[mlx_array_new_data_managed]");
    EXPECT_FAIL(mlx_array_set_data(&k.r, v, shape, 2, MLX_FLOAT32), "[mlx_array_set_data]");
    EXPECT_FAIL(mlx_eye(&k.r, 2, -3, 0, MLX_FLOAT32, S), "[eye]");
    keep_check(&k);
    mlx_array_free(a);
}

static void test_shapes_whose_size_overflows_are_refused(void **state)
{
    (void)state;
    /* 2^90 and ~2^93 elements: no size_t holds the product */
    int huge[3] = {1 << 30, 1 << 30, 1 << 30}, imax[3] = {INT_MAX, INT_MAX, INT_MAX};
    float v = 0;
    keeper k = keep_new();
    mlx_array a = mlx_array_new_float(1);
    int *shapes[2] = {huge, imax};
    for (int s = 0; s < 2; s++) {
        EXPECT_FAIL(mlx_zeros(&k.r, shapes[s], 3, MLX_FLOAT32, S), "[zeros]");
        EXPECT_FAIL(mlx_ones(&k.r, shapes[s], 3, MLX_INT8, S), "[ones]");
        EXPECT_FAIL(mlx_full(&k.r, shapes[s], 3, a, MLX_FLOAT32, S), "[full]");
        EXPECT_FAIL(mlx_broadcast_to(&k.r, a, shapes[s], 3, S), "[broadcast_to]");
        EXPECT_FAIL(mlx_reshape(&k.r, a, shapes[s], 3, S), "[reshape]");
        EXPECT_EMPTY(mlx_array_new_data(&v, shapes[s], 3, MLX_FLOAT32), "[mlx_array_new_data]");
        EXPECT_EMPTY(mlx_array_new_data_managed(&v, shapes[s], 3, MLX_FLOAT32, NULL),
                     "[mlx_array_new_data_managed]");
    }
    keep_check(&k);
    mlx_array_free(a);
}

static void test_shape_of_2_pow_60_elements_is_never_allocated(void **state)
{
    (void)state;
    /* 2^60 float32 elements (4 EiB) fit a size_t but no memory: the call
     * may refuse at once or build a lazy array, whose evaluation must then
     * fail with one message instead of allocating */
    int shape[3] = {1 << 20, 1 << 20, 1 << 20};
    mlx_array z = mlx_array_new();
    if (mlx_zeros(&z, shape, 3, MLX_FLOAT32, S) != 0) {
        tu_expect_error("[zeros]");
    } else {
        tu_expect_no_error();
        assert_int_not_equal(mlx_array_eval(z), 0);
        tu_expect_error("[");
        bool av = true;
        assert_int_equal(_mlx_array_is_available(&av, z), 0);
        assert_false(av);
    }
    float v = 0;
    EXPECT_EMPTY(mlx_array_new_data(&v, shape, 3, MLX_FLOAT32), "[mlx_array_new_data]");
    mlx_array_free(z);
}

static void test_more_than_64_dimensions_are_refused(void **state)
{
    (void)state;
    int shape[65];
    for (int i = 0; i < 65; i++)
        shape[i] = 1;
    float v = 3;
    keeper k = keep_new();
    mlx_array a = mlx_array_new_float(1);
    EXPECT_FAIL(mlx_zeros(&k.r, shape, 65, MLX_FLOAT32, S), "[zeros]");
    EXPECT_FAIL(mlx_ones(&k.r, shape, 65, MLX_FLOAT32, S), "[ones]");
    EXPECT_FAIL(mlx_full(&k.r, shape, 65, a, MLX_FLOAT32, S), "[full]");
    EXPECT_FAIL(mlx_reshape(&k.r, a, shape, 65, S), "[reshape]");
    EXPECT_FAIL(mlx_broadcast_to(&k.r, a, shape, 65, S), "[broadcast_to]");
    EXPECT_EMPTY(mlx_array_new_data(&v, shape, 65, MLX_FLOAT32), "[mlx_array_new_data]");
    EXPECT_FAIL(mlx_array_set_data(&k.r, &v, shape, 65, MLX_FLOAT32), "[mlx_array_set_data]");
    keep_check(&k);
    /* 64 is allowed */
    mlx_array z = mlx_array_new(), t = mlx_array_new();
    assert_int_equal(mlx_zeros(&z, shape, 64, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_transpose(&t, z, S), 0);
    assert_int_equal(mlx_array_eval(t), 0);
    assert_int_equal(mlx_array_ndim(t), 64);
    TU_FREE(a, z, t);
}

static void test_null_shape_with_dimensions_is_refused(void **state)
{
    (void)state;
    float v[2] = {0};
    keeper k = keep_new();
    EXPECT_FAIL(mlx_zeros(&k.r, NULL, 2, MLX_FLOAT32, S), "[zeros]");
    EXPECT_FAIL(mlx_broadcast_to(&k.r, k.r, NULL, 1, S), "[broadcast_to]");
    EXPECT_FAIL(mlx_reshape(&k.r, k.r, NULL, 1, S), "[reshape]");
    EXPECT_EMPTY(mlx_array_new_data(v, NULL, 2, MLX_FLOAT32), "[mlx_array_new_data]");
    keep_check(&k);
}

/* ---- bad dtypes ---- */

static void test_unknown_dtype_values_are_refused(void **state)
{
    (void)state;
    int shape[1] = {2};
    float v[2] = {0};
    keeper k = keep_new();
    mlx_array a = mlx_array_new_float(1);
    mlx_dtype bad[2] = {(mlx_dtype)99, (mlx_dtype)-1};
    for (int i = 0; i < 2; i++) {
        EXPECT_FAIL(mlx_zeros(&k.r, shape, 1, bad[i], S), "[zeros]");
        EXPECT_FAIL(mlx_ones(&k.r, shape, 1, bad[i], S), "[ones]");
        EXPECT_FAIL(mlx_full(&k.r, shape, 1, a, bad[i], S), "[full]");
        EXPECT_FAIL(mlx_full_like(&k.r, a, a, bad[i], S), "[full_like]");
        EXPECT_FAIL(mlx_astype(&k.r, a, bad[i], S), "[astype]");
        EXPECT_FAIL(mlx_arange(&k.r, 0, 2, 1, bad[i], S), "[arange]");
        EXPECT_FAIL(mlx_linspace(&k.r, 0, 2, 3, bad[i], S), "[linspace]");
        EXPECT_FAIL(mlx_eye(&k.r, 2, 2, 0, bad[i], S), "[eye]");
        EXPECT_EMPTY(mlx_array_new_data(v, shape, 1, bad[i]), "[mlx_array_new_data]");
        EXPECT_EMPTY(mlx_array_new_data_managed(v, shape, 1, bad[i], NULL), "[mlx_array_new_data_managed]");
        EXPECT_FAIL(mlx_array_set_data(&k.r, v, shape, 1, bad[i]), "[mlx_array_set_data]");
    }
    keep_check(&k);
    mlx_array_free(a);
}

static void test_reading_data_of_the_wrong_dtype_fails(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float64(1);
    assert_null(mlx_array_data_int64(a));
    tu_expect_error("[mlx_array_data_int64]");
    int64_t i;
    EXPECT_FAIL(mlx_array_item_int64(&i, a), "[mlx_array_item_int64]");
    mlx_array_free(a);
}

/* ---- bad indices and shapes to ops ---- */

static void test_dim_out_of_range_fails(void **state)
{
    (void)state;
    int shape[2] = {2, 3};
    mlx_array a = mlx_array_new(), s = mlx_array_new_int(1);
    assert_int_equal(mlx_zeros(&a, shape, 2, MLX_FLOAT32, S), 0);
    int bad[4] = {2, -3, INT_MAX, INT_MIN};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(mlx_array_dim(a, bad[i]), 0);
        tu_expect_error("[mlx_array_dim]");
    }
    assert_int_equal(mlx_array_dim(s, 0), 0); /* 0-d has no dimensions */
    tu_expect_error("[mlx_array_dim]");
    TU_FREE(a, s);
}

static void test_reshape_to_a_wrong_size_fails(void **state)
{
    (void)state;
    int shape[2] = {2, 3}, to[2] = {4, 2};
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_zeros(&a, shape, 2, MLX_FLOAT32, S), 0);
    keeper k = keep_new();
    EXPECT_FAIL(mlx_reshape(&k.r, a, to, 2, S), "[reshape]");
    mlx_array r = mlx_array_new();
    assert_int_not_equal(mlx_reshape(&r, a, to, 2, S), 0);
    assert_string_equal(tu_last_error(), "[reshape] Cannot reshape array of size 6 into shape (4,2).");
    tu_reset_errors();
    int two_infer[2] = {-1, -1}, bad_infer[2] = {-1, 4}, empty_infer[2] = {-1, 0};
    EXPECT_FAIL(mlx_reshape(&k.r, a, two_infer, 2, S), "[reshape]");
    EXPECT_FAIL(mlx_reshape(&k.r, a, bad_infer, 2, S), "[reshape]");
    EXPECT_FAIL(mlx_reshape(&k.r, a, empty_infer, 2, S), "[reshape]");
    keep_check(&k);
    TU_FREE(a, r);
}

static void test_broadcast_to_an_incompatible_shape_fails(void **state)
{
    (void)state;
    float v[6] = {0};
    int shape[2] = {2, 3}, to1[2] = {2, 4}, to2[1] = {3}, to3[3] = {4, 3, 3};
    mlx_array a = tu_f32(v, shape, 2);
    keeper k = keep_new();
    EXPECT_FAIL(mlx_broadcast_to(&k.r, a, to1, 2, S), "[broadcast_to]");
    EXPECT_FAIL(mlx_broadcast_to(&k.r, a, to2, 1, S), "[broadcast_to]"); /* fewer dims */
    assert_int_not_equal(mlx_broadcast_to(&k.r, a, to3, 3, S), 0);
    assert_true(tu_last_error_has("(2,3)"));
    tu_expect_error("[broadcast_to]");
    keep_check(&k);
    mlx_array_free(a);
}

static void test_arithmetic_on_incompatible_shapes_names_both(void **state)
{
    (void)state;
    float v[12] = {0};
    int s1[2] = {2, 3}, s2[2] = {4, 3};
    mlx_array a = tu_f32(v, s1, 2), b = tu_f32(v, s2, 2);
    keeper k = keep_new();
    int (*ops[4])(mlx_array *, mlx_array, mlx_array, mlx_stream) = {mlx_add, mlx_subtract, mlx_multiply,
                                                                  mlx_divide};
    const char *names[4] = {"[add]", "[subtract]", "[multiply]", "[divide]"};
    for (int i = 0; i < 4; i++) {
        assert_int_not_equal(ops[i](&k.r, a, b, S), 0);
        assert_true(tu_last_error_has("(2,3)"));
        assert_true(tu_last_error_has("(4,3)"));
        tu_expect_error(names[i]);
    }
    keep_check(&k);
    TU_FREE(a, b);
}

static int refused_dtor_calls;
static void refused_dtor(void *p)
{
    (void)p;
    refused_dtor_calls++;
}

static void test_null_data_for_a_non_empty_shape_is_refused(void **state)
{
    (void)state;
    int shape[2] = {2, 3};
    keeper k = keep_new();
    EXPECT_EMPTY(mlx_array_new_data(NULL, shape, 2, MLX_FLOAT32), "[mlx_array_new_data]");
    EXPECT_EMPTY(mlx_array_new_data(NULL, NULL, 0, MLX_INT32), "[mlx_array_new_data]"); /* 0-d has 1 */
    EXPECT_FAIL(mlx_array_set_data(&k.r, NULL, shape, 2, MLX_FLOAT32), "[mlx_array_set_data]");
    refused_dtor_calls = 0;
    EXPECT_EMPTY(mlx_array_new_data_managed(NULL, shape, 2, MLX_FLOAT32, refused_dtor),
                 "[mlx_array_new_data_managed]");
    EXPECT_EMPTY(mlx_array_new_data_managed_payload(NULL, shape, 2, MLX_FLOAT32, NULL, refused_dtor),
                 "[mlx_array_new_data_managed_payload]");
    /* no array took the memory, so no destructor runs for it */
    assert_int_equal(refused_dtor_calls, 0);
    keep_check(&k);
}

/* ---- the handler ---- */

static void test_null_handler_restores_the_default_which_exits(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        mlx_set_error_handler(NULL, NULL, NULL);
        mlx_array e = mlx_array_new();
        (void)mlx_array_dim(e, 0);
        _exit(3); /* the default handler must not return */
    }
    close(fds[1]);
    char out[512] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(fds[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 255); /* exit(-1), as mlx-c */
    assert_non_null(strstr(out, "MLX error: [mlx_array_dim]"));
}

typedef struct handler_data {
    int calls;
    int dtor_calls;
    char last[256];
} handler_data;

static void data_handler(const char *msg, void *data)
{
    handler_data *h = data;
    h->calls++;
    snprintf(h->last, sizeof h->last, "%s", msg);
}

static void data_dtor(void *data) { ((handler_data *)data)->dtor_calls++; }

static void test_handler_gets_its_data_and_the_dtor_runs_when_replaced(void **state)
{
    (void)state;
    handler_data h1 = {0}, h2 = {0};
    mlx_set_error_handler(data_handler, &h1, data_dtor);
    mlx_array e = mlx_array_new();
    (void)mlx_array_size(e);
    assert_int_equal(h1.calls, 1);
    assert_non_null(strstr(h1.last, "[mlx_array_size]"));
    assert_int_equal(h1.dtor_calls, 0);
    mlx_set_error_handler(data_handler, &h2, data_dtor);
    assert_int_equal(h1.dtor_calls, 1);
    (void)mlx_array_ndim(e);
    assert_int_equal(h1.calls, 1);
    assert_int_equal(h2.calls, 1);
    tu_install_recorder();
    assert_int_equal(h2.dtor_calls, 1);
    assert_int_equal(h1.dtor_calls, 1); /* once only */
    assert_int_equal(tu_error_count(), 0);
}

/* A handler running on one thread while another replaces it: the old
 * handler's data must outlive that call (its destructor runs after it). */
typedef struct slow_handler {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int entered, replaced, alive, used_after_dtor;
} slow_handler;

static void slow_handler_fn(const char *msg, void *data)
{
    (void)msg;
    slow_handler *h = data;
    pthread_mutex_lock(&h->lock);
    h->entered = 1;
    pthread_cond_broadcast(&h->cond);
    while (!h->replaced)
        pthread_cond_wait(&h->cond, &h->lock);
    if (!h->alive)
        h->used_after_dtor = 1;
    pthread_mutex_unlock(&h->lock);
}

static void slow_handler_dtor(void *data)
{
    slow_handler *h = data;
    pthread_mutex_lock(&h->lock);
    h->alive = 0;
    pthread_mutex_unlock(&h->lock);
}

static void *report_once(void *p)
{
    (void)p;
    mlx_array e = mlx_array_new();
    (void)mlx_array_ndim(e);
    return NULL;
}

static void test_a_replaced_handler_keeps_its_data_until_its_running_call_returns(void **state)
{
    (void)state;
    slow_handler h = {.alive = 1};
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    mlx_set_error_handler(slow_handler_fn, &h, slow_handler_dtor);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, report_once, NULL), 0);
    pthread_mutex_lock(&h.lock);
    while (!h.entered)
        pthread_cond_wait(&h.cond, &h.lock);
    pthread_mutex_unlock(&h.lock);
    /* the other thread is inside the handler: replace it now */
    tu_install_recorder();
    pthread_mutex_lock(&h.lock);
    h.replaced = 1;
    pthread_cond_broadcast(&h.cond);
    pthread_mutex_unlock(&h.lock);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(h.used_after_dtor, 0);
    assert_int_equal(h.alive, 0); /* and the destructor did run, after the call */
    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.lock);
    assert_int_equal(tu_error_count(), 0);
}

static void test_mlx_error_macro_reports_with_file_and_line(void **state)
{
    (void)state;
    mlx_error("custom failure %d", 7);
    assert_int_equal(tu_error_count(), 1);
    assert_true(strncmp(tu_last_error(), "custom failure 7", 16) == 0);
    assert_true(tu_last_error_has("test_errors.c"));
    tu_reset_errors();
}

typedef struct thread_report {
    char initial[64];
    char after[256];
} thread_report;

static void *other_thread(void *p)
{
    thread_report *r = p;
    snprintf(r->initial, sizeof r->initial, "%s", mlx_cpu_last_error());
    mlx_array e = mlx_array_new();
    (void)mlx_array_nbytes(e);
    snprintf(r->after, sizeof r->after, "%s", mlx_cpu_last_error());
    return NULL;
}

static void test_last_error_is_kept_per_thread(void **state)
{
    (void)state;
    mlx_array e = mlx_array_new();
    (void)mlx_array_itemsize(e);
    assert_true(strncmp(mlx_cpu_last_error(), "[mlx_array_itemsize]", 20) == 0);
    thread_report r;
    memset(&r, 0, sizeof r);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, other_thread, &r), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_string_equal(r.initial, ""); /* a new thread starts clean */
    assert_true(strncmp(r.after, "[mlx_array_nbytes]", 18) == 0);
    /* the other thread's failure did not touch this thread's message */
    assert_true(strncmp(mlx_cpu_last_error(), "[mlx_array_itemsize]", 20) == 0);
    assert_int_equal(tu_error_count(), 2); /* both went through the handler */
    tu_reset_errors();
    mlx_cpu_clear_last_error();
    assert_string_equal(mlx_cpu_last_error(), "");
}

static void test_a_successful_call_reports_nothing(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(2), b = mlx_array_new();
    mlx_cpu_clear_last_error();
    assert_int_equal(mlx_add(&b, a, a, S), 0);
    assert_int_equal(mlx_array_eval(b), 0);
    assert_int_equal(tu_error_count(), 0);
    assert_string_equal(mlx_cpu_last_error(), "");
    TU_FREE(a, b);
}

/* A message names the function the user called, never a step of it:
 * eye/identity of a size past addressing name themselves, and a result
 * too large to allocate names the evaluating call (and the step). */
static void test_errors_name_the_called_function_not_an_inner_step(void **state)
{
    (void)state;
    mlx_array r = mlx_array_new();
    EXPECT_FAIL(mlx_eye(&r, INT_MAX, INT_MAX, 0, MLX_FLOAT32, S), "[eye]");
    EXPECT_FAIL(mlx_identity(&r, INT_MAX, MLX_FLOAT32, S), "[identity]");
    const int huge[2] = {1 << 20, 1 << 20}; /* 2^40 float32: 4 TiB */
    mlx_array one = mlx_array_new_float(1.0f);
    assert_int_equal(mlx_full(&r, huge, 2, one, MLX_FLOAT32, S), 0);
    EXPECT_FAIL(mlx_array_eval(r), "[mlx_array_eval] Out of memory allocating 4398046511104 bytes");
    assert_int_equal(mlx_zeros(&r, huge, 2, MLX_FLOAT32, S), 0);
    mlx_vector_array v = mlx_vector_array_new_data(&r, 1);
    EXPECT_FAIL(mlx_eval(v), "[mlx_eval] Out of memory allocating");
    mlx_vector_array_free(v);
    TU_FREE(r, one);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_ops_with_null_result_pointer_fail),
        T(test_array_calls_with_null_out_pointer_fail),
        T(test_ops_given_an_empty_handle_fail),
        T(test_queries_on_an_empty_handle_fail),
        T(test_accessors_on_an_empty_handle_fail),
        T(test_eval_of_an_empty_vector_handle_fails),
        T(test_set_from_an_empty_handle_fails),
        T(test_negative_dimensions_are_refused),
        T(test_shapes_whose_size_overflows_are_refused),
        T(test_shape_of_2_pow_60_elements_is_never_allocated),
        T(test_more_than_64_dimensions_are_refused),
        T(test_null_shape_with_dimensions_is_refused),
        T(test_unknown_dtype_values_are_refused),
        T(test_reading_data_of_the_wrong_dtype_fails),
        T(test_dim_out_of_range_fails),
        T(test_reshape_to_a_wrong_size_fails),
        T(test_broadcast_to_an_incompatible_shape_fails),
        T(test_arithmetic_on_incompatible_shapes_names_both),
        T(test_null_data_for_a_non_empty_shape_is_refused),
        T(test_null_handler_restores_the_default_which_exits),
        T(test_handler_gets_its_data_and_the_dtor_runs_when_replaced),
        T(test_a_replaced_handler_keeps_its_data_until_its_running_call_returns),
        T(test_mlx_error_macro_reports_with_file_and_line),
        T(test_last_error_is_kept_per_thread),
        T(test_a_successful_call_reports_nothing),
        T(test_errors_name_the_called_function_not_an_inner_step),
    };
    return cmocka_run_group_tests_name("errors", tests, tu_group_setup, tu_group_teardown);
}
