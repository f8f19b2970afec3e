/* Owns mc_vec, the list behind every mlx_vector_* handle (vector.h): its
 * storage, growth, and what each element kind owns.
 *
 * Appending is one loop for every kind (append) that calls a small copy
 * function per element kind and source type; a failure part way releases
 * the copies already made, so a failed append leaves the list unchanged.
 * Elements are written only through their kind's own type, into memory
 * from malloc (which has no declared type). */
#include "handles/vector.h"

#include <stdint.h>
#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static const size_t elsize[] = {
    [MC_VEC_INT] = sizeof(int),
    [MC_VEC_STRING] = sizeof(char *),
    [MC_VEC_ARRAY] = sizeof(mc_array *),
    [MC_VEC_VECTOR] = sizeof(mc_vec *),
};

/* The storage of element i (i < cap), for the copy functions to fill. */
static void *slot(mc_vec *v, size_t i) { return (char *)v->data + i * elsize[v->kind]; }

mc_vec *mc_vec_new(const char *fn, mc_vec_kind kind, size_t cap)
{
    mc_vec *v = mc_xmalloc(sizeof *v);
    if (!v) {
        mc_error_oom(fn, sizeof *v);
        return NULL;
    }
    v->kind = kind;
    v->len = 0;
    v->cap = 0;
    v->data = NULL;
    if (mc_vec_reserve(fn, v, cap)) {
        mc_xfree(v);
        return NULL;
    }
    return v;
}

void mc_vec_truncate(mc_vec *v, size_t len)
{
    for (size_t i = len; i < v->len; i++) {
        switch (v->kind) {
        case MC_VEC_INT: break;
        case MC_VEC_STRING: mc_xfree(mc_vec_strings(v)[i]); break;
        case MC_VEC_ARRAY: mc_array_release(mc_vec_arrays(v)[i]); break;
        case MC_VEC_VECTOR: mc_vec_free(mc_vec_vectors(v)[i]); break;
        }
    }
    if (len < v->len)
        v->len = len;
}

void mc_vec_free(mc_vec *v)
{
    if (!v)
        return;
    mc_vec_truncate(v, 0);
    mc_xfree(v->data);
    mc_xfree(v);
}

int mc_vec_reserve(const char *fn, mc_vec *v, size_t need)
{
    if (need <= v->cap)
        return 0;
    size_t size = elsize[v->kind];
    size_t ncap = v->cap ? v->cap : 4;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > SIZE_MAX / size)
        return mc_error("[%s] Cannot hold %zu items: the size overflows.", fn, need);
    void *p = mc_xrealloc(v->data, ncap * size);
    if (!p)
        return mc_error_oom(fn, ncap * size);
    v->data = p;
    v->cap = ncap;
    return 0;
}

mc_vec *mc_vec_replace(mc_vec *dst, mc_vec *src)
{
    if (!dst)
        return src;
    if (dst == src)
        return dst;
    if (!src) {
        mc_vec_truncate(dst, 0);
        return dst;
    }
    /* Swap the storage: dst keeps its object, src dies with the old items. */
    mc_vec old = *dst;
    *dst = *src;
    *src = old;
    mc_vec_free(src);
    return dst;
}

mc_vec *mc_vec_ctx_checked(void *ctx, const char *fn, const char *type_name)
{
    if (!ctx)
        mc_error("[%s] Expected a non-empty %s (the handle's ctx is NULL).", fn, type_name);
    return ctx;
}

int mc_vec_check_index(const char *fn, const mc_vec *v, size_t i)
{
    if (i >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, i, v->len);
    return 0;
}

/* ---- appending: one loop, one copy function per element source ---- */

/* Stores an owned copy of element i of src in dst; 0 or 1 with an error. */
typedef int (*copy_fn)(const char *fn, void *dst, const void *src, size_t i);

static int copy_int(const char *fn, void *dst, const void *src, size_t i)
{
    (void)fn;
    *(int *)dst = ((const int *)src)[i];
    return 0;
}

static int dup_string(const char *fn, void *dst, const char *text)
{
    char *c = mc_xstrdup(text);
    if (!c)
        return mc_error_oom(fn, strlen(text) + 1);
    *(char **)dst = c;
    return 0;
}

/* From a caller's strings (const char *) and from a list's own (char *):
 * each read through its own type. */
static int copy_string(const char *fn, void *dst, const void *src, size_t i)
{
    return dup_string(fn, dst, ((const char *const *)src)[i]);
}

static int copy_own_string(const char *fn, void *dst, const void *src, size_t i)
{
    return dup_string(fn, dst, ((char *const *)src)[i]);
}

