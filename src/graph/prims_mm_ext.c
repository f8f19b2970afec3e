/* Owns the matrix products by index, block mask and segment: GatherMM,
 * BlockMaskedMM and SegmentedMM (contracts in prims_mm_ext.h): their
 * shape and dtype rules, their derivatives and the node builders; the
 * BLAS work is in mm_ext_eval.c.
 *
 * Derivatives are MLX 0.31.1's: GatherMM's and BlockMaskedMM's vjp are
 * again gather_mm / block_masked_mm of the cotangent (plus a scatter-add
 * over the gathered matrices, a pad-and-sum over the mask blocks); none of
 * the three has a jvp in MLX, and SegmentedMM has no vjp, so those report
 * MLX's "Not implemented". Two places differ from MLX, where its rule is
 * not the derivative: GatherMM's cotangent for `a` always scatter-adds
 * (MLX passes it through unscattered whenever the sorted flag is set and
 * the sizes agree, wrong for repeated sorted lhs indices), and the out
 * mask's cotangent uses the product before the out mask (MLX uses it
 * after, which scales the gradient by the mask). */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_mm_ext.h"
#include "graph/prims_scatter.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

/* ---- shape rules ---- */

static int check_operands(const mc_array *a, const mc_array *b, const char *fn)
{
    if (a->ndim < 2 || b->ndim < 2)
        return mc_error("[%s] Internal: operands of %d and %d dimensions.", fn, a->ndim, b->ndim);
    if (a->shape[a->ndim - 1] != b->shape[b->ndim - 2]) {
        char s1[512], s2[512];
        return mc_error("[%s] Last dimension of first input with shape %s must match second to last "
                        "dimension of second input with shape %s.",
                        fn, mc_shape_str(s1, sizeof s1, a->ndim, a->shape),
                        mc_shape_str(s2, sizeof s2, b->ndim, b->shape));
    }
    if (a->dtype != b->dtype || !mc_dtype_is_float(a->dtype))
        return mc_error("[%s] Only real floating point types are supported but %s and %s were provided.", fn,
                        mc_dtype_name(a->dtype), mc_dtype_name(b->dtype));
    return 0;
}

static size_t batch_count(const mc_array *x)
{
    size_t n = 1;
    for (int d = 0; d < x->ndim - 2; d++)
        n *= (size_t)x->shape[d];
    return n;
}

static int gather_mm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    const mc_array *a = in[0], *b = in[1], *li = in[2], *ri = in[3];
    if (check_operands(a, b, fn))
        return 1;
    if (li->dtype != MLX_UINT32 || ri->dtype != MLX_UINT32 || !mc_array_has_shape(ri, li->ndim, li->shape))
        return mc_error("[%s] Internal: indices must be uint32 arrays of one shape.", fn);
    if (li->ndim + 2 > MC_MAX_NDIM)
        return mc_error("[%s] The indices have too many dimensions (%d).", fn, li->ndim);
    int M = a->shape[a->ndim - 2], N = b->shape[b->ndim - 1];
    if (li->size && M && N && (!batch_count(a) || !batch_count(b)))
        return mc_error("[%s] Cannot gather matrices from an operand with no matrices.", fn);
    out->dtype = a->dtype;
    out->ndim = li->ndim + 2;
    memcpy(out->shape, li->shape, sizeof(int) * (size_t)li->ndim);
    out->shape[li->ndim] = M;
    out->shape[li->ndim + 1] = N;
    return 0;
}

/* The shape (batch..., (X + bs - 1) / bs, (Y + bs - 1) / bs) a mask must
 * have. */
static bool mask_fits(const mc_array *m, const mc_array *like, int x, int y, int bs)
{
    if (m->ndim != like->ndim || (m->dtype != MLX_BOOL && m->dtype != like->dtype))
        return false;
    for (int d = 0; d < like->ndim - 2; d++)
        if (m->shape[d] != like->shape[d])
            return false;
    return m->shape[m->ndim - 2] == (x + bs - 1) / bs && m->shape[m->ndim - 1] == (y + bs - 1) / bs;
}

