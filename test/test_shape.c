/* The shape, indexing and layout ops (src/ops/shape_*.c, index_*.c and
 * their primitives in src/graph/prims_view2.c, prims_index.c,
 * prims_select.c): result shapes, dtypes and values, on contiguous and
 * non-contiguous inputs (transposed, negative-step slices, broadcasts), 0-d
 * and empty arrays and several dtypes; which results are views of their
 * input's buffer; and the bad-input errors (one message naming the op, the
 * result handle untouched, nothing leaked under valgrind).
 *
 * Expected values were computed with numpy 1.24 by test/shape_cases.py and
 * pasted here as constants (MLX follows numpy for all of these). */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "ops/shape_internal.h" /* primitive ids; mlx_roll_axis/_axes until ops.h has them */
#include "runtime/alloc.h"
#include "test_util.h"

#define S tu_stream()
#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define SHAPE(...) ((const int[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)))

/* The call returns non-zero, reports one message starting with prefix and
 * leaves the result handle as it was. */
#define EXPECT_FAIL(res, call, prefix)                                         \
    do {                                                                       \
        void *before_ = (res).ctx;                                             \
        int rc_ = (call);                                                      \
        if (rc_ == 0)                                                          \
            fail_msg("%s succeeded; expected a %s error", #call, prefix);      \
        tu_expect_error(prefix);                                               \
        assert_ptr_equal((res).ctx, before_);                                  \
    } while (0)

#define OK(call) assert_int_equal((call), 0)

/* ---- numpy expectations (test/shape_cases.py) ---- */
/* exp_flatten_t: shape (4, 6) */
static const double exp_flatten_t[] = {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23};
/* exp_transpose_102: shape (3, 2, 4) */
static const double exp_transpose_102[] = {0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23};
/* exp_swap_02: shape (4, 3, 2) */
static const double exp_swap_02[] = {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23};
/* exp_move_0_m1: shape (3, 4, 2) */
static const double exp_move_0_m1[] = {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23};
/* exp_slice_neg: shape (2, 5) */
static const double exp_slice_neg[] = {19, 18, 17, 16, 15, 9, 8, 7, 6, 5};
/* exp_slice_of_slice: shape (2, 2) */
static const double exp_slice_of_slice[] = {18, 16, 8, 6};
/* exp_slice_clamp: shape (2, 2) */
static const double exp_slice_clamp[] = {3, 4, 8, 9};
/* exp_concat_ax1: shape (2, 5) */
static const double exp_concat_ax1[] = {0, 1, 0, 0.5, 1, 2, 3, 1.5, 2, 2.5};
/* exp_concat_noncontig: shape (5, 4) */
static const double exp_concat_noncontig[] = {0, 5, 14, 19, 1, 6, 13, 18, 2, 7, 12, 17, 3, 8, 11, 16, 4, 9, 10, 15};
/* exp_stack_ax1: shape (2, 2, 2) */
static const double exp_stack_ax1[] = {0, 1, 0, 10, 2, 3, 20, 30};
/* exp_slice_update_bcast: shape (3, 4) */
static const double exp_slice_update_bcast[] = {0, 7, -2, 0, 0, 7, -2, 0, 0, 7, -2, 0};
/* exp_slice_update_neg: shape (3, 4) */
static const double exp_slice_update_neg[] = {0, 4, 2, 3, 4, 5, 6, 7, 8, 2, 10, 1};
/* exp_take_flat: shape (2, 2) */
static const double exp_take_flat[] = {0, 11, 5, 11};
/* exp_take_ax1: shape (3, 3) */
static const double exp_take_ax1[] = {2, 3, 0, 6, 7, 4, 10, 11, 8};
/* exp_take_ax0_T: shape (2, 1, 3) */
static const double exp_take_ax0_T[] = {3, 7, 11, 1, 5, 9};
/* exp_take_along: shape (3, 1) */
static const double exp_take_along[] = {1, 7, 8};
/* exp_take_along_b: shape (1, 4) */
static const double exp_take_along_b[] = {8, 1, 6, 11};
/* exp_pad_const: shape (3, 5) */
static const double exp_pad_const[] = {9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 3, 4, 5, 9, 9};
/* exp_pad_edge: shape (5, 6) */
static const double exp_pad_edge[] = {0, 0, 1, 2, 2, 2, 0, 0, 1, 2, 2, 2, 0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5, 3, 3, 4, 5, 5, 5};
/* exp_pad_reflect: shape (2, 12) */
static const double exp_pad_reflect[] = {0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 3, 4, 5, 4, 3, 4, 5, 4, 3, 4, 5, 4};
/* exp_pad_symmetric: shape (5, 10) */
static const double exp_pad_symmetric[] = {2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 5, 5, 4, 3, 3, 4, 5, 5, 4, 3, 5, 5, 4, 3, 3, 4, 5, 5, 4, 3, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0};
/* exp_tile: shape (2, 2, 6) */
static const double exp_tile[] = {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5};
/* exp_repeat_ax0: shape (4, 3) */
static const double exp_repeat_ax0[] = {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5};
/* exp_repeat_flat: shape (18,) */
static const double exp_repeat_flat[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5};
/* exp_roll_flat: shape (2, 3) */
static const double exp_roll_flat[] = {4, 5, 0, 1, 2, 3};
/* exp_roll_axes: shape (2, 3) */
static const double exp_roll_axes[] = {4, 5, 3, 1, 2, 0};
/* exp_roll_axis: shape (2, 3) */
static const double exp_roll_axis[] = {2, 0, 1, 5, 3, 4};
/* exp_as_strided: shape (4, 3) */
static const double exp_as_strided[] = {1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9};
/* exp_diag_vec_k1: shape (4, 4) */
static const double exp_diag_vec_k1[] = {0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0};
/* exp_diag_vec_km2: shape (5, 5) */
static const double exp_diag_vec_km2[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0};
/* exp_diag_mat_k1: shape (4,) */
static const double exp_diag_mat_k1[] = {1, 7, 13, 19};
/* exp_diagonal_3d: shape (3, 1) */
static const double exp_diagonal_3d[] = {12, 16, 20};
/* exp_tri: shape (3, 4) */
static const double exp_tri[] = {1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1};
/* exp_tril: shape (4, 5) */
static const double exp_tril[] = {0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 11, 12, 0, 0, 0, 16, 17, 18, 0, 0};
/* exp_triu: shape (4, 5) */
static const double exp_triu[] = {0, 2, 3, 4, 5, 0, 0, 8, 9, 10, 0, 0, 0, 14, 15, 0, 0, 0, 0, 20};
/* exp_triu_batch: shape (2, 3, 3) */
static const double exp_triu_batch[] = {0, 1, 2, 0, 4, 5, 0, 0, 8, 9, 10, 11, 0, 13, 14, 0, 0, 17};
/* exp_mesh_xy_x: shape (2, 3) */
static const double exp_mesh_xy_x[] = {1, 2, 3, 1, 2, 3};
/* exp_mesh_xy_y: shape (2, 3) */
static const double exp_mesh_xy_y[] = {10, 10, 10, 20, 20, 20};
/* exp_mesh_ij_x: shape (3, 2) */
static const double exp_mesh_ij_x[] = {1, 1, 2, 2, 3, 3};
/* exp_mesh_ij_y: shape (3, 2) */
static const double exp_mesh_ij_y[] = {10, 20, 10, 20, 10, 20};
/* exp_where: shape (2, 3) */
static const double exp_where[] = {1, 1.5, 1, 2, 1.5, 2};
/* exp_clip: shape (5,) */
static const double exp_clip[] = {-1, -0.5, 0.5, 1, 5};
/* exp_clip_max: shape (5,) */
static const double exp_clip_max[] = {-3, -0.5, 0.5, 1, 1};

/* ---- helpers ---- */

/* 0, 1, ..., size-1 in dtype dt, row-major, shaped. */
static mlx_array iota(mlx_dtype dt, int ndim, const int *shape)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    double v[256];
    assert_true(n <= N_(v));
    for (size_t i = 0; i < n; i++)
        v[i] = (double)i;
    mlx_array a = mlx_array_new_data(v, shape, ndim, MLX_FLOAT64);
    assert_non_null(a.ctx);
    if (dt != MLX_FLOAT64) {
        OK(mlx_astype(&a, a, dt, S));
        OK(mlx_array_eval(a));
    }
    return a;
}

static mlx_array from_ints(mlx_dtype dt, const int *vals, int ndim, const int *shape)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    double v[64];
    assert_true(n <= N_(v));
    for (size_t i = 0; i < n; i++)
        v[i] = vals[i];
    mlx_array a = mlx_array_new_data(v, shape, ndim, MLX_FLOAT64);
    OK(mlx_astype(&a, a, dt, S));
    OK(mlx_array_eval(a));
    return a;
}

/* Asserts shape and values (read through the strides, as doubles). */
static void expect_vals_at(mlx_array a, int ndim, const int *shape, const double *v, const char *file, int line)
{
    if (!tu_shape_is(a, ndim, shape)) {
        char got[256], want[256];
        mc_shape_str(got, sizeof got, (int)mlx_array_ndim(a), mlx_array_shape(a));
        mc_shape_str(want, sizeof want, ndim, shape);
        fail_msg("%s:%d: shape %s, expected %s", file, line, got, want);
    }
    size_t n = mlx_array_size(a);
    for (size_t i = 0; i < n; i++) {
        double g = tu_get(a, i);
        if (!(g == v[i]))
            fail_msg("%s:%d: element %zu is %g, expected %g", file, line, i, g, v[i]);
    }
}
#define EXPECT_VALS(a, shape_, v) expect_vals_at((a), (int)N_(shape_), (shape_), (v), __FILE__, __LINE__)
#define EXPECT_VALS0(a, v) expect_vals_at((a), 0, NULL, (v), __FILE__, __LINE__)

