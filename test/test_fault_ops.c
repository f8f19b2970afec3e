/* Suite 'fault_ops' (built with -Dfault_injection=true only): the
 * allocation-failure sweep of fault_sweep.h over one call of each op family
 * added after the first fault suite: linalg, fft, fast, conv, quantization,
 * the general gather and scatter, the misc ops (fp8, hadamard, einsum,
 * view), distributed on the singleton group, and the derivative rules of
 * those primitives through mlx_vjp. Each case is built and evaluated; its
 * values are taken from a run without failures first, and every run of
 * the sweep must either report exactly one message or give those values,
 * with no memory left behind (scripts/test.sh's fault stage runs it under
 * AddressSanitizer + LeakSanitizer). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fault_sweep.h"
#include "test_util.h"

#define S tu_stream()

/* The inputs, made before any sweep. */
typedef struct inputs {
    mlx_array spd;        /* float32 (3, 3), symmetric positive definite */
    mlx_array v3;         /* float32 (3,) */
    mlx_array sig;        /* float32 (1, 8, 2): conv1d input, NLC */
    mlx_array w1;         /* float32 (3, 3, 2): conv1d weight */
    mlx_array img;        /* float32 (1, 4, 4, 2): conv2d input */
    mlx_array w2;         /* float32 (3, 2, 2, 2): conv2d weight */
    mlx_array x4;         /* float32 (1, 2, 4, 8): fast ops */
    mlx_array w8, b8;     /* float32 (8,) */
    mlx_array wq;         /* float32 (4, 64): quantized */
    mlx_array xq;         /* float32 (2, 64) */
    mlx_array i0, i1;     /* int32 (2,): [2, 0] and [1, 2] */
    mlx_array upd;        /* float32 (2, 1, 1) */
    mlx_array start;      /* int32 (1,): [1] */
    mlx_array mask;       /* bool (3, 3) */
    mlx_array h;          /* float32 (2, 8) */
    mlx_closure grad_fn;  /* f(sig, w1, x4) of conv1d, rfft, rms_norm, rope, sdpa */
    mlx_closure grad2_fn; /* f(x4, w8, b8, img, w2) of layer_norm, rms_norm, conv2d, sdpa, take */
} inputs;

static mlx_array seq(int n, double scale, double shift, const int *shape, int ndim)
{
    double v[256];
    for (int i = 0; i < n; i++)
        v[i] = scale * sin(0.7 * i + shift);
    return tu_array_of(MLX_FLOAT32, v, shape, ndim);
}

static const mlx_optional_float base10k = {10000.0f, true};
static const mlx_optional_int group64 = {64, true}, bits4 = {4, true};

/* ---- linalg ---- */

static int c_inv(mlx_array *o, const inputs *in) { return mlx_linalg_inv(o, in->spd, S); }
static int c_solve(mlx_array *o, const inputs *in) { return mlx_linalg_solve(o, in->spd, in->v3, S); }
static int c_cholesky(mlx_array *o, const inputs *in) { return mlx_linalg_cholesky(o, in->spd, false, S); }
static int c_svd(mlx_array *o, const inputs *in)
{
    mlx_vector_array r = mlx_vector_array_new();
    int rc = !r.ctx || mlx_linalg_svd(&r, in->spd, true, S) || mlx_vector_array_get(o, r, 1);
    mlx_vector_array_free(r);
    return rc;
}
static int c_qr(mlx_array *o, const inputs *in)
{
    mlx_array q = mlx_array_new();
    int rc = mlx_linalg_qr(&q, o, in->spd, S);
    mlx_array_free(q);
    return rc;
}
static int c_eigh(mlx_array *o, const inputs *in)
{
    mlx_array vecs = mlx_array_new();
    int rc = mlx_linalg_eigh(o, &vecs, in->spd, "L", S);
    mlx_array_free(vecs);
    return rc;
}
static int c_norm(mlx_array *o, const inputs *in) { return mlx_linalg_norm(o, in->spd, 2.0, NULL, 0, false, S); }

