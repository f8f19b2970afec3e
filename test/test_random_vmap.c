/* vmap and derivatives of the random functions against MLX 0.31.1: vmap
 * over a batch of keys (and over batched parameters with one key) gives
 * MLX's mx.vmap bytes (test/fixtures/random_vmap_cases.h, written by
 * scripts/make_random_vmap_fixtures.py) from one random node for the whole
 * batch; truncated_normal's gradients and jvps in its bounds equal MLX's
 * mx.grad / mx.jvp of its composition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixtures/random_vmap_cases.h"
#include "graph/primitive.h"
#include "mlx/c/mlx.h"
#include "test_util.h"

#define S() tu_stream()

static const rv_case *case_named(const char *name)
{
    for (size_t i = 0; i < sizeof rv_cases / sizeof rv_cases[0]; i++)
        if (strcmp(rv_cases[i].name, name) == 0)
            return &rv_cases[i];
    fail_msg("no fixture %s", name);
    return NULL;
}

/* got's dtype, shape and bytes equal the fixture's. */
static void expect_fixture(mlx_array got, const char *name)
{
    const rv_case *c = case_named(name);
    assert_int_equal(mlx_array_eval(got), 0);
    mlx_array row = mlx_array_new();
    assert_int_equal(mlx_contiguous(&row, got, false, S()), 0);
    assert_int_equal(mlx_array_eval(row), 0);
    if (!tu_shape_is(row, c->ndim, c->shape))
        fail_msg("%s: shape differs from MLX's", name);
    if (mlx_array_nbytes(row) != c->nbytes)
        fail_msg("%s: %zu bytes, MLX %zu", name, mlx_array_nbytes(row), c->nbytes);
    /* the bytes of any dtype, through a view */
    mlx_array v = mlx_array_new();
    assert_int_equal(mlx_view(&v, row, MLX_UINT8, S()), 0);
    assert_int_equal(mlx_array_eval(v), 0);
    const unsigned char *b = mlx_array_data_uint8(v);
    for (size_t i = 0; i < c->nbytes; i++)
        if (b[i] != rv_bytes[c->off + i])
            fail_msg("%s: byte %zu is 0x%02x, MLX's 0x%02x", name, i, b[i], rv_bytes[c->off + i]);
    mlx_array_free(v);
    mlx_array_free(row);
}

/* got equals the float32 fixture within a relative tolerance. */
static void expect_fixture_close(mlx_array got, const char *name, double tol)
{
    const rv_case *c = case_named(name);
    assert_int_equal(mlx_array_eval(got), 0);
    assert_int_equal((int)mlx_array_size(got) * 4, (int)c->nbytes);
    for (size_t i = 0; i < c->nbytes / 4; i++) {
        float want;
        memcpy(&want, rv_bytes + c->off + 4 * i, 4);
        double g = tu_get(got, i);
        if (fabs(g - want) > tol * (1 + fabs(want)))
            fail_msg("%s[%zu]: %.8g, MLX %.8g", name, i, g, (double)want);
    }
}

/* ---- vmap as a binding builds it from the two halves ---- */

static mlx_array vmap_of(mlx_closure f, const mlx_array *in, size_t n, const int *in_axes, int out_axis)
{
    mlx_vector_array args = mlx_vector_array_new_data(in, n), outs = mlx_vector_array_new();
    mlx_vector_array s_in = mlx_vector_array_new(), s_out = mlx_vector_array_new();
    int rc = mlx_detail_vmap_trace(&s_in, &s_out, f, args, in_axes, n) ||
             mlx_detail_vmap_replace(&outs, args, s_in, s_out, in_axes, n, &out_axis, 1);
    if (rc)
        fail_msg("vmap failed: %s", tu_last_error());
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&r, outs, 0), 0);
    mlx_vector_array_free(args), mlx_vector_array_free(outs);
    mlx_vector_array_free(s_in), mlx_vector_array_free(s_out);
    return r;
}

/* The number of distinct random nodes (RandomBits, RandomDist,
 * RandomPermutation) in the graph below a, down to the arrays of stop
 * (the vmapped inputs: the keys' own graph is not counted). */
