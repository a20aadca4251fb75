/*
 * The shared core of kmtshim's UMDs (see umd.h).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "umd.h"

#define ADAPTER_MAGIC 0x41444d55u                /* "UMDA" */
#define DEVICE_MAGIC 0x44444d55u                 /* "UMDD" */
#define SOFT_PAGE 4096u

/* ---- handles ------------------------------------------------------------------------------ */

static struct umd_device *device_of(HANDLE h)
{
    struct umd_device *dev = h;

    return dev && dev->magic == DEVICE_MAGIC ? dev : NULL;
}

/* A live resource of the device; never trusts the handle further. */
static struct umd_resource *resource_of(struct umd_device *dev, HANDLE h)
{
    for (struct umd_resource *r = dev->resources; r; r = r->next)
        if ((HANDLE)r == h)
            return r;
    return NULL;
}

void umd_unlink_resource(struct umd_device *dev, struct umd_resource *res)
{
    for (struct umd_resource **p = &dev->resources; *p; p = &(*p)->next)
        if (*p == res) {
            *p = res->next;
            res->next = NULL;
            return;
        }
}

void umd_resource_free(struct umd_resource *res)
{
    res->magic = 0;
    free(res);
}

/* ---- batching ------------------------------------------------------------------------------ */

bool umd_batch_references(const struct umd_device *dev, const struct umd_resource *res)
{
    for (UINT i = 0; i < dev->alist_used; i++)
        for (UINT s = 0; s < res->count; s++)
            if (dev->alist[i].hAllocation == res->allocs[s])
                return true;
    return false;
}

static void take_buffers(struct umd_device *dev, void *cmd, UINT cmd_size, D3DDDI_ALLOCATIONLIST *alist,
                         UINT alist_size, D3DDDI_PATCHLOCATIONLIST *plist, UINT plist_size)
{
    dev->cmd = cmd;
    dev->cmd_size = cmd_size;
    dev->alist = alist;
    dev->alist_size = alist_size;
    dev->plist = plist;
    dev->plist_size = plist_size;
    dev->cmd_used = dev->alist_used = dev->plist_used = 0;
}

HRESULT umd_flush_batch(struct umd_device *dev)
{
    D3DDDICB_RENDER r;
    HRESULT hr;

    if (!dev->cmd_used)
        return S_OK;
    memset(&r, 0, sizeof(r));
    r.CommandLength = dev->cmd_used;
    r.NumAllocations = dev->alist_used;
    r.NumPatchLocations = dev->plist_used;
    r.hContext = dev->context;
    if (FAILED(hr = dev->cb.pfnRenderCb(dev->rt_device, &r))) {
        /* the batch is lost either way: start the next one empty */
        memset(dev->alist, 0, dev->alist_used * sizeof(*dev->alist));
        dev->cmd_used = dev->alist_used = dev->plist_used = 0;
        return hr;
    }
    take_buffers(dev, r.pNewCommandBuffer, r.NewCommandBufferSize, r.pNewAllocationList,
                 r.NewAllocationListSize, r.pNewPatchLocationList, r.NewPatchLocationListSize);
    return S_OK;
}

/* The allocation-list slot of `h`, added when new; -1 when the list is full. */
static int list_slot(struct umd_device *dev, D3DKMT_HANDLE h)
{
    for (UINT i = 0; i < dev->alist_used; i++)
        if (dev->alist[i].hAllocation == h)
            return (int)i;
    if (dev->alist_used == dev->alist_size)
        return -1;
    dev->alist[dev->alist_used].Value = 0;
    dev->alist[dev->alist_used].WriteOperation = 1;
    dev->alist[dev->alist_used].hAllocation = h;
    return (int)dev->alist_used++;
}

static bool batch_has_room(const struct umd_device *dev)
{
    return dev->cmd_size - dev->cmd_used >= sizeof(KMT_SOFT_CMD_FILL) && dev->plist_used < dev->plist_size &&
           dev->alist_used < dev->alist_size;
}

