/* Fourier transforms: mlx-c v0.6.0's fft.h with MLX 0.31.1's semantics,
 * computed with KissFFT (docs/fft.md).
 *
 * Every function follows ops.h's contract: a lazy result into *res (the
 * caller frees it); 0, or 1 with one error reported and *res unchanged.
 * As in mlx-c, each call names its sizes and axes explicitly:
 * - axes[i] (negative counts from the end) is transformed to length n[i]:
 *   the input is cut to n[i] or padded with zeros first. n_num must equal
 *   axes_num; with no axes the result is a itself. Axes must be distinct
 *   and in range, sizes positive; a must have at least one dimension.
 * - The result is complex64 (float32 for irfft*). Inputs of any dtype are
 *   converted first: to complex64 for the complex transforms and irfft*,
 *   to float32 for rfft* (a complex input keeps its real part).
 * - The forward transforms are unscaled, the inverse ones scaled by
 *   1 / (product of the n[i]), as numpy's default "backward" norm.
 * - rfft* keeps n/2 + 1 frequencies on the last axis of axes; irfft*
 *   reads n/2 + 1 of them there and returns n real values. */
#ifndef MLX_FFT_H
#define MLX_FFT_H

#include <stddef.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The discrete Fourier transform of a along axis, at length n. */
int mlx_fft_fft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s);
/* fftn over two axes (any number, as MLX: fft2 is fftn). */
int mlx_fft_fft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                 const mlx_stream s);
/* The transform over each of axes in turn, axes[i] at length n[i]. */
int mlx_fft_fftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                 const mlx_stream s);
/* a rolled by shape/2 along each of axes (the zero frequency to the
 * centre); no axes gives a itself. */
int mlx_fft_fftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s);
/* The inverse transforms of fft, fft2 and fftn. */
int mlx_fft_ifft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_ifft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s);
int mlx_fft_ifftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s);
/* The inverse of fftshift: a rolled by (shape+1)/2 along each of axes. */
int mlx_fft_ifftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s);
/* The inverses of rfft, rfft2 and rfftn: float32, n real values on the
 * last of axes. */
int mlx_fft_irfft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_irfft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                   const mlx_stream s);
int mlx_fft_irfftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                   const mlx_stream s);
/* Transforms of a real input (a converted to float32): n/2 + 1
 * frequencies on the last of axes. */
int mlx_fft_rfft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_rfft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s);
int mlx_fft_rfftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
