/* Owns the indexing and layout primitives that write new data:
 * Concatenate, SliceUpdate, Pad (constant), GatherAxis (take and
 * take_along_axis) and NumberOfElements. Copies between views go through
 * the dtype's identity conversion kernel and the strided walker of simd/;
 * the gather is a plain loop here, element by element. */
#include <limits.h>
#include <string.h>

#include "graph/index_read.h"
#include "graph/nd_walk.h"
#include "graph/elementwise.h"
#include "graph/build.h"
#include "graph/prims_index.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* Copies the values of the view `in` into dst, laid out with dst_strides
 * (elements) over in's shape; dst has in's dtype. */
static void copy_into(const mc_array *in, void *dst, const int64_t *dst_strides)
{
    if (in->size == 0)
        return;
    size_t isz = mc_dtype_size(in->dtype);
    mc_unary_kernel k = mc_kernels()->convert[in->dtype][in->dtype];
    if (in->ndim == 0) {
        k(in->data, dst, 1);
        return;
    }
    mc_unary_strided(k, isz, isz, in->data, in->strides, dst, dst_strides, in->ndim, in->shape);
}

/* Fills n elements of isz bytes at dst with *val, doubling the filled
 * prefix on each copy. */
static void fill_value(void *dst, size_t n, size_t isz, const void *val)
{
    if (n == 0)
        return;
    char *d = dst;
    memcpy(d, val, isz);
    size_t done = 1;
    while (done < n) {
        size_t m = done < n - done ? done : n - done;
        memcpy(d + done * isz, d, m * isz);
        done += m;
    }
}

static void copy_meta(mc_meta *out, const mc_array *x)
{
    out->dtype = x->dtype;
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
}

/* ---- Concatenate ---- */

static int concat_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_concat_params *p = params;
    if (n < 1)
        return mc_error("[%s] No arrays provided for concatenation.", fn);
    const mc_array *a = in[0];
    if (p->axis < 0 || p->axis >= a->ndim)
        return mc_error("[%s] Invalid axis %d for arrays with %d dimensions.", fn, p->axis, a->ndim);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        const mc_array *b = in[i];
        if (b->ndim != a->ndim)
            return mc_error("[%s] All the input arrays must have the same number of dimensions. However, got "
                            "arrays with dimensions %d and %d.", fn, a->ndim, b->ndim);
        if (b->dtype != a->dtype)
            return mc_error("[%s] All the input arrays must have the same dtype (%s and %s).", fn,
                            mc_dtype_name(a->dtype), mc_dtype_name(b->dtype));
        for (int d = 0; d < a->ndim; d++) {
            if (d != p->axis && b->shape[d] != a->shape[d]) {
                char s1[256], s2[256];
                return mc_error("[%s] All the input array dimensions must match exactly except for the "
                                "concatenation axis. However, the provided shapes are %s and %s, and the "
                                "concatenation axis is %d.", fn, mc_shape_str(s1, sizeof s1, a->ndim, a->shape),
                                mc_shape_str(s2, sizeof s2, b->ndim, b->shape), p->axis);
            }
        }
        total += b->shape[p->axis];
    }
    if (total > INT_MAX)
        return mc_error("[%s] The concatenated axis would have %lld elements, more than a dimension holds.", fn,
                        (long long)total);
    copy_meta(out, a);
    out->shape[p->axis] = (int)total;
    return 0;
}

static int concat_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    const mc_concat_params *p = params;
    if (mc_array_alloc_data(out, "concatenate"))
        return 1;
    size_t isz = mc_dtype_size(out->dtype);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        if (in[i]->size)
            copy_into(in[i], (char *)out->data + at * out->strides[p->axis] * (int64_t)isz, out->strides);
        at += in[i]->shape[p->axis];
    }
    return 0;
}

/* ---- SliceUpdate ---- */

