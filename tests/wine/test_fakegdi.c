/*
 * kmtshim's handles and Wine 11's in one process: the gdi32 proxy over a
 * fake Wine 11 gdi32 (tests/wine/fake/wine11.h) that hands out handles as
 * Wine 10.15 on does, from index 0.  Objects of both sides are created
 * interleaved, used, shared by global and NT handle, and destroyed in mixed
 * order; every call must land on the side that issued its handle (the
 * fake counts the calls it serves; kmtshim's handles have index 2^23 up),
 * and neither side may accept or free the other's handles, live or stale.
 * Routing rules: dlls/gdi32/routing.txt; the table: docs/wine.md.
 */
#include <stdio.h>

#include "kmtwtest.h"
#include "wine11.h"
#include "kmtshim/kmtsoft.h"

#define SHIM_INDEX_BIT 0x20000000u

typedef NTSTATUS (APIENTRY *d3dkmt_fn)(void *desc);
typedef NTSTATUS (APIENTRY *share_fn)(UINT count, const D3DKMT_HANDLE *objects, void *attributes,
                                      DWORD access, HANDLE *nt_handle);

static HMODULE gdi32, fake;
static LONG (WINAPI *fake_calls)(void);
static const char *(WINAPI *fake_last)(void);
static BOOL (WINAPI *shim_owns)(D3DKMT_HANDLE handle);
static LUID shim_luid;

/* The proxy's function, or the fake's own (what Wine's own components
 * call, the way wined3d calls win32u). */
static d3dkmt_fn px(const char *name)
{
    return (d3dkmt_fn)(void *)GetProcAddress(gdi32, name);
}

static d3dkmt_fn wine(const char *name)
{
    return (d3dkmt_fn)(void *)GetProcAddress(fake, name);
}

/* Calls the proxy's `name` and checks who served it: the fake (served one
 * call, this one) or kmtshim (the fake served nothing). */
static NTSTATUS call_on(BOOL on_wine, const char *name, void *desc, int line)
{
    LONG before = fake_calls();
    d3dkmt_fn fn = px(name);
    NTSTATUS status;
    LONG served;

    if (!fn) {
        kmtw_at(__FILE__, line);
        kmtw_ok(0, "the proxy has no %s\n", name);
        return STATUS_NOT_SUPPORTED;
    }
    status = fn(desc);
    served = fake_calls() - before;
    kmtw_at(__FILE__, line);
    if (on_wine)
        kmtw_ok(served == 1 && !lstrcmpA(fake_last(), name), "%s went to kmtshim (fake served %ld, last %s)\n",
                name, served, fake_last());
    else
        kmtw_ok(served == 0, "%s went to Wine (fake served %ld: %s)\n", name, served, fake_last());
    return status;
}
#define on_wine(name, desc) call_on(TRUE, "D3DKMT" #name, desc, __LINE__)
#define on_shim(name, desc) call_on(FALSE, "D3DKMT" #name, desc, __LINE__)

#define expect(expr, want) do {                                                              \
        NTSTATUS s_ = (expr);                                                                \
        ok(s_ == (NTSTATUS)(want), "%s: %#lx, expected %#lx\n", #expr, (unsigned long)s_,   \
           (unsigned long)(want));                                                           \
    } while (0)

/* Wine's layout from index 0 (a few objects here: small indices), local
 * (low bits 0) or global (low bits 2). */
static BOOL wines(D3DKMT_HANDLE h, unsigned low)
{
    return (h & 0xc000003fu) == (0x40000000u | low) && ((h >> 6) & 0xffffff) < 64;
}

static BOOL shims(D3DKMT_HANDLE h, unsigned low)
{
    return (h & 0xc000003fu) == (0x40000000u | low) && (h & SHIM_INDEX_BIT) && !!shim_owns(h) == !low;
}

