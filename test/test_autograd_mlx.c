/* Suite 'autograd_mlx': cases of MLX's python/tests/test_autograd.py
 * (v0.31.1) that need nothing Python-only, carried over as C calls with
 * MLX's expected values; each test names the Python test it comes from. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mlx/c/mlx.h"
#include "test_util.h"

/* ---- helpers ---- */

static mlx_array arg(const mlx_vector_array in, size_t i)
{
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&a, in, i), 0);
    return a;
}

static double item(const mlx_vector_array v, size_t i)
{
    mlx_array a = arg(v, i);
    assert_int_equal(mlx_array_eval(a), 0);
    double x = tu_get(a, 0);
    mlx_array_free(a);
    return x;
}

static mlx_vector_array scalars(const double *v, size_t n)
{
    mlx_vector_array r = mlx_vector_array_new();
    for (size_t i = 0; i < n; i++) {
        mlx_array a = mlx_array_new_float((float)v[i]);
        assert_int_equal(mlx_vector_array_append_value(r, a), 0);
        mlx_array_free(a);
    }
    return r;
}

static int set_outputs(mlx_vector_array *res, mlx_array *outs, size_t n)
{
    mlx_vector_array v = mlx_vector_array_new_data(outs, n);
    int rc = mlx_vector_array_set(res, v);
    mlx_vector_array_free(v);
    tu_free_n(outs, n);
    return rc;
}

/* ---- functions ---- */

static int twice(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), two = mlx_array_new_float(2), o = mlx_array_new();
    int rc = mlx_multiply(&o, two, x, tu_stream());
    tu_free_n((mlx_array[]){x, two}, 2);
    return rc || set_outputs(res, &o, 1);
}

static int product(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), y = arg(in, 1), o = mlx_array_new();
    int rc = mlx_multiply(&o, x, y, tu_stream());
    tu_free_n((mlx_array[]){x, y}, 2);
    return rc || set_outputs(res, &o, 1);
}

/* (x y, y z) */
static int pairs(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), y = arg(in, 1), z = arg(in, 2), o[2] = {mlx_array_new(), mlx_array_new()};
    int rc = mlx_multiply(&o[0], x, y, tu_stream()) || mlx_multiply(&o[1], y, z, tu_stream());
    tu_free_n((mlx_array[]){x, y, z}, 3);
    return rc || set_outputs(res, o, 2);
}

static int square(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), o = mlx_array_new();
    int rc = mlx_multiply(&o, x, x, tu_stream());
    mlx_array_free(x);
    return rc || set_outputs(res, &o, 1);
}

/* The n-th derivative of x * x by nesting value_and_grad in closures. */
typedef struct nested {
    mlx_closure inner;
} nested;

static int grad_of(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    nested *n = payload;
    int argnum = 0;
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();
    int rc = mlx_value_and_grad(&vg, n->inner, &argnum, 1) || mlx_closure_value_and_grad_apply(&v, &g, vg, in) ||
             mlx_vector_array_set(res, g);
    mlx_closure_value_and_grad_free(vg);
    mlx_vector_array_free(v);
    mlx_vector_array_free(g);
    return rc;
}

/* x + y with y = [2, 2] broadcast, a comparison read on the host, x^2 */
static int eval_inside(mlx_vector_array *res, const mlx_vector_array in)
{
    const float two[2] = {2, 2};
    int shape[1] = {2};
    mlx_array x = arg(in, 0), y = tu_f32(two, shape, 1), c = mlx_array_new(), one = mlx_array_new_float(1);
    mlx_array p = mlx_array_new_float(2), o = mlx_array_new();
    int rc = mlx_add(&x, x, y, tu_stream()) || mlx_less(&c, x, one, tu_stream()) || mlx_array_eval(c) ||
             mlx_power(&o, x, p, tu_stream());
    if (!rc)
        (void)mlx_array_data_bool(c);
    tu_free_n((mlx_array[]){x, y, c, one, p}, 5);
    return rc || set_outputs(res, &o, 1);
}

