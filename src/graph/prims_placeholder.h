/* The Placeholder primitive's parameters (prims_placeholder.c): a compiled
 * function's traced input. */
#ifndef MC_GRAPH_PRIMS_PLACEHOLDER_H
#define MC_GRAPH_PRIMS_PLACEHOLDER_H

#include "graph/primitive.h"

typedef struct mc_placeholder_params {
    mc_meta meta; /* the traced input's dtype and shape */
    int index;    /* which input of the compiled function */
} mc_placeholder_params;

#endif
