/* Owns the Compiled primitive (MC_PRIM_FUSED): a chain of elementwise
 * unary, binary and astype steps that compile's fuse pass
 * (src/compile/fuse.c) folded into one node, run by a tiled interpreter.
 * The output is walked in rows of its last (collapsed) dimension, cut
 * into tiles of TILE elements; for each tile every step runs its SIMD
 * kernel on small buffers, so the intermediates never leave the cache and
 * no intermediate array is allocated. Operands that are contiguous along the row are read in place;
 * operands constant along the row (broadcast) use the kernels' scalar
 * classes; other strides are gathered into a buffer first.
 *
 * Derivatives, as MLX's Compiled primitive: the program is replayed as
 * ordinary Unary, Binary and AsType nodes and those nodes' own rules are
 * applied, in reverse step order for the vjp, in order for the jvp. */
#include <string.h>

#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_binary.h"
#include "graph/prims_fused.h"
#include "graph/prims_unary.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"

enum {
    TILE = 128,
    MAX_ITEM = 8,          /* largest element: float64, int64, complex64 */
    GRAIN = 1 << 15,       /* elements below which the work stays inline */
};

size_t mc_fused_params_size(int n_ops)
{
    return offsetof(mc_fused_params, ops) + (size_t)n_ops * sizeof(mc_fused_op);
}

static const char *fused_name(const void *params)
{
    (void)params;
    return "Compiled";
}

/* The dtype of operand k (an input, or an earlier op's result). */
static mlx_dtype operand_dtype(const mc_fused_params *p, mc_array *const *in, int k)
{
    return k < p->n_in ? in[k]->dtype : (mlx_dtype)p->ops[k - p->n_in].dtype;
}

static int fused_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_fused_params *p = params;
    if (p->n_in != n || p->n_ops < 1 || p->n_ops > MC_FUSED_MAX_OPS || n > MC_FUSED_MAX_INPUTS)
        return mc_error("[%s] Internal: a fused node with %d inputs does not match its program.", fn, n);
    const mc_kernel_table *K = mc_kernels();
    for (int i = 0; i < p->n_ops; i++) {
        const mc_fused_op *o = &p->ops[i];
        if (o->a < 0 || o->a >= n + i || (o->kind == MC_FUSED_BINARY && (o->b < 0 || o->b >= n + i)))
            return mc_error("[%s] Internal: a fused step reads an operand that is not defined.", fn);
        mlx_dtype da = operand_dtype(p, in, o->a);
        bool ok = false;
        switch (o->kind) {
        case MC_FUSED_UNARY:
            ok = K->unary[o->op][da] != NULL;
            break;
        case MC_FUSED_BINARY:
            ok = operand_dtype(p, in, o->b) == da && K->binary[o->op][da][MC_VV] != NULL;
            break;
        case MC_FUSED_ASTYPE:
            ok = K->convert[da][o->op] != NULL;
            break;
        }
        if (!ok)
            return mc_error("[%s] Internal: a fused step has no kernel for dtype %s.", fn, mc_dtype_name(da));
    }
    /* Each step's shape is the broadcast of its operands', so the result's
     * is the broadcast of all inputs' (this is what lets a shapeless trace
     * replay a fused node on new shapes). */
    out->dtype = (mlx_dtype)p->ops[p->n_ops - 1].dtype;
    out->ndim = 0;
    for (int k = 0; k < n; k++) {
        int nd, shape[MC_MAX_NDIM];
        if (mc_broadcast_shapes(out->ndim, out->shape, in[k]->ndim, in[k]->shape, &nd, shape, fn))
            return 1;
        out->ndim = nd;
        memcpy(out->shape, shape, sizeof(int) * (size_t)nd);
    }
    return 0;
}

/* ---- evaluation ---- */

