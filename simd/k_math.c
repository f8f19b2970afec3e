/* Floating-point unary kernels of one ISA (compiled once per ISA): roots,
 * exponentials, logarithms, trigonometric and hyperbolic functions,
 * sigmoid, erf, erfinv and rounding, for float32 and float64 (vec_math.h)
 * and float16 / bfloat16 through float32. The integer entries of floor,
 * ceil and round (copies in MLX) are in common.c. */
#include "simd/kern.h"
#include "simd/vec_math.h"

static inline mc_vf32 mc_rsqrt_f32(mc_vf32 x) { return 1.0f / mc_sqrt_f32(x); }
static inline mc_vf64 mc_rsqrt_f64(mc_vf64 x) { return 1.0 / mc_sqrt_f64(x); }
static inline mc_vf32 mc_recip_f32(mc_vf32 x) { return 1.0f / x; }
static inline mc_vf64 mc_recip_f64(mc_vf64 x) { return 1.0 / x; }

/* name_f32, name_f64, name_f16, name_bf16 from the vec_math.h pair mc_fn_* */
#define MC_FLOAT_UNARY(name, fn)                                              \
    MC_UNARY(name##_f32, float, mc_vf32, float, mc_vf32, mc_##fn##_f32)       \
    MC_UNARY(name##_f64, double, mc_vf64, double, mc_vf64, mc_##fn##_f64)     \
    MC_HALF_UNARY(name, name##_f32, 2)

MC_FLOAT_UNARY(sqrt, sqrt)
MC_FLOAT_UNARY(rsqrt, rsqrt)
MC_FLOAT_UNARY(recip, recip)
MC_FLOAT_UNARY(exp, exp)
MC_FLOAT_UNARY(expm1, expm1)
MC_FLOAT_UNARY(log, log)
MC_FLOAT_UNARY(log1p, log1p)
MC_FLOAT_UNARY(log2, log2)
MC_FLOAT_UNARY(log10, log10)
MC_FLOAT_UNARY(sin, sin)
MC_FLOAT_UNARY(cos, cos)
MC_FLOAT_UNARY(tan, tan)
MC_FLOAT_UNARY(asin, asin)
MC_FLOAT_UNARY(acos, acos)
MC_FLOAT_UNARY(atan, atan)
MC_FLOAT_UNARY(sinh, sinh)
MC_FLOAT_UNARY(cosh, cosh)
MC_FLOAT_UNARY(tanh, tanh)
MC_FLOAT_UNARY(asinh, asinh)
MC_FLOAT_UNARY(acosh, acosh)
MC_FLOAT_UNARY(atanh, atanh)
MC_FLOAT_UNARY(sigmoid, sigmoid)
MC_FLOAT_UNARY(erf, erf)
MC_FLOAT_UNARY(erfinv, erfinv)
MC_FLOAT_UNARY(floor, floor)
MC_FLOAT_UNARY(ceil, ceil)
MC_FLOAT_UNARY(rint, rint)
#undef MC_FLOAT_UNARY

#define MC_SET_FLOAT_UNARY(t, op, name)                                       \
    do {                                                                      \
        (t)->unary[op][MLX_FLOAT32] = name##_f32;                             \
        (t)->unary[op][MLX_FLOAT64] = name##_f64;                             \
        (t)->unary[op][MLX_FLOAT16] = name##_f16;                             \
        (t)->unary[op][MLX_BFLOAT16] = name##_bf16;                           \
    } while (0)

void MC_ISA_FN(mc_fill_math)(mc_kernel_table *t)
{
    MC_SET_FLOAT_UNARY(t, MC_U_SQRT, sqrt);
    MC_SET_FLOAT_UNARY(t, MC_U_RSQRT, rsqrt);
    MC_SET_FLOAT_UNARY(t, MC_U_RECIPROCAL, recip);
    MC_SET_FLOAT_UNARY(t, MC_U_EXP, exp);
    MC_SET_FLOAT_UNARY(t, MC_U_EXPM1, expm1);
    MC_SET_FLOAT_UNARY(t, MC_U_LOG, log);
    MC_SET_FLOAT_UNARY(t, MC_U_LOG1P, log1p);
    MC_SET_FLOAT_UNARY(t, MC_U_LOG2, log2);
    MC_SET_FLOAT_UNARY(t, MC_U_LOG10, log10);
    MC_SET_FLOAT_UNARY(t, MC_U_SIN, sin);
    MC_SET_FLOAT_UNARY(t, MC_U_COS, cos);
    MC_SET_FLOAT_UNARY(t, MC_U_TAN, tan);
    MC_SET_FLOAT_UNARY(t, MC_U_ARCSIN, asin);
    MC_SET_FLOAT_UNARY(t, MC_U_ARCCOS, acos);
    MC_SET_FLOAT_UNARY(t, MC_U_ARCTAN, atan);
    MC_SET_FLOAT_UNARY(t, MC_U_SINH, sinh);
    MC_SET_FLOAT_UNARY(t, MC_U_COSH, cosh);
    MC_SET_FLOAT_UNARY(t, MC_U_TANH, tanh);
    MC_SET_FLOAT_UNARY(t, MC_U_ARCSINH, asinh);
    MC_SET_FLOAT_UNARY(t, MC_U_ARCCOSH, acosh);
    MC_SET_FLOAT_UNARY(t, MC_U_ARCTANH, atanh);
    MC_SET_FLOAT_UNARY(t, MC_U_SIGMOID, sigmoid);
    MC_SET_FLOAT_UNARY(t, MC_U_ERF, erf);
    MC_SET_FLOAT_UNARY(t, MC_U_ERFINV, erfinv);
    MC_SET_FLOAT_UNARY(t, MC_U_FLOOR, floor);
    MC_SET_FLOAT_UNARY(t, MC_U_CEIL, ceil);
    MC_SET_FLOAT_UNARY(t, MC_U_ROUND, rint);
}
