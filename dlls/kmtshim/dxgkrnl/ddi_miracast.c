/*
 * The gateway's calls for the Miracast class (see ddi.h).  miracast.c
 * serializes the three under its class lock, as dxgkrnl does.
 */
#include "kmtshim/dispmprt.h"
#include "ddi.h"

bool dxgk_ddi_has_miracast(const struct dxgk_adapter *adapter)
{
    const DRIVER_INITIALIZATION_DATA *ddi = adapter->ddi;

    return ddi->DxgkDdiMiracastCreateContext && ddi->DxgkDdiMiracastDestroyContext &&
           ddi->DxgkDdiMiracastIoControl;
}

NTSTATUS dxgk_ddi_miracast_create_context(struct dxgk_adapter *adapter, DXGK_MIRACAST_CALLBACKS *callbacks,
                                          PVOID *context, UINT *target)
{
    NTSTATUS status;

    if (!dxgk_ddi_has_miracast(adapter))
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiMiracastCreateContext"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiMiracastCreateContext(adapter->ctx, callbacks, context, target);
    DXGK_DDI_TRACE(adapter, "DxgkDdiMiracastCreateContext", status, "session %p", callbacks->MiracastHandle);
    return status;
}

void dxgk_ddi_miracast_destroy_context(struct dxgk_adapter *adapter, PVOID context)
{
    if (!dxgk_ddi_has_miracast(adapter) || dxgk_ddi_adapter_gone(adapter, "DxgkDdiMiracastDestroyContext"))
        return;
    adapter->ddi->DxgkDdiMiracastDestroyContext(adapter->ctx, context);
    TRACE_(dxgk, "%s: DxgkDdiMiracastDestroyContext(%p)\n", adapter->miniport->name, context);
}

NTSTATUS dxgk_ddi_miracast_io_control(struct dxgk_adapter *adapter, PVOID context, ULONG in_size, void *in,
                                      ULONG out_size, void *out, ULONG *returned)
{
    NTSTATUS status;

    if (!dxgk_ddi_has_miracast(adapter))
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiMiracastIoControl"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiMiracastIoControl(adapter->ctx, context, in_size, in, out_size, out, returned);
    DXGK_DDI_TRACE(adapter, "DxgkDdiMiracastIoControl", status, "%p, %u/%u bytes, %u returned", context,
                   (unsigned)in_size, (unsigned)out_size, (unsigned)*returned);
    return status;
}
