/*
 * CreateAllocation / CreateAllocation2: standalone allocations, resources,
 * standard existing-heap allocations, CreateShared.
 *
 * All or nothing: object memory and handles are reserved before the
 * miniport is called; a failure at any step (DDI create, DDI open, adding to
 * a resource destroyed meanwhile) undoes every earlier step, so a failed
 * call leaves no handle, no miniport object and no memory behind.
 */
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "base/kmt_debug.h"
#include "base/user_memory.h"

#define KMT_PAGE_SIZE 4096u
#define SMALL_BATCH 8

/* Allocations being created by this thread: DxgkCbGetHandleData must
 * resolve their handles before they are published. */
static __thread struct dxgk_allocation **creating;
static __thread UINT creating_count;

struct dxgk_allocation *dxgk_allocation_find_creating(D3DKMT_HANDLE h)
{
    for (UINT i = 0; i < creating_count; i++)
        if (creating[i]->handle == h)
            return creating[i];
    return NULL;
}

void dxgk_allocation_put(struct dxgk_allocation *alloc)
{
    kmt_object_put(&alloc->obj);
}

struct dxgk_allocation *dxgk_allocation_lookup(struct dxgk_device *device, D3DKMT_HANDLE h)
{
    struct dxgk_allocation *alloc =
        (struct dxgk_allocation *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_ALLOCATION);

    if (alloc && alloc->device != device) {
        dxgk_allocation_put(alloc);
        return NULL;
    }
    return alloc;
}

void dxgk_allocation_free(struct dxgk_allocation *alloc)
{
    kmt_mutex_lock(&alloc->cpu_lock);
    if (alloc->gpu_refs) {
        alloc->free_pending = true;      /* dxgk_allocation_gpu_unref() frees it */
        kmt_mutex_unlock(&alloc->cpu_lock);
        return;
    }
    kmt_mutex_unlock(&alloc->cpu_lock);
    kmt_mutex_destroy(&alloc->cpu_lock);
    kmt_cond_destroy(&alloc->gpu_idle);
    free(alloc);                         /* and its private data, which trails it */
    dxgk_count_object(-1);
}

/* One block for the object and its private data: one malloc and one free
 * per allocation, not two (these are the hottest objects there are). */
static struct dxgk_allocation *allocation_new(struct dxgk_device *device, const struct dxgk_alloc_request *req)
{
    struct dxgk_allocation *alloc = malloc(sizeof(*alloc) + req->private_data_size);

    if (!alloc)
        return NULL;
    *alloc = (struct dxgk_allocation){
        .device = device,
        .sysmem = req->sysmem,
        .private_data = req->private_data_size ? alloc + 1 : NULL,
        .private_data_size = req->private_data_size,
    };
    if (req->private_data_size)
        memcpy(alloc->private_data, req->private_data, req->private_data_size);
    kmt_object_init(&alloc->obj, HMGR_TYPE_ALLOCATION, dxgk_allocation_last_ref);
    list_init(&alloc->entry);
    kmt_mutex_init(&alloc->cpu_lock);
    kmt_cond_init(&alloc->gpu_idle);
    dxgk_count_object(+1);
    return alloc;
}

static void *dup_blob(const void *data, UINT size)
{
    void *copy;

    if (!size)
        return NULL;
    if ((copy = malloc(size)))
        memcpy(copy, data, size);
    return copy;
}

static struct dxgk_resource *resource_new(struct dxgk_device *device, const struct dxgk_create_allocation *a)
{
    struct dxgk_resource *res = calloc(1, sizeof(*res));

    if (!res)
        return NULL;
    res->runtime_data = dup_blob(a->runtime_data, a->runtime_data_size);
    res->driver_data = a->standard ? NULL : dup_blob(a->driver_data, a->driver_data_size);
    if ((a->runtime_data_size && !res->runtime_data) ||
        (!a->standard && a->driver_data_size && !res->driver_data)) {
        free(res->runtime_data);
        free(res->driver_data);
        free(res);
        return NULL;
    }
    res->runtime_data_size = a->runtime_data_size;
    res->driver_data_size = a->standard ? 0 : a->driver_data_size;
    kmt_object_init(&res->obj, HMGR_TYPE_RESOURCE, dxgk_resource_last_ref);
    kmt_mutex_init(&res->ddi_lock);
    list_init(&res->entry);
    list_init(&res->allocations);
    res->device = device;
    res->standard = a->standard != NULL;
    res->shared = a->flags.CreateShared;
    dxgk_count_object(+1);
    return res;
}

