/* Quantized matmul (affine 4-bit, group 64, float32 activations) for
 * decoding (x 1 x 4096 against W 4096 x 4096 and 11008 x 4096) and prefill
 * (512 x 4096 against 4096 x 4096), and mxfp4 decoding (4096 x 4096), next
 * to our float32 matmul of the same shapes and to the floor set by memory
 * bandwidth: the bytes of the packed weights, scales and biases divided by
 * the read bandwidth a large float32 sum reaches in the same run.
 * bench/quant_ref.py measures MLX's CPU quantized_matmul on the same
 * shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mlx/c/mlx.h"

typedef struct job {
    mlx_array x, w, q, s, b;
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
    if (j->mode == 0)
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

/* mode "affine" (group 64, 4 bits: float32 scales and biases) or "mxfp4"
 * (group 32: one uint8 scale). */
static void bench_shape(const char *name, int M, int N, int K, double read_gbs, const char *qmode)
{
    mlx_stream st = mlx_default_cpu_stream_new();
    bool affine = strcmp(qmode, "affine") == 0;
    job j = {random_normal(M, K, 1),
             random_normal(N, K, 2),
             mlx_array_new(),
             mlx_array_new(),
             mlx_array_new(),
             0,
             qmode,
             affine ? 64 : 32,
             4};
    mlx_vector_array r = mlx_vector_array_new();
    mlx_optional_int gs = {j.gs, true}, bits = {4, true};
    mlx_array none = {NULL};
    if (mlx_quantize(&r, j.w, gs, bits, qmode, none, st) || mlx_vector_array_get(&j.q, r, 0) ||
        mlx_vector_array_get(&j.s, r, 1) || (affine && mlx_vector_array_get(&j.b, r, 2)) || mlx_array_eval(j.q) ||
        mlx_array_eval(j.s) || (affine && mlx_array_eval(j.b))) {
        fprintf(stderr, "quantize failed\n");
        exit(1);
    }
    char n1[96], info[200];
    double bytes = (double)N * K / 2 + (affine ? 2.0 * N * (K / 64) * 4 : (double)N * (K / 32));
    snprintf(n1, sizeof n1, "qmm_%s", name);
    bu_stat s0 = bu_measure(run, &j, 2, bu_reps(M > 1 ? 5 : 30));
    bu_report("mlx-cpu", n1, 0, s0);
    j.mode = 1;
    snprintf(n1, sizeof n1, "f32_matmul_%s", name);
    bu_stat s1 = bu_measure(run, &j, 1, bu_reps(M > 1 ? 3 : 20));
    bu_report("mlx-cpu", n1, 0, s1);
    double floor_ms = bytes / (read_gbs * 1e9) * 1e3;
    snprintf(info, sizeof info,
             "%s: qmm %.3f ms, f32 matmul %.3f ms, packed bytes %.1f MB, bandwidth floor %.3f ms (%.0f%% of it)",
             name, s0.median_ns / 1e6, s1.median_ns / 1e6, bytes / 1e6, floor_ms,
             100.0 * floor_ms / (s0.median_ns / 1e6));
    bu_info("quant", info);
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
    job bw = {{NULL}, random_normal(8192, 8192, 3), {NULL}, {NULL}, {NULL}, 2, "affine", 64, 4};
    bu_stat sb = bu_measure(run, &bw, 1, bu_reps(10));
    bu_report("mlx-cpu", "sum_f32_256MiB", 0, sb);
    double gbs = 8192.0 * 8192 * 4 / (sb.median_ns / 1e9) / 1e9;
    char info[96];
    snprintf(info, sizeof info, "read bandwidth (sum of 256 MiB) %.2f GB/s", gbs);
    bu_info("quant", info);
    mlx_array_free(bw.w);
    bench_shape("decode_4096x4096", 1, 4096, 4096, gbs, "affine");
    bench_shape("decode_11008x4096", 1, 11008, 4096, gbs, "affine");
    bench_shape("prefill_512_4096x4096", 512, 4096, 4096, gbs, "affine");
    bench_shape("mxfp4_decode_4096x4096", 1, 4096, 4096, gbs, "mxfp4");
    return 0;
}