/* (x - y)^x */
static int power_of_difference(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), y = arg(in, 1), d = mlx_array_new(), o = mlx_array_new();
    int rc = mlx_subtract(&d, x, y, tu_stream()) || mlx_power(&o, d, x, tu_stream());
    tu_free_n((mlx_array[]){x, y, d}, 3);
    return rc || set_outputs(res, &o, 1);
}

static int (*reduce_fn)(mlx_array *, const mlx_array, bool, const mlx_stream);

static int reduce_all(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), o = mlx_array_new();
    int rc = reduce_fn(&o, x, false, tu_stream());
    mlx_array_free(x);
    return rc || set_outputs(res, &o, 1);
}

/* ---- tests ---- */

/* test_jvp */
static void test_jvp_of_products(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(twice), g = mlx_closure_new_func(product), h = mlx_closure_new_func(pairs);
    mlx_vector_array p = scalars((double[]){1}, 1), t = scalars((double[]){2}, 1);
    mlx_vector_array o = mlx_vector_array_new(), d = mlx_vector_array_new();
    assert_int_equal(mlx_jvp(&o, &d, f, p, t), 0);
    assert_true(item(o, 0) == 2 && item(d, 0) == 4);
    mlx_vector_array p2 = scalars((double[]){4, 2}, 2), t2 = scalars((double[]){3, 2}, 2);
    assert_int_equal(mlx_jvp(&o, &d, g, p2, t2), 0);
    assert_true(item(d, 0) == 4.0 * 2.0 + 2.0 * 3.0);
    mlx_vector_array p3 = scalars((double[]){2, 4, 6}, 3), t3 = scalars((double[]){1, 3, 1}, 3);
    assert_int_equal(mlx_jvp(&o, &d, h, p3, t3), 0);
    assert_int_equal(mlx_vector_array_size(d), 2);
    assert_true(item(d, 0) == 4.0 * 1.0 + 2.0 * 3.0 && item(d, 1) == 4.0 * 1.0 + 6.0 * 3.0);
    mlx_vector_array bufs[] = {p, t, o, d, p2, t2, p3, t3};
    for (size_t i = 0; i < 8; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure_free(f);
    mlx_closure_free(g);
    mlx_closure_free(h);
}

/* test_vjp */
static void test_vjp_of_products(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(twice), g = mlx_closure_new_func(product), h = mlx_closure_new_func(pairs);
    mlx_vector_array p = scalars((double[]){1}, 1), c = scalars((double[]){2}, 1);
    mlx_vector_array o = mlx_vector_array_new(), d = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&o, &d, f, p, c), 0);
    assert_true(item(o, 0) == 2 && item(d, 0) == 4);
    mlx_vector_array p2 = scalars((double[]){4, 2}, 2), c2 = scalars((double[]){3}, 1);
    assert_int_equal(mlx_vjp(&o, &d, g, p2, c2), 0);
    assert_true(item(d, 0) == 6 && item(d, 1) == 12);
    mlx_vector_array p3 = scalars((double[]){2, 4, 6}, 3), c3 = scalars((double[]){1, 3}, 2);
    assert_int_equal(mlx_vjp(&o, &d, h, p3, c3), 0);
    assert_int_equal(mlx_vector_array_size(d), 3);
    assert_true(item(d, 0) == 4.0 * 1.0 && item(d, 1) == 2.0 * 1.0 + 6.0 * 3.0 && item(d, 2) == 4.0 * 3.0);
    mlx_vector_array bufs[] = {p, c, o, d, p2, c2, p3, c3};
    for (size_t i = 0; i < 8; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure_free(f);
    mlx_closure_free(g);
    mlx_closure_free(h);
}

/* test_grad: the value and the first three derivatives of x * x at 0.5
 * are 0.25, 1, 2 and 0; argnums pick x or y of x * y. */
