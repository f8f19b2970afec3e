/* export.h, the writer's side for the primitives MLX composes or runs
 * as CPU fallbacks (src/io/mlxfn_export.c): each function here is
 * exported, imported back and called, and must give what calling it
 * gives; shapeless files are called at other shapes too.
 *
 * Each export is kept with its calls' inputs and outputs in the format of
 * test/fixtures/mlxfn; with MC_EXPORT_OUT_DIR set they stay there, and
 * test/check_mlxfn_mlx.py (meson test export_write_mlx) imports them with
 * MLX 0.31 and compares: that is the proof that MLX reads what we write.
 *
 * A file using a primitive that our own importer does not read yet
 * (mlxfn_import.c) is still written and kept for that check; its round
 * trip here is skipped with the importer's message. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_util.h"

static char out_dir[512];

/* ---- comparing and keeping calls ---- */

static void assert_close(mlx_array got, mlx_array want, const char *what)
{
    mlx_dtype dt = mlx_array_dtype(want);
    if (mlx_array_dtype(got) != dt)
        fail_msg("%s: dtype %d, expected %d", what, (int)mlx_array_dtype(got), (int)dt);
    if (!tu_shape_is(got, (int)mlx_array_ndim(want), mlx_array_shape(want)))
        fail_msg("%s: shape differs", what);
    assert_int_equal(mlx_array_eval(got), 0);
    assert_int_equal(mlx_array_eval(want), 0);
    if (dt == MLX_COMPLEX64) { /* each part */
        mlx_array gp = mlx_array_new(), wp = mlx_array_new();
        mlx_real(&gp, got, tu_stream());
        mlx_real(&wp, want, tu_stream());
        assert_close(gp, wp, what);
        mlx_imag(&gp, got, tu_stream());
        mlx_imag(&wp, want, tu_stream());
        assert_close(gp, wp, what);
        TU_FREE(gp, wp);
        return;
    }
    bool fl = dt == MLX_FLOAT16 || dt == MLX_BFLOAT16 || dt == MLX_FLOAT32 || dt == MLX_FLOAT64;
    double rtol = dt == MLX_FLOAT16 || dt == MLX_BFLOAT16 ? 1e-2 : 1e-4;
    for (size_t i = 0; i < mlx_array_size(want); i++) {
        double g = tu_get(got, i), w = tu_get(want, i);
        if (fl && isnan(w) && isnan(g))
            continue;
        if (fl ? !(g == w || fabs(g - w) <= 1e-5 + rtol * fabs(w)) : g != w)
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, g, w);
    }
}

static void put_array(mlx_map_string_to_array m, const char *key, mlx_vector_array v, size_t i)
{
    mlx_array a = mlx_array_new();
    mlx_vector_array_get(&a, v, i);
    mlx_map_string_to_array_insert(m, key, a);
    mlx_array_free(a);
}

static void put_count(mlx_map_string_to_string m, const char *key, size_t n)
{
    char val[32];
    snprintf(val, sizeof val, "%zu", n);
    mlx_map_string_to_string_insert(m, key, val);
}

/* Set when a file was written that our importer cannot read yet: the
 * test goes on (writing the rest for MLX's check) and is skipped at its
 * end. */
static bool g_unread;

/* Exports fun on calls[0] to NAME.mlxfn, keeps every call's inputs and
 * outputs (fun's) in NAME.safetensors, then imports the file and checks
 * that each call gives fun's outputs. */
static void round_trip(const char *name, mlx_closure fun, const mlx_vector_array *calls, int n_calls,
                       bool shapeless)
{
    char fn_path[600], io_path[600], key[64];
    snprintf(fn_path, sizeof fn_path, "%s/%s.mlxfn", out_dir, name);
    snprintf(io_path, sizeof io_path, "%s/%s.safetensors", out_dir, name);
    if (mlx_export_function(fn_path, fun, calls[0], shapeless))
        fail_msg("export %s: %s", name, tu_last_error());

    mlx_vector_array *want = calloc((size_t)n_calls, sizeof *want);
    assert_non_null(want);
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    for (int c = 0; c < n_calls; c++) {
        want[c] = mlx_vector_array_new();
        assert_int_equal(mlx_closure_apply(&want[c], fun, calls[c]), 0);
        for (size_t i = 0; i < mlx_vector_array_size(calls[c]); i++) {
            snprintf(key, sizeof key, "c%d_in_%zu", c, i);
            put_array(arrays, key, calls[c], i);
        }
        for (size_t j = 0; j < mlx_vector_array_size(want[c]); j++) {
            snprintf(key, sizeof key, "c%d_out_%zu", c, j);
            put_array(arrays, key, want[c], j);
        }
        snprintf(key, sizeof key, "c%d_n_in", c);
        put_count(meta, key, mlx_vector_array_size(calls[c]));
        snprintf(key, sizeof key, "c%d_n_out", c);
        put_count(meta, key, mlx_vector_array_size(want[c]));
        snprintf(key, sizeof key, "c%d_kw", c);
        mlx_map_string_to_string_insert(meta, key, "");
    }
    put_count(meta, "calls", (size_t)n_calls);
    assert_int_equal(mlx_save_safetensors(io_path, arrays, meta), 0);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);

    mlx_imported_function f = mlx_imported_function_new(fn_path);
    bool skip_it = false;
    if (!f.ctx) {
        if (!tu_last_error_has("cannot import it"))
            fail_msg("import %s: %s", name, tu_last_error());
        print_message("%s: written; our importer does not read it yet: %s\n", name, tu_last_error());
        tu_reset_errors();
        skip_it = true;
    }
    for (int c = 0; c < n_calls && !skip_it; c++) {
        mlx_vector_array got = mlx_vector_array_new();
        if (mlx_imported_function_apply(&got, f, calls[c]))
            fail_msg("call %d of %s: %s", c, name, tu_last_error());
        assert_int_equal((int)mlx_vector_array_size(got), (int)mlx_vector_array_size(want[c]));
        for (size_t j = 0; j < mlx_vector_array_size(got); j++) {
            mlx_array g = mlx_array_new(), w = mlx_array_new();
            mlx_vector_array_get(&g, got, j);
            mlx_vector_array_get(&w, want[c], j);
            char what[160];
            snprintf(what, sizeof what, "%s call %d output %zu", name, c, j);
            assert_close(g, w, what);
            TU_FREE(g, w);
        }
        mlx_vector_array_free(got);
    }
    for (int c = 0; c < n_calls; c++)
        mlx_vector_array_free(want[c]);
    free(want);
    mlx_imported_function_free(f);
    g_unread |= skip_it;
}

