/*
 * WaitForVerticalBlankEvent(2): waits for a source's next vertical blank.
 *
 * A waiter joins the adapter's vblank state; the first one enables
 * DXGK_INTERRUPT_CRTC_VSYNC (DxgkDdiControlInterrupt) and the last one to
 * leave disables it, so a miniport's vsync source runs only while someone
 * waits.  The miniport raises DxgkCbNotifyInterrupt(CRTC_VSYNC) with the
 * target of each vertical blank; dxgk_vblank_interrupt() counts it for the
 * source of that target (kmtshim's paths are the identity) and ends the
 * waits of that source whose target count it reached: the count after
 * joining plus one, so never a blank that began before the call.
 *
 * A wait has no time limit, as on Windows: a dark output still has
 * vblanks, from the miniport's timer at the mode's rate where the CRTC
 * gives none (the DRM miniport's drm_vblank.c).  What ends a wait without
 * a vblank: the events of WaitForVerticalBlankEvent2 (STATUS_WAIT_0 + 1 +
 * i, Microsoft's D3DKMTWaitForVerticalBlankEvent2 page), and teardown,
 * STATUS_DEVICE_REMOVED as for every call on a device or adapter that is
 * gone: DestroyDevice of the hDevice the wait named, CloseAdapter of the
 * hAdapter it named (Microsoft's page: "the graphics adapter was
 * stopped"; the adapter itself lives on for its devices), process teardown
 * (KmtProcessShutdown) for every wait, and the source's monitor found
 * unplugged (PollDisplayChildren, DxgkCbIndicateChildStatus) for the waits
 * on that source, the "display device was reset" of Microsoft's
 * D3DKMTWaitForVerticalBlankEvent page; a wait on a source whose monitor
 * is unplugged ends so at once.  A child is the source of its index.
 *
 * Natively an event is an eventfd (event.c): an event wait polls the
 * events and an eventfd of its own, which whatever ends the wait writes.
 * The events are only looked at, never read: the program that signals
 * one resets it.  Where a host's events are not file descriptors (Wine:
 * its PE half waits on them itself) the wait is for the vblank alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dxgkrnl.h"
#include "ddi.h"
#include "sync.h"
#include "base/kmt_time.h"

struct dxgk_vblank_waiter {
    struct list entry;                   /* vb->waiters while pending */
    UINT source;
    UINT64 target;                       /* the count that ends it */
    D3DKMT_HANDLE adapter;               /* the hAdapter it named */
    D3DKMT_HANDLE device;                /* the hDevice it named, or 0 */
    NTSTATUS status;                     /* STATUS_PENDING until it ends */
    int wake_fd;                         /* an event wait's eventfd, or -1 */
};

/* Waits on some adapter's list, for DestroyDevice to read without a lock. */
static atomic_uint listed;

static void vb_listed_add(int delta)
{
    atomic_fetch_add_explicit(&listed, (unsigned)delta, memory_order_relaxed);
}

void dxgk_vblank_init(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_mutex_init(&vb->ctl_lock, NULL);
    pthread_mutex_init(&vb->lock, NULL);
    kmt_cond_init_monotonic(&vb->cond);
    list_init(&vb->waiters);
}

void dxgk_vblank_fini(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_cond_destroy(&vb->cond);
    pthread_mutex_destroy(&vb->lock);
    pthread_mutex_destroy(&vb->ctl_lock);
}

static void end_locked(struct dxgk_vblank_waiter *w, NTSTATUS status)
{
    static const uint64_t one = 1;

    w->status = status;
    list_remove(&w->entry);
    list_init(&w->entry);
    vb_listed_add(-1);
    if (w->wake_fd >= 0 && write(w->wake_fd, &one, sizeof(one)) != sizeof(one))
        ERR_(dxgk, "cannot wake a vblank wait: %s\n", strerror(errno));
}

