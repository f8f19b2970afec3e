/* Timing and result lines for the bench programs (see bench_util.h). */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { BU_WARM_NS = 50 * 1000 * 1000 };

int64_t bu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

bu_stat bu_summarize(int64_t *samples, int n)
{
    bu_stat st = {0, 0, 0};
    if (n <= 0)
        return st;
    qsort(samples, (size_t)n, sizeof *samples, cmp_i64);
    /* Even counts take the lower middle: a time that was measured. */
    st.median_ns = samples[(n - 1) / 2];
    st.min_ns = samples[0];
    st.reps = n;
    return st;
}

bu_stat bu_measure(int (*fn)(void *), void *ctx, int warm, int reps)
{
    bu_stat st = {0, 0, 0};
    int64_t *t = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *t);
    if (!t)
        return st;
    /* Warm up for `warm` runs and at least BU_WARM_NS: long enough for
     * page faults, caches, the library's worker threads and (on a VM) an
     * idle second vCPU to settle, whatever one run costs. */
    int64_t warm_end = bu_now_ns() + BU_WARM_NS;
    for (int i = 0; i < warm || bu_now_ns() < warm_end; i++)
        if (fn(ctx))
            goto out;
    for (int i = 0; i < reps; i++) {
        int64_t t0 = bu_now_ns();
        if (fn(ctx))
            goto out;
        t[i] = bu_now_ns() - t0;
    }
    st = bu_summarize(t, reps);
out:
    free(t);
    return st;
}

void bu_report(const char *side, const char *name, int threads, bu_stat st)
{
    if (st.reps == 0)
        printf("BENCH side=%s name=%s threads=%d status=failed\n", side, name, threads);
    else
        printf("BENCH side=%s name=%s threads=%d median_ns=%lld min_ns=%lld reps=%d\n", side, name,
               threads, (long long)st.median_ns, (long long)st.min_ns, st.reps);
    fflush(stdout);
}

void bu_unavailable(const char *side, const char *name, int threads, const char *symbol)
{
    printf("BENCH side=%s name=%s threads=%d status=unavailable symbol=%s\n", side, name, threads,
           symbol);
    fflush(stdout);
}

void bu_info(const char *key, const char *value)
{
    printf("INFO %s=%s\n", key, value);
    fflush(stdout);
}

int bu_reps(int reps)
{
    double scale = 1.0;
    const char *q = getenv("BENCH_QUICK");
    const char *sc = getenv("BENCH_REPS_SCALE");
    if (sc && *sc)
        scale = atof(sc);
    if (q && *q && *q != '0')
        scale /= 3.0;
    int n = (int)(reps * scale + 0.5);
    return n > 0 ? n : 1;
}
