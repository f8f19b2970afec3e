/* Quantized matmul (affine 4-bit, group 64, float32 activations) for
 * decoding (x 1 x 4096 against W 4096 x 4096 and 11008 x 4096) and prefill
 * (512 x 4096 against 4096 x 4096), and mxfp4 decoding (4096 x 4096), next
 * to our float32 matmul of the same shapes and to the floor set by memory
 * bandwidth: the bytes of the packed weights, scales and biases divided by
 * the read bandwidth a large float32 sum reaches in the same run, on the
 * same pool of threads. W of 4096 x 4096 (10.5 MB packed) fits in the last
 * level cache of many machines, where successive calls read it from the
 * cache rather than memory; the "cold" figure rotates through eight
 * copies (84 MB) so that every call streams its weights from memory, as
 * decoding a model whose layers exceed the cache does.
 * bench/quant_ref.py measures MLX's CPU quantized_matmul on the same
 * shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

enum { MAX_COPIES = 8 };

typedef struct job {
    mlx_array x, w, q, s, b;
    /* copies of q, s, b that mode 0 takes in turn (ncopies 0: q, s, b) */
    mlx_array cq[MAX_COPIES], cs[MAX_COPIES], cb[MAX_COPIES];
    int ncopies, next;
    int mode; /* 0 quantized_matmul, 1 float32 matmul, 2 sum of w */
    const char *qmode;
    int gs, bits;
} job;

static int run(void *ctx)
{
    job *j = ctx;
    mlx_stream st = mlx_default_cpu_stream_new();
    mlx_array y = mlx_array_new();
    mlx_optional_int gs = {j->gs, true}, bits = {j->bits, true};
    int rc;
    if (j->mode == 0 && j->ncopies > 0) {
        int c = j->next++ % j->ncopies;
        rc = mlx_quantized_matmul(&y, j->x, j->cq[c], j->cs[c], j->cb[c], true, gs, bits, j->qmode, st);
    } else if (j->mode == 0)
        rc = mlx_quantized_matmul(&y, j->x, j->q, j->s, j->b, true, gs, bits, j->qmode, st);
    else if (j->mode == 1) {
        mlx_array wt = mlx_array_new();
        rc = mlx_transpose(&wt, j->w, st) || mlx_matmul(&y, j->x, wt, st);
        mlx_array_free(wt);
    } else
        rc = mlx_sum(&y, j->w, false, st);
    rc = rc || mlx_array_eval(y);
    mlx_array_free(y);
    mlx_stream_free(st);
    return rc;
}

static mlx_array random_normal(int r, int c, uint64_t seed)
{
    mlx_stream st = mlx_default_cpu_stream_new();
    mlx_array key = mlx_array_new(), a = mlx_array_new();
    int shape[2] = {r, c};
    mlx_random_key(&key, seed);
    mlx_random_normal(&a, shape, 2, MLX_FLOAT32, 0.0f, 1.0f, key, st);
    mlx_array_eval(a);
    mlx_array_free(key);
    mlx_stream_free(st);
    return a;
}

/* A copy of a in a buffer of its own, evaluated. */
static mlx_array fresh_copy(mlx_array a, mlx_stream st)
{
    mlx_array c = mlx_array_new();
    if (a.ctx && (mlx_copy(&c, a, st) || mlx_array_eval(c))) {
        fprintf(stderr, "copy failed\n");
        exit(1);
    }
    return c;
}

/* mode "affine" (group 64, 4 bits: float32 scales and biases) or "mxfp4"
 * (group 32: one uint8 scale). With copies > 0 the product takes that many
 * copies of the packed weights in turn and no float32 matmul is measured. */
