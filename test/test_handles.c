/* The handle types: strings, the four vectors, closures, devices, device
 * info, streams and the version. Checks values, who owns what (every array
 * reference and payload is released exactly once) and that bad input
 * fails with one message instead of crashing. Arrays are made with the
 * internal mc_array_from_data so refcounts can be read directly. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/utsname.h>

#include <cmocka.h>

#include "array/array.h"
#include "handles/closure.h"
#include "handles/stream.h"
#include "handles/vector.h"
#include "mlx/c/mlx.h"
#include "runtime/alloc.h"

/* ---- error recording ---- */

static int n_errors;
static char last_error[1024];

static void record_error(const char *msg, void *data)
{
    (void)data;
    n_errors++;
    snprintf(last_error, sizeof last_error, "%s", msg);
}

static int setup(void **state)
{
    (void)state;
    mlx_set_error_handler(record_error, NULL, NULL);
    n_errors = 0;
    last_error[0] = '\0';
    return 0;
}

/* Asserts that exactly one error was reported since the last check and
 * that it contains `part`; then forgets it. */
static void expect_one_error(const char *part)
{
    assert_int_equal(n_errors, 1);
    if (!strstr(last_error, part))
        fail_msg("error \"%s\" does not contain \"%s\"", last_error, part);
    n_errors = 0;
    last_error[0] = '\0';
}

static void expect_no_error(void) { assert_int_equal(n_errors, 0); }

static mc_array *scalar(int v)
{
    mc_array *a = mc_array_from_data("test", &v, 0, NULL, MLX_INT32);
    assert_non_null(a);
    return a;
}

static int value_of(mc_array *a) { return *(const int *)a->data; }

/* ---- strings ---- */

static void test_string_new_holds_empty_text(void **state)
{
    (void)state;
    mlx_string s = mlx_string_new();
    assert_non_null(s.ctx);
    assert_string_equal(mlx_string_data(s), "");
    mlx_string_free(s);
    expect_no_error();
}

static void test_string_new_data_copies_the_text(void **state)
{
    (void)state;
    char buf[] = "hello";
    mlx_string s = mlx_string_new_data(buf);
    buf[0] = 'J';
    assert_string_equal(mlx_string_data(s), "hello");
    assert_ptr_not_equal(mlx_string_data(s), buf);
    mlx_string_free(s);
}

static void test_string_set_copies_and_survives_self_set(void **state)
{
    (void)state;
    mlx_string a = mlx_string_new_data("first");
    mlx_string b = mlx_string_new_data("second, longer");
    assert_int_equal(mlx_string_set(&a, b), 0);
    mlx_string_free(b);
    assert_string_equal(mlx_string_data(a), "second, longer");
    assert_int_equal(mlx_string_set(&a, a), 0);
    assert_string_equal(mlx_string_data(a), "second, longer");
    mlx_string empty = {NULL};
    assert_int_equal(mlx_string_set(&empty, a), 0); /* an empty target gets a buffer */
    assert_string_equal(mlx_string_data(empty), "second, longer");
    mlx_string_free(empty);
    mlx_string_free(a);
    expect_no_error();
}

static void test_string_null_text_and_empty_handles_fail(void **state)
{
    (void)state;
    mlx_string s = mlx_string_new_data(NULL);
    assert_null(s.ctx);
    expect_one_error("[mlx_string_new_data]");
    assert_null(mlx_string_data(s));
    expect_one_error("[mlx_string_data]");
    mlx_string t = mlx_string_new();
    assert_int_not_equal(mlx_string_set(&t, s), 0);
    expect_one_error("[mlx_string_set]");
    assert_string_equal(mlx_string_data(t), "");
    assert_int_equal(mlx_string_free(s), 0); /* freeing an empty handle is allowed */
    mlx_string_free(t);
    expect_no_error();
}

/* ---- vectors of arrays ---- */

static void test_vector_array_holds_one_reference_per_item(void **state)
{
    (void)state;
    mc_array *a = scalar(1), *b = scalar(2);
    mlx_array items[3] = {mc_handle(a), mc_handle(b), mc_handle(a)};
    mlx_vector_array v = mlx_vector_array_new_data(items, 3);
    assert_int_equal(mlx_vector_array_size(v), 3);
    assert_int_equal(mc_array_refs(a), 3);
    assert_int_equal(mc_array_refs(b), 2);
    mlx_vector_array_free(v);
    assert_int_equal(mc_array_refs(a), 1);
    assert_int_equal(mc_array_refs(b), 1);
    mc_array_release(a);
    mc_array_release(b);
    expect_no_error();
}

static void test_vector_array_get_replaces_the_old_reference(void **state)
{
    (void)state;
    mc_array *a = scalar(1), *b = scalar(2);
    mlx_vector_array v = mlx_vector_array_new_value(mc_handle(a));
    mlx_array res = mc_handle(mc_array_retain(b));
    assert_int_equal(mlx_vector_array_get(&res, v, 0), 0);
    assert_ptr_equal(res.ctx, a);
    assert_int_equal(mc_array_refs(a), 3); /* ours, the vector's, res's */
    assert_int_equal(mc_array_refs(b), 1); /* res let go of b */
    /* Getting the same item again into res keeps the count. */
    assert_int_equal(mlx_vector_array_get(&res, v, 0), 0);
    assert_int_equal(mc_array_refs(a), 3);
    mc_array_release(mc_arr(res));
    mlx_vector_array_free(v);
    assert_int_equal(mc_array_refs(a), 1);
    mc_array_release(a);
    mc_array_release(b);
    expect_no_error();
}

static void test_vector_array_get_out_of_range_fails(void **state)
{
    (void)state;
    mc_array *a = scalar(1);
    mlx_array items[3] = {mc_handle(a), mc_handle(a), mc_handle(a)};
    mlx_vector_array v = mlx_vector_array_new_data(items, 3);
    mlx_array res = {NULL};
    assert_int_equal(mlx_vector_array_get(&res, v, 5), 1);
    assert_int_equal(n_errors, 1);
    assert_string_equal(last_error, "[mlx_vector_array_get] Index 5 out of range for a vector of size 3.");
    n_errors = 0;
    assert_null(res.ctx);
    mlx_vector_array_free(v);
    assert_int_equal(mc_array_refs(a), 1);
    mc_array_release(a);
}

