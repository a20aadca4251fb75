/*
 * The runtime's callbacks, carried out through D3DKMT.
 *
 *   pfnQueryAdapterInfoCb   D3DKMTQueryAdapterInfo(UMDRIVERPRIVATE)
 *   pfnAllocateCb           D3DKMTCreateAllocation (D3DKMTCreateAllocation2
 *                           for a UMD of D3D_UMD_INTERFACE_VERSION_WDDM2_0 or
 *                           later, which passes D3DDDI_ALLOCATIONINFO2);
 *                           with hResource: a resource, shared when its
 *                           CreateResource said SharedResource
 *   pfnDeallocateCb/2Cb     D3DKMTDestroyAllocation2
 *   pfnRenderCb             D3DKMTRender
 *   pfnLockCb/pfnUnlockCb   D3DKMTLock / D3DKMTUnlock
 *   pfnCreateContextCb      D3DKMTCreateContext (ClientHint DX9)
 *   pfnDestroyContextCb     D3DKMTDestroyContext
 *
 * Every other slot of the tables is NULL, as a runtime leaves the ones its
 * version lacks.  Bad arguments give E_INVALIDARG without a D3DKMT call;
 * D3DKMT failures are mapped by rt_hresult().  The checks of checker.c run
 * before a deallocation is carried out; a violation does not stop it (the
 * kernel decides, as on Windows).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static void *dup_blob(const void *data, UINT size)
{
    void *copy = size ? malloc(size) : NULL;

    if (copy)
        memcpy(copy, data, size);
    return copy;
}

/* ---- pfnQueryAdapterInfoCb ------------------------------------------------------------ */

static HRESULT APIENTRY rt_query_adapter_info_cb(HANDLE hAdapter, const D3DDDICB_QUERYADAPTERINFO *q)
{
    struct rt_adapter *a = rt_adapter_from_handle(hAdapter);
    D3DKMT_QUERYADAPTERINFO k = { 0 };

    if (!a || !q || !q->pPrivateDriverData || !q->PrivateDriverDataSize)
        return E_INVALIDARG;
    k.hAdapter = a->hadapter;
    k.Type = KMTQAITYPE_UMDRIVERPRIVATE;
    k.pPrivateDriverData = q->pPrivateDriverData;
    k.PrivateDriverDataSize = q->PrivateDriverDataSize;
    return rt_hresult(D3DKMTQueryAdapterInfo(&k));
}

/* ---- pfnAllocateCb ---------------------------------------------------------------------- */

/* The records of one pfnAllocateCb, made before the kernel is asked so that
 * nothing can fail after it said yes. */
struct alloc_batch {
    struct rt_kres *new_kres;
    struct rt_alloc **allocs;
    void *resource_data;
    UINT count;
};

static void batch_free(struct alloc_batch *b)
{
    for (UINT i = 0; b->allocs && i < b->count; i++)
        if (b->allocs[i])
            rt_alloc_free(b->allocs[i]);
    free(b->allocs);
    free(b->new_kres);
    free(b->resource_data);
}

/* Allocation i's private data and its size, in either version of the info. */
static const void *allocation_data(const D3DDDICB_ALLOCATE *args, bool v2, UINT i, UINT *size)
{
    if (v2) {
        *size = args->pAllocationInfo2[i].PrivateDriverDataSize;
        return args->pAllocationInfo2[i].pPrivateDriverData;
    }
    *size = args->pAllocationInfo[i].PrivateDriverDataSize;
    return args->pAllocationInfo[i].pPrivateDriverData;
}

/* Each allocation's private data: a pointer for a size, within the limit.
 * A malformed request is E_INVALIDARG, not an allocation failure. */
static bool allocation_data_ok(const D3DDDICB_ALLOCATE *args, bool v2)
{
    for (UINT i = 0; i < args->NumAllocations; i++) {
        UINT size;
        const void *priv = allocation_data(args, v2, i, &size);

        if (size > RT_MAX_PRIVATE_DATA || (size && !priv))
            return false;
    }
    return true;
}

