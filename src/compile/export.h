/* Exporting functions to MLX's .mlxfn files and importing them (mlx-c's
 * export.h, whose entry points are src/api/export.c): the tracer of
 * compile turns a function into a trace program, io/mlxfn.h writes it; a
 * file read by io/mlxfn.h becomes trace programs that replay on the
 * caller's arrays, as a compiled function's traces do. */
#ifndef MC_COMPILE_EXPORT_H
#define MC_COMPILE_EXPORT_H

#include <stdbool.h>

#include "array/array.h"
#include "handles/closure.h"
#include "handles/map.h"

/* ---- exporting ---- */

typedef struct mc_exporter mc_exporter;

/* Creates path and writes an empty file (no trace yet). NULL with
 * "[fn] ..." reported on failure. Free with mc_exporter_free. */
mc_exporter *mc_exporter_new(const char *path, bool shapeless, const char *fn);
/* Traces fun on inputs shaped like args[0..n) (the positional arguments,
 * then the keyword ones in the order of their sorted names kw[0..n_kw))
 * and appends the trace to the file. fun receives all n inputs in that
 * order. Fails (one message) if a trace with the same signature is in the
 * file already, if fun fails, or if the graph holds a primitive MLX cannot
 * read. */
int mc_exporter_add(mc_exporter *x, mc_closure *fun, mc_array *const *args, int n, const char *const *kw, int n_kw,
                    const char *fn);
/* Closes the file. NULL is ignored. */
void mc_exporter_free(mc_exporter *x);

/* ---- importing ---- */

typedef struct mc_imported mc_imported;

/* Reads every trace of the file at path. NULL with "[fn] ..." reported on
 * failure. Free with mc_imported_free. */
mc_imported *mc_imported_load(const char *path, const char *fn);
void mc_imported_free(mc_imported *f);
/* Finds the trace whose inputs match args[0..n) then kwargs' values in the
 * sorted order of their names (kwargs may be NULL), as MLX's imported
 * functions do, and builds its outputs over them: *outs receives *n_out
 * new references in a new array (mc_xfree it). 0, or 1 with "[fn] ..."
 * reported. */
int mc_imported_call(const mc_imported *f, mc_array *const *args, int n, const mc_map *kwargs, mc_array ***outs,
                     int *n_out, const char *fn);

#endif
