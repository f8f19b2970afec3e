/* The sorting primitives' parameters (prims_sort.c): Sort, ArgSort,
 * Partition and ArgPartition along one axis (normalised, in range), with
 * kth normalised into [0, axis size) for the partitions. */
#ifndef MC_GRAPH_PRIMS_SORT_H
#define MC_GRAPH_PRIMS_SORT_H

#include "graph/primitive.h"

typedef struct mc_sort_params {
    int axis;
    int kth; /* partitions only; 0 for the sorts */
} mc_sort_params;

#endif
