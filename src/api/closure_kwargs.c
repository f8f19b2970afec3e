/* Owns the handle functions of mlx-c's mlx_closure_kwargs: a function of
 * positional arrays and a map of named ones, kept in an mc_fnbox as the
 * other closure kinds are (closure_custom.c). */
#include "handles/fnbox.h"
#include "mlx/c/closure.h"
#include "runtime/error.h"

typedef int (*kwargs_fun)(mlx_vector_array *, const mlx_vector_array, const mlx_map_string_to_array);
typedef int (*kwargs_fun_payload)(mlx_vector_array *, const mlx_vector_array, const mlx_map_string_to_array,
                                  void *);

mlx_closure_kwargs mlx_closure_kwargs_new(void) { return (mlx_closure_kwargs){NULL}; }

int mlx_closure_kwargs_free(mlx_closure_kwargs cls)
{
    mc_fnbox_release(cls.ctx);
    return 0;
}

mlx_closure_kwargs mlx_closure_kwargs_new_func(kwargs_fun fun)
{
    return (mlx_closure_kwargs){mc_fnbox_create("mlx_closure_kwargs_new_func", (mc_fnptr)fun, false, NULL, NULL)};
}

mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(kwargs_fun_payload fun, void *payload, void (*dtor)(void *))
{
    return (mlx_closure_kwargs){
        mc_fnbox_create("mlx_closure_kwargs_new_func_payload", (mc_fnptr)fun, true, payload, dtor)};
}

int mlx_closure_kwargs_set(mlx_closure_kwargs *cls, const mlx_closure_kwargs src)
{
    return mc_fnbox_set(cls ? &cls->ctx : NULL, src.ctx, "mlx_closure_kwargs_set");
}

int mlx_closure_kwargs_apply(mlx_vector_array *res, mlx_closure_kwargs cls, const mlx_vector_array input_0,
                             const mlx_map_string_to_array input_1)
{
    static const char fn[] = "mlx_closure_kwargs_apply";
    if (!res)
        return mc_error("[%s] The result pointer is NULL.", fn);
    unsigned long serial;
    mc_fnbox *b = mc_fnbox_enter(cls.ctx, fn, "mlx_closure_kwargs", &serial);
    if (!b)
        return 1;
    int rc = b->with_payload ? ((kwargs_fun_payload)b->fun)(res, input_0, input_1, b->payload)
                             : ((kwargs_fun)b->fun)(res, input_0, input_1);
    return mc_fnbox_leave(b, rc, serial, fn);
}
