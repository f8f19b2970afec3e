/* Kernels of MLX's affine quantization over raw pointers: packing,
 * unpacking and the products of a float matrix with a packed one.
 *
 * The packed layout is MLX 0.31's for every bits value: the b-bit codes of
 * a row, element i at bit i * b of the row's little-endian bit stream (so a
 * 4-bit word holds elements 8j..8j+7 from its low nibble up, and a 3-, 5-
 * or 6-bit code may straddle bytes and words). A group of gs codes
 * (gs = 32, 64, 128) fills gs * b / 32 whole words, with one scale and one
 * bias: value = scale * code + bias. Scales and biases are float32,
 * float16 or bfloat16 (simd/dtype.h codes). */
#ifndef MC_SIMD_QUANT_H
#define MC_SIMD_QUANT_H

#include <stddef.h>
#include <stdint.h>

/* MLX's CPU quantize (fast::Quantize::eval_cpu) of groups [g0, g1) of
 * consecutive gs values of w (dtype float32, float16 or bfloat16): per
 * group, the scale and bias (computed in float32, stored as w's dtype) and
 * the codes, written into the zeroed-or-not bytes of out at the group's
 * place (group g at byte g * gs * bits / 8). */
void mc_quant_affine(const void *w, int dtype, size_t g0, size_t g1, int gs, int bits, uint8_t *out, void *scales,
                     void *biases);

/* MLX's dequantize of groups [g0, g1) (its composition of ops: code times
 * scale rounded to the scales' dtype, plus bias rounded again): out is of
 * the scales' dtype, gs values per group. */
void mc_dequant_affine(const uint8_t *w, const void *scales, const void *biases, int sdtype, size_t g0, size_t g1,
                       int gs, int bits, void *out);

/* A packed matrix for the products: row r's words start at w + r * wld,
 * its group scales and biases at r * sld (in elements of sdtype). */
typedef struct mc_qmat {
    const uint32_t *w;
    size_t wld;
    const void *scales, *biases;
    size_t sld;
    int sdtype;
    int bits, gs;
} mc_qmat;

/* Elements [e0, e0 + count) of row `row` as float32 (scale * code + bias
 * in float32); e0 and count are multiples of gs. */
void mc_qdequant_f32(const mc_qmat *q, int row, int e0, int count, float *out);

/* The float32 scratch mc_qgemv_t needs, in floats, for M rows of x of
 * length K. */
size_t mc_qgemv_t_scratch(const mc_qmat *q, int M, int K);

/* out[m * ldo + n] = sum_k x[m * ldx + k] * W[n][k] for m < M and rows
 * n in [n0, n1) of the packed W (K elements per row): the decode product
 * (x small, W streamed once). Bits 2, 4 and 8 unpack in registers; the
 * others unpack a row into the scratch. tmp holds mc_qgemv_t_scratch
 * floats. */
void mc_qgemv_t(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo, int n0, int n1,
                float *tmp);

#endif
