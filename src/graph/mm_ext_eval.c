/* Evaluates GatherMM, BlockMaskedMM and SegmentedMM (prims_mm_ext.h has
 * their contracts): every product goes to BLAS through mc_blas_matmul.
 *
 * Operands are read where they lie when each matrix is row- or
 * column-major with a leading dimension (no gathered matrix is copied out
 * of its stack); otherwise, and for float16/bfloat16 (computed in
 * float32, as matmul), the whole operand is first copied into a compact
 * temporary whose broadcast batch dims stay broadcast.
 *
 * GatherMM with few rows per product (M below GROUP_MAX_M, the MoE case
 * of one token per product) gathers the products that share a right
 * matrix into one product of many rows: the rows of their left matrices
 * are packed (M x K each, small next to the K x N right matrix; used in
 * place when they already follow each other), so each expert's weights
 * are read once per call instead of once per token.
 *
 * BlockMaskedMM masks copies of the operands as MLX does, then computes
 * the output by runs of block rows, skipping (zero filling) a block row
 * whose out mask or lhs mask is zero across the row, and finally masks
 * the output blocks. */
#include <stdlib.h>
#include <string.h>

#include "graph/blas.h"
#include "graph/index_read.h"
#include "graph/prims_matmul.h"
#include "graph/prims_mm_ext.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "simd/simd.h"

enum {
    GROUP_MAX_M = 64, /* products with fewer rows are grouped by right matrix */
    GROUP_ROWS = 256, /* rows of one grouped product */
};

/* ---- temporaries ---- */

typedef struct scratch {
    void *p;
    size_t nbytes;
} scratch;

static void *scratch_take(scratch *s, size_t nbytes, const char *fn)
{
    s->nbytes = nbytes ? nbytes : 1;
    s->p = mc_data_alloc(s->nbytes);
    if (!s->p)
        mc_error_oom(fn, s->nbytes);
    return s->p;
}

static void scratch_drop(scratch *s)
{
    if (s->p)
        mc_data_free(s->p, s->nbytes);
    s->p = NULL;
}

/* ---- operands ---- */

/* The compute dtype of an output: halves are computed in float32. */
static mlx_dtype compute_dtype(mlx_dtype d) { return (d == MLX_FLOAT16 || d == MLX_BFLOAT16) ? MLX_FLOAT32 : d; }

/* A stack of matrices in the compute dtype: matrix number i (row-major
 * over the batch dims) starts at data + offset(i); rows rs and columns cs
 * elements apart. */
typedef struct operand {
    const char *data;
    size_t isz;
    int rows, cols;
    int64_t rs, cs;
    int nb;
    int bshape[MC_MAX_NDIM];
    int64_t bstrides[MC_MAX_NDIM];
    size_t count;
    scratch copy;
} operand;

static int64_t operand_offset(const operand *o, size_t i)
{
    int64_t off = 0;
    for (int d = o->nb - 1; d >= 0; d--) {
        size_t n = (size_t)o->bshape[d];
        off += (int64_t)(i % n) * o->bstrides[d];
        i /= n;
    }
    return off;
}

static const char *operand_matrix(const operand *o, size_t i)
{
    return o->data + operand_offset(o, i) * (int64_t)o->isz;
}

/* x (at least 2-d) as an operand in ct: in place when BLAS reads its
 * matrices as they are, else copied. */
static int operand_prepare(operand *o, const mc_array *x, mlx_dtype ct, const char *fn)
{
    int nd = x->ndim;
    memset(o, 0, sizeof *o);
    o->isz = mc_dtype_size(ct);
    o->rows = x->shape[nd - 2];
    o->cols = x->shape[nd - 1];
    o->nb = nd - 2;
    o->count = 1;
    for (int d = 0; d < o->nb; d++) {
        o->bshape[d] = x->shape[d];
        o->count *= (size_t)x->shape[d];
    }
    bool trans;
    int64_t ld;
    if (x->dtype == ct &&
        mc_matmul_layout(o->rows, o->cols, x->strides[nd - 2], x->strides[nd - 1], &trans, &ld)) {
        o->data = x->data;
        o->rs = x->strides[nd - 2];
        o->cs = x->strides[nd - 1];
        memcpy(o->bstrides, x->strides, sizeof(int64_t) * (size_t)o->nb);
        return 0;
    }
    /* a compact row-major copy; broadcast batch dims are kept once */
    int shape[MC_MAX_NDIM];
    int64_t strides[MC_MAX_NDIM];
    for (int d = 0; d < nd; d++)
        shape[d] = (d < o->nb && x->strides[d] == 0) ? 1 : x->shape[d];
    size_t count;
    mc_shape_size(nd, shape, &count); /* at most x->size */
    mc_row_strides(nd, shape, strides);
    mc_convert_kernel k = mc_kernels()->convert[x->dtype][ct];
    if (!k)
        return mc_error("[%s] Cannot convert %s to %s.", fn, mc_dtype_name(x->dtype), mc_dtype_name(ct));
    if (!scratch_take(&o->copy, count * o->isz, fn))
        return 1;
    mc_unary_strided(k, mc_dtype_size(x->dtype), o->isz, x->data, x->strides, o->copy.p, strides, nd, shape);
    mc_blas_note_copy();
    o->data = o->copy.p;
    o->rs = o->cols;
    o->cs = 1;
    for (int d = 0; d < o->nb; d++)
        o->bstrides[d] = shape[d] == 1 ? 0 : strides[d];
    return 0;
}

