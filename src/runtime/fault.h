/* The fault-injection check every allocator path asks before allocating. */
#ifndef MC_RUNTIME_FAULT_H
#define MC_RUNTIME_FAULT_H

#include <stdbool.h>

#ifdef MC_FAULT_INJECTION
/* True if the armed counter says this allocation must fail. */
bool mc_fault_should_fail(void);
#else
static inline bool mc_fault_should_fail(void) { return false; }
#endif

#endif
