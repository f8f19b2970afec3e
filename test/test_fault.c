/* The fault suite (built with -Dfault_injection=true only): the allocator
 * hook fails the Nth allocation, and N walks over every allocation that
 * array creation, one representative op of each family, the eval of a small
 * graph, a compile-call-free cycle and a vmap make. For each N the scenario either
 * fails, with exactly one message and non-zero from the failing call, or
 * succeeds with the right values and no message (N past its allocations,
 * or a failure the library absorbs). After each N: active memory is back
 * where it was, managed-data destructors ran exactly once, and with the
 * hook reset a fresh op gives the right value. scripts/test.sh all runs
 * this suite under AddressSanitizer + LeakSanitizer (stage "fault"), which
 * catch any leak or use of freed memory on the error paths.
 *
 * Each area's own suite has a sweep for its internals (shape, matmul,
 * compile, unary, binary...); this one crosses the public entry points. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fault_sweep.h"
#include "runtime/alloc.h"
#include "test_util.h"

#define S tu_stream()

/* ---- array creation ---- */

static int managed_dtor_calls, managed_made;
static void count_dtor(void *p)
{
    (void)p;
    managed_dtor_calls++;
}

/* Each constructor in turn; a creation that fails returns an empty handle
 * and the run stops there. */
static int create_arrays(void *ctx)
{
    (void)ctx;
    static float managed[6] = {1, 2, 3, 4, 5, 6};
    const float vals[6] = {1, 2, 3, 4, 5, 6};
    const int shape[2] = {2, 3};
    mlx_array a[6] = {{NULL}, {NULL}, {NULL}, {NULL}, {NULL}, {NULL}};
    int rc = 1;
    if (!(a[0] = mlx_array_new_data(vals, shape, 2, MLX_FLOAT32)).ctx)
        goto out;
    if (!(a[1] = mlx_array_new_data_managed_payload(managed, shape, 2, MLX_FLOAT32, NULL,
                                                    count_dtor)).ctx)
        goto out;
    managed_made++;
    if (!(a[2] = mlx_array_new_float(1.5f)).ctx || !(a[3] = mlx_array_new_int(-7)).ctx ||
        !(a[4] = mlx_array_new_complex(1, 2)).ctx)
        goto out;
    a[5] = mlx_array_new();
    rc = mlx_array_set_float64(&a[5], 2.25);
    if (rc == 0) {
        /* reading back evaluates nothing but must see the values */
        float v = 0;
        rc = mlx_array_item_float32(&v, a[2]);
        if (rc == 0 && (v != 1.5f || tu_get(a[1], 5) != 6.0 || tu_get(a[0], 4) != 5.0))
            rc = 2;
    }
out:
    tu_free_n(a, 6);
    return rc;
}

static void test_array_creation_fails_cleanly_at_every_allocation(void **state)
{
    (void)state;
    managed_dtor_calls = managed_made = 0;
    assert_true(tu_sweep("creation", create_arrays, NULL) >= 6);
    /* the destructor ran once for every managed array made, when it was
     * freed, and never for a creation that failed (see below) */
    assert_true(managed_made >= 1);
    assert_int_equal(managed_dtor_calls, managed_made);
}

/* A managed creation that fails leaves the data with the caller: its
 * destructor does not run (as when malloc fails, the caller still owns what
 * it offered). One that succeeds runs it once, when the array is freed. */
static void test_failed_managed_creation_leaves_the_data_to_the_caller(void **state)
{
    (void)state;
    static float data[3] = {1, 2, 3};
    const int n = 3;
    for (long k = 0; k < 50; k++) {
        managed_dtor_calls = 0;
        mc_fault_fail_after(k);
        mlx_array a = mlx_array_new_data_managed_payload(data, &n, 1, MLX_FLOAT32, NULL, count_dtor);
        mc_fault_fail_after(-1);
        bool made = a.ctx != NULL;
        assert_int_equal(managed_dtor_calls, 0);
        mlx_array_free(a);
        if (made) {
            assert_int_equal(managed_dtor_calls, 1);
            tu_expect_no_error();
            break;
        }
        assert_int_equal(managed_dtor_calls, 0);
        tu_expect_error("[mlx_array_new_data_managed_payload]");
    }
}

/* ---- one op of each family, built and evaluated ---- */