/* Skips a test whose files our importer could not all read. */
static void end_test(void)
{
    bool unread = g_unread;
    g_unread = false;
    if (unread)
        skip();
}

/* ---- building functions ---- */

static void push(mlx_vector_array v, mlx_array a)
{
    mlx_vector_array_append_value(v, a);
    mlx_array_free(a);
}

static mlx_array arg(const mlx_vector_array in, size_t i)
{
    mlx_array a = mlx_array_new();
    mlx_vector_array_get(&a, in, i);
    return a;
}

static int finish(mlx_vector_array *res, mlx_vector_array out)
{
    int rc = mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    return rc;
}

static mlx_array seq(int n, const int *shape, int ndim, float scale)
{
    float *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = scale * (float)((i * 7) % 11 - 5) + 0.125f * (float)(i % 3);
    mlx_array a = tu_f32(v, shape, ndim);
    free(v);
    return a;
}

static mlx_vector_array args2(mlx_array a, mlx_array b)
{
    mlx_vector_array v = mlx_vector_array_new_value(a);
    mlx_vector_array_append_value(v, b);
    return v;
}

/* ---- float classes and bitwise_invert ---- */

static int classes_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = arg(in, 0), i = arg(in, 1), u = arg(in, 2);
    mlx_vector_array out = mlx_vector_array_new();
    int (*const fs[])(mlx_array *, const mlx_array, const mlx_stream) = {mlx_isinf, mlx_isfinite, mlx_isposinf,
                                                                         mlx_isneginf};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        mlx_array r = mlx_array_new();
        fs[k](&r, x, st);
        push(out, r);
    }
    mlx_array r = mlx_array_new(), r2 = mlx_array_new();
    mlx_bitwise_invert(&r, i, st);
    push(out, r);
    mlx_bitwise_invert(&r2, u, st);
    push(out, r2);
    TU_FREE(x, i, u);
    return finish(res, out);
}

static void test_float_classes_and_bitwise_invert_export_as_mlx_compositions(void **s)
{
    (void)s;
    int shape[2] = {2, 4}, other[2] = {3, 2};
    float v[8] = {1.0f, INFINITY, -INFINITY, NAN, -0.5f, 3e38f, -2.0f, 0.0f};
    float w[6] = {-INFINITY, 2.0f, NAN, INFINITY, 0.25f, -1.0f};
    int32_t iv[8] = {0, -1, 7, -8, 123456, -2147483647, 2147483646, 5}, jv[6] = {1, 2, 3, 4, 5, 6};
    double uv[8] = {0, 1, 2, 127, 128, 200, 254, 255}, wv[6] = {9, 8, 7, 6, 5, 4};
    mlx_array x = tu_f32(v, shape, 2), i = tu_i32(iv, shape, 2), u = tu_array_of(MLX_UINT8, uv, shape, 2);
    mlx_array x2 = tu_f32(w, other, 2), i2 = tu_i32(jv, other, 2), u2 = tu_array_of(MLX_UINT8, wv, other, 2);
    mlx_vector_array calls[2] = {args2(x, i), args2(x2, i2)};
    mlx_vector_array_append_value(calls[0], u);
    mlx_vector_array_append_value(calls[1], u2);
    mlx_closure fun = mlx_closure_new_func(classes_fn);
    round_trip("w_classes", fun, calls, 1, false);
    round_trip("w_classes_shapeless", fun, calls, 2, true);
    mlx_closure_free(fun);
    mlx_vector_array_free(calls[0]);
    mlx_vector_array_free(calls[1]);
    TU_FREE(x, i, u, x2, i2, u2);
}

/* ---- var and std ---- */

