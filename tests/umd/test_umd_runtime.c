/*
 * The UMD runtime's callbacks and each rule of its protocol checker, driven
 * by a test UMD inside this program (kmtumd_host_open_entry): the cases
 * call the callbacks themselves, in the orders they want checked, with
 * exact arguments and exact expected answers.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "kmtumd.h"

/* ---- the test UMD ----------------------------------------------------------------------------- */

static struct {
    HRESULT open_result;
    bool leave_funcs_null;
    bool leave_create_device_null;       /* OpenAdapter succeeds without pfnCreateDevice */
    unsigned close_adapter_calls;
    HRESULT create_device_result;
    UINT driver_version;
    UINT allocate_surfaces;              /* CreateResource: allocate this many (0: defer) */
    bool deallocate_in_destroy;          /* DestroyResource: pfnDeallocateCb(hResource) */
    HANDLE rt_adapter;
    D3DDDI_ADAPTERCALLBACKS acb;
    KMT_SOFT_UMD_PRIVATE kmd_during_open;
    HANDLE rt_device;
    const D3DDDI_DEVICECALLBACKS *cb;
    HANDLE rt_resources[8];
    UINT resources;
    unsigned destroy_device_calls;
} fake;

static HRESULT APIENTRY fake_get_caps(HANDLE a, const D3DDDIARG_GETCAPS *c)
{
    (void)a;
    (void)c;
    return E_INVALIDARG;
}

static HRESULT APIENTRY fake_create_resource(HANDLE d, D3DDDIARG_CREATERESOURCE *args)
{
    ck_assert_ptr_eq(d, (HANDLE)0x5000);
    ck_assert_uint_lt(fake.resources, 8);
    fake.rt_resources[fake.resources] = args->hResource;
    if (fake.allocate_surfaces) {
        KMT_SOFT_ALLOCATION_DESC desc[4];
        D3DDDI_ALLOCATIONINFO info[4] = { 0 };
        D3DDDICB_ALLOCATE a = { 0 };
        HRESULT hr;

        for (UINT i = 0; i < fake.allocate_surfaces; i++) {
            desc[i] = kmt_test_soft_desc(4096);
            info[i].pPrivateDriverData = &desc[i];
            info[i].PrivateDriverDataSize = sizeof(desc[i]);
        }
        a.hResource = args->hResource;
        a.NumAllocations = fake.allocate_surfaces;
        a.pAllocationInfo = info;
        hr = fake.cb->pfnAllocateCb(fake.rt_device, &a);
        if (FAILED(hr))
            return hr;
    }
    args->hResource = (HANDLE)(UINT_PTR)(0x6000 + fake.resources++);
    return S_OK;
}

static HRESULT APIENTRY fake_destroy_resource(HANDLE d, HANDLE r)
{
    UINT i = (UINT)((UINT_PTR)r - 0x6000);
    D3DDDICB_DEALLOCATE da = { 0 };

    ck_assert_ptr_eq(d, (HANDLE)0x5000);
    ck_assert_uint_lt(i, fake.resources);
    if (!fake.deallocate_in_destroy)
        return S_OK;
    da.hResource = fake.rt_resources[i];
    return fake.cb->pfnDeallocateCb(fake.rt_device, &da);
}

static HRESULT APIENTRY fake_destroy_device(HANDLE d)
{
    ck_assert_ptr_eq(d, (HANDLE)0x5000);
    fake.destroy_device_calls++;
    return S_OK;
}

static HRESULT APIENTRY fake_create_device(HANDLE a, D3DDDIARG_CREATEDEVICE *args)
{
    ck_assert_ptr_eq(a, (HANDLE)0x4000);
    ck_assert_uint_eq(args->Interface, 9);
    ck_assert_ptr_nonnull(args->pCallbacks);
    if (FAILED(fake.create_device_result))
        return fake.create_device_result;
    fake.rt_device = args->hDevice;
    fake.cb = args->pCallbacks;
    args->pDeviceFuncs->pfnCreateResource = fake_create_resource;
    args->pDeviceFuncs->pfnDestroyResource = fake_destroy_resource;
    args->pDeviceFuncs->pfnDestroyDevice = fake_destroy_device;
    args->hDevice = (HANDLE)0x5000;
    return S_OK;
}

