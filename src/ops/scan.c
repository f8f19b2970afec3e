/* Owns the scan ops: cumsum, cumprod, cummax, cummin and logcumsumexp
 * along one axis, forward or reverse, inclusive or exclusive (mlx-c
 * v0.6.0 has only the axis forms). Checks and dtypes are MLX's: the axis
 * must be in range ("[cumsum] Axis 2 is out of bounds for array with 2
 * dimensions."), a sum of bool counts in int32, everything else keeps the
 * input's dtype. */
#include <string.h>

#include "graph/prims_scan.h"
#include "ops/op_util.h"
#include "runtime/error.h"
#include "simd/reduce.h"

static int scan_op(mlx_array *res, mlx_array a, int axis, bool reverse, bool inclusive, int op, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (axis >= x->ndim || axis < -x->ndim)
        return mc_error("[%s] Axis %d is out of bounds for array with %d dimensions.", fn, axis, x->ndim);
    mc_scan_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.axis = axis < 0 ? axis + x->ndim : axis;
    p.reverse = reverse;
    p.inclusive = inclusive;
    return mc_op_store(res, mc_node_new(fn, MC_PRIM_SCAN, &x, 1, &p, sizeof p), fn);
}

int mlx_cumsum(mlx_array *res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scan_op(res, a, axis, reverse, inclusive, MC_S_SUM, "cumsum");
}

int mlx_cumprod(mlx_array *res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scan_op(res, a, axis, reverse, inclusive, MC_S_PROD, "cumprod");
}

int mlx_cummax(mlx_array *res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scan_op(res, a, axis, reverse, inclusive, MC_S_MAX, "cummax");
}

int mlx_cummin(mlx_array *res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scan_op(res, a, axis, reverse, inclusive, MC_S_MIN, "cummin");
}

int mlx_logcumsumexp(mlx_array *res, const mlx_array a, int axis, bool reverse, bool inclusive,
                     const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scan_op(res, a, axis, reverse, inclusive, MC_S_LOGADDEXP, "logcumsumexp");
}
