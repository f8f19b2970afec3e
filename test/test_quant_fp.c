/* Suite 'quant_fp': MLX 0.31.1's floating point quantization modes
 * (mxfp4, mxfp8, nvfp4) in src/ops/quant.c, src/graph/prims_quant.c and
 * simd/quant_fp.c, quant_k.c: quantize packs bit for bit as MLX, dequantize
 * gives MLX's values bit for bit, quantized_matmul, gather_qmm, the vjp
 * with respect to x and qqmm match MLX's results, MLX's test_quantized.py
 * cases for these modes, and MLX's messages for bad arguments. Expected
 * values: test/fixtures/quant_fp_cases.h (scripts/make_quant_fp_fixtures.py). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#include "fixtures/quant_fp_cases.h"
#include "quant_inputs.h"
#include "simd/quant.h"
#include "simd/simd.h"

static const mlx_optional_int no_int = {0, false};
static const mlx_optional_dtype no_dtype = {MLX_FLOAT32, false};
static const mlx_array none = {NULL};
static const char *const modes[4] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

static mlx_optional_int some(int v) { return (mlx_optional_int){v, true}; }

/* |a - MLX| within tol * (1 + |MLX|): sums in another order (MLX's CPU
 * accumulates in the input dtype with its own vector width). */
static void expect_close_bits(mlx_array a, const uint32_t *bits, size_t n, double tol, const char *what, int ci)
{
    mlx_array f = qi_as_f32(a);
    assert_int_equal(mlx_array_size(f), n);
    const float *v = mlx_array_data_float32(f);
    for (size_t i = 0; i < n; i++) {
        double want = (double)tu_bits_to_f32(bits[i]);
        if (!(fabs((double)v[i] - want) <= tol * (1.0 + fabs(want))))
            fail_msg("case %d %s[%zu]: %.9g, MLX %.9g", ci, what, i, (double)v[i], want);
    }
    mlx_array_free(f);
}

static mlx_array u32_array(const uint32_t *w, int ndim, const int *shape)
{
    return mlx_array_new_data(w, shape, ndim, MLX_UINT32);
}

static mlx_array u8_array(const uint8_t *s, int ndim, const int *shape)
{
    return mlx_array_new_data(s, shape, ndim, MLX_UINT8);
}

/* quantize in an fp mode: {packed, scales} into *q, *s. */
static int quantize_fp(mlx_array w, const char *mode, mlx_array g, mlx_array *q, mlx_array *s)
{
    mlx_vector_array r = mlx_vector_array_new();
    int rc = mlx_quantize(&r, w, no_int, no_int, mode, g, tu_stream());
    if (!rc) {
        assert_int_equal(mlx_vector_array_size(r), 2);
        *q = mlx_array_new();
        *s = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(q, r, 0), 0);
        assert_int_equal(mlx_vector_array_get(s, r, 1), 0);
    }
    mlx_vector_array_free(r);
    return rc;
}

static mlx_array max_abs(mlx_array w)
{
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_abs(&a, w, tu_stream()), 0);
    assert_int_equal(mlx_max(&a, a, false, tu_stream()), 0);
    assert_int_equal(mlx_astype(&a, a, MLX_FLOAT32, tu_stream()), 0);
    return a;
}

static void test_quantize_packs_bit_for_bit_as_mlx(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof fp_cases / sizeof fp_cases[0]; ci++) {
        const fp_case *c = &fp_cases[ci];
        int shape[2] = {2, 64};
        mlx_array w = qi_gen_array(2, shape, c->seed, c->kind, c->dtype), q, s;
        mlx_array g = c->global ? max_abs(w) : none;
        assert_int_equal(quantize_fp(w, modes[c->mode], g, &q, &s), 0);
        assert_int_equal(mlx_array_eval(q), 0);
        assert_int_equal(mlx_array_eval(s), 0);
        assert_int_equal(mlx_array_dtype(q), MLX_UINT32);
        assert_int_equal(mlx_array_dtype(s), MLX_UINT8);
        assert_int_equal((int)mlx_array_size(q), c->nwords);
        const uint32_t *qd = mlx_array_data_uint32(q);
        for (int i = 0; i < c->nwords; i++)
            if (qd[i] != c->packed[i])
                fail_msg("case %zu (%s kind %d) word %d: %08x, MLX %08x", ci, modes[c->mode], c->kind, i, qd[i],
                         c->packed[i]);
        const uint8_t *sd = mlx_array_data_uint8(s);
        for (size_t i = 0; i < mlx_array_size(s); i++)
            if (sd[i] != c->scales[i])
                fail_msg("case %zu (%s kind %d) scale %zu: %u, MLX %u", ci, modes[c->mode], c->kind, i, sd[i],
                         c->scales[i]);
        tu_free_n((mlx_array[]){w, q, s}, 3);
        if (c->global)
            mlx_array_free(g);
    }
}

static void test_dequantize_matches_mlx_bit_for_bit(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof fp_cases / sizeof fp_cases[0]; ci++) {
        const fp_case *c = &fp_cases[ci];
        int shape[2] = {2, 64}, qshape[2] = {2, c->nwords / 2}, sshape[2] = {2, 64 / (c->mode == 3 ? 16 : 32)};
        mlx_array w = qi_gen_array(2, shape, c->seed, c->kind, c->dtype);
        mlx_array g = c->global ? max_abs(w) : none;
        mlx_array q = u32_array(c->packed, 2, qshape), s = u8_array(c->scales, 2, sshape);
        mlx_array d = mlx_array_new(), dd = mlx_array_new();
        mlx_optional_dtype dt = {c->dtype, true};
        assert_int_equal(mlx_dequantize(&d, q, s, none, no_int, no_int, modes[c->mode], g, dt, tu_stream()), 0);
        assert_int_equal(mlx_dequantize(&dd, q, s, none, no_int, no_int, modes[c->mode], g, no_dtype, tu_stream()),
                         0);
        assert_int_equal(mlx_array_dtype(d), c->deq_dtype);
        assert_int_equal(mlx_array_dtype(dd), c->global ? MLX_FLOAT32 : MLX_BFLOAT16);
        qi_expect_bits(d, c->deq, 128, "dequantize", (int)ci);
        qi_expect_bits(dd, c->deq_default ? c->deq_default : c->deq, 128, "dequantize(default dtype)", (int)ci);
        tu_free_n((mlx_array[]){w, q, s, d, dd}, 5);
        if (c->global)
            mlx_array_free(g);
    }
}

