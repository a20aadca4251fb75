/*
 * The recording miniport's allocation DDIs: CreateAllocation,
 * DestroyAllocation, OpenAllocation, CloseAllocation, Lock, Unlock.
 *
 * Each logs its arguments exactly as received (private data copied before
 * the miniport touches it) and checks the ordering contract:
 * Create -> Open(Create) -> Close(every binding) -> Destroy, never Destroy
 * with a binding open or a mapping held, DestroyResource only when the
 * resource has nothing left.
 */
#include <stdlib.h>
#include <string.h>

#include "record_internal.h"

#define REC_PAGE 4096u

/* ---- CreateAllocation ------------------------------------------------------------ */

static void log_create(struct record_call *call, HANDLE hAdapter, const DXGKARG_CREATEALLOCATION *args)
{
    call->adapter = hAdapter;
    call->num = args->NumAllocations;
    call->flags = args->Flags.Value;
    call->resource_in = args->hResource;
    call->priv_size = args->PrivateDriverDataSize;
    call->priv = rec_dup(args->pPrivateDriverData, args->PrivateDriverDataSize);
    if (!args->NumAllocations || !(call->allocs = calloc(args->NumAllocations, sizeof(*call->allocs)))) {
        call->num = 0;
        return;
    }
    for (UINT i = 0; i < args->NumAllocations; i++) {
        const DXGK_ALLOCATIONINFO *info = &args->pAllocationInfo[i];
        struct record_alloc *r = &call->allocs[i];

        r->size_in = info->Size;
        r->sysmem = info->pKmtSystemMem;
        r->flags_in = info->Flags.Value;
        r->priv_size = info->PrivateDriverDataSize;
        r->priv = rec_dup(info->pPrivateDriverData, info->PrivateDriverDataSize);
    }
}

/* The resource a create names or makes; NULL with *status set on failure. */
static struct rec_resource *create_resource(struct rec_adapter *a, const DXGKARG_CREATEALLOCATION *args,
                                            NTSTATUS *status)
{
    struct rec_resource *r;

    if (args->hResource) {
        struct rec_obj *obj = rec_obj_find(args->hResource, REC_RESOURCE);

        if (!obj || obj->dead) {
            rec_violation("DxgkDdiCreateAllocation: %s resource %p", obj ? "destroyed" : "unknown",
                          args->hResource);
            *status = STATUS_INVALID_PARAMETER;
            return NULL;
        }
        return (struct rec_resource *)obj;
    }
    if (!(r = rec_obj_new(REC_RESOURCE, sizeof(*r))) || !(r->state = calloc(1, sizeof(*r->state)))) {
        if (r)
            r->o.dead = true;
        *status = STATUS_NO_MEMORY;
        return NULL;
    }
    r->adapter = a;
    return r;
}

static struct rec_allocation *create_one(struct rec_adapter *a, DXGK_ALLOCATIONINFO *info)
{
    struct rec_allocation *alloc = rec_obj_new(REC_ALLOCATION, sizeof(*alloc));
    SIZE_T size = info->Size ? info->Size : rec_config.allocation_size;

    if (!alloc)
        return NULL;
    alloc->adapter = a;
    alloc->size = size;
    if (info->Flags.ExistingSysMem && !info->pKmtSystemMem)
        rec_violation("DxgkDdiCreateAllocation: ExistingSysMem without pKmtSystemMem");
    if (!info->Flags.ExistingSysMem) {
        size_t rounded = (size + REC_PAGE - 1) & ~(size_t)(REC_PAGE - 1);

        if (!(alloc->memory = aligned_alloc(REC_PAGE, rounded))) {
            alloc->o.dead = true;
            return NULL;
        }
        memset(alloc->memory, 0, rounded);
    } else {
        alloc->memory = NULL;
    }
    info->Size = size;
    info->Alignment = REC_PAGE;
    info->SupportedReadSegmentSet = info->SupportedWriteSegmentSet = 3;
    info->Flags.CpuVisible = 1;
    info->hAllocation = alloc;
    return alloc;
}