static bool batch_prepare(struct alloc_batch *b, const D3DDDICB_ALLOCATE *args, bool v2, bool need_kres)
{
    memset(b, 0, sizeof(*b));
    b->count = args->NumAllocations;
    if (!(b->allocs = calloc(b->count, sizeof(*b->allocs))))
        return false;
    if (need_kres && !(b->new_kres = calloc(1, sizeof(*b->new_kres))))
        return false;
    if (args->PrivateDriverDataSize &&
        !(b->resource_data = dup_blob(args->pPrivateDriverData, args->PrivateDriverDataSize)))
        return false;
    for (UINT i = 0; i < b->count; i++) {
        UINT size;
        const void *priv = allocation_data(args, v2, i, &size);

        if (!(b->allocs[i] = calloc(1, sizeof(**b->allocs))))
            return false;
        if (size && !(b->allocs[i]->priv = dup_blob(priv, size)))
            return false;
        b->allocs[i]->priv_size = size;
    }
    return true;
}

/* Files the new allocations under `kres` (or the device) as one group. */
static void batch_commit(struct rt_device *dev, struct alloc_batch *b, struct rt_kres *kres,
                         const D3DDDICB_ALLOCATE *args, bool v2)
{
    struct rt_alloc **tail = kres ? &kres->allocs : &dev->standalone;
    UINT group = kres ? kres->groups++ : 0;

    while (*tail)
        tail = &(*tail)->next;
    for (UINT i = 0; i < b->count; i++) {
        struct rt_alloc *a = b->allocs[i];

        a->handle = v2 ? args->pAllocationInfo2[i].hAllocation : args->pAllocationInfo[i].hAllocation;
        a->kres = kres;
        a->group = group;
        *tail = a;
        tail = &a->next;
        b->allocs[i] = NULL;
    }
    rt_stat_add(dev->adapter, &dev->adapter->stats.live_allocations, (int)b->count);
    if (kres && b->resource_data) {      /* the latest resource data replaces the former */
        free(kres->priv);
        kres->priv = b->resource_data;
        kres->priv_size = args->PrivateDriverDataSize;
        b->resource_data = NULL;
    }
}

static HRESULT allocate_locked(struct rt_device *dev, D3DDDICB_ALLOCATE *args)
{
    bool v2 = dev->adapter->driver_version >= D3D_UMD_INTERFACE_VERSION_WDDM2_0;
    D3DKMT_CREATEALLOCATION ca = { 0 };
    struct rt_resource *res = NULL;
    struct rt_kres *kres = NULL;
    struct alloc_batch b;
    NTSTATUS status;

    if (args->hResource) {
        res = rt_resource_find(dev, args->hResource);
        if (!res || res->released || res->opened) {
            struct kmtumd_violation v = { .rule = KMTUMD_RULE_UNKNOWN_OBJECT };

            rt_violation(dev, &v, "pfnAllocateCb names resource handle %p, which is not a resource "
                         "this device may allocate for", args->hResource);
            return E_INVALIDARG;
        }
        kres = res->kres;
    }
    if (!allocation_data_ok(args, v2))
        return E_INVALIDARG;
    if (!batch_prepare(&b, args, v2, res && !kres)) {
        batch_free(&b);
        return E_OUTOFMEMORY;
    }
    ca.hDevice = dev->hdevice;
    ca.hResource = kres ? kres->handle : 0;
    ca.pPrivateDriverData = args->pPrivateDriverData;
    ca.PrivateDriverDataSize = args->PrivateDriverDataSize;
    ca.NumAllocations = args->NumAllocations;
    if (v2)
        ca.pAllocationInfo2 = args->pAllocationInfo2;
    else
        ca.pAllocationInfo = args->pAllocationInfo;
    ca.Flags.CreateResource = res && !kres;
    ca.Flags.CreateShared = res && !kres && res->flags.SharedResource;
    ca.hPrivateRuntimeResourceHandle = res;      /* the runtime's handle, as on Windows */
    status = v2 ? D3DKMTCreateAllocation2(&ca) : D3DKMTCreateAllocation(&ca);
    if (status) {
        batch_free(&b);
        return rt_hresult(status);
    }
    if (b.new_kres) {
        kres = b.new_kres;
        b.new_kres = NULL;
        kres->handle = ca.hResource;
        kres->share = ca.hGlobalShare;
        kres->shared = ca.Flags.CreateShared;
        kres->holders = 1;
        kres->next = dev->kres;
        dev->kres = kres;
        res->kres = kres;
    }
    batch_commit(dev, &b, kres, args, v2);
    batch_free(&b);
    args->hKMResource = kres ? kres->handle : 0;
    if (res)
        rt_resource_snapshot(res);
    return S_OK;
}

