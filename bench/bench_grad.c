/* bench_grad: what autodiff costs a caller, on 2 threads. (1) mlp_step: the
 * training step of examples/mlp.c (784-256-256-10 GELU MLP, batch 256,
 * float32, mean cross-entropy on one-hot labels, compiled value_and_grad
 * plus SGD update), the parameters carried from one step to the next as a
 * training loop does; bench/ml_ref.py times the same step in JAX, MLX and
 * PyTorch. (2) mlp_forward: the compiled loss alone on the same inputs, so
 * mlp_step / mlp_forward is the price of the backward pass. (3)
 * grad_overhead_10op: a compiled value_and_grad of a 10-op scalar function
 * of a 4-element array, per call (apply, evaluate, free).
 * Output lines as in bench_util.h, side=mlxcpu. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

enum { IN = 784, HIDDEN = 256, CLASSES = 10, BATCH = 256, NPARAMS = 6 };
enum { THREADS = 2, CALLS_PER_REP = 200 };
static const float learning_rate = 0.05f;
static mlx_stream S;

/* ---- fixed inputs (xorshift64*, Box-Muller) ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double uniform01(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static float normal01(void)
{
    double u = uniform01(), v = uniform01();
    return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}

static mlx_array normal_array(int rows, int cols, float scale)
{
    float *v = malloc(sizeof(float) * (size_t)rows * (size_t)cols);
    for (int i = 0; i < rows * cols; i++)
        v[i] = scale * normal01();
    int shape[2] = {rows, cols};
    mlx_array a = mlx_array_new_data(v, shape, 2, MLX_FLOAT32);
    free(v);
    return a;
}

static mlx_array zeros(int n)
{
    float *v = calloc((size_t)n, sizeof(float));
    mlx_array a = mlx_array_new_data(v, &n, 1, MLX_FLOAT32);
    free(v);
    return a;
}

static mlx_array onehot_labels(void)
{
    float *y = calloc((size_t)BATCH * CLASSES, sizeof(float));
    for (int i = 0; i < BATCH; i++)
        y[i * CLASSES + (int)(uniform01() * CLASSES)] = 1.0f;
    int shape[2] = {BATCH, CLASSES};
    mlx_array a = mlx_array_new_data(y, shape, 2, MLX_FLOAT32);
    free(y);
    return a;
}

/* ---- the model, as in examples/mlp.c ---- */

static int gelu(mlx_array *res, mlx_array x, mlx_stream s)
{
    mlx_array k = mlx_array_new_float(0.70710678f), half = mlx_array_new_float(0.5f);
    mlx_array one = mlx_array_new_float(1), t = mlx_array_new();
    int rc = mlx_multiply(&t, x, k, s) || mlx_erf(&t, t, s) || mlx_add(&t, t, one, s) ||
             mlx_multiply(&t, t, x, s) || mlx_multiply(res, t, half, s);
    mlx_array_free(t);
    mlx_array_free(k);
    mlx_array_free(half);
    mlx_array_free(one);
    return rc;
}

static int forward(mlx_array *logits, const mlx_array *p, mlx_array x, mlx_stream s)
{
    mlx_array h = mlx_array_new();
    int rc = mlx_addmm(&h, p[1], x, p[0], 1.0f, 1.0f, s) || gelu(&h, h, s) ||
             mlx_addmm(&h, p[3], h, p[2], 1.0f, 1.0f, s) || gelu(&h, h, s) ||
             mlx_addmm(logits, p[5], h, p[4], 1.0f, 1.0f, s);
    mlx_array_free(h);
    return rc;
}

/* (W1 b1 W2 b2 W3 b3, x, onehot) -> mean cross-entropy */
static int loss_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream s = S;
    mlx_array a[NPARAMS + 2];
    int rc = 0;
    for (int i = 0; i < NPARAMS + 2; i++) {
        a[i] = mlx_array_new();
        rc = rc || mlx_vector_array_get(&a[i], in, (size_t)i);
    }
    mlx_array logits = mlx_array_new(), lse = mlx_array_new(), picked = mlx_array_new();
    rc = rc || forward(&logits, a, a[NPARAMS], s) || mlx_logsumexp_axis(&lse, logits, 1, false, s) ||
         mlx_multiply(&picked, logits, a[NPARAMS + 1], s) || mlx_sum_axis(&picked, picked, 1, false, s) ||
         mlx_subtract(&lse, lse, picked, s) || mlx_mean(&lse, lse, false, s) ||
         mlx_vector_array_set_value(res, lse);
    mlx_array_free(logits);
    mlx_array_free(lse);
    mlx_array_free(picked);
    for (int i = 0; i < NPARAMS + 2; i++)
        mlx_array_free(a[i]);
    return rc;
}

