/* The eval suite: how lazy graphs are evaluated (deep chains without
 * recursion, shared nodes once, intermediates freed early, buffer
 * donation), the transforms entry points, and the values of the first ops:
 * creation (arange, linspace, eye, zeros/ones/full and _like), views
 * (reshape, transpose, broadcast_to) and arithmetic with broadcasting. */
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "test_util.h"

#define S tu_stream()

static size_t peak_memory(void)
{
    size_t n = 0;
    assert_int_equal(mlx_get_peak_memory(&n), 0);
    return n;
}

/* Runs fn(arg) on a thread with a small stack: a recursive walk over a
 * 100,000-node graph would overflow it (and crash the test). */
static void run_on_small_stack(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t th;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
    assert_int_equal(pthread_create(&th, &attr, fn, arg), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
}

enum { CHAIN = 100000 };

typedef struct chain_job {
    mlx_array x;
    int rc;
} chain_job;

static void *eval_job(void *p)
{
    chain_job *j = p;
    j->rc = mlx_array_eval(j->x);
    return NULL;
}

static void *free_job(void *p)
{
    chain_job *j = p;
    j->rc = mlx_array_free(j->x);
    return NULL;
}

/* x = 0; x = x + 1, CHAIN times, lazily. */
static mlx_array build_chain(void)
{
    mlx_array x = mlx_array_new_float(0), one = mlx_array_new_float(1);
    for (int i = 0; i < CHAIN; i++)
        assert_int_equal(mlx_add(&x, x, one, S), 0);
    mlx_array_free(one);
    return x;
}

static void test_deep_chain_evaluates_without_recursion(void **state)
{
    (void)state;
    size_t before = tu_active_memory();
    chain_job j = {build_chain(), -1};
    run_on_small_stack(eval_job, &j);
    assert_int_equal(j.rc, 0);
    float v = 0;
    assert_int_equal(mlx_array_item_float32(&v, j.x), 0);
    assert_true(v == (float)CHAIN);
    /* the 100,000 intermediates are gone: about one scalar is left */
    assert_true(tu_active_memory() - before < 64 * 1024);
    mlx_array_free(j.x);
}

static void test_freeing_an_unevaluated_deep_chain_does_not_recurse(void **state)
{
    (void)state;
    chain_job j = {build_chain(), -1};
    run_on_small_stack(free_job, &j);
    assert_int_equal(j.rc, 0);
}

static void test_deep_diamond_ladder_evaluates_each_node_once(void **state)
{
    (void)state;
    /* x_{k+1} = x_k + x_k: every node is read twice. Visiting shared nodes
     * more than once would take 2^200 steps; once each takes 200. */
    mlx_array x = mlx_array_new_float64(1);
    for (int k = 0; k < 200; k++)
        assert_int_equal(mlx_add(&x, x, x, S), 0);
    double v = 0;
    assert_int_equal(mlx_array_item_float64(&v, x), 0);
    assert_true(v == ldexp(1.0, 200));
    mlx_array_free(x);
}

static void test_diamond_graph_values(void **state)
{
    (void)state;
    /* a = x + 1; b = a * 2; c = a * 3; d = b + c = 5 (x + 1) */
    float xv[3] = {0, 1, 2};
    int shape[1] = {3};
    mlx_array x = tu_f32(xv, shape, 1), one = mlx_array_new_float(1), two = mlx_array_new_float(2),
              three = mlx_array_new_float(3);
    mlx_array a = mlx_array_new(), b = mlx_array_new(), c = mlx_array_new(), d = mlx_array_new();
    assert_int_equal(mlx_add(&a, x, one, S), 0);
    assert_int_equal(mlx_multiply(&b, a, two, S), 0);
    assert_int_equal(mlx_multiply(&c, a, three, S), 0);
    assert_int_equal(mlx_add(&d, b, c, S), 0);
    TU_FREE(a, b, c); /* only d holds the diamond now */
    for (int i = 0; i < 3; i++)
        assert_true(tu_get(d, (size_t)i) == 5 * (xv[i] + 1));
    assert_true(tu_get(x, 2) == 2); /* x is still held: not overwritten */
    TU_FREE(x, one, two, three, d);
}

static void test_intermediates_are_freed_during_eval(void **state)
{
    (void)state;
    /* float32 <-> float64 conversions cannot donate (item sizes differ),
     * so each step allocates; freeing each input right after its consumer
     * keeps at most two steps alive instead of all twenty */
    enum { N = 1 << 18, STEPS = 20 };
    size_t f64_bytes = (size_t)N * 8;
    size_t base = tu_active_memory();
    int shape[1] = {N};
    mlx_array x = mlx_array_new();
    assert_int_equal(mlx_ones(&x, shape, 1, MLX_FLOAT32, S), 0);
    for (int k = 0; k < STEPS; k++)
        assert_int_equal(mlx_astype(&x, x, k % 2 ? MLX_FLOAT32 : MLX_FLOAT64, S), 0);
    assert_int_equal(mlx_reset_peak_memory(), 0);
    assert_int_equal(mlx_array_eval(x), 0);
    size_t peak = peak_memory();
    assert_true(peak <= base + 2 * f64_bytes);
    assert_true(tu_active_memory() - base <= (size_t)N * 4 + 4096); /* just the float32 result */
    assert_true(tu_get(x, N - 1) == 1);
    mlx_array_free(x);
}

static int managed_calls;
static void managed_dtor(void *p)
{
    (void)p;
    managed_calls++;
}

static void test_input_held_only_by_the_graph_dies_during_eval(void **state)
{
    (void)state;
    managed_calls = 0;
    float buf[4] = {1, 2, 3, 4};
    int shape[1] = {4};
    mlx_array x = mlx_array_new_data_managed(buf, shape, 1, MLX_FLOAT32, managed_dtor);
    mlx_array y = mlx_array_new(), one = mlx_array_new_float(1);
    assert_int_equal(mlx_add(&y, x, one, S), 0);
    mlx_array_free(x);
    assert_int_equal(managed_calls, 0);
    assert_int_equal(mlx_array_eval(y), 0);
    assert_int_equal(managed_calls, 1); /* released by eval, not at y's free */
    assert_true(tu_get(y, 3) == 5);
    TU_FREE(y, one);
}

static void test_output_reuses_a_dying_input_buffer(void **state)
{
    (void)state;
    /* y = (x + 1) * 2 with x held by nothing but the graph: x + 1 may take
     * x's buffer, and the product the sum's, so y ends in x's memory */
    enum { N = 1 << 16 };
    static float xv[N];
    for (int i = 0; i < N; i++)
        xv[i] = (float)i;
    int shape[1] = {N};
    mlx_array x = tu_f32(xv, shape, 1), one = mlx_array_new_float(1), two = mlx_array_new_float(2);
    const void *xdata = mc_arr(x)->data;
    mlx_array t = mlx_array_new(), y = mlx_array_new();
    assert_int_equal(mlx_add(&t, x, one, S), 0);
    assert_int_equal(mlx_multiply(&y, t, two, S), 0);
    TU_FREE(x, t);
    size_t base = tu_active_memory();
    assert_int_equal(mlx_reset_peak_memory(), 0);
    assert_int_equal(mlx_array_eval(y), 0);
    assert_ptr_equal(mlx_array_data_float32(y), xdata);
    assert_true(peak_memory() <= base + 4096); /* no new N-element buffer */
    assert_true(tu_get(y, 10) == 22);
    assert_true(tu_get(y, N - 1) == 2.0f * (float)N);
    TU_FREE(one, two, y);
}

static void test_held_input_is_not_overwritten_but_intermediate_is_reused(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    static float xv[N];
    for (int i = 0; i < N; i++)
        xv[i] = (float)i;
    int shape[1] = {N};
    mlx_array x = tu_f32(xv, shape, 1), one = mlx_array_new_float(1), two = mlx_array_new_float(2);
    mlx_array t = mlx_array_new(), y = mlx_array_new();
    assert_int_equal(mlx_add(&t, x, one, S), 0);
    assert_int_equal(mlx_multiply(&y, t, two, S), 0);
    mlx_array_free(t);
    size_t base = tu_active_memory();
    assert_int_equal(mlx_reset_peak_memory(), 0);
    assert_int_equal(mlx_array_eval(y), 0);
    assert_ptr_not_equal(mlx_array_data_float32(y), mlx_array_data_float32(x));
    assert_memory_equal(mlx_array_data_float32(x), xv, sizeof xv);
    /* one buffer for t, which y then took: not two */
    assert_true(peak_memory() <= base + (size_t)N * 4 + 4096);
    assert_true(tu_get(y, 7) == 16);
    TU_FREE(x, one, two, y);
}

static void test_buffer_still_read_by_a_view_is_not_donated(void **state)
{
    (void)state;
    float xv[6] = {0, 1, 2, 3, 4, 5};
    int shape[2] = {2, 3}, flat[1] = {6};
    mlx_array x = tu_f32(xv, shape, 2), v = mlx_array_new(), y = mlx_array_new(), one = mlx_array_new_float(1);
    assert_int_equal(mlx_reshape(&v, x, flat, 1, S), 0);
    assert_int_equal(mlx_array_eval(v), 0); /* v shares x's buffer */
    assert_int_equal(mlx_add(&y, x, one, S), 0);
    mlx_array_free(x); /* x's descriptor is the graph's alone, its buffer is not */
    assert_int_equal(mlx_array_eval(y), 0);
    for (int i = 0; i < 6; i++) {
        assert_true(tu_get(v, (size_t)i) == xv[i]);
        assert_true(tu_get(y, (size_t)i) == xv[i] + 1);
    }
    TU_FREE(v, y, one);
}

static void test_eval_of_an_evaluated_array_changes_nothing(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(3), y = mlx_array_new();
    assert_int_equal(mlx_multiply(&y, x, x, S), 0);
    assert_int_equal(mlx_array_eval(y), 0);
    const float *p = mlx_array_data_float32(y);
    size_t base = tu_active_memory();
    assert_int_equal(mlx_reset_peak_memory(), 0);
    assert_int_equal(mlx_array_eval(y), 0);
    assert_int_equal(mlx_array_eval(x), 0);
    assert_ptr_equal(mlx_array_data_float32(y), p);
    assert_true(peak_memory() <= base);
    assert_true(*p == 9);
    TU_FREE(x, y);
}

static void test_eval_of_a_vector_with_shared_nodes(void **state)
{
    (void)state;
    float xv[2] = {1, 2};
    int shape[1] = {2};
    mlx_array x = tu_f32(xv, shape, 1), one = mlx_array_new_float(1), two = mlx_array_new_float(2);
    mlx_array a = mlx_array_new(), b = mlx_array_new(), c = mlx_array_new();
    assert_int_equal(mlx_add(&a, x, one, S), 0);      /* 2 3 */
    assert_int_equal(mlx_multiply(&b, a, two, S), 0); /* 4 6 */
    assert_int_equal(mlx_add(&c, a, b, S), 0);        /* 6 9 */
    mlx_array outs[5] = {b, c, a, c, x};              /* a duplicate and a data array */
    mlx_vector_array vec = mlx_vector_array_new_data(outs, 5);
    assert_int_equal(mlx_eval(vec), 0);
    bool av;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(_mlx_array_is_available(&av, outs[i]), 0);
        assert_true(av);
    }
    assert_true(tu_get(a, 1) == 3 && tu_get(b, 1) == 6 && tu_get(c, 0) == 6 && tu_get(c, 1) == 9);
    mlx_vector_array_free(vec);
    TU_FREE(x, one, two, a, b, c);
}