static int random_nodes(mlx_array a, const mlx_array *stop, size_t nstop)
{
    enum { CAP = 1024 };
    mc_array *stack[CAP], *seen[CAP];
    int top = 0, nseen = 0, count = 0;
    stack[top++] = a.ctx;
    while (top) {
        mc_array *n = stack[--top];
        bool dup = false;
        for (int i = 0; i < nseen && !dup; i++)
            dup = seen[i] == n;
        for (size_t i = 0; i < nstop && !dup; i++)
            dup = stop[i].ctx == (void *)n;
        if (dup)
            continue;
        assert_true(nseen < CAP);
        seen[nseen++] = n;
        count += n->prim == MC_PRIM_RANDOM_BITS || n->prim == MC_PRIM_RANDOM_DIST ||
                 n->prim == MC_PRIM_RANDOM_PERMUTATION;
        for (int i = 0; i < n->n_inputs && top < CAP; i++)
            stack[top++] = n->inputs[i];
    }
    return count;
}

/* A draw of the function under test from its inputs (in[0]: the key for
 * most). */
typedef int (*draw_fn)(mlx_array *out, const mlx_array *in);

static int run_draw(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    draw_fn f = *(draw_fn *)payload;
    mlx_array a[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()}, out = mlx_array_new();
    size_t n = mlx_vector_array_size(in);
    int rc = 0;
    for (size_t i = 0; i < n && i < 3 && !rc; i++)
        rc = mlx_vector_array_get(&a[i], in, i);
    rc = rc || f(&out, a) || mlx_vector_array_set_value(res, out);
    tu_free_n(a, 3);
    mlx_array_free(out);
    return rc;
}

static mlx_array f32_scalar(float v) { return mlx_array_new_float32(v); }

static int d_split(mlx_array *o, const mlx_array *k) { return mlx_random_split_num(o, k[0], 3, S()); }

static int d_uniform(mlx_array *o, const mlx_array *k)
{
    mlx_array lo = f32_scalar(-2.0f), hi = f32_scalar(3.0f);
    int rc = mlx_random_uniform(o, lo, hi, (const int[]){2, 3}, 2, MLX_FLOAT32, k[0], S());
    TU_FREE(lo, hi);
    return rc;
}

static int d_uniform_f16(mlx_array *o, const mlx_array *k)
{
    mlx_array lo = f32_scalar(0), hi = f32_scalar(1);
    int rc = mlx_random_uniform(o, lo, hi, (const int[]){5}, 1, MLX_FLOAT16, k[0], S());
    TU_FREE(lo, hi);
    return rc;
}

static int d_uniform4(mlx_array *o, const mlx_array *k)
{
    mlx_array lo = f32_scalar(0), hi = f32_scalar(1);
    int rc = mlx_random_uniform(o, lo, hi, (const int[]){4}, 1, MLX_FLOAT32, k[0], S());
    TU_FREE(lo, hi);
    return rc;
}

static int d_normal(mlx_array *o, const mlx_array *k)
{
    return mlx_random_normal(o, (const int[]){4}, 1, MLX_FLOAT32, 0, 1, k[0], S());
}

static int d_normal_loc_scale(mlx_array *o, const mlx_array *k)
{
    return mlx_random_normal(o, (const int[]){2, 2}, 2, MLX_FLOAT32, 1.5f, 0.25f, k[0], S());
}

static int d_randint(mlx_array *o, const mlx_array *k)
{
    mlx_array lo = mlx_array_new_int(0), hi = mlx_array_new_int(10);
    int rc = mlx_random_randint(o, lo, hi, (const int[]){6}, 1, MLX_INT32, k[0], S());
    TU_FREE(lo, hi);
    return rc;
}

static int d_bernoulli(mlx_array *o, const mlx_array *k)
{
    mlx_array p = f32_scalar(0.3f);
    int rc = mlx_random_bernoulli(o, p, (const int[]){7}, 1, k[0], S());
    mlx_array_free(p);
    return rc;
}

static const float logits[] = {0, 1, 2, 0.5f, -1, 3, 0, 0, 1, 1};

static int d_categorical(mlx_array *o, const mlx_array *k)
{
    mlx_array l = tu_f32(logits, (const int[]){2, 5}, 2);
    int rc = mlx_random_categorical(o, l, -1, k[0], S());
    mlx_array_free(l);
    return rc;
}

