/* Suite 'scatter': put_along_axis and scatter_add_axis (src/ops/
 * index_scatter.c, src/graph/prims_scatter.c). Values against numpy
 * (np.put_along_axis, np.add.at: test/scatter_cases.py wrote
 * scatter_cases.h) after MLX's broadcasting; repeated indices (the last
 * value wins, sums accumulate), negative and out-of-range indices (clamped,
 * our documented rule), every element size and the sum of every dtype
 * class, non-contiguous operands, an input that must not be overwritten,
 * MLX's errors, and what the scatter's and take's derivative rules do with
 * indices (finite differences in test_grad.c check the rest). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "mlx/c/mlx.h"
#include "test_util.h"

#include "scatter_cases.h"

#define S tu_stream()
#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define SHAPE(...) ((const int[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)))
#define VALS(...) ((const double[]){__VA_ARGS__})
#define OK(call) assert_int_equal((call), 0)

/* An evaluated array of dtype d from row-major values. */
#define ARR(d, vals, ...) arr((d), (vals), NDIM(__VA_ARGS__), SHAPE(__VA_ARGS__))
static mlx_array arr(mlx_dtype d, const double *vals, int ndim, const int *shape)
{
    mlx_array a = tu_array_of(d, vals, shape, ndim);
    OK(mlx_array_eval(a));
    return a;
}

/* 0, 1, ..., n - 1 as float32 of the given shape. */
static mlx_array iota_f32(int ndim, const int *shape)
{
    double v[64];
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    assert_true(n <= N_(v));
    for (size_t i = 0; i < n; i++)
        v[i] = (double)i;
    return arr(MLX_FLOAT32, v, ndim, shape);
}

static void expect_vals_at(mlx_array a, int ndim, const int *shape, const double *v, const char *file, int line)
{
    if (!tu_shape_is(a, ndim, shape)) {
        char got[256], want[256];
        mc_shape_str(got, sizeof got, (int)mlx_array_ndim(a), mlx_array_shape(a));
        mc_shape_str(want, sizeof want, ndim, shape);
        fail_msg("%s:%d: shape %s, expected %s", file, line, got, want);
    }
    for (size_t i = 0; i < mlx_array_size(a); i++) {
        double g = tu_get(a, i);
        if (!(g == v[i]))
            fail_msg("%s:%d: element %zu is %.17g, expected %.17g", file, line, i, g, v[i]);
    }
}
#define EXPECT_VALS(a, shape_, v) expect_vals_at((a), (int)N_(shape_), (shape_), (v), __FILE__, __LINE__)

/* The call fails with one message starting with prefix, res untouched. */
#define EXPECT_FAIL(res, call, prefix)                                    \
    do {                                                                  \
        void *before_ = (res).ctx;                                        \
        if ((call) == 0)                                                  \
            fail_msg("%s succeeded; expected a %s error", #call, prefix); \
        tu_expect_error(prefix);                                          \
        assert_ptr_equal((res).ctx, before_);                             \
    } while (0)

/* ---- put_along_axis ---- */

static void test_put_along_axis_writes_at_indices_with_negative_ones_counting_from_the_end(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(0, -1, 2, 1, -4, 3), 3, 2);
    mlx_array v = ARR(MLX_FLOAT32, VALS(10, 11, 12, 13, 14, 15), 3, 2);
    OK(mlx_put_along_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_put_ax1);
    /* a itself is unchanged: it is still referenced, so never donated */
    EXPECT_VALS(a, SHAPE(3, 4), VALS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
    TU_FREE(a, y, idx, v);
}

static void test_put_along_axis_broadcasts_indices_and_a_scalar_value(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT64, VALS(2, 0, 1, -1), 1, 4);
    mlx_array v = mlx_array_new_float64(7.5);
    OK(mlx_put_along_axis(&y, a, idx, v, 0, S));
    assert_int_equal(mlx_array_dtype(y), MLX_FLOAT32);
    EXPECT_VALS(y, SHAPE(3, 4), exp_put_ax0_bcast);
    TU_FREE(a, y, idx, v);
}

