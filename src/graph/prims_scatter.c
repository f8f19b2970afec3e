/* Owns ScatterAxis (MLX's primitive of put_along_axis and
 * scatter_add_axis) and Scatter (MLX's general scatter with its reductions,
 * behind mlx_scatter*, slice_update_dynamic and Gather's vjp): their shape
 * rules, evaluation and derivatives. The output starts as a copy of a (or
 * takes over a's buffer), then each update lands where the matching gather
 * reads, in row-major order of the indices, so with reduce none the last
 * update wins, as in MLX's CPU loop. A plain loop, element by element,
 * over strided operands. */
#include <string.h>

#include "graph/build.h"
#include "graph/index_read.h"
#include "graph/nd_walk.h"
#include "graph/prims_scatter.h"
#include "graph/vmap_rules.h"
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

/* MLX's ScatterAxis::vmap: every input's batch first (an unbatched one
 * broadcast to the batch, where MLX's op broadcasts a size-1 axis), the
 * axis shifted past it. */
static int scatter_axis_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                             const char *fn)
{
    mc_scatter_axis_params q;
    mc_vmap_params(&q, sizeof q, node);
    q.axis++;
    return mc_vmap_all_front_with(out, out_axis, node, in, axes, &q, sizeof q, fn);
}

const mc_prim_info mc_prim_scatter_axis = {
    .name = "ScatterAxis",
    .arity = 3,
    .infer = scatter_axis_infer,
    .eval = scatter_axis_eval,
    .vjp = scatter_axis_vjp,
    .jvp = scatter_axis_jvp,
    .vmap = scatter_axis_vmap,
};

/* ==== Scatter (MLX's general scatter: mlx_scatter and its reductions) ==== */

static int scatter_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_scatter_params *p = params;
    const mc_array *a = in[0];
    if (n != 2 + p->nidx || p->nidx > a->ndim)
        return mc_error("[%s] Scatter into an array with %d dimensions got %d index arrays.", fn, a->ndim,
                        n - 2);
    const mc_array *i0 = p->nidx ? in[1] : NULL, *upd = in[n - 1];
    for (int j = 0; j < p->nidx; j++) {
        const mc_array *ij = in[1 + j];
        if (!mc_dtype_is_integer(ij->dtype) || ij->dtype != i0->dtype || ij->ndim != i0->ndim ||
            memcmp(ij->shape, i0->shape, sizeof(int) * (size_t)ij->ndim) != 0)
            return mc_error("[%s] Scatter needs index arrays of one integer dtype and one shape.", fn);
        if (p->axes[j] < 0 || p->axes[j] >= a->ndim)
            return mc_error("[%s] Axes don't match array dimensions.", fn);
    }
    int ind = i0 ? i0->ndim : 0;
    char s1[256], s2[256];
    if (upd->dtype != a->dtype)
        return mc_error("[%s] The updates have dtype %s, the array %s.", fn, mc_dtype_name(upd->dtype),
                        mc_dtype_name(a->dtype));
    if (upd->ndim != a->ndim + ind)
        return mc_error("[%s] Updates with %d dimensions does not match the sum of the array (%d) and indices "
                        "(%d) dimensions.",
                        fn, upd->ndim, a->ndim, ind);
    for (int d = 0; d < upd->ndim; d++)
        if (d < ind ? upd->shape[d] != i0->shape[d] : upd->shape[d] > a->shape[d - ind])
            return mc_error("[%s] Updates with shape %s do not fit index shape and array shape %s.", fn,
                            mc_shape_str(s1, sizeof s1, upd->ndim, upd->shape),
                            mc_shape_str(s2, sizeof s2, a->ndim, a->shape));
    out->dtype = a->dtype;
    out->ndim = a->ndim;
    memcpy(out->shape, a->shape, sizeof(int) * (size_t)a->ndim);
    return 0;
}

/* One block: the updates' rows met with out's, element by element. */
#define SC_BLOCK(T, APPLY)                                                      \
    for (size_t r = 0; r < rows; r++, mc_walk_next(&w)) {                       \
        T *yr = (T *)ob + obase + w.off[0];                                     \
        const T *xr = (const T *)ub + ubase + w.off[1];                         \
        for (int e = 0; e < len; e++) {                                         \
            T *y = yr + e * so;                                                 \
            T x = xr[e * su];                                                   \
            APPLY;                                                              \
        }                                                                       \
    }
