/* The part vjp and jvp share: running the function on copies of the
 * primals, and ordering the graph between those copies and the outputs. */
#ifndef MC_TRANSFORMS_TAPE_H
#define MC_TRANSFORMS_TAPE_H

#include "graph/walk.h"
#include "runtime/darray.h"
#include "transforms/autodiff.h"

/* Marks of a node in a tape's map. */
enum {
    MC_TAPE_SEEN = 1, /* visited by the walk */
    MC_TAPE_GRAD = 2, /* depends on a primal that gets a derivative */
};

typedef struct mc_tape {
    int np;
    mc_array **copies; /* np new nodes, each primal's stand-in */
    int nout;
    mc_array **outs; /* what the function returned */
    mc_darray nodes; /* mc_array *: the nodes that need a rule, inputs first (owned) */
    mc_walk walk;    /* the walk that found them; its value per node: MC_TAPE_* bits */
} mc_tape;

/* Runs f on stand-ins of the primals (distinct nodes, so a primal given
 * twice gets two derivatives, as in MLX), marks copies[i] with
 * MC_TAPE_GRAD when grad[i] (NULL: all), and records in order every node
 * reachable from the outputs that depends on a marked copy, except below
 * a StopGradient. Returns 0, or non-zero with one error reported and the
 * tape released. */
int mc_tape_build(mc_tape *t, const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, int np,
                  const bool *grad);

/* The per-node arrays a rule is called with (argnums, and the vjps or
 * tangents), kept across the nodes of one transform so a long tape does
 * not allocate twice per node. */
typedef struct mc_step_scratch {
    mc_darray args; /* int */
    mc_darray arrs; /* mc_array * (not owned) */
} mc_step_scratch;

#define MC_STEP_SCRATCH_INIT {MC_DARRAY_INIT(int), MC_DARRAY_INIT(mc_array *)}

/* Room for n of each; 0, or 1 with an out-of-memory error reported. */
int mc_step_scratch_fit(mc_step_scratch *s, int n, const char *fn);
void mc_step_scratch_free(mc_step_scratch *s);

/* The marks of node (0 if unseen). */
int mc_tape_marks(const mc_tape *t, const mc_array *node);

/* Releases everything the tape holds; the outputs unless they were taken
 * (set t->outs to NULL to take them). */
void mc_tape_release(mc_tape *t);

#endif
