/* Loading and saving arrays: NumPy's .npy format (one array) and the
 * safetensors format (named arrays and string metadata), from and to files
 * or the program's own readers and writers (io_types.h).
 *
 * Loading reads the whole payload into the arrays' buffers at once (one
 * copy, no staging buffer), after checking every size and offset the file
 * states against the bytes it has: a malformed file gives one error and
 * no array. Formats and errors follow MLX: .npy of every MLX dtype
 * (bfloat16 as "<V2", as MLX writes it), either byte order, Fortran order;
 * safetensors with MLX's dtype names ("BF16", "C64", "F8_E4M3" read as
 * uint8). Saving evaluates the arrays; an array of no bytes cannot be
 * saved, as in MLX. */
#ifndef MLX_IO_H
#define MLX_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/io_types.h"
#include "mlx/c/map.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* Loads the .npy array of in_stream into *res (replacing what it held).
 * Returns 0, or 1 with one error reported. */
int mlx_load_reader(
    mlx_array* res,
    mlx_io_reader in_stream,
    const mlx_stream s);
/* Loads the .npy file `file` (the name as given). */
int mlx_load(mlx_array* res, const char* file, const mlx_stream s);
/* Loads the arrays of a safetensors stream into *res_0 and its metadata
 * into *res_1 (both replaced; empty handles get new maps). Returns 0, or 1
 * with one error reported and both maps unchanged. */
int mlx_load_safetensors_reader(
    mlx_map_string_to_array* res_0,
    mlx_map_string_to_string* res_1,
    mlx_io_reader in_stream,
    const mlx_stream s);
int mlx_load_safetensors(
    mlx_map_string_to_array* res_0,
    mlx_map_string_to_string* res_1,
    const char* file,
    const mlx_stream s);
/* Writes a as .npy to out_stream (Fortran order if its data is column-major,
 * as MLX). Returns 0, or 1 with an error reported. */
int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a);
/* Saves a to `file`, with ".npy" appended if the name does not end so. */
int mlx_save(const char* file, const mlx_array a);
/* Writes the arrays of param with metadata as safetensors: keys sorted,
 * data in key order. Returns 0, or 1 with an error reported (an empty
 * array, a dtype safetensors lacks such as float64, a key or value that is
 * not UTF-8). */
int mlx_save_safetensors_writer(
    mlx_io_writer in_stream,
    const mlx_map_string_to_array param,
    const mlx_map_string_to_string metadata);
/* Saves to `file`, with ".safetensors" appended if it does not end so. */
int mlx_save_safetensors(
    const char* file,
    const mlx_map_string_to_array param,
    const mlx_map_string_to_string metadata);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
