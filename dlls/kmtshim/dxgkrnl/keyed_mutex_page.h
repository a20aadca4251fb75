/*
 * The shared page of a keyed mutex: its state, seen by every process that
 * has a handle to it, and the lock protocol on it (keyed_mutex_page.c).
 *
 * `word` is one 64-bit value made of two halves, changed together by one
 * compare-and-swap:
 *   holder  (the first 4 bytes) the broker's holder word (broker/broker.h):
 *           the client id of the process whose handle owns the mutex, 0
 *           when free, KMT_BROKER_HOLDER_ABANDONED for good once an owner
 *           went away holding it (its handle destroyed, or its process
 *           died: then the broker writes it); KMT_BROKER_HOLDER_WAITERS set
 *           by a waiter before it sleeps
 *   owner   the local handle, in the holder's process, that owns it; 0
 *           when free
 * so an uncontended acquire is one compare-and-swap (free -> me, handle)
 * and an uncontended release another ((me, handle) -> free), which also
 * refuses a handle that does not own the mutex, and whose old value says
 * whether anyone sleeps.  key, fence and data are the last release's,
 * written by the owner before its release.
 *
 * Sleepers wait on two words at once (futex_waitv): holder, which the
 * broker wakes when it abandons the mutex for a dead process, and seq,
 * which a release or abandonment bumps when it wakes someone.  seq makes a
 * release to the sleeper's key between its check and its sleep visible
 * (holder alone reads "free, waiters" before and after).
 *
 * Before it announces itself and sleeps, a waiter looks (dxgkrnl/look.h)
 * when the release it waits for will most likely come from another CPU:
 * held, from the owner's, which take_cpu names when it took the mutex
 * after a wait; free but released to another key (a hand-over under way),
 * from the next owner's, the waiter for that key, which wait_cpu names
 * when it was the last to start waiting.  0 in either reads "not known",
 * which only skips the look: a fresh page has both 0, and so has one
 * shared with a process that never writes them.
 */
#ifndef KMTSHIM_KEYED_MUTEX_PAGE_H
#define KMTSHIM_KEYED_MUTEX_PAGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "kmtshim/d3dkmthk.h"
#include "broker/broker.h"

#define DXGK_KM_PAGE_MAGIC 0x4b4d5450u   /* "PTMK" */
#define DXGK_KM_HOLDER_OFFSET 0           /* offsetof(struct dxgk_km_page, holder) */

struct dxgk_km_page {
    union {
        _Atomic uint64_t word;           /* holder and owner (dxgk_km_word) */
        atomic_uint holder;              /* the first half: the broker's holder word */
    };
    atomic_uint seq;                     /* bumped by every release that wakes */
    _Atomic uint32_t data_size;          /* the last ReleaseKeyedMutex2's data, owner only */
    _Atomic uint64_t key;                /* the key it was released to */
    _Atomic uint64_t fence;              /* the fence value it was released with */
    uint32_t magic;
    uint32_t capacity;                   /* bytes of data[] */
    _Atomic uint32_t take_cpu;           /* 1 + the CPU of the last take after a wait, 0: none */
    _Atomic uint32_t wait_cpu;           /* 1 + the CPU of the last acquire to start waiting, 0: none */
    uint8_t reserved[16];
    uint8_t data[];                      /* runtime data between Release2 and Acquire2 */
};
/* Every process that maps the page agrees on where these are. */
#define DXGK_KM_TAKE_CPU_OFFSET 40
#define DXGK_KM_WAIT_CPU_OFFSET 44
#define DXGK_KM_DATA_OFFSET 64

/* One handle's look before sleeping (keyed_mutex_page.c), private to its
 * process: how long the next look lasts, and counts a test can read. */
struct dxgk_km_look {
    _Atomic unsigned budget_ns;          /* 0: none yet (dxgk_look_budget) */
    _Atomic unsigned looks;              /* looks started */
    _Atomic unsigned sleeps;             /* futex waits made */
};

/* The word of (holder, owner), holder first in memory on any byte order. */
static inline uint64_t dxgk_km_word(uint32_t holder, uint32_t owner)
{
    union { uint64_t w; uint32_t half[2]; } u = { .half = { holder, owner } };

    return u.w;
}

