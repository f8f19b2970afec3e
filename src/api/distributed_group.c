/* Owns distributed_group.h's entry points: handles over the library's
 * groups (src/distributed/group.c). */
#include "mlx/c/distributed_group.h"
#include "distributed/group.h"
#include "runtime/error.h"

static mlx_distributed_group group_handle(mc_group *g) { return (mlx_distributed_group){g}; }

int mlx_distributed_group_rank(mlx_distributed_group group)
{
    if (!group.ctx) {
        mc_error("[distributed_group_rank] expected a non-empty mlx_distributed_group");
        return 0;
    }
    mc_group *g = mc_group_from_ctx(group.ctx, "distributed_group_rank");
    return g ? g->rank : 0;
}

int mlx_distributed_group_size(mlx_distributed_group group)
{
    if (!group.ctx) {
        mc_error("[distributed_group_size] expected a non-empty mlx_distributed_group");
        return 0;
    }
    mc_group *g = mc_group_from_ctx(group.ctx, "distributed_group_size");
    return g ? g->size : 0;
}

mlx_distributed_group mlx_distributed_group_split(mlx_distributed_group group, int color, int key)
{
    const char *fn = "distributed_group_split";
    if (!group.ctx) {
        mc_error("[%s] expected a non-empty mlx_distributed_group", fn);
        return group_handle(NULL);
    }
    mc_group *g = mc_group_from_ctx(group.ctx, fn);
    return group_handle(g ? mc_group_split(g, color, key, fn) : NULL);
}

bool mlx_distributed_is_available(const char *bk) { return mc_distributed_available(bk); }

mlx_distributed_group mlx_distributed_init(bool strict, const char *bk)
{
    return group_handle(mc_group_init(strict, bk, "distributed_init"));
}
