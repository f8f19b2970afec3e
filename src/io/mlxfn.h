/* MLX's exported-function files (.mlxfn, mlx/export.cpp of MLX 0.31):
 * reading one into graphs of our primitives over placeholder inputs, and
 * writing the traces of a function into one.
 *
 * The file: a header (MLX's version string, the number of functions, the
 * shapeless flag), then per function its keyword names, its inputs (ids,
 * shapes, dtypes), its output ids and a tape in topological order. A tape
 * record is a node (input ids, stream, primitive name, the primitive's
 * state, output shapes and dtypes), a function input, or a constant (its
 * shape, dtype and bytes, written once per file and referred to by id
 * after). Primitive names and states are MLX's; mlxfn_import.c and
 * mlxfn_export.c map them to and from ours.
 *
 * Reading checks every count, length, dtype, shape and id against the
 * bytes there are and the records met so far (an id must name an input, a
 * constant or an earlier node: so no cycle can be built), and builds each
 * node through its primitive's infer rule, whose output must match what the
 * file declares. A failure reports one "[import_function] ..." message and
 * leaves nothing allocated. */
#ifndef MC_IO_MLXFN_H
#define MC_IO_MLXFN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "io/mlxfn_bytes.h"
#include "io/stream.h"

/* The MLX release whose format is written (MLX reads any). */
#define MC_MLXFN_VERSION "0.31.1"

/* One traced function of a file. */
typedef struct mc_mlxfn_fun {
    int n_inputs;
    mc_array **inputs; /* owned: Placeholder nodes, index i for input i */
    int n_kw;
    char **kw; /* owned: names of the last n_kw inputs, in the file's order */
    int n_outputs;
    mc_array **outputs; /* owned: lazy graphs over inputs and constants */
} mc_mlxfn_fun;

typedef struct mc_mlxfn {
    bool shapeless;
    int n_fun;
    mc_mlxfn_fun *fun;
} mc_mlxfn;

/* Parses a whole file held in memory. Returns 0 and fills *out, or 1 with
 * one "[fn] ..." message reported and *out empty. */
int mc_mlxfn_parse(mc_mlxfn *out, const uint8_t *buf, size_t len, const char *fn);
/* Reads the file at path, then parses it. */
int mc_mlxfn_load(mc_mlxfn *out, const char *path, const char *fn);
/* Releases what a parsed file holds and empties it. */
void mc_mlxfn_clear(mc_mlxfn *f);

/* ---- writing ---- */

/* One trace to write, as compile's trace program holds it: slots
 * [0, n_inputs) are inputs, then n_consts constants, then one slot per
 * node, each node using only earlier slots. */
typedef struct mc_mlxfn_node {
    int prim;
    int n_in;
    const int *in; /* slots */
    const mc_meta *meta;
    const void *params;
    size_t params_size;
} mc_mlxfn_node;

typedef struct mc_mlxfn_trace {
    int n_inputs;
    const mc_meta *in_meta;
    int n_kw;
    const char *const *kw; /* names of the last n_kw inputs, sorted */
    int n_consts;
    mc_array *const *consts; /* evaluated arrays */
    int n_nodes;
    const mc_mlxfn_node *nodes;
    int n_outputs;
    const int *outputs; /* slots */
} mc_mlxfn_trace;

/* A file being written: the header is rewritten after each trace (its
 * function count changes), constants are written once per file. */
typedef struct mc_mlxfn_writer {
    mc_io_sink sink;
    bool open;
    bool shapeless;
    int count;
    uint64_t next_id;   /* ids of nodes, inputs and expansions */
    int n_written;      /* constants written so far */
    mc_array **written; /* references to them: their ids stay theirs */
    uint64_t *written_ids;
    int written_cap;
} mc_mlxfn_writer;

/* Creates path and writes the header (no function yet). 0, or 1 with
 * "[fn] Failed to open file <path>" reported. */
int mc_mlxfn_writer_open(mc_mlxfn_writer *w, const char *path, bool shapeless, const char *fn);
/* Appends one trace and updates the header. 0, or 1 with one message
 * reported: a primitive MLX cannot read ("[fn] Unable to export primitive
 * ..."), or an I/O failure. A failed trace may leave the file with a
 * partial record; the header still counts only whole traces. */
int mc_mlxfn_write_trace(mc_mlxfn_writer *w, const mc_mlxfn_trace *t, const char *fn);
/* Closes the file and drops the constants. NULL-safe on a closed writer. */
void mc_mlxfn_writer_close(mc_mlxfn_writer *w);

#endif
