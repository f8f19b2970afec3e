/* MLX's printed form of an array: the text of C++ `operator<<(ostream&,
 * array)` (mlx/utils.cpp print_array), which mlx_array_tostring returns. */
#ifndef MC_API_ARRAY_PRINT_H
#define MC_API_ARRAY_PRINT_H

#include <stdbool.h>

#include "array/array.h"

/* MLX's PrintFormatter settings (mlx/utils.h). The defaults, which a C
 * program using mlx-c sees, are {false, -1}; MLX's Python module sets
 * capitalize_bool, and precision >= 0 is MLX's set_printoptions (v0.32+). */
typedef struct mc_print_options {
    bool capitalize_bool; /* True/False instead of true/false */
    int precision;        /* -1: C++ default (%g, 6 digits); else fixed with this many decimals */
} mc_print_options;

/* Returns a malloc'ed (mc_xmalloc) NUL-terminated string with MLX's printed
 * form of `a`, which must be evaluated (a->data set), or NULL with
 * "[fn] ..." reported (out of memory). The caller frees with mc_xfree. */
char *mc_array_format(const mc_array *a, const char *fn);

/* The same with explicit formatter settings; opts NULL means the defaults. */
char *mc_array_format_opts(const mc_array *a, const mc_print_options *opts, const char *fn);

#endif
