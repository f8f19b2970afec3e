/* Error handling: every failing call reports one message through the
 * installed handler and returns non-zero. */
#ifndef MLX_ERROR_H
#define MLX_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A handler receives the message and the data given with it. */
typedef void (*mlx_error_handler_func)(const char* msg, void* data);

/* Installs handler (NULL restores the default, which prints the message and
 * exits). data is passed to every call of handler; dtor, if not NULL, is
 * called on data when the handler is replaced. */
void mlx_set_error_handler(
    mlx_error_handler_func handler,
    void* data,
    void (*dtor)(void*));

/* Reports a formatted message, with file and line appended, to the handler. */
void _mlx_error(const char* file, const int line, const char* fmt, ...);

#define mlx_error(...) _mlx_error(__FILE__, __LINE__, __VA_ARGS__)

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
