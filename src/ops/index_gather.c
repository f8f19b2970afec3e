/* Owns the general gather and scatter ops of mlx-c's ops.h: gather,
 * scatter and its reductions (each with a _single form taking one index
 * array and one axis), slice_dynamic, slice_update_dynamic and
 * masked_scatter. Checks and messages follow MLX's mlx/ops.cpp; indices
 * are broadcast together and cast to their common integer type, then one
 * Gather or Scatter node is built (src/graph/prims_gather.c,
 * prims_scatter.c). The dynamic slices are a Gather or Scatter with 0-d
 * indices; masked_scatter is composed (where over a take of the source at
 * the running count of the mask), so its gradients come from those. */
#include <stdint.h>
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_scan.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "handles/vector.h"
#include "ops/op_util.h"
#include "runtime/error.h"
#include "simd/reduce.h"

/* Broadcasts the k index arrays together and casts them to their common
 * integer dtype into out[] (held by s). MLX's checks and messages. */
static int prep_indices(mc_gb *s, mc_array *const *idx, int k, mc_array **out, const char *fn, const char *cap)
{
    if (k == 0)
        return 0;
    int nd = idx[0]->ndim, shape[MC_MAX_NDIM];
    memcpy(shape, idx[0]->shape, sizeof(int) * (size_t)nd);
    mlx_dtype dt = idx[0]->dtype;
    for (int j = 0; j < k; j++) {
        if (idx[j]->dtype == MLX_BOOL)
            return mc_error("[%s] Boolean indices not supported.", cap);
        if (j) {
            dt = mc_promote(dt, idx[j]->dtype);
            if (mc_broadcast_shapes(nd, shape, idx[j]->ndim, idx[j]->shape, &nd, shape, fn))
                return 1;
        }
    }
    if (!mc_dtype_is_integer(dt))
        return mc_error("[%s] Got indices with invalid dtype. Indices must be integral.", fn);
    for (int j = 0; j < k; j++)
        out[j] = mc_gb_broadcast(s, mc_gb_astype(s, idx[j], dt), nd, shape);
    return s->failed;
}

/* MLX's checks of the index count and axes shared by gather and scatter. */
static int check_axes(const mc_array *a, int k, const int *axes, size_t naxes, const char *fn)
{
    if (k > a->ndim)
        return mc_error("[%s] Too many index arrays. Got %d index arrays for input with %d dimensions.", fn, k,
                        a->ndim);
    if (naxes && !axes)
        return mc_error("[%s] axes is NULL with %zu entries.", fn, naxes);
    for (size_t i = 0; i < naxes; i++) {
        for (size_t j = 0; j < i; j++)
            if (axes[i] == axes[j])
                return mc_error("[%s] Repeat axes not allowed in %s.", fn, fn);
    }
    for (size_t i = 0; i < naxes; i++)
        if (axes[i] < 0 || axes[i] >= a->ndim)
            return mc_error("[%s] Axes don't match array dimensions.", fn);
    if ((size_t)k != naxes)
        return mc_error("[%s] Number of index arrays does not match number of axes.", fn);
    return 0;
}

