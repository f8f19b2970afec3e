/* The Winograd path of the Convolution primitive's evaluation
 * (conv_wino.c): which convolutions take it, and running one. */
#ifndef MC_GRAPH_CONV_WINO_H
#define MC_GRAPH_CONV_WINO_H

#include <stdbool.h>

#include "graph/prims_conv.h"
#include "mlx/c/array.h"
#include "simd/conv.h"

/* Which convolutions take the Winograd path: MC_CONV_WINO_AUTO (the
 * default: those where it pays, see mc_conv_wino_fits), _NEVER, or
 * _ALWAYS (every convolution it can compute, whatever the channels). The
 * environment variable MLX_CPU_CONV_WINOGRAD (0 never, 1 always, read
 * once) sets the initial mode, so a benchmark can time the direct path. */
enum { MC_CONV_WINO_AUTO, MC_CONV_WINO_NEVER, MC_CONV_WINO_ALWAYS };
void mc_conv_wino_set_mode(int mode);
int mc_conv_wino_mode(void);

/* True when the node (geometry g, parameters p, output dtype) takes the
 * Winograd path under the current mode. */
bool mc_conv_wino_fits(const mc_conv_geom *g, const mc_conv_params *p, mlx_dtype dtype);

/* Computes the 2-D convolution y (N, OH, OW, O) of the dense float32
 * input x (N, H, W, C) and dense weight w (O, 3, 3, C) that g describes
 * (g as mc_conv_geom for a node that mc_conv_wino_fits accepted), on the
 * worker pool. Returns 0, or 1 with an out-of-memory error naming fn;
 * all its scratch is freed either way. */
int mc_conv_wino_run(const mc_conv_geom *g, const float *x, const float *w, bool flip, float *y, const char *fn);

/* For tests: how many convolutions took the Winograd path so far. */
long mc_conv_wino_runs(void);

#endif
