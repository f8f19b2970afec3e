/* MLX's float8 e4m3 conversions over contiguous runs (fp8_k.c). */
#ifndef MC_SIMD_FP8_H
#define MC_SIMD_FP8_H

#include <stddef.h>
#include <stdint.h>

/* Rounds each float to e4m3 as MLX's ToFP8 does: nearest even, values past
 * 448 (infinities and NaN too) saturate to 448 with their sign. */
void mc_fp8_from_f32(const float *in, uint8_t *out, size_t n);
/* Widens each e4m3 byte to float, as MLX's FromFP8. */
void mc_fp8_to_f32(const uint8_t *in, float *out, size_t n);

#endif
