/* The object behind an mlx_device handle (ctx points at it), used by the
 * device, device info and stream code. */
#ifndef MC_HANDLES_DEVICE_H
#define MC_HANDLES_DEVICE_H

#include <stdbool.h>
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

/* True for the device types mlx-c names (MLX_CPU, MLX_GPU). */
bool mc_device_type_valid(mlx_device_type type);

/* Number of devices of a type on this host: one CPU, no GPU. */
int mc_device_count(mlx_device_type type);

/* Checks that d names a device whose work can run here: the CPU, or a GPU
 * (served by the CPU). Returns 0, or 1 with "[fn] ... is not available"
 * reported for a CPU index this host lacks. */
int mc_device_usable(const char *fn, const mc_device *d);

#endif
