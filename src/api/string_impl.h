/* Internal access to mlx_string, whose ctx is a malloc'ed NUL-terminated
 * buffer owned by the handle. */
#ifndef MC_API_STRING_IMPL_H
#define MC_API_STRING_IMPL_H

#include "mlx/c/string.h"

/* Makes *str hold a copy of text (its old text is freed; an empty handle
 * gets a buffer). Returns 0, or 1 with "[fn] ..." reported; *str is
 * unchanged on failure. text may be *str's own text. */
int mc_string_assign(const char *fn, mlx_string *str, const char *text);

#endif
