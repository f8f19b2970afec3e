/* Owns the Unary primitive family (every elementwise function of one array;
 * the function is in the params) and StopGradient (the identity, kept as a
 * node so autodiff can see where gradients stop). */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_unary.h"
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

const mc_prim_info mc_prim_unary = {
    .name = "Unary",
    .arity = 1,
    .infer = unary_infer,
    .eval = unary_eval,
    .name_of = unary_name,
};

const mc_prim_info mc_prim_stop_gradient = {
    .name = "StopGradient",
    .arity = 1,
    .infer = stop_gradient_infer,
    .eval = stop_gradient_eval,
};