/* The products of one mode's fixture (see quant_fp_cases.h). */
typedef struct mode_data {
    mlx_array w, s, w0, s0, x2, x3, xu, cot;
} mode_data;

static mode_data mode_load(int m)
{
    int bits = m == 1 ? 8 : 4, gs = m == 2 ? 16 : 32;
    int wsh[3] = {4, 32, 64 * bits / 32}, ssh[3] = {4, 32, 64 / gs};
    int s2[2] = {3, 64}, s3[3] = {4, 3, 64}, su[2] = {3, 32};
    mode_data d;
    d.w = u32_array(mw[m], 3, wsh);
    d.s = u8_array(ms[m], 3, ssh);
    d.w0 = u32_array(mw[m], 2, wsh + 1);
    d.s0 = u8_array(ms[m], 2, ssh + 1);
    d.x2 = qi_gen_array(2, s2, 600 + m, 0, MLX_FLOAT32);
    d.x3 = qi_gen_array(3, s3, 700 + m, 0, MLX_FLOAT32);
    d.xu = qi_gen_array(2, su, 800 + m, 0, MLX_FLOAT32);
    d.cot = qi_gen_array(2, su, 900 + m, 0, MLX_FLOAT32);
    return d;
}

static void mode_free(mode_data *d)
{
    tu_free_n((mlx_array[]){d->w, d->s, d->w0, d->s0, d->x2, d->x3, d->xu, d->cot}, 8);
}

static void test_quantized_matmul_matches_mlx(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    for (int m = 0; m < 3; m++) {
        const char *mode = modes[m + 1];
        mode_data d = mode_load(m);
        mlx_array y = mlx_array_new(), xh = mlx_array_new();
        assert_int_equal(mlx_quantized_matmul(&y, d.x2, d.w0, d.s0, none, true, no_int, no_int, mode, st), 0);
        expect_close_bits(y, mt[m], 96, 1e-5, "transposed", m);
        assert_int_equal(mlx_quantized_matmul(&y, d.x3, d.w, d.s, none, true, no_int, no_int, mode, st), 0);
        expect_close_bits(y, mb[m], 4 * 96, 1e-5, "batched", m);
        assert_int_equal(mlx_quantized_matmul(&y, d.xu, d.w0, d.s0, none, false, no_int, no_int, mode, st), 0);
        expect_close_bits(y, mu[m], 192, 1e-5, "untransposed", m);
        assert_int_equal(mlx_astype(&xh, d.x2, MLX_FLOAT16, st), 0);
        assert_int_equal(mlx_quantized_matmul(&y, xh, d.w0, d.s0, none, true, no_int, no_int, mode, st), 0);
        assert_int_equal(mlx_array_dtype(y), MLX_FLOAT16);
        /* MLX sums in float16 there; this in float32 */
        expect_close_bits(y, mh[m], 96, 2e-2, "float16", m);
        tu_free_n((mlx_array[]){y, xh}, 2);
        mode_free(&d);
    }
}

/* MLX's test_fp_qmv: the product equals x @ dequantize(w)^T. */
static void test_quantized_matmul_is_product_with_dequantized(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    int ks[2] = {64, 256}, ns[3] = {256, 67, 48};
    for (int m = 1; m <= 3; m++) {
        for (int ki = 0; ki < 2; ki++) {
            for (int ni = 0; ni < 3; ni++) {
                if (ns[ni] == 48 && m != 3)
                    continue;
                int K = ns[ni] == 48 ? 48 : ks[ki], N = ns[ni] == 48 ? 128 : ns[ni];
                int xs[3] = {3, 1, K}, wsh[2] = {N, K};
                mlx_array x = qi_gen_array(3, xs, 11 + m, 0, MLX_FLOAT32),
                          w = qi_gen_array(2, wsh, 21 + m, 2, MLX_FLOAT32);
                mlx_array q, s, wd = mlx_array_new(), wt = mlx_array_new(), y = mlx_array_new(),
                                ref = mlx_array_new();
                mlx_optional_dtype f32 = {MLX_FLOAT32, true};
                assert_int_equal(quantize_fp(w, modes[m], none, &q, &s), 0);
                assert_int_equal(mlx_dequantize(&wd, q, s, none, no_int, no_int, modes[m], none, f32, st), 0);
                assert_int_equal(mlx_transpose(&wt, wd, st), 0);
                assert_int_equal(mlx_matmul(&ref, x, wt, st), 0);
                assert_int_equal(mlx_quantized_matmul(&y, x, q, s, none, true, no_int, no_int, modes[m], st), 0);
                assert_true(tu_shape_is(y, 3, (int[]){3, 1, N}));
                mlx_array fy = qi_as_f32(y), fr = qi_as_f32(ref);
                for (size_t i = 0; i < mlx_array_size(fy); i++) {
                    double a = mlx_array_data_float32(fy)[i], b = mlx_array_data_float32(fr)[i];
                    if (!(fabs(a - b) <= 1e-3 * (1.0 + fabs(b))))
                        fail_msg("%s K %d N %d [%zu]: %g vs %g", modes[m], K, N, i, a, b);
                }
                tu_free_n((mlx_array[]){x, w, q, s, wd, wt, y, ref, fy, fr}, 10);
            }
        }
    }
}