static void test_grad_and_its_nesting(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(square);
    mlx_vector_array x = scalars((double[]){0.5}, 1), v = mlx_vector_array_new(), g = mlx_vector_array_new();
    int argnum = 0;
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    assert_int_equal(mlx_value_and_grad(&vg, f, &argnum, 1), 0);
    assert_int_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, x), 0);
    assert_true(item(v, 0) == 0.25 && item(g, 0) == 1.0);

    nested n1 = {f}, n2;
    mlx_closure d1 = mlx_closure_new_func_payload(grad_of, &n1, NULL);
    n2.inner = d1;
    mlx_closure d2 = mlx_closure_new_func_payload(grad_of, &n2, NULL);
    nested n3 = {d2};
    mlx_closure d3 = mlx_closure_new_func_payload(grad_of, &n3, NULL);
    mlx_vector_array r = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&r, d2, x), 0);
    assert_true(item(r, 0) == 2.0);
    assert_int_equal(mlx_closure_apply(&r, d3, x), 0);
    assert_true(item(r, 0) == 0.0);

    mlx_closure p = mlx_closure_new_func(product);
    mlx_vector_array xy = scalars((double[]){2, 3}, 2);
    for (int a = 0; a < 2; a++) {
        assert_int_equal(mlx_value_and_grad(&vg, p, &a, 1), 0);
        assert_int_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, xy), 0);
        assert_true(item(g, 0) == (a == 0 ? 3.0 : 2.0));
    }
    const int bad[2] = {2, -2};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mlx_value_and_grad(&vg, f, &bad[i], 1), 0);
        assert_int_not_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, x), 0);
        tu_expect_error("[grad] Invalid argument number for function with 1 inputs.");
    }
    mlx_closure_value_and_grad_free(vg);
    mlx_vector_array bufs[] = {x, v, g, r, xy};
    for (size_t i = 0; i < 5; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure closures[] = {f, d1, d2, d3, p};
    for (size_t i = 0; i < 5; i++)
        mlx_closure_free(closures[i]);
}

/* test_vjp_types: the gradient of the identity has the input's dtype */
static int identity(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    return set_outputs(res, &x, 1);
}

static void test_gradients_keep_the_half_and_float_types(void **state)
{
    (void)state;
    const mlx_dtype types[3] = {MLX_FLOAT16, MLX_BFLOAT16, MLX_FLOAT32};
    mlx_closure f = mlx_closure_new_func(identity);
    int argnum = 0;
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    assert_int_equal(mlx_value_and_grad(&vg, f, &argnum, 1), 0);
    for (int i = 0; i < 3; i++) {
        mlx_array one = mlx_array_new_float(1), x = mlx_array_new();
        assert_int_equal(mlx_astype(&x, one, types[i], tu_stream()), 0);
        mlx_vector_array in = mlx_vector_array_new_value(x), v = mlx_vector_array_new(), g = mlx_vector_array_new();
        assert_int_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, in), 0);
        mlx_array g0 = arg(g, 0);
        assert_int_equal(mlx_array_dtype(g0), types[i]);
        assert_true(item(g, 0) == 1.0);
        tu_free_n((mlx_array[]){one, x, g0}, 3);
        mlx_vector_array_free(in);
        mlx_vector_array_free(v);
        mlx_vector_array_free(g);
    }
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(f);
}

/* test_eval_in_grad: an array evaluated (and read) inside the function
 * keeps its graph: the vjp of (x + [2, 2])^2 at [1] is 12. */
