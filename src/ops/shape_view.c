/* Owns the view-like shape ops and their shared builders: flatten,
 * unflatten, transpose_axes, swapaxes, moveaxis, expand_dims(_axes),
 * squeeze(_axis/_axes), atleast_1d/2d/3d, as_strided, contiguous, copy. */
#include <stdlib.h>
#include <string.h>

#include "graph/prims_copy.h"
#include "graph/prims_slice.h"
#include "graph/prims_view.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

/* ---- builders ---- */

static mc_array *unflatten_node(mc_array *a, int axis, int n, const int *shape, const char *fn)
{
    mc_unflatten_params p;
    memset(&p, 0, sizeof p);
    p.axis = axis;
    p.n = n;
    memcpy(p.shape, shape, sizeof(int) * (size_t)n);
    return mc_node_new(fn, MC_PRIM_UNFLATTEN, &a, 1, &p, sizeof p);
}

mc_array *mc_sh_flatten(mc_array *a, int start, int end, const char *fn)
{
    if (a->ndim == 0) {
        int one = 1;
        return mc_node_reshape(a, 1, &one, fn);
    }
    if (start == end)
        return mc_array_retain(a);
    mc_flatten_params p;
    memset(&p, 0, sizeof p);
    p.start = start;
    p.end = end;
    return mc_node_new(fn, MC_PRIM_FLATTEN, &a, 1, &p, sizeof p);
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int mc_sh_axes(const int *axes, size_t n, int ndim, int *out, const char *fn)
{
    if (n > MC_MAX_NDIM)
        return mc_error("[%s] Received %zu axes; at most %d are supported.", fn, n, MC_MAX_NDIM);
    if (n && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, n);
    for (size_t i = 0; i < n; i++)
        if (mc_op_axis(axes[i], ndim, &out[i], fn))
            return 1;
    qsort(out, n, sizeof *out, cmp_int);
    for (size_t i = 1; i < n; i++)
        if (out[i] == out[i - 1])
            return mc_error("[%s] Received duplicate axes.", fn);
    return 0;
}

/* ---- ops ---- */

/* The descriptor of the op's input, after checking res. */
static mc_array *arg1(mlx_array *res, mlx_array a, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return NULL;
    return mc_op_arg(a, fn, "a");
}

int mlx_flatten(mlx_array *res, const mlx_array a, int start_axis, int end_axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "flatten";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    /* MLX clamps the normalised axes into range before checking them */
    int nd = x->ndim;
    int st = start_axis + (start_axis < 0 ? nd : 0);
    int en = end_axis + (end_axis < 0 ? nd : 0);
    st = st < 0 ? 0 : st;
    en = en > nd - 1 ? nd - 1 : en;
    if (nd == 0)
        return mc_op_store(res, mc_sh_flatten(x, 0, 0, fn), fn);
    if (en < st)
        return mc_error("[%s] start_axis must be less than or equal to end_axis (got %d and %d for an array "
                        "with %d dimensions).", fn, start_axis, end_axis, nd);
    if (st >= nd)
        return mc_error("[%s] Invalid start_axis %d for array with %d dimensions.", fn, start_axis, nd);
    if (en < 0)
        return mc_error("[%s] Invalid end_axis %d for array with %d dimensions.", fn, end_axis, nd);
    return mc_op_store(res, mc_sh_flatten(x, st, en, fn), fn);
}

int mlx_unflatten(mlx_array *res, const mlx_array a, int axis, const int *shape, size_t shape_num,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "unflatten";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    if (shape_num == 0)
        return mc_error("[%s] Shape to unflatten to cannot be empty.", fn);
    if (!shape)
        return mc_error("[%s] The shape pointer is NULL for %zu dimensions.", fn, shape_num);
    int ax = axis < 0 ? axis + x->ndim : axis;
    if (ax < 0 || ax >= x->ndim)
        return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, axis, x->ndim);
    if ((size_t)x->ndim - 1 + shape_num > MC_MAX_NDIM)
        return mc_error("[%s] The result would have %zu dimensions; at most %d are supported.", fn,
                        (size_t)x->ndim - 1 + shape_num, MC_MAX_NDIM);
    mc_unflatten_params p;
    memset(&p, 0, sizeof p);
    p.axis = ax;
    p.n = (int)shape_num;
    int infer = -1;
    int len = x->shape[ax];
    /* the product of the known dims; once past len it only has to stay
     * past it (a later 0 is tracked apart), so it never overflows */
    int64_t known = 1;
    bool zero = false;
    char sb[512];
    for (size_t i = 0; i < shape_num; i++) {
        p.shape[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0)
                return mc_error("[%s] Can only infer one dimension.", fn);
            infer = (int)i;
        } else if (shape[i] < 0) {
            return mc_error("[%s] Invalid dimension %d in shape %s.", fn, shape[i],
                            mc_shape_str(sb, sizeof sb, (int)shape_num, shape));
        } else if (shape[i] == 0) {
            zero = true;
        } else if (known <= len) {
            known *= shape[i];
        }
    }
    if (zero)
        known = 0;
    if (infer >= 0) {
        if (known == 0 || len % known)
            return mc_error("[%s] Cannot unflatten axis %d with size %d into shape %s.", fn, axis, len,
                            mc_shape_str(sb, sizeof sb, (int)shape_num, shape));
        p.shape[infer] = (int)(len / known);
        known *= p.shape[infer];
    }
    if (known != len)
        return mc_error("[%s] Cannot unflatten axis %d with size %d into shape %s.", fn, axis, len,
                        mc_shape_str(sb, sizeof sb, (int)shape_num, p.shape));
    if (shape_num == 1)
        return mc_op_store(res, mc_array_retain(x), fn);
    return mc_op_store(res, unflatten_node(x, ax, p.n, p.shape, fn), fn);
}

