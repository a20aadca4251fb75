/*
 * The core's hot-path locks: a mutex, a condition variable and a
 * reader/writer lock on Linux futexes.
 *
 * Why not pthread: every D3DKMT call takes several of these, uncontended.
 * An uncontended lock here is one inlined compare-and-swap and its unlock
 * one exchange; glibc's are out-of-line calls through the PLT.  Under the
 * emulated CPU of the DRM lane a glibc lock+unlock pair costs ~60 ns against
 * ~5 ns inline, and a create+destroy pair took ~12 of them (docs/drm.md).
 *
 * Semantics are pthread's defaults: not recursive, no error checking,
 * readers never wait for a writer that only waits (so read locks may nest),
 * spurious wake-ups from kmt_cond_wait.  A condition is broadcast with its
 * mutex held.  ThreadSanitizer builds annotate every lock operation, so TSan
 * sees these as mutexes (races and lock-order inversions alike).
 */
#ifndef KMTSHIM_KMT_LOCK_H
#define KMTSHIM_KMT_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>

#if defined(__SANITIZE_THREAD__)
# include <sanitizer/tsan_interface.h>
# define KMT_TSAN(call) call
#else
# define KMT_TSAN(call) ((void)0)
#endif

struct kmt_mutex {
    atomic_uint word;                    /* 0 free, 1 held, 2 held and someone sleeps */
};

struct kmt_cond {
    atomic_uint seq;                     /* bumped by every broadcast; the futex */
    atomic_uint sleepers;
};

/* bits 0-29: readers holding it; WRITER: held for writing; SLEEPERS: someone sleeps */
struct kmt_rwlock {
    atomic_uint word;
};
#define KMT_RW_WRITER   0x40000000u
#define KMT_RW_SLEEPERS 0x80000000u

/* Sleeps while *word == value (returns at once if it differs; spurious
 * returns happen), and wakes up to count sleepers of word: process-private
 * futexes, for the locks below and the Wine side's event pump. */
void kmt_futex_wait(atomic_uint *word, unsigned value);
void kmt_futex_wake(atomic_uint *word, int count);

/* slow paths (kmt_lock.c) */
void kmt_mutex_lock_contended(struct kmt_mutex *m);
void kmt_rwlock_rdlock_contended(struct kmt_rwlock *l);
void kmt_rwlock_wrlock_contended(struct kmt_rwlock *l);
void kmt_cond_wait(struct kmt_cond *c, struct kmt_mutex *m);

static inline void kmt_mutex_init(struct kmt_mutex *m)
{
    atomic_init(&m->word, 0);
    KMT_TSAN(__tsan_mutex_create(m, __tsan_mutex_not_static));
}

static inline void kmt_mutex_destroy(struct kmt_mutex *m)
{
    KMT_TSAN(__tsan_mutex_destroy(m, __tsan_mutex_not_static));
    (void)m;
}

static inline void kmt_mutex_lock(struct kmt_mutex *m)
{
    unsigned expected = 0;

    KMT_TSAN(__tsan_mutex_pre_lock(m, 0));
    if (!atomic_compare_exchange_strong_explicit(&m->word, &expected, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        kmt_mutex_lock_contended(m);
    KMT_TSAN(__tsan_mutex_post_lock(m, 0, 0));
}

static inline bool kmt_mutex_trylock(struct kmt_mutex *m)
{
    unsigned expected = 0;
    bool got;

    KMT_TSAN(__tsan_mutex_pre_lock(m, __tsan_mutex_try_lock));
    got = atomic_compare_exchange_strong_explicit(&m->word, &expected, 1, memory_order_acquire,
                                                  memory_order_relaxed);
    KMT_TSAN(__tsan_mutex_post_lock(m, got ? __tsan_mutex_try_lock
                                           : __tsan_mutex_try_lock | __tsan_mutex_try_lock_failed, 0));
    return got;
}

static inline void kmt_mutex_unlock(struct kmt_mutex *m)
{
    KMT_TSAN(__tsan_mutex_pre_unlock(m, 0));
    if (atomic_exchange_explicit(&m->word, 0, memory_order_release) == 2)
        kmt_futex_wake(&m->word, 1);
    KMT_TSAN(__tsan_mutex_post_unlock(m, 0));
}

static inline void kmt_cond_init(struct kmt_cond *c)
{
    atomic_init(&c->seq, 0);
    atomic_init(&c->sleepers, 0);
}

static inline void kmt_cond_destroy(struct kmt_cond *c)
{
    (void)c;
}

/* Call with the waiters' mutex held. */
static inline void kmt_cond_broadcast(struct kmt_cond *c)
{
    atomic_fetch_add_explicit(&c->seq, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&c->sleepers, memory_order_seq_cst))
        kmt_futex_wake(&c->seq, 0x7fffffff);
}

static inline void kmt_rwlock_init(struct kmt_rwlock *l)
{
    atomic_init(&l->word, 0);
    KMT_TSAN(__tsan_mutex_create(l, __tsan_mutex_not_static));
}

static inline void kmt_rwlock_destroy(struct kmt_rwlock *l)
{
    KMT_TSAN(__tsan_mutex_destroy(l, __tsan_mutex_not_static));
    (void)l;
}

static inline void kmt_rwlock_rdlock(struct kmt_rwlock *l)
{
    unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);

    KMT_TSAN(__tsan_mutex_pre_lock(l, __tsan_mutex_read_lock));
    if ((w & KMT_RW_WRITER) ||
        !atomic_compare_exchange_strong_explicit(&l->word, &w, w + 1, memory_order_acquire,
                                                 memory_order_relaxed))
        kmt_rwlock_rdlock_contended(l);
    KMT_TSAN(__tsan_mutex_post_lock(l, __tsan_mutex_read_lock, 0));
}

static inline void kmt_rwlock_wrlock(struct kmt_rwlock *l)
{
    unsigned expected = 0;

    KMT_TSAN(__tsan_mutex_pre_lock(l, 0));
    if (!atomic_compare_exchange_strong_explicit(&l->word, &expected, KMT_RW_WRITER,
                                                 memory_order_acquire, memory_order_relaxed))
        kmt_rwlock_wrlock_contended(l);
    KMT_TSAN(__tsan_mutex_post_lock(l, 0, 0));
}

/* Either kind: a writer holds it alone, so the WRITER bit says which. */
static inline void kmt_rwlock_unlock(struct kmt_rwlock *l)
{
    unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);

    if (w & KMT_RW_WRITER) {
        KMT_TSAN(__tsan_mutex_pre_unlock(l, 0));
        w = atomic_exchange_explicit(&l->word, 0, memory_order_release);
        KMT_TSAN(__tsan_mutex_post_unlock(l, 0));
    } else {
        KMT_TSAN(__tsan_mutex_pre_unlock(l, __tsan_mutex_read_lock));
        w = atomic_fetch_sub_explicit(&l->word, 1, memory_order_release);
        /* the last reader out wakes a sleeping writer */
        if ((w & ~KMT_RW_SLEEPERS) == 1 && (w & KMT_RW_SLEEPERS))
            w = atomic_fetch_and_explicit(&l->word, ~KMT_RW_SLEEPERS, memory_order_relaxed);
        else
            w = 0;
        KMT_TSAN(__tsan_mutex_post_unlock(l, __tsan_mutex_read_lock));
    }
    if (w & KMT_RW_SLEEPERS)
        kmt_futex_wake(&l->word, 0x7fffffff);
}

#endif /* KMTSHIM_KMT_LOCK_H */
