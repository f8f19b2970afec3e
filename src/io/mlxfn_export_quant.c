/* Owns exporting quantization: QuantizedMatmul as MLX's primitive, affine
 * Quantize as MLX's fast::Quantize (one record of three outputs), and
 * mxfp4 quantize and affine/mxfp4 dequantize as the compositions MLX's CPU
 * build writes (mlx/ops.cpp). The fp8 modes need ConvertFP8, which MLX
 * cannot write. */
#include <string.h>

#include "graph/prims_quant.h"
#include "io/mlxfn_export.h"

typedef const mc_mlxfn_node node_t;

int mc_xp_quantized_matmul(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_quant_params *p = n->params;
    *id = mc_mlxfn_begin(x, "QuantizedMatmul", n->n_in, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_i32(st, p->group_size);
    mc_wb_i32(st, p->bits);
    mc_wb_i32(st, p->mode);
    mc_wb_bool(st, p->transpose);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* MLX's mxfp4 quantize on the CPU (mlx/ops.cpp), writing both outputs
 * (ids[0] the codes, ids[1] the scales): per group of 32, the scale is
 * the power of two nearest max|w| / 6 (e8m0, stored + 127), and each
 * w / scale is the nearest e2m1 value (argmin over the table), eight
 * nibbles to a word. 0, or 1 (reported). */
static int quantize_mxfp4(mc_mlxfn_exp *x, uint64_t w, const mc_meta *wm, int gs, uint64_t ids[2])
{
    static const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    mlx_dtype t = wm->dtype;
    int count = 1;
    for (int i = 0; i < wm->ndim; i++)
        count *= wm->shape[i];
    int rows = count / gs, g2[2] = {rows, gs}, s2[2] = {rows, 1}, ax1 = 1;
    mc_meta gm = mc_xp_meta_with(t, 2, g2), sm = mc_xp_meta_with(t, 2, s2), m0 = mc_xp_meta_with(t, 0, NULL);
    uint64_t q = mc_xp_reshape(x, w, wm, 2, g2);
    uint64_t a = mc_mlxfn_node1(x, "Abs", 1, &q, &gm);
    uint64_t mx = mc_mlxfn_begin(x, "Reduce", 1, &a);
    mc_wb_i32(mc_mlxfn_state(x), 5); /* Max */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax1);
    mc_mlxfn_end(x, &sm);
    uint64_t sc = mc_xp_scalar_op(x, "Divide", mx, &sm, 6.0);
    uint64_t z = sc ? mc_mlxfn_scalar(x, 0, t) : 0;
    if (!z)
        return 1;
    /* e8m0: round(log2(scale)) as int32, 0 where the scale is 0 */
    uint64_t l = mc_mlxfn_begin(x, "Log", 1, &sc);
    mc_wb_i32(mc_mlxfn_state(x), 0); /* base 2 */
    mc_mlxfn_end(x, &sm);
    mc_meta im32 = sm;
    uint64_t e = mc_xp_to_dtype(x, mc_mlxfn_node1(x, "Round", 1, &l, &sm), &im32, MLX_INT32);
    mc_meta bm = mc_xp_meta_with(MLX_BOOL, 2, s2);
    uint64_t eqa[2] = {sc, z};
    mc_meta eqm[2] = {sm, m0};
    mc_xp_bcast_n(x, eqa, eqm, 2, &sm);
    uint64_t eq = mc_mlxfn_begin(x, "Equal", 2, eqa);
    mc_wb_bool(mc_mlxfn_state(x), false);
    mc_mlxfn_end(x, &bm);
    e = mc_xp_to_dtype(x, e, &im32, t);
    uint64_t sel[3] = {eq, z, e};
    mc_meta selm[3] = {bm, m0, sm};
    mc_xp_bcast_n(x, sel, selm, 3, &sm);
    e = mc_mlxfn_node1(x, "Select", 3, sel, &sm);
    uint64_t two = mc_mlxfn_scalar(x, 2.0, t);
    uint64_t k127 = two ? mc_mlxfn_scalar(x, 127, MLX_INT32) : 0;
    if (!k127)
        return 1;
    uint64_t p2 = mc_xp_binop(x, "Power", two, &m0, e, &sm, &sm);
    q = mc_xp_binop(x, "Divide", q, &gm, p2, &sm, &gm);
    mc_meta k0 = mc_xp_meta_with(MLX_INT32, 0, NULL);
    k127 = mc_xp_to_dtype(x, k127, &k0, t);
    mc_meta um = sm;
    ids[1] = mc_xp_to_dtype(x, mc_xp_binop(x, "Add", e, &sm, k127, &k0, &sm), &um, MLX_UINT8);
    /* the nearest table entry of each w / scale */
    uint64_t lut = mc_mlxfn_floats(x, e2m1, 16, t);
    if (!lut)
        return 1;
    int n16 = 16, d3[3] = {rows, gs, 16}, ax2 = 2;
    mc_meta lm = mc_xp_meta_with(t, 1, &n16), em = gm, dm = mc_xp_meta_with(t, 3, d3);
    uint64_t qe = mc_xp_expand_rec(x, q, &em, 2);
    uint64_t d = mc_mlxfn_node1(x, "Abs", 1, &(uint64_t){mc_xp_binop(x, "Subtract", qe, &em, lut, &lm, &dm)}, &dm);
    mc_meta am = dm;
    am.dtype = MLX_UINT32;
    am.shape[2] = 1;
    uint64_t idx = mc_mlxfn_begin(x, "ArgReduce", 1, &d);
    mc_wb_i32(mc_mlxfn_state(x), 0); /* ArgMin */
    mc_wb_i32(mc_mlxfn_state(x), 2);
    mc_mlxfn_end(x, &am);
    mc_meta cm = mc_xp_meta_with(MLX_UINT32, 2, g2);
    idx = mc_xp_axes_rec(x, "Squeeze", idx, 2, &cm);
    /* eight nibbles to a word: codes times 16^i, summed */
    int n8 = 8, w3[3] = {count / 32, 4, 8}, w2[2] = {count / 32, 4};
    uint64_t base = mc_mlxfn_scalar(x, 2, MLX_UINT32);
    if (!base)
        return 1;
    mc_meta u0 = mc_xp_meta_with(MLX_UINT32, 0, NULL), shm = mc_xp_meta_with(MLX_UINT32, 1, &n8);
    uint64_t shifts = mc_xp_binop(x, "Power", base, &u0, mc_xp_arange_rec(x, 0, 32, 4, MLX_UINT32), &shm, &shm);
    mc_meta rm = mc_xp_meta_with(MLX_UINT32, 3, w3);
    idx = mc_xp_reshape(x, idx, &cm, 3, w3);
    idx = mc_xp_binop(x, "Multiply", idx, &rm, shifts, &shm, &rm);
    mc_meta km = rm;
    km.shape[2] = 1;
    idx = mc_mlxfn_begin(x, "Reduce", 1, &idx);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* Sum */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax2);
    mc_mlxfn_end(x, &km);
    mc_meta pm = mc_xp_meta_with(MLX_UINT32, 2, w2);
    idx = mc_xp_axes_rec(x, "Squeeze", idx, 2, &pm);
    /* back to w's leading shape */
    mc_meta wq = *wm, ws = *wm;
    wq.dtype = MLX_UINT32;
    wq.shape[wm->ndim - 1] = wm->shape[wm->ndim - 1] / 8;
    ws.dtype = MLX_UINT8;
    ws.shape[wm->ndim - 1] = wm->shape[wm->ndim - 1] / gs;
    ids[0] = mc_xp_reshape(x, idx, &pm, wq.ndim, wq.shape);
    ids[1] = mc_xp_reshape(x, ids[1], &um, ws.ndim, ws.shape);
    return 0;
}

