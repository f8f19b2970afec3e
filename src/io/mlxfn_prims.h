/* The per-primitive halves of the .mlxfn format, shared by the reader
 * (mlxfn_read.c), the writer (mlxfn_write.c) and the tables that map MLX's
 * primitives to ours (mlxfn_import.c) and ours to MLX's (mlxfn_export.c). */
#ifndef MC_IO_MLXFN_PRIMS_H
#define MC_IO_MLXFN_PRIMS_H

#include "io/mlxfn.h"

/* ---- import: one tape record of MLX's into nodes of ours ---- */

typedef struct mc_mlxfn_imp {
    mc_rd *rd; /* at the primitive's state */
    const char *name;
    mc_array *const *in;
    int n_in;
    /* set by mc_mlxfn_imp_outputs */
    int n_out;
    mc_meta *out;      /* what the record declares for each output */
    mc_array **res;    /* n_out slots: the importer stores a new reference in each */
    uint64_t *out_ids; /* each output's id; NULL when the record has one */
} mc_mlxfn_imp;

/* Reads the record's outputs (they follow the state): an importer calls it
 * once it has read its state, and before building. 0 or 1 (reported). */
int mc_mlxfn_imp_outputs(mc_mlxfn_imp *c);

/* Reads the state of MLX's primitive `name`, then its outputs, then
 * stores the nodes that compute them in c->res. 0 or 1 (reported; res
 * entries already stored are the caller's to release). */
typedef int (*mc_mlxfn_import_fn)(mc_mlxfn_imp *c);

/* The importer of an MLX primitive name, or NULL if we read none. */
mc_mlxfn_import_fn mc_mlxfn_importer(const char *name);

/* ---- export: one node of ours into tape records of MLX's ---- */

typedef struct mc_mlxfn_exp mc_mlxfn_exp;

/* Writes the records computing node (its inputs named by in_ids) and
 * returns the id of the last one in *id, 0 or 1 (reported). */
typedef int (*mc_mlxfn_export_fn)(mc_mlxfn_exp *x, const mc_mlxfn_node *node, const uint64_t *in_ids,
                                  const mc_meta *in_meta, uint64_t *id);

/* The exporter of one of our primitives, or NULL if MLX has none. */
mc_mlxfn_export_fn mc_mlxfn_exporter(int prim);

/* Record writers for exporters (mlxfn_write.c). A node record:
 * mc_mlxfn_begin, the state written to *mc_mlxfn_state(x), mc_mlxfn_end
 * (its one output). Returns the new record's id. */
uint64_t mc_mlxfn_begin(mc_mlxfn_exp *x, const char *name, int n_in, const uint64_t *in_ids);
mc_wb *mc_mlxfn_state(mc_mlxfn_exp *x);
void mc_mlxfn_end(mc_mlxfn_exp *x, const mc_meta *out);
/* Ends the record begun as id with n outputs (metas out): their ids in
 * ids[0..n), ids[0] = id. */
void mc_mlxfn_end_multi(mc_mlxfn_exp *x, uint64_t id, int n, const mc_meta *out, uint64_t *ids);
/* Where one MLX record of several outputs stands for several nodes of
 * ours (one per output), the first writes it and remembers its output ids
 * under a key of at most 32 bytes; the others find them. get: true and
 * ids filled if key was put in this trace. */
bool mc_mlxfn_memo_get(mc_mlxfn_exp *x, const void *key, size_t n, uint64_t ids[4]);
void mc_mlxfn_memo_put(mc_mlxfn_exp *x, const void *key, size_t n, const uint64_t ids[4]);
/* A node with no state in one call. */
uint64_t mc_mlxfn_node1(mc_mlxfn_exp *x, const char *name, int n_in, const uint64_t *in_ids, const mc_meta *out);
/* A constant record of a 0-d array of dtype holding v (as astype converts
 * a float64). Its id, or 0 with an error reported. */
uint64_t mc_mlxfn_scalar(mc_mlxfn_exp *x, double v, mlx_dtype dtype);
/* A constant record of the n values v as a 1-d array of dtype. Its id,
 * or 0 with an error reported. */
uint64_t mc_mlxfn_floats(mc_mlxfn_exp *x, const float *v, int n, mlx_dtype dtype);
/* A constant record of a 0-d integer array of dtype with every bit set.
 * Its id, or 0 with an error reported. */
uint64_t mc_mlxfn_all_ones(mc_mlxfn_exp *x, mlx_dtype dtype);
/* The function name for messages. */
const char *mc_mlxfn_fn(const mc_mlxfn_exp *x);
/* True if the file is written shapeless. */
bool mc_mlxfn_shapeless(const mc_mlxfn_exp *x);

#endif