static void test_gather_qmm_matches_mlx(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    for (int m = 0; m < 3; m++) {
        mode_data d = mode_load(m);
        int n3[1] = {3};
        int32_t li[3] = {1, 3, 0}, ri[3] = {2, 2, 1};
        mlx_array l = tu_i32(li, n3, 1), r = tu_i32(ri, n3, 1), y = mlx_array_new();
        assert_int_equal(
            mlx_gather_qmm(&y, d.x3, d.w, d.s, none, l, r, true, no_int, no_int, modes[m + 1], false, st), 0);
        assert_true(tu_shape_is(y, 3, (int[]){3, 3, 32}));
        expect_close_bits(y, mg[m], 3 * 3 * 32, 1e-5, "gather_qmm", m);
        tu_free_n((mlx_array[]){l, r, y}, 3);
        mode_free(&d);
    }
}

/* x -> quantized_matmul(x, W[0]) of the mode in the payload. */
static int f_qmm(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    const int *m = payload;
    mode_data d = mode_load(*m);
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) ||
             mlx_quantized_matmul(&y, x, d.w0, d.s0, none, true, no_int, no_int, modes[*m + 1], tu_stream()) ||
             mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){x, y}, 2);
    mode_free(&d);
    return rc;
}

/* MLX's QuantizedMatmul::vjp for x: the product with W the other way
 * round; and no gradient for the scales (test_fp_vjp_scales_throws). */
static void test_vjp_wrt_x_matches_mlx_and_scales_have_none(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        mode_data d = mode_load(m);
        mlx_closure f = mlx_closure_new_func_payload(f_qmm, &m, NULL);
        mlx_vector_array prim = mlx_vector_array_new(), cots = mlx_vector_array_new();
        mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
        assert_int_equal(mlx_vector_array_append_value(prim, d.x2), 0);
        assert_int_equal(mlx_vector_array_append_value(cots, d.cot), 0);
        assert_int_equal(mlx_vjp(&outs, &grads, f, prim, cots), 0);
        mlx_array g = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&g, grads, 0), 0);
        expect_close_bits(g, mv[m], 192, 1e-5, "vjp", m);
        mlx_array_free(g);
        mlx_closure_free(f);
        mlx_vector_array_free(prim);
        mlx_vector_array_free(cots);
        mlx_vector_array_free(outs);
        mlx_vector_array_free(grads);
        mode_free(&d);
    }
}

/* MLX's QuantizedMatmul::jvp for x: the product of the tangent. */
static void test_jvp_wrt_x_is_product_of_tangent(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        mode_data d = mode_load(m);
        mlx_closure f = mlx_closure_new_func_payload(f_qmm, &m, NULL);
        mlx_vector_array prim = mlx_vector_array_new(), tans = mlx_vector_array_new();
        mlx_vector_array outs = mlx_vector_array_new(), jv = mlx_vector_array_new();
        mlx_array t = mlx_array_new(), ref = mlx_array_new();
        assert_int_equal(mlx_vector_array_append_value(prim, d.x2), 0);
        assert_int_equal(mlx_vector_array_append_value(tans, d.x3), 0);
        assert_int_not_equal(mlx_jvp(&outs, &jv, f, prim, tans), 0); /* a tangent of another shape */
        tu_reset_errors();
        mlx_vector_array_free(tans);
        tans = mlx_vector_array_new();
        int s2[2] = {3, 64};
        mlx_array tx = qi_gen_array(2, s2, 77, 1, MLX_FLOAT32);
        assert_int_equal(mlx_vector_array_append_value(tans, tx), 0);
        assert_int_equal(mlx_jvp(&outs, &jv, f, prim, tans), 0);
        assert_int_equal(mlx_vector_array_get(&t, jv, 0), 0);
        assert_int_equal(
            mlx_quantized_matmul(&ref, tx, d.w0, d.s0, none, true, no_int, no_int, modes[m + 1], tu_stream()), 0);
        mlx_array ft = qi_as_f32(t), fr = qi_as_f32(ref);
        for (size_t i = 0; i < mlx_array_size(fr); i++)
            assert_true(mlx_array_data_float32(ft)[i] == mlx_array_data_float32(fr)[i]);
        tu_free_n((mlx_array[]){t, ref, tx, ft, fr}, 5);
        mlx_closure_free(f);
        mlx_vector_array_free(prim);
        mlx_vector_array_free(tans);
        mlx_vector_array_free(outs);
        mlx_vector_array_free(jv);
        mode_free(&d);
    }
}

/* s -> sum(quantized_matmul(x, w, s)) in mxfp4, or of gather_qmm with
 * rhs_indices 0 (payload non-NULL). */
static int f_scales(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mode_data d = mode_load(0);
    mlx_array s = mlx_array_new(), y = mlx_array_new(), r0 = mlx_array_new_int(0);
    int rc =
        mlx_vector_array_get(&s, in, 0) ||
        (payload
             ? mlx_gather_qmm(&y, d.x2, d.w0, s, none, none, r0, true, no_int, no_int, "mxfp4", false, tu_stream())
             : mlx_quantized_matmul(&y, d.x2, d.w0, s, none, true, no_int, no_int, "mxfp4", tu_stream())) ||
        mlx_sum(&y, y, false, tu_stream()) || mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){s, y, r0}, 3);
    mode_free(&d);
    return rc;
}