static void test_put_along_axis_repeated_index_keeps_the_last_value(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_UINT8, VALS(1, 1, 1), 1, 3);
    mlx_array v = ARR(MLX_FLOAT32, VALS(5, 6, 7), 1, 3);
    OK(mlx_put_along_axis(&y, a, idx, v, -1, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_put_repeat_last_wins);
    TU_FREE(a, y, idx, v);
}

static void test_put_along_axis_broadcasts_a_outside_the_axis(void **state)
{
    (void)state;
    /* as MLX: a (1, 4) meets indices (3, 1), so the result is (3, 4) */
    mlx_array a = iota_f32(2, SHAPE(1, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT16, VALS(0, 1, 3), 3, 1);
    mlx_array v = ARR(MLX_FLOAT32, VALS(-1, -2, -3), 3, 1);
    OK(mlx_put_along_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_put_grows_a);
    TU_FREE(a, y, idx, v);
}

static void test_put_along_axis_drops_leading_unit_axes_of_values(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(1, 0, 3), 3, 1);
    mlx_array v = ARR(MLX_FLOAT32, VALS(20, 21, 22), 1, 3, 1);
    OK(mlx_put_along_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_put_lead_squeezed);
    TU_FREE(a, y, idx, v);
}

static void test_put_along_axis_clamps_indices_outside_the_axis(void **state)
{
    (void)state;
    /* MLX writes outside the array; we write at the nearest end, where
     * take reads for the same index */
    mlx_array a = iota_f32(1, SHAPE(4)), y = mlx_array_new(), back = mlx_array_new();
    mlx_array idx = ARR(MLX_INT64, VALS(100, -100, 4, -5), 4);
    mlx_array v = ARR(MLX_FLOAT32, VALS(1, 2, 3, 4), 4);
    OK(mlx_put_along_axis(&y, a, idx, v, 0, S));
    EXPECT_VALS(y, SHAPE(4), exp_put_clamped);
    OK(mlx_take_along_axis(&back, y, idx, 0, S));
    EXPECT_VALS(back, SHAPE(4), VALS(3, 4, 3, 4));
    TU_FREE(a, y, back, idx, v);
}

static void test_put_along_axis_moves_every_element_size(void **state)
{
    (void)state;
    const mlx_dtype dts[] = {MLX_BOOL, MLX_INT8, MLX_FLOAT16, MLX_BFLOAT16, MLX_UINT32, MLX_INT64, MLX_FLOAT64};
    mlx_array idx = ARR(MLX_INT32, VALS(2, 0), 2), y = mlx_array_new();
    for (size_t i = 0; i < N_(dts); i++) {
        mlx_array a = ARR(dts[i], VALS(0, 0, 0), 3), v = ARR(dts[i], VALS(1, 3), 2);
        OK(mlx_put_along_axis(&y, a, idx, v, 0, S));
        assert_int_equal(mlx_array_dtype(y), dts[i]);
        double want[3] = {3, 0, 1};
        if (dts[i] == MLX_BOOL)
            want[0] = 1;
        EXPECT_VALS(y, SHAPE(3), want);
        TU_FREE(a, v);
    }
    TU_FREE(idx, y);
}

static void test_put_along_axis_of_complex64(void **state)
{
    (void)state;
    mlx_complex64_t av[3] = {tu_c64(1, 1), tu_c64(2, 2), tu_c64(3, 3)}, vv[1] = {tu_c64(-5, 7)};
    mlx_array a = mlx_array_new_data(av, SHAPE(3), 1, MLX_COMPLEX64);
    mlx_array v = mlx_array_new_data(vv, SHAPE(1), 1, MLX_COMPLEX64);
    mlx_array idx = ARR(MLX_INT32, VALS(1), 1), y = mlx_array_new(), z = mlx_array_new();
    OK(mlx_put_along_axis(&y, a, idx, v, 0, S));
    OK(mlx_scatter_add_axis(&z, a, idx, v, 0, S));
    OK(mlx_array_eval(y));
    OK(mlx_array_eval(z));
    const mlx_complex64_t *py = mlx_array_data_complex64(y), *pz = mlx_array_data_complex64(z);
    const float want_y[6] = {1, 1, -5, 7, 3, 3}, want_z[6] = {1, 1, -3, 9, 3, 3};
    assert_memory_equal(py, want_y, sizeof want_y);
    assert_memory_equal(pz, want_z, sizeof want_z);
    TU_FREE(a, v, idx, y, z);
}

