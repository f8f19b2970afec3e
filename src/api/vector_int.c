/* Owns mlx_vector_int: a growable list of ints (shapes, axes). */
#include "api/vector_impl.h"

#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_int";

static mc_vec_int *checked(mlx_vector_int h, const char *fn)
{
    if (!h.ctx)
        mc_vec_empty_error(fn, type_name);
    return h.ctx;
}

static mc_vec_int *create(const char *fn, size_t cap)
{
    mc_vec_int *v = mc_xmalloc(sizeof *v);
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

static void destroy(mc_vec_int *v)
{
    if (!v)
        return;
    mc_xfree(v->items);
    mc_xfree(v);
}

static int append(const char *fn, mc_vec_int *v, const int *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu ints.", fn, size);
    if (mc_vec_reserve((void **)&v->items, &v->cap, v->len + size, sizeof *v->items, fn))
        return 1;
    if (size)
        memcpy(v->items + v->len, data, size * sizeof *data);
    v->len += size;
    return 0;
}

static mc_vec_int *from_data(const char *fn, const int *data, size_t size)
{
    if (size && !data) {
        mc_error("[%s] The data pointer is NULL for %zu ints.", fn, size);
        return NULL;
    }
    mc_vec_int *v = create(fn, size);
    if (v)
        append(fn, v, data, size); /* room reserved: cannot fail */
    return v;
}

/* *vec keeps its own object if it has one (so copies of the handle see the
 * new items); otherwise it takes v. */
static void store(mlx_vector_int *vec, mc_vec_int *v)
{
    mc_vec_int *d = vec->ctx;
    if (!d) {
        vec->ctx = v;
        return;
    }
    mc_vec_int old = *d;
    *d = *v;
    *v = old;
    destroy(v);
}

static int set_data(const char *fn, mlx_vector_int *vec, const int *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    /* Built aside: data may point into *vec itself. */
    mc_vec_int *v = from_data(fn, data, size);
    if (!v)
        return 1;
    store(vec, v);
    return 0;
}

mlx_vector_int mlx_vector_int_new(void)
{
    return (mlx_vector_int){create("mlx_vector_int_new", 0)};
}

int mlx_vector_int_free(mlx_vector_int vec)
{
    destroy(vec.ctx);
    return 0;
}

int mlx_vector_int_set(mlx_vector_int *vec, const mlx_vector_int src)
{
    static const char fn[] = "mlx_vector_int_set";
    mc_vec_int *s = checked(src, fn);
    if (!s)
        return 1;
    return set_data(fn, vec, s->items, s->len);
}

mlx_vector_int mlx_vector_int_new_data(int *data, size_t size)
{
    return (mlx_vector_int){from_data("mlx_vector_int_new_data", data, size)};
}

mlx_vector_int mlx_vector_int_new_value(int val)
{
    return (mlx_vector_int){from_data("mlx_vector_int_new_value", &val, 1)};
}

int mlx_vector_int_set_data(mlx_vector_int *vec, int *data, size_t size)
{
    return set_data("mlx_vector_int_set_data", vec, data, size);
}

int mlx_vector_int_set_value(mlx_vector_int *vec, int val)
{
    return set_data("mlx_vector_int_set_value", vec, &val, 1);
}

int mlx_vector_int_append_data(mlx_vector_int vec, int *data, size_t size)
{
    static const char fn[] = "mlx_vector_int_append_data";
    mc_vec_int *v = checked(vec, fn);
    return v ? append(fn, v, data, size) : 1;
}

int mlx_vector_int_append_value(mlx_vector_int vec, int val)
{
    static const char fn[] = "mlx_vector_int_append_value";
    mc_vec_int *v = checked(vec, fn);
    return v ? append(fn, v, &val, 1) : 1;
}

size_t mlx_vector_int_size(mlx_vector_int vec)
{
    mc_vec_int *v = checked(vec, "mlx_vector_int_size");
    return v ? v->len : 0;
}

int mlx_vector_int_get(int *res, const mlx_vector_int vec, size_t idx)
{
    static const char fn[] = "mlx_vector_int_get";
    if (!res)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_vec_int *v = checked(vec, fn);
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    *res = v->items[idx];
    return 0;
}
