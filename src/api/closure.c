/* Owns mlx-c's closure.h handle functions for mlx_closure: each checks its
 * handles and calls the closure object of handles/closure.h. As in mlx-c,
 * copies of a handle share one closure and its payload (mlx_closure_set
 * takes a reference), and the payload's destructor runs once, when the
 * last reference goes. */
#include "mlx/c/closure.h"

#include "handles/closure.h"
#include "handles/vector.h"
#include "runtime/error.h"

static const char apply_fn[] = "mlx_closure_apply";

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
