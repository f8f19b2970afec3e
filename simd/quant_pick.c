/* Chooses simd/quant_k.c's build from the kernel table in use
 * (simd/dispatch.c: the CPU's best level, or the one MLX_CPU_ISA forces):
 * the AVX-512 or AVX2+FMA build at those levels, else the generic one. The
 * builds differ in speed and in the rounding of their sums, not in what
 * they compute. */
#include <pthread.h>
#include <string.h>

#include "simd/quant.h"
#include "simd/simd.h"

#define QK_DECLARE(v)                                                                                       \
    void mc_qdequant_f32_##v(const mc_qmat *q, int row, int e0, int count, float *out);                     \
    size_t mc_qgemv_t_scratch_##v(const mc_qmat *q, int M, int K);                                          \
    void mc_qgemv_t_##v(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo, \
                        int n0, int n1, float *tmp);                                                        \
    size_t mc_qgemv_t_prep_size_##v(const mc_qmat *q, int M, int K);                                        \
    void mc_qgemv_t_prep_##v(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *prep);      \
    void mc_qgemv_t_rows_##v(const mc_qmat *q, int K, const float *x, int M, size_t ldx, const float *prep, \
                             float *out, size_t ldo, int n0, int n1, float *work);
QK_DECLARE(generic)
#if defined(__x86_64__)
QK_DECLARE(avx2)
QK_DECLARE(avx512)
#endif

typedef struct qk_fns {
    void (*dequant)(const mc_qmat *, int, int, int, float *);
    size_t (*scratch)(const mc_qmat *, int, int);
    void (*gemv)(const mc_qmat *, int, const float *, int, size_t, float *, size_t, int, int, float *);
    size_t (*prep_size)(const mc_qmat *, int, int);
    void (*prep)(const mc_qmat *, int, const float *, int, size_t, float *);
    void (*rows)(const mc_qmat *, int, const float *, int, size_t, const float *, float *, size_t, int, int,
                 float *);
} qk_fns;

static qk_fns picked = {mc_qdequant_f32_generic,      mc_qgemv_t_scratch_generic, mc_qgemv_t_generic,
                        mc_qgemv_t_prep_size_generic, mc_qgemv_t_prep_generic,    mc_qgemv_t_rows_generic};
static pthread_once_t pick_once = PTHREAD_ONCE_INIT;

static void pick(void)
{
#if defined(__x86_64__)
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx512") == 0)
        picked = (qk_fns){mc_qdequant_f32_avx512,      mc_qgemv_t_scratch_avx512, mc_qgemv_t_avx512,
                          mc_qgemv_t_prep_size_avx512, mc_qgemv_t_prep_avx512,    mc_qgemv_t_rows_avx512};
    else if (strcmp(isa, "avx2") == 0)
        picked = (qk_fns){mc_qdequant_f32_avx2,      mc_qgemv_t_scratch_avx2, mc_qgemv_t_avx2,
                          mc_qgemv_t_prep_size_avx2, mc_qgemv_t_prep_avx2,    mc_qgemv_t_rows_avx2};
#endif
}

void mc_qdequant_f32(const mc_qmat *q, int row, int e0, int count, float *out)
{
    pthread_once(&pick_once, pick);
    picked.dequant(q, row, e0, count, out);
}

size_t mc_qgemv_t_scratch(const mc_qmat *q, int M, int K)
{
    pthread_once(&pick_once, pick);
    return picked.scratch(q, M, K);
}

void mc_qgemv_t(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo, int n0, int n1,
                float *tmp)
{
    pthread_once(&pick_once, pick);
    picked.gemv(q, K, x, M, ldx, out, ldo, n0, n1, tmp);
}

size_t mc_qgemv_t_prep_size(const mc_qmat *q, int M, int K)
{
    pthread_once(&pick_once, pick);
    return picked.prep_size(q, M, K);
}

void mc_qgemv_t_prep(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *prep)
{
    pthread_once(&pick_once, pick);
    picked.prep(q, K, x, M, ldx, prep);
}

void mc_qgemv_t_rows(const mc_qmat *q, int K, const float *x, int M, size_t ldx, const float *prep, float *out,
                     size_t ldo, int n0, int n1, float *work)
{
    pthread_once(&pick_once, pick);
    picked.rows(q, K, x, M, ldx, prep, out, ldo, n0, n1, work);
}
