/* Owns ScatterAxis (MLX's primitive of put_along_axis and
 * scatter_add_axis): its shape rule, its evaluation and its derivatives.
 * The output starts as a copy of a (or takes over a's buffer), then each
 * update lands where take_along_axis with the same indices would read, in
 * row-major order of the indices, so with reduce none the last update
 * along the axis wins, as in MLX's CPU loop. A plain loop, element by
 * element, over strided operands. */
#include <string.h>

#include "graph/build.h"
#include "graph/index_read.h"
#include "graph/nd_walk.h"
#include "graph/prims_scatter.h"
#include "runtime/error.h"
#include "simd/half_convert.h"

/* ---- shape rule ---- */

static int scatter_axis_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_scatter_axis_params *p = params;
    const mc_array *a = in[0], *idx = in[1], *upd = in[2];
    if (!mc_dtype_is_integer(idx->dtype))
        return mc_error("[%s] Got indices with invalid dtype %s. Indices must be integral.", fn,
                        mc_dtype_name(idx->dtype));
    if (upd->dtype != a->dtype)
        return mc_error("[%s] The updates have dtype %s, the array %s.", fn, mc_dtype_name(upd->dtype),
                        mc_dtype_name(a->dtype));
    if (p->axis < 0 || p->axis >= a->ndim)
        return mc_error("[%s] Invalid axis %d for array with %d dimensions.", fn, p->axis, a->ndim);
    if (idx->ndim != a->ndim || upd->ndim != a->ndim)
        return mc_error("[%s] Indices of dimension %d and updates of dimension %d do not match array of "
                        "dimension %d.",
                        fn, idx->ndim, upd->ndim, a->ndim);
    for (int d = 0; d < a->ndim; d++) {
        if (upd->shape[d] != idx->shape[d] || (d != p->axis && idx->shape[d] != a->shape[d])) {
            char s1[256], s2[256], s3[256];
            return mc_error("[%s] Indices of shape %s and updates of shape %s do not fit the array of shape %s "
                            "outside axis %d.",
                            fn, mc_shape_str(s1, sizeof s1, idx->ndim, idx->shape),
                            mc_shape_str(s2, sizeof s2, upd->ndim, upd->shape),
                            mc_shape_str(s3, sizeof s3, a->ndim, a->shape), p->axis);
        }
    }
    if (a->shape[p->axis] == 0 && idx->size)
        return mc_error("[%s] Cannot scatter into an empty axis.", fn);
    out->dtype = a->dtype;
    out->ndim = a->ndim;
    memcpy(out->shape, a->shape, sizeof(int) * (size_t)a->ndim);
    return 0;
}

/* ---- evaluation ---- */

/* How an update meets its element: by dtype for a sum, by size for a
 * replacement. Integer sums wrap (added as unsigned, which gives the same
 * bits as a signed add); float16 and bfloat16 sums round after each add,
 * as MLX's half types do; bool sums are logical or. */
typedef enum scatter_kind {
    K_SET1,
    K_SET2,
    K_SET4,
    K_SET8,
    K_OR,
    K_ADD_U8,
    K_ADD_U16,
    K_ADD_U32,
    K_ADD_U64,
    K_ADD_F16,
    K_ADD_BF16,
    K_ADD_F32,
    K_ADD_F64,
    K_ADD_C64,
} scatter_kind;

static scatter_kind kind_of(mlx_dtype d, int reduce)
{
    size_t isz = mc_dtype_size(d);
    if (reduce == MC_SCATTER_NONE)
        return isz == 1 ? K_SET1 : isz == 2 ? K_SET2 : isz == 4 ? K_SET4 : K_SET8;
    switch (d) {
    case MLX_BOOL: return K_OR;
    case MLX_FLOAT16: return K_ADD_F16;
    case MLX_BFLOAT16: return K_ADD_BF16;
    case MLX_FLOAT32: return K_ADD_F32;
    case MLX_FLOAT64: return K_ADD_F64;
    case MLX_COMPLEX64: return K_ADD_C64;
    default: return isz == 1 ? K_ADD_U8 : isz == 2 ? K_ADD_U16 : isz == 4 ? K_ADD_U32 : K_ADD_U64;
    }
}

typedef struct c64 {
    float re, im;
} c64;

/* One row of the walk: the updates at j = 0..len-1 of the row, each into
 * the element its index names. */
#define SCATTER_ROW(T, APPLY)                                                            \
    for (int j = 0; j < len; j++) {                                                      \
        int64_t v = mc_index_place(mc_index_read(ib, w.off[0] + j * si, idt), axis_len); \
        T *d = (T *)ob + w.off[2] + j * so + v * axis_stride;                            \
        T u = ((const T *)ub)[w.off[1] + j * su];                                        \
        APPLY;                                                                           \
    }

