/*
 * The PE half's own work on D3DKMT calls: the KMT_FUNC_PE wrappers (a
 * Windows object inside the descriptor becomes something the core
 * understands) and the proxy's ownership query.  The D3DKMT<Name> exports
 * themselves are generated (thunks_gen.c); the KMT_FUNC_EVENT wrappers are
 * in events.c.
 */
#include "pe.h"

/* A process handle (QueryVideoMemoryInfo.hProcess, the priority class
 * calls): NULL, the pseudo-handle or a real handle of the calling process
 * all mean "this process" to the core, which only ever sees NULL.  As on
 * Windows, a process handle without PROCESS_QUERY_INFORMATION or
 * PROCESS_QUERY_LIMITED_INFORMATION is STATUS_ACCESS_DENIED and a handle
 * that is not a process handle (or no handle) STATUS_INVALID_HANDLE:
 * GetProcessId() asks the wineserver, which checks the type first
 * (ERROR_INVALID_HANDLE for a mismatch) and the access mask after
 * (ERROR_ACCESS_DENIED).  Another process's state is unknown here:
 * kmtshim's state is per process. */
NTSTATUS kmt_pe_resolve_process(HANDLE *process)
{
    HANDLE h = *process;
    DWORD pid;

    *process = NULL;
    if (!h || h == GetCurrentProcess())
        return STATUS_SUCCESS;
    SetLastError(0);
    pid = GetProcessId(h);
    if (!pid && GetLastError() == ERROR_ACCESS_DENIED) {
        PE_TRACE("hProcess %p is a process handle without query rights\n", h);
        return STATUS_ACCESS_DENIED;
    }
    if (!pid) {
        PE_TRACE("hProcess %p is not a process handle\n", h);
        return STATUS_INVALID_HANDLE;
    }
    if (pid != GetCurrentProcessId()) {
        PE_FIXME("hProcess %p is process %lu: only the calling process is supported\n", h,
                 (unsigned long)pid);
        return STATUS_NOT_SUPPORTED;
    }
    return STATUS_SUCCESS;
}

NTSTATUS pe_QueryVideoMemoryInfo(D3DKMT_QUERYVIDEOMEMORYINFO *desc)
{
    D3DKMT_QUERYVIDEOMEMORYINFO k;
    NTSTATUS status;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)))      /* the core answers bad descriptors */
        return kmt_call_desc(KMT_UNIX_QueryVideoMemoryInfo, desc);
    k = *desc;
    if ((status = kmt_pe_resolve_process(&k.hProcess)))
        return status;
    status = kmt_call_desc(KMT_UNIX_QueryVideoMemoryInfo, &k);
    if (!status) {
        desc->Budget = k.Budget;
        desc->CurrentUsage = k.CurrentUsage;
        desc->CurrentReservation = k.CurrentReservation;
        desc->AvailableForReservation = k.AvailableForReservation;
    }
    return status;
}

/* hProcess matters to the PROCESS_* types only, which the core knows: a
 * handle that is not this process reaches it as a value that is no process
 * either, and its refusal (INVALID_HANDLE) becomes the reason found here. */
NTSTATUS pe_QueryStatistics(const D3DKMT_QUERYSTATISTICS *desc)
{
    D3DKMT_QUERYSTATISTICS k;
    NTSTATUS status, process_status;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)))      /* the core answers bad descriptors */
        return kmt_call_desc(KMT_UNIX_QueryStatistics, desc);
    k = *desc;
    if ((process_status = kmt_pe_resolve_process(&k.hProcess)))
        k.hProcess = (HANDLE)(ULONG_PTR)1;
    status = kmt_call_desc(KMT_UNIX_QueryStatistics, &k);
    if (status == (NTSTATUS)STATUS_INVALID_HANDLE && process_status)
        return process_status;
    if (!status)
        ((D3DKMT_QUERYSTATISTICS *)desc)->QueryResult = k.QueryResult;
    return status;
}

/* A destroyed device's cached event duplicates (event_cache.c) go too. */
NTSTATUS pe_DestroyDevice(const D3DKMT_DESTROYDEVICE *desc)
{
    NTSTATUS status = kmt_call_desc(KMT_UNIX_DestroyDevice, desc);

    /* read only once the core took the descriptor */
    if (!status)
        kmt_event_cache_drop_device(desc->hDevice);
    return status;
}

BOOL WINAPI KmtShimOwnsHandle(D3DKMT_HANDLE handle)
{
    struct kmt_owns_handle_params params = { handle, 0 };

    return !kmt_unix_call(KMT_UNIX_OWNS_HANDLE, &params) && params.owned;
}