static HRESULT APIENTRY rt_allocate_cb(HANDLE hDevice, D3DDDICB_ALLOCATE *args)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    HRESULT hr;

    if (!dev || !args)
        return E_INVALIDARG;
    rt_stat_add(dev->adapter, &dev->adapter->stats.allocate_calls, 1);
    if (!args->NumAllocations || args->NumAllocations > D3DKMT_CREATEALLOCATION_MAX || !args->pAllocationInfo ||
        args->PrivateDriverDataSize > RT_MAX_PRIVATE_DATA ||
        (args->PrivateDriverDataSize && !args->pPrivateDriverData))
        return E_INVALIDARG;
    kmtumd_lock_enter(&dev->lock);
    hr = allocate_locked(dev, args);
    kmtumd_lock_leave(&dev->lock);
    return hr;
}

/* ---- pfnDeallocateCb / pfnDeallocate2Cb ----------------------------------------------------- */

/* The whole resource: its D3DKMT resource goes when its last holder lets go. */
static HRESULT deallocate_resource(struct rt_device *dev, const char *call, HANDLE hResource,
                                   D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    struct rt_resource *res = rt_resource_find(dev, hResource);
    D3DKMT_HANDLE *handles;
    struct rt_kres *kres;
    UINT n = 0;

    if (!res || res->released) {
        struct kmtumd_violation v = { .rule = KMTUMD_RULE_UNKNOWN_OBJECT };

        rt_violation(dev, &v, "%s names resource handle %p, which is not a live resource of this device "
                     "(never created, or already deallocated)", call, hResource);
        return E_INVALIDARG;
    }
    if ((kres = res->kres)) {
        if (!(handles = malloc((rt_kres_count(kres) + 1) * sizeof(*handles))))
            return E_OUTOFMEMORY;
        for (struct rt_alloc *a = kres->allocs; a; a = a->next)
            handles[n++] = a->handle;
        rt_check_flushed(dev, call, kres->handle, handles, n);
        free(handles);
        if (kres->holders == 1) {
            D3DKMT_DESTROYALLOCATION2 d = { 0 };
            NTSTATUS status;

            d.hDevice = dev->hdevice;
            d.hResource = kres->handle;
            d.Flags = flags;
            if ((status = D3DKMTDestroyAllocation2(&d)))
                return rt_hresult(status);   /* still held: the UMD may try again */
            rt_resource_snapshot(res);
            rt_kres_free(dev, kres);
        } else {
            rt_resource_snapshot(res);
            kres->holders--;
        }
        res->kres = NULL;
    }
    if (res->destroyed)
        rt_stat_add(dev->adapter, &dev->adapter->stats.deferred_deallocations, 1);
    res->released = true;
    return S_OK;
}

static HRESULT deallocate_list(struct rt_device *dev, const char *call, UINT count, const D3DKMT_HANDLE *list,
                               D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    D3DKMT_DESTROYALLOCATION2 d = { 0 };
    NTSTATUS status;

    if (!count || !list || count > D3DKMT_CREATEALLOCATION_MAX)
        return E_INVALIDARG;
    rt_check_list(dev, call, list, count);
    rt_check_flushed(dev, call, 0, list, count);
    d.hDevice = dev->hdevice;
    d.phAllocationList = list;
    d.AllocationCount = count;
    d.Flags = flags;
    if (!(status = D3DKMTDestroyAllocation2(&d)))
        rt_forget_allocations(dev, list, count);
    return rt_hresult(status);
}

static HRESULT deallocate(HANDLE hDevice, const char *call, HANDLE hResource, UINT count,
                          const D3DKMT_HANDLE *list, D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    HRESULT hr;

    if (!dev)
        return E_INVALIDARG;
    rt_stat_add(dev->adapter, &dev->adapter->stats.deallocate_calls, 1);
    if (flags.SystemUseOnly)
        return E_INVALIDARG;             /* not for UMDs */
    kmtumd_lock_enter(&dev->lock);
    /* with a resource, the list is ignored (d3dumddi.h) */
    hr = hResource ? deallocate_resource(dev, call, hResource, flags)
                   : deallocate_list(dev, call, count, list, flags);
    kmtumd_lock_leave(&dev->lock);
    return hr;
}

static HRESULT APIENTRY rt_deallocate_cb(HANDLE hDevice, const D3DDDICB_DEALLOCATE *args)
{
    D3DDDICB_DESTROYALLOCATION2FLAGS none = { 0 };

    if (!args)
        return E_INVALIDARG;
    return deallocate(hDevice, "pfnDeallocateCb", args->hResource, args->NumAllocations, args->HandleList, none);
}