static mc_array *gather_impl(mc_array *a, mc_array *const *idx, int k, const int *axes, size_t naxes,
                             const int *sizes, size_t nsizes, const char *fn)
{
    if (check_axes(a, k, axes, naxes, "gather"))
        return NULL;
    if (nsizes != (size_t)a->ndim || (nsizes && !sizes)) {
        mc_error("[gather] Got slice_sizes with size %zu for array with %d dimensions.", nsizes, a->ndim);
        return NULL;
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *in[MC_MAX_NDIM];
    if (prep_indices(&s, idx, k, in, "gather", "Gather")) {
        mc_gb_end(&s);
        return NULL;
    }
    int64_t total = 1;
    for (int d = 0; d < a->ndim; d++)
        total *= sizes[d];
    size_t isize = k ? in[0]->size : 1;
    char s1[256], s2[256];
    int bad = 0;
    if (a->size == 0 && isize != 0 && total != 0)
        bad = mc_error("[gather] If the input is empty, either the indices must be empty or the total slice size "
                       "must be 0.");
    for (int d = 0; d < a->ndim && a->size; d++)
        if (sizes[d] < 0 || sizes[d] > a->shape[d]) {
            bad = mc_error("[gather] Slice sizes must be in [0, a.shape(i)]. Got %s for array with shape %s.",
                           mc_shape_str(s1, sizeof s1, a->ndim, sizes),
                           mc_shape_str(s2, sizeof s2, a->ndim, a->shape));
            break;
        }
    if (bad) {
        mc_gb_end(&s);
        return NULL;
    }
    int ax[MC_MAX_NDIM];
    for (int j = 0; j < k; j++)
        ax[j] = axes[j];
    return mc_gb_finish_ref(&s, mc_gb_gather(&s, a, in, k, ax, sizes));
}

static mc_array *scatter_impl(mc_array *a, mc_array *const *idx, int k, mc_array *upd, const int *axes,
                              size_t naxes, int reduce, const char *fn)
{
    if (check_axes(a, k, axes, naxes, "scatter"))
        return NULL;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *in[MC_MAX_NDIM];
    for (int j = 0; j < k; j++)
        if (idx[j]->dtype == MLX_BOOL) {
            mc_error("[scatter] Boolean indices not supported.");
            goto fail;
        }
    int ind = 0, ishape[MC_MAX_NDIM];
    for (int j = 0; j < k; j++)
        if (mc_broadcast_shapes(ind, ishape, idx[j]->ndim, idx[j]->shape, &ind, ishape, "scatter"))
            goto fail;
    char s1[256], s2[256];
    if (upd->ndim != a->ndim + ind) {
        mc_error("[scatter] Updates with %d dimensions does not match the sum of the array (%d) and indices "
                 "(%d) dimensions.",
                 upd->ndim, a->ndim, ind);
        goto fail;
    }
    for (int d = 0; d < ind; d++)
        if (upd->shape[d] != ishape[d]) {
            mc_error("[scatter] Update shape %s is not valid for broadcasted index shape %s.",
                     mc_shape_str(s1, sizeof s1, upd->ndim, upd->shape), mc_shape_str(s2, sizeof s2, ind, ishape));
            goto fail;
        }
    for (int d = 0; d < a->ndim; d++)
        if (upd->shape[ind + d] > a->shape[d]) {
            mc_error("[scatter] Updates with shape %s are too large for array with shape %s.",
                     mc_shape_str(s1, sizeof s1, upd->ndim, upd->shape),
                     mc_shape_str(s2, sizeof s2, a->ndim, a->shape));
            goto fail;
        }
    if (prep_indices(&s, idx, k, in, "scatter", "scatter"))
        goto fail;
    int ax[MC_MAX_NDIM];
    for (int j = 0; j < k; j++)
        ax[j] = axes[j];
    return mc_gb_finish_ref(&s, mc_gb_scatter(&s, a, in, k, ax, mc_gb_astype(&s, upd, a->dtype), reduce));
fail:
    mc_gb_end(&s);
    return NULL;
}

/* The arrays of a call, borrowed, after its result pointer: a, the index
 * arrays (the vector `many`, or `one` when many is NULL, as the _single
 * forms pass) and, when u is given, the updates. Returns the count of
 * index arrays, or -1 with one error reported. */
static int op_args(mlx_array *res, mlx_array a, const mlx_vector_array *many, mlx_array one,
                   const mlx_array *updates, mc_array **x, mc_array **idx, mc_array **u, const char *fn)
{
    if (mc_op_check_res(res, fn) || !(*x = mc_op_arg(a, fn, "a")))
        return -1;
    size_t n = 1;
    if (!many) {
        if (!(idx[0] = mc_op_arg(one, fn, "indices")))
            return -1;
    } else if ((n = mc_vec_len(*many)) > MC_MAX_NDIM) {
        return mc_error("[%s] Too many index arrays (%zu).", fn, n), -1;
    } else {
        for (size_t i = 0; i < n; i++)
            if (!(idx[i] = mc_vec_at(*many, i)))
                return mc_error("[%s] Index array %zu of the vector is empty.", fn, i), -1;
    }
    if (u && !(*u = mc_op_arg(*updates, fn, "updates")))
        return -1;
    return (int)n;
}

static int gather_op(mlx_array *res, mlx_array a, const mlx_vector_array *many, mlx_array one, const int *axes,
                     size_t naxes, const int *sizes, size_t nsizes)
{
    static const char fn[] = "gather";
    mc_array *x, *idx[MC_MAX_NDIM];
    int k = op_args(res, a, many, one, NULL, &x, idx, NULL, fn);
    return k < 0 ? 1 : mc_op_store(res, gather_impl(x, idx, k, axes, naxes, sizes, nsizes, fn), fn);
}

static int scatter_op(mlx_array *res, mlx_array a, const mlx_vector_array *many, mlx_array one, mlx_array updates,
                      const int *axes, size_t naxes, int reduce, const char *fn)
{
    mc_array *x, *u, *idx[MC_MAX_NDIM];
    int k = op_args(res, a, many, one, &updates, &x, idx, &u, fn);
    return k < 0 ? 1 : mc_op_store(res, scatter_impl(x, idx, k, u, axes, naxes, reduce, fn), fn);
}

static const mlx_array no_array = {NULL};

int mlx_gather(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const int *axes, size_t axes_num,
               const int *slice_sizes, size_t slice_sizes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return gather_op(res, a, &indices, no_array, axes, axes_num, slice_sizes, slice_sizes_num);
}

int mlx_gather_single(mlx_array *res, const mlx_array a, const mlx_array indices, int axis, const int *slice_sizes,
                      size_t slice_sizes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return gather_op(res, a, NULL, indices, &axis, 1, slice_sizes, slice_sizes_num);
}

int mlx_scatter(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates,
                const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, &indices, no_array, updates, axes, axes_num, MC_SCATTER_NONE, "scatter");
}

