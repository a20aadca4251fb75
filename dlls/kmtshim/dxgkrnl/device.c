/*
 * Devices: CreateDevice, DestroyDevice and its cascade.
 */
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "vidsch.h"
#include "base/kmt_spare.h"
#include "base/kmt_debug.h"
#include "ddi.h"

static void device_release(struct kmt_object *obj)
{
    struct dxgk_device *device = (struct dxgk_device *)obj;

    kmt_rwlock_destroy(&device->rwlock);
    kmt_mutex_destroy(&device->list_lock);
    kmt_cond_destroy(&device->children_gone);
    dxgk_adapter_put(device->adapter);
    kmt_spare_free(KMT_SPARE_DEVICE, device, sizeof(*device));
    dxgk_count_object(-1);
}

NTSTATUS dxgk_create_device(D3DKMT_HANDLE hAdapter, D3DKMT_CREATEDEVICEFLAGS flags,
                            D3DKMT_HANDLE *out)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(hAdapter);
    DXGK_DEVICEINFO info = { 0 };
    struct dxgk_device *device;
    NTSTATUS status;
    D3DKMT_HANDLE h;

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    if (!(device = kmt_spare_zalloc(KMT_SPARE_DEVICE, sizeof(*device)))) {
        dxgk_adapter_put(adapter);
        return STATUS_NO_MEMORY;
    }
    if (!(h = hmgr_alloc(&dxgk_process.handles))) {
        kmt_spare_free(KMT_SPARE_DEVICE, device, sizeof(*device));
        dxgk_adapter_put(adapter);
        return STATUS_NO_MEMORY;
    }
    kmt_object_init(&device->obj, HMGR_TYPE_DEVICE, device_release);
    device->handle = h;
    device->adapter = adapter;             /* the reference taken above */
    kmt_rwlock_init(&device->rwlock);
    kmt_mutex_init(&device->list_lock);
    kmt_cond_init(&device->children_gone);
    list_init(&device->resources);
    list_init(&device->allocations);
    list_init(&device->contexts);
    list_init(&device->syncobjs);
    atomic_init(&device->execution_state, D3DKMT_DEVICEEXECUTION_ACTIVE);
    dxgk_count_object(+1);

    /* on the process list first: the DDI may make context allocations */
    kmt_mutex_lock(&dxgk_process.devices_lock);
    list_add_tail(&dxgk_process.devices, &device->entry);
    kmt_mutex_unlock(&dxgk_process.devices_lock);
    if ((status = dxgk_ddi_create_device(device, &info))) {
        kmt_mutex_lock(&dxgk_process.devices_lock);
        list_remove(&device->entry);
        kmt_mutex_unlock(&dxgk_process.devices_lock);
        dxgk_free_context_allocations(adapter, device, NULL);
        hmgr_cancel(&dxgk_process.handles, h);
        device_release(&device->obj);
        return status;
    }
    (void)flags;                            /* LegacyMode & co. need no kernel state */

    hmgr_publish(&dxgk_process.handles, h, &device->obj);
    *out = h;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_destroy_device(D3DKMT_HANDLE h)
{
    struct dxgk_device *device;

    /* The handle goes first, so no new call can reach the device. */
    device = (struct dxgk_device *)hmgr_remove(&dxgk_process.handles, h, HMGR_TYPE_DEVICE);
    if (!device)
        return STATUS_INVALID_PARAMETER;
    atomic_store(&device->handle_gone, true);  /* before the bump below (present_flip.c) */
    /* its vblank waits and queued flips hold no reference: they end now,
     * before the wait for the calls in flight */
    dxgk_vblank_device_gone(device->adapter, h);
    dxgk_flip_device_gone(device->adapter, h);

    /* Wait for the calls in flight on the device, then keep them out. */
    kmt_rwlock_wrlock(&device->rwlock);
    device->destroyed = true;
    kmt_mutex_lock(&dxgk_process.devices_lock);
    list_remove(&device->entry);
    kmt_mutex_unlock(&dxgk_process.devices_lock);
    /* Its VidPn sources are free again, as when Windows destroys an owner. */
    dxgk_vidpn_release_device(device);

    dxgk_device_destroy_children(device);

    dxgk_ddi_destroy_device(device);
    dxgk_free_context_allocations(device->adapter, device, NULL);
    kmt_rwlock_unlock(&device->rwlock);
    dxgk_device_put(device);
    /* As on Windows, the driver's status does not fail a valid destroy. */
    return STATUS_SUCCESS;
}
