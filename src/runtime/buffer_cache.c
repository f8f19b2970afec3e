/* Owns array-data memory: mc_data_alloc / mc_data_free / mc_data_account,
 * the cache of freed blocks, and the counters and limits behind mlx-c's
 * memory.h functions (declared in runtime/buffer_cache.h).
 *
 * Why a cache: a fresh page costs a fault (about 2.3 us each here), so a
 * fresh 64 MiB output makes a large elementwise op several times slower than
 * writing into a block that is already mapped. Freed blocks therefore go to a
 * free list of their size class and the next request of that class takes the
 * most recently freed one (LIFO: its pages are the likeliest to be resident
 * and in cache).
 *
 * Size classes (all multiples of 64, so every block is 64-byte aligned):
 *  - up to 4 KiB: multiples of 64 bytes (64 classes, waste < 64 bytes);
 *  - up to 64 KiB: whole pages (15 classes, waste < 1 page);
 *  - above: 8 classes per power of two, 2^e * (1 + k/8), which are page
 *    multiples; waste <= 12.5%, mostly untouched virtual memory at the tail of
 *    a large block. Eight steps per octave keep the class count small (a
 *    fixed array of lists, no search) while letting sizes that differ by a
 *    few elements share blocks; powers of two and 1.5 * 2^e fit exactly.
 *
 * Eviction: the cache is also a list ordered by age over all classes. When
 * it exceeds its limit, the oldest blocks go back to the system first (the
 * coldest memory, and a size that is no longer being asked for).
 *
 * Freed blocks hold their own list links (struct free_block lives in the
 * block itself), so freeing never allocates and cannot fail.
 *
 * Locking: one mutex guards all counters and lists. Neither the system
 * allocator nor free() runs under it: blocks to release are unlinked under
 * the lock into a private list and freed after unlocking. No user code runs
 * here at all. */
#include "runtime/alloc.h"
#include "runtime/buffer_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include "runtime/fault.h"
#include "runtime/list.h"

enum {
    MC_ALIGN = 64,
    MC_PAGE = 4096,
    MC_HUGE = 2 << 20,                         /* a transparent huge page (x86_64; arm64, 4 KiB pages) */
    MC_SMALL_CLASSES = MC_PAGE / MC_ALIGN,     /* 64 B .. 4 KiB */
    MC_PAGE_CLASSES = 15,                      /* 2 .. 16 pages */
    MC_FIRST_OCTAVE = 16,                      /* (64 KiB, 128 KiB] */
    MC_OCTAVE_STEPS = 8,
    MC_SIZE_BITS = (int)(sizeof(size_t) * 8),
    /* Largest request: 2^(bits-2), so class arithmetic cannot overflow. */
    MC_LAST_OCTAVE = MC_SIZE_BITS - 3,
    MC_GEOMETRIC_BASE = MC_SMALL_CLASSES + MC_PAGE_CLASSES,
    MC_NCLASSES = MC_GEOMETRIC_BASE
                  + MC_OCTAVE_STEPS * (MC_LAST_OCTAVE - MC_FIRST_OCTAVE + 1),
};

#define MC_MAX_REQUEST ((size_t)1 << (MC_SIZE_BITS - 2))
/* MLX's CPU allocator uses 8 GiB when physical memory is unknown. */
#define MC_FALLBACK_LIMIT ((size_t)1 << 33)

typedef struct free_block {
    mc_list in_class; /* head of a class list = most recently freed */
    mc_list by_age;   /* head of the age list = most recently freed */
    size_t cap;
} free_block;

_Static_assert(sizeof(free_block) <= MC_ALIGN, "a free block's header must fit in the smallest class");

