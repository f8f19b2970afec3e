/* mlx-c v0.6.0's cuda.h: this build has no CUDA back-end. */
#ifndef MLX_CUDA_H
#define MLX_CUDA_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* *res = false. 1 with an error if res is NULL. */
int mlx_cuda_is_available(bool *res);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
