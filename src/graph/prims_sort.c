/* Owns the Sort, ArgSort, Partition and ArgPartition primitives: one row
 * per input position off the axis, sorted or partitioned by the kernels of
 * simd/sort.h (which read the input through its strides, so a transposed,
 * sliced or broadcast input is never copied first). The output is
 * row-major and never takes the input's buffer (the kernels read the whole
 * row after writing part of it). Rows are split over the pool in one
 * contiguous block per thread, each block with scratch of its own; an
 * empty array has no rows and yields the empty result (MLX's CPU sort
 * divides by the zero axis size there). */
#include <string.h>

#include "graph/build.h"
#include "graph/prims_scatter.h"
#include "graph/prims_sort.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/sort.h"

enum { SORT_VALUES, SORT_INDICES, PART_VALUES, PART_INDICES };

static int sort_infer_as(mc_meta *out, mc_array *const *in, const void *params, const char *fn, int kind)
{
    const mc_sort_params *p = params;
    const mc_array *x = in[0];
    if (p->axis < 0 || p->axis >= x->ndim)
        return mc_error("[%s] Received invalid axis %d for array with %d dimensions.", fn, p->axis, x->ndim);
    if (kind >= PART_VALUES && x->shape[p->axis] > 0 && (p->kth < 0 || p->kth >= x->shape[p->axis]))
        return mc_error("[%s] Received invalid kth %d along axis %d.", fn, p->kth, p->axis);
    out->dtype = kind == SORT_INDICES || kind == PART_INDICES ? MLX_UINT32 : x->dtype;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    return 0;
}

#define SORT_INFER(NAME, KIND)                                                                    \
    static int NAME(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn) \
    {                                                                                             \
        (void)n;                                                                                  \
        return sort_infer_as(out, in, params, fn, KIND);                                          \
    }
SORT_INFER(sort_infer, SORT_VALUES)
SORT_INFER(argsort_infer, SORT_INDICES)
SORT_INFER(partition_infer, PART_VALUES)
SORT_INFER(argpartition_infer, PART_INDICES)
#undef SORT_INFER

typedef struct sort_job {
    const mc_array *x;
    int axis, kind;
    size_t rows, n, inner, blocks, scratch_bytes;
    size_t kth, reps;
    char *y;
    size_t ysz;
    unsigned char *scratch; /* blocks * scratch_bytes */
} sort_job;

/* Runs blocks [t, t_end), block t being rows [rows * t / blocks,
 * rows * (t + 1) / blocks): row r is the r-th position off the axis in
 * row-major order, so its output starts at (r / inner) * n * inner +
 * r % inner with stride inner. */
static void sort_block(void *ctx, size_t t, size_t t_end)
{
    sort_job *j = ctx;
    const mc_array *x = j->x;
    size_t esz = mc_dtype_size(x->dtype);
    for (; t < t_end; t++) {
        void *scratch = j->scratch + t * j->scratch_bytes;
        size_t b = j->rows * t / j->blocks, e = j->rows * (t + 1) / j->blocks;
        for (size_t r = b; r < e; r++) {
            /* the input offset of row r: its coordinates off the axis */
            int64_t off = 0;
            size_t rem = r;
            for (int d = x->ndim - 1; d >= 0; d--) {
                if (d == j->axis)
                    continue;
                size_t c = rem % (size_t)x->shape[d];
                rem /= (size_t)x->shape[d];
                off += (int64_t)c * x->strides[d];
            }
            const char *src = (const char *)x->data + off * (int64_t)esz;
            char *dst = j->y + ((r / j->inner) * j->n * j->inner + r % j->inner) * j->ysz;
            int64_t ss = x->strides[j->axis], ds = (int64_t)j->inner;
            bool idx = j->kind == SORT_INDICES || j->kind == PART_INDICES;
            if (j->kind <= SORT_INDICES)
                mc_sort_row(x->dtype, idx, src, ss, dst, ds, j->n, scratch);
            else
                mc_partition_row(x->dtype, idx, src, ss, dst, ds, j->n, j->kth, scratch);
            for (size_t k = 1; k < j->reps; k++)
                mc_partition_row(x->dtype, false, dst, ds, dst, ds, j->n, j->kth, scratch);
        }
    }
}

/* How many times MLX's Partition selects within each row of x. MLX
 * copies an input that is dense apart from broadcast axes (and not
 * broadcast along the axis) with its strides kept, so the output aliases
 * the broadcast rows and each one is partitioned once per row aliasing it;
 * nth_element run again on its own output may move elements. Dense means:
 * the axes of size > 1 and non-zero stride pack without gaps. */
static size_t mlx_partition_reps(const mc_array *x, int axis)
{
    if (x->shape[axis] > 1 && x->strides[axis] == 0)
        return 1;
    int64_t st[MC_MAX_NDIM];
    int64_t sh[MC_MAX_NDIM];
    int m = 0;
    size_t reps = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (x->shape[d] <= 1)
            continue;
        if (x->strides[d] == 0) {
            reps *= (size_t)x->shape[d];
            continue;
        }
        if (x->strides[d] < 0)
            return 1;
        /* insertion by stride, ascending */
        int i = m++;
        for (; i > 0 && st[i - 1] > x->strides[d]; i--) {
            st[i] = st[i - 1];
            sh[i] = sh[i - 1];
        }
        st[i] = x->strides[d];
        sh[i] = x->shape[d];
    }
    int64_t want = 1;
    for (int i = 0; i < m; i++) {
        if (st[i] != want)
            return 1;
        want = st[i] * sh[i];
    }
    return reps;
}

