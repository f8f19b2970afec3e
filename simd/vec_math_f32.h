/* float32 exp, expm1, tanh, log, sin, cos and erf for the vector builds,
 * written here rather than taken from SLEEF: they are the hot functions of
 * ML code (exp also feeds softmax, sigmoid and logsumexp; erf, GELU), and
 * these are as fast or faster than SLEEF's on every ISA we measured. They
 * are more accurate than the 3.5-ULP entry points they replace (log, sin,
 * cos, tanh) and slightly less than the 1.0-ULP ones (exp, expm1, erf):
 * bounds below. G elem/s on one core (16K floats in cache):
 *
 *   function  AVX-512: SLEEF / here    AVX2: SLEEF / here
 *   exp       3.2 (u10) / 4.5          1.2 (u10) / 1.8
 *   expm1     0.82 (u10) / 3.55        0.51 (u10) / 2.7
 *   tanh      1.9 (u35) / 2.4          0.8 (u35) / 1.05
 *   log       3.0 (u35) / 3.0          1.3 (u35) / 1.8
 *   sin       4.1 (u35) / 4.2          1.8 (u35) / 2.5
 *   cos       3.4 (u35) / 3.4          1.9 (u35) / 2.2
 *   erf       0.44 (u10) / 1.55        0.24 (u10) / 0.78
 *
 * (tanh's row is the kernel before its own reduction below; on the AMD
 * EPYC (Zen 4) host of bench/run.sh, 16K floats on one core, tanh went
 * from 2.7 to 4.4 G elem/s on AVX-512 and from 1.8 to 3.2 on AVX2, as
 * k_math.c runs it.)
 *
 * Each function but tanh has a fast path for the arguments that matter,
 * and a vector with a lane outside it (NaN, inf, overflow, underflow,
 * zero or negative logs, huge angles) goes to SLEEF whole, so every
 * special case keeps SLEEF's answer; tanh's one path is right for every
 * input:
 *   exp   |x| <= 87: x = n ln2 + r with |r| <= ln2/2, e^r - 1 = r + r^2 P(r)
 *         (P of degree 4), scaled by 2^n built in the exponent bits (n
 *         stays within the normal range).
 *   expm1 |x| <= 87: the same, with 2^n - 1 added last.
 *   tanh  every x: with a = min(|x|, 10) (past 9.01 tanh rounds to 1) and
 *         m = e^(2a) - 1 from exp's polynomial on a reduction of its own
 *         (accurate near 0, so no separate small-argument polynomial is
 *         needed), tanh = m/(m + 2) with x's sign; NaN stays NaN.
 *   log   x in [2^-126, 2^127]: see mc_log_f32.
 *   sin, cos  |x| <= 2^13: see mc_sincos_core_f32.
 *   erf   no NaN: see mc_erf_f32.
 * The polynomials are minimax fits (Lawson's iteration in float64,
 * coefficients rounded to float32) made for this file. Errors measured
 * over every float32 input against float64 libm: exp 1.02, expm1 1.46,
 * tanh 2.61,
 * log 0.92, sin 2.34, cos 2.33, erf 1.77 ULP (the worst sin and cos are
 * large arguments, where the reduction's rounding shows); test_simd sweeps
 * the range on every ISA against these bounds.
 * Every multiply-add is an explicit FMA so that gcc and clang round alike. */
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
static inline int mc_any_i32(mc_vi32 m)
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

/* c[0] + c[1] x + ... + c[n-1] x^(n-1) by Horner's rule in FMAs; n is a
 * constant, the loop unrolls (gcc needs telling past about 16) and each
 * coefficient becomes a broadcast. */
static inline mc_vf32 mc_poly_f32(mc_vf32 x, const float *c, int n)
{
    mc_vf32 p = c[n - 1] - (mc_vf32){0};
#if defined(__clang__)
#pragma clang loop unroll(full)
#else
#pragma GCC unroll 24
#endif
    for (int i = n - 2; i >= 0; i--)
        p = mc_fma_f32(p, x, c[i] - (mc_vf32){0});
    return p;
}

#define MC_F(c) MC_SPLAT(mc_vf32, (float)(c))

