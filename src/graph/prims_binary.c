/* Owns the Binary primitive family: shape/dtype rule and evaluation of all
 * elementwise functions of two arrays (the function is in the params). */
#include "graph/elementwise.h"
#include "graph/prims_binary.h"
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

const mc_prim_info mc_prim_binary = {
    .name = "Binary",
    .arity = 2,
    .infer = binary_infer,
    .eval = binary_eval,
    .name_of = binary_name,
};
