/*
 * Whether caller memory lies in the calling thread's live stack (see
 * live_stack.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>

#include "live_stack.h"

enum bounds_state { BOUNDS_UNKNOWN, BOUNDS_KNOWN, BOUNDS_UNAVAILABLE };

struct stack_bounds {
    uintptr_t lo, hi;                    /* [lo, hi): the thread's stack, guard excluded */
    enum bounds_state state;
};

static __thread struct stack_bounds bounds;

/* A thread pthread started: its own mapping, fixed for its life.  The
 * main thread: glibc gives the top of the [stack] mapping and a bottom
 * no lower than the mapping below it, so while the stack pointer is in
 * that range it is on the main stack, and the stack is one mapping from
 * there to the top. */
static void learn_bounds(struct stack_bounds *b)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;

    b->state = BOUNDS_UNAVAILABLE;
    if (pthread_getattr_np(pthread_self(), &attr))
        return;
    if (!pthread_attr_getstack(&attr, &addr, &size) && size &&
        (uintptr_t)addr + size > (uintptr_t)addr) {
        b->lo = (uintptr_t)addr;
        b->hi = (uintptr_t)addr + size;
        b->state = BOUNDS_KNOWN;
    }
    pthread_attr_destroy(&attr);
}

bool kmt_live_stack_holds(const void *p, size_t len)
{
    /* an address in this function's own frame: the stack pointer or above
     * it, so [sp, hi) is the live part (or a little less of it) */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0), a = (uintptr_t)p;
    struct stack_bounds *b = &bounds;

    if (b->state == BOUNDS_UNKNOWN)
        learn_bounds(b);
    if (b->state != BOUNDS_KNOWN || sp < b->lo || sp >= b->hi)
        return false;
    return a >= sp && a <= b->hi && len <= b->hi - a;
}