/* The unsigned maximum of two vectors of uint32 lanes, in one instruction. */
static inline mc_vu32 mc_max_u32(mc_vu32 a, mc_vu32 b)
{
#if MC_VBYTES == 64
    return (mc_vu32)_mm512_max_epu32((__m512i)a, (__m512i)b);
#elif MC_VBYTES == 32
    return (mc_vu32)_mm256_max_epu32((__m256i)a, (__m256i)b);
#elif MC_VBYTES == 16 && defined(__aarch64__)
    return (mc_vu32)vmaxq_u32((uint32x4_t)a, (uint32x4_t)b);
#else
#error "no unsigned maximum for this MC_VBYTES"
#endif
}

/* |x|'s bits: ordered as |x| is, with NaN above inf */
static inline mc_vu32 mc_abs_bits_f32(mc_vf32 x) { return (mc_vu32)x & 0x7fffffffu; }
/* the key limit of "not NaN" on |x|'s bits */
#define MC_NOT_NAN_KEY_MAX 0x7f800000u

/* Each function fn below comes in four parts: mc_fn_key_f32, a lane's key
 * (a uint32 made from its bits in an integer instruction or two), whose
 * lanes lie in the fast path exactly when the key is at most
 * MC_FN_KEY_MAX (mc_fn_far_f32 tells the lanes above); mc_fn_core_f32
 * (the fast path); mc_fn_ok_f32; and
 * mc_fn_f32, which hands any vector with a lane outside the fast path to
 * SLEEF's entry point of the given ULP bound. The kernels of k_math.c run
 * the core and fold the keys of a block with an unsigned maximum (integer
 * instructions, off the floating-point pipes the core keeps busy: a
 * compare and branch per vector cost 15% of sin's time on AVX-512). */
