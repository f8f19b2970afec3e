/* The rest of ops.h (src/ops/einsum.c, windows.c, view.c, fp8.c, and
 * complex64 normal samples through view), hadamard.c: hadamard_transform
 * against MLX's float32 bits (test/fixtures/hadamard_cases.h), fp8 against MLX's bytes
 * (test/fixtures/fp8_cases.h), the windows against
 * MLX's float32 bits (test/fixtures/window_cases.h), pad_symmetric, einsum against numpy.einsum on the
 * subscripts of test/fixtures/einsum_cases.h (made by
 * scripts/make_opsmisc_fixtures.py and checked against MLX there), MLX's
 * error messages, gradients through einsum, and bad handles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures/einsum_cases.h"
#include "fixtures/fp8_cases.h"
#include "fixtures/hadamard_cases.h"
#include "fixtures/window_cases.h"
#include "test_util.h"

/* Operand k of a case, as the fixture script builds it. */
static mlx_array operand(int k, int ndim, const int *shape, mlx_dtype d)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    double v[1024];
    assert_true(n <= 1024);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((long)(7 * i + 3 * (size_t)k) % 11 - 5) / 4.0;
    return tu_array_of(d, v, shape, ndim);
}

/* float32 ones of a shape. */
static mlx_array mlx_ones_like_f32(const int *shape)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_ones(&r, shape, 2, MLX_FLOAT32, tu_stream()), 0);
    return r;
}

/* Reads a case's dims into operands; returns the index after them. */
static int operands_of(const int *dims, mlx_vector_array ops, mlx_dtype d)
{
    int at = 1;
    for (int k = 0; k < dims[0]; k++) {
        int nd = dims[at];
        mlx_array a = operand(k, nd, dims + at + 1, d);
        mlx_vector_array_append_value(ops, a);
        mlx_array_free(a);
        at += 1 + nd;
    }
    return at;
}

static void check_case(size_t c, mlx_dtype d, double tol)
{
    mlx_vector_array ops = mlx_vector_array_new();
    int at = operands_of(einsum_cases[c].dims, ops, d);
    mlx_array r = mlx_array_new();
    if (mlx_einsum(&r, einsum_cases[c].subs, ops, tu_stream()))
        fail_msg("einsum \"%s\" failed: %s", einsum_cases[c].subs, tu_last_error());
    int nd = einsum_cases[c].dims[at];
    const int *shape = einsum_cases[c].dims + at + 1;
    if (!tu_shape_is(r, nd, shape))
        fail_msg("einsum \"%s\": wrong shape", einsum_cases[c].subs);
    assert_int_equal(mlx_array_dtype(r), d);
    size_t n = mlx_array_size(r);
    for (size_t i = 0; i < n; i++) {
        double e = einsum_out[einsum_cases[c].at + (int)i], g = tu_get(r, i);
        if (fabs(g - e) > tol * (1 + fabs(e)))
            fail_msg("einsum \"%s\" [%zu]: %g, numpy %g", einsum_cases[c].subs, i, g, e);
    }
    mlx_array_free(r);
    mlx_vector_array_free(ops);
}

static void test_every_case_equals_numpy_in_float32_and_float64(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof einsum_cases / sizeof *einsum_cases; c++) {
        check_case(c, MLX_FLOAT32, 1e-5);
        check_case(c, MLX_FLOAT64, 1e-12);
    }
}

static void test_bad_subscripts_report_mlx_messages(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof einsum_errors / sizeof *einsum_errors; c++) {
        mlx_vector_array ops = mlx_vector_array_new();
        operands_of(einsum_errors[c].dims, ops, MLX_FLOAT32);
        mlx_array r = mlx_array_new();
        assert_int_equal(mlx_einsum(&r, einsum_errors[c].subs, ops, tu_stream()), 1);
        if (strcmp(tu_last_error(), einsum_errors[c].msg) != 0)
            fail_msg("einsum \"%s\": \"%s\", MLX \"%s\"", einsum_errors[c].subs, tu_last_error(),
                     einsum_errors[c].msg);
        tu_expect_error("[einsum]");
        assert_null(r.ctx);
        mlx_vector_array_free(ops);
    }
}