static HRESULT APIENTRY fake_close_adapter(HANDLE a)
{
    ck_assert_ptr_eq(a, (HANDLE)0x4000);
    fake.close_adapter_calls++;
    return S_OK;
}

static HRESULT APIENTRY fake_open_adapter(D3DDDIARG_OPENADAPTER *args)
{
    D3DDDICB_QUERYADAPTERINFO q = { &fake.kmd_during_open, sizeof(fake.kmd_during_open) };

    ck_assert_uint_eq(args->Interface, 9);
    fake.rt_adapter = args->hAdapter;
    fake.acb = *args->pAdapterCallbacks;
    /* the adapter callbacks work inside OpenAdapter */
    ck_assert_int_eq(fake.acb.pfnQueryAdapterInfoCb(args->hAdapter, &q), S_OK);
    if (FAILED(fake.open_result))
        return fake.open_result;
    if (!fake.leave_funcs_null) {
        args->pAdapterFuncs->pfnGetCaps = fake_get_caps;
        if (!fake.leave_create_device_null)
            args->pAdapterFuncs->pfnCreateDevice = fake_create_device;
        args->pAdapterFuncs->pfnCloseAdapter = fake_close_adapter;
    }
    args->hAdapter = (HANDLE)0x4000;
    args->DriverVersion = fake.driver_version;
    return S_OK;
}

/* ---- harness ----------------------------------------------------------------------------------- */

static struct {
    unsigned n;
    char lines[16][320];
} reports;

static void collect(void *ctx, const char *line)
{
    (void)ctx;
    if (reports.n < 16)
        snprintf(reports.lines[reports.n++], sizeof(reports.lines[0]), "%s", line);
}

static struct kmtumd_host *host;
static struct kmtumd_device *dev;

static void start(UINT driver_version)
{
    kmt_test_use_miniport("soft");
    setenv("KMTSHIM_CONFIG", "", 1);
    fake.driver_version = driver_version;
    ck_assert_int_eq(kmtumd_host_open_entry(NULL, fake_open_adapter, "fake_umd", collect, NULL, &host), S_OK);
    ck_assert_uint_eq(fake.kmd_during_open.Magic, KMT_SOFT_ALLOCATION_MAGIC);
    ck_assert_str_eq(kmtumd_host_umd_name(host), "fake_umd");
    ck_assert_int_eq(kmtumd_create_device(host, &dev), S_OK);
}

static void finish(void)
{
    kmtumd_host_close(host);
    kmt_test_shutdown_no_leaks();
}

static struct kmtumd_stats stats(void)
{
    struct kmtumd_stats s;

    kmtumd_host_stats(host, &s);
    return s;
}

/* Device-owned allocations through pfnAllocateCb (D3DDDI_ALLOCATIONINFO). */
static void alloc_standalone(UINT count, D3DKMT_HANDLE *out)
{
    KMT_SOFT_ALLOCATION_DESC desc[4];
    D3DDDI_ALLOCATIONINFO info[4] = { 0 };
    D3DDDICB_ALLOCATE a = { 0 };

    ck_assert_uint_le(count, 4);
    for (UINT i = 0; i < count; i++) {
        desc[i] = kmt_test_soft_desc(4096);
        info[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    a.NumAllocations = count;
    a.pAllocationInfo = info;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), S_OK);
    ck_assert_uint_eq(a.hKMResource, 0);
    for (UINT i = 0; i < count; i++) {
        ck_assert_local_handle(info[i].hAllocation);
        out[i] = info[i].hAllocation;
    }
}

static HRESULT dealloc_list(const D3DKMT_HANDLE *list, UINT count)
{
    D3DDDICB_DEALLOCATE d = { 0 };

    d.NumAllocations = count;
    d.HandleList = list;
    return fake.cb->pfnDeallocateCb(fake.rt_device, &d);
}

static D3DDDICB_CREATECONTEXT new_context(void)
{
    D3DDDICB_CREATECONTEXT c = { 0 };

    ck_assert_int_eq(fake.cb->pfnCreateContextCb(fake.rt_device, &c), S_OK);
    ck_assert_local_handle((D3DKMT_HANDLE)(UINT_PTR)c.hContext);
    return c;
}

