/* Owns the linear algebra primitives Matmul and AddMM: their shape/dtype
 * rules and their evaluation through BLAS (graph/blas.c).
 *
 * One node covers every matmul shape: a 1-D left operand is read as one
 * row and a 1-D right operand as one column (their dim is absent from the
 * output), and batch dims broadcast inside the node through stride-0
 * offsets. So no reshape or broadcast node carries a traced shape, and a
 * shapeless compiled tape replays on new shapes through infer alone.
 *
 * Operands go to BLAS as they are when their matrix part is row-major or
 * column-major with a leading dimension (plain, transposed or sliced
 * views); anything else, and float16/bfloat16 (computed in float32), is
 * first copied into a compact temporary. */
#include <string.h>

#include "graph/blas.h"
#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_matmul.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* ---- shape rules ---- */

/* The shapes MLX names in its message: a 1-D a as (1,k), a 1-D b as (k,1). */
static char *matrix_shape_str(char *buf, size_t n, const mc_array *x, bool left)
{
    if (x->ndim != 1)
        return mc_shape_str(buf, n, x->ndim, x->shape);
    int s[2] = {left ? 1 : x->shape[0], left ? x->shape[0] : 1};
    return mc_shape_str(buf, n, 2, s);
}

int mc_matmul_check_shapes(const mc_array *a, const mc_array *b, const char *fn)
{
    if (a->ndim == 0 || b->ndim == 0)
        return mc_error("[%s] Got 0 dimension input. Inputs must have at least one dimension.", fn);
    int ka = a->shape[a->ndim - 1];
    int kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    if (ka != kb) {
        char s1[512], s2[512];
        return mc_error("[%s] Last dimension of first input with shape %s must match second to last "
                        "dimension of second input with shape %s.", fn,
                        matrix_shape_str(s1, sizeof s1, a, true), matrix_shape_str(s2, sizeof s2, b, false));
    }
    return 0;
}

/* Output shape: broadcast batch dims, then m (unless a is 1-D), then n
 * (unless b is 1-D). */
static int product_meta(mc_meta *out, const mc_array *a, const mc_array *b, const char *fn)
{
    if (mc_matmul_check_shapes(a, b, fn))
        return 1;
    if (a->dtype != b->dtype)
        return mc_error("[%s] Internal: operands of dtypes %s and %s were not promoted.", fn,
                        mc_dtype_name(a->dtype), mc_dtype_name(b->dtype));
    int nba = a->ndim > 2 ? a->ndim - 2 : 0;
    int nbb = b->ndim > 2 ? b->ndim - 2 : 0;
    if (mc_broadcast_shapes(nba, a->shape, nbb, b->shape, &out->ndim, out->shape, fn))
        return 1;
    if (a->ndim >= 2)
        out->shape[out->ndim++] = a->shape[a->ndim - 2];
    if (b->ndim >= 2)
        out->shape[out->ndim++] = b->shape[b->ndim - 1];
    out->dtype = a->dtype;
    return 0;
}

static int matmul_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    if (product_meta(out, in[0], in[1], fn))
        return 1;
    if (!mc_dtype_is_inexact(out->dtype))
        return mc_error("[%s] Only inexact types are supported but %s and %s were provided which "
                        "results in %s, which is not a floating point type.", fn,
                        mc_dtype_name(in[0]->dtype), mc_dtype_name(in[1]->dtype), mc_dtype_name(out->dtype));
    return 0;
}

static int addmm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    const mc_array *c = in[2];
    if (product_meta(out, in[0], in[1], fn))
        return 1;
    if (c->dtype != out->dtype || !mc_dtype_is_float(out->dtype))
        return mc_error("[%s] Only real floating point types are supported but %s, %s and %s were "
                        "provided.", fn, mc_dtype_name(c->dtype), mc_dtype_name(in[0]->dtype),
                        mc_dtype_name(in[1]->dtype));
    int nd;
    int shape[MC_MAX_NDIM];
    if (mc_broadcast_shapes(c->ndim, c->shape, out->ndim, out->shape, &nd, shape, fn))
        return 1;
    if (nd != out->ndim || memcmp(shape, out->shape, sizeof(int) * (size_t)nd))
        return mc_error("[%s] input c must broadcast to the output shape", fn);
    return 0;
}


/* ---- evaluation ---- */

/* A temporary block of array data, freed with the size it was taken with. */
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