/* True if both (evaluated) arrays use the same buffer. */
static bool shares(mlx_array a, mlx_array b)
{
    OK(mlx_array_eval(a));
    OK(mlx_array_eval(b));
    return mc_arr(a)->buf == mc_arr(b)->buf;
}

static mlx_vector_array vec2(mlx_array a, mlx_array b)
{
    mlx_array v[2] = {a, b};
    return mlx_vector_array_new_data(v, 2);
}

static mlx_array vget(mlx_vector_array v, size_t i)
{
    mlx_array a = mlx_array_new();
    OK(mlx_vector_array_get(&a, v, i));
    return a;
}

/* ---- flatten, unflatten, transposes ---- */

static void test_flatten_merges_axes_and_views_contiguous_input(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT32, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    OK(mlx_flatten(&y, x, 1, 2, S));
    assert_true(tu_shape_is(y, 2, SHAPE(2, 12)));
    for (size_t i = 0; i < 24; i++)
        assert_int_equal((int)tu_get(y, i), (int)i);
    assert_true(shares(x, y));
    OK(mlx_flatten(&y, x, 0, -1, S));
    assert_true(tu_shape_is(y, 1, SHAPE(24)));
    /* a 0-d array flattens to one element */
    mlx_array z = mlx_array_new_float(2.5f);
    OK(mlx_flatten(&y, z, 0, -1, S));
    EXPECT_VALS(y, SHAPE(1), ((const double[]){2.5}));
    TU_FREE(x, y, z);
}

static void test_flatten_of_transposed_input_copies_in_logical_order(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT32, 3, SHAPE(2, 3, 4)), t = mlx_array_new(), y = mlx_array_new();
    OK(mlx_transpose_axes(&t, x, SHAPE(2, 0, 1), 3, S));
    OK(mlx_flatten(&y, t, 1, 2, S));
    EXPECT_VALS(y, SHAPE(4, 6), exp_flatten_t);
    assert_false(shares(x, y));
    TU_FREE(x, t, y);
}

static void test_flatten_with_reversed_axes_fails(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT32, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_flatten(&y, x, 2, 1, S), "[flatten]");
    EXPECT_FAIL(y, mlx_flatten(&y, x, 5, 7, S), "[flatten]");
    TU_FREE(x, y);
}

static void test_unflatten_splits_one_axis_inferring_minus_one(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT16, 2, SHAPE(2, 12)), y = mlx_array_new();
    OK(mlx_unflatten(&y, x, -1, SHAPE(3, -1), 2, S));
    assert_true(tu_shape_is(y, 3, SHAPE(2, 3, 4)));
    for (size_t i = 0; i < 24; i++)
        assert_int_equal((int)tu_get(y, i), (int)i);
    assert_true(shares(x, y));
    TU_FREE(x, y);
}

static void test_unflatten_bad_shapes_fail(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT32, 2, SHAPE(2, 12)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_unflatten(&y, x, 1, SHAPE(5, 3), 2, S), "[unflatten]");
    EXPECT_FAIL(y, mlx_unflatten(&y, x, 1, SHAPE(-1, -1), 2, S), "[unflatten]");
    EXPECT_FAIL(y, mlx_unflatten(&y, x, 1, SHAPE(5, -1), 2, S), "[unflatten]");
    EXPECT_FAIL(y, mlx_unflatten(&y, x, 2, SHAPE(3, 4), 2, S), "[unflatten]");
    EXPECT_FAIL(y, mlx_unflatten(&y, x, 1, NULL, 0, S), "[unflatten]");
    TU_FREE(x, y);
}

static void test_transpose_axes_is_a_view_with_numpy_order(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT32, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    OK(mlx_transpose_axes(&y, x, SHAPE(1, -3, 2), 3, S));
    EXPECT_VALS(y, SHAPE(3, 2, 4), exp_transpose_102);
    assert_true(shares(x, y));
    TU_FREE(x, y);
}

static void test_transpose_axes_bad_axes_fail(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT32, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_transpose_axes(&y, x, SHAPE(1, 0), 2, S), "[transpose]");
    EXPECT_FAIL(y, mlx_transpose_axes(&y, x, SHAPE(1, 1, 0), 3, S), "[transpose]");
    EXPECT_FAIL(y, mlx_transpose_axes(&y, x, SHAPE(0, 1, 3), 3, S), "[transpose]");
    TU_FREE(x, y);
}

static void test_swapaxes_and_moveaxis_match_numpy(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT64, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    OK(mlx_swapaxes(&y, x, 0, -1, S));
    EXPECT_VALS(y, SHAPE(4, 3, 2), exp_swap_02);
    assert_true(shares(x, y));
    OK(mlx_moveaxis(&y, x, 0, -1, S));
    EXPECT_VALS(y, SHAPE(3, 4, 2), exp_move_0_m1);
    assert_true(shares(x, y));
    EXPECT_FAIL(y, mlx_swapaxes(&y, x, 0, 3, S), "[swapaxes]");
    EXPECT_FAIL(y, mlx_moveaxis(&y, x, -4, 0, S), "[moveaxis]");
    TU_FREE(x, y);
}

/* ---- expand_dims, squeeze, atleast ---- */

static void test_expand_dims_inserts_axes_as_a_view(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_UINT8, 2, SHAPE(2, 3)), y = mlx_array_new();
    OK(mlx_expand_dims(&y, x, -1, S));
    assert_true(tu_shape_is(y, 3, SHAPE(2, 3, 1)));
    assert_true(shares(x, y));
    OK(mlx_expand_dims_axes(&y, x, SHAPE(3, 0), 2, S));
    assert_true(tu_shape_is(y, 4, SHAPE(1, 2, 3, 1)));
    for (size_t i = 0; i < 6; i++)
        assert_int_equal((int)tu_get(y, i), (int)i);
    assert_true(shares(x, y));
    /* a 0-d array */
    mlx_array z = mlx_array_new_int(7);
    OK(mlx_expand_dims(&y, z, 0, S));
    EXPECT_VALS(y, SHAPE(1), ((const double[]){7}));
    TU_FREE(x, y, z);
}

static void test_expand_dims_bad_axes_fail(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_UINT8, 2, SHAPE(2, 3)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_expand_dims(&y, x, 3, S), "[expand_dims]");
    EXPECT_FAIL(y, mlx_expand_dims_axes(&y, x, SHAPE(1, -3), 2, S), "[expand_dims]");
    TU_FREE(x, y);
}

static void test_squeeze_removes_unit_axes_as_a_view(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT64, 4, SHAPE(1, 3, 1, 2)), y = mlx_array_new();
    OK(mlx_squeeze(&y, x, S));
    assert_true(tu_shape_is(y, 2, SHAPE(3, 2)));
    assert_true(shares(x, y));
    OK(mlx_squeeze_axis(&y, x, -2, S));
    assert_true(tu_shape_is(y, 3, SHAPE(1, 3, 2)));
    OK(mlx_squeeze_axes(&y, x, SHAPE(2, 0), 2, S));
    assert_true(tu_shape_is(y, 2, SHAPE(3, 2)));
    for (size_t i = 0; i < 6; i++)
        assert_int_equal((int)tu_get(y, i), (int)i);
    TU_FREE(x, y);
}

static void test_squeeze_of_non_unit_or_repeated_axis_fails(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT64, 4, SHAPE(1, 3, 1, 2)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_squeeze_axis(&y, x, 1, S), "[squeeze] Cannot squeeze axis 1 with size 3");
    EXPECT_FAIL(y, mlx_squeeze_axes(&y, x, SHAPE(0, -4), 2, S), "[squeeze] Received duplicate axes");
    EXPECT_FAIL(y, mlx_squeeze_axis(&y, x, 4, S), "[squeeze]");
    TU_FREE(x, y);
}

static void test_atleast_adds_leading_and_trailing_axes(void **state)
{
    (void)state;
    mlx_array z = mlx_array_new_float(1.0f), v = iota(MLX_INT32, 1, SHAPE(3)), m = iota(MLX_INT32, 2, SHAPE(2, 3));
    mlx_array y = mlx_array_new();
    OK(mlx_atleast_1d(&y, z, S));
    assert_true(tu_shape_is(y, 1, SHAPE(1)));
    OK(mlx_atleast_2d(&y, v, S));
    assert_true(tu_shape_is(y, 2, SHAPE(1, 3)));
    OK(mlx_atleast_3d(&y, v, S));
    assert_true(tu_shape_is(y, 3, SHAPE(1, 3, 1)));
    OK(mlx_atleast_3d(&y, m, S));
    assert_true(tu_shape_is(y, 3, SHAPE(2, 3, 1)));
    OK(mlx_atleast_3d(&y, z, S));
    assert_true(tu_shape_is(y, 3, SHAPE(1, 1, 1)));
    OK(mlx_atleast_2d(&y, m, S));
    assert_ptr_equal(y.ctx, m.ctx);
    TU_FREE(z, v, m, y);
}

/* ---- broadcast_arrays, concatenate, stack, split ---- */

static void test_broadcast_arrays_gives_common_shape_views(void **state)
{
    (void)state;
    mlx_array a = iota(MLX_FLOAT32, 2, SHAPE(3, 1)), b = iota(MLX_INT8, 1, SHAPE(4));
    mlx_vector_array in = vec2(a, b), out = mlx_vector_array_new();
    OK(mlx_broadcast_arrays(&out, in, S));
    assert_int_equal(mlx_vector_array_size(out), 2);
    mlx_array a2 = vget(out, 0), b2 = vget(out, 1);
    assert_true(tu_shape_is(a2, 2, SHAPE(3, 4)));
    assert_true(tu_shape_is(b2, 2, SHAPE(3, 4)));
    assert_int_equal(mlx_array_dtype(b2), MLX_INT8);
    assert_true(shares(a, a2));
    assert_int_equal((int)tu_get(a2, 7), 1);
    assert_int_equal((int)tu_get(b2, 7), 3);
    mlx_array c = iota(MLX_FLOAT32, 1, SHAPE(2));
    mlx_vector_array bad = vec2(b, c);
    void *before = out.ctx;
    assert_int_not_equal(mlx_broadcast_arrays(&out, bad, S), 0);
    tu_expect_error("[broadcast_arrays]");
    assert_ptr_equal(out.ctx, before);
    mlx_vector_array_free(bad);
    TU_FREE(a, b, a2, b2, c);
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
}