/* ---- fft ---- */

static int c_rfft(mlx_array *o, const inputs *in) { return mlx_fft_rfft(o, in->h, 8, -1, S) || mlx_abs(o, *o, S); }
static int c_irfft(mlx_array *o, const inputs *in)
{
    return mlx_fft_rfft(o, in->h, 8, -1, S) || mlx_fft_irfft(o, *o, 8, -1, S);
}

/* ---- fast ---- */

static int c_rms_norm(mlx_array *o, const inputs *in) { return mlx_fast_rms_norm(o, in->x4, in->w8, 1e-5f, S); }
static int c_layer_norm(mlx_array *o, const inputs *in)
{
    return mlx_fast_layer_norm(o, in->x4, in->w8, in->b8, 1e-5f, S);
}
static int c_rope(mlx_array *o, const inputs *in)
{
    return mlx_fast_rope(o, in->x4, 8, false, base10k, 1.0f, 1, (mlx_array){NULL}, S);
}
static int c_sdpa(mlx_array *o, const inputs *in)
{
    return mlx_fast_scaled_dot_product_attention(o, in->x4, in->x4, in->x4, 0.35f, "causal", (mlx_array){NULL},
                                                 (mlx_array){NULL}, S);
}

/* ---- conv ---- */

static int c_conv1d(mlx_array *o, const inputs *in) { return mlx_conv1d(o, in->sig, in->w1, 1, 1, 1, 1, S); }
static int c_conv2d(mlx_array *o, const inputs *in)
{
    return mlx_conv2d(o, in->img, in->w2, 1, 2, 1, 0, 1, 1, 1, S);
}
static int c_conv_transpose1d(mlx_array *o, const inputs *in)
{
    return mlx_conv_transpose1d(o, in->sig, in->w1, 2, 0, 1, 0, 1, S);
}

/* ---- quantization ---- */

static int quantized(mlx_vector_array *q, const inputs *in)
{
    return !q->ctx || mlx_quantize(q, in->wq, group64, bits4, "affine", (mlx_array){NULL}, S);
}
static int c_dequantize(mlx_array *o, const inputs *in)
{
    mlx_vector_array q = mlx_vector_array_new();
    mlx_array w = mlx_array_new(), sc = mlx_array_new(), bi = mlx_array_new();
    int rc = quantized(&q, in) || mlx_vector_array_get(&w, q, 0) || mlx_vector_array_get(&sc, q, 1) ||
             mlx_vector_array_get(&bi, q, 2) ||
             mlx_dequantize(o, w, sc, bi, group64, bits4, "affine", (mlx_array){NULL},
                            (mlx_optional_dtype){MLX_FLOAT32, false}, S);
    TU_FREE(w, sc, bi);
    mlx_vector_array_free(q);
    return rc;
}
static int c_qmm(mlx_array *o, const inputs *in)
{
    mlx_vector_array q = mlx_vector_array_new();
    mlx_array w = mlx_array_new(), sc = mlx_array_new(), bi = mlx_array_new();
    int rc = quantized(&q, in) || mlx_vector_array_get(&w, q, 0) || mlx_vector_array_get(&sc, q, 1) ||
             mlx_vector_array_get(&bi, q, 2) ||
             mlx_quantized_matmul(o, in->xq, w, sc, bi, true, group64, bits4, "affine", S);
    TU_FREE(w, sc, bi);
    mlx_vector_array_free(q);
    return rc;
}

/* ---- gather and scatter ---- */

