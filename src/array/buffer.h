/* Buffers: refcounted blocks of array data, either from the data allocator
 * (returned to its cache when freed) or managed (user memory with a
 * destructor that runs exactly once, when the last reference goes). */
#ifndef MC_ARRAY_BUFFER_H
#define MC_ARRAY_BUFFER_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct mc_buffer {
    atomic_long refs;
    void *data;
    size_t nbytes;
    void (*dtor)(void *); /* managed only; may be NULL */
    void *dtor_arg;
    int managed;          /* 0: data came from mc_data_alloc */
} mc_buffer;

/* A new buffer of nbytes with one reference, or NULL (nothing reported). */
mc_buffer *mc_buffer_alloc(size_t nbytes);
/* Wraps user memory; dtor(arg) runs when the last reference is dropped.
 * Returns NULL (nothing reported, dtor not called) on failure. */
mc_buffer *mc_buffer_wrap(void *data, size_t nbytes, void (*dtor)(void *), void *arg);

static inline mc_buffer *mc_buffer_retain(mc_buffer *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

/* Drops one reference; frees (or runs the destructor) at zero. */
void mc_buffer_release(mc_buffer *b);

static inline long mc_buffer_refs(const mc_buffer *b)
{
    return atomic_load_explicit(&b->refs, memory_order_acquire);
}

#endif
