/* Owns mlx-c's stream.h functions: streams as (index, device) pairs
 * (handles/stream.h), the per-thread default stream and synchronisation.
 *
 * Stream 0 is the default CPU stream, as in MLX on a host without a GPU.
 * Each thread has its own default (as in recent MLX, where default streams
 * are thread-local); it starts as stream 0 and mlx_set_default_stream
 * changes only the calling thread's. mlx_stream_new_device hands out fresh
 * indices from a process-wide counter.
 *
 * This host has no GPU: a stream asked for on a GPU device (or the default
 * GPU stream) is a CPU stream, so mlx_stream_get_device reports where the
 * work really runs.
 *
 * Evaluation here is synchronous: when an mlx_eval (or any call that
 * evaluates) returns, its work is done, and nothing is ever left queued on
 * a stream. So mlx_synchronize has nothing to wait for and returns 0. */
#include "mlx/c/stream.h"

#include <stdio.h>

#include "handles/device.h"
#include "handles/stream.h"
#include "handles/string.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static mlx_stream make(const char *fn, int index)
{
    mlx_stream s = {NULL};
    mc_stream_store(fn, &s, index);
    return s;
}

mlx_stream mlx_stream_new(void) { return (mlx_stream){NULL}; }

mlx_stream mlx_stream_new_device(mlx_device dev)
{
    static const char fn[] = "mlx_stream_new_device";
    mc_device *d = mc_device_checked(dev, fn);
    if (!d || mc_device_usable(fn, d))
        return (mlx_stream){NULL};
    return make(fn, mc_stream_new_index());
}

int mlx_stream_set(mlx_stream *stream, const mlx_stream src)
{
    static const char fn[] = "mlx_stream_set";
    mc_stream *s = mc_stream_checked(src, fn);
    if (!s)
        return 1;
    if (!stream)
        return mc_error("[%s] The output stream pointer is NULL.", fn);
    if (stream->ctx == s)
        return 0;
    mc_stream copy = *s;
    if (mc_stream_store(fn, stream, copy.index))
        return 1;
    *(mc_stream *)stream->ctx = copy;
    return 0;
}

int mlx_stream_free(mlx_stream stream)
{
    mc_xfree(stream.ctx);
    return 0;
}

int mlx_stream_tostring(mlx_string *str, mlx_stream stream)
{
    static const char fn[] = "mlx_stream_tostring";
    mc_stream *s = mc_stream_checked(stream, fn);
    if (!s)
        return 1;
    char dev[64], text[128];
    mc_device_format(dev, sizeof dev, s->dev_type, s->dev_index);
    snprintf(text, sizeof text, "Stream(%s, %d)", dev, s->index);
    return mc_string_assign(fn, str, text);
}

bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs)
{
    static const char fn[] = "mlx_stream_equal";
    mc_stream *l = mc_stream_checked(lhs, fn);
    mc_stream *r = l ? mc_stream_checked(rhs, fn) : NULL;
    return l && r && l->index == r->index;
}

int mlx_stream_get_device(mlx_device *dev, mlx_stream stream)
{
    static const char fn[] = "mlx_stream_get_device";
    mc_stream *s = mc_stream_checked(stream, fn);
    return s ? mc_device_store(fn, dev, s->dev_type, s->dev_index) : 1;
}

int mlx_stream_get_index(int *index, mlx_stream stream)
{
    static const char fn[] = "mlx_stream_get_index";
    if (!index)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_stream *s = mc_stream_checked(stream, fn);
    if (!s)
        return 1;
    *index = s->index;
    return 0;
}

int mlx_synchronize(mlx_stream stream)
{
    /* Nothing is ever pending (see the file comment). */
    return mc_stream_checked(stream, "mlx_synchronize") ? 0 : 1;
}

int mlx_get_default_stream(mlx_stream *stream, mlx_device dev)
{
    static const char fn[] = "mlx_get_default_stream";
    mc_device *d = mc_device_checked(dev, fn);
    if (!d || mc_device_usable(fn, d))
        return 1;
    return mc_stream_store(fn, stream, mc_default_stream_index());
}

int mlx_set_default_stream(mlx_stream stream)
{
    mc_stream *s = mc_stream_checked(stream, "mlx_set_default_stream");
    if (!s)
        return 1;
    mc_set_default_stream_index(s->index);
    return 0;
}

mlx_stream mlx_default_cpu_stream_new(void)
{
    return make("mlx_default_cpu_stream_new", mc_default_stream_index());
}

mlx_stream mlx_default_gpu_stream_new(void)
{
    return make("mlx_default_gpu_stream_new", mc_default_stream_index());
}
