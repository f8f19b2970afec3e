/* Owns the importers of MLX primitives that become more than one node of
 * ours (mlxfn_import_multi.h): the factorizations, whose outputs we slice
 * out of one packed node as the linalg ops do; DivMod, DynamicSlice,
 * DynamicSliceUpdate, GatherQMM, MaskedScatter and BroadcastAxes, which we
 * compose of other primitives; Depends and Quantize, one node per output;
 * and the checks QuantizedMatmul's importer shares with GatherQMM's.
 *
 * MLX's ops check their arguments before they build these primitives; a
 * file can hold anything, so each importer checks here what the node it
 * builds would otherwise trust (counts, axes, dtypes, the quantized shapes)
 * and reports one "Bad file" message. */
#include <string.h>

#include "graph/build.h"
#include "graph/prims_linalg.h"
#include "graph/prims_quant.h"
#include "graph/prims_reduce.h"
#include "graph/prims_scatter.h"
#include "graph/prims_slice.h"
#include "io/mlxfn_import_multi.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "simd/reduce.h"

/* ---- helpers ---- */

/* Reads the outputs and checks there are n. */
static int n_out(mc_mlxfn_imp *c, int n)
{
    if (mc_mlxfn_imp_outputs(c))
        return 1;
    if (c->n_out != n)
        return mc_rd_fail(c->rd, "Bad file: %s has %d outputs here, the record declares %d", c->name, n, c->n_out);
    return 0;
}

/* Stores a reference to each of outs[0, n_out) (held by g) as the record's
 * results, then ends g. 0, or 1 when a step failed (it reported). */
static int finish(mc_mlxfn_imp *c, mc_gb *g, mc_array *const *outs)
{
    int rc = g->failed;
    for (int i = 0; i < c->n_out && !rc; i++) {
        if (!outs[i])
            rc = 1;
        else
            c->res[i] = mc_array_retain(outs[i]);
    }
    mc_gb_end(g);
    if (rc)
        c->rd->failed = true;
    return rc;
}

/* Normalises n axes of an ndim-d array into ax (each in range, once). */
static int axes_in_range(mc_mlxfn_imp *c, int n, const int *axes, int ndim, int *ax)
{
    for (int i = 0; i < n; i++) {
        int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
        if (a < 0 || a >= ndim)
            return mc_rd_fail(c->rd, "Bad file: %s has axis %d for %d dimensions", c->name, axes[i], ndim);
        for (int j = 0; j < i; j++)
            if (ax[j] == a)
                return mc_rd_fail(c->rd, "Bad file: %s repeats axis %d", c->name, axes[i]);
        ax[i] = a;
    }
    return 0;
}

/* ---- factorizations: one packed node, its parts sliced out ---- */

static mc_array *packed(mc_gb *g, mc_mlxfn_imp *c, int prim, mc_linalg_params p)
{
    mc_array *in[1] = {mc_gb_contiguous(g, c->in[0])};
    return in[0] ? mc_gb_hold(g, mc_node_new(g->fn, prim, in, 1, &p, sizeof p)) : NULL;
}

/* Elements [off, off + len) of each matrix's packed outputs, shaped batch
 * + dims (nd of them); the real part if real and the values are complex. */
static mc_array *unpack(mc_gb *g, mc_array *pk, int off, int len, int nd, const int *dims, bool real)
{
    if (!pk)
        return NULL;
    mc_slice_params p;
    memset(&p, 0, sizeof p);
    int last = pk->ndim - 1, shape[MC_MAX_NDIM];
    p.ndim = pk->ndim;
    for (int i = 0; i < pk->ndim; i++) {
        p.stop[i] = shape[i] = pk->shape[i];
        p.strides[i] = 1;
    }
    p.start[last] = off;
    p.stop[last] = off + len;
    for (int i = 0; i < nd; i++)
        shape[last + i] = dims[i];
    mc_array *r = mc_gb_reshape(g, mc_gb_slice(g, pk, &p), last + nd, shape);
    return real && r && r->dtype == MLX_COMPLEX64 ? mc_gb_unary(g, MC_U_REAL, r) : r;
}

static int rows(const mc_array *a) { return a->shape[a->ndim - 2]; }
static int cols(const mc_array *a) { return a->shape[a->ndim - 1]; }

/* A factorization with one output of MLX's shape (Inverse, Cholesky, and
 * SVD, Eig, Eigh without vectors). */