static struct {
    pthread_mutex_t lock;
    size_t active;       /* live data blocks (capacities) + managed data */
    size_t peak;
    size_t cached;       /* capacities of the blocks in the lists */
    size_t memory_limit;
    size_t cache_limit;
    mc_list classes[MC_NCLASSES];
    mc_list by_age;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

/* ---- size classes ---- */

static int floor_log2(size_t x) { return MC_SIZE_BITS - 1 - __builtin_clzll((unsigned long long)x); }

/* Class index of an nbytes request and its capacity, or -1 if too large. */
static int class_of(size_t nbytes, size_t *cap)
{
    if (nbytes <= MC_PAGE) {
        size_t c = nbytes ? (nbytes + MC_ALIGN - 1) & ~(size_t)(MC_ALIGN - 1) : MC_ALIGN;
        *cap = c;
        return (int)(c / MC_ALIGN) - 1;
    }
    if (nbytes <= (size_t)MC_PAGE * (MC_PAGE_CLASSES + 1)) {
        size_t c = (nbytes + MC_PAGE - 1) & ~(size_t)(MC_PAGE - 1);
        *cap = c;
        return MC_SMALL_CLASSES + (int)(c / MC_PAGE) - 2;
    }
    if (nbytes > MC_MAX_REQUEST)
        return -1;
    int e = floor_log2(nbytes - 1); /* 2^e < nbytes <= 2^(e+1) */
    int shift = e - 3;               /* step = 2^e / 8 */
    size_t step = (size_t)1 << shift;
    size_t c = (nbytes + step - 1) & ~(step - 1);
    int k = (int)(c >> shift) - MC_OCTAVE_STEPS; /* 1 .. 8 */
    *cap = c;
    return MC_GEOMETRIC_BASE + (e - MC_FIRST_OCTAVE) * MC_OCTAVE_STEPS + k - 1;
}

size_t mc_data_capacity(size_t nbytes)
{
    size_t cap = 0;
    return class_of(nbytes, &cap) < 0 ? 0 : cap;
}

/* ---- setup, fork, exit ---- */

static size_t default_memory_limit(void)
{
    struct sysinfo info;
    if (sysinfo(&info) != 0 || info.totalram == 0)
        return MC_FALLBACK_LIMIT;
    double total = (double)info.totalram * (double)info.mem_unit;
    return (size_t)(0.8 * total);
}

/* Keep the lock consistent across fork: the child's only thread must not
 * inherit it held by a thread that no longer exists. */
static void cache_prefork(void) { pthread_mutex_lock(&cache.lock); }
static void cache_postfork(void) { pthread_mutex_unlock(&cache.lock); }

static void cache_init(void)
{
    for (int i = 0; i < MC_NCLASSES; i++)
        mc_list_init(&cache.classes[i]);
    mc_list_init(&cache.by_age);
    cache.memory_limit = default_memory_limit();
    /* MLX documents "the cache limit defaults to the memory limit" (its
     * Metal allocator does so). Its no-GPU allocator had no cache in the
     * release mlx-c v0.6.0 builds on, and later got one limited to 32 MiB;
     * that would never keep a 64 MiB output, the case the cache is for. */
    cache.cache_limit = cache.memory_limit;
    pthread_atfork(cache_prefork, cache_postfork, cache_postfork);
}

static void ensure_init(void) { pthread_once(&cache_once, cache_init); }

/* ---- under the lock ---- */

static void note_peak_locked(void)
{
    if (cache.active > cache.peak)
        cache.peak = cache.active;
}

/* Moves the oldest cached block to `out`, a private list linked by age. */
static void evict_oldest_locked(mc_list *out)
{
    free_block *b = mc_list_entry(cache.by_age.prev, free_block, by_age);
    mc_list_remove(&b->in_class);
    mc_list_remove(&b->by_age);
    cache.cached -= b->cap;
    mc_list_insert_head(out, &b->by_age);
}

static void evict_all_locked(mc_list *out)
{
    while (!mc_list_empty(&cache.by_age))
        evict_oldest_locked(out);
}

/* ---- outside the lock ---- */

static void release_list(mc_list *out)
{
    while (!mc_list_empty(out)) {
        mc_list *n = out->next;
        mc_list_remove(n);
        free(mc_list_entry(n, free_block, by_age));
    }
}

/* Blocks of a page or more start on a page boundary. At 64-byte alignment
 * they started wherever malloc's arena put them, so an input and an output
 * could sit a few cache lines apart modulo 4 KiB: a kernel's load of x[i + d]
 * then waits on its store to y[i] (the CPU matches a load against earlier
 * stores by the address's low 12 bits), which made float32 tanh, sin and log
 * over 1M elements 12% slower on AMD Zen 4.
 *
 * Blocks of 2 MiB or more start on a 2 MiB boundary and ask for transparent
 * huge pages (Linux's default mode, "madvise", gives them only when asked):
 * a language model's weights are read once per decoded token, 773 MB of
 * them in bench/run_llm.sh's model, and with 4 KiB pages that stream takes
 * a TLB miss every 4 KiB and its load 190,000 page faults (35,000 with huge
 * pages; decode 5.0 against 6.2 tokens/s, medians of 4 alternating runs on
 * a loaded machine). */
static void *system_alloc(size_t cap)
{
    void *p = NULL;
    if (cap >= MC_HUGE) {
        if (posix_memalign(&p, MC_HUGE, cap) != 0)
            return NULL;
#ifdef MADV_HUGEPAGE
        /* advice only: without transparent huge pages this does nothing */
        (void)madvise(p, cap & ~(size_t)(MC_HUGE - 1), MADV_HUGEPAGE);
#endif
        return p;
    }
    return posix_memalign(&p, cap >= MC_PAGE ? MC_PAGE : MC_ALIGN, cap) == 0 ? p : NULL;
}

/* ---- the allocator ---- */

void *mc_data_alloc(size_t nbytes)
{
    if (mc_fault_should_fail())
        return NULL;
    size_t cap;
    int cls = class_of(nbytes, &cap);
    if (cls < 0)
        return NULL;
    ensure_init();

    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    if (cache.active > cache.memory_limit || cap > cache.memory_limit - cache.active) {
        /* Over the limit: the cached blocks cannot help this request, but
         * memory is evidently short, so give them back. */
        evict_all_locked(&evicted);
        pthread_mutex_unlock(&cache.lock);
        release_list(&evicted);
        return NULL;
    }
    mc_list *head = &cache.classes[cls];
    if (!mc_list_empty(head)) {
        free_block *b = mc_list_entry(head->next, free_block, in_class);
        mc_list_remove(&b->in_class);
        mc_list_remove(&b->by_age);
        cache.cached -= cap;
        cache.active += cap;
        note_peak_locked();
        pthread_mutex_unlock(&cache.lock);
        return b;
    }
    /* A fresh block: keep active + cached within the memory limit by
     * dropping the oldest cached blocks, and reserve the bytes now so that
     * concurrent callers cannot pass the limit together. */
    while (cache.cached > cache.memory_limit - cache.active - cap)
        evict_oldest_locked(&evicted);
    cache.active += cap;
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);

