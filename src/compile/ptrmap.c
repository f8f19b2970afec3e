/* Owns mc_ptrmap (ptrmap.h): linear probing, grown at half full. */
#include "compile/ptrmap.h"

#include <stdint.h>

#include "runtime/alloc.h"

static size_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static size_t find_slot(const void **keys, size_t cap, const void *key)
{
    size_t h = ptr_hash(key) & (cap - 1);
    while (keys[h] && keys[h] != key)
        h = (h + 1) & (cap - 1);
    return h;
}

int *mc_ptrmap_get(const mc_ptrmap *m, const void *key)
{
    if (!m->cap)
        return NULL;
    size_t h = find_slot(m->keys, m->cap, key);
    return m->keys[h] ? &m->vals[h] : NULL;
}

static int grow(mc_ptrmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const void **nk = mc_xcalloc(ncap, sizeof *nk);
    int *nv = mc_xmalloc(ncap * sizeof *nv);
    if (!nk || !nv) {
        mc_xfree(nk);
        mc_xfree(nv);
        return 1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t h = find_slot(nk, ncap, m->keys[i]);
        nk[h] = m->keys[i];
        nv[h] = m->vals[i];
    }
    mc_xfree(m->keys);
    mc_xfree(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    return 0;
}

int mc_ptrmap_put(mc_ptrmap *m, const void *key, int val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m))
        return 1;
    size_t h = find_slot(m->keys, m->cap, key);
    if (!m->keys[h]) {
        m->keys[h] = key;
        m->count++;
    }
    m->vals[h] = val;
    return 0;
}

void mc_ptrmap_free(mc_ptrmap *m)
{
    mc_xfree(m->keys);
    mc_xfree(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}