static void test_vector_array_set_makes_an_independent_copy(void **state)
{
    (void)state;
    mc_array *a = scalar(1), *b = scalar(2);
    mlx_vector_array src = mlx_vector_array_new_value(mc_handle(a));
    mlx_vector_array dst = mlx_vector_array_new_value(mc_handle(b));
    assert_int_equal(mlx_vector_array_set(&dst, src), 0);
    assert_int_equal(mc_array_refs(b), 1); /* dst dropped its old item */
    assert_int_equal(mc_array_refs(a), 3);
    assert_int_equal(mlx_vector_array_append_value(src, mc_handle(b)), 0);
    assert_int_equal(mlx_vector_array_size(src), 2);
    assert_int_equal(mlx_vector_array_size(dst), 1);
    /* Self-assignment keeps the items. */
    assert_int_equal(mlx_vector_array_set(&src, src), 0);
    assert_int_equal(mlx_vector_array_size(src), 2);
    assert_int_equal(mc_array_refs(a), 3);
    /* An empty target handle gets its own object. */
    mlx_vector_array fresh = {NULL};
    assert_int_equal(mlx_vector_array_set(&fresh, src), 0);
    assert_int_equal(mlx_vector_array_size(fresh), 2);
    mlx_vector_array_free(fresh);
    mlx_vector_array_free(src);
    mlx_vector_array_free(dst);
    assert_int_equal(mc_array_refs(a), 1);
    assert_int_equal(mc_array_refs(b), 1);
    mc_array_release(a);
    mc_array_release(b);
    expect_no_error();
}

static void test_vector_array_set_data_keeps_the_handle_object(void **state)
{
    (void)state;
    mc_array *a = scalar(1), *b = scalar(2);
    mlx_vector_array v = mlx_vector_array_new_value(mc_handle(a));
    mlx_vector_array alias = v; /* a copy of the handle sees the new items */
    mlx_array items[2] = {mc_handle(b), mc_handle(b)};
    assert_int_equal(mlx_vector_array_set_data(&v, items, 2), 0);
    assert_ptr_equal(v.ctx, alias.ctx);
    assert_int_equal(mlx_vector_array_size(alias), 2);
    assert_int_equal(mc_array_refs(a), 1);
    assert_int_equal(mlx_vector_array_set_value(&v, mc_handle(a)), 0);
    assert_int_equal(mlx_vector_array_size(v), 1);
    assert_int_equal(mc_array_refs(b), 1);
    mlx_vector_array_free(v);
    mc_array_release(a);
    mc_array_release(b);
    expect_no_error();
}

static void test_vector_array_bad_input_fails_and_changes_nothing(void **state)
{
    (void)state;
    mc_array *a = scalar(1);
    mlx_vector_array v = mlx_vector_array_new_data(NULL, 2);
    assert_null(v.ctx);
    expect_one_error("The data pointer is NULL for 2 arrays");
    v = mlx_vector_array_new_data(NULL, 0); /* nothing to read: fine */
    assert_non_null(v.ctx);
    assert_int_equal(mlx_vector_array_size(v), 0);
    expect_no_error();

    /* An empty array among the items: the whole append is refused. */
    mlx_array items[2] = {mc_handle(a), {NULL}};
    assert_int_equal(mlx_vector_array_append_data(v, items, 2), 1);
    expect_one_error("Array 1 of 2 is empty");
    assert_int_equal(mlx_vector_array_size(v), 0);
    assert_int_equal(mc_array_refs(a), 1);

    mlx_vector_array empty = {NULL};
    assert_int_equal(mlx_vector_array_size(empty), 0);
    expect_one_error("[mlx_vector_array_size] Expected a non-empty mlx_vector_array");
    assert_int_equal(mlx_vector_array_append_value(empty, mc_handle(a)), 1);
    expect_one_error("[mlx_vector_array_append_value]");
    assert_int_equal(mlx_vector_array_set(&v, empty), 1);
    expect_one_error("[mlx_vector_array_set]");
    mlx_array res = {NULL};
    assert_int_equal(mlx_vector_array_get(&res, empty, 0), 1);
    expect_one_error("[mlx_vector_array_get]");
    assert_int_equal(mlx_vector_array_free(empty), 0);
    expect_no_error();

    mlx_vector_array_free(v);
    mc_array_release(a);
}

static void test_vector_internal_helpers_count_references(void **state)
{
    (void)state;
    mc_array *a = scalar(7), *b = scalar(8);
    mc_array *pair[2] = {a, b};
    mlx_vector_array v = mc_vec_from("test", pair, 2);
    assert_int_equal(mc_vec_len(v), 2);
    assert_ptr_equal(mc_vec_at(v, 1), b);
    assert_int_equal(mc_vec_len((mlx_vector_array){NULL}), 0);

    assert_int_equal(mc_vec_push("test", v, a), 0);
    assert_int_equal(mc_array_refs(a), 3);
    assert_int_equal(mc_vec_push_take("test", v, mc_array_retain(b)), 0);
    assert_int_equal(mc_array_refs(b), 3);
    assert_int_equal(mc_vec_len(v), 4);

    /* Assigning the vector its own items (a subrange) is safe. */
    assert_int_equal(mc_vec_assign("test", &v, &mc_vec_arrays(v.ctx)[1], 2), 0);
    assert_int_equal(mc_vec_len(v), 2);
    assert_ptr_equal(mc_vec_at(v, 0), b);
    assert_ptr_equal(mc_vec_at(v, 1), a);
    assert_int_equal(mc_array_refs(a), 2);
    assert_int_equal(mc_array_refs(b), 2);

    /* Moving into a handle that has an object keeps that object. */
    void *obj = v.ctx;
    mlx_vector_array other = mc_vec_from("test", &a, 1);
    mc_vec_move(&v, other);
    assert_ptr_equal(v.ctx, obj);
    assert_int_equal(mc_vec_len(v), 1);
    assert_int_equal(mc_array_refs(a), 2);
    assert_int_equal(mc_array_refs(b), 1);

    /* Pushing onto an empty handle fails and releases what it was given. */
    assert_int_equal(mc_vec_push_take("test", (mlx_vector_array){NULL}, mc_array_retain(b)), 1);
    expect_one_error("[test] Expected a non-empty mlx_vector_array");
    assert_int_equal(mc_array_refs(b), 1);

    mlx_vector_array_free(v);
    assert_int_equal(mc_array_refs(a), 1);
    mc_array_release(a);
    mc_array_release(b);
}

