/* Owns exporting random draws: RandomBits as MLX's primitive, and our
 * fused RandomDist and RandomPermutation as the compositions of ops MLX
 * writes for them (mlx/random.cpp), RandomBits under each. */
#include <math.h>

#include "graph/prims_random.h"
#include "io/mlxfn_export.h"

typedef const mc_mlxfn_node node_t;

int mc_xp_random_bits(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    const mc_random_bits_params *p = n->params;
    *id = mc_mlxfn_begin(x, "RandomBits", 1, in);
    mc_wb_ints(mc_mlxfn_state(x), p->ndim, p->shape);
    mc_wb_i32(mc_mlxfn_state(x), p->width);
    mc_mlxfn_end(x, n->meta);
    return 0;
}

/* MLX's uniform over [0, 1) of dtype t (mlx/random.cpp): 32 random bits as
 * float32, / 2^32, capped below 1 (the largest value below 1 of t), as t.
 * 0 on failure (reported). */
static uint64_t unit_uniform(mc_mlxfn_exp *x, uint64_t key, const mc_meta *out, mlx_dtype t)
{
    static const double below_one[] = {0.99999994039535522, 0.99951171875, 0.99609375};
    double upper = below_one[t == MLX_FLOAT16 ? 1 : t == MLX_BFLOAT16 ? 2 : 0];
    mc_meta bm = *out;
    bm.dtype = MLX_UINT32;
    uint64_t b = mc_mlxfn_begin(x, "RandomBits", 1, &key);
    mc_wb_ints(mc_mlxfn_state(x), out->ndim, out->shape);
    mc_wb_i32(mc_mlxfn_state(x), 4);
    mc_mlxfn_end(x, &bm);
    b = mc_xp_to_dtype(x, b, &bm, MLX_FLOAT32);
    if (!(b = mc_xp_scalar_op(x, "Divide", b, &bm, 4294967295.0)) ||
        !(b = mc_xp_scalar_op(x, "Minimum", b, &bm, upper)))
        return 0;
    return mc_xp_to_dtype(x, b, &bm, t);
}

/* MLX's uniform(lo, hi) of dtype t with constant bounds: range * u + lo,
 * range = hi - lo written as MLX writes it (a Subtract of constants). */
static uint64_t uniform_const(mc_mlxfn_exp *x, uint64_t key, const mc_meta *shape, double lo, double hi,
                              mlx_dtype t)
{
    mc_meta m0 = mc_xp_meta_with(t, 0, NULL), um = *shape;
    um.dtype = t;
    uint64_t l = mc_mlxfn_scalar(x, lo, t), h = l ? mc_mlxfn_scalar(x, hi, t) : 0;
    uint64_t u = h ? unit_uniform(x, key, shape, t) : 0;
    if (!u)
        return 0;
    uint64_t range = mc_xp_binop(x, "Subtract", h, &m0, l, &m0, &m0);
    u = mc_xp_binop(x, "Multiply", range, &m0, u, &um, &um);
    return mc_xp_binop(x, "Add", u, &um, l, &m0, &um);
}

/* RandomDist is ours (a fused draw); MLX writes the ops it fuses
 * (mlx/random.cpp), which this writes. */
