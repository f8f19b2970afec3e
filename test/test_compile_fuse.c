/* compile's fusion (mode ENABLED): which chains become one Compiled node
 * (MLX's "unary fused", "binary fused", "gelu", "tape with outside
 * parents" tests, in C), and that the tiled interpreter computes exactly
 * what the unfused graph does on every input layout: contiguous,
 * broadcast along rows (scalar operands), strided (gathered), large
 * (split over the pool), with dtype changes, and shapeless on new shapes. */
#include <math.h>

#include "graph/prims_fused.h"
#include "test_compile_util.h"

static mlx_array arg(const mlx_vector_array in, size_t i)
{
    mlx_array a = mlx_array_new();
    if (mlx_vector_array_get(&a, in, i))
        return mlx_array_new();
    return a;
}

static int ret(mlx_vector_array *res, mlx_array *outs, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= !outs[i].ctx;
    if (!bad)
        *res = mlx_vector_array_new_data(outs, n);
    for (size_t i = 0; i < n; i++)
        mlx_array_free(outs[i]);
    return bad;
}

typedef int (*unop)(mlx_array *, const mlx_array, const mlx_stream);
typedef int (*binop)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);

/* f(a), freeing a. */
static mlx_array u(unop f, mlx_array a)
{
    mlx_array r = mlx_array_new();
    f(&r, a, tc_s);
    mlx_array_free(a);
    return r;
}

/* f(a, b), freeing both. */
static mlx_array b2(binop f, mlx_array a, mlx_array b)
{
    mlx_array r = mlx_array_new();
    f(&r, a, b, tc_s);
    mlx_array_free(a);
    mlx_array_free(b);
    return r;
}

static mlx_array dup(mlx_array a)
{
    mlx_array r = mlx_array_new();
    mlx_array_set(&r, a);
    return r;
}

static mlx_array k32(float v) { return mlx_array_new_float32(v); }

/* A step fusion cannot take (MLX's tests use a reduction here): a
 * reshape of a's values to a column, freeing a. */
static mlx_array barrier(mlx_array a)
{
    mlx_array r = mlx_array_new();
    int shape[2] = {(int)mlx_array_size(a), 1};
    mlx_reshape(&r, a, shape, 2, tc_s);
    mlx_array_free(a);
    return r;
}

static mc_array *node(mlx_array a) { return mc_arr(a); }

/* Byte offset of logical element i of an evaluated array. */
static size_t offset_of(const mc_array *a, size_t i)
{
    int64_t off = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
        off += (int64_t)(i % (size_t)a->shape[d]) * a->strides[d];
        i /= (size_t)a->shape[d];
    }
    return (size_t)off * mc_dtype_size(a->dtype);
}

/* True if two evaluated arrays of one dtype and size hold the same bytes
 * in logical order (whatever their layouts). */
static bool same_values(const mc_array *a, const mc_array *b)
{
    size_t sz = mc_dtype_size(a->dtype);
    for (size_t i = 0; i < a->size; i++)
        if (memcmp((const char *)a->data + offset_of(a, i), (const char *)b->data + offset_of(b, i), sz))
            return false;
    return true;
}

/* Calls f uncompiled and compiled (ENABLED) on the inputs and checks that
 * every output is equal (bitwise) and returns the compiled
 * outputs in outs (the caller frees them). */
static void run_both(mlx_closure f, bool shapeless, const mlx_array *in, size_t n, mlx_array *outs,
                     size_t n_out)
{
    mlx_closure cf = tc_compile(f, shapeless);
    mlx_vector_array args = mlx_vector_array_new_data(in, n);
    mlx_vector_array plain = mlx_vector_array_new(), comp = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&plain, f, args), 0);
    assert_int_equal(mlx_closure_apply(&comp, cf, args), 0);
    assert_int_equal(mlx_vector_array_size(plain), n_out);
    assert_int_equal(mlx_vector_array_size(comp), n_out);
    for (size_t i = 0; i < n_out; i++) {
        mlx_array p = mlx_array_new(), c = mlx_array_new();
        mlx_vector_array_get(&p, plain, i);
        mlx_vector_array_get(&c, comp, i);
        outs[i] = dup(c);
        assert_int_equal(mlx_array_eval(p), 0);
        assert_int_equal(mlx_array_eval(c), 0);
        assert_int_equal(mlx_array_dtype(p), mlx_array_dtype(c));
        assert_int_equal(mlx_array_ndim(p), mlx_array_ndim(c));
        assert_int_equal(mlx_array_size(p), mlx_array_size(c));
        assert_true(same_values(node(p), node(c)));
        TC_FREE_ALL(p, c);
    }
    mlx_vector_array_free(args);
    mlx_vector_array_free(plain);
    mlx_vector_array_free(comp);
    mlx_closure_free(cf);
}

