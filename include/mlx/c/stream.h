/* Streams: ordered queues of work on a device. In this library every stream
 * runs on the host CPU, including streams made for a GPU device. */
#ifndef MLX_STREAM_H
#define MLX_STREAM_H

#include <stdbool.h>

#include "mlx/c/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A stream handle; the caller frees every stream a function returns or
 * writes with mlx_stream_free. Functions that take a stream fail, with an
 * error reported, when given an empty handle. */
typedef struct mlx_stream_ {
  void* ctx;
} mlx_stream;

/* Returns an empty handle (no stream yet); freeing it is allowed. */
mlx_stream mlx_stream_new(void);
/* Returns a new stream on dev; an empty handle, with an error reported, if
 * dev is empty. */
mlx_stream mlx_stream_new_device(mlx_device dev);
/* Makes *stream a copy of src; returns 0, or 1 with an error reported. */
int mlx_stream_set(mlx_stream* stream, const mlx_stream src);
/* Frees the handle (the queue itself lives on); returns 0. */
int mlx_stream_free(mlx_stream stream);
/* Writes a description of stream, as MLX prints it, to *str; returns 0
 * or 1. */
int mlx_stream_tostring(mlx_string* str, mlx_stream stream);
/* Returns true when both handles name the same stream. */
bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs);
/* Writes the stream's device (a handle the caller frees) or its index;
 * returns 0, or 1 with an error reported for an empty handle. */
int mlx_stream_get_device(mlx_device* dev, mlx_stream stream);
int mlx_stream_get_index(int* index, mlx_stream stream);
/* Waits until all work queued on stream has finished; returns 0 or 1. */
int mlx_synchronize(mlx_stream stream);
/* Writes the current default stream of dev to *stream; returns 0 or 1. */
int mlx_get_default_stream(mlx_stream* stream, mlx_device dev);
/* Makes stream the default for its device; returns 0 or 1. */
int mlx_set_default_stream(mlx_stream stream);
/* Return a new handle on the current default CPU or GPU stream (empty,
 * with an error reported, on failure); the caller frees it. */
mlx_stream mlx_default_cpu_stream_new(void);
mlx_stream mlx_default_gpu_stream_new(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
