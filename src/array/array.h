/* The array descriptor: refcounted shape, strides, dtype, and either data
 * (a buffer view) or a lazy node (a primitive with inputs and parameters).
 * An mlx_array handle's ctx is an mc_array* holding one reference. */
#ifndef MC_ARRAY_ARRAY_H
#define MC_ARRAY_ARRAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/buffer.h"
#include "array/dtype.h"
#include "mlx/c/array.h"

/* Arrays have at most this many dimensions (a fixed bound keeps shape
 * inference on the stack); more is reported as an error. */
enum { MC_MAX_NDIM = 64 };

/* Layout flags of evaluated data. */
enum {
    MC_FLAG_CONTIG = 1,     /* data_size == size: no gaps, no overlaps (any order) */
    MC_FLAG_ROW_CONTIG = 2, /* row-major dense */
    MC_FLAG_COL_CONTIG = 4, /* column-major dense */
};

/* The primitive id of an array that has data (no node). */
enum { MC_PRIM_NONE = 0 };

/* Shape and dtype of an array to be: what a primitive's infer rule yields. */
typedef struct mc_meta {
    mlx_dtype dtype;
    int ndim;
    int shape[MC_MAX_NDIM];
} mc_meta;

typedef struct mc_array mc_array;
struct mc_array {
    atomic_long refs;
    mlx_dtype dtype;
    int ndim;
    int *shape;       /* ndim entries, inside this allocation */
    int64_t *strides; /* ndim entries, in elements; row-major while lazy */
    size_t size;      /* product of shape */

    /* data: set once evaluated */
    mc_buffer *buf;
    void *data;       /* first element, inside buf */
    size_t data_size; /* elements of buf this view spans (MLX's data_size) */
    unsigned flags;

    /* lazy node: prim != MC_PRIM_NONE until evaluated */
    int prim;
    int n_inputs;
    mc_array **inputs; /* owned references */
    void *params;      /* owned, params_size bytes, compared with memcmp */
    size_t params_size;
    bool params_apart; /* params has an allocation of its own (else it is in this one) */

    /* Made under a transform (vjp, jvp) from a primal: while its thread is
     * tracing, evaluating it keeps its node beside its data, so the
     * transform still sees the graph (MLX's tracer arrays). */
    bool tracer;

    mc_array *next_free; /* link for iterative release */
    size_t block;        /* bytes of this allocation, for mc_obj_free */
};

/* Reads the descriptor of a handle; NULL for an empty handle. */
static inline mc_array *mc_arr(mlx_array a) { return (mc_array *)a.ctx; }
static inline mlx_array mc_handle(mc_array *a) { return (mlx_array){a}; }

/* The descriptor of a handle, or NULL with "[fn] ..." reported if empty. */
mc_array *mc_arr_checked(mlx_array a, const char *fn);

static inline mc_array *mc_array_retain(mc_array *a)
{
    atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
    return a;
}
/* Drops one reference. At zero, frees the array and, iteratively (a long
 * chain must not recurse), whatever it held alone. NULL is ignored. */
void mc_array_release(mc_array *a);

static inline long mc_array_refs(const mc_array *a)
{
    return atomic_load_explicit(&a->refs, memory_order_acquire);
}

/* A new descriptor (one reference) of the given shape, with row-major
 * strides, no data and no node. Checks ndim, negative dims and size
 * overflow; reports "[fn] ..." and returns NULL on failure. */
mc_array *mc_array_alloc(const char *fn, mlx_dtype dtype, int ndim, const int *shape);
/* As mc_array_alloc, with `extra` more bytes in the same allocation, aligned
 * for any type, at *extra_at: where a node keeps its inputs and parameters,
 * so that a node is one allocation. They live as long as the descriptor. */
mc_array *mc_array_alloc_ex(const char *fn, mlx_dtype dtype, int ndim, const int *shape, size_t extra,
                            void **extra_at);

/* Gives `a` a fresh row-major buffer of its size; returns 0 or reports. */
int mc_array_alloc_data(mc_array *a, const char *fn);
/* Makes `a` a view of `src`'s buffer (retained), starting at `data` with
 * the given strides; computes data_size and flags. */
void mc_array_set_view(mc_array *a, mc_array *src, void *data, const int64_t *strides);
/* Takes `buf` (one reference passed in) as a's data, row-major. */
void mc_array_set_buffer(mc_array *a, mc_buffer *buf, void *data);
/* Recomputes data_size and flags from shape and strides. */
void mc_array_update_flags(mc_array *a);

/* New arrays with data. */
mc_array *mc_array_from_data(const char *fn, const void *src, int ndim, const int *shape, mlx_dtype dtype);
mc_array *mc_array_scalar(const char *fn, mlx_dtype dtype, const void *value);

/* True once the array has data (a tracer evaluated under a transform has
 * data and still its node). */
static inline bool mc_array_evaluated(const mc_array *a) { return a->buf != NULL; }

/* True if out may take in's buffer: nothing else refers to in or its
 * buffer, it is contiguous and its element size matches. */
bool mc_array_donatable(const mc_array *in, const mc_array *out);
/* Moves in's buffer to out (in keeps a view of nothing: it must be dying). */
void mc_array_donate(mc_array *out, mc_array *in);

/* True if a has exactly this shape. */
static inline bool mc_array_has_shape(const mc_array *a, int ndim, const int *shape)
{
    if (a->ndim != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (a->shape[i] != shape[i])
            return false;
    return true;
}

/* Row-major strides of a shape, in elements. */
void mc_row_strides(int ndim, const int *shape, int64_t *strides);
/* Product of the shape with overflow check; false on overflow. */
bool mc_shape_size(int ndim, const int *shape, size_t *size);
/* "(2,3)" style text of a shape, in buf of n bytes; returns buf. */
char *mc_shape_str(char *buf, size_t n, int ndim, const int *shape);

#endif
