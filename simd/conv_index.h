/* Index arithmetic shared by the convolution kernels (conv_k.c and
 * conv_dw_k.c): which input element an output index and a kernel index
 * read. Static inline: each ISA build of a kernel gets its own copy.
 *
 * An output index o along a dim reads the dilated, padded input at
 * p = o * stride - pad_lo + k * kdil for kernel index k; p names an input
 * element only when it lies inside the dilated input and falls on a
 * multiple of the input dilation (the holes read as zero). */
#ifndef MC_SIMD_CONV_INDEX_H
#define MC_SIMD_CONV_INDEX_H

#include <stddef.h>

#include "simd/conv.h"

/* The input index that output index o and kernel index k read along dim
 * d, or -1 for padding or a hole. */
static inline int mc_conv_src_index(const mc_conv_geom *g, int d, int o, int k)
{
    int p = o * g->stride[d] - g->pad_lo[d] + k * g->kdil[d];
    if (p < 0)
        return -1;
    int id = g->idil[d];
    if (id != 1) {
        if (p % id)
            return -1;
        p /= id;
    }
    return p < g->in[d] ? p : -1;
}

/* Splits output row r into its batch index and spatial indices. */
static inline void mc_conv_split_row(const mc_conv_geom *g, size_t r, int *n, int o[3])
{
    o[2] = (int)(r % (size_t)g->out[2]);
    r /= (size_t)g->out[2];
    o[1] = (int)(r % (size_t)g->out[1]);
    r /= (size_t)g->out[1];
    o[0] = (int)(r % (size_t)g->out[0]);
    *n = (int)(r / (size_t)g->out[0]);
}

#endif
