/* Vectorising a function over a batch axis, as MLX's detail::vmap_trace
 * and detail::vmap_replace (mlx/transforms.cpp), on which mx.vmap is built:
 * the function is traced once on unbatched stand-ins of its inputs, then
 * the traced graph is rebuilt on the real, batched inputs by each
 * primitive's vmap rule (graph/primitive.h). Nothing is evaluated. */
#ifndef MC_TRANSFORMS_VMAP_H
#define MC_TRANSFORMS_VMAP_H

#include "transforms/autodiff.h"

/* Runs f once on the n inputs, each input i with in_axes[i] >= 0 replaced
 * by a placeholder of its shape without that axis (in_axes[i] == -1: the
 * input itself). Checks MLX's rules first: as many axes as inputs, each
 * axis -1 or an axis of its input, one size on every batch axis. On
 * success returns 0 with *s_inputs (n new references) and *outs (*nout
 * new references, f's outputs), both arrays from mc_xmalloc; on failure
 * non-zero with one error reported and nothing stored. */
int mc_vmap_trace(const char *fn, mc_ad_fun f, void *ctx, mc_array *const *inputs, int n, const int *in_axes,
                  int n_axes, mc_array ***s_inputs, mc_array ***outs, int *nout);

/* Rebuilds the graph from the traced inputs s_inputs[0..n) to the traced
 * outputs s_outputs[0..nout) on the real inputs (inputs[i] batched on
 * in_axes[i]; an input with axis -1 is the traced one itself), and moves
 * each output's batch to out_axes[i] (an output that does not depend on a
 * batched input is broadcast along a new axis there). The walk is
 * iterative. On success returns 0 with *res an array (mc_xmalloc) of nout
 * new references; on failure non-zero with one error reported. */
int mc_vmap_replace(const char *fn, mc_array *const *inputs, int n, mc_array *const *s_inputs, int n_s,
                    mc_array *const *s_outputs, int nout, const int *in_axes, int n_in_axes, const int *out_axes,
                    int n_out_axes, mc_array ***res);

#endif