static void test_eval_of_an_empty_vector_is_fine(void **state)
{
    (void)state;
    mlx_vector_array vec = mlx_vector_array_new();
    assert_int_equal(mlx_eval(vec), 0);
    mlx_vector_array_free(vec);
}

static void test_async_eval_then_read(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_int(20), one = mlx_array_new_int(1), y = mlx_array_new();
    assert_int_equal(mlx_subtract(&y, x, one, S), 0);
    mlx_vector_array vec = mlx_vector_array_new_value(y);
    assert_int_equal(mlx_async_eval(vec), 0);
    assert_int_equal(_mlx_array_wait(y), 0);
    int32_t v = 0;
    assert_int_equal(mlx_array_item_int32(&v, y), 0);
    assert_int_equal(v, 19);
    mlx_vector_array_free(vec);
    TU_FREE(x, one, y);
}

/* ---- creation ---- */

static mlx_array arange(double start, double stop, double step, mlx_dtype d)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_arange(&r, start, stop, step, d, S), 0);
    assert_int_equal(mlx_array_dtype(r), d);
    return r;
}

static void expect_values(mlx_array a, const double *want, size_t n)
{
    assert_int_equal(mlx_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        if (tu_get(a, i) != want[i])
            fail_msg("element %zu is %.17g, want %.17g", i, tu_get(a, i), want[i]);
}

static void test_arange_float_int_and_negative_steps(void **state)
{
    (void)state;
    mlx_array a = arange(0, 5, 1, MLX_FLOAT32);
    expect_values(a, (double[]){0, 1, 2, 3, 4}, 5);
    mlx_array b = arange(1, 2, 0.25, MLX_FLOAT32);
    expect_values(b, (double[]){1, 1.25, 1.5, 1.75}, 4);
    mlx_array c = arange(10, 0, -3, MLX_INT32);
    expect_values(c, (double[]){10, 7, 4, 1}, 4);
    mlx_array d = arange(1, -1, -0.5, MLX_FLOAT64);
    expect_values(d, (double[]){1, 0.5, 0, -0.5}, 4);
    mlx_array e = arange(250, 256, 2, MLX_UINT8);
    expect_values(e, (double[]){250, 252, 254}, 3);
    mlx_array f = arange(0, 2, 0.5, MLX_FLOAT16);
    expect_values(f, (double[]){0, 0.5, 1, 1.5}, 4);
    mlx_array g = arange(-2, 1, 1, MLX_BFLOAT16);
    expect_values(g, (double[]){-2, -1, 0}, 3);
    double big = 1099511627776.0; /* 2^40: exact in int64, not in float32 */
    mlx_array h = arange(big, big + 3, 1, MLX_INT64);
    const int64_t *hv = mlx_array_data_int64(h);
    assert_true(hv[0] == 1099511627776ll && hv[2] == 1099511627778ll);
    TU_FREE(a, b, c, d, e, f, g, h);
}

static void test_arange_empty_and_infinite_step_ranges(void **state)
{
    (void)state;
    mlx_array a = arange(5, 0, 1, MLX_FLOAT32); /* wrong direction: empty */
    assert_int_equal(mlx_array_size(a), 0);
    assert_int_equal(mlx_array_ndim(a), 1);
    assert_int_equal(mlx_array_eval(a), 0);
    mlx_array b = arange(3, 3, 1, MLX_INT32);
    assert_int_equal(mlx_array_size(b), 0);
    mlx_array c = arange(2, 5, INFINITY, MLX_FLOAT32); /* MLX: just the start */
    expect_values(c, (double[]){2}, 1);
    mlx_array d = arange(5, 2, INFINITY, MLX_FLOAT32);
    assert_int_equal(mlx_array_size(d), 0);
    TU_FREE(a, b, c, d);
}

static void test_arange_integer_dtype_steps_by_the_converted_step(void **state)
{
    (void)state;
    /* MLX (backend/cpu/arange.h) converts start and start + step to the
     * dtype and steps by their difference: int32(0.5) = 0, int32(2.0) = 2,
     * so the step is 2 and the three elements are 0 2 4 */
    mlx_array a = arange(0.5, 5, 1.5, MLX_INT32);
    expect_values(a, (double[]){0, 2, 4}, 3);
    TU_FREE(a);
}

static void test_arange_float32_accumulates_the_step_like_mlx(void **state)
{
    (void)state;
    /* MLX adds the float32 step to a float32 running value; the expected
     * values are computed the same way here */
    mlx_array a = arange(0, 1, 0.1, MLX_FLOAT32);
    assert_int_equal(mlx_array_size(a), 10);
    float v = 0.0f, step = (float)(0.0 + 0.1) - v;
    const float *got = mlx_array_data_float32(a);
    for (int i = 0; i < 10; i++, v += step)
        if (got[i] != v)
            fail_msg("arange(0, 1, 0.1)[%d] = %a, MLX gives %a", i, (double)got[i], (double)v);
    mlx_array_free(a);
}

static void test_arange_refuses_bool_zero_step_and_nan(void **state)
{
    (void)state;
    mlx_array r = mlx_array_new();
    assert_int_not_equal(mlx_arange(&r, 0, 5, 1, MLX_BOOL, S), 0);
    tu_expect_error("[arange]");
    assert_int_not_equal(mlx_arange(&r, 0, 5, 0, MLX_FLOAT32, S), 0);
    tu_expect_error("[arange]");
    assert_int_not_equal(mlx_arange(&r, NAN, 5, 1, MLX_FLOAT32, S), 0);
    tu_expect_error("[arange]");
    assert_int_not_equal(mlx_arange(&r, 0, NAN, 1, MLX_FLOAT32, S), 0);
    tu_expect_error("[arange]");
    assert_int_not_equal(mlx_arange(&r, 0, 5, NAN, MLX_FLOAT32, S), 0);
    tu_expect_error("[arange]");
    assert_int_not_equal(mlx_arange(&r, -INFINITY, 5, 1, MLX_FLOAT32, S), 0);
    tu_expect_error("[arange]");
    assert_int_not_equal(mlx_arange(&r, 0, 1e12, 1, MLX_FLOAT32, S), 0); /* > INT_MAX elements */
    tu_expect_error("[arange]");
    assert_null(r.ctx);
}

static mlx_array linspace(double a, double b, int num, mlx_dtype d)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_linspace(&r, a, b, num, d, S), 0);
    assert_int_equal(mlx_array_dtype(r), d);
    assert_int_equal(mlx_array_ndim(r), 1);
    return r;
}

