/* Quantization (src/ops/quant.c, src/graph/prims_quant.c, simd/quant*.c):
 * packing bit for bit as MLX 0.31.1 packs, dequantized values bit for bit,
 * quantized_matmul against MLX's results and against dequantize + matmul
 * on both of its paths (the decode dot kernel and tiles + sgemm), every
 * kernel level, MLX's error messages, and the gradient rules' errors.
 * Expected values: test/fixtures/quant_cases.h
 * (scripts/make_quant_fixtures.py). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#include "fixtures/quant_cases.h"
#include "quant_inputs.h"
#include "simd/quant.h"
#include "simd/simd.h"

static const mlx_optional_int no_int = {0, false};

static mlx_optional_int some(int v) { return (mlx_optional_int){v, true}; }

/* float32 array from float32 bit patterns, converted to d (exact). */
static mlx_array from_bits(const uint32_t *bits, int ndim, const int *shape, mlx_dtype d)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    float *v = malloc(sizeof(float) * (n ? n : 1));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = tu_bits_to_f32(bits[i]);
    mlx_array a = tu_f32(v, shape, ndim);
    free(v);
    if (d != MLX_FLOAT32)
        assert_int_equal(mlx_astype(&a, a, d, tu_stream()), 0);
    return a;
}

static void quantize(mlx_array w, int gs, int bits, mlx_array *q, mlx_array *s, mlx_array *b)
{
    mlx_vector_array r = mlx_vector_array_new();
    mlx_array none = {NULL};
    assert_int_equal(mlx_quantize(&r, w, some(gs), some(bits), "affine", none, tu_stream()), 0);
    assert_int_equal(mlx_vector_array_size(r), 3);
    *q = mlx_array_new();
    *s = mlx_array_new();
    *b = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(q, r, 0), 0);
    assert_int_equal(mlx_vector_array_get(s, r, 1), 0);
    assert_int_equal(mlx_vector_array_get(b, r, 2), 0);
    mlx_vector_array_free(r);
}

static void test_quantize_packs_bit_for_bit_as_mlx(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof quant_cases / sizeof quant_cases[0]; ci++) {
        const quant_case *c = &quant_cases[ci];
        int shape[2] = {c->rows, c->cols};
        mlx_array w = qi_gen_array(2, shape, c->seed, c->kind, c->dtype), q, s, b;
        quantize(w, c->group_size, c->bits, &q, &s, &b);
        assert_int_equal(mlx_array_eval(q), 0);
        assert_int_equal(mlx_array_dtype(q), MLX_UINT32);
        assert_int_equal(mlx_array_dtype(s), c->dtype);
        assert_int_equal(mlx_array_dtype(b), c->dtype);
        size_t nw = (size_t)c->rows * (size_t)c->cols * (size_t)c->bits / 32;
        assert_int_equal(mlx_array_shape(q)[1], c->cols * c->bits / 32);
        const uint32_t *qd = mlx_array_data_uint32(q);
        for (size_t i = 0; i < nw; i++)
            if (qd[i] != c->packed[i])
                fail_msg("case %zu (bits %d, group %d) word %zu: %08x, MLX %08x", ci, c->bits, c->group_size, i,
                         qd[i], c->packed[i]);
        size_t ng = (size_t)c->rows * (size_t)(c->cols / c->group_size);
        qi_expect_bits(s, c->scales, ng, "scales", (int)ci);
        qi_expect_bits(b, c->biases, ng, "biases", (int)ci);
        tu_free_n((mlx_array[]){w, q, s, b}, 4);
    }
}