static int c_gather(mlx_array *o, const inputs *in)
{
    mlx_array idx[2] = {in->i0, in->i1};
    mlx_vector_array v = mlx_vector_array_new_data(idx, 2);
    const int axes[2] = {0, 1}, sizes[2] = {1, 1};
    int rc = !v.ctx || mlx_gather(o, in->spd, v, axes, 2, sizes, 2, S);
    mlx_vector_array_free(v);
    return rc;
}
static int c_scatter(mlx_array *o, const inputs *in)
{
    mlx_array idx[2] = {in->i0, in->i1};
    mlx_vector_array v = mlx_vector_array_new_data(idx, 2);
    const int axes[2] = {0, 1};
    int rc = !v.ctx || mlx_scatter_add(o, in->spd, v, in->upd, axes, 2, S);
    mlx_vector_array_free(v);
    return rc;
}
static int c_slice_dynamic(mlx_array *o, const inputs *in)
{
    const int axes[1] = {0}, size[2] = {2, 3};
    return mlx_slice_dynamic(o, in->spd, in->start, axes, 1, size, 2, S);
}
static int c_slice_update_dynamic(mlx_array *o, const inputs *in)
{
    const int axes[1] = {1};
    return mlx_slice_update_dynamic(o, in->spd, in->v3, in->start, axes, 1, S);
}
static int c_masked_scatter(mlx_array *o, const inputs *in)
{
    return mlx_masked_scatter(o, in->spd, in->mask, in->w8, S);
}

/* ---- misc ---- */

static int c_fp8(mlx_array *o, const inputs *in)
{
    return mlx_to_fp8(o, in->h, S) || mlx_from_fp8(o, *o, MLX_FLOAT32, S);
}
static int c_hadamard(mlx_array *o, const inputs *in)
{
    return mlx_hadamard_transform(o, in->h, (mlx_optional_float){0, false}, S);
}
static int c_einsum(mlx_array *o, const inputs *in)
{
    mlx_array ops[2] = {in->spd, in->spd};
    mlx_vector_array v = mlx_vector_array_new_data(ops, 2);
    int rc = !v.ctx || mlx_einsum(o, "ij,jk->ik", v, S);
    mlx_vector_array_free(v);
    return rc;
}
static int c_view(mlx_array *o, const inputs *in)
{
    return mlx_view(o, in->h, MLX_INT32, S) || mlx_view(o, *o, MLX_FLOAT32, S);
}

/* ---- distributed (the singleton group outside mpirun) ---- */

static int c_all_sum(mlx_array *o, const inputs *in)
{
    mlx_distributed_group world = {NULL};
    return mlx_distributed_all_sum(o, in->h, world, S) || mlx_distributed_all_gather(o, *o, world, S) ||
           mlx_distributed_sum_scatter(o, *o, world, S) || mlx_add(o, *o, in->h, S);
}

/* ---- derivatives ---- */

/* sum(conv1d(sig, w1)^2) + sum(|rfft(sig)|) + sum(rms_norm(x4) * rope(x4))
 * + sum(sdpa(x4, x4, x4)) */
static int grad_body(mlx_vector_array *res, const mlx_vector_array args)
{
    mlx_array sig = mlx_array_new(), w = mlx_array_new(), x = mlx_array_new();
    mlx_array a = mlx_array_new(), b = mlx_array_new(), t = mlx_array_new();
    mlx_array nw = {NULL};
    int rc = mlx_vector_array_get(&sig, args, 0) || mlx_vector_array_get(&w, args, 1) ||
             mlx_vector_array_get(&x, args, 2) || mlx_conv1d(&a, sig, w, 1, 1, 1, 1, S) || mlx_square(&a, a, S) ||
             mlx_sum(&a, a, false, S) || mlx_fft_rfft(&b, sig, 8, 1, S) || mlx_abs(&b, b, S) ||
             mlx_sum(&b, b, false, S) || mlx_add(&a, a, b, S) || mlx_fast_rms_norm(&b, x, nw, 1e-5f, S) ||
             mlx_fast_rope(&t, x, 8, true, base10k, 1.0f, 0, nw, S) || mlx_multiply(&b, b, t, S) ||
             mlx_sum(&b, b, false, S) || mlx_add(&a, a, b, S) ||
             mlx_fast_scaled_dot_product_attention(&b, x, x, x, 0.35f, "", nw, nw, S) ||
             mlx_sum(&b, b, false, S) || mlx_add(&a, a, b, S) || mlx_vector_array_set_value(res, a);
    TU_FREE(sig, w, x, a, b, t);
    return rc;
}

