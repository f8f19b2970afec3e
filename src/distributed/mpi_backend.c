/* Owns everything that calls MPI: initialisation at the thread level the
 * library needs, the datatypes and reduction ops MPI lacks (float16,
 * bfloat16, complex max/min), the agreement check that precedes each
 * collective, and waiting with a timeout, so that a process that never
 * joins gives an error instead of a hang (docs/distributed.md).
 *
 * The check, in groups of up to MLX_CPU_MPI_FANOUT_MAX processes (8), is
 * an exchange of blocks: each process sends every other one a header
 * naming its collective, dtype and count, followed, for a reduction of up
 * to MC_MPI_SMALL bytes, by its data, and each reduces the blocks it holds
 * in rank order. A small all_sum is then one round of messages, as
 * MPI_Allreduce's own on a few processes, and its result is the same on
 * every process. The messages travel on a duplicate of the group's
 * communicator, so that a receive's probe for any tag never sees them.
 * Larger groups check with one MPI_Iallreduce of the header. */
#include "distributed/mpi_backend.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "runtime/alloc.h"
#include "runtime/error.h"
#include "simd/half_convert.h"

/* A check's block: the header, then a small reduction's data (aligned for
 * every dtype). Up to MC_MPI_SMALL bytes of data travel in the block: with
 * the header and MPI's own, under the eager limits of Open MPI's shared
 * memory and TCP transports (4 KiB, 64 KiB), so sends complete at once. */
enum { MC_MPI_HEADER = 16, MC_MPI_SMALL = 2048, MC_MPI_BLOCK = MC_MPI_HEADER + MC_MPI_SMALL };

struct mc_mpi_comm {
    MPI_Comm comm;
    MPI_Comm side; /* a duplicate of comm: the check's blocks */
    int rank, size;
    bool fanout; /* size <= MLX_CPU_MPI_FANOUT_MAX: checks exchange blocks */
    /* The blocks of a check, one per process, and its requests: taken once
     * (lazily) and reused, under lock (one check at a time per group).
     * After a timeout MPI may still use them: abandoned, they are kept
     * for the rest of the process. */
    pthread_mutex_t lock;
    unsigned char *blocks;
    MPI_Request *reqs;
    bool abandoned;
};

static pthread_once_t mc_mpi_once = PTHREAD_ONCE_INIT;
static int mc_mpi_init_rc;         /* 0, or 1: MPI could not start */
static char mc_mpi_init_msg[256];  /* why, reported by every later call */
static bool mc_mpi_we_initialised; /* finalise at exit only if so */
static struct mc_mpi_comm mc_mpi_world_comm;
static MPI_Datatype mc_type_half; /* float16 and bfloat16: 2 opaque bytes */
static MPI_Op mc_op_sum_f16, mc_op_sum_bf16, mc_op_max_f16, mc_op_max_bf16, mc_op_min_f16, mc_op_min_bf16;
static MPI_Op mc_op_max_c64, mc_op_min_c64;

bool mc_mpi_available(void) { return true; }

