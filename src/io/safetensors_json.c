/* Owns the parser of the safetensors JSON header (safetensors.h). It reads
 * exactly the structure the format has - one object of tensor objects and
 * an optional "__metadata__" object of strings - and checks every token
 * against the end of the text; values of keys it does not know are
 * skipped by an iterative walk with a depth limit, so no input recurses.
 * Strings are decoded (escapes, surrogate pairs) and must be UTF-8, as
 * the JSON library MLX uses requires. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array/dtype.h"
#include "io/dtype_bytes.h"
#include "io/safetensors.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

enum { MAX_DEPTH = 64 };

typedef struct parser {
    const char *t;
    size_t n, i;
    const char *label, *fn;
    bool failed; /* one message reported */
} parser;

static bool fail(parser *p, const char *what)
{
    if (!p->failed)
        mc_error("[%s] Invalid json header in %s: %s at byte %zu.", p->fn, p->label, what, p->i);
    p->failed = true;
    return false;
}

static void ws(parser *p)
{
    while (p->i < p->n && (p->t[p->i] == ' ' || p->t[p->i] == '\t' || p->t[p->i] == '\n' || p->t[p->i] == '\r'))
        p->i++;
}

static bool peek(parser *p, char ch)
{
    ws(p);
    return p->i < p->n && p->t[p->i] == ch;
}

static bool eat(parser *p, char ch)
{
    if (!peek(p, ch))
        return false;
    p->i++;
    return true;
}

static bool expect(parser *p, char ch, const char *what) { return eat(p, ch) || fail(p, what); }

static int hex4(const char *s)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Length of the UTF-8 sequence at s (n bytes available), 0 if invalid
 * (overlong forms, surrogates and values past U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!len || len > n)
        return 0;
    unsigned cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3f);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

bool mc_io_utf8_valid(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len((const unsigned char *)s + i, n - i);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A JSON string at the cursor: decoded into a new NUL-terminated buffer
 * (*out, the caller frees it), or skipped when out is NULL. A decoded
 * string is never longer than its JSON text, which bounds the buffer. */
static bool string(parser *p, char **out)
{
    if (!eat(p, '"'))
        return fail(p, "expected a string");
    size_t start = p->i;
    char *buf = NULL;
    if (out) {
        size_t end = start;
        while (end < p->n && p->t[end] != '"')
            end += p->t[end] == '\\' ? 2 : 1;
        buf = mc_xmalloc((end < p->n ? end : p->n) - start + 1);
        if (!buf) {
            mc_error_oom(p->fn, p->n - start + 1);
            p->failed = true;
            return false;
        }
    }
    size_t len = 0;
    for (;;) {
        if (p->i >= p->n) {
            mc_xfree(buf);
            return fail(p, "unterminated string");
        }
        unsigned char c = (unsigned char)p->t[p->i];
        if (c == '"') {
            p->i++;
            break;
        }
        if (c < 0x20) {
            mc_xfree(buf);
            return fail(p, "control character in a string");
        }
        if (c != '\\') {
            size_t l = utf8_len((const unsigned char *)p->t + p->i, p->n - p->i);
            if (!l) {
                mc_xfree(buf);
                return fail(p, "invalid UTF-8 in a string");
            }
            if (buf)
                memcpy(buf + len, p->t + p->i, l);
            len += l;
            p->i += l;
            continue;
        }
        if (p->i + 1 >= p->n) {
            mc_xfree(buf);
            return fail(p, "unterminated string");
        }
        char e = p->t[p->i + 1];
        p->i += 2;
        unsigned cp;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u': {
            int h = p->n - p->i >= 4 ? hex4(p->t + p->i) : -1;
            if (h < 0) {
                mc_xfree(buf);
                return fail(p, "bad \\u escape");
            }
            p->i += 4;
            cp = (unsigned)h;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                int lo =
                    p->n - p->i >= 6 && p->t[p->i] == '\\' && p->t[p->i + 1] == 'u' ? hex4(p->t + p->i + 2) : -1;
                if (lo < 0xdc00 || lo > 0xdfff) {
                    mc_xfree(buf);
                    return fail(p, "unpaired surrogate escape");
                }
                p->i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                mc_xfree(buf);
                return fail(p, "unpaired surrogate escape");
            } else if (cp == 0) {
                mc_xfree(buf);
                return fail(p, "NUL character in a string");
            }
            break;
        }
        default: mc_xfree(buf); return fail(p, "bad escape in a string");
        }
        /* an escape is at least as long as the UTF-8 it stands for (6 bytes
         * for up to 3, 12 for 4), so buf has room */
        if (buf)
            len += put_utf8(buf + len, cp);
        else
            len += 1;
    }
    if (buf) {
        buf[len] = '\0';
        *out = buf;
    }
    return true;
}

