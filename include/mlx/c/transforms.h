/* Transforms: evaluating graphs, and MLX's automatic differentiation
 * (vjp, jvp, value_and_grad, custom derivative rules, checkpoint). vmap is
 * in transforms_impl.h, as mlx-c declares it. */
#ifndef MLX_TRANSFORMS_H
#define MLX_TRANSFORMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* Starts evaluating every array of outputs and returns without waiting;
 * reading an array (item, data, tostring, eval) waits for it. Returns 0,
 * or 1 with an error reported. */
int mlx_async_eval(const mlx_vector_array outputs);
/* *res becomes fun with its activations not kept for the backward pass:
 * differentiating it runs fun again (MLX's checkpoint). Returns 0, or 1
 * with an error reported (fun empty). */
int mlx_checkpoint(mlx_closure* res, const mlx_closure fun);
/* *res becomes fun with the derivative rules given (each may be an empty
 * handle: then fun's own rule is used; with none, *res is fun itself).
 * fun_vjp maps (primals, cotangents, outputs) to the primals' cotangents,
 * fun_jvp (primals, tangents, argnums) to the outputs' tangents, fun_vmap
 * (inputs, their batch axes, -1 for none) to the batched outputs and
 * their axes. Returns 0 or 1. */
int mlx_custom_function(
    mlx_closure* res,
    const mlx_closure fun,
    const mlx_closure_custom fun_vjp /* may be null */,
    const mlx_closure_custom_jvp fun_jvp /* may be null */,
    const mlx_closure_custom_vmap fun_vmap /* may be null */);
/* mlx_custom_function with a vjp rule only (fun_vjp must not be empty). */
int mlx_custom_vjp(
    mlx_closure* res,
    const mlx_closure fun,
    const mlx_closure_custom fun_vjp);
/* Evaluates every array of outputs, sharing the work of common inputs, and
 * returns when all are computed. Returns 0, or 1 with an error reported
 * (the arrays then stay unevaluated). */
int mlx_eval(const mlx_vector_array outputs);
/* Forward mode: runs fun on primals and gives its outputs (*res_0) and the
 * derivative of each output along tangents (*res_1), one tangent per
 * primal with its shape. Lazy: nothing is evaluated. Returns 0, or 1 with
 * one error reported (fun failed, a primitive has no derivative, counts or
 * shapes disagree) and the results untouched. */
int mlx_jvp(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    const mlx_closure fun,
    const mlx_vector_array primals,
    const mlx_vector_array tangents);
/* *res becomes a closure that, applied to inputs, returns fun's outputs
 * and the gradients of its first output (a scalar) with respect to the
 * inputs numbered in argnums (negative numbers count from the end; checked
 * when applied). Later outputs are returned but not differentiated.
 * Returns 0, or 1 with an error reported (fun empty, no argnums). */
int mlx_value_and_grad(
    mlx_closure_value_and_grad* res,
    const mlx_closure fun,
    const int* argnums,
    size_t argnums_num);
/* Reverse mode: runs fun on primals and gives its outputs (*res_0) and the
 * vector-Jacobian products of the cotangents (one per output, of its
 * shape; an output made by mlx_stop_gradient takes none) with respect to
 * every primal (*res_1). Lazy, and failing as mlx_jvp does. */
int mlx_vjp(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    const mlx_closure fun,
    const mlx_vector_array primals,
    const mlx_vector_array cotangents);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