#define SC_REDUCE(T, SET, ADD, MUL, MAX, MIN)                                   \
    switch (reduce) {                                                           \
    case MC_SCATTER_NONE:                                                       \
    case MC_SCATTER_SLICE_UPDATE: SC_BLOCK(T, SET) break;                       \
    case MC_SCATTER_SUM: SC_BLOCK(T, ADD) break;                                \
    case MC_SCATTER_PROD: SC_BLOCK(T, MUL) break;                               \
    case MC_SCATTER_MAX: SC_BLOCK(T, MAX) break;                                \
    default: SC_BLOCK(T, MIN) break;                                            \
    }
#define SC_PLAIN(T) SC_REDUCE(T, *y = x, *y += x, *y *= x, *y = *y > x ? *y : x, *y = *y < x ? *y : x)
/* unsigned arithmetic: wraps as MLX's signed adds and products do in
 * practice, without C's undefined overflow */
#define SC_WRAP(T, U)                                                                                   \
    SC_REDUCE(T, *y = x, *y = (T)((U)*y + (U)x), *y = (T)((U)*y * (U)x), *y = *y > x ? *y : x,        \
              *y = *y < x ? *y : x)
#define SC_HALF(TO, FROM)                                                                               \
    SC_REDUCE(uint16_t, *y = x, *y = TO(FROM(*y) + FROM(x)), *y = TO(FROM(*y) * FROM(x)),               \
              *y = FROM(*y) > FROM(x) ? *y : x, *y = FROM(*y) < FROM(x) ? *y : x)
/* complex64 compares as MLX's complex64_t: by real part, then imaginary */
#define C_GT(p, q) ((p).re > (q).re || ((p).re == (q).re && (p).im > (q).im))
#define C_LT(p, q) ((p).re < (q).re || ((p).re == (q).re && (p).im < (q).im))

static void scatter_block(char *ob, int64_t obase, const char *ub, int64_t ubase, mc_walk w, mlx_dtype dt,
                          int reduce)
{
    int last = w.ndim - 1;
    int64_t so = w.strides[0][last], su = w.strides[1][last];
    int len = mc_walk_row_len(&w);
    size_t rows = mc_walk_rows(&w);
    switch (dt) {
    case MLX_BOOL:
        SC_REDUCE(uint8_t, *y = x, *y = *y | x, *y = *y & x, *y = *y | x, *y = *y & x)
        break;
    case MLX_UINT8: SC_PLAIN(uint8_t) break;
    case MLX_UINT16: SC_PLAIN(uint16_t) break;
    case MLX_UINT32: SC_PLAIN(uint32_t) break;
    case MLX_UINT64: SC_PLAIN(uint64_t) break;
    case MLX_INT8: SC_WRAP(int8_t, uint8_t) break;
    case MLX_INT16: SC_WRAP(int16_t, uint16_t) break;
    case MLX_INT32: SC_WRAP(int32_t, uint32_t) break;
    case MLX_INT64: SC_WRAP(int64_t, uint64_t) break;
    case MLX_FLOAT16: SC_HALF(mc_f32_to_f16, mc_f16_to_f32) break;
    case MLX_BFLOAT16: SC_HALF(mc_f32_to_bf16, mc_bf16_to_f32) break;
    case MLX_FLOAT32: SC_PLAIN(float) break;
    case MLX_FLOAT64: SC_PLAIN(double) break;
    case MLX_COMPLEX64:
        SC_REDUCE(c64, *y = x, (y->re += x.re, y->im += x.im),
                  (*y = (c64){y->re * x.re - y->im * x.im, y->re * x.im + y->im * x.re}),
                  *y = C_GT(*y, x) ? *y : x, *y = C_LT(*y, x) ? *y : x)
        break;
    default: break;
    }
}

/* a is one element seen everywhere (zeros_like, full): the usual start of
 * a gradient's scatter_add, filled here at memory speed where the strided
 * copy would take an element at a time. */
static bool is_broadcast_scalar(const mc_array *a)
{
    for (int d = 0; d < a->ndim; d++)
        if (a->strides[d] != 0 && a->shape[d] != 1)
            return false;
    return true;
}

static void fill_from_one(char *dst, const char *one, size_t isz, size_t count)
{
    bool zero = true;
    for (size_t b = 0; b < isz; b++)
        zero = zero && one[b] == 0;
    if (zero) {
        memset(dst, 0, isz * count);
        return;
    }
    memcpy(dst, one, isz);
    /* doubling copies: log2(count) memcpys */
    for (size_t done = 1; done < count;) {
        size_t k = done < count - done ? done : count - done;
        memcpy(dst + done * isz, dst, k * isz);
        done += k;
    }
}

