/* Owns the byte sources and sinks of io/ (stream.h). Files are read with
 * pread straight into the destination, split over the worker pool above
 * a few MiB so that a large tensor is copied from the page cache by every
 * core; a short read (the file shrank) is an error, not garbage. */
#include "io/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/pool.h"

enum { PARALLEL_CHUNK = 4 << 20 };

static void set_label(char *buf, size_t n, const char *path) { snprintf(buf, n, "file %s", path); }

int mc_io_src_open(mc_io_src *src, const char *path, const char *fn)
{
    memset(src, 0, sizeof *src);
    src->fd = -1;
    set_label(src->label_buf, sizeof src->label_buf, path);
    src->label = src->label_buf;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mc_error("[%s] Failed to open %s (%s).", fn, src->label, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return mc_error("[%s] Failed to open %s (not a regular file).", fn, src->label);
    }
    src->fd = fd;
    src->size = (uint64_t)st.st_size;
    return 0;
}

int mc_io_src_reader(mc_io_src *src, mc_iostream *rd, const char *fn)
{
    memset(src, 0, sizeof *src);
    src->fd = -1;
    src->rd = rd;
    src->size = UINT64_MAX;
    snprintf(src->label_buf, sizeof src->label_buf, "%s", mc_iostream_label(rd));
    src->label = src->label_buf;
    if (!mc_iostream_ok(rd))
        return mc_error("[%s] Failed to open %s.", fn, src->label);
    return 0;
}

void mc_io_src_close(mc_io_src *src)
{
    if (src->fd >= 0)
        close(src->fd);
    src->fd = -1;
}

static bool pread_all(int fd, char *dst, size_t n, uint64_t off)
{
    while (n) {
        size_t m = n < (size_t)1 << 30 ? n : (size_t)1 << 30;
        ssize_t got = pread(fd, dst, m, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        dst += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return true;
}

typedef struct chunked {
    int fd;
    char *dst;
    size_t n;
    uint64_t off;
    atomic_bool failed;
} chunked;

static void read_chunks(void *ctx, size_t begin, size_t end)
{
    chunked *c = ctx;
    for (size_t i = begin; i < end; i++) {
        size_t lo = i * (size_t)PARALLEL_CHUNK;
        size_t len = c->n - lo < (size_t)PARALLEL_CHUNK ? c->n - lo : (size_t)PARALLEL_CHUNK;
        if (!pread_all(c->fd, c->dst + lo, len, c->off + lo))
            atomic_store(&c->failed, true);
    }
}

int mc_io_read_at(mc_io_src *src, void *dst, size_t n, uint64_t offset, const char *fn)
{
    if (src->rd) {
        if (n == 0)
            return 0;
        if (offset > SIZE_MAX)
            return mc_error("[%s] Offset %llu is out of range in %s.", fn, (unsigned long long)offset, src->label);
        src->rd->vt.read_at_offset(src->rd->desc, dst, n, (size_t)offset);
        if (!src->rd->vt.good(src->rd->desc))
            return mc_error("[%s] Unable to read %zu bytes at offset %llu from %s.", fn, n,
                            (unsigned long long)offset, src->label);
        return 0;
    }
    if (offset > src->size || n > src->size - offset)
        return mc_error("[%s] Unable to read %zu bytes at offset %llu from %s: it has %llu bytes.", fn, n,
                        (unsigned long long)offset, src->label, (unsigned long long)src->size);
    bool ok;
    if (n <= 2 * (size_t)PARALLEL_CHUNK) {
        ok = pread_all(src->fd, dst, n, offset);
    } else {
        chunked c = {.fd = src->fd, .dst = dst, .n = n, .off = offset};
        atomic_init(&c.failed, false);
        mc_parallel_for((n + PARALLEL_CHUNK - 1) / PARALLEL_CHUNK, 1, read_chunks, &c);
        ok = !atomic_load(&c.failed);
    }
    if (!ok)
        return mc_error("[%s] Unable to read %zu bytes at offset %llu from %s.", fn, n, (unsigned long long)offset,
                        src->label);
    return 0;
}

bool mc_io_holds(mc_io_src *src, uint64_t end)
{
    if (end == 0)
        return true;
    if (!src->rd)
        return end <= src->size;
    if (end - 1 > SIZE_MAX)
        return false;
    char last;
    src->rd->vt.read_at_offset(src->rd->desc, &last, 1, (size_t)(end - 1));
    return src->rd->vt.good(src->rd->desc);
}

int mc_io_read(mc_io_src *src, void *dst, size_t n, const char *fn)
{
    if (src->rd) {
        if (n == 0)
            return 0;
        src->rd->vt.read(src->rd->desc, dst, n);
        if (!src->rd->vt.good(src->rd->desc))
            return mc_error("[%s] Unable to read %zu bytes from %s.", fn, n, src->label);
        src->pos += n;
        return 0;
    }
    if (mc_io_read_at(src, dst, n, src->pos, fn))
        return 1;
    src->pos += n;
    return 0;
}

int mc_io_sink_open(mc_io_sink *dst, const char *path, const char *fn)
{
    memset(dst, 0, sizeof *dst);
    set_label(dst->label_buf, sizeof dst->label_buf, path);
    dst->label = dst->label_buf;
    dst->fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (dst->fd < 0)
        return mc_error("[%s] Failed to open %s (%s).", fn, dst->label, strerror(errno));
    return 0;
}

int mc_io_sink_writer(mc_io_sink *dst, mc_iostream *wr, const char *fn)
{
    memset(dst, 0, sizeof *dst);
    dst->fd = -1;
    dst->wr = wr;
    snprintf(dst->label_buf, sizeof dst->label_buf, "%s", mc_iostream_label(wr));
    dst->label = dst->label_buf;
    if (!mc_iostream_ok(wr))
        return mc_error("[%s] Failed to open %s.", fn, dst->label);
    return 0;
}

int mc_io_sink_close(mc_io_sink *dst, const char *fn)
{
    int rc = 0;
    if (dst->fd >= 0 && close(dst->fd) != 0 && fn)
        rc = mc_error("[%s] Unable to close %s (%s).", fn, dst->label, strerror(errno));
    dst->fd = -1;
    return rc;
}

int mc_io_write(mc_io_sink *dst, const void *data, size_t n, const char *fn)
{
    if (dst->wr) {
        if (n)
            dst->wr->vt.write(dst->wr->desc, data, n);
        if (!dst->wr->vt.good(dst->wr->desc))
            return mc_error("[%s] Unable to write %zu bytes to %s.", fn, n, dst->label);
        return 0;
    }
    const char *p = data;
    size_t left = n;
    while (left) {
        size_t m = left < (size_t)1 << 30 ? left : (size_t)1 << 30;
        ssize_t put = write(dst->fd, p, m);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return mc_error("[%s] Unable to write %zu bytes to %s (%s).", fn, n, dst->label,
                            put < 0 ? strerror(errno) : "nothing written");
        p += put;
        left -= (size_t)put;
    }
    return 0;
}