static struct kmtumd_resource *host_resource(UINT surfaces, BOOL shared)
{
    struct kmtumd_resource_desc desc = { surfaces ? surfaces : 1, 32, 32, shared };
    struct kmtumd_resource *res = NULL;

    fake.allocate_surfaces = surfaces;
    ck_assert_int_eq(kmtumd_create_resource(dev, &desc, &res), S_OK);
    return res;
}

static unsigned violations(enum kmtumd_rule rule)
{
    return stats().violations[rule];
}

/* ---- cases -------------------------------------------------------------------------------------- */

START_TEST(bad_arguments_never_reach_the_kernel)
{
    D3DDDICB_QUERYADAPTERINFO q = { 0 };
    D3DDDICB_ALLOCATE a = { 0 };
    D3DDDICB_DEALLOCATE d = { 0 };
    D3DDDICB_DEALLOCATE2 d2 = { 0 };
    D3DDDICB_RENDER r;
    D3DDDICB_LOCK l = { 0 };
    D3DDDICB_UNLOCK u = { 0 };
    D3DDDICB_CREATECONTEXT c = { 0 };
    D3DDDICB_DESTROYCONTEXT dc = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    KMT_SOFT_UMD_PRIVATE priv;
    HANDLE bogus = (HANDLE)(UINT_PTR)0xdead0000;
    D3DKMT_HANDLE x;
    struct kmtumd_stats s;

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    memset(&r, 0, sizeof(r));
    /* unknown runtime handles: nothing is dereferenced */
    q.pPrivateDriverData = &priv;
    q.PrivateDriverDataSize = sizeof(priv);
    ck_assert_int_eq(fake.acb.pfnQueryAdapterInfoCb(bogus, &q), E_INVALIDARG);
    ck_assert_int_eq(fake.acb.pfnQueryAdapterInfoCb(fake.rt_adapter, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnAllocateCb(bogus, &a), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(bogus, &d), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnDeallocate2Cb(bogus, &d2), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnRenderCb(bogus, &r), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnLockCb(bogus, &l), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnUnlockCb(bogus, &u), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnCreateContextCb(bogus, &c), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnDestroyContextCb(bogus, &dc), E_INVALIDARG);
    /* NULL descriptors */
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnDeallocate2Cb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnRenderCb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnLockCb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnUnlockCb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnCreateContextCb(fake.rt_device, NULL), E_INVALIDARG);
    ck_assert_int_eq(fake.cb->pfnDestroyContextCb(fake.rt_device, NULL), E_INVALIDARG);
    /* malformed allocation requests */
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);          /* 0 allocations */
    a.NumAllocations = D3DKMT_CREATEALLOCATION_MAX + 1;
    a.pAllocationInfo = &info;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);
    a.NumAllocations = 1;
    a.PrivateDriverDataSize = 16;                                                       /* no pointer */
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);
    a.PrivateDriverDataSize = 0;
    a.pAllocationInfo = NULL;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);
    /* an empty handle list; flags no UMD may use */
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(fake.rt_device, &d), E_INVALIDARG);
    alloc_standalone(1, &x);
    d2.NumAllocations = 1;
    d2.HandleList = &x;
    d2.Flags.SystemUseOnly = 1;
    ck_assert_int_eq(fake.cb->pfnDeallocate2Cb(fake.rt_device, &d2), E_INVALIDARG);
    ck_assert_uint_eq(stats().live_allocations, 1);
    /* unknown contexts */
    r.hContext = (HANDLE)(UINT_PTR)0x40000040;
    ck_assert_int_eq(fake.cb->pfnRenderCb(fake.rt_device, &r), E_INVALIDARG);
    dc.hContext = r.hContext;
    ck_assert_int_eq(fake.cb->pfnDestroyContextCb(fake.rt_device, &dc), E_INVALIDARG);
    /* the kernel's own refusals come back mapped */
    l.hAllocation = 0x40000fc0;
    ck_assert_int_eq(fake.cb->pfnLockCb(fake.rt_device, &l), E_INVALIDARG);

    s = stats();
    ck_assert_uint_eq(s.allocate_calls, 5);          /* 4 refused + 1 (NULL and bogus devices: not counted) */
    ck_assert_uint_eq(s.deallocate_calls, 2);
    ck_assert_uint_eq(s.render_calls + s.lock_calls + s.unlock_calls + s.contexts_created, 0);
    ck_assert_uint_eq(s.violations[KMTUMD_RULE_UNKNOWN_OBJECT], 0);
    d2.Flags.Value = 0;
    d2.Flags.AssumeNotInUse = 1;
    ck_assert_int_eq(fake.cb->pfnDeallocate2Cb(fake.rt_device, &d2), S_OK);
    ck_assert_uint_eq(stats().live_allocations, 0);
    finish();
}
END_TEST

