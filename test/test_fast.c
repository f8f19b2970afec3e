/* The fast.h suite: rms_norm, layer_norm, rope, rope_dynamic and
 * scaled_dot_product_attention against MLX 0.31.1 (values and vjps from
 * test/fixtures/fast_cases.h, written by scripts/make_fast_fixtures.py),
 * MLX's error messages for bad arguments, the tiled attention against the
 * unfused composition on shapes that cross several query and key blocks,
 * and the Metal / CUDA objects of a build without those back-ends. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures/fast_cases.h"
#include "mlx/c/mlx.h"
#include "test_util.h"

static mlx_array input_of(const fast_input *in)
{
    if (!in->present)
        return (mlx_array){0};
    return tu_array_of(in->dtype, fast_pool + in->off, in->shape, in->ndim);
}

/* Runs case c's op on inputs in[0..4] (empty handles where absent). */
static int run_op(const fast_case *c, mlx_array *res, const mlx_array *in)
{
    mlx_stream s = tu_stream();
    mlx_optional_float base = {c->base, c->has_base != 0};
    switch (c->op) {
    case 0: return mlx_fast_rms_norm(res, in[0], in[1], c->eps, s);
    case 1: return mlx_fast_layer_norm(res, in[0], in[1], in[2], c->eps, s);
    case 2: return mlx_fast_rope(res, in[0], c->dims, c->traditional, base, c->scale, c->offset, in[1], s);
    case 3: return mlx_fast_rope_dynamic(res, in[0], c->dims, c->traditional, base, c->scale, in[2], in[1], s);
    default:
        return mlx_fast_scaled_dot_product_attention(res, in[0], in[1], in[2], c->sdpa_scale, c->mask_mode, in[3],
                                                     in[4], s);
    }
}

/* The inputs MLX's vjp differentiated: the norms' present inputs, rope's
 * x, attention's q, k, v, an additive mask and the sinks. */
static bool is_primal(const fast_case *c, int i)
{
    if (!c->in[i].present)
        return false;
    if (c->op == 2 || c->op == 3)
        return i == 0;
    if (c->op == 4 && i == 3)
        return c->in[3].dtype != MLX_BOOL;
    return true;
}

typedef struct vjp_payload {
    const fast_case *c;
    mlx_array in[5];
} vjp_payload;

static int apply_case(mlx_vector_array *out, const mlx_vector_array args, void *payload)
{
    vjp_payload *p = payload;
    mlx_array in[5];
    size_t k = 0;
    for (int i = 0; i < 5; i++) {
        in[i] = p->in[i];
        if (is_primal(p->c, i)) {
            in[i] = mlx_array_new();
            mlx_vector_array_get(&in[i], args, k++);
        }
    }
    mlx_array r = mlx_array_new();
    int rc = run_op(p->c, &r, in);
    for (int i = 0; i < 5; i++)
        if (is_primal(p->c, i))
            mlx_array_free(in[i]);
    if (!rc)
        rc = mlx_vector_array_set_value(out, r);
    mlx_array_free(r);
    return rc;
}

static void check_values(const fast_case *c, mlx_array got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double g = tu_get(got, i), w = want[i];
        double tol = c->atol + c->rtol * fabs(w);
        if (!(fabs(g - w) <= tol) && !(isnan(g) && isnan(w)) && !(isinf(w) && g == w))
            fail_msg("%s: element %zu is %.9g, MLX %.9g", c->name, i, g, w);
    }
}

