/*
 * The host: finds the UMD an adapter names, loads it, opens the adapter
 * through it and drives its entry points the way a Direct3D 9 runtime does
 * (OpenAdapter -> CreateDevice -> CreateResource / OpenResource / ColorFill
 * / Flush / Lock / Unlock / DestroyResource -> DestroyDevice ->
 * CloseAdapter).  After the UMD's DestroyDevice the checker looks for what
 * it left behind; D3DKMTDestroyDevice then reclaims it.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/runtime.h"

#define RUNTIME_INTERFACE 9              /* a D3D9 runtime */
#define RUNTIME_VERSION 1                /* kmtshim's runtime build */
#define MAX_SURFACE_BYTES (256u << 20)

/* ---- adapters ------------------------------------------------------------------------------------ */

static NTSTATUS open_kmt_adapter(const LUID *luid, D3DKMT_HANDLE *out)
{
    D3DKMT_ADAPTERINFO infos[MAX_ENUM_ADAPTERS];
    D3DKMT_ENUMADAPTERS2 e = { MAX_ENUM_ADAPTERS, infos };
    NTSTATUS status;

    if (luid) {
        D3DKMT_OPENADAPTERFROMLUID o = { 0 };

        o.AdapterLuid = *luid;
        status = D3DKMTOpenAdapterFromLuid(&o);
        *out = o.hAdapter;
        return status;
    }
    if ((status = D3DKMTEnumAdapters2(&e)))
        return status;
    if (!e.NumAdapters)
        return STATUS_OBJECT_NAME_NOT_FOUND;
    for (ULONG i = 1; i < e.NumAdapters; i++) {
        D3DKMT_CLOSEADAPTER c = { infos[i].hAdapter };

        D3DKMTCloseAdapter(&c);
    }
    *out = infos[0].hAdapter;
    return STATUS_SUCCESS;
}

static void registry_add(struct rt_adapter *a)
{
    kmtumd_lock_enter(&rt_registry_lock);
    a->next = rt_adapters;
    rt_adapters = a;
    kmtumd_lock_leave(&rt_registry_lock);
}

