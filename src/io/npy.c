/* Owns the .npy format (npy.h). The header is a Python dict literal; it is
 * parsed as one, with every length, digit and dimension checked, rather
 * than at the fixed offsets MLX reads it at, so a header NumPy writes with
 * other spacing still loads and a hostile one cannot read out of bounds.
 * What is accepted is what MLX accepts: versions 1 and 2, the dtypes of
 * MLX's array protocol table ("V2" is bfloat16), either byte order, and
 * Fortran order (the data read as the reversed shape, then viewed
 * transposed, as MLX does). */
#include "io/npy.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "array/dtype.h"
#include "io/dtype_bytes.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Headers beyond this are refused before they are read: a shape of
 * MC_MAX_NDIM dims takes under 1 KiB. */
enum { MAX_HEADER = 1 << 20, ALIGN = 64 };

static bool little_endian_host(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* ---- the header dictionary ---- */

typedef struct cursor {
    const char *t;
    size_t n, i;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->i < c->n && (c->t[c->i] == ' ' || c->t[c->i] == '\t' || c->t[c->i] == '\n' || c->t[c->i] == '\r'))
        c->i++;
}

static bool eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->i < c->n && c->t[c->i] == ch) {
        c->i++;
        return true;
    }
    return false;
}

/* A quoted string without escapes into buf (cap bytes with the NUL). */
static bool quoted(cursor *c, char *buf, size_t cap)
{
    skip_ws(c);
    if (c->i >= c->n || (c->t[c->i] != '\'' && c->t[c->i] != '"'))
        return false;
    char q = c->t[c->i++];
    size_t len = 0;
    while (c->i < c->n && c->t[c->i] != q) {
        char ch = c->t[c->i++];
        if (ch == '\\' || ch == '\0' || len + 1 >= cap)
            return false;
        buf[len++] = ch;
    }
    if (c->i >= c->n)
        return false;
    c->i++;
    buf[len] = '\0';
    return true;
}

static bool word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t len = strlen(w);
    if (c->n - c->i < len || memcmp(c->t + c->i, w, len) != 0)
        return false;
    c->i += len;
    return true;
}

/* A non-negative decimal that fits an int (a Python 2 'L' suffix allowed). */
static bool dim(cursor *c, int *out)
{
    skip_ws(c);
    long long v = 0;
    size_t start = c->i;
    while (c->i < c->n && c->t[c->i] >= '0' && c->t[c->i] <= '9') {
        v = v * 10 + (c->t[c->i++] - '0');
        if (v > INT_MAX)
            return false;
    }
    if (c->i == start)
        return false;
    if (c->i < c->n && c->t[c->i] == 'L')
        c->i++;
    *out = (int)v;
    return true;
}

/* "(" [dim ("," dim)* [","]] ")" */
static int shape_tuple(cursor *c, mc_npy_header *h, const char *label, const char *fn)
{
    if (!eat(c, '('))
        return mc_error("[%s] Invalid shape in the header of %s.", fn, label);
    h->ndim = 0;
    if (eat(c, ')'))
        return 0;
    for (;;) {
        if (h->ndim == MC_MAX_NDIM)
            return mc_error("[%s] The shape in the header of %s has more than %d dimensions.", fn, label,
                            MC_MAX_NDIM);
        if (!dim(c, &h->shape[h->ndim]))
            return mc_error("[%s] Invalid dimension in the shape of the header of %s (each must be an integer in "
                            "[0, %d]).",
                            fn, label, INT_MAX);
        h->ndim++;
        if (eat(c, ')'))
            return 0;
        if (!eat(c, ','))
            return mc_error("[%s] Invalid shape in the header of %s.", fn, label);
        if (eat(c, ')'))
            return 0;
    }
}

static int descr_dtype(const char *d, mc_npy_header *h, const char *label, const char *fn)
{
    size_t len = strlen(d);
    const char *code = d;
    char order = '|';
    if (len == 3) {
        order = d[0];
        code = d + 1;
    }
    bool ok = (len == 2 || len == 3) && strchr("<>|=", order);
    int size = ok ? code[1] - '0' : 0;
    int t = -1;
    if (ok && strcmp(code, "V2") == 0)
        t = MLX_BFLOAT16;
    else if (ok)
        switch (code[0]) {
        case 'b': t = size == 1 ? MLX_BOOL : -1; break;
        case 'i':
            t = size == 1 ? MLX_INT8 : size == 2 ? MLX_INT16 : size == 4 ? MLX_INT32 : size == 8 ? MLX_INT64 : -1;
            break;
        case 'u':
            t = size == 1   ? MLX_UINT8
                : size == 2 ? MLX_UINT16
                : size == 4 ? MLX_UINT32
                : size == 8 ? MLX_UINT64
                            : -1;
            break;
        case 'f': t = size == 2 ? MLX_FLOAT16 : size == 4 ? MLX_FLOAT32 : size == 8 ? MLX_FLOAT64 : -1; break;
        case 'c': t = size == 8 ? MLX_COMPLEX64 : -1; break;
        default: break;
        }
    if (t < 0)
        return mc_error("[%s] Unsupported array protocol type-string '%s' in %s.", fn, d, label);
    h->dtype = (mlx_dtype)t;
    h->swap = order == '>' ? little_endian_host() : order == '<' ? !little_endian_host() : false;
    return 0;
}

