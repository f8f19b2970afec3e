/* Owns fast.h's primitives: RMSNorm, LayerNorm, RoPE and
 * ScaledDotProductAttention (MLX's fast primitives), their shape rules,
 * their evaluation (the row kernels of simd/fast.h, run over the pool;
 * attention in fast_sdpa.c) and their derivatives:
 * - RMSNorm and LayerNorm: MLX's own vjp formulas (RMSNorm::vjp,
 *   LayerNorm::vjp, which compute in the output type); jvp from their
 *   float32 forward compositions (float64 for float64), as MLX's
 *   Custom::jvp differentiates the fallback.
 * - RoPE: the inverse rotation for the vjp, RoPE itself for the jvp (it is
 *   linear in x); neither is defined for the offset or the frequencies,
 *   as in MLX.
 * - Attention: MLX differentiates its fallback composition (scores,
 *   softmax, products); the rules here write out that composition's
 *   derivative with the graph's ops (so they do build the Lq x Lk scores,
 *   as MLX's do). */
#include <math.h>
#include <string.h>

#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_fast.h"
#include "graph/prims_reduce.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/fast.h"
#include "simd/simd.h"

enum { NORM_GRAIN = 1 << 14 };
/* Outputs from this size on are written with non-temporal stores: about
 * the last-level cache of a small machine. */
#define STREAM_BYTES ((size_t)8 << 20)

/* x as row-contiguous data: x itself or a copy (a new reference either way). */
static mc_array *rows_of(mc_array *x, const char *fn)
{
    if (x->flags & MC_FLAG_ROW_CONTIG)
        return mc_array_retain(x);
    mc_array *t = mc_array_alloc(fn, x->dtype, x->ndim, x->shape);
    if (!t)
        return NULL;
    if (mc_run_unary(t, x, mc_kernels()->convert[x->dtype][x->dtype], fn)) {
        mc_array_release(t);
        return NULL;
    }
    return t;
}

static int copy_meta(mc_meta *out, const mc_array *x)
{
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    return 0;
}

/* An affine parameter of a norm: 0-d (absent) or 1-D of x's last axis. */
static int check_affine(const mc_array *a, const mc_array *x, const char *what, const char *fn)
{
    if (a->ndim == 0)
        return 0;
    if (a->ndim != 1 || a->shape[0] != x->shape[x->ndim - 1])
        return mc_error("[%s] %s must have 1 dimension of size %d but has %d dimensions.", fn, what,
                        x->shape[x->ndim - 1], a->ndim);
    if (a->dtype != x->dtype)
        return mc_error("[%s] %s must have the input's type.", fn, what);
    return 0;
}

/* ---- the norms ---- */

typedef struct norm_job {
    const mc_fast_kernels *fk;
    bool layer;
    int dt;
    const char *x, *w, *b;
    char *y;
    size_t n, isz;
    float eps;
    bool stream; /* the output outgrows the caches: write it past them */
} norm_job;

static void norm_range(void *ctx, size_t b, size_t e)
{
    norm_job *j = ctx;
    const char *x = j->x + b * j->n * j->isz;
    char *y = j->y + b * j->n * j->isz;
    if (j->layer)
        j->fk->layer_norm(j->dt, x, j->w, j->b, y, e - b, j->n, j->eps, j->stream);
    else
        j->fk->rms_norm(j->dt, x, j->w, y, e - b, j->n, j->eps, j->stream);
}

static int norm_eval(mc_array *out, mc_array *const *in, int nin, float eps, const char *fn)
{
    mc_array *held[3] = {NULL, NULL, NULL};
    int rc = 1;
    for (int i = 0; i < nin; i++)
        if (i == 0 || in[i]->ndim == 1)
            if (!(held[i] = rows_of(in[i], fn)))
                goto done;
    norm_job j = {.fk = mc_fast_kernels_get(),
                  .layer = nin == 3,
                  .dt = in[0]->dtype,
                  .x = held[0]->data,
                  .w = held[1] ? held[1]->data : NULL,
                  .b = held[2] ? held[2]->data : NULL,
                  .n = in[0]->ndim ? (size_t)in[0]->shape[in[0]->ndim - 1] : 1,
                  .isz = mc_dtype_size(in[0]->dtype),
                  .eps = eps};
    /* donate x's buffer only when x itself is the rows read */
    mc_array *cands[1] = {in[0]};
    if (mc_out_alloc(out, cands, held[0] == in[0] ? 1 : 0, fn))
        goto done;
    j.y = out->data;
    j.stream = out->size * j.isz >= STREAM_BYTES && j.y != j.x;
    if (out->size && j.n) {
        size_t grain = NORM_GRAIN / j.n;
        mc_parallel_for(out->size / j.n, grain ? grain : 1, norm_range, &j);
    }
    rc = 0;
done:
    for (int i = 0; i < 3; i++)
        mc_array_release(held[i]);
    return rc;
}

