/* bench_index: an embedding lookup and its gradient, the indexing work of
 * a language model's input layer. A gather of 4096 rows from a (32000,
 * 1024) float32 table (mlx_gather_single, a row block per index) and the
 * gradient's scatter_add of 4096 rows into zeros of the table's shape
 * (mlx_scatter_add_single). bench/numpy_ref.py's "index" section times
 * np.take(table, idx, axis=0) and np.zeros + np.add.at in the same
 * run.sh round; bench/report.py sets them side by side. Only the public
 * API is used. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

enum { ROWS = 32000, DIM = 1024, LOOKUPS = 4096 };

typedef struct {
    int which; /* 0 gather, 1 scatter_add into zeros */
    mlx_array table, idx, upd;
    mlx_stream s;
} index_ctx;

static int run_index(void *arg)
{
    index_ctx *c = arg;
    mlx_array out = mlx_array_new(), z = mlx_array_new();
    const int sizes[2] = {1, DIM}, shape[2] = {ROWS, DIM};
    int rc;
    if (c->which == 0)
        rc = mlx_gather_single(&out, c->table, c->idx, 0, sizes, 2, c->s);
    else
        rc =
            mlx_zeros(&z, shape, 2, MLX_FLOAT32, c->s) || mlx_scatter_add_single(&out, z, c->idx, c->upd, 0, c->s);
    rc = rc || mlx_array_eval(out);
    mlx_array_free(out);
    mlx_array_free(z);
    return rc;
}

/* The same values numpy_ref.py builds: a table of i * 1e-6 and indices
 * (i * 7919) % ROWS, so both sides touch the same rows. */
int main(void)
{
    float *t = malloc(sizeof(float) * (size_t)ROWS * DIM), *u = malloc(sizeof(float) * (size_t)LOOKUPS * DIM);
    int32_t *ix = malloc(sizeof(int32_t) * LOOKUPS);
    if (!t || !u || !ix)
        return 1;
    for (size_t i = 0; i < (size_t)ROWS * DIM; i++)
        t[i] = (float)(i % 1000003) * 1e-6f;
    for (size_t i = 0; i < (size_t)LOOKUPS * DIM; i++)
        u[i] = (float)(i % 101) * 0.01f;
    for (int i = 0; i < LOOKUPS; i++)
        ix[i] = (int32_t)(((int64_t)i * 7919) % ROWS);
    const int tshape[2] = {ROWS, DIM}, ishape[1] = {LOOKUPS}, ushape[3] = {LOOKUPS, 1, DIM};
    index_ctx c = {.table = mlx_array_new_data(t, tshape, 2, MLX_FLOAT32),
                   .idx = mlx_array_new_data(ix, ishape, 1, MLX_INT32),
                   .upd = mlx_array_new_data(u, ushape, 3, MLX_FLOAT32),
                   .s = mlx_default_cpu_stream_new()};
    free(t), free(u), free(ix);
    bu_info("program", "bench_index");
    int threads = 2;
    if (mlx_cpu_set_num_threads(threads))
        return 1;
    c.which = 0;
    bu_report("mlx", "gather_rows_4096_of_32000x1024", threads, bu_measure(run_index, &c, 3, bu_reps(41)));
    c.which = 1;
    bu_report("mlx", "scatter_add_rows_4096_into_32000x1024", threads, bu_measure(run_index, &c, 2, bu_reps(11)));
    mlx_array_free(c.table);
    mlx_array_free(c.idx);
    mlx_array_free(c.upd);
    mlx_stream_free(c.s);
    return 0;
}