static void test_setup(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    D3DKMT_CLOSEADAPTER c = { 0 };
    HMODULE shim;

    /* gdi32 as a program without a static import gets it: the proxy, by
     * the run's gdi32=n,b, from the program's directory */
    gdi32 = LoadLibraryA("gdi32.dll");
    fake = GetModuleHandleA("gdi32_orig.dll");
    ok(gdi32 && px("D3DKMTCreateAllocation") && fake, "gdi32 %p is not the proxy over the fake (%p)\n",
       (void *)gdi32, (void *)fake);
    if (!fake)
        return;
    fake_calls = (LONG (WINAPI *)(void))(void *)GetProcAddress(fake, "FakeWineCalls");
    fake_last = (const char *(WINAPI *)(void))(void *)GetProcAddress(fake, "FakeWineLastCall");
    ok(fake_calls && fake_last, "gdi32_orig.dll is not the fake Wine 11 gdi32\n");
    ok(GetModuleHandleA("gdi32_wine.dll") != NULL, "the fake did not load Wine's gdi32\n");
    /* the proxy's routed names, not the fake's */
    ok((void *)px("D3DKMTCreateDevice") != (void *)wine("D3DKMTCreateDevice"), "CreateDevice is the fake's\n");
    if (!fake_calls || !fake_last)
        return;
    expect(on_shim(EnumAdapters2, &e), STATUS_SUCCESS);
    ok(e.NumAdapters >= 1, "%lu adapters\n", (unsigned long)e.NumAdapters);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        c.hAdapter = info[i].hAdapter;
        expect(on_shim(CloseAdapter, &c), STATUS_SUCCESS);
    }
    shim_luid = info[0].AdapterLuid;
    shim = GetModuleHandleA("kmtshim.dll");
    shim_owns = (BOOL (WINAPI *)(D3DKMT_HANDLE))(void *)GetProcAddress(shim, "KmtShimOwnsHandle");
    ok(shim_owns != NULL, "the proxy did not load kmtshim.dll\n");
}

static BOOL ready(void)
{
    if (fake_calls && fake_last && shim_owns)
        return TRUE;
    skip("the proxy over the fake is not in place\n");
    return FALSE;
}

struct side {
    D3DKMT_HANDLE adapter, device, context, sync, resource, allocation;
};

static D3DKMT_HANDLE open_adapter(BOOL on, LUID luid)
{
    D3DKMT_OPENADAPTERFROMLUID o = { luid, 0 };

    /* "first": kmtshim refuses the fake's LUID, then Wine opens it */
    expect(call_on(on, "D3DKMTOpenAdapterFromLuid", &o, __LINE__), STATUS_SUCCESS);
    return o.hAdapter;
}

static D3DKMT_HANDLE create_device(BOOL on, D3DKMT_HANDLE adapter)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = adapter;
    expect(call_on(on, "D3DKMTCreateDevice", &cd, __LINE__), STATUS_SUCCESS);
    return cd.hDevice;
}

static D3DKMT_HANDLE create_sync(BOOL on, D3DKMT_HANDLE device, UINT shared, D3DKMT_HANDLE *global)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_FENCE;
    cs.Info.Flags.Shared = shared != 0;
    cs.Info.Flags.NtSecuritySharing = shared == 2;
    expect(call_on(on, "D3DKMTCreateSynchronizationObject2", &cs, __LINE__), STATUS_SUCCESS);
    if (global)
        *global = cs.Info.SharedHandle;
    return cs.hSyncObject;
}

static NTSTATUS destroy_sync(BOOL on, D3DKMT_HANDLE sync)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds = { sync };

    return call_on(on, "D3DKMTDestroySynchronizationObject", &ds, __LINE__);
}

static NTSTATUS destroy_device(BOOL on, D3DKMT_HANDLE device)
{
    D3DKMT_DESTROYDEVICE dd = { device };

    return call_on(on, "D3DKMTDestroyDevice", &dd, __LINE__);
}

static NTSTATUS close_adapter(BOOL on, D3DKMT_HANDLE adapter)
{
    D3DKMT_CLOSEADAPTER ca = { adapter };

    return call_on(on, "D3DKMTCloseAdapter", &ca, __LINE__);
}

static NTSTATUS destroy_mutex(BOOL on, D3DKMT_HANDLE mutex)
{
    D3DKMT_DESTROYKEYEDMUTEX dk = { mutex };

    return call_on(on, "D3DKMTDestroyKeyedMutex", &dk, __LINE__);
}

/* Opens by global handle on side `on`: the sync object or keyed mutex
 * behind `global` (0 where refused). */
static D3DKMT_HANDLE open_sync(BOOL on, D3DKMT_HANDLE global, NTSTATUS want)
{
    D3DKMT_OPENSYNCHRONIZATIONOBJECT os = { 0 };

    os.hSharedHandle = global;
    expect(call_on(on, "D3DKMTOpenSynchronizationObject", &os, __LINE__), want);
    return os.hSyncObject;
}

static D3DKMT_HANDLE open_mutex(BOOL on, D3DKMT_HANDLE global, NTSTATUS want)
{
    D3DKMT_OPENKEYEDMUTEX om = { 0 };

    om.hSharedHandle = global;
    expect(call_on(on, "D3DKMTOpenKeyedMutex", &om, __LINE__), want);
    return om.hKeyedMutex;
}

