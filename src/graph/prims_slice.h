/* The strided views' parameters (prims_slice.c): Slice (also SliceUpdate's,
 * prims_index.c), AsStrided, Diagonal and Contiguous. */
#ifndef MC_GRAPH_PRIMS_SLICE_H
#define MC_GRAPH_PRIMS_SLICE_H

#include <stdbool.h>

#include "graph/primitive.h"

/* The caller's start/stop/strides, normalised against the input's shape
 * by infer and eval (NumPy rules, as MLX's normalize_slice). Negative
 * steps give negative strides. */
typedef struct mc_slice_params {
    int ndim;
    int start[MC_MAX_NDIM];
    int stop[MC_MAX_NDIM];
    int strides[MC_MAX_NDIM];
} mc_slice_params;

/* Normalises a slice of `shape`: clamps starts into range (out_start),
 * computes the result shape; returns non-zero with "[fn] ..." reported for
 * a zero step. *neg is set if any step is negative. */
int mc_slice_normalize(int ndim, const int *shape, const mc_slice_params *p, int *out_start, int *out_shape,
                       bool *neg, const char *fn);

/* For vmap rules: gives q a leading batch axis of `batch` elements, taken
 * whole, before its own; non-zero with an error if q has no axis to spare. */
int mc_slice_params_prepend_batch(mc_slice_params *q, int batch, const char *fn);

/* AsStrided: a view of the row-contiguous input with this shape, element
 * strides and offset; infer checks that the view stays inside the input. */
typedef struct mc_as_strided_params {
    int ndim;
    int shape[MC_MAX_NDIM];
    int64_t strides[MC_MAX_NDIM];
    int64_t offset;
} mc_as_strided_params;

/* Diagonal: the offset diagonal of axis1/axis2 as the last axis, the other
 * axes in order. */
typedef struct mc_diagonal_params {
    int offset, axis1, axis2;
} mc_diagonal_params;

/* Contiguous: shares the input's buffer when it is already row-contiguous
 * (or column-contiguous, if allowed), else copies. */
typedef struct mc_contiguous_params {
    int allow_col_major;
} mc_contiguous_params;

#endif
