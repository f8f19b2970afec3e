/* Trains a two-hidden-layer perceptron (784-256-256-10, GELU) with plain
 * SGD on a synthetic classification set, using only mlx-c's API: the loss
 * is differentiated with mlx_value_and_grad, and the whole training step
 * (forward, backward, update) is compiled once with mlx_compile.
 *
 * The data: 10 class centres in 784 dimensions; each sample is a centre
 * plus noise, labelled with its centre's class. The example draws its own
 * numbers with a small fixed-seed generator, so every run is the same.
 *
 *   build/examples/mlp [epochs [samples]]   (default 5 epochs of 8192)
 *
 * The test set is a quarter of the training set's size. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mlx/c/mlx.h"

enum { IN = 784, HIDDEN = 256, CLASSES = 10, BATCH = 256, NPARAMS = 6 };
static const float learning_rate = 0.05f;
static mlx_stream S; /* the CPU stream every op runs on */

/* Stops the program with the library's message when a call fails. */
#define CHECK(call)                                                                                               \
    do {                                                                                                          \
        if (call) {                                                                                               \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);                                  \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

/* ---- a small generator (xorshift64*, Box-Muller) ---- */

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
    mlx_array a = mlx_array_new_data(v, shape, cols == 1 ? 1 : 2, MLX_FLOAT32);
    free(v);
    return a;
}

static mlx_array zeros(int n)
{
    mlx_array a = mlx_array_new();
    CHECK(mlx_zeros(&a, &n, 1, MLX_FLOAT32, S));
    return a;
}

/* ---- the data ---- */

typedef struct dataset {
    mlx_array x;      /* (n, IN) float32 */
    mlx_array onehot; /* (n, CLASSES) float32 */
    int *labels;
    int n;
} dataset;

static float centres[CLASSES][IN];

static dataset make_data(int n)
{
    dataset d = {.n = n, .labels = malloc(sizeof(int) * (size_t)n)};
    float *x = malloc(sizeof(float) * (size_t)n * IN);
    float *y = calloc((size_t)n * CLASSES, sizeof(float));
    for (int i = 0; i < n; i++) {
        int c = (int)(uniform01() * CLASSES);
        d.labels[i] = c;
        y[i * CLASSES + c] = 1.0f;
        for (int j = 0; j < IN; j++)
            x[(size_t)i * IN + j] = centres[c][j] + 2.0f * normal01();
    }
    int xs[2] = {n, IN}, ys[2] = {n, CLASSES};
    d.x = mlx_array_new_data(x, xs, 2, MLX_FLOAT32);
    d.onehot = mlx_array_new_data(y, ys, 2, MLX_FLOAT32);
    free(x);
    free(y);
    return d;
}

/* ---- the model ---- */

/* gelu(x) = x (1 + erf(x / sqrt(2))) / 2, MLX's nn.gelu */
static int gelu(mlx_array *res, mlx_array x, mlx_stream s)
{
    mlx_array k = mlx_array_new_float(0.70710678f), half = mlx_array_new_float(0.5f), one = mlx_array_new_float(1);
    mlx_array t = mlx_array_new();
    int rc = mlx_multiply(&t, x, k, s) || mlx_erf(&t, t, s) || mlx_add(&t, t, one, s) ||
             mlx_multiply(&t, t, x, s) || mlx_multiply(res, t, half, s);
    mlx_array_free(t);
    mlx_array_free(k);
    mlx_array_free(half);
    mlx_array_free(one);
    return rc;
}

/* logits = gelu(gelu(x W1 + b1) W2 + b2) W3 + b3, params = W1 b1 W2 b2 W3 b3 */
static int forward(mlx_array *logits, const mlx_array *p, mlx_array x, mlx_stream s)
{
    mlx_array h = mlx_array_new();
    int rc = mlx_addmm(&h, p[1], x, p[0], 1.0f, 1.0f, s) || gelu(&h, h, s) ||
             mlx_addmm(&h, p[3], h, p[2], 1.0f, 1.0f, s) || gelu(&h, h, s) ||
             mlx_addmm(logits, p[5], h, p[4], 1.0f, 1.0f, s);
    mlx_array_free(h);
    return rc;
}

/* The mean cross-entropy: logsumexp(logits) - <logits, onehot>. Inputs are
 * the 6 parameters, then x and the one-hot labels. */
