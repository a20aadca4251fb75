/*
 * The software miniport's virtual outputs: each VidPn source scans out a
 * fixed 1920x1080 60 Hz mode with CEA-861 timing (htotal 2200, vtotal
 * 1125, 148.5 MHz pixel clock: exactly 60.000 Hz), from one clock.
 *
 * The clock is CLOCK_MONOTONIC: vertical blank k begins at k/60 s, an
 * absolute boundary, so every source of every soft adapter blanks in
 * phase and no deadline drifts.  A vertical blank starts at line 1080, as
 * a CRTC's vsync interrupt fires at the start of the blank: at a boundary
 * the scan line is 1080, it runs to 1124, wraps to 0 (the first active
 * line) and reaches 1079 just before the next boundary.
 *
 * The vsync "interrupt" is a thread that runs only while the core has
 * DXGK_INTERRUPT_CRTC_VSYNC enabled: it sleeps to each boundary and raises
 * DxgkCbNotifyInterrupt(CRTC_VSYNC) once per source, holding no lock.
 * Disabling wakes it and joins it, so nothing is raised afterwards.
 *
 * Children: source N's monitor is child N, always connected.
 */
#include <stdlib.h>
#include <string.h>

#include "soft.h"
#include "base/kmt_thread.h"
#include "base/kmt_time.h"

#define SOFT_HACTIVE 1920u
#define SOFT_VACTIVE 1080u
#define SOFT_HTOTAL 2200u
#define SOFT_VTOTAL 1125u
#define SOFT_PIXEL_RATE 148500000ull
/* 2200 * 1125 / 148.5 MHz = 1/60 s; in thirds of a nanosecond a frame is
 * an integer, 50,000,000, so boundaries are exact. */
#define SOFT_FRAME_NS3 50000000ull

/* The sources: 1 unless KMTSHIM_SOFT_SOURCES says 0 (render only) to 16. */
static ULONG source_count(void)
{
    const char *env = getenv("KMTSHIM_SOFT_SOURCES");
    char *end;
    unsigned long n;

    if (!env || !*env)
        return 1;
    n = strtoul(env, &end, 10);
    return *end || n > 16 ? 1 : (ULONG)n;
}

void soft_display_init(struct soft_adapter *a)
{
    struct soft_display *d = &a->display;

    memset(d, 0, sizeof(*d));
    d->sources = source_count();
    pthread_mutex_init(&d->lock, NULL);
    kmt_cond_init_monotonic(&d->cond);
}

void soft_display_fini(struct soft_adapter *a)
{
    soft_display_stop(a);
    pthread_cond_destroy(&a->display.cond);
    pthread_mutex_destroy(&a->display.lock);
}

/* The index of the first boundary after `ns`, and the time of boundary k. */
static UINT64 next_boundary(UINT64 ns)
{
    return ns * 3 / SOFT_FRAME_NS3 + 1;
}

static UINT64 boundary_ns(UINT64 k)
{
    return k * SOFT_FRAME_NS3 / 3;
}

