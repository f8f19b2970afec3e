/* Owns the Unary primitive family (every elementwise function of one array;
 * the function is in the params) and StopGradient (the identity, kept as a
 * node so autodiff can see where gradients stop). */
#include <math.h>
#include <string.h>

#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_unary.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

/* MLX's primitive names where MLX has a primitive; the tests of the float
 * classes (IsNaN...) are compositions in MLX and get names of their own. */
static const char *const unary_names[MC_U_COUNT] = {
    [MC_U_ABS] = "Abs",
    [MC_U_NEGATIVE] = "Negative",
    [MC_U_SIGN] = "Sign",
    [MC_U_SQUARE] = "Square",
    [MC_U_SQRT] = "Sqrt",
    [MC_U_RSQRT] = "Rsqrt",
    [MC_U_RECIPROCAL] = "Reciprocal",
    [MC_U_EXP] = "Exp",
    [MC_U_EXPM1] = "Expm1",
    [MC_U_LOG] = "Log",
    [MC_U_LOG1P] = "Log1p",
    [MC_U_LOG2] = "Log2",
    [MC_U_LOG10] = "Log10",
    [MC_U_SIN] = "Sin",
    [MC_U_COS] = "Cos",
    [MC_U_TAN] = "Tan",
    [MC_U_ARCSIN] = "ArcSin",
    [MC_U_ARCCOS] = "ArcCos",
    [MC_U_ARCTAN] = "ArcTan",
    [MC_U_SINH] = "Sinh",
    [MC_U_COSH] = "Cosh",
    [MC_U_TANH] = "Tanh",
    [MC_U_ARCSINH] = "ArcSinh",
    [MC_U_ARCCOSH] = "ArcCosh",
    [MC_U_ARCTANH] = "ArcTanh",
    [MC_U_SIGMOID] = "Sigmoid",
    [MC_U_ERF] = "Erf",
    [MC_U_ERFINV] = "ErfInv",
    [MC_U_FLOOR] = "Floor",
    [MC_U_CEIL] = "Ceil",
    [MC_U_ROUND] = "Round",
    [MC_U_LOGICAL_NOT] = "LogicalNot",
    [MC_U_ISNAN] = "IsNaN",
    [MC_U_ISINF] = "IsInf",
    [MC_U_ISFINITE] = "IsFinite",
    [MC_U_ISPOSINF] = "IsPosInf",
    [MC_U_ISNEGINF] = "IsNegInf",
    [MC_U_BITWISE_INVERT] = "BitwiseInvert",
    [MC_U_CONJUGATE] = "Conjugate",
    [MC_U_REAL] = "Real",
    [MC_U_IMAG] = "Imag",
};

static const char *unary_name(const void *params)
{
    mc_unary_op op = ((const mc_unary_params *)params)->op;
    return (unsigned)op < MC_U_COUNT ? unary_names[op] : "Unary";
}

mlx_dtype mc_unary_out_dtype(mc_unary_op op, mlx_dtype d)
{
    switch (op) {
    case MC_U_LOGICAL_NOT:
    case MC_U_ISNAN:
    case MC_U_ISINF:
    case MC_U_ISFINITE:
    case MC_U_ISPOSINF:
    case MC_U_ISNEGINF:
        return MLX_BOOL;
    case MC_U_ABS:
    case MC_U_REAL:
    case MC_U_IMAG:
        /* the magnitude and the parts of a complex64 are float32 */
        return d == MLX_COMPLEX64 ? MLX_FLOAT32 : d;
    default:
        return d;
    }
}

static void copy_shape(mc_meta *out, const mc_array *a)
{
    out->ndim = a->ndim;
    if (a->ndim)
        memcpy(out->shape, a->shape, sizeof(int) * (size_t)a->ndim);
}

static int unary_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    mc_unary_op op = ((const mc_unary_params *)params)->op;
    if ((unsigned)op >= MC_U_COUNT)
        return mc_error("[%s] Internal: unknown unary function %d.", fn, (int)op);
    /* ops choose dtypes per MLX first; a missing kernel is what is left */
    if (!mc_kernels()->unary[op][in[0]->dtype])
        return mc_error("[%s] Not supported for dtype %s.", fn, mc_dtype_name(in[0]->dtype));
    out->dtype = mc_unary_out_dtype(op, in[0]->dtype);
    copy_shape(out, in[0]);
    return 0;
}

static int unary_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    mc_unary_op op = ((const mc_unary_params *)params)->op;
    return mc_run_unary(out, in[0], mc_kernels()->unary[op][in[0]->dtype], unary_names[op]);
}