static int loss_fn(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream s = S;
    mlx_array a[NPARAMS + 2];
    for (int i = 0; i < NPARAMS + 2; i++) {
        a[i] = mlx_array_new();
        mlx_vector_array_get(&a[i], in, (size_t)i);
    }
    mlx_array logits = mlx_array_new(), lse = mlx_array_new(), picked = mlx_array_new();
    int rc = forward(&logits, a, a[NPARAMS], s) || mlx_logsumexp_axis(&lse, logits, 1, false, s) ||
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

/* One SGD step: (params, x, onehot) -> (loss, new params). value_and_grad
 * is taken inside, so compiling this function compiles the backward pass
 * and the update with it. payload: the value_and_grad closure. */
static int train_step(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_closure_value_and_grad *vg = payload;
    mlx_stream s = S;
    mlx_vector_array vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
    mlx_vector_array out = mlx_vector_array_new();
    mlx_array lr = mlx_array_new_float(learning_rate), p = mlx_array_new(), g = mlx_array_new(), l = mlx_array_new();
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

/* The share of rows of x whose largest logit is their label. */
static double accuracy(const mlx_array *params, dataset d)
{
    mlx_stream s = S;
    mlx_array logits = mlx_array_new(), pred = mlx_array_new();
    CHECK(forward(&logits, params, d.x, s) || mlx_argmax_axis(&pred, logits, 1, false, s) || mlx_array_eval(pred));
    const uint32_t *v = mlx_array_data_uint32(pred);
    int right = 0;
    for (int i = 0; i < d.n; i++)
        right += (int)v[i] == d.labels[i];
    mlx_array_free(logits);
    mlx_array_free(pred);
    return (double)right / d.n;
}

/* Rows [from, from + BATCH) of a. */
static mlx_array rows(mlx_array a, int from, int cols)
{
    int start[2] = {from, 0}, stop[2] = {from + BATCH, cols}, step[2] = {1, 1};
    mlx_array r = mlx_array_new();
    CHECK(mlx_slice(&r, a, start, 2, stop, 2, step, 2, S));
    return r;
}

int main(int argc, char **argv)
{
    int epochs = argc > 1 ? atoi(argv[1]) : 5;
    int train_n = argc > 2 ? atoi(argv[2]) : 8192;
    if (epochs < 0 || train_n < BATCH) {
        fprintf(stderr, "usage: mlp [epochs [samples >= %d]]\n", BATCH);
        return 2;
    }
    S = mlx_default_cpu_stream_new();
    for (int c = 0; c < CLASSES; c++)
        for (int j = 0; j < IN; j++)
            centres[c][j] = 0.4f * normal01();
    dataset train = make_data(train_n), test = make_data(train_n / 4);

    /* He-style initial weights, zero biases */
    mlx_array params[NPARAMS] = {
        normal_array(IN, HIDDEN, sqrtf(2.0f / IN)),      zeros(HIDDEN),
        normal_array(HIDDEN, HIDDEN, sqrtf(2.0f / HIDDEN)), zeros(HIDDEN),
        normal_array(HIDDEN, CLASSES, sqrtf(2.0f / HIDDEN)), zeros(CLASSES),
    };

    const int argnums[NPARAMS] = {0, 1, 2, 3, 4, 5};
    mlx_closure loss = mlx_closure_new_func(loss_fn);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    CHECK(mlx_value_and_grad(&vg, loss, argnums, NPARAMS));
    mlx_closure step = mlx_closure_new_func_payload(train_step, &vg, NULL), compiled = mlx_closure_new();
    CHECK(mlx_compile(&compiled, step, false));

    printf("epoch  loss    test accuracy  seconds\n");
    printf("    0  -       %5.1f%%\n", 100 * accuracy(params, test));
    for (int e = 1; e <= epochs; e++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double total = 0;
        int batches = 0;
        for (int b = 0; b + BATCH <= train_n; b += BATCH, batches++) {
            mlx_vector_array in = mlx_vector_array_new_data(params, NPARAMS), out = mlx_vector_array_new();
            mlx_array xb = rows(train.x, b, IN), yb = rows(train.onehot, b, CLASSES);
            CHECK(mlx_vector_array_append_value(in, xb) || mlx_vector_array_append_value(in, yb));
            CHECK(mlx_closure_apply(&out, compiled, in) || mlx_eval(out));
            mlx_array l = mlx_array_new();
            float lv;
            CHECK(mlx_vector_array_get(&l, out, 0) || mlx_array_item_float32(&lv, l));
            total += lv;
            for (int i = 0; i < NPARAMS; i++)
                CHECK(mlx_vector_array_get(&params[i], out, (size_t)i + 1));
            mlx_array_free(l);
            mlx_array_free(xb);
            mlx_array_free(yb);
            mlx_vector_array_free(in);
            mlx_vector_array_free(out);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        printf("%5d  %.4f  %5.1f%%        %.2f\n", e, total / batches, 100 * accuracy(params, test), secs);
    }

    for (int i = 0; i < NPARAMS; i++)
        mlx_array_free(params[i]);
    mlx_closure_free(compiled);
    mlx_closure_free(step);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(loss);
    mlx_array_free(train.x);
    mlx_array_free(train.onehot);
    mlx_array_free(test.x);
    mlx_array_free(test.onehot);
    free(train.labels);
    free(test.labels);
    mlx_stream_free(S);
    return 0;
}
