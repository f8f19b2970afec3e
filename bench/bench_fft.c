/* bench_fft: fft.h's speed, for bench/numpy_ref.py's "fft" section to set
 * numpy.fft beside in the same run.sh round: one complex64 transform of
 * 2^20 points, a batch of 1000 transforms of 1000 points (not a power of
 * two) along the last axis and along the first, and rfft of 2^20 reals.
 * Inputs are made once (the formula of numpy_ref.py's fill); each figure
 * times the transform and its evaluation. Only the public API is used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

typedef struct {
    mlx_array x;
    int n, axis, real;
    mlx_stream s;
} fft_ctx;

static int run_fft(void *arg)
{
    fft_ctx *c = arg;
    mlx_array out = mlx_array_new();
    int rc =
        c->real ? mlx_fft_rfft(&out, c->x, c->n, c->axis, c->s) : mlx_fft_fft(&out, c->x, c->n, c->axis, c->s);
    rc = rc || mlx_array_eval(out);
    mlx_array_free(out);
    return rc;
}

/* lo + (hi - lo) * frac(i * golden + phase), as numpy_ref.py's fill(). */
static float *fill(size_t n, double phase)
{
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; v && i < n; i++) {
        double f = (double)i * 0.6180339887498949 + phase;
        v[i] = (float)(-1.0 + 2.0 * (f - floor(f)));
    }
    return v;
}

int main(void)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    int max_threads = mlx_cpu_get_num_threads();
    size_t big = (size_t)1 << 20;
    float *re = fill(2 * big, 0.0);
    if (!re)
        return 1;
    int n1 = (int)big, sq[2] = {1000, 1000};
    /* interleaved pairs: the complex64 layout */
    mlx_array c1 = mlx_array_new_data(re, &n1, 1, MLX_COMPLEX64);
    mlx_array cb = mlx_array_new_data(re, sq, 2, MLX_COMPLEX64);
    mlx_array r1 = mlx_array_new_data(re, &n1, 1, MLX_FLOAT32);
    struct {
        const char *name;
        fft_ctx c;
        int reps;
    } figs[] = {
        {"fft_c64_2p20", {c1, n1, 0, 0, s}, 21},
        {"fft_c64_1000x1000_last", {cb, 1000, 1, 0, s}, 21},
        {"fft_c64_1000x1000_first", {cb, 1000, 0, 0, s}, 21},
        {"rfft_f32_2p20", {r1, n1, 0, 1, s}, 21},
    };
    for (int t = 1; t <= max_threads && t <= 2; t++) {
        mlx_cpu_set_num_threads(t);
        for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++)
            bu_report("mlx", figs[k].name, t, bu_measure(run_fft, &figs[k].c, 2, bu_reps(figs[k].reps)));
    }
    mlx_cpu_set_num_threads(max_threads);
    mlx_array_free(c1), mlx_array_free(cb), mlx_array_free(r1);
    mlx_stream_free(s);
    free(re);
    return 0;
}
