/*
 * Slow paths of the futex locks (kmt_lock.h): sleeping and waking.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kmt_lock.h"

void kmt_futex_wait(atomic_uint *word, unsigned value)
{
    /* EAGAIN (the word moved on) and EINTR both mean: look again */
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

void kmt_futex_wake(atomic_uint *word, int count)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* Once contended the word stays 2 until an unlock, so that unlock wakes the
 * next sleeper; taking it as 2 costs at most one spare wake-up. */
void kmt_mutex_lock_contended(struct kmt_mutex *m)
{
    while (atomic_exchange_explicit(&m->word, 2, memory_order_acquire) != 0)
        kmt_futex_wait(&m->word, 2);
}

void kmt_cond_wait(struct kmt_cond *c, struct kmt_mutex *m)
{
    unsigned seq = atomic_load_explicit(&c->seq, memory_order_seq_cst);

    atomic_fetch_add_explicit(&c->sleepers, 1, memory_order_seq_cst);
    kmt_mutex_unlock(m);
    /* a broadcast after our unlock bumped seq first: the wait returns at once */
    kmt_futex_wait(&c->seq, seq);
    atomic_fetch_sub_explicit(&c->sleepers, 1, memory_order_relaxed);
    /* other woken waiters may want it too: take it as contended */
    KMT_TSAN(__tsan_mutex_pre_lock(m, 0));
    kmt_mutex_lock_contended(m);
    KMT_TSAN(__tsan_mutex_post_lock(m, 0, 0));
}

/* Sleeps while the word is `seen`, after making sure SLEEPERS is set in it
 * (so the next unlock wakes us); returns at once if the word moved on. */
static void rw_sleep(struct kmt_rwlock *l, unsigned seen)
{
    if (!(seen & KMT_RW_SLEEPERS) &&
        !atomic_compare_exchange_strong_explicit(&l->word, &seen, seen | KMT_RW_SLEEPERS,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    kmt_futex_wait(&l->word, seen | KMT_RW_SLEEPERS);
}

void kmt_rwlock_rdlock_contended(struct kmt_rwlock *l)
{
    for (;;) {
        unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);

        if (w & KMT_RW_WRITER)
            rw_sleep(l, w);
        else if (atomic_compare_exchange_weak_explicit(&l->word, &w, w + 1, memory_order_acquire,
                                                       memory_order_relaxed))
            return;
    }
}

void kmt_rwlock_wrlock_contended(struct kmt_rwlock *l)
{
    for (;;) {
        unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);

        /* free apart from sleepers: take it and keep their bit for our unlock */
        if (!(w & ~KMT_RW_SLEEPERS)) {
            if (atomic_compare_exchange_weak_explicit(&l->word, &w, w | KMT_RW_WRITER,
                                                      memory_order_acquire, memory_order_relaxed))
                return;
        } else {
            rw_sleep(l, w);
        }
    }
}
