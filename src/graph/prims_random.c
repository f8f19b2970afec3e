/* Owns the random primitives: RandomBits (MLX's), RandomDist (MLX's
 * distributions fused into one pass over the key's bits),
 * RandomPermutation (argsort of bits). The generation is counter-based, so
 * each output splits into counter ranges that the pool runs in parallel
 * with the same bytes as one pass (simd/random.h). Each takes one key or,
 * from vmap, a batch of keys leading the output's shape; each key draws
 * its own block of the output, as MLX's RandomBits does for its batch. */
#include <stdlib.h>
#include <string.h>

#include "graph/build.h"
#include "graph/prims_random.h"
#include "graph/prims_slice.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/random.h"

/* Counters per pool chunk: 8K counters are 64 KB of float32 output. */
enum { RANDOM_GRAIN = 8192 };

/* The key input: uint32 of shape (..., 2). One key (shape (2)) draws the
 * whole output; a batch of keys (vmap's, as MLX's RandomBits::vmap makes)
 * leads the output's shape, and each key draws its own block of it, as
 * MLX's RandomBits::eval_cpu lays them out. */
static int check_key(mc_array *key, int out_ndim, const int *out_shape, const char *fn)
{
    char buf[64], obuf[64];
    if (key->dtype != MLX_UINT32)
        return mc_error("[%s] Expected key type uint32 but received %s.", fn, mc_dtype_name(key->dtype));
    if (key->ndim == 1 && key->shape[0] == 2)
        return 0;
    bool leads = key->ndim >= 1 && key->shape[key->ndim - 1] == 2 && key->ndim - 1 <= out_ndim;
    for (int d = 0; leads && d < key->ndim - 1; d++)
        leads = key->shape[d] == out_shape[d];
    if (!leads)
        return mc_error("[%s] Expected key shape (2), or a batch of keys (..., 2) leading the output's shape "
                        "%s, but received %s.",
                        fn, mc_shape_str(obuf, sizeof obuf, out_ndim, out_shape),
                        mc_shape_str(buf, sizeof buf, key->ndim, key->shape));
    return 0;
}

/* Every key of the input, row-major, as pairs in a new buffer
 * (mc_xfree), or NULL with an error; *num gets their count. */
static uint32_t *read_keys(const mc_array *key, size_t *num, const char *fn)
{
    size_t n = key->size / 2;
    uint32_t *k = mc_xmalloc((n ? n : 1) * 2 * sizeof *k);
    if (!k) {
        mc_error_oom(fn, (n ? n : 1) * 2 * sizeof *k);
        return NULL;
    }
    const uint32_t *d = key->data;
    for (size_t e = 0; e < key->size; e++) {
        size_t rest = e;
        int64_t off = 0; /* strides may be negative or 0 (a broadcast key) */
        for (int ax = key->ndim - 1; ax >= 0; ax--) {
            off += (int64_t)(rest % (size_t)key->shape[ax]) * key->strides[ax];
            rest /= (size_t)key->shape[ax];
        }
        k[e] = d[off];
    }
    *num = n;
    return k;
}

/* A flat range of counters over num keys of per_key counters each, cut
 * at the keys' boundaries: each key's piece goes to fn with the key's
 * index and its own counter range, so one pool split covers every key. */
typedef struct keyed_job {
    size_t per_key;
    void (*fn)(void *ctx, size_t key, size_t j0, size_t j1);
    void *ctx;
} keyed_job;

static void keyed_range(void *ctx, size_t j0, size_t j1)
{
    const keyed_job *k = ctx;
    while (j0 < j1) {
        size_t i = j0 / k->per_key, base = i * k->per_key;
        size_t hi = j1 - base < k->per_key ? j1 - base : k->per_key;
        k->fn(k->ctx, i, j0 - base, hi);
        j0 = base + hi;
    }
}

static void run_keyed(size_t num_keys, size_t per_key, void (*fn)(void *, size_t, size_t, size_t), void *ctx)
{
    keyed_job job = {.per_key = per_key, .fn = fn, .ctx = ctx};
    if (num_keys && per_key)
        mc_parallel_for(num_keys * per_key, RANDOM_GRAIN, keyed_range, &job);
}

/* The batched key of a vmap rule: its batch first (a key the batch does
 * not reach is broadcast, so every element draws the same bits, as MLX's
 * unbatched bits broadcast against batched parameters). */
static mc_array *batched_key(mc_array *key, int axis, int b, const char *fn)
{
    return mc_vmap_front(key, axis, b, fn);
}