static int rms_norm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    if (in[0]->ndim == 0 || !mc_dtype_is_float(in[0]->dtype))
        return mc_error("[%s] Input must be floating with at least 1 dimension.", fn);
    if (check_affine(in[1], in[0], "weight", fn))
        return 1;
    return copy_meta(out, in[0]);
}

static int rms_norm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    return norm_eval(out, in, n, ((const mc_norm_params *)params)->eps, "rms_norm");
}

static int layer_norm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    if (rms_norm_infer(out, in, n, params, fn))
        return 1;
    return check_affine(in[2], in[0], "bias", fn);
}

static int layer_norm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    return norm_eval(out, in, n, ((const mc_norm_params *)params)->eps, "layer_norm");
}

/* The axes 0 .. ndim - 2 (every axis but the last). */
static int leading_axes(int ndim, int *axes)
{
    for (int i = 0; i < ndim - 1; i++)
        axes[i] = i;
    return ndim - 1;
}

/* (a is NULL once a step of s has failed) */
static mc_array *mean_last(mc_gb *s, mc_array *a)
{
    if (!a)
        return NULL;
    int ax = a->ndim - 1;
    return mc_gb_reduce(s, a, MC_RK_MEAN, &ax, 1);
}

/* MLX's RMSNorm::vjp, in the output type:
 * n = rsqrt(mean(x^2) + eps); dx = g w n - x n^3 mean(g w x);
 * dw = sum over leading axes of g x n (zeros for an absent weight). */