static int moments_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = arg(in, 0);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[5];
    for (int k = 0; k < 5; k++)
        r[k] = mlx_array_new();
    int ax[2] = {0, 2};
    mlx_var_axis(&r[0], x, 1, false, 0, st);
    mlx_std_axes(&r[1], x, ax, 2, true, 1, st);
    mlx_var(&r[2], x, false, 2, st);
    mlx_std(&r[3], x, false, 0, st);
    mlx_var_axis(&r[4], x, -1, true, 7, st); /* N - ddof < 0: MLX divides by 0 */
    for (int k = 0; k < 5; k++)
        push(out, r[k]);
    /* softmax and logsumexp off the last axis: MLX's compositions */
    mlx_array sm = mlx_array_new(), smp = mlx_array_new(), lse = mlx_array_new(), lse2 = mlx_array_new();
    int ax01[2] = {0, 1};
    mlx_softmax_axis(&sm, x, 1, false, st);
    mlx_softmax_axes(&smp, x, ax01, 2, true, st);
    mlx_logsumexp_axis(&lse, x, 0, true, st);
    mlx_logsumexp_axes(&lse2, x, ax01, 2, false, st);
    push(out, sm);
    push(out, smp);
    push(out, lse);
    push(out, lse2);
    mlx_array_free(x);
    return finish(res, out);
}

static void test_var_and_std_export_as_mlx_compositions(void **s)
{
    (void)s;
    int shape[3] = {2, 3, 4}, other[3] = {3, 2, 5};
    mlx_array x = seq(24, shape, 3, 0.3f), y = seq(30, other, 3, -0.7f);
    mlx_vector_array calls[2] = {mlx_vector_array_new_value(x), mlx_vector_array_new_value(y)};
    mlx_closure fun = mlx_closure_new_func(moments_fn);
    round_trip("w_moments", fun, calls, 1, false);
    round_trip("w_moments_shapeless", fun, calls, 2, true);
    mlx_closure_free(fun);
    mlx_vector_array_free(calls[0]);
    mlx_vector_array_free(calls[1]);
    TU_FREE(x, y);
}

/* ---- rope ---- */

static mlx_array g_freqs;

static int rope_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = arg(in, 0), off = arg(in, 1), x3 = arg(in, 2);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[5];
    for (int k = 0; k < 5; k++)
        r[k] = mlx_array_new();
    mlx_optional_float base = {10000.0f, true}, none = {0.0f, false};
    mlx_fast_rope(&r[0], x, 8, false, base, 1.0f, 3, (mlx_array){NULL}, st);
    mlx_fast_rope(&r[1], x, 6, true, base, 0.5f, 0, (mlx_array){NULL}, st);
    mlx_fast_rope_dynamic(&r[2], x, 4, false, none, 1.0f, off, g_freqs, st);
    mlx_fast_rope_dynamic(&r[3], x, 4, true, none, 2.0f, off, g_freqs, st);
    mlx_fast_rope(&r[4], x3, 8, false, base, 1.0f, 1, (mlx_array){NULL}, st);
    for (int k = 0; k < 5; k++)
        push(out, r[k]);
    TU_FREE(x, off, x3);
    return finish(res, out);
}

static void test_rope_exports_as_mlx_cpu_fallback(void **s)
{
    (void)s;
    int shape[4] = {2, 2, 5, 8}, fshape[1] = {2}, oshape[1] = {2}, s3[3] = {3, 4, 8};
    float fv[2] = {1.5f, 7.0f};
    int32_t ov[2] = {0, 4};
    g_freqs = tu_f32(fv, fshape, 1);
    mlx_array x = seq(160, shape, 4, 0.4f), off = tu_i32(ov, oshape, 1), x3 = seq(96, s3, 3, -0.3f);
    mlx_vector_array call = args2(x, off);
    mlx_vector_array_append_value(call, x3);
    mlx_closure fun = mlx_closure_new_func(rope_fn);
    round_trip("w_rope", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(x, off, x3, g_freqs);
}

/* ---- attention with sinks ---- */

static mlx_array g_sinks;

static int sinks_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array q = arg(in, 0), k = arg(in, 1), v = arg(in, 2), m = arg(in, 3);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()};
    mlx_array none = {NULL};
    mlx_fast_scaled_dot_product_attention(&r[0], q, k, v, 0.4f, "", none, g_sinks, st);
    mlx_fast_scaled_dot_product_attention(&r[1], q, k, v, 0.3f, "causal", none, g_sinks, st);
    mlx_fast_scaled_dot_product_attention(&r[2], q, k, v, 0.5f, "array", m, g_sinks, st);
    for (int j = 0; j < 3; j++)
        push(out, r[j]);
    TU_FREE(q, k, v, m);
    return finish(res, out);
}

static void test_attention_sinks_export_as_mlx_cpu_fallback(void **s)
{
    (void)s;
    /* 4 query heads over 2 key/value heads; 3 queries, 5 keys */
    int qs[4] = {1, 4, 3, 8}, ks[4] = {1, 2, 5, 8}, ms[4] = {1, 4, 3, 5}, hs[1] = {4};
    float sv[4] = {0.5f, -1.0f, 2.0f, 0.0f};
    g_sinks = tu_f32(sv, hs, 1);
    mlx_array q = seq(96, qs, 4, 0.3f), k = seq(80, ks, 4, -0.2f), v = seq(80, ks, 4, 0.5f);
    mlx_array m = seq(60, ms, 4, 0.7f);
    mlx_vector_array call = args2(q, k);
    mlx_vector_array_append_value(call, v);
    mlx_vector_array_append_value(call, m);
    mlx_closure fun = mlx_closure_new_func(sinks_fn);
    round_trip("w_sinks", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(q, k, v, m, g_sinks);
}

/* ---- matmul in a shapeless file ---- */

static int matmul_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = arg(in, 0), b = arg(in, 1), r = mlx_array_new();
    mlx_matmul(&r, a, b, tu_stream());
    mlx_vector_array out = mlx_vector_array_new();
    push(out, r);
    TU_FREE(a, b);
    return finish(res, out);
}

