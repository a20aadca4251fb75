/*
 * The calling thread's live stack: from the current stack pointer up to
 * the top of the stack the thread runs on.  Every byte of it belongs to a
 * frame that is running now, so it is mapped and writable by construction,
 * and a buffer inside it can be read and written without asking the
 * kernel (see user_memory.h).
 *
 * The top comes from pthread_getattr_np, learnt once per thread (the first
 * call may make system calls; later ones make none).  Nothing about pages
 * is cached: the answer depends only on the stack pointer of this call.
 * Where the stack pointer is not inside that stack (a handler on a
 * sigaltstack, a coroutine or Wine's switched stacks), or the bounds are
 * unknown, the answer is no and the caller takes the kernel's way.
 */
#ifndef KMTSHIM_LIVE_STACK_H
#define KMTSHIM_LIVE_STACK_H

#include <stdbool.h>
#include <stddef.h>

/* Whether [p, p + len) lies wholly in the calling thread's live stack. */
bool kmt_live_stack_holds(const void *p, size_t len);

#endif /* KMTSHIM_LIVE_STACK_H */
