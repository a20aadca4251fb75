/*
 * DDI calls that several paths make, in one place so each is traced the
 * same way and argument blocks are built once.
 */
#include "dxgkrnl.h"
#include "base/kmt_debug.h"

void dxgk_ddi_close_allocations(struct dxgk_device *device, const HANDLE *list, UINT count)
{
    DXGKARG_CLOSEALLOCATION args = { count, list };
    NTSTATUS status;

    if (!count)
        return;
    status = device->adapter->ddi->DxgkDdiCloseAllocation(device->driver_device, &args);
    TRACE_(dxgk, "DxgkDdiCloseAllocation(%u) -> %s\n", count, kmt_debugstr_status(status));
    if (status)
        WARN_(dxgk, "%s: DxgkDdiCloseAllocation failed: %s\n", device->adapter->miniport->name,
              kmt_debugstr_status(status));
}

void dxgk_ddi_destroy_allocations(struct dxgk_adapter *adapter, const HANDLE *list, UINT count,
                                  HANDLE *resource, bool destroy_resource)
{
    DXGKARG_DESTROYALLOCATION args = {
        .NumAllocations = count,
        .pAllocationList = list,
        .hResource = resource ? *resource : NULL,
    };
    NTSTATUS status;

    args.Flags.DestroyResource = destroy_resource && args.hResource;
    if (!count && !args.Flags.DestroyResource)
        return;
    status = adapter->ddi->DxgkDdiDestroyAllocation(adapter->ctx, &args);
    TRACE_(dxgk, "DxgkDdiDestroyAllocation(%u, hResource %p, DestroyResource %u) -> %s\n", count,
           args.hResource, args.Flags.DestroyResource, kmt_debugstr_status(status));
    if (status)
        WARN_(dxgk, "%s: DxgkDdiDestroyAllocation failed: %s\n", adapter->miniport->name,
              kmt_debugstr_status(status));
    /* The KMD may rewrite hResource when the resource stays. */
    if (resource && !destroy_resource)
        *resource = args.hResource;
}