/* A vector of vectors holds lists of the one mc_vec type, each a separate
 * copy of kind ARRAY, and mc_vec_copy copies them deeply. */
static void test_vector_of_vectors_holds_copied_array_lists(void **state)
{
    (void)state;
    mc_array *a = scalar(1);
    mlx_vector_array inner = mlx_vector_array_new_value(mc_handle(a));
    mlx_vector_vector_array outer = mlx_vector_vector_array_new_value(inner);
    mc_vec *o = outer.ctx;
    assert_int_equal(o->kind, MC_VEC_VECTOR);
    mc_vec *held = mc_vec_vectors(o)[0];
    assert_int_equal(held->kind, MC_VEC_ARRAY);
    assert_ptr_not_equal(held, inner.ctx);
    assert_ptr_equal(mc_vec_arrays(held)[0], a);
    assert_int_equal(mc_array_refs(a), 3); /* ours, inner's, held's */

    mc_vec *dup = mc_vec_copy("test", o);
    assert_non_null(dup);
    assert_ptr_not_equal(mc_vec_vectors(dup)[0], held);
    assert_int_equal(mc_array_refs(a), 4);
    mc_vec_free(dup);
    mlx_vector_vector_array_free(outer);
    mlx_vector_array_free(inner);
    expect_no_error();
    assert_int_equal(mc_array_refs(a), 1);
    mc_array_release(a);
}

/* A count that would wrap the list's length is refused before anything is
 * read or written (without the check the length wraps to a small
 * capacity and the copy runs off the end). */
static void test_vector_append_whose_length_overflows_fails_and_changes_nothing(void **state)
{
    (void)state;
    int one = 1;
    mlx_vector_int v = mlx_vector_int_new_value(1);
    assert_int_equal(mlx_vector_int_append_data(v, &one, SIZE_MAX), 1);
    expect_one_error("[mlx_vector_int_append_data] Cannot hold");
    assert_int_equal(mlx_vector_int_size(v), 1);
    mlx_vector_int_free(v);
}

/* ---- vectors of ints and strings ---- */

static void test_vector_int_values_and_errors(void **state)
{
    (void)state;
    int data[3] = {4, 5, 6};
    mlx_vector_int v = mlx_vector_int_new_data(data, 3);
    data[0] = 99; /* the vector has its own copy */
    assert_int_equal(mlx_vector_int_append_value(v, 7), 0);
    int more[40];
    for (int i = 0; i < 40; i++)
        more[i] = 100 + i;
    assert_int_equal(mlx_vector_int_append_data(v, more, 40), 0);
    assert_int_equal(mlx_vector_int_size(v), 44);
    int x = 0;
    assert_int_equal(mlx_vector_int_get(&x, v, 0), 0);
    assert_int_equal(x, 4);
    assert_int_equal(mlx_vector_int_get(&x, v, 43), 0);
    assert_int_equal(x, 139);
    assert_int_equal(mlx_vector_int_get(&x, v, 44), 1);
    assert_int_equal(n_errors, 1);
    assert_string_equal(last_error, "[mlx_vector_int_get] Index 44 out of range for a vector of size 44.");
    n_errors = 0;

    mlx_vector_int copy = mlx_vector_int_new();
    assert_int_equal(mlx_vector_int_set(&copy, v), 0);
    assert_int_equal(mlx_vector_int_set_value(&v, 1), 0);
    assert_int_equal(mlx_vector_int_size(v), 1);
    assert_int_equal(mlx_vector_int_size(copy), 44);
    assert_int_equal(mlx_vector_int_set_data(&copy, NULL, 0), 0);
    assert_int_equal(mlx_vector_int_size(copy), 0);
    expect_no_error();

    assert_int_equal(mlx_vector_int_append_data(v, NULL, 1), 1);
    expect_one_error("[mlx_vector_int_append_data] The data pointer is NULL");
    assert_null(mlx_vector_int_new_data(NULL, 2).ctx);
    expect_one_error("[mlx_vector_int_new_data]");
    assert_int_equal(mlx_vector_int_size((mlx_vector_int){NULL}), 0);
    expect_one_error("[mlx_vector_int_size]");

    mlx_vector_int_free(copy);
    mlx_vector_int_free(v);
}

static void test_vector_string_owns_copies_and_lends_text(void **state)
{
    (void)state;
    char first[] = "alpha";
    const char *data[2] = {first, "beta"};
    mlx_vector_string v = mlx_vector_string_new_data(data, 2);
    first[0] = 'X';
    char *got = NULL;
    assert_int_equal(mlx_vector_string_get(&got, v, 0), 0);
    assert_string_equal(got, "alpha");
    assert_int_equal(mlx_vector_string_append_value(v, "gamma"), 0);
    assert_int_equal(mlx_vector_string_append_data(v, data, 2), 0);
    assert_int_equal(mlx_vector_string_size(v), 5);
    assert_int_equal(mlx_vector_string_get(&got, v, 3), 0);
    assert_string_equal(got, "Xlpha");

    /* Appending a string the vector itself lends out is safe. */
    assert_int_equal(mlx_vector_string_get(&got, v, 2), 0);
    assert_int_equal(mlx_vector_string_append_value(v, got), 0);
    assert_int_equal(mlx_vector_string_get(&got, v, 5), 0);
    assert_string_equal(got, "gamma");

    mlx_vector_string copy = {NULL};
    assert_int_equal(mlx_vector_string_set(&copy, v), 0);
    assert_int_equal(mlx_vector_string_set_value(&v, "only"), 0);
    assert_int_equal(mlx_vector_string_size(copy), 6);
    assert_int_equal(mlx_vector_string_get(&got, copy, 1), 0);
    assert_string_equal(got, "beta");
    expect_no_error();

    const char *with_null[2] = {"ok", NULL};
    assert_int_equal(mlx_vector_string_append_data(v, with_null, 2), 1);
    expect_one_error("String 1 of 2 is NULL");
    assert_int_equal(mlx_vector_string_size(v), 1);
    assert_null(mlx_vector_string_new_value(NULL).ctx);
    expect_one_error("[mlx_vector_string_new_value]");
    assert_int_equal(mlx_vector_string_get(&got, v, 1), 1);
    expect_one_error("[mlx_vector_string_get] Index 1 out of range for a vector of size 1.");

    mlx_vector_string_free(copy);
    mlx_vector_string_free(v);
}

