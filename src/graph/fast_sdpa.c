/* Attention for the ScaledDotProductAttention primitive (prims_fast.c):
 * tiled, with an online softmax, so no Lq x Lk matrix ever exists.
 *
 * Two paths share the per-key-block steps: scores = Q K^T, the mask
 * (array or causal) applied to the tile, the running max / sum and the
 * accumulator updated in one pass (simd/fast.h's softmax step), acc += P V;
 * at the end out = acc / sum. A sink starts a row's state as a key of
 * score `sink` and value 0. Keys that the causal rule hides from every row
 * of a block are skipped, unless some row of the block sees no key at all
 * (MLX then averages every value, all scores being the lowest finite
 * number).
 *
 * - The panel path (float32, float16, bfloat16; computed in float32): the
 *   products are simd/attn_k.c's register-blocked kernel on query panels
 *   (see panel_item). float32 K and V with contiguous rows are read in
 *   place, so no operand is packed per block as sgemm would pack it; the
 *   half types are converted once per kv head and query range.
 * - The BLAS path (float64, and half-type or strided K and V whose
 *   conversion would pass PANEL_BUDGET): one item per (batch, query head,
 *   block of BQ queries), the products by sgemm / dgemm per tile.
 *
 * Scratch is allocated before the pool starts: per thread on the panel
 * path (about 0.3 MiB for D = 128 in float32, plus 32 bytes a key), per
 * chunk (at most 4 per thread, about 0.8 MiB each) on the BLAS path. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/blas.h"
#include "graph/prims_fast.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/fast.h"

/* sgemm packs a K or V tile again for every query block that uses it:
 * 256 query rows pay that a quarter as often as 64 did (6% less time at
 * L = 1024, D = 128), and the block's scratch still fits a 1 MiB L2.
 * Larger tiles do not pay on a 1 MiB L2: OpenBLAS's own products at
 * L 1024, D 128, 32 heads, one core (CPU time) take 183 ms as 256 x 256
 * tiles, 188-190 ms as 512 x 256 or 512 x 512, 193 ms as 256 x 1024 and
 * 210 ms as whole 1024 x 1024 heads (its 4096^3 peak: 178 ms of work). */
enum { BQ = 256, BK = 256 };

typedef struct sdpa_job {
    const mc_sdpa_params *p;
    const mc_fast_kernels *fk;
    int dt, mdt;
    bool f64;
    int B, Hq, R, Lq, Lk, D, Dv;
    const char *q, *k, *v, *mask, *sinks;
    int64_t qs[4], ks[4], vs[4], ms[4];
    char *y;
    size_t isz, msz, nqb, items, chunks, per_chunk; /* per_chunk: scratch elements */
    char *scratch;
    atomic_int failed; /* a BLAS call refused its sizes (not below INT_MAX) */
    /* the panel path (float32 compute): */
    int Hk;
    size_t mr, nr, bk, dvp, npan, nsplit;
    atomic_size_t next; /* the next item a slot claims */
} sdpa_job;

static double lowest_of(int dt)
{
    switch (dt) {
    case MLX_FLOAT16: return -65504.0;
    case MLX_BFLOAT16: return -3.38953138925153547590e38;
    case MLX_FLOAT64: return -DBL_MAX;
    default: return -FLT_MAX;
    }
}

static int gemm(const sdpa_job *j, int m, int n, int k, const void *a, int64_t lda, const void *b, int64_t ldb,
                bool btrans, float beta, void *c)
{
    mc_blas_matmul_args g = {.dtype = j->f64 ? MLX_FLOAT64 : MLX_FLOAT32,
                             .m = m,
                             .n = n,
                             .k = k,
                             .alpha = 1.0f,
                             .beta = beta,
                             .a = {a, false, lda, NULL},
                             .b = {b, btrans, ldb, NULL},
                             .c = c};
    return mc_blas_matmul(&g, "scaled_dot_product_attention");
}

/* One item in float (f64 == false) or double. The two builds differ only
 * in their element type and kernel names. */
