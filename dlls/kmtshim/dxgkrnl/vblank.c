/*
 * Vertical blanks: WaitForVerticalBlankEvent(2), GetScanLine,
 * PollDisplayChildren and the current display mode, over the display-timing
 * DDIs (d3dkmddi.h, "display timing").
 *
 * The vsync path: a waiter joins the adapter's vblank state; the first one
 * enables DXGK_INTERRUPT_CRTC_VSYNC (DxgkDdiControlInterrupt) and the last
 * one to leave disables it, so a miniport's vsync source runs only while
 * someone waits.  The miniport raises DxgkCbNotifyInterrupt(CRTC_VSYNC)
 * with the target of each vertical blank; dxgk_vblank_interrupt() counts
 * it for the source of that target (kmtshim's paths are the identity) and
 * wakes that source's waiters.  A waiter waits for the count to pass the
 * value it saw after joining: the next vertical blank, never one that
 * began before the call.
 *
 * Statuses: a bad hAdapter, or an hDevice that is not a device of that
 * adapter, is STATUS_INVALID_PARAMETER as everywhere in the thunks.  A
 * source id at or past the adapter's sources, a render-only adapter's
 * included, is STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE: the status
 * Microsoft documents for a source id that names no source
 * (SetVidPnSourceOwner), which CheckVidPnExclusiveOwnership also returns
 * here (vidpn.c).  No Windows run confirmed it for these four calls.
 *
 * A wait never outlasts DXGK_VBLANK_MAX_WAIT_MS: if no vsync comes by then
 * (an output that went dark, a miniport that stopped its timer) it returns
 * as if one had, so a program's frame loop keeps running instead of
 * hanging, as Windows keeps presenting with the monitor off.
 */
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"
#include "base/kmt_time.h"

#define DXGK_VBLANK_MAX_WAIT_MS 100

void dxgk_vblank_init(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_mutex_init(&vb->ctl_lock, NULL);
    pthread_mutex_init(&vb->lock, NULL);
    kmt_cond_init_monotonic(&vb->cond);
}

void dxgk_vblank_fini(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_cond_destroy(&vb->cond);
    pthread_mutex_destroy(&vb->lock);
    pthread_mutex_destroy(&vb->ctl_lock);
}

void dxgk_vblank_interrupt(struct dxgk_adapter *adapter, D3DDDI_VIDEO_PRESENT_TARGET_ID target)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    if (target >= dxgk_source_count(adapter))
        return;
    pthread_mutex_lock(&vb->lock);
    vb->count[target]++;
    pthread_cond_broadcast(&vb->cond);
    pthread_mutex_unlock(&vb->lock);
}

/* The adapter of hAdapter (referenced) with `source` one of its sources,
 * and hDevice, when given, a device of that adapter. */
static NTSTATUS lookup(D3DKMT_HANDLE h, D3DKMT_HANDLE hdevice, UINT source, struct dxgk_adapter **out)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(h);

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    if (hdevice) {
        struct dxgk_device *device = dxgk_device_acquire(hdevice);
        bool mine = device && device->adapter == adapter;

        if (device)
            dxgk_device_release(device);
        if (!mine) {
            dxgk_adapter_put(adapter);
            return STATUS_INVALID_PARAMETER;
        }
    }
    if (source >= dxgk_source_count(adapter)) {
        dxgk_adapter_put(adapter);
        return STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE;
    }
    *out = adapter;
    return STATUS_SUCCESS;
}

/* The first waiter turns the vsync interrupt on.  Returns the count the
 * next vertical blank of `source` will reach. */
static NTSTATUS join(struct dxgk_adapter *adapter, UINT source, UINT64 *target)
{
    struct dxgk_vblank *vb = &adapter->vblank;
    NTSTATUS status = STATUS_SUCCESS;

    pthread_mutex_lock(&vb->ctl_lock);
    if (!vb->waiters)
        status = dxgk_ddi_control_interrupt(adapter, DXGK_INTERRUPT_CRTC_VSYNC, true);
    if (!status) {
        vb->waiters++;
        pthread_mutex_lock(&vb->lock);
        *target = vb->count[source] + 1;
        pthread_mutex_unlock(&vb->lock);
    }
    pthread_mutex_unlock(&vb->ctl_lock);
    return status;
}

/* The last waiter turns it off again. */
static void leave(struct dxgk_adapter *adapter)
{
    struct dxgk_vblank *vb = &adapter->vblank;

    pthread_mutex_lock(&vb->ctl_lock);
    if (!--vb->waiters)
        dxgk_ddi_control_interrupt(adapter, DXGK_INTERRUPT_CRTC_VSYNC, false);
    pthread_mutex_unlock(&vb->ctl_lock);
}

NTSTATUS dxgk_wait_for_vblank(D3DKMT_HANDLE h, D3DKMT_HANDLE hdevice, UINT source)
{
    struct dxgk_adapter *adapter;
    struct dxgk_vblank *vb;
    struct timespec deadline;
    NTSTATUS status;
    UINT64 target;

    if ((status = lookup(h, hdevice, source, &adapter)))
        return status;
    vb = &adapter->vblank;
    if (!(status = join(adapter, source, &target))) {
        deadline = kmt_deadline_after(DXGK_VBLANK_MAX_WAIT_MS);
        pthread_mutex_lock(&vb->lock);
        while (vb->count[source] < target)
            if (pthread_cond_timedwait(&vb->cond, &vb->lock, &deadline) == ETIMEDOUT) {
                WARN_(dxgk, "%s: no vsync of source %u in %u ms\n", adapter->miniport->name, source,
                      DXGK_VBLANK_MAX_WAIT_MS);
                break;
            }
        pthread_mutex_unlock(&vb->lock);
        leave(adapter);
    }
    dxgk_adapter_put(adapter);
    return status;
}

