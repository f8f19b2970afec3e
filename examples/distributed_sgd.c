/* Data-parallel training with mlx-c's distributed.h: every process holds
 * the same model (64-64-10, tanh) and the same synthetic data set; each
 * takes its shard of every batch, differentiates its part of the batch's
 * loss with mlx_value_and_grad, and the gradients are summed over the
 * processes with mlx_distributed_all_sum before the SGD update. Since each
 * shard's loss is divided by the whole batch's size, the summed gradient
 * is the whole batch's, and the loss curve is the one a single process
 * prints on whole batches (to float32 rounding).
 *
 *   build/examples/distributed_sgd [steps]                  one process
 *   mpirun -np 2 build/examples/distributed_sgd [steps]     two processes
 *
 * Outside mpirun the global group is the singleton group, and all_sum
 * returns its input: the same program is the single-process run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlx/c/mlx.h"

enum { IN = 64, HIDDEN = 64, CLASSES = 10, BATCH = 256, NPARAMS = 4 };
static const float learning_rate = 0.5f;
static mlx_stream S;

#define CHECK(call)                                                           \
    do {                                                                      \
        if (call) {                                                           \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

/* ---- the same numbers in every process: a fixed-seed generator ---- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

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

/* One batch: samples around 10 class centres, with one-hot labels. */
static void make_batch(const float *centres, float *x, float *y)
{
    for (int i = 0; i < BATCH; i++) {
        int c = (int)(uniform01() * CLASSES) % CLASSES;
        for (int j = 0; j < IN; j++)
            x[i * IN + j] = centres[c * IN + j] + 0.8f * normal01();
        for (int k = 0; k < CLASSES; k++)
            y[i * CLASSES + k] = k == c ? 1.0f : 0.0f;
    }
}

/* ---- the loss of a shard: sum of its cross-entropies / BATCH ----
 * inputs: w1, b1, w2, b2, x (shard, IN), y (shard, CLASSES) */
