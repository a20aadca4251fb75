/*
 * Display timing besides the vblank waits (vblank_wait.c): GetScanLine,
 * PollDisplayChildren and the current display mode, over the
 * display-timing DDIs (d3dkmddi.h, "display timing").
 *
 * Statuses: a bad hAdapter, or an hDevice that is not a device of that
 * adapter, is STATUS_INVALID_PARAMETER as everywhere in the thunks.  A
 * source id at or past the adapter's sources, a render-only adapter's
 * included, is STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE: the status
 * Microsoft documents for a source id that names no source
 * (SetVidPnSourceOwner), which CheckVidPnExclusiveOwnership also returns
 * here (vidpn.c).  No Windows run confirmed it for the vblank calls.
 */
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"

NTSTATUS dxgk_vblank_lookup(D3DKMT_HANDLE h, D3DKMT_HANDLE hdevice, UINT source, struct dxgk_adapter **out)
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

NTSTATUS dxgk_get_scan_line(D3DKMT_HANDLE h, UINT source, BOOLEAN *in_vblank, UINT *line)
{
    DXGKARG_GETSCANLINE args = { .VidPnTargetId = source };
    struct dxgk_adapter *adapter;
    NTSTATUS status;

    if ((status = dxgk_vblank_lookup(h, 0, source, &adapter)))
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
 * miniport's own report (DxgkCbIndicateChildStatus).  An unplugged child
 * ends the vblank waits on its source (vblank_wait.c). */
NTSTATUS dxgk_child_connection(struct dxgk_adapter *adapter, ULONG child, bool connected)
{
    /* 0 children: the miniport's start has not returned yet, and a report
     * from its thread is recorded for the children the start will name */
    ULONG children = __atomic_load_n(&adapter->num_children, __ATOMIC_ACQUIRE);

    if (child >= DXGK_MAX_VIDPN_SOURCES || (children && child >= children))
        return STATUS_INVALID_PARAMETER;
    if (dxgk_vblank_connection(adapter, child, connected))
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
