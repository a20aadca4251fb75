/*
 * CreateAllocation / CreateAllocation2: standalone allocations, resources,
 * standard existing-heap allocations, CreateShared.
 *
 * All or nothing, in five steps: reserve (object memory and handles, before
 * the miniport is called), DDI create, DDI open (the binding to the
 * creating device; a shared resource then registers with the broker), copy out (the driver's answer in the private data),
 * and publish (the handles become valid).  A failure at any step before
 * publish rolls every earlier step back, so a failed call leaves no handle,
 * no miniport object and no memory behind, and hands out no handle value.
 * The objects' end is allocation_reclaim.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"
#include "resource_share.h"
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

void dxgk_allocation_set_creating(struct dxgk_allocation **allocs, UINT count)
{
    creating = allocs;
    creating_count = count;
}

/* One call on its way: what it made so far, for the roll-back. */
struct create_call {
    struct dxgk_create_allocation *a;
    struct dxgk_device *device;
    struct dxgk_resource *res;           /* CreateResource: the new resource */
    struct dxgk_resource *existing;      /* hResource: the resource joined, referenced */
    D3DKMT_HANDLE global;                /* CreateShared without NT sharing */
    struct dxgk_allocation **allocs;     /* a->count of them, NULL where not made */
    DXGK_ALLOCATIONINFO *info;           /* what the miniport was given */
    bool ddi_created;                    /* the miniport holds every allocation */
    struct dxgk_allocation *small_allocs[SMALL_BATCH];
    DXGK_ALLOCATIONINFO small_info[SMALL_BATCH];
};

/* The resource the allocations go to: the new one or the one joined. */
static struct dxgk_resource *call_owner(const struct create_call *c)
{
    return c->res ? c->res : c->existing;
}

/* One block for the object and its private data: one malloc and one free
 * per allocation, not two (these are the hottest objects there are). */
struct dxgk_allocation *dxgk_allocation_new(struct dxgk_device *device, const struct dxgk_alloc_request *req)
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

struct dxgk_resource *dxgk_resource_new(struct dxgk_device *device, const struct dxgk_create_allocation *a)
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

/* hResource: must be 0 when creating one; otherwise an existing, unsealed
 * resource of this device that allocations may join. */
static NTSTATUS find_resource_to_join(struct create_call *c)
{
    const struct dxgk_create_allocation *a = c->a;
    struct dxgk_resource *res;

    if (!a->hResource)
        return STATUS_SUCCESS;
    if (a->flags.CreateResource)
        return STATUS_INVALID_HANDLE;
    res = (struct dxgk_resource *)hmgr_lookup(&dxgk_process.handles, a->hResource, HMGR_TYPE_RESOURCE);
    if (!res)
        return STATUS_INVALID_HANDLE;
    c->existing = res;                    /* the call's reference, dropped at its end */
    if (res->device != c->device)
        return STATUS_INVALID_HANDLE;
    if (res->shared || res->standard || a->flags.StandardAllocation)
        return STATUS_INVALID_PARAMETER;
    return STATUS_SUCCESS;
}

/* The call's arrays: on the stack for the common few. */
static NTSTATUS arrays_get(struct create_call *c)
{
    UINT count = c->a->count;

    if (count <= SMALL_BATCH) {
        /* only what this call uses: the single allocation is the hot path */
        memset(c->small_allocs, 0, count * sizeof(c->small_allocs[0]));
        memset(c->small_info, 0, count * sizeof(c->small_info[0]));
        c->allocs = c->small_allocs;
        c->info = c->small_info;
        return STATUS_SUCCESS;
    }
    c->allocs = calloc(count, sizeof(*c->allocs));
    c->info = calloc(count, sizeof(*c->info));
    return c->allocs && c->info ? STATUS_SUCCESS : STATUS_NO_MEMORY;
}

static void arrays_put(struct create_call *c)
{
    if (c->allocs != c->small_allocs)
        free(c->allocs);
    if (c->info != c->small_info)
        free(c->info);
}

/* Step 1: memory and handles, resource first, then allocations in order,
 * so hAllocation[0] == hResource + 0x40 as on Windows. */
static NTSTATUS reserve(struct create_call *c)
{
    const struct dxgk_create_allocation *a = c->a;

    if (a->flags.CreateResource) {
        if (!(c->res = dxgk_resource_new(c->device, a)) || !(c->res->handle = hmgr_alloc(&dxgk_process.handles)))
            return STATUS_NO_MEMORY;
    }
    for (UINT i = 0; i < a->count; i++) {
        if (!(c->allocs[i] = dxgk_allocation_new(c->device, &a->allocs[i])) ||
            !(c->allocs[i]->handle = hmgr_alloc(&dxgk_process.handles)))
            return STATUS_NO_MEMORY;
    }
    return STATUS_SUCCESS;
}

/* The miniport's hResource of a resource joined: a reclaim of one of its
 * allocations may rewrite it, so the DDI call that carries it holds the
 * resource's DDI lock from the read to the write-back. */
