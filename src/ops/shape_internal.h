/* Builders shared by the shape and indexing ops (shape_*.c, index_*.c).
 * Each takes descriptors, returns a new reference (or the input itself,
 * retained, when the op is a no-op as in MLX) and on failure returns NULL
 * with one error reported naming `fn`, the mlx-c op being called: an op
 * composed of others still reports under its own name. Arguments are
 * assumed checked by the caller unless a builder says it checks them. */
#ifndef MC_OPS_SHAPE_INTERNAL_H
#define MC_OPS_SHAPE_INTERNAL_H

#include "ops/op_util.h"

/* Merges axes start..end (normalised, start <= end); a 0-d a becomes (1). */
mc_array *mc_sh_flatten(mc_array *a, int start, int end, const char *fn);
/* The slice of a (start/stop/strides have a->ndim entries; checks steps). */
mc_array *mc_sh_slice(mc_array *a, const int *start, const int *stop, const int *strides, const char *fn);
/* src with the slice replaced by upd (cast to src's dtype, broadcast to
 * the slice's shape; checks). */
mc_array *mc_sh_slice_update(mc_array *src, mc_array *upd, const int *start, const int *stop, const int *strides,
                             const char *fn);
/* Joins arrs[0..n) along axis (checks everything; promotes dtypes). */
mc_array *mc_sh_concatenate(mc_array *const *arrs, int n, int axis, const char *fn);
/* where(cond, x, y) with MLX's casts and broadcasting (checks shapes). */
mc_array *mc_sh_where(mc_array *cond, mc_array *x, mc_array *y, const char *fn);
/* A 0-d array of dtype holding v (converted as astype would). */
mc_array *mc_sh_scalar(double v, mlx_dtype dtype, const char *fn);
/* A lazy arange(start, start + count) of dtype (integer dtypes are
 * computed in 64 bits). */
mc_array *mc_sh_arange(double start, int count, mlx_dtype dtype, const char *fn);
/* A lazy bool (n, m) mask of j <= i + k (MLX's tri), or of j == i + k
 * with `diagonal_only`. */
mc_array *mc_sh_tri_mask(int n, int m, int64_t k, bool diagonal_only, const char *fn);

/* Normalises axes[0..n) for ndim dimensions into out, sorted, and checks
 * they are distinct: "[fn] Received duplicate axes." */
int mc_sh_axes(const int *axes, size_t n, int ndim, int *out, const char *fn);

#endif