static void test_every_case_equals_mlx(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof fast_cases / sizeof fast_cases[0]; ci++) {
        const fast_case *c = &fast_cases[ci];
        vjp_payload p = {c, {{0}}};
        for (int i = 0; i < 5; i++)
            p.in[i] = input_of(&c->in[i]);
        size_t n = 1;
        for (int d = 0; d < c->out_ndim; d++)
            n *= (size_t)c->out_shape[d];
        if (c->grad < 0) {
            mlx_array r = mlx_array_new();
            assert_int_equal(run_op(c, &r, p.in), 0);
            if (mlx_array_dtype(r) != (mlx_dtype)c->out_dtype)
                fail_msg("%s: dtype %d, MLX %d", c->name, (int)mlx_array_dtype(r), c->out_dtype);
            assert_true(tu_shape_is(r, c->out_ndim, c->out_shape));
            check_values(c, r, fast_pool + c->out, n);
            mlx_array_free(r);
        } else {
            mlx_array prim[5];
            size_t np = 0, at = 0;
            for (int i = 0; i < 5; i++)
                if (is_primal(c, i)) {
                    if (i == c->grad)
                        at = np;
                    prim[np++] = p.in[i];
                }
            /* the cotangent has the output's shape: the forward case's */
            mlx_array fwd = mlx_array_new();
            assert_int_equal(run_op(c, &fwd, p.in), 0);
            mlx_array cot = tu_array_of(mlx_array_dtype(fwd), fast_pool + c->cot, mlx_array_shape(fwd),
                                        (int)mlx_array_ndim(fwd));
            mlx_closure f = mlx_closure_new_func_payload(apply_case, &p, NULL);
            mlx_vector_array vp = mlx_vector_array_new_data(prim, np), vc = mlx_vector_array_new_data(&cot, 1);
            mlx_vector_array outs = mlx_vector_array_new(), vjps = mlx_vector_array_new();
            assert_int_equal(mlx_vjp(&outs, &vjps, f, vp, vc), 0);
            mlx_array g = mlx_array_new();
            assert_int_equal(mlx_vector_array_get(&g, vjps, at), 0);
            assert_true(tu_shape_is(g, c->out_ndim, c->out_shape));
            check_values(c, g, fast_pool + c->out, n);
            mlx_array_free(g);
            mlx_array_free(fwd);
            mlx_array_free(cot);
            mlx_vector_array_free(vp);
            mlx_vector_array_free(vc);
            mlx_vector_array_free(outs);
            mlx_vector_array_free(vjps);
            mlx_closure_free(f);
        }
        tu_free_n(p.in, 5);
    }
}

static mlx_array normal(const int *shape, int ndim, mlx_dtype dt, uint64_t seed)
{
    mlx_array key = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_random_key(&key, seed), 0);
    assert_int_equal(mlx_random_normal(&r, shape, (size_t)ndim, dt, 0.0f, 1.0f, key, tu_stream()), 0);
    mlx_array_free(key);
    return r;
}

/* softmax(scale q k^T + causal or mask) v with the library's own matmul
 * and softmax, heads repeated for grouped queries by a broadcast. A mask
 * (mask.ctx not NULL, shape (Lq, Lk)) is bool (false hides the key) or
 * added; sinks (sinks.ctx not NULL, one per query head) join each row as
 * one more score whose value is zero. */
