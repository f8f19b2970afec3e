/* Suite 'grad_rules': what MLX's transforms do beyond the derivatives that
 * test_grad checks numerically: stop_gradient, argnums, ties, integer and
 * half inputs, a primal given twice, gradients of gradients, errors, and
 * long chains. Expected values are MLX 0.31.1's (computed with its Python
 * CPU build; the calls are in each test's comment). */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mlx/c/mlx.h"
#include "test_util.h"

/* ---- helpers ---- */

/* get() evaluates what it reads, also inside transformed functions: the
 * transforms must still see the graph of an array evaluated there, as
 * MLX's do (every function below reads its inputs through get). */

static mlx_vector_array vec1(mlx_array a)
{
    mlx_vector_array v = mlx_vector_array_new();
    assert_int_equal(mlx_vector_array_append_value(v, a), 0);
    return v;
}

static mlx_array get(mlx_vector_array v, size_t i)
{
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&a, v, i), 0);
    assert_int_equal(mlx_array_eval(a), 0);
    return a;
}

static void expect_values(mlx_array a, mlx_dtype dtype, const double *want, size_t n)
{
    assert_int_equal(mlx_array_eval(a), 0);
    assert_int_equal(mlx_array_dtype(a), dtype);
    assert_int_equal(mlx_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        if (fabs(tu_get(a, i) - want[i]) > 1e-6 * fmax(1, fabs(want[i])))
            fail_msg("[%zu]: got %.9g, want %.9g", i, tu_get(a, i), want[i]);
}

/* Runs value_and_grad of a closure over argnums on the inputs; returns the
 * gradients (the values go to *vals when not NULL). */
static mlx_vector_array grads_of(mlx_closure f, const int *argnums, size_t n, mlx_vector_array in,
                                 mlx_vector_array *vals)
{
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    assert_int_equal(mlx_value_and_grad(&vg, f, argnums, n), 0);
    mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();
    assert_int_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, in), 0);
    mlx_closure_value_and_grad_free(vg);
    if (vals)
        *vals = v;
    else
        mlx_vector_array_free(v);
    return g;
}

/* ---- functions under test ---- */

/* sum(max(x)) */
static int f_max(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), m = mlx_array_new();
    int rc = mlx_max(&m, x, false, tu_stream()) || mlx_vector_array_set_value(res, m);
    mlx_array_free(m);
    mlx_array_free(x);
    return rc;
}

/* sum(x * stop_gradient(x)) */
static int f_stopped(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), s = mlx_array_new(), p = mlx_array_new();
    int rc = mlx_stop_gradient(&s, x, tu_stream()) || mlx_multiply(&p, x, s, tu_stream()) ||
             mlx_sum(&p, p, false, tu_stream()) || mlx_vector_array_set_value(res, p);
    tu_free_n((mlx_array[]){x, s, p}, 3);
    return rc;
}

/* sum(a * b^2 + c), three arguments */
static int f_three(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = get(in, 0), b = get(in, 1), c = get(in, 2), t = mlx_array_new();
    int rc = mlx_square(&t, b, tu_stream()) || mlx_multiply(&t, a, t, tu_stream()) || mlx_add(&t, t, c, tu_stream()) ||
             mlx_sum(&t, t, false, tu_stream()) || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){a, b, c, t}, 4);
    return rc;
}

/* sum(x * x) and, as a second output, x itself */
static int f_two_outputs(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), t = mlx_array_new();
    int rc = mlx_multiply(&t, x, x, tu_stream()) || mlx_sum(&t, t, false, tu_stream());
    if (!rc) {
        mlx_vector_array out = mlx_vector_array_new();
        rc = mlx_vector_array_append_value(out, t) || mlx_vector_array_append_value(out, x) ||
             mlx_vector_array_set(res, out);
        mlx_vector_array_free(out);
    }
    tu_free_n((mlx_array[]){x, t}, 2);
    return rc;
}

/* x * 2.5 summed: MLX converts an integer x to float32 first */
static int f_scaled_sum(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), k = mlx_array_new_float(2.5f), t = mlx_array_new();
    int rc = mlx_multiply(&t, x, k, tu_stream()) || mlx_sum(&t, t, false, tu_stream()) ||
             mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){x, k, t}, 3);
    return rc;
}

/* x * x, elementwise (not a scalar) */
static int f_square_vec(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), t = mlx_array_new();
    int rc = mlx_multiply(&t, x, x, tu_stream()) || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){x, t}, 2);
    return rc;
}

static int f_fails(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)res;
    (void)in;
    return 3;
}

static int f_no_output(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)res;
    (void)in;
    return 0;
}

/* sum(sin(x)) */
static int f_sin_sum(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), t = mlx_array_new();
    int rc = mlx_sin(&t, x, tu_stream()) || mlx_sum(&t, t, false, tu_stream()) || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){x, t}, 2);
    return rc;
}

/* d/dx sum(sin(x)) through mlx_vjp: cos(x) */
static int f_grad_of_sin(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), one = mlx_array_new_float(1.0f);
    mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_closure f = mlx_closure_new_func(f_sin_sum);
    mlx_vector_array p = vec1(x), c = vec1(one);
    int rc = mlx_vjp(&outs, &grads, f, p, c) || mlx_vector_array_set(res, grads);
    mlx_vector_array_free(p);
    mlx_vector_array_free(c);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
    mlx_closure_free(f);
    mlx_array_free(one);
    mlx_array_free(x);
    return rc;
}

/* a * b */
static int f_product(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = get(in, 0), b = get(in, 1), t = mlx_array_new();
    int rc = mlx_multiply(&t, a, b, tu_stream()) || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){a, b, t}, 3);
    return rc;
}