int mlx_scatter_single(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array updates,
                       int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, NULL, indices, updates, &axis, 1, MC_SCATTER_NONE, "scatter");
}

int mlx_scatter_add(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates,
                    const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, &indices, no_array, updates, axes, axes_num, MC_SCATTER_SUM, "scatter_add");
}

int mlx_scatter_add_single(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array updates,
                           int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, NULL, indices, updates, &axis, 1, MC_SCATTER_SUM, "scatter_add");
}

int mlx_scatter_prod(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates,
                     const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, &indices, no_array, updates, axes, axes_num, MC_SCATTER_PROD, "scatter_prod");
}

int mlx_scatter_prod_single(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array updates,
                            int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, NULL, indices, updates, &axis, 1, MC_SCATTER_PROD, "scatter_prod");
}

int mlx_scatter_max(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates,
                    const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, &indices, no_array, updates, axes, axes_num, MC_SCATTER_MAX, "scatter_max");
}

int mlx_scatter_max_single(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array updates,
                           int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, NULL, indices, updates, &axis, 1, MC_SCATTER_MAX, "scatter_max");
}

int mlx_scatter_min(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates,
                    const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, &indices, no_array, updates, axes, axes_num, MC_SCATTER_MIN, "scatter_min");
}

int mlx_scatter_min_single(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_array updates,
                           int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return scatter_op(res, a, NULL, indices, updates, &axis, 1, MC_SCATTER_MIN, "scatter_min");
}

/* ---- dynamic slices ---- */

/* The arguments of a dynamic slice or update after its result pointer:
 * src, then (when u is given) the update, then start. MLX's
 * normalize_dynamic_slice_inputs: axes normalised into ax[]. Returns
 * non-zero with one error reported. */
static int dyn_args(mlx_array *res, mlx_array src, const mlx_array *update, mlx_array start, const int *axes,
                    size_t naxes, mc_array **x, mc_array **u, mc_array **st, int *ax, const char *fn,
                    const char *pre)
{
    if (mc_op_check_res(res, fn) || !(*x = mc_op_arg(src, fn, "src")))
        return 1;
    if (u && !(*u = mc_op_arg(*update, fn, "update")))
        return 1;
    if (!(*st = mc_op_arg(start, fn, "start")))
        return 1;
    const mc_array *a = *x, *b = *st;
    if (b->size > (size_t)a->ndim || naxes > MC_MAX_NDIM || (naxes && !axes))
        return mc_error("%s Invalid number of starting positions for array with dimension %d.", pre, a->ndim);
    if (b->ndim > 1)
        return mc_error("%s array of starting indices must be zero or one dimensional but has dimension %d.", pre,
                        b->ndim);
    if (b->size != naxes)
        return mc_error("%s Number of starting indices %zu does not match number of axes %zu.", pre, b->size,
                        naxes);
    if (!mc_dtype_is_integer(b->dtype))
        return mc_error("%s Start indices must be integers, got type %s.", pre, mc_dtype_name(b->dtype));
    for (size_t i = 0; i < naxes; i++) {
        int v = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
        if (v < 0 || v >= a->ndim)
            return mc_error("%s Invalid axis %d for array with dimension %d.", pre, axes[i], a->ndim);
        ax[i] = v;
        for (size_t j = 0; j < i; j++)
            if (ax[j] == v)
                return mc_error("%s Repeat axes not allowed.", pre);
    }
    return 0;
}

