/* bench_fast: fast.h's fused operations next to references measured by
 * this program in the same run:
 * - rms_norm and layer_norm of 4096 rows of 4096 float32 (64 MiB in, 64
 *   MiB out) against copying the same 64 MiB: memcpy on one thread and
 *   the library's own mlx_copy (a new buffer written over the pool);
 * - scaled_dot_product_attention (B 1, 32 heads, L 1024, D 128, float32;
 *   no mask and causal) against the unfused composition of the library's
 *   own ops: matmul(q * scale, k^T), softmax, matmul with v;
 * - `bench_fast memory`: the peak memory of one attention of B 1, 32
 *   heads, L 8192, D 128 beyond its inputs and output, from getrusage's
 *   maximum resident size (run in a fresh process, inputs made first).
 * Only the public API is used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

typedef struct {
    int which; /* 0 rms_norm, 1 layer_norm, 2 copy, 3 sdpa, 4 unfused, 5 sdpa causal, 6 unfused causal */
    mlx_array x, w, b, q, k, v;
    float scale;
    mlx_stream s;
} fast_ctx;

static int unfused(mlx_array *out, fast_ctx *c, bool causal)
{
    mlx_array qs = mlx_array_new(), kt = mlx_array_new(), sc = mlx_array_new(), p = mlx_array_new();
    mlx_array a = mlx_array_new_float(c->scale);
    int rc =
        mlx_multiply(&qs, c->q, a, c->s) || mlx_swapaxes(&kt, c->k, -1, -2, c->s) || mlx_matmul(&sc, qs, kt, c->s);
    if (!rc && causal) {
        const int *qsh = mlx_array_shape(c->q);
        mlx_array t = mlx_array_new(), m = mlx_array_new(), low = mlx_array_new_float(-3.4e38f);
        rc = mlx_tri(&t, qsh[2], qsh[2], 0, MLX_BOOL, c->s) || mlx_where(&m, t, sc, low, c->s);
        if (!rc)
            mlx_array_set(&sc, m);
        mlx_array_free(t), mlx_array_free(m), mlx_array_free(low);
    }
    rc = rc || mlx_softmax_axis(&p, sc, -1, true, c->s) || mlx_matmul(out, p, c->v, c->s);
    mlx_array_free(qs), mlx_array_free(kt), mlx_array_free(sc), mlx_array_free(p), mlx_array_free(a);
    return rc;
}

static int run(void *arg)
{
    fast_ctx *c = arg;
    mlx_array out = mlx_array_new();
    int rc;
    switch (c->which) {
    case 0: rc = mlx_fast_rms_norm(&out, c->x, c->w, 1e-5f, c->s); break;
    case 1: rc = mlx_fast_layer_norm(&out, c->x, c->w, c->b, 1e-5f, c->s); break;
    case 2: rc = mlx_copy(&out, c->x, c->s); break;
    case 3:
    case 5:
        rc = mlx_fast_scaled_dot_product_attention(&out, c->q, c->k, c->v, c->scale, c->which == 5 ? "causal" : "",
                                                   (mlx_array){0}, (mlx_array){0}, c->s);
        break;
    default: rc = unfused(&out, c, c->which == 6); break;
    }
    rc = rc || mlx_array_eval(out);
    mlx_array_free(out);
    return rc;
}

typedef struct {
    float *src, *dst;
    size_t n;
} copy_ctx;

static int run_memcpy(void *arg)
{
    copy_ctx *m = arg;
    memcpy(m->dst, m->src, m->n * sizeof(float));
    __asm__ volatile("" : : "r"(m->dst) : "memory");
    return 0;
}

static mlx_array normal(const int *shape, int ndim, uint64_t seed, mlx_stream s)
{
    mlx_array key = mlx_array_new(), r = mlx_array_new();
    mlx_random_key(&key, seed);
    mlx_random_normal(&r, shape, (size_t)ndim, MLX_FLOAT32, 0.0f, 1.0f, key, s);
    mlx_array_eval(r);
    mlx_array_free(key);
    return r;
}

