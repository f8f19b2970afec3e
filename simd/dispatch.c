/* Runtime ISA dispatch: which kernel tables this CPU can run, each filled
 * once (pthread_once, so concurrent first calls are race-free), and the
 * process's choice among them: the best available, or the one named by
 * MLX_CPU_ISA. Built with generic flags: it only calls into the per-ISA
 * libraries after the CPU check says their instructions exist. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "mlx/c/cpu.h"
#include "simd/kern.h"

void mc_kernels_fill_scalar(mc_kernel_table *t);
#if defined(__x86_64__)
void mc_kernels_fill_avx2(mc_kernel_table *t);
void mc_kernels_fill_avx512(mc_kernel_table *t);
#elif defined(__aarch64__)
void mc_kernels_fill_neon(mc_kernel_table *t);
#endif

enum { ISA_SCALAR, ISA_AVX2, ISA_AVX512, ISA_NEON, ISA_COUNT };
static const char *const isa_names[ISA_COUNT] = {"scalar", "avx2", "avx512", "neon"};

static mc_kernel_table tables[ISA_COUNT];
static pthread_once_t table_once[ISA_COUNT] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
                                               PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void fill_scalar(void) { mc_kernels_fill_scalar(&tables[ISA_SCALAR]); }
#if defined(__x86_64__)
static void fill_avx2(void) { mc_kernels_fill_avx2(&tables[ISA_AVX2]); }
static void fill_avx512(void) { mc_kernels_fill_avx512(&tables[ISA_AVX512]); }
#elif defined(__aarch64__)
static void fill_neon(void) { mc_kernels_fill_neon(&tables[ISA_NEON]); }
#endif

/* Whether this build has the ISA's kernels and this CPU (and OS: the
 * builtins check that the OS saves the AVX / AVX-512 registers) runs them. */
static int isa_available(int isa)
{
    switch (isa) {
    case ISA_SCALAR:
        return 1;
#if defined(__x86_64__)
    case ISA_AVX2: {
        __builtin_cpu_init();
        unsigned a, b, c, d;
        int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        return f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    case ISA_AVX512:
        __builtin_cpu_init();
        return isa_available(ISA_AVX2) && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl");
#elif defined(__aarch64__)
    case ISA_NEON:
        return 1; /* baseline on aarch64 */
#endif
    default:
        return 0;
    }
}

static const mc_kernel_table *table_of(int isa)
{
    switch (isa) {
    case ISA_SCALAR:
        pthread_once(&table_once[ISA_SCALAR], fill_scalar);
        break;
#if defined(__x86_64__)
    case ISA_AVX2:
        pthread_once(&table_once[ISA_AVX2], fill_avx2);
        break;
    case ISA_AVX512:
        pthread_once(&table_once[ISA_AVX512], fill_avx512);
        break;
#elif defined(__aarch64__)
    case ISA_NEON:
        pthread_once(&table_once[ISA_NEON], fill_neon);
        break;
#endif
    default:
        return NULL;
    }
    return &tables[isa];
}

static int isa_index(const char *name)
{
    for (int i = 0; i < ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0)
            return i;
    return -1;
}

static int best_isa(void)
{
    static const int order[] = {ISA_AVX512, ISA_AVX2, ISA_NEON};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (isa_available(order[i]))
            return order[i];
    return ISA_SCALAR;
}

const char *mc_kernels_select(const char *request)
{
    if (request == NULL || request[0] == '\0')
        return isa_names[best_isa()];
    int isa = isa_index(request);
    if (isa < 0 || !isa_available(isa))
        return isa_names[ISA_SCALAR];
    return isa_names[isa];
}

const mc_kernel_table *mc_kernels_for(const char *isa)
{
    if (isa == NULL)
        return NULL;
    int i = isa_index(isa);
    if (i < 0 || !isa_available(i))
        return NULL;
    return table_of(i);
}

static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;
static const mc_kernel_table *chosen;

static void choose(void)
{
    /* getenv once, inside the once-routine: later setenv calls do not
     * change the choice, and nothing else here reads the environment. */
    chosen = mc_kernels_for(mc_kernels_select(getenv("MLX_CPU_ISA")));
    if (chosen == NULL)
        chosen = table_of(ISA_SCALAR);
}

const mc_kernel_table *mc_kernels(void)
{
    pthread_once(&chosen_once, choose);
    return chosen;
}

const char *mlx_cpu_isa(void) { return mc_kernels()->isa; }