static inline uint32_t dxgk_km_holder_of(uint64_t word)
{
    union { uint64_t w; uint32_t half[2]; } u = { .w = word };

    return u.half[0];
}

static inline uint32_t dxgk_km_owner_of(uint64_t word)
{
    union { uint64_t w; uint32_t half[2]; } u = { .w = word };

    return u.half[1];
}

/* Bytes of the memfd for `capacity` bytes of runtime data. */
size_t dxgk_km_page_size(uint32_t capacity);
void dxgk_km_page_init(struct dxgk_km_page *p, uint64_t initial_key, uint32_t capacity);

/* An NT timeout (NULL: infinite) as an absolute CLOCK_MONOTONIC deadline;
 * false when there is none (infinite). */
bool dxgk_km_deadline(const LONGLONG *timeout, struct timespec *deadline);

/* ---- the uncontended paths, inline: one compare-and-swap each --------------- */

/* Wakes every sleeper after a change of the word that found
 * KMT_BROKER_HOLDER_WAITERS set (a system call: out of line). */
void dxgk_km_page_wake(struct dxgk_km_page *p);

static inline bool dxgk_km_held_by(uint64_t word, uint32_t me, uint32_t owner)
{
    uint32_t holder = dxgk_km_holder_of(word);

    return holder != KMT_BROKER_HOLDER_ABANDONED && (holder & ~KMT_BROKER_HOLDER_WAITERS) == me &&
           dxgk_km_owner_of(word) == owner;
}

static inline bool dxgk_km_is_free(uint64_t word)
{
    return !(dxgk_km_holder_of(word) & ~KMT_BROKER_HOLDER_WAITERS);
}

/* (me, owner) -> free, keeping nothing; wakes the sleepers it finds.
 * false if (me, owner) does not hold it. */
static inline bool dxgk_km_unlock(struct dxgk_km_page *p, uint32_t me, uint32_t owner)
{
    uint64_t seen = atomic_load_explicit(&p->word, memory_order_relaxed);

    while (dxgk_km_held_by(seen, me, owner)) {
        if (atomic_compare_exchange_weak_explicit(&p->word, &seen, 0, memory_order_release,
                                                  memory_order_relaxed)) {
            if (__builtin_expect(dxgk_km_holder_of(seen) & KMT_BROKER_HOLDER_WAITERS, 0))
                dxgk_km_page_wake(p);
            return true;
        }
    }
    return false;
}

/* dxgk_km_unlock() as a call, for the one rare branch of an inline path. */
void dxgk_km_page_hand_back(struct dxgk_km_page *p, uint32_t me, uint32_t owner)
    __attribute__((cold));

/* From `seen`, free and released to `key` when read, to held by (me,
 * owner), keeping the waiter bit for the release to see. */
static inline bool dxgk_km_take(struct dxgk_km_page *p, uint64_t seen, uint32_t me, uint32_t owner,
                                uint64_t key)
{
    uint64_t mine = dxgk_km_word(me | (dxgk_km_holder_of(seen) & KMT_BROKER_HOLDER_WAITERS), owner);

    if (!atomic_compare_exchange_strong_explicit(&p->word, &seen, mine, memory_order_acquire,
                                                 memory_order_relaxed))
        return false;
    /* the key is the owner's to write: now it is stable */
    if (__builtin_expect(atomic_load_explicit(&p->key, memory_order_relaxed) == key, 1))
        return true;
    /* another owner came and released to another key between our reads:
     * hand it back as it was */
    dxgk_km_unlock(p, me, owner);
    return false;
}

/* One try, no sleep: takes the mutex for handle `owner` of process `me`
 * if it is free and released to `key`. */
static inline bool dxgk_km_page_try_acquire(struct dxgk_km_page *p, uint32_t me, uint32_t owner,
                                            uint64_t key)
{
    uint64_t seen = atomic_load_explicit(&p->word, memory_order_relaxed);

    return dxgk_km_is_free(seen) && atomic_load_explicit(&p->key, memory_order_relaxed) == key &&
           dxgk_km_take(p, seen, me, owner, key);
}

