/* Readers and writers over a program's own storage (mlx-c's mlx_io_reader
 * and mlx_io_writer): a descriptor and a table of callbacks, which the
 * load and save functions of io.h call instead of reading or writing a
 * file. */
#ifndef MLX_IO_TYPES_H
#define MLX_IO_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

typedef struct mlx_io_reader_ {
  void* ctx;
} mlx_io_reader;
typedef struct mlx_io_writer_ {
  void* ctx;
} mlx_io_writer;

/* The callbacks, each given the descriptor. The loaders call is_open and
 * good before reading, read (sequential) for headers, read_at_offset for
 * array data, and good after each read: a callback reports a failed or
 * short read by making good return false. The savers call is_open, good,
 * write, and good after writing. label names the stream in messages.
 * free runs exactly once, when the last user of the reader or writer is
 * gone. seek and tell are not used by io.h (mlx-c has them for other
 * users). */
typedef struct mlx_io_vtable_ {
  bool (*is_open)(void*);
  bool (*good)(void*);
  size_t (*tell)(void*);
  void (*seek)(void*, int64_t off, int whence);
  void (*read)(void*, char* data, size_t n);
  void (*read_at_offset)(void*, char* data, size_t n, size_t off);
  void (*write)(void*, const char* data, size_t n);
  const char* (*label)(void*);
  void (*free)(void*);
} mlx_io_vtable;

/* Returns a reader over desc (an empty handle, with an error reported, if
 * out of memory or a callback the loaders need is NULL; vtable.free is not
 * called then, as the caller still owns desc). Free it with
 * mlx_io_reader_free. */
mlx_io_reader mlx_io_reader_new(void* desc, mlx_io_vtable vtable);
/* Writes the reader's descriptor to *desc_. Returns 0 or 1. */
int mlx_io_reader_descriptor(void** desc_, mlx_io_reader io);
/* Sets *str_ to the reader's label. Returns 0 or 1. */
int mlx_io_reader_tostring(mlx_string* str_, mlx_io_reader io);
/* Drops the handle's reference; vtable.free(desc) runs when nothing else
 * uses the reader (loading reads everything at once, so no array keeps it).
 * Returns 0. */
int mlx_io_reader_free(mlx_io_reader io);

/* The writer counterparts of the four functions above. */
mlx_io_writer mlx_io_writer_new(void* desc, mlx_io_vtable vtable);
int mlx_io_writer_descriptor(void** desc_, mlx_io_writer io);
int mlx_io_writer_tostring(mlx_string* str_, mlx_io_writer io);
int mlx_io_writer_free(mlx_io_writer io);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
