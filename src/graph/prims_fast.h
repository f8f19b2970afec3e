/* The parameters of fast.h's primitives (prims_fast.c), MLX's RMSNorm,
 * LayerNorm, RoPE and ScaledDotProductAttention. Every field is 4 bytes,
 * so params compare bytewise without padding.
 *
 * Inputs, as MLX gives them to its primitives:
 *   RMSNorm    x, weight (1-D, or a 0-d 1 when absent), all of the output type
 *   LayerNorm  x, weight (1-D or a 0-d 1), bias (1-D or a 0-d 0)
 *   RoPE       x, offset (int32, 0-d or one per batch entry), [freqs (float32)]
 *   SDPA       q, k, v, [mask (broadcast to (B, Hq, Lq, Lk), bool or the
 *              output type)], [sinks (Hq, output type)] */
#ifndef MC_GRAPH_PRIMS_FAST_H
#define MC_GRAPH_PRIMS_FAST_H

#include "graph/primitive.h"

typedef struct mc_norm_params {
    float eps;
} mc_norm_params;

typedef struct mc_rope_params {
    int dims;
    int traditional;
    int forward; /* 0: the inverse rotation (RoPE's vjp) */
    int has_freqs;
    float base;
    float scale;
} mc_rope_params;

typedef struct mc_sdpa_params {
    float scale;
    int causal;
    int has_mask;
    int has_sinks;
} mc_sdpa_params;

/* Runs attention into out (fast_sdpa.c): q, k, v as above, mask and sinks
 * NULL when absent; inputs evaluated, out's meta set. Returns 0 or
 * reports. */
int mc_sdpa_eval(mc_array *out, mc_array *q, mc_array *k, mc_array *v, mc_array *mask, mc_array *sinks,
                 const mc_sdpa_params *p);

#endif