static void test_dequantize_matches_mlx_bit_for_bit(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t ci = 0; ci < sizeof quant_cases / sizeof quant_cases[0]; ci++) {
        const quant_case *c = &quant_cases[ci];
        if (!c->dequant)
            continue;
        int qs[2] = {c->rows, c->cols * c->bits / 32}, ss[2] = {c->rows, c->cols / c->group_size};
        size_t nw = (size_t)qs[0] * (size_t)qs[1];
        mlx_array q = mlx_array_new_data(c->packed, qs, 2, MLX_UINT32);
        mlx_array s = from_bits(c->scales, 2, ss, c->dtype), b = from_bits(c->biases, 2, ss, c->dtype);
        mlx_array d = mlx_array_new();
        mlx_array none = {NULL};
        mlx_optional_dtype nodt = {MLX_FLOAT32, false};
        assert_int_equal(
            mlx_dequantize(&d, q, s, b, some(c->group_size), some(c->bits), "affine", none, nodt, tu_stream()), 0);
        assert_int_equal(mlx_array_dtype(d), c->dtype);
        qi_expect_bits(d, c->dequant, nw * 32 / (size_t)c->bits, "dequantized", (int)ci);
        tu_free_n((mlx_array[]){q, s, b, d}, 4);
        checked++;
    }
    assert_true(checked >= 8);
}

/* x @ W^T or x @ W with W = dequantize(w), through quantized_matmul, for
 * the fixture's inputs. */
static mlx_array qmm_of(const qmm_case *c, mlx_dtype d, mlx_array *reference)
{
    mlx_array x = qi_gen_array(c->xndim, c->xshape, c->xseed, 0, d);
    mlx_array w = qi_gen_array(c->wndim, c->wshape, c->wseed, 0, d), q, s, b;
    quantize(w, c->group_size, c->bits, &q, &s, &b);
    mlx_array y = mlx_array_new();
    assert_int_equal(mlx_quantized_matmul(&y, x, q, s, b, c->transpose, some(c->group_size), some(c->bits),
                                          "affine", tu_stream()),
                     0);
    if (reference) {
        /* the same product through dequantize and matmul, in float32
         * (the product rounds to a half type once, at the end) */
        mlx_array wd = mlx_array_new(), none = {NULL}, s32 = qi_as_f32(s), b32 = qi_as_f32(b), x32 = qi_as_f32(x);
        mlx_optional_dtype nodt = {MLX_FLOAT32, false};
        assert_int_equal(mlx_dequantize(&wd, q, s32, b32, some(c->group_size), some(c->bits), "affine", none, nodt,
                                        tu_stream()),
                         0);
        if (c->transpose)
            assert_int_equal(mlx_swapaxes(&wd, wd, -1, -2, tu_stream()), 0);
        *reference = mlx_array_new();
        assert_int_equal(mlx_matmul(reference, x32, wd, tu_stream()), 0);
        tu_free_n((mlx_array[]){wd, s32, b32, x32}, 4);
    }
    tu_free_n((mlx_array[]){x, w, q, s, b}, 5);
    return y;
}

/* |a - b| within float32 accumulation-order error of a K-term sum. */
static void expect_close(mlx_array a, mlx_array b, double tol, const char *what, int ci)
{
    mlx_array fa = qi_as_f32(a), fb = qi_as_f32(b);
    assert_int_equal(mlx_array_size(fa), mlx_array_size(fb));
    const float *x = mlx_array_data_float32(fa), *y = mlx_array_data_float32(fb);
    for (size_t i = 0; i < mlx_array_size(fa); i++)
        if (!(fabs((double)x[i] - (double)y[i]) <= tol * (1.0 + fabs((double)y[i]))))
            fail_msg("case %d %s[%zu]: %.9g vs %.9g", ci, what, i, (double)x[i], (double)y[i]);
    mlx_array_free(fa);
    mlx_array_free(fb);
}

