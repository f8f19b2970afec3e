/* Owns every KissFFT plan of the library and the cache of plans.
 *
 * A plan is one of:
 *   direct     a KissFFT complex state, for lengths whose prime factors
 *              are small (KissFFT has radix 2, 3, 4 and 5 butterflies and
 *              a generic one costing n * p per factor p);
 *   four-step  the same lengths from MC_FFT_WIDE_MIN points on: many short
 *              KissFFT transforms that fit in the caches and split across
 *              the pool (fft_large.c);
 *   bluestein  for lengths with a large prime factor, where KissFFT's
 *              generic butterfly would cost O(n^2): the transform as a
 *              convolution with a chirp (Bluestein), the convolution done
 *              by two complex plans of a 2-3-5-smooth length m >= 2n - 1
 *              (numpy's pocketfft does the same);
 *   real       KissFFT's real state (kiss_fftr), for even n whose half is
 *              a direct length below MC_FFT_WIDE_MIN;
 *   split      any other even real transform: a complex plan of n/2 on the
 *              reals read as pairs, and the split step (fft_large.c), which
 *              is kiss_fftr's method with the complex half free to be a
 *              four-step or Bluestein plan;
 *   via        odd real transforms, through a complex plan of n.
 * Chirps and the convolution kernel are computed in double, with the
 * chirp's angle reduced exactly (j^2 mod 2n in integers).
 *
 * The cache: one list under one mutex, most recently used last, keyed by
 * (n, kind, direction, the four-step threshold it was made under). A
 * complex plan is only read during a transform (input and output
 * distinct; scratch is the caller's), so complex plans are shared by any
 * number of holders; KissFFT's real state holds a scratch buffer, so a real
 * plan is handed to one holder at a time and a second holder gets a new
 * one. At most MC_FFT_CACHE_MAX plans are kept: when a plan is given back
 * the oldest ones nobody holds are freed (after the lock is dropped).
 * Plans are made outside the lock too. Fork: the lock is taken around
 * fork(). Exit: a destructor frees what the cache holds. */
#include "graph/fft_plan.h"

#include <kiss_fft.h>
#include <kiss_fftr.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fft_large.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/list.h"

enum {
    /* the largest prime factor KissFFT's butterflies run directly; above
     * it Bluestein's three transforms of about 2n are cheaper */
    MC_FFT_MAX_DIRECT_PRIME = 31,
    MC_FFT_CACHE_MAX = 64,
    /* measured on one thread (docs/fft.md): at 2^16 points (512 KiB) the
     * four-step is as fast as one KissFFT call, at 2^20 2.5 times faster;
     * below, KissFFT's own transform stays in the caches */
    MC_FFT_WIDE_MIN = 1 << 16,
};

static atomic_int wide_min = MC_FFT_WIDE_MIN;

typedef enum plan_how { HOW_DIRECT, HOW_FOUR, HOW_BLUESTEIN, HOW_REAL, HOW_SPLIT, HOW_VIA } plan_how;

struct mc_fft_plan {
    mc_list link; /* in the cache, or unlinked once evicted */
    int n;
    mc_fft_kind kind;
    bool inverse;
    plan_how how;
    int wide_min;       /* the four-step threshold it was made under */
    long holders;       /* under the cache lock */
    kiss_fft_cfg cfg;   /* direct */
    mc_fft4 *four;      /* four-step */
    kiss_fftr_cfg rcfg; /* real */
    mc_fft_split *split;
    /* via: the complex plan of n; split: of n/2; bluestein: the forward
     * transform of m, and sub2 the inverse one */
    mc_fft_plan *sub, *sub2;
    int m;                /* bluestein: the convolution's length */
    kiss_fft_cpx *chirp;  /* n values exp(-+ i pi j^2 / n) */
    kiss_fft_cpx *kernel; /* m values: transform of conj(chirp), over m */
};

static struct {
    pthread_mutex_t lock;
    mc_list plans;
    size_t count;
} cache = {PTHREAD_MUTEX_INITIALIZER, {&cache.plans, &cache.plans}, 0};

static void cache_prefork(void) { pthread_mutex_lock(&cache.lock); }
static void cache_postfork(void) { pthread_mutex_unlock(&cache.lock); }
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void fork_init(void) { pthread_atfork(cache_prefork, cache_postfork, cache_postfork); }

/* ---- making and freeing plans ---- */

static int largest_prime_factor(int n)
{
    int p = 1;
    for (int f = 2; (int64_t)f * f <= n; f++)
        while (n % f == 0) {
            p = f;
            n /= f;
        }
    return n > 1 ? (n > p ? n : p) : p;
}

