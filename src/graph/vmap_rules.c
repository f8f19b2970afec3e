/* Owns the shared vmap rules and axis moves of vmap_rules.h. */
#include "graph/vmap_rules.h"

#include <string.h>

#include "graph/build.h"
#include "graph/prims_index.h"
#include "graph/prims_slice.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

mc_array *mc_node_moveaxis(mc_array *a, int from, int to, const char *fn)
{
    int perm[MC_MAX_NDIM];
    for (int i = 0, k = 0; i < a->ndim; i++) {
        if (i == to) {
            perm[i] = from;
            continue;
        }
        if (k == from)
            k++;
        perm[i] = k++;
    }
    return mc_node_transpose(a, perm, fn);
}

int mc_vmap_size(mc_array *const *in, const int *axes, int n)
{
    for (int i = 0; i < n; i++)
        if (axes[i] >= 0)
            return in[i]->shape[axes[i]];
    return 1;
}

int mc_vmap_check_ndim(int ndim, const char *fn)
{
    if (ndim + 1 > MC_MAX_NDIM)
        return mc_error("[%s] Batching an array of %d dimensions would exceed %d.", fn, ndim, MC_MAX_NDIM);
    return 0;
}

void mc_vmap_params(void *dst, size_t size, const mc_array *node)
{
    memset(dst, 0, size);
    if (node->params)
        memcpy(dst, node->params, node->params_size < size ? node->params_size : size);
}

mc_array *mc_vmap_front(mc_array *in, int axis, int b, const char *fn)
{
    if (axis >= 0)
        return mc_node_moveaxis(in, axis, 0, fn);
    int shape[MC_MAX_NDIM];
    if (mc_vmap_check_ndim(in->ndim, fn))
        return NULL;
    shape[0] = 1;
    memcpy(shape + 1, in->shape, sizeof(int) * (size_t)in->ndim);
    mc_array *r = mc_node_reshape(in, in->ndim + 1, shape, fn);
    if (!r)
        return NULL;
    shape[0] = b;
    mc_array *out = mc_node_broadcast(r, in->ndim + 1, shape, fn);
    mc_array_release(r);
    return out;
}

int mc_vmap_unsupported(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn)
{
    (void)out;
    (void)out_axis;
    (void)in;
    (void)axes;
    (void)fn;
    return mc_error("[Primitive::vmap] Not implemented for %s.", mc_prim_name(node->prim, node->params));
}

int mc_vmap_same_axis(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                      const char *fn)
{
    *out = mc_node_like(node, in, 1, fn);
    *out_axis = axes[0];
    return *out ? 0 : 1;
}

int mc_vmap_elementwise(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn)
{
    int n = node->n_inputs, ndim = 0;
    for (int i = 0; i < n; i++) {
        int nd = in[i]->ndim + (axes[i] < 0);
        ndim = nd > ndim ? nd : ndim;
    }
    if (ndim > MC_MAX_NDIM)
        return mc_error("[%s] Batching arrays of %d dimensions would exceed %d.", fn, ndim - 1, MC_MAX_NDIM);
    /* An unbatched input's "batch axis" is the size-1 axis just before its
     * own after the padding (axis -1 lands there), so every input can be
     * moved the same way. */
    int to = ndim - in[0]->ndim + axes[0];
    /* Binary, Select, and compile's fused nodes (up to 24 inputs) */
    mc_array *args[32] = {0};
    if (n > 32)
        return mc_error("[%s] Internal: an elementwise vmap of %d inputs.", fn, n);
    int rc = 1;
    for (int i = 0; i < n; i++) {
        int shape[MC_MAX_NDIM], pad = ndim - in[i]->ndim;
        for (int d = 0; d < pad; d++)
            shape[d] = 1;
        memcpy(shape + pad, in[i]->shape, sizeof(int) * (size_t)in[i]->ndim);
        mc_array *r = mc_node_reshape(in[i], ndim, shape, fn);
        int from = pad + axes[i];
        if (r && from != to) {
            mc_array *t = mc_node_moveaxis(r, from, to, fn);
            mc_array_release(r);
            r = t;
        }
        if (!(args[i] = r))
            goto done;
    }
    *out = mc_node_like(node, args, n, fn);
    *out_axis = to;
    rc = *out ? 0 : 1;
done:
    for (int i = n - 1; i >= 0; i--)
        mc_array_release(args[i]);
    return rc;
}

int mc_vmap_leading(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                    const char *fn)
{
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), rc = 1;
    mc_array **args = mc_xcalloc((size_t)n, sizeof *args);
    if (!args)
        return mc_error_oom(fn, (size_t)n * sizeof *args);
    mc_contiguous_params row = {0};
    for (int i = 0; i < n; i++) {
        mc_array *f = mc_vmap_front(in[i], axes[i], b, fn);
        /* their kernels read row-major matrices, as the ops hand them */
        args[i] = f ? mc_node_new(fn, MC_PRIM_CONTIGUOUS, &f, 1, &row, sizeof row) : NULL;
        mc_array_release(f);
        if (!args[i])
            goto done;
    }
    *out = mc_node_like(node, args, n, fn);
    *out_axis = 0;
    rc = *out ? 0 : 1;
