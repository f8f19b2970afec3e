/* Owns where, clip and number_of_elements. */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_index.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

mc_array *mc_sh_where(mc_array *cond, mc_array *x, mc_array *y, const char *fn)
{
    /* MLX: the condition as bool, the branches in their promoted dtype;
     * the Select node broadcasts all three */
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    mc_array *in[3] = {mc_node_astype(cond, MLX_BOOL, fn), NULL, NULL};
    mc_array *out = NULL;
    if (!in[0] || !(in[1] = mc_node_astype(x, t, fn)) || !(in[2] = mc_node_astype(y, t, fn)))
        goto done;
    out = mc_node_new(fn, MC_PRIM_WHERE, in, 3, NULL, 0);
done:
    for (int i = 0; i < 3; i++)
        mc_array_release(in[i]);
    return out;
}

int mlx_where(mlx_array *res, const mlx_array condition, const mlx_array x, const mlx_array y, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "where";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *c = mc_op_arg(condition, fn, "condition");
    mc_array *a = c ? mc_op_arg(x, fn, "x") : NULL;
    mc_array *b = a ? mc_op_arg(y, fn, "y") : NULL;
    if (!b)
        return 1;
    /* check the shapes first, so a mismatch is reported before any cast */
    int nd, nd2;
    int s1[MC_MAX_NDIM], s2[MC_MAX_NDIM];
    if (mc_broadcast_shapes(c->ndim, c->shape, a->ndim, a->shape, &nd, s1, fn) ||
        mc_broadcast_shapes(nd, s1, b->ndim, b->shape, &nd2, s2, fn))
        return 1;
    return mc_op_store(res, mc_sh_where(c, a, b, fn), fn);
}

int mlx_clip(mlx_array *res, const mlx_array a, const mlx_array a_min, const mlx_array a_max, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "clip";
    if (mc_op_check_res(res, fn) || !mc_op_arg(a, fn, "a"))
        return 1;
    if (!a_min.ctx && !a_max.ctx)
        return mc_error("[%s] At most one of a_min and a_max may be None.", fn);
    /* MLX: maximum with the lower bound, then minimum with the upper one,
     * each with the usual promotion and broadcasting */
    mlx_array cur = {mc_array_retain(mc_arr(a))};
    if (a_min.ctx && mc_op_binary(&cur, cur, a_min, MC_B_MAXIMUM, false, fn))
        goto fail;
    if (a_max.ctx && mc_op_binary(&cur, cur, a_max, MC_B_MINIMUM, false, fn))
        goto fail;
    return mc_op_store(res, mc_arr(cur), fn);
fail:
    mc_array_release(mc_arr(cur));
    return 1;
}

int mlx_number_of_elements(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool inverted,
                           mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "number_of_elements";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (axes_num > MC_MAX_NDIM)
        return mc_error("[%s] Received %zu axes; at most %d are supported.", fn, axes_num, MC_MAX_NDIM);
    if (axes_num && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, axes_num);
    mc_numel_params p;
    memset(&p, 0, sizeof p);
    p.n = (int)axes_num;
    p.inverted = inverted;
    p.dtype = dtype;
    double v = 1;
    for (size_t i = 0; i < axes_num; i++) {
        int ax = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (ax < 0 || ax >= x->ndim)
            return mc_error("[%s] Can't get the shape for axis %d from an array with %d dimensions.", fn, axes[i],
                            x->ndim);
        p.axes[i] = ax;
        v *= x->shape[ax];
    }
    /* A lazy input may stand for a traced placeholder whose shape changes
     * on a shapeless replay: then the count is a node reading the shape at
     * evaluation. An evaluated input's shape is final. */
    if (!mc_array_evaluated(x))
        return mc_op_store(res, mc_node_new(fn, MC_PRIM_NUMBER_OF_ELEMENTS, &x, 1, &p, sizeof p), fn);
    return mc_op_store(res, mc_sh_scalar(inverted ? 1.0 / v : v, dtype, fn), fn);
}