static int d_categorical_samples(mlx_array *o, const mlx_array *k)
{
    mlx_array l = tu_f32(logits, (const int[]){5}, 1);
    int rc = mlx_random_categorical_num_samples(o, l, -1, 4, k[0], S());
    mlx_array_free(l);
    return rc;
}

static int d_permutation(mlx_array *o, const mlx_array *k)
{
    return mlx_random_permutation_arange(o, 6, k[0], S());
}

static int d_permutation_x(mlx_array *o, const mlx_array *k)
{
    const float v[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    mlx_array x = tu_f32(v, (const int[]){5, 2}, 2);
    int rc = mlx_random_permutation(o, x, 0, k[0], S());
    mlx_array_free(x);
    return rc;
}

static int d_truncated(mlx_array *o, const mlx_array *k)
{
    mlx_array lo = f32_scalar(-1), hi = f32_scalar(2);
    int rc = mlx_random_truncated_normal(o, lo, hi, (const int[]){5}, 1, MLX_FLOAT32, k[0], S());
    TU_FREE(lo, hi);
    return rc;
}

static int d_gumbel(mlx_array *o, const mlx_array *k)
{
    return mlx_random_gumbel(o, (const int[]){3}, 1, MLX_FLOAT32, k[0], S());
}

static int d_laplace(mlx_array *o, const mlx_array *k)
{
    return mlx_random_laplace(o, (const int[]){4}, 1, MLX_FLOAT32, 0, 1, k[0], S());
}

static int d_split_then_normal(mlx_array *o, const mlx_array *k)
{
    mlx_array a = mlx_array_new(), b = mlx_array_new();
    int rc = mlx_random_split(&a, &b, k[0], S()) ||
             mlx_random_normal(o, (const int[]){3}, 1, MLX_FLOAT32, 0, 1, b, S());
    TU_FREE(a, b);
    return rc;
}

static mlx_array key_of(uint64_t seed)
{
    mlx_array k = mlx_array_new();
    assert_int_equal(mlx_random_key(&k, seed), 0);
    return k;
}

/* one key (key(1)) inside, the parameter batched */
static int d_uniform_low(mlx_array *o, const mlx_array *in)
{
    mlx_array k = key_of(1), hi = f32_scalar(1);
    int rc = mlx_random_uniform(o, in[0], hi, (const int[]){3}, 1, MLX_FLOAT32, k, S());
    TU_FREE(k, hi);
    return rc;
}

static int d_normal_loc(mlx_array *o, const mlx_array *in)
{
    mlx_array k = key_of(1);
    int rc = mlx_random_normal_broadcast(o, (const int[]){3}, 1, MLX_FLOAT32, in[0], mlx_array_new(), k, S());
    mlx_array_free(k);
    return rc;
}

static int d_truncated_bounds(mlx_array *o, const mlx_array *in)
{
    return mlx_random_truncated_normal(o, in[1], in[2], (const int[]){2}, 1, MLX_FLOAT32, in[0], S());
}

static int d_normal2(mlx_array *o, const mlx_array *k)
{
    return mlx_random_normal(o, (const int[]){2}, 1, MLX_FLOAT32, 0, 1, k[0], S());
}

static int d_uniform2(mlx_array *o, const mlx_array *k)
{
    mlx_array lo = f32_scalar(0), hi = f32_scalar(1);
    int rc = mlx_random_uniform(o, lo, hi, (const int[]){2}, 1, MLX_FLOAT32, k[0], S());
    TU_FREE(lo, hi);
    return rc;
}

static mlx_array keys3(void)
{
    mlx_array k = key_of(7), ks = mlx_array_new();
    assert_int_equal(mlx_random_split_num(&ks, k, 3, S()), 0);
    mlx_array_free(k);
    return ks;
}

/* vmap of draw over in (in_axes), checked against the fixture; the
 * batched graph holds `nodes` random nodes, as many as one draw. */
static void check(const char *name, draw_fn d, const mlx_array *in, size_t n, const int *axes, int out_axis,
                  int nodes)
{
    mlx_closure f = mlx_closure_new_func_payload(run_draw, (void *)&d, NULL);
    mlx_array got = vmap_of(f, in, n, axes, out_axis);
    int count = random_nodes(got, in, n);
    if (count != nodes)
        fail_msg("%s: the batched graph holds %d random nodes, one draw %d", name, count, nodes);
    expect_fixture(got, name);
    mlx_array_free(got);
    mlx_closure_free(f);
}

static void test_vmap_over_keys_equals_mlx_in_one_node(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        draw_fn d;
        int nodes;
    } cases[] = {
        {"split", d_split, 1},
        {"uniform", d_uniform, 1},
        {"uniform_f16", d_uniform_f16, 1},
        {"normal", d_normal, 1},
        {"normal_loc_scale", d_normal_loc_scale, 1},
        {"randint", d_randint, 1},
        {"bernoulli", d_bernoulli, 1},
        {"categorical", d_categorical, 1},
        {"categorical_samples", d_categorical_samples, 1},
        {"permutation", d_permutation, 1},
        {"permutation_x", d_permutation_x, 1},
        {"truncated_normal", d_truncated, 1},
        {"gumbel", d_gumbel, 1},
        {"laplace", d_laplace, 1},
        {"split_then_normal", d_split_then_normal, 2},
    };
    mlx_array ks = keys3();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(cases[i].name, cases[i].d, &ks, 1, (const int[]){0}, 0, cases[i].nodes);
    mlx_array_free(ks);
}