/* Compiles f, applies it to the inputs and returns output 0 unevaluated
 * (for checking the graph's structure). */
static mlx_array structure(mlx_closure f, const mlx_array *in, size_t n)
{
    mlx_closure cf = tc_compile(f, false);
    mlx_array out;
    assert_int_equal(tc_apply(cf, in, n, &out, NULL), 0);
    mlx_closure_free(cf);
    return out;
}

static mlx_array vec(int n, float start)
{
    float v[64];
    assert_true(n <= 64);
    for (int i = 0; i < n; i++)
        v[i] = start + (float)i * 0.75f - (float)(i % 3);
    return tc_vec(v, n);
}

/* ---- MLX: unary fused ---- */

static int unary_0(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = u(mlx_abs, arg(in, 0));
    return ret(res, &o, 1);
}

static int unary_1(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = u(mlx_abs, u(mlx_negative, u(mlx_square, arg(in, 0))));
    return ret(res, &o, 1);
}

static int unary_2(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = barrier(u(mlx_abs, u(mlx_negative, u(mlx_square, arg(in, 0)))));
    return ret(res, &o, 1);
}

static int unary_3(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = u(mlx_square, u(mlx_abs, u(mlx_negative, barrier(arg(in, 0)))));
    return ret(res, &o, 1);
}

/* A lone step stays itself; a chain becomes one node over the input; a
 * chain into a step that cannot be fused (or out of one) is fused up to
 * that step. */
static void test_unary_chains_fuse(void **state)
{
    (void)state;
    mlx_array x = vec(4, -2);
    mlx_closure f;
    mlx_array out;

    f = mlx_closure_new_func(unary_0);
    out = structure(f, &x, 1);
    assert_int_equal(node(out)->prim, MC_PRIM_UNARY);
    assert_ptr_equal(node(out)->inputs[0], node(x));
    mlx_array_free(out);
    mlx_closure_free(f);

    f = mlx_closure_new_func(unary_1);
    out = structure(f, &x, 1);
    assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
    assert_int_equal(node(out)->n_inputs, 1);
    assert_ptr_equal(node(out)->inputs[0], node(x));
    mlx_array_free(out);
    run_both(f, false, &x, 1, &out, 1);
    mlx_array_free(out);
    mlx_closure_free(f);

    f = mlx_closure_new_func(unary_2);
    out = structure(f, &x, 1);
    assert_int_equal(node(out)->prim, MC_PRIM_RESHAPE);
    assert_int_equal(node(out)->inputs[0]->prim, MC_PRIM_FUSED);
    assert_ptr_equal(node(out)->inputs[0]->inputs[0], node(x));
    mlx_array_free(out);
    run_both(f, false, &x, 1, &out, 1);
    mlx_array_free(out);
    mlx_closure_free(f);

    f = mlx_closure_new_func(unary_3);
    out = structure(f, &x, 1);
    assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
    assert_int_equal(node(out)->n_inputs, 1);
    assert_int_equal(node(out)->inputs[0]->prim, MC_PRIM_RESHAPE);
    assert_ptr_equal(node(out)->inputs[0]->inputs[0], node(x));
    mlx_array_free(out);
    run_both(f, false, &x, 1, &out, 1);
    mlx_array_free(out);
    mlx_closure_free(f);
    mlx_array_free(x);
}

/* ---- MLX: binary fused ---- */

static int binary_0(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = b2(mlx_add, arg(in, 0), arg(in, 1));
    return ret(res, &o, 1);
}

static int binary_1(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = u(mlx_abs, b2(mlx_add, arg(in, 0), arg(in, 1)));
    return ret(res, &o, 1);
}

static int binary_2(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = b2(mlx_add, b2(mlx_add, arg(in, 0), arg(in, 1)), arg(in, 0));
    return ret(res, &o, 1);
}

static int binary_3(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array o = barrier(u(mlx_abs, b2(mlx_add, arg(in, 0), arg(in, 1))));
    return ret(res, &o, 1);
}