static void test_concatenate_promotes_and_joins_on_axis(void **state)
{
    (void)state;
    mlx_array a = iota(MLX_INT32, 2, SHAPE(2, 2)), b = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), h = mlx_array_new(),
              y = mlx_array_new();
    OK(mlx_array_set_float(&h, 0.5f));
    OK(mlx_multiply(&b, b, h, S));
    mlx_vector_array v = vec2(a, b);
    OK(mlx_concatenate_axis(&y, v, -1, S));
    assert_int_equal(mlx_array_dtype(y), MLX_FLOAT32);
    EXPECT_VALS(y, SHAPE(2, 5), exp_concat_ax1);
    /* without an axis the inputs are flattened */
    OK(mlx_concatenate(&y, v, S));
    assert_true(tu_shape_is(y, 1, SHAPE(10)));
    assert_true(tu_get(y, 9) == 2.5);
    mlx_vector_array_free(v);
    TU_FREE(a, b, h, y);
}

static void test_concatenate_reads_transposed_and_reversed_inputs(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_INT64, 2, SHAPE(4, 5)), t = mlx_array_new(), p1 = mlx_array_new(),
              p2 = mlx_array_new(), y = mlx_array_new();
    OK(mlx_transpose(&t, m, S));
    OK(mlx_slice(&p1, t, SHAPE(0, 0), 2, SHAPE(5, 2), 2, SHAPE(1, 1), 2, S));
    OK(mlx_slice(&p2, t, SHAPE(4, 2), 2, SHAPE(-6, 4), 2, SHAPE(-1, 1), 2, S));
    mlx_vector_array v = vec2(p1, p2);
    OK(mlx_concatenate_axis(&y, v, 1, S));
    EXPECT_VALS(y, SHAPE(5, 4), exp_concat_noncontig);
    mlx_vector_array_free(v);
    TU_FREE(m, t, p1, p2, y);
}

static void test_concatenate_with_empty_and_bool_inputs(void **state)
{
    (void)state;
    mlx_array e = iota(MLX_BOOL, 2, SHAPE(0, 3)), y = mlx_array_new();
    mlx_array b = from_ints(MLX_BOOL, (const int[]){1, 0, 1}, 2, SHAPE(1, 3));
    mlx_vector_array v = vec2(e, b);
    OK(mlx_concatenate_axis(&y, v, 0, S));
    assert_int_equal(mlx_array_dtype(y), MLX_BOOL);
    EXPECT_VALS(y, SHAPE(1, 3), ((const double[]){1, 0, 1}));
    mlx_vector_array_free(v);
    /* bool with int8 promotes to int8 */
    mlx_array i8 = from_ints(MLX_INT8, (const int[]){-5, 6, -7}, 2, SHAPE(1, 3));
    v = vec2(b, i8);
    OK(mlx_concatenate_axis(&y, v, 0, S));
    assert_int_equal(mlx_array_dtype(y), MLX_INT8);
    EXPECT_VALS(y, SHAPE(2, 3), ((const double[]){1, 0, 1, -5, 6, -7}));
    mlx_vector_array_free(v);
    TU_FREE(e, b, y, i8);
}

static void test_concatenate_bad_inputs_fail(void **state)
{
    (void)state;
    mlx_array a = iota(MLX_INT32, 2, SHAPE(2, 2)), b = iota(MLX_INT32, 2, SHAPE(3, 3)), c = iota(MLX_INT32, 1, SHAPE(4)),
              y = mlx_array_new();
    mlx_vector_array v = vec2(a, b), w = vec2(a, c), none = mlx_vector_array_new();
    EXPECT_FAIL(y, mlx_concatenate_axis(&y, v, 0, S), "[concatenate] All the input array dimensions must match");
    EXPECT_FAIL(y, mlx_concatenate_axis(&y, w, 0, S), "[concatenate] All the input arrays must have the same number");
    EXPECT_FAIL(y, mlx_concatenate_axis(&y, v, 2, S), "[concatenate] Axis 2 is out of bounds");
    EXPECT_FAIL(y, mlx_concatenate_axis(&y, none, 0, S), "[concatenate] No arrays");
    EXPECT_FAIL(y, mlx_concatenate(&y, none, S), "[concatenate] No arrays");
    mlx_vector_array_free(v);
    mlx_vector_array_free(w);
    mlx_vector_array_free(none);
    TU_FREE(a, b, c, y);
}

static void test_stack_joins_on_a_new_axis(void **state)
{
    (void)state;
    mlx_array a = iota(MLX_INT32, 2, SHAPE(2, 2)), ten = mlx_array_new_int(10), b = mlx_array_new(), y = mlx_array_new();
    OK(mlx_multiply(&b, a, ten, S));
    mlx_vector_array v = vec2(a, b);
    OK(mlx_stack_axis(&y, v, 1, S));
    EXPECT_VALS(y, SHAPE(2, 2, 2), exp_stack_ax1);
    OK(mlx_stack(&y, v, S));
    assert_true(tu_shape_is(y, 3, SHAPE(2, 2, 2)));
    assert_int_equal((int)tu_get(y, 7), 30);
    mlx_vector_array_free(v);
    mlx_array c = iota(MLX_INT32, 2, SHAPE(2, 3));
    v = vec2(a, c);
    EXPECT_FAIL(y, mlx_stack(&y, v, S), "[stack] All arrays must have the same shape");
    mlx_vector_array_free(v);
    v = vec2(a, a);
    EXPECT_FAIL(y, mlx_stack_axis(&y, v, 3, S), "[stack]");
    mlx_vector_array_free(v);
    TU_FREE(a, ten, b, c, y);
}

static void test_split_gives_equal_views(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT32, 2, SHAPE(2, 6));
    mlx_vector_array out = mlx_vector_array_new();
    OK(mlx_split(&out, x, 3, -1, S));
    assert_int_equal(mlx_vector_array_size(out), 3);
    for (size_t k = 0; k < 3; k++) {
        mlx_array p = vget(out, k);
        EXPECT_VALS(p, SHAPE(2, 2), ((const double[]){2.0 * k, 2.0 * k + 1, 2.0 * k + 6, 2.0 * k + 7}));
        assert_true(shares(x, p));
        mlx_array_free(p);
    }
    EXPECT_FAIL(out, mlx_split(&out, x, 4, 1, S), "[split] Array split does not result in sub arrays with equal size");
    EXPECT_FAIL(out, mlx_split(&out, x, 0, 1, S), "[split] num_splits must be positive");
    EXPECT_FAIL(out, mlx_split(&out, x, 2, 2, S), "[split] Axis 2 is out of bounds");
    assert_int_equal(mlx_vector_array_size(out), 3);
    mlx_vector_array_free(out);
    mlx_array_free(x);
}

static void test_split_sections_cut_at_indices(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT32, 1, SHAPE(6));
    mlx_vector_array out = mlx_vector_array_new();
    OK(mlx_split_sections(&out, x, SHAPE(1, 4), 2, 0, S));
    assert_int_equal(mlx_vector_array_size(out), 3);
    mlx_array p0 = vget(out, 0), p1 = vget(out, 1), p2 = vget(out, 2);
    EXPECT_VALS(p0, SHAPE(1), ((const double[]){0}));
    EXPECT_VALS(p1, SHAPE(3), ((const double[]){1, 2, 3}));
    EXPECT_VALS(p2, SHAPE(2), ((const double[]){4, 5}));
    /* negative indices count from the end; no indices give the array */
    OK(mlx_split_sections(&out, x, SHAPE(-2), 1, 0, S));
    mlx_array q = vget(out, 1);
    EXPECT_VALS(q, SHAPE(2), ((const double[]){4, 5}));
    OK(mlx_split_sections(&out, x, NULL, 0, 0, S));
    assert_int_equal(mlx_vector_array_size(out), 1);
    mlx_vector_array_free(out);
    TU_FREE(x, p0, p1, p2, q);
}

/* ---- slice, slice_update ---- */

static void test_slice_with_negative_steps_is_a_view(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_FLOAT32, 2, SHAPE(4, 5)), y = mlx_array_new(), z = mlx_array_new();
    OK(mlx_slice(&y, m, SHAPE(3, 4), 2, SHAPE(0, -6), 2, SHAPE(-2, -1), 2, S));
    EXPECT_VALS(y, SHAPE(2, 5), exp_slice_neg);
    assert_true(shares(m, y));
    /* a slice of that view */
    OK(mlx_slice(&z, y, SHAPE(0, 1), 2, SHAPE(2, 4), 2, SHAPE(1, 2), 2, S));
    EXPECT_VALS(z, SHAPE(2, 2), exp_slice_of_slice);
    assert_true(shares(m, z));
    /* out-of-range bounds clamp */
    OK(mlx_slice(&y, m, SHAPE(-10, 3), 2, SHAPE(2, 100), 2, SHAPE(1, 1), 2, S));
    EXPECT_VALS(y, SHAPE(2, 2), exp_slice_clamp);
    /* an empty slice, and the whole array (returned as is) */
    OK(mlx_slice(&y, m, SHAPE(3, 0), 2, SHAPE(1, 5), 2, SHAPE(1, 1), 2, S));
    assert_true(tu_shape_is(y, 2, SHAPE(0, 5)));
    OK(mlx_array_eval(y));
    OK(mlx_slice(&y, m, SHAPE(0, 0), 2, SHAPE(4, 5), 2, SHAPE(1, 1), 2, S));
    assert_ptr_equal(y.ctx, m.ctx);
    TU_FREE(m, y, z);
}

