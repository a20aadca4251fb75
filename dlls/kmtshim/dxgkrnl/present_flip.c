/*
 * Flip presents and the VidPn source frame counters.
 *
 * A flip names the allocation a source shows after FlipInterval vblanks
 * (IMMEDIATE: at once).  As on Windows the interval counts from the flip
 * queued before it on the source, or from now when none waits: its
 * target vblank is max(now, previous target) + interval, so every flip is
 * shown for at least its interval.  It waits on its source's queue and
 * reaches the screen at the vblank the core counts (vblank_wait.c), which
 * calls dxgk_flip_vblank_locked() under the vblank lock: one flip a
 * vblank, counted in Frame.  Only an immediate flip supersedes the queued
 * ones; they count in CancelledFrame, as does every flip still queued
 * when its device is destroyed or the process ends.  QueuedPresent is the
 * queue's length.  A Blt present counts in Frame when its copy is done.
 *
 * The vsync interrupt must run while a flip waits: the first flip queued
 * joins it as a vblank wait does.  When the interrupt retires the last
 * queued flip, the scheduler thread lets it go (a DDI call that joins the
 * interrupt's thread, so never made from the interrupt itself), as does a
 * present or statistics query that finds every queue empty: an idle
 * program gets no vblank wakeups.  The miniport is not asked to program the
 * new scan-out address: kmtshim has no DxgkDdiSetVidPnSourceAddress
 * gateway, so `scanned_out` is the core's record only.
 *
 * SetQueuedLimit's present limit bounds a device's queued flips on a
 * source: a flip beyond it blocks until one leaves, as Windows blocks the
 * present, or until the device or process goes (STATUS_DEVICE_REMOVED).
 * A flip to a source whose monitor is unplugged fails with
 * STATUS_DEVICE_REMOVED, as a vblank wait there does, and an unplug
 * cancels the flips queued on the source.
 * A flip is queued only while its device lives: DestroyDevice marks the
 * device `handle_gone`, then bumps `devices_gone`; a present reads
 * `devices_gone` with the device acquired, then the mark, all
 * sequentially consistent, so the bump of a device it finds unmarked
 * comes after its read, and a present that sees `devices_gone` moved
 * since then looks again before queueing.  DestroyDevice takes the flips
 * lock only when a flip is queued (or the join held): the present counts
 * its flip in `queued` before it reads `devices_gone`, and the destroy
 * bumps `devices_gone` before it reads `queued`, both sequentially
 * consistent, so either the destroy sees the flip and cancels it under
 * the lock, or the present sees the bump.
 */
#include <stdlib.h>

#include "dxgkrnl.h"
#include "vidsch.h"

struct dxgk_flip {
    struct list entry;                   /* dxgk_flip_source.pending */
    D3DKMT_HANDLE device;
    D3DKMT_HANDLE allocation;
    UINT64 target;                       /* the vblank count that shows it */
};

void dxgk_flips_init(struct dxgk_adapter *adapter)
{
    struct dxgk_flips *f = &adapter->flips;

    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->retired, NULL);
    for (UINT i = 0; i < DXGK_MAX_VIDPN_SOURCES; i++)
        list_init(&f->source[i].pending);
}

static void cancel_locked(struct dxgk_flips *f, struct dxgk_flip_source *s, struct dxgk_flip *flip)
{
    list_remove(&flip->entry);
    s->queued--;
    f->queued--;
    s->cancelled++;
    free(flip);
}

static void drop_all_locked(struct dxgk_flips *f)
{
    for (UINT i = 0; i < DXGK_MAX_VIDPN_SOURCES; i++) {
        struct dxgk_flip_source *s = &f->source[i];
        struct dxgk_flip *flip, *next;

        LIST_FOR_EACH_ENTRY_SAFE(flip, next, &s->pending, struct dxgk_flip, entry)
            cancel_locked(f, s, flip);
    }
}

void dxgk_flips_fini(struct dxgk_adapter *adapter)
{
    struct dxgk_flips *f = &adapter->flips;

    drop_all_locked(f);
    pthread_cond_destroy(&f->retired);
    pthread_mutex_destroy(&f->lock);
}

/* The join is held with nothing left to wait for. */
static bool join_idle_locked(const struct dxgk_flips *f)
{
    return f->joined && !f->queued;
}

void dxgk_flip_settle(struct dxgk_adapter *adapter)
{
    struct dxgk_flips *f = &adapter->flips;
    bool leave;

    pthread_mutex_lock(&f->lock);
    leave = join_idle_locked(f);
    if (leave)
        f->joined = false;
    pthread_mutex_unlock(&f->lock);
    if (leave)
        dxgk_vblank_leave(adapter);
}

/* Holds a join while flips are queued; the join is taken before the
 * flip is, so the interrupt never misses the flip's vblank. */