static void test_linspace_values(void **state)
{
    (void)state;
    mlx_array a = linspace(0, 1, 0, MLX_FLOAT32);
    assert_int_equal(mlx_array_size(a), 0);
    assert_int_equal(mlx_array_eval(a), 0);
    mlx_array b = linspace(3, 7, 1, MLX_FLOAT32);
    expect_values(b, (double[]){3}, 1);
    mlx_array c = linspace(0, 1, 5, MLX_FLOAT32);
    expect_values(c, (double[]){0, 0.25, 0.5, 0.75, 1}, 5);
    mlx_array d = linspace(-1, 3, 5, MLX_FLOAT32);
    expect_values(d, (double[]){-1, 0, 1, 2, 3}, 5);
    mlx_array e = linspace(0, 10, 5, MLX_INT32); /* 2.5 and 7.5 truncate */
    expect_values(e, (double[]){0, 2, 5, 7, 10}, 5);
    /* float64 is computed in float64. numpy 1.24's np.linspace(0, 1, 7) is
     * i / 6 in double, which MLX's (1 - t) * 0 + t * 1 also gives */
    mlx_array f = linspace(0, 1, 7, MLX_FLOAT64);
    for (int i = 0; i < 7; i++)
        assert_true(fabs(tu_get(f, (size_t)i) - i / 6.0) <= 1e-16);
    assert_true(tu_get(f, 1) == 0.16666666666666666);
    mlx_array g = linspace(2, -2, 3, MLX_FLOAT64); /* descending */
    expect_values(g, (double[]){2, 0, -2}, 3);
    TU_FREE(a, b, c, d, e, f, g);
}