static void test_slice_bad_arguments_fail(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_FLOAT32, 2, SHAPE(4, 5)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_slice(&y, m, SHAPE(0), 1, SHAPE(1), 1, SHAPE(1), 1, S), "[slice] Invalid number of indices");
    EXPECT_FAIL(y, mlx_slice(&y, m, SHAPE(0, 0), 2, SHAPE(1, 1), 2, SHAPE(1, 0), 2, S), "[slice] Slice step cannot be zero");
    TU_FREE(m, y);
}

static void test_slice_update_casts_and_broadcasts_the_update(void **state)
{
    (void)state;
    mlx_array src = mlx_array_new(), y = mlx_array_new();
    OK(mlx_zeros(&src, SHAPE(3, 4), 2, MLX_INT32, S));
    double uv[2] = {7.9, -2.5};
    mlx_array upd = mlx_array_new_data(uv, SHAPE(2), 1, MLX_FLOAT64);
    OK(mlx_slice_update(&y, src, upd, SHAPE(0, 1), 2, SHAPE(3, 3), 2, SHAPE(1, 1), 2, S));
    assert_int_equal(mlx_array_dtype(y), MLX_INT32);
    EXPECT_VALS(y, SHAPE(3, 4), exp_slice_update_bcast);
    /* src itself is unchanged */
    assert_int_equal((int)tu_get(src, 1), 0);
    TU_FREE(src, y, upd);
}

