/* Owns mlx_string: a handle whose ctx is an owned, NUL-terminated copy of
 * some text. Unlike mlx-c (whose mlx_string_new() is a NULL ctx),
 * mlx_string_new() here already holds "", so mlx_string_data on it is
 * valid; every other behaviour matches. */
#include "api/string_impl.h"

#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

static char *copy(const char *fn, const char *text)
{
    char *c = mc_xstrdup(text);
    if (!c)
        mc_error_oom(fn, strlen(text) + 1);
    return c;
}

int mc_string_assign(const char *fn, mlx_string *str, const char *text)
{
    if (!str)
        return mc_error("[%s] The output string pointer is NULL.", fn);
    /* Copy before freeing: text may be the old buffer. */
    char *c = copy(fn, text);
    if (!c)
        return 1;
    mc_xfree(str->ctx);
    str->ctx = c;
    return 0;
}

mlx_string mlx_string_new(void)
{
    return (mlx_string){copy("mlx_string_new", "")};
}

mlx_string mlx_string_new_data(const char *str)
{
    static const char fn[] = "mlx_string_new_data";
    if (!str) {
        mc_error("[%s] The text pointer is NULL.", fn);
        return (mlx_string){NULL};
    }
    return (mlx_string){copy(fn, str)};
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