static int scatter_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    const mc_scatter_params *p = params;
    mc_array *a = in[0], *upd = in[n - 1];
    mc_array *const *idx = in + 1;
    mc_buffer *a_buf = a->buf;
    if (mc_out_alloc(out, in, 1, "scatter"))
        return 1;
    size_t isz = mc_dtype_size(out->dtype);
    if (out->buf != a_buf && a->size && is_broadcast_scalar(a))
        fill_from_one(out->data, a->data, isz, a->size);
    else if (out->buf != a_buf && a->size)
        mc_unary_strided(mc_kernels()->convert[a->dtype][a->dtype], isz, isz, a->data, a->strides, out->data,
                         out->strides, a->ndim, a->shape);
    if (upd->size == 0)
        return 0;
    int ind = upd->ndim - out->ndim;
    const int *block = upd->shape + ind;
    int64_t bsize = 1;
    for (int d = 0; d < out->ndim; d++)
        bsize *= block[d];
    size_t npos = upd->size / (size_t)bsize;
    int m[MC_MAX_NDIM] = {0};
    mc_walk w0;
    mc_walk_init(&w0, out->ndim, block, 2);
    for (int d = 0; d < out->ndim; d++) {
        w0.strides[0][d] = out->strides[d];
        w0.strides[1][d] = upd->strides[ind + d];
    }
    for (size_t pos = 0; pos < npos; pos++) {
        int64_t obase = 0, ubase = 0;
        for (int d = 0; d < ind; d++)
            ubase += (int64_t)m[d] * upd->strides[d];
        for (int j = 0; j < p->nidx; j++) {
            int64_t at = 0;
            for (int d = 0; d < ind; d++)
                at += (int64_t)m[d] * idx[j]->strides[d];
            int ax = p->axes[j];
            int64_t v = mc_index_read(idx[j]->data, at, idx[j]->dtype);
            obase += mc_block_place(v, out->shape[ax], block[ax]) * out->strides[ax];
        }
        scatter_block(out->data, obase, upd->data, ubase, w0, out->dtype, p->reduce);
        for (int d = ind - 1; d >= 0; d--) {
            if (++m[d] < upd->shape[d])
                break;
            m[d] = 0;
        }
    }
    return 0;
}

/* ---- derivatives (MLX's Scatter::vjp; MLX has no Scatter jvp) ---- */

static int scatter_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                       const char *fn)
{
    const mc_scatter_params *p = node->params;
    int last = 1 + p->nidx;
    mc_array *a = node->inputs[0], *upd = node->inputs[last];
    mc_array *const *idx = node->inputs + 1;
    if (p->reduce == MC_SCATTER_PROD)
        return mc_error("[%s] VJP not implemented for scatter_prod.", fn);
    for (int k = 0; k < nargs; k++)
        if (argnums[k] != 0 && argnums[k] != last)
            return mc_error("[%s] Cannot calculate VJP with respect to indices.", fn);
    /* the updates' blocks are read back whole: on the indexed axes MLX
     * reads 1 and elsewhere all of a, which is the same for the updates
     * its scatter accepts with a gradient, and also right for smaller
     * blocks (slice_update_dynamic's) */
    const int *sizes = upd->shape + (upd->ndim - a->ndim);
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g[2] = {NULL, NULL};
    bool extreme = p->reduce == MC_SCATTER_MAX || p->reduce == MC_SCATTER_MIN;
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] == 0) {
            if (p->reduce == MC_SCATTER_NONE || p->reduce == MC_SCATTER_SLICE_UPDATE)
                g[k] = mc_gb_scatter(&s, cot, idx, p->nidx, p->axes, mc_gb_zeros_like(&s, upd), p->reduce);
            else if (p->reduce == MC_SCATTER_SUM)
                g[k] = cot;
            else
                g[k] = mc_gb_where(&s, mc_gb_op(&s, MC_B_EQUAL, node, a), cot, mc_gb_zeros_like(&s, cot));
        } else {
            mc_array *gc = mc_gb_gather(&s, cot, idx, p->nidx, p->axes, sizes);
            if (extreme && gc) {
                mc_array *gr = mc_gb_gather(&s, node, idx, p->nidx, p->axes, sizes);
                mc_array *eq = mc_gb_astype(&s, mc_gb_op(&s, MC_B_EQUAL, gr, upd), cot->dtype);
                gc = mc_gb_op(&s, MC_B_MULTIPLY, gc, eq);
            }
            g[k] = gc;
        }
    }
    bool failed = s.failed;
    for (int k = 0; k < nargs && !failed; k++)
        vjps[k] = mc_array_retain(g[k]);
    mc_gb_end(&s);
    return failed ? 1 : 0;
}

