/* mc_vec: the one growable list behind every mlx_vector_* handle (a
 * handle's ctx points at one), and the helpers with which ops, compile and
 * closures read and build a vector of arrays without the public API.
 *
 * A list has a kind, fixed when it is made, that says what its elements
 * are and who owns them:
 *   MC_VEC_INT     int                 plain values
 *   MC_VEC_STRING  char *              owned, NUL-terminated copies
 *   MC_VEC_ARRAY   mc_array *          one reference each
 *   MC_VEC_VECTOR  mc_vec * (ARRAY)    owned lists, each a separate copy, as
 *                                      mlx-c keeps a std::vector of
 *                                      std::vectors
 * The storage is a void pointer to malloc'ed memory; it is only ever read
 * and written through the element type of the list's kind (mc_vec_ints()
 * and friends), so no element is accessed through a pointer of another
 * type. */
#ifndef MC_HANDLES_VECTOR_H
#define MC_HANDLES_VECTOR_H

#include <assert.h>
#include <stddef.h>

#include "array/array.h"
#include "mlx/c/vector.h"

typedef enum mc_vec_kind { MC_VEC_INT, MC_VEC_STRING, MC_VEC_ARRAY, MC_VEC_VECTOR } mc_vec_kind;

typedef struct mc_vec mc_vec;
struct mc_vec {
    mc_vec_kind kind;
    size_t len, cap;
    void *data; /* cap elements of the kind's type, len of them set */
};

/* ---- the list itself, any kind ---- */

/* A new empty list with room for cap elements, or NULL with an error
 * reported against fn. */
mc_vec *mc_vec_new(const char *fn, mc_vec_kind kind, size_t cap);
/* Releases every element as its kind says and frees the list. NULL is
 * ignored. */
void mc_vec_free(mc_vec *v);
/* Makes room for `need` elements. Capacity doubles, so appending n one by
 * one costs O(n). Returns 0, or 1 with an error reported; v is unchanged
 * on failure. */
int mc_vec_reserve(const char *fn, mc_vec *v, size_t need);
/* Releases the elements from index len on and shortens v to len. */
void mc_vec_truncate(mc_vec *v, size_t len);
/* Moves src's elements into dst's object and returns the object a handle
 * should keep: dst if it is not NULL (its old elements are released, src's
 * object is freed, and a NULL src leaves it empty), so every copy of its
 * handle sees the new elements; otherwise src. Both are of one kind; dst
 * == src changes nothing. Never fails:
 *     vec->ctx = mc_vec_replace(vec->ctx, fresh); */
mc_vec *mc_vec_replace(mc_vec *dst, mc_vec *src);
/* A new list of src's kind holding owned copies of its elements (new
 * references, copied strings, copied lists), or NULL with an error. */
mc_vec *mc_vec_copy(const char *fn, const mc_vec *src);
/* The list a handle's ctx points at, or NULL with "[fn] Expected a
 * non-empty <type_name> ..." reported when ctx is NULL. */
mc_vec *mc_vec_ctx_checked(void *ctx, const char *fn, const char *type_name);

/* Returns 0 if i < v->len, else 1 with "[fn] Index i out of range for a
 * vector of size n." reported. */
int mc_vec_check_index(const char *fn, const mc_vec *v, size_t i);

/* ---- elements, by kind ---- */

static inline int *mc_vec_ints(const mc_vec *v)
{
    assert(v->kind == MC_VEC_INT);
    return v->data;
}
static inline char **mc_vec_strings(const mc_vec *v)
{
    assert(v->kind == MC_VEC_STRING);
    return v->data;
}
static inline mc_array **mc_vec_arrays(const mc_vec *v)
{
    assert(v->kind == MC_VEC_ARRAY);
    return v->data;
}
static inline mc_vec **mc_vec_vectors(const mc_vec *v)
{
    assert(v->kind == MC_VEC_VECTOR);
    return v->data;
}

/* Appends new references to arrs[0..n) (none NULL, and not pointing into
 * v's own storage) to a list of arrays. Returns 0, or 1 with an error
 * reported; v is unchanged on failure. */
int mc_vec_append_arrays(const char *fn, mc_vec *v, mc_array *const *src, size_t n);

/* ---- filling a list from what the mlx_vector_* functions take ---- */

/* src is what mlx-c's functions take for v's kind: const int * (INT),
 * const char *const * (STRING), const mlx_array * (ARRAY), or
 * const mlx_vector_array * (VECTOR). Each checks src[0..n) (a pointer when
 * n > 0, no NULL string, no empty handle), reporting "[fn] ..." naming the
 * first bad one, then takes owned copies: ints by value, strings
 * duplicated, arrays retained, lists copied. */

/* Appends to v. Returns 0, or 1 with an error; v is unchanged on failure. */
int mc_vec_append_from(const char *fn, mc_vec *v, const void *src, size_t n);
/* A new list of kind holding src[0..n), or NULL with an error reported. */
mc_vec *mc_vec_new_from(const char *fn, mc_vec_kind kind, const void *src, size_t n);

/* Puts fresh into the handle whose ctx member is *ctx, by mc_vec_replace.
 * Returns 0, or 1 when fresh is NULL (its failure already reported). */
int mc_vec_store(void **ctx, mc_vec *fresh);

/* ---- vectors of arrays, by handle ---- */

/* Number of items; 0 for an empty (NULL ctx) handle, without an error. */
static inline size_t mc_vec_len(mlx_vector_array h) { return h.ctx ? ((const mc_vec *)h.ctx)->len : 0; }

/* Item i (i < mc_vec_len(h)), borrowed: the vector keeps its reference. */
static inline mc_array *mc_vec_at(mlx_vector_array h, size_t i) { return mc_vec_arrays(h.ctx)[i]; }

/* The object of a handle, or NULL with "[fn] ..." reported if empty. */
mc_vec *mc_vec_checked(mlx_vector_array h, const char *fn);

/* A new vector handle holding a reference to each of arrs[0..n) (which
 * must not be NULL), or an empty handle with an error reported. */
mlx_vector_array mc_vec_from(const char *fn, mc_array *const *arrs, size_t n);

/* Appends a new reference to a (retained here). Returns 0 or reports. */
int mc_vec_push(const char *fn, mlx_vector_array h, mc_array *a);
/* Appends a, taking over the caller's reference. On failure the reference
 * is released, so the caller never has to clean up after this call. */
int mc_vec_push_take(const char *fn, mlx_vector_array h, mc_array *a);

/* Makes *dst hold references to arrs[0..n) (dst may be empty: it is then
 * created). The new items are taken before the old ones are released, so
 * arrs may point into *dst itself. On failure *dst is unchanged. */
int mc_vec_assign(const char *fn, mlx_vector_array *dst, mc_array *const *arrs, size_t n);

/* Moves src's items into *dst and frees src's object. If *dst already has
 * an object, it keeps that object (mc_vec_replace); otherwise it takes
 * src's. Never fails. src may be empty (then *dst becomes an empty list if
 * it had an object, or stays empty). */
void mc_vec_move(mlx_vector_array *dst, mlx_vector_array src);

#endif
