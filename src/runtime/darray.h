/* A growable array of fixed-size elements: the stacks and orders of graph
 * walks, the lists a trace is recorded into, a namer's names. Owned by one
 * user at a time (no locking). Elements are reached as the caller's type
 * through `items` (a void pointer, converted, never aliased as void *). */
#ifndef MC_RUNTIME_DARRAY_H
#define MC_RUNTIME_DARRAY_H

#include <stddef.h>

typedef struct mc_darray {
    void *items;
    size_t len, cap; /* in elements */
    size_t elem;     /* bytes per element */
} mc_darray;

/* An empty array of elements of `type`: mc_darray a = MC_DARRAY_INIT(int); */
#define MC_DARRAY_INIT(type) ((mc_darray){NULL, 0, 0, sizeof(type)})

/* Makes room for n elements in all. Returns 0, or 1 on allocation failure
 * (nothing reported; the array is unchanged). */
int mc_darray_reserve(mc_darray *a, size_t n);

/* Element i (i < len). */
static inline void *mc_darray_at(const mc_darray *a, size_t i) { return (char *)a->items + i * a->elem; }

/* mc_darray_push when the array is full (darray.c). */
void *mc_darray_push_grow(mc_darray *a);

/* Appends one element and returns it, uninitialised, or NULL on allocation
 * failure (nothing reported; the array is unchanged). The pointer, like
 * every element pointer, is valid until the next push or reserve. Inline:
 * graph walks push once per node. */
static inline void *mc_darray_push(mc_darray *a)
{
    return a->len < a->cap ? mc_darray_at(a, a->len++) : mc_darray_push_grow(a);
}

/* The last element, or NULL if empty. */
static inline void *mc_darray_last(const mc_darray *a) { return a->len ? mc_darray_at(a, a->len - 1) : NULL; }

/* Frees the storage; the array is empty and keeps its element size. */
void mc_darray_free(mc_darray *a);

#endif
