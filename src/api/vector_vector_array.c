/* Owns mlx_vector_vector_array: a list of array lists. Each stored list is
 * a copy of the one given (new references to the same arrays), so later
 * changes to either side do not show through, as with mlx-c's
 * std::vector<std::vector<array>>. */
#include "api/vector_impl.h"

#include "runtime/alloc.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_vector_array";

static mc_vec_vec_array *checked(mlx_vector_vector_array h, const char *fn)
{
    if (!h.ctx)
        mc_vec_empty_error(fn, type_name);
    return h.ctx;
}

static mc_vec_vec_array *create(const char *fn, size_t cap)
{
    mc_vec_vec_array *v = mc_xmalloc(sizeof *v);
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

static void clear(mc_vec_vec_array *v)
{
    for (size_t i = 0; i < v->len; i++)
        mc_vec_array_destroy(v->items[i]);
    v->len = 0;
}

static void destroy(mc_vec_vec_array *v)
{
    if (!v)
        return;
    clear(v);
    mc_xfree(v->items);
    mc_xfree(v);
}

static int check_lists(const char *fn, const mlx_vector_array *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu vectors.", fn, size);
    for (size_t i = 0; i < size; i++)
        if (!data[i].ctx)
            return mc_error("[%s] Vector %zu of %zu is empty (its ctx is NULL).", fn, i, size);
    return 0;
}

/* Item i of a list of objects, or of a list of handles. */
typedef mc_vec_array *(*item_at)(const void *list, size_t i);
static mc_vec_array *object_at(const void *list, size_t i) { return ((mc_vec_array *const *)list)[i]; }
static mc_vec_array *handle_at(const void *list, size_t i) { return ((const mlx_vector_array *)list)[i].ctx; }

/* Appends copies of the size lists of `list` to v; on failure v is
 * unchanged. */
static int append_copies(const char *fn, mc_vec_vec_array *v, const void *list, item_at at, size_t size)
{
    if (mc_vec_reserve((void **)&v->items, &v->cap, v->len + size, sizeof *v->items, fn))
        return 1;
    size_t done = 0;
    for (; done < size; done++) {
        mc_vec_array *c = mc_vec_array_copy(fn, at(list, done));
        if (!c)
            goto fail;
        v->items[v->len + done] = c;
    }
    v->len += size;
    return 0;
fail:
    while (done--)
        mc_vec_array_destroy(v->items[v->len + done]);
    return 1;
}

/* Puts the new object v into *vec: *vec keeps its own object if it has
 * one (its old lists are dropped), else takes v. */
static void store(mlx_vector_vector_array *vec, mc_vec_vec_array *v)
{
    mc_vec_vec_array *d = vec->ctx;
    if (!d) {
        vec->ctx = v;
        return;
    }
    mc_vec_vec_array old = *d;
    *d = *v;
    *v = old;
    destroy(v);
}

mlx_vector_vector_array mlx_vector_vector_array_new(void)
{
    return (mlx_vector_vector_array){create("mlx_vector_vector_array_new", 0)};
}

int mlx_vector_vector_array_free(mlx_vector_vector_array vec)
{
    destroy(vec.ctx);
    return 0;
}

int mlx_vector_vector_array_set(mlx_vector_vector_array *vec, const mlx_vector_vector_array src)
{
    static const char fn[] = "mlx_vector_vector_array_set";
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec_vec_array *s = checked(src, fn);
    if (!s)
        return 1;
    /* Copy aside first: src may be *vec itself. */
    mc_vec_vec_array *v = create(fn, s->len);
    if (!v)
        return 1;
    if (append_copies(fn, v, s->items, object_at, s->len)) {
        destroy(v);
        return 1;
    }
    store(vec, v);
    return 0;
}

static mc_vec_vec_array *from_handles(const char *fn, const mlx_vector_array *data, size_t size)
{
    if (check_lists(fn, data, size))
        return NULL;
    mc_vec_vec_array *v = create(fn, size);
    if (!v)
        return NULL;
    if (append_copies(fn, v, data, handle_at, size)) {
        destroy(v);
        return NULL;
    }
    return v;
}

mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array *data, size_t size)
{
    return (mlx_vector_vector_array){from_handles("mlx_vector_vector_array_new_data", data, size)};
}

mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val)
{
    return (mlx_vector_vector_array){from_handles("mlx_vector_vector_array_new_value", &val, 1)};
}

static int set_handles(const char *fn, mlx_vector_vector_array *vec, const mlx_vector_array *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec_vec_array *v = from_handles(fn, data, size);
    if (!v)
        return 1;
    store(vec, v);
    return 0;
}

int mlx_vector_vector_array_set_data(mlx_vector_vector_array *vec, const mlx_vector_array *data, size_t size)
{
    return set_handles("mlx_vector_vector_array_set_data", vec, data, size);
}

int mlx_vector_vector_array_set_value(mlx_vector_vector_array *vec, const mlx_vector_array val)
{
    return set_handles("mlx_vector_vector_array_set_value", vec, &val, 1);
}

int mlx_vector_vector_array_append_data(mlx_vector_vector_array vec, const mlx_vector_array *data, size_t size)
{
    static const char fn[] = "mlx_vector_vector_array_append_data";
    mc_vec_vec_array *v = checked(vec, fn);
    if (!v || check_lists(fn, data, size))
        return 1;
    return append_copies(fn, v, data, handle_at, size);
}

int mlx_vector_vector_array_append_value(mlx_vector_vector_array vec, const mlx_vector_array val)
{
    static const char fn[] = "mlx_vector_vector_array_append_value";
    mc_vec_vec_array *v = checked(vec, fn);
    if (!v || check_lists(fn, &val, 1))
        return 1;
    return append_copies(fn, v, &val, handle_at, 1);
}

size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec)
{
    mc_vec_vec_array *v = checked(vec, "mlx_vector_vector_array_size");
    return v ? v->len : 0;
}

int mlx_vector_vector_array_get(mlx_vector_array *res, const mlx_vector_vector_array vec, size_t idx)
{
    static const char fn[] = "mlx_vector_vector_array_get";
    if (!res)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec_vec_array *v = checked(vec, fn);
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    mc_vec_array *item = v->items[idx];
    return mc_vec_assign(fn, res, item->items, item->len);
}