static NTSTATUS hold_interrupt(struct dxgk_adapter *adapter)
{
    struct dxgk_flips *f = &adapter->flips;
    NTSTATUS status;
    bool joined;

    pthread_mutex_lock(&f->lock);
    joined = f->joined;
    pthread_mutex_unlock(&f->lock);
    if (joined)
        return STATUS_SUCCESS;
    /* its thread lets the interrupt go when the last flip is shown */
    if ((status = dxgk_sched_start(adapter)) || (status = dxgk_vblank_join(adapter)))
        return status;
    pthread_mutex_lock(&f->lock);
    joined = f->joined;
    f->joined = true;
    pthread_mutex_unlock(&f->lock);
    if (joined)                          /* another present joined meanwhile */
        dxgk_vblank_leave(adapter);
    return STATUS_SUCCESS;
}

static unsigned queued_by(const struct dxgk_flip_source *s, D3DKMT_HANDLE device)
{
    const struct dxgk_flip *flip;
    unsigned n = 0;

    LIST_FOR_EACH_ENTRY(flip, &s->pending, const struct dxgk_flip, entry)
        n += flip->device == device;
    return n;
}

static bool device_live(D3DKMT_HANDLE h)
{
    struct dxgk_device *device = dxgk_device_acquire(h);

    if (device)
        dxgk_device_release(device);
    return device != NULL;
}

/* Blocks while the device has `limit` flips queued on the source. */
static NTSTATUS wait_for_room_locked(struct dxgk_flips *f, struct dxgk_flip_source *s, D3DKMT_HANDLE device,
                                     unsigned limit)
{
    while (!f->stopped && queued_by(s, device) >= limit) {
        pthread_mutex_unlock(&f->lock);
        bool live = device_live(device);
        pthread_mutex_lock(&f->lock);
        if (!live)
            return STATUS_DEVICE_REMOVED;
        if (queued_by(s, device) >= limit)
            pthread_cond_wait(&f->retired, &f->lock);
    }
    return f->stopped ? STATUS_DEVICE_REMOVED : STATUS_SUCCESS;
}

NTSTATUS dxgk_flip_queue(struct dxgk_adapter *adapter, D3DKMT_HANDLE device, UINT source,
                         D3DKMT_HANDLE allocation, UINT interval, unsigned limit, UINT64 gone_seen)
{
    struct dxgk_flips *f = &adapter->flips;
    struct dxgk_flip_source *s = &f->source[source];
    struct dxgk_flip *flip, *old, *next;
    NTSTATUS status = STATUS_SUCCESS;
    bool rejoin;

    if (source < adapter->num_children && !dxgk_child_connected(adapter, source))
        return STATUS_DEVICE_REMOVED;    /* as a vblank wait there */
    if (!interval) {
        /* immediate: shown now, superseding whatever waits */
        pthread_mutex_lock(&f->lock);
        LIST_FOR_EACH_ENTRY_SAFE(old, next, &s->pending, struct dxgk_flip, entry)
            cancel_locked(f, s, old);
        s->frames++;
        s->scanned_out = allocation;
        pthread_cond_broadcast(&f->retired);
        pthread_mutex_unlock(&f->lock);
        dxgk_flip_settle(adapter);
        return STATUS_SUCCESS;
    }
    if (!(flip = calloc(1, sizeof(*flip))))
        return STATUS_NO_MEMORY;
    flip->device = device;
    flip->allocation = allocation;
    if ((status = hold_interrupt(adapter))) {
        free(flip);
        return status;
    }
    /* the vblank lock first, as in the interrupt: the target counts from
     * the vblank this call saw */
    for (;;) {
        bool unplugged;
        UINT64 gone;

        pthread_mutex_lock(&adapter->vblank.lock);
        pthread_mutex_lock(&f->lock);
        /* counted before the look at devices_gone (see the top); the
         * count becomes the flip's, or goes before the lock does */
        atomic_fetch_add(&f->queued, 1);
        gone = atomic_load(&f->devices_gone);
        unplugged = source < adapter->num_children && !dxgk_child_connected(adapter, source);
        if (!f->stopped && !unplugged && gone == gone_seen && queued_by(s, device) < limit)
            break;
        atomic_fetch_sub(&f->queued, 1);
        pthread_mutex_unlock(&adapter->vblank.lock);
        if (f->stopped || unplugged)
            status = STATUS_DEVICE_REMOVED;
        else if (gone == gone_seen)
            status = wait_for_room_locked(f, s, device, limit);
        pthread_mutex_unlock(&f->lock);
        /* a device went since ours was seen live: look again, outside the
         * lock (DestroyDevice takes it holding the device's) */
        if (!status && gone != gone_seen && !device_live(device))
            status = STATUS_DEVICE_REMOVED;
        if (status)
            goto fail;
        gone_seen = gone;
    }
    flip->target = adapter->vblank.count[source];
    if (!list_empty(&s->pending)) {
        UINT64 last = LIST_ENTRY(s->pending.prev, struct dxgk_flip, entry)->target;

        if (last > flip->target)
            flip->target = last;
    }
    flip->target += interval;
    list_add_tail(&s->pending, &flip->entry);
    s->queued++;                         /* f->queued counts it already */
    rejoin = !f->joined;
    pthread_mutex_unlock(&f->lock);
    pthread_mutex_unlock(&adapter->vblank.lock);
    /* a wait for room may have seen every queue empty and the interrupt
     * let go; with this flip queued nothing lets it go again */
    return rejoin ? hold_interrupt(adapter) : STATUS_SUCCESS;

fail:
    free(flip);
    dxgk_flip_settle(adapter);
    return status;
}

