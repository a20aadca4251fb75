/*
 * Shared resources, the opener's side: QueryResourceInfo, OpenResource(2)
 * by global handle and their NT-handle forms.
 *
 * An open makes a new local resource with one new allocation per shared
 * one, over the same memory: the miniport imports each allocation's
 * exported memory (KmtDdiImportAllocation), or, in the creating process,
 * memory it could not export (a program's ExistingSysMem pages) is created
 * again over the same pages; then DxgkDdiOpenAllocation binds them to the
 * opening device, as dxgkrnl does.  The opened resource keeps a broker
 * reference of its own, so the object lives while it does, in whatever
 * process.  All or nothing, as CreateAllocation.
 */
#include <stdlib.h>
#include <string.h>

#include "resource_share.h"
#include "ddi.h"
#include "sync.h"
#include "base/kmt_debug.h"
#include "base/user_memory.h"

/* The device's adapter must be the creator's. */
static NTSTATUS check_adapter(struct dxgk_device *device, const struct dxgk_share_view *v)
{
    const LUID *a = &device->adapter->luid, *b = &v->hdr->luid;

    return a->LowPart == b->LowPart && a->HighPart == b->HighPart ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS query(D3DKMT_HANDLE hDevice, struct kmt_broker_object *obj, struct dxgk_resource_info *info)
{
    struct dxgk_device *device = dxgk_device_acquire(hDevice);
    struct dxgk_share_view v;
    NTSTATUS status;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    if (!(status = dxgk_share_view(obj->blob, obj->blob_size, &v)) && !(status = check_adapter(device, &v))) {
        info->runtime_size = v.hdr->runtime_size;
        info->total_driver_size = v.total_driver_size;
        info->resource_driver_size = v.hdr->resource_driver_size;
        info->num_allocations = v.hdr->num_allocations;
    }
    dxgk_device_release(device);
    return status;
}

NTSTATUS dxgk_query_resource_global(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE global, struct dxgk_resource_info *info)
{
    struct kmt_broker_object obj = { 0 };
    NTSTATUS status;

    if ((status = kmt_broker_open_global(global, KMT_BROKER_RESOURCE, false, &obj)))
        return status;
    status = query(hDevice, &obj, info);
    kmt_broker_object_free(&obj);
    return status;
}

NTSTATUS dxgk_query_resource_nt(D3DKMT_HANDLE hDevice, int nt_fd, struct dxgk_resource_info *info)
{
    struct kmt_broker_object objs[KMT_BROKER_MAX_NT_OBJECTS] = { 0 };
    unsigned count = 0;
    NTSTATUS status;

    if ((status = kmt_broker_open_nt(nt_fd, KMT_BROKER_RESOURCE, false, objs, KMT_BROKER_MAX_NT_OBJECTS, &count)))
        return status;
    status = query(hDevice, &objs[0], info);
    for (unsigned i = 0; i < count; i++)
        kmt_broker_object_free(&objs[i]);
    return status;
}

/* ---- open ------------------------------------------------------------------------- */

struct open_call {
    struct dxgk_open_resource *a;
    struct dxgk_device *device;
    struct kmt_broker_object *obj;
    struct dxgk_share_view v;
    bool recreate;                      /* this process's own ExistingSysMem pages */
    struct dxgk_resource *res;
    struct dxgk_allocation **allocs;    /* v.hdr->num_allocations */
    UINT made;                          /* allocations the miniport holds */
    bool opened;
};

/* Windows' size rules: the runtime and resource driver data sizes exact,
 * the total buffer large enough (else NO_MEMORY), one info per allocation
 * with room for its driver data. */
static NTSTATUS validate(struct open_call *c)
{
    const struct dxgk_open_resource *a = c->a;
    const struct dxgk_share_blob *hdr = c->v.hdr;

    if (a->count != hdr->num_allocations || !a->allocs)
        return STATUS_INVALID_PARAMETER;
    if (a->runtime_size != hdr->runtime_size || (a->runtime_size && !a->runtime))
        return STATUS_INVALID_PARAMETER;
    if (a->resource_driver_size != hdr->resource_driver_size || (a->resource_driver_size && !a->resource_driver))
        return STATUS_INVALID_PARAMETER;
    if (!a->total)
        return STATUS_INVALID_PARAMETER;
    if (a->total_size < c->v.total_driver_size)
        return STATUS_NO_MEMORY;
    for (UINT i = 0; i < a->count; i++) {
        UINT need = c->v.allocs[i].private_size;

        if (need && !a->allocs[i].private_data)
            return STATUS_INVALID_PARAMETER;
        if (a->allocs[i].private_data_size < need)
            return STATUS_NO_MEMORY;
    }
    return check_adapter(c->device, &c->v);
}

/* Where the memory comes from: every allocation's fd, or, in the creating
 * process, its own pages. */
static NTSTATUS choose_source(struct open_call *c)
{
    bool all_fds = true, all_sysmem = true;

    for (UINT i = 0; i < c->v.hdr->num_allocations; i++) {
        const struct dxgk_share_blob_alloc *r = &c->v.allocs[i];

        if (r->fd_index < 0 || (unsigned)r->fd_index >= c->obj->fd_count)
            all_fds = false;
        if (!r->sysmem)
            all_sysmem = false;
    }
    if (all_fds)
        return STATUS_SUCCESS;
    if (all_sysmem && c->v.hdr->creator == dxgk_share_process_token()) {
        c->recreate = true;
        return STATUS_SUCCESS;
    }
    WARN_(dxgk, "the shared resource's memory cannot leave its creator's process\n");
    return STATUS_NOT_SUPPORTED;
}

static NTSTATUS reserve(struct open_call *c)
{
    const struct dxgk_share_blob *hdr = c->v.hdr;
    struct dxgk_create_allocation desc = {
        .runtime_data = c->v.runtime,
        .runtime_data_size = hdr->runtime_size,
        .driver_data = c->v.resource_driver_data,
        .driver_data_size = hdr->resource_driver_size,
    };
    const uint8_t *data = c->v.alloc_data;

    desc.flags.CreateResource = 1;
    desc.flags.CreateShared = 1;
    if (!(c->allocs = calloc(hdr->num_allocations, sizeof(*c->allocs))))
        return STATUS_NO_MEMORY;
    if (!(c->res = dxgk_resource_new(c->device, &desc)) || !(c->res->handle = hmgr_alloc(&dxgk_process.handles)))
        return STATUS_NO_MEMORY;
    for (UINT i = 0; i < hdr->num_allocations; i++) {
        struct dxgk_alloc_request req = {
            .sysmem = c->recreate ? (const void *)(uintptr_t)c->v.allocs[i].sysmem : NULL,
            .private_data = (void *)data,
            .private_data_size = c->v.allocs[i].private_size,
        };

        data += c->v.allocs[i].private_size;
        if (!(c->allocs[i] = dxgk_allocation_new(c->device, &req)) ||
            !(c->allocs[i]->handle = hmgr_alloc(&dxgk_process.handles)))
            return STATUS_NO_MEMORY;
        c->allocs[i]->size = c->v.allocs[i].size;
    }
    return STATUS_SUCCESS;
}

static NTSTATUS import(struct open_call *c)
{
    struct dxgk_adapter *adapter = c->device->adapter;

    for (UINT i = 0; i < c->v.hdr->num_allocations; i++) {
        KMTARG_IMPORTALLOCATION args = {
            .Fd = c->obj->fds[c->v.allocs[i].fd_index],
            .Size = c->v.allocs[i].size,
            .pPrivateDriverData = c->allocs[i]->private_data,
            .PrivateDriverDataSize = c->allocs[i]->private_data_size,
        };
        NTSTATUS status = dxgk_ddi_import_allocation(adapter, &args);

        if (status)
            return status;
        c->allocs[i]->driver_allocation = args.hAllocation;
        c->allocs[i]->gpu_va = args.GpuVirtualAddress;
        c->made++;
    }
    return STATUS_SUCCESS;
}

/* The creator's own pages, as DxgkDdiCreateAllocation made them. */
static NTSTATUS recreate(struct open_call *c)
{
    UINT count = c->v.hdr->num_allocations;
    DXGK_ALLOCATIONINFO *info = calloc(count, sizeof(*info));
    DXGKARG_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    if (!info)
        return STATUS_NO_MEMORY;
    for (UINT i = 0; i < count; i++) {
        info[i].pPrivateDriverData = c->allocs[i]->private_data;
        info[i].PrivateDriverDataSize = c->allocs[i]->private_data_size;
        info[i].Size = c->allocs[i]->size;
        info[i].Flags.ExistingSysMem = 1;
        info[i].pKmtSystemMem = c->allocs[i]->sysmem;
    }
    ca.pPrivateDriverData = c->res->driver_data;
    ca.PrivateDriverDataSize = c->res->driver_data_size;
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    ca.Flags.Resource = 1;
    dxgk_allocation_set_creating(c->allocs, count);
    status = dxgk_ddi_create_allocation(c->device->adapter, &ca);
    dxgk_allocation_set_creating(NULL, 0);
    if (!status) {
        dxgk_resource_set_driver_handle(c->res, ca.hResource);
        for (UINT i = 0; i < count; i++) {
            c->allocs[i]->driver_allocation = info[i].hAllocation;
            c->allocs[i]->gpu_va = info[i].KmtGpuVirtualAddress;
        }
        c->made = count;
    }
    free(info);
    return status;
}

static NTSTATUS bind(struct open_call *c)
{
    UINT count = c->v.hdr->num_allocations;
    NTSTATUS status;

    dxgk_allocation_set_creating(c->allocs, count);
    status = dxgk_ddi_open_allocations(c->device, c->allocs, count, c->res->driver_data,
                                       c->res->driver_data_size);
    dxgk_allocation_set_creating(NULL, 0);
    c->opened = !status;
    return status;
}

/* The creator's data into the caller's buffers: each allocation's driver
 * data, the resource's, the runtime data, and all the driver data in the
 * total buffer (resource first). */
static NTSTATUS copy_out(struct open_call *c)
{
    struct dxgk_open_resource *a = c->a;
    uint8_t *total = a->total;

    if (a->runtime_size && !kmt_user_copy_out(a->runtime, c->v.runtime, a->runtime_size))
        return STATUS_ACCESS_VIOLATION;
    if (a->resource_driver_size && !kmt_user_copy_out(a->resource_driver, c->res->driver_data, a->resource_driver_size))
        return STATUS_ACCESS_VIOLATION;
    if (c->res->driver_data_size && !kmt_user_copy_out(total, c->res->driver_data, c->res->driver_data_size))
        return STATUS_ACCESS_VIOLATION;
    total += c->res->driver_data_size;
    for (UINT i = 0; i < a->count; i++) {
        struct dxgk_allocation *alloc = c->allocs[i];

        if (alloc->private_data_size &&
            (!kmt_user_copy_out(a->allocs[i].private_data, alloc->private_data, alloc->private_data_size) ||
             !kmt_user_copy_out(total, alloc->private_data, alloc->private_data_size)))
            return STATUS_ACCESS_VIOLATION;
        total += alloc->private_data_size;
        a->allocs[i].private_data_size = alloc->private_data_size;
        a->allocs[i].hAllocation = alloc->handle;
        a->allocs[i].gpu_va = alloc->gpu_va;
    }
    return STATUS_SUCCESS;
}

static NTSTATUS publish(struct open_call *c)
{
    struct dxgk_device *device = c->device;
    struct dxgk_resource_share *share = calloc(1, sizeof(*share));

    if (!share)
        return STATUS_NO_MEMORY;
    share->broker_id = c->obj->id;
    share->connection = c->obj->connection;
    share->flags = c->v.hdr->flags;
    share->blob = c->obj->blob;
    share->blob_size = c->obj->blob_size;
    pthread_mutex_init(&share->lock, NULL);
    c->obj->blob = NULL;               /* the resource's now, with the reference */
    c->res->share = share;

    kmt_mutex_lock(&device->list_lock);
    kmt_object_get(&device->obj);
    list_add_tail(&device->resources, &c->res->entry);
    hmgr_publish(&dxgk_process.handles, c->res->handle, &c->res->obj);
    for (UINT i = 0; i < c->v.hdr->num_allocations; i++) {
        struct dxgk_allocation *alloc = c->allocs[i];

        kmt_object_get(&device->obj);
        kmt_object_get(&c->res->obj);
        alloc->resource = c->res;
        list_add_tail(&c->res->allocations, &alloc->entry);
        dxgk_allocation_account(alloc);
        hmgr_publish(&dxgk_process.handles, alloc->handle, &alloc->obj);
    }
    kmt_mutex_unlock(&device->list_lock);
    c->a->hResource = c->res->handle;
    return STATUS_SUCCESS;
}

static void roll_back(struct open_call *c)
{
    UINT count = c->v.hdr ? c->v.hdr->num_allocations : 0;

    if (c->opened)
        dxgk_ddi_close_allocations(c->device, c->allocs, count);
    if (c->made) {
        HANDLE h = c->res ? c->res->driver_resource : NULL;

        dxgk_ddi_destroy_allocations(c->device->adapter, c->allocs, c->made, c->recreate ? &h : NULL,
                                     c->recreate);
    }
    dxgk_unreserve(c->res, c->allocs, count);
}

/* Takes obj's reference on success; leaves it to the caller on failure. */
static NTSTATUS open_object(struct dxgk_open_resource *a, struct kmt_broker_object *obj)
{
    struct open_call c = { .a = a, .obj = obj };
    NTSTATUS status;

    if (!(c.device = dxgk_device_acquire(a->hDevice)))
        return STATUS_INVALID_PARAMETER;
    if ((status = dxgk_share_view(obj->blob, obj->blob_size, &c.v)) || (status = validate(&c)) ||
        (status = choose_source(&c)))
        goto out;
    if ((status = reserve(&c)) || (status = c.recreate ? recreate(&c) : import(&c)) || (status = bind(&c)) ||
        (status = copy_out(&c)) || (status = publish(&c)))
        roll_back(&c);
out:
    free(c.allocs);
    dxgk_device_release(c.device);
    return status;
}

NTSTATUS dxgk_open_resource_global(D3DKMT_HANDLE global, struct dxgk_open_resource *a)
{
    struct kmt_broker_object obj = { 0 };
    NTSTATUS status;

    if ((status = kmt_broker_open_global(global, KMT_BROKER_RESOURCE, true, &obj)))
        return status;
    if ((status = open_object(a, &obj)))
        kmt_broker_release(obj.id);
    kmt_broker_object_free(&obj);
    return status;
}

NTSTATUS dxgk_open_resource_nt(int nt_fd, struct dxgk_open_resource_nt *a)
{
    struct kmt_broker_object objs[KMT_BROKER_MAX_NT_OBJECTS] = { 0 };
    unsigned count = 0;
    NTSTATUS status;

    a->hKeyedMutex = a->hSyncObject = 0;
    if ((status = kmt_broker_open_nt(nt_fd, KMT_BROKER_RESOURCE, true, objs, KMT_BROKER_MAX_NT_OBJECTS, &count)))
        return status;
    if (count != 1 && count != 3) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    if (count == 1)
        a->mutex_runtime_size = 0;
    if ((status = open_object(&a->res, &objs[0])))
        goto out;
    objs[0].id = 0;                     /* the resource holds it */
    if (count == 3) {
        /* the sync object first: the core can destroy it again if the
         * keyed mutex does not open (all or nothing) */
        if ((status = dxgk_syncobj_open_object(a->res.hDevice, &objs[2], &a->hSyncObject)))
            goto undo;
        objs[2].id = 0;
        objs[2].fd_count = 0;          /* the sync object's now */
        if ((status = dxgk_keyed_mutex_open_object(&objs[1], a->mutex_runtime, &a->mutex_runtime_size,
                                                   &a->hKeyedMutex))) {
            dxgk_destroy_syncobj(a->hSyncObject);
            a->hSyncObject = 0;
            goto undo;
        }
        objs[1].id = 0;
        objs[1].fd_count = 0;
    }
    goto out;
undo:
    {
        D3DDDICB_DESTROYALLOCATION2FLAGS flags = { 0 };

        dxgk_destroy_allocation(a->res.hDevice, a->res.hResource, NULL, 0, flags);
        a->res.hResource = 0;
    }
out:
    for (unsigned i = 0; i < count; i++) {
        if (objs[i].id)
            kmt_broker_release(objs[i].id);
        kmt_broker_object_free(&objs[i]);
    }
    return status;
}