static int rms_norm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                        const char *fn)
{
    const mc_norm_params *p = node->params;
    mc_array *x = node->inputs[0], *w = node->inputs[1];
    int axes[MC_MAX_NDIM];
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *nrm = mc_gb_unary(&s, MC_U_RSQRT,
                                    mc_gb_op(&s, MC_B_ADD, mean_last(&s, mc_gb_unary(&s, MC_U_SQUARE, x)),
                                             mc_gb_scalar(&s, p->eps, x->dtype)));
        mc_array *g;
        if (argnums[k] == 0) {
            mc_array *n3 = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_op(&s, MC_B_MULTIPLY, nrm, nrm), nrm);
            mc_array *gw = mc_gb_op(&s, MC_B_MULTIPLY, cot, w);
            mc_array *t = mean_last(&s, mc_gb_op(&s, MC_B_MULTIPLY, gw, x));
            t = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_op(&s, MC_B_MULTIPLY, x, t), n3);
            g = mc_gb_op(&s, MC_B_SUBTRACT, mc_gb_op(&s, MC_B_MULTIPLY, gw, nrm), t);
        } else if (w->ndim == 0) {
            g = mc_gb_zeros_like(&s, w);
        } else {
            mc_array *gx = mc_gb_op(&s, MC_B_MULTIPLY, cot, mc_gb_op(&s, MC_B_MULTIPLY, x, nrm));
            int na = leading_axes(x->ndim, axes); /* gx has x's shape (and may be NULL) */
            g = mc_gb_reshape(&s, mc_gb_sum(&s, gx, axes, na), 1, w->shape);
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* MLX's LayerNorm::vjp, in the output type. */
static int layer_norm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                          const char *fn)
{
    const mc_norm_params *p = node->params;
    mc_array *x = node->inputs[0], *w = node->inputs[1], *bias = node->inputs[2];
    int axes[MC_MAX_NDIM];
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *mu = mean_last(&s, x);
        mc_array *mu2 = mean_last(&s, mc_gb_unary(&s, MC_U_SQUARE, x));
        mc_array *var = mc_gb_op(&s, MC_B_SUBTRACT, mu2, mc_gb_unary(&s, MC_U_SQUARE, mu));
        mc_array *nrm =
            mc_gb_unary(&s, MC_U_RSQRT, mc_gb_op(&s, MC_B_ADD, var, mc_gb_scalar(&s, p->eps, x->dtype)));
        mc_array *xc = mc_gb_op(&s, MC_B_SUBTRACT, x, mu);
        mc_array *g = NULL;
        int na = leading_axes(x->ndim, axes);
        if (argnums[k] == 0) {
            mc_array *n3 = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_op(&s, MC_B_MULTIPLY, nrm, nrm), nrm);
            mc_array *wg = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_broadcast_like(&s, w, cot), cot);
            mc_array *sumwg = mean_last(&s, wg);
            mc_array *sumwgxc = mean_last(&s, mc_gb_op(&s, MC_B_MULTIPLY, wg, xc));
            mc_array *t1 = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_op(&s, MC_B_MULTIPLY, xc, sumwgxc), n3);
            mc_array *t2 = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_op(&s, MC_B_SUBTRACT, wg, sumwg), nrm);
            g = mc_gb_op(&s, MC_B_SUBTRACT, t2, t1);
        } else if (argnums[k] == 1) {
            g = w->ndim == 0
                    ? mc_gb_zeros_like(&s, w)
                    : mc_gb_reshape(
                          &s,
                          mc_gb_sum(&s, mc_gb_op(&s, MC_B_MULTIPLY, cot, mc_gb_op(&s, MC_B_MULTIPLY, xc, nrm)),
                                    axes, na),
                          1, w->shape);
        } else {
            g = bias->ndim == 0 ? mc_gb_zeros_like(&s, bias)
                                : mc_gb_reshape(&s, mc_gb_sum(&s, cot, axes, na), 1, bias->shape);
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* The tangent of the normalised value (before the weight), as MLX's
 * float32 composition differentiates: with xc = x - mean(x) for a layer
 * norm (x for RMS), n = rsqrt(mean(xc^2) + eps):
 * d = n tc - xc n^3 mean(xc tc), tc the centred tangent. Returns it and,
 * in *y, the normalised value itself, both in the output type. */
static mc_array *norm_tangent(mc_gb *s, mc_array *node, mc_array *t, bool layer, mc_array **y)
{
    const mc_norm_params *p = node->params;
    mlx_dtype ct = node->dtype == MLX_FLOAT64 ? MLX_FLOAT64 : MLX_FLOAT32; /* as the kernels compute */
    mc_array *x = mc_gb_astype(s, node->inputs[0], ct);
    mc_array *tf = mc_gb_astype(s, t, ct);
    if (layer) {
        x = mc_gb_op(s, MC_B_SUBTRACT, x, mean_last(s, x));
        tf = mc_gb_op(s, MC_B_SUBTRACT, tf, mean_last(s, tf));
    }
    mc_array *nrm = mc_gb_unary(
        s, MC_U_RSQRT,
        mc_gb_op(s, MC_B_ADD, mean_last(s, mc_gb_unary(s, MC_U_SQUARE, x)), mc_gb_scalar(s, p->eps, ct)));
    mc_array *n3 = mc_gb_op(s, MC_B_MULTIPLY, mc_gb_op(s, MC_B_MULTIPLY, nrm, nrm), nrm);
    mc_array *d = mc_gb_op(s, MC_B_SUBTRACT, mc_gb_op(s, MC_B_MULTIPLY, tf, nrm),
                           mc_gb_op(s, MC_B_MULTIPLY, mc_gb_op(s, MC_B_MULTIPLY, x, n3),
                                    mean_last(s, mc_gb_op(s, MC_B_MULTIPLY, x, tf))));
    *y = mc_gb_astype(s, mc_gb_op(s, MC_B_MULTIPLY, x, nrm), node->dtype);
    return mc_gb_astype(s, d, node->dtype);
}

static mc_array *norm_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    bool layer = node->n_inputs == 3;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *w = node->inputs[1], *y = NULL, *r = NULL;
    for (int k = 0; k < nargs; k++) {
        mc_array *t = mc_gb_astype(&s, tans[k], node->dtype), *term;
        if (argnums[k] == 0) {
            mc_array *d = norm_tangent(&s, node, t, layer, &y);
            term = mc_gb_op(&s, MC_B_MULTIPLY, d, mc_gb_broadcast_like(&s, w, d));
        } else if (argnums[k] == 1) {
            if (!y) {
                mc_array *unused = NULL;
                (void)norm_tangent(&s, node, mc_gb_zeros_like(&s, node), layer, &unused);
                y = unused;
            }
            term = mc_gb_op(&s, MC_B_MULTIPLY, y, mc_gb_broadcast_like(&s, t, y));
        } else {
            term = mc_gb_broadcast_like(&s, t, node);
        }
        r = r ? mc_gb_op(&s, MC_B_ADD, r, term) : term;
    }
    if (!r)
        r = mc_gb_zeros_like(&s, node);
    return mc_gb_finish_ref(&s, r);
}

/* The norms act on the last axis, each row alone: with x's batch first it
 * is more rows (an unbatched x is broadcast to a batched weight or bias).
 * A batched weight or bias cannot be one vector for every row: the norm
 * runs without them (weight 1, bias 0) and they are applied after,
 * broadcast over each batch element's rows. */