/* Acquires the keyed mutex with key 0 and releases it to key 1. */
static void acquire_release(BOOL on, D3DKMT_HANDLE mutex)
{
    LARGE_INTEGER zero = { { 0, 0 } };
    D3DKMT_ACQUIREKEYEDMUTEX aq = { 0 };
    D3DKMT_RELEASEKEYEDMUTEX rl = { 0 };

    aq.hKeyedMutex = mutex;
    aq.pTimeout = &zero;
    expect(call_on(on, "D3DKMTAcquireKeyedMutex", &aq, __LINE__), STATUS_SUCCESS);
    rl.hKeyedMutex = mutex;
    rl.Key = 1;
    expect(call_on(on, "D3DKMTReleaseKeyedMutex", &rl, __LINE__), STATUS_SUCCESS);
}

/* A one-allocation resource; shared: 1 a global handle, 2 NT sharing. */
static D3DKMT_HANDLE create_resource(BOOL on, D3DKMT_HANDLE device, UINT shared, D3DKMT_HANDLE *allocation,
                                     D3DKMT_HANDLE *global)
{
    KMT_SOFT_ALLOCATION_DESC soft = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, 4096, 0, 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };

    info.pPrivateDriverData = &soft;
    info.PrivateDriverDataSize = sizeof(soft);
    ca.hDevice = device;
    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = shared != 0;
    ca.Flags.NtSecuritySharing = shared == 2;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    expect(call_on(on, "D3DKMTCreateAllocation", &ca, __LINE__), STATUS_SUCCESS);
    *allocation = info.hAllocation;
    if (global)
        *global = ca.hGlobalShare;
    return ca.hResource;
}

/* Both sides' adapters, devices, contexts, sync objects and resources,
 * created interleaved, so Wine's indices 0, 1, 2... and kmtshim's coexist;
 * destroyed in mixed order, then every handle again (stale). */
