/* export.h: functions exported by MLX 0.31 (test/fixtures/mlxfn, made by
 * scripts/make_mlxfn_fixtures.py) import here and give MLX's outputs;
 * functions exported here import back and give what calling them gives;
 * shapeless exports, several traces in one file, keyword arguments and
 * captured constants work both ways; malformed files (every truncation of
 * a small one, bad counts, forward and self references, unknown
 * primitives and dtypes) fail with one message each.
 *
 * The files this suite exports are written with their inputs and outputs
 * in the fixtures' format; with MC_EXPORT_OUT_DIR set they are kept there,
 * for `make_mlxfn_fixtures.py --check DIR` to import them with MLX
 * (test/check_mlxfn_mlx.py runs that when MLX is importable). */
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

#include "runtime/alloc.h"
#include "test_util.h"

#define FIXTURE(name) MC_TEST_SOURCE_DIR "/fixtures/mlxfn/" name

static char out_dir[512];

static void out_path(char *buf, size_t n, const char *name, const char *ext)
{
    snprintf(buf, n, "%s/%s%s", out_dir, name, ext);
}

/* ---- comparing ---- */

static void assert_close(mlx_array got, mlx_array want, const char *what)
{
    mlx_dtype dt = mlx_array_dtype(want);
    if (mlx_array_dtype(got) != dt) {
        fail_msg("%s: dtype %d, expected %d", what, (int)mlx_array_dtype(got), (int)dt);
    }
    int nd = (int)mlx_array_ndim(want);
    if (!tu_shape_is(got, nd, mlx_array_shape(want)))
        fail_msg("%s: shape differs", what);
    assert_int_equal(mlx_array_eval(got), 0);
    assert_int_equal(mlx_array_eval(want), 0);
    if (dt == MLX_COMPLEX64) { /* each part */
        mlx_array gr = mlx_array_new(), wr = mlx_array_new(), gi = mlx_array_new(), wi = mlx_array_new();
        mlx_real(&gr, got, tu_stream());
        mlx_real(&wr, want, tu_stream());
        mlx_imag(&gi, got, tu_stream());
        mlx_imag(&wi, want, tu_stream());
        assert_close(gr, wr, what);
        assert_close(gi, wi, what);
        TU_FREE(gr, wr, gi, wi);
        return;
    }
    bool fl = dt == MLX_FLOAT16 || dt == MLX_BFLOAT16 || dt == MLX_FLOAT32 || dt == MLX_FLOAT64;
    double rtol = dt == MLX_FLOAT16 || dt == MLX_BFLOAT16 ? 1e-2 : 1e-4;
    for (size_t i = 0; i < mlx_array_size(want); i++) {
        double g = tu_get(got, i), w = tu_get(want, i);
        if (fl && isnan(w) && isnan(g))
            continue;
        if (fl ? !(fabs(g - w) <= 1e-5 + rtol * fabs(w)) : g != w)
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, g, w);
    }
}

/* ---- the fixtures' format ---- */

static const char *meta_get(mlx_map_string_to_string meta, const char *key)
{
    const char *v = NULL;
    if (mlx_map_string_to_string_get(&v, meta, key))
        fail_msg("no metadata %s", key);
    return v;
}

static mlx_array arr_get(mlx_map_string_to_array arrays, const char *key)
{
    mlx_array a = mlx_array_new();
    if (mlx_map_string_to_array_get(&a, arrays, key))
        fail_msg("no array %s", key);
    return a;
}

/* Applies f to each call of a fixtures-format file and compares. */
static void check_calls(mlx_imported_function f, const char *io_path)
{
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    assert_int_equal(mlx_load_safetensors(&arrays, &meta, io_path, tu_stream()), 0);
    int calls = atoi(meta_get(meta, "calls"));
    assert_true(calls > 0);
    for (int c = 0; c < calls; c++) {
        char key[128];
        snprintf(key, sizeof key, "c%d_n_in", c);
        int n_in = atoi(meta_get(meta, key));
        snprintf(key, sizeof key, "c%d_n_out", c);
        int n_out = atoi(meta_get(meta, key));
        snprintf(key, sizeof key, "c%d_kw", c);
        char kw[512];
        snprintf(kw, sizeof kw, "%s", meta_get(meta, key));

        mlx_vector_array args = mlx_vector_array_new();
        mlx_map_string_to_array kwargs = mlx_map_string_to_array_new();
        for (int i = 0; i < n_in; i++) {
            snprintf(key, sizeof key, "c%d_in_%d", c, i);
            mlx_array a = arr_get(arrays, key);
            mlx_vector_array_append_value(args, a);
            mlx_array_free(a);
        }
        for (char *save = NULL, *k = strtok_r(kw, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
            snprintf(key, sizeof key, "c%d_kw_%s", c, k);
            mlx_array a = arr_get(arrays, key);
            mlx_map_string_to_array_insert(kwargs, k, a);
            mlx_array_free(a);
        }
        mlx_vector_array res = mlx_vector_array_new();
        if (mlx_imported_function_apply_kwargs(&res, f, args, kwargs))
            fail_msg("call %d of %s failed: %s", c, io_path, tu_last_error());
        assert_int_equal((int)mlx_vector_array_size(res), n_out);
        for (int j = 0; j < n_out; j++) {
            snprintf(key, sizeof key, "c%d_out_%d", c, j);
            mlx_array want = arr_get(arrays, key);
            mlx_array got = mlx_array_new();
            mlx_vector_array_get(&got, res, (size_t)j);
            char what[300];
            snprintf(what, sizeof what, "%s %s", io_path, key);
            assert_close(got, want, what);
            TU_FREE(got, want);
        }
        mlx_vector_array_free(res);
        mlx_vector_array_free(args);
        mlx_map_string_to_array_free(kwargs);
    }
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

static void check_fixture(const char *name)
{
    char fn_path[512], io_path[512];
    snprintf(fn_path, sizeof fn_path, FIXTURE("%s.mlxfn"), name);
    snprintf(io_path, sizeof io_path, FIXTURE("%s.safetensors"), name);
    mlx_imported_function f = mlx_imported_function_new(fn_path);
    if (!f.ctx)
        fail_msg("importing %s failed: %s", fn_path, tu_last_error());
    check_calls(f, io_path);
    mlx_imported_function_free(f);
}

static void test_mlx_unary_functions_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("unary");
}

static void test_mlx_binary_and_comparison_functions_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("binary");
    check_fixture("bitwise");
}

static void test_mlx_views_slices_and_joins_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("views");
    check_fixture("slice_update");
}

static void test_mlx_reductions_scans_and_sorts_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("reductions");
}

static void test_mlx_linear_layers_with_captured_weights_import(void **s)
{
    (void)s;
    check_fixture("mlp");
    check_fixture("qmm");
}

static void test_mlx_indexing_and_convolution_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("indexing");
    check_fixture("scatter");
    check_fixture("conv");
    check_fixture("fft");
}

static void test_mlx_fast_functions_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("fast");
}