static int slice_update_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_array *src = in[0], *upd = in[1];
    bool neg;
    int start[MC_MAX_NDIM], shape[MC_MAX_NDIM];
    if (mc_slice_normalize(src->ndim, src->shape, params, start, shape, &neg, fn))
        return 1;
    if (upd->dtype != src->dtype)
        return mc_error("[%s] The update has dtype %s, the source %s.", fn, mc_dtype_name(upd->dtype),
                        mc_dtype_name(src->dtype));
    if (upd->ndim != src->ndim || (src->ndim && memcmp(upd->shape, shape, sizeof(int) * (size_t)src->ndim))) {
        char s1[256], s2[256];
        return mc_error("[%s] The update of shape %s does not have the slice's shape %s.", fn,
                        mc_shape_str(s1, sizeof s1, upd->ndim, upd->shape),
                        mc_shape_str(s2, sizeof s2, src->ndim, shape));
    }
    copy_meta(out, src);
    return 0;
}

static int slice_update_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_slice_params *p = params;
    mc_array *src = in[0], *upd = in[1];
    bool neg;
    int start[MC_MAX_NDIM], shape[MC_MAX_NDIM];
    if (mc_slice_normalize(src->ndim, src->shape, p, start, shape, &neg, "slice_update"))
        return 1;
    /* the update may be a view of src's buffer: then src holds a second
     * reference to that buffer, is not donatable, and is copied first */
    mc_buffer *src_buf = src->buf;
    mc_array *cands[1] = {src};
    if (mc_out_alloc(out, cands, 1, "slice_update"))
        return 1;
    if (out->buf != src_buf)
        copy_into(src, out->data, out->strides);
    if (upd->size == 0)
        return 0;
    size_t isz = mc_dtype_size(out->dtype);
    int64_t off = 0;
    int64_t strides[MC_MAX_NDIM];
    for (int i = 0; i < out->ndim; i++) {
        off += (int64_t)start[i] * out->strides[i];
        strides[i] = out->strides[i] * p->strides[i];
    }
    copy_into(upd, (char *)out->data + off * (int64_t)isz, strides);
    return 0;
}

/* ---- Pad ---- */

static int pad_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_pad_params *p = params;
    const mc_array *a = in[0], *v = in[1];
    if (v->dtype != a->dtype || v->size != 1)
        return mc_error("[%s] The pad value must be one element of the array's dtype.", fn);
    copy_meta(out, a);
    for (int i = 0; i < p->n; i++) {
        int ax = p->axes[i];
        if (ax < 0 || ax >= a->ndim)
            return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, ax, a->ndim);
        int64_t len = (int64_t)out->shape[ax] + p->low[i] + p->high[i];
        if (len > INT_MAX)
            return mc_error("[%s] The padded axis %d would have %lld elements, more than a dimension holds.", fn,
                            ax, (long long)len);
        out->shape[ax] = (int)len;
    }
    return 0;
}

static int pad_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_pad_params *p = params;
    mc_array *a = in[0], *v = in[1];
    if (mc_array_alloc_data(out, "pad"))
        return 1;
    size_t isz = mc_dtype_size(out->dtype);
    fill_value(out->data, out->size, isz, v->data);
    int64_t off = 0;
    for (int i = 0; i < p->n; i++)
        off += (int64_t)p->low[i] * out->strides[p->axes[i]];
    if (a->size)
        copy_into(a, (char *)out->data + off * (int64_t)isz, out->strides);
    return 0;
}

/* ---- GatherAxis ---- */

static const char *gather_axis_name(const void *params)
{
    return ((const mc_gather_axis_params *)params)->along ? "GatherAxis" : "Gather";
}

