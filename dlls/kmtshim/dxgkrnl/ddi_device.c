/*
 * The gateway's calls for devices (see ddi.h).  After DxgkDdiDestroyDevice
 * the device is the miniport's no more: ddi_device_gone() refuses every
 * later call naming it.
 */
#include "ddi.h"

NTSTATUS dxgk_ddi_create_device(struct dxgk_device *device, DXGK_DEVICEINFO *info)
{
    struct dxgk_adapter *adapter = device->adapter;
    DXGKARG_CREATEDEVICE args = {
        .hDevice = (HANDLE)device,        /* the core's handle, for callbacks */
        .pInfo = info,
    };
    NTSTATUS status = adapter->ddi->DxgkDdiCreateDevice(adapter->ctx, &args);

    DXGK_DDI_TRACE(adapter, "DxgkDdiCreateDevice", status, "device %#x", device->handle);
    if (!status && (!args.hDevice || args.hDevice == (HANDLE)device)) {
        ERR_(dxgk, "%s: DxgkDdiCreateDevice returned no device handle\n", adapter->miniport->name);
        return STATUS_UNSUCCESSFUL;
    }
    if (!status)
        device->driver_device = args.hDevice;
    return status;
}

void dxgk_ddi_destroy_device(struct dxgk_device *device)
{
    struct dxgk_adapter *adapter = device->adapter;
    NTSTATUS status;

    if (dxgk_ddi_device_gone(device, "DxgkDdiDestroyDevice"))
        return;
    device->ddi_destroyed = true;
    status = adapter->ddi->DxgkDdiDestroyDevice(device->driver_device);
    DXGK_DDI_TRACE(adapter, "DxgkDdiDestroyDevice", status, "%p", device->driver_device);
}
