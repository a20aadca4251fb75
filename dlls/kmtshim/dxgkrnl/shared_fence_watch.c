/*
 * The process's watcher of shared fences (shared_fence.h): one thread that
 * sleeps on the wake words of the shared fences this process's async CPU
 * waits and GPU waits are blocked on and, when one moves, re-evaluates the
 * CPU waits on it and kicks the scheduler for the GPU waits, as
 * dxgk_fences_changed does for a fence the GPU wrote.  (A blocking CPU
 * wait sleeps on the words itself, wait.c.)
 *
 * A shared mutex's page (syncobj_shared_state.c) is watched the same way,
 * and its holder word too: the broker writes that word, and wakes it
 * alone, when the owner's process dies.
 *
 * It arms a fence (counts itself in the page's `watchers`) only while a
 * wait of this process is blocked on it, so signals nobody waits for cost
 * the signaller no system call.  After arming it looks at the fence once
 * more: a signal stored before the count went up sent no wake.
 *
 * futex_waitv (Linux 5.16) sleeps on every word at once; on older kernels
 * the thread falls back to looking every millisecond.
 *
 * While it has armed fences it also wakes every DXGK_SHARE_LINK_CHECK_NS
 * to look at their broker link (share.h): once it ended, nobody may ever
 * signal them (a signaller that dies after the broker is noticed by
 * nobody), so their async waits end, events set, and the scheduler is
 * kicked, whose GPU waits then pass over them.  With nothing armed it
 * sleeps without a deadline, but for the millisecond looks of the
 * fallback above.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shared_fence.h"
#include "sync.h"
#include "syncobj_share.h"
#include "vidsch.h"
#include "base/kmt_debug.h"
#include "base/kmt_thread.h"
#include "base/kmt_time.h"

#define POLL_NS 1000000                  /* past DXGK_WAITV_MAX fences, or without futex_waitv */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list watched = LIST_INIT(watched);
static bool running, stopping;           /* under watch_lock */
static pthread_t watcher;
static _Atomic uint32_t control;         /* bumped to make the watcher look again */

