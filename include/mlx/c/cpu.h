/* mlx-cpu's own additions to the mlx-c API. Nothing else in include/mlx/c
 * differs from mlx-c v0.6.0; everything here is named mlx_cpu_*. */
#ifndef MLX_CPU_H
#define MLX_CPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* Returns the last error message reported on the calling thread ("" if none).
 * The string belongs to the library and stays valid until the thread's next
 * failing call. */
const char *mlx_cpu_last_error(void);

/* Forgets the calling thread's last error message. */
void mlx_cpu_clear_last_error(void);

/* Returns the number of worker threads the library uses for large kernels. */
int mlx_cpu_get_num_threads(void);

/* Sets the number of worker threads (1 or more); returns 0, or 1 with an
 * error reported if n is out of range. */
int mlx_cpu_set_num_threads(int n);

/* Returns the name of the SIMD kernel set in use: "scalar", "avx2",
 * "avx512" or "neon". The string is static. */
const char *mlx_cpu_isa(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