bool mc_mpi_launched(void)
{
    /* Open MPI, PMIx (Open MPI 5, Slurm), MPICH's Hydra and Slurm's PMI */
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

/* Seconds to wait for the other processes (MLX_CPU_MPI_TIMEOUT; 0 or
 * negative: forever). */
static double mc_mpi_timeout(void)
{
    const char *s = getenv("MLX_CPU_MPI_TIMEOUT");
    if (!s || !*s)
        return 300.0;
    double t = strtod(s, NULL);
    return t > 0 ? t : 0;
}

/* Whether each collective first checks that all processes agree on it
 * (MLX_CPU_MPI_CHECK=0 turns it off: one round trip less, no timeout). */
static bool mc_mpi_check_enabled(void)
{
    const char *s = getenv("MLX_CPU_MPI_CHECK");
    return !(s && strcmp(s, "0") == 0);
}

/* ---- memory given up to MPI ---- */

static pthread_mutex_t mc_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static void **mc_kept;
static size_t mc_kept_n, mc_kept_cap;

void mc_mpi_keep(void *p)
{
    pthread_mutex_lock(&mc_kept_lock);
    if (mc_kept_n == mc_kept_cap) {
        size_t cap = mc_kept_cap ? 2 * mc_kept_cap : 8;
        void **grown = realloc(mc_kept, cap * sizeof *grown);
        if (grown) {
            mc_kept = grown;
            mc_kept_cap = cap;
        }
    }
    if (mc_kept_n < mc_kept_cap)
        mc_kept[mc_kept_n++] = p; /* else it leaks, which is what is wanted anyway */
    pthread_mutex_unlock(&mc_kept_lock);
}

/* ---- the reductions MPI does not have ---- */

#define MC_HALF_OP(name, to_f32, from_f32, expr)                          \
    static void name(void *in, void *inout, int *len, MPI_Datatype *type) \
    {                                                                     \
        (void)type;                                                       \
        const uint16_t *x = in;                                           \
        uint16_t *acc = inout;                                            \
        for (int i = 0; i < *len; i++) {                                  \
            float a = to_f32(acc[i]), b = to_f32(x[i]);                   \
            acc[i] = from_f32(expr);                                      \
        }                                                                 \
    }
/* max and min as MLX's std::max / std::min: a NaN accumulator stays */
MC_HALF_OP(mc_sum_f16, mc_f16_to_f32, mc_f32_to_f16, a + b)
MC_HALF_OP(mc_sum_bf16, mc_bf16_to_f32, mc_f32_to_bf16, a + b)
MC_HALF_OP(mc_max_f16, mc_f16_to_f32, mc_f32_to_f16, a < b ? b : a)
MC_HALF_OP(mc_max_bf16, mc_bf16_to_f32, mc_f32_to_bf16, a < b ? b : a)
MC_HALF_OP(mc_min_f16, mc_f16_to_f32, mc_f32_to_f16, b < a ? b : a)
MC_HALF_OP(mc_min_bf16, mc_bf16_to_f32, mc_f32_to_bf16, b < a ? b : a)
#undef MC_HALF_OP

/* complex64 orders by real part, then imaginary part, as MLX's */
static bool mc_c64_less(const float *a, const float *b) { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]); }

static void mc_max_c64(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const float *x = in;
    float *acc = inout;
    for (int i = 0; i < *len; i++)
        if (mc_c64_less(acc + 2 * i, x + 2 * i))
            memcpy(acc + 2 * i, x + 2 * i, 2 * sizeof(float));
}

static void mc_min_c64(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const float *x = in;
    float *acc = inout;
    for (int i = 0; i < *len; i++)
        if (mc_c64_less(x + 2 * i, acc + 2 * i))
            memcpy(acc + 2 * i, x + 2 * i, 2 * sizeof(float));
}

/* ---- initialisation ---- */

/* Groups of up to this many processes check by exchanging blocks (every
 * process sends to every other: fine for a few, not for hundreds). */
static int mc_mpi_fanout_max(void)
{
    const char *s = getenv("MLX_CPU_MPI_FANOUT_MAX");
    return s && *s ? atoi(s) : 8;
}

/* Completes c once c->comm is set: rank, size, the check's communicator.
 * Collective over c->comm. */
static int mc_mpi_comm_setup(mc_mpi_comm *c)
{
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    if (MPI_Comm_dup(c->comm, &c->side) != MPI_SUCCESS)
        return 1;
    MPI_Comm_set_errhandler(c->side, MPI_ERRORS_RETURN);
    c->fanout = c->size <= mc_mpi_fanout_max();
    c->blocks = NULL;
    c->reqs = NULL;
    c->abandoned = false;
    pthread_mutex_init(&c->lock, NULL);
    return 0;
}

