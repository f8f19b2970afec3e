/* Owns the Reduce primitive (sum, prod, max, min, all, any, mean; var and
 * std are in prims_reduce_fused.c) and ArgReduce. Evaluation views the
 * input through reduce_view.c, runs the row or column kernels of
 * simd/reduce.h into the accumulator dtype, splitting large work over the
 * pool (by rows or column chunks, or for a few huge reductions by pieces
 * whose partial results are reduced once more), then finishes into the
 * output dtype (float32 sums of half types, mean's scale). */
#include <string.h>

#include "graph/build.h"
#include "graph/prims_reduce.h"
#include "graph/reduce_view.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/reduce.h"

static const char *const kind_names[MC_RK_COUNT] = {"Sum", "Prod", "Max", "Min", "And",
                                                    "Or",  "Mean", "Var", "Std"};
static const char *const kind_fns[MC_RK_COUNT] = {"sum", "prod", "max", "min", "all",
                                                  "any", "mean", "var", "std"};

mlx_dtype mc_reduce_out_dtype(int kind, mlx_dtype d)
{
    switch (kind) {
    case MC_RK_SUM:
    case MC_RK_PROD:
        switch (d) {
        case MLX_BOOL:
        case MLX_INT8:
        case MLX_INT16:
        case MLX_INT32:
            return MLX_INT32;
        case MLX_UINT8:
        case MLX_UINT16:
        case MLX_UINT32:
            return MLX_UINT32;
        default:
            return d;
        }
    case MC_RK_ALL:
    case MC_RK_ANY:
        return MLX_BOOL;
    case MC_RK_MEAN:
        return mc_dtype_is_inexact(d) ? d : MLX_FLOAT32;
    default:
        return d;
    }
}

static const char *reduce_name(const void *params)
{
    int k = ((const mc_reduce_params *)params)->kind;
    return k >= 0 && k < MC_RK_COUNT ? kind_names[k] : "Reduce";
}


static int reduce_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_reduce_params *p = params;
    const mc_array *x = in[0];
    if (p->kind < 0 || p->kind >= MC_RK_COUNT)
        return mc_error("[%s] Unknown reduction %d.", fn, p->kind);
    out->dtype = mc_reduce_out_dtype(p->kind, x->dtype);
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    for (int i = 0; i < p->n; i++) {
        int a = p->axes[i];
        if (a < 0 || a >= x->ndim)
            return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, a, x->ndim);
        if ((p->kind == MC_RK_MAX || p->kind == MC_RK_MIN) && x->shape[a] == 0)
            return mc_error("[%s] Cannot %s reduce over axis %d with size 0.", fn, kind_fns[p->kind], a);
        out->shape[a] = 1;
    }
    return 0;
}

/* ---- running a plan ---- */

typedef struct row_job {
    mc_reduce_row_fn k;
    const char *x;
    size_t n, isz;
    char *acc;
    size_t asz;
    size_t pieces, piece; /* > 0: each row is cut into pieces (partials) */
} row_job;

static void row_range(void *ctx, size_t b, size_t e)
{
    row_job *j = ctx;
    if (!j->pieces) {
        j->k(j->x + b * j->n * j->isz, j->n, e - b, j->n, j->acc + b * j->asz);
        return;
    }
    for (size_t t = b; t < e; t++) {
        size_t r = t / j->pieces, start = (t % j->pieces) * j->piece;
        size_t len = start >= j->n ? 0 : j->n - start < j->piece ? j->n - start : j->piece;
        j->k(j->x + (r * j->n + (len ? start : 0)) * j->isz, len, 1, 0, j->acc + t * j->asz);
    }
}

typedef struct col_job {
    mc_reduce_col_fn k;
    const char *x;
    size_t outer, n, cols, isz;
    char *acc;
    size_t asz;
    size_t cw, nch;       /* column tasks: chunk width, chunks per block */
    size_t pieces, piece; /* > 0: tasks are pieces of the n rows instead */
} col_job;

static void col_range(void *ctx, size_t b, size_t e)
{
    col_job *j = ctx;
    for (size_t t = b; t < e; t++) {
        if (!j->pieces) {
            size_t o = t / j->nch, j0 = (t % j->nch) * j->cw;
            size_t w = j->cols - j0 < j->cw ? j->cols - j0 : j->cw;
            j->k(j->x + (o * j->n * j->cols + j0) * j->isz, j->n, w, j->cols,
                 j->acc + (o * j->cols + j0) * j->asz);
            continue;
        }
        size_t start = t * j->piece;
        size_t len = start >= j->n ? 0 : j->n - start < j->piece ? j->n - start : j->piece;
        for (size_t o = 0; o < j->outer; o++)
            j->k(j->x + (o * j->n + (len ? start : 0)) * j->cols * j->isz, len, j->cols, j->cols,
                 j->acc + (t * j->outer + o) * j->cols * j->asz);
    }
}

