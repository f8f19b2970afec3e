/* Parameters of the miscellaneous primitives (prims_misc.c). */
#ifndef MC_GRAPH_PRIMS_MISC_H
#define MC_GRAPH_PRIMS_MISC_H

#include <stdbool.h>

#include "graph/primitive.h"

/* View: the dtype the input's bytes are read as. */
typedef struct mc_view_params {
    mlx_dtype to;
} mc_view_params;

/* ConvertFP8: float32 to e4m3 bytes (to_fp8) or e4m3 bytes to float32. */
typedef struct mc_fp8_params {
    bool to_fp8;
} mc_fp8_params;

/* Hadamard: the last axis is n * m long (n a power of two, m 1, 12, 20 or
 * 28); the transform is scaled by scale. Runs on float32. */
typedef struct mc_hadamard_params {
    float scale;
    int n, m;
} mc_hadamard_params;

#endif