START_TEST(query_adapter_info_cb_gives_the_kmd_data)
{
    KMT_SOFT_UMD_PRIVATE priv;
    D3DDDICB_QUERYADAPTERINFO q = { &priv, sizeof(priv) };

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    memset(&priv, 0, sizeof(priv));
    ck_assert_int_eq(fake.acb.pfnQueryAdapterInfoCb(fake.rt_adapter, &q), S_OK);
    ck_assert_uint_eq(priv.Magic, KMT_SOFT_ALLOCATION_MAGIC);
    ck_assert_uint_eq(priv.Version, 1);
    ck_assert_uint_eq(priv.PageSize, 4096);
    ck_assert_uint_eq(priv.NodeCount, 1);
    ck_assert_int_eq(memcmp(&priv, &fake.kmd_during_open, sizeof(priv)), 0);
    finish();
}
END_TEST

START_TEST(allocate_v1_lock_write_read)
{
    D3DDDICB_LOCK l = { 0 };
    D3DDDICB_UNLOCK u = { 0 };
    D3DKMT_HANDLE x;

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    alloc_standalone(1, &x);
    l.hAllocation = x;
    ck_assert_int_eq(fake.cb->pfnLockCb(fake.rt_device, &l), S_OK);
    ck_assert_ptr_nonnull(l.pData);
    memset(l.pData, 0x5c, 4096);
    u.NumAllocations = 1;
    u.phAllocations = &x;
    ck_assert_int_eq(fake.cb->pfnUnlockCb(fake.rt_device, &u), S_OK);
    l.pData = NULL;
    ck_assert_int_eq(fake.cb->pfnLockCb(fake.rt_device, &l), S_OK);
    ck_assert_uint_eq(((BYTE *)l.pData)[4095], 0x5c);
    ck_assert_int_eq(fake.cb->pfnUnlockCb(fake.rt_device, &u), S_OK);
    ck_assert_uint_eq(stats().lock_calls, 2);
    ck_assert_uint_eq(stats().unlock_calls, 2);
    ck_assert_int_eq(dealloc_list(&x, 1), S_OK);
    finish();
}
END_TEST

START_TEST(allocate_v2_for_wddm2_umds)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(8192);
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DDDICB_ALLOCATE a = { 0 };

    start(D3D_UMD_INTERFACE_VERSION_WDDM2_0);
    ck_assert_uint_eq(kmtumd_host_driver_version(host), D3D_UMD_INTERFACE_VERSION_WDDM2_0);
    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    a.NumAllocations = 1;
    a.pAllocationInfo2 = &info;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), S_OK);
    ck_assert_local_handle(info.hAllocation);
    ck_assert_uint_ne(info.GpuVirtualAddress, 0);   /* only D3DKMTCreateAllocation2 fills it */
    ck_assert_int_eq(dealloc_list(&info.hAllocation, 1), S_OK);
    finish();
}
END_TEST

/* pfnAllocateCb: a malformed allocation is E_INVALIDARG (d3dumddi.h: "parameters were
 * validated and determined to be incorrect"), never E_OUTOFMEMORY, and reaches no kernel. */
START_TEST(allocate_cb_bad_allocation_private_data)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(4096);
    D3DDDI_ALLOCATIONINFO info[2] = { { 0 } };
    D3DDDICB_ALLOCATE a = { 0 };

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    info[0].pPrivateDriverData = &desc;
    info[0].PrivateDriverDataSize = sizeof(desc);
    info[1].PrivateDriverDataSize = sizeof(desc);            /* no pointer */
    a.NumAllocations = 2;
    a.pAllocationInfo = info;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);
    info[1].pPrivateDriverData = &desc;
    info[1].PrivateDriverDataSize = 128u * 1024u + 1;        /* past the runtime's limit */
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);
    ck_assert_uint_eq(info[0].hAllocation, 0);
    ck_assert_uint_eq(stats().live_allocations, 0);
    finish();
}
END_TEST

