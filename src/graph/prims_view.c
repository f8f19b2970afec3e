/* Owns the shape views: Reshape, Transpose, Broadcast, ExpandDims,
 * Squeeze, Flatten and Unflatten. Their outputs share the input's buffer
 * with new shape and strides, copying only when a reshape (or a flatten)
 * cannot be expressed as strides of the input. Every infer recomputes the
 * shape from the input's, so a shapeless compiled tape replays them on new
 * shapes. */
#include <limits.h>
#include <string.h>

#include "graph/elementwise.h"
#include "graph/build.h"
#include "graph/prims_view.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static void copy_meta_shape(mc_meta *out, mlx_dtype dtype, const mc_dims_params *p)
{
    out->dtype = dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->dims, sizeof(int) * (size_t)p->ndim);
}


static int reshape_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_dims_params *p = params;
    size_t size;
    if (!mc_shape_size(p->ndim, p->dims, &size) || size != in[0]->size) {
        char s[512];
        return mc_error("[%s] Cannot reshape array of size %zu into shape %s.", fn, in[0]->size,
                        mc_shape_str(s, sizeof s, p->ndim, p->dims));
    }
    copy_meta_shape(out, in[0]->dtype, p);
    return 0;
}

static int reshape_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    mc_array *x = in[0];
    if (x->flags & MC_FLAG_ROW_CONTIG) {
        int64_t strides[MC_MAX_NDIM];
        mc_row_strides(out->ndim, out->shape, strides);
        mc_array_set_view(out, x, x->data, strides);
        return 0;
    }
    /* otherwise copy x in its own logical (row-major) order, which the new
     * shape then reads as a plain reshape */
    if (mc_array_alloc_data(out, "reshape"))
        return 1;
    int64_t dst[MC_MAX_NDIM];
    mc_row_strides(x->ndim, x->shape, dst);
    size_t item = mc_dtype_size(x->dtype);
    mc_unary_strided(mc_kernels()->convert[x->dtype][x->dtype], item, item, x->data, x->strides,
                     out->data, dst, x->ndim, x->shape);
    return 0;
}

static int transpose_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)fn;
    const mc_dims_params *p = params;
    out->dtype = in[0]->dtype;
    out->ndim = p->ndim;
    for (int i = 0; i < p->ndim; i++)
        out->shape[i] = in[0]->shape[p->dims[i]];
    return 0;
}

static int transpose_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_dims_params *p = params;
    int64_t strides[MC_MAX_NDIM];
    for (int i = 0; i < p->ndim; i++)
        strides[i] = in[0]->strides[p->dims[i]];
    mc_array_set_view(out, in[0], in[0]->data, strides);
    return 0;
}

static int broadcast_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_dims_params *p = params;
    int nd;
    int shape[MC_MAX_NDIM];
    if (mc_broadcast_shapes(in[0]->ndim, in[0]->shape, p->ndim, p->dims, &nd, shape, fn))
        return 1;
    if (nd != p->ndim || memcmp(shape, p->dims, sizeof(int) * (size_t)nd)) {
        char s1[256], s2[256];
        return mc_error("[%s] Cannot broadcast array of shape %s into shape %s.", fn,
                        mc_shape_str(s1, sizeof s1, in[0]->ndim, in[0]->shape),
                        mc_shape_str(s2, sizeof s2, p->ndim, p->dims));
    }
    copy_meta_shape(out, in[0]->dtype, p);
    return 0;
}

static int broadcast_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    int64_t strides[MC_MAX_NDIM];
    mc_broadcast_strides(in[0], out->ndim, out->shape, strides);
    mc_array_set_view(out, in[0], in[0]->data, strides);
    return 0;
}

/* ---- ExpandDims / Squeeze ---- */

static int expand_dims_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_axes_params *p = params;
    const mc_array *x = in[0];
    int nd = x->ndim + p->n;
    if (nd > MC_MAX_NDIM)
        return mc_error("[%s] The result would have %d dimensions; at most %d are supported.", fn, nd,
                        MC_MAX_NDIM);
    out->dtype = x->dtype;
    out->ndim = nd;
    for (int i = 0, j = 0, k = 0; i < nd; i++) {
        if (j < p->n && p->axes[j] == i) {
            out->shape[i] = 1;
            j++;
        } else {
            out->shape[i] = x->shape[k++];
        }
    }
    return 0;
}

