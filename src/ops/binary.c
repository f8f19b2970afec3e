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

/* The floored quotient of integers or bools in t (as Python's //). C's
 * division truncates, which is the floor unless t is signed, the division
 * is inexact and the operands' signs differ: then the quotient steps down
 * by one. Inexactness is read from the floored remainder r (built here if
 * NULL), which is exact in every case, unlike (a - r) / b, which can
 * overflow. */
static mc_array *int_floor_quotient(mc_gb *e, mc_array *x, mc_array *y, mc_array *r, mlx_dtype t)
{
    mc_array *q = mc_gb_binary(e, MC_B_DIVIDE, x, y, t);
    if (mc_dtype_kind(t) != MC_KIND_INT)
        return q;
    if (!r)
        r = mc_gb_binary(e, MC_B_REMAINDER, x, y, t);
    mc_array *zero = mc_gb_scalar(e, 0.0, t);
    mc_array *inexact = mc_gb_binary(e, MC_B_NOT_EQUAL, r, zero, t);
    mc_array *signs = mc_gb_binary(e, MC_B_BITWISE_XOR, x, y, t);
    mc_array *differ = mc_gb_binary(e, MC_B_LESS, signs, zero, t);
    mc_array *step = mc_gb_binary(e, MC_B_LOGICAL_AND, inexact, differ, MLX_BOOL);
    return mc_gb_binary(e, MC_B_SUBTRACT, q, mc_gb_astype(e, step, t), t);
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
    mc_array *out[2] = {NULL, mc_gb_binary(&e, MC_B_REMAINDER, x, y, t)};
    /* MLX's DivMod: the floored quotient, for integers too */
    if (mc_dtype_is_float(t))
        out[0] = float_floor_divide(&e, x, y);
    else
        out[0] = int_floor_quotient(&e, x, y, out[1], t);
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
