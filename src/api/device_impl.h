/* The object behind an mlx_device handle (ctx points at it), shared by the
 * device, device info and stream code. */
#ifndef MC_API_DEVICE_IMPL_H
#define MC_API_DEVICE_IMPL_H

#include <stddef.h>

#include "mlx/c/device.h"

typedef struct mc_device {
    mlx_device_type type;
    int index;
} mc_device;

/* The object of a handle, or NULL with "[fn] ..." reported if empty. */
mc_device *mc_device_checked(mlx_device dev, const char *fn);

/* Makes *dst name (type, index): an existing object is overwritten in
 * place (as mlx-c assigns into its ctx), an empty handle gets a new one.
 * Returns 0, or 1 with an error reported. */
int mc_device_store(const char *fn, mlx_device *dst, mlx_device_type type, int index);

/* Writes MLX's printed form, "Device(cpu, 0)", into buf of n bytes. */
void mc_device_format(char *buf, size_t n, mlx_device_type type, int index);

/* Number of devices of a type on this host: one CPU, no GPU. */
int mc_device_count(mlx_device_type type);

#endif
