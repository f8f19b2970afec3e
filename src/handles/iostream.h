/* mc_iostream: the object behind mlx_io_reader and mlx_io_writer handles
 * (a handle's ctx points at one): the program's descriptor and callback
 * table, refcounted so that the free callback runs exactly once, when the
 * handle and every loader using it are done. */
#ifndef MC_HANDLES_IOSTREAM_H
#define MC_HANDLES_IOSTREAM_H

#include <stdatomic.h>
#include <stdbool.h>

#include "mlx/c/io_types.h"

typedef struct mc_iostream {
    atomic_long refs;
    bool writer;
    void *desc;
    mlx_io_vtable vt;
} mc_iostream;

/* A stream with one reference, or NULL with "[fn] ..." reported (a
 * callback the loaders or savers call is NULL, or out of memory). */
mc_iostream *mc_iostream_new(const char *fn, void *desc, mlx_io_vtable vt, bool writer);
mc_iostream *mc_iostream_retain(mc_iostream *s);
/* Drops one reference; at zero calls vt.free(desc) (if set) and frees.
 * NULL is ignored. */
void mc_iostream_release(mc_iostream *s);
/* The stream of a handle's ctx, or NULL with "[fn] Expected a non-empty
 * <type> ..." reported. */
mc_iostream *mc_iostream_checked(void *ctx, const char *fn, const char *type);
/* True if the stream is open and good (both callbacks agree). */
bool mc_iostream_ok(const mc_iostream *s);
/* The stream's label, never NULL. */
const char *mc_iostream_label(const mc_iostream *s);

#endif
