/* The CustomTransforms primitive's parameters (prims_custom.c): MLX's
 * node for a function given its own derivative rules (custom_function,
 * custom_vjp, checkpoint). A node stands for output `index` of n_out, and
 * takes as inputs the function's n_args arguments, its n_out outputs
 * (behind stop_gradient, so the transforms see only the rules), and one
 * last array that holds the rules alive (they belong to the caller that
 * built the node: src/api/transforms_custom.c). */
#ifndef MC_GRAPH_PRIMS_CUSTOM_H
#define MC_GRAPH_PRIMS_CUSTOM_H

#include "graph/primitive.h"

typedef struct mc_custom_rules {
    /* The cotangents of the np primals given the nout outputs' cotangents
     * (each of its output's shape) and the outputs: new references in
     * vjps[0..np), or non-zero with one error reported. */
    int (*vjp)(void *ctx, mc_array *const *primals, int np, mc_array *const *cots, mc_array *const *outs, int nout,
               mc_array **vjps, const char *fn);
    /* The nout outputs' tangents given tans[i], the tangent of primal
     * argnums[i]: new references in jvps[0..nout), or non-zero. */
    int (*jvp)(void *ctx, mc_array *const *primals, int np, mc_array *const *tans, const int *argnums, int na,
               mc_array **jvps, int nout, const char *fn);
    void *ctx;
    /* The nout outputs batched, given the np primals, primal i batched on
     * axes[i] (-1: not batched): new references in outs[0..nout) with
     * their batch axes in out_axes, or non-zero with one error reported.
     * NULL: vmap of the function itself, which the node's inputs already
     * hold. */
    int (*vmap)(void *ctx, mc_array *const *primals, const int *axes, int np, mc_array **outs, int *out_axes,
                int nout, const char *fn);
} mc_custom_rules;

typedef struct mc_custom_params {
    int n_args, n_out, index;
    const mc_custom_rules *rules;
} mc_custom_params;

#endif
