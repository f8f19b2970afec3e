/* mlx-c v0.6.0's metal.h: this build has no Metal back-end, as MLX's
 * CPU-only build. */
#ifndef MLX_METAL_H
#define MLX_METAL_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* *res = false. 1 with an error if res is NULL. */
int mlx_metal_is_available(bool *res);
/* Do nothing and return 0, as MLX's CPU-only build does (there is no GPU
 * trace to capture); path is not read. */
int mlx_metal_start_capture(const char *path);
int mlx_metal_stop_capture(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