static void test_linspace_negative_count_fails(void **state)
{
    (void)state;
    mlx_array r = mlx_array_new();
    assert_int_not_equal(mlx_linspace(&r, 0, 1, -1, MLX_FLOAT32, S), 0);
    tu_expect_error("[linspace]");
    assert_null(r.ctx);
}

static void expect_eye(mlx_array e, int n, int m, int k)
{
    int shape[2] = {n, m};
    assert_true(tu_shape_is(e, 2, shape));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (tu_get(e, (size_t)(i * m + j)) != (j - i == k ? 1 : 0))
                fail_msg("eye(%d,%d,k=%d)[%d][%d] = %g", n, m, k, i, j, tu_get(e, (size_t)(i * m + j)));
}

static void test_eye_and_identity_place_the_diagonal(void **state)
{
    (void)state;
    static const int cases[][3] = {{3, 4, 1}, {3, 3, -1}, {4, 3, -2}, {2, 3, 5}, {3, 2, -5},
                                   {3, 3, 0}, {0, 3, 0}, {3, 0, 1},  {1, 1, 0}, {2, 5, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mlx_array e = mlx_array_new();
        assert_int_equal(mlx_eye(&e, cases[c][0], cases[c][1], cases[c][2], MLX_FLOAT32, S), 0);
        expect_eye(e, cases[c][0], cases[c][1], cases[c][2]);
        mlx_array_free(e);
    }
    static const mlx_dtype dts[] = {MLX_INT32, MLX_BOOL, MLX_FLOAT16, MLX_BFLOAT16, MLX_UINT64, MLX_COMPLEX64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        mlx_array e = mlx_array_new();
        assert_int_equal(mlx_identity(&e, 3, dts[k], S), 0);
        assert_int_equal(mlx_array_dtype(e), dts[k]);
        expect_eye(e, 3, 3, 0);
        mlx_array_free(e);
    }
}

static void test_eye_refuses_negative_sizes(void **state)
{
    (void)state;
    mlx_array e = mlx_array_new();
    assert_int_not_equal(mlx_eye(&e, -1, 3, 0, MLX_FLOAT32, S), 0);
    tu_expect_error("[eye]");
    assert_int_not_equal(mlx_identity(&e, -2, MLX_FLOAT32, S), 0);
    tu_expect_error("[identity]");
    assert_null(e.ctx);
}

static void expect_all(mlx_array a, double want)
{
    size_t n = mlx_array_size(a);
    for (size_t i = 0; i < n; i++)
        if (tu_get(a, i) != want)
            fail_msg("element %zu is %g, want %g", i, tu_get(a, i), want);
}

static void test_zeros_ones_full_for_several_dtypes_and_shapes(void **state)
{
    (void)state;
    static const mlx_dtype dts[] = {MLX_BOOL,    MLX_UINT8,   MLX_INT16,   MLX_INT64,   MLX_FLOAT16,
                                    MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16, MLX_COMPLEX64, MLX_UINT32};
    int shapes[3][3] = {{2, 3, 0}, {0, 4, 0}, {5, 0, 0}};
    int ndims[3] = {2, 2, 1};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        for (int s = 0; s < 3; s++) {
            mlx_array z = mlx_array_new(), o = mlx_array_new(), f = mlx_array_new();
            mlx_array v = mlx_array_new_float(3.0f);
            assert_int_equal(mlx_zeros(&z, shapes[s], (size_t)ndims[s], dts[k], S), 0);
            assert_int_equal(mlx_ones(&o, shapes[s], (size_t)ndims[s], dts[k], S), 0);
            assert_int_equal(mlx_full(&f, shapes[s], (size_t)ndims[s], v, dts[k], S), 0);
            mlx_array all[3] = {z, o, f};
            for (int i = 0; i < 3; i++) {
                assert_int_equal(mlx_array_dtype(all[i]), dts[k]);
                assert_true(tu_shape_is(all[i], ndims[s], shapes[s]));
                assert_int_equal(mlx_array_eval(all[i]), 0);
            }
            expect_all(z, 0);
            expect_all(o, 1);
            expect_all(f, dts[k] == MLX_BOOL ? 1 : 3);
            TU_FREE(z, o, f, v);
        }
    }
    mlx_array s = mlx_array_new();
    assert_int_equal(mlx_zeros(&s, NULL, 0, MLX_INT32, S), 0); /* 0-d */
    assert_int_equal(mlx_array_ndim(s), 0);
    assert_int_equal(mlx_array_size(s), 1);
    expect_all(s, 0);
    mlx_array_free(s);
}

static void test_full_broadcasts_and_converts_its_values(void **state)
{
    (void)state;
    int32_t row[3] = {1, 2, 3};
    int rshape[1] = {3}, shape[2] = {2, 3};
    mlx_array vals = tu_i32(row, rshape, 1), f = mlx_array_new();
    assert_int_equal(mlx_full(&f, shape, 2, vals, MLX_FLOAT32, S), 0);
    expect_values(f, (double[]){1, 2, 3, 1, 2, 3}, 6);
    /* the result owns its memory: row-major, not a broadcast view */
    assert_int_equal(mlx_array_strides(f)[0], 3);
    mlx_array g = mlx_array_new(), v = mlx_array_new_float(-2.7f);
    assert_int_equal(mlx_full(&g, shape, 2, v, MLX_INT8, S), 0);
    expect_all(g, -2); /* truncated */
    mlx_array c = mlx_array_new(), cv = mlx_array_new_complex(1, -1);
    assert_int_equal(mlx_full(&c, shape, 2, cv, MLX_COMPLEX64, S), 0);
    const mlx_complex64_t *cd = mlx_array_data_complex64(c);
    assert_true(crealf(cd[5]) == 1 && cimagf(cd[5]) == -1);
    TU_FREE(vals, f, g, v, c, cv);
}

