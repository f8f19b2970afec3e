/* The primitives table: one entry per primitive, with its name, arity,
 * shape/dtype rule and CPU evaluation. Ops (src/ops) build nodes that name
 * a primitive; eval (src/graph/eval.c) runs them; compile replays them. */
#ifndef MC_GRAPH_PRIMITIVE_H
#define MC_GRAPH_PRIMITIVE_H

#include <stdio.h>

#include "array/array.h"

/* Primitive ids. Each family owns one block; add new ids at the end of your
 * family's block and an entry to the table in primitives.c. */
typedef enum mc_prim_id {
    MC_PRIM_NONE_ = MC_PRIM_NONE,
    /* graph and compile */
    MC_PRIM_PLACEHOLDER, /* a compile trace input: never evaluated */
    /* data movement (prims_copy.c) */
    MC_PRIM_ASTYPE,
    MC_PRIM_COPY,        /* a row-major copy of any view */
    /* views (prims_view.c) */
    MC_PRIM_RESHAPE,
    MC_PRIM_TRANSPOSE,
    MC_PRIM_BROADCAST,
    MC_PRIM_SLICE,
    MC_PRIM_AS_STRIDED,
    MC_PRIM_EXPAND_DIMS,  /* prims_view2.c */
    MC_PRIM_SQUEEZE,
    MC_PRIM_FLATTEN,
    MC_PRIM_UNFLATTEN,
    MC_PRIM_DIAGONAL,
    MC_PRIM_CONTIGUOUS,
    /* creation (prims_create.c) */
    MC_PRIM_ARANGE,
    /* elementwise unary (prims_unary.c) */
    MC_PRIM_UNARY,       /* params: mc_unary_params (which function) */
    MC_PRIM_STOP_GRADIENT, /* the identity; a view of its input */
    /* elementwise binary (prims_binary.c) */
    MC_PRIM_BINARY,      /* params: mc_binary_params (which function) */
    /* selection (prims_select.c) */
    MC_PRIM_WHERE,
    /* reductions and scans (prims_reduce.c, prims_scan.c) */
    MC_PRIM_REDUCE,
    MC_PRIM_ARGREDUCE,
    MC_PRIM_SCAN,
    MC_PRIM_SOFTMAX,
    MC_PRIM_LOGSUMEXP,
    /* indexing and layout (prims_index.c) */
    MC_PRIM_CONCATENATE,
    MC_PRIM_GATHER_AXIS, /* take / take_along_axis */
    MC_PRIM_SLICE_UPDATE,
    MC_PRIM_PAD,
    MC_PRIM_NUMBER_OF_ELEMENTS,
    /* linear algebra (prims_matmul.c) */
    MC_PRIM_MATMUL,
    MC_PRIM_ADDMM,
    /* compile */
    MC_PRIM_FUSED,       /* a fused elementwise tape (src/compile/fuse.c) */
    MC_PRIM_COUNT
} mc_prim_id;

/* Computes the output's dtype and shape from the inputs and parameters,
 * or reports "[fn] ..." and returns non-zero. Called when a node is built
 * and again when a shapeless compiled tape is replayed on new shapes. */
typedef int (*mc_infer_fn)(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);

/* Gives `out` its data computed from evaluated inputs; returns 0 or
 * reports. May donate an input's buffer (mc_out_alloc). */
typedef int (*mc_eval_fn)(mc_array *out, mc_array *const *in, int n, const void *params);

/* Prints the parameters, for graph printing; may be NULL. */
typedef void (*mc_print_fn)(FILE *f, const void *params);

typedef struct mc_prim_info {
    const char *name;   /* MLX's primitive name, e.g. "Add", "Reshape" */
    int arity;          /* inputs, or -1 for any number */
    mc_infer_fn infer;
    mc_eval_fn eval;
    mc_print_fn print;  /* optional */
    /* A name per parameter value for MC_PRIM_UNARY/BINARY/REDUCE style
     * families is given by name_of, if set; else `name` is used. */
    const char *(*name_of)(const void *params);
} mc_prim_info;

extern const mc_prim_info mc_prims[MC_PRIM_COUNT];

/* The display name of a node's primitive. */
const char *mc_prim_name(int prim, const void *params);

/* Builds a lazy node: infers its meta, allocates the descriptor, takes a
 * reference on each input and a copy of params. Returns the new array (one
 * reference, the caller's) or NULL with an error reported. */
mc_array *mc_node_new(const char *fn, int prim, mc_array *const *inputs, int n,
                      const void *params, size_t params_size);

/* As mc_node_new with a meta already computed (skips infer). */
mc_array *mc_node_new_meta(const char *fn, int prim, const mc_meta *meta, mc_array *const *inputs,
                           int n, const void *params, size_t params_size);

/* Gives out a row-major buffer, donated from one of the candidate inputs
 * when one is donatable, else freshly allocated. Returns 0 or reports. */
int mc_out_alloc(mc_array *out, mc_array *const *cands, int n, const char *fn);

#endif