static int la_single(mc_mlxfn_imp *c, int prim, mc_linalg_params p)
{
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    mc_array *r = packed(&g, c, prim, p);
    return finish(c, &g, &r);
}

int mc_mlxfn_imp_inverse(mc_mlxfn_imp *c)
{
    bool tri, upper;
    if (mc_rd_bool(c->rd, &tri, "Inverse's tri") || mc_rd_bool(c->rd, &upper, "Inverse's upper") ||
        mc_mlxfn_imp_need_in(c, 1, 1) || n_out(c, 1))
        return 1;
    return la_single(c, MC_PRIM_INVERSE, (mc_linalg_params){.tri = tri, .upper = upper});
}

int mc_mlxfn_imp_cholesky(mc_mlxfn_imp *c)
{
    bool upper;
    if (mc_rd_bool(c->rd, &upper, "Cholesky's upper") || mc_mlxfn_imp_need_in(c, 1, 1) || n_out(c, 1))
        return 1;
    return la_single(c, MC_PRIM_CHOLESKY, (mc_linalg_params){.upper = upper});
}

int mc_mlxfn_imp_qrf(mc_mlxfn_imp *c)
{
    if (mc_mlxfn_imp_need_in(c, 1, 1) || n_out(c, 2))
        return 1;
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    mc_array *pk = packed(&g, c, MC_PRIM_QRF, (mc_linalg_params){0}), *outs[2] = {NULL, NULL};
    if (pk) { /* the node checked the input is a batch of matrices */
        int m = rows(c->in[0]), n = cols(c->in[0]), k = m < n ? m : n;
        outs[0] = unpack(&g, pk, 0, m * k, 2, (int[]){m, k}, false);
        outs[1] = unpack(&g, pk, m * k, k * n, 2, (int[]){k, n}, false);
    }
    return finish(c, &g, outs);
}

int mc_mlxfn_imp_svd(mc_mlxfn_imp *c)
{
    bool uv;
    if (mc_rd_bool(c->rd, &uv, "SVD's compute_uv") || mc_mlxfn_imp_need_in(c, 1, 1) || n_out(c, uv ? 3 : 1))
        return 1;
    mc_linalg_params p = {.vectors = uv};
    if (!uv)
        return la_single(c, MC_PRIM_SVD, p);
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    mc_array *pk = packed(&g, c, MC_PRIM_SVD, p), *outs[3] = {NULL, NULL, NULL};
    if (pk) {
        int m = rows(c->in[0]), n = cols(c->in[0]), k = m < n ? m : n;
        outs[0] = unpack(&g, pk, 0, m * m, 2, (int[]){m, m}, false);
        outs[1] = unpack(&g, pk, m * m, k, 1, &k, true);
        outs[2] = unpack(&g, pk, m * m + k, n * n, 2, (int[]){n, n}, false);
    }
    return finish(c, &g, outs);
}

/* Eig and Eigh: values (..., n), then with vectors (..., n, n). */
static int eig_common(mc_mlxfn_imp *c, int prim, mc_linalg_params p)
{
    if (mc_mlxfn_imp_need_in(c, 1, 1) || n_out(c, p.vectors ? 2 : 1))
        return 1;
    if (!p.vectors)
        return la_single(c, prim, p);
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    mc_array *pk = packed(&g, c, prim, p), *outs[2] = {NULL, NULL};
    if (pk) {
        int n = cols(c->in[0]);
        outs[0] = unpack(&g, pk, 0, n, 1, &n, prim == MC_PRIM_EIGH);
        outs[1] = unpack(&g, pk, n, n * n, 2, (int[]){n, n}, false);
    }
    return finish(c, &g, outs);
}

int mc_mlxfn_imp_eig(mc_mlxfn_imp *c)
{
    bool vectors;
    if (mc_rd_bool(c->rd, &vectors, "Eig's compute_eigenvectors"))
        return 1;
    return eig_common(c, MC_PRIM_EIG, (mc_linalg_params){.vectors = vectors});
}

