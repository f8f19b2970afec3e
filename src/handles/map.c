/* Owns mc_map (map.h): the string-keyed, insertion-ordered table behind
 * mlx-c's two map handles. */
#include "handles/map.h"

#include <stdint.h>
#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/hash.h"

static size_t key_hash(const char *key) { return (size_t)mc_hash_bytes(0x6d61705f6b657973ull, key, strlen(key)); }

mc_map *mc_map_new(const char *fn, mc_map_kind kind)
{
    mc_map *m = mc_xcalloc(1, sizeof *m);
    if (!m) {
        mc_error_oom(fn, sizeof *m);
        return NULL;
    }
    m->kind = kind;
    return m;
}

void mc_map_free(mc_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->len; i++) {
        mc_xfree(m->keys[i]);
        if (m->kind == MC_MAP_ARRAY)
            mc_array_release(m->arrs[i]);
        else
            mc_xfree(m->strs[i]);
    }
    mc_xfree(m->keys);
    mc_xfree(m->arrs);
    mc_xfree(m->strs);
    mc_xfree(m->slots);
    mc_xfree(m);
}

bool mc_map_find(const mc_map *m, const char *key, size_t *index)
{
    if (!m->nslots)
        return false;
    size_t mask = m->nslots - 1;
    for (size_t s = key_hash(key) & mask;; s = (s + 1) & mask) {
        size_t e = m->slots[s];
        if (!e)
            return false;
        if (strcmp(m->keys[e - 1], key) == 0) {
            *index = e - 1;
            return true;
        }
    }
}

static void index_entry(size_t *slots, size_t nslots, const char *key, size_t entry)
{
    size_t mask = nslots - 1;
    size_t s = key_hash(key) & mask;
    while (slots[s])
        s = (s + 1) & mask;
    slots[s] = entry + 1;
}

/* Room for one more entry: the entry arrays and an index kept at most half
 * full. On failure nothing changes that a reader could see (grown arrays
 * are only bigger). */
static int grow(const char *fn, mc_map *m)
{
    if (m->len == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 8;
        if (ncap > SIZE_MAX / 2 / sizeof(char *))
            return mc_error("[%s] Cannot hold %zu entries: the size overflows.", fn, ncap);
        char **k = mc_xrealloc(m->keys, ncap * sizeof *k);
        if (!k)
            return mc_error_oom(fn, ncap * sizeof *k);
        m->keys = k;
        if (m->kind == MC_MAP_ARRAY) {
            mc_array **a = mc_xrealloc(m->arrs, ncap * sizeof *a);
            if (!a)
                return mc_error_oom(fn, ncap * sizeof *a);
            m->arrs = a;
        } else {
            char **s = mc_xrealloc(m->strs, ncap * sizeof *s);
            if (!s)
                return mc_error_oom(fn, ncap * sizeof *s);
            m->strs = s;
        }
        m->cap = ncap;
    }
    if (2 * (m->len + 1) > m->nslots) {
        size_t n = m->nslots ? m->nslots * 2 : 16;
        size_t *slots = mc_xcalloc(n, sizeof *slots);
        if (!slots)
            return mc_error_oom(fn, n * sizeof *slots);
        for (size_t i = 0; i < m->len; i++)
            index_entry(slots, n, m->keys[i], i);
        mc_xfree(m->slots);
        m->slots = slots;
        m->nslots = n;
    }
    return 0;
}

/* The entry of key: found, or appended with a copy of key and no value
 * yet (*fresh set). Returns 0 or 1 with an error. */
static int entry_of(const char *fn, mc_map *m, const char *key, size_t *index, bool *fresh)
{
    if (!key)
        return mc_error("[%s] The key is NULL.", fn);
    *fresh = !mc_map_find(m, key, index);
    if (!*fresh)
        return 0;
    if (grow(fn, m))
        return 1;
    char *k = mc_xstrdup(key);
    if (!k)
        return mc_error_oom(fn, strlen(key) + 1);
    *index = m->len;
    m->keys[*index] = k;
    return 0;
}

/* Publishes the entry made by entry_of once its value is set. */
static void commit(mc_map *m, size_t index)
{
    index_entry(m->slots, m->nslots, m->keys[index], index);
    m->len = index + 1;
}

int mc_map_put_array(const char *fn, mc_map *m, const char *key, mc_array *a)
{
    size_t i;
    bool fresh = false;
    if (entry_of(fn, m, key, &i, &fresh))
        return 1;
    mc_array_retain(a);
    if (fresh) {
        m->arrs[i] = a;
        commit(m, i);
    } else {
        mc_array_release(m->arrs[i]);
        m->arrs[i] = a;
    }
    return 0;
}

int mc_map_put_string(const char *fn, mc_map *m, const char *key, const char *value)
{
    if (!value)
        return mc_error("[%s] The value is NULL.", fn);
    size_t i;
    bool fresh = false;
    if (entry_of(fn, m, key, &i, &fresh))
        return 1;
    char *v = mc_xstrdup(value);
    if (!v) {
        if (fresh)
            mc_xfree(m->keys[i]);
        return mc_error_oom(fn, strlen(value) + 1);
    }
    if (fresh) {
        m->strs[i] = v;
        commit(m, i);
    } else {
        mc_xfree(m->strs[i]);
        m->strs[i] = v;
    }
    return 0;
}

mc_map *mc_map_copy(const char *fn, const mc_map *src)
{
    mc_map *m = mc_map_new(fn, src->kind);
    for (size_t i = 0; m && i < src->len; i++) {
        int rc = src->kind == MC_MAP_ARRAY ? mc_map_put_array(fn, m, src->keys[i], src->arrs[i])
                                           : mc_map_put_string(fn, m, src->keys[i], src->strs[i]);
        if (rc) {
            mc_map_free(m);
            m = NULL;
        }
    }
    return m;
}

mc_map *mc_map_replace(mc_map *dst, mc_map *src)
{
    if (!dst)
        return src;
    if (dst == src)
        return dst;
    mc_map old = *dst;
    *dst = *src;
    *src = old;
    mc_map_free(src);
    return dst;
}

mc_map *mc_map_ctx_checked(void *ctx, const char *fn, const char *type_name)
{
    if (!ctx)
        mc_error("[%s] Expected a non-empty %s (the handle's ctx is NULL).", fn, type_name);
    return ctx;
}
