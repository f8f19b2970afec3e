/* The indexing and layout primitives' parameters (prims_index.c):
 * Concatenate, GatherAxis, SliceUpdate (Slice's params, prims_slice.h), Pad
 * and NumberOfElements. */
#ifndef MC_GRAPH_PRIMS_INDEX_H
#define MC_GRAPH_PRIMS_INDEX_H

#include "graph/primitive.h"

/* Concatenate: inputs of one dtype, equal shapes but on axis. */
typedef struct mc_concat_params {
    int axis;
} mc_concat_params;

/* Pad (constant): inputs a and a one-element value of a's dtype; axes
 * normalised and distinct. */
typedef struct mc_pad_params {
    int n;
    int axes[MC_MAX_NDIM];
    int low[MC_MAX_NDIM];
    int high[MC_MAX_NDIM];
} mc_pad_params;

/* GatherAxis. take (along = 0): the output shape is
 * a.shape[:axis] + indices.shape + a.shape[axis+1:]. take_along_axis
 * (along = 1): indices broadcast against a on every axis but `axis`.
 * Negative indices count from the end; indices still outside the axis are
 * clamped into it (never read outside a). */
typedef struct mc_gather_axis_params {
    int axis;
    int along;
} mc_gather_axis_params;

/* NumberOfElements: a scalar of dtype, the product of the input's sizes on
 * axes or its reciprocal; reads only the input's shape. */
typedef struct mc_numel_params {
    int n;
    int axes[MC_MAX_NDIM];
    int inverted;
    mlx_dtype dtype;
} mc_numel_params;

#endif
