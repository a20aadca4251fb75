/*
 * Process scheduling priority thunks: Set/GetProcessSchedulingPriorityClass
 * (two arguments each, no descriptor).
 */
#include "thunk.h"

NTSTATUS APIENTRY D3DKMTSetProcessSchedulingPriorityClass(HANDLE process,
                                                          D3DKMT_SCHEDULINGPRIORITYCLASS priority)
{
    THUNK_ENTER();
    TRACE_(d3dkmt, "hProcess %p, priority %d\n", process, (int)priority);
    THUNK_RETURN(dxgk_set_priority_class(process, priority));
}

NTSTATUS APIENTRY D3DKMTGetProcessSchedulingPriorityClass(HANDLE process,
                                                          D3DKMT_SCHEDULINGPRIORITYCLASS *priority)
{
    D3DKMT_SCHEDULINGPRIORITYCLASS value;
    NTSTATUS status;

    THUNK_ENTER();
    TRACE_(d3dkmt, "hProcess %p, priority %p\n", process, (void *)priority);
    if (!kmt_user_ptr_ok(priority, sizeof(*priority)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_get_priority_class(process, &value);
    if (!status)
        *priority = value;
    THUNK_RETURN(status);
}
