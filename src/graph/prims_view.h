/* The shape views' parameters (prims_view.c): Reshape, Transpose,
 * Broadcast, ExpandDims, Squeeze, Flatten and Unflatten. */
#ifndef MC_GRAPH_PRIMS_VIEW_H
#define MC_GRAPH_PRIMS_VIEW_H

#include "graph/primitive.h"

/* Reshape, Transpose, Broadcast: ndim then ndim ints; only the used ints
 * are stored, the size is mc_dims_params_size(ndim). */
typedef struct mc_dims_params {
    int ndim;
    int dims[MC_MAX_NDIM];
} mc_dims_params;
static inline size_t mc_dims_params_size(int ndim)
{
    return sizeof(int) * (size_t)(1 + ndim);
}

/* ExpandDims, Squeeze: the sorted, normalised axes (positions in the
 * output for ExpandDims, in the input for Squeeze). */
typedef struct mc_axes_params {
    int n;
    int axes[MC_MAX_NDIM];
} mc_axes_params;

/* Flatten merges axes start..end; Unflatten splits axis into shape. Both
 * are views of row-contiguous data. */
typedef struct mc_flatten_params {
    int start, end;
} mc_flatten_params;
typedef struct mc_unflatten_params {
    int axis;
    int n;
    int shape[MC_MAX_NDIM];
} mc_unflatten_params;

#endif
