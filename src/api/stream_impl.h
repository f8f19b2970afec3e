/* The object behind an mlx_stream handle (ctx points at it) and the calling
 * thread's default stream, which the compile cache keys traces by. */
#ifndef MC_API_STREAM_IMPL_H
#define MC_API_STREAM_IMPL_H

#include "mlx/c/stream.h"

typedef struct mc_stream {
    int index; /* streams compare equal by index, as in MLX */
    mlx_device_type dev_type;
    int dev_index;
} mc_stream;

/* The index of the calling thread's default stream: 0 (the default CPU
 * stream) until the thread calls mlx_set_default_stream. */
int mc_default_stream_index(void);

#endif
