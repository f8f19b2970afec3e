/* Math over the vector types of vec.h: SLEEF's ISA-specific entry points in
 * the vector builds (called directly, never through SLEEF's dispatcher),
 * except float32 exp, expm1, tanh, log, sin, cos and erf, which are ours
 * (simd/vec_math_f32.h: as fast or faster, and more accurate), libm in
 * plain scalar calls for the scalar reference, and the few
 * functions SLEEF lacks (erfinv, sigmoid, logaddexp) written once on top.
 *
 * float32 precision, chosen per function by measured speed (1M float32 on
 * one core of a Xeon with AVX-512, SLEEF 3.5.1; G elem/s for the 512-bit
 * and the 256-bit entry point). u10 = 1.0 ULP bound, u35 = 3.5 ULP bound.
 *
 *   function  chosen  u10 (512/256)  u35 (512/256)   bound of our kernel
 *   exp       own     2.66 / 1.57    -               1.02 ULP (vec_math_f32.h)
 *   expm1     own     0.77 / 0.48    -               1.46 ULP (vec_math_f32.h)
 *   log       own     1.65 / 0.70    3.02 / 1.27     0.92 ULP (vec_math_f32.h)
 *   log1p     u10     1.31 / 0.77    -               1.0 ULP
 *   log2      u35     1.54 / 0.68    3.25 / 1.41     3.5 ULP
 *   log10     u10     1.61 / 0.73    -               1.0 ULP
 *   sin       own     1.72 / 0.96    3.20 / 1.82     2.4 ULP (vec_math_f32.h)
 *   cos       own     1.34 / 0.84    3.07 / 1.85     2.4 ULP (vec_math_f32.h)
 *   tan       u35     0.95 / 0.54    2.48 / 1.45     3.5 ULP
 *   arcsin    u35     1.35 / 0.87    3.25 / 2.19     3.5 ULP
 *   arccos    u35     1.09 / 0.62    2.63 / 1.53     3.5 ULP
 *   arctan    u35     1.03 / 0.67    2.68 / 1.60     3.5 ULP
 *   sinh      u35     0.71 / 0.47    1.70 / 1.04     3.5 ULP
 *   cosh      u35     0.69 / 0.48    1.99 / 1.14     3.5 ULP
 *   tanh      own     0.60 / 0.40    1.90 / 1.08     2.7 ULP (vec_math_f32.h)
 *   arcsinh   u10     0.39 / 0.24    -               1.0 ULP
 *   arccosh   u10     0.41 / 0.27    -               1.0 ULP
 *   arctanh   u10     0.68 / 0.43    -               1.0 ULP
 *   erf       own     0.43 / 0.21    -               1.8 ULP (vec_math_f32.h)
 *   power     u10     0.35 / 0.11    -               1.0 ULP
 *   arctan2   u35     0.74 / 0.40    1.67 / 1.04     3.5 ULP
 *   sqrt, floor, ceil, round: the ISA's instructions (exact).
 *   erfinv    Giles' single-precision approximation: 3.7 ULP measured
 *   sigmoid   1/(1+exp(|x|)) mirrored for x >= 0 (as MLX): 2.5 ULP measured
 *             over every float32 with |x| <= 87
 *   logaddexp max + log1p(exp(min - max)), inf cases pass max through:
 *             1.7 ULP of max(|a|, |b|) measured (the sum may cancel).
 * float64 uses the u10 (1.0 ULP) entry point of every function; erfinv in
 * float64 refines Giles' estimate with two Halley steps on erf/erfc.
 * The scalar reference calls glibc's libm (under 1 ULP for these). */
#ifndef MC_SIMD_VEC_MATH_H
#define MC_SIMD_VEC_MATH_H

#include <math.h>

#include "simd/vec.h"

#if MC_VBYTES != 0
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif
#include <sleef.h>

/* The SLEEF entry point of this ISA: Sleef_<fn><f|d><lanes>_<ulp><isa>,
 * e.g. Sleef_expf16_u10avx512f. The build defines the three parts. */
