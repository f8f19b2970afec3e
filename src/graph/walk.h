/* The one post-order walk over a lazy graph: every node reachable from the
 * roots once, each after its inputs, without recursion (a chain of a
 * million nodes must not grow the C stack). Used by evaluation (eval.c),
 * graph export (graph_export.c) and compile's recording of a trace
 * (compile/record.c). The walk holds no references: the caller keeps the
 * roots, and so the whole graph, alive while it runs. */
#ifndef MC_GRAPH_WALK_H
#define MC_GRAPH_WALK_H

#include <stdbool.h>

#include "array/array.h"
#include "runtime/darray.h"
#include "runtime/ptrmap.h"

/* What to do with a node met for the first time (it is recorded either
 * way). */
enum {
    MC_WALK_LEAF = 1,    /* left at once; its inputs are not walked */
    MC_WALK_DESCEND = 2, /* left after all its inputs */
};

typedef struct mc_walk_visitor {
    /* Decides about a node met for the first time. Returns an MC_WALK_
     * value and sets *val, the value the walk keeps for the node, or
     * returns -1 to stop the walk (with an error reported). Must not start
     * or change another walk over the same map. NULL: descend into every
     * node, and keep no values (mc_walk_value then finds none). */
    int (*enter)(void *ctx, mc_array *node, int *val);
    /* Visits a recorded node after its inputs (NULL: nothing to do).
     * Returns 0, or non-zero to stop the walk (with an error reported). */
    int (*leave)(void *ctx, mc_array *node, int val);
    void *ctx;
} mc_walk_visitor;

typedef struct mc_walk {
    mc_walk_visitor visitor;
    const char *fn;    /* names the failing call in an out-of-memory error */
    bool pending_only; /* evaluated arrays are not part of the walk */
    mc_ptrmap seen;    /* recorded node -> its value (a set without enter) */
    mc_darray stack;   /* frames of nodes being descended */
    mc_darray *order;  /* when set, each node left is appended (mc_walk_collect) */
} mc_walk;

/* With pending_only, evaluated arrays (which have no inputs) are passed
 * over before anything is looked up: eval's walk, where most leaves are
 * data. */
void mc_walk_init(mc_walk *w, const mc_walk_visitor *visitor, bool pending_only, const char *fn);

/* Walks from root (NULL, a node already recorded, or an evaluated one
 * with pending_only, adds nothing), so that several calls walk a graph
 * with several outputs in the order the caller wants. Returns 0, or 1 when the visitor stopped the walk or memory
 * ran out (reported as "[fn] ..."); the walk may then only be freed. */
int mc_walk_from(mc_walk *w, mc_array *root);

/* The value kept for a recorded node, or NULL if it was not recorded. */
static inline int *mc_walk_value(const mc_walk *w, const mc_array *node) { return mc_ptrmap_get(&w->seen, node); }

void mc_walk_free(mc_walk *w);

/* Appends to *order (a darray of mc_array *) every node reachable from
 * roots[0..n) in post-order, or with pending_only only the nodes still to
 * evaluate (evaluated arrays have no inputs, so nothing beyond them is
 * lost). NULL roots are skipped. Returns 0, or 1 with "[fn] ..." reported
 * (*order then holds a prefix; the caller frees it either way). */
int mc_walk_collect(mc_array *const *roots, size_t n, bool pending_only, mc_darray *order, const char *fn);

#endif