/* A JSON integer in [0, max]. */
static bool integer(parser *p, uint64_t max, uint64_t *out, const char *what)
{
    ws(p);
    if (p->i < p->n && p->t[p->i] == '-')
        return fail(p, what);
    size_t start = p->i;
    uint64_t v = 0;
    while (p->i < p->n && p->t[p->i] >= '0' && p->t[p->i] <= '9') {
        unsigned d = (unsigned)(p->t[p->i++] - '0');
        if (v > (max - d) / 10)
            return fail(p, what);
        v = v * 10 + d;
    }
    if (p->i == start || (p->t[start] == '0' && p->i - start > 1))
        return fail(p, what);
    if (p->i < p->n && (p->t[p->i] == '.' || p->t[p->i] == 'e' || p->t[p->i] == 'E'))
        return fail(p, what);
    *out = v;
    return true;
}

static bool literal(parser *p)
{
    ws(p);
    static const char *words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(words[k]);
        if (p->n - p->i >= l && memcmp(p->t + p->i, words[k], l) == 0) {
            p->i += l;
            return true;
        }
    }
    /* a number: -?digits(.digits)?([eE][+-]?digits)? */
    size_t start = p->i;
    if (p->i < p->n && p->t[p->i] == '-')
        p->i++;
    size_t d0 = p->i;
    while (p->i < p->n && p->t[p->i] >= '0' && p->t[p->i] <= '9')
        p->i++;
    if (p->i == d0)
        return fail(p, "expected a value");
    if (p->i < p->n && p->t[p->i] == '.') {
        size_t f0 = ++p->i;
        while (p->i < p->n && p->t[p->i] >= '0' && p->t[p->i] <= '9')
            p->i++;
        if (p->i == f0)
            return fail(p, "bad number");
    }
    if (p->i < p->n && (p->t[p->i] == 'e' || p->t[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->t[p->i] == '+' || p->t[p->i] == '-'))
            p->i++;
        size_t e0 = p->i;
        while (p->i < p->n && p->t[p->i] >= '0' && p->t[p->i] <= '9')
            p->i++;
        if (p->i == e0)
            return fail(p, "bad number");
    }
    (void)start;
    return true;
}

/* Skips any JSON value, walking containers with an explicit stack. */
static bool skip_value(parser *p)
{
    char stack[MAX_DEPTH];
    int depth = 0;
    for (;;) {
        /* a value starts here */
        if (peek(p, '{') || peek(p, '[')) {
            if (depth == MAX_DEPTH)
                return fail(p, "nesting too deep");
            char open = p->t[p->i++];
            stack[depth++] = open == '{' ? '}' : ']';
            if (eat(p, stack[depth - 1])) {
                depth--;
            } else {
                if (open == '{' && (!string(p, NULL) || !expect(p, ':', "expected ':'")))
                    return false;
                continue;
            }
        } else if (peek(p, '"')) {
            if (!string(p, NULL))
                return false;
        } else if (!literal(p)) {
            return false;
        }
        /* after a value: close containers or go on to the next item */
        for (;;) {
            if (depth == 0)
                return true;
            if (eat(p, stack[depth - 1])) {
                depth--;
                continue;
            }
            if (!expect(p, ',', "expected ',' or a closing bracket"))
                return false;
            if (stack[depth - 1] == '}' && (!string(p, NULL) || !expect(p, ':', "expected ':'")))
                return false;
            break;
        }
    }
}

static const struct {
    const char *name;
    mlx_dtype dtype;
} st_dtypes[] = {
    {"F32", MLX_FLOAT32},
    {"F16", MLX_FLOAT16},
    {"BF16", MLX_BFLOAT16},
    {"I64", MLX_INT64},
    {"I32", MLX_INT32},
    {"I16", MLX_INT16},
    {"I8", MLX_INT8},
    {"U64", MLX_UINT64},
    {"U32", MLX_UINT32},
    {"U16", MLX_UINT16},
    {"U8", MLX_UINT8},
    {"BOOL", MLX_BOOL},
    {"C64", MLX_COMPLEX64},
    /* read as its bytes, as MLX does */
    {"F8_E4M3", MLX_UINT8},
};

