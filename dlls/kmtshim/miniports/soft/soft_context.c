/*
 * Software miniport: contexts and DxgkDdiRender (WDDM 1 patching: the
 * UMD's command buffer becomes a DMA buffer with allocation addresses
 * written at the patch locations).
 */
#include <stdlib.h>
#include <string.h>

#include "soft.h"

#define SOFT_SAVE_AREA_SIZE 4096u

NTSTATUS APIENTRY soft_create_context(HANDLE hDevice, DXGKARG_CREATECONTEXT *args)
{
    struct soft_device *d = hDevice;
    struct soft_adapter *a = d->adapter;
    struct soft_context *c;
    DXGKARGCB_CREATECONTEXTALLOCATION ca = { 0 };
    NTSTATUS status;

    if (args->NodeOrdinal != 0)
        return STATUS_INVALID_PARAMETER;
    if (!(c = calloc(1, sizeof(*c))))
        return STATUS_NO_MEMORY;
    c->device = d;
    c->core_context = args->hContext;
    c->node = args->NodeOrdinal;

    /* Per-context state the "hardware" would save on a context switch:
     * a context allocation, as a real driver makes one. */
    ca.hAdapter = a->dxgkrnl.DeviceHandle;
    ca.hDevice = d->core_device;
    ca.hContext = args->hContext;
    ca.hDriverAllocation = c;
    ca.Size = SOFT_SAVE_AREA_SIZE;
    ca.Alignment = SOFT_PAGE_SIZE;
    ca.SupportedSegmentSet = 1;
    status = a->dxgkrnl.DxgkCbCreateContextAllocation(&ca);
    if (status) {
        free(c);
        return status;
    }
    c->save_area = ca.hAllocation;

    memset(&args->ContextInfo, 0, sizeof(args->ContextInfo));
    args->ContextInfo.DmaBufferSize = 64 * 1024;
    args->ContextInfo.DmaBufferPrivateDataSize = soft_job_size;
    args->ContextInfo.AllocationListSize = 256;
    args->ContextInfo.PatchLocationListSize = 1024;
    args->ContextInfo.Caps.NoPatchingRequired = args->Flags.VirtualAddressing;
    args->hContext = c;
    atomic_fetch_add(&a->contexts, 1);
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_destroy_context(HANDLE hContext)
{
    struct soft_context *c = hContext;
    struct soft_adapter *a = c->device->adapter;

    a->dxgkrnl.DxgkCbDestroyContextAllocation(a->dxgkrnl.DeviceHandle, c->save_area);
    atomic_fetch_sub(&a->contexts, 1);
    free(c);
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_render(HANDLE hContext, DXGKARG_RENDER *args)
{
    unsigned char *dma = args->pDmaBuffer;

    if (args->CommandLength > args->DmaSize)
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    memcpy(dma, args->pCommand, args->CommandLength);
    for (UINT i = 0; i < args->PatchLocationListInSize; i++) {
        const D3DDDI_PATCHLOCATIONLIST *p = &args->pPatchLocationListIn[i];
        UINT64 address;

        if (p->AllocationIndex >= args->AllocationListSize || p->PatchOffset % 8 ||
            p->PatchOffset > args->CommandLength || args->CommandLength - p->PatchOffset < 8)
            return STATUS_INVALID_PARAMETER;
        address = args->pAllocationList[p->AllocationIndex].KmtGpuVirtualAddress + p->AllocationOffset;
        memcpy(dma + p->PatchOffset, &address, sizeof(address));
    }
    args->pDmaBuffer = dma + args->CommandLength;
    return STATUS_SUCCESS;
}
