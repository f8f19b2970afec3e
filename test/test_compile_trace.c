/* compile on one thread: what a trace captures and replays, the cache key
 * (shapes, shapeless, dtypes, stream, constants), nested compile, modes,
 * failing traces, simplification, deep tapes, and graph export. Includes
 * the C equivalents of MLX's tests/compile_tests.cpp that need no autodiff,
 * random or fusion. */
#include <inttypes.h>
#include <math.h>

#include "graph/prims_copy.h"
#include "runtime/alloc.h" /* mc_fault_fail_after */
#include "test_compile_util.h"

/* ---- small body helpers ---- */

static mlx_array arg(const mlx_vector_array in, size_t i)
{
    mlx_array a = mlx_array_new();
    if (mlx_vector_array_get(&a, in, i))
        return mlx_array_new();
    return a;
}

/* Returns the arrays (taken over) as the body's outputs. */
static int ret(mlx_vector_array *res, mlx_array *outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!outs[i].ctx)
            return 1;
    *res = mlx_vector_array_new_data(outs, n);
    for (size_t i = 0; i < n; i++)
        mlx_array_free(outs[i]);
    return 0;
}

static mlx_array add(mlx_array a, mlx_array b)
{
    mlx_array r = mlx_array_new();
    mlx_add(&r, a, b, tc_s);
    return r;
}

static mlx_array mul(mlx_array a, mlx_array b)
{
    mlx_array r = mlx_array_new();
    mlx_multiply(&r, a, b, tc_s);
    return r;
}

/* a (op) b, freeing both operands. */
static mlx_array add_take(mlx_array a, mlx_array b)
{
    mlx_array r = add(a, b);
    mlx_array_free(a);
    mlx_array_free(b);
    return r;
}

static mlx_array mul_take(mlx_array a, mlx_array b)
{
    mlx_array r = mul(a, b);
    mlx_array_free(a);
    mlx_array_free(b);
    return r;
}

static mlx_closure closure(int (*fun)(mlx_vector_array *, const mlx_vector_array))
{
    mlx_closure c = mlx_closure_new_func(fun);
    assert_non_null(c.ctx);
    return c;
}

static mc_array *node(mlx_array a) { return mc_arr(a); }

static float item_f32(mlx_array a)
{
    float v = 0;
    assert_int_equal(mlx_array_item_float32(&v, a), 0);
    return v;
}

static void expect_vec(mlx_array a, const float *want, size_t n)
{
    float got[16];
    assert_true(n <= 16);
    tc_read(a, got, n);
    for (size_t i = 0; i < n; i++)
        assert_true(got[i] == want[i]);
}

static mlx_array call2(mlx_closure c, mlx_array a, mlx_array b)
{
    mlx_array in[2] = {a, b};
    mlx_array out;
    assert_int_equal(tc_apply(c, in, 2, &out, NULL), 0);
    return out;
}

/* ---- MLX: simple compile ---- */

static int simple_fun(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = add_take(arg(in, 0), arg(in, 1));
    return ret(res, &o, 1);
}

/* The same compiled function serves scalars, new shapes and new dtypes,
 * tracing once per signature. */
static void test_simple_compile_retraces_per_signature(void **state)
{
    (void)state;
    mlx_closure f = closure(simple_fun);
    mlx_closure cf = tc_compile(f, false);
    size_t t0 = mc_compile_trace_count();
    mlx_array one = tc_scalar(1), two = tc_scalar(2);

    mlx_array out = call2(cf, one, two);
    assert_true(item_f32(out) == 3.0f);
    mlx_array_free(out);
    out = call2(cf, one, two);
    assert_true(item_f32(out) == 3.0f);
    mlx_array_free(out);
    assert_int_equal(mc_compile_trace_count() - t0, 1);

    const float v12[2] = {1, 2}, v34[2] = {3, 4};
    mlx_array vec = tc_vec(v12, 2);
    out = call2(cf, vec, two);
    expect_vec(out, v34, 2);
    mlx_array_free(out);
    out = call2(cf, two, vec);
    expect_vec(out, v34, 2);
    mlx_array_free(out);
    assert_int_equal(mc_compile_trace_count() - t0, 3);

    mlx_array two_i = mlx_array_new_int(2);
    int32_t iv[2] = {1, 2};
    mlx_array vec_i = mlx_array_new_data(iv, (const int[]){2}, 1, MLX_INT32);
    out = call2(cf, two_i, vec);
    expect_vec(out, v34, 2);
    mlx_array_free(out);
    out = call2(cf, two, vec_i);
    expect_vec(out, v34, 2);
    mlx_array_free(out);
    assert_int_equal(mc_compile_trace_count() - t0, 5);
    assert_int_equal(mc_compile_cache_entries_thread(), 5);

    TC_FREE_ALL(one, two, vec, two_i, vec_i);
    mlx_closure_free(cf);
    mlx_closure_free(f);
    assert_int_equal(mc_compile_cache_entries_thread(), 0); /* freeing cf erased them */
}