typedef struct op_case {
    const char *name;
    /* builds the op on the inputs into *out */
    int (*build)(mlx_array *out, const mlx_array *in);
    double expect[4]; /* the first elements of the result */
    int n_expect;
} op_case;

typedef struct op_ctx {
    const op_case *c;
    mlx_array in[3];
} op_ctx;

/* in[0]: float32 (2,3) [[1,2,3],[4,5,6]], in[1]: float32 (3,) [10,20,30],
 * in[2]: int32 (2,) [2,0] */
static int b_unary(mlx_array *o, const mlx_array *in) { return mlx_exp(o, in[0], S) || mlx_log(o, *o, S); }
static int b_binary(mlx_array *o, const mlx_array *in) { return mlx_add(o, in[0], in[1], S); }
static int b_reduce(mlx_array *o, const mlx_array *in) { return mlx_sum_axis(o, in[0], 1, false, S); }
static int b_shape(mlx_array *o, const mlx_array *in)
{
    /* transposed then reshaped: a copy in logical order; then concatenated */
    const int flat = 6;
    mlx_array t = mlx_array_new();
    int rc = mlx_transpose(&t, in[0], S) || mlx_reshape(&t, t, &flat, 1, S);
    if (rc == 0) {
        mlx_array parts[2] = {t, in[1]};
        mlx_vector_array v = mlx_vector_array_new_data(parts, 2);
        rc = !v.ctx || mlx_concatenate_axis(o, v, 0, S);
        mlx_vector_array_free(v);
    }
    mlx_array_free(t);
    return rc;
}
static int b_index(mlx_array *o, const mlx_array *in) { return mlx_take_axis(o, in[0], in[2], 1, S); }
static int b_scatter(mlx_array *o, const mlx_array *in)
{
    /* [[2], [0]] along axis 1, the values broadcast to (2, 3) */
    mlx_array col = mlx_array_new();
    const int shape[2] = {2, 1};
    int rc = mlx_reshape(&col, in[2], shape, 2, S) || mlx_scatter_add_axis(o, in[0], col, in[1], 1, S);
    mlx_array_free(col);
    return rc;
}
static int b_matmul(mlx_array *o, const mlx_array *in)
{
    mlx_array col = mlx_array_new();
    const int shape[2] = {3, 1};
    int rc = mlx_reshape(&col, in[1], shape, 2, S) || mlx_matmul(o, in[0], col, S);
    mlx_array_free(col);
    return rc;
}
static int b_creation(mlx_array *o, const mlx_array *in)
{
    (void)in;
    mlx_array r = mlx_array_new(), f = mlx_array_new(), v = mlx_array_new_float(0.5f);
    const int shape[1] = {4};
    int rc = !v.ctx || mlx_arange(&r, 0, 4, 1, MLX_FLOAT32, S) ||
             mlx_full(&f, shape, 1, v, MLX_FLOAT32, S) || mlx_add(o, r, f, S);
    TU_FREE(r, f, v);
    return rc;
}

static const op_case op_cases[] = {
    {"unary", b_unary, {1, 2, 3, 4}, 4},
    {"binary", b_binary, {11, 22, 33, 14}, 4},
    {"reduce", b_reduce, {6, 15}, 2},
    {"shape", b_shape, {1, 4, 2, 5}, 4},
    {"index", b_index, {3, 1, 6, 4}, 4},
    {"scatter", b_scatter, {1, 2, 63, 64}, 4},
    {"matmul", b_matmul, {140, 320}, 2},
    {"creation op", b_creation, {0.5, 1.5, 2.5, 3.5}, 4},
};

static int run_op(void *p)
{
    op_ctx *x = p;
    mlx_array out = mlx_array_new();
    int rc = x->c->build(&out, x->in);
    if (rc == 0)
        rc = mlx_array_eval(out);
    if (rc == 0)
        for (int i = 0; i < x->c->n_expect; i++) {
            double got = tu_get(out, (size_t)i), want = x->c->expect[i];
            if (got < want - 1e-4 * (1 + want) || got > want + 1e-4 * (1 + want))
                rc = 2;
        }
    mlx_array_free(out);
    return rc;
}

