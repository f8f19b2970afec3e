/* Owns reading .mlxfn files (mlxfn.h): the header, each function's inputs,
 * outputs and tape, and the constants, into graphs of our primitives over
 * placeholder inputs. Each node record goes to its primitive's importer
 * (mlxfn_import.c); everything else is checked here.
 *
 * Ownership while parsing: every array made for a function (placeholders,
 * nodes) is held once in `held`, constants once in the file's list; the id
 * maps only borrow. At the end each function's outputs and inputs take
 * their own references and the held ones are dropped, so one cleanup path
 * serves success and failure. */
#include <string.h>

#include "graph/primitive.h"
#include "graph/prims_placeholder.h"
#include "io/mlxfn_prims.h"
#include "runtime/alloc.h"
#include "runtime/darray.h"
#include "runtime/error.h"

/* Limits that no real export reaches, so that a count read from a hostile
 * file cannot ask for unbounded work before the bytes run out. */
enum {
    MAX_NAME = 1024,
    MAX_KEYS = 1 << 16,
    MAX_IO = 1 << 20,
    MAX_NODE_IN = 1 << 20,
    MAX_SIBLINGS = 1 << 10,
};

/* ---- id -> array (borrowed), open addressing on the id ---- */

typedef struct idmap {
    uint64_t *keys;
    mc_array **vals; /* NULL: empty slot */
    size_t cap, count;
} idmap;

static size_t id_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
}

static mc_array *idmap_get(const idmap *m, uint64_t k)
{
    if (!m->cap)
        return NULL;
    for (size_t i = id_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i])
            return NULL;
        if (m->keys[i] == k)
            return m->vals[i];
    }
}

