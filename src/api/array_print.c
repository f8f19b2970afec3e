/* Owns the text form of an array (mlx_array_tostring): MLX's print_array /
 * print_subarray rules (mlx/utils.cpp) carried over to C.
 *
 * The rules, as MLX has them:
 *  - "array(" + body + ", dtype=" + name + ")" for every dtype and shape;
 *    a 0-d array's body is its one element.
 *  - Each dimension prints "[" items "]". In the last dimension items are
 *    separated by ", "; in others by ",\n" plus 7 + dim spaces (the width of
 *    "array(" and the open brackets), so rows line up. No blank lines
 *    between blocks and no column padding (unlike numpy).
 *  - Any dimension longer than 6 prints its first 3 items, "...", and its
 *    last 3, whatever the array's total size.
 *  - Elements are printed as a default C++ ostream prints them: integers in
 *    full (int8/uint8 as numbers), bool as true/false (True/False when the
 *    formatter capitalizes), floating types through double with "%.6g"
 *    (glibc's nan, -nan, inf, -inf, -0), float16/bfloat16 widened to float
 *    first, complex as real, then "+" imag or "-" |imag|, then "j".
 */
#include "api/array_print.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"
#include "simd/half_convert.h"

/* MLX's num_print: items kept at each end of a summarized dimension. */
enum { EDGE_ITEMS = 3 };

/* A growing string; after a failed allocation every append is a no-op and
 * `failed` is set, so the walk needs no error checks of its own. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    size_t want; /* bytes of the allocation that failed */
    bool failed;
} sbuf;

/* Makes room for n more bytes and the NUL; false once anything failed. */
static bool sb_reserve(sbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n > SIZE_MAX / 2 - b->len - 1) {
        b->failed = true;
        b->want = SIZE_MAX;
        return false;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = mc_xrealloc(b->p, cap);
    if (!p) {
        b->failed = true;
        b->want = cap;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (!sb_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_spaces(sbuf *b, int n)
{
    if (!sb_reserve(b, (size_t)n))
        return;
    memset(b->p + b->len, ' ', (size_t)n);
    b->len += (size_t)n;
    b->p[b->len] = '\0';
}

/* C++ streams format numbers in the classic "C" locale whatever the
 * program's locale; printf follows LC_NUMERIC. Our output can only hold
 * digits, signs, 'e', the letters of nan/inf and the decimal point, so any
 * other run of bytes is the locale's decimal point: make it '.'. */
static size_t fix_decimal_point(char *s, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'n' ||
            c == 'a' || c == 'i' || c == 'f') {
            s[out++] = c;
            i++;
        } else {
            s[out++] = '.';
            while (i < n && !((s[i] >= '0' && s[i] <= '9') || s[i] == 'e'))
                i++;
        }
    }
    return out;
}

/* A double as `os << v` prints it: precision < 0 is the stream default
 * (%g with 6 significant digits); otherwise std::fixed with that many
 * decimals (a negative precision other than -1 makes libstdc++ use 6). */
static void sb_double(sbuf *b, double v, int precision)
{
    bool fixed = precision != -1;
    int prec = precision < 0 ? 6 : precision;
    int n = fixed ? snprintf(NULL, 0, "%.*f", prec, v) : snprintf(NULL, 0, "%.*g", prec, v);
    if (n < 0) {
        b->failed = true;
        b->want = SIZE_MAX;
        return;
    }
    if (!sb_reserve(b, (size_t)n))
        return;
    char *at = b->p + b->len;
    if (fixed)
        snprintf(at, (size_t)n + 1, "%.*f", prec, v);
    else
        snprintf(at, (size_t)n + 1, "%.*g", prec, v);
    b->len += fix_decimal_point(at, (size_t)n);
    b->p[b->len] = '\0';
}

static void sb_i64(sbuf *b, int64_t v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", (long long)v);
    sb_add(b, t, (size_t)n);
}

static void sb_u64(sbuf *b, uint64_t v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    sb_add(b, t, (size_t)n);
}

/* One element at p, as MLX's PrintFormatter::print does for its type. */
static void put_elem(sbuf *b, mlx_dtype dt, const unsigned char *p, const mc_print_options *o)
{
    switch (dt) {
    case MLX_BOOL: {
        bool v = *p != 0;
        sb_str(b, o->capitalize_bool ? (v ? "True" : "False") : (v ? "true" : "false"));
        break;
    }
    case MLX_UINT8: sb_u64(b, *p); break;
    case MLX_UINT16: { uint16_t v; memcpy(&v, p, sizeof v); sb_u64(b, v); break; }
    case MLX_UINT32: { uint32_t v; memcpy(&v, p, sizeof v); sb_u64(b, v); break; }
    case MLX_UINT64: { uint64_t v; memcpy(&v, p, sizeof v); sb_u64(b, v); break; }
    case MLX_INT8: { int8_t v; memcpy(&v, p, sizeof v); sb_i64(b, v); break; }
    case MLX_INT16: { int16_t v; memcpy(&v, p, sizeof v); sb_i64(b, v); break; }
    case MLX_INT32: { int32_t v; memcpy(&v, p, sizeof v); sb_i64(b, v); break; }
    case MLX_INT64: { int64_t v; memcpy(&v, p, sizeof v); sb_i64(b, v); break; }
    case MLX_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        sb_double(b, mc_f16_to_f32(h), o->precision);
        break;
    }
    case MLX_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        sb_double(b, mc_bf16_to_f32(h), o->precision);
        break;
    }
    case MLX_FLOAT32: { float v; memcpy(&v, p, sizeof v); sb_double(b, v, o->precision); break; }
    case MLX_FLOAT64: { double v; memcpy(&v, p, sizeof v); sb_double(b, v, o->precision); break; }
    case MLX_COMPLEX64: {
        float re, im;
        memcpy(&re, p, sizeof re);
        memcpy(&im, p + sizeof re, sizeof im);
        sb_double(b, re, o->precision);
        /* MLX's test: a -0 imaginary part takes the "+" branch, so it
         * prints "+-0j"; a nan one prints "+" and the nan as it is. */
        if (im >= 0.0f || isnan(im)) {
            sb_str(b, "+");
            sb_double(b, im, o->precision);
        } else {
            sb_str(b, "-");
            sb_double(b, -im, o->precision);
        }
        sb_str(b, "j");
        break;
    }
    }
}