static void test_each_op_family_fails_cleanly_at_every_allocation(void **state)
{
    (void)state;
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    const int32_t idx[2] = {2, 0};
    const int sa[2] = {2, 3}, sb = 3, si = 2;
    op_ctx x = {NULL, {tu_f32(a, sa, 2), tu_f32(b, &sb, 1), tu_i32(idx, &si, 1)}};
    for (size_t k = 0; k < sizeof op_cases / sizeof op_cases[0]; k++) {
        x.c = &op_cases[k];
        long failed = tu_sweep(op_cases[k].name, run_op, &x);
        if (failed < 1)
            fail_msg("%s: no allocation could fail", op_cases[k].name);
    }
    tu_free_n(x.in, 3);
}

/* ---- eval of a small graph, and evaluating it again afterwards ---- */

typedef struct graph_ctx {
    mlx_array x, two, one;
    mlx_array out[2];
} graph_ctx;

/* a = x * 2; b = exp(a) - a; c = sum(b * a); d = a transposed + 1. The
 * constants 2 and 1 are made before the hook is armed. */
static int build_graph(graph_ctx *g, mlx_array two, mlx_array one)
{
    mlx_array a = mlx_array_new(), b = mlx_array_new(), e = mlx_array_new();
    g->out[0] = mlx_array_new();
    g->out[1] = mlx_array_new();
    int rc = mlx_multiply(&a, g->x, two, S) || mlx_exp(&e, a, S) || mlx_subtract(&b, e, a, S) ||
             mlx_multiply(&b, b, a, S) || mlx_sum(&g->out[0], b, false, S) ||
             mlx_transpose(&e, a, S) || mlx_add(&g->out[1], e, one, S);
    TU_FREE(a, b, e);
    return rc;
}

static double graph_sum(void)
{
    double s = 0;
    for (int i = 0; i < 6; i++) {
        double a = 2.0 * (i + 1) / 8;
        s += (exp(a) - a) * a;
    }
    return s;
}

static int eval_graph(void *p)
{
    graph_ctx *g = p;
    /* building is part of the walk too */
    int rc = build_graph(g, g->two, g->one);
    bool built = rc == 0;
    if (rc == 0) {
        mlx_vector_array v = mlx_vector_array_new_data(g->out, 2);
        rc = v.ctx ? mlx_eval(v) : 1;
        mlx_vector_array_free(v);
    }
    tu_sweep_disarm();
    /* with the hook off, the same (possibly half-evaluated) graph must
     * evaluate to the right values, without a message */
    if (built) {
        int before = tu_error_count();
        double s = tu_get(g->out[0], 0), t = tu_get(g->out[1], 1); /* d[0][1] = a[1][0] + 1 */
        if (tu_error_count() != before || fabs(s - graph_sum()) > 1e-4 * graph_sum() ||
            fabs(t - (2.0 * 3 / 8 + 1)) > 1e-6)
            rc = 2;
    }
    tu_free_n(g->out, 2);
    return rc;
}

static void test_graph_eval_fails_cleanly_and_evaluates_afterwards(void **state)
{
    (void)state;
    const float v[6] = {1.0f / 8, 2.0f / 8, 3.0f / 8, 4.0f / 8, 5.0f / 8, 6.0f / 8};
    const int shape[2] = {3, 2};
    graph_ctx g = {tu_f32(v, shape, 2), mlx_array_new_float(2), mlx_array_new_float(1),
                   {{NULL}, {NULL}}};
    assert_true(tu_sweep("eval", eval_graph, &g) >= 3);
    TU_FREE(g.x, g.two, g.one);
}

/* ---- compile: make the closure, compile, call twice, free ---- */

static int compiled_body(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), y = mlx_array_new(), three = mlx_array_new_float(3);
    int rc = !three.ctx || mlx_vector_array_get(&x, in, 0) || mlx_multiply(&y, x, three, S) ||
             mlx_add(&y, y, x, S) || mlx_exp(&y, y, S);
    if (rc == 0) {
        *res = mlx_vector_array_new_value(y);
        rc = res->ctx == NULL;
    }
    TU_FREE(x, y, three);
    return rc;
}