/* ---- vectors of vectors ---- */

static void test_vector_vector_array_stores_copies_of_lists(void **state)
{
    (void)state;
    mc_array *a = scalar(1), *b = scalar(2);
    mlx_vector_array inner = mlx_vector_array_new_value(mc_handle(a));
    mlx_vector_vector_array vv = mlx_vector_vector_array_new_value(inner);
    assert_int_equal(mc_array_refs(a), 3);
    /* Changing the original list does not change the stored one. */
    assert_int_equal(mlx_vector_array_append_value(inner, mc_handle(b)), 0);
    assert_int_equal(mlx_vector_vector_array_append_value(vv, inner), 0);
    assert_int_equal(mlx_vector_vector_array_size(vv), 2);

    mlx_vector_array got = {NULL};
    assert_int_equal(mlx_vector_vector_array_get(&got, vv, 0), 0);
    assert_int_equal(mlx_vector_array_size(got), 1);
    assert_int_equal(mlx_vector_vector_array_get(&got, vv, 1), 0);
    assert_int_equal(mlx_vector_array_size(got), 2);
    /* got is a copy too: appending to it leaves vv alone. */
    assert_int_equal(mlx_vector_array_append_value(got, mc_handle(b)), 0);
    mlx_vector_array again = mlx_vector_array_new();
    assert_int_equal(mlx_vector_vector_array_get(&again, vv, 1), 0);
    assert_int_equal(mlx_vector_array_size(again), 2);

    assert_int_equal(mlx_vector_vector_array_get(&got, vv, 2), 1);
    expect_one_error("[mlx_vector_vector_array_get] Index 2 out of range for a vector of size 2.");

    mlx_vector_vector_array copy = mlx_vector_vector_array_new();
    assert_int_equal(mlx_vector_vector_array_set(&copy, vv), 0);
    assert_int_equal(mlx_vector_vector_array_set(&vv, vv), 0);
    assert_int_equal(mlx_vector_vector_array_size(vv), 2);
    mlx_vector_array lists[2] = {inner, got};
    assert_int_equal(mlx_vector_vector_array_set_data(&vv, lists, 2), 0);
    assert_int_equal(mlx_vector_vector_array_set_value(&copy, inner), 0);
    assert_int_equal(mlx_vector_vector_array_size(copy), 1);

    mlx_vector_array bad[2] = {inner, {NULL}};
    assert_int_equal(mlx_vector_vector_array_append_data(vv, bad, 2), 1);
    expect_one_error("Vector 1 of 2 is empty");
    assert_int_equal(mlx_vector_vector_array_size(vv), 2);
    assert_null(mlx_vector_vector_array_new_data(NULL, 1).ctx);
    expect_one_error("[mlx_vector_vector_array_new_data]");

    mlx_vector_vector_array_free(copy);
    mlx_vector_vector_array_free(vv);
    mlx_vector_array_free(again);
    mlx_vector_array_free(got);
    mlx_vector_array_free(inner);
    assert_int_equal(mc_array_refs(a), 1);
    assert_int_equal(mc_array_refs(b), 1);
    mc_array_release(a);
    mc_array_release(b);
    expect_no_error();
}

/* ---- closures ---- */

static int dtor_runs;
static void count_dtor(void *p)
{
    dtor_runs++;
    (*(int *)p)++;
}

/* Returns its inputs in reverse order. */
static int reverse(mlx_vector_array *res, const mlx_vector_array in)
{
    size_t n = mlx_vector_array_size(in);
    *res = mlx_vector_array_new();
    for (size_t i = n; i-- > 0;) {
        mlx_array x = {NULL};
        mlx_vector_array_get(&x, in, i);
        mlx_vector_array_append_value(*res, x);
        mc_array_release(mc_arr(x));
    }
    return 0;
}

/* Returns *payload copies of input 0. */
static int repeat_first(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    int times = *(int *)payload;
    mlx_array x = {NULL};
    if (mlx_vector_array_get(&x, in, 0))
        return 3;
    for (int i = 0; i < times; i++) {
        if (i == 0)
            mlx_vector_array_set_value(res, x);
        else
            mlx_vector_array_append_value(*res, x);
    }
    mc_array_release(mc_arr(x));
    return 0;
}

static void test_closure_apply_returns_the_functions_outputs(void **state)
{
    (void)state;
    mc_array *a = scalar(1), *b = scalar(2);
    mc_array *ab[2] = {a, b};
    mlx_vector_array in = mc_vec_from("test", ab, 2);
    mlx_closure c = mlx_closure_new_func(reverse);
    mlx_vector_array out = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&out, c, in), 0);
    assert_int_equal(mc_vec_len(out), 2);
    assert_ptr_equal(mc_vec_at(out, 0), b);
    assert_ptr_equal(mc_vec_at(out, 1), a);
    /* Applying onto an empty result handle works too, and so does using
     * the input vector as the result. */
    mlx_vector_array out2 = {NULL};
    assert_int_equal(mlx_closure_apply(&out2, c, in), 0);
    assert_int_equal(mlx_closure_apply(&in, c, in), 0);
    assert_ptr_equal(mc_vec_at(in, 0), b);
    mlx_vector_array_free(out2);
    mlx_vector_array_free(out);
    mlx_vector_array_free(in);
    mlx_closure_free(c);
    assert_int_equal(mc_array_refs(a), 1);
    assert_int_equal(mc_array_refs(b), 1);
    mc_array_release(a);
    mc_array_release(b);
    expect_no_error();
}

static void free_in_order(mlx_closure *h, const int *order)
{
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dtor_runs, 0);
        mlx_closure_free(h[order[i]]);
    }
}