/* ---- scatter_add_axis ---- */

static void test_scatter_add_axis_accumulates_every_repeated_index(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(0, 0, 3, 1, 1, 1, -1, 2, -1), 3, 3);
    mlx_array v = ARR(MLX_FLOAT32, VALS(1, 2, 3, 4, 5, 6, 7, 8, 9), 3, 3);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_add_ax1_repeats);
    TU_FREE(a, y, idx, v);
}

static void test_scatter_add_axis_broadcasts_values_along_rows(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_UINT64, VALS(0, 0, 2), 3, 1);
    mlx_array v = ARR(MLX_FLOAT32, VALS(1, 10, 100, 1000), 1, 4);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 0, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_add_ax0_bcast);
    TU_FREE(a, y, idx, v);
}

static void test_scatter_add_axis_clamps_indices_outside_the_axis(void **state)
{
    (void)state;
    mlx_array a = ARR(MLX_FLOAT32, VALS(0, 0, 0, 0), 4), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT8, VALS(7, -9, 3, 4), 4);
    mlx_array v = ARR(MLX_FLOAT32, VALS(1, 2, 3, 4), 4);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 0, S));
    EXPECT_VALS(y, SHAPE(4), exp_add_clamped);
    TU_FREE(a, y, idx, v);
}

static void test_scatter_add_axis_on_the_middle_axis_of_3d(void **state)
{
    (void)state;
    double av[24], vv[8];
    for (int i = 0; i < 24; i++)
        av[i] = i;
    for (int i = 0; i < 8; i++)
        vv[i] = i;
    mlx_array a = arr(MLX_FLOAT64, av, 3, SHAPE(2, 3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(2, 0, 1, 2, 1, 1, 0, 0), 2, 1, 4);
    mlx_array v = arr(MLX_INT32, vv, 3, SHAPE(2, 1, 4));
    OK(mlx_scatter_add_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(2, 3, 4), exp_add_3d_ax1);
    TU_FREE(a, y, idx, v);
}

static void test_scatter_add_axis_of_transposed_operands(void **state)
{
    (void)state;
    /* a, indices and values all transposed views */
    mlx_array a0 = iota_f32(2, SHAPE(4, 3)), a = mlx_array_new(), y = mlx_array_new();
    mlx_array i0 = ARR(MLX_INT32, VALS(3, 1, 2, 0, 1, 2), 2, 3), idx = mlx_array_new();
    mlx_array v0 = ARR(MLX_FLOAT32, VALS(1, 3, 5, 2, 4, 6), 2, 3), v = mlx_array_new();
    OK(mlx_transpose(&a, a0, S));
    OK(mlx_transpose(&idx, i0, S));
    OK(mlx_transpose(&v, v0, S));
    OK(mlx_scatter_add_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(3, 4), exp_add_transposed);
    TU_FREE(a0, a, y, i0, idx, v0, v);
}

static void test_scatter_add_axis_sums_each_dtype_class(void **state)
{
    (void)state;
    mlx_array y = mlx_array_new();
    struct {
        mlx_dtype d;
        double a[3], v[3];
        int n;
        int idx[3];
        const double *want;
    } cases[] = {
        {MLX_INT32, {2147483647.0, -2147483648.0}, {1, -1}, 2, {0, 1}, exp_add_int32_wraps},
        {MLX_UINT8, {250, 3}, {5, 6}, 2, {0, 0}, exp_add_uint8_wraps},
        {MLX_BOOL, {1, 0, 0}, {1, 0, 1}, 3, {0, 1, 1}, exp_add_bool_or},
        {MLX_FLOAT16, {1, 2, 3}, {0.5, 0.25, 1024}, 3, {0, 0, 2}, exp_add_f16},
    };
    for (size_t c = 0; c < N_(cases); c++) {
        double iv[3] = {cases[c].idx[0], cases[c].idx[1], cases[c].idx[2]};
        int n = cases[c].n;
        mlx_array a = arr(cases[c].d, cases[c].a, 1, &n), v = arr(cases[c].d, cases[c].v, 1, &n);
        mlx_array idx = arr(MLX_INT32, iv, 1, &n);
        OK(mlx_scatter_add_axis(&y, a, idx, v, 0, S));
        assert_int_equal(mlx_array_dtype(y), cases[c].d);
        expect_vals_at(y, 1, &n, cases[c].want, __FILE__, __LINE__);
        TU_FREE(a, v, idx);
    }
    /* bfloat16 rounds after each add: 256 + 1 is 256, twice */
    mlx_array a = ARR(MLX_BFLOAT16, VALS(256), 1), v = ARR(MLX_BFLOAT16, VALS(1, 1), 2);
    mlx_array idx = ARR(MLX_INT32, VALS(0, 0), 2);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 0, S));
    EXPECT_VALS(y, SHAPE(1), VALS(256));
    TU_FREE(a, v, idx, y);
}