START_TEST(render_clears_the_allocation_list)
{
    KMT_SOFT_CMD_HEADER nop = { KMT_SOFT_OP_NOP, sizeof(KMT_SOFT_CMD_HEADER) };
    D3DDDICB_CREATECONTEXT c;
    D3DDDICB_RENDER r;
    D3DKMT_HANDLE x;

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    alloc_standalone(1, &x);
    c = new_context();
    ck_assert_uint_eq(c.CommandBufferSize, 64 * 1024);
    ck_assert_uint_eq(c.AllocationListSize, 256);
    ck_assert_uint_eq(c.PatchLocationListSize, 1024);
    for (UINT i = 0; i < c.AllocationListSize; i++)
        ck_assert_uint_eq(c.pAllocationList[i].hAllocation, 0);
    memcpy(c.pCommandBuffer, &nop, sizeof(nop));
    c.pAllocationList[0].hAllocation = x;
    c.pAllocationList[7].hAllocation = x;       /* past NumAllocations: cleared too */
    memset(&r, 0, sizeof(r));
    r.hContext = c.hContext;
    r.CommandLength = sizeof(nop);
    r.NumAllocations = 1;
    r.BroadcastContextCount = 1;                /* kmtshim renders on one context */
    ck_assert_int_eq(fake.cb->pfnRenderCb(fake.rt_device, &r), E_INVALIDARG);
    r.BroadcastContextCount = 0;
    r.Flags.Value = 0x10;
    ck_assert_int_eq(fake.cb->pfnRenderCb(fake.rt_device, &r), E_INVALIDARG);
    r.Flags.Value = 0;
    ck_assert_uint_eq(c.pAllocationList[0].hAllocation, x);   /* a refused render changes nothing */
    ck_assert_int_eq(fake.cb->pfnRenderCb(fake.rt_device, &r), S_OK);
    ck_assert_ptr_eq(r.pNewCommandBuffer, c.pCommandBuffer);
    ck_assert_ptr_eq(r.pNewAllocationList, c.pAllocationList);
    ck_assert_uint_eq(r.NewAllocationListSize, 256);
    ck_assert_ptr_eq(r.pNewPatchLocationList, c.pPatchLocationList);
    ck_assert_uint_eq(c.pAllocationList[0].hAllocation, 0);
    ck_assert_uint_eq(c.pAllocationList[7].hAllocation, 0);
    ck_assert_uint_eq(stats().render_calls, 1);
    /* nothing is unflushed now */
    ck_assert_int_eq(dealloc_list(&x, 1), S_OK);
    ck_assert_uint_eq(violations(KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE), 0);
    ck_assert_int_eq(fake.cb->pfnDestroyContextCb(fake.rt_device, &(D3DDDICB_DESTROYCONTEXT){ c.hContext }), S_OK);
    ck_assert_uint_eq(stats().contexts_destroyed, 1);
    finish();
}
END_TEST

START_TEST(flush_rule_sees_the_allocation_list)
{
    struct kmtumd_violation v[2];
    D3DDDICB_CREATECONTEXT c;
    D3DDDICB_DEALLOCATE2 d2 = { 0 };
    D3DKMT_HANDLE x[2];
    char slot[32];

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    alloc_standalone(2, x);
    c = new_context();
    c.pAllocationList[3].hAllocation = x[1];    /* a batched command uses x[1] */
    c.pAllocationList[4].hAllocation = x[1];    /* twice: reported once */
    ck_assert_int_eq(dealloc_list(&x[0], 1), S_OK);
    ck_assert_uint_eq(violations(KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE), 0);
    d2.NumAllocations = 1;
    d2.HandleList = &x[1];
    d2.Flags.AssumeNotInUse = 1;
    ck_assert_int_eq(fake.cb->pfnDeallocate2Cb(fake.rt_device, &d2), S_OK);   /* still carried out */
    ck_assert_uint_eq(stats().live_allocations, 0);
    ck_assert_uint_eq(kmtumd_host_violations(host, v, 2), 1);
    ck_assert_int_eq(v[0].rule, KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE);
    ck_assert_uint_eq(v[0].allocation, x[1]);
    ck_assert_uint_eq(v[0].resource, 0);
    ck_assert_uint_eq(v[0].context, (D3DKMT_HANDLE)(UINT_PTR)c.hContext);
    ck_assert_uint_eq(v[0].device, kmtumd_device_handle(dev));
    snprintf(slot, sizeof(slot), "0x%08x", x[1]);
    ck_assert_ptr_nonnull(strstr(v[0].line, "kmtumd: PROTOCOL VIOLATION: umd fake_umd: flush-before-deallocate: "
                                            "pfnDeallocate2Cb frees allocation "));
    ck_assert_ptr_nonnull(strstr(v[0].line, slot));
    ck_assert_ptr_nonnull(strstr(v[0].line, "allocation list slot 3)"));
    ck_assert_uint_eq(reports.n, 1);
    ck_assert_str_eq(reports.lines[0], v[0].line);
    finish();
}
END_TEST