int mc_npy_parse_header(const char *text, size_t n, mc_npy_header *h, const char *label, const char *fn)
{
    cursor c = {text, n, 0};
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!eat(&c, '{'))
        return mc_error("[%s] Invalid header in %s: it is not a dictionary.", fn, label);
    while (!eat(&c, '}')) {
        char key[32], descr[16];
        if (!quoted(&c, key, sizeof key) || !eat(&c, ':'))
            return mc_error("[%s] Invalid header in %s: expected a quoted key and ':'.", fn, label);
        bool *seen = strcmp(key, "descr") == 0           ? &seen_descr
                     : strcmp(key, "fortran_order") == 0 ? &seen_order
                     : strcmp(key, "shape") == 0         ? &seen_shape
                                                         : NULL;
        if (!seen)
            return mc_error("[%s] Invalid header in %s: unknown key '%s'.", fn, label, key);
        if (*seen)
            return mc_error("[%s] Invalid header in %s: the key '%s' appears twice.", fn, label, key);
        *seen = true;
        if (seen == &seen_descr) {
            if (!quoted(&c, descr, sizeof descr))
                return mc_error("[%s] Invalid header in %s: 'descr' is not a short string.", fn, label);
            if (descr_dtype(descr, h, label, fn))
                return 1;
        } else if (seen == &seen_order) {
            if (word(&c, "True"))
                h->fortran = true;
            else if (word(&c, "False"))
                h->fortran = false;
            else
                return mc_error("[%s] Invalid header in %s: 'fortran_order' is not True or False.", fn, label);
        } else if (shape_tuple(&c, h, label, fn)) {
            return 1;
        }
        if (!eat(&c, ',')) {
            if (eat(&c, '}'))
                break;
            return mc_error("[%s] Invalid header in %s: expected ',' or '}'.", fn, label);
        }
    }
    skip_ws(&c);
    if (c.i != n)
        return mc_error("[%s] Invalid header in %s: unexpected bytes after the dictionary.", fn, label);
    if (!seen_descr || !seen_order || !seen_shape)
        return mc_error("[%s] Invalid header in %s: the key '%s' is missing.", fn, label,
                        !seen_descr   ? "descr"
                        : !seen_order ? "fortran_order"
                                      : "shape");
    return 0;
}

/* ---- loading ---- */

static mc_array *load_data(mc_io_src *src, const mc_npy_header *h, uint64_t offset, size_t nbytes, const char *fn)
{
    /* Fortran data is the transpose of a row-major array of the reversed
     * shape: read that, then view it with the dims reversed back. */
    int dims[MC_MAX_NDIM];
    for (int i = 0; i < h->ndim; i++)
        dims[i] = h->fortran ? h->shape[h->ndim - 1 - i] : h->shape[i];
    mc_array *base = mc_array_alloc(fn, h->dtype, h->ndim, dims);
    if (!base)
        return NULL;
    if (mc_array_alloc_data(base, fn) || mc_io_read_at(src, base->data, nbytes, offset, fn)) {
        mc_array_release(base);
        return NULL;
    }
    if (h->swap)
        mc_io_swap_bytes(base->data, base->size, h->dtype);
    if (!h->fortran || h->ndim < 2)
        return base;
    mc_array *view = mc_array_alloc(fn, h->dtype, h->ndim, h->shape);
    if (view) {
        int64_t strides[MC_MAX_NDIM];
        for (int i = 0; i < h->ndim; i++)
            strides[i] = base->strides[h->ndim - 1 - i];
        mc_array_set_view(view, base, base->data, strides);
    }
    mc_array_release(base);
    return view;
}