/* start's naxes entries as 0-d arrays (held by s) into st[]. */
static void dyn_starts(mc_gb *s, mc_array *start, size_t naxes, mc_array **st)
{
    mc_array *flat = mc_gb_reshape(s, start, 1, (int[]){(int)naxes});
    for (size_t i = 0; i < naxes; i++) {
        mc_slice_params p;
        memset(&p, 0, sizeof p);
        p.ndim = 1;
        p.start[0] = (int)i;
        p.stop[0] = (int)i + 1;
        p.strides[0] = 1;
        st[i] = mc_gb_reshape(s, mc_gb_slice(s, flat, &p), 0, NULL);
    }
}

int mlx_slice_dynamic(mlx_array *res, const mlx_array a, const mlx_array start, const int *axes, size_t axes_num,
                      const int *slice_size, size_t slice_size_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "slice_dynamic";
    mc_array *x, *st, *idx[MC_MAX_NDIM];
    int ax[MC_MAX_NDIM];
    if (dyn_args(res, a, NULL, start, axes, axes_num, &x, NULL, &st, ax, fn, "[slice]"))
        return 1;
    if (slice_size_num != (size_t)x->ndim || (slice_size_num && !slice_size))
        return mc_error("[slice] Invalid slice size for array with %d dimensions.", x->ndim);
    char s1[256], s2[256];
    for (int d = 0; d < x->ndim; d++)
        if (slice_size[d] < 0 || slice_size[d] > x->shape[d])
            return mc_error("[slice] Invalid slice size %s for array with shape %s.",
                            mc_shape_str(s1, sizeof s1, x->ndim, slice_size),
                            mc_shape_str(s2, sizeof s2, x->ndim, x->shape));
    mc_gb g;
    mc_gb_begin(&g, fn);
    dyn_starts(&g, st, axes_num, idx);
    return mc_op_store(res, mc_gb_finish_ref(&g, mc_gb_gather(&g, x, idx, (int)axes_num, ax, slice_size)), fn);
}

int mlx_slice_update_dynamic(mlx_array *res, const mlx_array src, const mlx_array update, const mlx_array start,
                             const int *axes, size_t axes_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "slice_update_dynamic";
    mc_array *x, *u, *st, *idx[MC_MAX_NDIM];
    int ax[MC_MAX_NDIM];
    if (dyn_args(res, src, &update, start, axes, axes_num, &x, &u, &st, ax, fn, "[slice_update]"))
        return 1;
    if (u->ndim > x->ndim) {
        char s1[256], s2[256];
        return mc_error("[slice_update] Update with shape %s has more dimensions than the array of shape %s.",
                        mc_shape_str(s1, sizeof s1, u->ndim, u->shape),
                        mc_shape_str(s2, sizeof s2, x->ndim, x->shape));
    }
    mc_gb g;
    mc_gb_begin(&g, fn);
    dyn_starts(&g, st, axes_num, idx);
    /* as MLX: the update gains src's leading axes (1 on the sliced ones)
     * and is cut to src's size before broadcasting */
    int diff = x->ndim - u->ndim, up[MC_MAX_NDIM];
    for (int d = 0; d < x->ndim; d++)
        up[d] = d < diff ? x->shape[d] : (u->shape[d - diff] < x->shape[d] ? u->shape[d - diff] : x->shape[d]);
    for (size_t i = 0; i < axes_num; i++)
        if (ax[i] < diff)
            up[ax[i]] = 1;
    mc_array *upd = mc_gb_broadcast(&g, mc_gb_astype(&g, u, x->dtype), x->ndim, up);
    return mc_op_store(
        res, mc_gb_finish_ref(&g, mc_gb_scatter(&g, x, idx, (int)axes_num, ax, upd, MC_SCATTER_SLICE_UPDATE)), fn);
}