/* sum(d/dx sum(sin(x))) = sum(cos(x)) */
static int f_sum_of_first_derivative(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_vector_array d = mlx_vector_array_new();
    int rc = f_grad_of_sin(&d, in);
    mlx_array g = rc ? mlx_array_new() : get(d, 0), t = mlx_array_new();
    rc = rc || mlx_sum(&t, g, false, tu_stream()) || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){g, t}, 2);
    mlx_vector_array_free(d);
    return rc;
}

/* ---- tests ---- */

/* mx.grad(lambda x: mx.max(x))(mx.array([1., 3., 3., 2.])) == [0, .5, .5, 0]
 * and mx.jvp(mx.max, [that], [[1., 10., 100., 1000.]]) == 10 (the first
 * maximum's tangent). */
static void test_max_shares_its_gradient_among_ties(void **state)
{
    (void)state;
    const float v[4] = {1, 3, 3, 2};
    int shape[1] = {4};
    mlx_array x = tu_f32(v, shape, 1);
    mlx_vector_array in = vec1(x);
    mlx_closure f = mlx_closure_new_func(f_max);
    int arg = 0;
    mlx_vector_array g = grads_of(f, &arg, 1, in, NULL);
    mlx_array g0 = get(g, 0);
    expect_values(g0, MLX_FLOAT32, (const double[]){0, 0.5, 0.5, 0}, 4);
    const float tv[4] = {1, 10, 100, 1000};
    mlx_array t = tu_f32(tv, shape, 1);
    mlx_vector_array tans = vec1(t), o = mlx_vector_array_new(), jt = mlx_vector_array_new();
    assert_int_equal(mlx_jvp(&o, &jt, f, in, tans), 0);
    mlx_array j0 = get(jt, 0);
    expect_values(j0, MLX_FLOAT32, (const double[]){10}, 1);
    tu_free_n((mlx_array[]){g0, x, t, j0}, 4);
    mlx_vector_array_free(tans);
    mlx_vector_array_free(o);
    mlx_vector_array_free(jt);
    mlx_vector_array_free(g);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

/* mx.grad(lambda x: (x * mx.stop_gradient(x)).sum())([2., 3.]) == [2, 3] */
static void test_stop_gradient_stops_the_gradient(void **state)
{
    (void)state;
    const float v[2] = {2, 3};
    int shape[1] = {2};
    mlx_array x = tu_f32(v, shape, 1);
    mlx_vector_array in = vec1(x);
    mlx_closure f = mlx_closure_new_func(f_stopped);
    int arg = 0;
    mlx_vector_array g = grads_of(f, &arg, 1, in, NULL);
    mlx_array g0 = get(g, 0);
    expect_values(g0, MLX_FLOAT32, (const double[]){2, 3}, 2);
    tu_free_n((mlx_array[]){g0, x}, 2);
    mlx_vector_array_free(g);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

/* Only the arguments named get gradients, in ascending order, whatever
 * order and sign the numbers were given in. */
static void test_argnums_select_sort_and_count_from_the_end(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(2), b = mlx_array_new_float(3), c = mlx_array_new_float(5);
    mlx_vector_array in = mlx_vector_array_new();
    mlx_vector_array_append_value(in, a);
    mlx_vector_array_append_value(in, b);
    mlx_vector_array_append_value(in, c);
    mlx_closure f = mlx_closure_new_func(f_three);
    const int args[2] = {-2, 0}; /* b and a: gradients come as (a, b) */
    mlx_vector_array vals;
    mlx_vector_array g = grads_of(f, args, 2, in, &vals);
    assert_int_equal(mlx_vector_array_size(g), 2);
    mlx_array ga = get(g, 0), gb = get(g, 1), v = get(vals, 0);
    expect_values(ga, MLX_FLOAT32, (const double[]){9}, 1);  /* b^2 */
    expect_values(gb, MLX_FLOAT32, (const double[]){12}, 1); /* 2ab */
    expect_values(v, MLX_FLOAT32, (const double[]){23}, 1);
    tu_free_n((mlx_array[]){ga, gb, v, a, b, c}, 6);
    mlx_vector_array_free(g);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

static void test_bad_argnums_report_mlx_messages(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(2);
    mlx_vector_array in = vec1(a);
    mlx_closure f = mlx_closure_new_func(f_square_vec);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();

    assert_int_not_equal(mlx_value_and_grad(&vg, f, NULL, 0), 0);
    tu_expect_error("[grad] Must specify at least one argument.");

    const int repeated[2] = {0, -1};
    assert_int_equal(mlx_value_and_grad(&vg, f, repeated, 2), 0);
    assert_int_not_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, in), 0);
    tu_expect_error("[grad] Repeat argument number not allowed in grad.");

    const int out_of_range[1] = {1};
    assert_int_equal(mlx_value_and_grad(&vg, f, out_of_range, 1), 0);
    assert_int_not_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, in), 0);
    tu_expect_error("[grad] Invalid argument number for function with 1 inputs.");
    assert_int_equal(mlx_vector_array_size(g), 0);

    assert_int_not_equal(mlx_value_and_grad(&vg, (mlx_closure){NULL}, out_of_range, 1), 0);
    tu_expect_error("[grad]");

    mlx_closure_value_and_grad_free(vg);
    mlx_vector_array_free(v);
    mlx_vector_array_free(g);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
    mlx_array_free(a);
}

/* MLX: "[vjp] Output shape (2) does not match cotangent shape ()." for a
 * value_and_grad of a non-scalar function. */
