/* Owns the Scan primitive (cumsum, cumprod, cummax, cummin, logcumsumexp
 * along one axis, forward or reverse, inclusive or exclusive). The input
 * is made row-contiguous (copied if it is not); a scan along the last
 * axis runs the row kernel over rows, any other axis the column kernel
 * over blocks of (axis, inner) with chunks of columns, split over the
 * pool. The output may take the input's buffer: the kernels read each
 * element before writing its position.
 *
 * Derivatives: MLX's Scan::vjp for sum, prod (its first-zero handling)
 * and logaddexp (its split of the cotangent into positive and negative
 * parts), and MLX's jvp for sum. MLX raises for the vjp of max/min and
 * the jvp of prod, max, min and logaddexp; here those are the exact
 * derivatives instead (an output of cummax/cummin follows the input it
 * took its value from: on ties, the latest one in scan order). */
#include <float.h>
#include <string.h>

#include "graph/build.h"
#include "graph/prims_scan.h"
#include "graph/reduce_view.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/reduce.h"

static const char *const scan_names[MC_S_COUNT] = {"CumSum", "CumProd", "CumMax", "CumMin", "CumLogAddExp"};
static const char *const scan_fns[MC_S_COUNT] = {"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"};

static const char *scan_name(const void *params)
{
    int op = ((const mc_scan_params *)params)->op;
    return op >= 0 && op < MC_S_COUNT ? scan_names[op] : "Scan";
}

static int scan_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_scan_params *p = params;
    const mc_array *x = in[0];
    if (p->op < 0 || p->op >= MC_S_COUNT)
        return mc_error("[%s] Unknown scan %d.", fn, p->op);
    if (p->axis < 0 || p->axis >= x->ndim)
        return mc_error("[%s] Axis %d is out of bounds for array with %d dimensions.", fn, p->axis, x->ndim);
    if (!mc_reduce_kernels()->scan_row[p->op][x->dtype])
        return mc_error("[%s] Not supported for %s.", fn, mc_dtype_name(x->dtype));
    out->dtype = mc_scan_out_dtype(p->op, x->dtype);
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    return 0;
}

typedef struct scan_job {
    mc_scan_row_fn row;
    mc_scan_col_fn col;
    const char *x;
    char *y;
    size_t n, inner, isz, osz, cw, nch;
    int reverse, inclusive;
} scan_job;

static void scan_range(void *ctx, size_t b, size_t e)
{
    scan_job *j = ctx;
    if (j->inner == 1) {
        j->row(j->x + b * j->n * j->isz, j->y + b * j->n * j->osz, j->n, e - b, j->reverse, j->inclusive);
        return;
    }
    for (size_t t = b; t < e; t++) {
        size_t o = t / j->nch, j0 = (t % j->nch) * j->cw;
        size_t w = j->inner - j0 < j->cw ? j->inner - j0 : j->cw;
        size_t off = o * j->n * j->inner + j0;
        j->col(j->x + off * j->isz, j->y + off * j->osz, j->n, w, j->inner, j->reverse, j->inclusive);
    }
}

static int scan_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_scan_params *p = params;
    mc_array *x = in[0];
    const char *fn = scan_fns[p->op];
    const mc_reduce_table *T = mc_reduce_kernels();
    mc_buffer *copy = NULL;
    const char *xd = x->data;
    bool rows = (x->flags & MC_FLAG_ROW_CONTIG) != 0;
    if (!rows && mc_red_copy_rowmajor(x, &copy, fn))
        return 1;
    if (copy)
        xd = copy->data;
    mc_array *cands[1] = {x};
    if (mc_out_alloc(out, cands, rows ? 1 : 0, fn)) {
        if (copy)
            mc_buffer_release(copy);
        return 1;
    }
    if (out->size > 0) {
        scan_job j = {T->scan_row[p->op][x->dtype], T->scan_col[p->op][x->dtype], xd, out->data,
                      (size_t)x->shape[p->axis], 1, mc_dtype_size(x->dtype), mc_dtype_size(out->dtype),
                      0, 0, p->reverse, p->inclusive};
        size_t outer = 1;
        for (int i = 0; i < p->axis; i++)
            outer *= (size_t)x->shape[i];
        for (int i = p->axis + 1; i < x->ndim; i++)
            j.inner *= (size_t)x->shape[i];
        if (j.inner == 1) {
            mc_parallel_for(outer, j.n ? (MC_RED_GRAIN + j.n - 1) / j.n : outer, scan_range, &j);
        } else {
            j.cw = ((MC_RED_GRAIN / j.n + 255) / 256) * 256;
            if (j.cw == 0)
                j.cw = 256;
            j.nch = (j.inner + j.cw - 1) / j.cw;
            size_t tasks = outer * j.nch;
            mc_parallel_for(tasks, out->size < 2 * MC_RED_GRAIN ? tasks : 1, scan_range, &j);
        }
    }
    if (copy)
        mc_buffer_release(copy);
    return 0;
}

