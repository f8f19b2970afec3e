/* Owns the worker pool (mc_parallel_for, mc_pool_threads), the public
 * thread-count functions of include/mlx/c/cpu.h, and OpenBLAS's thread
 * count.
 *
 * Shape: one process-wide pool of pthreads, started at the first parallel
 * call. A call publishes a job (on its own stack) under the pool lock and
 * bumps a generation counter; idle workers, which poll the counter for a
 * short while and then sleep on a condition variable, join the job if it is
 * still open and claim chunks with an atomic counter, as does the caller.
 * The caller then closes the job (no new worker can join) and waits until
 * the workers inside have left. A worker that wakes late finds the job
 * closed and goes back to waiting, so a small job never waits for every
 * worker to be scheduled.
 *
 * One job at a time: a call made while the pool is busy (from another
 * thread, or from inside a job) runs inline on its own thread. This is never
 * slower than waiting, and it cannot deadlock.
 *
 * Thread count and BLAS: OpenBLAS runs one thread, and src/graph/blas.c
 * splits large products across this pool. OpenBLAS's own threads, once
 * given the pool's count, spun in sched_yield after each call while the
 * pool's workers ran the next kernels (and made the caller yield while
 * they were descheduled): on 2 cores that cost a quarter of an MLP
 * training step. One thread is applied when the count is first read and
 * at every change.
 *
 * Lifetime: workers are joined by a destructor (at exit, or dlclose of the
 * shared library), so none outlives the library code and leak checkers see
 * no thread stacks. Threads do not keep a process alive in any case: exit()
 * ends them all. After fork() the child has no workers; the pool there is
 * reset to "none started" and starts its own on demand.
 *
 * Locks: config_lock (thread-count changes, stopping workers, fork), then
 * pool.lock (everything in `pool`); never the reverse. No kernel runs under
 * either. */
#include "runtime/pool.h"
#include "runtime/tls.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mlx/c/cpu.h"
#include "runtime/error.h"

#if defined(__has_include)
#if __has_include(<cblas.h>)
#include <cblas.h>
#endif
#endif

/* Upper bound for the thread count, so the worker table is a fixed array. */
enum { MC_POOL_MAX_THREADS = 1024, MC_CHUNKS_PER_THREAD = 4 };

/* How long a worker that has finished a job, or a caller waiting for its
 * workers, polls before sleeping on a condition variable. Waking a sleeping
 * thread took about 50 us on the development machine (futex wake plus
 * scheduling); loops that follow each other closely, as in an eval running
 * a chain of kernels, find the workers still polling and skip that cost.
 * Bounded, so an idle pool sleeps and uses no CPU. */
enum { MC_SPIN_NS = 50000 };

typedef struct job {
    mc_range_fn fn;
    void *ctx;
    size_t nchunks, base, rem; /* chunk c has base + (c < rem) items */
    atomic_size_t next;        /* first unclaimed chunk */
    int want;                  /* workers that may join (under pool.lock) */
    atomic_int users;          /* workers inside the job: changed under
                                  pool.lock, polled without it */
} job;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* workers: a new generation, or stop */
    pthread_cond_t idle; /* the caller: the last worker left its job */
    unsigned long gen;
    job *current;        /* the open job, or NULL */
    bool busy;           /* a call is between publishing and closing */
    bool stopping;       /* workers must exit; calls run inline meanwhile */
    bool spawn_failed;   /* do not retry pthread_create on every call */
    int started;         /* workers alive: tid[0 .. started) */
    pthread_t tid[MC_POOL_MAX_THREADS];
} pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};

/* pool.gen, published for workers polling without the lock. */
static atomic_ulong published_gen;

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
/* Threads including the caller. Read without locks on every call. */
static atomic_int pool_threads;

/* Set on workers, and on a caller while it runs its share: a nested call
 * from either runs inline. */
static _Thread_local bool in_pool MC_TLS_FAST;

/* ---- thread count ---- */

/* OpenBLAS gets one thread whatever n is: src/graph/blas.c splits large
 * products across this pool instead, so that OpenBLAS's idle threads do
 * not spin against the pool's workers (see src/graph/blas.h). Set on every
 * count change, in case the program changed it in between. */
