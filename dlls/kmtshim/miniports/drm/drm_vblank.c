/*
 * DRM miniport: vertical blanks and the scan line.
 *
 * While CRTC_VSYNC is enabled (DxgkDdiControlInterrupt) one thread per
 * adapter keeps a CRTC_QUEUE_SEQUENCE event (relative, the next vblank)
 * pending on each source's CRTC, sleeps in poll() on the card node, and
 * raises DXGK_INTERRUPT_CRTC_VSYNC with the source's target id for each
 * event.  Where the kernel refuses the event (a driver without vblank
 * interrupts, virtio_gpu: EOPNOTSUPP; a CRTC that is off: EINVAL) the
 * source gets a timer instead: vblanks at absolute CLOCK_MONOTONIC
 * deadlines epoch + n * frame, the frame from the mode's clock, htotal and
 * vtotal, so a program waiting for vblank is paced at the mode's rate.
 * Disabling lets the thread exit (an interrupt already being raised still
 * completes); enabling again starts a new one.  Events the kernel had
 * queued before are read and dropped, never raised.  Interrupts are
 * raised with no lock held.
 *
 * GetScanLine: the time since the CRTC's last vblank (CRTC_GET_SEQUENCE's
 * timestamp; the timer's grid for a timer source) times the lines per
 * second (vtotal per frame); lines from the mode's height on are in
 * vertical blank.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <xf86drm.h>

#include "base/fd_registry.h"
#include "base/kmt_thread.h"
#include "drm_winsys.h"
#include "drm_fault.h"
#include "drm_trace.h"

/* The adapter was stopped from inside one of this thread's interrupts. */
static __thread bool stopped_under_me;

/* What one wake of the thread saw: the sources whose vblank came. */
struct vblank_batch {
    struct kdrm_adapter *a;
    UINT fired;                          /* bit per source */
};

static UINT64 grid_next(const struct kdrm_kms *k, const struct kdrm_source *s, UINT64 now)
{
    return k->epoch_ns + ((now - k->epoch_ns) / s->mode.frame_ns + 1) * s->mode.frame_ns;
}

static void use_timer(struct kdrm_adapter *a, UINT id, int err)
{
    struct kdrm_source *s = &a->kms.sources[id];

    kdrm_trace(a, KMT_TRACE_TRACE, __func__, "CRTC %u: no vblank events (%s): a %u/%u Hz timer\n", s->crtc_id,
               strerror(-err), s->mode.refresh_num, s->mode.refresh_den);
    atomic_store(&s->timer, true);
    /* A CRTC that is off (EINVAL) may light up again: the next enable asks
     * the kernel again.  A driver without vblank events never has them. */
    s->no_events = err == -EOPNOTSUPP || err == -ENOSYS || err == -ENOTTY;
    s->next_ns = grid_next(&a->kms, s, kdrm_now_ns());
}

static void queue(struct kdrm_adapter *a, UINT id)
{
    struct kdrm_source *s = &a->kms.sources[id];
    uint64_t queued;
    int err = kdrm_fault_check("CRTC_QUEUE_SEQUENCE");

    if (!err && drmCrtcQueueSequence(a->kms.fd, s->crtc_id, DRM_CRTC_SEQUENCE_RELATIVE, 1, &queued, id))
        err = -errno;
    if (err)
        use_timer(a, id, err);
    else
        s->queued = true;
}

/* drmHandleEvent's handlers take no context of their own: the batch the
 * thread is reading into. */
static __thread struct vblank_batch *reading;

static void on_sequence(int fd, uint64_t sequence, uint64_t ns, uint64_t user_data)
{
    struct vblank_batch *b = reading;
    struct kdrm_kms *k = &b->a->kms;

    (void)fd;
    (void)sequence;
    if (user_data >= k->count)
        return;
    k->sources[user_data].queued = false;
    if (ns >= k->enabled_ns)
        b->fired |= 1u << user_data;
}