static int norm_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), nd = node->ndim + 1;
    bool affine_batched = axes[1] >= 0 || (n == 3 && axes[2] >= 0);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *args[3] = {mc_gb_vmap_front(&s, in[0], axes[0], b), in[1], n == 3 ? in[2] : NULL};
    if (!affine_batched) {
        *out = mc_gb_finish_ref(&s, mc_gb_like(&s, node, args, n));
        *out_axis = 0;
        return *out ? 0 : 1;
    }
    args[1] = mc_gb_scalar(&s, 1.0, node->dtype);
    if (n == 3)
        args[2] = mc_gb_scalar(&s, 0.0, node->dtype);
    mc_array *y = mc_gb_like(&s, node, args, n);
    for (int i = 1; i < n; i++) {
        mc_array *t = in[i];
        if (node->inputs[i]->ndim == 0 && axes[i] < 0)
            continue; /* absent: 1 or 0 */
        if (axes[i] >= 0) {
            /* (B, D) or (B,) for a 0-d one, as (B, 1, ..., D or 1) */
            int shape[MC_MAX_NDIM];
            shape[0] = b;
            for (int d = 1; d < nd - 1; d++)
                shape[d] = 1;
            shape[nd - 1] = node->inputs[i]->ndim ? node->inputs[i]->shape[0] : 1;
            t = mc_gb_reshape(&s, mc_gb_vmap_front(&s, t, axes[i], b), nd, shape);
        }
        y = mc_gb_op(&s, i == 1 ? MC_B_MULTIPLY : MC_B_ADD, y, t);
    }
    *out = mc_gb_finish_ref(&s, y);
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_rms_norm = {
    .name = "RMSNorm",
    .arity = 2,
    .infer = rms_norm_infer,
    .eval = rms_norm_eval,
    .vjp = rms_norm_vjp,
    .jvp = norm_jvp,
    .vmap = norm_vmap,
};

const mc_prim_info mc_prim_layer_norm = {
    .name = "LayerNorm",
    .arity = 3,
    .infer = layer_norm_infer,
    .eval = layer_norm_eval,
    .vjp = layer_norm_vjp,
    .jvp = norm_jvp,
    .vmap = norm_vmap,
};

/* ---- RoPE ---- */

static int rope_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_rope_params *p = params;
    const mc_array *x = in[0], *off = in[1];
    if (n != 2 + (p->has_freqs ? 1 : 0))
        return mc_error("[%s] RoPE takes %d inputs, got %d.", fn, 2 + (p->has_freqs ? 1 : 0), n);
    if (x->ndim < 3 || !mc_dtype_is_float(x->dtype))
        return mc_error("[%s] Input must be floating with at least 3 dimensions.", fn);
    if (off->dtype != MLX_INT32 || off->ndim > 1 || (off->size != 1 && (int)off->size != x->shape[0]))
        return mc_error("[%s] offset must be int32 with 1 or %d elements.", fn, x->shape[0]);
    if (p->dims <= 0 || p->dims % 2 || p->dims > x->shape[x->ndim - 1])
        return mc_error("[%s] Invalid dims %d for last dimension %d.", fn, p->dims, x->shape[x->ndim - 1]);
    if (p->has_freqs && (in[2]->dtype != MLX_FLOAT32 || in[2]->ndim != 1 || in[2]->shape[0] != p->dims / 2))
        return mc_error("[%s] freqs must be float32 of size %d.", fn, p->dims / 2);
    return copy_meta(out, x);
}

typedef struct rope_job {
    const mc_fast_kernels *fk;
    const mc_rope_params *p;
    int dt;
    const char *x;
    char *y;
    const int32_t *off;
    int64_t off_stride;
    const float *inv_freq;
    size_t N, T, D, isz;
} rope_job;

enum { ROPE_MAX_HALF = 4096 };

static void rope_range(void *ctx, size_t b, size_t e)
{
    rope_job *j = ctx;
    float cs[ROPE_MAX_HALF], sn[ROPE_MAX_HALF];
    size_t half = (size_t)j->p->dims / 2;
    for (size_t it = b; it < e; it++) {
        size_t bi = it / j->T, t = it % j->T;
        float pos = ((float)t + (float)j->off[(int64_t)bi * j->off_stride]) * j->p->scale;
        mc_fast_rope_angles(j->dt, pos, j->inv_freq, half, cs, sn);
        for (size_t n = 0; n < j->N; n++) {
            size_t row = (bi * j->N + n) * j->T + t;
            j->fk->rope(j->dt, j->p->traditional, j->p->forward, j->x + row * j->D * j->isz,
                        j->y + row * j->D * j->isz, 1, j->D, (size_t)j->p->dims, cs, sn);
        }
    }
}

