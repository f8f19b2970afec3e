/* mlx_cpu_isa(): the public name of the kernel set simd/ dispatch chose. */
#include "mlx/c/cpu.h"
#include "simd/simd.h"

const char *mlx_cpu_isa(void) { return mc_kernels()->isa; }