int mlx_transpose_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "transpose";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    if (axes_num != (size_t)x->ndim)
        return mc_error("[%s] Received %zu axes for array with %d dimensions.", fn, axes_num, x->ndim);
    if (axes_num && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, axes_num);
    int perm[MC_MAX_NDIM];
    bool seen[MC_MAX_NDIM] = {false};
    for (int i = 0; i < x->ndim; i++) {
        int ax = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (ax < 0 || ax >= x->ndim)
            return mc_error("[%s] Invalid axis (%d) for array with %d dimensions.", fn, axes[i], x->ndim);
        if (seen[ax])
            return mc_error("[%s] Repeat axes not allowed.", fn);
        seen[ax] = true;
        perm[i] = ax;
    }
    /* MLX makes a Transpose node even for the identity permutation */
    return mc_op_store(res, mc_node_dims(MC_PRIM_TRANSPOSE, x, x->ndim, perm, fn), fn);
}

/* MLX's check in swapaxes and moveaxis: the axis must be in [-ndim, ndim). */
static int check_ax(int ax, int ndim, int *out, const char *fn)
{
    if (ax < -ndim || ax >= ndim)
        return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, ax, ndim);
    *out = ax < 0 ? ax + ndim : ax;
    return 0;
}

int mlx_swapaxes(mlx_array *res, const mlx_array a, int axis1, int axis2, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "swapaxes";
    mc_array *x = arg1(res, a, fn);
    int a1 = 0, a2 = 0;
    if (!x || check_ax(axis1, x->ndim, &a1, fn) || check_ax(axis2, x->ndim, &a2, fn))
        return 1;
    int perm[MC_MAX_NDIM];
    for (int i = 0; i < x->ndim; i++)
        perm[i] = i;
    perm[a1] = a2;
    perm[a2] = a1;
    return mc_op_store(res, mc_node_dims(MC_PRIM_TRANSPOSE, x, x->ndim, perm, fn), fn);
}

int mlx_moveaxis(mlx_array *res, const mlx_array a, int source, int destination, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "moveaxis";
    mc_array *x = arg1(res, a, fn);
    int src = 0, dst = 0;
    if (!x || check_ax(source, x->ndim, &src, fn) || check_ax(destination, x->ndim, &dst, fn))
        return 1;
    if (src == dst)
        return mc_op_store(res, mc_array_retain(x), fn);
    int perm[MC_MAX_NDIM];
    for (int i = 0, k = 0; i < x->ndim; i++) {
        if (i == dst)
            perm[i] = src;
        else {
            if (k == src)
                k++;
            perm[i] = k++;
        }
    }
    return mc_op_store(res, mc_node_dims(MC_PRIM_TRANSPOSE, x, x->ndim, perm, fn), fn);
}

static int expand_dims(mlx_array *res, mlx_array a, const int *axes, size_t n, bool always, const char *fn)
{
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    if (n == 0 && !always)
        return mc_op_store(res, mc_array_retain(x), fn);
    if (n > MC_MAX_NDIM || (size_t)x->ndim + n > MC_MAX_NDIM)
        return mc_error("[%s] The result would have %zu dimensions; at most %d are supported.", fn,
                        (size_t)x->ndim + n, MC_MAX_NDIM);
    int norm[MC_MAX_NDIM];
    if (mc_sh_axes(axes, n, x->ndim + (int)n, norm, fn))
        return 1;
    return mc_op_store(res, mc_node_expand_dims(x, norm, (int)n, fn), fn);
}

int mlx_expand_dims(mlx_array *res, const mlx_array a, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return expand_dims(res, a, &axis, 1, true, "expand_dims");
}

int mlx_expand_dims_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return expand_dims(res, a, axes, axes_num, false, "expand_dims");
}