void dxgk_flip_vblank_locked(struct dxgk_adapter *adapter, UINT source, UINT64 count)
{
    struct dxgk_flips *f = &adapter->flips;
    struct dxgk_flip_source *s = &f->source[source];
    struct dxgk_flip *flip;
    bool emptied = false;

    pthread_mutex_lock(&f->lock);
    /* targets rise along the queue: the oldest is the one due */
    if (!list_empty(&s->pending) &&
        (flip = LIST_ENTRY(s->pending.next, struct dxgk_flip, entry))->target <= count) {
        list_remove(&flip->entry);
        s->queued--;
        f->queued--;
        s->frames++;
        s->scanned_out = flip->allocation;
        free(flip);
        pthread_cond_broadcast(&f->retired);
        emptied = join_idle_locked(f);
    }
    pthread_mutex_unlock(&f->lock);
    if (emptied)
        dxgk_sched_defer_flip_settle(adapter);
}

UINT64 dxgk_flip_devices_gone(struct dxgk_adapter *adapter)
{
    return atomic_load(&adapter->flips.devices_gone);
}

void dxgk_flip_unplugged_locked(struct dxgk_adapter *adapter, UINT source)
{
    struct dxgk_flips *f = &adapter->flips;
    struct dxgk_flip *flip, *next;
    bool emptied;

    pthread_mutex_lock(&f->lock);
    LIST_FOR_EACH_ENTRY_SAFE(flip, next, &f->source[source].pending, struct dxgk_flip, entry)
        cancel_locked(f, &f->source[source], flip);
    pthread_cond_broadcast(&f->retired);
    emptied = join_idle_locked(f);
    pthread_mutex_unlock(&f->lock);
    if (emptied)
        dxgk_sched_defer_flip_settle(adapter);
}

void dxgk_flip_count_blt(struct dxgk_adapter *adapter, UINT source)
{
    pthread_mutex_lock(&adapter->flips.lock);
    adapter->flips.source[source].frames++;
    pthread_mutex_unlock(&adapter->flips.lock);
}

void dxgk_flip_device_gone(struct dxgk_adapter *adapter, D3DKMT_HANDLE device)
{
    struct dxgk_flips *f = &adapter->flips;

    /* no flip queued and no join held: nothing to cancel, nobody waits
     * for room (a wait needs a flip queued), nothing to settle, and a
     * present still on its way sees the bump (see the top) */
    atomic_fetch_add(&f->devices_gone, 1);
    if (!atomic_load(&f->queued) && !atomic_load_explicit(&f->joined, memory_order_relaxed))
        return;
    pthread_mutex_lock(&f->lock);
    for (UINT i = 0; i < DXGK_MAX_VIDPN_SOURCES; i++) {
        struct dxgk_flip_source *s = &f->source[i];
        struct dxgk_flip *flip, *next;

        LIST_FOR_EACH_ENTRY_SAFE(flip, next, &s->pending, struct dxgk_flip, entry)
            if (flip->device == device)
                cancel_locked(f, s, flip);
    }
    pthread_cond_broadcast(&f->retired);
    pthread_mutex_unlock(&f->lock);
    dxgk_flip_settle(adapter);
}

void dxgk_flip_stop(struct dxgk_adapter *adapter)
{
    struct dxgk_flips *f = &adapter->flips;

    pthread_mutex_lock(&f->lock);
    f->stopped = true;
    drop_all_locked(f);
    pthread_cond_broadcast(&f->retired);
    pthread_mutex_unlock(&f->lock);
    dxgk_flip_settle(adapter);
}

void dxgk_flip_counters(struct dxgk_adapter *adapter, UINT source,
                        D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE_INFORMATION *out)
{
    struct dxgk_flips *f = &adapter->flips;

    pthread_mutex_lock(&f->lock);
    out->Frame = f->source[source].frames;
    out->CancelledFrame = f->source[source].cancelled;
    out->QueuedPresent = f->source[source].queued;
    pthread_mutex_unlock(&f->lock);
    dxgk_flip_settle(adapter);
}
