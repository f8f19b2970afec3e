/* Owns the layout planning of the reduction family (reduce_view.h): the
 * in-place view of dense inputs, the kept-first copy of the others, and
 * the row / column plan the kernels run on. */
#include <string.h>

#include "graph/reduce_view.h"
#include "runtime/error.h"
#include "simd/simd.h"

/* Copies the ndim-d view (src, sstr) of shape into dst, row-major. */
static void copy_strided(const mc_array *x, const void *src, const int64_t *sstr, int ndim, const int *shape,
                         void *dst)
{
    size_t isz = mc_dtype_size(x->dtype);
    mc_unary_kernel k = mc_kernels()->convert[x->dtype][x->dtype];
    if (ndim == 0) {
        memcpy(dst, src, isz);
        return;
    }
    int64_t dstr[MC_MAX_NDIM];
    mc_row_strides(ndim, shape, dstr);
    mc_unary_strided(k, isz, isz, src, sstr, dst, dstr, ndim, shape);
}

int mc_red_copy_rowmajor(const mc_array *x, mc_buffer **buf, const char *fn)
{
    *buf = NULL;
    if (x->size == 0)
        return 0;
    size_t nbytes = x->size * mc_dtype_size(x->dtype);
    mc_buffer *b = mc_buffer_alloc(nbytes);
    if (!b)
        return mc_error_oom(fn, nbytes);
    copy_strided(x, x->data, x->strides, x->ndim, x->shape, b->data);
    *buf = b;
    return 0;
}

/* Whether x's dims ord[0..k) (outer to inner) tile its data densely. */
static bool dense_in_order(const mc_array *x, const int *ord, int k)
{
    int64_t expect = 1;
    for (int a = k - 1; a >= 0; a--) {
        if (x->strides[ord[a]] != expect)
            return false;
        expect *= x->shape[ord[a]];
    }
    return true;
}

int mc_red_view_make(mc_red_view *v, const mc_array *x, const bool *red, bool trailing, const char *fn)
{
    memset(v, 0, sizeof *v);
    v->itemsize = mc_dtype_size(x->dtype);
    int ord[MC_MAX_NDIM], k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (x->shape[i] != 1)
            ord[k++] = i;
    /* by stride, largest first (insertion sort keeps equal strides in order) */
    for (int a = 1; a < k; a++) {
        int t = ord[a], b = a;
        for (; b > 0 && x->strides[ord[b - 1]] < x->strides[t]; b--)
            ord[b] = ord[b - 1];
        ord[b] = t;
    }
    bool ok = dense_in_order(x, ord, k);
    int last_kept = -1;
    bool seen_red = false;
    for (int a = 0; a < k && ok; a++) {
        int d = ord[a];
        if (red[d]) {
            seen_red = true;
        } else {
            /* the output is row-major in the input's dim order */
            if (d < last_kept || (trailing && seen_red))
                ok = false;
            last_kept = d;
        }
    }
    v->nperm = k;
    if (ok) {
        v->data = x->data;
        memcpy(v->perm, ord, sizeof(int) * (size_t)k);
    } else {
        int n = 0, shape[MC_MAX_NDIM];
        int64_t strides[MC_MAX_NDIM];
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < x->ndim; i++)
                if (x->shape[i] != 1 && red[i] == (pass == 1))
                    v->perm[n++] = i;
        for (int a = 0; a < k; a++) {
            shape[a] = x->shape[v->perm[a]];
            strides[a] = x->strides[v->perm[a]];
        }
        size_t nbytes = x->size * v->itemsize;
        v->tmp = mc_buffer_alloc(nbytes);
        if (!v->tmp)
            return mc_error_oom(fn, nbytes);
        copy_strided(x, x->data, strides, k, shape, v->tmp->data);
        v->data = v->tmp->data;
    }
    for (int a = 0; a < k; a++) {
        int d = v->perm[a];
        if (v->ndim > 0 && v->red[v->ndim - 1] == red[d]) {
            v->size[v->ndim - 1] *= (size_t)x->shape[d];
        } else {
            v->size[v->ndim] = (size_t)x->shape[d];
            v->red[v->ndim] = red[d];
            v->ndim++;
        }
    }
    return 0;
}

void mc_red_view_free(mc_red_view *v)
{
    if (v->tmp)
        mc_buffer_release(v->tmp);
    v->tmp = NULL;
}

bool mc_red_view_plan(const mc_red_view *v, mc_red_plan *plan)
{
    int g = -1;
    size_t total = 1;
    for (int a = 0; a < v->ndim; a++) {
        total *= v->size[a];
        if (v->red[a]) {
            if (g >= 0)
                return false;
            g = a;
        }
    }
    if (g < 0) {
        /* nothing to reduce (every reduced dim has size 1): rows of one */
        plan->outer = total;
        plan->n = 1;
        plan->cols = 1;
        return true;
    }
    plan->outer = 1;
    plan->cols = 1;
    for (int a = 0; a < g; a++)
        plan->outer *= v->size[a];
    for (int a = g + 1; a < v->ndim; a++)
        plan->cols *= v->size[a];
    plan->n = v->size[g];
    return true;
}