#define SDPA_ITEM(NAME, T, SFX, IS64)                                                                             \
    static void NAME(sdpa_job *j, size_t item, T *scr)                                                            \
    {                                                                                                             \
        int qb = (int)(item % j->nqb), h = (int)(item / j->nqb % (size_t)j->Hq);                                  \
        int b = (int)(item / j->nqb / (size_t)j->Hq), kh = h / j->R;                                              \
        int i0 = qb * BQ, rows = j->Lq - i0 < BQ ? j->Lq - i0 : BQ;                                               \
        int D = j->D, Dv = j->Dv;                                                                                 \
        T *Q = scr, *S = Q + (size_t)BQ * D, *Kt = S + (size_t)BQ * BK, *Vt = Kt + (size_t)BK * D;                \
        T *acc = Vt + (size_t)BK * Dv, *m = acc + (size_t)BQ * Dv, *l = m + BQ;                                   \
        const char *qp = j->q + (j->qs[0] * b + j->qs[1] * h + j->qs[2] * i0) * (int64_t)j->isz;                  \
        const char *kp = j->k + (j->ks[0] * b + j->ks[1] * kh) * (int64_t)j->isz;                                 \
        const char *vp = j->v + (j->vs[0] * b + j->vs[1] * kh) * (int64_t)j->isz;                                 \
        mc_fast_load_tile_##SFX(j->dt, qp, j->qs[2], j->qs[3], (size_t)rows, (size_t)D, Q, (size_t)D,             \
                                (T)j->p->scale);                                                                  \
        T m0 = -(T)INFINITY, l0 = 0;                                                                              \
        if (j->sinks) {                                                                                           \
            T sk;                                                                                                 \
            mc_fast_load_tile_##SFX(j->dt, j->sinks + (int64_t)h * (int64_t)j->isz, 0, 1, 1, 1, &sk, 1, 1);       \
            m0 = sk;                                                                                              \
            l0 = 1;                                                                                               \
        }                                                                                                         \
        for (int i = 0; i < rows; i++) {                                                                          \
            m[i] = m0;                                                                                            \
            l[i] = l0;                                                                                            \
        }                                                                                                         \
        memset(acc, 0, sizeof(T) * (size_t)rows * (size_t)Dv);                                                    \
        int64_t diag = (int64_t)j->Lk - j->Lq;                                                                    \
        int kend = j->Lk;                                                                                         \
        if (j->p->causal && i0 + diag >= 0 && i0 + rows + diag < j->Lk)                                           \
            kend = (int)(i0 + rows + diag);                                                                       \
        T lowest = (T)lowest_of(j->dt);                                                                           \
        bool direct = !IS64 && j->dt == MLX_FLOAT32;                                                              \
        for (int j0 = 0; j0 < kend; j0 += BK) {                                                                   \
            int cols = kend - j0 < BK ? kend - j0 : BK;                                                           \
            const void *kt = kp + j->ks[2] * j0 * (int64_t)j->isz, *vt = vp + j->vs[2] * j0 * (int64_t)j->isz;    \
            int64_t ldk = j->ks[2], ldv = j->vs[2];                                                               \
            if (!(direct && j->ks[3] == 1 && ldk >= D && ldk > 0)) {                                              \
                mc_fast_load_tile_##SFX(j->dt, kt, j->ks[2], j->ks[3], (size_t)cols, (size_t)D, Kt, (size_t)D,    \
                                        1);                                                                       \
                kt = Kt;                                                                                          \
                ldk = D;                                                                                          \
            }                                                                                                     \
            if (!(direct && j->vs[3] == 1 && ldv >= Dv && ldv > 0)) {                                             \
                mc_fast_load_tile_##SFX(j->dt, vt, j->vs[2], j->vs[3], (size_t)cols, (size_t)Dv, Vt, (size_t)Dv,  \
                                        1);                                                                       \
                vt = Vt;                                                                                          \
                ldv = Dv;                                                                                         \
            }                                                                                                     \
            if (D == 0)                                                                                           \
                memset(S, 0, sizeof(T) * (size_t)rows * (size_t)cols);                                            \
            else if (gemm(j, rows, cols, D, Q, D, kt, ldk, true, 0.0f, S))                                        \
                atomic_store(&j->failed, 1);                                                                      \
            if (j->mask)                                                                                          \
                mc_fast_mask_tile_##SFX(                                                                          \
                    j->mdt,                                                                                       \
                    j->mask + (j->ms[0] * b + j->ms[1] * h + j->ms[2] * i0 + j->ms[3] * j0) * (int64_t)j->msz,    \
                    j->ms[2], j->ms[3], S, (size_t)rows, (size_t)cols, (size_t)cols, 1, 0, 0, 0, lowest);         \
            else if (j->p->causal)                                                                                \
                mc_fast_mask_tile_##SFX(0, NULL, 0, 0, S, (size_t)rows, (size_t)cols, (size_t)cols, 1, i0, j0,   \
                                        diag, lowest);                                                                  \
            j->fk->softmax_tile_##SFX(S, (size_t)rows, (size_t)cols, (size_t)cols, m, l, acc, (size_t)Dv,         \
                                      (size_t)Dv);                                                                \
            if (Dv > 0 && gemm(j, rows, Dv, cols, S, cols, vt, ldv, false, 1.0f, acc))                            \
                atomic_store(&j->failed, 1);                                                                      \
        }                                                                                                         \
        char *yp = j->y + (((int64_t)b * j->Hq + h) * j->Lq + i0) * (int64_t)Dv * (int64_t)j->isz;                \
        mc_fast_store_rows_##SFX(j->dt, acc, (size_t)rows, (size_t)Dv, (size_t)Dv, 1, l, yp, Dv);                    \
    }
