/* Long transforms as many short KissFFT transforms (fft_large.c), so that
 * one transform runs in the caches and on every worker of the pool:
 *
 *   four-step  a complex transform of n = n1 * n2 points as n2 transforms
 *              of n1 points, a twiddle, and n1 transforms of n2 points;
 *   split      the step that turns a complex transform of n/2 points,
 *              run on the reals packed in pairs, into the real transform
 *              of n points (and back, for the inverse).
 *
 * Data are float32 pairs (kiss_fft_cpx's layout). Transforms are
 * unscaled, as fft_plan.h's. */
#ifndef MC_GRAPH_FFT_LARGE_H
#define MC_GRAPH_FFT_LARGE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mc_fft4 mc_fft4;

/* A four-step plan for n points; NULL when memory runs out or n has no
 * divisor in [16, sqrt(n)] (the caller then uses KissFFT directly). n's
 * prime factors should be ones KissFFT's butterflies run directly. */
mc_fft4 *mc_fft4_make(int n, bool inverse);
void mc_fft4_free(mc_fft4 *f);

/* Pairs of scratch mc_fft4_run needs when it may use `workers` threads. */
size_t mc_fft4_scratch(const mc_fft4 *f, int workers);

/* One transform of n pairs; in may equal out. workers > 1 splits the work
 * across the pool (the calling thread must not be inside a pool job, or
 * the work simply runs on it). The plan is only read: any number of
 * threads may run it at once, each with its own scratch. */
void mc_fft4_run(const mc_fft4 *f, const float *in, float *out, float *scratch, int workers);

/* Twiddles exp(-2 pi i k / n) for the split step of a real transform of n
 * (even) points. */
typedef struct mc_fft_split mc_fft_split;

mc_fft_split *mc_fft_split_make(int n);
void mc_fft_split_free(mc_fft_split *s);

/* Forward: z holds the complex transform of the n reals read as n/2
 * pairs, in its first n/2 pairs; rewritten in place into the n/2 + 1
 * pairs of the real transform. */
void mc_fft_split_r2c(const mc_fft_split *s, float *z, int workers);

/* Inverse: from the n/2 + 1 pairs x of a Hermitian spectrum, the n/2
 * pairs z whose unscaled inverse complex transform, read as n reals, is
 * the unscaled inverse real transform of x. The imaginary parts of the
 * zero and Nyquist frequencies are ignored (as KissFFT and pocketfft do). */
void mc_fft_split_c2r(const mc_fft_split *s, const float *x, float *z, int workers);

#endif
