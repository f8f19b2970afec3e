/* Owns array descriptors: creation, views, layout flags, donation and the
 * iterative release of whole graphs. */
#include "array/array.h"

#include <stdio.h>
#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/obj_cache.h"

/* Alignment of a node's inputs and parameters after the shape. */
enum { MC_EXTRA_ALIGN = 16 };

mc_array *mc_arr_checked(mlx_array a, const char *fn)
{
    if (!a.ctx)
        mc_error("[%s] The array is empty (an mlx_array_new() handle that was never set).", fn);
    return (mc_array *)a.ctx;
}

char *mc_shape_str(char *buf, size_t n, int ndim, const int *shape)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ",%d" : "%d", shape[i]);
    if (at < n)
        snprintf(buf + at, n - at, ")");
    return buf;
}

bool mc_shape_size(int ndim, const int *shape, size_t *size)
{
    size_t s = 1;
    bool zero = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return false;
        zero |= shape[i] == 0;
    }
    /* a 0 anywhere makes the size 0, whatever the order of the dims (the
     * product of the others must not refuse (INT_MAX, INT_MAX, INT_MAX, 0)) */
    for (int i = 0; i < ndim && !zero; i++) {
        if (s > SIZE_MAX / (size_t)shape[i])
            return false;
        s *= (size_t)shape[i];
    }
    *size = zero ? 0 : s;
    return true;
}

void mc_row_strides(int ndim, const int *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        /* As MLX: a 0 dim makes every stride left of it 0. Unsigned, since
         * the dims right of a 0 dim are not size-checked and their product
         * may wrap, harmlessly: an empty array addresses nothing. */
        s = (int64_t)((uint64_t)s * (uint64_t)shape[i]);
    }
}

mc_array *mc_array_alloc_ex(const char *fn, mlx_dtype dtype, int ndim, const int *shape, size_t extra,
                            void **extra_at)
{
    if (!mc_dtype_valid(dtype)) {
        mc_error("[%s] Unknown dtype value %d.", fn, (int)dtype);
        return NULL;
    }
    if (ndim < 0 || ndim > MC_MAX_NDIM) {
        mc_error("[%s] Number of dimensions %d is out of range [0, %d].", fn, ndim, MC_MAX_NDIM);
        return NULL;
    }
    if (ndim > 0 && !shape) {
        mc_error("[%s] The shape pointer is NULL for %d dimensions.", fn, ndim);
        return NULL;
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            char s[256];
            mc_error("[%s] Negative dimension %d in shape %s.", fn, shape[i],
                     mc_shape_str(s, sizeof s, ndim, shape));
            return NULL;
        }
    }
    size_t size;
    size_t itemsize = mc_dtype_size(dtype);
    if (!mc_shape_size(ndim, shape, &size) || size > (SIZE_MAX / 2) / itemsize ||
        size > (size_t)INT64_MAX / itemsize) {
        char s[256];
        mc_error("[%s] The shape %s has more elements than can be addressed.", fn,
                 mc_shape_str(s, sizeof s, ndim, shape));
        return NULL;
    }
    /* strides (8-byte aligned) first, then the shape, then the extra bytes,
     * in one allocation */
    size_t head = sizeof(mc_array) + (size_t)ndim * (sizeof(int64_t) + sizeof(int));
    head = (head + MC_EXTRA_ALIGN - 1) & ~(size_t)(MC_EXTRA_ALIGN - 1);
    mc_array *a = mc_obj_alloc(head + extra);
    if (!a) {
        mc_error_oom(fn, head + extra);
        return NULL;
    }
    memset(a, 0, sizeof *a);
    a->block = head + extra;
    if (extra_at)
        *extra_at = (char *)a + head;
    atomic_init(&a->refs, 1);
    a->dtype = dtype;
    a->ndim = ndim;
    a->strides = (int64_t *)(a + 1);
    a->shape = (int *)(a->strides + ndim);
    if (ndim)
        memcpy(a->shape, shape, (size_t)ndim * sizeof(int));
    mc_row_strides(ndim, a->shape, a->strides);
    a->size = size;
    return a;
}

mc_array *mc_array_alloc(const char *fn, mlx_dtype dtype, int ndim, const int *shape)
{
    return mc_array_alloc_ex(fn, dtype, ndim, shape, 0, NULL);
}

