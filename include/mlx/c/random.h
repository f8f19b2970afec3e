/* Random numbers: mlx-c v0.6.0's random.h, computing MLX 0.31.1's numbers
 * (docs/random.md has the formulas and what is bit for bit).
 *
 * Every function follows ops.h's contract (lazy result into *res, the
 * caller frees it; 0, or 1 with one error reported and *res unchanged),
 * and:
 * - key is a uint32 array of shape (2) made by mlx_random_key or a split;
 *   the same key, shape and dtype give the same values as MLX.
 * - An empty key handle draws the next key of the global key sequence:
 *   (global, sub) = split(global), and the call uses sub. The sequence is
 *   seeded from the clock at first use unless mlx_random_seed set it. A
 *   mutex makes each draw atomic, so threads may draw at once: every draw
 *   gets a distinct key, and the set of keys drawn is the sequence's (which
 *   thread gets which one depends on timing). MLX's own sequence has no lock
 *   and guarantees nothing under concurrent use.
 * - Shapes are read only during the call; a shape with a zero gives an
 *   empty result.
 * - Floating outputs are float32, float16, bfloat16 or float64 where MLX
 *   allows them (uniform, gumbel, truncated_normal: not float64; normal,
 *   laplace: float64 from a float32 draw, as MLX). */
#ifndef MLX_RANDOM_H
#define MLX_RANDOM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* bool array of the shape: true where bits < p * (2^32 + 512) in float32
 * (p must be floating; p broadcasts to shape, else an error). */
int mlx_random_bernoulli(mlx_array *res, const mlx_array p, const int *shape, size_t shape_num,
                         const mlx_array key /* may be null */, const mlx_stream s);

/* Raw bits: uint8, uint16 or uint32 for width 1, 2 or 4 (else an error). */
int mlx_random_bits(mlx_array *res, const int *shape, size_t shape_num, int width,
                    const mlx_array key /* may be null */, const mlx_stream s);

/* uint32 class indices sampled from logits (unnormalised log
 * probabilities) along axis, by argmax(logits + gumbel noise); the result
 * has the given shape, which must broadcast with logits' shape without
 * axis. */
int mlx_random_categorical_shape(mlx_array *res, const mlx_array logits, int axis, const int *shape,
                                 size_t shape_num, const mlx_array key /* may be null */, const mlx_stream s);

/* As categorical_shape with num_samples draws per distribution: the
 * result is logits' shape without axis, plus a last axis of num_samples. */
int mlx_random_categorical_num_samples(mlx_array *res, const mlx_array logits_, int axis, int num_samples,
                                       const mlx_array key /* may be null */, const mlx_stream s);

/* One draw per distribution: logits' shape without axis. */
int mlx_random_categorical(mlx_array *res, const mlx_array logits, int axis, const mlx_array key /* may be null */,
                           const mlx_stream s);

/* Standard Gumbel samples, -log(-log(uniform)). */
int mlx_random_gumbel(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                      const mlx_array key /* may be null */, const mlx_stream s);

/* A new evaluated key {seed >> 32, seed & 0xffffffff} (uint32, shape (2)). */
int mlx_random_key(mlx_array *res, uint64_t seed);

/* Laplace samples with the given location and scale. */
int mlx_random_laplace(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, float loc, float scale,
                       const mlx_array key /* may be null */, const mlx_stream s);

/* Samples of N(mean, cov) (float32 only): mean (..., n), cov (..., n, n);
 * the result is broadcast(cov's and mean's batch shapes, shape) + (n). The
 * square root of cov comes from an SVD (LAPACK's sgesdd), as MLX's. */
int mlx_random_multivariate_normal(mlx_array *res, const mlx_array mean, const mlx_array cov, const int *shape,
                                   size_t shape_num, mlx_dtype dtype, const mlx_array key /* may be null */,
                                   const mlx_stream s);

/* Normal samples, loc + scale * N(0, 1), with loc and scale arrays (either
 * may be empty: 0 and 1); the result has the broadcast of shape, loc's and
 * scale's shapes. */
int mlx_random_normal_broadcast(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                                const mlx_array loc /* may be null */, const mlx_array scale /* may be null */,
                                const mlx_array key /* may be null */, const mlx_stream s);

/* Normal samples, loc + scale * N(0, 1). */
int mlx_random_normal(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, float loc, float scale,
                      const mlx_array key /* may be null */, const mlx_stream s);

/* x with its entries along axis shuffled. */
int mlx_random_permutation(mlx_array *res, const mlx_array x, int axis, const mlx_array key /* may be null */,
                           const mlx_stream s);

/* A shuffled arange(x), uint32 (x >= 0). */
int mlx_random_permutation_arange(mlx_array *res, int x, const mlx_array key /* may be null */,
                                  const mlx_stream s);

/* Integers in [low, high) of an integer (or bool) dtype, from a float32
 * uniform draw truncated toward zero as MLX 0.31.1 does (exact while the
 * bounds are below 2^24 in magnitude). */
int mlx_random_randint(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key /* may be null */,
                       const mlx_stream s);

/* Sets the global key sequence to key(seed). Always returns 0. */
int mlx_random_seed(uint64_t seed);

/* num new keys from key, as a uint32 array of shape (num, 2). */
int mlx_random_split_num(mlx_array *res, const mlx_array key, int num, const mlx_stream s);

/* Two new keys from key (rows 0 and 1 of split_num(key, 2)). On failure
 * neither result is changed. */
int mlx_random_split(mlx_array *res_0, mlx_array *res_1, const mlx_array key, const mlx_stream s);

/* Normal samples truncated to [lower, upper] (arrays that broadcast into
 * shape), by inverse CDF. */
int mlx_random_truncated_normal(mlx_array *res, const mlx_array lower, const mlx_array upper, const int *shape,
                                size_t shape_num, mlx_dtype dtype, const mlx_array key /* may be null */,
                                const mlx_stream s);

/* Uniform samples in [low, high) (arrays whose broadcast shape broadcasts
 * into shape). */
int mlx_random_uniform(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key /* may be null */,
                       const mlx_stream s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