SDPA_ITEM(item_f32, float, f32, false)
SDPA_ITEM(item_f64, double, f64, true)

/* Scratch per thread above which the panel path gives way (only when K
 * and V must be converted whole: half types or strided rows). */
enum { PANEL_BUDGET = 16 << 20 };

/* Keys per block of the panel path: a panel's scores (256 x 32 floats,
 * 32 KiB) stay in L1 or close to it while P V reads them. */
enum { PANEL_BK = 256 };

/* Query panels that walk the keys together (256 queries at nr 32): as
 * BQ for the BLAS path, a block of K and V is then fetched into L2 once
 * for that many queries, not once per panel (a head's K and V exceed L2
 * at long L). */
enum { PANEL_GROUP = 8 };

/* ---- The panel path: float32, float16 and bfloat16 (computed in float32).
 * An item is (batch, kv head, a range of query panels of nr queries) for
 * all R query heads that share the kv head. Unless read in place, it
 * packs K (panels of mr keys) and V (as its transpose, panels of mr value
 * columns) once, as far as the item's queries see. Each group of query
 * panels (Q packed as panels of nr, times scale) then walks the keys in
 * blocks of bk with the kernels' own product (attn_gemm), K or V the
 * broadcast operand: scores come out as a panel (key-major, nr queries
 * per key), which is the layout the softmax step wants (elementwise over
 * the nr queries, no reduction across lanes) and the one the P V product
 * reads, so nothing is packed per block; the accumulator is a panel too
 * (value column-major), transposed once by the final store. */

/* Keys [0, kend) that a query panel from q0 (rows queries) must visit: as
 * the BLAS path, the causal rule skips keys hidden from every row, unless
 * some row sees no key at all. */
static int panel_kend(const sdpa_job *j, int q0, int rows)
{
    int64_t diag = (int64_t)j->Lk - j->Lq;
    if (j->p->causal && q0 + diag >= 0 && q0 + rows + diag < j->Lk)
        return (int)(q0 + rows + diag);
    return j->Lk;
}

/* Whether K and V are read in place: float32 with contiguous rows.
 * Otherwise (half types, strided rows) each item converts them into
 * panels first. */
static bool panel_direct(const sdpa_job *j)
{
    return j->dt == MLX_FLOAT32 && j->ks[3] == 1 && j->vs[3] == 1;
}