static int gather_axis_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_gather_axis_params *p = params;
    const mc_array *a = in[0], *idx = in[1];
    if (!mc_dtype_is_integer(idx->dtype))
        return mc_error("[%s] Got indices with invalid dtype %s. Indices must be integral.", fn,
                        mc_dtype_name(idx->dtype));
    if (p->axis < 0 || p->axis >= a->ndim)
        return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, p->axis, a->ndim);
    out->dtype = a->dtype;
    if (!p->along) {
        int nd = a->ndim - 1 + idx->ndim;
        if (nd > MC_MAX_NDIM)
            return mc_error("[%s] The result would have %d dimensions; at most %d are supported.", fn, nd,
                            MC_MAX_NDIM);
        out->ndim = 0;
        for (int d = 0; d < p->axis; d++)
            out->shape[out->ndim++] = a->shape[d];
        for (int d = 0; d < idx->ndim; d++)
            out->shape[out->ndim++] = idx->shape[d];
        for (int d = p->axis + 1; d < a->ndim; d++)
            out->shape[out->ndim++] = a->shape[d];
    } else {
        if (idx->ndim != a->ndim)
            return mc_error("[%s] Indices of dimension %d does not match array of dimension %d.", fn, idx->ndim,
                            a->ndim);
        out->ndim = a->ndim;
        for (int d = 0; d < a->ndim; d++) {
            int as = a->shape[d], is = idx->shape[d];
            if (d != p->axis && as != is && as != 1 && is != 1) {
                char s1[256], s2[256];
                return mc_error("[%s] Indices of shape %s cannot be broadcast with the array of shape %s "
                                "outside axis %d.", fn, mc_shape_str(s1, sizeof s1, idx->ndim, idx->shape),
                                mc_shape_str(s2, sizeof s2, a->ndim, a->shape), p->axis);
            }
            out->shape[d] = d == p->axis ? is : (as == 1 ? is : as);
        }
    }
    size_t size;
    if (!mc_shape_size(out->ndim, out->shape, &size))
        return mc_error("[%s] The result has more elements than can be addressed.", fn);
    if (a->shape[p->axis] == 0 && size)
        return mc_error("[%s] Cannot do a non-empty take from an empty axis.", fn);
    return 0;
}

/* Copies one row of gathered elements of type T. */
#define GATHER_ROW(T)                                                                                   \
    for (int j = 0; j < len; j++) {                                                                     \
        int64_t v = mc_index_place(mc_index_read(ib, w.off[1] + j * si, idt), axis_len);                \
        ((T *)ob)[w.off[2] + j] = ((const T *)ab)[w.off[0] + j * sa + v * axis_stride];                 \
    }

static int gather_axis_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_gather_axis_params *p = params;
    mc_array *a = in[0], *idx = in[1];
    if (mc_array_alloc_data(out, "take"))
        return 1;
    if (out->size == 0)
        return 0;
    int ax = p->axis;
    int64_t axis_len = a->shape[ax], axis_stride = a->strides[ax];
    /* operands: 0 = a (without the indexed axis), 1 = indices, 2 = out */
    mc_walk w;
    mc_walk_init(&w, out->ndim, out->shape, 3);
    if (!p->along) {
        int k = 0;
        for (int d = 0; d < ax; d++, k++) {
            w.strides[0][k] = a->strides[d];
            w.strides[1][k] = 0;
        }
        for (int d = 0; d < idx->ndim; d++, k++) {
            w.strides[0][k] = 0;
            w.strides[1][k] = idx->strides[d];
        }
        for (int d = ax + 1; d < a->ndim; d++, k++) {
            w.strides[0][k] = a->strides[d];
            w.strides[1][k] = 0;
        }
    } else {
        for (int d = 0; d < out->ndim; d++) {
            w.strides[0][d] = d == ax || a->shape[d] == 1 ? 0 : a->strides[d];
            w.strides[1][d] = idx->shape[d] == 1 ? 0 : idx->strides[d];
        }
    }
    for (int d = 0; d < out->ndim; d++)
        w.strides[2][d] = out->strides[d];
    int last = w.ndim - 1;
    int64_t sa = w.strides[0][last], si = w.strides[1][last];
    int len = mc_walk_row_len(&w);
    size_t rows = mc_walk_rows(&w);
    const char *ab = a->data, *ib = idx->data;
    char *ob = out->data;
    mlx_dtype idt = idx->dtype;
    size_t isz = mc_dtype_size(a->dtype);
    for (size_t r = 0; r < rows; r++, mc_walk_next(&w)) {
        switch (isz) {
        case 1: GATHER_ROW(uint8_t) break;
        case 2: GATHER_ROW(uint16_t) break;
        case 4: GATHER_ROW(uint32_t) break;
        default: GATHER_ROW(uint64_t) break;
        }
    }
    return 0;
}

