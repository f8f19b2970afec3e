/* Owns mc_iostream (iostream.h), the refcounted reader or writer of a
 * program's own storage. */
#include "handles/iostream.h"

#include "runtime/alloc.h"
#include "runtime/error.h"

mc_iostream *mc_iostream_new(const char *fn, void *desc, mlx_io_vtable vt, bool writer)
{
    const char *missing = !vt.is_open                     ? "is_open"
                          : !vt.good                      ? "good"
                          : !vt.label                     ? "label"
                          : writer && !vt.write           ? "write"
                          : !writer && !vt.read           ? "read"
                          : !writer && !vt.read_at_offset ? "read_at_offset"
                                                          : NULL;
    if (missing) {
        mc_error("[%s] The vtable's %s callback is NULL.", fn, missing);
        return NULL;
    }
    mc_iostream *s = mc_xmalloc(sizeof *s);
    if (!s) {
        mc_error_oom(fn, sizeof *s);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->writer = writer;
    s->desc = desc;
    s->vt = vt;
    return s;
}

mc_iostream *mc_iostream_retain(mc_iostream *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void mc_iostream_release(mc_iostream *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (s->vt.free)
        s->vt.free(s->desc);
    mc_xfree(s);
}

mc_iostream *mc_iostream_checked(void *ctx, const char *fn, const char *type)
{
    if (!ctx)
        mc_error("[%s] Expected a non-empty %s (the handle's ctx is NULL).", fn, type);
    return ctx;
}

bool mc_iostream_ok(const mc_iostream *s) { return s->vt.good(s->desc) && s->vt.is_open(s->desc); }

const char *mc_iostream_label(const mc_iostream *s)
{
    const char *l = s->vt.label(s->desc);
    return l ? l : "<unnamed stream>";
}