static void test_quantized_matmul_matches_mlx(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof qmm_cases / sizeof qmm_cases[0]; ci++) {
        const qmm_case *c = &qmm_cases[ci];
        mlx_array y = qmm_of(c, MLX_FLOAT32, NULL);
        assert_int_equal(mlx_array_eval(y), 0);
        assert_int_equal((int)mlx_array_size(y), c->out_size);
        assert_int_equal(mlx_array_shape(y)[0], c->xndim == 1 ? mlx_array_shape(y)[0] : c->xshape[0]);
        int ys[1] = {c->out_size};
        mlx_array ref = from_bits(c->out, 1, ys, MLX_FLOAT32);
        assert_int_equal(mlx_reshape(&ref, ref, mlx_array_shape(y), mlx_array_ndim(y), tu_stream()), 0);
        expect_close(y, ref, 2e-5, "quantized_matmul", (int)ci);
        tu_free_n((mlx_array[]){y, ref}, 2);
    }
}

/* Shapes that reach both kernels: M below and above the decode limit, N
 * not a multiple of the split grain (and, decoding, of the row blocks the
 * threads claim), batches, both transposes, every bits value, and the half
 * types (computed in float32, rounded once). */
static void test_quantized_matmul_matches_dequantize_matmul(void **state)
{
    (void)state;
    static const qmm_case cases[] = {
        {2, {1, 512}, 2, {300, 512}, 64, 4, 1, 1, 2, 0, NULL},
        {2, {3, 256}, 2, {77, 256}, 32, 8, 1, 3, 4, 0, NULL},
        {2, {7, 256}, 2, {50, 256}, 128, 2, 1, 5, 6, 0, NULL},
        {2, {40, 256}, 2, {100, 256}, 64, 4, 1, 7, 8, 0, NULL},
        {2, {33, 128}, 2, {70, 128}, 32, 3, 1, 9, 10, 0, NULL},
        {2, {9, 128}, 2, {40, 128}, 64, 5, 1, 11, 12, 0, NULL},
        {2, {1, 128}, 2, {33, 128}, 32, 6, 1, 13, 14, 0, NULL},
        {2, {1, 96}, 2, {96, 256}, 64, 4, 0, 15, 16, 0, NULL},
        {2, {20, 80}, 2, {80, 384}, 128, 6, 0, 17, 18, 0, NULL},
        {3, {2, 5, 128}, 2, {24, 128}, 32, 4, 1, 19, 20, 0, NULL},
        {3, {3, 10, 128}, 3, {3, 20, 128}, 64, 8, 1, 21, 22, 0, NULL},
        /* decoding over several claimed row blocks, the last one partial */
        {2, {1, 1024}, 2, {2100, 1024}, 64, 4, 1, 23, 24, 0, NULL},
    };
    static const mlx_dtype dts[] = {MLX_FLOAT32, MLX_FLOAT16, MLX_BFLOAT16};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        for (int di = 0; di < 3; di++) {
            mlx_array ref, y = qmm_of(&cases[ci], dts[di], &ref);
            assert_int_equal(mlx_array_dtype(y), dts[di]);
            assert_true(mlx_array_ndim(y) == mlx_array_ndim(ref));
            expect_close(y, ref, di == 0 ? 2e-5 : di == 1 ? 2e-3 : 1e-2, "vs dequantize+matmul", (int)ci * 3 + di);
            tu_free_n((mlx_array[]){y, ref}, 2);
        }
    }
}

