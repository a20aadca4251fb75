/*
 * The lock protocol on a keyed mutex's shared page (keyed_mutex_page.h).
 * Shared futexes (no FUTEX_PRIVATE_FLAG): the page is MAP_SHARED in every
 * process that has a handle to the mutex.  Every access that orders a
 * change of holder against the count of sleepers is sequentially
 * consistent (a Dekker pair: the releaser stores holder then reads
 * waiters, a sleeper adds itself to waiters then reads holder).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "keyed_mutex_page.h"
#include "broker/broker.h"
#include "base/kmt_time.h"

#ifndef SYS_futex_waitv
# define SYS_futex_waitv 449
#endif
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

/* After a change of holder: a sleeper counted itself before its last look,
 * so with no one counted nobody can have missed the change. */
static void wake_all(struct dxgk_km_page *p)
{
    if (!atomic_load_explicit(&p->waiters, memory_order_seq_cst))
        return;
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
        r = syscall(SYS_futex_waitv, w, 2, 0, deadline, CLOCK_MONOTONIC);
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

NTSTATUS dxgk_km_page_acquire(struct dxgk_km_page *p, uint32_t me, uint64_t key,
                              const struct timespec *deadline)
{
    bool announced = false;
    NTSTATUS status;

    for (;;) {
        unsigned seq = atomic_load_explicit(&p->seq, memory_order_seq_cst);
        unsigned holder = atomic_load_explicit(&p->holder, memory_order_seq_cst);

        if (holder == KMT_BROKER_HOLDER_ABANDONED) {
            status = STATUS_ABANDONED;
            break;
        }
        if (!holder && atomic_load_explicit(&p->key, memory_order_relaxed) == key) {
            unsigned free_word = 0;

            if (atomic_compare_exchange_strong_explicit(&p->holder, &free_word, me,
                                                        memory_order_acquire, memory_order_relaxed)) {
                /* the key is the owner's to write: now it is stable */
                if (atomic_load_explicit(&p->key, memory_order_relaxed) == key) {
                    status = STATUS_SUCCESS;
                    break;
                }
                /* another owner came and released to another key between our
                 * reads: hand it back as it was */
                atomic_store_explicit(&p->holder, 0, memory_order_seq_cst);
                wake_all(p);
            }
            continue;
        }
        if (!announced) {
            /* count ourselves, then look again: a release that missed the
             * count has already changed what we see */
            atomic_fetch_add_explicit(&p->waiters, 1, memory_order_seq_cst);
            announced = true;
            continue;
        }
        if (deadline && deadline_passed(deadline)) {
            status = STATUS_TIMEOUT;
            break;
        }
        if (!sleep_on(p, seq, holder, deadline)) {
            status = STATUS_TIMEOUT;
            break;
        }
    }
    if (announced)
        atomic_fetch_sub_explicit(&p->waiters, 1, memory_order_seq_cst);
    return status;
}

void dxgk_km_page_release(struct dxgk_km_page *p, uint64_t key, uint64_t fence)
{
    atomic_store_explicit(&p->fence, fence, memory_order_relaxed);
    atomic_store_explicit(&p->key, key, memory_order_relaxed);
    atomic_store_explicit(&p->holder, 0, memory_order_seq_cst);
    wake_all(p);
}

bool dxgk_km_page_abandon(struct dxgk_km_page *p, uint32_t me)
{
    unsigned expected = me;

    if (!atomic_compare_exchange_strong_explicit(&p->holder, &expected, KMT_BROKER_HOLDER_ABANDONED,
                                                 memory_order_seq_cst, memory_order_relaxed))
        return false;
    wake_all(p);
    return true;
}