/* GatherAxis's derivatives (MLX's GatherAxis::vjp and jvp; MLX's take is
 * a Gather, whose rules agree). The indices get zeros as their cotangent
 * and no tangent. */

/* a's cotangent: the cotangent scatter-added into zeros where the gather
 * read, so an element read several times gets the sum of its parts. */
static mc_array *gather_axis_input_vjp(mc_gb *s, const mc_array *node, mc_array *cot)
{
    const mc_gather_axis_params *p = node->params;
    mc_array *a = node->inputs[0], *idx = node->inputs[1];
    int ax = p->axis, nd = a->ndim;
    int shape[MC_MAX_NDIM];
    memcpy(shape, cot->shape, sizeof(int) * (size_t)cot->ndim);
    mc_array *upd = cot, *at;
    if (!p->along) {
        /* take: the cotangent has the indices' dims in place of the axis;
         * folded into one, the indices become a column along it */
        if (idx->size > INT_MAX) {
            s->failed = true;
            mc_error("[%s] Cannot differentiate a take of more than %d indices.", s->fn, INT_MAX);
            return NULL;
        }
        int col[MC_MAX_NDIM];
        memcpy(shape, a->shape, sizeof(int) * (size_t)nd);
        shape[ax] = (int)idx->size;
        for (int d = 0; d < nd; d++)
            col[d] = d == ax ? shape[ax] : 1;
        upd = mc_gb_reshape(s, cot, nd, shape);
        at = mc_gb_broadcast(s, mc_gb_reshape(s, idx, nd, col), nd, shape);
    } else {
        /* take_along_axis: the indices broadcast against a outside the axis */
        at = mc_gb_broadcast_like(s, idx, cot);
    }
    shape[ax] = a->shape[ax];
    mc_array *g = mc_gb_scatter_axis(s, mc_gb_zeros(s, nd, shape, a->dtype), at, upd, ax, MC_SCATTER_SUM);
    /* and where a itself was broadcast, its parts summed */
    return mc_gb_sum_to_shape(s, g, nd, a->shape);
}

static int gather_axis_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                           const char *fn)
{
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g = argnums[k] == 0 ? gather_axis_input_vjp(&s, node, cot) : mc_gb_zeros_like(&s, node->inputs[1]);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* Linear in a: the same gather of a's tangent. */
static mc_array *gather_axis_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                                 const char *fn)
{
    if (nargs != 1 || argnums[0] != 0) {
        mc_error("[%s] Cannot calculate JVP with respect to indices.", fn);
        return NULL;
    }
    mc_array *in[2] = {tans[0], node->inputs[1]};
    return mc_node_like(node, in, 2, fn);
}

/* ---- NumberOfElements ---- */

static int numel_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_numel_params *p = params;
    for (int i = 0; i < p->n; i++)
        if (p->axes[i] < 0 || p->axes[i] >= in[0]->ndim)
            return mc_error("[%s] Can't get the shape for axis %d from an array with %d dimensions.", fn,
                            p->axes[i], in[0]->ndim);
    out->dtype = p->dtype;
    out->ndim = 0;
    return 0;
}

static int numel_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_numel_params *p = params;
    double v = 1;
    for (int i = 0; i < p->n; i++)
        v *= in[0]->shape[p->axes[i]];
    if (p->inverted)
        v = 1.0 / v;
    if (mc_array_alloc_data(out, "number_of_elements"))
        return 1;
    mc_kernels()->convert[MLX_FLOAT64][p->dtype](&v, out->data, 1);
    return 0;
}

/* ---- derivatives of Concatenate, SliceUpdate, Pad and NumberOfElements
 * (MLX's rules; GatherAxis's are with its evaluation above) ---- */

/* The rows [from, from + len) of a along axis, as a Slice node. */
static mc_array *slice_axis(mc_gb *s, mc_array *a, int axis, int from, int len)
{
    mc_slice_params p;
    memset(&p, 0, sizeof p);
    p.ndim = a->ndim;
    for (int d = 0; d < a->ndim; d++) {
        p.start[d] = d == axis ? from : 0;
        p.stop[d] = d == axis ? from + len : a->shape[d];
        p.strides[d] = 1;
    }
    return mc_gb_slice(s, a, &p);
}

