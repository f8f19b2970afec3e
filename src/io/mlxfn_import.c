/* Owns the MLX -> mlx-cpu half of the primitive mapping: for each MLX
 * primitive we read, its state as mlx/export.cpp serializes it (the
 * fields of the primitive's state() in order) and the node of ours that
 * computes it. The state is checked here (axes in range and distinct,
 * enum values known, counts bounded); the node's infer rule checks the
 * rest against the inputs, and the reader compares the result with what
 * the file declares. */
#include <stdlib.h>
#include <string.h>

#include "graph/primitive.h"
#include "graph/prims_binary.h"
#include "graph/prims_conv.h"
#include "graph/prims_copy.h"
#include "graph/prims_create.h"
#include "graph/prims_fast.h"
#include "graph/prims_fft.h"
#include "graph/prims_index.h"
#include "graph/prims_matmul.h"
#include "graph/prims_misc.h"
#include "graph/prims_mm_ext.h"
#include "graph/prims_quant.h"
#include "graph/prims_random.h"
#include "graph/prims_reduce.h"
#include "graph/prims_scan.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "graph/prims_sort.h"
#include "graph/prims_unary.h"
#include "graph/prims_view.h"
#include "io/mlxfn_import_multi.h"
#include "io/mlxfn_prims.h"
#include "runtime/error.h"
#include "simd/reduce.h"

/* ---- helpers ---- */

static int need_in(mc_mlxfn_imp *c, int lo, int hi)
{
    if (c->n_in < lo || c->n_in > hi)
        return mc_rd_fail(c->rd, "Bad file: %s takes %d to %d inputs, the record has %d", c->name, lo, hi,
                          c->n_in);
    return 0;
}

int mc_mlxfn_imp_need_in(mc_mlxfn_imp *c, int lo, int hi) { return need_in(c, lo, hi); }

/* Reads the outputs and checks there is one. */
static int one_out(mc_mlxfn_imp *c)
{
    if (mc_mlxfn_imp_outputs(c))
        return 1;
    if (c->n_out != 1)
        return mc_rd_fail(c->rd, "Bad file: %s has one output, the record declares %d", c->name, c->n_out);
    return 0;
}

