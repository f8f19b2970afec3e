/* Owns the random primitives: RandomBits (MLX's), RandomDist (MLX's
 * distributions fused into one pass over the key's bits),
 * RandomPermutation (argsort of bits). The generation is counter-based, so
 * each output splits into counter ranges that the pool runs in parallel
 * with the same bytes as one pass (simd/random.h). */
#include <stdlib.h>
#include <string.h>

#include "graph/build.h"
#include "graph/prims_random.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/random.h"

/* Counters per pool chunk: 8K counters are 64 KB of float32 output. */
enum { RANDOM_GRAIN = 8192 };

static int check_key(mc_array *key, const char *fn)
{
    char buf[64];
    if (key->dtype != MLX_UINT32)
        return mc_error("[%s] Expected key type uint32 but received %s.", fn, mc_dtype_name(key->dtype));
    if (key->ndim != 1 || key->shape[0] != 2)
        return mc_error("[%s] Expected key shape (2) but received %s.", fn,
                        mc_shape_str(buf, sizeof buf, key->ndim, key->shape));
    return 0;
}

static void read_key(const mc_array *key, uint32_t k[2])
{
    const uint32_t *d = key->data;
    k[0] = d[0];
    k[1] = d[key->strides[0]];
}

/* -- gradients -------------------------------------------------------------
 * RandomBits and RandomPermutation: the key is uint32 and the output
 * integer, so zeros (mc_vjp_zeros), as for ArgReduce. RandomDist's uniform
 * and normal are linear in their parameters, as MLX's compositions are
 * (low + (high - low) u, loc + scale e): their rules below draw u or e
 * again from the same key. truncated_normal's bounds would need
 * rules of their own: until they exist, asking for one is an error rather
 * than a silent zero. */
/* -- RandomBits ------------------------------------------------------------ */

static mlx_dtype bits_dtype(int width) { return width == 1 ? MLX_UINT8 : width == 2 ? MLX_UINT16 : MLX_UINT32; }

static int bits_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_random_bits_params *p = params;
    if (check_key(in[0], fn))
        return 1;
    out->dtype = bits_dtype(p->width);
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof(int) * (size_t)p->ndim);
    return 0;
}

typedef struct bits_job {
    uint32_t key[2];
    size_t nbytes;
    void *out;
} bits_job;

static void bits_range(void *ctx, size_t j0, size_t j1)
{
    bits_job *b = ctx;
    mc_rdist_bits_range(b->key, b->nbytes, j0, j1, b->out);
}

static int bits_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_random_bits_params *p = params;
    if (mc_array_alloc_data(out, "bits"))
        return 1;
    bits_job job = {.nbytes = out->size * (size_t)p->width, .out = out->data};
    read_key(in[0], job.key);
    mc_parallel_for(mc_random_bits_jobs(job.nbytes), RANDOM_GRAIN, bits_range, &job);
    return 0;
}

const mc_prim_info mc_prim_random_bits = {
    .name = "RandomBits",
    .arity = 1,
    .infer = bits_infer,
    .eval = bits_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .vmap = mc_vmap_by_element,
};

/* -- RandomDist ------------------------------------------------------------ */

static const char *const dist_names[] = {
    [MC_RD_UNIFORM] = "RandomUniform",
    [MC_RD_NORMAL] = "RandomNormal",
    [MC_RD_GUMBEL] = "RandomGumbel",
    [MC_RD_LAPLACE] = "RandomLaplace",
    [MC_RD_TRUNCATED] = "RandomTruncatedNormal",
};

static const char *dist_name(const void *params)
{
    return dist_names[((const mc_random_dist_params *)params)->kind];
}

static bool rdist_type(mlx_dtype d, mc_rdist_type *t)
{
    switch (d) {
    case MLX_FLOAT32: *t = MC_RT_F32; return true;
    case MLX_FLOAT16: *t = MC_RT_F16; return true;
    case MLX_BFLOAT16: *t = MC_RT_BF16; return true;
    case MLX_FLOAT64: *t = MC_RT_F64; return true;
    default: return false;
    }
}

