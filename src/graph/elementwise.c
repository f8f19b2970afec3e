/* Owns running elementwise kernels over arrays: picks the input class
 * (contiguous, scalar-vector, vector-scalar, strided), the output buffer
 * (donated when possible) and splits large contiguous work over the pool. */
#include <string.h>

#include "graph/elementwise.h"
#include "runtime/error.h"
#include "runtime/pool.h"

/* Contiguous loops below this many elements stay on the calling thread:
 * handing work to another core costs a few microseconds, about what one
 * core needs for this many additions. */
enum { MC_PARALLEL_GRAIN = 1 << 16 };

typedef struct unary_job {
    mc_unary_kernel k;
    const char *x;
    char *y;
    size_t xs, ys; /* item sizes */
} unary_job;

static void unary_range(void *ctx, size_t begin, size_t end)
{
    unary_job *j = ctx;
    j->k(j->x + begin * j->xs, j->y + begin * j->ys, end - begin);
}

typedef struct binary_job {
    mc_binary_kernel k;
    const char *a, *b;
    char *y;
    size_t as, bs, ys; /* item sizes, 0 for a scalar operand */
} binary_job;

static void binary_range(void *ctx, size_t begin, size_t end)
{
    binary_job *j = ctx;
    j->k(j->a + begin * j->as, j->b + begin * j->bs, j->y + begin * j->ys, end - begin);
}

void mc_broadcast_strides(const mc_array *in, int ndim, const int *shape, int64_t *strides)
{
    int off = ndim - in->ndim;
    for (int i = 0; i < ndim; i++) {
        int k = i - off;
        strides[i] = (k < 0 || in->shape[k] != shape[i] || in->shape[k] == 1) ? 0 : in->strides[k];
    }
}

int mc_broadcast_shapes(int an, const int *as, int bn, const int *bs, int *out_ndim, int *out_shape,
                        const char *fn)
{
    int n = an > bn ? an : bn;
    for (int i = 0; i < n; i++) {
        int a = i - (n - an) >= 0 ? as[i - (n - an)] : 1;
        int b = i - (n - bn) >= 0 ? bs[i - (n - bn)] : 1;
        if (a != b && a != 1 && b != 1) {
            char s1[256], s2[256];
            return mc_error("[%s] Shapes %s and %s cannot be broadcast.", fn,
                            mc_shape_str(s1, sizeof s1, an, as), mc_shape_str(s2, sizeof s2, bn, bs));
        }
        out_shape[i] = a == 1 ? b : a;
    }
    *out_ndim = n;
    return 0;
}

/* The output may reuse an input's buffer only when the kernel reads each
 * element before writing the same position, which holds for same-size,
 * same-layout (row-contiguous) operands. */
static bool same_item(const mc_array *in, const mc_array *out)
{
    return mc_dtype_size(in->dtype) == mc_dtype_size(out->dtype);
}

int mc_run_unary(mc_array *out, mc_array *in, mc_unary_kernel k, const char *fn)
{
    /* read before a donation moves in's buffer to out (same memory) */
    const void *x = in->data;
    const int64_t *xs = in->strides;
    bool rows = (in->flags & MC_FLAG_ROW_CONTIG) != 0;
    mc_array *cands[1] = {in};
    if (mc_out_alloc(out, cands, same_item(in, out) ? 1 : 0, fn))
        return 1;
    if (out->size == 0)
        return 0;
    if (rows) {
        unary_job j = {k, x, out->data, mc_dtype_size(in->dtype), mc_dtype_size(out->dtype)};
        mc_parallel_for(out->size, MC_PARALLEL_GRAIN, unary_range, &j);
        return 0;
    }
    mc_unary_strided(k, mc_dtype_size(in->dtype), mc_dtype_size(out->dtype), x, xs,
                     out->data, out->strides, out->ndim, out->shape);
    return 0;
}

int mc_run_binary(mc_array *out, mc_array *a, mc_array *b, const mc_binary_kernel k[MC_BINARY_CLASSES],
                  const char *fn)
{
    bool a_rows = (a->flags & MC_FLAG_ROW_CONTIG) && a->size == out->size;
    bool b_rows = (b->flags & MC_FLAG_ROW_CONTIG) && b->size == out->size;
    /* remember the input pointers before a donation moves a buffer */
    const void *ad = a->data, *bd = b->data;
    mc_array *cands[2] = {a_rows && same_item(a, out) ? a : NULL, b_rows && same_item(b, out) ? b : NULL};
    if (mc_out_alloc(out, cands, 2, fn))
        return 1;
    if (out->size == 0)
        return 0;
    size_t is = mc_dtype_size(a->dtype), os = mc_dtype_size(out->dtype);
    binary_job j = {NULL, ad, bd, out->data, is, is, os};
    if (a_rows && b_rows) {
        j.k = k[MC_VV];
    } else if (a->size == 1 && b_rows) {
        j.k = k[MC_SV];
        j.as = 0;
    } else if (a_rows && b->size == 1) {
        j.k = k[MC_VS];
        j.bs = 0;
    } else if (a->size == 1 && b->size == 1) {
        j.k = k[MC_VV];
        j.as = j.bs = 0;
    }
    if (j.k) {
        mc_parallel_for(out->size, MC_PARALLEL_GRAIN, binary_range, &j);
        return 0;
    }
    int64_t as[MC_MAX_NDIM], bs[MC_MAX_NDIM];
    mc_broadcast_strides(a, out->ndim, out->shape, as);
    mc_broadcast_strides(b, out->ndim, out->shape, bs);
    mc_binary_strided(k, is, os, ad, as, bd, bs, out->data, out->strides, out->ndim, out->shape);
    return 0;
}
