/* Loading a safetensors file against the cost of reading its bytes: writes
 * a file of N MiB (default 256; eight float32 tensors) with
 * mlx_save_safetensors, then measures, with the file in the page cache,
 *   - floor_read:   read() of the whole file into a reused 1 MiB buffer
 *                   (what `cat file > /dev/null` does);
 *   - floor_fresh:  read() of the whole file into one freshly malloc'ed
 *                   buffer (the copy plus the page faults of new memory,
 *                   which every loader that returns new arrays pays);
 *   - memcpy:       memcpy of N MiB into fresh memory;
 *   - load:         mlx_load_safetensors, arrays evaluated, then freed
 *                   (their buffers go back to the library's cache, so the
 *                   next load reuses faulted-in pages), and the same with
 *                   the cache off (fresh pages each time, like floor_fresh).
 * bench/io_ref.py measures numpy, the safetensors package and MLX on the
 * same file. Usage: bench_io [FILE [MIB]] (default /tmp/mc_bench_io.safetensors 256). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "mlx/c/mlx.h"

static const char *path;
static size_t total;

static int read_reused(void *ctx)
{
    (void)ctx;
    static char buf[1 << 20];
    int fd = open(path, O_RDONLY);
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
    }
    close(fd);
    return n < 0;
}

static int read_fresh(void *ctx)
{
    (void)ctx;
    char *buf = malloc(total + (1 << 20));
    int fd = open(path, O_RDONLY);
    size_t got = 0;
    ssize_t n;
    while ((n = read(fd, buf + got, 1 << 24)) > 0)
        got += (size_t)n;
    close(fd);
    free(buf);
    return n < 0;
}

static int copy_fresh(void *ctx)
{
    const char *src = ctx;
    char *dst = malloc(total);
    memcpy(dst, src, total);
    int bad = dst[total / 2] != src[total / 2];
    free(dst);
    return bad;
}

static int load(void *ctx)
{
    mlx_stream s = *(mlx_stream *)ctx;
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    int rc = mlx_load_safetensors(&arrays, &meta, path, s);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
    return rc;
}

int main(int argc, char **argv)
{
    path = argc > 1 ? argv[1] : "/tmp/mc_bench_io.safetensors";
    size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
    enum { TENSORS = 8 };
    int rows = (int)(mib * 1024 * 1024 / TENSORS / 4 / 1024);
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    mlx_map_string_to_string_insert(meta, "format", "mlx");
    for (int t = 0; t < TENSORS; t++) {
        int shape[] = {rows, 1024};
        mlx_array a = mlx_array_new(), k = mlx_array_new();
        mlx_random_key(&k, (uint64_t)t);
        mlx_random_normal(&a, shape, 2, MLX_FLOAT32, 0.0f, 1.0f, k, s);
        char name[32];
        snprintf(name, sizeof name, "layers.%d.weight", t);
        mlx_map_string_to_array_insert(arrays, name, a);
        mlx_array_free(a);
        mlx_array_free(k);
    }
    if (mlx_save_safetensors(path, arrays, meta) != 0)
        return 1;
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
    total = (size_t)TENSORS * (size_t)rows * 1024 * 4;
    char info[64];
    snprintf(info, sizeof info, "%zu", total);
    bu_info("io_bytes", info);

    char *src = malloc(total);
    memset(src, 1, total);
    bu_report("c", "io_floor_read_reused", 1, bu_measure(read_reused, NULL, 1, 7));
    bu_report("c", "io_floor_read_fresh", 1, bu_measure(read_fresh, NULL, 1, 7));
    bu_report("c", "io_memcpy_fresh", 1, bu_measure(copy_fresh, src, 1, 7));
    bu_report("c", "io_load_safetensors", 2, bu_measure(load, &s, 1, 7));
    /* without the buffer cache every load gets fresh pages, as floor_fresh */
    size_t old;
    mlx_set_cache_limit(&old, 0);
    bu_report("c", "io_load_safetensors_nocache", 2, bu_measure(load, &s, 1, 7));
    mlx_set_cache_limit(&old, old);
    free(src);
    mlx_stream_free(s);
    return 0;
}
