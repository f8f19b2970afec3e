/* mlx-c's implementation-detail transforms: the two halves of vmap, as
 * MLX's detail::vmap_trace and detail::vmap_replace, from which a binding
 * builds vmap (MLX's mx.vmap is built on them). */
#ifndef MLX_TRANSFORMS_IMPL_H
#define MLX_TRANSFORMS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/distributed_group.h"
#include "mlx/c/io_types.h"
#include "mlx/c/map.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* The second half of vmap: rebuilds the graph that mlx_detail_vmap_trace
 * traced (from s_inputs to s_outputs) on the batched inputs, each batched
 * on in_axes[i] (-1: not batched, the traced input is used), through each
 * primitive's vmap rule, and stores in *res the outputs with their batch
 * on out_axes[i] (negative: counted from the end). Nothing is evaluated.
 * Returns 0, or 1 with an error reported (counts that do not agree, an
 * axis out of range, no batched input, a primitive MLX cannot vmap). */
int mlx_detail_vmap_replace(
    mlx_vector_array* res,
    const mlx_vector_array inputs,
    const mlx_vector_array s_inputs,
    const mlx_vector_array s_outputs,
    const int* in_axes,
    size_t in_axes_num,
    const int* out_axes,
    size_t out_axes_num);
/* The first half of vmap: checks in_axes against the inputs (one per
 * input, -1 or an axis of it, one batch size), then calls fun once with
 * each batched input replaced by a placeholder of its shape without the
 * batch axis (a placeholder cannot be evaluated). *res_0 receives the
 * inputs fun was called with, *res_1 its outputs. Returns 0, or 1 with an
 * error reported (fun's own failure included). */
int mlx_detail_vmap_trace(
    mlx_vector_array* res_0,
    mlx_vector_array* res_1,
    const mlx_closure fun,
    const mlx_vector_array inputs,
    const int* in_axes,
    size_t in_axes_num);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