/* MLX's Scatter has no jvp; its DynamicSliceUpdate has one, linear in the
 * source and the update together: the same update of their tangents. */
static mc_array *scatter_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_scatter_params *p = node->params;
    if (p->reduce != MC_SCATTER_SLICE_UPDATE) {
        mc_error("[%s] JVP not yet implemented for scatter (as in MLX).", fn);
        return NULL;
    }
    int last = 1 + p->nidx;
    mc_array *t[2] = {NULL, NULL};
    for (int k = 0; k < nargs; k++) {
        if (argnums[k] != 0 && argnums[k] != last) {
            mc_error("[%s] Cannot calculate JVP with respect to start indices.", fn);
            return NULL;
        }
        t[argnums[k] == 0 ? 0 : 1] = tans[k];
    }
    mc_gb s;
    mc_gb_begin(&s, fn);
    if (!t[0])
        t[0] = mc_gb_zeros_like(&s, node->inputs[0]);
    if (!t[1])
        t[1] = mc_gb_zeros_like(&s, node->inputs[last]);
    return mc_gb_finish_ref(&s, mc_gb_scatter(&s, t[0], node->inputs + 1, p->nidx, p->axes, t[1], p->reduce));
}

/* ---- vmap (MLX's Scatter::vmap) ---- */

/* Every input gets its batch first (an unbatched one broadcast to the
 * batch); one more index array, the batch element's own number, sends
 * each element's updates into its own slice of a, and the updates get a
 * block of 1 on that new axis. The batch keeps each element's updates in
 * their order, so repeated indices resolve as they did element by
 * element. */
static int scatter_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn)
{
    mc_scatter_params q;
    mc_vmap_params(&q, sizeof q, node);
    int n = node->n_inputs, last = n - 1, b = mc_vmap_size(in, axes, n);
    const mc_array *upd0 = node->inputs[last];
    int ind = q.nidx ? node->inputs[1]->ndim : 0, ishape[MC_MAX_NDIM], ushape[MC_MAX_NDIM];
    if (mc_vmap_check_ndim(upd0->ndim + 1, fn))
        return 1;
    mlx_dtype dt = mc_vmap_index_dtype(q.nidx ? node->inputs[1]->dtype : MLX_INT32);
    ishape[0] = ushape[0] = b;
    memcpy(ishape + 1, upd0->shape, sizeof(int) * (size_t)ind);
    memcpy(ushape + 1, upd0->shape, sizeof(int) * (size_t)ind);
    ushape[1 + ind] = 1;
    memcpy(ushape + 2 + ind, upd0->shape + ind, sizeof(int) * (size_t)(upd0->ndim - ind));
    mc_array *args[3 + MC_MAX_NDIM];
    mc_gb s;
    mc_gb_begin(&s, fn);
    args[0] = mc_gb_vmap_front(&s, in[0], axes[0], b);
    for (int j = 1; j < last; j++)
        args[j] = mc_gb_astype(&s, mc_gb_vmap_front(&s, in[j], axes[j], b), dt);
    args[last] = mc_gb_vmap_batch_index(&s, ind + 1, ishape, dt);
    args[n] = mc_gb_reshape(&s, mc_gb_vmap_front(&s, in[last], axes[last], b), upd0->ndim + 2, ushape);
    for (int j = 0; j < q.nidx; j++)
        q.axes[j]++;
    q.axes[q.nidx++] = 0;
    mc_array *r = mc_gb_hold(&s, s.failed ? NULL : mc_node_new(fn, MC_PRIM_SCATTER, args, n + 1, &q, sizeof q));
    *out = mc_gb_finish_ref(&s, r);
    *out_axis = 0;
    return *out ? 0 : 1;
}

const mc_prim_info mc_prim_scatter = {
    .name = "Scatter",
    .arity = MC_ARITY_ANY,
    .infer = scatter_infer,
    .eval = scatter_eval,
    .vjp = scatter_vjp,
    .jvp = scatter_jvp,
    .vmap = scatter_vmap,
};