static mlx_array unfused_with(mlx_array q, mlx_array k, mlx_array v, float scale, bool causal, mlx_array mask,
                              mlx_array sinks)
{
    mlx_stream s = tu_stream();
    const int *qs = mlx_array_shape(q), *ks = mlx_array_shape(k);
    int rep = qs[1] / ks[1];
    int kshape5[5] = {ks[0], ks[1], 1, ks[2], ks[3]}, q5[5] = {qs[0], ks[1], rep, qs[2], qs[3]};
    mlx_array k5 = mlx_array_new(), v5 = mlx_array_new(), qq = mlx_array_new(), kt = mlx_array_new();
    mlx_array sc = mlx_array_new(), p = mlx_array_new(), o = mlx_array_new(), out = mlx_array_new();
    mlx_array a = mlx_array_new_float(scale);
    const int *vs = mlx_array_shape(v);
    int vshape5[5] = {vs[0], vs[1], 1, vs[2], vs[3]};
    assert_int_equal(mlx_reshape(&k5, k, kshape5, 5, s), 0);
    assert_int_equal(mlx_reshape(&v5, v, vshape5, 5, s), 0);
    assert_int_equal(mlx_multiply(&qq, q, a, s), 0);
    assert_int_equal(mlx_reshape(&qq, qq, q5, 5, s), 0);
    assert_int_equal(mlx_swapaxes(&kt, k5, -1, -2, s), 0);
    assert_int_equal(mlx_matmul(&sc, qq, kt, s), 0);
    if (causal) {
        mlx_array t = mlx_array_new(), m = mlx_array_new(), low = mlx_array_new_float(-3.4028234663852886e38f);
        assert_int_equal(mlx_tri(&t, qs[2], ks[2], ks[2] - qs[2], MLX_BOOL, s), 0);
        assert_int_equal(mlx_where(&m, t, sc, low, s), 0);
        mlx_array_set(&sc, m);
        tu_free_n((mlx_array[]){t, m, low}, 3);
    }
    if (mask.ctx && mlx_array_dtype(mask) == MLX_BOOL) {
        mlx_array m = mlx_array_new(), low = mlx_array_new_float(-3.4028234663852886e38f);
        assert_int_equal(mlx_where(&m, mask, sc, low, s), 0);
        mlx_array_set(&sc, m);
        tu_free_n((mlx_array[]){m, low}, 2);
    } else if (mask.ctx) {
        assert_int_equal(mlx_add(&sc, sc, mask, s), 0);
    }
    if (sinks.ctx) {
        /* the sink's score as a last column, dropped after the softmax */
        int s5[5] = {1, ks[1], rep, 1, 1}, col[5] = {qs[0], ks[1], rep, qs[2], 1};
        mlx_array sk = mlx_array_new();
        assert_int_equal(mlx_reshape(&sk, sinks, s5, 5, s), 0);
        assert_int_equal(mlx_broadcast_to(&sk, sk, col, 5, s), 0);
        mlx_vector_array both = mlx_vector_array_new();
        mlx_vector_array_append_value(both, sc);
        mlx_vector_array_append_value(both, sk);
        assert_int_equal(mlx_concatenate_axis(&sc, both, -1, s), 0);
        assert_int_equal(mlx_softmax_axis(&p, sc, -1, true, s), 0);
        int start[5] = {0}, stop[5] = {qs[0], ks[1], rep, qs[2], ks[2]}, step[5] = {1, 1, 1, 1, 1};
        assert_int_equal(mlx_slice(&p, p, start, 5, stop, 5, step, 5, s), 0);
        mlx_vector_array_free(both);
        mlx_array_free(sk);
    } else {
        assert_int_equal(mlx_softmax_axis(&p, sc, -1, true, s), 0);
    }
    assert_int_equal(mlx_matmul(&o, p, v5, s), 0);
    int oshape[4] = {qs[0], qs[1], qs[2], vs[3]};
    assert_int_equal(mlx_reshape(&out, o, oshape, 4, s), 0);
    tu_free_n((mlx_array[]){k5, v5, qq, kt, sc, p, o, a}, 8);
    return out;
}

static mlx_array unfused(mlx_array q, mlx_array k, mlx_array v, float scale, bool causal)
{
    return unfused_with(q, k, v, scale, causal, (mlx_array){0}, (mlx_array){0});
}

static void compare_close(mlx_array a, mlx_array b, double tol)
{
    mlx_array d = mlx_array_new(), m = mlx_array_new();
    assert_int_equal(mlx_subtract(&d, a, b, tu_stream()), 0);
    assert_int_equal(mlx_abs(&d, d, tu_stream()), 0);
    assert_int_equal(mlx_max(&m, d, false, tu_stream()), 0);
    double got = tu_get(m, 0);
    if (!(got <= tol))
        fail_msg("largest difference %g above %g", got, tol);
    mlx_array_free(d);
    mlx_array_free(m);
}

/* Several query blocks (256) and key blocks (256), grouped heads, causal
 * with Lq < Lk, and head sizes on and off the vector width: the tiles
 * and the causal skipping agree with the whole-matrix computation. */
static void test_tiled_attention_equals_the_unfused_composition(void **state)
{
    (void)state;
    static const int cfg[][6] = {{2, 8, 2, 300, 300, 64}, {1, 4, 4, 130, 700, 40}, {1, 2, 1, 1, 600, 128}};
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        int qs[4] = {cfg[i][0], cfg[i][1], cfg[i][3], cfg[i][5]};
        int ks[4] = {cfg[i][0], cfg[i][2], cfg[i][4], cfg[i][5]};
        mlx_array q = normal(qs, 4, MLX_FLOAT32, 1 + i), k = normal(ks, 4, MLX_FLOAT32, 7 + i);
        mlx_array v = normal(ks, 4, MLX_FLOAT32, 13 + i);
        for (int causal = 0; causal < 2; causal++) {
            mlx_array r = mlx_array_new();
            float scale = 1.0f / sqrtf((float)cfg[i][5]);
            assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, k, v, scale, causal ? "causal" : "",
                                                                   (mlx_array){0}, (mlx_array){0}, tu_stream()),
                             0);
            mlx_array u = unfused(q, k, v, scale, causal);
            compare_close(r, u, 2e-5);
            mlx_array_free(r);
            mlx_array_free(u);
        }
        tu_free_n((mlx_array[]){q, k, v}, 3);
    }
}