void dxgk_vblank_interrupt(struct dxgk_adapter *adapter, D3DDDI_VIDEO_PRESENT_TARGET_ID target)
{
    struct dxgk_vblank *vb = &adapter->vblank;
    struct dxgk_vblank_waiter *w, *next;

    if (target >= dxgk_source_count(adapter))
        return;
    pthread_mutex_lock(&vb->lock);
    vb->count[target]++;
    dxgk_flip_vblank_locked(adapter, target, vb->count[target]);
    LIST_FOR_EACH_ENTRY_SAFE(w, next, &vb->waiters, struct dxgk_vblank_waiter, entry)
        if (w->source == target && vb->count[target] >= w->target)
            end_locked(w, STATUS_WAIT_0);
    pthread_cond_broadcast(&vb->cond);
    pthread_mutex_unlock(&vb->lock);
}

/* Which waits end_waits ends. */
enum end_by { END_ALL, END_DEVICE, END_ADAPTER };

/* Ends the waits that named `value` as hDevice or as hAdapter, or every
 * wait (END_ALL). */
static void end_waits(struct dxgk_adapter *adapter, enum end_by by, UINT value, bool stop)
{
    struct dxgk_vblank *vb = &adapter->vblank;
    struct dxgk_vblank_waiter *w, *next;

    pthread_mutex_lock(&vb->lock);
    vb->stopped |= stop;
    LIST_FOR_EACH_ENTRY_SAFE(w, next, &vb->waiters, struct dxgk_vblank_waiter, entry)
        if (by == END_ALL || (by == END_DEVICE && w->device == value) ||
            (by == END_ADAPTER && w->adapter == value))
            end_locked(w, STATUS_DEVICE_REMOVED);
    pthread_cond_broadcast(&vb->cond);
    pthread_mutex_unlock(&vb->lock);
}

/* DestroyDevice took the handle first.  A wait is counted, then looks its
 * handles up (enlist), and both touch the handle's slot under its lock: a
 * wait whose lookup came first is counted by the time the slot is
 * released to DestroyDevice, and one whose lookup came later finds the
 * handle gone and ends itself.  So with none counted there is nothing to
 * end, and the pair costs no vblank lock. */
void dxgk_vblank_device_gone(struct dxgk_adapter *adapter, D3DKMT_HANDLE device)
{
    if (!atomic_load_explicit(&listed, memory_order_relaxed))
        return;
    end_waits(adapter, END_DEVICE, device, false);
}

/* The flag flips under the vblank lock, in the same hold that ends the
 * source's waits and cancels its flips on a disconnection: enlist() reads it under that lock,
 * so a wait that began after a replug never meets the unplug before it. */
bool dxgk_vblank_connection(struct dxgk_adapter *adapter, UINT source, bool connected)
{
    struct dxgk_vblank *vb = &adapter->vblank;
    struct dxgk_vblank_waiter *w, *next;
    bool changed;

    pthread_mutex_lock(&vb->lock);
    changed = atomic_exchange(&adapter->child_connected[source], connected) != connected;
    if (changed && !connected) {
        LIST_FOR_EACH_ENTRY_SAFE(w, next, &vb->waiters, struct dxgk_vblank_waiter, entry)
            if (w->source == source)
                end_locked(w, STATUS_DEVICE_REMOVED);
        dxgk_flip_unplugged_locked(adapter, source);
        pthread_cond_broadcast(&vb->cond);
    }
    pthread_mutex_unlock(&vb->lock);
    return changed;
}

void dxgk_vblank_adapter_closed(struct dxgk_adapter *adapter, D3DKMT_HANDLE h)
{
    end_waits(adapter, END_ADAPTER, h, false);
}

/* Waits still joined to some adapter's vsync interrupt. */
static bool any_joined(void)
{
    struct dxgk_adapter *adapter;
    bool joined = false;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(adapter, &dxgk_process.adapters, struct dxgk_adapter, entry) {
        pthread_mutex_lock(&adapter->vblank.ctl_lock);
        joined |= adapter->vblank.joined != 0;
        pthread_mutex_unlock(&adapter->vblank.ctl_lock);
    }
    pthread_mutex_unlock(&dxgk_process.lock);
    return joined;
}

