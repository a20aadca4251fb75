/*
 * Miracast session thunks (kmtmiracast.h): check the caller's pointers,
 * capture descriptors and buffers, call the core (dxgkrnl/miracast.c).
 */
#include <stdlib.h>

#include "kmtshim/kmtmiracast.h"
#include "dxgkrnl/miracast.h"
#include "thunk.h"
#include "base/user_memory.h"

NTSTATUS APIENTRY KmtMiracastStartSession(KMT_MIRACAST_SESSION_DESC *desc)
{
    KMT_MIRACAST_SESSION_DESC k;
    D3DKMT_HANDLE session = 0;
    UINT target = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, StopTimeoutMs %u, hStatusEvent %p, start %p, stop %p, context %p\n",
           k.hAdapter, k.StopTimeoutMs, k.hStatusEvent, (void *)k.pfnStartSession,
           (void *)k.pfnStopSession, k.pContext);
    status = dxgk_miracast_start_session(&k, &session, &target);
    if (!status) {
        desc->hSession = session;
        desc->TargetId = target;
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY KmtMiracastStopSession(D3DKMT_HANDLE hSession,
                                         KMT_MIRACAST_SESSION_STATUS *pFinalStatus)
{
    KMT_MIRACAST_SESSION_STATUS final;
    NTSTATUS status;

    THUNK_ENTER();
    TRACE_(d3dkmt, "hSession %#x, pFinalStatus %p\n", hSession, pFinalStatus);
    if (pFinalStatus && !kmt_user_ptr_ok(pFinalStatus, sizeof(*pFinalStatus)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    memset(&final, 0, sizeof(final));
    status = dxgk_miracast_stop_session(hSession, &final);
    if (!status && pFinalStatus)
        *pFinalStatus = final;
    THUNK_RETURN(status);
}

/* A buffer argument: with size 0 the pointer is not looked at. */
static bool io_buffer_ok(const void *p, UINT size)
{
    if (!size)
        return true;
    return size <= KMT_MIRACAST_MAX_IO_CONTROL_SIZE && kmt_user_ptr_ok(p, size);
}

NTSTATUS APIENTRY KmtMiracastIoControl(D3DKMT_HANDLE hSession, const VOID *pInputBuffer,
                                       UINT InputBufferSize, VOID *pOutputBuffer,
                                       UINT OutputBufferSize, UINT *pBytesReturned)
{
    void *in = NULL, *out = NULL;
    UINT returned = 0;
    NTSTATUS status;

    THUNK_ENTER();
    TRACE_(d3dkmt, "hSession %#x, in %p/%u, out %p/%u, returned %p\n", hSession, pInputBuffer,
           InputBufferSize, pOutputBuffer, OutputBufferSize, pBytesReturned);
    if (!io_buffer_ok(pInputBuffer, InputBufferSize) ||
        !io_buffer_ok(pOutputBuffer, OutputBufferSize) ||
        (pBytesReturned && !kmt_user_ptr_ok(pBytesReturned, sizeof(*pBytesReturned))))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if ((InputBufferSize && !(in = malloc(InputBufferSize))) ||
        (OutputBufferSize && !(out = calloc(1, OutputBufferSize)))) {
        free(in);
        THUNK_RETURN(STATUS_NO_MEMORY);
    }
    if (InputBufferSize)
        memcpy(in, pInputBuffer, InputBufferSize);
    status = dxgk_miracast_io_control(hSession, in, InputBufferSize, out, OutputBufferSize,
                                      &returned);
    /* what the miniport wrote travels with a failure status too */
    if (returned && !kmt_user_copy_out(pOutputBuffer, out, returned))
        status = STATUS_ACCESS_VIOLATION;     /* a read-only output buffer */
    if (pBytesReturned)
        *pBytesReturned = returned;
    free(in);
    free(out);
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY KmtMiracastQueryStatus(D3DKMT_HANDLE hSession, KMT_MIRACAST_SESSION_STATUS *pStatus)
{
    KMT_MIRACAST_SESSION_STATUS k;
    NTSTATUS status;

    THUNK_ENTER();
    TRACE_(d3dkmt, "hSession %#x, pStatus %p\n", hSession, pStatus);
    if (!kmt_user_ptr_ok(pStatus, sizeof(*pStatus)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (!(status = dxgk_miracast_query_status(hSession, &k)))
        *pStatus = k;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY KmtMiracastReportSessionStatus(D3DKMT_HANDLE hSession, MIRACAST_STATUS MiracastStatus,
                                                 NTSTATUS Status)
{
    THUNK_ENTER();
    TRACE_(d3dkmt, "hSession %#x, MiracastStatus %u, Status %#x\n", hSession,
           (unsigned)MiracastStatus, (unsigned)Status);
    THUNK_RETURN(dxgk_miracast_report_status(hSession, MiracastStatus, Status));
}