static void test_closure_payload_destructor_runs_once_when_last_copy_goes(void **state)
{
    (void)state;
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int k = 0; k < 6; k++) {
        int payload = 2;
        dtor_runs = 0;
        mlx_closure h[3];
        h[0] = mlx_closure_new_func_payload(repeat_first, &payload, count_dtor);
        h[1] = mlx_closure_new();
        h[2] = mlx_closure_new_func(reverse); /* replaced by the set below */
        assert_int_equal(mlx_closure_set(&h[1], h[0]), 0);
        assert_int_equal(mlx_closure_set(&h[2], h[1]), 0);
        assert_int_equal(mlx_closure_set(&h[2], h[2]), 0); /* self-set */

        mc_array *a = scalar(5);
        mlx_vector_array in = mc_vec_from("test", &a, 1);
        mlx_vector_array out = mlx_vector_array_new();
        assert_int_equal(mlx_closure_apply(&out, h[2], in), 0);
        assert_int_equal(mc_vec_len(out), 2);
        assert_int_equal(value_of(mc_vec_at(out, 1)), 5);
        mlx_vector_array_free(out);
        mlx_vector_array_free(in);
        mc_array_release(a);

        free_in_order(h, orders[k]);
        assert_int_equal(dtor_runs, 1);
        assert_int_equal(payload, 3);
    }
    expect_no_error();
}

static int fail_with_7(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)in;
    *res = mlx_vector_array_new(); /* half-written output must not leak */
    return 7;
}

static int forget_output(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)res;
    (void)in;
    return 0;
}

static int grow_input(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = {NULL};
    mlx_vector_array_get(&x, in, 0);
    mlx_vector_array_append_value(in, x); /* the closure's own copy */
    mlx_vector_array_set_value(res, x);
    mc_array_release(mc_arr(x));
    return 0;
}

static void test_closure_failures_are_reported(void **state)
{
    (void)state;
    mc_array *a = scalar(1);
    mlx_vector_array in = mc_vec_from("test", &a, 1);
    mlx_vector_array out = mlx_vector_array_new();

    mlx_closure empty = mlx_closure_new();
    assert_int_equal(mlx_closure_apply(&out, empty, in), 1);
    expect_one_error("[mlx_closure_apply] Expected a non-empty mlx_closure");
    assert_int_equal(mlx_closure_free(empty), 0);

    mlx_closure c = mlx_closure_new_func(fail_with_7);
    assert_int_not_equal(mlx_closure_apply(&out, c, in), 0);
    expect_one_error("returned 7");
    assert_int_equal(mc_vec_len(out), 0);
    mlx_closure_free(c);

    c = mlx_closure_new_func(forget_output);
    assert_int_equal(mlx_closure_apply(&out, c, in), 1);
    expect_one_error("without writing its output");
    mlx_closure_free(c);

    /* The function may change its input list: the caller's is a copy. */
    c = mlx_closure_new_func(grow_input);
    assert_int_equal(mlx_closure_apply(&out, c, in), 0);
    assert_int_equal(mc_vec_len(in), 1);
    assert_int_equal(mc_vec_len(out), 1);
    mlx_closure_free(c);

    assert_int_equal(mlx_closure_apply(&out, c = mlx_closure_new_func(reverse), (mlx_vector_array){NULL}), 1);
    expect_one_error("[mlx_closure_apply] Expected a non-empty mlx_vector_array");
    mlx_closure_free(c);

    assert_null(mlx_closure_new_func(NULL).ctx);
    expect_one_error("[mlx_closure_new_func] The function pointer is NULL.");
    int payload = 0;
    dtor_runs = 0;
    assert_null(mlx_closure_new_func_payload(NULL, &payload, count_dtor).ctx);
    expect_one_error("[mlx_closure_new_func_payload]");
    assert_int_equal(dtor_runs, 1); /* the payload was handed over */

    mlx_closure target = mlx_closure_new();
    assert_int_equal(mlx_closure_set(&target, (mlx_closure){NULL}), 1);
    expect_one_error("[mlx_closure_set]");
    assert_null(target.ctx);

    mlx_vector_array_free(out);
    mlx_vector_array_free(in);
    assert_int_equal(mc_array_refs(a), 1);
    mc_array_release(a);
}

static int identity_unary(mlx_array *res, const mlx_array x)
{
    res->ctx = mc_array_retain(mc_arr(x)); /* res arrives empty */
    return 0;
}

static int unary_fails(mlx_array *res, const mlx_array x)
{
    res->ctx = mc_array_retain(mc_arr(x)); /* must still be released */
    return 2;
}

/* A body whose op fails: the op has reported why already. */
static int reshape_to_wrong_size(mlx_array *res, const mlx_array x)
{
    int shape[1] = {5};
    mlx_stream s = mlx_default_cpu_stream_new();
    int rc = mlx_reshape(res, x, shape, 1, s);
    mlx_stream_free(s);
    return rc;
}

static void test_closure_failing_op_inside_reports_one_message(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_unary(reshape_to_wrong_size);
    mc_array *x = scalar(3);
    mlx_vector_array in = mc_vec_from("test", &x, 1);
    mlx_vector_array out = mlx_vector_array_new();
    assert_int_not_equal(mlx_closure_apply(&out, f, in), 0);
    expect_one_error("[reshape]");
    mlx_vector_array_free(out);
    mlx_vector_array_free(in);
    mc_array_release(x);
    mlx_closure_free(f);
}

static void test_closure_unary_maps_one_array_to_one(void **state)
{
    (void)state;
    mc_array *a = scalar(4);
    mlx_vector_array in = mc_vec_from("test", &a, 1);
    mlx_vector_array out = {NULL};
    mlx_closure c = mlx_closure_new_unary(identity_unary);
    assert_int_equal(mlx_closure_apply(&out, c, in), 0);
    assert_int_equal(mc_vec_len(out), 1);
    assert_ptr_equal(mc_vec_at(out, 0), a);
    assert_int_equal(mc_array_refs(a), 3);
    expect_no_error();

    assert_int_equal(mc_vec_push("test", in, a), 0);
    assert_int_equal(mlx_closure_apply(&out, c, in), 1);
    expect_one_error("A unary closure takes exactly 1 input array, got 2.");
    mlx_closure_free(c);

    c = mlx_closure_new_unary(unary_fails);
    mlx_vector_array one = mc_vec_from("test", &a, 1);
    assert_int_not_equal(mlx_closure_apply(&out, c, one), 0);
    expect_one_error("returned 2");
    mlx_closure_free(c);

    mlx_vector_array_free(one);
    mlx_vector_array_free(out);
    mlx_vector_array_free(in);
    assert_int_equal(mc_array_refs(a), 1);
    mc_array_release(a);
}

