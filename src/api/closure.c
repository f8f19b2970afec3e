/* Owns mlx_closure: a refcounted function object (closure_impl.h).
 *
 * mlx-c keeps a std::function per handle whose payload sits in a
 * shared_ptr, so copies share the payload and its destructor runs once,
 * when the last copy dies. Here every handle (and every compiled closure
 * built on one) holds a reference to one mc_closure, which gives the same
 * rule. As in mlx-c, the function receives its own copy of the input list
 * (it may change it freely) and an empty output handle to fill. */
#include "api/closure_impl.h"

#include "api/vector_impl.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const char apply_fn[] = "mlx_closure_apply";

mc_closure *mc_closure_create(const char *fn, int (*fun)(mlx_vector_array *, const mlx_vector_array),
                              int (*fun_payload)(mlx_vector_array *, const mlx_vector_array, void *),
                              int (*fun_unary)(mlx_array *, const mlx_array), void *payload,
                              void (*dtor)(void *))
{
    mc_closure *c = NULL;
    if (!fun && !fun_payload && !fun_unary) {
        mc_error("[%s] The function pointer is NULL.", fn);
        goto fail;
    }
    c = mc_xmalloc(sizeof *c);
    if (!c) {
        mc_error_oom(fn, sizeof *c);
        goto fail;
    }
    atomic_init(&c->refs, 1);
    /* Exactly one is kept, in the order apply would prefer them. */
    c->fun = fun;
    c->fun_payload = fun ? NULL : fun_payload;
    c->fun_unary = fun || fun_payload ? NULL : fun_unary;
    c->payload = payload;
    c->dtor = dtor;
    return c;
fail:
    /* The payload was handed over with the call (mlx-c's shared_ptr would
     * free it the same way if the closure could not be made). */
    if (dtor)
        dtor(payload);
    return NULL;
}

mc_closure *mc_closure_retain(mc_closure *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

void mc_closure_release(mc_closure *c)
{
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (c->dtor)
        c->dtor(c->payload);
    mc_xfree(c);
}

/* Reports a failed call of the closure's function, unless the function
 * already reported why (an op inside it failed): one failure, one message.
 * Returns the function's status. */
static int failed(int rc, unsigned long serial_before)
{
    if (mc_error_serial() == serial_before)
        mc_error("[%s] The closure's function failed (it returned %d).", apply_fn, rc);
    return rc;
}

static int no_output(void)
{
    return mc_error("[%s] The closure's function returned 0 without writing its output.", apply_fn);
}

/* A list closure: fun(out, copy of in [, payload]). */
static int call_list(mc_closure *c, mlx_vector_array *res, const mlx_vector_array in)
{
    const mc_vec_array *src = in.ctx; /* NULL reads as no inputs */
    mlx_vector_array args = mc_vec_from(apply_fn, src ? src->items : NULL, src ? src->len : 0);
    if (!args.ctx)
        return 1;
    mlx_vector_array out = {NULL};
    unsigned long serial = mc_error_serial();
    int rc = c->fun ? c->fun(&out, args) : c->fun_payload(&out, args, c->payload);
    mlx_vector_array_free(args);
    if (rc) {
        mlx_vector_array_free(out);
        return failed(rc, serial);
    }
    if (!out.ctx)
        return no_output();
    mc_vec_move(res, out);
    return 0;
}

/* A unary closure: one array in, one array out, returned as a list. */
static int call_unary(mc_closure *c, mlx_vector_array *res, const mlx_vector_array in)
{
    size_t n = mc_vec_len(in);
    if (n != 1)
        return mc_error("[%s] A unary closure takes exactly 1 input array, got %zu.", apply_fn, n);
    mlx_array arg = mc_handle(mc_array_retain(mc_vec_at(in, 0)));
    mlx_array out = {NULL};
    unsigned long serial = mc_error_serial();
    int rc = c->fun_unary(&out, arg);
    mc_array_release(mc_arr(arg));
    if (rc) {
        mc_array_release(mc_arr(out));
        return failed(rc, serial);
    }
    if (!out.ctx)
        return no_output();
    mc_array *a = mc_arr(out);
    mlx_vector_array list = mc_vec_from(apply_fn, &a, 1);
    mc_array_release(a);
    if (!list.ctx)
        return 1;
    mc_vec_move(res, list);
    return 0;
}

int mc_closure_call(mc_closure *c, mlx_vector_array *res, const mlx_vector_array in)
{
    /* Held for the call: the function may free the last handle to c. */
    mc_closure_retain(c);
    int rc = c->fun_unary ? call_unary(c, res, in) : call_list(c, res, in);
    mc_closure_release(c);
    return rc;
}

/* ---- the public handle functions ---- */

static mc_closure *checked(mlx_closure cls, const char *fn)
{
    if (!cls.ctx)
        mc_error("[%s] Expected a non-empty mlx_closure (the handle's ctx is NULL).", fn);
    return cls.ctx;
}

mlx_closure mlx_closure_new(void) { return (mlx_closure){NULL}; }

int mlx_closure_free(mlx_closure cls)
{
    mc_closure_release(cls.ctx);
    return 0;
}

mlx_closure mlx_closure_new_func(int (*fun)(mlx_vector_array *, const mlx_vector_array))
{
    return (mlx_closure){mc_closure_create("mlx_closure_new_func", fun, NULL, NULL, NULL, NULL)};
}

mlx_closure mlx_closure_new_func_payload(int (*fun)(mlx_vector_array *, const mlx_vector_array, void *),
                                         void *payload, void (*dtor)(void *))
{
    return (mlx_closure){mc_closure_create("mlx_closure_new_func_payload", NULL, fun, NULL, payload, dtor)};
}

mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array *, const mlx_array))
{
    return (mlx_closure){mc_closure_create("mlx_closure_new_unary", NULL, NULL, fun, NULL, NULL)};
}

int mlx_closure_set(mlx_closure *cls, const mlx_closure src)
{
    static const char fn[] = "mlx_closure_set";
    mc_closure *s = checked(src, fn);
    if (!s)
        return 1;
    if (!cls)
        return mc_error("[%s] The output closure pointer is NULL.", fn);
    /* Retain first: src may be *cls. The old closure's release may run a
     * payload destructor; no lock is held here. */
    mc_closure *old = cls->ctx;
    cls->ctx = mc_closure_retain(s);
    mc_closure_release(old);
    return 0;
}

int mlx_closure_apply(mlx_vector_array *res, mlx_closure cls, const mlx_vector_array input)
{
    if (!res)
        return mc_error("[%s] The output vector pointer is NULL.", apply_fn);
    mc_closure *c = checked(cls, apply_fn);
    if (!c || !mc_vec_checked(input, apply_fn))
        return 1;
    return mc_closure_call(c, res, input) ? 1 : 0;
}
