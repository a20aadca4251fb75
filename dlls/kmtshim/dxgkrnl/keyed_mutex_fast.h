/*
 * The uncontended AcquireKeyedMutex and ReleaseKeyedMutex, inline in the
 * thunks (keyed_mutex.c has the rest).  The pair is the hottest path of
 * the API and its goal is a raw futex pair's time: a call through the
 * thunk and the core costs more than the page's two compare-and-swaps,
 * so the whole uncontended call (read section, handle lookup, connection
 * check, one compare-and-swap) is here, with no call and no trace.
 * Anything else (tracing on, a thread's first section, a refused
 * handle, a timeout to read, a mutex not free for us, sleepers to wake)
 * makes the full call instead, which does everything again from the
 * descriptor.
 */
#ifndef KMTSHIM_KEYED_MUTEX_FAST_H
#define KMTSHIM_KEYED_MUTEX_FAST_H

#include "dxgkrnl.h"
#include "keyed_mutex_page.h"
#include "base/kmt_list.h"
#include "base/kmt_lock.h"
#include "base/kmt_rcu.h"
#include "broker/broker.h"

struct dxgk_keyed_mutex {
    struct kmt_object obj;
    /* what the uncontended calls read, together */
    struct dxgk_km_page *page;
    uint32_t me;                         /* this process's client id */
    uint32_t runtime_size;               /* the creator's, and the Acquire2/Release2 size */
    uint64_t connection;                 /* the broker connection `me` is of */
    size_t map_size;
    uint64_t broker_id;                  /* our reference */
    bool nt_shareable;
    D3DKMT_HANDLE handle;                /* also the page's owner half while it holds it */
    _Atomic bool destroyed;              /* its handle is gone: a hold taken now is abandoned */
    struct list entry;                   /* live_mutexes, under live_lock */
    uint64_t inode;                      /* the page's memfd (ThreadSanitizer's sync address) */
    struct dxgk_km_look look;            /* this handle's look before it sleeps */
};

/* ThreadSanitizer tracks synchronization by address, and two handles of
 * one process map the same page at two addresses: acquire and release
 * also name one address per memfd (by inode) so it sees them pair up. */
#if defined(__SANITIZE_THREAD__)
extern char dxgk_km_tsan_sync[64];
# define DXGK_KM_TSAN_SYNC(km) (&dxgk_km_tsan_sync[(km)->inode % sizeof(dxgk_km_tsan_sync)])
#endif

/* Inside kmt_rcu_read_lock(): valid until kmt_rcu_read_unlock().  The
 * object's handle is h. */
static inline __attribute__((always_inline)) struct dxgk_keyed_mutex *dxgk_keyed_mutex_find(D3DKMT_HANDLE h)
{
    return (struct dxgk_keyed_mutex *)hmgr_find_rcu(&dxgk_process.handles, HMGR_INSTANCE_LOCAL, h,
                                                    HMGR_TYPE_KEYEDMUTEX);
}

/* An AcquireKeyedMutex with no runtime data that finds the mutex free
 * for it, with no sleeper: takes it and sets *fence.  false, with nothing
 * changed, for anything else: the caller makes the full call. */
static inline __attribute__((always_inline)) bool
dxgk_keyed_mutex_take_idle(D3DKMT_HANDLE h, UINT64 key, UINT64 *fence)
{
    struct kmt_rcu_reader *rcu = kmt_rcu_try_read_lock();
    struct dxgk_keyed_mutex *km;
    bool taken;

    if (__builtin_expect(!rcu, 0))
        return false;
    km = dxgk_keyed_mutex_find(h);
    taken = __builtin_expect(km != NULL, 1) &&
                 __builtin_expect(km->connection == kmt_broker_connection(), 1) &&
                 __builtin_expect(dxgk_km_page_take_idle(km->page, km->me, h, key), 1);

    /* a destroy racing with us waits for this section to end, then
     * abandons what we took */
    if (__builtin_expect(taken, 1)) {
        KMT_TSAN(__tsan_acquire(DXGK_KM_TSAN_SYNC(km)));
        *fence = atomic_load_explicit(&km->page->fence, memory_order_relaxed);
    }
    kmt_rcu_read_unlock(rcu);
    return taken;
}

/* A ReleaseKeyedMutex with no runtime data by the handle that holds the
 * mutex, with no sleeper: releases it.  false for anything else, which
 * the full call then decides (the key and fence value may be written
 * already: it writes them again). */
static inline __attribute__((always_inline)) bool
dxgk_keyed_mutex_give_idle(D3DKMT_HANDLE h, UINT64 key, UINT64 fence)
{
    struct kmt_rcu_reader *rcu = kmt_rcu_try_read_lock();
    struct dxgk_keyed_mutex *km;
    bool given = false;

    if (__builtin_expect(!rcu, 0))
        return false;
    km = dxgk_keyed_mutex_find(h);
    if (__builtin_expect(km != NULL, 1)) {
        KMT_TSAN(__tsan_release(DXGK_KM_TSAN_SYNC(km)));
        given = dxgk_km_page_give_idle(km->page, km->me, h, key, fence);
    }
    kmt_rcu_read_unlock(rcu);
    return given;
}

#endif /* KMTSHIM_KEYED_MUTEX_FAST_H */
