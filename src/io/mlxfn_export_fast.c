/* Owns exporting fast.h's primitives as the fallbacks MLX's CPU build runs
 * in their place (mlx/fast.cpp): MLX's own RMSNorm, LayerNorm, RoPE and
 * ScaledDotProductAttention cannot run on its CPU, so an MLX export made
 * there writes these compositions, and so does this. */
#include <math.h>
#include <string.h>

#include "graph/prims_fast.h"
#include "io/mlxfn_export.h"

typedef const mc_mlxfn_node node_t;

/* mean over the last axis, kept; *out its meta. 0 on failure. */
static uint64_t mean_last(mc_mlxfn_exp *x, uint64_t a, const mc_meta *m, mc_meta *out)
{
    *out = *m;
    out->shape[m->ndim - 1] = 1;
    int ax = m->ndim - 1;
    uint64_t s = mc_mlxfn_begin(x, "Reduce", 1, &a);
    mc_wb_i32(mc_mlxfn_state(x), 2); /* Sum */
    mc_wb_ints(mc_mlxfn_state(x), 1, &ax);
    mc_mlxfn_end(x, out);
    mc_meta m0 = mc_xp_meta_with(m->dtype, 0, NULL);
    return mc_xp_binop(x, "Multiply", s, out, mc_xp_inv_count(x, a, 1, &ax, m->dtype), &m0, out);
}

/* x * rsqrt(v + eps), v (..., 1) broadcast; x and v float32. */
static uint64_t normalize(mc_mlxfn_exp *x, uint64_t xc, const mc_meta *xm, uint64_t v, const mc_meta *vm,
                          float eps)
{
    uint64_t a = mc_xp_scalar_op(x, "Add", v, vm, eps);
    if (!a)
        return 0;
    uint64_t r = mc_mlxfn_begin(x, "Sqrt", 1, &a);
    mc_wb_bool(mc_mlxfn_state(x), true);
    mc_mlxfn_end(x, vm);
    return mc_xp_binop(x, "Multiply", xc, xm, r, vm, xm);
}

int mc_xp_norm(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    float eps = ((const mc_norm_params *)n->params)->eps;
    if (im[0].ndim == 0 || im[0].shape[im[0].ndim - 1] == 0)
        return mc_xp_unsupported(x, n, "no last axis to normalise");
    mc_meta xm = im[0], sm;
    uint64_t xf = mc_xp_to_dtype(x, in[0], &xm, MLX_FLOAT32), xc = xf, v;
    if (n->prim == MC_PRIM_LAYER_NORM) { /* x - mean(x), then its mean square */
        uint64_t mu = mean_last(x, xf, &xm, &sm);
        if (!mu)
            return 1;
        xc = mc_xp_binop(x, "Subtract", xf, &xm, mu, &sm, &xm);
    }
    uint64_t sq = mc_mlxfn_node1(x, "Square", 1, &xc, &xm);
    if (!(v = mean_last(x, sq, &xm, &sm)) || !(v = normalize(x, xc, &xm, v, &sm, eps)))
        return 1;
    v = mc_xp_to_dtype(x, v, &xm, n->meta->dtype);
    v = mc_xp_binop(x, "Multiply", v, &xm, in[1], &im[1], n->meta);
    if (n->prim == MC_PRIM_LAYER_NORM)
        v = mc_xp_binop(x, "Add", v, n->meta, in[2], &im[2], n->meta);
    *id = v;
    return 0;
}

/* The rotated halves, with MLX's operand order (x1, x2 of meta xm; c and
 * sn the cosines and sines of meta cm). */
static void rotate(mc_mlxfn_exp *x, bool forward, uint64_t x1, uint64_t x2, const mc_meta *xm, uint64_t c,
                   uint64_t sn, const mc_meta *cm, uint64_t out[2])
{
    /* forward: x1 c - x2 s, x1 s + x2 c; inverse: x2 s + x1 c, x2 c - x1 s */
    uint64_t u = forward ? x1 : x2, w = forward ? x2 : x1;
    uint64_t uc = mc_xp_binop(x, "Multiply", u, xm, forward ? c : sn, cm, xm);
    uint64_t ws = mc_xp_binop(x, "Multiply", w, xm, forward ? sn : c, cm, xm);
    out[0] = mc_xp_binop(x, forward ? "Subtract" : "Add", uc, xm, ws, xm, xm);
    uint64_t us = mc_xp_binop(x, "Multiply", u, xm, forward ? sn : c, cm, xm);
    uint64_t wc = mc_xp_binop(x, "Multiply", w, xm, forward ? c : sn, cm, xm);
    out[1] = mc_xp_binop(x, forward ? "Add" : "Subtract", us, xm, wc, xm, xm);
}