void dxgk_vblank_stop_all(void)
{
    struct dxgk_adapter *adapter, *list[DXGK_MAX_LISTED];
    ULONG n;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(adapter, &dxgk_process.adapters, struct dxgk_adapter, entry)
        end_waits(adapter, END_ALL, 0, true);
    pthread_mutex_unlock(&dxgk_process.lock);
    /* queued flips let the interrupt go too: a DDI call, outside the lock */
    n = dxgk_adapters_snapshot(list, true);
    for (ULONG i = 0; i < n; i++)
        dxgk_flip_stop(list[i]);
    dxgk_adapters_release(list, n);
    /* the ended waits still turn the interrupt off on their way out, a
     * DDI call: the adapters stop and the miniports unload only after */
    while (any_joined())
        usleep(1000);
}

/* The first waiter turns the vsync interrupt on; none joins once
 * teardown has begun. */
NTSTATUS dxgk_vblank_join(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;
    NTSTATUS status = STATUS_SUCCESS;
    bool stopped;

    pthread_mutex_lock(&vb->ctl_lock);
    pthread_mutex_lock(&vb->lock);
    stopped = vb->stopped;
    pthread_mutex_unlock(&vb->lock);
    if (stopped)
        status = STATUS_DEVICE_REMOVED;
    else if (!vb->joined)
        status = dxgk_ddi_control_interrupt(adapter, DXGK_INTERRUPT_CRTC_VSYNC, true);
    if (!status)
        vb->joined++;
    pthread_mutex_unlock(&vb->ctl_lock);
    return status;
}

/* The last waiter turns it off again. */
void dxgk_vblank_leave(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_mutex_lock(&vb->ctl_lock);
    if (!--vb->joined)
        dxgk_ddi_control_interrupt(adapter, DXGK_INTERRUPT_CRTC_VSYNC, false);
    pthread_mutex_unlock(&vb->ctl_lock);
}

/* Whether the handles the wait named still name what they named at
 * lookup. */
static bool handles_live(struct dxgk_adapter *adapter, const struct dxgk_vblank_waiter *w)
{
    struct dxgk_adapter *now = dxgk_adapter_from_handle(w->adapter);
    struct dxgk_device *device;
    bool live = now == adapter;

    if (now)
        dxgk_adapter_put(now);
    if (!live || !w->device)
        return live;
    if ((device = dxgk_device_acquire(w->device)))
        dxgk_device_release(device);
    return device != NULL;
}

/* Joined: waits for the next vblank of `source` until it comes or
 * teardown ends the wait. */
static void enlist(struct dxgk_adapter *adapter, struct dxgk_vblank_waiter *w)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_mutex_lock(&vb->lock);
    w->status = STATUS_PENDING;
    w->target = vb->count[w->source] + 1;
    list_add_tail(&vb->waiters, &w->entry);
    vb_listed_add(+1);
    /* a disconnection ends the source's waits after it is recorded: this
     * wait either sees it here or is on the list by then (one hold of
     * the lock records it and ends the waits) */
    if (vb->stopped || (w->source < adapter->num_children && !dxgk_child_connected(adapter, w->source)))
        end_locked(w, STATUS_DEVICE_REMOVED);
    pthread_mutex_unlock(&vb->lock);
    /* CloseAdapter and DestroyDevice take the handle before they end its
     * waits: a wait that enlisted after that finds the handle gone here. */
    if (handles_live(adapter, w))
        return;
    pthread_mutex_lock(&vb->lock);
    if (w->status == STATUS_PENDING)
        end_locked(w, STATUS_DEVICE_REMOVED);
    pthread_mutex_unlock(&vb->lock);
}