static void test_vmap_keys_on_axis_1_and_out_axis_1_equal_mlx(void **state)
{
    (void)state;
    mlx_array ks = keys3(), kt = mlx_array_new();
    assert_int_equal(mlx_transpose(&kt, ks, S()), 0);
    check("uniform_keys_axis1", d_uniform4, &kt, 1, (const int[]){1}, 0, 1);
    check("uniform_out_axis1", d_uniform4, &ks, 1, (const int[]){0}, 1, 1);
    TU_FREE(ks, kt);
}

static void test_one_key_with_batched_parameters_equals_mlx(void **state)
{
    (void)state;
    const float lows[] = {0, 0.5f, 0.9f}, ups[] = {1, 2, 0.5f}, neg[] = {-1, -1.5f, -1.9f};
    mlx_array lo = tu_f32(lows, (const int[]){3}, 1);
    check("uniform_batched_low", d_uniform_low, &lo, 1, (const int[]){0}, 0, 1);
    check("normal_batched_loc", d_normal_loc, &lo, 1, (const int[]){0}, 0, 1);
    mlx_array in[3] = {keys3(), tu_f32(neg, (const int[]){3}, 1), tu_f32(ups, (const int[]){3}, 1)};
    check("truncated_batched_bounds", d_truncated_bounds, in, 3, (const int[]){0, 0, 0}, 0, 1);
    tu_free_n(in, 3);
    mlx_array_free(lo);
}

/* vmap(draw) inside, so the outer vmap batches an inner one. */
static int run_inner_vmap(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    draw_fn d = *(draw_fn *)payload;
    mlx_closure f = mlx_closure_new_func_payload(run_draw, (void *)&d, NULL);
    mlx_array k = mlx_array_new();
    int rc = mlx_vector_array_get(&k, in, 0);
    mlx_vector_array args = mlx_vector_array_new_data(&k, 1), outs = mlx_vector_array_new();
    mlx_vector_array s_in = mlx_vector_array_new(), s_out = mlx_vector_array_new();
    int zero = 0;
    rc = rc || mlx_detail_vmap_trace(&s_in, &s_out, f, args, &zero, 1) ||
         mlx_detail_vmap_replace(&outs, args, s_in, s_out, &zero, 1, &zero, 1) || mlx_vector_array_set(res, outs);
    mlx_vector_array_free(args), mlx_vector_array_free(outs);
    mlx_vector_array_free(s_in), mlx_vector_array_free(s_out);
    mlx_array_free(k);
    mlx_closure_free(f);
    return rc;
}