/* c (m x n, dense row-major) = a (m x k; rows ars, columns acs apart)
 * times b (k x n; brs, bcs). m, n, k >= 1. */
static int product(mlx_dtype ct, int m, int n, int k, const char *a, int64_t ars, int64_t acs, const char *b,
                   int64_t brs, int64_t bcs, void *c, const char *fn)
{
    mc_blas_matmul_args args = {.dtype = ct, .m = m, .n = n, .k = k, .alpha = 1.0f, .beta = 0.0f, .c = c};
    args.a.data = a;
    args.b.data = b;
    if (!mc_matmul_layout(m, k, ars, acs, &args.a.trans, &args.a.ld) ||
        !mc_matmul_layout(k, n, brs, bcs, &args.b.trans, &args.b.ld))
        return mc_error("[%s] Internal: an operand BLAS cannot read.", fn);
    return mc_blas_matmul(&args, fn);
}

/* The output's data and, for a half output, the float32 buffer the
 * products write (converted by output_finish). */
typedef struct output {
    char *dst;
    mlx_dtype ct;
    scratch acc;
} output;

static int output_begin(output *o, mc_array *out, const char *fn)
{
    memset(o, 0, sizeof *o);
    o->ct = compute_dtype(out->dtype);
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (o->ct == out->dtype) {
        o->dst = out->data;
        return 0;
    }
    o->dst = scratch_take(&o->acc, out->size * mc_dtype_size(o->ct), fn);
    return o->dst ? 0 : 1;
}

static void output_finish(output *o, mc_array *out)
{
    if (o->ct != out->dtype)
        mc_kernels()->convert[o->ct][out->dtype](o->dst, out->data, out->size);
    scratch_drop(&o->acc);
}

/* Element `at` (row-major logical position) of an evaluated array, as an
 * element offset from its data pointer. */
static int64_t logical_offset(const mc_array *x, size_t at)
{
    int64_t off = 0;
    for (int d = x->ndim - 1; d >= 0; d--) {
        size_t n = (size_t)x->shape[d];
        off += (int64_t)(at % n) * x->strides[d];
        at /= n;
    }
    return off;
}

/* Index `at` of a uint32 index array, clamped to below count. */
static size_t read_index(const mc_array *idx, size_t at, size_t count)
{
    int64_t v = mc_index_read(idx->data, logical_offset(idx, at), idx->dtype);
    return (size_t)mc_index_place(v, (int64_t)count);
}

/* ---- GatherMM ---- */

typedef struct pick {
    size_t b, j, a; /* right matrix, product, left matrix */
} pick;

static int pick_cmp(const void *x, const void *y)
{
    const pick *p = x, *q = y;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->j < q->j ? -1 : (p->j > q->j ? 1 : 0);
}

/* Copies the m x k matrix at src (rows rs, columns cs apart) into dst,
 * row-major. */
static void pack_rows(char *dst, const char *src, int m, int k, int64_t rs, int64_t cs, size_t isz)
{
    for (int r = 0; r < m; r++) {
        const char *row = src + (int64_t)r * rs * (int64_t)isz;
        char *d = dst + (size_t)r * (size_t)k * isz;
        if (cs == 1) {
            memcpy(d, row, (size_t)k * isz);
            continue;
        }
        for (int c = 0; c < k; c++)
            memcpy(d + (size_t)c * isz, row + (int64_t)c * cs * (int64_t)isz, isz);
    }
}

/* The products picks[0..cnt) share one right matrix: one product of
 * cnt * M rows, reading the left rows in place when each left matrix
 * follows the previous one as more rows, else from a packed copy, and
 * writing in place when the products are consecutive. */
