/* How the reduction, softmax and scan primitives see their input: the
 * dims that matter (size-1 dims dropped), ordered outer to inner in
 * memory over dense data, each reduced or kept, adjacent dims of one kind
 * merged. Dense inputs in any order are used in place when the kept dims
 * keep their order (so the output is row-major); anything else (gaps,
 * broadcasts, negative strides, a permuted kept order) is first copied
 * with the kept dims first and the reduced dims last. */
#ifndef MC_GRAPH_REDUCE_VIEW_H
#define MC_GRAPH_REDUCE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "array/array.h"

typedef struct mc_red_view {
    const char *data;   /* the first element (lowest address) */
    mc_buffer *tmp;     /* the copy, owned, or NULL */
    size_t itemsize;
    /* before merging: the input's dims of size > 1 in view order */
    int nperm;
    int perm[MC_MAX_NDIM];
    /* after merging */
    int ndim;
    size_t size[MC_MAX_NDIM];
    bool red[MC_MAX_NDIM];
} mc_red_view;

/* Builds the view of x for a reduction over the dims flagged in red (one
 * flag per dim of x). With `trailing`, the reduced dims are made the
 * innermost (copying if they are not), as row kernels need. x must be
 * evaluated and non-empty. Returns 0, or reports an allocation failure
 * naming fn. */
int mc_red_view_make(mc_red_view *v, const mc_array *x, const bool *red, bool trailing, const char *fn);
void mc_red_view_free(mc_red_view *v);

/* The shape of a reduction as blocks: `outer` blocks of n rows of `cols`
 * elements, reducing over the n rows. cols == 1 is the row case (outer
 * contiguous rows of n reduced elements); otherwise the reduced axis is
 * strided and whole rows of cols kept elements accumulate. A view with no
 * reduced dim is rows of n == 1. */
typedef struct mc_red_plan {
    size_t outer, n, cols;
} mc_red_plan;
/* Fills plan and returns true if the view has at most one reduced group;
 * false for a view needing a trailing copy (two or more groups). */
bool mc_red_view_plan(const mc_red_view *v, mc_red_plan *plan);

/* A row-major copy of x's data (x evaluated): into a new buffer returned
 * through *buf (NULL for an empty x). Returns 0 or reports naming fn. */
int mc_red_copy_rowmajor(const mc_array *x, mc_buffer **buf, const char *fn);

/* Var / Std of the Reduce primitive (prims_reduce_fused.c): out (not yet
 * allocated) gets the variance of x over the dims flagged in red. */
int mc_reduce_var_eval(mc_array *out, const mc_array *x, const bool *red, int ddof, bool take_sqrt,
                       const char *fn);

/* Work below this many elements stays on the calling thread. */
enum { MC_RED_GRAIN = 1 << 16 };

#endif