static int squeeze_axes(mlx_array *res, mlx_array a, const int *axes, size_t n, bool always, const char *fn)
{
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    if (n == 0 && !always)
        return mc_op_store(res, mc_array_retain(x), fn);
    if (n > MC_MAX_NDIM)
        return mc_error("[%s] Received %zu axes; at most %d are supported.", fn, n, MC_MAX_NDIM);
    if (n && !axes)
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, n);
    int norm[MC_MAX_NDIM];
    for (size_t i = 0; i < n; i++) {
        if (mc_op_axis(axes[i], x->ndim, &norm[i], fn))
            return 1;
        if (x->shape[norm[i]] != 1)
            return mc_error("[%s] Cannot squeeze axis %d with size %d which is not equal to 1.", fn, axes[i],
                            x->shape[norm[i]]);
    }
    if (mc_sh_axes(norm, n, x->ndim, norm, fn))
        return 1;
    return mc_op_store(res, mc_node_squeeze(x, norm, (int)n, fn), fn);
}

int mlx_squeeze(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "squeeze";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    int axes[MC_MAX_NDIM];
    int n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (x->shape[i] == 1)
            axes[n++] = i;
    return mc_op_store(res, mc_node_squeeze(x, axes, n, fn), fn);
}

int mlx_squeeze_axis(mlx_array *res, const mlx_array a, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return squeeze_axes(res, a, &axis, 1, true, "squeeze");
}

int mlx_squeeze_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return squeeze_axes(res, a, axes, axes_num, false, "squeeze");
}

/* MLX's atleast_Nd: reshape to (1,...) shapes; 3d puts a trailing 1 too. */
static int atleast(mlx_array *res, mlx_array a, int want, const char *fn)
{
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    if (x->ndim >= want)
        return mc_op_store(res, mc_array_retain(x), fn);
    int shape[3] = {1, 1, 1};
    if (want == 2 && x->ndim == 1)
        shape[1] = x->shape[0];
    if (want == 3 && x->ndim == 1)
        shape[1] = x->shape[0];
    if (want == 3 && x->ndim == 2) {
        shape[0] = x->shape[0];
        shape[1] = x->shape[1];
    }
    return mc_op_store(res, mc_node_reshape(x, want, shape, fn), fn);
}

int mlx_atleast_1d(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return atleast(res, a, 1, "atleast_1d");
}

int mlx_atleast_2d(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return atleast(res, a, 2, "atleast_2d");
}

int mlx_atleast_3d(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return atleast(res, a, 3, "atleast_3d");
}

static mc_array *contiguous_node(mc_array *x, bool allow_col_major, const char *fn)
{
    mc_contiguous_params p;
    memset(&p, 0, sizeof p);
    p.allow_col_major = allow_col_major;
    return mc_node_new(fn, MC_PRIM_CONTIGUOUS, &x, 1, &p, sizeof p);
}

int mlx_contiguous(mlx_array *res, const mlx_array a, bool allow_col_major, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "contiguous";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    return mc_op_store(res, contiguous_node(x, allow_col_major, fn), fn);
}

int mlx_as_strided(mlx_array *res, const mlx_array a, const int *shape, size_t shape_num, const int64_t *strides,
                   size_t strides_num, size_t offset, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "as_strided";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    if (shape_num > MC_MAX_NDIM)
        return mc_error("[%s] Shape has %zu dimensions; at most %d are supported.", fn, shape_num, MC_MAX_NDIM);
    if (strides_num != shape_num)
        return mc_error("[%s] Got %zu strides for a shape of %zu dimensions.", fn, strides_num, shape_num);
    if (shape_num && (!shape || !strides))
        return mc_error("[%s] The shape or strides pointer is NULL for %zu dimensions.", fn, shape_num);
    for (size_t i = 0; i < shape_num; i++)
        if (shape[i] < 0)
            return mc_error("[%s] Negative dimensions not allowed.", fn);
    if (offset > (size_t)INT64_MAX)
        return mc_error("[%s] Offset %zu is out of range.", fn, offset);
    mc_as_strided_params p;
    memset(&p, 0, sizeof p);
    p.ndim = (int)shape_num;
    for (size_t i = 0; i < shape_num; i++) {
        p.shape[i] = shape[i];
        p.strides[i] = strides[i];
    }
    p.offset = (int64_t)offset;
    /* MLX views the input's row-major elements: give it a row-major copy
     * when it is not one already (Contiguous shares the buffer otherwise) */
    mc_array *c = contiguous_node(x, false, fn);
    if (!c)
        return 1;
    mc_array *out = mc_node_new(fn, MC_PRIM_AS_STRIDED, &c, 1, &p, sizeof p);
    mc_array_release(c);
    return mc_op_store(res, out, fn);
}

int mlx_copy(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "copy";
    mc_array *x = arg1(res, a, fn);
    if (!x)
        return 1;
    mc_astype_params p = {x->dtype};
    return mc_op_store(res, mc_node_new(fn, MC_PRIM_COPY, &x, 1, &p, sizeof p), fn);
}
