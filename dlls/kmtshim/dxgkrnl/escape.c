/*
 * Escape: driver-private requests routed to DxgkDdiEscape, and Wine's own
 * escapes (escape_wine.c).
 */
#include "dxgkrnl.h"
#include "vidsch.h"
#include "base/kmt_debug.h"
#include "ddi.h"
#include "resource_share.h"

NTSTATUS dxgk_escape(const D3DKMT_ESCAPE *desc, void *data)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(desc->hAdapter);
    struct dxgk_device *device = NULL;
    struct dxgk_context *ctx = NULL;
    DXGKARG_ESCAPE args = { 0 };
    NTSTATUS status;

    /* Wine's own escapes name their object in hContext, with no adapter */
    if (desc->Type == D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE || desc->Type == D3DKMT_ESCAPE_SET_PRESENT_RECT_WINE) {
        if (adapter)
            dxgk_adapter_put(adapter);
        return desc->Type == D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE
            ? dxgk_update_resource_runtime(desc->hContext, data, desc->PrivateDriverDataSize)
            : dxgk_set_present_rect(desc->hContext, data, desc->PrivateDriverDataSize);
    }
    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    if (!data || !desc->PrivateDriverDataSize || desc->PrivateDriverDataSize > DXGK_MAX_PRIVATE_DATA) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    /* dxgkrnl's own escapes (VIDMM, VIDSCH, TDR control...) are not
     * re-created; only the driver's private channel is. */
    if (desc->Type != D3DKMT_ESCAPE_DRIVERPRIVATE) {
        status = STATUS_NOT_SUPPORTED;
        goto out;
    }
    if (desc->hDevice) {
        device = dxgk_device_acquire(desc->hDevice);
        if (!device || device->adapter != adapter) {
            status = STATUS_INVALID_PARAMETER;
            goto out;
        }
        args.hDevice = device->driver_device;
    }
    if (desc->hContext) {
        /* a context must come with the device that owns it (docs) */
        ctx = device ? (struct dxgk_context *)
            hmgr_lookup(&dxgk_process.handles, desc->hContext, HMGR_TYPE_CONTEXT) : NULL;
        if (!ctx || ctx->device != device || ctx->destroyed) {
            status = STATUS_INVALID_PARAMETER;
            goto out;
        }
        args.hContext = ctx->driver_context;
    }
    args.Flags = desc->Flags;
    args.pPrivateDriverData = data;
    args.PrivateDriverDataSize = desc->PrivateDriverDataSize;
    status = dxgk_ddi_escape(adapter, &args);
out:
    if (ctx)
        dxgk_context_put(ctx);
    if (device)
        dxgk_device_release(device);
    dxgk_adapter_put(adapter);
    return status;
}
