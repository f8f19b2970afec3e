/* Owns the quantization primitives Quantize, Dequantize, QuantizedMatmul
 * and QQMatmul (prims_quant.h): their shape rules, evaluation through
 * simd/quant.h's kernels, and MLX 0.31.1's derivative rules, in the affine
 * and the floating point modes (mxfp4, mxfp8, nvfp4).
 *
 * QuantizedMatmul runs two ways. With few rows of x (decoding: M below
 * QMM_SMALL_M) x is prepared for the register-unpacking dot kernel once,
 * then every thread claims small blocks of W's rows until none are left,
 * so W is streamed once and a preempted thread delays only its block. With more rows it dequantizes a tile of W
 * (up to 4 MiB of float32: wide enough that sgemm repacks x rarely, small
 * enough for the last-level cache) and hands it to sgemm, so the unpacking
 * is paid once per weight however large M is. Either way the work is
 * split over W's rows (or column groups) across the worker pool, each
 * worker with its own scratch slot. Computation is in float32;
 * float16/bfloat16 operands are converted on entry and the result on
 * exit.
 *
 * The jvp of QuantizedMatmul has a rule for affine scales and biases,
 * where MLX has none (it raises). QQMatmul quantizes and dequantizes x's
 * rows (and W's, when W is given as floats) with MLX's CPU kernel, then
 * multiplies; it takes no global scales, which MLX's CPU evaluation does
 * not read either. */
#include <stdatomic.h>
#include <string.h>

#include "graph/blas.h"
#include "graph/build.h"
#include "graph/prims_quant.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/quant.h"
#include "simd/simd.h"

/* Rows of x up to which the dot kernel beats dequantize + sgemm. */
enum { QMM_SMALL_M = 8 };
/* Floats in one dequantized tile (4 MiB). */
enum { QMM_TILE_FLOATS = 1 << 20 };

static const char *const qmode_names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

/* nvfp4's scales are encoded against the global scale g as 448 * 6 / g. */
static const float NVFP4_ENCODE = 448.0f * 6.0f;

/* ---- scratch memory ---- */

typedef struct scratch {
    void *p;
    size_t nbytes;
} scratch;

static void *scratch_take(scratch *s, size_t nbytes, const char *fn)
{
    s->p = mc_data_alloc(nbytes);
    s->nbytes = nbytes;
    if (!s->p)
        mc_error_oom(fn, nbytes);
    return s->p;
}

static void scratch_drop(scratch *s)
{
    if (s->p)
        mc_data_free(s->p, s->nbytes);
    s->p = NULL;
}

/* x's elements row-major in dtype ct: x's own data when it already is,
 * else a converted copy in s. NULL with an error reported. */
static const void *dense(const mc_array *x, mlx_dtype ct, scratch *s, const char *fn)
{
    if (x->dtype == ct && (x->flags & MC_FLAG_ROW_CONTIG))
        return x->data;
    size_t isz = mc_dtype_size(ct);
    if (!scratch_take(s, (x->size ? x->size : 1) * isz, fn))
        return NULL;
    mc_convert_kernel k = mc_kernels()->convert[x->dtype][ct];
    if (!k) {
        mc_error("[%s] Cannot convert %s to %s.", fn, mc_dtype_name(x->dtype), mc_dtype_name(ct));
        return NULL;
    }
    int64_t st[MC_MAX_NDIM];
    mc_row_strides(x->ndim, x->shape, st);
    mc_unary_strided(k, mc_dtype_size(x->dtype), isz, x->data, x->strides, s->p, st, x->ndim, x->shape);
    return s->p;
}

/* ---- Quantize ---- */

static const char *quantize_name(const void *params)
{
    static const char *const names[] = {"Quantize(w)", "Quantize(scales)", "Quantize(biases)"};
    return names[((const mc_quant_params *)params)->which];
}

static int quantize_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_quant_params *p = params;
    const mc_array *w = in[0];
    bool fp = p->mode != MC_QMODE_AFFINE;
    if (w->ndim < 2 || w->shape[w->ndim - 1] % p->group_size != 0 || n > (p->mode == MC_QMODE_NVFP4 ? 2 : 1) ||
        (fp && p->which > 1))
        return mc_error("[%s] Internal: Quantize of shape rank %d.", fn, w->ndim);
    out->ndim = w->ndim;
    memcpy(out->shape, w->shape, sizeof(int) * (size_t)w->ndim);
    int k = w->shape[w->ndim - 1];
    out->shape[w->ndim - 1] = p->which == 0 ? k * p->bits / 32 : k / p->group_size;
    out->dtype = p->which == 0 ? MLX_UINT32 : fp ? MLX_UINT8 : w->dtype;
    return 0;
}

typedef struct quantize_job {
    const void *w;
    int dtype, gs, bits, fp;
    float encode; /* nvfp4 */
    uint8_t *packed;
    void *scales, *biases;
} quantize_job;

static void quantize_range(void *ctx, size_t g0, size_t g1)
{
    const quantize_job *j = ctx;
    if (j->fp)
        mc_quant_fp(j->w, j->dtype, g0, g1, j->gs, j->bits, j->encode, j->packed, j->scales);
    else
        mc_quant_affine(j->w, j->dtype, g0, g1, j->gs, j->bits, j->packed, j->scales, j->biases);
}

