/*
 * kmtshim.so's entries for the KMT_FUNC_CUSTOM lines of functions.h and
 * for the display-based opens of pe/display.c: the arguments out of their
 * params struct (unixlib.h), into the native thunks.
 */
#include "config.h"

#include <stdint.h>

#include "kmtshim/kmtshim.h"
#include "unixlib.h"
#include "entries.h"

NTSTATUS unix_CheckExclusiveOwnership(void *args)
{
    struct kmt_bool_params *params = args;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    params->result = D3DKMTCheckExclusiveOwnership() ? 1 : 0;
    return STATUS_SUCCESS;
}

NTSTATUS unix_SetProcessSchedulingPriorityClass(void *args)
{
    const struct kmt_priority_params *params = args;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    return D3DKMTSetProcessSchedulingPriorityClass((HANDLE)(uintptr_t)params->process,
                                                   (D3DKMT_SCHEDULINGPRIORITYCLASS)params->priority);
}

NTSTATUS unix_GetProcessSchedulingPriorityClass(void *args)
{
    const struct kmt_priority_params *params = args;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    return D3DKMTGetProcessSchedulingPriorityClass(
        (HANDLE)(uintptr_t)params->process,
        (D3DKMT_SCHEDULINGPRIORITYCLASS *)(uintptr_t)params->priority);
}

NTSTATUS unix_open_device_path(void *args)
{
    struct kmt_device_path_params *params = args;
    D3DKMT_HANDLE h = 0;
    LUID luid = { 0, 0 };
    NTSTATUS status;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    status = KmtOpenAdapterFromDevicePath((const WCHAR *)(uintptr_t)params->path, params->flags,
                                          params->source, &h, &luid);
    if (!status) {
        params->adapter = h;
        params->luid_low = luid.LowPart;
        params->luid_high = luid.HighPart;
    }
    return status;
}
