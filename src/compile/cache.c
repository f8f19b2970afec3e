/* Owns the per-thread compile caches and the process-wide registry that
 * links them, so that erase(fun_id) and clear() reach every thread.
 *
 * A cache maps fun_id to an entry list (mc_entries) through a chained hash
 * table whose chains are intrusive lists. Each cache is created at its
 * thread's first compiled call, linked into the registry at once, and
 * unlinked and freed by a pthread key destructor when the thread exits.
 *
 * Lock order: registry_lock, then a cache's lock; never the reverse. The
 * owner of a cache takes only its cache lock (lookups); erase, clear, thread
 * exit and the counters take the registry lock first. No user code runs
 * under either lock: what erase, clear or thread exit takes out of a map is
 * moved to a local list and released after both locks are dropped (its
 * traces hold arrays whose managed-data destructors are user code), and no
 * error is reported (the error handler is user code) while a lock is held.
 *
 * fork(): the prepare handler takes the registry lock and then every cache
 * lock, so the child starts with a consistent registry. In the child, the
 * caches of threads that did not survive are moved to an orphan list (never
 * freed: their owners may have been in the middle of a trace, so releasing
 * their contents could touch half-built state) and the remaining locks are
 * reinitialised. */
#include <pthread.h>
#include <string.h>

#include "compile/compile_internal.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/hash.h"

enum { MIN_BUCKETS = 16 };

typedef struct mc_cache {
    mc_list link;         /* in `registry` or `orphans` (registry_lock) */
    pthread_mutex_t lock; /* guards buckets, nbuckets, count */
    mc_list *buckets;     /* chains of mc_entries.link */
    size_t nbuckets;      /* a power of two */
    size_t count;         /* entry lists in the map */
} mc_cache;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static mc_list registry = {&registry, &registry};
static mc_list orphans = {&orphans, &orphans};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t cache_key;
static bool key_ready;

/* The calling thread's cache (also the value of cache_key, which is what
 * makes the destructor run at thread exit). */
static _Thread_local mc_cache *tl_cache;

static atomic_size_t traces_made;

static void lock(pthread_mutex_t *m) { (void)pthread_mutex_lock(m); }
static void unlock(pthread_mutex_t *m) { (void)pthread_mutex_unlock(m); }

static size_t bucket_of(uintptr_t fun_id, size_t nbuckets)
{
    return (size_t)mc_hash_mix((uint64_t)fun_id) & (nbuckets - 1);
}

/* ---- entry lists ---- */

void mc_entries_release(mc_entries *e)
{
    if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    mc_list *it, *tmp;
    mc_list_foreach_safe(it, tmp, &e->traces)
    {
        mc_list_remove(it);
        mc_trace_free(mc_list_entry(it, mc_trace, link));
    }
    mc_xfree(e);
}

void mc_entries_add(mc_entries *e, mc_trace *t)
{
    mc_list_insert_tail(&e->traces, &t->link);
    atomic_fetch_add_explicit(&e->n_traces, 1, memory_order_relaxed);
}

/* Releases every list on `dead` (a local list, no lock held). */
static void release_all(mc_list *dead)
{
    mc_list *it, *tmp;
    mc_list_foreach_safe(it, tmp, dead)
    {
        mc_list_remove(it);
        mc_entries_release(mc_list_entry(it, mc_entries, link));
    }
}

/* ---- one cache's map (its lock held) ---- */

static mc_entries *map_find(mc_cache *c, uintptr_t fun_id)
{
    mc_list *head = &c->buckets[bucket_of(fun_id, c->nbuckets)];
    mc_list *it;
    mc_list_foreach(it, head)
    {
        mc_entries *e = mc_list_entry(it, mc_entries, link);
        if (e->fun_id == fun_id)
            return e;
    }
    return NULL;
}

/* Doubles the table when it is more than full; on allocation failure the
 * chains just get longer. */
