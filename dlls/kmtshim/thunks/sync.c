/*
 * Synchronization-object thunks: create, destroy, signal and wait — queued
 * on contexts (GPU side) or done by the CPU.
 */
#include <stdlib.h>

#include "kmtshim/kmtshim.h"
#include "thunk.h"
#include "dxgkrnl/sync.h"
#include "dxgkrnl/vidsch.h"

NTSTATUS APIENTRY D3DKMTCreateSynchronizationObject(D3DKMT_CREATESYNCHRONIZATIONOBJECT *desc)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    info.Type = desc->Info.Type;
    memcpy(&info.Reserved, &desc->Info.Reserved, sizeof(desc->Info.Reserved));
    TRACE_(d3dkmt, "hDevice %#x, Type %d\n", desc->hDevice, info.Type);
    status = dxgk_create_syncobj(desc->hDevice, &info, true, &h, NULL);
    if (!status)
        desc->hSyncObject = h;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTCreateSynchronizationObject2(D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *desc)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info, out;
    D3DKMT_HANDLE h = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    info = desc->Info;
    out = info;
    TRACE_(d3dkmt, "hDevice %#x, Type %d, Flags %#x\n", desc->hDevice, info.Type, info.Flags.Value);
    status = dxgk_create_syncobj(desc->hDevice, &info, false, &h, &out);
    if (!status) {
        desc->hSyncObject = h;
        desc->Info.SharedHandle = out.SharedHandle;
        if (info.Type == D3DDDI_MONITORED_FENCE) {
            desc->Info.MonitoredFence.FenceValueCPUVirtualAddress = out.MonitoredFence.FenceValueCPUVirtualAddress;
            desc->Info.MonitoredFence.FenceValueGPUVirtualAddress = out.MonitoredFence.FenceValueGPUVirtualAddress;
        }
        TRACE_(d3dkmt, "hSyncObject %#x\n", h);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTDestroySynchronizationObject(const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hSyncObject %#x\n", desc->hSyncObject);
    THUNK_RETURN(dxgk_destroy_syncobj(desc->hSyncObject));
}

/* ---- queued on contexts ------------------------------------------------------ */

NTSTATUS APIENTRY D3DKMTSignalSynchronizationObject(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT *desc)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hContext %#x, %u objects, flags %#x\n", k.hContext, k.ObjectCount, k.Flags.Value);
    if (k.Flags.EnqueueCpuEvent)          /* needs Signal2's CpuEventHandle */
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(dxgk_gpu_signal(&k.hContext, 1, k.ObjectHandleArray, k.ObjectCount, NULL, 0,
                                 k.Flags, NULL, dxgk_types_signal_v1));
}

NTSTATUS APIENTRY D3DKMTSignalSynchronizationObject2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 *desc)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 *k;
    D3DKMT_HANDLE contexts[D3DDDI_MAX_BROADCAST_CONTEXT + 1];
    UINT ncontexts = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    /* 464 bytes: off the (Wine: 1 MiB) stack */
    if (!(k = malloc(sizeof(*k))))
        THUNK_RETURN(STATUS_NO_MEMORY);
    *k = *desc;
    TRACE_(d3dkmt, "hContext %#x, %u objects, flags %#x, %u broadcast, value %#llx\n", k->hContext,
           k->ObjectCount, k->Flags.Value, k->BroadcastContextCount,
           (unsigned long long)k->Fence.FenceValue);
    if (k->BroadcastContextCount > D3DDDI_MAX_BROADCAST_CONTEXT) {
        free(k);
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    }
    /* hContext first, then the broadcast list (hContext may repeat in it) */
    contexts[ncontexts++] = k->hContext;
    for (UINT i = 0; i < k->BroadcastContextCount; i++)
        if (k->BroadcastContext[i] != k->hContext)
            contexts[ncontexts++] = k->BroadcastContext[i];
    if (ncontexts > D3DDDI_MAX_BROADCAST_CONTEXT) {
        free(k);
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    }
    status = dxgk_gpu_signal(contexts, ncontexts, k->ObjectHandleArray, k->ObjectCount, NULL,
                             k->Fence.FenceValue, k->Flags, k->CpuEventHandle, dxgk_types_signal_v2);
    free(k);
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObject(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hContext %#x, %u objects\n", desc->hContext, desc->ObjectCount);
    THUNK_RETURN(dxgk_gpu_wait(desc->hContext, desc->ObjectHandleArray, desc->ObjectCount, NULL, 0,
                               dxgk_types_wait_v1));
}

NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObject2(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hContext %#x, %u objects, value %#llx\n", desc->hContext, desc->ObjectCount,
           (unsigned long long)desc->Fence.FenceValue);
    THUNK_RETURN(dxgk_gpu_wait(desc->hContext, desc->ObjectHandleArray, desc->ObjectCount, NULL,
                               desc->Fence.FenceValue, dxgk_types_wait_v2));
}

/* Captures `count` handles and values from the caller. */
static NTSTATUS capture_fence_arrays(const D3DKMT_HANDLE *handles, const UINT64 *values, UINT count,
                                     UINT max, D3DKMT_HANDLE *h_out, UINT64 *v_out)
{
    if (!count || count > max || !kmt_user_ptr_ok(handles, count * sizeof(*handles)) ||
        (values && !kmt_user_ptr_ok(values, count * sizeof(*values))))
        return STATUS_INVALID_PARAMETER;
    memcpy(h_out, handles, count * sizeof(*handles));
    if (values)
        memcpy(v_out, values, count * sizeof(*values));
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY D3DKMTSignalSynchronizationObjectFromGpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU *desc)
{
    D3DKMT_HANDLE handles[D3DDDI_MAX_OBJECT_SIGNALED];
    UINT64 values[D3DDDI_MAX_OBJECT_SIGNALED];
    D3DDDICB_SIGNALFLAGS none = { .Value = 0 };
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hContext %#x, %u objects\n", desc->hContext, desc->ObjectCount);
    if (!desc->MonitoredFenceValueArray)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = capture_fence_arrays(desc->ObjectHandleArray, desc->MonitoredFenceValueArray,
                                  desc->ObjectCount, D3DDDI_MAX_OBJECT_SIGNALED, handles, values);
    if (status)
        THUNK_RETURN(status);
    THUNK_RETURN(dxgk_gpu_signal(&desc->hContext, 1, handles, desc->ObjectCount, values, 0, none, NULL,
                                 dxgk_types_monitored));
}