static int rope_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    static const char fn[] = "rope";
    (void)n;
    const mc_rope_params *p = params;
    mc_array *x = in[0], *off = in[1];
    size_t half = (size_t)p->dims / 2;
    if (half > ROPE_MAX_HALF)
        return mc_error("[%s] dims %d is larger than this build supports (%d).", fn, p->dims, 2 * ROPE_MAX_HALF);
    mc_array *xr = rows_of(x, fn);
    if (!xr)
        return 1;
    float inv[ROPE_MAX_HALF];
    if (p->has_freqs) {
        const mc_array *f = in[2];
        for (size_t i = 0; i < half; i++)
            inv[i] = 1.0f / ((const float *)f->data)[(int64_t)i * f->strides[0]];
    } else {
        float c = logf(p->base) / (float)half;
        for (size_t i = 0; i < half; i++)
            inv[i] = expf(-(float)i * c);
    }
    rope_job j = {.fk = mc_fast_kernels_get(),
                  .p = p,
                  .dt = x->dtype,
                  .x = xr->data,
                  .off = off->data,
                  .off_stride = off->size > 1 ? off->strides[0] : 0,
                  .inv_freq = inv,
                  .T = (size_t)x->shape[x->ndim - 2],
                  .D = (size_t)x->shape[x->ndim - 1],
                  .isz = mc_dtype_size(x->dtype)};
    j.N = 1;
    for (int d = 1; d < x->ndim - 2; d++)
        j.N *= (size_t)x->shape[d];
    mc_array *cands[1] = {x};
    if (mc_out_alloc(out, cands, xr == x ? 1 : 0, fn)) {
        mc_array_release(xr);
        return 1;
    }
    j.y = out->data;
    size_t items = (size_t)x->shape[0] * j.T;
    if (out->size) {
        size_t per = j.N * j.D;
        size_t grain = per ? NORM_GRAIN / per : 1;
        mc_parallel_for(items, grain ? grain : 1, rope_range, &j);
    }
    mc_array_release(xr);
    return 0;
}

static int rope_args(const int *argnums, int nargs, const char *what, const char *fn)
{
    for (int k = 0; k < nargs; k++)
        if (argnums[k] != 0)
            return mc_error("[%s] [RoPE::%s] %s for offset or frequencies not supported", fn, what, what);
    return 0;
}

/* RoPE of `a` with node's offset, freqs and params, forward flipped or not. */
static mc_array *rope_like(mc_gb *s, mc_array *node, mc_array *a, bool flip)
{
    mc_rope_params p = *(const mc_rope_params *)node->params;
    if (flip)
        p.forward = !p.forward;
    mc_array *in[3] = {a, node->inputs[1], node->n_inputs == 3 ? node->inputs[2] : NULL};
    if (s->failed || !a)
        return NULL;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_ROPE, in, node->n_inputs, &p, sizeof p));
}

static int rope_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    if (rope_args(argnums, nargs, "vjp", fn))
        return 1;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_vjp_store(vjps, 0, &s, rope_like(&s, node, mc_gb_astype(&s, cot, node->dtype), true));
}

static mc_array *rope_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    if (rope_args(argnums, nargs, "jvp", fn))
        return NULL;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, rope_like(&s, node, mc_gb_astype(&s, tans[0], node->dtype), false));
}

/* RoPE maps over every axis but the last two; offset holds one position
 * or one per entry of x's axis 0. With the offset unbatched the batch goes
 * to axis 1 of x, among the mapped axes and behind the axis the offset
 * indexes. A batched offset goes first with x's batch, folded into x's
 * axis 0 when it has one per entry of it. Batched frequencies: element by
 * element. */
static int rope_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), nd = node->ndim + 1;
    if (n == 3 && axes[2] >= 0)
        return mc_vmap_by_element(out, out_axis, node, in, axes, fn);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *args[3] = {NULL, in[1], n == 3 ? in[2] : NULL};
    if (axes[1] < 0) {
        args[0] = in[0];
        if (axes[0] != 1)
            args[0] = mc_gb_hold(&s, mc_node_moveaxis(in[0], axes[0], 1, fn));
        *out = mc_gb_finish_ref(&s, mc_gb_like(&s, node, args, n));
        *out_axis = 1;
        return *out ? 0 : 1;
    }
    int shape[MC_MAX_NDIM], one = node->inputs[1]->size == 1, n0 = node->shape[0];
    mc_array *x = mc_gb_vmap_front(&s, in[0], axes[0], b);
    args[1] = mc_gb_reshape(&s, mc_gb_vmap_front(&s, in[1], axes[1], b), 1, (const int[]){one ? b : b * n0});
    if (!one) {
        shape[0] = b * n0;
        memcpy(shape + 1, node->shape + 1, sizeof(int) * (size_t)(node->ndim - 1));
        x = mc_gb_reshape(&s, x, node->ndim, shape);
    }
    args[0] = x;
    mc_array *r = mc_gb_like(&s, node, args, n);
    shape[0] = b;
    memcpy(shape + 1, node->shape, sizeof(int) * (size_t)node->ndim);
    *out = mc_gb_finish_ref(&s, mc_gb_reshape(&s, r, nd, shape));
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_rope = {
    .name = "RoPE",
    .arity = MC_ARITY_ANY,
    .infer = rope_infer,
    .eval = rope_eval,
    .vjp = rope_vjp,
    .jvp = rope_jvp,
    .vmap = rope_vmap,
};

