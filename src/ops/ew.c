/* Owns the ops-level building blocks of the elementwise ops (ew.h). */
#include "graph/prims_binary.h"
#include "graph/prims_unary.h"
#include "ops/ew.h"

#include "runtime/error.h"

int mc_ew_finish(mc_gb *s, mlx_array *res, mc_array *r)
{
    const char *fn = s->fn;
    mc_array *out = mc_gb_finish_ref(s, r);
    return out ? mc_op_store(res, out, fn) : 1;
}

mc_array *mc_ew_arg(mc_gb *s, mlx_array a, const char *name) { return mc_op_arg(a, s->fn, name); }

int mc_ew_args1(mc_gb *s, const char *fn, const void *res, mlx_array a, mc_array **x)
{
    mc_gb_begin(s, fn);
    if (mc_op_check_res(res, fn))
        return 1;
    *x = mc_op_arg(a, fn, "a");
    return *x ? 0 : 1;
}

int mc_ew_args2(mc_gb *s, const char *fn, const void *res, mlx_array a, mlx_array b, mc_array **x,
                mc_array **y)
{
    if (mc_ew_args1(s, fn, res, a, x))
        return 1;
    *y = mc_op_arg(b, fn, "b");
    return *y ? 0 : 1;
}

mc_array *mc_ew_float_class(mc_gb *s, mc_unary_op op, mc_array *x)
{
    if (x && !mc_dtype_is_inexact(x->dtype))
        return mc_gb_full_like(s, op == MC_U_ISFINITE ? 1.0 : 0.0, MLX_BOOL, x);
    return mc_gb_unary(s, op, x);
}