static void test_nested_vmap_over_a_grid_of_keys_equals_mlx(void **state)
{
    (void)state;
    mlx_array k = key_of(9), kk = mlx_array_new();
    assert_int_equal(mlx_random_split_num(&kk, k, 6, S()), 0);
    assert_int_equal(mlx_reshape(&kk, kk, (const int[]){2, 3, 2}, 3, S()), 0);
    struct {
        const char *name;
        draw_fn d;
        int axis;
    } cases[] = {{"nested", d_normal2, 0}, {"nested_inner_axis1", d_uniform2, 1}};
    for (int i = 0; i < 2; i++) {
        mlx_closure f = mlx_closure_new_func_payload(run_inner_vmap, (void *)&cases[i].d, NULL);
        mlx_array got = vmap_of(f, &kk, 1, &cases[i].axis, 0);
        assert_int_equal(random_nodes(got, &kk, 1), 1);
        expect_fixture(got, cases[i].name);
        mlx_array_free(got);
        mlx_closure_free(f);
    }
    TU_FREE(k, kk);
}

/* Bits of width 1 and 2 (MLX's Python has no bits): each key's block of
 * the batched node equals that key's own draw, which test_random checks
 * against MLX. */
static int d_bits1(mlx_array *o, const mlx_array *k)
{
    return mlx_random_bits(o, (const int[]){3, 3}, 2, 1, k[0], S());
}
static int d_bits2(mlx_array *o, const mlx_array *k)
{
    return mlx_random_bits(o, (const int[]){5}, 1, 2, k[0], S());
}

static void test_vmapped_bits_of_every_width_are_each_keys_own_bits(void **state)
{
    (void)state;
    draw_fn fns[] = {d_bits1, d_bits2, d_split};
    mlx_array ks = keys3();
    for (int w = 0; w < 3; w++) {
        mlx_closure f = mlx_closure_new_func_payload(run_draw, (void *)&fns[w], NULL);
        mlx_array got = vmap_of(f, &ks, 1, (const int[]){0}, 0);
        assert_int_equal(random_nodes(got, &ks, 1), 1);
        assert_int_equal(mlx_array_eval(got), 0);
        for (int b = 0; b < 3; b++) {
            mlx_array kb = mlx_array_new(), idx = mlx_array_new_int(b), one = mlx_array_new();
            mlx_array part = mlx_array_new(), same = mlx_array_new();
            assert_int_equal(mlx_take_axis(&kb, ks, idx, 0, S()), 0);
            assert_int_equal(mlx_take_axis(&part, got, idx, 0, S()), 0);
            assert_int_equal(fns[w](&one, &kb), 0);
            assert_int_equal(mlx_array_equal(&same, part, one, false, S()), 0);
            bool eq = false;
            assert_int_equal(mlx_array_item_bool(&eq, same), 0);
            if (!eq || mlx_array_dtype(part) != mlx_array_dtype(one))
                fail_msg("draw %d, key %d: the batched bits differ from the key's own", w, b);
            TU_FREE(kb, idx, one, part, same);
        }
        mlx_array_free(got);
        mlx_closure_free(f);
    }
    mlx_array_free(ks);
}

/* ---- truncated_normal's derivatives in its bounds ---- */

/* truncated_normal(lower, upper, (4,), key(1)) */
static int tn_fun(mlx_vector_array *res, const mlx_vector_array in)
{
    /* no asserts here: the fault sweep runs it with allocations failing */
    mlx_array lo = mlx_array_new(), hi = mlx_array_new(), k = mlx_array_new(), out = mlx_array_new();
    int rc = mlx_random_key(&k, 1) || mlx_vector_array_get(&lo, in, 0) || mlx_vector_array_get(&hi, in, 1) ||
             mlx_random_truncated_normal(&out, lo, hi, (const int[]){4}, 1, MLX_FLOAT32, k, S()) ||
             mlx_vector_array_set_value(res, out);
    TU_FREE(lo, hi, k, out);
    return rc;
}