/* sum(layer_norm(x4, w8, b8) * rms_norm(x4, w8)) + sum(conv2d(img, w2)^2)
 * + sum(sdpa(x4, x4, x4, mask = x4[0, 0, :, :4] additive)) + sum(irfft(fft of
 * w8)) + sum(w8[[1, 3]] * b8[[1, 3]]) */
static int grad2_body(mlx_vector_array *res, const mlx_vector_array args)
{
    mlx_array x = mlx_array_new(), w = mlx_array_new(), b = mlx_array_new(), img = mlx_array_new();
    mlx_array w2 = mlx_array_new(), a = mlx_array_new(), t = mlx_array_new(), m = mlx_array_new();
    const int start[4] = {0, 0, 0, 0}, stop[4] = {1, 1, 4, 4}, str[4] = {1, 1, 1, 1};
    const int32_t idx[2] = {1, 3};
    const int two = 2;
    mlx_array ia = mlx_array_new_data(idx, &two, 1, MLX_INT32);
    int rc = !ia.ctx || mlx_vector_array_get(&x, args, 0) || mlx_vector_array_get(&w, args, 1) ||
             mlx_vector_array_get(&b, args, 2) || mlx_vector_array_get(&img, args, 3) ||
             mlx_vector_array_get(&w2, args, 4) || mlx_fast_layer_norm(&a, x, w, b, 1e-5f, S) ||
             mlx_fast_rms_norm(&t, x, w, 1e-5f, S) || mlx_multiply(&a, a, t, S) || mlx_sum(&a, a, false, S) ||
             mlx_conv2d(&t, img, w2, 1, 1, 1, 1, 1, 1, 1, S) || mlx_square(&t, t, S) || mlx_sum(&t, t, false, S) ||
             mlx_add(&a, a, t, S) || mlx_slice(&m, x, start, 4, stop, 4, str, 4, S) ||
             mlx_fast_scaled_dot_product_attention(&t, x, x, x, 0.35f, "array", m, (mlx_array){NULL}, S) ||
             mlx_sum(&t, t, false, S) || mlx_add(&a, a, t, S) || mlx_fft_rfft(&t, w, 8, 0, S) ||
             mlx_fft_irfft(&t, t, 8, 0, S) || mlx_sum(&t, t, false, S) || mlx_add(&a, a, t, S) ||
             mlx_take_axis(&t, w, ia, 0, S) || mlx_take_axis(&m, b, ia, 0, S) || mlx_multiply(&t, t, m, S) ||
             mlx_sum(&t, t, false, S) || mlx_add(&a, a, t, S) || mlx_vector_array_set_value(res, a);
    TU_FREE(x, w, b, img, w2, a, t, m, ia);
    return rc;
}

/* The gradients (vjp) or output tangents (jvp, ones as tangents) of fn at
 * prim[0..np), flattened and joined. Each handle is made only once the
 * previous ones exist, so that the first failure is the only one reported. */
static int transform(mlx_array *o, mlx_closure fn, mlx_array *prim, size_t np, bool forward)
{
    mlx_array one = mlx_array_new_float(1), g = mlx_array_new(), tans[8];
    size_t made = 0;
    mlx_vector_array v[5] = {{NULL}, {NULL}, {NULL}, {NULL}, {NULL}}; /* primals, seeds, outs, results, flat */
    int rc = !one.ctx;
    for (; made < np && !rc; made++) {
        tans[made] = mlx_array_new();
        rc = mlx_ones_like(&tans[made], prim[made], S);
    }
    rc = rc || !(v[0] = mlx_vector_array_new_data(prim, np)).ctx ||
         !(v[1] = forward ? mlx_vector_array_new_data(tans, np) : mlx_vector_array_new_value(one)).ctx ||
         !(v[2] = mlx_vector_array_new()).ctx || !(v[3] = mlx_vector_array_new()).ctx ||
         !(v[4] = mlx_vector_array_new()).ctx ||
         (forward ? mlx_jvp(&v[2], &v[3], fn, v[0], v[1]) : mlx_vjp(&v[2], &v[3], fn, v[0], v[1]));
    for (size_t i = 0; !rc && i < mlx_vector_array_size(v[3]); i++)
        rc = mlx_vector_array_get(&g, v[3], i) || mlx_flatten(&g, g, 0, -1, S) ||
             mlx_vector_array_append_value(v[4], g);
    rc = rc || mlx_concatenate_axis(o, v[4], 0, S);
    TU_FREE(one, g);
    tu_free_n(tans, made);
    for (int i = 0; i < 5; i++)
        mlx_vector_array_free(v[i]);
    return rc;
}

