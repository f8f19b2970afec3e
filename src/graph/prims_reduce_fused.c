/* Owns the fused row reductions: the Var/Std kinds of Reduce, LogSumExp
 * and Softmax. Each needs its reduced elements contiguous and innermost,
 * so the input is viewed with the reduced dims trailing (copied when they
 * are not) and the row kernels of simd/reduce.h run over the rows, split
 * over the pool. Softmax writes a row-major result: straight into the
 * output when the input is row-contiguous with the softmax axes last,
 * else into a buffer in the view's order that is then copied into place. */
#include <string.h>

#include "graph/build.h"
#include "graph/prims_reduce.h"
#include "graph/reduce_view.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/reduce.h"

enum { FUSED_VAR, FUSED_LSE, FUSED_SOFTMAX };

typedef struct fused_job {
    int what;
    const mc_reduce_table *T;
    int dt;
    const char *x;
    char *y;
    size_t n, isz, osz; /* osz: bytes per output of a row (var, lse) */
    int ddof, take_sqrt;
} fused_job;

static void fused_range(void *ctx, size_t b, size_t e)
{
    fused_job *j = ctx;
    const char *x = j->x + b * j->n * j->isz;
    switch (j->what) {
    case FUSED_VAR:
        j->T->var_row[j->dt](x, j->n, e - b, j->n, j->ddof, j->take_sqrt, j->y + b * j->osz);
        break;
    case FUSED_LSE:
        j->T->lse_row[j->dt](x, j->n, e - b, j->n, j->y + b * j->osz);
        break;
    default:
        j->T->softmax_row[j->dt](x, j->y + b * j->n * j->isz, j->n, e - b, j->n);
        break;
    }
}

static void run_rows(fused_job *j, size_t rows)
{
    size_t grain = j->n ? MC_RED_GRAIN / j->n : rows;
    mc_parallel_for(rows, grain ? grain : 1, fused_range, j);
}

/* The per-row reductions (var, lse): out gets one value per row of x's
 * reduced dims, x viewed with those dims last. */
static int rows_reduce(fused_job *j, mc_array *out, const mc_array *x, const bool *red, const char *fn)
{
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (out->size == 0)
        return 0;
    j->T = mc_reduce_kernels();
    j->dt = x->dtype;
    j->isz = j->osz = mc_dtype_size(x->dtype);
    j->y = out->data;
    if ((j->what == FUSED_VAR && !j->T->var_row[j->dt]) || (j->what == FUSED_LSE && !j->T->lse_row[j->dt]))
        return mc_error("[%s] Not supported for %s.", fn, mc_dtype_name(x->dtype));
    if (x->size == 0) {
        /* only var reaches here (logsumexp rejects empty arrays): NaN rows */
        static const char nothing[16];
        j->x = nothing;
        j->n = 0;
        fused_range(j, 0, out->size);
        return 0;
    }
    mc_red_view v;
    mc_red_plan pl;
    if (mc_red_view_make(&v, x, red, true, fn))
        return 1;
    mc_red_view_plan(&v, &pl); /* trailing: rows of n, cols == 1 */
    j->x = v.data;
    j->n = pl.n;
    run_rows(j, pl.outer);
    mc_red_view_free(&v);
    return 0;
}

int mc_reduce_var_eval(mc_array *out, const mc_array *x, const bool *red, int ddof, bool take_sqrt,
                       const char *fn)
{
    fused_job j;
    memset(&j, 0, sizeof j);
    j.what = FUSED_VAR;
    j.ddof = ddof;
    j.take_sqrt = take_sqrt;
    return rows_reduce(&j, out, x, red, fn);
}

/* Checks the axes of a LogSumExp / Softmax node against x. */
static int check_axes(const mc_softmax_params *p, const mc_array *x, const char *fn)
{
    if (!mc_dtype_is_float(x->dtype))
        return mc_error("[%s] Only defined for floating point types, got %s.", fn, mc_dtype_name(x->dtype));
    for (int i = 0; i < p->n; i++)
        if (p->axes[i] < 0 || p->axes[i] >= x->ndim)
            return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, p->axes[i], x->ndim);
    return 0;
}

/* ---- LogSumExp ---- */

static int logsumexp_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_softmax_params *p = params;
    const mc_array *x = in[0];
    if (check_axes(p, x, fn))
        return 1;
    if (x->size == 0)
        return mc_error("[%s] Received empty array.", fn);
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    for (int i = 0; i < p->n; i++)
        out->shape[p->axes[i]] = 1;
    return 0;
}

static int logsumexp_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_softmax_params *p = params;
    bool red[MC_MAX_NDIM] = {false};
    for (int i = 0; i < p->n; i++)
        red[p->axes[i]] = true;
    fused_job j;
    memset(&j, 0, sizeof j);
    j.what = FUSED_LSE;
    return rows_reduce(&j, out, in[0], red, "logsumexp");
}

/* ---- Softmax ---- */

static int softmax_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_array *x = in[0];
    if (check_axes(params, x, fn))
        return 1;
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    return 0;
}

/* True if x is row-contiguous with every reduced dim of size > 1 after
 * every kept one: its rows are then the softmax rows, in output order. */
static bool rows_in_place(const mc_array *x, const bool *red)
{
    if (!(x->flags & MC_FLAG_ROW_CONTIG))
        return false;
    bool seen_red = false;
    for (int i = 0; i < x->ndim; i++) {
        if (x->shape[i] == 1)
            continue;
        if (red[i])
            seen_red = true;
        else if (seen_red)
            return false;
    }
    return true;
}

