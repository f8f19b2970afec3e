/* The custom-kernel objects of fast.h (Metal and CUDA), metal.h and
 * cuda.h. This build has neither back-end, as MLX's CPU-only build: the
 * configuration objects store what they are given (MLX's mlx-c keeps the
 * same fields: output shapes and dtypes, grid, thread group, template
 * arguments, init value, verbose), kernel objects keep copies of their
 * names and sources, and apply reports the error MLX's CPU build reports
 * for that back-end. Both back-ends share one configuration and one
 * kernel record: each exported function is one call of the shared code,
 * naming itself (__func__) for messages. */
#include <string.h>

#include "handles/stream.h"
#include "handles/vector.h"
#include "mlx/c/cuda.h"
#include "mlx/c/fast.h"
#include "mlx/c/metal.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

typedef struct kernel_tmpl {
    char *name;
    int kind; /* 0 dtype, 1 int, 2 bool */
    int value;
} kernel_tmpl;

typedef struct kernel_config {
    size_t n_out;
    int **out_shapes;
    size_t *out_ndims;
    mlx_dtype *out_dtypes;
    int grid[3], thread_group[3];
    bool has_init;
    float init_value;
    bool verbose;
    size_t n_tmpl;
    kernel_tmpl *tmpl;
} kernel_config;

typedef struct kernel_obj {
    char *name, *source, *header;
    mc_vec *input_names, *output_names;
    bool ensure_row_contiguous;
    int extra; /* atomic_outputs (Metal) or shared_memory (CUDA) */
} kernel_obj;

static void *config_new(const char *fn)
{
    kernel_config *c = mc_xcalloc(1, sizeof *c);
    if (!c)
        mc_error_oom(fn, sizeof *c);
    return c;
}

static void config_free(void *ctx)
{
    kernel_config *c = ctx;
    if (!c)
        return;
    for (size_t i = 0; i < c->n_out; i++)
        mc_xfree(c->out_shapes[i]);
    mc_xfree(c->out_shapes);
    mc_xfree(c->out_ndims);
    mc_xfree(c->out_dtypes);
    for (size_t i = 0; i < c->n_tmpl; i++)
        mc_xfree(c->tmpl[i].name);
    mc_xfree(c->tmpl);
    mc_xfree(c);
}

static kernel_config *config_get(void *ctx, const char *fn, const char *type)
{
    if (!ctx)
        mc_error("[%s] expected a non-empty %s", fn, type);
    return ctx;
}

static bool valid_dtype(int d) { return d >= MLX_BOOL && d <= MLX_COMPLEX64; }

static int config_add_output(void *ctx, const int *shape, size_t size, mlx_dtype dtype, const char *fn,
                             const char *type)
{
    kernel_config *c = config_get(ctx, fn, type);
    if (!c)
        return 1;
    if (size && !shape)
        return mc_error("[%s] The shape pointer is NULL for %zu dimensions.", fn, size);
    if (!valid_dtype((int)dtype))
        return mc_error("[%s] Unknown dtype %d.", fn, (int)dtype);
    int *copy = mc_xmalloc(size ? size * sizeof *copy : 1);
    int **shapes = mc_xrealloc(c->out_shapes, (c->n_out + 1) * sizeof *shapes);
    if (shapes)
        c->out_shapes = shapes;
    size_t *ndims = shapes ? mc_xrealloc(c->out_ndims, (c->n_out + 1) * sizeof *ndims) : NULL;
    if (ndims)
        c->out_ndims = ndims;
    mlx_dtype *dts = ndims ? mc_xrealloc(c->out_dtypes, (c->n_out + 1) * sizeof *dts) : NULL;
    if (dts)
        c->out_dtypes = dts;
    if (!copy || !dts) {
        mc_xfree(copy);
        return mc_error_oom(fn, size * sizeof *copy);
    }
    if (size)
        memcpy(copy, shape, size * sizeof *copy);
    c->out_shapes[c->n_out] = copy;
    c->out_ndims[c->n_out] = size;
    c->out_dtypes[c->n_out] = dtype;
    c->n_out++;
    return 0;
}

/* The scalar fields a config setter writes. */
typedef enum { SET_GRID, SET_THREAD_GROUP, SET_INIT_VALUE, SET_VERBOSE } config_field;

static int config_set(void *ctx, config_field field, const int *xyz, float value, const char *fn, const char *type)
{
    kernel_config *c = config_get(ctx, fn, type);
    if (!c)
        return 1;
    switch (field) {
    case SET_GRID: memcpy(c->grid, xyz, sizeof c->grid); break;
    case SET_THREAD_GROUP: memcpy(c->thread_group, xyz, sizeof c->thread_group); break;
    case SET_INIT_VALUE:
        c->has_init = true;
        c->init_value = value;
        break;
    case SET_VERBOSE: c->verbose = value != 0; break;
    }
    return 0;
}

