/* Strided walks over n-d views (generic build): drop dims of size 1, merge
 * neighbouring dims that are contiguous with each other in every operand,
 * then walk the outer dims with an index counter (no recursion) and hand
 * each innermost run to a contiguous kernel: directly when every operand
 * has stride 1, through the scalar-broadcast classes when an input has
 * stride 0, else through small stack buffers (gather, run, scatter). */
#include <string.h>

#include "simd/kern.h"

/* Every kept dim has size >= 2, so more than 63 of them would describe
 * more than 2^63 elements: 64 slots always suffice. */
enum { MAX_DIMS = 64, RUN = 256 };

typedef struct walk {
    int nd;                /* dims kept, outermost first */
    int64_t shape[MAX_DIMS];
    int64_t st[3][MAX_DIMS]; /* per operand, in elements */
} walk;

/* Fills w from the arguments; returns the number of elements (0: nothing
 * to do). nops is 2 (x, y) or 3 (a, b, y). */
static int64_t walk_init(walk *w, int nops, const int64_t *const strides[3], int ndim,
                         const int *shape)
{
    int64_t total = 1;
    w->nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] <= 0)
            return 0;
        total *= shape[d];
        if (shape[d] == 1)
            continue;
        int k = w->nd;
        if (k > 0) {
            /* merge into the previous (outer) dim if it steps over exactly
             * this dim in every operand */
            int merge = 1;
            for (int o = 0; o < nops; o++)
                if (w->st[o][k - 1] != strides[o][d] * shape[d])
                    merge = 0;
            if (merge) {
                w->shape[k - 1] *= shape[d];
                for (int o = 0; o < nops; o++)
                    w->st[o][k - 1] = strides[o][d];
                continue;
            }
        }
        w->shape[k] = shape[d];
        for (int o = 0; o < nops; o++)
            w->st[o][k] = strides[o][d];
        w->nd = k + 1;
    }
    if (w->nd == 0) { /* one element */
        w->nd = 1;
        w->shape[0] = 1;
        for (int o = 0; o < nops; o++)
            w->st[o][0] = 0;
    }
    return total;
}

/* Moves the outer index counter one step: offs[o] (bytes) follow. Returns
 * 0 when the outer dims are exhausted. */
static int walk_next(const walk *w, int64_t *idx, int nops, const size_t *size, int64_t *offs)
{
    for (int d = w->nd - 2; d >= 0; d--) {
        idx[d]++;
        for (int o = 0; o < nops; o++)
            offs[o] += w->st[o][d] * (int64_t)size[o];
        if (idx[d] < w->shape[d])
            return 1;
        for (int o = 0; o < nops; o++)
            offs[o] -= w->st[o][d] * (int64_t)size[o] * w->shape[d];
        idx[d] = 0;
    }
    return 0;
}

/* dst[i] = src[i * stride] for i < n, elements of size bytes */
static void gather(void *dst, const char *src, int64_t stride, size_t n, size_t size)
{
    int64_t step = stride * (int64_t)size;
    switch (size) {
    case 1:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = *(const uint8_t *)(src + (int64_t)i * step);
        break;
    case 2:
        for (size_t i = 0; i < n; i++)
            memcpy((uint16_t *)dst + i, src + (int64_t)i * step, 2);
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            memcpy((uint32_t *)dst + i, src + (int64_t)i * step, 4);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            memcpy((char *)dst + i * size, src + (int64_t)i * step, size);
        break;
    }
}

/* dst[i * stride] = src[i] for i < n (an output never has stride 0) */
static void scatter(char *dst, int64_t stride, const void *src, size_t n, size_t size)
{
    int64_t step = stride * (int64_t)size;
    switch (size) {
    case 1:
        for (size_t i = 0; i < n; i++)
            *(uint8_t *)(dst + (int64_t)i * step) = ((const uint8_t *)src)[i];
        break;
    case 2:
        for (size_t i = 0; i < n; i++)
            memcpy(dst + (int64_t)i * step, (const uint16_t *)src + i, 2);
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            memcpy(dst + (int64_t)i * step, (const uint32_t *)src + i, 4);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            memcpy(dst + (int64_t)i * step, (const char *)src + i * size, size);
        break;
    }
}

/* dst[i * stride] = *one for i < n */
static void fill_strided(char *dst, int64_t stride, const void *one, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++)
        memcpy(dst + (int64_t)i * stride * (int64_t)size, one, size);
}