    void *p = system_alloc(cap);
    if (!p) {
        /* The system is short even though we are under our limit: retry
         * once with the cache emptied. */
        mc_mem_clear_cache();
        p = system_alloc(cap);
    }
    pthread_mutex_lock(&cache.lock);
    if (p)
        note_peak_locked();
    else
        cache.active -= cap;
    pthread_mutex_unlock(&cache.lock);
    return p;
}

void mc_data_free(void *p, size_t nbytes)
{
    if (!p)
        return;
    size_t cap;
    int cls = class_of(nbytes, &cap);
    if (cls < 0) {
        free(p); /* cannot have come from mc_data_alloc; never crash on it */
        return;
    }
    ensure_init();

    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    cache.active -= cap < cache.active ? cap : cache.active;
    if (cap > cache.cache_limit) {
        pthread_mutex_unlock(&cache.lock);
        free(p);
        return;
    }
    free_block *b = p;
    b->cap = cap;
    mc_list_insert_head(&cache.classes[cls], &b->in_class);
    mc_list_insert_head(&cache.by_age, &b->by_age);
    cache.cached += cap;
    /* The block just pushed is the newest, so it is evicted last, and it
     * fits alone because cap <= cache_limit. */
    while (cache.cached > cache.cache_limit)
        evict_oldest_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
}

void mc_data_account(ptrdiff_t delta)
{
    ensure_init();
    pthread_mutex_lock(&cache.lock);
    if (delta >= 0) {
        cache.active += (size_t)delta;
        note_peak_locked();
    } else {
        size_t d = (size_t)-(delta + 1) + 1; /* |delta| without overflow */
        cache.active -= d < cache.active ? d : cache.active;
    }
    pthread_mutex_unlock(&cache.lock);
}

/* ---- counters and limits ---- */

static size_t read_locked(const size_t *field)
{
    ensure_init();
    pthread_mutex_lock(&cache.lock);
    size_t v = *field;
    pthread_mutex_unlock(&cache.lock);
    return v;
}

size_t mc_mem_active(void) { return read_locked(&cache.active); }
size_t mc_mem_peak(void) { return read_locked(&cache.peak); }
size_t mc_mem_cached(void) { return read_locked(&cache.cached); }
size_t mc_mem_memory_limit(void) { return read_locked(&cache.memory_limit); }
size_t mc_mem_cache_limit(void) { return read_locked(&cache.cache_limit); }

void mc_mem_reset_peak(void)
{
    ensure_init();
    pthread_mutex_lock(&cache.lock);
    cache.peak = 0;
    pthread_mutex_unlock(&cache.lock);
}

size_t mc_mem_set_memory_limit(size_t limit)
{
    ensure_init();
    pthread_mutex_lock(&cache.lock);
    size_t old = cache.memory_limit;
    cache.memory_limit = limit;
    pthread_mutex_unlock(&cache.lock);
    return old;
}

size_t mc_mem_set_cache_limit(size_t limit)
{
    ensure_init();
    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    size_t old = cache.cache_limit;
    cache.cache_limit = limit;
    while (cache.cached > cache.cache_limit)
        evict_oldest_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
    return old;
}

void mc_mem_clear_cache(void)
{
    ensure_init();
    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    evict_all_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
}

/* Give cached blocks back at exit (and at dlclose of the shared library) so
 * leak checkers see only what the program itself still holds. Blocks freed
 * after this point are cached again and simply end with the process. */
__attribute__((destructor)) static void cache_at_exit(void)
{
    mc_mem_clear_cache();
}