/* Affine quantization is MLX's fast::Quantize on every device, one record
 * of three outputs; ours is one node per output: the first writes the
 * record, its siblings find it. The fp modes run as a composition on
 * MLX's CPU. */
int mc_xp_quantize(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_quant_params *p = n->params;
    if (p->mode != MC_QMODE_AFFINE && (p->mode != MC_QMODE_MXFP4 || n->n_in != 1))
        return mc_xp_unsupported(x, n, "MLX's CPU build encodes fp8 with ConvertFP8, which MLX cannot write");
    struct {
        uint64_t in;
        int group_size, bits, mode, pad;
    } key = {in[0], p->group_size, p->bits, p->mode, 0};
    uint64_t ids[4] = {0, 0, 0, 0};
    if (mc_mlxfn_memo_get(x, &key, sizeof key, ids)) { /* a sibling wrote it */
        *id = ids[p->which];
        return 0;
    }
    if (p->mode == MC_QMODE_MXFP4) {
        if (quantize_mxfp4(x, in[0], &im[0], p->group_size, ids))
            return 1;
        mc_mlxfn_memo_put(x, &key, sizeof key, ids);
        *id = ids[p->which];
        return 0;
    }
    mc_meta outs[3] = {im[0], im[0], im[0]};
    int last = im[0].ndim - 1;
    outs[0].dtype = MLX_UINT32;
    outs[0].shape[last] = im[0].shape[last] * p->bits / 32;
    outs[1].shape[last] = outs[2].shape[last] = im[0].shape[last] / p->group_size;
    uint64_t r = mc_mlxfn_begin(x, "Quantize", 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    mc_wb_i32(st, p->group_size);
    mc_wb_i32(st, p->bits);
    mc_wb_i32(st, p->mode);
    mc_wb_bool(st, false); /* quantize, not dequantize */
    mc_mlxfn_end_multi(x, r, 3, outs, ids);
    mc_mlxfn_memo_put(x, &key, sizeof key, ids);
    *id = ids[p->which];
    return 0;
}

/* The codes of w (..., Kp) uint32 as MLX's affine dequantize unpacks
 * them, in row-major order: *cm gets their meta, (..., Kp, 32 / bits) for
 * a power-of-two width, else (..., Kp * 32 / bits). 0 on failure
 * (reported). */
static uint64_t unpack_codes(mc_mlxfn_exp *x, uint64_t w, const mc_meta *wm, int bits, mc_meta *cm)
{
    int nd = wm->ndim;
    mc_meta u0 = mc_xp_meta_with(MLX_UINT32, 0, NULL);
    if (!(bits & (bits - 1))) { /* each code shifted up to the top, then down */
        int per = 32 / bits;
        uint64_t parts[32];
        mc_meta pm[32];
        for (int k = 0; k < per; k++) {
            uint64_t up = mc_mlxfn_scalar(x, 32 - (k * bits + bits), MLX_UINT32);
            uint64_t down = up ? mc_mlxfn_scalar(x, 32 - bits, MLX_UINT32) : 0;
            if (!down)
                return 0;
            uint64_t r = mc_xp_bitwise_rec(x, BW_LEFT_SHIFT, w, wm, up, &u0, wm);
            r = mc_xp_bitwise_rec(x, BW_RIGHT_SHIFT, r, wm, down, &u0, wm);
            pm[k] = *wm;
            parts[k] = mc_xp_expand_rec(x, r, &pm[k], nd);
        }
        return mc_xp_concat_rec(x, parts, pm, per, nd, cm);
    }
    /* every bit of each word, regrouped by code and summed back */
    mc_meta e = *wm;
    uint64_t r = mc_xp_expand_rec(x, w, &e, nd);
    mc_meta bm = e;
    bm.shape[nd] = 32;
    uint64_t one = mc_mlxfn_scalar(x, 1, MLX_UINT32);
    if (!one)
        return 0;
    int n32 = 32;
    mc_meta am = mc_xp_meta_with(MLX_UINT32, 1, &n32);
    r = mc_xp_bitwise_rec(x, BW_RIGHT_SHIFT, r, &e, mc_xp_arange_rec(x, 0, 32, 1, MLX_UINT32), &am, &bm);
    r = mc_xp_bitwise_rec(x, BW_AND, r, &bm, one, &u0, &bm);
    int gs[MC_MAX_NDIM];
    memcpy(gs, wm->shape, sizeof(int) * (size_t)nd);
    gs[nd - 1] = wm->shape[nd - 1] * 32 / bits;
    gs[nd] = bits;
    r = mc_xp_reshape(x, r, &bm, nd + 1, gs);
    mc_meta gm = mc_xp_meta_with(MLX_UINT32, nd + 1, gs), sm = mc_xp_meta_with(MLX_UINT32, 1, &bits);
    r = mc_xp_bitwise_rec(x, BW_LEFT_SHIFT, r, &gm, mc_xp_arange_rec(x, 0, bits, 1, MLX_UINT32), &sm, &gm);
    mc_meta km = gm;
    km.shape[nd] = 1;
    int ax = nd;
    r = mc_mlxfn_begin(x, "Reduce", 1, &r);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* Sum */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax);
    mc_mlxfn_end(x, &km);
    *cm = mc_xp_meta_with(MLX_UINT32, nd, gs);
    return mc_xp_axes_rec(x, "Squeeze", r, nd, cm);
}