NTSTATUS dxgk_get_scan_line(D3DKMT_HANDLE h, UINT source, BOOLEAN *in_vblank, UINT *line)
{
    DXGKARG_GETSCANLINE args = { .VidPnTargetId = source };
    struct dxgk_adapter *adapter;
    NTSTATUS status;

    if ((status = lookup(h, 0, source, &adapter)))
        return status;
    if (!(status = dxgk_ddi_get_scan_line(adapter, &args))) {
        *in_vblank = args.InVerticalBlank ? TRUE : FALSE;
        *line = args.ScanLine;
    }
    dxgk_adapter_put(adapter);
    return status;
}

/* ---- monitor children ------------------------------------------------------------ */

static UINT child_count(const struct dxgk_adapter *adapter)
{
    return adapter->num_children < DXGK_MAX_VIDPN_SOURCES ? adapter->num_children : DXGK_MAX_VIDPN_SOURCES;
}

/* What the core keeps of a child's connection, from a poll or from the
 * miniport's own report (DxgkCbIndicateChildStatus). */
NTSTATUS dxgk_child_connection(struct dxgk_adapter *adapter, ULONG child, bool connected)
{
    if (child >= child_count(adapter))
        return STATUS_INVALID_PARAMETER;
    if (atomic_exchange(&adapter->child_connected[child], connected) != connected)
        TRACE_(dxgk, "%s: child %u %s\n", adapter->miniport->name, (unsigned)child,
               connected ? "connected" : "disconnected");
    return STATUS_SUCCESS;
}

bool dxgk_child_connected(struct dxgk_adapter *adapter, ULONG child)
{
    return child < child_count(adapter) && atomic_load(&adapter->child_connected[child]);
}

static NTSTATUS poll_adapter(struct dxgk_adapter *adapter, bool non_destructive)
{
    NTSTATUS status = STATUS_SUCCESS;

    for (UINT i = 0; i < child_count(adapter) && !status; i++) {
        DXGK_CHILD_STATUS child = { .Type = StatusConnection, .ChildUid = i };

        if (!(status = dxgk_ddi_query_child_status(adapter, &child, non_destructive)))
            dxgk_child_connection(adapter, i, child.HotPlug.Connected);
    }
    return status;
}

NTSTATUS dxgk_poll_display_children(D3DKMT_HANDLE h, bool non_destructive, bool all_adapters)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(h), *list[DXGK_MAX_LISTED];
    NTSTATUS status;
    ULONG n;

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    status = poll_adapter(adapter, non_destructive);
    if (!status && all_adapters) {
        /* polled outside the list's lock: the miniports' connector probes
         * must not hold up every open and enumeration */
        n = dxgk_adapters_snapshot(list, true);
        for (ULONG i = 0; i < n && !status; i++)
            if (list[i] != adapter)
                status = poll_adapter(list[i], non_destructive);
        dxgk_adapters_release(list, n);
    }
    dxgk_adapter_put(adapter);
    return status;
}

/* ---- the current display mode (KMTQAITYPE_CURRENTDISPLAYMODE) ------------------ */

NTSTATUS dxgk_current_display_mode(struct dxgk_adapter *adapter, D3DKMT_CURRENTDISPLAYMODE *out)
{
    UINT source = out->VidPnSourceId;
    KMT_CURRENT_DISPLAY_MODE mode;
    D3DKMT_DISPLAYMODE *dm = &out->DisplayMode;
    NTSTATUS status;

    if (source >= dxgk_source_count(adapter))
        return STATUS_INVALID_PARAMETER;
    memset(&mode, 0, sizeof(mode));
    status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_CURRENTDISPLAYMODE, &source, sizeof(source),
                                         &mode, sizeof(mode));
    if (status)
        return status;
    if (!mode.RefreshRateDenominator)
        return STATUS_UNSUCCESSFUL;      /* a miniport bug: no rate */
    memset(dm, 0, sizeof(*dm));
    dm->Width = mode.Width;
    dm->Height = mode.Height;
    dm->Format = D3DDDIFMT_X8R8G8B8;
    dm->RefreshRate.Numerator = mode.RefreshRateNumerator;
    dm->RefreshRate.Denominator = mode.RefreshRateDenominator;
    /* rounded: 59.94 Hz is "60" to programs, as Windows' display settings say */
    dm->IntegerRefreshRate = (mode.RefreshRateNumerator + mode.RefreshRateDenominator / 2) /
                             mode.RefreshRateDenominator;
    dm->ScanLineOrdering = mode.Interlaced ? D3DDDI_VSSLO_INTERLACED_UPPERFIELDFIRST : D3DDDI_VSSLO_PROGRESSIVE;
    dm->DisplayOrientation = D3DDDI_ROTATION_IDENTITY;
    return STATUS_SUCCESS;
}
