/* Owns mlx-c's graph_utils.h: node namers and writing a graph (for example
 * the outputs of a compiled function, i.e. its replayed tape) as Graphviz
 * DOT or as a listing, in MLX's formats (mlx/graph_utils.cpp).
 *
 * Names are keyed by the array descriptor's address, as MLX keys them by
 * array id; a namer holds no reference to the arrays it names. Generated
 * names follow MLX: the n-th name given is A, B, ..., Z, AA, AB, ... where
 * n counts every name the namer holds, including names set by hand. The
 * printers work on an overlay so that the caller's namer is not changed
 * (MLX passes the namer by value). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "graph/primitive.h"
#include "graph/walk.h"
#include "handles/vector.h"
#include "mlx/c/graph_utils.h"
#include "runtime/alloc.h"
#include "runtime/darray.h"
#include "runtime/error.h"
#include "runtime/ptrmap.h"

typedef struct mc_namer {
    mc_ptrmap map;   /* array -> index into names */
    mc_darray names; /* char *: owned strings; their addresses are handed out */
} mc_namer;

static void namer_clear(mc_namer *n)
{
    char **names = n->names.items;
    for (size_t i = 0; i < n->names.len; i++)
        mc_xfree(names[i]);
    mc_darray_free(&n->names);
    mc_ptrmap_free(&n->map);
}

static void namer_destroy(mc_namer *n)
{
    if (!n)
        return;
    namer_clear(n);
    mc_xfree(n);
}

static char **name_at(const mc_namer *n, int i) { return mc_darray_at(&n->names, (size_t)i); }

static const char *namer_lookup(const mc_namer *n, const mc_array *a)
{
    int *i = mc_ptrmap_get(&n->map, a);
    return i ? *name_at(n, *i) : NULL;
}

/* Gives a the name `name` (taken over). Returns 0, or 1 (name freed). */
static int namer_put(mc_namer *n, const mc_array *a, char *name)
{
    int *i = mc_ptrmap_get(&n->map, a);
    if (i) {
        mc_xfree(*name_at(n, *i));
        *name_at(n, *i) = name;
        return 0;
    }
    size_t k = n->names.len;
    if (k >= (size_t)INT32_MAX || mc_darray_reserve(&n->names, k + 1) || mc_ptrmap_put(&n->map, a, (int)k))
        goto fail;
    *(char **)mc_darray_push(&n->names) = name; /* reserved: cannot fail */
    return 0;
fail:
    mc_xfree(name);
    return 1;
}

/* MLX's sequence: the k-th name (k from 1) in bijective base 26. */
static char *generated_name(size_t k)
{
    char tmp[32];
    int len = 0;
    while (k > 0 && len < (int)sizeof tmp) {
        tmp[len++] = (char)('A' + (k - 1) % 26);
        k = (k - 1) / 26;
    }
    char *s = mc_xmalloc((size_t)len + 1);
    if (!s)
        return NULL;
    for (int i = 0; i < len; i++)
        s[i] = tmp[len - 1 - i];
    s[len] = '\0';
    return s;
}

/* The name of a in `own`, or in `base` first when printing on an overlay
 * (base may be NULL); generated into `own` if neither has one. NULL on
 * allocation failure. */
static const char *name_of(const mc_namer *base, mc_namer *own, const mc_array *a)
{
    const char *s = base ? namer_lookup(base, a) : NULL;
    if (s)
        return s;
    s = namer_lookup(own, a);
    if (s)
        return s;
    char *g = generated_name((base ? base->map.count : 0) + own->map.count + 1);
    if (!g || namer_put(own, a, g))
        return NULL;
    return namer_lookup(own, a);
}

/* ---- the namer handle ---- */

static mc_namer *namer_checked(mlx_node_namer namer, const char *fn)
{
    if (!namer.ctx)
        mc_error("[%s] Expected a non-empty mlx_node_namer (the handle's ctx is NULL).", fn);
    return namer.ctx;
}