START_TEST(unknown_objects)
{
    struct kmtumd_violation v[8];
    D3DDDICB_DEALLOCATE d = { 0 };
    D3DDDICB_ALLOCATE a = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(4096);
    D3DKMT_HANDLE x[2], bogus = 0x40000fc0, twice[2];

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    d.hResource = (HANDLE)(UINT_PTR)0x1234;
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(fake.rt_device, &d), E_INVALIDARG);
    ck_assert_int_eq(dealloc_list(&bogus, 1), E_INVALIDARG);               /* the kernel refuses it too */
    alloc_standalone(2, x);
    twice[0] = twice[1] = x[0];
    ck_assert_int_eq(dealloc_list(twice, 2), E_INVALIDARG);
    ck_assert_int_eq(dealloc_list(&x[0], 1), S_OK);
    ck_assert_int_eq(dealloc_list(&x[0], 1), E_INVALIDARG);                /* again */
    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    a.hResource = (HANDLE)(UINT_PTR)0x5678;
    a.NumAllocations = 1;
    a.pAllocationInfo = &info;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), E_INVALIDARG);
    ck_assert_uint_eq(kmtumd_host_violations(host, v, 8), 5);
    for (UINT i = 0; i < 5; i++)
        ck_assert_int_eq(v[i].rule, KMTUMD_RULE_UNKNOWN_OBJECT);
    ck_assert_ptr_nonnull(strstr(v[0].line, "pfnDeallocateCb names resource handle 0x1234"));
    ck_assert_uint_eq(v[1].allocation, bogus);
    ck_assert_uint_eq(v[2].allocation, x[0]);
    ck_assert_ptr_nonnull(strstr(v[2].line, "twice"));
    ck_assert_uint_eq(v[3].allocation, x[0]);
    ck_assert_ptr_nonnull(strstr(v[3].line, "already deallocated"));
    ck_assert_ptr_nonnull(strstr(v[4].line, "pfnAllocateCb names resource handle 0x5678"));
    ck_assert_uint_eq(stats().live_allocations, 1);
    ck_assert_int_eq(dealloc_list(&x[1], 1), S_OK);
    finish();
}
END_TEST

