/* MLX 0.31.1's floating point quantization modes (mxfp4, mxfp8, nvfp4),
 * element for element (simd/quant.h). MLX's CPU quantize and dequantize
 * for these modes are compositions of ops (mlx/ops.cpp fp_quantize,
 * fp_dequantize), so each step here rounds to the dtype MLX's step
 * produces: the input's, or float32 where a float32 constant promotes it.
 * The quantize-dequantize of qqmm follows MLX's CPU kernel instead
 * (mlx/backend/cpu/quantized.cpp), which rounds differently at ties. Not
 * a hot path: written for exactness, one group at a time. */
#include <math.h>
#include <string.h>

#include "simd/fp8.h"
#include "simd/quant.h"
#include "simd/quant_elem.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* e2m1 by code: the sign is the high bit */
static const float fp4_value[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

static uint8_t to_fp8(float v)
{
    uint8_t b;
    mc_fp8_from_f32(&v, &b, 1);
    return b;
}

static float from_fp8(uint8_t b)
{
    float v;
    mc_fp8_to_f32(&b, &v, 1);
    return v;
}

/* MLX's fallback picks the code as the argmin of |v - value| over the
 * table (each difference rounded to dtype): the first minimum wins, so a
 * tie goes to the smaller magnitude and zero is always code 0. */
static uint8_t nearest_fp4(float v, int dtype)
{
    uint8_t best = 0;
    float d0 = fabsf(mc_qe_round(dtype, v - fp4_value[0]));
    for (int k = 1; k < 16; k++) {
        float d = fabsf(mc_qe_round(dtype, v - fp4_value[k]));
        if (d < d0) {
            d0 = d;
            best = (uint8_t)k;
        }
    }
    return best;
}

static void put_code(uint8_t *p, int j, int bits, uint8_t code)
{
    if (bits == 8)
        p[j] = code;
    else
        p[j >> 1] |= (uint8_t)(code << ((j & 1) * 4));
}

void mc_quant_fp(const void *w, int dtype, size_t g0, size_t g1, int gs, int bits, float scale_encode,
                 uint8_t *packed, uint8_t *scales)
{
    const float maxval = bits == 4 ? 6.0f : 448.0f;
    const size_t gbytes = (size_t)gs * (size_t)bits / 8;
    for (size_t g = g0; g < g1; g++) {
        size_t base = g * (size_t)gs;
        uint8_t *p = packed + g * gbytes;
        memset(p, 0, gbytes);
        float amax = -INFINITY;
        for (int j = 0; j < gs; j++) {
            float a = fabsf(mc_qe_load(w, dtype, base + (size_t)j));
            amax = a > amax ? a : amax;
        }
        float s = mc_qe_round(dtype, amax / maxval);
        if (gs == 16) {
            /* the scale times a float32 factor is float32; the codes are
             * chosen in float32 too */
            uint8_t sb = to_fp8(s * scale_encode);
            float sd = from_fp8(sb);
            for (int j = 0; j < gs; j++) {
                float v = mc_qe_round(dtype, mc_qe_load(w, dtype, base + (size_t)j) / sd) * scale_encode;
                put_code(p, j, bits, bits == 8 ? to_fp8(v) : nearest_fp4(v, MC_SIMD_FLOAT32));
            }
            scales[g] = sb;
        } else {
            float e = s == 0.0f ? 0.0f : rintf(mc_qe_round(dtype, log2f(s)));
            float pow2 = mc_qe_round(dtype, exp2f(e));
            for (int j = 0; j < gs; j++) {
                float v = mc_qe_round(dtype, mc_qe_load(w, dtype, base + (size_t)j) / pow2);
                put_code(p, j, bits, bits == 8 ? to_fp8(v) : nearest_fp4(v, dtype));
            }
            scales[g] = (uint8_t)(int)(e + 127.0f);
        }
    }
}

static float code_value(const uint8_t *p, size_t e, int bits)
{
    if (bits == 8)
        return from_fp8(p[e]);
    return fp4_value[(p[e >> 1] >> ((e & 1) * 4)) & 15u];
}

void mc_dequant_fp(const uint8_t *w, const uint8_t *scales, int gs, int bits, size_t g0, size_t g1, int dtype,
                   const float *inv_encode, void *out)
{
    for (size_t g = g0; g < g1; g++) {
        float s;
        int odt = dtype;
        if (gs == 16) {
            s = from_fp8(scales[g]);
            if (inv_encode) {
                s *= *inv_encode;
                odt = MC_SIMD_FLOAT32;
            }
        } else {
            s = mc_qe_round(dtype, exp2f((float)scales[g] - 127.0f));
        }
        for (int j = 0; j < gs; j++) {
            size_t e = g * (size_t)gs + (size_t)j;
            mc_qe_store(out, odt, e, code_value(w, e, bits) * s);
        }
    }
}

/* MLX's to_fp8_e8m0: the exponent of the nearest power of two, half away
 * from zero; zero gets the smallest (its x86 conversion of -inf). */
static uint8_t e8m0(float x)
{
    if (!isfinite(x))
        return 0xFF;
    if (x < 0.0f)
        return 0;
    int n = x == 0.0f ? -127 : (int)roundf(log2f(x));
    n = n < -127 ? -127 : n > 127 ? 127 : n;
    return (uint8_t)(n + 127);
}

/* MLX's to_fp4_e2m1: round to nearest, ties to even, the sign kept. */
static uint8_t fp4_rne(float x)
{
    if (isnan(x))
        return 0x7;
    uint8_t sign = signbit(x) ? 0x8 : 0x0;
    x = fabsf(x);
    uint8_t b = x > 5.0f     ? 7
                : x >= 3.5f  ? 6
                : x > 2.5f   ? 5
                : x >= 1.75f ? 4
                : x > 1.25f  ? 3
                : x >= 0.75f ? 2
                : x > 0.25f  ? 1
                             : 0;
    return (uint8_t)(b | sign);
}

void mc_qdq_fp(const void *x, int dtype, size_t n, int gs, int bits, void *out)
{
    for (size_t g = 0; g + (size_t)gs <= n; g += (size_t)gs) {
        float scale = -INFINITY;
        for (int j = 0; j < gs; j++) {
            float a = fabsf(mc_qe_load(x, dtype, g + (size_t)j));
            scale = a > scale ? a : scale;
        }
        scale /= bits == 4 ? 6.0f : 448.0f;
        if (gs == 16) {
            scale = from_fp8(to_fp8(scale));
        } else {
            uint8_t sb = e8m0(scale);
            scale = mc_bf16_to_f32(sb == 0 ? 0x40 : (uint16_t)(sb << 7));
        }
        for (int j = 0; j < gs; j++) {
            float v = scale == 0.0f ? 0.0f : mc_qe_load(x, dtype, g + (size_t)j) / scale;
            float q = bits == 8 ? from_fp8(to_fp8(v)) : fp4_value[fp4_rne(v)];
            mc_qe_store(out, dtype, g + (size_t)j, scale * q);
        }
    }
}
