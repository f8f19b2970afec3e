/* The primitives table: one entry per primitive id (primitive.h). Each
 * family's entries sit in its own block; their functions live in the
 * family's prims_*.c file. */
#include "graph/primitive.h"
#include "graph/prims.h"

const mc_prim_info mc_prims[MC_PRIM_COUNT] = {
    [MC_PRIM_NONE_] = {"Data", 0, NULL, NULL, NULL, NULL},
    [MC_PRIM_PLACEHOLDER] = {"Placeholder", 0, mc_placeholder_infer, mc_placeholder_eval, NULL, NULL},
    /* data movement */
    [MC_PRIM_ASTYPE] = {"AsType", 1, mc_astype_infer, mc_astype_eval, NULL, NULL},
    [MC_PRIM_COPY] = {"Copy", 1, mc_astype_infer, mc_astype_eval, NULL, NULL},
    /* views */
    [MC_PRIM_RESHAPE] = {"Reshape", 1, mc_reshape_infer, mc_reshape_eval, mc_dims_print, NULL},
    [MC_PRIM_TRANSPOSE] = {"Transpose", 1, mc_transpose_infer, mc_transpose_eval, mc_dims_print, NULL},
    [MC_PRIM_BROADCAST] = {"Broadcast", 1, mc_broadcast_infer, mc_broadcast_eval, mc_dims_print, NULL},
    /* creation */
    [MC_PRIM_ARANGE] = {"Arange", 0, mc_arange_infer, mc_arange_eval, NULL, NULL},
    /* elementwise unary */
    /* elementwise binary */
    [MC_PRIM_BINARY] = {"Binary", 2, mc_binary_infer, mc_binary_eval, NULL, mc_binary_name},
    /* selection */
    /* reductions and scans */
    /* indexing and layout */
    /* linear algebra */
    /* compile */
};

/* Every id below MC_PRIM_COUNT must have an entry with infer and eval, or
 * a node of it could be built and crash; test_graph checks the table. */
_Static_assert(sizeof mc_prims / sizeof mc_prims[0] == MC_PRIM_COUNT, "one entry per primitive");