static size_t min_z(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }

/* acc (outer * cols values of the acc dtype) = the plan's reduction of x. */
static int run_plan(const mc_reduce_table *T, mc_reduce_op op, int dt, const char *x, const mc_red_plan *pl,
                    char *acc, const char *fn)
{
    int adt = mc_reduce_acc_dtype(op, dt);
    size_t isz = mc_dtype_size(dt), asz = mc_dtype_size(adt);
    size_t total = pl->outer * pl->n * pl->cols;
    size_t threads = (size_t)mc_pool_threads();
    mc_buffer *part = NULL;
    if (pl->cols == 1) {
        row_job j = {T->row[op][dt], x, pl->n, isz, acc, asz, 0, 0};
        size_t rows = pl->outer;
        size_t pieces = min_z((2 * threads + rows - 1) / rows, pl->n / (MC_RED_GRAIN / 2));
        if (total < 2 * MC_RED_GRAIN || rows >= threads || pieces < 2) {
            mc_parallel_for(rows, max_z(1, MC_RED_GRAIN / max_z(pl->n, 1)), row_range, &j);
            return 0;
        }
        part = mc_buffer_alloc(rows * pieces * asz);
        if (!part)
            return mc_error_oom(fn, rows * pieces * asz);
        j.pieces = pieces;
        j.piece = (pl->n + pieces - 1) / pieces;
        j.acc = part->data;
        mc_parallel_for(rows * pieces, 1, row_range, &j);
        T->row[op][adt](part->data, pieces, rows, pieces, acc);
        mc_buffer_release(part);
        return 0;
    }
    col_job j = {T->col[op][dt], x, pl->outer, pl->n, pl->cols, isz, acc, asz, 0, 0, 0, 0};
    /* column chunks of at least a grain of work each */
    j.cw = max_z(1, (MC_RED_GRAIN / max_z(pl->n, 1) + 255) / 256) * 256;
    j.nch = (pl->cols + j.cw - 1) / j.cw;
    size_t tasks = pl->outer * j.nch;
    size_t pieces = min_z(2 * threads, min_z(pl->n, total / MC_RED_GRAIN));
    if (total < 2 * MC_RED_GRAIN || tasks >= threads || pieces < 2) {
        mc_parallel_for(tasks, total < 2 * MC_RED_GRAIN ? tasks : 1, col_range, &j);
        return 0;
    }
    size_t m = pl->outer * pl->cols;
    part = mc_buffer_alloc(pieces * m * asz);
    if (!part)
        return mc_error_oom(fn, pieces * m * asz);
    j.piece = (pl->n + pieces - 1) / pieces;
    j.pieces = (pl->n + j.piece - 1) / j.piece;
    j.acc = part->data;
    mc_parallel_for(j.pieces, 1, col_range, &j);
    T->col[op][adt](part->data, j.pieces, m, m, acc);
    mc_buffer_release(part);
    return 0;
}

/* Views x for a reduction over red and runs it into acc. */
static int reduce_into(const mc_reduce_table *T, mc_reduce_op op, const mc_array *x, const bool *red, char *acc,
                       const char *fn)
{
    mc_red_view v;
    mc_red_plan pl;
    if (mc_red_view_make(&v, x, red, false, fn))
        return 1;
    if (!mc_red_view_plan(&v, &pl)) {
        /* two or more reduced groups: copy with the reduced dims last */
        mc_red_view_free(&v);
        if (mc_red_view_make(&v, x, red, true, fn))
            return 1;
        mc_red_view_plan(&v, &pl);
    }
    int rc = run_plan(T, op, x->dtype, v.data, &pl, acc, fn);
    mc_red_view_free(&v);
    return rc;
}

static mc_reduce_op kind_op(int kind)
{
    switch (kind) {
    case MC_RK_PROD:
        return MC_R_PROD;
    case MC_RK_MAX:
        return MC_R_MAX;
    case MC_RK_MIN:
        return MC_R_MIN;
    case MC_RK_ALL:
        return MC_R_AND;
    case MC_RK_ANY:
        return MC_R_OR;
    default:
        return MC_R_SUM;
    }
}

