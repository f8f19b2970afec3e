/* A row walker over an n-d index space shared by the gather and select
 * loops: it visits every row (all dimensions but the last) in row-major
 * order while keeping one element offset per operand, so the caller's inner
 * loop runs over the last dimension with a fixed stride per operand. */
#ifndef MC_GRAPH_ND_WALK_H
#define MC_GRAPH_ND_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "array/array.h"

enum { MC_WALK_MAX_OPS = 4 };

typedef struct mc_walk {
    int ndim;                 /* >= 1 */
    int shape[MC_MAX_NDIM];
    int nops;
    int64_t strides[MC_WALK_MAX_OPS][MC_MAX_NDIM]; /* in elements, per operand */
    int64_t off[MC_WALK_MAX_OPS];                  /* offsets of the current row's start */
    int idx[MC_MAX_NDIM];
} mc_walk;

/* Starts a walk over shape (ndim 0 is walked as one row of one element);
 * the caller fills strides[k][0..ndim) for each of nops operands after this
 * (with ndim 0, strides[k][0] is used and may be anything). */
static inline void mc_walk_init(mc_walk *w, int ndim, const int *shape, int nops)
{
    w->ndim = ndim > 0 ? ndim : 1;
    for (int i = 0; i < w->ndim; i++) {
        w->shape[i] = ndim > 0 ? shape[i] : 1;
        w->idx[i] = 0;
    }
    w->nops = nops;
    for (int k = 0; k < nops; k++) {
        w->off[k] = 0;
        w->strides[k][0] = 0;
    }
}

/* The length of a row (the last dimension) and the number of rows. */
static inline int mc_walk_row_len(const mc_walk *w) { return w->shape[w->ndim - 1]; }
static inline size_t mc_walk_rows(const mc_walk *w)
{
    size_t r = 1;
    for (int i = 0; i + 1 < w->ndim; i++)
        r *= (size_t)w->shape[i];
    return r;
}

/* Moves to the next row: an odometer over the outer dimensions. */
static inline void mc_walk_next(mc_walk *w)
{
    for (int d = w->ndim - 2; d >= 0; d--) {
        for (int k = 0; k < w->nops; k++)
            w->off[k] += w->strides[k][d];
        if (++w->idx[d] < w->shape[d])
            return;
        for (int k = 0; k < w->nops; k++)
            w->off[k] -= w->strides[k][d] * w->shape[d];
        w->idx[d] = 0;
    }
}

#endif
