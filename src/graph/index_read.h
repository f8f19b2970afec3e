/* Reading an index array's element and the rule that places it on an axis,
 * shared by the gather (GatherAxis) and scatter (ScatterAxis) loops so a
 * scatter writes exactly where the matching gather reads: that keeps
 * take's gradient (a scatter-add) the transpose of take for every index,
 * in range or not. */
#ifndef MC_GRAPH_INDEX_READ_H
#define MC_GRAPH_INDEX_READ_H

#include <stdint.h>

#include "array/array.h"

/* Element `at` of an index buffer of integer dtype d, widened; uint64
 * values past INT64_MAX saturate (out of range for any axis anyway). */
static inline int64_t mc_index_read(const char *base, int64_t at, mlx_dtype d)
{
    switch (d) {
    case MLX_UINT8: return ((const uint8_t *)base)[at];
    case MLX_UINT16: return ((const uint16_t *)base)[at];
    case MLX_UINT32: return ((const uint32_t *)base)[at];
    case MLX_UINT64: {
        uint64_t u = ((const uint64_t *)base)[at];
        return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    case MLX_INT8: return ((const int8_t *)base)[at];
    case MLX_INT16: return ((const int16_t *)base)[at];
    case MLX_INT32: return ((const int32_t *)base)[at];
    case MLX_INT64: return ((const int64_t *)base)[at];
    default: return 0;
    }
}

/* The position index v names on an axis of len > 0 elements: a negative
 * v counts from the end once (as MLX), and what is still outside the axis
 * is clamped to its nearest end (where MLX reads or writes outside the
 * buffer). */
static inline int64_t mc_index_place(int64_t v, int64_t len)
{
    v = v < 0 ? v + len : v;
    return v < 0 ? 0 : (v >= len ? len - 1 : v);
}

#endif
