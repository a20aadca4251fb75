/*
 * CPU-side signal and wait of monitored fences:
 * D3DKMTSignalSynchronizationObjectFromCpu and
 * D3DKMTWaitForSynchronizationObjectFromCpu (blocking, or with an async
 * event set when the wait is satisfied).
 *
 * No lost wake-ups: a wait links itself to every object first and reads the
 * values second; a signal stores the value first and scans the waiters
 * second, both under the object's lock.
 */
#define _GNU_SOURCE                      /* sched_getcpu (look.h) */
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "look.h"
#include "share.h"
#include "shared_fence.h"
#include "sync.h"
#include "syncobj_share.h"
#include "vidsch.h"
#include "base/kmt_debug.h"
#include "base/kmt_time.h"

/* Async waits completed while an object lock was held: freed later by
 * reap_async(), which may take every object's lock. */
static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list reap_list = LIST_INIT(reap_list);
/* Guards dxgk_process.async_waits; a leaf lock (taken under object locks). */
static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;

static bool wait_satisfied(const struct dxgk_cpu_wait *w)
{
    /* Two signalers of two objects of one wait-all each store their value
     * (under their own object's lock) and then read the other's: without a
     * full fence between the store and the loads both may read the old
     * value and neither wakes the waiter. */
    atomic_thread_fence(memory_order_seq_cst);
    for (UINT i = 0; i < w->count; i++) {
        bool done = dxgk_fence_value(w->objs[i]) >= w->values[i];
        if (done && w->any)
            return true;
        if (!done && !w->any)
            return false;
    }
    return !w->any;
}

/* A completion of a wait that sleeps on words, under its mutex (the
 * waiter's frame outlives it).  A system call only for a waiter that
 * sleeps: it looks at `word` after saying so. */