static void panel_item(sdpa_job *j, size_t item, float *scr)
{
    const mc_fast_kernels *fk = j->fk;
    size_t mr = j->mr, nr = j->nr, bk = j->bk, dvp = j->dvp;
    size_t sp = item % j->nsplit;
    int kvh = (int)(item / j->nsplit % (size_t)j->Hk), b = (int)(item / j->nsplit / (size_t)j->Hk);
    size_t p0 = sp * j->npan / j->nsplit, p1 = (sp + 1) * j->npan / j->nsplit;
    int D = j->D, Dv = j->Dv;
    int kpack = 0;
    for (size_t p = p0; p < p1; p++) {
        int q0 = (int)(p * nr), rows = j->Lq - q0 < (int)nr ? j->Lq - q0 : (int)nr;
        int ke = panel_kend(j, q0, rows);
        kpack = ke > kpack ? ke : kpack;
    }
    if (kpack == 0)
        return;
    const char *kb = j->k + (j->ks[0] * b + j->ks[1] * kvh) * (int64_t)j->isz;
    const char *vb = j->v + (j->vs[0] * b + j->vs[1] * kvh) * (int64_t)j->isz;
    /* a group of up to PANEL_GROUP query panels walks the keys together,
     * so each block of K and V is read from memory once per group */
    size_t G = PANEL_GROUP;
    float *Qp = scr, *acc = Qp + G * nr * (size_t)D, *m = acc + G * dvp * nr, *l = m + G * nr;
    float *St = l + G * nr, *Kp = St + bk * nr, *Vp;
    /* In place, only the last panel of keys (if partial) and of value
     * columns (if partial) are packed, zero-padded: a full panel would
     * read past K's or V's last row. */
    bool direct = panel_direct(j);
    size_t kfull = direct ? (size_t)kpack / mr * mr : 0, dfull = direct ? (size_t)Dv / mr * mr : 0;
    size_t kpanels = ((size_t)kpack - kfull + mr - 1) / mr;
    Vp = Kp + kpanels * mr * (size_t)D;
    mc_fast_pack_f32(j->dt, kb + j->ks[2] * (int64_t)kfull * (int64_t)j->isz, j->ks[2], j->ks[3],
                     (size_t)kpack - kfull, (size_t)D, mr, Kp, 1.0f);
    mc_fast_pack_f32(j->dt, vb + j->vs[3] * (int64_t)dfull * (int64_t)j->isz, j->vs[3], j->vs[2],
                     (size_t)Dv - dfull, (size_t)kpack, mr, Vp, 1.0f);
    const float *kf = (const float *)(const void *)kb, *vf = (const float *)(const void *)vb;
    float lowest = (float)lowest_of(j->dt);
    int64_t diag = (int64_t)j->Lk - j->Lq;
    for (int r = 0; r < j->R; r++) {
        int h = kvh * j->R + r;
        float m0 = -INFINITY, l0 = 0;
        if (j->sinks) {
            mc_fast_load_tile_f32(j->dt, j->sinks + (int64_t)h * (int64_t)j->isz, 0, 1, 1, 1, &m0, 1, 1);
            l0 = 1;
        }
        for (size_t pg = p0; pg < p1; pg += G) {
            size_t np = p1 - pg < G ? p1 - pg : G;
            int kmax = 0;
            for (size_t g = 0; g < np; g++) {
                int q0 = (int)((pg + g) * nr), rows = j->Lq - q0 < (int)nr ? j->Lq - q0 : (int)nr;
                mc_fast_pack_f32(j->dt, j->q + (j->qs[0] * b + j->qs[1] * h + j->qs[2] * q0) * (int64_t)j->isz,
                                 j->qs[2], j->qs[3], (size_t)rows, (size_t)D, nr, Qp + g * nr * (size_t)D,
                                 (float)j->p->scale);
                for (size_t i = 0; i < nr; i++) {
                    m[g * nr + i] = m0;
                    l[g * nr + i] = l0;
                }
                int ke = panel_kend(j, q0, rows);
                kmax = ke > kmax ? ke : kmax;
            }
            memset(acc, 0, sizeof(float) * np * dvp * nr);
            for (int j0 = 0; j0 < kmax; j0 += (int)bk)
                for (size_t g = 0; g < np; g++) {
                    int q0 = (int)((pg + g) * nr), rows = j->Lq - q0 < (int)nr ? j->Lq - q0 : (int)nr;
                    int kend = panel_kend(j, q0, rows);
                    if (j0 >= kend)
                        continue;
                    size_t cols = (size_t)(kend - j0) < bk ? (size_t)(kend - j0) : bk;
                    float *qg = Qp + g * nr * (size_t)D, *ag = acc + g * dvp * nr, *mg = m + g * nr, *lg = l + g * nr;
                    /* scores of keys [j0, j0 + cols): whole panels of mr
                     * keys, the last one's extra rows left unread */
                    for (size_t k0 = (size_t)j0; k0 < (size_t)j0 + cols; k0 += mr) {
                        float *c = St + (k0 - (size_t)j0) * nr;
                        if (k0 < kfull)
                            fk->attn_gemm((size_t)D, kf + (int64_t)k0 * j->ks[2], 1, (ptrdiff_t)j->ks[2], qg, c,
                                          false);
                        else
                            fk->attn_gemm((size_t)D, Kp + (k0 - kfull) * (size_t)D, (ptrdiff_t)mr, 1, qg, c, false);
                    }
                    if (j->mask)
                        mc_fast_mask_tile_f32(j->mdt,
                                              j->mask + (j->ms[0] * b + j->ms[1] * h + j->ms[2] * q0 + j->ms[3] * j0) *
                                                            (int64_t)j->msz,
                                              j->ms[2], j->ms[3], St, (size_t)rows, cols, 1, nr, 0, 0, 0, lowest);
                    else if (j->p->causal)
                        mc_fast_mask_tile_f32(0, NULL, 0, 0, St, (size_t)rows, cols, 1, nr, q0, j0, diag, lowest);
                    fk->softmax_panel_f32(St, cols, mg, lg, ag, dvp);
                    for (size_t d0 = 0; d0 < dvp; d0 += mr) {
                        if (d0 < dfull)
                            fk->attn_gemm(cols, vf + (int64_t)j0 * j->vs[2] + (int64_t)d0, (ptrdiff_t)j->vs[2], 1, St,
                                          ag + d0 * nr, true);
                        else
                            fk->attn_gemm(cols, Vp + (d0 - dfull) * (size_t)kpack + (size_t)j0 * mr, (ptrdiff_t)mr,
                                          1, St, ag + d0 * nr, true);
                    }
                }
            for (size_t g = 0; g < np; g++) {
                int q0 = (int)((pg + g) * nr), rows = j->Lq - q0 < (int)nr ? j->Lq - q0 : (int)nr;
                char *yp = j->y + (((int64_t)b * j->Hq + h) * j->Lq + q0) * (int64_t)Dv * (int64_t)j->isz;
                mc_fast_store_rows_f32(j->dt, acc + g * dvp * nr, (size_t)rows, (size_t)Dv, 1, nr, l + g * nr, yp,
                                       Dv);
            }
        }
    }
}

