/* map.h and the kwargs closure kind: mlx-c's map semantics (insert
 * replaces, get returns 2 for a missing key, set copies), our iteration
 * order (first insertion), references held and released exactly once,
 * and bad handles failing with one message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "test_util.h"

static void test_array_map_insert_get_and_replace(void **state)
{
    (void)state;
    mlx_map_string_to_array m = mlx_map_string_to_array_new();
    mlx_array a = mlx_array_new_int(1), b = mlx_array_new_int(2), got = mlx_array_new();
    assert_int_equal(mlx_map_string_to_array_insert(m, "a", a), 0);
    assert_int_equal(mc_array_refs(mc_arr(a)), 2);
    assert_int_equal(mlx_map_string_to_array_get(&got, m, "a"), 0);
    assert_ptr_equal(got.ctx, a.ctx);
    /* missing: 2, no message, *value unchanged */
    assert_int_equal(mlx_map_string_to_array_get(&got, m, "zz"), 2);
    tu_expect_no_error();
    assert_ptr_equal(got.ctx, a.ctx);
    /* insert on an existing key replaces its value (insert_or_assign) */
    assert_int_equal(mlx_map_string_to_array_insert(m, "a", b), 0);
    assert_int_equal(mlx_map_string_to_array_get(&got, m, "a"), 0);
    assert_ptr_equal(got.ctx, b.ctx);
    assert_int_equal(mc_array_refs(mc_arr(a)), 1);
    mlx_map_string_to_array_free(m);
    assert_int_equal(mc_array_refs(mc_arr(b)), 2); /* b and got */
    TU_FREE(a, b, got);
}

static void test_array_map_iterates_in_insertion_order(void **state)
{
    (void)state;
    mlx_map_string_to_array m = mlx_map_string_to_array_new();
    char key[16];
    enum { N = 300 }; /* several index growths */
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%d", (i * 37) % N);
        mlx_array v = mlx_array_new_int(i);
        assert_int_equal(mlx_map_string_to_array_insert(m, key, v), 0);
        mlx_array_free(v);
    }
    mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
    const char *k;
    mlx_array v = mlx_array_new();
    for (int i = 0; i < N; i++) {
        assert_int_equal(mlx_map_string_to_array_iterator_next(&k, &v, it), 0);
        snprintf(key, sizeof key, "k%d", (i * 37) % N);
        assert_string_equal(k, key);
        assert_true(tu_get(v, 0) == i);
        /* inserting while iterating appends after the position */
        if (i == 0) {
            assert_int_equal(mlx_map_string_to_array_insert(m, "late", v), 0);
        }
    }
    assert_int_equal(mlx_map_string_to_array_iterator_next(&k, &v, it), 0);
    assert_string_equal(k, "late");
    assert_int_equal(mlx_map_string_to_array_iterator_next(&k, &v, it), 2);
    assert_int_equal(mlx_map_string_to_array_iterator_next(&k, &v, it), 2);
    mlx_map_string_to_array_iterator_free(it);
    mlx_array_free(v);
    mlx_map_string_to_array_free(m);
}

static void test_array_map_set_copies(void **state)
{
    (void)state;
    mlx_map_string_to_array m = mlx_map_string_to_array_new(), c = mlx_map_string_to_array_new();
    mlx_array a = mlx_array_new_int(1), got = mlx_array_new();
    mlx_map_string_to_array_insert(m, "a", a);
    assert_int_equal(mlx_map_string_to_array_set(&c, m), 0);
    mlx_map_string_to_array_insert(m, "b", a);
    assert_int_equal(mlx_map_string_to_array_get(&got, c, "a"), 0);
    assert_int_equal(mlx_map_string_to_array_get(&got, c, "b"), 2);
    /* set onto itself keeps the entries */
    assert_int_equal(mlx_map_string_to_array_set(&m, m), 0);
    assert_int_equal(mlx_map_string_to_array_get(&got, m, "b"), 0);
    /* an empty destination handle gets a new map */
    mlx_map_string_to_array e = {NULL};
    assert_int_equal(mlx_map_string_to_array_set(&e, m), 0);
    assert_int_equal(mlx_map_string_to_array_get(&got, e, "a"), 0);
    mlx_map_string_to_array_free(e);
    mlx_map_string_to_array_free(m);
    mlx_map_string_to_array_free(c);
    TU_FREE(a, got);
    assert_int_equal(mlx_map_string_to_array_free((mlx_map_string_to_array){NULL}), 0);
}

