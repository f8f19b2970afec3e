/* Tests of the convolution ops (src/ops/conv.c) and the Convolution
 * primitive (src/graph/prims_conv.c, simd/conv_k.c).
 *
 * References: MLX 0.31.1's own results and vjps for 41 calls covering
 * 1-d, 2-d and 3-d, strides, symmetric/low-high/negative padding, kernel
 * and input dilation, groups (depthwise too), flip and transposed
 * convolutions with output_padding, in float32, float16, bfloat16 and
 * float64, plus MLX's messages for refused calls
 * (test/fixtures/conv_cases.h, scripts/make_conv_fixtures.py); and a
 * direct convolution in double written here, for shapes large enough to
 * take the blocked, threaded and depthwise paths; and the Winograd path
 * (src/graph/conv_wino.c, simd/wino_k.c) against the direct one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/conv_wino.h"
#include "mlx/c/mlx.h"
#include "runtime/alloc.h" /* mc_fault_fail_after */
#include "simd/wino.h"
#include "test_util.h"

#include "fixtures/conv_cases.h"

/* ---- inputs ---- */

/* The fixture's formula: eighths in [-1, 1], exact in every dtype. */
static double value_of(int k, size_t i) { return (double)((int)((i * 7 + (size_t)k * 5 + 3) % 17) - 8) / 8.0; }

static size_t count_of(int ndim, const int *shape)
{
    size_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= (size_t)shape[d];
    return n;
}

static mlx_array formula_array(int k, mlx_dtype d, int ndim, const int *shape)
{
    size_t n = count_of(ndim, shape);
    double *v = malloc(sizeof(double) * (n ? n : 1));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = value_of(k, i);
    mlx_array a = tu_array_of(d, v, shape, ndim);
    free(v);
    return a;
}

/* Pseudo-random values in [-1, 1] for the large cases. */
static mlx_array random_array(uint32_t seed, mlx_dtype d, int ndim, const int *shape, double **vals)
{
    size_t n = count_of(ndim, shape);
    double *v = malloc(sizeof(double) * (n ? n : 1));
    assert_non_null(v);
    uint32_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        /* multiples of 1/64: exact in bfloat16 too */
        v[i] = (double)((int)(s >> 25) - 64) / 64.0;
    }
    mlx_array a = tu_array_of(d, v, shape, ndim);
    *vals = v;
    return a;
}

/* ---- calling a case ---- */

static int call_case(mlx_array *y, const conv_case *c, mlx_array x, mlx_array w)
{
    mlx_stream s = tu_stream();
    const int *st = c->stride, *lo = c->lo, *kd = c->kdil, *op = c->outpad;
    if (c->kind == 0) {
        size_t n = (size_t)c->nsp;
        return mlx_conv_general(y, x, w, c->stride, n, c->lo, n, c->hi, n, c->kdil, n, c->idil, n, c->groups,
                                c->flip, s);
    }
    if (c->kind == 1) {
        switch (c->nsp) {
        case 1: return mlx_conv1d(y, x, w, st[0], lo[0], kd[0], c->groups, s);
        case 2: return mlx_conv2d(y, x, w, st[0], st[1], lo[0], lo[1], kd[0], kd[1], c->groups, s);
        default:
            return mlx_conv3d(y, x, w, st[0], st[1], st[2], lo[0], lo[1], lo[2], kd[0], kd[1], kd[2], c->groups,
                              s);
        }
    }
    switch (c->nsp) {
    case 1: return mlx_conv_transpose1d(y, x, w, st[0], lo[0], kd[0], op[0], c->groups, s);
    case 2:
        return mlx_conv_transpose2d(y, x, w, st[0], st[1], lo[0], lo[1], kd[0], kd[1], op[0], op[1], c->groups, s);
    default:
        return mlx_conv_transpose3d(y, x, w, st[0], st[1], st[2], lo[0], lo[1], lo[2], kd[0], kd[1], kd[2], op[0],
                                    op[1], op[2], c->groups, s);
    }
}

/* Tolerance for a value of an MLX result computed in dtype: float32
 * rounding of the sums, or the half type's own rounding of the result
 * (MLX's direct kernels round partial sums in the half type too). */
static double tol_for(mlx_dtype d, double ref)
{
    double scale = 1.0 + fabs(ref);
    switch (d) {
    case MLX_FLOAT16: return 8e-3 * scale;
    case MLX_BFLOAT16: return 3e-2 * scale;
    default: return 1e-5 * scale;
    }
}

static void expect_values(mlx_array y, const double *ref, size_t n, mlx_dtype d, const char *what, int idx)
{
    assert_int_equal(mlx_array_size(y), n);
    for (size_t i = 0; i < n; i++) {
        double got = tu_get(y, i);
        if (fabs(got - ref[i]) > tol_for(d, ref[i]))
            fail_msg("case %d %s: element %zu is %.9g, MLX gives %.9g", idx, what, i, got, ref[i]);
    }
}

/* ---- the MLX cases ---- */

static void test_results_match_mlx_for_every_configuration(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        const conv_case *c = &conv_cases[k];
        int nd = c->nsp + 2;
        mlx_array x = formula_array(0, (mlx_dtype)c->dtype, nd, c->xs);
        mlx_array w = formula_array(1, (mlx_dtype)c->dtype, nd, c->ws);
        mlx_array y = mlx_array_new();
        if (call_case(&y, c, x, w))
            fail_msg("case %zu failed: %s", k, tu_last_error());
        assert_int_equal(mlx_array_dtype(y), c->dtype);
        if (!tu_shape_is(y, nd, c->ys))
            fail_msg("case %zu: wrong output shape", k);
        expect_values(y, conv_out + c->off, (size_t)c->n, (mlx_dtype)c->dtype, "output", (int)k);
        tu_free_n((mlx_array[]){x, w, y}, 3);
    }
}