static int reduce_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_reduce_params *p = params;
    const mc_array *x = in[0];
    const char *fn = kind_fns[p->kind];
    bool red[MC_MAX_NDIM] = {false};
    size_t count = 1;
    for (int i = 0; i < p->n; i++) {
        red[p->axes[i]] = true;
        count *= (size_t)x->shape[p->axes[i]];
    }
    if (p->kind == MC_RK_VAR || p->kind == MC_RK_STD)
        return mc_reduce_var_eval(out, x, red, p->ddof, p->kind == MC_RK_STD, fn);
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (out->size == 0)
        return 0;
    const mc_reduce_table *T = mc_reduce_kernels();
    mc_reduce_op op = kind_op(p->kind);
    int adt = mc_reduce_acc_dtype(op, x->dtype);
    if (!T->row[op][x->dtype])
        return mc_error("[%s] Not supported for %s.", fn, mc_dtype_name(x->dtype));
    size_t asz = mc_dtype_size(adt);
    mc_buffer *tmp = NULL;
    char *acc = out->data;
    if (asz > mc_dtype_size(out->dtype)) {
        tmp = mc_buffer_alloc(out->size * asz);
        if (!tmp)
            return mc_error_oom(fn, out->size * asz);
        acc = tmp->data;
    }
    int rc = 0;
    if (x->size == 0) {
        /* empty reduced axes: every output is the identity */
        static const char nothing[16];
        T->row[op][x->dtype](nothing, 0, out->size, 0, acc);
    } else {
        rc = reduce_into(T, op, x, red, acc, fn);
    }
    if (!rc)
        mc_reduce_finish(adt, out->dtype, p->kind == MC_RK_MEAN ? 1.0 / (double)count : 1.0, acc, out->data,
                         out->size);
    if (tmp)
        mc_buffer_release(tmp);
    return rc;
}

/* ---- ArgReduce ---- */

static const char *argreduce_name(const void *params)
{
    return ((const mc_argreduce_params *)params)->op ? "ArgMin" : "ArgMax";
}

static int argreduce_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_argreduce_params *p = params;
    const mc_array *x = in[0];
    if (p->axis < 0 || p->axis >= x->ndim)
        return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, p->axis, x->ndim);
    if (x->size == 0)
        return mc_error("[%s] Cannot %s reduce zero size array.", fn, p->op ? "argmin" : "argmax");
    out->dtype = MLX_UINT32;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    out->shape[p->axis] = 1;
    return 0;
}

typedef struct arg_job {
    mc_arg_row_fn row;
    mc_arg_col_fn col;
    const char *x;
    size_t n, cols, isz, cw, nch;
    uint32_t *out;
} arg_job;

static void arg_range(void *ctx, size_t b, size_t e)
{
    arg_job *j = ctx;
    if (j->cols == 1) {
        j->row(j->x + b * j->n * j->isz, j->n, e - b, j->n, j->out + b);
        return;
    }
    for (size_t t = b; t < e; t++) {
        size_t o = t / j->nch, j0 = (t % j->nch) * j->cw;
        size_t w = j->cols - j0 < j->cw ? j->cols - j0 : j->cw;
        j->col(j->x + (o * j->n * j->cols + j0) * j->isz, j->n, w, j->cols, j->out + o * j->cols + j0);
    }
}

static int argreduce_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_argreduce_params *p = params;
    const mc_array *x = in[0];
    const char *fn = p->op ? "argmin" : "argmax";
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (out->size == 0)
        return 0;
    if (x->size == 0) { /* infer rejects this; keep eval total */
        memset(out->data, 0, out->size * sizeof(uint32_t));
        return 0;
    }
    const mc_reduce_table *T = mc_reduce_kernels();
    int op = p->op ? MC_ARG_MIN : MC_ARG_MAX;
    if (!T->arg_row[op][x->dtype])
        return mc_error("[%s] Not supported for %s.", fn, mc_dtype_name(x->dtype));
    bool red[MC_MAX_NDIM] = {false};
    red[p->axis] = true;
    mc_red_view v;
    mc_red_plan pl;
    if (mc_red_view_make(&v, x, red, false, fn))
        return 1;
    mc_red_view_plan(&v, &pl); /* one axis: one group at most */
    arg_job j = {T->arg_row[op][x->dtype], T->arg_col[op][x->dtype], v.data, pl.n, pl.cols,
                 v.itemsize, 0, 0, out->data};
    size_t total = pl.outer * pl.n * pl.cols;
    if (pl.cols == 1) {
        mc_parallel_for(pl.outer, max_z(1, MC_RED_GRAIN / pl.n), arg_range, &j);
    } else {
        j.cw = max_z(1, (MC_RED_GRAIN / pl.n + 255) / 256) * 256;
        j.nch = (pl.cols + j.cw - 1) / j.cw;
        size_t tasks = pl.outer * j.nch;
        mc_parallel_for(tasks, total < 2 * MC_RED_GRAIN ? tasks : 1, arg_range, &j);
    }
    mc_red_view_free(&v);
    return 0;
}