static int block_mm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_block_mm_params *p = params;
    const mc_array *a = in[0], *b = in[1];
    if (n < 3 || n > 5 || (p->block_size != 32 && p->block_size != 64))
        return mc_error("[%s] Internal: %d inputs, block size %d.", fn, n, p->block_size);
    if (check_operands(a, b, fn))
        return 1;
    int nd = a->ndim, M = a->shape[nd - 2], K = a->shape[nd - 1], N = b->shape[nd - 1];
    bool ok = b->ndim == nd && !memcmp(a->shape, b->shape, sizeof(int) * (size_t)(nd - 2));
    if (n == 3 || n == 5)
        ok = ok && mask_fits(in[2], a, M, N, p->block_size);
    if (n >= 4)
        ok = ok && mask_fits(in[n - 2], a, M, K, p->block_size) && mask_fits(in[n - 1], a, K, N, p->block_size);
    if (!ok)
        return mc_error("[%s] Internal: operands and masks were not broadcast to one batch shape.", fn);
    out->dtype = a->dtype;
    out->ndim = nd;
    memcpy(out->shape, a->shape, sizeof(int) * (size_t)nd);
    out->shape[nd - 1] = N;
    return 0;
}

static int segmented_mm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    const mc_array *a = in[0], *b = in[1], *seg = in[2];
    if (a->ndim != 2 || b->ndim != 2)
        return mc_error("[%s] Batched matmul not supported", fn);
    if (check_operands(a, b, fn))
        return 1;
    if (seg->ndim < 1 || seg->shape[seg->ndim - 1] != 2 || seg->dtype != MLX_UINT32 || seg->ndim + 1 > MC_MAX_NDIM)
        return mc_error("[%s] Internal: segments must be uint32 of shape (..., 2).", fn);
    out->dtype = a->dtype;
    out->ndim = seg->ndim + 1;
    memcpy(out->shape, seg->shape, sizeof(int) * (size_t)(seg->ndim - 1));
    out->shape[seg->ndim - 1] = a->shape[0];
    out->shape[seg->ndim] = b->shape[1];
    return 0;
}

/* ---- builders ---- */

mc_array *mc_gb_gather_mm(mc_gb *s, mc_array *a, mc_array *b, mc_array *lhs, mc_array *rhs, bool left_sorted,
                          bool right_sorted)
{
    if (s->failed || !a || !b || !lhs || !rhs)
        return NULL;
    mc_gather_mm_params p;
    memset(&p, 0, sizeof p);
    p.left_sorted = left_sorted;
    p.right_sorted = right_sorted;
    mc_array *in[4] = {a, b, lhs, rhs};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_GATHER_MM, in, 4, &p, sizeof p));
}

/* x broadcast to batch + (y, z). */
static mc_array *to_batch(mc_gb *s, mc_array *x, int nb, const int *batch, int y, int z)
{
    int shape[MC_MAX_NDIM];
    memcpy(shape, batch, sizeof(int) * (size_t)nb);
    shape[nb] = y;
    shape[nb + 1] = z;
    return mc_gb_broadcast(s, x, nb + 2, shape);
}

mc_array *mc_gb_block_masked_mm(mc_gb *s, mc_array *a, mc_array *b, int block_size, mc_array *mask_out,
                                mc_array *mask_lhs, mc_array *mask_rhs)
{
    if (s->failed || !a || !b)
        return NULL;
    if (!mask_out && !mask_lhs && !mask_rhs)
        return mc_gb_matmul(s, a, b);
    int nb, batch[MC_MAX_NDIM];
    if (mc_broadcast_shapes(a->ndim - 2, a->shape, b->ndim - 2, b->shape, &nb, batch, s->fn)) {
        s->failed = true;
        return NULL;
    }
    if (nb + 2 > MC_MAX_NDIM) {
        s->failed = true;
        mc_error("[%s] Too many dimensions (%d).", s->fn, nb + 2);
        return NULL;
    }
    int M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1], bs = block_size;
    int tm = (M + bs - 1) / bs, tn = (N + bs - 1) / bs, tk = (K + bs - 1) / bs;
    mlx_dtype t = a->dtype;
    mc_array *in[5];
    int n = 0;
    in[n++] = to_batch(s, a, nb, batch, M, K);
    in[n++] = to_batch(s, b, nb, batch, K, N);
    if (mask_out) {
        mc_array *m = mc_gb_astype(s, mask_out, mask_out->dtype == MLX_BOOL ? MLX_BOOL : t);
        in[n++] = to_batch(s, m, nb, batch, tm, tn);
    }
    if (mask_lhs || mask_rhs) {
        mc_array *l = mask_lhs ? mask_lhs : mc_gb_scalar(s, 1.0, MLX_BOOL);
        mc_array *r = mask_rhs ? mask_rhs : mc_gb_scalar(s, 1.0, MLX_BOOL);
        mlx_dtype mt = l && r && l->dtype == MLX_BOOL && r->dtype == MLX_BOOL ? MLX_BOOL : t;
        in[n++] = to_batch(s, mc_gb_astype(s, l, mt), nb, batch, tm, tk);
        in[n++] = to_batch(s, mc_gb_astype(s, r, mt), nb, batch, tk, tn);
    }
    if (s->failed)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!in[i])
            return NULL;
    mc_block_mm_params p = {block_size};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_BLOCK_MASKED_MM, in, n, &p, sizeof p));
}