/* How BLAS can read an r x c matrix with row stride rs and column stride
 * cs (a stride of a dim of size 1 is meaningless, so any value passes). */
static bool blas_layout(int r, int c, int64_t rs, int64_t cs, bool *trans, int64_t *ld)
{
    int64_t rmin = r > 1 ? r : 1, cmin = c > 1 ? c : 1;
    if ((c <= 1 || cs == 1) && (r <= 1 || rs >= cmin)) {
        *trans = false;
        *ld = r <= 1 ? cmin : rs;
        return true;
    }
    if ((r <= 1 || rs == 1) && (c <= 1 || cs >= rmin)) {
        *trans = true;
        *ld = c <= 1 ? rmin : cs;
        return true;
    }
    return false;
}

bool mc_matmul_layout(int r, int c, int64_t rs, int64_t cs, bool *trans, int64_t *ld)
{
    return blas_layout(r, c, rs, cs, trans, ld);
}

/* One operand as BLAS will read it. */
typedef struct side {
    mc_blas_operand op;
    int64_t bstrides[MC_MAX_NDIM];
    scratch copy;
} side;

/* Batch strides of x's leading dims (all but its matrix dims), aligned to
 * the output's nb batch dims; broadcast dims get 0. */
static void batch_strides(const mc_array *x, const int64_t *strides, const int *shape, int nb, int64_t *out)
{
    int xb = x->ndim > 2 ? x->ndim - 2 : 0;
    for (int d = 0; d < nb; d++) {
        int k = d - (nb - xb);
        out[d] = (k < 0 || shape[k] == 1) ? 0 : strides[k];
    }
}

/* Prepares x (a when left, else b) in the compute dtype ct: as it is when
 * BLAS can read it, else copied (and converted) into a row-major scratch
 * in which broadcast batch dims stay broadcast rather than repeated. */
static int prepare(side *s, mc_array *x, bool left, int nb, mlx_dtype ct, const char *fn)
{
    int nd = x->ndim;
    int r, c;
    int64_t rs, cs;
    if (nd == 1) {
        r = left ? 1 : x->shape[0];
        c = left ? x->shape[0] : 1;
        rs = left ? 0 : x->strides[0];
        cs = left ? x->strides[0] : 0;
    } else {
        r = x->shape[nd - 2];
        c = x->shape[nd - 1];
        rs = x->strides[nd - 2];
        cs = x->strides[nd - 1];
    }
    s->op.bstrides = s->bstrides;
    if (x->dtype == ct && blas_layout(r, c, rs, cs, &s->op.trans, &s->op.ld)) {
        s->op.data = x->data;
        batch_strides(x, x->strides, x->shape, nb, s->bstrides);
        return 0;
    }

    int shape[MC_MAX_NDIM];
    int64_t strides[MC_MAX_NDIM];
    int xb = nd > 2 ? nd - 2 : 0;
    for (int d = 0; d < nd; d++)
        shape[d] = (d < xb && x->strides[d] == 0) ? 1 : x->shape[d];
    size_t count;
    mc_shape_size(nd, shape, &count); /* at most x->size: no overflow */
    mc_row_strides(nd, shape, strides);
    size_t isz = mc_dtype_size(ct);
    if (!scratch_take(&s->copy, count * isz, fn))
        return 1;
    mc_convert_kernel k = mc_kernels()->convert[x->dtype][ct];
    if (!k)
        return mc_error("[%s] Cannot convert %s to %s.", fn, mc_dtype_name(x->dtype), mc_dtype_name(ct));
    mc_unary_strided(k, mc_dtype_size(x->dtype), isz, x->data, x->strides, s->copy.p, strides, nd, shape);
    mc_blas_note_copy();
    s->op.data = s->copy.p;
    s->op.trans = false;
    s->op.ld = c > 1 ? c : 1;
    batch_strides(x, strides, shape, nb, s->bstrides);
    return 0;
}

/* Writes c, broadcast to out's shape and converted to ct, into dst
 * (row-major). */
static int fill_from(void *dst, mlx_dtype ct, const mc_array *out, const mc_array *c, const char *fn)
{
    mc_convert_kernel k = mc_kernels()->convert[c->dtype][ct];
    if (!k)
        return mc_error("[%s] Cannot convert %s to %s.", fn, mc_dtype_name(c->dtype), mc_dtype_name(ct));
    int64_t cs[MC_MAX_NDIM], os[MC_MAX_NDIM];
    mc_broadcast_strides(c, out->ndim, out->shape, cs);
    mc_row_strides(out->ndim, out->shape, os);
    mc_unary_strided(k, mc_dtype_size(c->dtype), mc_dtype_size(ct), c->data, cs, dst, os, out->ndim,
                     out->shape);
    return 0;
}