static void test_mlx_shapeless_export_runs_at_other_shapes(void **s)
{
    (void)s;
    check_fixture("shapeless");
}

static void test_mlx_keyword_arguments_import(void **s)
{
    (void)s;
    check_fixture("kwargs");
}

static void test_mlx_exporter_file_with_several_traces_imports(void **s)
{
    (void)s;
    check_fixture("multi");
}

static void test_mlx_factorizations_import_with_every_output(void **s)
{
    (void)s;
    check_fixture("linalg");
    check_fixture("linalg_wide");
}

static void test_mlx_divmod_depends_and_masked_scatter_import(void **s)
{
    (void)s;
    check_fixture("divmod");
    check_fixture("depends");
    check_fixture("masked");
}

static void test_mlx_dynamic_slices_import_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("dynamic");
}

static void test_mlx_random_bits_import_with_mlx_bits(void **s)
{
    (void)s;
    check_fixture("random");
}

static void test_mlx_hadamard_imports_with_mlx_values(void **s)
{
    (void)s;
    check_fixture("hadamard");
}

static void test_mlx_gather_and_block_masked_products_import(void **s)
{
    (void)s;
    check_fixture("gather_mm");
    check_fixture("block_mm");
}

static void test_mlx_quantized_products_import_in_every_mode(void **s)
{
    (void)s;
    check_fixture("qmm_modes");
    check_fixture("quantize");
}

static void test_mlx_shapeless_broadcast_axes_runs_at_other_shapes(void **s)
{
    (void)s;
    check_fixture("broadcast_axes");
    check_fixture("shapeless_mean");
}

static void test_mlx_partitions_complex_parts_and_views_import(void **s)
{
    (void)s;
    check_fixture("others");
}

static void test_unsupported_primitive_fails_with_its_name(void **s)
{
    (void)s;
    mlx_imported_function f = mlx_imported_function_new(FIXTURE("unsupported.mlxfn"));
    assert_null(f.ctx);
    assert_true(tu_last_error_has("unsupported primitive 'RMSNormVJP'"));
    tu_expect_error("[import_function]");
}

static void test_call_matching_no_trace_fails_naming_the_inputs(void **s)
{
    (void)s;
    mlx_imported_function f = mlx_imported_function_new(FIXTURE("unary.mlxfn"));
    assert_non_null(f.ctx);
    float v[2] = {1, 2};
    int shape[1] = {2};
    mlx_array x = tu_f32(v, shape, 1);
    mlx_vector_array args = mlx_vector_array_new_value(x);
    mlx_vector_array res = mlx_vector_array_new();
    assert_int_equal(mlx_imported_function_apply(&res, f, args), 1);
    tu_expect_error("[import_function::call] No imported function found");
    assert_int_equal((int)mlx_vector_array_size(res), 0);
    mlx_vector_array_free(res);
    mlx_vector_array_free(args);
    mlx_array_free(x);
    mlx_imported_function_free(f);
}

/* ---- our exports ---- */

static void push(mlx_vector_array res, mlx_array a)
{
    mlx_vector_array_append_value(res, a);
    mlx_array_free(a);
}

/* a binary op into a new array */
typedef int (*bin_fn)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);
typedef int (*un_fn)(mlx_array *, const mlx_array, const mlx_stream);

static mlx_array bin(bin_fn f, mlx_array a, mlx_array b)
{
    mlx_array r = mlx_array_new();
    f(&r, a, b, tu_stream());
    return r;
}

static mlx_array un(un_fn f, mlx_array a)
{
    mlx_array r = mlx_array_new();
    f(&r, a, tu_stream());
    return r;
}

static int elementwise_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    mlx_vector_array_get(&y, in, 1);
    mlx_vector_array out = mlx_vector_array_new();
    static const un_fn unaries[] = {mlx_exp,   mlx_tanh,  mlx_sigmoid, mlx_sin, mlx_negative,  mlx_square,
                                    mlx_floor, mlx_isnan, mlx_erf,     mlx_abs, mlx_reciprocal};
    for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++)
        push(out, un(unaries[i], x));
    mlx_array ax = un(mlx_abs, x);
    push(out, un(mlx_sqrt, ax));
    push(out, un(mlx_rsqrt, ax));
    push(out, un(mlx_log, ax));
    push(out, un(mlx_log2, ax));
    static const bin_fn binaries[] = {mlx_add,     mlx_subtract,  mlx_multiply,    mlx_divide,
                                      mlx_maximum, mlx_minimum,   mlx_greater,     mlx_less_equal,
                                      mlx_equal,   mlx_logaddexp, mlx_floor_divide};
    for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++)
        push(out, bin(binaries[i], x, y));
    mlx_array two = mlx_array_new_float(2.0f);
    push(out, bin(mlx_multiply, x, two)); /* a captured scalar, broadcast */
    mlx_array row = mlx_array_new();
    int start[2] = {0, 0}, stop[2] = {1, 4}, str[2] = {1, 1};
    mlx_slice(&row, y, start, 2, stop, 2, str, 2, st);
    push(out, bin(mlx_add, x, row)); /* broadcast of an input */
    mlx_array gt = bin(mlx_greater, x, y), w = mlx_array_new();
    mlx_where(&w, gt, x, y, st);
    push(out, w);
    mlx_array xi = mlx_array_new();
    mlx_astype(&xi, x, MLX_INT32, st);
    push(out, xi);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(x, y, ax, two, row, gt);
    return 0;
}

static int shapes_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = mlx_array_new(), idx = mlx_array_new();
    mlx_vector_array_get(&x, in, 0); /* (2, 3, 4) */
    mlx_vector_array_get(&idx, in, 1);
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r = mlx_array_new();
    int shape[2] = {6, 4};
    mlx_reshape(&r, x, shape, 2, st);
    push(out, r);
    int perm[3] = {2, 0, 1};
    r = mlx_array_new();
    mlx_transpose_axes(&r, x, perm, 3, st);
    push(out, r);
    int start[3] = {1, 0, 3}, stop[3] = {2, 3, -5}, str[3] = {1, 2, -2};
    r = mlx_array_new();
    mlx_slice(&r, x, start, 3, stop, 3, str, 3, st);
    push(out, r);
    r = mlx_array_new();
    mlx_expand_dims(&r, x, 1, st);
    push(out, r);
    r = mlx_array_new();
    mlx_flatten(&r, x, 1, 2, st);
    push(out, r);
    int bshape[4] = {2, 2, 3, 4};
    r = mlx_array_new();
    mlx_broadcast_to(&r, x, bshape, 4, st);
    push(out, r);
    mlx_vector_array parts = mlx_vector_array_new();
    mlx_vector_array_append_value(parts, x);
    mlx_vector_array_append_value(parts, x);
    r = mlx_array_new();
    mlx_concatenate_axis(&r, parts, 2, st);
    push(out, r);
    mlx_vector_array_free(parts);
    int axes[1] = {1}, lo[1] = {1}, hi[1] = {2};
    mlx_array pv = mlx_array_new_float(-1.0f);
    r = mlx_array_new();
    mlx_pad(&r, x, axes, 1, lo, 1, hi, 1, pv, "constant", st);
    push(out, r);
    r = mlx_array_new();
    mlx_take_axis(&r, x, idx, 2, st);
    push(out, r);
    mlx_array order = mlx_array_new();
    mlx_argsort_axis(&order, x, 1, st);
    r = mlx_array_new();
    mlx_take_along_axis(&r, x, order, 1, st);
    push(out, r);
    push(out, order);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(x, idx, pv);
    return 0;
}

