/* compile's internal interface, shared by the files of src/compile and the
 * tests: the stages over a trace program (program.h holds the program
 * itself: record.c builds it, simplify.c and fuse.c rewrite it, replay.c
 * runs it, trace.c drives the first three), the per-thread caches and
 * their registry (cache.c), and counters that tests read. */
#ifndef MC_COMPILE_INTERNAL_H
#define MC_COMPILE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "compile/program.h"
#include "handles/closure.h"
#include "runtime/list.h"

/* ---- modes (compile.c) and tracing state (trace.c) ---- */

/* The process-wide mode, an mlx_compile_mode value (MLX_DISABLE_COMPILE in
 * the environment makes the initial mode DISABLED, as in MLX). */
int mc_compile_mode(void);

/* True while the calling thread runs a function body on placeholders: a
 * compiled closure called then traces through (runs its body directly). */
bool mc_compile_tracing(void);

/* ---- the stages over a trace program ---- */

/* Runs fun once on placeholders shaped like inputs[0..n), turns the graph
 * it returns into a trace program (evaluating its constants), simplifies it
 * unless mode is NO_SIMPLIFY and fuses it if mode is ENABLED. Returns 0 and
 * *out, or 1 with an error reported (nothing is kept). Runs user code: call
 * it with no library lock held. */
int mc_trace_build(mc_trace **out, mc_closure *fun, mc_array *const *inputs, int n,
                   const mc_trace_key *key, int mode);

/* Records the graph from the placeholders ph[0..t->n_inputs) to outs[0..n_out)
 * as t's program (t has its key set and no program yet): constants are
 * evaluated now, and a graph that reaches one of real[0..n_real) (the
 * call's own inputs, not captured) is refused. Returns 0, or 1 with an
 * error reported (t may hold part of a program: free it). */
int mc_trace_record(mc_trace *t, mc_array *const *ph, mc_array *const *outs, int n_out, mc_array *const *real,
                    int n_real);

/* Builds the trace's graph over the real inputs (nothing is evaluated) and
 * writes t->n_outputs new references to outs. Shapeless traces re-infer
 * each node's shape from its inputs. Returns 0, or 1 with an error
 * reported (nothing is kept). */
int mc_trace_replay(const mc_trace *t, mc_array *const *inputs, int n, mc_array **outs);

/* Merges equal constant scalars and equal steps, removes no-op copies and
 * drops steps and constants no output needs. Returns 0, or 1 with an
 * out-of-memory error reported (t is then unchanged). */
int mc_trace_simplify(mc_trace *t);

/* Folds chains of elementwise steps whose intermediates nothing else uses
 * into Compiled steps (MC_PRIM_FUSED). Returns 0, or 1 with an
 * out-of-memory error reported (t is then unchanged). */
int mc_trace_fuse(mc_trace *t);

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