/* MLX's rope fallback (mlx/fast.cpp), which its CPU build runs: x seen as
 * (B, N, T, D); positions (arange(T) + offset) * scale in float32; angles
 * positions times the inverse frequencies (1 / freqs, or exp(-i log(base)
 * / (dims/2))); the first dims features rotated as halves, or as pairs
 * (traditional), the rest copied. */
int mc_xp_rope(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_rope_params *p = n->params;
    mc_meta xm = im[0];
    uint64_t xi = in[0];
    if (xm.ndim == 3) {
        xi = mc_xp_expand_rec(x, xi, &xm, 1);
    } else if (xm.ndim > 4) {
        int lead = 1;
        for (int i = 1; i < xm.ndim - 2; i++)
            lead *= xm.shape[i];
        mc_meta f =
            mc_xp_meta_with(xm.dtype, 4, (int[]){xm.shape[0], lead, xm.shape[xm.ndim - 2], xm.shape[xm.ndim - 1]});
        uint64_t r = mc_mlxfn_begin(x, "Flatten", 1, &xi);
        mc_wb_i32(mc_mlxfn_state(x), 1);
        mc_wb_i32(mc_mlxfn_state(x), xm.ndim - 3);
        mc_mlxfn_end(x, &f);
        xi = r;
        xm = f;
    }
    int B = xm.shape[0], N = xm.shape[1], T = xm.shape[2], D = xm.shape[3], dims = p->dims, half = dims / 2;
    mlx_dtype t = xm.dtype;

    /* positions: (T,), or (B, 1, T) for one offset per batch entry */
    mc_meta om = im[1], ar = mc_xp_meta_with(MLX_FLOAT32, 1, &T), pm;
    uint64_t off = in[1];
    if (om.ndim == 1 && om.shape[0] > 1) {
        int ax[2] = {1, 2};
        mc_meta e = mc_xp_meta_with(om.dtype, 3, (int[]){om.shape[0], 1, 1});
        uint64_t r = mc_mlxfn_begin(x, "ExpandDims", 1, &off);
        mc_wb_ints(mc_mlxfn_state(x), 2, ax);
        mc_mlxfn_end(x, &e);
        off = r;
        om = e;
    }
    uint64_t pos = mc_xp_arange_rec(x, 0, T, 1, MLX_FLOAT32);
    off = mc_xp_to_dtype(x, off, &om, MLX_FLOAT32);
    pm = om.ndim == 3 ? mc_xp_meta_with(MLX_FLOAT32, 3, (int[]){om.shape[0], 1, T}) : ar;
    pos = mc_xp_binop(x, "Add", pos, &ar, off, &om, &pm);
    if (!(pos = mc_xp_scalar_op(x, "Multiply", pos, &pm, p->scale)))
        return 1;

    mc_meta fm = mc_xp_meta_with(MLX_FLOAT32, 1, &half), m0 = mc_xp_meta_with(MLX_FLOAT32, 0, NULL);
    uint64_t inv;
    if (p->has_freqs) { /* reciprocal(freqs) */
        uint64_t one = mc_mlxfn_scalar(x, 1.0, MLX_FLOAT32);
        if (!one)
            return 1;
        inv = mc_xp_binop(x, "Divide", one, &m0, in[2], &im[2], &im[2]);
    } else {
        uint64_t k = mc_xp_arange_rec(x, 0, -half, -1, MLX_FLOAT32);
        if (!(k = mc_xp_scalar_op(x, "Multiply", k, &fm, (double)(logf(p->base) / (float)half))))
            return 1;
        inv = mc_mlxfn_node1(x, "Exp", 1, &k, &fm);
    }
    uint64_t pe = mc_xp_expand_rec(x, pos, &pm, pm.ndim);
    mc_meta cm = pm;
    cm.shape[pm.ndim - 1] = half;
    uint64_t theta = mc_xp_binop(x, "Multiply", pe, &pm, inv, &fm, &cm);
    mc_meta sm = cm;
    uint64_t c = mc_xp_to_dtype(x, mc_mlxfn_node1(x, "Cos", 1, &theta, &cm), &cm, t);
    uint64_t sn = mc_xp_to_dtype(x, mc_mlxfn_node1(x, "Sin", 1, &theta, &sm), &sm, t);

    int zero[4] = {0, 0, 0, 0}, ones[4] = {1, 1, 1, 1}, full[4] = {B, N, T, D}, rest[4] = {0, 0, 0, dims};
    uint64_t outs[3], o;
    mc_meta hm, om2[3], out;
    if (p->traditional) {
        int odd[4] = {0, 0, 0, 1}, stop[4] = {B, N, T, dims}, two[4] = {1, 1, 1, 2};
        uint64_t x1 = mc_xp_slice_rec(x, xi, &xm, zero, stop, two, &hm);
        uint64_t x2 = mc_xp_slice_rec(x, xi, &xm, odd, stop, two, &hm);
        rotate(x, p->forward, x1, x2, &hm, c, sn, &cm, outs);
        mc_meta em = hm;
        outs[0] = mc_xp_expand_rec(x, outs[0], &em, 4);
        em = hm;
        outs[1] = mc_xp_expand_rec(x, outs[1], &em, 4);
        om2[0] = om2[1] = em;
        o = mc_xp_concat_rec(x, outs, om2, 2, 4, &out);
        o = mc_xp_reshape(x, o, &out, 4, stop);
        out = mc_xp_meta_with(t, 4, stop);
        if (dims < D) {
            outs[0] = o;
            om2[0] = out;
            outs[1] = mc_xp_slice_rec(x, xi, &xm, rest, full, ones, &om2[1]);
            o = mc_xp_concat_rec(x, outs, om2, 2, 3, &out);
        }
    } else {
        int stop[4] = {B, N, T, half}, start[4] = {0, 0, 0, half};
        uint64_t x1 = mc_xp_slice_rec(x, xi, &xm, zero, stop, ones, &hm);
        stop[3] = dims;
        uint64_t x2 = mc_xp_slice_rec(x, xi, &xm, start, stop, ones, &hm);
        rotate(x, p->forward, x1, x2, &hm, c, sn, &cm, outs);
        om2[0] = om2[1] = hm;
        int k = 2;
        if (dims < D)
            outs[k] = mc_xp_slice_rec(x, xi, &xm, rest, full, ones, &om2[k]), k++;
        o = mc_xp_concat_rec(x, outs, om2, k, 3, &out);
    }
    *id = mc_xp_reshape(x, o, &out, im[0].ndim, im[0].shape);
    return 0;
}

