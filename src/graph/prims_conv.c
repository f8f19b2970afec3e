/* Owns the Convolution primitive: its shape rule (MLX's conv_out_shape,
 * with MLX's messages), its evaluation and its derivative rules.
 *
 * Evaluation is a blocked im2col on BLAS: the output's rows (one per batch
 * and output position) are cut into pieces for the worker pool, and each
 * piece into blocks of a few hundred rows whose im2col (the input values
 * each row reads, zeros for padding and for the holes of input dilation)
 * fills a per-piece scratch of bounded size that one single-threaded gemm
 * multiplies by the packed weight, group by group. So the scratch is at
 * most pieces x block, whatever the input's size, and a 1x1 convolution
 * without stride or padding reads the input itself as its im2col. A
 * convolution with one input channel per group (depthwise) runs a direct
 * kernel instead of one thin gemm per group. float16 and bfloat16 are
 * computed in float32 (input and weight converted once, each block's
 * result converted out); float64 in float64. float32 3x3 convolutions of
 * stride 1 with enough channels take the Winograd path instead
 * (conv_wino.c).
 *
 * The vjp is MLX's: the input's cotangent is a convolution of the
 * output's cotangent with the group-transposed weight (input dilation and
 * stride exchanged, flip toggled), the weight's a convolution of the
 * transposed input with the transposed cotangent (one fix: the input
 * cotangent's high padding, see input_cotangent). MLX takes the weight's
 * through explicit patches and a matmul when there is no dilation, flip or
 * grouping; we use the convolution form there too (the same sums). MLX
 * has no jvp for Convolution; ours is the linear one,
 * conv(t_in, wt) + conv(in, t_wt). */
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "graph/blas.h"
#include "graph/build.h"
#include "graph/conv_wino.h"
#include "graph/prims_conv.h"
#include "graph/prims_slice.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/conv.h"
#include "simd/simd.h"

/* ---- shape rule ---- */

static char *vec_str(char *buf, size_t n, int count, const int *v) { return mc_shape_str(buf, n, count, v); }

int mc_conv_out_shape(int ndim, const int *in_shape, const int *wt_shape, const mc_conv_params *p, int *out)
{
    char a[256], b[256], c[256], d[256];
    int nsp = ndim - 2;
    out[0] = in_shape[0];
    for (int i = 1; i < ndim - 1; i++) {
        int k = i - 1;
        if (p->kdil[k] <= 0)
            return mc_error("[conv] Kernel dilation sizes must be positive. Got kernel dilation %s.",
                            vec_str(a, sizeof a, nsp, p->kdil));
        if (p->idil[k] <= 0)
            return mc_error("[conv] Input dilation sizes must be positive. Got input dilation %s.",
                            vec_str(a, sizeof a, nsp, p->idil));
        if (p->pad_lo[k] < 0 || p->pad_hi[k] < 0)
            return mc_error("[conv] Padding sizes must be non-negative. Got padding %s | %s.",
                            vec_str(a, sizeof a, nsp, p->pad_lo), vec_str(b, sizeof b, nsp, p->pad_hi));
        if (p->stride[k] <= 0)
            return mc_error("[conv] Stride sizes must be positive. Got strides %s.",
                            vec_str(a, sizeof a, nsp, p->stride));
        int64_t kd = 1 + (int64_t)p->kdil[k] * (wt_shape[i] - 1);
        int64_t id = 1 + (int64_t)p->idil[k] * (in_shape[i] - 1);
        /* C++ integer division truncates toward zero, as C's does */
        int64_t o = (id + p->pad_lo[k] + p->pad_hi[k] - kd) / p->stride[k] + 1;
        if (o <= 0 || o > INT_MAX)
            return mc_error("[conv] Spatial dimensions of input after padding cannot be smaller than weight "
                            "spatial dimensions. Got error at axis %d for input with shape %s, padding low %s, "
                            "padding high %s, and weight of shape %s.",
                            i, vec_str(a, sizeof a, ndim, in_shape), vec_str(b, sizeof b, nsp, p->pad_lo),
                            vec_str(c, sizeof c, nsp, p->pad_hi), vec_str(d, sizeof d, ndim, wt_shape));
        out[i] = (int)o;
    }
    out[ndim - 1] = wt_shape[0];
    return 0;
}

