/* Winograd F(2x2, 3x3) and F(4x4, 3x3) transforms over raw float32
 * pointers (simd/wino_k.c, simd/wino4_k.c), the three element-wise stages
 * around the products of a Winograd convolution (src/graph/conv_wino.c
 * does the products with sgemm).
 *
 * A 3x3 correlation of stride 1 is cut into m x m output tiles (m = 2 or
 * 4); each reads an (m + 2) x (m + 2) input patch d and is
 * A^T [(G g G^T) .* (B^T d B)] A: (m + 2)^2 products per channel pair
 * instead of 9 m^2 (16 for 36, or 36 for 144). Summed over input channels,
 * the element-wise products become, for each transform coordinate xi, one
 * matrix product (tiles x C) times (C x O).
 *
 * F(2x2, 3x3) (points 0, 1, -1, infinity): B^T = [1 0 -1 0; 0 1 1 0;
 * 0 -1 1 0; 0 1 0 -1], G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 * A^T = [1 1 1 0; 0 1 -1 -1]. F(4x4, 3x3): see simd/wino4_k.c.
 *
 * Layouts are channels last, as MLX's: input (N, H, W, C), weight
 * (O, 3, 3, C), output (N, OH, OW, O). Tiles are numbered
 * (n * tiles_h + th) * tiles_w + tw. Every loop runs over channels, the
 * contiguous axis, so each stage is vectorised across channels. */
#ifndef MC_SIMD_WINO_H
#define MC_SIMD_WINO_H

#include <stdbool.h>
#include <stddef.h>

/* transform coordinates of F(2x2, 3x3) and of F(4x4, 3x3) */
enum { MC_WINO_XI = 16, MC_WINO4_XI = 36 };

typedef struct mc_wino_geom {
    int N, H, W, C, O;
    int OH, OW;           /* output size (pad_hi is folded into it) */
    int pad_h, pad_w;     /* low padding: tile (th, tw) reads rows m th - pad_h ... */
    int tiles_h, tiles_w; /* ceil(OH / m), ceil(OW / m) */
} mc_wino_geom;

/* One variant's transforms; xi below counts 0 .. k->xi - 1. */
typedef struct mc_wino_kernels {
    int m;  /* output tile side: 2 or 4 */
    int xi; /* (m + 2)^2 transform coordinates */
    /* u[xi][o][c] (xi matrices O x C, row-major) = G g G^T of the dense
     * weight w (O, 3, 3, C), with the kernel reversed in both dims when
     * flip. */
    void (*filter)(const float *w, int O, int C, bool flip, float *u);
    /* v[xi][i][c] (matrices nt x C with row stride C, xi-th at
     * v + xi * vs) = B^T d B of tiles t0 .. t0 + nt - 1 of the dense input
     * x; reads outside the input take zero (C zeros at zero). */
    void (*input)(const mc_wino_geom *g, const float *x, size_t t0, int nt, const float *zero, float *v,
                  size_t vs);
    /* Writes the m x m outputs A^T m A of tiles t0 .. t0 + nt - 1 into the
     * dense output y, skipping positions past OH or OW; m[xi][i][o] are
     * matrices nt x O with row stride O, the xi-th at m + xi * ms. */
    void (*output)(const mc_wino_geom *g, const float *m, size_t ms, size_t t0, int nt, float *y);
} mc_wino_kernels;

/* The build of F(m x m, 3x3)'s transforms (m = 2 or 4; any other m gives
 * NULL) for this CPU (chosen once, thread-safe): generic, or on x86_64
 * AVX2+FMA or AVX-512 by simd/dispatch.c's level. */
const mc_wino_kernels *mc_wino_kernels_get(int m);
/* The generic build, the reference the vector builds are tested against. */
const mc_wino_kernels *mc_wino_kernels_generic(int m);

#endif
