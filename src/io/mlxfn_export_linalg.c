/* Owns exporting the LAPACK factorizations as MLX's primitives. */
#include "graph/primitive.h"
#include "graph/prims_linalg.h"
#include "io/mlxfn_export.h"

typedef const mc_mlxfn_node node_t;

/* MLX's factorizations. Ours pack a matrix's outputs along one last axis
 * (prims_linalg.h), which the linalg ops slice; where MLX's primitive has
 * several outputs, its record is followed by their packing (each output
 * flattened per matrix, of the packed dtype, concatenated), so the slices
 * after it read what they read here. */
int mc_xp_linalg(mc_mlxfn_exp *x, node_t *n, const uint64_t *in, const mc_meta *im, uint64_t *id)
{
    const mc_linalg_params *p = n->params;
    const mc_meta *a = &im[0];
    int nb = a->ndim - 2, m = a->shape[nb], c = a->shape[nb + 1], k = m < c ? m : c;
    mlx_dtype real = a->dtype == MLX_COMPLEX64 ? MLX_FLOAT32 : a->dtype;
    mc_meta outs[3];
    int n_out = 0;
    const char *name = mc_prim_name(n->prim, n->params);
    uint64_t r = mc_mlxfn_begin(x, name, 1, in);
    mc_wb *st = mc_mlxfn_state(x);
    switch (n->prim) {
    case MC_PRIM_INVERSE:
        mc_wb_bool(st, p->tri);
        mc_wb_bool(st, p->upper);
        break;
    case MC_PRIM_CHOLESKY: mc_wb_bool(st, p->upper); break;
    case MC_PRIM_QRF: /* Q (m x k), R (k x n) */
        outs[0] = *a;
        outs[0].shape[nb + 1] = k;
        outs[1] = *a;
        outs[1].shape[nb] = k;
        n_out = 2;
        break;
    case MC_PRIM_SVD: /* U (m x m), S (k), Vt (n x n); S alone without vectors */
        mc_wb_bool(st, p->vectors);
        if (p->vectors) {
            outs[0] = outs[1] = outs[2] = *a;
            outs[0].shape[nb + 1] = m;
            outs[1] = mc_xp_meta_with(real, nb + 1, a->shape);
            outs[1].shape[nb] = k;
            outs[2].shape[nb] = c;
            n_out = 3;
        }
        break;
    case MC_PRIM_EIG:
    case MC_PRIM_EIGH: { /* values (n), vectors (n x n) */
        if (n->prim == MC_PRIM_EIGH) {
            char uplo[2] = {(char)p->uplo, 0};
            mc_wb_string(st, uplo);
        }
        mc_wb_bool(st, p->vectors);
        if (p->vectors) {
            mlx_dtype vt = n->prim == MC_PRIM_EIG ? MLX_COMPLEX64 : a->dtype;
            outs[0] = mc_xp_meta_with(n->prim == MC_PRIM_EIG ? MLX_COMPLEX64 : real, nb + 1, a->shape);
            outs[1] = mc_xp_meta_with(vt, a->ndim, a->shape);
            n_out = 2;
        }
        break;
    }
    default: return mc_xp_unsupported(x, n, "MLX 0.31 cannot read it back from a file");
    }
    if (!n_out) {
        mc_mlxfn_end(x, n->meta);
        *id = r;
        return 0;
    }
    uint64_t ids[3];
    mc_mlxfn_end_multi(x, r, n_out, outs, ids);
    for (int i = 0; i < n_out; i++) { /* (batch..., elements) of the packed dtype */
        mc_meta o = outs[i];
        ids[i] = mc_xp_to_dtype(x, ids[i], &o, n->meta->dtype);
        if (o.ndim == nb + 2) {
            mc_meta f = o;
            f.ndim = nb + 1;
            f.shape[nb] = o.shape[nb] * o.shape[nb + 1];
            uint64_t fl = mc_mlxfn_begin(x, "Flatten", 1, &ids[i]);
            mc_wb_i32(mc_mlxfn_state(x), nb);
            mc_wb_i32(mc_mlxfn_state(x), nb + 1);
            mc_mlxfn_end(x, &f);
            ids[i] = fl;
            o = f;
        }
        outs[i] = o;
    }
    mc_meta packed;
    *id = mc_xp_concat_rec(x, ids, outs, n_out, nb, &packed);
    return 0;
}