typedef struct fused_job {
    const mc_fused_params *p;
    int n_in;
    int ndim;                     /* collapsed, >= 1; the last dim is the row */
    int shape[MC_MAX_NDIM];
    int64_t strides[MC_FUSED_MAX_INPUTS][MC_MAX_NDIM]; /* per input, in elements */
    const char *data[MC_FUSED_MAX_INPUTS];
    size_t isize[MC_FUSED_MAX_INPUTS];
    /* per step: its kernel(s) and result element size */
    mc_unary_kernel unary[MC_FUSED_MAX_OPS];
    const mc_binary_kernel *binary[MC_FUSED_MAX_OPS];
    mc_convert_kernel convert[MC_FUSED_MAX_OPS];
    char *out;
    size_t osize;
    size_t tiles_per_row;
} fused_job;

/* A resolved operand of one tile: where it is, and whether it is one
 * value for the whole tile. */
typedef struct operand {
    const char *ptr;
    bool scalar;
} operand;

/* Buffers of one worker: gathered inputs and step results. */
typedef struct scratch {
    _Alignas(64) char gather[MC_FUSED_MAX_INPUTS][TILE * MAX_ITEM];
    _Alignas(64) char tmp[MC_FUSED_MAX_OPS][TILE * MAX_ITEM];
} scratch;

static void run_tile(const fused_job *j, size_t row, size_t c0, size_t len, scratch *sc)
{
    const mc_fused_params *p = j->p;
    int last = j->ndim - 1;
    operand ops[MC_FUSED_MAX_INPUTS + MC_FUSED_MAX_OPS];

    int idx[MC_MAX_NDIM];
    size_t r = row;
    for (int d = last - 1; d >= 0; d--) {
        idx[d] = (int)(r % (size_t)j->shape[d]);
        r /= (size_t)j->shape[d];
    }
    for (int k = 0; k < j->n_in; k++) {
        int64_t off = 0;
        for (int d = 0; d < last; d++)
            off += (int64_t)idx[d] * j->strides[k][d];
        int64_t s = j->strides[k][last];
        off += (int64_t)c0 * s;
        size_t sz = j->isize[k];
        const char *base = j->data[k] + off * (int64_t)sz;
        if (s == 0) {
            ops[k] = (operand){base, true};
        } else if (s == 1) {
            ops[k] = (operand){base, false};
        } else {
            for (size_t i = 0; i < len; i++)
                memcpy(sc->gather[k] + i * sz, base + (int64_t)i * s * (int64_t)sz, sz);
            ops[k] = (operand){sc->gather[k], false};
        }
    }

    char *dst = j->out + (row * (size_t)j->shape[last] + c0) * j->osize;
    for (int i = 0; i < p->n_ops; i++) {
        const mc_fused_op *o = &p->ops[i];
        operand a = ops[o->a];
        operand b = o->kind == MC_FUSED_BINARY ? ops[o->b] : a;
        bool scalar = a.scalar && b.scalar;
        bool direct = i == p->n_ops - 1 && !scalar;
        char *y = direct ? dst : sc->tmp[i];
        size_t n = scalar ? 1 : len;
        switch (o->kind) {
        case MC_FUSED_UNARY:
            j->unary[i](a.ptr, y, n);
            break;
        case MC_FUSED_ASTYPE:
            j->convert[i](a.ptr, y, n);
            break;
        default: {
            mc_binary_class c = scalar || (!a.scalar && !b.scalar) ? MC_VV : a.scalar ? MC_SV : MC_VS;
            j->binary[i][c](a.ptr, b.ptr, y, n);
            break;
        }
        }
        ops[p->n_in + i] = (operand){y, scalar};
    }
    /* every input was constant along the row: spread the one value */
    const operand *res = &ops[p->n_in + p->n_ops - 1];
    if (res->scalar) {
        for (size_t i = 0; i < len; i++)
            memcpy(dst + i * j->osize, res->ptr, j->osize);
    }
}