/* ---- masked_scatter ---- */

int mlx_masked_scatter(mlx_array *res, const mlx_array a, const mlx_array mask, const mlx_array src,
                       const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "masked_scatter";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    mc_array *m = x ? mc_op_arg(mask, fn, "mask") : NULL;
    mc_array *v = m ? mc_op_arg(src, fn, "src") : NULL;
    if (!v)
        return 1;
    if (m->dtype != MLX_BOOL)
        return mc_error("[masked_scatter] The mask has to be boolean.");
    if (m->ndim > x->ndim)
        return mc_error("[masked_scatter] The mask cannot have more dimensions than the target.");
    int un = x->ndim - m->ndim;
    if (v->ndim > un + 1)
        return mc_error("[masked_scatter] Value array shape must be broadcastable with the last %d dimensions "
                        "of the input.",
                        un);
    if (memcmp(m->shape, x->shape, sizeof(int) * (size_t)m->ndim) != 0) {
        char s1[256], s2[256];
        return mc_error("[masked_scatter] The boolean mask should have the same shape as the beginning of the "
                        "indexed array but the mask has shape %s and the array has shape %s",
                        mc_shape_str(s1, sizeof s1, m->ndim, m->shape),
                        mc_shape_str(s2, sizeof s2, x->ndim, x->shape));
    }
    /* the composition below indexes the flattened arrays with int32 */
    int64_t vtotal = (int64_t)(v->ndim == un + 1 && v->ndim ? v->shape[0] : (int64_t)m->size);
    vtotal *= (int64_t)(m->size ? x->size / m->size : 0);
    if (x->size > INT32_MAX || vtotal > INT32_MAX)
        return mc_error("[masked_scatter] Arrays of %zu elements are too large (at most %d).", x->size, INT32_MAX);
    mc_gb g;
    mc_gb_begin(&g, fn);
    /* the mask over every element of a, and the values as MLX expands
     * them: one row of a's trailing shape per masked position */
    int ms[MC_MAX_NDIM], vs[MC_MAX_NDIM + 1], vn = un + 1;
    for (int d = 0; d < x->ndim; d++)
        ms[d] = d < m->ndim ? m->shape[d] : 1;
    mc_array *mfull = mc_gb_broadcast(&g, mc_gb_reshape(&g, m, x->ndim, ms), x->ndim, x->shape);
    mc_array *vals = mc_gb_astype(&g, v, x->dtype);
    if (v->ndim < vn) {
        for (int d = 0; d < vn; d++)
            vs[d] = d < vn - v->ndim ? 1 : v->shape[d - (vn - v->ndim)];
        vals = mc_gb_reshape(&g, vals, vn, vs);
        vs[0] = (int)m->size;
    } else {
        vs[0] = v->shape[0];
    }
    for (int d = 1; d < vn; d++)
        vs[d] = x->shape[m->ndim + d - 1];
    vals = mc_gb_broadcast(&g, vals, vn, vs);
    int total = (int)x->size, vcount = 1;
    for (int d = 0; d < vn; d++)
        vcount *= vs[d];
    mc_array *mflat = mc_gb_reshape(&g, mfull, 1, &total);
    /* the k-th masked element takes source element k; an empty source
     * gives zeros (MLX raises at eval when the source runs short) */
    if (vcount == 0) {
        vals = mc_gb_zeros(&g, 1, (int[]){1}, x->dtype);
        vcount = 1;
    }
    mc_array *vflat = mc_gb_reshape(&g, vals, 1, &vcount);
    mc_array *pos = mc_gb_scan(&g, mc_gb_astype(&g, mflat, MLX_INT32), MC_S_SUM, 0, false, false);
    mc_array *taken = mc_gb_gather_axis(&g, vflat, pos, 0, 0);
    mc_array *r = mc_gb_where(&g, mflat, taken, mc_gb_reshape(&g, x, 1, &total));
    return mc_op_store(res, mc_gb_finish_ref(&g, mc_gb_reshape(&g, r, x->ndim, x->shape)), fn);
}