static void set_blas_threads(int n)
{
    (void)n;
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1);
#endif
    /* another cblas: its threading is its own business */
}

static int parse_env_threads(void)
{
    const char *s = getenv("MLX_CPU_THREADS");
    if (!s || !*s)
        return 0;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1)
        return 0; /* not a positive integer: ignored */
    return v > MC_POOL_MAX_THREADS ? MC_POOL_MAX_THREADS : (int)v;
}

static int default_threads(void)
{
    int n = parse_env_threads();
    if (n > 0)
        return n;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        return 1;
    return cores > MC_POOL_MAX_THREADS ? MC_POOL_MAX_THREADS : (int)cores;
}

/* ---- polling ---- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Polls for at most MC_SPIN_NS until a new generation is published. */
static void poll_new_gen(unsigned long seen)
{
    unsigned long long end = now_ns() + MC_SPIN_NS;
    for (unsigned i = 1; atomic_load(&published_gen) == seen; i++) {
        cpu_relax();
        if (i % 64 == 0 && now_ns() > end)
            return;
    }
}

/* Polls for at most MC_SPIN_NS until no worker is inside j. */
static void poll_no_users(job *j)
{
    unsigned long long end = now_ns() + MC_SPIN_NS;
    for (unsigned i = 1; atomic_load(&j->users) > 0; i++) {
        cpu_relax();
        if (i % 64 == 0 && now_ns() > end)
            return;
    }
}

/* ---- workers ---- */

static void run_chunks(job *j)
{
    for (;;) {
        size_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (c >= j->nchunks)
            return;
        size_t begin = c * j->base + (c < j->rem ? c : j->rem);
        size_t end = begin + j->base + (c < j->rem);
        j->fn(j->ctx, begin, end);
    }
}

static void *worker_main(void *arg)
{
    in_pool = true;
    pthread_mutex_lock(&pool.lock);
    /* The generation when this worker was created: a job published after
     * that (including the one of the call creating it) is new to it. */
    unsigned long seen = (unsigned long)(uintptr_t)arg;
    for (;;) {
        if (pool.gen == seen && !pool.stopping) {
            pthread_mutex_unlock(&pool.lock);
            poll_new_gen(seen);
            pthread_mutex_lock(&pool.lock);
        }
        /* Checked under the lock: a stop or job announced while polling is
         * seen here, not lost. */
        while (pool.gen == seen && !pool.stopping)
            pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.stopping)
            break;
        seen = pool.gen;
        job *j = pool.current;
        if (!j || atomic_load(&j->users) >= j->want)
            continue;
        atomic_fetch_add(&j->users, 1);
        pthread_mutex_unlock(&pool.lock);
        run_chunks(j);
        pthread_mutex_lock(&pool.lock);
        if (atomic_fetch_sub(&j->users, 1) == 1)
            pthread_cond_signal(&pool.idle);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* Starts workers until `count` are alive (under pool.lock). Signals are
 * blocked in workers so that handlers always run on the program's threads. */
static void spawn_locked(int count)
{
    if (pool.spawn_failed || pool.started >= count)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (pool.started < count) {
        void *arg = (void *)(uintptr_t)pool.gen;
        if (pthread_create(&pool.tid[pool.started], NULL, worker_main, arg) != 0) {
            pool.spawn_failed = true; /* run with the workers we have */
            break;
        }
        pool.started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Stops and joins every worker; later calls start new ones on demand.
 * Called with config_lock held, never from a worker. */
static void stop_workers(void)
{
    pthread_t tids[MC_POOL_MAX_THREADS];
    pthread_mutex_lock(&pool.lock);
    int n = pool.started;
    for (int i = 0; i < n; i++)
        tids[i] = pool.tid[i];
    pool.stopping = true;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    /* A worker inside a job finishes its claimed chunk first; the caller
     * of that job takes the chunks nobody claimed. */
    for (int i = 0; i < n; i++)
        pthread_join(tids[i], NULL);

    pthread_mutex_lock(&pool.lock);
    pool.started = 0;
    pool.stopping = false;
    pool.spawn_failed = false;
    pthread_mutex_unlock(&pool.lock);
}

/* ---- fork and exit ---- */

static void pool_prefork(void)
{
    pthread_mutex_lock(&config_lock);
    pthread_mutex_lock(&pool.lock);
}

static void pool_postfork_parent(void)
{
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&config_lock);
}

/* The child has only the forking thread. Its copies of the workers' ids are
 * meaningless and any job in the parent is not the child's: forget both.
 * The condition variables may hold waiter state of parent threads, so they
 * are made anew. */
static void pool_postfork_child(void)
{
    pool.started = 0;
    pool.current = NULL;
    pool.busy = false;
    pool.stopping = false;
    pool.spawn_failed = false;
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.idle, NULL);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&config_lock);
}

