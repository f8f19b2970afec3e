/* The random primitives' parameters (prims_random.c). Every one takes the
 * key (uint32, shape (2); or a batch of keys (..., 2) leading the output's
 * shape, each drawing its block, as vmap builds it) as input 0; the bits it hashes and their layout
 * are simd/random.h's, so the same key and shape give MLX's numbers.
 * Params are compared with memcmp: builders zero them first. */
#ifndef MC_GRAPH_PRIMS_RANDOM_H
#define MC_GRAPH_PRIMS_RANDOM_H

#include "graph/primitive.h"
#include "simd/random_dist.h"

/* RandomBits: MLX's primitive of the same name, uint8/16/32 of the shape
 * for width 1/2/4. */
typedef struct mc_random_bits_params {
    int width;
    int ndim;
    int shape[MC_MAX_NDIM];
} mc_random_bits_params;

/* RandomDist: one of simd/random_dist.h's formulas, evaluated from the key
 * in one pass (MLX composes these of ops; docs/random.md says why we fuse
 * them). Inputs: key, then the parameter arrays p0 and p1 the kind reads,
 * in the output dtype, each of one element or of the output's shape. */
typedef struct mc_random_dist_params {
    mc_rdist_kind kind;
    mlx_dtype dtype;
    int n_params; /* parameter inputs after the key: 0, 1 or 2 */
    int has_scale, has_loc;
    float scale, loc; /* laplace's */
    int ndim;
    int shape[MC_MAX_NDIM];
} mc_random_dist_params;

/* RandomPermutation: argsort(bits((n,))) as MLX's permutation(n) computes
 * it (a stable sort of the uint32 words, ties in index order), uint32; of
 * shape (n) per key, after the keys' batch dimensions. */
typedef struct mc_random_perm_params {
    int n;
} mc_random_perm_params;

#endif