static void test_like_ops_take_shape_and_dtype_from_the_array(void **state)
{
    (void)state;
    int shape[2] = {2, 2};
    double v[4] = {1, 2, 3, 4};
    static const mlx_dtype dts[] = {MLX_FLOAT16, MLX_UINT8, MLX_INT32, MLX_FLOAT64, MLX_BOOL, MLX_COMPLEX64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        mlx_array a = tu_array_of(dts[k], v, shape, 2), z = mlx_array_new(), o = mlx_array_new();
        assert_int_equal(mlx_zeros_like(&z, a, S), 0);
        assert_int_equal(mlx_ones_like(&o, a, S), 0);
        assert_int_equal(mlx_array_dtype(z), dts[k]);
        assert_int_equal(mlx_array_dtype(o), dts[k]);
        assert_true(tu_shape_is(z, 2, shape) && tu_shape_is(o, 2, shape));
        expect_all(z, 0);
        expect_all(o, 1);
        TU_FREE(a, z, o);
    }
    int32_t iv[4] = {0};
    mlx_array a = tu_i32(iv, shape, 2), fv = mlx_array_new_float(7.5f), f = mlx_array_new();
    assert_int_equal(mlx_full_like(&f, a, fv, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_array_dtype(f), MLX_FLOAT32);
    assert_true(tu_shape_is(f, 2, shape));
    expect_all(f, 7.5);
    mlx_array g = mlx_array_new();
    assert_int_equal(mlx_full_like(&g, a, fv, MLX_INT32, S), 0);
    expect_all(g, 7);
    int zero[2] = {0, 3};
    mlx_array e = tu_f32(NULL, zero, 2), ez = mlx_array_new();
    assert_int_equal(mlx_zeros_like(&ez, e, S), 0);
    assert_true(tu_shape_is(ez, 2, zero));
    assert_int_equal(mlx_array_eval(ez), 0);
    TU_FREE(a, fv, f, g, e, ez);
}

/* ---- views ---- */

static void test_reshape_infers_minus_one_and_keeps_order(void **state)
{
    (void)state;
    float v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (float)i;
    int shape[3] = {2, 3, 4}, to[2] = {-1, 4}, want[2] = {6, 4};
    mlx_array a = tu_f32(v, shape, 3), r = mlx_array_new();
    assert_int_equal(mlx_reshape(&r, a, to, 2, S), 0);
    assert_true(tu_shape_is(r, 2, want));
    for (int i = 0; i < 24; i++)
        assert_true(tu_get(r, (size_t)i) == i);
    /* a view: no copy */
    assert_ptr_equal(mlx_array_data_float32(r), mlx_array_data_float32(a));
    int to3[3] = {4, -1, 2}, want3[3] = {4, 3, 2};
    mlx_array r3 = mlx_array_new();
    assert_int_equal(mlx_reshape(&r3, a, to3, 3, S), 0);
    assert_true(tu_shape_is(r3, 3, want3));
    int scalar_shape[1] = {1};
    mlx_array one = mlx_array_new_float(5), r0 = mlx_array_new();
    assert_int_equal(mlx_reshape(&r0, one, scalar_shape, 1, S), 0);
    assert_true(tu_get(r0, 0) == 5);
    TU_FREE(a, r, r3, one, r0);
}

static void test_reshape_of_a_transposed_array_copies_in_logical_order(void **state)
{
    (void)state;
    float v[6] = {0, 1, 2, 3, 4, 5}; /* [[0 1 2] [3 4 5]] */
    int shape[2] = {2, 3}, flat[1] = {6};
    mlx_array a = tu_f32(v, shape, 2), t = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, S), 0);
    assert_int_equal(mlx_reshape(&r, t, flat, 1, S), 0);
    expect_values(r, (double[]){0, 3, 1, 4, 2, 5}, 6);
    assert_int_equal(mlx_array_strides(r)[0], 1);
    TU_FREE(a, t, r);
}

static void test_reshape_of_a_broadcast_view_materialises_the_rows(void **state)
{
    (void)state;
    float row[3] = {7, 8, 9};
    int rshape[1] = {3}, bshape[2] = {2, 3}, flat[1] = {6};
    mlx_array x = tu_f32(row, rshape, 1), b = mlx_array_new(), rb = mlx_array_new();
    assert_int_equal(mlx_broadcast_to(&b, x, bshape, 2, S), 0);
    assert_int_equal(mlx_array_eval(b), 0);
    assert_int_equal(mlx_reshape(&rb, b, flat, 1, S), 0);
    expect_values(rb, (double[]){7, 8, 9, 7, 8, 9}, 6);
    TU_FREE(x, b, rb);
}

static void test_reshape_of_a_transposed_3d_array_into_2d(void **state)
{
    (void)state;
    float v24[24];
    for (int i = 0; i < 24; i++)
        v24[i] = (float)i;
    int s3[3] = {2, 3, 4}, to2[2] = {4, 6};
    mlx_array c = tu_f32(v24, s3, 3), ct = mlx_array_new(), cr = mlx_array_new();
    assert_int_equal(mlx_transpose(&ct, c, S), 0); /* (4,3,2): ct[i][j][k] = c[k][j][i] */
    assert_int_equal(mlx_reshape(&cr, ct, to2, 2, S), 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++)
                if (tu_get(cr, (size_t)(i * 6 + j * 2 + k)) != v24[k * 12 + j * 4 + i])
                    fail_msg("element (%d,%d) is %g, want %g", i, j * 2 + k,
                             tu_get(cr, (size_t)(i * 6 + j * 2 + k)), (double)v24[k * 12 + j * 4 + i]);
    TU_FREE(c, ct, cr);
}

static void test_arithmetic_reads_evaluated_broadcast_views(void **state)
{
    (void)state;
    float row[3] = {1, 2, 3}, m[6] = {10, 20, 30, 40, 50, 60};
    int rshape[1] = {3}, shape[2] = {2, 3};
    mlx_array x = tu_f32(row, rshape, 1), y = tu_f32(m, shape, 2), b = mlx_array_new(), r = mlx_array_new(),
              q = mlx_array_new();
    assert_int_equal(mlx_broadcast_to(&b, x, shape, 2, S), 0);
    assert_int_equal(mlx_array_eval(b), 0); /* strides (0,1), same size as y */
    assert_int_equal(mlx_add(&r, b, y, S), 0);
    expect_values(r, (double[]){11, 22, 33, 41, 52, 63}, 6);
    assert_int_equal(mlx_subtract(&q, y, b, S), 0);
    expect_values(q, (double[]){9, 18, 27, 39, 48, 57}, 6);
    assert_true(tu_get(x, 0) == 1 && tu_get(b, 3) == 1); /* inputs intact */
    TU_FREE(x, y, b, r, q);
}