/* ---- derivatives ---- */

/* The lowest finite value of a floating dtype (MLX's finfo(t).min). */
static double lowest(mlx_dtype t)
{
    switch (t) {
    case MLX_FLOAT16:
        return -65504.0;
    case MLX_BFLOAT16:
        return -0x1.fep127;
    case MLX_FLOAT64:
        return -DBL_MAX;
    default:
        return -FLT_MAX;
    }
}

/* A Scan of a along p's axis with op, in the direction given. */
static mc_array *scan_as(mc_gb *s, mc_array *a, int op, const mc_scan_params *p, bool reverse, bool inclusive)
{
    return mc_gb_scan(s, a, op, p->axis, reverse, inclusive);
}

/* cumsum(prod * cot) in the other direction: the cotangent of cumprod's
 * input times that input. */
static mc_array *partial_grad(mc_gb *s, mc_array *prod, mc_array *cot, const mc_scan_params *p)
{
    return scan_as(s, mc_gb_op(s, MC_B_MULTIPLY, prod, cot), MC_S_SUM, p, !p->reverse, p->inclusive);
}

/* cumprod: the output's cotangent (MLX's vjp). */
static mc_array *cumprod_vjp(mc_gb *s, mc_array *node, mc_array *cot, const mc_scan_params *p)
{
    mc_array *x = mc_gb_astype(s, node->inputs[0], node->dtype);
    mlx_dtype d = node->dtype;
    /* the inclusive and exclusive products: an output is zero at and after
     * the first zero of the input, which is where the exclusive one is not */
    mc_array *other = scan_as(s, x, MC_S_PROD, p, p->reverse, !p->inclusive);
    mc_array *incl = p->inclusive ? node : other, *excl = p->inclusive ? other : node;
    mc_array *zero = mc_gb_scalar(s, 0, d);
    mc_array *eq_zero = mc_gb_op(s, MC_B_EQUAL, incl, zero);
    mc_array *first_zero =
        mc_gb_binary(s, MC_B_LOGICAL_AND, eq_zero, mc_gb_op(s, MC_B_NOT_EQUAL, excl, zero), MLX_BOOL);
    /* before the first zero: cumsum(out * cot) / x in the other direction;
     * at it: the same with that zero taken as one; after it: zero */
    mc_array *with_one = scan_as(s, mc_gb_where(s, first_zero, mc_gb_scalar(s, 1, d), x), MC_S_PROD, p,
                                 p->reverse, p->inclusive);
    mc_array *g_one = partial_grad(s, with_one, cot, p);
    mc_array *g = mc_gb_op(s, MC_B_DIVIDE, partial_grad(s, node, cot, p), x);
    return mc_gb_where(s, first_zero, g_one, mc_gb_where(s, eq_zero, zero, g));
}

/* cumprod: the output's tangent. Before the first zero (where the output
 * is not zero) out * cumsum(t / x); after it only the first zero's term
 * is left: its tangent times the product of the others. */
static mc_array *cumprod_jvp(mc_gb *s, mc_array *node, mc_array *t, const mc_scan_params *p)
{
    mc_array *x = mc_gb_astype(s, node->inputs[0], node->dtype);
    mlx_dtype d = node->dtype;
    t = mc_gb_astype(s, t, d);
    mc_array *zero = mc_gb_scalar(s, 0, d);
    mc_array *incl = p->inclusive ? node : scan_as(s, x, MC_S_PROD, p, p->reverse, true);
    mc_array *excl = p->inclusive ? scan_as(s, x, MC_S_PROD, p, p->reverse, false) : node;
    mc_array *first_zero = mc_gb_binary(s, MC_B_LOGICAL_AND, mc_gb_op(s, MC_B_EQUAL, incl, zero),
                                        mc_gb_op(s, MC_B_NOT_EQUAL, excl, zero), MLX_BOOL);
    mc_array *with_one = scan_as(s, mc_gb_where(s, first_zero, mc_gb_scalar(s, 1, d), x), MC_S_PROD, p,
                                 p->reverse, p->inclusive);
    mc_array *tz = scan_as(s, mc_gb_where(s, first_zero, t, zero), MC_S_SUM, p, p->reverse, true);
    mc_array *g = mc_gb_op(s, MC_B_MULTIPLY, node,
                           scan_as(s, mc_gb_op(s, MC_B_DIVIDE, t, x), MC_S_SUM, p, p->reverse, p->inclusive));
    return mc_gb_where(s, mc_gb_op(s, MC_B_EQUAL, node, zero), mc_gb_op(s, MC_B_MULTIPLY, tz, with_one), g);
}