/* Whether handle `owner` of `me` owns the mutex now. */
static inline bool dxgk_km_page_owned(struct dxgk_km_page *p, uint32_t me, uint32_t owner)
{
    return dxgk_km_held_by(atomic_load_explicit(&p->word, memory_order_relaxed), me, owner);
}

/* Releases to `key` with `fence` and `size` bytes of `data` (size 0:
 * none) what `owner` of `me` owns; false, and nothing released, if it
 * does not own it.  Of two racing releases of one handle exactly one
 * returns true; the key, the fence value and the data the mutex then
 * carries are each the winner's or the loser's (the loser checks
 * ownership before it writes them, and loses at the compare-and-swap). */
static inline bool dxgk_km_page_release(struct dxgk_km_page *p, uint32_t me, uint32_t owner,
                                        uint64_t key, uint64_t fence, const void *data, uint32_t size)
{
    if (!dxgk_km_page_owned(p, me, owner))
        return false;
    if (size)
        memcpy(p->data, data, size);
    atomic_store_explicit(&p->data_size, size, memory_order_relaxed);
    atomic_store_explicit(&p->fence, fence, memory_order_relaxed);
    atomic_store_explicit(&p->key, key, memory_order_relaxed);
    return dxgk_km_unlock(p, me, owner);
}

/* The uncontended acquire alone, for the inline path of the thunk: free
 * with no sleeper and released to `key` -> held by (me, owner).  false
 * for anything else, which the general path then handles. */
static inline bool dxgk_km_page_take_idle(struct dxgk_km_page *p, uint32_t me, uint32_t owner,
                                          uint64_t key)
{
    uint64_t seen = 0;

    if (atomic_load_explicit(&p->word, memory_order_relaxed) ||
        atomic_load_explicit(&p->key, memory_order_relaxed) != key ||
        !atomic_compare_exchange_strong_explicit(&p->word, &seen, dxgk_km_word(me, owner),
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    if (__builtin_expect(atomic_load_explicit(&p->key, memory_order_relaxed) == key, 1))
        return true;
    /* released to another key between our reads (dxgk_km_take): handed
     * back out of line, so the inline path keeps no frame */
    dxgk_km_page_hand_back(p, me, owner);
    return false;
}

/* The uncontended release alone: held by exactly (me, owner), no sleeper
 * -> released to `key` with `fence` and no data.  false when the word was
 * anything else, before or at the compare-and-swap; the general path
 * (dxgk_km_page_release) then decides, and writes the fields again. */
static inline bool dxgk_km_page_give_idle(struct dxgk_km_page *p, uint32_t me, uint32_t owner,
                                          uint64_t key, uint64_t fence)
{
    uint64_t mine = dxgk_km_word(me, owner);

    if (atomic_load_explicit(&p->word, memory_order_relaxed) != mine)
        return false;
    atomic_store_explicit(&p->data_size, 0, memory_order_relaxed);
    atomic_store_explicit(&p->fence, fence, memory_order_relaxed);
    atomic_store_explicit(&p->key, key, memory_order_relaxed);
    return atomic_compare_exchange_strong_explicit(&p->word, &mine, 0, memory_order_release,
                                                   memory_order_relaxed);
}

/* ---- what may sleep or wake ------------------------------------------------ */

/* Takes the mutex for `owner` of `me` once it is free and released to
 * `key`; looks, then sleeps, until then or until the deadline (NULL:
 * none), which the look counts in.  `look` is the handle's.  A wait made
 * of several calls (slices) passes `first` to its first call alone: the
 * later ones go straight to sleep, so one wait looks, names its CPU in
 * wait_cpu and teaches the budget once.
 * STATUS_SUCCESS, STATUS_TIMEOUT or STATUS_ABANDONED. */
NTSTATUS dxgk_km_page_acquire(struct dxgk_km_page *p, uint32_t me, uint32_t owner, uint64_t key,
                              const struct timespec *deadline, struct dxgk_km_look *look, bool first);
/* Handle `owner` of `me` goes away: if it owns the mutex, abandoned for
 * good (true). */
bool dxgk_km_page_abandon(struct dxgk_km_page *p, uint32_t me, uint32_t owner);

#endif /* KMTSHIM_KEYED_MUTEX_PAGE_H */