/* The float32 value of a one-element array (a global scale). */
static int scalar_f32(const mc_array *a, float *v, const char *fn)
{
    scratch s = {0};
    const float *d = dense(a, MLX_FLOAT32, &s, fn);
    if (d)
        *v = d[0];
    scratch_drop(&s);
    return d == NULL;
}

static int quantize_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    static const char fn[] = "quantize";
    const mc_quant_params *p = params;
    const mc_array *w = in[0];
    size_t groups = w->size / (size_t)p->group_size;
    bool fp = p->mode != MC_QMODE_AFFINE;
    size_t isz = fp ? 1 : mc_dtype_size(w->dtype);
    float g = 0.0f;
    if (n > 1 && scalar_f32(in[1], &g, fn))
        return 1;
    /* the kernel writes all three outputs: those this node is not go to
     * scratch */
    size_t sizes[3] = {groups * (size_t)p->group_size * (size_t)p->bits / 8, groups * isz, groups * isz};
    scratch sw = {0}, tmp[3] = {{0}};
    void *dst[3];
    int rc = 1;
    if (mc_array_alloc_data(out, fn))
        return 1;
    const void *wd = dense(w, w->dtype, &sw, fn);
    if (!wd)
        goto done;
    for (int i = 0; i < 3; i++) {
        dst[i] = i == p->which ? out->data : scratch_take(&tmp[i], sizes[i] + 1, fn);
        if (!dst[i])
            goto done;
    }
    quantize_job j = {wd,     w->dtype, p->group_size, p->bits, fp, n > 1 ? NVFP4_ENCODE / g : 1.0f,
                      dst[0], dst[1],   dst[2]};
    mc_parallel_for(groups, 1024, quantize_range, &j);
    rc = 0;
done:
    scratch_drop(&sw);
    for (int i = 0; i < 3; i++)
        scratch_drop(&tmp[i]);
    return rc;
}

/* ---- vmap ---- */

/* Quantize and Dequantize act on groups of the last axis, each row alone:
 * with the batch first on w, its scales and biases (an unbatched one
 * broadcast to the batch) the batch is more rows, one node. nvfp4's global
 * scale is one value for every row: a batched one goes element by
 * element. */
static int quant_rows_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                           const char *fn)
{
    const mc_quant_params *p = node->params;
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n);
    int rows = node->prim == MC_PRIM_QUANTIZE ? 1 : p->mode == MC_QMODE_AFFINE ? 3 : 2;
    for (int i = rows; i < n; i++)
        if (axes[i] >= 0)
            return mc_vmap_by_element(out, out_axis, node, in, axes, fn);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *args[3];
    for (int i = 0; i < n && i < 3; i++)
        args[i] = i < rows ? mc_gb_vmap_front(&s, in[i], axes[i], b) : in[i];
    *out = mc_gb_finish_ref(&s, mc_gb_like(&s, node, args, n));
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_quantize = {
    .name = "Quantize",
    .arity = MC_ARITY_ANY,
    .infer = quantize_infer,
    .eval = quantize_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .name_of = quantize_name,
    .vmap = quant_rows_vmap,
};

/* ---- Dequantize ---- */

static int dequantize_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_quant_params *p = params;
    const mc_array *w = in[0], *s = in[1];
    bool fp = p->mode != MC_QMODE_AFFINE;
    bool ok = fp ? s->dtype == MLX_UINT8 && (n == 2 || (n == 3 && p->mode == MC_QMODE_NVFP4))
                 : n == 3 && s->dtype == in[2]->dtype;
    if (w->dtype != MLX_UINT32 || !ok || w->ndim < 1)
        return mc_error("[%s] Internal: Dequantize of %s with %s scales.", fn, mc_dtype_name(w->dtype),
                        mc_dtype_name(s->dtype));
    out->ndim = w->ndim;
    memcpy(out->shape, w->shape, sizeof(int) * (size_t)w->ndim);
    out->shape[w->ndim - 1] = (int)((int64_t)w->shape[w->ndim - 1] * 32 / p->bits);
    /* a float32 global scale promotes the product */
    out->dtype = !fp ? s->dtype : n == 3 ? MLX_FLOAT32 : (mlx_dtype)p->dtype;
    return 0;
}

typedef struct dequantize_job {
    const uint8_t *w;
    const void *scales, *biases;
    int sdtype, gs, bits;
    const float *inv_encode; /* fp modes: NULL, or nvfp4's with a global scale */
    void *out;
} dequantize_job;

static void dequantize_range(void *ctx, size_t g0, size_t g1)
{
    const dequantize_job *j = ctx;
    if (!j->biases)
        mc_dequant_fp(j->w, j->scales, j->gs, j->bits, g0, g1, j->sdtype, j->inv_encode, j->out);
    else
        mc_dequant_affine(j->w, j->scales, j->biases, j->sdtype, g0, g1, j->gs, j->bits, j->out);
}

