/* Owns the FFT primitive: MLX's FFT(axes, inverse, real) on complex64 or
 * float32 input, the op (src/ops/fft.c) having cut, padded and converted
 * the input already.
 *
 * Evaluation is one pass per axis over a row-major array, each pass a
 * one-dimensional transform of every line along that axis (fft_plan.c,
 * KissFFT). As pocketfft does for MLX: a real forward transform runs its
 * real pass on the last of axes first, then complex passes on the others;
 * a real inverse runs the complex passes first and its real pass last. The
 * inverse's 1/N (N the product of the complex side's lengths) is applied
 * by the last pass. A pass splits its lines across the pool; each worker
 * takes a slot (a plan it alone runs, and its scratch), reserved before
 * the pass so that nothing fails inside it. A pass of fewer lines than
 * threads with a long plan instead runs its lines in turn, each transform
 * split across the pool by the plan (fft_large.c).
 *
 * Derivatives: MLX's FFT::vjp (the adjoint transform, with the halving or
 * doubling of the frequencies a real transform stores once for two). For
 * the jvp MLX transforms the tangent over all of its axes with default
 * sizes, which is wrong when axes is a subset or an irfft's n is odd; the
 * transform is linear, so here the jvp is the same FFT of the tangent. */
#include <stdatomic.h>
#include <string.h>

#include "graph/build.h"
#include "graph/fft_plan.h"
#include "graph/prims_fft.h"
#include "graph/reduce_view.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"

static int fft_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_fft_params *p = params;
    const mc_array *x = in[0];
    if (p->naxes < 1 || p->naxes > x->ndim)
        return mc_error("[%s] FFT over %d axes of an array with %d dimensions.", fn, p->naxes, x->ndim);
    bool seen[MC_MAX_NDIM] = {false};
    for (int i = 0; i < p->naxes; i++) {
        int ax = p->axes[i];
        if (ax < 0 || ax >= x->ndim || seen[ax])
            return mc_error("[%s] Invalid FFT axis %d for array with %d dimensions.", fn, ax, x->ndim);
        seen[ax] = true;
    }
    mlx_dtype want = p->real && !p->inverse ? MLX_FLOAT32 : MLX_COMPLEX64;
    if (x->dtype != want)
        return mc_error("[%s] FFT expects %s input, got %s.", fn, mc_dtype_name(want), mc_dtype_name(x->dtype));
    out->dtype = p->real && p->inverse ? MLX_FLOAT32 : MLX_COMPLEX64;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    int last = p->axes[p->naxes - 1];
    if (p->real && !p->inverse) {
        out->shape[last] = x->shape[last] / 2 + 1;
    } else if (p->real) {
        if (p->n_last < 1 || x->shape[last] != p->n_last / 2 + 1)
            return mc_error("[%s] A real inverse FFT of length %d needs %d frequencies, got %d.", fn, p->n_last,
                            p->n_last / 2 + 1, x->shape[last]);
        out->shape[last] = p->n_last;
    }
    return 0;
}

/* ---- one pass: a 1-D transform of every line along an axis ---- */

typedef struct fft_pass {
    mc_fft_plan **plans; /* one per slot */
    atomic_int *busy;    /* slot taken */
    int nslots;
    int workers;    /* threads one transform may use (wide plans, few lines) */
    float *scratch; /* nslots * slot_floats */
    size_t slot_floats;
    size_t group; /* strided lines gathered together */
    const float *src;
    float *dst;
    size_t inner;
    int nin, nout; /* line lengths, in elements */
    int win, wout; /* floats per element: 2 complex, 1 real */
    float scale;
} fft_pass;