/* ---- ScaledDotProductAttention ---- */

static int sdpa_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_sdpa_params *p = params;
    const mc_array *q = in[0], *k = in[1], *v = in[2];
    if (n != 3 + p->has_mask + p->has_sinks)
        return mc_error("[%s] ScaledDotProductAttention takes %d inputs, got %d.", fn,
                        3 + p->has_mask + p->has_sinks, n);
    for (int i = 0; i < 3; i++)
        if (in[i]->ndim != 4 || in[i]->dtype != q->dtype || !mc_dtype_is_float(q->dtype))
            return mc_error("[%s] q, k and v must be 4-D of one floating type.", fn);
    if (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0] || k->shape[1] != v->shape[1] ||
        k->shape[1] == 0 || q->shape[1] % k->shape[1] || k->shape[2] != v->shape[2] || k->shape[3] != q->shape[3])
        return mc_error("[%s] Mismatching shapes of q, k and v.", fn);
    int idx = 3;
    if (p->has_mask) {
        const mc_array *m = in[idx++];
        if (m->ndim != 4 || m->shape[0] != q->shape[0] || m->shape[1] != q->shape[1] ||
            m->shape[2] != q->shape[2] || m->shape[3] != k->shape[2] ||
            (m->dtype != MLX_BOOL && m->dtype != q->dtype))
            return mc_error("[%s] The mask must be (B, Hq, Lq, Lk), bool or the output type.", fn);
    }
    if (p->has_sinks) {
        const mc_array *sk = in[idx];
        if (sk->ndim != 1 || sk->shape[0] != q->shape[1] || sk->dtype != q->dtype)
            return mc_error("[%s] sinks must have one value per query head.", fn);
    }
    out->dtype = q->dtype;
    out->ndim = 4;
    out->shape[0] = q->shape[0];
    out->shape[1] = q->shape[1];
    out->shape[2] = q->shape[2];
    out->shape[3] = v->shape[3];
    return 0;
}

static int sdpa_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_sdpa_params *p = params;
    mc_array *mask = p->has_mask ? in[3] : NULL;
    mc_array *sinks = p->has_sinks ? in[3 + p->has_mask] : NULL;
    return mc_sdpa_eval(out, in[0], in[1], in[2], mask, sinks, p);
}

/* The pieces of MLX's fallback composition that both derivatives use,
 * over 5-D views (B, Hkv, R, L, .) where R query heads share a kv head. */
typedef struct sdpa_parts {
    int B, Hq, Hkv, R, Lq, Lk, D, Dv;
    mc_array *qs5, *k5, *v5; /* q times scale; k, v with a size-1 R axis */
    mc_array *P;             /* the softmax (B, Hkv, R, Lq, Lk) */
    mc_array *psink;         /* the sink's share of it (B, Hkv, R, Lq, 1), or NULL */
    mc_array *sk5;           /* sinks as (1, Hkv, R, 1, 1), or NULL */
    mc_array *keep;          /* where a bool or causal mask keeps scores, or NULL */
} sdpa_parts;

/* dS with zeros where the mask replaced the scores by a constant (the
 * derivative of MLX's where): a row masked everywhere gets no gradient. */
static mc_array *masked(mc_gb *s, const sdpa_parts *t, mc_array *dS)
{
    return t->keep ? mc_gb_where(s, t->keep, dS, mc_gb_scalar(s, 0, dS ? dS->dtype : MLX_FLOAT32)) : dS;
}

static mc_array *to5(mc_gb *s, mc_array *a, int B, int H, int R, int L, int last)
{
    int shape[5] = {B, H, R, L, last};
    return mc_gb_reshape(s, a, 5, shape);
}

static double sdpa_lowest(mlx_dtype dt)
{
    switch (dt) {
    case MLX_FLOAT16: return -65504.0;
    case MLX_BFLOAT16: return -3.38953138925153547590e38;
    case MLX_FLOAT64: return -1.7976931348623157e308;
    default: return -3.4028234663852886e38;
    }
}

