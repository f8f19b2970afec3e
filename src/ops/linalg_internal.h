/* Shared by the linalg ops (linalg_factor.c, linalg_solve.c,
 * linalg_norm.c): MLX's argument checks with MLX's messages, named by
 * prefix ("linalg::inv"). Each returns 0, or 1 with the error reported. */
#ifndef MC_OPS_LINALG_INTERNAL_H
#define MC_OPS_LINALG_INTERNAL_H

#include <stdbool.h>

#include "array/array.h"

/* float32 or float64 (or complex64 if cplx). */
int mc_la_check_float(const mc_array *a, bool cplx, const char *prefix);
/* At least two dimensions ("Arrays must have >= 2 dimensions..."). */
int mc_la_check_ndim(const mc_array *a, const char *prefix);

#endif
