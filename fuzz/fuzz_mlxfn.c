/* libFuzzer harness for importing MLX's exported functions
 * (src/io/mlxfn*.c, src/compile/export.c): the input is a .mlxfn file.
 * mlx-c imports from a path only, so each input is written to one
 * temporary file first. An import returns a function and reports nothing,
 * or returns an empty handle and reports one message; a function that
 * imports is freed (leaks fail the run under ASan). */
#include <unistd.h>

#include "io_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_init();
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_mlxfn_%ld.mlxfn", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    int before = fz_errors;
    mlx_imported_function fun = mlx_imported_function_new(path);
    fz_check("mlx_imported_function_new", fun.ctx ? 0 : 1, before);
    mlx_imported_function_free(fun);
    return 0;
}
