/* Owns the Placeholder primitive: a compiled function's traced input. It has
 * a shape and dtype but never data; replay substitutes the real input. */
#include "graph/prims_placeholder.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static int placeholder_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)in;
    (void)n;
    (void)fn;
    *out = ((const mc_placeholder_params *)params)->meta;
    return 0;
}

static int placeholder_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)out;
    (void)in;
    (void)n;
    (void)params;
    return mc_error("[eval] A compile placeholder cannot be evaluated.");
}

const mc_prim_info mc_prim_placeholder = {
    .name = "Placeholder",
    .arity = 0,
    .infer = placeholder_infer,
    .eval = placeholder_eval,
    .vmap = mc_vmap_unsupported,
};