static int shard_loss(mlx_vector_array *out, const mlx_vector_array in)
{
    mlx_array p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = mlx_array_new();
        CHECK(mlx_vector_array_get(&p[i], in, (size_t)i));
    }
    mlx_array h = mlx_array_new(), t = mlx_array_new(), logits = mlx_array_new(), lse = mlx_array_new(),
              picked = mlx_array_new(), yl = mlx_array_new(), ce = mlx_array_new(), total = mlx_array_new(),
              loss = mlx_array_new(), scale = mlx_array_new_float(1.0f / BATCH);
    CHECK(mlx_matmul(&h, p[4], p[0], S));
    CHECK(mlx_add(&h, h, p[1], S));
    CHECK(mlx_tanh(&t, h, S));
    CHECK(mlx_matmul(&logits, t, p[2], S));
    CHECK(mlx_add(&logits, logits, p[3], S));
    CHECK(mlx_logsumexp_axis(&lse, logits, -1, false, S));
    CHECK(mlx_multiply(&yl, logits, p[5], S));
    CHECK(mlx_sum_axis(&picked, yl, -1, false, S));
    CHECK(mlx_subtract(&ce, lse, picked, S));
    CHECK(mlx_sum(&total, ce, false, S));
    CHECK(mlx_multiply(&loss, total, scale, S));
    *out = mlx_vector_array_new();
    CHECK(mlx_vector_array_append_value(*out, loss));
    mlx_array tmp[] = {h, t, logits, lse, picked, yl, ce, total, loss, scale};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        mlx_array_free(tmp[i]);
    for (int i = 0; i < 6; i++)
        mlx_array_free(p[i]);
    return 0;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 50;
    S = mlx_default_cpu_stream_new();
    mlx_distributed_group world = mlx_distributed_init(false, NULL);
    int rank = mlx_distributed_group_rank(world), size = mlx_distributed_group_size(world);
    if (BATCH % size != 0) {
        fprintf(stderr, "distributed_sgd: %d processes do not divide the batch of %d\n", size, BATCH);
        return 1;
    }
    int shard = BATCH / size, lo = rank * shard;

    /* the model and the class centres, the same in every process */
    mlx_array params[NPARAMS] = {normal_array(IN, HIDDEN, 1.0f / sqrtf(IN)), mlx_array_new_float(0.0f),
                                 normal_array(HIDDEN, CLASSES, 1.0f / sqrtf(HIDDEN)), mlx_array_new_float(0.0f)};
    float zeros_h[HIDDEN] = {0}, zeros_c[CLASSES] = {0};
    int hn = HIDDEN, cn = CLASSES;
    mlx_array_free(params[1]);
    mlx_array_free(params[3]);
    params[1] = mlx_array_new_data(zeros_h, &hn, 1, MLX_FLOAT32);
    params[3] = mlx_array_new_data(zeros_c, &cn, 1, MLX_FLOAT32);
    float *centres = malloc(sizeof(float) * CLASSES * IN);
    for (int i = 0; i < CLASSES * IN; i++)
        centres[i] = 1.5f * normal01();

    mlx_closure loss_fn = mlx_closure_new_func(shard_loss);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    int argnums[NPARAMS] = {0, 1, 2, 3};
    CHECK(mlx_value_and_grad(&vg, loss_fn, argnums, NPARAMS));
    mlx_array lr = mlx_array_new_float(learning_rate);
    float *x = malloc(sizeof(float) * BATCH * IN), *y = malloc(sizeof(float) * BATCH * CLASSES);

    for (int step = 0; step < steps; step++) {
        make_batch(centres, x, y); /* every process draws the whole batch ... */
        int xs[2] = {shard, IN}, ys[2] = {shard, CLASSES};
        /* ... and keeps its shard */
        mlx_array xb = mlx_array_new_data(x + (size_t)lo * IN, xs, 2, MLX_FLOAT32);
        mlx_array yb = mlx_array_new_data(y + (size_t)lo * CLASSES, ys, 2, MLX_FLOAT32);
        mlx_vector_array args = mlx_vector_array_new_data(params, NPARAMS);
        CHECK(mlx_vector_array_append_value(args, xb));
        CHECK(mlx_vector_array_append_value(args, yb));
        mlx_vector_array vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
        CHECK(mlx_closure_value_and_grad_apply(&vals, &grads, vg, args));

        /* the whole batch's loss and gradients: sums over the processes */
        mlx_array part = mlx_array_new(), loss = mlx_array_new();
        CHECK(mlx_vector_array_get(&part, vals, 0));
        CHECK(mlx_distributed_all_sum(&loss, part, world, S));
        mlx_vector_array next = mlx_vector_array_new();
        CHECK(mlx_vector_array_append_value(next, loss));
        for (int i = 0; i < NPARAMS; i++) {
            mlx_array g = mlx_array_new(), gsum = mlx_array_new(), upd = mlx_array_new();
            CHECK(mlx_vector_array_get(&g, grads, (size_t)i));
            CHECK(mlx_distributed_all_sum(&gsum, g, world, S));
            CHECK(mlx_multiply(&upd, gsum, lr, S));
            CHECK(mlx_subtract(&params[i], params[i], upd, S));
            CHECK(mlx_vector_array_append_value(next, params[i]));
            mlx_array_free(g);
            mlx_array_free(gsum);
            mlx_array_free(upd);
        }
        CHECK(mlx_eval(next));
        float l;
        CHECK(mlx_array_item_float32(&l, loss));
        if (rank == 0 && (step % 5 == 0 || step == steps - 1))
            printf("step %3d  loss %.6f\n", step, l);
        mlx_vector_array_free(next);
        mlx_array_free(part);
        mlx_array_free(loss);
        mlx_vector_array_free(vals);
        mlx_vector_array_free(grads);
        mlx_vector_array_free(args);
        mlx_array_free(xb);
        mlx_array_free(yb);
    }
    free(x);
    free(y);
    free(centres);
    mlx_array_free(lr);
    for (int i = 0; i < NPARAMS; i++)
        mlx_array_free(params[i]);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(loss_fn);
    mlx_stream_free(S);
    return 0;
}
