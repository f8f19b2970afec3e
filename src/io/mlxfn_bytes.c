/* Owns the byte-level encodings of .mlxfn files (mlxfn_bytes.h): bounded
 * reads from untrusted buffers and appends to a growable one. Values are
 * assembled byte by byte, so the host's endianness and alignment never
 * matter. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io/mlxfn_bytes.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

int mc_rd_fail(mc_rd *r, const char *fmt, ...)
{
    if (r->failed)
        return 1;
    r->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mc_error("[%s] %s (at byte %zu of %zu).", r->fn, msg, r->pos, r->len);
}

int mc_rd_bytes(mc_rd *r, void *dst, size_t n, const char *what)
{
    if (r->failed)
        return 1;
    if (r->pos > r->len || n > r->len - r->pos)
        return mc_rd_fail(r, "Truncated file: %s needs %zu bytes, %zu left", what, n, r->len - r->pos);
    if (n)
        memcpy(dst, r->p + r->pos, n);
    r->pos += n;
    return 0;
}

static int rd_le(mc_rd *r, int n, uint64_t *v, const char *what)
{
    uint8_t b[8];
    if (mc_rd_bytes(r, b, (size_t)n, what))
        return 1;
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--)
        x = (x << 8) | b[i];
    *v = x;
    return 0;
}

int mc_rd_u8(mc_rd *r, uint8_t *v, const char *what)
{
    uint64_t x;
    if (rd_le(r, 1, &x, what))
        return 1;
    *v = (uint8_t)x;
    return 0;
}

int mc_rd_bool(mc_rd *r, bool *v, const char *what)
{
    uint8_t b;
    if (mc_rd_u8(r, &b, what))
        return 1;
    if (b > 1) {
        r->pos--;
        return mc_rd_fail(r, "Bad file: %s is a bool but holds %u", what, (unsigned)b);
    }
    *v = b;
    return 0;
}

int mc_rd_i32(mc_rd *r, int32_t *v, const char *what)
{
    uint64_t x;
    if (rd_le(r, 4, &x, what))
        return 1;
    *v = (int32_t)(uint32_t)x;
    return 0;
}

int mc_rd_u64(mc_rd *r, uint64_t *v, const char *what) { return rd_le(r, 8, v, what); }

int mc_rd_f32(mc_rd *r, float *v, const char *what)
{
    uint64_t x;
    if (rd_le(r, 4, &x, what))
        return 1;
    uint32_t u = (uint32_t)x;
    memcpy(v, &u, sizeof *v);
    return 0;
}

int mc_rd_f64(mc_rd *r, double *v, const char *what)
{
    uint64_t x;
    if (rd_le(r, 8, &x, what))
        return 1;
    memcpy(v, &x, sizeof *v);
    return 0;
}

int mc_rd_count(mc_rd *r, uint64_t max, size_t min_item, size_t *n, const char *what)
{
    uint64_t c;
    if (mc_rd_u64(r, &c, what))
        return 1;
    size_t left = r->len - r->pos;
    if (c > max || (min_item && c > left / min_item)) {
        r->pos -= 8;
        return mc_rd_fail(r, "Bad file: %s count %llu is more than %s", what, (unsigned long long)c,
                          c > max ? "allowed" : "the bytes left can hold");
    }
    *n = (size_t)c;
    return 0;
}

int mc_rd_string(mc_rd *r, size_t max, char **out, const char *what)
{
    size_t n;
    if (mc_rd_count(r, max, 1, &n, what))
        return 1;
    if (memchr(r->p + r->pos, 0, n))
        return mc_rd_fail(r, "Bad file: %s holds a NUL byte", what);
    char *s = mc_xmalloc(n + 1);
    if (!s) {
        r->failed = true;
        return mc_error_oom(r->fn, n + 1);
    }
    memcpy(s, r->p + r->pos, n);
    s[n] = 0;
    r->pos += n;
    *out = s;
    return 0;
}

int mc_rd_ints(mc_rd *r, int max, int *n, int *v, const char *what)
{
    size_t c;
    if (mc_rd_count(r, (uint64_t)max, 4, &c, what))
        return 1;
    for (size_t i = 0; i < c; i++) {
        int32_t x;
        if (mc_rd_i32(r, &x, what))
            return 1;
        v[i] = x;
    }
    *n = (int)c;
    return 0;
}

int mc_rd_shape(mc_rd *r, int *ndim, int *shape, const char *what)
{
    if (mc_rd_ints(r, MC_MAX_NDIM, ndim, shape, what))
        return 1;
    for (int i = 0; i < *ndim; i++)
        if (shape[i] < 0)
            return mc_rd_fail(r, "Bad file: %s has a negative dimension %d", what, shape[i]);
    return 0;
}

int mc_rd_dtype(mc_rd *r, mlx_dtype *d, const char *what)
{
    int32_t v;
    uint8_t size;
    if (mc_rd_i32(r, &v, what) || mc_rd_u8(r, &size, what))
        return 1;
    /* MLX's Dtype::Val and mlx-c's mlx_dtype list the types in one order */
    if (!mc_dtype_valid(v))
        return mc_rd_fail(r, "Bad file: %s has an unknown dtype value %d", what, (int)v);
    if (mc_dtype_size((mlx_dtype)v) != size)
        return mc_rd_fail(r, "Bad file: %s is %s but says its size is %u bytes", what, mc_dtype_name(v),
                          (unsigned)size);
    *d = (mlx_dtype)v;
    return 0;
}

/* ---- writing ---- */

void mc_wb_bytes(mc_wb *w, const void *src, size_t n)
{
    if (w->failed || !n)
        return;
    if (n > w->cap - w->len) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n) {
            if (cap > SIZE_MAX / 2) {
                w->failed = true;
                return;
            }
            cap *= 2;
        }
        uint8_t *p = mc_xrealloc(w->p, cap);
        if (!p) {
            w->failed = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void wb_le(mc_wb *w, uint64_t x, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++, x >>= 8)
        b[i] = (uint8_t)x;
    mc_wb_bytes(w, b, (size_t)n);
}

void mc_wb_u8(mc_wb *w, uint8_t v) { wb_le(w, v, 1); }
void mc_wb_bool(mc_wb *w, bool v) { wb_le(w, v ? 1 : 0, 1); }
void mc_wb_i32(mc_wb *w, int32_t v) { wb_le(w, (uint32_t)v, 4); }
void mc_wb_u64(mc_wb *w, uint64_t v) { wb_le(w, v, 8); }

void mc_wb_f32(mc_wb *w, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    wb_le(w, u, 4);
}

void mc_wb_f64(mc_wb *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    wb_le(w, u, 8);
}

void mc_wb_string(mc_wb *w, const char *s)
{
    size_t n = strlen(s);
    mc_wb_u64(w, n);
    mc_wb_bytes(w, s, n);
}

void mc_wb_ints(mc_wb *w, int n, const int *v)
{
    mc_wb_u64(w, (uint64_t)n);
    for (int i = 0; i < n; i++)
        mc_wb_i32(w, v[i]);
}

void mc_wb_dtype(mc_wb *w, mlx_dtype d)
{
    mc_wb_i32(w, (int32_t)d);
    mc_wb_u8(w, (uint8_t)mc_dtype_size(d));
}

void mc_wb_free(mc_wb *w)
{
    mc_xfree(w->p);
    memset(w, 0, sizeof *w);
}