static void fused_range(void *ctx, size_t begin, size_t end)
{
    const fused_job *j = ctx;
    scratch sc;
    size_t row_len = (size_t)j->shape[j->ndim - 1];
    for (size_t t = begin; t < end; t++) {
        size_t row = t / j->tiles_per_row;
        size_t c0 = (t % j->tiles_per_row) * TILE;
        size_t len = row_len - c0 < TILE ? row_len - c0 : TILE;
        run_tile(j, row, c0, len, &sc);
    }
}

/* Drops size-1 dims and merges neighbours that every operand (the inputs
 * and the row-major output) walks as one. */
static void collapse(fused_job *j, int ndim, const int *shape, int64_t (*in_strides)[MC_MAX_NDIM])
{
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1)
            continue;
        bool merge = nd > 0;
        if (merge) {
            /* dim d-1 kept as nd-1: mergeable if outer stride = inner stride * inner size */
            for (int k = 0; k < j->n_in && merge; k++)
                merge = j->strides[k][nd - 1] == in_strides[k][d] * shape[d];
        }
        if (merge) {
            j->shape[nd - 1] *= shape[d];
            for (int k = 0; k < j->n_in; k++)
                j->strides[k][nd - 1] = in_strides[k][d];
        } else {
            j->shape[nd] = shape[d];
            for (int k = 0; k < j->n_in; k++)
                j->strides[k][nd] = in_strides[k][d];
            nd++;
        }
    }
    /* (the output is row-major, so any two neighbours merge for it) */
    if (nd == 0) {
        j->shape[0] = 1;
        for (int k = 0; k < j->n_in; k++)
            j->strides[k][0] = 0;
        nd = 1;
    }
    j->ndim = nd;
}

static int fused_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    static const char fn[] = "Compiled";
    const mc_fused_params *p = params;
    const mc_kernel_table *K = mc_kernels();
    /* Not zeroed: the job is 13 KB (strides for every possible input and
     * dim), and clearing it cost more than a small kernel's work. Every
     * field a tile reads is written below: strides, shape and ndim by
     * collapse for the n inputs and kept dims, one kernel per step for
     * its kind, data and isize for the n inputs. */
    fused_job *j = mc_xmalloc(sizeof *j);
    if (!j)
        return mc_error_oom(fn, sizeof *j);
    j->p = p;
    j->n_in = n;
    j->ndim = 0;
    j->tiles_per_row = 0;
    for (int i = 0; i < p->n_ops; i++) {
        const mc_fused_op *o = &p->ops[i];
        mlx_dtype da = operand_dtype(p, in, o->a);
        if (o->kind == MC_FUSED_UNARY)
            j->unary[i] = K->unary[o->op][da];
        else if (o->kind == MC_FUSED_ASTYPE)
            j->convert[i] = K->convert[da][o->op];
        else
            j->binary[i] = K->binary[o->op][da];
    }
    int64_t (*bstr)[MC_MAX_NDIM] = mc_xmalloc(sizeof(int64_t[MC_FUSED_MAX_INPUTS][MC_MAX_NDIM]));
    if (!bstr) {
        mc_xfree(j);
        return mc_error_oom(fn, sizeof(int64_t[MC_FUSED_MAX_INPUTS][MC_MAX_NDIM]));
    }
    for (int k = 0; k < n; k++) {
        mc_broadcast_strides(in[k], out->ndim, out->shape, bstr[k]);
        j->data[k] = in[k]->data;
        j->isize[k] = mc_dtype_size(in[k]->dtype);
    }
    if (out->size) /* an empty output's dims may multiply past INT_MAX */
        collapse(j, out->ndim, out->shape, bstr);
    mc_xfree(bstr);
    /* An input may give its buffer to the output only if it is read at the
     * very positions written (row-major, same size): mc_out_alloc checks
     * exactly that, and within a tile every read precedes the write. The
     * data pointers were taken above: donation clears the input's. */
    if (mc_out_alloc(out, in, n, fn)) {
        mc_xfree(j);
        return 1;
    }
    j->out = out->data;
    j->osize = mc_dtype_size(out->dtype);
    if (out->size) {
        size_t row_len = (size_t)j->shape[j->ndim - 1];
        size_t rows = out->size / row_len;
        j->tiles_per_row = (row_len + TILE - 1) / TILE;
        size_t tiles = rows * j->tiles_per_row;
        size_t grain = GRAIN / TILE;
        mc_parallel_for(tiles, grain ? grain : 1, fused_range, j);
    }
    mc_xfree(j);
    return 0;
}

