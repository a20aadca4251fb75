/*
 * The gateway's calls for the driver and its adapters: enumeration, the
 * adapter's start and removal, queries, escapes and GPU clock calibration
 * (see ddi.h).
 */
#include "ddi.h"

bool dxgk_ddi_table_complete(const DRIVER_INITIALIZATION_DATA *data)
{
    return data->KmtDdiEnumPhysicalDevices && data->DxgkDdiAddDevice && data->DxgkDdiStartDevice &&
           data->DxgkDdiQueryAdapterInfo && data->DxgkDdiCreateDevice && data->DxgkDdiDestroyDevice &&
           data->DxgkDdiCreateAllocation && data->DxgkDdiDestroyAllocation &&
           data->DxgkDdiOpenAllocation && data->DxgkDdiCloseAllocation;
}

NTSTATUS dxgk_ddi_enum_physical_devices(struct dxgk_miniport *mp, UINT *count, KMT_PHYSICAL_DEVICE *devices)
{
    UINT capacity = *count;
    NTSTATUS status = mp->ddi.KmtDdiEnumPhysicalDevices(mp->ddi.DriverContext, count, devices);

    TRACE_(dxgk, "%s: KmtDdiEnumPhysicalDevices(%u) -> %s, %u devices\n", mp->name, capacity,
           kmt_debugstr_status(status), status ? 0 : *count);
    return status;
}

void dxgk_ddi_unload(struct dxgk_miniport *mp)
{
    if (!mp->ddi.DxgkDdiUnload)
        return;
    mp->ddi.DxgkDdiUnload();
    TRACE_(dxgk, "%s: DxgkDdiUnload()\n", mp->name);
}

NTSTATUS dxgk_ddi_add_device(struct dxgk_adapter *adapter)
{
    NTSTATUS status = adapter->ddi->DxgkDdiAddDevice(&adapter->pdo, &adapter->ctx);

    DXGK_DDI_TRACE(adapter, "DxgkDdiAddDevice", status, "%s", adapter->pdo.LocationId);
    if (status)
        WARN_(dxgk, "%s: DxgkDdiAddDevice(%s) failed: %s\n", adapter->miniport->name,
              adapter->pdo.LocationId, kmt_debugstr_status(status));
    return status;
}

NTSTATUS dxgk_ddi_start_device(struct dxgk_adapter *adapter, DXGK_START_INFO *start, ULONG *children)
{
    NTSTATUS status = adapter->ddi->DxgkDdiStartDevice(adapter->ctx, start, &adapter->iface,
                                                        &adapter->num_sources, children);

    DXGK_DDI_TRACE(adapter, "DxgkDdiStartDevice", status, "%s", adapter->pdo.LocationId);
    adapter->started = !status;
    return status;
}

void dxgk_ddi_stop_device(struct dxgk_adapter *adapter)
{
    NTSTATUS status;

    if (!adapter->started || !adapter->ddi->DxgkDdiStopDevice || dxgk_ddi_adapter_gone(adapter, "DxgkDdiStopDevice"))
        return;
    status = adapter->ddi->DxgkDdiStopDevice(adapter->ctx);
    DXGK_DDI_TRACE(adapter, "DxgkDdiStopDevice", status, "%s", adapter->pdo.LocationId);
    adapter->started = false;
}

void dxgk_ddi_remove_device(struct dxgk_adapter *adapter)
{
    NTSTATUS status;

    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiRemoveDevice"))
        return;
    adapter->removed = true;
    if (!adapter->ddi->DxgkDdiRemoveDevice)
        return;
    status = adapter->ddi->DxgkDdiRemoveDevice(adapter->ctx);
    DXGK_DDI_TRACE(adapter, "DxgkDdiRemoveDevice", status, "%s", adapter->pdo.LocationId);
}

NTSTATUS dxgk_ddi_query_adapter_info(struct dxgk_adapter *adapter, DXGK_QUERYADAPTERINFOTYPE type,
                                     void *in, UINT in_size, void *out, UINT out_size)
{
    DXGKARG_QUERYADAPTERINFO args = {
        .Type = type,
        .pInputData = in,
        .InputDataSize = in_size,
        .pOutputData = out,
        .OutputDataSize = out_size,
    };
    NTSTATUS status;

    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiQueryAdapterInfo"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiQueryAdapterInfo(adapter->ctx, &args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiQueryAdapterInfo", status, "type %#x, %u bytes", type, out_size);
    return status;
}

NTSTATUS dxgk_ddi_escape(struct dxgk_adapter *adapter, DXGKARG_ESCAPE *args)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiEscape)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiEscape"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiEscape(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiEscape", status, "%u bytes, device %p, context %p",
                   args->PrivateDriverDataSize, args->hDevice, args->hContext);
    return status;
}

NTSTATUS dxgk_ddi_calibrate_gpu_clock(struct dxgk_adapter *adapter, UINT node, UINT engine,
                                      DXGKARG_CALIBRATEGPUCLOCK *args)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiCalibrateGpuClock)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiCalibrateGpuClock"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiCalibrateGpuClock(adapter->ctx, node, engine, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiCalibrateGpuClock", status, "node %u, engine %u: %llu Hz, gpu %llu, cpu %llu",
                   node, engine, (unsigned long long)args->GpuFrequency,
                   (unsigned long long)args->GpuClockCounter, (unsigned long long)args->CpuClockCounter);
    return status;
}
