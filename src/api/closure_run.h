/* Running an mlx_closure as the function a transform differentiates
 * (mc_ad_fun of transforms/autodiff.h): transforms_ad.c defines it, the
 * custom-function transforms (transforms_custom.c) use it too. */
#ifndef MC_API_CLOSURE_RUN_H
#define MC_API_CLOSURE_RUN_H

#include <stdbool.h>

#include "handles/closure.h"
#include "transforms/autodiff.h"

typedef struct mc_closure_run {
    mc_closure *c;
    const char *fn;
    bool stop_rest; /* value_and_grad: outputs after the first get no gradient */
} mc_closure_run;

/* mc_ad_fun over ctx, an mc_closure_run. */
int mc_run_closure(void *ctx, mc_array *const *in, int n, mc_array ***outs, int *nout);

#endif