NTSTATUS APIENTRY D3DKMTSignalSynchronizationObjectFromGpu2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 *desc)
{
    D3DKMT_HANDLE handles[D3DDDI_MAX_OBJECT_SIGNALED];
    UINT64 values[D3DDDI_MAX_OBJECT_SIGNALED];
    D3DKMT_HANDLE contexts[D3DDDI_MAX_BROADCAST_CONTEXT];
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "%u objects, flags %#x, %u contexts\n", k.ObjectCount, k.Flags.Value,
           k.BroadcastContextCount);
    if (!k.BroadcastContextCount || k.BroadcastContextCount > D3DDDI_MAX_BROADCAST_CONTEXT ||
        !kmt_user_ptr_ok(k.BroadcastContextArray, k.BroadcastContextCount * sizeof(D3DKMT_HANDLE)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    memcpy(contexts, k.BroadcastContextArray, k.BroadcastContextCount * sizeof(D3DKMT_HANDLE));
    if (k.Flags.EnqueueCpuEvent)
        THUNK_RETURN(dxgk_gpu_signal(contexts, k.BroadcastContextCount, NULL, k.ObjectCount, NULL, 0,
                                     k.Flags, k.CpuEventHandle, dxgk_types_monitored));
    if (!k.MonitoredFenceValueArray)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = capture_fence_arrays(k.ObjectHandleArray, k.MonitoredFenceValueArray, k.ObjectCount,
                                  D3DDDI_MAX_OBJECT_SIGNALED, handles, values);
    if (status)
        THUNK_RETURN(status);
    THUNK_RETURN(dxgk_gpu_signal(contexts, k.BroadcastContextCount, handles, k.ObjectCount, values, 0,
                                 k.Flags, NULL, dxgk_types_monitored));
}

NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObjectFromGpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU *desc)
{
    D3DKMT_HANDLE handles[D3DDDI_MAX_OBJECT_WAITED_ON];
    UINT64 values[D3DDDI_MAX_OBJECT_WAITED_ON];
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU k;
    struct dxgk_syncobj *first;
    bool monitored;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hContext %#x, %u objects\n", k.hContext, k.ObjectCount);
    if ((status = capture_fence_arrays(k.ObjectHandleArray, NULL, k.ObjectCount,
                                       D3DDDI_MAX_OBJECT_WAITED_ON, handles, NULL)))
        THUNK_RETURN(status);
    /* The first object's type picks the union member, as dxgkrnl does. */
    if (!(first = dxgk_syncobj_lookup(handles[0], NULL)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    monitored = first->type == D3DDDI_MONITORED_FENCE;
    dxgk_syncobj_put(first);
    if (!monitored)
        THUNK_RETURN(dxgk_gpu_wait(k.hContext, handles, k.ObjectCount, NULL, k.FenceValue,
                                   dxgk_types_legacy_fence));
    if (!k.MonitoredFenceValueArray ||
        !kmt_user_ptr_ok(k.MonitoredFenceValueArray, k.ObjectCount * sizeof(UINT64)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    memcpy(values, k.MonitoredFenceValueArray, k.ObjectCount * sizeof(UINT64));
    THUNK_RETURN(dxgk_gpu_wait(k.hContext, handles, k.ObjectCount, values, 0, dxgk_types_monitored));
}

/* ---- the CPU side ------------------------------------------------------------- */

NTSTATUS APIENTRY D3DKMTSignalSynchronizationObjectFromCpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU *desc)
{
    D3DKMT_HANDLE handles[D3DDDI_MAX_OBJECT_SIGNALED];
    UINT64 values[D3DDDI_MAX_OBJECT_SIGNALED];
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, %u objects, flags %#x\n", k.hDevice, k.ObjectCount, k.Flags.Value);
    if (!k.FenceValueArray)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = capture_fence_arrays(k.ObjectHandleArray, k.FenceValueArray, k.ObjectCount,
                                  D3DDDI_MAX_OBJECT_SIGNALED, handles, values);
    if (status)
        THUNK_RETURN(status);
    THUNK_RETURN(dxgk_signal_from_cpu(k.hDevice, handles, values, k.ObjectCount, k.Flags));
}

static NTSTATUS wait_from_cpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *desc, int timeout_ms)
{
    D3DKMT_HANDLE handles[D3DDDI_MAX_OBJECT_WAITED_ON];
    UINT64 values[D3DDDI_MAX_OBJECT_WAITED_ON];
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU k;
    NTSTATUS status;

    if (!kmt_user_ptr_ok(desc, sizeof(*desc)))
        return STATUS_INVALID_PARAMETER;
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, %u objects, event %p, flags %#x\n", k.hDevice, k.ObjectCount,
           k.hAsyncEvent, k.Flags.Value);
    if (k.Flags.Reserved || !k.FenceValueArray)
        return STATUS_INVALID_PARAMETER;
    status = capture_fence_arrays(k.ObjectHandleArray, k.FenceValueArray, k.ObjectCount,
                                  D3DDDI_MAX_OBJECT_WAITED_ON, handles, values);
    if (status)
        return status;
    return dxgk_wait_from_cpu(k.hDevice, handles, values, k.ObjectCount, k.Flags.WaitAny,
                              k.hAsyncEvent, timeout_ms);
}

NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObjectFromCpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *desc)
{
    THUNK_ENTER();
    TRACE_(d3dkmt, "desc %p\n", desc);
    THUNK_RETURN(wait_from_cpu(desc, -1));
}

NTSTATUS KmtWaitForSynchronizationObjectFromCpuTimeout(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *desc,
                                                       int timeout_ms)
{
    THUNK_ENTER();
    TRACE_(d3dkmt, "desc %p, timeout %d ms\n", desc, timeout_ms);
    THUNK_RETURN(wait_from_cpu(desc, timeout_ms));
}