/* Work below this many elements stays on the calling thread. */
enum { SORT_GRAIN = 1 << 15 };

static int sort_eval_as(mc_array *out, mc_array *const *in, const void *params, int kind, const char *fn)
{
    const mc_sort_params *p = params;
    const mc_array *x = in[0];
    if (mc_out_alloc(out, NULL, 0, fn))
        return 1;
    if (out->size == 0)
        return 0;
    sort_job j = {.x = x,
                  .axis = p->axis,
                  .kind = kind,
                  .n = (size_t)x->shape[p->axis],
                  .inner = 1,
                  .kth = (size_t)p->kth,
                  .y = out->data,
                  .ysz = mc_dtype_size(out->dtype)};
    for (int d = p->axis + 1; d < x->ndim; d++)
        j.inner *= (size_t)x->shape[d];
    j.rows = x->size / j.n;
    j.reps = kind == PART_VALUES ? mlx_partition_reps(x, p->axis) : 1;
    size_t threads = out->size < SORT_GRAIN ? 1 : (size_t)mc_pool_threads();
    j.blocks = j.rows < threads ? j.rows : threads;
    j.scratch_bytes = (mc_sort_scratch_bytes(x->dtype, j.n) + 63) / 64 * 64;
    size_t total = j.blocks * j.scratch_bytes;
    j.scratch = mc_data_alloc(total);
    if (!j.scratch)
        return mc_error("[%s] Failed to allocate %zu bytes of scratch.", fn, total);
    mc_parallel_for(j.blocks, 1, sort_block, &j);
    mc_data_free(j.scratch, total);
    return 0;
}

#define SORT_EVAL(NAME, KIND, FN)                                                  \
    static int NAME(mc_array *out, mc_array *const *in, int n, const void *params) \
    {                                                                              \
        (void)n;                                                                   \
        return sort_eval_as(out, in, params, KIND, FN);                            \
    }
SORT_EVAL(sort_eval, SORT_VALUES, "sort")
SORT_EVAL(argsort_eval, SORT_INDICES, "argsort")
SORT_EVAL(partition_eval, PART_VALUES, "partition")
SORT_EVAL(argpartition_eval, PART_INDICES, "argpartition")
#undef SORT_EVAL

/* ---- derivatives: Sort and Partition move each element to where their
 * index twin (ArgSort, ArgPartition, same params) says it came from ----
 *
 * The jvp gathers the tangent by those indices, as MLX. The vjp puts the
 * cotangent back where each element came from (put_along_axis into zeros:
 * MLX's Partition vjp; MLX's Sort vjp gathers instead, which is not the
 * transpose of a permutation, so Sort's here is Partition's). */

static mc_array *source_indices(mc_gb *s, mc_array *node)
{
    int twin = node->prim == MC_PRIM_SORT ? MC_PRIM_ARGSORT : MC_PRIM_ARGPARTITION;
    mc_array *x = node->inputs[0];
    return mc_gb_hold(s, mc_node_new(s->fn, twin, &x, 1, node->params, node->params_size));
}

static int sorted_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_sort_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *zeros = mc_gb_zeros_like(&s, node->inputs[0]);
    return mc_vjp_store(vjps, 0, &s,
                        mc_gb_scatter_axis(&s, zeros, source_indices(&s, node), cot, p->axis, MC_SCATTER_NONE));
}

static mc_array *sorted_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_sort_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, mc_gb_gather_axis(&s, tans[0], source_indices(&s, node), p->axis, 1));
}

/* vmap (all four): the batch first, the sorted axis shifted past it. */
static int sort_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    mc_sort_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.axis++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_sort = {.name = "Sort",
                                   .arity = 1,
                                   .infer = sort_infer,
                                   .eval = sort_eval,
                                   .vjp = sorted_vjp,
                                   .jvp = sorted_jvp,
                                   .vmap = sort_vmap,
};
const mc_prim_info mc_prim_argsort = {.name = "ArgSort",
                                      .arity = 1,
                                      .infer = argsort_infer,
                                      .eval = argsort_eval,
                                      .vjp = mc_vjp_zeros,
                                      .jvp = mc_jvp_zeros,
                                      .vmap = sort_vmap,
};
const mc_prim_info mc_prim_partition = {.name = "Partition",
                                        .arity = 1,
                                        .infer = partition_infer,
                                        .eval = partition_eval,
                                        .vjp = sorted_vjp,
                                        .jvp = sorted_jvp,
                                        .vmap = sort_vmap,
};
const mc_prim_info mc_prim_argpartition = {.name = "ArgPartition",
                                           .arity = 1,
                                           .infer = argpartition_infer,
                                           .eval = argpartition_eval,
                                           .vjp = mc_vjp_zeros,
                                           .jvp = mc_jvp_zeros,
                                           .vmap = sort_vmap,
};