/* Masks (bool and additive) and sinks over several query and key blocks
 * (Lq 300, Lk 520: neither a multiple of the 256 tile), with grouped
 * heads: each tile applies its part of the mask and the sink enters every
 * row's running state once. */
static void test_tiled_attention_with_masks_and_sinks_equals_the_composition(void **state)
{
    (void)state;
    enum { B = 1, HQ = 4, HK = 2, LQ = 300, LK = 520, D = 64 };
    int qs[4] = {B, HQ, LQ, D}, ks[4] = {B, HK, LK, D}, ms[2] = {LQ, LK}, ss[1] = {HQ};
    mlx_array q = normal(qs, 4, MLX_FLOAT32, 21), k = normal(ks, 4, MLX_FLOAT32, 22);
    mlx_array v = normal(ks, 4, MLX_FLOAT32, 23), add = normal(ms, 2, MLX_FLOAT32, 24);
    mlx_array sinks = normal(ss, 1, MLX_FLOAT32, 25);
    static bool keep[LQ * LK];
    for (int i = 0; i < LQ; i++)
        for (int j = 0; j < LK; j++)
            keep[i * LK + j] = (i * 7 + j * 3) % 5 != 0 || j == 0;
    mlx_array bmask = mlx_array_new_data(keep, ms, 2, MLX_BOOL);
    float scale = 0.125f;
    for (int mk = 0; mk < 3; mk++)
        for (int sk = 0; sk < 2; sk++) {
            mlx_array mask = mk == 0 ? (mlx_array){0} : mk == 1 ? bmask : add;
            mlx_array snk = sk ? sinks : (mlx_array){0};
            mlx_array r = mlx_array_new();
            assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, k, v, scale, mk ? "array" : "", mask,
                                                                   snk, tu_stream()),
                             0);
            mlx_array u = unfused_with(q, k, v, scale, false, mask, snk);
            compare_close(r, u, 2e-5);
            tu_free_n((mlx_array[]){r, u}, 2);
        }
    tu_free_n((mlx_array[]){q, k, v, add, sinks, bmask}, 6);
}

/* The panel path's edges on every kernel build (MLX_CPU_ISA picks one per
 * run): query counts off the query panel (8, 16, 32), key counts and
 * value widths off the key panel (4, 6, 8), D != Dv, grouped heads, with
 * K and V contiguous (read in place, partial panels packed) and as
 * transposed views (packed whole), and float16 (converted, computed in
 * float32). */