void mc_array_update_flags(mc_array *a)
{
    /* data_size: the span of elements the view touches, if they are dense */
    size_t span = 1;
    bool empty = a->size == 0;
    if (empty) {
        /* every layout at once; and the products below, of the other dims,
         * are unchecked for an empty array and may overflow */
        a->flags = MC_FLAG_ROW_CONTIG | MC_FLAG_COL_CONTIG | MC_FLAG_CONTIG;
        a->data_size = 0;
        return;
    }
    int64_t row = 1, col = 1;
    bool row_ok = true, col_ok = true;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1) {
            if (a->strides[i] != row)
                row_ok = false;
            row *= a->shape[i];
        }
    }
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] != 1) {
            if (a->strides[i] != col)
                col_ok = false;
            col *= a->shape[i];
        }
    }
    /* a dense view in some other order (e.g. a transposed 3-d array): the
     * distinct strides of non-broadcast dims, sorted, must tile exactly */
    size_t nonzero = 1;
    bool dense = true;
    for (int i = 0; i < a->ndim; i++) {
        if (a->strides[i] == 0 && a->shape[i] > 1)
            dense = false;
        if (a->strides[i] < 0)
            dense = false;
        if (a->shape[i] > 1 && a->strides[i] != 0)
            nonzero *= (size_t)a->shape[i];
    }
    if (dense && !row_ok && !col_ok) {
        int64_t expect = 1;
        bool used[MC_MAX_NDIM] = {false};
        for (int k = 0; k < a->ndim && dense; k++) {
            int best = -1;
            for (int i = 0; i < a->ndim; i++)
                if (!used[i] && a->shape[i] > 1 && (best < 0 || a->strides[i] < a->strides[best]))
                    best = i;
            if (best < 0)
                break;
            used[best] = true;
            if (a->strides[best] != expect)
                dense = false;
            expect *= a->shape[best];
        }
    }
    span = empty ? 0 : nonzero;
    a->flags = 0;
    if (row_ok || empty)
        a->flags |= MC_FLAG_ROW_CONTIG;
    if (col_ok || empty)
        a->flags |= MC_FLAG_COL_CONTIG;
    if (row_ok || col_ok || dense || empty)
        a->flags |= MC_FLAG_CONTIG;
    a->data_size = (a->flags & MC_FLAG_CONTIG) ? a->size : span;
    if (!(a->flags & MC_FLAG_CONTIG)) {
        /* elements of the buffer reachable from data: up to the last one */
        size_t last = 0;
        for (int i = 0; i < a->ndim; i++)
            if (a->shape[i] > 1 && a->strides[i] > 0)
                last += (size_t)a->strides[i] * (size_t)(a->shape[i] - 1);
        a->data_size = empty ? 0 : last + 1;
    }
}

int mc_array_alloc_data(mc_array *a, const char *fn)
{
    size_t nbytes = a->size * mc_dtype_size(a->dtype);
    mc_buffer *b = mc_buffer_alloc(nbytes);
    if (!b)
        return mc_error_oom(fn, nbytes);
    mc_array_set_buffer(a, b, b->data);
    return 0;
}

void mc_array_set_buffer(mc_array *a, mc_buffer *buf, void *data)
{
    mc_buffer_release(a->buf);
    a->buf = buf;
    a->data = data;
    mc_row_strides(a->ndim, a->shape, a->strides);
    /* what mc_array_update_flags finds for row-major strides, without its
     * general search: dense in row order, in column order too when at most
     * one dim is not 1, every layout when empty */
    int big = 0;
    for (int i = 0; i < a->ndim; i++)
        big += a->shape[i] != 1;
    a->flags = MC_FLAG_ROW_CONTIG | MC_FLAG_CONTIG | (big <= 1 || a->size == 0 ? MC_FLAG_COL_CONTIG : 0);
    a->data_size = a->size;
}

void mc_array_set_view(mc_array *a, mc_array *src, void *data, const int64_t *strides)
{
    mc_buffer *b = mc_buffer_retain(src->buf);
    mc_buffer_release(a->buf);
    a->buf = b;
    a->data = data;
    if (a->ndim)
        memcpy(a->strides, strides, (size_t)a->ndim * sizeof(int64_t));
    mc_array_update_flags(a);
}

mc_array *mc_array_from_data(const char *fn, const void *src, int ndim, const int *shape, mlx_dtype dtype)
{
    mc_array *a = mc_array_alloc(fn, dtype, ndim, shape);
    if (!a)
        return NULL;
    if (a->size && !src) {
        mc_error("[%s] The data pointer is NULL for %zu elements.", fn, a->size);
        mc_array_release(a);
        return NULL;
    }
    if (mc_array_alloc_data(a, fn)) {
        mc_array_release(a);
        return NULL;
    }
    if (a->size)
        memcpy(a->data, src, a->size * mc_dtype_size(dtype));
    return a;
}

mc_array *mc_array_scalar(const char *fn, mlx_dtype dtype, const void *value)
{
    return mc_array_from_data(fn, value, 0, NULL, dtype);
}

bool mc_array_donatable(const mc_array *in, const mc_array *out)
{
    return in->buf && mc_array_refs(in) == 1 && mc_buffer_refs(in->buf) == 1 && !in->buf->managed &&
           (in->flags & MC_FLAG_ROW_CONTIG) && in->size == out->size && in->data == in->buf->data &&
           mc_dtype_size(in->dtype) == mc_dtype_size(out->dtype) &&
           in->buf->nbytes == out->size * mc_dtype_size(out->dtype);
}

void mc_array_donate(mc_array *out, mc_array *in)
{
    mc_buffer *b = in->buf;
    in->buf = NULL;
    in->data = NULL;
    mc_array_set_buffer(out, b, b->data);
}

static void mc_array_destroy(mc_array *a, mc_array **pending)
{
    for (int i = 0; i < a->n_inputs; i++) {
        mc_array *in = a->inputs[i];
        if (in && atomic_fetch_sub_explicit(&in->refs, 1, memory_order_acq_rel) == 1) {
            in->next_free = *pending;
            *pending = in;
        }
    }
    if (a->params_apart)
        mc_xfree(a->params);
    mc_buffer_release(a->buf);
    mc_obj_free(a, a->block);
}

void mc_array_release(mc_array *a)
{
    if (!a || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* a worklist instead of recursion: freeing the head of a long lazy
     * chain frees the whole chain without growing the C stack */
    mc_array *pending = a;
    a->next_free = NULL;
    while (pending) {
        mc_array *next = pending;
        pending = next->next_free;
        mc_array_destroy(next, &pending);
    }
}