static int conv_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_conv_params *p = params;
    const mc_array *x = in[0], *w = in[1];
    if (x->dtype != w->dtype || !mc_dtype_is_float(x->dtype))
        return mc_error("[%s] Convolution needs input and weight of one floating dtype, got %s and %s.", fn,
                        mc_dtype_name(x->dtype), mc_dtype_name(w->dtype));
    if (x->ndim != p->nsp + 2 || w->ndim != p->nsp + 2)
        return mc_error("[%s] Convolution of %d spatial dims got input and weight of %d and %d dims.", fn, p->nsp,
                        x->ndim, w->ndim);
    int C = x->shape[x->ndim - 1], O = w->shape[0];
    if (p->groups <= 0 || C % p->groups || O % p->groups || C != p->groups * w->shape[w->ndim - 1])
        return mc_error("[%s] Convolution with %d groups cannot take %d input channels, weight of %d output and "
                        "%d input channels.",
                        fn, p->groups, C, O, w->shape[w->ndim - 1]);
    if (mc_conv_out_shape(x->ndim, x->shape, w->shape, p, out->shape))
        return 1;
    out->ndim = x->ndim;
    out->dtype = x->dtype;
    return 0;
}

/* ---- building nodes ---- */

mc_array *mc_conv_node(mc_array *in, mc_array *wt, const mc_conv_params *p, const char *fn)
{
    mc_conv_params q = *p;
    mc_slice_params sl = {.ndim = in->ndim};
    bool neg = false;
    for (int d = 0; d < in->ndim; d++) {
        sl.start[d] = 0;
        sl.stop[d] = in->shape[d];
        sl.strides[d] = 1;
    }
    for (int i = 0; i < p->nsp; i++) {
        if (q.pad_lo[i] < 0) {
            sl.start[i + 1] -= q.pad_lo[i];
            q.pad_lo[i] = 0;
            neg = true;
        }
        if (q.pad_hi[i] < 0) {
            sl.stop[i + 1] += q.pad_hi[i];
            q.pad_hi[i] = 0;
            neg = true;
        }
    }
    mc_array *x = neg ? mc_node_new(fn, MC_PRIM_SLICE, &in, 1, &sl, sizeof sl) : mc_array_retain(in);
    if (!x)
        return NULL;
    mc_array *ins[2] = {x, wt};
    mc_array *r = mc_node_new(fn, MC_PRIM_CONVOLUTION, ins, 2, &q, sizeof q);
    mc_array_release(x);
    return r;
}

/* ---- evaluation ---- */

/* Rows of a block: its im2col fills about this many bytes (L2-resident
 * while the gemm reads it). */
#define MC_CONV_BLOCK_BYTES ((size_t)256 << 10)
/* Below this many multiply-adds a convolution runs on the calling thread. */
#define MC_CONV_SPLIT_MACS ((double)(1 << 20))

typedef struct conv_run {
    mc_conv_geom g;
    mlx_dtype ct; /* float32 or float64 */
    size_t esz;
    const char *x;            /* dense input in ct */
    const char *w;            /* packed weight in ct */
    char *y;                  /* the output's data */
    mc_convert_kernel to_out; /* ct to the output's dtype, or NULL: gemm writes y */
    size_t out_esz;
    bool direct_a;  /* the input itself is the im2col (1x1, no stride or padding) */
    bool depthwise; /* one input channel per group */
    int kg, og, mb; /* im2col row length of a group, output channels per group, block rows */
    size_t rows, pieces, slot_bytes, a_bytes;
    char *scratch; /* pieces slots of slot_bytes */
} conv_run;

static void conv_block(const conv_run *r, char *slot, size_t r0, int m)
{
    const mc_conv_geom *g = &r->g;
    size_t esz = r->esz, O = (size_t)g->O;
    char *c = r->to_out ? slot + r->a_bytes : r->y + r0 * O * esz;
    if (r->depthwise) {
        mc_conv_depthwise(g, esz, r->x, r->w, r0, m, c);
    } else {
        for (int grp = 0; grp < g->groups; grp++) {
            const char *a = slot;
            int64_t lda = r->kg;
            if (r->direct_a) {
                a = r->x + r0 * (size_t)g->C * esz;
                lda = g->C;
            } else {
                mc_conv_im2col(g, esz, r->x, grp, r0, m, slot);
            }
            mc_blas_gemm_nt(r->ct, m, r->og, r->kg, a, lda, r->w + (size_t)grp * (size_t)r->og * r->kg * esz,
                            r->kg, c + (size_t)grp * (size_t)r->og * esz, (int64_t)O);
        }
    }
    if (r->to_out)
        r->to_out(c, r->y + r0 * O * r->out_esz, (size_t)m * O);
}

