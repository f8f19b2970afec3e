/* Owns the four arithmetic ops: add, subtract, multiply, divide. */
#include "ops/op_util.h"

int mlx_add(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mc_op_binary(res, a, b, MC_B_ADD, false, "add");
}

int mlx_subtract(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mc_op_binary(res, a, b, MC_B_SUBTRACT, false, "subtract");
}

int mlx_multiply(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mc_op_binary(res, a, b, MC_B_MULTIPLY, false, "multiply");
}

int mlx_divide(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mc_op_binary(res, a, b, MC_B_DIVIDE, true, "divide");
}
