/* Owns mlx-c's io.h functions: checks handles, names the file (adding
 * MLX's extension when saving), makes arrays evaluated and contiguous
 * (with ops, which io/ sits below), and calls the formats in io/. */
#include "mlx/c/io.h"

#include <string.h>

#include "graph/eval.h"
#include "handles/iostream.h"
#include "handles/map.h"
#include "handles/stream.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "mlx/c/ops.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static int check_out(const void *p, const char *what, const char *fn)
{
    return p ? 0 : mc_error("[%s] The %s pointer is NULL.", fn, what);
}

/* ---- .npy ---- */

static int load_npy(mlx_array *res, mc_io_src *src, const char *fn)
{
    mc_array *a = mc_npy_load(src, fn);
    if (!a)
        return 1;
    mc_array_release(mc_arr(*res));
    res->ctx = a;
    return 0;
}

int mlx_load_reader(mlx_array *res, mlx_io_reader in_stream, const mlx_stream s)
{
    static const char fn[] = "load";
    MC_STREAM_REQUIRED(s);
    mc_iostream *rd =
        check_out(res, "result", fn) ? NULL : mc_iostream_checked(in_stream.ctx, fn, "mlx_io_reader");
    mc_io_src src;
    if (!rd || mc_io_src_reader(&src, rd, fn))
        return 1;
    return load_npy(res, &src, fn);
}

int mlx_load(mlx_array *res, const char *file, const mlx_stream s)
{
    static const char fn[] = "load";
    MC_STREAM_REQUIRED(s);
    if (check_out(res, "result", fn) || check_out(file, "file name", fn))
        return 1;
    mc_io_src src;
    if (mc_io_src_open(&src, file, fn))
        return 1;
    int rc = load_npy(res, &src, fn);
    mc_io_src_close(&src);
    return rc;
}

/* A new reference to a's data, evaluated and contiguous (row-major, or
 * column-major when allow_col), or NULL with an error. */
static mc_array *ready(mc_array *a, bool allow_col, const char *fn)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    if (!s.ctx)
        return NULL; /* its failure is reported */
    mlx_array c = mlx_array_new();
    int rc = mlx_contiguous(&c, mc_handle(a), allow_col, s);
    mlx_stream_free(s);
    if (rc || mc_eval1(mc_arr(c), fn)) {
        mlx_array_free(c);
        return NULL;
    }
    return mc_arr(c);
}

static int save_npy(mc_io_sink *dst, mlx_array a, const char *fn)
{
    mc_array *x = mc_arr_checked(a, fn);
    mc_array *c = x ? ready(x, true, fn) : NULL;
    if (!c)
        return 1;
    int rc = mc_npy_save(dst, c, fn);
    mc_array_release(c);
    return rc;
}

int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a)
{
    static const char fn[] = "save";
    mc_iostream *wr = mc_iostream_checked(out_stream.ctx, fn, "mlx_io_writer");
    mc_io_sink dst;
    if (!wr || mc_io_sink_writer(&dst, wr, fn))
        return 1;
    return save_npy(&dst, a, fn);
}

/* file, with ext appended unless it already ends so (MLX's rule), in a
 * new buffer, or NULL with an error. */
static char *with_ext(const char *file, const char *ext, const char *fn)
{
    size_t n = strlen(file), e = strlen(ext);
    bool has = n >= e && strcmp(file + n - e, ext) == 0;
    char *path = mc_xmalloc(n + e + 1);
    if (!path) {
        mc_error_oom(fn, n + e + 1);
        return NULL;
    }
    memcpy(path, file, n);
    memcpy(path + n, has ? "" : ext, has ? 1 : e + 1);
    return path;
}

int mlx_save(const char *file, const mlx_array a)
{
    static const char fn[] = "save";
    if (check_out(file, "file name", fn) || !mc_arr_checked(a, fn))
        return 1;
    char *path = with_ext(file, ".npy", fn);
    mc_io_sink dst;
    if (!path || mc_io_sink_open(&dst, path, fn)) {
        mc_xfree(path);
        return 1;
    }
    mc_xfree(path);
    int rc = save_npy(&dst, a, fn);
    /* a failed save already reported; closing then must not report again */
    return rc ? (mc_io_sink_close(&dst, NULL), 1) : mc_io_sink_close(&dst, fn);
}