static void plan_free(mc_fft_plan *p)
{
    if (!p)
        return;
    kiss_fft_free(p->cfg);
    mc_fft4_free(p->four);
    kiss_fftr_free(p->rcfg);
    mc_fft_split_free(p->split);
    free(p->chirp);
    free(p->kernel);
    mc_fft_plan_put(p->sub);
    mc_fft_plan_put(p->sub2);
    free(p);
}

static int make_bluestein(mc_fft_plan *p)
{
    int n = p->n;
    p->m = kiss_fft_next_fast_size(2 * n - 1);
    int m = p->m;
    p->sub = mc_fft_plan_get(m, MC_FFT_C2C, false, NULL);
    p->sub2 = mc_fft_plan_get(m, MC_FFT_C2C, true, NULL);
    if (!p->sub || !p->sub2)
        return 1;
    p->chirp = mc_xmalloc(sizeof(kiss_fft_cpx) * (size_t)n);
    p->kernel = mc_xmalloc(sizeof(kiss_fft_cpx) * (size_t)m);
    kiss_fft_cpx *h = mc_xcalloc((size_t)m, sizeof(kiss_fft_cpx));
    float *work = mc_xmalloc(sizeof(kiss_fft_cpx) * (mc_fft_plan_scratch(p->sub, 1) + 1));
    if (!p->chirp || !p->kernel || !h || !work) {
        free(h);
        free(work);
        return 1;
    }
    double sign = p->inverse ? 1.0 : -1.0;
    for (int j = 0; j < n; j++) {
        int64_t q = (int64_t)j * j % (2 * (int64_t)n);
        double a = sign * M_PI * (double)q / (double)n;
        p->chirp[j].r = (float)cos(a);
        p->chirp[j].i = (float)sin(a);
        /* the kernel is conj(chirp) at -(n-1) .. n-1, wrapped into m */
        kiss_fft_cpx c = {(float)cos(a), (float)-sin(a)};
        h[j] = c;
        if (j)
            h[m - j] = c;
    }
    mc_fft_plan_run(p->sub, (const float *)h, (float *)p->kernel, work, 1);
    free(work);
    float inv = 1.0f / (float)m;
    for (int k = 0; k < m; k++) {
        p->kernel[k].r *= inv;
        p->kernel[k].i *= inv;
    }
    free(h);
    return 0;
}

static mc_fft_plan *plan_make(int n, mc_fft_kind kind, bool inverse, int wide)
{
    mc_fft_plan *p = mc_xcalloc(1, sizeof *p);
    if (!p)
        return NULL;
    mc_list_init(&p->link);
    p->n = n;
    p->kind = kind;
    p->inverse = inverse;
    p->wide_min = wide;
    int rc = 0;
    if (kind == MC_FFT_C2C) {
        if (n > 1 && largest_prime_factor(n) > MC_FFT_MAX_DIRECT_PRIME) {
            p->how = HOW_BLUESTEIN;
            rc = make_bluestein(p);
        } else if (n >= wide && (p->four = mc_fft4_make(n, inverse))) {
            p->how = HOW_FOUR;
        } else {
            p->how = HOW_DIRECT;
            p->cfg = kiss_fft_alloc(n, inverse, NULL, NULL);
            rc = !p->cfg;
        }
    } else if (n >= 4 && n % 2 == 0 && n / 2 < wide && largest_prime_factor(n / 2) <= MC_FFT_MAX_DIRECT_PRIME) {
        p->how = HOW_REAL;
        p->rcfg = kiss_fftr_alloc(n, inverse, NULL, NULL);
        rc = !p->rcfg;
    } else if (n >= 4 && n % 2 == 0) {
        p->how = HOW_SPLIT;
        p->split = mc_fft_split_make(n);
        p->sub = mc_fft_plan_get(n / 2, MC_FFT_C2C, inverse, NULL);
        rc = !p->split || !p->sub;
    } else {
        p->how = HOW_VIA;
        p->sub = mc_fft_plan_get(n, MC_FFT_C2C, inverse, NULL);
        rc = !p->sub;
    }
    if (rc) {
        plan_free(p);
        return NULL;
    }
    return p;
}

/* ---- the cache ---- */

static bool shared_kind(mc_fft_kind kind) { return kind == MC_FFT_C2C; }

