/*
 * The gateway's calls for allocations: create, the device binding (open,
 * close), destroy, CPU access and the GPU mappings of the core's own memory
 * (see ddi.h).
 *
 * The batch calls take the core's allocation objects and build the
 * handle lists the DDIs want: on the stack for a few, from the heap for
 * more, and in chunks of a few when memory ran out, so a reclaim never
 * fails for want of a list.
 */
#include <stdlib.h>

#include "ddi.h"

#define DDI_BATCH 8

/* A list for `count` handles: `small` (DDI_BATCH entries) or the heap;
 * its capacity in *cap. */
static HANDLE *handle_list(HANDLE *small, UINT count, UINT *cap)
{
    HANDLE *list;

    if (count > DDI_BATCH && (list = malloc(count * sizeof(*list)))) {
        *cap = count;
        return list;
    }
    *cap = DDI_BATCH;
    return small;
}

static void handle_list_free(HANDLE *list, const HANDLE *small)
{
    if (list != small)
        free(list);
}

static void destroy_list(struct dxgk_adapter *adapter, const HANDLE *list, UINT count, HANDLE *resource,
                         bool destroy_resource);

/* A create that left an allocation without a handle: the ones it made go,
 * and the resource with them when the call was making it. */
static void undo_create(struct dxgk_adapter *adapter, DXGKARG_CREATEALLOCATION *args, bool new_resource)
{
    HANDLE small[DDI_BATCH], *list;
    UINT cap, i = 0;

    list = handle_list(small, args->NumAllocations, &cap);
    do {
        UINT n = 0;

        for (; i < args->NumAllocations && n < cap; i++)
            if (args->pAllocationInfo[i].hAllocation)
                list[n++] = args->pAllocationInfo[i].hAllocation;
        destroy_list(adapter, list, n, args->Flags.Resource ? &args->hResource : NULL,
                     new_resource && i == args->NumAllocations);
    } while (i < args->NumAllocations);
    handle_list_free(list, small);
}

NTSTATUS dxgk_ddi_create_allocation(struct dxgk_adapter *adapter, DXGKARG_CREATEALLOCATION *args)
{
    bool new_resource = args->Flags.Resource && !args->hResource;
    NTSTATUS status;

    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiCreateAllocation"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiCreateAllocation(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiCreateAllocation", status, "%u allocations, resource %d, hResource %p",
                   args->NumAllocations, args->Flags.Resource, args->hResource);
    if (status)
        return status;
    for (UINT i = 0; i < args->NumAllocations; i++) {
        if (!args->pAllocationInfo[i].hAllocation) {
            ERR_(dxgk, "%s: DxgkDdiCreateAllocation returned no handle for allocation %u\n",
                 adapter->miniport->name, i);
            undo_create(adapter, args, new_resource);
            return STATUS_UNSUCCESSFUL;
        }
    }
    return STATUS_SUCCESS;
}

