/* The quantization primitives (prims_quant.c): Quantize (MLX's
 * fast::Quantize, one node per output), Dequantize, QuantizedMatmul and
 * QQMatmul, in MLX 0.31's modes: "affine" and the floating point ones
 * (mxfp4, mxfp8, nvfp4); packed layout and kernels in simd/quant.h.
 *
 * Inputs (checked by the ops in src/ops/quant.c, which also convert
 * scales, biases and x to one floating dtype as MLX does in affine mode):
 *   Quantize         w (..., K) float32/float16/bfloat16 [, global scale
 *                    (nvfp4)] -> which = 0: the packed (..., K * bits / 32)
 *                    uint32; 1: scales (..., K / group_size), w's dtype
 *                    (affine) or uint8 (fp modes); 2: biases (affine)
 *   Dequantize       affine: w (..., Kp) uint32, scales, biases (..., G) of
 *                    one floating dtype -> (..., Kp * 32 / bits) of that
 *                    dtype; fp: w, uint8 scales [, global scale] -> of the
 *                    params' dtype (float32 with a global scale)
 *   QuantizedMatmul  x (..., M, K), w, scales [, biases (affine)] -> x @
 *                    W^T (transpose) or x @ W, W the dequantized w; w is
 *                    2-D or has x's batch dims; fp modes: x's dtype
 *   QQMatmul         x (M, K) float, w (N, K) float or packed with its
 *                    uint8 scales, [global scales, unused as on MLX's CPU]
 *                    -> x @ W^T, both quantized and dequantized by rows */
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
    int dtype;     /* Dequantize in fp modes: the output dtype */
} mc_quant_params;

/* Builds a QuantizedMatmul node of x, w, scales, biases (already of one
 * dtype and shapes as the op checks them; biases NULL in the fp modes). A
 * new reference or NULL with an error reported. */
mc_array *mc_node_quantized_matmul(mc_array *x, mc_array *w, mc_array *scales, mc_array *biases, int group_size,
                                   int bits, mc_qmode mode, bool transpose, const char *fn);

/* A QQMatmul node: x (M, K) against w (N, K) float, or packed with its
 * scales (scales NULL when w is float). */
mc_array *mc_node_qqmm(mc_array *x, mc_array *w, mc_array *scales, int group_size, int bits, mc_qmode mode,
                       const char *fn);

/* A Dequantize node of w with scales and biases (one floating dtype). */
mc_array *mc_node_dequantize(mc_array *w, mc_array *scales, mc_array *biases, int group_size, int bits,
                             const char *fn);

#endif