/* out = alpha * a @ b (+ beta * c when c is given). */
static int run_product(mc_array *out, mc_array *a, mc_array *b, mc_array *c, float alpha, float beta,
                       const char *fn)
{
    mlx_dtype ct = (out->dtype == MLX_FLOAT16 || out->dtype == MLX_BFLOAT16) ? MLX_FLOAT32 : out->dtype;
    bool direct = ct == out->dtype;
    /* with the compute dtype, c's buffer may become the output: the
     * product then accumulates into it in place */
    const mc_buffer *cbuf = c ? c->buf : NULL;
    mc_array *cands[1] = {c};
    if (mc_out_alloc(out, cands, c && direct ? 1 : 0, fn))
        return 1;
    bool donated = c && out->buf == cbuf;
    if (out->size == 0)
        return 0;

    int rc = 1;
    scratch acc = {0};
    side sa = {0}, sb = {0};
    size_t csz = mc_dtype_size(ct);
    void *dst = direct ? out->data : scratch_take(&acc, out->size * csz, fn);
    if (!dst)
        goto done;
    if (c && !donated && fill_from(dst, ct, out, c, fn))
        goto done;

    int k = a->shape[a->ndim - 1];
    if (k == 0) {
        /* an empty sum: the product is zero */
        if (!c)
            memset(dst, 0, out->size * csz);
        else if (beta != 1.0f)
            mc_blas_scale(ct, out->size, beta, dst);
    } else {
        int nb = out->ndim - (a->ndim >= 2) - (b->ndim >= 2);
        if (prepare(&sa, a, true, nb, ct, fn) || prepare(&sb, b, false, nb, ct, fn))
            goto done;
        mc_blas_matmul_args args = {
            .dtype = ct,
            .m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1,
            .n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1,
            .k = k,
            .alpha = alpha,
            .beta = c ? beta : 0.0f,
            .a = sa.op,
            .b = sb.op,
            .c = dst,
            .batch_ndim = nb,
            .batch_shape = out->shape,
        };
        if (mc_blas_matmul(&args, fn))
            goto done;
    }
    if (!direct) {
        mc_convert_kernel back = mc_kernels()->convert[ct][out->dtype];
        if (!back) {
            mc_error("[%s] Cannot convert %s to %s.", fn, mc_dtype_name(ct), mc_dtype_name(out->dtype));
            goto done;
        }
        back(dst, out->data, out->size);
    }
    rc = 0;
done:
    scratch_drop(&sa.copy);
    scratch_drop(&sb.copy);
    scratch_drop(&acc);
    return rc;
}

static int matmul_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    return run_product(out, in[0], in[1], NULL, 1.0f, 0.0f, "matmul");
}

static int addmm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_addmm_params *p = params;
    return run_product(out, in[0], in[1], in[2], p->alpha, p->beta, "addmm");
}

/* ---- derivatives (MLX's Matmul and AddMM rules; the node's own 1-D
 * operands and batch broadcasting are undone here, where MLX's ops made
 * them explicit nodes) ---- */

/* x as a matrix: a 1-D left operand as (1, k), a 1-D right one as (k, 1). */
static mc_array *as_matrix(mc_gb *s, mc_array *x, bool left)
{
    if (x->ndim >= 2)
        return x;
    int shape[2] = {left ? 1 : x->shape[0], left ? x->shape[0] : 1};
    return mc_gb_reshape(s, x, 2, shape);
}

/* The cotangent of a @ b in the matrix form: batch dims, then m and n,
 * each 1 where its operand was 1-D. */
static mc_array *cot_as_matrix(mc_gb *s, mc_array *cot, const mc_array *a, const mc_array *b)
{
    int shape[MC_MAX_NDIM], nb = cot->ndim - (a->ndim >= 2) - (b->ndim >= 2);
    memcpy(shape, cot->shape, sizeof(int) * (size_t)nb);
    shape[nb] = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
    shape[nb + 1] = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
    return mc_gb_reshape(s, cot, nb + 2, shape);
}

/* d(a @ b) for operand i given the cotangent: cot @ b^T or a^T @ cot,
 * summed over broadcast batch dims and shaped back as the operand. */