static void test_value_and_grad_of_a_non_scalar_function_fails(void **state)
{
    (void)state;
    const float v2[2] = {1, 2};
    int shape[1] = {2};
    mlx_array x = tu_f32(v2, shape, 1);
    mlx_vector_array in = vec1(x);
    mlx_closure f = mlx_closure_new_func(f_square_vec);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    int arg = 0;
    assert_int_equal(mlx_value_and_grad(&vg, f, &arg, 1), 0);
    mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();
    assert_int_not_equal(mlx_closure_value_and_grad_apply(&v, &g, vg, in), 0);
    tu_expect_error("[grad] Output shape (2) does not match cotangent shape ().");
    mlx_closure_value_and_grad_free(vg);
    mlx_vector_array_free(v);
    mlx_vector_array_free(g);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
    mlx_array_free(x);
}

static void test_cotangents_must_match_outputs_in_number_and_shape(void **state)
{
    (void)state;
    const float v2[2] = {1, 2};
    int shape[1] = {2}, one[1] = {1};
    mlx_array x = tu_f32(v2, shape, 1), c1 = tu_f32(v2, one, 1);
    mlx_vector_array in = vec1(x), cots = vec1(c1), none = mlx_vector_array_new();
    mlx_closure f = mlx_closure_new_func(f_square_vec);
    mlx_vector_array o = mlx_vector_array_new(), g = mlx_vector_array_new();
    assert_int_not_equal(mlx_vjp(&o, &g, f, in, cots), 0);
    tu_expect_error("[vjp] Output shape (2) does not match cotangent shape (1).");
    assert_int_not_equal(mlx_vjp(&o, &g, f, in, none), 0);
    tu_expect_error("[vjp] Number of outputs to compute gradients for (1) does not match number of cotangents (0).");
    assert_int_not_equal(mlx_jvp(&o, &g, f, in, none), 0);
    tu_expect_error("[jvp] Number of inputs (1) does not match number of tangents (0).");
    assert_int_not_equal(mlx_jvp(&o, &g, f, in, cots), 0);
    tu_expect_error("[jvp] Input shape does not match shape of tangent.");
    assert_int_equal(mlx_vector_array_size(o), 0);
    tu_free_n((mlx_array[]){x, c1}, 2);
    mlx_vector_array_free(in);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(none);
    mlx_vector_array_free(o);
    mlx_vector_array_free(g);
    mlx_closure_free(f);
}

/* A failing function fails the transform with one message; nothing leaks
 * (valgrind and ASan runs of this suite check that). */
static void test_a_failing_function_fails_the_transform_once(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(1);
    mlx_vector_array in = vec1(x);
    mlx_vector_array o = mlx_vector_array_new(), g = mlx_vector_array_new();
    mlx_closure bad = mlx_closure_new_func(f_fails), empty = mlx_closure_new_func(f_no_output);
    assert_int_not_equal(mlx_vjp(&o, &g, bad, in, in), 0);
    tu_expect_error("[mlx_closure_apply] The closure's function failed (it returned 3).");
    assert_int_not_equal(mlx_jvp(&o, &g, empty, in, in), 0);
    tu_expect_error("[mlx_closure_apply] The closure's function returned 0 without writing its output.");
    assert_int_not_equal(mlx_vjp(&o, &g, (mlx_closure){NULL}, in, in), 0);
    tu_expect_error("[vjp]");
    assert_int_equal(mlx_vector_array_size(o), 0);
    mlx_closure_free(bad);
    mlx_closure_free(empty);
    mlx_vector_array_free(o);
    mlx_vector_array_free(g);
    mlx_vector_array_free(in);
    mlx_array_free(x);
}

/* mx.value_and_grad(lambda x: (x * 2.5).sum())(mx.array([1, 2, 3])) ==
 * (15.0 float32, [2, 2, 2] int32): the gradient of an integer input has
 * its dtype (the cast of the cotangent back truncates). */
static void test_integer_inputs_get_gradients_of_their_dtype(void **state)
{
    (void)state;
    const int32_t v[3] = {1, 2, 3};
    int shape[1] = {3};
    mlx_array x = tu_i32(v, shape, 1);
    mlx_vector_array in = vec1(x), vals;
    mlx_closure f = mlx_closure_new_func(f_scaled_sum);
    int arg = 0;
    mlx_vector_array g = grads_of(f, &arg, 1, in, &vals);
    mlx_array g0 = get(g, 0), v0 = get(vals, 0);
    expect_values(g0, MLX_INT32, (const double[]){2, 2, 2}, 3);
    expect_values(v0, MLX_FLOAT32, (const double[]){15}, 1);
    tu_free_n((mlx_array[]){g0, v0, x}, 3);
    mlx_vector_array_free(g);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

/* mx.vjp(lambda x: [x * x], [[1.5, 2.]], [mx.array([1, 1], int32)]):
 * the cotangent takes the output's dtype, the gradient is [3, 4] float32;
 * and a float16 input gets a float16 gradient. */
static void test_cotangents_take_the_output_dtype(void **state)
{
    (void)state;
    const float v[2] = {1.5f, 2};
    const int32_t ones[2] = {1, 1};
    int shape[1] = {2};
    mlx_array x = tu_f32(v, shape, 1), c = tu_i32(ones, shape, 1), h = mlx_array_new();
    assert_int_equal(mlx_astype(&h, x, MLX_FLOAT16, tu_stream()), 0);
    mlx_closure f = mlx_closure_new_func(f_square_vec);
    mlx_vector_array in = vec1(x), cots = vec1(c), o = mlx_vector_array_new(), g = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&o, &g, f, in, cots), 0);
    mlx_array g0 = get(g, 0);
    expect_values(g0, MLX_FLOAT32, (const double[]){3, 4}, 2);
    mlx_vector_array hin = vec1(h);
    assert_int_equal(mlx_vjp(&o, &g, f, hin, cots), 0);
    mlx_array g1 = get(g, 0);
    expect_values(g1, MLX_FLOAT16, (const double[]){3, 4}, 2);
    tu_free_n((mlx_array[]){g0, g1, x, c, h}, 5);
    mlx_vector_array_free(in);
    mlx_vector_array_free(hin);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(o);
    mlx_vector_array_free(g);
    mlx_closure_free(f);
}

