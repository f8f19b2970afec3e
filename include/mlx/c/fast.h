/* Fast fused operations: mlx-c v0.6.0's fast.h, computing what MLX 0.31.1's
 * CPU build computes (its fallback compositions: float32 arithmetic inside
 * the norms and attention for the half types, the result rounded to the
 * output type as MLX rounds it).
 *
 * The array functions follow ops.h's contract: a lazy result into *res
 * (the caller frees it); 0, or 1 with one error reported and *res
 * unchanged. An empty handle marks an optional argument as absent.
 *
 * The Metal and CUDA custom kernels exist so that programs written for
 * them build and link: their configuration objects store what they are
 * given (each _new is freed by its _free), and applying a kernel reports
 * MLX's CPU-only error ("[metal_kernel] No Metal back-end." /
 * "[cuda_kernel] No CUDA back-end."). MLX's CPU build already fails when
 * the kernel is made; here making one succeeds and apply fails. */
#ifndef MLX_FAST_H
#define MLX_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/optional.h"
#include "mlx/c/stream.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ---- CUDA custom kernels (not runnable on this build) ---- */

typedef struct mlx_fast_cuda_kernel_config_ {
    void *ctx;
} mlx_fast_cuda_kernel_config;
/* A new, empty configuration (ctx NULL with an error reported when out of
 * memory); free it with mlx_fast_cuda_kernel_config_free. */
mlx_fast_cuda_kernel_config mlx_fast_cuda_kernel_config_new(void);
/* Frees what _new made (an empty handle is ignored). */
void mlx_fast_cuda_kernel_config_free(mlx_fast_cuda_kernel_config cls);
/* Each setter stores its values in cls (shape and names are copied);
 * 0, or 1 with an error for an empty handle, a NULL shape of non-zero size
 * or name, or an unknown dtype. */
int mlx_fast_cuda_kernel_config_add_output_arg(mlx_fast_cuda_kernel_config cls, const int *shape, size_t size,
                                               mlx_dtype dtype);
int mlx_fast_cuda_kernel_config_set_grid(mlx_fast_cuda_kernel_config cls, int grid1, int grid2, int grid3);
int mlx_fast_cuda_kernel_config_set_thread_group(mlx_fast_cuda_kernel_config cls, int thread1, int thread2,
                                                 int thread3);
int mlx_fast_cuda_kernel_config_set_init_value(mlx_fast_cuda_kernel_config cls, float value);
int mlx_fast_cuda_kernel_config_set_verbose(mlx_fast_cuda_kernel_config cls, bool verbose);
int mlx_fast_cuda_kernel_config_add_template_arg_dtype(mlx_fast_cuda_kernel_config cls, const char *name,
                                                       mlx_dtype dtype);
int mlx_fast_cuda_kernel_config_add_template_arg_int(mlx_fast_cuda_kernel_config cls, const char *name, int value);
int mlx_fast_cuda_kernel_config_add_template_arg_bool(mlx_fast_cuda_kernel_config cls, const char *name,
                                                      bool value);

typedef struct mlx_fast_cuda_kernel_ {
    void *ctx;
} mlx_fast_cuda_kernel;
/* A kernel object holding copies of its name, argument names and sources
 * (header may be NULL); free it with mlx_fast_cuda_kernel_free. ctx NULL
 * with an error reported for a NULL name or source or an empty names
 * handle. */
mlx_fast_cuda_kernel mlx_fast_cuda_kernel_new(const char *name, const mlx_vector_string input_names,
                                              const mlx_vector_string output_names, const char *source,
                                              const char *header, bool ensure_row_contiguous, int shared_memory);
void mlx_fast_cuda_kernel_free(mlx_fast_cuda_kernel cls);
/* Always 1: reports "[cuda_kernel] No CUDA back-end." (or the empty
 * handle it was given); *outputs is unchanged. */
int mlx_fast_cuda_kernel_apply(mlx_vector_array *outputs, mlx_fast_cuda_kernel cls, const mlx_vector_array inputs,
                               const mlx_fast_cuda_kernel_config config, const mlx_stream stream);

/* ---- normalisation ---- */

/* MLX's layer_norm over the last axis of x (at least 1-D): (x - mean) *
 * rsqrt(var + eps) in float32, rounded to the output type, then times
 * weight and plus bias (1-D, the size of x's last axis) in that type. The
 * output type is x's promoted with weight and bias; it must be floating. */
int mlx_fast_layer_norm(mlx_array *res, const mlx_array x, const mlx_array weight /* may be null */,
                        const mlx_array bias /* may be null */, float eps, const mlx_stream s);

/* ---- Metal custom kernels (not runnable on this build) ---- */

