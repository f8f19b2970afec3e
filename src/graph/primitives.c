/* The table of primitives, made from the list (prim_list.h): entry id is
 * the descriptor the row names. test/test_primitives.c checks that every
 * entry is complete. */
#include "graph/primitive.h"

#define MC_PRIM_TABLE_ROW(id, desc) [id] = &desc,
const mc_prim_info *const mc_prims[MC_PRIM_COUNT] = {MC_PRIM_LIST(MC_PRIM_TABLE_ROW)};
#undef MC_PRIM_TABLE_ROW
