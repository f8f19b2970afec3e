/* Suite 'grad_mlx': the vjp and jvp of the scans, softmax, logsumexp and
 * diagonal in float32 (a few in float16 and bfloat16, computed in that
 * type as MLX does) against MLX 0.31.1's own results
 * (test/fixtures/grad_cases.h, written by scripts/make_grad_fixtures.py):
 * cumprod with zeros in its input (MLX's first-zero gradient), exclusive
 * and reverse scans, logcumsumexp's signed cotangents, softmax and
 * logsumexp along either axis, off-centre diagonals. A jvp is compared
 * only where MLX has one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "test_util.h"

#include "fixtures/grad_cases.h"

/* The ops, in the order of OPS in scripts/make_grad_fixtures.py. */
enum { OP_CUMSUM, OP_CUMPROD, OP_LOGCUMSUMEXP, OP_SOFTMAX, OP_LOGSUMEXP, OP_DIAGONAL };

static int apply_fixture(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    const grad_fixture *c = payload;
    const int *p = c->p;
    mlx_stream s = tu_stream();
    mlx_array x = mlx_array_new(), o = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0);
    if (!rc) {
        switch (c->op) {
        case OP_CUMSUM: rc = mlx_cumsum(&o, x, p[0], p[1], p[2], s); break;
        case OP_CUMPROD: rc = mlx_cumprod(&o, x, p[0], p[1], p[2], s); break;
        case OP_LOGCUMSUMEXP: rc = mlx_logcumsumexp(&o, x, p[0], p[1], p[2], s); break;
        case OP_SOFTMAX: rc = mlx_softmax_axis(&o, x, p[0], p[1], s); break;
        case OP_LOGSUMEXP: rc = mlx_logsumexp_axis(&o, x, p[0], p[1], s); break;
        default: rc = mlx_diagonal(&o, x, p[0], p[1], p[2], s); break;
        }
    }
    if (!rc)
        rc = mlx_vector_array_set_value(res, o);
    mlx_array_free(o);
    mlx_array_free(x);
    return rc;
}

/* Values of c's dtype from float32 ones (exact for the fixtures' values,
 * which MLX rounded to that dtype). */
static mlx_array typed(const grad_fixture *c, const float *v, const int *shape, int ndim)
{
    mlx_array a = tu_f32(v, shape, ndim);
    assert_int_equal(mlx_astype(&a, a, c->dtype, tu_stream()), 0);
    return a;
}

static void expect_values(const grad_fixture *c, const char *what, mlx_array got, const float *want, size_t n)
{
    /* float32: summation order; the half types: a rounding or two of their
     * own (measured at most 1.2e-3 for float16, 1 ulp for bfloat16) */
    double tol = c->dtype == MLX_FLOAT32 ? 1e-5 : c->dtype == MLX_FLOAT16 ? 4e-3 : 3e-2;
    assert_int_equal(mlx_array_eval(got), 0);
    assert_int_equal(mlx_array_dtype(got), c->dtype);
    assert_int_equal(mlx_array_size(got), n);
    for (size_t i = 0; i < n; i++) {
        double g = tu_get(got, i), w = want[i];
        if (!(fabs(g - w) <= tol + tol * fabs(w)))
            fail_msg("%s: %s [%zu]: got %.9g, MLX %.9g", c->name, what, i, g, w);
    }
}

static void check_fixture(const grad_fixture *c)
{
    const int in_shape[2] = {3, 4};
    mlx_array x = typed(c, c->x, in_shape, 2), cot = typed(c, c->cot, c->out_shape, c->out_ndim);
    mlx_array t = typed(c, c->t, in_shape, 2);
    mlx_closure f = mlx_closure_new_func_payload(apply_fixture, (void *)c, NULL);
    mlx_vector_array primals = mlx_vector_array_new_data(&x, 1), cots = mlx_vector_array_new_data(&cot, 1);
    mlx_vector_array tans = mlx_vector_array_new_data(&t, 1);
    mlx_vector_array outs = mlx_vector_array_new(), res = mlx_vector_array_new();
    mlx_array r = mlx_array_new();

    if (mlx_vjp(&outs, &res, f, primals, cots))
        fail_msg("%s: mlx_vjp failed: %s", c->name, tu_last_error());
    assert_int_equal(mlx_vector_array_get(&r, res, 0), 0);
    expect_values(c, "vjp", r, c->vjp, 12);

    if (c->has_jvp) {
        mlx_vector_array_free(outs);
        mlx_vector_array_free(res);
        outs = mlx_vector_array_new();
        res = mlx_vector_array_new();
        if (mlx_jvp(&outs, &res, f, primals, tans))
            fail_msg("%s: mlx_jvp failed: %s", c->name, tu_last_error());
        assert_int_equal(mlx_vector_array_get(&r, res, 0), 0);
        expect_values(c, "jvp", r, c->jvp, mlx_array_size(r));
    }

    mlx_array_free(r);
    mlx_vector_array_free(res);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(tans);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(primals);
    mlx_closure_free(f);
    mlx_array_free(t);
    mlx_array_free(cot);
    mlx_array_free(x);
}

