/* Owns mc_darray (darray.h): capacity doubles, from 32 elements. */
#include "runtime/darray.h"

#include <stdint.h>

#include "runtime/alloc.h"

enum { MIN_CAP = 32 };

int mc_darray_reserve(mc_darray *a, size_t n)
{
    if (n <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap : MIN_CAP;
    while (cap < n)
        cap = cap > SIZE_MAX / 2 ? n : cap * 2;
    if (cap > SIZE_MAX / a->elem)
        return 1;
    void *items = mc_xrealloc(a->items, cap * a->elem);
    if (!items)
        return 1;
    a->items = items;
    a->cap = cap;
    return 0;
}

void *mc_darray_push_grow(mc_darray *a)
{
    if (mc_darray_reserve(a, a->len + 1))
        return NULL;
    return mc_darray_at(a, a->len++);
}

void mc_darray_free(mc_darray *a)
{
    mc_xfree(a->items);
    a->items = NULL;
    a->len = a->cap = 0;
}