static int dist_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_random_dist_params *p = params;
    mc_rdist_type t;
    if (n != 1 + p->n_params)
        return mc_error("[%s] expected %d inputs, got %d.", fn, 1 + p->n_params, n);
    if (check_key(in[0], fn))
        return 1;
    if (!rdist_type(p->dtype, &t) || !mc_rdist_supports(p->kind, t))
        return mc_error("[%s] Unsupported type %s.", fn, mc_dtype_name(p->dtype));
    for (int i = 1; i < n; i++) {
        bool same = mc_array_has_shape(in[i], p->ndim, p->shape);
        if (in[i]->dtype != p->dtype || (in[i]->size != 1 && !same))
            return mc_error("[%s] parameter %d must be %s of one element or of the output's shape.", fn, i,
                            mc_dtype_name(p->dtype));
    }
    out->dtype = p->dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof(int) * (size_t)p->ndim);
    return 0;
}

typedef struct dist_job {
    mc_rdist d;
    uint32_t key[2];
    size_t n;
    void *out;
} dist_job;

static void dist_range(void *ctx, size_t j0, size_t j1)
{
    dist_job *job = ctx;
    mc_rdist_range(&job->d, job->key, job->n, j0, j1, job->out);
}

/* A parameter input as a pointer and an element stride (0: one value). */
static int param_view(const mc_array *a, const mc_array *out, const void **p, size_t *s)
{
    if (a->size == 1) {
        *p = a->data, *s = 0;
        return 0;
    }
    if (!(a->flags & MC_FLAG_ROW_CONTIG) || a->size != out->size)
        return mc_error("[%s] parameter is not row-contiguous.", "random");
    *p = a->data, *s = 1;
    return 0;
}

static int dist_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    const mc_random_dist_params *p = params;
    dist_job job = {
        .d = {.kind = p->kind, .scale = p->scale, .loc = p->loc, .has_scale = p->has_scale, .has_loc = p->has_loc},
        .n = out->size};
    rdist_type(p->dtype, &job.d.type);
    if (n > 1 && param_view(in[1], out, &job.d.p0, &job.d.s0))
        return 1;
    if (n > 2 && param_view(in[2], out, &job.d.p1, &job.d.s1))
        return 1;
    if (mc_array_alloc_data(out, dist_name(p)))
        return 1;
    job.out = out->data;
    read_key(in[0], job.key);
    mc_parallel_for(mc_random_bits_jobs(4 * job.n), RANDOM_GRAIN, dist_range, &job);
    return 0;
}

/* The standard draw behind a uniform or normal node: the same key and
 * shape with low 0 and range 1 (u), or scale 1 and no loc (e), which the
 * node's output is linear in. */
static mc_array *standard_draw(mc_gb *s, mc_array *node)
{
    mc_random_dist_params p = *(const mc_random_dist_params *)node->params;
    mc_array *in[3] = {node->inputs[0], NULL, NULL};
    if (p.kind == MC_RD_UNIFORM) {
        in[1] = mc_gb_scalar(s, 0, node->dtype);
        in[2] = mc_gb_scalar(s, 1, node->dtype);
    } else {
        in[1] = mc_gb_scalar(s, 1, node->dtype);
        p.n_params = 1;
    }
    if (s->failed)
        return NULL;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_RANDOM_DIST, in, 1 + p.n_params, &p, sizeof p));
}

/* Whether parameter input i (1 or 2) multiplies the standard draw. */
static bool scales_draw(const mc_random_dist_params *p, int i)
{
    return p->kind == MC_RD_UNIFORM ? i == 2 : i == 1;
}

static bool linear_kind(const mc_random_dist_params *p)
{
    return p->kind == MC_RD_UNIFORM || p->kind == MC_RD_NORMAL;
}

