/* Parameters of the miscellaneous primitives (prims_misc.c). */
#ifndef MC_GRAPH_PRIMS_MISC_H
#define MC_GRAPH_PRIMS_MISC_H

#include "graph/primitive.h"

/* View: the dtype the input's bytes are read as. */
typedef struct mc_view_params {
    mlx_dtype to;
} mc_view_params;

#endif
