/* Owns Gather (MLX's general gather, behind mlx_gather, gather_single and
 * slice_dynamic): its shape rule, its evaluation and its derivatives. For
 * every position of the (broadcast) index arrays one block of a is copied
 * out; the blocks' starts come from the indices by mc_block_place
 * (prims_scatter.h), which Scatter uses too, so Gather's vjp (a
 * scatter-add) lands exactly where Gather read, for any index value. */
#include <string.h>

#include "graph/build.h"
#include "graph/index_read.h"
#include "graph/nd_walk.h"
#include "graph/prims_scatter.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"

/* ---- shape rule ---- */

static int gather_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_gather_params *p = params;
    const mc_array *a = in[0];
    if (n != 1 + p->nidx || p->nidx > a->ndim)
        return mc_error("[%s] Gather of an array with %d dimensions got %d index arrays.", fn, a->ndim, n - 1);
    const mc_array *i0 = p->nidx ? in[1] : NULL;
    for (int j = 0; j < p->nidx; j++) {
        const mc_array *ij = in[1 + j];
        if (!mc_dtype_is_integer(ij->dtype) || ij->dtype != i0->dtype || ij->ndim != i0->ndim ||
            memcmp(ij->shape, i0->shape, sizeof(int) * (size_t)ij->ndim) != 0)
            return mc_error("[%s] Gather needs index arrays of one integer dtype and one shape.", fn);
        if (p->axes[j] < 0 || p->axes[j] >= a->ndim)
            return mc_error("[%s] Axes don't match array dimensions.", fn);
    }
    int ind = i0 ? i0->ndim : 0;
    if (ind + a->ndim > MC_MAX_NDIM)
        return mc_error("[%s] The result would have %d dimensions, more than %d.", fn, ind + a->ndim, MC_MAX_NDIM);
    for (int d = 0; d < a->ndim; d++)
        if (p->slice_sizes[d] < 0 || (a->size && p->slice_sizes[d] > a->shape[d]))
            return mc_error("[%s] Slice size %d is not in [0, %d] on axis %d.", fn, p->slice_sizes[d], a->shape[d],
                            d);
    out->dtype = a->dtype;
    out->ndim = ind + a->ndim;
    if (ind)
        memcpy(out->shape, i0->shape, sizeof(int) * (size_t)ind);
    memcpy(out->shape + ind, p->slice_sizes, sizeof(int) * (size_t)a->ndim);
    return 0;
}

/* ---- evaluation ---- */

/* The element offset in a (strides in elements) of the block at index
 * position `pos` (multi-index m over the index shape). */
static int64_t block_offset(mc_array *const *idx, int nidx, const int *axes, const int *m, int ind,
                            const int *shape, const int64_t *strides, const int *block)
{
    int64_t off = 0;
    for (int j = 0; j < nidx; j++) {
        int64_t at = 0;
        for (int d = 0; d < ind; d++)
            at += (int64_t)m[d] * idx[j]->strides[d];
        int64_t v = mc_index_read(idx[j]->data, at, idx[j]->dtype);
        off += mc_block_place(v, shape[axes[j]], block[axes[j]]) * strides[axes[j]];
    }
    return off;
}

/* The number of index positions one step of axis d - 1 spans: the
 * product of shape[d..ind). */
static size_t positions_per_step(const int *shape, int d, int ind)
{
    size_t r = 1;
    for (int k = d; k < ind; k++)
        r *= (size_t)shape[k];
    return r;
}

/* Copies one block: rows of the walk, element by element, by size. */
#define COPY_ROWS(T)                                      \
    for (size_t r = 0; r < rows; r++, mc_walk_next(&w)) { \
        const T *src = (const T *)ab + base + w.off[0];   \
        T *dst = (T *)ob + obase + w.off[1];              \
        if (sa == 1 && so == 1)                           \
            memcpy(dst, src, sizeof(T) * (size_t)len);    \
        else                                              \
            for (int e = 0; e < len; e++)                 \
                dst[e * so] = src[e * sa];                \
    }

typedef struct gather_job {
    mc_array *out;
    mc_array *const *in;
    const mc_gather_params *p;
    int64_t block;
} gather_job;

/* Copies the blocks of index positions [lo, hi): each its own output
 * block, so ranges run in parallel. */
static void gather_range(void *ctx, size_t lo, size_t hi)
{
    const gather_job *j = ctx;
    mc_array *a = j->in[0], *out = j->out;
    const mc_gather_params *p = j->p;
    int ind = out->ndim - a->ndim;
    size_t isz = mc_dtype_size(a->dtype);
    const char *ab = a->data;
    char *ob = out->data;
    int m[MC_MAX_NDIM] = {0};
    for (int d = 0; d < ind; d++)
        m[d] = (int)((lo / positions_per_step(out->shape, d + 1, ind)) % (size_t)out->shape[d]);
    for (size_t pos = lo; pos < hi; pos++) {
        int64_t base = block_offset(j->in + 1, p->nidx, p->axes, m, ind, a->shape, a->strides, p->slice_sizes);
        int64_t obase = (int64_t)pos * j->block;
        mc_walk w;
        mc_walk_init(&w, a->ndim, p->slice_sizes, 2);
        for (int d = 0; d < a->ndim; d++) {
            w.strides[0][d] = a->strides[d];
            w.strides[1][d] = out->strides[ind + d];
        }
        int last = w.ndim - 1;
        int64_t sa = w.strides[0][last], so = w.strides[1][last];
        int len = mc_walk_row_len(&w);
        size_t rows = mc_walk_rows(&w);
        switch (isz) {
        case 1: COPY_ROWS(uint8_t) break;
        case 2: COPY_ROWS(uint16_t) break;
        case 4: COPY_ROWS(uint32_t) break;
        default: COPY_ROWS(uint64_t) break;
        }
        for (int d = ind - 1; d >= 0; d--) {
            if (++m[d] < out->shape[d])
                break;
            m[d] = 0;
        }
    }
}

