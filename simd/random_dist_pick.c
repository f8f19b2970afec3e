/* Chooses simd/random_dist.c's build from the kernel table in use
 * (simd/dispatch.c: the CPU's best level, or the one MLX_CPU_ISA forces):
 * its AVX-512 or AVX2+FMA build when the level is that one and that build's
 * vector logf agrees with the C library's (checked once), else its generic
 * build. All give the same bits. */
#include <pthread.h>
#include <string.h>

#include "simd/random_dist.h"
#include "simd/simd.h"

void mc_rdist_range_generic(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);
void mc_rdist_bits_range_generic(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out);
#if defined(__x86_64__)
void mc_rdist_range_avx2(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);
void mc_rdist_range_avx512(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);
int mc_rdist_selftest_avx2(void);
int mc_rdist_selftest_avx512(void);
void mc_rdist_bits_range_avx2(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out);
void mc_rdist_bits_range_avx512(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out);

typedef void (*range_fn)(const mc_rdist *, const uint32_t *, size_t, size_t, size_t, void *);
static pthread_once_t pick_once = PTHREAD_ONCE_INIT;
typedef void (*bits_fn)(const uint32_t *, size_t, size_t, size_t, void *);
static range_fn picked = mc_rdist_range_generic;
static bits_fn picked_bits = mc_rdist_bits_range_generic;

static void pick(void)
{
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx512") == 0 && mc_rdist_selftest_avx512()) {
        picked = mc_rdist_range_avx512;
        picked_bits = mc_rdist_bits_range_avx512;
    } else if ((strcmp(isa, "avx2") == 0 || strcmp(isa, "avx512") == 0) && mc_rdist_selftest_avx2()) {
        picked = mc_rdist_range_avx2;
        picked_bits = mc_rdist_bits_range_avx2;
    }
}
#endif

int mc_rdist_supports(mc_rdist_kind kind, mc_rdist_type type)
{
    if (type != MC_RT_F64)
        return 1;
    return kind == MC_RD_NORMAL || kind == MC_RD_LAPLACE;
}

void mc_rdist_range(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out)
{
#if defined(__x86_64__)
    pthread_once(&pick_once, pick);
    picked(d, key, n, j0, j1, out);
#else
    mc_rdist_range_generic(d, key, n, j0, j1, out);
#endif
}

void mc_rdist_bits_range(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out)
{
#if defined(__x86_64__)
    pthread_once(&pick_once, pick);
    picked_bits(key, nbytes, j0, j1, out);
#else
    mc_rdist_bits_range_generic(key, nbytes, j0, j1, out);
#endif
}