/* ---- derivatives ---- */

/* uint32 0, 1, ... in idx's shape: MLX's default indices of an operand
 * whose batch dims are idx's. */
static mc_array *iota_like(mc_gb *s, const mc_array *idx)
{
    return mc_gb_reshape(s, mc_gb_arange(s, (int)idx->size, MLX_UINT32), idx->ndim, idx->shape);
}

/* The sum of the products g (I..., r, c) into the matrices of x that idx
 * (shape I) names, shaped as x: a scatter-add over x's flattened batch. */
static mc_array *scatter_into(mc_gb *s, mc_array *g, mc_array *idx, const mc_array *x, int r, int c)
{
    int count = (int)batch_count(x), zshape[3] = {count, r, c};
    int ushape[MC_MAX_NDIM];
    memcpy(ushape, idx->shape, sizeof(int) * (size_t)idx->ndim);
    ushape[idx->ndim] = 1;
    ushape[idx->ndim + 1] = r;
    ushape[idx->ndim + 2] = c;
    mc_array *upd = mc_gb_reshape(s, g, idx->ndim + 3, ushape);
    const int axes[1] = {0};
    mc_array *sum =
        mc_gb_scatter(s, mc_gb_zeros(s, 3, zshape, g ? g->dtype : x->dtype), &idx, 1, axes, upd, MC_SCATTER_SUM);
    int shape[MC_MAX_NDIM];
    memcpy(shape, x->shape, sizeof(int) * (size_t)(x->ndim - 2));
    shape[x->ndim - 2] = r;
    shape[x->ndim - 1] = c;
    return mc_gb_reshape(s, sum, x->ndim, shape);
}

static mc_array *gather_mm_cot(mc_gb *s, mc_array *node, mc_array *cot, int arg)
{
    mc_array *a = node->inputs[0], *b = node->inputs[1], *li = node->inputs[2], *ri = node->inputs[3];
    const mc_gather_mm_params *p = node->params;
    if (arg == 0) {
        /* cot @ b^T for each product, summed into the matrix of a it read */
        mc_array *g =
            mc_gb_gather_mm(s, cot, mc_gb_swap_last(s, b), iota_like(s, ri), ri, p->left_sorted, p->right_sorted);
        return scatter_into(s, g, li, a, a->shape[a->ndim - 2], a->shape[a->ndim - 1]);
    }
    /* (cot^T @ a)^T for each product, summed into the matrix of b it read */
    mc_array *g = mc_gb_gather_mm(s, mc_gb_swap_last(s, cot), a, iota_like(s, li), li, false, false);
    return mc_gb_swap_last(s, scatter_into(s, g, ri, b, b->shape[b->ndim - 1], b->shape[b->ndim - 2]));
}

static int gather_mm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                         const char *fn)
{
    for (int k = 0; k < nargs; k++)
        if (argnums[k] > 1)
            return mc_error("[%s] [GatherMM] Cannot calculate VJP with respect to indices.", fn);
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        if (mc_vjp_store(vjps, k, &s, gather_mm_cot(&s, node, cot, argnums[k])))
            return 1;
    }
    return 0;
}

/* BlockMaskedMM's vjp. The masks the node holds, NULL where absent. */
typedef struct block_parts {
    mc_array *a, *b, *out, *lhs, *rhs;
    int bs, out_idx, lhs_idx; /* input positions; -1 when absent */
} block_parts;

static void block_parts_of(block_parts *q, const mc_array *node)
{
    int n = node->n_inputs;
    q->a = node->inputs[0];
    q->b = node->inputs[1];
    q->out_idx = n == 3 || n == 5 ? 2 : -1;
    q->lhs_idx = n >= 4 ? n - 2 : -1;
    q->out = q->out_idx >= 0 ? node->inputs[q->out_idx] : NULL;
    q->lhs = n >= 4 ? node->inputs[n - 2] : NULL;
    q->rhs = n >= 4 ? node->inputs[n - 1] : NULL;
    q->bs = ((const mc_block_mm_params *)node->params)->block_size;
}

