/* Owns the byte-size and byte-order helpers of io/ (dtype_bytes.h). */
#include "io/dtype_bytes.h"

#include <stdint.h>

#include "array/array.h"
#include "array/dtype.h"

bool mc_io_nbytes(mlx_dtype dtype, int ndim, const int *shape, size_t *nbytes)
{
    size_t size;
    size_t item = mc_dtype_size(dtype);
    if (!item || !mc_shape_size(ndim, shape, &size) || size > SIZE_MAX / 2 / item)
        return false;
    *nbytes = size * item;
    return true;
}

static void swap_each(unsigned char *p, size_t count, size_t width)
{
    for (size_t i = 0; i < count; i++, p += width)
        for (size_t j = 0; j < width / 2; j++) {
            unsigned char t = p[j];
            p[j] = p[width - 1 - j];
            p[width - 1 - j] = t;
        }
}

void mc_io_swap_bytes(void *data, size_t n, mlx_dtype dtype)
{
    size_t width = mc_dtype_size(dtype);
    /* a complex64 is two float32s, each in the stated byte order */
    if (dtype == MLX_COMPLEX64) {
        width = 4;
        n *= 2;
    }
    if (width > 1)
        swap_each(data, n, width);
}
