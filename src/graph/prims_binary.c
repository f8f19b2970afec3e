/* Owns the Binary primitive family: shape/dtype rule and evaluation of all
 * elementwise functions of two arrays (the function is in the params). */
#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_binary.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static const char *const binary_names[MC_B_COUNT] = {
    [MC_B_ADD] = "Add",
    [MC_B_SUBTRACT] = "Subtract",
    [MC_B_MULTIPLY] = "Multiply",
    [MC_B_DIVIDE] = "Divide",
    [MC_B_FLOOR_DIVIDE] = "FloorDivide",
    [MC_B_REMAINDER] = "Remainder",
    [MC_B_POWER] = "Power",
    [MC_B_MAXIMUM] = "Maximum",
    [MC_B_MINIMUM] = "Minimum",
    [MC_B_ARCTAN2] = "ArcTan2",
    [MC_B_LOGADDEXP] = "LogAddExp",
    [MC_B_EQUAL] = "Equal",
    [MC_B_EQUAL_NAN] = "NaNEqual",
    [MC_B_NOT_EQUAL] = "NotEqual",
    [MC_B_LESS] = "Less",
    [MC_B_LESS_EQUAL] = "LessEqual",
    [MC_B_GREATER] = "Greater",
    [MC_B_GREATER_EQUAL] = "GreaterEqual",
    [MC_B_LOGICAL_AND] = "LogicalAnd",
    [MC_B_LOGICAL_OR] = "LogicalOr",
    [MC_B_BITWISE_AND] = "BitwiseAnd",
    [MC_B_BITWISE_OR] = "BitwiseOr",
    [MC_B_BITWISE_XOR] = "BitwiseXor",
    [MC_B_LEFT_SHIFT] = "LeftShift",
    [MC_B_RIGHT_SHIFT] = "RightShift",
};

static const char *binary_name(const void *params)
{
    return binary_names[((const mc_binary_params *)params)->op];
}

mlx_dtype mc_binary_out_dtype(mc_binary_op op, mlx_dtype d)
{
    switch (op) {
    case MC_B_EQUAL:
    case MC_B_EQUAL_NAN:
    case MC_B_NOT_EQUAL:
    case MC_B_LESS:
    case MC_B_LESS_EQUAL:
    case MC_B_GREATER:
    case MC_B_GREATER_EQUAL:
    case MC_B_LOGICAL_AND:
    case MC_B_LOGICAL_OR:
        return MLX_BOOL;
    default:
        return d;
    }
}

static int binary_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_binary_params *p = params;
    if (in[0]->dtype != in[1]->dtype)
        return mc_error("[%s] Internal: binary inputs of dtypes %s and %s were not promoted.", fn,
                        mc_dtype_name(in[0]->dtype), mc_dtype_name(in[1]->dtype));
    if (!mc_kernels()->binary[p->op][in[0]->dtype][MC_VV])
        return mc_error("[%s] Not supported for dtype %s.", fn, mc_dtype_name(in[0]->dtype));
    out->dtype = mc_binary_out_dtype(p->op, in[0]->dtype);
    return mc_broadcast_shapes(in[0]->ndim, in[0]->shape, in[1]->ndim, in[1]->shape, &out->ndim,
                               out->shape, fn);
}

static int binary_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_binary_params *p = params;
    return mc_run_binary(out, in[0], in[1], mc_kernels()->binary[p->op][in[0]->dtype],
                         binary_names[p->op]);
}

/* ---- derivatives ---- */

/* t times the partial derivative of op(a, b) (= out) in input i, t
 * broadcastable against the output: MLX's formula for each function. */