static void test_attention_panel_edges_equal_the_composition(void **state)
{
    (void)state;
    enum { B = 2, HQ = 6, HK = 2, LQ = 37, LK = 45, D = 24, DV = 21 };
    int qs[4] = {B, HQ, LQ, D}, ks[4] = {B, HK, LK, D}, vs[4] = {B, HK, LK, DV};
    int kts[4] = {B, HK, D, LK}, vts[4] = {B, HK, DV, LK};
    mlx_stream s = tu_stream();
    mlx_array q = normal(qs, 4, MLX_FLOAT32, 31), k = normal(ks, 4, MLX_FLOAT32, 32);
    mlx_array v = normal(vs, 4, MLX_FLOAT32, 33);
    /* the same values as transposed views: strided K and V rows */
    mlx_array kt = mlx_array_new(), vt = mlx_array_new(), kview = mlx_array_new(), vview = mlx_array_new();
    assert_int_equal(mlx_swapaxes(&kt, k, -1, -2, s), 0);
    assert_int_equal(mlx_copy(&kt, kt, s), 0);
    assert_int_equal(mlx_swapaxes(&vt, v, -1, -2, s), 0);
    assert_int_equal(mlx_copy(&vt, vt, s), 0);
    assert_int_equal(mlx_array_eval(kt) || mlx_array_eval(vt), 0);
    assert_int_equal(mlx_array_ndim(kt) == 4 && mlx_array_shape(kt)[2] == kts[2] && mlx_array_shape(vt)[2] == vts[2],
                     1);
    assert_int_equal(mlx_swapaxes(&kview, kt, -1, -2, s), 0);
    assert_int_equal(mlx_swapaxes(&vview, vt, -1, -2, s), 0);
    mlx_array q16 = mlx_array_new(), k16 = mlx_array_new(), v16 = mlx_array_new();
    assert_int_equal(mlx_astype(&q16, q, MLX_FLOAT16, s) || mlx_astype(&k16, k, MLX_FLOAT16, s) ||
                         mlx_astype(&v16, v, MLX_FLOAT16, s),
                     0);
    float scale = 0.3f;
    for (int causal = 0; causal < 2; causal++) {
        const char *mode = causal ? "causal" : "";
        mlx_array u = unfused(q, k, v, scale, causal);
        for (int view = 0; view < 2; view++) {
            mlx_array r = mlx_array_new();
            assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, view ? kview : k, view ? vview : v, scale,
                                                                   mode, (mlx_array){0}, (mlx_array){0}, s),
                             0);
            compare_close(r, u, 2e-5);
            mlx_array_free(r);
        }
        /* float16 in, float32 inside: within the output's rounding of the
         * float32 composition over the same (float16) values */
        mlx_array r16 = mlx_array_new(), r32 = mlx_array_new(), q32 = mlx_array_new(), k32 = mlx_array_new();
        mlx_array v32 = mlx_array_new();
        assert_int_equal(mlx_fast_scaled_dot_product_attention(&r16, q16, k16, v16, scale, mode, (mlx_array){0},
                                                               (mlx_array){0}, s),
                         0);
        assert_int_equal(mlx_astype(&r16, r16, MLX_FLOAT32, s) || mlx_astype(&q32, q16, MLX_FLOAT32, s) ||
                             mlx_astype(&k32, k16, MLX_FLOAT32, s) || mlx_astype(&v32, v16, MLX_FLOAT32, s),
                         0);
        mlx_array u16 = unfused(q32, k32, v32, scale, causal);
        compare_close(r16, u16, 2e-3);
        tu_free_n((mlx_array[]){u, r16, r32, q32, k32, v32, u16}, 7);
    }
    tu_free_n((mlx_array[]){q, k, v, kt, vt, kview, vview, q16, k16, v16}, 10);
}

/* Norms over long rows (the vector paths and their tails) and over an
 * output of 8.6 MiB (written with non-temporal stores) against the same
 * composition of ops. */
static void test_norms_of_long_rows_equal_their_composition(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    static const int shapes[2][2] = {{37, 4099}, {1100, 2048}};
    for (int k = 0; k < 2; k++) {
        int wshape[1] = {shapes[k][1]};
        mlx_array x = normal(shapes[k], 2, MLX_FLOAT32, 3), w = normal(wshape, 1, MLX_FLOAT32, 4);
        mlx_array r = mlx_array_new(), sq = mlx_array_new(), ms = mlx_array_new(), e = mlx_array_new_float(1e-5f);
        assert_int_equal(mlx_fast_rms_norm(&r, x, w, 1e-5f, s), 0);
        assert_int_equal(mlx_square(&sq, x, s), 0);
        assert_int_equal(mlx_mean_axis(&ms, sq, -1, true, s), 0);
        assert_int_equal(mlx_add(&ms, ms, e, s), 0);
        assert_int_equal(mlx_rsqrt(&ms, ms, s), 0);
        assert_int_equal(mlx_multiply(&ms, x, ms, s), 0);
        assert_int_equal(mlx_multiply(&ms, ms, w, s), 0);
        compare_close(r, ms, 1e-4);
        /* layer_norm: (x - mean) * rsqrt(var + eps) * w + w */
        mlx_array l = mlx_array_new(), mu = mlx_array_new(), v = mlx_array_new(), c = mlx_array_new();
        assert_int_equal(mlx_fast_layer_norm(&l, x, w, w, 1e-5f, s), 0);
        assert_int_equal(mlx_mean_axis(&mu, x, -1, true, s), 0);
        assert_int_equal(mlx_subtract(&c, x, mu, s), 0);
        assert_int_equal(mlx_var_axis(&v, x, -1, true, 0, s), 0);
        assert_int_equal(mlx_add(&v, v, e, s), 0);
        assert_int_equal(mlx_rsqrt(&v, v, s), 0);
        assert_int_equal(mlx_multiply(&c, c, v, s), 0);
        assert_int_equal(mlx_multiply(&c, c, w, s), 0);
        assert_int_equal(mlx_add(&c, c, w, s), 0);
        compare_close(l, c, 1e-4);
        tu_free_n((mlx_array[]){x, w, r, sq, ms, e, l, mu, v, c}, 10);
    }
}