#define MC_CAT6_(a, b, c, d, e, f) a##b##c##d##e##f
#define MC_CAT6(a, b, c, d, e, f) MC_CAT6_(a, b, c, d, e, f)
#define MC_CAT5_(a, b, c, d, e) a##b##c##d##e
#define MC_CAT5(a, b, c, d, e) MC_CAT5_(a, b, c, d, e)
#define MC_SLEEF_F(fn, ulp) MC_CAT6(Sleef_, fn, MC_SLEEF_FSUF, _, ulp, MC_SLEEF_ISA)
#define MC_SLEEF_D(fn, ulp) MC_CAT6(Sleef_, fn, MC_SLEEF_DSUF, _, ulp, MC_SLEEF_ISA)

/* SLEEF's argument types; casts between same-sized vector types only
 * reinterpret (NEON's types are distinct from the generic vectors). */
#if MC_VBYTES == 64
typedef __m512 mc_sleef_vf;
typedef __m512d mc_sleef_vd;
#elif MC_VBYTES == 32
typedef __m256 mc_sleef_vf;
typedef __m256d mc_sleef_vd;
#elif MC_VBYTES == 16 && defined(__aarch64__)
typedef float32x4_t mc_sleef_vf;
typedef float64x2_t mc_sleef_vd;
#else
#error "no SLEEF vector types for this MC_VBYTES"
#endif

#define MC_MATH1(name, fn, ulpf)                                              \
    static inline mc_vf32 mc_##name##_f32(mc_vf32 x)                          \
    {                                                                         \
        return (mc_vf32)MC_SLEEF_F(fn, ulpf)((mc_sleef_vf)x);                 \
    }                                                                         \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x)                          \
    {                                                                         \
        return (mc_vf64)MC_SLEEF_D(fn, u10)((mc_sleef_vd)x);                  \
    }
#define MC_MATH2(name, fn, ulpf)                                              \
    static inline mc_vf32 mc_##name##_f32(mc_vf32 x, mc_vf32 y)               \
    {                                                                         \
        return (mc_vf32)MC_SLEEF_F(fn, ulpf)((mc_sleef_vf)x, (mc_sleef_vf)y); \
    }                                                                         \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x, mc_vf64 y)               \
    {                                                                         \
        return (mc_vf64)MC_SLEEF_D(fn, u10)((mc_sleef_vd)x, (mc_sleef_vd)y);  \
    }
/* float32 from simd/vec_math_f32.h, float64 from SLEEF */
#define MC_MATH1_OWN_F32(name, fn)                                            \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x)                          \
    {                                                                         \
        return (mc_vf64)MC_SLEEF_D(fn, u10)((mc_sleef_vd)x);                  \
    }

#else /* scalar reference: one lane, libm */

#define MC_MATH1(name, fn, ulpf)                                              \
    static inline mc_vf32 mc_##name##_f32(mc_vf32 x)                          \
    {                                                                         \
        x[0] = fn##f(x[0]);                                                   \
        return x;                                                             \
    }                                                                         \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x)                          \
    {                                                                         \
        x[0] = fn(x[0]);                                                      \
        return x;                                                             \
    }
#define MC_MATH2(name, fn, ulpf)                                              \
    static inline mc_vf32 mc_##name##_f32(mc_vf32 x, mc_vf32 y)               \
    {                                                                         \
        x[0] = fn##f(x[0], y[0]);                                             \
        return x;                                                             \
    }                                                                         \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x, mc_vf64 y)               \
    {                                                                         \
        x[0] = fn(x[0], y[0]);                                                \
        return x;                                                             \
    }
#define MC_MATH1_OWN_F32(name, fn) MC_MATH1(name, fn, -)
#endif

