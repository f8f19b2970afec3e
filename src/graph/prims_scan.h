/* The Scan primitive's parameters (prims_scan.c): a cumulative op along
 * one axis (op: mc_scan_op of simd/reduce.h). */
#ifndef MC_GRAPH_PRIMS_SCAN_H
#define MC_GRAPH_PRIMS_SCAN_H

#include "graph/primitive.h"

typedef struct mc_scan_params {
    int op;
    int axis;
    int reverse;
    int inclusive;
} mc_scan_params;

#endif
