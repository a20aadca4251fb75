/*
 * Read-side sections without a locked instruction (userspace RCU, the
 * "memb" flavour), for lookups on the hottest paths.
 *
 * A reader brackets its use of shared objects with kmt_rcu_read_lock() and
 * kmt_rcu_read_unlock(): two plain stores to its thread's record (its
 * sequence: odd inside a section) and compiler barriers.  A writer
 * unpublishes an object, then calls kmt_rcu_synchronize(): it makes every
 * running thread of the process execute a full memory barrier
 * (membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED) and waits until every
 * reader that was inside a section then has left it; the object can be
 * freed after that, no reader still sees it.  Where the kernel has no
 * private expedited membarrier, readers add a full fence after their
 * store instead and the writer a fence of its own.  Under ThreadSanitizer
 * the stores and loads are sequentially consistent and release/acquire, so
 * it sees the edge from a reader's section to the writer's free.
 *
 * Sections neither nest nor sleep, and nothing inside one calls
 * kmt_rcu_synchronize().  A thread's record is registered at its first
 * section (under a mutex) and unregistered when the thread exits.
 */
#ifndef KMTSHIM_KMT_RCU_H
#define KMTSHIM_KMT_RCU_H

#include <stdatomic.h>
#include <stdbool.h>

#include "kmt_list.h"

struct kmt_rcu_reader {
    _Atomic unsigned long seq;           /* odd inside a section; written by its thread only */
    bool registered;
    bool plain;                          /* registered, and its store needs no fence */
    struct list entry;                   /* the registry's, under its mutex */
};

/* initial-exec: a section's entry is one %fs-relative access with no call
 * to __tls_get_addr, so the thunks' inline paths need no frame (32 bytes of
 * static TLS, as base/fault_guard.c takes) */
extern __thread __attribute__((tls_model("initial-exec"))) struct kmt_rcu_reader kmt_rcu_self;
/* No private expedited membarrier: readers fence (decided once, before
 * any thread's first section). */
extern bool kmt_rcu_readers_fence;

/* Decides how readers order their store (membarrier or fence), once per
 * process; idempotent.  Its first call may wake futex waiters: users call
 * it when they make an object readers will look up, so that a reader's
 * first section costs no system call. */
void kmt_rcu_init(void);

/* Puts the calling thread's record on the registry (once per thread). */
void kmt_rcu_register(struct kmt_rcu_reader *r);

/* Enters a section on the calling thread's registered record. */
static inline void kmt_rcu_enter(struct kmt_rcu_reader *r, bool fence)
{
    unsigned long s = atomic_load_explicit(&r->seq, memory_order_relaxed) + 1;

#if defined(__SANITIZE_THREAD__)
    atomic_store_explicit(&r->seq, s, memory_order_seq_cst);
    (void)fence;
#else
    atomic_store_explicit(&r->seq, s, memory_order_relaxed);
    /* the store must be seen before the section's loads: membarrier gives
     * the writer that order on demand, the fallback pays for it here */
    if (__builtin_expect(fence, 0))
        atomic_thread_fence(memory_order_seq_cst);
    else
        atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Returns the record to hand to kmt_rcu_read_unlock() (one TLS lookup). */
static inline struct kmt_rcu_reader *kmt_rcu_read_lock(void)
{
    struct kmt_rcu_reader *r = &kmt_rcu_self;

    if (__builtin_expect(!r->registered, 0))
        kmt_rcu_register(r);
    kmt_rcu_enter(r, kmt_rcu_readers_fence);
    return r;
}

/* kmt_rcu_read_lock() with one test and no call, for a caller with
 * another way to go: NULL, and no section, on a thread whose record is
 * not registered yet or whose readers fence. */
static inline struct kmt_rcu_reader *kmt_rcu_try_read_lock(void)
{
    struct kmt_rcu_reader *r = &kmt_rcu_self;

    if (__builtin_expect(!r->plain, 0))
        return NULL;
    kmt_rcu_enter(r, false);
    return r;
}

static inline void kmt_rcu_read_unlock(struct kmt_rcu_reader *r)
{
    /* the section's loads complete before the writer can see it left */
    atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* Waits until every section that may have seen what the caller
 * unpublished before the call has ended.  Never inside a section. */
void kmt_rcu_synchronize(void);

/* In a fork() child: the registry keeps the calling thread only. */
void kmt_rcu_forget_other_threads(void);

#endif /* KMTSHIM_KMT_RCU_H */