static HRESULT batch_fill(struct umd_device *dev, const struct umd_resource *res, UINT surface, D3DCOLOR color)
{
    KMT_SOFT_CMD_FILL fill;
    D3DDDI_PATCHLOCATIONLIST *patch;
    HRESULT hr;
    int slot;

    if (!batch_has_room(dev) && FAILED(hr = umd_flush_batch(dev)))
        return hr;
    if (!batch_has_room(dev) || (slot = list_slot(dev, res->allocs[surface])) < 0)
        return E_OUTOFMEMORY;
    memset(&fill, 0, sizeof(fill));
    fill.Header.Opcode = KMT_SOFT_OP_FILL;
    fill.Header.Size = sizeof(fill);
    fill.Bytes = res->size & ~3u;
    fill.Value = color;
    memcpy(dev->cmd + dev->cmd_used, &fill, sizeof(fill));
    patch = &dev->plist[dev->plist_used++];
    memset(patch, 0, sizeof(*patch));
    patch->AllocationIndex = (UINT)slot;
    patch->PatchOffset = dev->cmd_used + (UINT)offsetof(KMT_SOFT_CMD_FILL, DstVa);
    dev->cmd_used += sizeof(fill);
    return S_OK;
}

/* ---- deallocation helpers ------------------------------------------------------------------------ */

HRESULT umd_deallocate_resource(struct umd_device *dev, const struct umd_resource *res)
{
    D3DDDICB_DEALLOCATE d;

    memset(&d, 0, sizeof(d));
    d.hResource = res->rt_resource;      /* the whole resource, NumAllocations 0 */
    return dev->cb.pfnDeallocateCb(dev->rt_device, &d);
}

HRESULT umd_deallocate_list(struct umd_device *dev, const D3DKMT_HANDLE *handles, UINT count)
{
    D3DDDICB_DEALLOCATE d;

    memset(&d, 0, sizeof(d));
    d.NumAllocations = count;
    d.HandleList = handles;
    return dev->cb.pfnDeallocateCb(dev->rt_device, &d);
}

/* ---- resources ---------------------------------------------------------------------------------------- */

static UINT surface_bytes(const D3DDDIARG_CREATERESOURCE *args, const D3DDDI_SURFACEINFO *s)
{
    UINT64 bytes;

    switch (args->Format) {
    case D3DDDIFMT_A8R8G8B8:
    case D3DDDIFMT_X8R8G8B8:
        bytes = (UINT64)s->Width * s->Height * 4;
        break;
    case D3DDDIFMT_VERTEXDATA:
    case D3DDDIFMT_INDEX16:
    case D3DDDIFMT_INDEX32:
        bytes = (UINT64)s->Width;
        break;
    default:
        return 0;
    }
    return bytes <= (256u << 20) && s->Depth <= 1 ? (UINT)((bytes + 3) & ~3ull) : 0;
}