/* ---- derivatives (MLX's Reduce::vjp and jvp; mean, var and std are
 * primitives here, compositions in MLX: their rules are the derivatives
 * of MLX's compositions) ---- */

/* The number of elements each output of p reduces. */
static double reduced_count(const mc_array *x, const mc_reduce_params *p)
{
    double n = 1;
    for (int i = 0; i < p->n; i++)
        n *= x->shape[p->axes[i]];
    return n;
}

/* For each element of x, the product of the other elements of its group
 * (the reduced axes): two exclusive cumulative products, so a zero in the
 * group does not divide. Several axes are moved to the back and flattened
 * into one, as MLX does. */
static mc_array *exclusive_product(mc_gb *s, mc_array *x, const mc_reduce_params *p)
{
    if (p->n == 1)
        return mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scan(s, x, MC_S_PROD, p->axes[0], false, false),
                        mc_gb_scan(s, x, MC_S_PROD, p->axes[0], true, false));
    int to[MC_MAX_NDIM], back[MC_MAX_NDIM], flat[MC_MAX_NDIM], moved[MC_MAX_NDIM], k = 0, j = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (j < p->n && p->axes[j] == i) {
            j++;
        } else {
            flat[k] = x->shape[i];
            to[k++] = i;
        }
    }
    int kept = k, group = 1;
    for (j = 0; j < p->n; j++) {
        to[k++] = p->axes[j];
        group *= x->shape[p->axes[j]];
    }
    flat[kept] = group;
    for (int i = 0; i < x->ndim; i++) {
        back[to[i]] = i;
        moved[i] = x->shape[to[i]];
    }
    mc_array *f = mc_gb_reshape(s, mc_gb_transpose(s, x, to), kept + 1, flat);
    mc_array *e = mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scan(s, f, MC_S_PROD, kept, false, false),
                           mc_gb_scan(s, f, MC_S_PROD, kept, true, false));
    return mc_gb_transpose(s, mc_gb_reshape(s, e, x->ndim, moved), back);
}

/* Where x equals its max (min) out, shared evenly among ties: MLX's
 * vjp of max and min. */
static mc_array *extremum_share(mc_gb *s, mc_array *x, mc_array *out, const mc_reduce_params *p)
{
    mc_array *mask = mc_gb_binary(s, MC_B_EQUAL, x, out, x->dtype);
    mc_array *fmask = mc_gb_astype(s, mask, x->dtype);
    return mc_gb_op(s, MC_B_DIVIDE, fmask, mc_gb_sum(s, fmask, p->axes, p->n));
}

/* x minus its mean over the reduced axes, and the scale of var's
 * derivative, 2 / max(N - ddof, 0) (infinite where var divides by 0). */
static mc_array *deviation(mc_gb *s, mc_array *x, const mc_reduce_params *p, double *scale)
{
    double dof = reduced_count(x, p) - p->ddof;
    *scale = 2.0 / (dof > 0 ? dof : 0.0);
    return mc_gb_op(s, MC_B_SUBTRACT, x, mc_gb_reduce(s, x, MC_RK_MEAN, p->axes, p->n));
}

/* The factor d out / d x (x's shape) for the kinds where one exists
 * elementwise; t (the cotangent, with dims kept) broadcasts against it. */