/* One node of prim over the record's inputs as its only output. */
static int node(mc_mlxfn_imp *c, int prim, const void *params, size_t size)
{
    if (one_out(c))
        return 1;
    c->res[0] = mc_node_new(c->rd->fn, prim, c->in, c->n_in, params, size);
    if (!c->res[0])
        c->rd->failed = true;
    return c->res[0] ? 0 : 1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Normalises axes of an ndim array (negatives count from the end), then
 * sorts them if asked; each must be in range and appear once. */
static int axes_ok(mc_mlxfn_imp *c, int n, int *axes, int ndim, bool sort)
{
    for (int i = 0; i < n; i++) {
        int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
        if (a < 0 || a >= ndim)
            return mc_rd_fail(c->rd, "Bad file: %s has axis %d for %d dimensions", c->name, axes[i], ndim);
        axes[i] = a;
    }
    int s[MC_MAX_NDIM];
    memcpy(s, axes, sizeof(int) * (size_t)n);
    qsort(s, (size_t)n, sizeof(int), cmp_int);
    for (int i = 1; i < n; i++)
        if (s[i] == s[i - 1])
            return mc_rd_fail(c->rd, "Bad file: %s repeats axis %d", c->name, s[i]);
    if (sort)
        memcpy(axes, s, sizeof(int) * (size_t)n);
    return 0;
}

static int axis_ok(mc_mlxfn_imp *c, int *axis, int ndim) { return axes_ok(c, 1, axis, ndim, false); }

/* ---- elementwise ---- */

static const struct {
    const char *name;
    mc_unary_op op;
} unary_table[] = {
    {"Abs", MC_U_ABS},
    {"ArcCos", MC_U_ARCCOS},
    {"ArcCosh", MC_U_ARCCOSH},
    {"ArcSin", MC_U_ARCSIN},
    {"ArcSinh", MC_U_ARCSINH},
    {"ArcTan", MC_U_ARCTAN},
    {"ArcTanh", MC_U_ARCTANH},
    {"Ceil", MC_U_CEIL},
    {"Conjugate", MC_U_CONJUGATE},
    {"Cos", MC_U_COS},
    {"Cosh", MC_U_COSH},
    {"Erf", MC_U_ERF},
    {"ErfInv", MC_U_ERFINV},
    {"Exp", MC_U_EXP},
    {"Expm1", MC_U_EXPM1},
    {"Floor", MC_U_FLOOR},
    {"Imag", MC_U_IMAG},
    {"Log1p", MC_U_LOG1P},
    {"LogicalNot", MC_U_LOGICAL_NOT},
    {"Negative", MC_U_NEGATIVE},
    {"Real", MC_U_REAL},
    {"Round", MC_U_ROUND},
    {"Sigmoid", MC_U_SIGMOID},
    {"Sign", MC_U_SIGN},
    {"Sin", MC_U_SIN},
    {"Sinh", MC_U_SINH},
    {"Square", MC_U_SQUARE},
    {"Tan", MC_U_TAN},
    {"Tanh", MC_U_TANH},
    {"BitwiseInvert", MC_U_BITWISE_INVERT},
};

static const struct {
    const char *name;
    mc_binary_op op;
} binary_table[] = {
    {"Add", MC_B_ADD},
    {"ArcTan2", MC_B_ARCTAN2},
    {"Divide", MC_B_DIVIDE},
    {"Greater", MC_B_GREATER},
    {"GreaterEqual", MC_B_GREATER_EQUAL},
    {"Less", MC_B_LESS},
    {"LessEqual", MC_B_LESS_EQUAL},
    {"LogicalAnd", MC_B_LOGICAL_AND},
    {"LogicalOr", MC_B_LOGICAL_OR},
    {"LogAddExp", MC_B_LOGADDEXP},
    {"Maximum", MC_B_MAXIMUM},
    {"Minimum", MC_B_MINIMUM},
    {"Multiply", MC_B_MULTIPLY},
    {"NotEqual", MC_B_NOT_EQUAL},
    {"Power", MC_B_POWER},
    {"Remainder", MC_B_REMAINDER},
    {"Subtract", MC_B_SUBTRACT},
};

static int unary_node(mc_mlxfn_imp *c, mc_unary_op op)
{
    if (need_in(c, 1, 1))
        return 1;
    mc_unary_params p = {op};
    return node(c, MC_PRIM_UNARY, &p, sizeof p);
}

static int binary_node(mc_mlxfn_imp *c, mc_binary_op op)
{
    if (need_in(c, 2, 2))
        return 1;
    mc_binary_params p = {op};
    return node(c, MC_PRIM_BINARY, &p, sizeof p);
}

static int imp_unary(mc_mlxfn_imp *c)
{
    for (size_t i = 0; i < sizeof unary_table / sizeof unary_table[0]; i++)
        if (!strcmp(c->name, unary_table[i].name))
            return unary_node(c, unary_table[i].op);
    return 1; /* not reached: the table below only lists names found here */
}

static int imp_binary(mc_mlxfn_imp *c)
{
    for (size_t i = 0; i < sizeof binary_table / sizeof binary_table[0]; i++)
        if (!strcmp(c->name, binary_table[i].name))
            return binary_node(c, binary_table[i].op);
    return 1;
}

static int imp_log(mc_mlxfn_imp *c)
{
    int32_t base;
    if (mc_rd_i32(c->rd, &base, "Log's base"))
        return 1;
    static const mc_unary_op ops[] = {MC_U_LOG2, MC_U_LOG10, MC_U_LOG}; /* MLX's Base: two, ten, e */
    if (base < 0 || base > 2)
        return mc_rd_fail(c->rd, "Bad file: Log has unknown base %d", (int)base);
    return unary_node(c, ops[base]);
}

static int imp_sqrt(mc_mlxfn_imp *c)
{
    bool recip;
    if (mc_rd_bool(c->rd, &recip, "Sqrt's state"))
        return 1;
    return unary_node(c, recip ? MC_U_RSQRT : MC_U_SQRT);
}

static int imp_equal(mc_mlxfn_imp *c)
{
    bool nan;
    if (mc_rd_bool(c->rd, &nan, "Equal's state"))
        return 1;
    return binary_node(c, nan ? MC_B_EQUAL_NAN : MC_B_EQUAL);
}

static int imp_bitwise(mc_mlxfn_imp *c)
{
    int32_t op;
    if (mc_rd_i32(c->rd, &op, "BitwiseBinary's op"))
        return 1;
    static const mc_binary_op ops[] = {MC_B_BITWISE_AND, MC_B_BITWISE_OR, MC_B_BITWISE_XOR, MC_B_LEFT_SHIFT,
                                       MC_B_RIGHT_SHIFT};
    if (op < 0 || op > 4)
        return mc_rd_fail(c->rd, "Bad file: BitwiseBinary has unknown op %d", (int)op);
    return binary_node(c, ops[op]);
}

static int imp_select(mc_mlxfn_imp *c) { return need_in(c, 3, 3) || node(c, MC_PRIM_WHERE, NULL, 0); }

static int imp_stop_gradient(mc_mlxfn_imp *c)
{
    return need_in(c, 1, 1) || node(c, MC_PRIM_STOP_GRADIENT, NULL, 0);
}

/* ---- dtypes and copies ---- */

static int imp_astype(mc_mlxfn_imp *c)
{
    mc_astype_params p;
    memset(&p, 0, sizeof p);
    if (mc_rd_dtype(c->rd, &p.to, "AsType's dtype") || need_in(c, 1, 1))
        return 1;
    return node(c, MC_PRIM_ASTYPE, &p, sizeof p);
}

/* Copy, and Full (whose input MLX has already broadcast to the output). */
static int imp_copy(mc_mlxfn_imp *c)
{
    if (need_in(c, 1, 1))
        return 1;
    mc_astype_params p;
    memset(&p, 0, sizeof p);
    p.to = c->in[0]->dtype;
    return node(c, MC_PRIM_COPY, &p, sizeof p);
}

static int imp_view(mc_mlxfn_imp *c)
{
    mc_view_params p;
    memset(&p, 0, sizeof p);
    if (mc_rd_dtype(c->rd, &p.to, "View's dtype") || need_in(c, 1, 1))
        return 1;
    return node(c, MC_PRIM_VIEW, &p, sizeof p);
}

/* ---- shape views ---- */

static int dims_node(mc_mlxfn_imp *c, int prim, int ndim, const int *dims)
{
    mc_dims_params p;
    memset(&p, 0, sizeof p);
    p.ndim = ndim;
    memcpy(p.dims, dims, sizeof(int) * (size_t)ndim);
    return node(c, prim, &p, mc_dims_params_size(ndim));
}

static int imp_reshape(mc_mlxfn_imp *c)
{
    int n, s[MC_MAX_NDIM];
    if (mc_rd_shape(c->rd, &n, s, "Reshape's shape") || need_in(c, 1, 1))
        return 1;
    return dims_node(c, MC_PRIM_RESHAPE, n, s);
}

/* A Broadcast with more inputs than the one it broadcasts comes from
 * MLX's shapeless (dynamic) tracing: its shape is the broadcast of all its
 * inputs' shapes, whatever they are when the function is called. Here:
 * where(true, a, b...) with each b in a's dtype, whose output has that
 * shape and a's values. */
static int imp_broadcast(mc_mlxfn_imp *c)
{
    int n, s[MC_MAX_NDIM];
    if (mc_rd_shape(c->rd, &n, s, "Broadcast's shape") || need_in(c, 1, 1 << 10))
        return 1;
    if (c->n_in == 1)
        return dims_node(c, MC_PRIM_BROADCAST, n, s);
    if (one_out(c))
        return 1;
    const char *fn = c->rd->fn;
    bool t = true;
    mc_array *yes = mc_array_scalar(fn, MLX_BOOL, &t);
    mc_array *r = yes ? mc_array_retain(c->in[0]) : NULL;
    for (int j = 1; r && j < c->n_in; j++) {
        mc_astype_params p = {r->dtype};
        mc_array *b = c->in[j]->dtype == r->dtype ? mc_array_retain(c->in[j])
                                                  : mc_node_new(fn, MC_PRIM_ASTYPE, &c->in[j], 1, &p, sizeof p);
        mc_array *args[3] = {yes, r, b};
        mc_array *next = b ? mc_node_new(fn, MC_PRIM_WHERE, args, 3, NULL, 0) : NULL;
        mc_array_release(b);
        mc_array_release(r);
        r = next;
    }
    mc_array_release(yes);
    c->res[0] = r;
    if (!r)
        c->rd->failed = true;
    return r ? 0 : 1;
}

static int imp_transpose(mc_mlxfn_imp *c)
{
    int n, s[MC_MAX_NDIM];
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &n, s, "Transpose's axes") || need_in(c, 1, 1))
        return 1;
    if (n != c->in[0]->ndim)
        return mc_rd_fail(c->rd, "Bad file: Transpose has %d axes for %d dimensions", n, c->in[0]->ndim);
    if (axes_ok(c, n, s, n, false))
        return 1;
    return dims_node(c, MC_PRIM_TRANSPOSE, n, s);
}

