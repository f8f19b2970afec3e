/* Owns the decompositions of long transforms into short KissFFT ones
 * (fft_large.h): the four-step complex transform, the split step of real
 * transforms, and the twiddle tables both read.
 *
 * Four-step (Bailey's), n = n1 * n2, x read as n1 rows of n2 points:
 *   A. a transform of n1 points down each of the n2 columns, each result
 *      multiplied by w^(column * frequency), w = exp(-+2 pi i / n), into
 *      the same place of a temporary matrix;
 *   B. a transform of n2 points along each of its n1 rows; row k1,
 *      frequency k2 is the output's point k1 + n1 * k2.
 * KissFFT runs every short transform. Both steps go a block of lines at a
 * time: A gathers F4_BLOCK columns into contiguous lines (each row read as
 * whole cache lines), B writes F4_BLOCK outputs side by side; blocks are
 * split across the pool. The short transforms fit in the caches, which
 * KissFFT's recursion over the whole array does not. numpy's pocketfft
 * runs one long transform on one thread.
 *
 * Twiddles: w^m = lo[m mod s] * hi[m / s] with s a power of two near
 * sqrt(n), two tables of about sqrt(n) pairs each computed in double with
 * the angle reduced exactly (an n-pair table would cost as much memory
 * traffic as the data); one float rounding more than a full table. */
#include "graph/fft_large.h"

#include <kiss_fft.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/alloc.h"
#include "runtime/pool.h"

enum {
    F4_BLOCK = 16,       /* lines per block: 128 bytes of each row */
    PREFETCH_ROWS = 16,  /* measured: 32 lines, or 8 rows ahead, no faster */
    F4_MAX_WORKERS = 64, /* slots of scratch a run hands out */
    F4_MIN_FACTOR = 16,
    LINE_PAD = 8,        /* pairs: one cache line */
    SPLIT_GRAIN = 16384, /* frequencies per chunk of the split step */
};

/* ---- twiddles ---- */

typedef struct twiddles {
    int shift;
    kiss_fft_cpx *lo, *hi;
} twiddles;

static kiss_fft_cpx unit(int64_t m, int64_t n, double sign)
{
    double a = sign * 2.0 * M_PI * (double)(m % n) / (double)n;
    kiss_fft_cpx c = {(float)cos(a), (float)sin(a)};
    return c;
}

/* exp(sign 2 pi i m / n) for 0 <= m < n */
static int tw_make(twiddles *t, int n, double sign)
{
    t->shift = 0;
    while (((int64_t)1 << (2 * t->shift)) < n)
        t->shift++;
    size_t nlo = (size_t)1 << t->shift, nhi = ((size_t)n >> t->shift) + 1;
    t->lo = mc_xmalloc(nlo * sizeof(kiss_fft_cpx));
    t->hi = mc_xmalloc(nhi * sizeof(kiss_fft_cpx));
    if (!t->lo || !t->hi)
        return 1;
    for (size_t a = 0; a < nlo; a++)
        t->lo[a] = unit((int64_t)a, n, sign);
    for (size_t b = 0; b < nhi; b++)
        t->hi[b] = unit((int64_t)b << t->shift, n, sign);
    return 0;
}

static void tw_free(twiddles *t)
{
    mc_xfree(t->lo);
    mc_xfree(t->hi);
}

static inline kiss_fft_cpx cmul(kiss_fft_cpx a, kiss_fft_cpx b)
{
    kiss_fft_cpx c = {a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r};
    return c;
}

static inline kiss_fft_cpx tw_at(const twiddles *t, int m)
{
    return cmul(t->lo[m & ((1 << t->shift) - 1)], t->hi[m >> t->shift]);
}

/* ---- four-step ---- */

/* The rows a step reads or writes lie n1 or n2 pairs apart (a page or
 * more): the hardware prefetcher does not follow them, and one row at a
 * time waits on memory, so the row PREFETCH_ROWS ahead is requested. */
static inline void prefetch_row(const kiss_fft_cpx *p, int g, int write)
{
    for (size_t b = 0; b < (size_t)g * sizeof *p; b += 64) {
        if (write)
            __builtin_prefetch((const char *)p + b, 1);
        else
            __builtin_prefetch((const char *)p + b, 0);
    }
}

struct mc_fft4 {
    int n, n1, n2; /* n1 <= n2 */
    kiss_fft_cfg c1, c2;
    twiddles tw;
};

void mc_fft4_free(mc_fft4 *f)
{
    if (!f)
        return;
    kiss_fft_free(f->c1);
    kiss_fft_free(f->c2);
    tw_free(&f->tw);
    mc_xfree(f);
}

mc_fft4 *mc_fft4_make(int n, bool inverse)
{
    int n1 = 0;
    for (int d = 1; (int64_t)d * d <= n; d++)
        if (n % d == 0)
            n1 = d;
    if (n1 < F4_MIN_FACTOR)
        return NULL;
    mc_fft4 *f = mc_xcalloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->n = n;
    f->n1 = n1;
    f->n2 = n / n1;
    f->c1 = kiss_fft_alloc(f->n1, inverse, NULL, NULL);
    f->c2 = kiss_fft_alloc(f->n2, inverse, NULL, NULL);
    if (!f->c1 || !f->c2 || tw_make(&f->tw, n, inverse ? 1.0 : -1.0)) {
        mc_fft4_free(f);
        return NULL;
    }
    return f;
}

