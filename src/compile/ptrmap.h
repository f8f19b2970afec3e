/* A pointer-keyed open-addressing hash map with int values: which node of
 * a graph walk has which slot, or which name. Owned by one walk (no
 * locking). Keys are never NULL. */
#ifndef MC_COMPILE_PTRMAP_H
#define MC_COMPILE_PTRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mc_ptrmap {
    const void **keys;
    int *vals;
    size_t cap; /* 0 or a power of two */
    size_t count;
} mc_ptrmap;

/* The value stored for key, or NULL if absent. The pointer is valid until
 * the next insertion. */
int *mc_ptrmap_get(const mc_ptrmap *m, const void *key);

/* Stores key -> val (replacing any value). Returns 0, or 1 on allocation
 * failure (nothing reported; the map is unchanged). */
int mc_ptrmap_put(mc_ptrmap *m, const void *key, int val);

void mc_ptrmap_free(mc_ptrmap *m);

#endif