static int dequantize_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    static const char fn[] = "dequantize";
    const mc_quant_params *p = params;
    bool fp = p->mode != MC_QMODE_AFFINE;
    scratch sw = {0}, ss = {0}, sb = {0};
    float inv = 0.0f;
    int rc = 1;
    if (mc_array_alloc_data(out, fn))
        return 1;
    const void *w = dense(in[0], MLX_UINT32, &sw, fn);
    const void *s = w ? dense(in[1], fp ? MLX_UINT8 : out->dtype, &ss, fn) : NULL;
    const void *b = s && !fp ? dense(in[2], out->dtype, &sb, fn) : NULL;
    if (fp && n == 3 && s && !scalar_f32(in[2], &inv, fn))
        inv /= NVFP4_ENCODE;
    else if (fp && n == 3)
        s = NULL;
    if (b || (fp && s)) {
        dequantize_job j = {w,
                            s,
                            b,
                            fp ? (int)p->dtype : (int)out->dtype,
                            p->group_size,
                            p->bits,
                            n == 3 && fp ? &inv : NULL,
                            out->data};
        mc_parallel_for(out->size / (size_t)p->group_size, 1024, dequantize_range, &j);
        rc = 0;
    }
    scratch_drop(&sw);
    scratch_drop(&ss);
    scratch_drop(&sb);
    return rc;
}

mc_array *mc_node_dequantize(mc_array *w, mc_array *scales, mc_array *biases, int group_size, int bits,
                             const char *fn)
{
    mc_quant_params p = {0};
    p.group_size = group_size;
    p.bits = bits;
    mc_array *in[3] = {w, scales, biases};
    return mc_node_new(fn, MC_PRIM_DEQUANTIZE, in, 3, &p, sizeof p);
}

/* x (..., G * gs) viewed as (..., G, gs). */
static mc_array *split_groups(mc_gb *s, mc_array *x, int gs)
{
    if (!x)
        return NULL;
    int shape[MC_MAX_NDIM];
    memcpy(shape, x->shape, sizeof(int) * (size_t)x->ndim);
    shape[x->ndim - 1] = x->shape[x->ndim - 1] / gs;
    shape[x->ndim] = gs;
    return mc_gb_reshape(s, x, x->ndim + 1, shape);
}

/* d (..., G * gs) summed over each group, shaped as like (..., G). */
static mc_array *group_sums(mc_gb *s, mc_array *d, int gs, const mc_array *like)
{
    mc_array *g = split_groups(s, d, gs);
    if (!g)
        return NULL;
    int axis = g->ndim - 1;
    return mc_gb_reshape(s, mc_gb_sum(s, g, &axis, 1), like->ndim, like->shape);
}

/* The codes of w as values of like's dtype (w dequantized with unit scales
 * and zero biases), held by s. */
static mc_array *codes_of(mc_gb *s, mc_array *w, const mc_array *scales, const mc_quant_params *p)
{
    mc_array *one = mc_gb_full_like(s, 1.0, scales->dtype, scales);
    mc_array *zero = mc_gb_full_like(s, 0.0, scales->dtype, scales);
    if (!one || !zero)
        return NULL;
    return mc_gb_hold(s, mc_node_dequantize(w, one, zero, p->group_size, p->bits, s->fn));
}

/* nvfp4's dequantized values per unit of global scale (float32): the
 * node's own inputs with the global scale 1. */
static mc_array *per_unit_global(mc_gb *s, mc_array *node)
{
    mc_array *one = mc_gb_full_like(s, 1.0, MLX_FLOAT32, node->inputs[2]);
    mc_array *in[3] = {node->inputs[0], node->inputs[1], one};
    return one ? mc_gb_hold(s,
                            mc_node_new(s->fn, MC_PRIM_DEQUANTIZE, in, 3, node->params, sizeof(mc_quant_params)))
               : NULL;
}

/* The global scale's cotangent: cot times the values per unit of it,
 * summed to its shape. */
static mc_array *global_scale_cot(mc_gb *s, mc_array *node, mc_array *cot)
{
    mc_array *gs = node->inputs[2];
    mc_array *prod = mc_gb_op(s, MC_B_MULTIPLY, mc_gb_astype(s, cot, MLX_FLOAT32), per_unit_global(s, node));
    return mc_gb_sum_to_shape(s, prod, gs->ndim, gs->shape);
}

/* out = codes * scales + biases: d/dscales = sum over the group of cot *
 * codes, d/dbiases = sum of cot; w (integer) gets zeros, as MLX's
 * composition of ops gives it, and so do the fp modes' integer inputs;
 * nvfp4's global scale g enters as a factor g / (448 * 6), so its
 * gradient is the sum of cot times the values dequantized with g = 1. */
