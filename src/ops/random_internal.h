/* What random_key.c gives the distributions in random_dist.c and
 * random_sample.c: the key of a call and the RandomBits node. */
#ifndef MC_OPS_RANDOM_INTERNAL_H
#define MC_OPS_RANDOM_INTERNAL_H

#include "graph/prims_random.h"
#include "mlx/c/mlx.h"

/* The key a call uses: key itself (retained) if given, after checking it
 * is uint32 of shape (2); else the next key of the global sequence (a new
 * evaluated array). One reference for the caller, or NULL with an error. */
mc_array *mc_random_key_arg(mlx_array key, const char *fn);

/* A RandomBits node of the shape and width (1, 2 or 4) from key. */
mc_array *mc_random_bits_node(mc_array *key, int ndim, const int *shape, int width, const char *fn);

#endif
