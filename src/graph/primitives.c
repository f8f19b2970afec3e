/* The primitives table: one entry per primitive id (primitive.h). Each
 * family's entries sit in its own block; their functions live in the
 * family's prims_*.c file. */
#include "graph/primitive.h"
#include "graph/prims.h"

const mc_prim_info mc_prims[MC_PRIM_COUNT] = {
    [MC_PRIM_NONE_] = {"Data", 0, NULL, NULL, NULL, NULL},
    [MC_PRIM_PLACEHOLDER] = {"Placeholder", 0, mc_placeholder_infer, mc_placeholder_eval, NULL, NULL},
    /* data movement */
    /* views */
    /* creation */
    /* elementwise unary */
    /* elementwise binary */
    /* selection */
    /* reductions and scans */
    /* indexing and layout */
    /* linear algebra */
    /* compile */
};

/* Every id below MC_PRIM_COUNT must have an entry with infer and eval, or
 * a node of it could be built and crash; test_graph checks the table. */
_Static_assert(sizeof mc_prims / sizeof mc_prims[0] == MC_PRIM_COUNT, "one entry per primitive");
