/* Owns the Winograd evaluation of 2-D convolutions: 3x3 kernels, stride
 * 1, no dilation, one group, float32, as F(2x2, 3x3) or F(4x4, 3x3)
 * (simd/wino.h has the algebra). Per output tile of m x m and channel
 * pair it does (m + 2)^2 multiply-adds where the direct path does 9 m^2:
 * 2.25x fewer for m = 2, 4x fewer for m = 4; the transforms around them
 * are linear in the channels, not in their product, so they fade once
 * channels are many.
 *
 * Precision (the library's float32 results against a float64 sum, error
 * relative to the result's RMS; scripts/wino4_points.py lib, on the bench
 * layers and layers of 64 to 512 input channels, inputs uniform or
 * rectified): RMS error direct path 2.2-3.3e-7, F(2x2, 3x3) 2.2-4.9e-7
 * (1.0-1.6x the direct path's), F(4x4, 3x3) 0.66-2.0e-6 (3.0-6.4x);
 * largest error direct 1.1-2.2e-6, F(2x2) 1.4-2.9e-6, F(4x4) 0.4-1.8e-5
 * (3.6-12x). simd/wino4_k.c's points keep it lowest of the sets tried.
 *
 * Per call, the weight's transform U (xi matrices O x C, xi = 16 or 36)
 * is computed once (no cache keyed by array identity: a weight's data can
 * change under the same array). The output's tiles are cut into pieces
 * for the worker pool, each piece into blocks of nt tiles: a block's
 * transformed input V (xi x nt x C) and products M (xi x nt x O) live in
 * the piece's own scratch, sized to stay in the L2 cache unless channels
 * are many, so scratch is bounded by pieces x block whatever the layer's
 * size: at most 2 x threads slots of max(1 MiB, 64 tiles x xi x (C + O)
 * floats), never more floats than tiles x xi x (C + O), plus U
 * (xi x O x C floats). Each of a block's xi coordinates is one
 * single-threaded sgemm, V_xi (nt x C) times U_xi^T (C x O).
 *
 * When it pays and which variant: see mc_conv_wino_pick. Its figures are
 * ratios of the calling thread's CPU time (best of 8 to 20 calls,
 * MLX_CPU_THREADS=1) on a shared 2-core AMD EPYC with AVX-512 and
 * OpenBLAS 0.3.21, where wall times were too noisy to rank variants. */
#include "graph/conv_wino.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/blas.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/wino.h"

/* A block's V and M take about this many bytes (the size of one core's
 * L2 here): between the input transform, the 16 products and the output
 * transform they stay in cache. Measured on the ResNet layers, one
 * thread: 256 KiB blocks take 1.2x the time of 1 MiB ones (more, smaller
 * sgemms, each packing its U_xi again), 4 MiB ones 0.9-1.2x. */
#define MC_WINO_BLOCK_BYTES ((size_t)1 << 20)
/* A block holds at least this many tiles (if the piece has them), even
 * past MC_WINO_BLOCK_BYTES: each of its sgemms packs U_xi (C x O) again,
 * a cost that short blocks of many channels do not amortise. Measured on
 * one thread, best of 7 calls, batch 8, F(2x2) / F(4x4) ms: at least 8
 * tiles: 7x7 C = O = 512 30.5 / 33.0, 14x14 C = O = 256 17.6 / 26.0;
 * at least 64: 18.1 / 16.1, 15.5 / 11.7 (128: 15.2 / 16.8, 12.4 / 10.0);
 * 56x56 C = O = 64 and 28x28 C = O = 128 unchanged. */
#define MC_WINO_MIN_TILES ((size_t)64)
/* Below this many direct multiply-adds a convolution runs on the calling
 * thread (as the direct path's rule). */
#define MC_WINO_SPLIT_MACS ((double)(1 << 20))
/* F(4x4, 3x3) needs at least this output size along both dims (else
 * F(2x2, 3x3)): measured at variant(). */
#define MC_WINO4_MIN_OUT 8

static atomic_int mode = -1; /* -1: not read from the environment yet */
static atomic_long runs, runs4;

long mc_conv_wino_runs(void) { return atomic_load_explicit(&runs, memory_order_relaxed); }

long mc_conv_wino4_runs(void) { return atomic_load_explicit(&runs4, memory_order_relaxed); }

