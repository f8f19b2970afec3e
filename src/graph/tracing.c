/* Owns the per-thread transform depth of tracing.h. */
#include "graph/tracing.h"

#include "runtime/tls.h"

static _Thread_local int depth MC_TLS_FAST;

void mc_tracing_enter(void) { depth++; }
void mc_tracing_leave(void) { depth--; }
bool mc_tracing(void) { return depth > 0; }
