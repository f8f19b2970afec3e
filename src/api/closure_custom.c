/* Owns the handle functions of mlx-c's custom closure kinds: custom (a vjp
 * rule: primals, cotangents, outputs -> the primals' cotangents),
 * custom_jvp (primals, tangents, argnums -> the outputs' tangents) and
 * custom_vmap (inputs, axes -> outputs and their axes). Each is an
 * mc_fnbox holding the function as given. */
#include "handles/fnbox.h"
#include "mlx/c/closure.h"
#include "runtime/error.h"

typedef int (*custom_fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                          const mlx_vector_array);
typedef int (*custom_fun_payload)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                                  const mlx_vector_array, void *);
typedef int (*jvp_fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array, const int *, size_t);
typedef int (*jvp_fun_payload)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array, const int *,
                               size_t, void *);
typedef int (*vmap_fun)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *, size_t);
typedef int (*vmap_fun_payload)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *, size_t,
                                void *);

static int check_result(const void *res, const char *fn)
{
    return res ? 0 : mc_error("[%s] The result pointer is NULL.", fn);
}

/* ---- mlx_closure_custom ---- */

mlx_closure_custom mlx_closure_custom_new(void) { return (mlx_closure_custom){NULL}; }

int mlx_closure_custom_free(mlx_closure_custom cls)
{
    mc_fnbox_release(cls.ctx);
    return 0;
}

mlx_closure_custom mlx_closure_custom_new_func(custom_fun fun)
{
    return (mlx_closure_custom){mc_fnbox_create("mlx_closure_custom_new_func", (mc_fnptr)fun, false, NULL, NULL)};
}

mlx_closure_custom mlx_closure_custom_new_func_payload(custom_fun_payload fun, void *payload, void (*dtor)(void *))
{
    return (mlx_closure_custom){
        mc_fnbox_create("mlx_closure_custom_new_func_payload", (mc_fnptr)fun, true, payload, dtor)};
}

int mlx_closure_custom_set(mlx_closure_custom *cls, const mlx_closure_custom src)
{
    return mc_fnbox_set(cls ? &cls->ctx : NULL, src.ctx, "mlx_closure_custom_set");
}

int mlx_closure_custom_apply(mlx_vector_array *res, mlx_closure_custom cls, const mlx_vector_array input_0,
                             const mlx_vector_array input_1, const mlx_vector_array input_2)
{
    static const char fn[] = "mlx_closure_custom_apply";
    unsigned long serial;
    mc_fnbox *b = check_result(res, fn) ? NULL : mc_fnbox_enter(cls.ctx, fn, "mlx_closure_custom", &serial);
    if (!b)
        return 1;
    int rc = b->with_payload ? ((custom_fun_payload)b->fun)(res, input_0, input_1, input_2, b->payload)
                             : ((custom_fun)b->fun)(res, input_0, input_1, input_2);
    return mc_fnbox_leave(b, rc, serial, fn);
}

/* ---- mlx_closure_custom_jvp ---- */

mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void) { return (mlx_closure_custom_jvp){NULL}; }

int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls)
{
    mc_fnbox_release(cls.ctx);
    return 0;
}

mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(jvp_fun fun)
{
    return (mlx_closure_custom_jvp){
        mc_fnbox_create("mlx_closure_custom_jvp_new_func", (mc_fnptr)fun, false, NULL, NULL)};
}

mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(jvp_fun_payload fun, void *payload,
                                                               void (*dtor)(void *))
{
    return (mlx_closure_custom_jvp){
        mc_fnbox_create("mlx_closure_custom_jvp_new_func_payload", (mc_fnptr)fun, true, payload, dtor)};
}

int mlx_closure_custom_jvp_set(mlx_closure_custom_jvp *cls, const mlx_closure_custom_jvp src)
{
    return mc_fnbox_set(cls ? &cls->ctx : NULL, src.ctx, "mlx_closure_custom_jvp_set");
}

int mlx_closure_custom_jvp_apply(mlx_vector_array *res, mlx_closure_custom_jvp cls, const mlx_vector_array input_0,
                                 const mlx_vector_array input_1, const int *input_2, size_t input_2_num)
{
    static const char fn[] = "mlx_closure_custom_jvp_apply";
    unsigned long serial;
    mc_fnbox *b = check_result(res, fn) ? NULL : mc_fnbox_enter(cls.ctx, fn, "mlx_closure_custom_jvp", &serial);
    if (!b)
        return 1;
    int rc = b->with_payload ? ((jvp_fun_payload)b->fun)(res, input_0, input_1, input_2, input_2_num, b->payload)
                             : ((jvp_fun)b->fun)(res, input_0, input_1, input_2, input_2_num);
    return mc_fnbox_leave(b, rc, serial, fn);
}

/* ---- mlx_closure_custom_vmap ---- */

mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void) { return (mlx_closure_custom_vmap){NULL}; }

int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls)
{
    mc_fnbox_release(cls.ctx);
    return 0;
}

mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(vmap_fun fun)
{
    return (mlx_closure_custom_vmap){
        mc_fnbox_create("mlx_closure_custom_vmap_new_func", (mc_fnptr)fun, false, NULL, NULL)};
}

mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(vmap_fun_payload fun, void *payload,
                                                                 void (*dtor)(void *))
{
    return (mlx_closure_custom_vmap){
        mc_fnbox_create("mlx_closure_custom_vmap_new_func_payload", (mc_fnptr)fun, true, payload, dtor)};
}

int mlx_closure_custom_vmap_set(mlx_closure_custom_vmap *cls, const mlx_closure_custom_vmap src)
{
    return mc_fnbox_set(cls ? &cls->ctx : NULL, src.ctx, "mlx_closure_custom_vmap_set");
}

int mlx_closure_custom_vmap_apply(mlx_vector_array *res_0, mlx_vector_int *res_1, mlx_closure_custom_vmap cls,
                                  const mlx_vector_array input_0, const int *input_1, size_t input_1_num)
{
    static const char fn[] = "mlx_closure_custom_vmap_apply";
    unsigned long serial;
    mc_fnbox *b = check_result(res_0, fn) || check_result(res_1, fn)
                      ? NULL
                      : mc_fnbox_enter(cls.ctx, fn, "mlx_closure_custom_vmap", &serial);
    if (!b)
        return 1;
    int rc = b->with_payload ? ((vmap_fun_payload)b->fun)(res_0, res_1, input_0, input_1, input_1_num, b->payload)
                             : ((vmap_fun)b->fun)(res_0, res_1, input_0, input_1, input_1_num);
    return mc_fnbox_leave(b, rc, serial, fn);
}