static int c_vjp2(mlx_array *o, const inputs *in)
{
    mlx_array prim[5] = {in->x4, in->w8, in->b8, in->img, in->w2};
    return transform(o, in->grad2_fn, prim, 5, false);
}
static int c_jvp(mlx_array *o, const inputs *in)
{
    mlx_array prim[3] = {in->sig, in->w1, in->x4};
    return transform(o, in->grad_fn, prim, 3, true);
}
static int c_jvp2(mlx_array *o, const inputs *in)
{
    mlx_array prim[5] = {in->x4, in->w8, in->b8, in->img, in->w2};
    return transform(o, in->grad2_fn, prim, 5, true);
}

static int c_vjp(mlx_array *o, const inputs *in)
{
    mlx_array prim[3] = {in->sig, in->w1, in->x4};
    return transform(o, in->grad_fn, prim, 3, false);
}

typedef struct fam_case {
    const char *name;
    int (*build)(mlx_array *out, const inputs *in);
} fam_case;

static const fam_case cases[] = {
    {"linalg inv", c_inv},
    {"linalg solve", c_solve},
    {"linalg cholesky", c_cholesky},
    {"linalg svd", c_svd},
    {"linalg qr", c_qr},
    {"linalg eigh", c_eigh},
    {"linalg norm 2", c_norm},
    {"fft rfft", c_rfft},
    {"fft irfft", c_irfft},
    {"fast rms_norm", c_rms_norm},
    {"fast layer_norm", c_layer_norm},
    {"fast rope", c_rope},
    {"fast sdpa", c_sdpa},
    {"conv1d", c_conv1d},
    {"conv2d", c_conv2d},
    {"conv_transpose1d", c_conv_transpose1d},
    {"dequantize", c_dequantize},
    {"quantized_matmul", c_qmm},
    {"gather", c_gather},
    {"scatter_add", c_scatter},
    {"slice_dynamic", c_slice_dynamic},
    {"slice_update_dynamic", c_slice_update_dynamic},
    {"masked_scatter", c_masked_scatter},
    {"fp8", c_fp8},
    {"hadamard", c_hadamard},
    {"einsum", c_einsum},
    {"view", c_view},
    {"all_sum", c_all_sum},
    {"vjp of conv, fft, fast", c_vjp},
    {"vjp of norms, conv2d, masked sdpa, take", c_vjp2},
    {"jvp of conv, fft, fast", c_jvp},
    {"jvp of norms, conv2d, masked sdpa, take", c_jvp2},
};

enum { MAX_VALUES = 512 };

typedef struct run_ctx {
    const fam_case *c;
    const inputs *in;
    size_t n;
    double want[MAX_VALUES];
} run_ctx;

/* Builds and evaluates the case; 0 and its values in want[] (n of them). */
static int run_once(const fam_case *c, const inputs *in, size_t *n, double *vals)
{
    mlx_array out = mlx_array_new();
    int rc = c->build(&out, in) || mlx_array_eval(out);
    if (rc == 0) {
        *n = mlx_array_size(out) < MAX_VALUES ? mlx_array_size(out) : MAX_VALUES;
        for (size_t i = 0; i < *n; i++)
            vals[i] = tu_get(out, i);
    }
    mlx_array_free(out);
    return rc;
}