static void test_binary_chains_fuse(void **state)
{
    (void)state;
    mlx_array in[2] = {vec(5, -3), vec(5, 1)};
    mlx_closure f;
    mlx_array out;

    f = mlx_closure_new_func(binary_0);
    out = structure(f, in, 2);
    assert_int_equal(node(out)->prim, MC_PRIM_BINARY);
    mlx_array_free(out);
    mlx_closure_free(f);

    int (*fused[2])(mlx_vector_array *, const mlx_vector_array) = {binary_1, binary_2};
    for (int i = 0; i < 2; i++) {
        f = mlx_closure_new_func(fused[i]);
        out = structure(f, in, 2);
        assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
        assert_int_equal(node(out)->n_inputs, 2);
        assert_ptr_equal(node(out)->inputs[0], node(in[0]));
        assert_ptr_equal(node(out)->inputs[1], node(in[1]));
        mlx_array_free(out);
        run_both(f, false, in, 2, &out, 1);
        mlx_array_free(out);
        mlx_closure_free(f);
    }

    f = mlx_closure_new_func(binary_3);
    out = structure(f, in, 2);
    assert_int_equal(node(out)->prim, MC_PRIM_RESHAPE);
    mc_array *c = node(out)->inputs[0];
    assert_int_equal(c->prim, MC_PRIM_FUSED);
    assert_ptr_equal(c->inputs[0], node(in[0]));
    assert_ptr_equal(c->inputs[1], node(in[1]));
    mlx_array_free(out);
    run_both(f, false, in, 2, &out, 1);
    mlx_array_free(out);
    mlx_closure_free(f);
    TC_FREE_ALL(in[0], in[1]);
}

/* MLX "gelu", with abs for erf (not available yet): x * (1 + |x / s|) / 2
 * fuses into one node whose four inputs are x and three constants. */
static int gelu_like(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    mlx_array t = u(mlx_abs, b2(mlx_divide, dup(x), k32((float)M_SQRT2)));
    mlx_array o = b2(mlx_divide, b2(mlx_multiply, x, b2(mlx_add, k32(1), t)), k32(2));
    return ret(res, &o, 1);
}

static void test_gelu_like_fuses_into_one_node(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(gelu_like);
    for (int n = 1; n <= 2; n++) {
        mlx_array x = vec(n, 0.5f);
        mlx_array out = structure(f, &x, 1);
        assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
        assert_int_equal(node(out)->n_inputs, 4);
        for (int i = 0; i < 4; i++)
            assert_int_equal(node(out)->inputs[i]->n_inputs, 0);
        mlx_array_free(out);
        run_both(f, false, &x, 1, &out, 1);
        TC_FREE_ALL(out, x);
    }
    mlx_closure_free(f);
}

/* ---- MLX: tape with outside parents ---- */

static int two_outputs(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = u(mlx_negative, arg(in, 0));
    mlx_array o[2] = {u(mlx_abs, dup(x)), barrier(x)};
    return ret(res, o, 2);
}

static int uncompilable_inputs(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    mlx_array o[2] = {b2(mlx_divide, dup(x), u(mlx_abs, u(mlx_negative, arg(in, 1)))), barrier(x)};
    return ret(res, o, 2);
}

/* A value also needed outside the chain (or returned) is not folded. */
static void test_values_used_outside_stay_nodes(void **state)
{
    (void)state;
    mlx_array in[2] = {vec(3, 2), vec(3, 0.5f)};
    mlx_array outs[2];
    mlx_closure f = mlx_closure_new_func(two_outputs);
    mlx_closure cf = tc_compile(f, false);
    mlx_vector_array args = mlx_vector_array_new_data(in, 1), res = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&res, cf, args), 0);
    mlx_array o0 = mlx_array_new(), o1 = mlx_array_new();
    mlx_vector_array_get(&o0, res, 0);
    mlx_vector_array_get(&o1, res, 1);
    assert_int_equal(node(o0)->prim, MC_PRIM_UNARY);
    assert_int_equal(node(o1)->prim, MC_PRIM_RESHAPE);
    assert_ptr_equal(node(o0)->inputs[0], node(o1)->inputs[0]);
    TC_FREE_ALL(o0, o1);
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
    mlx_closure_free(cf);
    run_both(f, false, in, 1, outs, 2);
    TC_FREE_ALL(outs[0], outs[1]);
    mlx_closure_free(f);

    f = mlx_closure_new_func(uncompilable_inputs);
    cf = tc_compile(f, false);
    args = mlx_vector_array_new_data(in, 2);
    res = mlx_vector_array_new();
    assert_int_equal(mlx_closure_apply(&res, cf, args), 0);
    o0 = mlx_array_new();
    o1 = mlx_array_new();
    mlx_vector_array_get(&o0, res, 0);
    mlx_vector_array_get(&o1, res, 1);
    assert_int_equal(node(o0)->prim, MC_PRIM_FUSED);
    assert_int_equal(node(o0)->n_inputs, 2);
    assert_int_equal(node(o1)->prim, MC_PRIM_RESHAPE);
    TC_FREE_ALL(o0, o1);
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
    mlx_closure_free(cf);
    run_both(f, false, in, 2, outs, 2);
    TC_FREE_ALL(outs[0], outs[1]);
    mlx_closure_free(f);
    TC_FREE_ALL(in[0], in[1]);
}