/* The vjps of tn_fun at (lo, hi) for cotangent cot, stacked (2, ...). */
static mlx_array tn_vjp(mlx_array lo, mlx_array hi, mlx_array cot)
{
    mlx_closure f = mlx_closure_new_func(tn_fun);
    mlx_array prim[2] = {lo, hi};
    mlx_vector_array p = mlx_vector_array_new_data(prim, 2), c = mlx_vector_array_new_data(&cot, 1);
    mlx_vector_array outs = mlx_vector_array_new(), vjps = mlx_vector_array_new();
    if (mlx_vjp(&outs, &vjps, f, p, c))
        fail_msg("vjp of truncated_normal failed: %s", tu_last_error());
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_stack(&r, vjps, S()), 0);
    mlx_vector_array_free(p), mlx_vector_array_free(c), mlx_vector_array_free(outs), mlx_vector_array_free(vjps);
    mlx_closure_free(f);
    return r;
}

static void test_truncated_normal_gradients_in_its_bounds_equal_mlx(void **state)
{
    (void)state;
    static const struct {
        float lo, hi;
        const char *name;
    } cases[] = {
        {-1, 2, "tn_grad_-1.0_2.0"},
        {-0.5f, 0.25f, "tn_grad_-0.5_0.25"},
        {-3, -1, "tn_grad_-3.0_-1.0"},
        {0.3f, 3, "tn_grad_0.3_3.0"},
    };
    const float ones[] = {1, 1, 1, 1};
    mlx_array cot = tu_f32(ones, (const int[]){4}, 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mlx_array lo = f32_scalar(cases[i].lo), hi = f32_scalar(cases[i].hi);
        mlx_array g = tn_vjp(lo, hi, cot);
        expect_fixture_close(g, cases[i].name, 2e-5);
        TU_FREE(lo, hi, g);
    }
    /* per-element bounds, a weighted sum */
    const float lov[] = {-1, -2, 0, -0.5f}, hiv[] = {1, 0.5f, 2, 0}, w[] = {1, 2, 3, 4};
    mlx_array lo = tu_f32(lov, (const int[]){4}, 1), hi = tu_f32(hiv, (const int[]){4}, 1);
    mlx_array wc = tu_f32(w, (const int[]){4}, 1), g = tn_vjp(lo, hi, wc);
    expect_fixture_close(g, "tn_grad_vec", 2e-5);
    TU_FREE(lo, hi, wc, g, cot);
}

static void test_truncated_normal_jvp_in_its_bounds_equals_mlx(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(tn_fun);
    mlx_array prim[2] = {f32_scalar(-1), f32_scalar(2)};
    for (int i = 0; i < 2; i++) {
        mlx_array tan[2] = {f32_scalar(i == 0), f32_scalar(i == 1)};
        mlx_vector_array p = mlx_vector_array_new_data(prim, 2), t = mlx_vector_array_new_data(tan, 2);
        mlx_vector_array outs = mlx_vector_array_new(), jvps = mlx_vector_array_new();
        if (mlx_jvp(&outs, &jvps, f, p, t))
            fail_msg("jvp of truncated_normal failed: %s", tu_last_error());
        mlx_array j = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&j, jvps, 0), 0);
        expect_fixture_close(j, i == 0 ? "tn_jvp_0" : "tn_jvp_1", 2e-5);
        mlx_array_free(j);
        tu_free_n(tan, 2);
        mlx_vector_array_free(p), mlx_vector_array_free(t), mlx_vector_array_free(outs),
            mlx_vector_array_free(jvps);
    }
    tu_free_n(prim, 2);
    mlx_closure_free(f);
}

/* ---- multivariate_normal's derivatives ---- */

static const float mvn_mean[] = {0, 1}, mvn_cov[] = {2, 0.5f, 0.5f, 1};

/* multivariate_normal(mean, cov, (3,), key(1)) of the one input named by
 * the payload (0: the mean, 1: the cov), the other fixed. */
static int mvn_fun(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    int which = *(const int *)payload;
    mlx_array m = tu_f32(mvn_mean, (const int[]){2}, 1), c = tu_f32(mvn_cov, (const int[]){2, 2}, 2);
    mlx_array k = key_of(1), out = mlx_array_new();
    int rc = mlx_vector_array_get(which == 0 ? &m : &c, in, 0) ||
             mlx_random_multivariate_normal(&out, m, c, (const int[]){3}, 1, MLX_FLOAT32, k, S()) ||
             mlx_vector_array_set_value(res, out);
    TU_FREE(m, c, k, out);
    return rc;
}

