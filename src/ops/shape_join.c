/* Owns the ops that join, split or repeat arrays: broadcast_arrays,
 * concatenate(_axis), stack(_axis), split(_sections), tile, repeat(_axis),
 * roll(_axis/_axes) and meshgrid. Like MLX they are compositions of views,
 * reshapes and one Concatenate primitive. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_index.h"
#include "handles/vector.h"
#include "ops/shape_internal.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* Releases arrs[0..n) (NULL entries skipped) and frees the list. */
static void release_all(mc_array **arrs, size_t n)
{
    if (!arrs)
        return;
    for (size_t i = 0; i < n; i++)
        mc_array_release(arrs[i]);
    mc_xfree(arrs);
}

static mc_array **new_list(size_t n, const char *fn)
{
    mc_array **l = mc_xcalloc(n ? n : 1, sizeof *l);
    if (!l)
        mc_error_oom(fn, n * sizeof *l);
    return l;
}

/* Stores arrs[0..n) into *res (a vector), then releases the list. */
static int store_vec(mlx_vector_array *res, mc_array **arrs, size_t n, const char *fn)
{
    int rc = mc_vec_assign(fn, res, arrs, n);
    release_all(arrs, n);
    return rc;
}

static int check_vec_res(const mlx_vector_array *res, const char *fn)
{
    return res ? 0 : mc_error("[%s] The result pointer is NULL.", fn);
}

/* ---- concatenate ---- */

static int shapes_error(mc_array *const *arrs, int n, int axis, const char *fn)
{
    char msg[1024];
    size_t at = 0;
    for (int i = 0; i < n && at < sizeof msg; i++) {
        char s[256];
        at += (size_t)snprintf(msg + at, sizeof msg - at, "%s, ",
                               mc_shape_str(s, sizeof s, arrs[i]->ndim, arrs[i]->shape));
    }
    return mc_error("[%s] All the input array dimensions must match exactly except for the concatenation axis. "
                    "However, the provided shapes are %sand the concatenation axis is %d.", fn, msg, axis);
}

mc_array *mc_sh_concatenate(mc_array *const *arrs, int n, int axis, const char *fn)
{
    if (n == 0) {
        mc_error("[%s] No arrays provided for concatenation.", fn);
        return NULL;
    }
    if (n == 1)
        return mc_array_retain(arrs[0]);
    int ax = 0;
    if (mc_op_axis(axis, arrs[0]->ndim, &ax, fn))
        return NULL;
    int64_t total = 0;
    mlx_dtype dt = arrs[0]->dtype;
    for (int i = 0; i < n; i++) {
        if (arrs[i]->ndim != arrs[0]->ndim) {
            mc_error("[%s] All the input arrays must have the same number of dimensions. However, got arrays "
                     "with dimensions %d and %d.", fn, arrs[0]->ndim, arrs[i]->ndim);
            return NULL;
        }
        for (int d = 0; d < arrs[0]->ndim; d++) {
            if (d != ax && arrs[i]->shape[d] != arrs[0]->shape[d]) {
                shapes_error(arrs, n, axis, fn);
                return NULL;
            }
        }
        total += arrs[i]->shape[ax];
        dt = mc_promote(dt, arrs[i]->dtype);
    }
    if (total > INT_MAX) {
        mc_error("[%s] The concatenated axis would have %lld elements, more than a dimension holds.", fn,
                 (long long)total);
        return NULL;
    }
    mc_array **cast = new_list((size_t)n, fn);
    if (!cast)
        return NULL;
    mc_array *out = NULL;
    for (int i = 0; i < n; i++)
        if (!(cast[i] = mc_node_astype(arrs[i], dt, fn)))
            goto done;
    mc_concat_params p;
    memset(&p, 0, sizeof p);
    p.axis = ax;
    out = mc_node_new(fn, MC_PRIM_CONCATENATE, cast, n, &p, sizeof p);
done:
    release_all(cast, (size_t)n);
    return out;
}

