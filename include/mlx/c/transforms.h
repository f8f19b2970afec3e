/* Transforms: evaluating graphs. Only evaluation is here; mlx-c's autodiff
 * transforms (vjp, jvp, value_and_grad, checkpoint, custom functions) are
 * not declared yet (partial, listed in docs/api.md). */
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
/* Evaluates every array of outputs, sharing the work of common inputs, and
 * returns when all are computed. Returns 0, or 1 with an error reported
 * (the arrays then stay unevaluated). */
int mlx_eval(const mlx_vector_array outputs);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