/* The float32 precision of each is the table above. */
MC_MATH1_OWN_F32(exp, exp)
MC_MATH1_OWN_F32(expm1, expm1)
MC_MATH1_OWN_F32(log, log)
MC_MATH1(log1p_raw, log1p, u10)
MC_MATH1(log2, log2, u35)
MC_MATH1(log10, log10, u10)
MC_MATH1_OWN_F32(sin, sin)
MC_MATH1_OWN_F32(cos, cos)
MC_MATH1(tan, tan, u35)
MC_MATH1(asin, asin, u35)
MC_MATH1(acos, acos, u35)
MC_MATH1(atan, atan, u35)
MC_MATH1(sinh_raw, sinh, u35)
MC_MATH1(cosh_raw, cosh, u35)
MC_MATH1_OWN_F32(tanh, tanh)
MC_MATH1(asinh_raw, asinh, u10)
MC_MATH1(acosh_raw, acosh, u10)
MC_MATH1(atanh, atanh, u10)
MC_MATH1_OWN_F32(erf, erf)
MC_MATH2(pow, pow, u10)
MC_MATH2(atan2, atan2, u35)
#if MC_VBYTES != 0
/* erfc (only float64 needs it, for erfinv); SLEEF has 1.5 ULP only. */
static inline mc_vf64 mc_erfc_f64(mc_vf64 x)
{
    return (mc_vf64)MC_SLEEF_D(erfc, u15)((mc_sleef_vd)x);
}
#else
static inline mc_vf64 mc_erfc_f64(mc_vf64 x)
{
    x[0] = erfc(x[0]);
    return x;
}
#endif
#if MC_VBYTES != 0
#include "simd/vec_math_f32.h"
#endif
#undef MC_MATH1
#undef MC_MATH1_OWN_F32
#undef MC_MATH2

/* SLEEF's entry points return inf past a limit below the overflow point
 * (log1p beyond 1e38 / 1e307, sinh and cosh beyond 88 / 709, asinh and
 * acosh beyond 1.8e19 / 1.3e154). Lanes out there, rare, are recomputed
 * from identities that hold to the last bit at such sizes:
 *   log1p(x) = log(x), sinh|cosh(x) = e^(|x|/2) * e^(|x|/2) / 2,
 *   asinh|acosh(x) = log(|x|) + log(2) (acosh of a negative is NaN).
 * The scalar reference keeps libm, which has no such limits. */
#if MC_VBYTES == 0 /* (the vector builds' mc_any_i32 is in vec_math_f32.h) */
static inline int mc_any_i32(mc_vi32 m) { return m[0] != 0; }
#endif
static inline int mc_any_i64(mc_vi64 m)
{
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (m[k])
            return 1;
    return 0;
}

#if MC_VBYTES != 0
#define MC_BIG_F32(name, limit, fix)                                          \
    static inline mc_vf32 mc_##name##_f32(mc_vf32 x)                          \
    {                                                                         \
        mc_vf32 r = mc_##name##_raw_f32(x);                                   \
        mc_vi32 big = mc_fabs_f32(x) > (limit);                               \
        return mc_any_i32(big) ? mc_sel_f32(big, fix, r) : r;                 \
    }
#define MC_BIG_F64(name, limit, fix)                                          \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x)                          \
    {                                                                         \
        mc_vf64 r = mc_##name##_raw_f64(x);                                   \
        mc_vi64 big = mc_fabs_f64(x) > (limit);                               \
        return mc_any_i64(big) ? mc_sel_f64(big, fix, r) : r;                 \
    }
static inline mc_vf32 half_exp_sq_f32(mc_vf32 x)
{
    mc_vf32 t = mc_exp_f32(mc_fabs_f32(x) * 0.5f);
    return (t * 0.5f) * t;
}
static inline mc_vf64 half_exp_sq_f64(mc_vf64 x)
{
    mc_vf64 t = mc_exp_f64(mc_fabs_f64(x) * 0.5);
    return (t * 0.5) * t;
}
static inline mc_vf32 log_abs_2_f32(mc_vf32 x) { return mc_log_f32(mc_fabs_f32(x)) + 0.693147180559945309f; }
static inline mc_vf64 log_abs_2_f64(mc_vf64 x) { return mc_log_f64(mc_fabs_f64(x)) + 0.693147180559945309; }
MC_BIG_F32(log1p, 1e38f, mc_log_f32(x))
MC_BIG_F64(log1p, 1e307, mc_log_f64(x))
MC_BIG_F32(sinh, 88.0f, mc_copysign_f32(half_exp_sq_f32(x), x))
MC_BIG_F64(sinh, 709.0, mc_copysign_f64(half_exp_sq_f64(x), x))
MC_BIG_F32(cosh, 88.0f, half_exp_sq_f32(x))
MC_BIG_F64(cosh, 709.0, half_exp_sq_f64(x))
MC_BIG_F32(asinh, 1e18f, mc_copysign_f32(log_abs_2_f32(x), x))
MC_BIG_F64(asinh, 1e150, mc_copysign_f64(log_abs_2_f64(x), x))
MC_BIG_F32(acosh, 1e18f, mc_sel_f32(x > 0.0f, log_abs_2_f32(x), MC_SPLAT(mc_vf32, NAN)))
MC_BIG_F64(acosh, 1e150, mc_sel_f64(x > 0.0, log_abs_2_f64(x), MC_SPLAT(mc_vf64, (double)NAN)))
#undef MC_BIG_F32
#undef MC_BIG_F64
#else
#define MC_SAME(name)                                                         \
    static inline mc_vf32 mc_##name##_f32(mc_vf32 x) { return mc_##name##_raw_f32(x); } \
    static inline mc_vf64 mc_##name##_f64(mc_vf64 x) { return mc_##name##_raw_f64(x); }