/* ---- derivatives ---- */

enum { MAX_VALS = MC_FUSED_MAX_INPUTS + MC_FUSED_MAX_OPS };

/* True if step i of p is an astype to its operand's own dtype: a no-op,
 * whose replayed "node" is the operand itself. */
static bool is_noop(const mc_fused_params *p, mc_array *const *vals, int i)
{
    const mc_fused_op *o = &p->ops[i];
    return o->kind == MC_FUSED_ASTYPE && vals[o->a]->dtype == (mlx_dtype)o->op;
}

/* vals[0..n_in) = the node's inputs (borrowed), vals[n_in + i] = step i
 * as a lazy node (a new reference each). Returns 0, or non-zero with an
 * error reported and every step node released. */
static int replay(mc_array **vals, const mc_array *node, const char *fn)
{
    const mc_fused_params *p = node->params;
    for (int k = 0; k < p->n_in; k++)
        vals[k] = node->inputs[k];
    for (int i = 0; i < p->n_ops; i++) {
        const mc_fused_op *o = &p->ops[i];
        mc_array *in[2] = {vals[o->a], o->kind == MC_FUSED_BINARY ? vals[o->b] : NULL};
        mc_array *r;
        if (o->kind == MC_FUSED_UNARY) {
            mc_unary_params up = {(mc_unary_op)o->op};
            r = mc_node_new(fn, MC_PRIM_UNARY, in, 1, &up, sizeof up);
        } else if (o->kind == MC_FUSED_BINARY) {
            mc_binary_params bp = {(mc_binary_op)o->op};
            r = mc_node_new(fn, MC_PRIM_BINARY, in, 2, &bp, sizeof bp);
        } else {
            r = mc_node_astype(in[0], (mlx_dtype)o->op, fn);
        }
        if (!r) {
            while (i > 0)
                mc_array_release(vals[p->n_in + --i]);
            return 1;
        }
        vals[p->n_in + i] = r;
    }
    return 0;
}

static void release_steps(mc_array **vals, const mc_fused_params *p)
{
    for (int i = 0; i < p->n_ops; i++)
        mc_array_release(vals[p->n_in + i]);
}

/* The operands of step i (one or two). */
static int step_operands(const mc_fused_op *o, int *ops)
{
    ops[0] = o->a;
    ops[1] = o->b;
    return o->kind == MC_FUSED_BINARY ? 2 : 1;
}

/* acc[k] += g (taken over); 0 or non-zero with an error reported. */
static int accumulate(mc_array **acc, int k, mc_array *g, const char *fn)
{
    if (!acc[k]) {
        acc[k] = g;
        return 0;
    }
    mc_binary_params bp = {MC_B_ADD};
    mc_array *in[2] = {acc[k], g};
    mc_array *sum = mc_node_new(fn, MC_PRIM_BINARY, in, 2, &bp, sizeof bp);
    mc_array_release(g);
    mc_array_release(acc[k]);
    acc[k] = sum;
    return sum ? 0 : 1;
}