static void conv_piece(void *arg, size_t begin, size_t end)
{
    const conv_run *r = arg;
    for (size_t pc = begin; pc < end; pc++) {
        size_t lo = pc * r->rows / r->pieces, hi = (pc + 1) * r->rows / r->pieces;
        /* no scratch at all when the gemm needs no im2col and writes the output */
        char *slot = r->scratch ? r->scratch + pc * r->slot_bytes : NULL;
        for (size_t r0 = lo; r0 < hi; r0 += (size_t)r->mb) {
            size_t m = hi - r0 < (size_t)r->mb ? hi - r0 : (size_t)r->mb;
            conv_block(r, slot, r0, (int)m);
        }
    }
}

/* x as a dense array of dtype ct: x's own data when it already is one,
 * else a converted copy in *copy (nbytes in *copy_bytes; free it). */
static const void *dense_in(const mc_array *x, mlx_dtype ct, void **copy, size_t *copy_bytes, const char *fn)
{
    if (x->dtype == ct && (x->flags & MC_FLAG_ROW_CONTIG))
        return x->data;
    size_t isz = mc_dtype_size(ct);
    *copy_bytes = x->size * isz;
    *copy = mc_data_alloc(*copy_bytes ? *copy_bytes : 1);
    if (!*copy) {
        mc_error_oom(fn, *copy_bytes);
        return NULL;
    }
    int64_t st[MC_MAX_NDIM];
    mc_row_strides(x->ndim, x->shape, st);
    mc_unary_strided(mc_kernels()->convert[x->dtype][ct], mc_dtype_size(x->dtype), isz, x->data, x->strides, *copy,
                     st, x->ndim, x->shape);
    return *copy;
}

/* The geometry of a node: 1-D and 2-D as 3-D with leading unit dims. */
static void geom_of(mc_conv_geom *g, const mc_array *out, const mc_array *x, const mc_array *w,
                    const mc_conv_params *p)
{
    int lead = MC_CONV_MAX_SPATIAL - p->nsp;
    *g = (mc_conv_geom){.N = x->shape[0], .C = x->shape[x->ndim - 1], .O = w->shape[0], .groups = p->groups};
    for (int d = 0; d < MC_CONV_MAX_SPATIAL; d++) {
        int k = d - lead;
        bool real = k >= 0;
        g->in[d] = real ? x->shape[k + 1] : 1;
        g->out[d] = real ? out->shape[k + 1] : 1;
        g->k[d] = real ? w->shape[k + 1] : 1;
        g->stride[d] = real ? p->stride[k] : 1;
        g->pad_lo[d] = real ? p->pad_lo[k] : 0;
        g->kdil[d] = real ? p->kdil[k] : 1;
        g->idil[d] = real ? p->idil[k] : 1;
    }
}

