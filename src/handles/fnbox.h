/* A refcounted function with an optional payload: the object behind the
 * closure kinds other than mlx_closure (value_and_grad, custom, custom_jvp,
 * custom_vmap, kwargs). Each kind stores its own function type in `fun`
 * and casts it back in its apply. As with mlx_closure, copies made by
 * _set share the box, and the payload destructor runs exactly once: when
 * the last reference goes, or at once if the box cannot be made. */
#ifndef MC_HANDLES_FNBOX_H
#define MC_HANDLES_FNBOX_H

#include <stdatomic.h>
#include <stdbool.h>

typedef void (*mc_fnptr)(void);

typedef struct mc_fnbox {
    atomic_long refs;
    mc_fnptr fun;      /* the kind's function type, cast */
    bool with_payload; /* fun takes the payload as its last argument */
    void *payload;
    void (*dtor)(void *);
} mc_fnbox;

/* A box with one reference, or NULL with "[fn] ..." reported (fun NULL,
 * or out of memory; dtor(payload) has then run). */
mc_fnbox *mc_fnbox_create(const char *fn, mc_fnptr fun, bool with_payload, void *payload, void (*dtor)(void *));
mc_fnbox *mc_fnbox_retain(mc_fnbox *b);
/* Drops one reference; at zero runs dtor(payload) and frees. NULL is ignored. */
void mc_fnbox_release(mc_fnbox *b);
/* *dst refers to src's box (retained) after dropping its own; 0 or 1. */
int mc_fnbox_set(void **dst, void *src, const char *fn);
/* The box of a handle's ctx, or NULL with "[fn] ... empty handle" reported. */
mc_fnbox *mc_fnbox_checked(void *ctx, const char *fn, const char *type);

/* The two halves of a kind's apply: enter checks the handle and takes a
 * reference for the call (the function may free the last handle to it),
 * returning the box or NULL with "[fn] ..." reported; leave drops it and,
 * if the function failed without reporting why, reports that it failed.
 * Returns 0 or 1. *serial carries the error count between the two. */
mc_fnbox *mc_fnbox_enter(void *ctx, const char *fn, const char *type, unsigned long *serial);
int mc_fnbox_leave(mc_fnbox *b, int rc, unsigned long serial, const char *fn);

#endif
