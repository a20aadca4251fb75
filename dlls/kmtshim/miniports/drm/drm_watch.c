/*
 * DRM miniport: the watcher, the adapter's interrupt line.
 *
 * One thread per adapter (started with the first context or the first
 * fence handed out) sleeps on an eventfd.  The kernel signals it through
 * SYNCOBJ_EVENTFD registrations, one pending at a time per timeline:
 *   the ring      the adapter's submission timeline: a registration on the
 *                 oldest submission's point; when it fires, every submission
 *                 up to the ring's value completed -> DMA_COMPLETED
 *   a fence       handed out by QUERY_FENCE: a registration on its next
 *                 point; when the kernel signalled it (a submission's
 *                 out-syncobj, the UMD's own ioctl) the watcher raises the
 *                 core's value to the timeline's (compare-and-swap, never
 *                 lower) -> MONITORED_FENCE_SIGNALED, after the write-backs
 *                 of the submissions that completed with it
 * Registrations are one-shot and cannot be taken back; the kernel frees
 * them when they fire or their syncobj is destroyed.  If one cannot be
 * made (the fault hook, a kernel without memory), or a timeline cannot be
 * read, the watcher polls every millisecond instead of sleeping, so no
 * completion is ever lost.
 * Interrupts are raised with no lock held.
 *
 * The eventfd's number: everyone but the watcher itself reads it under
 * exec.lock (kicks, registrations), and it is set to -1 under the lock
 * before it is closed, once the watcher was joined; the watcher reads it
 * unlocked, but it only runs while the number is live.  So nothing writes
 * into, or registers, a number the process may have handed to another file
 * since.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/kmt_thread.h"
#include "base/fd_registry.h"
#include "drm_winsys.h"
#include "drm_cs.h"
#include "drm_trace.h"

/* Set when the adapter was stopped from inside one of the watcher's own
 * interrupts: the adapter is gone when the interrupt returns. */
static __thread bool stopped_under_me;

void kdrm_exec_init(struct kdrm_adapter *a)
{
    pthread_mutex_init(&a->exec.lock, NULL);
    list_init(&a->exec.fences);
    list_init(&a->exec.inflight);
    a->exec.evfd = -1;
}

void kdrm_watch_kick_locked(struct kdrm_adapter *a)
{
    UINT64 one = 1;

    if (a->exec.evfd >= 0 && write(a->exec.evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "eventfd write failed: %s\n", strerror(errno));
}

static bool arm(struct kdrm_adapter *a, UINT32 syncobj, UINT64 point)
{
    int err = kdrm_syncobj_eventfd(a, syncobj, point, a->exec.evfd);

    if (err < 0) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "SYNCOBJ_EVENTFD(%u, %llu): %s; polling\n", syncobj,
                   (unsigned long long)point, strerror(-err));
        a->exec.degraded = true;
        kdrm_watch_kick_locked(a);
        return false;
    }
    return true;
}

void kdrm_watch_arm_ring_locked(struct kdrm_adapter *a)
{
    struct kdrm_exec *x = &a->exec;
    struct kdrm_submission *oldest;

    if (x->ring_armed || list_empty(&x->inflight) || x->evfd < 0)
        return;
    oldest = LIST_ENTRY(x->inflight.next, struct kdrm_submission, entry);
    if (!oldest->point) {
        kdrm_watch_kick_locked(a);           /* completes with nothing before it */
        return;
    }
    if (arm(a, x->ring, oldest->point))
        x->ring_armed = oldest->point;
}

void kdrm_watch_arm_fence_locked(struct kdrm_adapter *a, struct kdrm_fence *f)
{
    if (!f->exported || f->armed || f->point == UINT64_MAX || a->exec.evfd < 0)
        return;
    if (arm(a, f->syncobj, f->point + 1))
        f->armed = f->point + 1;
}

/* Raises the core's value to the kernel's; true if it rose. */
static bool raise_value(_Atomic UINT64 *value, UINT64 to)
{
    UINT64 cur = atomic_load_explicit(value, memory_order_acquire);

    while (to > cur)
        if (atomic_compare_exchange_weak_explicit(value, &cur, to, memory_order_acq_rel, memory_order_acquire))
            return true;
    return false;
}

