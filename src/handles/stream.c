/* Owns the (index, device) object behind mlx_stream handles (stream.h),
 * the process-wide counter of stream indices and each thread's default
 * stream. src/api/stream.c holds the handle functions and says how streams
 * behave on this host. */
#include "handles/stream.h"

#include <stdatomic.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static atomic_int next_index = 1; /* 0 is the default CPU stream */
static _Thread_local int default_index;

int mc_default_stream_index(void) { return default_index; }

void mc_set_default_stream_index(int index) { default_index = index; }

int mc_stream_new_index(void) { return atomic_fetch_add(&next_index, 1); }

mc_stream *mc_stream_checked(mlx_stream s, const char *fn)
{
    if (!s.ctx)
        mc_error("[%s] Expected a non-empty mlx_stream (the handle's ctx is NULL).", fn);
    return s.ctx;
}

int mc_stream_store(const char *fn, mlx_stream *dst, int index)
{
    if (!dst)
        return mc_error("[%s] The output stream pointer is NULL.", fn);
    mc_stream *s = dst->ctx;
    if (!s) {
        s = mc_xmalloc(sizeof *s);
        if (!s)
            return mc_error_oom(fn, sizeof *s);
        dst->ctx = s;
    }
    s->index = index;
    s->dev_type = MLX_CPU;
    s->dev_index = 0;
    return 0;
}