static void test_gather_qmm_matches_mlx(void **state)
{
    (void)state;
    int xs[3] = {3, 2, 64}, ws[3] = {4, 16, 64}, x1s[3] = {1, 2, 64};
    mlx_array x = qi_gen_array(3, xs, 300, 0, MLX_FLOAT32), w = qi_gen_array(3, ws, 301, 0, MLX_FLOAT32), q, s, b;
    mlx_array x1 = qi_gen_array(3, x1s, 300, 0, MLX_FLOAT32);
    quantize(w, 32, 4, &q, &s, &b);
    int32_t lv[2] = {0, 2}, rv[3] = {3, 0, 1}, rv2[3] = {2, 1, 3};
    int ls[2] = {2, 1}, rs[1] = {3};
    mlx_array li = tu_i32(lv, ls, 2), ri = tu_i32(rv, rs, 1), ri2 = tu_i32(rv2, rs, 1), none = {NULL};
    mlx_array y = mlx_array_new(), y2 = mlx_array_new();
    assert_int_equal(mlx_gather_qmm(&y, x, q, s, b, li, ri, true, some(32), some(4), "affine", false, tu_stream()),
                     0);
    assert_int_equal(
        mlx_gather_qmm(&y2, x1, q, s, b, none, ri2, true, some(32), some(4), "affine", false, tu_stream()), 0);
    int ys[4] = {2, 3, 2, 16}, y2s[3] = {3, 2, 16};
    assert_true(tu_shape_is(y, 4, ys));
    assert_true(tu_shape_is(y2, 3, y2s));
    mlx_array r1 = from_bits(gqmm_1, 4, ys, MLX_FLOAT32), r2 = from_bits(gqmm_2, 3, y2s, MLX_FLOAT32);
    expect_close(y, r1, 2e-5, "gather_qmm", 1);
    expect_close(y2, r2, 2e-5, "gather_qmm", 2);
    tu_free_n((mlx_array[]){x, w, q, s, b, x1, li, ri, ri2, y, y2, r1, r2}, 13);
}

static void test_errors_are_mlx_messages(void **state)
{
    (void)state;
    mlx_vector_array r = mlx_vector_array_new();
    mlx_array none = {NULL}, y = mlx_array_new();
    mlx_optional_dtype nodt = {MLX_FLOAT32, false};
    int s464[2] = {4, 64}, s64[1] = {64}, s2100[2] = {2, 100}, s232[2] = {2, 32}, s264[2] = {2, 64};
    mlx_array w = qi_gen_array(2, s464, 1, 0, MLX_FLOAT32), q, s, b;
    quantize(w, 64, 4, &q, &s, &b);
    mlx_array v1 = qi_gen_array(1, s64, 1, 0, MLX_FLOAT32), wbad = qi_gen_array(2, s2100, 1, 0, MLX_FLOAT32);
    mlx_array wint = mlx_array_new(), x32 = qi_gen_array(2, s232, 1, 0, MLX_FLOAT32);
    mlx_array x64 = qi_gen_array(2, s264, 1, 0, MLX_FLOAT32), s0 = mlx_array_new(), b0 = mlx_array_new();
    assert_int_equal(mlx_astype(&wint, x64, MLX_INT32, tu_stream()), 0);
    int start[2] = {0, 0}, stop[2] = {4, 0}, step[2] = {1, 1};
    assert_int_equal(mlx_slice(&s0, s, start, 2, stop, 2, step, 2, tu_stream()), 0);
    assert_int_equal(mlx_slice(&b0, b, start, 2, stop, 2, step, 2, tu_stream()), 0);
    mlx_stream st = tu_stream();

    qi_expect_mlx_error(mlx_quantize(&r, w, some(16), no_int, "affine", none, st), err_quantize_group_size);
    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, some(7), "affine", none, st), err_quantize_bits);
    qi_expect_mlx_error(mlx_quantize(&r, v1, no_int, no_int, "affine", none, st), err_quantize_1d);
    qi_expect_mlx_error(mlx_quantize(&r, wbad, no_int, no_int, "affine", none, st), err_quantize_divisible);
    qi_expect_mlx_error(mlx_quantize(&r, wint, no_int, no_int, "affine", none, st), err_quantize_int);
    qi_expect_mlx_error(mlx_quantize(&r, w, no_int, no_int, "foo", none, st), err_quantize_mode);
    qi_expect_mlx_error(mlx_dequantize(&y, q, s0, b0, no_int, no_int, "affine", none, nodt, st),
                        err_dequantize_shape);
    qi_expect_mlx_error(mlx_dequantize(&y, s, s, b, no_int, no_int, "affine", none, nodt, st),
                        err_dequantize_dtype);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, x32, q, s, b, true, no_int, no_int, "affine", st), err_qmm_inner);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, x64, s, s, b, true, no_int, no_int, "affine", st),
                        err_qmm_weight_dtype);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, x64, q, s, none, true, no_int, no_int, "affine", st),
                        err_qmm_biases);
    qi_expect_mlx_error(mlx_quantized_matmul(&y, x64, q, s0, b0, true, no_int, no_int, "affine", st),
                        err_qmm_scales_shape);
    /* a group size quantize refuses is refused by the product too */
    assert_int_not_equal(mlx_quantized_matmul(&y, x64, q, s, b, true, some(16), no_int, "affine", st), 0);
    tu_expect_error("[quantized_matmul]");
    tu_free_n((mlx_array[]){w, q, s, b, v1, wbad, wint, x32, x64, s0, b0, y}, 12);
    mlx_vector_array_free(r);
}

