/* Owns the elementwise compositions of mlx-c's misc group: nan_to_num,
 * isclose, allclose and array_equal, built from the same nodes MLX
 * composes them from (mlx/ops.cpp). */
#include <float.h>

#include "ops/ew.h"
#include "runtime/error.h"

/* The largest finite value of a dtype nan_to_num supports (MLX's
 * numeric_limits<T>::max() as a float); false for the others. */
static bool finite_max(mlx_dtype t, float *out)
{
    switch (t) {
    case MLX_FLOAT32:
        *out = FLT_MAX;
        return true;
    case MLX_FLOAT16:
        *out = 65504.0f;
        return true;
    case MLX_BFLOAT16:
        *out = 0x1.fep127f; /* bits 0x7f7f */
        return true;
    default:
        return false;
    }
}

int mlx_nan_to_num(mlx_array *res, const mlx_array a, float nan, mlx_optional_float posinf,
                   mlx_optional_float neginf, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, "nan_to_num", res, a, &x))
        return 1;
    mlx_dtype t = x->dtype;
    if (!mc_dtype_is_inexact(t))
        return mc_ew_finish(&e, res, x);
    /* MLX looks the limit up only for a bound not given, so float64 and
     * complex64 work when both bounds are */
    float max = 0.0f;
    if ((!posinf.has_value || !neginf.has_value) && !finite_max(t, &max))
        return mc_error("[nan_to_num] Does not yet support given type: %s.", mc_dtype_name(t));
    float hi = posinf.has_value ? posinf.value : max;
    float lo = neginf.has_value ? neginf.value : -max;
    mc_array *r = mc_gb_where(&e, mc_gb_unary(&e, MC_U_ISNAN, x), mc_gb_scalar(&e, nan, t), x);
    r = mc_gb_where(&e, mc_gb_unary(&e, MC_U_ISPOSINF, x), mc_gb_scalar(&e, hi, t), r);
    r = mc_gb_where(&e, mc_gb_unary(&e, MC_U_ISNEGINF, x), mc_gb_scalar(&e, lo, t), r);
    return mc_ew_finish(&e, res, r);
}

static mc_array *or_(mc_gb *e, mc_array *p, mc_array *q) { return mc_gb_binary(e, MC_B_LOGICAL_OR, p, q, MLX_BOOL); }
static mc_array *and_(mc_gb *e, mc_array *p, mc_array *q) { return mc_gb_binary(e, MC_B_LOGICAL_AND, p, q, MLX_BOOL); }

/* |a - b| <= atol + rtol * |b|, corrected for infinities (equal only to the
 * same infinity) and, with equal_nan, true where both are NaN. rtol and
 * atol enter as float32 scalars (MLX's array(double) is float32), so they
 * promote with b: a float16 b compares in float32, a float64 b in float64. */
static mc_array *isclose_node(mc_gb *e, mc_array *a, mc_array *b, double rtol, double atol, bool equal_nan)
{
    mc_array *rhs = mc_gb_promoted(e, MC_B_MULTIPLY, mc_gb_scalar(e, rtol, MLX_FLOAT32),
                                   mc_gb_unary(e, MC_U_ABS, b), false);
    rhs = mc_gb_promoted(e, MC_B_ADD, mc_gb_scalar(e, atol, MLX_FLOAT32), rhs, false);
    mc_array *lhs = mc_gb_unary(e, MC_U_ABS, mc_gb_promoted(e, MC_B_SUBTRACT, a, b, false));
    mc_array *out = mc_gb_promoted(e, MC_B_LESS_EQUAL, lhs, rhs, false);

    mc_array *a_pos = mc_ew_float_class(e, MC_U_ISPOSINF, a);
    mc_array *b_pos = mc_ew_float_class(e, MC_U_ISPOSINF, b);
    mc_array *a_neg = mc_ew_float_class(e, MC_U_ISNEGINF, a);
    mc_array *b_neg = mc_ew_float_class(e, MC_U_ISNEGINF, b);
    mc_array *any_inf = or_(e, or_(e, a_pos, a_neg), or_(e, b_pos, b_neg));
    mc_array *both_inf = or_(e, and_(e, a_pos, b_pos), and_(e, a_neg, b_neg));
    out = and_(e, out, mc_gb_unary(e, MC_U_LOGICAL_NOT, any_inf));
    out = or_(e, out, both_inf);
    if (equal_nan)
        out = or_(e, out, and_(e, mc_ew_float_class(e, MC_U_ISNAN, a), mc_ew_float_class(e, MC_U_ISNAN, b)));
    return out;
}

int mlx_isclose(mlx_array *res, const mlx_array a, const mlx_array b, double rtol, double atol, bool equal_nan,
                const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "isclose", res, a, b, &x, &y))
        return 1;
    return mc_ew_finish(&e, res, isclose_node(&e, x, y, rtol, atol, equal_nan));
}

/* Stores all(r) over every axis (a 0-d bool, MLX's all(a, keepdims =
 * false)) into *res and ends the scope, which holds r. */
static int store_all(mc_gb *e, mlx_array *res, mc_array *r, mlx_stream s)
{
    if (!r) {
        mc_gb_end(e);
        return 1;
    }
    mlx_array out = mlx_array_new();
    int rc = mlx_all(&out, mc_handle(r), false, s);
    mc_gb_end(e);
    return rc ? 1 : mc_op_store(res, mc_arr(out), e->fn);
}

int mlx_allclose(mlx_array *res, const mlx_array a, const mlx_array b, double rtol, double atol, bool equal_nan,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "allclose", res, a, b, &x, &y))
        return 1;
    return store_all(&e, res, isclose_node(&e, x, y, rtol, atol, equal_nan), s);
}

int mlx_array_equal(mlx_array *res, const mlx_array a, const mlx_array b, bool equal_nan, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x, *y;
    if (mc_ew_args2(&e, "array_equal", res, a, b, &x, &y))
        return 1;
    /* different shapes are unequal, not an error */
    bool same = x->ndim == y->ndim;
    for (int i = 0; same && i < x->ndim; i++)
        same = x->shape[i] == y->shape[i];
    if (!same)
        return mc_ew_finish(&e, res, mc_gb_scalar(&e, 0.0, MLX_BOOL));
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    mc_array *eq = mc_gb_binary(&e, MC_B_EQUAL, x, y, t);
    /* MLX's NaN-equal: x == y, or both NaN (only inexact types hold NaN) */
    if (equal_nan && mc_dtype_is_inexact(t)) {
        mc_array *xt = mc_gb_astype(&e, x, t), *yt = mc_gb_astype(&e, y, t);
        mc_array *both = and_(&e, mc_gb_unary(&e, MC_U_ISNAN, xt), mc_gb_unary(&e, MC_U_ISNAN, yt));
        eq = or_(&e, eq, both);
    }
    return store_all(&e, res, eq, s);
}