static void test_evaluation_inside_the_function_keeps_the_graph(void **state)
{
    (void)state;
    const float one[1] = {1}, cot[2] = {1, 1};
    int s1[1] = {1}, s2[1] = {2};
    mlx_array x = tu_f32(one, s1, 1), c = tu_f32(cot, s2, 1);
    mlx_vector_array p = mlx_vector_array_new_value(x), cs = mlx_vector_array_new_value(c);
    mlx_vector_array o = mlx_vector_array_new(), d = mlx_vector_array_new();
    mlx_closure f = mlx_closure_new_func(eval_inside);
    assert_int_equal(mlx_vjp(&o, &d, f, p, cs), 0);
    assert_true(item(d, 0) == 12.0);
    tu_free_n((mlx_array[]){x, c}, 2);
    mlx_vector_array bufs[] = {p, cs, o, d};
    for (size_t i = 0; i < 4; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure_free(f);
}

/* test_power_grad: d/dx of (x - y)^x at x = y = 1 is 1 (0^0 = 1, and 0 *
 * log 0 counts as 0); of x^2 at 0 is 0. */
static void test_power_gradients_at_zero(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(power_of_difference), sq = mlx_closure_new_func(square);
    int argnum = 0;
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    mlx_vector_array in = scalars((double[]){1, 1}, 2), zero = scalars((double[]){0}, 1);
    mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();
    assert_int_equal(mlx_value_and_grad(&vg, f, &argnum, 1), 0);
    assert_int_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, in), 0);
    assert_true(item(g, 0) == 1.0);
    assert_int_equal(mlx_value_and_grad(&vg, sq, &argnum, 1), 0);
    assert_int_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, zero), 0);
    assert_true(item(g, 0) == 0.0);
    mlx_closure_value_and_grad_free(vg);
    mlx_vector_array bufs[] = {in, zero, v, g};
    for (size_t i = 0; i < 4; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure_free(f);
    mlx_closure_free(sq);
}

/* test_reduce_jvp: integer arrays; jvp of sum, prod, min and max of
 * arange(4) along [3, 2, 1, 0] is 6, 18, 3 and 0. */
static void test_reduction_jvps_on_integers(void **state)
{
    (void)state;
    const int32_t a[4] = {0, 1, 2, 3}, b[4] = {3, 2, 1, 0};
    int shape[1] = {4};
    mlx_array x = tu_i32(a, shape, 1), t = tu_i32(b, shape, 1);
    mlx_vector_array p = mlx_vector_array_new_value(x), ts = mlx_vector_array_new_value(t);
    int (*fns[4])(mlx_array *, const mlx_array, bool, const mlx_stream) = {mlx_sum, mlx_prod, mlx_min, mlx_max};
    const double want[4] = {6, 18, 3, 0};
    mlx_closure f = mlx_closure_new_func(reduce_all);
    for (int i = 0; i < 4; i++) {
        reduce_fn = fns[i];
        mlx_vector_array o = mlx_vector_array_new(), d = mlx_vector_array_new();
        assert_int_equal(mlx_jvp(&o, &d, f, p, ts), 0);
        mlx_array d0 = arg(d, 0);
        assert_int_equal(mlx_array_dtype(d0), MLX_INT32);
        if (item(d, 0) != want[i])
            fail_msg("reduction %d: jvp %g, want %g", i, item(d, 0), want[i]);
        mlx_array_free(d0);
        mlx_vector_array_free(o);
        mlx_vector_array_free(d);
    }
    tu_free_n((mlx_array[]){x, t}, 2);
    mlx_vector_array_free(p);
    mlx_vector_array_free(ts);
    mlx_closure_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_jvp_of_products, tu_test_teardown),
        cmocka_unit_test_teardown(test_vjp_of_products, tu_test_teardown),
        cmocka_unit_test_teardown(test_grad_and_its_nesting, tu_test_teardown),
        cmocka_unit_test_teardown(test_gradients_keep_the_half_and_float_types, tu_test_teardown),
        cmocka_unit_test_teardown(test_evaluation_inside_the_function_keeps_the_graph, tu_test_teardown),
        cmocka_unit_test_teardown(test_power_gradients_at_zero, tu_test_teardown),
        cmocka_unit_test_teardown(test_reduction_jvps_on_integers, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("autograd_mlx", tests, tu_group_setup, tu_group_teardown);
}
