/* Owns the registry of groups: the singleton group, MPI's world (made once)
 * and every split, kept until exit, when communicators are freed and MPI
 * is finalised. Backend names and messages are MLX's
 * (mlx/distributed/distributed.cpp). */
#include "distributed/group.h"

#include <pthread.h>
#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static pthread_mutex_t mc_groups_lock = PTHREAD_MUTEX_INITIALIZER;
static mc_group mc_singleton = {.rank = 0, .size = 1};
static mc_group *mc_world;  /* MPI's world, once made */
static mc_group *mc_splits; /* every split, newest first */

static const char *const mc_backends[] = {"any", "mpi", "ring", "nccl", "jaccl"};

static bool mc_backend_known(const char *bk)
{
    for (size_t i = 0; i < sizeof mc_backends / sizeof mc_backends[0]; i++)
        if (strcmp(bk, mc_backends[i]) == 0)
            return true;
    return false;
}

bool mc_distributed_available(const char *bk)
{
    if (!bk || strcmp(bk, "any") == 0 || strcmp(bk, "mpi") == 0)
        return mc_mpi_available();
    return false; /* ring, nccl, jaccl: not built here; others: unknown */
}

/* MPI's world group, made once; the lock serialises the first call. If
 * MPI cannot start, reports why only when strict. */
static mc_group *mc_world_group(bool strict, const char *fn)
{
    const char *why = NULL;
    pthread_mutex_lock(&mc_groups_lock);
    mc_group *g = mc_world;
    if (!g) {
        mc_mpi_comm *comm;
        int rank, size;
        if (mc_mpi_world(&comm, &rank, &size, &why) == 0) {
            g = mc_xcalloc(1, sizeof *g);
            if (g) {
                g->rank = rank;
                g->size = size;
                g->comm = comm;
                mc_world = g;
            } else {
                why = "out of memory";
            }
        }
    }
    pthread_mutex_unlock(&mc_groups_lock);
    /* reported outside the lock: the error handler is the user's code */
    if (!g && strict)
        mc_error("[%s] %s.", fn, why);
    return g;
}

mc_group *mc_group_init(bool strict, const char *bk, const char *fn)
{
    if (!bk)
        bk = "any";
    if (!mc_backend_known(bk)) {
        mc_error("[%s] The only valid values for backend are 'any', 'mpi', 'nccl', 'jaccl' and 'ring' but '%s' "
                 "was provided.",
                 fn, bk);
        return NULL;
    }
    bool mpi = strcmp(bk, "any") == 0 || strcmp(bk, "mpi") == 0;
    if (mpi && mc_mpi_available() && mc_mpi_launched()) {
        mc_group *g = mc_world_group(strict, fn);
        /* without strict, an MPI that cannot start means the singleton */
        return g || strict ? g : &mc_singleton;
    }
    if (!strict)
        return &mc_singleton;
    if (strcmp(bk, "any") == 0)
        mc_error("[%s] Couldn't initialize any backend.", fn);
    else if (strcmp(bk, "mpi") == 0)
        mc_error("[%s] Cannot initialize MPI.", fn);
    else
        mc_error("[%s] Cannot initialize %s distributed backend.", fn, bk);
    return NULL;
}

mc_group *mc_group_default(const char *fn) { return mc_group_init(false, "any", fn); }

mc_group *mc_group_from_ctx(void *ctx, const char *fn)
{
    if (!ctx)
        return mc_group_default(fn);
    mc_group *found = NULL;
    pthread_mutex_lock(&mc_groups_lock);
    if (ctx == &mc_singleton || ctx == mc_world)
        found = ctx;
    for (mc_group *g = mc_splits; g && !found; g = g->next)
        if (g == ctx)
            found = g;
    pthread_mutex_unlock(&mc_groups_lock);
    if (!found)
        mc_error("[%s] The group is not one made by mlx_distributed_init or mlx_distributed_group_split.", fn);
    return found;
}

mc_group *mc_group_split(mc_group *g, int color, int key, const char *fn)
{
    if (!g->comm) {
        mc_error("[%s] Cannot split the distributed group further.", fn);
        return NULL;
    }
    if (mc_group_check_usable(g, fn))
        return NULL;
    mc_group *n = mc_xcalloc(1, sizeof *n);
    if (!n) {
        mc_error_oom(fn, sizeof *n);
        return NULL;
    }
    if (mc_mpi_split(g->comm, color, key < 0 ? g->rank : key, &n->comm, &n->rank, &n->size, fn)) {
        mc_xfree(n);
        return NULL;
    }
    pthread_mutex_lock(&mc_groups_lock);
    n->next = mc_splits;
    mc_splits = n;
    pthread_mutex_unlock(&mc_groups_lock);
    return n;
}

int mc_group_check_usable(mc_group *g, const char *fn)
{
    if (atomic_load(&g->broken))
        return mc_error("[%s] The group cannot be used any more: an earlier operation on it timed out.", fn);
    return 0;
}

/* At exit: every split's communicator, then the world, then MPI itself. */
__attribute__((destructor)) static void mc_groups_free(void)
{
    pthread_mutex_lock(&mc_groups_lock);
    mc_group *g = mc_splits;
    mc_splits = NULL;
    while (g) {
        mc_group *next = g->next;
        mc_mpi_comm_free(g->comm);
        mc_xfree(g);
        g = next;
    }
    mc_xfree(mc_world);
    mc_world = NULL;
    pthread_mutex_unlock(&mc_groups_lock);
    mc_mpi_finalize();
}