static void mc_mpi_start(void)
{
    int inited = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            snprintf(mc_mpi_init_msg, sizeof mc_mpi_init_msg, "Cannot initialize MPI");
            mc_mpi_init_rc = 1;
            return;
        }
        mc_mpi_we_initialised = true;
    } else {
        MPI_Query_thread(&provided);
    }
    /* several threads may run collectives on different groups at once */
    if (provided < MPI_THREAD_MULTIPLE) {
        snprintf(mc_mpi_init_msg, sizeof mc_mpi_init_msg,
                 "Cannot initialize MPI: it provides thread level %d, mlx-cpu needs MPI_THREAD_MULTIPLE (%d)",
                 provided, MPI_THREAD_MULTIPLE);
        mc_mpi_init_rc = 1;
        return;
    }
    if (MPI_Comm_dup(MPI_COMM_WORLD, &mc_mpi_world_comm.comm) != MPI_SUCCESS ||
        mc_mpi_comm_setup(&mc_mpi_world_comm)) {
        snprintf(mc_mpi_init_msg, sizeof mc_mpi_init_msg, "Cannot initialize MPI: MPI_Comm_dup failed");
        mc_mpi_init_rc = 1;
        return;
    }
    MPI_Type_contiguous(2, MPI_BYTE, &mc_type_half);
    MPI_Type_commit(&mc_type_half);
    MPI_Op_create(mc_sum_f16, 1, &mc_op_sum_f16);
    MPI_Op_create(mc_sum_bf16, 1, &mc_op_sum_bf16);
    MPI_Op_create(mc_max_f16, 1, &mc_op_max_f16);
    MPI_Op_create(mc_max_bf16, 1, &mc_op_max_bf16);
    MPI_Op_create(mc_min_f16, 1, &mc_op_min_f16);
    MPI_Op_create(mc_min_bf16, 1, &mc_op_min_bf16);
    MPI_Op_create(mc_max_c64, 1, &mc_op_max_c64);
    MPI_Op_create(mc_min_c64, 1, &mc_op_min_c64);
}

int mc_mpi_world(mc_mpi_comm **out, int *rank, int *size, const char **why)
{
    pthread_once(&mc_mpi_once, mc_mpi_start);
    if (mc_mpi_init_rc) {
        *why = mc_mpi_init_msg;
        return 1;
    }
    *rank = mc_mpi_world_comm.rank;
    *size = mc_mpi_world_comm.size;
    *out = &mc_mpi_world_comm;
    return 0;
}

/* Frees what c holds besides itself (MPI not finalised yet). */
static void mc_mpi_comm_release(mc_mpi_comm *c)
{
    if (c->abandoned) {
        mc_mpi_keep(c->blocks); /* MPI may still write them */
        mc_mpi_keep(c->reqs);
    } else {
        mc_xfree(c->blocks);
        mc_xfree(c->reqs);
        MPI_Comm_free(&c->side);
    }
    c->blocks = NULL;
    c->reqs = NULL;
    pthread_mutex_destroy(&c->lock);
    MPI_Comm_free(&c->comm);
}

void mc_mpi_finalize(void)
{
    int fin = 0;
    if (!mc_mpi_we_initialised || mc_mpi_init_rc)
        return;
    MPI_Finalized(&fin);
    if (fin)
        return;
    MPI_Op ops[] = {mc_op_sum_f16, mc_op_sum_bf16, mc_op_max_f16, mc_op_max_bf16,
                    mc_op_min_f16, mc_op_min_bf16, mc_op_max_c64, mc_op_min_c64};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        MPI_Op_free(&ops[i]);
    MPI_Type_free(&mc_type_half);
    mc_mpi_comm_release(&mc_mpi_world_comm);
    MPI_Finalize();
}

/* ---- errors and waiting ---- */

static int mc_mpi_fail(int rc, const char *fn, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    return mc_error("[%s] MPI failed in %s: %s.", fn, what, msg);
}

static double mc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Tests before the first look at the clock: a collective between
 * processes of one host completes within a few thousand. */
enum { MC_MPI_SPINS = 4096 };

/* Waits for the n requests reqs: spinning first (a collective between
 * processes of one host completes in microseconds), then yielding, then
 * sleeping 1 ms between tests once a second has passed. At the timeout,
 * cancels them if they can be, and returns MC_MPI_ABANDONED if MPI may
 * still use the buffers. */