static int reduce_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream st = tu_stream();
    mlx_array x = mlx_array_new();
    mlx_vector_array_get(&x, in, 0); /* (2, 3, 4) */
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array r = mlx_array_new();
    mlx_sum_axis(&r, x, 1, false, st);
    push(out, r);
    r = mlx_array_new();
    mlx_mean_axis(&r, x, 2, true, st);
    push(out, r);
    r = mlx_array_new();
    mlx_max_axis(&r, x, 0, false, st);
    push(out, r);
    r = mlx_array_new();
    mlx_argmax_axis(&r, x, 1, false, st);
    push(out, r);
    r = mlx_array_new();
    mlx_softmax_axis(&r, x, -1, false, st);
    push(out, r);
    r = mlx_array_new();
    mlx_logsumexp_axis(&r, x, 2, false, st);
    push(out, r);
    r = mlx_array_new();
    mlx_cumsum(&r, x, 1, true, false, st);
    push(out, r);
    r = mlx_array_new();
    mlx_sort_axis(&r, x, 2, st);
    push(out, r);
    r = mlx_array_new();
    mlx_partition_axis(&r, x, 1, 2, st);
    push(out, r);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    mlx_array_free(x);
    return 0;
}

static mlx_array g_weight; /* captured by linear_fn: a constant of its trace */

static int linear_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    /* stops at the first failure, so the fault sweep sees one message */
    mlx_stream st = tu_stream();
    mlx_array x = mlx_array_new(), b = mlx_array_new(), v = mlx_array_new(), v1 = mlx_array_new();
    mlx_array r0 = mlx_array_new(), r1 = mlx_array_new(), r2 = mlx_array_new();
    mlx_vector_array out = mlx_vector_array_new();
    int start[2] = {0, 0}, stop[2] = {1, 4}, str[2] = {1, 1}, shape[1] = {4};
    int rc = !out.ctx || mlx_vector_array_get(&x, in, 0) /* (n, 4) */ || mlx_matmul(&r0, x, g_weight, st) ||
             mlx_vector_array_append_value(out, r0);
    if (!rc && mlx_vector_array_size(in) > 1)
        rc = mlx_vector_array_get(&b, in, 1) || mlx_addmm(&r1, b, x, g_weight, 1.0f, 0.5f, st) ||
             mlx_vector_array_append_value(out, r1);
    /* a vector times a matrix */
    rc = rc || mlx_slice(&v, x, start, 2, stop, 2, str, 2, st) || mlx_reshape(&v1, v, shape, 1, st) ||
         mlx_matmul(&r2, v1, g_weight, st) || mlx_vector_array_append_value(out, r2) ||
         mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(x, b, v, v1, r0, r1, r2);
    return rc;
}

static mlx_array g_norm_w, g_norm_b;

static int fast_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), r1 = mlx_array_new(), r2 = mlx_array_new(), r3 = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    mlx_fast_rms_norm(&r1, x, g_norm_w, 1e-5f, tu_stream());
    mlx_fast_layer_norm(&r2, x, g_norm_w, g_norm_b, 1e-5f, tu_stream());
    mlx_fast_layer_norm(&r3, x, (mlx_array){NULL}, (mlx_array){NULL}, 1e-4f, tu_stream());
    mlx_vector_array out = mlx_vector_array_new();
    push(out, r1);
    push(out, r2);
    push(out, r3);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    mlx_array_free(x);
    return 0;
}

static int attention_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array q = mlx_array_new(), k = mlx_array_new(), v = mlx_array_new(), m = mlx_array_new();
    mlx_array r1 = mlx_array_new(), r2 = mlx_array_new(), r3 = mlx_array_new();
    mlx_vector_array_get(&q, in, 0);
    mlx_vector_array_get(&k, in, 1);
    mlx_vector_array_get(&v, in, 2);
    mlx_vector_array_get(&m, in, 3);
    mlx_array none = {NULL};
    mlx_fast_scaled_dot_product_attention(&r1, q, k, v, 0.35f, "causal", none, none, tu_stream());
    mlx_fast_scaled_dot_product_attention(&r2, q, k, v, 0.5f, "", none, none, tu_stream());
    mlx_fast_scaled_dot_product_attention(&r3, q, k, v, 0.5f, "array", m, none, tu_stream());
    mlx_vector_array out = mlx_vector_array_new();
    push(out, r1);
    push(out, r2);
    push(out, r3);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(q, k, v, m);
    return 0;
}

/* Exports fun on calls[0], saves every call's inputs and outputs (fun's)
 * in the fixtures' format, imports the file and checks each call. */
