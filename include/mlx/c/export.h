/* Exporting functions to MLX's .mlxfn files and importing them back: the
 * format of MLX 0.31 (mlx/export.cpp), so a function exported by MLX
 * (Python's mx.export_function, or mlx-c) runs here, and one exported here
 * runs in MLX.
 *
 * Exporting traces the function once per call on arrays shaped like the
 * given ones (placeholders: its body runs, nothing is evaluated but the
 * constants it captures) and writes the graph as MLX primitives. An
 * exporter keeps one file open and appends a trace per call, as MLX's
 * FunctionExporter. Importing reads every trace; applying it picks the
 * trace whose inputs match (positional, then keyword arrays in the sorted
 * order of their names; dtypes and ndims, and shapes unless exported
 * shapeless) and builds its outputs lazily over the given arrays.
 *
 * Not every primitive maps both ways: docs/api.md lists those that do. A
 * file naming a primitive mlx-cpu does not read, or a malformed one, fails
 * to import with one message and nothing read out of its bounds. */
#ifndef MLX_EXPORT_H
#define MLX_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/distributed_group.h"
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

/* Traces fun on args and writes the trace to file (created or truncated).
 * With shapeless, the import accepts inputs of other shapes (same dtypes
 * and ndims). Returns 0, or 1 with one error reported. */
int mlx_export_function(
    const char* file,
    const mlx_closure fun,
    const mlx_vector_array args,
    bool shapeless);
/* As mlx_export_function for a function of positional and keyword arrays;
 * the keyword names are stored with the trace. */
int mlx_export_function_kwargs(
    const char* file,
    const mlx_closure_kwargs fun,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs,
    bool shapeless);

typedef struct mlx_function_exporter_ {
  void* ctx;
} mlx_function_exporter;
/* Creates file for the traces of fun, written by each apply. Holds a
 * reference to fun. Returns the exporter (free it with
 * mlx_function_exporter_free, which closes the file), or an empty handle
 * (ctx NULL) with one error reported. */
mlx_function_exporter mlx_function_exporter_new(
    const char* file,
    const mlx_closure fun,
    bool shapeless);
int mlx_function_exporter_free(mlx_function_exporter xfunc);
/* Appends a trace of the function on args. Fails (1, one message) if a
 * trace with the same signature was written already. */
int mlx_function_exporter_apply(
    const mlx_function_exporter xfunc,
    const mlx_vector_array args);
/* As apply; the function gets args only, but the trace takes the keyword
 * arrays as named inputs too (MLX's exporter of a positional function). */
int mlx_function_exporter_apply_kwargs(
    const mlx_function_exporter xfunc,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs);

typedef struct mlx_imported_function_ {
  void* ctx;
} mlx_imported_function;
/* Reads every trace of file. Returns the function (free it with
 * mlx_imported_function_free), or an empty handle with one error
 * reported. */
mlx_imported_function mlx_imported_function_new(const char* file);
int mlx_imported_function_free(mlx_imported_function xfunc);
/* Calls the trace matching args: *res receives its outputs (lazy arrays).
 * Returns 0, or 1 with one error reported and *res unchanged. */
int mlx_imported_function_apply(
    mlx_vector_array* res,
    const mlx_imported_function xfunc,
    const mlx_vector_array args);
/* As apply, with keyword arrays too. */
int mlx_imported_function_apply_kwargs(
    mlx_vector_array* res,
    const mlx_imported_function xfunc,
    const mlx_vector_array args,
    const mlx_map_string_to_array kwargs);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
