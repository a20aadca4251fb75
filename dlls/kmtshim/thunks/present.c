/*
 * Present thunks: Present, SetQueuedLimit, GetOverlayState.
 */
#include "thunk.h"

NTSTATUS APIENTRY D3DKMTSetQueuedLimit(D3DKMT_SETQUEUEDLIMIT *desc)
{
    D3DKMT_SETQUEUEDLIMIT k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, Type %d, QueuedPresentLimit %u\n", k.hDevice, (int)k.Type,
           k.QueuedPresentLimit);
    status = dxgk_queued_limit(&k);
    if (!status && k.Type == D3DKMT_GET_QUEUEDLIMIT_PRESENT)
        desc->QueuedPresentLimit = k.QueuedPresentLimit;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTGetOverlayState(D3DKMT_GETOVERLAYSTATE *desc)
{
    D3DKMT_GETOVERLAYSTATE k;
    BOOLEAN enabled;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hOverlay %#x\n", k.hDevice, k.hOverlay);
    status = dxgk_get_overlay_state(k.hDevice, k.hOverlay, &enabled);
    if (!status)
        desc->OverlayEnabled = enabled;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTPresent(D3DKMT_PRESENT *desc)
{
    D3DKMT_PRESENT k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hContext %#x, source %u, hSource %#x, hDestination %#x, flags %#x, interval %d\n",
           k.hContext, k.VidPnSourceId, k.hSource, k.hDestination, k.Flags.Value, (int)k.FlipInterval);
    THUNK_RETURN(dxgk_present(&k));
}
