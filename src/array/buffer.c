/* Owns buffer lifetime: allocation, wrapping of managed data, release. */
#include "array/buffer.h"

#include "runtime/alloc.h"
#include "runtime/obj_cache.h"

mc_buffer *mc_buffer_alloc(size_t nbytes)
{
    mc_buffer *b = mc_obj_alloc(sizeof *b);
    if (!b)
        return NULL;
    b->data = mc_data_alloc(nbytes);
    if (!b->data) {
        mc_obj_free(b, sizeof *b);
        return NULL;
    }
    atomic_init(&b->refs, 1);
    b->nbytes = nbytes;
    b->dtor = NULL;
    b->dtor_arg = NULL;
    b->managed = 0;
    return b;
}

mc_buffer *mc_buffer_wrap(void *data, size_t nbytes, void (*dtor)(void *), void *arg)
{
    mc_buffer *b = mc_obj_alloc(sizeof *b);
    if (!b)
        return NULL;
    atomic_init(&b->refs, 1);
    b->data = data;
    b->nbytes = nbytes;
    b->dtor = dtor;
    b->dtor_arg = arg;
    b->managed = 1;
    mc_data_account((ptrdiff_t)nbytes);
    return b;
}

void mc_buffer_release(mc_buffer *b)
{
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (b->managed) {
        mc_data_account(-(ptrdiff_t)b->nbytes);
        if (b->dtor)
            b->dtor(b->dtor_arg);
    } else {
        mc_data_free(b->data, b->nbytes);
    }
    mc_obj_free(b, sizeof *b);
}