static void test_transpose_reverses_axes(void **state)
{
    (void)state;
    float v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (float)i;
    int shape[3] = {2, 3, 4}, tshape[3] = {4, 3, 2};
    mlx_array a = tu_f32(v, shape, 3), t = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, S), 0);
    assert_true(tu_shape_is(t, 3, tshape));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++)
                assert_true(tu_get(t, (size_t)(i * 6 + j * 2 + k)) == v[k * 12 + j * 4 + i]);
    mlx_array s = mlx_array_new_float(2), ts = mlx_array_new(); /* 0-d: itself */
    assert_int_equal(mlx_transpose(&ts, s, S), 0);
    assert_int_equal(mlx_array_ndim(ts), 0);
    assert_true(tu_get(ts, 0) == 2);
    TU_FREE(a, t, s, ts);
}

static void test_broadcast_to_repeats_with_zero_strides(void **state)
{
    (void)state;
    float v[3] = {1, 2, 3};
    int shape[1] = {3}, to[3] = {2, 2, 3};
    mlx_array a = tu_f32(v, shape, 1), b = mlx_array_new();
    assert_int_equal(mlx_broadcast_to(&b, a, to, 3, S), 0);
    assert_true(tu_shape_is(b, 3, to));
    assert_int_equal(mlx_array_eval(b), 0);
    const size_t *st = mlx_array_strides(b);
    assert_int_equal(st[0], 0);
    assert_int_equal(st[1], 0);
    assert_int_equal(st[2], 1);
    for (int i = 0; i < 12; i++)
        assert_true(tu_get(b, (size_t)i) == v[i % 3]);

    float col[2] = {7, 8};
    int cshape[2] = {2, 1}, cto[2] = {2, 4};
    mlx_array c = tu_f32(col, cshape, 2), d = mlx_array_new();
    assert_int_equal(mlx_broadcast_to(&d, c, cto, 2, S), 0);
    assert_int_equal(mlx_array_eval(d), 0);
    st = mlx_array_strides(d);
    assert_int_equal(st[0], 1);
    assert_int_equal(st[1], 0);
    assert_true(tu_get(d, 5) == 8);
    mlx_array s = mlx_array_new_int(4), e = mlx_array_new(); /* 0-d to anything */
    assert_int_equal(mlx_broadcast_to(&e, s, cto, 2, S), 0);
    expect_all(e, 4);
    TU_FREE(a, b, c, d, s, e);
}

/* ---- arithmetic with broadcasting ---- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"add", "subtract", "multiply", "divide"};

static int run_op(int op, mlx_array *r, mlx_array a, mlx_array b)
{
    switch (op) {
    case OP_ADD: return mlx_add(r, a, b, S);
    case OP_SUB: return mlx_subtract(r, a, b, S);
    case OP_MUL: return mlx_multiply(r, a, b, S);
    default: return mlx_divide(r, a, b, S);
    }
}

/* What the op gives in dtype d on values that are exact there. */
static double expected_op(int op, mlx_dtype d, double x, double y)
{
    if (d == MLX_BOOL) {
        bool p = x != 0, q = y != 0;
        switch (op) {
        case OP_ADD: return p || q;
        case OP_MUL: return p && q;
        default: return (double)p / (double)q; /* divide is in float32 */
        }
    }
    double r = op == OP_ADD ? x + y : op == OP_SUB ? x - y : op == OP_MUL ? x * y : x / y;
    if (d == MLX_UINT8 && op != OP_DIV)
        r = fmod(fmod(r, 256) + 256, 256); /* wraps */
    return r;
}

static mlx_dtype expected_out(int op, mlx_dtype d)
{
    if (op == OP_DIV && (d == MLX_BOOL || d == MLX_INT32 || d == MLX_UINT8))
        return MLX_FLOAT32;
    return d;
}

typedef struct bcase {
    const char *name;
    int an, ashape[2];
    int bn, bshape[2];
    int on, oshape[2];
    bool transpose_a; /* a is built as its transpose's shape, then transposed */
} bcase;

static const bcase bcases[] = {
    {"(3,1)+(1,4)", 2, {3, 1}, 2, {1, 4}, 2, {3, 4}, false},
    {"scalar+vector", 0, {0}, 1, {4}, 1, {4}, false},
    {"vector+scalar", 1, {4}, 0, {0}, 1, {4}, false},
    {"(3,4)T+(3,4)", 2, {3, 4}, 2, {3, 4}, 2, {3, 4}, true},
    {"(3,4)T+(4,)", 2, {3, 4}, 1, {4}, 2, {3, 4}, true},
    {"(2,3)+(2,3)", 2, {2, 3}, 2, {2, 3}, 2, {2, 3}, false},
};

/* Element values: small and exact in every dtype tested; b has no zero
 * (divide), and bool gets a mix of true and false. */
static double a_val(mlx_dtype d, int i) { return d == MLX_BOOL ? (i % 2) : 1 + (i % 5); }
static double b_val(mlx_dtype d, int i) { return d == MLX_BOOL ? ((i % 3) != 0 || i == 0) : (double)(1 << (i % 4)); }

static size_t count_of(int n, const int *shape)
{
    size_t c = 1;
    for (int i = 0; i < n; i++)
        c *= (size_t)shape[i];
    return c;
}

/* The element of an operand (given in its own row-major order, or for
 * transpose_a in the order of the array before transposing) that output
 * element (r, c) of a 2-d (or 1-d) output reads. */
static double operand_at(const bcase *bc, int which, mlx_dtype d, const size_t *oidx)
{
    int n = which ? bc->bn : bc->an;
    const int *shape = which ? bc->bshape : bc->ashape;
    int off = bc->on - n;
    size_t lin = 0;
    if (which == 0 && bc->transpose_a) {
        /* a = T(base) with base of shape (ashape[1], ashape[0]) */
        size_t i = oidx[0], j = oidx[1];
        lin = j * (size_t)shape[0] + i;
    } else {
        for (int k = 0; k < n; k++) {
            size_t ix = shape[k] == 1 ? 0 : oidx[k + off];
            lin = lin * (size_t)shape[k] + ix;
        }
    }
    return which ? b_val(d, (int)lin) : a_val(d, (int)lin);
}