/* MLX's mxfp4 dequantize on the CPU (mlx/ops.cpp): each byte's two
 * nibbles looked up in the fp4 (e2m1) table, times 2^(scale - 127). The
 * other fp modes decode their fp8 bytes with ConvertFP8, which MLX cannot
 * write. */
static int ex_dequantize_mxfp4(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    static const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    mlx_dtype t = ((const mc_quant_params *)n->params)->dtype;
    const mc_meta *w = &im[0], *sc = &im[1];
    int words = 1, scales = 1;
    for (int i = 0; i < w->ndim; i++)
        words *= w->shape[i];
    for (int i = 0; i < sc->ndim; i++)
        scales *= sc->shape[i];
    int rows = words / 4;
    uint64_t lut = mc_mlxfn_floats(x, e2m1, 16, t);
    uint64_t low = lut ? mc_mlxfn_scalar(x, 15, MLX_INT8) : 0, four = low ? mc_mlxfn_scalar(x, 4, MLX_INT8) : 0;
    if (!four)
        return 1;
    int rshape[2] = {rows, 4}, bshape[2] = {rows, 16};
    mc_meta bm = mc_xp_meta_with(MLX_INT8, 2, bshape), i0 = mc_xp_meta_with(MLX_INT8, 0, NULL);
    uint64_t b = mc_xp_reshape(x, in[0], w, 2, rshape);
    uint64_t v = mc_mlxfn_begin(x, "View", 1, &b);
    mc_wb_dtype(mc_mlxfn_state(x), MLX_INT8);
    mc_mlxfn_end(x, &bm);
    /* the high nibble by an arithmetic shift: -8..-1 index from the end */
    uint64_t idx[2] = {mc_xp_bitwise_rec(x, BW_AND, v, &bm, low, &i0, &bm),
                       mc_xp_bitwise_rec(x, BW_RIGHT_SHIFT, v, &bm, four, &i0, &bm)};
    int g3[3] = {rows, 16, 1}, axis = 0, one = 1;
    mc_meta gm = mc_xp_meta_with(t, 3, g3), half[2] = {gm, gm}, cm;
    uint64_t part[2];
    for (int k = 0; k < 2; k++) {
        uint64_t args[2] = {lut, idx[k]};
        part[k] = mc_mlxfn_begin(x, "Gather", 2, args);
        mc_wb_ints(mc_mlxfn_state(x), 1, &axis);
        mc_wb_ints(mc_mlxfn_state(x), 1, &one);
        mc_mlxfn_end(x, &gm);
    }
    uint64_t c = mc_xp_concat_rec(x, part, half, 2, 2, &cm);
    int gshape[2] = {scales, words * 8 / scales}, sshape[2] = {scales, 1};
    c = mc_xp_reshape(x, c, &cm, 2, gshape);
    mc_meta s1 = mc_xp_meta_with(sc->dtype, 2, sshape), m0 = mc_xp_meta_with(t, 0, NULL),
            om = mc_xp_meta_with(t, 2, gshape);
    uint64_t e = mc_xp_to_dtype(x, mc_xp_reshape(x, in[1], sc, 2, sshape), &s1, t);
    uint64_t two = (e = mc_xp_scalar_op(x, "Subtract", e, &s1, 127)) ? mc_mlxfn_scalar(x, 2.0, t) : 0;
    if (!two)
        return 1;
    e = mc_xp_binop(x, "Power", two, &m0, e, &s1, &s1);
    c = mc_xp_binop(x, "Multiply", c, &om, e, &s1, &om);
    *id = mc_xp_reshape(x, c, &om, n->meta->ndim, n->meta->shape);
    return 0;
}

