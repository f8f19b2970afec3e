/* One-dimensional transforms on KissFFT, with their plans cached (fft_plan.c).
 * The FFT primitive (prims_fft.c) runs these over the lines of an array.
 *
 * Data are float32 pairs (complex64's layout, KissFFT's kiss_fft_cpx) or
 * float32 reals. Transforms are unscaled: the caller scales inverse ones. */
#ifndef MC_GRAPH_FFT_PLAN_H
#define MC_GRAPH_FFT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

/* What a plan transforms: n complex to n complex, n reals to n/2 + 1
 * complex (forward), or n/2 + 1 complex to n reals (inverse). */
typedef enum mc_fft_kind { MC_FFT_C2C, MC_FFT_R2C, MC_FFT_C2R } mc_fft_kind;

typedef struct mc_fft_plan mc_fft_plan;

/* A plan for length n (n >= 1), from the cache or made and cached. The
 * caller holds it until mc_fft_plan_put and may run it on one thread at a
 * time (a plan of a real kind keeps scratch inside KissFFT's state, so the
 * cache hands each such plan to one holder; complex plans are shared).
 * Returns NULL with "[fn] ..." reported when memory runs out. */
mc_fft_plan *mc_fft_plan_get(int n, mc_fft_kind kind, bool inverse, const char *fn);

/* Gives a plan back to the cache (NULL is ignored). */
void mc_fft_plan_put(mc_fft_plan *p);

/* Whether one transform of this plan can use several workers (a long
 * transform, through the four-step decomposition). */
bool mc_fft_plan_wide(const mc_fft_plan *p);

/* Float32 pairs of scratch that mc_fft_plan_run needs for this plan when
 * it may use `workers` threads. */
size_t mc_fft_plan_scratch(const mc_fft_plan *p, int workers);

/* One transform from contiguous in to contiguous out (distinct buffers),
 * with scratch of mc_fft_plan_scratch(p, workers) pairs. workers > 1 lets
 * a wide plan split the transform across the pool: the caller must not
 * be running inside a pool job (there it would run on one thread). */
void mc_fft_plan_run(mc_fft_plan *p, const float *in, float *out, float *scratch, int workers);

/* Plans the cache holds now (for tests). */
size_t mc_fft_plan_cached(void);

/* Sets the length from which complex plans are four-step ones (n <= 0:
 * the default), for tests to reach that path with short lengths. Plans
 * made under another threshold are not reused. */
void mc_fft_set_wide_min(int n);

#endif
