/* Suite 'grad_compile': differentiating compiled functions. compile fuses
 * a chain of elementwise ops into one Compiled node, whose vjp and jvp
 * replay its program as ordinary nodes (src/graph/prims_fused.c); the
 * gradients of the compiled function must be those of the same function
 * uncompiled, in every transform and for every argument, including inputs
 * that reach the output twice, through a broadcast, or only through a
 * comparison. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "array/array.h"
#include "graph/primitive.h"
#include "test_util.h"

enum { NIN = 3 };

/* ---- the functions ---- */

/* tanh(x * y + z) * x + sqrt(z * z + 1) - sigmoid(x) / 2, with y (3,)
 * broadcast against x and z (2, 3): x reaches the output three times. */
static int chain(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    (void)payload;
    mlx_stream s = tu_stream();
    mlx_array x = mlx_array_new(), y = mlx_array_new(), z = mlx_array_new();
    mlx_array t = mlx_array_new(), u = mlx_array_new(), half = mlx_array_new_float64(0.5);
    mlx_array one = mlx_array_new_float64(1.0);
    int rc = mlx_vector_array_get(&x, args, 0) || mlx_vector_array_get(&y, args, 1) ||
             mlx_vector_array_get(&z, args, 2) || mlx_multiply(&t, x, y, s) || mlx_add(&t, t, z, s) ||
             mlx_tanh(&t, t, s) || mlx_multiply(&t, t, x, s) || mlx_square(&u, z, s) || mlx_add(&u, u, one, s) ||
             mlx_sqrt(&u, u, s) || mlx_add(&t, t, u, s) || mlx_sigmoid(&u, x, s) || mlx_multiply(&u, u, half, s) ||
             mlx_subtract(&t, t, u, s) || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){x, y, z, t, u, half, one}, 7);
    return rc;
}

/* exp(x) * (y > 0) + astype(astype(z, float32), float64): y passes only
 * a comparison (zero gradient), z a round trip through float32. */
static int gated(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    (void)payload;
    mlx_stream s = tu_stream();
    mlx_array x = mlx_array_new(), y = mlx_array_new(), z = mlx_array_new();
    mlx_array t = mlx_array_new(), g = mlx_array_new(), zero = mlx_array_new_float64(0.0);
    int rc = mlx_vector_array_get(&x, args, 0) || mlx_vector_array_get(&y, args, 1) ||
             mlx_vector_array_get(&z, args, 2) || mlx_greater(&g, y, zero, s) ||
             mlx_astype(&g, g, MLX_FLOAT64, s) || mlx_exp(&t, x, s) || mlx_multiply(&t, t, g, s) ||
             mlx_astype(&z, z, MLX_FLOAT32, s) || mlx_astype(&z, z, MLX_FLOAT64, s) || mlx_add(&t, t, z, s) ||
             mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){x, y, z, t, g, zero}, 6);
    return rc;
}

/* ---- helpers ---- */

static void inputs(mlx_array *x)
{
    static const double xv[6] = {-0.7, 0.2, 0.9, -0.1, 0.5, -1.2};
    static const double yv[3] = {0.8, -0.4, 1.3};
    static const double zv[6] = {0.3, -0.6, 1.1, -0.9, 0.05, 0.4};
    const int s2[2] = {2, 3}, s1[1] = {3};
    x[0] = tu_f64(xv, s2, 2);
    x[1] = tu_f64(yv, s1, 1);
    x[2] = tu_f64(zv, s2, 2);
}

static mlx_vector_array vec_of(const mlx_array *a, int n)
{
    mlx_vector_array v = mlx_vector_array_new();
    for (int k = 0; k < n; k++)
        assert_int_equal(mlx_vector_array_append_value(v, a[k]), 0);
    return v;
}

static mlx_closure compiled(mlx_closure f)
{
    mlx_closure c = mlx_closure_new();
    assert_int_equal(mlx_compile(&c, f, false), 0);
    return c;
}