static HANDLE joined_resource_begin(struct create_call *c)
{
    HANDLE h;

    kmt_mutex_lock(&c->existing->ddi_lock);
    kmt_mutex_lock(&c->device->list_lock);
    h = c->existing->driver_resource;
    kmt_mutex_unlock(&c->device->list_lock);
    return h;
}

static void joined_resource_end(struct create_call *c, HANDLE h)
{
    kmt_mutex_lock(&c->device->list_lock);
    dxgk_resource_set_driver_handle(c->existing, h);
    kmt_mutex_unlock(&c->device->list_lock);
    kmt_mutex_unlock(&c->existing->ddi_lock);
}

/* Step 2: the miniport creates them.  A standard allocation's existing
 * heap is probed first, since the miniport may read it while creating. */
static NTSTATUS ddi_create(struct create_call *c)
{
    const struct dxgk_create_allocation *a = c->a;
    DXGKARG_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;
    UINT i;

    if (a->standard && !kmt_user_range_readable(a->allocs[0].sysmem, a->standard->ExistingHeapData.Size))
        return STATUS_INVALID_PARAMETER;
    for (i = 0; i < a->count; i++) {
        c->info[i].pPrivateDriverData = c->allocs[i]->private_data;
        c->info[i].PrivateDriverDataSize = c->allocs[i]->private_data_size;
        c->info[i].Size = a->standard ? a->standard->ExistingHeapData.Size : 0;
        c->info[i].Flags.ExistingSysMem = a->allocs[i].sysmem != NULL;
        c->info[i].pKmtSystemMem = a->allocs[i].sysmem;
    }
    ca.pPrivateDriverData = a->standard ? NULL : a->driver_data;
    ca.PrivateDriverDataSize = a->standard ? 0 : a->driver_data_size;
    ca.NumAllocations = a->count;
    ca.pAllocationInfo = c->info;
    ca.Flags.Resource = call_owner(c) != NULL;
    if (c->existing)
        ca.hResource = joined_resource_begin(c);
    creating = c->allocs;
    creating_count = a->count;
    status = dxgk_ddi_create_allocation(c->device->adapter, &ca);
    if (c->existing)
        joined_resource_end(c, ca.hResource);
    if (status)
        return status;
    c->ddi_created = true;
    if (c->res)
        dxgk_resource_set_driver_handle(c->res, ca.hResource);
    for (i = 0; i < a->count; i++)
        c->allocs[i]->driver_allocation = c->info[i].hAllocation;

    for (i = 0; i < a->count; i++) {
        struct dxgk_allocation *alloc = c->allocs[i];

        /* only now is the size of existing memory known (the driver read it
         * from its private data): the caller's pages must cover it */
        if (alloc->sysmem && !a->standard && !kmt_user_range_readable(alloc->sysmem, c->info[i].Size)) {
            WARN_(dxgk, "allocation %u: existing memory %p does not cover its %llu bytes\n", i,
                  alloc->sysmem, (unsigned long long)c->info[i].Size);
            return STATUS_INVALID_PARAMETER;
        }
        alloc->gpu_va = c->info[i].KmtGpuVirtualAddress;
        alloc->size = alloc->sysmem && a->standard ? a->standard->ExistingHeapData.Size : c->info[i].Size;
    }
    return STATUS_SUCCESS;
}

/* Step 3: bind them to the creating device, Open(Create). */
static NTSTATUS ddi_open(struct create_call *c)
{
    struct dxgk_resource *owner = call_owner(c);

    return dxgk_ddi_open_allocations(c->device, c->allocs, c->a->count, owner ? owner->driver_data : NULL,
                                     owner ? owner->driver_data_size : 0);
}

/* Step 3b: CreateShared registers the resource with the session broker,
 * which hands out its global handle (none with NtSecuritySharing). */
static NTSTATUS share(struct create_call *c)
{
    if (!c->res || !c->a->flags.CreateShared)
        return STATUS_SUCCESS;
    return dxgk_resource_share_register(c->res, c->allocs, c->a->count, c->a->flags.NtSecuritySharing);
}

/* Step 4: per-allocation private data is in/out (DXGK_OPENALLOCATIONINFO:
 * the UMD sees what the driver changed), but the caller's buffer is
 * written only where the driver changed it: private data the driver left
 * alone may be read-only input (a static const descriptor), as on Windows.
 * Every changed buffer is probed writable before any is written, so a
 * read-only one refuses the call with STATUS_ACCESS_VIOLATION and writes
 * nothing; a page made read-only by another thread between the probe and
 * the copy refuses it with part of the answer written. */
static NTSTATUS copy_out(struct create_call *c)
{
    const struct dxgk_create_allocation *a = c->a;

    for (UINT i = 0; i < a->count; i++) {
        UINT size = a->allocs[i].private_data_size;

        if (size && memcmp(a->allocs[i].private_data, c->allocs[i]->private_data, size) &&
            !kmt_user_range_writable(a->allocs[i].private_data, size)) {
            WARN_(dxgk, "allocation %u: the driver answers in private data %p, which cannot be written\n",
                  i, a->allocs[i].private_data);
            return STATUS_ACCESS_VIOLATION;
        }
    }
    for (UINT i = 0; i < a->count; i++) {
        UINT size = a->allocs[i].private_data_size;

        if (size && !kmt_user_write_back(a->allocs[i].private_data, c->allocs[i]->private_data, size))
            return STATUS_ACCESS_VIOLATION;
    }
    return STATUS_SUCCESS;
}

