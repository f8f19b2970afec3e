/* Devices: where work runs. Every device here runs on the host CPU; a GPU
 * device is accepted (mlx-c programs ask for one) and its work runs on the
 * CPU as well. Also device info, a key/value description of a device. */
#ifndef MLX_DEVICE_H
#define MLX_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A device handle; the caller frees every device a function returns or
 * writes with mlx_device_free. */
typedef struct mlx_device_ {
  void* ctx;
} mlx_device;

/* Device kinds; the values are mlx-c's. */
typedef enum mlx_device_type_ { MLX_CPU, MLX_GPU } mlx_device_type;

/* Returns an empty handle (no device yet); freeing it is allowed. */
mlx_device mlx_device_new(void);
/* Returns a new device of the given type and index; an empty handle, with
 * an error reported, if it cannot be made. */
mlx_device mlx_device_new_type(mlx_device_type type, int index);
/* Frees the handle; returns 0. Freeing an empty handle is allowed. */
int mlx_device_free(mlx_device dev);
/* Makes *dev a copy of src; returns 0, or 1 with an error reported. */
int mlx_device_set(mlx_device* dev, const mlx_device src);
/* Writes a description of dev, as MLX prints it, to *str; returns 0 or 1. */
int mlx_device_tostring(mlx_string* str, mlx_device dev);
/* Returns true when both handles name the same type and index. */
bool mlx_device_equal(mlx_device lhs, mlx_device rhs);
/* Write dev's index or type; return 0, or 1 with an error reported for an
 * empty handle. */
int mlx_device_get_index(int* index, mlx_device dev);
int mlx_device_get_type(mlx_device_type* type, mlx_device dev);
/* Writes the default device to *dev (a handle the caller frees); returns 0
 * or 1. */
int mlx_get_default_device(mlx_device* dev);
/* Makes dev the default device; returns 0, or 1 with an error reported. */
int mlx_set_default_device(mlx_device dev);
/* Writes whether work can run on dev; returns 0 or 1. */
int mlx_device_is_available(bool* avail, mlx_device dev);
/* Writes how many devices of the type there are; returns 0 or 1. */
int mlx_device_count(int* count, mlx_device_type type);

/* A device description: a map from key names (such as "device_name" and
 * "architecture") to a string or a size_t value. Free it with
 * mlx_device_info_free. */
typedef struct mlx_device_info_ {
  void* ctx;
} mlx_device_info;

/* Returns an empty info handle for mlx_device_info_get to fill. */
mlx_device_info mlx_device_info_new(void);
/* Fills *info with the description of dev (replacing what it held);
 * returns 0, or 1 with an error reported. */
int mlx_device_info_get(mlx_device_info* info, mlx_device dev);
/* Frees the info and its strings; returns 0. */
int mlx_device_info_free(mlx_device_info info);
/* Writes whether key is present; returns 0, or 1 with an error reported
 * for an empty handle. */
int mlx_device_info_has_key(
    bool* exists,
    mlx_device_info info,
    const char* key);
/* Writes whether key's value is a string (else a size_t). Returns 0, 2
 * without reporting if key is absent, or 1 with an error reported. */
int mlx_device_info_is_string(
    bool* is_string,
    mlx_device_info info,
    const char* key);
/* Write key's value. The string belongs to info and lives as long as it.
 * Return 0, 2 without reporting if key is absent or holds the other kind of
 * value, or 1 with an error reported. */
int mlx_device_info_get_string(
    const char** value,
    mlx_device_info info,
    const char* key);
int mlx_device_info_get_size(
    size_t* value,
    mlx_device_info info,
    const char* key);
/* Writes every key of info to *keys (replacing what it held); returns 0
 * or 1. */
int mlx_device_info_get_keys(mlx_vector_string* keys, mlx_device_info info);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
