/* compile's internal interface, shared by the files of src/compile and the
 * tests: the trace program (trace.c builds it, simplify.c and fuse.c
 * rewrite it, replay.c runs it), the per-thread caches and their registry
 * (cache.c), and counters that tests read.
 *
 * Slots: a trace program names values by slot. Slots [0, n_inputs) are the
 * compiled function's inputs, the next n_consts are the trace's constants
 * (evaluated arrays it captured or built without using an input), and the
 * rest are the steps, one per replayed node, in topological order. */
#ifndef MC_COMPILE_INTERNAL_H
#define MC_COMPILE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "compile/list.h"
#include "handles/closure.h"

/* ---- modes (compile.c) and tracing state (trace.c) ---- */

/* The process-wide mode, an mlx_compile_mode value (MLX_DISABLE_COMPILE in
 * the environment makes the initial mode DISABLED, as in MLX). */
int mc_compile_mode(void);

/* True while the calling thread runs a function body on placeholders: a
 * compiled closure called then traces through (runs its body directly). */
bool mc_compile_tracing(void);

/* ---- a trace ---- */

typedef struct mc_step {
    int prim;
    int n_in;
    int *in;           /* n_in slots, then ndim shape entries (one allocation) */
    int *shape;        /* points into the allocation of `in` */
    int ndim;
    mlx_dtype dtype;
    void *params;      /* owned copy, params_size bytes (NULL if 0) */
    size_t params_size;
} mc_step;

/* What a trace is looked up by, besides fun_id. */
typedef struct mc_trace_key {
    int stream;                /* the calling thread's default stream */
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

/* Runs fun once on placeholders shaped like inputs[0..n), turns the graph
 * it returns into a trace program (evaluating its constants), simplifies it
 * unless mode is NO_SIMPLIFY and fuses it if mode is ENABLED. Returns 0 and
 * *out, or 1 with an error reported (nothing is kept). Runs user code: call
 * it with no library lock held. */
int mc_trace_build(mc_trace **out, mc_closure *fun, mc_array *const *inputs, int n,
                   const mc_trace_key *key, int mode);

/* True if t was traced for inputs like these under this key. */
bool mc_trace_matches(const mc_trace *t, mc_array *const *inputs, int n, const mc_trace_key *key);

/* Builds the trace's graph over the real inputs (nothing is evaluated) and
 * writes t->n_outputs new references to outs. Shapeless traces re-infer
 * each node's shape from its inputs. Returns 0, or 1 with an error
 * reported (nothing is kept). */
int mc_trace_replay(const mc_trace *t, mc_array *const *inputs, int n, mc_array **outs);

/* Frees t and drops its constants (which may run managed-data destructors:
 * call it with no library lock held). NULL is ignored. */
void mc_trace_free(mc_trace *t);

/* Merges equal constant scalars and equal steps, removes no-op copies and
 * drops steps and constants no output needs. Returns 0, or 1 with an
 * out-of-memory error reported (t is then unchanged). */
int mc_trace_simplify(mc_trace *t);

/* Folds chains of elementwise steps whose intermediates nothing else uses
 * into Compiled steps (MC_PRIM_FUSED). Returns 0, or 1 with an
 * out-of-memory error reported (t is then unchanged). */
int mc_trace_fuse(mc_trace *t);

/* Step helpers shared by trace.c and simplify.c. */
int mc_step_init(mc_step *s, int prim, int n_in, const int *in, const mc_meta *meta,
                 const void *params, size_t params_size);
void mc_step_clear(mc_step *s);

/* ---- per-thread caches (cache.c) ---- */

/* The traces of one fun_id in one thread's cache. Refcounted: the cache's
 * map holds one reference while the list is attached, and each compiled
 * call in progress holds one, so that an erase during a trace only detaches
 * the list (invariant 5). Only the owning thread reads or changes `traces`;
 * `link` and `attached` change under the cache lock. */
typedef struct mc_entries {
    mc_list link; /* hash chain of the cache, or a list of lists to release */
    atomic_long refs;
    uintptr_t fun_id;
    bool attached;           /* in the cache's map (cache lock) */
    atomic_size_t n_traces;  /* length of `traces`, readable by counters */
    mc_list traces;          /* mc_trace.link; owner thread only */
} mc_entries;

/* The calling thread's entry list for fun_id, created (with the thread's
 * cache, registered, if this is the thread's first compiled call) if
 * missing, with one reference for the caller. NULL with an error reported
 * on failure. */
mc_entries *mc_cache_acquire(uintptr_t fun_id, const char *fn);

/* Drops a reference; the last one frees the list and its traces. Call it
 * with no library lock held. */
void mc_entries_release(mc_entries *e);

/* Appends a finished trace (owner thread only; e takes t). */
void mc_entries_add(mc_entries *e, mc_trace *t);

/* After a failed first trace: if e is still in the thread's map and holds
 * no trace, takes it out, so a failure leaves no entry (invariant 6). */
void mc_cache_forget_if_empty(mc_entries *e);

/* Detach fun_id's lists (erase) or every list (clear) from every live
 * thread's cache and release them once the locks are dropped. */
void mc_cache_erase(uintptr_t fun_id);
void mc_cache_clear(void);

/* Counts one body run on placeholders (compile.c calls it per trace). */
void mc_compile_count_trace(void);

/* ---- counters for tests ---- */

/* Bodies run on placeholders since the process started. */
size_t mc_compile_trace_count(void);
/* Traces held by the maps of every live thread's cache. */
size_t mc_compile_cache_entries_all(void);
/* Traces held by the calling thread's cache (0 if it has none). */
size_t mc_compile_cache_entries_thread(void);
/* Caches in the registry (threads that made a compiled call and live). */
size_t mc_compile_cache_count(void);

#endif