int mc_mlxfn_imp_eigh(mc_mlxfn_imp *c)
{
    char *uplo = NULL;
    bool vectors;
    if (mc_rd_string(c->rd, 16, &uplo, "Eigh's uplo"))
        return 1;
    char u = uplo[0];
    bool ok = strlen(uplo) == 1 && (u == 'L' || u == 'U' || u == 'l' || u == 'u');
    mc_xfree(uplo);
    if (!ok)
        return mc_rd_fail(c->rd, "Bad file: Eigh's uplo is not L or U");
    if (mc_rd_bool(c->rd, &vectors, "Eigh's compute_eigenvectors"))
        return 1;
    return eig_common(c, MC_PRIM_EIGH, (mc_linalg_params){.vectors = vectors, .uplo = u});
}

/* ---- DivMod ---- */

/* MLX's DivMod: both outputs of the composition mlx_divmod builds (MLX
 * has already promoted the operands to one dtype). */
int mc_mlxfn_imp_divmod(mc_mlxfn_imp *c)
{
    if (mc_mlxfn_imp_need_in(c, 2, 2) || n_out(c, 2))
        return 1;
    mc_array *x = c->in[0], *y = c->in[1];
    mlx_dtype t = x->dtype;
    if (y->dtype != t || t == MLX_COMPLEX64 || t == MLX_BOOL)
        return mc_rd_fail(c->rd, "Bad file: DivMod of %s and %s", mc_dtype_name(t), mc_dtype_name(y->dtype));
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    mc_array *outs[2] = {NULL, NULL};
    mc_gb_divmod(&g, x, y, t, outs);
    return finish(c, &g, outs);
}

/* ---- dynamic slices: a Gather or Scatter at 0-d indices ---- */

/* Checks start (1-d or 0-d, integer, one entry per axis) and the axes of
 * a (normalised into ax), then splits start into 0-d arrays held by g. */
static int dyn_starts(mc_mlxfn_imp *c, mc_gb *g, const mc_array *a, mc_array *start, int n, const int *axes,
                      int *ax, mc_array **idx)
{
    if (start->ndim > 1 || !mc_dtype_is_integer(start->dtype) || start->size != (size_t)n || n < 1)
        return mc_rd_fail(c->rd, "Bad file: %s has %d axes and a %d-d %s start of %zu entries", c->name, n,
                          start->ndim, mc_dtype_name(start->dtype), start->size);
    if (axes_in_range(c, n, axes, a->ndim, ax))
        return 1;
    mc_array *flat = mc_gb_reshape(g, start, 1, &n);
    for (int i = 0; i < n; i++) {
        mc_slice_params p;
        memset(&p, 0, sizeof p);
        p.ndim = 1;
        p.start[0] = i;
        p.stop[0] = i + 1;
        p.strides[0] = 1;
        idx[i] = mc_gb_reshape(g, mc_gb_slice(g, flat, &p), 0, NULL);
    }
    return 0;
}

int mc_mlxfn_imp_dynamic_slice(mc_mlxfn_imp *c)
{
    int n, axes[MC_MAX_NDIM], ns, size[MC_MAX_NDIM];
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &n, axes, "DynamicSlice's axes") ||
        mc_rd_shape(c->rd, &ns, size, "DynamicSlice's slice size") || mc_mlxfn_imp_need_in(c, 2, 2) || n_out(c, 1))
        return 1;
    mc_array *a = c->in[0];
    if (ns != a->ndim)
        return mc_rd_fail(c->rd, "Bad file: DynamicSlice has %d slice sizes for %d dimensions", ns, a->ndim);
    for (int d = 0; d < ns; d++)
        if (size[d] > a->shape[d])
            return mc_rd_fail(c->rd, "Bad file: DynamicSlice's size %d is larger than axis %d (%d)", size[d], d,
                              a->shape[d]);
    int ax[MC_MAX_NDIM];
    mc_array *idx[MC_MAX_NDIM];
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    if (dyn_starts(c, &g, a, c->in[1], n, axes, ax, idx)) {
        mc_gb_end(&g);
        return 1;
    }
    mc_array *r = mc_gb_gather(&g, a, idx, n, ax, size);
    return finish(c, &g, &r);
}

