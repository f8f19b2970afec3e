/* float32 exp and tanh for the vector builds, written here rather than
 * taken from SLEEF: exp is the hot function of ML code (softmax, sigmoid,
 * logsumexp and tanh run on it) and SLEEF's was the slower half of each of
 * those ops. On one AVX-512 core (16K floats in cache, G elem/s):
 *
 *   function  SLEEF (entry point)    here
 *   exp       3.24 (expf16_u10)      4.47
 *   tanh      1.85 (tanhf16_u35)     2.37
 *
 * The same was tried for sin (reduction by pi, one odd polynomial) and log
 * (mantissa in [sqrt(1/2), sqrt(2)), a degree-8 log1p polynomial, or the
 * f/(2+f) series): 4.17 vs SLEEF's 4.06 and 3.5 vs 3.8, so SLEEF keeps them.
 *
 * Each function has a fast path for the arguments that matter and hands
 * the whole vector to SLEEF when any lane is outside it (NaN, inf,
 * overflow, underflow), so every special case keeps SLEEF's answer:
 *   exp   |x| <= 87: x = n ln2 + r with |r| <= ln2/2, e^r - 1 = r + r^2 P(r)
 *         (P of degree 4), scaled by 2^n built in the exponent bits (n
 *         stays within the normal range).
 *   tanh  no NaN: with a = min(|x|, 9) (past 9 tanh rounds to 1) and
 *         m = e^(2a) - 1 from the exp above (exact-ish near 0, so no
 *         separate small-argument polynomial is needed), tanh = m/(m + 2)
 *         with x's sign.
 * P is a minimax fit (relative error 3e-9, Lawson's iteration in float64,
 * coefficients rounded to float32) made for this file. Measured over every
 * float32 input against float64 libm: docs/api.md gives the bounds, and
 * test_simd holds the kernels to them. Every multiply-add is an explicit
 * FMA so that gcc and clang round alike. */
#ifndef MC_SIMD_VEC_MATH_F32_H
#define MC_SIMD_VEC_MATH_F32_H

#if MC_VBYTES == 0
#error "simd/vec_math_f32.h is for the vector builds; the scalar reference uses libm"
#endif

#include "simd/vec.h"

/* a * b + c rounded once */
static inline mc_vf32 mc_fma_f32(mc_vf32 a, mc_vf32 b, mc_vf32 c)
{
#if MC_VBYTES == 64
    return (mc_vf32)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif MC_VBYTES == 32
    return (mc_vf32)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#elif MC_VBYTES == 16 && defined(__aarch64__)
    return (mc_vf32)vfmaq_f32((float32x4_t)c, (float32x4_t)a, (float32x4_t)b);
#else
#error "no FMA for this MC_VBYTES"
#endif
}

/* Whether any lane of a comparison mask is set, in one or two instructions
 * (a loop over lanes costs more than the math it guards). */
static inline int mc_any_mask_i32(mc_vi32 m)
{
#if MC_VBYTES == 64
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0;
#elif MC_VBYTES == 32
    return _mm256_movemask_ps((__m256)m) != 0;
#elif MC_VBYTES == 16 && defined(__aarch64__)
    return vmaxvq_u32((uint32x4_t)m) != 0;
#else
#error "no mask test for this MC_VBYTES"
#endif
}

#define MC_F(c) MC_SPLAT(mc_vf32, (float)(c))

/* e^x - 1 as a pair: returns e^r - 1 for the reduced argument r and sets
 * *scale to 2^n, where x = n ln2 + r. Needs |x| <= 87 and no NaN. */
static inline mc_vf32 mc_expm1_reduced_f32(mc_vf32 x, mc_vf32 *scale)
{
    /* Adding 1.5 * 2^23 rounds x log2(e) to the nearest integer n and
     * leaves n in the low bits of the sum. */
    const float shift = 0x1.8p23f;
    mc_vf32 t = mc_fma_f32(x, MC_F(0x1.715476p0), MC_F(shift));
    mc_vf32 n = t - shift;
    mc_vi32 ni = (mc_vi32)t - (mc_vi32)MC_F(shift);
    /* ln2 = hi + lo, hi with 16 bits so that n * hi is exact */
    mc_vf32 r = mc_fma_f32(n, MC_F(-0x1.62e4p-1), x);
    r = mc_fma_f32(n, MC_F(-0x1.7f7d1cp-20), r);
    mc_vf32 p = mc_fma_f32(MC_F(0x1.6a242ap-10), r, MC_F(0x1.1239d0p-7));
    p = mc_fma_f32(p, r, MC_F(0x1.5558f2p-5));
    p = mc_fma_f32(p, r, MC_F(0x1.555492p-3));
    p = mc_fma_f32(p, r, MC_F(0x1.fffffcp-2));
    *scale = (mc_vf32)((ni + 127) << 23);
    return mc_fma_f32(p, r * r, r);
}

static inline mc_vf32 mc_exp_f32(mc_vf32 x)
{
    if (mc_any_mask_i32(~(mc_fabs_f32(x) <= 87.0f)))
        return (mc_vf32)MC_SLEEF_F(exp, u10)((mc_sleef_vf)x);
    mc_vf32 scale;
    mc_vf32 m = mc_expm1_reduced_f32(x, &scale);
    return mc_fma_f32(m, scale, scale);
}

static inline mc_vf32 mc_tanh_f32(mc_vf32 x)
{
    if (mc_any_mask_i32(mc_isnan_f32(x)))
        return (mc_vf32)MC_SLEEF_F(tanh, u35)((mc_sleef_vf)x);
    mc_vf32 a = mc_fabs_f32(x);
    a = mc_sel_f32(a < 9.0f, a, MC_F(9.0f));
    mc_vf32 scale;
    mc_vf32 m = mc_expm1_reduced_f32(a + a, &scale);
    m = mc_fma_f32(scale, m, scale - 1.0f); /* e^(2a) - 1; scale - 1 is exact */
    return mc_copysign_f32(m / (m + 2.0f), x);
}

#undef MC_F

#endif