static int scatter_axis_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_scatter_axis_params *p = params;
    mc_array *a = in[0], *idx = in[1], *upd = in[2];
    /* an index or update array viewing a's buffer holds a second
     * reference to it, so a is then not donated and is copied first */
    mc_buffer *a_buf = a->buf;
    if (mc_out_alloc(out, in, 1, "scatter_axis"))
        return 1;
    size_t isz = mc_dtype_size(out->dtype);
    if (out->buf != a_buf && a->size)
        mc_unary_strided(mc_kernels()->convert[a->dtype][a->dtype], isz, isz, a->data, a->strides, out->data,
                         out->strides, a->ndim, a->shape);
    if (idx->size == 0)
        return 0;
    int ax = p->axis;
    int64_t axis_len = out->shape[ax], axis_stride = out->strides[ax];
    /* operands: 0 = indices, 1 = updates, 2 = out without the axis (the
     * index supplies it) */
    mc_walk w;
    mc_walk_init(&w, idx->ndim, idx->shape, 3);
    for (int d = 0; d < idx->ndim; d++) {
        w.strides[0][d] = idx->strides[d];
        w.strides[1][d] = upd->strides[d];
        w.strides[2][d] = d == ax ? 0 : out->strides[d];
    }
    int last = w.ndim - 1;
    int64_t si = w.strides[0][last], su = w.strides[1][last], so = w.strides[2][last];
    int len = mc_walk_row_len(&w);
    size_t rows = mc_walk_rows(&w);
    const char *ib = idx->data, *ub = upd->data;
    char *ob = out->data;
    mlx_dtype idt = idx->dtype;
    scatter_kind kind = kind_of(out->dtype, p->reduce);
    for (size_t r = 0; r < rows; r++, mc_walk_next(&w)) {
        switch (kind) {
        case K_SET1: SCATTER_ROW(uint8_t, *d = u) break;
        case K_SET2: SCATTER_ROW(uint16_t, *d = u) break;
        case K_SET4: SCATTER_ROW(uint32_t, *d = u) break;
        case K_SET8: SCATTER_ROW(uint64_t, *d = u) break;
        case K_OR: SCATTER_ROW(uint8_t, *d = (uint8_t)(*d | u)) break;
        case K_ADD_U8: SCATTER_ROW(uint8_t, *d = (uint8_t)(*d + u)) break;
        case K_ADD_U16: SCATTER_ROW(uint16_t, *d = (uint16_t)(*d + u)) break;
        case K_ADD_U32: SCATTER_ROW(uint32_t, *d += u) break;
        case K_ADD_U64: SCATTER_ROW(uint64_t, *d += u) break;
        case K_ADD_F16: SCATTER_ROW(uint16_t, *d = mc_f32_to_f16(mc_f16_to_f32(*d) + mc_f16_to_f32(u))) break;
        case K_ADD_BF16: SCATTER_ROW(uint16_t, *d = mc_f32_to_bf16(mc_bf16_to_f32(*d) + mc_bf16_to_f32(u))) break;
        case K_ADD_F32: SCATTER_ROW(float, *d += u) break;
        case K_ADD_F64: SCATTER_ROW(double, *d += u) break;
        case K_ADD_C64: SCATTER_ROW(c64, d->re += u.re; d->im += u.im) break;
        }
    }
    return 0;
}

/* ---- derivatives (MLX's ScatterAxis::vjp and jvp) ---- */

/* a's cotangent is the cotangent with zeros where updates replaced a's
 * elements (reduce none) or the cotangent itself (sum: every element of
 * a stays in the result); the updates' is the cotangent read back where
 * they went. The indices have no derivative: MLX refuses one. */
static int scatter_axis_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                            const char *fn)
{
    const mc_scatter_axis_params *p = node->params;
    mc_array *idx = node->inputs[1], *upd = node->inputs[2];
    for (int k = 0; k < nargs; k++)
        if (argnums[k] == 1)
            return mc_error("[%s] Cannot calculate VJP with respect to indices.", fn);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g[2] = {NULL, NULL};
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] == 2)
            g[k] = mc_gb_gather_axis(&s, cot, idx, p->axis, 1);
        else if (p->reduce == MC_SCATTER_NONE)
            g[k] = mc_gb_scatter_axis(&s, cot, idx, mc_gb_zeros_like(&s, upd), p->axis, MC_SCATTER_NONE);
        else
            g[k] = cot;
    }
    bool failed = s.failed;
    for (int k = 0; k < nargs && !failed; k++)
        vjps[k] = mc_array_retain(g[k]);
    mc_gb_end(&s);
    return failed ? 1 : 0;
}

/* Linear in a and the updates together: the same scatter of their
 * tangents (zeros for the one without). */
static mc_array *scatter_axis_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs,
                                  const char *fn)
{
    mc_array *t[3] = {NULL, node->inputs[1], NULL};
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] == 1) {
            mc_error("[%s] Cannot calculate JVP with respect to indices.", fn);
            return NULL;
        }
        t[argnums[k]] = tans[k];
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    if (!t[0])
        t[0] = mc_gb_zeros_like(&s, node->inputs[0]);
    if (!t[2])
        t[2] = mc_gb_zeros_like(&s, node->inputs[2]);
    return mc_gb_finish_ref(&s, mc_gb_like(&s, node, t, 3));
}

const mc_prim_info mc_prim_scatter_axis = {
    .name = "ScatterAxis",
    .arity = 3,
    .infer = scatter_axis_infer,
    .eval = scatter_axis_eval,
    .vjp = scatter_axis_vjp,
    .jvp = scatter_axis_jvp,
};