/* MLX's test_fp_vjp_scales_throws: quantized_matmul and gather_qmm. */
static void test_vjp_wrt_scales_is_mlx_error(void **state)
{
    (void)state;
    mode_data d = mode_load(0);
    for (int gather = 0; gather < 2; gather++) {
        mlx_closure f = mlx_closure_new_func_payload(f_scales, gather ? &d : NULL, NULL);
        mlx_vector_array prim = mlx_vector_array_new(), cots = mlx_vector_array_new();
        mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
        mlx_array one = mlx_array_new_float32(1.0f);
        assert_int_equal(mlx_vector_array_append_value(prim, d.s0), 0);
        assert_int_equal(mlx_vector_array_append_value(cots, one), 0);
        assert_int_not_equal(mlx_vjp(&outs, &grads, f, prim, cots), 0);
        assert_true(tu_last_error_has(err_vjp_scales_mxfp4));
        tu_reset_errors();
        mlx_array_free(one);
        mlx_closure_free(f);
        mlx_vector_array_free(prim);
        mlx_vector_array_free(cots);
        mlx_vector_array_free(outs);
        mlx_vector_array_free(grads);
    }
    mode_free(&d);
}

/* g -> sum(dequantize(q, s, g)) in nvfp4 (q, s in the payload). */
static int f_global(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_array *qs2 = payload, g = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&g, in, 0) ||
             mlx_dequantize(&y, qs2[0], qs2[1], none, no_int, no_int, "nvfp4", g, no_dtype, tu_stream()) ||
             mlx_sum(&y, y, false, tu_stream()) || mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){g, y}, 2);
    return rc;
}

/* nvfp4's global scale g enters MLX's dequantize as the factor g / 2688:
 * the derivative both ways is the values dequantized with g = 1. */
static void test_global_scale_derivative_is_unit_dequantize(void **state)
{
    (void)state;
    int shape[2] = {2, 64};
    mlx_array w = qi_gen_array(2, shape, 71, 0, MLX_FLOAT32), qs2[2], g = mlx_array_new_float32(3.0f);
    mlx_array one = mlx_array_new_float32(1.0f), unit = mlx_array_new(), ct = mlx_array_new_float32(1.0f);
    assert_int_equal(quantize_fp(w, "nvfp4", g, &qs2[0], &qs2[1]), 0);
    assert_int_equal(
        mlx_dequantize(&unit, qs2[0], qs2[1], none, no_int, no_int, "nvfp4", one, no_dtype, tu_stream()), 0);
    assert_int_equal(mlx_sum(&unit, unit, false, tu_stream()), 0);
    mlx_closure f = mlx_closure_new_func_payload(f_global, qs2, NULL);
    mlx_vector_array prim = mlx_vector_array_new(), cots = mlx_vector_array_new();
    mlx_vector_array outs = mlx_vector_array_new(), d = mlx_vector_array_new();
    assert_int_equal(mlx_vector_array_append_value(prim, g), 0);
    assert_int_equal(mlx_vector_array_append_value(cots, ct), 0);
    for (int way = 0; way < 2; way++) {
        mlx_array r = mlx_array_new();
        if (way == 0)
            assert_int_equal(mlx_vjp(&outs, &d, f, prim, cots), 0);
        else
            assert_int_equal(mlx_jvp(&outs, &d, f, prim, cots), 0);
        assert_int_equal(mlx_vector_array_get(&r, d, 0), 0);
        double want = tu_get(unit, 0), got = tu_get(r, 0);
        if (!(fabs(got - want) <= 1e-5 * (1.0 + fabs(want))))
            fail_msg("%s: %g, want %g", way ? "jvp" : "vjp", got, want);
        mlx_array_free(r);
    }
    tu_free_n((mlx_array[]){w, qs2[0], qs2[1], g, one, unit, ct}, 7);
    mlx_closure_free(f);
    mlx_vector_array_free(prim);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(d);
}

static void test_qqmm_matches_mlx(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    for (int m = 0; m < 2; m++) {
        const char *mode = m == 0 ? "nvfp4" : "mxfp8";
        int bits = m == 0 ? 4 : 8, gs = m == 0 ? 16 : 32;
        int wsh[2] = {32, 64 * bits / 32}, ssh[2] = {32, 64 / gs}, xs[2] = {1, 64}, x1[1] = {64};
        mlx_array w = u32_array(qw[m], 2, wsh), s = u8_array(qs[m], 2, ssh);
        mlx_array x = qi_gen_array(2, xs, 1100 + m, 0, MLX_FLOAT32),
                  xv = qi_gen_array(1, x1, 1100 + m, 0, MLX_FLOAT32);
        mlx_array y = mlx_array_new(), xb = mlx_array_new();
        assert_int_equal(mlx_qqmm(&y, x, w, s, no_int, no_int, mode, none, none, st), 0);
        assert_true(tu_shape_is(y, 2, (int[]){1, 32}));
        expect_close_bits(y, qr[m], 32, 1e-5, "qqmm", m);
        /* a vector is one row, the result a vector */
        assert_int_equal(mlx_qqmm(&y, xv, w, s, no_int, no_int, mode, none, none, st), 0);
        assert_true(tu_shape_is(y, 1, (int[]){32}));
        expect_close_bits(y, qr[m], 32, 1e-5, "qqmm(vector)", m);
        assert_int_equal(mlx_astype(&xb, x, MLX_BFLOAT16, st), 0);
        assert_int_equal(mlx_qqmm(&y, xb, w, s, no_int, no_int, mode, none, none, st), 0);
        assert_int_equal(mlx_array_dtype(y), MLX_BFLOAT16);
        /* MLX sums in bfloat16 there; this in float32 */
        expect_close_bits(y, qrb[m], 32, 3e-2, "qqmm(bfloat16)", m);
        if (m == 0) {
            /* checked, not used: as MLX's CPU */
            mlx_array g2 = mlx_array_new_float32(2.0f), g3 = mlx_array_new_float32(3.0f);
            assert_int_equal(mlx_qqmm(&y, x, w, s, no_int, no_int, mode, g2, g3, st), 0);
            expect_close_bits(y, qrg_0, 32, 1e-5, "qqmm(global scales)", m);
            tu_free_n((mlx_array[]){g2, g3}, 2);
        }
        tu_free_n((mlx_array[]){w, s, x, xv, y, xb}, 6);
    }
}