static void test_local(void)
{
    struct side s = { 0 }, w = { 0 };
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };
    D3DKMT_DESTROYCONTEXT dc = { 0 };
    D3DKMT_DESTROYALLOCATION da = { 0 };
    LUID wine_luid = { FAKE_LUID_LOW, FAKE_LUID_HIGH };

    if (!ready())
        return;
    s.adapter = open_adapter(FALSE, shim_luid);
    w.adapter = open_adapter(TRUE, wine_luid);
    ok(shims(s.adapter, 0), "kmtshim's adapter %#x\n", s.adapter);
    ok(wines(w.adapter, 0), "Wine's adapter %#x\n", w.adapter);
    w.device = create_device(TRUE, w.adapter);
    s.device = create_device(FALSE, s.adapter);
    ok(shims(s.device, 0) && wines(w.device, 0), "devices %#x %#x\n", s.device, w.device);
    ok(w.device == w.adapter + 0x40, "Wine's second index: %#x after %#x\n", w.device, w.adapter);

    cc.hDevice = s.device;
    cc.ClientHint = D3DKMT_CLIENTHINT_DX11;
    expect(on_shim(CreateContextVirtual, &cc), STATUS_SUCCESS);
    s.context = cc.hContext;
    cc.hDevice = w.device;
    cc.hContext = 0;
    expect(on_wine(CreateContextVirtual, &cc), STATUS_SUCCESS);
    w.context = cc.hContext;
    ok(shims(s.context, 0) && wines(w.context, 0), "contexts %#x %#x\n", s.context, w.context);

    w.sync = create_sync(TRUE, w.device, 0, NULL);
    s.sync = create_sync(FALSE, s.device, 0, NULL);
    s.resource = create_resource(FALSE, s.device, 0, &s.allocation, NULL);
    w.resource = create_resource(TRUE, w.device, 0, &w.allocation, NULL);
    ok(shims(s.sync, 0) && shims(s.resource, 0) && shims(s.allocation, 0), "kmtshim's %#x %#x %#x\n",
       s.sync, s.resource, s.allocation);
    ok(wines(w.sync, 0) && wines(w.resource, 0) && wines(w.allocation, 0), "Wine's %#x %#x %#x\n", w.sync,
       w.resource, w.allocation);

    /* one side's handle in the other's index range: refused there, and
     * nothing of the side that issued it is touched */
    expect(destroy_sync(FALSE, w.sync | SHIM_INDEX_BIT), STATUS_INVALID_PARAMETER);
    expect(destroy_sync(TRUE, s.sync & ~SHIM_INDEX_BIT), STATUS_INVALID_PARAMETER);
    ok(shim_owns(s.sync), "kmtshim's sync object %#x is gone\n", s.sync);

    /* a call that mixes the two: the deciding handle's side answers, as
     * for any handle it never issued */
    da.hDevice = w.device;
    da.hResource = s.resource;
    expect(on_wine(DestroyAllocation, &da), STATUS_INVALID_PARAMETER);
    da.hDevice = s.device;
    da.hResource = w.resource;
    expect(on_shim(DestroyAllocation, &da), STATUS_INVALID_PARAMETER);
    ok(shim_owns(s.resource), "kmtshim's resource %#x is gone\n", s.resource);

    /* mixed order, each destroy on its side */
    expect(destroy_sync(TRUE, w.sync), STATUS_SUCCESS);
    ok(shim_owns(s.sync), "Wine's destroy freed kmtshim's %#x\n", s.sync);
    dc.hContext = s.context;
    expect(on_shim(DestroyContext, &dc), STATUS_SUCCESS);
    da.hDevice = w.device;
    da.hResource = w.resource;
    expect(on_wine(DestroyAllocation, &da), STATUS_SUCCESS);
    expect(destroy_sync(FALSE, s.sync), STATUS_SUCCESS);
    dc.hContext = w.context;
    expect(on_wine(DestroyContext, &dc), STATUS_SUCCESS);
    ok(shim_owns(s.resource) && shim_owns(s.allocation), "kmtshim's resource went with Wine's\n");

    /* stale: each side still answers for its own, the other never sees them */
    expect(destroy_sync(TRUE, w.sync), STATUS_INVALID_PARAMETER);
    expect(destroy_sync(FALSE, s.sync), STATUS_INVALID_PARAMETER);
    expect(on_wine(DestroyContext, &dc), STATUS_INVALID_PARAMETER);
    dc.hContext = s.context;
    expect(on_shim(DestroyContext, &dc), STATUS_INVALID_PARAMETER);

    expect(destroy_device(FALSE, s.device), STATUS_SUCCESS);
    ok(!shim_owns(s.resource), "kmtshim's resource %#x outlived its device\n", s.resource);
    expect(destroy_device(TRUE, w.device), STATUS_SUCCESS);
    expect(destroy_device(FALSE, s.device), STATUS_INVALID_PARAMETER);
    expect(destroy_device(TRUE, w.device), STATUS_INVALID_PARAMETER);
    expect(close_adapter(TRUE, w.adapter), STATUS_SUCCESS);
    expect(close_adapter(FALSE, s.adapter), STATUS_SUCCESS);
    expect(close_adapter(FALSE, s.adapter), STATUS_INVALID_PARAMETER);
    expect(close_adapter(TRUE, w.adapter), STATUS_INVALID_PARAMETER);
}

/* Global handles: Wine's from index 0 with low bits 2, kmtshim's broker's
 * from 2^23; opens by global handle go to the side that issued it. */
