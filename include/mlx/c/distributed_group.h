/* Distributed groups: mlx-c v0.6.0's distributed_group.h.
 *
 * A group is a set of processes that communicate (MLX's Group). With MPI
 * (a build option, docs/distributed.md) the global group is MPI's world;
 * split makes sub-groups. Outside an MPI launch, or in a build without
 * MPI, init(false, ...) gives the singleton group (rank 0, size 1), on
 * which every collective returns its input.
 *
 * Groups are owned by the library and live until the process exits
 * (mlx-c has no function to free one): init returns the same group each
 * time for the same backend, and each split makes one new group.
 * A failing call reports one error and returns an empty group (ctx NULL),
 * or 0 from rank and size. */
#ifndef MLX_DISTRIBUTED_GROUP_H
#define MLX_DISTRIBUTED_GROUP_H

#include <stdbool.h>

#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlx_distributed_group_ {
    void *ctx;
} mlx_distributed_group;

/* This process's rank in the group. */
int mlx_distributed_group_rank(mlx_distributed_group group);

/* The number of processes in the group. */
int mlx_distributed_group_size(mlx_distributed_group group);

/* A sub-group of the processes that pass the same color; ranks in it
 * follow key (key < 0: the rank in group). Collective over group. */
mlx_distributed_group mlx_distributed_group_split(mlx_distributed_group group, int color, int key);

/* Whether backend bk ("mpi", "ring", "nccl", "jaccl", or "any"; NULL
 * means "any") can be used by this build. */
bool mlx_distributed_is_available(const char *bk /* may be null */);

/* The global group of backend bk (NULL means "any"). With strict, a
 * backend that cannot start is an error; without, the singleton group. */
mlx_distributed_group mlx_distributed_init(bool strict, const char *bk /* may be null */);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
