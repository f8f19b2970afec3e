/* Owns the convolution ops: conv1d/2d/3d, conv_general and
 * conv_transpose1d/2d/3d. Each is MLX's conv_general in the end (one
 * Convolution node, src/graph/prims_conv.c): the fixed-rank ops fill its
 * vectors, and a transposed convolution is, as in MLX, a stride-1
 * convolution of the input dilated by the stride with the flipped kernel.
 * The argument checks, their order and their messages are MLX's
 * (mlx/ops.cpp, run_conv_checks and conv_general). */
#include <stddef.h>

#include "graph/prims_conv.h"
#include "ops/op_util.h"
#include "runtime/error.h"

/* The vectors of conv_general, in MLX's argument order. */
enum { V_STRIDE, V_PAD_LO, V_PAD_HI, V_KDIL, V_IDIL, V_COUNT };
static const int v_default[V_COUNT] = {1, 0, 0, 1, 1};

typedef struct conv_vecs {
    const int *v[V_COUNT];
    size_t n[V_COUNT];
} conv_vecs;

static int check_ndims(const mc_array *in, const mc_array *wt, int nsp)
{
    if (in->ndim != nsp + 2)
        return mc_error("[conv] Invalid input array with %d dimensions for %dD convolution. Expected an array "
                        "with %d dimensions following the format [N, ..., C_in].",
                        in->ndim, nsp, nsp + 2);
    if (wt->ndim != nsp + 2)
        return mc_error("[conv] Invalid weight array with %d dimensions for %dD convolution. Expected an array "
                        "with %d dimensions following the format [C_out, ..., C_in].",
                        wt->ndim, nsp, nsp + 2);
    return 0;
}

/* MLX's run_conv_checks. */
static int run_conv_checks(const mc_array *in, const mc_array *wt, int nsp, int groups)
{
    char a[256], b[256];
    if (!mc_dtype_is_float(in->dtype))
        return mc_error("[conv] Invalid input array with type %s. Convolution currently only supports floating "
                        "point types",
                        mc_dtype_name(in->dtype));
    if (check_ndims(in, wt, nsp))
        return 1;
    /* MLX divides by groups unchecked */
    if (groups <= 0)
        return mc_error("[conv] The number of groups must be positive. Got %d groups.", groups);
    int C = in->shape[nsp + 1];
    if (C % groups)
        return mc_error("[conv] The input channels must be divisible by the number of groups. Got input with "
                        "shape %s and %d groups.",
                        mc_shape_str(a, sizeof a, in->ndim, in->shape), groups);
    if (groups > 1 && wt->shape[0] % groups)
        return mc_error("[conv] If groups > 1, the output channels must be divisible by the number of groups. "
                        "Got %d output channels and %d groups.",
                        wt->shape[0], groups);
    if (C != groups * wt->shape[nsp + 1]) {
        if (groups == 1)
            return mc_error("[conv] Expect the input channels in the input and weight array to match but got "
                            "shapes - input: %s and weight: %s",
                            mc_shape_str(a, sizeof a, in->ndim, in->shape),
                            mc_shape_str(b, sizeof b, wt->ndim, wt->shape));
        return mc_error("Given groups=%d and weights of shape %s, expected to have %d input channels but got %d "
                        "input channels instead.",
                        groups, mc_shape_str(b, sizeof b, wt->ndim, wt->shape), groups * wt->shape[nsp + 1], C);
    }
    return 0;
}

/* Expands the vectors to one entry per spatial dim (a vector of 0 or 1
 * entries applies to every dim, as in MLX) into p; reports MLX's message
 * for a vector of another length. */
