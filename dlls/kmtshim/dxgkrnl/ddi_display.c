/*
 * The gateway's calls for display timing (see ddi.h and the "display
 * timing" part of d3dkmddi.h): the vsync interrupt switch, the scan line,
 * the monitor connection of a child, the mode of a source.
 */
#include "ddi.h"

NTSTATUS dxgk_ddi_control_interrupt(struct dxgk_adapter *adapter, DXGK_INTERRUPT_TYPE type, bool enable)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiControlInterrupt)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiControlInterrupt"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiControlInterrupt(adapter->ctx, type, enable ? TRUE : FALSE);
    DXGK_DDI_TRACE(adapter, "DxgkDdiControlInterrupt", status, "type %d, %s", (int)type,
                   enable ? "enable" : "disable");
    return status;
}

NTSTATUS dxgk_ddi_get_scan_line(struct dxgk_adapter *adapter, DXGKARG_GETSCANLINE *args)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiGetScanLine)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiGetScanLine"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiGetScanLine(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiGetScanLine", status, "target %u, line %u%s", args->VidPnTargetId,
                   args->ScanLine, args->InVerticalBlank ? ", in vblank" : "");
    return status;
}

/* Without the DDI every child counts as connected. */
NTSTATUS dxgk_ddi_query_child_status(struct dxgk_adapter *adapter, DXGK_CHILD_STATUS *child,
                                     bool non_destructive)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiQueryChildStatus) {
        child->HotPlug.Connected = TRUE;
        return STATUS_SUCCESS;
    }
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiQueryChildStatus"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiQueryChildStatus(adapter->ctx, child, non_destructive ? TRUE : FALSE);
    DXGK_DDI_TRACE(adapter, "DxgkDdiQueryChildStatus", status, "child %u, type %d%s -> %s",
                   (unsigned)child->ChildUid, (int)child->Type, non_destructive ? ", non-destructive" : "",
                   child->HotPlug.Connected ? "connected" : "disconnected");
    return status;
}