static int fused_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_fused_params *p = node->params;
    mc_array *vals[MAX_VALS], *acc[MAX_VALS] = {NULL};
    bool needed[MAX_VALS] = {false};
    if (replay(vals, node, fn))
        return 1;
    /* only paths from the requested inputs are differentiated, as MLX's
     * vjp of the re-expanded tape does */
    for (int k = 0; k < nargs; k++)
        needed[argnums[k]] = true;
    for (int i = 0; i < p->n_ops; i++) {
        int ops[2], n = step_operands(&p->ops[i], ops);
        for (int j = 0; j < n; j++)
            needed[p->n_in + i] |= needed[ops[j]];
    }
    int rc = 0;
    acc[p->n_in + p->n_ops - 1] = mc_array_retain(cot);
    for (int i = p->n_ops - 1; i >= 0 && !rc; i--) {
        int v = p->n_in + i;
        mc_array *c = acc[v];
        acc[v] = NULL;
        if (!c || !needed[v]) {
            if (c)
                mc_array_release(c);
            continue;
        }
        int ops[2], n = step_operands(&p->ops[i], ops), args[2], na = 0;
        if (is_noop(p, vals, i)) {
            rc = accumulate(acc, ops[0], c, fn);
            continue;
        }
        for (int j = 0; j < n; j++)
            if (needed[ops[j]])
                args[na++] = j;
        mc_array *g[2];
        mc_array *step = vals[v];
        rc = mc_prims[step->prim]->vjp(g, step, c, args, na, fn);
        mc_array_release(c);
        if (rc) /* nothing was stored in g */
            break;
        for (int j = 0; j < na; j++) {
            if (rc)
                mc_array_release(g[j]);
            else
                rc = accumulate(acc, ops[args[j]], g[j], fn);
        }
    }
    /* inputs the chain does not reach from the output get zeros */
    for (int k = 0; k < nargs && !rc; k++) {
        mc_array *a = acc[argnums[k]];
        mc_gb s;
        mc_gb_begin(&s, fn);
        vjps[k] = a ? mc_array_retain(a) : mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, node->inputs[argnums[k]]));
        mc_gb_end(&s);
        if (!vjps[k]) {
            while (k > 0)
                mc_array_release(vjps[--k]);
            rc = 1;
        }
    }
    for (int k = 0; k < MAX_VALS; k++)
        if (acc[k])
            mc_array_release(acc[k]);
    release_steps(vals, p);
    return rc;
}

static mc_array *fused_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_fused_params *p = node->params;
    mc_array *vals[MAX_VALS], *tan[MAX_VALS] = {NULL};
    if (replay(vals, node, fn))
        return NULL;
    for (int k = 0; k < nargs; k++)
        tan[argnums[k]] = mc_array_retain(tans[k]);
    bool failed = false;
    for (int i = 0; i < p->n_ops && !failed; i++) {
        int v = p->n_in + i, ops[2], n = step_operands(&p->ops[i], ops), args[2], na = 0;
        mc_array *t[2];
        for (int j = 0; j < n; j++) {
            if (tan[ops[j]]) {
                t[na] = tan[ops[j]];
                args[na++] = j;
            }
        }
        if (na == 0) /* a zero tangent */
            continue;
        if (is_noop(p, vals, i))
            tan[v] = mc_array_retain(t[0]);
        else
            tan[v] = mc_prims[vals[v]->prim]->jvp(vals[v], t, args, na, fn);
        failed = tan[v] == NULL;
    }
    mc_array *r = NULL;
    if (!failed) {
        r = tan[p->n_in + p->n_ops - 1];
        tan[p->n_in + p->n_ops - 1] = NULL;
        if (!r) {
            mc_gb s;
            mc_gb_begin(&s, fn);
            r = mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, node));
        }
    }
    for (int k = 0; k < MAX_VALS; k++)
        if (tan[k])
            mc_array_release(tan[k]);
    release_steps(vals, p);
    return r;
}

const mc_prim_info mc_prim_fused = {
    .name = "Compiled",
    .arity = MC_ARITY_ANY,
    .infer = fused_infer,
    .eval = fused_eval,
    .vjp = fused_vjp,
    .jvp = fused_jvp,
    .name_of = fused_name,
    /* elementwise over broadcast inputs, as Binary */
    .vmap = mc_vmap_elementwise,
};
