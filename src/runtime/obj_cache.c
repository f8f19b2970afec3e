/* Owns the per-thread cache of small bookkeeping blocks (obj_cache.h).
 *
 * Why: one small lazy op (build, evaluate, drop) made four malloc/free
 * pairs (descriptor, inputs, parameters, buffer header), over a quarter of its
 * instructions; glibc's calloc skips its own per-thread cache. A freed block
 * here goes on a list of its size class in the freeing thread, and the next
 * request of that class in that thread pops it: no lock, no atomic.
 *
 * Classes: multiples of 64 bytes up to MC_OBJ_MAX. A block is malloc'ed at
 * its class's full size, so any block of a class serves any request of it.
 * Blocks are ordinary malloc memory: one allocated on a thread may be freed
 * on another and lands in that thread's lists.
 *
 * Bounded: a thread keeps at most MC_OBJ_CACHE_BYTES; a block beyond that is
 * given back to malloc at once.
 *
 * Lifetime: a thread's lists go back to malloc when it exits (a pthread key
 * destructor), and the exiting process's (a library destructor, run on the
 * thread that calls exit). A thread past either point frees directly.
 *
 * Off under AddressSanitizer and Valgrind: their use-after-free checks need
 * every freed block really freed (MLX_CPU_OBJ_CACHE overrides, see
 * decide_mode). The fault-injection counter is asked before every
 * allocation, cached or not, so allocation-failure tests still reach every
 * allocation site. */
#include "runtime/obj_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "runtime/fault.h"
#include "runtime/tls.h"

#if defined(__SANITIZE_ADDRESS__)
#define MC_OBJ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MC_OBJ_ASAN 1
#endif
#endif
#ifndef MC_OBJ_ASAN
#define MC_OBJ_ASAN 0
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MC_OBJ_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef MC_OBJ_VALGRIND
#define MC_OBJ_VALGRIND() 0
#endif

enum {
    MC_OBJ_GRAIN = 64,
    MC_OBJ_CLASSES = MC_OBJ_MAX / MC_OBJ_GRAIN,
};

typedef struct obj_block {
    struct obj_block *next;
} obj_block;

enum { THREAD_NEW = 0, THREAD_CACHING, THREAD_DONE };

typedef struct {
    obj_block *head[MC_OBJ_CLASSES];
    size_t bytes;
    int state;
} obj_cache;

static _Thread_local obj_cache tl MC_TLS_FAST;

/* 1: caching, -1: off (sanitizer, valgrind, or the process is exiting), 0: not yet decided */
static atomic_int mode;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static bool key_ok;

static void drain(obj_cache *c)
{
    for (int i = 0; i < MC_OBJ_CLASSES; i++) {
        while (c->head[i]) {
            obj_block *b = c->head[i];
            c->head[i] = b->next;
            free(b);
        }
    }
    c->bytes = 0;
}

static void thread_exit(void *arg)
{
    (void)arg;
    drain(&tl);
    tl.state = THREAD_DONE;
}

static void key_init(void) { key_ok = pthread_key_create(&exit_key, thread_exit) == 0; }

/* MLX_CPU_OBJ_CACHE=0 turns the cache off, =1 on even under Valgrind (to
 * count a cached run's instructions with callgrind); ASan builds never cache. */
static int decide_mode(void)
{
    const char *env = getenv("MLX_CPU_OBJ_CACHE");
    int m = MC_OBJ_VALGRIND() ? -1 : 1;
    if (env && (env[0] == '0' || env[0] == '1') && !env[1])
        m = env[0] == '1' ? 1 : -1;
    if (MC_OBJ_ASAN)
        m = -1;
    int expect = 0;
    atomic_compare_exchange_strong(&mode, &expect, m);
    return atomic_load_explicit(&mode, memory_order_relaxed);
}

int mc_obj_cache_enabled(void)
{
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    return (m ? m : decide_mode()) > 0;
}

/* Registers the calling thread's exit hook on its first cached block. */
static bool thread_can_cache(void)
{
    if (tl.state == THREAD_CACHING)
        return mc_obj_cache_enabled();
    if (tl.state == THREAD_DONE || !mc_obj_cache_enabled())
        return false;
    pthread_once(&key_once, key_init);
    if (!key_ok || pthread_setspecific(exit_key, &tl) != 0) {
        tl.state = THREAD_DONE;
        return false;
    }
    tl.state = THREAD_CACHING;
    return true;
}

void *mc_obj_alloc(size_t n)
{
    if (mc_fault_should_fail())
        return NULL;
    if (n == 0)
        n = 1;
    if (n > MC_OBJ_MAX)
        return malloc(n);
    size_t cls = (n - 1) / MC_OBJ_GRAIN;
    obj_block *b = tl.head[cls];
    if (b) {
        tl.head[cls] = b->next;
        tl.bytes -= (cls + 1) * MC_OBJ_GRAIN;
        return b;
    }
    return malloc((cls + 1) * MC_OBJ_GRAIN);
}

void mc_obj_free(void *p, size_t n)
{
    if (!p)
        return;
    if (n == 0)
        n = 1;
    size_t cls = (n - 1) / MC_OBJ_GRAIN, cap = (cls + 1) * MC_OBJ_GRAIN;
    if (n > MC_OBJ_MAX || tl.bytes + cap > MC_OBJ_CACHE_BYTES || !thread_can_cache()) {
        free(p);
        return;
    }
    obj_block *b = p;
    b->next = tl.head[cls];
    tl.head[cls] = b;
    tl.bytes += cap;
}

size_t mc_obj_cached(void) { return tl.bytes; }

/* At exit: the exiting thread gives its blocks back, and nothing is cached
 * from now on (another library destructor may still free arrays). */
__attribute__((destructor)) static void obj_cache_at_exit(void)
{
    atomic_store(&mode, -1);
    drain(&tl);
}
