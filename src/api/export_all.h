/* Force-included first in every library source (meson.build): declares the
 * whole public API with default visibility, so that with -fvisibility=hidden
 * exactly the mlx-c names (and mlx_cpu_* of cpu.h) are exported. */
#ifndef MC_API_EXPORT_ALL_H
#define MC_API_EXPORT_ALL_H

#pragma GCC visibility push(default)
#include "mlx/c/mlx.h"
#include "mlx/c/cpu.h"
#pragma GCC visibility pop

#endif
