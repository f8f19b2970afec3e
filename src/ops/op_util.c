/* Owns the helpers every op constructor shares. */
#include "graph/prims_binary.h"
#include "graph/prims_copy.h"
#include "graph/prims_view.h"
#include "ops/op_util.h"

#include <string.h>

#include "runtime/error.h"

mc_array *mc_op_arg(mlx_array a, const char *fn, const char *name)
{
    if (!a.ctx)
        mc_error("[%s] Argument '%s' is an empty array handle.", fn, name);
    return mc_arr(a);
}

int mc_op_check_res(const void *res, const char *fn)
{
    return res ? 0 : mc_error("[%s] The result pointer is NULL.", fn);
}

int mc_op_store(mlx_array *res, mc_array *out, const char *fn)
{
    (void)fn;
    if (!out)
        return 1;
    mc_array_release(mc_arr(*res));
    res->ctx = out;
    return 0;
}

int mc_op_check_dtype(int dtype, const char *fn)
{
    return mc_dtype_valid(dtype) ? 0 : mc_error("[%s] Unknown dtype value %d.", fn, dtype);
}

int mc_op_check_shape(const int *shape, size_t num, const char *fn)
{
    if (num > MC_MAX_NDIM)
        return mc_error("[%s] Shape has %zu dimensions; at most %d are supported.", fn, num, MC_MAX_NDIM);
    if (num && !shape)
        return mc_error("[%s] The shape pointer is NULL for %zu dimensions.", fn, num);
    for (size_t i = 0; i < num; i++) {
        if (shape[i] < 0) {
            char s[512];
            return mc_error("[%s] Negative dimensions not allowed in shape %s.", fn,
                            mc_shape_str(s, sizeof s, (int)num, shape));
        }
    }
    size_t size;
    if (!mc_shape_size((int)num, shape, &size)) {
        char s[512];
        return mc_error("[%s] The shape %s has more elements than can be addressed.", fn,
                        mc_shape_str(s, sizeof s, (int)num, shape));
    }
    return 0;
}

int mc_op_axis(int axis, int ndim, int *out, const char *fn)
{
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim)
        return mc_error("[%s] Axis %d is out of bounds for array with %d dimensions.", fn, axis, ndim);
    *out = a;
    return 0;
}

mlx_dtype mc_at_least_float(mlx_dtype d) { return mc_dtype_is_inexact(d) ? d : MLX_FLOAT32; }

int mc_op_binary(mlx_array *res, mlx_array a, mlx_array b, mc_binary_op op, bool to_float, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *y = x ? mc_op_arg(b, fn, "b") : NULL;
    if (!y)
        return 1;
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (to_float)
        t = mc_at_least_float(t);
    mc_array *out = NULL;
    mc_array *in[2] = {mc_node_astype(x, t, fn), NULL};
    if (!in[0])
        goto done;
    in[1] = mc_node_astype(y, t, fn);
    if (!in[1])
        goto done;
    mc_binary_params p = {op};
    out = mc_node_new(fn, MC_PRIM_BINARY, in, 2, &p, sizeof p);
done:
    mc_array_release(in[0]);
    mc_array_release(in[1]);
    return out ? mc_op_store(res, out, fn) : 1;
}