/* mx.vjp(lambda a, b: [a * b], [2., 2.], [1.]) == ([4], [2, 2]): the same
 * array given twice is two primals, each with its own gradient. */
static void test_one_array_given_twice_gets_two_gradients(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(2), one = mlx_array_new_float(1);
    mlx_vector_array in = mlx_vector_array_new();
    mlx_vector_array_append_value(in, x);
    mlx_vector_array_append_value(in, x);
    mlx_closure f = mlx_closure_new_func(f_product);
    mlx_vector_array cots = vec1(one), o = mlx_vector_array_new(), g = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&o, &g, f, in, cots), 0);
    mlx_array o0 = get(o, 0), g0 = get(g, 0), g1 = get(g, 1);
    expect_values(o0, MLX_FLOAT32, (const double[]){4}, 1);
    expect_values(g0, MLX_FLOAT32, (const double[]){2}, 1);
    expect_values(g1, MLX_FLOAT32, (const double[]){2}, 1);
    tu_free_n((mlx_array[]){o0, g0, g1, x, one}, 5);
    mlx_vector_array_free(in);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(o);
    mlx_vector_array_free(g);
    mlx_closure_free(f);
}

/* value_and_grad returns every output, differentiating the first only. */
static void test_value_and_grad_returns_later_outputs_undifferentiated(void **state)
{
    (void)state;
    const float v[2] = {1, 2};
    int shape[1] = {2};
    mlx_array x = tu_f32(v, shape, 1);
    mlx_vector_array in = vec1(x), vals;
    mlx_closure f = mlx_closure_new_func(f_two_outputs);
    int arg = 0;
    mlx_vector_array g = grads_of(f, &arg, 1, in, &vals);
    assert_int_equal(mlx_vector_array_size(vals), 2);
    mlx_array g0 = get(g, 0), v1 = get(vals, 1);
    expect_values(g0, MLX_FLOAT32, (const double[]){2, 4}, 2);
    expect_values(v1, MLX_FLOAT32, (const double[]){1, 2}, 2);
    tu_free_n((mlx_array[]){g0, v1, x}, 3);
    mlx_vector_array_free(g);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

/* The second derivative of sum(sin(x)) by value_and_grad of a function
 * that calls vjp: -sin(x). */
static void test_gradients_of_gradients(void **state)
{
    (void)state;
    const float v[3] = {0.5f, 1.0f, 2.0f};
    int shape[1] = {3};
    mlx_array x = tu_f32(v, shape, 1);
    mlx_vector_array in = vec1(x);
    mlx_closure f = mlx_closure_new_func(f_sum_of_first_derivative);
    int arg = 0;
    mlx_vector_array g = grads_of(f, &arg, 1, in, NULL);
    mlx_array g0 = get(g, 0);
    expect_values(g0, MLX_FLOAT32, (const double[]){-sin(0.5), -sin(1.0), -sin(2.0)}, 3);
    tu_free_n((mlx_array[]){g0, x}, 2);
    mlx_vector_array_free(g);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

/* A 100,000-op chain differentiates (the walks are iterative) and gives
 * the exact gradient: d/dx of x + 1 + 1 + ... is 1. */
static int chain_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), one = mlx_array_new_float(1), t = mlx_array_new();
    int rc = mlx_add(&t, x, one, tu_stream());
    for (int i = 1; i < 100000 && !rc; i++)
        rc = mlx_add(&t, t, one, tu_stream());
    rc = rc || mlx_vector_array_set_value(res, t);
    tu_free_n((mlx_array[]){x, one, t}, 3);
    return rc;
}

static void test_a_100000_op_chain_differentiates(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(1);
    mlx_vector_array in = vec1(x);
    mlx_closure f = mlx_closure_new_func(chain_fn);
    int arg = 0;
    mlx_vector_array vals;
    mlx_vector_array g = grads_of(f, &arg, 1, in, &vals);
    mlx_array g0 = get(g, 0), v0 = get(vals, 0);
    expect_values(g0, MLX_FLOAT32, (const double[]){1}, 1);
    expect_values(v0, MLX_FLOAT32, (const double[]){100001}, 1);
    tu_free_n((mlx_array[]){g0, v0, x}, 3);
    mlx_vector_array_free(g);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(in);
    mlx_closure_free(f);
}

/* The calls of mlx-c's examples/example-grad.c (a unary closure x + 1 on
 * a GPU stream, jvp and value_and_grad, then a payload closure adding an
 * array the closure owns): MLX prints out 2 and dout 1 for each. */
static int inc(mlx_array *res, const mlx_array in)
{
    mlx_stream gpu = mlx_default_gpu_stream_new();
    mlx_array one = mlx_array_new_float(1.0);
    int rc = mlx_add(res, in, one, gpu);
    mlx_stream_free(gpu);
    mlx_array_free(one);
    return rc;
}

static int inc_by_payload(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_array x = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_add(&x, x, *(mlx_array *)payload, tu_stream()) ||
             mlx_vector_array_set_value(res, x);
    mlx_array_free(x);
    return rc;
}

static void free_array_payload(void *p) { mlx_array_free(*(mlx_array *)p); }

static void expect_out_and_dout(mlx_vector_array out, mlx_vector_array dout)
{
    mlx_array o = get(out, 0), d = get(dout, 0);
    expect_values(o, MLX_FLOAT32, (const double[]){2}, 1);
    expect_values(d, MLX_FLOAT32, (const double[]){1}, 1);
    mlx_array_free(o);
    mlx_array_free(d);
}