const char *mc_st_dtype_name(mlx_dtype t)
{
    /* the table's last row is a load-only alias */
    for (size_t k = 0; k + 1 < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
        if (st_dtypes[k].dtype == t)
            return st_dtypes[k].name;
    return NULL;
}

/* {"dtype": ..., "shape": [...], "data_offsets": [b, e], other keys skipped} */
static bool tensor(parser *p, mc_st_entry *e)
{
    bool has_dtype = false, has_shape = false, has_offsets = false;
    int shape[MC_MAX_NDIM];
    if (!expect(p, '{', "a tensor entry is not an object"))
        return false;
    if (!eat(p, '}')) {
        do {
            char *key = NULL;
            if (!string(p, &key))
                return false;
            bool ok = expect(p, ':', "expected ':'");
            if (ok && strcmp(key, "dtype") == 0) {
                char *name = NULL;
                ok = !has_dtype ? string(p, &name) : fail(p, "\"dtype\" appears twice");
                if (ok) {
                    size_t k = 0;
                    while (k < sizeof st_dtypes / sizeof st_dtypes[0] && strcmp(st_dtypes[k].name, name) != 0)
                        k++;
                    if (k == sizeof st_dtypes / sizeof st_dtypes[0]) {
                        mc_error("[%s] Unsupported safetensors dtype \"%.40s\" for tensor \"%.200s\" in %s.",
                                 p->fn, name, e->name, p->label);
                        p->failed = true;
                        ok = false;
                    } else {
                        e->dtype = st_dtypes[k].dtype;
                    }
                    has_dtype = true;
                }
                mc_xfree(name);
            } else if (ok && strcmp(key, "shape") == 0) {
                ok = !has_shape ? expect(p, '[', "\"shape\" is not an array") : fail(p, "\"shape\" appears twice");
                e->ndim = 0;
                if (ok && !eat(p, ']')) {
                    do {
                        uint64_t d;
                        if (e->ndim == MC_MAX_NDIM)
                            ok = fail(p, "too many dimensions");
                        else if ((ok = integer(p, INT_MAX, &d, "a dimension is not an integer in [0, 2^31)")))
                            shape[e->ndim++] = (int)d;
                    } while (ok && eat(p, ','));
                    ok = ok && expect(p, ']', "expected ',' or ']' in \"shape\"");
                }
                has_shape = true;
            } else if (ok && strcmp(key, "data_offsets") == 0) {
                ok = !has_offsets ? expect(p, '[', "\"data_offsets\" is not an array")
                                  : fail(p, "\"data_offsets\" appears twice");
                ok = ok && integer(p, UINT64_MAX, &e->begin, "an offset is not a non-negative integer") &&
                     expect(p, ',', "\"data_offsets\" needs two offsets") &&
                     integer(p, UINT64_MAX, &e->end, "an offset is not a non-negative integer") &&
                     expect(p, ']', "\"data_offsets\" needs two offsets");
                has_offsets = true;
            } else if (ok) {
                ok = skip_value(p);
            }
            mc_xfree(key);
            if (!ok)
                return false;
        } while (eat(p, ','));
        if (!expect(p, '}', "expected ',' or '}' in a tensor entry"))
            return false;
    }
    if (!has_dtype || !has_shape || !has_offsets)
        return fail(p, !has_dtype   ? "a tensor has no \"dtype\""
                       : !has_shape ? "a tensor has no \"shape\""
                                    : "a tensor has no \"data_offsets\"");
    size_t nbytes;
    if (!mc_io_nbytes(e->dtype, e->ndim, shape, &nbytes))
        return fail(p, "a tensor's shape has more elements than can be addressed");
    if (e->begin > e->end || e->end - e->begin != nbytes) {
        mc_error(
            "[%s] Invalid json header in %s: tensor \"%.200s\" has data_offsets [%llu, %llu] but its dtype and "
            "shape take %zu bytes.",
            p->fn, p->label, e->name, (unsigned long long)e->begin, (unsigned long long)e->end, nbytes);
        p->failed = true;
        return false;
    }
    e->shape = mc_xmalloc(e->ndim ? (size_t)e->ndim * sizeof(int) : 1);
    if (!e->shape) {
        mc_error_oom(p->fn, (size_t)e->ndim * sizeof(int));
        p->failed = true;
        return false;
    }
    memcpy(e->shape, shape, (size_t)e->ndim * sizeof(int));
    return true;
}

static bool metadata(parser *p, mc_map *meta)
{
    if (eat(p, 'n'))
        return p->n - p->i >= 3 && memcmp(p->t + p->i, "ull", 3) == 0
                   ? (p->i += 3, true)
                   : fail(p, "\"__metadata__\" is not an object");
    if (!expect(p, '{', "\"__metadata__\" is not an object"))
        return false;
    if (eat(p, '}'))
        return true;
    do {
        char *key = NULL, *value = NULL;
        size_t dup;
        bool ok = string(p, &key) && expect(p, ':', "expected ':'") &&
                  (peek(p, '"') ? string(p, &value) : fail(p, "a metadata value is not a string"));
        if (ok && mc_map_find(meta, key, &dup))
            ok = fail(p, "a metadata key appears twice");
        if (ok && mc_map_put_string(p->fn, meta, key, value)) {
            p->failed = true;
            ok = false;
        }
        mc_xfree(key);
        mc_xfree(value);
        if (!ok)
            return false;
    } while (eat(p, ','));
    return expect(p, '}', "expected ',' or '}' in \"__metadata__\"");
}

void mc_st_header_free(mc_st_header *h)
{
    for (size_t k = 0; k < h->n; k++) {
        mc_xfree(h->e[k].name);
        mc_xfree(h->e[k].shape);
    }
    mc_xfree(h->e);
    mc_map_free(h->meta);
    memset(h, 0, sizeof *h);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(const mc_st_entry *const *)a)->name, (*(const mc_st_entry *const *)b)->name);
}