static int conv_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    static const char fn[] = "conv_general";
    const mc_conv_params *p = params;
    const mc_array *x = in[0], *w = in[1];
    if (mc_out_alloc(out, NULL, 0, fn))
        return 1;
    if (out->size == 0)
        return 0;

    conv_run r = {.ct = out->dtype == MLX_FLOAT64 ? MLX_FLOAT64 : MLX_FLOAT32};
    geom_of(&r.g, out, x, w, p);
    r.esz = mc_dtype_size(r.ct);
    r.out_esz = mc_dtype_size(out->dtype);
    r.y = out->data;
    r.to_out = out->dtype == r.ct ? NULL : mc_kernels()->convert[r.ct][out->dtype];
    int kpos = mc_conv_kpos(&r.g), cg = r.g.C / r.g.groups;
    r.og = r.g.O / r.g.groups;
    r.kg = kpos * cg;
    if (r.kg == 0) {
        /* no input channel: every sum is empty */
        memset(out->data, 0, out->size * r.out_esz);
        return 0;
    }
    r.depthwise = cg == 1 && r.g.groups > 1;
    r.direct_a = r.g.groups == 1 && kpos == 1;
    for (int d = 0; d < MC_CONV_MAX_SPATIAL; d++)
        r.direct_a =
            r.direct_a && r.g.stride[d] == 1 && r.g.pad_lo[d] == 0 && r.g.idil[d] == 1 && r.g.in[d] == r.g.out[d];

    int rc = 1;
    void *xcopy = NULL, *wcopy = NULL, *wpack = NULL;
    size_t xbytes = 0, wbytes = 0, scratch_bytes = 0;
    size_t wpack_bytes = w->size * r.esz;
    r.x = dense_in(x, r.ct, &xcopy, &xbytes, fn);
    const void *wd = r.x ? dense_in(w, r.ct, &wcopy, &wbytes, fn) : NULL;
    if (!wd)
        goto done;
    int wino_m = mc_conv_wino_pick(&r.g, p, out->dtype);
    if (wino_m) {
        rc = mc_conv_wino_run(&r.g, wino_m, (const float *)r.x, wd, p->flip, out->data, fn);
        goto done;
    }
    wpack = mc_data_alloc(wpack_bytes);
    if (!wpack) {
        mc_error_oom(fn, wpack_bytes);
        goto done;
    }
    mc_conv_pack_weight(r.esz, wd, r.g.O, kpos, cg, p->flip, r.depthwise, wpack);
    r.w = wpack;

    r.rows = mc_conv_rows(&r.g);
    size_t per_row = r.depthwise ? (size_t)r.g.O * r.esz : (size_t)r.kg * r.esz;
    size_t mb = MC_CONV_BLOCK_BYTES / per_row;
    mb = mb < 16 ? 16 : mb > 512 ? 512 : mb;
    double macs = (double)r.rows * (double)r.g.O * (double)r.kg;
    size_t threads = (size_t)mc_pool_threads();
    r.pieces = threads > 1 && macs >= MC_CONV_SPLIT_MACS ? 4 * threads : 1;
    if (r.pieces > r.rows)
        r.pieces = r.rows;
    size_t per_piece = (r.rows + r.pieces - 1) / r.pieces;
    if (mb > per_piece)
        mb = per_piece;
    r.mb = (int)mb;
    r.a_bytes = r.direct_a || r.depthwise ? 0 : mb * (size_t)r.kg * r.esz;
    /* keep each slot's parts on their own cache lines */
    r.a_bytes = (r.a_bytes + 63) & ~(size_t)63;
    r.slot_bytes = r.a_bytes + (r.to_out ? mb * (size_t)r.g.O * r.esz : 0);
    r.slot_bytes = (r.slot_bytes + 63) & ~(size_t)63;
    scratch_bytes = r.slot_bytes * r.pieces;
    if (scratch_bytes) {
        r.scratch = mc_data_alloc(scratch_bytes);
        if (!r.scratch) {
            mc_error_oom(fn, scratch_bytes);
            goto done;
        }
    }
    if (!r.depthwise && r.kg > 0 && (int64_t)r.kg * (int64_t)mb > INT_MAX) {
        mc_error("[%s] Convolution rows of %d elements exceed what the BLAS library accepts.", fn, r.kg);
        goto done;
    }
    (void)mc_blas_threads(); /* the pool sets OpenBLAS to one thread before the first call */
    mc_parallel_for(r.pieces, 1, conv_piece, &r);
    rc = 0;
done:
    if (r.scratch)
        mc_data_free(r.scratch, scratch_bytes);
    if (wpack)
        mc_data_free(wpack, wpack_bytes);
    if (wcopy)
        mc_data_free(wcopy, wbytes ? wbytes : 1);
    if (xcopy)
        mc_data_free(xcopy, xbytes ? xbytes : 1);
    return rc;
}

/* ---- derivative rules ---- */

/* MLX's group_transpose inside Convolution::vjp: with groups, x's axis
 * group_dim is split into (groups, rest), axes a and b (of the split
 * array) swapped, and the split merged back; without, axes 0 and -1
 * swapped. */
static mc_array *group_transpose(mc_gb *s, mc_array *x, int groups, int group_dim, int a, int b)
{
    if (!x)
        return NULL;
    int nd = x->ndim, perm[MC_MAX_NDIM];
    if (groups <= 1) {
        for (int d = 0; d < nd; d++)
            perm[d] = d;
        perm[0] = nd - 1;
        perm[nd - 1] = 0;
        return mc_gb_transpose(s, x, perm);
    }
    if (group_dim < 0)
        group_dim += nd;
    int shape[MC_MAX_NDIM] = {0};
    for (int d = 0, k = 0; d < nd; d++) {
        if (d == group_dim) {
            shape[k++] = groups;
            shape[k++] = x->shape[d] / groups;
        } else {
            shape[k++] = x->shape[d];
        }
    }
    if (a < 0)
        a += nd + 1;
    if (b < 0)
        b += nd + 1;
    for (int d = 0; d < nd + 1; d++)
        perm[d] = d;
    perm[a] = b;
    perm[b] = a;
    mc_array *t = mc_gb_transpose(s, mc_gb_reshape(s, x, nd + 1, shape), perm);
    if (!t)
        return NULL;
    int merged[MC_MAX_NDIM];
    for (int d = 0, k = 0; d < nd + 1; d++) {
        if (d == group_dim + 1)
            merged[k - 1] *= t->shape[d];
        else
            merged[k++] = t->shape[d];
    }
    return mc_gb_reshape(s, t, nd, merged);
}