/* MLX's attention fallback (mlx/fast.cpp), which its CPU build runs:
 * scores = (scale * q) @ k^T, masked (causal: key position <= query
 * position + Lk - Lq), softmax (precise), @ v; grouped heads as groups of
 * the key/value heads. */
int mc_xp_sdpa(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_sdpa_params *p = n->params;
    mc_meta q = im[0], k = im[1], v = im[2];
    mlx_dtype dt = q.dtype;
    int hq = q.shape[1], hkv = k.shape[1], rep = hq / hkv;
    uint64_t sc = mc_mlxfn_scalar(x, p->scale, dt);
    if (!sc)
        return 1;
    mc_meta m0 = mc_xp_meta_with(dt, 0, NULL);
    uint64_t iq = mc_xp_binop(x, "Multiply", sc, &m0, in[0], &q, &q), ik = in[1], iv = in[2];
    if (rep > 1) {
        iq = mc_xp_unflatten_rec(x, iq, &q, 1, hkv, rep);
        ik = mc_xp_expand_rec(x, ik, &k, 2);
        iv = mc_xp_expand_rec(x, iv, &v, 2);
    }
    int perm[MC_MAX_NDIM];
    for (int i = 0; i < k.ndim; i++)
        perm[i] = i;
    perm[k.ndim - 2] = k.ndim - 1;
    perm[k.ndim - 1] = k.ndim - 2;
    mc_meta kt = k;
    kt.shape[k.ndim - 2] = k.shape[k.ndim - 1];
    kt.shape[k.ndim - 1] = k.shape[k.ndim - 2];
    uint64_t ikt = mc_mlxfn_begin(x, "Transpose", 1, &ik);
    mc_wb_ints(mc_mlxfn_state(x), k.ndim, perm);
    mc_mlxfn_end(x, &kt);
    mc_meta sm;
    uint64_t s = mc_xp_matmul_op(x, iq, q, ikt, kt, &sm);
    if (p->causal || p->has_mask) {
        uint64_t mask;
        mc_meta mm;
        if (p->causal) {
            int kl = k.shape[k.ndim - 2], ql = q.shape[q.ndim - 2], off = kl - ql;
            int s1[2] = {ql, 1}, s2[2] = {1, kl}, s3[2] = {ql, kl};
            mc_meta e1 = mc_xp_meta_with(MLX_INT32, 2, s1), e2 = mc_xp_meta_with(MLX_INT32, 2, s2);
            uint64_t qi =
                mc_xp_axes_rec(x, "ExpandDims", mc_xp_arange_rec(x, off, ql + off, 1, MLX_INT32), 1, &e1);
            uint64_t ki = mc_xp_axes_rec(x, "ExpandDims", mc_xp_arange_rec(x, 0, kl, 1, MLX_INT32), 0, &e2);
            mm = mc_xp_meta_with(MLX_BOOL, 2, s3);
            mask = mc_xp_binop(x, "GreaterEqual", qi, &e1, ki, &e2, &mm);
        } else {
            mask = in[3];
            mm = im[3];
            if (rep > 1 && mm.ndim >= 3) {
                int ax = mm.ndim - 3;
                mask = mm.shape[ax] == 1 ? mc_xp_expand_rec(x, mask, &mm, ax)
                                         : mc_xp_unflatten_rec(x, mask, &mm, ax, hkv, rep);
            }
        }
        if (mm.dtype == MLX_BOOL) {
            double lowest = dt == MLX_FLOAT16    ? -65504.0
                            : dt == MLX_BFLOAT16 ? -3.38953138925153547e38
                            : dt == MLX_FLOAT64  ? -1.7976931348623157e308
                                                 : -3.40282346638528859e38;
            uint64_t low = mc_mlxfn_scalar(x, lowest, dt);
            if (!low)
                return 1;
            uint64_t args[3] = {mask, s, low};
            mc_meta ms[3] = {mm, sm, m0};
            mc_xp_bcast_n(x, args, ms, 3, &sm);
            s = mc_mlxfn_node1(x, "Select", 3, args, &sm);
        } else {
            s = mc_xp_binop(x, "Add", s, &sm, mask, &mm, &sm);
        }
    }
    if (p->has_sinks) { /* a sink column first, sliced off after the softmax */
        int at = 3 + (p->has_mask ? 1 : 0), sax[3] = {0, 2, 3};
        mc_meta km = mc_xp_meta_with(im[at].dtype, 4, (int[]){1, hq, 1, 1});
        uint64_t sk = mc_mlxfn_begin(x, "ExpandDims", 1, &in[at]);
        mc_wb_ints(mc_mlxfn_state(x), 3, sax);
        mc_mlxfn_end(x, &km);
        if (sm.ndim == 5)
            sk = mc_xp_unflatten_rec(x, sk, &km, 1, hkv, rep);
        mc_meta bm = sm;
        bm.shape[sm.ndim - 1] = 1;
        uint64_t parts[2] = {mc_xp_bcast(x, sk, &km, bm.ndim, bm.shape), s};
        mc_meta pm[2] = {bm, sm};
        s = mc_xp_concat_rec(x, parts, pm, 2, sm.ndim - 1, &sm);
    }
    uint64_t sw = mc_mlxfn_begin(x, "Softmax", 1, &s);
    mc_wb_bool(mc_mlxfn_state(x), true);
    mc_mlxfn_end(x, &sm);
    if (p->has_sinks) {
        int start[MC_MAX_NDIM] = {0}, str[MC_MAX_NDIM];
        for (int i = 0; i < sm.ndim; i++)
            str[i] = 1;
        start[sm.ndim - 1] = 1;
        mc_meta cut;
        sw = mc_xp_slice_rec(x, sw, &sm, start, sm.shape, str, &cut);
        sm = cut;
    }
    mc_meta om;
    uint64_t o = mc_xp_matmul_op(x, sw, sm, iv, v, &om);
    if (rep > 1) {
        uint64_t f = mc_mlxfn_begin(x, "Flatten", 1, &o);
        mc_wb_i32(mc_mlxfn_state(x), 1);
        mc_wb_i32(mc_mlxfn_state(x), 2);
        mc_mlxfn_end(x, n->meta);
        o = f;
    }
    *id = o;
    return 0;
}
