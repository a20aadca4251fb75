/*
 * The lock protocol on a keyed mutex's shared page (keyed_mutex_page.h).
 * Shared futexes (no FUTEX_PRIVATE_FLAG): the page is MAP_SHARED in every
 * process that has a handle to the mutex.
 *
 * No wake-up is lost: a sleeper reads seq, then the word, sets
 * KMT_BROKER_HOLDER_WAITERS in the word with a compare-and-swap and only
 * then sleeps, on seq and holder at their values with the bit.  A release
 * or abandonment changes the word with a compare-and-swap too, so it
 * either fails the sleeper's (which looks again) or sees the bit, and
 * then bumps seq and wakes after changing the word: the sleeper's futex
 * check finds holder or seq changed, or it is woken.  Woken sleepers set
 * the bit anew if they still wait; the release clears it.
 */
#define _GNU_SOURCE                      /* sched_getcpu (look.h) */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "keyed_mutex_page.h"
#include "look.h"
#include "broker/broker.h"
#include "base/kmt_futex_waitv.h"
#include "base/kmt_time.h"

/* struct futex_waitv came with FUTEX_32 (Linux 5.16 headers) */
#ifndef FUTEX_32
# define FUTEX_32 0x02
struct futex_waitv {
    uint64_t val;
    uint64_t uaddr;
    uint32_t flags;
    uint32_t __reserved;
};
#endif

/* Without futex_waitv (Linux before 5.16) a sleeper waits on seq alone in
 * slices this long, looking at holder in between: an abandonment by a dead
 * process is then seen within one slice. */
#define NO_WAITV_SLICE_NS 10000000ull

#define WAITERS KMT_BROKER_HOLDER_WAITERS
#define ABANDONED KMT_BROKER_HOLDER_ABANDONED

_Static_assert(offsetof(struct dxgk_km_page, holder) == DXGK_KM_HOLDER_OFFSET &&
               offsetof(struct dxgk_km_page, word) == DXGK_KM_HOLDER_OFFSET,
               "the holder word is the first half of word");
_Static_assert(offsetof(struct dxgk_km_page, take_cpu) == DXGK_KM_TAKE_CPU_OFFSET &&
               offsetof(struct dxgk_km_page, wait_cpu) == DXGK_KM_WAIT_CPU_OFFSET &&
               offsetof(struct dxgk_km_page, data) == DXGK_KM_DATA_OFFSET &&
               sizeof(struct dxgk_km_page) == DXGK_KM_DATA_OFFSET,
               "the page's layout, the same in every process");

/* NT system time (100 ns units since 1601) of the Unix epoch. */
#define NT_UNIX_EPOCH 116444736000000000ll

size_t dxgk_km_page_size(uint32_t capacity)
{
    size_t page = 4096;

    return (sizeof(struct dxgk_km_page) + capacity + page - 1) / page * page;
}

void dxgk_km_page_init(struct dxgk_km_page *p, uint64_t initial_key, uint32_t capacity)
{
    memset(p, 0, sizeof(*p));
    atomic_init(&p->key, initial_key);
    p->magic = DXGK_KM_PAGE_MAGIC;
    p->capacity = capacity;
}

bool dxgk_km_deadline(const LONGLONG *timeout, struct timespec *deadline)
{
    uint64_t now, wait_ns;
    LONGLONG t;

    if (!timeout)
        return false;                    /* no clock read: the uncontended path */
    now = kmt_now_ns();
    t = *timeout;
    if (t <= 0) {
        /* relative; LLONG_MIN cannot be negated, and is ~29000 years anyway */
        wait_ns = t == LLONG_MIN ? UINT64_MAX / 2 : (uint64_t)-t * 100;
    } else {
        /* absolute system time: how far it is now on the wall clock */
        struct timespec real;
        int64_t real_100ns;

        clock_gettime(CLOCK_REALTIME, &real);
        real_100ns = (int64_t)real.tv_sec * 10000000 + real.tv_nsec / 100 + NT_UNIX_EPOCH;
        wait_ns = t > real_100ns ? (uint64_t)(t - real_100ns) * 100 : 0;
    }
    if (wait_ns > UINT64_MAX / 2 - now)
        return false;                    /* past any process's lifetime: infinite */
    *deadline = kmt_timespec_of(now + wait_ns);
    return true;
}

