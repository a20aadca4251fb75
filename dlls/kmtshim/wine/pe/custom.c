/*
 * The exports whose signature is not one descriptor (KMT_FUNC_CUSTOM lines
 * of functions.h): CheckExclusiveOwnership (no argument, a BOOLEAN) and the
 * process priority class calls (a process handle and a value or pointer).
 */
#include "pe.h"

/* Without the Linux half nobody owns a source: FALSE. */
BOOLEAN APIENTRY D3DKMTCheckExclusiveOwnership(void)
{
    struct kmt_bool_params params = { 0, 0 };

    if (kmt_unix_call(KMT_UNIX_CheckExclusiveOwnership, &params))
        return FALSE;
    return params.result ? TRUE : FALSE;
}

NTSTATUS APIENTRY D3DKMTSetProcessSchedulingPriorityClass(HANDLE process,
                                                          D3DKMT_SCHEDULINGPRIORITYCLASS priority)
{
    struct kmt_priority_params params;
    NTSTATUS status;

    if ((status = kmt_pe_resolve_process(&process)))
        return status;
    params.process = (uint64_t)(uintptr_t)process;
    params.priority = (uint64_t)(uint32_t)priority;
    return kmt_unix_call(KMT_UNIX_SetProcessSchedulingPriorityClass, &params);
}

NTSTATUS APIENTRY D3DKMTGetProcessSchedulingPriorityClass(HANDLE process,
                                                          D3DKMT_SCHEDULINGPRIORITYCLASS *priority)
{
    struct kmt_priority_params params;
    NTSTATUS status;

    if ((status = kmt_pe_resolve_process(&process)))
        return status;
    params.process = (uint64_t)(uintptr_t)process;
    params.priority = (uint64_t)(uintptr_t)priority;   /* the core checks it */
    return kmt_unix_call(KMT_UNIX_GetProcessSchedulingPriorityClass, &params);
}

NTSTATUS APIENTRY D3DKMTShareObjects(UINT count, const D3DKMT_HANDLE *objects, OBJECT_ATTRIBUTES *attributes,
                                     DWORD access, HANDLE *nt_handle)
{
    struct kmt_share_objects_params params = {
        .count = count,
        .handles = (uint64_t)(uintptr_t)objects,
        .attributes = (uint64_t)(uintptr_t)attributes,
        .access = access,
        .nt_handle = (uint64_t)(uintptr_t)nt_handle,
    };

    return kmt_unix_call(KMT_UNIX_ShareObjects, &params);
}
