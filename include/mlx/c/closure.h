/* Closures: a C function (with an optional payload) packaged as a value
 * that maps a list of arrays to a list of arrays. compile takes and returns
 * closures. The other closure kinds of mlx-c (kwargs, value_and_grad,
 * custom, custom_jvp, custom_vmap) belong to autodiff and are not here. */
#ifndef MLX_CLOSURE_H
#define MLX_CLOSURE_H

#include "mlx/c/array.h"
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

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
