/* Distributed groups (MLX's Group): the singleton group and MPI
 * communicators, made by init and split. The library owns every group and
 * keeps it in one registry until the process exits, when the registry
 * frees the communicators and finalises MPI; so a group pointer held in
 * a node's params stays valid as long as the node. */
#ifndef MC_DISTRIBUTED_GROUP_H
#define MC_DISTRIBUTED_GROUP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "distributed/mpi_backend.h"

typedef struct mc_group {
    int rank, size;
    mc_mpi_comm *comm; /* NULL: the singleton group */
    /* Set once an operation on the group timed out: MPI may still be in
     * it, so every later collective on the group is refused. */
    atomic_bool broken;
    struct mc_group *next; /* the registry's list */
} mc_group;

/* Whether backend bk (NULL: "any") can be used by this build. */
bool mc_distributed_available(const char *bk);

/* The global group of backend bk (NULL: "any"): MPI's world when MPI is
 * available and the process was launched by MPI, else (without strict)
 * the singleton group. NULL with an error reported on failure. */
mc_group *mc_group_init(bool strict, const char *bk, const char *fn);

/* The group a null handle means: init(false, "any"). */
mc_group *mc_group_default(const char *fn);

/* The group behind a handle's ctx: NULL ctx means mc_group_default; a
 * pointer that is not a group of the registry is reported. */
mc_group *mc_group_from_ctx(void *ctx, const char *fn);

/* A new group of g's processes passing the same color, ranked by key
 * (key < 0: the rank in g). Collective over g. */
mc_group *mc_group_split(mc_group *g, int color, int key, const char *fn);

/* Reports and returns 1 if g is broken. */
int mc_group_check_usable(mc_group *g, const char *fn);

#endif
