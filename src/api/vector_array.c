/* Owns mlx_vector_array: a growable list of array references, its public
 * functions, and the mc_vec_* helpers of vector_impl.h (including the two
 * shared by every vector type). */
#include "api/vector_impl.h"

#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_array";

int mc_vec_reserve(void **items, size_t *cap, size_t need, size_t elsize, const char *fn)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 4;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > SIZE_MAX / elsize)
        return mc_error("[%s] Cannot hold %zu items: the size overflows.", fn, need);
    void *p = mc_xrealloc(*items, ncap * elsize);
    if (!p)
        return mc_error_oom(fn, ncap * elsize);
    *items = p;
    *cap = ncap;
    return 0;
}

int mc_vec_empty_error(const char *fn, const char *type)
{
    return mc_error("[%s] Expected a non-empty %s (the handle's ctx is NULL).", fn, type);
}

mc_vec_array *mc_vec_checked(mlx_vector_array v, const char *fn)
{
    if (!v.ctx)
        mc_vec_empty_error(fn, type_name);
    return v.ctx;
}

mc_vec_array *mc_vec_array_create(const char *fn, size_t cap)
{
    mc_vec_array *v = mc_xmalloc(sizeof *v);
    if (!v) {
        mc_error_oom(fn, sizeof *v);
        return NULL;
    }
    v->len = 0;
    v->cap = 0;
    v->items = NULL;
    if (mc_vec_reserve((void **)&v->items, &v->cap, cap, sizeof *v->items, fn)) {
        mc_xfree(v);
        return NULL;
    }
    return v;
}

void mc_vec_array_destroy(mc_vec_array *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->len; i++)
        mc_array_release(v->items[i]);
    mc_xfree(v->items);
    mc_xfree(v);
}

mc_vec_array *mc_vec_array_copy(const char *fn, const mc_vec_array *src)
{
    mc_vec_array *v = mc_vec_array_create(fn, src->len);
    if (!v)
        return NULL;
    for (size_t i = 0; i < src->len; i++)
        v->items[i] = mc_array_retain(src->items[i]);
    v->len = src->len;
    return v;
}

int mc_vec_array_assign(const char *fn, mc_vec_array *v, mc_array *const *arrs, size_t n)
{
    /* Build the new item list aside: arrs may be v's own items. */
    mc_array **items = NULL;
    size_t cap = 0;
    if (mc_vec_reserve((void **)&items, &cap, n, sizeof *items, fn))
        return 1;
    for (size_t i = 0; i < n; i++)
        items[i] = mc_array_retain(arrs[i]);
    for (size_t i = 0; i < v->len; i++)
        mc_array_release(v->items[i]);
    mc_xfree(v->items);
    v->items = items;
    v->cap = cap;
    v->len = n;
    return 0;
}

mlx_vector_array mc_vec_from(const char *fn, mc_array *const *arrs, size_t n)
{
    mc_vec_array *v = mc_vec_array_create(fn, n);
    if (!v)
        return (mlx_vector_array){NULL};
    for (size_t i = 0; i < n; i++)
        v->items[i] = mc_array_retain(arrs[i]);
    v->len = n;
    return (mlx_vector_array){v};
}

int mc_vec_push_take(const char *fn, mlx_vector_array h, mc_array *a)
{
    mc_vec_array *v = mc_vec_checked(h, fn);
    if (!v || mc_vec_reserve((void **)&v->items, &v->cap, v->len + 1, sizeof *v->items, fn)) {
        mc_array_release(a);
        return 1;
    }
    v->items[v->len++] = a;
    return 0;
}

int mc_vec_push(const char *fn, mlx_vector_array h, mc_array *a)
{
    return mc_vec_push_take(fn, h, mc_array_retain(a));
}

int mc_vec_assign(const char *fn, mlx_vector_array *dst, mc_array *const *arrs, size_t n)
{
    if (dst->ctx)
        return mc_vec_array_assign(fn, dst->ctx, arrs, n);
    mlx_vector_array v = mc_vec_from(fn, arrs, n);
    if (!v.ctx)
        return 1;
    *dst = v;
    return 0;
}

void mc_vec_move(mlx_vector_array *dst, mlx_vector_array src)
{
    mc_vec_array *s = src.ctx;
    mc_vec_array *d = dst->ctx;
    if (!d) {
        dst->ctx = s;
        return;
    }
    if (d == s)
        return;
    /* Swap the item lists: d keeps its object, s dies with d's old items. */
    mc_vec_array old = *d;
    if (s) {
        *d = *s;
        *s = old;
        mc_vec_array_destroy(s);
    } else {
        d->len = 0;
        d->cap = 0;
        d->items = NULL;
        for (size_t i = 0; i < old.len; i++)
            mc_array_release(old.items[i]);
        mc_xfree(old.items);
    }
}