static mc_array *binary_tangent(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b, mc_array *out, int i,
                                mc_array *t)
{
    mlx_dtype d = a->dtype;
    switch (op) {
    case MC_B_ADD:
        return t;
    case MC_B_SUBTRACT:
        return i == 0 ? t : mc_gb_unary(s, MC_U_NEGATIVE, t);
    case MC_B_MULTIPLY:
        return mc_gb_op(s, MC_B_MULTIPLY, t, i == 0 ? b : a);
    case MC_B_DIVIDE:
        if (i == 0)
            return mc_gb_op(s, MC_B_DIVIDE, t, b);
        return mc_gb_unary(s, MC_U_NEGATIVE,
                           mc_gb_op(s, MC_B_DIVIDE, mc_gb_op(s, MC_B_MULTIPLY, t, a), mc_gb_unary(s, MC_U_SQUARE, b)));
    case MC_B_REMAINDER: /* a - floor(a / b) b */
        if (i == 0)
            return t;
        return mc_gb_unary(s, MC_U_NEGATIVE,
                           mc_gb_op(s, MC_B_MULTIPLY, mc_gb_unary(s, MC_U_FLOOR, mc_gb_op(s, MC_B_DIVIDE, a, b)), t));
    case MC_B_POWER:
        if (i == 0) /* b a^(b - 1) */
            return mc_gb_op(s, MC_B_MULTIPLY, t,
                            mc_gb_op(s, MC_B_MULTIPLY,
                                     mc_gb_op(s, MC_B_POWER, a, mc_gb_op(s, MC_B_SUBTRACT, b, mc_gb_scalar(s, 1, d))),
                                     b));
        else { /* log(a) a^b, and 0 where a^b is 0 (0 log 0 = 0) */
            mc_array *g = mc_gb_op(s, MC_B_MULTIPLY, mc_gb_unary(s, MC_U_LOG, a), out);
            mc_array *nz = mc_gb_astype(s, out, MLX_BOOL);
            return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_where(s, nz, g, mc_gb_scalar(s, 0, out->dtype)));
        }
    case MC_B_MAXIMUM:
    case MC_B_MINIMUM: { /* the tie goes to b, as MLX */
        mc_binary_op cmp = op == MC_B_MAXIMUM ? (i == 0 ? MC_B_GREATER : MC_B_LESS_EQUAL)
                                              : (i == 0 ? MC_B_LESS : MC_B_GREATER_EQUAL);
        return mc_gb_op(s, MC_B_MULTIPLY, t, mc_gb_binary(s, cmp, a, b, d));
    }
    case MC_B_ARCTAN2: { /* (b, -a) / (a^2 + b^2) */
        mc_array *den = mc_gb_op(s, MC_B_ADD, mc_gb_unary(s, MC_U_SQUARE, a), mc_gb_unary(s, MC_U_SQUARE, b));
        mc_array *num = i == 0 ? b : mc_gb_unary(s, MC_U_NEGATIVE, a);
        return mc_gb_op(s, MC_B_MULTIPLY, num, mc_gb_op(s, MC_B_DIVIDE, t, den));
    }
    case MC_B_LOGADDEXP: { /* sigmoid(a - b), and 1 - that */
        mc_array *sg = mc_gb_unary(s, MC_U_SIGMOID, mc_gb_op(s, MC_B_SUBTRACT, a, b));
        if (i == 1)
            sg = mc_gb_op(s, MC_B_SUBTRACT, mc_gb_scalar(s, 1, d), sg);
        return mc_gb_op(s, MC_B_MULTIPLY, t, sg);
    }
    default:
        /* floor_divide, comparisons, logical and bitwise functions: MLX's
         * zeros (piecewise constant, or not on a continuum) */
        return mc_gb_zeros_like(s, i == 0 ? a : b);
    }
}

static int binary_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    mc_binary_op op = ((const mc_binary_params *)node->params)->op;
    mc_array *a = node->inputs[0], *b = node->inputs[1];
    for (int k = 0; k < nargs; k++) {
        mc_array *in = node->inputs[argnums[k]];
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g = binary_tangent(&s, op, a, b, node, argnums[k], cot);
        /* the Binary node broadcasts its inputs: sum the cotangent back */
        g = mc_gb_sum_to_shape(&s, mc_gb_broadcast_like(&s, g, node), in->ndim, in->shape);
        if (mc_vjp_store(vjps, k, &s, mc_gb_astype(&s, g, in->dtype)))
            return 1;
    }
    return 0;
}

static mc_array *binary_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    mc_binary_op op = ((const mc_binary_params *)node->params)->op;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *r = NULL;
    for (int k = 0; k < nargs; k++) {
        mc_array *g = binary_tangent(&s, op, node->inputs[0], node->inputs[1], node, argnums[k], tans[k]);
        r = k == 0 ? g : mc_gb_op(&s, MC_B_ADD, r, g);
    }
    /* the output's shape and dtype (bool for comparisons: zeros) */
    return mc_gb_finish_ref(&s, mc_gb_astype(&s, mc_gb_broadcast_like(&s, r, node), node->dtype));
}

const mc_prim_info mc_prim_binary = {
    .name = "Binary",
    .arity = 2,
    .infer = binary_infer,
    .eval = binary_eval,
    .vjp = binary_vjp,
    .jvp = binary_jvp,
    .name_of = binary_name,
    .vmap = mc_vmap_elementwise,
};