int mc_conv_wino_mode(void)
{
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m >= 0)
        return m;
    const char *s = getenv("MLX_CPU_CONV_WINOGRAD");
    int want = !s || !*s     ? MC_CONV_WINO_AUTO
               : s[0] == '0' ? MC_CONV_WINO_NEVER
               : s[0] == '2' ? MC_CONV_WINO_ALWAYS2
               : s[0] == '4' ? MC_CONV_WINO_ALWAYS4
                             : MC_CONV_WINO_ALWAYS;
    /* a concurrent mc_conv_wino_set_mode wins over the environment */
    int expected = -1;
    atomic_compare_exchange_strong(&mode, &expected, want);
    return atomic_load_explicit(&mode, memory_order_relaxed);
}

void mc_conv_wino_set_mode(int m) { atomic_store_explicit(&mode, m, memory_order_relaxed); }

/* The variant for a layer that takes the Winograd path: F(4x4, 3x3) when
 * both output dims are at least MC_WINO4_MIN_OUT and its tiles do at
 * least 1.3x fewer multiplies than F(2x2, 3x3)'s (36 per 4x4 tile against
 * 16 per 2x2 tile, the partial tiles at the edges counted whole). Measured
 * (ratio of F(2x2)'s time to F(4x4)'s, one thread, batch 8 unless said,
 * C = O): batch 2 56x56 C = 16 (O = 8), 32, 64 1.5-1.7x; 28x28 C = 128
 * 1.46x; 14x14 C = 64 1.1x, C = 256 1.3x; 8x8 C = 256 1.07x; but 10x10
 * C = 128 0.9x (F(4x4)'s 3x3 tiles hold 144 outputs for 100: its
 * multiplies only 1.23x fewer), 6x6 and 5x5 C = 256 0.7x (1.0x), 4x4
 * and 3x3 0.55-0.65x (few tiles: the heavier transforms dominate). 7x7
 * C = 512 is 1.19x on one thread but 0.85x on two (wall time, loaded
 * host; its 32 tiles split in two pieces that each read all of U), so it
 * stays F(2x2). */
static int variant(const mc_conv_geom *g)
{
    int oh = g->out[1], ow = g->out[2];
    if (oh < MC_WINO4_MIN_OUT || ow < MC_WINO4_MIN_OUT)
        return 2;
    double mul2 = 16.0 * (double)((oh + 1) / 2) * (double)((ow + 1) / 2);
    double mul4 = 36.0 * (double)((oh + 3) / 4) * (double)((ow + 3) / 4);
    return mul2 >= 1.3 * mul4 ? 4 : 2;
}

int mc_conv_wino_pick(const mc_conv_geom *g, const mc_conv_params *p, mlx_dtype dtype)
{
    int m = mc_conv_wino_mode();
    if (m == MC_CONV_WINO_NEVER || dtype != MLX_FLOAT32 || p->nsp != 2 || g->groups != 1)
        return 0;
    for (int d = 1; d < 3; d++)
        if (g->k[d] != 3 || g->stride[d] != 1 || g->kdil[d] != 1 || g->idil[d] != 1)
            return 0;
    if (m == MC_CONV_WINO_ALWAYS2 || m == MC_CONV_WINO_ALWAYS4)
        return m == MC_CONV_WINO_ALWAYS2 ? 2 : 4;
    if (m == MC_CONV_WINO_ALWAYS)
        return variant(g);
    /* Measured (ratio of the direct path's time to this one's; batch 2,
     * 56x56 unless said): C = O = 16 1.6x, 32 1.9x; batch 8 56x56 C = O =
     * 64 1.65x, 28x28 C = O = 128 1.7x, 7x7 C = O = 512 1.7x; C = 64
     * with O = 1 1.2x; C = 16, O = 8 1.25x; but C = O = 8 1.0x and C = 3
     * or 4 with O = 64 or 128 0.7-0.8x (the input transform and a gemm of
     * K = C cost more than the saved multiplies), C = O = 12 0.75x (no
     * whole vector of channels). An output of 1 along a dim leaves 3/4 of
     * its tiles unused. MLX's Metal backend asks more (C and O multiples
     * of 32, C + O >= 256, N * H * W >= 4096) for its F(6x6, 3x3). */
    if (g->C < 16 || g->O < 8 || g->out[1] < 2 || g->out[2] < 2)
        return 0;
    return variant(g);
}

typedef struct wino_run {
    const mc_wino_kernels *k;
    mc_wino_geom g;
    const float *x, *u, *zero;
    float *y;
    size_t tiles, pieces, slot_floats;
    int nt;
    float *scratch; /* pieces slots of slot_floats */
} wino_run;