static void wake_word_sleeper(struct dxgk_cpu_wait *w)
{
    atomic_fetch_add(&w->word, 1);
    if (!atomic_load(&w->word_sleeping))
        return;
    if (w->word_fence)
        dxgk_shared_fence_kick(w->word_fence);
    else
        syscall(SYS_futex, &w->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Moves a wait out of PENDING; true if this call did it. */
static bool wait_complete(struct dxgk_cpu_wait *w, int state)
{
    bool done = false;

    pthread_mutex_lock(&w->mutex);
    if (w->state == DXGK_WAIT_PENDING) {
        w->state = state;
        done = true;
        if (w->sleeps_on_words)
            wake_word_sleeper(w);
        else if (!w->async_event)
            pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&w->mutex);
    return done;
}

static void queue_reap(struct dxgk_cpu_wait *w)
{
    pthread_mutex_lock(&reap_lock);
    list_add_tail(&reap_list, &w->async_entry);
    pthread_mutex_unlock(&reap_lock);
}

/* An async wait is finished: set its event and queue it for freeing,
 * unless its creator is still linking or checking it (then the creator
 * queues it when done: freeing it now would pull it from under it). */
static void async_finished(struct dxgk_cpu_wait *w)
{
    bool creating;

    dxgk_event_set(w->async_event);
    pthread_mutex_lock(&async_lock);
    list_remove(&w->async_entry);
    pthread_mutex_unlock(&async_lock);
    pthread_mutex_lock(&w->mutex);
    creating = w->creating;
    w->finished = true;
    pthread_mutex_unlock(&w->mutex);
    if (!creating)
        queue_reap(w);
}

/* Completes the object's waits that are satisfied, or all of them
 * (abandoned); async_only leaves the blocking ones alone. */
static void wake_locked(struct dxgk_syncobj *obj, bool abandoned, bool async_only)
{
    struct dxgk_wait_link *link;

    LIST_FOR_EACH_ENTRY(link, &obj->waiters, struct dxgk_wait_link, entry) {
        struct dxgk_cpu_wait *w = link->wait;

        if ((async_only && !w->async_event) || (!abandoned && !wait_satisfied(w)))
            continue;
        if (wait_complete(w, abandoned ? DXGK_WAIT_ABANDONED : DXGK_WAIT_SATISFIED) && w->async_event)
            async_finished(w);
    }
}

void dxgk_wake_waiters_locked(struct dxgk_syncobj *obj, bool abandoned)
{
    wake_locked(obj, abandoned, false);
}

void dxgk_end_async_waits_locked(struct dxgk_syncobj *obj)
{
    wake_locked(obj, true, true);
}

static void wait_unlink(struct dxgk_cpu_wait *w)
{
    for (UINT i = 0; i < w->count; i++) {
        struct dxgk_wait_link *link = &w->links[i];

        pthread_mutex_lock(&link->obj->lock);
        list_remove(&link->entry);
        pthread_mutex_unlock(&link->obj->lock);
    }
    /* Only now: until unlinked from the last object, a signaler of that
     * object may still evaluate this wait, which reads every object. */
    for (UINT i = 0; i < w->count; i++)
        dxgk_syncobj_put(w->links[i].obj);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
}

void dxgk_reap_async_waits(void)
{
    for (;;) {
        struct dxgk_cpu_wait *w = NULL;

        pthread_mutex_lock(&reap_lock);
        if (!list_empty(&reap_list)) {
            w = LIST_ENTRY(reap_list.next, struct dxgk_cpu_wait, async_entry);
            list_remove(&w->async_entry);
        }
        pthread_mutex_unlock(&reap_lock);
        if (!w)
            return;
        wait_unlink(w);
        free(w);
    }
}

/* The first shared fence a wait waits on, or NULL. */
static struct dxgk_shared_fence *first_shared_fence(const struct dxgk_cpu_wait *w)
{
    for (UINT i = 0; i < w->count; i++)
        if (w->objs[i]->shared_fence)
            return w->objs[i]->shared_fence;
    return NULL;
}

static bool waits_on_shared(const struct dxgk_cpu_wait *w)
{
    return first_shared_fence(w) != NULL;
}

/* The shared fence a wait waits on if it waits on nothing else, or NULL. */
static struct dxgk_shared_fence *only_shared_fence(const struct dxgk_cpu_wait *w)
{
    struct dxgk_shared_fence *sf = w->objs[0]->shared_fence;

    for (UINT i = 1; i < w->count; i++)
        if (w->objs[i]->shared_fence != sf)
            return NULL;
    return sf;
}

/* Looks up `count` monitored fences of the device's adapter. */
static NTSTATUS lookup_fences(struct dxgk_device *device, const D3DKMT_HANDLE *handles, UINT count,
                              struct dxgk_syncobj **objs, bool for_signal)
{
    NTSTATUS status = STATUS_SUCCESS;
    UINT i;

    for (i = 0; i < count; i++) {
        objs[i] = dxgk_syncobj_lookup(handles[i], device->adapter);
        if (!objs[i] || objs[i]->type != D3DDDI_MONITORED_FENCE) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        if (for_signal ? objs[i]->flags.NoSignal : objs[i]->flags.NoWait) {
            status = STATUS_ACCESS_DENIED;
            break;
        }
        if (dxgk_syncobj_link_gone(objs[i])) {
            status = STATUS_DEVICE_REMOVED;
            break;
        }
    }
    if (status) {
        if (i < count && objs[i])
            i++;
        while (i--)
            dxgk_syncobj_put(objs[i]);
    }
    return status;
}

/* Windows refuses a CPU signal below a fence's current value unless the
 * caller allows rewinding, and then signals none of the call's fences.  A
 * value raised by the GPU after this check only makes the store a no-op. */
static NTSTATUS check_no_rewind(struct dxgk_syncobj *const *objs, const UINT64 *values, UINT count)
{
    for (UINT i = 0; i < count; i++)
        if (values[i] < dxgk_fence_value(objs[i])) {
            TRACE_(dxgk, "fence %p: %#llx is below %#llx\n", (void *)objs[i],
                   (unsigned long long)values[i], (unsigned long long)dxgk_fence_value(objs[i]));
            return STATUS_INVALID_PARAMETER;
        }
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_signal_from_cpu(D3DKMT_HANDLE hDevice, const D3DKMT_HANDLE *handles,
                              const UINT64 *values, UINT count, D3DDDICB_SIGNALFLAGS flags)
{
    struct dxgk_syncobj *objs[D3DDDI_MAX_OBJECT_SIGNALED];
    struct dxgk_device *device;
    NTSTATUS status;

    if (!count || count > D3DDDI_MAX_OBJECT_SIGNALED || !handles || !values)
        return STATUS_INVALID_PARAMETER;
    /* Only AllowFenceRewind means something for a CPU signal. */
    if (flags.Value & ~4u)
        return STATUS_INVALID_PARAMETER;
    if (!(device = dxgk_device_acquire(hDevice)))
        return STATUS_INVALID_PARAMETER;
    status = lookup_fences(device, handles, count, objs, true);
    dxgk_device_release(device);
    if (status)
        return status;
    if (!flags.AllowFenceRewind && (status = check_no_rewind(objs, values, count))) {
        for (UINT i = 0; i < count; i++)
            dxgk_syncobj_put(objs[i]);
        return status;
    }
    for (UINT i = 0; i < count; i++) {
        TRACE_(dxgk, "fence %#x <- %#llx\n", handles[i], (unsigned long long)values[i]);
        dxgk_syncobj_signal(objs[i], values[i], flags.AllowFenceRewind);
        dxgk_syncobj_put(objs[i]);
    }
    dxgk_reap_async_waits();
    return STATUS_SUCCESS;
}

/* Before a blocking wait on shared fences counts itself a watcher and
 * sleeps, it looks at the values for a moment if the fence was last
 * signalled from another CPU (look.h): that process may be running there
 * right now and about to answer.  A signal that lands in the look finds no
 * watcher, so it makes no FUTEX_WAKE, and the waiter no FUTEX_WAIT. */
static void spin_learn(struct dxgk_shared_fence *sf, uint64_t took_ns)
{
    unsigned budget = atomic_load_explicit(&sf->spin_ns, memory_order_relaxed);

    atomic_store_explicit(&sf->spin_ns, dxgk_look_learn(budget, took_ns), memory_order_relaxed);
}

static bool spin_until_satisfied(struct dxgk_cpu_wait *w, struct dxgk_shared_fence *sf, uint64_t start)
{
    unsigned budget = dxgk_look_budget(atomic_load_explicit(&sf->spin_ns, memory_order_relaxed));

    do {
        if (wait_satisfied(w))
            return true;
        dxgk_look_pause();
    } while (kmt_now_ns() - start < budget);
    return false;
}

/* Whether a fence of the wait lost its broker connection (share.h): a
 * signaller that dies after the broker is noticed by nobody.  A look at
 * the link, not dxgk_syncobj_link_gone: this waiter may be the first to
 * notice. */
static bool link_lost(const struct dxgk_cpu_wait *w)
{
    for (UINT i = 0; i < w->count; i++)
        if (__atomic_load_n(&w->objs[i]->broker_id, __ATOMIC_RELAXED) &&
            dxgk_share_lost(w->objs[i]->broker_connection))
            return true;
    return false;
}

/* A blocking wait on shared fences: sleeps on its own word (bumped by a
 * completion in this process) and on the fences' wake words, which a
 * signal in any process bumps while it counts as a watcher.  It counts
 * itself first and looks at the values second, as the watcher does.  On
 * one shared fence alone it sleeps on that fence's word alone (word_fence):
 * a plain futex wait, no futex_waitv.  It wakes every
 * DXGK_SHARE_LINK_CHECK_NS to look at the broker link; true when that
 * ended the wait. */
static bool sleep_on_words(struct dxgk_cpu_wait *w, int timeout_ms)
{
    struct dxgk_shared_fence *sfs[D3DDDI_MAX_OBJECT_WAITED_ON];
    uint32_t seqs[D3DDDI_MAX_OBJECT_WAITED_ON];
    struct dxgk_shared_fence *look = first_shared_fence(w);
    bool looks = timeout_ms != 0 && dxgk_shared_fence_signalled_elsewhere(look);
    uint64_t start = looks ? kmt_now_ns() : 0;
    struct timespec deadline;
    bool lost = false;
    unsigned n = 0;

    /* the deadline counts from the call, the look included */
    if (timeout_ms >= 0)
        deadline = kmt_deadline_after((uint64_t)timeout_ms);
    if (looks && spin_until_satisfied(w, look, start)) {
        spin_learn(look, kmt_now_ns() - start);
        wait_complete(w, DXGK_WAIT_SATISFIED);
        return false;
    }
    for (UINT i = 0; i < w->count; i++) {
        struct dxgk_shared_fence *sf = w->objs[i]->shared_fence;
        bool seen = false;

        for (unsigned j = 0; j < n; j++)
            seen |= sfs[j] == sf;
        if (sf && !seen) {
            dxgk_shared_fence_arm(sf);
            sfs[n++] = sf;
        }
    }
    for (;;) {
        uint32_t word = atomic_load(&w->word);
        struct timespec slice = kmt_timespec_of(kmt_now_ns() + DXGK_SHARE_LINK_CHECK_NS);
        bool last = timeout_ms >= 0 && dxgk_share_deadline_first(&deadline, &slice);
        int state;

        for (unsigned j = 0; j < n; j++)
            seqs[j] = dxgk_shared_fence_seq(sfs[j]);
        pthread_mutex_lock(&w->mutex);
        state = w->state;
        pthread_mutex_unlock(&w->mutex);
        if (state != DXGK_WAIT_PENDING)
            break;
        if (wait_satisfied(w)) {
            wait_complete(w, DXGK_WAIT_SATISFIED);
            break;
        }
        atomic_store(&w->word_sleeping, true);
        if (atomic_load(&w->word) == word &&
            !(w->word_fence ? dxgk_shared_fence_sleep_one(w->word_fence, seqs[0], last ? &deadline : &slice)
                            : dxgk_shared_fence_sleep(&w->word, word, sfs, seqs, n, last ? &deadline : &slice))) {
            atomic_store(&w->word_sleeping, false);
            if (last)
                break;
            if ((lost = link_lost(w)))
                break;
            continue;
        }
        atomic_store(&w->word_sleeping, false);
    }
    for (unsigned j = 0; j < n; j++)
        dxgk_shared_fence_disarm(sfs[j]);
    if (looks)
        spin_learn(look, wait_satisfied(w) ? kmt_now_ns() - start : DXGK_LOOK_FOUND_NOTHING);
    return lost;
}

NTSTATUS dxgk_wait_from_cpu(D3DKMT_HANDLE hDevice, const D3DKMT_HANDLE *handles,
                            const UINT64 *values, UINT count, bool any, HANDLE async_event,
                            int timeout_ms)
{
    struct dxgk_cpu_wait on_stack, *w = &on_stack;
    struct dxgk_device *device;
    bool lost = false;
    NTSTATUS status;
    int state;

    if (!count || count > D3DDDI_MAX_OBJECT_WAITED_ON || !handles || !values)
        return STATUS_INVALID_PARAMETER;
    if (async_event && (status = dxgk_event_validate(async_event)))
        return status;
    if (!(device = dxgk_device_acquire(hDevice)))
        return STATUS_INVALID_PARAMETER;
    if (async_event && !(w = calloc(1, sizeof(*w)))) {
        dxgk_device_release(device);
        return STATUS_NO_MEMORY;
    }
    if (!async_event)
        memset(w, 0, sizeof(*w));
    status = lookup_fences(device, handles, count, w->objs, false);
    dxgk_device_release(device);     /* the objects are referenced: never sleep holding the device */
    if (status) {
        if (w != &on_stack)
            free(w);
        return status;
    }
    w->count = count;
    w->any = any;
    w->async_event = async_event;
    w->sleeps_on_words = !async_event && waits_on_shared(w);
    w->word_fence = w->sleeps_on_words ? only_shared_fence(w) : NULL;
    memcpy(w->values, values, count * sizeof(*values));
    pthread_mutex_init(&w->mutex, NULL);
    kmt_cond_init_monotonic(&w->cond);
    list_init(&w->async_entry);
    if (async_event) {
        w->creating = true;
        pthread_mutex_lock(&async_lock);
        list_add_tail(&dxgk_process.async_waits, &w->async_entry);
        pthread_mutex_unlock(&async_lock);
    }

    /* link first ... */
    for (UINT i = 0; i < count; i++) {
        struct dxgk_wait_link *link = &w->links[i];

        link->wait = w;
        link->obj = w->objs[i];
        pthread_mutex_lock(&link->obj->lock);
        list_add_tail(&link->obj->waiters, &link->entry);
        if (link->obj->destroyed)
            state = DXGK_WAIT_ABANDONED;
        else
            state = DXGK_WAIT_PENDING;
        pthread_mutex_unlock(&link->obj->lock);
        if (state == DXGK_WAIT_ABANDONED && wait_complete(w, state) && async_event)
            async_finished(w);
    }
    /* ... then look at the values */
    if (wait_satisfied(w) && wait_complete(w, DXGK_WAIT_SATISFIED) && async_event)
        async_finished(w);
    else if (async_event && waits_on_shared(w))
        dxgk_shared_fence_cpu_blocked();     /* another process may signal them */

    if (async_event) {
        bool finished;

        pthread_mutex_lock(&w->mutex);
        w->creating = false;
        finished = w->finished;
        pthread_mutex_unlock(&w->mutex);
        if (finished)
            queue_reap(w);
        dxgk_reap_async_waits();
        return STATUS_SUCCESS;
    }

    pthread_mutex_lock(&w->mutex);
    if (w->sleeps_on_words && w->state == DXGK_WAIT_PENDING) {
        pthread_mutex_unlock(&w->mutex);
        lost = sleep_on_words(w, timeout_ms);
        pthread_mutex_lock(&w->mutex);
    } else if (timeout_ms < 0) {
        while (w->state == DXGK_WAIT_PENDING)
            pthread_cond_wait(&w->cond, &w->mutex);
    } else {
        struct timespec deadline = kmt_deadline_after((uint64_t)timeout_ms);

        while (w->state == DXGK_WAIT_PENDING)
            if (pthread_cond_timedwait(&w->cond, &w->mutex, &deadline) == ETIMEDOUT)
                break;
    }
    state = w->state;
    w->state = DXGK_WAIT_ABANDONED;  /* no late completion may touch it */
    pthread_mutex_unlock(&w->mutex);
    wait_unlink(w);

    switch (state) {
    case DXGK_WAIT_SATISFIED: return STATUS_SUCCESS;
    case DXGK_WAIT_ABANDONED: return STATUS_ABANDONED;
    default:                  return lost ? STATUS_DEVICE_REMOVED : STATUS_TIMEOUT;
    }
}

void dxgk_process_cancel_async_waits(void)
{
    for (;;) {
        struct dxgk_cpu_wait *w = NULL;

        pthread_mutex_lock(&async_lock);
        if (!list_empty(&dxgk_process.async_waits))
            w = LIST_ENTRY(dxgk_process.async_waits.next, struct dxgk_cpu_wait, async_entry);
        pthread_mutex_unlock(&async_lock);
        if (!w)
            break;
        if (wait_complete(w, DXGK_WAIT_ABANDONED))
            async_finished(w);
        else
            sched_yield();               /* being finished by a signal right now */
    }
    dxgk_reap_async_waits();
}

void dxgk_wait_forget(void)
{
    /* the parent's async waits belong to its objects: left as they are */
    reap_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    async_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    list_init(&reap_list);
}