/* MLX has already given the update src's dtype and number of dimensions. */
int mc_mlxfn_imp_dynamic_slice_update(mc_mlxfn_imp *c)
{
    int n, axes[MC_MAX_NDIM];
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &n, axes, "DynamicSliceUpdate's axes") || mc_mlxfn_imp_need_in(c, 3, 3) ||
        n_out(c, 1))
        return 1;
    mc_array *src = c->in[0], *upd = c->in[1];
    if (upd->ndim != src->ndim || upd->dtype != src->dtype)
        return mc_rd_fail(c->rd, "Bad file: DynamicSliceUpdate writes a %d-d %s update into a %d-d %s array",
                          upd->ndim, mc_dtype_name(upd->dtype), src->ndim, mc_dtype_name(src->dtype));
    for (int d = 0; d < src->ndim; d++)
        if (upd->shape[d] > src->shape[d])
            return mc_rd_fail(c->rd, "Bad file: DynamicSliceUpdate's update is larger than the array on axis %d",
                              d);
    int ax[MC_MAX_NDIM];
    mc_array *idx[MC_MAX_NDIM];
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    if (dyn_starts(c, &g, src, c->in[2], n, axes, ax, idx)) {
        mc_gb_end(&g);
        return 1;
    }
    mc_array *r = mc_gb_scatter(&g, src, idx, n, ax, upd, MC_SCATTER_SLICE_UPDATE);
    return finish(c, &g, &r);
}

/* ---- quantized products ---- */

/* MLX's group sizes and bits per mode (the ones its kernels have). */
static int quant_params_ok(mc_mlxfn_imp *c, int gs, int bits, int mode)
{
    bool ok;
    switch (mode) {
    case MC_QMODE_AFFINE: ok = (gs == 32 || gs == 64 || gs == 128) && bits >= 2 && bits <= 8 && bits != 7; break;
    case MC_QMODE_MXFP4: ok = gs == 32 && bits == 4; break;
    case MC_QMODE_MXFP8: ok = gs == 32 && bits == 8; break;
    case MC_QMODE_NVFP4: ok = gs == 16 && bits == 4; break;
    default: return mc_rd_fail(c->rd, "Bad file: %s in unknown quantization mode %d", c->name, mode);
    }
    if (!ok)
        return mc_rd_fail(c->rd, "Bad file: %s with group size %d and %d bits in mode %d", c->name, gs, bits,
                          mode);
    return 0;
}

int mc_mlxfn_qmm_check(mc_mlxfn_imp *c, const mc_array *x, const mc_array *w, const mc_array *sc,
                       const mc_array *bi, int gs, int bits, int mode, bool transpose, bool batched_w)
{
    if (quant_params_ok(c, gs, bits, mode))
        return 1;
    bool affine = mode == MC_QMODE_AFFINE;
    bool ok = w->dtype == MLX_UINT32 && w->ndim >= 2 && sc->ndim == w->ndim && x->ndim >= 1 &&
              mc_dtype_is_float(x->dtype) && (affine ? sc->dtype == x->dtype : sc->dtype == MLX_UINT8);
    for (int d = 0; ok && d < w->ndim - 2; d++)
        ok = sc->shape[d] == w->shape[d];
    if (ok && affine)
        ok = bi->dtype == sc->dtype && mc_array_has_shape(bi, sc->ndim, sc->shape);
    int64_t k = ok ? (int64_t)w->shape[w->ndim - 1] * 32 / bits : 0;
    if (ok)
        ok = (int64_t)w->shape[w->ndim - 1] * 32 % bits == 0 && k == (int64_t)sc->shape[sc->ndim - 1] * gs &&
             sc->shape[sc->ndim - 2] == w->shape[w->ndim - 2] &&
             (transpose ? k : w->shape[w->ndim - 2]) == x->shape[x->ndim - 1];
    if (ok && !batched_w && w->ndim > 2)
        ok = x->ndim == w->ndim && !memcmp(x->shape, w->shape, sizeof(int) * (size_t)(w->ndim - 2));
    if (!ok)
        return mc_rd_fail(c->rd, "Bad file: %s of a %d-d %s x, a %d-d %s w and %d-d %s scales that do not fit",
                          c->name, x->ndim, mc_dtype_name(x->dtype), w->ndim, mc_dtype_name(w->dtype), sc->ndim,
                          mc_dtype_name(sc->dtype));
    return 0;
}

/* a (..., r, c) as (B, r, c), B the product of its batch dims. */
static mc_array *flat3(mc_gb *g, mc_array *a)
{
    int b = 1;
    for (int d = 0; d < a->ndim - 2; d++)
        b *= a->shape[d];
    return mc_gb_reshape(g, a, 3, (int[]){b, a->shape[a->ndim - 2], a->shape[a->ndim - 1]});
}