mlx_node_namer mlx_node_namer_new(void)
{
    mc_namer *n = mc_xcalloc(1, sizeof *n);
    if (n)
        n->names = MC_DARRAY_INIT(char *);
    else
        mc_error_oom("mlx_node_namer_new", sizeof *n);
    return (mlx_node_namer){n};
}

int mlx_node_namer_free(mlx_node_namer namer)
{
    namer_destroy(namer.ctx);
    return 0;
}

int mlx_node_namer_set_name(mlx_node_namer namer, const mlx_array arr, const char *name)
{
    static const char fn[] = "mlx_node_namer_set_name";
    mc_namer *n = namer_checked(namer, fn);
    if (!n)
        return 1;
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return 1;
    if (!name)
        return mc_error("[%s] The name is NULL.", fn);
    char *copy = mc_xstrdup(name);
    if (!copy || namer_put(n, a, copy))
        return mc_error_oom(fn, strlen(name) + 1);
    return 0;
}

int mlx_node_namer_get_name(const char **name, mlx_node_namer namer, const mlx_array arr)
{
    static const char fn[] = "mlx_node_namer_get_name";
    if (!name)
        return mc_error("[%s] The output name pointer is NULL.", fn);
    mc_namer *n = namer_checked(namer, fn);
    if (!n)
        return 1;
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return 1;
    const char *s = name_of(NULL, n, a);
    if (!s)
        return mc_error_oom(fn, 8);
    *name = s;
    return 0;
}

/* ---- walking the graph ---- */

/* In MLX terms a node "has a primitive" unless it is data or a trace
 * input (a placeholder). */
static bool has_primitive(const mc_array *a)
{
    return a->prim != MC_PRIM_NONE && a->prim != MC_PRIM_PLACEHOLDER;
}

/* Shared set-up of the two printers: checks, outputs, traversal. */
typedef struct printer {
    FILE *os;
    const mc_namer *base;
    mc_namer own;
    mc_array **outs;
    size_t n_outs;
    mc_darray nodes; /* mc_array *: the graph in post-order */
    const char *fn;
} printer;

static int printer_open(printer *p, FILE *os, mlx_node_namer namer, mlx_vector_array outputs, const char *fn)
{
    memset(p, 0, sizeof *p);
    p->fn = fn;
    p->own.names = MC_DARRAY_INIT(char *);
    p->nodes = MC_DARRAY_INIT(mc_array *);
    if (!os)
        return mc_error("[%s] The output stream is NULL.", fn);
    p->os = os;
    p->base = namer_checked(namer, fn);
    if (!p->base)
        return 1;
    mc_vec *v = mc_vec_checked(outputs, fn);
    if (!v)
        return 1;
    for (size_t i = 0; i < v->len; i++)
        if (!mc_vec_arrays(v)[i])
            return mc_error("[%s] Output %zu is an empty array.", fn, i);
    p->outs = mc_vec_arrays(v);
    p->n_outs = v->len;
    /* MLX's depth_first_traversal, without recursion */
    return mc_walk_collect(p->outs, p->n_outs, false, &p->nodes, fn);
}

static void printer_close(printer *p)
{
    mc_darray_free(&p->nodes);
    namer_clear(&p->own);
}

static const char *pname(printer *p, const mc_array *a)
{
    return name_of(p->base, &p->own, a);
}

/* "A [(2,3), float32], B [...]" */
static int print_arrs(printer *p, mc_array *const *arrs, size_t n)
{
    char shape[512];
    for (size_t i = 0; i < n; i++) {
        const char *s = pname(p, arrs[i]);
        if (!s)
            return 1;
        fprintf(p->os, "%s [%s, %s]%s", s, mc_shape_str(shape, sizeof shape, arrs[i]->ndim, arrs[i]->shape),
                mc_dtype_name(arrs[i]->dtype), i + 1 < n ? ", " : "");
    }
    return 0;
}

