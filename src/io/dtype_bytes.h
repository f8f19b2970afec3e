/* Byte-level helpers the formats share: the byte size of a shape, and
 * reversing the byte order of elements in place. */
#ifndef MC_IO_DTYPE_BYTES_H
#define MC_IO_DTYPE_BYTES_H

#include <stdbool.h>
#include <stddef.h>

#include "mlx/c/array.h"

/* The bytes of ndim dims of dtype, false if a dim is negative or the size
 * overflows (more than SIZE_MAX / 2: no buffer can hold it). */
bool mc_io_nbytes(mlx_dtype dtype, int ndim, const int *shape, size_t *nbytes);

/* Reverses the byte order of each scalar of the n elements at data: every
 * element of a real dtype, each half of a complex64. */
void mc_io_swap_bytes(void *data, size_t n, mlx_dtype dtype);

#endif