MC_SAME(log1p)
MC_SAME(sinh)
MC_SAME(cosh)
MC_SAME(asinh)
MC_SAME(acosh)
#undef MC_SAME
#endif

/* sqrt and rounding: single instructions on every ISA. */
#if MC_VBYTES == 64
static inline mc_vf32 mc_sqrt_f32(mc_vf32 x) { return (mc_vf32)_mm512_sqrt_ps((__m512)x); }
static inline mc_vf64 mc_sqrt_f64(mc_vf64 x) { return (mc_vf64)_mm512_sqrt_pd((__m512d)x); }
#define MC_ROUND_F32(x, mode) ((mc_vf32)_mm512_roundscale_ps((__m512)(x), (mode) | _MM_FROUND_NO_EXC))
#define MC_ROUND_F64(x, mode) ((mc_vf64)_mm512_roundscale_pd((__m512d)(x), (mode) | _MM_FROUND_NO_EXC))
#elif MC_VBYTES == 32
static inline mc_vf32 mc_sqrt_f32(mc_vf32 x) { return (mc_vf32)_mm256_sqrt_ps((__m256)x); }
static inline mc_vf64 mc_sqrt_f64(mc_vf64 x) { return (mc_vf64)_mm256_sqrt_pd((__m256d)x); }
#define MC_ROUND_F32(x, mode) ((mc_vf32)_mm256_round_ps((__m256)(x), (mode) | _MM_FROUND_NO_EXC))
#define MC_ROUND_F64(x, mode) ((mc_vf64)_mm256_round_pd((__m256d)(x), (mode) | _MM_FROUND_NO_EXC))
#endif

#if MC_VBYTES == 64 || MC_VBYTES == 32
static inline mc_vf32 mc_floor_f32(mc_vf32 x) { return MC_ROUND_F32(x, _MM_FROUND_TO_NEG_INF); }
static inline mc_vf64 mc_floor_f64(mc_vf64 x) { return MC_ROUND_F64(x, _MM_FROUND_TO_NEG_INF); }
static inline mc_vf32 mc_ceil_f32(mc_vf32 x) { return MC_ROUND_F32(x, _MM_FROUND_TO_POS_INF); }
static inline mc_vf64 mc_ceil_f64(mc_vf64 x) { return MC_ROUND_F64(x, _MM_FROUND_TO_POS_INF); }
static inline mc_vf32 mc_rint_f32(mc_vf32 x) { return MC_ROUND_F32(x, _MM_FROUND_TO_NEAREST_INT); }
static inline mc_vf64 mc_rint_f64(mc_vf64 x) { return MC_ROUND_F64(x, _MM_FROUND_TO_NEAREST_INT); }
#elif MC_VBYTES == 16 && defined(__aarch64__)
static inline mc_vf32 mc_sqrt_f32(mc_vf32 x) { return (mc_vf32)vsqrtq_f32((float32x4_t)x); }
static inline mc_vf64 mc_sqrt_f64(mc_vf64 x) { return (mc_vf64)vsqrtq_f64((float64x2_t)x); }
static inline mc_vf32 mc_floor_f32(mc_vf32 x) { return (mc_vf32)vrndmq_f32((float32x4_t)x); }
static inline mc_vf64 mc_floor_f64(mc_vf64 x) { return (mc_vf64)vrndmq_f64((float64x2_t)x); }
static inline mc_vf32 mc_ceil_f32(mc_vf32 x) { return (mc_vf32)vrndpq_f32((float32x4_t)x); }
static inline mc_vf64 mc_ceil_f64(mc_vf64 x) { return (mc_vf64)vrndpq_f64((float64x2_t)x); }
static inline mc_vf32 mc_rint_f32(mc_vf32 x) { return (mc_vf32)vrndnq_f32((float32x4_t)x); }
static inline mc_vf64 mc_rint_f64(mc_vf64 x) { return (mc_vf64)vrndnq_f64((float64x2_t)x); }
#elif MC_VBYTES == 0
static inline mc_vf32 mc_sqrt_f32(mc_vf32 x) { x[0] = sqrtf(x[0]); return x; }
static inline mc_vf64 mc_sqrt_f64(mc_vf64 x) { x[0] = sqrt(x[0]); return x; }
static inline mc_vf32 mc_floor_f32(mc_vf32 x) { x[0] = floorf(x[0]); return x; }
static inline mc_vf64 mc_floor_f64(mc_vf64 x) { x[0] = floor(x[0]); return x; }
static inline mc_vf32 mc_ceil_f32(mc_vf32 x) { x[0] = ceilf(x[0]); return x; }
static inline mc_vf64 mc_ceil_f64(mc_vf64 x) { x[0] = ceil(x[0]); return x; }
/* nearbyint: half to even like rint, without touching the inexact flag */
static inline mc_vf32 mc_rint_f32(mc_vf32 x) { x[0] = nearbyintf(x[0]); return x; }
static inline mc_vf64 mc_rint_f64(mc_vf64 x) { x[0] = nearbyint(x[0]); return x; }
#endif