/* Lines along an inner axis are strided: neighbouring lines (adjacent in
 * memory) are gathered and scattered together, so that each row of the
 * array is read and written as whole cache lines, MC_FFT_GROUP_BYTES of
 * it at a time (fewer page walks per element on a long stride). Rows a
 * page or more apart defeat the hardware prefetcher, and one row at a time
 * is latency-bound: the row MC_FFT_PREFETCH_ROWS ahead is prefetched.
 * (Measured on the first axis of 1000 x 1000 complex64: 128 bytes and no
 * prefetch, the gather and scatter took a third of the pass.) */
enum { MC_FFT_GROUP_BYTES = 256, MC_FFT_PREFETCH_ROWS = 16 };

typedef struct fft_pair {
    float r, i;
} fft_pair;

/* g elements of each of len rows (row t at src + t * stride floats) into g
 * contiguous lines of len elements each (line q at dst + q * len * w). */
static void gather(float *dst, const float *src, size_t stride, int len, size_t g, size_t w)
{
    if (w == 2) {
        fft_pair *d = (fft_pair *)(void *)dst;
        for (int t = 0; t < len; t++) {
            const fft_pair *row = (const fft_pair *)(const void *)(src + (size_t)t * stride);
            if (t + MC_FFT_PREFETCH_ROWS < len)
                for (size_t q = 0; q < g * sizeof *row; q += 64)
                    __builtin_prefetch((const char *)(row + MC_FFT_PREFETCH_ROWS * stride / 2) + q);
            for (size_t q = 0; q < g; q++)
                d[q * (size_t)len + (size_t)t] = row[q];
        }
        return;
    }
    for (int t = 0; t < len; t++) {
        const float *row = src + (size_t)t * stride;
        for (size_t q = 0; q < g; q++)
            dst[q * (size_t)len + (size_t)t] = row[q];
    }
}

/* The reverse of gather, each value times scale. */
static void scatter(float *dst, const float *src, size_t stride, int len, size_t g, size_t w, float scale)
{
    if (w == 2 && scale == 1.0f) {
        const fft_pair *s = (const fft_pair *)(const void *)src;
        for (int t = 0; t < len; t++) {
            fft_pair *row = (fft_pair *)(void *)(dst + (size_t)t * stride);
            if (t + MC_FFT_PREFETCH_ROWS < len)
                for (size_t q = 0; q < g * sizeof *row; q += 64)
                    __builtin_prefetch((char *)(row + MC_FFT_PREFETCH_ROWS * stride / 2) + q, 1);
            for (size_t q = 0; q < g; q++)
                row[q] = s[q * (size_t)len + (size_t)t];
        }
        return;
    }
    for (int t = 0; t < len; t++) {
        float *row = dst + (size_t)t * stride;
        for (size_t q = 0; q < g; q++)
            for (size_t c = 0; c < w; c++)
                row[q * w + c] = src[(q * (size_t)len + (size_t)t) * w + c] * scale;
    }
}

static void pass_range(void *ctx, size_t b, size_t e)
{
    fft_pass *j = ctx;
    int k = 0;
    while (atomic_exchange_explicit(&j->busy[k], 1, memory_order_acquire))
        k = (k + 1) % j->nslots;
    size_t inner = j->inner, win = (size_t)j->win, wout = (size_t)j->wout;
    size_t lin_f = (size_t)j->nin * win, lout_f = (size_t)j->nout * wout;
    float *slot = j->scratch + (size_t)k * j->slot_floats;
    for (size_t l = b; l < e;) {
        size_t o = l / inner, i = l % inner;
        const float *sl = j->src + (o * (size_t)j->nin * inner + i) * win;
        float *dl = j->dst + (o * (size_t)j->nout * inner + i) * wout;
        if (inner == 1) {
            const float *lin = sl;
            float *work = slot;
            if ((const float *)j->dst == j->src) {
                memcpy(slot, sl, sizeof(float) * lin_f);
                lin = slot;
                work = slot + lin_f;
            }
            mc_fft_plan_run(j->plans[k], lin, dl, work, j->workers);
            if (j->scale != 1.0f)
                for (size_t t = 0; t < lout_f; t++)
                    dl[t] *= j->scale;
            l++;
            continue;
        }
        /* g lines i .. i+g-1 of the same outer index */
        size_t g = inner - i < e - l ? inner - i : e - l;
        if (g > j->group)
            g = j->group;
        float *bin = slot, *bout = bin + j->group * lin_f, *work = bout + j->group * lout_f;
        gather(bin, sl, inner * win, j->nin, g, win);
        for (size_t q = 0; q < g; q++)
            mc_fft_plan_run(j->plans[k], bin + q * lin_f, bout + q * lout_f, work, 1);
        scatter(dl, bout, inner * wout, j->nout, g, wout, j->scale);
        l += g;
    }
    atomic_store_explicit(&j->busy[k], 0, memory_order_release);
}