/* log|v| where v is positive (negative if neg), the lowest finite value
 * elsewhere: one half of a signed value, ready to add in log space. */
static mc_array *log_part(mc_gb *s, mc_array *v, bool neg)
{
    mlx_dtype d = v->dtype;
    mc_array *sel = mc_gb_op(s, neg ? MC_B_LESS : MC_B_GREATER, v, mc_gb_scalar(s, 0, d));
    mc_array *log_abs = mc_gb_unary(s, MC_U_LOG, mc_gb_unary(s, MC_U_ABS, v));
    return mc_gb_where(s, sel, log_abs, mc_gb_scalar(s, lowest(d), d));
}

/* logcumsumexp: MLX's vjp, the cotangent split into its positive and
 * negative parts so that each can be summed in log space. */
static mc_array *logcumsumexp_vjp(mc_gb *s, mc_array *node, mc_array *cot, const mc_scan_params *p)
{
    mc_array *x = node->inputs[0];
    mc_array *part[2];
    for (int k = 0; k < 2; k++) {
        mc_array *l = scan_as(s, mc_gb_op(s, MC_B_SUBTRACT, log_part(s, cot, k == 1), node), MC_S_LOGADDEXP, p,
                              !p->reverse, p->inclusive);
        part[k] = mc_gb_unary(s, MC_U_EXP, mc_gb_op(s, MC_B_ADD, l, x));
    }
    return mc_gb_op(s, MC_B_SUBTRACT, part[0], part[1]);
}

/* logcumsumexp: the tangent, sum over the scanned x_k of exp(x_k - out) t_k,
 * split as the vjp is; zero where the output is -inf (an exclusive scan's
 * first element: it depends on nothing). */
static mc_array *logcumsumexp_jvp(mc_gb *s, mc_array *node, mc_array *t, const mc_scan_params *p)
{
    mc_array *x = node->inputs[0];
    t = mc_gb_astype(s, t, node->dtype);
    mc_array *part[2];
    for (int k = 0; k < 2; k++) {
        mc_array *l = scan_as(s, mc_gb_op(s, MC_B_ADD, log_part(s, t, k == 1), x), MC_S_LOGADDEXP, p, p->reverse,
                              p->inclusive);
        part[k] = mc_gb_unary(s, MC_U_EXP, mc_gb_op(s, MC_B_SUBTRACT, l, node));
    }
    return mc_gb_where(s, mc_gb_unary(s, MC_U_ISNEGINF, node), mc_gb_scalar(s, 0, node->dtype),
                       mc_gb_op(s, MC_B_SUBTRACT, part[0], part[1]));
}

/* cummax/cummin: the positions along the axis that an inclusive scan in
 * p's direction takes its values from (int32, x's shape), and `starts`:
 * where x equals that scan (the positions some output takes from). */
static mc_array *extremum_sources(mc_gb *s, mc_array *node, const mc_scan_params *p, mc_array **starts,
                                  mc_array **iota)
{
    mc_array *x = node->inputs[0];
    int n = x->shape[p->axis];
    mc_array *incl = p->inclusive ? node : scan_as(s, x, p->op, p, p->reverse, true);
    *iota = mc_gb_iota(s, n, p->axis, x->ndim);
    *starts = mc_gb_op(s, MC_B_EQUAL, x, incl);
    /* the latest start so far in scan order: the scan's first position is
     * always a start, so the fill never survives */
    mc_array *marked = mc_gb_where(s, *starts, *iota, mc_gb_scalar(s, p->reverse ? n - 1 : 0, MLX_INT32));
    return scan_as(s, marked, p->reverse ? MC_S_MIN : MC_S_MAX, p, p->reverse, true);
}

/* For an exclusive scan: output i holds the inclusive scan's value at the
 * previous position in scan order (step -1 forward, +1 reverse); `step`
 * -1 reads the previous, +1 the next. Returns where(valid, v[i + step], 0). */