static void shapeless_matmul(const char *name, const int (*sa)[3], const int (*sb)[3], int nda, int ndb)
{
    mlx_array a[2], b[2];
    mlx_vector_array calls[2];
    for (int c = 0; c < 2; c++) {
        int na = 1, nb = 1;
        for (int i = 0; i < nda; i++)
            na *= sa[c][i];
        for (int i = 0; i < ndb; i++)
            nb *= sb[c][i];
        a[c] = seq(na, sa[c], nda, 0.2f);
        b[c] = seq(nb, sb[c], ndb, -0.3f);
        calls[c] = args2(a[c], b[c]);
    }
    mlx_closure fun = mlx_closure_new_func(matmul_fn);
    round_trip(name, fun, calls, 2, true);
    mlx_closure_free(fun);
    for (int c = 0; c < 2; c++) {
        mlx_vector_array_free(calls[c]);
        TU_FREE(a[c], b[c]);
    }
}

static void test_shapeless_matmul_of_vectors_follows_the_inputs(void **s)
{
    (void)s;
    /* MLX's matmul gives a vector an axis and squeezes it after (no Reshape
     * to the traced shape) */
    const int va[2][3] = {{4}, {6}}, mb[2][3] = {{4, 3}, {6, 2}};
    shapeless_matmul("w_matmul_vec", va, mb, 1, 2);
    const int ma[2][3] = {{2, 5}, {3, 4}}, vb[2][3] = {{5}, {4}};
    shapeless_matmul("w_matmul_matvec", ma, vb, 2, 1);
}

static void test_shapeless_matmul_broadcasts_batch_axes_at_other_shapes(void **s)
{
    (void)s;
    /* batch axes of both broadcast: MLX's BroadcastAxes follows the inputs */
    const int a3[2][3] = {{2, 3, 4}, {3, 2, 5}}, b3[2][3] = {{1, 4, 5}, {1, 5, 2}};
    shapeless_matmul("w_matmul_batch", a3, b3, 3, 3);
    const int a2[2][3] = {{3, 4}, {2, 5}}, b2[2][3] = {{2, 4, 5}, {4, 5, 3}};
    shapeless_matmul("w_matmul_batch_b", a2, b2, 2, 3);
    end_test();
}

/* ---- linalg ---- */

static void push_all(mlx_vector_array out, mlx_vector_array v)
{
    for (size_t i = 0; i < mlx_vector_array_size(v); i++) {
        mlx_array a = arg(v, i);
        push(out, a);
    }
    mlx_vector_array_free(v);
}

static int linalg_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array a = arg(in, 0), spd = arg(in, 1), rect = arg(in, 2);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[6];
    for (int k = 0; k < 6; k++)
        r[k] = mlx_array_new();
    mlx_linalg_inv(&r[0], a, st);
    mlx_linalg_cholesky(&r[1], spd, true, st);
    mlx_linalg_qr(&r[2], &r[3], rect, st);
    mlx_linalg_eigh(&r[4], &r[5], spd, "L", st);
    for (int k = 0; k < 6; k++)
        push(out, r[k]);
    mlx_array v = mlx_array_new();
    mlx_linalg_eigvalsh(&v, spd, "U", st);
    push(out, v);
    mlx_vector_array sv = mlx_vector_array_new(), svals = mlx_vector_array_new();
    mlx_linalg_svd(&sv, rect, true, st);
    push_all(out, sv);
    mlx_linalg_svd(&svals, rect, false, st);
    push_all(out, svals);
    TU_FREE(a, spd, rect);
    return finish(res, out);
}

static void test_factorizations_export_as_mlx_primitives_with_their_outputs(void **s)
{
    (void)s;
    int sq[3] = {2, 3, 3}, rs[3] = {2, 4, 3};
    float av[18] = {4, 1, 2, 0, 3, 1, 1, 0, 5, 2, -1, 0, 1, 3, 1, 0, 2, 4};
    float sv[18] = {4, 1, 0.5f, 1, 3, 0.25f, 0.5f, 0.25f, 2, 5, 2, 1, 2, 6, 0, 1, 0, 3};
    /* full rank: the factors are unique up to the signs LAPACK picks */
    float rv[24] = {2, 1, 0, -1, 3, 1, 0.5f, 0, 4, 1, 2, -2, 3, 0, 1, 1, 5, 0, 0, 1, 2, 2, -1, 3};
    mlx_array a = tu_f32(av, sq, 3), spd = tu_f32(sv, sq, 3), rect = tu_f32(rv, rs, 3);
    mlx_vector_array call = args2(a, spd);
    mlx_vector_array_append_value(call, rect);
    mlx_closure fun = mlx_closure_new_func(linalg_fn);
    round_trip("w_linalg", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(a, spd, rect);
    end_test();
}

/* ---- products, transforms, random bits ---- */

static int products_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array a = arg(in, 0), b = arg(in, 1), li = arg(in, 2), ri = arg(in, 3), key = arg(in, 4);
    mlx_array ma = arg(in, 5), mb = arg(in, 6), mo = arg(in, 7);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[6];
    for (int k = 0; k < 6; k++)
        r[k] = mlx_array_new();
    mlx_optional_float none = {0.0f, false};
    mlx_hadamard_transform(&r[0], a, none, st);
    mlx_gather_mm(&r[1], a, b, li, ri, false, st);
    mlx_block_masked_mm(&r[2], ma, mb, 32, mo, (mlx_array){NULL}, (mlx_array){NULL}, st);
    int shape[2] = {3, 5};
    mlx_random_bits(&r[3], shape, 2, 4, key, st);
    mlx_random_bits(&r[4], shape, 1, 1, key, st);
    mlx_vector_array dm = mlx_vector_array_new();
    mlx_divmod(&dm, a, b, st);
    push_all(out, dm);
    for (int k = 0; k < 5; k++)
        push(out, r[k]);
    mlx_array_free(r[5]);
    TU_FREE(a, b, li, ri, key, ma, mb, mo);
    return finish(res, out);
}