/* ---- safetensors ---- */

static int load_st(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1, mc_io_src *src, const char *fn)
{
    mc_map *arrays, *meta;
    if (mc_st_load(src, &arrays, &meta, fn))
        return 1;
    res_0->ctx = mc_map_replace(res_0->ctx, arrays);
    res_1->ctx = mc_map_replace(res_1->ctx, meta);
    return 0;
}

int mlx_load_safetensors_reader(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1,
                                mlx_io_reader in_stream, const mlx_stream s)
{
    static const char fn[] = "load_safetensors";
    MC_STREAM_REQUIRED(s);
    if (check_out(res_0, "array map", fn) || check_out(res_1, "metadata map", fn))
        return 1;
    mc_iostream *rd = mc_iostream_checked(in_stream.ctx, fn, "mlx_io_reader");
    mc_io_src src;
    if (!rd || mc_io_src_reader(&src, rd, fn))
        return 1;
    return load_st(res_0, res_1, &src, fn);
}

int mlx_load_safetensors(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1, const char *file,
                         const mlx_stream s)
{
    static const char fn[] = "load_safetensors";
    MC_STREAM_REQUIRED(s);
    if (check_out(res_0, "array map", fn) || check_out(res_1, "metadata map", fn) ||
        check_out(file, "file name", fn))
        return 1;
    mc_io_src src;
    if (mc_io_src_open(&src, file, fn))
        return 1;
    int rc = load_st(res_0, res_1, &src, fn);
    mc_io_src_close(&src);
    return rc;
}

/* A map of the same keys to evaluated row-contiguous arrays (MLX makes
 * them contiguous before writing), or NULL with an error. */
static mc_map *ready_map(const mc_map *m, const char *fn)
{
    mc_map *out = mc_map_new(fn, MC_MAP_ARRAY);
    for (size_t k = 0; out && k < m->len; k++) {
        mc_array *c = ready(m->arrs[k], false, fn);
        int rc = !c || mc_map_put_array(fn, out, m->keys[k], c);
        mc_array_release(c);
        if (rc) {
            mc_map_free(out);
            out = NULL;
        }
    }
    return out;
}

static int save_st(mc_io_sink *dst, const mlx_map_string_to_array param, const mlx_map_string_to_string metadata,
                   const char *fn)
{
    mc_map *arrays = mc_map_ctx_checked(param.ctx, fn, "mlx_map_string_to_array");
    mc_map *meta = arrays ? mc_map_ctx_checked(metadata.ctx, fn, "mlx_map_string_to_string") : NULL;
    mc_map *c = meta ? ready_map(arrays, fn) : NULL;
    if (!c)
        return 1;
    int rc = mc_st_save(dst, c, meta, fn);
    mc_map_free(c);
    return rc;
}

int mlx_save_safetensors_writer(mlx_io_writer in_stream, const mlx_map_string_to_array param,
                                const mlx_map_string_to_string metadata)
{
    static const char fn[] = "save_safetensors";
    mc_iostream *wr = mc_iostream_checked(in_stream.ctx, fn, "mlx_io_writer");
    mc_io_sink dst;
    if (!wr || mc_io_sink_writer(&dst, wr, fn))
        return 1;
    return save_st(&dst, param, metadata, fn);
}

int mlx_save_safetensors(const char *file, const mlx_map_string_to_array param,
                         const mlx_map_string_to_string metadata)
{
    static const char fn[] = "save_safetensors";
    if (check_out(file, "file name", fn) || !mc_map_ctx_checked(param.ctx, fn, "mlx_map_string_to_array") ||
        !mc_map_ctx_checked(metadata.ctx, fn, "mlx_map_string_to_string"))
        return 1;
    char *path = with_ext(file, ".safetensors", fn);
    mc_io_sink dst;
    if (!path || mc_io_sink_open(&dst, path, fn)) {
        mc_xfree(path);
        return 1;
    }
    mc_xfree(path);
    int rc = save_st(&dst, param, metadata, fn);
    /* a failed save already reported; closing then must not report again */
    return rc ? (mc_io_sink_close(&dst, NULL), 1) : mc_io_sink_close(&dst, fn);
}