static void map_maybe_grow(mc_cache *c)
{
    if (c->count <= c->nbuckets)
        return;
    size_t n = c->nbuckets * 2;
    mc_list *nb = mc_xmalloc(n * sizeof *nb);
    if (!nb)
        return;
    for (size_t i = 0; i < n; i++)
        mc_list_init(&nb[i]);
    for (size_t i = 0; i < c->nbuckets; i++) {
        mc_list *it, *tmp;
        mc_list_foreach_safe(it, tmp, &c->buckets[i])
        {
            mc_entries *e = mc_list_entry(it, mc_entries, link);
            mc_list_remove(it);
            mc_list_insert_tail(&nb[bucket_of(e->fun_id, n)], it);
        }
    }
    mc_xfree(c->buckets);
    c->buckets = nb;
    c->nbuckets = n;
}

/* Takes e out of the map onto `dead` (moving the map's reference). */
static void map_detach(mc_cache *c, mc_entries *e, mc_list *dead)
{
    mc_list_remove(&e->link);
    e->attached = false;
    c->count--;
    mc_list_insert_tail(dead, &e->link);
}

static void map_detach_all(mc_cache *c, mc_list *dead)
{
    for (size_t i = 0; i < c->nbuckets; i++) {
        mc_list *it, *tmp;
        mc_list_foreach_safe(it, tmp, &c->buckets[i])
        map_detach(c, mc_list_entry(it, mc_entries, link), dead);
    }
}

/* ---- thread exit ---- */

static void cache_destroy(mc_cache *c)
{
    pthread_mutex_destroy(&c->lock);
    mc_xfree(c->buckets);
    mc_xfree(c);
}

/* The pthread key destructor: runs at thread exit with the thread's cache
 * (invariant 7), whether or not the thread called into the library since. */
static void cache_thread_exit(void *arg)
{
    mc_cache *c = arg;
    mc_list dead;
    mc_list_init(&dead);
    if (tl_cache == c)
        tl_cache = NULL;

    /* Once unlinked no other thread can reach c: erase and clear walk the
     * registry with its lock held for the whole walk. */
    lock(&registry_lock);
    mc_list_remove(&c->link);
    unlock(&registry_lock);

    lock(&c->lock);
    map_detach_all(c, &dead);
    unlock(&c->lock);
    cache_destroy(c);

    release_all(&dead);
}

/* ---- fork ---- */

static void fork_prepare(void)
{
    lock(&registry_lock);
    mc_list *it;
    mc_list_foreach(it, &registry)
    lock(&mc_list_entry(it, mc_cache, link)->lock);
}

static void fork_parent(void)
{
    mc_list *it;
    mc_list_foreach(it, &registry)
    unlock(&mc_list_entry(it, mc_cache, link)->lock);
    unlock(&registry_lock);
}

static void fork_child(void)
{
    mc_list *it, *tmp;
    mc_list_foreach_safe(it, tmp, &registry)
    {
        mc_cache *c = mc_list_entry(it, mc_cache, link);
        if (c == tl_cache) {
            pthread_mutex_init(&c->lock, NULL);
            continue;
        }
        mc_list_remove(it);
        mc_list_insert_tail(&orphans, it);
    }
    pthread_mutex_init(&registry_lock, NULL);
}

static void init_once_fn(void)
{
    if (pthread_key_create(&cache_key, cache_thread_exit) != 0)
        return;
    if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
        pthread_key_delete(cache_key);
        return;
    }
    key_ready = true;
}

/* ---- the calling thread's cache ---- */

static mc_cache *cache_get(const char *fn)
{
    if (tl_cache)
        return tl_cache;
    pthread_once(&init_once, init_once_fn);
    if (!key_ready) {
        mc_error("[%s] Cannot set up the per-thread compile cache (pthread_key_create or "
                 "pthread_atfork failed).", fn);
        return NULL;
    }
    mc_cache *c = mc_xcalloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->buckets = mc_xmalloc(MIN_BUCKETS * sizeof *c->buckets);
    if (!c->buckets)
        goto oom_cache;
    for (size_t i = 0; i < MIN_BUCKETS; i++)
        mc_list_init(&c->buckets[i]);
    c->nbuckets = MIN_BUCKETS;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        goto oom_buckets;
    if (pthread_setspecific(cache_key, c) != 0)
        goto oom_mutex;

    /* Registered before its first use (invariant 1). */
    lock(&registry_lock);
    mc_list_insert_tail(&registry, &c->link);
    unlock(&registry_lock);
    tl_cache = c;
    return c;

oom_mutex:
    pthread_mutex_destroy(&c->lock);
oom_buckets:
    mc_xfree(c->buckets);
oom_cache:
    mc_xfree(c);
oom:
    mc_error_oom(fn, sizeof *c);
    return NULL;
}

