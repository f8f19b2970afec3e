/* Owns loading and saving safetensors (safetensors.h). Loading checks the
 * whole header first - each tensor's byte range inside the data the file
 * has, no two ranges overlapping - and only then allocates, reading each
 * tensor straight into its array's buffer in file order. From a reader
 * (whose size is unknown) each tensor is allocated just before it is read,
 * so a header that lies about sizes fails at its first short read. */
#include "io/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/dtype.h"
#include "io/dtype_bytes.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* ---- loading ---- */

static int cmp_offset(const void *a, const void *b)
{
    const mc_st_entry *x = *(const mc_st_entry *const *)a, *y = *(const mc_st_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Pointers to h's entries sorted by offset after checking that they fit in
 * data_size bytes (unknown: UINT64_MAX) without overlapping; NULL with an
 * error otherwise. */
static const mc_st_entry **check_ranges(const mc_st_header *h, uint64_t data_size, const char *label,
                                        const char *fn)
{
    const mc_st_entry **s = mc_xmalloc((h->n ? h->n : 1) * sizeof *s);
    if (!s) {
        mc_error_oom(fn, h->n * sizeof *s);
        return NULL;
    }
    for (size_t k = 0; k < h->n; k++)
        s[k] = &h->e[k];
    qsort(s, h->n, sizeof *s, cmp_offset);
    uint64_t covered = 0;
    const mc_st_entry *last = NULL;
    for (size_t k = 0; k < h->n; k++) {
        const mc_st_entry *e = s[k];
        if (e->end > data_size) {
            mc_error("[%s] Tensor \"%.200s\" in %s ends at byte %llu of the data, which has %llu bytes.", fn,
                     e->name, label, (unsigned long long)e->end, (unsigned long long)data_size);
            mc_xfree(s);
            return NULL;
        }
        if (e->begin < covered && e->end > e->begin) {
            mc_error("[%s] Tensors \"%.200s\" and \"%.200s\" in %s overlap (data_offsets [%llu, %llu] and [%llu, "
                     "%llu]).",
                     fn, last->name, e->name, label, (unsigned long long)last->begin,
                     (unsigned long long)last->end, (unsigned long long)e->begin, (unsigned long long)e->end);
            mc_xfree(s);
            return NULL;
        }
        if (e->end > covered) {
            covered = e->end;
            last = e;
        }
    }
    return s;
}

static mc_array *load_tensor(mc_io_src *src, const mc_st_entry *e, uint64_t data_start, const char *fn)
{
    /* ranges were checked against the size of a file; a reader has none */
    if (src->size == UINT64_MAX && !mc_io_holds(src, data_start + e->end)) {
        mc_error("[%s] %s is truncated: its header places data up to byte %llu, which it does not hold.", fn,
                 src->label, (unsigned long long)(data_start + e->end));
        return NULL;
    }
    mc_array *a = mc_array_alloc(fn, e->dtype, e->ndim, e->shape);
    if (!a)
        return NULL;
    if (mc_array_alloc_data(a, fn) || mc_io_read_at(src, a->data, e->end - e->begin, data_start + e->begin, fn)) {
        mc_array_release(a);
        return NULL;
    }
    return a;
}

int mc_st_load(mc_io_src *src, mc_map **arrays, mc_map **meta, const char *fn)
{
    unsigned char lenb[8];
    if (mc_io_read(src, lenb, 8, fn))
        return 1;
    uint64_t len = 0;
    for (int k = 7; k >= 0; k--)
        len = len << 8 | lenb[k];
    if (len == 0 || len >= MC_ST_MAX_HEADER)
        return mc_error("[%s] Invalid json header length %llu in %s.", fn, (unsigned long long)len, src->label);
    if (src->size != UINT64_MAX && len > src->size - 8)
        return mc_error("[%s] %s is truncated: its json header length is %llu, %llu bytes follow.", fn, src->label,
                        (unsigned long long)len, (unsigned long long)(src->size - 8));
    char *text = mc_xmalloc((size_t)len);
    if (!text)
        return mc_error_oom(fn, (size_t)len);
    mc_st_header h;
    int rc = mc_io_read(src, text, (size_t)len, fn) || mc_st_parse_header(text, (size_t)len, &h, src->label, fn);
    mc_xfree(text);
    if (rc)
        return 1;
    uint64_t data_start = 8 + len;
    const mc_st_entry **order =
        /* a reader's size is unknown: bound the ranges so that data_start +
         * end cannot wrap around */
        check_ranges(&h, src->size == UINT64_MAX ? UINT64_MAX - data_start : src->size - data_start, src->label,
                     fn);
    mc_array **loaded = order ? mc_xcalloc(h.n ? h.n : 1, sizeof *loaded) : NULL;
    mc_map *out = loaded ? mc_map_new(fn, MC_MAP_ARRAY) : NULL;
    rc = out ? 0 : 1;
    if (order && !loaded)
        mc_error_oom(fn, h.n * sizeof *loaded);
    /* read in file order; keep the header's order in the map */
    for (size_t k = 0; !rc && k < h.n; k++) {
        size_t idx = (size_t)(order[k] - h.e);
        loaded[idx] = load_tensor(src, order[k], data_start, fn);
        rc = !loaded[idx];
    }
    for (size_t k = 0; !rc && k < h.n; k++)
        rc = mc_map_put_array(fn, out, h.e[k].name, loaded[k]);
    for (size_t k = 0; loaded && k < h.n; k++)
        mc_array_release(loaded[k]);
    mc_xfree(loaded);
    mc_xfree(order);
    if (rc) {
        mc_map_free(out);
        mc_st_header_free(&h);
        return 1;
    }
    *arrays = out;
    *meta = h.meta;
    h.meta = NULL;
    mc_st_header_free(&h);
    return 0;
}

/* ---- saving ---- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (n > b->cap - b->len) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap - b->len < n) {
            if (ncap > SIZE_MAX / 2) {
                b->oom = true;
                return;
            }
            ncap *= 2;
        }
        char *q = mc_xrealloc(b->p, ncap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static void put_u64(sbuf *b, unsigned long long v)
{
    char t[24];
    put(b, t, (size_t)snprintf(t, sizeof t, "%llu", v));
}

/* A JSON string, escaped as nlohmann::json's dump escapes (MLX's writer). */
static void put_json_string(sbuf *b, const char *s)
{
    put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char t[8];
        switch (c) {
        case '"': put(b, "\\\"", 2); break;
        case '\\': put(b, "\\\\", 2); break;
        case '\b': put(b, "\\b", 2); break;
        case '\f': put(b, "\\f", 2); break;
        case '\n': put(b, "\\n", 2); break;
        case '\r': put(b, "\\r", 2); break;
        case '\t': put(b, "\\t", 2); break;
        default:
            if (c < 0x20)
                put(b, t, (size_t)snprintf(t, sizeof t, "\\u%04x", c));
            else
                put(b, (const char *)&c, 1);
        }
    }
    put(b, "\"", 1);
}

typedef struct keyed {
    const char *key;
    size_t index;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* Indices of m's keys in byte order (as the std::map that MLX's JSON
 * library keeps sorts them). */
static size_t *sorted_keys(const mc_map *m, const char *fn)
{
    size_t n = m->len ? m->len : 1;
    keyed *k = mc_xmalloc(n * sizeof *k);
    size_t *idx = k ? mc_xmalloc(n * sizeof *idx) : NULL;
    if (!idx) {
        mc_xfree(k);
        mc_error_oom(fn, n * sizeof *k);
        return NULL;
    }
    for (size_t i = 0; i < m->len; i++)
        k[i] = (keyed){m->keys[i], i};
    qsort(k, m->len, sizeof *k, cmp_keyed);
    for (size_t i = 0; i < m->len; i++)
        idx[i] = k[i].index;
    mc_xfree(k);
    return idx;
}

static int check_entries(const mc_map *arrays, const mc_map *meta, const char *fn)
{
    for (size_t k = 0; k < arrays->len; k++) {
        const char *key = arrays->keys[k];
        const mc_array *a = arrays->arrs[k];
        if (strcmp(key, "__metadata__") == 0)
            return mc_error("[%s] An array cannot be named \"__metadata__\" (the key of the metadata).", fn);
        if (!mc_io_utf8_valid(key))
            return mc_error("[%s] The key \"%.200s\" is not valid UTF-8.", fn, key);
        if (!mc_st_dtype_name(a->dtype))
            return mc_error("[%s] received invalid dtype %s (key: %.200s): safetensors has no such type.", fn,
                            mc_dtype_name(a->dtype), key);
        if (a->size == 0)
            return mc_error("[%s] cannot serialize an empty array key: %.200s", fn, key);
    }
    for (size_t k = 0; k < meta->len; k++)
        if (!mc_io_utf8_valid(meta->keys[k]) || !mc_io_utf8_valid(meta->strs[k]))
            return mc_error("[%s] The metadata entry \"%.200s\" is not valid UTF-8.", fn, meta->keys[k]);
    return 0;
}

int mc_st_save(mc_io_sink *dst, const mc_map *arrays, const mc_map *meta, const char *fn)
{
    if (check_entries(arrays, meta, fn))
        return 1;
    size_t *ai = sorted_keys(arrays, fn);
    size_t *mi = ai ? sorted_keys(meta, fn) : NULL;
    if (!mi) {
        mc_xfree(ai);
        return 1;
    }
    sbuf b = {0};
    put(&b, "{", 1);
    bool first = true;
    size_t next = 0; /* the next array in key order */
    uint64_t offset = 0;
    bool meta_done = false;
    /* "__metadata__" takes its place among the sorted keys, as in MLX */
    while (next < arrays->len || !meta_done) {
        bool meta_now = !meta_done && (next == arrays->len || strcmp("__metadata__", arrays->keys[ai[next]]) < 0);
        if (!first)
            put(&b, ",", 1);
        first = false;
        if (meta_now) {
            puts_(&b, "\"__metadata__\":");
            if (meta->len == 0) {
                puts_(&b, "null");
            } else {
                put(&b, "{", 1);
                for (size_t k = 0; k < meta->len; k++) {
                    if (k)
                        put(&b, ",", 1);
                    put_json_string(&b, meta->keys[mi[k]]);
                    put(&b, ":", 1);
                    put_json_string(&b, meta->strs[mi[k]]);
                }
                put(&b, "}", 1);
            }
            meta_done = true;
            continue;
        }
        const mc_array *a = arrays->arrs[ai[next]];
        size_t nbytes = a->size * mc_dtype_size(a->dtype);
        put_json_string(&b, arrays->keys[ai[next]]);
        puts_(&b, ":{\"data_offsets\":[");
        put_u64(&b, offset);
        put(&b, ",", 1);
        put_u64(&b, offset + nbytes);
        puts_(&b, "],\"dtype\":\"");
        puts_(&b, mc_st_dtype_name(a->dtype));
        puts_(&b, "\",\"shape\":[");
        for (int d = 0; d < a->ndim; d++) {
            if (d)
                put(&b, ",", 1);
            put_u64(&b, (unsigned long long)a->shape[d]);
        }
        puts_(&b, "]}");
        offset += nbytes;
        next++;
    }
    put(&b, "}", 1);
    /* pad with spaces so the data starts 8-byte aligned */
    while (!b.oom && b.len % 8)
        put(&b, " ", 1);
    int rc = 0;
    if (b.oom) {
        rc = mc_error_oom(fn, b.cap * 2);
    } else {
        unsigned char lenb[8];
        for (int k = 0; k < 8; k++)
            lenb[k] = (unsigned char)((uint64_t)b.len >> (8 * k));
        rc = mc_io_write(dst, lenb, 8, fn) || mc_io_write(dst, b.p, b.len, fn);
        for (size_t k = 0; !rc && k < arrays->len; k++) {
            const mc_array *a = arrays->arrs[ai[k]];
            rc = mc_io_write(dst, a->data, a->size * mc_dtype_size(a->dtype), fn);
        }
    }
    mc_xfree(b.p);
    mc_xfree(ai);
    mc_xfree(mi);
    return rc;
}