static void check_binary_case(int op, mlx_dtype d, const bcase *bc)
{
    size_t na = count_of(bc->an, bc->ashape), nb = count_of(bc->bn, bc->bshape);
    double av[16], bv[16];
    for (size_t i = 0; i < na; i++)
        av[i] = a_val(d, (int)i);
    for (size_t i = 0; i < nb; i++)
        bv[i] = b_val(d, (int)i);
    mlx_array a, b = tu_array_of(d, bv, bc->bshape, bc->bn), r = mlx_array_new();
    if (bc->transpose_a) {
        int base[2] = {bc->ashape[1], bc->ashape[0]};
        mlx_array t = tu_array_of(d, av, base, 2);
        a = mlx_array_new();
        assert_int_equal(mlx_transpose(&a, t, S), 0);
        mlx_array_free(t);
    } else {
        a = tu_array_of(d, av, bc->ashape, bc->an);
    }
    if (run_op(op, &r, a, b))
        fail_msg("%s %s on %d failed: %s", op_names[op], bc->name, (int)d, tu_last_error());
    assert_int_equal(mlx_array_dtype(r), expected_out(op, d));
    assert_true(tu_shape_is(r, bc->on, bc->oshape));
    size_t n = count_of(bc->on, bc->oshape);
    for (size_t i = 0; i < n; i++) {
        size_t oidx[2] = {0, 0};
        if (bc->on == 2) {
            oidx[0] = i / (size_t)bc->oshape[1];
            oidx[1] = i % (size_t)bc->oshape[1];
        } else {
            oidx[0] = i;
        }
        double x = operand_at(bc, 0, d, oidx), y = operand_at(bc, 1, d, oidx);
        double want = expected_op(op, d, x, y), got = tu_get(r, i);
        /* exact where the true result is representable; divide in the half
         * types and float32 may round (e.g. 1/3), by at most half an ulp */
        double tol = 0;
        if (op == OP_DIV) {
            mlx_dtype od = expected_out(op, d);
            tol = fabs(want) * (od == MLX_FLOAT16 ? 0x1p-11 : od == MLX_BFLOAT16 ? 0x1p-8
                                : od == MLX_FLOAT64 ? 0x1p-53 : 0x1p-24);
        }
        bool same = got == want || (isnan(got) && isnan(want)) || fabs(got - want) <= tol;
        if (!same)
            fail_msg("%s %s dtype %d: element %zu = %.9g, want %.9g", op_names[op], bc->name, (int)d, i, got,
                     want);
    }
    /* the output is a fresh row-major array */
    if (bc->on == 2) {
        assert_int_equal(mlx_array_strides(r)[0], (size_t)bc->oshape[1]);
        assert_int_equal(mlx_array_strides(r)[1], 1);
    }
    TU_FREE(a, b, r);
}

static void test_arithmetic_broadcasts_for_each_dtype(void **state)
{
    (void)state;
    static const mlx_dtype dts[] = {MLX_FLOAT32, MLX_INT32,   MLX_UINT8,   MLX_FLOAT16,
                                    MLX_BFLOAT16, MLX_FLOAT64, MLX_COMPLEX64, MLX_BOOL};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++)
        for (int op = 0; op < OP_COUNT; op++) {
            if (dts[k] == MLX_BOOL && op == OP_SUB)
                continue; /* MLX and numpy disagree on bool subtraction */
            for (size_t c = 0; c < sizeof bcases / sizeof bcases[0]; c++)
                check_binary_case(op, dts[k], &bcases[c]);
        }
}

static void test_complex_arithmetic_uses_both_parts(void **state)
{
    (void)state;
    mlx_complex64_t av[2] = {tu_c64(1, 2), tu_c64(0, 1)}, bv[2] = {tu_c64(3, -1), tu_c64(0, 1)};
    int shape[1] = {2};
    mlx_array a = mlx_array_new_data(av, shape, 1, MLX_COMPLEX64), b = mlx_array_new_data(bv, shape, 1, MLX_COMPLEX64);
    mlx_array r[OP_COUNT];
    mlx_complex64_t want[OP_COUNT][2] = {
        {tu_c64(4, 1), tu_c64(0, 2)},
        {tu_c64(-2, 3), tu_c64(0, 0)},
        {tu_c64(5, 5), tu_c64(-1, 0)},
        {tu_c64(0.1f, 0.7f), tu_c64(1, 0)},
    };
    for (int op = 0; op < OP_COUNT; op++) {
        r[op] = mlx_array_new();
        assert_int_equal(run_op(op, &r[op], a, b), 0);
        const mlx_complex64_t *got = mlx_array_data_complex64(r[op]);
        assert_non_null(got);
        for (int i = 0; i < 2; i++)
            if (cabsf(got[i] - want[op][i]) > 1e-6f)
                fail_msg("%s[%d] = %g%+gi", op_names[op], i, (double)crealf(got[i]), (double)cimagf(got[i]));
    }
    TU_FREE(a, b, r[0], r[1], r[2], r[3]);
}

static void test_arithmetic_on_empty_arrays_gives_empty_results(void **state)
{
    (void)state;
    int shape[2] = {0, 3}, row[1] = {3};
    float rv[3] = {1, 2, 3};
    mlx_array a = tu_f32(NULL, shape, 2), b = tu_f32(rv, row, 1), r = mlx_array_new();
    assert_int_equal(mlx_add(&r, a, b, S), 0);
    assert_true(tu_shape_is(r, 2, shape));
    assert_int_equal(mlx_array_eval(r), 0);
    TU_FREE(a, b, r);
}

static void test_an_op_may_write_over_its_own_input_handle(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(2);
    assert_int_equal(mlx_multiply(&x, x, x, S), 0); /* res aliases both inputs */
    assert_int_equal(mlx_add(&x, x, x, S), 0);
    assert_true(tu_get(x, 0) == 8);
    mlx_array_free(x);
}

