/* Owns mlx_vector_string: a growable list of owned string copies. _get
 * lends out the stored text (mlx-c hands out the std::string's buffer). */
#include "api/vector_impl.h"

#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_string";

static mc_vec_string *checked(mlx_vector_string h, const char *fn)
{
    if (!h.ctx)
        mc_vec_empty_error(fn, type_name);
    return h.ctx;
}

static mc_vec_string *create(const char *fn, size_t cap)
{
    mc_vec_string *v = mc_xmalloc(sizeof *v);
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

static void destroy(mc_vec_string *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->len; i++)
        mc_xfree(v->items[i]);
    mc_xfree(v->items);
    mc_xfree(v);
}

static int check_strings(const char *fn, const char *const *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu strings.", fn, size);
    for (size_t i = 0; i < size; i++)
        if (!data[i])
            return mc_error("[%s] String %zu of %zu is NULL.", fn, i, size);
    return 0;
}

/* Appends copies of data[0..size) (checked non-NULL); on failure v is
 * unchanged. The copies are made before v is touched, so data may hold
 * v's own strings. */
static int append(const char *fn, mc_vec_string *v, const char *const *data, size_t size)
{
    if (mc_vec_reserve((void **)&v->items, &v->cap, v->len + size, sizeof *v->items, fn))
        return 1;
    size_t done = 0;
    for (; done < size; done++) {
        char *c = mc_xstrdup(data[done]);
        if (!c) {
            mc_error_oom(fn, strlen(data[done]) + 1);
            goto fail;
        }
        v->items[v->len + done] = c;
    }
    v->len += size;
    return 0;
fail:
    while (done--)
        mc_xfree(v->items[v->len + done]);
    return 1;
}

static mc_vec_string *from_data(const char *fn, const char *const *data, size_t size)
{
    if (check_strings(fn, data, size))
        return NULL;
    mc_vec_string *v = create(fn, size);
    if (v && append(fn, v, data, size)) {
        destroy(v);
        v = NULL;
    }
    return v;
}

/* *vec keeps its own object if it has one; otherwise it takes v. */
static void store(mlx_vector_string *vec, mc_vec_string *v)
{
    mc_vec_string *d = vec->ctx;
    if (!d) {
        vec->ctx = v;
        return;
    }
    mc_vec_string old = *d;
    *d = *v;
    *v = old;
    destroy(v);
}

static int set_data(const char *fn, mlx_vector_string *vec, const char *const *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    /* Built aside: data may be *vec's own strings. */
    mc_vec_string *v = from_data(fn, data, size);
    if (!v)
        return 1;
    store(vec, v);
    return 0;
}

mlx_vector_string mlx_vector_string_new(void)
{
    return (mlx_vector_string){create("mlx_vector_string_new", 0)};
}

int mlx_vector_string_free(mlx_vector_string vec)
{
    destroy(vec.ctx);
    return 0;
}

int mlx_vector_string_set(mlx_vector_string *vec, const mlx_vector_string src)
{
    static const char fn[] = "mlx_vector_string_set";
    mc_vec_string *s = checked(src, fn);
    if (!s)
        return 1;
    return set_data(fn, vec, (const char *const *)s->items, s->len);
}

mlx_vector_string mlx_vector_string_new_data(const char **data, size_t size)
{
    return (mlx_vector_string){from_data("mlx_vector_string_new_data", data, size)};
}

mlx_vector_string mlx_vector_string_new_value(const char *val)
{
    return (mlx_vector_string){from_data("mlx_vector_string_new_value", &val, 1)};
}

int mlx_vector_string_set_data(mlx_vector_string *vec, const char **data, size_t size)
{
    return set_data("mlx_vector_string_set_data", vec, data, size);
}

int mlx_vector_string_set_value(mlx_vector_string *vec, const char *val)
{
    return set_data("mlx_vector_string_set_value", vec, &val, 1);
}

int mlx_vector_string_append_data(mlx_vector_string vec, const char **data, size_t size)
{
    static const char fn[] = "mlx_vector_string_append_data";
    mc_vec_string *v = checked(vec, fn);
    if (!v || check_strings(fn, data, size))
        return 1;
    return append(fn, v, data, size);
}

int mlx_vector_string_append_value(mlx_vector_string vec, const char *val)
{
    static const char fn[] = "mlx_vector_string_append_value";
    mc_vec_string *v = checked(vec, fn);
    if (!v || check_strings(fn, &val, 1))
        return 1;
    return append(fn, v, &val, 1);
}

size_t mlx_vector_string_size(mlx_vector_string vec)
{
    mc_vec_string *v = checked(vec, "mlx_vector_string_size");
    return v ? v->len : 0;
}

int mlx_vector_string_get(char **res, const mlx_vector_string vec, size_t idx)
{
    static const char fn[] = "mlx_vector_string_get";
    if (!res)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_vec_string *v = checked(vec, fn);
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    *res = v->items[idx];
    return 0;
}