typedef struct walk {
    sbuf *b;
    const mc_array *a;
    const unsigned char *data;
    size_t itemsize;
    const mc_print_options *o;
} walk;

/* Dimension `dim` of the block starting at element offset `index`. The
 * recursion is at most MC_MAX_NDIM deep. */
static void put_block(const walk *w, int64_t index, int dim)
{
    sbuf *b = w->b;
    int n = w->a->shape[dim];
    int64_t s = w->a->strides[dim];
    bool last = dim == w->a->ndim - 1;
    sb_str(b, "[");
    for (int i = 0; i < n && !b->failed; i++) {
        if (i > 0 && !last)
            sb_spaces(b, 7 + dim);
        if (i == EDGE_ITEMS && n > 2 * EDGE_ITEMS) {
            sb_str(b, "...");
            i = n - EDGE_ITEMS - 1;
            index = (int64_t)((uint64_t)index + (uint64_t)s * (uint64_t)(n - 2 * EDGE_ITEMS - 1));
        } else if (last) {
            put_elem(b, w->a->dtype, w->data + index * (int64_t)w->itemsize, w->o);
        } else {
            put_block(w, index, dim + 1);
        }
        if (i < n - 1)
            sb_str(b, last ? ", " : ",\n");
        /* unsigned: an empty array's strides (of dims around a 0) are not
         * bounded by any size and may wrap; its elements are never read */
        index = (int64_t)((uint64_t)index + (uint64_t)s);
    }
    sb_str(b, "]");
}

char *mc_array_format_opts(const mc_array *a, const mc_print_options *opts, const char *fn)
{
    static const mc_print_options defaults = {false, -1};
    const mc_print_options *o = opts ? opts : &defaults;
    if (!a) {
        mc_error("[%s] The array is NULL.", fn);
        return NULL;
    }
    if (!a->data && a->size > 0) {
        mc_error("[%s] The array has no data: evaluate it before printing.", fn);
        return NULL;
    }
    sbuf b = {0};
    sb_str(&b, "array(");
    if (a->ndim == 0) {
        put_elem(&b, a->dtype, a->data, o);
    } else {
        walk w = {&b, a, a->data, mc_dtype_size(a->dtype), o};
        put_block(&w, 0, 0);
    }
    sb_str(&b, ", dtype=");
    sb_str(&b, mc_dtype_name(a->dtype));
    sb_str(&b, ")");
    if (b.failed) {
        mc_xfree(b.p);
        mc_error_oom(fn, b.want);
        return NULL;
    }
    return b.p;
}

char *mc_array_format(const mc_array *a, const char *fn) { return mc_array_format_opts(a, NULL, fn); }
