/* Runtime ISA dispatch, in one place: the list of ISAs this build has
 * kernels for (MC_ISA_LIST), from which the ISA names, the CPU checks and
 * the table fill all come; the tables (elementwise and reduction, one pair
 * per ISA), filled once for every ISA this CPU runs; and the process's
 * choice among them: the best one, or the one MLX_CPU_ISA names.
 *
 * Concurrency: the fill runs under one pthread_once, so a table is complete
 * before any caller of mc_kernels_for() sees it. The choice runs under a
 * second pthread_once and is published with a release store of one
 * pointer, which mc_kernels() and mc_reduce_kernels() read with an acquire
 * load: after the first call the hot path is one atomic load, and readers
 * see the filled tables (no data race under C11 or TSan). The choice reads
 * the environment once, so a later setenv changes nothing. The two onces
 * are separate so that a process forked after a table lookup still makes
 * its own choice (the tests rely on it).
 *
 * Built with generic flags: it calls into the per-ISA libraries only after
 * the CPU check says their instructions exist. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "simd/reduce.h"
#include "simd/simd.h"

#if defined(__x86_64__)
/* The builtins also check that the OS saves the AVX / AVX-512 registers. */
static bool cpu_has_avx2(void)
{
    __builtin_cpu_init();
    unsigned a, b, c, d;
    bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    return f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static bool cpu_has_avx512(void)
{
    __builtin_cpu_init();
    return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}
#endif

/* X(name, runs_here): every ISA of this build, lowest first. name is the
 * MLX_CPU_ISA value, the tables' isa string and the suffix of the ISA's
 * filler mc_simd_fill_<name> (fill.c, built per ISA by simd/meson.build,
 * whose list of ISAs must match this one); runs_here is the CPU check.
 * Dispatch picks the last entry that runs here. NEON is baseline on
 * aarch64. Adding an ISA is one row here and one in simd/meson.build. */
#if defined(__x86_64__)
#define MC_ISA_LIST(X) X(scalar, true) X(avx2, cpu_has_avx2()) X(avx512, cpu_has_avx512())
#elif defined(__aarch64__)
#define MC_ISA_LIST(X) X(scalar, true) X(neon, true)
#else
#define MC_ISA_LIST(X) X(scalar, true)
#endif

#define MC_ISA_ENUM(name, runs_here) ISA_##name,
enum { MC_ISA_LIST(MC_ISA_ENUM) ISA_COUNT };
#undef MC_ISA_ENUM

#define MC_ISA_NAME(name, runs_here) #name,
static const char *const isa_names[ISA_COUNT] = {MC_ISA_LIST(MC_ISA_NAME)};
#undef MC_ISA_NAME

#define MC_ISA_FILLER(name, runs_here) void mc_simd_fill_##name(mc_kernel_table *k, mc_reduce_table *r);
MC_ISA_LIST(MC_ISA_FILLER)
#undef MC_ISA_FILLER

/* The two tables of one ISA: mc_kernels() and mc_reduce_kernels() return
 * halves of one entry, so both always run the same ISA. */
typedef struct isa_tables {
    mc_kernel_table kern;
    mc_reduce_table red;
} isa_tables;

/* Written only inside fill_all (under fill_once), read only after it. */
static isa_tables tables[ISA_COUNT];
static bool runs_here[ISA_COUNT];
static pthread_once_t fill_once = PTHREAD_ONCE_INIT;

static void fill_all(void)
{
#define MC_ISA_FILL(name, runs)                                                 \
    if (runs) {                                                                 \
        mc_simd_fill_##name(&tables[ISA_##name].kern, &tables[ISA_##name].red); \
        tables[ISA_##name].kern.isa = tables[ISA_##name].red.isa = #name;       \
        runs_here[ISA_##name] = true;                                           \
    }
    MC_ISA_LIST(MC_ISA_FILL)
#undef MC_ISA_FILL
}

/* The index of a runnable ISA named `name`, or -1. */
static int runnable_isa(const char *name)
{
    pthread_once(&fill_once, fill_all);
    if (name == NULL)
        return -1;
    for (int i = 0; i < ISA_COUNT; i++)
        if (runs_here[i] && strcmp(name, isa_names[i]) == 0)
            return i;
    return -1;
}

/* The ISA chosen for MLX_CPU_ISA = request (see mc_kernels_select). */
static int select_isa(const char *request)
{
    pthread_once(&fill_once, fill_all);
    if (request == NULL || request[0] == '\0') {
        for (int i = ISA_COUNT - 1; i > 0; i--)
            if (runs_here[i])
                return i;
        return ISA_scalar;
    }
    int i = runnable_isa(request);
    return i < 0 ? ISA_scalar : i;
}

const char *mc_kernels_select(const char *request) { return isa_names[select_isa(request)]; }

const char *mc_kernels_isa_name(int i) { return i >= 0 && i < ISA_COUNT ? isa_names[i] : NULL; }

const mc_kernel_table *mc_kernels_for(const char *isa)
{
    int i = runnable_isa(isa);
    return i < 0 ? NULL : &tables[i].kern;
}

const mc_reduce_table *mc_reduce_kernels_for(const char *isa)
{
    int i = runnable_isa(isa);
    return i < 0 ? NULL : &tables[i].red;
}

static _Atomic(const isa_tables *) chosen;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
    const isa_tables *t = &tables[select_isa(getenv("MLX_CPU_ISA"))];
    atomic_store_explicit(&chosen, t, memory_order_release);
}

static const isa_tables *chosen_tables(void)
{
    const isa_tables *t = atomic_load_explicit(&chosen, memory_order_acquire);
    if (t == NULL) {
        pthread_once(&choose_once, choose);
        t = atomic_load_explicit(&chosen, memory_order_acquire);
    }
    return t;
}

const mc_kernel_table *mc_kernels(void) { return &chosen_tables()->kern; }

const mc_reduce_table *mc_reduce_kernels(void) { return &chosen_tables()->red; }