int mlx_print_graph(FILE *os, const mlx_node_namer namer, const mlx_vector_array outputs)
{
    static const char fn[] = "mlx_print_graph";
    printer p;
    mc_darray inputs = MC_DARRAY_INIT(mc_array *), tape = MC_DARRAY_INIT(mc_array *);
    int rc = 1;
    if (printer_open(&p, os, namer, outputs, fn))
        goto done;
    mc_array **nodes = p.nodes.items;
    for (size_t i = 0; i < p.nodes.len; i++) {
        mc_array **slot = mc_darray_push(has_primitive(nodes[i]) ? &tape : &inputs);
        if (!slot)
            goto oom;
        *slot = nodes[i];
    }

    fputs("Inputs: ", os);
    if (print_arrs(&p, inputs.items, inputs.len))
        goto oom;
    fputs("\nOutputs: ", os);
    if (print_arrs(&p, p.outs, p.n_outs))
        goto oom;
    fputs("\n", os);
    for (size_t i = 0; i < tape.len; i++) {
        mc_array *a = ((mc_array **)tape.items)[i];
        fprintf(os, "%s ", mc_prim_name(a->prim, a->params));
        if (print_arrs(&p, a->inputs, (size_t)a->n_inputs))
            goto oom;
        fputs(" -> ", os);
        if (print_arrs(&p, &a, 1))
            goto oom;
        fputs("\n", os);
    }
    rc = 0;
    goto done;
oom:
    rc = mc_error_oom(fn, 0);
done:
    mc_darray_free(&inputs);
    mc_darray_free(&tape);
    printer_close(&p);
    return rc;
}

int mlx_export_to_dot(FILE *os, const mlx_node_namer namer, const mlx_vector_array outputs)
{
    static const char fn[] = "mlx_export_to_dot";
    printer p;
    mc_ptrmap intermediate;
    mc_ptrmap_init_set(&intermediate);
    int rc = 1;
    if (printer_open(&p, os, namer, outputs, fn))
        goto done;
    /* Arrays used as an input of a node are intermediates; the others,
     * unless they are inputs, are the graph's sinks. */
    for (size_t i = 0; i < p.nodes.len; i++) {
        mc_array *a = ((mc_array **)p.nodes.items)[i];
        if (!has_primitive(a))
            continue;
        for (int k = 0; k < a->n_inputs; k++)
            if (mc_ptrmap_add(&intermediate, a->inputs[k]) < 0)
                goto oom;
    }

    fputs("digraph {\n", os);
    for (size_t i = 0; i < p.nodes.len; i++) {
        mc_array *a = ((mc_array **)p.nodes.items)[i];
        const char *name = pname(&p, a);
        if (!name)
            goto oom;
        if (!has_primitive(a)) {
            fprintf(os, "{ rank=source; \"%s\"; }\n", name);
            continue;
        }
        /* The node's own address stands for MLX's primitive id. */
        uintptr_t id = (uintptr_t)a;
        fprintf(os, "{ %" PRIuPTR " [label =\"%s\", shape=rectangle]; }\n", id, mc_prim_name(a->prim, a->params));
        for (int k = 0; k < a->n_inputs; k++) {
            const char *in = pname(&p, a->inputs[k]);
            if (!in)
                goto oom;
            fprintf(os, "\"%s\" -> %" PRIuPTR "\n", in, id);
        }
        name = pname(&p, a);
        fprintf(os, "{ %s\"%s\"; }\n", mc_ptrmap_contains(&intermediate, a) ? "" : "rank=sink; ", name);
        fprintf(os, "%" PRIuPTR " -> \"%s\"\n", id, name);
    }
    fputs("}", os);
    rc = 0;
    goto done;
oom:
    rc = mc_error_oom(fn, 0);
done:
    mc_ptrmap_free(&intermediate);
    printer_close(&p);
    return rc;
}
