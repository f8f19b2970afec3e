/* The general gather and scatter ops (mlx_gather, mlx_scatter and its
 * reductions, their _single forms, slice_dynamic, slice_update_dynamic,
 * masked_scatter):
 *   - MLX's results on the cases of test/fixtures/gather_cases.h
 *     (scripts/make_scatter_fixtures.py ran MLX 0.31.1): negative indices,
 *     repeated indices, broadcast indices, several index dtypes;
 *   - the documented rule for out-of-range indices and starts (clamped so
 *     the block stays inside the array), where MLX reads or writes outside;
 *   - MLX's error messages for bad shapes, axes and dtypes;
 *   - a fuzz run of random, mostly out-of-range indices (run it under ASan:
 *     nothing is read or written outside a buffer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mlx/c/mlx.h"
#include "test_util.h"

#include "fixtures/gather_cases.h"

static mlx_array from_pool(mlx_dtype d, int off, int ndim, const int *shape)
{
    return tu_array_of(d, gs_vals + off, shape, ndim);
}

static int run_case(mlx_array *out, const gs_case *c)
{
    mlx_stream s = tu_stream();
    mlx_array a = from_pool(c->dtype, c->a_off, c->a_ndim, c->a_shape);
    mlx_array idx[2] = {mlx_array_new(), mlx_array_new()};
    for (int j = 0; j < c->nidx; j++)
        idx[j] = from_pool(c->idx_dtype, c->i_off[j], c->i_ndim[j], c->i_shape[j]);
    mlx_array u =
        c->u_ndim || c->op == GS_SCATTER ? from_pool(c->dtype, c->u_off, c->u_ndim, c->u_shape) : mlx_array_new();
    mlx_vector_array v = mlx_vector_array_new_data(idx, (size_t)c->nidx);
    int rc = 1;
    switch (c->op) {
    case GS_GATHER: rc = mlx_gather(out, a, v, c->axes, (size_t)c->naxes, c->sizes, (size_t)c->nsizes, s); break;
    case GS_SCATTER: rc = mlx_scatter(out, a, v, u, c->axes, (size_t)c->naxes, s); break;
    case GS_SCATTER_ADD: rc = mlx_scatter_add(out, a, v, u, c->axes, (size_t)c->naxes, s); break;
    case GS_SCATTER_PROD: rc = mlx_scatter_prod(out, a, v, u, c->axes, (size_t)c->naxes, s); break;
    case GS_SCATTER_MAX: rc = mlx_scatter_max(out, a, v, u, c->axes, (size_t)c->naxes, s); break;
    case GS_SCATTER_MIN: rc = mlx_scatter_min(out, a, v, u, c->axes, (size_t)c->naxes, s); break;
    case GS_SLICE_DYN:
        rc = mlx_slice_dynamic(out, a, idx[0], c->axes, (size_t)c->naxes, c->sizes, (size_t)c->nsizes, s);
        break;
    case GS_SLICE_UPD_DYN: rc = mlx_slice_update_dynamic(out, a, u, idx[0], c->axes, (size_t)c->naxes, s); break;
    case GS_MASKED: rc = mlx_masked_scatter(out, a, idx[0], u, s); break;
    }
    mlx_vector_array_free(v);
    mlx_array_free(a);
    mlx_array_free(u);
    tu_free_n(idx, 2);
    return rc;
}

static void test_results_equal_mlx_fixtures(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof gs_cases / sizeof gs_cases[0]; k++) {
        const gs_case *c = &gs_cases[k];
        mlx_array out = mlx_array_new();
        if (run_case(&out, c))
            fail_msg("%s: failed: %s", c->name, tu_last_error());
        if (!tu_shape_is(out, c->e_ndim, c->e_shape))
            fail_msg("%s: wrong shape", c->name);
        if (mlx_array_dtype(out) != c->dtype)
            fail_msg("%s: dtype %d, want %d", c->name, (int)mlx_array_dtype(out), (int)c->dtype);
        size_t n = mlx_array_size(out);
        for (size_t i = 0; i < n; i++)
            if (tu_get(out, i) != gs_vals[c->e_off + (int)i])
                fail_msg("%s: element %zu is %g, MLX %g", c->name, i, tu_get(out, i), gs_vals[c->e_off + (int)i]);
        mlx_array_free(out);
    }
}

/* The _single forms are the vector forms with one index array. */
static void test_single_forms_match_the_vector_forms(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    const double av[6] = {1, 2, 3, 4, 5, 6}, iv[3] = {2, -1, 0}, uv[6] = {10, 20, 30, 40, 50, 60};
    mlx_array a = tu_array_of(MLX_FLOAT32, av, (int[]){3, 2}, 2);
    mlx_array i = tu_array_of(MLX_INT32, iv, (int[]){3}, 1);
    mlx_array u = tu_array_of(MLX_FLOAT32, uv, (int[]){3, 1, 2}, 3);
    mlx_vector_array v = mlx_vector_array_new_value(i);
    const int ax = 0, sz[2] = {1, 2};
    typedef int (*vec_fn)(mlx_array *, mlx_array, mlx_vector_array, mlx_array, const int *, size_t, mlx_stream);
    typedef int (*one_fn)(mlx_array *, mlx_array, mlx_array, mlx_array, int, mlx_stream);
    vec_fn vf[5] = {mlx_scatter, mlx_scatter_add, mlx_scatter_prod, mlx_scatter_max, mlx_scatter_min};
    one_fn of[5] = {mlx_scatter_single, mlx_scatter_add_single, mlx_scatter_prod_single, mlx_scatter_max_single,
                    mlx_scatter_min_single};
    mlx_array r1 = mlx_array_new(), r2 = mlx_array_new();
    for (int k = 0; k < 5; k++) {
        assert_int_equal(vf[k](&r1, a, v, u, &ax, 1, s), 0);
        assert_int_equal(of[k](&r2, a, i, u, 0, s), 0);
        for (size_t e = 0; e < 6; e++)
            assert_true(tu_get(r1, e) == tu_get(r2, e));
    }
    assert_int_equal(mlx_gather(&r1, a, v, &ax, 1, sz, 2, s), 0);
    assert_int_equal(mlx_gather_single(&r2, a, i, 0, sz, 2, s), 0);
    assert_true(tu_shape_is(r2, 3, (int[]){3, 1, 2}));
    for (size_t e = 0; e < 6; e++)
        assert_true(tu_get(r1, e) == tu_get(r2, e));
    /* rows 2, -1 (= 2) and 0 */
    assert_true(tu_get(r2, 0) == 5 && tu_get(r2, 3) == 6 && tu_get(r2, 4) == 1);
    mlx_array_free(r1);
    mlx_array_free(r2);
    mlx_vector_array_free(v);
    mlx_array_free(a);
    mlx_array_free(i);
    mlx_array_free(u);
}