static int gather_group(const pick *picks, size_t cnt, const operand *oa, const operand *ob, char *dst,
                        mlx_dtype ct, scratch *pa, scratch *pc, const char *fn)
{
    int M = oa->rows, K = oa->cols, N = ob->cols;
    size_t isz = oa->isz, mat = (size_t)M * (size_t)N * isz;
    const char *b = operand_matrix(ob, picks[0].b);
    const char *a0 = operand_matrix(oa, picks[0].a);
    if (cnt == 1)
        return product(ct, M, N, K, a0, oa->rs, oa->cs, b, ob->rs, ob->cs, dst + picks[0].j * mat, fn);
    /* stacked rows need a row-major layout whose row stride BLAS accepts */
    bool out_seq = true, rows_seq = (oa->cs == 1 || K == 1) && oa->rs >= K;
    for (size_t t = 1; t < cnt; t++) {
        out_seq = out_seq && picks[t].j == picks[t - 1].j + 1;
        rows_seq = rows_seq && operand_matrix(oa, picks[t].a) ==
                                   operand_matrix(oa, picks[t - 1].a) + (int64_t)M * oa->rs * (int64_t)isz;
    }
    int rows = (int)(cnt * (size_t)M);
    const char *a = a0;
    int64_t ars = oa->rs, acs = oa->cs;
    if (!rows_seq) {
        for (size_t t = 0; t < cnt; t++)
            pack_rows((char *)pa->p + t * (size_t)M * (size_t)K * isz, operand_matrix(oa, picks[t].a), M, K,
                      oa->rs, oa->cs, isz);
        a = pa->p;
        ars = K;
        acs = 1;
    }
    char *c = out_seq ? dst + picks[0].j * mat : pc->p;
    if (product(ct, rows, N, K, a, ars, acs, b, ob->rs, ob->cs, c, fn))
        return 1;
    if (!out_seq)
        for (size_t t = 0; t < cnt; t++)
            memcpy(dst + picks[t].j * mat, (char *)pc->p + t * mat, mat);
    return 0;
}

static int gather_run(output *o, mc_array *out, mc_array *const *in, const char *fn)
{
    int M = in[0]->shape[in[0]->ndim - 2], K = in[0]->shape[in[0]->ndim - 1];
    int N = in[1]->shape[in[1]->ndim - 1];
    size_t count = out->size / ((size_t)M * (size_t)N);
    size_t isz = mc_dtype_size(o->ct);
    if (K == 0) {
        memset(o->dst, 0, out->size * isz);
        return 0;
    }
    int rc = 1;
    operand oa, ob;
    memset(&ob, 0, sizeof ob);
    scratch sp = {0}, pa = {0}, pc = {0};
    if (operand_prepare(&oa, in[0], o->ct, fn) || operand_prepare(&ob, in[1], o->ct, fn))
        goto done;
    pick *picks = scratch_take(&sp, count * sizeof(pick), fn);
    if (!picks)
        goto done;
    for (size_t j = 0; j < count; j++)
        picks[j] = (pick){read_index(in[3], j, ob.count), j, read_index(in[2], j, oa.count)};
    if (M >= GROUP_MAX_M) {
        for (size_t j = 0; j < count; j++)
            if (gather_group(&picks[j], 1, &oa, &ob, o->dst, o->ct, NULL, NULL, fn))
                goto done;
        rc = 0;
        goto done;
    }
    qsort(picks, count, sizeof(pick), pick_cmp);
    size_t cap = GROUP_ROWS / (size_t)M;
    size_t most = count < cap ? count : cap;
    if (!scratch_take(&pa, most * (size_t)M * (size_t)K * isz, fn) ||
        !scratch_take(&pc, most * (size_t)M * (size_t)N * isz, fn))
        goto done;
    for (size_t j = 0; j < count;) {
        size_t e = j + 1;
        while (e < count && e - j < cap && picks[e].b == picks[j].b)
            e++;
        if (gather_group(&picks[j], e - j, &oa, &ob, o->dst, o->ct, &pa, &pc, fn))
            goto done;
        j = e;
    }
    rc = 0;
done:
    scratch_drop(&oa.copy);
    scratch_drop(&ob.copy);
    scratch_drop(&sp);
    scratch_drop(&pa);
    scratch_drop(&pc);
    return rc;
}