static mc_array *gb_conv(mc_gb *s, mc_array *in, mc_array *wt, const mc_conv_params *p)
{
    if (!in || !wt)
        return NULL;
    return mc_gb_hold(s, mc_conv_node(in, wt, p, s->fn));
}

/* A slice of x on its spatial axes: start/stop per spatial dim. */
static mc_array *gb_slice_spatial(mc_gb *s, mc_array *x, const int *start, const int *stop, const int *step)
{
    if (!x)
        return NULL;
    mc_slice_params sl = {.ndim = x->ndim};
    for (int d = 0; d < x->ndim; d++) {
        bool sp = d >= 1 && d < x->ndim - 1;
        sl.start[d] = sp ? start[d - 1] : 0;
        sl.stop[d] = sp ? stop[d - 1] : x->shape[d];
        sl.strides[d] = sp ? step[d - 1] : 1;
    }
    return mc_gb_slice(s, x, &sl);
}

/* The input's cotangent: the output's cotangent dilated by the stride,
 * correlated with the flipped, group-transposed weight. MLX pads its high
 * side by in_size - out_size + padding_hi, right only when the forward
 * padding is symmetric (MLX raises a shape error otherwise); the high
 * padding that gives the input's shape is in_size - out_size + padding_lo.
 * A negative padding (forward padding beyond the kernel's extent) is
 * computed as zero and the result cropped to the input's shape; that is
 * exact unless a negative low padding meets an input dilation that does
 * not divide it (MLX's own vjp returns a wrongly shaped cotangent for any
 * padding beyond the kernel's extent). */
static mc_array *input_cotangent(mc_gb *s, mc_array *node, mc_array *cot)
{
    const mc_conv_params *p = node->params;
    mc_array *in = node->inputs[0], *wt = node->inputs[1];
    mc_conv_params q = *p;
    int crop_lo[3] = {0, 0, 0};
    bool crop = false;
    for (int i = 0; i < p->nsp; i++) {
        int wt_size = 1 + p->kdil[i] * (wt->shape[1 + i] - 1);
        int in_size = 1 + p->idil[i] * (in->shape[1 + i] - 1);
        int out_size = 1 + p->stride[i] * (cot->shape[1 + i] - 1);
        int lo = wt_size - p->pad_lo[i] - 1, hi = in_size - out_size + p->pad_lo[i];
        /* the result's stride is the forward input dilation */
        int st = p->idil[i];
        crop_lo[i] = lo < 0 ? (-lo + st - 1) / st : 0;
        crop = crop || lo < 0 || hi < 0;
        q.pad_lo[i] = lo < 0 ? 0 : lo;
        q.pad_hi[i] = hi < 0 ? 0 : hi;
        q.stride[i] = p->idil[i];
        q.idil[i] = p->stride[i];
    }
    q.flip = !p->flip;
    mc_array *g = gb_conv(s, cot, group_transpose(s, wt, p->groups, 0, 1, -1), &q);
    if (!crop || !g)
        return g;
    int stop[3], step[3] = {1, 1, 1};
    for (int i = 0; i < p->nsp; i++)
        stop[i] = crop_lo[i] + in->shape[i + 1];
    return gb_slice_spatial(s, g, crop_lo, stop, step);
}