static mc_array *product_vjp(mc_gb *s, mc_array *a, mc_array *b, mc_array *cot, int i)
{
    mc_array *a2 = as_matrix(s, a, true), *b2 = as_matrix(s, b, false);
    mc_array *c2 = cot_as_matrix(s, cot, a, b);
    mc_array *g = i == 0 ? mc_gb_matmul(s, c2, mc_gb_swap_last(s, b2)) : mc_gb_matmul(s, mc_gb_swap_last(s, a2), c2);
    mc_array *op = i == 0 ? a2 : b2, *in = i == 0 ? a : b;
    if (!op)
        return NULL;
    return mc_gb_reshape(s, mc_gb_sum_to_shape(s, g, op->ndim, op->shape), in->ndim, in->shape);
}

static int matmul_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        if (mc_vjp_store(vjps, k, &s, product_vjp(&s, node->inputs[0], node->inputs[1], cot, argnums[k])))
            return 1;
    }
    return 0;
}

/* ta @ b + a @ tb, for the operands that have tangents. */
static mc_array *product_jvp(mc_gb *s, mc_array *node, mc_array *const *tans, const int *argnums, int nargs)
{
    mc_array *r = NULL;
    for (int k = 0; k < nargs && argnums[k] < 2; k++) {
        mc_array *p = argnums[k] == 0 ? mc_gb_matmul(s, tans[k], node->inputs[1])
                                      : mc_gb_matmul(s, node->inputs[0], tans[k]);
        r = r ? mc_gb_op(s, MC_B_ADD, r, p) : p;
    }
    return r;
}

static mc_array *matmul_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, product_jvp(&s, node, tans, argnums, nargs));
}

/* g scaled by f, or g itself when f is 1 (as MLX's AddMM::vjp, which
 * adds no node for a unit alpha or beta) */
static mc_array *scaled(mc_gb *s, float f, mlx_dtype d, mc_array *g)
{
    return f == 1.0f ? g : mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scalar(s, f, d), g);
}

/* alpha * a @ b + beta * c */
static int addmm_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_addmm_params *p = node->params;
    mlx_dtype d = node->dtype;
    for (int k = 0; k < nargs; k++) {
        int i = argnums[k];
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (i < 2) {
            g = scaled(&s, p->alpha, d, product_vjp(&s, node->inputs[0], node->inputs[1], cot, i));
        } else {
            mc_array *c = node->inputs[2];
            g = mc_gb_sum_to_shape(&s, scaled(&s, p->beta, d, cot), c->ndim, c->shape);
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *addmm_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_addmm_params *p = node->params;
    mlx_dtype d = node->dtype;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = product_jvp(&s, node, tans, argnums, nargs);
    if (r)
        r = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_scalar(&s, p->alpha, d), r);
    if (nargs > 0 && argnums[nargs - 1] == 2) {
        mc_array *c = mc_gb_op(&s, MC_B_MULTIPLY, mc_gb_scalar(&s, p->beta, d), tans[nargs - 1]);
        r = r ? mc_gb_op(&s, MC_B_ADD, r, c) : c;
    }
    return mc_gb_finish_ref(&s, mc_gb_broadcast_like(&s, r, node));
}

/* vmap: each batched operand with the batch first, a 1-D one made a
 * matrix (a row for a, a column for b), and size-1 axes after the batch
 * up to the other operand's batch rank, so that Matmul's own broadcasting
 * of batch dims pairs each element with its own; the result is reshaped
 * to the batch and the node's shape (which drops the added size-1 dims). */
static mc_array *matmul_operand(mc_array *x, int axis, const mc_array *orig, bool is_a, int nbatch, const char *fn)
{
    if (axis < 0)
        return mc_array_retain(x);
    int shape[MC_MAX_NDIM], nd = 0, own = orig->ndim > 2 ? orig->ndim - 2 : 0;
    if (mc_vmap_check_ndim(nbatch + 2, fn))
        return NULL;
    shape[nd++] = x->shape[axis];
    for (int i = own; i < nbatch; i++)
        shape[nd++] = 1;
    if (orig->ndim == 1 && is_a)
        shape[nd++] = 1;
    for (int i = 0; i < orig->ndim; i++)
        shape[nd++] = orig->shape[i];
    if (orig->ndim == 1 && !is_a)
        shape[nd++] = 1;
    mc_array *f = mc_node_moveaxis(x, axis, 0, fn);
    mc_array *r = f ? mc_node_reshape(f, nd, shape, fn) : NULL;
    mc_array_release(f);
    return r;
}

