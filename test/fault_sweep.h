/* The allocation-failure sweep shared by the fault suites (test_fault.c,
 * test_fault_ops.c): the allocator hook (runtime/alloc.h, built with
 * -Dfault_injection=true) fails the Nth allocation, and N walks up from 0
 * until a run makes no failing allocation. */
#ifndef MC_TEST_FAULT_SWEEP_H
#define MC_TEST_FAULT_SWEEP_H

/* A scenario makes its calls with the hook armed and returns 0 if all
 * succeeded (it then checks its values: 2 if they are wrong), or the
 * non-zero result of the call that failed. It frees what it made either
 * way. Inputs it needs are made before the hook is armed. */
typedef int (*tu_scenario_fn)(void *ctx);

/* Runs f with the Nth allocation failing for N = 0, 1, ... until a run
 * makes no failing allocation; returns how many runs failed. Since every
 * allocation after the Nth fails too, a scenario stops at its first
 * failed call. Each run must either fail with exactly one message or
 * succeed with none; after each run the active memory is back where it
 * was and, with the hook off, the library still computes a sum. */
long tu_sweep(const char *name, tu_scenario_fn f, void *ctx);

/* Turns the hook off inside a scenario (the sweep then counts only the
 * allocations made before), so that the scenario can check its values
 * without failures. */
void tu_sweep_disarm(void);

#endif
