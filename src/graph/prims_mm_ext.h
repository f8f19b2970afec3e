/* The matrix products by index, block mask and segment (prims_mm_ext.c,
 * evaluated by mm_ext_eval.c): GatherMM, BlockMaskedMM and SegmentedMM,
 * with their parameters and the builders that ops (src/ops/matmul_ext.c)
 * and the primitives' own vjp rules share.
 *
 * GatherMM: inputs a (..., M, K), b (..., K, N) of one floating dtype and
 * lhs, rhs indices (uint32, one shape I). Output I + (M, N): product j is
 * a's matrix lhs[j] times b's matrix rhs[j], a matrix number counting a's
 * batch dims row-major. An index past the last matrix reads the last one
 * (MLX reads outside the buffer there).
 *
 * BlockMaskedMM: inputs a (B..., M, K), b (B..., K, N) of one floating
 * dtype and one batch shape, then the out mask (B..., tm, tn) if present,
 * then the lhs (B..., tm, tk) and rhs (B..., tk, tn) masks if present
 * (both or neither), where tX = ceil(X / block_size). A bool mask zeroes
 * the blocks it is false on; a floating mask (of the output's dtype)
 * multiplies them. Which masks are present follows from the arity: 3 out
 * only, 4 operand masks only, 5 all three.
 *
 * SegmentedMM: inputs a (M, K), b (K, N) of one floating dtype, segments
 * (S..., 2) uint32. Output S + (M, N): a[:, s0:s1] @ b[s0:s1, :] for each
 * segment (s0, s1), zeros when s1 <= s0; bounds past K read as K. */
#ifndef MC_GRAPH_PRIMS_MM_EXT_H
#define MC_GRAPH_PRIMS_MM_EXT_H

#include <stdbool.h>

#include "graph/build.h"
#include "graph/primitive.h"

typedef struct mc_gather_mm_params {
    bool left_sorted, right_sorted; /* MLX's flags; they change no value */
} mc_gather_mm_params;

typedef struct mc_block_mm_params {
    int block_size; /* 32 or 64 */
} mc_block_mm_params;

/* A GatherMM node of a and b (at least 2-d, one floating dtype) at the
 * uint32 indices lhs and rhs (one shape); held by the scope. */
mc_array *mc_gb_gather_mm(mc_gb *s, mc_array *a, mc_array *b, mc_array *lhs, mc_array *rhs, bool left_sorted,
                          bool right_sorted);

/* MLX's block_masked_mm after its argument checks: a (..., M, K) and
 * b (..., K, N) of one floating dtype, at least 2-d; each mask NULL or of
 * a shape that broadcasts to (batch, tiles). Without masks a Matmul node.
 * Converts the masks as MLX does (the out mask stays bool if bool; the
 * operand masks stay bool if both are, a missing one being all true; any
 * other mask takes the product's dtype), broadcasts operands and masks to
 * the common batch shape, and builds the node; held by the scope. */
mc_array *mc_gb_block_masked_mm(mc_gb *s, mc_array *a, mc_array *b, int block_size, mc_array *mask_out,
                                mc_array *mask_lhs, mc_array *mask_rhs);

/* The evaluators (mm_ext_eval.c). */
int mc_gather_mm_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_block_masked_mm_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_segmented_mm_eval(mc_array *out, mc_array *const *in, int n, const void *params);

#endif
