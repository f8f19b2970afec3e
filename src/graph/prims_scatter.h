/* The ScatterAxis primitive's parameters (prims_scatter.c): put_along_axis
 * and scatter_add_axis, and the vjp of take and take_along_axis. */
#ifndef MC_GRAPH_PRIMS_SCATTER_H
#define MC_GRAPH_PRIMS_SCATTER_H

#include "graph/primitive.h"

/* What a scattered update does to the element it lands on (MLX's
 * ScatterAxis::ReduceType). */
typedef enum mc_scatter_reduce {
    MC_SCATTER_NONE, /* replaces it: the last update along the axis wins */
    MC_SCATTER_SUM,  /* is added to it: repeated indices accumulate */
} mc_scatter_reduce;

/* ScatterAxis: inputs a, indices, updates, all of a's ndim; updates of a's
 * dtype and of indices' shape, which equals a's on every axis but `axis`
 * (the op broadcasts them first, as MLX's). The output is a copy of a with
 * updates[..., j, ...] written at a[..., indices[..., j, ...], ...];
 * indices are placed on the axis as the gather places them
 * (graph/index_read.h): negative ones count from the end, the rest are
 * clamped into the axis. */
typedef struct mc_scatter_axis_params {
    int axis;
    int reduce; /* mc_scatter_reduce */
} mc_scatter_axis_params;

#endif
