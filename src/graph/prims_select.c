/* Owns the Select primitive (where): out[i] = cond[i] ? x[i] : y[i] over
 * the broadcast of the three inputs' shapes. The loop only moves elements,
 * so it is written once per element size, not per dtype. */
#include <string.h>

#include "graph/build.h"
#include "graph/nd_walk.h"
#include "graph/elementwise.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static int select_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)params;
    const mc_array *c = in[0], *x = in[1], *y = in[2];
    if (c->dtype != MLX_BOOL)
        return mc_error("[%s] The condition must be bool, got %s.", fn, mc_dtype_name(c->dtype));
    if (x->dtype != y->dtype)
        return mc_error("[%s] Both branches must have one dtype, got %s and %s.", fn, mc_dtype_name(x->dtype),
                        mc_dtype_name(y->dtype));
    int nd;
    int shape[MC_MAX_NDIM];
    if (mc_broadcast_shapes(c->ndim, c->shape, x->ndim, x->shape, &nd, shape, fn) ||
        mc_broadcast_shapes(nd, shape, y->ndim, y->shape, &out->ndim, out->shape, fn))
        return 1;
    out->dtype = x->dtype;
    return 0;
}

#define SELECT_ROW(T)                                                                                   \
    for (int j = 0; j < len; j++)                                                                       \
        ((T *)ob)[w.off[3] + j] = cb[w.off[0] + j * sc] ? ((const T *)xb)[w.off[1] + j * sx]            \
                                                        : ((const T *)yb)[w.off[2] + j * sy];

static int select_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    mc_array *c = in[0], *x = in[1], *y = in[2];
    mc_walk w;
    mc_walk_init(&w, out->ndim, out->shape, 4);
    int64_t st[3][MC_MAX_NDIM];
    mc_broadcast_strides(c, out->ndim, out->shape, st[0]);
    mc_broadcast_strides(x, out->ndim, out->shape, st[1]);
    mc_broadcast_strides(y, out->ndim, out->shape, st[2]);
    /* keep the data pointers: a donated input's buffer moves to out. Each
     * element is read before the same position is written, so writing
     * over a same-layout input is safe. */
    const unsigned char *cb = c->data;
    const char *xb = x->data, *yb = y->data;
    mc_array *cands[3] = {x, y, c};
    if (mc_out_alloc(out, cands, 3, "where"))
        return 1;
    if (out->size == 0)
        return 0;
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < out->ndim; d++)
            w.strides[k][d] = st[k][d];
    for (int d = 0; d < out->ndim; d++)
        w.strides[3][d] = out->strides[d];
    int last = w.ndim - 1;
    int64_t sc = w.strides[0][last], sx = w.strides[1][last], sy = w.strides[2][last];
    int len = mc_walk_row_len(&w);
    size_t rows = mc_walk_rows(&w);
    char *ob = out->data;
    size_t isz = mc_dtype_size(out->dtype);
    for (size_t r = 0; r < rows; r++, mc_walk_next(&w)) {
        switch (isz) {
        case 1: SELECT_ROW(uint8_t) break;
        case 2: SELECT_ROW(uint16_t) break;
        case 4: SELECT_ROW(uint32_t) break;
        default: SELECT_ROW(uint64_t) break;
        }
    }
    return 0;
}

/* ---- derivatives (MLX's Select rules): the condition gets zeros, each
 * branch the cotangent where it was chosen, summed back over broadcast
 * dims ---- */

static int select_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    mc_array *cond = node->inputs[0];
    for (int k = 0; k < nargs; k++) {
        int i = argnums[k];
        mc_array *in = node->inputs[i];
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g;
        if (i == 0) {
            g = mc_gb_zeros_like(&s, in);
        } else {
            mc_array *zero = mc_gb_scalar(&s, 0, cot->dtype);
            g = i == 1 ? mc_gb_where(&s, cond, cot, zero) : mc_gb_where(&s, cond, zero, cot);
            g = mc_gb_sum_to_shape(&s, mc_gb_broadcast_like(&s, g, node), in->ndim, in->shape);
        }
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *select_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *branch[2] = {NULL, NULL};
    for (int k = 0; k < nargs; k++)
        if (argnums[k] > 0)
            branch[argnums[k] - 1] = tans[k];
    for (int b = 0; b < 2; b++)
        if (!branch[b])
            branch[b] = mc_gb_scalar(&s, 0, node->dtype);
    mc_array *r = mc_gb_where(&s, node->inputs[0], branch[0], branch[1]);
    return mc_gb_finish_ref(&s, mc_gb_broadcast_like(&s, r, node));
}

const mc_prim_info mc_prim_select = {
    .name = "Select",
    .arity = 3,
    .infer = select_infer,
    .eval = select_eval,
    .vjp = select_vjp,
    .jvp = select_jvp,
    .vmap = mc_vmap_elementwise,
};