static void close_list(struct dxgk_device *device, const HANDLE *list, UINT count)
{
    DXGKARG_CLOSEALLOCATION args = { count, list };
    struct dxgk_adapter *adapter = device->adapter;
    NTSTATUS status;

    if (!count || dxgk_ddi_device_gone(device, "DxgkDdiCloseAllocation"))
        return;
    status = adapter->ddi->DxgkDdiCloseAllocation(device->driver_device, &args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiCloseAllocation", status, "%u", count);
    if (status)
        WARN_(dxgk, "%s: DxgkDdiCloseAllocation failed: %s\n", adapter->miniport->name,
              kmt_debugstr_status(status));
}

NTSTATUS dxgk_ddi_open_allocations(struct dxgk_device *device, struct dxgk_allocation **allocs, UINT count,
                                   const void *resource_data, UINT resource_data_size)
{
    DXGK_OPENALLOCATIONINFO small[DDI_BATCH], *open = small;
    struct dxgk_adapter *adapter = device->adapter;
    DXGKARG_OPENALLOCATION args = { 0 };
    NTSTATUS status;
    UINT i, missing = 0;

    if (dxgk_ddi_device_gone(device, "DxgkDdiOpenAllocation"))
        return STATUS_INVALID_DEVICE_STATE;
    if (count > DDI_BATCH && !(open = malloc(count * sizeof(*open))))
        return STATUS_NO_MEMORY;
    for (i = 0; i < count; i++) {
        open[i] = (DXGK_OPENALLOCATIONINFO){
            .hAllocation = allocs[i]->handle,
            .pPrivateDriverData = allocs[i]->private_data,
            .PrivateDriverDataSize = allocs[i]->private_data_size,
        };
    }
    args.NumAllocations = count;
    args.pOpenAllocation = open;
    args.pPrivateDriverData = (void *)resource_data;   /* read-only for the miniport */
    args.PrivateDriverSize = resource_data_size;
    args.Flags.Create = 1;
    status = adapter->ddi->DxgkDdiOpenAllocation(device->driver_device, &args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiOpenAllocation", status, "%u, Create", count);
    if (!status) {
        /* bound: every one that has a binding, so a failure closes them */
        for (i = 0; i < count; i++) {
            allocs[i]->device_allocation = open[i].hDeviceSpecificAllocation;
            allocs[i]->opened = open[i].hDeviceSpecificAllocation != NULL;
            missing += !allocs[i]->opened;
        }
        if (missing) {
            ERR_(dxgk, "%s: DxgkDdiOpenAllocation returned a NULL device handle\n", adapter->miniport->name);
            dxgk_ddi_close_allocations(device, allocs, count);
            status = STATUS_UNSUCCESSFUL;
        }
    }
    if (open != small)
        free(open);
    return status;
}

void dxgk_ddi_close_allocations(struct dxgk_device *device, struct dxgk_allocation **allocs, UINT count)
{
    HANDLE small[DDI_BATCH], *list;
    UINT cap, i = 0;

    list = handle_list(small, count, &cap);
    while (i < count) {
        UINT n = 0;

        for (; i < count && n < cap; i++) {
            if (!allocs[i]->opened)
                continue;
            list[n++] = allocs[i]->device_allocation;
            allocs[i]->opened = false;
        }
        close_list(device, list, n);
    }
    handle_list_free(list, small);
}

static void destroy_list(struct dxgk_adapter *adapter, const HANDLE *list, UINT count, HANDLE *resource,
                         bool destroy_resource)
{
    DXGKARG_DESTROYALLOCATION args = {
        .NumAllocations = count,
        .pAllocationList = list,
        .hResource = resource ? *resource : NULL,
    };
    NTSTATUS status;

    args.Flags.DestroyResource = destroy_resource && args.hResource;
    if ((!count && !args.Flags.DestroyResource) || dxgk_ddi_adapter_gone(adapter, "DxgkDdiDestroyAllocation"))
        return;
    status = adapter->ddi->DxgkDdiDestroyAllocation(adapter->ctx, &args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiDestroyAllocation", status, "%u, hResource %p, DestroyResource %u", count,
                   args.hResource, args.Flags.DestroyResource);
    if (status)
        WARN_(dxgk, "%s: DxgkDdiDestroyAllocation failed: %s\n", adapter->miniport->name,
              kmt_debugstr_status(status));
    /* The KMD may rewrite hResource when the resource stays. */
    if (resource && !destroy_resource)
        *resource = args.hResource;
}

void dxgk_ddi_destroy_allocations(struct dxgk_adapter *adapter, struct dxgk_allocation **allocs, UINT count,
                                  HANDLE *resource, bool destroy_resource)
{
    HANDLE small[DDI_BATCH], *list;
    UINT cap, i = 0;

    for (i = 0; i < count; i++) {
        if (allocs[i]->opened) {
            ERR_(dxgk, "%s: allocation %#x destroyed while bound to its device: closing it first\n",
                 adapter->miniport->name, allocs[i]->handle);
            dxgk_ddi_close_allocations(allocs[i]->device, &allocs[i], 1);
        }
    }
    list = handle_list(small, count, &cap);
    i = 0;
    do {
        UINT n = 0;

        for (; i < count && n < cap; i++)
            list[n++] = allocs[i]->driver_allocation;
        /* the resource goes with the last of its allocations */
        destroy_list(adapter, list, n, resource, destroy_resource && i == count);
    } while (i < count);
    handle_list_free(list, small);
}

NTSTATUS dxgk_ddi_export_allocation(struct dxgk_adapter *adapter, HANDLE allocation, int *fd)
{
    NTSTATUS status;

    *fd = -1;
    if (!adapter->ddi->KmtDdiExportAllocation)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "KmtDdiExportAllocation"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->KmtDdiExportAllocation(adapter->ctx, allocation, fd);
    DXGK_DDI_TRACE(adapter, "KmtDdiExportAllocation", status, "%p -> fd %d", allocation, *fd);
    if (!status && *fd < 0) {
        ERR_(dxgk, "%s: KmtDdiExportAllocation returned no fd\n", adapter->miniport->name);
        return STATUS_UNSUCCESSFUL;
    }
    if (status)
        *fd = -1;
    return status;
}

NTSTATUS dxgk_ddi_import_allocation(struct dxgk_adapter *adapter, KMTARG_IMPORTALLOCATION *args)
{
    NTSTATUS status;

    args->hAllocation = NULL;
    if (!adapter->ddi->KmtDdiImportAllocation)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "KmtDdiImportAllocation"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->KmtDdiImportAllocation(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "KmtDdiImportAllocation", status, "fd %d, %llu bytes -> %p", args->Fd,
                   (unsigned long long)args->Size, args->hAllocation);
    if (!status && !args->hAllocation) {
        ERR_(dxgk, "%s: KmtDdiImportAllocation returned no handle\n", adapter->miniport->name);
        return STATUS_UNSUCCESSFUL;
    }
    return status;
}

NTSTATUS dxgk_ddi_lock(struct dxgk_adapter *adapter, DXGKARG_LOCK *args)
{
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiLock)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "DxgkDdiLock"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->DxgkDdiLock(adapter->ctx, args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiLock", status, "%p, flags %#x, %u pages", args->hAllocation,
                   args->Flags.Value, args->NumPages);
    if (!status && !args->pData) {
        ERR_(dxgk, "%s: DxgkDdiLock returned no address\n", adapter->miniport->name);
        return STATUS_UNSUCCESSFUL;
    }
    return status;
}

void dxgk_ddi_unlock(struct dxgk_adapter *adapter, HANDLE allocation, void *address)
{
    DXGKARG_UNLOCK args = { allocation, address };
    NTSTATUS status;

    if (!adapter->ddi->DxgkDdiUnlock || dxgk_ddi_adapter_gone(adapter, "DxgkDdiUnlock"))
        return;
    status = adapter->ddi->DxgkDdiUnlock(adapter->ctx, &args);
    DXGK_DDI_TRACE(adapter, "DxgkDdiUnlock", status, "%p", allocation);
}

bool dxgk_ddi_has_system_memory_mapping(const struct dxgk_adapter *adapter)
{
    return adapter->ddi->KmtDdiMapSystemMemory != NULL;
}

NTSTATUS dxgk_ddi_map_system_memory(struct dxgk_adapter *adapter, void *memory, SIZE_T size,
                                    D3DGPU_VIRTUAL_ADDRESS *va)
{
    NTSTATUS status;

    if (!adapter->ddi->KmtDdiMapSystemMemory)
        return STATUS_NOT_SUPPORTED;
    if (dxgk_ddi_adapter_gone(adapter, "KmtDdiMapSystemMemory"))
        return STATUS_INVALID_DEVICE_STATE;
    status = adapter->ddi->KmtDdiMapSystemMemory(adapter->ctx, memory, size, va);
    DXGK_DDI_TRACE(adapter, "KmtDdiMapSystemMemory", status, "%p, %zu bytes", memory, (size_t)size);
    return status;
}

void dxgk_ddi_unmap_system_memory(struct dxgk_adapter *adapter, D3DGPU_VIRTUAL_ADDRESS va)
{
    NTSTATUS status;

    if (!va || !adapter->ddi->KmtDdiUnmapSystemMemory || dxgk_ddi_adapter_gone(adapter, "KmtDdiUnmapSystemMemory"))
        return;
    status = adapter->ddi->KmtDdiUnmapSystemMemory(adapter->ctx, va);
    DXGK_DDI_TRACE(adapter, "KmtDdiUnmapSystemMemory", status, "%#llx", (unsigned long long)va);
}