static void test_products_hadamard_and_random_bits_export_as_mlx_primitives(void **s)
{
    (void)s;
    int as[3] = {2, 4, 4}, is[1] = {3}, ks[1] = {2}, ms[2] = {40, 40}, os[2] = {2, 2};
    int32_t lv[3] = {0, 1, 1}, rv[3] = {1, 0, 1};
    uint32_t kv[2] = {7, 11};
    double mov[4] = {1, 0, 1, 1};
    mlx_array a = seq(32, as, 3, 0.5f), b = seq(32, as, 3, -0.25f), li = tu_i32(lv, is, 1), ri = tu_i32(rv, is, 1);
    mlx_array key = mlx_array_new_data(kv, ks, 1, MLX_UINT32);
    mlx_array ma = seq(1600, ms, 2, 0.1f), mb = seq(1600, ms, 2, 0.2f), mo = tu_array_of(MLX_BOOL, mov, os, 2);
    mlx_vector_array call = args2(a, b);
    mlx_array more[6] = {li, ri, key, ma, mb, mo};
    for (int i = 0; i < 6; i++)
        mlx_vector_array_append_value(call, more[i]);
    mlx_closure fun = mlx_closure_new_func(products_fn);
    round_trip("w_products", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(a, b, li, ri, key, ma, mb, mo);
    end_test();
}

/* ---- quantized matmul in every mode ---- */

static int qmm_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = arg(in, 0), w = arg(in, 1);
    mlx_vector_array out = mlx_vector_array_new();
    static const char *const modes[4] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
    mlx_optional_int none = {0, false};
    for (int m = 0; m < 4; m++) {
        mlx_vector_array q = mlx_vector_array_new();
        mlx_quantize(&q, w, none, none, modes[m], (mlx_array){NULL}, st);
        mlx_array qw = arg(q, 0), sc = arg(q, 1), bi = m == 0 ? arg(q, 2) : (mlx_array){NULL};
        mlx_array r = mlx_array_new();
        mlx_quantized_matmul(&r, x, qw, sc, bi, true, none, none, modes[m], st);
        push(out, r);
        mlx_vector_array_free(q);
        TU_FREE(qw, sc);
        if (bi.ctx)
            mlx_array_free(bi);
    }
    TU_FREE(x, w);
    return finish(res, out);
}

static mlx_array g_qw;

/* The weights quantized outside the function: a captured constant. */
static int qmm_const_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = arg(in, 0);
    mlx_vector_array both = mlx_vector_array_new_value(x);
    mlx_vector_array_append_value(both, g_qw);
    int rc = qmm_fn(res, both);
    mlx_vector_array_free(both);
    mlx_array_free(x);
    return rc;
}

