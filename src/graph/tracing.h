/* Whether the calling thread is running a function under a transform
 * (vjp, jvp, value_and_grad): then nodes built from a tracer are tracers,
 * and evaluating a tracer keeps its node (MLX's in_tracing). Per thread:
 * each thread's transforms are its own. */
#ifndef MC_GRAPH_TRACING_H
#define MC_GRAPH_TRACING_H

#include <stdbool.h>

/* Enter before calling the transformed function, leave after; they nest
 * (a transform inside a transformed function). */
void mc_tracing_enter(void);
void mc_tracing_leave(void);
bool mc_tracing(void);

#endif