static mc_array *swapped(mc_gb *s, mc_array *x) { return x ? mc_gb_swap_last(s, x) : NULL; }

/* The sum over each bs x bs block of p * q (..., Y, X), padded up to whole
 * blocks: (..., tY, tX). */
static mc_array *block_sums(mc_gb *s, mc_array *p, mc_array *q, int bs)
{
    mc_array *r = mc_gb_op(s, MC_B_MULTIPLY, p, q);
    if (!r)
        return NULL;
    int nd = r->ndim, Y = r->shape[nd - 2], X = r->shape[nd - 1];
    int ty = (Y + bs - 1) / bs, tx = (X + bs - 1) / bs;
    r = mc_gb_pad_zeros(s, r, nd - 2, 0, ty * bs - Y);
    r = mc_gb_pad_zeros(s, r, nd - 1, 0, tx * bs - X);
    int shape[MC_MAX_NDIM + 2];
    if (nd + 2 > MC_MAX_NDIM) {
        s->failed = true;
        mc_error("[%s] Too many dimensions (%d).", s->fn, nd + 2);
        return NULL;
    }
    memcpy(shape, p->shape, sizeof(int) * (size_t)(nd - 2));
    int dims[4] = {ty, bs, tx, bs};
    memcpy(shape + nd - 2, dims, sizeof dims);
    const int axes[2] = {nd - 1, nd + 1};
    r = mc_gb_sum(s, mc_gb_reshape(s, r, nd + 2, shape), axes, 2);
    shape[nd - 2] = ty;
    shape[nd - 1] = tx;
    return mc_gb_reshape(s, r, nd, shape);
}

static mc_array *block_mm_cot(mc_gb *s, const block_parts *q, mc_array *cot, int arg)
{
    int bs = q->bs;
    if (arg == 0) /* cot @ b^T, masked as the forward product masked a */
        return mc_gb_block_masked_mm(s, cot, mc_gb_swap_last(s, q->b), bs, q->lhs, q->out, swapped(s, q->rhs));
    if (arg == 1)
        return mc_gb_block_masked_mm(s, mc_gb_swap_last(s, q->a), cot, bs, q->rhs, swapped(s, q->lhs), q->out);
    if (arg == q->out_idx) /* the product before the out mask, summed per block */
        return block_sums(s, cot, mc_gb_block_masked_mm(s, q->a, q->b, bs, NULL, q->lhs, q->rhs), bs);
    if (arg == q->lhs_idx) /* the cotangent of the masked a, times a, per block */
        return block_sums(
            s, q->a, mc_gb_block_masked_mm(s, cot, mc_gb_swap_last(s, q->b), bs, NULL, q->out, swapped(s, q->rhs)),
            bs);
    return block_sums(
        s, q->b, mc_gb_block_masked_mm(s, mc_gb_swap_last(s, q->a), cot, bs, NULL, swapped(s, q->lhs), q->out),
        bs);
}

static int block_mm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                        const char *fn)
{
    block_parts q;
    block_parts_of(&q, node);
    for (int k = 0; k < nargs; k++)
        if (argnums[k] >= 2 && node->inputs[argnums[k]]->dtype == MLX_BOOL)
            return mc_error("[%s] [BlockMaskedMM] Cannot calculate VJP with respect to boolean masks.", fn);
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        if (mc_vjp_store(vjps, k, &s, block_mm_cot(&s, &q, cot, argnums[k])))
            return 1;
    }
    return 0;
}

const mc_prim_info mc_prim_gather_mm = {
    .name = "GatherMM",
    .arity = 4,
    .infer = gather_mm_infer,
    .eval = mc_gather_mm_eval,
    .vjp = gather_mm_vjp,
    .jvp = mc_jvp_none,
    .vmap = mc_vmap_unsupported,
};

const mc_prim_info mc_prim_block_masked_mm = {
    .name = "BlockMaskedMM",
    .arity = MC_ARITY_ANY,
    .infer = block_mm_infer,
    .eval = mc_block_masked_mm_eval,
    .vjp = block_mm_vjp,
    .jvp = mc_jvp_none,
    .vmap = mc_vmap_unsupported,
};

const mc_prim_info mc_prim_segmented_mm = {
    .name = "SegmentedMM",
    .arity = 3,
    .infer = segmented_mm_infer,
    .eval = mc_segmented_mm_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .vmap = mc_vmap_unsupported,
};
