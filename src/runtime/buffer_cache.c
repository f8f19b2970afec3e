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
 * Small blocks (up to 4 KiB) also have a per-thread magazine: a freed small
 * block goes on its thread's LIFO list of its class, and the next request of
 * that class on that thread takes it without the lock, so a small op's
 * output costs two atomic adds rather than two lock round trips. A magazine
 * holds at most MC_MAG_BYTES and only while the cache limit allows; its
 * blocks count as cached memory. Its blocks go to the shared lists when its
 * thread exits; clear_cache and a lowered cache limit empty the calling
 * thread's magazine (others' are bounded and empty at their exit). A block
 * may be freed on another thread than the one that allocated it.
 *
 * Locking: one mutex guards the shared lists and `cached`; the counters the
 * magazines also touch (active, peak, mag_cached, the limits) are atomics,
 * changed under the lock or, on the magazine path, without it. Neither the
 * system allocator nor free() runs under the lock: blocks to release are
 * unlinked under the lock into a private list and freed after unlocking. No
 * user code runs here at all. */
#include "runtime/alloc.h"
#include "runtime/buffer_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include "runtime/fault.h"
#include "runtime/list.h"
#include "runtime/obj_cache.h"
#include "runtime/tls.h"

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
    MC_MAG_BYTES = 64 * 1024, /* what one thread's magazine keeps at most */
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
    atomic_size_t active; /* live data blocks (capacities) + managed data */
    atomic_size_t peak;
    atomic_size_t cached;     /* capacities of the blocks in the shared lists (changed under the lock) */
    atomic_size_t mag_cached; /* capacities of the blocks in all magazines */
    atomic_size_t memory_limit;
    atomic_size_t cache_limit;
    mc_list classes[MC_NCLASSES];
    mc_list by_age;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A thread's magazine of small freed blocks, one LIFO list per small class
 * (linked through the blocks' first word). Allocated at the thread's first
 * small free; the thread-local is only a pointer, so that the library's
 * initial-exec TLS stays small. */
typedef struct magazine {
    void *head[MC_SMALL_CLASSES];
    size_t bytes;
} magazine;

static _Thread_local magazine *tl_mag MC_TLS_FAST;
/* set once this thread's magazine has been given back (at its exit, or the
 * process's): later small frees go to the shared lists */
static _Thread_local bool tl_mag_done;
static pthread_key_t mag_key;
static bool mag_key_ok;

static size_t ld(atomic_size_t *v) { return atomic_load_explicit(v, memory_order_relaxed); }
static void add(atomic_size_t *v, size_t d) { atomic_fetch_add_explicit(v, d, memory_order_relaxed); }
/* Subtracts d, or down to 0 if less is there (never wraps). */
static void sub_sat(atomic_size_t *v, size_t d)
{
    size_t old = ld(v);
    while (!atomic_compare_exchange_weak_explicit(v, &old, old > d ? old - d : 0, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

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

static void mag_thread_exit(void *arg);

static void cache_init(void)
{
    for (int i = 0; i < MC_NCLASSES; i++)
        mc_list_init(&cache.classes[i]);
    mc_list_init(&cache.by_age);
    atomic_init(&cache.memory_limit, default_memory_limit());
    /* MLX documents "the cache limit defaults to the memory limit" (its
     * Metal allocator does so). Its no-GPU allocator had no cache in the
     * release mlx-c v0.6.0 builds on, and later got one limited to 32 MiB;
     * that would never keep a 64 MiB output, the case the cache is for. */
    atomic_init(&cache.cache_limit, ld(&cache.memory_limit));
    mag_key_ok = pthread_key_create(&mag_key, mag_thread_exit) == 0;
    pthread_atfork(cache_prefork, cache_postfork, cache_postfork);
}

static void ensure_init(void) { pthread_once(&cache_once, cache_init); }

/* ---- under the lock ---- */

/* Raises the peak to `now` (an active count just reached) if it is higher. */
static void note_peak(size_t now)
{
    size_t p = ld(&cache.peak);
    while (now > p && !atomic_compare_exchange_weak_explicit(&cache.peak, &p, now, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

static void note_peak_locked(void) { note_peak(ld(&cache.active)); }

/* Moves the oldest cached block to `out`, a private list linked by age. */
static void evict_oldest_locked(mc_list *out)
{
    free_block *b = mc_list_entry(cache.by_age.prev, free_block, by_age);
    mc_list_remove(&b->in_class);
    mc_list_remove(&b->by_age);
    sub_sat(&cache.cached, b->cap);
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

/* ---- magazines ---- */

/* Gives the calling thread's magazine blocks to the system. */
static void mag_drain_to_system(void)
{
    magazine *m = tl_mag;
    if (!m)
        return;
    for (int c = 0; c < MC_SMALL_CLASSES; c++) {
        while (m->head[c]) {
            void *b = m->head[c];
            m->head[c] = *(void **)b;
            free(b);
        }
    }
    sub_sat(&cache.mag_cached, m->bytes);
    m->bytes = 0;
}

/* At thread exit: the magazine's blocks join the shared lists (still cached
 * memory), then the magazine itself goes. */
static void mag_thread_exit(void *arg)
{
    (void)arg;
    magazine *m = tl_mag;
    tl_mag = NULL;
    tl_mag_done = true;
    if (!m)
        return;
    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    for (int c = 0; c < MC_SMALL_CLASSES; c++) {
        while (m->head[c]) {
            free_block *b = m->head[c];
            m->head[c] = *(void **)b;
            b->cap = (size_t)(c + 1) * MC_ALIGN;
            mc_list_insert_head(&cache.classes[c], &b->in_class);
            mc_list_insert_head(&cache.by_age, &b->by_age);
            add(&cache.cached, b->cap);
        }
    }
    sub_sat(&cache.mag_cached, m->bytes);
    while (ld(&cache.cached) > ld(&cache.cache_limit))
        evict_oldest_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
    free(m);
}

/* The calling thread's magazine, made (and its exit hook set) on first use;
 * NULL if it cannot have one. Magazines follow the object cache's switch
 * (off under ASan and Valgrind, MLX_CPU_OBJ_CACHE): a forked child inherits
 * its parent's other threads' magazines with no thread left to hand them
 * back, which Valgrind rightly reports as lost. */
static magazine *mag_get(void)
{
    if (tl_mag || tl_mag_done)
        return tl_mag;
    if (!mc_obj_cache_enabled()) {
        tl_mag_done = true;
        return NULL;
    }
    ensure_init();
    if (!mag_key_ok)
        return NULL;
    magazine *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (pthread_setspecific(mag_key, m) != 0) {
        free(m);
        tl_mag_done = true;
        return NULL;
    }
    tl_mag = m;
    return m;
}

/* Takes a block of small class cls from the magazine, or NULL. */
static void *mag_pop(int cls, size_t cap)
{
    magazine *m = tl_mag;
    void *b = m ? m->head[cls] : NULL;
    if (!b)
        return NULL;
    size_t active = ld(&cache.active), limit = ld(&cache.memory_limit);
    if (active > limit || cap > limit - active)
        return NULL; /* the slow path refuses it and empties the caches */
    m->head[cls] = *(void **)b;
    m->bytes -= cap;
    sub_sat(&cache.mag_cached, cap);
    note_peak(atomic_fetch_add_explicit(&cache.active, cap, memory_order_relaxed) + cap);
    return b;
}

/* Keeps a freed block of small class cls in the magazine; false if it is
 * full, the cache limit leaves no room, or the thread has none. */
static bool mag_push(void *p, int cls, size_t cap)
{
    magazine *m = tl_mag ? tl_mag : mag_get();
    if (!m || m->bytes + cap > MC_MAG_BYTES)
        return false;
    /* read without the lock: another thread's concurrent change can pass
     * the cache limit by a block, as two frees under the lock one after
     * the other could not */
    size_t held = ld(&cache.cached) + ld(&cache.mag_cached);
    if (held + cap > ld(&cache.cache_limit))
        return false;
    *(void **)p = m->head[cls];
    m->head[cls] = p;
    m->bytes += cap;
    add(&cache.mag_cached, cap);
    return true;
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
    if (cls < MC_SMALL_CLASSES) {
        void *b = mag_pop(cls, cap);
        if (b)
            return b;
    }
    ensure_init();

    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    size_t active = ld(&cache.active), limit = ld(&cache.memory_limit);
    if (active > limit || cap > limit - active) {
        /* Over the limit: the cached blocks cannot help this request, but
         * memory is evidently short, so give them back. */
        evict_all_locked(&evicted);
        pthread_mutex_unlock(&cache.lock);
        release_list(&evicted);
        mag_drain_to_system();
        return NULL;
    }
    mc_list *head = &cache.classes[cls];
    if (!mc_list_empty(head)) {
        free_block *b = mc_list_entry(head->next, free_block, in_class);
        mc_list_remove(&b->in_class);
        mc_list_remove(&b->by_age);
        sub_sat(&cache.cached, cap);
        add(&cache.active, cap);
        note_peak_locked();
        pthread_mutex_unlock(&cache.lock);
        return b;
    }
    /* A fresh block: keep active + cached within the memory limit by
     * dropping the oldest cached blocks, and reserve the bytes now so that
     * concurrent callers cannot pass the limit together. */
    while (ld(&cache.cached) > limit - active - cap)
        evict_oldest_locked(&evicted);
    add(&cache.active, cap);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);

    void *p = system_alloc(cap);
    if (!p) {
        /* The system is short even though we are under our limit: retry
         * once with the cache emptied. */
        mc_mem_clear_cache();
        p = system_alloc(cap);
    }
    if (p)
        note_peak(ld(&cache.active));
    else
        sub_sat(&cache.active, cap);
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
    if (cls < MC_SMALL_CLASSES && mag_push(p, cls, cap)) {
        sub_sat(&cache.active, cap);
        return;
    }
    ensure_init();

    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    sub_sat(&cache.active, cap);
    size_t limit = ld(&cache.cache_limit);
    if (cap > limit) {
        pthread_mutex_unlock(&cache.lock);
        free(p);
        return;
    }
    free_block *b = p;
    b->cap = cap;
    mc_list_insert_head(&cache.classes[cls], &b->in_class);
    mc_list_insert_head(&cache.by_age, &b->by_age);
    add(&cache.cached, cap);
    /* The block just pushed is the newest, so it is evicted last, and it
     * fits alone because cap <= cache_limit. */
    while (ld(&cache.cached) > limit)
        evict_oldest_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
}

void mc_data_account(ptrdiff_t delta)
{
    if (delta >= 0) {
        note_peak(atomic_fetch_add_explicit(&cache.active, (size_t)delta, memory_order_relaxed) + (size_t)delta);
    } else {
        size_t d = (size_t)-(delta + 1) + 1; /* |delta| without overflow */
        sub_sat(&cache.active, d);
    }
}

/* ---- counters and limits ---- */

size_t mc_mem_active(void) { return ld(&cache.active); }
size_t mc_mem_peak(void) { return ld(&cache.peak); }
size_t mc_mem_memory_limit(void)
{
    ensure_init();
    return ld(&cache.memory_limit);
}
size_t mc_mem_cache_limit(void)
{
    ensure_init();
    return ld(&cache.cache_limit);
}

size_t mc_mem_cached(void)
{
    return ld(&cache.cached) + ld(&cache.mag_cached);
}

size_t mc_mem_thread_cached(void) { return tl_mag ? tl_mag->bytes : 0; }

void mc_mem_reset_peak(void) { atomic_store_explicit(&cache.peak, 0, memory_order_relaxed); }

size_t mc_mem_set_memory_limit(size_t limit)
{
    ensure_init();
    return atomic_exchange_explicit(&cache.memory_limit, limit, memory_order_relaxed);
}

size_t mc_mem_set_cache_limit(size_t limit)
{
    ensure_init();
    size_t old = atomic_exchange_explicit(&cache.cache_limit, limit, memory_order_relaxed);
    /* this thread's magazine first: its blocks are not on the age list */
    if (ld(&cache.mag_cached) + ld(&cache.cached) > limit)
        mag_drain_to_system();
    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    while (ld(&cache.cached) > limit)
        evict_oldest_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
    return old;
}

void mc_mem_clear_cache(void)
{
    ensure_init();
    mag_drain_to_system();
    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    evict_all_locked(&evicted);
    pthread_mutex_unlock(&cache.lock);
    release_list(&evicted);
}

/* Give cached blocks back at exit (and at dlclose of the shared library) so
 * leak checkers see only what the program itself still holds. Blocks freed
 * after this point are cached again and simply end with the process; the
 * exiting thread's magazine goes too, and it keeps none from now on. */
__attribute__((destructor)) static void cache_at_exit(void)
{
    magazine *m = tl_mag;
    mag_drain_to_system();
    tl_mag = NULL;
    tl_mag_done = true;
    free(m);
    mc_mem_clear_cache();
}