static int dequantize_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                          const char *fn)
{
    const mc_quant_params *p = node->params;
    mc_array *w = node->inputs[0], *sc = node->inputs[1];
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (p->mode != MC_QMODE_AFFINE && argnums[k] == 2)
            g = global_scale_cot(&s, node, cot);
        else if (argnums[k] == 0 || p->mode != MC_QMODE_AFFINE)
            g = mc_gb_zeros_like(&s, node->inputs[argnums[k]]);
        else if (argnums[k] == 1)
            g = group_sums(&s, mc_gb_op(&s, MC_B_MULTIPLY, cot, codes_of(&s, w, sc, p)), p->group_size, sc);
        else
            g = group_sums(&s, cot, p->group_size, node->inputs[2]);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* t (..., G) repeated over each group: (..., G * gs). */
static mc_array *expand_groups(mc_gb *s, mc_array *t, int gs)
{
    if (!t)
        return NULL;
    int shape[MC_MAX_NDIM];
    memcpy(shape, t->shape, sizeof(int) * (size_t)t->ndim);
    shape[t->ndim] = 1;
    mc_array *t1 = mc_gb_reshape(s, t, t->ndim + 1, shape);
    shape[t->ndim] = gs;
    mc_array *b = mc_gb_broadcast(s, t1, t->ndim + 1, shape);
    shape[t->ndim - 1] = t->shape[t->ndim - 1] * gs;
    return mc_gb_reshape(s, b, t->ndim, shape);
}

static mc_array *dequantize_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                                const char *fn)
{
    const mc_quant_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    for (int k = 0; k < nargs; k++) {
        mc_array *t = NULL;
        if (p->mode != MC_QMODE_AFFINE) {
            /* only the global scale has a tangent: a scalar factor */
            static const int scalar[1] = {0};
            if (argnums[k] == 2)
                t = mc_gb_op(&s, MC_B_MULTIPLY, per_unit_global(&s, node),
                             mc_gb_reshape(&s, mc_gb_astype(&s, tans[k], MLX_FLOAT32), 0, scalar));
        } else if (argnums[k] == 1)
            t = mc_gb_op(&s, MC_B_MULTIPLY, codes_of(&s, node->inputs[0], node->inputs[1], p),
                         expand_groups(&s, tans[k], p->group_size));
        else if (argnums[k] == 2)
            t = expand_groups(&s, tans[k], p->group_size);
        if (t)
            r = r ? mc_gb_op(&s, MC_B_ADD, r, t) : t;
    }
    if (!r && !s.failed)
        r = mc_gb_zeros_like(&s, node);
    return mc_gb_finish_ref(&s, r);
}

const mc_prim_info mc_prim_dequantize = {
    .name = "Dequantize",
    .arity = MC_ARITY_ANY,
    .infer = dequantize_infer,
    .eval = dequantize_eval,
    .vjp = dequantize_vjp,
    .jvp = dequantize_jvp,
    .vmap = quant_rows_vmap,
};

/* ---- QuantizedMatmul ---- */

static int qmm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_quant_params *p = params;
    const mc_array *x = in[0], *w = in[1];
    bool ok = p->mode == MC_QMODE_AFFINE ? n == 4 && in[2]->dtype == x->dtype && in[3]->dtype == x->dtype
                                         : n == 3 && in[2]->dtype == MLX_UINT8 && mc_dtype_is_float(x->dtype);
    if (x->ndim < 1 || w->ndim < 2 || w->dtype != MLX_UINT32 || !ok)
        return mc_error("[%s] Internal: QuantizedMatmul of unchecked inputs.", fn);
    int wlast = (int)((int64_t)w->shape[w->ndim - 1] * 32 / p->bits);
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    out->shape[x->ndim - 1] = p->transpose ? w->shape[w->ndim - 2] : wlast;
    out->dtype = x->dtype;
    return 0;
}

/* Scratch slots for the workers of one product: a worker takes a free slot
 * for the length of its chunk. At most mc_pool_threads() chunks run at
 * once, so with that many slots a free one always exists. */
typedef struct slots {
    int n;
    size_t floats;
    float **mem;
    atomic_int *busy;
} slots;

static int slots_init(slots *s, int n, size_t floats, const char *fn)
{
    s->n = n;
    s->floats = floats ? floats : 1;
    s->mem = mc_xcalloc((size_t)n, sizeof *s->mem);
    s->busy = mc_xcalloc((size_t)n, sizeof *s->busy);
    if (!s->mem || !s->busy)
        return mc_error_oom(fn, (size_t)n * sizeof *s->mem);
    for (int i = 0; i < n; i++) {
        s->mem[i] = mc_data_alloc(s->floats * sizeof(float));
        if (!s->mem[i])
            return mc_error_oom(fn, s->floats * sizeof(float));
    }
    return 0;
}

static void slots_free(slots *s)
{
    for (int i = 0; s->mem && i < s->n; i++)
        if (s->mem[i])
            mc_data_free(s->mem[i], s->floats * sizeof(float));
    mc_xfree(s->mem);
    mc_xfree(s->busy);
}

static int slot_take(slots *s)
{
    for (;;)
        for (int i = 0; i < s->n; i++)
            if (!atomic_exchange_explicit(&s->busy[i], 1, memory_order_acquire))
                return i;
}

static void slot_give(slots *s, int i) { atomic_store_explicit(&s->busy[i], 0, memory_order_release); }

/* One product: out (M x N, row-major) = x (M x K) against the packed q. */
typedef struct qmm_job {
    const mc_qmat *q;
    const float *x;
    float *out;
    int M, N, K;
    int tile; /* rows (transposed W) or column groups per dequantized tile */
    slots sl;
    /* decoding: x prepared once, W's rows claimed block by block */
    const float *prep;
    size_t block;
    atomic_size_t next;
} qmm_job;

