/* Owns the Scan primitive (cumsum, cumprod, cummax, cummin, logcumsumexp
 * along one axis, forward or reverse, inclusive or exclusive). The input
 * is made row-contiguous (copied if it is not); a scan along the last
 * axis runs the row kernel over rows, any other axis the column kernel
 * over blocks of (axis, inner) with chunks of columns, split over the
 * pool. The output may take the input's buffer: the kernels read each
 * element before writing its position. */
#include <string.h>

#include "graph/prims_scan.h"
#include "graph/reduce_view.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "simd/reduce.h"

static const char *const scan_names[MC_S_COUNT] = {"CumSum", "CumProd", "CumMax", "CumMin", "CumLogAddExp"};
static const char *const scan_fns[MC_S_COUNT] = {"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"};

static const char *scan_name(const void *params)
{
    int op = ((const mc_scan_params *)params)->op;
    return op >= 0 && op < MC_S_COUNT ? scan_names[op] : "Scan";
}

static int scan_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_scan_params *p = params;
    const mc_array *x = in[0];
    if (p->op < 0 || p->op >= MC_S_COUNT)
        return mc_error("[%s] Unknown scan %d.", fn, p->op);
    if (p->axis < 0 || p->axis >= x->ndim)
        return mc_error("[%s] Axis %d is out of bounds for array with %d dimensions.", fn, p->axis, x->ndim);
    if (!mc_reduce_kernels()->scan_row[p->op][x->dtype])
        return mc_error("[%s] Not supported for %s.", fn, mc_dtype_name(x->dtype));
    out->dtype = mc_scan_out_dtype(p->op, x->dtype);
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof(int) * (size_t)x->ndim);
    return 0;
}

typedef struct scan_job {
    mc_scan_row_fn row;
    mc_scan_col_fn col;
    const char *x;
    char *y;
    size_t n, inner, isz, osz, cw, nch;
    int reverse, inclusive;
} scan_job;

static void scan_range(void *ctx, size_t b, size_t e)
{
    scan_job *j = ctx;
    if (j->inner == 1) {
        j->row(j->x + b * j->n * j->isz, j->y + b * j->n * j->osz, j->n, e - b, j->reverse, j->inclusive);
        return;
    }
    for (size_t t = b; t < e; t++) {
        size_t o = t / j->nch, j0 = (t % j->nch) * j->cw;
        size_t w = j->inner - j0 < j->cw ? j->inner - j0 : j->cw;
        size_t off = o * j->n * j->inner + j0;
        j->col(j->x + off * j->isz, j->y + off * j->osz, j->n, w, j->inner, j->reverse, j->inclusive);
    }
}

static int scan_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_scan_params *p = params;
    mc_array *x = in[0];
    const char *fn = scan_fns[p->op];
    const mc_reduce_table *T = mc_reduce_kernels();
    mc_buffer *copy = NULL;
    const char *xd = x->data;
    bool rows = (x->flags & MC_FLAG_ROW_CONTIG) != 0;
    if (!rows && mc_red_copy_rowmajor(x, &copy, fn))
        return 1;
    if (copy)
        xd = copy->data;
    mc_array *cands[1] = {x};
    if (mc_out_alloc(out, cands, rows ? 1 : 0, fn)) {
        if (copy)
            mc_buffer_release(copy);
        return 1;
    }
    if (out->size > 0) {
        scan_job j = {T->scan_row[p->op][x->dtype], T->scan_col[p->op][x->dtype], xd, out->data,
                      (size_t)x->shape[p->axis], 1, mc_dtype_size(x->dtype), mc_dtype_size(out->dtype),
                      0, 0, p->reverse, p->inclusive};
        size_t outer = 1;
        for (int i = 0; i < p->axis; i++)
            outer *= (size_t)x->shape[i];
        for (int i = p->axis + 1; i < x->ndim; i++)
            j.inner *= (size_t)x->shape[i];
        if (j.inner == 1) {
            mc_parallel_for(outer, j.n ? (MC_RED_GRAIN + j.n - 1) / j.n : outer, scan_range, &j);
        } else {
            j.cw = ((MC_RED_GRAIN / j.n + 255) / 256) * 256;
            if (j.cw == 0)
                j.cw = 256;
            j.nch = (j.inner + j.cw - 1) / j.cw;
            size_t tasks = outer * j.nch;
            mc_parallel_for(tasks, out->size < 2 * MC_RED_GRAIN ? tasks : 1, scan_range, &j);
        }
    }
    if (copy)
        mc_buffer_release(copy);
    return 0;
}

const mc_prim_info mc_prim_scan = {
    .name = "Scan",
    .arity = 1,
    .infer = scan_infer,
    .eval = scan_eval,
    .name_of = scan_name,
};
