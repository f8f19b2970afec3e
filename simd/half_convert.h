/* Scalar float16 / bfloat16 <-> float32 conversions (round to nearest even),
 * written on bit patterns so they work on every compiler and target. */
#ifndef MC_SIMD_HALF_CONVERT_H
#define MC_SIMD_HALF_CONVERT_H

#include <stdint.h>
#include <string.h>

static inline uint32_t mc_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float mc_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float mc_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) /* inf or nan: keep the payload */
        return mc_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        /* zero or subnormal: value is man * 2^-24 */
        float v = (float)man * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return mc_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t mc_f32_to_f16(float f)
{
    uint32_t u = mc_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* inf or nan (quiet the nan) */
        return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
    if (abs >= 0x477ff000u) /* rounds to a value past the largest half */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) {
        /* subnormal half or zero: let the float unit round to a multiple of 2^-24 */
        float v = mc_bits_f32(abs) * 16777216.0f; /* 2^24 */
        uint32_t r = (uint32_t)v;
        float rem = v - (float)r;
        if (rem > 0.5f || (rem == 0.5f && (r & 1u)))
            r++;
        return (uint16_t)(sign | r);
    }
    /* normal: rebias the exponent and round the dropped 13 bits to nearest even */
    uint32_t mant_round = abs + 0xfffu + ((abs >> 13) & 1u);
    return (uint16_t)(sign | ((mant_round - 0x38000000u) >> 13));
}

static inline float mc_bf16_to_f32(uint16_t b) { return mc_bits_f32((uint32_t)b << 16); }

static inline uint16_t mc_f32_to_bf16(float f)
{
    uint32_t u = mc_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* nan: keep it a quiet nan */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#endif
