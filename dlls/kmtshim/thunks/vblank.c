/*
 * Display timing thunks: WaitForVerticalBlankEvent(2), GetScanLine,
 * PollDisplayChildren (dxgkrnl/vblank.c has the statuses).
 */
#include "thunk.h"
#include "dxgkrnl/sync.h"

NTSTATUS APIENTRY D3DKMTWaitForVerticalBlankEvent(const D3DKMT_WAITFORVERTICALBLANKEVENT *desc)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, hDevice %#x, VidPnSourceId %u\n", k.hAdapter, k.hDevice, k.VidPnSourceId);
    THUNK_RETURN(dxgk_wait_for_vblank(k.hAdapter, k.hDevice, k.VidPnSourceId));
}

/* The objects are events: the wait ends at the vblank (STATUS_WAIT_0) or
 * when event i is signalled (STATUS_WAIT_0 + 1 + i), whichever comes
 * first (dxgkrnl/vblank_wait.c). */
NTSTATUS APIENTRY D3DKMTWaitForVerticalBlankEvent2(const D3DKMT_WAITFORVERTICALBLANKEVENT2 *desc)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT2 k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, hDevice %#x, VidPnSourceId %u, NumObjects %u\n", k.hAdapter, k.hDevice,
           k.VidPnSourceId, k.NumObjects);
    if (k.NumObjects > D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    for (UINT i = 0; i < k.NumObjects; i++)
        if ((status = dxgk_event_validate(k.ObjectHandleArray[i])))
            THUNK_RETURN(status);
    THUNK_RETURN(dxgk_wait_for_vblank_or_events(k.hAdapter, k.hDevice, k.VidPnSourceId, k.ObjectHandleArray,
                                                k.NumObjects));
}

NTSTATUS APIENTRY D3DKMTGetScanLine(D3DKMT_GETSCANLINE *desc)
{
    D3DKMT_GETSCANLINE k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, VidPnSourceId %u\n", k.hAdapter, k.VidPnSourceId);
    status = dxgk_get_scan_line(k.hAdapter, k.VidPnSourceId, &k.InVerticalBlank, &k.ScanLine);
    if (!status) {
        desc->InVerticalBlank = k.InVerticalBlank;
        desc->ScanLine = k.ScanLine;
        TRACE_(d3dkmt, "line %u%s\n", k.ScanLine, k.InVerticalBlank ? ", in vblank" : "");
    }
    THUNK_RETURN(status);
}

/* SynchronousPolling, DisableModeReset and PollInterruptible change
 * nothing here: every poll is synchronous and no mode is ever reset. */
NTSTATUS APIENTRY D3DKMTPollDisplayChildren(const D3DKMT_POLLDISPLAYCHILDREN *desc)
{
    D3DKMT_POLLDISPLAYCHILDREN k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, NonDestructiveOnly %u, SynchronousPolling %u, PollAllAdapters %u\n",
           k.hAdapter, k.NonDestructiveOnly, k.SynchronousPolling, k.PollAllAdapters);
    if (k.Reserved)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(dxgk_poll_display_children(k.hAdapter, k.NonDestructiveOnly, k.PollAllAdapters));
}