static void sdpa_build(mc_gb *s, mc_array *node, sdpa_parts *t)
{
    const mc_sdpa_params *p = node->params;
    mc_array *q = node->inputs[0], *k = node->inputs[1], *v = node->inputs[2];
    mlx_dtype dt = q->dtype;
    t->B = q->shape[0];
    t->Hq = q->shape[1];
    t->Hkv = k->shape[1];
    t->R = t->Hq / t->Hkv;
    t->Lq = q->shape[2];
    t->Lk = k->shape[2];
    t->D = q->shape[3];
    t->Dv = v->shape[3];
    t->qs5 = to5(s, mc_gb_op(s, MC_B_MULTIPLY, q, mc_gb_scalar(s, p->scale, dt)), t->B, t->Hkv, t->R, t->Lq, t->D);
    t->k5 = to5(s, k, t->B, t->Hkv, 1, t->Lk, t->D);
    t->v5 = to5(s, v, t->B, t->Hkv, 1, t->Lk, t->Dv);
    mc_array *S = mc_gb_matmul(s, t->qs5, mc_gb_swap_last(s, t->k5));
    mc_array *low = mc_gb_scalar(s, sdpa_lowest(dt), dt);
    t->keep = NULL;
    if (p->has_mask) {
        mc_array *m5 = to5(s, node->inputs[3], t->B, t->Hkv, t->R, t->Lq, t->Lk);
        if (node->inputs[3]->dtype == MLX_BOOL)
            t->keep = m5;
        else
            S = mc_gb_op(s, MC_B_ADD, S, m5);
    }
    if (p->causal) {
        mc_array *qi =
            mc_gb_op(s, MC_B_ADD, mc_gb_iota(s, t->Lq, 3, 5), mc_gb_scalar(s, t->Lk - t->Lq, MLX_INT32));
        t->keep = mc_gb_binary(s, MC_B_GREATER_EQUAL, qi, mc_gb_iota(s, t->Lk, 4, 5), MLX_INT32);
    }
    if (t->keep)
        S = mc_gb_where(s, t->keep, S, low);
    int last = 4;
    t->psink = t->sk5 = NULL;
    if (p->has_sinks) {
        int shape[5] = {1, t->Hkv, t->R, 1, 1};
        t->sk5 = mc_gb_reshape(s, node->inputs[3 + p->has_mask], 5, shape);
        mc_array *M = mc_gb_op(s, MC_B_MAXIMUM, mc_gb_reduce(s, S, MC_RK_MAX, &last, 1), t->sk5);
        mc_array *E = mc_gb_unary(s, MC_U_EXP, mc_gb_op(s, MC_B_SUBTRACT, S, M));
        mc_array *es = mc_gb_unary(s, MC_U_EXP, mc_gb_op(s, MC_B_SUBTRACT, t->sk5, M));
        mc_array *Z = mc_gb_op(s, MC_B_ADD, mc_gb_sum(s, E, &last, 1), es);
        t->P = mc_gb_op(s, MC_B_DIVIDE, E, Z);
        t->psink = mc_gb_op(s, MC_B_DIVIDE, es, Z);
    } else {
        t->P = mc_gb_softmax(s, S, &last, 1, true);
    }
}

/* a (B, Hkv, R, L, X) summed over its R axis, as (B, Hkv, L, X). */
static mc_array *sum_heads(mc_gb *s, mc_array *a, const sdpa_parts *t, int L, int X)
{
    int ax = 2;
    int shape[4] = {t->B, t->Hkv, L, X};
    return mc_gb_reshape(s, mc_gb_sum(s, a, &ax, 1), 4, shape);
}