static int stop_gradient_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    (void)fn;
    out->dtype = in[0]->dtype;
    copy_shape(out, in[0]);
    return 0;
}

static int stop_gradient_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    /* the forward value is the input itself: share its buffer and layout */
    mc_array_set_view(out, in[0], in[0]->data, in[0]->strides);
    return 0;
}

/* ---- derivatives ---- */

/* t times the derivative of op at x (out = op(x)): the jvp of the
 * function, and its vjp too (with t the cotangent), since an elementwise
 * derivative is a scale, as MLX's vjp rules of these functions call their
 * jvp. MLX's formulas; NULL (reported) where MLX has no rule. */
static mc_array *unary_tangent(mc_gb *s, mc_unary_op op, mc_array *x, mc_array *out, mc_array *t)
{
    mlx_dtype d = x->dtype;
    switch (op) {
    case MC_U_ABS:
        return mc_gb_promoted(s, MC_B_MULTIPLY, t, mc_gb_unary(s, MC_U_SIGN, x), false);
    case MC_U_NEGATIVE:
        return mc_gb_unary(s, MC_U_NEGATIVE, t);
    case MC_U_SQUARE:
        return mc_gb_op(s, MC_B_MULTIPLY, x, mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scalar(s, 2, d), t));
    case MC_U_SQRT: /* 0.5 t / sqrt(x) */
        return mc_gb_op(s, MC_B_DIVIDE, mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scalar(s, 0.5, d), t), out);
    case MC_U_RSQRT: /* -0.5 t rsqrt(x) / x */
        return mc_gb_op(s, MC_B_MULTIPLY, mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scalar(s, -0.5, d), t),
                        mc_gb_op(s, MC_B_DIVIDE, out, x));
    case MC_U_RECIPROCAL: /* MLX divides 1 by x: -t / x^2 */
        return mc_gb_unary(s, MC_U_NEGATIVE,
                           mc_gb_op(s, MC_B_DIVIDE, t, mc_gb_unary(s, MC_U_SQUARE, x)));
    case MC_U_EXP:
        return mc_gb_op(s, MC_B_MULTIPLY, t, out);
    case MC_U_EXPM1:
        return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_unary(s, MC_U_EXP, x));
    case MC_U_LOG:
        return mc_gb_op(s, MC_B_DIVIDE, t, x);
    case MC_U_LOG2:
    case MC_U_LOG10: /* MLX scales by 1 / log(base) computed in float32 */
        return mc_gb_op(s, MC_B_MULTIPLY,
                        mc_gb_scalar(s, (double)(1.0f / logf(op == MC_U_LOG2 ? 2.0f : 10.0f)), d),
                        mc_gb_op(s, MC_B_DIVIDE, t, x));
    case MC_U_LOG1P:
        return mc_gb_op(s, MC_B_DIVIDE, t, mc_gb_op(s, MC_B_ADD, mc_gb_scalar(s, 1, d), x));
    case MC_U_SIN:
        return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_unary(s, MC_U_COS, x));
    case MC_U_COS:
        return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_unary(s, MC_U_NEGATIVE, mc_gb_unary(s, MC_U_SIN, x)));
    case MC_U_TAN:
        return mc_gb_op(s, MC_B_DIVIDE, t, mc_gb_unary(s, MC_U_SQUARE, mc_gb_unary(s, MC_U_COS, x)));
    case MC_U_ARCSIN:
    case MC_U_ARCCOS: { /* +-t rsqrt(1 - x^2) */
        mc_array *r = mc_gb_unary(
            s, MC_U_RSQRT, mc_gb_op(s, MC_B_SUBTRACT, mc_gb_scalar(s, 1, d), mc_gb_unary(s, MC_U_SQUARE, x)));
        if (op == MC_U_ARCCOS)
            r = mc_gb_unary(s, MC_U_NEGATIVE, r);
        return mc_gb_op(s, MC_B_MULTIPLY, t, r);
    }
    case MC_U_ARCTAN:
        return mc_gb_op(s, MC_B_DIVIDE, t,
                        mc_gb_op(s, MC_B_ADD, mc_gb_scalar(s, 1, d), mc_gb_unary(s, MC_U_SQUARE, x)));
    case MC_U_SINH:
        return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_unary(s, MC_U_COSH, x));
    case MC_U_COSH:
        return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_unary(s, MC_U_SINH, x));
    case MC_U_TANH:
        return mc_gb_op(s, MC_B_DIVIDE, t, mc_gb_unary(s, MC_U_SQUARE, mc_gb_unary(s, MC_U_COSH, x)));
    case MC_U_ARCSINH:
        return mc_gb_op(s, MC_B_MULTIPLY, t,
                        mc_gb_unary(s, MC_U_RSQRT,
                                    mc_gb_op(s, MC_B_ADD, mc_gb_unary(s, MC_U_SQUARE, x), mc_gb_scalar(s, 1, d))));
    case MC_U_ARCCOSH:
        return mc_gb_op(
            s, MC_B_MULTIPLY, t,
            mc_gb_unary(s, MC_U_RSQRT, mc_gb_op(s, MC_B_SUBTRACT, mc_gb_unary(s, MC_U_SQUARE, x), mc_gb_scalar(s, 1, d))));
    case MC_U_ARCTANH:
        return mc_gb_op(s, MC_B_DIVIDE, t,
                        mc_gb_op(s, MC_B_SUBTRACT, mc_gb_scalar(s, 1, d), mc_gb_unary(s, MC_U_SQUARE, x)));
    case MC_U_SIGMOID: { /* t s (1 - s) */
        mc_array *sg = mc_gb_unary(s, MC_U_SIGMOID, x);
        return mc_gb_op(s, MC_B_MULTIPLY, t,
                        mc_gb_op(s, MC_B_MULTIPLY, sg, mc_gb_op(s, MC_B_SUBTRACT, mc_gb_scalar(s, 1, d), sg)));
    }
    case MC_U_ERF: /* 2/sqrt(pi) t exp(-x^2) */
        return mc_gb_op(s, MC_B_MULTIPLY, mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scalar(s, 1.1283791670955126, d), t),
                        mc_gb_unary(s, MC_U_EXP, mc_gb_unary(s, MC_U_NEGATIVE, mc_gb_unary(s, MC_U_SQUARE, x))));
    case MC_U_ERFINV: /* sqrt(pi)/2 t exp(erfinv(x)^2) */
        return mc_gb_op(s, MC_B_MULTIPLY, mc_gb_op(s, MC_B_MULTIPLY, mc_gb_scalar(s, 1 / 1.1283791670955126, d), t),
                        mc_gb_unary(s, MC_U_EXP, mc_gb_unary(s, MC_U_SQUARE, out)));
    case MC_U_SIGN:
    case MC_U_FLOOR:
    case MC_U_CEIL:
    case MC_U_ROUND:
    case MC_U_LOGICAL_NOT:
    case MC_U_ISNAN:
    case MC_U_ISINF:
    case MC_U_ISFINITE:
    case MC_U_ISPOSINF:
    case MC_U_ISNEGINF:
        /* piecewise constant: MLX's zeros of the input */
        return mc_gb_zeros_like(s, x);
    default:
        break;
    }
    s->failed = true;
    mc_error("[%s] Not implemented for %s: MLX has no derivative for it.", s->fn, unary_names[op]);
    return NULL;
}