mc_fft_plan *mc_fft_plan_get(int n, mc_fft_kind kind, bool inverse, const char *fn)
{
    pthread_once(&fork_once, fork_init);
    int wide = atomic_load_explicit(&wide_min, memory_order_relaxed);
    pthread_mutex_lock(&cache.lock);
    mc_list *it;
    mc_list_foreach(it, &cache.plans)
    {
        mc_fft_plan *p = mc_list_entry(it, mc_fft_plan, link);
        if (p->n == n && p->kind == kind && p->inverse == inverse && p->wide_min == wide &&
            (shared_kind(kind) || p->holders == 0)) {
            p->holders++;
            mc_list_remove(&p->link);
            mc_list_insert_tail(&cache.plans, &p->link);
            pthread_mutex_unlock(&cache.lock);
            return p;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    mc_fft_plan *p = plan_make(n, kind, inverse, wide);
    if (!p) {
        if (fn)
            mc_error("[%s] Out of memory making an FFT plan of length %d.", fn, n);
        return NULL;
    }
    p->holders = 1;
    pthread_mutex_lock(&cache.lock);
    mc_list_insert_tail(&cache.plans, &p->link);
    cache.count++;
    pthread_mutex_unlock(&cache.lock);
    return p;
}

void mc_fft_plan_put(mc_fft_plan *p)
{
    if (!p)
        return;
    mc_list evicted;
    mc_list_init(&evicted);
    pthread_mutex_lock(&cache.lock);
    p->holders--;
    bool orphan = p->holders == 0 && !mc_list_linked(&p->link);
    mc_list *it, *tmp;
    mc_list_foreach_safe(it, tmp, &cache.plans)
    {
        if (cache.count <= MC_FFT_CACHE_MAX)
            break;
        mc_fft_plan *q = mc_list_entry(it, mc_fft_plan, link);
        if (q->holders == 0) {
            mc_list_remove(&q->link);
            mc_list_insert_tail(&evicted, &q->link);
            cache.count--;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    if (orphan)
        plan_free(p);
    mc_list_foreach_safe(it, tmp, &evicted)
    {
        mc_fft_plan *q = mc_list_entry(it, mc_fft_plan, link);
        mc_list_remove(&q->link);
        plan_free(q);
    }
}

void mc_fft_set_wide_min(int n) { atomic_store(&wide_min, n > 0 ? n : MC_FFT_WIDE_MIN); }

size_t mc_fft_plan_cached(void)
{
    pthread_mutex_lock(&cache.lock);
    size_t n = cache.count;
    pthread_mutex_unlock(&cache.lock);
    return n;
}

/* Plans nobody holds at exit (and at dlclose) are freed, so leak checkers
 * see only what the program holds. */
__attribute__((destructor)) static void fft_cache_at_exit(void)
{
    mc_list freed;
    mc_list_init(&freed);
    pthread_mutex_lock(&cache.lock);
    mc_list *it, *tmp;
    mc_list_foreach_safe(it, tmp, &cache.plans)
    {
        mc_fft_plan *q = mc_list_entry(it, mc_fft_plan, link);
        mc_list_remove(&q->link);
        if (q->holders == 0) {
            mc_list_insert_tail(&freed, &q->link);
            cache.count--;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    mc_list_foreach_safe(it, tmp, &freed)
    {
        mc_fft_plan *q = mc_list_entry(it, mc_fft_plan, link);
        mc_list_remove(&q->link);
        plan_free(q);
    }
}

/* ---- running ---- */

bool mc_fft_plan_wide(const mc_fft_plan *p)
{
    switch (p->how) {
    case HOW_FOUR: return true;
    case HOW_BLUESTEIN:
    case HOW_SPLIT:
    case HOW_VIA: return mc_fft_plan_wide(p->sub);
    default: return false;
    }
}

size_t mc_fft_plan_scratch(const mc_fft_plan *p, int workers)
{
    switch (p->how) {
    case HOW_FOUR: return mc_fft4_scratch(p->four, workers);
    case HOW_BLUESTEIN: return 2 * (size_t)p->m + mc_fft_plan_scratch(p->sub, workers);
    case HOW_SPLIT: return (p->kind == MC_FFT_C2R ? (size_t)p->n / 2 : 0) + mc_fft_plan_scratch(p->sub, workers);
    case HOW_VIA: return 2 * (size_t)p->n + mc_fft_plan_scratch(p->sub, workers);
    default: return 0;
    }
}

static void run_complex(mc_fft_plan *p, const kiss_fft_cpx *x, kiss_fft_cpx *y, kiss_fft_cpx *scratch,
                        int workers);

/* The forward and inverse transforms of m share the scratch after a and
 * b: the two are never running at once. */
static void run_bluestein(const mc_fft_plan *p, const kiss_fft_cpx *x, kiss_fft_cpx *y, kiss_fft_cpx *a,
                          int workers)
{
    int n = p->n, m = p->m;
    kiss_fft_cpx *b = a + m, *rest = b + m;
    const kiss_fft_cpx *c = p->chirp, *k = p->kernel;
    for (int j = 0; j < n; j++) {
        a[j].r = x[j].r * c[j].r - x[j].i * c[j].i;
        a[j].i = x[j].r * c[j].i + x[j].i * c[j].r;
    }
    memset(a + n, 0, sizeof(kiss_fft_cpx) * (size_t)(m - n));
    run_complex(p->sub, a, b, rest, workers);
    for (int j = 0; j < m; j++) {
        float r = b[j].r * k[j].r - b[j].i * k[j].i;
        b[j].i = b[j].r * k[j].i + b[j].i * k[j].r;
        b[j].r = r;
    }
    run_complex(p->sub2, b, a, rest, workers);
    for (int j = 0; j < n; j++) {
        y[j].r = a[j].r * c[j].r - a[j].i * c[j].i;
        y[j].i = a[j].r * c[j].i + a[j].i * c[j].r;
    }
}

static void run_complex(mc_fft_plan *p, const kiss_fft_cpx *x, kiss_fft_cpx *y, kiss_fft_cpx *scratch, int workers)
{
    if (p->n == 1)
        y[0] = x[0];
    else if (p->how == HOW_BLUESTEIN)
        run_bluestein(p, x, y, scratch, workers);
    else if (p->how == HOW_FOUR)
        mc_fft4_run(p->four, (const float *)x, (float *)y, (float *)scratch, workers);
    else
        kiss_fft(p->cfg, x, y);
}

/* A real transform through the complex one: r2c keeps the first n/2 + 1
 * outputs; c2r rebuilds the Hermitian spectrum (the imaginary parts of
 * the zero and Nyquist frequencies are ignored, as KissFFT's and
 * pocketfft's c2r ignore them) and keeps the real parts. */
static void run_via(mc_fft_plan *p, const float *in, float *out, kiss_fft_cpx *s, int workers)
{
    int n = p->n, h = n / 2 + 1;
    kiss_fft_cpx *a = s, *b = s + n, *rest = s + 2 * n;
    if (p->kind == MC_FFT_R2C) {
        for (int j = 0; j < n; j++) {
            a[j].r = in[j];
            a[j].i = 0;
        }
        run_complex(p->sub, a, b, rest, workers);
        memcpy(out, b, sizeof(kiss_fft_cpx) * (size_t)h);
        return;
    }
    const kiss_fft_cpx *z = (const kiss_fft_cpx *)(const void *)in;
    for (int k = 0; k < h; k++)
        a[k] = z[k];
    a[0].i = 0;
    if (n % 2 == 0)
        a[n / 2].i = 0;
    for (int k = h; k < n; k++) {
        a[k].r = z[n - k].r;
        a[k].i = -z[n - k].i;
    }
    run_complex(p->sub, a, b, rest, workers);
    for (int j = 0; j < n; j++)
        out[j] = b[j].r;
}

/* An even real transform as a complex one of n/2 points on the reals
 * read as pairs, and the split step (fft_large.c). */
static void run_split(mc_fft_plan *p, const float *in, float *out, kiss_fft_cpx *s, int workers)
{
    if (p->kind == MC_FFT_R2C) {
        run_complex(p->sub, (const kiss_fft_cpx *)(const void *)in, (kiss_fft_cpx *)(void *)out, s, workers);
        mc_fft_split_r2c(p->split, out, workers);
        return;
    }
    mc_fft_split_c2r(p->split, in, (float *)s, workers);
    run_complex(p->sub, s, (kiss_fft_cpx *)(void *)out, s + p->n / 2, workers);
}

void mc_fft_plan_run(mc_fft_plan *p, const float *in, float *out, float *scratch, int workers)
{
    kiss_fft_cpx *s = (kiss_fft_cpx *)(void *)scratch;
    const kiss_fft_cpx *cin = (const kiss_fft_cpx *)(const void *)in;
    kiss_fft_cpx *cout = (kiss_fft_cpx *)(void *)out;
    switch (p->how) {
    case HOW_REAL:
        if (p->kind == MC_FFT_R2C)
            kiss_fftr(p->rcfg, in, cout);
        else
            kiss_fftri(p->rcfg, cin, out);
        return;
    case HOW_SPLIT: run_split(p, in, out, s, workers); return;
    case HOW_VIA: run_via(p, in, out, s, workers); return;
    default: run_complex(p, cin, cout, s, workers); return;
    }
}