static void test_the_calls_of_mlx_c_example_grad(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(1.0);
    static mlx_array y;
    y = mlx_array_new_float(1.0);
    mlx_closure cls = mlx_closure_new_unary(inc);
    mlx_closure with_value = mlx_closure_new_func_payload(inc_by_payload, &y, free_array_payload);
    mlx_array one = mlx_array_new_float(1.0);
    mlx_vector_array primals = vec1(x), tangents = vec1(one);
    mlx_vector_array out = mlx_vector_array_new(), dout = mlx_vector_array_new();
    assert_int_equal(mlx_jvp(&out, &dout, cls, primals, tangents), 0);
    expect_out_and_dout(out, dout);
    int garg = 0;
    mlx_closure *closures[2] = {&cls, &with_value};
    for (int i = 0; i < 2; i++) {
        mlx_closure_value_and_grad vag = mlx_closure_value_and_grad_new();
        assert_int_equal(mlx_value_and_grad(&vag, *closures[i], &garg, 1), 0);
        assert_int_equal(mlx_closure_value_and_grad_apply(&out, &dout, vag, primals), 0);
        expect_out_and_dout(out, dout);
        mlx_closure_value_and_grad_free(vag);
    }
    mlx_vector_array_free(out);
    mlx_vector_array_free(dout);
    mlx_vector_array_free(primals);
    mlx_vector_array_free(tangents);
    mlx_array_free(one);
    mlx_closure_free(with_value);
    mlx_closure_free(cls);
    mlx_array_free(x);
}

/* One value_and_grad closure, compiled, applied by several threads at
 * once (each thread has its own compile cache): each gets its own
 * input's gradient, 2 x. */
typedef struct thread_job {
    mlx_closure compiled;
    float x;
    int ok;
} thread_job;

static int value_and_grad_of_square(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_closure_value_and_grad *vg = payload;
    mlx_vector_array v = mlx_vector_array_new(), g = mlx_vector_array_new();
    mlx_array a = mlx_array_new();
    int rc = mlx_closure_value_and_grad_apply(&v, &g, *vg, in) || mlx_vector_array_get(&a, g, 0) ||
             mlx_vector_array_append_value(v, a) || mlx_vector_array_set(res, v);
    mlx_array_free(a);
    mlx_vector_array_free(v);
    mlx_vector_array_free(g);
    return rc;
}

static int square_sum(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), t = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&t, x, x, tu_stream()) ||
             mlx_sum(&t, t, false, tu_stream()) || mlx_vector_array_set_value(res, t);
    mlx_array_free(x);
    mlx_array_free(t);
    return rc;
}

static void *run_job(void *arg)
{
    thread_job *j = arg;
    j->ok = 1;
    for (int round = 0; round < 50 && j->ok; round++) {
        mlx_array x = mlx_array_new_float(j->x + (float)round);
        mlx_vector_array in = mlx_vector_array_new_value(x), out = mlx_vector_array_new();
        mlx_array g = mlx_array_new();
        float gv = 0;
        j->ok = !mlx_closure_apply(&out, j->compiled, in) && !mlx_vector_array_get(&g, out, 1) &&
                !mlx_array_item_float32(&gv, g) && gv == 2 * (j->x + (float)round);
        mlx_array_free(g);
        mlx_array_free(x);
        mlx_vector_array_free(in);
        mlx_vector_array_free(out);
    }
    return NULL;
}

static void test_a_compiled_value_and_grad_runs_on_many_threads(void **state)
{
    (void)state;
    int arg = 0;
    mlx_closure f = mlx_closure_new_func(square_sum);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    assert_int_equal(mlx_value_and_grad(&vg, f, &arg, 1), 0);
    mlx_closure step = mlx_closure_new_func_payload(value_and_grad_of_square, &vg, NULL);
    mlx_closure compiled = mlx_closure_new();
    assert_int_equal(mlx_compile(&compiled, step, false), 0);
    enum { N = 4 };
    pthread_t th[N];
    thread_job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (thread_job){compiled, (float)(i * 100), 0};
        assert_int_equal(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_true(jobs[i].ok);
    }
    mlx_closure_free(compiled);
    mlx_closure_free(step);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(f);
}

/* Memory: value_and_grad of N chained sin ops on 1M floats holds the N
 * activations reverse mode needs (each sin's input, for its cos) and no
 * more than two buffers besides; intermediates die as soon as the
 * backward pass is done with them. (Measured: exactly N buffers for N =
 * 8 to 64.) */
enum { CHAIN_N = 24, CHAIN_SIZE = 1 << 20 };

static int sin_chain(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0);
    for (int i = 0; i < CHAIN_N && !rc; i++)
        rc = mlx_sin(&x, x, tu_stream());
    rc = rc || mlx_sum(&x, x, false, tu_stream()) || mlx_vector_array_set_value(res, x);
    mlx_array_free(x);
    return rc;
}

