/* Owns mlx_view: MLX's rules for reading an array's bytes as another
 * dtype (a scalar keeps its item size; a larger item needs the last axis's
 * bytes to be a multiple of it), then one View node. */
#include "graph/prims_misc.h"
#include "ops/op_util.h"
#include "runtime/error.h"

int mlx_view(mlx_array *res, const mlx_array a, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "view";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->dtype == dtype)
        return mc_op_store(res, mc_array_retain(x), fn);
    size_t ib = mc_dtype_size(x->dtype), ob = mc_dtype_size(dtype);
    if (x->ndim == 0 && ib != ob)
        return mc_error("[%s] Changing the type of a scalar is only allowed for types with the same size.", fn);
    if (ib < ob && x->shape[x->ndim - 1] % (int)(ob / ib) != 0)
        return mc_error(
            "[%s] When viewing as a larger dtype, the size in bytes of the last axis must be a multiple "
            "of the requested type size.",
            fn);
    if (ib > ob && (int64_t)x->shape[x->ndim - 1] * (int64_t)(ib / ob) > INT32_MAX)
        return mc_error("[%s] The last axis of %d elements of %s is too long to view as %s.", fn,
                        x->shape[x->ndim - 1], mc_dtype_name(x->dtype), mc_dtype_name(dtype));
    mc_view_params p = {dtype};
    mc_array *in[1] = {x};
    return mc_op_store(res, mc_node_new(fn, MC_PRIM_VIEW, in, 1, &p, sizeof p), fn);
}
