/* Owns the fourteen functions of fft.h: MLX's fft_impl (mlx/fft.cpp) as
 * mlx-c calls it, always with explicit sizes and axes. Each transform
 * checks its arguments in MLX's order and with MLX's messages (every one
 * under "[fftn]", as MLX reports them), cuts the input to the requested
 * sizes, pads it with zeros, converts it (float32 for rfft*, complex64
 * otherwise) and makes one FFT node (src/graph/prims_fft.c). fftshift and
 * ifftshift are rolls, as in MLX. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/prims_fft.h"
#include "graph/prims_index.h"
#include "graph/prims_slice.h"
#include "mlx/c/fft.h"
#include "ops/ew.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* MLX's printing of a list of ints: "(1,2,3)", cut short if very long. */
static void format_list(char *buf, size_t size, const int *v, size_t n)
{
    size_t at = (size_t)snprintf(buf, size, "(");
    for (size_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, i + 1 < n ? "%d," : "%d", v[i]);
    if (at < size)
        snprintf(buf + at, size - at, ")");
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Checks axes and sizes as MLX's fft_impl does, normalising axes into
 * out (axes_num of them, at most ndim once distinct and in range). */
static int check_axes(const mc_array *x, const int *n, const int *axes, size_t num, int *out, const char *fn)
{
    char list[512];
    int *sorted = mc_xmalloc(sizeof(int) * num);
    if (!sorted)
        return mc_error_oom(fn, sizeof(int) * num);
    for (size_t i = 0; i < num; i++)
        sorted[i] = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
    qsort(sorted, num, sizeof(int), cmp_int);
    bool dup = false;
    for (size_t i = 1; i < num; i++)
        dup |= sorted[i] == sorted[i - 1];
    bool bad = sorted[0] < 0 || sorted[num - 1] >= x->ndim;
    free(sorted);
    if (dup) {
        format_list(list, sizeof list, axes, num);
        return mc_error("[%s] Duplicated axis received %s", fn, list);
    }
    if (bad)
        return mc_error("[%s] Invalid axis received for array with %d dimensions.", fn, x->ndim);
    for (size_t i = 0; i < num; i++) {
        if (n[i] <= 0) {
            format_list(list, sizeof list, n, num);
            return mc_error("[%s] Invalid FFT output size requested %s", fn, list);
        }
        out[i] = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
    }
    return 0;
}

static int fft_op(mlx_array *res, mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  bool real, bool inverse)
{
    static const char fn[] = "fftn";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (x->ndim < 1)
        return mc_error("[%s] Requires array with at least one dimension.", fn);
    if (n_num != axes_num)
        return mc_error("[%s] Shape and axes have different sizes.", fn);
    if (axes_num == 0)
        return mc_op_store(res, mc_array_retain(x), fn);
    if (!n || !axes)
        return mc_error("[%s] The n or axes pointer is NULL for %zu axes.", fn, axes_num);
    mc_fft_params p;
    memset(&p, 0, sizeof p);
    /* distinct axes in range: more than ndim of them fails the checks */
    int norm_small[MC_MAX_NDIM];
    int *norm = axes_num <= MC_MAX_NDIM ? norm_small : mc_xmalloc(sizeof(int) * axes_num);
    if (!norm)
        return mc_error_oom(fn, sizeof(int) * axes_num);
    int rc = check_axes(x, n, axes, axes_num, norm, fn);
    if (norm != norm_small)
        free(norm);
    if (rc)
        return 1;
    p.naxes = (int)axes_num;
    memcpy(p.axes, norm, sizeof(int) * axes_num);
    p.inverse = inverse;
    p.real = real;
    int last = p.axes[p.naxes - 1];
    if (real && inverse)
        p.n_last = n[axes_num - 1];

    /* the input's shape the transform reads: n on each axis, and n/2 + 1
     * frequencies on the last one of a real inverse */
    int in_shape[MC_MAX_NDIM];
    memcpy(in_shape, x->shape, sizeof(int) * (size_t)x->ndim);
    for (int i = 0; i < p.naxes; i++)
        in_shape[p.axes[i]] = n[i];
    if (real && inverse)
        in_shape[last] = p.n_last / 2 + 1;
    bool less = false, greater = false;
    for (int d = 0; d < x->ndim; d++) {
        less |= in_shape[d] < x->shape[d];
        greater |= in_shape[d] > x->shape[d];
    }

    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *cur = x;
    if (less) {
        mc_slice_params sp;
        memset(&sp, 0, sizeof sp);
        sp.ndim = x->ndim;
        for (int d = 0; d < x->ndim; d++) {
            sp.stop[d] = in_shape[d] < x->shape[d] ? in_shape[d] : x->shape[d];
            sp.strides[d] = 1;
        }
        cur = mc_gb_slice(&s, cur, &sp);
    }
    if (greater && cur) {
        mc_pad_params pp;
        memset(&pp, 0, sizeof pp);
        for (int d = 0; d < x->ndim; d++)
            if (in_shape[d] > cur->shape[d]) {
                pp.axes[pp.n] = d;
                pp.high[pp.n++] = in_shape[d] - cur->shape[d];
            }
        mc_array *in2[2] = {cur, mc_gb_scalar(&s, 0, cur->dtype)};
        cur = in2[1] ? mc_gb_hold(&s, mc_node_new(fn, MC_PRIM_PAD, in2, 2, &pp, sizeof pp)) : NULL;
    }
    cur = mc_gb_astype(&s, cur, real && !inverse ? MLX_FLOAT32 : MLX_COMPLEX64);
    mc_array *r = cur && !s.failed ? mc_gb_hold(&s, mc_node_new(fn, MC_PRIM_FFT, &cur, 1, &p, sizeof p)) : NULL;
    return mc_ew_finish(&s, res, r);
}

int mlx_fft_fft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, &n, 1, &axis, 1, false, false);
}

