/* MLX's affine quantize and dequantize, element for element (simd/quant.h):
 * quantize follows MLX 0.31.1's CPU kernel (float32 group statistics,
 * rint, clamp), dequantize its composition of ops (code * scale, then
 * + bias, each rounded to the scales' dtype). Not a hot path: written for
 * exactness, one group at a time. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "simd/quant.h"
#include "simd/quant_elem.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The code at bit offset o of a bit stream (reads only the bytes the code
 * covers). */
static inline uint32_t code_at(const uint8_t *p, size_t o, int bits)
{
    size_t byte = o >> 3;
    unsigned sh = (unsigned)(o & 7);
    uint32_t v = p[byte];
    if (sh + (unsigned)bits > 8)
        v |= (uint32_t)p[byte + 1] << 8;
    return (v >> sh) & ((1u << bits) - 1u);
}

void mc_quant_affine(const void *w, int dtype, size_t g0, size_t g1, int gs, int bits, uint8_t *out, void *scales,
                     void *biases)
{
    const float n_bins = (float)((1 << bits) - 1);
    const float eps = 1e-7f;
    size_t gbytes = (size_t)gs * (size_t)bits / 8;
    for (size_t g = g0; g < g1; g++) {
        size_t base = g * (size_t)gs;
        float w_min = INFINITY, w_max = -INFINITY;
        for (int j = 0; j < gs; j++) {
            float v = mc_qe_load(w, dtype, base + (size_t)j);
            w_max = w_max < v ? v : w_max;
            w_min = v < w_min ? v : w_min;
        }
        /* the scale's sign makes the extreme of larger magnitude a code
         * exactly, so that 0 stays representable */
        bool neg_edge = fabsf(w_min) > fabsf(w_max);
        float scale = (w_max - w_min) / n_bins;
        scale = scale < eps ? eps : scale;
        scale = neg_edge ? scale : -scale;
        float edge = neg_edge ? w_min : w_max;
        float q0 = rintf(edge / scale);
        float bias = 0.0f;
        if (q0 != 0.0f) {
            scale = edge / q0;
            bias = edge;
        }
        uint8_t *p = out + g * gbytes;
        memset(p, 0, gbytes);
        for (int j = 0; j < gs; j++) {
            float v = rintf((mc_qe_load(w, dtype, base + (size_t)j) - bias) / scale);
            v = v < 0.0f ? 0.0f : v;
            v = n_bins < v ? n_bins : v;
            uint32_t c = (uint32_t)v;
            size_t o = (size_t)j * (size_t)bits;
            unsigned sh = (unsigned)(o & 7);
            p[o >> 3] |= (uint8_t)(c << sh);
            if (sh + (unsigned)bits > 8)
                p[(o >> 3) + 1] |= (uint8_t)(c >> (8 - sh));
        }
        mc_qe_store(scales, dtype, g, scale);
        mc_qe_store(biases, dtype, g, bias);
    }
}

void mc_dequant_affine(const uint8_t *w, const void *scales, const void *biases, int sdtype, size_t g0, size_t g1,
                       int gs, int bits, void *out)
{
    size_t gbits = (size_t)gs * (size_t)bits;
    for (size_t g = g0; g < g1; g++) {
        float s = mc_qe_load(scales, sdtype, g), b = mc_qe_load(biases, sdtype, g);
        for (int j = 0; j < gs; j++) {
            float c = (float)code_at(w, g * gbits + (size_t)j * (size_t)bits, bits);
            float t = mc_qe_round(sdtype, c * s);
            mc_qe_store(out, sdtype, g * (size_t)gs + (size_t)j, t + b);
        }
    }
}
