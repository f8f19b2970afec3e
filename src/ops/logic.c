/* Owns the ops with bool or bit results: logical_not/and/or, the tests of
 * float classes (isnan, isinf, isfinite, isposinf, isneginf), the six
 * comparisons, and the bitwise ops and shifts. Rules are MLX's
 * (mlx/ops.cpp): comparisons promote then compare; logical ops convert
 * both sides to bool; bitwise ops need integer or bool types. */
#include "ops/ew.h"
#include "runtime/error.h"

/* ---- one array ---- */

int mlx_logical_not(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, "logical_not", res, a, &x))
        return 1;
    x = mc_gb_astype(&e, x, MLX_BOOL);
    return mc_ew_finish(&e, res, mc_gb_unary(&e, MC_U_LOGICAL_NOT, x));
}

static int float_class(mlx_array *res, mlx_array a, mc_unary_op op, const char *fn)
{
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, fn, res, a, &x))
        return 1;
    return mc_ew_finish(&e, res, mc_ew_float_class(&e, op, x));
}

int mlx_isnan(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return float_class(res, a, MC_U_ISNAN, "isnan");
}

int mlx_isinf(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return float_class(res, a, MC_U_ISINF, "isinf");
}

int mlx_isfinite(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return float_class(res, a, MC_U_ISFINITE, "isfinite");
}

int mlx_isposinf(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return float_class(res, a, MC_U_ISPOSINF, "isposinf");
}

int mlx_isneginf(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return float_class(res, a, MC_U_ISNEGINF, "isneginf");
}

int mlx_bitwise_invert(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, "bitwise_invert", res, a, &x))
        return 1;
    if (mc_dtype_is_inexact(x->dtype))
        return mc_error("[bitwise_invert] Bitwise inverse only allowed on integer types.");
    /* MLX inverts a bool array with logical_not */
    mc_unary_op op = x->dtype == MLX_BOOL ? MC_U_LOGICAL_NOT : MC_U_BITWISE_INVERT;
    return mc_ew_finish(&e, res, mc_gb_unary(&e, op, x));
}

/* ---- two arrays ---- */

static int compare(mlx_array *res, mlx_array a, mlx_array b, mc_binary_op op, const char *fn)
{
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, fn, res, a, b, &x, &y))
        return 1;
    return mc_ew_finish(&e, res, mc_gb_promoted(&e, op, x, y, false));
}

int mlx_equal(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return compare(res, a, b, MC_B_EQUAL, "equal");
}

int mlx_not_equal(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return compare(res, a, b, MC_B_NOT_EQUAL, "not_equal");
}

int mlx_less(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return compare(res, a, b, MC_B_LESS, "less");
}

int mlx_less_equal(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return compare(res, a, b, MC_B_LESS_EQUAL, "less_equal");
}

int mlx_greater(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return compare(res, a, b, MC_B_GREATER, "greater");
}

int mlx_greater_equal(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return compare(res, a, b, MC_B_GREATER_EQUAL, "greater_equal");
}

static int logical(mlx_array *res, mlx_array a, mlx_array b, mc_binary_op op, const char *fn)
{
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, fn, res, a, b, &x, &y))
        return 1;
    return mc_ew_finish(&e, res, mc_gb_binary(&e, op, x, y, MLX_BOOL));
}

int mlx_logical_and(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return logical(res, a, b, MC_B_LOGICAL_AND, "logical_and");
}

int mlx_logical_or(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return logical(res, a, b, MC_B_LOGICAL_OR, "logical_or");
}

/* MLX's bitwise_impl: the work type t must be integer or bool; the message
 * names the dtypes of the arrays it was given (for right_shift those are
 * already converted to t, so both read t). */
static int bitwise(mlx_array *res, mlx_array a, mlx_array b, mc_binary_op op, const char *fn)
{
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, fn, res, a, b, &x, &y))
        return 1;
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    bool shift = op == MC_B_LEFT_SHIFT || op == MC_B_RIGHT_SHIFT;
    if (shift && t == MLX_BOOL)
        t = MLX_UINT8; /* shifting bools shifts bytes */
    if (!mc_ew_is_int_or_bool(t)) {
        mlx_dtype shown_a = op == MC_B_RIGHT_SHIFT ? t : x->dtype;
        mlx_dtype shown_b = op == MC_B_RIGHT_SHIFT ? t : y->dtype;
        return mc_error("[%s] Only allowed on integer or boolean types but got types %s and %s.", fn,
                        mc_dtype_name(shown_a), mc_dtype_name(shown_b));
    }
    return mc_ew_finish(&e, res, mc_gb_binary(&e, op, x, y, t));
}

int mlx_bitwise_and(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return bitwise(res, a, b, MC_B_BITWISE_AND, "bitwise_and");
}

int mlx_bitwise_or(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return bitwise(res, a, b, MC_B_BITWISE_OR, "bitwise_or");
}

int mlx_bitwise_xor(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return bitwise(res, a, b, MC_B_BITWISE_XOR, "bitwise_xor");
}

int mlx_left_shift(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return bitwise(res, a, b, MC_B_LEFT_SHIFT, "left_shift");
}

int mlx_right_shift(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return bitwise(res, a, b, MC_B_RIGHT_SHIFT, "right_shift");
}
