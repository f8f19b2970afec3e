/* The Compiled primitive's program (prims_fused.c): a fused elementwise
 * chain that compile's fuse step (src/compile/fuse.c) builds. */
#ifndef MC_GRAPH_PRIMS_FUSED_H
#define MC_GRAPH_PRIMS_FUSED_H

#include <stddef.h>
#include <stdint.h>

#include "graph/primitive.h"

enum { MC_FUSED_MAX_OPS = 16, MC_FUSED_MAX_INPUTS = 24 };
enum { MC_FUSED_UNARY, MC_FUSED_BINARY, MC_FUSED_ASTYPE };

/* One step: kind; op (an mc_unary_op, an mc_binary_op, or for astype the
 * target dtype); operands a and b (b only for binary), numbered inputs
 * first (0..n_in-1), then earlier steps' results (n_in + step); and the
 * result dtype. All int32, so the params have no padding and compare
 * bytewise. */
typedef struct mc_fused_op {
    int32_t kind, op, a, b, dtype;
} mc_fused_op;

/* The program: n_ops steps, the last one the node's value. Only the first
 * n_ops entries are stored: the size is mc_fused_params_size(n_ops). */
typedef struct mc_fused_params {
    int32_t n_in, n_ops;
    mc_fused_op ops[MC_FUSED_MAX_OPS];
} mc_fused_params;

size_t mc_fused_params_size(int n_ops);

#endif