static HRESULT APIENTRY umd_create_resource(HANDLE hDevice, D3DDDIARG_CREATERESOURCE *args)
{
    struct umd_device *dev = device_of(hDevice);
    bool v2 = dev && dev->adapter->policy->driver_version >= D3D_UMD_INTERFACE_VERSION_WDDM2_0;
    KMT_SOFT_ALLOCATION_DESC desc[UMD_MAX_SURFACES];
    D3DDDI_ALLOCATIONINFO info[UMD_MAX_SURFACES];
    D3DDDI_ALLOCATIONINFO2 info2[UMD_MAX_SURFACES];
    UMD_RESOURCE_DATA data;
    D3DDDICB_ALLOCATE a;
    struct umd_resource *res;
    HRESULT hr;
    UINT size;

    if (!dev || !args || !args->pSurfList || !args->SurfCount || args->SurfCount > UMD_MAX_SURFACES ||
        !(size = surface_bytes(args, &args->pSurfList[0])))
        return E_INVALIDARG;
    for (UINT i = 1; i < args->SurfCount; i++)
        if (surface_bytes(args, &args->pSurfList[i]) != size)
            return E_INVALIDARG;         /* this UMD keeps surfaces of one size */
    if (!(res = calloc(1, sizeof(*res))))
        return E_OUTOFMEMORY;
    memset(desc, 0, sizeof(desc));
    memset(info, 0, sizeof(info));
    memset(info2, 0, sizeof(info2));
    for (UINT i = 0; i < args->SurfCount; i++) {
        desc[i].Magic = KMT_SOFT_ALLOCATION_MAGIC;
        desc[i].Version = KMT_SOFT_ALLOCATION_VERSION;
        desc[i].Size = (size + SOFT_PAGE - 1) & ~(UINT64)(SOFT_PAGE - 1);
        info[i].pPrivateDriverData = info2[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = info2[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    data.Magic = UMD_RESOURCE_MAGIC;
    data.Surfaces = args->SurfCount;
    data.Width = args->pSurfList[0].Width;
    data.Height = args->pSurfList[0].Height;
    data.SurfaceSize = size;
    /* every surface in one call: the group the runtime must see destroyed whole */
    memset(&a, 0, sizeof(a));
    a.pPrivateDriverData = &data;
    a.PrivateDriverDataSize = sizeof(data);
    a.hResource = args->hResource;
    a.NumAllocations = args->SurfCount;
    if (v2)
        a.pAllocationInfo2 = info2;
    else
        a.pAllocationInfo = info;
    if (FAILED(hr = dev->cb.pfnAllocateCb(dev->rt_device, &a))) {
        free(res);
        return hr;
    }
    res->magic = UMD_RESOURCE_MAGIC;
    res->rt_resource = args->hResource;
    res->kmt_resource = a.hKMResource;
    res->count = args->SurfCount;
    res->width = data.Width;
    res->height = data.Height;
    res->size = size;
    for (UINT i = 0; i < res->count; i++)
        res->allocs[i] = v2 ? info2[i].hAllocation : info[i].hAllocation;
    res->next = dev->resources;
    dev->resources = res;
    args->hResource = (HANDLE)res;
    return S_OK;
}

/* An opened allocation must carry the creator's soft description, big enough. */
static bool opened_allocation_ok(const void *priv, UINT priv_size, UINT size)
{
    KMT_SOFT_ALLOCATION_DESC d;

    if (priv_size != sizeof(d) || !priv)
        return false;
    memcpy(&d, priv, sizeof(d));
    return d.Magic == KMT_SOFT_ALLOCATION_MAGIC && d.Size >= size;
}

static HRESULT APIENTRY umd_open_resource(HANDLE hDevice, D3DDDIARG_OPENRESOURCE *args)
{
    struct umd_device *dev = device_of(hDevice);
    bool v2 = dev && dev->adapter->policy->driver_version >= D3D_UMD_INTERFACE_VERSION_WDDM2_0;
    UMD_RESOURCE_DATA data;
    struct umd_resource *res;

    if (!dev || !args || !args->pOpenAllocationInfo || args->PrivateDriverDataSize != sizeof(data) ||
        !args->pPrivateDriverData)
        return E_INVALIDARG;
    memcpy(&data, args->pPrivateDriverData, sizeof(data));
    if (data.Magic != UMD_RESOURCE_MAGIC || data.Surfaces != args->NumAllocations || !data.Surfaces ||
        data.Surfaces > UMD_MAX_SURFACES || !data.SurfaceSize || data.SurfaceSize > (256u << 20) ||
        (data.SurfaceSize & 3))
        return E_INVALIDARG;             /* not a resource this UMD made */
    if (!(res = calloc(1, sizeof(*res))))
        return E_OUTOFMEMORY;
    res->count = data.Surfaces;
    res->width = data.Width;
    res->height = data.Height;
    res->size = data.SurfaceSize;
    for (UINT i = 0; i < res->count; i++) {
        const void *priv = v2 ? args->pOpenAllocationInfo2[i].pPrivateDriverData : args->pOpenAllocationInfo[i].pPrivateDriverData;
        UINT priv_size = v2 ? args->pOpenAllocationInfo2[i].PrivateDriverDataSize
                            : args->pOpenAllocationInfo[i].PrivateDriverDataSize;

        if (!opened_allocation_ok(priv, priv_size, res->size)) {
            free(res);
            return E_INVALIDARG;
        }
        res->allocs[i] = v2 ? args->pOpenAllocationInfo2[i].hAllocation : args->pOpenAllocationInfo[i].hAllocation;
    }
    res->magic = UMD_RESOURCE_MAGIC;
    res->rt_resource = args->hResource;
    res->kmt_resource = args->hKMResource;
    res->opened = true;
    res->next = dev->resources;
    dev->resources = res;
    args->hResource = (HANDLE)res;
    return S_OK;
}

static HRESULT APIENTRY umd_destroy_resource(HANDLE hDevice, HANDLE hResource)
{
    struct umd_device *dev = device_of(hDevice);
    struct umd_resource *res = dev ? resource_of(dev, hResource) : NULL;

    if (!res)
        return E_INVALIDARG;
    return dev->adapter->policy->destroy_resource(dev, res);
}

static HRESULT APIENTRY umd_color_fill(HANDLE hDevice, const D3DDDIARG_COLORFILL *args)
{
    struct umd_device *dev = device_of(hDevice);
    struct umd_resource *res = dev && args ? resource_of(dev, args->hResource) : NULL;

    if (!res || args->SubResourceIndex >= res->count)
        return E_INVALIDARG;
    return batch_fill(dev, res, args->SubResourceIndex, args->Color);
}

static HRESULT APIENTRY umd_flush(HANDLE hDevice)
{
    struct umd_device *dev = device_of(hDevice);
    HRESULT hr;

    if (!dev)
        return E_INVALIDARG;
    if (FAILED(hr = umd_flush_batch(dev)))
        return hr;
    return dev->adapter->policy->after_flush ? dev->adapter->policy->after_flush(dev) : S_OK;
}

static HRESULT APIENTRY umd_lock(HANDLE hDevice, D3DDDIARG_LOCK *args)
{
    struct umd_device *dev = device_of(hDevice);
    struct umd_resource *res = dev && args ? resource_of(dev, args->hResource) : NULL;
    D3DDDICB_LOCK l;
    HRESULT hr;

    if (!res || args->SubResourceIndex >= res->count)
        return E_INVALIDARG;
    /* the CPU must see what batched commands write: submit them first
     * (the kernel's lock then waits for the GPU) */
    if (umd_batch_references(dev, res) && FAILED(hr = umd_flush_batch(dev)))
        return hr;
    memset(&l, 0, sizeof(l));
    l.hAllocation = res->allocs[args->SubResourceIndex];
    l.Flags.ReadOnly = args->Flags.ReadOnly;
    l.Flags.WriteOnly = args->Flags.WriteOnly;
    l.Flags.DonotWait = args->Flags.DoNotWait;
    l.Flags.Discard = args->Flags.Discard;
    if (FAILED(hr = dev->cb.pfnLockCb(dev->rt_device, &l)))
        return hr;
    args->pSurfData = l.pData;
    args->Pitch = res->size / (res->height ? res->height : 1);
    args->SlicePitch = res->size;
    return S_OK;
}

static HRESULT APIENTRY umd_unlock(HANDLE hDevice, const D3DDDIARG_UNLOCK *args)
{
    struct umd_device *dev = device_of(hDevice);
    struct umd_resource *res = dev && args ? resource_of(dev, args->hResource) : NULL;
    D3DDDICB_UNLOCK u;

    if (!res || args->SubResourceIndex >= res->count)
        return E_INVALIDARG;
    memset(&u, 0, sizeof(u));
    u.NumAllocations = 1;
    u.phAllocations = &res->allocs[args->SubResourceIndex];
    return dev->cb.pfnUnlockCb(dev->rt_device, &u);
}

/* ---- devices -------------------------------------------------------------------------------------------- */

static void free_list(struct umd_resource *r)
{
    while (r) {
        struct umd_resource *next = r->next;

        umd_resource_free(r);
        r = next;
    }
}

static HRESULT APIENTRY umd_destroy_device(HANDLE hDevice)
{
    struct umd_device *dev = device_of(hDevice);
    D3DDDICB_DESTROYCONTEXT dc;

    if (!dev)
        return E_INVALIDARG;
    /* best effort: a device goes away whatever its last batch does */
    umd_flush_batch(dev);
    if (dev->adapter->policy->after_flush)
        dev->adapter->policy->after_flush(dev);
    memset(&dc, 0, sizeof(dc));
    dc.hContext = dev->context;
    dev->cb.pfnDestroyContextCb(dev->rt_device, &dc);
    /* the runtime destroyed every resource before this call: only records remain */
    free_list(dev->resources);
    free_list(dev->deferred);
    dev->magic = 0;
    free(dev);
    return S_OK;
}

static void fill_device_funcs(D3DDDI_DEVICEFUNCS *f)
{
    memset(f, 0, sizeof(*f));
    f->pfnCreateResource = umd_create_resource;
    f->pfnOpenResource = umd_open_resource;
    f->pfnDestroyResource = umd_destroy_resource;
    f->pfnColorFill = umd_color_fill;
    f->pfnFlush = umd_flush;
    f->pfnLock = umd_lock;
    f->pfnUnlock = umd_unlock;
    f->pfnDestroyDevice = umd_destroy_device;
}

static HRESULT APIENTRY umd_create_device(HANDLE hAdapter, D3DDDIARG_CREATEDEVICE *args)
{
    struct umd_adapter *adapter = hAdapter;
    D3DDDICB_CREATECONTEXT cc;
    struct umd_device *dev;
    HRESULT hr;

    if (!adapter || adapter->magic != ADAPTER_MAGIC || !args || !args->pCallbacks || !args->pDeviceFuncs ||
        !args->pCallbacks->pfnAllocateCb || !args->pCallbacks->pfnDeallocateCb || !args->pCallbacks->pfnRenderCb ||
        !args->pCallbacks->pfnLockCb || !args->pCallbacks->pfnUnlockCb || !args->pCallbacks->pfnCreateContextCb ||
        !args->pCallbacks->pfnDestroyContextCb)
        return E_INVALIDARG;
    if (!(dev = calloc(1, sizeof(*dev))))
        return E_OUTOFMEMORY;
    dev->adapter = adapter;
    dev->rt_device = args->hDevice;
    dev->cb = *args->pCallbacks;
    memset(&cc, 0, sizeof(cc));          /* node 0: the soft adapter's 3D engine */
    if (FAILED(hr = dev->cb.pfnCreateContextCb(dev->rt_device, &cc))) {
        free(dev);
        return hr;
    }
    dev->context = cc.hContext;
    take_buffers(dev, cc.pCommandBuffer, cc.CommandBufferSize, cc.pAllocationList, cc.AllocationListSize,
                 cc.pPatchLocationList, cc.PatchLocationListSize);
    dev->magic = DEVICE_MAGIC;
    fill_device_funcs(args->pDeviceFuncs);
    args->hDevice = (HANDLE)dev;
    return S_OK;
}

/* ---- adapters ---------------------------------------------------------------------------------------------- */

static HRESULT APIENTRY umd_get_caps(HANDLE hAdapter, const D3DDDIARG_GETCAPS *args)
{
    (void)hAdapter;
    (void)args;
    return E_INVALIDARG;                 /* no capability query is answered */
}

static HRESULT APIENTRY umd_close_adapter(HANDLE hAdapter)
{
    struct umd_adapter *adapter = hAdapter;

    if (!adapter || adapter->magic != ADAPTER_MAGIC)
        return E_INVALIDARG;
    adapter->magic = 0;
    free(adapter);
    return S_OK;
}

HRESULT umd_open_adapter(D3DDDIARG_OPENADAPTER *args, const struct umd_policy *policy)
{
    D3DDDICB_QUERYADAPTERINFO q;
    struct umd_adapter *adapter;
    HRESULT hr;

    if (!args || !args->pAdapterCallbacks || !args->pAdapterCallbacks->pfnQueryAdapterInfoCb ||
        !args->pAdapterFuncs)
        return E_INVALIDARG;
    if (!(adapter = calloc(1, sizeof(*adapter))))
        return E_OUTOFMEMORY;
    adapter->rt_adapter = args->hAdapter;
    adapter->cb = *args->pAdapterCallbacks;
    adapter->policy = policy;
    memset(&q, 0, sizeof(q));
    q.pPrivateDriverData = &adapter->kmd;
    q.PrivateDriverDataSize = sizeof(adapter->kmd);
    hr = adapter->cb.pfnQueryAdapterInfoCb(adapter->rt_adapter, &q);
    /* this UMD drives kmtshim's software adapter and nothing else */
    if (FAILED(hr) || adapter->kmd.Magic != KMT_SOFT_ALLOCATION_MAGIC || adapter->kmd.NodeCount < 1) {
        free(adapter);
        return FAILED(hr) ? hr : E_FAIL;
    }
    adapter->magic = ADAPTER_MAGIC;
    args->pAdapterFuncs->pfnGetCaps = umd_get_caps;
    args->pAdapterFuncs->pfnCreateDevice = umd_create_device;
    args->pAdapterFuncs->pfnCloseAdapter = umd_close_adapter;
    args->hAdapter = (HANDLE)adapter;
    args->DriverVersion = policy->driver_version;
    return S_OK;
}
