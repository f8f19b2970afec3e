/* Owns the bookkeeping allocation wrappers and the fault-injection counter. */
#include "runtime/alloc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fault.h"

#ifdef MC_FAULT_INJECTION
static atomic_long fault_budget = -1; /* < 0: never fail */
static atomic_long fault_count;

bool mc_fault_should_fail(void)
{
    atomic_fetch_add(&fault_count, 1);
    long b = atomic_load(&fault_budget);
    while (b >= 0) {
        if (b == 0)
            return true;
        if (atomic_compare_exchange_weak(&fault_budget, &b, b - 1))
            return false;
    }
    return false;
}

void mc_fault_fail_after(long n)
{
    atomic_store(&fault_count, 0);
    atomic_store(&fault_budget, n < 0 ? -1 : n);
}

long mc_fault_count(void) { return atomic_load(&fault_count); }
#else
void mc_fault_fail_after(long n) { (void)n; }
long mc_fault_count(void) { return 0; }
#endif

void *mc_xmalloc(size_t n)
{
    if (mc_fault_should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *mc_xcalloc(size_t count, size_t size)
{
    if (mc_fault_should_fail())
        return NULL;
    if (count == 0 || size == 0)
        count = size = 1;
    return calloc(count, size);
}

void *mc_xrealloc(void *p, size_t n)
{
    if (mc_fault_should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void mc_xfree(void *p) { free(p); }

char *mc_xstrdup(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = mc_xmalloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