static void test_quantized_matmul_exports_in_every_mode(void **s)
{
    (void)s;
    int xs[2] = {3, 64}, ws[2] = {8, 64};
    mlx_array x = seq(192, xs, 2, 0.05f);
    g_qw = seq(512, ws, 2, 0.1f);
    mlx_vector_array call = mlx_vector_array_new_value(x);
    mlx_closure fun = mlx_closure_new_func(qmm_const_fn);
    round_trip("w_qmm", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(x, g_qw);
    end_test();
}

/* ---- quantize, dequantize, depends, random draws ---- */

static int quant_random_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array w = arg(in, 0), key = arg(in, 1), lo = arg(in, 2), hi = arg(in, 3), loc = arg(in, 4);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_optional_int none = {0, false}, b8 = {8, true}, g32 = {32, true};
    int bits[3] = {4, 8, 6};
    for (int i = 0; i < 3; i++) {
        mlx_vector_array q = mlx_vector_array_new();
        mlx_optional_int nb = {bits[i], true};
        mlx_quantize(&q, w, g32, nb, "affine", (mlx_array){NULL}, st);
        mlx_array qw = arg(q, 0), sc = arg(q, 1), bi = arg(q, 2), d = mlx_array_new();
        mlx_dequantize(&d, qw, sc, bi, g32, nb, "affine", (mlx_array){NULL}, (mlx_optional_dtype){0, false}, st);
        push(out, qw);
        push(out, sc);
        push(out, bi);
        push(out, d);
        mlx_vector_array_free(q);
    }
    /* mxfp4: MLX's CPU composition, and back */
    mlx_vector_array q4 = mlx_vector_array_new();
    mlx_quantize(&q4, w, none, none, "mxfp4", (mlx_array){NULL}, st);
    mlx_array q4w = arg(q4, 0), q4s = arg(q4, 1), q4d = mlx_array_new();
    mlx_dequantize(&q4d, q4w, q4s, (mlx_array){NULL}, none, none, "mxfp4", (mlx_array){NULL},
                   (mlx_optional_dtype){MLX_FLOAT32, true}, st);
    push(out, q4w);
    push(out, q4s);
    push(out, q4d);
    mlx_vector_array_free(q4);
    (void)b8;
    /* depends: w's value once the key's draw below is computed */
    int shape[2] = {4, 6};
    mlx_array u = mlx_array_new(), u16 = mlx_array_new(), nrm = mlx_array_new(), nb = mlx_array_new();
    mlx_random_uniform(&u, lo, hi, shape, 2, MLX_FLOAT32, key, st);
    mlx_random_uniform(&u16, lo, hi, shape, 2, MLX_FLOAT16, key, st);
    mlx_random_normal(&nrm, shape, 2, MLX_FLOAT32, 0.5f, 2.0f, key, st);
    mlx_random_normal_broadcast(&nb, shape, 2, MLX_BFLOAT16, loc, (mlx_array){NULL}, key, st);
    mlx_array gb = mlx_array_new(), lp = mlx_array_new(), lp16 = mlx_array_new();
    mlx_random_gumbel(&gb, shape, 2, MLX_FLOAT32, key, st);
    mlx_random_laplace(&lp, shape, 2, MLX_FLOAT32, 1.5f, 0.5f, key, st);
    mlx_random_laplace(&lp16, shape, 2, MLX_FLOAT16, 0.0f, 1.0f, key, st);
    mlx_array tn = mlx_array_new();
    mlx_random_truncated_normal(&tn, lo, hi, shape, 2, MLX_FLOAT32, key, st);
    push(out, tn);
    push(out, gb);
    push(out, lp);
    push(out, lp16);
    mlx_vector_array dep_in = mlx_vector_array_new_value(w), deps = mlx_vector_array_new_value(u),
                     dep_out = mlx_vector_array_new();
    mlx_depends(&dep_out, dep_in, deps);
    push_all(out, dep_out);
    push(out, u);
    push(out, u16);
    push(out, nrm);
    push(out, nb);
    mlx_vector_array_free(dep_in);
    mlx_vector_array_free(deps);
    TU_FREE(w, key, lo, hi, loc);
    return finish(res, out);
}

static void test_quantize_dequantize_depends_and_draws_export_as_mlx_writes_them(void **s)
{
    (void)s;
    int ws[2] = {4, 64}, ks[1] = {2}, ls[1] = {6}, one[1] = {1};
    uint32_t kv[2] = {3, 1234567};
    float lov[1] = {-2.0f}, hiv[6] = {1, 2, 3, 4, 5, 6};
    mlx_array w = seq(256, ws, 2, 0.1f), key = mlx_array_new_data(kv, ks, 1, MLX_UINT32);
    mlx_array lo = tu_f32(lov, one, 1), hi = tu_f32(hiv, ls, 1), loc = seq(6, ls, 1, 1.0f);
    mlx_vector_array call = args2(w, key);
    mlx_vector_array_append_value(call, lo);
    mlx_vector_array_append_value(call, hi);
    mlx_vector_array_append_value(call, loc);
    mlx_closure fun = mlx_closure_new_func(quant_random_fn);
    round_trip("w_quant_random", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(w, key, lo, hi, loc);
    end_test();
}

/* ---- mxfp4 dequantize ---- */

static int dq_fp4_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array qw = arg(in, 0), sc = arg(in, 1), a = mlx_array_new(), b = mlx_array_new();
    mlx_optional_int none = {0, false};
    mlx_dequantize(&a, qw, sc, (mlx_array){NULL}, none, none, "mxfp4", (mlx_array){NULL},
                   (mlx_optional_dtype){0, false}, st);
    mlx_dequantize(&b, qw, sc, (mlx_array){NULL}, none, none, "mxfp4", (mlx_array){NULL},
                   (mlx_optional_dtype){MLX_FLOAT32, true}, st);
    mlx_vector_array out = mlx_vector_array_new();
    push(out, a);
    push(out, b);
    TU_FREE(qw, sc);
    return finish(res, out);
}

