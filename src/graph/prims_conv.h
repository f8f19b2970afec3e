/* The Convolution primitive (prims_conv.c): MLX's conv_general node.
 * Inputs: in (N, spatial..., C) and wt (O, kernel..., C / groups) of one
 * real floating dtype, 1 to 3 spatial dims; output (N, out..., O) of that
 * dtype. The parameters are MLX's Convolution members, one entry per
 * spatial dim; in a node every padding is non-negative (conv_general
 * slices the input first for a negative one, as mc_conv_node does). */
#ifndef MC_GRAPH_PRIMS_CONV_H
#define MC_GRAPH_PRIMS_CONV_H

#include <stdbool.h>

#include "graph/primitive.h"

enum { MC_CONV_MAX_SPATIAL = 3 };

typedef struct mc_conv_params {
    int nsp; /* spatial dims: 1, 2 or 3 */
    int stride[MC_CONV_MAX_SPATIAL];
    int pad_lo[MC_CONV_MAX_SPATIAL];
    int pad_hi[MC_CONV_MAX_SPATIAL];
    int kdil[MC_CONV_MAX_SPATIAL]; /* kernel dilation */
    int idil[MC_CONV_MAX_SPATIAL]; /* input dilation */
    int groups;
    bool flip; /* correlate with the kernel reversed in every spatial dim */
} mc_conv_params;

/* MLX's Convolution::conv_out_shape: checks the parameters against the
 * shapes (ndim dims each, ndim == p->nsp + 2) and writes the output shape
 * into out, or reports MLX's "[conv] ..." message and returns 1. */
int mc_conv_out_shape(int ndim, const int *in_shape, const int *wt_shape, const mc_conv_params *p, int *out);

/* The tail of MLX's conv_general, after its argument checks and dtype
 * promotion (in and wt have one floating dtype): a negative padding
 * becomes a slice of the input, then one Convolution node. Used by the
 * ops and by the primitive's own vjp, as MLX's vjp calls conv_general.
 * Returns a new reference or NULL with an error reported. */
mc_array *mc_conv_node(mc_array *in, mc_array *wt, const mc_conv_params *p, const char *fn);

#endif