static int run_case(void *p)
{
    run_ctx *x = p;
    size_t n = 0;
    double got[MAX_VALUES];
    int rc = run_once(x->c, x->in, &n, got);
    if (rc)
        return rc;
    tu_sweep_disarm();
    if (n != x->n)
        return 2;
    for (size_t i = 0; i < n; i++)
        if (fabs(got[i] - x->want[i]) > 1e-5 * (1 + fabs(x->want[i])))
            return 2;
    return 0;
}

static void make_inputs(inputs *in)
{
    const double spd[9] = {4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2};
    const int s33[2] = {3, 3}, s3 = 3, s2 = 2, s1 = 1;
    in->spd = tu_array_of(MLX_FLOAT32, spd, s33, 2);
    in->v3 = seq(3, 1, 0.1, &s3, 1);
    in->sig = seq(16, 1, 0.2, (int[]){1, 8, 2}, 3);
    in->w1 = seq(18, 0.5, 0.3, (int[]){3, 3, 2}, 3);
    in->img = seq(32, 1, 0.4, (int[]){1, 4, 4, 2}, 4);
    in->w2 = seq(24, 0.5, 0.5, (int[]){3, 2, 2, 2}, 4);
    in->x4 = seq(64, 1, 0.6, (int[]){1, 2, 4, 8}, 4);
    in->w8 = seq(8, 1, 0.7, (int[]){8}, 1);
    in->b8 = seq(8, 0.5, 0.8, (int[]){8}, 1);
    in->wq = seq(256, 1, 0.9, (int[]){4, 64}, 2);
    in->xq = seq(128, 1, 1.0, (int[]){2, 64}, 2);
    in->i0 = tu_i32((const int32_t[]){2, 0}, &s2, 1);
    in->i1 = tu_i32((const int32_t[]){1, 2}, &s2, 1);
    in->upd = seq(2, 1, 1.1, (int[]){2, 1, 1}, 3);
    in->start = tu_i32((const int32_t[]){1}, &s1, 1);
    const double mask[9] = {1, 0, 1, 0, 1, 0, 1, 1, 0};
    in->mask = tu_array_of(MLX_BOOL, mask, s33, 2);
    in->h = seq(16, 1, 1.2, (int[]){2, 8}, 2);
    in->grad_fn = mlx_closure_new_func(grad_body);
    in->grad2_fn = mlx_closure_new_func(grad2_body);
}

static void free_inputs(inputs *in)
{
    TU_FREE(in->spd, in->v3, in->sig, in->w1, in->img, in->w2, in->x4, in->w8, in->b8, in->wq, in->xq, in->i0,
            in->i1, in->upd, in->start, in->mask, in->h);
    mlx_closure_free(in->grad_fn);
    mlx_closure_free(in->grad2_fn);
}

static inputs in;

static int make_group_inputs(void **state)
{
    int rc = tu_group_setup(state);
    make_inputs(&in);
    return rc;
}

static int free_group_inputs(void **state)
{
    free_inputs(&in);
    return tu_group_teardown(state);
}

/* One test per case (its prestate), so that every failing family shows. */
static void test_family_fails_cleanly_at_every_allocation(void **state)
{
    static run_ctx x;
    x.c = *state;
    x.in = &in;
    if (run_once(x.c, &in, &x.n, x.want))
        fail_msg("%s: fails without a failing allocation: %s", x.c->name, tu_last_error());
    if (tu_sweep(x.c->name, run_case, &x) < 1)
        fail_msg("%s: no allocation could fail", x.c->name);
}

enum { N_CASES = sizeof cases / sizeof cases[0] };

int main(void)
{
    struct CMUnitTest tests[N_CASES];
    for (size_t k = 0; k < N_CASES; k++)
        tests[k] = (struct CMUnitTest){cases[k].name, test_family_fails_cleanly_at_every_allocation, NULL,
                                       tu_test_teardown, (void *)&cases[k]};
    return cmocka_run_group_tests(tests, make_group_inputs, free_group_inputs);
}