static void test_closure_internal_call_and_references(void **state)
{
    (void)state;
    int payload = 1;
    dtor_runs = 0;
    mc_closure *c = mc_closure_create("test", NULL, repeat_first, NULL, &payload, count_dtor);
    assert_non_null(c);
    mc_closure_retain(c);
    mc_array *a = scalar(9);
    mlx_vector_array in = mc_vec_from("test", &a, 1);
    mlx_vector_array out = {NULL};
    assert_int_equal(mc_closure_call(c, &out, in), 0);
    assert_int_equal(mc_vec_len(out), 1);
    mc_closure_release(c);
    assert_int_equal(dtor_runs, 0);
    mlx_closure h = {c};
    mlx_closure_free(h); /* the last reference */
    assert_int_equal(dtor_runs, 1);
    mlx_vector_array_free(out);
    mlx_vector_array_free(in);
    mc_array_release(a);
    expect_no_error();
}

/* ---- devices ---- */

static void expect_text(int (*tostring)(mlx_string *, void *), void *h, const char *want)
{
    mlx_string s = mlx_string_new();
    assert_int_equal(tostring(&s, h), 0);
    assert_string_equal(mlx_string_data(s), want);
    mlx_string_free(s);
}

static int device_text(mlx_string *s, void *h) { return mlx_device_tostring(s, *(mlx_device *)h); }
static int stream_text(mlx_string *s, void *h) { return mlx_stream_tostring(s, *(mlx_stream *)h); }

static void test_device_values_and_printing(void **state)
{
    (void)state;
    mlx_device d = mlx_device_new();
    assert_null(d.ctx);
    mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
    mlx_device gpu = mlx_device_new_type(MLX_GPU, 1);
    expect_text(device_text, &cpu, "Device(cpu, 0)");
    expect_text(device_text, &gpu, "Device(gpu, 1)");
    int index = -1;
    mlx_device_type type = MLX_CPU;
    assert_int_equal(mlx_device_get_index(&index, gpu), 0);
    assert_int_equal(mlx_device_get_type(&type, gpu), 0);
    assert_int_equal(index, 1);
    assert_int_equal(type, MLX_GPU);
    assert_false(mlx_device_equal(cpu, gpu));
    assert_int_equal(mlx_device_set(&d, gpu), 0);
    assert_true(mlx_device_equal(d, gpu));
    assert_int_equal(mlx_device_set(&d, cpu), 0); /* in place */
    assert_true(mlx_device_equal(d, cpu));
    expect_no_error();

    assert_null(mlx_device_new_type((mlx_device_type)5, 0).ctx);
    expect_one_error("[mlx_device_new_type] Invalid device type 5.");
    assert_null(mlx_device_new_type(MLX_CPU, -1).ctx);
    expect_one_error("Device index -1 is negative.");
    assert_false(mlx_device_equal(cpu, (mlx_device){NULL}));
    expect_one_error("[mlx_device_equal]");
    assert_int_equal(mlx_device_get_index(&index, (mlx_device){NULL}), 1);
    expect_one_error("[mlx_device_get_index]");

    mlx_device_free(d);
    mlx_device_free(cpu);
    mlx_device_free(gpu);
    assert_int_equal(mlx_device_free(mlx_device_new()), 0);
}

static void test_device_defaults_availability_and_count(void **state)
{
    (void)state;
    mlx_device def = mlx_device_new();
    assert_int_equal(mlx_get_default_device(&def), 0);
    expect_text(device_text, &def, "Device(cpu, 0)");

    /* A GPU default is accepted and served by the CPU. */
    mlx_device gpu = mlx_device_new_type(MLX_GPU, 0);
    assert_int_equal(mlx_set_default_device(gpu), 0);
    assert_int_equal(mlx_get_default_device(&def), 0);
    expect_text(device_text, &def, "Device(cpu, 0)");
    mlx_device cpu1 = mlx_device_new_type(MLX_CPU, 1);
    assert_int_equal(mlx_set_default_device(cpu1), 1);
    expect_one_error("[mlx_set_default_device] Device(cpu, 1) is not available");
    assert_int_equal(mlx_set_default_device(def), 0);

    bool avail = false;
    assert_int_equal(mlx_device_is_available(&avail, def), 0);
    assert_true(avail);
    assert_int_equal(mlx_device_is_available(&avail, gpu), 0);
    assert_false(avail);
    assert_int_equal(mlx_device_is_available(&avail, cpu1), 0);
    assert_false(avail);
    int count = -1;
    assert_int_equal(mlx_device_count(&count, MLX_CPU), 0);
    assert_int_equal(count, 1);
    assert_int_equal(mlx_device_count(&count, MLX_GPU), 0);
    assert_int_equal(count, 0);
    expect_no_error();
    assert_int_equal(mlx_device_count(&count, (mlx_device_type)9), 1);
    expect_one_error("[mlx_device_count] Invalid device type 9.");

    mlx_device_free(cpu1);
    mlx_device_free(gpu);
    mlx_device_free(def);
}