/* The items of a vector argument, borrowed; NULL with an error if the
 * handle or an item is empty. *n receives the count. */
static mc_array *const *vec_items(mlx_vector_array v, int *n, const char *fn)
{
    static mc_array *const none[1] = {NULL};
    size_t len = mc_vec_len(v);
    if (len > INT_MAX) {
        mc_error("[%s] Too many arrays (%zu).", fn, len);
        return NULL;
    }
    *n = (int)len;
    if (!len)
        return none;
    for (size_t i = 0; i < len; i++) {
        if (!mc_vec_at(v, i)) {
            mc_error("[%s] Array %zu of the vector is empty.", fn, i);
            return NULL;
        }
    }
    return mc_vec_arrays(v.ctx);
}

int mlx_concatenate_axis(mlx_array *res, const mlx_vector_array arrays, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "concatenate";
    int n;
    mc_array *const *arrs;
    if (mc_op_check_res(res, fn) || !(arrs = vec_items(arrays, &n, fn)))
        return 1;
    return mc_op_store(res, mc_sh_concatenate(arrs, n, axis, fn), fn);
}

int mlx_concatenate(mlx_array *res, const mlx_vector_array arrays, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "concatenate";
    int n;
    mc_array *const *arrs;
    if (mc_op_check_res(res, fn) || !(arrs = vec_items(arrays, &n, fn)))
        return 1;
    if (n == 0)
        return mc_error("[%s] No arrays provided for concatenation.", fn);
    mc_array **flat = new_list((size_t)n, fn);
    if (!flat)
        return 1;
    mc_array *out = NULL;
    for (int i = 0; i < n; i++)
        if (!(flat[i] = mc_sh_flatten(arrs[i], 0, arrs[i]->ndim ? arrs[i]->ndim - 1 : 0, fn)))
            goto done;
    out = mc_sh_concatenate(flat, n, 0, fn);
done:
    release_all(flat, (size_t)n);
    return mc_op_store(res, out, fn);
}

/* ---- stack ---- */

int mlx_stack_axis(mlx_array *res, const mlx_vector_array arrays, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "stack";
    int n;
    mc_array *const *arrs;
    if (mc_op_check_res(res, fn) || !(arrs = vec_items(arrays, &n, fn)))
        return 1;
    if (n == 0)
        return mc_error("[%s] No arrays provided for stacking.", fn);
    for (int i = 1; i < n; i++) {
        if (arrs[i]->ndim != arrs[0]->ndim ||
            (arrs[0]->ndim && memcmp(arrs[i]->shape, arrs[0]->shape, sizeof(int) * (size_t)arrs[0]->ndim))) {
            char s1[256], s2[256];
            return mc_error("[%s] All arrays must have the same shape (got %s and %s).", fn,
                            mc_shape_str(s1, sizeof s1, arrs[0]->ndim, arrs[0]->shape),
                            mc_shape_str(s2, sizeof s2, arrs[i]->ndim, arrs[i]->shape));
        }
    }
    if (arrs[0]->ndim + 1 > MC_MAX_NDIM)
        return mc_error("[%s] The result would have %d dimensions; at most %d are supported.", fn,
                        arrs[0]->ndim + 1, MC_MAX_NDIM);
    int ax = 0;
    if (mc_op_axis(axis, arrs[0]->ndim + 1, &ax, fn))
        return 1;
    mc_array **ex = new_list((size_t)n, fn);
    if (!ex)
        return 1;
    mc_array *out = NULL;
    for (int i = 0; i < n; i++)
        if (!(ex[i] = mc_node_expand_dims(arrs[i], &ax, 1, fn)))
            goto done;
    out = mc_sh_concatenate(ex, n, ax, fn);
done:
    release_all(ex, (size_t)n);
    return mc_op_store(res, out, fn);
}

int mlx_stack(mlx_array *res, const mlx_vector_array arrays, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return mlx_stack_axis(res, arrays, 0, s);
}