static void test_scatter_add_axis_casts_values_to_the_array_dtype(void **state)
{
    (void)state;
    mlx_array a = ARR(MLX_INT32, VALS(0, 0, 0, 0, 0, 0), 2, 3), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(0, 0, 0), 1, 3);
    mlx_array v = ARR(MLX_FLOAT32, VALS(5.5, 6, 7), 1, 3);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 1, S));
    assert_int_equal(mlx_array_dtype(y), MLX_INT32);
    EXPECT_VALS(y, SHAPE(2, 3), exp_add_int_values_cast);
    TU_FREE(a, y, idx, v);
}

static void test_scatter_into_a_temporary_and_with_indices_that_are_the_array(void **state)
{
    (void)state;
    /* a is a lazy result only the scatter holds (its buffer may be taken
     * over) */
    mlx_array base = ARR(MLX_INT32, VALS(1, 2, 3, 4), 4), a = mlx_array_new(), y = mlx_array_new();
    mlx_array two = mlx_array_new_int(2);
    OK(mlx_multiply(&a, base, two, S));
    mlx_array idx = ARR(MLX_INT32, VALS(3, 0), 2), v = ARR(MLX_INT32, VALS(-1, -2), 2);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 0, S));
    mlx_array_free(a);
    a = mlx_array_new();
    EXPECT_VALS(y, SHAPE(4), VALS(0, 4, 6, 7));
    /* indices that are the array's own buffer: a is held twice, so copied */
    mlx_array b = ARR(MLX_INT32, VALS(3, 0, 1, 2), 4), z = mlx_array_new();
    OK(mlx_put_along_axis(&z, b, b, b, 0, S));
    EXPECT_VALS(z, SHAPE(4), VALS(0, 1, 2, 3));
    EXPECT_VALS(b, SHAPE(4), VALS(3, 0, 1, 2));
    TU_FREE(base, a, y, two, idx, v, b, z);
}

static void test_scatter_of_an_empty_array_returns_it(void **state)
{
    (void)state;
    mlx_array a = arr(MLX_FLOAT32, VALS(0), 2, SHAPE(0, 3)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(0), 1, 1), v = mlx_array_new_float32(1);
    OK(mlx_scatter_add_axis(&y, a, idx, v, 1, S));
    EXPECT_VALS(y, SHAPE(0, 3), VALS(0));
    /* no indices: a copy of a */
    mlx_array b = iota_f32(2, SHAPE(2, 3));
    mlx_array e = arr(MLX_INT32, VALS(0), 2, SHAPE(2, 0)), ev = arr(MLX_FLOAT32, VALS(0), 2, SHAPE(2, 0));
    OK(mlx_put_along_axis(&y, b, e, ev, 1, S));
    EXPECT_VALS(y, SHAPE(2, 3), VALS(0, 1, 2, 3, 4, 5));
    TU_FREE(a, b, y, idx, v, e, ev);
}

/* ---- errors (MLX's messages) ---- */