void dxgk_km_page_wake(struct dxgk_km_page *p)
{
    atomic_fetch_add_explicit(&p->seq, 1, memory_order_seq_cst);
    syscall(SYS_futex, &p->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static bool deadline_passed(const struct timespec *deadline)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static bool no_waitv;                    /* the kernel said ENOSYS once */

/* Sleeps while seq == seq_seen and holder == holder_seen, until a wake or
 * the deadline; false once the deadline passed. */
static bool sleep_on(struct dxgk_km_page *p, unsigned seq_seen, unsigned holder_seen,
                     const struct timespec *deadline)
{
    struct futex_waitv w[2] = {
        { .val = seq_seen, .uaddr = (uintptr_t)&p->seq, .flags = FUTEX_32 },
        { .val = holder_seen, .uaddr = (uintptr_t)&p->holder, .flags = FUTEX_32 },
    };
    struct timespec slice;
    long r;

    if (!__atomic_load_n(&no_waitv, __ATOMIC_RELAXED)) {
        r = kmt_futex_waitv(w, 2, deadline);
        if (r >= 0 || errno != ENOSYS)
            return !(r < 0 && errno == ETIMEDOUT);
        __atomic_store_n(&no_waitv, true, __ATOMIC_RELAXED);
    }
    slice = kmt_timespec_of(kmt_now_ns() + NO_WAITV_SLICE_NS);
    if (deadline && (deadline->tv_sec < slice.tv_sec ||
                     (deadline->tv_sec == slice.tv_sec && deadline->tv_nsec < slice.tv_nsec)))
        slice = *deadline;
    r = syscall(SYS_futex, &p->seq, FUTEX_WAIT_BITSET, seq_seen, &slice, NULL,
                FUTEX_BITSET_MATCH_ANY);
    return !(deadline && r < 0 && errno == ETIMEDOUT && deadline_passed(deadline));
}

static uint64_t ns_of(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* Whether the mutex is free and released to `key`, or abandoned: what
 * ends a look. */
static bool worth_a_try(struct dxgk_km_page *p, uint64_t key)
{
    uint64_t seen = atomic_load_explicit(&p->word, memory_order_relaxed);

    return dxgk_km_holder_of(seen) == ABANDONED ||
           (dxgk_km_is_free(seen) && atomic_load_explicit(&p->key, memory_order_relaxed) == key);
}

/* Polls, without announcing itself (so a release makes no wake), until the
 * mutex is worth a try, the budget is spent or the deadline passes.  The
 * budget counts from `start`, the call. */
enum look_end { LOOK_FOUND, LOOK_SPENT, LOOK_CUT };

static enum look_end look_for_release(struct dxgk_km_page *p, uint64_t key, uint64_t start,
                                      const struct timespec *deadline, struct dxgk_km_look *look)
{
    uint64_t end = start + dxgk_look_budget(atomic_load_explicit(&look->budget_ns, memory_order_relaxed));
    uint64_t cut = deadline ? ns_of(deadline) : UINT64_MAX;
    uint64_t now;

    atomic_fetch_add_explicit(&look->looks, 1, memory_order_relaxed);
    for (;;) {
        if (worth_a_try(p, key))
            return LOOK_FOUND;
        dxgk_look_pause();
        now = kmt_now_ns();
        if (now >= cut)
            return LOOK_CUT;
        if (now >= end)
            return LOOK_SPENT;
    }
}

/* 1 + the CPU the release we wait for will most likely come from, 0: not
 * known (keyed_mutex_page.h). */
static uint32_t releaser_cpu(struct dxgk_km_page *p)
{
    uint64_t seen = atomic_load_explicit(&p->word, memory_order_relaxed);

    return dxgk_km_is_free(seen) ? atomic_load_explicit(&p->wait_cpu, memory_order_relaxed)
                                 : atomic_load_explicit(&p->take_cpu, memory_order_relaxed);
}

NTSTATUS dxgk_km_page_acquire(struct dxgk_km_page *p, uint32_t me, uint32_t owner, uint64_t key,
                              const struct timespec *deadline, struct dxgk_km_look *look, bool first)
{
    uint32_t cpu = first ? dxgk_look_cpu() : 0;
    uint32_t from = first ? releaser_cpu(p) : 0;
    /* the release we wait for comes from elsewhere: it may come soon */
    bool looks = from && cpu && from != cpu;
    uint64_t start = looks ? kmt_now_ns() : 0;
    enum look_end ended = LOOK_FOUND;
    NTSTATUS status;

    /* a waiter that comes while the mutex is released to us learns where
     * the release it waits for (ours, once we took it) will come from */
    if (first && atomic_load_explicit(&p->wait_cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&p->wait_cpu, cpu, memory_order_relaxed);
    if (looks)
        ended = look_for_release(p, key, start, deadline, look);
    for (;;) {
        /* seq before the word: a release after this read bumps it */
        unsigned seq = atomic_load_explicit(&p->seq, memory_order_acquire);
        uint64_t seen = atomic_load_explicit(&p->word, memory_order_acquire);
        uint32_t holder = dxgk_km_holder_of(seen);

        if (holder == ABANDONED) {
            status = STATUS_ABANDONED;
            break;
        }
        if (dxgk_km_is_free(seen) && atomic_load_explicit(&p->key, memory_order_relaxed) == key) {
            /* where the next release, to another key, will come from: a
             * hint, stored before the take so that a waiter that sees us
             * hold it reads ours (x86 keeps the two stores in order; a
             * take we lose leaves it wrong until the winner's) */
            atomic_store_explicit(&p->take_cpu, dxgk_look_cpu(), memory_order_relaxed);
            atomic_signal_fence(memory_order_seq_cst);
            if (!dxgk_km_take(p, seen, me, owner, key))
                continue;
            status = STATUS_SUCCESS;
            break;
        }
        if (!(holder & WAITERS)) {
            /* announce, then look again: a change of the word that came
             * first fails this, one that comes after sees the bit */
            atomic_compare_exchange_strong_explicit(
                &p->word, &seen, dxgk_km_word(holder | WAITERS, dxgk_km_owner_of(seen)),
                memory_order_relaxed, memory_order_relaxed);
            continue;
        }
        if (deadline && deadline_passed(deadline)) {
            status = STATUS_TIMEOUT;
            break;
        }
        atomic_fetch_add_explicit(&look->sleeps, 1, memory_order_relaxed);
        if (!sleep_on(p, seq, holder, deadline)) {
            status = STATUS_TIMEOUT;
            break;
        }
    }
    /* a look the deadline cut short says nothing about how long a
     * hand-over takes */
    if (looks && ended != LOOK_CUT)
        atomic_store_explicit(&look->budget_ns,
                              dxgk_look_learn(atomic_load_explicit(&look->budget_ns, memory_order_relaxed),
                                              status == STATUS_SUCCESS ? kmt_now_ns() - start
                                                                       : DXGK_LOOK_FOUND_NOTHING),
                              memory_order_relaxed);
    return status;
}

bool dxgk_km_page_abandon(struct dxgk_km_page *p, uint32_t me, uint32_t owner)
{
    uint64_t seen = atomic_load_explicit(&p->word, memory_order_relaxed);

    while (dxgk_km_held_by(seen, me, owner)) {
        if (atomic_compare_exchange_weak_explicit(&p->word, &seen, dxgk_km_word(ABANDONED, owner),
                                                  memory_order_seq_cst, memory_order_relaxed)) {
            if (dxgk_km_holder_of(seen) & WAITERS)
                dxgk_km_page_wake(p);
            return true;
        }
    }
    return false;
}