/* ---- split ---- */

/* The pieces of a between the raw split indices (slice rules: negative
 * counts from the end, out of range clamps), as views, into *res. */
static int split_at(mlx_vector_array *res, mc_array *a, const int *idx, size_t n, int ax, const char *fn)
{
    if (n == 0) {
        mc_array *one = a;
        return mc_vec_assign(fn, res, &one, 1);
    }
    mc_array **parts = new_list(n + 1, fn);
    if (!parts)
        return 1;
    int start[MC_MAX_NDIM], stop[MC_MAX_NDIM], step[MC_MAX_NDIM];
    for (int d = 0; d < a->ndim; d++) {
        start[d] = 0;
        stop[d] = a->shape[d];
        step[d] = 1;
    }
    for (size_t i = 0; i <= n; i++) {
        stop[ax] = i < n ? idx[i] : a->shape[ax];
        if (!(parts[i] = mc_sh_slice(a, start, stop, step, fn))) {
            release_all(parts, n + 1);
            return 1;
        }
        start[ax] = stop[ax];
    }
    return store_vec(res, parts, n + 1, fn);
}

int mlx_split_sections(mlx_vector_array *res, const mlx_array a, const int *indices, size_t indices_num, int axis,
                       const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "split";
    if (check_vec_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    int ax = 0;
    if (!x || mc_op_axis(axis, x->ndim, &ax, fn))
        return 1;
    if (indices_num && !indices)
        return mc_error("[%s] The indices pointer is NULL for %zu indices.", fn, indices_num);
    return split_at(res, x, indices, indices_num, ax, fn);
}

int mlx_split(mlx_vector_array *res, const mlx_array a, int num_splits, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "split";
    if (check_vec_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    int ax = 0;
    if (!x || mc_op_axis(axis, x->ndim, &ax, fn))
        return 1;
    if (num_splits <= 0)
        return mc_error("[%s] num_splits must be positive and non-zero but got %d.", fn, num_splits);
    int len = x->shape[ax];
    if (len % num_splits) {
        char sb[512];
        return mc_error("[%s] Array split does not result in sub arrays with equal size: attempting %d splits "
                        "along axis %d for shape %s.", fn, num_splits, axis,
                        mc_shape_str(sb, sizeof sb, x->ndim, x->shape));
    }
    int *idx = mc_xmalloc(sizeof(int) * (size_t)num_splits);
    if (!idx)
        return mc_error_oom(fn, sizeof(int) * (size_t)num_splits);
    int part = len / num_splits;
    for (int i = 0; i + 1 < num_splits; i++)
        idx[i] = (i + 1) * part;
    int rc = split_at(res, x, idx, (size_t)num_splits - 1, ax, fn);
    mc_xfree(idx);
    return rc;
}

/* ---- broadcast_arrays ---- */

int mlx_broadcast_arrays(mlx_vector_array *res, const mlx_vector_array inputs, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "broadcast_arrays";
    int n;
    mc_array *const *arrs;
    if (check_vec_res(res, fn) || !(arrs = vec_items(inputs, &n, fn)))
        return 1;
    int nd = 0;
    int shape[MC_MAX_NDIM];
    for (int i = 0; i < n; i++) {
        int tmp[MC_MAX_NDIM];
        if (mc_broadcast_shapes(nd, shape, arrs[i]->ndim, arrs[i]->shape, &nd, tmp, fn))
            return 1;
        memcpy(shape, tmp, sizeof(int) * (size_t)nd);
    }
    mc_array **outs = new_list((size_t)n, fn);
    if (!outs)
        return 1;
    for (int i = 0; i < n; i++) {
        if (!(outs[i] = mc_node_broadcast(arrs[i], nd, shape, fn))) {
            release_all(outs, (size_t)n);
            return 1;
        }
    }
    return store_vec(res, outs, (size_t)n, fn);
}

/* ---- tile / repeat ---- */

int mlx_tile(mlx_array *res, const mlx_array arr, const int *reps, size_t reps_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "tile";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(arr, fn, "arr");
    if (!x)
        return 1;
    if (reps_num > MC_MAX_NDIM)
        return mc_error("[%s] Got %zu repetitions; at most %d dimensions are supported.", fn, reps_num,
                        MC_MAX_NDIM);
    if (reps_num && !reps)
        return mc_error("[%s] The reps pointer is NULL for %zu entries.", fn, reps_num);
    for (size_t i = 0; i < reps_num; i++)
        if (reps[i] < 0)
            return mc_error("[%s] Negative repetitions are not allowed (got %d).", fn, reps[i]);
    /* align reps and shape on the right, padding the shorter with ones */
    int nd = x->ndim > (int)reps_num ? x->ndim : (int)reps_num;
    int r[MC_MAX_NDIM], sh[MC_MAX_NDIM];
    for (int i = 0; i < nd; i++) {
        int ri = i - (nd - (int)reps_num), si = i - (nd - x->ndim);
        r[i] = ri >= 0 ? reps[ri] : 1;
        sh[i] = si >= 0 ? x->shape[si] : 1;
    }
    /* (.., 1, s_i, ..) broadcast to (.., r_i, s_i, ..), then merged */
    int expand[2 * MC_MAX_NDIM], bcast[2 * MC_MAX_NDIM], final[MC_MAX_NDIM];
    int ne = 0;
    for (int i = 0; i < nd; i++) {
        if (r[i] != 1) {
            expand[ne] = 1;
            bcast[ne++] = r[i];
        }
        expand[ne] = sh[i];
        bcast[ne++] = sh[i];
        int64_t f = (int64_t)r[i] * sh[i];
        if (f > INT_MAX)
            return mc_error("[%s] Axis %d would have %lld elements, more than a dimension holds.", fn, i,
                            (long long)f);
        final[i] = (int)f;
    }
    if (ne > MC_MAX_NDIM)
        return mc_error("[%s] Tiling %d axes needs %d intermediate dimensions; at most %d are supported.", fn, nd,
                        ne, MC_MAX_NDIM);
    mc_array *t1 = mc_node_reshape(x, ne, expand, fn);
    mc_array *t2 = t1 ? mc_node_broadcast(t1, ne, bcast, fn) : NULL;
    mc_array *out = t2 ? mc_node_reshape(t2, nd, final, fn) : NULL;
    mc_array_release(t1);
    mc_array_release(t2);
    return mc_op_store(res, out, fn);
}

static mc_array *repeat_axis(mc_array *x, int repeats, int ax, const char *fn)
{
    if (repeats < 0) {
        mc_error("[%s] Number of repeats cannot be negative (got %d).", fn, repeats);
        return NULL;
    }
    if (repeats == 1)
        return mc_array_retain(x);
    if (repeats == 0) {
        /* an empty slice of the axis: the (…, 0, …) result, as a view */
        int start[MC_MAX_NDIM] = {0}, stop[MC_MAX_NDIM], step[MC_MAX_NDIM];
        for (int d = 0; d < x->ndim; d++) {
            stop[d] = d == ax ? 0 : x->shape[d];
            step[d] = 1;
        }
        return mc_sh_slice(x, start, stop, step, fn);
    }
    int64_t merged = (int64_t)x->shape[ax] * repeats;
    if (merged > INT_MAX) {
        mc_error("[%s] Axis %d would have %lld elements, more than a dimension holds.", fn, ax, (long long)merged);
        return NULL;
    }
    if (x->ndim + 1 > MC_MAX_NDIM) {
        mc_error("[%s] The intermediate would have %d dimensions; at most %d are supported.", fn, x->ndim + 1,
                 MC_MAX_NDIM);
        return NULL;
    }
    /* (.., s, 1, ..) broadcast to (.., s, repeats, ..), then merged */
    int bshape[MC_MAX_NDIM], fshape[MC_MAX_NDIM];
    for (int d = 0, k = 0; d < x->ndim; d++) {
        bshape[k++] = x->shape[d];
        if (d == ax)
            bshape[k++] = repeats;
        fshape[d] = d == ax ? (int)merged : x->shape[d];
    }
    int ins = ax + 1;
    mc_array *t1 = mc_node_expand_dims(x, &ins, 1, fn);
    mc_array *t2 = t1 ? mc_node_broadcast(t1, x->ndim + 1, bshape, fn) : NULL;
    mc_array *out = t2 ? mc_node_reshape(t2, x->ndim, fshape, fn) : NULL;
    mc_array_release(t1);
    mc_array_release(t2);
    return out;
}

int mlx_repeat_axis(mlx_array *res, const mlx_array arr, int repeats, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "repeat";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(arr, fn, "arr");
    int ax = 0;
    if (!x || mc_op_axis(axis, x->ndim, &ax, fn))
        return 1;
    return mc_op_store(res, repeat_axis(x, repeats, ax, fn), fn);
}

int mlx_repeat(mlx_array *res, const mlx_array arr, int repeats, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "repeat";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(arr, fn, "arr");
    if (!x)
        return 1;
    if (repeats < 0)
        return mc_error("[%s] Number of repeats cannot be negative (got %d).", fn, repeats);
    mc_array *flat = mc_sh_flatten(x, 0, x->ndim ? x->ndim - 1 : 0, fn);
    mc_array *out = flat ? repeat_axis(flat, repeats, 0, fn) : NULL;
    mc_array_release(flat);
    return mc_op_store(res, out, fn);
}

/* ---- roll ---- */

/* Sum of the shifts, which must fit an int (MLX's safe_cast). */
static int total_shift(const int *shift, size_t n, int *out, const char *fn)
{
    if (n && !shift)
        return mc_error("[%s] The shift pointer is NULL for %zu shifts.", fn, n);
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        t += shift[i];
        if (t > INT_MAX || t < INT_MIN)
            return mc_error("[%s] The total shift does not fit an int.", fn);
    }
    *out = (int)t;
    return 0;
}

/* Rolls x along the normalised axes: the piece past the split point moves
 * to the front (MLX: split, swap, concatenate). */
static mc_array *roll_axes(mc_array *x, const int *shift, const int *axes, int n, const char *fn)
{
    mc_array *cur = mc_array_retain(x);
    for (int i = 0; i < n && cur; i++) {
        int ax = axes[i];
        int64_t size = x->shape[ax], sh = shift[i];
        if (size == 0)
            continue;
        int64_t cut = sh < 0 ? (-sh) % size : size - sh % size;
        if (cut == 0 || cut == size)
            continue; /* a whole turn: the values stay where they are */
        int start[MC_MAX_NDIM] = {0}, stop[MC_MAX_NDIM], step[MC_MAX_NDIM];
        for (int d = 0; d < x->ndim; d++) {
            stop[d] = x->shape[d];
            step[d] = 1;
        }
        mc_array *parts[2] = {NULL, NULL};
        start[ax] = (int)cut;
        parts[0] = mc_sh_slice(cur, start, stop, step, fn);
        start[ax] = 0;
        stop[ax] = (int)cut;
        parts[1] = parts[0] ? mc_sh_slice(cur, start, stop, step, fn) : NULL;
        mc_array *next = parts[1] ? mc_sh_concatenate(parts, 2, ax, fn) : NULL;
        mc_array_release(parts[0]);
        mc_array_release(parts[1]);
        mc_array_release(cur);
        cur = next;
    }
    return cur;
}

int mlx_roll_axes(mlx_array *res, const mlx_array a, const int *shift, size_t shift_num, const int *axes,
                  size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "roll";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    if (axes_num == 0)
        return mc_op_store(res, mc_array_retain(x), fn);
    if (shift_num < axes_num)
        return mc_error("[%s] At least one shift value per axis is required, %zu provided for %zu axes.", fn,
                        shift_num, axes_num);
    if (!shift || !axes)
        return mc_error("[%s] The shift or axes pointer is NULL.", fn);
    if (axes_num > INT_MAX)
        return mc_error("[%s] Too many axes (%zu).", fn, axes_num);
    int *norm = mc_xmalloc(sizeof(int) * axes_num);
    if (!norm)
        return mc_error_oom(fn, sizeof(int) * axes_num);
    for (size_t i = 0; i < axes_num; i++) {
        norm[i] = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (norm[i] < 0 || norm[i] >= x->ndim) {
            mc_xfree(norm);
            return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, axes[i], x->ndim);
        }
    }
    mc_array *out = roll_axes(x, shift, norm, (int)axes_num, fn);
    mc_xfree(norm);
    return mc_op_store(res, out, fn);
}