/* Each input's part of the cotangent, cut along the axis. */
static int concat_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    int axis = ((const mc_concat_params *)node->params)->axis;
    int k = 0, from = 0;
    for (int i = 0; i < node->n_inputs && k < nargs; i++) {
        int len = node->inputs[i]->shape[axis];
        if (argnums[k] == i) {
            mc_gb s;
            mc_gb_begin(&s, fn);
            if (mc_vjp_store(vjps, k, &s, slice_axis(&s, cot, axis, from, len)))
                return 1;
            k++;
        }
        from += len;
    }
    return 0;
}

/* The concatenation of the tangents, zeros for inputs that have none. */
static mc_array *concat_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    int n = node->n_inputs;
    mc_array **in = mc_xcalloc((size_t)n, sizeof *in);
    if (!in) {
        mc_error_oom(fn, (size_t)n * sizeof *in);
        return NULL;
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    /* zeros are held one by one outside the scope's bound: many inputs
     * may lack a tangent */
    mc_array **zeros = mc_xcalloc((size_t)n, sizeof *zeros);
    mc_array *r = NULL;
    if (zeros) {
        int k = 0;
        bool ok = true;
        for (int i = 0; i < n && ok; i++) {
            if (k < nargs && argnums[k] == i) {
                in[i] = tans[k++];
            } else {
                mc_gb z;
                mc_gb_begin(&z, fn);
                zeros[i] = mc_gb_finish_ref(&z, mc_gb_zeros_like(&z, node->inputs[i]));
                in[i] = zeros[i];
                ok = zeros[i] != NULL;
            }
        }
        if (ok)
            r = mc_gb_like(&s, node, in, n);
        for (int i = n - 1; i >= 0; i--)
            mc_array_release(zeros[i]);
        mc_xfree(zeros);
    } else {
        mc_error_oom(fn, (size_t)n * sizeof *zeros);
    }
    mc_xfree(in);
    return mc_gb_finish_ref(&s, r);
}

/* The source's cotangent is the cotangent with zeros where the update
 * went; the update's is that slice of the cotangent. */
static int slice_update_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                            const char *fn)
{
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g = argnums[k] == 0
                          ? mc_gb_slice_update(&s, cot, mc_gb_zeros_like(&s, node->inputs[1]), node->params)
                          : mc_gb_slice(&s, cot, node->params);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* The same primitive over the tangents, zeros for an input without one
 * (SliceUpdate and Pad are linear in both inputs together). */
static mc_array *pairwise_linear_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                                     const char *fn)
{
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *in[2] = {NULL, NULL};
    for (int k = 0; k < nargs; k++)
        in[argnums[k]] = tans[k];
    for (int i = 0; i < 2; i++)
        if (!in[i])
            in[i] = mc_gb_zeros_like(&s, node->inputs[i]);
    return mc_gb_finish_ref(&s, mc_gb_like(&s, node, in, 2));
}

/* The array's cotangent is the cotangent's interior; the pad value's, the
 * sum of the rest (MLX differentiates the array only). */
