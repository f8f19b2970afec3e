/* The objects behind the mlx_vector_* handles (a handle's ctx points at
 * one), and small helpers with which eval, compile and closures read and
 * build a vector of arrays without going through the public API.
 *
 * Ownership: a vector of arrays holds one reference per item; a vector of
 * vectors owns each inner vector (a separate copy, as mlx-c keeps a
 * std::vector of std::vectors); a vector of strings owns a copy of each. */
#ifndef MC_API_VECTOR_IMPL_H
#define MC_API_VECTOR_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "mlx/c/vector.h"

typedef struct mc_vec_array {
    size_t len, cap;
    mc_array **items; /* len owned references */
} mc_vec_array;

typedef struct mc_vec_vec_array {
    size_t len, cap;
    mc_vec_array **items; /* len owned vectors */
} mc_vec_vec_array;

typedef struct mc_vec_int {
    size_t len, cap;
    int *items;
} mc_vec_int;

typedef struct mc_vec_string {
    size_t len, cap;
    char **items; /* len owned, NUL-terminated copies */
} mc_vec_string;

/* Grows *items (elements of elsize bytes) so it can hold `need` of them.
 * Capacity doubles so appending n items one by one costs O(n). Returns 0,
 * or 1 with an out-of-memory error reported against fn; *items is unchanged
 * on failure. */
int mc_vec_reserve(void **items, size_t *cap, size_t need, size_t elsize, const char *fn);

/* Reports "[fn] Expected a non-empty <type> ..." and returns 1: the error
 * for a handle whose ctx is NULL where a vector is needed. */
int mc_vec_empty_error(const char *fn, const char *type);

/* ---- vectors of arrays, by handle ---- */

/* Number of items; 0 for an empty (NULL ctx) handle, without an error. */
static inline size_t mc_vec_len(mlx_vector_array v)
{
    return v.ctx ? ((const mc_vec_array *)v.ctx)->len : 0;
}

/* Item i (i < mc_vec_len(v)), borrowed: the vector keeps its reference. */
static inline mc_array *mc_vec_at(mlx_vector_array v, size_t i)
{
    return ((const mc_vec_array *)v.ctx)->items[i];
}

/* The object of a handle, or NULL with "[fn] ..." reported if empty. */
mc_vec_array *mc_vec_checked(mlx_vector_array v, const char *fn);

/* A new vector handle holding a reference to each of arrs[0..n) (which
 * must not be NULL), or an empty handle with an error reported. */
mlx_vector_array mc_vec_from(const char *fn, mc_array *const *arrs, size_t n);

/* Appends a new reference to a (retained here). Returns 0 or reports. */
int mc_vec_push(const char *fn, mlx_vector_array v, mc_array *a);
/* Appends a, taking over the caller's reference. On failure the reference
 * is released, so the caller never has to clean up after this call. */
int mc_vec_push_take(const char *fn, mlx_vector_array v, mc_array *a);

/* Makes *dst hold references to arrs[0..n) (dst may be empty: it is then
 * created). The old items are released after the new ones are taken, so
 * arrs may point into *dst itself. On failure *dst is unchanged. */
int mc_vec_assign(const char *fn, mlx_vector_array *dst, mc_array *const *arrs, size_t n);

/* Moves src's items into *dst and frees src's object. If *dst already has
 * an object, it keeps that object (so copies of the handle see the new
 * items) and its old items are released; otherwise it takes src's. Never
 * fails. src may be empty (then *dst becomes an empty list if it had an
 * object, or stays empty). */
void mc_vec_move(mlx_vector_array *dst, mlx_vector_array src);

/* ---- the objects themselves (used by the vector-of-vectors code) ---- */

/* A new object with room for cap items, or NULL with an error reported. */
mc_vec_array *mc_vec_array_create(const char *fn, size_t cap);
/* A new object holding new references to src's items, or NULL. */
mc_vec_array *mc_vec_array_copy(const char *fn, const mc_vec_array *src);
/* Releases every item and frees the object. NULL is ignored. */
void mc_vec_array_destroy(mc_vec_array *v);
/* Replaces v's items by src's (new references), keeping v's object.
 * src may be v. Returns 0 or reports; v is unchanged on failure. */
int mc_vec_array_assign(const char *fn, mc_vec_array *v, mc_array *const *arrs, size_t n);

#endif
