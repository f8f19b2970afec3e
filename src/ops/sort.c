/* Owns the sorting and selection ops of mlx-c v0.6.0: sort, argsort,
 * partition, argpartition and topk, each along an axis or over the
 * flattened array, and median, composed as MLX composes it
 * (mlx/ops.cpp, MLX 0.31.1).
 *
 * The flattened forms reshape to (size,) and use axis 0, as MLX does, so
 * their messages name axis 0 and that shape. Arguments and messages are
 * MLX's, including partition's missing space before "along". topk is a
 * partition at kth = n - k followed by the slice of the last k elements,
 * so its elements come in MLX's order; asking for the whole axis returns
 * the input unchanged, as MLX does. Indices are uint32. */
#include <stdint.h>
#include <string.h>

#include "graph/prims_sort.h"
#include "ops/ew.h"
#include "ops/op_util.h"
#include "ops/shape_internal.h"
#include "runtime/error.h"

enum { SHAPE_TEXT = 16 * MC_MAX_NDIM };

static int bad_axis(const mc_array *x, int axis, const char *fn)
{
    if (axis + x->ndim < 0 || axis >= x->ndim)
        return mc_error("[%s] Received invalid axis %d for array with %d dimensions.", fn, axis, x->ndim);
    return 0;
}

/* a as shape (size,) for the flattened forms: a new reference */
static mc_array *flat(mc_array *a, const char *fn)
{
    int size = (int)a->size;
    return mc_node_reshape(a, 1, &size, fn);
}

static mc_array *sort_node(mc_array *x, int prim, int axis, int kth, const char *fn)
{
    mc_sort_params p;
    memset(&p, 0, sizeof p);
    p.axis = axis < 0 ? axis + x->ndim : axis;
    p.kth = kth;
    return mc_node_new(fn, prim, &x, 1, &p, sizeof p);
}

/* sort / argsort along axis of x (borrowed): a new reference or NULL */
static mc_array *sort_along(mc_array *x, int axis, int prim, const char *fn)
{
    if (bad_axis(x, axis, fn))
        return NULL;
    return sort_node(x, prim, axis, 0, fn);
}

/* partition / argpartition of x (borrowed) at kth along axis */
static mc_array *partition_along(mc_array *x, int kth, int axis, int prim, const char *fn)
{
    if (bad_axis(x, axis, fn))
        return NULL;
    int ax = axis < 0 ? axis + x->ndim : axis, n = x->shape[ax];
    int k = kth < 0 ? kth + n : kth;
    if (k < 0 || k >= n) {
        char shape[SHAPE_TEXT];
        mc_shape_str(shape, sizeof shape, x->ndim, x->shape);
        /* MLX's partition message has no space before "along" */
        return mc_error("[%s] Received invalid kth %d%salong axis %d for array with shape: %s", fn, kth,
                        prim == MC_PRIM_PARTITION ? "" : " ", axis, shape),
               NULL;
    }
    return sort_node(x, prim, ax, k, fn);
}

static int sort_op(mlx_array *res, mlx_array a, bool flatten, int axis, int prim, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (!flatten)
        return mc_op_store(res, sort_along(x, axis, prim, fn), fn);
    mc_array *f = flat(x, fn);
    mc_array *r = f ? sort_along(f, 0, prim, fn) : NULL;
    mc_array_release(f);
    return mc_op_store(res, r, fn);
}

static int partition_op(mlx_array *res, mlx_array a, int kth, bool flatten, int axis, int prim, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (!flatten)
        return mc_op_store(res, partition_along(x, kth, axis, prim, fn), fn);
    mc_array *f = flat(x, fn);
    mc_array *r = f ? partition_along(f, kth, 0, prim, fn) : NULL;
    mc_array_release(f);
    return mc_op_store(res, r, fn);
}

int mlx_sort_axis(mlx_array *res, const mlx_array a, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return sort_op(res, a, false, axis, MC_PRIM_SORT, "sort");
}

int mlx_sort(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return sort_op(res, a, true, 0, MC_PRIM_SORT, "sort");
}

int mlx_argsort_axis(mlx_array *res, const mlx_array a, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return sort_op(res, a, false, axis, MC_PRIM_ARGSORT, "argsort");
}

int mlx_argsort(mlx_array *res, const mlx_array a, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return sort_op(res, a, true, 0, MC_PRIM_ARGSORT, "argsort");
}

int mlx_partition_axis(mlx_array *res, const mlx_array a, int kth, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return partition_op(res, a, kth, false, axis, MC_PRIM_PARTITION, "partition");
}

int mlx_partition(mlx_array *res, const mlx_array a, int kth, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return partition_op(res, a, kth, true, 0, MC_PRIM_PARTITION, "partition");
}

int mlx_argpartition_axis(mlx_array *res, const mlx_array a, int kth, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return partition_op(res, a, kth, false, axis, MC_PRIM_ARGPARTITION, "argpartition");
}

int mlx_argpartition(mlx_array *res, const mlx_array a, int kth, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return partition_op(res, a, kth, true, 0, MC_PRIM_ARGPARTITION, "argpartition");
}

