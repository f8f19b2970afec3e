/* Owns mlx-c's export.h entry points: each checks its handles, flattens
 * the arguments as MLX does (positional arrays, then keyword arrays in the
 * sorted order of their names) and calls compile/export.h. The function to
 * trace is given to compile as one closure of the flat inputs, which
 * splits them back into what the user's function takes. */
#include "mlx/c/export.h"

#include <stdlib.h>
#include <string.h>

#include "compile/export.h"
#include "handles/closure.h"
#include "handles/map.h"
#include "handles/vector.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const char fn_export[] = "export_function";
static const char fn_import[] = "import_function";
static const char fn_call[] = "import_function::call";

/* ---- flat inputs ---- */

/* The arrays of args then kwargs' by sorted name, and those names. */
typedef struct flat {
    mc_array **in;
    int n_pos, n;
    const char **kw; /* borrowed from the map */
    int n_kw;
} flat;

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void flat_free(flat *f)
{
    mc_xfree(f->in);
    mc_xfree(f->kw);
}

static int flat_make(flat *f, mlx_vector_array args, const mc_map *kwargs, const char *fn)
{
    memset(f, 0, sizeof *f);
    size_t np = mc_vec_len(args), nk = kwargs ? kwargs->len : 0;
    if (np + nk > (size_t)INT32_MAX)
        return mc_error("[%s] Too many inputs (%zu).", fn, np + nk);
    f->in = mc_xmalloc((np + nk ? np + nk : 1) * sizeof *f->in);
    f->kw = mc_xmalloc((nk ? nk : 1) * sizeof *f->kw);
    if (!f->in || !f->kw) {
        flat_free(f);
        return mc_error_oom(fn, 0);
    }
    for (size_t i = 0; i < np; i++) {
        f->in[i] = mc_vec_at(args, i);
        if (!f->in[i]) {
            flat_free(f);
            return mc_error("[%s] Argument %zu is an empty array.", fn, i);
        }
    }
    for (size_t i = 0; i < nk; i++)
        f->kw[i] = kwargs->keys[i];
    qsort(f->kw, nk, sizeof *f->kw, cmp_name);
    for (size_t i = 0; i < nk; i++) {
        size_t k;
        mc_map_find(kwargs, f->kw[i], &k);
        f->in[np + i] = kwargs->arrs[k];
    }
    f->n_pos = (int)np;
    f->n = (int)(np + nk);
    f->n_kw = (int)nk;
    return 0;
}

/* A map handle's object; an empty handle is an empty map. */
static int map_of(mlx_map_string_to_array m, mc_map **out, const char *fn)
{
    *out = NULL;
    if (!m.ctx)
        return 0;
    *out = mc_map_ctx_checked(m.ctx, fn, "mlx_map_string_to_array");
    return *out ? 0 : 1;
}

/* ---- the closures traced ---- */

/* A positional function given the flat inputs: it sees the first n_pos. */
typedef struct pos_call {
    mc_closure *fun;
    int n_pos;
} pos_call;

static int pos_call_fn(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    pos_call *p = payload;
    mlx_vector_array args = mc_vec_from(fn_export, in.ctx ? mc_vec_arrays(in.ctx) : NULL, (size_t)p->n_pos);
    if (!args.ctx && p->n_pos)
        return 1;
    int rc = mc_closure_call(p->fun, res, args);
    mlx_vector_array_free(args);
    return rc;
}

/* A keyword function given the flat inputs: positional ones, then the
 * keyword ones put back in a map under their names. */
typedef struct kw_call {
    mlx_closure_kwargs fun;
    const flat *f;
} kw_call;

static int kw_call_fn(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    kw_call *p = payload;
    mc_array **arrs = in.ctx ? mc_vec_arrays(in.ctx) : NULL;
    mlx_vector_array args = mc_vec_from(fn_export, arrs, (size_t)p->f->n_pos);
    mlx_map_string_to_array kwargs = mlx_map_string_to_array_new();
    int rc = (!args.ctx && p->f->n_pos) || !kwargs.ctx;
    for (int i = 0; !rc && i < p->f->n_kw; i++)
        rc = mlx_map_string_to_array_insert(kwargs, p->f->kw[i], mc_handle(arrs[p->f->n_pos + i]));
    if (!rc)
        rc = mlx_closure_kwargs_apply(res, p->fun, args, kwargs);
    mlx_map_string_to_array_free(kwargs);
    mlx_vector_array_free(args);
    return rc;
}

static int export_one(mc_exporter *x, mc_closure *c, const flat *f)
{
    if (!c)
        return 1;
    int rc = mc_exporter_add(x, c, f->in, f->n, f->kw, f->n_kw, fn_export);
    mc_closure_release(c);
    return rc;
}

static int check_file(const char *file, const char *fn)
{
    return file ? 0 : mc_error("[%s] The file name is NULL.", fn);
}

int mlx_export_function(const char *file, const mlx_closure fun, const mlx_vector_array args, bool shapeless)
{
    if (check_file(file, fn_export))
        return 1;
    if (!fun.ctx)
        return mc_error("[%s] Expected a non-empty mlx_closure.", fn_export);
    flat f;
    if (flat_make(&f, args, NULL, fn_export))
        return 1;
    mc_exporter *x = mc_exporter_new(file, shapeless, fn_export);
    pos_call p = {fun.ctx, f.n_pos};
    int rc = !x || export_one(x, mc_closure_create(fn_export, NULL, pos_call_fn, NULL, &p, NULL), &f);
    mc_exporter_free(x);
    flat_free(&f);
    return rc;
}

