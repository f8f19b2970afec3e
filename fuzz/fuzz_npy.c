/* libFuzzer harness for .npy loading (src/io/npy.c): the input is a file
 * read through a program's reader. A load returns 0 and reports nothing,
 * or returns 1 and reports one message; the reader is freed once; what
 * loads saves back and loads again with the same dtype and shape. */
#include "io_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    fz_mem m = {.in = data, .size = size};
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_io_reader r = mlx_io_reader_new(&m, fz_vtable);
    mlx_array a = mlx_array_new(), b = mlx_array_new();
    int before = fz_errors;
    int rc = mlx_load_reader(&a, r, s);
    fz_check("mlx_load_reader", rc, before);
    mlx_io_reader_free(r);
    if (m.frees != 1)
        abort();
    if (rc == 0) {
        fz_mem w = {0};
        mlx_io_writer wr = mlx_io_writer_new(&w, fz_vtable);
        before = fz_errors;
        int src = mlx_save_writer(wr, a);
        fz_check("mlx_save_writer", src, before);
        mlx_io_writer_free(wr);
        if (src == 0) {
            fz_mem back = {.in = w.out, .size = w.size};
            mlx_io_reader r2 = mlx_io_reader_new(&back, fz_vtable);
            if (mlx_load_reader(&b, r2, s) != 0 || mlx_array_dtype(a) != mlx_array_dtype(b) ||
                mlx_array_ndim(a) != mlx_array_ndim(b) ||
                memcmp(mlx_array_shape(a), mlx_array_shape(b), mlx_array_ndim(a) * sizeof(int)) != 0)
                abort();
            mlx_io_reader_free(r2);
        }
        free(w.out);
    }
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_stream_free(s);
    return 0;
}