/* ---- layouts ---- */

static int mix(mlx_vector_array *res, const mlx_vector_array in)
{
    /* |a * b + a| - b, with a floor to make the steps different */
    mlx_array a = arg(in, 0), b = arg(in, 1);
    mlx_array t = b2(mlx_add, b2(mlx_multiply, dup(a), dup(b)), a);
    mlx_array o = b2(mlx_subtract, u(mlx_floor, u(mlx_abs, t)), b);
    return ret(res, &o, 1);
}

/* Broadcast operands (constant along the row: the scalar kernel classes),
 * transposed ones (gathered), and both at once, against the unfused
 * graph. */
static void test_fused_layouts_match_unfused(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(mix);
    float va[12], vb[12];
    for (int i = 0; i < 12; i++) {
        va[i] = (float)i * 0.5f - 2.75f;
        vb[i] = 3.25f - (float)i * 0.25f;
    }
    mlx_array col = mlx_array_new_data(va, (const int[]){3, 1}, 2, MLX_FLOAT32);
    mlx_array row = mlx_array_new_data(vb, (const int[]){1, 4}, 2, MLX_FLOAT32);
    mlx_array m34 = mlx_array_new_data(va, (const int[]){3, 4}, 2, MLX_FLOAT32);
    mlx_array m43 = mlx_array_new_data(vb, (const int[]){4, 3}, 2, MLX_FLOAT32);
    mlx_array t34 = mlx_array_new();
    assert_int_equal(mlx_transpose(&t34, m43, tc_s), 0);
    mlx_array s = k32(1.5f);
    mlx_array cases[][2] = {
        {col, row}, {m34, col}, {row, m34}, {t34, m34}, {t34, col}, {s, t34}, {m34, s},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mlx_array out;
        run_both(f, false, cases[i], 2, &out, 1);
        assert_int_equal(mlx_array_size(out), 12);
        mlx_array_free(out);
    }
    TC_FREE_ALL(col, row, m34, m43, t34, s);
    mlx_closure_free(f);
}

/* A large input is split over the pool; the result is the same. */
static void test_large_fused_input_matches_unfused(void **state)
{
    (void)state;
    enum { N = 300001 };
    float *v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < N; i++)
        v[i] = (float)(i % 1000) * 0.01f - 5.0f;
    mlx_array in[2] = {tc_vec(v, N), k32(0.5f)};
    mlx_closure f = mlx_closure_new_func(mix);
    mlx_array out;
    run_both(f, false, in, 2, &out, 1);
    TC_FREE_ALL(out, in[0], in[1]);
    mlx_closure_free(f);
    free(v);
}

static int cast_chain(mlx_vector_array *res, const mlx_vector_array in)
{
    /* int32 -> float32 arithmetic -> bool comparison inside one chain */
    mlx_array x = mlx_array_new();
    mlx_array a = arg(in, 0);
    mlx_astype(&x, a, MLX_FLOAT32, tc_s);
    mlx_array_free(a);
    mlx_array y = b2(mlx_multiply, x, k32(0.5f));
    mlx_array o = b2(mlx_greater, u(mlx_floor, y), k32(1));
    return ret(res, &o, 1);
}

