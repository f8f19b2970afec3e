/* Owns writing .mlxfn files (mlxfn.h): the header, each trace's inputs,
 * outputs and tape, and the constants, written once per file. Each node
 * goes to its primitive's exporter (mlxfn_export.c), which writes one or
 * more records through the helpers here.
 *
 * Ids: MLX names arrays by their address; any unique number will do, so a
 * writer counts from 1 across the whole file. A constant keeps the id it
 * was first written with (the writer holds a reference, so its address is
 * never reused by another array while the file is open). */
#include <string.h>
#include <unistd.h>

#include "graph/eval.h"
#include "graph/primitive.h"
#include "graph/prims_copy.h"
#include "graph/prims_slice.h"
#include "io/mlxfn_prims.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* A record of several outputs written in this trace, found again by its
 * key (mc_mlxfn_memo_get). A few suffice: they serve one node's siblings,
 * written next to each other. */
#define MEMO_SLOTS 8
#define MEMO_KEY 32
typedef struct memo_entry {
    unsigned char key[MEMO_KEY];
    size_t n;
    uint64_t ids[4];
} memo_entry;

struct mc_mlxfn_exp {
    mc_mlxfn_writer *w;
    mc_wb tape;
    uint64_t n_records;
    const char *fn;
    memo_entry memo[MEMO_SLOTS];
    int memo_next; /* the slot the next entry replaces */
};

static void write_header(mc_wb *b, int count, bool shapeless)
{
    mc_wb_string(b, MC_MLXFN_VERSION);
    mc_wb_i32(b, count);
    mc_wb_bool(b, shapeless);
}

static int flush(mc_mlxfn_writer *w, mc_wb *b, const char *fn)
{
    if (b->failed)
        return mc_error_oom(fn, b->len);
    return mc_io_write(&w->sink, b->p, b->len, fn);
}

int mc_mlxfn_writer_open(mc_mlxfn_writer *w, const char *path, bool shapeless, const char *fn)
{
    memset(w, 0, sizeof *w);
    if (mc_io_sink_open(&w->sink, path, fn))
        return 1;
    w->open = true;
    w->shapeless = shapeless;
    w->next_id = 1;
    mc_wb b = {0};
    write_header(&b, 0, shapeless);
    int rc = flush(w, &b, fn);
    mc_wb_free(&b);
    if (rc)
        mc_mlxfn_writer_close(w);
    return rc;
}

void mc_mlxfn_writer_close(mc_mlxfn_writer *w)
{
    if (w->open)
        mc_io_sink_close(&w->sink, NULL);
    for (int i = 0; i < w->n_written; i++)
        mc_array_release(w->written[i]);
    mc_xfree(w->written);
    mc_xfree(w->written_ids);
    memset(w, 0, sizeof *w);
}

/* ---- record helpers for the exporters ---- */

const char *mc_mlxfn_fn(const mc_mlxfn_exp *x) { return x->fn; }
mc_wb *mc_mlxfn_state(mc_mlxfn_exp *x) { return &x->tape; }
bool mc_mlxfn_shapeless(const mc_mlxfn_exp *x) { return x->w->shapeless; }

uint64_t mc_mlxfn_begin(mc_mlxfn_exp *x, const char *name, int n_in, const uint64_t *in_ids)
{
    uint64_t id = x->w->next_id++;
    mc_wb *b = &x->tape;
    mc_wb_u64(b, id);
    mc_wb_bool(b, true);
    mc_wb_u64(b, (uint64_t)n_in);
    for (int i = 0; i < n_in; i++)
        mc_wb_u64(b, in_ids[i]);
    /* the stream: index 0 of the CPU; MLX maps it to a CPU stream of its own */
    mc_wb_i32(b, 0);
    mc_wb_i32(b, 0);
    mc_wb_i32(b, 0);
    mc_wb_string(b, name);
    return id;
}

