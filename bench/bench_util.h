/* Timing and reporting shared by the bench programs: a monotonic clock,
 * median-of-N measurement after warm-up, and the one-line result format
 * that bench/report.py parses (bench/numpy_ref.py prints the same). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdint.h>

/* Nanoseconds from CLOCK_MONOTONIC. */
int64_t bu_now_ns(void);

typedef struct {
    int64_t median_ns;
    int64_t min_ns;
    int reps;
} bu_stat;

/* Runs fn(ctx) untimed warm times and for at least 50 ms, then reps times
 * timed one by one, and returns the median and minimum. fn returns
 * non-zero on failure, which stops the measurement and yields reps == 0. */
bu_stat bu_measure(int (*fn)(void *), void *ctx, int warm, int reps);

/* Sorts samples[0..n) in place and returns their median and minimum. */
bu_stat bu_summarize(int64_t *samples, int n);

/* Prints "BENCH side=.. name=.. threads=.. median_ns=.. min_ns=.. reps=..".
 * A stat with reps == 0 prints status=failed instead of times. */
void bu_report(const char *side, const char *name, int threads, bu_stat st);

/* Prints the row of a figure that could not be measured because the
 * library does not export `symbol` yet. */
void bu_unavailable(const char *side, const char *name, int threads, const char *symbol);

/* Prints "INFO key=value" (value must not contain newlines). */
void bu_info(const char *key, const char *value);

/* Scales a repetition count by BENCH_REPS_SCALE (a factor, default 1;
 * bench/run.sh lowers it and runs several rounds instead), and by a third
 * more under BENCH_QUICK=1 (a smoke run). Never below 1. */
int bu_reps(int reps);

#endif