/* (params, x, onehot) -> (loss, new params); payload: the value_and_grad closure */
static int train_step(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_closure_value_and_grad *vg = payload;
    mlx_stream s = S;
    mlx_vector_array vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array lr = mlx_array_new_float(learning_rate), p = mlx_array_new(), g = mlx_array_new();
    mlx_array l = mlx_array_new();
    int rc = mlx_closure_value_and_grad_apply(&vals, &grads, *vg, in) || mlx_vector_array_get(&l, vals, 0) ||
             mlx_vector_array_append_value(out, l);
    for (int i = 0; i < NPARAMS && !rc; i++)
        rc = mlx_vector_array_get(&p, in, (size_t)i) || mlx_vector_array_get(&g, grads, (size_t)i) ||
             mlx_multiply(&g, g, lr, s) || mlx_subtract(&p, p, g, s) || mlx_vector_array_append_value(out, p);
    rc = rc || mlx_vector_array_set(res, out);
    mlx_array_free(lr);
    mlx_array_free(p);
    mlx_array_free(g);
    mlx_array_free(l);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(grads);
    mlx_vector_array_free(out);
    return rc;
}

/* ---- the measured calls ---- */

typedef struct {
    mlx_closure f;
    mlx_array params[NPARAMS];
    mlx_array x, y;
    int carry; /* 1: outputs 1..6 become the next call's parameters */
} mlp_ctx;

static int mlp_call(void *arg)
{
    mlp_ctx *c = arg;
    mlx_vector_array in = mlx_vector_array_new_data(c->params, NPARAMS), out = mlx_vector_array_new();
    int rc = mlx_vector_array_append_value(in, c->x) || mlx_vector_array_append_value(in, c->y) ||
             mlx_closure_apply(&out, c->f, in) || mlx_eval(out);
    for (int i = 0; i < NPARAMS && c->carry && !rc; i++)
        rc = mlx_vector_array_get(&c->params[i], out, (size_t)i + 1);
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
    return rc;
}

/* f(x) = sum(|(exp(-sin(x*x + x)) * x - x)|^2): ten ops, a scalar out */
static int ten_ops(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream s = S;
    mlx_array x = mlx_array_new(), t = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&t, x, x, s) || /* 1 */
             mlx_add(&t, t, x, s) ||                                         /* 2 */
             mlx_sin(&t, t, s) ||                                            /* 3 */
             mlx_negative(&t, t, s) ||                                       /* 4 */
             mlx_exp(&t, t, s) ||                                            /* 5 */
             mlx_multiply(&t, t, x, s) ||                                    /* 6 */
             mlx_subtract(&t, t, x, s) ||                                    /* 7 */
             mlx_abs(&t, t, s) ||                                            /* 8 */
             mlx_multiply(&t, t, t, s) ||                                    /* 9 */
             mlx_sum(&t, t, false, s) ||                                     /* 10 */
             mlx_vector_array_set_value(res, t);
    mlx_array_free(x);
    mlx_array_free(t);
    return rc;
}

/* The value_and_grad closure as a plain closure (value then gradient), so
 * that mlx_compile can take it. payload: the value_and_grad closure. */
static int vg_as_closure(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_closure_value_and_grad *vg = payload;
    mlx_vector_array vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_array g = mlx_array_new();
    int rc = mlx_closure_value_and_grad_apply(&vals, &grads, *vg, in) || mlx_vector_array_get(&g, grads, 0) ||
             mlx_vector_array_append_value(vals, g) || mlx_vector_array_set(res, vals);
    mlx_array_free(g);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(grads);
    return rc;
}

typedef struct {
    mlx_closure f;
    mlx_vector_array args;
} small_ctx;