static void test_global(void)
{
    LUID wine_luid = { FAKE_LUID_LOW, FAKE_LUID_HIGH };
    D3DKMT_HANDLE wa, sa, wd, sd, ws, ss, wg, sg, wr, sr, walloc, salloc, wrg, srg;
    D3DKMT_CREATEKEYEDMUTEX ck = { 0 }, wk = { 0 };
    D3DDDI_OPENALLOCATIONINFO oa = { 0 };
    D3DKMT_OPENRESOURCE orr = { 0 };
    D3DKMT_HANDLE wopened, sopened, mopened;

    if (!ready())
        return;
    wa = open_adapter(TRUE, wine_luid);
    sa = open_adapter(FALSE, shim_luid);
    wd = create_device(TRUE, wa);
    sd = create_device(FALSE, sa);

    ws = create_sync(TRUE, wd, 1, &wg);
    ss = create_sync(FALSE, sd, 1, &sg);
    ok(wines(wg, 2), "Wine's global sync handle %#x\n", wg);
    ok(shims(sg, 2), "kmtshim's global sync handle %#x\n", sg);
    wopened = open_sync(TRUE, wg, STATUS_SUCCESS);
    sopened = open_sync(FALSE, sg, STATUS_SUCCESS);
    ok(wines(wopened, 0) && shims(sopened, 0), "opened %#x %#x\n", wopened, sopened);

    /* resources: the device decides; the other side's global is unknown there */
    wr = create_resource(TRUE, wd, 1, &walloc, &wrg);
    sr = create_resource(FALSE, sd, 1, &salloc, &srg);
    ok(wines(wrg, 2) && shims(srg, 2), "resource globals %#x %#x\n", wrg, srg);
    orr.hDevice = wd;
    orr.hGlobalShare = wrg;
    orr.NumAllocations = 1;
    orr.pOpenAllocationInfo = &oa;
    expect(on_wine(OpenResource, &orr), STATUS_SUCCESS);
    ok(wines(orr.hResource, 0) && wines(oa.hAllocation, 0), "opened %#x %#x\n", orr.hResource, oa.hAllocation);
    orr.hDevice = sd;
    orr.hResource = 0;
    expect(on_shim(OpenResource, &orr), STATUS_INVALID_PARAMETER);

    /* keyed mutexes: a new one is kmtshim's (no device to decide); Wine's
     * own components create theirs in Wine */
    expect(on_shim(CreateKeyedMutex, &ck), STATUS_SUCCESS);
    ok(shims(ck.hSharedHandle, 2) && shims(ck.hKeyedMutex, 0), "kmtshim's keyed mutex %#x %#x\n",
       ck.hSharedHandle, ck.hKeyedMutex);
    expect(wine("D3DKMTCreateKeyedMutex")(&wk), STATUS_SUCCESS);
    ok(wines(wk.hSharedHandle, 2) && wines(wk.hKeyedMutex, 0), "Wine's keyed mutex %#x %#x\n",
       wk.hSharedHandle, wk.hKeyedMutex);
    mopened = open_mutex(TRUE, wk.hSharedHandle, STATUS_SUCCESS);
    acquire_release(TRUE, mopened);
    acquire_release(FALSE, ck.hKeyedMutex);
    expect(destroy_mutex(TRUE, mopened), STATUS_SUCCESS);
    mopened = open_mutex(FALSE, ck.hSharedHandle, STATUS_SUCCESS);
    expect(destroy_mutex(FALSE, mopened), STATUS_SUCCESS);
    expect(destroy_mutex(FALSE, ck.hKeyedMutex), STATUS_SUCCESS);
    expect(destroy_mutex(TRUE, wk.hKeyedMutex), STATUS_SUCCESS);

    /* the objects go: their global handles are stale, each side refuses
     * its own, the other never sees them */
    expect(destroy_sync(TRUE, ws), STATUS_SUCCESS);
    expect(destroy_sync(TRUE, wopened), STATUS_SUCCESS);
    expect(destroy_sync(FALSE, ss), STATUS_SUCCESS);
    expect(destroy_sync(FALSE, sopened), STATUS_SUCCESS);
    open_sync(TRUE, wg, STATUS_INVALID_PARAMETER);
    open_sync(FALSE, sg, STATUS_INVALID_PARAMETER);
    open_mutex(FALSE, ck.hSharedHandle, STATUS_INVALID_PARAMETER);

    expect(destroy_device(TRUE, wd), STATUS_SUCCESS);
    expect(destroy_device(FALSE, sd), STATUS_SUCCESS);
    expect(close_adapter(TRUE, wa), STATUS_SUCCESS);
    expect(close_adapter(FALSE, sa), STATUS_SUCCESS);
    (void)wr;
    (void)sr;
}

/* NT handles: the object type tells Wine 11's shares from kmtshim's; for
 * any other handle kmtshim is asked first and Wine answers what kmtshim
 * says is not its own (the fake's shares are events). */