/* Transforms every line along axis `ax` of src (row-major, shape with
 * len_in on ax) into dst (len_out on ax): kind/inverse choose the plan of
 * length n, scale multiplies the result. src may equal dst.
 *
 * Many lines are split across the pool, each transform on one thread;
 * fewer lines than threads of a wide plan (one long transform) run one
 * after another, each transform split across the pool. */
static int run_pass(const float *src, float *dst, int ndim, const int *shape, int ax, int len_in, int len_out,
                    int n, mc_fft_kind kind, bool inverse, float scale, const char *fn)
{
    size_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++)
        outer *= (size_t)shape[d];
    for (int d = ax + 1; d < ndim; d++)
        inner *= (size_t)shape[d];
    size_t lines = outer * inner;
    if (lines == 0)
        return 0;
    /* at least ~64K floats of work per chunk */
    size_t grain = 65536 / ((size_t)n * 2) + 1;
    size_t chunks = (lines + grain - 1) / grain;
    int threads = mc_pool_threads();
    fft_pass j;
    memset(&j, 0, sizeof j);
    j.src = src;
    j.dst = dst;
    j.inner = inner;
    j.nin = len_in;
    j.nout = len_out;
    j.win = kind == MC_FFT_R2C ? 1 : 2;
    j.wout = kind == MC_FFT_C2R ? 1 : 2;
    j.scale = scale;
    j.workers = 1;
    int rc = 0;
    mc_buffer *scratch = NULL;
    mc_fft_plan *first = mc_fft_plan_get(n, kind, inverse, fn);
    if (!first)
        return 1;
    bool wide = threads > 1 && lines < (size_t)threads && mc_fft_plan_wide(first);
    int nslots = wide ? 1 : chunks < (size_t)threads ? (int)chunks : threads;
    if (nslots < 1)
        nslots = 1;
    if (wide)
        j.workers = threads;
    j.nslots = nslots;
    j.plans = mc_xcalloc((size_t)nslots, sizeof *j.plans);
    j.busy = mc_xcalloc((size_t)nslots, sizeof *j.busy);
    if (!j.plans || !j.busy) {
        mc_fft_plan_put(first);
        rc = mc_error_oom(fn, sizeof *j.plans * (size_t)nslots);
        goto done;
    }
    j.plans[0] = first;
    for (int k = 0; k < nslots; k++) {
        if (k > 0 && !(j.plans[k] = mc_fft_plan_get(n, kind, inverse, fn))) {
            rc = 1;
            goto done;
        }
        atomic_init(&j.busy[k], 0);
    }
    size_t lin_f = (size_t)len_in * (size_t)j.win, lout_f = (size_t)len_out * (size_t)j.wout;
    j.group = MC_FFT_GROUP_BYTES / (sizeof(float) * (size_t)(j.win < j.wout ? j.win : j.wout));
    j.slot_floats = (inner == 1 ? lin_f : j.group * (lin_f + lout_f)) + 2 * mc_fft_plan_scratch(first, j.workers);
    /* from the buffer cache: a long transform's scratch is megabytes, whose
     * pages a fresh allocation would fault in on every call */
    scratch = mc_buffer_alloc(sizeof(float) * j.slot_floats * (size_t)nslots);
    if (!scratch) {
        rc = mc_error_oom(fn, sizeof(float) * j.slot_floats * (size_t)nslots);
        goto done;
    }
    j.scratch = scratch->data;
    if (wide)
        pass_range(&j, 0, lines);
    else
        mc_parallel_for(lines, grain, pass_range, &j);