static mc_array *weight_cotangent(mc_gb *s, mc_array *node, mc_array *cot)
{
    const mc_conv_params *p = node->params;
    mc_array *in = node->inputs[0], *wt = node->inputs[1];
    mc_conv_params q = *p;
    for (int i = 0; i < p->nsp; i++) {
        int in_size = 1 + p->idil[i] * (in->shape[1 + i] - 1);
        int out_size = 1 + p->stride[i] * (cot->shape[1 + i] - 1);
        int wt_size = 1 + p->kdil[i] * (wt->shape[1 + i] - 1);
        q.pad_hi[i] = out_size - in_size + wt_size - p->pad_lo[i] - 1;
        q.stride[i] = p->kdil[i];
        q.kdil[i] = p->stride[i];
    }
    q.flip = false;
    mc_array *cot_t = group_transpose(s, cot, 1, 0, 0, -1);
    mc_array *in_t = group_transpose(s, in, p->groups, -1, 0, -1);
    mc_array *g = gb_conv(s, in_t, cot_t, &q);
    if (g && p->flip) {
        int start[3], stop[3], step[3];
        for (int i = 0; i < p->nsp; i++) {
            start[i] = g->shape[i + 1];
            stop[i] = -start[i] - 1;
            step[i] = -1;
        }
        g = gb_slice_spatial(s, g, start, stop, step);
    }
    return group_transpose(s, g, 1, 0, 0, -1);
}

static int conv_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g = argnums[k] == 0 ? input_cotangent(&s, node, cot) : weight_cotangent(&s, node, cot);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *conv_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    for (int k = 0; k < nargs; k++) {
        mc_array *ins[2] = {node->inputs[0], node->inputs[1]};
        ins[argnums[k]] = tans[k];
        mc_array *t = mc_gb_like(&s, node, ins, 2);
        r = r ? mc_gb_op(&s, MC_B_ADD, r, t) : t;
    }
    return mc_gb_finish_ref(&s, r);
}

/* ---- vmap (MLX's Convolution::vmap) ---- */

/* a (batch first, b of it) with axes [0, 2) merged, or with its batch
 * moved to just before the channels and merged with them (to_channels). */
static mc_array *fold_batch(mc_gb *s, mc_array *a, int b, bool to_channels)
{
    if (s->failed)
        return NULL;
    int shape[MC_MAX_NDIM], nd = a->ndim - 1;
    if (to_channels) {
        a = mc_gb_hold(s, mc_node_moveaxis(a, 0, a->ndim - 2, s->fn));
        memcpy(shape, a->shape, sizeof(int) * (size_t)(nd - 1));
        shape[nd - 1] = b * a->shape[a->ndim - 1];
    } else {
        shape[0] = b * a->shape[1];
        memcpy(shape + 1, a->shape + 2, sizeof(int) * (size_t)(nd - 1));
    }
    return mc_gb_reshape(s, a, nd, shape);
}

/* A batched input alone is more of the conv's own batch (axis 0). A
 * batched weight is B times the output channels: with a batched input too
 * (or groups, whose channel order a plain fold would mix) the input's
 * channels become B groups of its own, a grouped convolution of groups *
 * B, as MLX's; the output's channels unfold to (B, O). */
static int conv_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    mc_conv_params q;
    mc_vmap_params(&q, sizeof q, node);
    int b = mc_vmap_size(in, axes, 2), nd = node->ndim, shape[MC_MAX_NDIM];
    if (mc_vmap_check_ndim(nd, fn))
        return 1;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *args[2], *r;
    if (axes[1] < 0) {
        args[0] = fold_batch(&s, mc_gb_vmap_front(&s, in[0], axes[0], b), b, false);
        args[1] = in[1];
        r = mc_gb_like(&s, node, args, 2);
        shape[0] = b;
        memcpy(shape + 1, node->shape, sizeof(int) * (size_t)nd);
        *out_axis = 0;
    } else {
        bool plain = axes[0] < 0 && q.groups == 1;
        args[0] = plain ? in[0] : fold_batch(&s, mc_gb_vmap_front(&s, in[0], axes[0], b), b, true);
        args[1] = fold_batch(&s, mc_gb_vmap_front(&s, in[1], axes[1], b), b, false);
        if (!plain)
            q.groups *= b;
        r = mc_gb_hold(&s, s.failed ? NULL : mc_node_new(fn, MC_PRIM_CONVOLUTION, args, 2, &q, sizeof q));
        memcpy(shape, node->shape, sizeof(int) * (size_t)(nd - 1));
        shape[nd - 1] = b;
        shape[nd] = node->shape[nd - 1];
        *out_axis = nd - 1;
    }
    *out = mc_gb_finish_ref(&s, mc_gb_reshape(&s, r, nd + 1, shape));
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_convolution = {
    .name = "Convolution",
    .arity = 2,
    .infer = conv_infer,
    .eval = conv_eval,
    .vjp = conv_vjp,
    .jvp = conv_jvp,
    .vmap = conv_vmap,
};
