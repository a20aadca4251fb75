/*
 * Command submission: SubmitCommand (WDDM 2, GPU virtual addresses) and
 * Render (WDDM 1, the context's command buffer, allocation list and patch
 * list, turned into a DMA buffer by DxgkDdiRender).  Both only queue: the
 * scheduler hands the work to the miniport in order.
 */
#include <stdlib.h>
#include <string.h>

#include "vidsch.h"
#include "sync.h"
#include "base/kmt_debug.h"
#include "ddi.h"

static NTSTATUS device_usable(struct dxgk_device *device)
{
    return atomic_load(&device->execution_state) == D3DKMT_DEVICEEXECUTION_ACTIVE
               ? STATUS_SUCCESS : STATUS_DEVICE_REMOVED;
}

/* The packet's DMA buffer private data, as dxgkrnl allocates it: the
 * size the driver asked at CreateContext (it may keep its per-submission
 * state there and never allocate in DxgkDdiSubmitCommand, which must not
 * fail), at least the UMD's bytes, which go first. */
static NTSTATUS alloc_dma_private_data(const struct dxgk_context *ctx, struct dxgk_packet *p, UINT umd_size)
{
    UINT size = umd_size > ctx->dma_private_size ? umd_size : ctx->dma_private_size;

    if (size && !(p->submit.private_data = calloc(1, size)))
        return STATUS_NO_MEMORY;
    p->submit.private_data_size = size;
    p->submit.umd_private_size = umd_size;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_submit_command(const D3DKMT_SUBMITCOMMAND *desc, const void *private_data)
{
    struct dxgk_context *ctxs[D3DDDI_MAX_BROADCAST_CONTEXT];
    struct dxgk_packet *packets[D3DDDI_MAX_BROADCAST_CONTEXT] = { 0 };
    NTSTATUS status = STATUS_SUCCESS;
    UINT n = 0, flags;
    bool acquired;

    memcpy(&flags, &desc->Flags, sizeof(flags));
    if (!desc->BroadcastContextCount || desc->BroadcastContextCount > D3DDDI_MAX_BROADCAST_CONTEXT ||
        !desc->Commands || !desc->CommandLength || (flags & ~7u) ||
        desc->NumPrimaries > D3DDDI_MAX_WRITTEN_PRIMARIES ||
        desc->PrivateDriverDataSize > DXGK_MAX_PRIVATE_DATA ||
        (desc->PrivateDriverDataSize && !private_data))
        return STATUS_INVALID_PARAMETER;

    for (; n < desc->BroadcastContextCount; n++) {
        struct dxgk_context *ctx = dxgk_context_lookup(desc->BroadcastContext[n]);

        if (!ctx) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        ctxs[n] = ctx;
        if (!ctx->is_virtual || (n && ctx->device != ctxs[0]->device)) {
            status = STATUS_INVALID_PARAMETER;     /* patching contexts use Render */
            n++;
            break;
        }
        if ((status = device_usable(ctx->device))) {
            n++;
            break;
        }
    }
    if (!status && !dxgk_contexts_acquire(ctxs, n))
        status = STATUS_INVALID_PARAMETER;
    acquired = !status;
    /* build every packet before queuing any: all contexts get it or none */
    for (UINT i = 0; !status && i < n; i++) {
        struct dxgk_packet *p = calloc(1, sizeof(*p));

        if (!p || alloc_dma_private_data(ctxs[i], p, desc->PrivateDriverDataSize)) {
            free(p);
            status = STATUS_NO_MEMORY;
            break;
        }
        p->type = DXGK_PACKET_SUBMIT;
        p->context = ctxs[i];
        kmt_object_get(&ctxs[i]->obj);
        p->submit.is_virtual = true;
        p->submit.null_rendering = desc->Flags.NullRendering;
        p->submit.va = desc->Commands;
        p->submit.length = desc->CommandLength;
        if (desc->PrivateDriverDataSize)
            memcpy(p->submit.private_data, private_data, desc->PrivateDriverDataSize);
        packets[i] = p;
    }
    if (!status)
        status = dxgk_sched_queue(packets, n);
    for (UINT i = 0; i < n; i++) {
        if (status && packets[i])
            dxgk_packet_free(packets[i]);
        if (acquired)
            dxgk_context_release(ctxs[i]);
        else
            dxgk_context_put(ctxs[i]);
    }
    return status;
}

/* Resolves the first `count` entries of the context's allocation list. */
static NTSTATUS resolve_allocations(struct dxgk_context *ctx, UINT count, struct dxgk_packet *p)
{
    if (!count)
        return STATUS_SUCCESS;
    p->submit.allocations = calloc(count, sizeof(*p->submit.allocations));
    p->submit.dxgk_allocations = calloc(count, sizeof(*p->submit.dxgk_allocations));
    if (!p->submit.allocations || !p->submit.dxgk_allocations)
        return STATUS_NO_MEMORY;
    for (UINT i = 0; i < count; i++) {
        const D3DDDI_ALLOCATIONLIST *entry = &ctx->allocation_list[i];
        struct dxgk_allocation *alloc = dxgk_allocation_lookup(ctx->device, entry->hAllocation);

        if (!alloc)
            return STATUS_INVALID_HANDLE;
        /* queued work keeps it alive: destroys wait unless AssumeNotInUse.
         * Only a GPU reference: a CPU one would hold AssumeNotInUse back. */
        dxgk_allocation_gpu_ref(alloc);
        p->submit.allocations[p->submit.allocation_count++] = alloc;
        p->submit.dxgk_allocations[i].hDeviceSpecificAllocation = alloc->device_allocation;
        p->submit.dxgk_allocations[i].WriteOperation = entry->WriteOperation;
        p->submit.dxgk_allocations[i].KmtGpuVirtualAddress = alloc->gpu_va;
        dxgk_allocation_put(alloc);
    }
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_render(D3DKMT_RENDER *desc)
{
    struct dxgk_context *ctx = dxgk_context_acquire(desc->hContext);
    DXGKARG_RENDER args = { 0 };
    struct dxgk_packet *p = NULL;
    NTSTATUS status;
    UINT flags;

    if (!ctx)
        return STATUS_INVALID_PARAMETER;
    memcpy(&flags, &desc->Flags, sizeof(flags));
    if (ctx->is_virtual || (flags & ~0x0fu) ||
        desc->CommandOffset > ctx->command_buffer_size ||
        desc->CommandLength > ctx->command_buffer_size - desc->CommandOffset ||
        desc->AllocationCount > ctx->allocation_list_size ||
        desc->PatchLocationCount > ctx->patch_list_size ||
        desc->BroadcastContextCount > 1 ||
        (desc->BroadcastContextCount == 1 && desc->BroadcastContext[0] != desc->hContext)) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    if ((status = device_usable(ctx->device)))
        goto out;
    if (!(p = calloc(1, sizeof(*p)))) {
        status = STATUS_NO_MEMORY;
        goto out;
    }
    p->type = DXGK_PACKET_SUBMIT;
    p->context = ctx;
    kmt_object_get(&ctx->obj);
    p->submit.null_rendering = desc->Flags.NullRendering;
    if ((status = resolve_allocations(ctx, desc->AllocationCount, p)))
        goto out;
    p->submit.dma_size = desc->CommandLength ? desc->CommandLength : 1;
    if (!(p->submit.dma = malloc(p->submit.dma_size)) || alloc_dma_private_data(ctx, p, 0)) {
        status = STATUS_NO_MEMORY;
        goto out;
    }

    /* The driver builds the DMA buffer from a snapshot of the program's
     * command buffer, patching allocation addresses in as it goes. */
    args.pCommand = (const char *)ctx->command_buffer + desc->CommandOffset;
    args.CommandLength = desc->CommandLength;
    args.pDmaBuffer = p->submit.dma;
    args.DmaSize = p->submit.dma_size;
    args.pDmaBufferPrivateData = p->submit.private_data;
    args.DmaBufferPrivateDataSize = p->submit.private_data_size;
    args.pAllocationList = p->submit.dxgk_allocations;
    args.AllocationListSize = desc->AllocationCount;
    args.pPatchLocationListIn = ctx->patch_list;
    args.PatchLocationListInSize = desc->PatchLocationCount;
    status = dxgk_ddi_render(ctx, &args);
    if (status)
        goto out;
    p->submit.dma_size = (UINT)((char *)args.pDmaBuffer - (char *)p->submit.dma);
    if (p->submit.dma_size > desc->CommandLength && desc->CommandLength) {
        ERR_(dxgk, "DxgkDdiRender overran its DMA buffer\n");
        status = STATUS_UNSUCCESSFUL;
        goto out;
    }
    if ((status = dxgk_sched_queue(&p, 1)))
        goto out;
    p = NULL;

    /* The same buffers serve the next batch: their contents were copied. */
    desc->pNewCommandBuffer = ctx->command_buffer;
    desc->NewCommandBufferSize = ctx->command_buffer_size;
    desc->pNewAllocationList = ctx->allocation_list;
    desc->NewAllocationListSize = ctx->allocation_list_size;
    desc->pNewPatchLocationList = ctx->patch_list;
    desc->NewPatchLocationListSize = ctx->patch_list_size;
    desc->NewCommandBuffer = 0;
    pthread_mutex_lock(&ctx->device->adapter->sched->lock);
    desc->QueuedBufferCount = list_count(&ctx->queue);
    pthread_mutex_unlock(&ctx->device->adapter->sched->lock);
out:
    if (p)
        dxgk_packet_free(p);
    dxgk_context_release(ctx);
    return status;
}

NTSTATUS dxgk_get_device_state(D3DKMT_GETDEVICESTATE *state)
{
    struct dxgk_device *device = dxgk_device_acquire(state->hDevice);
    NTSTATUS status = STATUS_SUCCESS;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    switch (state->StateType) {
    case D3DKMT_DEVICESTATE_EXECUTION:
        state->ExecutionState = (D3DKMT_DEVICEEXECUTION_STATE)atomic_load(&device->execution_state);
        break;
    case D3DKMT_DEVICESTATE_RESET:
        state->ResetState.Value = 0;
        break;
    case D3DKMT_DEVICESTATE_PAGE_FAULT:
        memset(&state->PageFaultState, 0, sizeof(state->PageFaultState));
        if (atomic_load(&device->execution_state) == D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT)
            state->PageFaultState.FaultedVirtualAddress = device->fault_address;
        break;
    case D3DKMT_DEVICESTATE_PRESENT:
    case D3DKMT_DEVICESTATE_PRESENT_DWM:
    case D3DKMT_DEVICESTATE_PRESENT_QUEUE:
        /* VidPnSourceId must name a video output of the adapter */
        if (state->PresentState.VidPnSourceId >= device->adapter->num_sources)
            status = STATUS_INVALID_PARAMETER;
        else
            status = STATUS_NOT_SUPPORTED;
        break;
    default:
        status = STATUS_INVALID_PARAMETER;
        break;
    }
    dxgk_device_release(device);
    return status;
}
