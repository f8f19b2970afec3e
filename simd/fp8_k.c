/* Owns the float8 e4m3 kernels: MLX's bit manipulations on plain
 * integers. Values below 2^-6 are rounded by one float addition of 2^14,
 * which leaves the e4m3 subnormal, rounded to nearest even, in the low
 * mantissa bits; larger ones round their mantissa to 3 bits by adding
 * half an ulp less one plus the odd bit. */
#include <string.h>

#include "simd/fp8.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint8_t one_to_fp8(float f)
{
    const uint32_t fp8_max = 543u << 21, denorm = 141u << 23;
    uint32_t b = bits_of(f), sign = b & 0x80000000u;
    b ^= sign;
    uint8_t low = (uint8_t)(bits_of(float_of(b) + float_of(denorm)) - denorm);
    uint32_t high = b + (((uint32_t)(7 - 127) << 23) + 0x7FFFFu) + ((b >> 20) & 1u);
    uint8_t r = b < (121u << 23) ? low : (uint8_t)(high >> 20);
    if (b >= fp8_max)
        r = 0x7E;
    return (uint8_t)(r | (sign >> 24));
}

void mc_fp8_from_f32(const float *in, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = one_to_fp8(in[i]);
}

/* e4m3's exponent bias is 7, a half's 15: the byte's low 7 bits shifted to
 * a half's exponent and mantissa read 2^8 too small. */
void mc_fp8_to_f32(const uint8_t *in, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)(in[i] & 127u) << 7;
        uint32_t e = h >> 10, m = h & 0x3FFu;
        float v;
        if (e == 0)
            v = (float)m * 0x1p-24f; /* a half subnormal */
        else
            v = float_of(((e + 112u) << 23) | (m << 13));
        v *= 256.0f;
        out[i] = (in[i] & 128u) ? -v : v;
    }
}