static void poke(void)
{
    atomic_fetch_add(&control, 1);
    syscall(SYS_futex, &control, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Blocking waits sleep on the wake words themselves: only async ones
 * need the watcher. */
static bool has_async_waiters(struct dxgk_syncobj *obj)
{
    struct dxgk_wait_link *link;
    bool waiting = false;

    pthread_mutex_lock(&obj->lock);
    LIST_FOR_EACH_ENTRY(link, &obj->waiters, struct dxgk_wait_link, entry)
        if (link->wait->async_event) {
            waiting = true;
            break;
        }
    pthread_mutex_unlock(&obj->lock);
    return waiting;
}

/* Whether obj's broker link ended.  *alive: a connection found up in
 * this pass, so a pass polls the broker socket once. */
static bool link_lost(struct dxgk_syncobj *obj, uint64_t *alive)
{
    uint64_t connection = obj->broker_connection;

    if (!__atomic_load_n(&obj->broker_id, __ATOMIC_RELAXED) || connection == *alive)
        return false;
    if (dxgk_share_lost(connection))
        return true;
    *alive = connection;
    return false;
}

/* Arms the fences with blocked waits and disarms the others; re-evaluates
 * the ones that moved (or were just armed), and with check_link those
 * whose broker link ended.  Fills w[] after w[0] with the words to sleep
 * on; returns their count, *overflow if some did not fit. */
static unsigned look(struct dxgk_waitv *w, bool *overflow, bool check_link)
{
    struct dxgk_shared_fence *sf;
    uint64_t alive = 0;
    unsigned n = 1;

    *overflow = false;
    LIST_FOR_EACH_ENTRY(sf, &watched, struct dxgk_shared_fence, entry) {
        bool gpu = atomic_load(&sf->gpu_blocked), fresh = !sf->armed, moved, lost;
        uint32_t seq;

        if (!gpu && !has_async_waiters(sf->obj)) {
            if (sf->armed)
                atomic_fetch_sub(&sf->rw->watchers, 1);
            sf->armed = false;
            continue;
        }
        if (fresh) {
            atomic_fetch_add(&sf->rw->watchers, 1);
            sf->armed = true;
        }
        seq = atomic_load(&sf->rw->wake);
        moved = fresh || seq != sf->seq;
        sf->seq = seq;
        if (sf->watch_holder) {
            /* the broker frees a dead owner's mutex and wakes this word only */
            uint32_t holder = atomic_load(&sf->rw->holder);

            moved |= holder != sf->holder_seen;
            sf->holder_seen = holder;
            if (n + 1 < DXGK_WAITV_MAX)
                w[n++] = (struct dxgk_waitv){ .val = holder, .uaddr = (uintptr_t)&sf->rw->holder,
                                              .flags = DXGK_WAITV_U32 };
            else
                *overflow = true;
        }
        lost = check_link && link_lost(sf->obj, &alive);
        if (moved || lost) {
            /* A GPU wait still blocked after the kick marks it again; just
             * armed, it stays marked so the retry does not poke us again.
             * One whose link ended is never marked again. */
            if (!fresh || lost)
                atomic_store(&sf->gpu_blocked, false);
            pthread_mutex_lock(&sf->obj->lock);
            dxgk_wake_waiters_locked(sf->obj, false);
            if (lost)
                dxgk_end_async_waits_locked(sf->obj);
            pthread_mutex_unlock(&sf->obj->lock);
            dxgk_sched_kick(sf->obj->adapter);
        }
        if (n < DXGK_WAITV_MAX)
            w[n++] = (struct dxgk_waitv){ .val = seq, .uaddr = (uintptr_t)&sf->rw->wake, .flags = DXGK_WAITV_U32 };
        else
            *overflow = true;
    }
    return n;
}

static void *watch_main(void *arg)
{
    static struct dxgk_waitv w[DXGK_WAITV_MAX];
    uint64_t link_checked = 0;           /* when the links were last looked at */

    (void)arg;
    for (;;) {
        struct timespec deadline;
        uint64_t now = kmt_now_ns();
        bool overflow, check = now - link_checked >= DXGK_SHARE_LINK_CHECK_NS, armed;
        unsigned n;

        w[0] = (struct dxgk_waitv){ .val = atomic_load(&control), .uaddr = (uintptr_t)&control,
                               .flags = DXGK_WAITV_U32 | DXGK_WAITV_PRIVATE };
        pthread_mutex_lock(&watch_lock);
        if (stopping) {
            pthread_mutex_unlock(&watch_lock);
            break;
        }
        n = look(w, &overflow, check);
        pthread_mutex_unlock(&watch_lock);
        dxgk_reap_async_waits();
        if (check)
            link_checked = now;

        /* armed fences: the next look at their links is due then */
        armed = overflow || n > 1;
        deadline = kmt_timespec_of(overflow ? now + POLL_NS : link_checked + DXGK_SHARE_LINK_CHECK_NS);
        if (!dxgk_futex_waitv(w, n, armed ? &deadline : NULL)) {
            struct timespec rel = { 0, POLL_NS };
            syscall(SYS_futex, &control, FUTEX_WAIT_PRIVATE, (uint32_t)w[0].val, &rel, NULL, 0);
        }
    }
    return NULL;
}

NTSTATUS dxgk_shared_fence_watch(struct dxgk_shared_fence *sf, struct dxgk_syncobj *obj)
{
    NTSTATUS status = STATUS_SUCCESS;

    pthread_mutex_lock(&watch_lock);
    if (!running) {
        if (kmt_thread_create(&watcher, "kmt-fencewatch", watch_main, NULL)) {
            status = STATUS_INSUFFICIENT_RESOURCES;
            goto out;
        }
        running = true;
    }
    sf->obj = obj;
    sf->watched = true;
    list_add_tail(&watched, &sf->entry);
out:
    pthread_mutex_unlock(&watch_lock);
    return status;
}

void dxgk_shared_fence_unwatch(struct dxgk_shared_fence *sf)
{
    pthread_mutex_lock(&watch_lock);
    if (sf->watched) {
        list_remove(&sf->entry);
        sf->watched = false;
        if (sf->armed)
            atomic_fetch_sub(&sf->rw->watchers, 1);
        sf->armed = false;
    }
    pthread_mutex_unlock(&watch_lock);
}

void dxgk_shared_fence_cpu_blocked(void)
{
    poke();
}

void dxgk_shared_fence_gpu_blocked(struct dxgk_shared_fence *sf)
{
    if (!atomic_exchange(&sf->gpu_blocked, true))
        poke();
}

void dxgk_shared_fence_watch_stop(void)
{
    bool was_running;

    pthread_mutex_lock(&watch_lock);
    was_running = running;
    stopping = true;
    pthread_mutex_unlock(&watch_lock);
    if (!was_running)
        goto out;
    poke();
    pthread_join(watcher, NULL);
out:
    pthread_mutex_lock(&watch_lock);
    running = stopping = false;
    pthread_mutex_unlock(&watch_lock);
}

void dxgk_shared_fence_watch_forget(void)
{
    /* the parent's watcher does not exist here; its fences are the parent's */
    watch_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    list_init(&watched);
    running = stopping = false;
}