static long maxrss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* One attention at L = 8192 in a fresh process: the growth of the maximum
 * resident size past the inputs, less the output's 128 MiB. */
static int memory_run(void)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    int shape[4] = {1, 32, 8192, 128};
    mlx_array q = normal(shape, 4, 1, s), k = normal(shape, 4, 2, s), v = normal(shape, 4, 3, s);
    long before = maxrss_kib();
    size_t peak0 = 0, peak1 = 0;
    mlx_reset_peak_memory();
    mlx_get_peak_memory(&peak0);
    mlx_array out = mlx_array_new();
    int64_t t0 = bu_now_ns();
    int rc = mlx_fast_scaled_dot_product_attention(&out, q, k, v, 1.0f / sqrtf(128.0f), "", (mlx_array){0},
                                                   (mlx_array){0}, s) ||
             mlx_array_eval(out);
    int64_t t1 = bu_now_ns();
    long after = maxrss_kib();
    mlx_get_peak_memory(&peak1);
    double out_mib = 32.0 * 8192 * 128 * 4 / 1048576.0;
    char buf[256];
    snprintf(buf, sizeof buf,
             "sdpa_L8192_H32_D128: %.1f s, max RSS %.1f MiB -> %.1f MiB: %.1f MiB beyond inputs and the %.0f MiB "
             "output; library data peak %.1f MiB (output included)",
             (double)(t1 - t0) / 1e9, before / 1024.0, after / 1024.0, (after - before) / 1024.0 - out_mib,
             out_mib, (double)peak1 / 1048576.0);
    bu_info("memory", buf);
    mlx_array_free(q), mlx_array_free(k), mlx_array_free(v), mlx_array_free(out);
    mlx_stream_free(s);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "memory") == 0)
        return memory_run();
    fast_ctx c = {.s = mlx_default_cpu_stream_new()};
    int xs[2] = {4096, 4096}, ws[1] = {4096}, qs[4] = {1, 32, 1024, 128};
    c.x = normal(xs, 2, 1, c.s);
    c.w = normal(ws, 1, 2, c.s);
    c.b = normal(ws, 1, 3, c.s);
    c.q = normal(qs, 4, 4, c.s);
    c.k = normal(qs, 4, 5, c.s);
    c.v = normal(qs, 4, 6, c.s);
    c.scale = 1.0f / sqrtf(128.0f);
    copy_ctx m = {malloc(sizeof(float) << 24), malloc(sizeof(float) << 24), (size_t)1 << 24};
    if (!m.src || !m.dst)
        return 1;
    memset(m.src, 1, sizeof(float) << 24);
    bu_report("ref", "memcpy_64MiB", 1, bu_measure(run_memcpy, &m, 2, bu_reps(15)));
    static const char *const names[] = {
        "fast_rms_norm_4096x4096",           "fast_layer_norm_4096x4096",   "copy_4096x4096",
        "fast_sdpa_L1024_H32_D128",          "unfused_sdpa_L1024_H32_D128", "fast_sdpa_causal_L1024_H32_D128",
        "unfused_sdpa_causal_L1024_H32_D128"};
    int max_threads = mlx_cpu_get_num_threads();
    for (int t = 1; t <= max_threads && t <= 2; t++) {
        mlx_cpu_set_num_threads(t);
        for (int w = 0; w < 7; w++) {
            c.which = w;
            bu_report(w == 2 || w == 4 || w == 6 ? "ref" : "mlx", names[w], t,
                      bu_measure(run, &c, 1, bu_reps(w >= 3 ? 5 : 15)));
        }
    }
    mlx_cpu_set_num_threads(max_threads);
    free(m.src), free(m.dst);
    mlx_array_free(c.x), mlx_array_free(c.w), mlx_array_free(c.b);
    mlx_array_free(c.q), mlx_array_free(c.k), mlx_array_free(c.v);
    mlx_stream_free(c.s);
    return 0;
}