static int axes_prim(mc_mlxfn_imp *c, int prim, bool expand)
{
    mc_axes_params p;
    memset(&p, 0, sizeof p);
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &p.n, p.axes, "the axes") || need_in(c, 1, 1))
        return 1;
    int ndim = c->in[0]->ndim + (expand ? p.n : 0);
    if (ndim > MC_MAX_NDIM)
        return mc_rd_fail(c->rd, "Bad file: %s makes more than %d dimensions", c->name, MC_MAX_NDIM);
    if (axes_ok(c, p.n, p.axes, ndim, true))
        return 1;
    return node(c, prim, &p, sizeof p);
}

static int imp_expand_dims(mc_mlxfn_imp *c) { return axes_prim(c, MC_PRIM_EXPAND_DIMS, true); }
static int imp_squeeze(mc_mlxfn_imp *c) { return axes_prim(c, MC_PRIM_SQUEEZE, false); }

static int imp_flatten(mc_mlxfn_imp *c)
{
    int32_t s, e;
    if (mc_rd_i32(c->rd, &s, "Flatten's start") || mc_rd_i32(c->rd, &e, "Flatten's end") || need_in(c, 1, 1))
        return 1;
    int nd = c->in[0]->ndim;
    if (nd == 0 || s < 0 || e < s || e >= nd)
        return mc_rd_fail(c->rd, "Bad file: Flatten of axes %d to %d for %d dimensions", (int)s, (int)e, nd);
    mc_flatten_params p = {s, e};
    return node(c, MC_PRIM_FLATTEN, &p, sizeof p);
}

static int imp_unflatten(mc_mlxfn_imp *c)
{
    mc_unflatten_params p;
    memset(&p, 0, sizeof p);
    int32_t axis;
    if (mc_rd_i32(c->rd, &axis, "Unflatten's axis") || mc_rd_shape(c->rd, &p.n, p.shape, "Unflatten's shape") ||
        need_in(c, 1, 1))
        return 1;
    p.axis = axis;
    if (c->in[0]->ndim + p.n - 1 > MC_MAX_NDIM || axis_ok(c, &p.axis, c->in[0]->ndim))
        return mc_rd_fail(c->rd, "Bad file: Unflatten's axis or shape does not fit the input");
    return node(c, MC_PRIM_UNFLATTEN, &p, sizeof p);
}

/* ---- slices ---- */

/* MLX's Slice state is already normalised: start and end in range, end
 * one before the first element (-1) for a negative stride that reaches
 * index 0. Ours follows NumPy, where -1 would mean the last element, so
 * such an end becomes one that NumPy clamps to before the start. */
static int read_slice(mc_mlxfn_imp *c, mc_slice_params *p, const mc_array *src)
{
    int n1, n2, n3;
    memset(p, 0, sizeof *p);
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &n1, p->start, "the slice starts") ||
        mc_rd_ints(c->rd, MC_MAX_NDIM, &n2, p->stop, "the slice ends") ||
        mc_rd_ints(c->rd, MC_MAX_NDIM, &n3, p->strides, "the slice strides"))
        return 1;
    if (n1 != src->ndim || n2 != n1 || n3 != n1)
        return mc_rd_fail(c->rd, "Bad file: %s has %d, %d and %d bounds for %d dimensions", c->name, n1, n2, n3,
                          src->ndim);
    p->ndim = n1;
    for (int i = 0; i < n1; i++) {
        if (p->strides[i] == 0)
            return mc_rd_fail(c->rd, "Bad file: %s has a zero stride", c->name);
        if (p->strides[i] < 0 && p->stop[i] < 0)
            p->stop[i] = -src->shape[i] - 1;
    }
    return 0;
}

static int imp_slice(mc_mlxfn_imp *c)
{
    mc_slice_params p;
    if (need_in(c, 1, 1) || read_slice(c, &p, c->in[0]))
        return 1;
    return node(c, MC_PRIM_SLICE, &p, sizeof p);
}

static int imp_slice_update(mc_mlxfn_imp *c)
{
    mc_slice_params p;
    if (need_in(c, 2, 2) || read_slice(c, &p, c->in[0]))
        return 1;
    return node(c, MC_PRIM_SLICE_UPDATE, &p, sizeof p);
}

/* MLX's Split: one output per piece of the axis cut at indices; here one
 * Slice each. */
static int imp_split(mc_mlxfn_imp *c)
{
    int n, idx[MC_MAX_NDIM];
    int32_t axis;
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &n, idx, "Split's indices") || mc_rd_i32(c->rd, &axis, "Split's axis") ||
        need_in(c, 1, 1) || mc_mlxfn_imp_outputs(c))
        return 1;
    const mc_array *a = c->in[0];
    int ax = axis;
    if (axis_ok(c, &ax, a->ndim))
        return 1;
    if (c->n_out != n + 1)
        return mc_rd_fail(c->rd, "Bad file: Split at %d indices declares %d outputs", n, c->n_out);
    for (int i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] > a->shape[ax] || (i && idx[i] < idx[i - 1]))
            return mc_rd_fail(c->rd, "Bad file: Split's indices are not increasing within the axis");
    for (int k = 0; k <= n; k++) {
        mc_slice_params p;
        memset(&p, 0, sizeof p);
        p.ndim = a->ndim;
        for (int d = 0; d < a->ndim; d++) {
            p.stop[d] = a->shape[d];
            p.strides[d] = 1;
        }
        p.start[ax] = k ? idx[k - 1] : 0;
        p.stop[ax] = k < n ? idx[k] : a->shape[ax];
        c->res[k] = mc_node_new(c->rd->fn, MC_PRIM_SLICE, c->in, 1, &p, sizeof p);
        if (!c->res[k]) {
            c->rd->failed = true;
            return 1;
        }
    }
    return 0;
}

