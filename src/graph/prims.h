/* Declarations of every primitive's infer/eval/print functions, grouped by
 * the prims_*.c file that defines them. Parameter structs live here too,
 * since ops (src/ops) build them and compile compares them. */
#ifndef MC_GRAPH_PRIMS_H
#define MC_GRAPH_PRIMS_H

#include "graph/primitive.h"
#include "simd/simd.h"

/* prims_placeholder.c */
int mc_placeholder_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_placeholder_eval(mc_array *out, mc_array *const *in, int n, const void *params);
typedef struct mc_placeholder_params {
    mc_meta meta; /* the traced input's dtype and shape */
    int index;    /* which input of the compiled function */
} mc_placeholder_params;

#endif