mc_array *mc_npy_load(mc_io_src *src, const char *fn)
{
    unsigned char pre[12];
    if (mc_io_read(src, pre, 8, fn))
        return NULL;
    if (memcmp(pre, magic, sizeof magic) != 0) {
        mc_error("[%s] Invalid header in %s: not a .npy file (bad magic string).", fn, src->label);
        return NULL;
    }
    if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0) {
        mc_error("[%s] Unsupported npy format version %d.%d in %s.", fn, pre[6], pre[7], src->label);
        return NULL;
    }
    size_t len_bytes = pre[6] == 1 ? 2 : 4;
    if (mc_io_read(src, pre + 8, len_bytes, fn))
        return NULL;
    uint32_t header_len = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    if (len_bytes == 4)
        header_len |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    if (header_len > MAX_HEADER) {
        mc_error("[%s] Invalid header in %s: its length %u is over the limit of %d bytes.", fn, src->label,
                 header_len, MAX_HEADER);
        return NULL;
    }
    char *text = mc_xmalloc(header_len ? header_len : 1);
    if (!text) {
        mc_error_oom(fn, header_len);
        return NULL;
    }
    mc_npy_header h = {0};
    int rc = mc_io_read(src, text, header_len, fn) || mc_npy_parse_header(text, header_len, &h, src->label, fn);
    mc_xfree(text);
    if (rc)
        return NULL;
    size_t nbytes;
    if (!mc_io_nbytes(h.dtype, h.ndim, h.shape, &nbytes)) {
        char s[256];
        mc_error("[%s] The shape %s in %s has more elements than can be addressed.", fn,
                 mc_shape_str(s, sizeof s, h.ndim, h.shape), src->label);
        return NULL;
    }
    uint64_t offset = 8 + len_bytes + (uint64_t)header_len;
    if (src->size == UINT64_MAX && (nbytes > UINT64_MAX - offset || !mc_io_holds(src, offset + nbytes))) {
        mc_error("[%s] %s is truncated: its header describes %zu bytes of data, which it does not hold.", fn,
                 src->label, nbytes);
        return NULL;
    }
    if (src->size != UINT64_MAX && (offset > src->size || nbytes > src->size - offset)) {
        mc_error("[%s] %s is truncated: its header describes %zu bytes of data, %llu follow it.", fn, src->label,
                 nbytes, (unsigned long long)(offset > src->size ? 0 : src->size - offset));
        return NULL;
    }
    return load_data(src, &h, offset, nbytes, fn);
}

/* ---- saving ---- */

static const char *descr_of(mlx_dtype t)
{
    bool le = little_endian_host();
    switch (t) {
    case MLX_BOOL: return "|b1";
    case MLX_UINT8: return "|u1";
    case MLX_INT8: return "|i1";
    case MLX_UINT16: return le ? "<u2" : ">u2";
    case MLX_UINT32: return le ? "<u4" : ">u4";
    case MLX_UINT64: return le ? "<u8" : ">u8";
    case MLX_INT16: return le ? "<i2" : ">i2";
    case MLX_INT32: return le ? "<i4" : ">i4";
    case MLX_INT64: return le ? "<i8" : ">i8";
    case MLX_FLOAT16: return le ? "<f2" : ">f2";
    case MLX_FLOAT32: return le ? "<f4" : ">f4";
    case MLX_FLOAT64: return le ? "<f8" : ">f8";
    case MLX_BFLOAT16: return le ? "<V2" : ">V2";
    case MLX_COMPLEX64: return le ? "<c8" : ">c8";
    }
    return NULL;
}

int mc_npy_save(mc_io_sink *dst, const mc_array *a, const char *fn)
{
    size_t nbytes = a->size * mc_dtype_size(a->dtype);
    if (nbytes == 0)
        return mc_error("[%s] cannot serialize an empty array (shape with a zero dimension).", fn);
    /* the header: NumPy's dict text, padded with spaces and a newline so
     * that the data starts at a multiple of 64 bytes, as NumPy writes it */
    char head[12 + 64 + MC_MAX_NDIM * 13 + ALIGN];
    size_t pre = 10;
    int len = snprintf(head + pre, sizeof head - pre, "{'descr': '%s', 'fortran_order': %s, 'shape': (",
                       descr_of(a->dtype), (a->flags & MC_FLAG_COL_CONTIG) ? "True" : "False");
    for (int i = 0; i < a->ndim; i++)
        len += snprintf(head + pre + len, sizeof head - pre - (size_t)len,
                        a->ndim == 1 ? "%d,"
                        : i          ? ", %d"
                                     : "%d",
                        a->shape[i]);
    len += snprintf(head + pre + len, sizeof head - pre - (size_t)len, "), }");
    size_t total = pre + (size_t)len + 1;
    size_t pad = (ALIGN - total % ALIGN) % ALIGN;
    memset(head + pre + len, ' ', pad);
    head[total + pad - 1] = '\n';
    size_t header_len = total + pad - pre;
    memcpy(head, magic, sizeof magic);
    head[6] = 1; /* a v1 header: its length fits two bytes here */
    head[7] = 0;
    head[8] = (char)(header_len & 0xff);
    head[9] = (char)(header_len >> 8);
    return mc_io_write(dst, head, total + pad, fn) || mc_io_write(dst, a->data, nbytes, fn);
}