static int fill_params(mc_conv_params *p, const conv_vecs *v, int nsp, const char *fn)
{
    static const char *const what[V_COUNT] = {"strides", "padding", "padding", "kernel dilation",
                                              "input dilation"};
    int *dst[V_COUNT] = {p->stride, p->pad_lo, p->pad_hi, p->kdil, p->idil};
    for (int k = 0; k < V_COUNT; k++) {
        if (v->n[k] > 0 && !v->v[k])
            return mc_error("[%s] The %s array is NULL but its length is %zu.", fn, what[k], v->n[k]);
    }
    for (int k = 0; k < V_COUNT; k++) {
        if (v->n[k] > 1 && v->n[k] != (size_t)nsp) {
            char a[256], b[256];
            if (k == V_PAD_LO || k == V_PAD_HI) {
                int na = v->n[V_PAD_LO] > 1 ? (int)v->n[V_PAD_LO] : 1,
                    nb = v->n[V_PAD_HI] > 1 ? (int)v->n[V_PAD_HI] : 1;
                int lo1 = v->n[V_PAD_LO] ? v->v[V_PAD_LO][0] : 0, hi1 = v->n[V_PAD_HI] ? v->v[V_PAD_HI][0] : 0;
                /* MLX prints the vectors as expanded so far: a short one already has nsp entries */
                int lo[MC_CONV_MAX_SPATIAL] = {lo1, lo1, lo1}, hi[MC_CONV_MAX_SPATIAL] = {hi1, hi1, hi1};
                const int *lp = v->n[V_PAD_LO] > 1 ? v->v[V_PAD_LO] : lo;
                const int *hp = v->n[V_PAD_HI] > 1 ? v->v[V_PAD_HI] : hi;
                if (na == 1)
                    na = nsp;
                if (nb == 1)
                    nb = nsp;
                return mc_error("[conv] Invalid padding %s | %s for %dD convolution.",
                                mc_shape_str(a, sizeof a, na, lp), mc_shape_str(b, sizeof b, nb, hp), nsp);
            }
            return mc_error("[conv] Invalid %s %s for %dD convolution.", what[k],
                            mc_shape_str(a, sizeof a, (int)v->n[k], v->v[k]), nsp);
        }
    }
    for (int k = 0; k < V_COUNT; k++)
        for (int i = 0; i < nsp; i++)
            dst[k][i] = v->n[k] == 0 ? v_default[k] : v->n[k] == 1 ? v->v[k][0] : v->v[k][i];
    p->nsp = nsp;
    return 0;
}

/* MLX's conv_general on descriptors: a new reference, or NULL reported. */
static mc_array *conv_general(mc_array *in, mc_array *wt, const conv_vecs *v, int groups, bool flip,
                              const char *fn)
{
    if (groups != 1 && in->ndim != 3 && in->ndim != 4) {
        mc_error("[conv] Can only handle groups != 1 in 1D or 2D convolutions.");
        return NULL;
    }
    int nsp = in->ndim - 2;
    if (nsp < 1 || nsp > 3) {
        mc_error("[conv] Only works for inputs with 1-3 spatial dimensions. The inputs must be in the format "
                 "[N, ..., C_in]");
        return NULL;
    }
    if (run_conv_checks(in, wt, nsp, groups))
        return NULL;
    mc_conv_params p = {.groups = groups, .flip = flip};
    if (fill_params(&p, v, nsp, fn))
        return NULL;
    mlx_dtype t = mc_promote(in->dtype, wt->dtype);
    mc_array *x = mc_node_astype(in, t, fn), *w = x ? mc_node_astype(wt, t, fn) : NULL, *out = NULL;
    if (w)
        out = mc_conv_node(x, w, &p, fn);
    mc_array_release(x);
    mc_array_release(w);
    return out;
}

/* Reads the op's two handles. */
static int conv_args(mlx_array *res, mlx_array input, mlx_array weight, mc_array **x, mc_array **w, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    *x = mc_op_arg(input, fn, "input");
    *w = *x ? mc_op_arg(weight, fn, "weight") : NULL;
    return *w ? 0 : 1;
}

/* conv1d/2d/3d: stride, padding (both sides) and kernel dilation per dim. */
static int conv_nd(mlx_array *res, mlx_array input, mlx_array weight, int nsp, const int *stride,
                   const int *padding, const int *dilation, int groups, const char *fn)
{
    mc_array *x, *w;
    if (conv_args(res, input, weight, &x, &w, fn))
        return 1;
    static const int ones[MC_CONV_MAX_SPATIAL] = {1, 1, 1};
    size_t n = (size_t)nsp;
    conv_vecs v = {{stride, padding, padding, dilation, ones}, {n, n, n, n, n}};
    return mc_op_store(res, conv_general(x, w, &v, groups, false, fn), fn);
}

int mlx_conv1d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride, int padding,
               int dilation, int groups, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return conv_nd(res, input, weight, 1, &stride, &padding, &dilation, groups, "conv1d");
}

