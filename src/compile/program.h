/* The trace program, as data: what a compiled function's trace holds and
 * the operations on it that every stage shares (program.c). record.c
 * builds a program, simplify.c and fuse.c rewrite it (each ending with
 * mc_trace_compact), replay.c runs it, cache.c keeps it.
 *
 * Slots: a program names values by slot. Slots [0, n_inputs) are the
 * compiled function's inputs, the next n_consts are the trace's constants
 * (evaluated arrays it captured or built without using an input), and the
 * rest are the steps, one per replayed node, in topological order: a step
 * only uses slots before its own.
 *
 * Lifetimes: a trace owns its steps (their slot lists and parameter
 * copies) and one reference on each constant; it holds nothing of the
 * graph it was recorded from. */
#ifndef MC_COMPILE_PROGRAM_H
#define MC_COMPILE_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "runtime/list.h"

typedef struct mc_step {
    int prim;
    int n_in;
    int *in;    /* n_in slots, then ndim shape entries (one allocation) */
    int *shape; /* points into the allocation of `in` */
    int ndim;
    mlx_dtype dtype;
    void *params; /* owned copy, params_size bytes (NULL if 0) */
    size_t params_size;
} mc_step;

/* What a trace is looked up by, besides fun_id. */
typedef struct mc_trace_key {
    int stream; /* the calling thread's default stream */
    bool shapeless;
    const uint64_t *constants; /* n_constants values */
    size_t n_constants;
} mc_trace_key;

typedef struct mc_trace {
    mc_list link; /* in its mc_entries' trace list (owner thread only) */

    /* key */
    int stream;
    bool shapeless;
    int n_inputs;
    mc_meta *in_meta; /* dtype, ndim and shape of each input */
    size_t n_constants;
    uint64_t *constants;

    /* program */
    int n_consts;
    mc_array **consts; /* owned references to evaluated arrays */
    int n_steps;
    mc_step *steps;
    int n_outputs;
    int *outputs; /* slots */
} mc_trace;

/* Makes s a step with copies of in[0..n_in), meta's shape and params.
 * Returns 0, or 1 on allocation failure (nothing reported; s is cleared). */
int mc_step_init(mc_step *s, int prim, int n_in, const int *in, const mc_meta *meta, const void *params,
                 size_t params_size);
/* Frees what s owns and zeroes it. */
void mc_step_clear(mc_step *s);

/* The dtype and shape of an array, as a step or an input records them. */
void mc_meta_of(mc_meta *m, const mc_array *a);

/* Slots in use: inputs, constants and steps. */
static inline size_t mc_trace_slots(const mc_trace *t)
{
    return (size_t)t->n_inputs + (size_t)t->n_consts + (size_t)t->n_steps;
}

/* The dtype of the value in a slot. */
mlx_dtype mc_trace_slot_dtype(const mc_trace *t, int slot);

/* True if t was traced for inputs like these under this key. */
bool mc_trace_matches(const mc_trace *t, mc_array *const *inputs, int n, const mc_trace_key *key);

/* Keeps the constants and steps whose slot has keep[slot] set, in their
 * order, releasing the others, and renumbers the slots of the steps'
 * inputs and of the outputs. Every slot a kept step or an output uses must
 * be kept (inputs always are). newslot is scratch of mc_trace_slots(t)
 * ints. Never fails: the arrays are compacted in place. */
void mc_trace_compact(mc_trace *t, const unsigned char *keep, int *newslot);

/* Frees t and drops its constants (which may run managed-data destructors:
 * call it with no library lock held). NULL is ignored. */
void mc_trace_free(mc_trace *t);

#endif
