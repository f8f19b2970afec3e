/* Reverse and forward mode differentiation of a function over lazy arrays,
 * as MLX's vjp and jvp (mlx/transforms.cpp): the function runs once on
 * copies of the primals, building a graph; the graph between the copies
 * and the outputs is put in topological order (the tape), and each
 * primitive's vjp or jvp rule (graph/primitive.h) builds the derivative
 * graph, lazily: nothing is evaluated here. */
#ifndef MC_TRANSFORMS_AUTODIFF_H
#define MC_TRANSFORMS_AUTODIFF_H

#include "array/array.h"

/* The function a transform differentiates. Called once with n borrowed
 * arrays; on success stores in *outs an array (from mc_xmalloc, which the
 * caller frees) of *nout new references and returns 0; else returns non-zero
 * with one error reported and stores nothing. */
typedef int (*mc_ad_fun)(void *ctx, mc_array *const *in, int n, mc_array ***outs, int *nout);

/* Reverse mode. Runs f on the np primals, pairs its outputs with the nc
 * cotangents in order (an output made by stop_gradient takes none, as in
 * MLX), and computes the cotangents of the primals listed in argnums (na
 * ascending, distinct indices). On success returns 0 with *outs and *nout as
 * f gave them and vjps[0..na) new references (zeros for a primal the
 * outputs do not depend on); on failure returns non-zero with one error
 * reported, having released everything it made. */
int mc_vjp(const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, int np, mc_array *const *cots,
           int nc, const int *argnums, int na, mc_array ***outs, int *nout, mc_array **vjps);

/* Forward mode. Runs f on the n primals and pushes the n tangents (one
 * per primal, of its shape) through the graph. On success returns 0 with
 * *outs and *nout as f gave them and *jvps an array (mc_xmalloc) of *nout new
 * references, the tangent of each output (zeros for one that does not
 * depend on the primals); on failure non-zero, everything released. */
int mc_jvp(const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, mc_array *const *tans, int n,
           mc_array ***outs, int *nout, mc_array ***jvps);

/* Releases n references of an array of them and frees the array. */
void mc_ad_release_all(mc_array **arrs, int n);

#endif
