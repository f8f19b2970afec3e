/* Owns mlx-c's map.h functions: each checks its handles and calls the
 * table behind them (handles/map.h). An iterator's ctx is a malloc'ed
 * position (the index of the next entry) and its map_ctx the map, so
 * inserting while iterating moves nothing the iterator relies on. */
#include "mlx/c/map.h"

#include "handles/map.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const char arr_type[] = "mlx_map_string_to_array";
static const char str_type[] = "mlx_map_string_to_string";

static mc_map *new_map(const char *fn, mc_map_kind kind) { return mc_map_new(fn, kind); }

static int set_map(const char *fn, void **dst, void *src_ctx, const char *type)
{
    mc_map *src = mc_map_ctx_checked(src_ctx, fn, type);
    if (!src)
        return 1;
    if (!dst)
        return mc_error("[%s] The output map pointer is NULL.", fn);
    /* Copied aside first: src may be *dst itself. */
    mc_map *fresh = mc_map_copy(fn, src);
    if (!fresh)
        return 1;
    *dst = mc_map_replace(*dst, fresh);
    return 0;
}

typedef struct iter {
    size_t pos;
} iter;

static void *new_iter(const char *fn, void *map_ctx, const char *type)
{
    if (!mc_map_ctx_checked(map_ctx, fn, type))
        return NULL;
    iter *it = mc_xcalloc(1, sizeof *it);
    if (!it)
        mc_error_oom(fn, sizeof *it);
    return it;
}

/* The map and position of an iterator, or NULL with an error. */
static mc_map *iter_map(void *ctx, void *map_ctx, const char *fn, const char *type, iter **it)
{
    if (!ctx || !map_ctx) {
        mc_error("[%s] Expected a non-empty %s_iterator (its ctx is NULL).", fn, type);
        return NULL;
    }
    *it = ctx;
    return map_ctx;
}

/* ---- string to array ---- */

mlx_map_string_to_array mlx_map_string_to_array_new(void)
{
    return (mlx_map_string_to_array){new_map("mlx_map_string_to_array_new", MC_MAP_ARRAY)};
}

int mlx_map_string_to_array_set(mlx_map_string_to_array *map, const mlx_map_string_to_array src)
{
    return set_map("mlx_map_string_to_array_set", map ? &map->ctx : NULL, src.ctx, arr_type);
}

int mlx_map_string_to_array_free(mlx_map_string_to_array map)
{
    mc_map_free(map.ctx);
    return 0;
}

int mlx_map_string_to_array_insert(mlx_map_string_to_array map, const char *key, const mlx_array value)
{
    static const char fn[] = "mlx_map_string_to_array_insert";
    mc_map *m = mc_map_ctx_checked(map.ctx, fn, arr_type);
    mc_array *a = m ? mc_arr_checked(value, fn) : NULL;
    return a ? mc_map_put_array(fn, m, key, a) : 1;
}

int mlx_map_string_to_array_get(mlx_array *value, const mlx_map_string_to_array map, const char *key)
{
    static const char fn[] = "mlx_map_string_to_array_get";
    mc_map *m = mc_map_ctx_checked(map.ctx, fn, arr_type);
    if (!m)
        return 1;
    if (!value || !key)
        return mc_error("[%s] The %s pointer is NULL.", fn, value ? "key" : "value");
    size_t i;
    if (!mc_map_find(m, key, &i))
        return 2;
    mc_array_release(mc_arr(*value));
    value->ctx = mc_array_retain(m->arrs[i]);
    return 0;
}

mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(mlx_map_string_to_array map)
{
    void *it = new_iter("mlx_map_string_to_array_iterator_new", map.ctx, arr_type);
    return (mlx_map_string_to_array_iterator){it, it ? map.ctx : NULL};
}

int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it)
{
    mc_xfree(it.ctx);
    return 0;
}

int mlx_map_string_to_array_iterator_next(const char **key, mlx_array *value, mlx_map_string_to_array_iterator it)
{
    static const char fn[] = "mlx_map_string_to_array_iterator_next";
    iter *pos;
    mc_map *m = iter_map(it.ctx, it.map_ctx, fn, arr_type, &pos);
    if (!m)
        return 1;
    if (!key || !value)
        return mc_error("[%s] The %s pointer is NULL.", fn, key ? "value" : "key");
    if (pos->pos >= m->len)
        return 2;
    *key = m->keys[pos->pos];
    mc_array_release(mc_arr(*value));
    value->ctx = mc_array_retain(m->arrs[pos->pos]);
    pos->pos++;
    return 0;
}

/* ---- string to string ---- */

mlx_map_string_to_string mlx_map_string_to_string_new(void)
{
    return (mlx_map_string_to_string){new_map("mlx_map_string_to_string_new", MC_MAP_STRING)};
}

int mlx_map_string_to_string_set(mlx_map_string_to_string *map, const mlx_map_string_to_string src)
{
    return set_map("mlx_map_string_to_string_set", map ? &map->ctx : NULL, src.ctx, str_type);
}

int mlx_map_string_to_string_free(mlx_map_string_to_string map)
{
    mc_map_free(map.ctx);
    return 0;
}

int mlx_map_string_to_string_insert(mlx_map_string_to_string map, const char *key, const char *value)
{
    static const char fn[] = "mlx_map_string_to_string_insert";
    mc_map *m = mc_map_ctx_checked(map.ctx, fn, str_type);
    return m ? mc_map_put_string(fn, m, key, value) : 1;
}

int mlx_map_string_to_string_get(const char **value, const mlx_map_string_to_string map, const char *key)
{
    static const char fn[] = "mlx_map_string_to_string_get";
    mc_map *m = mc_map_ctx_checked(map.ctx, fn, str_type);
    if (!m)
        return 1;
    if (!value || !key)
        return mc_error("[%s] The %s pointer is NULL.", fn, value ? "key" : "value");
    size_t i;
    if (!mc_map_find(m, key, &i))
        return 2;
    *value = m->strs[i];
    return 0;
}

mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(mlx_map_string_to_string map)
{
    void *it = new_iter("mlx_map_string_to_string_iterator_new", map.ctx, str_type);
    return (mlx_map_string_to_string_iterator){it, it ? map.ctx : NULL};
}

int mlx_map_string_to_string_iterator_free(mlx_map_string_to_string_iterator it)
{
    mc_xfree(it.ctx);
    return 0;
}

int mlx_map_string_to_string_iterator_next(const char **key, const char **value,
                                           mlx_map_string_to_string_iterator it)
{
    static const char fn[] = "mlx_map_string_to_string_iterator_next";
    iter *pos;
    mc_map *m = iter_map(it.ctx, it.map_ctx, fn, str_type, &pos);
    if (!m)
        return 1;
    if (!key || !value)
        return mc_error("[%s] The %s pointer is NULL.", fn, key ? "value" : "key");
    if (pos->pos >= m->len)
        return 2;
    *key = m->keys[pos->pos];
    *value = m->strs[pos->pos];
    pos->pos++;
    return 0;
}
