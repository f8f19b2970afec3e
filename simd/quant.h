/* Kernels of MLX's quantization over raw pointers: packing, unpacking and
 * the products of a float matrix with a packed one, in the affine mode
 * (below) and the floating point modes (mxfp4, mxfp8, nvfp4).
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

/* MLX 0.31's floating point modes, told apart by group size and bits as
 * its kernels do: mxfp4 (gs 32, bits 4), mxfp8 (32, 8), nvfp4 (16, 4).
 * Codes are fp4 e2m1 (a nibble, element 2i in the low one of byte i) or
 * fp8 e4m3 (a byte); one uint8 scale per group, e8m0 (2^(s - 127)) for
 * gs 32 and e4m3 for gs 16; no biases. */

/* MLX's CPU quantize for these modes (its composition of ops, every step
 * rounded to w's dtype where MLX's is) of groups [g0, g1) of w: codes into
 * packed (group g at byte g * gs * bits / 8), scales into scales[g].
 * scale_encode is nvfp4's 448 * 6 / global_scale (1 without one). */
void mc_quant_fp(const void *w, int dtype, size_t g0, size_t g1, int gs, int bits, float scale_encode,
                 uint8_t *packed, uint8_t *scales);

/* MLX's fp dequantize of groups [g0, g1) into out of dtype: lut value times
 * the decoded scale, rounded to dtype; with inv_encode (nvfp4 with a global
 * scale: global_scale / (448 * 6)) the scale is multiplied by it and out
 * is float32, as MLX's type promotion makes it. */
void mc_dequant_fp(const uint8_t *w, const uint8_t *scales, int gs, int bits, size_t g0, size_t g1, int dtype,
                   const float *inv_encode, void *out);

/* MLX's CPU quantize-then-dequantize of one row of n values of x (dtype)
 * into out (dtype), as QQMatmul applies it to its first operand: float32
 * arithmetic, e8m0 scales rounded half away from zero, fp4 rounded to
 * nearest even. */
void mc_qdq_fp(const void *x, int dtype, size_t n, int gs, int bits, void *out);

/* A packed matrix for the products: row r's words start at w + r * wld,
 * its group scales and biases at r * sld (in elements of sdtype; with fp
 * set, uint8 scales of the modes above and no biases). */
typedef struct mc_qmat {
    const uint32_t *w;
    size_t wld;
    const void *scales, *biases;
    size_t sld;
    int sdtype;
    int bits, gs;
    int fp;
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
 * floats. The same as mc_qgemv_t_prep then mc_qgemv_t_rows. */
void mc_qgemv_t(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo, int n0, int n1,
                float *tmp);

/* The decode product in two steps, for callers that split W's rows across
 * threads: mc_qgemv_t_prep derives from x, once per product, what every
 * row needs (x reordered to the kernel's unpacking order, or its group
 * sums) into prep (mc_qgemv_t_prep_size floats); mc_qgemv_t_rows then
 * computes any rows, from any number of threads at once, reading prep and
 * writing only its own rows of out and its own work (mc_qgemv_t_scratch
 * minus mc_qgemv_t_prep_size floats). */
size_t mc_qgemv_t_prep_size(const mc_qmat *q, int M, int K);
void mc_qgemv_t_prep(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *prep);
void mc_qgemv_t_rows(const mc_qmat *q, int K, const float *x, int M, size_t ldx, const float *prep, float *out,
                     size_t ldo, int n0, int n1, float *work);

#endif