static void test_multivariate_normal_differentiates_in_the_mean_as_mlx(void **state)
{
    (void)state;
    const float w[] = {1, 2, 3, 4, 5, 6};
    static const int mean_arg = 0, cov_arg = 1;
    mlx_closure fm = mlx_closure_new_func_payload(mvn_fun, (void *)&mean_arg, NULL);
    mlx_closure fc = mlx_closure_new_func_payload(mvn_fun, (void *)&cov_arg, NULL);
    mlx_array mean = tu_f32(mvn_mean, (const int[]){2}, 1), cov = tu_f32(mvn_cov, (const int[]){2, 2}, 2);
    mlx_array cot = tu_f32(w, (const int[]){3, 2}, 2), g = mlx_array_new();
    mlx_vector_array c = mlx_vector_array_new_data(&cot, 1), pm = mlx_vector_array_new_data(&mean, 1);
    mlx_vector_array pc = mlx_vector_array_new_data(&cov, 1);
    mlx_vector_array outs = mlx_vector_array_new(), vjps = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&outs, &vjps, fm, pm, c), 0);
    assert_int_equal(mlx_vector_array_get(&g, vjps, 0), 0);
    expect_fixture_close(g, "mvn_grad_mean", 1e-6);
    /* the cov's goes through SVD, which MLX 0.31.1 cannot differentiate */
    assert_int_not_equal(mlx_vjp(&outs, &vjps, fc, pc, c), 0);
    tu_expect_error("[Primitive::vjp] Not implemented for SVD.");
    assert_int_not_equal(mlx_jvp(&outs, &vjps, fc, pc, pc), 0);
    tu_expect_error("[Primitive::jvp] Not implemented for SVD.");
    TU_FREE(g, cot, mean, cov);
    mlx_vector_array_free(pm), mlx_vector_array_free(pc), mlx_vector_array_free(c);
    mlx_vector_array_free(outs), mlx_vector_array_free(vjps);
    mlx_closure_free(fm), mlx_closure_free(fc);
}

#ifdef MC_FAULT_INJECTION
#include "runtime/alloc.h"

/* One vmapped call, its handles made before the hook is armed, so a
 * failure is the transform's or the primitives' own. */
typedef struct vcall {
    draw_fn d;
    mlx_closure f;
    mlx_vector_array args, outs, s_in, s_out;
    const int *axes;
    size_t n;
} vcall;

static void vcall_init(vcall *v, draw_fn d, const mlx_array *in, size_t n, const int *axes)
{
    v->d = d;
    v->f = mlx_closure_new_func_payload(run_draw, (void *)&v->d, NULL);
    v->args = mlx_vector_array_new_data(in, n);
    v->outs = mlx_vector_array_new(), v->s_in = mlx_vector_array_new(), v->s_out = mlx_vector_array_new();
    v->axes = axes, v->n = n;
}

static void vcall_free(vcall *v)
{
    mlx_closure_free(v->f);
    mlx_vector_array_free(v->args), mlx_vector_array_free(v->outs);
    mlx_vector_array_free(v->s_in), mlx_vector_array_free(v->s_out);
}

/* vmap(draw)(in) evaluated: the status; the outputs are dropped after. */
static int vcall_run(vcall *v, mlx_array *r)
{
    int zero = 0;
    int rc = mlx_detail_vmap_trace(&v->s_in, &v->s_out, v->f, v->args, v->axes, v->n) ||
             mlx_detail_vmap_replace(&v->outs, v->args, v->s_in, v->s_out, v->axes, v->n, &zero, 1) ||
             mlx_vector_array_get(r, v->outs, 0) || mlx_array_eval(*r);
    return rc;
}

/* Drops what a run left in the call's vectors (with the hook disarmed). */
static void vcall_empty(vcall *v)
{
    mlx_vector_array *vs[3] = {&v->outs, &v->s_in, &v->s_out};
    for (int i = 0; i < 3; i++)
        assert_int_equal(mlx_vector_array_set_data(vs[i], NULL, 0), 0);
}

/* The batched draws and a truncated_normal vjp, with the Nth allocation
 * failing for each N: one message or none, no array data left behind. */