static int matmul_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn)
{
    const mc_array *a = node->inputs[0], *b = node->inputs[1];
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
    int nbatch = na > nb ? na : nb;
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    mc_array *x = matmul_operand(in[0], axes[0], a, true, nbatch, fn);
    mc_array *y = x ? matmul_operand(in[1], axes[1], b, false, nbatch, fn) : NULL;
    mc_array *args[2] = {x, y};
    mc_array *r = y ? mc_node_like(node, args, 2, fn) : NULL;
    mc_array_release(y);
    mc_array_release(x);
    int shape[MC_MAX_NDIM];
    shape[0] = mc_vmap_size(in, axes, 2);
    memcpy(shape + 1, node->shape, sizeof(int) * (size_t)node->ndim);
    *out = r ? mc_node_reshape(r, node->ndim + 1, shape, fn) : NULL;
    mc_array_release(r);
    *out_axis = 0;
    return *out ? 0 : 1;
}

/* As Matmul's, with c (which broadcasts to the node's output) broadcast to
 * the batched output and given the batched product's shape, which differs
 * from it only by size-1 axes. */
static int addmm_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                      const char *fn)
{
    const mc_array *a = node->inputs[0], *b = node->inputs[1];
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
    int nbatch = na > nb ? na : nb, bsz = mc_vmap_size(in, axes, 3);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    int tshape[MC_MAX_NDIM], pshape[MC_MAX_NDIM], pnd = 0;
    tshape[0] = bsz;
    memcpy(tshape + 1, node->shape, sizeof(int) * (size_t)node->ndim);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *args[3], *a_in = in[0];
    int a_ax = axes[0];
    if (axes[0] < 0 && axes[1] < 0) {
        /* only c batched: the product is too, through a */
        a_in = mc_gb_vmap_front(&s, in[0], -1, bsz);
        a_ax = 0;
    }
    args[0] = s.failed ? NULL : mc_gb_hold(&s, matmul_operand(a_in, a_ax, a, true, nbatch, fn));
    args[1] = s.failed ? NULL : mc_gb_hold(&s, matmul_operand(in[1], axes[1], b, false, nbatch, fn));
    if (!s.failed) {
        mc_array *x = args[0], *y = args[1];
        int nx = x->ndim > 2 ? x->ndim - 2 : 0, ny = y->ndim > 2 ? y->ndim - 2 : 0;
        if (mc_broadcast_shapes(nx, x->shape, ny, y->shape, &pnd, pshape, fn))
            s.failed = true;
        if (x->ndim >= 2)
            pshape[pnd++] = x->shape[x->ndim - 2];
        if (y->ndim >= 2)
            pshape[pnd++] = y->shape[y->ndim - 1];
    }
    /* c padded to the output's rank, its batch first, then broadcast */
    mc_array *c = in[2];
    if (!s.failed && axes[2] >= 0) {
        int cshape[MC_MAX_NDIM], pad = node->ndim - node->inputs[2]->ndim;
        cshape[0] = bsz;
        for (int d = 0; d < pad; d++)
            cshape[1 + d] = 1;
        memcpy(cshape + 1 + pad, node->inputs[2]->shape, sizeof(int) * (size_t)node->inputs[2]->ndim);
        c = mc_gb_reshape(&s, mc_gb_vmap_front(&s, c, axes[2], bsz), node->ndim + 1, cshape);
    }
    c = mc_gb_broadcast(&s, c, node->ndim + 1, tshape);
    args[2] = mc_gb_reshape(&s, c, pnd, pshape);
    mc_array *r = mc_gb_like(&s, node, args, 3);
    *out = mc_gb_finish_ref(&s, mc_gb_reshape(&s, r, node->ndim + 1, tshape));
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_matmul = {
    .name = "Matmul",
    .arity = 2,
    .infer = matmul_infer,
    .eval = matmul_eval,
    .vjp = matmul_vjp,
    .jvp = matmul_jvp,
    .vmap = matmul_vmap,
};

const mc_prim_info mc_prim_addmm = {
    .name = "AddMM",
    .arity = 3,
    .infer = addmm_infer,
    .eval = addmm_eval,
    .vjp = addmm_vjp,
    .jvp = addmm_jvp,
    .vmap = addmm_vmap,
};
