/* Owns put_along_axis and scatter_add_axis: MLX's argument checks, cast
 * and broadcasting (mlx/ops.cpp scatter_axis), then one ScatterAxis node
 * (src/graph/prims_scatter.c). */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_scatter.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

/* The shape without one axis (for messages naming what broadcasts). */
static int drop_axis(int ndim, const int *shape, int axis, int *out)
{
    int k = 0;
    for (int d = 0; d < ndim; d++)
        if (d != axis)
            out[k++] = shape[d];
    return k;
}

static mc_array *scatter_axis(mc_array *a, mc_array *idx, mc_array *vals, int axis, int reduce, const char *fn)
{
    if (axis < -a->ndim || axis >= a->ndim) {
        mc_error("[%s] Received invalid axis for array with %d dimensions.", fn, a->ndim);
        return NULL;
    }
    if (idx->ndim != a->ndim) {
        mc_error("[%s] Indices of dimension %d does not match array of dimension %d.", fn, idx->ndim, a->ndim);
        return NULL;
    }
    /* as MLX: nothing to write into, nothing else is looked at */
    if (a->size == 0)
        return mc_array_retain(a);
    if (idx->dtype == MLX_BOOL || !mc_dtype_is_integer(idx->dtype)) {
        mc_error("[%s] Got indices with invalid dtype %s. Indices must be integral.", fn,
                 mc_dtype_name(idx->dtype));
        return NULL;
    }
    int ax = axis < 0 ? axis + a->ndim : axis, nd = a->ndim;
    /* the updates lose leading size-1 axes beyond the indices' ndim, then
     * broadcast with the indices; all three broadcast outside the axis */
    int lead = vals->ndim > nd ? vals->ndim - nd : 0, squeeze[MC_MAX_NDIM];
    for (int d = 0; d < lead; d++) {
        if (vals->shape[d] != 1) {
            mc_error("[%s] Cannot squeeze axis %d with size %d which is not equal to 1.", fn, d, vals->shape[d]);
            return NULL;
        }
        squeeze[d] = d;
    }
    int n1, n2, n3, nr, upd_shape[MC_MAX_NDIM], both[MC_MAX_NDIM], a_rest[MC_MAX_NDIM], i_rest[MC_MAX_NDIM];
    int rest[MC_MAX_NDIM];
    if (mc_broadcast_shapes(idx->ndim, idx->shape, vals->ndim - lead, vals->shape + lead, &n1, both, fn))
        return NULL;
    n2 = drop_axis(nd, a->shape, ax, a_rest);
    n3 = drop_axis(nd, both, ax, i_rest);
    if (mc_broadcast_shapes(n2, a_rest, n3, i_rest, &nr, rest, fn))
        return NULL;
    int a_shape[MC_MAX_NDIM];
    for (int d = 0, k = 0; d < nd; d++) {
        a_shape[d] = d == ax ? a->shape[d] : rest[k];
        upd_shape[d] = d == ax ? both[d] : rest[k];
        k += d != ax;
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *upd = mc_gb_squeeze(&s, mc_gb_astype(&s, vals, a->dtype), squeeze, lead);
    mc_array *r =
        mc_gb_scatter_axis(&s, mc_gb_broadcast(&s, a, nd, a_shape), mc_gb_broadcast(&s, idx, nd, upd_shape),
                           mc_gb_broadcast(&s, upd, nd, upd_shape), ax, reduce);
    return mc_gb_finish_ref(&s, r);
}

static int scatter_axis_op(mlx_array *res, mlx_array a, mlx_array indices, mlx_array values, int axis, int reduce,
                           const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *idx = x ? mc_op_arg(indices, fn, "indices") : NULL;
    mc_array *vals = idx ? mc_op_arg(values, fn, "values") : NULL;
    if (!vals)
        return 1;
    return mc_op_store(res, scatter_axis(x, idx, vals, axis, reduce, fn), fn);
}

int mlx_put_along_axis(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array values,
                       int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_axis_op(res, a, indices, values, axis, MC_SCATTER_NONE, "put_along_axis");
}

int mlx_scatter_add_axis(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array values,
                         int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_axis_op(res, a, indices, values, axis, MC_SCATTER_SUM, "scatter_add_axis");
}
