/*
 * Context thunks: CreateContext, CreateContextVirtual, DestroyContext,
 * GetDeviceState.
 */
#include "thunk.h"
#include "dxgkrnl/vidsch.h"

NTSTATUS APIENTRY D3DKMTCreateContext(D3DKMT_CREATECONTEXT *desc)
{
    D3DKMT_CREATECONTEXT k, out = { 0 };
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, node %u, affinity %#x, flags %#x, data %p/%u, hint %d\n", k.hDevice,
           k.NodeOrdinal, k.EngineAffinity, k.Flags.Value, k.pPrivateDriverData,
           k.PrivateDriverDataSize, k.ClientHint);
    if (k.PrivateDriverDataSize && !kmt_user_ptr_ok(k.pPrivateDriverData, k.PrivateDriverDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_create_context(k.hDevice, k.NodeOrdinal, k.EngineAffinity, k.Flags,
                                 k.pPrivateDriverData, k.PrivateDriverDataSize, k.ClientHint, false, &out);
    if (!status) {
        desc->hContext = out.hContext;
        desc->pCommandBuffer = out.pCommandBuffer;
        desc->CommandBufferSize = out.CommandBufferSize;
        desc->pAllocationList = out.pAllocationList;
        desc->AllocationListSize = out.AllocationListSize;
        desc->pPatchLocationList = out.pPatchLocationList;
        desc->PatchLocationListSize = out.PatchLocationListSize;
        desc->CommandBuffer = out.CommandBuffer;
        TRACE_(d3dkmt, "hContext %#x\n", out.hContext);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTCreateContextVirtual(D3DKMT_CREATECONTEXTVIRTUAL *desc)
{
    D3DKMT_CREATECONTEXTVIRTUAL k;
    D3DKMT_CREATECONTEXT out = { 0 };
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, node %u, affinity %#x, flags %#x, data %p/%u, hint %d\n", k.hDevice,
           k.NodeOrdinal, k.EngineAffinity, k.Flags.Value, k.pPrivateDriverData,
           k.PrivateDriverDataSize, k.ClientHint);
    if (k.PrivateDriverDataSize && !kmt_user_ptr_ok(k.pPrivateDriverData, k.PrivateDriverDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_create_context(k.hDevice, k.NodeOrdinal, k.EngineAffinity, k.Flags,
                                 k.pPrivateDriverData, k.PrivateDriverDataSize, k.ClientHint, true, &out);
    if (!status) {
        desc->hContext = out.hContext;
        TRACE_(d3dkmt, "hContext %#x\n", out.hContext);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTDestroyContext(const D3DKMT_DESTROYCONTEXT *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hContext %#x\n", desc->hContext);
    THUNK_RETURN(dxgk_destroy_context(desc->hContext));
}

NTSTATUS APIENTRY D3DKMTGetDeviceState(D3DKMT_GETDEVICESTATE *desc)
{
    D3DKMT_GETDEVICESTATE k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, StateType %d\n", k.hDevice, k.StateType);
    status = dxgk_get_device_state(&k);
    if (!status)
        *desc = k;
    THUNK_RETURN(status);
}