static int config_add_tmpl(void *ctx, const char *name, int kind, int value, const char *fn, const char *type)
{
    kernel_config *c = config_get(ctx, fn, type);
    if (!c)
        return 1;
    if (!name)
        return mc_error("[%s] The template argument name is NULL.", fn);
    if (kind == 0 && !valid_dtype(value))
        return mc_error("[%s] Unknown dtype %d.", fn, value);
    char *copy = mc_xstrdup(name);
    kernel_tmpl *t = copy ? mc_xrealloc(c->tmpl, (c->n_tmpl + 1) * sizeof *t) : NULL;
    if (!t) {
        mc_xfree(copy);
        return mc_error_oom(fn, strlen(name) + 1);
    }
    c->tmpl = t;
    c->tmpl[c->n_tmpl++] = (kernel_tmpl){copy, kind, value};
    return 0;
}

static void kernel_free(void *ctx)
{
    kernel_obj *k = ctx;
    if (!k)
        return;
    mc_xfree(k->name);
    mc_xfree(k->source);
    mc_xfree(k->header);
    mc_vec_free(k->input_names);
    mc_vec_free(k->output_names);
    mc_xfree(k);
}

static void *kernel_new(const char *name, mlx_vector_string in, mlx_vector_string out, const char *source,
                        const char *header, bool ensure_row_contiguous, int extra, const char *fn)
{
    if (!name || !source) {
        mc_error("[%s] The kernel's name and source must not be NULL.", fn);
        return NULL;
    }
    mc_vec *iv = mc_vec_ctx_checked(in.ctx, fn, "mlx_vector_string");
    mc_vec *ov = iv ? mc_vec_ctx_checked(out.ctx, fn, "mlx_vector_string") : NULL;
    if (!ov)
        return NULL;
    kernel_obj *k = mc_xcalloc(1, sizeof *k);
    if (!k) {
        mc_error_oom(fn, sizeof *k);
        return NULL;
    }
    k->ensure_row_contiguous = ensure_row_contiguous;
    k->extra = extra;
    k->name = mc_xstrdup(name);
    k->source = mc_xstrdup(source);
    k->header = mc_xstrdup(header);
    if (!k->name || !k->source || !k->header) {
        kernel_free(k);
        mc_error_oom(fn, strlen(source) + 1);
        return NULL;
    }
    if (!(k->input_names = mc_vec_copy(fn, iv)) || !(k->output_names = mc_vec_copy(fn, ov))) {
        kernel_free(k);
        return NULL;
    }
    return k;
}

static int kernel_apply(mlx_vector_array *outputs, void *kernel, mlx_vector_array inputs, void *config,
                        const char *fn, const char *kernel_type, const char *config_type, const char *no_backend)
{
    if (!outputs)
        return mc_error("[%s] The outputs pointer is NULL.", fn);
    if (!kernel)
        return mc_error("[%s] expected a non-empty %s", fn, kernel_type);
    if (!config)
        return mc_error("[%s] expected a non-empty %s", fn, config_type);
    (void)inputs;
    return mc_error("%s", no_backend);
}

/* ---- CUDA ---- */

static const char cuda_cfg[] = "mlx_fast_cuda_kernel_config";

mlx_fast_cuda_kernel_config mlx_fast_cuda_kernel_config_new(void)
{
    return (mlx_fast_cuda_kernel_config){config_new(__func__)};
}

void mlx_fast_cuda_kernel_config_free(mlx_fast_cuda_kernel_config cls) { config_free(cls.ctx); }