static void wino_piece(void *arg, size_t begin, size_t end)
{
    const wino_run *r = arg;
    size_t C = (size_t)r->g.C, O = (size_t)r->g.O;
    for (size_t pc = begin; pc < end; pc++) {
        size_t lo = pc * r->tiles / r->pieces, hi = (pc + 1) * r->tiles / r->pieces;
        float *v = r->scratch + pc * r->slot_floats;
        for (size_t t0 = lo; t0 < hi; t0 += (size_t)r->nt) {
            int nt = hi - t0 < (size_t)r->nt ? (int)(hi - t0) : r->nt;
            /* V and M keep the block's row count as their stride, so each
             * coordinate's matrix is dense for the gemm */
            size_t vs = (size_t)nt * C, ms = (size_t)nt * O;
            float *m = v + (size_t)r->k->xi * vs;
            r->k->input(&r->g, r->x, t0, nt, r->zero, v, vs);
            for (int xi = 0; xi < r->k->xi; xi++)
                mc_blas_sgemm_tile(nt, r->g.O, r->g.C, v + xi * vs, (int64_t)C, r->u + xi * O * C, (int64_t)C,
                                   true, m + xi * ms, (int64_t)O);
            r->k->output(&r->g, m, ms, t0, nt, r->y);
        }
    }
}

int mc_conv_wino_run(const mc_conv_geom *g, int m, const float *x, const float *w, bool flip, float *y,
                     const char *fn)
{
    wino_run r = {.k = mc_wino_kernels_get(m), .x = x, .y = y};
    r.g = (mc_wino_geom){.N = g->N,
                         .H = g->in[1],
                         .W = g->in[2],
                         .C = g->C,
                         .O = g->O,
                         .OH = g->out[1],
                         .OW = g->out[2],
                         .pad_h = g->pad_lo[1],
                         .pad_w = g->pad_lo[2]};
    r.g.tiles_h = (r.g.OH + m - 1) / m;
    r.g.tiles_w = (r.g.OW + m - 1) / m;
    size_t C = (size_t)g->C, O = (size_t)g->O;
    r.tiles = (size_t)r.g.N * (size_t)r.g.tiles_h * (size_t)r.g.tiles_w;

    size_t xi = (size_t)r.k->xi;
    size_t per_tile = xi * (C + O) * sizeof(float);
    size_t nt = MC_WINO_BLOCK_BYTES / per_tile;
    nt = nt < MC_WINO_MIN_TILES ? MC_WINO_MIN_TILES : nt > 512 ? 512 : nt;
    double macs = (double)mc_conv_rows(g) * 9.0 * (double)C * (double)O;
    size_t threads = (size_t)mc_pool_threads();
    r.pieces = threads > 1 && macs >= MC_WINO_SPLIT_MACS ? 2 * threads : 1;
    /* each piece reads all of U: fewer pieces rather than short blocks */
    if (r.pieces > threads && r.tiles < r.pieces * MC_WINO_MIN_TILES)
        r.pieces = threads;
    if (r.pieces > r.tiles)
        r.pieces = r.tiles;
    size_t per_piece = (r.tiles + r.pieces - 1) / r.pieces;
    if (nt > per_piece)
        nt = per_piece;
    r.nt = (int)nt;
    /* 16 floats = 64 bytes: each slot starts on its own cache line */
    r.slot_floats = (xi * nt * (C + O) + 15) & ~(size_t)15;

    int rc = 1;
    size_t u_bytes = xi * O * C * sizeof(float), zero_bytes = C * sizeof(float);
    size_t scratch_bytes = r.pieces * r.slot_floats * sizeof(float);
    float *u = mc_data_alloc(u_bytes);
    float *zero = u ? mc_data_alloc(zero_bytes) : NULL;
    r.scratch = zero ? mc_data_alloc(scratch_bytes) : NULL;
    if (!r.scratch) {
        mc_error_oom(fn, !u ? u_bytes : !zero ? zero_bytes : scratch_bytes);
        goto done;
    }
    memset(zero, 0, zero_bytes);
    r.k->filter(w, g->O, g->C, flip, u);
    r.u = u;
    r.zero = zero;
    (void)mc_blas_threads(); /* the pool sets OpenBLAS to one thread before the first call */
    mc_parallel_for(r.pieces, 1, wino_piece, &r);
    atomic_fetch_add_explicit(&runs, 1, memory_order_relaxed);
    if (m == 4)
        atomic_fetch_add_explicit(&runs4, 1, memory_order_relaxed);
    rc = 0;
done:
    if (r.scratch)
        mc_data_free(r.scratch, scratch_bytes);
    if (zero)
        mc_data_free(zero, zero_bytes);
    if (u)
        mc_data_free(u, u_bytes);
    return rc;
}