/* Undoes allocations [0, count) of a failed call. */
static void undo_create(DXGK_ALLOCATIONINFO *info, UINT count)
{
    for (UINT i = 0; i < count; i++) {
        struct rec_allocation *alloc = info[i].hAllocation;

        if (alloc) {
            alloc->o.dead = true;
            info[i].hAllocation = NULL;
        }
    }
}

NTSTATUS APIENTRY rec_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args)
{
    struct record_call *call;
    struct rec_resource *res = NULL;
    struct rec_adapter *a;
    NTSTATUS status = STATUS_INVALID_PARAMETER;
    bool new_resource;
    UINT null_at, i;

    rec_maybe_block(RECORD_CREATE_ALLOCATION);
    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_CREATE_ALLOCATION);
    log_create(call, hAdapter, args);
    if (!(a = rec_check_adapter(hAdapter, __func__)) ||
        (status = rec_injected_failure(RECORD_CREATE_ALLOCATION)))
        goto out;
    if (!args->Flags.Resource && args->hResource)
        rec_violation("%s: hResource %p without Flags.Resource", __func__, args->hResource);
    new_resource = args->Flags.Resource && !args->hResource;
    if (args->Flags.Resource && !(res = create_resource(a, args, &status)))
        goto out;

    null_at = rec_injected_null(RECORD_CREATE_ALLOCATION);
    for (i = 0; i < args->NumAllocations; i++) {
        DXGK_ALLOCATIONINFO *info = &args->pAllocationInfo[i];
        struct rec_allocation *alloc;

        info->hAllocation = NULL;
        if (i == null_at)
            continue;
        if (!(alloc = create_one(a, info))) {
            undo_create(args->pAllocationInfo, i);
            if (new_resource)
                res->o.dead = true;
            status = STATUS_NO_MEMORY;
            goto out;
        }
        alloc->resource = res ? res->state : NULL;
        if (res)
            res->state->live_allocations++;
        if (rec_config.stamp_private_data && info->pPrivateDriverData && info->PrivateDriverDataSize)
            ((unsigned char *)info->pPrivateDriverData)[0] = (unsigned char)(0xc0 + i);
    }
    if (new_resource)
        args->hResource = res;
    for (i = 0; i < call->num; i++)
        call->allocs[i].handle = args->pAllocationInfo[i].hAllocation;
    status = STATUS_SUCCESS;
out:
    call->resource_out = args->hResource;
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}

/* ---- DestroyAllocation ------------------------------------------------------------- */

/* The resource handle a destroy names, live; NULL (and a violation) otherwise. */
static struct rec_resource *destroy_resource_handle(HANDLE h)
{
    struct rec_obj *obj;

    if (!h)
        return NULL;
    obj = rec_obj_find(h, REC_RESOURCE);
    if (!obj || obj->dead) {
        rec_violation("DxgkDdiDestroyAllocation: %s resource handle %p",
                      obj ? "destroyed or rewritten" : "unknown", h);
        return NULL;
    }
    return (struct rec_resource *)obj;
}

static void destroy_one(HANDLE h, struct rec_resource *res, bool res_given)
{
    struct rec_obj *obj = rec_obj_find(h, REC_ALLOCATION);
    struct rec_allocation *alloc = (struct rec_allocation *)obj;

    if (!obj) {
        rec_violation("DxgkDdiDestroyAllocation: unknown allocation %p", h);
        return;
    }
    if (obj->dead) {
        rec_violation("DxgkDdiDestroyAllocation: allocation %p destroyed twice", h);
        return;
    }
    if (alloc->bindings)
        rec_violation("DxgkDdiDestroyAllocation: allocation %p destroyed with %u open bindings", h,
                      alloc->bindings);
    if (alloc->mappings)
        rec_violation("DxgkDdiDestroyAllocation: allocation %p destroyed while locked", h);
    if (res_given && alloc->resource != (res ? res->state : NULL))
        rec_violation("DxgkDdiDestroyAllocation: allocation %p listed with a resource it does not "
                      "belong to", h);
    if (!res_given && alloc->resource)
        rec_violation("DxgkDdiDestroyAllocation: allocation %p of a resource destroyed without "
                      "hResource", h);
    obj->dead = true;
    free(alloc->memory);
    alloc->memory = NULL;
    if (alloc->resource && alloc->resource->live_allocations)
        alloc->resource->live_allocations--;
}