static void unary_run(mc_unary_kernel k, size_t isz, size_t osz, const char *x, int64_t sx,
                      char *y, int64_t sy, size_t n)
{
    if (sx == 1 && sy == 1) {
        k(x, y, n);
        return;
    }
    _Alignas(64) unsigned char bx[RUN * 8], by[RUN * 8];
    if (sx == 0) { /* one input value: compute once, then fill */
        k(x, by, 1);
        if (sy == 1)
            for (size_t i = 0; i < n; i++)
                memcpy(y + i * osz, by, osz);
        else
            fill_strided(y, sy, by, n, osz);
        return;
    }
    for (size_t i = 0; i < n; i += RUN) {
        size_t m = n - i < RUN ? n - i : RUN;
        const void *in = x + (int64_t)i * sx * (int64_t)isz;
        if (sx != 1) {
            gather(bx, in, sx, m, isz);
            in = bx;
        }
        if (sy == 1) {
            k(in, y + i * osz, m);
        } else {
            k(in, by, m);
            scatter(y + (int64_t)i * sy * (int64_t)osz, sy, by, m, osz);
        }
    }
}

void mc_unary_strided(mc_unary_kernel k, size_t in_itemsize, size_t out_itemsize,
                      const void *x, const int64_t *xs, void *y, const int64_t *ys, int ndim,
                      const int *shape)
{
    walk w;
    const int64_t *const strides[3] = {xs, ys, NULL};
    if (walk_init(&w, 2, strides, ndim, shape) == 0)
        return;
    const size_t size[2] = {in_itemsize, out_itemsize};
    int64_t idx[MAX_DIMS] = {0};
    int64_t offs[2] = {0, 0};
    int last = w.nd - 1;
    do {
        unary_run(k, in_itemsize, out_itemsize, (const char *)x + offs[0], w.st[0][last],
                  (char *)y + offs[1], w.st[1][last], (size_t)w.shape[last]);
    } while (walk_next(&w, idx, 2, size, offs));
}

static void binary_run(const mc_binary_kernel bin[MC_BINARY_CLASSES], size_t isz, size_t osz,
                       const char *a, int64_t sa, const char *b, int64_t sb, char *y, int64_t sy,
                       size_t n)
{
    if (sy == 1) {
        if (sa == 1 && sb == 1) {
            bin[MC_VV](a, b, y, n);
            return;
        }
        if (sa == 0 && sb == 1) {
            bin[MC_SV](a, b, y, n);
            return;
        }
        if (sa == 1 && sb == 0) {
            bin[MC_VS](a, b, y, n);
            return;
        }
    }
    _Alignas(64) unsigned char ba[RUN * 8], bb[RUN * 8], by[RUN * 8];
    if (sa == 0 && sb == 0) { /* one value: compute once, then fill */
        bin[MC_VV](a, b, by, 1);
        if (sy == 1)
            for (size_t i = 0; i < n; i++)
                memcpy(y + i * osz, by, osz);
        else
            fill_strided(y, sy, by, n, osz);
        return;
    }
    int cls = sa == 0 ? MC_SV : sb == 0 ? MC_VS : MC_VV;
    for (size_t i = 0; i < n; i += RUN) {
        size_t m = n - i < RUN ? n - i : RUN;
        const void *pa = a + (int64_t)i * sa * (int64_t)isz;
        const void *pb = b + (int64_t)i * sb * (int64_t)isz;
        if (sa != 1 && sa != 0) {
            gather(ba, pa, sa, m, isz);
            pa = ba;
        }
        if (sb != 1 && sb != 0) {
            gather(bb, pb, sb, m, isz);
            pb = bb;
        }
        if (sy == 1) {
            bin[cls](pa, pb, y + i * osz, m);
        } else {
            bin[cls](pa, pb, by, m);
            scatter(y + (int64_t)i * sy * (int64_t)osz, sy, by, m, osz);
        }
    }
}

void mc_binary_strided(const mc_binary_kernel bin[MC_BINARY_CLASSES], size_t in_itemsize,
                       size_t out_itemsize, const void *a, const int64_t *as, const void *b,
                       const int64_t *bs, void *y, const int64_t *ys, int ndim, const int *shape)
{
    walk w;
    const int64_t *const strides[3] = {as, bs, ys};
    if (walk_init(&w, 3, strides, ndim, shape) == 0)
        return;
    const size_t size[3] = {in_itemsize, in_itemsize, out_itemsize};
    int64_t idx[MAX_DIMS] = {0};
    int64_t offs[3] = {0, 0, 0};
    int last = w.nd - 1;
    do {
        binary_run(bin, in_itemsize, out_itemsize, (const char *)a + offs[0], w.st[0][last],
                   (const char *)b + offs[1], w.st[1][last], (char *)y + offs[2], w.st[2][last],
                   (size_t)w.shape[last]);
    } while (walk_next(&w, idx, 3, size, offs));
}