/* Lines in scratch are LINE_PAD pairs longer than the transform: at a
 * power-of-two length the F4_BLOCK lines read or written side by side
 * would all map to the same few sets of the L1 cache. */
static size_t ld(int n) { return (size_t)n + LINE_PAD; }

/* per worker: step A's gathered lines and their transforms, or step B's
 * transforms */
static size_t slot_pairs(const mc_fft4 *f)
{
    size_t a = 2 * ld(f->n1), b = ld(f->n2);
    return (size_t)F4_BLOCK * (a > b ? a : b);
}

static int clamp_workers(int workers)
{
    return workers < 1 ? 1 : workers > F4_MAX_WORKERS ? F4_MAX_WORKERS : workers;
}

size_t mc_fft4_scratch(const mc_fft4 *f, int workers)
{
    return (size_t)f->n + (size_t)clamp_workers(workers) * slot_pairs(f);
}

typedef struct f4_job {
    const mc_fft4 *f;
    const kiss_fft_cpx *in;
    kiss_fft_cpx *out, *t, *slots;
    int nslots;
    atomic_int busy[F4_MAX_WORKERS];
} f4_job;

/* A slot of scratch for one range: the pool may run more threads than
 * there are slots, and a thread without one waits for the next free. */
static int slot_take(f4_job *j)
{
    for (int k = 0;; k = (k + 1) % j->nslots)
        if (!atomic_exchange_explicit(&j->busy[k], 1, memory_order_acquire))
            return k;
}

static void f4_columns(void *ctx, size_t b, size_t e)
{
    f4_job *j = ctx;
    const mc_fft4 *f = j->f;
    int k = slot_take(j), n1 = f->n1, n2 = f->n2;
    size_t l1 = ld(n1);
    kiss_fft_cpx *lines = j->slots + (size_t)k * slot_pairs(f), *res = lines + (size_t)F4_BLOCK * l1;
    for (size_t blk = b; blk < e; blk++) {
        int c0 = (int)blk * F4_BLOCK, g = n2 - c0 < F4_BLOCK ? n2 - c0 : F4_BLOCK;
        for (int r = 0; r < n1; r++) {
            const kiss_fft_cpx *row = j->in + (size_t)r * n2 + c0;
            if (r + PREFETCH_ROWS < n1)
                prefetch_row(row + (size_t)PREFETCH_ROWS * n2, g, 0);
            for (int q = 0; q < g; q++)
                lines[(size_t)q * l1 + r] = row[q];
        }
        for (int q = 0; q < g; q++)
            kiss_fft(f->c1, lines + (size_t)q * l1, res + (size_t)q * l1);
        for (int r = 0; r < n1; r++) {
            kiss_fft_cpx *row = j->t + (size_t)r * n2 + c0;
            if (r + PREFETCH_ROWS < n1)
                prefetch_row(row + (size_t)PREFETCH_ROWS * n2, g, 1);
            for (int q = 0; q < g; q++)
                row[q] = cmul(res[(size_t)q * l1 + r], tw_at(&f->tw, (c0 + q) * r));
        }
    }
    atomic_store_explicit(&j->busy[k], 0, memory_order_release);
}

static void f4_rows(void *ctx, size_t b, size_t e)
{
    f4_job *j = ctx;
    const mc_fft4 *f = j->f;
    int k = slot_take(j), n1 = f->n1, n2 = f->n2;
    kiss_fft_cpx *res = j->slots + (size_t)k * slot_pairs(f);
    size_t l2 = ld(n2);
    for (size_t blk = b; blk < e; blk++) {
        int r0 = (int)blk * F4_BLOCK, g = n1 - r0 < F4_BLOCK ? n1 - r0 : F4_BLOCK;
        for (int q = 0; q < g; q++)
            kiss_fft(f->c2, j->t + (size_t)(r0 + q) * n2, res + (size_t)q * l2);
        for (int k2 = 0; k2 < n2; k2++) {
            kiss_fft_cpx *dst = j->out + (size_t)k2 * n1 + r0;
            if (k2 + PREFETCH_ROWS < n2)
                prefetch_row(dst + (size_t)PREFETCH_ROWS * n1, g, 1);
            for (int q = 0; q < g; q++)
                dst[q] = res[(size_t)q * l2 + k2];
        }
    }
    atomic_store_explicit(&j->busy[k], 0, memory_order_release);
}

