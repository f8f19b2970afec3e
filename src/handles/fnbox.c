/* Owns mc_fnbox, the refcounted function object of the closure kinds. */
#include "handles/fnbox.h"

#include "runtime/alloc.h"
#include "runtime/error.h"

mc_fnbox *mc_fnbox_create(const char *fn, mc_fnptr fun, bool with_payload, void *payload, void (*dtor)(void *))
{
    mc_fnbox *b = NULL;
    if (!fun) {
        mc_error("[%s] The function pointer is NULL.", fn);
    } else if (!(b = mc_xmalloc(sizeof *b))) {
        mc_error_oom(fn, sizeof *b);
    } else {
        atomic_init(&b->refs, 1);
        b->fun = fun;
        b->with_payload = with_payload;
        b->payload = payload;
        b->dtor = dtor;
        return b;
    }
    /* the payload was handed over with the call */
    if (dtor)
        dtor(payload);
    return NULL;
}

mc_fnbox *mc_fnbox_retain(mc_fnbox *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void mc_fnbox_release(mc_fnbox *b)
{
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (b->dtor)
        b->dtor(b->payload);
    mc_xfree(b);
}

int mc_fnbox_set(void **dst, void *src, const char *fn)
{
    if (!dst)
        return mc_error("[%s] The destination pointer is NULL.", fn);
    if (src)
        mc_fnbox_retain(src);
    mc_fnbox_release(*dst);
    *dst = src;
    return 0;
}

mc_fnbox *mc_fnbox_checked(void *ctx, const char *fn, const char *type)
{
    if (!ctx)
        mc_error("[%s] Expected a non-empty %s (the handle's ctx is NULL).", fn, type);
    return ctx;
}

mc_fnbox *mc_fnbox_enter(void *ctx, const char *fn, const char *type, unsigned long *serial)
{
    mc_fnbox *b = mc_fnbox_checked(ctx, fn, type);
    if (!b)
        return NULL;
    *serial = mc_error_serial();
    return mc_fnbox_retain(b);
}

int mc_fnbox_leave(mc_fnbox *b, int rc, unsigned long serial, const char *fn)
{
    mc_fnbox_release(b);
    if (rc && mc_error_serial() == serial)
        mc_error("[%s] The closure's function failed (it returned %d).", fn, rc);
    return rc ? 1 : 0;
}
