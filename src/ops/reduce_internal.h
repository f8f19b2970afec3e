/* Builders shared by the reduction ops (reduce.c, reduce_fused.c). */
#ifndef MC_OPS_REDUCE_INTERNAL_H
#define MC_OPS_REDUCE_INTERNAL_H

#include "ops/shape_internal.h"

/* MLX's axis checks of a reduction: each of axes[0..n) in range for ndim
 * dims ("[fn] Invalid axis a for array with n dimensions."), then no
 * duplicates ("[fn] Duplicate axes detected in reduction."). The distinct
 * normalised axes go to sorted (ascending), their number to *count. */
int mc_reduce_axes(const int *axes, size_t n, int ndim, int *sorted, int *count, const char *fn);

/* The axes 0 .. ndim - 1 of x (NULL: none) into axes, for the plain (no
 * axis) forms; returns their number. */
static inline size_t mc_reduce_all_axes(const mc_array *x, int *axes)
{
    int nd = x ? x->ndim : 0;
    for (int i = 0; i < nd; i++)
        axes[i] = i;
    return (size_t)nd;
}

/* r itself when keepdims (or NULL when r is), else r with the sorted
 * axes squeezed out; takes over r's reference. */
mc_array *mc_reduce_finish_keepdims(mc_array *r, const int *sorted, int n, bool keepdims, const char *fn);

#endif
