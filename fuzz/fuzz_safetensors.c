/* libFuzzer harness for safetensors loading (src/io/safetensors*.c): the
 * input is a file read through a program's reader. A load returns 0 and
 * reports nothing, or returns 1 and reports one message (the output maps
 * then unchanged); the reader is freed once; what loads saves back and
 * loads again with the same number of tensors. */
#include "io_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(mlx_map_string_to_array m)
{
    mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
    const char *k;
    mlx_array v = mlx_array_new();
    size_t n = 0;
    while (mlx_map_string_to_array_iterator_next(&k, &v, it) == 0)
        n++;
    mlx_array_free(v);
    mlx_map_string_to_array_iterator_free(it);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    fz_mem m = {.in = data, .size = size};
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_io_reader r = mlx_io_reader_new(&m, fz_vtable);
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), back = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new(), mback = mlx_map_string_to_string_new();
    void *before_ctx = arrays.ctx;
    int before = fz_errors;
    int rc = mlx_load_safetensors_reader(&arrays, &meta, r, s);
    fz_check("mlx_load_safetensors_reader", rc, before);
    mlx_io_reader_free(r);
    if (m.frees != 1 || arrays.ctx != before_ctx || (rc && count(arrays) != 0))
        abort();
    if (rc == 0) {
        fz_mem w = {0};
        mlx_io_writer wr = mlx_io_writer_new(&w, fz_vtable);
        before = fz_errors;
        int src = mlx_save_safetensors_writer(wr, arrays, meta);
        fz_check("mlx_save_safetensors_writer", src, before);
        mlx_io_writer_free(wr);
        if (src == 0) {
            fz_mem again = {.in = w.out, .size = w.size};
            mlx_io_reader r2 = mlx_io_reader_new(&again, fz_vtable);
            if (mlx_load_safetensors_reader(&back, &mback, r2, s) != 0 || count(back) != count(arrays))
                abort();
            mlx_io_reader_free(r2);
        }
        free(w.out);
    }
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_array_free(back);
    mlx_map_string_to_string_free(meta);
    mlx_map_string_to_string_free(mback);
    mlx_stream_free(s);
    return 0;
}
