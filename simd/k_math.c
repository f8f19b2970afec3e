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

#if MC_VBYTES != 0
/* A float32 kernel of one of vec_math_f32.h's own functions, in one pass
 * over blocks of MC_OWN_VECS vectors: every vector runs the core, and the
 * lanes' keys are folded into one unsigned maximum; a block whose maximum
 * is past the fast path (rare: NaN, inf, huge or tiny arguments) is then
 * computed again through mc_fn_f32, which hands the vectors concerned to
 * SLEEF. That needs the block's inputs after its results are written, so
 * when y overlaps x (a donated buffer) the results go to a stack buffer
 * first and are copied after the check. The inner loop has no calls
 * (clang keeps the constants of a loop that calls out in stack slots, and
 * reloads each on every vector). Against the separate checking pass over
 * each block that this replaced, log and sin take 0.8x the time (1M
 * float32 on one core, AVX-512). */
enum { MC_OWN_VECS = 64 };
#define MC_OWN_STORE(dst, r)                                                  \
    do {                                                                      \
        if (stream)                                                           \
            mc_stream(dst, &(r));                                             \
        else                                                                  \
            memcpy(dst, &(r), sizeof(r));                                     \
    } while (0)
#define MC_OWN_UNARY_F32(name, fn)                                            \
    static void name(const void *xv, void *yv, size_t n)                      \
    {                                                                         \
        const float *x = xv;                                                  \
        float *y = yv;                                                        \
        const size_t w = sizeof(mc_vf32) / sizeof(float);                     \
        int stream = mc_streamable(y, n * sizeof(float), sizeof(mc_vf32), sizeof(float)); \
        int overlap = (uintptr_t)y < (uintptr_t)(x + n) && (uintptr_t)x < (uintptr_t)(y + n); \
        mc_vf32 held[MC_OWN_VECS];                                            \
        size_t i = 0;                                                         \
        if (stream && (i = mc_stream_head(y, sizeof(float))) > 0)             \
            MC_UNARY_PART(float, mc_vf32, float, mc_vf32, mc_##fn##_f32, 0, i); \
        while (i + w <= n) {                                                  \
            size_t end = i + (n - i) / w * w;                                 \
            if (end - i > MC_OWN_VECS * w)                                    \
                end = i + MC_OWN_VECS * w;                                    \
            mc_vu32 key = {0};                                                \
            for (size_t j = i; j < end; j += w) {                             \
                mc_vf32 v;                                                    \
                memcpy(&v, x + j, sizeof v);                                  \
                key = mc_max_u32(key, mc_##fn##_key_f32(v));                  \
                mc_vf32 r = mc_##fn##_core_f32(v);                            \
                if (overlap)                                                  \
                    held[(j - i) / w] = r;                                    \
                else                                                          \
                    MC_OWN_STORE(y + j, r);                                   \
            }                                                                 \
            if (mc_any_i32(mc_##fn##_far_f32(key))) {                         \
                if (stream)                                                   \
                    mc_stream_fence(); /* the block's streamed stores first */ \
                for (size_t j = i; j < end; j += w) {                         \
                    mc_vf32 v;                                                \
                    memcpy(&v, x + j, sizeof v);                              \
                    mc_vf32 r = mc_##fn##_f32(v);                             \
                    MC_OWN_STORE(y + j, r);                                   \
                }                                                             \
            } else if (overlap) {                                             \
                for (size_t j = i; j < end; j += w)                           \
                    MC_OWN_STORE(y + j, held[(j - i) / w]);                   \
            }                                                                 \
            i = end;                                                          \
        }                                                                     \
        if (stream)                                                           \
            mc_stream_fence();                                                \
        if (i < n)                                                            \
            MC_UNARY_PART(float, mc_vf32, float, mc_vf32, mc_##fn##_f32, i, n - i); \
    }
#else
#define MC_OWN_UNARY_F32(name, fn) MC_UNARY(name, float, mc_vf32, float, mc_vf32, mc_##fn##_f32)
#endif

/* name_f32, name_f64, name_f16, name_bf16 from the vec_math.h pair mc_fn_*;
 * MC_OWN_FLOAT_UNARY for the functions with an own float32 kernel */
#define MC_FLOAT_UNARY(name, fn)                                              \
    MC_UNARY(name##_f32, float, mc_vf32, float, mc_vf32, mc_##fn##_f32)       \
    MC_UNARY(name##_f64, double, mc_vf64, double, mc_vf64, mc_##fn##_f64)     \
    MC_HALF_UNARY(name, name##_f32, 2)
#define MC_OWN_FLOAT_UNARY(name, fn)                                          \
    MC_OWN_UNARY_F32(name##_f32, fn)                                          \
    MC_UNARY(name##_f64, double, mc_vf64, double, mc_vf64, mc_##fn##_f64)     \
    MC_HALF_UNARY(name, name##_f32, 2)

MC_FLOAT_UNARY(sqrt, sqrt)
MC_FLOAT_UNARY(rsqrt, rsqrt)
MC_FLOAT_UNARY(recip, recip)
MC_OWN_FLOAT_UNARY(exp, exp)
MC_OWN_FLOAT_UNARY(expm1, expm1)
MC_OWN_FLOAT_UNARY(log, log)
MC_FLOAT_UNARY(log1p, log1p)
MC_FLOAT_UNARY(log2, log2)
MC_FLOAT_UNARY(log10, log10)
MC_OWN_FLOAT_UNARY(sin, sin)
MC_OWN_FLOAT_UNARY(cos, cos)
MC_FLOAT_UNARY(tan, tan)
MC_FLOAT_UNARY(asin, asin)
MC_FLOAT_UNARY(acos, acos)
MC_FLOAT_UNARY(atan, atan)
MC_FLOAT_UNARY(sinh, sinh)
MC_FLOAT_UNARY(cosh, cosh)
MC_OWN_FLOAT_UNARY(tanh, tanh)
MC_FLOAT_UNARY(asinh, asinh)
MC_FLOAT_UNARY(acosh, acosh)
MC_FLOAT_UNARY(atanh, atanh)
MC_FLOAT_UNARY(sigmoid, sigmoid)
MC_OWN_FLOAT_UNARY(erf, erf)
MC_FLOAT_UNARY(erfinv, erfinv)
MC_FLOAT_UNARY(floor, floor)
MC_FLOAT_UNARY(ceil, ceil)
MC_FLOAT_UNARY(rint, rint)
#undef MC_FLOAT_UNARY
#undef MC_OWN_FLOAT_UNARY
#undef MC_OWN_UNARY_F32
#undef MC_OWN_STORE

#define MC_SET_FLOAT_UNARY(t, op, name)                                       \
    do {                                                                      \
        (t)->unary[op][MC_SIMD_FLOAT32] = name##_f32;                             \
        (t)->unary[op][MC_SIMD_FLOAT64] = name##_f64;                             \
        (t)->unary[op][MC_SIMD_FLOAT16] = name##_f16;                             \
        (t)->unary[op][MC_SIMD_BFLOAT16] = name##_bf16;                           \
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