/* MLX's GatherQMM: x (..., M, K) and w with its scales (and biases), both
 * indices uint32 of one shape I (MLX broadcasts them). Output I + (M, N):
 * product j is x's matrix lhs[j] times w's matrix rhs[j]. Composed: both
 * sides' selected matrices are taken, then multiplied pair by pair. */
int mc_mlxfn_imp_gather_qmm(mc_mlxfn_imp *c)
{
    int32_t gs, bits, mode;
    bool transpose, ls, rs;
    if (mc_rd_i32(c->rd, &gs, "GatherQMM's group size") || mc_rd_i32(c->rd, &bits, "GatherQMM's bits") ||
        mc_rd_i32(c->rd, &mode, "GatherQMM's mode") || mc_rd_bool(c->rd, &transpose, "GatherQMM's transpose") ||
        mc_rd_bool(c->rd, &ls, "GatherQMM's left_sorted") || mc_rd_bool(c->rd, &rs, "GatherQMM's right_sorted"))
        return 1;
    if (quant_params_ok(c, gs, bits, mode))
        return 1;
    bool affine = mode == MC_QMODE_AFFINE;
    int nq = affine ? 4 : 3;
    if (mc_mlxfn_imp_need_in(c, nq + 2, nq + 2) || n_out(c, 1))
        return 1;
    mc_array *x = c->in[0], *li = c->in[nq], *ri = c->in[nq + 1];
    if (x->ndim < 2 || li->dtype != MLX_UINT32 || ri->dtype != MLX_UINT32 ||
        !mc_array_has_shape(ri, li->ndim, li->shape) || li->ndim + 2 > MC_MAX_NDIM || li->size > 0x7fffffff)
        return mc_rd_fail(c->rd,
                          "Bad file: GatherQMM's indices are not uint32 of one shape, or x is not a matrix");
    if (mc_mlxfn_qmm_check(c, x, c->in[1], c->in[2], affine ? c->in[3] : NULL, gs, bits, mode, transpose, true))
        return 1;
    for (int i = 0; i < 2; i++) { /* flat3 counts the batches in an int */
        const mc_array *a = c->in[i];
        int64_t b = 1;
        for (int d = 0; d < a->ndim - 2 && b <= 0x7fffffff; d++)
            b *= a->shape[d];
        if (b > 0x7fffffff)
            return mc_rd_fail(c->rd, "Bad file: GatherQMM over more than 2^31 - 1 matrices");
    }
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    int p = (int)li->size;
    mc_array *lf = mc_gb_reshape(&g, li, 1, &p), *rf = mc_gb_reshape(&g, ri, 1, &p);
    mc_array *in[4] = {mc_gb_gather_axis(&g, flat3(&g, x), lf, 0, 0), NULL, NULL, NULL};
    for (int i = 1; i < nq; i++)
        in[i] = mc_gb_gather_axis(&g, flat3(&g, c->in[i]), rf, 0, 0);
    mc_array *y = NULL;
    if (!g.failed)
        y = mc_gb_hold(
            &g, mc_node_quantized_matmul(in[0], in[1], in[2], in[3], gs, bits, (mc_qmode)mode, transpose, g.fn));
    mc_array *r = NULL;
    if (y) {
        int shape[MC_MAX_NDIM];
        memcpy(shape, li->shape, sizeof(int) * (size_t)li->ndim);
        shape[li->ndim] = y->shape[1];
        shape[li->ndim + 1] = y->shape[2];
        r = mc_gb_reshape(&g, y, li->ndim + 2, shape);
    }
    return finish(c, &g, &r);
}

/* ---- MaskedScatter ---- */

/* MLX's MaskedScatter: dst, a bool mask of dst's shape and the source, in
 * batches along axis 0: within batch b, the k-th true mask element takes
 * element k of the source's batch b (its size / the batch count elements
 * in row-major order). Composed: an exclusive running count of the mask
 * indexes the source, and where() keeps dst elsewhere. Where MLX fails
 * because a batch's source runs short, the last source element repeats. */
