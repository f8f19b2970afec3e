/* NumPy's .npy format (version 1 and 2 headers, as MLX reads and writes
 * them): parsing the header from untrusted bytes, loading an array, and
 * saving one. */
#ifndef MC_IO_NPY_H
#define MC_IO_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "array/array.h"
#include "io/stream.h"

/* What a header says. */
typedef struct mc_npy_header {
    mlx_dtype dtype;
    bool swap;    /* stored big-endian: swap each element's bytes */
    bool fortran; /* column-major data */
    int ndim;
    int shape[MC_MAX_NDIM];
} mc_npy_header;

/* Parses the header dictionary text[0..n) ("{'descr': '<f4',
 * 'fortran_order': False, 'shape': (2, 3), }" and padding). Returns 0, or
 * 1 with "[fn] ..." naming `label` and what is wrong. */
int mc_npy_parse_header(const char *text, size_t n, mc_npy_header *h, const char *label, const char *fn);

/* Loads the array of src: a new evaluated array (one reference), or NULL
 * with one error reported. */
mc_array *mc_npy_load(mc_io_src *src, const char *fn);

/* Writes a (evaluated, row- or column-contiguous, at least one byte) to
 * dst. Returns 0, or 1 with an error reported. */
int mc_npy_save(mc_io_sink *dst, const mc_array *a, const char *fn);

#endif
