/* The Winograd path of the Convolution primitive's evaluation
 * (conv_wino.c): which convolutions take it, and running one. */
#ifndef MC_GRAPH_CONV_WINO_H
#define MC_GRAPH_CONV_WINO_H

#include <stdbool.h>

#include "graph/prims_conv.h"
#include "mlx/c/array.h"
#include "simd/conv.h"

/* Which convolutions take the Winograd path: MC_CONV_WINO_AUTO (the
 * default: those where it pays, in the variant that pays most, see
 * mc_conv_wino_pick), _NEVER, _ALWAYS (every convolution it can compute,
 * whatever the channels, in the variant the rule picks for its size), or
 * _ALWAYS2 / _ALWAYS4 (every one, as F(2x2, 3x3) / F(4x4, 3x3)). The
 * environment variable MLX_CPU_CONV_WINOGRAD (0 never, 1 always, 2 or 4
 * always that variant; read once) sets the initial mode, so a benchmark
 * can time each path. */
enum { MC_CONV_WINO_AUTO, MC_CONV_WINO_NEVER, MC_CONV_WINO_ALWAYS, MC_CONV_WINO_ALWAYS2, MC_CONV_WINO_ALWAYS4 };
void mc_conv_wino_set_mode(int mode);
int mc_conv_wino_mode(void);

/* The output tile side of the Winograd variant the node (geometry g,
 * parameters p, output dtype) takes under the current mode: 2 for
 * F(2x2, 3x3), 4 for F(4x4, 3x3), 0 for none (the direct path). */
int mc_conv_wino_pick(const mc_conv_geom *g, const mc_conv_params *p, mlx_dtype dtype);

/* Computes the 2-D convolution y (N, OH, OW, O) of the dense float32
 * input x (N, H, W, C) and dense weight w (O, 3, 3, C) that g describes
 * (g as mc_conv_geom for a node that mc_conv_wino_pick gave tile side m,
 * 2 or 4), on the worker pool. Returns 0, or 1 with an out-of-memory
 * error naming fn; all its scratch is freed either way. */
int mc_conv_wino_run(const mc_conv_geom *g, int m, const float *x, const float *w, bool flip, float *y,
                     const char *fn);

/* For tests: how many convolutions took the Winograd path so far, and
 * how many of those took F(4x4, 3x3). */
long mc_conv_wino_runs(void);
long mc_conv_wino4_runs(void);

#endif