int mc_mlxfn_imp_masked_scatter(mc_mlxfn_imp *c)
{
    if (mc_mlxfn_imp_need_in(c, 3, 3) || n_out(c, 1))
        return 1;
    mc_array *dst = c->in[0], *mask = c->in[1], *src = c->in[2];
    if (mask->dtype != MLX_BOOL || !mc_array_has_shape(mask, dst->ndim, dst->shape) || dst->ndim < 1 ||
        src->dtype != dst->dtype || dst->size > 0x7fffffff || src->size > 0x7fffffff)
        return mc_rd_fail(c->rd, "Bad file: MaskedScatter's mask is not bool of the array's shape, or its source "
                                 "is of another dtype");
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    int b = mask->shape[0], per = b ? (int)(mask->size / (size_t)b) : 0,
        sper = b ? (int)(src->size / (size_t)b) : 0;
    mc_array *r = dst;
    if (b && per && sper) {
        int total = (int)src->size, used = b * sper;
        mc_array *sflat = mc_gb_reshape(&g, src, 1, &total);
        if (used != total) {
            mc_slice_params p;
            memset(&p, 0, sizeof p);
            p.ndim = 1;
            p.stop[0] = used;
            p.strides[0] = 1;
            sflat = mc_gb_slice(&g, sflat, &p);
        }
        mc_array *s2 = mc_gb_reshape(&g, sflat, 2, (int[]){b, sper});
        mc_array *m2 = mc_gb_reshape(&g, mask, 2, (int[]){b, per});
        mc_array *pos = mc_gb_scan(&g, mc_gb_astype(&g, m2, MLX_INT32), MC_S_SUM, 1, false, false);
        pos = mc_gb_binary(&g, MC_B_MINIMUM, pos, mc_gb_scalar(&g, sper - 1, MLX_INT32), MLX_INT32);
        mc_array *vals = mc_gb_reshape(&g, mc_gb_gather_axis(&g, s2, pos, 1, 1), dst->ndim, dst->shape);
        r = mc_gb_where(&g, mask, vals, dst);
    }
    return finish(c, &g, &r);
}

/* ---- BroadcastAxes, Depends, Quantize ---- */

/* MLX's BroadcastAxes: input 0 broadcast with the others, except on the
 * ignored (negative) axes, where input 0 keeps its sizes. The others give
 * only their shapes, which a shapeless import learns at call time: so
 * where(true, a, b') with each b' the other input reduced to size 1 on the
 * ignored axes (values unused). */
int mc_mlxfn_imp_broadcast_axes(mc_mlxfn_imp *c)
{
    int n, axes[MC_MAX_NDIM];
    if (mc_rd_ints(c->rd, MC_MAX_NDIM, &n, axes, "BroadcastAxes' ignored axes") ||
        mc_mlxfn_imp_need_in(c, 1, 1 << 10) || n_out(c, 1))
        return 1;
    for (int j = 0; j < c->n_in; j++)
        for (int i = 0; i < n; i++)
            if (axes[i] >= 0 || axes[i] < -c->in[j]->ndim)
                return mc_rd_fail(c->rd, "Bad file: BroadcastAxes ignores axis %d of a %d-d input", axes[i],
                                  c->in[j]->ndim);
    mc_gb g;
    mc_gb_begin(&g, c->rd->fn);
    mc_array *r = c->in[0];
    bool t = true;
    mc_array *yes = c->n_in > 1 ? mc_gb_hold(&g, mc_array_scalar(g.fn, MLX_BOOL, &t)) : NULL;
    for (int j = 1; j < c->n_in; j++) {
        int ax[MC_MAX_NDIM];
        if (axes_in_range(c, n, axes, c->in[j]->ndim, ax)) {
            mc_gb_end(&g);
            return 1;
        }
        /* sorted: the axes are distinct and negative, so reverse order sorts */
        int sorted[MC_MAX_NDIM];
        for (int i = 0; i < n; i++)
            sorted[i] = ax[i];
        for (int i = 1; i < n; i++)
            for (int k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
                int tmp = sorted[k];
                sorted[k] = sorted[k - 1];
                sorted[k - 1] = tmp;
            }
        mc_array *b = n ? mc_gb_reduce(&g, c->in[j], MC_RK_ANY, sorted, n) : c->in[j];
        r = mc_gb_where(&g, yes, r, mc_gb_astype(&g, b, r ? r->dtype : MLX_BOOL));
    }
    return finish(c, &g, &r);
}

/* MLX's Depends: its first n_out inputs pass through once all its inputs
 * are computed; ours is one node per output over that input and the rest. */