static void test_string_map_semantics(void **state)
{
    (void)state;
    mlx_map_string_to_string m = mlx_map_string_to_string_new(), c = mlx_map_string_to_string_new();
    const char *v = "untouched";
    assert_int_equal(mlx_map_string_to_string_insert(m, "x", "1"), 0);
    assert_int_equal(mlx_map_string_to_string_insert(m, "y", "2"), 0);
    assert_int_equal(mlx_map_string_to_string_insert(m, "x", "3"), 0);
    assert_int_equal(mlx_map_string_to_string_get(&v, m, "x"), 0);
    assert_string_equal(v, "3");
    v = "untouched";
    assert_int_equal(mlx_map_string_to_string_get(&v, m, "nope"), 2);
    assert_string_equal(v, "untouched");
    assert_int_equal(mlx_map_string_to_string_set(&c, m), 0);
    mlx_map_string_to_string_insert(m, "x", "4");
    assert_int_equal(mlx_map_string_to_string_get(&v, c, "x"), 0);
    assert_string_equal(v, "3");
    mlx_map_string_to_string_iterator it = mlx_map_string_to_string_iterator_new(c);
    const char *k;
    assert_int_equal(mlx_map_string_to_string_iterator_next(&k, &v, it), 0);
    assert_string_equal(k, "x");
    assert_int_equal(mlx_map_string_to_string_iterator_next(&k, &v, it), 0);
    assert_string_equal(k, "y");
    assert_string_equal(v, "2");
    assert_int_equal(mlx_map_string_to_string_iterator_next(&k, &v, it), 2);
    mlx_map_string_to_string_iterator_free(it);
    mlx_map_string_to_string_free(m);
    mlx_map_string_to_string_free(c);
}

static void test_maps_reject_bad_handles_with_one_message(void **state)
{
    (void)state;
    mlx_map_string_to_array em = {NULL};
    mlx_map_string_to_string es = {NULL};
    mlx_array a = mlx_array_new_int(1), got = mlx_array_new();
    const char *v;
    assert_int_equal(mlx_map_string_to_array_insert(em, "a", a), 1);
    tu_expect_error("[mlx_map_string_to_array_insert]");
    assert_int_equal(mlx_map_string_to_array_get(&got, em, "a"), 1);
    tu_expect_error("[mlx_map_string_to_array_get]");
    assert_int_equal(mlx_map_string_to_string_get(&v, es, "a"), 1);
    tu_expect_error("[mlx_map_string_to_string_get]");
    mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(em);
    tu_expect_error("[mlx_map_string_to_array_iterator_new]");
    assert_null(it.ctx);
    const char *k;
    assert_int_equal(mlx_map_string_to_array_iterator_next(&k, &got, it), 1);
    tu_expect_error("[mlx_map_string_to_array_iterator_next]");
    mlx_map_string_to_array m = mlx_map_string_to_array_new();
    assert_int_equal(mlx_map_string_to_array_insert(m, NULL, a), 1);
    tu_expect_error("[mlx_map_string_to_array_insert] The key is NULL");
    assert_int_equal(mlx_map_string_to_array_insert(m, "a", (mlx_array){NULL}), 1);
    tu_expect_error("[mlx_map_string_to_array_insert]");
    assert_int_equal(mlx_map_string_to_array_set(&m, em), 1);
    tu_expect_error("[mlx_map_string_to_array_set]");
    mlx_map_string_to_string s = mlx_map_string_to_string_new();
    assert_int_equal(mlx_map_string_to_string_insert(s, "k", NULL), 1);
    tu_expect_error("[mlx_map_string_to_string_insert] The value is NULL");
    mlx_map_string_to_string_free(s);
    mlx_map_string_to_array_free(m);
    TU_FREE(a, got);
}

/* ---- mlx_closure_kwargs ---- */

static int add_kwargs(mlx_vector_array *res, const mlx_vector_array args, const mlx_map_string_to_array kwargs)
{
    mlx_array x = mlx_array_new(), y = mlx_array_new(), sum = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0);
    if (!rc)
        rc = mlx_map_string_to_array_get(&y, kwargs, "y");
    if (!rc)
        rc = mlx_add(&sum, x, y, tu_stream());
    if (!rc)
        rc = mlx_vector_array_set_value(res, sum);
    TU_FREE(x, y, sum);
    return rc;
}

static int scale_kwargs(mlx_vector_array *res, const mlx_vector_array args, const mlx_map_string_to_array kwargs,
                        void *payload)
{
    (void)kwargs;
    mlx_array x = mlx_array_new(), s = mlx_array_new_float(*(float *)payload), out = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0) || mlx_multiply(&out, x, s, tu_stream()) ||
             mlx_vector_array_set_value(res, out);
    TU_FREE(x, s, out);
    return rc;
}

static int dtor_calls;
static void count_dtor(void *p)
{
    (void)p;
    dtor_calls++;
}

static void test_kwargs_closure_applies_with_named_arrays(void **state)
{
    (void)state;
    mlx_closure_kwargs c = mlx_closure_kwargs_new_func(add_kwargs), c2 = mlx_closure_kwargs_new();
    mlx_array x = mlx_array_new_float(2.0f), y = mlx_array_new_float(3.0f), out = mlx_array_new();
    mlx_vector_array args = mlx_vector_array_new_value(x), res = mlx_vector_array_new();
    mlx_map_string_to_array kw = mlx_map_string_to_array_new();
    mlx_map_string_to_array_insert(kw, "y", y);
    assert_int_equal(mlx_closure_kwargs_set(&c2, c), 0);
    mlx_closure_kwargs_free(c);
    assert_int_equal(mlx_closure_kwargs_apply(&res, c2, args, kw), 0);
    assert_int_equal(mlx_vector_array_get(&out, res, 0), 0);
    assert_true(tu_get(out, 0) == 5.0);
    /* the function's failure (no "y") is reported once */
    mlx_map_string_to_array empty = mlx_map_string_to_array_new();
    assert_int_equal(mlx_closure_kwargs_apply(&res, c2, args, empty), 1);
    tu_expect_error("[mlx_closure_kwargs_apply] The closure's function failed");
    assert_int_equal(mlx_closure_kwargs_apply(&res, mlx_closure_kwargs_new(), args, kw), 1);
    tu_expect_error("[mlx_closure_kwargs_apply]");
    assert_int_equal(mlx_closure_kwargs_apply(NULL, c2, args, kw), 1);
    tu_expect_error("[mlx_closure_kwargs_apply]");
    mlx_closure_kwargs_free(c2);
    mlx_map_string_to_array_free(empty);
    mlx_map_string_to_array_free(kw);
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
    TU_FREE(x, y, out);
}