int mlx_roll_axis(mlx_array *res, const mlx_array a, const int *shift, size_t shift_num, int axis,
                  const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "roll";
    int t = 0;
    if (mc_op_check_res(res, fn) || total_shift(shift, shift_num, &t, fn))
        return 1;
    return mlx_roll_axes(res, a, &t, 1, &axis, 1, s);
}

int mlx_roll(mlx_array *res, const mlx_array a, const int *shift, size_t shift_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "roll";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    int t = 0;
    if (!x || total_shift(shift, shift_num, &t, fn))
        return 1;
    int zero = 0;
    mc_array *flat = mc_sh_flatten(x, 0, x->ndim ? x->ndim - 1 : 0, fn);
    mc_array *rolled = flat ? roll_axes(flat, &t, &zero, 1, fn) : NULL;
    mc_array *out = rolled ? mc_node_reshape(rolled, x->ndim, x->shape, fn) : NULL;
    mc_array_release(flat);
    mc_array_release(rolled);
    return mc_op_store(res, out, fn);
}

/* ---- meshgrid ---- */

int mlx_meshgrid(mlx_vector_array *res, const mlx_vector_array arrays, bool sparse, const char *indexing,
                 const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "meshgrid";
    int n;
    mc_array *const *arrs;
    if (check_vec_res(res, fn) || !(arrs = vec_items(arrays, &n, fn)))
        return 1;
    if (!indexing || (strcmp(indexing, "xy") && strcmp(indexing, "ij")))
        return mc_error("[%s] Invalid indexing value. Valid values are 'xy' and 'ij'.", fn);
    if (n > MC_MAX_NDIM)
        return mc_error("[%s] %d arrays give %d dimensions; at most %d are supported.", fn, n, n, MC_MAX_NDIM);
    bool xy = !strcmp(indexing, "xy") && n > 1;
    /* array i lies along axis i, except that "xy" swaps the first two */
    mc_array **outs = new_list((size_t)n, fn);
    if (!outs)
        return 1;
    int nd = 0;
    int bshape[MC_MAX_NDIM];
    for (int i = 0; i < n; i++) {
        if (arrs[i]->size > INT_MAX) {
            release_all(outs, (size_t)n);
            return mc_error("[%s] Array %d has %zu elements, more than a dimension holds.", fn, i, arrs[i]->size);
        }
        int shape[MC_MAX_NDIM];
        for (int d = 0; d < n; d++)
            shape[d] = 1;
        int at = xy && i < 2 ? 1 - i : i;
        shape[at] = (int)arrs[i]->size;
        bshape[at] = shape[at];
        nd = n;
        if (!(outs[i] = mc_node_reshape(arrs[i], n, shape, fn))) {
            release_all(outs, (size_t)n);
            return 1;
        }
    }
    if (!sparse) {
        for (int i = 0; i < n; i++) {
            mc_array *b = mc_node_broadcast(outs[i], nd, bshape, fn);
            if (!b) {
                release_all(outs, (size_t)n);
                return 1;
            }
            mc_array_release(outs[i]);
            outs[i] = b;
        }
    }
    return store_vec(res, outs, (size_t)n, fn);
}