/* One thread's part of the decode product: blocks of W's rows claimed
 * until none are left. Claiming small blocks rather than taking a fixed
 * share keeps both cores busy to the end when one of them is preempted
 * (on a loaded machine a fixed share waits for the slowest thread). */
static void qmm_gemv_worker(void *ctx, size_t t0, size_t t1)
{
    (void)t0, (void)t1;
    qmm_job *j = ctx;
    int i = slot_take(&j->sl);
    for (;;) {
        size_t n0 = atomic_fetch_add_explicit(&j->next, j->block, memory_order_relaxed);
        if (n0 >= (size_t)j->N)
            break;
        size_t n1 = n0 + j->block < (size_t)j->N ? n0 + j->block : (size_t)j->N;
        mc_qgemv_t_rows(j->q, j->K, j->x, j->M, (size_t)j->K, j->prep, j->out, (size_t)j->N, (int)n0, (int)n1,
                        j->sl.mem[i]);
    }
    slot_give(&j->sl, i);
}

/* Packed bytes of W per claimed block of the decode product: big enough
 * that claiming costs nothing and each thread reads long contiguous runs
 * (the hardware prefetchers' streams; 32 KiB blocks decoded mxfp4 about 5%
 * slower at best), small enough that a preempted thread holds back little
 * (256 KiB stream in about 20 microseconds). Blocks are whole multiples of
 * 16 rows, so two threads never write one cache line of out. */
enum { QMM_BLOCK_BYTES = 256 << 10, QMM_BLOCK_ROWS = 16 };

/* The decode product: x prepared once (reordered for the kernel, or its
 * group sums), then every thread of the pool claims blocks of rows. */
static int qmm_decode(const mc_qmat *q, const float *x, int M, int N, int K, float *out, const char *fn)
{
    int threads = mc_pool_threads();
    size_t row_bytes = q->wld * sizeof(uint32_t), prep_floats = mc_qgemv_t_prep_size(q, M, K);
    size_t block = QMM_BLOCK_BYTES / (row_bytes ? row_bytes : 1) / QMM_BLOCK_ROWS * QMM_BLOCK_ROWS;
    qmm_job j = {.q = q, .x = x, .out = out, .M = M, .N = N, .K = K};
    j.block = block < QMM_BLOCK_ROWS ? QMM_BLOCK_ROWS : block;
    atomic_init(&j.next, 0);
    size_t blocks = ((size_t)N + j.block - 1) / j.block;
    int ns = (size_t)threads < blocks ? threads : (int)blocks;
    scratch sp = {0};
    float *prep = scratch_take(&sp, (prep_floats ? prep_floats : 1) * sizeof(float), fn);
    int rc = !prep || slots_init(&j.sl, ns < 1 ? 1 : ns, mc_qgemv_t_scratch(q, M, K) - prep_floats, fn);
    if (!rc) {
        mc_qgemv_t_prep(q, K, x, M, (size_t)K, prep);
        j.prep = prep;
        mc_parallel_for((size_t)(ns < 1 ? 1 : ns), 1, qmm_gemv_worker, &j);
    }
    slots_free(&j.sl);
    scratch_drop(&sp);
    return rc;
}

/* Rows [n0, n1) of a transposed W: tiles of rows dequantized, then sgemm. */
static void qmm_rows_range(void *ctx, size_t n0, size_t n1)
{
    qmm_job *j = ctx;
    int i = slot_take(&j->sl);
    float *tile = j->sl.mem[i];
    for (size_t r = n0; r < n1; r += (size_t)j->tile) {
        int rows = (int)(n1 - r < (size_t)j->tile ? n1 - r : (size_t)j->tile);
        for (int t = 0; t < rows; t++)
            mc_qdequant_f32(j->q, (int)r + t, 0, j->K, tile + (size_t)t * (size_t)j->K);
        mc_blas_sgemm_tile(j->M, rows, j->K, j->x, j->K, tile, j->K, true, j->out + r, j->N);
    }
    slot_give(&j->sl, i);
}

/* Column groups [c0, c1) of an untransposed W (K rows of N): tiles of
 * columns dequantized from every row, then sgemm. */
static void qmm_cols_range(void *ctx, size_t c0, size_t c1)
{
    qmm_job *j = ctx;
    int i = slot_take(&j->sl);
    float *tile = j->sl.mem[i];
    int gs = j->q->gs;
    for (size_t c = c0; c < c1; c += (size_t)j->tile) {
        int cols = (int)(c1 - c < (size_t)j->tile ? c1 - c : (size_t)j->tile) * gs;
        for (int k = 0; k < j->K; k++)
            mc_qdequant_f32(j->q, k, (int)c * gs, cols, tile + (size_t)k * (size_t)cols);
        mc_blas_sgemm_tile(j->M, cols, j->K, j->x, j->K, tile, cols, false, j->out + c * (size_t)gs, j->N);
    }
    slot_give(&j->sl, i);
}