/* Gives the resource a new handle, the way a KMD may on a partial destroy. */
static HANDLE rewrite_resource(struct rec_resource *res)
{
    struct rec_resource *r = rec_obj_new(REC_RESOURCE, sizeof(*r));

    if (!r)
        return res;
    r->state = res->state;
    r->adapter = res->adapter;
    res->o.dead = true;
    return r;
}

NTSTATUS APIENTRY rec_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args)
{
    /* hResource is in/out (the DDK says so); the core's block is writable */
    DXGKARG_DESTROYALLOCATION *inout = (DXGKARG_DESTROYALLOCATION *)args;
    struct record_call *call;
    struct rec_resource *res;

    rec_maybe_block(RECORD_DESTROY_ALLOCATION);
    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_DESTROY_ALLOCATION);
    call->adapter = hAdapter;
    call->num = args->NumAllocations;
    call->flags = args->Flags.Value;
    call->resource_in = args->hResource;
    if (args->NumAllocations && !(call->allocs = calloc(args->NumAllocations, sizeof(*call->allocs))))
        call->num = 0;
    for (UINT i = 0; i < call->num; i++)
        call->allocs[i].handle = args->pAllocationList[i];

    rec_check_adapter(hAdapter, __func__);
    res = destroy_resource_handle(args->hResource);
    for (UINT i = 0; i < args->NumAllocations; i++)
        destroy_one(args->pAllocationList[i], res, args->hResource != NULL);

    if (args->Flags.DestroyResource) {
        if (!args->hResource)
            rec_violation("%s: Flags.DestroyResource without hResource", __func__);
        else if (res && res->state->live_allocations)
            rec_violation("%s: resource %p destroyed with %u allocations left", __func__,
                          args->hResource, res->state->live_allocations);
        if (res) {
            res->o.dead = true;
            res->state->destroyed = true;
        }
    } else if (res && rec_config.rewrite_resource) {
        inout->hResource = rewrite_resource(res);
    }
    call->resource_out = args->hResource;
    pthread_mutex_unlock(&rec_lock);
    return STATUS_SUCCESS;
}

/* ---- OpenAllocation / CloseAllocation ------------------------------------------------ */

static void undo_open(const DXGKARG_OPENALLOCATION *args, UINT count)
{
    for (UINT i = 0; i < count; i++) {
        struct rec_binding *b = args->pOpenAllocation[i].hDeviceSpecificAllocation;

        if (b) {
            b->o.dead = true;
            b->allocation->bindings--;
            args->pOpenAllocation[i].hDeviceSpecificAllocation = NULL;
        }
    }
}

/* Binds one allocation; the allocation was resolved through the core. */
static NTSTATUS open_one(struct rec_device *d, HANDLE resolved, bool create, HANDLE *out)
{
    struct rec_obj *obj = rec_obj_find(resolved, REC_ALLOCATION);
    struct rec_allocation *alloc = (struct rec_allocation *)obj;
    struct rec_binding *b;

    if (!obj || obj->dead) {
        rec_violation("DxgkDdiOpenAllocation: %s allocation %p", obj ? "destroyed" : "unknown", resolved);
        return STATUS_INVALID_PARAMETER;
    }
    if (create) {
        if (alloc->opened_for_create)
            rec_violation("DxgkDdiOpenAllocation: allocation %p opened with Create twice", resolved);
        alloc->opened_for_create = true;
        alloc->creator = d;
    }
    if (!(b = rec_obj_new(REC_BINDING, sizeof(*b))))
        return STATUS_NO_MEMORY;
    b->allocation = alloc;
    b->device = d;
    alloc->bindings++;
    *out = b;
    return STATUS_SUCCESS;
}