static int imp_as_strided(mc_mlxfn_imp *c)
{
    mc_as_strided_params p;
    memset(&p, 0, sizeof p);
    size_t ns;
    uint64_t off;
    if (mc_rd_shape(c->rd, &p.ndim, p.shape, "AsStrided's shape") ||
        mc_rd_count(c->rd, MC_MAX_NDIM, 8, &ns, "AsStrided's strides"))
        return 1;
    if (ns != (size_t)p.ndim)
        return mc_rd_fail(c->rd, "Bad file: AsStrided has %d dims but %zu strides", p.ndim, ns);
    for (size_t i = 0; i < ns; i++) {
        uint64_t v;
        if (mc_rd_u64(c->rd, &v, "a stride"))
            return 1;
        p.strides[i] = (int64_t)v;
    }
    if (mc_rd_u64(c->rd, &off, "AsStrided's offset") || need_in(c, 1, 1))
        return 1;
    if (off > (uint64_t)INT64_MAX)
        return mc_rd_fail(c->rd, "Bad file: AsStrided's offset is too large");
    p.offset = (int64_t)off;
    return node(c, MC_PRIM_AS_STRIDED, &p, sizeof p);
}

/* ---- joins and indexing ---- */

static int imp_concatenate(mc_mlxfn_imp *c)
{
    int32_t axis;
    if (mc_rd_i32(c->rd, &axis, "Concatenate's axis") || need_in(c, 1, 1 << 20))
        return 1;
    mc_concat_params p = {axis};
    if (axis_ok(c, &p.axis, c->in[0]->ndim))
        return 1;
    return node(c, MC_PRIM_CONCATENATE, &p, sizeof p);
}

static int imp_pad(mc_mlxfn_imp *c)
{
    mc_pad_params p;
    memset(&p, 0, sizeof p);
    int n2, n3;
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &p.n, p.axes, "Pad's axes") ||
        mc_rd_ints(c->rd, MC_MAX_NDIM, &n2, p.low, "Pad's low sizes") ||
        mc_rd_ints(c->rd, MC_MAX_NDIM, &n3, p.high, "Pad's high sizes") || need_in(c, 2, 2))
        return 1;
    if (n2 != p.n || n3 != p.n)
        return mc_rd_fail(c->rd, "Bad file: Pad has %d axes, %d low and %d high sizes", p.n, n2, n3);
    if (axes_ok(c, p.n, p.axes, c->in[0]->ndim, false))
        return 1;
    for (int i = 0; i < p.n; i++)
        if (p.low[i] < 0 || p.high[i] < 0)
            return mc_rd_fail(c->rd, "Bad file: Pad has a negative size");
    return node(c, MC_PRIM_PAD, &p, sizeof p);
}

static int imp_gather_axis(mc_mlxfn_imp *c)
{
    int32_t axis;
    if (mc_rd_i32(c->rd, &axis, "GatherAxis's axis") || need_in(c, 2, 2))
        return 1;
    mc_gather_axis_params p = {.axis = axis, .along = 1};
    if (axis_ok(c, &p.axis, c->in[0]->ndim))
        return 1;
    return node(c, MC_PRIM_GATHER_AXIS, &p, sizeof p);
}

static int imp_gather(mc_mlxfn_imp *c)
{
    mc_gather_params p;
    memset(&p, 0, sizeof p);
    int ns;
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &p.nidx, p.axes, "Gather's axes") ||
        mc_rd_shape(c->rd, &ns, p.slice_sizes, "Gather's slice sizes") || need_in(c, 1, MC_MAX_NDIM + 1))
        return 1;
    if (c->n_in != p.nidx + 1 || ns != c->in[0]->ndim)
        return mc_rd_fail(c->rd,
                          "Bad file: Gather has %d index inputs for %d axes and %d slice sizes for %d "
                          "dimensions",
                          c->n_in - 1, p.nidx, ns, c->in[0]->ndim);
    if (axes_ok(c, p.nidx, p.axes, c->in[0]->ndim, false))
        return 1;
    for (int i = 0; i < ns; i++)
        if (p.slice_sizes[i] > c->in[0]->shape[i])
            return mc_rd_fail(c->rd, "Bad file: Gather's slice size %d is larger than its axis", p.slice_sizes[i]);
    return node(c, MC_PRIM_GATHER, &p, sizeof p);
}

static int imp_scatter(mc_mlxfn_imp *c)
{
    int32_t type;
    mc_scatter_params p;
    memset(&p, 0, sizeof p);
    if (mc_rd_i32(c->rd, &type, "Scatter's type") ||
        mc_rd_ints(c->rd, MC_MAX_NDIM, &p.nidx, p.axes, "Scatter's axes") || need_in(c, 2, MC_MAX_NDIM + 2))
        return 1;
    /* MLX's Scatter::ReduceType: Max, Min, Sum, Prod, None */
    static const int red[] = {MC_SCATTER_MAX, MC_SCATTER_MIN, MC_SCATTER_SUM, MC_SCATTER_PROD, MC_SCATTER_NONE};
    if (type < 0 || type > 4)
        return mc_rd_fail(c->rd, "Bad file: Scatter has unknown type %d", (int)type);
    p.reduce = red[type];
    if (c->n_in != p.nidx + 2 || axes_ok(c, p.nidx, p.axes, c->in[0]->ndim, false))
        return c->rd->failed ? 1
                             : mc_rd_fail(c->rd, "Bad file: Scatter has %d inputs for %d axes", c->n_in, p.nidx);
    return node(c, MC_PRIM_SCATTER, &p, sizeof p);
}