void mc_mlxfn_end(mc_mlxfn_exp *x, const mc_meta *out)
{
    mc_wb *b = &x->tape;
    mc_wb_u64(b, 0); /* no siblings */
    mc_wb_ints(b, out->ndim, out->shape);
    mc_wb_dtype(b, out->dtype);
    x->n_records++;
}

void mc_mlxfn_end_multi(mc_mlxfn_exp *x, uint64_t id, int n, const mc_meta *out, uint64_t *ids)
{
    mc_wb *b = &x->tape;
    /* the record's own id names its first output: MLX puts the record on
     * its tape under that id, and maps every id to its output */
    ids[0] = id;
    for (int i = 1; i < n; i++)
        ids[i] = x->w->next_id++;
    mc_wb_u64(b, (uint64_t)(n - 1));
    mc_wb_u64(b, (uint64_t)n);
    for (int i = 0; i < n; i++)
        mc_wb_u64(b, ids[i]);
    mc_wb_u64(b, (uint64_t)n);
    for (int i = 0; i < n; i++)
        mc_wb_ints(b, out[i].ndim, out[i].shape);
    mc_wb_u64(b, (uint64_t)n);
    for (int i = 0; i < n; i++)
        mc_wb_dtype(b, out[i].dtype);
    x->n_records++;
}

bool mc_mlxfn_memo_get(mc_mlxfn_exp *x, const void *key, size_t n, uint64_t ids[4])
{
    for (int i = 0; i < MEMO_SLOTS && n <= MEMO_KEY; i++) {
        if (x->memo[i].n == n && !memcmp(x->memo[i].key, key, n)) {
            memcpy(ids, x->memo[i].ids, sizeof x->memo[i].ids);
            return true;
        }
    }
    return false;
}

void mc_mlxfn_memo_put(mc_mlxfn_exp *x, const void *key, size_t n, const uint64_t ids[4])
{
    if (n > MEMO_KEY)
        return;
    memo_entry *e = &x->memo[x->memo_next];
    x->memo_next = (x->memo_next + 1) % MEMO_SLOTS;
    memcpy(e->key, key, n);
    e->n = n;
    memcpy(e->ids, ids, sizeof e->ids);
}

uint64_t mc_mlxfn_node1(mc_mlxfn_exp *x, const char *name, int n_in, const uint64_t *in_ids, const mc_meta *out)
{
    uint64_t id = mc_mlxfn_begin(x, name, n_in, in_ids);
    mc_mlxfn_end(x, out);
    return id;
}

/* A constant record with its data: a's bytes in row-major order. */
static int const_data(mc_mlxfn_exp *x, uint64_t id, mc_array *a)
{
    mc_array *c = NULL;
    if (mc_array_evaluated(a) && (a->flags & MC_FLAG_ROW_CONTIG)) {
        c = mc_array_retain(a);
    } else {
        mc_contiguous_params p = {0};
        c = mc_node_new(x->fn, MC_PRIM_CONTIGUOUS, &a, 1, &p, sizeof p);
        if (!c || mc_eval(&c, 1, x->fn)) {
            mc_array_release(c);
            return 1;
        }
    }
    mc_wb *b = &x->tape;
    mc_wb_u64(b, id);
    mc_wb_bool(b, false);
    mc_wb_bool(b, true);
    mc_wb_ints(b, c->ndim, c->shape);
    mc_wb_dtype(b, c->dtype);
    mc_wb_bytes(b, c->data, c->size * mc_dtype_size(c->dtype));
    x->n_records++;
    mc_array_release(c);
    return 0;
}

uint64_t mc_mlxfn_scalar(mc_mlxfn_exp *x, double v, mlx_dtype dtype)
{
    mc_array *d = mc_array_scalar(x->fn, MLX_FLOAT64, &v);
    mc_astype_params p = {dtype};
    mc_array *a = d ? mc_node_new(x->fn, MC_PRIM_ASTYPE, &d, 1, &p, sizeof p) : NULL;
    uint64_t id = x->w->next_id++;
    int rc = !a || mc_eval(&a, 1, x->fn) || const_data(x, id, a);
    mc_array_release(a);
    mc_array_release(d);
    return rc ? 0 : id;
}