static void test_bad_arguments_report_mlx_messages(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array r = mlx_array_new(), none = {0};
    float v[64] = {0};
    int s0[1] = {1}, s3[3] = {2, 3, 4}, s4[4] = {1, 2, 3, 4}, s4b[4] = {1, 3, 3, 4}, sw[1] = {5};
    mlx_array scalar = tu_f32(v, s0, 0), x3 = tu_f32(v, s3, 3), q = tu_f32(v, s4, 4), kb = tu_f32(v, s4b, 4);
    mlx_array w5 = tu_f32(v, sw, 1);
    mlx_optional_float base = {10000.0f, true}, nobase = {0, false};

    assert_int_equal(mlx_fast_rms_norm(&r, scalar, none, 1e-5f, s), 1);
    tu_expect_error("[rms_norm] Input must have at least 1 dimension but got input with 0 dimensions.");
    assert_int_equal(mlx_fast_rms_norm(&r, x3, w5, 1e-5f, s), 1);
    tu_expect_error("[rms_norm] (*weight) must have the same size as the last dimension of x but has 5 elements.");
    assert_int_equal(mlx_fast_layer_norm(&r, x3, none, w5, 1e-5f, s), 1);
    tu_expect_error("[layer_norm] bias must have the same size as the last dimension of x but has 5 elements.");
    assert_int_equal(mlx_fast_rope(&r, x3, 3, false, base, 1.0f, 0, none, s), 1);
    tu_expect_error("[rope] dims must be even but got 3.");
    assert_int_equal(mlx_fast_rope(&r, x3, 6, false, base, 1.0f, 0, none, s), 1);
    tu_expect_error("[rope] dims must not exceed the input's last dimension (4) but got 6.");
    assert_int_equal(mlx_fast_rope(&r, x3, 4, false, nobase, 1.0f, 0, none, s), 1);
    tu_expect_error("[rope] Neither base nor freqs has a value.");
    assert_int_equal(mlx_fast_rope(&r, w5, 4, false, base, 1.0f, 0, none, s), 1);
    tu_expect_error("[rope] Input must have at least 3 dimensions but got input with 1 dimensions.");
    assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, x3, q, q, 1.0f, "", none, none, s), 1);
    tu_expect_error("[scaled_dot_product_attention] input with shape (2,3,4) expected to be rank 4");
    assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, q, q, 1.0f, "full", none, none, s), 1);
    tu_expect_error(
        "[scaled_dot_product_attention] Invalid mask_mode full. mask_mode must be 'causal', 'array' or "
        "''.");
    assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, kb, kb, 1.0f, "", none, none, s), 1);
    tu_expect_error("[scaled_dot_product_attention] n_heads must be a multiple of n_kv_heads, found n_heads 2 for "
                    "n_kv_heads 3.");
    assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, q, q, 1.0f, "", none, w5, s), 1);
    tu_expect_error("[scaled_dot_product_attention] Received invalid shape for sinks (5).");
    assert_int_equal(mlx_fast_scaled_dot_product_attention(&r, q, q, q, 1.0f, "causal", q, none, s), 1);
    tu_expect_error("[scaled_dot_product_attention] Invalid mask_arr for mask_mode 'casusal'.");
    tu_expect_no_error();
    tu_free_n((mlx_array[]){r, scalar, x3, q, kb, w5}, 6);
}