static int pad_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_pad_params *p = node->params;
    mc_slice_params sl;
    memset(&sl, 0, sizeof sl);
    sl.ndim = cot->ndim;
    for (int d = 0; d < cot->ndim; d++) {
        sl.stop[d] = cot->shape[d];
        sl.strides[d] = 1;
    }
    for (int i = 0; i < p->n; i++) {
        sl.start[p->axes[i]] = p->low[i];
        sl.stop[p->axes[i]] -= p->high[i];
    }
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *inner = mc_gb_slice(&s, cot, &sl), *g;
        if (argnums[k] == 0) {
            g = inner;
        } else {
            int all[MC_MAX_NDIM];
            for (int d = 0; d < cot->ndim; d++)
                all[d] = d;
            mc_array *rest = mc_gb_op(&s, MC_B_SUBTRACT, mc_gb_sum(&s, cot, all, cot->ndim),
                                      mc_gb_sum(&s, inner, all, cot->ndim));
            g = mc_gb_reshape(&s, rest, node->inputs[1]->ndim, node->inputs[1]->shape);
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

/* ---- vmap ---- */

static int concat_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn)
{
    mc_concat_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.axis++;
    return mc_vmap_all_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

/* take of batched a at batched indices as one take_along_axis: a (B, A)
 * gets size-1 axes after its taken axis for the index's other axes, the
 * indices (B, I) size-1 axes for a's other axes, so the two broadcast to
 * (B, A[:axis], I, A[axis+1:]). A 0-d index counts as one of shape (1). */
static int take_both_batched(mc_array **out, mc_array *node, mc_array *const *in, const int *axes, int axis,
                             const char *fn)
{
    const mc_array *a0 = node->inputs[0], *i0 = node->inputs[1];
    int b = mc_vmap_size(in, axes, 2), k = i0->ndim ? i0->ndim : 1, nd = 1 + a0->ndim + k - 1;
    if (mc_vmap_check_ndim(nd - 1, fn))
        return 1;
    int ashape[MC_MAX_NDIM], ishape[MC_MAX_NDIM], oshape[MC_MAX_NDIM], na = 0, ni = 0;
    ashape[na++] = ishape[ni++] = b;
    for (int d = 0; d < a0->ndim; d++) {
        if (d != axis) {
            ashape[na++] = a0->shape[d];
            ishape[ni++] = 1;
            continue;
        }
        ashape[na++] = a0->shape[d];
        for (int e = 1; e < k; e++)
            ashape[na++] = 1;
        for (int e = 0; e < k; e++)
            ishape[ni++] = i0->ndim ? i0->shape[e] : 1;
    }
    oshape[0] = b;
    memcpy(oshape + 1, node->shape, sizeof(int) * (size_t)node->ndim);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *a = mc_gb_reshape(&s, mc_gb_vmap_front(&s, in[0], axes[0], b), nd, ashape);
    mc_array *idx = mc_gb_reshape(&s, mc_gb_vmap_front(&s, in[1], axes[1], b), nd, ishape);
    mc_array *r = mc_gb_gather_axis(&s, a, idx, axis + 1, 1);
    *out = mc_gb_finish_ref(&s, mc_gb_reshape(&s, r, node->ndim + 1, oshape));
    return *out ? 0 : 1;
}

/* take_along_axis, and take of batched arrays at unbatched indices, shift
 * the axis past the batch. take of an unbatched array at batched indices
 * is the same take (the batch is one more index axis, where the indices'
 * axes land); take with both batched reads through take_along_axis. */
static int gather_axis_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                            const char *fn)
{
    mc_gather_axis_params q;
    mc_vmap_params(&q, sizeof q, node);
    if (!q.along && axes[1] >= 0) {
        if (axes[0] >= 0) {
            *out_axis = 0;
            return take_both_batched(out, node, in, axes, q.axis, fn);
        }
        *out = mc_node_new(fn, node->prim, in, 2, &q, sizeof q);
        *out_axis = q.axis + axes[1];
        return *out ? 0 : 1;
    }
    q.axis++;
    if (q.along)
        return mc_vmap_all_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
    mc_array *a = mc_vmap_front(in[0], axes[0], 1, fn);
    if (!a)
        return 1;
    mc_array *args[2] = {a, in[1]};
    *out = mc_node_new(fn, node->prim, args, 2, &q, sizeof q);
    mc_array_release(a);
    *out_axis = 0;
    return *out ? 0 : 1;
}