int mc_xp_random_dist(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_random_dist_params *p = n->params;
    const mc_meta *out = n->meta;
    mlx_dtype t = p->dtype;
    const double below_minus_one = -0.99999994039535522; /* nextafter(-1, 0) in float32 */
    mc_meta fm = *out;
    fm.dtype = MLX_FLOAT32;
    uint64_t u, e;
    switch (p->kind) {
    case MC_RD_UNIFORM: /* range * u + low, both given in t */
        if (!(u = unit_uniform(x, in[0], out, t)))
            return 1;
        u = mc_xp_binop(x, "Multiply", in[2], &im[2], u, out, out);
        *id = mc_xp_binop(x, "Add", u, out, in[1], &im[1], out);
        return 0;
    case MC_RD_NORMAL: /* erfinv(uniform(-1+, 1) in float32) as t, times p0, plus p1 */
        if (!(u = uniform_const(x, in[0], out, below_minus_one, 1.0, MLX_FLOAT32)))
            return 1;
        e = mc_xp_to_dtype(x, mc_mlxfn_node1(x, "ErfInv", 1, &u, &fm), &fm, t);
        e = mc_xp_binop(x, "Multiply", in[1], &im[1], e, out, out);
        if (p->n_params > 1)
            e = mc_xp_binop(x, "Add", in[2], &im[2], e, out, out);
        *id = e;
        return 0;
    case MC_RD_GUMBEL: /* -log(-log(uniform(0, 1) in t)) */
        if (!(u = uniform_const(x, in[0], out, 0.0, 1.0, t)))
            return 1;
        for (int k = 0; k < 2; k++) {
            uint64_t l = mc_mlxfn_begin(x, "Log", 1, &u);
            mc_wb_i32(mc_mlxfn_state(x), 2); /* natural */
            mc_mlxfn_end(x, out);
            u = mc_mlxfn_node1(x, "Negative", 1, &l, out);
        }
        *id = u;
        return 0;
    case MC_RD_LAPLACE: { /* sign(v) * log1p(-1 * |v|), v uniform(-1+, 1) in float32 */
        if (!(u = uniform_const(x, in[0], out, below_minus_one, 1.0, MLX_FLOAT32)))
            return 1;
        mlx_dtype pt = t == MLX_FLOAT64 ? MLX_FLOAT64 : MLX_FLOAT32; /* t promoted with float32 */
        mc_meta am = fm, m0 = mc_xp_meta_with(t, 0, NULL), sm = fm;
        uint64_t a = mc_xp_to_dtype(x, mc_mlxfn_node1(x, "Abs", 1, &u, &fm), &am, pt);
        uint64_t k = mc_mlxfn_scalar(x, -1.0, t);
        if (!k)
            return 1;
        k = mc_xp_to_dtype(x, k, &m0, pt);
        uint64_t l =
            mc_mlxfn_node1(x, "Log1p", 1, &(uint64_t){mc_xp_binop(x, "Multiply", k, &m0, a, &am, &am)}, &am);
        uint64_t sg = mc_xp_to_dtype(x, mc_mlxfn_node1(x, "Sign", 1, &u, &fm), &sm, pt);
        e = mc_xp_binop(x, "Multiply", sg, &sm, l, &am, &am);
        e = mc_xp_to_dtype(x, e, &am, t);
        if (p->has_scale && p->scale != 1.0f) {
            uint64_t c = mc_mlxfn_scalar(x, p->scale, t);
            mc_meta c0 = mc_xp_meta_with(t, 0, NULL);
            e = c ? mc_xp_binop(x, "Multiply", c, &c0, e, out, out) : 0;
        }
        if (e && p->has_loc && p->loc != 0.0f) {
            uint64_t c = mc_mlxfn_scalar(x, p->loc, t);
            mc_meta c0 = mc_xp_meta_with(t, 0, NULL);
            e = c ? mc_xp_binop(x, "Add", c, &c0, e, out, out) : 0;
        }
        *id = e;
        return !e;
    }
    case MC_RD_TRUNCATED: { /* max(min(hi, s2 erfinv(uniform(erf(lo / s2), erf(hi / s2)))), lo) */
        mc_meta m0 = mc_xp_meta_with(t, 0, NULL), lm = im[1], hm = im[2];
        uint64_t s2 = mc_mlxfn_scalar(x, sqrt(2.0), t);
        if (!s2)
            return 1;
        uint64_t a =
            mc_mlxfn_node1(x, "Erf", 1, &(uint64_t){mc_xp_binop(x, "Divide", in[1], &lm, s2, &m0, &lm)}, &lm);
        uint64_t b =
            mc_mlxfn_node1(x, "Erf", 1, &(uint64_t){mc_xp_binop(x, "Divide", in[2], &hm, s2, &m0, &hm)}, &hm);
        const mc_meta *rm = lm.ndim >= hm.ndim ? &lm : &hm; /* one element each, or the output's shape */
        if (!mc_xp_same_shape(&lm, rm->ndim, rm->shape) || !mc_xp_same_shape(&hm, rm->ndim, rm->shape))
            rm = out;
        uint64_t range = mc_xp_binop(x, "Subtract", b, &hm, a, &lm, rm);
        if (!(u = unit_uniform(x, in[0], out, t)))
            return 1;
        u = mc_xp_binop(x, "Add", mc_xp_binop(x, "Multiply", range, rm, u, out, out), out, a, &lm, out);
        e = mc_xp_binop(x, "Multiply", s2, &m0, mc_mlxfn_node1(x, "ErfInv", 1, &u, out), out, out);
        e = mc_xp_binop(x, "Minimum", in[2], &hm, e, out, out);
        *id = mc_xp_binop(x, "Maximum", e, out, in[1], &lm, out);
        return 0;
    }
    default: return mc_xp_unsupported(x, n, "no MLX composition is known for this distribution");
    }
}

/* MLX's permutation of n: argsort of n random words. */
int mc_xp_random_permutation(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    (void)im;
    int len = ((const mc_random_perm_params *)n->params)->n, axis = 0;
    mc_meta bm = mc_xp_meta_with(MLX_UINT32, 1, &len);
    uint64_t b = mc_mlxfn_begin(x, "RandomBits", 1, in);
    mc_wb_ints(mc_mlxfn_state(x), 1, &len);
    mc_wb_i32(mc_mlxfn_state(x), 4);
    mc_mlxfn_end(x, &bm);
    *id = mc_mlxfn_begin(x, "ArgSort", 1, &b);
    mc_wb_i32(mc_mlxfn_state(x), axis);
    mc_mlxfn_end(x, n->meta);
    return 0;
}