/* take and take_along_axis follow the same documented rule as gather: a
 * negative index counts from the end once, and what is still outside the
 * axis reads its nearest end (MLX reads outside the buffer). The hostile
 * values a new user tried, on a 4-element axis, with int64 indices. */
static void test_take_clamps_hostile_indices_to_the_axis(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    const double av[4] = {10, 11, 12, 13};
    mlx_array a = tu_array_of(MLX_FLOAT32, av, (int[]){4}, 1);
    const double iv[6] = {10, -100, 2147483647.0, -2147483648.0, 1099511627776.0, -1};
    const double want[6] = {13, 10, 13, 10, 13, 13};
    mlx_array i = tu_array_of(MLX_INT64, iv, (int[]){6}, 1);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_take(&r, a, i, s), 0);
    for (size_t e = 0; e < 6; e++)
        assert_true(tu_get(r, e) == want[e]);
    assert_int_equal(mlx_take_axis(&r, a, i, 0, s), 0);
    for (size_t e = 0; e < 6; e++)
        assert_true(tu_get(r, e) == want[e]);
    assert_int_equal(mlx_take_along_axis(&r, a, i, 0, s), 0);
    for (size_t e = 0; e < 6; e++)
        assert_true(tu_get(r, e) == want[e]);
    mlx_array_free(r);
    mlx_array_free(i);
    mlx_array_free(a);
}

