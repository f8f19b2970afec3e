/* all_sum across the processes of an mpirun job against MPI_Allreduce
 * called directly, in the same run: float32 buffers of 1 KiB, 1 MiB and
 * 64 MiB. Each repetition starts after a barrier and rank 0 reports the
 * median of the slowest rank's times. Our all_sum is measured with the
 * agreement check (the default) and without it (MLX_CPU_MPI_CHECK=0;
 * a small all_sum is checked either way, at no cost). The variants take
 * turns within each repetition, so that load from other programs falls on
 * all of them alike. For 1 KiB, one lazy op without communication (a
 * negation and its eval) gives the floor of any op's per-call cost.
 *
 *   mpirun -np 2 build/bench/bench_distributed     (bench/run_distributed.sh) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench_util.h"
#include "mlx/c/mlx.h"

static int rank;

/* A variant: its function, and MLX_CPU_MPI_CHECK's value for it (set
 * before its barrier, outside the time). */
typedef struct {
    int (*fn)(void *);
    const char *check;
} variant;

/* Times the k variants vs over reps rounds, taking turns, each call after
 * a barrier; the slowest rank's time counts. st[i] is vs[i]'s. */
static int measure(const variant *vs, void *ctx, int k, int reps, bu_stat *st)
{
    int64_t *t = malloc(sizeof(int64_t) * (size_t)reps * (size_t)k);
    for (int j = 0; j < k; j++) {
        setenv("MLX_CPU_MPI_CHECK", vs[j].check, 1);
        for (int i = 0; i < 3; i++)
            vs[j].fn(ctx);
    }
    for (int i = 0; i < reps; i++)
        for (int j = 0; j < k; j++) {
            setenv("MLX_CPU_MPI_CHECK", vs[j].check, 1);
            MPI_Barrier(MPI_COMM_WORLD);
            int64_t t0 = bu_now_ns();
            if (vs[j].fn(ctx)) {
                free(t);
                return 1;
            }
            int64_t d = bu_now_ns() - t0, worst;
            MPI_Allreduce(&d, &worst, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
            t[(size_t)j * (size_t)reps + (size_t)i] = worst;
        }
    for (int j = 0; j < k; j++)
        st[j] = bu_summarize(t + (size_t)j * (size_t)reps, reps);
    free(t);
    return 0;
}

typedef struct {
    size_t n;
    float *in, *out;
    mlx_array x;
    mlx_distributed_group g;
    mlx_stream s;
} ctx_t;

static int raw_allreduce(void *p)
{
    ctx_t *c = p;
    return MPI_Allreduce(c->in, c->out, (int)c->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int our_all_sum(void *p)
{
    ctx_t *c = p;
    mlx_array r = mlx_array_new();
    int rc = mlx_distributed_all_sum(&r, c->x, c->g, c->s) || mlx_array_eval(r);
    mlx_array_free(r);
    return rc;
}

static int lazy_op_floor(void *p)
{
    ctx_t *c = p;
    mlx_array r = mlx_array_new();
    int rc = mlx_negative(&r, c->x, c->s) || mlx_array_eval(r);
    mlx_array_free(r);
    return rc;
}

int main(void)
{
    mlx_distributed_group g = mlx_distributed_init(true, "mpi");
    if (!g.ctx)
        return 1;
    rank = mlx_distributed_group_rank(g);
    int size = mlx_distributed_group_size(g);
    const size_t bytes[] = {1024, 1 << 20, 64 << 20};
    const char *names[] = {"1KiB", "1MiB", "64MiB"};
    const int reps[] = {2000, 200, 10};
    char threads[16];
    snprintf(threads, sizeof threads, "%d", size);
    if (rank == 0)
        bu_info("ranks", threads);
    for (int k = 0; k < 3; k++) {
        ctx_t c = {.n = bytes[k] / sizeof(float), .g = g, .s = mlx_default_cpu_stream_new()};
        c.in = malloc(bytes[k]);
        c.out = malloc(bytes[k]);
        for (size_t i = 0; i < c.n; i++)
            c.in[i] = (float)(i % 7);
        int shape[1] = {(int)c.n};
        c.x = mlx_array_new_data(c.in, shape, 1, MLX_FLOAT32);
        int r = bu_reps(reps[k]);
        char name[64];
        const variant vs[] = {{raw_allreduce, "1"}, {our_all_sum, "1"}, {our_all_sum, "0"}, {lazy_op_floor, "1"}};
        int nf = k == 0 ? 4 : 3;
        bu_stat st[4];
        if (measure(vs, &c, nf, r, st))
            return 1;
        if (rank == 0) {
            snprintf(name, sizeof name, "all_sum_%s", names[k]);
            bu_report("mpi_allreduce", name, size, st[0]);
            bu_report("mlx-cpu", name, size, st[1]);
            snprintf(name, sizeof name, "all_sum_%s_nocheck", names[k]);
            bu_report("mlx-cpu", name, size, st[2]);
            if (nf == 4) {
                snprintf(name, sizeof name, "lazy_op_floor_%s", names[k]);
                bu_report("mlx-cpu", name, size, st[3]);
            }
        }
        mlx_array_free(c.x);
        mlx_stream_free(c.s);
        free(c.in);
        free(c.out);
    }
    return 0;
}
