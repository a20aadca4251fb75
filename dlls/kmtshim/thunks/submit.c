/*
 * Submission thunks: SubmitCommand, Render.
 */
#include "thunk.h"
#include "dxgkrnl/vidsch.h"

NTSTATUS APIENTRY D3DKMTSubmitCommand(const D3DKMT_SUBMITCOMMAND *desc)
{
    D3DKMT_SUBMITCOMMAND k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "Commands %#llx, length %u, contexts %u (first %#x), data %p/%u\n",
           (unsigned long long)k.Commands, k.CommandLength, k.BroadcastContextCount,
           k.BroadcastContext[0], k.pPrivateDriverData, k.PrivateDriverDataSize);
    if (k.PrivateDriverDataSize && !kmt_user_ptr_ok(k.pPrivateDriverData, k.PrivateDriverDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    THUNK_RETURN(dxgk_submit_command(&k, k.pPrivateDriverData));
}

NTSTATUS APIENTRY D3DKMTRender(D3DKMT_RENDER *desc)
{
    D3DKMT_RENDER k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hContext %#x, offset %u, length %u, allocations %u, patches %u\n", k.hContext,
           k.CommandOffset, k.CommandLength, k.AllocationCount, k.PatchLocationCount);
    status = dxgk_render(&k);
    if (!status) {
        desc->pNewCommandBuffer = k.pNewCommandBuffer;
        desc->NewCommandBufferSize = k.NewCommandBufferSize;
        desc->pNewAllocationList = k.pNewAllocationList;
        desc->NewAllocationListSize = k.NewAllocationListSize;
        desc->pNewPatchLocationList = k.pNewPatchLocationList;
        desc->NewPatchLocationListSize = k.NewPatchLocationListSize;
        desc->QueuedBufferCount = k.QueuedBufferCount;
        desc->NewCommandBuffer = k.NewCommandBuffer;
    }
    THUNK_RETURN(status);
}