static void round_trip_calls(const char *name, mlx_closure fun, const mlx_vector_array *calls, int n_calls,
                             bool shapeless)
{
    char fn_path[600], io_path[600];
    out_path(fn_path, sizeof fn_path, name, ".mlxfn");
    out_path(io_path, sizeof io_path, name, ".safetensors");
    if (mlx_export_function(fn_path, fun, calls[0], shapeless))
        fail_msg("export %s: %s", name, tu_last_error());

    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    char key[64], val[32];
    for (int c = 0; c < n_calls; c++) {
        mlx_vector_array want = mlx_vector_array_new();
        assert_int_equal(mlx_closure_apply(&want, fun, calls[c]), 0);
        for (size_t i = 0; i < mlx_vector_array_size(calls[c]); i++) {
            mlx_array a = mlx_array_new();
            mlx_vector_array_get(&a, calls[c], i);
            snprintf(key, sizeof key, "c%d_in_%zu", c, i);
            mlx_map_string_to_array_insert(arrays, key, a);
            mlx_array_free(a);
        }
        for (size_t j = 0; j < mlx_vector_array_size(want); j++) {
            mlx_array a = mlx_array_new();
            mlx_vector_array_get(&a, want, j);
            snprintf(key, sizeof key, "c%d_out_%zu", c, j);
            mlx_map_string_to_array_insert(arrays, key, a);
            mlx_array_free(a);
        }
        snprintf(key, sizeof key, "c%d_n_in", c);
        snprintf(val, sizeof val, "%zu", mlx_vector_array_size(calls[c]));
        mlx_map_string_to_string_insert(meta, key, val);
        snprintf(key, sizeof key, "c%d_n_out", c);
        snprintf(val, sizeof val, "%zu", mlx_vector_array_size(want));
        mlx_map_string_to_string_insert(meta, key, val);
        snprintf(key, sizeof key, "c%d_kw", c);
        mlx_map_string_to_string_insert(meta, key, "");
        mlx_vector_array_free(want);
    }
    snprintf(val, sizeof val, "%d", n_calls);
    mlx_map_string_to_string_insert(meta, "calls", val);
    assert_int_equal(mlx_save_safetensors(io_path, arrays, meta), 0);

    mlx_imported_function f = mlx_imported_function_new(fn_path);
    if (!f.ctx)
        fail_msg("import %s: %s", name, tu_last_error());
    check_calls(f, io_path);
    mlx_imported_function_free(f);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

static void round_trip(const char *name, mlx_closure fun, mlx_vector_array args, bool shapeless)
{
    round_trip_calls(name, fun, &args, 1, shapeless);
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

static void test_exported_elementwise_function_imports_with_its_values(void **s)
{
    (void)s;
    int shape[2] = {3, 4};
    mlx_array x = seq(12, shape, 2, 0.25f), y = seq(12, shape, 2, -0.5f);
    mlx_vector_array args = mlx_vector_array_new();
    mlx_vector_array_append_value(args, x);
    mlx_vector_array_append_value(args, y);
    mlx_closure fun = mlx_closure_new_func(elementwise_fn);
    round_trip("rt_elementwise", fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    TU_FREE(x, y);
}

static void test_exported_views_and_indexing_import_with_their_values(void **s)
{
    (void)s;
    int shape[3] = {2, 3, 4}, ishape[1] = {3};
    int32_t iv[3] = {3, 0, -1};
    mlx_array x = seq(24, shape, 3, 0.5f), idx = tu_i32(iv, ishape, 1);
    mlx_vector_array args = mlx_vector_array_new();
    mlx_vector_array_append_value(args, x);
    mlx_vector_array_append_value(args, idx);
    mlx_closure fun = mlx_closure_new_func(shapes_fn);
    round_trip("rt_shapes", fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    TU_FREE(x, idx);
}

static void test_exported_reductions_import_with_their_values(void **s)
{
    (void)s;
    int shape[3] = {2, 3, 4};
    mlx_array x = seq(24, shape, 3, 0.3f);
    mlx_vector_array args = mlx_vector_array_new_value(x);
    mlx_closure fun = mlx_closure_new_func(reduce_fn);
    round_trip("rt_reduce", fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    mlx_array_free(x);
}

static void test_exported_linear_layer_keeps_its_captured_weight(void **s)
{
    (void)s;
    int wshape[2] = {4, 3}, xshape[2] = {5, 4}, bshape[1] = {3};
    g_weight = seq(12, wshape, 2, 0.2f);
    mlx_array x = seq(20, xshape, 2, 0.1f), b = seq(3, bshape, 1, 1.0f);
    mlx_vector_array args = mlx_vector_array_new();
    mlx_vector_array_append_value(args, x);
    mlx_vector_array_append_value(args, b);
    mlx_closure fun = mlx_closure_new_func(linear_fn);
    round_trip("rt_linear", fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    TU_FREE(x, b, g_weight);
}

static void test_exported_norms_are_written_as_mlx_cpu_fallbacks(void **s)
{
    (void)s;
    int shape[2] = {3, 8}, wshape[1] = {8};
    g_norm_w = seq(8, wshape, 1, 0.3f);
    g_norm_b = seq(8, wshape, 1, -0.2f);
    mlx_array x = seq(24, shape, 2, 0.5f);
    mlx_vector_array args = mlx_vector_array_new_value(x);
    mlx_closure fun = mlx_closure_new_func(fast_fn);
    round_trip("rt_fast", fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    TU_FREE(x, g_norm_w, g_norm_b);
}

static void test_exported_attention_is_written_as_mlx_cpu_fallback(void **s)
{
    (void)s;
    /* grouped heads: 4 query heads over 2 key/value heads; 3 queries, 5 keys */
    int qs[4] = {1, 4, 3, 8}, ks[4] = {1, 2, 5, 8}, ms[4] = {1, 1, 3, 5};
    mlx_array q = seq(96, qs, 4, 0.3f), k = seq(80, ks, 4, -0.2f), v = seq(80, ks, 4, 0.5f);
    double mv[15];
    for (int i = 0; i < 15; i++)
        mv[i] = (i % 4) != 1;
    mlx_array m = tu_array_of(MLX_BOOL, mv, ms, 4);
    mlx_vector_array args = mlx_vector_array_new();
    mlx_vector_array_append_value(args, q);
    mlx_vector_array_append_value(args, k);
    mlx_vector_array_append_value(args, v);
    mlx_vector_array_append_value(args, m);
    mlx_closure fun = mlx_closure_new_func(attention_fn);
    round_trip("rt_attention", fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    TU_FREE(q, k, v, m);
}

static int scale_shift(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    mlx_array e = un(mlx_exp, x), three = mlx_array_new_float(3.0f), m = mlx_array_new();
    mlx_array r = bin(mlx_multiply, e, three);
    mlx_mean_axis(&m, x, -1, true, tu_stream());
    mlx_array c = bin(mlx_subtract, x, m);
    mlx_vector_array out = mlx_vector_array_new_value(r);
    push(out, c);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(x, e, three, r, m);
    return 0;
}

static void test_shapeless_export_imports_for_other_shapes(void **s)
{
    (void)s;
    int shape[2] = {2, 3}, other[2] = {4, 5}, row[2] = {1, 7};
    mlx_array x = seq(6, shape, 2, 0.25f), z = seq(20, other, 2, 0.1f), r = seq(7, row, 2, 0.3f);
    mlx_vector_array calls[3] = {mlx_vector_array_new_value(x), mlx_vector_array_new_value(z),
                                 mlx_vector_array_new_value(r)};
    mlx_closure fun = mlx_closure_new_func(scale_shift);
    round_trip_calls("rt_shapeless", fun, calls, 3, true);
    /* not shapeless: the other shapes match no trace */
    round_trip("rt_shaped", fun, calls[0], false);
    char path[600];
    out_path(path, sizeof path, "rt_shaped", ".mlxfn");
    mlx_imported_function f = mlx_imported_function_new(path);
    mlx_vector_array got = mlx_vector_array_new();
    assert_int_equal(mlx_imported_function_apply(&got, f, calls[1]), 1);
    tu_expect_error("[import_function::call]");
    mlx_imported_function_free(f);
    mlx_vector_array_free(got);
    for (int i = 0; i < 3; i++)
        mlx_vector_array_free(calls[i]);
    mlx_closure_free(fun);
    TU_FREE(x, z, r);
}

/* Saves calls (args, optional keyword arrays under sorted names, outputs)
 * in the fixtures' format, for the MLX direction's check. */
static void save_io(const char *name, int n_calls, const mlx_vector_array *args, const mlx_map_string_to_array *kw,
                    const char *const *kw_names, int n_kw, const mlx_vector_array *outs)
{
    char path[600], key[96], val[256];
    out_path(path, sizeof path, name, ".safetensors");
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    for (int c = 0; c < n_calls; c++) {
        const mlx_vector_array *vs[2] = {&args[c], &outs[c]};
        const char *what[2] = {"in", "out"};
        for (int v = 0; v < 2; v++) {
            for (size_t i = 0; i < mlx_vector_array_size(*vs[v]); i++) {
                mlx_array a = mlx_array_new();
                mlx_vector_array_get(&a, *vs[v], i);
                snprintf(key, sizeof key, "c%d_%s_%zu", c, what[v], i);
                mlx_map_string_to_array_insert(arrays, key, a);
                mlx_array_free(a);
            }
            snprintf(key, sizeof key, "c%d_n_%s", c, what[v]);
            snprintf(val, sizeof val, "%zu", mlx_vector_array_size(*vs[v]));
            mlx_map_string_to_string_insert(meta, key, val);
        }
        val[0] = 0;
        for (int k = 0; kw && k < n_kw; k++) {
            mlx_array a = mlx_array_new();
            mlx_map_string_to_array_get(&a, kw[c], kw_names[k]);
            snprintf(key, sizeof key, "c%d_kw_%s", c, kw_names[k]);
            mlx_map_string_to_array_insert(arrays, key, a);
            mlx_array_free(a);
            snprintf(val + strlen(val), sizeof val - strlen(val), "%s%s", k ? "," : "", kw_names[k]);
        }
        snprintf(key, sizeof key, "c%d_kw", c);
        mlx_map_string_to_string_insert(meta, key, val);
    }
    snprintf(val, sizeof val, "%d", n_calls);
    mlx_map_string_to_string_insert(meta, "calls", val);
    assert_int_equal(mlx_save_safetensors(path, arrays, meta), 0);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

static int kw_fn(mlx_vector_array *res, const mlx_vector_array args, const mlx_map_string_to_array kwargs)
{
    mlx_array x = mlx_array_new(), scale = mlx_array_new(), bias = mlx_array_new();
    mlx_vector_array_get(&x, args, 0);
    mlx_map_string_to_array_get(&scale, kwargs, "scale");
    mlx_map_string_to_array_get(&bias, kwargs, "bias");
    mlx_array m = bin(mlx_multiply, x, scale);
    mlx_array r = bin(mlx_subtract, m, bias);
    mlx_vector_array out = mlx_vector_array_new_value(r);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(x, scale, bias, m, r);
    return 0;
}

static void test_keyword_arguments_round_trip_by_name(void **s)
{
    (void)s;
    int shape[2] = {2, 3};
    mlx_array x = seq(6, shape, 2, 0.5f), sc = seq(6, shape, 2, 0.25f), bi = seq(6, shape, 2, 1.0f);
    mlx_vector_array args = mlx_vector_array_new_value(x);
    mlx_map_string_to_array kw = mlx_map_string_to_array_new();
    /* inserted out of order: the trace takes them sorted by name */
    mlx_map_string_to_array_insert(kw, "scale", sc);
    mlx_map_string_to_array_insert(kw, "bias", bi);
    char path[600];
    out_path(path, sizeof path, "rt_kwargs", ".mlxfn");
    mlx_closure_kwargs fun = mlx_closure_kwargs_new_func(kw_fn);
    assert_int_equal(mlx_export_function_kwargs(path, fun, args, kw, false), 0);

    mlx_imported_function f = mlx_imported_function_new(path);
    assert_non_null(f.ctx);
    mlx_vector_array got = mlx_vector_array_new(), want = mlx_vector_array_new();
    assert_int_equal(mlx_imported_function_apply_kwargs(&got, f, args, kw), 0);
    assert_int_equal(mlx_closure_kwargs_apply(&want, fun, args, kw), 0);
    mlx_array g = mlx_array_new(), w = mlx_array_new();
    mlx_vector_array_get(&g, got, 0);
    mlx_vector_array_get(&w, want, 0);
    assert_close(g, w, "kwargs");
    static const char *const names[2] = {"bias", "scale"};
    save_io("rt_kwargs", 1, &args, &kw, names, 2, &want);
    /* a missing keyword matches no trace */
    mlx_map_string_to_array only = mlx_map_string_to_array_new();
    mlx_map_string_to_array_insert(only, "scale", sc);
    mlx_array extra = mlx_array_new();
    mlx_vector_array two = mlx_vector_array_new_value(x);
    mlx_vector_array_append_value(two, bi);
    assert_int_equal(mlx_imported_function_apply_kwargs(&got, f, two, only), 1);
    tu_expect_error("[import_function::call]");
    TU_FREE(g, w, x, sc, bi, extra);
    mlx_map_string_to_array_free(only);
    mlx_vector_array_free(two);
    mlx_vector_array_free(got);
    mlx_vector_array_free(want);
    mlx_vector_array_free(args);
    mlx_map_string_to_array_free(kw);
    mlx_closure_kwargs_free(fun);
    mlx_imported_function_free(f);
}

static void test_exporter_writes_several_traces_and_refuses_a_repeat(void **s)
{
    (void)s;
    int wshape[2] = {4, 3}, s1[2] = {2, 4}, s2[2] = {6, 4}, bshape[1] = {3};
    g_weight = seq(12, wshape, 2, 0.2f);
    mlx_array x1 = seq(8, s1, 2, 0.5f), x2 = seq(24, s2, 2, 0.25f), b = seq(3, bshape, 1, 1.0f);
    char path[600];
    out_path(path, sizeof path, "rt_multi", ".mlxfn");
    mlx_closure fun = mlx_closure_new_func(linear_fn);
    mlx_function_exporter ex = mlx_function_exporter_new(path, fun, false);
    assert_non_null(ex.ctx);
    mlx_vector_array a1 = mlx_vector_array_new_value(x1), a2 = mlx_vector_array_new_value(x2);
    mlx_vector_array a3 = mlx_vector_array_new_value(x1);
    mlx_vector_array_append_value(a3, b);
    assert_int_equal(mlx_function_exporter_apply(ex, a1), 0);
    assert_int_equal(mlx_function_exporter_apply(ex, a2), 0);
    assert_int_equal(mlx_function_exporter_apply(ex, a3), 0);
    assert_int_equal(mlx_function_exporter_apply(ex, a1), 1);
    tu_expect_error("[export_function] Attempting to export a function twice");
    mlx_function_exporter_free(ex);

    mlx_imported_function f = mlx_imported_function_new(path);
    assert_non_null(f.ctx);
    mlx_vector_array *calls[3] = {&a1, &a2, &a3};
    mlx_vector_array wants[3] = {mlx_vector_array_new(), mlx_vector_array_new(), mlx_vector_array_new()};
    for (int c = 0; c < 3; c++) {
        mlx_vector_array got = mlx_vector_array_new(), want = mlx_vector_array_new();
        assert_int_equal(mlx_imported_function_apply(&got, f, *calls[c]), 0);
        assert_int_equal(mlx_closure_apply(&want, fun, *calls[c]), 0);
        assert_int_equal((int)mlx_vector_array_size(got), (int)mlx_vector_array_size(want));
        mlx_vector_array_set(&wants[c], want);
        for (size_t j = 0; j < mlx_vector_array_size(want); j++) {
            mlx_array g = mlx_array_new(), w = mlx_array_new();
            mlx_vector_array_get(&g, got, j);
            mlx_vector_array_get(&w, want, j);
            assert_close(g, w, "multi");
            TU_FREE(g, w);
        }
        mlx_vector_array_free(got);
        mlx_vector_array_free(want);
    }
    mlx_vector_array all[3] = {a1, a2, a3};
    save_io("rt_multi", 3, all, NULL, NULL, 0, wants);
    for (int c = 0; c < 3; c++)
        mlx_vector_array_free(wants[c]);
    mlx_imported_function_free(f);
    mlx_vector_array_free(a1);
    mlx_vector_array_free(a2);
    mlx_vector_array_free(a3);
    mlx_closure_free(fun);
    TU_FREE(x1, x2, b, g_weight);
}

/* MLX 0.31 serializes no LU factorization */
static int lu_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), lu = mlx_array_new(), piv = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    mlx_linalg_lu_factor(&lu, &piv, x, tu_stream());
    mlx_vector_array out = mlx_vector_array_new_value(lu);
    mlx_vector_array_set(res, out);
    mlx_vector_array_free(out);
    TU_FREE(x, lu, piv);
    return 0;
}

static void test_export_of_a_primitive_mlx_cannot_read_fails_with_its_name(void **s)
{
    (void)s;
    int shape[2] = {2, 2};
    mlx_array x = seq(4, shape, 2, 1.0f);
    mlx_vector_array args = mlx_vector_array_new_value(x);
    mlx_closure fun = mlx_closure_new_func(lu_fn);
    char path[600];
    out_path(path, sizeof path, "lu", ".mlxfn");
    assert_int_equal(mlx_export_function(path, fun, args, false), 1);
    assert_true(tu_last_error_has("LUF"));
    tu_expect_error("[export_function] Unable to export primitive");
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    mlx_array_free(x);
}

static void test_empty_handles_and_missing_files_fail_with_one_message(void **s)
{
    (void)s;
    mlx_vector_array args = mlx_vector_array_new(), res = mlx_vector_array_new();
    mlx_closure none = mlx_closure_new();
    assert_int_equal(mlx_export_function("/tmp/x.mlxfn", none, args, false), 1);
    tu_expect_error("[export_function]");
    assert_int_equal(mlx_export_function(NULL, none, args, false), 1);
    tu_expect_error("[export_function]");
    assert_null(mlx_function_exporter_new("/tmp/x.mlxfn", none, false).ctx);
    tu_expect_error("[export_function]");
    assert_int_equal(mlx_function_exporter_apply((mlx_function_exporter){NULL}, args), 1);
    tu_expect_error("[export_function]");
    assert_null(mlx_imported_function_new(FIXTURE("no_such_file.mlxfn")).ctx);
    tu_expect_error("[import_function]");
    assert_int_equal(mlx_imported_function_apply(&res, (mlx_imported_function){NULL}, args), 1);
    tu_expect_error("[import_function::call]");
    mlx_closure fun = mlx_closure_new_func(scale_shift);
    assert_null(mlx_function_exporter_new("/no/such/dir/x.mlxfn", fun, false).ctx);
    tu_expect_error("[export_function]");
    /* a positional function given keyword arrays too: the trace takes them as inputs */
    char path[600];
    out_path(path, sizeof path, "rt_pos_kw", ".mlxfn");
    mlx_function_exporter ex = mlx_function_exporter_new(path, fun, false);
    int shape[2] = {2, 3};
    mlx_array x = seq(6, shape, 2, 0.5f);
    mlx_vector_array xs = mlx_vector_array_new_value(x);
    mlx_map_string_to_array kw = mlx_map_string_to_array_new();
    mlx_map_string_to_array_insert(kw, "unused", x);
    assert_int_equal(mlx_function_exporter_apply_kwargs(ex, xs, kw), 0);
    mlx_function_exporter_free(ex);
    mlx_imported_function f = mlx_imported_function_new(path);
    assert_int_equal(mlx_imported_function_apply_kwargs(&res, f, xs, kw), 0);
    assert_int_equal((int)mlx_vector_array_size(res), 2);
    assert_int_equal(mlx_imported_function_apply(&res, f, xs), 1); /* the keyword input is part of it */
    tu_expect_error("[import_function::call]");
    mlx_imported_function_free(f);
    mlx_map_string_to_array_free(kw);
    mlx_vector_array_free(xs);
    mlx_array_free(x);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
}

/* ---- hostile files ---- */

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void write_all(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* Imports bytes; expects failure with one message containing needle. */
static void expect_bad(const uint8_t *b, size_t n, const char *needle)
{
    char path[600];
    out_path(path, sizeof path, "bad", ".mlxfn");
    write_all(path, b, n);
    mlx_imported_function f = mlx_imported_function_new(path);
    if (f.ctx)
        fail_msg("a bad file (%zu bytes, expecting '%s') imported", n, needle ? needle : "");
    if (tu_error_count() != 1)
        fail_msg("%d messages for a bad file, expected one: %s", tu_error_count(), tu_last_error());
    if (needle && !tu_last_error_has(needle))
        fail_msg("message '%s' lacks '%s'", tu_last_error(), needle);
    tu_expect_error("[import_function]");
}

static void test_every_truncation_of_a_file_fails_with_one_message(void **s)
{
    (void)s;
    size_t n;
    uint8_t *b = read_all(FIXTURE("mlp.mlxfn"), &n);
    for (size_t len = 0; len < n; len++)
        expect_bad(b, len, NULL);
    /* and a byte more than the functions need */
    uint8_t *longer = malloc(n + 1);
    memcpy(longer, b, n);
    longer[n] = 0;
    expect_bad(longer, n + 1, "follow the last function");
    free(longer);
    free(b);
}

/* A tiny file, built field by field: one function of input x (id 1) whose
 * tape is the records given. */
typedef struct fbuf {
    uint8_t b[4096];
    size_t n;
} fbuf;

static void put(fbuf *f, const void *p, size_t n)
{
    memcpy(f->b + f->n, p, n);
    f->n += n;
}
static void put_u64(fbuf *f, uint64_t v) { put(f, &v, 8); } /* the test hosts are little-endian */
static void put_i32(fbuf *f, int32_t v) { put(f, &v, 4); }
static void put_u8(fbuf *f, uint8_t v) { put(f, &v, 1); }
static void put_str(fbuf *f, const char *s)
{
    put_u64(f, strlen(s));
    put(f, s, strlen(s));
}
static void put_f32_meta(fbuf *f) /* shape (2,), float32 */
{
    put_u64(f, 1);
    put_i32(f, 2);
    put_i32(f, MLX_FLOAT32);
    put_u8(f, 4);
}

/* Header, then one function with input id 1 (float32 (2,)) and output
 * out_id, and the tape size; the caller appends the records. */
static void begin_file(fbuf *f, int count, uint64_t out_id, uint64_t tape)
{
    f->n = 0;
    put_str(f, "0.31.1");
    put_i32(f, count);
    put_u8(f, 0);
    put_u64(f, 0); /* no keywords */
    put_u64(f, 1);
    put_u64(f, 1); /* input ids */
    put_u64(f, 1);
    put_f32_meta(f); /* inputs */
    put_u64(f, 1);
    put_u64(f, out_id);
    put_u64(f, tape);
}

static void put_node(fbuf *f, uint64_t id, uint64_t in_id, const char *name)
{
    put_u64(f, id);
    put_u8(f, 1);
    put_u64(f, 1);
    put_u64(f, in_id);
    put_i32(f, 0);
    put_i32(f, 0);
    put_i32(f, 0);
    put_str(f, name);
    put_u64(f, 0);
    put_f32_meta(f);
}

/* As put_node, with the primitive's state (n bytes) after its name. */
static void put_node_state(fbuf *f, uint64_t id, const char *name, const void *state, size_t n)
{
    put_u64(f, id);
    put_u8(f, 1);
    put_u64(f, 1);
    put_u64(f, 1); /* reads the input */
    put_i32(f, 0);
    put_i32(f, 0);
    put_i32(f, 0);
    put_str(f, name);
    put(f, state, n);
    put_u64(f, 0);
    put_f32_meta(f);
}

/* One state of a primitive the importer must refuse, and what it says. */
typedef struct bad_state {
    const char *name;
    uint8_t state[40];
    size_t n;
    const char *needle;
} bad_state;

#define U64(v) (v), 0, 0, 0, 0, 0, 0, 0
#define I32(v) \
    (uint8_t)(v), (uint8_t)((uint32_t)(v) >> 8), (uint8_t)((uint32_t)(v) >> 16), (uint8_t)((uint32_t)(v) >> 24)

static void test_hostile_states_of_the_new_primitives_fail_clearly(void **s)
{
    (void)s;
    static const bad_state cases[] = {
        {"RandomBits", {U64(1), I32(3), I32(3)}, 16, "RandomBits of width 3"},
        {"RandomBits", {U64(1), I32(2), I32(4)}, 16, "Expected key type uint32"},
        {"Eigh", {U64(1), 'X', 1}, 10, "uplo is not L or U"},
        {"Eigh", {U64(200), 'L'}, 9, "Eigh's uplo"},
        {"Inverse", {0, 0}, 2, "at least 2 dimensions"},
        {"SVD", {1}, 1, "SVD has 3 outputs here, the record declares 1"},
        {"Quantize", {I32(32), I32(0), I32(0), 0}, 13, "group size 32 and 0 bits"},
        {"Quantize", {I32(32), I32(4), I32(9), 0}, 13, "unknown quantization mode 9"},
        {"GatherQMM", {I32(64), I32(4), I32(0), 1, 0, 0}, 15, "takes 6 to 6 inputs"},
        {"QuantizedMatmul", {I32(64), I32(0), I32(0), 1}, 13, "takes 4 to 4 inputs"},
        {"BroadcastAxes", {U64(1), I32(0)}, 12, "ignores axis 0 of a 1-d input"},
        {"BlockMaskedMM", {I32(16)}, 4, "block size 16"},
        {"DynamicSlice", {U64(1), I32(0), U64(1), I32(2)}, 20, "takes 2 to 2 inputs"},
        {"DivMod", {0}, 0, "takes 2 to 2 inputs"},
        {"MaskedScatter", {0}, 0, "takes 3 to 3 inputs"},
    };
    fbuf f;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        begin_file(&f, 1, 2, 1);
        put_node_state(&f, 2, cases[i].name, cases[i].state, cases[i].n);
        expect_bad(f.b, f.n, cases[i].needle);
    }
    /* the same records with good states import */
    static const bad_state good[] = {
        {"Hadamard", {0, 0, 0, 0x3f}, 4, NULL}, /* scale 0.5 */
        {"Depends", {0}, 0, NULL},
    };
    char path[600];
    out_path(path, sizeof path, "good", ".mlxfn");
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        begin_file(&f, 1, 2, 1);
        put_node_state(&f, 2, good[i].name, good[i].state, good[i].n);
        write_all(path, f.b, f.n);
        mlx_imported_function g = mlx_imported_function_new(path);
        if (!g.ctx)
            fail_msg("%s: %s", good[i].name, tu_last_error());
        mlx_imported_function_free(g);
    }
}

static void test_hand_made_files_import_and_bad_ones_fail_clearly(void **s)
{
    (void)s;
    fbuf f;
    char path[600];
    out_path(path, sizeof path, "good", ".mlxfn");
    /* the good one: exp(x) */
    begin_file(&f, 1, 2, 2);
    put_u64(&f, 1);
    put_u8(&f, 0);
    put_u8(&f, 0);
    put_node(&f, 2, 1, "Exp");
    write_all(path, f.b, f.n);
    mlx_imported_function good = mlx_imported_function_new(path);
    assert_non_null(good.ctx);
    mlx_imported_function_free(good);

    /* a node that reads itself */
    begin_file(&f, 1, 2, 1);
    put_node(&f, 2, 2, "Exp");
    expect_bad(f.b, f.n, "no earlier record defines");
    /* a node that reads a later one */
    begin_file(&f, 1, 3, 2);
    put_node(&f, 2, 3, "Exp");
    put_node(&f, 3, 1, "Exp");
    expect_bad(f.b, f.n, "no earlier record defines");
    /* an output nothing defines */
    begin_file(&f, 1, 9, 1);
    put_node(&f, 2, 1, "Exp");
    expect_bad(f.b, f.n, "an output refers to array id 9");
    /* an id defined twice */
    begin_file(&f, 1, 2, 2);
    put_node(&f, 2, 1, "Exp");
    put_node(&f, 2, 1, "Exp");
    expect_bad(f.b, f.n, "defined twice");
    /* a primitive we do not read */
    begin_file(&f, 1, 2, 1);
    put_node(&f, 2, 1, "LayerNormVJP");
    expect_bad(f.b, f.n, "unsupported primitive 'LayerNormVJP'");
    /* a declared output that is not what the primitive gives */
    begin_file(&f, 1, 2, 1);
    put_node(&f, 2, 1, "Exp");
    f.b[f.n - 5] = MLX_INT32; /* the dtype of the output */
    expect_bad(f.b, f.n, "but the file declares");
    /* an unknown dtype, and a dtype whose size is wrong */
    begin_file(&f, 1, 2, 1);
    put_node(&f, 2, 1, "Exp");
    f.b[f.n - 5] = 99;
    expect_bad(f.b, f.n, "unknown dtype");
    begin_file(&f, 1, 2, 1);
    put_node(&f, 2, 1, "Exp");
    f.b[f.n - 1] = 8;
    expect_bad(f.b, f.n, "size is");
    /* counts larger than the file could hold */
    begin_file(&f, 1000000, 2, 1);
    expect_bad(f.b, f.n, "function count");
    begin_file(&f, 1, 2, UINT64_MAX);
    expect_bad(f.b, f.n, "tape count");
    begin_file(&f, 1, 2, 1);
    put_u64(&f, 2);
    put_u8(&f, 1);
    put_u64(&f, (uint64_t)1 << 40); /* input ids */
    expect_bad(f.b, f.n, "input ids count");
    /* a bool that is not 0 or 1 */
    begin_file(&f, 1, 2, 1);
    put_u64(&f, 2);
    put_u8(&f, 7);
    expect_bad(f.b, f.n, "is a bool");
    /* a constant whose data is cut short */
    begin_file(&f, 1, 1, 1);
    put_u64(&f, 5);
    put_u8(&f, 0);
    put_u8(&f, 1);
    put_f32_meta(&f);
    put_i32(&f, 0);
    expect_bad(f.b, f.n, "constant's data");
    /* a state with an axis out of range */
    begin_file(&f, 1, 2, 1);
    put_u64(&f, 2);
    put_u8(&f, 1);
    put_u64(&f, 1);
    put_u64(&f, 1);
    put_i32(&f, 0);
    put_i32(&f, 0);
    put_i32(&f, 0);
    put_str(&f, "ExpandDims");
    put_u64(&f, 1);
    put_i32(&f, 5);
    put_u64(&f, 0);
    put_f32_meta(&f);
    expect_bad(f.b, f.n, "axis 5");
}

#ifdef MC_FAULT_INJECTION
/* One step that allocates: importing and calling an MLX file with
 * constants (op 0), or exporting a function with a captured weight and a
 * broadcast (op 1). Returns the step's status. */
static int alloc_step(int op)
{
    /* Once an allocation fails every later one does too: the step stops at
     * the first failure, so that exactly one message is expected. */
    if (op == 2) { /* the importers that build several nodes per record */
        static const char *const names[] = {"linalg",    "divmod",   "dynamic", "masked",   "depends",
                                            "qmm_modes", "quantize", "random",  "block_mm", "broadcast_axes"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            char fn_path[512];
            snprintf(fn_path, sizeof fn_path, FIXTURE("%s.mlxfn"), names[i]);
            mlx_imported_function f = mlx_imported_function_new(fn_path);
            if (!f.ctx)
                return 1;
            mlx_imported_function_free(f);
        }
        return 0;
    }
    if (op == 0) {
        mlx_imported_function f = mlx_imported_function_new(FIXTURE("mlp.mlxfn"));
        if (!f.ctx)
            return 1;
        int shape[2] = {5, 4};
        mlx_array x = seq(20, shape, 2, 0.1f);
        mlx_vector_array args = {NULL}, res = {NULL};
        int rc = !x.ctx || !(args = mlx_vector_array_new_value(x)).ctx || !(res = mlx_vector_array_new()).ctx ||
                 mlx_imported_function_apply(&res, f, args);
        mlx_vector_array_free(res);
        mlx_vector_array_free(args);
        mlx_array_free(x);
        mlx_imported_function_free(f);
        return rc;
    }
    char path[600];
    out_path(path, sizeof path, "fault", ".mlxfn");
    int wshape[2] = {4, 3}, xshape[2] = {5, 4}, bshape[1] = {3};
    mlx_array x = {NULL}, b = {NULL};
    mlx_vector_array args = {NULL};
    mlx_closure fun = {NULL};
    g_weight = seq(12, wshape, 2, 0.2f);
    int rc = !g_weight.ctx || !(x = seq(20, xshape, 2, 0.1f)).ctx || !(b = seq(3, bshape, 1, 1.0f)).ctx ||
             !(args = mlx_vector_array_new_value(x)).ctx || mlx_vector_array_append_value(args, b) ||
             !(fun = mlx_closure_new_func(linear_fn)).ctx || mlx_export_function(path, fun, args, false);
    mlx_closure_free(fun);
    mlx_vector_array_free(args);
    TU_FREE(x, b, g_weight);
    return rc;
}
#endif

static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    for (int op = 0; op < 3; op++) {
        for (long n = 0;; n++) {
            mc_fault_fail_after(n);
            int rc = alloc_step(op);
            mc_fault_fail_after(-1);
            if (!rc) {
                tu_expect_no_error();
                break;
            }
            if (tu_error_count() != 1)
                fail_msg("op %d, allocation %ld: %d messages, last \"%s\"", op, n, tu_error_count(),
                         tu_last_error());
            tu_reset_errors();
            assert_true(n < 100000);
        }
    }
#endif
}

static int setup(void **state)
{
    if (tu_scratch_dir_make(out_dir, sizeof out_dir, "MC_EXPORT_OUT_DIR", "export"))
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
        cmocka_unit_test_teardown(test_mlx_unary_functions_import_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_binary_and_comparison_functions_import_with_mlx_values,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_views_slices_and_joins_import_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_reductions_scans_and_sorts_import_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_linear_layers_with_captured_weights_import, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_indexing_and_convolution_import_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_fast_functions_import_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_shapeless_export_runs_at_other_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_keyword_arguments_import, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_exporter_file_with_several_traces_imports, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_factorizations_import_with_every_output, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_divmod_depends_and_masked_scatter_import, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_dynamic_slices_import_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_random_bits_import_with_mlx_bits, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_hadamard_imports_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_gather_and_block_masked_products_import, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_quantized_products_import_in_every_mode, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_shapeless_broadcast_axes_runs_at_other_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_partitions_complex_parts_and_views_import, tu_test_teardown),
        cmocka_unit_test_teardown(test_unsupported_primitive_fails_with_its_name, tu_test_teardown),
        cmocka_unit_test_teardown(test_call_matching_no_trace_fails_naming_the_inputs, tu_test_teardown),
        cmocka_unit_test_teardown(test_exported_elementwise_function_imports_with_its_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_exported_views_and_indexing_import_with_their_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_exported_reductions_import_with_their_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_exported_linear_layer_keeps_its_captured_weight, tu_test_teardown),
        cmocka_unit_test_teardown(test_exported_norms_are_written_as_mlx_cpu_fallbacks, tu_test_teardown),
        cmocka_unit_test_teardown(test_exported_attention_is_written_as_mlx_cpu_fallback, tu_test_teardown),
        cmocka_unit_test_teardown(test_shapeless_export_imports_for_other_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_keyword_arguments_round_trip_by_name, tu_test_teardown),
        cmocka_unit_test_teardown(test_exporter_writes_several_traces_and_refuses_a_repeat, tu_test_teardown),
        cmocka_unit_test_teardown(test_export_of_a_primitive_mlx_cannot_read_fails_with_its_name,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_empty_handles_and_missing_files_fail_with_one_message, tu_test_teardown),
        cmocka_unit_test_teardown(test_every_truncation_of_a_file_fails_with_one_message, tu_test_teardown),
        cmocka_unit_test_teardown(test_hand_made_files_import_and_bad_ones_fail_clearly, tu_test_teardown),
        cmocka_unit_test_teardown(test_hostile_states_of_the_new_primitives_fail_clearly, tu_test_teardown),
        cmocka_unit_test_teardown(test_allocation_failures_report_once_and_leak_nothing, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
