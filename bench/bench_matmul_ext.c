/* gather_mm for a mixture-of-experts layer (8 experts of 1024 x 1024,
 * 64 tokens, 2 experts each, float32) next to the same 128 products
 * through plain matmul in the same run (one matmul per token and expert,
 * evaluated together), and to the dense bound (every token through every
 * expert: 4x the work, one batched matmul); then block_masked_mm
 * (1024^3, 64-blocks, half the output blocks masked) next to the plain
 * product. bench/mm_ext_ref.py measures MLX's CPU build on the same
 * shapes. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "mlx/c/mlx.h"

enum { E = 8, D = 1024, T = 64, P = 2 };

typedef struct job {
    mlx_array x, w, idx, xs, idxs, m;
    int mode; /* 0 gather_mm, 1 sorted gather_mm, 2 matmuls, 3 dense, 4 block_masked_mm, 5 matmul */
    int expert[T * P];
} job;

static int run(void *ctx)
{
    job *j = ctx;
    mlx_stream st = mlx_default_cpu_stream_new();
    mlx_array y = mlx_array_new(), none = {NULL};
    int rc = 0;
    if (j->mode == 0) {
        rc = mlx_gather_mm(&y, j->x, j->w, none, j->idx, false, st) || mlx_array_eval(y);
    } else if (j->mode == 1) {
        rc = mlx_gather_mm(&y, j->xs, j->w, none, j->idxs, true, st) || mlx_array_eval(y);
    } else if (j->mode == 2) {
        mlx_vector_array outs = mlx_vector_array_new();
        for (int p = 0; p < T * P && !rc; p++) {
            int e = j->expert[p], t = p / P;
            mlx_array xt = mlx_array_new(), we = mlx_array_new(), o = mlx_array_new();
            rc = mlx_slice(&xt, j->x, (int[]){t, 0, 0, 0}, 4, (int[]){t + 1, 1, 1, D}, 4, (int[]){1, 1, 1, 1}, 4,
                           st) ||
                 mlx_reshape(&xt, xt, (int[]){1, D}, 2, st) ||
                 mlx_slice(&we, j->w, (int[]){e, 0, 0}, 3, (int[]){e + 1, D, D}, 3, (int[]){1, 1, 1}, 3, st) ||
                 mlx_reshape(&we, we, (int[]){D, D}, 2, st) || mlx_matmul(&o, xt, we, st) ||
                 mlx_vector_array_append_value(outs, o);
            mlx_array_free(xt);
            mlx_array_free(we);
            mlx_array_free(o);
        }
        rc = rc || mlx_eval(outs);
        mlx_vector_array_free(outs);
    } else if (j->mode == 3) {
        mlx_array x2 = mlx_array_new();
        rc = mlx_reshape(&x2, j->x, (int[]){T, D}, 2, st) || mlx_matmul(&y, x2, j->w, st) || mlx_array_eval(y);
        mlx_array_free(x2);
    } else if (j->mode == 4) {
        rc = mlx_block_masked_mm(&y, j->x, j->w, 64, j->m, none, none, st) || mlx_array_eval(y);
    } else {
        rc = mlx_matmul(&y, j->x, j->w, st) || mlx_array_eval(y);
    }
    mlx_array_free(y);
    mlx_stream_free(st);
    return rc;
}

static mlx_array random_normal(const int *shape, int nd, uint64_t seed)
{
    mlx_stream st = mlx_default_cpu_stream_new();
    mlx_array key = mlx_array_new(), a = mlx_array_new();
    mlx_random_key(&key, seed);
    mlx_random_normal(&a, shape, (size_t)nd, MLX_FLOAT32, 0.0f, 1.0f, key, st);
    mlx_array_eval(a);
    mlx_array_free(key);
    mlx_stream_free(st);
    return a;
}

static void measure(const char *name, job *j, int mode, int reps)
{
    j->mode = mode;
    bu_report("ours", name, 0, bu_measure(run, j, 2, bu_reps(reps)));
}

int main(void)
{
    job j = {0};
    j.x = random_normal((int[]){T, 1, 1, D}, 4, 1);
    j.w = random_normal((int[]){E, D, D}, 3, 2);
    /* each token's two experts, distinct, spread over all eight */
    int32_t iv[T * P], sv[T * P];
    int count[E] = {0};
    for (int t = 0; t < T; t++) {
        int e0 = (t * 5 + t / 7) % E, e1 = (e0 + 1 + t % (E - 1)) % E;
        iv[t * P] = j.expert[t * P] = e0;
        iv[t * P + 1] = j.expert[t * P + 1] = e1;
        count[e0]++;
        count[e1]++;
    }
    /* the sorted form MLX's SwitchGLU uses: the (token, expert) pairs in
     * expert order, each token's row repeated for its pairs */
    int pos[E], order[T * P];
    for (int e = 0, at = 0; e < E; at += count[e], e++)
        pos[e] = at;
    for (int p = 0; p < T * P; p++) {
        int k = pos[iv[p]]++;
        sv[k] = iv[p];
        order[k] = p / P;
    }
    mlx_stream st = mlx_default_cpu_stream_new();
    j.idx = mlx_array_new_data(iv, (int[]){T, P}, 2, MLX_INT32);
    j.idxs = mlx_array_new_data(sv, (int[]){T * P}, 1, MLX_INT32);
    mlx_array ord = mlx_array_new_data(order, (int[]){T * P}, 1, MLX_INT32);
    j.xs = mlx_array_new();
    mlx_take_axis(&j.xs, j.x, ord, 0, st);
    mlx_reshape(&j.xs, j.xs, (int[]){T * P, 1, D}, 3, st);
    mlx_array_eval(j.xs);
    mlx_array_free(ord);

    bu_info("moe", "8 experts of 1024x1024 float32, 64 tokens, 2 experts each");
    measure("gather_mm_moe_64x2_1024", &j, 0, 20);
    measure("gather_mm_moe_sorted_64x2_1024", &j, 1, 20);
    measure("matmuls_moe_64x2_1024", &j, 2, 10);
    measure("dense_all_experts_64_8x1024", &j, 3, 10);

    /* block_masked_mm: the lower half of the 16 x 16 output blocks masked out */
    mlx_array_free(j.x);
    mlx_array_free(j.w);
    j.x = random_normal((int[]){D, D}, 2, 3);
    j.w = random_normal((int[]){D, D}, 2, 4);
    bool mv[16 * 16];
    for (int i = 0; i < 16 * 16; i++)
        mv[i] = i / 16 < 8;
    j.m = mlx_array_new_data(mv, (int[]){16, 16}, 2, MLX_BOOL);
    measure("block_masked_mm_1024_half_rows", &j, 4, 10);
    measure("matmul_1024", &j, 5, 10);

    mlx_array_free(j.x);
    mlx_array_free(j.w);
    mlx_array_free(j.idx);
    mlx_array_free(j.idxs);
    mlx_array_free(j.xs);
    mlx_array_free(j.m);
    mlx_stream_free(st);
    return 0;
}