static void test_mxfp4_dequantize_exports_as_mlx_cpu_composition(void **s)
{
    (void)s;
    int ws[2] = {3, 64};
    mlx_array w = seq(192, ws, 2, 0.7f);
    mlx_vector_array q = mlx_vector_array_new();
    mlx_optional_int none = {0, false};
    assert_int_equal(mlx_quantize(&q, w, none, none, "mxfp4", (mlx_array){NULL}, tu_stream()), 0);
    mlx_array qw = arg(q, 0), sc = arg(q, 1);
    mlx_vector_array call = args2(qw, sc);
    mlx_closure fun = mlx_closure_new_func(dq_fp4_fn);
    round_trip("w_dq_mxfp4", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    mlx_vector_array_free(q);
    TU_FREE(w, qw, sc);
    end_test();
}

/* ---- diagonal, permutation, gather_qmm, eig ---- */

static int misc_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array a = arg(in, 0), key = arg(in, 1), x = arg(in, 2), w = arg(in, 3), m = arg(in, 4);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[6];
    for (int k = 0; k < 6; k++)
        r[k] = mlx_array_new();
    mlx_diagonal(&r[0], a, 1, 0, 2, st);
    mlx_diagonal(&r[1], a, -1, 2, 1, st);
    mlx_random_permutation_arange(&r[2], 7, key, st);
    mlx_random_permutation(&r[3], a, 1, key, st);
    /* gather_qmm: x (2, 1, 64) rows against the quantized w's batch entries */
    mlx_vector_array q = mlx_vector_array_new();
    mlx_optional_int none = {0, false};
    mlx_quantize(&q, w, none, none, "affine", (mlx_array){NULL}, st);
    mlx_array qw = arg(q, 0), sc = arg(q, 1), bi = arg(q, 2);
    uint32_t iv[2] = {1, 0};
    int is[1] = {2};
    mlx_array idx = mlx_array_new_data(iv, is, 1, MLX_UINT32);
    mlx_gather_qmm(&r[4], x, qw, sc, bi, (mlx_array){NULL}, idx, true, none, none, "affine", false, st);
    mlx_linalg_eigvals(&r[5], m, st);
    for (int k = 0; k < 6; k++)
        push(out, r[k]);
    mlx_array vals = mlx_array_new(), vecs = mlx_array_new();
    mlx_linalg_eig(&vals, &vecs, m, st);
    push(out, vals);
    push(out, vecs);
    mlx_vector_array_free(q);
    TU_FREE(a, key, x, w, m, qw, sc, bi, idx);
    return finish(res, out);
}

static void test_diagonal_permutation_gather_qmm_and_eig_export(void **s)
{
    (void)s;
    int as[3] = {3, 4, 5}, ks[1] = {2}, xs[3] = {2, 1, 64}, ws[3] = {2, 8, 64}, ms[2] = {3, 3};
    uint32_t kv[2] = {5, 77};
    float mv[9] = {1, 2, 0, -1, 3, 1, 0.5f, 0, 2}; /* complex eigenvalues */
    mlx_array a = seq(60, as, 3, 0.5f), key = mlx_array_new_data(kv, ks, 1, MLX_UINT32);
    mlx_array x = seq(128, xs, 3, 0.05f), w = seq(1024, ws, 3, 0.1f), m = tu_f32(mv, ms, 2);
    mlx_vector_array call = args2(a, key);
    mlx_vector_array_append_value(call, x);
    mlx_vector_array_append_value(call, w);
    mlx_vector_array_append_value(call, m);
    mlx_closure fun = mlx_closure_new_func(misc_fn);
    round_trip("w_misc", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(a, key, x, w, m);
    end_test();
}

/* ---- what random.h and linalg.h build on those ---- */

static int built_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array key = arg(in, 0), logits = arg(in, 1), p = arg(in, 2), a = arg(in, 3);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r[7];
    for (int k = 0; k < 7; k++)
        r[k] = mlx_array_new();
    int shape[2] = {3, 4};
    mlx_array lo = mlx_array_new_int(-5), hi = mlx_array_new_int(9);
    mlx_random_split(&r[0], &r[1], key, st);
    mlx_random_split_num(&r[2], key, 3, st);
    mlx_random_randint(&r[3], lo, hi, shape, 2, MLX_INT32, r[0], st);
    mlx_random_bernoulli(&r[4], p, shape, 2, r[1], st);
    mlx_random_categorical(&r[5], logits, -1, key, st);
    mlx_linalg_tri_inv(&r[6], a, true, st);
    for (int k = 0; k < 7; k++)
        push(out, r[k]);
    TU_FREE(key, logits, p, a, lo, hi);
    return finish(res, out);
}

static void test_draws_and_inverses_built_on_them_export(void **s)
{
    (void)s;
    int ks[1] = {2}, ls[2] = {3, 5}, ps[1] = {4}, as[2] = {3, 3};
    uint32_t kv[2] = {9, 4242};
    float pv[4] = {0.1f, 0.5f, 0.9f, 0.3f}, av[9] = {2, 1, 3, 0, 4, 1, 0, 0, 5};
    mlx_array key = mlx_array_new_data(kv, ks, 1, MLX_UINT32), logits = seq(15, ls, 2, 0.6f);
    mlx_array p = tu_f32(pv, ps, 1), a = tu_f32(av, as, 2);
    mlx_vector_array call = args2(key, logits);
    mlx_vector_array_append_value(call, p);
    mlx_vector_array_append_value(call, a);
    mlx_closure fun = mlx_closure_new_func(built_fn);
    round_trip("w_built", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(key, logits, p, a);
    end_test();
}

/* ---- dynamic slices ---- */

static int dynamic_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array a = arg(in, 0), u = arg(in, 1), start = arg(in, 2), one = arg(in, 3);
    mlx_array r[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()};
    int axes[2] = {0, 2}, ax1[1] = {1}, size[3] = {2, 3, 2};
    mlx_slice_update_dynamic(&r[0], a, u, start, axes, 2, st);
    mlx_slice_update_dynamic(&r[1], a, u, one, ax1, 1, st);
    mlx_slice_dynamic(&r[2], a, start, axes, 2, size, 3, st);
    mlx_vector_array out = mlx_vector_array_new();
    for (int k = 0; k < 3; k++)
        push(out, r[k]);
    TU_FREE(a, u, start, one);
    return finish(res, out);
}