static int unary_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_unary_op op = ((const mc_unary_params *)node->params)->op;
    mc_array *x = node->inputs[0];
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r;
    if (op == MC_U_REAL) /* the real part's cotangent, as a complex array */
        r = mc_gb_astype(&s, cot, x->dtype);
    else if (op == MC_U_IMAG) /* i times the cotangent */
        r = mc_gb_promoted(&s, MC_B_MULTIPLY, mc_gb_imag_unit(&s), cot, false);
    else
        r = unary_tangent(&s, op, x, node, cot);
    vjps[0] = mc_gb_finish_ref(&s, r);
    return vjps[0] ? 0 : 1;
}

static mc_array *unary_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_unary_op op = ((const mc_unary_params *)node->params)->op;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r;
    if (op == MC_U_REAL || op == MC_U_IMAG)
        r = mc_gb_unary(&s, op, tans[0]);
    else
        r = unary_tangent(&s, op, node->inputs[0], node, tans[0]);
    return mc_gb_finish_ref(&s, r);
}

const mc_prim_info mc_prim_unary = {
    .name = "Unary",
    .arity = 1,
    .infer = unary_infer,
    .eval = unary_eval,
    .vjp = unary_vjp,
    .jvp = unary_jvp,
    .name_of = unary_name,
    .vmap = mc_vmap_same_axis,
};

const mc_prim_info mc_prim_stop_gradient = {
    .name = "StopGradient",
    .arity = 1,
    .infer = stop_gradient_infer,
    .eval = stop_gradient_eval,
    .vjp = mc_vjp_zeros,
    .jvp = mc_jvp_zeros,
    .vmap = mc_vmap_same_axis,
};