static void test_nt(void)
{
    LUID wine_luid = { FAKE_LUID_LOW, FAKE_LUID_HIGH };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE on = { 0 };
    share_fn share = (share_fn)(void *)px("D3DKMTShareObjects");
    D3DKMT_HANDLE wa, sa, wd, sd, ws, ss, wopened, sopened;
    HANDLE wnt = NULL, snt = NULL;
    LONG before;

    if (!ready() || !share)
        return;
    wa = open_adapter(TRUE, wine_luid);
    sa = open_adapter(FALSE, shim_luid);
    wd = create_device(TRUE, wa);
    sd = create_device(FALSE, sa);
    ws = create_sync(TRUE, wd, 2, NULL);
    ss = create_sync(FALSE, sd, 2, NULL);

    /* ShareObjects: the first object decides */
    before = fake_calls();
    expect(share(1, &ws, NULL, GENERIC_ALL, &wnt), STATUS_SUCCESS);
    ok(fake_calls() == before + 1, "Wine's ShareObjects went to kmtshim\n");
    expect(share(1, &ss, NULL, GENERIC_ALL, &snt), STATUS_SUCCESS);
    ok(fake_calls() == before + 1, "kmtshim's ShareObjects went to Wine\n");
    ok(wnt && snt && wnt != snt, "NT handles %p %p\n", wnt, snt);

    /* kmtshim is asked first and refuses Wine's; Wine opens it */
    on.hNtHandle = wnt;
    expect(on_wine(OpenSyncObjectFromNtHandle, &on), STATUS_SUCCESS);
    wopened = on.hSyncObject;
    on.hNtHandle = snt;
    on.hSyncObject = 0;
    expect(on_shim(OpenSyncObjectFromNtHandle, &on), STATUS_SUCCESS);
    sopened = on.hSyncObject;
    ok(wines(wopened, 0) && shims(sopened, 0), "opened %#x %#x\n", wopened, sopened);

    expect(destroy_sync(TRUE, wopened), STATUS_SUCCESS);
    expect(destroy_sync(FALSE, sopened), STATUS_SUCCESS);
    expect(destroy_sync(TRUE, ws), STATUS_SUCCESS);
    expect(destroy_sync(FALSE, ss), STATUS_SUCCESS);
    /* closed NT handles: nobody's, and Wine answers what kmtshim refused */
    ok(CloseHandle(wnt) && CloseHandle(snt), "CloseHandle failed\n");
    on.hNtHandle = snt;
    expect(on_wine(OpenSyncObjectFromNtHandle, &on), STATUS_INVALID_PARAMETER);

    expect(destroy_device(TRUE, wd), STATUS_SUCCESS);
    expect(destroy_device(FALSE, sd), STATUS_SUCCESS);
    expect(close_adapter(TRUE, wa), STATUS_SUCCESS);
    expect(close_adapter(FALSE, sa), STATUS_SUCCESS);
}

/* Wine 10.0's opens from NT handles are stubs (STATUS_NOT_IMPLEMENTED to
 * anything): for a handle kmtshim refuses, the proxy asks that stub, and
 * kmtshim's refusal is the answer, as Windows gives it. */
static void test_nt_stub(void)
{
    void (WINAPI *stub_nt_opens)(BOOL) = (void (WINAPI *)(BOOL))(void *)GetProcAddress(fake, "FakeWineStubNtOpens");
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE os = { 0 };
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE om = { 0 };
    HANDLE event = CreateEventA(NULL, FALSE, FALSE, NULL);
    HANDLE bogus = (HANDLE)(ULONG_PTR)0xdead0;

    if (!ready())
        return;
    ok(stub_nt_opens != NULL && event != NULL, "FakeWineStubNtOpens %p, event %p\n",
       (void *)stub_nt_opens, event);
    if (!stub_nt_opens || !event)
        return;
    /* the fake as Wine 11: its own answer for a handle it does not know */
    os.hNtHandle = event;
    expect(on_wine(OpenSyncObjectFromNtHandle, &os), STATUS_INVALID_PARAMETER);
    om.hNtHandle = event;
    expect(on_wine(OpenKeyedMutexFromNtHandle, &om), STATUS_INVALID_PARAMETER);

    stub_nt_opens(TRUE);
    /* a handle of another type, and one that is no handle */
    expect(on_wine(OpenSyncObjectFromNtHandle, &os), STATUS_OBJECT_TYPE_MISMATCH);
    expect(on_wine(OpenKeyedMutexFromNtHandle, &om), STATUS_OBJECT_TYPE_MISMATCH);
    os.hNtHandle = bogus;
    expect(on_wine(OpenSyncObjectFromNtHandle, &os), STATUS_INVALID_HANDLE);
    om.hNtHandle = bogus;
    expect(on_wine(OpenKeyedMutexFromNtHandle, &om), STATUS_INVALID_HANDLE);
    ok(!os.hSyncObject && !om.hKeyedMutex, "refused opens returned %#x %#x\n", os.hSyncObject,
       om.hKeyedMutex);
    stub_nt_opens(FALSE);
    CloseHandle(event);
}

static const struct kmtw_test tests[] = {
    { "setup", test_setup },
    { "local", test_local },
    { "global", test_global },
    { "nt", test_nt },
    { "nt_stub", test_nt_stub },
};

int main(int argc, char **argv)
{
    return kmtw_run("test_fakegdi", tests, ARRAY_SIZE(tests), argc, argv);
}
