/* bench_linalg: linalg.h next to numpy.linalg on the same inputs, measured
 * in the same run.sh round (bench/numpy_ref.py linalg): 1000 solves of
 * 4 x 4 systems in one batched call (float32 and float64), and the full
 * SVD (U, S, Vt) of one 1024 x 1024 float32 matrix. Inputs are built with
 * fill()'s formula on both sides, diagonally dominated so every system is
 * well conditioned. Only the public API is used. */
#include <stdio.h>
#include <stdlib.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

/* lo + (hi - lo) * frac(i * golden + phase), as numpy_ref.py's fill(). */
static void fill(double *v, size_t n, double lo, double hi, double phase)
{
    for (size_t i = 0; i < n; i++) {
        double f = (double)i * 0.6180339887498949 + phase;
        f -= (double)(long long)f;
        v[i] = lo + (hi - lo) * f;
    }
}

typedef struct {
    int which; /* 0 solve, 1 svd */
    mlx_array a, b;
    mlx_stream s;
} la_ctx;

static int run_la(void *arg)
{
    la_ctx *c = arg;
    int rc;
    if (c->which == 0) {
        mlx_array x = mlx_array_new();
        rc = mlx_linalg_solve(&x, c->a, c->b, c->s) || mlx_array_eval(x);
        mlx_array_free(x);
    } else {
        mlx_vector_array usv = mlx_vector_array_new();
        rc = mlx_linalg_svd(&usv, c->a, true, c->s) || mlx_eval(usv);
        mlx_vector_array_free(usv);
    }
    return rc;
}

/* The batch of systems: a[b] = fill + 4 I, b[b] a 4 x 1 column. */
static void make_solve(la_ctx *c, mlx_dtype dt)
{
    enum { B = 1000, N = 4 };
    double *a = malloc(sizeof(double) * B * N * N), *b = malloc(sizeof(double) * B * N);
    fill(a, (size_t)B * N * N, -1, 1, 0.25);
    fill(b, (size_t)B * N, -1, 1, 0.5);
    for (int k = 0; k < B; k++)
        for (int i = 0; i < N; i++)
            a[(k * N + i) * N + i] += 4;
    int as[3] = {B, N, N}, bs[3] = {B, N, 1};
    c->a = mlx_array_new_data(a, as, 3, MLX_FLOAT64);
    c->b = mlx_array_new_data(b, bs, 3, MLX_FLOAT64);
    mlx_astype(&c->a, c->a, dt, c->s);
    mlx_astype(&c->b, c->b, dt, c->s);
    mlx_array_eval(c->a);
    mlx_array_eval(c->b);
    free(a), free(b);
}

int main(void)
{
    la_ctx c = {.s = mlx_default_cpu_stream_new(), .a = mlx_array_new(), .b = mlx_array_new()};
    int threads = mlx_cpu_get_num_threads() < 2 ? mlx_cpu_get_num_threads() : 2;
    mlx_cpu_set_num_threads(threads);
    bu_info("program", "bench_linalg");
    make_solve(&c, MLX_FLOAT64);
    bu_report("mlx", "solve_1000x4x4_f64", threads, bu_measure(run_la, &c, 3, bu_reps(51)));
    mlx_array_free(c.a), mlx_array_free(c.b);
    make_solve(&c, MLX_FLOAT32);
    bu_report("mlx", "solve_1000x4x4_f32", threads, bu_measure(run_la, &c, 3, bu_reps(51)));
    mlx_array_free(c.a), mlx_array_free(c.b);

    enum { M = 1024 };
    double *a = malloc(sizeof(double) * M * M);
    fill(a, (size_t)M * M, -1, 1, 0.125);
    int shape[2] = {M, M};
    c.a = mlx_array_new_data(a, shape, 2, MLX_FLOAT64);
    c.b = mlx_array_new();
    mlx_astype(&c.a, c.a, MLX_FLOAT32, c.s);
    mlx_array_eval(c.a);
    free(a);
    c.which = 1;
    bu_report("mlx", "svd_1024_f32", threads, bu_measure(run_la, &c, 1, bu_reps(5)));
    mlx_array_free(c.a), mlx_array_free(c.b);
    mlx_stream_free(c.s);
    return 0;
}