static int expand_dims_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_axes_params *p = params;
    const mc_array *x = in[0];
    int64_t strides[MC_MAX_NDIM];
    /* an inserted axis has one element: its stride is never used to step,
     * 1 is what MLX reports for it */
    for (int i = 0, j = 0, k = 0; i < out->ndim; i++) {
        if (j < p->n && p->axes[j] == i) {
            strides[i] = 1;
            j++;
        } else {
            strides[i] = x->strides[k++];
        }
    }
    mc_array_set_view(out, in[0], x->data, strides);
    return 0;
}

static int squeeze_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_axes_params *p = params;
    const mc_array *x = in[0];
    out->dtype = x->dtype;
    out->ndim = 0;
    for (int i = 0, j = 0; i < x->ndim; i++) {
        if (j < p->n && p->axes[j] == i) {
            if (x->shape[i] != 1)
                return mc_error("[%s] Cannot squeeze axis %d with size %d which is not equal to 1.", fn, i,
                                x->shape[i]);
            j++;
        } else {
            out->shape[out->ndim++] = x->shape[i];
        }
    }
    if (p->n && p->axes[p->n - 1] >= x->ndim)
        return mc_error("[%s] Axis %d is out of bounds for array with %d dimensions.", fn, p->axes[p->n - 1],
                        x->ndim);
    return 0;
}

static int squeeze_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_axes_params *p = params;
    const mc_array *x = in[0];
    int64_t strides[MC_MAX_NDIM];
    int k = 0;
    for (int i = 0, j = 0; i < x->ndim; i++) {
        if (j < p->n && p->axes[j] == i)
            j++;
        else
            strides[k++] = x->strides[i];
    }
    mc_array_set_view(out, in[0], x->data, strides);
    return 0;
}

/* ---- Flatten / Unflatten ---- */

static int flatten_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_flatten_params *p = params;
    const mc_array *x = in[0];
    if (p->start < 0 || p->end >= x->ndim || p->start > p->end)
        return mc_error("[%s] Cannot flatten axes %d to %d of an array with %d dimensions.", fn, p->start,
                        p->end, x->ndim);
    /* a zero dimension anywhere makes the product 0 even if others overflow */
    int64_t flat = 1;
    bool zero = false, big = false;
    for (int i = p->start; i <= p->end; i++) {
        zero |= x->shape[i] == 0;
        if (!big && x->shape[i])
            big = __builtin_mul_overflow(flat, (int64_t)x->shape[i], &flat) || flat > INT_MAX;
    }
    if (zero)
        flat = 0;
    else if (big)
        return mc_error("[%s] The flattened size of axes %d to %d does not fit a dimension.", fn, p->start,
                        p->end);
    out->dtype = x->dtype;
    out->ndim = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (i == p->start) {
            out->shape[out->ndim++] = (int)flat;
            i = p->end;
        } else {
            out->shape[out->ndim++] = x->shape[i];
        }
    }
    return 0;
}

static int unflatten_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_unflatten_params *p = params;
    const mc_array *x = in[0];
    if (p->axis < 0 || p->axis >= x->ndim)
        return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, p->axis, x->ndim);
    int nd = x->ndim - 1 + p->n;
    if (nd > MC_MAX_NDIM)
        return mc_error("[%s] The result would have %d dimensions; at most %d are supported.", fn, nd,
                        MC_MAX_NDIM);
    size_t size;
    if (!mc_shape_size(p->n, p->shape, &size) || size != (size_t)x->shape[p->axis]) {
        char s[512];
        return mc_error("[%s] Cannot unflatten axis %d with size %d into shape %s.", fn, p->axis,
                        x->shape[p->axis], mc_shape_str(s, sizeof s, p->n, p->shape));
    }
    out->dtype = x->dtype;
    out->ndim = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (i == p->axis) {
            for (int j = 0; j < p->n; j++)
                out->shape[out->ndim++] = p->shape[j];
        } else {
            out->shape[out->ndim++] = x->shape[i];
        }
    }
    return 0;
}

static int reshape_like_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    /* Reshape's evaluation depends only on the input and the output's shape */
    return reshape_eval(out, in, n, params);
}

/* ---- derivatives: every view is linear, so its jvp is itself on the
 * tangent (mc_jvp_linear); the shape-only views reshape the cotangent
 * back (mc_vjp_reshape_back) ---- */

static int transpose_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                         const char *fn)
{
    (void)argnums;
    (void)nargs;
    const mc_dims_params *p = node->params;
    int inverse[MC_MAX_NDIM];
    for (int i = 0; i < p->ndim; i++)
        inverse[p->dims[i]] = i;
    vjps[0] = mc_node_transpose(cot, inverse, fn);
    return vjps[0] ? 0 : 1;
}