static int qmm_run(const mc_qmat *q, bool transpose, const float *x, int M, int N, int K, float *out,
                   const char *fn)
{
    int threads = mc_pool_threads();
    qmm_job j = {.q = q, .x = x, .out = out, .M = M, .N = N, .K = K};
    size_t items, grain, floats;
    mc_range_fn f;
    if (transpose && M < QMM_SMALL_M)
        return qmm_decode(q, x, M, N, K, out, fn);
    if (transpose) {
        int rows = QMM_TILE_FLOATS / (K ? K : 1);
        j.tile = rows < 8 ? 8 : rows;
        items = (size_t)N;
        grain = (size_t)j.tile;
        floats = (size_t)j.tile * (size_t)K;
        f = qmm_rows_range;
    } else {
        int groups = QMM_TILE_FLOATS / (K ? K : 1) / q->gs;
        j.tile = groups < 1 ? 1 : groups;
        items = (size_t)(N / q->gs);
        grain = (size_t)j.tile;
        floats = (size_t)j.tile * (size_t)q->gs * (size_t)K;
        f = qmm_cols_range;
    }
    size_t chunks = (items + grain - 1) / grain;
    int ns = (size_t)threads < chunks ? threads : (int)chunks;
    int rc = slots_init(&j.sl, ns < 1 ? 1 : ns, floats, fn);
    if (!rc)
        mc_parallel_for(items, grain, f, &j);
    slots_free(&j.sl);
    return rc;
}

static int qmm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    static const char fn[] = "quantized_matmul";
    const mc_quant_params *p = params;
    const mc_array *x = in[0], *w = in[1], *sc = in[2];
    int K = x->shape[x->ndim - 1], M = x->ndim > 1 ? x->shape[x->ndim - 2] : 1, N = out->shape[out->ndim - 1];
    bool direct = out->dtype == MLX_FLOAT32;
    scratch sx = {0}, sw = {0}, ss = {0}, sb = {0}, so = {0};
    int rc = 1;
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (out->size == 0)
        return 0;
    float *o = direct ? out->data : scratch_take(&so, out->size * sizeof(float), fn);
    if (!o)
        goto done;
    if (K == 0) {
        memset(o, 0, out->size * sizeof(float));
    } else {
        bool fp = n == 3;
        mlx_dtype sdt = fp ? MLX_UINT8 : out->dtype;
        const float *xd = dense(x, MLX_FLOAT32, &sx, fn);
        const uint32_t *wd = xd ? dense(w, MLX_UINT32, &sw, fn) : NULL;
        const void *sd = wd ? dense(sc, sdt, &ss, fn) : NULL;
        const void *bd = sd && !fp ? dense(in[3], out->dtype, &sb, fn) : NULL;
        if (!sd || (!fp && !bd))
            goto done;
        int wrows = w->shape[w->ndim - 2];
        size_t wld = (size_t)w->shape[w->ndim - 1], sld = (size_t)sc->shape[sc->ndim - 1];
        size_t batches = x->size / ((size_t)M * (size_t)K);
        bool shared = w->ndim == 2 || x->ndim <= 2;
        mc_qmat q = {wd, wld, sd, bd, sld, sdt, p->bits, p->group_size, fp};
        if (shared) {
            /* one W for every batch: the batches are more rows of x */
            rc = qmm_run(&q, p->transpose, xd, (int)(batches * (size_t)M), N, K, o, fn);
        } else {
            size_t ssz = mc_dtype_size(sdt), wstep = (size_t)wrows * wld, sstep = (size_t)wrows * sld;
            rc = 0;
            for (size_t b = 0; b < batches && !rc; b++) {
                mc_qmat qb = q;
                qb.w = wd + b * wstep;
                qb.scales = (const char *)sd + b * sstep * ssz;
                qb.biases = bd ? (const char *)bd + b * sstep * ssz : NULL;
                rc = qmm_run(&qb, p->transpose, xd + b * (size_t)M * (size_t)K, M, N, K,
                             o + b * (size_t)M * (size_t)N, fn);
            }
        }
        if (rc)
            goto done;
    }
    if (!direct)
        mc_kernels()->convert[MLX_FLOAT32][out->dtype](o, out->data, out->size);
    rc = 0;
done:
    scratch_drop(&sx);
    scratch_drop(&sw);
    scratch_drop(&ss);
    scratch_drop(&sb);
    scratch_drop(&so);
    return rc;
}

mc_array *mc_node_quantized_matmul(mc_array *x, mc_array *w, mc_array *scales, mc_array *biases, int group_size,
                                   int bits, mc_qmode mode, bool transpose, const char *fn)
{
    mc_quant_params p = {0};
    p.group_size = group_size;
    p.bits = bits;
    p.mode = (int)mode;
    p.transpose = transpose;
    mc_array *in[4] = {x, w, scales, biases};
    return mc_node_new(fn, MC_PRIM_QUANTIZED_MATMUL, in, biases ? 4 : 3, &p, sizeof p);
}

/* The cotangent of the dequantized W: cot^T x (transposed W) or x^T cot,
 * with x's and cot's leading dims flattened into rows when W is shared. */
