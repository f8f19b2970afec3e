/* Owns the process-wide error handler and each thread's last message. */
#include "runtime/error.h"

#include <pthread.h>
#include <stdatomic.h>
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

/* The installed handler is a refcounted record: the lock guards only the
 * pointer to it, and a report holds a reference while it calls the
 * handler, which is user code (it may call back into the library, take
 * its time, or run on several threads at once). Replacing the handler
 * drops the record's installed reference; whichever reference goes last,
 * the replacement or the last call still running the old handler, runs
 * its destructor. So a destructor never runs while its handler is in a
 * call, and no library lock is held while either runs. */
typedef struct handler_rec {
    atomic_long refs;
    mlx_error_handler_func fn;
    void *data;
    void (*dtor)(void *);
} handler_rec;

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static handler_rec default_rec = {1, mc_default_handler, NULL, NULL}; /* never released */
static handler_rec *current = &default_rec;

static _Thread_local char last_message[MC_ERROR_MAX];
static _Thread_local unsigned long error_serial;

unsigned long mc_error_serial(void) { return error_serial; }

static void handler_release(handler_rec *r)
{
    if (r == &default_rec || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (r->dtor)
        r->dtor(r->data);
    free(r);
}

void mlx_set_error_handler(mlx_error_handler_func fn, void *data, void (*dtor)(void *))
{
    handler_rec *r = malloc(sizeof *r);
    if (!r) {
        /* the handler owned its data from the call on, as in mlx-c */
        if (dtor)
            dtor(data);
        mc_error_oom("mlx_set_error_handler", sizeof *r);
        return;
    }
    atomic_init(&r->refs, 1);
    r->fn = fn ? fn : mc_default_handler;
    r->data = data;
    r->dtor = dtor;
    pthread_mutex_lock(&handler_lock);
    handler_rec *old = current;
    current = r;
    pthread_mutex_unlock(&handler_lock);
    handler_release(old);
}

static void mc_dispatch(const char *msg)
{
    error_serial++;
    pthread_mutex_lock(&handler_lock);
    handler_rec *r = current;
    if (r != &default_rec)
        atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&handler_lock);
    r->fn(msg, r->data);
    handler_release(r);
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
