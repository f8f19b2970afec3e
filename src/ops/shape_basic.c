/* Owns astype and the basic view ops: reshape, transpose, broadcast_to. */
#include <string.h>

#include "graph/prims_view.h"
#include "ops/op_util.h"
#include "runtime/error.h"

int mlx_astype(mlx_array *res, const mlx_array a, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "astype";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    return mc_op_store(res, mc_node_astype(x, dtype, fn), fn);
}

/* MLX's Reshape::output_shape: one -1 entry is inferred from the size. */
static int mc_reshape_shape(const mc_array *x, const int *shape, size_t num, int *out, const char *fn)
{
    char s[512];
    if (num > MC_MAX_NDIM)
        return mc_error("[%s] Shape has %zu dimensions; at most %d are supported.", fn, num, MC_MAX_NDIM);
    if (num && !shape)
        return mc_error("[%s] The shape pointer is NULL for %zu dimensions.", fn, num);
    int infer = -1;
    size_t known = 1;
    for (size_t i = 0; i < num; i++) {
        out[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0)
                return mc_error("[%s] Reshape can only infer one dimension.", fn);
            infer = (int)i;
        } else if (shape[i] < 0) {
            return mc_error("[%s] Invalid dimension %d in shape %s.", fn, shape[i],
                            mc_shape_str(s, sizeof s, (int)num, shape));
        } else if (shape[i] && known > SIZE_MAX / (size_t)shape[i]) {
            return mc_error("[%s] The shape %s has more elements than can be addressed.", fn,
                            mc_shape_str(s, sizeof s, (int)num, shape));
        } else {
            known *= (size_t)shape[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || x->size % known) {
            return mc_error("[%s] Cannot infer the shape of an empty array or a size that does not "
                            "divide: size %zu into shape %s.", fn, x->size,
                            mc_shape_str(s, sizeof s, (int)num, shape));
        }
        out[infer] = (int)(x->size / known);
        known *= (size_t)out[infer];
    }
    if (known != x->size)
        return mc_error("[%s] Cannot reshape array of size %zu into shape %s.", fn, x->size,
                        mc_shape_str(s, sizeof s, (int)num, shape));
    return 0;
}

int mlx_reshape(mlx_array *res, const mlx_array a, const int *shape, size_t shape_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "reshape";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    int out[MC_MAX_NDIM];
    if (mc_reshape_shape(x, shape, shape_num, out, fn))
        return 1;
    if ((int)shape_num == x->ndim && !memcmp(out, x->shape, sizeof(int) * shape_num))
        return mc_op_store(res, mc_array_retain(x), fn);
    return mc_op_store(res, mc_node_dims(MC_PRIM_RESHAPE, x, (int)shape_num, out, fn), fn);
}

int mlx_transpose(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "transpose";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    int perm[MC_MAX_NDIM];
    for (int i = 0; i < x->ndim; i++)
        perm[i] = x->ndim - 1 - i;
    return mc_op_store(res, mc_node_dims(MC_PRIM_TRANSPOSE, x, x->ndim, perm, fn), fn);
}

int mlx_broadcast_to(mlx_array *res, const mlx_array a, const int *shape, size_t shape_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "broadcast_to";
    if (mc_op_check_res(res, fn) || mc_op_check_shape(shape, shape_num, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    return mc_op_store(res, mc_node_broadcast(x, (int)shape_num, shape, fn), fn);
}
