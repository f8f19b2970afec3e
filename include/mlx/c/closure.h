/* Closures: a C function (with an optional payload) packaged as a value
 * that maps a list of arrays to a list of arrays. compile takes and returns
 * closures; mlx_value_and_grad returns an mlx_closure_value_and_grad. The
 * custom kinds hold a program's own derivative rules; the kwargs kind also
 * takes a map of named arrays. */
#ifndef MLX_CLOSURE_H
#define MLX_CLOSURE_H

#include "mlx/c/array.h"
#include "mlx/c/map.h"
#include "mlx/c/optional.h"
#include "mlx/c/stream.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A closure handle; the caller frees every closure a function returns or
 * writes with mlx_closure_free. Copies made by mlx_closure_set share the
 * function and payload. */
typedef struct mlx_closure_ {
  void* ctx;
} mlx_closure;

/* Returns an empty handle (no function); freeing it is allowed. */
mlx_closure mlx_closure_new(void);
/* Frees the handle; the payload destructor runs when the last handle (or
 * compiled closure) using it is gone. Returns 0. */
int mlx_closure_free(mlx_closure cls);
/* Returns a closure calling fun. fun receives the inputs (owned by the
 * caller of fun) and writes its outputs to *res, an empty vector it must
 * fill; it returns 0, or non-zero to fail the call. Returns an empty handle,
 * with an error reported, on failure. */
mlx_closure mlx_closure_new_func(
    int (*fun)(mlx_vector_array*, const mlx_vector_array));
/* As mlx_closure_new_func, but fun also receives payload. dtor, if not
 * NULL, is called on payload exactly once, when the closure is last freed
 * (also if creating the closure fails). */
mlx_closure mlx_closure_new_func_payload(
    int (*fun)(mlx_vector_array*, const mlx_vector_array, void*),
    void* payload,
    void (*dtor)(void*));
/* Makes *cls refer to the closure of src; returns 0 or 1. */
int mlx_closure_set(mlx_closure* cls, const mlx_closure src);
/* Calls the closure on input and writes its outputs to *res (replacing what
 * it held). Returns 0, or 1 with an error reported if the closure is empty
 * or its function fails. */
int mlx_closure_apply(
    mlx_vector_array* res,
    mlx_closure cls,
    const mlx_vector_array input);
/* Returns a closure of one array to one array: fun reads its input and
 * writes its result to *res. Applying it to other than one input fails. */
mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array*, const mlx_array));

/* A function of a list of arrays and a map of named arrays (keyword
 * arguments) to a list of arrays. Handles follow mlx_closure_value_and_grad's
 * rules below (free, set, a payload destructor that runs exactly once).
 * _apply returns 0, or 1 with one error reported (an empty closure, a NULL
 * result pointer, or the function failed). */
typedef struct mlx_closure_kwargs_ {
  void* ctx;
} mlx_closure_kwargs;
mlx_closure_kwargs mlx_closure_kwargs_new(void);
int mlx_closure_kwargs_free(mlx_closure_kwargs cls);
mlx_closure_kwargs mlx_closure_kwargs_new_func(
    int (*fun)(
        mlx_vector_array*,
        const mlx_vector_array,
        const mlx_map_string_to_array));
mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(
    int (*fun)(
        mlx_vector_array*,
        const mlx_vector_array,
        const mlx_map_string_to_array,
        void*),
    void* payload,
    void (*dtor)(void*));
int mlx_closure_kwargs_set(
    mlx_closure_kwargs* cls,
    const mlx_closure_kwargs src);
int mlx_closure_kwargs_apply(
    mlx_vector_array* res,
    mlx_closure_kwargs cls,
    const mlx_vector_array input_0,
    const mlx_map_string_to_array input_1);

/* A function of a list of arrays to two lists, the values and the
 * gradients, as mlx_value_and_grad makes. Handles follow mlx_closure's
 * rules: the caller frees each with mlx_closure_value_and_grad_free, and
 * copies made by _set share the function and payload, whose destructor
 * runs exactly once, when the last copy is freed (or at once if the
 * closure cannot be made). */
typedef struct mlx_closure_value_and_grad_ {
  void* ctx;
} mlx_closure_value_and_grad;
/* Returns an empty handle; freeing it is allowed. */
mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void);
/* Drops the handle's reference. Returns 0. */
int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls);
/* A closure calling fun(res_0, res_1, input); an empty handle, with an
 * error reported, if fun is NULL. */
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(
    int (*fun)(mlx_vector_array*, mlx_vector_array*, const mlx_vector_array));