static int softmax_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    static const char fn[] = "softmax";
    const mc_softmax_params *p = params;
    mc_array *x = in[0];
    bool red[MC_MAX_NDIM] = {false};
    size_t count = 1;
    for (int i = 0; i < p->n; i++) {
        red[p->axes[i]] = true;
        count *= (size_t)x->shape[p->axes[i]];
    }
    fused_job j;
    memset(&j, 0, sizeof j);
    j.what = FUSED_SOFTMAX;
    j.T = mc_reduce_kernels();
    j.dt = x->dtype;
    j.isz = mc_dtype_size(x->dtype);
    if (!j.T->softmax_row[j.dt])
        return mc_error("[%s] Not supported for %s.", fn, mc_dtype_name(x->dtype));
    if (x->size == 0 || rows_in_place(x, red)) {
        const char *xd = x->data; /* before a donation moves the buffer */
        mc_array *cands[1] = {x};
        if (mc_out_alloc(out, cands, x->size ? 1 : 0, fn))
            return 1;
        if (x->size == 0)
            return 0;
        j.x = xd;
        j.y = out->data;
        j.n = count;
        run_rows(&j, x->size / count);
        return 0;
    }
    mc_red_view v;
    mc_red_plan pl;
    if (mc_red_view_make(&v, x, red, true, fn))
        return 1;
    mc_red_view_plan(&v, &pl);
    mc_buffer *ybuf = v.tmp ? mc_buffer_retain(v.tmp) : mc_buffer_alloc(x->size * j.isz);
    if (!ybuf || mc_array_alloc_data(out, fn)) {
        if (!ybuf)
            mc_error_oom(fn, x->size * j.isz);
        if (ybuf)
            mc_buffer_release(ybuf);
        mc_red_view_free(&v);
        return 1;
    }
    j.x = v.data;
    j.y = ybuf->data;
    j.n = pl.n;
    run_rows(&j, pl.outer);
    /* ybuf is row-major over the view's dims (v.perm); scatter it */
    int shape[MC_MAX_NDIM];
    int64_t ys[MC_MAX_NDIM], os[MC_MAX_NDIM];
    for (int a = 0; a < v.nperm; a++) {
        shape[a] = x->shape[v.perm[a]];
        os[a] = out->strides[v.perm[a]];
    }
    mc_row_strides(v.nperm, shape, ys);
    mc_unary_kernel copy = mc_kernels()->convert[x->dtype][x->dtype];
    if (v.nperm == 0)
        memcpy(out->data, ybuf->data, j.isz);
    else
        mc_unary_strided(copy, j.isz, j.isz, ybuf->data, ys, out->data, os, v.nperm, shape);
    mc_buffer_release(ybuf);
    mc_red_view_free(&v);
    return 0;
}

/* ---- derivatives (MLX's Softmax and LogSumExp rules, over the node's
 * axes where MLX's primitives have only the last) ---- */

/* s * v - s * sum(s * v): the Jacobian of softmax s applied to v. */
static mc_array *softmax_apply(mc_gb *s, mc_array *sm, mc_array *v, const mc_softmax_params *p)
{
    mc_array *sv = mc_gb_op(s, MC_B_MULTIPLY, sm, mc_gb_astype(s, v, sm->dtype));
    return mc_gb_op(s, MC_B_SUBTRACT, sv, mc_gb_op(s, MC_B_MULTIPLY, sm, mc_gb_sum(s, sv, p->axes, p->n)));
}

static int softmax_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                       const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    vjps[0] = mc_gb_finish_ref(&s, softmax_apply(&s, node, cot, node->params));
    return vjps[0] ? 0 : 1;
}

static mc_array *softmax_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, softmax_apply(&s, node, tans[0], node->params));
}

/* The cotangent (dims kept) times softmax(x) over the same axes. */
static int logsumexp_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                         const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_softmax_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *sm = mc_gb_softmax(&s, node->inputs[0], p->axes, p->n, true);
    vjps[0] = mc_gb_finish_ref(&s, mc_gb_op(&s, MC_B_MULTIPLY, sm, cot));
    return vjps[0] ? 0 : 1;
}

/* sum(t * softmax(x)) over the axes. (MLX's jvp returns t * softmax(x)
 * unsummed, of the input's shape rather than the output's; here it has the
 * output's shape.) */
static mc_array *logsumexp_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                               const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_softmax_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *sm = mc_gb_softmax(&s, node->inputs[0], p->axes, p->n, true);
    mc_array *r = mc_gb_sum(&s, mc_gb_op(&s, MC_B_MULTIPLY, sm, mc_gb_astype(&s, tans[0], node->dtype)),
                            p->axes, p->n);
    return mc_gb_finish_ref(&s, r);
}

/* vmap (Softmax and LogSumExp): the batch first, the axes shifted past it. */
static int softmax_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn)
{
    mc_softmax_params q;
    mc_vmap_params(&q, sizeof q, node);
    for (int i = 0; i < q.n; i++)
        q.axes[i]++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_softmax = {
    .name = "Softmax",
    .arity = 1,
    .infer = softmax_infer,
    .eval = softmax_eval,
    .vjp = softmax_vjp,
    .jvp = softmax_jvp,
    .vmap = softmax_vmap,
};

const mc_prim_info mc_prim_logsumexp = {
    .name = "LogSumExp",
    .arity = 1,
    .infer = logsumexp_infer,
    .eval = logsumexp_eval,
    .vjp = logsumexp_vjp,
    .jvp = logsumexp_jvp,
    .vmap = softmax_vmap,
};