/* The k largest elements of x (borrowed) along axis: a new reference */
static mc_array *topk_along(mc_array *x, int k, int axis, const char *fn)
{
    int ax = axis < 0 ? axis + x->ndim : axis;
    if (ax < 0 || ax >= x->ndim)
        return mc_error("[%s] Received invalid axis %d for array with %d dimensions.", fn, axis, x->ndim), NULL;
    if (k < 0 || k > x->shape[ax]) {
        char shape[SHAPE_TEXT];
        mc_shape_str(shape, sizeof shape, x->ndim, x->shape);
        return mc_error("[%s] Received invalid k=%d along axis %d for array with shape: %s", fn, k, axis, shape),
               NULL;
    }
    if (k == x->shape[ax])
        return mc_array_retain(x);
    /* kth = -k normalised as partition does: k == 0 gives kth 0 */
    mc_array *p = sort_node(x, MC_PRIM_PARTITION, ax, k ? x->shape[ax] - k : 0, fn);
    if (!p)
        return NULL;
    int start[MC_MAX_NDIM], stop[MC_MAX_NDIM], step[MC_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++) {
        start[d] = 0;
        stop[d] = x->shape[d];
        step[d] = 1;
    }
    start[ax] = x->shape[ax] - k;
    mc_array *r = mc_sh_slice(p, start, stop, step, fn);
    mc_array_release(p);
    return r;
}

int mlx_topk_axis(mlx_array *res, const mlx_array a, int k, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "topk";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    return x ? mc_op_store(res, topk_along(x, k, axis, fn), fn) : 1;
}

int mlx_topk(mlx_array *res, const mlx_array a, int k, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "topk";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    mc_array *f = flat(x, fn);
    mc_array *r = f ? topk_along(f, k, 0, fn) : NULL;
    mc_array_release(f);
    return mc_op_store(res, r, fn);
}

/* Checks median's axes into sorted (distinct, normalised); *n their count. */
static int median_axes(const mc_array *x, const int *axes, size_t num, int *sorted, int *n, const char *fn)
{
    bool seen[MC_MAX_NDIM] = {false};
    if (num && !axes)
        return mc_error("[%s] axes is NULL with %zu axes.", fn, num);
    for (size_t i = 0; i < num; i++)
        if (axes[i] < -x->ndim || axes[i] >= x->ndim)
            return mc_error("[%s] axis %d is out of bounds for array with %d dimensions.", fn, axes[i], x->ndim);
    for (size_t i = 0; i < num; i++) {
        int a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (seen[a])
            return mc_error("[%s] Received duplicate axis.", fn);
        seen[a] = true;
    }
    *n = 0;
    for (int d = 0; d < x->ndim; d++)
        if (seen[d])
            sorted[(*n)++] = d;
    /* MLX flattens the median axes with flatten(ndim - n, ndim), which
     * refuses an empty range unless the array is 0-d */
    if (num == 0 && x->ndim > 0)
        return mc_error("[%s] Received no axes for array with %d dimensions.", fn, x->ndim);
    return 0;
}

int mlx_median(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
               const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "median";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    int sorted[MC_MAX_NDIM], n = 0;
    if (!x || median_axes(x, axes, axes_num, sorted, &n, fn))
        return 1;
    /* the kept axes in order, then the median axes, merged into one */
    int perm[MC_MAX_NDIM], shape[MC_MAX_NDIM], kept = 0;
    int64_t size = 1;
    for (int d = 0, j = 0; d < x->ndim; d++) {
        if (j < n && sorted[j] == d) {
            j++;
            size *= x->shape[d];
            if (size > INT32_MAX)
                return mc_error("[%s] The median axes hold more than %d elements.", fn, INT32_MAX);
            continue;
        }
        shape[kept] = x->shape[d];
        perm[kept++] = d;
    }
    if (size == 0)
        return mc_error("[%s] Cannot take median along empty axis.", fn);
    memcpy(perm + kept, sorted, sizeof(int) * (size_t)n);
    shape[kept] = (int)size;
    mlx_dtype dtype = mc_at_least_float(x->dtype);

    mc_gb sc;
    mc_gb_begin(&sc, fn);
    mc_array *t = mc_gb_hold(&sc, mc_node_transpose(x, perm, fn));
    mc_array *f = t ? mc_gb_hold(&sc, mc_node_reshape(t, kept + 1, shape, fn)) : NULL;
    mc_array *srt = f ? mc_gb_hold(&sc, sort_node(f, MC_PRIM_SORT, kept, 0, fn)) : NULL;
    int start[MC_MAX_NDIM], stop[MC_MAX_NDIM], step[MC_MAX_NDIM];
    for (int d = 0; d <= kept; d++) {
        start[d] = 0;
        stop[d] = shape[d];
        step[d] = 1;
    }
    int mp = (int)(size / 2);
    start[kept] = mp;
    stop[kept] = mp + 1;
    mc_array *m = srt ? mc_gb_hold(&sc, mc_sh_slice(srt, start, stop, step, fn)) : NULL;
    m = mc_gb_astype(&sc, m, dtype);
    if (size % 2 == 0) {
        start[kept] = mp - 1;
        stop[kept] = mp;
        mc_array *lo = srt ? mc_gb_hold(&sc, mc_sh_slice(srt, start, stop, step, fn)) : NULL;
        lo = mc_gb_astype(&sc, lo, dtype);
        mc_array *sum = mc_gb_binary(&sc, MC_B_ADD, m, lo, dtype);
        m = mc_gb_binary(&sc, MC_B_MULTIPLY, sum, mc_gb_scalar(&sc, 0.5, dtype), dtype);
    }
    int last = kept;
    m = m ? mc_gb_hold(&sc, mc_node_squeeze(m, &last, 1, fn)) : NULL;
    if (keepdims && m)
        m = mc_gb_hold(&sc, mc_node_expand_dims(m, sorted, n, fn));
    return mc_ew_finish(&sc, res, m);
}