/* -- gradients -------------------------------------------------------------
 * RandomBits and RandomPermutation: the key is uint32 and the output
 * integer, so zeros (mc_vjp_zeros), as for ArgReduce. RandomDist's uniform
 * and normal are linear in their parameters, as MLX's compositions are
 * (low + (high - low) u, loc + scale e): their rules below draw u or e
 * again from the same key. truncated_normal's bounds get the derivative
 * of MLX's composition (truncated_factor). Gumbel and laplace have no
 * array parameters. */
/* -- RandomBits ------------------------------------------------------------ */

static mlx_dtype bits_dtype(int width) { return width == 1 ? MLX_UINT8 : width == 2 ? MLX_UINT16 : MLX_UINT32; }

static int bits_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_random_bits_params *p = params;
    if (check_key(in[0], p->ndim, p->shape, fn))
        return 1;
    out->dtype = bits_dtype(p->width);
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof(int) * (size_t)p->ndim);
    return 0;
}

typedef struct bits_job {
    const uint32_t *keys;
    size_t nbytes; /* per key */
    unsigned char *out;
} bits_job;

static void bits_range(void *ctx, size_t key, size_t j0, size_t j1)
{
    bits_job *b = ctx;
    mc_rdist_bits_range(b->keys + 2 * key, b->nbytes, j0, j1, b->out + key * b->nbytes);
}

static int bits_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_random_bits_params *p = params;
    size_t num;
    uint32_t *keys = read_keys(in[0], &num, "bits");
    if (!keys || mc_array_alloc_data(out, "bits")) {
        mc_xfree(keys);
        return 1;
    }
    bits_job job = {.keys = keys, .nbytes = num ? out->size * (size_t)p->width / num : 0, .out = out->data};
    run_keyed(num, mc_random_bits_jobs(job.nbytes), bits_range, &job);
    mc_xfree(keys);
    return 0;
}

/* MLX's RandomBits::vmap: the batch of keys leads the shape, one node. */
static int bits_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    int b = mc_vmap_size(in, axes, 1);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    mc_random_bits_params p;
    mc_vmap_params(&p, sizeof p, node);
    memmove(p.shape + 1, p.shape, sizeof(int) * (size_t)p.ndim);
    p.shape[0] = b;
    p.ndim++;
    mc_array *key = batched_key(in[0], axes[0], b, fn);
    *out = key ? mc_node_new(fn, MC_PRIM_RANDOM_BITS, &key, 1, &p, sizeof p) : NULL;
    mc_array_release(key);
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_random_bits = {
    .name = "RandomBits",
    .arity = 1,
    .infer = bits_infer,
    .eval = bits_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .vmap = bits_vmap,
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
    if (check_key(in[0], p->ndim, p->shape, fn))
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
    const uint32_t *keys;
    size_t n;     /* elements per key */
    size_t isize; /* bytes per element, of the output and the parameters */
    unsigned char *out;
} dist_job;

static void dist_range(void *ctx, size_t key, size_t j0, size_t j1)
{
    const dist_job *job = ctx;
    mc_rdist d = job->d;
    size_t first = key * job->n;
    /* a parameter of one element per output element follows its key's block */
    if (d.p0)
        d.p0 = (const unsigned char *)d.p0 + first * d.s0 * job->isize;
    if (d.p1)
        d.p1 = (const unsigned char *)d.p1 + first * d.s1 * job->isize;
    mc_rdist_range(&d, job->keys + 2 * key, job->n, j0, j1, job->out + first * job->isize);
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
        .isize = mc_dtype_size(p->dtype)};
    rdist_type(p->dtype, &job.d.type);
    if (n > 1 && param_view(in[1], out, &job.d.p0, &job.d.s0))
        return 1;
    if (n > 2 && param_view(in[2], out, &job.d.p1, &job.d.s1))
        return 1;
    size_t num;
    uint32_t *keys = read_keys(in[0], &num, dist_name(p));
    if (!keys || mc_array_alloc_data(out, dist_name(p))) {
        mc_xfree(keys);
        return 1;
    }
    job.keys = keys;
    job.n = num ? out->size / num : 0;
    job.out = out->data;
    run_keyed(num, mc_random_bits_jobs(4 * job.n), dist_range, &job);
    mc_xfree(keys);
    return 0;
}

/* One node for the batch, as MLX's composition of RandomBits (one node for
 * the batch of keys) and elementwise ops gives: the key batched (or
 * broadcast), each parameter of one element kept, every other one given
 * the batch and broadcast to the batched output, row-major as the kernel
 * reads it. */
