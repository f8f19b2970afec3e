/* Small bookkeeping blocks (array descriptors with their node, buffer
 * headers) from a per-thread cache of freed blocks, so that building,
 * evaluating and dropping a small lazy op takes no lock and no trip
 * through malloc. See obj_cache.c for the design. */
#ifndef MC_RUNTIME_OBJ_CACHE_H
#define MC_RUNTIME_OBJ_CACHE_H

#include <stddef.h>

enum {
    MC_OBJ_MAX = 1024,              /* larger requests go straight to malloc */
    MC_OBJ_CACHE_BYTES = 64 * 1024, /* what one thread keeps at most */
};

/* At least n bytes, aligned as malloc aligns, uninitialised; or NULL
 * (nothing reported) when memory is short or the fault-injection counter
 * says this allocation fails. Release with mc_obj_free(p, n), same n, from
 * any thread. */
void *mc_obj_alloc(size_t n);
void mc_obj_free(void *p, size_t n);

/* Bytes of freed blocks the calling thread keeps for reuse (tests). */
size_t mc_obj_cached(void);

/* Whether blocks are cached at all: not under AddressSanitizer or
 * Valgrind, whose use-after-free checks need every block really freed. */
int mc_obj_cache_enabled(void);

#endif