/* MLX: inputs that are themselves unevaluated graphs. */
static void test_compile_inputs_with_primitive(void **state)
{
    (void)state;
    const float av[3] = {1, 2, 3}, bv[3] = {10, 20, 30}, want[3] = {22, 44, 66};
    mlx_array a = tc_vec(av, 3), b = tc_vec(bv, 3), two = tc_scalar(2);
    mlx_array x = mul(a, two), y = mul(b, two); /* lazy */
    mlx_closure f = closure(simple_fun);
    for (int rep = 0; rep < 2; rep++) {
        mlx_closure cf = tc_compile(f, false);
        mlx_array out = call2(cf, x, y);
        expect_vec(out, want, 3);
        mlx_array_free(out);
        mlx_closure_free(cf);
    }
    TC_FREE_ALL(a, b, two, x, y);
    mlx_closure_free(f);
}

/* MLX: an array created inside the body is a constant of the trace. */
static int fun_creates_array(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = add_take(arg(in, 0), mlx_array_new_float32(1.0f));
    return ret(res, &o, 1);
}

static void test_compile_with_created_array(void **state)
{
    (void)state;
    mlx_closure f = closure(fun_creates_array);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = tc_scalar(2);
    for (int i = 0; i < 2; i++) {
        mlx_array out = tc_call1(cf, x);
        assert_true(item_f32(out) == 3.0f);
        mlx_array_free(out);
    }
    mlx_array_free(x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* ---- nested compile ---- */

static atomic_int inner_runs;

static int inner_fun(mlx_vector_array *res, const mlx_vector_array in)
{
    atomic_fetch_add(&inner_runs, 1);
    mlx_array o = mul_take(mlx_array_new_int(2), arg(in, 0));
    return ret(res, &o, 1);
}

static int outer_fun(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = add_take(arg(in, 0), arg(in, 1));
    mlx_closure inner = closure(inner_fun);
    mlx_closure cinner = mlx_closure_new();
    mlx_array y = mlx_array_new();
    int rc = mlx_compile(&cinner, inner, false);
    if (!rc) {
        mlx_vector_array args = mlx_vector_array_new_value(x);
        mlx_vector_array outs = mlx_vector_array_new();
        rc = mlx_closure_apply(&outs, cinner, args) || mlx_vector_array_get(&y, outs, 0);
        mlx_vector_array_free(args);
        mlx_vector_array_free(outs);
    }
    mlx_closure_free(cinner);
    mlx_closure_free(inner);
    if (rc) {
        mlx_array_free(x);
        mlx_array_free(y);
        return rc;
    }
    mlx_array o = add_take(x, y);
    return ret(res, &o, 1);
}

/* MLX "nested compile": a compiled function called inside a trace is
 * traced through (its body runs on the outer trace's arrays and leaves no
 * trace of its own). */
static void test_nested_compile_traces_through(void **state)
{
    (void)state;
    atomic_store(&inner_runs, 0);
    mlx_closure f = closure(outer_fun);
    mlx_closure cf = tc_compile(f, false);
    mlx_array a = mlx_array_new_int(1), b = mlx_array_new_int(2);
    for (int i = 0; i < 2; i++) {
        mlx_array out = call2(cf, a, b);
        int32_t v = 0;
        assert_int_equal(mlx_array_item_int32(&v, out), 0);
        assert_int_equal(v, 9);
        mlx_array_free(out);
    }
    assert_int_equal(atomic_load(&inner_runs), 1);
    assert_int_equal(mc_compile_cache_entries_thread(), 1);
    TC_FREE_ALL(a, b);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

static mlx_closure g_inner;

static int outer_twice(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_vector_array mid = mlx_vector_array_new();
    mlx_vector_array out = mlx_vector_array_new();
    int rc = mlx_closure_apply(&mid, g_inner, in) || mlx_closure_apply(&out, g_inner, mid);
    mlx_vector_array_free(mid);
    if (rc) {
        mlx_vector_array_free(out);
        return rc;
    }
    *res = out;
    return 0;
}

/* MLX "compile compiled function": a compiled closure made outside and
 * applied twice inside another trace flattens into one tape over x. */
static void test_compiled_function_inside_compile(void **state)
{
    (void)state;
    mlx_closure inner = closure(inner_fun);
    g_inner = tc_compile(inner, false);
    mlx_closure f = closure(outer_twice);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = mlx_array_new_int(3);
    mlx_array out = tc_call1(cf, x);
    /* 2 * (2 * x), the two constants merged, then fused into one node */
    mc_array *o = node(out);
    assert_int_equal(o->prim, MC_PRIM_FUSED);
    assert_int_equal(o->n_inputs, 2);
    assert_ptr_equal(o->inputs[1], node(x));
    assert_int_equal(o->inputs[0]->prim, MC_PRIM_NONE);
    int32_t v = 0;
    assert_int_equal(mlx_array_item_int32(&v, out), 0);
    assert_int_equal(v, 12);
    assert_int_equal(mc_compile_cache_entries_thread(), 1); /* g_inner never traced */
    mlx_array_free(out);
    mlx_array_free(x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
    mlx_closure_free(g_inner);
    mlx_closure_free(inner);
}

/* ---- modes ---- */

/* MLX "enable and disable compile": compiling an empty closure fails,
 * unless compile is disabled (then the closure comes back as it is). */
static void test_enable_and_disable_compile(void **state)
{
    (void)state;
    mlx_closure empty = mlx_closure_new();
    mlx_closure res = mlx_closure_new();
    assert_int_not_equal(mlx_compile(&res, empty, false), 0);
    tc_expect_error("Cannot compile a function without a target");
    assert_int_equal(mlx_disable_compile(), 0);
    assert_int_equal(mlx_compile(&res, empty, false), 0);
    assert_null(res.ctx);
    assert_int_equal(mlx_enable_compile(), 0);
    assert_int_not_equal(mlx_compile(&res, empty, false), 0);
    tc_expect_error("Cannot compile");
    assert_int_not_equal(mlx_set_compile_mode((mlx_compile_mode)7), 0);
    tc_expect_error("compile mode");
}

/* Test 6: with compile disabled, mlx_compile returns the closure itself
 * and a closure compiled earlier runs its body on every call; enabling
 * again brings the cache back. */
static void test_disabled_mode_calls_the_body_every_time(void **state)
{
    (void)state;
    tc_body *b;
    mlx_closure f = tc_body_closure(TC_ADD, tc_scalar(1), &b);
    mlx_closure early = tc_compile(f, false);
    mlx_array x = tc_scalar(1);

    assert_int_equal(mlx_set_compile_mode(MLX_COMPILE_MODE_DISABLED), 0);
    mlx_closure late = tc_compile(f, false);
    assert_ptr_equal(late.ctx, f.ctx);
    for (int i = 0; i < 3; i++) {
        mlx_array o1 = tc_call1(early, x), o2 = tc_call1(late, x);
        assert_true(item_f32(o1) == 2.0f && item_f32(o2) == 2.0f);
        TC_FREE_ALL(o1, o2);
    }
    assert_int_equal(atomic_load(&b->runs), 6);
    assert_int_equal(mc_compile_cache_entries_thread(), 0);

    assert_int_equal(mlx_set_compile_mode(MLX_COMPILE_MODE_ENABLED), 0);
    for (int i = 0; i < 3; i++) {
        mlx_array o = tc_call1(early, x);
        assert_true(item_f32(o) == 2.0f);
        mlx_array_free(o);
    }
    assert_int_equal(atomic_load(&b->runs), 7);
    mlx_array_free(x);
    mlx_closure_free(early);
    mlx_closure_free(late);
    mlx_closure_free(f);
}

/* ---- failing traces ---- */

/* Test 6 / invariant 6: a body that fails makes the call fail and leaves
 * no entry; the next call traces again (and works once the body does). */
static void test_failing_first_trace_leaves_no_entry(void **state)
{
    (void)state;
    tc_body *b;
    mlx_closure f = tc_body_closure(TC_ADD, tc_scalar(1), &b);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = tc_scalar(1), out;
    atomic_store(&b->fail, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_not_equal(tc_apply(cf, &x, 1, &out, NULL), 0);
        tc_expect_error(NULL);
        assert_null(out.ctx);
        assert_int_equal(mc_compile_cache_entries_thread(), 0);
    }
    assert_int_equal(atomic_load(&b->runs), 2);
    atomic_store(&b->fail, 0);
    out = tc_call1(cf, x);
    assert_true(item_f32(out) == 2.0f);
    assert_int_equal(mc_compile_cache_entries_thread(), 1);
    assert_int_equal(atomic_load(&b->runs), 3);
    TC_FREE_ALL(x, out);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

static int bad_reshape(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), y = mlx_array_new();
    int rc = mlx_reshape(&y, x, (const int[]){3}, 1, tc_s);
    mlx_array_free(x);
    if (rc)
        return rc;
    return ret(res, &y, 1);
}

/* An op error inside the body fails the call and leaves no entry. */
static void test_op_error_in_body_fails_the_call(void **state)
{
    (void)state;
    mlx_closure f = closure(bad_reshape);
    mlx_closure cf = tc_compile(f, false);
    const float v[4] = {1, 2, 3, 4};
    mlx_array x = tc_vec(v, 4), out;
    assert_int_not_equal(tc_apply(cf, &x, 1, &out, NULL), 0);
    tc_expect_error(NULL);
    assert_int_equal(mc_compile_cache_entries_thread(), 0);
    mlx_array_free(x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

static atomic_int nullary_fail;

static int nullary(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)in;
    if (atomic_load(&nullary_fail))
        return 1;
    mlx_array o = add_take(mlx_array_new_float32(1), mlx_array_new_float32(2));
    return ret(res, &o, 1);
}

/* MLX "throwing first trace does not poison cache", with no inputs (so
 * every call has the same key). */
static void test_throwing_first_trace_does_not_poison_cache(void **state)
{
    (void)state;
    mlx_closure f = closure(nullary);
    mlx_closure cf = tc_compile(f, false);
    mlx_array out;
    size_t n_out;
    atomic_store(&nullary_fail, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_not_equal(tc_apply(cf, NULL, 0, &out, &n_out), 0);
        tc_expect_error(NULL);
    }
    atomic_store(&nullary_fail, 0);
    assert_int_equal(tc_apply(cf, NULL, 0, &out, &n_out), 0);
    assert_int_equal(n_out, 1);
    assert_true(item_f32(out) == 3.0f);
    mlx_array_free(out);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

static mlx_array g_real;

static int uses_global(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)in;
    mlx_array o = add(g_real, g_real);
    return ret(res, &o, 1);
}

/* MLX: a body that reaches the call's real inputs other than through its
 * arguments is refused. */
static void test_uncaptured_inputs_are_refused(void **state)
{
    (void)state;
    g_real = tc_scalar(1);
    mlx_closure f = closure(uses_global);
    mlx_closure cf = tc_compile(f, false);
    mlx_array out;
    assert_int_not_equal(tc_apply(cf, &g_real, 1, &out, NULL), 0);
    tc_expect_error("uncaptured inputs");
    assert_int_equal(mc_compile_cache_entries_thread(), 0);
    mlx_array_free(g_real);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* ---- the cache key ---- */

/* Test 6: dtype and rank are always in the key; shapes only when not
 * shapeless. */
static void test_shapeless_key_ignores_shapes_only(void **state)
{
    (void)state;
    const float v[4] = {1, 2, 3, 4};
    mlx_array x2 = tc_vec(v, 2), x4 = tc_vec(v, 4);
    mlx_array x2d = mlx_array_new_data(v, (const int[]){2, 2}, 2, MLX_FLOAT32);
    mlx_array xd = mlx_array_new_data((const double[]){1, 2}, (const int[]){2}, 1, MLX_FLOAT64);
    for (int shapeless = 0; shapeless < 2; shapeless++) {
        tc_body *b;
        mlx_closure f = tc_body_closure(TC_ADD, tc_scalar(1), &b);
        mlx_closure cf = tc_compile(f, shapeless);
        mlx_array o;
        o = tc_call1(cf, x2);
        expect_vec(o, (const float[]){2, 3}, 2);
        mlx_array_free(o);
        o = tc_call1(cf, x4);
        expect_vec(o, (const float[]){2, 3, 4, 5}, 4);
        mlx_array_free(o);
        assert_int_equal(atomic_load(&b->runs), shapeless ? 1 : 2);
        o = tc_call1(cf, x2d); /* another rank: always a new trace */
        mlx_array_free(o);
        assert_int_equal(atomic_load(&b->runs), shapeless ? 2 : 3);
        o = tc_call1(cf, xd); /* another dtype: always a new trace */
        assert_int_equal(mlx_array_dtype(o), MLX_FLOAT64);
        mlx_array_free(o);
        assert_int_equal(atomic_load(&b->runs), shapeless ? 3 : 4);
        mlx_closure_free(cf);
        mlx_closure_free(f);
    }
    TC_FREE_ALL(x2, x4, x2d, xd);
}

/* Test 6: the calling thread's default stream is part of the key. */
static void test_stream_is_in_the_key(void **state)
{
    (void)state;
    tc_body *b;
    mlx_closure f = tc_body_closure(TC_ADD, tc_scalar(1), &b);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = tc_scalar(1), o;
    mlx_stream s0 = mlx_default_cpu_stream_new();
    mlx_device dev = mlx_device_new_type(MLX_CPU, 0);
    mlx_stream s1 = mlx_stream_new_device(dev);
    assert_non_null(s0.ctx);
    assert_non_null(s1.ctx);

    o = tc_call1(cf, x);
    mlx_array_free(o);
    assert_int_equal(mlx_set_default_stream(s1), 0);
    o = tc_call1(cf, x);
    assert_true(item_f32(o) == 2.0f);
    mlx_array_free(o);
    assert_int_equal(atomic_load(&b->runs), 2);
    assert_int_equal(mlx_set_default_stream(s0), 0);
    o = tc_call1(cf, x);
    mlx_array_free(o);
    assert_int_equal(atomic_load(&b->runs), 2);

    mlx_stream_free(s0);
    mlx_stream_free(s1);
    mlx_device_free(dev);
    mlx_array_free(x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* Test 6: mlx_detail_compile keys by (fun_id, constants): two compiled
 * closures with the same id and constants share a trace; other constants
 * get their own. */
static void test_constants_are_in_the_key(void **state)
{
    (void)state;
    const uintptr_t id = 0xC0;
    tc_body *b;
    mlx_closure f = tc_body_closure(TC_ADD, tc_scalar(1), &b);
    const uint64_t k1[2] = {1, 7}, k2[2] = {2, 7};
    mlx_closure c1 = mlx_closure_new(), c1b = mlx_closure_new(), c2 = mlx_closure_new();
    assert_int_equal(mlx_detail_compile(&c1, f, id, false, k1, 2), 0);
    assert_int_equal(mlx_detail_compile(&c1b, f, id, false, k1, 2), 0);
    assert_int_equal(mlx_detail_compile(&c2, f, id, false, k2, 2), 0);
    mlx_array x = tc_scalar(1), o;
    o = tc_call1(c1, x);
    mlx_array_free(o);
    o = tc_call1(c1b, x);
    mlx_array_free(o);
    assert_int_equal(atomic_load(&b->runs), 1);
    o = tc_call1(c2, x);
    assert_true(item_f32(o) == 2.0f);
    mlx_array_free(o);
    assert_int_equal(atomic_load(&b->runs), 2);
    assert_int_equal(mc_compile_cache_entries_thread(), 2);
    /* detail closures do not erase on free: the binding owns the id */
    mlx_closure_free(c1);
    assert_int_equal(mc_compile_cache_entries_thread(), 2);
    assert_int_equal(mlx_detail_compile_erase(id), 0);
    assert_int_equal(mc_compile_cache_entries_thread(), 0);
    assert_int_not_equal(mlx_detail_compile(&c1, f, id, false, NULL, 3), 0);
    tc_expect_error("constants");
    mlx_array_free(x);
    mlx_closure_free(c1b);
    mlx_closure_free(c2);
    mlx_closure_free(f);
}

/* ---- shapeless ---- */

static int reshape_2x2(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0), y = mlx_array_new();
    int rc = mlx_reshape(&y, x, (const int[]){2, 2}, 2, tc_s);
    mlx_array_free(x);
    return rc ? rc : ret(res, &y, 1);
}

/* MLX "shapeless compile" (not ok): a reshape to a fixed size cannot follow
 * a new input size, and says so. */
static void test_shapeless_fixed_reshape_fails_clearly(void **state)
{
    (void)state;
    mlx_closure f = closure(reshape_2x2);
    mlx_closure cf = tc_compile(f, true);
    const float v[5] = {1, 2, 3, 4, 5};
    mlx_array x4 = tc_vec(v, 4), x5 = tc_vec(v, 5), out;
    out = tc_call1(cf, x4);
    assert_int_equal(mlx_array_ndim(out), 2);
    mlx_array_free(out);
    assert_int_not_equal(tc_apply(cf, &x5, 1, &out, NULL), 0);
    tc_expect_error("Cannot reshape array of size 5 into shape (2,2)");
    TC_FREE_ALL(x4, x5);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

static int add_vec2(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = add_take(arg(in, 0), mlx_array_new_data((const float[]){2}, (const int[]){1}, 1, MLX_FLOAT32));
    return ret(res, &o, 1);
}

/* MLX "shapeless compile" (ok): one trace serves new shapes and shares
 * its constant; a new dtype or rank retraces (a new constant). */
static void test_shapeless_replays_on_new_shapes(void **state)
{
    (void)state;
    mlx_closure f = closure(add_vec2);
    mlx_closure cf = tc_compile(f, true);
    const float v[4] = {1, 2, 3, 4};
    mlx_array x2 = tc_vec(v, 2), x4 = tc_vec(v, 4);
    mlx_array out = tc_call1(cf, x2), out2 = tc_call1(cf, x4);
    assert_ptr_equal(node(out)->inputs[1], node(out2)->inputs[1]);
    expect_vec(out2, (const float[]){3, 4, 5, 6}, 4);
    mlx_array_free(out2);

    mlx_array xd = mlx_array_new_data((const double[]){1, 2}, (const int[]){2}, 1, MLX_FLOAT64);
    out2 = tc_call1(cf, xd);
    assert_ptr_not_equal(node(out)->inputs[1], node(out2)->inputs[1]);
    mlx_array_free(out2);
    mlx_array x12 = mlx_array_new_data(v, (const int[]){1, 2}, 2, MLX_FLOAT32);
    out2 = tc_call1(cf, x12);
    assert_ptr_not_equal(node(out)->inputs[1], node(out2)->inputs[1]);
    TC_FREE_ALL(out, out2, x2, x4, xd, x12);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

static int broadcast_add(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array z = mlx_array_new();
    if (mlx_zeros(&z, (const int[]){8, 8}, 2, MLX_FLOAT32, tc_s))
        return 1;
    mlx_array o = add_take(arg(in, 0), z);
    return ret(res, &o, 1);
}

/* MLX "compile strides": the output keeps the broadcast rank. */
static void test_compile_strides(void **state)
{
    (void)state;
    mlx_closure f = closure(broadcast_add);
    mlx_closure cf = tc_compile(f, false);
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_zeros(&a, (const int[]){1, 8, 8}, 3, MLX_FLOAT32, tc_s), 0);
    mlx_array out = tc_call1(cf, a);
    assert_int_equal(mlx_array_eval(out), 0);
    assert_int_equal(mlx_array_ndim(out), 3);
    assert_non_null(mlx_array_strides(out));
    TC_FREE_ALL(a, out);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* ---- closures with state (MLX "compile lambda") ---- */

static int add_payload(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    int k = *(const int *)payload;
    mlx_array o = add_take(arg(in, 0), mlx_array_new_int(k));
    return ret(res, &o, 1);
}

/* A trace keeps what the body captured when it ran: changing the state
 * later does not retrace, compiling again does. */
static void test_compile_closure_with_state(void **state)
{
    (void)state;
    int k = 2;
    mlx_closure f = mlx_closure_new_func_payload(add_payload, &k, NULL);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = mlx_array_new_int(0);
    int32_t v;
    mlx_array out = tc_call1(cf, x);
    assert_int_equal(mlx_array_item_int32(&v, out), 0);
    assert_int_equal(v, 2);
    mlx_array_free(out);
    k = 3;
    out = tc_call1(cf, x);
    assert_int_equal(mlx_array_item_int32(&v, out), 0);
    assert_int_equal(v, 2);
    mlx_array_free(out);
    mlx_closure cf2 = tc_compile(f, false);
    out = tc_call1(cf2, x);
    assert_int_equal(mlx_array_item_int32(&v, out), 0);
    assert_int_equal(v, 3);
    TC_FREE_ALL(out, x);
    mlx_closure_free(cf);
    mlx_closure_free(cf2);
    mlx_closure_free(f);
}

static int identity(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    return ret(res, &x, 1);
}

/* An output that is an input comes back as that very array. */
static void test_identity_returns_the_input(void **state)
{
    (void)state;
    mlx_closure f = closure(identity);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = tc_scalar(4);
    for (int i = 0; i < 2; i++) {
        mlx_array out = tc_call1(cf, x);
        assert_ptr_equal(out.ctx, x.ctx);
        mlx_array_free(out);
    }
    mlx_array_free(x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* ---- simplify ---- */

static int two_scalars(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    mlx_array m1 = mlx_array_new_float32(-1), m2 = mlx_array_new_float32(-1);
    mlx_array outs[2] = {add(x, m1), add(x, m2)};
    TC_FREE_ALL(x, m1, m2);
    return ret(res, outs, 2);
}

/* MLX "simplify scalars": two equal scalar constants become one, unless
 * simplification is off. */
static void test_simplify_merges_equal_scalars(void **state)
{
    (void)state;
    for (int mode = MLX_COMPILE_MODE_NO_SIMPLIFY; mode <= MLX_COMPILE_MODE_NO_FUSE; mode++) {
        assert_int_equal(mlx_set_compile_mode((mlx_compile_mode)mode), 0);
        mlx_closure f = closure(two_scalars);
        mlx_closure cf = tc_compile(f, false);
        const float v[2] = {1, 2};
        mlx_array x = tc_vec(v, 2);
        mlx_vector_array args = mlx_vector_array_new_value(x), res = mlx_vector_array_new();
        assert_int_equal(mlx_closure_apply(&res, cf, args), 0);
        assert_int_equal(mlx_vector_array_size(res), 2);
        mlx_array c = mlx_array_new(), d = mlx_array_new();
        mlx_vector_array_get(&c, res, 0);
        mlx_vector_array_get(&d, res, 1);
        bool same = node(c)->inputs[1] == node(d)->inputs[1];
        assert_true(same == (mode != MLX_COMPILE_MODE_NO_SIMPLIFY));
        assert_ptr_not_equal(c.ctx, d.ctx); /* outputs are never merged */
        expect_vec(d, (const float[]){0, 1}, 2);
        TC_FREE_ALL(c, d, x);
        mlx_vector_array_free(args);
        mlx_vector_array_free(res);
        mlx_closure_free(cf);
        mlx_closure_free(f);
    }
}

/* x * k, with k a new float32 scalar. */
static mlx_array mul_k(mlx_array x, float k)
{
    mlx_array kk = mlx_array_new_float32(k);
    mlx_array r = mul(x, kk);
    mlx_array_free(kk);
    return r;
}

static int exp_two(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    mlx_array o = add_take(mul_k(x, 2), mul_k(x, 2));
    mlx_array_free(x);
    return ret(res, &o, 1);
}

/* MLX "simplify" / "no simplify": equal steps merge (f(a) + f(a) reads one
 * node twice) except in NO_SIMPLIFY mode. */
static void test_simplify_merges_equal_steps(void **state)
{
    (void)state;
    const float v[2] = {1, 2};
    for (int mode = MLX_COMPILE_MODE_NO_SIMPLIFY; mode <= MLX_COMPILE_MODE_ENABLED; mode++) {
        assert_int_equal(mlx_set_compile_mode((mlx_compile_mode)mode), 0);
        mlx_closure f = closure(exp_two);
        mlx_closure cf = tc_compile(f, false);
        mlx_array x = tc_vec(v, 2);
        mlx_array out = tc_call1(cf, x);
        if (mode == MLX_COMPILE_MODE_ENABLED) {
            /* fused: the merged x * 2 is read twice inside, from x and 2 */
            assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
            assert_int_equal(node(out)->n_inputs, 2);
        } else {
            bool same = node(out)->inputs[0] == node(out)->inputs[1];
            assert_true(same == (mode != MLX_COMPILE_MODE_NO_SIMPLIFY));
        }
        expect_vec(out, (const float[]){4, 8}, 2);
        TC_FREE_ALL(out, x);
        mlx_closure_free(cf);
        mlx_closure_free(f);
    }
}

static int mul_then_copy(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    mlx_array y = mul_take(x, mlx_array_new_float32(3));
    if (!y.ctx)
        return 1;
    mc_astype_params p = {MLX_FLOAT32};
    mc_array *ya = node(y);
    mc_array *c = mc_node_new("test", MC_PRIM_COPY, &ya, 1, &p, sizeof p);
    mlx_array_free(y);
    mlx_array o = {c};
    return ret(res, &o, 1);
}

/* MLX "simplify noops": a Copy to the same dtype is dropped. */
static void test_simplify_removes_noop_copies(void **state)
{
    (void)state;
    mlx_closure f = closure(mul_then_copy);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = tc_scalar(2);
    mlx_array out = tc_call1(cf, x);
    assert_int_equal(node(out)->prim, MC_PRIM_BINARY);
    assert_ptr_equal(node(out)->inputs[0], node(x));
    assert_true(item_f32(out) == 6.0f);
    TC_FREE_ALL(out, x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

enum { DEEP = 10000 };

static int deep_chain(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array y = arg(in, 0);
    for (int i = 0; i < DEEP && y.ctx; i++)
        y = add_take(y, mlx_array_new_float32(1));
    return ret(res, &y, 1);
}

/* MLX "compile deep graph", much deeper: a 10,000-step tape is walked,
 * simplified (10,000 equal constants become one), replayed and released
 * without recursion, in every mode. */
static void test_deep_tape_of_10000_steps(void **state)
{
    (void)state;
    const float v[2] = {1, -2};
    for (int mode = MLX_COMPILE_MODE_NO_SIMPLIFY; mode <= MLX_COMPILE_MODE_ENABLED; mode++) {
        assert_int_equal(mlx_set_compile_mode((mlx_compile_mode)mode), 0);
        mlx_closure f = closure(deep_chain);
        mlx_closure cf = tc_compile(f, false);
        mlx_array x = tc_vec(v, 2);
        for (int rep = 0; rep < 2; rep++) {
            mlx_array out = tc_call1(cf, x);
            expect_vec(out, (const float[]){1 + DEEP, -2 + DEEP}, 2);
            mlx_array_free(out);
        }
        mlx_array_free(x);
        mlx_closure_free(cf);
        mlx_closure_free(f);
    }
}

/* ---- graph export ---- */

static int mul_add(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = add_take(mul_take(arg(in, 0), mlx_array_new_float32(2)), arg(in, 1));
    return ret(res, &o, 1);
}

/* Writes the graph of out with fn to a string (the caller frees it). */
static char *graph_text(int (*fn)(FILE *, const mlx_node_namer, const mlx_vector_array), mlx_node_namer nn,
                        mlx_array out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    mlx_vector_array v = mlx_vector_array_new_value(out);
    assert_int_equal(fn(f, nn, v), 0);
    fclose(f);
    mlx_vector_array_free(v);
    return text;
}

/* mlx_print_graph shows a compiled function's replayed tape in MLX's
 * format; the caller's namer names what it knows and is not changed. */
static void test_print_graph_shows_the_tape(void **state)
{
    (void)state;
    mlx_set_compile_mode(MLX_COMPILE_MODE_NO_FUSE);
    mlx_closure f = closure(mul_add);
    mlx_closure cf = tc_compile(f, false);
    const float v[2] = {1, 2};
    mlx_array x = tc_vec(v, 2), y = tc_vec(v, 2);
    mlx_array out = call2(cf, x, y);
    mlx_node_namer nn = mlx_node_namer_new();
    char *text = graph_text(mlx_print_graph, nn, out);
    assert_string_equal(text, "Inputs: A [(2), float32], B [(), float32], C [(2), float32]\n"
                              "Outputs: D [(2), float32]\n"
                              "Multiply A [(2), float32], B [(), float32] -> E [(2), float32]\n"
                              "Add E [(2), float32], C [(2), float32] -> D [(2), float32]\n");
    free(text);

    assert_int_equal(mlx_node_namer_set_name(nn, x, "x"), 0);
    text = graph_text(mlx_print_graph, nn, out);
    assert_string_equal(text, "Inputs: x [(2), float32], B [(), float32], C [(2), float32]\n"
                              "Outputs: D [(2), float32]\n"
                              "Multiply x [(2), float32], B [(), float32] -> E [(2), float32]\n"
                              "Add E [(2), float32], C [(2), float32] -> D [(2), float32]\n");
    free(text);
    const char *name = NULL;
    assert_int_equal(mlx_node_namer_get_name(&name, nn, out), 0);
    assert_string_equal(name, "B"); /* the namer had one name, so the next is B */
    assert_int_equal(mlx_node_namer_get_name(&name, nn, x), 0);
    assert_string_equal(name, "x");

    assert_int_not_equal(mlx_print_graph(NULL, nn, (mlx_vector_array){NULL}), 0);
    tc_expect_error("[mlx_print_graph]");
    mlx_node_namer_free(nn);
    TC_FREE_ALL(x, y, out);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* mlx_export_to_dot writes MLX's DOT: sources, one rectangle per node with
 * edges from its inputs and to its output, and the final output as sink. */
static void test_export_to_dot_shows_the_tape(void **state)
{
    (void)state;
    mlx_set_compile_mode(MLX_COMPILE_MODE_NO_FUSE);
    mlx_closure f = closure(mul_add);
    mlx_closure cf = tc_compile(f, false);
    const float v[2] = {1, 2};
    mlx_array x = tc_vec(v, 2), y = tc_vec(v, 2);
    mlx_array out = call2(cf, x, y);
    mlx_node_namer nn = mlx_node_namer_new();
    char *text = graph_text(mlx_export_to_dot, nn, out);
    char want[1024];
    uintptr_t mid = (uintptr_t)node(out)->inputs[0], last = (uintptr_t)node(out);
    snprintf(want, sizeof want,
             "digraph {\n"
             "{ rank=source; \"A\"; }\n"
             "{ rank=source; \"B\"; }\n"
             "{ %1$" PRIuPTR " [label =\"Multiply\", shape=rectangle]; }\n"
             "\"A\" -> %1$" PRIuPTR "\n"
             "\"B\" -> %1$" PRIuPTR "\n"
             "{ \"C\"; }\n"
             "%1$" PRIuPTR " -> \"C\"\n"
             "{ rank=source; \"D\"; }\n"
             "{ %2$" PRIuPTR " [label =\"Add\", shape=rectangle]; }\n"
             "\"C\" -> %2$" PRIuPTR "\n"
             "\"D\" -> %2$" PRIuPTR "\n"
             "{ rank=sink; \"E\"; }\n"
             "%2$" PRIuPTR " -> \"E\"\n"
             "}",
             mid, last);
    assert_string_equal(text, want);
    free(text);
    mlx_node_namer_free(nn);
    TC_FREE_ALL(x, y, out);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* ---- allocation failures ---- */

static int fault_body(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    if (!x.ctx)
        return 1;
    mlx_array o = add_take(mul_take(x, mlx_array_new_float32(2)), mlx_array_new_float32(1));
    mlx_array o2 = mlx_array_new();
    if (o.ctx && mlx_abs(&o2, o, tc_s)) {
        mlx_array_free(o);
        return 1;
    }
    mlx_array_free(o);
    return ret(res, &o2, 1);
}

/* Compiles, calls twice (trace, then replay of the fused tape), checks the
 * values and frees everything. Returns 0 if all worked, 1 if a call failed
 * (cleanly), 2 if a call claimed success with a wrong result. */
static int exercise_compile(void)
{
    const float v[3] = {-2, 0, 3};
    int rc = 0;
    mlx_closure f = mlx_closure_new_func(fault_body);
    mlx_closure cf = mlx_closure_new();
    mlx_array x = mlx_array_new_data(v, (const int[]){3}, 1, MLX_FLOAT32);
    if (!f.ctx || !x.ctx || mlx_compile(&cf, f, false)) {
        rc = 1;
        goto done;
    }
    for (int call = 0; call < 2 && !rc; call++) {
        mlx_vector_array args = mlx_vector_array_new_value(x), res = mlx_vector_array_new();
        mlx_array y = mlx_array_new();
        if (!args.ctx || mlx_closure_apply(&res, cf, args) || mlx_vector_array_get(&y, res, 0) ||
            mlx_array_eval(y)) {
            rc = 1;
        } else {
            const float *d = mlx_array_data_float32(y);
            if (!d || d[0] != 3 || d[1] != 1 || d[2] != 7)
                rc = 2;
        }
        mlx_array_free(y);
        mlx_vector_array_free(args);
        mlx_vector_array_free(res);
    }
done:
    mlx_array_free(x);
    mlx_closure_free(cf);
    mlx_closure_free(f);
    return rc;
}

/* Every allocation of compiling, tracing, simplifying, fusing, replaying
 * and evaluating is failed in turn (with -Dfault_injection=true): each
 * failure is reported, the call fails, nothing is kept in the cache and
 * nothing leaks (ASan/valgrind); the first pass without a failure gives
 * the right values. */
static void test_allocation_failures_fail_cleanly(void **state)
{
    (void)state;
#ifdef MC_FAULT_INJECTION
    for (long n = 0;; n++) {
        atomic_store(&tc_errors, 0);
        mc_fault_fail_after(n);
        int rc = exercise_compile();
        mc_fault_fail_after(-1);
        assert_int_not_equal(rc, 2);
        assert_int_equal(mc_compile_cache_entries_thread(), 0);
        if (!rc) {
            assert_true(n > 20);
            break;
        }
        assert_true(atomic_load(&tc_errors) >= 1);
    }
    atomic_store(&tc_errors, 0);
#else
    assert_int_equal(exercise_compile(), 0);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_simple_compile_retraces_per_signature, tc_teardown),
        cmocka_unit_test_teardown(test_compile_inputs_with_primitive, tc_teardown),
        cmocka_unit_test_teardown(test_compile_with_created_array, tc_teardown),
        cmocka_unit_test_teardown(test_nested_compile_traces_through, tc_teardown),
        cmocka_unit_test_teardown(test_compiled_function_inside_compile, tc_teardown),
        cmocka_unit_test_teardown(test_enable_and_disable_compile, tc_teardown),
        cmocka_unit_test_teardown(test_disabled_mode_calls_the_body_every_time, tc_teardown),
        cmocka_unit_test_teardown(test_failing_first_trace_leaves_no_entry, tc_teardown),
        cmocka_unit_test_teardown(test_op_error_in_body_fails_the_call, tc_teardown),
        cmocka_unit_test_teardown(test_throwing_first_trace_does_not_poison_cache, tc_teardown),
        cmocka_unit_test_teardown(test_uncaptured_inputs_are_refused, tc_teardown),
        cmocka_unit_test_teardown(test_shapeless_key_ignores_shapes_only, tc_teardown),
        cmocka_unit_test_teardown(test_stream_is_in_the_key, tc_teardown),
        cmocka_unit_test_teardown(test_constants_are_in_the_key, tc_teardown),
        cmocka_unit_test_teardown(test_shapeless_fixed_reshape_fails_clearly, tc_teardown),
        cmocka_unit_test_teardown(test_shapeless_replays_on_new_shapes, tc_teardown),
        cmocka_unit_test_teardown(test_compile_strides, tc_teardown),
        cmocka_unit_test_teardown(test_compile_closure_with_state, tc_teardown),
        cmocka_unit_test_teardown(test_identity_returns_the_input, tc_teardown),
        cmocka_unit_test_teardown(test_simplify_merges_equal_scalars, tc_teardown),
        cmocka_unit_test_teardown(test_simplify_merges_equal_steps, tc_teardown),
        cmocka_unit_test_teardown(test_simplify_removes_noop_copies, tc_teardown),
        cmocka_unit_test_teardown(test_deep_tape_of_10000_steps, tc_teardown),
        cmocka_unit_test_teardown(test_print_graph_shows_the_tape, tc_teardown),
        cmocka_unit_test_teardown(test_export_to_dot_shows_the_tape, tc_teardown),
        cmocka_unit_test_teardown(test_allocation_failures_fail_cleanly, tc_teardown),
    };
    return cmocka_run_group_tests(tests, tc_setup, NULL);
}