int mc_gather_mm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    static const char fn[] = "gather_mm";
    output o;
    if (output_begin(&o, out, fn))
        return 1;
    int rc = out->size ? gather_run(&o, out, in, fn) : 0;
    output_finish(&o, out);
    return rc;
}

/* ---- SegmentedMM ---- */

static int segmented_run(output *o, mc_array *out, mc_array *const *in, const char *fn)
{
    int M = in[0]->shape[0], K = in[0]->shape[1], N = in[1]->shape[1];
    size_t isz = mc_dtype_size(o->ct), mat = (size_t)M * (size_t)N * isz;
    size_t count = out->size / ((size_t)M * (size_t)N);
    operand oa, ob;
    memset(&ob, 0, sizeof ob);
    int rc = operand_prepare(&oa, in[0], o->ct, fn) || operand_prepare(&ob, in[1], o->ct, fn);
    for (size_t j = 0; j < count && !rc; j++) {
        /* bounds past K read as K: MLX reads outside the operands there */
        size_t s0 = read_index(in[2], 2 * j, (size_t)K + 1), s1 = read_index(in[2], 2 * j + 1, (size_t)K + 1);
        char *c = o->dst + j * mat;
        if (s1 <= s0) {
            memset(c, 0, mat);
            continue;
        }
        rc = product(o->ct, M, N, (int)(s1 - s0), oa.data + (int64_t)s0 * oa.cs * (int64_t)isz, oa.rs, oa.cs,
                     ob.data + (int64_t)s0 * ob.rs * (int64_t)isz, ob.rs, ob.cs, c, fn);
    }
    scratch_drop(&oa.copy);
    scratch_drop(&ob.copy);
    return rc;
}

int mc_segmented_mm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    static const char fn[] = "segmented_mm";
    output o;
    if (output_begin(&o, out, fn))
        return 1;
    int rc = out->size ? segmented_run(&o, out, in, fn) : 0;
    output_finish(&o, out);
    return rc;
}

/* ---- BlockMaskedMM ---- */

/* A block mask (bool or floating) read for one batch matrix. */
typedef struct mask {
    const mc_array *m;
    int64_t base; /* element offset of the batch's (tiles x tiles) matrix */
} mask;

static void mask_at_batch(mask *k, const mc_array *m, size_t batch)
{
    k->m = m;
    k->base = 0;
    if (!m)
        return;
    for (int d = m->ndim - 3; d >= 0; d--) {
        size_t n = (size_t)m->shape[d];
        k->base += (int64_t)(batch % n) * m->strides[d];
        batch /= n;
    }
}

/* The value of tile (y, x): 1 or 0 for a bool mask. */
static double mask_value(const mask *k, int y, int x)
{
    const mc_array *m = k->m;
    int64_t at = k->base + (int64_t)y * m->strides[m->ndim - 2] + (int64_t)x * m->strides[m->ndim - 1];
    const char *p = (const char *)m->data + at * (int64_t)mc_dtype_size(m->dtype);
    if (m->dtype == MLX_BOOL)
        return *(const uint8_t *)p ? 1.0 : 0.0;
    double v;
    mc_kernels()->convert[m->dtype][MLX_FLOAT64](p, &v, 1);
    return v;
}

/* Applies a block mask to the rows x cols matrix at data (row-major,
 * leading dimension ld, in ct): blocks whose value is 0 are zeroed, other
 * values other than 1 multiply their block. */
static void mask_matrix(char *data, mlx_dtype ct, int rows, int cols, int64_t ld, const mask *k, int bs)
{
    size_t isz = mc_dtype_size(ct);
    for (int ty = 0; ty * bs < rows; ty++) {
        for (int tx = 0; tx * bs < cols; tx++) {
            double v = mask_value(k, ty, tx);
            if (v == 1.0)
                continue;
            int y1 = (ty + 1) * bs < rows ? (ty + 1) * bs : rows;
            int x0 = tx * bs, x1 = (tx + 1) * bs < cols ? (tx + 1) * bs : cols;
            for (int y = ty * bs; y < y1; y++) {
                char *row = data + ((int64_t)y * ld + x0) * (int64_t)isz;
                if (v == 0.0) {
                    memset(row, 0, (size_t)(x1 - x0) * isz);
                } else if (ct == MLX_FLOAT64) {
                    for (int x = 0; x < x1 - x0; x++)
                        ((double *)row)[x] *= v;
                } else {
                    for (int x = 0; x < x1 - x0; x++)
                        ((float *)row)[x] *= (float)v;
                }
            }
        }
    }
}