static mc_array *weight_cot(mc_gb *s, mc_array *node, mc_array *cot)
{
    const mc_quant_params *p = node->params;
    mc_array *x = node->inputs[0], *w = node->inputs[1];
    mc_array *fc = cot, *fx = x;
    if (w->ndim == 2 || x->ndim < 2) {
        int K = x->shape[x->ndim - 1], N = cot->shape[cot->ndim - 1];
        int cs[2] = {(int)(cot->size / (size_t)(N ? N : 1)), N}, xs[2] = {(int)(x->size / (size_t)(K ? K : 1)), K};
        fc = mc_gb_reshape(s, cot, 2, cs);
        fx = mc_gb_reshape(s, x, 2, xs);
    }
    return p->transpose ? mc_gb_matmul(s, mc_gb_swap_last(s, fc), fx)
                        : mc_gb_matmul(s, mc_gb_swap_last(s, fx), fc);
}

/* MLX's rule: x gets the product of cot with W the other way round; the
 * packed weights have no gradient (an error, as in MLX); scales and
 * biases get the group sums of the dequantized W's cotangent (times the
 * codes for scales). */
static int qmm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_quant_params *p = node->params;
    mc_array *w = node->inputs[1], *sc = node->inputs[2];
    mc_array *bi = node->n_inputs > 3 ? node->inputs[3] : NULL;
    for (int k = 0; k < nargs; k++) {
        /* checked before anything is stored */
        if (argnums[k] == 1)
            return mc_error("[%s] [QuantizedMatmul::vjp] no gradient wrt the quantized weights.", fn);
        if (argnums[k] > 1 && !bi)
            return mc_error("[%s] [QuantizedMatmul::vjp] no gradient wrt scales in %s quantization.", fn,
                            qmode_names[p->mode]);
    }
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (argnums[k] == 0) {
            g = mc_gb_hold(
                &s, mc_node_quantized_matmul(cot, w, sc, bi, p->group_size, p->bits, p->mode, !p->transpose, fn));
        } else {
            mc_array *dw = weight_cot(&s, node, cot);
            if (argnums[k] == 2)
                dw = mc_gb_op(&s, MC_B_MULTIPLY, dw, codes_of(&s, w, sc, p));
            g = group_sums(&s, dw, p->group_size, argnums[k] == 2 ? sc : bi);
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* MLX's rule for x (the product with the tangent); MLX has none for
 * scales and biases, where this gives the exact one: W is linear in them,
 * so the tangent is x times W dequantized with the tangents as scales and
 * biases. The packed weights have none (an error, as in MLX). */
static mc_array *qmm_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_quant_params *p = node->params;
    mc_array *x = node->inputs[0], *w = node->inputs[1];
    mc_array *bi = node->n_inputs > 3 ? node->inputs[3] : NULL;
    mc_array *tx = NULL, *ts = NULL, *tb = NULL;
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] == 1 || (argnums[k] > 1 && !bi)) {
            mc_error("[%s] [QuantizedMatmul::jvp] No JVP wrt the quantized matrix yet.", fn);
            return NULL;
        }
        tx = argnums[k] == 0 ? tans[k] : tx;
        ts = argnums[k] == 2 ? tans[k] : ts;
        tb = argnums[k] == 3 ? tans[k] : tb;
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    if (tx)
        r = mc_gb_hold(&s, mc_node_quantized_matmul(tx, w, node->inputs[2], bi, p->group_size, p->bits, p->mode,
                                                    p->transpose, fn));
    if (ts || tb) {
        mc_array *s2 = ts ? ts : mc_gb_zeros_like(&s, node->inputs[2]);
        mc_array *b2 = tb ? tb : mc_gb_zeros_like(&s, node->inputs[3]);
        mc_array *wt = s2 && b2 ? mc_gb_hold(&s, mc_node_dequantize(w, s2, b2, p->group_size, p->bits, fn)) : NULL;
        if (wt && p->transpose)
            wt = mc_gb_swap_last(&s, wt);
        mc_array *t = mc_gb_matmul(&s, x, wt);
        r = r ? mc_gb_op(&s, MC_B_ADD, r, t) : t;
    }
    return mc_gb_finish_ref(&s, r);
}

/* MLX's QuantizedMatmul::vmap is not written yet; its message. */
static int quantized_matmul_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in,
                                 const int *axes, const char *fn)
{
    (void)out, (void)out_axis, (void)node, (void)in, (void)axes, (void)fn;
    return mc_error("[QuantizedMatmul::vmap] NYI");
}

const mc_prim_info mc_prim_quantized_matmul = {
    .name = "QuantizedMatmul",
    .arity = MC_ARITY_ANY,
    .infer = qmm_infer,
    .eval = qmm_eval,
    .vjp = qmm_vjp,
    .jvp = qmm_jvp,
    .vmap = quantized_matmul_vmap,
};

/* ---- QQMatmul ---- */

static int qqmm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_quant_params *p = params;
    const mc_array *x = in[0], *w = in[1];
    bool packed = w->dtype == MLX_UINT32;
    if (x->ndim != 2 || w->ndim != 2 || n != (packed ? 3 : 2) || !mc_dtype_is_float(x->dtype))
        return mc_error("[%s] Internal: QQMatmul of unchecked inputs.", fn);
    if (x->shape[1] % p->group_size != 0)
        return mc_error("[%s] The last dimension of the first input (%d) must be divisible by the group size %d.",
                        fn, x->shape[1], p->group_size);
    out->ndim = 2;
    out->shape[0] = x->shape[0];
    out->shape[1] = w->shape[0];
    out->dtype = x->dtype;
    return 0;
}