static void test_metal_and_cuda_report_no_back_end(void **state)
{
    (void)state;
    bool avail = true;
    assert_int_equal(mlx_metal_is_available(&avail), 0);
    assert_false(avail);
    avail = true;
    assert_int_equal(mlx_cuda_is_available(&avail), 0);
    assert_false(avail);
    /* MLX's CPU build: capture does nothing and succeeds */
    assert_int_equal(mlx_metal_start_capture("/nonexistent/trace.gputrace"), 0);
    assert_int_equal(mlx_metal_stop_capture(), 0);

    const char *in_names[] = {"a"}, *out_names[] = {"b"};
    mlx_vector_string in = mlx_vector_string_new_data(in_names, 1), out = mlx_vector_string_new_data(out_names, 1);
    int shape[2] = {2, 3};

    mlx_fast_metal_kernel_config mc = mlx_fast_metal_kernel_config_new();
    assert_non_null(mc.ctx);
    assert_int_equal(mlx_fast_metal_kernel_config_add_output_arg(mc, shape, 2, MLX_FLOAT32), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_set_grid(mc, 6, 1, 1), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_set_thread_group(mc, 32, 1, 1), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_set_init_value(mc, 0.5f), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_set_verbose(mc, true), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_add_template_arg_dtype(mc, "T", MLX_FLOAT16), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_add_template_arg_int(mc, "N", 3), 0);
    assert_int_equal(mlx_fast_metal_kernel_config_add_template_arg_bool(mc, "B", true), 0);
    mlx_fast_metal_kernel mk = mlx_fast_metal_kernel_new("k", in, out, "b[0] = a[0];", "", true, false);
    assert_non_null(mk.ctx);
    mlx_vector_array ins = mlx_vector_array_new(), outs = mlx_vector_array_new();
    assert_int_equal(mlx_fast_metal_kernel_apply(&outs, mk, ins, mc, tu_stream()), 1);
    tu_expect_error("[metal_kernel] No Metal back-end.");
    assert_int_equal(mlx_fast_metal_kernel_config_set_grid((mlx_fast_metal_kernel_config){0}, 1, 1, 1), 1);
    tu_expect_error("[mlx_fast_metal_kernel_config_set_grid] expected a non-empty mlx_fast_metal_kernel_config");
    mlx_fast_metal_kernel_free(mk);
    mlx_fast_metal_kernel_config_free(mc);

    mlx_fast_cuda_kernel_config cc = mlx_fast_cuda_kernel_config_new();
    assert_int_equal(mlx_fast_cuda_kernel_config_add_output_arg(cc, shape, 2, MLX_BFLOAT16), 0);
    assert_int_equal(mlx_fast_cuda_kernel_config_add_template_arg_int(cc, "N", 3), 0);
    assert_int_equal(mlx_fast_cuda_kernel_config_add_output_arg(cc, shape, 2, (mlx_dtype)99), 1);
    tu_expect_error("[mlx_fast_cuda_kernel_config_add_output_arg] Unknown dtype 99.");
    mlx_fast_cuda_kernel ck = mlx_fast_cuda_kernel_new("k", in, out, "b[0] = a[0];", NULL, false, 0);
    assert_non_null(ck.ctx);
    assert_int_equal(mlx_fast_cuda_kernel_apply(&outs, ck, ins, cc, tu_stream()), 1);
    tu_expect_error("[cuda_kernel] No CUDA back-end.");
    mlx_fast_cuda_kernel_free(ck);
    mlx_fast_cuda_kernel_config_free(cc);
    tu_expect_no_error();

    mlx_vector_array_free(ins);
    mlx_vector_array_free(outs);
    mlx_vector_string_free(in);
    mlx_vector_string_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_every_case_equals_mlx),
        T(test_tiled_attention_equals_the_unfused_composition),
        T(test_tiled_attention_with_masks_and_sinks_equals_the_composition),
        T(test_attention_panel_edges_equal_the_composition),
        T(test_norms_of_long_rows_equal_their_composition),
        T(test_bad_arguments_report_mlx_messages),
        T(test_metal_and_cuda_report_no_back_end),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