static int gather_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_gather_params *p = params;
    if (mc_array_alloc_data(out, "gather"))
        return 1;
    if (out->size == 0)
        return 0;
    int64_t block = 1;
    for (int d = 0; d < in[0]->ndim; d++)
        block *= p->slice_sizes[d];
    gather_job j = {out, in, p, block};
    size_t npos = out->size / (size_t)block;
    /* about 64 KiB of copying per piece at least */
    size_t grain = (size_t)(16384 / block) + 1;
    mc_parallel_for(npos, grain, gather_range, &j);
    return 0;
}

/* ---- derivatives (MLX's Gather::vjp and jvp) ---- */

/* a's cotangent is the cotangent scatter-added into zeros where each
 * block was read (repeated indices accumulate); the indices get zeros, as
 * in MLX. */
static int gather_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                      const char *fn)
{
    const mc_gather_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g[1 + MC_MAX_NDIM] = {NULL};
    for (int k = 0; k < nargs; k++) {
        mc_array *x = node->inputs[argnums[k]];
        if (argnums[k] > 0)
            g[k] = mc_gb_zeros_like(&s, x);
        else
            g[k] = mc_gb_scatter(&s, mc_gb_zeros_like(&s, x), node->inputs + 1, p->nidx, p->axes, cot,
                                 MC_SCATTER_SUM);
    }
    bool failed = s.failed;
    for (int k = 0; k < nargs && !failed; k++)
        vjps[k] = mc_array_retain(g[k]);
    mc_gb_end(&s);
    return failed ? 1 : 0;
}

/* Linear in a: the same gather of its tangent. */
static mc_array *gather_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_gather_params *p = node->params;
    if (nargs != 1 || argnums[0] != 0) {
        mc_error("[%s] Cannot calculate JVP with respect to indices.", fn);
        return NULL;
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, mc_gb_gather(&s, tans[0], node->inputs + 1, p->nidx, p->axes, p->slice_sizes));
}

/* ---- vmap (MLX's Gather::vmap) ---- */

/* A batched a at unbatched indices: the block spans the whole batch axis,
 * which lands after the index axes. Batched indices: every index array
 * gets its batch first; a batched a too, with one more index array, the
 * batch element's own number, on its batch axis (a block of 1 there). */
static int gather_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn)
{
    mc_gather_params q;
    mc_vmap_params(&q, sizeof q, node);
    int n = node->n_inputs, ind = q.nidx ? node->inputs[1]->ndim : 0, a_nd = node->inputs[0]->ndim;
    bool idx_batched = false;
    for (int j = 1; j < n; j++)
        idx_batched |= axes[j] >= 0;
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    if (!idx_batched) {
        int ax = axes[0];
        for (int j = 0; j < q.nidx; j++)
            q.axes[j] += q.axes[j] >= ax;
        memmove(q.slice_sizes + ax + 1, q.slice_sizes + ax, sizeof(int) * (size_t)(a_nd - ax));
        q.slice_sizes[ax] = in[0]->shape[ax];
        *out = mc_node_new(fn, MC_PRIM_GATHER, in, n, &q, sizeof q);
        *out_axis = ind + ax;
        return *out ? 0 : 1;
    }
    int b = mc_vmap_size(in, axes, n), ishape[MC_MAX_NDIM], oshape[MC_MAX_NDIM];
    mlx_dtype dt = mc_vmap_index_dtype(node->inputs[1]->dtype);
    ishape[0] = oshape[0] = b;
    memcpy(ishape + 1, node->inputs[1]->shape, sizeof(int) * (size_t)ind);
    memcpy(oshape + 1, node->shape, sizeof(int) * (size_t)node->ndim);
    mc_array *args[2 + MC_MAX_NDIM];
    mc_gb s;
    mc_gb_begin(&s, fn);
    for (int j = 1; j < n; j++)
        args[j] = mc_gb_astype(&s, mc_gb_vmap_front(&s, in[j], axes[j], b), dt);
    mc_array *r;
    if (axes[0] < 0) {
        args[0] = in[0];
        r = mc_gb_hold(&s, s.failed ? NULL : mc_node_new(fn, MC_PRIM_GATHER, args, n, &q, sizeof q));
    } else {
        args[0] = mc_gb_vmap_front(&s, in[0], axes[0], b);
        args[n] = mc_gb_vmap_batch_index(&s, ind + 1, ishape, dt);
        for (int j = 0; j < q.nidx; j++)
            q.axes[j]++;
        q.axes[q.nidx++] = 0;
        memmove(q.slice_sizes + 1, q.slice_sizes, sizeof(int) * (size_t)a_nd);
        q.slice_sizes[0] = 1;
        r = mc_gb_hold(&s, s.failed ? NULL : mc_node_new(fn, MC_PRIM_GATHER, args, n + 1, &q, sizeof q));
        /* (B, I..., 1, block...): the batch's block of 1 dropped */
        r = mc_gb_reshape(&s, r, node->ndim + 1, oshape);
    }
    *out = mc_gb_finish_ref(&s, r);
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_gather = {
    .name = "Gather",
    .arity = MC_ARITY_ANY,
    .infer = gather_infer,
    .eval = gather_eval,
    .vjp = gather_vjp,
    .jvp = gather_jvp,
    .vmap = gather_vmap,
};