uint64_t mc_mlxfn_floats(mc_mlxfn_exp *x, const float *v, int n, mlx_dtype dtype)
{
    mc_array *d = mc_array_from_data(x->fn, v, 1, &n, MLX_FLOAT32);
    mc_astype_params p = {dtype};
    mc_array *a = d ? mc_node_new(x->fn, MC_PRIM_ASTYPE, &d, 1, &p, sizeof p) : NULL;
    uint64_t id = x->w->next_id++;
    int rc = !a || mc_eval(&a, 1, x->fn) || const_data(x, id, a);
    mc_array_release(a);
    mc_array_release(d);
    return rc ? 0 : id;
}

uint64_t mc_mlxfn_all_ones(mc_mlxfn_exp *x, mlx_dtype dtype)
{
    uint64_t bits = ~(uint64_t)0; /* every byte 0xff, whatever the dtype's size */
    mc_array *a = mc_array_scalar(x->fn, dtype, &bits);
    uint64_t id = x->w->next_id++;
    int rc = !a || const_data(x, id, a);
    mc_array_release(a);
    return rc ? 0 : id;
}

/* The id of a trace's constant: its first use in the file writes it. */
static int const_id(mc_mlxfn_exp *x, mc_array *a, uint64_t *id)
{
    mc_mlxfn_writer *w = x->w;
    for (int i = 0; i < w->n_written; i++) {
        if (w->written[i] == a) {
            *id = w->written_ids[i];
            mc_wb *b = &x->tape;
            mc_wb_u64(b, *id);
            mc_wb_bool(b, false);
            mc_wb_bool(b, true);
            x->n_records++;
            return 0;
        }
    }
    if (w->n_written == w->written_cap) {
        int cap = w->written_cap ? w->written_cap * 2 : 16;
        mc_array **arrs = mc_xrealloc(w->written, (size_t)cap * sizeof *arrs);
        if (!arrs)
            return mc_error_oom(x->fn, 0);
        w->written = arrs;
        uint64_t *ids = mc_xrealloc(w->written_ids, (size_t)cap * sizeof *ids);
        if (!ids)
            return mc_error_oom(x->fn, 0);
        w->written_ids = ids;
        w->written_cap = cap;
    }
    *id = w->next_id++;
    if (const_data(x, *id, a))
        return 1;
    w->written[w->n_written] = mc_array_retain(a);
    w->written_ids[w->n_written++] = *id;
    return 0;
}

/* ---- a trace ---- */