#define MC_OWN_OR_SLEEF(fn, ulp, key_max)                                     \
    static inline mc_vi32 mc_##fn##_far_f32(mc_vu32 key)                      \
    {                                                                         \
        return (mc_vi32)(key > (key_max));                                    \
    }                                                                         \
    static inline mc_vi32 mc_##fn##_ok_f32(mc_vf32 x)                         \
    {                                                                         \
        return ~mc_##fn##_far_f32(mc_##fn##_key_f32(x));                      \
    }                                                                         \
    static inline mc_vf32 mc_##fn##_f32(mc_vf32 x)                            \
    {                                                                         \
        if (mc_any_i32(~mc_##fn##_ok_f32(x)))                                 \
            return (mc_vf32)MC_SLEEF_F(fn, ulp)((mc_sleef_vf)x);              \
        return mc_##fn##_core_f32(x);                                         \
    }

/* e^x - 1 as a pair: returns e^r - 1 for the reduced argument r and sets
 * *scale to 2^n, where x = n ln2 + r. Needs |x| <= 87 and no NaN. */
static inline mc_vf32 mc_expm1_reduced_f32(mc_vf32 x, mc_vf32 *scale)
{
    /* Adding 1.5 * 2^23 rounds x log2(e) to the nearest integer n and
     * leaves n in the low bits of the sum. */
    const float shift = 0x1.8p23f;
    mc_vf32 t = mc_fma_f32(x, MC_F(0x1.715476p0), MC_F(shift));
    mc_vf32 n = t - shift;
    /* unsigned: a lane out of range (recomputed through SLEEF later) must
     * not overflow a signed int here */
    mc_vu32 ni = (mc_vu32)t - (mc_vu32)MC_F(shift);
    /* ln2 = hi + lo, hi with 16 bits so that n * hi is exact */
    mc_vf32 r = mc_fma_f32(n, MC_F(-0x1.62e4p-1), x);
    r = mc_fma_f32(n, MC_F(-0x1.7f7d1cp-20), r);
    static const float exp_p[5] = {
        0x1.fffffcp-2, 0x1.555492p-3, 0x1.5558f2p-5, 0x1.1239d0p-7,
        0x1.6a242ap-10,
    };
    mc_vf32 p = mc_poly_f32(r, exp_p, 5);
    *scale = (mc_vf32)((ni + 127u) << 23);
    return mc_fma_f32(p, r * r, r);
}

/* |x| <= 87 */
static inline mc_vu32 mc_exp_key_f32(mc_vf32 x) { return mc_abs_bits_f32(x); }
#define MC_EXP_KEY_MAX 0x42ae0000u
static inline mc_vf32 mc_exp_core_f32(mc_vf32 x)
{
    mc_vf32 scale;
    mc_vf32 m = mc_expm1_reduced_f32(x, &scale);
    return mc_fma_f32(m, scale, scale);
}
MC_OWN_OR_SLEEF(exp, u10, MC_EXP_KEY_MAX)

/* min(lim, x), or x if x is NaN (the ISAs' minimum returns its second
 * operand, or NaN on NEON, when either is NaN) */
static inline mc_vf32 mc_min_keep_nan_f32(mc_vf32 lim, mc_vf32 x)
{
#if MC_VBYTES == 64
    return (mc_vf32)_mm512_min_ps((__m512)lim, (__m512)x);
#elif MC_VBYTES == 32
    return (mc_vf32)_mm256_min_ps((__m256)lim, (__m256)x);
#elif MC_VBYTES == 16 && defined(__aarch64__)
    return (mc_vf32)vminq_f32((float32x4_t)lim, (float32x4_t)x);
#else
#error "no minimum for this MC_VBYTES"
#endif
}

/* tanh(x) = m / (m + 2) with m = e^(2a) - 1, a = min(|x|, 10), and x's
 * sign. Its own reduction, cheaper than exp's by five instructions of the
 * eighteen: 2a = n ln2 + r with ln2 in one part (n <= 29, and an error in
 * m's last bits matters less as m grows: tanh's relative error is m's
 * times 2 / (m + 2)), the exponent bias 127 added in the rounding constant
 * so that 2^n is t's bits shifted, and one minimum that keeps NaN. A NaN
 * goes through every step as NaN, so tanh needs no fallback: its key never
 * leaves the fast path. m = 2^n (e^r - 1) + (2^n - 1), where 2^n - 1 is
 * exact, keeps m's relative accuracy near x = 0. */
static inline mc_vu32 mc_tanh_key_f32(mc_vf32 x)
{
    (void)x;
    return (mc_vu32){0};
}
static inline mc_vf32 mc_tanh_core_f32(mc_vf32 x)
{
    mc_vf32 a = mc_min_keep_nan_f32(MC_F(10.0f), mc_fabs_f32(x));
    const float shift = 0x1.8p23f + 127.0f; /* t's low bits: n + 127 */
    mc_vf32 t = mc_fma_f32(a, MC_F(0x1.715476p1), MC_F(shift));
    mc_vf32 n = t - shift;
    mc_vf32 scale = (mc_vf32)((mc_vu32)t << 23); /* 2^n */
    mc_vf32 r = mc_fma_f32(n, MC_F(-0x1.62e430p-1), a + a);
    static const float exp_p[5] = {
        0x1.fffffcp-2, 0x1.555492p-3, 0x1.5558f2p-5, 0x1.1239d0p-7,
        0x1.6a242ap-10,
    };
    mc_vf32 p = mc_poly_f32(r, exp_p, 5);
    mc_vf32 em1 = mc_fma_f32(p, r * r, r);
    mc_vf32 m = mc_fma_f32(scale, em1, scale - 1.0f);
    mc_vf32 q = m / (m + 2.0f); /* >= 0, or NaN */
    return (mc_vf32)((mc_vu32)q | ((mc_vu32)x & 0x80000000u));
}
MC_OWN_OR_SLEEF(tanh, u35, 0xffffffffu)

/* sin or cos of |x| <= 2^13 (no NaN). x = k pi/2 + r with |r| <= pi/2 and
 * k even for sin (2 round(x/pi)), odd for cos (2 round(x/pi - 1/2) + 1),
 * so both are +-sin(r): one odd polynomial of degree 11 (S of degree 4 in
 * r^2). pi/2 is split in four parts, the first three short enough (8 and
 * 11 bits) that k times them is exact for |k| < 2^13. The sign flips when
 * (k + 1) / 2 is odd. */
static inline mc_vf32 mc_sincos_core_f32(mc_vf32 x, int want_cos)
{
    const float shift = 0x1.8p23f;
    const mc_vf32 inv_pi = MC_F(0x1.45f306dc9c883p-2);
    mc_vf32 t = want_cos ? mc_fma_f32(x, inv_pi, MC_F(-0.5f)) + shift
                         : mc_fma_f32(x, inv_pi, MC_F(shift));
    mc_vf32 n = t - shift;
    /* k pi/2 = n pi (sin) or (n + 1/2) pi (cos), with pi/2's parts doubled
     * for sin, which saves forming k */
    mc_vf32 r;
    if (want_cos) {
        mc_vf32 k = mc_fma_f32(n, MC_F(2.0f), MC_F(1.0f));
        r = mc_fma_f32(k, MC_F(-0x1.92p0), x);
        r = mc_fma_f32(k, MC_F(-0x1.fb4p-12), r);
        r = mc_fma_f32(k, MC_F(-0x1.444p-24), r);
        r = mc_fma_f32(k, MC_F(-0x1.68c234p-39), r);
    } else {
        r = mc_fma_f32(n, MC_F(-0x1.92p1), x);
        r = mc_fma_f32(n, MC_F(-0x1.fb4p-11), r);
        r = mc_fma_f32(n, MC_F(-0x1.444p-23), r);
        r = mc_fma_f32(n, MC_F(-0x1.68c234p-38), r);
    }
    mc_vf32 r2 = r * r;
    static const float sin_s[5] = {
        -0x1.555556p-3, 0x1.11110cp-7, -0x1.a017dap-13, 0x1.717080p-19,
        -0x1.9a687cp-26,
    };
    mc_vf32 p = mc_poly_f32(r2, sin_s, 5);
    p = mc_fma_f32(p * r2, r, r);
    /* (k + 1) / 2 is n for sin, n + 1 for cos; t's low bit is n's */
    mc_vu32 flip = (mc_vu32)t << 31;
    return (mc_vf32)((mc_vu32)p ^ (want_cos ? flip ^ 0x80000000u : flip));
}

/* |x| <= 2^13 */
static inline mc_vu32 mc_sin_key_f32(mc_vf32 x) { return mc_abs_bits_f32(x); }
#define MC_SINCOS_KEY_MAX 0x46000000u
static inline mc_vf32 mc_sin_core_f32(mc_vf32 x) { return mc_sincos_core_f32(x, 0); }
MC_OWN_OR_SLEEF(sin, u35, MC_SINCOS_KEY_MAX)

static inline mc_vu32 mc_cos_key_f32(mc_vf32 x) { return mc_abs_bits_f32(x); }
static inline mc_vf32 mc_cos_core_f32(mc_vf32 x) { return mc_sincos_core_f32(x, 1); }
MC_OWN_OR_SLEEF(cos, u35, MC_SINCOS_KEY_MAX)

/* log of positive normal x: x = 2^k m with m in [0.75, 1.5), then
 * log1p(m - 1) = f + f^2 Q(f) (Q of degree 8) plus k ln2. AVX-512 splits x
 * with getmant/getexp (k is the exponent of x / 0.75, which 1/0.75 rounded
 * up keeps on the right side of each power of two); the others with
 * integer arithmetic on the bits. */
/* (normal, positive, and up to 2^127 only, so that x / 0.75 stays finite) */
/* 2^-126 <= x <= 2^127: the bits less those of 2^-126 wrap around for
 * smaller, zero and negative x */
static inline mc_vu32 mc_log_key_f32(mc_vf32 x) { return (mc_vu32)x - 0x00800000u; }
#define MC_LOG_KEY_MAX (0x7f000000u - 0x00800000u)
static inline mc_vf32 mc_log_core_f32(mc_vf32 x)
{
#if MC_VBYTES == 64
    mc_vf32 m = (mc_vf32)_mm512_getmant_ps((__m512)x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_src);
    mc_vf32 kf = (mc_vf32)_mm512_getexp_ps((__m512)(x * MC_F(1.0f / 0.75f)));
#else
    /* unsigned subtraction: negative x (an out-of-range lane) wraps */
    mc_vi32 ix = (mc_vi32)((mc_vu32)x - (mc_vu32)MC_F(0.75f));
    mc_vf32 m = (mc_vf32)((ix & 0x007fffff) + (mc_vi32)MC_F(0.75f));
    mc_vf32 kf = __builtin_convertvector(ix >> 23, mc_vf32);
#endif
    mc_vf32 f = m - 1.0f;
    static const float log_q[9] = {
        -0.5f, 0x1.5555a6p-2, -0x1.000024p-2, 0x1.99685ap-3,
        -0x1.54f240p-3, 0x1.2897b6p-3, -0x1.0d8feep-3, 0x1.abf664p-4,
        -0x1.6fe5ecp-5,
    };
    mc_vf32 q = mc_poly_f32(f, log_q, 9);
    mc_vf32 r = mc_fma_f32(q, f * f, f);
    /* k ln2 + r, with ln2 = hi + lo and k * hi exact */
    return mc_fma_f32(kf, MC_F(0x1.62e4p-1), mc_fma_f32(kf, MC_F(0x1.7f7d1cp-20), r));
}
MC_OWN_OR_SLEEF(log, u10, MC_LOG_KEY_MAX)

/* erf of x without NaN: |x| < 0.921875: x P(x^2) (P of degree 6, relative
 * error 4e-10); below 4, a degree-16 polynomial in |x| - 2.46 (absolute
 * error 8e-9, under a sixth of erf's ULP near 1); from 4 on erf rounds to
 * +-1. Both branches run and each lane picks one. */
static inline mc_vu32 mc_erf_key_f32(mc_vf32 x) { return mc_abs_bits_f32(x); }
static inline mc_vf32 mc_erf_core_f32(mc_vf32 x)
{
    mc_vf32 a = mc_fabs_f32(x);
    mc_vf32 x2 = x * x;
    /* x P(x^2) = x c0 + x x^2 Q(x^2), with x c0 inside one FMA: rounding
     * P itself first would cost up to a ULP more */
    static const float erf_q[6] = {
        -0x1.812744p-2, 0x1.ce2e20p-4, -0x1.b8107cp-6, 0x1.54dad6p-8,
        -0x1.aae97ap-11, 0x1.5f1118p-14,
    };
    mc_vf32 q0 = mc_poly_f32(x2, erf_q, 6);
    mc_vf32 small = mc_fma_f32(x, MC_F(0x1.20dd76p+0), x * x2 * q0);
    mc_vf32 t = mc_sel_f32(a < 4.0f, a, MC_F(4.0f)) - 2.46f;
    static const float erf_big[17] = {
        0x1.ffbe06p-1, 0x1.5c2a9ap-9, -0x1.ac3eb8p-8, 0x1.422796p-7,
        -0x1.44dfd8p-7, 0x1.bdf88cp-8, -0x1.80e30cp-9, 0x1.d4fbbap-12,
        0x1.73d50ap-12, -0x1.2bb5a4p-12, 0x1.435832p-14, 0x1.10def6p-16,
        -0x1.2e4aa2p-16, 0x1.6e1fe4p-19, 0x1.59e6c0p-20, -0x1.60e536p-22,
        -0x1.7ff4c2p-26,
    };
    mc_vf32 q = mc_poly_f32(t, erf_big, 17);
    mc_vf32 big = mc_sel_f32(q < 1.0f, q, MC_F(1.0f));
    big = mc_sel_f32(a < 4.0f, big, MC_F(1.0f));
    return mc_sel_f32(a < 0.921875f, small, mc_copysign_f32(big, x));
}
MC_OWN_OR_SLEEF(erf, u10, MC_NOT_NAN_KEY_MAX)

/* e^x - 1 for |x| <= 87: 2^n (e^r - 1) + (2^n - 1), where 2^n - 1 is exact
 * and e^r - 1 is small near 0, so no bits cancel away near x = 0. */
static inline mc_vu32 mc_expm1_key_f32(mc_vf32 x) { return mc_abs_bits_f32(x); }
static inline mc_vf32 mc_expm1_core_f32(mc_vf32 x)
{
    mc_vf32 scale;
    mc_vf32 m = mc_expm1_reduced_f32(x, &scale);
    return mc_fma_f32(scale, m, scale - 1.0f);
}
MC_OWN_OR_SLEEF(expm1, u10, MC_EXP_KEY_MAX)


#undef MC_OWN_OR_SLEEF
#undef MC_F

#endif
