/* The closure object behind an mlx_closure handle (ctx points at it), used
 * by src/api/closure.c (the handle functions) and src/compile/ (compiled
 * closures). Refcounted: mlx_closure_set takes a reference, mlx_closure_free
 * drops one, and the payload destructor runs once, when the last goes. */
#ifndef MC_HANDLES_CLOSURE_H
#define MC_HANDLES_CLOSURE_H

#include <stdatomic.h>

#include "mlx/c/closure.h"

typedef struct mc_closure mc_closure;
struct mc_closure {
    atomic_long refs;
    /* exactly one of the three is set */
    int (*fun)(mlx_vector_array *, const mlx_vector_array);
    int (*fun_payload)(mlx_vector_array *, const mlx_vector_array, void *);
    int (*fun_unary)(mlx_array *, const mlx_array);
    void *payload;
    void (*dtor)(void *);
};

/* A new closure with one reference, or NULL with "[fn] ..." reported. The
 * payload is handed over with the call: if the closure cannot be made (all
 * three functions NULL, or out of memory), dtor(payload) has run. If more
 * than one function is given, fun wins over fun_payload over fun_unary. */
mc_closure *mc_closure_create(const char *fn, int (*fun)(mlx_vector_array *, const mlx_vector_array),
                              int (*fun_payload)(mlx_vector_array *, const mlx_vector_array, void *),
                              int (*fun_unary)(mlx_array *, const mlx_array), void *payload, void (*dtor)(void *));
mc_closure *mc_closure_retain(mc_closure *c);
/* Drops one reference; at zero runs dtor(payload) (outside any library
 * lock) and frees the closure. NULL is ignored. */
void mc_closure_release(mc_closure *c);
/* Calls the closure: *res (a vector handle, empty or not) receives the
 * outputs, as mlx_vector_array_set would store them; it is untouched on
 * failure. The function gets its own copy of `in` and an empty output
 * handle. Returns 0, or non-zero (the function's own status when it
 * failed) with one "[mlx_closure_apply] ..." message reported. */
int mc_closure_call(mc_closure *c, mlx_vector_array *res, const mlx_vector_array in);

#endif