/* Takes a wait that may still be pending off the list; its status. */
static NTSTATUS delist(struct dxgk_adapter *adapter, struct dxgk_vblank_waiter *w, NTSTATUS pending)
{
    struct dxgk_vblank *vb = &adapter->vblank;
    NTSTATUS status;

    pthread_mutex_lock(&vb->lock);
    if (w->status == STATUS_PENDING) {
        list_remove(&w->entry);
        vb_listed_add(-1);
        w->status = pending;
    }
    status = w->status;
    pthread_mutex_unlock(&vb->lock);
    return status;
}

NTSTATUS dxgk_wait_for_vblank(D3DKMT_HANDLE h, D3DKMT_HANDLE hdevice, UINT source)
{
    struct dxgk_vblank_waiter w = { .source = source, .adapter = h, .device = hdevice, .wake_fd = -1 };
    struct dxgk_adapter *adapter;
    struct dxgk_vblank *vb;
    NTSTATUS status;

    if ((status = dxgk_vblank_lookup(h, hdevice, source, &adapter)))
        return status;
    vb = &adapter->vblank;
    if (!(status = dxgk_vblank_join(adapter))) {
        enlist(adapter, &w);
        pthread_mutex_lock(&vb->lock);
        while (w.status == STATUS_PENDING)
            pthread_cond_wait(&vb->cond, &vb->lock);
        status = w.status;
        pthread_mutex_unlock(&vb->lock);
        dxgk_vblank_leave(adapter);
    }
    dxgk_adapter_put(adapter);
    return status;
}

/* The first event found signalled: STATUS_WAIT_0 + 1 + its index;
 * STATUS_PENDING if none; STATUS_INVALID_HANDLE for one closed meanwhile. */
static NTSTATUS signalled_event(const struct pollfd *fds, UINT count)
{
    for (UINT i = 0; i < count; i++) {
        if (fds[i].revents & POLLNVAL)
            return STATUS_INVALID_HANDLE;
        if (fds[i].revents & POLLIN)
            return STATUS_WAIT_0 + 1 + i;
    }
    return STATUS_PENDING;
}

static NTSTATUS poll_events(struct dxgk_vblank_waiter *w, const HANDLE *events, UINT count)
{
    struct pollfd fds[1 + D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS];
    NTSTATUS status = STATUS_PENDING;

    fds[0] = (struct pollfd){ .fd = w->wake_fd, .events = POLLIN };
    for (UINT i = 0; i < count; i++)
        fds[1 + i] = (struct pollfd){ .fd = (int)(intptr_t)events[i], .events = POLLIN };
    while (status == STATUS_PENDING) {
        if (poll(fds, 1 + count, -1) < 0) {
            if (errno == EINTR)
                continue;
            return STATUS_UNSUCCESSFUL;
        }
        /* the vblank is object 0: it wins a tie, as the lowest index does
         * in a Windows wait for any of several objects */
        if (fds[0].revents)
            return STATUS_PENDING;
        status = signalled_event(fds + 1, count);
    }
    return status;
}

NTSTATUS dxgk_wait_for_vblank_or_events(D3DKMT_HANDLE h, D3DKMT_HANDLE hdevice, UINT source,
                                        const HANDLE *events, UINT count)
{
    struct dxgk_vblank_waiter w = { .source = source, .adapter = h, .device = hdevice, .wake_fd = -1 };
    struct dxgk_adapter *adapter;
    NTSTATUS status, ended;

    if (!count || !dxgk_events_are_fds())
        return dxgk_wait_for_vblank(h, hdevice, source);
    if ((status = dxgk_vblank_lookup(h, hdevice, source, &adapter)))
        return status;
    if ((w.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        dxgk_adapter_put(adapter);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if (!(status = dxgk_vblank_join(adapter))) {
        enlist(adapter, &w);
        ended = poll_events(&w, events, count);
        status = delist(adapter, &w, ended == STATUS_PENDING ? STATUS_UNSUCCESSFUL : ended);
        dxgk_vblank_leave(adapter);
    }
    close(w.wake_fd);
    dxgk_adapter_put(adapter);
    return status;
}
