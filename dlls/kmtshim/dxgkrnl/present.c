/*
 * A device's present settings: SetQueuedLimit's present limit and
 * GetOverlayState.
 *
 * kmtshim schedules no presents yet, so the limit is stored and reported
 * (SET then GET gives it back, 0 restores the default of 3 that Microsoft
 * documents) and limits nothing.  No overlay can be created (CreateOverlay
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
    unsigned limit;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    switch (args->Type) {
    case D3DKMT_SET_QUEUEDLIMIT_PRESENT:
        atomic_store(&device->queued_present_limit, args->QueuedPresentLimit);
        break;
    case D3DKMT_GET_QUEUEDLIMIT_PRESENT:
        limit = atomic_load(&device->queued_present_limit);
        args->QueuedPresentLimit = limit ? limit : DEFAULT_QUEUED_PRESENT_LIMIT;
        break;
    default:
        status = STATUS_INVALID_PARAMETER;
        break;
    }
    dxgk_device_release(device);
    return status;
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