static void test_gradients_match_mlx(void **state) { check_fixture(*state); }

/* cummax/cummin have no vjp in MLX (it raises); ours sends each output's
 * cotangent to the input it took its value from, on a tie the latest one
 * in scan order. payload: {reverse, cummin instead of cummax}. */
static int apply_cumext(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    const int *mode = payload;
    mlx_array x = mlx_array_new(), o = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0) ||
             (mode[1] ? mlx_cummin(&o, x, 0, mode[0], true, tu_stream())
                      : mlx_cummax(&o, x, 0, mode[0], true, tu_stream())) ||
             mlx_vector_array_set_value(res, o);
    mlx_array_free(o);
    mlx_array_free(x);
    return rc;
}

static void expect_cumext_vjp(const float *xv, int reverse, int use_min, const float *want)
{
    const int shape[1] = {4}, mode[2] = {reverse, use_min};
    const float ones[4] = {1, 1, 1, 1};
    mlx_array x = tu_f32(xv, shape, 1), w = tu_f32(ones, shape, 1), g = mlx_array_new();
    mlx_closure f = mlx_closure_new_func_payload(apply_cumext, (void *)mode, NULL);
    mlx_vector_array primals = mlx_vector_array_new_data(&x, 1), cots = mlx_vector_array_new_data(&w, 1);
    mlx_vector_array outs = mlx_vector_array_new(), res = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&outs, &res, f, primals, cots), 0);
    assert_int_equal(mlx_vector_array_get(&g, res, 0), 0);
    assert_int_equal(mlx_array_eval(g), 0);
    for (size_t i = 0; i < 4; i++)
        if (tu_get(g, i) != want[i])
            fail_msg("reverse %d min %d: vjp [%zu] = %g, want %g", reverse, use_min, i, tu_get(g, i),
                     (double)want[i]);
    mlx_array_free(g);
    mlx_vector_array_free(res);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(primals);
    mlx_closure_free(f);
    mlx_array_free(w);
    mlx_array_free(x);
}

static void test_cummax_and_cummin_ties_go_to_the_latest_source(void **state)
{
    (void)state;
    const float x[4] = {1, 3, 3, 2};
    /* forward cummax [1, 3, 3, 3]: sources 0, 1, 2, 2 */
    expect_cumext_vjp(x, 0, 0, (const float[]){1, 1, 2, 0});
    /* reverse cummax [3, 3, 3, 2]: sources 1, 1, 2, 3 (scanning from the
     * end, index 2 is reached first and index 1 is the latest tie) */
    expect_cumext_vjp(x, 1, 0, (const float[]){0, 2, 1, 1});
    /* forward cummin [1, 1, 1, 1]: every output from index 0 */
    expect_cumext_vjp(x, 0, 1, (const float[]){4, 0, 0, 0});
    /* reverse cummin [1, 2, 2, 2]: sources 0, 3, 3, 3 */
    expect_cumext_vjp(x, 1, 1, (const float[]){1, 0, 0, 3});
}

enum { N_FIXTURES = sizeof grad_fixtures / sizeof grad_fixtures[0] };

/* One test per fixture, named for it, then the ties. */
int main(void)
{
    static struct CMUnitTest tests[N_FIXTURES + 1];
    static char names[N_FIXTURES][80];
    printf("fixtures from mlx %s\n", GF_MLX_VERSION);
    for (int i = 0; i < N_FIXTURES; i++) {
        snprintf(names[i], sizeof names[i], "gradients_of_%s_match_mlx", grad_fixtures[i].name);
        tests[i] = (struct CMUnitTest){names[i], test_gradients_match_mlx, NULL, tu_test_teardown,
                                       (void *)&grad_fixtures[i]};
    }
    tests[N_FIXTURES] = (struct CMUnitTest)cmocka_unit_test_teardown(
        test_cummax_and_cummin_ties_go_to_the_latest_source, tu_test_teardown);
    return cmocka_run_group_tests_name("grad_mlx", tests, tu_group_setup, tu_group_teardown);
}
