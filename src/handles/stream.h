/* The object behind an mlx_stream handle (ctx points at it) and the calling
 * thread's default stream, which the compile cache keys traces by. */
#ifndef MC_HANDLES_STREAM_H
#define MC_HANDLES_STREAM_H

#include "mlx/c/stream.h"

typedef struct mc_stream {
    int index; /* streams compare equal by index, as in MLX */
    mlx_device_type dev_type;
    int dev_index;
} mc_stream;

/* The index of the calling thread's default stream: 0 (the default CPU
 * stream) until the thread sets another (mlx_set_default_stream). */
int mc_default_stream_index(void);
void mc_set_default_stream_index(int index);

/* A stream index never handed out before in this process (from 1 up). */
int mc_stream_new_index(void);

/* The object of a handle, or NULL with "[fn] ..." reported if empty. */
mc_stream *mc_stream_checked(mlx_stream s, const char *fn);

/* The first statement of every mlx-c function that takes a stream: mlx-c
 * refuses an empty stream handle in all of them (rather than taking it for
 * the default), so we do too. Must sit in a function named mlx_<name>
 * returning int; the error names <name>, as the function's other errors do. */
#define MC_STREAM_REQUIRED(s)                                                                      \
    do {                                                                                           \
        if (!mc_stream_checked((s), __func__ + 4))                                                 \
            return 1;                                                                              \
    } while (0)

/* Makes *dst name the CPU stream `index`, in place if it has an object
 * (an empty handle gets a new one). Returns 0, or 1 with an error. */
int mc_stream_store(const char *fn, mlx_stream *dst, int index);

#endif
