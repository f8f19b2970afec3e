/* The Unary family's parameters and dtype rule (prims_unary.c). A Unary
 * node's input has the dtype its function runs in (ops convert first). */
#ifndef MC_GRAPH_PRIMS_UNARY_H
#define MC_GRAPH_PRIMS_UNARY_H

#include "graph/primitive.h"
#include "simd/simd.h"

typedef struct mc_unary_params {
    mc_unary_op op;
} mc_unary_params;

/* The output dtype of a unary function on an input of dtype d: bool for
 * logical_not and the isnan family, float32 for abs/real/imag of complex64. */
mlx_dtype mc_unary_out_dtype(mc_unary_op op, mlx_dtype d);

#endif