/* One slot per pool thread, each with its own scratch, claiming items
 * until none is left: an item's cost varies (causal) and the machine may
 * be shared, so the items are handed out as the slots free up. */
static void slot_range(void *ctx, size_t cb, size_t ce)
{
    sdpa_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        float *scr = (float *)(void *)(j->scratch + c * j->per_chunk * sizeof(float));
        for (size_t it; (it = atomic_fetch_add(&j->next, 1)) < j->items;)
            panel_item(j, it, scr);
    }
}

/* Sets up the panel path when its scratch fits the budget: returns false
 * (the BLAS path then runs) when packing a head's K and V would take more
 * than PANEL_BUDGET bytes per thread. */
static bool panel_setup(sdpa_job *j, size_t threads)
{
    const mc_fast_kernels *fk = j->fk;
    j->mr = (size_t)fk->attn_mr;
    j->nr = (size_t)fk->attn_nr;
    j->bk = (size_t)PANEL_BK / j->mr * j->mr;
    j->dvp = ((size_t)j->Dv + j->mr - 1) / j->mr * j->mr;
    j->npan = ((size_t)j->Lq + j->nr - 1) / j->nr;
    size_t heads = (size_t)j->B * (size_t)j->Hk;
    /* enough items to keep every thread busy; each split packs K and V
     * again, so no more than that */
    j->nsplit = (2 * threads + heads - 1) / heads;
    j->nsplit = j->nsplit > j->npan ? j->npan : j->nsplit;
    j->items = heads * j->nsplit;
    j->chunks = j->items < threads ? j->items : threads;
    size_t lk = (size_t)j->Lk, mr = j->mr;
    /* packed K and V: whole heads, or (in place) the partial last panels */
    size_t kv = panel_direct(j) ? mr * (size_t)j->D + mr * lk
                                : ((lk + mr - 1) / mr * mr) * (size_t)j->D + j->dvp * lk;
    j->per_chunk = kv + PANEL_GROUP * (j->nr * (size_t)j->D + j->dvp * j->nr + 2 * j->nr) + j->bk * j->nr;
    return j->per_chunk * sizeof(float) <= PANEL_BUDGET;
}