int mc_mlxfn_imp_depends(mc_mlxfn_imp *c)
{
    if (mc_mlxfn_imp_outputs(c))
        return 1;
    if (c->n_out > c->n_in)
        return mc_rd_fail(c->rd, "Bad file: Depends has %d outputs and %d inputs", c->n_out, c->n_in);
    int nd = c->n_in - c->n_out;
    mc_array **in = mc_xcalloc((size_t)nd + 1, sizeof *in);
    if (!in) {
        c->rd->failed = true;
        return mc_error_oom(c->rd->fn, ((size_t)nd + 1) * sizeof *in);
    }
    if (nd)
        memcpy(in + 1, c->in + c->n_out, (size_t)nd * sizeof *in);
    int rc = 0;
    for (int i = 0; i < c->n_out && !rc; i++) {
        in[0] = c->in[i];
        c->res[i] = mc_node_new(c->rd->fn, MC_PRIM_DEPENDS, in, nd + 1, NULL, 0);
        rc = c->res[i] == NULL;
    }
    mc_xfree(in);
    if (rc)
        c->rd->failed = true;
    return rc;
}

/* fast::Quantize: quantizes w (one node per output: the packed values, the
 * scales, and in affine mode the biases), or with dequantize set turns
 * packed w, scales and biases back (affine only here). */
int mc_mlxfn_imp_quantize(mc_mlxfn_imp *c)
{
    int32_t gs, bits, mode;
    bool deq;
    if (mc_rd_i32(c->rd, &gs, "Quantize's group size") || mc_rd_i32(c->rd, &bits, "Quantize's bits") ||
        mc_rd_i32(c->rd, &mode, "Quantize's mode") || mc_rd_bool(c->rd, &deq, "Quantize's dequantize") ||
        quant_params_ok(c, gs, bits, mode))
        return 1;
    bool affine = mode == MC_QMODE_AFFINE;
    if (deq) {
        if (!affine)
            return mc_rd_fail(c->rd,
                              "Quantize's dequantize form in mode %d: mlx-cpu imports it in affine mode "
                              "only",
                              (int)mode);
        if (mc_mlxfn_imp_need_in(c, 3, 3) || n_out(c, 1))
            return 1;
        mc_array *w = c->in[0], *sc = c->in[1], *bi = c->in[2];
        bool ok = w->dtype == MLX_UINT32 && w->ndim >= 1 && mc_dtype_is_float(sc->dtype) &&
                  bi->dtype == sc->dtype && mc_array_has_shape(bi, sc->ndim, sc->shape) && sc->ndim == w->ndim &&
                  !memcmp(sc->shape, w->shape, sizeof(int) * (size_t)(w->ndim - 1)) &&
                  (int64_t)w->shape[w->ndim - 1] * 32 % bits == 0 &&
                  (int64_t)w->shape[w->ndim - 1] * 32 / bits == (int64_t)sc->shape[sc->ndim - 1] * gs;
        if (!ok)
            return mc_rd_fail(c->rd, "Bad file: Quantize's packed w, scales and biases do not fit");
        c->res[0] = mc_node_dequantize(w, sc, bi, gs, bits, c->rd->fn);
        return c->res[0] ? 0 : (c->rd->failed = true, 1);
    }
    int nout = affine ? 3 : 2;
    if (mc_mlxfn_imp_need_in(c, 1, mode == MC_QMODE_NVFP4 ? 2 : 1) || n_out(c, nout))
        return 1;
    const mc_array *w = c->in[0];
    if (!mc_dtype_is_float(w->dtype) || w->dtype == MLX_FLOAT64 || w->ndim < 2 ||
        w->shape[w->ndim - 1] % gs != 0 ||
        (c->n_in == 2 && (c->in[1]->dtype != MLX_FLOAT32 || c->in[1]->size != 1)))
        return mc_rd_fail(c->rd, "Bad file: Quantize of a %d-d %s array by groups of %d", w->ndim,
                          mc_dtype_name(w->dtype), gs);
    for (int i = 0; i < nout; i++) {
        mc_quant_params p = {0};
        p.group_size = gs;
        p.bits = bits;
        p.mode = mode;
        p.which = i;
        c->res[i] = mc_node_new(c->rd->fn, MC_PRIM_QUANTIZE, c->in, c->n_in, &p, sizeof p);
        if (!c->res[i]) {
            c->rd->failed = true;
            return 1;
        }
    }
    return 0;
}
