/* The text behind an mlx_string handle: its ctx is a malloc'ed,
 * NUL-terminated copy owned by the handle. */
#ifndef MC_HANDLES_STRING_H
#define MC_HANDLES_STRING_H

#include "mlx/c/string.h"

/* A malloc'ed copy of text (not NULL) for a handle to own, or NULL with an
 * out-of-memory error reported against fn. */
char *mc_string_copy(const char *fn, const char *text);

/* Makes *str hold a copy of text (its old text is freed; an empty handle
 * gets a buffer). Returns 0, or 1 with "[fn] ..." reported; *str is
 * unchanged on failure. text may be *str's own text. */
int mc_string_assign(const char *fn, mlx_string *str, const char *text);

#endif