START_TEST(groups_of_resources_and_of_the_device)
{
    struct kmtumd_resource_info info, shared;
    struct kmtumd_violation v[4];
    struct kmtumd_resource *res, *sres;
    D3DDDICB_DEALLOCATE d = { 0 };
    D3DDDICB_ALLOCATE a = { 0 };
    D3DDDI_ALLOCATIONINFO ai[2] = { 0 };
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(4096);
    D3DKMT_HANDLE x[3];

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    /* device-owned allocations go one by one */
    alloc_standalone(3, x);
    ck_assert_int_eq(dealloc_list(&x[1], 1), S_OK);
    ck_assert_uint_eq(violations(KMTUMD_RULE_ATOMIC_GROUP), 0);

    /* a resource grown by a second pfnAllocateCb: two groups */
    res = host_resource(2, FALSE);
    ai[0].pPrivateDriverData = ai[1].pPrivateDriverData = &desc;
    ai[0].PrivateDriverDataSize = ai[1].PrivateDriverDataSize = sizeof(desc);
    a.hResource = fake.rt_resources[0];
    a.NumAllocations = 2;
    a.pAllocationInfo = ai;
    ck_assert_int_eq(fake.cb->pfnAllocateCb(fake.rt_device, &a), S_OK);
    kmtumd_resource_info(res, &info);
    ck_assert_uint_eq(a.hKMResource, info.resource);
    ck_assert_uint_eq(info.count, 4);
    ck_assert_uint_eq(info.allocations[2], ai[0].hAllocation);
    /* the whole second group: fine; one of the first: not */
    ck_assert_int_eq(dealloc_list(&info.allocations[2], 2), S_OK);
    ck_assert_uint_eq(violations(KMTUMD_RULE_ATOMIC_GROUP), 0);
    ck_assert_int_eq(dealloc_list(&info.allocations[1], 1), S_OK);
    ck_assert_uint_eq(kmtumd_host_violations(host, v, 4), 1);
    ck_assert_int_eq(v[0].rule, KMTUMD_RULE_ATOMIC_GROUP);
    ck_assert_uint_eq(v[0].resource, info.resource);
    ck_assert_uint_eq(v[0].allocation, info.allocations[1]);
    ck_assert_uint_eq(v[0].count, 2);

    /* a shared resource is never deallocated through a list, not even whole */
    sres = host_resource(2, TRUE);
    kmtumd_resource_info(sres, &shared);
    ck_assert_uint_ne(shared.share, 0);
    ck_assert_int_eq(dealloc_list(shared.allocations, 2), E_INVALIDARG);  /* and the kernel refuses */
    ck_assert_uint_eq(kmtumd_host_violations(host, v, 4), 2);
    ck_assert_int_eq(v[1].rule, KMTUMD_RULE_ATOMIC_GROUP);
    ck_assert_uint_eq(v[1].resource, shared.resource);
    ck_assert_ptr_nonnull(strstr(v[1].line, "shared resource"));
    d.hResource = fake.rt_resources[1];
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(fake.rt_device, &d), S_OK);
    d.hResource = fake.rt_resources[0];
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(fake.rt_device, &d), S_OK);
    ck_assert_int_eq(dealloc_list(x, 1), S_OK);
    ck_assert_int_eq(dealloc_list(&x[2], 1), S_OK);
    ck_assert_uint_eq(stats().live_allocations, 0);
    ck_assert_uint_eq(kmtumd_host_violations(host, NULL, 0), 2);
    finish();
}
END_TEST

START_TEST(leaks_of_every_kind)
{
    struct kmtumd_resource_info info;
    struct kmtumd_violation v[4];
    struct kmtumd_resource *res;
    D3DDDICB_CREATECONTEXT c;
    D3DKMT_HANDLE x;
    unsigned long live_before;

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    alloc_standalone(1, &x);
    c = new_context();
    res = host_resource(1, FALSE);              /* DestroyResource releases nothing */
    kmtumd_resource_info(res, &info);
    live_before = KmtLiveObjectCount();
    ck_assert_int_eq(kmtumd_destroy_device(dev), S_OK);
    ck_assert_uint_eq(fake.destroy_device_calls, 1);
    ck_assert_uint_eq(kmtumd_host_violations(host, v, 4), 3);
    ck_assert_int_eq(v[0].rule, KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE);
    ck_assert_uint_eq(v[0].resource, info.resource);
    ck_assert_uint_eq(v[0].allocation, info.allocations[0]);
    ck_assert_uint_eq(v[0].count, 1);
    ck_assert_int_eq(v[1].rule, KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE);
    ck_assert_uint_eq(v[1].allocation, x);
    ck_assert_ptr_nonnull(strstr(v[1].line, "device-owned allocation"));
    ck_assert_int_eq(v[2].rule, KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE);
    ck_assert_uint_eq(v[2].context, (D3DKMT_HANDLE)(UINT_PTR)c.hContext);
    ck_assert_uint_eq(reports.n, 3);
    ck_assert_str_eq(reports.lines[2], v[2].line);
    /* the kernel reclaimed all of it */
    ck_assert_uint_eq(stats().live_allocations, 0);
    ck_assert_uint_lt(KmtLiveObjectCount(), live_before);
    /* and the device is gone for the callbacks too */
    ck_assert_int_eq(dealloc_list(&x, 1), E_INVALIDARG);
    dev = NULL;
    finish();
}
END_TEST

