/* The Arange primitive's parameters (prims_create.c): start + i * step,
 * computed in float64 for floating outputs and int64 for integer ones, as
 * MLX. */
#ifndef MC_GRAPH_PRIMS_CREATE_H
#define MC_GRAPH_PRIMS_CREATE_H

#include "graph/primitive.h"

typedef struct mc_arange_params {
    double start, step;
    mlx_dtype dtype;
    int count;
} mc_arange_params;

#endif