static int imp_scatter_axis(mc_mlxfn_imp *c)
{
    int32_t type, axis;
    if (mc_rd_i32(c->rd, &type, "ScatterAxis's type") || mc_rd_i32(c->rd, &axis, "ScatterAxis's axis") ||
        need_in(c, 3, 3))
        return 1;
    if (type < 0 || type > 1) /* MLX's ScatterAxis::ReduceType: Sum, None */
        return mc_rd_fail(c->rd, "Bad file: ScatterAxis has unknown type %d", (int)type);
    mc_scatter_axis_params p = {.axis = axis, .reduce = type == 0 ? MC_SCATTER_SUM : MC_SCATTER_NONE};
    if (axis_ok(c, &p.axis, c->in[0]->ndim))
        return 1;
    return node(c, MC_PRIM_SCATTER_AXIS, &p, sizeof p);
}

/* ---- Fourier transforms ---- */

static int imp_fft(mc_mlxfn_imp *c)
{
    mc_fft_params p;
    memset(&p, 0, sizeof p);
    size_t n;
    bool inverse, real;
    if (mc_rd_count(c->rd, MC_MAX_NDIM, 8, &n, "FFT's axes"))
        return 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t a;
        if (mc_rd_u64(c->rd, &a, "an FFT axis"))
            return 1;
        p.axes[i] = a > MC_MAX_NDIM ? MC_MAX_NDIM : (int)a;
    }
    p.naxes = (int)n;
    if (mc_rd_bool(c->rd, &inverse, "FFT's inverse") || mc_rd_bool(c->rd, &real, "FFT's real") ||
        need_in(c, 1, 1) || one_out(c))
        return 1;
    p.inverse = inverse;
    p.real = real;
    if (n < 1 || axes_ok(c, p.naxes, p.axes, c->in[0]->ndim, false))
        return c->rd->failed ? 1 : mc_rd_fail(c->rd, "Bad file: FFT over no axis");
    /* a real inverse transform's length is its declared output's */
    p.n_last = c->out[0].ndim == c->in[0]->ndim ? c->out[0].shape[p.axes[n - 1]] : 0;
    c->res[0] = mc_node_new(c->rd->fn, MC_PRIM_FFT, c->in, 1, &p, sizeof p);
    return c->res[0] ? 0 : (c->rd->failed = true, 1);
}

/* ---- reductions, scans, sorts ---- */

static int imp_reduce(mc_mlxfn_imp *c)
{
    int32_t type;
    mc_reduce_params p;
    memset(&p, 0, sizeof p);
    if (mc_rd_i32(c->rd, &type, "Reduce's type") ||
        mc_rd_ints(c->rd, MC_MAX_NDIM, &p.n, p.axes, "Reduce's axes") || need_in(c, 1, 1))
        return 1;
    /* MLX's Reduce::ReduceType: And, Or, Sum, Prod, Min, Max */
    static const int kinds[] = {MC_RK_ALL, MC_RK_ANY, MC_RK_SUM, MC_RK_PROD, MC_RK_MIN, MC_RK_MAX};
    if (type < 0 || type > 5)
        return mc_rd_fail(c->rd, "Bad file: Reduce has unknown type %d", (int)type);
    p.kind = kinds[type];
    if (axes_ok(c, p.n, p.axes, c->in[0]->ndim, true))
        return 1;
    return node(c, MC_PRIM_REDUCE, &p, sizeof p);
}

static int imp_argreduce(mc_mlxfn_imp *c)
{
    int32_t type, axis;
    if (mc_rd_i32(c->rd, &type, "ArgReduce's type") || mc_rd_i32(c->rd, &axis, "ArgReduce's axis") ||
        need_in(c, 1, 1))
        return 1;
    if (type < 0 || type > 1)
        return mc_rd_fail(c->rd, "Bad file: ArgReduce has unknown type %d", (int)type);
    mc_argreduce_params p = {.op = type == 0 ? 1 : 0, .axis = axis}; /* MLX: ArgMin, ArgMax */
    if (axis_ok(c, &p.axis, c->in[0]->ndim))
        return 1;
    return node(c, MC_PRIM_ARGREDUCE, &p, sizeof p);
}

/* MLX's Softmax and LogSumExp work on the last axis. */
static int last_axis_node(mc_mlxfn_imp *c, int prim, bool precise)
{
    if (need_in(c, 1, 1))
        return 1;
    if (c->in[0]->ndim == 0)
        return mc_rd_fail(c->rd, "Bad file: %s of a 0-d array", c->name);
    mc_softmax_params p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    p.axes[0] = c->in[0]->ndim - 1;
    p.precise = precise;
    return node(c, prim, &p, sizeof p);
}

static int imp_softmax(mc_mlxfn_imp *c)
{
    bool precise;
    return mc_rd_bool(c->rd, &precise, "Softmax's state") || last_axis_node(c, MC_PRIM_SOFTMAX, precise);
}

static int imp_logsumexp(mc_mlxfn_imp *c) { return last_axis_node(c, MC_PRIM_LOGSUMEXP, false); }

static int imp_scan(mc_mlxfn_imp *c)
{
    int32_t type, axis;
    bool reverse, inclusive;
    if (mc_rd_i32(c->rd, &type, "Scan's type") || mc_rd_i32(c->rd, &axis, "Scan's axis") ||
        mc_rd_bool(c->rd, &reverse, "Scan's reverse") || mc_rd_bool(c->rd, &inclusive, "Scan's inclusive") ||
        need_in(c, 1, 1))
        return 1;
    /* MLX's Scan::ReduceType: Max, Min, Sum, Prod, LogAddExp */
    static const int ops[] = {MC_S_MAX, MC_S_MIN, MC_S_SUM, MC_S_PROD, MC_S_LOGADDEXP};
    if (type < 0 || type > 4)
        return mc_rd_fail(c->rd, "Bad file: Scan has unknown type %d", (int)type);
    mc_scan_params p = {.op = ops[type], .axis = axis, .reverse = reverse, .inclusive = inclusive};
    if (axis_ok(c, &p.axis, c->in[0]->ndim))
        return 1;
    return node(c, MC_PRIM_SCAN, &p, sizeof p);
}