/* The rows of a (contiguous or not) quantized and dequantized in a's
 * dtype, as float32 into dst (a->size floats). */
static int qdq_rows(const mc_array *a, float *dst, int gs, int bits, const char *fn)
{
    scratch sa = {0}, st = {0};
    size_t k = (size_t)a->shape[a->ndim - 1], isz = mc_dtype_size(a->dtype);
    const char *ad = dense(a, a->dtype, &sa, fn);
    char *tmp = !ad || a->dtype == MLX_FLOAT32 ? (char *)dst : scratch_take(&st, a->size * isz, fn);
    if (ad && tmp) {
        for (size_t r = 0; k && r < a->size / k; r++)
            mc_qdq_fp(ad + r * k * isz, a->dtype, k, gs, bits, tmp + r * k * isz);
        if (tmp != (char *)dst)
            mc_kernels()->convert[a->dtype][MLX_FLOAT32](tmp, dst, a->size);
    }
    scratch_drop(&sa);
    scratch_drop(&st);
    return !ad || !tmp;
}

static int qqmm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    static const char fn[] = "qqmm";
    const mc_quant_params *p = params;
    const mc_array *x = in[0], *w = in[1];
    int M = x->shape[0], K = x->shape[1], N = w->shape[0];
    bool direct = out->dtype == MLX_FLOAT32;
    scratch sx = {0}, sw = {0}, ss = {0}, so = {0};
    int rc = 1;
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (out->size == 0)
        return 0;
    float *o = direct ? out->data : scratch_take(&so, out->size * sizeof(float), fn);
    float *xh = o ? scratch_take(&sx, x->size ? x->size * sizeof(float) : 1, fn) : NULL;
    if (!xh || qdq_rows(x, xh, p->group_size, p->bits, fn))
        goto done;
    if (K == 0) {
        memset(o, 0, out->size * sizeof(float));
    } else if (w->dtype == MLX_UINT32) {
        const uint32_t *wd = dense(w, MLX_UINT32, &sw, fn);
        const void *sd = wd ? dense(in[2], MLX_UINT8, &ss, fn) : NULL;
        if (!sd)
            goto done;
        mc_qmat q = {wd,      (size_t)w->shape[1], sd, NULL, (size_t)in[2]->shape[1], MLX_UINT8,
                     p->bits, p->group_size,       1};
        if (qmm_run(&q, true, xh, M, N, K, o, fn))
            goto done;
    } else {
        float *wh = scratch_take(&sw, w->size * sizeof(float), fn);
        if (!wh || qdq_rows(w, wh, p->group_size, p->bits, fn))
            goto done;
        mc_blas_gemm_nt(MLX_FLOAT32, M, N, K, xh, K, wh, K, o, N);
    }
    if (!direct)
        mc_kernels()->convert[MLX_FLOAT32][out->dtype](o, out->data, out->size);
    rc = 0;
done:
    scratch_drop(&sx);
    scratch_drop(&sw);
    scratch_drop(&ss);
    scratch_drop(&so);
    return rc;
}

mc_array *mc_node_qqmm(mc_array *x, mc_array *w, mc_array *scales, int group_size, int bits, mc_qmode mode,
                       const char *fn)
{
    mc_quant_params p = {0};
    p.group_size = group_size;
    p.bits = bits;
    p.mode = (int)mode;
    mc_array *in[3] = {x, w, scales};
    return mc_node_new(fn, MC_PRIM_QQMATMUL, in, scales ? 3 : 2, &p, sizeof p);
}

/* MLX's rule: x gets qqmm(cot, W^T) and W gets qqmm(cot^T, x^T), both
 * operands quantized again; packed weights have none (MLX's rule would
 * call qqmm with them and no scales, an error). */
static int qqmm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_quant_params *p = node->params;
    mc_array *x = node->inputs[0], *w = node->inputs[1];
    for (int k = 0; k < nargs; k++)
        if (w->dtype == MLX_UINT32 && argnums[k] < 2)
            return mc_error("[%s] [qqmm] Scales must be provided if second argument is quantized.", fn);
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (argnums[k] == 0)
            g = mc_gb_hold(&s,
                           mc_node_qqmm(cot, mc_gb_swap_last(&s, w), NULL, p->group_size, p->bits, p->mode, fn));
        else if (argnums[k] == 1)
            g = mc_gb_hold(&s, mc_node_qqmm(mc_gb_swap_last(&s, cot), mc_gb_swap_last(&s, x), NULL, p->group_size,
                                            p->bits, p->mode, fn));
        else
            g = mc_gb_zeros_like(&s, node->inputs[argnums[k]]);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *qqmm_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)node, (void)tans, (void)argnums, (void)nargs;
    mc_error("[%s] QQMM::jvp NYI", fn);
    return NULL;
}

const mc_prim_info mc_prim_qqmatmul = {
    .name = "QQMatmul",
    .arity = MC_ARITY_ANY,
    .infer = qqmm_infer,
    .eval = qqmm_eval,
    .vjp = qqmm_vjp,
    .jvp = qqmm_jvp,
    .vmap = mc_vmap_unsupported,
};