static int slice_update_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                             const char *fn)
{
    mc_slice_params q;
    mc_vmap_params(&q, sizeof q, node);
    if (mc_slice_params_prepend_batch(&q, mc_vmap_size(in, axes, 2), fn))
        return 1;
    return mc_vmap_all_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

/* MLX's Pad::vmap is not written yet ("Pad vmap is NYI."), but MLX's fft
 * at a longer length and diag build no Pad where ours do, and MLX vmaps
 * those: so Pad batches, the batch first and the padded axes shifted past
 * it. A batched pad value (one per element) fills the border by a
 * select: the input padded with zeros, and a mask of trues padded with
 * false picks the input inside and each element's value on its border,
 * so the batch is three nodes, not one per element. */
static mc_array *pad_batched_value(mc_gb *s, mc_array *a, mc_array *value, int axis, int b, const mc_pad_params *q)
{
    mc_array *x = mc_gb_vmap_front(s, a, axis < 0 ? -1 : axis, b);
    mc_array *zero = mc_gb_scalar(s, 0, a->dtype), *no = mc_gb_scalar(s, 0, MLX_BOOL);
    mc_array *inside = x ? mc_gb_full_like(s, 1, MLX_BOOL, x) : NULL;
    mc_array *pa[2] = {x, zero}, *pm[2] = {inside, no};
    if (s->failed || !x || !zero || !no || !inside)
        return NULL;
    mc_array *padded = mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_PAD, pa, 2, q, sizeof *q));
    mc_array *mask = mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_PAD, pm, 2, q, sizeof *q));
    if (!padded)
        return NULL;
    /* the values as (b, 1, ..., 1) against the padded batch */
    int shape[MC_MAX_NDIM];
    for (int d = 0; d < padded->ndim; d++)
        shape[d] = d == 0 ? b : 1;
    mc_array *v = mc_gb_reshape(s, value, padded->ndim, shape);
    return mc_gb_where(s, mask, padded, v);
}

static int pad_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                    const char *fn)
{
    mc_pad_params q;
    mc_vmap_params(&q, sizeof q, node);
    for (int i = 0; i < q.n; i++)
        q.axes[i]++;
    *out_axis = 0;
    if (axes[1] >= 0) {
        int b = mc_vmap_size(in, axes, 2);
        if (mc_vmap_check_ndim(node->ndim, fn))
            return 1;
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *v = mc_gb_vmap_front(&s, in[1], axes[1], b);
        *out = mc_gb_finish_ref(&s, v ? pad_batched_value(&s, in[0], v, axes[0], b, &q) : NULL);
        return *out ? 0 : 1;
    }
    mc_array *a = mc_vmap_front(in[0], axes[0], 1, fn);
    if (!a)
        return 1;
    mc_array *args[2] = {a, in[1]};
    *out = mc_node_new(fn, node->prim, args, 2, &q, sizeof q);
    mc_array_release(a);
    return *out ? 0 : 1;
}

/* As MLX: the count over the same axes of the batched input (the batch
 * axis is not counted), the same for every element. */
static int numel_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                      const char *fn)
{
    mc_numel_params q;
    mc_vmap_params(&q, sizeof q, node);
    for (int i = 0; i < q.n; i++)
        q.axes[i] += q.axes[i] >= axes[0];
    *out = mc_node_new(fn, node->prim, in, 1, &q, sizeof q);
    *out_axis = -1;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_concatenate = {
    .name = "Concatenate",
    .arity = MC_ARITY_ANY,
    .infer = concat_infer,
    .eval = concat_eval,
    .vjp = concat_vjp,
    .jvp = concat_jvp,
    .vmap = concat_vmap,
};

const mc_prim_info mc_prim_gather_axis = {
    .name = "GatherAxis",
    .arity = 2,
    .infer = gather_axis_infer,
    .eval = gather_axis_eval,
    .vjp = gather_axis_vjp,
    .jvp = gather_axis_jvp,
    .name_of = gather_axis_name,
    .vmap = gather_axis_vmap,
};

const mc_prim_info mc_prim_slice_update = {
    .name = "SliceUpdate",
    .arity = 2,
    .infer = slice_update_infer,
    .eval = slice_update_eval,
    .vjp = slice_update_vjp,
    .jvp = pairwise_linear_jvp,
    .vmap = slice_update_vmap,
};

const mc_prim_info mc_prim_pad = {
    .name = "Pad",
    .arity = 2,
    .infer = pad_infer,
    .eval = pad_eval,
    .vjp = pad_vjp,
    .jvp = pairwise_linear_jvp,
    .vmap = pad_vmap,
};

const mc_prim_info mc_prim_number_of_elements = {
    .name = "NumberOfElements",
    .arity = 1,
    .infer = numel_infer,
    .eval = numel_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .vmap = numel_vmap,
};