/* Sleeps until an event, a timer deadline or a wake; fills b->fired. */
static void wait_once(struct kdrm_adapter *a, struct vblank_batch *b)
{
    struct kdrm_kms *k = &a->kms;
    struct pollfd p[2] = { { .fd = k->fd, .events = POLLIN }, { .fd = k->wake_fd, .events = POLLIN } };
    drmEventContext ev = { .version = 4, .sequence_handler = on_sequence };
    UINT64 now = kdrm_now_ns(), deadline = UINT64_MAX, wake;
    struct timespec ts, *tsp = NULL;
    bool events = false;

    for (UINT i = 0; i < k->count; i++) {
        if (!atomic_load(&k->sources[i].timer) && !k->sources[i].queued)
            queue(a, i);
        if (atomic_load(&k->sources[i].timer) && k->sources[i].next_ns < deadline)
            deadline = k->sources[i].next_ns;
        events |= !atomic_load(&k->sources[i].timer);
    }
    if (!events)
        p[0].fd = -1;                    /* all on the timer: the card fd has nothing to say */
    if (deadline != UINT64_MAX) {
        UINT64 left = deadline > now ? deadline - now : 0;
        ts.tv_sec = (time_t)(left / 1000000000ull);
        ts.tv_nsec = (long)(left % 1000000000ull);
        tsp = &ts;
    }
    if (ppoll(p, 2, tsp, NULL) > 0) {
        /* a card fd in error (unplugged, wedged) would wake the poll at once
         * forever: its sources go to the timer until the next enable */
        if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
            for (UINT i = 0; i < k->count; i++)
                if (!atomic_load(&k->sources[i].timer))
                    use_timer(a, i, -EIO);
        if (p[1].revents & POLLIN)
            (void)!read(k->wake_fd, &wake, sizeof(wake));
        if (p[0].revents & POLLIN) {
            reading = b;
            drmHandleEvent(k->fd, &ev);
            reading = NULL;
        }
    }
    now = kdrm_now_ns();
    for (UINT i = 0; i < k->count; i++) {
        struct kdrm_source *s = &k->sources[i];

        if (atomic_load(&s->timer) && s->next_ns <= now) {
            s->next_ns = grid_next(k, s, now);   /* missed deadlines are dropped, as missed vblanks */
            b->fired |= 1u << i;
        }
    }
}

struct thread_start {
    struct kdrm_adapter *a;
    UINT generation;
};

/* The thread of this enable: no stop, no disable, no newer enable since. */
static bool current(struct kdrm_kms *k, UINT generation)
{
    return atomic_load(&k->enabled) && atomic_load(&k->generation) == generation;
}

static void *vblank_thread(void *arg)
{
    struct kdrm_adapter *a = ((struct thread_start *)arg)->a;
    UINT generation = ((struct thread_start *)arg)->generation;
    struct kdrm_kms *k = &a->kms;

    free(arg);
    while (current(k, generation)) {
        struct vblank_batch b = { a, 0 };

        wait_once(a, &b);
        for (UINT i = 0; i < k->count && b.fired; i++) {
            DXGKARGCB_NOTIFY_INTERRUPT_DATA irq = { .InterruptType = DXGK_INTERRUPT_CRTC_VSYNC };

            if (!(b.fired & (1u << i)) || !current(k, generation))
                continue;
            irq.CrtcVsync.VidPnTargetId = i;
            kdrm_raise(a, &irq);
            if (stopped_under_me)
                return NULL;             /* the adapter is gone */
        }
    }
    return NULL;
}

static void wake(struct kdrm_kms *k)
{
    UINT64 one = 1;

    if (k->wake_fd >= 0)
        (void)!write(k->wake_fd, &one, sizeof(one));
}

/* Waits for the thread to leave.  From one of its own interrupts it cannot
 * be waited for: it is let go and leaves when the interrupt returns; true
 * then. */
static bool join_thread(struct kdrm_kms *k)
{
    pthread_t t;
    bool join;

    pthread_mutex_lock(&k->lock);
    join = k->joinable;
    k->joinable = false;
    t = k->thread;
    pthread_mutex_unlock(&k->lock);
    if (join && pthread_equal(t, pthread_self())) {
        pthread_detach(t);
        return true;
    }
    if (join)
        pthread_join(t, NULL);
    return false;
}