static int compile_cycle(void *p)
{
    mlx_array x = *(mlx_array *)p;
    mlx_closure body = mlx_closure_new_func(compiled_body), fn = mlx_closure_new();
    mlx_vector_array in = {NULL};
    int rc = body.ctx ? mlx_compile(&fn, body, false) : 1;
    if (rc == 0) {
        in = mlx_vector_array_new_value(x);
        rc = in.ctx == NULL;
    }
    /* the first call traces, the second replays */
    for (int call = 0; call < 2 && rc == 0; call++) {
        mlx_vector_array out = {NULL}; /* apply fills it */
        rc = mlx_closure_apply(&out, fn, in);
        mlx_array y = mlx_array_new();
        if (rc == 0)
            rc = mlx_vector_array_get(&y, out, 0);
        if (rc == 0)
            rc = mlx_array_eval(y);
        if (rc == 0 && fabs(tu_get(y, 1) - exp(4 * 0.25)) > 1e-5)
            rc = 2;
        mlx_array_free(y);
        mlx_vector_array_free(out);
    }
    mlx_vector_array_free(in);
    mlx_closure_free(fn);
    mlx_closure_free(body);
    return rc;
}

static void test_compile_call_and_free_fail_cleanly_at_every_allocation(void **state)
{
    (void)state;
    const float v[2] = {0, 0.25f};
    const int n = 2;
    mlx_array x = tu_f32(v, &n, 1);
    assert_true(tu_sweep("compile", compile_cycle, &x) >= 5);
    mlx_array_free(x);
}

/* ---- vmap ---- */

/* take(exp(x), i) + sum(x) for one row x and one index i: an elementwise,
 * a reduction and a gather at a batched index (one node per element). */
static int vmap_body(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), i = mlx_array_new(), e = mlx_array_new(), t = mlx_array_new(),
              s = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&i, in, 1) || mlx_exp(&e, x, S) ||
             mlx_take_axis(&t, e, i, 0, S) || mlx_sum(&s, x, false, S) || mlx_add(&t, t, s, S) ||
             mlx_vector_array_set_value(res, t);
    TU_FREE(x, i, e, t, s);
    return rc;
}

static int vmap_cycle(void *ctx)
{
    mlx_array *xi = ctx;
    const int axes[2] = {0, 0}, oax = 0;
    /* each handle made only if the one before was, so a failure reports once */
    mlx_closure fn = mlx_closure_new_func(vmap_body);
    mlx_vector_array v[4] = {{0}};
    int rc = !fn.ctx;
    if (!rc)
        rc = !(v[0] = mlx_vector_array_new_data(xi, 2)).ctx;
    for (int k = 1; k < 4 && !rc; k++)
        rc = !(v[k] = mlx_vector_array_new()).ctx;
    rc = rc || mlx_detail_vmap_trace(&v[1], &v[2], fn, v[0], axes, 2) ||
         mlx_detail_vmap_replace(&v[3], v[0], v[1], v[2], axes, 2, &oax, 1) || mlx_eval(v[3]);
    if (rc == 0) {
        mlx_array y = mlx_array_new();
        rc = mlx_vector_array_get(&y, v[3], 0);
        /* rows [0, 1] and [2, 3] at indices 1 and 0: e + 1, e^2 + 5 */
        if (rc == 0 && (fabs(tu_get(y, 0) - (exp(1) + 1)) > 1e-5 || fabs(tu_get(y, 1) - (exp(2) + 5)) > 1e-4))
            rc = 2;
        mlx_array_free(y);
    }
    for (int k = 0; k < 4; k++)
        mlx_vector_array_free(v[k]);
    mlx_closure_free(fn);
    return rc;
}

static void test_vmap_fails_cleanly_at_every_allocation(void **state)
{
    (void)state;
    const float v[4] = {0, 1, 2, 3};
    const int32_t idx[2] = {1, 0};
    const int shape[2] = {2, 2}, n = 2;
    mlx_array xi[2] = {tu_f32(v, shape, 2), tu_i32(idx, &n, 1)};
    assert_true(tu_sweep("vmap", vmap_cycle, xi) >= 10);
    tu_free_n(xi, 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_array_creation_fails_cleanly_at_every_allocation),
        T(test_failed_managed_creation_leaves_the_data_to_the_caller),
        T(test_each_op_family_fails_cleanly_at_every_allocation),
        T(test_graph_eval_fails_cleanly_and_evaluates_afterwards),
        T(test_compile_call_and_free_fail_cleanly_at_every_allocation),
        T(test_vmap_fails_cleanly_at_every_allocation),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