static void test_slice_update_with_negative_steps(void **state)
{
    (void)state;
    mlx_array src = iota(MLX_FLOAT32, 2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array upd = iota(MLX_FLOAT32, 2, SHAPE(2, 2)), one = mlx_array_new_float(1.0f);
    OK(mlx_add(&upd, upd, one, S));
    OK(mlx_slice_update(&y, src, upd, SHAPE(2, 3), 2, SHAPE(-4, 0), 2, SHAPE(-2, -2), 2, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_slice_update_neg);
    TU_FREE(src, y, upd, one);
}

static void test_slice_update_with_a_view_of_src_reads_before_writing(void **state)
{
    (void)state;
    /* the update is a reversed view of the same buffer as src */
    mlx_array src = iota(MLX_INT32, 1, SHAPE(6)), rev = mlx_array_new(), y = mlx_array_new();
    OK(mlx_slice(&rev, src, SHAPE(5), 1, SHAPE(2), 1, SHAPE(-1), 1, S));
    OK(mlx_slice_update(&y, src, rev, SHAPE(0), 1, SHAPE(6), 1, SHAPE(2), 1, S));
    EXPECT_VALS(y, SHAPE(6), ((const double[]){5, 1, 4, 3, 3, 5}));
    EXPECT_VALS(src, SHAPE(6), ((const double[]){0, 1, 2, 3, 4, 5}));
    TU_FREE(src, rev, y);
}

static void test_slice_update_mismatched_update_fails(void **state)
{
    (void)state;
    mlx_array src = iota(MLX_FLOAT32, 2, SHAPE(3, 4)), upd = iota(MLX_FLOAT32, 1, SHAPE(3)), y = mlx_array_new();
    EXPECT_FAIL(y, mlx_slice_update(&y, src, upd, SHAPE(0, 0), 2, SHAPE(3, 2), 2, SHAPE(1, 1), 2, S),
                "[slice_update]");
    EXPECT_FAIL(y, mlx_slice_update(&y, src, upd, SHAPE(0), 1, SHAPE(3), 1, SHAPE(1), 1, S), "[slice_update]");
    TU_FREE(src, upd, y);
}

/* ---- take, take_along_axis ---- */

static void test_take_from_flattened_array_with_negative_indices(void **state)
{
    (void)state;
    mlx_array t = iota(MLX_FLOAT32, 2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = from_ints(MLX_INT32, (const int[]){0, -1, 5, 11}, 2, SHAPE(2, 2));
    OK(mlx_take(&y, t, idx, S));
    EXPECT_VALS(y, SHAPE(2, 2), exp_take_flat);
    TU_FREE(t, y, idx);
}

static void test_take_axis_with_each_index_dtype(void **state)
{
    (void)state;
    mlx_array t = iota(MLX_FLOAT32, 2, SHAPE(3, 4)), y = mlx_array_new();
    const mlx_dtype sig[] = {MLX_INT8, MLX_INT16, MLX_INT32, MLX_INT64};
    for (size_t i = 0; i < N_(sig); i++) {
        mlx_array idx = from_ints(sig[i], (const int[]){2, -1, 0}, 1, SHAPE(3));
        OK(mlx_take_axis(&y, t, idx, 1, S));
        EXPECT_VALS(y, SHAPE(3, 3), exp_take_ax1);
        mlx_array_free(idx);
    }
    const mlx_dtype uns[] = {MLX_UINT8, MLX_UINT16, MLX_UINT32, MLX_UINT64};
    for (size_t i = 0; i < N_(uns); i++) {
        mlx_array idx = from_ints(uns[i], (const int[]){2, 3, 0}, 1, SHAPE(3));
        OK(mlx_take_axis(&y, t, idx, -1, S));
        EXPECT_VALS(y, SHAPE(3, 3), ((const double[]){2, 3, 0, 6, 7, 4, 10, 11, 8}));
        mlx_array_free(idx);
    }
    TU_FREE(t, y);
}

static void test_take_axis_of_transposed_input(void **state)
{
    (void)state;
    mlx_array t = iota(MLX_FLOAT32, 2, SHAPE(3, 4)), tt = mlx_array_new(), y = mlx_array_new();
    OK(mlx_transpose(&tt, t, S));
    mlx_array idx = from_ints(MLX_INT32, (const int[]){3, 1}, 2, SHAPE(2, 1));
    OK(mlx_take_axis(&y, tt, idx, 0, S));
    EXPECT_VALS(y, SHAPE(2, 1, 3), exp_take_ax0_T);
    TU_FREE(t, tt, y, idx);
}

static void test_take_moves_every_element_size(void **state)
{
    (void)state;
    /* 1, 2, 4 and 8 byte elements: bool, float16, int32, complex64 */
    const mlx_dtype dts[] = {MLX_BOOL, MLX_INT8, MLX_FLOAT16, MLX_BFLOAT16, MLX_UINT32, MLX_FLOAT64, MLX_COMPLEX64};
    mlx_array idx = from_ints(MLX_INT32, (const int[]){3, 0, 2}, 1, SHAPE(3)), y = mlx_array_new();
    for (size_t i = 0; i < N_(dts); i++) {
        mlx_array x = iota(dts[i], 1, SHAPE(4));
        OK(mlx_take(&y, x, idx, S));
        assert_int_equal(mlx_array_dtype(y), dts[i]);
        double want[3] = {3, 0, 2};
        if (dts[i] == MLX_BOOL)
            want[0] = 1, want[2] = 1;
        EXPECT_VALS(y, SHAPE(3), want);
        mlx_array_free(x);
    }
    TU_FREE(idx, y);
}

static void test_take_out_of_range_index_is_clamped(void **state)
{
    (void)state;
    /* MLX does not check; we clamp into the axis so nothing outside a is read */
    mlx_array t = iota(MLX_INT32, 1, SHAPE(4)), y = mlx_array_new();
    mlx_array idx = from_ints(MLX_INT64, (const int[]){100, -100, 4, -5}, 1, SHAPE(4));
    OK(mlx_take(&y, t, idx, S));
    EXPECT_VALS(y, SHAPE(4), ((const double[]){3, 0, 3, 0}));
    TU_FREE(t, y, idx);
}

static void test_take_with_empty_indices_and_0d_index(void **state)
{
    (void)state;
    mlx_array t = iota(MLX_INT32, 2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array e = iota(MLX_INT32, 1, SHAPE(0)), s0 = mlx_array_new_int(-2);
    OK(mlx_take_axis(&y, t, e, 0, S));
    assert_true(tu_shape_is(y, 2, SHAPE(0, 4)));
    OK(mlx_array_eval(y));
    OK(mlx_take_axis(&y, t, s0, 1, S));
    EXPECT_VALS(y, SHAPE(3), ((const double[]){2, 6, 10}));
    /* an empty axis allows only an empty take */
    mlx_array ea = iota(MLX_INT32, 2, SHAPE(0, 2));
    OK(mlx_take_axis(&y, ea, e, 0, S));
    assert_true(tu_shape_is(y, 2, SHAPE(0, 2)));
    EXPECT_FAIL(y, mlx_take_axis(&y, ea, s0, 0, S), "[take] Cannot do a non-empty take from an empty axis");
    TU_FREE(t, y, e, s0, ea);
}

static void test_take_with_float_or_bool_indices_fails(void **state)
{
    (void)state;
    mlx_array t = iota(MLX_INT32, 2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array f = iota(MLX_FLOAT32, 1, SHAPE(2)), b = iota(MLX_BOOL, 1, SHAPE(2));
    EXPECT_FAIL(y, mlx_take(&y, t, f, S), "[take] Got indices with invalid dtype");
    EXPECT_FAIL(y, mlx_take_axis(&y, t, b, 0, S), "[take] Boolean indices not supported");
    EXPECT_FAIL(y, mlx_take_along_axis(&y, t, f, 0, S), "[take_along_axis] Indices of dimension");
    mlx_array f2 = iota(MLX_FLOAT32, 2, SHAPE(1, 2));
    EXPECT_FAIL(y, mlx_take_along_axis(&y, t, f2, 0, S), "[take_along_axis] Got indices with invalid dtype");
    EXPECT_FAIL(y, mlx_take_axis(&y, t, b, 2, S), "[take] Received invalid axis 2");
    TU_FREE(t, y, f, b, f2);
}

static void test_take_along_axis_broadcasts_indices(void **state)
{
    (void)state;
    mlx_array t = iota(MLX_FLOAT32, 2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array i1 = from_ints(MLX_INT32, (const int[]){1, 3, 0}, 2, SHAPE(3, 1));
    OK(mlx_take_along_axis(&y, t, i1, 1, S));
    EXPECT_VALS(y, SHAPE(3, 1), exp_take_along);
    mlx_array i2 = from_ints(MLX_UINT8, (const int[]){2, 0, 1, 2}, 2, SHAPE(1, 4));
    OK(mlx_take_along_axis(&y, t, i2, -2, S));
    EXPECT_VALS(y, SHAPE(1, 4), exp_take_along_b);
    mlx_array i3 = from_ints(MLX_INT32, (const int[]){0, 1}, 2, SHAPE(2, 1));
    EXPECT_FAIL(y, mlx_take_along_axis(&y, t, i3, 1, S), "[take_along_axis]");
    TU_FREE(t, y, i1, i2, i3);
}

/* ---- pad ---- */

static void test_pad_constant_casts_the_value(void **state)
{
    (void)state;
    mlx_array p = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), nine = mlx_array_new_int(9), y = mlx_array_new();
    OK(mlx_pad(&y, p, SHAPE(0, 1), 2, SHAPE(1, 0), 2, SHAPE(0, 2), 2, nine, "constant", S));
    assert_int_equal(mlx_array_dtype(y), MLX_FLOAT32);
    EXPECT_VALS(y, SHAPE(3, 5), exp_pad_const);
    /* a transposed input, padded on one axis */
    mlx_array t = mlx_array_new();
    OK(mlx_transpose(&t, p, S));
    OK(mlx_pad(&y, t, SHAPE(-1), 1, SHAPE(1), 1, SHAPE(0), 1, nine, "constant", S));
    EXPECT_VALS(y, SHAPE(3, 3), ((const double[]){9, 0, 3, 9, 1, 4, 9, 2, 5}));
    /* a 0-d array with no axes is copied */
    mlx_array z = mlx_array_new_int(4);
    OK(mlx_pad(&y, z, NULL, 0, NULL, 0, NULL, 0, nine, "constant", S));
    EXPECT_VALS0(y, ((const double[]){4}));
    TU_FREE(p, nine, y, t, z);
}

static void test_pad_edge_reflect_symmetric_match_numpy(void **state)
{
    (void)state;
    mlx_array p = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), zero = mlx_array_new_float(0), y = mlx_array_new();
    OK(mlx_pad(&y, p, SHAPE(0, 1), 2, SHAPE(2, 1), 2, SHAPE(1, 2), 2, zero, "edge", S));
    EXPECT_VALS(y, SHAPE(5, 6), exp_pad_edge);
    OK(mlx_pad(&y, p, SHAPE(1), 1, SHAPE(4), 1, SHAPE(5), 1, zero, "reflect", S));
    EXPECT_VALS(y, SHAPE(2, 12), exp_pad_reflect);
    OK(mlx_pad(&y, p, SHAPE(0, 1), 2, SHAPE(1, 4), 2, SHAPE(2, 3), 2, zero, "symmetric", S));
    EXPECT_VALS(y, SHAPE(5, 10), exp_pad_symmetric);
    TU_FREE(p, zero, y);
}

static void test_pad_bad_arguments_fail(void **state)
{
    (void)state;
    mlx_array p = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), zero = mlx_array_new_float(0), y = mlx_array_new();
    mlx_array two = iota(MLX_FLOAT32, 1, SHAPE(2)), e = iota(MLX_FLOAT32, 2, SHAPE(0, 3));
    EXPECT_FAIL(y, mlx_pad(&y, p, SHAPE(0), 1, SHAPE(1, 1), 2, SHAPE(1), 1, zero, "constant", S),
                "[pad] Invalid number of padding sizes");
    EXPECT_FAIL(y, mlx_pad(&y, p, SHAPE(0), 1, SHAPE(-1), 1, SHAPE(1), 1, zero, "constant", S),
                "[pad] Invalid low padding size (-1)");
    EXPECT_FAIL(y, mlx_pad(&y, p, SHAPE(2), 1, SHAPE(1), 1, SHAPE(1), 1, zero, "constant", S), "[pad] Axis 2");
    EXPECT_FAIL(y, mlx_pad(&y, p, SHAPE(1, -1), 2, SHAPE(1, 1), 2, SHAPE(1, 1), 2, zero, "constant", S),
                "[pad] Received duplicate axes");
    EXPECT_FAIL(y, mlx_pad(&y, p, SHAPE(0), 1, SHAPE(1), 1, SHAPE(1), 1, zero, "wrap", S),
                "[pad] Invalid padding mode (wrap)");
    EXPECT_FAIL(y, mlx_pad(&y, p, SHAPE(0), 1, SHAPE(1), 1, SHAPE(1), 1, two, "constant", S), "[pad]");
    EXPECT_FAIL(y, mlx_pad(&y, e, SHAPE(0), 1, SHAPE(1), 1, SHAPE(1), 1, zero, "reflect", S),
                "[pad] Cannot pad empty axis 0");
    TU_FREE(p, zero, y, two, e);
}

/* Pad's one shape check is its infer's: a padded axis past INT_MAX is
 * refused in every mode, on a lazy broadcast that never allocates. */
static void test_pad_past_the_largest_dimension_fails(void **state)
{
    (void)state;
    mlx_array one = mlx_array_new_float(1), zero = mlx_array_new_float(0), big = mlx_array_new(),
              y = mlx_array_new();
    OK(mlx_broadcast_to(&big, one, SHAPE(INT_MAX - 2), 1, S));
    EXPECT_FAIL(y, mlx_pad(&y, big, SHAPE(0), 1, SHAPE(1), 1, SHAPE(2), 1, zero, "constant", S),
                "[pad] The padded axis 0 would have 2147483648 elements");
    EXPECT_FAIL(y, mlx_pad(&y, big, SHAPE(0), 1, SHAPE(2), 1, SHAPE(1), 1, zero, "edge", S),
                "[pad] The padded axis 0 would have 2147483648 elements");
    OK(mlx_pad(&y, big, SHAPE(0), 1, SHAPE(1), 1, SHAPE(1), 1, zero, "constant", S));
    assert_true(tu_shape_is(y, 1, SHAPE(INT_MAX)));
    TU_FREE(one, zero, big, y);
}

/* ---- tile, repeat, roll ---- */

static void test_tile_repeats_the_whole_array(void **state)
{
    (void)state;
    mlx_array p = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), y = mlx_array_new();
    OK(mlx_tile(&y, p, SHAPE(2, 1, 2), 3, S));
    EXPECT_VALS(y, SHAPE(2, 2, 6), exp_tile);
    OK(mlx_tile(&y, p, SHAPE(0), 1, S));
    assert_true(tu_shape_is(y, 2, SHAPE(2, 0)));
    OK(mlx_array_eval(y));
    EXPECT_FAIL(y, mlx_tile(&y, p, SHAPE(-1), 1, S), "[tile]");
    TU_FREE(p, y);
}

static void test_repeat_each_element(void **state)
{
    (void)state;
    mlx_array p = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), y = mlx_array_new();
    OK(mlx_repeat_axis(&y, p, 2, 0, S));
    EXPECT_VALS(y, SHAPE(4, 3), exp_repeat_ax0);
    OK(mlx_repeat(&y, p, 3, S));
    EXPECT_VALS(y, SHAPE(18), exp_repeat_flat);
    OK(mlx_repeat_axis(&y, p, 0, 1, S));
    assert_true(tu_shape_is(y, 2, SHAPE(2, 0)));
    OK(mlx_array_eval(y));
    OK(mlx_repeat_axis(&y, p, 1, 1, S));
    assert_ptr_equal(y.ctx, p.ctx);
    EXPECT_FAIL(y, mlx_repeat_axis(&y, p, -1, 0, S), "[repeat] Number of repeats cannot be negative");
    EXPECT_FAIL(y, mlx_repeat_axis(&y, p, 2, 2, S), "[repeat] Axis 2 is out of bounds");
    TU_FREE(p, y);
}

static void test_roll_flat_and_per_axis(void **state)
{
    (void)state;
    mlx_array p = iota(MLX_FLOAT32, 2, SHAPE(2, 3)), y = mlx_array_new();
    OK(mlx_roll(&y, p, SHAPE(2), 1, S));
    EXPECT_VALS(y, SHAPE(2, 3), exp_roll_flat);
    OK(mlx_roll(&y, p, SHAPE(5, -3), 2, S));
    EXPECT_VALS(y, SHAPE(2, 3), exp_roll_flat);
    OK(mlx_roll_axes(&y, p, SHAPE(1, -1), 2, SHAPE(0, 1), 2, S));
    EXPECT_VALS(y, SHAPE(2, 3), exp_roll_axes);
    OK(mlx_roll_axis(&y, p, SHAPE(1, 3), 2, 1, S));
    EXPECT_VALS(y, SHAPE(2, 3), exp_roll_axis);
    OK(mlx_roll_axis(&y, p, SHAPE(-6), 1, 1, S));
    EXPECT_VALS(y, SHAPE(2, 3), ((const double[]){0, 1, 2, 3, 4, 5}));
    EXPECT_FAIL(y, mlx_roll_axes(&y, p, SHAPE(1), 1, SHAPE(0, 1), 2, S), "[roll] At least one shift value per axis");
    EXPECT_FAIL(y, mlx_roll_axis(&y, p, SHAPE(1), 1, 2, S), "[roll] Invalid axis 2");
    TU_FREE(p, y);
}

/* ---- contiguous, as_strided, copy ---- */

static void test_contiguous_shares_dense_input_and_copies_others(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_INT32, 2, SHAPE(3, 4)), t = mlx_array_new(), y = mlx_array_new();
    OK(mlx_contiguous(&y, m, false, S));
    assert_true(shares(m, y));
    OK(mlx_transpose(&t, m, S));
    OK(mlx_contiguous(&y, t, true, S));
    assert_true(shares(m, y));
    OK(mlx_contiguous(&y, t, false, S));
    assert_false(shares(m, y));
    bool rc = false;
    OK(_mlx_array_is_row_contiguous(&rc, y));
    assert_true(rc);
    EXPECT_VALS(y, SHAPE(4, 3), ((const double[]){0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
    TU_FREE(m, t, y);
}

static void test_as_strided_views_row_major_elements(void **state)
{
    (void)state;
    mlx_array r = iota(MLX_FLOAT32, 1, SHAPE(10)), y = mlx_array_new();
    OK(mlx_as_strided(&y, r, SHAPE(4, 3), 2, (const int64_t[]){2, 1}, 2, 1, S));
    EXPECT_VALS(y, SHAPE(4, 3), exp_as_strided);
    assert_true(shares(r, y));
    /* a reversed input is made row-major first: offsets are logical */
    mlx_array rev = mlx_array_new();
    OK(mlx_slice(&rev, r, SHAPE(9), 1, SHAPE(-11), 1, SHAPE(-1), 1, S));
    OK(mlx_as_strided(&y, rev, SHAPE(3), 1, (const int64_t[]){-3}, 1, 6, S));
    EXPECT_VALS(y, SHAPE(3), ((const double[]){3, 6, 9}));
    EXPECT_FAIL(y, mlx_as_strided(&y, r, SHAPE(4, 3), 2, (const int64_t[]){3, 1}, 2, 1, S), "[as_strided]");
    EXPECT_FAIL(y, mlx_as_strided(&y, r, SHAPE(2), 1, (const int64_t[]){-1}, 1, 0, S), "[as_strided]");
    EXPECT_FAIL(y, mlx_as_strided(&y, r, SHAPE(2), 1, (const int64_t[]){1, 1}, 2, 0, S), "[as_strided]");
    EXPECT_FAIL(y, mlx_as_strided(&y, r, SHAPE(-2), 1, (const int64_t[]){1}, 1, 0, S),
                "[as_strided] Negative dimensions not allowed");
    TU_FREE(r, y, rev);
}

static void test_copy_makes_a_distinct_buffer(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_UINT16, 2, SHAPE(2, 2)), t = mlx_array_new(), y = mlx_array_new();
    OK(mlx_copy(&y, m, S));
    assert_false(shares(m, y));
    EXPECT_VALS(y, SHAPE(2, 2), ((const double[]){0, 1, 2, 3}));
    OK(mlx_transpose(&t, m, S));
    OK(mlx_copy(&y, t, S));
    EXPECT_VALS(y, SHAPE(2, 2), ((const double[]){0, 2, 1, 3}));
    TU_FREE(m, t, y);
}

/* ---- diag, diagonal, tri, tril, triu ---- */

static void test_diag_builds_and_reads_diagonals(void **state)
{
    (void)state;
    mlx_array v = from_ints(MLX_INT32, (const int[]){1, 2, 3}, 1, SHAPE(3)), y = mlx_array_new();
    OK(mlx_diag(&y, v, 1, S));
    assert_int_equal(mlx_array_dtype(y), MLX_INT32);
    EXPECT_VALS(y, SHAPE(4, 4), exp_diag_vec_k1);
    OK(mlx_diag(&y, v, -2, S));
    EXPECT_VALS(y, SHAPE(5, 5), exp_diag_vec_km2);
    mlx_array m = iota(MLX_FLOAT32, 2, SHAPE(4, 5));
    OK(mlx_diag(&y, m, 1, S));
    EXPECT_VALS(y, SHAPE(4), exp_diag_mat_k1);
    assert_true(shares(m, y));
    /* an empty vector gives a |k| x |k| zero matrix */
    mlx_array e = iota(MLX_FLOAT32, 1, SHAPE(0));
    OK(mlx_diag(&y, e, -2, S));
    EXPECT_VALS(y, SHAPE(2, 2), ((const double[]){0, 0, 0, 0}));
    mlx_array c = iota(MLX_FLOAT32, 3, SHAPE(1, 1, 1));
    EXPECT_FAIL(y, mlx_diag(&y, c, 0, S), "[diag] array must be 1-D or 2-D");
    TU_FREE(v, y, m, e, c);
}

static void test_diagonal_is_a_view_over_any_axes(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_INT64, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    OK(mlx_diagonal(&y, x, 1, 2, 0, S));
    EXPECT_VALS(y, SHAPE(3, 1), exp_diagonal_3d);
    assert_true(shares(x, y));
    /* of a reversed view, and an offset past the end */
    mlx_array m = iota(MLX_INT64, 2, SHAPE(3, 3)), r = mlx_array_new();
    OK(mlx_slice(&r, m, SHAPE(2, 0), 2, SHAPE(-4, 3), 2, SHAPE(-1, 1), 2, S));
    OK(mlx_diagonal(&y, r, 0, 0, 1, S));
    EXPECT_VALS(y, SHAPE(3), ((const double[]){6, 4, 2}));
    OK(mlx_diagonal(&y, m, 5, 0, 1, S));
    assert_true(tu_shape_is(y, 1, SHAPE(0)));
    OK(mlx_array_eval(y));
    EXPECT_FAIL(y, mlx_diagonal(&y, x, 0, 1, -2, S), "[diagonal] axis1 and axis2 cannot be the same axis");
    EXPECT_FAIL(y, mlx_diagonal(&y, x, 0, 3, 1, S), "[diagonal] Invalid axis1 3");
    EXPECT_FAIL(y, mlx_diagonal(&y, x, 0, 0, -4, S), "[diagonal] Invalid axis2 -4");
    mlx_array v = iota(MLX_INT64, 1, SHAPE(3));
    EXPECT_FAIL(y, mlx_diagonal(&y, v, 0, 0, 1, S), "[diagonal] Array must have at least two dimensions");
    TU_FREE(x, y, m, r, v);
}

/* Offsets at the ends of int's range give an empty diagonal (and a trace of
 * zero) instead of overflowing into a diagonal of the full length whose view
 * reaches outside the buffer. */
static void test_diagonal_offset_at_int_limits_is_empty(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_FLOAT32, 2, SHAPE(3, 3)), y = mlx_array_new();
    const int offsets[4] = {INT_MIN, INT_MAX, INT_MIN + 1, -3};
    for (int i = 0; i < 4; i++) {
        OK(mlx_diagonal(&y, m, offsets[i], 0, 1, S));
        assert_true(tu_shape_is(y, 1, SHAPE(0)));
        OK(mlx_array_eval(y));
        OK(mlx_trace(&y, m, offsets[i], 0, 1, MLX_FLOAT32, S));
        EXPECT_VALS0(y, ((const double[]){0}));
    }
    TU_FREE(m, y);
}

static void test_tri_tril_triu_match_numpy(void **state)
{
    (void)state;
    mlx_array y = mlx_array_new();
    OK(mlx_tri(&y, 3, 4, 1, MLX_FLOAT32, S));
    assert_int_equal(mlx_array_dtype(y), MLX_FLOAT32);
    EXPECT_VALS(y, SHAPE(3, 4), exp_tri);
    mlx_array m = iota(MLX_FLOAT32, 2, SHAPE(4, 5)), one = mlx_array_new_float(1);
    OK(mlx_add(&m, m, one, S));
    OK(mlx_tril(&y, m, -1, S));
    assert_int_equal(mlx_array_dtype(y), MLX_FLOAT32);
    EXPECT_VALS(y, SHAPE(4, 5), exp_tril);
    mlx_array mi = mlx_array_new();
    OK(mlx_astype(&mi, m, MLX_INT16, S));
    OK(mlx_triu(&y, mi, 1, S));
    assert_int_equal(mlx_array_dtype(y), MLX_INT16);
    EXPECT_VALS(y, SHAPE(4, 5), exp_triu);
    mlx_array b = iota(MLX_INT32, 3, SHAPE(2, 3, 3));
    OK(mlx_triu(&y, b, 0, S));
    EXPECT_VALS(y, SHAPE(2, 3, 3), exp_triu_batch);
    /* extreme k does not overflow */
    OK(mlx_tril(&y, b, INT32_MIN, S));
    assert_true(tu_get(y, 4) == 0);
    OK(mlx_triu(&y, b, INT32_MIN, S));
    assert_true(tu_get(y, 4) == 4);
    mlx_array v = iota(MLX_INT32, 1, SHAPE(3));
    EXPECT_FAIL(y, mlx_tril(&y, v, 0, S), "[tril] array must be at least 2-D");
    EXPECT_FAIL(y, mlx_triu(&y, v, 0, S), "[triu] array must be at least 2-D");
    EXPECT_FAIL(y, mlx_tri(&y, -1, 2, 0, MLX_FLOAT32, S), "[tri]");
    TU_FREE(y, m, one, mi, b, v);
}

static void test_trace_sums_the_diagonal_in_dtype(void **state)
{
    (void)state;
    /* numpy: np.trace(arange(20).reshape(4, 5), 1) = 40; the 3-d case
     * np.trace(x, offset=-1, axis1=1, axis2=2) = [13, 37]; past the end 0 */
    mlx_array m = iota(MLX_FLOAT32, 2, SHAPE(4, 5)), x = iota(MLX_INT32, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    OK(mlx_trace(&y, m, 1, 0, 1, MLX_FLOAT32, S));
    assert_int_equal(mlx_array_dtype(y), MLX_FLOAT32);
    EXPECT_VALS0(y, ((const double[]){40}));
    OK(mlx_trace(&y, x, -1, 1, 2, MLX_INT64, S));
    assert_int_equal(mlx_array_dtype(y), MLX_INT64);
    EXPECT_VALS(y, SHAPE(2), ((const double[]){13, 37}));
    OK(mlx_trace(&y, m, 7, 0, 1, MLX_FLOAT32, S));
    EXPECT_VALS0(y, ((const double[]){0}));
    EXPECT_FAIL(y, mlx_trace(&y, m, 0, 1, 1, MLX_FLOAT32, S), "[trace] axis1 and axis2 cannot be the same axis");
    EXPECT_FAIL(y, mlx_trace(&y, m, 0, 0, 2, MLX_FLOAT32, S), "[trace] Invalid axis2 2");
    mlx_array v = iota(MLX_FLOAT32, 1, SHAPE(3));
    EXPECT_FAIL(y, mlx_trace(&y, v, 0, 0, 1, MLX_FLOAT32, S), "[trace] Array must have at least two dimensions");
    /* complex64, as MLX sums it: (1+1j) + (4-2j) */
    const float c[8] = {1, 1, 2, 0, 3, 0, 4, -2};
    mlx_array mc = mlx_array_new_data(c, SHAPE(2, 2), 2, MLX_COMPLEX64);
    OK(mlx_trace(&y, mc, 0, 0, 1, MLX_COMPLEX64, S));
    float _Complex t;
    OK(mlx_array_item_complex64(&t, y));
    assert_true(crealf(t) == 5 && cimagf(t) == -1);
    TU_FREE(m, x, y, v, mc);
}

/* ---- meshgrid ---- */

static void test_meshgrid_xy_ij_and_sparse(void **state)
{
    (void)state;
    mlx_array gx = from_ints(MLX_INT32, (const int[]){1, 2, 3}, 1, SHAPE(3));
    mlx_array gy = from_ints(MLX_INT32, (const int[]){10, 20}, 1, SHAPE(2));
    mlx_vector_array in = vec2(gx, gy), out = mlx_vector_array_new();
    OK(mlx_meshgrid(&out, in, false, "xy", S));
    mlx_array X = vget(out, 0), Y = vget(out, 1);
    EXPECT_VALS(X, SHAPE(2, 3), exp_mesh_xy_x);
    EXPECT_VALS(Y, SHAPE(2, 3), exp_mesh_xy_y);
    assert_true(shares(gx, X));
    OK(mlx_meshgrid(&out, in, false, "ij", S));
    mlx_array X2 = vget(out, 0), Y2 = vget(out, 1);
    EXPECT_VALS(X2, SHAPE(3, 2), exp_mesh_ij_x);
    EXPECT_VALS(Y2, SHAPE(3, 2), exp_mesh_ij_y);
    OK(mlx_meshgrid(&out, in, true, "xy", S));
    mlx_array X3 = vget(out, 0), Y3 = vget(out, 1);
    assert_true(tu_shape_is(X3, 2, SHAPE(1, 3)));
    assert_true(tu_shape_is(Y3, 2, SHAPE(2, 1)));
    EXPECT_FAIL(out, mlx_meshgrid(&out, in, false, "yx", S), "[meshgrid] Invalid indexing value");
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
    TU_FREE(gx, gy, X, Y, X2, Y2, X3, Y3);
}

/* ---- where, clip, number_of_elements ---- */

static void test_where_broadcasts_and_promotes(void **state)
{
    (void)state;
    mlx_array c = from_ints(MLX_INT32, (const int[]){1, 0, 2}, 2, SHAPE(1, 3));
    mlx_array x = from_ints(MLX_INT32, (const int[]){1, 2}, 2, SHAPE(2, 1));
    double yv[3] = {0.5, 1.5, 2.5};
    mlx_array yy = mlx_array_new_data(yv, SHAPE(3), 1, MLX_FLOAT64), y32 = mlx_array_new(), r = mlx_array_new();
    OK(mlx_astype(&y32, yy, MLX_FLOAT32, S));
    OK(mlx_where(&r, c, x, y32, S));
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    EXPECT_VALS(r, SHAPE(2, 3), exp_where);
    /* float16 branches, a 0-d condition */
    mlx_array h = mlx_array_new(), t = mlx_array_new_bool(true);
    OK(mlx_astype(&h, yy, MLX_FLOAT16, S));
    OK(mlx_where(&r, t, h, x, S));
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT16);
    EXPECT_VALS(r, SHAPE(2, 3), ((const double[]){0.5, 1.5, 2.5, 0.5, 1.5, 2.5}));
    mlx_array bad = iota(MLX_INT32, 1, SHAPE(2));
    EXPECT_FAIL(r, mlx_where(&r, bad, x, y32, S), "[where]");
    TU_FREE(c, x, yy, y32, r, h, t, bad);
}

static void test_where_reuses_a_dying_input_buffer_safely(void **state)
{
    (void)state;
    /* x is an intermediate only the Select node holds: its buffer may be
     * reused for the output, element by element */
    mlx_array c = from_ints(MLX_BOOL, (const int[]){1, 0, 1, 0}, 1, SHAPE(4));
    mlx_array a = iota(MLX_FLOAT32, 1, SHAPE(4)), ten = mlx_array_new_float(10), x = mlx_array_new(),
              r = mlx_array_new();
    OK(mlx_multiply(&x, a, ten, S));
    OK(mlx_where(&r, c, x, a, S));
    mlx_array_free(x);
    x = mlx_array_new();
    EXPECT_VALS(r, SHAPE(4), ((const double[]){0, 1, 20, 3}));
    TU_FREE(c, a, ten, x, r);
}

static void test_clip_with_one_or_two_bounds(void **state)
{
    (void)state;
    double cv[5] = {-3, -0.5, 0.5, 2, 7};
    mlx_array c64 = mlx_array_new_data(cv, SHAPE(5), 1, MLX_FLOAT64), c = mlx_array_new(), r = mlx_array_new();
    OK(mlx_astype(&c, c64, MLX_FLOAT32, S));
    mlx_array lo = mlx_array_new_int(-1);
    double hv[5] = {0, 0, 1, 1, 5};
    mlx_array hi64 = mlx_array_new_data(hv, SHAPE(5), 1, MLX_FLOAT64), hi = mlx_array_new();
    OK(mlx_astype(&hi, hi64, MLX_FLOAT32, S));
    OK(mlx_clip(&r, c, lo, hi, S));
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    EXPECT_VALS(r, SHAPE(5), exp_clip);
    mlx_array one = mlx_array_new_float(1), none = mlx_array_new();
    OK(mlx_clip(&r, c, none, one, S));
    EXPECT_VALS(r, SHAPE(5), exp_clip_max);
    EXPECT_FAIL(r, mlx_clip(&r, c, none, none, S), "[clip]");
    TU_FREE(c64, c, r, lo, hi64, hi, one);
}

static void test_number_of_elements_counts_axes(void **state)
{
    (void)state;
    mlx_array x = iota(MLX_FLOAT32, 3, SHAPE(2, 3, 4)), r = mlx_array_new();
    OK(mlx_number_of_elements(&r, x, SHAPE(0, -1), 2, false, MLX_INT32, S));
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    EXPECT_VALS0(r, ((const double[]){8}));
    OK(mlx_number_of_elements(&r, x, SHAPE(0, 2), 2, true, MLX_FLOAT32, S));
    EXPECT_VALS0(r, ((const double[]){0.125}));
    /* of a lazy input: a node that reads the shape when evaluated */
    mlx_array t = mlx_array_new();
    OK(mlx_transpose(&t, x, S));
    OK(mlx_number_of_elements(&r, t, SHAPE(1), 1, false, MLX_FLOAT16, S));
    assert_int_equal(mc_arr(r)->prim, MC_PRIM_NUMBER_OF_ELEMENTS);
    EXPECT_VALS0(r, ((const double[]){3}));
    OK(mlx_number_of_elements(&r, x, NULL, 0, false, MLX_INT64, S));
    EXPECT_VALS0(r, ((const double[]){1}));
    EXPECT_FAIL(r, mlx_number_of_elements(&r, x, SHAPE(3), 1, false, MLX_INT32, S), "[number_of_elements]");
    TU_FREE(x, r, t);
}

/* ---- arguments common to every op ---- */

static void test_empty_handles_and_null_results_fail(void **state)
{
    (void)state;
    mlx_array none = mlx_array_new(), x = iota(MLX_FLOAT32, 2, SHAPE(2, 2)), y = mlx_array_new();
    mlx_vector_array vnone = mlx_vector_array_new();
    EXPECT_FAIL(y, mlx_flatten(&y, none, 0, -1, S), "[flatten]");
    EXPECT_FAIL(y, mlx_squeeze(&y, none, S), "[squeeze]");
    EXPECT_FAIL(y, mlx_take(&y, x, none, S), "[take]");
    EXPECT_FAIL(y, mlx_where(&y, x, none, x, S), "[where]");
    EXPECT_FAIL(y, mlx_slice_update(&y, x, none, SHAPE(0, 0), 2, SHAPE(1, 1), 2, SHAPE(1, 1), 2, S),
                "[slice_update]");
    EXPECT_FAIL(y, mlx_pad(&y, x, SHAPE(0), 1, SHAPE(1), 1, SHAPE(1), 1, none, "constant", S), "[pad]");
    assert_int_not_equal(mlx_swapaxes(NULL, x, 0, 1, S), 0);
    tu_expect_error("[swapaxes]");
    assert_int_not_equal(mlx_split(NULL, x, 2, 0, S), 0);
    tu_expect_error("[split]");
    /* an empty vector handle is an empty list */
    mlx_vector_array vempty = {NULL};
    EXPECT_FAIL(y, mlx_concatenate(&y, vempty, S), "[concatenate]");
    EXPECT_FAIL(y, mlx_stack(&y, vnone, S), "[stack]");
    mlx_vector_array_free(vnone);
    TU_FREE(x, y);
}

static void test_views_keep_the_buffer_after_the_input_is_freed(void **state)
{
    (void)state;
    mlx_array m = iota(MLX_INT32, 2, SHAPE(3, 3)), y = mlx_array_new(), z = mlx_array_new();
    OK(mlx_slice(&y, m, SHAPE(2, 2), 2, SHAPE(-4, -4), 2, SHAPE(-1, -1), 2, S));
    OK(mlx_diagonal(&z, m, 0, 0, 1, S));
    mlx_array_free(m);
    EXPECT_VALS(y, SHAPE(3, 3), ((const double[]){8, 7, 6, 5, 4, 3, 2, 1, 0}));
    EXPECT_VALS(z, SHAPE(3), ((const double[]){0, 4, 8}));
    TU_FREE(y, z);
}

/* ---- shapeless compile ---- */

/* x (r, c) -> flatten(expand_dims(x, 0), 1, 2), pad(x[:, ::-1], 1 zero
 * column in front), number_of_elements(x): every shape follows x's. */
static int shapeless_runs;

static int shapeless_body(mlx_vector_array *res, const mlx_vector_array in)
{
    shapeless_runs++;
    mlx_array x = mlx_array_new(), e = mlx_array_new(), f = mlx_array_new(), r = mlx_array_new(),
              p = mlx_array_new(), n = mlx_array_new(), zero = mlx_array_new_float(0);
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_expand_dims(&e, x, 0, S) || mlx_flatten(&f, e, 1, 2, S) ||
             mlx_slice(&r, x, SHAPE(0, -1), 2, SHAPE(INT32_MAX, INT32_MIN), 2, SHAPE(1, -1), 2, S) ||
             mlx_pad(&p, r, SHAPE(1), 1, SHAPE(1), 1, SHAPE(0), 1, zero, "constant", S) ||
             mlx_number_of_elements(&n, x, SHAPE(0, 1), 2, false, MLX_INT32, S);
    if (!rc) {
        mlx_array outs[3] = {f, p, n};
        rc = mlx_vector_array_set_data(res, outs, 3);
    }
    TU_FREE(x, e, f, r, p, n, zero);
    return rc;
}

static void test_shapeless_compile_replays_shape_ops_on_new_shapes(void **state)
{
    (void)state;
    mlx_closure body = mlx_closure_new_func(shapeless_body), cf = mlx_closure_new();
    OK(mlx_compile(&cf, body, true));
    shapeless_runs = 0;
    const int shapes[2][2] = {{2, 3}, {3, 2}};
    for (int k = 0; k < 2; k++) {
        int r = shapes[k][0], c = shapes[k][1];
        mlx_array x = iota(MLX_FLOAT32, 2, shapes[k]);
        mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
        OK(mlx_closure_apply(&out, cf, in));
        mlx_array f = vget(out, 0), p = vget(out, 1), n = vget(out, 2);
        assert_true(tu_shape_is(f, 2, SHAPE(1, r * c)));
        for (int i = 0; i < r * c; i++)
            assert_true(tu_get(f, (size_t)i) == i);
        assert_true(tu_shape_is(p, 2, SHAPE(r, c + 1)));
        for (int i = 0; i < r; i++) {
            assert_true(tu_get(p, (size_t)(i * (c + 1))) == 0);
            for (int j = 0; j < c; j++)
                assert_true(tu_get(p, (size_t)(i * (c + 1) + 1 + j)) == i * c + (c - 1 - j));
        }
        EXPECT_VALS0(n, ((const double[]){r * c}));
        TU_FREE(x, f, p, n);
        mlx_vector_array_free(in);
        mlx_vector_array_free(out);
    }
    assert_int_equal(shapeless_runs, 1); /* traced once, replayed on (3, 2) */
    mlx_closure_free(cf);
    mlx_closure_free(body);
}

/* ---- allocation failures ---- */

#ifdef MC_FAULT_INJECTION
/* Inputs of the fault sweep, made before any allocation is made to fail. */
static mlx_array fx, fi, fv;

static int f_pad_reflect(mlx_array *y)
{
    return mlx_pad(y, fx, SHAPE(0, 1), 2, SHAPE(1, 4), 2, SHAPE(2, 3), 2, fv, "symmetric", S);
}
static int f_tile(mlx_array *y) { return mlx_tile(y, fx, SHAPE(2, 1, 2), 3, S); }
static int f_roll(mlx_array *y) { return mlx_roll_axes(y, fx, SHAPE(1, -1), 2, SHAPE(0, 1), 2, S); }
static int f_diag(mlx_array *y) { return mlx_diag(y, fi, -1, S); }
static int f_take(mlx_array *y) { return mlx_take_axis(y, fx, fi, 1, S); }
static int f_tril(mlx_array *y) { return mlx_triu(y, fx, 1, S); }
static int f_clip(mlx_array *y) { return mlx_clip(y, fx, fv, fv, S); }
static int f_trace(mlx_array *y) { return mlx_trace(y, fx, 0, 0, 1, MLX_FLOAT64, S); }
static int f_as_strided(mlx_array *y)
{
    return mlx_as_strided(y, fx, SHAPE(2, 2), 2, (const int64_t[]){1, 1}, 2, 1, S);
}
static int f_concat(mlx_array *y)
{
    mlx_vector_array v = vec2(fx, fx);
    if (!v.ctx) {
        tu_reset_errors(); /* the vector's own failure is not under test */
        return -1;
    }
    int rc = mlx_concatenate_axis(y, v, 1, S);
    mlx_vector_array_free(v);
    return rc;
}
static int f_split(mlx_array *y)
{
    mlx_vector_array v = mlx_vector_array_new();
    if (!v.ctx) {
        tu_reset_errors();
        return -1;
    }
    int rc = mlx_split(&v, fx, 3, 1, S);
    if (!rc && mlx_vector_array_size(v) == 3)
        rc = mlx_vector_array_get(y, v, 2);
    mlx_vector_array_free(v);
    return rc;
}
#endif

/* Fails the 1st, 2nd, ... allocation of building and evaluating each op
 * until it succeeds: every failure must be one report, and (under
 * valgrind) free everything it took. Only in a -Dfault_injection=true
 * build; skipped otherwise. */
static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    fx = iota(MLX_FLOAT32, 2, SHAPE(2, 3));
    fi = from_ints(MLX_INT32, (const int[]){2, -1, 0}, 1, SHAPE(3));
    fv = mlx_array_new_float(1.5f);
    int (*ops[])(mlx_array *) = {f_pad_reflect, f_tile, f_roll, f_diag,  f_take,
                                 f_tril,        f_clip, f_trace, f_as_strided, f_concat, f_split};
    for (size_t k = 0; k < N_(ops); k++) {
        for (long n = 0;; n++) {
            mlx_array y = mlx_array_new();
            mc_fault_fail_after(n);
            int rc = ops[k](&y);
            if (rc < 0) { /* the harness's own allocation failed */
                mc_fault_fail_after(-1);
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
    TU_FREE(fx, fi, fv);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_flatten_merges_axes_and_views_contiguous_input),
        T(test_flatten_of_transposed_input_copies_in_logical_order),
        T(test_flatten_with_reversed_axes_fails),
        T(test_unflatten_splits_one_axis_inferring_minus_one),
        T(test_unflatten_bad_shapes_fail),
        T(test_transpose_axes_is_a_view_with_numpy_order),
        T(test_transpose_axes_bad_axes_fail),
        T(test_swapaxes_and_moveaxis_match_numpy),
        T(test_expand_dims_inserts_axes_as_a_view),
        T(test_expand_dims_bad_axes_fail),
        T(test_squeeze_removes_unit_axes_as_a_view),
        T(test_squeeze_of_non_unit_or_repeated_axis_fails),
        T(test_atleast_adds_leading_and_trailing_axes),
        T(test_broadcast_arrays_gives_common_shape_views),
        T(test_concatenate_promotes_and_joins_on_axis),
        T(test_concatenate_reads_transposed_and_reversed_inputs),
        T(test_concatenate_with_empty_and_bool_inputs),
        T(test_concatenate_bad_inputs_fail),
        T(test_stack_joins_on_a_new_axis),
        T(test_split_gives_equal_views),
        T(test_split_sections_cut_at_indices),
        T(test_slice_with_negative_steps_is_a_view),
        T(test_slice_bad_arguments_fail),
        T(test_slice_update_casts_and_broadcasts_the_update),
        T(test_slice_update_with_negative_steps),
        T(test_slice_update_with_a_view_of_src_reads_before_writing),
        T(test_slice_update_mismatched_update_fails),
        T(test_take_from_flattened_array_with_negative_indices),
        T(test_take_axis_with_each_index_dtype),
        T(test_take_axis_of_transposed_input),
        T(test_take_moves_every_element_size),
        T(test_take_out_of_range_index_is_clamped),
        T(test_take_with_empty_indices_and_0d_index),
        T(test_take_with_float_or_bool_indices_fails),
        T(test_take_along_axis_broadcasts_indices),
        T(test_pad_constant_casts_the_value),
        T(test_pad_edge_reflect_symmetric_match_numpy),
        T(test_pad_bad_arguments_fail),
        T(test_pad_past_the_largest_dimension_fails),
        T(test_tile_repeats_the_whole_array),
        T(test_repeat_each_element),
        T(test_roll_flat_and_per_axis),
        T(test_contiguous_shares_dense_input_and_copies_others),
        T(test_as_strided_views_row_major_elements),
        T(test_copy_makes_a_distinct_buffer),
        T(test_diag_builds_and_reads_diagonals),
        T(test_diagonal_is_a_view_over_any_axes),
        T(test_diagonal_offset_at_int_limits_is_empty),
        T(test_tri_tril_triu_match_numpy),
        T(test_trace_sums_the_diagonal_in_dtype),
        T(test_meshgrid_xy_ij_and_sparse),
        T(test_where_broadcasts_and_promotes),
        T(test_where_reuses_a_dying_input_buffer_safely),
        T(test_clip_with_one_or_two_bounds),
        T(test_number_of_elements_counts_axes),
        T(test_empty_handles_and_null_results_fail),
        T(test_views_keep_the_buffer_after_the_input_is_freed),
        T(test_shapeless_compile_replays_shape_ops_on_new_shapes),
        T(test_allocation_failures_report_once_and_leak_nothing),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