static void test_device_info_reports_cpu_facts(void **state)
{
    (void)state;
    mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
    mlx_device_info info = mlx_device_info_new();
    assert_int_equal(mlx_device_info_get(&info, cpu), 0);

    struct utsname u;
    assert_int_equal(uname(&u), 0);
    const char *text = NULL;
    assert_int_equal(mlx_device_info_get_string(&text, info, "architecture"), 0);
    assert_string_equal(text, u.machine);
    assert_int_equal(mlx_device_info_get_string(&text, info, "device_name"), 0);
    assert_true(strlen(text) > 0);
    bool flag = false;
    assert_int_equal(mlx_device_info_is_string(&flag, info, "device_name"), 0);
    assert_true(flag);
    size_t mem = 0;
    assert_int_equal(mlx_device_info_get_size(&mem, info, "memory_size"), 0);
    assert_true(mem >= (size_t)64 << 20);
    assert_int_equal(mlx_device_info_is_string(&flag, info, "memory_size"), 0);
    assert_false(flag);

    /* Absent keys and the wrong kind give 2, without an error. */
    assert_int_equal(mlx_device_info_get_size(&mem, info, "device_name"), 2);
    assert_int_equal(mlx_device_info_get_string(&text, info, "memory_size"), 2);
    assert_int_equal(mlx_device_info_get_string(&text, info, "uuid"), 2);
    assert_int_equal(mlx_device_info_is_string(&flag, info, "uuid"), 2);
    assert_int_equal(mlx_device_info_has_key(&flag, info, "uuid"), 0);
    assert_false(flag);
    assert_int_equal(mlx_device_info_has_key(&flag, info, "architecture"), 0);
    assert_true(flag);
    expect_no_error();

    mlx_vector_string keys = mlx_vector_string_new();
    assert_int_equal(mlx_device_info_get_keys(&keys, info), 0);
    assert_int_equal(mlx_vector_string_size(keys), 3);

    /* A GPU has no facts on this host; refilling keeps the handle. */
    mlx_device gpu = mlx_device_new_type(MLX_GPU, 0);
    void *obj = info.ctx;
    assert_int_equal(mlx_device_info_get(&info, gpu), 0);
    assert_ptr_equal(info.ctx, obj);
    assert_int_equal(mlx_device_info_get_keys(&keys, info), 0);
    assert_int_equal(mlx_vector_string_size(keys), 0);
    expect_no_error();

    mlx_device_info empty = mlx_device_info_new();
    assert_int_equal(mlx_device_info_has_key(&flag, empty, "architecture"), 1);
    expect_one_error("[mlx_device_info_has_key] Expected a non-empty mlx_device_info");
    assert_int_equal(mlx_device_info_get_string(&text, info, NULL), 1);
    expect_one_error("The key is NULL");
    assert_int_equal(mlx_device_info_free(empty), 0);

    mlx_vector_string_free(keys);
    mlx_device_info_free(info);
    mlx_device_free(gpu);
    mlx_device_free(cpu);
}

/* ---- streams ---- */

static void test_stream_defaults_print_as_mlx(void **state)
{
    (void)state;
    mlx_stream s = mlx_default_cpu_stream_new();
    expect_text(stream_text, &s, "Stream(Device(cpu, 0), 0)");
    /* The GPU default stream runs on the CPU: it is the CPU's stream. */
    mlx_stream g = mlx_default_gpu_stream_new();
    assert_true(mlx_stream_equal(s, g));
    mlx_device dev = mlx_device_new();
    assert_int_equal(mlx_stream_get_device(&dev, g), 0);
    expect_text(device_text, &dev, "Device(cpu, 0)");
    int index = -1;
    assert_int_equal(mlx_stream_get_index(&index, s), 0);
    assert_int_equal(index, 0);
    assert_int_equal(mlx_synchronize(s), 0);

    mlx_stream got = mlx_stream_new();
    mlx_device gpu = mlx_device_new_type(MLX_GPU, 0);
    assert_int_equal(mlx_get_default_stream(&got, gpu), 0);
    assert_true(mlx_stream_equal(got, s));
    expect_no_error();

    assert_int_equal(mlx_synchronize(mlx_stream_new()), 1);
    expect_one_error("[mlx_synchronize] Expected a non-empty mlx_stream");
    mlx_device cpu3 = mlx_device_new_type(MLX_CPU, 3);
    assert_null(mlx_stream_new_device(cpu3).ctx);
    expect_one_error("[mlx_stream_new_device] Device(cpu, 3) is not available");
    assert_false(mlx_stream_equal(s, mlx_stream_new()));
    expect_one_error("[mlx_stream_equal]");

    mlx_device_free(cpu3);
    mlx_device_free(gpu);
    mlx_device_free(dev);
    mlx_stream_free(got);
    mlx_stream_free(g);
    mlx_stream_free(s);
}

static void *read_default_index(void *out)
{
    *(int *)out = mc_default_stream_index();
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_stream_get_index((int *)out + 1, s);
    mlx_stream_free(s);
    return NULL;
}

static void test_stream_default_is_per_thread(void **state)
{
    (void)state;
    mlx_stream orig = mlx_default_cpu_stream_new();
    mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
    mlx_stream a = mlx_stream_new_device(cpu);
    mlx_stream b = mlx_stream_new_device(cpu);
    int ia = -1, ib = -1;
    mlx_stream_get_index(&ia, a);
    mlx_stream_get_index(&ib, b);
    assert_true(ia > 0);
    assert_int_not_equal(ia, ib);
    assert_false(mlx_stream_equal(a, b));

    assert_int_equal(mlx_set_default_stream(a), 0);
    assert_int_equal(mc_default_stream_index(), ia);
    mlx_stream d = mlx_default_cpu_stream_new();
    assert_true(mlx_stream_equal(d, a));

    /* Another thread still has stream 0 as its default. */
    int seen[2] = {-1, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_default_index, seen), 0);
    pthread_join(t, NULL);
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 0);

    mlx_stream c = mlx_stream_new();
    assert_int_equal(mlx_stream_set(&c, b), 0);
    assert_true(mlx_stream_equal(c, b));
    char want[64];
    snprintf(want, sizeof want, "Stream(Device(cpu, 0), %d)", ib);
    expect_text(stream_text, &c, want);

    mlx_stream zero = mlx_default_gpu_stream_new();
    mlx_stream_set(&zero, d); /* in place */
    assert_true(mlx_stream_equal(zero, a));
    mlx_stream_free(zero);
    mlx_stream s0 = mlx_stream_new();
    assert_int_equal(mlx_set_default_stream(s0), 1);
    expect_one_error("[mlx_set_default_stream]");

    /* Restore stream 0 for the other tests. */
    assert_int_equal(mlx_set_default_stream(orig), 0);
    assert_int_equal(mc_default_stream_index(), 0);
    mlx_device_free(cpu);
    mlx_stream_free(c);
    mlx_stream_free(d);
    mlx_stream_free(b);
    mlx_stream_free(a);
    mlx_stream_free(orig);
}

/* ---- allocation failures ---- */

/* One pass over the allocating paths. Returns the number of calls that
 * failed; everything taken is released either way. */
