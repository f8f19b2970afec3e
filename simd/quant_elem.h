/* One element of a float32, float16 or bfloat16 buffer (simd/dtype.h
 * codes) read as float32, stored rounded, or rounded in place: what the
 * exact packing kernels (quant_pack.c, quant_fp.c) need to reproduce MLX's
 * arithmetic in the input's own dtype. */
#ifndef MC_SIMD_QUANT_ELEM_H
#define MC_SIMD_QUANT_ELEM_H

#include <stddef.h>
#include <stdint.h>

#include "simd/dtype.h"
#include "simd/half_convert.h"

static inline float mc_qe_load(const void *p, int dtype, size_t i)
{
    switch (dtype) {
    case MC_SIMD_FLOAT16: return mc_f16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_BFLOAT16: return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static inline void mc_qe_store(void *p, int dtype, size_t i, float v)
{
    switch (dtype) {
    case MC_SIMD_FLOAT16: ((uint16_t *)p)[i] = mc_f32_to_f16(v); break;
    case MC_SIMD_BFLOAT16: ((uint16_t *)p)[i] = mc_f32_to_bf16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

/* v rounded to dtype, as a float32. */
static inline float mc_qe_round(int dtype, float v)
{
    switch (dtype) {
    case MC_SIMD_FLOAT16: return mc_f16_to_f32(mc_f32_to_f16(v));
    case MC_SIMD_BFLOAT16: return mc_bf16_to_f32(mc_f32_to_bf16(v));
    default: return v;
    }
}

#endif
