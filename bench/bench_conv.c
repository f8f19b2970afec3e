/* Convolution benchmark: ResNet-style layers (batch 8, channels last,
 * float32) through mlx_conv2d, and the equivalent GEMM (M = N * OH * OW,
 * N = C_out, K = KH * KW * C_in) through cblas_sgemm, in GFLOP/s
 * (2 * M * N * K per call). bench/conv_ref.py measures MLX, JAX and
 * PyTorch on the same layers; bench/run_conv.sh runs both in one go.
 *
 * Usage: bench_conv lib     our convolutions (the pool's threads; 3x3
 *                           layers of stride 1 take the Winograd path)
 *        bench_conv direct  the same with the Winograd path turned off
 *                           (MLX_CPU_CONV_WINOGRAD=0): the im2col path
 *        bench_conv wino2   the same with F(2x2, 3x3) forced on the 3x3
 *        bench_conv wino4   layers of stride 1 (MLX_CPU_CONV_WINOGRAD=2),
 *                           or F(4x4, 3x3) (=4); other layers are skipped
 *        bench_conv sgemm   cblas_sgemm on 2 OpenBLAS threads, in a process
 *                           that never starts the library (which sets
 *                           OpenBLAS to one thread for its own pool)
 * Prints "BENCH side=.. name=.. threads=.. median_ns=.. min_ns=.. reps=..
 * gflops=..". */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mlx/c/mlx.h"

typedef struct layer {
    const char *name;
    int n, h, w, c, o, k, stride, pad;
} layer;

static const layer layers[] = {
    {"conv3x3_56x56x64", 8, 56, 56, 64, 64, 3, 1, 1},
    {"conv3x3_28x28x128", 8, 28, 28, 128, 128, 3, 1, 1},
    {"conv1x1_56x56x64_256", 8, 56, 56, 64, 256, 1, 1, 0},
    {"conv3x3_s2_56x56x64_128", 8, 56, 56, 64, 128, 3, 2, 1},
    {"dwconv3x3_56x56x128", 8, 56, 56, 128, 128, 3, 1, 1},
};
enum { N_LAYERS = sizeof layers / sizeof layers[0] };

static int out_dim(const layer *l, int d) { return (d + 2 * l->pad - l->k) / l->stride + 1; }

static int groups_of(const layer *l) { return strncmp(l->name, "dw", 2) ? 1 : l->c; }

static double flops_of(const layer *l)
{
    double m = (double)l->n * out_dim(l, l->h) * out_dim(l, l->w);
    return 2.0 * m * l->o * (double)l->k * l->k * (l->c / groups_of(l));
}

static float *filled(size_t n, unsigned seed)
{
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n && p; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((int)(seed >> 20) - 2048) / 2048.0f;
    }
    return p;
}

static void print_result(const char *side, const layer *l, int threads, bu_stat st)
{
    if (!st.reps) {
        bu_report(side, l->name, threads, st);
        return;
    }
    printf("BENCH side=%s name=%s threads=%d median_ns=%lld min_ns=%lld reps=%d gflops=%.1f\n", side, l->name,
           threads, (long long)st.median_ns, (long long)st.min_ns, st.reps, flops_of(l) / (double)st.median_ns);
    fflush(stdout);
}

typedef struct lib_ctx {
    const layer *l;
    mlx_array x, w;
    mlx_stream s;
} lib_ctx;

static int lib_step(void *arg)
{
    lib_ctx *c = arg;
    const layer *l = c->l;
    mlx_array y = mlx_array_new();
    int rc = mlx_conv2d(&y, c->x, c->w, l->stride, l->stride, l->pad, l->pad, 1, 1, groups_of(l), c->s) ||
             mlx_array_eval(y);
    mlx_array_free(y);
    return rc;
}

/* Layers the Winograd path can take (3x3, stride 1, one group). */
static int wino_layer(const layer *l) { return l->k == 3 && l->stride == 1 && groups_of(l) == 1; }

static void run_lib(int reps, const char *side, int wino_only)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    for (int i = 0; i < N_LAYERS; i++) {
        const layer *l = &layers[i];
        if (wino_only && !wino_layer(l))
            continue;
        int xs[4] = {l->n, l->h, l->w, l->c}, ws[4] = {l->o, l->k, l->k, l->c / groups_of(l)};
        size_t nx = (size_t)l->n * l->h * l->w * l->c, nw = (size_t)ws[0] * ws[1] * ws[2] * ws[3];
        float *xv = filled(nx, 1), *wv = filled(nw, 2);
        lib_ctx c = {l, mlx_array_new_data(xv, xs, 4, MLX_FLOAT32), mlx_array_new_data(wv, ws, 4, MLX_FLOAT32), s};
        free(xv);
        free(wv);
        print_result(side, l, 2, bu_measure(lib_step, &c, 2, reps));
        mlx_array_free(c.x);
        mlx_array_free(c.w);
    }
    mlx_stream_free(s);
}

typedef struct gemm_ctx {
    int m, n, k;
    float *a, *b, *c;
} gemm_ctx;

static int gemm_step(void *arg)
{
    gemm_ctx *g = arg;
    /* the convolution's product: patches (m x k) times weight^T (k x n) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->k, 0.0f, g->c,
                g->n);
    return 0;
}

static void run_sgemm(int reps)
{
    openblas_set_num_threads(2);
    for (int i = 0; i < N_LAYERS; i++) {
        const layer *l = &layers[i];
        if (groups_of(l) != 1)
            continue; /* a depthwise layer has no one equivalent GEMM */
        gemm_ctx g = {l->n * out_dim(l, l->h) * out_dim(l, l->w), l->o, l->k * l->k * l->c, NULL, NULL, NULL};
        g.a = filled((size_t)g.m * g.k, 1);
        g.b = filled((size_t)g.n * g.k, 2);
        g.c = malloc((size_t)g.m * g.n * sizeof(float));
        print_result("sgemm", l, 2, bu_measure(gemm_step, &g, 2, reps));
        free(g.a);
        free(g.b);
        free(g.c);
    }
}

int main(int argc, char **argv)
{
    int reps = bu_reps(20);
    if (argc > 1 && !strcmp(argv[1], "sgemm"))
        run_sgemm(reps);
    else if (argc > 1 && !strcmp(argv[1], "direct")) {
        /* read by the library at its first convolution */
        setenv("MLX_CPU_CONV_WINOGRAD", "0", 1);
        run_lib(reps, "direct", 0);
    } else if (argc > 1 && (!strcmp(argv[1], "wino2") || !strcmp(argv[1], "wino4"))) {
        setenv("MLX_CPU_CONV_WINOGRAD", argv[1][4] == '2' ? "2" : "4", 1);
        run_lib(reps, argv[1], 1);
    } else {
        run_lib(reps, "lib", 0);
    }
    return 0;
}