static mc_array *shifted(mc_gb *s, mc_array *v, mc_array *iota, const mc_scan_params *p, int step)
{
    int n = v->shape[p->axis];
    int dir = p->reverse ? -step : step;
    mc_array *idx = mc_gb_op(s, MC_B_ADD, iota, mc_gb_scalar(s, dir, MLX_INT32));
    mc_array *valid = mc_gb_binary(s, MC_B_LOGICAL_AND,
                                   mc_gb_op(s, MC_B_GREATER_EQUAL, idx, mc_gb_scalar(s, 0, MLX_INT32)),
                                   mc_gb_op(s, MC_B_LESS, idx, mc_gb_scalar(s, n, MLX_INT32)), MLX_BOOL);
    /* out-of-range indices read some element that the mask drops */
    return mc_gb_where(s, valid, mc_gb_gather_axis(s, v, mc_gb_broadcast_like(s, idx, v), p->axis, 1),
                       mc_gb_scalar(s, 0, v->dtype));
}

static mc_array *extremum_jvp(mc_gb *s, mc_array *node, mc_array *t, const mc_scan_params *p)
{
    mc_array *starts, *iota;
    mc_array *src = extremum_sources(s, node, p, &starts, &iota);
    mc_array *r = mc_gb_gather_axis(s, mc_gb_astype(s, t, node->dtype), src, p->axis, 1);
    return p->inclusive ? r : shifted(s, r, iota, p, -1);
}

/* Each start receives the cotangents of the outputs that take from it: a
 * run from it up to the next start in scan order, summed as the
 * difference of two suffix sums. */
static mc_array *extremum_vjp(mc_gb *s, mc_array *node, mc_array *cot, const mc_scan_params *p)
{
    mc_array *starts, *iota;
    (void)extremum_sources(s, node, p, &starts, &iota);
    int n = node->shape[p->axis];
    mc_array *w = p->inclusive ? cot : shifted(s, cot, iota, p, +1);
    mc_array *suffix = scan_as(s, w, MC_S_SUM, p, !p->reverse, true);
    /* the next start after each position in scan order (none: past the end) */
    mc_array *fill = mc_gb_scalar(s, p->reverse ? -1 : n, MLX_INT32);
    mc_array *next = scan_as(s, mc_gb_where(s, starts, iota, fill), p->reverse ? MC_S_MAX : MC_S_MIN, p,
                             !p->reverse, false);
    mc_array *has_next = p->reverse ? mc_gb_op(s, MC_B_GREATER_EQUAL, next, mc_gb_scalar(s, 0, MLX_INT32))
                                    : mc_gb_op(s, MC_B_LESS, next, fill);
    mc_array *zero = mc_gb_scalar(s, 0, w ? w->dtype : node->dtype);
    mc_array *after = mc_gb_where(s, has_next, mc_gb_gather_axis(s, suffix, next, p->axis, 1), zero);
    return mc_gb_where(s, starts, mc_gb_op(s, MC_B_SUBTRACT, suffix, after), zero);
}

static int scan_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_scan_params *p = node->params;
    mc_array *x = node->inputs[0];
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g = NULL;
    switch (p->op) {
    case MC_S_SUM:
        g = scan_as(&s, cot, MC_S_SUM, p, !p->reverse, p->inclusive);
        break;
    case MC_S_PROD:
        g = cumprod_vjp(&s, node, cot, p);
        break;
    case MC_S_LOGADDEXP:
        g = logcumsumexp_vjp(&s, node, cot, p);
        break;
    default:
        g = extremum_vjp(&s, node, cot, p);
        break;
    }
    vjps[0] = mc_gb_finish_ref(&s, mc_gb_astype(&s, g, x->dtype));
    return vjps[0] ? 0 : 1;
}

static mc_array *scan_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_scan_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    switch (p->op) {
    case MC_S_SUM:
        r = scan_as(&s, tans[0], MC_S_SUM, p, p->reverse, p->inclusive);
        break;
    case MC_S_PROD:
        r = cumprod_jvp(&s, node, tans[0], p);
        break;
    case MC_S_LOGADDEXP:
        r = logcumsumexp_jvp(&s, node, tans[0], p);
        break;
    default:
        r = extremum_jvp(&s, node, tans[0], p);
        break;
    }
    return mc_gb_finish_ref(&s, mc_gb_astype(&s, r, node->dtype));
}

/* vmap: the batch first, the scanned axis shifted past it. */
static int scan_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    mc_scan_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.axis++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_scan = {
    .name = "Scan",
    .arity = 1,
    .infer = scan_infer,
    .eval = scan_eval,
    .vjp = scan_vjp,
    .jvp = scan_jvp,
    .name_of = scan_name,
    .vmap = scan_vmap,
};