/* MLX's affine dequantize on the CPU (mlx/ops.cpp): the codes unpacked
 * from their uint32 words, grouped, times the group's scale plus its
 * bias. */
int mc_xp_dequantize(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_quant_params *p = n->params;
    if (p->mode == MC_QMODE_MXFP4 && n->n_in == 2)
        return ex_dequantize_mxfp4(x, n, in, im, id);
    if (p->mode != MC_QMODE_AFFINE)
        return mc_xp_unsupported(x, n, "MLX's CPU build decodes fp8 with ConvertFP8, which MLX cannot write");
    const mc_meta *w = &im[0], *sc = &im[1];
    mlx_dtype t = sc->dtype;
    int nd = w->ndim;
    mc_meta cm;
    uint64_t c = unpack_codes(x, in[0], w, p->bits, &cm);
    if (!c)
        return 1;
    int gshape[MC_MAX_NDIM];
    memcpy(gshape, w->shape, sizeof(int) * (size_t)(nd - 1));
    gshape[nd - 1] = sc->shape[nd - 1];
    gshape[nd] = p->group_size;
    c = mc_xp_reshape(x, c, &cm, nd + 1, gshape);
    mc_meta gm = mc_xp_meta_with(t, nd + 1, gshape), em = *sc, bm = im[2];
    cm = mc_xp_meta_with(MLX_UINT32, nd + 1, gshape);
    c = mc_xp_to_dtype(x, c, &cm, t);
    uint64_t se = mc_xp_expand_rec(x, in[1], &em, nd), be = mc_xp_expand_rec(x, in[2], &bm, nd);
    c = mc_xp_binop(x, "Multiply", c, &gm, se, &em, &gm);
    c = mc_xp_binop(x, "Add", c, &gm, be, &bm, &gm);
    *id = mc_xp_reshape(x, c, &gm, n->meta->ndim, n->meta->shape);
    return 0;
}
