/* The Binary family's parameters and dtype rule (prims_binary.c). Inputs of
 * a binary node share a dtype but may differ in shape: the output shape is
 * their broadcast. */
#ifndef MC_GRAPH_PRIMS_BINARY_H
#define MC_GRAPH_PRIMS_BINARY_H

#include "graph/primitive.h"
#include "simd/simd.h"

typedef struct mc_binary_params {
    mc_binary_op op;
} mc_binary_params;

/* The output dtype of a binary function on inputs of dtype d. */
mlx_dtype mc_binary_out_dtype(mc_binary_op op, mlx_dtype d);

#endif