static void log_open(struct record_call *call, HANDLE hDevice, const DXGKARG_OPENALLOCATION *args,
                     const HANDLE *resolved)
{
    call->device = hDevice;
    call->flags = args->Flags.Value;
    call->num = args->NumAllocations;
    call->priv_size = args->PrivateDriverSize;
    call->priv = rec_dup(args->pPrivateDriverData, args->PrivateDriverSize);
    if (!args->NumAllocations || !(call->allocs = calloc(args->NumAllocations, sizeof(*call->allocs)))) {
        call->num = 0;
        return;
    }
    for (UINT i = 0; i < args->NumAllocations; i++) {
        const DXGK_OPENALLOCATIONINFO *o = &args->pOpenAllocation[i];

        call->allocs[i].core_handle = o->hAllocation;
        call->allocs[i].resolved = resolved ? resolved[i] : NULL;
        call->allocs[i].priv_size = o->PrivateDriverDataSize;
        call->allocs[i].priv = rec_dup(o->pPrivateDriverData, o->PrivateDriverDataSize);
    }
}

/* DxgkCbGetHandleData for every allocation, outside rec_lock: the core may
 * call back into us from there. */
static HANDLE *resolve_all(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args)
{
    DXGKCB_GETHANDLEDATA cb = NULL;
    struct rec_device *d;
    HANDLE *resolved;

    pthread_mutex_lock(&rec_lock);
    if ((d = (struct rec_device *)rec_obj_find(hDevice, REC_DEVICE)))
        cb = d->adapter->k.DxgkCbGetHandleData;
    pthread_mutex_unlock(&rec_lock);
    if (!cb || !args->NumAllocations || !(resolved = calloc(args->NumAllocations, sizeof(HANDLE))))
        return NULL;
    for (UINT i = 0; i < args->NumAllocations; i++) {
        DXGKARGCB_GETHANDLEDATA q = { .hObject = args->pOpenAllocation[i].hAllocation,
                                      .Type = DXGK_HANDLE_ALLOCATION };
        resolved[i] = cb(&q);
    }
    return resolved;
}

NTSTATUS APIENTRY rec_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args)
{
    HANDLE *resolved;
    struct record_call *call;
    struct rec_device *d;
    NTSTATUS status = STATUS_INVALID_PARAMETER;
    UINT null_at, i = 0;

    rec_maybe_block(RECORD_OPEN_ALLOCATION);
    resolved = resolve_all(hDevice, args);
    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_OPEN_ALLOCATION);
    log_open(call, hDevice, args, resolved);
    if (!(d = rec_check_device(hDevice, __func__)) || !resolved ||
        (status = rec_injected_failure(RECORD_OPEN_ALLOCATION)))
        goto out;
    null_at = rec_injected_null(RECORD_OPEN_ALLOCATION);
    for (i = 0; i < args->NumAllocations; i++) {
        HANDLE *out = &args->pOpenAllocation[i].hDeviceSpecificAllocation;

        *out = NULL;
        if (i != null_at && (status = open_one(d, resolved[i], args->Flags.Create, out))) {
            undo_open(args, i);
            goto out;
        }
    }
    for (i = 0; i < call->num; i++)
        call->allocs[i].handle = args->pOpenAllocation[i].hDeviceSpecificAllocation;
out:
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    free(resolved);
    return status;
}