/* A timeline the watcher could not read: its registration may be the one
 * that woke it and is gone, so it is made again (one on a signalled point
 * fires at once), and the watcher polls until a reading works. */
static void unreadable(struct kdrm_adapter *a, UINT32 syncobj, UINT64 *armed)
{
    kdrm_trace(a, KMT_TRACE_WARN, __func__, "SYNCOBJ_QUERY(%u) failed; polling\n", syncobj);
    *armed = 0;
    a->exec.unread = true;
}

/* Notes what the kernel signalled; raise_fences() tells the core later.
 * Read before the ring: a fence point a submission signalled implies its
 * ring point, which the ring scan then sees (one kernel fence behind both).
 * True if a fence has a point to raise, new or held back before. */
static bool scan_fences(struct kdrm_adapter *a)
{
    struct kdrm_fence *f;
    bool seen = false;

    LIST_FOR_EACH_ENTRY(f, &a->exec.fences, struct kdrm_fence, entry) {
        UINT64 now;

        if (!f->exported)
            continue;                        /* only this miniport signals it */
        if (kdrm_syncobj_query(a, f->syncobj, false, &now) < 0) {
            unreadable(a, f->syncobj, &f->armed);
        } else {
            if (now > f->point) {
                f->point = now;
                f->seen = true;
            }
            if (f->armed && now >= f->armed)
                f->armed = 0;                /* it fired */
        }
        seen |= f->seen;
    }
    return seen;
}

/* A fence point just seen may be a submission's the kernel completed while
 * its submitter had yet to record it (drm_submit.c): it retires, and its
 * copies are written back, only once recorded.  Until then the fences wait;
 * the recording kicks the watcher.  Without one (or with only one that has
 * not completed: its ring point is above the ring, read after the fences)
 * nothing seen can be an unrecorded submission's. */
static bool hold_fences(struct kdrm_adapter *a, bool ring_read, UINT64 ring_now)
{
    struct kdrm_exec *x = &a->exec;

    if (!x->unrecorded || (x->unrecorded == 1 && ring_read && ring_now < x->unrecorded_point))
        return false;
    x->fences_held = true;
    return true;
}

/* After the completed submissions' write-backs; exec.lock held. */
static bool raise_fences(struct kdrm_adapter *a)
{
    struct kdrm_fence *f;
    bool raised = false;

    LIST_FOR_EACH_ENTRY(f, &a->exec.fences, struct kdrm_fence, entry) {
        if (f->seen)
            raised |= raise_value(f->value, f->point);
        f->seen = false;
    }
    return raised;
}

/* Retires what the ring says completed; *ring_read with the value in *now
 * when it read one. */
static bool scan_ring(struct kdrm_adapter *a, struct list *list, DXGKARGCB_NOTIFY_INTERRUPT_DATA *done,
                      bool *ring_read, UINT64 *now)
{
    struct kdrm_exec *x = &a->exec;
    bool retired;

    *now = 0;
    *ring_read = false;
    if (list_empty(&x->inflight) && !x->unrecorded)
        return false;
    if (x->ring && kdrm_syncobj_query(a, x->ring, false, now) < 0) {
        unreadable(a, x->ring, &x->ring_armed);
        return false;
    }
    *ring_read = true;
    retired = kdrm_submissions_retire_locked(a, *now, list, done);
    if (x->ring_armed && *now >= x->ring_armed)
        x->ring_armed = 0;
    return retired;
}

/* After the interrupts: a registration for a point that signalled in
 * between fires at once, so nothing is lost by arming late. */
static void rearm(struct kdrm_adapter *a)
{
    struct kdrm_fence *f;

    LIST_FOR_EACH_ENTRY(f, &a->exec.fences, struct kdrm_fence, entry)
        kdrm_watch_arm_fence_locked(a, f);
    kdrm_watch_arm_ring_locked(a);
}

static void wait_for_kernel(struct kdrm_adapter *a, bool poll_only)
{
    struct pollfd p = { .fd = a->exec.evfd, .events = POLLIN };
    UINT64 count;

    if (poll(&p, 1, poll_only ? 1 : -1) > 0 && read(a->exec.evfd, &count, sizeof(count)) < 0 && errno != EAGAIN)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "eventfd read failed: %s\n", strerror(errno));
}