static void test_dynamic_slices_export_as_mlx_primitives(void **s)
{
    (void)s;
    int as[3] = {4, 3, 5}, us[3] = {2, 1, 2}, ss[1] = {2}, os[1] = {1};
    int32_t sv[2] = {1, 3}, ov[1] = {2};
    mlx_array a = seq(60, as, 3, 0.5f), u = seq(4, us, 3, -2.0f), start = tu_i32(sv, ss, 1),
              one = tu_i32(ov, os, 1);
    mlx_vector_array call = args2(a, u);
    mlx_vector_array_append_value(call, start);
    mlx_vector_array_append_value(call, one);
    mlx_closure fun = mlx_closure_new_func(dynamic_fn);
    round_trip("w_dynamic", fun, &call, 1, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(a, u, start, one);
    end_test();
}

/* ---- what MLX cannot read ---- */

static int g_case;

static int unreadable_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array a = arg(in, 0), b = arg(in, 1), seg = arg(in, 2), r = mlx_array_new();
    mlx_vector_array q = mlx_vector_array_new();
    mlx_optional_int none = {0, false};
    int rc = 0;
    switch (g_case) {
    case 0: rc = mlx_segmented_mm(&r, a, b, seg, st); break;
    case 1: rc = mlx_to_fp8(&r, a, st); break;
    default:
        rc = mlx_quantize(&q, a, none, none, "mxfp8", (mlx_array){NULL}, st) || mlx_vector_array_get(&r, q, 0);
        break;
    }
    mlx_vector_array out = mlx_vector_array_new();
    push(out, r);
    mlx_vector_array_free(q);
    TU_FREE(a, b, seg);
    return rc || finish(res, out);
}

static void test_primitives_mlx_cannot_read_fail_with_their_names(void **s)
{
    (void)s;
    int as[2] = {2, 32}, bs[2] = {32, 3}, ss[2] = {2, 2};
    uint32_t sv[4] = {0, 16, 16, 32};
    mlx_array a = seq(64, as, 2, 0.2f), b = seq(96, bs, 2, 0.1f), seg = mlx_array_new_data(sv, ss, 2, MLX_UINT32);
    mlx_vector_array call = args2(a, b);
    mlx_vector_array_append_value(call, seg);
    mlx_closure fun = mlx_closure_new_func(unreadable_fn);
    static const char *const names[3] = {"SegmentedMM", "ToFP8", "Quantize"};
    for (g_case = 0; g_case < 3; g_case++) {
        char path[600];
        snprintf(path, sizeof path, "%s/unreadable.mlxfn", out_dir);
        assert_int_equal(mlx_export_function(path, fun, call, false), 1);
        if (!tu_last_error_has(names[g_case]))
            fail_msg("case %d: %s", g_case, tu_last_error());
        tu_expect_error("[export_function] Unable to export primitive");
        remove(path);
    }
    mlx_closure_free(fun);
    mlx_vector_array_free(call);
    TU_FREE(a, b, seg);
}

/* ---- setup ---- */

static int setup(void **state)
{
    if (tu_scratch_dir_make(out_dir, sizeof out_dir, "MC_EXPORT_OUT_DIR", "export_write"))
        return -1;
    return tu_group_setup(state);
}

static int teardown(void **state)
{
    if (tu_scratch_dir_remove(out_dir, "MC_EXPORT_OUT_DIR"))
        return -1;
    return tu_group_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_float_classes_and_bitwise_invert_export_as_mlx_compositions,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_var_and_std_export_as_mlx_compositions, tu_test_teardown),
        cmocka_unit_test_teardown(test_rope_exports_as_mlx_cpu_fallback, tu_test_teardown),
        cmocka_unit_test_teardown(test_attention_sinks_export_as_mlx_cpu_fallback, tu_test_teardown),
        cmocka_unit_test_teardown(test_shapeless_matmul_of_vectors_follows_the_inputs, tu_test_teardown),
        cmocka_unit_test_teardown(test_shapeless_matmul_broadcasts_batch_axes_at_other_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_factorizations_export_as_mlx_primitives_with_their_outputs,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_products_hadamard_and_random_bits_export_as_mlx_primitives,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_quantized_matmul_exports_in_every_mode, tu_test_teardown),
        cmocka_unit_test_teardown(test_quantize_dequantize_depends_and_draws_export_as_mlx_writes_them,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_mxfp4_dequantize_exports_as_mlx_cpu_composition, tu_test_teardown),
        cmocka_unit_test_teardown(test_diagonal_permutation_gather_qmm_and_eig_export, tu_test_teardown),
        cmocka_unit_test_teardown(test_draws_and_inverses_built_on_them_export, tu_test_teardown),
        cmocka_unit_test_teardown(test_dynamic_slices_export_as_mlx_primitives, tu_test_teardown),
        cmocka_unit_test_teardown(test_primitives_mlx_cannot_read_fail_with_their_names, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
