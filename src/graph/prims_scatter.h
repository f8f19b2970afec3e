/* The scatter family's parameters: ScatterAxis (prims_scatter.c:
 * put_along_axis, scatter_add_axis, the vjp of take and take_along_axis),
 * Scatter (prims_scatter.c) and Gather (prims_gather.c), and the rule that
 * places a block on an axis, shared by the last two. */
#ifndef MC_GRAPH_PRIMS_SCATTER_H
#define MC_GRAPH_PRIMS_SCATTER_H

#include "graph/primitive.h"

/* What a scattered update does to the element it lands on (MLX's
 * ScatterAxis::ReduceType). */
typedef enum mc_scatter_reduce {
    MC_SCATTER_NONE, /* replaces it: the last update along the axis wins */
    MC_SCATTER_SUM,  /* is added to it: repeated indices accumulate */
    MC_SCATTER_PROD, /* multiplies it (Scatter only) */
    MC_SCATTER_MAX,  /* the larger of the two, as MLX's (y > x ? y : x) */
    MC_SCATTER_MIN,  /* the smaller, as MLX's (y < x ? y : x) */
    /* replaces, as none: slice_update_dynamic's node, which has a jvp
     * (MLX's DynamicSliceUpdate) where Scatter has none */
    MC_SCATTER_SLICE_UPDATE,
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

/* Gather (prims_gather.c): inputs a then nidx index arrays of one integer
 * dtype and one shape. The output is the index shape followed by
 * slice_sizes (a's ndim entries): for each index position, the block of
 * slice_sizes starting at the indexed positions on axes (0 elsewhere).
 * A start counts from the end when negative, then is clamped into
 * [0, shape - slice size] so the block stays inside a. */
typedef struct mc_gather_params {
    int nidx;
    int axes[MC_MAX_NDIM];
    int slice_sizes[MC_MAX_NDIM];
} mc_gather_params;

/* Scatter (prims_scatter.c): inputs a, nidx index arrays of one integer
 * dtype and one shape, then updates of a's dtype with shape index shape +
 * a block no larger than a. Each block lands where Gather with the same
 * indices and block sizes reads (same placement rule), in row-major order
 * of the index positions, combined by reduce (mc_scatter_reduce). */
typedef struct mc_scatter_params {
    int nidx;
    int axes[MC_MAX_NDIM];
    int reduce;
} mc_scatter_params;

/* Where a block of `size` starts on an axis of len elements for index v
 * (size <= len): negative v counts from the end once, then the start is
 * clamped so the block stays inside the axis. */
static inline int64_t mc_block_place(int64_t v, int64_t len, int64_t size)
{
    v = v < 0 ? v + len : v;
    int64_t hi = len - size;
    return v < 0 ? 0 : (v > hi ? hi : v);
}

#endif
