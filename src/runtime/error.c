/* Owns the process-wide error handler and each thread's last message. */
#include "runtime/error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/cpu.h"
#include "mlx/c/error.h"

enum { MC_ERROR_MAX = 1024 };

static void mc_default_handler(const char *msg, void *data)
{
    (void)data;
    printf("MLX error: %s\n", msg);
    fflush(stdout);
    exit(-1);
}

/* The handler triple is swapped under a lock, but the handler itself is
 * called without it: it is user code and may call back into the library. */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static mlx_error_handler_func handler = mc_default_handler;
static void *handler_data;
static void (*handler_dtor)(void *);

static _Thread_local char last_message[MC_ERROR_MAX];
static _Thread_local unsigned long error_serial;

unsigned long mc_error_serial(void) { return error_serial; }

void mlx_set_error_handler(mlx_error_handler_func fn, void *data, void (*dtor)(void *))
{
    pthread_mutex_lock(&handler_lock);
    void *old_data = handler_data;
    void (*old_dtor)(void *) = handler_dtor;
    handler = fn ? fn : mc_default_handler;
    handler_data = data;
    handler_dtor = dtor;
    pthread_mutex_unlock(&handler_lock);
    if (old_dtor)
        old_dtor(old_data);
}

static void mc_dispatch(const char *msg)
{
    error_serial++;
    pthread_mutex_lock(&handler_lock);
    mlx_error_handler_func fn = handler;
    void *data = handler_data;
    pthread_mutex_unlock(&handler_lock);
    fn(msg, data);
}

int mc_verror(const char *fmt, va_list ap)
{
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    mc_dispatch(last_message);
    return 1;
}

int mc_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mc_verror(fmt, ap);
    va_end(ap);
    return 1;
}

int mc_error_oom(const char *where, size_t bytes)
{
    return mc_error("[%s] Out of memory allocating %zu bytes.", where, bytes);
}

void _mlx_error(const char *file, const int line, const char *fmt, ...)
{
    char body[MC_ERROR_MAX - 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(last_message, sizeof last_message, "%s at %.100s:%d", body, file, line);
    mc_dispatch(last_message);
}

const char *mlx_cpu_last_error(void)
{
    return last_message;
}

void mlx_cpu_clear_last_error(void)
{
    last_message[0] = '\0';
}