/* A function of x only, through a fixed quantized W: its vjp is a
 * quantized_matmul with the transpose flipped; the weights have none. */
typedef struct qmm_payload {
    mlx_array q, s, b;
    bool transpose;
} qmm_payload;

static int qmm_fun(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    qmm_payload *p = payload;
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc =
        mlx_vector_array_get(&x, args, 0) ||
        mlx_quantized_matmul(&y, x, p->q, p->s, p->b, p->transpose, some(64), some(4), "affine", tu_stream()) ||
        mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){x, y}, 2);
    return rc;
}

static int qmm_w_fun(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    qmm_payload *p = payload;
    mlx_array x = mlx_array_new(), w = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0) || mlx_vector_array_get(&w, args, 1) ||
             mlx_quantized_matmul(&y, x, w, p->s, p->b, true, some(64), some(4), "affine", tu_stream()) ||
             mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){x, w, y}, 3);
    return rc;
}

static void test_vjp_wrt_x_is_the_flipped_product(void **state)
{
    (void)state;
    int xs[2] = {3, 128}, ws[2] = {64, 128}, cs[2] = {3, 64};
    mlx_array x = qi_gen_array(2, xs, 1, 0, MLX_FLOAT32), w = qi_gen_array(2, ws, 2, 0, MLX_FLOAT32);
    mlx_array cot = qi_gen_array(2, cs, 3, 0, MLX_FLOAT32);
    qmm_payload p = {.transpose = true};
    quantize(w, 64, 4, &p.q, &p.s, &p.b);
    mlx_closure f = mlx_closure_new_func_payload(qmm_fun, &p, NULL);
    mlx_vector_array prim = mlx_vector_array_new_value(x), cots = mlx_vector_array_new_value(cot);
    mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&outs, &grads, f, prim, cots), 0);
    mlx_array g = mlx_array_new(), ref = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&g, grads, 0), 0);
    assert_int_equal(
        mlx_quantized_matmul(&ref, cot, p.q, p.s, p.b, false, some(64), some(4), "affine", tu_stream()), 0);
    assert_true(tu_shape_is(g, 2, xs));
    expect_close(g, ref, 0, "vjp", 0);

    /* no gradient for the packed weights: MLX's error */
    mlx_closure fw = mlx_closure_new_func_payload(qmm_w_fun, &p, NULL);
    mlx_vector_array prim2 = mlx_vector_array_new_data((mlx_array[]){x, p.q}, 2);
    assert_int_not_equal(mlx_vjp(&outs, &grads, fw, prim2, cots), 0);
    assert_true(tu_last_error_has("no gradient wrt the quantized weights"));
    tu_reset_errors();
    tu_free_n((mlx_array[]){x, w, cot, p.q, p.s, p.b, g, ref}, 8);
    mlx_closure_free(f);
    mlx_closure_free(fw);
    mlx_vector_array_free(prim);
    mlx_vector_array_free(prim2);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
}

/* Each build of simd/quant_k.c this CPU runs (generic, AVX2, AVX-512)
 * gives the generic build's results within float32 rounding, for the
 * decode product of each fast bits value and of the unpacking path, with
 * one row of x (decoding, its own inlined kernels) and several, and for
 * the dequantized rows. */
