/* Convolution building blocks over raw pointers (simd/conv_k.c): gathering
 * a block of im2col rows, packing a weight for a product, and a direct
 * kernel for depthwise convolutions. Element types are float32 or float64
 * (esz 4 or 8): half inputs are converted by the caller first.
 *
 * Layouts are MLX's, channels last: the input is dense (N, D, H, W, C),
 * the weight (O, KD, KH, KW, C / groups), the output (N, OD, OH, OW, O).
 * 1-D and 2-D convolutions are 3-D ones with leading spatial dims of
 * size 1, so one geometry describes all three. */
#ifndef MC_SIMD_CONV_H
#define MC_SIMD_CONV_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mc_conv_geom {
    int N, C, O, groups;      /* C and O are the totals over groups */
    int in[3], out[3], k[3];  /* spatial sizes, D, H, W */
    int stride[3], pad_lo[3]; /* pad_hi only shapes out[] */
    int kdil[3], idil[3];     /* kernel and input dilation */
} mc_conv_geom;

/* Output rows N * out[0] * out[1] * out[2]; kernel positions k[0]*k[1]*k[2]. */
size_t mc_conv_rows(const mc_conv_geom *g);
int mc_conv_kpos(const mc_conv_geom *g);

/* Writes the im2col rows [r0, r0 + mb) of group grp into a (mb rows of
 * kpos * Cg elements, laid out [kernel position][channel], the weight's
 * own order): the input values each output row reads, zeros where the
 * kernel meets padding or a hole between dilated input elements. */
void mc_conv_im2col(const mc_conv_geom *g, size_t esz, const void *x, int grp, size_t r0, int mb, void *a);

/* Copies the dense weight w (O, kpos, Cg) to dst, reversing the kernel
 * positions when flip (a flip of every spatial dim). With depthwise the
 * copy is laid out (kpos, O) instead, as mc_conv_depthwise reads it. */
void mc_conv_pack_weight(size_t esz, const void *w, int O, int kpos, int cg, bool flip, bool depthwise, void *dst);

/* The output rows [r0, r0 + mb) (mb * O elements at y) of a convolution
 * with one input channel per group (C == groups): output channel o reads
 * input channel o / (O / C). wt is packed (kpos, O). */
void mc_conv_depthwise(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0, int mb,
                       void *y);

#endif
