/* The FFT primitive's parameters (prims_fft.c): MLX's FFT(axes, inverse,
 * real), plus the output length on the last axis for a real inverse (MLX
 * keeps it in the output's shape). */
#ifndef MC_GRAPH_PRIMS_FFT_H
#define MC_GRAPH_PRIMS_FFT_H

#include "graph/primitive.h"

typedef struct mc_fft_params {
    int naxes;
    int axes[MC_MAX_NDIM]; /* normalised, distinct; the real transform is on the last */
    int inverse;
    int real;
    int n_last; /* real inverse: the output's length on axes[naxes - 1] */
} mc_fft_params;

#endif
