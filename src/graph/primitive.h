/* What a primitive is: its descriptor (name, arity, rules), the id enum and
 * the table made from the list in prim_list.h, and building a lazy node of
 * one. Ops (src/ops) build nodes that name a primitive; eval
 * (src/graph/eval.c) runs them; compile replays them. */
#ifndef MC_GRAPH_PRIMITIVE_H
#define MC_GRAPH_PRIMITIVE_H

#include "array/array.h"
#include "graph/prim_list.h"

/* Computes the output's dtype and shape from the inputs and parameters,
 * or reports "[fn] ..." and returns non-zero. Called when a node is built
 * and again when a shapeless compiled tape is replayed on new shapes; it is
 * the one place a primitive checks its inputs against its parameters. */
typedef int (*mc_infer_fn)(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);

/* Gives `out` its data computed from evaluated inputs; returns 0 or
 * reports. May donate an input's buffer (mc_out_alloc). */
typedef int (*mc_eval_fn)(mc_array *out, mc_array *const *in, int n, const void *params);

/* Reverse mode (MLX's Primitive::vjp). `node` is the forward node (its
 * inputs, params and, for rules that reuse it, its own value) and `cot`
 * the cotangent of its output (node's shape and dtype). Stores in vjps[i]
 * a new reference to the cotangent of node->inputs[argnums[i]], with that
 * input's shape and dtype, for the nargs ascending argnums. Returns 0, or
 * non-zero with one "[fn] ..." error reported and nothing stored. */
typedef int (*mc_vjp_fn)(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                         const char *fn);

/* Forward mode (Primitive::jvp): the tangent of node's output given
 * tans[i], the tangent of node->inputs[argnums[i]] (inputs not listed
 * have none: a zero tangent). A new reference, or NULL with an error
 * reported. */
typedef mc_array *(*mc_jvp_fn)(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                               const char *fn);

/* Batching (Primitive::vmap). `node` is a node of the function traced on
 * unbatched inputs (its params, and its inputs' unbatched shapes); in[i]
 * is the batched value of node->inputs[i], its batch on axis axes[i], or
 * -1 when in[i] is not batched (then it has node->inputs[i]'s shape). At
 * least one input is batched. Stores in *out a new reference, the node's
 * output for every batch element, with its batch on axis *out_axis (-1:
 * the same for every element), and returns 0; or returns non-zero with
 * one error reported and nothing stored. A primitive MLX cannot batch
 * reports MLX's message (mc_vmap_unsupported, graph/vmap_rules.h). */
typedef int (*mc_vmap_fn)(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                          const char *fn);

/* A primitive, as MLX's Primitive class: defined in its family file beside
 * the rules it names. Every primitive has a vjp and a jvp rule (a primitive
 * whose output does not depend smoothly on its inputs, such as ArgReduce,
 * has rules giving zeros, as MLX's) and a vmap rule (one that reports
 * MLX's message where MLX cannot batch it); test_primitives checks the
 * table. */
typedef struct mc_prim_info {
    const char *name; /* MLX's primitive name, e.g. "Reshape" */
    int arity;        /* inputs, or MC_ARITY_ANY */
    mc_infer_fn infer;
    mc_eval_fn eval;
    mc_vjp_fn vjp;
    mc_jvp_fn jvp;
    mc_vmap_fn vmap;
    /* For a family primitive (Unary, Binary, Reduce...), the MLX name of the
     * function its params select; NULL where `name` is the name. */
    const char *(*name_of)(const void *params);
    /* Talks to other processes (Send, Recv, the collectives): compile
     * never merges two such steps, however alike, since each is a message
     * the other processes wait for. */
    bool communicates;
} mc_prim_info;

enum { MC_ARITY_ANY = -1 };

/* Ids: 0 is MC_PRIM_NONE (evaluated data, array.h), then one per row. */
#define MC_PRIM_ENUM_ROW(id, desc) id,
typedef enum mc_prim_id {
    MC_PRIM_NONE_ = MC_PRIM_NONE,
    MC_PRIM_LIST(MC_PRIM_ENUM_ROW) MC_PRIM_COUNT
} mc_prim_id;
#undef MC_PRIM_ENUM_ROW

#define MC_PRIM_DECLARE_ROW(id, desc) extern const mc_prim_info desc;
MC_PRIM_LIST(MC_PRIM_DECLARE_ROW)
#undef MC_PRIM_DECLARE_ROW

/* The descriptor of every id from 1 to MC_PRIM_COUNT - 1 (primitives.c);
 * entry 0 (evaluated data) is NULL. */
extern const mc_prim_info *const mc_prims[MC_PRIM_COUNT];

/* The display name of a node's primitive ("Data" for evaluated arrays). */
const char *mc_prim_name(int prim, const void *params);

/* Builds a lazy node: checks the primitive's arity, infers its meta,
 * allocates the descriptor, takes a reference on each input and a copy of
 * params. Returns the new array (one reference, the caller's) or NULL with
 * an error reported. */
mc_array *mc_node_new(const char *fn, int prim, mc_array *const *inputs, int n, const void *params,
                      size_t params_size);

/* As mc_node_new with a meta already computed (skips infer, not the arity
 * check). */
mc_array *mc_node_new_meta(const char *fn, int prim, const mc_meta *meta, mc_array *const *inputs, int n,
                           const void *params, size_t params_size);

/* Gives out a row-major buffer, donated from one of the candidate inputs
 * when one is donatable, else freshly allocated. Returns 0 or reports. */
int mc_out_alloc(mc_array *out, mc_array *const *cands, int n, const char *fn);

#endif