static NTSTATUS start_thread(struct kdrm_adapter *a)
{
    struct kdrm_kms *k = &a->kms;
    struct thread_start *arg = malloc(sizeof(*arg));

    if (k->wake_fd < 0 && (k->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0)
        kmt_fd_track(k->wake_fd);
    if (!arg || k->wake_fd < 0) {
        free(arg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    for (UINT i = 0; i < k->count; i++)
        if (!k->sources[i].no_events)
            atomic_store(&k->sources[i].timer, false);   /* ask the kernel again */
    arg->a = a;
    arg->generation = atomic_fetch_add(&k->generation, 1) + 1;
    k->enabled_ns = kdrm_now_ns();
    atomic_store(&k->enabled, true);
    if (kmt_thread_create(&k->thread, "kmt-drm-vblank", vblank_thread, arg)) {
        atomic_store(&k->enabled, false);
        free(arg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    k->joinable = true;
    return STATUS_SUCCESS;
}

/* The core's calls alternate and never overlap (d3dkmddi.h). */
NTSTATUS APIENTRY kdrm_control_interrupt(HANDLE hAdapter, DXGK_INTERRUPT_TYPE type, BOOLEAN enable)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_kms *k = &a->kms;
    NTSTATUS status = STATUS_SUCCESS;

    if (type != DXGK_INTERRUPT_CRTC_VSYNC)
        return STATUS_NOT_IMPLEMENTED;
    if (!k->count)
        return enable ? STATUS_NOT_SUPPORTED : STATUS_SUCCESS;   /* no display: nothing to pace */
    if (!enable || atomic_load(&k->enabled)) {
        if (!enable) {
            atomic_store(&k->enabled, false);
            pthread_mutex_lock(&k->lock);
            wake(k);
            pthread_mutex_unlock(&k->lock);
            join_thread(k);               /* none raised once this returns */
        }
        return STATUS_SUCCESS;
    }
    join_thread(k);                      /* one let go from its own interrupt */
    pthread_mutex_lock(&k->lock);
    if (!k->stopping)
        status = start_thread(a);
    pthread_mutex_unlock(&k->lock);
    if (!status)
        kdrm_hotplug_start(a);           /* someone waits: unplugs must end the waits */
    return status;
}

void kdrm_vblank_stop(struct kdrm_adapter *a)
{
    struct kdrm_kms *k = &a->kms;

    pthread_mutex_lock(&k->lock);
    k->stopping = true;
    atomic_store(&k->enabled, false);
    wake(k);
    pthread_mutex_unlock(&k->lock);
    if (join_thread(k))
        stopped_under_me = true;
    kmt_fd_close(k->wake_fd);
    k->wake_fd = -1;
    pthread_mutex_lock(&k->lock);
    k->stopping = false;
    pthread_mutex_unlock(&k->lock);
}

/* The CLOCK_MONOTONIC time of the source's last vblank at `now`. */
static UINT64 last_vblank(struct kdrm_adapter *a, struct kdrm_source *s, UINT64 now)
{
    uint64_t seq, ns;

    if (!atomic_load(&s->timer) && !kdrm_fault_check("CRTC_GET_SEQUENCE") &&
        !drmCrtcGetSequence(a->kms.fd, s->crtc_id, &seq, &ns) && ns && ns <= now)
        return ns;
    return a->kms.epoch_ns + (now - a->kms.epoch_ns) / s->mode.frame_ns * s->mode.frame_ns;
}

NTSTATUS APIENTRY kdrm_get_scan_line(HANDLE hAdapter, DXGKARG_GETSCANLINE *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_source *s;
    UINT64 now = kdrm_now_ns(), elapsed;

    if (!args)
        return STATUS_INVALID_PARAMETER;
    if (!(s = kdrm_kms_source(a, args->VidPnTargetId)))
        return STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_TARGET;
    elapsed = (now - last_vblank(a, s, now)) % s->mode.frame_ns;
    args->ScanLine = (UINT)(elapsed * s->mode.vtotal / s->mode.frame_ns);
    args->InVerticalBlank = args->ScanLine >= s->mode.height;
    return STATUS_SUCCESS;
}