void mc_fft4_run(const mc_fft4 *f, const float *in, float *out, float *scratch, int workers)
{
    f4_job j;
    j.f = f;
    j.in = (const kiss_fft_cpx *)(const void *)in;
    j.out = (kiss_fft_cpx *)(void *)out;
    j.t = (kiss_fft_cpx *)(void *)scratch;
    j.slots = j.t + f->n;
    j.nslots = clamp_workers(workers);
    for (int k = 0; k < j.nslots; k++)
        atomic_init(&j.busy[k], 0);
    size_t ncol = (size_t)(f->n2 + F4_BLOCK - 1) / F4_BLOCK, nrow = (size_t)(f->n1 + F4_BLOCK - 1) / F4_BLOCK;
    /* step A has read all of in before step B writes out: in may be out */
    if (j.nslots == 1) {
        f4_columns(&j, 0, ncol);
        f4_rows(&j, 0, nrow);
    } else {
        mc_parallel_for(ncol, 1, f4_columns, &j);
        mc_parallel_for(nrow, 1, f4_rows, &j);
    }
}

/* ---- the split step of real transforms ----
 *
 * With z[j] = x[2j] + i x[2j+1] (h = n/2 pairs) and Z its transform of h
 * points, the transforms of the even and odd samples are
 *   E[k] = (Z[k] + conj Z[h-k]) / 2,  O[k] = (Z[k] - conj Z[h-k]) / 2i,
 * and the real transform is X[k] = E[k] + w^k O[k], X[h-k] = conj(E[k] -
 * w^k O[k]) (w = exp(-2 pi i / n), Z[h] = Z[0]): frequencies k and h - k
 * are made from the same two inputs, so each pair is rewritten in place.
 * The inverse solves the same equations for Z, doubled so that the
 * unscaled inverse of h points gives the unscaled inverse of n. */

struct mc_fft_split {
    int n;
    twiddles tw;
};

mc_fft_split *mc_fft_split_make(int n)
{
    mc_fft_split *s = mc_xcalloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = n;
    if (tw_make(&s->tw, n, -1.0)) {
        mc_fft_split_free(s);
        return NULL;
    }
    return s;
}

void mc_fft_split_free(mc_fft_split *s)
{
    if (!s)
        return;
    tw_free(&s->tw);
    mc_xfree(s);
}

typedef struct split_job {
    const mc_fft_split *s;
    const kiss_fft_cpx *x;
    kiss_fft_cpx *z;
} split_job;

/* frequencies k in [b + 1, e + 1), with their partners h - k */
static void r2c_range(void *ctx, size_t b, size_t e)
{
    split_job *j = ctx;
    int h = j->s->n / 2;
    kiss_fft_cpx *z = j->z;
    for (int k = (int)b + 1; k < (int)e + 1; k++) {
        kiss_fft_cpx a = z[k], c = z[h - k];
        kiss_fft_cpx ev = {0.5f * (a.r + c.r), 0.5f * (a.i - c.i)};
        kiss_fft_cpx od = {0.5f * (a.i + c.i), -0.5f * (a.r - c.r)};
        kiss_fft_cpx t = cmul(tw_at(&j->s->tw, k), od);
        z[k].r = ev.r + t.r;
        z[k].i = ev.i + t.i;
        z[h - k].r = ev.r - t.r;
        z[h - k].i = t.i - ev.i;
    }
}

static void c2r_range(void *ctx, size_t b, size_t e)
{
    split_job *j = ctx;
    int h = j->s->n / 2;
    const kiss_fft_cpx *x = j->x;
    kiss_fft_cpx *z = j->z;
    for (int k = (int)b + 1; k < (int)e + 1; k++) {
        kiss_fft_cpx a = x[k], c = x[h - k];
        kiss_fft_cpx ev = {a.r + c.r, a.i - c.i}, d = {a.r - c.r, a.i + c.i};
        kiss_fft_cpx w = tw_at(&j->s->tw, k);
        w.i = -w.i;
        kiss_fft_cpx od = cmul(d, w);
        z[k].r = ev.r - od.i;
        z[k].i = ev.i + od.r;
        z[h - k].r = ev.r + od.i;
        z[h - k].i = od.r - ev.i;
    }
}

static void split_run(split_job *j, mc_range_fn fn, int workers)
{
    size_t pairs = (size_t)(j->s->n / 2) / 2;
    if (workers > 1)
        mc_parallel_for(pairs, SPLIT_GRAIN, fn, j);
    else if (pairs)
        fn(j, 0, pairs);
}

void mc_fft_split_r2c(const mc_fft_split *s, float *z, int workers)
{
    int h = s->n / 2;
    kiss_fft_cpx *c = (kiss_fft_cpx *)(void *)z, z0 = c[0];
    split_job j = {s, NULL, c};
    split_run(&j, r2c_range, workers);
    c[0].r = z0.r + z0.i;
    c[0].i = 0;
    c[h].r = z0.r - z0.i;
    c[h].i = 0;
}

void mc_fft_split_c2r(const mc_fft_split *s, const float *x, float *z, int workers)
{
    int h = s->n / 2;
    const kiss_fft_cpx *cx = (const kiss_fft_cpx *)(const void *)x;
    kiss_fft_cpx *cz = (kiss_fft_cpx *)(void *)z;
    split_job j = {s, cx, cz};
    split_run(&j, c2r_range, workers);
    cz[0].r = cx[0].r + cx[h].r;
    cz[0].i = cx[0].r - cx[h].r;
}