/* The closure of a case, for mlx_vjp: payload is the case. */
static int apply_case(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    mlx_array x = mlx_array_new(), w = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0) || mlx_vector_array_get(&w, args, 1) ||
             call_case(&y, payload, x, w) || mlx_vector_array_set_value(res, y);
    tu_free_n((mlx_array[]){x, w, y}, 3);
    return rc;
}

static void test_vjp_matches_mlx(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        const conv_case *c = &conv_cases[k];
        if (c->goff < 0)
            continue;
        int nd = c->nsp + 2;
        mlx_array x = formula_array(0, MLX_FLOAT32, nd, c->xs);
        mlx_array w = formula_array(1, MLX_FLOAT32, nd, c->ws);
        mlx_array cot = formula_array(2, MLX_FLOAT32, nd, c->ys);
        mlx_closure f = mlx_closure_new_func_payload(apply_case, (void *)c, NULL);
        mlx_vector_array prim = mlx_vector_array_new(), cots = mlx_vector_array_new();
        mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
        assert_int_equal(mlx_vector_array_append_value(prim, x), 0);
        assert_int_equal(mlx_vector_array_append_value(prim, w), 0);
        assert_int_equal(mlx_vector_array_append_value(cots, cot), 0);
        if (mlx_vjp(&outs, &grads, f, prim, cots))
            fail_msg("case %zu: vjp failed: %s", k, tu_last_error());
        mlx_array gx = mlx_array_new(), gw = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&gx, grads, 0), 0);
        assert_int_equal(mlx_vector_array_get(&gw, grads, 1), 0);
        if (!tu_shape_is(gx, nd, c->xs) || !tu_shape_is(gw, nd, c->ws))
            fail_msg("case %zu: cotangent shapes (%d, %d, ...) and (%d, %d, ...)", k, mlx_array_shape(gx)[0],
                     mlx_array_shape(gx)[1], mlx_array_shape(gw)[0], mlx_array_shape(gw)[1]);
        size_t nx = count_of(nd, c->xs), nw = count_of(nd, c->ws);
        expect_values(gx, conv_out + c->goff, nx, MLX_FLOAT32, "input cotangent", (int)k);
        expect_values(gw, conv_out + c->goff + nx, nw, MLX_FLOAT32, "weight cotangent", (int)k);
        tu_free_n((mlx_array[]){x, w, cot, gx, gw}, 5);
        mlx_vector_array_free(prim);
        mlx_vector_array_free(cots);
        mlx_vector_array_free(outs);
        mlx_vector_array_free(grads);
        mlx_closure_free(f);
        checked++;
    }
    assert_true(checked >= 25);
}

static void test_refused_calls_report_mlx_messages(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    for (size_t k = 0; k < sizeof conv_errors / sizeof conv_errors[0]; k++) {
        const conv_error_case *e = &conv_errors[k];
        mlx_array x = formula_array(0, (mlx_dtype)e->dtype, e->xnd, e->xs);
        mlx_array w = formula_array(1, MLX_FLOAT32, e->wnd, e->ws);
        mlx_array y = mlx_array_new();
        int rc;
        if (e->kind == 0) {
            rc = mlx_conv_general(&y, x, w, e->stride, (size_t)e->nstride, e->lo, (size_t)e->nlo, e->hi,
                                  (size_t)e->nhi, e->kdil, (size_t)e->nkdil, e->idil, (size_t)e->nidil, e->groups,
                                  e->flip, s);
        } else {
            /* every fixed-rank error case is 1-d */
            rc = mlx_conv1d(&y, x, w, e->stride[0], e->lo[0], e->kdil[0], e->groups, s);
        }
        if (!rc)
            fail_msg("error case %zu was accepted", k);
        assert_int_equal(tu_error_count(), 1);
        if (strcmp(tu_last_error(), e->msg))
            fail_msg("error case %zu: '%s', MLX says '%s'", k, tu_last_error(), e->msg);
        assert_null(y.ctx);
        tu_reset_errors();
        tu_free_n((mlx_array[]){x, w, y}, 3);
    }
}

static void test_bad_handles_and_vectors_are_refused(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    int xs[3] = {1, 5, 2}, ws[3] = {2, 3, 2};
    mlx_array x = formula_array(0, MLX_FLOAT32, 3, xs), w = formula_array(1, MLX_FLOAT32, 3, ws);
    mlx_array y = mlx_array_new(), empty = mlx_array_new();
    assert_int_not_equal(mlx_conv1d(NULL, x, w, 1, 0, 1, 1, s), 0);
    tu_expect_error("[conv1d]");
    assert_int_not_equal(mlx_conv1d(&y, empty, w, 1, 0, 1, 1, s), 0);
    tu_expect_error("[conv1d]");
    assert_int_not_equal(mlx_conv_transpose2d(&y, x, empty, 1, 1, 0, 0, 1, 1, 0, 0, 1, s), 0);
    tu_expect_error("[conv_transpose2d]");
    assert_int_not_equal(mlx_conv_general(&y, x, w, NULL, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 1, false, s), 0);
    tu_expect_error("[conv_general]");
    assert_int_not_equal(mlx_conv1d(&y, x, w, 1, 0, 1, 0, s), 0);
    tu_expect_error("[conv] The number of groups must be positive");
    /* a transposed convolution checks ranks before reading the weight's shape */
    int ws2[2] = {2, 3};
    mlx_array w2 = formula_array(1, MLX_FLOAT32, 2, ws2);
    assert_int_not_equal(mlx_conv_transpose1d(&y, x, w2, 1, 0, 1, 0, 1, s), 0);
    tu_expect_error("[conv] Invalid weight array with 2 dimensions");
    assert_null(y.ctx);
    tu_free_n((mlx_array[]){x, w, w2}, 3);
}

