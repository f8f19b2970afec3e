/* bench_fast: fast.h's fused operations next to references measured by
 * this program in the same run:
 * - rms_norm and layer_norm of 4096 rows of 4096 float32 (64 MiB in, 64
 *   MiB out) against copying the same 64 MiB: memcpy on one thread and
 *   the library's own mlx_copy (a new buffer written over the pool);
 * - scaled_dot_product_attention (B 1, 32 heads, L 1024, D 128, float32;
 *   no mask and causal) against the unfused composition of the library's
 *   own ops: matmul(q * scale, k^T), softmax, matmul with v; the
 *   fused/unfused ratios (medians of this run) printed as INFO lines;
 * - `bench_fast memory`: the peak memory of one attention of B 1, 32
 *   heads, L 8192, D 128 beyond its inputs and output, from getrusage's
 *   maximum resident size (run in a fresh process, inputs made first);
 * - `bench_fast bound`: what the hardware allows attention of that shape:
 *   cblas_sgemm alone (OpenBLAS on 1 and 2 threads) on a large square
 *   product (the machine's peak), on attention's per-head products (Q K^T:
 *   L x D times D x L; P V: L x L times L x D), on those over 32 heads as
 *   one sequence of calls, and on the tile products of the fused kernel's
 *   BLAS path (one OpenBLAS thread per pool thread, heads split between
 *   them, as src/graph/fast_sdpa.c calls them for float64; float32 uses
 *   its own product, not reachable from here); then the unfused composition's
 *   pieces through the library (the two matmuls, the softmax). The report
 *   derives the best fused/unfused ratio from these.
 * Only the public API is used, and cblas directly for the GEMM floor. */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
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

/* ---- `bench_fast bound` ---- */

enum { BH = 32, BL = 1024, BD = 128 };
/* The BLAS path's tile (src/graph/fast_sdpa.c's BQ and BK): keep in step. */
enum { TQ = 256, TK = 256 };

typedef struct {
    int kind; /* 0 square, 1 Q K^T, 2 P V, 3 both over heads, 4 fused tiles */
    int heads, n;
    float *a, *b, *c, *s;
} gemm_ctx;

/* One head's two products at full size: scores = Q K^T, out = P V. */
static void head_qk(gemm_ctx *g, int h)
{
    size_t hd = (size_t)BL * BD;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, BL, BL, BD, 1.0f, g->a + h * hd, BD, g->b + h * hd, BD,
                0.0f, g->s, BL);
}

static void head_pv(gemm_ctx *g, int h)
{
    size_t hd = (size_t)BL * BD;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BL, BD, BL, 1.0f, g->s, BL, g->b + h * hd, BD, 0.0f,
                g->c + h * hd, BD);
}

/* Heads [h0, h1) through the fused kernel's tile products (no softmax):
 * per query block and key block, S = Q_blk K_blk^T and acc += S V_blk. */
static void tiles(const gemm_ctx *g, int h0, int h1, float *S, float *acc)
{
    size_t hd = (size_t)BL * BD;
    for (int h = h0; h < h1; h++)
        for (int i0 = 0; i0 < BL; i0 += TQ)
            for (int j0 = 0; j0 < BL; j0 += TK) {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, TQ, TK, BD, 1.0f,
                            g->a + h * hd + (size_t)i0 * BD, BD, g->b + h * hd + (size_t)j0 * BD, BD, 0.0f, S, TK);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, TQ, BD, TK, 1.0f, S, TK,
                            g->b + h * hd + (size_t)j0 * BD, BD, j0 ? 1.0f : 0.0f, acc, BD);
            }
}

typedef struct {
    const gemm_ctx *g;
    int h0, h1;
} tile_arg;

static void *tile_thread(void *arg)
{
    tile_arg *t = arg;
    float *S = malloc(sizeof(float) * TQ * TK), *acc = malloc(sizeof(float) * TQ * BD);
    if (S && acc)
        tiles(t->g, t->h0, t->h1, S, acc);
    free(S), free(acc);
    return NULL;
}

static int gemm_run(void *arg)
{
    gemm_ctx *g = arg;
    switch (g->kind) {
    case 0:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->a, g->n, g->b, g->n,
                    0.0f, g->c, g->n);
        break;
    case 1: head_qk(g, 0); break;
    case 2: head_pv(g, 0); break;
    case 3:
        for (int h = 0; h < g->heads; h++)
            head_qk(g, h), head_pv(g, h);
        break;
    default: {
        /* one OpenBLAS thread per worker, heads split evenly, as the pool does */
        pthread_t th[2];
        tile_arg ta[2] = {{g, 0, g->heads / g->n}, {g, g->heads / g->n, g->heads}};
        if (g->n == 1) {
            ta[0].h1 = g->heads;
            tile_thread(&ta[0]);
            break;
        }
        for (int i = 0; i < 2; i++)
            if (pthread_create(&th[i], NULL, tile_thread, &ta[i]))
                return 1;
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        break;
    }
    }
    return 0;
}

static float *filled(size_t n, unsigned seed)
{
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)((i * 2654435761u + seed) % 1000) * 1e-3f - 0.5f;
    return p;
}

typedef struct {
    int which; /* 0 Q K^T matmul, 1 softmax of the scores, 2 P V matmul */
    mlx_array q, kt, sc, p, v;
    mlx_stream s;
} piece_ctx;