static int sort_node(mc_mlxfn_imp *c, int prim, bool partition)
{
    int32_t kth = 0, axis;
    if ((partition && mc_rd_i32(c->rd, &kth, "the partition's kth")) || mc_rd_i32(c->rd, &axis, "the sort axis") ||
        need_in(c, 1, 1))
        return 1;
    mc_sort_params p = {.axis = axis, .kth = kth};
    if (axis_ok(c, &p.axis, c->in[0]->ndim))
        return 1;
    if (partition) {
        int len = c->in[0]->shape[p.axis];
        if (p.kth < 0)
            p.kth += len;
        if (p.kth < 0 || p.kth >= len)
            return mc_rd_fail(c->rd, "Bad file: kth %d is outside an axis of %d", (int)kth, len);
    }
    return node(c, prim, &p, sizeof p);
}

static int imp_sort(mc_mlxfn_imp *c) { return sort_node(c, MC_PRIM_SORT, false); }
static int imp_argsort(mc_mlxfn_imp *c) { return sort_node(c, MC_PRIM_ARGSORT, false); }
static int imp_partition(mc_mlxfn_imp *c) { return sort_node(c, MC_PRIM_PARTITION, true); }
static int imp_argpartition(mc_mlxfn_imp *c) { return sort_node(c, MC_PRIM_ARGPARTITION, true); }

/* ---- creation ---- */

static int imp_arange(mc_mlxfn_imp *c)
{
    double start, stop, step;
    if (mc_rd_f64(c->rd, &start, "Arange's start") || mc_rd_f64(c->rd, &stop, "Arange's stop") ||
        mc_rd_f64(c->rd, &step, "Arange's step") || need_in(c, 0, 0) || one_out(c))
        return 1;
    const mc_meta *m = &c->out[0];
    if (m->ndim != 1 || m->dtype == MLX_BOOL || m->dtype == MLX_COMPLEX64)
        return mc_rd_fail(c->rd, "Bad file: Arange declares a %d-d %s output", m->ndim, mc_dtype_name(m->dtype));
    (void)stop; /* the length is the declared shape's */
    mc_arange_params p;
    memset(&p, 0, sizeof p);
    p.start = start;
    p.step = step;
    p.dtype = m->dtype;
    p.count = m->shape[0];
    c->res[0] = mc_node_new(c->rd->fn, MC_PRIM_ARANGE, NULL, 0, &p, sizeof p);
    return c->res[0] ? 0 : (c->rd->failed = true, 1);
}

static int imp_number_of_elements(mc_mlxfn_imp *c)
{
    mc_numel_params p;
    memset(&p, 0, sizeof p);
    bool inverted;
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &p.n, p.axes, "NumberOfElements's axes") ||
        mc_rd_bool(c->rd, &inverted, "NumberOfElements's inverted") ||
        mc_rd_dtype(c->rd, &p.dtype, "NumberOfElements's dtype") || need_in(c, 1, 1))
        return 1;
    p.inverted = inverted;
    if (axes_ok(c, p.n, p.axes, c->in[0]->ndim, false))
        return 1;
    return node(c, MC_PRIM_NUMBER_OF_ELEMENTS, &p, sizeof p);
}

/* ---- linear algebra, convolution, quantized matmul ---- */

static int imp_matmul(mc_mlxfn_imp *c) { return need_in(c, 2, 2) || node(c, MC_PRIM_MATMUL, NULL, 0); }

static int imp_addmm(mc_mlxfn_imp *c)
{
    mc_addmm_params p;
    if (mc_rd_f32(c->rd, &p.alpha, "AddMM's alpha") || mc_rd_f32(c->rd, &p.beta, "AddMM's beta") ||
        need_in(c, 3, 3))
        return 1;
    /* MLX's inputs are a, b, c */
    return node(c, MC_PRIM_ADDMM, &p, sizeof p);
}

static int imp_convolution(mc_mlxfn_imp *c)
{
    mc_conv_params p;
    memset(&p, 0, sizeof p);
    int n[5];
    int *dst[5] = {p.stride, p.pad_lo, p.pad_hi, p.kdil, p.idil};
    for (int i = 0; i < 5; i++)
        if (mc_rd_ints(c->rd, MC_CONV_MAX_SPATIAL, &n[i], dst[i], "Convolution's parameters"))
            return 1;
    int32_t groups;
    bool flip;
    if (mc_rd_i32(c->rd, &groups, "Convolution's groups") || mc_rd_bool(c->rd, &flip, "Convolution's flip") ||
        need_in(c, 2, 2))
        return 1;
    for (int i = 1; i < 5; i++)
        if (n[i] != n[0])
            return mc_rd_fail(c->rd, "Bad file: Convolution's parameters have different lengths");
    if (n[0] < 1 || c->in[0]->ndim != n[0] + 2 || c->in[1]->ndim != n[0] + 2)
        return mc_rd_fail(c->rd, "Bad file: Convolution over %d spatial dims of %d-d inputs", n[0],
                          c->in[0]->ndim);
    for (int i = 0; i < n[0]; i++)
        if (p.pad_lo[i] < 0 || p.pad_hi[i] < 0)
            return mc_rd_fail(c->rd, "Bad file: Convolution has a negative padding");
    p.nsp = n[0];
    p.groups = groups;
    p.flip = flip;
    return node(c, MC_PRIM_CONVOLUTION, &p, sizeof p);
}

static int imp_quantized_matmul(mc_mlxfn_imp *c)
{
    int32_t gs, bits, mode;
    bool transpose;
    if (mc_rd_i32(c->rd, &gs, "the group size") || mc_rd_i32(c->rd, &bits, "the bits") ||
        mc_rd_i32(c->rd, &mode, "the quantization mode") || mc_rd_bool(c->rd, &transpose, "transpose"))
        return 1;
    /* MLX's QuantizationMode order (affine, mxfp4, mxfp8, nvfp4) is ours;
     * the fp modes have no biases (a global scale is not read here) */
    if (mode < MC_QMODE_AFFINE || mode > MC_QMODE_NVFP4)
        return mc_rd_fail(c->rd, "QuantizedMatmul in unknown mode %d", (int)mode);
    int n_in = mode == MC_QMODE_AFFINE ? 4 : 3;
    if (need_in(c, n_in, n_in) || one_out(c) ||
        mc_mlxfn_qmm_check(c, c->in[0], c->in[1], c->in[2], n_in == 4 ? c->in[3] : NULL, gs, bits, mode, transpose,
                           false))
        return 1;
    c->res[0] = mc_node_quantized_matmul(c->in[0], c->in[1], c->in[2], n_in == 4 ? c->in[3] : NULL, gs, bits,
                                         (mc_qmode)mode, transpose, c->rd->fn);
    return c->res[0] ? 0 : (c->rd->failed = true, 1);
}

