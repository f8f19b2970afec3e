/* Owns mc_ptrmap (ptrmap.h): linear probing, grown at half full, removal
 * by shifting the rest of a probe run back (no tombstones, so a map that
 * sees many removals does not fill up with them). */
#include "runtime/ptrmap.h"

#include "runtime/alloc.h"
#include "runtime/hash.h"

enum { MIN_CAP = 64 };

static size_t home_of(const mc_ptrmap *m, const void *key, size_t cap)
{
    uint64_t h = m->hash ? m->hash(key, m->ctx) : mc_hash_ptr(key);
    return (size_t)h & (cap - 1);
}

/* The slot holding key, or the empty slot where it would go. Maps keyed
 * by address (the graph walks: one lookup per node) take a loop with no
 * calls in it, over the keys alone. */
static inline size_t find_slot(const mc_ptrmap *m, const void **keys, size_t cap, const void *key)
{
    size_t mask = cap - 1;
    if (!m->equal) {
        size_t h = mc_hash_ptr(key) & mask;
        while (keys[h] && keys[h] != key)
            h = (h + 1) & mask;
        return h;
    }
    size_t h = home_of(m, key, cap);
    while (keys[h] && keys[h] != key && !m->equal(keys[h], key, m->ctx))
        h = (h + 1) & mask;
    return h;
}

void mc_ptrmap_init_by_content(mc_ptrmap *m, mc_ptrmap_hash_fn hash, mc_ptrmap_equal_fn equal, const void *ctx)
{
    *m = (mc_ptrmap){.hash = hash, .equal = equal, .ctx = ctx};
}

void mc_ptrmap_init_set(mc_ptrmap *m) { *m = (mc_ptrmap){.keys_only = true}; }

static int rehash(mc_ptrmap *m, size_t ncap)
{
    const void **nk = mc_xcalloc(ncap, sizeof *nk);
    int *nv = m->keys_only ? NULL : mc_xmalloc(ncap * sizeof *nv);
    if (!nk || (!nv && !m->keys_only)) {
        mc_xfree(nk);
        mc_xfree(nv);
        return 1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t h = find_slot(m, nk, ncap, m->keys[i]);
        nk[h] = m->keys[i];
        if (nv)
            nv[h] = m->vals[i];
    }
    mc_xfree(m->keys);
    mc_xfree(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    return 0;
}

int mc_ptrmap_reserve(mc_ptrmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : MIN_CAP;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    return cap == m->cap ? 0 : rehash(m, cap);
}

int mc_ptrmap_add(mc_ptrmap *m, const void *key)
{
    if ((m->count + 1) * 2 > m->cap && mc_ptrmap_reserve(m, m->count + 1))
        return -1;
    size_t h = find_slot(m, m->keys, m->cap, key);
    if (m->keys[h])
        return 0;
    m->keys[h] = key;
    if (m->vals)
        m->vals[h] = 0;
    m->count++;
    return 1;
}

bool mc_ptrmap_contains(const mc_ptrmap *m, const void *key)
{
    return m->cap && m->keys[find_slot(m, m->keys, m->cap, key)];
}

int *mc_ptrmap_get(const mc_ptrmap *m, const void *key)
{
    if (!m->cap)
        return NULL;
    size_t h = find_slot(m, m->keys, m->cap, key);
    return m->keys[h] ? &m->vals[h] : NULL;
}

int *mc_ptrmap_get_or_put(mc_ptrmap *m, const void *key, int val, bool *added)
{
    if ((m->count + 1) * 2 > m->cap && mc_ptrmap_reserve(m, m->count + 1))
        return NULL;
    size_t h = find_slot(m, m->keys, m->cap, key);
    *added = !m->keys[h];
    if (*added) {
        m->keys[h] = key;
        m->vals[h] = val;
        m->count++;
    }
    return &m->vals[h];
}

int mc_ptrmap_put(mc_ptrmap *m, const void *key, int val)
{
    bool added;
    int *v = mc_ptrmap_get_or_put(m, key, val, &added);
    if (!v)
        return 1;
    *v = val;
    return 0;
}

bool mc_ptrmap_remove(mc_ptrmap *m, const void *key)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1;
    size_t hole = find_slot(m, m->keys, m->cap, key);
    if (!m->keys[hole])
        return false;
    /* Move back each later key of the run whose home is not strictly
     * between the hole and its own slot (cyclically), so that every key
     * stays reachable from its home without crossing an empty slot. */
    for (size_t j = (hole + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = home_of(m, m->keys[j], m->cap);
        bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays)
            continue;
        m->keys[hole] = m->keys[j];
        if (m->vals)
            m->vals[hole] = m->vals[j];
        hole = j;
    }
    m->keys[hole] = NULL;
    m->count--;
    return true;
}

void mc_ptrmap_free(mc_ptrmap *m)
{
    mc_xfree(m->keys);
    mc_xfree(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}