done:
    for (int i = n - 1; i >= 0; i--)
        mc_array_release(args[i]);
    mc_xfree(args);
    return rc;
}

/* Element e of a's batch axis, with the unbatched input's shape `like`. */
static mc_array *element_of(mc_array *a, int axis, int e, const mc_array *like, const char *fn)
{
    mc_slice_params p;
    memset(&p, 0, sizeof p);
    p.ndim = a->ndim;
    for (int d = 0; d < a->ndim; d++) {
        p.start[d] = d == axis ? e : 0;
        p.stop[d] = d == axis ? e + 1 : a->shape[d];
        p.strides[d] = 1;
    }
    mc_array *s = mc_node_new(fn, MC_PRIM_SLICE, &a, 1, &p, sizeof p);
    if (!s)
        return NULL;
    mc_array *r = mc_node_reshape(s, like->ndim, like->shape, fn);
    mc_array_release(s);
    return r;
}

int mc_vmap_by_element(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn)
{
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), rc = 1, made = 0;
    int shape[MC_MAX_NDIM];
    if (mc_vmap_check_ndim(node->ndim, fn))
        return 1;
    shape[0] = 1;
    memcpy(shape + 1, node->shape, sizeof(int) * (size_t)node->ndim);
    if (b == 0) {
        shape[0] = 0;
        mc_gb s;
        mc_gb_begin(&s, fn);
        *out = mc_gb_finish_ref(&s, mc_gb_zeros(&s, node->ndim + 1, shape, node->dtype));
        *out_axis = 0;
        return *out ? 0 : 1;
    }
    mc_array **args = mc_xcalloc((size_t)(n ? n : 1), sizeof *args);
    mc_array **parts = mc_xcalloc((size_t)b, sizeof *parts);
    if (!args || !parts) {
        mc_error_oom(fn, (size_t)(n + b) * sizeof *args);
        goto done;
    }
    for (; made < b; made++) {
        int k = 0;
        for (; k < n; k++) {
            args[k] = axes[k] < 0 ? mc_array_retain(in[k]) : element_of(in[k], axes[k], made, node->inputs[k], fn);
            if (!args[k])
                break;
        }
        mc_array *y = k == n ? mc_node_like(node, args, n, fn) : NULL;
        while (k > 0)
            mc_array_release(args[--k]);
        parts[made] = y ? mc_node_reshape(y, node->ndim + 1, shape, fn) : NULL;
        mc_array_release(y);
        if (!parts[made])
            goto done;
    }
    mc_concat_params cp = {0};
    *out = b == 1 ? mc_array_retain(parts[0]) : mc_node_new(fn, MC_PRIM_CONCATENATE, parts, b, &cp, sizeof cp);
    *out_axis = 0;
    rc = *out ? 0 : 1;
done:
    while (made > 0)
        mc_array_release(parts[--made]);
    mc_xfree(parts);
    mc_xfree(args);
    return rc;
}

int mc_vmap_front_with(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const void *params, size_t params_size, const char *fn)
{
    mc_array *a = mc_vmap_front(in[0], axes[0], 1, fn);
    if (!a)
        return 1;
    *out = mc_node_new(fn, node->prim, &a, 1, params, params_size);
    mc_array_release(a);
    *out_axis = 0;
    return *out ? 0 : 1;
}

mc_array *mc_gb_vmap_front(mc_gb *s, mc_array *in, int axis, int b)
{
    return s->failed || !in ? NULL : mc_gb_hold(s, mc_vmap_front(in, axis, b, s->fn));
}

mlx_dtype mc_vmap_index_dtype(mlx_dtype idx)
{
    return mc_dtype_size(idx) < 4 ? MLX_INT32 : idx;
}

mc_array *mc_gb_vmap_batch_index(mc_gb *s, int ndim, const int *shape, mlx_dtype dtype)
{
    mc_array *iota = mc_gb_astype(s, mc_gb_iota(s, shape[0], 0, ndim), dtype);
    return mc_gb_broadcast(s, iota, ndim, shape);
}

int mc_vmap_all_front_with(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                           const void *params, size_t params_size, const char *fn)
{
    int n = node->n_inputs, b = mc_vmap_size(in, axes, n), rc = 1, k = 0;
    mc_array **args = mc_xcalloc((size_t)n, sizeof *args);
    if (!args)
        return mc_error_oom(fn, (size_t)n * sizeof *args);
    for (; k < n; k++)
        if (!(args[k] = mc_vmap_front(in[k], axes[k], b, fn)))
            goto done;
    *out = mc_node_new(fn, node->prim, args, n, params, params_size);
    *out_axis = 0;
    rc = *out ? 0 : 1;
done:
    while (k > 0)
        mc_array_release(args[--k]);
    mc_xfree(args);
    return rc;
}
