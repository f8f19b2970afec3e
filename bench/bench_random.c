/* bench_random: the random generators' speed next to references measured
 * by this program in the same run: writing the same 64 MiB with memset (the
 * memory floor of any 16M float32 generator) and hashing alone (bits).
 * bench/numpy_ref.py times numpy's default_rng() standard_normal and random
 * (float32, 16M) in the same run.sh round; bench/report.py sets the two
 * side by side. Only the public API is used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

#define N16M (16 * 1024 * 1024)

typedef struct {
    int which; /* 0 normal, 1 uniform, 2 bits */
    mlx_array key, lo, hi;
    mlx_stream s;
} rand_ctx;

static int run_rand(void *arg)
{
    rand_ctx *c = arg;
    mlx_array out = mlx_array_new();
    int n = N16M, rc;
    if (c->which == 0)
        rc = mlx_random_normal(&out, &n, 1, MLX_FLOAT32, 0, 1, c->key, c->s);
    else if (c->which == 1)
        rc = mlx_random_uniform(&out, c->lo, c->hi, &n, 1, MLX_FLOAT32, c->key, c->s);
    else
        rc = mlx_random_bits(&out, &n, 1, 4, c->key, c->s);
    rc = rc || mlx_array_eval(out);
    mlx_array_free(out);
    return rc;
}

typedef struct {
    float *p;
} fill_ctx;

static int run_memset(void *arg)
{
    fill_ctx *f = arg;
    memset(f->p, 0x3f, (size_t)N16M * sizeof(float));
    __asm__ volatile("" : : "r"(f->p) : "memory");
    return 0;
}

int main(void)
{
    rand_ctx c = {.key = mlx_array_new(),
                  .lo = mlx_array_new_float(0),
                  .hi = mlx_array_new_float(1),
                  .s = mlx_default_cpu_stream_new()};
    mlx_random_key(&c.key, 7);
    int max_threads = mlx_cpu_get_num_threads();
    fill_ctx f = {malloc((size_t)N16M * sizeof(float))};
    if (!f.p)
        return 1;
    bu_report("ref", "memset_64MiB", 1, bu_measure(run_memset, &f, 2, bu_reps(21)));
    static const char *const names[] = {"random_normal_16M", "random_uniform_16M", "random_bits_16M"};
    for (int t = 1; t <= max_threads && t <= 2; t++) {
        mlx_cpu_set_num_threads(t);
        for (int w = 0; w < 3; w++) {
            c.which = w;
            bu_report("mlx", names[w], t, bu_measure(run_rand, &c, 2, bu_reps(21)));
        }
    }
    mlx_cpu_set_num_threads(max_threads);
    free(f.p);
    mlx_array_free(c.key), mlx_array_free(c.lo), mlx_array_free(c.hi);
    mlx_stream_free(c.s);
    return 0;
}