static void chunk_range(void *ctx, size_t cb, size_t ce)
{
    sdpa_job *j = ctx;
    for (size_t c = cb; c < ce; c++) {
        size_t b = c * j->items / j->chunks, e = (c + 1) * j->items / j->chunks;
        void *scr = j->scratch + c * j->per_chunk * (j->f64 ? sizeof(double) : sizeof(float));
        for (size_t it = b; it < e; it++) {
            if (j->f64)
                item_f64(j, it, scr);
            else
                item_f32(j, it, scr);
        }
    }
}

int mc_sdpa_eval(mc_array *out, mc_array *q, mc_array *k, mc_array *v, mc_array *mask, mc_array *sinks,
                 const mc_sdpa_params *p)
{
    static const char fn[] = "scaled_dot_product_attention";
    if (mc_array_alloc_data(out, fn))
        return 1;
    if (out->size == 0)
        return 0;
    sdpa_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.fk = mc_fast_kernels_get();
    j.dt = q->dtype;
    j.f64 = q->dtype == MLX_FLOAT64;
    j.B = q->shape[0];
    j.Hq = q->shape[1];
    j.R = q->shape[1] / k->shape[1];
    j.Lq = q->shape[2];
    j.Lk = k->shape[2];
    j.D = q->shape[3];
    j.Dv = v->shape[3];
    j.isz = mc_dtype_size(q->dtype);
    j.q = q->data;
    j.k = k->data;
    j.v = v->data;
    j.y = out->data;
    memcpy(j.qs, q->strides, sizeof j.qs);
    memcpy(j.ks, k->strides, sizeof j.ks);
    memcpy(j.vs, v->strides, sizeof j.vs);
    if (mask) {
        j.mask = mask->data;
        j.mdt = mask->dtype;
        j.msz = mc_dtype_size(mask->dtype);
        memcpy(j.ms, mask->strides, sizeof j.ms);
    }
    if (sinks) {
        if (sinks->strides[0] != 1 && sinks->shape[0] > 1)
            return mc_error("[%s] sinks must be contiguous.", fn);
        j.sinks = sinks->data;
    }
    if (j.Lk == 0) {
        /* an empty softmax times no values: zeros, as MLX's matmul */
        memset(out->data, 0, out->size * j.isz);
        return 0;
    }
    size_t threads = (size_t)mc_pool_threads();
    j.Hk = k->shape[1];
    bool panels = !j.f64 && panel_setup(&j, threads);
    if (!panels) {
        j.nqb = ((size_t)j.Lq + BQ - 1) / BQ;
        j.items = (size_t)j.B * (size_t)j.Hq * j.nqb;
        j.chunks = j.items < 4 * threads ? j.items : 4 * threads;
        j.per_chunk = (size_t)BQ * j.D + (size_t)BQ * BK + (size_t)BK * j.D + (size_t)BK * j.Dv +
                      (size_t)BQ * j.Dv + 2 * (size_t)BQ;
    }
    size_t esz = j.f64 ? sizeof(double) : sizeof(float);
    j.scratch = mc_xmalloc(j.chunks * j.per_chunk * esz);
    if (!j.scratch)
        return mc_error_oom(fn, j.chunks * j.per_chunk * esz);
    atomic_init(&j.next, 0);
    mc_parallel_for(j.chunks, 1, panels ? slot_range : chunk_range, &j);
    mc_xfree(j.scratch);
    if (atomic_load(&j.failed))
        return mc_error("[%s] Matrix dimensions exceed what the BLAS library accepts.", fn);
    return 0;
}