static int mc_mpi_wait_all(int n, MPI_Request *reqs, bool cancellable, const char *fn, const char *what)
{
    /* the limit (getenv) and the clock are read once spinning is over:
     * most waits end before */
    double timeout = 0, start = 0;
    for (unsigned long spins = 0;; spins++) {
        int done = 0, rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS)
            return mc_mpi_fail(rc, fn, what);
        if (done)
            return 0;
        if (spins < MC_MPI_SPINS)
            continue;
        if (spins == MC_MPI_SPINS) {
            timeout = mc_mpi_timeout();
            start = mc_now();
        }
        double waited = mc_now() - start;
        if (timeout > 0 && waited > timeout)
            break;
        if (waited < 1.0) {
            sched_yield();
        } else {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    mc_error("[%s] Timed out after %g s in %s: another process of the group has not joined "
             "(MLX_CPU_MPI_TIMEOUT sets the limit).",
             fn, mc_mpi_timeout(), what);
    if (cancellable) {
        int done = 0;
        for (int i = 0; i < n; i++)
            if (reqs[i] != MPI_REQUEST_NULL)
                MPI_Cancel(&reqs[i]);
        for (int i = 0; i < 1000 && !done; i++) {
            MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
            if (!done) {
                struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL);
            }
        }
        if (done)
            return 1;
    }
    return MC_MPI_ABANDONED;
}

static int mc_mpi_wait(MPI_Request *req, bool cancellable, const char *fn, const char *what)
{
    return mc_mpi_wait_all(1, req, cancellable, fn, what);
}

/* ---- datatypes ---- */

static MPI_Datatype mc_mpi_type(mlx_dtype dt)
{
    switch (dt) {
    case MLX_BOOL: return MPI_C_BOOL;
    case MLX_INT8: return MPI_INT8_T;
    case MLX_UINT8: return MPI_UINT8_T;
    case MLX_INT16: return MPI_INT16_T;
    case MLX_UINT16: return MPI_UINT16_T;
    case MLX_INT32: return MPI_INT32_T;
    case MLX_UINT32: return MPI_UINT32_T;
    case MLX_INT64: return MPI_INT64_T;
    case MLX_UINT64: return MPI_UINT64_T;
    case MLX_FLOAT32: return MPI_FLOAT;
    case MLX_FLOAT64: return MPI_DOUBLE;
    case MLX_COMPLEX64: return MPI_C_FLOAT_COMPLEX;
    case MLX_FLOAT16:
    case MLX_BFLOAT16: return mc_type_half;
    }
    return MPI_DATATYPE_NULL;
}

/* The MPI op for a reduction of dt (booleans sum as "or", as MLX adds
 * them). */
static MPI_Op mc_mpi_reduce_op(int op, mlx_dtype dt)
{
    bool f16 = dt == MLX_FLOAT16, bf16 = dt == MLX_BFLOAT16, c64 = dt == MLX_COMPLEX64;
    switch (op) {
    case MC_MPI_MAX:
        return f16              ? mc_op_max_f16
               : bf16           ? mc_op_max_bf16
               : c64            ? mc_op_max_c64
               : dt == MLX_BOOL ? MPI_LOR
                                : MPI_MAX;
    case MC_MPI_MIN:
        return f16              ? mc_op_min_f16
               : bf16           ? mc_op_min_bf16
               : c64            ? mc_op_min_c64
               : dt == MLX_BOOL ? MPI_LAND
                                : MPI_MIN;
    default: return f16 ? mc_op_sum_f16 : bf16 ? mc_op_sum_bf16 : dt == MLX_BOOL ? MPI_LOR : MPI_SUM;
    }
}

static const char *mc_mpi_op_name(int op)
{
    static const char *const names[] = {"all_sum", "all_max", "all_min", "all_gather", "sum_scatter"};
    return op >= 0 && op <= MC_MPI_SUM_SCATTER ? names[op] : "?";
}

/* MPI counts are ints: larger reductions go in pieces. */
enum { MC_MPI_CHUNK = 1 << 30 };

static int mc_mpi_count(size_t count, const char *fn)
{
    if (count > INT_MAX)
        return mc_error("[%s] %zu elements is more than MPI can move in one message (%d).", fn, count, INT_MAX);
    return 0;
}

/* ---- the agreement check ---- */

/* One signature per call: (op, dtype, count); equal signatures, equal
 * calls. */
static int64_t mc_mpi_sig(int op, mlx_dtype dt, size_t count)
{
    return ((int64_t)count << 8) | ((int64_t)op << 4) | (int64_t)dt;
}