mc_entries *mc_cache_acquire(uintptr_t fun_id, const char *fn)
{
    mc_cache *c = cache_get(fn);
    if (!c)
        return NULL;
    lock(&c->lock);
    mc_entries *e = map_find(c, fun_id);
    if (!e) {
        e = mc_xcalloc(1, sizeof *e);
        if (!e) {
            unlock(&c->lock);
            mc_error_oom(fn, sizeof *e);
            return NULL;
        }
        atomic_init(&e->refs, 1); /* the map's */
        atomic_init(&e->n_traces, 0);
        e->fun_id = fun_id;
        e->attached = true;
        mc_list_init(&e->traces);
        mc_list_insert_tail(&c->buckets[bucket_of(fun_id, c->nbuckets)], &e->link);
        c->count++;
        map_maybe_grow(c);
    }
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed); /* the caller's */
    unlock(&c->lock);
    return e;
}

void mc_cache_forget_if_empty(mc_entries *e)
{
    mc_cache *c = tl_cache;
    mc_list dead;
    mc_list_init(&dead);
    if (!c)
        return;
    lock(&c->lock);
    /* `traces` is the calling (owner) thread's to read. */
    if (e->attached && mc_list_empty(&e->traces))
        map_detach(c, e, &dead);
    unlock(&c->lock);
    release_all(&dead);
}

void mc_cache_erase(uintptr_t fun_id)
{
    mc_list dead;
    mc_list_init(&dead);
    lock(&registry_lock);
    mc_list *it;
    mc_list_foreach(it, &registry)
    {
        mc_cache *c = mc_list_entry(it, mc_cache, link);
        lock(&c->lock);
        mc_entries *e = map_find(c, fun_id);
        if (e)
            map_detach(c, e, &dead);
        unlock(&c->lock);
    }
    unlock(&registry_lock);
    release_all(&dead);
}

void mc_cache_clear(void)
{
    mc_list dead;
    mc_list_init(&dead);
    lock(&registry_lock);
    mc_list *it;
    mc_list_foreach(it, &registry)
    {
        mc_cache *c = mc_list_entry(it, mc_cache, link);
        lock(&c->lock);
        map_detach_all(c, &dead);
        unlock(&c->lock);
    }
    unlock(&registry_lock);
    release_all(&dead);
}

/* ---- counters ---- */

void mc_compile_count_trace(void) { atomic_fetch_add_explicit(&traces_made, 1, memory_order_relaxed); }

size_t mc_compile_trace_count(void) { return atomic_load_explicit(&traces_made, memory_order_relaxed); }

/* Traces in c's map (its lock held). */
static size_t map_traces(mc_cache *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nbuckets; i++) {
        mc_list *it;
        mc_list_foreach(it, &c->buckets[i])
        n += atomic_load_explicit(&mc_list_entry(it, mc_entries, link)->n_traces, memory_order_relaxed);
    }
    return n;
}

size_t mc_compile_cache_entries_all(void)
{
    size_t n = 0;
    lock(&registry_lock);
    mc_list *it;
    mc_list_foreach(it, &registry)
    {
        mc_cache *c = mc_list_entry(it, mc_cache, link);
        lock(&c->lock);
        n += map_traces(c);
        unlock(&c->lock);
    }
    unlock(&registry_lock);
    return n;
}

size_t mc_compile_cache_entries_thread(void)
{
    mc_cache *c = tl_cache;
    if (!c)
        return 0;
    lock(&c->lock);
    size_t n = map_traces(c);
    unlock(&c->lock);
    return n;
}

size_t mc_compile_cache_count(void)
{
    lock(&registry_lock);
    size_t n = mc_list_length(&registry);
    unlock(&registry_lock);
    return n;
}