/* Whether tile row ty of the mask is zero everywhere across tiles. */
static bool mask_row_zero(const mask *k, int ty, int tiles)
{
    for (int tx = 0; tx < tiles; tx++)
        if (mask_value(k, ty, tx) != 0.0)
            return false;
    return true;
}

typedef struct masked_side {
    operand op;
    scratch work; /* one masked matrix, row-major */
} masked_side;

/* The operand matrix of batch i, masked into the side's work matrix when
 * a mask is given; *data, *rs, *cs describe what the product reads. */
static const char *side_matrix(masked_side *s, size_t i, const mc_array *m, int bs, int64_t *rs, int64_t *cs)
{
    const operand *o = &s->op;
    const char *src = operand_matrix(o, i);
    *rs = o->rs;
    *cs = o->cs;
    if (!m)
        return src;
    pack_rows(s->work.p, src, o->rows, o->cols, o->rs, o->cs, o->isz);
    mask k;
    mask_at_batch(&k, m, i);
    mlx_dtype ct = o->isz == 8 ? MLX_FLOAT64 : MLX_FLOAT32;
    mask_matrix(s->work.p, ct, o->rows, o->cols, o->cols, &k, bs);
    *rs = o->cols;
    *cs = 1;
    return s->work.p;
}

static int masked_run(output *o, mc_array *out, mc_array *const *in, int n, int bs, const char *fn)
{
    const mc_array *mout = n == 3 || n == 5 ? in[2] : NULL;
    const mc_array *mlhs = n >= 4 ? in[n - 2] : NULL, *mrhs = n >= 4 ? in[n - 1] : NULL;
    int M = in[0]->shape[in[0]->ndim - 2], K = in[0]->shape[in[0]->ndim - 1];
    int N = in[1]->shape[in[1]->ndim - 1];
    size_t isz = mc_dtype_size(o->ct), mat = (size_t)M * (size_t)N * isz;
    size_t count = out->size / ((size_t)M * (size_t)N);
    if (K == 0) {
        memset(o->dst, 0, out->size * isz);
        return 0;
    }
    int rc = 1;
    masked_side sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    if (operand_prepare(&sa.op, in[0], o->ct, fn) || operand_prepare(&sb.op, in[1], o->ct, fn))
        goto done;
    if (mlhs && (!scratch_take(&sa.work, (size_t)M * (size_t)K * isz, fn) ||
                 !scratch_take(&sb.work, (size_t)K * (size_t)N * isz, fn)))
        goto done;
    int tm = (M + bs - 1) / bs, tn = (N + bs - 1) / bs, tk = (K + bs - 1) / bs;
    for (size_t i = 0; i < count; i++) {
        int64_t ars, acs, brs, bcs;
        const char *a = side_matrix(&sa, i, mlhs, bs, &ars, &acs);
        const char *b = side_matrix(&sb, i, mrhs, bs, &brs, &bcs);
        char *c = o->dst + i * mat;
        mask ko, kl;
        mask_at_batch(&ko, mout, i);
        mask_at_batch(&kl, mlhs, i);
        /* runs of block rows that are not masked out entirely */
        for (int ty = 0; ty < tm;) {
            bool skip = (mout && mask_row_zero(&ko, ty, tn)) || (mlhs && mask_row_zero(&kl, ty, tk));
            int te = ty + 1;
            while (te < tm &&
                   skip == ((mout && mask_row_zero(&ko, te, tn)) || (mlhs && mask_row_zero(&kl, te, tk))))
                te++;
            int r0 = ty * bs, r1 = te * bs < M ? te * bs : M;
            char *crow = c + (size_t)r0 * (size_t)N * isz;
            if (skip)
                memset(crow, 0, (size_t)(r1 - r0) * (size_t)N * isz);
            else if (product(o->ct, r1 - r0, N, K, a + (int64_t)r0 * ars * (int64_t)isz, ars, acs, b, brs, bcs,
                             crow, fn))
                goto done;
            ty = te;
        }
        if (mout)
            mask_matrix(c, o->ct, M, N, N, &ko, bs);
    }
    rc = 0;
done:
    scratch_drop(&sa.op.copy);
    scratch_drop(&sb.op.copy);
    scratch_drop(&sa.work);
    scratch_drop(&sb.work);
    return rc;
}

int mc_block_masked_mm_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    static const char fn[] = "block_masked_mm";
    const mc_block_mm_params *p = params;
    output o;
    if (output_begin(&o, out, fn))
        return 1;
    int rc = out->size ? masked_run(&o, out, in, n, p->block_size, fn) : 0;
    output_finish(&o, out);
    return rc;
}
