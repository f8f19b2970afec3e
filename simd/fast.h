/* Kernels of fast.h's fused operations (simd/fast_k.c): RMS and layer
 * normalisation of rows, rotary embedding of rows, and the pieces of tiled
 * attention (tile loads, masking, the online-softmax update, the final
 * scaling). Pointers, lengths and strides (in elements) only; dtypes are
 * simd/dtype.h's codes, and the floating types (float16, bfloat16,
 * float32, float64) are the only ones accepted.
 *
 * Numerics follow MLX 0.31.1's CPU build, which runs these operations as
 * compositions of its ops: the norms compute in float32 for the half types
 * and round the normalised value to the output type before the weight
 * multiplies it (MLX computes float64 in float32 too; here float64 stays
 * float64); rope rounds its cosines and sines to the type
 * and rounds after every product and sum. Attention computes in float32
 * (float64 for float64) and rounds once at the end.
 *
 * Each kernel is built generically and, on x86_64, with AVX2 and FMA and
 * with AVX-512 (one source, three builds); mc_fast_kernels_get() picks the
 * build for the level simd/dispatch.c chose. */
#ifndef MC_SIMD_FAST_H
#define MC_SIMD_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mc_fast_kernels {
    /* y[r] = rms_norm(x[r]) * w for rows of n contiguous elements, row r
     * at x + r * n and y + r * n; w (n elements) may be NULL. stream: y
     * is large and not read again soon, so float32 rows may be written
     * past the cache (non-temporal stores, fenced before return). */
    void (*rms_norm)(int dt, const void *x, const void *w, void *y, size_t rows, size_t n, float eps, bool stream);
    /* y[r] = layer_norm(x[r]) * w + b; w and b may be NULL. */
    void (*layer_norm)(int dt, const void *x, const void *w, const void *b, void *y, size_t rows, size_t n,
                       float eps, bool stream);
    /* Rotates `rows` rows of d elements (row stride d, x and y may be the
     * same memory) that share one position, whose cosines and sines
     * (already rounded to dt) are cs[i], sn[i] for i < dims / 2; elements
     * past dims are copied. forward false applies the inverse rotation. */
    void (*rope)(int dt, bool traditional, bool forward, const void *x, void *y, size_t rows, size_t d,
                 size_t dims, const float *cs, const float *sn);
    /* The online-softmax step of one tile of scores: for each row i < rows
     * of s (row stride lds, cols used), m[i] becomes the running maximum,
     * s[i][j] becomes exp(s[i][j] - m[i]), and l[i] and the accumulator's
     * row i (acols elements at acc + i * ldacc) are scaled by
     * exp(old m[i] - new m[i]), l[i] then adding the row's sum. A row with
     * no finite score yet becomes zeros and keeps its state. float (f32)
     * or double (f64). */
    void (*softmax_tile_f32)(float *s, size_t rows, size_t cols, size_t lds, float *m, float *l, float *acc,
                             size_t acols, size_t ldacc);
    void (*softmax_tile_f64)(double *s, size_t rows, size_t cols, size_t lds, double *m, double *l, double *acc,
                             size_t acols, size_t ldacc);
    /* Attention's own products (simd/attn_k.c) work on panels: a panel of
     * w rows of a rows x cols matrix stores element (r, c) at c * w + r
     * (mc_fast_pack_f32). attn_gemm sets the attn_mr x attn_nr block c
     * (row stride attn_nr) to, or with add adds to it, the sum over t < k
     * of a[t * ast + i * asi] * b[t * attn_nr + j]: b is a panel of
     * attn_nr rows, k long; a is any attn_mr x k array of floats (a panel
     * has ast attn_mr and asi 1; K's rows in place have ast 1). */
    int attn_mr, attn_nr;
    void (*attn_gemm)(size_t k, const float *a, ptrdiff_t ast, ptrdiff_t asi, const float *b, float *c, bool add);
    /* softmax_tile_f32 for attn_nr rows of scores held as a panel (key j
     * of row q at s[j * attn_nr + q], cols keys): m and l hold attn_nr
     * rows, the accumulator arows panel rows of attn_nr (its rows are
     * scaled lane by lane). */
    void (*softmax_panel_f32)(float *s, size_t cols, float *m, float *l, float *acc, size_t arows);
} mc_fast_kernels;

/* The kernels for this CPU (chosen once, thread-safe). */
const mc_fast_kernels *mc_fast_kernels_get(void);

/* Cosines and sines of pos * inv_freq[i] for i < half, computed in float32
 * and rounded to dt (MLX computes them in float32 and casts them). */
void mc_fast_rope_angles(int dt, float pos, const float *inv_freq, size_t half, float *cs, float *sn);

/* dst[i][j] = src element (i, j) times mul, converted from dt to float
 * (f32) or double (f64): rows x cols, source strides rs and cs, dst row
 * stride ldd. */
void mc_fast_load_tile_f32(int dt, const void *src, int64_t rs, int64_t cs, size_t rows, size_t cols, float *dst,
                           size_t ldd, float mul);
void mc_fast_load_tile_f64(int dt, const void *src, int64_t rs, int64_t cs, size_t rows, size_t cols, double *dst,
                           size_t ldd, double mul);

/* Packs the rows x cols matrix at src (dtype dt, strides rs and cs), times
 * mul, into panels of w rows converted to float: element (r, c) goes to
 * dst[(r / w) * cols * w + c * w + r % w]; the last panel's missing rows
 * are zeros. dst holds ceil(rows / w) * w * cols floats. */
void mc_fast_pack_f32(int dt, const void *src, int64_t rs, int64_t cs, size_t rows, size_t cols, size_t w,
                      float *dst, float mul);

/* Applies a mask tile to scores s (rows x cols, element (i, j) at
 * s[i * si + j * sj]): a bool
 * mask (mdt MC_SIMD_BOOL) puts `lowest` where the mask is false; any other
 * floating mask is added. Mask element (i, j) at mask + i * rs + j * cs.
 * With mask NULL, the causal rule: key j (counted from the tile's first
 * key, j0) is masked for row i when j0 + j > i0 + i + diag. */
void mc_fast_mask_tile_f32(int mdt, const void *mask, int64_t rs, int64_t cs, float *s, size_t rows, size_t cols,
                           size_t si, size_t sj, int64_t i0, int64_t j0, int64_t diag, float lowest);
void mc_fast_mask_tile_f64(int mdt, const void *mask, int64_t rs, int64_t cs, double *s, size_t rows, size_t cols,
                           size_t si, size_t sj, int64_t i0, int64_t j0, int64_t diag, double lowest);

/* y row i (row stride ys, contiguous) = acc row i / l[i] rounded to dt,
 * acc element (i, j) at acc[i * ars + j * acs]. */
void mc_fast_store_rows_f32(int dt, const float *acc, size_t rows, size_t cols, size_t ars, size_t acs,
                            const float *l, void *y, int64_t ys);
void mc_fast_store_rows_f64(int dt, const double *acc, size_t rows, size_t cols, size_t ars, size_t acs,
                            const double *l, void *y, int64_t ys);

#endif
