/* Owns the closure object behind mlx_closure (closure.h): a refcounted
 * function object, and how it is called. src/api/closure.c holds the
 * handle functions.
 *
 * mlx-c keeps a std::function per handle whose payload sits in a
 * shared_ptr, so copies share the payload and its destructor runs once,
 * when the last copy dies. Here every handle (and every compiled closure
 * built on one) holds a reference to one mc_closure, which gives the same
 * rule. As in mlx-c, the function receives its own copy of the input list
 * (it may change it freely) and an empty output handle to fill. */
#include "handles/closure.h"

#include "handles/vector.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const char apply_fn[] = "mlx_closure_apply";

mc_closure *mc_closure_create(const char *fn, int (*fun)(mlx_vector_array *, const mlx_vector_array),
                              int (*fun_payload)(mlx_vector_array *, const mlx_vector_array, void *),
                              int (*fun_unary)(mlx_array *, const mlx_array), void *payload, void (*dtor)(void *))
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
    const mc_vec *src = in.ctx; /* NULL reads as no inputs */
    mlx_vector_array args = mc_vec_from(apply_fn, src ? mc_vec_arrays(src) : NULL, src ? src->len : 0);
    if (!args.ctx)
        return 1;
    mlx_vector_array out = {NULL};
    unsigned long serial = mc_error_serial();
    int rc = c->fun ? c->fun(&out, args) : c->fun_payload(&out, args, c->payload);
    mc_vec_free(args.ctx);
    if (rc) {
        mc_vec_free(out.ctx);
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
