/*
 * The gateway's calls for execution: contexts, Render, submission, engine
 * reset and the miniport's fences (see ddi.h).  Submission and reset run on
 * the scheduler's thread; their trace lines are the place to see what the
 * miniport was handed.
 */
#include "ddi.h"
#include "vidsch.h"

bool dxgk_ddi_has_contexts(const struct dxgk_adapter *adapter, bool is_virtual)
{
    const DRIVER_INITIALIZATION_DATA *ddi = adapter->ddi;

    if (!ddi->DxgkDdiCreateContext || !ddi->DxgkDdiDestroyContext)
        return false;
    return is_virtual ? ddi->DxgkDdiSubmitCommandVirtual != NULL
                      : ddi->DxgkDdiRender && ddi->DxgkDdiSubmitCommand;
}

NTSTATUS dxgk_ddi_create_context(struct dxgk_device *device, DXGKARG_CREATECONTEXT *args)
{
    struct dxgk_adapter *adapter = device->adapter;
    HANDLE core_context = args->hContext;
    NTSTATUS status;

    if (dxgk_ddi_device_gone(device, "DxgkDdiCreateContext"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiCreateContext(device->driver_device, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiCreateContext", status, "node %u, virtual %d, %u bytes", args->NodeOrdinal,
                   args->Flags.VirtualAddressing, args->PrivateDriverDataSize);
    if (!status && (!args->hContext || args->hContext == core_context)) {
        ERR_(dxgk, "%s: DxgkDdiCreateContext returned no context\n", adapter->miniport->name);
        return STATUS_UNSUCCESSFUL;
    }
    return status;
}

void dxgk_ddi_destroy_context(struct dxgk_device *device, HANDLE driver_context)
{
    struct dxgk_adapter *adapter = device->adapter;
    NTSTATUS status;

    if (dxgk_ddi_device_gone(device, "DxgkDdiDestroyContext"))
        return;
    status = adapter->ddi->DxgkDdiDestroyContext(driver_context);
    DXGK_DDI_TRACE(adapter, "DxgkDdiDestroyContext", status, "%p", driver_context);
}

NTSTATUS dxgk_ddi_render(struct dxgk_context *ctx, DXGKARG_RENDER *args)
{
    struct dxgk_adapter *adapter = ctx->device->adapter;
    NTSTATUS status;

    if (dxgk_ddi_device_gone(ctx->device, "DxgkDdiRender"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiRender(ctx->driver_context, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiRender", status, "%u bytes, %u allocations, %u patches", args->CommandLength,
                   args->AllocationListSize, args->PatchLocationListInSize);
    return status;
}

NTSTATUS dxgk_ddi_submit_command(struct dxgk_adapter *adapter, DXGKARG_SUBMITCOMMAND *args)
{
    NTSTATUS status;

    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiSubmitCommand"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiSubmitCommand(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiSubmitCommand", status, "fence %u, node %u, %u bytes, %u allocations",
                   args->SubmissionFenceId, args->NodeOrdinal, args->DmaBufferSize, args->KmtAllocationListSize);
    return status;
}

NTSTATUS dxgk_ddi_submit_command_virtual(struct dxgk_adapter *adapter, DXGKARG_SUBMITCOMMANDVIRTUAL *args)
{
    NTSTATUS status;

    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiSubmitCommandVirtual"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiSubmitCommandVirtual(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiSubmitCommandVirtual", status, "fence %u, node %u, va %#llx, %u bytes",
                   args->SubmissionFenceId, args->NodeOrdinal, (unsigned long long)args->DmaBufferVirtualAddress,
                   args->DmaBufferSize);
    return status;
}

bool dxgk_ddi_has_reset_engine(const struct dxgk_adapter *adapter)
{
    return adapter->ddi->DxgkDdiResetEngine != NULL;
}

NTSTATUS dxgk_ddi_reset_engine(struct dxgk_adapter *adapter, DXGKARG_RESETENGINE *args)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiResetEngine)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiResetEngine"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiResetEngine(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiResetEngine", status, "node %u", args->NodeOrdinal);
    return status;
}

bool dxgk_ddi_has_fences(const struct dxgk_adapter *adapter)
{
    const DRIVER_INITIALIZATION_DATA *ddi = adapter->ddi;

    return ddi->KmtDdiCreateFence && ddi->KmtDdiDestroyFence && ddi->KmtDdiSignalFence;
}

NTSTATUS dxgk_ddi_create_fence(struct dxgk_adapter *adapter, KMTARG_CREATEFENCE *args)
{
    NTSTATUS status;

    if (!dxgk_ddi_has_fences(adapter))
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "KmtDdiCreateFence"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->KmtDdiCreateFence(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "KmtDdiCreateFence", status, "%#llx", (unsigned long long)args->InitialValue);
    return status;
}

void dxgk_ddi_destroy_fence(struct dxgk_adapter *adapter, HANDLE fence)
{
    if (!fence || !dxgk_ddi_has_fences(adapter) || dxgk_ddi_adapter_gone(adapter, "KmtDdiDestroyFence"))
        return;
    adapter->ddi->KmtDdiDestroyFence(adapter->ctx, fence);
    TRACE_(dxgk, "%s: KmtDdiDestroyFence(%p)\n", adapter->miniport->name, fence);
}

void dxgk_ddi_signal_fence(struct dxgk_adapter *adapter, HANDLE fence, UINT64 value)
{
    NTSTATUS status;

    if (!fence || !dxgk_ddi_has_fences(adapter) || dxgk_ddi_adapter_gone(adapter, "KmtDdiSignalFence"))
        return;
    status = adapter->ddi->KmtDdiSignalFence(adapter->ctx, fence, value);
    DXGK_DDI_TRACE(adapter, "KmtDdiSignalFence", status, "%p, %#llx", fence, (unsigned long long)value);
    if (status)
        WARN_(dxgk, "%s: KmtDdiSignalFence(%#llx) -> %s\n", adapter->miniport->name,
              (unsigned long long)value, kmt_debugstr_status(status));
}

bool dxgk_ddi_has_fence_sharing(const struct dxgk_adapter *adapter)
{
    const DRIVER_INITIALIZATION_DATA *ddi = adapter->ddi;

    return dxgk_ddi_has_fences(adapter) && ddi->KmtDdiExportFence && ddi->KmtDdiImportFence;
}

NTSTATUS dxgk_ddi_export_fence(struct dxgk_adapter *adapter, HANDLE fence, int *fd)
{
    NTSTATUS status;

    *fd = -1;
    if (!fence || !dxgk_ddi_has_fence_sharing(adapter))
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "KmtDdiExportFence"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->KmtDdiExportFence(adapter->ctx, fence, fd);
    DXGK_DDI_TRACE(adapter, "KmtDdiExportFence", status, "%p -> fd %d", fence, *fd);
    if (status)
        *fd = -1;
    return status;
}

NTSTATUS dxgk_ddi_import_fence(struct dxgk_adapter *adapter, KMTARG_IMPORTFENCE *args)
{
    NTSTATUS status;

    if (!dxgk_ddi_has_fence_sharing(adapter))
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "KmtDdiImportFence"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->KmtDdiImportFence(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "KmtDdiImportFence", status, "fd %d", args->Fd);
    return status;
}
