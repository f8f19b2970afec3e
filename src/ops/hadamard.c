/* Owns hadamard_transform: MLX's default scale (1/sqrt(n) of the last
 * axis), dtypes and sizes (n = m * 2^k, m in 1, 12, 20, 28, k <= 26), then
 * one Hadamard node on float32. Sizes and dtypes MLX only rejects while
 * evaluating are rejected here, with MLX's messages. float16 and bfloat16
 * are transformed in float32 and rounded once (MLX rounds after every
 * butterfly level). */
#include <math.h>

#include "graph/prims_misc.h"
#include "ops/op_util.h"
#include "runtime/error.h"

static int decompose(int len, int *n, int *m, const char *fn)
{
    static const int factors[3] = {12, 20, 28};
    *m = 1;
    *n = len;
    if (len & (len - 1)) {
        for (int i = 0; i < 3 && *m == 1; i++)
            if (len % factors[i] == 0) {
                *m = factors[i];
                *n = len / factors[i];
            }
        if (*m == 1 || (*n & (*n - 1)))
            return mc_error("[%s] Only supports n = m*2^k where m in (1, 12, 20, 28).", fn);
    }
    if (*n > (1 << 26))
        return mc_error("[%s] Only supports n = m*2^k where k <= 26", fn);
    return 0;
}

int mlx_hadamard_transform(mlx_array *res, const mlx_array a, mlx_optional_float scale, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "hadamard_transform";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->size == 0)
        return mc_error("[%s] Does not support empty arrays.", fn);
    int len = x->ndim > 0 ? x->shape[x->ndim - 1] : 1;
    float sc = scale.has_value ? scale.value : (float)(1.0f / sqrt((double)len));
    mlx_dtype dtype = mc_dtype_is_float(x->dtype) ? x->dtype : MLX_FLOAT32;
    if (len == 1) {
        if (sc == 1.0f)
            return mc_op_store(res, mc_array_retain(x), fn);
        mlx_array k = mlx_array_new_float32(sc), r = mlx_array_new();
        int rc = mlx_astype(&k, k, dtype, s) || mlx_multiply(&r, a, k, s) || mlx_array_set(res, r);
        mlx_array_free(k);
        mlx_array_free(r);
        return rc;
    }
    int n, m;
    if (decompose(len, &n, &m, fn))
        return 1;
    if (dtype == MLX_FLOAT64)
        return mc_error("[%s] Unsupported type float64 (MLX's hadamard runs on float32, float16 and bfloat16).",
                        fn);
    mc_hadamard_params p = {sc, n, m};
    mc_array *in[1] = {mc_node_astype(x, MLX_FLOAT32, fn)};
    if (!in[0])
        return 1;
    mc_array *r = mc_node_new(fn, MC_PRIM_HADAMARD, in, 1, &p, sizeof p);
    mc_array_release(in[0]);
    if (r && dtype != MLX_FLOAT32) {
        mc_array *c = mc_node_astype(r, dtype, fn);
        mc_array_release(r);
        r = c;
    }
    return mc_op_store(res, r, fn);
}