/* Blocks larger than 1 on an indexed axis (numpy: a[i:i+2]); a start that
 * would run past the end is clamped so the block stays inside, and so is
 * an index past either end: mlx-cpu's documented rule. */
static void test_block_starts_are_clamped_inside_the_axis(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    double av[10];
    for (int k = 0; k < 10; k++)
        av[k] = k;
    mlx_array a = tu_array_of(MLX_FLOAT32, av, (int[]){10}, 1);
    const double iv[6] = {0, 3, 9, -1, 100, -100};
    mlx_array i = tu_array_of(MLX_INT64, iv, (int[]){6}, 1);
    const int sz = 3;
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_gather_single(&r, a, i, 0, &sz, 1, s), 0);
    assert_true(tu_shape_is(r, 2, (int[]){6, 3}));
    const double want_start[6] = {0, 3, 7, 7, 7, 0};
    for (int p = 0; p < 6; p++)
        for (int e = 0; e < 3; e++)
            assert_true(tu_get(r, (size_t)(p * 3 + e)) == want_start[p] + e);
    /* the scatter places blocks where the gather reads them */
    double uv[18];
    for (int k = 0; k < 18; k++)
        uv[k] = 1;
    mlx_array u = tu_array_of(MLX_FLOAT32, uv, (int[]){6, 3}, 2);
    assert_int_equal(mlx_scatter_add_single(&r, a, i, u, 0, s), 0);
    const double want[10] = {2, 3, 4, 4, 5, 6, 6, 10, 11, 12};
    for (int k = 0; k < 10; k++)
        assert_true(tu_get(r, (size_t)k) == want[k]);
    /* slice_dynamic with a start past the end, and a negative one (which
     * counts from the end; MLX reads before the array) */
    const double st = 42;
    mlx_array start = tu_array_of(MLX_INT32, &st, (int[]){1}, 1);
    const int ax0 = 0, sz4 = 4;
    assert_int_equal(mlx_slice_dynamic(&r, a, start, &ax0, 1, &sz4, 1, s), 0);
    assert_true(tu_get(r, 0) == 6 && tu_get(r, 3) == 9);
    mlx_array_free(start);
    const double neg = -5;
    start = tu_array_of(MLX_INT32, &neg, (int[]){1}, 1);
    assert_int_equal(mlx_slice_dynamic(&r, a, start, &ax0, 1, &sz4, 1, s), 0);
    assert_true(tu_get(r, 0) == 5 && tu_get(r, 3) == 8);
    mlx_array_free(start);
    mlx_array_free(u);
    mlx_array_free(r);
    mlx_array_free(i);
    mlx_array_free(a);
}

/* Enough index positions (of a 2-d index shape) that the gather splits
 * them across the pool: each piece starts at its own multi-index. */