static void registry_remove(struct rt_adapter *a)
{
    kmtumd_lock_enter(&rt_registry_lock);
    for (struct rt_adapter **p = &rt_adapters; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    kmtumd_lock_leave(&rt_registry_lock);
}

static void adapter_free(struct rt_adapter *a)
{
    D3DKMT_CLOSEADAPTER c = { a->hadapter };

    registry_remove(a);
    if (a->module)
        kmtumd_module_unload(a->module);
    if (a->hadapter)
        D3DKMTCloseAdapter(&c);
    kmtumd_lock_destroy(&a->lock);
    free(a);
}

static HRESULT adapter_new(const LUID *luid, kmtumd_report_fn report, void *ctx, struct rt_adapter **out)
{
    struct rt_adapter *a = calloc(1, sizeof(*a));
    NTSTATUS status;

    if (!a)
        return E_OUTOFMEMORY;
    kmtumd_lock_init(&a->lock);
    a->report = report;
    a->report_ctx = ctx;
    strcpy(a->umd_name, "(none)");
    if ((status = open_kmt_adapter(luid, &a->hadapter))) {
        a->hadapter = 0;
        rt_report(a, "cannot open the adapter: NTSTATUS 0x%08x", (unsigned)status);
        adapter_free(a);
        return KMTUMD_HRESULT_FROM_NT(status);
    }
    *out = a;
    return S_OK;
}

/* OpenAdapter through the UMD's entry point; frees `a` on failure. */
static HRESULT open_through(struct rt_adapter *a, PFND3DDDI_OPENADAPTER entry, struct kmtumd_host **out)
{
    D3DDDIARG_OPENADAPTER oa = { 0 };
    HRESULT hr;

    registry_add(a);                     /* pfnQueryAdapterInfoCb works during OpenAdapter */
    oa.hAdapter = (HANDLE)a;
    oa.Interface = RUNTIME_INTERFACE;
    oa.Version = RUNTIME_VERSION;
    oa.pAdapterCallbacks = &rt_adapter_callbacks;
    oa.pAdapterFuncs = &a->funcs;
    hr = entry(&oa);
    if (SUCCEEDED(hr) && (!a->funcs.pfnCreateDevice || !a->funcs.pfnCloseAdapter)) {
        rt_report(a, "OpenAdapter left pfnCreateDevice or pfnCloseAdapter NULL");
        /* the UMD opened its adapter: let it free it before it is unloaded */
        if (a->funcs.pfnCloseAdapter)
            a->funcs.pfnCloseAdapter(oa.hAdapter);
        hr = E_FAIL;
    }
    if (FAILED(hr)) {
        rt_report(a, "OpenAdapter failed: HRESULT 0x%08x", (unsigned)hr);
        adapter_free(a);
        return hr;
    }
    a->umd_adapter = oa.hAdapter;
    a->driver_version = oa.DriverVersion;
    a->opened = true;
    *out = (struct kmtumd_host *)a;
    return S_OK;
}

HRESULT kmtumd_host_open(const LUID *luid, KMTUMDVERSION version, kmtumd_report_fn report, void *report_ctx,
                         struct kmtumd_host **out)
{
    D3DKMT_UMDFILENAMEINFO name = { 0 };
    D3DKMT_QUERYADAPTERINFO q = { 0 };
    PFND3DDDI_OPENADAPTER entry;
    struct rt_adapter *a;
    NTSTATUS status;
    void *sym;
    HRESULT hr;

    if (!out)
        return E_INVALIDARG;
    *out = NULL;
    if ((hr = adapter_new(luid, report, report_ctx, &a)))
        return hr;
    name.Version = version;
    q.hAdapter = a->hadapter;
    q.Type = KMTQAITYPE_UMDRIVERNAME;
    q.pPrivateDriverData = &name;
    q.PrivateDriverDataSize = sizeof(name);
    if ((status = D3DKMTQueryAdapterInfo(&q))) {
        rt_report(a, "the adapter names no user-mode driver for KMTUMDVERSION %u: NTSTATUS 0x%08x",
                  (unsigned)version, (unsigned)status);
        adapter_free(a);
        return KMTUMD_HRESULT_FROM_NT(status);
    }
    kmtumd_module_basename(name.UmdFileName, a->umd_name, sizeof(a->umd_name));
    if (!(a->module = kmtumd_module_load(name.UmdFileName))) {
        rt_report(a, "cannot load the user-mode driver");
        adapter_free(a);
        return KMTUMD_E_MOD_NOT_FOUND;
    }
    if (!(sym = kmtumd_module_symbol(a->module, "OpenAdapter"))) {
        rt_report(a, "the user-mode driver exports no OpenAdapter");
        adapter_free(a);
        return KMTUMD_E_PROC_NOT_FOUND;
    }
    memcpy(&entry, &sym, sizeof(entry));
    return open_through(a, entry, out);
}

HRESULT kmtumd_host_open_entry(const LUID *luid, PFND3DDDI_OPENADAPTER entry, const char *name,
                               kmtumd_report_fn report, void *report_ctx, struct kmtumd_host **out)
{
    struct rt_adapter *a;
    HRESULT hr;

    if (!out || !entry)
        return E_INVALIDARG;
    *out = NULL;
    if ((hr = adapter_new(luid, report, report_ctx, &a)))
        return hr;
    strncpy(a->umd_name, name ? name : "(in process)", sizeof(a->umd_name) - 1);
    return open_through(a, entry, out);
}

void kmtumd_host_close(struct kmtumd_host *host)
{
    struct rt_adapter *a = (struct rt_adapter *)host;

    if (!a)
        return;
    while (a->devices)
        kmtumd_destroy_device((struct kmtumd_device *)a->devices);
    if (a->opened) {
        HRESULT hr = a->funcs.pfnCloseAdapter(a->umd_adapter);

        if (FAILED(hr))
            rt_report(a, "CloseAdapter failed: HRESULT 0x%08x", (unsigned)hr);
    }
    adapter_free(a);
}

const char *kmtumd_host_umd_name(const struct kmtumd_host *host)
{
    return ((const struct rt_adapter *)host)->umd_name;
}

D3DKMT_HANDLE kmtumd_host_adapter(const struct kmtumd_host *host)
{
    return ((const struct rt_adapter *)host)->hadapter;
}

UINT kmtumd_host_driver_version(const struct kmtumd_host *host)
{
    return ((const struct rt_adapter *)host)->driver_version;
}

void kmtumd_host_stats(struct kmtumd_host *host, struct kmtumd_stats *out)
{
    struct rt_adapter *a = (struct rt_adapter *)host;

    kmtumd_lock_enter(&a->lock);
    *out = a->stats;
    kmtumd_lock_leave(&a->lock);
}

UINT kmtumd_host_violations(struct kmtumd_host *host, struct kmtumd_violation *out, UINT max)
{
    struct rt_adapter *a = (struct rt_adapter *)host;
    UINT n;

    kmtumd_lock_enter(&a->lock);
    n = a->nviolations;
    if (out)
        memcpy(out, a->violations, (n < max ? n : max) * sizeof(*out));
    kmtumd_lock_leave(&a->lock);
    return n;
}

/* ---- devices --------------------------------------------------------------------------------------- */

static void device_register(struct rt_device *dev, bool add)
{
    kmtumd_lock_enter(&rt_registry_lock);
    if (add) {
        dev->next = dev->adapter->devices;
        dev->adapter->devices = dev;
    } else {
        for (struct rt_device **p = &dev->adapter->devices; *p; p = &(*p)->next)
            if (*p == dev) {
                *p = dev->next;
                break;
            }
    }
    kmtumd_lock_leave(&rt_registry_lock);
}

/* After the UMD is done with the device: leak check, then the kernel reclaims. */
static void device_finish(struct rt_device *dev)
{
    D3DKMT_DESTROYDEVICE dd = { dev->hdevice };

    kmtumd_lock_enter(&dev->lock);
    rt_check_leaks(dev);
    kmtumd_lock_leave(&dev->lock);
    device_register(dev, false);         /* no callback reaches it from here on */
    D3DKMTDestroyDevice(&dd);
    rt_device_free_objects(dev);
    kmtumd_lock_destroy(&dev->lock);
    free(dev);
}

HRESULT kmtumd_create_device(struct kmtumd_host *host, struct kmtumd_device **out)
{
    struct rt_adapter *a = (struct rt_adapter *)host;
    D3DDDIARG_CREATEDEVICE args = { 0 };
    D3DKMT_CREATEDEVICE cd = { 0 };
    struct rt_device *dev;
    NTSTATUS status;
    HRESULT hr;

    if (!a || !out)
        return E_INVALIDARG;
    *out = NULL;
    if (!(dev = calloc(1, sizeof(*dev))))
        return E_OUTOFMEMORY;
    cd.hAdapter = a->hadapter;
    if ((status = D3DKMTCreateDevice(&cd))) {
        free(dev);
        return KMTUMD_HRESULT_FROM_NT(status);
    }
    kmtumd_lock_init(&dev->lock);
    dev->adapter = a;
    dev->hdevice = cd.hDevice;
    device_register(dev, true);
    args.hDevice = (HANDLE)dev;
    args.Interface = RUNTIME_INTERFACE;
    args.Version = RUNTIME_VERSION;
    args.pCallbacks = &rt_device_callbacks;
    args.pDeviceFuncs = &dev->funcs;
    hr = a->funcs.pfnCreateDevice(a->umd_adapter, &args);
    if (SUCCEEDED(hr) && (!dev->funcs.pfnDestroyDevice || !dev->funcs.pfnCreateResource ||
                          !dev->funcs.pfnDestroyResource)) {
        rt_report(a, "CreateDevice left pfnDestroyDevice, pfnCreateResource or pfnDestroyResource NULL");
        if (dev->funcs.pfnDestroyDevice)
            dev->funcs.pfnDestroyDevice(args.hDevice);
        hr = E_FAIL;
    }
    if (FAILED(hr)) {
        rt_report(a, "CreateDevice failed: HRESULT 0x%08x", (unsigned)hr);
        device_finish(dev);              /* whatever it made before failing is a leak */
        return hr;
    }
    dev->umd_device = args.hDevice;
    *out = (struct kmtumd_device *)dev;
    return S_OK;
}

HRESULT kmtumd_destroy_device(struct kmtumd_device *device)
{
    struct rt_device *dev = (struct rt_device *)device;
    HRESULT hr;

    if (!dev)
        return E_INVALIDARG;
    /* a runtime destroys every resource before its device */
    for (struct rt_resource *r = dev->resources; r; r = r->next)
        if (r->live)
            kmtumd_destroy_resource((struct kmtumd_resource *)r);
    if (FAILED(hr = dev->funcs.pfnDestroyDevice(dev->umd_device)))
        rt_report(dev->adapter, "DestroyDevice failed: HRESULT 0x%08x", (unsigned)hr);
    device_finish(dev);
    return hr;
}

D3DKMT_HANDLE kmtumd_device_handle(const struct kmtumd_device *dev)
{
    return ((const struct rt_device *)dev)->hdevice;
}

/* ---- resources ------------------------------------------------------------------------------------------- */

static struct rt_resource *resource_new(struct rt_device *dev)
{
    struct rt_resource *res = calloc(1, sizeof(*res));

    if (!res)
        return NULL;
    res->dev = dev;
    kmtumd_lock_enter(&dev->lock);
    res->next = dev->resources;
    dev->resources = res;
    kmtumd_lock_leave(&dev->lock);
    return res;
}

static bool desc_ok(const struct kmtumd_resource_desc *d)
{
    return d && d->surfaces && d->surfaces <= KMTUMD_MAX_SURFACES && d->width && d->height &&
           (UINT64)d->width * d->height * 4 <= MAX_SURFACE_BYTES;
}

HRESULT kmtumd_create_resource(struct kmtumd_device *device, const struct kmtumd_resource_desc *desc,
                               struct kmtumd_resource **out)
{
    struct rt_device *dev = (struct rt_device *)device;
    D3DDDI_SURFACEINFO surfaces[KMTUMD_MAX_SURFACES];
    D3DDDIARG_CREATERESOURCE cr = { 0 };
    struct rt_resource *res;
    HRESULT hr;

    if (!dev || !out || !desc_ok(desc))
        return E_INVALIDARG;
    *out = NULL;
    if (!(res = resource_new(dev)))
        return E_OUTOFMEMORY;
    res->surfaces = desc->surfaces;
    res->width = desc->width;
    res->height = desc->height;
    res->flags.RenderTarget = 1;
    res->flags.SharedResource = desc->shared ? 1 : 0;
    memset(surfaces, 0, sizeof(surfaces));
    for (UINT i = 0; i < desc->surfaces; i++) {
        surfaces[i].Width = desc->width;
        surfaces[i].Height = desc->height;
        surfaces[i].Depth = 1;
    }
    cr.Format = D3DDDIFMT_A8R8G8B8;
    cr.Pool = D3DDDIPOOL_VIDEOMEMORY;
    cr.pSurfList = surfaces;
    cr.SurfCount = desc->surfaces;
    cr.MipLevels = 1;
    cr.hResource = (HANDLE)res;
    cr.Flags = res->flags;
    cr.Rotation = D3DDDI_ROTATION_IDENTITY;
    if (FAILED(hr = dev->funcs.pfnCreateResource(dev->umd_device, &cr))) {
        rt_report(dev->adapter, "CreateResource failed: HRESULT 0x%08x", (unsigned)hr);
        return hr;                       /* what it allocated anyway shows up as a leak */
    }
    res->umd_resource = cr.hResource;
    res->live = true;
    *out = (struct kmtumd_resource *)res;
    return S_OK;
}

/* The creator's record of a shared kres, for the surface layout. */
static struct rt_resource *creator_of(struct rt_device *dev, const struct rt_kres *kres)
{
    for (struct rt_resource *r = dev->resources; r; r = r->next)
        if (r->kres == kres && !r->opened)
            return r;
    return NULL;
}

/* Builds the open request from the runtime's records; under dev->lock. */
static HRESULT prepare_open(struct rt_device *dev, D3DKMT_HANDLE share, struct rt_resource *res,
                            D3DDDIARG_OPENRESOURCE *o, void **infos)
{
    bool v2 = dev->adapter->driver_version >= D3D_UMD_INTERFACE_VERSION_WDDM2_0;
    struct rt_kres *kres = share ? rt_kres_by_share(dev, share) : NULL;
    struct rt_resource *creator;
    UINT n, i = 0;

    if (!kres || !kres->shared) {
        rt_report(dev->adapter, "OpenResource: no shared resource with share handle 0x%08x on this device",
                  share);
        return E_INVALIDARG;
    }
    n = rt_kres_count(kres);
    if (!(*infos = calloc(n ? n : 1, v2 ? sizeof(D3DDDI_OPENALLOCATIONINFO2) : sizeof(D3DDDI_OPENALLOCATIONINFO))))
        return E_OUTOFMEMORY;
    for (struct rt_alloc *a = kres->allocs; a; a = a->next, i++) {
        if (v2) {
            D3DDDI_OPENALLOCATIONINFO2 *info = (D3DDDI_OPENALLOCATIONINFO2 *)*infos + i;
            info->hAllocation = a->handle;
            info->pPrivateDriverData = a->priv;
            info->PrivateDriverDataSize = a->priv_size;
        } else {
            D3DDDI_OPENALLOCATIONINFO *info = (D3DDDI_OPENALLOCATIONINFO *)*infos + i;
            info->hAllocation = a->handle;
            info->pPrivateDriverData = a->priv;
            info->PrivateDriverDataSize = a->priv_size;
        }
    }
    if ((creator = creator_of(dev, kres))) {
        res->surfaces = creator->surfaces;
        res->width = creator->width;
        res->height = creator->height;
    }
    res->flags.SharedResource = 1;
    res->opened = true;
    res->kres = kres;
    kres->holders++;
    rt_resource_snapshot(res);
    o->NumAllocations = n;
    o->pOpenAllocationInfo = *infos;
    o->hKMResource = kres->handle;
    o->pPrivateDriverData = kres->priv;
    o->PrivateDriverDataSize = kres->priv_size;
    o->hResource = (HANDLE)res;
    o->Rotation = D3DDDI_ROTATION_IDENTITY;
    return S_OK;
}

HRESULT kmtumd_open_resource(struct kmtumd_device *device, D3DKMT_HANDLE share, struct kmtumd_resource **out)
{
    struct rt_device *dev = (struct rt_device *)device;
    D3DDDIARG_OPENRESOURCE o = { 0 };
    struct rt_resource *res;
    void *infos = NULL;
    HRESULT hr;

    if (!dev || !out)
        return E_INVALIDARG;
    *out = NULL;
    if (!dev->funcs.pfnOpenResource)
        return E_NOTIMPL;
    if (!(res = resource_new(dev)))
        return E_OUTOFMEMORY;
    kmtumd_lock_enter(&dev->lock);
    hr = prepare_open(dev, share, res, &o, &infos);
    kmtumd_lock_leave(&dev->lock);
    if (SUCCEEDED(hr) && FAILED(hr = dev->funcs.pfnOpenResource(dev->umd_device, &o))) {
        rt_report(dev->adapter, "OpenResource failed: HRESULT 0x%08x", (unsigned)hr);
        kmtumd_lock_enter(&dev->lock);
        res->kres->holders--;            /* never opened: the UMD holds nothing */
        res->kres = NULL;
        res->released = true;
        kmtumd_lock_leave(&dev->lock);
    }
    free(infos);
    if (FAILED(hr))
        return hr;
    res->umd_resource = o.hResource;
    res->live = true;
    *out = (struct kmtumd_resource *)res;
    return S_OK;
}

HRESULT kmtumd_destroy_resource(struct kmtumd_resource *resource)
{
    struct rt_resource *res = (struct rt_resource *)resource;
    struct rt_device *dev;
    HRESULT hr;

    if (!res || !res->live)
        return E_INVALIDARG;
    dev = res->dev;
    res->live = false;
    hr = dev->funcs.pfnDestroyResource(dev->umd_device, res->umd_resource);
    if (FAILED(hr))
        rt_report(dev->adapter, "DestroyResource failed: HRESULT 0x%08x", (unsigned)hr);
    kmtumd_lock_enter(&dev->lock);
    res->destroyed = true;               /* a deallocation from now on is a deferred one */
    kmtumd_lock_leave(&dev->lock);
    return hr;
}

HRESULT kmtumd_color_fill(struct kmtumd_resource *resource, UINT surface, D3DCOLOR color)
{
    struct rt_resource *res = (struct rt_resource *)resource;
    D3DDDIARG_COLORFILL f = { 0 };

    if (!res || !res->live || surface >= res->surfaces)
        return E_INVALIDARG;
    if (!res->dev->funcs.pfnColorFill)
        return E_NOTIMPL;
    f.hResource = res->umd_resource;
    f.SubResourceIndex = surface;
    f.DstRect.right = (LONG)res->width;
    f.DstRect.bottom = (LONG)res->height;
    f.Color = color;
    return res->dev->funcs.pfnColorFill(res->dev->umd_device, &f);
}

HRESULT kmtumd_flush(struct kmtumd_device *device)
{
    struct rt_device *dev = (struct rt_device *)device;

    if (!dev)
        return E_INVALIDARG;
    return dev->funcs.pfnFlush ? dev->funcs.pfnFlush(dev->umd_device) : E_NOTIMPL;
}

HRESULT kmtumd_read(struct kmtumd_resource *resource, UINT surface, void *out, UINT size)
{
    struct rt_resource *res = (struct rt_resource *)resource;
    D3DDDIARG_LOCK l = { 0 };
    D3DDDIARG_UNLOCK u = { 0 };
    HRESULT hr;

    if (!res || !res->live || !out || surface >= res->surfaces || size > res->width * res->height * 4)
        return E_INVALIDARG;
    if (!res->dev->funcs.pfnLock || !res->dev->funcs.pfnUnlock)
        return E_NOTIMPL;
    l.hResource = u.hResource = res->umd_resource;
    l.SubResourceIndex = u.SubResourceIndex = surface;
    l.Flags.ReadOnly = 1;
    if (FAILED(hr = res->dev->funcs.pfnLock(res->dev->umd_device, &l)))
        return hr;
    if (!l.pSurfData)
        hr = E_FAIL;
    else
        memcpy(out, l.pSurfData, size);
    res->dev->funcs.pfnUnlock(res->dev->umd_device, &u);
    return hr;
}

void kmtumd_resource_info(const struct kmtumd_resource *resource, struct kmtumd_resource_info *out)
{
    struct rt_resource *res = (struct rt_resource *)resource;
    struct rt_device *dev = res->dev;

    memset(out, 0, sizeof(*out));
    kmtumd_lock_enter(&dev->lock);
    rt_resource_snapshot(res);
    out->resource = res->last_handle;
    out->share = res->last_share;
    out->count = res->last_count;
    memcpy(out->allocations, res->last_allocs, sizeof(out->allocations));
    out->opened = res->opened;
    out->destroyed = res->destroyed;
    out->deallocated = res->released;
    for (struct rt_kres *k = dev->kres; k && res->last_handle; k = k->next)
        out->kernel_alive |= k->handle == res->last_handle;
    kmtumd_lock_leave(&dev->lock);
}