static void test_batched_draws_fail_cleanly_at_every_allocation(void **state)
{
    (void)state;
    const float neg[] = {-1, -1.5f, -1.9f}, ups[] = {1, 2, 0.5f}, ones[] = {1, 1, 1, 1};
    mlx_array in[3] = {keys3(), tu_f32(neg, (const int[]){3}, 1), tu_f32(ups, (const int[]){3}, 1)};
    mlx_array prim[2] = {f32_scalar(-1), f32_scalar(2)}, cot = tu_f32(ones, (const int[]){4}, 1);
    assert_int_equal(mlx_array_eval(in[0]), 0);
    static const int axes3[3] = {0, 0, 0};
    vcall calls[3];
    vcall_init(&calls[0], d_truncated_bounds, in, 3, axes3);
    vcall_init(&calls[1], d_permutation, in, 1, axes3);
    vcall_init(&calls[2], d_split, in, 1, axes3);
    mlx_closure f = mlx_closure_new_func(tn_fun);
    mlx_vector_array p = mlx_vector_array_new_data(prim, 2), c = mlx_vector_array_new_data(&cot, 1);
    mlx_vector_array outs = mlx_vector_array_new(), vjps = mlx_vector_array_new();
    mlx_array r[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()}, g = mlx_array_new();
    size_t base = 0, now = 0;
    assert_int_equal(mlx_get_active_memory(&base), 0);
    long failed = 0;
    for (long n = 0;; n++) {
        tu_reset_errors();
        mc_fault_fail_after(n);
        int rc = vcall_run(&calls[0], &r[0]) || vcall_run(&calls[1], &r[1]) || vcall_run(&calls[2], &r[2]) ||
                 mlx_vjp(&outs, &vjps, f, p, c) || mlx_vector_array_get(&g, vjps, 0) || mlx_array_eval(g);
        long made = mc_fault_count();
        mc_fault_fail_after(-1);
        tu_free_n(r, 3), mlx_array_free(g);
        r[0] = mlx_array_new(), r[1] = mlx_array_new(), r[2] = mlx_array_new(), g = mlx_array_new();
        for (int i = 0; i < 3; i++)
            vcall_empty(&calls[i]);
        assert_int_equal(mlx_vector_array_set_data(&outs, NULL, 0), 0);
        assert_int_equal(mlx_vector_array_set_data(&vjps, NULL, 0), 0);
        if (rc != 0) {
            if (tu_error_count() != 1)
                fail_msg("allocation %ld failing gave %d messages (last: %s)", n, tu_error_count(),
                         tu_last_error());
            failed++;
        } else if (tu_error_count() != 0) {
            fail_msg("allocation %ld failing: succeeded but reported %s", n, tu_last_error());
        }
        tu_reset_errors();
        assert_int_equal(mlx_get_active_memory(&now), 0);
        if (now != base)
            fail_msg("allocation %ld failing left %zu bytes behind", n, now - base);
        if (rc == 0 && made <= n)
            break;
    }
    assert_true(failed > 10);
    for (int i = 0; i < 3; i++)
        vcall_free(&calls[i]);
    mlx_vector_array_free(p), mlx_vector_array_free(c), mlx_vector_array_free(outs), mlx_vector_array_free(vjps);
    mlx_closure_free(f);
    tu_free_n(r, 3);
    tu_free_n(in, 3);
    tu_free_n(prim, 2);
    TU_FREE(g, cot);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_vmap_over_keys_equals_mlx_in_one_node, tu_test_teardown),
        cmocka_unit_test_teardown(test_vmap_keys_on_axis_1_and_out_axis_1_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_one_key_with_batched_parameters_equals_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_nested_vmap_over_a_grid_of_keys_equals_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_vmapped_bits_of_every_width_are_each_keys_own_bits, tu_test_teardown),
        cmocka_unit_test_teardown(test_truncated_normal_gradients_in_its_bounds_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_truncated_normal_jvp_in_its_bounds_equals_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_multivariate_normal_differentiates_in_the_mean_as_mlx, tu_test_teardown),
#ifdef MC_FAULT_INJECTION
        cmocka_unit_test_teardown(test_batched_draws_fail_cleanly_at_every_allocation, tu_test_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
