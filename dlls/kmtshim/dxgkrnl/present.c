/*
 * A device's present settings: SetQueuedLimit's present limit and
 * GetOverlayState.
 *
 * The limit is stored and reported (SET then GET gives it back, 0 restores
 * the default of 3 that Microsoft documents); it bounds a device's queued
 * flips on a source (present_flip.c).  No overlay can be created (CreateOverlay
 * is a stub), so no hOverlay is ever valid: GetOverlayState answers
 * STATUS_INVALID_PARAMETER, as Windows does for a handle that names no
 * overlay.
 */
#include "dxgkrnl.h"

#define DEFAULT_QUEUED_PRESENT_LIMIT 3u

NTSTATUS dxgk_queued_limit(D3DKMT_SETQUEUEDLIMIT *args)
{
    struct dxgk_device *device = dxgk_device_acquire(args->hDevice);
    NTSTATUS status = STATUS_SUCCESS;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    switch (args->Type) {
    case D3DKMT_SET_QUEUEDLIMIT_PRESENT:
        atomic_store(&device->queued_present_limit, args->QueuedPresentLimit);
        break;
    case D3DKMT_GET_QUEUEDLIMIT_PRESENT:
        args->QueuedPresentLimit = dxgk_device_present_limit(device);
        break;
    default:
        status = STATUS_INVALID_PARAMETER;
        break;
    }
    dxgk_device_release(device);
    return status;
}

unsigned dxgk_device_present_limit(struct dxgk_device *device)
{
    unsigned limit = atomic_load(&device->queued_present_limit);

    return limit ? limit : DEFAULT_QUEUED_PRESENT_LIMIT;
}

NTSTATUS dxgk_get_overlay_state(D3DKMT_HANDLE h, D3DKMT_HANDLE overlay, BOOLEAN *enabled)
{
    struct dxgk_device *device = dxgk_device_acquire(h);

    (void)overlay;                       /* names no overlay: none exist */
    *enabled = FALSE;
    if (!device)
        return STATUS_INVALID_PARAMETER;
    dxgk_device_release(device);
    return STATUS_INVALID_PARAMETER;
}