/* ---- fast.h ---- */

static int imp_rms_norm(mc_mlxfn_imp *c)
{
    mc_norm_params p;
    return mc_rd_f32(c->rd, &p.eps, "RMSNorm's eps") || need_in(c, 2, 2) ||
           node(c, MC_PRIM_RMS_NORM, &p, sizeof p);
}

static int imp_layer_norm(mc_mlxfn_imp *c)
{
    mc_norm_params p;
    return mc_rd_f32(c->rd, &p.eps, "LayerNorm's eps") || need_in(c, 3, 3) ||
           node(c, MC_PRIM_LAYER_NORM, &p, sizeof p);
}

static int imp_rope(mc_mlxfn_imp *c)
{
    int32_t dims;
    bool trad, fwd;
    float base, scale;
    if (mc_rd_i32(c->rd, &dims, "RoPE's dims") || mc_rd_bool(c->rd, &trad, "RoPE's traditional") ||
        mc_rd_f32(c->rd, &base, "RoPE's base") || mc_rd_f32(c->rd, &scale, "RoPE's scale") ||
        mc_rd_bool(c->rd, &fwd, "RoPE's forward") || need_in(c, 2, 3))
        return 1;
    mc_rope_params p = {.dims = dims,
                        .traditional = trad,
                        .forward = fwd,
                        .has_freqs = c->n_in == 3,
                        .base = base,
                        .scale = scale};
    return node(c, MC_PRIM_ROPE, &p, sizeof p);
}

static int imp_sdpa(mc_mlxfn_imp *c)
{
    float scale;
    bool causal, sinks, lse;
    if (mc_rd_f32(c->rd, &scale, "the attention scale") || mc_rd_bool(c->rd, &causal, "do_causal") ||
        mc_rd_bool(c->rd, &sinks, "has_sinks") || mc_rd_bool(c->rd, &lse, "output_logsumexp") ||
        need_in(c, 3 + sinks, 4 + sinks))
        return 1;
    if (lse)
        return mc_rd_fail(c->rd, "ScaledDotProductAttention with its logsumexp output: mlx-cpu imports the "
                                 "attention output only");
    mc_sdpa_params p = {.scale = scale, .causal = causal, .has_mask = c->n_in - 3 - sinks, .has_sinks = sinks};
    return node(c, MC_PRIM_SDPA, &p, sizeof p);
}

/* ---- products by index and mask, Hadamard, random bits ---- */

/* MLX's inputs: a, b and both indices, already uint32 of one shape. */
static int imp_gather_mm(mc_mlxfn_imp *c)
{
    bool ls, rs;
    if (mc_rd_bool(c->rd, &ls, "GatherMM's left_sorted") || mc_rd_bool(c->rd, &rs, "GatherMM's right_sorted") ||
        need_in(c, 4, 4))
        return 1;
    mc_gather_mm_params p;
    memset(&p, 0, sizeof p);
    p.left_sorted = ls;
    p.right_sorted = rs;
    return node(c, MC_PRIM_GATHER_MM, &p, sizeof p);
}

/* MLX's inputs: a, b, then the out mask if any, then both operand masks if
 * any; MLX has broadcast them all to one batch shape. */
static int imp_block_masked_mm(mc_mlxfn_imp *c)
{
    int32_t bs;
    if (mc_rd_i32(c->rd, &bs, "BlockMaskedMM's block size"))
        return 1;
    if (bs != 32 && bs != 64)
        return mc_rd_fail(c->rd, "Bad file: BlockMaskedMM with block size %d (MLX's are 32 and 64)", (int)bs);
    if (need_in(c, 3, 5))
        return 1;
    mc_block_mm_params p = {bs};
    return node(c, MC_PRIM_BLOCK_MASKED_MM, &p, sizeof p);
}

/* MLX's Hadamard transforms the last axis of a floating array, of length
 * m * 2^k with m one of 1, 12, 20, 28; ours runs on float32. */
static int imp_hadamard(mc_mlxfn_imp *c)
{
    float scale;
    if (mc_rd_f32(c->rd, &scale, "Hadamard's scale") || need_in(c, 1, 1) || one_out(c))
        return 1;
    mc_array *x = c->in[0];
    int len = x->ndim ? x->shape[x->ndim - 1] : 1, m = 1;
    static const int odd[] = {12, 20, 28};
    for (int i = 0; i < 3 && (len & (len - 1)); i++)
        if (len % odd[i] == 0 && !((len / odd[i]) & (len / odd[i] - 1)))
            m = odd[i];
    int n = len / m;
    if (!mc_dtype_is_float(x->dtype) || x->dtype == MLX_FLOAT64 || len < 1 || (n & (n - 1)) || n > (1 << 26))
        return mc_rd_fail(c->rd, "Bad file: Hadamard of a %s array whose last axis has %d elements",
                          mc_dtype_name(x->dtype), len);
    mc_hadamard_params p = {scale, n, m};
    mc_array *in[1] = {mc_node_astype(x, MLX_FLOAT32, c->rd->fn)};
    mc_array *r = in[0] ? mc_node_new(c->rd->fn, MC_PRIM_HADAMARD, in, 1, &p, sizeof p) : NULL;
    mc_array_release(in[0]);
    if (r && x->dtype != MLX_FLOAT32) {
        mc_array *t = mc_node_astype(r, x->dtype, c->rd->fn);
        mc_array_release(r);
        r = t;
    }
    c->res[0] = r;
    return r ? 0 : (c->rd->failed = true, 1);
}

/* The key (uint32, shape (2)) and the shape decide the bits: the same as
 * MLX's for the same key. */