typedef struct mlx_fast_metal_kernel_config_ {
    void *ctx;
} mlx_fast_metal_kernel_config;
/* As the CUDA configuration functions above. */
mlx_fast_metal_kernel_config mlx_fast_metal_kernel_config_new(void);
void mlx_fast_metal_kernel_config_free(mlx_fast_metal_kernel_config cls);
int mlx_fast_metal_kernel_config_add_output_arg(mlx_fast_metal_kernel_config cls, const int *shape, size_t size,
                                                mlx_dtype dtype);
int mlx_fast_metal_kernel_config_set_grid(mlx_fast_metal_kernel_config cls, int grid1, int grid2, int grid3);
int mlx_fast_metal_kernel_config_set_thread_group(mlx_fast_metal_kernel_config cls, int thread1, int thread2,
                                                  int thread3);
int mlx_fast_metal_kernel_config_set_init_value(mlx_fast_metal_kernel_config cls, float value);
int mlx_fast_metal_kernel_config_set_verbose(mlx_fast_metal_kernel_config cls, bool verbose);
int mlx_fast_metal_kernel_config_add_template_arg_dtype(mlx_fast_metal_kernel_config cls, const char *name,
                                                        mlx_dtype dtype);
int mlx_fast_metal_kernel_config_add_template_arg_int(mlx_fast_metal_kernel_config cls, const char *name,
                                                      int value);
int mlx_fast_metal_kernel_config_add_template_arg_bool(mlx_fast_metal_kernel_config cls, const char *name,
                                                       bool value);

typedef struct mlx_fast_metal_kernel_ {
    void *ctx;
} mlx_fast_metal_kernel;
/* As mlx_fast_cuda_kernel_new. */
mlx_fast_metal_kernel mlx_fast_metal_kernel_new(const char *name, const mlx_vector_string input_names,
                                                const mlx_vector_string output_names, const char *source,
                                                const char *header, bool ensure_row_contiguous,
                                                bool atomic_outputs);
void mlx_fast_metal_kernel_free(mlx_fast_metal_kernel cls);
/* Always 1: reports "[metal_kernel] No Metal back-end." (or the empty
 * handle it was given); *outputs is unchanged. */
int mlx_fast_metal_kernel_apply(mlx_vector_array *outputs, mlx_fast_metal_kernel cls,
                                const mlx_vector_array inputs, const mlx_fast_metal_kernel_config config,
                                const mlx_stream stream);

/* MLX's rms_norm over the last axis of x (at least 1-D): x * rsqrt(mean(x^2)
 * + eps) in float32, rounded to the output type, then times weight (1-D,
 * the size of x's last axis) in that type. Output type: x's promoted with
 * weight's; it must be floating. */
int mlx_fast_rms_norm(mlx_array *res, const mlx_array x, const mlx_array weight /* may be null */, float eps,
                      const mlx_stream s);

/* MLX's rotary embedding of x (floating, at least 3-D: batch, ..., sequence,
 * features) on its first `dims` features (even, 0 < dims <= last axis; the
 * rest pass through): position (t + offset) * scale, angles position /
 * base^(2i/dims), or position / freqs[i] with freqs (float, dims/2
 * values) given instead of base (exactly one of the two). traditional
 * rotates adjacent pairs, else the two halves. */
int mlx_fast_rope(mlx_array *res, const mlx_array x, int dims, bool traditional, mlx_optional_float base,
                  float scale, int offset, const mlx_array freqs /* may be null */, const mlx_stream s);
/* As mlx_fast_rope with the offset an integer array: a scalar, or one
 * value per batch entry (x's first axis). */
int mlx_fast_rope_dynamic(mlx_array *res, const mlx_array x, int dims, bool traditional, mlx_optional_float base,
                          float scale, const mlx_array offset, const mlx_array freqs /* may be null */,
                          const mlx_stream s);

/* MLX's scaled_dot_product_attention: softmax(scale * q @ k^T + mask) @ v
 * for q (B, Hq, Lq, D), k (B, Hkv, Lk, D), v (B, Hkv, Lk, Dv), Hq a
 * multiple of Hkv (grouped-query attention). mask_mode "" (none), "causal"
 * (query i sees keys up to i + Lk - Lq; no mask_arr) or "array" (mask_arr
 * broadcastable to (B, Hq, Lq, Lk): boolean keeps where true, else added).
 * sinks (Hq values) add one logit per head to every softmax row. Masked
 * scores take the lowest finite value, so a row masked everywhere averages
 * v, as MLX. Runs tiled with an online softmax: no Lq x Lk matrix is made.
 * Result (B, Hq, Lq, Dv) in the promoted type of q, k and v. */
int mlx_fast_scaled_dot_product_attention(mlx_array *res, const mlx_array queries, const mlx_array keys,
                                          const mlx_array values, float scale, const char *mask_mode,
                                          const mlx_array mask_arr /* may be null */,
                                          const mlx_array sinks /* may be null */, const mlx_stream s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
