/*
 * Lock / Unlock / Lock2 / Unlock2: CPU access to allocations.
 *
 * Locks count per allocation, not per caller (as dxgkrnl does): the first
 * lock asks the miniport for a mapping (DxgkDdiLock), nested locks reuse it,
 * the last unlock releases it (DxgkDdiUnlock).  A locked address is
 * readable and writable whatever the flags say (Windows guarantees it);
 * ReadOnly tells the miniport it need not push CPU writes back, so when a
 * nested lock of a ReadOnly mapping may write, the last unlock hands the
 * miniport a WriteOnly lock+unlock to push them.  Existing-sysmem allocations
 * are the caller's own memory and never go to the miniport.  A lock waits
 * for queued GPU work on the allocation unless DonotWait (then
 * STATUS_GRAPHICS_ALLOCATION_BUSY) or IgnoreSync.
 */
#include <stdlib.h>

#include "dxgkrnl.h"
#include "base/kmt_debug.h"
#include "ddi.h"

NTSTATUS dxgk_lock(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hAllocation, D3DDDICB_LOCKFLAGS flags,
                   UINT num_pages, const UINT *pages, void **data, D3DGPU_VIRTUAL_ADDRESS *gpuva)
{
    struct dxgk_allocation *alloc;
    struct dxgk_device *device;
    struct dxgk_adapter *adapter;
    NTSTATUS status = STATUS_SUCCESS;

    if (!(device = dxgk_device_acquire(hDevice)))
        return STATUS_INVALID_PARAMETER;
    if (!(alloc = dxgk_allocation_lookup(device, hAllocation))) {
        dxgk_device_release(device);
        return STATUS_INVALID_PARAMETER;
    }
    adapter = device->adapter;

    kmt_mutex_lock(&alloc->cpu_lock);
    if (alloc->gpu_refs && !flags.IgnoreSync) {
        if (flags.DonotWait) {
            status = STATUS_GRAPHICS_ALLOCATION_BUSY;
            goto out;
        }
        while (alloc->gpu_refs)
            kmt_cond_wait(&alloc->gpu_idle, &alloc->cpu_lock);
    }
    if (alloc->lock_count == UINT32_MAX) {
        status = STATUS_GRAPHICS_TOO_MANY_REFERENCES;
        goto out;
    }
    if (alloc->sysmem) {
        alloc->cpu_address = (void *)alloc->sysmem;
    } else if (!alloc->lock_count) {
        DXGKARG_LOCK args = { 0 };

        args.hAllocation = alloc->driver_allocation;
        args.NumPages = num_pages;
        args.pPages = pages;
        args.Flags.ReadOnly = flags.ReadOnly;
        args.Flags.WriteOnly = flags.WriteOnly;
        args.Flags.DonotWait = flags.DonotWait;
        args.Flags.IgnoreSync = flags.IgnoreSync;
        args.Flags.Discard = flags.Discard;
        if ((status = dxgk_ddi_lock(adapter, &args)))
            goto out;
        alloc->cpu_address = args.pData;
        alloc->mapped_read_only = flags.ReadOnly;
        alloc->written_under_read_only = false;
        *gpuva = args.GpuVirtualAddress;
    } else if (!flags.ReadOnly) {
        alloc->written_under_read_only = alloc->mapped_read_only;
    }
    alloc->lock_count++;
    *data = alloc->cpu_address;
out:
    kmt_mutex_unlock(&alloc->cpu_lock);
    dxgk_allocation_put(alloc);
    dxgk_device_release(device);
    return status;
}

/* Lock count minus the earlier entries naming the same allocation: what is
 * left for this entry to unlock. */
static bool unlockable(struct dxgk_allocation **allocs, UINT i)
{
    unsigned before = 0;

    for (UINT j = 0; j < i; j++)
        if (allocs[j] == allocs[i])
            before++;
    return allocs[i]->lock_count > before;
}

/* The CPU wrote through a mapping the miniport made for a ReadOnly lock:
 * a WriteOnly lock (nothing fetched, no wait) and its unlock make the
 * miniport push the memory back as after any write lock. */
static void push_cpu_writes(struct dxgk_allocation *alloc)
{
    struct dxgk_adapter *adapter = alloc->device->adapter;
    DXGKARG_LOCK args = { .hAllocation = alloc->driver_allocation };
    NTSTATUS status;

    alloc->written_under_read_only = false;
    args.Flags.WriteOnly = 1;
    args.Flags.IgnoreSync = 1;
    if ((status = dxgk_ddi_lock(adapter, &args))) {
        ERR_(dxgk, "%s: CPU writes under a nested lock may not reach the GPU: %s\n",
             adapter->miniport->name, kmt_debugstr_status(status));
        return;
    }
    dxgk_ddi_unlock(adapter, alloc->driver_allocation, args.pData);
}

static void unlock_one(struct dxgk_allocation *alloc)
{
    if (--alloc->lock_count || alloc->sysmem) {
        if (!alloc->lock_count)
            alloc->cpu_address = NULL;
        return;
    }
    dxgk_ddi_unlock(alloc->device->adapter, alloc->driver_allocation, alloc->cpu_address);
    alloc->cpu_address = NULL;
    if (alloc->written_under_read_only)
        push_cpu_writes(alloc);
}

NTSTATUS dxgk_unlock(D3DKMT_HANDLE hDevice, const D3DKMT_HANDLE *handles, UINT count)
{
    struct dxgk_allocation *small[8], **allocs = small;
    struct dxgk_device *device;
    NTSTATUS status = STATUS_SUCCESS;
    UINT found = 0;

    if (!count || count > D3DKMT_CREATEALLOCATION_MAX || !handles)
        return STATUS_INVALID_PARAMETER;
    if (!(device = dxgk_device_acquire(hDevice)))
        return STATUS_INVALID_PARAMETER;
    if (count > 8 && !(allocs = malloc(count * sizeof(*allocs)))) {
        dxgk_device_release(device);
        return STATUS_NO_MEMORY;
    }
    for (; found < count; found++)
        if (!(allocs[found] = dxgk_allocation_lookup(device, handles[found]))) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
    /* All of them or none: check every lock count first. */
    for (UINT i = 0; !status && i < count; i++) {
        kmt_mutex_lock(&allocs[i]->cpu_lock);
        if (!unlockable(allocs, i))
            status = STATUS_INVALID_PARAMETER;
        kmt_mutex_unlock(&allocs[i]->cpu_lock);
    }
    for (UINT i = 0; !status && i < count; i++) {
        kmt_mutex_lock(&allocs[i]->cpu_lock);
        if (allocs[i]->lock_count)      /* a racing unlock may have won */
            unlock_one(allocs[i]);
        kmt_mutex_unlock(&allocs[i]->cpu_lock);
    }
    for (UINT i = 0; i < found; i++)
        dxgk_allocation_put(allocs[i]);
    if (allocs != small)
        free(allocs);
    dxgk_device_release(device);
    return status;
}

void dxgk_allocation_unmap(struct dxgk_allocation *alloc)
{
    kmt_mutex_lock(&alloc->cpu_lock);
    if (alloc->lock_count) {
        alloc->lock_count = 1;
        alloc->written_under_read_only = false;   /* going away: nothing to push */
        unlock_one(alloc);
    }
    kmt_mutex_unlock(&alloc->cpu_lock);
}
