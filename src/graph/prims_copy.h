/* The AsType and Copy primitives' parameters (prims_copy.c): the target
 * dtype of a row-major copy. */
#ifndef MC_GRAPH_PRIMS_COPY_H
#define MC_GRAPH_PRIMS_COPY_H

#include "graph/primitive.h"

typedef struct mc_astype_params {
    mlx_dtype to;
} mc_astype_params;

#endif
