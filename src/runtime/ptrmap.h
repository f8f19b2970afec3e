/* A pointer-keyed open-addressing hash map with int values: which node of
 * a graph walk has which index, which array has which name, which steps of
 * a trace are equal. Owned by one user at a time (no locking); holds no
 * reference to what its keys point at, so a key's owner removes it (or
 * drops the map) before the object dies and its address is reused. Keys
 * are never NULL.
 *
 * Keys compare by address unless the map is given a hash and an equality
 * at init (mc_ptrmap_init_by_content): then two keys that are equal by
 * content are one key, and the first one stored stands for both.
 *
 * A set (mc_ptrmap_init_set) stores keys only: the walks that need no
 * value per node (eval's, which meets every node of a graph) touch half
 * the memory. */
#ifndef MC_RUNTIME_PTRMAP_H
#define MC_RUNTIME_PTRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*mc_ptrmap_hash_fn)(const void *key, const void *ctx);
typedef bool (*mc_ptrmap_equal_fn)(const void *a, const void *b, const void *ctx);

/* A zero-initialised mc_ptrmap is an empty map keyed by address. */
typedef struct mc_ptrmap {
    const void **keys; /* NULL: empty; probed alone, so a lookup reads only keys */
    int *vals;         /* NULL in a set */
    size_t cap;        /* 0 or a power of two */
    size_t count;
    mc_ptrmap_hash_fn hash;   /* NULL: by address */
    mc_ptrmap_equal_fn equal; /* NULL: by address */
    const void *ctx;          /* passed to hash and equal */
    bool keys_only;           /* a set */
} mc_ptrmap;

/* An empty set of addresses: mc_ptrmap_add, _contains, _remove and _free
 * only (the value functions are for maps). */
void mc_ptrmap_init_set(mc_ptrmap *m);

/* An empty map whose keys are equal when equal(a, b, ctx) says so; hash
 * must agree with it. The keys must stay valid and unchanged in content
 * while they are in the map. */
void mc_ptrmap_init_by_content(mc_ptrmap *m, mc_ptrmap_hash_fn hash, mc_ptrmap_equal_fn equal, const void *ctx);

/* Makes room for n entries in all, so that the next puts up to that count
 * cannot fail. Returns 0, or 1 on allocation failure (nothing reported;
 * the map is unchanged). */
int mc_ptrmap_reserve(mc_ptrmap *m, size_t n);

/* Adds key to a set or a map (with value 0). Returns 1 if it was added, 0
 * if it was present, or -1 on allocation failure (nothing reported; the
 * set is unchanged). */
int mc_ptrmap_add(mc_ptrmap *m, const void *key);

bool mc_ptrmap_contains(const mc_ptrmap *m, const void *key);

/* The value stored for key, or NULL if absent. The pointer is valid until
 * the next insertion or removal. */
int *mc_ptrmap_get(const mc_ptrmap *m, const void *key);

/* Stores key -> val (replacing any value). Returns 0, or 1 on allocation
 * failure (nothing reported; the map is unchanged). */
int mc_ptrmap_put(mc_ptrmap *m, const void *key, int val);

/* The value of key, stored as val first if key is absent; *added says
 * which. NULL on allocation failure (nothing reported; the map is
 * unchanged). The pointer is valid until the next insertion or removal. */
int *mc_ptrmap_get_or_put(mc_ptrmap *m, const void *key, int val, bool *added);

/* Removes key; returns whether it was present. Never allocates. */
bool mc_ptrmap_remove(mc_ptrmap *m, const void *key);

/* Frees the storage; the map is empty (and keeps its hash and equality). */
void mc_ptrmap_free(mc_ptrmap *m);

#endif