static int dist_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), rc = 1;
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    mc_random_dist_params p;
    mc_vmap_params(&p, sizeof p, node);
    memmove(p.shape + 1, p.shape, sizeof(int) * (size_t)p.ndim);
    p.shape[0] = b;
    p.ndim++;
    mc_array *args[3] = {NULL, NULL, NULL};
    mc_contiguous_params row = {0};
    args[0] = batched_key(in[0], axes[0], b, fn);
    if (!args[0])
        return 1;
    for (int i = 1; i < n; i++) {
        if (axes[i] < 0 && in[i]->size == 1) {
            args[i] = mc_array_retain(in[i]);
            continue;
        }
        mc_array *f = mc_vmap_front(in[i], axes[i], b, fn);
        /* one value per element: give it the output's rank before broadcasting */
        int ones[MC_MAX_NDIM];
        for (int d = 0; d < p.ndim; d++)
            ones[d] = d == 0 ? b : 1;
        mc_array *r = f && (int)f->size == b && f->ndim != p.ndim ? mc_node_reshape(f, p.ndim, ones, fn)
                                                                  : (f ? mc_array_retain(f) : NULL);
        mc_array *w = r ? mc_node_broadcast(r, p.ndim, p.shape, fn) : NULL;
        args[i] = w ? mc_node_new(fn, MC_PRIM_CONTIGUOUS, &w, 1, &row, sizeof row) : NULL;
        mc_array_release(f), mc_array_release(r), mc_array_release(w);
        if (!args[i])
            goto done;
    }
    *out = mc_node_new(fn, MC_PRIM_RANDOM_DIST, args, n, &p, sizeof p);
    *out_axis = 0;
    rc = *out ? 0 : 1;
done:
    for (int i = 0; i < n; i++)
        mc_array_release(args[i]);
    return rc;
}

/* The standard draw behind a uniform or normal node: the same key and
 * shape with low 0 and range 1 (u), or scale 1 and no loc (e), which the
 * node's output is linear in. */