static void test_value_and_grad_of_a_chain_keeps_only_its_activations(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new();
    assert_int_equal(mlx_arange(&x, 0, CHAIN_SIZE, 1, MLX_FLOAT32, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(x), 0);
    mlx_vector_array in = vec1(x), vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_closure f = mlx_closure_new_func(sin_chain);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    int arg = 0;
    assert_int_equal(mlx_value_and_grad(&vg, f, &arg, 1), 0);
    size_t base, peak;
    assert_int_equal(mlx_clear_cache(), 0);
    assert_int_equal(mlx_get_active_memory(&base), 0);
    assert_int_equal(mlx_reset_peak_memory(), 0);
    assert_int_equal(mlx_closure_value_and_grad_apply(&vals, &grads, vg, in), 0);
    assert_int_equal(mlx_eval(grads), 0);
    assert_int_equal(mlx_get_peak_memory(&peak), 0);
    double buffers = (double)(peak - base) / (4.0 * CHAIN_SIZE);
    if (buffers > CHAIN_N + 2)
        fail_msg("peak %.1f buffers for a chain of %d", buffers, CHAIN_N);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(f);
    mlx_vector_array_free(in);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(grads);
    mlx_array_free(x);
}

/* uniform(low, high) and normal(loc, scale) are linear in their parameters
 * (MLX composes low + (high - low) u and loc + scale e): the gradients of
 * their sums over 64 draws are 64 - sum(u) and sum(u), and 64 and sum(e),
 * u and e the standard draws of the same key. */
static int draw_kind; /* 0 uniform, 1 normal */

static int draw_sum(mlx_vector_array *res, const mlx_vector_array in)
{
    const int shape[1] = {64};
    mlx_array a = get(in, 0), b = get(in, 1), key = mlx_array_new(), r = mlx_array_new();
    int rc = mlx_random_key(&key, 7) ||
             (draw_kind == 0 ? mlx_random_uniform(&r, a, b, shape, 1, MLX_FLOAT32, key, tu_stream())
                             : mlx_random_normal_broadcast(&r, shape, 1, MLX_FLOAT32, a, b, key, tu_stream())) ||
             mlx_sum(&r, r, false, tu_stream()) || mlx_vector_array_set_value(res, r);
    tu_free_n((mlx_array[]){a, b, key, r}, 4);
    return rc;
}

static double standard_sum(int kind)
{
    const int shape[1] = {64};
    mlx_array key = mlx_array_new(), r = mlx_array_new(), zero = mlx_array_new_float(0), one = mlx_array_new_float(1);
    assert_int_equal(mlx_random_key(&key, 7), 0);
    assert_int_equal(kind == 0 ? mlx_random_uniform(&r, zero, one, shape, 1, MLX_FLOAT32, key, tu_stream())
                               : mlx_random_normal(&r, shape, 1, MLX_FLOAT32, 0, 1, key, tu_stream()),
                     0);
    assert_int_equal(mlx_sum(&r, r, false, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    double v = tu_get(r, 0);
    tu_free_n((mlx_array[]){key, r, zero, one}, 4);
    return v;
}

static void test_uniform_and_normal_are_differentiable_in_their_parameters(void **state)
{
    (void)state;
    const int args[2] = {0, 1};
    mlx_closure f = mlx_closure_new_func(draw_sum);
    for (draw_kind = 0; draw_kind < 2; draw_kind++) {
        mlx_array a = mlx_array_new_float(draw_kind ? 0.5f : -1), b = mlx_array_new_float(draw_kind ? 2 : 3);
        mlx_vector_array in = mlx_vector_array_new();
        mlx_vector_array_append_value(in, a);
        mlx_vector_array_append_value(in, b);
        mlx_vector_array g = grads_of(f, args, 2, in, NULL);
        mlx_array ga = get(g, 0), gb = get(g, 1);
        double s = standard_sum(draw_kind);
        double want_a = draw_kind == 0 ? 64 - s : 64, want_b = s;
        if (fabs(tu_get(ga, 0) - want_a) > 1e-3 || fabs(tu_get(gb, 0) - want_b) > 1e-3)
            fail_msg("kind %d: got %g %g, want %g %g", draw_kind, tu_get(ga, 0), tu_get(gb, 0), want_a, want_b);
        tu_free_n((mlx_array[]){a, b, ga, gb}, 4);
        mlx_vector_array_free(g);
        mlx_vector_array_free(in);
    }
    mlx_closure_free(f);
}

/* The custom closure kinds hold their function and payload like the other
 * closures: apply passes the inputs through, a copy made by _set shares
 * the payload, whose destructor runs once, when the last handle goes; an
 * empty handle fails to apply with one message. */
static int dtor_runs;
static void count_dtor(void *p) { dtor_runs += *(int *)p; }

/* Returns its third list (the outputs, for a vjp rule), with the payload's
 * value checked. */
static int custom_third(mlx_vector_array *res, const mlx_vector_array a, const mlx_vector_array b,
                        const mlx_vector_array c, void *payload)
{
    (void)a;
    (void)b;
    return *(int *)payload == 1 ? mlx_vector_array_set(res, c) : 1;
}

static int jvp_count(mlx_vector_array *res, const mlx_vector_array a, const mlx_vector_array b, const int *argnums,
                     size_t n)
{
    (void)b;
    (void)argnums;
    mlx_array k = mlx_array_new_float((float)n);
    int rc = mlx_vector_array_set(res, a) || mlx_vector_array_append_value(*res, k);
    mlx_array_free(k);
    return rc;
}

static int vmap_axes(mlx_vector_array *res_0, mlx_vector_int *res_1, const mlx_vector_array in, const int *axes,
                     size_t n)
{
    int copy[8];
    for (size_t i = 0; i < n && i < 8; i++)
        copy[i] = axes[i];
    return mlx_vector_array_set(res_0, in) || mlx_vector_int_set_data(res_1, copy, n < 8 ? n : 8);
}

static void test_custom_closure_kinds_hold_and_apply_their_functions(void **state)
{
    (void)state;
    static int one = 1;
    dtor_runs = 0;
    mlx_array x = mlx_array_new_float(3);
    mlx_vector_array v = mlx_vector_array_new_value(x), r = mlx_vector_array_new();

    mlx_closure_custom c = mlx_closure_custom_new_func_payload(custom_third, &one, count_dtor);
    mlx_closure_custom copy = mlx_closure_custom_new();
    assert_int_equal(mlx_closure_custom_set(&copy, c), 0);
    assert_int_equal(mlx_closure_custom_free(c), 0);
    assert_int_equal(dtor_runs, 0);
    assert_int_equal(mlx_closure_custom_apply(&r, copy, v, v, v), 0);
    assert_int_equal(mlx_vector_array_size(r), 1);
    assert_int_equal(mlx_closure_custom_free(copy), 0);
    assert_int_equal(dtor_runs, 1);

    mlx_closure_custom_jvp j = mlx_closure_custom_jvp_new_func(jvp_count);
    const int argnums[2] = {0, 1};
    assert_int_equal(mlx_closure_custom_jvp_apply(&r, j, v, v, argnums, 2), 0);
    assert_int_equal(mlx_vector_array_size(r), 2);
    mlx_closure_custom_jvp_free(j);

    mlx_closure_custom_vmap m = mlx_closure_custom_vmap_new_func(vmap_axes);
    mlx_vector_int axes = mlx_vector_int_new();
    assert_int_equal(mlx_closure_custom_vmap_apply(&r, &axes, m, v, argnums, 2), 0);
    assert_int_equal(mlx_vector_int_size(axes), 2);
    mlx_closure_custom_vmap_free(m);

    assert_int_not_equal(mlx_closure_custom_apply(&r, mlx_closure_custom_new(), v, v, v), 0);
    tu_expect_error("[mlx_closure_custom_apply] Expected a non-empty mlx_closure_custom");
    mlx_vector_int_free(axes);
    mlx_vector_array_free(v);
    mlx_vector_array_free(r);
    mlx_array_free(x);
}

/* MLX's test_custom_function: custom_function(exp) with no rules is exp;
 * a vjp rule returning 42 overrides the gradient while the jvp stays
 * exp's own; a jvp rule returning 7 dx overrides the jvp. */
static int exp_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), e = mlx_array_new();
    int rc = mlx_exp(&e, x, tu_stream()) || mlx_vector_array_set_value(res, e);
    tu_free_n((mlx_array[]){x, e}, 2);
    return rc;
}

static int vjp_42(mlx_vector_array *res, const mlx_vector_array primals, const mlx_vector_array cots,
                  const mlx_vector_array outs)
{
    (void)cots;
    (void)outs;
    mlx_array x = get(primals, 0), k = mlx_array_new_float(42), g = mlx_array_new();
    int rc = mlx_ones_like(&g, x, tu_stream()) || mlx_multiply(&g, g, k, tu_stream()) ||
             mlx_vector_array_set_value(res, g);
    tu_free_n((mlx_array[]){x, k, g}, 3);
    return rc;
}

static int jvp_7(mlx_vector_array *res, const mlx_vector_array primals, const mlx_vector_array tans,
                 const int *argnums, size_t n)
{
    (void)primals;
    (void)argnums;
    (void)n;
    mlx_array t = get(tans, 0), k = mlx_array_new_float(7), g = mlx_array_new();
    int rc = mlx_multiply(&g, t, k, tu_stream()) || mlx_vector_array_set_value(res, g);
    tu_free_n((mlx_array[]){t, k, g}, 3);
    return rc;
}

/* grad and jvp of f at 1: into *g and *j */
static void grad_and_jvp_at_one(mlx_closure f, double *g, double *j)
{
    mlx_array one = mlx_array_new_float(1);
    mlx_vector_array in = vec1(one), vals, o = mlx_vector_array_new(), d = mlx_vector_array_new();
    int arg = 0;
    mlx_vector_array gr = grads_of(f, &arg, 1, in, &vals);
    mlx_array g0 = get(gr, 0);
    *g = tu_get(g0, 0);
    assert_int_equal(mlx_jvp(&o, &d, f, in, in), 0);
    mlx_array d0 = get(d, 0);
    *j = tu_get(d0, 0);
    tu_free_n((mlx_array[]){one, g0, d0}, 3);
    mlx_vector_array bufs[] = {in, vals, o, d, gr};
    for (int i = 0; i < 5; i++)
        mlx_vector_array_free(bufs[i]);
}

static void test_custom_functions_override_the_rules_they_are_given(void **state)
{
    (void)state;
    double g, j, e = exp(1.0);
    mlx_closure f = mlx_closure_new_func(exp_fn), c = mlx_closure_new();
    mlx_closure_custom v = mlx_closure_custom_new_func(vjp_42);
    mlx_closure_custom_jvp jv = mlx_closure_custom_jvp_new_func(jvp_7);
    mlx_closure_custom_vmap none = mlx_closure_custom_vmap_new();

    assert_int_equal(mlx_custom_function(&c, f, mlx_closure_custom_new(), mlx_closure_custom_jvp_new(), none), 0);
    assert_ptr_equal(c.ctx, f.ctx); /* no rules: the function itself, as MLX */
    grad_and_jvp_at_one(c, &g, &j);
    assert_true(fabs(g - e) < 1e-5 && fabs(j - e) < 1e-5);

    assert_int_equal(mlx_custom_vjp(&c, f, v), 0);
    grad_and_jvp_at_one(c, &g, &j);
    assert_true(g == 42 && fabs(j - e) < 1e-5);

    assert_int_equal(mlx_custom_function(&c, f, v, jv, none), 0);
    grad_and_jvp_at_one(c, &g, &j);
    assert_true(g == 42 && j == 7);

    assert_int_not_equal(mlx_custom_vjp(&c, f, mlx_closure_custom_new()), 0);
    tu_expect_error("[custom_vjp]");
    mlx_closure_free(c);
    mlx_closure_free(f);
    mlx_closure_custom_free(v);
    mlx_closure_custom_jvp_free(jv);
}

/* Two outputs (x, 2 x) with a vjp rule cot0 + 10 cot1: the gradient of
 * the sum of both outputs is 11, the rule's answer for both cotangents. */
static int two_out(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = get(in, 0), two = mlx_array_new_float(2), y = mlx_array_new();
    int rc = mlx_multiply(&y, x, two, tu_stream());
    if (!rc) {
        mlx_vector_array v = mlx_vector_array_new();
        rc = mlx_vector_array_append_value(v, x) || mlx_vector_array_append_value(v, y) ||
             mlx_vector_array_set(res, v);
        mlx_vector_array_free(v);
    }
    tu_free_n((mlx_array[]){x, two, y}, 3);
    return rc;
}

static int vjp_mix(mlx_vector_array *res, const mlx_vector_array primals, const mlx_vector_array cots,
                   const mlx_vector_array outs)
{
    (void)primals;
    (void)outs;
    mlx_array c0 = get(cots, 0), c1 = get(cots, 1), ten = mlx_array_new_float(10), g = mlx_array_new();
    int rc = mlx_multiply(&g, c1, ten, tu_stream()) || mlx_add(&g, g, c0, tu_stream()) ||
             mlx_vector_array_set_value(res, g);
    tu_free_n((mlx_array[]){c0, c1, ten, g}, 4);
    return rc;
}

static void test_a_custom_vjp_of_several_outputs_sees_every_cotangent(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(two_out), c = mlx_closure_new();
    mlx_closure_custom v = mlx_closure_custom_new_func(vjp_mix);
    assert_int_equal(mlx_custom_vjp(&c, f, v), 0);
    mlx_array x = mlx_array_new_float(3), one = mlx_array_new_float(1);
    mlx_vector_array in = vec1(x), cots = mlx_vector_array_new(), o = mlx_vector_array_new(),
                     g = mlx_vector_array_new();
    mlx_vector_array_append_value(cots, one);
    mlx_vector_array_append_value(cots, one);
    assert_int_equal(mlx_vjp(&o, &g, c, in, cots), 0);
    mlx_array g0 = get(g, 0), o1 = get(o, 1);
    expect_values(g0, MLX_FLOAT32, (const double[]){11}, 1);
    expect_values(o1, MLX_FLOAT32, (const double[]){6}, 1);
    tu_free_n((mlx_array[]){x, one, g0, o1}, 4);
    mlx_vector_array bufs[] = {in, cots, o, g};
    for (int i = 0; i < 4; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure_free(c);
    mlx_closure_free(f);
    mlx_closure_custom_free(v);
}

/* checkpoint: the same values and gradients, the backward pass running
 * the function again (its outputs stand behind stop_gradient, so none of
 * the first run's activations is kept for it). */
static void test_checkpoint_gives_the_same_values_and_gradients(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(sin_chain), c = mlx_closure_new();
    assert_int_equal(mlx_checkpoint(&c, f), 0);
    const float v[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    int shape[1] = {4};
    mlx_array x = tu_f32(v, shape, 1);
    mlx_vector_array in = vec1(x), vf, vc;
    int arg = 0;
    mlx_vector_array gf = grads_of(f, &arg, 1, in, &vf), gc = grads_of(c, &arg, 1, in, &vc);
    mlx_array a = get(gf, 0), b = get(gc, 0), va = get(vf, 0), vb = get(vc, 0);
    for (size_t i = 0; i < 4; i++)
        assert_true(tu_get(a, i) == tu_get(b, i));
    assert_true(tu_get(va, 0) == tu_get(vb, 0));
    tu_free_n((mlx_array[]){x, a, b, va, vb}, 5);
    mlx_vector_array bufs[] = {in, vf, vc, gf, gc};
    for (int i = 0; i < 5; i++)
        mlx_vector_array_free(bufs[i]);
    mlx_closure_free(c);
    mlx_closure_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_max_shares_its_gradient_among_ties, tu_test_teardown),
        cmocka_unit_test_teardown(test_stop_gradient_stops_the_gradient, tu_test_teardown),
        cmocka_unit_test_teardown(test_argnums_select_sort_and_count_from_the_end, tu_test_teardown),
        cmocka_unit_test_teardown(test_bad_argnums_report_mlx_messages, tu_test_teardown),
        cmocka_unit_test_teardown(test_value_and_grad_of_a_non_scalar_function_fails, tu_test_teardown),
        cmocka_unit_test_teardown(test_cotangents_must_match_outputs_in_number_and_shape, tu_test_teardown),
        cmocka_unit_test_teardown(test_a_failing_function_fails_the_transform_once, tu_test_teardown),
        cmocka_unit_test_teardown(test_integer_inputs_get_gradients_of_their_dtype, tu_test_teardown),
        cmocka_unit_test_teardown(test_cotangents_take_the_output_dtype, tu_test_teardown),
        cmocka_unit_test_teardown(test_one_array_given_twice_gets_two_gradients, tu_test_teardown),
        cmocka_unit_test_teardown(test_value_and_grad_returns_later_outputs_undifferentiated, tu_test_teardown),
        cmocka_unit_test_teardown(test_gradients_of_gradients, tu_test_teardown),
        cmocka_unit_test_teardown(test_a_100000_op_chain_differentiates, tu_test_teardown),
        cmocka_unit_test_teardown(test_value_and_grad_of_a_chain_keeps_only_its_activations, tu_test_teardown),
        cmocka_unit_test_teardown(test_uniform_and_normal_are_differentiable_in_their_parameters, tu_test_teardown),
        cmocka_unit_test_teardown(test_custom_closure_kinds_hold_and_apply_their_functions, tu_test_teardown),
        cmocka_unit_test_teardown(test_custom_functions_override_the_rules_they_are_given, tu_test_teardown),
        cmocka_unit_test_teardown(test_a_custom_vjp_of_several_outputs_sees_every_cotangent, tu_test_teardown),
        cmocka_unit_test_teardown(test_checkpoint_gives_the_same_values_and_gradients, tu_test_teardown),
        cmocka_unit_test_teardown(test_the_calls_of_mlx_c_example_grad, tu_test_teardown),
        cmocka_unit_test_teardown(test_a_compiled_value_and_grad_runs_on_many_threads, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("grad_rules", tests, tu_group_setup, tu_group_teardown);
}
