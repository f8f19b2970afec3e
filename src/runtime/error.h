/* Error reporting: the one way a failing call tells the user what went wrong.
 * Every message goes through the mlx-c error handler (include/mlx/c/error.h)
 * and is also kept as the calling thread's last message (include/mlx/c/cpu.h). */
#ifndef MC_RUNTIME_ERROR_H
#define MC_RUNTIME_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* Formats a message, stores it as this thread's last error and hands it to
 * the installed handler. Always returns 1 so callers can `return mc_error(...)`.
 * Convention: messages start with "[function] " naming the mlx-c function. */
int mc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int mc_verror(const char *fmt, va_list ap);

/* Counts the messages reported on the calling thread so far. A caller that
 * wraps user code compares it before and after, so that a failure already
 * reported inside is not reported a second time. */
unsigned long mc_error_serial(void);

/* Reports an allocation failure of `bytes` inside `where`; returns 1. */
int mc_error_oom(const char *where, size_t bytes);

#endif