static int exercise_allocations(mc_array *a, int *payload)
{
    int failed = 0;
    mlx_array items[2] = {mc_handle(a), mc_handle(a)};
    mlx_vector_array v = mlx_vector_array_new_data(items, 2);
    failed += !v.ctx;
    if (v.ctx) {
        for (int i = 0; i < 6; i++)
            failed += mlx_vector_array_append_value(v, mc_handle(a)) != 0;
    }
    mlx_vector_array copy = {NULL};
    failed += v.ctx && mlx_vector_array_set(&copy, v) != 0;

    mlx_vector_vector_array vv = mlx_vector_vector_array_new();
    failed += !vv.ctx;
    if (vv.ctx && v.ctx)
        failed += mlx_vector_vector_array_append_data(vv, (mlx_vector_array[]){v, v}, 2) != 0;

    const char *names[2] = {"x", "y"};
    mlx_vector_string vs = mlx_vector_string_new_data(names, 2);
    failed += !vs.ctx;
    mlx_string s = mlx_string_new_data("text");
    failed += !s.ctx;

    mlx_closure c = mlx_closure_new_func_payload(repeat_first, payload, count_dtor);
    failed += !c.ctx;
    mlx_closure c2 = mlx_closure_new();
    failed += c.ctx && mlx_closure_set(&c2, c) != 0;
    mlx_vector_array out = {NULL};
    if (c.ctx && v.ctx)
        failed += mlx_closure_apply(&out, c, v) != 0;

    mlx_device d = mlx_device_new_type(MLX_CPU, 0);
    failed += !d.ctx;
    mlx_device_info info = mlx_device_info_new();
    failed += d.ctx && mlx_device_info_get(&info, d) != 0;
    mlx_stream st = mlx_default_cpu_stream_new();
    failed += !st.ctx;

    mlx_stream_free(st);
    mlx_device_info_free(info);
    mlx_device_free(d);
    mlx_vector_array_free(out);
    mlx_closure_free(c2);
    mlx_closure_free(c);
    mlx_string_free(s);
    mlx_vector_string_free(vs);
    mlx_vector_vector_array_free(vv);
    mlx_vector_array_free(copy);
    mlx_vector_array_free(v);
    assert_int_equal(mc_array_refs(a), 1);
    return failed;
}

static void test_allocation_failures_fail_cleanly(void **state)
{
    (void)state;
#ifdef MC_FAULT_INJECTION
    /* Fail the n-th allocation for every n until a pass needs no failure:
     * each failing call reports and returns, nothing leaks (valgrind) and
     * the payload destructor still runs exactly once per pass. */
    mc_array *a = scalar(3);
    for (long n = 0;; n++) {
        int payload = 1;
        dtor_runs = 0;
        mc_fault_fail_after(n);
        int failed = exercise_allocations(a, &payload);
        mc_fault_fail_after(-1);
        assert_int_equal(dtor_runs, 1);
        if (!failed) {
            assert_true(n > 10);
            break;
        }
        assert_true(n_errors >= 1);
        n_errors = 0;
    }
    mc_array_release(a);
#else
    /* Without the hook (-Dfault_injection=true) only the clean pass runs. */
    mc_array *a = scalar(3);
    int payload = 1;
    dtor_runs = 0;
    assert_int_equal(exercise_allocations(a, &payload), 0);
    assert_int_equal(dtor_runs, 1);
    mc_array_release(a);
#endif
}

/* ---- version ---- */

static void test_version_is_the_tracked_mlx_release(void **state)
{
    (void)state;
    mlx_string s = mlx_string_new();
    assert_int_equal(mlx_version(&s), 0);
    assert_string_equal(mlx_string_data(s), "0.31.1");
    mlx_string_free(s);
    assert_int_equal(mlx_version(NULL), 1);
    expect_one_error("[mlx_version]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_string_new_holds_empty_text, setup),
        cmocka_unit_test_setup(test_closure_failing_op_inside_reports_one_message, setup),
        cmocka_unit_test_setup(test_string_new_data_copies_the_text, setup),
        cmocka_unit_test_setup(test_string_set_copies_and_survives_self_set, setup),
        cmocka_unit_test_setup(test_string_null_text_and_empty_handles_fail, setup),
        cmocka_unit_test_setup(test_vector_array_holds_one_reference_per_item, setup),
        cmocka_unit_test_setup(test_vector_array_get_replaces_the_old_reference, setup),
        cmocka_unit_test_setup(test_vector_array_get_out_of_range_fails, setup),
        cmocka_unit_test_setup(test_vector_array_set_makes_an_independent_copy, setup),
        cmocka_unit_test_setup(test_vector_array_set_data_keeps_the_handle_object, setup),
        cmocka_unit_test_setup(test_vector_array_bad_input_fails_and_changes_nothing, setup),
        cmocka_unit_test_setup(test_vector_internal_helpers_count_references, setup),
        cmocka_unit_test_setup(test_vector_of_vectors_holds_copied_array_lists, setup),
        cmocka_unit_test_setup(test_vector_append_whose_length_overflows_fails_and_changes_nothing, setup),
        cmocka_unit_test_setup(test_vector_int_values_and_errors, setup),
        cmocka_unit_test_setup(test_vector_string_owns_copies_and_lends_text, setup),
        cmocka_unit_test_setup(test_vector_vector_array_stores_copies_of_lists, setup),
        cmocka_unit_test_setup(test_closure_apply_returns_the_functions_outputs, setup),
        cmocka_unit_test_setup(test_closure_payload_destructor_runs_once_when_last_copy_goes, setup),
        cmocka_unit_test_setup(test_closure_failures_are_reported, setup),
        cmocka_unit_test_setup(test_closure_unary_maps_one_array_to_one, setup),
        cmocka_unit_test_setup(test_closure_internal_call_and_references, setup),
        cmocka_unit_test_setup(test_device_values_and_printing, setup),
        cmocka_unit_test_setup(test_device_defaults_availability_and_count, setup),
        cmocka_unit_test_setup(test_device_info_reports_cpu_facts, setup),
        cmocka_unit_test_setup(test_stream_defaults_print_as_mlx, setup),
        cmocka_unit_test_setup(test_stream_default_is_per_thread, setup),
        cmocka_unit_test_setup(test_allocation_failures_fail_cleanly, setup),
        cmocka_unit_test_setup(test_version_is_the_tracked_mlx_release, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