static void *vsync_thread(void *arg)
{
    struct soft_adapter *a = arg;
    struct soft_display *d = &a->display;
    UINT64 k = next_boundary(kmt_now_ns());

    pthread_mutex_lock(&d->lock);
    while (d->enabled) {
        struct timespec deadline = kmt_timespec_of(boundary_ns(k));

        if (pthread_cond_timedwait(&d->cond, &d->lock, &deadline) != ETIMEDOUT)
            continue;                    /* woken: disabled, or spurious */
        pthread_mutex_unlock(&d->lock);
        for (ULONG i = 0; i < d->sources; i++) {
            DXGKARGCB_NOTIFY_INTERRUPT_DATA data = { .InterruptType = DXGK_INTERRUPT_CRTC_VSYNC };

            data.CrtcVsync.VidPnTargetId = i;
            a->dxgkrnl.DxgkCbNotifyInterrupt(a->dxgkrnl.DeviceHandle, &data);
        }
        pthread_mutex_lock(&d->lock);
        /* a late wake-up skips the boundaries it missed, as a CRTC does */
        k = next_boundary(kmt_now_ns()) > k + 1 ? next_boundary(kmt_now_ns()) : k + 1;
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

void soft_display_stop(struct soft_adapter *a)
{
    struct soft_display *d = &a->display;
    pthread_t thread;
    bool running;

    pthread_mutex_lock(&d->lock);
    d->enabled = false;
    running = d->running;
    d->running = false;
    thread = d->thread;                  /* read with `running`: an enable after the unlock starts another */
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
    if (running)
        pthread_join(thread, NULL);
}

NTSTATUS APIENTRY soft_control_interrupt(HANDLE hAdapter, DXGK_INTERRUPT_TYPE type, BOOLEAN enable)
{
    struct soft_adapter *a = hAdapter;
    struct soft_display *d = &a->display;
    NTSTATUS status = STATUS_SUCCESS;
    int err;

    if (type != DXGK_INTERRUPT_CRTC_VSYNC)
        return STATUS_NOT_IMPLEMENTED;
    if (!enable) {
        soft_display_stop(a);
        return STATUS_SUCCESS;
    }
    pthread_mutex_lock(&d->lock);
    if (!d->running && d->sources && a->dxgkrnl.DxgkCbNotifyInterrupt) {
        d->enabled = true;
        if ((err = kmt_thread_create(&d->thread, "kmt-soft-vsync", vsync_thread, a))) {
            d->enabled = false;
            status = STATUS_INSUFFICIENT_RESOURCES;
        } else {
            d->running = true;
        }
    }
    pthread_mutex_unlock(&d->lock);
    soft_trace(a, KMT_TRACE_TRACE, __func__, "vsync %s -> %#x\n", enable ? "on" : "off", (unsigned)status);
    return status;
}

NTSTATUS APIENTRY soft_get_scan_line(HANDLE hAdapter, DXGKARG_GETSCANLINE *args)
{
    struct soft_adapter *a = hAdapter;
    UINT64 into_frame;                   /* thirds of a ns since the last boundary */
    UINT line;

    if (args->VidPnTargetId >= a->display.sources)
        return STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_TARGET;
    into_frame = kmt_now_ns() * 3 % SOFT_FRAME_NS3;
    line = (UINT)(into_frame * SOFT_VTOTAL / SOFT_FRAME_NS3);
    args->ScanLine = (line + SOFT_VACTIVE) % SOFT_VTOTAL;
    args->InVerticalBlank = args->ScanLine >= SOFT_VACTIVE;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_query_child_status(PVOID ctx, DXGK_CHILD_STATUS *child, BOOLEAN non_destructive)
{
    struct soft_adapter *a = ctx;

    (void)non_destructive;               /* a virtual monitor: nothing to disturb */
    if (child->Type != StatusConnection || child->ChildUid >= a->display.sources)
        return STATUS_INVALID_PARAMETER;
    child->HotPlug.Connected = TRUE;
    return STATUS_SUCCESS;
}

NTSTATUS soft_display_mode(struct soft_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    KMT_CURRENT_DISPLAY_MODE *mode = q->pOutputData;

    if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(*mode))
        return STATUS_INVALID_PARAMETER;
    if (*(const UINT *)q->pInputData >= a->display.sources)
        return STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE;
    memset(mode, 0, sizeof(*mode));
    mode->Width = SOFT_HACTIVE;
    mode->Height = SOFT_VACTIVE;
    mode->RefreshRateNumerator = 60;
    mode->RefreshRateDenominator = 1;
    mode->ScanLineTotal = SOFT_VTOTAL;
    mode->VerticalBlankStart = SOFT_VACTIVE;
    mode->HorizontalTotal = SOFT_HTOTAL;
    mode->PixelRate = SOFT_PIXEL_RATE;
    return STATUS_SUCCESS;
}