/* Where MLX's CPU qqmm stops (W as floats, several rows), the same
 * arithmetic: both operands quantized and dequantized by rows with MLX's
 * CPU kernel (mc_qdq_fp), then multiplied. */
static void test_qqmm_float_weights_quantize_both_operands(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    enum { M = 3, N = 5, K = 64 };
    for (int m = 0; m < 2; m++) {
        const char *mode = m == 0 ? "nvfp4" : "mxfp8";
        int bits = m == 0 ? 4 : 8, gs = m == 0 ? 16 : 32;
        int xs[2] = {M, K}, wsh[2] = {N, K};
        mlx_array x = qi_gen_array(2, xs, 31, 0, MLX_FLOAT32), w = qi_gen_array(2, wsh, 32, 2, MLX_FLOAT32);
        mlx_array y = mlx_array_new();
        assert_int_equal(mlx_qqmm(&y, x, w, none, no_int, no_int, mode, none, none, st), 0);
        assert_true(tu_shape_is(y, 2, (int[]){M, N}));
        assert_int_equal(mlx_array_eval(x), 0);
        assert_int_equal(mlx_array_eval(w), 0);
        float xh[M * K], wh[N * K];
        for (int r = 0; r < M; r++)
            mc_qdq_fp(mlx_array_data_float32(x) + r * K, MLX_FLOAT32, K, gs, bits, xh + r * K);
        for (int r = 0; r < N; r++)
            mc_qdq_fp(mlx_array_data_float32(w) + r * K, MLX_FLOAT32, K, gs, bits, wh + r * K);
        assert_int_equal(mlx_array_eval(y), 0);
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                double ref = 0;
                for (int k = 0; k < K; k++)
                    ref += (double)xh[i * K + k] * (double)wh[j * K + k];
                double got = mlx_array_data_float32(y)[i * N + j];
                if (!(fabs(got - ref) <= 1e-5 * (1.0 + fabs(ref))))
                    fail_msg("%s [%d, %d]: %g vs %g", mode, i, j, got, ref);
            }
        }
        tu_free_n((mlx_array[]){x, w, y}, 3);
    }
}

/* x -> qqmm(x, w) in mxfp8, w (32, 64) floats. */
static int f_qqmm(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) ||
             mlx_qqmm(&y, x, *(mlx_array *)payload, none, no_int, no_int, "mxfp8", none, none, tu_stream()) ||
             mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){x, y}, 2);
    return rc;
}

/* MLX's QQMatmul::vjp: x gets qqmm(cot, w^T), both quantized again. */
static void test_qqmm_vjp_is_qqmm_of_cotangent(void **state)
{
    (void)state;
    int xs[2] = {2, 64}, wsh[2] = {32, 64}, cs[2] = {2, 32};
    mlx_array x = qi_gen_array(2, xs, 61, 0, MLX_FLOAT32), w = qi_gen_array(2, wsh, 62, 0, MLX_FLOAT32);
    mlx_array cot = qi_gen_array(2, cs, 63, 0, MLX_FLOAT32), wt = mlx_array_new(), ref = mlx_array_new();
    mlx_array g = mlx_array_new();
    mlx_closure f = mlx_closure_new_func_payload(f_qqmm, &w, NULL);
    mlx_vector_array prim = mlx_vector_array_new(), cots = mlx_vector_array_new();
    mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
    assert_int_equal(mlx_vector_array_append_value(prim, x), 0);
    assert_int_equal(mlx_vector_array_append_value(cots, cot), 0);
    assert_int_equal(mlx_vjp(&outs, &grads, f, prim, cots), 0);
    assert_int_equal(mlx_vector_array_get(&g, grads, 0), 0);
    assert_int_equal(mlx_transpose(&wt, w, tu_stream()), 0);
    assert_int_equal(mlx_qqmm(&ref, cot, wt, none, no_int, no_int, "mxfp8", none, none, tu_stream()), 0);
    assert_true(tu_shape_is(g, 2, xs));
    mlx_array fg = qi_as_f32(g), fr = qi_as_f32(ref);
    for (size_t i = 0; i < mlx_array_size(fr); i++)
        assert_true(fabsf(mlx_array_data_float32(fg)[i] - mlx_array_data_float32(fr)[i]) <=
                    1e-5f * (1.0f + fabsf(mlx_array_data_float32(fr)[i])));
    tu_free_n((mlx_array[]){x, w, cot, wt, ref, g, fg, fr}, 8);
    mlx_closure_free(f);
    mlx_vector_array_free(prim);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
}

/* MLX's test_qqmv: qqmm of one row equals x_hat @ w_hat^T, both
 * dequantized from MLX's quantize, within 1e-3 of the scale of x. */