static void test_large_arithmetic_split_over_threads_gives_every_value(void **state)
{
    (void)state;
    /* well above the size at which contiguous kernels are split over the
     * worker pool, and odd so the pieces are uneven */
    enum { N = 300001 };
    int shape[1] = {N};
    mlx_array x = mlx_array_new(), y = mlx_array_new(), two = mlx_array_new_float(2), s = mlx_array_new(),
              p = mlx_array_new();
    assert_int_equal(mlx_arange(&x, 0, N, 1, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_ones(&y, shape, 1, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_add(&s, x, y, S), 0);      /* vector-vector */
    assert_int_equal(mlx_multiply(&p, two, s, S), 0); /* scalar-vector */
    assert_int_equal(mlx_array_eval(p), 0);
    const float *pv = mlx_array_data_float32(p);
    for (int i = 0; i < N; i++)
        if (pv[i] != 2.0f * (float)(i + 1))
            fail_msg("element %d is %g", i, (double)pv[i]);
    TU_FREE(x, y, two, s, p);
}

static void test_large_broadcast_arithmetic_walks_strides(void **state)
{
    (void)state;
    enum { R = 700, C = 130 };
    int mshape[2] = {R, C}, rshape[1] = {C}, cshape[2] = {R, 1};
    mlx_array m = mlx_array_new(), row = mlx_array_new(), col = mlx_array_new(), a = mlx_array_new(),
              b = mlx_array_new(), t = mlx_array_new();
    assert_int_equal(mlx_arange(&m, 0, R * C, 1, MLX_INT32, S), 0);
    assert_int_equal(mlx_reshape(&m, m, mshape, 2, S), 0);
    assert_int_equal(mlx_arange(&row, 0, C, 1, MLX_INT32, S), 0);
    assert_int_equal(mlx_arange(&col, 0, R, 1, MLX_INT32, S), 0);
    assert_int_equal(mlx_reshape(&col, col, cshape, 2, S), 0);
    assert_true(tu_shape_is(row, 1, rshape));
    assert_int_equal(mlx_subtract(&a, m, row, S), 0); /* (R,C) - (C,) = i*C */
    assert_int_equal(mlx_multiply(&b, a, col, S), 0); /* * (R,1) = i*i*C */
    assert_int_equal(mlx_transpose(&t, b, S), 0);
    assert_int_equal(mlx_add(&t, t, t, S), 0);        /* strided read of a transposed view */
    assert_int_equal(mlx_array_eval(t), 0);
    const int32_t *tv = mlx_array_data_int32(t);
    for (int j = 0; j < C; j++)
        for (int i = 0; i < R; i++)
            if (tv[j * R + i] != 2 * i * i * C)
                fail_msg("t[%d][%d] = %d, want %d", j, i, tv[j * R + i], 2 * i * i * C);
    TU_FREE(m, row, col, a, b, t);
}

static void test_astype_of_non_contiguous_views(void **state)
{
    (void)state;
    int32_t v[6] = {1, 2, 3, 4, 5, 6};
    int shape[2] = {2, 3}, bshape[3] = {2, 2, 3};
    mlx_array a = tu_i32(v, shape, 2), t = mlx_array_new(), tf = mlx_array_new(), b = mlx_array_new(),
              bf = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, S), 0);
    assert_int_equal(mlx_astype(&tf, t, MLX_FLOAT64, S), 0);
    expect_values(tf, (double[]){1, 4, 2, 5, 3, 6}, 6);
    assert_int_equal(mlx_broadcast_to(&b, a, bshape, 3, S), 0);
    assert_int_equal(mlx_astype(&bf, b, MLX_FLOAT16, S), 0);
    expect_values(bf, (double[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 12);
    /* the conversions are materialised row-major */
    assert_int_equal(mlx_array_strides(tf)[0], 2);
    assert_int_equal(mlx_array_strides(bf)[0], 6);
    TU_FREE(a, t, tf, b, bf);
}

static void test_transpose_of_a_transpose_is_row_contiguous_again(void **state)
{
    (void)state;
    float v[6] = {0, 1, 2, 3, 4, 5};
    int shape[2] = {2, 3};
    mlx_array a = tu_f32(v, shape, 2), t = mlx_array_new(), tt = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, S), 0);
    assert_int_equal(mlx_transpose(&tt, t, S), 0);
    bool row = false;
    assert_int_equal(_mlx_array_is_row_contiguous(&row, tt), 0);
    assert_true(row);
    assert_ptr_equal(mlx_array_data_float32(tt), mlx_array_data_float32(a));
    expect_values(tt, (double[]){0, 1, 2, 3, 4, 5}, 6);
    TU_FREE(a, t, tt);
}

static void test_arithmetic_on_0d_arrays_gives_0d(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_int(7), b = mlx_array_new_int(-3), r = mlx_array_new();
    assert_int_equal(mlx_multiply(&r, a, b, S), 0);
    assert_int_equal(mlx_array_ndim(r), 0);
    int32_t v = 0;
    assert_int_equal(mlx_array_item_int32(&v, r), 0);
    assert_int_equal(v, -21);
    TU_FREE(a, b, r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_deep_chain_evaluates_without_recursion),
        T(test_freeing_an_unevaluated_deep_chain_does_not_recurse),
        T(test_deep_diamond_ladder_evaluates_each_node_once),
        T(test_diamond_graph_values),
        T(test_intermediates_are_freed_during_eval),
        T(test_input_held_only_by_the_graph_dies_during_eval),
        T(test_output_reuses_a_dying_input_buffer),
        T(test_held_input_is_not_overwritten_but_intermediate_is_reused),
        T(test_buffer_still_read_by_a_view_is_not_donated),
        T(test_eval_of_an_evaluated_array_changes_nothing),
        T(test_eval_of_a_vector_with_shared_nodes),
        T(test_eval_of_an_empty_vector_is_fine),
        T(test_async_eval_then_read),
        T(test_arange_float_int_and_negative_steps),
        T(test_arange_empty_and_infinite_step_ranges),
        T(test_arange_integer_dtype_steps_by_the_converted_step),
        T(test_arange_float32_accumulates_the_step_like_mlx),
        T(test_arange_refuses_bool_zero_step_and_nan),
        T(test_linspace_values),
        T(test_linspace_negative_count_fails),
        T(test_eye_and_identity_place_the_diagonal),
        T(test_eye_refuses_negative_sizes),
        T(test_zeros_ones_full_for_several_dtypes_and_shapes),
        T(test_full_broadcasts_and_converts_its_values),
        T(test_like_ops_take_shape_and_dtype_from_the_array),
        T(test_reshape_infers_minus_one_and_keeps_order),
        T(test_reshape_of_a_transposed_array_copies_in_logical_order),
        T(test_reshape_of_a_broadcast_view_materialises_the_rows),
        T(test_reshape_of_a_transposed_3d_array_into_2d),
        T(test_arithmetic_reads_evaluated_broadcast_views),
        T(test_transpose_reverses_axes),
        T(test_broadcast_to_repeats_with_zero_strides),
        T(test_arithmetic_broadcasts_for_each_dtype),
        T(test_complex_arithmetic_uses_both_parts),
        T(test_arithmetic_on_empty_arrays_gives_empty_results),
        T(test_an_op_may_write_over_its_own_input_handle),
        T(test_large_arithmetic_split_over_threads_gives_every_value),
        T(test_large_broadcast_arithmetic_walks_strides),
        T(test_astype_of_non_contiguous_views),
        T(test_transpose_of_a_transpose_is_row_contiguous_again),
        T(test_arithmetic_on_0d_arrays_gives_0d),
    };
    return cmocka_run_group_tests_name("eval", tests, tu_group_setup, tu_group_teardown);
}