static void test_scatter_bad_arguments_fail_with_one_message(void **state)
{
    (void)state;
    mlx_array a = iota_f32(2, SHAPE(3, 4)), y = mlx_array_new();
    mlx_array idx = ARR(MLX_INT32, VALS(0, 1, 2), 3, 1), v = mlx_array_new_float32(1);
    mlx_array flat = ARR(MLX_INT32, VALS(0), 1), fidx = ARR(MLX_FLOAT32, VALS(0), 1, 1);
    mlx_array bidx = ARR(MLX_BOOL, VALS(1), 1, 1), wide = ARR(MLX_FLOAT32, VALS(1, 2), 2, 1, 1);
    mlx_array rows = ARR(MLX_INT32, VALS(0, 1), 2, 1), none = mlx_array_new();
    mlx_array sq = ARR(MLX_FLOAT32, VALS(1, 2, 3, 4), 2, 2);
    EXPECT_FAIL(y, mlx_put_along_axis(&y, a, idx, v, 2, S),
                "[put_along_axis] Received invalid axis for array with 2 dimensions.");
    EXPECT_FAIL(y, mlx_scatter_add_axis(&y, a, idx, v, -3, S), "[scatter_add_axis] Received invalid axis");
    EXPECT_FAIL(y, mlx_put_along_axis(&y, a, flat, v, 0, S),
                "[put_along_axis] Indices of dimension 1 does not match array of dimension 2.");
    EXPECT_FAIL(y, mlx_put_along_axis(&y, a, fidx, v, 0, S),
                "[put_along_axis] Got indices with invalid dtype float32");
    EXPECT_FAIL(y, mlx_scatter_add_axis(&y, a, bidx, v, 0, S),
                "[scatter_add_axis] Got indices with invalid dtype bool");
    EXPECT_FAIL(y, mlx_put_along_axis(&y, a, idx, wide, 1, S),
                "[put_along_axis] Cannot squeeze axis 0 with size 2");
    /* indices (2, 1) against a's 3 rows: MLX names the shapes without the axis */
    EXPECT_FAIL(y, mlx_put_along_axis(&y, a, rows, v, 1, S),
                "[put_along_axis] Shapes (3) and (2) cannot be broadcast.");
    EXPECT_FAIL(y, mlx_scatter_add_axis(&y, a, idx, sq, 1, S),
                "[scatter_add_axis] Shapes (3,1) and (2,2) cannot be broadcast.");
    EXPECT_FAIL(y, mlx_put_along_axis(&y, none, idx, v, 0, S), "[put_along_axis]");
    EXPECT_FAIL(y, mlx_scatter_add_axis(&y, a, idx, none, 0, S), "[scatter_add_axis]");
    EXPECT_FAIL(y, mlx_scatter_add_axis(NULL, a, idx, v, 0, S), "[scatter_add_axis]");
    TU_FREE(a, y, idx, v, flat, fidx, bidx, wide, rows, sq);
}

/* ---- derivatives that finite differences cannot show ---- */

static int put_fn(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    (void)payload;
    mlx_array x[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()}, y = mlx_array_new();
    int rc = mlx_vector_array_get(&x[0], args, 0) || mlx_vector_array_get(&x[1], args, 1) ||
             mlx_vector_array_get(&x[2], args, 2) || mlx_scatter_add_axis(&y, x[0], x[1], x[2], 0, S) ||
             mlx_vector_array_set_value(res, y);
    TU_FREE(x[0], x[1], x[2], y);
    return rc;
}

static void test_scatter_has_no_derivative_for_its_indices(void **state)
{
    (void)state;
    /* MLX: "Cannot calculate VJP (JVP) with respect to indices." */
    mlx_array x[3] = {ARR(MLX_FLOAT32, VALS(0, 0), 2), ARR(MLX_INT32, VALS(1, 1), 2),
                      ARR(MLX_FLOAT32, VALS(1, 2), 2)};
    mlx_vector_array primals = mlx_vector_array_new_data(x, 3), cots = mlx_vector_array_new();
    mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_array w = ARR(MLX_FLOAT32, VALS(1, 1), 2);
    OK(mlx_vector_array_append_value(cots, w));
    mlx_closure f = mlx_closure_new_func_payload(put_fn, NULL, NULL);
    assert_int_not_equal(mlx_vjp(&outs, &grads, f, primals, cots), 0);
    assert_true(tu_last_error_has("Cannot calculate VJP with respect to indices."));
    tu_reset_errors();
    mlx_array t[3] = {ARR(MLX_FLOAT32, VALS(1, 1), 2), ARR(MLX_INT32, VALS(1, 1), 2),
                      ARR(MLX_FLOAT32, VALS(1, 1), 2)};
    mlx_vector_array tans = mlx_vector_array_new_data(t, 3);
    assert_int_not_equal(mlx_jvp(&outs, &grads, f, primals, tans), 0);
    assert_true(tu_last_error_has("Cannot calculate JVP with respect to indices."));
    tu_reset_errors();
    mlx_closure_free(f);
    mlx_vector_array_free(tans);
    mlx_vector_array_free(primals);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
    tu_free_n(t, 3);
    tu_free_n(x, 3);
    mlx_array_free(w);
}