static int mc_mpi_disagree(int64_t sig, int64_t other, const char *fn)
{
    return mc_error("[%s] The processes of the group disagree: this one runs %s on %lld elements of %s, another "
                    "runs %s on %lld elements of %s.",
                    fn, mc_mpi_op_name((int)((sig >> 4) & 15)), (long long)(sig >> 8),
                    mc_dtype_name((int)(sig & 15)), mc_mpi_op_name((int)((other >> 4) & 15)),
                    (long long)(other >> 8), mc_dtype_name((int)(other & 15)));
}

/* Larger groups: each process contributes (sig, -sig) to a MAX reduction,
 * which yields the largest and smallest signatures at once; they are
 * equal only if every process agrees. The buffers are on the heap, so a
 * timed-out check can abandon them. */
static int mc_mpi_agree_reduce(mc_mpi_comm *c, int64_t sig, const char *fn)
{
    int64_t *buf = mc_xmalloc(4 * sizeof(int64_t));
    if (!buf)
        return mc_error_oom(fn, 4 * sizeof(int64_t));
    buf[0] = sig;
    buf[1] = -sig;
    MPI_Request req;
    int rc = MPI_Iallreduce(buf, buf + 2, 2, MPI_INT64_T, MPI_MAX, c->comm, &req);
    if (rc != MPI_SUCCESS) {
        mc_xfree(buf);
        return mc_mpi_fail(rc, fn, "the agreement check");
    }
    rc = mc_mpi_wait(&req, false, fn, "the agreement check before a collective");
    if (rc == MC_MPI_ABANDONED) {
        mc_mpi_keep(buf); /* MPI may still write it */
        return rc;
    }
    int64_t hi = buf[2], lo = -buf[3];
    mc_xfree(buf);
    if (rc)
        return 1;
    return hi != lo ? mc_mpi_disagree(sig, hi != sig ? hi : lo, fn) : 0;
}

static unsigned char *mc_mpi_block(mc_mpi_comm *c, int r) { return c->blocks + (size_t)r * MC_MPI_BLOCK; }

/* Groups of a few: sends this process's header and `bytes` of data (from
 * in) to every other process and receives theirs, into c->blocks. Called
 * under c->lock. Returns 0 when all agree, 1 (reported), or
 * MC_MPI_ABANDONED after a timeout. */
static int mc_mpi_exchange(mc_mpi_comm *c, int64_t sig, const void *in, size_t bytes, const char *fn)
{
    int n = c->size, peers = 2 * (n - 1);
    if (c->abandoned)
        return mc_error("[%s] This group cannot be used any more: an earlier operation on it timed out.", fn);
    if (!c->blocks) {
        c->blocks = mc_xmalloc((size_t)n * MC_MPI_BLOCK);
        c->reqs = mc_xmalloc(sizeof(MPI_Request) * (size_t)(peers > 0 ? peers : 1));
        if (!c->blocks || !c->reqs) {
            mc_xfree(c->blocks);
            mc_xfree(c->reqs);
            c->blocks = NULL;
            c->reqs = NULL;
            return mc_error_oom(fn, (size_t)n * MC_MPI_BLOCK);
        }
    }
    unsigned char *mine = mc_mpi_block(c, c->rank);
    memcpy(mine, &sig, sizeof sig);
    if (bytes)
        memcpy(mine + MC_MPI_HEADER, in, bytes);
    int k = 0, rc = MPI_SUCCESS;
    /* receives first, so the peers' sends find them posted; every block
     * is received whole-capacity, as a peer may send less or more */
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if (r != c->rank)
            rc = MPI_Irecv(mc_mpi_block(c, r), MC_MPI_BLOCK, MPI_BYTE, r, 0, c->side, &c->reqs[k++]);
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if (r != c->rank)
            rc = MPI_Isend(mine, (int)(MC_MPI_HEADER + bytes), MPI_BYTE, r, 0, c->side, &c->reqs[k++]);
    if (rc != MPI_SUCCESS) {
        /* the requests already posted may still use the blocks */
        c->abandoned = true;
        mc_mpi_fail(rc, fn, "the agreement check");
        return MC_MPI_ABANDONED;
    }
    rc = mc_mpi_wait_all(k, c->reqs, false, fn, "the agreement check before a collective");
    if (rc) {
        if (rc == MC_MPI_ABANDONED)
            c->abandoned = true;
        return rc;
    }
    for (int r = 0; r < n; r++) {
        int64_t other;
        memcpy(&other, mc_mpi_block(c, r), sizeof other);
        if (other != sig)
            return mc_mpi_disagree(sig, other, fn);
    }
    return 0;
}