static mc_array *standard_draw(mc_gb *s, mc_array *node)
{
    mc_random_dist_params p = *(const mc_random_dist_params *)node->params;
    mc_array *in[3] = {node->inputs[0], NULL, NULL};
    if (p.kind == MC_RD_UNIFORM || p.kind == MC_RD_TRUNCATED) {
        /* truncated_normal's draw: MLX's uniform(a, b) is a + (b - a) u */
        p.kind = MC_RD_UNIFORM;
        p.n_params = 2;
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

/* Whether the node's parameter inputs have derivatives: uniform's and
 * normal's (linear), truncated_normal's bounds (below). */
static bool differentiable(const mc_random_dist_params *p) { return linear_kind(p) || p->kind == MC_RD_TRUNCATED; }

/* d out / d bound for truncated_normal, elementwise: bound i = 1 is the
 * lower, 2 the upper. MLX composes it as out = max(min(hi, x), lo) with
 * x = s erfinv(u), u = a + (b - a) v, a = erf(lo / s), b = erf(hi / s),
 * s = sqrt(2) and v the unit draw, and differentiates those ops: inside
 * the bounds, erfinv' and erf' cancel to exp((x^2 - bound^2) / 2), times
 * du/da = 1 - v or du/db = v; a clipped element is the bound itself (1).
 * The ties follow MLX's Minimum and Maximum rules: x == lo counts as
 * clipped at lo; x == hi reaches x (read here from the output, which
 * equals hi then too, as clipped: the one place a tie could differ, for
 * an x that lands exactly on hi). */
static mc_array *truncated_factor(mc_gb *s, mc_array *node, int i)
{
    mc_array *lo = node->inputs[1], *hi = node->inputs[2], *bound = i == 1 ? lo : hi;
    mlx_dtype d = node->dtype;
    mc_array *v = standard_draw(s, node);
    mc_array *above_lo = mc_gb_binary(s, MC_B_GREATER, node, lo, d);
    mc_array *inside =
        mc_gb_binary(s, MC_B_LOGICAL_AND, above_lo, mc_gb_binary(s, MC_B_LESS, node, hi, d), MLX_BOOL);
    mc_array *clipped = i == 1 ? mc_gb_binary(s, MC_B_LESS_EQUAL, node, lo, d)
                               : mc_gb_binary(s, MC_B_LOGICAL_AND, above_lo,
                                              mc_gb_binary(s, MC_B_GREATER_EQUAL, node, hi, d), MLX_BOOL);
    mc_array *half_sq = mc_gb_op(
        s, MC_B_MULTIPLY, mc_gb_scalar(s, 0.5, d),
        mc_gb_op(s, MC_B_MULTIPLY, mc_gb_op(s, MC_B_SUBTRACT, node, bound), mc_gb_op(s, MC_B_ADD, node, bound)));
    mc_array *du = i == 1 ? mc_gb_op(s, MC_B_SUBTRACT, mc_gb_scalar(s, 1, d), v) : v;
    mc_array *g = mc_gb_op(s, MC_B_MULTIPLY, mc_gb_unary(s, MC_U_EXP, half_sq), du);
    return mc_gb_where(s, inside, g, mc_gb_astype(s, clipped, d));
}

/* What parameter input i contributes to d out, given its cotangent or
 * tangent t (of the output's shape or broadcasting to it). */
static mc_array *param_term(mc_gb *s, mc_array *node, int i, mc_array *t)
{
    const mc_random_dist_params *p = node->params;
    if (p->kind == MC_RD_TRUNCATED)
        return mc_gb_op(s, MC_B_MULTIPLY, t, truncated_factor(s, node, i));
    return scales_draw(p, i) ? mc_gb_op(s, MC_B_MULTIPLY, t, standard_draw(s, node)) : t;
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
    if (!differentiable(p) && !(nargs == 1 && argnums[0] == 0))
        return mc_vjp_none(vjps, node, cot, argnums, nargs, fn);
    for (int k = 0; k < nargs; k++) {
        int i = argnums[k];
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (i == 0)
            g = mc_gb_zeros_like(&s, node->inputs[0]);
        else
            g = to_param_shape(&s, param_term(&s, node, i, cot), node->inputs[i]);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *dist_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_random_dist_params *p = node->params;
    bool params_moved = nargs > 1 || (nargs == 1 && argnums[0] != 0);
    if (!differentiable(p) && params_moved)
        return mc_jvp_none(node, tans, argnums, nargs, fn);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] == 0)
            continue;
        mc_array *t = param_term(&s, node, argnums[k], tans[k]);
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
    .vmap = dist_vmap,
};

/* -- RandomPermutation ----------------------------------------------------- */

static int perm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_random_perm_params *p = params;
    mc_array *key = in[0];
    /* one permutation of n per key: the keys' batch leads the output */
    int lead = key->ndim >= 1 ? key->ndim - 1 : 0;
    if (lead + 1 > MC_MAX_NDIM)
        return mc_error("[%s] A batch of keys of %d dimensions has too many.", fn, key->ndim);
    for (int d = 0; d < lead; d++)
        out->shape[d] = key->shape[d];
    out->shape[lead] = p->n;
    if (check_key(key, lead + 1, out->shape, fn))
        return 1;
    out->dtype = MLX_UINT32;
    out->ndim = lead + 1;
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

typedef struct perm_job {
    const uint32_t *keys;
    size_t n;
    uint32_t *out, *w, *tmp;
} perm_job;

static void perm_range(void *ctx, size_t k0, size_t k1)
{
    const perm_job *job = ctx;
    for (size_t k = k0; k < k1; k++) {
        size_t at = k * job->n;
        uint32_t *idx = job->out + at, *w = job->w + at;
        mc_random_bits(job->keys + 2 * k, job->n * 4, w);
        for (size_t i = 0; i < job->n; i++)
            idx[i] = (uint32_t)i;
        merge_sort(idx, job->tmp + at, w, job->n);
    }
}

static int perm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_random_perm_params *p = params;
    size_t count = out->size, num;
    uint32_t *w = malloc((count ? count : 1) * sizeof *w), *tmp = malloc((count ? count : 1) * sizeof *tmp);
    uint32_t *keys = w && tmp ? read_keys(in[0], &num, "permutation") : NULL;
    if (!keys || mc_array_alloc_data(out, "permutation")) {
        free(w), free(tmp), mc_xfree(keys);
        return w && tmp ? 1 : mc_error("[permutation] out of memory for %zu elements.", count);
    }
    perm_job job = {.keys = keys, .n = (size_t)p->n, .out = out->data, .w = w, .tmp = tmp};
    /* keys of short permutations share a chunk; a long one is a chunk alone */
    size_t grain = job.n >= RANDOM_GRAIN ? 1 : RANDOM_GRAIN / (job.n + 1);
    if (job.n)
        mc_parallel_for(num, grain, perm_range, &job);
    free(w), free(tmp), mc_xfree(keys);
    return 0;
}

/* MLX's permutation is argsort(bits) of each key: one node per batch of
 * keys, which lead the output (perm_infer). */
static int perm_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    int b = mc_vmap_size(in, axes, 1);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    mc_array *key = batched_key(in[0], axes[0], b, fn);
    *out = key ? mc_node_like(node, &key, 1, fn) : NULL;
    mc_array_release(key);
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_random_permutation = {
    .name = "RandomPermutation",
    .arity = 1,
    .infer = perm_infer,
    .eval = perm_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .vmap = perm_vmap,
};