static void test_empty_vectors_take_defaults(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    int xs[4] = {1, 5, 4, 2}, ws[4] = {3, 2, 2, 2};
    mlx_array x = formula_array(0, MLX_FLOAT32, 4, xs), w = formula_array(1, MLX_FLOAT32, 4, ws);
    mlx_array a = mlx_array_new(), b = mlx_array_new();
    int one = 2;
    assert_int_equal(mlx_conv_general(&a, x, w, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 1, false, s), 0);
    assert_int_equal(mlx_conv2d(&b, x, w, 1, 1, 0, 0, 1, 1, 1, s), 0);
    int want[4] = {1, 4, 3, 3};
    assert_true(tu_shape_is(a, 4, want));
    for (size_t i = 0; i < mlx_array_size(a); i++)
        assert_true(tu_get(a, i) == tu_get(b, i));
    /* a one-element vector applies to every dim */
    assert_int_equal(mlx_conv_general(&a, x, w, &one, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 1, false, s), 0);
    assert_int_equal(mlx_conv2d(&b, x, w, 2, 2, 0, 0, 1, 1, 1, s), 0);
    assert_true(mlx_array_size(a) == 12 && mlx_array_size(b) == 12);
    for (size_t i = 0; i < 12; i++)
        assert_true(tu_get(a, i) == tu_get(b, i));
    tu_free_n((mlx_array[]){x, w, a, b}, 4);
}

/* ---- a direct reference for large shapes ---- */

typedef struct ref_conv {
    int nsp, N, C, O, groups, flip;
    int in[3], k[3], out[3], stride[3], lo[3], kdil[3], idil[3];
} ref_conv;

/* y[n, o..., oc] = sum x[n, i..., g * cg + c] * w[oc, k..., c] over the
 * kernel taps whose dilated, padded position lands on an input element. */
static void reference(const ref_conv *r, const double *x, const double *w, double *y)
{
    int cg = r->C / r->groups, og = r->O / r->groups;
    int in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out[3] = {1, 1, 1}, st[3] = {1, 1, 1}, lo[3] = {0, 0, 0};
    int kd[3] = {1, 1, 1}, id[3] = {1, 1, 1};
    int lead = 3 - r->nsp;
    for (int d = 0; d < r->nsp; d++) {
        in[lead + d] = r->in[d];
        k[lead + d] = r->k[d];
        out[lead + d] = r->out[d];
        st[lead + d] = r->stride[d];
        lo[lead + d] = r->lo[d];
        kd[lead + d] = r->kdil[d];
        id[lead + d] = r->idil[d];
    }
    size_t yi = 0;
    for (int n = 0; n < r->N; n++)
        for (int o0 = 0; o0 < out[0]; o0++)
            for (int o1 = 0; o1 < out[1]; o1++)
                for (int o2 = 0; o2 < out[2]; o2++)
                    for (int oc = 0; oc < r->O; oc++, yi++) {
                        int g = oc / og;
                        double acc = 0;
                        for (int a = 0; a < k[0]; a++)
                            for (int b = 0; b < k[1]; b++)
                                for (int c = 0; c < k[2]; c++) {
                                    int t[3] = {a, b, c}, o[3] = {o0, o1, o2}, p[3];
                                    bool ok = true;
                                    for (int d = 0; d < 3 && ok; d++) {
                                        int kk = r->flip ? k[d] - 1 - t[d] : t[d];
                                        int q = o[d] * st[d] - lo[d] + kk * kd[d];
                                        ok = q >= 0 && q % id[d] == 0 && q / id[d] < in[d];
                                        p[d] = ok ? q / id[d] : 0;
                                    }
                                    if (!ok)
                                        continue;
                                    size_t xb =
                                        ((((size_t)n * in[0] + p[0]) * in[1] + p[1]) * in[2] + p[2]) * r->C;
                                    size_t wb = ((((size_t)oc * k[0] + a) * k[1] + b) * k[2] + c) * cg;
                                    for (int ci = 0; ci < cg; ci++)
                                        acc += x[xb + (size_t)g * cg + ci] * w[wb + ci];
                                }
                        y[yi] = acc;
                    }
}

