/*
 * VidPn source ownership: SetVidPnSourceOwner's state machine, what
 * CheckVidPnExclusiveOwnership, CheckExclusiveOwnership and CheckOcclusion
 * read from it, and its release when an owning device goes.
 *
 * Each adapter keeps one owner per source (adapter->vidpn, under
 * adapter->vidpn_lock): a device handle and EXCLUSIVE or EMULATED.  The
 * statuses are Windows' (shared/notes/windows-semantics.md, "VidPn source
 * ownership and occlusion"):
 *   UNOWNED                releases the source if this device owns it
 *   SHARED                 STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE, or
 *                          STATUS_INVALID_PARAMETER while this device holds
 *                          it EXCLUSIVE
 *   EXCLUSIVE / EMULATED   taken, or kept when repeated; the other of the
 *                          two on the same device: STATUS_INVALID_PARAMETER;
 *                          another device owns it: ..._VIDPN_SOURCE_IN_USE
 *   EXCLUSIVEGDI, past EMULATED   STATUS_INVALID_PARAMETER
 *   count 0                releases every source the device owns
 * A source id at or past the adapter's sources (DxgkDdiStartDevice's count)
 * is STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE, which Microsoft
 * documents for SetVidPnSourceOwner.  A call is all or nothing: its entries
 * are applied in order to a copy, which replaces the state only when every
 * entry succeeded.
 *
 * Ownership lives in this process: kmtshim has no state shared between
 * processes, so another process's owner is not seen.
 */
#include <string.h>

#include "dxgkrnl.h"

/* One entry of a SetVidPnSourceOwner call, applied to `o`. */
static NTSTATUS apply(struct dxgk_vidpn_owner *o, D3DKMT_HANDLE device,
                      D3DKMT_VIDPNSOURCEOWNER_TYPE type)
{
    bool mine = o->device == device;

    switch (type) {
    case D3DKMT_VIDPNSOURCEOWNER_UNOWNED:
        if (mine)
            memset(o, 0, sizeof(*o));
        return STATUS_SUCCESS;
    case D3DKMT_VIDPNSOURCEOWNER_SHARED:
        /* Windows never grants SHARED to a device here */
        if (mine && o->type == D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE)
            return STATUS_INVALID_PARAMETER;
        return STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE;
    case D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE:
    case D3DKMT_VIDPNSOURCEOWNER_EMULATED:
        if (o->device && !mine)
            return STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE;
        if (mine && o->type != type)
            return STATUS_INVALID_PARAMETER;
        o->device = device;
        o->type = type;
        return STATUS_SUCCESS;
    default:                             /* EXCLUSIVEGDI (legacy devices), unknown */
        return STATUS_INVALID_PARAMETER;
    }
}

NTSTATUS dxgk_set_vidpn_owner(D3DKMT_HANDLE h, const D3DKMT_VIDPNSOURCEOWNER_TYPE *types,
                              const D3DDDI_VIDEO_PRESENT_SOURCE_ID *sources, UINT count)
{
    struct dxgk_vidpn_owner next[DXGK_MAX_VIDPN_SOURCES];
    struct dxgk_device *device = dxgk_device_acquire(h);
    struct dxgk_adapter *adapter;
    NTSTATUS status = STATUS_SUCCESS;
    UINT n, i;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    adapter = device->adapter;
    n = dxgk_source_count(adapter);

    pthread_mutex_lock(&adapter->vidpn_lock);
    memcpy(next, adapter->vidpn, sizeof(next));
    if (!count) {
        for (i = 0; i < n; i++)
            if (next[i].device == h)
                memset(&next[i], 0, sizeof(next[i]));
    }
    for (i = 0; i < count && !status; i++) {
        if (sources[i] >= n) {
            /* the type's own check comes first: a bad type is a bad type */
            status = (UINT)types[i] > D3DKMT_VIDPNSOURCEOWNER_EMULATED ||
                     types[i] == D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVEGDI
                ? STATUS_INVALID_PARAMETER : STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE;
            break;
        }
        status = apply(&next[sources[i]], h, types[i]);
    }
    if (!status) {
        memcpy(adapter->vidpn, next, sizeof(next));
        device->owned_source |= count != 0;
    }
    pthread_mutex_unlock(&adapter->vidpn_lock);

    dxgk_device_release(device);
    return status;
}

NTSTATUS dxgk_check_vidpn_exclusive(D3DKMT_HANDLE h, D3DDDI_VIDEO_PRESENT_SOURCE_ID source)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(h);
    NTSTATUS status = STATUS_SUCCESS;

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    if (source >= dxgk_source_count(adapter)) {
        status = STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE;
    } else {
        pthread_mutex_lock(&adapter->vidpn_lock);
        /* an EMULATED owner leaves the desktop visible */
        if (adapter->vidpn[source].type == D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE)
            status = STATUS_GRAPHICS_PRESENT_OCCLUDED;
        pthread_mutex_unlock(&adapter->vidpn_lock);
    }
    dxgk_adapter_put(adapter);
    return status;
}

static bool adapter_has_exclusive(struct dxgk_adapter *adapter)
{
    bool found = false;
    UINT i;

    pthread_mutex_lock(&adapter->vidpn_lock);
    for (i = 0; i < DXGK_MAX_VIDPN_SOURCES && !found; i++)
        found = adapter->vidpn[i].type == D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE;
    pthread_mutex_unlock(&adapter->vidpn_lock);
    return found;
}

bool dxgk_vidpn_any_exclusive(void)
{
    struct dxgk_adapter *adapter;
    bool found = false;

    /* dxgk_process.lock ranks above every adapter's vidpn_lock */
    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(adapter, &dxgk_process.adapters, struct dxgk_adapter, entry) {
        if ((found = adapter_has_exclusive(adapter)))
            break;
    }
    pthread_mutex_unlock(&dxgk_process.lock);
    return found;
}

void dxgk_vidpn_release_device(struct dxgk_device *device)
{
    struct dxgk_adapter *adapter = device->adapter;
    UINT i;

    if (!device->owned_source)          /* never owned a source: nothing to free */
        return;
    pthread_mutex_lock(&adapter->vidpn_lock);
    for (i = 0; i < DXGK_MAX_VIDPN_SOURCES; i++)
        if (adapter->vidpn[i].device == device->handle)
            memset(&adapter->vidpn[i], 0, sizeof(adapter->vidpn[i]));
    pthread_mutex_unlock(&adapter->vidpn_lock);
}