static void test_qqmv_is_product_of_dequantized(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    int nrows[3] = {256, 512, 67}, ns[2] = {64, 256};
    for (int m = 0; m < 2; m++) {
        const char *mode = m == 0 ? "nvfp4" : "mxfp8";
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 2; b++) {
                int xs[2] = {1, ns[b]}, wsh[2] = {nrows[a], ns[b]};
                mlx_array x = qi_gen_array(2, xs, 41, 0, MLX_FLOAT32),
                          w = qi_gen_array(2, wsh, 42, 0, MLX_FLOAT32);
                mlx_array xq, xsc, wq, wsc, xh = mlx_array_new(), wh = mlx_array_new(), y = mlx_array_new();
                mlx_array ref = mlx_array_new();
                mlx_optional_dtype f32 = {MLX_FLOAT32, true};
                assert_int_equal(quantize_fp(x, mode, none, &xq, &xsc), 0);
                assert_int_equal(quantize_fp(w, mode, none, &wq, &wsc), 0);
                assert_int_equal(mlx_dequantize(&xh, xq, xsc, none, no_int, no_int, mode, none, f32, st), 0);
                assert_int_equal(mlx_dequantize(&wh, wq, wsc, none, no_int, no_int, mode, none, f32, st), 0);
                assert_int_equal(mlx_transpose(&wh, wh, st), 0);
                assert_int_equal(mlx_matmul(&ref, xh, wh, st), 0);
                assert_int_equal(mlx_qqmm(&y, x, wq, wsc, no_int, no_int, mode, none, none, st), 0);
                mlx_array fy = qi_as_f32(y), fr = qi_as_f32(ref);
                /* the kernel's ties round to even, MLX's quantize's to the
                 * smaller magnitude: a code apart at most, where x sits on
                 * a tie */
                for (size_t i = 0; i < mlx_array_size(fy); i++) {
                    double p = mlx_array_data_float32(fy)[i], q = mlx_array_data_float32(fr)[i];
                    if (!(fabs(p - q) <= 2e-2 * (1.0 + fabs(q))))
                        fail_msg("%s (%d, %d) [%zu]: %g vs %g", mode, nrows[a], ns[b], i, p, q);
                }
                tu_free_n((mlx_array[]){x, w, xq, xsc, wq, wsc, xh, wh, y, ref, fy, fr}, 12);
            }
        }
    }
}

/* MLX's test_mxfp4/nvfp4_quantize_dequantize: values on the e2m1 grid
 * (a 6 in every group, plus 3e-6, in bfloat16) come back within 1e-5;
 * mxfp8 within 1e-1; zeros come back zeros. */
