/* Owns the arithmetic of two arrays beyond add/subtract/multiply/divide
 * (arith.c): floor_divide, remainder, divmod, power, maximum, minimum,
 * arctan2, logaddexp. Rules are MLX's (mlx/ops.cpp): operands promote to
 * a common dtype and broadcast; arctan2 and logaddexp work in at least
 * float. */
#include "handles/vector.h"
#include "ops/ew.h"
#include "runtime/error.h"

static int promoted_op(mlx_array *res, mlx_array a, mlx_array b, mc_binary_op op, bool to_float,
                       const char *fn)
{
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, fn, res, a, b, &x, &y))
        return 1;
    return mc_ew_finish(&e, res, mc_gb_promoted(&e, op, x, y, to_float));
}

/* floor(a / b) of floats, as MLX composes it: the division rounds to the
 * dtype before the floor (which matters for float16 and bfloat16). */
static mc_array *float_floor_divide(mc_gb *e, mc_array *x, mc_array *y)
{
    return mc_gb_unary(e, MC_U_FLOOR, mc_gb_promoted(e, MC_B_DIVIDE, x, y, true));
}

int mlx_floor_divide(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "floor_divide", res, a, b, &x, &y))
        return 1;
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (t == MLX_COMPLEX64)
        return mc_error("[floor_divide] Not supported for complex64.");
    if (mc_dtype_is_float(t))
        return mc_ew_finish(&e, res, float_floor_divide(&e, x, y));
    /* Integers: MLX builds its Divide primitive here, whose kernel is C's
     * division, truncating toward zero (mlx/ops.cpp floor_divide). Only
     * divmod floors integer quotients. */
    return mc_ew_finish(&e, res, mc_gb_binary(&e, MC_B_DIVIDE, x, y, t));
}

int mlx_remainder(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "remainder", res, a, b, &x, &y))
        return 1;
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (t == MLX_COMPLEX64)
        return mc_error("[remainder] Complex type not supported.");
    /* the result takes b's sign, as Python's % */
    return mc_ew_finish(&e, res, mc_gb_binary(&e, MC_B_REMAINDER, x, y, t));
}

int mlx_divmod(mlx_vector_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "divmod", res, a, b, &x, &y))
        return 1;
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    if (t == MLX_COMPLEX64)
        return mc_error("[divmod] Complex type not supported.");
    mc_array *out[2] = {NULL, NULL};
    mc_gb_divmod(&e, x, y, t, out);
    int rc = out[0] && out[1] ? mc_vec_assign(e.fn, res, out, 2) : 1;
    mc_gb_end(&e);
    return rc;
}

int mlx_power(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    /* integer ** integer stays integer (negative exponents give 0) */
    return promoted_op(res, a, b, MC_B_POWER, false, "power");
}

int mlx_maximum(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return promoted_op(res, a, b, MC_B_MAXIMUM, false, "maximum");
}

int mlx_minimum(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return promoted_op(res, a, b, MC_B_MINIMUM, false, "minimum");
}

int mlx_arctan2(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "arctan2", res, a, b, &x, &y))
        return 1;
    if (x->dtype == MLX_COMPLEX64 || y->dtype == MLX_COMPLEX64)
        return mc_error("[arctan2] Not supported for complex64.");
    return mc_ew_finish(&e, res, mc_gb_promoted(&e, MC_B_ARCTAN2, x, y, true));
}

int mlx_logaddexp(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return promoted_op(res, a, b, MC_B_LOGADDEXP, true, "logaddexp");
}
