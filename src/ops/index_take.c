/* Owns take, take_axis and take_along_axis: argument checks and one
 * GatherAxis node each (take of the flattened array for plain take). */
#include <string.h>

#include "graph/prims_index.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

/* MLX's gather rules for an index array: integers only. */
static int check_indices(const mc_array *idx, const char *fn)
{
    if (idx->dtype == MLX_BOOL)
        return mc_error("[%s] Boolean indices not supported.", fn);
    if (!mc_dtype_is_integer(idx->dtype))
        return mc_error("[%s] Got indices with invalid dtype %s. Indices must be integral.", fn,
                        mc_dtype_name(idx->dtype));
    return 0;
}

static mc_array *gather_node(mc_array *a, mc_array *idx, int axis, int along, const char *fn)
{
    mc_gather_axis_params p;
    memset(&p, 0, sizeof p);
    p.axis = axis;
    p.along = along;
    mc_array *in[2] = {a, idx};
    return mc_node_new(fn, MC_PRIM_GATHER_AXIS, in, 2, &p, sizeof p);
}

static mc_array *take_axis(mc_array *a, mc_array *idx, int axis, const char *fn)
{
    if (axis + a->ndim < 0 || axis >= a->ndim) {
        mc_error("[%s] Received invalid axis %d for array with %d dimensions.", fn, axis, a->ndim);
        return NULL;
    }
    int ax = axis < 0 ? axis + a->ndim : axis;
    if (check_indices(idx, fn))
        return NULL;
    if (a->shape[ax] == 0 && idx->size != 0) {
        mc_error("[%s] Cannot do a non-empty take from an empty axis.", fn);
        return NULL;
    }
    return gather_node(a, idx, ax, 0, fn);
}

int mlx_take_axis(mlx_array *res, const mlx_array a, const mlx_array indices, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "take";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *idx = x ? mc_op_arg(indices, fn, "indices") : NULL;
    if (!idx)
        return 1;
    return mc_op_store(res, take_axis(x, idx, axis, fn), fn);
}

int mlx_take(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "take";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *idx = x ? mc_op_arg(indices, fn, "indices") : NULL;
    if (!idx || check_indices(idx, fn))
        return 1;
    mc_array *flat = mc_sh_flatten(x, 0, x->ndim ? x->ndim - 1 : 0, fn);
    mc_array *out = flat ? take_axis(flat, idx, 0, fn) : NULL;
    mc_array_release(flat);
    return mc_op_store(res, out, fn);
}

int mlx_take_along_axis(mlx_array *res, const mlx_array a, const mlx_array indices, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "take_along_axis";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *idx = x ? mc_op_arg(indices, fn, "indices") : NULL;
    int ax = 0;
    if (!idx || mc_op_axis(axis, x->ndim, &ax, fn))
        return 1;
    if (idx->ndim != x->ndim)
        return mc_error("[%s] Indices of dimension %d does not match array of dimension %d.", fn, idx->ndim,
                        x->ndim);
    if (check_indices(idx, fn))
        return 1;
    /* broadcasting and the empty-axis check are the node's infer */
    return mc_op_store(res, gather_node(x, idx, ax, 1, fn), fn);
}