int mlx_fast_cuda_kernel_config_add_output_arg(mlx_fast_cuda_kernel_config cls, const int *shape, size_t size,
                                               mlx_dtype dtype)
{
    return config_add_output(cls.ctx, shape, size, dtype, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_set_grid(mlx_fast_cuda_kernel_config cls, int grid1, int grid2, int grid3)
{
    return config_set(cls.ctx, SET_GRID, (int[3]){grid1, grid2, grid3}, 0, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_set_thread_group(mlx_fast_cuda_kernel_config cls, int thread1, int thread2,
                                                 int thread3)
{
    return config_set(cls.ctx, SET_THREAD_GROUP, (int[3]){thread1, thread2, thread3}, 0, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_set_init_value(mlx_fast_cuda_kernel_config cls, float value)
{
    return config_set(cls.ctx, SET_INIT_VALUE, NULL, value, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_set_verbose(mlx_fast_cuda_kernel_config cls, bool verbose)
{
    return config_set(cls.ctx, SET_VERBOSE, NULL, verbose, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_add_template_arg_dtype(mlx_fast_cuda_kernel_config cls, const char *name,
                                                       mlx_dtype dtype)
{
    return config_add_tmpl(cls.ctx, name, 0, (int)dtype, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_add_template_arg_int(mlx_fast_cuda_kernel_config cls, const char *name, int value)
{
    return config_add_tmpl(cls.ctx, name, 1, value, __func__, cuda_cfg);
}

int mlx_fast_cuda_kernel_config_add_template_arg_bool(mlx_fast_cuda_kernel_config cls, const char *name,
                                                      bool value)
{
    return config_add_tmpl(cls.ctx, name, 2, value, __func__, cuda_cfg);
}

mlx_fast_cuda_kernel mlx_fast_cuda_kernel_new(const char *name, const mlx_vector_string input_names,
                                              const mlx_vector_string output_names, const char *source,
                                              const char *header, bool ensure_row_contiguous, int shared_memory)
{
    return (mlx_fast_cuda_kernel){kernel_new(name, input_names, output_names, source, header,
                                             ensure_row_contiguous, shared_memory, __func__)};
}

void mlx_fast_cuda_kernel_free(mlx_fast_cuda_kernel cls) { kernel_free(cls.ctx); }

int mlx_fast_cuda_kernel_apply(mlx_vector_array *outputs, mlx_fast_cuda_kernel cls, const mlx_vector_array inputs,
                               const mlx_fast_cuda_kernel_config config, const mlx_stream stream)
{
    MC_STREAM_REQUIRED(stream);
    (void)stream;
    return kernel_apply(outputs, cls.ctx, inputs, config.ctx, __func__, "mlx_fast_cuda_kernel", cuda_cfg,
                        "[cuda_kernel] No CUDA back-end.");
}

/* ---- Metal ---- */

static const char metal_cfg[] = "mlx_fast_metal_kernel_config";

mlx_fast_metal_kernel_config mlx_fast_metal_kernel_config_new(void)
{
    return (mlx_fast_metal_kernel_config){config_new(__func__)};
}

void mlx_fast_metal_kernel_config_free(mlx_fast_metal_kernel_config cls) { config_free(cls.ctx); }

int mlx_fast_metal_kernel_config_add_output_arg(mlx_fast_metal_kernel_config cls, const int *shape, size_t size,
                                                mlx_dtype dtype)
{
    return config_add_output(cls.ctx, shape, size, dtype, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_set_grid(mlx_fast_metal_kernel_config cls, int grid1, int grid2, int grid3)
{
    return config_set(cls.ctx, SET_GRID, (int[3]){grid1, grid2, grid3}, 0, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_set_thread_group(mlx_fast_metal_kernel_config cls, int thread1, int thread2,
                                                  int thread3)
{
    return config_set(cls.ctx, SET_THREAD_GROUP, (int[3]){thread1, thread2, thread3}, 0, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_set_init_value(mlx_fast_metal_kernel_config cls, float value)
{
    return config_set(cls.ctx, SET_INIT_VALUE, NULL, value, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_set_verbose(mlx_fast_metal_kernel_config cls, bool verbose)
{
    return config_set(cls.ctx, SET_VERBOSE, NULL, verbose, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_add_template_arg_dtype(mlx_fast_metal_kernel_config cls, const char *name,
                                                        mlx_dtype dtype)
{
    return config_add_tmpl(cls.ctx, name, 0, (int)dtype, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_add_template_arg_int(mlx_fast_metal_kernel_config cls, const char *name,
                                                      int value)
{
    return config_add_tmpl(cls.ctx, name, 1, value, __func__, metal_cfg);
}

int mlx_fast_metal_kernel_config_add_template_arg_bool(mlx_fast_metal_kernel_config cls, const char *name,
                                                       bool value)
{
    return config_add_tmpl(cls.ctx, name, 2, value, __func__, metal_cfg);
}

mlx_fast_metal_kernel mlx_fast_metal_kernel_new(const char *name, const mlx_vector_string input_names,
                                                const mlx_vector_string output_names, const char *source,
                                                const char *header, bool ensure_row_contiguous,
                                                bool atomic_outputs)
{
    return (mlx_fast_metal_kernel){kernel_new(name, input_names, output_names, source, header,
                                              ensure_row_contiguous, atomic_outputs, __func__)};
}

void mlx_fast_metal_kernel_free(mlx_fast_metal_kernel cls) { kernel_free(cls.ctx); }

int mlx_fast_metal_kernel_apply(mlx_vector_array *outputs, mlx_fast_metal_kernel cls,
                                const mlx_vector_array inputs, const mlx_fast_metal_kernel_config config,
                                const mlx_stream stream)
{
    MC_STREAM_REQUIRED(stream);
    (void)stream;
    return kernel_apply(outputs, cls.ctx, inputs, config.ctx, __func__, "mlx_fast_metal_kernel", metal_cfg,
                        "[metal_kernel] No Metal back-end.");
}

/* ---- metal.h, cuda.h ---- */

int mlx_metal_is_available(bool *res)
{
    if (!res)
        return mc_error("[mlx_metal_is_available] The result pointer is NULL.");
    *res = false;
    return 0;
}

int mlx_metal_start_capture(const char *path)
{
    (void)path;
    return 0;
}

int mlx_metal_stop_capture(void) { return 0; }

int mlx_cuda_is_available(bool *res)
{
    if (!res)
        return mc_error("[mlx_cuda_is_available] The result pointer is NULL.");
    *res = false;
    return 0;
}
