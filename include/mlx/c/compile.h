/* compile: turn a closure into one that traces its graph once per input
 * signature, simplifies and fuses it, and replays the stored trace on later
 * calls. Traces are cached per thread; erasing and clearing reach every
 * thread. */
#ifndef MLX_COMPILE_H
#define MLX_COMPILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* How much compile does; the values are mlx-c's. DISABLED runs closures as
 * they are, NO_SIMPLIFY traces without simplifying the graph, NO_FUSE
 * simplifies without fusing, ENABLED does everything. */
typedef enum mlx_compile_mode_ {
  MLX_COMPILE_MODE_DISABLED,
  MLX_COMPILE_MODE_NO_SIMPLIFY,
  MLX_COMPILE_MODE_NO_FUSE,
  MLX_COMPILE_MODE_ENABLED
} mlx_compile_mode;

/* Writes to *res a compiled version of fun (a closure the caller frees).
 * With shapeless, a trace is reused for inputs of any shape with the same
 * dtypes and ranks. Returns 0, or 1 with an error reported if fun is
 * empty. */
int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless);
/* As mlx_compile, but traces are keyed by fun_id (so a binding can erase
 * them) and by the constants_num values of constants. */
int mlx_detail_compile(
    mlx_closure* res,
    const mlx_closure fun,
    uintptr_t fun_id,
    bool shapeless,
    const uint64_t* constants,
    size_t constants_num);
/* Drops every stored trace, in every thread; returns 0. */
int mlx_detail_compile_clear_cache(void);
/* Drops the traces keyed by fun_id, in every thread; returns 0. */
int mlx_detail_compile_erase(uintptr_t fun_id);
/* Turn compilation off or back on for the whole process (compiled closures
 * then run uncompiled or compiled); return 0. */
int mlx_disable_compile(void);
int mlx_enable_compile(void);
/* Sets the process-wide compile mode; returns 0, or 1 with an error
 * reported for a value that is not a mode. */
int mlx_set_compile_mode(mlx_compile_mode mode);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
