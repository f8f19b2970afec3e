/* The quantization primitives (prims_quant.c): Quantize (MLX's
 * fast::Quantize, one node per output), Dequantize and QuantizedMatmul, in
 * MLX 0.31's "affine" mode; packed layout and kernels in simd/quant.h.
 *
 * Inputs (checked by the ops in src/ops/quant.c, which also convert
 * scales, biases and x to one floating dtype as MLX does):
 *   Quantize         w (..., K) float32/float16/bfloat16 -> which = 0: the
 *                    packed (..., K * bits / 32) uint32; 1: scales and
 *                    2: biases (..., K / group_size), w's dtype
 *   Dequantize       w (..., Kp) uint32, scales, biases (..., G) of one
 *                    floating dtype -> (..., Kp * 32 / bits) of that dtype
 *   QuantizedMatmul  x (..., M, K), w, scales, biases -> x @ W^T
 *                    (transpose) or x @ W, W the dequantized w; w is 2-D
 *                    or has x's batch dims */
#ifndef MC_GRAPH_PRIMS_QUANT_H
#define MC_GRAPH_PRIMS_QUANT_H

#include "graph/primitive.h"

typedef enum mc_qmode { MC_QMODE_AFFINE, MC_QMODE_MXFP4, MC_QMODE_MXFP8, MC_QMODE_NVFP4 } mc_qmode;

/* Zero-initialise before filling: params compare with memcmp. */
typedef struct mc_quant_params {
    int group_size, bits;
    int mode;      /* mc_qmode */
    int transpose; /* QuantizedMatmul */
    int which;     /* Quantize: the output this node is */
} mc_quant_params;

/* Builds a QuantizedMatmul node of x, w, scales, biases (already of one
 * dtype and shapes as the op checks them). A new reference or NULL with an
 * error reported. */
mc_array *mc_node_quantized_matmul(mc_array *x, mc_array *w, mc_array *scales, mc_array *biases, int group_size,
                                   int bits, bool transpose, const char *fn);

/* A Dequantize node of w with scales and biases (one floating dtype). */
mc_array *mc_node_dequantize(mc_array *w, mc_array *scales, mc_array *biases, int group_size, int bits,
                             const char *fn);

#endif