void dxgk_allocation_account(struct dxgk_allocation *alloc)
{
    struct dxgk_adapter *adapter = alloc->device->adapter;

    if (alloc->sysmem)
        return;                          /* the program's memory, not the adapter's */
    alloc->segment_group = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    atomic_fetch_add_explicit(&adapter->usage[alloc->segment_group], alloc->size, memory_order_relaxed);
    atomic_fetch_add_explicit(&adapter->allocations[alloc->segment_group], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&adapter->allocs_created, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&adapter->bytes_created, alloc->size, memory_order_relaxed);
}

/* Step 5: the handles become valid, unless the resource joined was
 * destroyed meanwhile.  A published object is another thread's to destroy
 * at once: what the call reports is written before publishing. */
static NTSTATUS publish(struct create_call *c)
{
    struct dxgk_create_allocation *a = c->a;
    struct dxgk_resource *owner = call_owner(c);
    struct dxgk_device *device = c->device;

    kmt_mutex_lock(&device->list_lock);
    if (c->existing && c->existing->destroying) {
        kmt_mutex_unlock(&device->list_lock);
        return STATUS_INVALID_PARAMETER;
    }
    if (c->res) {
        a->hResource = c->res->handle;
        kmt_object_get(&device->obj);
        list_add_tail(&device->resources, &c->res->entry);
        hmgr_publish(&dxgk_process.handles, c->res->handle, &c->res->obj);
    }
    for (UINT i = 0; i < a->count; i++) {
        struct dxgk_allocation *alloc = c->allocs[i];

        kmt_object_get(&device->obj);
        if (owner) {
            kmt_object_get(&owner->obj);
            alloc->resource = owner;
            list_add_tail(&owner->allocations, &alloc->entry);
        } else {
            list_add_tail(&device->allocations, &alloc->entry);
        }
        dxgk_allocation_account(alloc);
        a->allocs[i].hAllocation = alloc->handle;
        a->allocs[i].gpu_va = alloc->gpu_va;
        hmgr_publish(&dxgk_process.handles, alloc->handle, &alloc->obj);
    }
    kmt_mutex_unlock(&device->list_lock);
    a->hGlobalShare = c->res ? c->res->global_handle : 0;
    return STATUS_SUCCESS;
}

void dxgk_unreserve(struct dxgk_resource *res, struct dxgk_allocation **allocs, UINT count)
{
    /* handles in the reverse of their reservation, so each cancel gives
     * its value back: a refused call hands out nothing */
    for (UINT i = count; allocs && i--;) {
        if (!allocs[i])
            continue;
        if (allocs[i]->handle)
            hmgr_cancel(&dxgk_process.handles, allocs[i]->handle);
        dxgk_allocation_free(allocs[i]);
    }
    if (res) {
        if (res->handle)
            hmgr_cancel(&dxgk_process.handles, res->handle);
        dxgk_resource_free(res);
    }
}

/* Undoes every step before publish, in reverse. */
static void roll_back(struct create_call *c)
{
    struct dxgk_device *device = c->device;
    UINT count = c->a->count;

    creating = NULL;
    creating_count = 0;
    if (c->ddi_created) {
        HANDLE h;

        dxgk_ddi_close_allocations(device, c->allocs, count);
        h = c->existing ? joined_resource_begin(c) : c->res ? c->res->driver_resource : NULL;
        dxgk_ddi_destroy_allocations(device->adapter, c->allocs, count, call_owner(c) ? &h : NULL, c->res != NULL);
        if (c->existing)
            joined_resource_end(c, h);
    }
    dxgk_unreserve(c->res, c->allocs, count);
}

NTSTATUS dxgk_create_allocation(struct dxgk_create_allocation *a)
{
    struct create_call c = { .a = a };
    NTSTATUS status;

    if (!(c.device = dxgk_device_acquire(a->hDevice)))
        return STATUS_INVALID_PARAMETER;
    if ((status = validate_create(a)) || (status = find_resource_to_join(&c)))
        goto out;
    if ((status = arrays_get(&c)))
        goto out_arrays;                  /* nothing made yet, and allocs may be NULL */
    if ((status = reserve(&c)) || (status = ddi_create(&c)) || (status = ddi_open(&c)) ||
        (status = share(&c)))
        goto roll_back;
    creating = NULL;
    creating_count = 0;
    if ((status = copy_out(&c)) || (status = publish(&c)))
        goto roll_back;
    goto out_arrays;

roll_back:
    roll_back(&c);
out_arrays:
    arrays_put(&c);
out:
    if (c.existing)
        kmt_object_put(&c.existing->obj);
    dxgk_device_release(c.device);
    return status;
}