done:
    if (scratch)
        mc_buffer_release(scratch);
    if (j.plans)
        for (int k = 0; k < nslots; k++)
            mc_fft_plan_put(j.plans[k]);
    free(j.plans);
    free((void *)j.busy);
    return rc;
}

static int fft_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    static const char fn[] = "fft";
    const mc_fft_params *p = params;
    mc_array *x = in[0];
    mc_buffer *copy = NULL, *tmp = NULL;
    const float *xd = x->data;
    bool rows = (x->flags & MC_FLAG_ROW_CONTIG) != 0;
    if (!rows && mc_red_copy_rowmajor(x, &copy, fn))
        return 1;
    if (copy)
        xd = copy->data;
    bool c2c = !p->real;
    mc_array *cands[1] = {x};
    int rc = mc_out_alloc(out, cands, c2c && rows ? 1 : 0, fn);
    if (rc || out->size == 0)
        goto done;
    int nd = x->ndim, last = p->axes[p->naxes - 1];
    /* the inverse's 1/N over the complex side's lengths */
    const int *cshape = p->real && p->inverse ? out->shape : x->shape;
    double total = 1;
    for (int i = 0; i < p->naxes; i++)
        total *= cshape[p->axes[i]];
    float scale = p->inverse ? 1.0f / (float)total : 1.0f;
    float *od = out->data;
    if (c2c) {
        for (int i = 0; i < p->naxes && !rc; i++) {
            int ax = p->axes[i];
            rc = run_pass(i == 0 ? xd : od, od, nd, x->shape, ax, x->shape[ax], x->shape[ax], x->shape[ax],
                          MC_FFT_C2C, p->inverse, i == p->naxes - 1 ? scale : 1.0f, fn);
        }
    } else if (!p->inverse) {
        int len = x->shape[last];
        rc = run_pass(xd, od, nd, x->shape, last, len, len / 2 + 1, len, MC_FFT_R2C, false, 1.0f, fn);
        for (int i = 0; i + 1 < p->naxes && !rc; i++) {
            int ax = p->axes[i];
            rc = run_pass(od, od, nd, out->shape, ax, out->shape[ax], out->shape[ax], out->shape[ax], MC_FFT_C2C,
                          false, 1.0f, fn);
        }
    } else {
        const float *src = xd;
        if (p->naxes > 1) {
            size_t nbytes = x->size * mc_dtype_size(x->dtype);
            tmp = mc_buffer_alloc(nbytes);
            if (!tmp) {
                rc = mc_error_oom(fn, nbytes);
                goto done;
            }
            for (int i = 0; i + 1 < p->naxes && !rc; i++) {
                int ax = p->axes[i];
                rc = run_pass(i == 0 ? xd : tmp->data, tmp->data, nd, x->shape, ax, x->shape[ax], x->shape[ax],
                              x->shape[ax], MC_FFT_C2C, true, 1.0f, fn);
            }
            src = tmp->data;
        }
        if (!rc)
            rc = run_pass(src, od, nd, x->shape, last, x->shape[last], p->n_last, p->n_last, MC_FFT_C2R, true,
                          scale, fn);
    }
done:
    if (tmp)
        mc_buffer_release(tmp);
    if (copy)
        mc_buffer_release(copy);
    return rc;
}

/* ---- derivatives ---- */