static void bench_shape(const char *name, int M, int N, int K, double read_gbs, const char *qmode, int copies)
{
    mlx_stream st = mlx_default_cpu_stream_new();
    bool affine = strcmp(qmode, "affine") == 0;
    job j = {.x = random_normal(M, K, 1),
             .w = random_normal(N, K, 2),
             .q = mlx_array_new(),
             .s = mlx_array_new(),
             .b = mlx_array_new(),
             .mode = 0,
             .qmode = qmode,
             .gs = affine ? 64 : 32,
             .bits = 4};
    mlx_vector_array r = mlx_vector_array_new();
    mlx_optional_int gs = {j.gs, true}, bits = {4, true};
    mlx_array none = {NULL};
    if (mlx_quantize(&r, j.w, gs, bits, qmode, none, st) || mlx_vector_array_get(&j.q, r, 0) ||
        mlx_vector_array_get(&j.s, r, 1) || (affine && mlx_vector_array_get(&j.b, r, 2)) || mlx_array_eval(j.q) ||
        mlx_array_eval(j.s) || (affine && mlx_array_eval(j.b))) {
        fprintf(stderr, "quantize failed\n");
        exit(1);
    }
    j.ncopies = copies < MAX_COPIES ? copies : MAX_COPIES;
    for (int c = 0; c < j.ncopies; c++) {
        j.cq[c] = fresh_copy(j.q, st);
        j.cs[c] = fresh_copy(j.s, st);
        j.cb[c] = affine ? fresh_copy(j.b, st) : mlx_array_new();
    }
    char n1[96], info[256], f32[32] = "-";
    double bytes = (double)N * K / 2 + (affine ? 2.0 * N * (K / 64) * 4 : (double)N * (K / 32));
    snprintf(n1, sizeof n1, "qmm_%s", name);
    bu_stat s0 = bu_measure(run, &j, 2, bu_reps(M > 1 ? 5 : 30));
    bu_report("mlx-cpu", n1, 0, s0);
    j.mode = 1;
    snprintf(n1, sizeof n1, "f32_matmul_%s", name);
    bu_stat s1 = {0, 0, 0};
    if (copies == 0) {
        s1 = bu_measure(run, &j, 1, bu_reps(M > 1 ? 3 : 20));
        bu_report("mlx-cpu", n1, 0, s1);
        snprintf(f32, sizeof f32, "%.3f ms", s1.median_ns / 1e6);
    }
    double floor_ms = bytes / (read_gbs * 1e9) * 1e3;
    snprintf(info, sizeof info,
             "%s: qmm %.3f ms (best %.3f), f32 matmul %s, packed bytes %.1f MB, bandwidth floor %.3f ms "
             "(%.0f%% of it; best %.0f%%)",
             name, s0.median_ns / 1e6, s0.min_ns / 1e6, f32, bytes / 1e6, floor_ms,
             100.0 * floor_ms / (s0.median_ns / 1e6), 100.0 * floor_ms / (s0.min_ns / 1e6));
    bu_info("quant", info);
    for (int c = 0; c < j.ncopies; c++) {
        mlx_array_free(j.cq[c]);
        mlx_array_free(j.cs[c]);
        mlx_array_free(j.cb[c]);
    }
    mlx_vector_array_free(r);
    mlx_array_free(j.x);
    mlx_array_free(j.w);
    mlx_array_free(j.q);
    mlx_array_free(j.s);
    mlx_array_free(j.b);
    mlx_stream_free(st);
}

int main(void)
{
    /* read bandwidth: a float32 sum over 256 MiB (the pool's threads) */
    job bw = {.w = random_normal(8192, 8192, 3), .mode = 2, .qmode = "affine", .gs = 64, .bits = 4};
    bu_stat sb = bu_measure(run, &bw, 1, bu_reps(10));
    bu_report("mlx-cpu", "sum_f32_256MiB", 0, sb);
    double gbs = 8192.0 * 8192 * 4 / (sb.median_ns / 1e9) / 1e9;
    char info[96];
    snprintf(info, sizeof info, "read bandwidth (sum of 256 MiB, %d threads as the products) %.2f GB/s",
             mlx_cpu_get_num_threads(), gbs);
    bu_info("quant", info);
    mlx_array_free(bw.w);
    bench_shape("decode_4096x4096", 1, 4096, 4096, gbs, "affine", 0);
    bench_shape("decode_cold_4096x4096", 1, 4096, 4096, gbs, "affine", MAX_COPIES);
    bench_shape("decode_11008x4096", 1, 11008, 4096, gbs, "affine", 0);
    bench_shape("prefill_512_4096x4096", 512, 4096, 4096, gbs, "affine", 0);
    bench_shape("mxfp4_decode_4096x4096", 1, 4096, 4096, gbs, "mxfp4", 0);
    return 0;
}