static void test_integer_products_fail_in_matmul_as_in_mlx(void **state)
{
    (void)state;
    int sh[2] = {2, 2};
    mlx_vector_array ops = mlx_vector_array_new();
    mlx_array a = operand(0, 2, sh, MLX_INT32);
    mlx_vector_array_append_value(ops, a);
    mlx_vector_array_append_value(ops, a);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_einsum(&r, "ij,jk", ops, tu_stream()), 1);
    tu_expect_error("[matmul] Only inexact types are supported");
    /* Without a contraction the product stays integer, as in MLX. */
    assert_int_equal(mlx_einsum(&r, "ij,ij->ij", ops, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    /* Traces of integers are sums: no matmul. */
    mlx_vector_array one = mlx_vector_array_new_value(a);
    assert_int_equal(mlx_einsum(&r, "ii", one, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    TU_FREE(a, r);
    mlx_vector_array_free(ops);
    mlx_vector_array_free(one);
}

static void test_output_letter_missing_from_inputs_is_an_einsum_error(void **state)
{
    (void)state;
    int sh[2] = {2, 3};
    mlx_array a = operand(0, 2, sh, MLX_FLOAT32);
    mlx_vector_array ops = mlx_vector_array_new_value(a);
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_einsum(&r, "ij->ijk", ops, tu_stream()), 1);
    tu_expect_error("[einsum] Output subscript 'k' does not appear in any input.");
    assert_int_equal(mlx_einsum(&r, NULL, ops, tu_stream()), 1);
    tu_expect_error("[einsum]");
    mlx_vector_array empty = mlx_vector_array_new();
    assert_int_equal(mlx_einsum(&r, "i", empty, tu_stream()), 1);
    tu_expect_error("[einsum] At least one operand is required.");
    assert_int_equal(mlx_einsum(NULL, "ij", ops, tu_stream()), 1);
    tu_expect_error("[einsum]");
    TU_FREE(a, r);
    mlx_vector_array_free(ops);
    mlx_vector_array_free(empty);
}

/* d/dA sum(A @ B) = ones @ B^T; through einsum "ij,jk->" . */
static int einsum_sum(mlx_vector_array *out, const mlx_vector_array in)
{
    mlx_array r = mlx_array_new();
    int rc = mlx_einsum(&r, "ij,jk,kl->", in, tu_stream());
    rc = rc || mlx_vector_array_set_value(out, r);
    mlx_array_free(r);
    return rc;
}

static void test_gradient_of_a_chain_equals_the_closed_form(void **state)
{
    (void)state;
    int sa[2] = {2, 3}, sb[2] = {3, 4}, sc[2] = {4, 2};
    mlx_array a = operand(0, 2, sa, MLX_FLOAT64), b = operand(1, 2, sb, MLX_FLOAT64),
              c = operand(2, 2, sc, MLX_FLOAT64);
    mlx_vector_array in = mlx_vector_array_new();
    mlx_vector_array_append_value(in, a);
    mlx_vector_array_append_value(in, b);
    mlx_vector_array_append_value(in, c);
    mlx_closure f = mlx_closure_new_func(einsum_sum);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    int argnums[1] = {0};
    assert_int_equal(mlx_value_and_grad(&vg, f, argnums, 1), 0);
    mlx_vector_array val = mlx_vector_array_new(), grad = mlx_vector_array_new();
    assert_int_equal(mlx_closure_value_and_grad_apply(&val, &grad, vg, in), 0);
    mlx_array g = mlx_array_new(), bc = mlx_array_new(), exp = mlx_array_new();
    mlx_vector_array_get(&g, grad, 0);
    /* d/dA_ij = sum_l (B C)_jl */
    assert_int_equal(mlx_matmul(&bc, b, c, tu_stream()), 0);
    assert_int_equal(mlx_sum_axis(&exp, bc, 1, false, tu_stream()), 0);
    assert_true(tu_shape_is(g, 2, sa));
    for (size_t i = 0; i < 6; i++)
        assert_true(fabs(tu_get(g, i) - tu_get(exp, i % 3)) < 1e-12);
    TU_FREE(a, b, c, g, bc, exp);
    mlx_vector_array_free(in);
    mlx_vector_array_free(val);
    mlx_vector_array_free(grad);
    mlx_closure_free(f);
    mlx_closure_value_and_grad_free(vg);
}

typedef int (*window_fn)(mlx_array *, int, mlx_stream);

/* Our sin and cos may differ from MLX's by an ulp or two, which the
 * window's arithmetic then carries: bound the difference in ulps of the
 * window's largest value (1). */
static void test_windows_equal_mlx_float32(void **state)
{
    (void)state;
    window_fn f[4] = {mlx_bartlett, mlx_blackman, mlx_hamming, mlx_hanning};
    const char *names[4] = {"bartlett", "blackman", "hamming", "hanning"};
    size_t at = 0, nm = sizeof window_m / sizeof *window_m;
    for (int w = 0; w < 4; w++)
        for (size_t k = 0; k < nm; k++) {
            mlx_array r = mlx_array_new();
            assert_int_equal(f[w](&r, window_m[k], tu_stream()), 0);
            assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
            assert_int_equal(mlx_array_size(r), window_m[k]);
            for (int i = 0; i < window_m[k]; i++) {
                float e = tu_bits_to_f32(window_bits[at + (size_t)i]), g = (float)tu_get(r, (size_t)i);
                /* bartlett has no transcendental step: bit for bit */
                float tol = w == 0 ? 0.0f : 4 * 0x1p-24f;
                if (fabsf(g - e) > tol)
                    fail_msg("%s(%d)[%d]: %.9g, MLX %.9g", names[w], window_m[k], i, g, e);
            }
            at += (size_t)window_m[k];
            mlx_array_free(r);
        }
}

static void test_windows_of_fewer_than_two_points_are_empty_or_one(void **state)
{
    (void)state;
    window_fn f[4] = {mlx_bartlett, mlx_blackman, mlx_hamming, mlx_hanning};
    for (int w = 0; w < 4; w++) {
        mlx_array r = mlx_array_new();
        int zero[1] = {0}, one[1] = {1};
        assert_int_equal(f[w](&r, -3, tu_stream()), 0);
        assert_true(tu_shape_is(r, 1, zero));
        assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
        assert_int_equal(f[w](&r, 0, tu_stream()), 0);
        assert_true(tu_shape_is(r, 1, zero));
        assert_int_equal(f[w](&r, 1, tu_stream()), 0);
        assert_true(tu_shape_is(r, 1, one));
        assert_true(tu_get(r, 0) == 1.0);
        assert_int_equal(f[w](NULL, 5, tu_stream()), 1);
        tu_reset_errors();
        mlx_array_free(r);
    }
}

/* numpy.pad(arange(6).reshape(2, 3), 2, mode) for each mode. */
static void test_pad_symmetric_pads_every_axis_as_numpy(void **state)
{
    (void)state;
    static const double symmetric[] = {4, 3, 3, 4, 5, 5, 4, 1, 0, 0, 1, 2, 2, 1, 1, 0, 0, 1, 2, 2, 1,
                                       4, 3, 3, 4, 5, 5, 4, 4, 3, 3, 4, 5, 5, 4, 1, 0, 0, 1, 2, 2, 1};
    static const double edge[] = {0, 0, 0, 1, 2, 2, 2, 0, 0, 0, 1, 2, 2, 2, 0, 0, 0, 1, 2, 2, 2,
                                  3, 3, 3, 4, 5, 5, 5, 3, 3, 3, 4, 5, 5, 5, 3, 3, 3, 4, 5, 5, 5};
    double v[6] = {0, 1, 2, 3, 4, 5};
    int sh[2] = {2, 3}, out[2] = {6, 7};
    mlx_array a = tu_array_of(MLX_FLOAT32, v, sh, 2), z = mlx_array_new_float32(7), r = mlx_array_new();
    assert_int_equal(mlx_pad_symmetric(&r, a, 2, z, "symmetric", tu_stream()), 0);
    assert_true(tu_shape_is(r, 2, out));
    for (size_t i = 0; i < 42; i++)
        assert_true(tu_get(r, i) == symmetric[i]);
    assert_int_equal(mlx_pad_symmetric(&r, a, 2, z, "edge", tu_stream()), 0);
    for (size_t i = 0; i < 42; i++)
        assert_true(tu_get(r, i) == edge[i]);
    assert_int_equal(mlx_pad_symmetric(&r, a, 1, z, "constant", tu_stream()), 0);
    assert_true(tu_get(r, 0) == 7 && tu_get(r, 6) == 0);
    assert_int_equal(mlx_pad_symmetric(&r, a, -1, z, "constant", tu_stream()), 1);
    tu_expect_error("[pad]");
    assert_int_equal(mlx_pad_symmetric(&r, (mlx_array){NULL}, 1, z, "constant", tu_stream()), 1);
    tu_expect_error("[pad]");
    TU_FREE(a, z, r);
}

static void test_view_reads_bytes_as_mlx_does(void **state)
{
    (void)state;
    double v[2] = {1.0, -2.0};
    int sh2[1] = {2}, sh8[1] = {8};
    mlx_array a = tu_array_of(MLX_FLOAT32, v, sh2, 1), r = mlx_array_new();
    assert_int_equal(mlx_view(&r, a, MLX_UINT8, tu_stream()), 0);
    assert_true(tu_shape_is(r, 1, sh8));
    static const double bytes[8] = {0, 0, 128, 63, 0, 0, 0, 192};
    for (size_t i = 0; i < 8; i++)
        assert_true(tu_get(r, i) == bytes[i]);
    /* back again: the same floats */
    assert_int_equal(mlx_view(&r, r, MLX_FLOAT32, tu_stream()), 0);
    assert_true(tu_shape_is(r, 1, sh2) && tu_get(r, 0) == 1.0 && tu_get(r, 1) == -2.0);

    /* int8 0..7 as (2, 4) read as float32: MLX's bits 0x03020100, 0x07060504 */
    double iv[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int s24[2] = {2, 4}, s21[2] = {2, 1};
    mlx_array b = tu_array_of(MLX_INT8, iv, s24, 2);
    assert_int_equal(mlx_view(&r, b, MLX_FLOAT32, tu_stream()), 0);
    assert_true(tu_shape_is(r, 2, s21));
    assert_int_equal(mlx_array_eval(r), 0);
    const float *f = mlx_array_data_float32(r);
    assert_int_equal(tu_f32_to_bits(f[0]), 50462976u);
    assert_int_equal(tu_f32_to_bits(f[1]), 117835012u);

    /* a transposed int16 view read as uint16 keeps its logical order */
    int s23[2] = {2, 3}, s32[2] = {3, 2}, perm[2] = {1, 0};
    mlx_array c = tu_array_of(MLX_INT16, iv, s23, 2), t = mlx_array_new();
    assert_int_equal(mlx_transpose_axes(&t, c, perm, 2, tu_stream()), 0);
    assert_int_equal(mlx_view(&r, t, MLX_UINT16, tu_stream()), 0);
    assert_true(tu_shape_is(r, 2, s32));
    static const double tv[6] = {0, 3, 1, 4, 2, 5};
    for (size_t i = 0; i < 6; i++)
        assert_true(tu_get(r, i) == tv[i]);
    TU_FREE(a, b, c, t, r);
}

static void test_view_rejects_mlx_bad_sizes_and_has_no_gradient(void **state)
{
    (void)state;
    double v[3] = {1, 2, 3};
    int sh[1] = {3};
    mlx_array one = mlx_array_new_float32(1.0f), a = tu_array_of(MLX_INT8, v, sh, 1), r = mlx_array_new();
    assert_int_equal(mlx_view(&r, one, MLX_FLOAT16, tu_stream()), 1);
    tu_expect_error("[view] Changing the type of a scalar is only allowed for types with the same size.");
    assert_int_equal(mlx_view(&r, a, MLX_INT16, tu_stream()), 1);
    tu_expect_error(
        "[view] When viewing as a larger dtype, the size in bytes of the last axis must be a multiple of "
        "the requested type size.");
    assert_int_equal(mlx_view(&r, one, MLX_INT32, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    assert_int_equal(mlx_view(&r, one, (mlx_dtype)99, tu_stream()), 1);
    tu_expect_error("[view]");

    /* no vjp, as in MLX */
    mlx_array x = tu_array_of(MLX_FLOAT32, v, sh, 1), ct = mlx_array_new();
    assert_int_equal(mlx_view(&r, x, MLX_INT32, tu_stream()), 0);
    assert_int_equal(mlx_view(&ct, r, MLX_FLOAT32, tu_stream()), 0);
    mlx_array_free(ct);
    TU_FREE(one, a, x, r);
}

static int view_fn(mlx_vector_array *out, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), r = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_view(&r, x, MLX_INT32, tu_stream()) ||
             mlx_view(&r, r, MLX_FLOAT32, tu_stream()) || mlx_sum(&r, r, false, tu_stream()) ||
             mlx_vector_array_set_value(out, r);
    TU_FREE(x, r);
    return rc;
}

static void test_gradient_through_view_is_mlx_error(void **state)
{
    (void)state;
    double v[3] = {1, 2, 3};
    int sh[1] = {3};
    mlx_array x = tu_array_of(MLX_FLOAT32, v, sh, 1);
    mlx_vector_array in = mlx_vector_array_new_value(x), val = mlx_vector_array_new(), g = mlx_vector_array_new();
    mlx_closure f = mlx_closure_new_func(view_fn);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    int argnums[1] = {0};
    assert_int_equal(mlx_value_and_grad(&vg, f, argnums, 1), 0);
    assert_int_not_equal(mlx_closure_value_and_grad_apply(&val, &g, vg, in), 0);
    assert_true(tu_last_error_has("View"));
    tu_reset_errors();
    mlx_array_free(x);
    mlx_vector_array_free(in), mlx_vector_array_free(val), mlx_vector_array_free(g);
    mlx_closure_free(f);
    mlx_closure_value_and_grad_free(vg);
}

/* MLX 0.31.1: mx.random.normal((3, 2), complex64, key=mx.random.key(5)),
 * then (3,) with loc 1 and scale 2: float32 bits of re, im pairs. */
static void test_complex_normal_equals_mlx(void **state)
{
    (void)state;
    static const uint32_t plain[12] = {3213503910u, 1073811993u, 1023715430u, 1060516187u,
                                       1016445761u, 3193114323u, 3212736951u, 1065849403u,
                                       1040178503u, 3197941441u, 3211386402u, 1063630234u};
    static const uint32_t scaled[6] = {1071048556u, 1061013996u, 1071828548u,
                                       1062148233u, 3214017604u, 1050500595u};
    mlx_array key = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_random_key(&key, 5), 0);
    int sh[2] = {3, 2};
    for (int k = 0; k < 2; k++) {
        int nd = k ? 1 : 2;
        assert_int_equal(mlx_random_normal(&r, sh, (size_t)nd, MLX_COMPLEX64, k ? 1.0f : 0.0f, k ? 2.0f : 1.0f,
                                           key, tu_stream()),
                         0);
        assert_int_equal(mlx_array_dtype(r), MLX_COMPLEX64);
        assert_true(tu_shape_is(r, nd, sh));
        assert_int_equal(mlx_array_eval(r), 0);
        const float *f = (const float *)mlx_array_data_complex64(r);
        const uint32_t *e = k ? scaled : plain;
        for (size_t i = 0; i < (k ? 6u : 12u); i++) {
            float want = tu_bits_to_f32(e[i]);
            /* erfinv may differ from MLX's by an ulp */
            if (fabsf(f[i] - want) > 4e-7f * (1 + fabsf(want)))
                fail_msg("complex normal %d [%zu]: %.9g, MLX %.9g", k, i, f[i], want);
        }
    }
    TU_FREE(key, r);
}

static void test_to_fp8_equals_mlx_bytes(void **state)
{
    (void)state;
    int n = (int)(sizeof fp8_in / sizeof *fp8_in);
    float v[sizeof fp8_in / sizeof *fp8_in];
    for (int i = 0; i < n; i++)
        v[i] = tu_bits_to_f32(fp8_in[i]);
    mlx_array x = tu_f32(v, &n, 1), r = mlx_array_new(), t = mlx_array_new();
    assert_int_equal(mlx_to_fp8(&r, x, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_UINT8);
    assert_int_equal(mlx_array_eval(r), 0);
    const uint8_t *b = mlx_array_data_uint8(r);
    for (int i = 0; i < n; i++)
        if (b[i] != fp8_out[i])
            fail_msg("to_fp8(%.9g) = 0x%02x, MLX 0x%02x", v[i], b[i], fp8_out[i]);
    /* a strided view converts its own elements */
    mlx_array two = mlx_array_new_int(2);
    int start[1] = {1}, stop[1] = {n}, step[1] = {2};
    assert_int_equal(mlx_slice(&t, x, start, 1, stop, 1, step, 1, tu_stream()), 0);
    assert_int_equal(mlx_to_fp8(&r, t, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    b = mlx_array_data_uint8(r);
    for (int i = 1; i < n; i += 2)
        assert_int_equal(b[i / 2], fp8_out[i]);
    TU_FREE(x, r, t, two);
}

static void test_from_fp8_of_every_byte_equals_mlx(void **state)
{
    (void)state;
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    int n = 256;
    mlx_array x = mlx_array_new_data(all, &n, 1, MLX_UINT8), r = mlx_array_new();
    mlx_dtype ds[4] = {MLX_FLOAT32, MLX_FLOAT16, MLX_BFLOAT16, MLX_FLOAT64};
    for (int d = 0; d < 4; d++) {
        assert_int_equal(mlx_from_fp8(&r, x, ds[d], tu_stream()), 0);
        assert_int_equal(mlx_array_dtype(r), ds[d]);
        for (int i = 0; i < 256; i++)
            if (tu_get(r, (size_t)i) != (double)tu_bits_to_f32(fp8_every[i]))
                fail_msg("from_fp8(0x%02x) as dtype %d: %g, MLX %g", i, ds[d], tu_get(r, (size_t)i),
                         (double)tu_bits_to_f32(fp8_every[i]));
    }
    /* and back: every byte but the negative zero round-trips */
    assert_int_equal(mlx_from_fp8(&r, x, MLX_FLOAT32, tu_stream()), 0);
    assert_int_equal(mlx_to_fp8(&r, r, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    const uint8_t *b = mlx_array_data_uint8(r);
    for (int i = 0; i < 256; i++)
        if ((i & 127) != 127)
            assert_int_equal(b[i], i);
    TU_FREE(x, r);
}

static void test_fp8_rejects_mlx_bad_dtypes(void **state)
{
    (void)state;
    int sh[1] = {2};
    int32_t iv[2] = {1, 2};
    mlx_array i = tu_i32(iv, sh, 1), f = mlx_array_new_float32(1.0f), r = mlx_array_new();
    assert_int_equal(mlx_to_fp8(&r, i, tu_stream()), 1);
    tu_expect_error("[to_fp8] Only real floating types are supported but x.dtype() == int32.");
    assert_int_equal(mlx_from_fp8(&r, f, MLX_FLOAT32, tu_stream()), 1);
    tu_expect_error("[from_fp8] Input must have type uint8 but x.dtype() == float32.");
    assert_int_equal(mlx_to_fp8(&r, f, tu_stream()), 0);
    assert_int_equal(mlx_from_fp8(&r, r, MLX_INT32, tu_stream()), 1);
    tu_expect_error("[from_fp8] Only real floating types are supported but dtype == int32.");
    TU_FREE(i, f, r);
}

static void test_hadamard_equals_mlx_float32_bits(void **state)
{
    (void)state;
    size_t at = 0, nn = sizeof had_n / sizeof *had_n;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < nn; k++) {
            int sh[2] = {3, had_n[k]};
            mlx_array x = operand(0, 2, sh, MLX_FLOAT32), r = mlx_array_new();
            mlx_optional_float sc = {pass ? 0.5f : 0.0f, pass == 1};
            assert_int_equal(mlx_hadamard_transform(&r, x, sc, tu_stream()), 0);
            assert_true(tu_shape_is(r, 2, sh));
            assert_int_equal(mlx_array_eval(r), 0);
            const float *f = mlx_array_data_float32(r);
            for (int i = 0; i < 3 * had_n[k]; i++)
                if (tu_f32_to_bits(f[i]) != had_bits[at + (size_t)i])
                    fail_msg("hadamard n=%d scale %d [%d]: %.9g, MLX %.9g", had_n[k], pass, i, f[i],
                             tu_bits_to_f32(had_bits[at + (size_t)i]));
            at += (size_t)(3 * had_n[k]);
            TU_FREE(x, r);
        }
}

static void test_hadamard_sizes_dtypes_and_scalars_as_mlx(void **state)
{
    (void)state;
    mlx_optional_float none = {0.0f, false}, one = {1.0f, true};
    int s6[2] = {2, 6}, s0[2] = {0, 4};
    mlx_array x6 = mlx_ones_like_f32(s6), x0 = mlx_ones_like_f32(s0), r = mlx_array_new();
    assert_int_equal(mlx_hadamard_transform(&r, x6, none, tu_stream()), 1);
    tu_expect_error("[hadamard_transform] Only supports n = m*2^k where m in (1, 12, 20, 28).");
    assert_int_equal(mlx_hadamard_transform(&r, x0, none, tu_stream()), 1);
    tu_expect_error("[hadamard_transform] Does not support empty arrays.");
    /* a size-1 axis: a * scale, or a itself (int32 kept) for scale 1 */
    mlx_array i3 = mlx_array_new_int(3);
    assert_int_equal(mlx_hadamard_transform(&r, i3, one, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_INT32);
    assert_int_equal(mlx_hadamard_transform(&r, i3, (mlx_optional_float){2.0f, true}, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    assert_true(tu_get(r, 0) == 6.0);
    /* float16 in, float16 out; float64 is refused */
    int s4[1] = {4};
    double v[4] = {1, 2, 3, 4};
    mlx_array h = tu_array_of(MLX_FLOAT16, v, s4, 1), d = tu_array_of(MLX_FLOAT64, v, s4, 1);
    assert_int_equal(mlx_hadamard_transform(&r, h, none, tu_stream()), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT16);
    assert_true(tu_get(r, 0) == 5.0 && tu_get(r, 1) == -1.0 && tu_get(r, 2) == -2.0 && tu_get(r, 3) == 0.0);
    assert_int_equal(mlx_hadamard_transform(&r, d, none, tu_stream()), 1);
    tu_expect_error("[hadamard_transform] Unsupported type float64");
    TU_FREE(x6, x0, r, i3, h, d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_every_case_equals_numpy_in_float32_and_float64),
        T(test_bad_subscripts_report_mlx_messages),
        T(test_integer_products_fail_in_matmul_as_in_mlx),
        T(test_output_letter_missing_from_inputs_is_an_einsum_error),
        T(test_gradient_of_a_chain_equals_the_closed_form),
        T(test_windows_equal_mlx_float32),
        T(test_windows_of_fewer_than_two_points_are_empty_or_one),
        T(test_pad_symmetric_pads_every_axis_as_numpy),
        T(test_view_reads_bytes_as_mlx_does),
        T(test_view_rejects_mlx_bad_sizes_and_has_no_gradient),
        T(test_gradient_through_view_is_mlx_error),
        T(test_complex_normal_equals_mlx),
        T(test_to_fp8_equals_mlx_bytes),
        T(test_from_fp8_of_every_byte_equals_mlx),
        T(test_fp8_rejects_mlx_bad_dtypes),
        T(test_hadamard_equals_mlx_float32_bits),
        T(test_hadamard_sizes_dtypes_and_scalars_as_mlx),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