/* An FFT node of a over p's axes with the direction, kind and length given. */
static mc_array *fft_of(mc_gb *s, mc_array *a, const mc_fft_params *p, bool inverse, bool real, int n_last)
{
    if (s->failed || !a)
        return NULL;
    mc_fft_params q = *p;
    q.inverse = inverse;
    q.real = real;
    q.n_last = real && inverse ? n_last : 0;
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_FFT, &a, 1, &q, sizeof q));
}

/* v_edge at the zero frequency (and at the Nyquist one when the real
 * length n is even), v_mid elsewhere, as a (1, ..., h, ..., 1) array of
 * dtype along the last axis: the weights of the frequencies a real
 * transform stores once for the two it stands for. */
static mc_array *edge_mask(mc_gb *s, const mc_fft_params *p, int ndim, int n, double v_edge, double v_mid,
                           mlx_dtype dtype)
{
    int h = n / 2 + 1, last = p->axes[p->naxes - 1];
    mc_array *idx = mc_gb_iota(s, h, last, ndim);
    mc_array *lo = mc_gb_op(s, MC_B_GREATER, idx, mc_gb_scalar(s, 0, MLX_INT32));
    mc_array *hi = mc_gb_op(s, MC_B_LESS, idx, mc_gb_scalar(s, h - 1 + n % 2, MLX_INT32));
    mc_array *mid = mc_gb_binary(s, MC_B_LOGICAL_AND, lo, hi, MLX_BOOL);
    return mc_gb_where(s, mid, mc_gb_scalar(s, v_mid, dtype), mc_gb_scalar(s, v_edge, dtype));
}

static int fft_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_fft_params *p = node->params;
    mc_array *x = node->inputs[0];
    int last = p->axes[p->naxes - 1];
    /* N: the product of the lengths on the complex-to-complex side */
    const mc_array *side = p->inverse ? cot : x;
    double total = 1;
    for (int i = 0; i < p->naxes; i++)
        total *= side->shape[p->axes[i]];
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g;
    if (p->real && p->inverse) {
        /* the forward real transform of the cotangent, each stored
         * frequency counted twice but for the edges, over N */
        int n = p->n_last;
        mc_array *f = fft_of(&s, cot, p, false, true, 0);
        g = mc_gb_op(&s, MC_B_MULTIPLY, f, edge_mask(&s, p, x->ndim, n, 1.0 / total, 2.0 / total, MLX_COMPLEX64));
    } else if (p->real) {
        int n = x->shape[last];
        mc_array *half = edge_mask(&s, p, x->ndim, n, 1.0, 0.5, MLX_COMPLEX64);
        mc_array *f = fft_of(&s, mc_gb_op(&s, MC_B_MULTIPLY, cot, half), p, true, true, n);
        g = mc_gb_op(&s, MC_B_MULTIPLY, f, mc_gb_scalar(&s, total, MLX_FLOAT32));
    } else {
        mc_array *f = fft_of(&s, cot, p, !p->inverse, false, 0);
        g = mc_gb_op(&s, MC_B_MULTIPLY, f, mc_gb_scalar(&s, p->inverse ? 1.0 / total : total, MLX_COMPLEX64));
    }
    return mc_vjp_store(vjps, 0, &s, mc_gb_astype(&s, g, x->dtype));
}

static mc_array *fft_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *t = mc_gb_astype(&s, tans[0], node->inputs[0]->dtype);
    return mc_gb_finish_ref(&s, mc_gb_like(&s, node, &t, 1));
}

/* vmap: the batch first, the transformed axes shifted past it. */
static int fft_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                    const char *fn)
{
    mc_fft_params q;
    mc_vmap_params(&q, sizeof q, node);
    for (int i = 0; i < q.naxes; i++)
        q.axes[i]++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_fft = {
    .name = "FFT",
    .arity = 1,
    .infer = fft_infer,
    .eval = fft_eval,
    .vjp = fft_vjp,
    .jvp = fft_jvp,
    .vmap = fft_vmap,
};