static mc_array *reduce_factor(mc_gb *s, mc_array *node, const mc_reduce_params *p)
{
    mc_array *x = node->inputs[0];
    mlx_dtype d = x->dtype;
    double scale;
    switch (p->kind) {
    case MC_RK_PROD:
        return exclusive_product(s, x, p);
    case MC_RK_MAX:
    case MC_RK_MIN:
        return extremum_share(s, x, node, p);
    case MC_RK_MEAN:
        return mc_gb_full_like(s, 1.0 / reduced_count(x, p), node->dtype, x);
    case MC_RK_VAR: {
        mc_array *dev = deviation(s, x, p, &scale);
        return mc_gb_op(s, MC_B_MULTIPLY, dev, mc_gb_scalar(s, scale, d));
    }
    case MC_RK_STD: { /* var's factor / (2 std) */
        mc_array *dev = deviation(s, x, p, &scale);
        return mc_gb_op(s, MC_B_DIVIDE, mc_gb_op(s, MC_B_MULTIPLY, dev, mc_gb_scalar(s, scale / 2, d)), node);
    }
    default:
        return NULL;
    }
}

static int reduce_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_reduce_params *p = node->params;
    mc_array *x = node->inputs[0];
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g;
    if (p->kind == MC_RK_SUM)
        g = mc_gb_broadcast_like(&s, cot, x);
    else if (p->kind == MC_RK_ALL || p->kind == MC_RK_ANY)
        g = mc_gb_zeros_like(&s, x);
    else
        g = mc_gb_promoted(&s, MC_B_MULTIPLY, cot, reduce_factor(&s, node, p), false);
    vjps[0] = mc_gb_finish_ref(&s, mc_gb_astype(&s, mc_gb_broadcast_like(&s, g, x), x->dtype));
    return vjps[0] ? 0 : 1;
}

/* MLX's jvp of max and min: the tangent at the first extremum of each
 * group (argmax/argmin, then take_along_axis), several axes moved to the
 * back and flattened into one first. */
static mc_array *extremum_jvp(mc_gb *s, mc_array *node, mc_array *t, const mc_reduce_params *p)
{
    mc_array *x = node->inputs[0];
    int axis = p->axes[0];
    if (p->n > 1) {
        int to[MC_MAX_NDIM], flat[MC_MAX_NDIM], k = 0, j = 0;
        for (int i = 0; i < x->ndim; i++) {
            if (j < p->n && p->axes[j] == i)
                j++;
            else
                flat[k] = x->shape[i], to[k++] = i;
        }
        int kept = k;
        flat[kept] = 1;
        for (j = 0; j < p->n; j++) {
            to[k++] = p->axes[j];
            flat[kept] *= x->shape[p->axes[j]];
        }
        x = mc_gb_reshape(s, mc_gb_transpose(s, x, to), kept + 1, flat);
        t = mc_gb_reshape(s, mc_gb_transpose(s, t, to), kept + 1, flat);
        axis = kept;
    }
    if (s->failed)
        return NULL;
    mc_argreduce_params ap = {p->kind == MC_RK_MIN, axis};
    mc_array *idx = mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_ARGREDUCE, &x, 1, &ap, sizeof ap));
    if (!idx)
        return NULL;
    return mc_gb_reshape(s, mc_gb_gather_axis(s, t, idx, axis, 1), node->ndim, node->shape);
}

static mc_array *reduce_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_reduce_params *p = node->params;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *t = tans[0], *r;
    if (p->kind == MC_RK_SUM)
        r = mc_gb_sum(&s, t, p->axes, p->n);
    else if (p->kind == MC_RK_ALL || p->kind == MC_RK_ANY)
        r = mc_gb_zeros_like(&s, node);
    else if (p->kind == MC_RK_MAX || p->kind == MC_RK_MIN)
        r = extremum_jvp(&s, node, t, p);
    else
        r = mc_gb_sum(&s, mc_gb_promoted(&s, MC_B_MULTIPLY, t, reduce_factor(&s, node, p), false), p->axes, p->n);
    return mc_gb_finish_ref(&s, mc_gb_astype(&s, r, node->dtype));
}

/* vmap: the batch first, the reduced axes shifted past it. */
static int reduce_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn)
{
    mc_reduce_params q;
    mc_vmap_params(&q, sizeof q, node);
    for (int i = 0; i < q.n; i++)
        q.axes[i]++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

static int argreduce_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                          const char *fn)
{
    mc_argreduce_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.axis++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_reduce = {
    .name = "Reduce",
    .arity = 1,
    .infer = reduce_infer,
    .eval = reduce_eval,
    .vjp = reduce_vjp,
    .jvp = reduce_jvp,
    .name_of = reduce_name,
    .vmap = reduce_vmap,
};

const mc_prim_info mc_prim_argreduce = {
    .name = "ArgReduce",
    .arity = 1,
    .infer = argreduce_infer,
    .eval = argreduce_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .name_of = argreduce_name,
    .vmap = argreduce_vmap,
};