__attribute__((destructor)) static void pool_at_exit(void)
{
    pthread_mutex_lock(&config_lock);
    stop_workers();
    pthread_mutex_unlock(&config_lock);
}

static void pool_init(void)
{
    int n = default_threads();
    atomic_store(&pool_threads, n);
    set_blas_threads(n);
    pthread_atfork(pool_prefork, pool_postfork_parent, pool_postfork_child);
}

/* ---- the interface ---- */

int mc_pool_threads(void)
{
    pthread_once(&pool_once, pool_init);
    return atomic_load_explicit(&pool_threads, memory_order_relaxed);
}

void mc_parallel_for(size_t n, size_t grain, mc_range_fn fn, void *ctx)
{
    if (n == 0)
        return;
    if (grain == 0)
        grain = 1;
    if (n <= grain) {
        /* a small loop never reaches the pool (nor its first-use setup) */
        fn(ctx, 0, n);
        return;
    }
    int threads = mc_pool_threads();
    size_t nchunks = n / grain;
    if (nchunks > (size_t)threads * MC_CHUNKS_PER_THREAD)
        nchunks = (size_t)threads * MC_CHUNKS_PER_THREAD;
    if (n <= grain || threads <= 1 || nchunks < 2 || in_pool) {
        fn(ctx, 0, n);
        return;
    }

    job j = {
        .fn = fn,
        .ctx = ctx,
        .nchunks = nchunks,
        .base = n / nchunks,
        .rem = n % nchunks,
    };
    atomic_init(&j.next, 0);
    atomic_init(&j.users, 0);

    pthread_mutex_lock(&pool.lock);
    if (pool.busy || pool.stopping) {
        pthread_mutex_unlock(&pool.lock);
        fn(ctx, 0, n);
        return;
    }
    spawn_locked(threads - 1);
    j.want = pool.started < (int)nchunks - 1 ? pool.started : (int)nchunks - 1;
    pool.busy = true;
    pool.current = &j;
    pool.gen++;
    atomic_store(&published_gen, pool.gen);
    if (j.want > 0)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    in_pool = true;
    run_chunks(&j);
    in_pool = false;

    pthread_mutex_lock(&pool.lock);
    pool.current = NULL; /* closed: late wakers will not join */
    if (atomic_load(&j.users) > 0) {
        pthread_mutex_unlock(&pool.lock);
        poll_no_users(&j);
        pthread_mutex_lock(&pool.lock);
    }
    while (atomic_load(&j.users) > 0)
        pthread_cond_wait(&pool.idle, &pool.lock);
    pool.busy = false;
    pthread_mutex_unlock(&pool.lock);
}

int mlx_cpu_get_num_threads(void) { return mc_pool_threads(); }

int mlx_cpu_set_num_threads(int n)
{
    if (n < 1 || n > MC_POOL_MAX_THREADS)
        return mc_error("[mlx_cpu_set_num_threads] The number of threads must be "
                        "between 1 and %d, got %d.", MC_POOL_MAX_THREADS, n);
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&config_lock);
    int old = atomic_exchange(&pool_threads, n);
    /* Fewer threads: retire the workers now (they are restarted lazily, up
     * to the new count). More threads: the next call starts the rest. */
    if (n < old) {
        stop_workers();
    } else {
        pthread_mutex_lock(&pool.lock);
        pool.spawn_failed = false;
        pthread_mutex_unlock(&pool.lock);
    }
    set_blas_threads(n);
    pthread_mutex_unlock(&config_lock);
    return 0;
}