/* Duplicate tensor names, found by sorting pointers to the entries. */
static bool unique_names(parser *p, mc_st_header *h)
{
    if (h->n < 2)
        return true;
    const mc_st_entry **s = mc_xmalloc(h->n * sizeof *s);
    if (!s) {
        mc_error_oom(p->fn, h->n * sizeof *s);
        p->failed = true;
        return false;
    }
    for (size_t k = 0; k < h->n; k++)
        s[k] = &h->e[k];
    qsort(s, h->n, sizeof *s, cmp_name);
    bool ok = true;
    for (size_t k = 1; k < h->n && ok; k++)
        if (strcmp(s[k - 1]->name, s[k]->name) == 0) {
            mc_error("[%s] Invalid json header in %s: the tensor \"%.200s\" appears twice.", p->fn, p->label,
                     s[k]->name);
            p->failed = true;
            ok = false;
        }
    mc_xfree(s);
    return ok;
}

int mc_st_parse_header(const char *text, size_t n, mc_st_header *h, const char *label, const char *fn)
{
    parser p = {text, n, 0, label, fn, false};
    memset(h, 0, sizeof *h);
    h->meta = mc_map_new(fn, MC_MAP_STRING);
    if (!h->meta)
        return 1;
    bool ok = expect(&p, '{', "the header is not an object"), seen_meta = false;
    if (ok && !eat(&p, '}')) {
        do {
            char *name = NULL;
            if (!(ok = string(&p, &name) && expect(&p, ':', "expected ':'"))) {
                mc_xfree(name);
                break;
            }
            if (strcmp(name, "__metadata__") == 0) {
                ok = !seen_meta ? metadata(&p, h->meta) : fail(&p, "\"__metadata__\" appears twice");
                seen_meta = true;
                mc_xfree(name);
                continue;
            }
            if (h->n == h->cap) {
                size_t ncap = h->cap ? h->cap * 2 : 16;
                mc_st_entry *e = ncap <= SIZE_MAX / sizeof *e ? mc_xrealloc(h->e, ncap * sizeof *e) : NULL;
                if (!e) {
                    mc_error_oom(fn, ncap * sizeof *e);
                    p.failed = true;
                    mc_xfree(name);
                    ok = false;
                    break;
                }
                h->e = e;
                h->cap = ncap;
            }
            mc_st_entry *e = &h->e[h->n];
            memset(e, 0, sizeof *e);
            e->name = name;
            h->n++;
            ok = tensor(&p, e);
        } while (ok && eat(&p, ','));
        ok = ok && expect(&p, '}', "expected ',' or '}' after a tensor");
    }
    if (ok) {
        ws(&p);
        if (p.i != n)
            ok = fail(&p, "unexpected bytes after the header object");
    }
    ok = ok && unique_names(&p, h);
    if (!ok) {
        if (!p.failed)
            fail(&p, "malformed");
        mc_st_header_free(h);
        return 1;
    }
    return 0;
}
