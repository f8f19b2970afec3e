/* Running elementwise kernels over arrays (elementwise.c), threaded when
 * large, and the broadcasting they share with other primitives. */
#ifndef MC_GRAPH_ELEMENTWISE_H
#define MC_GRAPH_ELEMENTWISE_H

#include "graph/primitive.h"
#include "simd/simd.h"

/* `out` must have its meta set; these give it data (donating an input's
 * buffer when possible) and fill it. */
int mc_run_unary(mc_array *out, mc_array *in, mc_unary_kernel k, const char *fn);
int mc_run_binary(mc_array *out, mc_array *a, mc_array *b, const mc_binary_kernel k[MC_BINARY_CLASSES],
                  const char *fn);

/* The broadcast of two shapes into *out (ndim, shape), or an error naming
 * fn and both shapes. */
int mc_broadcast_shapes(int an, const int *as, int bn, const int *bs, int *out_ndim, int *out_shape,
                        const char *fn);

/* Strides of `in` viewed as broadcast to the out shape (0 on broadcast dims). */
void mc_broadcast_strides(const mc_array *in, int ndim, const int *shape, int64_t *strides);

#endif