static int sdpa_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_sdpa_params *p = node->params;
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        sdpa_parts t;
        sdpa_build(&s, node, &t);
        int last = 4, a = argnums[k];
        mc_array *dO = to5(&s, mc_gb_astype(&s, cot, node->dtype), t.B, t.Hkv, t.R, t.Lq, t.Dv), *g = NULL;
        if (a == 2) {
            g = sum_heads(&s, mc_gb_matmul(&s, mc_gb_swap_last(&s, t.P), dO), &t, t.Lk, t.Dv);
        } else if (a == 3 && p->has_mask && node->inputs[3]->dtype == MLX_BOOL) {
            g = mc_gb_zeros_like(&s, node->inputs[3]);
        } else {
            mc_array *dP = mc_gb_matmul(&s, dO, mc_gb_swap_last(&s, t.v5));
            mc_array *rs = mc_gb_sum(&s, mc_gb_op(&s, MC_B_MULTIPLY, dP, t.P), &last, 1);
            mc_array *dS = masked(&s, &t, mc_gb_op(&s, MC_B_MULTIPLY, t.P, mc_gb_op(&s, MC_B_SUBTRACT, dP, rs)));
            if (a == 0) {
                int shape[4] = {t.B, t.Hq, t.Lq, t.D};
                g = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_reshape(&s, mc_gb_matmul(&s, dS, t.k5), 4, shape),
                             mc_gb_scalar(&s, p->scale, node->dtype));
            } else if (a == 1) {
                g = sum_heads(&s, mc_gb_matmul(&s, mc_gb_swap_last(&s, dS), t.qs5), &t, t.Lk, t.D);
            } else if (a == 3 && p->has_mask) {
                int shape[4] = {t.B, t.Hq, t.Lq, t.Lk};
                g = mc_gb_reshape(&s, dS, 4, shape);
            } else {
                /* the sinks: -psink * rs, summed over batch and queries */
                int axes[2] = {0, 3};
                int shape[1] = {t.Hq};
                mc_array *ds = mc_gb_unary(&s, MC_U_NEGATIVE, mc_gb_op(&s, MC_B_MULTIPLY, t.psink, rs));
                g = mc_gb_reshape(&s, mc_gb_sum(&s, ds, axes, 2), 1, shape);
            }
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *sdpa_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_sdpa_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    sdpa_parts t;
    sdpa_build(&s, node, &t);
    mlx_dtype dt = node->dtype;
    mc_array *dS = NULL, *dO = NULL, *dsink = NULL;
    for (int k = 0; k < nargs; k++) {
        mc_array *tg = mc_gb_astype(&s, tans[k], dt), *term = NULL;
        switch (argnums[k]) {
        case 0:
            term = mc_gb_matmul(&s,
                                to5(&s, mc_gb_op(&s, MC_B_MULTIPLY, tg, mc_gb_scalar(&s, p->scale, dt)), t.B,
                                    t.Hkv, t.R, t.Lq, t.D),
                                mc_gb_swap_last(&s, t.k5));
            break;
        case 1: term = mc_gb_matmul(&s, t.qs5, mc_gb_swap_last(&s, to5(&s, tg, t.B, t.Hkv, 1, t.Lk, t.D))); break;
        case 2: {
            mc_array *o = mc_gb_matmul(&s, t.P, to5(&s, tg, t.B, t.Hkv, 1, t.Lk, t.Dv));
            dO = dO ? mc_gb_op(&s, MC_B_ADD, dO, o) : o;
            continue;
        }
        default:
            if (argnums[k] == 3 && p->has_mask) {
                if (node->inputs[3]->dtype != MLX_BOOL)
                    term = to5(&s, tg, t.B, t.Hkv, t.R, t.Lq, t.Lk);
            } else {
                int shape[5] = {1, t.Hkv, t.R, 1, 1};
                dsink = mc_gb_reshape(&s, tg, 5, shape);
            }
            break;
        }
        if (term)
            dS = dS ? mc_gb_op(&s, MC_B_ADD, dS, term) : term;
    }
    if (dS)
        dS = masked(&s, &t, dS);
    if (dS || dsink) {
        int last = 4;
        mc_array *rs = dS ? mc_gb_sum(&s, mc_gb_op(&s, MC_B_MULTIPLY, t.P, dS), &last, 1) : NULL;
        if (dsink) {
            mc_array *r2 = mc_gb_op(&s, MC_B_MULTIPLY, t.psink, dsink);
            rs = rs ? mc_gb_op(&s, MC_B_ADD, rs, r2) : r2;
        }
        mc_array *dP = dS ? mc_gb_op(&s, MC_B_MULTIPLY, t.P, mc_gb_op(&s, MC_B_SUBTRACT, dS, rs))
                          : mc_gb_op(&s, MC_B_MULTIPLY, t.P, mc_gb_unary(&s, MC_U_NEGATIVE, rs));
        mc_array *o = mc_gb_matmul(&s, dP, t.v5);
        dO = dO ? mc_gb_op(&s, MC_B_ADD, dO, o) : o;
    }
    int shape[4] = {t.B, t.Hq, t.Lq, t.Dv};
    mc_array *r = dO ? mc_gb_reshape(&s, dO, 4, shape) : mc_gb_zeros_like(&s, node);
    return mc_gb_finish_ref(&s, r);
}

/* Attention maps over axis 0 of q, k, v and the mask, each batch entry
 * alone: the vmap batch is folded into that axis (an unbatched operand
 * broadcast to it), one attention over B * axis-0 entries. Batched sinks
 * (one value per head for the whole batch) go element by element. */
static int sdpa_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    const mc_sdpa_params *p = node->params;
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), folded = 3 + p->has_mask;
    if (p->has_sinks && axes[n - 1] >= 0)
        return mc_vmap_by_element(out, out_axis, node, in, axes, fn);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *args[5];
    for (int i = 0; i < n; i++) {
        args[i] = in[i];
        if (i >= folded)
            continue;
        const mc_array *t = node->inputs[i];
        int shape[4] = {b * t->shape[0], t->shape[1], t->shape[2], t->shape[3]};
        args[i] = mc_gb_reshape(&s, mc_gb_vmap_front(&s, in[i], axes[i], b), 4, shape);
    }
    mc_array *r = mc_gb_like(&s, node, args, n);
    int oshape[5] = {b, node->shape[0], node->shape[1], node->shape[2], node->shape[3]};
    *out = mc_gb_finish_ref(&s, mc_gb_reshape(&s, r, 5, oshape));
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_sdpa = {
    .name = "ScaledDotProductAttention",
    .arity = MC_ARITY_ANY,
    .infer = sdpa_infer,
    .eval = sdpa_eval,
    .vjp = sdpa_vjp,
    .jvp = sdpa_jvp,
    .vmap = sdpa_vmap,
};
