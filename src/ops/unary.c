/* Owns the arithmetic and math functions of one array: abs ... erfinv,
 * floor, ceil, round, degrees, radians, stop_gradient and the complex
 * parts (conjugate, real, imag). Dtype rules are MLX's (mlx/ops.cpp):
 * the math functions run in at_least_float of the input, the arithmetic
 * ones keep the input's dtype, and a few refuse complex64. */
#include <math.h>

#include "ops/ew.h"
#include "runtime/error.h"

/* How a function treats its input's dtype. */
enum {
    KEEP = 0,        /* runs in a's dtype */
    TO_FLOAT = 1,    /* runs in at_least_float(a): integers and bool become float32 */
    NO_COMPLEX = 2,  /* complex64 input is refused, as MLX does */
    NO_BOOL = 4,     /* bool input is refused (negative) */
};

static int unary_op(mlx_array *res, mlx_array a, mc_unary_op op, int rule, const char *fn)
{
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, fn, res, a, &x))
        return 1;
    if ((rule & NO_COMPLEX) && x->dtype == MLX_COMPLEX64)
        return mc_error("[%s] Not supported for complex64.", fn);
    if ((rule & NO_BOOL) && x->dtype == MLX_BOOL)
        return mc_error("[%s] Not supported for bool, use logical_not instead.", fn);
    if (rule & TO_FLOAT)
        x = mc_gb_astype(&e, x, mc_at_least_float(x->dtype));
    return mc_ew_finish(&e, res, mc_gb_unary(&e, op, x));
}

/* ---- keep the input's dtype ---- */

int mlx_abs(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    /* complex64 gives its float32 magnitude (the kernel writes float32) */
    return unary_op(res, a, MC_U_ABS, KEEP, "abs");
}

int mlx_negative(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_NEGATIVE, NO_BOOL, "negative");
}

int mlx_sign(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_SIGN, KEEP, "sign");
}

int mlx_square(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_SQUARE, KEEP, "square");
}

int mlx_floor(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    /* integers: MLX's Floor is a no-op copy (the kernel table's too) */
    return unary_op(res, a, MC_U_FLOOR, NO_COMPLEX, "floor");
}

int mlx_ceil(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_CEIL, NO_COMPLEX, "ceil");
}

/* ---- at least float ---- */

int mlx_sqrt(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_SQRT, TO_FLOAT, "sqrt");
}

int mlx_rsqrt(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_RSQRT, TO_FLOAT, "rsqrt");
}

/* MLX divides array(1.0f, at_least_float(a)) by a: the same values */
int mlx_reciprocal(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_RECIPROCAL, TO_FLOAT, "reciprocal");
}

int mlx_exp(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_EXP, TO_FLOAT, "exp");
}

int mlx_expm1(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_EXPM1, TO_FLOAT | NO_COMPLEX, "expm1");
}

int mlx_log(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_LOG, TO_FLOAT, "log");
}

int mlx_log1p(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_LOG1P, TO_FLOAT, "log1p");
}

int mlx_log2(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_LOG2, TO_FLOAT, "log2");
}

int mlx_log10(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_LOG10, TO_FLOAT, "log10");
}

int mlx_sin(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_SIN, TO_FLOAT, "sin");
}

int mlx_cos(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_COS, TO_FLOAT, "cos");
}

int mlx_tan(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_TAN, TO_FLOAT, "tan");
}

int mlx_arcsin(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ARCSIN, TO_FLOAT, "arcsin");
}

int mlx_arccos(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ARCCOS, TO_FLOAT, "arccos");
}

int mlx_arctan(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ARCTAN, TO_FLOAT, "arctan");
}

int mlx_sinh(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_SINH, TO_FLOAT, "sinh");
}

int mlx_cosh(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_COSH, TO_FLOAT, "cosh");
}

int mlx_tanh(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_TANH, TO_FLOAT, "tanh");
}

int mlx_arcsinh(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ARCSINH, TO_FLOAT, "arcsinh");
}

int mlx_arccosh(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ARCCOSH, TO_FLOAT, "arccosh");
}

int mlx_arctanh(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ARCTANH, TO_FLOAT, "arctanh");
}

int mlx_sigmoid(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_SIGMOID, TO_FLOAT | NO_COMPLEX, "sigmoid");
}

int mlx_erf(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ERF, TO_FLOAT | NO_COMPLEX, "erf");
}

int mlx_erfinv(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return unary_op(res, a, MC_U_ERFINV, TO_FLOAT | NO_COMPLEX, "erfinv");
}

/* ---- compositions ---- */

int mlx_round(mlx_array *res, const mlx_array a, int decimals, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    if (decimals == 0)
        return unary_op(res, a, MC_U_ROUND, KEEP, "round");
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, "round", res, a, &x))
        return 1;
    /* MLX: rint(a * scale) * (1 / scale) in at_least_float(a), then back to
     * a's dtype; scale is a float (10^decimals rounded to float), so its
     * reciprocal is a float division too */
    mlx_dtype t = mc_at_least_float(x->dtype);
    float scale = (float)pow(10.0, decimals);
    float inv = 1.0f / scale;
    mc_array *r = mc_gb_promoted(&e, MC_B_MULTIPLY, x, mc_gb_scalar(&e, scale, t), false);
    r = mc_gb_unary(&e, MC_U_ROUND, r);
    r = mc_gb_promoted(&e, MC_B_MULTIPLY, r, mc_gb_scalar(&e, inv, t), false);
    return mc_ew_finish(&e, res, mc_gb_astype(&e, r, x->dtype));
}

static int scale_by(mlx_array *res, mlx_array a, double factor, const char *fn)
{
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, fn, res, a, &x))
        return 1;
    mc_array *c = mc_gb_scalar(&e, factor, mc_at_least_float(x->dtype));
    return mc_ew_finish(&e, res, mc_gb_promoted(&e, MC_B_MULTIPLY, x, c, false));
}

/* pi to double precision (M_PI is POSIX, not C11) */
static const double mc_pi = 3.14159265358979323846;

int mlx_degrees(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scale_by(res, a, 180.0 / mc_pi, "degrees");
}

int mlx_radians(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scale_by(res, a, mc_pi / 180.0, "radians");
}

int mlx_stop_gradient(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, "stop_gradient", res, a, &x))
        return 1;
    mc_array *r = mc_gb_hold(&e, mc_node_new(e.fn, MC_PRIM_STOP_GRADIENT, &x, 1, NULL, 0));
    return mc_ew_finish(&e, res, r);
}

/* ---- complex parts: identities (or zeros) for real dtypes, as MLX ---- */

static int complex_part(mlx_array *res, mlx_array a, mc_unary_op op, const char *fn)
{
    mc_gb e;
    mc_array *x;
    if (mc_ew_args1(&e, fn, res, a, &x))
        return 1;
    mc_array *r = x;
    if (x->dtype == MLX_COMPLEX64)
        r = mc_gb_unary(&e, op, x);
    else if (op == MC_U_IMAG)
        r = mc_gb_full_like(&e, 0.0, x->dtype, x); /* MLX's zeros_like(a) */
    return mc_ew_finish(&e, res, r);
}

int mlx_conjugate(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return complex_part(res, a, MC_U_CONJUGATE, "conjugate");
}

int mlx_real(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return complex_part(res, a, MC_U_REAL, "real");
}

int mlx_imag(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return complex_part(res, a, MC_U_IMAG, "imag");
}