START_TEST(deferred_deallocations_are_counted)
{
    struct kmtumd_resource *now, *later;
    D3DDDICB_DEALLOCATE d = { 0 };

    start(D3D_UMD_INTERFACE_VERSION_WIN7);
    fake.deallocate_in_destroy = true;
    now = host_resource(1, FALSE);
    ck_assert_int_eq(kmtumd_destroy_resource(now), S_OK);
    ck_assert_uint_eq(stats().deferred_deallocations, 0);
    fake.deallocate_in_destroy = false;
    later = host_resource(1, FALSE);
    ck_assert_int_eq(kmtumd_destroy_resource(later), S_OK);
    d.hResource = fake.rt_resources[1];
    ck_assert_int_eq(fake.cb->pfnDeallocateCb(fake.rt_device, &d), S_OK);
    ck_assert_uint_eq(stats().deferred_deallocations, 1);
    ck_assert_uint_eq(stats().deallocate_calls, 2);
    /* a resource whose CreateResource allocated nothing releases cleanly */
    fake.deallocate_in_destroy = true;
    ck_assert_int_eq(kmtumd_destroy_resource(host_resource(0, FALSE)), S_OK);
    ck_assert_uint_eq(kmtumd_host_violations(host, NULL, 0), 0);
    finish();
}
END_TEST

START_TEST(open_adapter_and_create_device_failures)
{
    struct kmtumd_device *d = (struct kmtumd_device *)1;

    kmt_test_use_miniport("soft");
    setenv("KMTSHIM_CONFIG", "", 1);
    fake.open_result = E_OUTOFMEMORY;
    host = (struct kmtumd_host *)1;
    ck_assert_int_eq(kmtumd_host_open_entry(NULL, fake_open_adapter, "fake_umd", collect, NULL, &host),
                     E_OUTOFMEMORY);
    ck_assert_ptr_null(host);
    ck_assert_str_eq(reports.lines[0], "kmtumd: umd fake_umd: OpenAdapter failed: HRESULT 0x8007000e");
    fake.open_result = S_OK;
    fake.leave_funcs_null = true;
    ck_assert_int_eq(kmtumd_host_open_entry(NULL, fake_open_adapter, "fake_umd", collect, NULL, &host), E_FAIL);
    ck_assert_ptr_null(host);
    fake.leave_funcs_null = false;
    /* an adapter the UMD opened is closed again when the runtime refuses it */
    fake.leave_create_device_null = true;
    fake.close_adapter_calls = 0;
    ck_assert_int_eq(kmtumd_host_open_entry(NULL, fake_open_adapter, "fake_umd", collect, NULL, &host), E_FAIL);
    ck_assert_ptr_null(host);
    ck_assert_uint_eq(fake.close_adapter_calls, 1);
    fake.leave_create_device_null = false;
    ck_assert_int_eq(kmtumd_host_open_entry(NULL, NULL, "x", collect, NULL, &host), E_INVALIDARG);
    ck_assert_int_eq(kmtumd_host_open_entry(NULL, fake_open_adapter, "fake_umd", collect, NULL, &host), S_OK);
    fake.create_device_result = E_OUTOFMEMORY;
    ck_assert_int_eq(kmtumd_create_device(host, &d), E_OUTOFMEMORY);
    ck_assert_ptr_null(d);
    kmtumd_host_close(host);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("umd_runtime");
    TCase *tc = tcase_create("runtime");

    tcase_add_test(tc, bad_arguments_never_reach_the_kernel);
    tcase_add_test(tc, query_adapter_info_cb_gives_the_kmd_data);
    tcase_add_test(tc, allocate_v1_lock_write_read);
    tcase_add_test(tc, allocate_v2_for_wddm2_umds);
    tcase_add_test(tc, allocate_cb_bad_allocation_private_data);
    tcase_add_test(tc, render_clears_the_allocation_list);
    tcase_add_test(tc, flush_rule_sees_the_allocation_list);
    tcase_add_test(tc, unknown_objects);
    tcase_add_test(tc, groups_of_resources_and_of_the_device);
    tcase_add_test(tc, leaks_of_every_kind);
    tcase_add_test(tc, deferred_deallocations_are_counted);
    tcase_add_test(tc, open_adapter_and_create_device_failures);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
