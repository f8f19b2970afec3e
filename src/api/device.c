/* Owns mlx-c's device.h functions: devices as (type, index) pairs
 * (handles/device.h), the process-wide default device and device
 * availability. This host has one CPU device and no GPU. A GPU
 * device can still be named (mlx-c programs written for Apple silicon ask
 * for one) and made the default: that request is accepted and served by
 * the CPU, so the default device stays Device(cpu, 0). Queries stay honest:
 * a GPU is reported as unavailable and counted as zero. */
#include "mlx/c/device.h"

#include "handles/device.h"
#include "handles/string.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

mlx_device mlx_device_new(void) { return (mlx_device){NULL}; }

mlx_device mlx_device_new_type(mlx_device_type type, int index)
{
    static const char fn[] = "mlx_device_new_type";
    mlx_device dev = {NULL};
    if (!mc_device_type_valid(type))
        mc_error("[%s] Invalid device type %d.", fn, (int)type);
    else if (index < 0)
        mc_error("[%s] Device index %d is negative.", fn, index);
    else
        mc_device_store(fn, &dev, type, index);
    return dev;
}

int mlx_device_free(mlx_device dev)
{
    mc_xfree(dev.ctx);
    return 0;
}

int mlx_device_set(mlx_device *dev, const mlx_device src)
{
    static const char fn[] = "mlx_device_set";
    mc_device *s = mc_device_checked(src, fn);
    return s ? mc_device_store(fn, dev, s->type, s->index) : 1;
}

int mlx_device_tostring(mlx_string *str, mlx_device dev)
{
    static const char fn[] = "mlx_device_tostring";
    mc_device *d = mc_device_checked(dev, fn);
    if (!d)
        return 1;
    char text[64];
    mc_device_format(text, sizeof text, d->type, d->index);
    return mc_string_assign(fn, str, text);
}

bool mlx_device_equal(mlx_device lhs, mlx_device rhs)
{
    static const char fn[] = "mlx_device_equal";
    mc_device *l = mc_device_checked(lhs, fn);
    mc_device *r = l ? mc_device_checked(rhs, fn) : NULL;
    return l && r && l->type == r->type && l->index == r->index;
}

int mlx_device_get_index(int *index, mlx_device dev)
{
    static const char fn[] = "mlx_device_get_index";
    if (!index)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device *d = mc_device_checked(dev, fn);
    if (!d)
        return 1;
    *index = d->index;
    return 0;
}

int mlx_device_get_type(mlx_device_type *type, mlx_device dev)
{
    static const char fn[] = "mlx_device_get_type";
    if (!type)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device *d = mc_device_checked(dev, fn);
    if (!d)
        return 1;
    *type = d->type;
    return 0;
}

int mlx_get_default_device(mlx_device *dev)
{
    /* The CPU is the only device that runs work, so it is always the
     * default (see mlx_set_default_device). */
    return mc_device_store("mlx_get_default_device", dev, MLX_CPU, 0);
}

int mlx_set_default_device(mlx_device dev)
{
    static const char fn[] = "mlx_set_default_device";
    mc_device *d = mc_device_checked(dev, fn);
    if (!d)
        return 1;
    /* A GPU is accepted: its work is served by the CPU. */
    return mc_device_usable(fn, d);
}

int mlx_device_is_available(bool *avail, mlx_device dev)
{
    static const char fn[] = "mlx_device_is_available";
    if (!avail)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device *d = mc_device_checked(dev, fn);
    if (!d)
        return 1;
    *avail = d->index < mc_device_count(d->type);
    return 0;
}

int mlx_device_count(int *count, mlx_device_type type)
{
    static const char fn[] = "mlx_device_count";
    if (!count)
        return mc_error("[%s] The output pointer is NULL.", fn);
    if (!mc_device_type_valid(type))
        return mc_error("[%s] Invalid device type %d.", fn, (int)type);
    *count = mc_device_count(type);
    return 0;
}
