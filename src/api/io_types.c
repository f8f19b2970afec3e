/* Owns mlx-c's io_types.h functions: handles over a program's own reader
 * or writer (handles/iostream.h). */
#include "mlx/c/io_types.h"

#include "handles/iostream.h"
#include "handles/string.h"
#include "runtime/error.h"

mlx_io_reader mlx_io_reader_new(void *desc, mlx_io_vtable vtable)
{
    return (mlx_io_reader){mc_iostream_new("mlx_io_reader_new", desc, vtable, false)};
}

int mlx_io_reader_descriptor(void **desc_, mlx_io_reader io)
{
    static const char fn[] = "mlx_io_reader_descriptor";
    mc_iostream *s = mc_iostream_checked(io.ctx, fn, "mlx_io_reader");
    if (!s)
        return 1;
    if (!desc_)
        return mc_error("[%s] The output pointer is NULL.", fn);
    *desc_ = s->desc;
    return 0;
}

int mlx_io_reader_tostring(mlx_string *str_, mlx_io_reader io)
{
    static const char fn[] = "mlx_io_reader_tostring";
    mc_iostream *s = mc_iostream_checked(io.ctx, fn, "mlx_io_reader");
    return s ? mc_string_assign(fn, str_, mc_iostream_label(s)) : 1;
}

int mlx_io_reader_free(mlx_io_reader io)
{
    mc_iostream_release(io.ctx);
    return 0;
}

mlx_io_writer mlx_io_writer_new(void *desc, mlx_io_vtable vtable)
{
    return (mlx_io_writer){mc_iostream_new("mlx_io_writer_new", desc, vtable, true)};
}

int mlx_io_writer_descriptor(void **desc_, mlx_io_writer io)
{
    static const char fn[] = "mlx_io_writer_descriptor";
    mc_iostream *s = mc_iostream_checked(io.ctx, fn, "mlx_io_writer");
    if (!s)
        return 1;
    if (!desc_)
        return mc_error("[%s] The output pointer is NULL.", fn);
    *desc_ = s->desc;
    return 0;
}

int mlx_io_writer_tostring(mlx_string *str_, mlx_io_writer io)
{
    static const char fn[] = "mlx_io_writer_tostring";
    mc_iostream *s = mc_iostream_checked(io.ctx, fn, "mlx_io_writer");
    return s ? mc_string_assign(fn, str_, mc_iostream_label(s)) : 1;
}

int mlx_io_writer_free(mlx_io_writer io)
{
    mc_iostream_release(io.ctx);
    return 0;
}
