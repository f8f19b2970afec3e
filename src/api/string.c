/* Owns mlx-c's string.h functions: a handle whose ctx is an owned,
 * NUL-terminated copy of some text (handles/string.h). Unlike mlx-c, whose
 * mlx_string_new() is a NULL ctx, mlx_string_new() here already holds "",
 * so mlx_string_data on it is valid; every other behaviour matches. */
#include "mlx/c/string.h"

#include "handles/string.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

mlx_string mlx_string_new(void) { return (mlx_string){mc_string_copy("mlx_string_new", "")}; }

mlx_string mlx_string_new_data(const char *str)
{
    static const char fn[] = "mlx_string_new_data";
    if (!str) {
        mc_error("[%s] The text pointer is NULL.", fn);
        return (mlx_string){NULL};
    }
    return (mlx_string){mc_string_copy(fn, str)};
}

int mlx_string_set(mlx_string *str, const mlx_string src)
{
    static const char fn[] = "mlx_string_set";
    if (!src.ctx)
        return mc_error("[%s] Expected a non-empty mlx_string (the handle's ctx is NULL).", fn);
    return mc_string_assign(fn, str, src.ctx);
}

const char *mlx_string_data(mlx_string str)
{
    if (!str.ctx)
        mc_error("[mlx_string_data] Expected a non-empty mlx_string (the handle's ctx is NULL).");
    return str.ctx;
}

int mlx_string_free(mlx_string str)
{
    mc_xfree(str.ctx);
    return 0;
}