static void test_large_gather_split_across_threads_is_exact(void **state)
{
    (void)state;
    enum { N = 997, R = 60, C = 700 };
    double *av = malloc(sizeof(double) * N);
    int32_t *iv = malloc(sizeof(int32_t) * R * C);
    assert_non_null(av);
    assert_non_null(iv);
    for (int k = 0; k < N; k++)
        av[k] = k;
    for (int k = 0; k < R * C; k++)
        iv[k] = (int32_t)((k * 7919) % (3 * N)) - N;
    mlx_array a = tu_array_of(MLX_INT32, av, (int[]){N}, 1);
    mlx_array i = tu_i32(iv, (int[]){R, C}, 2);
    mlx_array r = mlx_array_new();
    const int sz = 1;
    assert_int_equal(mlx_gather_single(&r, a, i, 0, &sz, 1, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    const int32_t *got = mlx_array_data_int32(r);
    for (int k = 0; k < R * C; k++) {
        int64_t v = iv[k] < 0 ? iv[k] + N : iv[k];
        v = v < 0 ? 0 : v >= N ? N - 1 : v;
        if (got[k] != v)
            fail_msg("position %d: got %d, want %lld", k, got[k], (long long)v);
    }
    mlx_array_free(r);
    mlx_array_free(i);
    mlx_array_free(a);
    free(av);
    free(iv);
}

static void test_bad_arguments_report_mlx_messages(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    const double av[6] = {0, 1, 2, 3, 4, 5}, iv[2] = {0, 1}, fv[2] = {0.5, 1};
    mlx_array a = tu_array_of(MLX_FLOAT32, av, (int[]){2, 3}, 2);
    mlx_array i = tu_array_of(MLX_INT32, iv, (int[]){2}, 1);
    mlx_array f = tu_array_of(MLX_FLOAT32, fv, (int[]){2}, 1);
    mlx_array b = tu_array_of(MLX_BOOL, iv, (int[]){2}, 1);
    mlx_array r = mlx_array_new();
    const int sz[2] = {1, 3}, big[2] = {1, 4}, two[2] = {0, 1}, rep[2] = {0, 0};
    mlx_vector_array v2 = mlx_vector_array_new_data((mlx_array[]){i, i}, 2);
    mlx_vector_array v3 = mlx_vector_array_new_data((mlx_array[]){i, i, i}, 3);
    tu_reset_errors();
    assert_int_not_equal(mlx_gather_single(&r, a, i, -1, sz, 2, s), 0);
    tu_expect_error("[gather] Axes don't match array dimensions.");
    assert_int_not_equal(mlx_gather_single(&r, a, i, 0, big, 2, s), 0);
    tu_expect_error("[gather] Slice sizes must be in [0, a.shape(i)]. Got (1,4) for array with shape (2,3).");
    assert_int_not_equal(mlx_gather_single(&r, a, i, 0, sz, 1, s), 0);
    tu_expect_error("[gather] Got slice_sizes with size 1 for array with 2 dimensions.");
    assert_int_not_equal(mlx_gather_single(&r, a, f, 0, sz, 2, s), 0);
    tu_expect_error("[gather] Got indices with invalid dtype. Indices must be integral.");
    assert_int_not_equal(mlx_gather_single(&r, a, b, 0, sz, 2, s), 0);
    tu_expect_error("[Gather] Boolean indices not supported.");
    assert_int_not_equal(mlx_gather(&r, a, v2, rep, 2, sz, 2, s), 0);
    tu_expect_error("[gather] Repeat axes not allowed in gather.");
    assert_int_not_equal(mlx_gather(&r, a, v3, two, 2, sz, 2, s), 0);
    tu_expect_error("[gather] Too many index arrays. Got 3 index arrays for input with 2 dimensions.");
    assert_int_not_equal(mlx_gather(&r, a, v2, two, 1, sz, 2, s), 0);
    tu_expect_error("[gather] Number of index arrays does not match number of axes.");
    /* scatter: updates must be index shape + a block no larger than a */
    assert_int_not_equal(mlx_scatter_add_single(&r, a, i, a, 0, s), 0);
    tu_expect_error("[scatter] Updates with 2 dimensions does not match the sum of the array (2) and indices (1) "
                    "dimensions.");
    const double uv[12] = {0};
    mlx_array u = tu_array_of(MLX_FLOAT32, uv, (int[]){3, 1, 3}, 3);
    assert_int_not_equal(mlx_scatter_single(&r, a, i, u, 0, s), 0);
    tu_expect_error("[scatter] Update shape (3,1,3) is not valid for broadcasted index shape (2).");
    mlx_array_free(u);
    u = tu_array_of(MLX_FLOAT32, uv, (int[]){2, 1, 4}, 3);
    assert_int_not_equal(mlx_scatter_max_single(&r, a, i, u, 0, s), 0);
    tu_expect_error("[scatter] Updates with shape (2,1,4) are too large for array with shape (2,3).");
    assert_int_not_equal(mlx_scatter_min_single(&r, a, b, u, 0, s), 0);
    tu_expect_error("[scatter] Boolean indices not supported.");
    /* dynamic slices and masked_scatter */
    assert_int_not_equal(mlx_slice_dynamic(&r, a, f, (int[]){0, 1}, 2, sz, 2, s), 0);
    tu_expect_error("[slice] Start indices must be integers, got type float32.");
    assert_int_not_equal(mlx_slice_dynamic(&r, a, i, (int[]){0, 1}, 2, big, 2, s), 0);
    tu_expect_error("[slice] Invalid slice size (1,4) for array with shape (2,3).");
    assert_int_not_equal(mlx_slice_update_dynamic(&r, a, a, i, (int[]){0, 0}, 2, s), 0);
    tu_expect_error("[slice_update] Repeat axes not allowed.");
    assert_int_not_equal(mlx_slice_update_dynamic(&r, a, a, i, (int[]){0}, 1, s), 0);
    tu_expect_error("[slice_update] Number of starting indices 2 does not match number of axes 1.");
    assert_int_not_equal(mlx_masked_scatter(&r, a, i, a, s), 0);
    tu_expect_error("[masked_scatter] The mask has to be boolean.");
    mlx_array b3 = tu_array_of(MLX_BOOL, av, (int[]){3}, 1);
    assert_int_not_equal(mlx_masked_scatter(&r, a, b3, a, s), 0);
    tu_expect_error("[masked_scatter] The boolean mask should have the same shape as the beginning of the "
                    "indexed array but the mask has shape (3) and the array has shape (2,3)");
    mlx_array_free(b3);
    mlx_vector_array_free(v2);
    mlx_vector_array_free(v3);
    mlx_array_free(u);
    mlx_array_free(r);
    mlx_array_free(a);
    mlx_array_free(i);
    mlx_array_free(f);
    mlx_array_free(b);
}

/* scatter_prod has no vjp and Scatter no jvp, as in MLX: a clean error. */
static int f_prod(mlx_vector_array *out, const mlx_vector_array in, void *payload)
{
    (void)payload;
    mlx_array x = mlx_array_new(), r = mlx_array_new(), sum = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    const double iv[2] = {0, 0};
    mlx_array i = tu_array_of(MLX_INT32, iv, (int[]){2}, 1);
    mlx_array u = mlx_array_new();
    int rc = mlx_reshape(&u, x, (int[]){2, 1}, 2, tu_stream()) ||
             mlx_scatter_prod_single(&r, x, i, u, 0, tu_stream()) || mlx_sum(&sum, r, false, tu_stream()) ||
             mlx_vector_array_set_value(out, sum);
    mlx_array_free(i);
    mlx_array_free(u);
    mlx_array_free(x);
    mlx_array_free(r);
    mlx_array_free(sum);
    return rc;
}

static void test_scatter_prod_gradient_is_refused_as_mlx(void **state)
{
    (void)state;
    const double xv[2] = {2, 3};
    mlx_array x = tu_array_of(MLX_FLOAT32, xv, (int[]){2}, 1);
    mlx_closure f = mlx_closure_new_func_payload(f_prod, NULL, NULL);
    mlx_vector_array prim = mlx_vector_array_new_value(x), cot = mlx_vector_array_new();
    mlx_array one = mlx_array_new_float(1.0f);
    mlx_vector_array_append_value(cot, one);
    mlx_vector_array outs = mlx_vector_array_new(), g = mlx_vector_array_new();
    tu_reset_errors();
    assert_int_not_equal(mlx_vjp(&outs, &g, f, prim, cot), 0);
    assert_true(tu_last_error_has("VJP not implemented for scatter_prod"));
    tu_reset_errors();
    assert_int_not_equal(mlx_jvp(&outs, &g, f, prim, prim), 0);
    assert_true(tu_last_error_has("JVP not yet implemented"));
    tu_reset_errors();
    mlx_vector_array_free(outs);
    mlx_vector_array_free(g);
    mlx_vector_array_free(prim);
    mlx_vector_array_free(cot);
    mlx_array_free(one);
    mlx_closure_free(f);
    mlx_array_free(x);
}

/* Random indices over the whole int32 range, most far outside the axes,
 * on gather, every scatter and the dynamic slices: all succeed, and
 * (under ASan) nothing is read or written outside a buffer. Every result
 * element is one of a's values, an update or a combination of them, so
 * the checks below are loose; the sanitizer is the real check. */
static uint32_t rng_state = 12345;
static int32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    uint32_t r = rng_state >> 8;
    switch (r % 4) {
    case 0: return (int32_t)(r % 9) - 4;
    case 1: return (int32_t)rng_state;
    case 2: return (r & 1) ? INT32_MAX : INT32_MIN;
    default: return (int32_t)(r % 40) - 20;
    }
}

static void test_fuzz_out_of_range_indices_stay_inside_buffers(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    double av[5 * 4 * 3];
    for (int k = 0; k < 60; k++)
        av[k] = k;
    mlx_array a = tu_array_of(MLX_FLOAT32, av, (int[]){5, 4, 3}, 3);
    for (int round = 0; round < 200; round++) {
        int n = 1 + round % 7, nidx = 1 + round % 3;
        int axes[3] = {0, 1, 2}, sz[3] = {1 + round % 5, 1 + round % 4, 1 + round % 3};
        mlx_array idx[3];
        for (int j = 0; j < nidx; j++) {
            int32_t v[8];
            for (int k = 0; k < n; k++)
                v[k] = rnd();
            idx[j] = tu_i32(v, (int[]){n}, 1);
        }
        mlx_vector_array vi = mlx_vector_array_new_data(idx, (size_t)nidx);
        int ushape[4] = {n, sz[0], sz[1], sz[2]};
        double uv[8 * 60];
        for (int k = 0; k < n * sz[0] * sz[1] * sz[2]; k++)
            uv[k] = 1000 + k;
        mlx_array u = tu_array_of(MLX_FLOAT32, uv, ushape, 4);
        mlx_array r = mlx_array_new();
        assert_int_equal(mlx_gather(&r, a, vi, axes, (size_t)nidx, sz, 3, s), 0);
        assert_int_equal(mlx_array_eval(r), 0);
        for (size_t e = 0; e < mlx_array_size(r); e++) {
            double x = tu_get(r, e);
            assert_true(x >= 0 && x < 60);
        }
        int (*sc[5])(mlx_array *, mlx_array, mlx_vector_array, mlx_array, const int *, size_t, mlx_stream) = {
            mlx_scatter, mlx_scatter_add, mlx_scatter_prod, mlx_scatter_max, mlx_scatter_min};
        for (int k = 0; k < 5; k++) {
            assert_int_equal(sc[k](&r, a, vi, u, axes, (size_t)nidx, s), 0);
            assert_int_equal(mlx_array_eval(r), 0);
        }
        int32_t st3[3] = {rnd(), rnd(), rnd()};
        mlx_array st = tu_i32(st3, (int[]){3}, 1);
        assert_int_equal(mlx_slice_dynamic(&r, a, st, axes, 3, sz, 3, s), 0);
        assert_int_equal(mlx_array_eval(r), 0);
        mlx_array blk = mlx_array_new();
        if (n == 1) {
            assert_int_equal(mlx_reshape(&blk, u, sz, 3, s), 0);
            assert_int_equal(mlx_slice_update_dynamic(&r, a, blk, st, axes, 3, s), 0);
            assert_int_equal(mlx_array_eval(r), 0);
        }
        mlx_array_free(blk);
        mlx_array_free(st);
        mlx_array_free(r);
        mlx_array_free(u);
        mlx_vector_array_free(vi);
        tu_free_n(idx, (size_t)nidx);
    }
    mlx_array_free(a);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_results_equal_mlx_fixtures),
        T(test_single_forms_match_the_vector_forms),
        T(test_block_starts_are_clamped_inside_the_axis),
        T(test_take_clamps_hostile_indices_to_the_axis),
        T(test_large_gather_split_across_threads_is_exact),
        T(test_bad_arguments_report_mlx_messages),
        T(test_scatter_prod_gradient_is_refused_as_mlx),
        T(test_fuzz_out_of_range_indices_stay_inside_buffers),
    };
#undef T
    return cmocka_run_group_tests_name("gather", tests, tu_group_setup, tu_group_teardown);
}
