/* Winograd F(2x2, 3x3) transforms over raw float32 pointers (simd/wino_k.c),
 * the three element-wise stages around the 16 products of a Winograd
 * convolution (src/graph/conv_wino.c does the products with sgemm).
 *
 * A 3x3 correlation of stride 1 is cut into 2x2 output tiles; each reads a
 * 4x4 input patch d. With B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] and A^T = [1 1 1 0;
 * 0 1 -1 -1], a tile is A^T [(G g G^T) .* (B^T d B)] A: 16 products per
 * channel pair instead of 36. Summed over input channels, the element-wise
 * products become, for each of the 16 transform coordinates xi, one matrix
 * product (tiles x C) times (C x O).
 *
 * Layouts are channels last, as MLX's: input (N, H, W, C), weight
 * (O, 3, 3, C), output (N, OH, OW, O). Tiles are numbered
 * (n * tiles_h + th) * tiles_w + tw. Every loop runs over channels, the
 * contiguous axis, so each stage is vectorised across channels. */
#ifndef MC_SIMD_WINO_H
#define MC_SIMD_WINO_H

#include <stdbool.h>
#include <stddef.h>

enum { MC_WINO_XI = 16 }; /* transform coordinates of F(2x2, 3x3) */

typedef struct mc_wino_geom {
    int N, H, W, C, O;
    int OH, OW;           /* output size (pad_hi is folded into it) */
    int pad_h, pad_w;     /* low padding: tile (th, tw) reads rows 2 th - pad_h ... */
    int tiles_h, tiles_w; /* ceil(OH / 2), ceil(OW / 2) */
} mc_wino_geom;

typedef struct mc_wino_kernels {
    /* u[xi][o][c] (16 matrices O x C, row-major) = G g G^T of the dense
     * weight w (O, 3, 3, C), with the kernel reversed in both dims when
     * flip. */
    void (*filter)(const float *w, int O, int C, bool flip, float *u);
    /* v[xi][i][c] (16 matrices nt x C with row stride C, xi-th at
     * v + xi * vs) = B^T d B of tiles t0 .. t0 + nt - 1 of the dense input
     * x; reads outside the input take zero (C zeros at zero). */
    void (*input)(const mc_wino_geom *g, const float *x, size_t t0, int nt, const float *zero, float *v,
                  size_t vs);
    /* Writes the 2x2 outputs A^T m A of tiles t0 .. t0 + nt - 1 into the
     * dense output y, skipping positions past OH or OW; m[xi][i][o] are 16
     * matrices nt x O with row stride O, the xi-th at m + xi * ms. */
    void (*output)(const mc_wino_geom *g, const float *m, size_t ms, size_t t0, int nt, float *y);
} mc_wino_kernels;

/* The build of the transforms for this CPU (chosen once, thread-safe):
 * generic, or on x86_64 AVX2+FMA or AVX-512 by simd/dispatch.c's level. */
const mc_wino_kernels *mc_wino_kernels_get(void);
/* The generic build, the reference the vector builds are tested against. */
const mc_wino_kernels *mc_wino_kernels_generic(void);

#endif