/* g summed down to a parameter's shape (one element, or the output's). */
static mc_array *to_param_shape(mc_gb *s, mc_array *g, const mc_array *param)
{
    if (param->size == 1 && g) {
        int all[MC_MAX_NDIM];
        for (int d = 0; d < g->ndim; d++)
            all[d] = d;
        return mc_gb_reshape(s, mc_gb_sum(s, g, all, g->ndim), param->ndim, param->shape);
    }
    return mc_gb_sum_to_shape(s, g, param->ndim, param->shape);
}

static int dist_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_random_dist_params *p = node->params;
    if (!linear_kind(p) && !(nargs == 1 && argnums[0] == 0))
        return mc_vjp_none(vjps, node, cot, argnums, nargs, fn);
    for (int k = 0; k < nargs; k++) {
        int i = argnums[k];
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (i == 0)
            g = mc_gb_zeros_like(&s, node->inputs[0]);
        else if (scales_draw(p, i))
            g = to_param_shape(&s, mc_gb_op(&s, MC_B_MULTIPLY, cot, standard_draw(&s, node)), node->inputs[i]);
        else
            g = to_param_shape(&s, cot, node->inputs[i]);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *dist_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_random_dist_params *p = node->params;
    bool params_moved = nargs > 1 || (nargs == 1 && argnums[0] != 0);
    if (!linear_kind(p) && params_moved)
        return mc_jvp_none(node, tans, argnums, nargs, fn);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] == 0)
            continue;
        mc_array *t = scales_draw(p, argnums[k]) ? mc_gb_op(&s, MC_B_MULTIPLY, tans[k], standard_draw(&s, node))
                                                 : tans[k];
        r = r ? mc_gb_op(&s, MC_B_ADD, r, t) : t;
    }
    r = r ? mc_gb_broadcast_like(&s, mc_gb_astype(&s, r, node->dtype), node) : mc_gb_zeros_like(&s, node);
    return mc_gb_finish_ref(&s, r);
}

const mc_prim_info mc_prim_random_dist = {
    .name = "RandomDist",
    .arity = MC_ARITY_ANY,
    .infer = dist_infer,
    .eval = dist_eval,
    .vjp = dist_vjp,
    .jvp = dist_jvp,
    .name_of = dist_name,
    .vmap = mc_vmap_by_element,
};

/* -- RandomPermutation ----------------------------------------------------- */

static int perm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_random_perm_params *p = params;
    if (check_key(in[0], fn))
        return 1;
    out->dtype = MLX_UINT32;
    out->ndim = 1;
    out->shape[0] = p->n;
    return 0;
}

/* Stable merge sort of idx by w[idx] (tmp: scratch of the same length),
 * so equal words keep index order as MLX's stable argsort does. */
static void merge_sort(uint32_t *idx, uint32_t *tmp, const uint32_t *w, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = w[idx[j]] < w[idx[i]] ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
}

static int perm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    size_t count = out->size;
    uint32_t *w = malloc((count ? count : 1) * sizeof *w), *tmp = malloc((count ? count : 1) * sizeof *tmp);
    if (!w || !tmp || mc_array_alloc_data(out, "permutation")) {
        free(w), free(tmp);
        return w && tmp ? 1 : mc_error("[permutation] out of memory for %zu elements.", count);
    }
    uint32_t key[2], *idx = out->data;
    read_key(in[0], key);
    mc_random_bits(key, count * 4, w);
    for (size_t i = 0; i < count; i++)
        idx[i] = (uint32_t)i;
    merge_sort(idx, tmp, w, count);
    free(w), free(tmp);
    return 0;
}

const mc_prim_info mc_prim_random_permutation = {
    .name = "RandomPermutation",
    .arity = 1,
    .infer = perm_infer,
    .eval = perm_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .vmap = mc_vmap_by_element,
};