static int copy_array(const char *fn, void *dst, const void *src, size_t i)
{
    (void)fn;
    *(mc_array **)dst = mc_array_retain(((mc_array *const *)src)[i]);
    return 0;
}

static int copy_array_handle(const char *fn, void *dst, const void *src, size_t i)
{
    (void)fn;
    *(mc_array **)dst = mc_array_retain(mc_arr(((const mlx_array *)src)[i]));
    return 0;
}

static int copy_vector(const char *fn, void *dst, const void *src, size_t i)
{
    mc_vec *c = mc_vec_copy(fn, ((mc_vec *const *)src)[i]);
    *(mc_vec **)dst = c;
    return c ? 0 : 1;
}

static int copy_vector_handle(const char *fn, void *dst, const void *src, size_t i)
{
    mc_vec *c = mc_vec_copy(fn, ((const mlx_vector_array *)src)[i].ctx);
    *(mc_vec **)dst = c;
    return c ? 0 : 1;
}

static int append(const char *fn, mc_vec *v, const void *src, size_t n, copy_fn copy)
{
    if (n > SIZE_MAX - v->len)
        return mc_error("[%s] Cannot hold %zu more items: the size overflows.", fn, n);
    if (mc_vec_reserve(fn, v, v->len + n))
        return 1;
    size_t done = 0;
    for (; done < n; done++)
        if (copy(fn, slot(v, v->len + done), src, done))
            break;
    size_t old = v->len;
    v->len += done;
    if (done == n)
        return 0;
    mc_vec_truncate(v, old); /* releases the copies made before the failure */
    return 1;
}

int mc_vec_append_arrays(const char *fn, mc_vec *v, mc_array *const *src, size_t n)
{
    return append(fn, v, src, n, copy_array);
}

/* ---- from the sources of the mlx_vector_* functions ---- */

static const char *const source_noun[] = {
    [MC_VEC_INT] = "ints",
    [MC_VEC_STRING] = "strings",
    [MC_VEC_ARRAY] = "arrays",
    [MC_VEC_VECTOR] = "vectors",
};

/* Finds the first NULL string or empty handle in src[0..n); 0 or reports. */
static int check_source(const char *fn, mc_vec_kind kind, const void *src, size_t n)
{
    if (n && !src)
        return mc_error("[%s] The data pointer is NULL for %zu %s.", fn, n, source_noun[kind]);
    for (size_t i = 0; i < n && kind != MC_VEC_INT; i++) {
        switch (kind) {
        case MC_VEC_INT: break;
        case MC_VEC_STRING:
            if (!((const char *const *)src)[i])
                return mc_error("[%s] String %zu of %zu is NULL.", fn, i, n);
            break;
        case MC_VEC_ARRAY:
            if (!((const mlx_array *)src)[i].ctx)
                return mc_error("[%s] Array %zu of %zu is empty (an mlx_array_new() handle that was never set).",
                                fn, i, n);
            break;
        case MC_VEC_VECTOR:
            if (!((const mlx_vector_array *)src)[i].ctx)
                return mc_error("[%s] Vector %zu of %zu is empty (its ctx is NULL).", fn, i, n);
            break;
        }
    }
    return 0;
}

static const copy_fn copy_from_source[] = {
    [MC_VEC_INT] = copy_int,
    [MC_VEC_STRING] = copy_string,
    [MC_VEC_ARRAY] = copy_array_handle,
    [MC_VEC_VECTOR] = copy_vector_handle,
};

int mc_vec_append_from(const char *fn, mc_vec *v, const void *src, size_t n)
{
    if (check_source(fn, v->kind, src, n))
        return 1;
    return append(fn, v, src, n, copy_from_source[v->kind]);
}

mc_vec *mc_vec_new_from(const char *fn, mc_vec_kind kind, const void *src, size_t n)
{
    if (check_source(fn, kind, src, n))
        return NULL;
    mc_vec *v = mc_vec_new(fn, kind, n);
    if (v && append(fn, v, src, n, copy_from_source[kind])) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}

int mc_vec_store(void **ctx, mc_vec *fresh)
{
    if (!fresh)
        return 1;
    *ctx = mc_vec_replace(*ctx, fresh);
    return 0;
}

mc_vec *mc_vec_copy(const char *fn, const mc_vec *src)
{
    static const copy_fn copy[] = {
        [MC_VEC_INT] = copy_int,
        [MC_VEC_STRING] = copy_own_string,
        [MC_VEC_ARRAY] = copy_array,
        [MC_VEC_VECTOR] = copy_vector,
    };
    mc_vec *v = mc_vec_new(fn, src->kind, src->len);
    if (v && append(fn, v, src->data, src->len, copy[src->kind])) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}
