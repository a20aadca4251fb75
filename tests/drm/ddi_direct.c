/*
 * The DRM miniport started outside the core (ddi_direct.h).
 */
#include "config.h"

#include <string.h>

#include "ddi_direct.h"
#include "miniports/builtin.h"

DRIVER_INITIALIZATION_DATA ddi_direct;

static NTSTATUS APIENTRY capture(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *init)
{
    (void)driver;
    memcpy(&ddi_direct, init, sizeof(ddi_direct));
    return STATUS_SUCCESS;
}

UINT ddi_direct_devices(KMT_PHYSICAL_DEVICE *out)
{
    KMT_DXGKRNL_EXPORTS exports = { sizeof(exports), KMT_MINIPORT_INTERFACE_VERSION, capture };
    UINT count = KMT_MAX_PHYSICAL_DEVICES;

    if (!ddi_direct.DxgkDdiCreateAllocation && KmtDrmMiniportDriverEntry(NULL, &exports))
        return 0;
    if (ddi_direct.KmtDdiEnumPhysicalDevices(ddi_direct.DriverContext, &count, out))
        return 0;
    return count;
}

PVOID ddi_direct_start(const char *location)
{
    static KMT_PHYSICAL_DEVICE devices[KMT_MAX_PHYSICAL_DEVICES];
    DXGKRNL_INTERFACE iface = { .Size = sizeof(iface), .Version = KMT_MINIPORT_INTERFACE_VERSION };
    DXGK_START_INFO start = { 0 };
    UINT count = ddi_direct_devices(devices);
    ULONG sources, children;
    PVOID ctx;

    for (UINT i = 0; i < count; i++) {
        if (strcmp(devices[i].LocationId, location))
            continue;
        if (ddi_direct.DxgkDdiAddDevice(&devices[i], &ctx))
            return NULL;
        if (ddi_direct.DxgkDdiStartDevice(ctx, &start, &iface, &sources, &children)) {
            ddi_direct.DxgkDdiRemoveDevice(ctx);
            return NULL;
        }
        return ctx;
    }
    return NULL;
}

void ddi_direct_stop(PVOID adapter)
{
    ddi_direct.DxgkDdiStopDevice(adapter);
    ddi_direct.DxgkDdiRemoveDevice(adapter);
}
