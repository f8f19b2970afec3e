/* Owns slice, slice_update and pad (modes constant, edge, reflect and
 * symmetric), with the slice builders the other shape ops use. */
#include <limits.h>
#include <string.h>

#include "graph/prims_index.h"
#include "graph/prims_slice.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

static void slice_params(mc_slice_params *p, int ndim, const int *start, const int *stop, const int *strides)
{
    memset(p, 0, sizeof *p);
    p->ndim = ndim;
    if (ndim) {
        memcpy(p->start, start, sizeof(int) * (size_t)ndim);
        memcpy(p->stop, stop, sizeof(int) * (size_t)ndim);
        memcpy(p->strides, strides, sizeof(int) * (size_t)ndim);
    }
}

mc_array *mc_sh_slice(mc_array *a, const int *start, const int *stop, const int *strides, const char *fn)
{
    mc_slice_params p;
    slice_params(&p, a->ndim, start, stop, strides);
    int nstart[MC_MAX_NDIM], shape[MC_MAX_NDIM];
    bool neg;
    if (mc_slice_normalize(a->ndim, a->shape, &p, nstart, shape, &neg, fn))
        return NULL;
    if (!neg && (a->ndim == 0 || !memcmp(shape, a->shape, sizeof(int) * (size_t)a->ndim)))
        return mc_array_retain(a);
    return mc_node_new(fn, MC_PRIM_SLICE, &a, 1, &p, sizeof p);
}

mc_array *mc_sh_slice_update(mc_array *src, mc_array *upd, const int *start, const int *stop, const int *strides,
                             const char *fn)
{
    mc_slice_params p;
    slice_params(&p, src->ndim, start, stop, strides);
    int nstart[MC_MAX_NDIM], shape[MC_MAX_NDIM];
    bool neg;
    if (mc_slice_normalize(src->ndim, src->shape, &p, nstart, shape, &neg, fn))
        return NULL;
    mc_array *u = mc_node_astype(upd, src->dtype, fn);
    mc_array *b = u ? mc_node_broadcast(u, src->ndim, shape, fn) : NULL;
    mc_array_release(u);
    if (!b)
        return NULL;
    /* the whole of src replaced: the result is the update */
    if (!neg && (src->ndim == 0 || !memcmp(shape, src->shape, sizeof(int) * (size_t)src->ndim)))
        return b;
    mc_array *in[2] = {src, b};
    mc_array *out = mc_node_new(fn, MC_PRIM_SLICE_UPDATE, in, 2, &p, sizeof p);
    mc_array_release(b);
    return out;
}

/* Checks the three index lists of slice / slice_update. */
static int check_slice_args(int ndim, const int *start, size_t start_num, const int *stop, size_t stop_num,
                            const int *strides, size_t strides_num, const char *fn)
{
    if (start_num != (size_t)ndim || stop_num != (size_t)ndim || strides_num != (size_t)ndim)
        return mc_error("[%s] Invalid number of indices or strides for array with dimension %d.", fn, ndim);
    if (ndim && (!start || !stop || !strides))
        return mc_error("[%s] The start, stop or strides pointer is NULL.", fn);
    return 0;
}

int mlx_slice(mlx_array *res, const mlx_array a, const int *start, size_t start_num, const int *stop,
              size_t stop_num, const int *strides, size_t strides_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "slice";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x || check_slice_args(x->ndim, start, start_num, stop, stop_num, strides, strides_num, fn))
        return 1;
    return mc_op_store(res, mc_sh_slice(x, start, stop, strides, fn), fn);
}

int mlx_slice_update(mlx_array *res, const mlx_array src, const mlx_array update, const int *start,
                     size_t start_num, const int *stop, size_t stop_num, const int *strides, size_t strides_num,
                     const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "slice_update";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(src, fn, "src");
    mc_array *u = x ? mc_op_arg(update, fn, "update") : NULL;
    if (!u || check_slice_args(x->ndim, start, start_num, stop, stop_num, strides, strides_num, fn))
        return 1;
    return mc_op_store(res, mc_sh_slice_update(x, u, start, stop, strides, fn), fn);
}

/* ---- pad ---- */

/* Index lists selecting everything of shape except [lo, hi) on axis ax
 * (with step 1). */
static void region(const int *shape, int ndim, int ax, int lo, int hi, int *start, int *stop, int *step)
{
    for (int d = 0; d < ndim; d++) {
        start[d] = 0;
        stop[d] = shape[d];
        step[d] = 1;
    }
    start[ax] = lo;
    stop[ax] = hi;
}

/* padded with [dst_lo, dst_hi) on ax replaced by the values of
 * [src_lo, src_hi), reversed if `flip` (a view's negative step). Takes
 * over the reference to *padded. */
static int copy_region(mc_array **padded, int ax, int src_lo, int src_hi, int dst_lo, int dst_hi, bool flip,
                       const char *fn)
{
    mc_array *p = *padded;
    int nd = p->ndim;
    int start[MC_MAX_NDIM] = {0}, stop[MC_MAX_NDIM] = {0}, step[MC_MAX_NDIM] = {0};
    region(p->shape, nd, ax, src_lo, src_hi, start, stop, step);
    mc_array *piece = mc_sh_slice(p, start, stop, step, fn);
    if (piece && flip) {
        int len = src_hi - src_lo;
        region(piece->shape, nd, ax, len - 1, -len - 1, start, stop, step);
        step[ax] = -1;
        mc_array *f = mc_sh_slice(piece, start, stop, step, fn);
        mc_array_release(piece);
        piece = f;
    }
    if (!piece)
        return 1;
    region(p->shape, nd, ax, dst_lo, dst_hi, start, stop, step);
    mc_array *next = mc_sh_slice_update(p, piece, start, stop, step, fn);
    mc_array_release(piece);
    if (!next)
        return 1;
    mc_array_release(p);
    *padded = next;
    return 0;
}