/* Steps that change dtype (astype, a comparison) fuse too. */
static void test_dtype_changes_inside_a_chain(void **state)
{
    (void)state;
    int32_t v[7] = {-3, 0, 1, 2, 3, 4, 9};
    mlx_array x = mlx_array_new_data(v, (const int[]){7}, 1, MLX_INT32);
    mlx_closure f = mlx_closure_new_func(cast_chain);
    mlx_array out = structure(f, &x, 1);
    assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
    assert_int_equal(mlx_array_dtype(out), MLX_BOOL);
    mlx_array_free(out);
    run_both(f, false, &x, 1, &out, 1);
    TC_FREE_ALL(out, x);
    mlx_closure_free(f);
}

static int deep_unary(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    for (int i = 0; i < 20; i++)
        x = b2(mlx_multiply, u(mlx_negative, x), k32(1.125f));
    return ret(res, &x, 1);
}

/* MLX "compile deep graph": 40 steps are more than one node may hold; the
 * chain is cut into several fused nodes and still computes the same. */
static void test_long_chain_is_split(void **state)
{
    (void)state;
    mlx_array x = vec(6, -1);
    mlx_closure f = mlx_closure_new_func(deep_unary);
    mlx_array out = structure(f, &x, 1);
    int fused = 0;
    for (mc_array *n = node(out); n && n->prim == MC_PRIM_FUSED; n = n->inputs[0])
        fused++;
    assert_true(fused >= 2);
    mlx_array_free(out);
    run_both(f, false, &x, 1, &out, 1);
    TC_FREE_ALL(out, x);
    mlx_closure_free(f);
}

/* A shapeless trace replays its fused node on new shapes (the node's
 * shape is the broadcast of its inputs'). */
static void test_shapeless_fused_replays_on_new_shapes(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(mix);
    size_t t0 = mc_compile_trace_count();
    mlx_closure cf = tc_compile(f, true);
    for (int n = 1; n <= 40; n += 13) {
        mlx_array in[2] = {vec(n, -1), k32(0.25f)};
        mlx_array out;
        assert_int_equal(tc_apply(cf, in, 2, &out, NULL), 0);
        assert_int_equal(node(out)->prim, MC_PRIM_FUSED);
        assert_int_equal(mlx_array_size(out), (size_t)n);
        mlx_array_free(out);
        run_both(f, true, in, 2, &out, 1);
        TC_FREE_ALL(out, in[0], in[1]);
    }
    /* one trace for cf, one per run_both's own compiled closure */
    assert_int_equal(mc_compile_trace_count() - t0, 1 + 4);
    mlx_closure_free(cf);
    mlx_closure_free(f);
}

/* mlx_print_graph names a fused node "Compiled" and lists its inputs. */
static void test_print_graph_of_a_fused_tape(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(binary_1);
    mlx_array in[2] = {vec(2, 0), vec(2, 1)};
    mlx_array out = structure(f, in, 2);
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    mlx_vector_array v = mlx_vector_array_new_value(out);
    mlx_node_namer nn = mlx_node_namer_new();
    assert_int_equal(mlx_print_graph(fp, nn, v), 0);
    fclose(fp);
    assert_string_equal(text, "Inputs: A [(2), float32], B [(2), float32]\n"
                              "Outputs: C [(2), float32]\n"
                              "Compiled A [(2), float32], B [(2), float32] -> C [(2), float32]\n");
    free(text);
    mlx_node_namer_free(nn);
    mlx_vector_array_free(v);
    TC_FREE_ALL(out, in[0], in[1]);
    mlx_closure_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unary_chains_fuse, tc_teardown),
        cmocka_unit_test_teardown(test_binary_chains_fuse, tc_teardown),
        cmocka_unit_test_teardown(test_gelu_like_fuses_into_one_node, tc_teardown),
        cmocka_unit_test_teardown(test_values_used_outside_stay_nodes, tc_teardown),
        cmocka_unit_test_teardown(test_fused_layouts_match_unfused, tc_teardown),
        cmocka_unit_test_teardown(test_large_fused_input_matches_unfused, tc_teardown),
        cmocka_unit_test_teardown(test_dtype_changes_inside_a_chain, tc_teardown),
        cmocka_unit_test_teardown(test_long_chain_is_split, tc_teardown),
        cmocka_unit_test_teardown(test_shapeless_fused_replays_on_new_shapes, tc_teardown),
        cmocka_unit_test_teardown(test_print_graph_of_a_fused_tape, tc_teardown),
    };
    return cmocka_run_group_tests(tests, tc_setup, NULL);
}
