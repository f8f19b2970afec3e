/* TEMPORARY until buffer_cache.c lands: plain aligned malloc. */
#include <stdlib.h>
#include "runtime/alloc.h"
#include "runtime/fault.h"
void *mc_data_alloc(size_t n) { if (mc_fault_should_fail()) return NULL; void *p = NULL; if (posix_memalign(&p, 64, n ? n : 64)) return NULL; return p; }
void mc_data_free(void *p, size_t n) { (void)n; free(p); }
void mc_data_account(ptrdiff_t d) { (void)d; }