static void test_round_trips_of_mlx_tests(void **state)
{
    (void)state;
    static const float grid[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    mlx_stream st = tu_stream();
    enum { R = 16, C = 128 };
    float *v = malloc(sizeof(float) * R * C);
    assert_non_null(v);
    for (int m = 1; m <= 3; m++) {
        int gs = m == 3 ? 16 : 32;
        for (int i = 0; i < R * C; i++) {
            float t = m == 2 ? qi_gen(i, 5, 0) / 3.0f : grid[(i * 7 + i / 13) % 16];
            v[i] = (m != 2 && i % gs == 0 ? 6.0f : t) + (m == 2 ? 0.0f : 3e-6f);
        }
        int shape[2] = {R, C};
        mlx_array w = tu_f32(v, shape, 2), q, s, d = mlx_array_new(), z = mlx_array_new(), ok = mlx_array_new();
        assert_int_equal(mlx_astype(&w, w, MLX_BFLOAT16, st), 0);
        for (int glob = 0; glob < (m == 3 ? 2 : 1); glob++) {
            mlx_array g = glob ? max_abs(w) : none;
            assert_int_equal(quantize_fp(w, modes[m], g, &q, &s), 0);
            assert_int_equal(mlx_dequantize(&d, q, s, none, no_int, no_int, modes[m], g, no_dtype, st), 0);
            double tol = m == 2 ? 1e-1 : 1e-5;
            assert_int_equal(mlx_allclose(&ok, w, d, tol, tol, false, st), 0);
            bool b = false;
            assert_int_equal(mlx_array_item_bool(&b, ok), 0);
            if (!b)
                fail_msg("%s round trip (global %d) not within %g", modes[m], glob, tol);
            tu_free_n((mlx_array[]){q, s}, 2);
            if (glob)
                mlx_array_free(g);
        }
        int zs[2] = {8, 64};
        assert_int_equal(mlx_zeros(&z, zs, 2, MLX_FLOAT32, st), 0);
        assert_int_equal(quantize_fp(z, modes[m], none, &q, &s), 0);
        assert_int_equal(mlx_dequantize(&d, q, s, none, no_int, no_int, modes[m], none, no_dtype, st), 0);
        assert_int_equal(mlx_array_eval(d), 0);
        for (size_t i = 0; i < mlx_array_size(d); i++)
            assert_true(tu_get(d, i) == 0.0);
        tu_free_n((mlx_array[]){w, q, s, d, z, ok}, 6);
    }
    free(v);
}

/* MLX's test_quantize_strided: broadcast (strided) scales dequantize as
 * their contiguous copy does. */
static void test_strided_scales_dequantize_as_contiguous(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    int shape[2] = {64, 64}, ssh[2] = {64, 4};
    mlx_array w = qi_gen_array(2, shape, 3, 0, MLX_FLOAT32), q, s, b = mlx_array_new(), c = mlx_array_new();
    mlx_array d1 = mlx_array_new(), d2 = mlx_array_new(), v = mlx_array_new_int(56);
    assert_int_equal(quantize_fp(w, "nvfp4", none, &q, &s), 0);
    assert_int_equal(mlx_astype(&v, v, MLX_UINT8, st), 0);
    assert_int_equal(mlx_broadcast_to(&b, v, ssh, 2, st), 0);
    assert_int_equal(mlx_contiguous(&c, b, false, st), 0);
    assert_int_equal(mlx_dequantize(&d1, q, b, none, no_int, no_int, "nvfp4", none, no_dtype, st), 0);
    assert_int_equal(mlx_dequantize(&d2, q, c, none, no_int, no_int, "nvfp4", none, no_dtype, st), 0);
    assert_int_equal(mlx_array_eval(d1), 0);
    assert_int_equal(mlx_array_eval(d2), 0);
    for (size_t i = 0; i < mlx_array_size(d1); i++)
        assert_true(tu_get(d1, i) == tu_get(d2, i));
    tu_free_n((mlx_array[]){w, q, s, b, c, d1, d2, v}, 8);
}

static void test_errors_are_mlx_messages(void **state)
{
    (void)state;
    mlx_stream st = tu_stream();
    mlx_vector_array r = mlx_vector_array_new();
    int s464[2] = {4, 64}, s264[2] = {2, 64}, s2[1] = {2}, s1264[3] = {1, 2, 64}, s1464[3] = {1, 4, 64};
    mlx_array w = qi_gen_array(2, s464, 1, 0, MLX_FLOAT32), x = qi_gen_array(2, s264, 2, 0, MLX_FLOAT32);
    mlx_array q4, s4, q8, s8, y = mlx_array_new(), wint = mlx_array_new(), g = mlx_array_new_float32(1.5f);
    mlx_array gh = mlx_array_new(), g2 = tu_f32((float[]){1.0f, 2.0f}, s2, 1), sf = mlx_array_new();
    mlx_array s41 = mlx_array_new(), xint = mlx_array_new(), sh = mlx_array_new(), x3 = mlx_array_new();
    mlx_array w3 = mlx_array_new(), w64 = mlx_array_new(), xhalf = mlx_array_new(), ri = mlx_array_new_int(0);
    assert_int_equal(quantize_fp(w, "mxfp4", none, &q4, &s4), 0);
    assert_int_equal(quantize_fp(w, "mxfp8", none, &q8, &s8), 0);
    assert_int_equal(mlx_zeros(&wint, s464, 2, MLX_INT32, st), 0);
    assert_int_equal(mlx_astype(&gh, g, MLX_FLOAT16, st), 0);
    assert_int_equal(mlx_astype(&sf, s4, MLX_FLOAT32, st), 0);
    assert_int_equal(mlx_astype(&sh, s4, MLX_FLOAT16, st), 0);
    assert_int_equal(mlx_astype(&xint, x, MLX_INT32, st), 0);
    assert_int_equal(mlx_astype(&w64, w, MLX_FLOAT64, st), 0);
    assert_int_equal(mlx_reshape(&x3, x, s1264, 3, st), 0);
    assert_int_equal(mlx_reshape(&w3, w, s1464, 3, st), 0);
    int start[2] = {0, 0}, stop[2] = {4, 1}, stop2[2] = {2, 32}, step[2] = {1, 1};
    assert_int_equal(mlx_slice(&s41, s4, start, 2, stop, 2, step, 2, st), 0);
    assert_int_equal(mlx_slice(&xhalf, x, start, 2, stop2, 2, step, 2, st), 0);
    mlx_optional_dtype i32 = {MLX_INT32, true};

    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, some(3), "mxfp4", none, st), err_quantize_mxfp4_bits);
    qi_expect_mlx_error(mlx_quantize(&r, w, some(64), no_int, "mxfp4", none, st), err_quantize_mxfp4_group);
    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, some(7), "mxfp8", none, st), err_quantize_mxfp8_bits);
    qi_expect_mlx_error(mlx_quantize(&r, w, some(64), no_int, "nvfp4", none, st), err_quantize_nvfp4_group);
    qi_expect_mlx_error(mlx_quantize(&r, wint, no_int, no_int, "mxfp4", none, st), err_quantize_int_mxfp4);
    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, no_int, "mxfp4", g, st), err_quantize_global_mxfp4);
    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, no_int, "nvfp4", g2, st), err_quantize_global_shape);
    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, no_int, "nvfp4", gh, st), err_quantize_global_dtype);
    qi_expect_mlx_error(mlx_dequantize(&y, q4, s4, none, no_int, some(3), "mxfp4", none, no_dtype, st),
                        err_dequantize_mxfp4_bits);
    qi_expect_mlx_error(mlx_dequantize(&y, q4, s4, none, some(64), no_int, "mxfp4", none, no_dtype, st),
                        err_dequantize_mxfp4_group);
    qi_expect_mlx_error(mlx_dequantize(&y, q8, s8, none, some(16), no_int, "mxfp8", none, no_dtype, st),
                        err_dequantize_mxfp8_group);
    qi_expect_mlx_error(mlx_dequantize(&y, q4, s4, none, no_int, no_int, "mxfp4", none, i32, st),
                        err_dequantize_int_dtype);
    qi_expect_mlx_error(mlx_dequantize(&y, q4, sf, none, no_int, no_int, "mxfp4", none, no_dtype, st),
                        err_dequantize_scale_type);
    qi_expect_mlx_error(mlx_dequantize(&y, q4, s4, s4, no_int, no_int, "mxfp4", none, no_dtype, st),
                        err_dequantize_biases);
    qi_expect_mlx_error(mlx_dequantize(&y, q4, s41, none, no_int, no_int, "mxfp4", none, no_dtype, st),
                        err_dequantize_shape);
    qi_expect_mlx_error(mlx_dequantize(&y, q8, s8, none, no_int, no_int, "mxfp8", g, no_dtype, st),
                        err_dequantize_global_mxfp8);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, x, q4, s4, s4, true, no_int, no_int, "mxfp4", st),
                        err_qmm_biases_fp);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, x, q4, sh, none, true, no_int, no_int, "mxfp4", st),
                        err_qmm_scale_type_fp);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, xint, q4, s4, none, true, no_int, no_int, "mxfp4", st),
                        err_qmm_int_x_fp);
    qi_expect_mlx_error(mlx_gather_qmm(&y, x, q4, s4, s4, none, ri, true, no_int, no_int, "mxfp4", false, st),
                        err_gather_qmm_biases_fp);
    qi_expect_mlx_error(mlx_qqmm(&y, x, q4, s4, no_int, no_int, "mxfp4", none, none, st), err_qqmm_mode);
    qi_expect_mlx_error(mlx_qqmm(&y, x, q8, none, no_int, no_int, "mxfp8", none, none, st), err_qqmm_no_scales);
    qi_expect_mlx_error(mlx_qqmm(&y, x3, w3, none, no_int, no_int, "mxfp8", none, none, st), err_qqmm_3d);
    qi_expect_mlx_error(mlx_qqmm(&y, xint, w, none, no_int, no_int, "mxfp8", none, none, st), err_qqmm_int_x);
    qi_expect_mlx_error(mlx_qqmm(&y, x, w64, none, no_int, no_int, "mxfp8", none, none, st), err_qqmm_f64_w);
    qi_expect_mlx_error(mlx_qqmm(&y, x, w, none, no_int, no_int, "nvfp4", g, none, st), err_qqmm_one_global);
    qi_expect_mlx_error(mlx_qqmm(&y, x, w, none, no_int, no_int, "mxfp8", g, g, st), err_qqmm_global_mxfp8);
    qi_expect_mlx_error(mlx_qqmm(&y, xhalf, w, none, no_int, no_int, "mxfp8", none, none, st), err_qqmm_inner);
    /* what MLX's kernels assume without checking: an fp mode's one group
     * size in the product */
    assert_int_not_equal(mlx_quantized_matmul(&y, xhalf, q4, s4, none, true, some(16), some(8), "mxfp4", st), 0);
    tu_expect_error("[quantized_matmul] mxfp4 quantization requires group size 32 but got 16.");
    tu_free_n((mlx_array[]){w, x, q4, s4, q8, s8, y, wint, g, gh, g2, sf, s41, xint, sh, x3, w3, w64, xhalf, ri},
              20);
    mlx_vector_array_free(r);
}