void dxgk_resource_free(struct dxgk_resource *res)
{
    kmt_mutex_destroy(&res->ddi_lock);
    free(res->runtime_data);
    free(res->driver_data);
    free(res);
    dxgk_count_object(-1);
}

static UINT flags_value(D3DKMT_CREATEALLOCATIONFLAGS f)
{
    UINT v;
    memcpy(&v, &f, sizeof(v));
    return v;
}

/* Windows' rules for the descriptor, before any handle is looked at. */
static NTSTATUS validate_create(const struct dxgk_create_allocation *a)
{
    const D3DKMT_CREATEALLOCATIONFLAGS f = a->flags;

    if (flags_value(f) >> 22)
        return STATUS_INVALID_PARAMETER;           /* reserved bits */
    if (!a->count || a->count > D3DKMT_CREATEALLOCATION_MAX)
        return STATUS_INVALID_PARAMETER;
    if (f.CreateShared && !f.CreateResource)
        return STATUS_INVALID_PARAMETER;
    if (a->runtime_data_size > DXGK_MAX_PRIVATE_DATA || (a->runtime_data_size && !a->runtime_data))
        return STATUS_INVALID_PARAMETER;

    if (f.StandardAllocation) {
        const D3DKMT_CREATESTANDARDALLOCATION *std = a->standard;

        /* pStandardAllocation shares its slot with pPrivateDriverData. */
        if (!std || a->driver_data_size || a->count != 1 || !f.ExistingSysMem)
            return STATUS_INVALID_PARAMETER;
        if (std->Type != D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP || std->Flags.Value)
            return STATUS_INVALID_PARAMETER;
        if (!std->ExistingHeapData.Size || std->ExistingHeapData.Size % KMT_PAGE_SIZE)
            return STATUS_INVALID_PARAMETER;
    } else if (a->driver_data_size > DXGK_MAX_PRIVATE_DATA || (a->driver_data_size && !a->driver_data)) {
        return STATUS_INVALID_PARAMETER;
    }

    for (UINT i = 0; i < a->count; i++) {
        const struct dxgk_alloc_request *r = &a->allocs[i];

        if (r->private_data_size > DXGK_MAX_PRIVATE_DATA || (r->private_data_size && !r->private_data))
            return STATUS_INVALID_PARAMETER;
        if (f.ExistingSysMem) {
            if (!r->sysmem || (uintptr_t)r->sysmem % KMT_PAGE_SIZE)
                return STATUS_INVALID_PARAMETER;
        } else if (r->sysmem) {
            return STATUS_INVALID_PARAMETER;
        }
    }

    /* Features kmtshim does not implement: say so instead of faking them. */
    if (f.ExistingSection || f.CreateProtected || f.CrossAdapter || f.OpenCrossAdapter ||
        f.WriteWatch || f.PhysicallyContiguous)
        return STATUS_NOT_SUPPORTED;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_create_allocation(struct dxgk_create_allocation *a)
{
    struct dxgk_allocation *small_allocs[SMALL_BATCH], **allocs = small_allocs;
    DXGK_ALLOCATIONINFO small_info[SMALL_BATCH], *info = small_info;
    DXGK_OPENALLOCATIONINFO small_open[SMALL_BATCH], *open = small_open;
    HANDLE small_handles[SMALL_BATCH], *handles = small_handles; /* rollback scratch */
    struct dxgk_resource *res = NULL, *existing = NULL;
    DXGKARG_CREATEALLOCATION ca = { 0 };
    DXGKARG_OPENALLOCATION oa = { 0 };
    D3DKMT_HANDLE global = 0;
    struct dxgk_adapter *adapter;
    struct dxgk_device *device;
    bool ddi_created = false;
    NTSTATUS status;
    UINT i;

    if (!(device = dxgk_device_acquire(a->hDevice)))
        return STATUS_INVALID_PARAMETER;
    adapter = device->adapter;

    if ((status = validate_create(a)))
        goto out_device;

    /* hResource: must be 0 when creating one; otherwise an existing,
     * unsealed resource of this device that allocations may join. */
    if (a->hResource) {
        if (a->flags.CreateResource) {
            status = STATUS_INVALID_HANDLE;
            goto out_device;
        }
        existing = (struct dxgk_resource *)hmgr_lookup(&dxgk_process.handles, a->hResource,
                                                       HMGR_TYPE_RESOURCE);
        if (!existing || existing->device != device) {
            status = STATUS_INVALID_HANDLE;
            goto out_device;
        }
        if (existing->shared || existing->standard || a->flags.StandardAllocation) {
            status = STATUS_INVALID_PARAMETER;
            goto out_device;
        }
    }

    if (a->count > SMALL_BATCH) {
        allocs = calloc(a->count, sizeof(*allocs));
        info = calloc(a->count, sizeof(*info));
        open = calloc(a->count, sizeof(*open));
        handles = calloc(a->count, sizeof(*handles));
        if (!allocs || !info || !open || !handles) {
            status = STATUS_NO_MEMORY;
            goto out_arrays;            /* nothing made yet, and allocs may be NULL */
        }
    } else {
        /* only what this call uses: the common single allocation is the hot path */
        memset(small_allocs, 0, a->count * sizeof(small_allocs[0]));
        memset(small_info, 0, a->count * sizeof(small_info[0]));
        memset(small_open, 0, a->count * sizeof(small_open[0]));
    }

    /* 1. memory and handles: resource first, then allocations in order, so
     *    hAllocation[0] == hResource + 0x40 as on Windows. */
    if (a->flags.CreateResource) {
        if (!(res = resource_new(device, a)) || !(res->handle = hmgr_alloc(&dxgk_process.handles))) {
            status = STATUS_NO_MEMORY;
            goto out_free;
        }
        if (a->flags.CreateShared && !a->flags.NtSecuritySharing &&
            !(global = hmgr_alloc(&dxgk_process.global_handles))) {
            status = STATUS_NO_MEMORY;
            goto out_free;
        }
    }
    for (i = 0; i < a->count; i++) {
        if (!(allocs[i] = allocation_new(device, &a->allocs[i])) ||
            !(allocs[i]->handle = hmgr_alloc(&dxgk_process.handles))) {
            status = STATUS_NO_MEMORY;
            goto out_free;
        }
    }

    /* 2. the miniport creates them; a standard allocation's existing heap
     * is probed first, since the miniport may read it while creating */
    if (a->standard && !kmt_user_range_readable(a->allocs[0].sysmem, a->standard->ExistingHeapData.Size)) {
        status = STATUS_INVALID_PARAMETER;
        goto out_free;
    }
    for (i = 0; i < a->count; i++) {
        info[i].pPrivateDriverData = allocs[i]->private_data;
        info[i].PrivateDriverDataSize = allocs[i]->private_data_size;
        info[i].Size = a->standard ? a->standard->ExistingHeapData.Size : 0;
        info[i].Flags.ExistingSysMem = a->allocs[i].sysmem != NULL;
        info[i].pKmtSystemMem = a->allocs[i].sysmem;
    }
    ca.pPrivateDriverData = a->standard ? NULL : a->driver_data;
    ca.PrivateDriverDataSize = a->standard ? 0 : a->driver_data_size;
    ca.NumAllocations = a->count;
    ca.pAllocationInfo = info;
    if (existing) {
        /* a reclaim of one of its allocations may rewrite it meanwhile */
        kmt_mutex_lock(&existing->ddi_lock);
        kmt_mutex_lock(&device->list_lock);
        ca.hResource = existing->driver_resource;
        kmt_mutex_unlock(&device->list_lock);
    }
    ca.Flags.Resource = res || existing;
    creating = allocs;
    creating_count = a->count;
    status = adapter->ddi->DxgkDdiCreateAllocation(adapter->ctx, &ca);
    if (existing) {
        kmt_mutex_lock(&device->list_lock);
        dxgk_resource_set_driver_handle(existing, ca.hResource);
        kmt_mutex_unlock(&device->list_lock);
        kmt_mutex_unlock(&existing->ddi_lock);
    }
    TRACE_(dxgk, "DxgkDdiCreateAllocation(%u allocations, resource %d) -> %s\n", a->count,
           ca.Flags.Resource, kmt_debugstr_status(status));
    if (status)
        goto out_free;
    ddi_created = true;
    for (i = 0; i < a->count; i++) {
        if (!info[i].hAllocation) {
            ERR_(dxgk, "%s: DxgkDdiCreateAllocation returned no handle for allocation %u\n",
                 adapter->miniport->name, i);
            status = STATUS_UNSUCCESSFUL;
            goto out_free;
        }
        /* only now is the size of existing memory known (the driver read it
         * from its private data): the caller's pages must cover it */
        if (a->allocs[i].sysmem && !a->standard &&
            !kmt_user_range_readable(a->allocs[i].sysmem, info[i].Size)) {
            WARN_(dxgk, "allocation %u: existing memory %p does not cover its %llu bytes\n", i,
                  a->allocs[i].sysmem, (unsigned long long)info[i].Size);
            status = STATUS_INVALID_PARAMETER;
            goto out_free;
        }
        allocs[i]->driver_allocation = info[i].hAllocation;
        allocs[i]->gpu_va = info[i].KmtGpuVirtualAddress;
        allocs[i]->size = a->allocs[i].sysmem && a->standard ? a->standard->ExistingHeapData.Size
                                                                : info[i].Size;
    }
    if (res)
        dxgk_resource_set_driver_handle(res, ca.hResource);

    /* 3. bind them to the creating device: Open(Create) */
    for (i = 0; i < a->count; i++) {
        open[i].hAllocation = allocs[i]->handle;
        open[i].pPrivateDriverData = allocs[i]->private_data;
        open[i].PrivateDriverDataSize = allocs[i]->private_data_size;
    }
    oa.NumAllocations = a->count;
    oa.pOpenAllocation = open;
    oa.pPrivateDriverData = res ? res->driver_data : existing ? existing->driver_data : NULL;
    oa.PrivateDriverSize = res ? res->driver_data_size : existing ? existing->driver_data_size : 0;
    oa.Flags.Create = 1;
    status = adapter->ddi->DxgkDdiOpenAllocation(device->driver_device, &oa);
    TRACE_(dxgk, "DxgkDdiOpenAllocation(%u, Create) -> %s\n", a->count, kmt_debugstr_status(status));
    if (!status) {
        for (i = 0; i < a->count; i++)
            if (!open[i].hDeviceSpecificAllocation)
                status = STATUS_UNSUCCESSFUL;
        if (status) {
            UINT n = 0;
            ERR_(dxgk, "%s: DxgkDdiOpenAllocation returned a NULL device handle\n", adapter->miniport->name);
            for (i = 0; i < a->count; i++)
                if (open[i].hDeviceSpecificAllocation)
                    handles[n++] = open[i].hDeviceSpecificAllocation;
            dxgk_ddi_close_allocations(device, handles, n);
        }
    }
    creating = NULL;
    creating_count = 0;
    if (status)
        goto out_free;
    for (i = 0; i < a->count; i++) {
        allocs[i]->device_allocation = open[i].hDeviceSpecificAllocation;
        allocs[i]->opened = true;
    }

    /* 4. publish, unless the resource we join was destroyed meanwhile */
    kmt_mutex_lock(&device->list_lock);
    if (existing && existing->destroying) {
        kmt_mutex_unlock(&device->list_lock);
        for (i = 0; i < a->count; i++)
            handles[i] = open[i].hDeviceSpecificAllocation;
        dxgk_ddi_close_allocations(device, handles, a->count);
        status = STATUS_INVALID_PARAMETER;
        goto out_free;
    }
    /* A published object is another thread's to destroy at once: what the
     * call reports is read before publishing, and an allocation whose
     * private data is still to be copied out keeps a reference for it. */
    if (res) {
        a->hResource = res->handle;
        kmt_object_get(&device->obj);
        list_add_tail(&device->resources, &res->entry);
        hmgr_publish(&dxgk_process.handles, res->handle, &res->obj);
        if (global) {
            kmt_object_get(&res->obj);
            res->global_handle = global;
            hmgr_publish(&dxgk_process.global_handles, global, &res->obj);
        }
    }
    for (i = 0; i < a->count; i++) {
        struct dxgk_allocation *alloc = allocs[i];
        struct dxgk_resource *owner = res ? res : existing;

        kmt_object_get(&device->obj);
        if (owner) {
            kmt_object_get(&owner->obj);
            alloc->resource = owner;
            list_add_tail(&owner->allocations, &alloc->entry);
        } else {
            list_add_tail(&device->allocations, &alloc->entry);
        }
        if (!alloc->sysmem) {
            alloc->segment_group = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
            atomic_fetch_add_explicit(&adapter->usage[alloc->segment_group], alloc->size,
                                      memory_order_relaxed);
        }
        a->allocs[i].hAllocation = alloc->handle;
        a->allocs[i].gpu_va = alloc->gpu_va;
        if (alloc->private_data_size)
            kmt_object_get(&alloc->obj);
        hmgr_publish(&dxgk_process.handles, alloc->handle, &alloc->obj);
    }
    kmt_mutex_unlock(&device->list_lock);

    /* 5. per-allocation private data is in/out (the request's size: an
     *    allocation without private data holds no reference of ours) */
    for (i = 0; i < a->count; i++) {
        if (!a->allocs[i].private_data_size)
            continue;
        memcpy(a->allocs[i].private_data, allocs[i]->private_data, a->allocs[i].private_data_size);
        dxgk_allocation_put(allocs[i]);
    }
    a->hGlobalShare = global;
    status = STATUS_SUCCESS;
    goto out_arrays;

out_free:
    creating = NULL;
    creating_count = 0;
    if (ddi_created) {
        UINT n = 0;
        for (i = 0; i < a->count; i++)
            if (info[i].hAllocation)
                handles[n++] = info[i].hAllocation;
        if (existing)
            kmt_mutex_lock(&existing->ddi_lock);
        dxgk_ddi_destroy_allocations(adapter, handles, n, &ca.hResource, res != NULL);
        if (existing) {
            kmt_mutex_lock(&device->list_lock);
            dxgk_resource_set_driver_handle(existing, ca.hResource);
            kmt_mutex_unlock(&device->list_lock);
            kmt_mutex_unlock(&existing->ddi_lock);
        }
    }
    for (i = 0; i < a->count; i++) {
        if (!allocs[i])
            continue;
        if (allocs[i]->handle)
            hmgr_cancel(&dxgk_process.handles, allocs[i]->handle);
        dxgk_allocation_free(allocs[i]);
    }
    if (global)
        hmgr_cancel(&dxgk_process.global_handles, global);
    if (res) {
        if (res->handle)
            hmgr_cancel(&dxgk_process.handles, res->handle);
        dxgk_resource_free(res);
    }
out_arrays:
    if (allocs != small_allocs)
        free(allocs);
    if (info != small_info)
        free(info);
    if (open != small_open)
        free(open);
    if (handles != small_handles)
        free(handles);
out_device:
    if (existing)
        kmt_object_put(&existing->obj);
    dxgk_device_release(device);
    return status;
}

/* ---- GPU references -------------------------------------------------------- */

void dxgk_allocation_gpu_ref(struct dxgk_allocation *alloc)
{
    kmt_mutex_lock(&alloc->cpu_lock);
    alloc->gpu_refs++;
    kmt_mutex_unlock(&alloc->cpu_lock);
}

void dxgk_allocation_gpu_unref(struct dxgk_allocation *alloc)
{
    bool reclaim = false, free_it = false;

    kmt_mutex_lock(&alloc->cpu_lock);
    if (!--alloc->gpu_refs) {
        kmt_cond_broadcast(&alloc->gpu_idle);
        reclaim = alloc->reclaim_pending;
        alloc->reclaim_pending = false;
        free_it = alloc->free_pending;
    }
    kmt_mutex_unlock(&alloc->cpu_lock);
    if (reclaim)
        dxgk_reclaim_allocations(&alloc, 1);
    else if (free_it)
        dxgk_allocation_free(alloc);
}