static int piece_run(void *arg)
{
    piece_ctx *c = arg;
    mlx_array out = mlx_array_new();
    int rc = c->which == 0   ? mlx_matmul(&out, c->q, c->kt, c->s)
             : c->which == 1 ? mlx_softmax_axis(&out, c->sc, -1, true, c->s)
                             : mlx_matmul(&out, c->p, c->v, c->s);
    rc = rc || mlx_array_eval(out);
    mlx_array_free(out);
    return rc;
}

static int bound_run(void)
{
    /* the square product and attention's operands (B holds K and V alike:
     * the rate does not depend on the values) */
    enum { SQ = 4096 };
    gemm_ctx g = {.heads = BH};
    g.a = filled((size_t)SQ * SQ, 1);
    g.b = filled((size_t)SQ * SQ, 2);
    g.c = filled((size_t)SQ * SQ, 3);
    g.s = filled((size_t)BL * BL, 4);
    if (!g.a || !g.b || !g.c || !g.s)
        return 1;
    char name[64];
    for (int t = 1; t <= 2; t++) {
        openblas_set_num_threads(t);
        g.kind = 0, g.n = SQ;
        snprintf(name, sizeof name, "sgemm_%dx%dx%d", SQ, SQ, SQ);
        bu_report("sgemm", name, t, bu_measure(gemm_run, &g, 1, bu_reps(5)));
        g.kind = 1;
        bu_report("sgemm", "sgemm_qkT_1024x1024x128", t, bu_measure(gemm_run, &g, 2, bu_reps(40)));
        g.kind = 2;
        bu_report("sgemm", "sgemm_pv_1024x128x1024", t, bu_measure(gemm_run, &g, 2, bu_reps(40)));
        g.kind = 3;
        bu_report("sgemm", "sgemm_qkT_pv_H32_L1024_D128", t, bu_measure(gemm_run, &g, 1, bu_reps(6)));
    }
    /* the fused kernel's tile products: OpenBLAS single-threaded in each of
     * 1 or 2 threads */
    openblas_set_num_threads(1);
    g.kind = 4;
    for (g.n = 1; g.n <= 2; g.n++) {
        snprintf(name, sizeof name, "sgemm_tiles_%dx%d_H32_L1024_D128", TQ, TK);
        bu_report("sgemm", name, g.n, bu_measure(gemm_run, &g, 1, bu_reps(6)));
    }
    free(g.a), free(g.b), free(g.c), free(g.s);

    /* the unfused composition's pieces through the library, on 2 threads
     * (the library runs OpenBLAS on one thread per pool worker) */
    mlx_cpu_set_num_threads(2);
    piece_ctx c = {.s = mlx_default_cpu_stream_new()};
    int qs[4] = {1, BH, BL, BD};
    c.q = normal(qs, 4, 4, c.s);
    mlx_array k = normal(qs, 4, 5, c.s);
    c.v = normal(qs, 4, 6, c.s);
    c.kt = mlx_array_new(), c.sc = mlx_array_new(), c.p = mlx_array_new();
    int rc = mlx_swapaxes(&c.kt, k, -1, -2, c.s) || mlx_matmul(&c.sc, c.q, c.kt, c.s) || mlx_array_eval(c.sc) ||
             mlx_softmax_axis(&c.p, c.sc, -1, true, c.s) || mlx_array_eval(c.p);
    static const char *const pieces[] = {"unfused_qkT_matmul_L1024_H32_D128", "unfused_softmax_L1024_H32",
                                         "unfused_pv_matmul_L1024_H32_D128"};
    for (c.which = 0; !rc && c.which < 3; c.which++)
        bu_report("ref", pieces[c.which], 2, bu_measure(piece_run, &c, 1, bu_reps(6)));
    mlx_array_free(c.q), mlx_array_free(k), mlx_array_free(c.v);
    mlx_array_free(c.kt), mlx_array_free(c.sc), mlx_array_free(c.p);
    mlx_stream_free(c.s);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "memory") == 0)
        return memory_run();
    if (argc > 1 && strcmp(argv[1], "bound") == 0)
        return bound_run();
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
        bu_stat st[7];
        for (int w = 0; w < 7; w++) {
            c.which = w;
            st[w] = bu_measure(run, &c, 1, bu_reps(w >= 3 ? 5 : 15));
            bu_report(w == 2 || w == 4 || w == 6 ? "ref" : "mlx", names[w], t, st[w]);
        }
        if (st[3].reps && st[4].reps && st[5].reps && st[6].reps) {
            char buf[160];
            snprintf(buf, sizeof buf, "threads %d: fused/unfused %.2fx without a mask, %.2fx causal (target 2x)",
                     t, (double)st[4].median_ns / (double)st[3].median_ns,
                     (double)st[6].median_ns / (double)st[5].median_ns);
            bu_info("sdpa_ratio", buf);
        }
    }
    mlx_cpu_set_num_threads(max_threads);
    free(m.src), free(m.dst);
    mlx_array_free(c.x), mlx_array_free(c.w), mlx_array_free(c.b);
    mlx_array_free(c.q), mlx_array_free(c.k), mlx_array_free(c.v);
    mlx_stream_free(c.s);
    return 0;
}