static void *watch_thread(void *arg)
{
    struct kdrm_adapter *a = arg;
    struct kdrm_exec *x = &a->exec;
    bool degraded = false;

    for (;;) {
        DXGKARGCB_NOTIFY_INTERRUPT_DATA done = { 0 };
        struct list list = LIST_INIT(list);
        bool fences, retired, ring_read;
        UINT64 ring_now;

        wait_for_kernel(a, degraded);
        pthread_mutex_lock(&x->lock);
        if (x->stop) {
            pthread_mutex_unlock(&x->lock);
            break;
        }
        x->unread = false;                   /* set again by a failed reading */
        fences = scan_fences(a);
        retired = scan_ring(a, &list, &done, &ring_read, &ring_now);
        if (fences && hold_fences(a, ring_read, ring_now))
            fences = false;
        pthread_mutex_unlock(&x->lock);
        /* the data first, then whatever tells the program it is there */
        kdrm_submissions_free(a, &list, true);
        if (fences) {
            pthread_mutex_lock(&x->lock);
            fences = raise_fences(a);
            pthread_mutex_unlock(&x->lock);
        }
        if (fences) {
            DXGKARGCB_NOTIFY_INTERRUPT_DATA irq = { .InterruptType = DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED };
            kdrm_raise(a, &irq);
        }
        if (retired && !stopped_under_me)
            kdrm_raise(a, &done);
        if (stopped_under_me)
            break;
        pthread_mutex_lock(&x->lock);
        x->degraded = false;                 /* set again by a failed registration */
        if (!x->stop)
            rearm(a);
        degraded = x->degraded || x->unread || (x->ring_armed == 0 && !list_empty(&x->inflight));
        pthread_mutex_unlock(&x->lock);
    }
    return NULL;
}

int kdrm_watch_start_locked(struct kdrm_adapter *a)
{
    struct kdrm_exec *x = &a->exec;
    int err;

    if (x->watching)
        return 0;
    if ((x->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return -errno;
    kmt_fd_track(x->evfd);
    x->stop = false;
    if ((err = kmt_thread_create(&x->thread, "kmt-drm-watch", watch_thread, a))) {
        kmt_fd_close(x->evfd);                 /* under the lock: nobody can read it meanwhile */
        x->evfd = -1;
        return -err;
    }
    x->watching = true;
    return 0;
}

/* After the watcher is gone: the number is dropped under the lock first, so
 * a kick or registration that comes later sees -1, never a reused number. */
static void close_eventfd(struct kdrm_exec *x)
{
    int evfd;

    pthread_mutex_lock(&x->lock);
    evfd = x->evfd;
    x->evfd = -1;
    pthread_mutex_unlock(&x->lock);
    if (evfd >= 0)
        kmt_fd_close(evfd);
}

void kdrm_exec_stop(struct kdrm_adapter *a)
{
    struct kdrm_exec *x = &a->exec;
    struct kdrm_fence *f, *next;

    pthread_mutex_lock(&x->lock);
    x->stop = true;
    kdrm_watch_kick_locked(a);
    pthread_mutex_unlock(&x->lock);
    if (x->watching) {
        /* the core may drop the adapter from an interrupt of the watcher itself */
        if (pthread_equal(x->thread, pthread_self())) {
            pthread_detach(x->thread);
            stopped_under_me = true;
        } else {
            pthread_join(x->thread, NULL);
        }
        x->watching = false;
    }
    close_eventfd(x);
    /* the core destroys fences and contexts before the adapter: normally empty */
    LIST_FOR_EACH_ENTRY_SAFE(f, next, &x->fences, struct kdrm_fence, entry) {
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "fence %p left at adapter stop\n", (void *)f);
        list_remove(&f->entry);
        kdrm_syncobj_destroy(a, f->syncobj);
        free(f);
    }
    if (x->ring)
        kdrm_syncobj_destroy(a, x->ring);
    x->ring = 0;
    /* the core drained every context first: normally empty too */
    kdrm_submissions_free(a, &x->inflight, false);
}
