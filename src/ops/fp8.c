/* Owns to_fp8 and from_fp8: MLX's checks, then one ConvertFP8 node on
 * float32 (the input cast first, as MLX's kernel reads every dtype but
 * float16 and bfloat16 as float; those two widen exactly) and a cast of
 * from_fp8's float32 result to the dtype asked for (exact: e4m3 values fit
 * every floating dtype). */
#include "graph/prims_misc.h"
#include "ops/op_util.h"
#include "runtime/error.h"

static int convert(mlx_array *res, mc_array *x, bool to, mlx_dtype out, const char *fn)
{
    mc_fp8_params p = {to};
    mc_array *in[1] = {mc_node_astype(x, to ? MLX_FLOAT32 : MLX_UINT8, fn)};
    if (!in[0])
        return 1;
    mc_array *r = mc_node_new(fn, MC_PRIM_CONVERT_FP8, in, 1, &p, sizeof p);
    mc_array_release(in[0]);
    if (r && !to) {
        mc_array *c = mc_node_astype(r, out, fn);
        mc_array_release(r);
        r = c;
    }
    return mc_op_store(res, r, fn);
}

int mlx_to_fp8(mlx_array *res, const mlx_array x, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "to_fp8";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *a = mc_op_arg(x, fn, "x");
    if (!a)
        return 1;
    if (!mc_dtype_is_float(a->dtype))
        return mc_error("[%s] Only real floating types are supported but x.dtype() == %s.", fn,
                        mc_dtype_name(a->dtype));
    return convert(res, a, true, MLX_UINT8, fn);
}

int mlx_from_fp8(mlx_array *res, const mlx_array x, mlx_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "from_fp8";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_array *a = mc_op_arg(x, fn, "x");
    if (!a)
        return 1;
    if (a->dtype != MLX_UINT8)
        return mc_error("[%s] Input must have type uint8 but x.dtype() == %s.", fn, mc_dtype_name(a->dtype));
    if (!mc_dtype_is_float(dtype))
        return mc_error("[%s] Only real floating types are supported but dtype == %s.", fn, mc_dtype_name(dtype));
    return convert(res, a, false, dtype, fn);
}