static void check_large(const ref_conv *r, mlx_dtype d)
{
    int nd = r->nsp + 2, xs[5], ws[5], ys[5];
    xs[0] = r->N;
    ws[0] = r->O;
    ys[0] = r->N;
    size_t hi_pad[3];
    for (int i = 0; i < r->nsp; i++) {
        xs[i + 1] = r->in[i];
        ws[i + 1] = r->k[i];
        ys[i + 1] = r->out[i];
        /* symmetric padding, as the reference's out[] assumes */
        hi_pad[i] = (size_t)r->lo[i];
    }
    (void)hi_pad;
    xs[nd - 1] = r->C;
    ws[nd - 1] = r->C / r->groups;
    ys[nd - 1] = r->O;
    double *xv, *wv;
    mlx_array x = random_array(1, d, nd, xs, &xv), w = random_array(2, d, nd, ws, &wv), y = mlx_array_new();
    size_t n = (size_t)nd;
    int hi[3] = {r->lo[0], r->lo[1], r->lo[2]};
    assert_int_equal(mlx_conv_general(&y, x, w, r->stride, n - 2, r->lo, n - 2, hi, n - 2, r->kdil, n - 2, r->idil,
                                      n - 2, r->groups, r->flip, tu_stream()),
                     0);
    assert_true(tu_shape_is(y, nd, ys));
    size_t ny = count_of(nd, ys);
    double *ref = malloc(sizeof(double) * ny);
    assert_non_null(ref);
    reference(r, xv, wv, ref);
    assert_int_equal(mlx_array_eval(y), 0);
    mlx_array y64 = mlx_array_new();
    assert_int_equal(mlx_astype(&y64, y, MLX_FLOAT64, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(y64), 0);
    const double *got = mlx_array_data_float64(y64);
    double tol = d == MLX_FLOAT32 ? 1e-4 : d == MLX_FLOAT64 ? 1e-10 : d == MLX_FLOAT16 ? 2e-2 : 1e-1;
    for (size_t i = 0; i < ny; i++)
        if (fabs(got[i] - ref[i]) > tol * (1 + fabs(ref[i])))
            fail_msg("element %zu: %.9g, reference %.9g", i, got[i], ref[i]);
    free(ref);
    free(xv);
    free(wv);
    tu_free_n((mlx_array[]){x, w, y, y64}, 4);
}

static int out_size(int in, int k, int st, int lo, int kd, int id)
{
    return ((1 + id * (in - 1)) + 2 * lo - (1 + kd * (k - 1))) / st + 1;
}

static ref_conv make2d(int N, int H, int W, int C, int O, int K, int st, int pad, int groups)
{
    ref_conv r = {.nsp = 2, .N = N, .C = C, .O = O, .groups = groups};
    int in[2] = {H, W};
    for (int d = 0; d < 2; d++) {
        r.in[d] = in[d];
        r.k[d] = K;
        r.stride[d] = st;
        r.lo[d] = pad;
        r.kdil[d] = 1;
        r.idil[d] = 1;
        r.out[d] = out_size(in[d], K, st, pad, 1, 1);
    }
    return r;
}

/* Large enough to be split across the pool and cut into several blocks. */
static void test_large_convolutions_match_direct_reference(void **state)
{
    (void)state;
    ref_conv r = make2d(2, 23, 21, 24, 40, 3, 1, 1, 1);
    check_large(&r, MLX_FLOAT32);
    r = make2d(3, 19, 17, 16, 20, 3, 2, 1, 4); /* grouped: a gemm per group */
    check_large(&r, MLX_FLOAT32);
    r = make2d(2, 30, 30, 32, 32, 3, 1, 1, 32); /* depthwise */
    check_large(&r, MLX_FLOAT32);
    r = make2d(2, 21, 22, 16, 48, 5, 2, 2, 16); /* depthwise, 3 outputs per channel */
    check_large(&r, MLX_FLOAT32);
    r = make2d(4, 28, 28, 32, 48, 1, 1, 0, 1); /* 1x1: the input is its own im2col */
    check_large(&r, MLX_FLOAT32);
    r = make2d(2, 20, 20, 16, 24, 3, 1, 1, 1);
    check_large(&r, MLX_FLOAT16);
    check_large(&r, MLX_BFLOAT16);
    check_large(&r, MLX_FLOAT64);
    /* a long 1-d kernel with a per-row im2col larger than a block */
    ref_conv l = {.nsp = 1, .N = 2, .C = 64, .O = 8, .groups = 1, .flip = 1};
    l.in[0] = 900;
    l.k[0] = 300;
    l.stride[0] = 3;
    l.lo[0] = 10;
    l.kdil[0] = 1;
    l.idil[0] = 1;
    l.out[0] = out_size(900, 300, 3, 10, 1, 1);
    check_large(&l, MLX_FLOAT32);
    /* 3-d with every option */
    ref_conv t = {.nsp = 3, .N = 2, .C = 6, .O = 10, .groups = 1, .flip = 1};
    int in3[3] = {9, 8, 10}, k3[3] = {3, 2, 3}, st3[3] = {2, 1, 1}, kd3[3] = {1, 2, 1}, id3[3] = {1, 1, 2};
    for (int d = 0; d < 3; d++) {
        t.in[d] = in3[d];
        t.k[d] = k3[d];
        t.stride[d] = st3[d];
        t.lo[d] = 1;
        t.kdil[d] = kd3[d];
        t.idil[d] = id3[d];
        t.out[d] = out_size(in3[d], k3[d], st3[d], 1, kd3[d], id3[d]);
    }
    check_large(&t, MLX_FLOAT32);
}

/* The depthwise kernel sums blocks of channels in registers over at most
 * 64 taps per pass: full blocks, a tail, float64's narrower block, and
 * kernels of more than 64 and 128 taps (several passes) against the
 * direct reference. */
static void test_depthwise_blocks_tails_and_long_kernels_match_direct_reference(void **state)
{
    (void)state;
    ref_conv r = make2d(2, 13, 11, 128, 128, 3, 1, 1, 128); /* two blocks of 64 */
    check_large(&r, MLX_FLOAT32);
    r = make2d(1, 9, 10, 70, 70, 3, 2, 1, 70); /* a block and a tail of 6, stride 2 */
    check_large(&r, MLX_FLOAT32);
    r = make2d(2, 9, 9, 40, 40, 3, 1, 1, 40); /* float64: a block of 32 and 8 */
    check_large(&r, MLX_FLOAT64);
    check_large(&r, MLX_FLOAT16);
    r = make2d(1, 12, 12, 64, 64, 9, 1, 4, 64); /* 81 taps: two passes */
    check_large(&r, MLX_FLOAT32);
    ref_conv l = {.nsp = 1, .N = 2, .C = 20, .O = 20, .groups = 20, .flip = 1};
    l.in[0] = 400;
    l.k[0] = 150; /* 150 taps at most: three passes */
    l.stride[0] = 2;
    l.lo[0] = 30;
    l.kdil[0] = 2;
    l.idil[0] = 1;
    l.out[0] = out_size(400, 150, 2, 30, 2, 1);
    check_large(&l, MLX_FLOAT32);
}

/* A transposed (strided) input view gives what its contiguous copy gives. */
static void test_strided_input_view_matches_contiguous(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    int xs[4] = {2, 6, 7, 5}, ws[4] = {4, 3, 3, 5};
    mlx_array x = formula_array(0, MLX_FLOAT32, 4, xs), w = formula_array(1, MLX_FLOAT32, 4, ws);
    int perm[4] = {0, 2, 1, 3};
    mlx_array xt = mlx_array_new(), xtt = mlx_array_new(), a = mlx_array_new(), b = mlx_array_new();
    /* xtt: the same logical array as x, seen through a transposed buffer */
    assert_int_equal(mlx_transpose_axes(&xt, x, perm, 4, s), 0);
    assert_int_equal(mlx_contiguous(&xt, xt, false, s), 0);
    assert_int_equal(mlx_transpose_axes(&xtt, xt, perm, 4, s), 0);
    assert_int_equal(mlx_conv2d(&a, x, w, 1, 2, 1, 0, 1, 1, 1, s), 0);
    assert_int_equal(mlx_conv2d(&b, xtt, w, 1, 2, 1, 0, 1, 1, 1, s), 0);
    assert_int_equal(mlx_array_size(a), mlx_array_size(b));
    for (size_t i = 0; i < mlx_array_size(a); i++)
        assert_true(tu_get(a, i) == tu_get(b, i));
    tu_free_n((mlx_array[]){x, w, xt, xtt, a, b}, 6);
}

/* A compiled closure (traced once, replayed; shapeless replays on a new
 * batch size through the primitive's shape rule) gives the eager result. */
static int conv_relu(mlx_vector_array *res, const mlx_vector_array args)
{
    mlx_array x = mlx_array_new(), w = mlx_array_new(), y = mlx_array_new(), z = mlx_array_new();
    int rc = mlx_vector_array_get(&x, args, 0) || mlx_vector_array_get(&w, args, 1) ||
             mlx_conv2d(&y, x, w, 2, 1, 1, 1, 1, 1, 1, tu_stream()) || mlx_abs(&z, y, tu_stream()) ||
             mlx_vector_array_set_value(res, z);
    tu_free_n((mlx_array[]){x, w, y, z}, 4);
    return rc;
}

static void test_compiled_convolution_matches_eager(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(conv_relu);
    for (int shapeless = 0; shapeless < 2; shapeless++) {
        mlx_closure cf = mlx_closure_new();
        assert_int_equal(mlx_compile(&cf, f, shapeless), 0);
        for (int n = 1; n <= 3; n++) {
            int xs[4] = {n, 7, 6, 3}, ws[4] = {4, 3, 3, 3};
            mlx_array x = formula_array(0, MLX_FLOAT32, 4, xs), w = formula_array(1, MLX_FLOAT32, 4, ws);
            mlx_vector_array args = mlx_vector_array_new(), a = mlx_vector_array_new(), b = mlx_vector_array_new();
            assert_int_equal(mlx_vector_array_append_value(args, x), 0);
            assert_int_equal(mlx_vector_array_append_value(args, w), 0);
            assert_int_equal(mlx_closure_apply(&a, f, args), 0);
            assert_int_equal(mlx_closure_apply(&b, cf, args), 0);
            mlx_array ya = mlx_array_new(), yb = mlx_array_new();
            assert_int_equal(mlx_vector_array_get(&ya, a, 0), 0);
            assert_int_equal(mlx_vector_array_get(&yb, b, 0), 0);
            assert_int_equal(mlx_array_size(ya), mlx_array_size(yb));
            assert_int_equal(mlx_array_ndim(yb), 4);
            assert_int_equal(mlx_array_shape(yb)[0], n);
            for (size_t i = 0; i < mlx_array_size(ya); i++)
                assert_true(tu_get(ya, i) == tu_get(yb, i));
            tu_free_n((mlx_array[]){x, w, ya, yb}, 4);
            mlx_vector_array_free(args);
            mlx_vector_array_free(a);
            mlx_vector_array_free(b);
        }
        mlx_closure_free(cf);
    }
    mlx_closure_free(f);
}

/* The im2col is built block by block: the memory a large convolution
 * takes beyond its input, weight and output stays far below its whole
 * im2col (here 2 * 64 * 64 rows of 3 * 3 * 32 floats, 9.4 MB). */
static void test_scratch_stays_far_below_a_whole_im2col(void **state)
{
    (void)state;
    int xs[4] = {2, 64, 64, 32}, ws[4] = {32, 3, 3, 32};
    double *xv, *wv;
    mlx_array x = random_array(3, MLX_FLOAT32, 4, xs, &xv), w = random_array(4, MLX_FLOAT32, 4, ws, &wv);
    mlx_array y = mlx_array_new();
    assert_int_equal(mlx_array_eval(x), 0);
    assert_int_equal(mlx_array_eval(w), 0);
    size_t base = 0, peak = 0;
    assert_int_equal(mlx_get_active_memory(&base), 0);
    assert_int_equal(mlx_reset_peak_memory(), 0);
    mc_conv_wino_set_mode(MC_CONV_WINO_NEVER); /* the im2col path's scratch */
    assert_int_equal(mlx_conv2d(&y, x, w, 1, 1, 1, 1, 1, 1, 1, tu_stream()), 0);
    int rc = mlx_array_eval(y);
    mc_conv_wino_set_mode(MC_CONV_WINO_AUTO);
    assert_int_equal(rc, 0);
    assert_int_equal(mlx_get_peak_memory(&peak), 0);
    size_t out_bytes = mlx_array_nbytes(y), im2col = (size_t)2 * 64 * 64 * 9 * 32 * sizeof(float);
    size_t extra = peak > base + out_bytes ? peak - base - out_bytes : 0;
    if (extra > im2col / 3)
        fail_msg("scratch of %zu bytes for an im2col of %zu", extra, im2col);
    free(xv);
    free(wv);
    tu_free_n((mlx_array[]){x, w, y}, 3);
}

/* ---- the Winograd path ---- */

/* Runs conv_general (2-d, stride 1, 3x3, padding lo/hi per dim) of x and w
 * with the Winograd mode m; returns the result evaluated, and whether the
 * Winograd path ran in *took. */
static mlx_array conv_with_mode(int m, mlx_array x, mlx_array w, const int *lo, const int *hi, bool flip,
                                bool *took)
{
    int one[2] = {1, 1};
    mlx_array y = mlx_array_new();
    mc_conv_wino_set_mode(m);
    long before = mc_conv_wino_runs();
    int rc = mlx_conv_general(&y, x, w, one, 2, lo, 2, hi, 2, one, 2, one, 2, 1, flip, tu_stream());
    rc = rc || mlx_array_eval(y);
    *took = mc_conv_wino_runs() != before;
    mc_conv_wino_set_mode(MC_CONV_WINO_AUTO);
    assert_int_equal(rc, 0);
    return y;
}

/* The worst difference between the Winograd path under mode m and the
 * direct path, relative to 1 + |direct| + the direct result's RMS (the
 * scale of F(4x4, 3x3)'s error, see src/graph/conv_wino.c), for one
 * convolution; fails above tol, or when the Winograd path ran or not
 * against want_wino, or took the F(4x4, 3x3) variant or not against
 * want4. */
static double compare_paths(int m, int N, int H, int W, int C, int O, const int *lo, const int *hi, bool flip,
                            mlx_dtype d, bool want_wino, bool want4, double tol)
{
    int xs[4] = {N, H, W, C}, ws[4] = {O, 3, 3, C};
    double *xv, *wv;
    mlx_array x = random_array((uint32_t)(N + H * 3 + W * 7 + C), d, 4, xs, &xv);
    mlx_array w = random_array((uint32_t)(O + C * 5), d, 4, ws, &wv);
    bool took_w, took_d;
    long before4 = mc_conv_wino4_runs();
    mlx_array a = conv_with_mode(m, x, w, lo, hi, flip, &took_w);
    bool took4 = mc_conv_wino4_runs() != before4;
    mlx_array b = conv_with_mode(MC_CONV_WINO_NEVER, x, w, lo, hi, flip, &took_d);
    if (took_w != want_wino || took4 != want4 || took_d)
        fail_msg("N %d H %d W %d C %d O %d: Winograd path taken %d (want %d), F(4x4) %d (want %d), direct %d", N,
                 H, W, C, O, took_w, want_wino, took4, want4, took_d);
    assert_int_equal(mlx_array_size(a), mlx_array_size(b));
    assert_int_equal(mlx_array_ndim(a), 4);
    assert_int_equal(mlx_array_shape(a)[1], H + lo[0] + hi[0] - 2);
    assert_int_equal(mlx_array_shape(a)[2], W + lo[1] + hi[1] - 2);
    double sq = 0;
    for (size_t i = 0; i < mlx_array_size(b); i++)
        sq += tu_get(b, i) * tu_get(b, i);
    double rms = mlx_array_size(b) ? sqrt(sq / (double)mlx_array_size(b)) : 0, worst = 0;
    for (size_t i = 0; i < mlx_array_size(a); i++) {
        double ga = tu_get(a, i), gb = tu_get(b, i), e = fabs(ga - gb) / (1 + fabs(gb) + rms);
        if (e > tol)
            fail_msg("N %d H %d W %d C %d O %d pad %d,%d|%d,%d flip %d: element %zu is %.9g, direct %.9g", N, H, W,
                     C, O, lo[0], lo[1], hi[0], hi[1], flip, i, ga, gb);
        worst = e > worst ? e : worst;
    }
    free(xv);
    free(wv);
    tu_free_n((mlx_array[]){x, w, a, b}, 4);
    return worst;
}

/* Sizes that are not multiples of the 2x2 tile, every padding from 0 to 2
 * on each side, batch 1 and 3, 1, 3 and 64 channels on either side, with
 * and without flip: the Winograd path gives the direct path's values. */
static void test_winograd_matches_direct_on_odd_shapes(void **state)
{
    (void)state;
    static const int chans[3] = {1, 3, 64};
    static const int pads[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {1, 0}, {2, 0}};
    static const int sizes[4][2] = {{5, 7}, {8, 3}, {3, 4}, {9, 9}};
    int idx = 0;
    for (int ci = 0; ci < 3; ci++)
        for (int oi = 0; oi < 3; oi++)
            for (int pi = 0; pi < 6; pi++, idx++) {
                int lo[2] = {pads[pi][0], pads[(pi + 1) % 6][0]}, hi[2] = {pads[pi][1], pads[(pi + 1) % 6][1]};
                const int *hw = sizes[idx % 4];
                compare_paths(MC_CONV_WINO_ALWAYS2, idx % 2 ? 3 : 1, hw[0], hw[1], chans[ci], chans[oi], lo, hi,
                              idx % 3 == 0, MLX_FLOAT32, true, false, 1e-5);
            }
}

/* The same for F(4x4, 3x3), forced: sizes that are not multiples of the
 * 4x4 tile (outputs of 1 to 13 along a dim, so a tile can hold 1, 2 or 3
 * valid rows or columns). */
static void test_winograd4_matches_direct_on_odd_shapes(void **state)
{
    (void)state;
    static const int chans[3] = {1, 3, 64};
    static const int pads[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {1, 0}, {2, 0}};
    static const int sizes[5][2] = {{5, 7}, {8, 3}, {3, 4}, {9, 11}, {13, 6}};
    int idx = 0;
    for (int ci = 0; ci < 3; ci++)
        for (int oi = 0; oi < 3; oi++)
            for (int pi = 0; pi < 6; pi++, idx++) {
                int lo[2] = {pads[pi][0], pads[(pi + 1) % 6][0]}, hi[2] = {pads[pi][1], pads[(pi + 1) % 6][1]};
                const int *hw = sizes[idx % 5];
                compare_paths(MC_CONV_WINO_ALWAYS4, idx % 2 ? 3 : 1, hw[0], hw[1], chans[ci], chans[oi], lo, hi,
                              idx % 3 == 0, MLX_FLOAT32, true, true, 1e-5);
            }
}

/* A layer of many tiles (several blocks per piece, all pieces of the
 * pool), also against the double-precision reference; and the rule of the
 * default mode: such a layer takes the Winograd path, a layer of 3 input
 * channels does not. */
static void test_winograd_on_a_large_layer_matches_reference(void **state)
{
    (void)state;
    int lo[2] = {1, 1}, hi[2] = {1, 1};
    compare_paths(MC_CONV_WINO_ALWAYS, 3, 29, 31, 64, 96, lo, hi, false, MLX_FLOAT32, true, true, 1e-5);
    ref_conv r = make2d(3, 29, 31, 64, 96, 3, 1, 1, 1);
    long before = mc_conv_wino_runs();
    check_large(&r, MLX_FLOAT32);
    assert_true(mc_conv_wino_runs() == before + 1);
    r = make2d(2, 30, 30, 3, 64, 3, 1, 1, 1);
    before = mc_conv_wino_runs();
    check_large(&r, MLX_FLOAT32);
    assert_true(mc_conv_wino_runs() == before);
}

/* The default rule's choice (src/graph/conv_wino.c): no Winograd below
 * 16 input or 8 output channels; F(4x4, 3x3) when both output dims are at
 * least 8 and its tiles do 1.3x fewer multiplies (outputs 8, 11, 14);
 * F(2x2, 3x3) on smaller outputs (6, 7) and where edge tiles eat the
 * saving (9, 10: 1.23x); the variants give the direct path's values. */
static void test_winograd_rule_picks_each_variant_where_stated(void **state)
{
    (void)state;
    static const struct {
        int h, w, c, o;
        bool wino, four;
    } cases[] = {
        {10, 10, 16, 8, true, true},   /* output 8x8 */
        {13, 16, 16, 16, true, true},  /* 11x14 */
        {8, 8, 16, 8, true, false},    /* 6x6 */
        {9, 30, 32, 8, true, false},   /* 7x28: one dim short */
        {11, 11, 16, 8, true, false},  /* 9x9 */
        {12, 12, 16, 16, true, false}, /* 10x10 */
        {30, 30, 3, 64, false, false}, /* too few input channels */
        {30, 30, 16, 4, false, false}, /* too few output channels */
    };
    int lo[2] = {0, 0}, hi[2] = {0, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        compare_paths(MC_CONV_WINO_AUTO, 1, cases[i].h, cases[i].w, cases[i].c, cases[i].o, lo, hi, false,
                      MLX_FLOAT32, cases[i].wino, cases[i].four, 1e-5);
}

/* float16 and bfloat16 never take the Winograd path (it computes float32
 * only); their results are the direct path's. */
static void test_half_types_keep_the_direct_path(void **state)
{
    (void)state;
    int lo[2] = {1, 1}, hi[2] = {1, 1};
    compare_paths(MC_CONV_WINO_ALWAYS, 1, 6, 5, 64, 64, lo, hi, false, MLX_FLOAT16, false, false, 0);
    compare_paths(MC_CONV_WINO_ALWAYS, 1, 6, 5, 64, 64, lo, hi, false, MLX_BFLOAT16, false, false, 0);
}

/* MLX's own cases (values and vjps) with every convolution that can take
 * the Winograd path taking it, as F(2x2, 3x3) and again as F(4x4, 3x3):
 * the forward results and the derivative rules (whose convolutions are
 * 3x3 of stride 1 too) are unchanged. */
static void test_mlx_cases_pass_on_the_winograd_path(void **state)
{
    static const int modes[2] = {MC_CONV_WINO_ALWAYS2, MC_CONV_WINO_ALWAYS4};
    for (int i = 0; i < 2; i++) {
        mc_conv_wino_set_mode(modes[i]);
        long before = mc_conv_wino_runs(), before4 = mc_conv_wino4_runs();
        test_results_match_mlx_for_every_configuration(state);
        test_vjp_matches_mlx(state);
        long ran = mc_conv_wino_runs() - before, ran4 = mc_conv_wino4_runs() - before4;
        mc_conv_wino_set_mode(MC_CONV_WINO_AUTO);
        assert_true(ran > 0);
        assert_true(i ? ran4 == ran : ran4 == 0);
    }
}

/* The vector builds of both variants' transforms give the generic
 * build's values. */
static void test_winograd_transforms_match_generic_build(void **state)
{
    (void)state;
    for (int tile = 2; tile <= 4; tile += 2) {
        const mc_wino_kernels *k = mc_wino_kernels_get(tile), *ref = mc_wino_kernels_generic(tile);
        mc_wino_geom g = {.N = 2, .H = 7, .W = 6, .C = 37, .O = 21, .OH = 7, .OW = 6, .pad_h = 1, .pad_w = 1};
        g.tiles_h = (g.OH + tile - 1) / tile;
        g.tiles_w = (g.OW + tile - 1) / tile;
        assert_int_equal(k->m, tile);
        assert_int_equal(ref->xi, (tile + 2) * (tile + 2));
        size_t xi = (size_t)k->xi;
        int nt = g.N * g.tiles_h * g.tiles_w;
        size_t nx = (size_t)g.N * g.H * g.W * g.C, nw = (size_t)g.O * 9 * g.C, nu = xi * (size_t)g.O * g.C;
        size_t nv = xi * (size_t)nt * g.C, nm = xi * (size_t)nt * g.O, ny = (size_t)g.N * g.OH * g.OW * g.O;
        float *x = malloc(nx * 4), *w = malloc(nw * 4), *m = malloc(nm * 4), *zero = calloc((size_t)g.C, 4);
        float *u[2] = {malloc(nu * 4), malloc(nu * 4)}, *v[2] = {malloc(nv * 4), malloc(nv * 4)};
        float *y[2] = {calloc(ny, 4), calloc(ny, 4)};
        uint32_t s = 7;
        for (size_t i = 0; i < nx + nw + nm; i++) {
            s = s * 1664525u + 1013904223u;
            float f = (float)((int)(s >> 16) - 32768) / 8192.0f;
            if (i < nx)
                x[i] = f;
            else if (i < nx + nw)
                w[i - nx] = f;
            else
                m[i - nx - nw] = f;
        }
        const mc_wino_kernels *ks[2] = {k, ref};
        for (int b = 0; b < 2; b++) {
            ks[b]->filter(w, g.O, g.C, true, u[b]);
            ks[b]->input(&g, x, 0, nt, zero, v[b], (size_t)nt * g.C);
            ks[b]->output(&g, m, (size_t)nt * g.O, 0, nt, y[b]);
        }
        for (size_t i = 0; i < nu; i++)
            assert_float_equal(u[0][i], u[1][i], 1e-5f * (1 + fabsf(u[1][i])));
        for (size_t i = 0; i < nv; i++)
            assert_float_equal(v[0][i], v[1][i], 1e-5f * (1 + fabsf(v[1][i])));
        for (size_t i = 0; i < ny; i++)
            assert_float_equal(y[0][i], y[1][i], 1e-5f * (1 + fabsf(y[1][i])));
        for (int b = 0; b < 2; b++) {
            free(u[b]);
            free(v[b]);
            free(y[b]);
        }
        free(x);
        free(w);
        free(m);
        free(zero);
    }
    assert_null(mc_wino_kernels_get(3));
}

/* The Winograd path transforms the input block by block: the memory it
 * takes beyond input, weight and output stays far below the whole
 * transformed input and products (here 16 x 2 * 64 * 64 tiles x 64
 * floats, 33.5 MB). */
static void test_winograd_scratch_stays_far_below_a_whole_transform(void **state)
{
    (void)state;
    int xs[4] = {2, 128, 128, 32}, ws[4] = {32, 3, 3, 32};
    double *xv, *wv;
    mlx_array x = random_array(3, MLX_FLOAT32, 4, xs, &xv), w = random_array(4, MLX_FLOAT32, 4, ws, &wv);
    mlx_array y = mlx_array_new();
    assert_int_equal(mlx_array_eval(x), 0);
    assert_int_equal(mlx_array_eval(w), 0);
    size_t base = 0, peak = 0;
    assert_int_equal(mlx_get_active_memory(&base), 0);
    assert_int_equal(mlx_reset_peak_memory(), 0);
    long before = mc_conv_wino_runs();
    assert_int_equal(mlx_conv2d(&y, x, w, 1, 1, 1, 1, 1, 1, 1, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(y), 0);
    assert_true(mc_conv_wino_runs() == before + 1);
    assert_int_equal(mlx_get_peak_memory(&peak), 0);
    size_t out_bytes = mlx_array_nbytes(y), whole = (size_t)16 * 2 * 64 * 64 * 64 * sizeof(float);
    size_t extra = peak > base + out_bytes ? peak - base - out_bytes : 0;
    if (extra > whole / 4)
        fail_msg("scratch of %zu bytes for a whole transform of %zu", extra, whole);
    free(xv);
    free(wv);
    tu_free_n((mlx_array[]){x, w, y}, 3);
}

/* Every allocation of a Winograd convolution failing in turn gives one
 * error and frees what was taken (the leak checkers watch this run); in a
 * build without fault injection the first attempt succeeds. */
static void test_winograd_allocation_failures_report_one_error(void **state)
{
    (void)state;
    int xs[4] = {2, 9, 8, 32}, ws[4] = {16, 3, 3, 32};
    double *xv, *wv;
    mlx_array x = random_array(5, MLX_FLOAT32, 4, xs, &xv), w = random_array(6, MLX_FLOAT32, 4, ws, &wv);
    assert_int_equal(mlx_array_eval(x), 0);
    assert_int_equal(mlx_array_eval(w), 0);
    long before = mc_conv_wino_runs();
    for (long n = 0;; n++) {
        mlx_array y = mlx_array_new();
        mc_fault_fail_after(n);
        int rc = mlx_conv2d(&y, x, w, 1, 1, 1, 1, 1, 1, 1, tu_stream()) || mlx_array_eval(y);
        mc_fault_fail_after(-1);
        mlx_array_free(y);
        if (!rc) {
            tu_expect_no_error();
            break;
        }
        if (tu_error_count() != 1)
            fail_msg("allocation %ld: %d messages, last \"%s\"", n, tu_error_count(), tu_last_error());
        tu_reset_errors();
        assert_true(n < 1000);
    }
    assert_true(mc_conv_wino_runs() == before + 1);
    free(xv);
    free(wv);
    tu_free_n((mlx_array[]){x, w}, 2);
}

static void test_empty_batch_gives_empty_output(void **state)
{
    (void)state;
    int xs[3] = {0, 5, 2}, ws[3] = {3, 2, 2};
    mlx_array x = formula_array(0, MLX_FLOAT32, 3, xs), w = formula_array(1, MLX_FLOAT32, 3, ws);
    mlx_array y = mlx_array_new();
    assert_int_equal(mlx_conv1d(&y, x, w, 1, 0, 1, 1, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(y), 0);
    int want[3] = {0, 4, 3};
    assert_true(tu_shape_is(y, 3, want));
    tu_free_n((mlx_array[]){x, w, y}, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_results_match_mlx_for_every_configuration, tu_test_teardown),
        cmocka_unit_test_teardown(test_vjp_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_refused_calls_report_mlx_messages, tu_test_teardown),
        cmocka_unit_test_teardown(test_bad_handles_and_vectors_are_refused, tu_test_teardown),
        cmocka_unit_test_teardown(test_empty_vectors_take_defaults, tu_test_teardown),
        cmocka_unit_test_teardown(test_large_convolutions_match_direct_reference, tu_test_teardown),
        cmocka_unit_test_teardown(test_depthwise_blocks_tails_and_long_kernels_match_direct_reference, tu_test_teardown),
        cmocka_unit_test_teardown(test_strided_input_view_matches_contiguous, tu_test_teardown),
        cmocka_unit_test_teardown(test_compiled_convolution_matches_eager, tu_test_teardown),
        cmocka_unit_test_teardown(test_scratch_stays_far_below_a_whole_im2col, tu_test_teardown),
        cmocka_unit_test_teardown(test_empty_batch_gives_empty_output, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd_matches_direct_on_odd_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd4_matches_direct_on_odd_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd_on_a_large_layer_matches_reference, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd_rule_picks_each_variant_where_stated, tu_test_teardown),
        cmocka_unit_test_teardown(test_half_types_keep_the_direct_path, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_cases_pass_on_the_winograd_path, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd_transforms_match_generic_build, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd_scratch_stays_far_below_a_whole_transform, tu_test_teardown),
        cmocka_unit_test_teardown(test_winograd_allocation_failures_report_one_error, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