/* Element k of v, evaluated (a new handle). */
static mlx_array at(mlx_vector_array v, size_t k)
{
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&a, v, k), 0);
    assert_int_equal(mlx_array_eval(a), 0);
    return a;
}

static void expect_same(const char *what, mlx_array got, mlx_array want)
{
    assert_int_equal(mlx_array_dtype(got), mlx_array_dtype(want));
    assert_int_equal(mlx_array_size(got), mlx_array_size(want));
    for (size_t i = 0; i < mlx_array_size(want); i++) {
        double g = tu_get(got, i), w = tu_get(want, i);
        if (!(fabs(g - w) <= 1e-12 * (1 + fabs(w))))
            fail_msg("%s [%zu]: compiled %.17g, uncompiled %.17g", what, i, g, w);
    }
}

/* Asserts that calling the compiled f gives one Compiled node: the case
 * really differentiates a fused chain. */
static void expect_fused(mlx_closure cf, const mlx_array *x)
{
    mlx_vector_array in = vec_of(x, NIN), out = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&out, cf, in), 0);
    mlx_array o = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&o, out, 0), 0);
    assert_int_equal(mc_arr(o)->prim, MC_PRIM_FUSED);
    mlx_array_free(o);
    mlx_vector_array_free(out);
    mlx_vector_array_free(in);
}

/* vjp of f and of compile(f), each with a cotangent of ones * 0.7 + i. */
static void check_vjp(mlx_closure f)
{
    mlx_array x[NIN];
    inputs(x);
    mlx_closure cf = compiled(f);
    expect_fused(cf, x);
    double wv[6] = {0.7, -1.1, 0.4, 1.9, -0.3, 0.8};
    const int shape[2] = {2, 3};
    mlx_array w = tu_f64(wv, shape, 2);
    mlx_vector_array primals = vec_of(x, NIN), cots = vec_of(&w, 1);
    mlx_vector_array outs[2], grads[2];
    mlx_closure fs[2] = {f, cf};
    for (int v = 0; v < 2; v++) {
        outs[v] = mlx_vector_array_new();
        grads[v] = mlx_vector_array_new();
        if (mlx_vjp(&outs[v], &grads[v], fs[v], primals, cots))
            fail_msg("mlx_vjp (%s) failed: %s", v ? "compiled" : "uncompiled", tu_last_error());
        assert_int_equal(mlx_vector_array_size(grads[v]), NIN);
    }
    mlx_array o0 = at(outs[0], 0), o1 = at(outs[1], 0);
    expect_same("output", o1, o0);
    mlx_array_free(o0);
    mlx_array_free(o1);
    for (size_t k = 0; k < NIN; k++) {
        mlx_array g0 = at(grads[0], k), g1 = at(grads[1], k);
        assert_true(tu_shape_is(g1, (int)mlx_array_ndim(x[k]), mlx_array_shape(x[k])));
        expect_same("vjp", g1, g0);
        mlx_array_free(g0);
        mlx_array_free(g1);
    }
    for (int v = 0; v < 2; v++) {
        mlx_vector_array_free(outs[v]);
        mlx_vector_array_free(grads[v]);
    }
    mlx_vector_array_free(cots);
    mlx_vector_array_free(primals);
    mlx_array_free(w);
    mlx_closure_free(cf);
    tu_free_n(x, NIN);
}

/* jvp of f and of compile(f) with tangents on every input. */
static void check_jvp(mlx_closure f)
{
    mlx_array x[NIN], t[NIN];
    inputs(x);
    inputs(t); /* any values do: the inputs themselves as tangents */
    mlx_closure cf = compiled(f);
    mlx_vector_array primals = vec_of(x, NIN), tans = vec_of(t, NIN);
    mlx_vector_array outs[2], jt[2];
    mlx_closure fs[2] = {f, cf};
    for (int v = 0; v < 2; v++) {
        outs[v] = mlx_vector_array_new();
        jt[v] = mlx_vector_array_new();
        if (mlx_jvp(&outs[v], &jt[v], fs[v], primals, tans))
            fail_msg("mlx_jvp (%s) failed: %s", v ? "compiled" : "uncompiled", tu_last_error());
    }
    mlx_array j0 = at(jt[0], 0), j1 = at(jt[1], 0);
    expect_same("jvp", j1, j0);
    mlx_array_free(j0);
    mlx_array_free(j1);
    for (int v = 0; v < 2; v++) {
        mlx_vector_array_free(outs[v]);
        mlx_vector_array_free(jt[v]);
    }
    mlx_vector_array_free(tans);
    mlx_vector_array_free(primals);
    mlx_closure_free(cf);
    tu_free_n(t, NIN);
    tu_free_n(x, NIN);
}