/* The fp modes' decode product in each build of simd/quant_k.c this CPU
 * runs (generic, AVX2, AVX-512) agrees with its dequantized rows, for
 * mxfp4, mxfp8 and nvfp4, one row of x and several. */
static void test_fp_gemv_builds_match_dequantized_rows(void **state)
{
    (void)state;
    qi_gemv_fn gemv[3];
    qi_deq_fn deq[3];
    qi_kernel_builds(gemv, deq);
    enum { N = 24, K = 128, M = 5 };
    for (int m = 1; m <= 3; m++) {
        int gs = m == 3 ? 16 : 32, bits = m == 2 ? 8 : 4, wsh[2] = {N, K}, xs[2] = {M, K};
        mlx_array w = qi_gen_array(2, wsh, 51, 2, MLX_FLOAT32), x = qi_gen_array(2, xs, 52, 0, MLX_FLOAT32), q, s;
        assert_int_equal(quantize_fp(w, modes[m], none, &q, &s), 0);
        assert_int_equal(mlx_array_eval(q), 0);
        assert_int_equal(mlx_array_eval(s), 0);
        assert_int_equal(mlx_array_eval(x), 0);
        mc_qmat qm = {mlx_array_data_uint32(q),
                      (size_t)(K * bits / 32),
                      mlx_array_data_uint8(s),
                      NULL,
                      (size_t)(K / gs),
                      MLX_UINT8,
                      bits,
                      gs,
                      1};
        const float *xd = mlx_array_data_float32(x);
        for (int v = 0; v < 3; v++) {
            if (!gemv[v])
                continue;
            float out[M * N], row[K], tmp[2 * M * K];
            /* rows split in two calls, as the pool splits them */
            gemv[v](&qm, K, xd, M, K, out, N, 0, 7, tmp);
            gemv[v](&qm, K, xd, M, K, out, N, 7, N, tmp);
            for (int n = 0; n < N; n++) {
                deq[v](&qm, n, 0, K, row);
                for (int r = 0; r < M; r++) {
                    double ref = 0;
                    for (int k = 0; k < K; k++)
                        ref += (double)row[k] * (double)xd[r * K + k];
                    if (!(fabs(out[r * N + n] - ref) <= 1e-5 * (1.0 + fabs(ref))))
                        fail_msg("build %d %s out[%d, %d]: %g vs %g", v, modes[m], r, n, (double)out[r * N + n],
                                 ref);
                }
            }
        }
        tu_free_n((mlx_array[]){w, x, q, s}, 4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_quantize_packs_bit_for_bit_as_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_dequantize_matches_mlx_bit_for_bit, tu_test_teardown),
        cmocka_unit_test_teardown(test_quantized_matmul_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_quantized_matmul_is_product_with_dequantized, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_qmm_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_vjp_wrt_x_matches_mlx_and_scales_have_none, tu_test_teardown),
        cmocka_unit_test_teardown(test_vjp_wrt_scales_is_mlx_error, tu_test_teardown),
        cmocka_unit_test_teardown(test_jvp_wrt_x_is_product_of_tangent, tu_test_teardown),
        cmocka_unit_test_teardown(test_global_scale_derivative_is_unit_dequantize, tu_test_teardown),
        cmocka_unit_test_teardown(test_qqmm_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_qqmm_float_weights_quantize_both_operands, tu_test_teardown),
        cmocka_unit_test_teardown(test_qqmv_is_product_of_dequantized, tu_test_teardown),
        cmocka_unit_test_teardown(test_qqmm_vjp_is_qqmm_of_cotangent, tu_test_teardown),
        cmocka_unit_test_teardown(test_round_trips_of_mlx_tests, tu_test_teardown),
        cmocka_unit_test_teardown(test_strided_scales_dequantize_as_contiguous, tu_test_teardown),
        cmocka_unit_test_teardown(test_errors_are_mlx_messages, tu_test_teardown),
        cmocka_unit_test_teardown(test_fp_gemv_builds_match_dequantized_rows, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