int mc_mpi_agree(mc_mpi_comm *c, int op, mlx_dtype dt, size_t count, const char *fn)
{
    if (!mc_mpi_check_enabled())
        return 0;
    if ((uint64_t)count >= ((uint64_t)1 << 52))
        return mc_error("[%s] %zu elements is too many to send.", fn, count);
    int64_t sig = mc_mpi_sig(op, dt, count);
    if (!c->fanout)
        return mc_mpi_agree_reduce(c, sig, fn);
    pthread_mutex_lock(&c->lock);
    int rc = mc_mpi_exchange(c, sig, NULL, 0, fn);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* ---- collectives ---- */

/* A small reduction in a group of a few: the check carries the data, and
 * each process reduces the blocks in rank order (so every process gets
 * the same bits). in == out is allowed: in is copied before out is
 * written. */
static int mc_mpi_all_reduce_small(mc_mpi_comm *c, int op, const void *in, void *out, size_t count, mlx_dtype dt,
                                   const char *fn)
{
    size_t bytes = count * mc_dtype_size(dt);
    MPI_Datatype type = mc_mpi_type(dt);
    MPI_Op mop = mc_mpi_reduce_op(op, dt);
    pthread_mutex_lock(&c->lock);
    int rc = mc_mpi_exchange(c, mc_mpi_sig(op, dt, count), in, bytes, fn);
    if (!rc) {
        memcpy(out, mc_mpi_block(c, 0) + MC_MPI_HEADER, bytes);
        for (int r = 1; r < c->size && !rc; r++) {
            int e = MPI_Reduce_local(mc_mpi_block(c, r) + MC_MPI_HEADER, out, (int)count, type, mop);
            if (e != MPI_SUCCESS)
                rc = mc_mpi_fail(e, fn, "MPI_Reduce_local");
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int mc_mpi_all_reduce(mc_mpi_comm *c, int op, const void *in, void *out, size_t count, mlx_dtype dt,
                      const char *fn)
{
    size_t item = mc_dtype_size(dt);
    if (c->fanout && count <= MC_MPI_SMALL / item)
        return mc_mpi_all_reduce_small(c, op, in, out, count, dt, fn);
    int rc = mc_mpi_agree(c, op, dt, count, fn);
    if (rc)
        return rc;
    MPI_Datatype type = mc_mpi_type(dt);
    MPI_Op mop = mc_mpi_reduce_op(op, dt);
    for (size_t done = 0; done < count; done += MC_MPI_CHUNK) {
        int n = (int)(count - done < MC_MPI_CHUNK ? count - done : MC_MPI_CHUNK);
        const void *src = in == out ? MPI_IN_PLACE : (const char *)in + done * item;
        rc = MPI_Allreduce(src, (char *)out + done * item, n, type, mop, c->comm);
        if (rc != MPI_SUCCESS)
            return mc_mpi_fail(rc, fn, "MPI_Allreduce");
    }
    return 0;
}

int mc_mpi_all_gather(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn)
{
    if (mc_mpi_count(count, fn))
        return 1;
    MPI_Datatype type = mc_mpi_type(dt);
    int rc = MPI_Allgather(in, (int)count, type, out, (int)count, type, c->comm);
    return rc == MPI_SUCCESS ? 0 : mc_mpi_fail(rc, fn, "MPI_Allgather");
}

int mc_mpi_sum_scatter(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn)
{
    if (mc_mpi_count(count, fn))
        return 1;
    int rc =
        MPI_Reduce_scatter_block(in, out, (int)count, mc_mpi_type(dt), mc_mpi_reduce_op(MC_MPI_SUM, dt), c->comm);
    return rc == MPI_SUCCESS ? 0 : mc_mpi_fail(rc, fn, "MPI_Reduce_scatter_block");
}

/* ---- messages ---- */

/* The tag names the dtype, so that a receiver expecting another one sees
 * it; the count is checked from the status. */
int mc_mpi_send(mc_mpi_comm *c, const void *buf, size_t count, mlx_dtype dt, int dst, const char *fn)
{
    if (mc_mpi_count(count, fn))
        return 1;
    MPI_Request req;
    int rc = MPI_Isend(buf, (int)count, mc_mpi_type(dt), dst, (int)dt, c->comm, &req);
    if (rc != MPI_SUCCESS)
        return mc_mpi_fail(rc, fn, "MPI_Isend");
    return mc_mpi_wait(&req, true, fn, "a send");
}

int mc_mpi_recv(mc_mpi_comm *c, void *buf, size_t count, mlx_dtype dt, int src, const char *fn)
{
    if (mc_mpi_count(count, fn))
        return 1;
    /* probe first, so that a message of another size or dtype is refused
     * before any byte of it lands in buf */
    MPI_Status st;
    MPI_Message msg;
    int found = 0;
    double timeout = 0, start = 0;
    for (unsigned long spins = 0; !found; spins++) {
        int rc = MPI_Improbe(src, MPI_ANY_TAG, c->comm, &found, &msg, &st);
        if (rc != MPI_SUCCESS)
            return mc_mpi_fail(rc, fn, "MPI_Improbe");
        if (found || spins < MC_MPI_SPINS)
            continue;
        if (spins == MC_MPI_SPINS) {
            timeout = mc_mpi_timeout();
            start = mc_now();
        }
        double waited = mc_now() - start;
        if (timeout > 0 && waited > timeout)
            return mc_error("[%s] Timed out after %g s waiting for a message from rank %d "
                            "(MLX_CPU_MPI_TIMEOUT sets the limit).",
                            fn, timeout, src);
        if (waited < 1.0) {
            sched_yield();
        } else {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    size_t want = count * mc_dtype_size(dt);
    if (st.MPI_TAG != (int)dt || (size_t)bytes != want) {
        /* take the message off the queue so that it does not reach a later
         * receive; its bytes go to a scratch buffer */
        void *scratch = mc_xmalloc(bytes > 0 ? (size_t)bytes : 1);
        if (scratch)
            MPI_Mrecv(scratch, bytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        mc_xfree(scratch);
        bool dtype_ok = st.MPI_TAG >= 0 && st.MPI_TAG <= MLX_COMPLEX64;
        return mc_error("[%s] Rank %d sent %d bytes of %s; this process expected %zu elements of %s (%zu bytes).",
                        fn, src, bytes, dtype_ok ? mc_dtype_name(st.MPI_TAG) : "an unknown dtype", count,
                        mc_dtype_name(dt), want);
    }
    int rc = MPI_Mrecv(buf, (int)count, mc_mpi_type(dt), &msg, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mc_mpi_fail(rc, fn, "MPI_Mrecv");
}

/* ---- groups ---- */

int mc_mpi_split(mc_mpi_comm *c, int color, int key, mc_mpi_comm **out, int *rank, int *size, const char *fn)
{
    mc_mpi_comm *n = mc_xmalloc(sizeof *n);
    if (!n)
        return mc_error_oom(fn, sizeof *n);
    int rc = MPI_Comm_split(c->comm, color, key, &n->comm);
    if (rc != MPI_SUCCESS) {
        mc_xfree(n);
        return mc_error("[%s] MPI could not split this group.", fn);
    }
    if (n->comm == MPI_COMM_NULL) {
        mc_xfree(n);
        return mc_error("[%s] MPI could not split this group (color %d is undefined).", fn, color);
    }
    if (mc_mpi_comm_setup(n)) {
        MPI_Comm_free(&n->comm);
        mc_xfree(n);
        return mc_error("[%s] MPI could not duplicate the new group's communicator.", fn);
    }
    *rank = n->rank;
    *size = n->size;
    *out = n;
    return 0;
}

void mc_mpi_comm_free(mc_mpi_comm *c)
{
    if (!c || c == &mc_mpi_world_comm)
        return;
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        mc_mpi_comm_release(c);
    mc_xfree(c);
}
