/* Owns the mlx_closure_value_and_grad handle functions: a function of a
 * list of arrays to two lists (the values and the gradients), as
 * mlx_value_and_grad makes or a program writes itself. */
#include "handles/fnbox.h"
#include "mlx/c/closure.h"
#include "runtime/error.h"

typedef int (*vg_fun)(mlx_vector_array *, mlx_vector_array *, const mlx_vector_array);
typedef int (*vg_fun_payload)(mlx_vector_array *, mlx_vector_array *, const mlx_vector_array, void *);

static const char type_name[] = "mlx_closure_value_and_grad";

mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void) { return (mlx_closure_value_and_grad){NULL}; }

int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls)
{
    mc_fnbox_release(cls.ctx);
    return 0;
}

mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(vg_fun fun)
{
    return (mlx_closure_value_and_grad){
        mc_fnbox_create("mlx_closure_value_and_grad_new_func", (mc_fnptr)fun, false, NULL, NULL)};
}

mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(vg_fun_payload fun, void *payload,
                                                                       void (*dtor)(void *))
{
    return (mlx_closure_value_and_grad){
        mc_fnbox_create("mlx_closure_value_and_grad_new_func_payload", (mc_fnptr)fun, true, payload, dtor)};
}

int mlx_closure_value_and_grad_set(mlx_closure_value_and_grad *cls, const mlx_closure_value_and_grad src)
{
    return mc_fnbox_set(cls ? &cls->ctx : NULL, src.ctx, "mlx_closure_value_and_grad_set");
}

int mlx_closure_value_and_grad_apply(mlx_vector_array *res_0, mlx_vector_array *res_1,
                                     mlx_closure_value_and_grad cls, const mlx_vector_array input)
{
    static const char fn[] = "mlx_closure_value_and_grad_apply";
    if (!res_0 || !res_1)
        return mc_error("[%s] A result pointer is NULL.", fn);
    unsigned long serial;
    mc_fnbox *b = mc_fnbox_enter(cls.ctx, fn, type_name, &serial);
    if (!b)
        return 1;
    int rc = b->with_payload ? ((vg_fun_payload)b->fun)(res_0, res_1, input, b->payload)
                             : ((vg_fun)b->fun)(res_0, res_1, input);
    return mc_fnbox_leave(b, rc, serial, fn);
}
