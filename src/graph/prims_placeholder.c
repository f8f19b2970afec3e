/* Owns the Placeholder primitive: a compiled function's traced input. It has
 * a shape and dtype but never data; replay substitutes the real input. */
#include "graph/prims.h"
#include "runtime/error.h"

int mc_placeholder_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)in;
    (void)n;
    (void)fn;
    *out = ((const mc_placeholder_params *)params)->meta;
    return 0;
}

int mc_placeholder_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)out;
    (void)in;
    (void)n;
    (void)params;
    return mc_error("[eval] A compile placeholder cannot be evaluated.");
}
