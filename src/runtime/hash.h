/* The library's one hash mixer, for tables keyed by address (ptrmap.c, the
 * compile caches' buckets) and by content (compile/simplify.c). Not for
 * anything adversarial: keys come from the library itself. */
#ifndef MC_RUNTIME_HASH_H
#define MC_RUNTIME_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Spreads every input bit over the result (a murmur3-style finaliser), so
 * that the low bits a power-of-two table uses depend on all of x: addresses
 * share their low bits (alignment) and differ in the middle ones. */
static inline uint64_t mc_hash_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static inline size_t mc_hash_ptr(const void *p) { return (size_t)mc_hash_mix((uint64_t)(uintptr_t)p); }

/* Folds x into the running hash h; the order of the values matters. */
static inline uint64_t mc_hash_combine(uint64_t h, uint64_t x)
{
    return mc_hash_mix(h ^ (x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
}

/* Folds n bytes into h, one combine per 8-byte word (a shorter tail is
 * zero-padded), then the length. */
static inline uint64_t mc_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = mc_hash_combine(h, w);
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, b + i, n - i);
        h = mc_hash_combine(h, w);
    }
    return mc_hash_combine(h, (uint64_t)n);
}

#endif