/* 0 stored, 1 out of memory (nothing reported). */
static int idmap_put(idmap *m, uint64_t k, mc_array *v)
{
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *keys = mc_xcalloc(cap, sizeof *keys);
        mc_array **vals = mc_xcalloc(cap, sizeof *vals);
        if (!keys || !vals) {
            mc_xfree(keys);
            mc_xfree(vals);
            return 1;
        }
        for (size_t j = 0; j < m->cap; j++) {
            if (!m->vals[j])
                continue;
            size_t i = id_hash(m->keys[j]) & (cap - 1);
            while (vals[i])
                i = (i + 1) & (cap - 1);
            keys[i] = m->keys[j];
            vals[i] = m->vals[j];
        }
        mc_xfree(m->keys);
        mc_xfree(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t i = id_hash(k) & (m->cap - 1);
    while (m->vals[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = k;
    m->vals[i] = v;
    m->count++;
    return 0;
}

static void idmap_free(idmap *m)
{
    mc_xfree(m->keys);
    mc_xfree(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- parsing ---- */

typedef struct reader {
    mc_rd rd;
    mc_darray consts; /* mc_array *: the file's constants (owned) */
    idmap const_ids;  /* across functions: a constant is written once */
    mc_darray held;   /* mc_array *: this function's arrays (owned) */
    idmap ids;        /* this function's ids */
} reader;

static int oom(reader *r)
{
    r->rd.failed = true;
    return mc_error_oom(r->rd.fn, 0);
}

/* Takes over a reference into `held`. */
static int hold(reader *r, mc_darray *list, mc_array *a)
{
    mc_array **slot = mc_darray_push(list);
    if (!slot) {
        mc_array_release(a);
        return oom(r);
    }
    *slot = a;
    return 0;
}

static void drop_all(mc_darray *list)
{
    for (size_t i = 0; i < list->len; i++)
        mc_array_release(*(mc_array **)mc_darray_at(list, i));
    mc_darray_free(list);
}

static int define(reader *r, uint64_t id, mc_array *a)
{
    if (idmap_get(&r->ids, id))
        return mc_rd_fail(&r->rd, "Bad file: array id %llu is defined twice", (unsigned long long)id);
    if (idmap_put(&r->ids, id, a))
        return oom(r);
    return 0;
}

static int lookup(reader *r, uint64_t id, mc_array **a, const char *what)
{
    *a = idmap_get(&r->ids, id);
    if (!*a)
        return mc_rd_fail(&r->rd, "Bad file: %s refers to array id %llu, which no earlier record defines", what,
                          (unsigned long long)id);
    return 0;
}

static int read_meta(mc_rd *rd, mc_meta *m, const char *what)
{
    return mc_rd_shape(rd, &m->ndim, m->shape, what) || mc_rd_dtype(rd, &m->dtype, what);
}

int mc_mlxfn_imp_outputs(mc_mlxfn_imp *c)
{
    mc_rd *rd = c->rd;
    uint64_t nsib;
    if (mc_rd_u64(rd, &nsib, "the sibling count"))
        return 1;
    int n = 1;
    if (nsib) {
        size_t nid, nsh, ndt;
        if (nsib >= MAX_SIBLINGS)
            return mc_rd_fail(rd, "Bad file: %s has %llu siblings", c->name, (unsigned long long)nsib);
        if (mc_rd_count(rd, MAX_SIBLINGS, 8, &nid, "the sibling ids"))
            return 1;
        if (nid != nsib + 1)
            return mc_rd_fail(rd, "Bad file: %s has %llu siblings but %zu output ids", c->name,
                              (unsigned long long)nsib, nid);
        n = (int)nid;
        uint64_t *ids = mc_xmalloc((size_t)n * sizeof *ids);
        c->out = mc_xmalloc((size_t)n * sizeof *c->out);
        c->res = mc_xcalloc((size_t)n, sizeof *c->res);
        if (!ids || !c->out || !c->res) {
            mc_xfree(ids);
            rd->failed = true;
            return mc_error_oom(rd->fn, 0);
        }
        for (int i = 0; i < n; i++)
            mc_rd_u64(rd, &ids[i], "a sibling id");
        if (!mc_rd_count(rd, MAX_SIBLINGS, 8, &nsh, "the output shapes") && nsh != (size_t)n)
            mc_rd_fail(rd, "Bad file: %s has %d outputs but %zu shapes", c->name, n, nsh);
        for (int i = 0; i < n && !rd->failed; i++)
            mc_rd_shape(rd, &c->out[i].ndim, c->out[i].shape, "an output shape");
        if (!mc_rd_count(rd, MAX_SIBLINGS, 5, &ndt, "the output dtypes") && ndt != (size_t)n)
            mc_rd_fail(rd, "Bad file: %s has %d outputs but %zu dtypes", c->name, n, ndt);
        for (int i = 0; i < n && !rd->failed; i++)
            mc_rd_dtype(rd, &c->out[i].dtype, "an output dtype");
        c->out_ids = ids;
    } else {
        c->out = mc_xmalloc(sizeof *c->out);
        c->res = mc_xcalloc(1, sizeof *c->res);
        if (!c->out || !c->res) {
            rd->failed = true;
            return mc_error_oom(rd->fn, 0);
        }
        read_meta(rd, &c->out[0], "the output");
    }
    c->n_out = n;
    return rd->failed;
}

static bool meta_equal(const mc_array *a, const mc_meta *m)
{
    return a->dtype == m->dtype && mc_array_has_shape(a, m->ndim, m->shape);
}

static int node_record(reader *r, uint64_t id)
{
    mc_rd *rd = &r->rd;
    size_t n_in;
    if (mc_rd_count(rd, MAX_NODE_IN, 8, &n_in, "a node's input ids"))
        return 1;
    mc_array **in = mc_xmalloc((n_in ? n_in : 1) * sizeof *in);
    if (!in)
        return oom(r);
    int rc = 1;
    char *name = NULL;
    mc_mlxfn_imp c = {.rd = rd, .in = in, .n_in = (int)n_in};
    for (size_t i = 0; i < n_in; i++) {
        uint64_t iid;
        if (mc_rd_u64(rd, &iid, "a node's input id") || lookup(r, iid, &in[i], "a node's input"))
            goto done;
    }
    int32_t s_index, s_type, s_dev;
    if (mc_rd_i32(rd, &s_index, "the stream") || mc_rd_i32(rd, &s_type, "the stream") ||
        mc_rd_i32(rd, &s_dev, "the stream"))
        goto done;
    if (s_type != 0 && s_type != 1) {
        mc_rd_fail(rd, "Bad file: unknown device type %d", (int)s_type);
        goto done;
    }
    if (mc_rd_string(rd, MAX_NAME, &name, "a primitive name"))
        goto done;
    c.name = name;
    mc_mlxfn_import_fn imp = mc_mlxfn_importer(name);
    if (!imp) {
        rd->failed = true;
        mc_error("[%s] unsupported primitive '%s': mlx-cpu cannot import it (docs/api.md lists the "
                 "primitives it reads).",
                 rd->fn, name);
        goto done;
    }
    if (imp(&c))
        goto done;
    if (rd->failed)
        goto done;
    bool self = false;
    for (int i = 0; i < c.n_out; i++) {
        if (!c.res[i]) {
            mc_rd_fail(rd, "Internal error: %s gave no output %d", name, i);
            goto done;
        }
        if (!meta_equal(c.res[i], &c.out[i])) {
            char got[256], want[256];
            mc_rd_fail(
                rd, "%s gives %s %s here, but the file declares %s %s", name,
                mc_shape_str(got, sizeof got, c.res[i]->ndim, c.res[i]->shape), mc_dtype_name(c.res[i]->dtype),
                mc_shape_str(want, sizeof want, c.out[i].ndim, c.out[i].shape), mc_dtype_name(c.out[i].dtype));
            goto done;
        }
    }
    for (int i = 0; i < c.n_out; i++) {
        mc_array *a = c.res[i];
        c.res[i] = NULL;
        if (hold(r, &r->held, a))
            goto done;
        uint64_t oid = c.out_ids ? c.out_ids[i] : id;
        self |= oid == id;
        if (define(r, oid, a))
            goto done;
    }
    if (!self) {
        mc_rd_fail(rd, "Bad file: node %llu is not among its own outputs", (unsigned long long)id);
        goto done;
    }
    rc = 0;
done:
    for (int i = 0; c.res && i < c.n_out; i++)
        mc_array_release(c.res[i]);
    mc_xfree(c.res);
    mc_xfree(c.out);
    mc_xfree(c.out_ids);
    mc_xfree(name);
    mc_xfree(in);
    return rc;
}

static int const_record(reader *r, uint64_t id)
{
    mc_rd *rd = &r->rd;
    mc_array *a = idmap_get(&r->const_ids, id);
    if (!a) {
        mc_meta m;
        if (read_meta(rd, &m, "a constant"))
            return 1;
        size_t size;
        if (!mc_shape_size(m.ndim, m.shape, &size) || size > (rd->len - rd->pos) / mc_dtype_size(m.dtype))
            return mc_rd_fail(rd, "Truncated file: a constant's data is longer than the bytes left");
        size_t nbytes = size * mc_dtype_size(m.dtype);
        a = mc_array_from_data(rd->fn, rd->p + rd->pos, m.ndim, m.shape, m.dtype);
        if (!a) {
            rd->failed = true;
            return 1;
        }
        rd->pos += nbytes;
        if (hold(r, &r->consts, a))
            return 1;
        if (idmap_put(&r->const_ids, id, a))
            return oom(r);
    }
    return define(r, id, a);
}

static int read_function(reader *r, mc_mlxfn_fun *f)
{
    mc_rd *rd = &r->rd;
    size_t n;
    int rc = 1;
    uint64_t *in_ids = NULL, *out_ids = NULL;
    r->held = (mc_darray){.elem = sizeof(mc_array *)};
    memset(&r->ids, 0, sizeof r->ids);

    if (mc_rd_count(rd, MAX_KEYS, 8, &n, "the keyword names"))
        goto done;
    f->kw = mc_xcalloc(n ? n : 1, sizeof *f->kw);
    if (!f->kw) {
        oom(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++, f->n_kw++)
        if (mc_rd_string(rd, MAX_NAME, &f->kw[i], "a keyword name"))
            goto done;

    size_t n_in, n_in2, n_out, n_tape;
    if (mc_rd_count(rd, MAX_IO, 8, &n_in, "the input ids"))
        goto done;
    in_ids = mc_xmalloc((n_in ? n_in : 1) * sizeof *in_ids);
    f->inputs = mc_xcalloc(n_in ? n_in : 1, sizeof *f->inputs);
    if (!in_ids || !f->inputs) {
        oom(r);
        goto done;
    }
    for (size_t i = 0; i < n_in; i++)
        if (mc_rd_u64(rd, &in_ids[i], "an input id"))
            goto done;
    if (mc_rd_count(rd, MAX_IO, 13, &n_in2, "the inputs"))
        goto done;
    if (n_in2 != n_in) {
        mc_rd_fail(rd, "Bad file: %zu input ids but %zu inputs", n_in, n_in2);
        goto done;
    }
    if ((size_t)f->n_kw > n_in) {
        mc_rd_fail(rd, "Bad file: %d keyword names but %zu inputs", f->n_kw, n_in);
        goto done;
    }
    for (size_t i = 0; i < n_in; i++) {
        mc_placeholder_params p;
        memset(&p, 0, sizeof p); /* compared bytewise */
        if (read_meta(rd, &p.meta, "an input"))
            goto done;
        p.index = (int)i;
        mc_array *ph = mc_node_new_meta(rd->fn, MC_PRIM_PLACEHOLDER, &p.meta, NULL, 0, &p, sizeof p);
        if (!ph) {
            rd->failed = true;
            goto done;
        }
        f->inputs[i] = mc_array_retain(ph);
        f->n_inputs++;
        if (hold(r, &r->held, ph) || define(r, in_ids[i], ph))
            goto done;
    }
    if (mc_rd_count(rd, MAX_IO, 8, &n_out, "the output ids"))
        goto done;
    out_ids = mc_xmalloc((n_out ? n_out : 1) * sizeof *out_ids);
    f->outputs = mc_xcalloc(n_out ? n_out : 1, sizeof *f->outputs);
    if (!out_ids || !f->outputs) {
        oom(r);
        goto done;
    }
    for (size_t i = 0; i < n_out; i++)
        if (mc_rd_u64(rd, &out_ids[i], "an output id"))
            goto done;

    if (mc_rd_count(rd, UINT64_MAX, 9, &n_tape, "the tape"))
        goto done;
    for (size_t i = 0; i < n_tape; i++) {
        uint64_t id;
        bool is_node, is_const;
        if (mc_rd_u64(rd, &id, "a record id") || mc_rd_bool(rd, &is_node, "a record kind"))
            goto done;
        if (is_node) {
            if (node_record(r, id))
                goto done;
            continue;
        }
        if (mc_rd_bool(rd, &is_const, "a record kind"))
            goto done;
        if (is_const) {
            if (const_record(r, id))
                goto done;
        } else {
            mc_array *a;
            if (lookup(r, id, &a, "an input record"))
                goto done;
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        mc_array *a;
        if (lookup(r, out_ids[i], &a, "an output"))
            goto done;
        f->outputs[i] = mc_array_retain(a);
        f->n_outputs++;
    }
    rc = 0;
done:
    drop_all(&r->held);
    idmap_free(&r->ids);
    mc_xfree(in_ids);
    mc_xfree(out_ids);
    return rc;
}

static void fun_clear(mc_mlxfn_fun *f)
{
    for (int i = 0; i < f->n_inputs; i++)
        mc_array_release(f->inputs[i]);
    for (int i = 0; i < f->n_outputs; i++)
        mc_array_release(f->outputs[i]);
    for (int i = 0; i < f->n_kw; i++)
        mc_xfree(f->kw[i]);
    mc_xfree(f->inputs);
    mc_xfree(f->outputs);
    mc_xfree(f->kw);
    memset(f, 0, sizeof *f);
}

void mc_mlxfn_clear(mc_mlxfn *f)
{
    for (int i = 0; i < f->n_fun; i++)
        fun_clear(&f->fun[i]);
    mc_xfree(f->fun);
    memset(f, 0, sizeof *f);
}

int mc_mlxfn_parse(mc_mlxfn *out, const uint8_t *buf, size_t len, const char *fn)
{
    memset(out, 0, sizeof *out);
    reader r;
    memset(&r, 0, sizeof r);
    r.rd = (mc_rd){.p = buf, .len = len, .fn = fn};
    r.consts = (mc_darray){.elem = sizeof(mc_array *)};
    char *version = NULL;
    int32_t count;
    int rc = 1;
    if (mc_rd_string(&r.rd, MAX_NAME, &version, "the MLX version") ||
        mc_rd_i32(&r.rd, &count, "the function count") || mc_rd_bool(&r.rd, &out->shapeless, "the shapeless flag"))
        goto done;
    /* a function takes at least four counts and a tape size */
    if (count < 0 || (size_t)count > (len - r.rd.pos) / 40) {
        mc_rd_fail(&r.rd, "Bad file: function count %d does not fit in the bytes left", (int)count);
        goto done;
    }
    out->fun = mc_xcalloc(count ? (size_t)count : 1, sizeof *out->fun);
    if (!out->fun) {
        oom(&r);
        goto done;
    }
    for (int i = 0; i < count; i++) {
        out->n_fun++;
        if (read_function(&r, &out->fun[i]))
            goto done;
    }
    if (r.rd.pos != len) {
        mc_rd_fail(&r.rd, "Bad file: %zu bytes follow the last function", len - r.rd.pos);
        goto done;
    }
    rc = 0;
done:
    drop_all(&r.consts);
    idmap_free(&r.const_ids);
    mc_xfree(version);
    if (rc)
        mc_mlxfn_clear(out);
    return rc;
}

int mc_mlxfn_load(mc_mlxfn *out, const char *path, const char *fn)
{
    memset(out, 0, sizeof *out);
    mc_io_src src;
    if (mc_io_src_open(&src, path, fn))
        return 1;
    int rc = 1;
    uint8_t *buf = NULL;
    if (src.size > SIZE_MAX - 1) {
        mc_error("[%s] File %s is too large.", fn, path);
        goto done;
    }
    buf = mc_xmalloc(src.size ? (size_t)src.size : 1);
    if (!buf) {
        mc_error_oom(fn, (size_t)src.size);
        goto done;
    }
    if (mc_io_read(&src, buf, (size_t)src.size, fn))
        goto done;
    rc = mc_mlxfn_parse(out, buf, (size_t)src.size, fn);
done:
    mc_xfree(buf);
    mc_io_src_close(&src);
    return rc;
}