/* The descriptors of data[0..size), all checked non-empty; 0 or reports. */
static int check_arrays(const char *fn, const mlx_array *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu arrays.", fn, size);
    for (size_t i = 0; i < size; i++)
        if (!data[i].ctx)
            return mc_error("[%s] Array %zu of %zu is empty (an mlx_array_new() handle that was never set).",
                            fn, i, size);
    return 0;
}

/* mlx_array handles are laid out as {ctx} with ctx the descriptor, so an
 * array of handles is read as an array of descriptors item by item. */
static int append_arrays(const char *fn, mc_vec_array *v, const mlx_array *data, size_t size)
{
    if (mc_vec_reserve((void **)&v->items, &v->cap, v->len + size, sizeof *v->items, fn))
        return 1;
    for (size_t i = 0; i < size; i++)
        v->items[v->len++] = mc_array_retain(mc_arr(data[i]));
    return 0;
}

mlx_vector_array mlx_vector_array_new(void)
{
    return (mlx_vector_array){mc_vec_array_create("mlx_vector_array_new", 0)};
}

int mlx_vector_array_free(mlx_vector_array vec)
{
    mc_vec_array_destroy(vec.ctx);
    return 0;
}

int mlx_vector_array_set(mlx_vector_array *vec, const mlx_vector_array src)
{
    static const char fn[] = "mlx_vector_array_set";
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec_array *s = mc_vec_checked(src, fn);
    if (!s)
        return 1;
    return mc_vec_assign(fn, vec, s->items, s->len);
}

mlx_vector_array mlx_vector_array_new_data(const mlx_array *data, size_t size)
{
    static const char fn[] = "mlx_vector_array_new_data";
    if (check_arrays(fn, data, size))
        return (mlx_vector_array){NULL};
    mc_vec_array *v = mc_vec_array_create(fn, size);
    if (!v)
        return (mlx_vector_array){NULL};
    append_arrays(fn, v, data, size); /* room was reserved: cannot fail */
    return (mlx_vector_array){v};
}

mlx_vector_array mlx_vector_array_new_value(const mlx_array val)
{
    static const char fn[] = "mlx_vector_array_new_value";
    if (check_arrays(fn, &val, 1))
        return (mlx_vector_array){NULL};
    mc_array *a = mc_arr(val);
    return mc_vec_from(fn, &a, 1);
}

/* Replaces *vec's items by data's, creating *vec's object if needed. */
static int set_arrays(const char *fn, mlx_vector_array *vec, const mlx_array *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    if (check_arrays(fn, data, size))
        return 1;
    mc_vec_array *v = mc_vec_array_create(fn, size);
    if (!v)
        return 1;
    append_arrays(fn, v, data, size);
    mc_vec_move(vec, (mlx_vector_array){v});
    return 0;
}

int mlx_vector_array_set_data(mlx_vector_array *vec, const mlx_array *data, size_t size)
{
    return set_arrays("mlx_vector_array_set_data", vec, data, size);
}

int mlx_vector_array_set_value(mlx_vector_array *vec, const mlx_array val)
{
    return set_arrays("mlx_vector_array_set_value", vec, &val, 1);
}

int mlx_vector_array_append_data(mlx_vector_array vec, const mlx_array *data, size_t size)
{
    static const char fn[] = "mlx_vector_array_append_data";
    mc_vec_array *v = mc_vec_checked(vec, fn);
    /* All items are checked before any is added: a failed call changes nothing. */
    if (!v || check_arrays(fn, data, size))
        return 1;
    return append_arrays(fn, v, data, size);
}

int mlx_vector_array_append_value(mlx_vector_array vec, const mlx_array val)
{
    static const char fn[] = "mlx_vector_array_append_value";
    mc_vec_array *v = mc_vec_checked(vec, fn);
    if (!v || check_arrays(fn, &val, 1))
        return 1;
    return append_arrays(fn, v, &val, 1);
}

size_t mlx_vector_array_size(mlx_vector_array vec)
{
    mc_vec_array *v = mc_vec_checked(vec, "mlx_vector_array_size");
    return v ? v->len : 0;
}

int mlx_vector_array_get(mlx_array *res, const mlx_vector_array vec, size_t idx)
{
    static const char fn[] = "mlx_vector_array_get";
    if (!res)
        return mc_error("[%s] The output array pointer is NULL.", fn);
    mc_vec_array *v = mc_vec_checked(vec, fn);
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    /* Retain before releasing: *res may already refer to this array. */
    mc_array *a = mc_array_retain(v->items[idx]);
    mc_array_release(mc_arr(*res));
    res->ctx = a;
    return 0;
}