static void test_kwargs_closure_payload_destructor_runs_once(void **state)
{
    (void)state;
    static float three = 3.0f;
    dtor_calls = 0;
    mlx_closure_kwargs c = mlx_closure_kwargs_new_func_payload(scale_kwargs, &three, count_dtor);
    mlx_closure_kwargs copy = mlx_closure_kwargs_new();
    mlx_closure_kwargs_set(&copy, c);
    mlx_array x = mlx_array_new_float(2.0f), out = mlx_array_new();
    mlx_vector_array args = mlx_vector_array_new_value(x), res = mlx_vector_array_new();
    mlx_map_string_to_array kw = mlx_map_string_to_array_new();
    assert_int_equal(mlx_closure_kwargs_apply(&res, copy, args, kw), 0);
    assert_int_equal(mlx_vector_array_get(&out, res, 0), 0);
    assert_true(tu_get(out, 0) == 6.0);
    mlx_closure_kwargs_free(c);
    assert_int_equal(dtor_calls, 0);
    mlx_closure_kwargs_free(copy);
    assert_int_equal(dtor_calls, 1);
    /* a NULL function fails at once, and the payload is released then */
    mlx_closure_kwargs bad = mlx_closure_kwargs_new_func_payload(NULL, &three, count_dtor);
    tu_expect_error("[mlx_closure_kwargs_new_func_payload]");
    assert_null(bad.ctx);
    assert_int_equal(dtor_calls, 2);
    mlx_map_string_to_array_free(kw);
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
    TU_FREE(x, out);
}

/* mlx-c's transforms take plain closures only (as in mlx-c v0.6.0); a
 * kwargs function is differentiated through a plain closure whose payload
 * holds it and its map. */
typedef struct kw_call {
    mlx_closure_kwargs fun;
    mlx_map_string_to_array kwargs;
} kw_call;

static int call_with_kwargs(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    const kw_call *k = payload;
    return mlx_closure_kwargs_apply(res, k->fun, args, k->kwargs);
}

static void test_kwargs_closure_is_differentiated_through_a_plain_closure(void **state)
{
    (void)state;
    static float three = 3.0f;
    kw_call k = {mlx_closure_kwargs_new_func_payload(scale_kwargs, &three, NULL), mlx_map_string_to_array_new()};
    mlx_closure f = mlx_closure_new_func_payload(call_with_kwargs, &k, NULL);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    const int arg0 = 0;
    assert_int_equal(mlx_value_and_grad(&vg, f, &arg0, 1), 0);
    mlx_array x = mlx_array_new_float(2.0f), v = mlx_array_new(), g = mlx_array_new();
    mlx_vector_array args = mlx_vector_array_new_value(x), vals = mlx_vector_array_new(),
                     grads = mlx_vector_array_new();
    assert_int_equal(mlx_closure_value_and_grad_apply(&vals, &grads, vg, args), 0);
    assert_int_equal(mlx_vector_array_get(&v, vals, 0), 0);
    assert_int_equal(mlx_vector_array_get(&g, grads, 0), 0);
    assert_true(tu_get(v, 0) == 6.0);
    assert_true(tu_get(g, 0) == 3.0);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(f);
    mlx_closure_kwargs_free(k.fun);
    mlx_map_string_to_array_free(k.kwargs);
    mlx_vector_array_free(args), mlx_vector_array_free(vals), mlx_vector_array_free(grads);
    TU_FREE(x, v, g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_array_map_insert_get_and_replace, tu_test_teardown),
        cmocka_unit_test_teardown(test_array_map_iterates_in_insertion_order, tu_test_teardown),
        cmocka_unit_test_teardown(test_array_map_set_copies, tu_test_teardown),
        cmocka_unit_test_teardown(test_string_map_semantics, tu_test_teardown),
        cmocka_unit_test_teardown(test_maps_reject_bad_handles_with_one_message, tu_test_teardown),
        cmocka_unit_test_teardown(test_kwargs_closure_applies_with_named_arrays, tu_test_teardown),
        cmocka_unit_test_teardown(test_kwargs_closure_payload_destructor_runs_once, tu_test_teardown),
        cmocka_unit_test_teardown(test_kwargs_closure_is_differentiated_through_a_plain_closure, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
