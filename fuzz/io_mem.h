/* A reader and writer over memory for the io fuzz targets (fuzz_npy.c,
 * fuzz_safetensors.c), and the one-message error contract they check. */
#ifndef MC_FUZZ_IO_MEM_H
#define MC_FUZZ_IO_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/mlx.h"

typedef struct fz_mem {
    const uint8_t *in;
    uint8_t *out;
    size_t size, cap, pos;
    bool err;
    int frees;
} fz_mem;

static bool fz_is_open(void *d) { return d != NULL; }
static bool fz_good(void *d) { return !((fz_mem *)d)->err; }
static size_t fz_tell(void *d) { return ((fz_mem *)d)->pos; }
static void fz_seek(void *d, int64_t off, int whence)
{
    (void)off;
    (void)whence;
    ((fz_mem *)d)->err = true; /* the loaders never seek */
}
static void fz_read(void *d, char *data, size_t n)
{
    fz_mem *m = d;
    if (m->pos > m->size || n > m->size - m->pos) {
        m->err = true;
        return;
    }
    memcpy(data, m->in + m->pos, n);
    m->pos += n;
}
static void fz_read_at(void *d, char *data, size_t n, size_t off)
{
    fz_mem *m = d;
    if (off > m->size || n > m->size - off) {
        m->err = true;
        return;
    }
    memcpy(data, m->in + off, n);
}
static void fz_write(void *d, const char *data, size_t n)
{
    fz_mem *m = d;
    if (n > m->cap - m->size) {
        size_t cap = (m->size + n) * 2;
        uint8_t *p = realloc(m->out, cap);
        if (!p) {
            m->err = true;
            return;
        }
        m->out = p;
        m->cap = cap;
    }
    memcpy(m->out + m->size, data, n);
    m->size += n;
}
static const char *fz_label(void *d)
{
    (void)d;
    return "<fuzz input>";
}
static void fz_free(void *d) { ((fz_mem *)d)->frees++; }

static const mlx_io_vtable fz_vtable = {fz_is_open, fz_good,  fz_tell,  fz_seek, fz_read,
                                        fz_read_at, fz_write, fz_label, fz_free};

static int fz_errors;
static char fz_last[256];

static void fz_count_error(const char *msg, void *data)
{
    (void)data;
    snprintf(fz_last, sizeof fz_last, "%s", msg ? msg : "(null)");
    fz_errors++;
}

/* Aborts (so libFuzzer keeps the input) unless the call returned 0 with no
 * message or non-zero with exactly one. */
static void fz_check(const char *what, int rc, int before)
{
    int n = fz_errors - before;
    if ((rc == 0 && n != 0) || (rc != 0 && n != 1)) {
        fprintf(stderr, "contract broken: %s returned %d after %d message(s); last: %s\n", what, rc, n,
                n ? fz_last : "-");
        abort();
    }
}

static void fz_init(void)
{
    static bool done;
    if (!done) {
        mlx_set_error_handler(fz_count_error, NULL, NULL);
        done = true;
    }
}

#endif