static int take_fn(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    (void)payload;
    mlx_array x[2] = {mlx_array_new(), mlx_array_new()}, y = mlx_array_new();
    int rc = mlx_vector_array_get(&x[0], args, 0) || mlx_vector_array_get(&x[1], args, 1) ||
             mlx_take_along_axis(&y, x[0], x[1], 0, S) || mlx_vector_array_set_value(res, y);
    TU_FREE(x[0], x[1], y);
    return rc;
}

static void test_take_gives_its_indices_zero_cotangents(void **state)
{
    (void)state;
    /* MLX's GatherAxis::vjp: zeros of the indices' shape and dtype; the
     * array's cotangent adds up over the repeated index */
    mlx_array x[2] = {ARR(MLX_FLOAT32, VALS(1, 2, 3), 3), ARR(MLX_INT32, VALS(2, 2, 0, -1), 4)};
    mlx_vector_array primals = mlx_vector_array_new_data(x, 2), cots = mlx_vector_array_new();
    mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_array w = ARR(MLX_FLOAT32, VALS(1, 10, 100, 1000), 4), g = mlx_array_new();
    OK(mlx_vector_array_append_value(cots, w));
    mlx_closure f = mlx_closure_new_func_payload(take_fn, NULL, NULL);
    OK(mlx_vjp(&outs, &grads, f, primals, cots));
    OK(mlx_vector_array_get(&g, grads, 0));
    EXPECT_VALS(g, SHAPE(3), VALS(100, 0, 1011));
    OK(mlx_vector_array_get(&g, grads, 1));
    assert_int_equal(mlx_array_dtype(g), MLX_INT32);
    EXPECT_VALS(g, SHAPE(4), VALS(0, 0, 0, 0));
    /* and no tangent through the indices */
    mlx_vector_array tans = mlx_vector_array_new_data(x, 2);
    assert_int_not_equal(mlx_jvp(&outs, &grads, f, primals, tans), 0);
    assert_true(tu_last_error_has("Cannot calculate JVP with respect to indices."));
    tu_reset_errors();
    mlx_closure_free(f);
    mlx_vector_array_free(tans);
    mlx_vector_array_free(primals);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
    tu_free_n(x, 2);
    TU_FREE(w, g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_put_along_axis_writes_at_indices_with_negative_ones_counting_from_the_end),
        T(test_put_along_axis_broadcasts_indices_and_a_scalar_value),
        T(test_put_along_axis_repeated_index_keeps_the_last_value),
        T(test_put_along_axis_broadcasts_a_outside_the_axis),
        T(test_put_along_axis_drops_leading_unit_axes_of_values),
        T(test_put_along_axis_clamps_indices_outside_the_axis),
        T(test_put_along_axis_moves_every_element_size),
        T(test_put_along_axis_of_complex64),
        T(test_scatter_add_axis_accumulates_every_repeated_index),
        T(test_scatter_add_axis_broadcasts_values_along_rows),
        T(test_scatter_add_axis_clamps_indices_outside_the_axis),
        T(test_scatter_add_axis_on_the_middle_axis_of_3d),
        T(test_scatter_add_axis_of_transposed_operands),
        T(test_scatter_add_axis_sums_each_dtype_class),
        T(test_scatter_add_axis_casts_values_to_the_array_dtype),
        T(test_scatter_into_a_temporary_and_with_indices_that_are_the_array),
        T(test_scatter_of_an_empty_array_returns_it),
        T(test_scatter_bad_arguments_fail_with_one_message),
        T(test_scatter_has_no_derivative_for_its_indices),
        T(test_take_gives_its_indices_zero_cotangents),
#undef T
    };
    return cmocka_run_group_tests_name("scatter", tests, tu_group_setup, tu_group_teardown);
}