int mlx_export_function_kwargs(const char *file, const mlx_closure_kwargs fun, const mlx_vector_array args,
                               const mlx_map_string_to_array kwargs, bool shapeless)
{
    mc_map *m;
    if (check_file(file, fn_export) || map_of(kwargs, &m, fn_export))
        return 1;
    if (!fun.ctx)
        return mc_error("[%s] Expected a non-empty mlx_closure_kwargs.", fn_export);
    flat f;
    if (flat_make(&f, args, m, fn_export))
        return 1;
    mc_exporter *x = mc_exporter_new(file, shapeless, fn_export);
    kw_call p = {fun, &f};
    int rc = !x || export_one(x, mc_closure_create(fn_export, NULL, kw_call_fn, NULL, &p, NULL), &f);
    mc_exporter_free(x);
    flat_free(&f);
    return rc;
}

/* ---- exporters ---- */

typedef struct exporter_handle {
    mc_exporter *x;
    mc_closure *fun; /* a reference */
} exporter_handle;

mlx_function_exporter mlx_function_exporter_new(const char *file, const mlx_closure fun, bool shapeless)
{
    if (check_file(file, fn_export))
        return (mlx_function_exporter){NULL};
    if (!fun.ctx) {
        mc_error("[%s] Expected a non-empty mlx_closure.", fn_export);
        return (mlx_function_exporter){NULL};
    }
    exporter_handle *h = mc_xmalloc(sizeof *h);
    if (!h) {
        mc_error_oom(fn_export, sizeof *h);
        return (mlx_function_exporter){NULL};
    }
    h->x = mc_exporter_new(file, shapeless, fn_export);
    if (!h->x) {
        mc_xfree(h);
        return (mlx_function_exporter){NULL};
    }
    h->fun = mc_closure_retain(fun.ctx);
    return (mlx_function_exporter){h};
}

int mlx_function_exporter_free(mlx_function_exporter xfunc)
{
    exporter_handle *h = xfunc.ctx;
    if (!h)
        return 0;
    mc_exporter_free(h->x);
    mc_closure_release(h->fun);
    mc_xfree(h);
    return 0;
}

int mlx_function_exporter_apply_kwargs(const mlx_function_exporter xfunc, const mlx_vector_array args,
                                       const mlx_map_string_to_array kwargs)
{
    exporter_handle *h = xfunc.ctx;
    if (!h)
        return mc_error("[%s] Expected a non-empty mlx_function_exporter.", fn_export);
    mc_map *m;
    if (map_of(kwargs, &m, fn_export))
        return 1;
    flat f;
    if (flat_make(&f, args, m, fn_export))
        return 1;
    pos_call p = {h->fun, f.n_pos};
    int rc = export_one(h->x, mc_closure_create(fn_export, NULL, pos_call_fn, NULL, &p, NULL), &f);
    flat_free(&f);
    return rc;
}

int mlx_function_exporter_apply(const mlx_function_exporter xfunc, const mlx_vector_array args)
{
    return mlx_function_exporter_apply_kwargs(xfunc, args, (mlx_map_string_to_array){NULL});
}

/* ---- imported functions ---- */

mlx_imported_function mlx_imported_function_new(const char *file)
{
    if (check_file(file, fn_import))
        return (mlx_imported_function){NULL};
    return (mlx_imported_function){mc_imported_load(file, fn_import)};
}

int mlx_imported_function_free(mlx_imported_function xfunc)
{
    mc_imported_free(xfunc.ctx);
    return 0;
}

int mlx_imported_function_apply_kwargs(mlx_vector_array *res, const mlx_imported_function xfunc,
                                       const mlx_vector_array args, const mlx_map_string_to_array kwargs)
{
    if (!res)
        return mc_error("[%s] The result pointer is NULL.", fn_call);
    if (!xfunc.ctx)
        return mc_error("[%s] Expected a non-empty mlx_imported_function.", fn_call);
    mc_map *m;
    if (map_of(kwargs, &m, fn_call))
        return 1;
    size_t np = mc_vec_len(args);
    mc_array **in = mc_xmalloc((np ? np : 1) * sizeof *in);
    if (!in)
        return mc_error_oom(fn_call, np * sizeof *in);
    for (size_t i = 0; i < np; i++) {
        in[i] = mc_vec_at(args, i);
        if (!in[i]) {
            mc_xfree(in);
            return mc_error("[%s] Argument %zu is an empty array.", fn_call, i);
        }
    }
    mc_array **outs = NULL;
    int n_out = 0;
    int rc = np > (size_t)INT32_MAX ? mc_error("[%s] Too many inputs.", fn_call)
                                    : mc_imported_call(xfunc.ctx, in, (int)np, m, &outs, &n_out, fn_call);
    mc_xfree(in);
    if (rc)
        return 1;
    rc = mc_vec_assign(fn_call, res, outs, (size_t)n_out);
    for (int i = 0; i < n_out; i++)
        mc_array_release(outs[i]);
    mc_xfree(outs);
    return rc;
}

int mlx_imported_function_apply(mlx_vector_array *res, const mlx_imported_function xfunc,
                                const mlx_vector_array args)
{
    return mlx_imported_function_apply_kwargs(res, xfunc, args, (mlx_map_string_to_array){NULL});
}