/* sigmoid as MLX computes it: y = 1/(1+exp(|x|)) never overflows into a
 * NaN, and is the answer for x < 0; for x >= 0 the answer is 1 - y. */
static inline mc_vf32 mc_sigmoid_f32(mc_vf32 x)
{
    mc_vf32 y = 1.0f / (1.0f + mc_exp_f32(mc_fabs_f32(x)));
    return mc_sel_f32(x < 0.0f, y, 1.0f - y);
}
static inline mc_vf64 mc_sigmoid_f64(mc_vf64 x)
{
    mc_vf64 y = 1.0 / (1.0 + mc_exp_f64(mc_fabs_f64(x)));
    return mc_sel_f64(x < 0.0, y, 1.0 - y);
}

/* maximum / minimum as MLX: a NaN in either input gives NaN (a first). */
static inline mc_vf32 mc_max_f32(mc_vf32 a, mc_vf32 b)
{
    return mc_sel_f32(mc_isnan_f32(a) | (a > b), a, b);
}
static inline mc_vf64 mc_max_f64(mc_vf64 a, mc_vf64 b)
{
    return mc_sel_f64(mc_isnan_f64(a) | (a > b), a, b);
}
static inline mc_vf32 mc_min_f32(mc_vf32 a, mc_vf32 b)
{
    return mc_sel_f32(mc_isnan_f32(a) | (a < b), a, b);
}
static inline mc_vf64 mc_min_f64(mc_vf64 a, mc_vf64 b)
{
    return mc_sel_f64(mc_isnan_f64(a) | (a < b), a, b);
}

/* logaddexp as MLX: max + log1p(exp(min - max)), except that when max is
 * +inf or min is -inf the answer is max (inf - inf would give NaN). */
static inline mc_vf32 mc_logaddexp_f32(mc_vf32 a, mc_vf32 b)
{
    mc_vf32 hi = mc_max_f32(a, b), lo = mc_min_f32(a, b);
    mc_vf32 out = hi + mc_log1p_f32(mc_exp_f32(lo - hi));
    return mc_sel_f32((lo == -INFINITY) | (hi == INFINITY), hi, out);
}
static inline mc_vf64 mc_logaddexp_f64(mc_vf64 a, mc_vf64 b)
{
    mc_vf64 hi = mc_max_f64(a, b), lo = mc_min_f64(a, b);
    mc_vf64 out = hi + mc_log1p_f64(mc_exp_f64(lo - hi));
    return mc_sel_f64((lo == -(double)INFINITY) | (hi == (double)INFINITY), hi, out);
}

/* erfinv, float32: M. Giles, "Approximating the erfinv function" (GPU
 * Computing Gems, 2010), single-precision version: with w = -log(1 - x^2),
 * a degree-8 polynomial in w - 2.5 for w < 5, else in sqrt(w) - 3. Both
 * branches are evaluated and selected per lane. |x| = 1 gives +-inf and
 * |x| > 1 NaN. */