static int broadcast_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                         const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_array *in = node->inputs[0];
    mc_gb s;
    mc_gb_begin(&s, fn);
    vjps[0] = mc_gb_finish_ref(&s, mc_gb_sum_to_shape(&s, cot, in->ndim, in->shape));
    return vjps[0] ? 0 : 1;
}

/* ---- vmap: the batch axis first, the view's params shifted past it ---- */

static int dims_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    const mc_dims_params *p = node->params;
    if (mc_vmap_check_ndim(p->ndim, fn))
        return 1;
    int b = in[0]->shape[axes[0]];
    mc_dims_params q;
    memset(&q, 0, sizeof q);
    q.ndim = p->ndim + 1;
    q.dims[0] = node->prim == MC_PRIM_TRANSPOSE ? 0 : b;
    for (int i = 0; i < p->ndim; i++)
        q.dims[i + 1] = node->prim == MC_PRIM_TRANSPOSE ? p->dims[i] + 1 : p->dims[i];
    if (node->prim != MC_PRIM_BROADCAST)
        return mc_vmap_front_with(out, out_axis, node, in, axes, &q, mc_dims_params_size(q.ndim), fn);
    /* the batch stays in front: the input gets the leading size-1 axes
     * that broadcasting would have added before its own */
    const mc_array *x = node->inputs[0];
    int shape[MC_MAX_NDIM], pad = p->ndim - x->ndim;
    shape[0] = b;
    for (int i = 0; i < pad; i++)
        shape[i + 1] = 1;
    memcpy(shape + 1 + pad, x->shape, sizeof(int) * (size_t)x->ndim);
    mc_array *f = mc_vmap_front(in[0], axes[0], b, fn);
    mc_array *r = f ? mc_node_reshape(f, q.ndim, shape, fn) : NULL;
    mc_array_release(f);
    *out = r ? mc_node_broadcast(r, q.ndim, q.dims, fn) : NULL;
    mc_array_release(r);
    *out_axis = 0;
    return *out ? 0 : 1;
}

/* ExpandDims (axes of the output) and Squeeze (of the input). */
static int axes_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                     const char *fn)
{
    mc_axes_params q;
    mc_vmap_params(&q, sizeof q, node);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    for (int i = 0; i < q.n; i++)
        q.axes[i]++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

static int flatten_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn)
{
    mc_flatten_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.start++;
    q.end++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

static int unflatten_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                          const char *fn)
{
    mc_unflatten_params q;
    mc_vmap_params(&q, sizeof q, node);
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    q.axis++;
    return mc_vmap_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_reshape = {
    .name = "Reshape",
    .arity = 1,
    .infer = reshape_infer,
    .eval = reshape_eval,
    .vjp = mc_vjp_reshape_back,
    .jvp = mc_jvp_linear,
    .vmap = dims_vmap,
};

const mc_prim_info mc_prim_transpose = {
    .name = "Transpose",
    .arity = 1,
    .infer = transpose_infer,
    .eval = transpose_eval,
    .vjp = transpose_vjp,
    .jvp = mc_jvp_linear,
    .vmap = dims_vmap,
};

const mc_prim_info mc_prim_broadcast = {
    .name = "Broadcast",
    .arity = 1,
    .infer = broadcast_infer,
    .eval = broadcast_eval,
    .vjp = broadcast_vjp,
    .jvp = mc_jvp_linear,
    .vmap = dims_vmap,
};

const mc_prim_info mc_prim_expand_dims = {
    .name = "ExpandDims",
    .arity = 1,
    .infer = expand_dims_infer,
    .eval = expand_dims_eval,
    .vjp = mc_vjp_reshape_back,
    .jvp = mc_jvp_linear,
    .vmap = axes_vmap,
};

const mc_prim_info mc_prim_squeeze = {
    .name = "Squeeze",
    .arity = 1,
    .infer = squeeze_infer,
    .eval = squeeze_eval,
    .vjp = mc_vjp_reshape_back,
    .jvp = mc_jvp_linear,
    .vmap = axes_vmap,
};

const mc_prim_info mc_prim_flatten = {
    .name = "Flatten",
    .arity = 1,
    .infer = flatten_infer,
    .eval = reshape_like_eval,
    .vjp = mc_vjp_reshape_back,
    .jvp = mc_jvp_linear,
    .vmap = flatten_vmap,
};

const mc_prim_info mc_prim_unflatten = {
    .name = "Unflatten",
    .arity = 1,
    .infer = unflatten_infer,
    .eval = reshape_like_eval,
    .vjp = mc_vjp_reshape_back,
    .jvp = mc_jvp_linear,
    .vmap = unflatten_vmap,
};