static HRESULT APIENTRY rt_deallocate2_cb(HANDLE hDevice, const D3DDDICB_DEALLOCATE2 *args)
{
    if (!args)
        return E_INVALIDARG;
    return deallocate(hDevice, "pfnDeallocate2Cb", args->hResource, args->NumAllocations, args->HandleList,
                      args->Flags);
}

/* ---- pfnRenderCb ------------------------------------------------------------------------------------ */

static HRESULT render_locked(struct rt_device *dev, D3DDDICB_RENDER *r)
{
    struct rt_context *ctx = rt_context_find(dev, r->hContext);
    D3DKMT_RENDER k = { 0 };
    NTSTATUS status;
    UINT flags = r->Flags.Value;

    /* kmtshim's Render knows no broadcast; the flags are D3DKMT_RENDERFLAGS' first four */
    if (!ctx || r->BroadcastContextCount || (flags & ~0x0fu))
        return E_INVALIDARG;
    k.hContext = ctx->handle;
    k.CommandOffset = r->CommandOffset;
    k.CommandLength = r->CommandLength;
    k.AllocationCount = r->NumAllocations;
    k.PatchLocationCount = r->NumPatchLocations;
    k.NewCommandBufferSize = r->NewCommandBufferSize;
    k.NewAllocationListSize = r->NewAllocationListSize;
    k.NewPatchLocationListSize = r->NewPatchLocationListSize;
    memcpy(&k.Flags, &flags, sizeof(flags));
    k.pPrivateDriverData = r->pPrivateDriverData;
    k.PrivateDriverDataSize = r->PrivateDriverDataSize;
    if ((status = D3DKMTRender(&k)))
        return rt_hresult(status);
    r->pNewCommandBuffer = k.pNewCommandBuffer;
    r->NewCommandBufferSize = k.NewCommandBufferSize;
    r->pNewAllocationList = k.pNewAllocationList;
    r->NewAllocationListSize = k.NewAllocationListSize;
    r->pNewPatchLocationList = k.pNewPatchLocationList;
    r->NewPatchLocationListSize = k.NewPatchLocationListSize;
    r->QueuedBufferCount = k.QueuedBufferCount;
    r->NewCommandBuffer = k.NewCommandBuffer;
    /* flushed: the next batch starts with an empty list */
    ctx->list = k.pNewAllocationList;
    ctx->list_size = k.NewAllocationListSize;
    memset(ctx->list, 0, (size_t)ctx->list_size * sizeof(*ctx->list));
    rt_stat_add(dev->adapter, &dev->adapter->stats.render_calls, 1);
    return S_OK;
}

static HRESULT APIENTRY rt_render_cb(HANDLE hDevice, D3DDDICB_RENDER *r)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    HRESULT hr;

    if (!dev || !r)
        return E_INVALIDARG;
    kmtumd_lock_enter(&dev->lock);
    hr = render_locked(dev, r);
    kmtumd_lock_leave(&dev->lock);
    return hr;
}

/* ---- pfnLockCb / pfnUnlockCb (no device lock: a lock may wait for the GPU) ------------------------- */

static HRESULT APIENTRY rt_lock_cb(HANDLE hDevice, D3DDDICB_LOCK *l)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    D3DKMT_LOCK k = { 0 };
    NTSTATUS status;

    if (!dev || !l)
        return E_INVALIDARG;
    k.hDevice = dev->hdevice;
    k.hAllocation = l->hAllocation;
    k.PrivateDriverData = l->PrivateDriverData;
    k.NumPages = l->NumPages;
    k.pPages = l->pPages;
    k.Flags = l->Flags;
    if ((status = D3DKMTLock(&k)))
        return rt_hresult(status);
    l->pData = k.pData;
    l->GpuVirtualAddress = k.GpuVirtualAddress;
    rt_stat_add(dev->adapter, &dev->adapter->stats.lock_calls, 1);
    return S_OK;
}

static HRESULT APIENTRY rt_unlock_cb(HANDLE hDevice, const D3DDDICB_UNLOCK *u)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    D3DKMT_UNLOCK k = { 0 };
    NTSTATUS status;

    if (!dev || !u)
        return E_INVALIDARG;
    k.hDevice = dev->hdevice;
    k.NumAllocations = u->NumAllocations;
    k.phAllocations = u->phAllocations;
    if ((status = D3DKMTUnlock(&k)))
        return rt_hresult(status);
    rt_stat_add(dev->adapter, &dev->adapter->stats.unlock_calls, 1);
    return S_OK;
}