static inline mc_vf32 mc_erfinv_f32(mc_vf32 x)
{
    mc_vf32 w = -mc_log_f32((1.0f - x) * (1.0f + x));
    mc_vf32 c = w - 2.5f;
    mc_vf32 p = MC_SPLAT(mc_vf32, 2.81022636e-08f);
    p = 3.43273939e-07f + p * c;
    p = -3.5233877e-06f + p * c;
    p = -4.39150654e-06f + p * c;
    p = 0.00021858087f + p * c;
    p = -0.00125372503f + p * c;
    p = -0.00417768164f + p * c;
    p = 0.246640727f + p * c;
    p = 1.50140941f + p * c;
    mc_vf32 t = mc_sqrt_f32(w) - 3.0f;
    mc_vf32 q = MC_SPLAT(mc_vf32, -0.000200214257f);
    q = 0.000100950558f + q * t;
    q = 0.00134934322f + q * t;
    q = -0.00367342844f + q * t;
    q = 0.00573950773f + q * t;
    q = -0.0076224613f + q * t;
    q = 0.00943887047f + q * t;
    q = 1.00167406f + q * t;
    q = 2.83297682f + q * t;
    mc_vf32 r = mc_sel_f32(w < 5.0f, p, q) * x;
    return mc_sel_f32(mc_fabs_f32(x) == 1.0f, mc_copysign_f32(MC_SPLAT(mc_vf32, INFINITY), x), r);
}

/* erfinv, float64: Giles' estimate evaluated in double (good to ~1e-7, or
 * ~1e-3 within 1e-9 of +-1, past the range it was fitted on), then two
 * Halley steps on f(y) = erf(y) - |x|, each tripling the correct digits.
 * Near 1 the residual is taken as (1 - |x|) - erfc(y), whose subtraction
 * is exact, so the last digits are not lost to cancellation. */
static inline mc_vf64 mc_erfinv_f64(mc_vf64 x)
{
    mc_vf64 ax = mc_fabs_f64(x);
    mc_vf64 w = -mc_log_f64((1.0 - ax) * (1.0 + ax));
    mc_vf64 c = w - 2.5;
    mc_vf64 p = MC_SPLAT(mc_vf64, 2.81022636e-08);
    p = 3.43273939e-07 + p * c;
    p = -3.5233877e-06 + p * c;
    p = -4.39150654e-06 + p * c;
    p = 0.00021858087 + p * c;
    p = -0.00125372503 + p * c;
    p = -0.00417768164 + p * c;
    p = 0.246640727 + p * c;
    p = 1.50140941 + p * c;
    mc_vf64 t = mc_sqrt_f64(w) - 3.0;
    mc_vf64 q = MC_SPLAT(mc_vf64, -0.000200214257);
    q = 0.000100950558 + q * t;
    q = 0.00134934322 + q * t;
    q = -0.00367342844 + q * t;
    q = 0.00573950773 + q * t;
    q = -0.0076224613 + q * t;
    q = 0.00943887047 + q * t;
    q = 1.00167406 + q * t;
    q = 2.83297682 + q * t;
    mc_vf64 y = mc_sel_f64(w < 5.0, p, q) * ax;
    const double two_over_sqrt_pi = 1.1283791670955126;
    mc_vi64 tail = ax > 0.5;
    for (int step = 0; step < 2; step++) {
        mc_vf64 f = mc_sel_f64(tail, (1.0 - ax) - mc_erfc_f64(y), mc_erf_f64(y) - ax);
        mc_vf64 u = f / (two_over_sqrt_pi * mc_exp_f64(-y * y));
        mc_vf64 ny = y - u / (1.0 + y * u);
        /* y = 0 (x = 0) gives u = 0: keep it; an inf or NaN step keeps y */
        y = mc_sel_f64(ny == ny, ny, y);
    }
    y = mc_sel_f64(ax == 1.0, MC_SPLAT(mc_vf64, (double)INFINITY), y);
    y = mc_sel_f64(ax > 1.0, MC_SPLAT(mc_vf64, (double)NAN), y);
    return mc_copysign_f64(y, x);
}

#endif