static void close_one(struct rec_device *d, HANDLE h)
{
    struct rec_obj *obj = rec_obj_find(h, REC_BINDING);
    struct rec_binding *b = (struct rec_binding *)obj;

    if (!obj) {
        rec_violation("DxgkDdiCloseAllocation: unknown binding %p", h);
        return;
    }
    if (obj->dead) {
        rec_violation("DxgkDdiCloseAllocation: binding %p closed twice", h);
        return;
    }
    if (b->device != d)
        rec_violation("DxgkDdiCloseAllocation: binding %p closed through another device", h);
    obj->dead = true;
    b->allocation->bindings--;
}

NTSTATUS APIENTRY rec_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args)
{
    struct record_call *call;
    struct rec_device *d;

    rec_maybe_block(RECORD_CLOSE_ALLOCATION);
    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_CLOSE_ALLOCATION);
    call->device = hDevice;
    call->num = args->NumAllocations;
    if (args->NumAllocations && !(call->allocs = calloc(args->NumAllocations, sizeof(*call->allocs))))
        call->num = 0;
    for (UINT i = 0; i < call->num; i++)
        call->allocs[i].handle = args->pOpenHandleList[i];
    if (!args->NumAllocations)
        rec_violation("%s: called with no bindings", __func__);
    if ((d = rec_check_device(hDevice, __func__)))
        for (UINT i = 0; i < args->NumAllocations; i++)
            close_one(d, args->pOpenHandleList[i]);
    pthread_mutex_unlock(&rec_lock);
    return STATUS_SUCCESS;
}

/* ---- Lock / Unlock --------------------------------------------------------------- */

static struct rec_allocation *live_allocation(HANDLE h, const char *ddi)
{
    struct rec_obj *obj = rec_obj_find(h, REC_ALLOCATION);

    if (!obj || obj->dead) {
        rec_violation("%s: %s allocation %p", ddi, obj ? "destroyed" : "unknown", h);
        return NULL;
    }
    return (struct rec_allocation *)obj;
}

NTSTATUS APIENTRY rec_lock_allocation(HANDLE hAdapter, DXGKARG_LOCK *args)
{
    struct record_call *call;
    struct rec_allocation *alloc;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    rec_maybe_block(RECORD_LOCK);
    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_LOCK);
    call->adapter = hAdapter;
    call->flags = args->Flags.Value;
    call->num_pages = args->NumPages;
    if (args->NumPages && args->pPages && (call->pages = malloc(args->NumPages * sizeof(UINT))))
        memcpy(call->pages, args->pPages, args->NumPages * sizeof(UINT));
    if ((call->allocs = calloc(1, sizeof(*call->allocs)))) {
        call->allocs[0].handle = args->hAllocation;
        call->num = 1;
    }
    rec_check_adapter(hAdapter, __func__);
    if ((alloc = live_allocation(args->hAllocation, __func__)) &&
        !(status = rec_injected_failure(RECORD_LOCK))) {
        if (!alloc->memory)
            rec_violation("%s: existing-sysmem allocation %p reached the miniport", __func__, alloc);
        args->pData = alloc->memory;
        args->GpuVirtualAddress = rec_config.lock_gpu_va;
        alloc->mappings++;
    }
    call->data = args->pData;
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}

NTSTATUS APIENTRY rec_unlock_allocation(HANDLE hAdapter, const DXGKARG_UNLOCK *args)
{
    struct record_call *call;
    struct rec_allocation *alloc;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    rec_maybe_block(RECORD_UNLOCK);
    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_UNLOCK);
    call->adapter = hAdapter;
    call->data = args->pData;
    if ((call->allocs = calloc(1, sizeof(*call->allocs)))) {
        call->allocs[0].handle = args->hAllocation;
        call->num = 1;
    }
    rec_check_adapter(hAdapter, __func__);
    if ((alloc = live_allocation(args->hAllocation, __func__))) {
        if (!alloc->mappings)
            rec_violation("%s: allocation %p was not locked", __func__, alloc);
        else
            alloc->mappings--;
        if (args->pData != alloc->memory)
            rec_violation("%s: pData %p is not what DxgkDdiLock returned", __func__, args->pData);
        status = STATUS_SUCCESS;
    }
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}