int mlx_conv2d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1,
               int padding_0, int padding_1, int dilation_0, int dilation_1, int groups, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    int st[2] = {stride_0, stride_1}, pd[2] = {padding_0, padding_1}, dl[2] = {dilation_0, dilation_1};
    return conv_nd(res, input, weight, 2, st, pd, dl, groups, "conv2d");
}

int mlx_conv3d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1,
               int stride_2, int padding_0, int padding_1, int padding_2, int dilation_0, int dilation_1,
               int dilation_2, int groups, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    int st[3] = {stride_0, stride_1, stride_2}, pd[3] = {padding_0, padding_1, padding_2};
    int dl[3] = {dilation_0, dilation_1, dilation_2};
    return conv_nd(res, input, weight, 3, st, pd, dl, groups, "conv3d");
}

int mlx_conv_general(mlx_array *res, const mlx_array input, const mlx_array weight, const int *stride,
                     size_t stride_num, const int *padding_lo, size_t padding_lo_num, const int *padding_hi,
                     size_t padding_hi_num, const int *kernel_dilation, size_t kernel_dilation_num,
                     const int *input_dilation, size_t input_dilation_num, int groups, bool flip,
                     const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "conv_general";
    mc_array *x, *w;
    if (conv_args(res, input, weight, &x, &w, fn))
        return 1;
    conv_vecs v = {{stride, padding_lo, padding_hi, kernel_dilation, input_dilation},
                   {stride_num, padding_lo_num, padding_hi_num, kernel_dilation_num, input_dilation_num}};
    return mc_op_store(res, conv_general(x, w, &v, groups, flip, fn), fn);
}

/* MLX's conv_transpose_general: a stride-1 convolution of the input
 * dilated by stride, with the flipped kernel and the padding that puts
 * every output where the forward convolution took its input from. */
static int conv_transpose_nd(mlx_array *res, mlx_array input, mlx_array weight, int nsp, const int *stride,
                             const int *padding, const int *dilation, const int *output_padding, int groups,
                             const char *fn)
{
    mc_array *x, *w;
    if (conv_args(res, input, weight, &x, &w, fn))
        return 1;
    /* MLX reads the weight's spatial sizes before checking its rank */
    if (check_ndims(x, w, nsp))
        return 1;
    int lo[MC_CONV_MAX_SPATIAL], hi[MC_CONV_MAX_SPATIAL];
    static const int ones[MC_CONV_MAX_SPATIAL] = {1, 1, 1};
    for (int i = 0; i < nsp; i++) {
        int wt_size = 1 + dilation[i] * (w->shape[1 + i] - 1);
        lo[i] = wt_size - padding[i] - 1;
        int conv_out =
            (x->shape[1 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w->shape[1 + i] - 1) + 1;
        int out_size = 1 + stride[i] * (x->shape[1 + i] - 1);
        hi[i] = conv_out - out_size + padding[i] + output_padding[i];
    }
    size_t n = (size_t)nsp;
    conv_vecs v = {{ones, lo, hi, dilation, stride}, {n, n, n, n, n}};
    return mc_op_store(res, conv_general(x, w, &v, groups, true, fn), fn);
}

int mlx_conv_transpose1d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride, int padding,
                         int dilation, int output_padding, int groups, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return conv_transpose_nd(res, input, weight, 1, &stride, &padding, &dilation, &output_padding, groups,
                             "conv_transpose1d");
}

int mlx_conv_transpose2d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1,
                         int padding_0, int padding_1, int dilation_0, int dilation_1, int output_padding_0,
                         int output_padding_1, int groups, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    int st[2] = {stride_0, stride_1}, pd[2] = {padding_0, padding_1}, dl[2] = {dilation_0, dilation_1};
    int op[2] = {output_padding_0, output_padding_1};
    return conv_transpose_nd(res, input, weight, 2, st, pd, dl, op, groups, "conv_transpose2d");
}

int mlx_conv_transpose3d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1,
                         int stride_2, int padding_0, int padding_1, int padding_2, int dilation_0, int dilation_1,
                         int dilation_2, int output_padding_0, int output_padding_1, int output_padding_2,
                         int groups, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    int st[3] = {stride_0, stride_1, stride_2}, pd[3] = {padding_0, padding_1, padding_2};
    int dl[3] = {dilation_0, dilation_1, dilation_2};
    int op[3] = {output_padding_0, output_padding_1, output_padding_2};
    return conv_transpose_nd(res, input, weight, 3, st, pd, dl, op, groups, "conv_transpose3d");
}