static int small_calls(void *arg)
{
    small_ctx *c = arg;
    for (int i = 0; i < CALLS_PER_REP; i++) {
        mlx_vector_array out = mlx_vector_array_new();
        int rc = mlx_closure_apply(&out, c->f, c->args) || mlx_eval(out);
        mlx_vector_array_free(out);
        if (rc)
            return 1;
    }
    return 0;
}

static void bench_mlp(void)
{
    mlp_ctx step = {.carry = 1}, fwd = {.carry = 0};
    step.params[0] = normal_array(IN, HIDDEN, sqrtf(2.0f / IN));
    step.params[1] = zeros(HIDDEN);
    step.params[2] = normal_array(HIDDEN, HIDDEN, sqrtf(2.0f / HIDDEN));
    step.params[3] = zeros(HIDDEN);
    step.params[4] = normal_array(HIDDEN, CLASSES, sqrtf(2.0f / HIDDEN));
    step.params[5] = zeros(CLASSES);
    step.x = normal_array(BATCH, IN, 1.0f);
    step.y = onehot_labels();
    for (int i = 0; i < NPARAMS; i++) {
        fwd.params[i] = mlx_array_new();
        mlx_array_set(&fwd.params[i], step.params[i]);
    }
    fwd.x = step.x;
    fwd.y = step.y;

    const int argnums[NPARAMS] = {0, 1, 2, 3, 4, 5};
    mlx_closure loss = mlx_closure_new_func(loss_fn);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    mlx_closure stepf = mlx_closure_new_func_payload(train_step, &vg, NULL);
    step.f = mlx_closure_new();
    fwd.f = mlx_closure_new();
    if (mlx_value_and_grad(&vg, loss, argnums, NPARAMS) || mlx_compile(&step.f, stepf, false) ||
        mlx_compile(&fwd.f, loss, false)) {
        bu_report("mlxcpu", "mlp_step", THREADS, (bu_stat){0});
        bu_report("mlxcpu", "mlp_forward", THREADS, (bu_stat){0});
    } else {
        bu_report("mlxcpu", "mlp_step", THREADS, bu_measure(mlp_call, &step, 5, bu_reps(60)));
        bu_report("mlxcpu", "mlp_forward", THREADS, bu_measure(mlp_call, &fwd, 5, bu_reps(60)));
    }
    for (int i = 0; i < NPARAMS; i++) {
        mlx_array_free(step.params[i]);
        mlx_array_free(fwd.params[i]);
    }
    mlx_array_free(step.x);
    mlx_array_free(step.y);
    mlx_closure_free(step.f);
    mlx_closure_free(fwd.f);
    mlx_closure_free(stepf);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(loss);
}

static void bench_overhead(void)
{
    float xd[4] = {0.5f, -1.0f, 2.0f, 0.25f};
    int shape[1] = {4};
    mlx_array x = mlx_array_new_data(xd, shape, 1, MLX_FLOAT32);
    small_ctx c = {.f = mlx_closure_new(), .args = mlx_vector_array_new_data(&x, 1)};
    const int argnums[1] = {0};
    mlx_closure f = mlx_closure_new_func(ten_ops), vgc = mlx_closure_new();
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    bu_stat st = {0};
    if (!mlx_value_and_grad(&vg, f, argnums, 1)) {
        mlx_closure_free(vgc);
        vgc = mlx_closure_new_func_payload(vg_as_closure, &vg, NULL);
        if (!mlx_compile(&c.f, vgc, false)) {
            st = bu_measure(small_calls, &c, 20, bu_reps(100));
            st.median_ns /= CALLS_PER_REP;
            st.min_ns /= CALLS_PER_REP;
        }
    }
    bu_report("mlxcpu", "grad_overhead_10op", THREADS, st);
    mlx_array_free(x);
    mlx_vector_array_free(c.args);
    mlx_closure_free(c.f);
    mlx_closure_free(vgc);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(f);
}

int main(void)
{
    S = mlx_default_cpu_stream_new();
    bu_info("program", "bench_grad");
    if (mlx_cpu_set_num_threads(THREADS)) {
        fprintf(stderr, "bench_grad: mlx_cpu_set_num_threads(%d) failed\n", THREADS);
        return 1;
    }
    bench_mlp();
    bench_overhead();
    mlx_stream_free(S);
    return 0;
}