/* MLX's edge_pad on the constant-padded array: each pad region takes the
 * edge value of the original data, axis by axis. */
static int edge_fill(mc_array **padded, int ax, int n, int low, int high, const char *fn)
{
    if (low > 0 && copy_region(padded, ax, low, low + 1, 0, low, false, fn))
        return 1;
    if (high > 0 && copy_region(padded, ax, low + n - 1, low + n, low + n, low + n + high, false, fn))
        return 1;
    return 0;
}

/* MLX's reflect_pad: mirrored chunks of at most a period each, working
 * outwards; reflect skips the edge value (period n - 1), symmetric
 * repeats it (period n). */
static int reflect_fill(mc_array **padded, int ax, int n, int low, int high, bool symmetric, const char *fn)
{
    int offset = (!symmetric && n > 1) ? 1 : 0;
    int period = n - offset;
    int filled = low;
    for (int left = low; left > 0;) {
        int chunk = left < period ? left : period;
        if (copy_region(padded, ax, filled + offset, filled + offset + chunk, filled - chunk, filled, true, fn))
            return 1;
        filled -= chunk;
        left -= chunk;
    }
    filled = low + n;
    for (int left = high; left > 0;) {
        int chunk = left < period ? left : period;
        if (copy_region(padded, ax, filled - offset - chunk, filled - offset, filled, filled + chunk, true, fn))
            return 1;
        filled += chunk;
        left -= chunk;
    }
    return 0;
}

enum pad_mode { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_SYMMETRIC };

int mlx_pad(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const int *low_pad_size,
            size_t low_pad_size_num, const int *high_pad_size, size_t high_pad_size_num, const mlx_array pad_value,
            const char *mode, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "pad";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (axes_num != low_pad_size_num || axes_num != high_pad_size_num)
        return mc_error("[%s] Invalid number of padding sizes passed to pad with axes of size %zu.", fn, axes_num);
    if (axes_num > MC_MAX_NDIM)
        return mc_error("[%s] Received %zu axes; at most %d are supported.", fn, axes_num, MC_MAX_NDIM);
    if (axes_num && (!axes || !low_pad_size || !high_pad_size))
        return mc_error("[%s] The axes or padding sizes pointer is NULL.", fn);
    enum pad_mode m;
    if (mode && !strcmp(mode, "constant"))
        m = PAD_CONSTANT;
    else if (mode && !strcmp(mode, "edge"))
        m = PAD_EDGE;
    else if (mode && !strcmp(mode, "reflect"))
        m = PAD_REFLECT;
    else if (mode && !strcmp(mode, "symmetric"))
        m = PAD_SYMMETRIC;
    else
        return mc_error("[%s] Invalid padding mode (%s) passed to pad.", fn, mode ? mode : "NULL");
    mc_pad_params p;
    memset(&p, 0, sizeof p);
    p.n = (int)axes_num;
    bool seen[MC_MAX_NDIM] = {false};
    for (size_t i = 0; i < axes_num; i++) {
        if (low_pad_size[i] < 0)
            return mc_error("[%s] Invalid low padding size (%d) passed to pad for axis %zu. Padding sizes must be "
                            "non-negative.", fn, low_pad_size[i], i);
        if (high_pad_size[i] < 0)
            return mc_error("[%s] Invalid high padding size (%d) passed to pad for axis %zu. Padding sizes must "
                            "be non-negative.", fn, high_pad_size[i], i);
        if (mc_op_axis(axes[i], x->ndim, &p.axes[i], fn))
            return 1;
        if (seen[p.axes[i]])
            return mc_error("[%s] Received duplicate axes.", fn);
        seen[p.axes[i]] = true;
        p.low[i] = low_pad_size[i];
        p.high[i] = high_pad_size[i];
        if (m != PAD_CONSTANT && x->shape[p.axes[i]] == 0 && (p.low[i] || p.high[i]))
            return mc_error("[%s] Cannot pad empty axis %d using mode '%s'.", fn, p.axes[i], mode);
    }

    mc_array *val;
    if (m == PAD_CONSTANT) {
        mc_array *v = mc_op_arg(pad_value, fn, "pad_value");
        if (!v)
            return 1;
        if (v->size != 1)
            return mc_error("[%s] The pad value must have one element, got %zu.", fn, v->size);
        val = mc_node_astype(v, x->dtype, fn);
    } else {
        /* the pad regions are overwritten: any fill value will do */
        val = mc_sh_scalar(0, x->dtype, fn);
    }
    if (!val)
        return 1;
    /* the padded shape (and whether it fits) is Pad's infer's to say */
    mc_array *in[2] = {x, val};
    mc_array *out = mc_node_new(fn, MC_PRIM_PAD, in, 2, &p, sizeof p);
    mc_array_release(val);
    for (int i = 0; out && m != PAD_CONSTANT && i < p.n; i++) {
        int ax = p.axes[i], n = x->shape[ax];
        int rc = m == PAD_EDGE ? edge_fill(&out, ax, n, p.low[i], p.high[i], fn)
                               : reflect_fill(&out, ax, n, p.low[i], p.high[i], m == PAD_SYMMETRIC, fn);
        if (rc) {
            mc_array_release(out);
            out = NULL;
        }
    }
    return mc_op_store(res, out, fn);
}