int mc_mlxfn_write_trace(mc_mlxfn_writer *w, const mc_mlxfn_trace *t, const char *fn)
{
    size_t total = (size_t)t->n_inputs + (size_t)t->n_consts + (size_t)t->n_nodes;
    int max_in = 1;
    for (int s = 0; s < t->n_nodes; s++)
        if (t->nodes[s].n_in > max_in)
            max_in = t->nodes[s].n_in;
    uint64_t *ids = mc_xmalloc((total ? total : 1) * sizeof *ids);
    const mc_meta **metas = mc_xmalloc((total ? total : 1) * sizeof *metas);
    mc_meta *const_meta = mc_xmalloc((t->n_consts ? (size_t)t->n_consts : 1) * sizeof *const_meta);
    uint64_t *in_ids = mc_xmalloc((size_t)max_in * sizeof *in_ids);
    mc_meta *in_meta = mc_xmalloc((size_t)max_in * sizeof *in_meta);
    mc_mlxfn_exp x = {.w = w, .fn = fn};
    mc_wb body = {0};
    int rc = 1;
    int n_written = w->n_written; /* constants this trace adds are forgotten if it fails */
    if (!ids || !metas || !const_meta || !in_ids || !in_meta) {
        mc_error_oom(fn, total * sizeof *ids);
        goto done;
    }
    size_t slot = 0;
    for (int i = 0; i < t->n_inputs; i++, slot++) {
        ids[slot] = w->next_id++;
        metas[slot] = &t->in_meta[i];
        mc_wb_u64(&x.tape, ids[slot]);
        mc_wb_bool(&x.tape, false);
        mc_wb_bool(&x.tape, false);
        x.n_records++;
    }
    for (int i = 0; i < t->n_consts; i++, slot++) {
        mc_array *a = t->consts[i];
        const_meta[i].dtype = a->dtype;
        const_meta[i].ndim = a->ndim;
        memcpy(const_meta[i].shape, a->shape, sizeof(int) * (size_t)a->ndim);
        metas[slot] = &const_meta[i];
        if (const_id(&x, a, &ids[slot]))
            goto done;
    }
    for (int s = 0; s < t->n_nodes; s++, slot++) {
        const mc_mlxfn_node *nd = &t->nodes[s];
        mc_mlxfn_export_fn ex = mc_mlxfn_exporter(nd->prim);
        if (!ex) {
            mc_error("[%s] Unable to export primitive %s: mlx-cpu has no MLX equivalent for it (docs/api.md lists "
                     "the primitives it writes).",
                     fn, mc_prim_name(nd->prim, nd->params));
            goto done;
        }
        for (int i = 0; i < nd->n_in; i++) {
            in_ids[i] = ids[nd->in[i]];
            in_meta[i] = *metas[nd->in[i]];
        }
        if (ex(&x, nd, in_ids, in_meta, &ids[slot]))
            goto done;
        metas[slot] = nd->meta;
    }
    if (x.tape.failed) {
        mc_error_oom(fn, x.tape.len);
        goto done;
    }

    mc_wb_u64(&body, (uint64_t)t->n_kw);
    for (int i = 0; i < t->n_kw; i++)
        mc_wb_string(&body, t->kw[i]);
    mc_wb_u64(&body, (uint64_t)t->n_inputs);
    for (int i = 0; i < t->n_inputs; i++)
        mc_wb_u64(&body, ids[i]);
    mc_wb_u64(&body, (uint64_t)t->n_inputs);
    for (int i = 0; i < t->n_inputs; i++) {
        mc_wb_ints(&body, t->in_meta[i].ndim, t->in_meta[i].shape);
        mc_wb_dtype(&body, t->in_meta[i].dtype);
    }
    mc_wb_u64(&body, (uint64_t)t->n_outputs);
    for (int i = 0; i < t->n_outputs; i++)
        mc_wb_u64(&body, ids[t->outputs[i]]);
    mc_wb_u64(&body, x.n_records);
    off_t end = lseek(w->sink.fd, 0, SEEK_CUR);
    if (flush(w, &body, fn) || flush(w, &x.tape, fn)) {
        /* drop a partial trace, so the file still reads as its header says */
        if (end >= 0 && ftruncate(w->sink.fd, end) == 0)
            lseek(w->sink.fd, end, SEEK_SET);
        goto done;
    }

    /* the header's length never changes: rewrite it in place */
    w->count++;
    mc_wb head = {0};
    write_header(&head, w->count, w->shapeless);
    ssize_t put = head.failed ? -1 : pwrite(w->sink.fd, head.p, head.len, 0);
    if (put < 0 || (size_t)put != head.len) {
        mc_error("[%s] Unable to update the header of %s.", fn, w->sink.label);
        mc_wb_free(&head);
        goto done;
    }
    mc_wb_free(&head);
    rc = 0;
done:
    while (rc && w->n_written > n_written)
        mc_array_release(w->written[--w->n_written]);
    mc_wb_free(&x.tape);
    mc_wb_free(&body);
    mc_xfree(ids);
    mc_xfree(metas);
    mc_xfree(const_meta);
    mc_xfree(in_ids);
    mc_xfree(in_meta);
    return rc;
}