/* As _new_func, fun also receiving payload; dtor(payload) runs once. */
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(
    int (*fun)(
        mlx_vector_array*,
        mlx_vector_array*,
        const mlx_vector_array,
        void*),
    void* payload,
    void (*dtor)(void*));
/* Makes *cls refer to src's closure; returns 0 or 1. */
int mlx_closure_value_and_grad_set(
    mlx_closure_value_and_grad* cls,
    const mlx_closure_value_and_grad src);
/* Calls the closure: *res_0 gets the values, *res_1 the gradients.
 * Returns 0, or 1 with one error reported (the closure is empty, or its
 * function failed). */
int mlx_closure_value_and_grad_apply(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    mlx_closure_value_and_grad cls,
    const mlx_vector_array input);

/* The custom kinds follow mlx_closure_value_and_grad's handle rules
 * (free, set, payload destructor run once); _apply returns 0, or 1 with one
 * error reported (an empty closure, a NULL result pointer, or the function
 * failed). A custom closure is a vjp rule: it maps the primals, the
 * cotangents and the outputs (input_0..2) to the primals' cotangents. */
typedef struct mlx_closure_custom_ {
  void* ctx;
} mlx_closure_custom;
mlx_closure_custom mlx_closure_custom_new(void);
int mlx_closure_custom_free(mlx_closure_custom cls);
mlx_closure_custom mlx_closure_custom_new_func(
    int (*fun)(
        mlx_vector_array*,
        const mlx_vector_array,
        const mlx_vector_array,
        const mlx_vector_array));
mlx_closure_custom mlx_closure_custom_new_func_payload(
    int (*fun)(
        mlx_vector_array*,
        const mlx_vector_array,
        const mlx_vector_array,
        const mlx_vector_array,
        void*),
    void* payload,
    void (*dtor)(void*));
int mlx_closure_custom_set(
    mlx_closure_custom* cls,
    const mlx_closure_custom src);
int mlx_closure_custom_apply(
    mlx_vector_array* res,
    mlx_closure_custom cls,
    const mlx_vector_array input_0,
    const mlx_vector_array input_1,
    const mlx_vector_array input_2);

/* A jvp rule: the primals, the tangents and the argnums they belong to
 * map to the outputs' tangents. */
typedef struct mlx_closure_custom_jvp_ {
  void* ctx;
} mlx_closure_custom_jvp;
mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void);
int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls);
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(
    int (*fun)(
        mlx_vector_array*,
        const mlx_vector_array,
        const mlx_vector_array,
        const int*,
        size_t _num));
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(
    int (*fun)(
        mlx_vector_array*,
        const mlx_vector_array,
        const mlx_vector_array,
        const int*,
        size_t _num,
        void*),
    void* payload,
    void (*dtor)(void*));
int mlx_closure_custom_jvp_set(
    mlx_closure_custom_jvp* cls,
    const mlx_closure_custom_jvp src);
int mlx_closure_custom_jvp_apply(
    mlx_vector_array* res,
    mlx_closure_custom_jvp cls,
    const mlx_vector_array input_0,
    const mlx_vector_array input_1,
    const int* input_2,
    size_t input_2_num);

/* A vmap rule: the inputs and their vectorized axes map to the outputs
 * (*res_0) and the outputs' axes (*res_1). */
typedef struct mlx_closure_custom_vmap_ {
  void* ctx;
} mlx_closure_custom_vmap;
mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void);
int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls);
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(
    int (*fun)(
        mlx_vector_array*,
        mlx_vector_int*,
        const mlx_vector_array,
        const int*,
        size_t _num));
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(
    int (*fun)(
        mlx_vector_array*,
        mlx_vector_int*,
        const mlx_vector_array,
        const int*,
        size_t _num,
        void*),
    void* payload,
    void (*dtor)(void*));
int mlx_closure_custom_vmap_set(
    mlx_closure_custom_vmap* cls,
    const mlx_closure_custom_vmap src);
int mlx_closure_custom_vmap_apply(
    mlx_vector_array* res_0,
    mlx_vector_int* res_1,
    mlx_closure_custom_vmap cls,
    const mlx_vector_array input_0,
    const int* input_1,
    size_t input_1_num);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
