/* Memory for the library. Two kinds:
 *  - small bookkeeping (descriptors, vectors, strings): mc_xmalloc & co.,
 *    thin wrappers over malloc that the fault-injection hook can fail;
 *  - array data: mc_data_alloc / mc_data_free, served from a size-bucketed
 *    cache of freed buffers, counted for mlx-c's memory.h functions.
 * None of these report errors: they return NULL and the caller reports,
 * naming its own function. */
#ifndef MC_RUNTIME_ALLOC_H
#define MC_RUNTIME_ALLOC_H

#include <stddef.h>

void *mc_xmalloc(size_t n);
void *mc_xcalloc(size_t count, size_t size);
void *mc_xrealloc(void *p, size_t n);
void mc_xfree(void *p);
/* A malloc'ed copy of s (NULL s gives ""), or NULL. */
char *mc_xstrdup(const char *s);

/* Returns 64-byte aligned memory of at least nbytes (0 allowed: returns a
 * valid distinct pointer), reusing a cached buffer of the same bucket when
 * there is one, or NULL if memory or the memory limit is exhausted.
 * Release it with mc_data_free(p, nbytes) using the same nbytes. */
void *mc_data_alloc(size_t nbytes);
void mc_data_free(void *p, size_t nbytes);

/* Accounting for memory the library does not own (managed data): counted in
 * active memory while an array uses it. */
void mc_data_account(ptrdiff_t delta);

/* Fault injection (tests): after n more successful allocations of either
 * kind, every allocation fails until reset with n < 0. Only present when
 * built with -Dfault_injection=true; otherwise a no-op. */
void mc_fault_fail_after(long n);
/* Number of allocations made since the counter was last armed. */
long mc_fault_count(void);

#endif