static int imp_random_bits(mc_mlxfn_imp *c)
{
    mc_random_bits_params p;
    memset(&p, 0, sizeof p);
    int32_t width;
    size_t size;
    if (mc_rd_shape(c->rd, &p.ndim, p.shape, "RandomBits' shape") ||
        mc_rd_i32(c->rd, &width, "RandomBits' width") || need_in(c, 1, 1))
        return 1;
    if (width != 1 && width != 2 && width != 4)
        return mc_rd_fail(c->rd, "Bad file: RandomBits of width %d (1, 2 or 4 bytes)", (int)width);
    if (!mc_shape_size(p.ndim, p.shape, &size) || size > ((size_t)1 << 40))
        return mc_rd_fail(c->rd, "Bad file: RandomBits of too many elements");
    p.width = width;
    return node(c, MC_PRIM_RANDOM_BITS, &p, sizeof p);
}

/* ---- the table ---- */

static const struct {
    const char *name;
    mc_mlxfn_import_fn fn;
} importers[] = {
    {"Abs", imp_unary},
    {"ArcCos", imp_unary},
    {"ArcCosh", imp_unary},
    {"ArcSin", imp_unary},
    {"ArcSinh", imp_unary},
    {"ArcTan", imp_unary},
    {"ArcTanh", imp_unary},
    {"Ceil", imp_unary},
    {"Conjugate", imp_unary},
    {"Cos", imp_unary},
    {"Cosh", imp_unary},
    {"Erf", imp_unary},
    {"ErfInv", imp_unary},
    {"Exp", imp_unary},
    {"Expm1", imp_unary},
    {"Floor", imp_unary},
    {"Imag", imp_unary},
    {"Log1p", imp_unary},
    {"LogicalNot", imp_unary},
    {"Negative", imp_unary},
    {"Real", imp_unary},
    {"Round", imp_unary},
    {"Sigmoid", imp_unary},
    {"Sign", imp_unary},
    {"Sin", imp_unary},
    {"Sinh", imp_unary},
    {"Square", imp_unary},
    {"Tan", imp_unary},
    {"Tanh", imp_unary},
    {"BitwiseInvert", imp_unary},
    {"Log", imp_log},
    {"Sqrt", imp_sqrt},
    {"Add", imp_binary},
    {"ArcTan2", imp_binary},
    {"Divide", imp_binary},
    {"Greater", imp_binary},
    {"GreaterEqual", imp_binary},
    {"Less", imp_binary},
    {"LessEqual", imp_binary},
    {"LogicalAnd", imp_binary},
    {"LogicalOr", imp_binary},
    {"LogAddExp", imp_binary},
    {"Maximum", imp_binary},
    {"Minimum", imp_binary},
    {"Multiply", imp_binary},
    {"NotEqual", imp_binary},
    {"Power", imp_binary},
    {"Remainder", imp_binary},
    {"Subtract", imp_binary},
    {"Equal", imp_equal},
    {"BitwiseBinary", imp_bitwise},
    {"Select", imp_select},
    {"StopGradient", imp_stop_gradient},
    {"AsType", imp_astype},
    {"Copy", imp_copy},
    {"Full", imp_copy},
    {"View", imp_view},
    {"Reshape", imp_reshape},
    {"Broadcast", imp_broadcast},
    {"Transpose", imp_transpose},
    {"ExpandDims", imp_expand_dims},
    {"Squeeze", imp_squeeze},
    {"Flatten", imp_flatten},
    {"Unflatten", imp_unflatten},
    {"Slice", imp_slice},
    {"SliceUpdate", imp_slice_update},
    {"Split", imp_split},
    {"AsStrided", imp_as_strided},
    {"Concatenate", imp_concatenate},
    {"Pad", imp_pad},
    {"GatherAxis", imp_gather_axis},
    {"Gather", imp_gather},
    {"Scatter", imp_scatter},
    {"ScatterAxis", imp_scatter_axis},
    {"FFT", imp_fft},
    {"Reduce", imp_reduce},
    {"ArgReduce", imp_argreduce},
    {"Softmax", imp_softmax},
    {"LogSumExp", imp_logsumexp},
    {"Scan", imp_scan},
    {"Sort", imp_sort},
    {"ArgSort", imp_argsort},
    {"Partition", imp_partition},
    {"ArgPartition", imp_argpartition},
    {"Arange", imp_arange},
    {"NumberOfElements", imp_number_of_elements},
    {"Matmul", imp_matmul},
    {"AddMM", imp_addmm},
    {"Convolution", imp_convolution},
    {"QuantizedMatmul", imp_quantized_matmul},
    {"RMSNorm", imp_rms_norm},
    {"LayerNorm", imp_layer_norm},
    {"RoPE", imp_rope},
    {"ScaledDotProductAttention", imp_sdpa},
    {"GatherMM", imp_gather_mm},
    {"BlockMaskedMM", imp_block_masked_mm},
    {"Hadamard", imp_hadamard},
    {"RandomBits", imp_random_bits},
    {"Inverse", mc_mlxfn_imp_inverse},
    {"Cholesky", mc_mlxfn_imp_cholesky},
    {"QRF", mc_mlxfn_imp_qrf},
    {"SVD", mc_mlxfn_imp_svd},
    {"Eig", mc_mlxfn_imp_eig},
    {"Eigh", mc_mlxfn_imp_eigh},
    {"DivMod", mc_mlxfn_imp_divmod},
    {"DynamicSlice", mc_mlxfn_imp_dynamic_slice},
    {"DynamicSliceUpdate", mc_mlxfn_imp_dynamic_slice_update},
    {"GatherQMM", mc_mlxfn_imp_gather_qmm},
    {"MaskedScatter", mc_mlxfn_imp_masked_scatter},
    {"BroadcastAxes", mc_mlxfn_imp_broadcast_axes},
    {"Depends", mc_mlxfn_imp_depends},
    {"Quantize", mc_mlxfn_imp_quantize},
};

mc_mlxfn_import_fn mc_mlxfn_importer(const char *name)
{
    for (size_t i = 0; i < sizeof importers / sizeof importers[0]; i++)
        if (!strcmp(name, importers[i].name))
            return importers[i].fn;
    return NULL;
}
