/* Owns the (type, index) object behind mlx_device handles (device.h) and
 * what this host has: one CPU device and no GPU. src/api/device.c holds the
 * handle functions. */
#include "handles/device.h"

#include <stdio.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

bool mc_device_type_valid(mlx_device_type type) { return type == MLX_CPU || type == MLX_GPU; }

mc_device *mc_device_checked(mlx_device dev, const char *fn)
{
    if (!dev.ctx)
        mc_error("[%s] Expected a non-empty mlx_device (the handle's ctx is NULL).", fn);
    return dev.ctx;
}

int mc_device_store(const char *fn, mlx_device *dst, mlx_device_type type, int index)
{
    if (!dst)
        return mc_error("[%s] The output device pointer is NULL.", fn);
    mc_device *d = dst->ctx;
    if (!d) {
        d = mc_xmalloc(sizeof *d);
        if (!d)
            return mc_error_oom(fn, sizeof *d);
        dst->ctx = d;
    }
    d->type = type;
    d->index = index;
    return 0;
}

void mc_device_format(char *buf, size_t n, mlx_device_type type, int index)
{
    snprintf(buf, n, "Device(%s, %d)", type == MLX_GPU ? "gpu" : "cpu", index);
}

int mc_device_count(mlx_device_type type) { return type == MLX_CPU ? 1 : 0; }

int mc_device_usable(const char *fn, const mc_device *d)
{
    if (d->type == MLX_CPU && d->index >= mc_device_count(MLX_CPU)) {
        char text[64];
        mc_device_format(text, sizeof text, d->type, d->index);
        return mc_error("[%s] %s is not available: this host has %d cpu device.", fn, text,
                        mc_device_count(MLX_CPU));
    }
    return 0;
}
