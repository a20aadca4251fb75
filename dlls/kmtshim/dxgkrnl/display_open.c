/*
 * Display-based adapter opens: a GDI display name or a device interface
 * path picks an adapter, which is opened as OpenAdapterFromLuid opens one.
 *
 * Display names: the VidPn sources of the adapters EnumAdapters2 lists, in
 * its order, are \\.\DISPLAY1, \\.\DISPLAY2, ...  Device interface paths:
 * the adapters with the path's vendor and device ids; among several, the
 * one whose location is the path's instance, else the first.  Every name
 * that picks no adapter is STATUS_INVALID_PARAMETER (the one failure
 * Microsoft's pages for these functions give), unless the caller asks for
 * the default adapter (DXGK_PATH_DEFAULT_ADAPTER, the Wine half): then the
 * first adapter EnumAdapters2 lists.
 */
#include "dxgkrnl.h"
#include "device_path.h"
#include "base/kmt_debug.h"

/* Opens `adapter` (unless `out` is NULL) and reports its LUID. */
static NTSTATUS open_found(struct dxgk_adapter *adapter, D3DKMT_HANDLE *out, LUID *luid)
{
    NTSTATUS status = STATUS_SUCCESS;

    if (out)
        status = dxgk_open_adapter(adapter, out);
    if (!status && luid)
        *luid = adapter->luid;
    return status;
}

NTSTATUS dxgk_open_adapter_from_display_name(const WCHAR *name, size_t chars, D3DKMT_HANDLE *out,
                                             LUID *luid, UINT *source)
{
    struct dxgk_adapter *list[DXGK_MAX_LISTED], *found = NULL;
    ULONG n = dxgk_adapters_snapshot(list, false);
    UINT index;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (dxgk_parse_display_name(name, chars, &index)) {
        for (ULONG i = 0; i < n && !found; i++) {
            if (index < list[i]->num_sources) {
                found = list[i];
                *source = index;
            } else {
                index -= list[i]->num_sources;
            }
        }
    }
    if (found)
        status = open_found(found, out, luid);
    dxgk_adapters_release(list, n);
    return status;
}

static struct dxgk_adapter *match_path(struct dxgk_adapter **list, ULONG n,
                                       const struct dxgk_device_path *path)
{
    struct dxgk_adapter *first = NULL;

    for (ULONG i = 0; i < n; i++) {
        const D3DKMT_DEVICE_IDS *ids = &list[i]->desc.DeviceIds;

        if (ids->VendorID != path->ids.VendorID || ids->DeviceID != path->ids.DeviceID)
            continue;
        if (dxgk_device_path_instance_is(path, list[i]->pdo.LocationId))
            return list[i];
        if (!first)
            first = list[i];
    }
    return first;
}

NTSTATUS dxgk_open_adapter_from_device_path(const WCHAR *text, UINT flags, UINT source,
                                            D3DKMT_HANDLE *out, LUID *luid)
{
    struct dxgk_adapter *list[DXGK_MAX_LISTED], *found = NULL;
    struct dxgk_device_path path;
    ULONG n;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (!dxgk_parse_device_path(text, &path))
        return STATUS_INVALID_PARAMETER;
    n = dxgk_adapters_snapshot(list, false);
    found = match_path(list, n, &path);
    if (!found && (flags & DXGK_PATH_DEFAULT_ADAPTER) && n)
        found = list[0];
    if (found && (flags & DXGK_PATH_NEED_SOURCE) && source >= found->num_sources) {
        TRACE_(dxgk, "adapter %08x:%08x has no source %u\n", (unsigned)found->luid.HighPart,
               (unsigned)found->luid.LowPart, source);
        found = NULL;
    }
    if (found)
        status = open_found(found, (flags & DXGK_PATH_NO_HANDLE) ? NULL : out, luid);
    dxgk_adapters_release(list, n);
    return status;
}

NTSTATUS dxgk_adapter_device_path(D3DKMT_HANDLE h, WCHAR out[DXGK_DEVICE_PATH_MAX])
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(h);

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    dxgk_format_device_path(&adapter->desc.DeviceIds, adapter->pdo.LocationId, out);
    dxgk_adapter_put(adapter);
    return STATUS_SUCCESS;
}