typedef size_t (*qi_scratch_fn)(const mc_qmat *, int, int);

static void test_kernel_builds_agree(void **state)
{
    (void)state;
    qi_gemv_fn gemv[3];
    qi_deq_fn deq[3];
    qi_kernel_builds(gemv, deq);
    static const int bitss[] = {2, 3, 4, 8}, gss[] = {32, 64, 128};
    enum { N = 37, K = 256, MMAX = 6 };
    for (int bi = 0; bi < 4; bi++) {
        for (int gi = 0; gi < 6; gi++) {
            const int M = gi < 3 ? MMAX : 1, gs = gss[gi % 3];
            int ws[2] = {N, K}, xs[2] = {M, K};
            mlx_array w = qi_gen_array(2, ws, bi * 3 + gi % 3, 0, MLX_FLOAT32), q, s, b;
            mlx_array x = qi_gen_array(2, xs, 50 + bi, 0, MLX_FLOAT32);
            quantize(w, gs, bitss[bi], &q, &s, &b);
            assert_int_equal(mlx_array_eval(q) || mlx_array_eval(s) || mlx_array_eval(b) || mlx_array_eval(x), 0);
            mc_qmat qm = {mlx_array_data_uint32(q),
                          (size_t)(K * bitss[bi] / 32),
                          mlx_array_data_float32(s),
                          mlx_array_data_float32(b),
                          (size_t)(K / gs),
                          MLX_FLOAT32,
                          bitss[bi],
                          gs,
                          0};
            float out[3][MMAX * N], rows[3][K], tmp[2 * MMAX * K];
#if defined(__x86_64__)
            qi_scratch_fn scratch[3] = {mc_qgemv_t_scratch_generic, mc_qgemv_t_scratch_avx2,
                                        mc_qgemv_t_scratch_avx512};
#else
            qi_scratch_fn scratch[3] = {mc_qgemv_t_scratch_generic, NULL, NULL};
#endif
            for (int v = 0; v < 3; v++) {
                if (!gemv[v])
                    continue;
                assert_true(scratch[v](&qm, M, K) <= sizeof tmp / sizeof tmp[0]);
                /* rows split in two calls, as the pool splits them */
                gemv[v](&qm, K, mlx_array_data_float32(x), M, K, out[v], N, 0, 17, tmp);
                gemv[v](&qm, K, mlx_array_data_float32(x), M, K, out[v], N, 17, N, tmp);
                deq[v](&qm, 5, gs, K - gs, rows[v]);
                for (int i = 0; i < M * N; i++)
                    if (!(fabsf(out[v][i] - out[0][i]) <= 1e-4f * (1.0f + fabsf(out[0][i]))))
                        fail_msg("build %d bits %d gs %d out[%d]: %g vs %g", v, bitss[bi], gs, i,
                                 (double)out[v][i], (double)out[0][i]);
                /* scale * code + bias: one rounding, or two where a
                 * build's compiler does not fuse them */
                for (int i = 0; i < K - gs; i++)
                    if (!(fabsf(rows[v][i] - rows[0][i]) <= 1e-6f * (1.0f + fabsf(rows[0][i]))))
                        fail_msg("build %d bits %d gs %d row[%d]: %g vs %g", v, bitss[bi], gs, i,
                                 (double)rows[v][i], (double)rows[0][i]);
            }
            tu_free_n((mlx_array[]){w, x, q, s, b}, 5);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_quantize_packs_bit_for_bit_as_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_dequantize_matches_mlx_bit_for_bit, tu_test_teardown),
        cmocka_unit_test_teardown(test_quantized_matmul_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_quantized_matmul_matches_dequantize_matmul, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_qmm_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_errors_are_mlx_messages, tu_test_teardown),
        cmocka_unit_test_teardown(test_vjp_wrt_x_is_the_flipped_product, tu_test_teardown),
        cmocka_unit_test_teardown(test_kernel_builds_agree, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