/* ---- pfnCreateContextCb / pfnDestroyContextCb ------------------------------------------------------ */

static HRESULT create_context_locked(struct rt_device *dev, D3DDDICB_CREATECONTEXT *c)
{
    struct rt_context *ctx = calloc(1, sizeof(*ctx));
    D3DKMT_CREATECONTEXT k = { 0 };
    NTSTATUS status;

    if (!ctx)
        return E_OUTOFMEMORY;
    k.hDevice = dev->hdevice;
    k.NodeOrdinal = c->NodeOrdinal;
    k.EngineAffinity = c->EngineAffinity;
    k.Flags = c->Flags;
    k.pPrivateDriverData = c->pPrivateDriverData;
    k.PrivateDriverDataSize = c->PrivateDriverDataSize;
    k.ClientHint = D3DKMT_CLIENTHINT_DX9;
    if ((status = D3DKMTCreateContext(&k))) {
        free(ctx);
        return rt_hresult(status);
    }
    ctx->handle = k.hContext;
    ctx->list = k.pAllocationList;
    ctx->list_size = k.AllocationListSize;
    memset(ctx->list, 0, (size_t)ctx->list_size * sizeof(*ctx->list));
    ctx->next = dev->contexts;
    dev->contexts = ctx;
    c->hContext = (HANDLE)(UINT_PTR)k.hContext;
    c->pCommandBuffer = k.pCommandBuffer;
    c->CommandBufferSize = k.CommandBufferSize;
    c->pAllocationList = k.pAllocationList;
    c->AllocationListSize = k.AllocationListSize;
    c->pPatchLocationList = k.pPatchLocationList;
    c->PatchLocationListSize = k.PatchLocationListSize;
    c->CommandBuffer = k.CommandBuffer;
    rt_stat_add(dev->adapter, &dev->adapter->stats.contexts_created, 1);
    return S_OK;
}

static HRESULT APIENTRY rt_create_context_cb(HANDLE hDevice, D3DDDICB_CREATECONTEXT *c)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    HRESULT hr;

    if (!dev || !c || c->PrivateDriverDataSize > RT_MAX_PRIVATE_DATA ||
        (c->PrivateDriverDataSize && !c->pPrivateDriverData))
        return E_INVALIDARG;
    kmtumd_lock_enter(&dev->lock);
    hr = create_context_locked(dev, c);
    kmtumd_lock_leave(&dev->lock);
    return hr;
}

static HRESULT destroy_context_locked(struct rt_device *dev, HANDLE hContext)
{
    D3DKMT_DESTROYCONTEXT k = { 0 };
    struct rt_context **p;
    NTSTATUS status;

    for (p = &dev->contexts; *p && (HANDLE)(UINT_PTR)(*p)->handle != hContext; p = &(*p)->next)
        ;
    if (!*p || !hContext)
        return E_INVALIDARG;
    k.hContext = (*p)->handle;
    if ((status = D3DKMTDestroyContext(&k)))
        return rt_hresult(status);
    {
        struct rt_context *gone = *p;

        *p = gone->next;
        free(gone);
    }
    rt_stat_add(dev->adapter, &dev->adapter->stats.contexts_destroyed, 1);
    return S_OK;
}

static HRESULT APIENTRY rt_destroy_context_cb(HANDLE hDevice, const D3DDDICB_DESTROYCONTEXT *c)
{
    struct rt_device *dev = rt_device_from_handle(hDevice);
    HRESULT hr;

    if (!dev || !c)
        return E_INVALIDARG;
    kmtumd_lock_enter(&dev->lock);
    hr = destroy_context_locked(dev, c->hContext);
    kmtumd_lock_leave(&dev->lock);
    return hr;
}

/* ---- the tables --------------------------------------------------------------------------------------- */

const D3DDDI_DEVICECALLBACKS rt_device_callbacks = {
    .pfnAllocateCb = rt_allocate_cb,
    .pfnDeallocateCb = rt_deallocate_cb,
    .pfnRenderCb = rt_render_cb,
    .pfnLockCb = rt_lock_cb,
    .pfnUnlockCb = rt_unlock_cb,
    .pfnCreateContextCb = rt_create_context_cb,
    .pfnDestroyContextCb = rt_destroy_context_cb,
    .pfnDeallocate2Cb = rt_deallocate2_cb,
};

const D3DDDI_ADAPTERCALLBACKS rt_adapter_callbacks = {
    .pfnQueryAdapterInfoCb = rt_query_adapter_info_cb,
};