/* sum(f(x)): the scalar value_and_grad needs; payload is f. */
static int summed(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    mlx_closure *f = payload;
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array o = mlx_array_new();
    int rc = mlx_closure_apply(&out, *f, args) || mlx_vector_array_get(&o, out, 0) ||
             mlx_sum(&o, o, false, tu_stream()) || mlx_vector_array_set_value(res, o);
    mlx_array_free(o);
    mlx_vector_array_free(out);
    return rc;
}

/* ---- tests ---- */

static void test_vjp_of_compiled_chain_matches_uncompiled(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(chain, NULL, NULL);
    check_vjp(f);
    mlx_closure_free(f);
}

static void test_vjp_of_compiled_comparison_and_casts_matches_uncompiled(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(gated, NULL, NULL);
    check_vjp(f);
    mlx_closure_free(f);
}

static void test_jvp_of_compiled_chain_matches_uncompiled(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(chain, NULL, NULL);
    check_jvp(f);
    mlx_closure_free(f);
    f = mlx_closure_new_func_payload(gated, NULL, NULL);
    check_jvp(f);
    mlx_closure_free(f);
}

/* value_and_grad over the compiled chain, for the second argument only:
 * the broadcast y's gradient is summed back to its shape (3,). */
static void test_value_and_grad_of_compiled_chain_one_argument(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(chain, NULL, NULL);
    mlx_closure cf = compiled(f);
    mlx_array x[NIN];
    inputs(x);
    mlx_vector_array primals = vec_of(x, NIN);
    mlx_array grads[2], vals[2];
    mlx_closure fs[2] = {f, cf};
    for (int v = 0; v < 2; v++) {
        mlx_closure l = mlx_closure_new_func_payload(summed, &fs[v], NULL);
        mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
        const int argnums[1] = {1};
        assert_int_equal(mlx_value_and_grad(&vg, l, argnums, 1), 0);
        mlx_vector_array value = mlx_vector_array_new(), grad = mlx_vector_array_new();
        if (mlx_closure_value_and_grad_apply(&value, &grad, vg, primals))
            fail_msg("value_and_grad failed: %s", tu_last_error());
        assert_int_equal(mlx_vector_array_size(grad), 1);
        vals[v] = at(value, 0);
        grads[v] = at(grad, 0);
        mlx_vector_array_free(value);
        mlx_vector_array_free(grad);
        mlx_closure_value_and_grad_free(vg);
        mlx_closure_free(l);
    }
    const int shape[1] = {3};
    assert_true(tu_shape_is(grads[1], 1, shape));
    expect_same("value", vals[1], vals[0]);
    expect_same("grad", grads[1], grads[0]);
    tu_free_n(vals, 2);
    tu_free_n(grads, 2);
    mlx_vector_array_free(primals);
    tu_free_n(x, NIN);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_vjp_of_compiled_chain_matches_uncompiled, tu_test_teardown),
        cmocka_unit_test_teardown(test_vjp_of_compiled_comparison_and_casts_matches_uncompiled, tu_test_teardown),
        cmocka_unit_test_teardown(test_jvp_of_compiled_chain_matches_uncompiled, tu_test_teardown),
        cmocka_unit_test_teardown(test_value_and_grad_of_compiled_chain_one_argument, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("grad_compile", tests, tu_group_setup, tu_group_teardown);
}
