/* Owns the text of mlx_string handles (string.h): copying it in and
 * replacing it. src/api/string.c holds the handle functions. */
#include "handles/string.h"

#include <string.h>

#include "runtime/alloc.h"
#include "runtime/error.h"

char *mc_string_copy(const char *fn, const char *text)
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
    char *c = mc_string_copy(fn, text);
    if (!c)
        return 1;
    mc_xfree(str->ctx);
    str->ctx = c;
    return 0;
}