int mlx_fft_ifft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, &n, 1, &axis, 1, false, true);
}

int mlx_fft_rfft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, &n, 1, &axis, 1, true, false);
}

int mlx_fft_irfft(mlx_array *res, const mlx_array a, int n, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, &n, 1, &axis, 1, true, true);
}

int mlx_fft_fft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, false, false);
}

int mlx_fft_fftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, false, false);
}

int mlx_fft_ifft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, false, true);
}

int mlx_fft_ifftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, false, true);
}

int mlx_fft_rfft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, true, false);
}

int mlx_fft_rfftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, true, false);
}

int mlx_fft_irfft2(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                   const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, true, true);
}

int mlx_fft_irfftn(mlx_array *res, const mlx_array a, const int *n, size_t n_num, const int *axes, size_t axes_num,
                   const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return fft_op(res, a, n, n_num, axes, axes_num, true, true);
}

/* ---- shifts ---- */

/* a rolled along axes by size/2 (fftshift) or (size+1)/2 (ifftshift). */
static int shift_op(mlx_array *res, mlx_array a, const int *axes, size_t num, bool inverse, const mlx_stream s)
{
    const char *fn = inverse ? "ifftshift" : "fftshift";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (num == 0)
        return mc_op_store(res, mc_array_retain(x), fn);
    if (!axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, num);
    if (num > INT_MAX)
        return mc_error("[%s] Too many axes (%zu).", fn, num);
    int *shift = mc_xmalloc(sizeof(int) * num);
    if (!shift)
        return mc_error_oom(fn, sizeof(int) * num);
    for (size_t i = 0; i < num; i++) {
        int ax = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (ax < 0 || ax >= x->ndim) {
            free(shift);
            return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, axes[i], x->ndim);
        }
        shift[i] = inverse ? (x->shape[ax] + 1) / 2 : x->shape[ax] / 2;
    }
    int rc = mlx_roll_axes(res, a, shift, num, axes, num, s);
    free(shift);
    return rc;
}

int mlx_fft_fftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return shift_op(res, a, axes, axes_num, false, s);
}

int mlx_fft_ifftshift(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return shift_op(res, a, axes, axes_num, true, s);
}
