/* Evaluation of lazy graphs. */
#ifndef MC_GRAPH_EVAL_H
#define MC_GRAPH_EVAL_H

#include "array/array.h"

/* Evaluates every array in outs (NULLs skipped): runs each pending node
 * once in topological order, walking iteratively, and detaches evaluated
 * nodes from their inputs. Returns 0, or non-zero with "[fn] ..." reported
 * (arrays evaluated before the failure keep their data). */
int mc_eval(mc_array *const *outs, size_t n, const char *fn);

/* The function that started the evaluation running on this thread (mc_eval's
 * fn: "eval", "array_item_float32"...), or "eval" outside one: errors that
 * a step meets while running name it, since the step's primitive is not a
 * function the user called. */
const char *mc_eval_caller(void);

static inline int mc_eval1(mc_array *a, const char *fn) { return mc_eval(&a, 1, fn); }

#endif
