/* bench_vmap: vmap of a function over a batch of 64 against the loop that
 * the per-element rule used to build (the function on each element, the
 * results stacked), both built and evaluated per call. Four functions:
 * an embedding lookup (take of a (8000, 256) table, unbatched, at 128
 * token ids per element), rms_norm of (32, 512) rows, a conv1d of one
 * (128, 32) sequence with a (64, 3, 32) kernel, float32, and a normal
 * draw of 4096 float32 per key over 64 keys (one node for the batch). The loop side
 * prints as side=loop under the same name; bench/report.py divides.
 * `bench_vmap FIGURE SIDE` runs one of them (for perf stat). Only the
 * public API is used. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/mlx.h"

#include "bench_util.h"

enum { B = 64, NIN = 2 };

typedef int (*fn2)(mlx_array *out, const mlx_array *x, mlx_stream s);

typedef struct {
    const char *name;
    fn2 f;
    mlx_array x[NIN];
    int axes[NIN]; /* -1: not batched */
    bool loop;
    mlx_stream s;
} vctx;

static int f_take(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_take_axis(o, x[0], x[1], 0, s); }

static int f_rms(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_rms_norm(o, x[0], x[1], 1e-5f, s);
}

static int f_conv(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv1d(o, x[0], x[1], 1, 1, 1, 1, s);
}

/* x[0] is the key; x[1] (unbatched) is not read */
static int f_normal(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_random_normal(o, (const int[]){4096}, 1, MLX_FLOAT32, 0.0f, 1.0f, x[0], s);
}

static int apply(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    vctx *c = payload;
    mlx_array x[NIN] = {mlx_array_new(), mlx_array_new()}, y = mlx_array_new();
    int rc = mlx_vector_array_get(&x[0], in, 0) || mlx_vector_array_get(&x[1], in, 1) || c->f(&y, x, c->s) ||
             mlx_vector_array_set_value(res, y);
    mlx_array_free(x[0]);
    mlx_array_free(x[1]);
    mlx_array_free(y);
    return rc;
}

static int run_vmap(vctx *c, mlx_array *out)
{
    mlx_closure f = mlx_closure_new_func_payload(apply, c, NULL);
    mlx_vector_array in = mlx_vector_array_new_data(c->x, NIN), s_in = mlx_vector_array_new(),
                     s_out = mlx_vector_array_new(), outs = mlx_vector_array_new();
    int out_axis = 0;
    int rc = mlx_detail_vmap_trace(&s_in, &s_out, f, in, c->axes, NIN) ||
             mlx_detail_vmap_replace(&outs, in, s_in, s_out, c->axes, NIN, &out_axis, 1) ||
             mlx_vector_array_get(out, outs, 0);
    mlx_vector_array_free(in);
    mlx_vector_array_free(s_in);
    mlx_vector_array_free(s_out);
    mlx_vector_array_free(outs);
    mlx_closure_free(f);
    return rc;
}

/* f on each element (a batched input's slice i on its batch axis). */
static int run_loop(vctx *c, mlx_array *out)
{
    mlx_vector_array parts = mlx_vector_array_new();
    int rc = 0;
    for (int i = 0; i < B && !rc; i++) {
        mlx_array el[NIN], y = mlx_array_new(), idx = mlx_array_new_int(i);
        for (int k = 0; k < NIN; k++) {
            el[k] = mlx_array_new();
            rc = rc || (c->axes[k] < 0 ? mlx_array_set(&el[k], c->x[k])
                                       : mlx_take_axis(&el[k], c->x[k], idx, c->axes[k], c->s));
        }
        rc = rc || c->f(&y, el, c->s) || mlx_vector_array_append_value(parts, y);
        for (int k = 0; k < NIN; k++)
            mlx_array_free(el[k]);
        mlx_array_free(y);
        mlx_array_free(idx);
    }
    rc = rc || mlx_stack(out, parts, c->s);
    mlx_vector_array_free(parts);
    return rc;
}

static int run(void *arg)
{
    vctx *c = arg;
    mlx_array out = mlx_array_new();
    int rc = (c->loop ? run_loop(c, &out) : run_vmap(c, &out)) || mlx_array_eval(out);
    mlx_array_free(out);
    return rc;
}

static mlx_array filled(const int *shape, int ndim, mlx_dtype dt, int mod, float scale)
{
    size_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= (size_t)shape[d];
    if (dt == MLX_INT32) {
        int32_t *v = malloc(sizeof *v * n);
        for (size_t i = 0; i < n; i++)
            v[i] = (int32_t)((i * 7919) % (size_t)mod);
        mlx_array a = mlx_array_new_data(v, shape, ndim, dt);
        free(v);
        return a;
    }
    float *v = malloc(sizeof *v * n);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % (size_t)mod) * scale - 0.5f;
    mlx_array a = mlx_array_new_data(v, shape, ndim, dt);
    free(v);
    return a;
}

/* argv[1], argv[2]: only the figure whose name contains it, only that
 * side (mlx or loop), for counting one side's instructions with perf. */
static const char *only_fig, *only_side;

static void measure(vctx *c, int reps)
{
    if (only_fig && !strstr(c->name, only_fig))
        return;
    for (int loop = 0; loop < 2; loop++) {
        if (only_side && strcmp(only_side, loop ? "loop" : "mlx") != 0)
            continue;
        c->loop = loop;
        bu_report(loop ? "loop" : "mlx", c->name, 2, bu_measure(run, c, 2, bu_reps(reps)));
    }
}

int main(int argc, char **argv)
{
    only_fig = argc > 1 ? argv[1] : NULL;
    only_side = argc > 2 ? argv[2] : NULL;
    mlx_stream s = mlx_default_cpu_stream_new();
    vctx take = {.name = "vmap_take_b64",
                 .f = f_take,
                 .x = {filled((const int[]){8000, 256}, 2, MLX_FLOAT32, 1009, 1e-3f),
                       filled((const int[]){B, 128}, 2, MLX_INT32, 8000, 0)},
                 .axes = {-1, 0},
                 .s = s};
    vctx rms = {.name = "vmap_rms_norm_b64",
                .f = f_rms,
                .x = {filled((const int[]){B, 32, 512}, 3, MLX_FLOAT32, 1013, 1e-3f),
                      filled((const int[]){512}, 1, MLX_FLOAT32, 17, 0.1f)},
                .axes = {0, -1},
                .s = s};
    vctx conv = {.name = "vmap_conv1d_b64",
                 .f = f_conv,
                 .x = {filled((const int[]){B, 1, 128, 32}, 4, MLX_FLOAT32, 1019, 1e-3f),
                       filled((const int[]){64, 3, 32}, 3, MLX_FLOAT32, 23, 0.05f)},
                 .axes = {0, -1},
                 .s = s};
    mlx_array seed = mlx_array_new(), keys = mlx_array_new();
    if (mlx_random_key(&seed, 7) || mlx_random_split_num(&keys, seed, B, s) || mlx_array_eval(keys))
        return 1;
    mlx_array_free(seed);
    vctx normal = {.name = "vmap_random_normal_b64",
                   .f = f_normal,
                   .x = {keys, filled((const int[]){1}, 1, MLX_FLOAT32, 1, 1.0f)},
                   .axes = {0, -1},
                   .s = s};
    bu_info("program", "bench_vmap");
    measure(&take, 200);
    measure(&rms, 200);
    measure(&conv, 100);
    measure(&normal, 200);
    vctx *all[4] = {&take, &rms, &conv, &normal};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < NIN; k++)
            mlx_array_free(all[i]->x[k]);
    mlx_stream_free(s);
    return 0;
}
