/* The scalar encodings of MLX's .mlxfn files (mlx/export.cpp's serialize
 * and deserialize): little-endian integers and floats, bools as one byte,
 * vectors and strings as a uint64 count then their items, a dtype as its
 * int value then its size in one byte.
 *
 * mc_rd reads from a buffer that may be hostile: every read checks that the
 * bytes are there, every count that it fits in what is left, and the first
 * failure is reported once ("[fn] ... at offset N") and latched, so a
 * parser may read on and test `failed` when convenient. mc_wb appends to a
 * growable buffer; an allocation failure is latched and reported once by
 * the caller that flushes it. */
#ifndef MC_IO_MLXFN_BYTES_H
#define MC_IO_MLXFN_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"

typedef struct mc_rd {
    const uint8_t *p;
    size_t len, pos;
    const char *fn; /* names the failing call in messages */
    bool failed;
} mc_rd;

/* Reports "[fn] <what> ... at offset pos" once and latches; returns 1. */
int mc_rd_fail(mc_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int mc_rd_bytes(mc_rd *r, void *dst, size_t n, const char *what);
int mc_rd_u8(mc_rd *r, uint8_t *v, const char *what);
int mc_rd_bool(mc_rd *r, bool *v, const char *what);
int mc_rd_i32(mc_rd *r, int32_t *v, const char *what);
int mc_rd_u64(mc_rd *r, uint64_t *v, const char *what);
int mc_rd_f32(mc_rd *r, float *v, const char *what);
int mc_rd_f64(mc_rd *r, double *v, const char *what);
/* A vector's count: at most max, and at most as many items of min_item
 * bytes as the buffer still holds (a count cannot make us allocate more
 * than the file could fill). */
int mc_rd_count(mc_rd *r, uint64_t max, size_t min_item, size_t *n, const char *what);
/* A string, as a new NUL-terminated copy (mc_xfree it); at most max bytes
 * and no NUL inside. */
int mc_rd_string(mc_rd *r, size_t max, char **out, const char *what);
/* A vector<int> of at most max entries into v; *n its length. */
int mc_rd_ints(mc_rd *r, int max, int *n, int *v, const char *what);
/* A Shape (vector<int32>) of at most MC_MAX_NDIM non-negative dims. */
int mc_rd_shape(mc_rd *r, int *ndim, int *shape, const char *what);
/* A Dtype: a known value whose size byte agrees with it. */
int mc_rd_dtype(mc_rd *r, mlx_dtype *d, const char *what);

typedef struct mc_wb {
    uint8_t *p;
    size_t len, cap;
    bool failed; /* an allocation failed: the contents are incomplete */
} mc_wb;

void mc_wb_bytes(mc_wb *w, const void *src, size_t n);
void mc_wb_u8(mc_wb *w, uint8_t v);
void mc_wb_bool(mc_wb *w, bool v);
void mc_wb_i32(mc_wb *w, int32_t v);
void mc_wb_u64(mc_wb *w, uint64_t v);
void mc_wb_f32(mc_wb *w, float v);
void mc_wb_f64(mc_wb *w, double v);
void mc_wb_string(mc_wb *w, const char *s);
void mc_wb_ints(mc_wb *w, int n, const int *v);
void mc_wb_dtype(mc_wb *w, mlx_dtype d);
void mc_wb_free(mc_wb *w);

#endif
