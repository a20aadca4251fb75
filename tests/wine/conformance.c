/*
 * The Windows-side conformance suite (see conformance.h).  Every subtest
 * opens what it needs, checks exact NTSTATUS values and handle values, and
 * leaves the software adapter as it found it (checked with its statistics
 * escape).
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

struct kmt_api kmt_api, kmt_wine_api;
const char *kmt_api_via = "?";

#define ENUM_MAX 34                      /* what EnumAdapters2 asks for */
#define HEAP_SIZE 0x10000                /* the base case's existing heap */

unsigned kmt_api_from_module(struct kmt_api *api, HMODULE module, const char *what)
{
    unsigned missing = 0;

    memset(api, 0, sizeof(*api));
#define KMT_FUNC(name, type)                                                        \
    api->name = (NTSTATUS (APIENTRY *)(type *))(void *)GetProcAddress(module, "D3DKMT" #name); \
    if (!ok(api->name != NULL, "%s has no D3DKMT" #name "\n", what))                \
        missing++;
#define KMT_FUNC_CUSTOM(name, type) {                                               \
        FARPROC p_ = GetProcAddress(module, "D3DKMT" #name);                        \
        memcpy(&api->name, &p_, sizeof(p_));                                        \
        if (!ok(p_ != NULL, "%s has no D3DKMT" #name "\n", what))                   \
            missing++;                                                              \
    }
#include "functions.h"
    return missing;
}

void kmt_api_lookup(struct kmt_api *api, HMODULE module)
{
    memset(api, 0, sizeof(*api));
#define KMT_FUNC(name, type) \
    api->name = (NTSTATUS (APIENTRY *)(type *))(void *)GetProcAddress(module, "D3DKMT" #name);
#define KMT_FUNC_CUSTOM(name, type) { \
        FARPROC p_ = GetProcAddress(module, "D3DKMT" #name); \
        memcpy(&api->name, &p_, sizeof(p_)); \
    }
#include "functions.h"
}

/* ---- helpers ---------------------------------------------------------- */

static NTSTATUS query_info(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { 0 };

    q.hAdapter = adapter;
    q.Type = type;
    q.pPrivateDriverData = data;
    q.PrivateDriverDataSize = size;
    return kmt_api.QueryAdapterInfo(&q);
}

static BOOL is_soft_adapter(D3DKMT_HANDLE adapter)
{
    D3DKMT_QUERY_DEVICE_IDS ids = { 0 };

    return !query_info(adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)) &&
           ids.DeviceIds.VendorID == KMT_SOFT_VENDOR_ID && ids.DeviceIds.DeviceID == KMT_SOFT_DEVICE_ID;
}

void kmt_close_adapter(D3DKMT_HANDLE adapter)
{
    D3DKMT_CLOSEADAPTER c = { adapter };

    expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
}

D3DKMT_HANDLE kmt_open_soft_adapter(LUID *luid)
{
    D3DKMT_ADAPTERINFO info[ENUM_MAX];
    D3DKMT_ENUMADAPTERS2 e = { ENUM_MAX, info };
    D3DKMT_HANDLE soft = 0;
    NTSTATUS status;

    status = kmt_api.EnumAdapters2(&e);
    ok(!status, "EnumAdapters2 through %s: %#lx\n", kmt_api_via, (unsigned long)status);
    if (status)
        return 0;
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        if (!soft && is_soft_adapter(info[i].hAdapter)) {
            soft = info[i].hAdapter;
            if (luid)
                *luid = info[i].AdapterLuid;
        } else {
            kmt_close_adapter(info[i].hAdapter);
        }
    }
    ok(soft != 0, "no software adapter among %lu\n", (unsigned long)e.NumAdapters);
    return soft;
}

D3DKMT_HANDLE kmt_create_device(D3DKMT_HANDLE adapter)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = adapter;
    expect_status(kmt_api.CreateDevice(&cd), STATUS_SUCCESS);
    ok(is_local_handle(cd.hDevice), "hDevice %#x\n", cd.hDevice);
    return cd.hDevice;
}

D3DKMT_HANDLE kmt_create_soft_allocation(D3DKMT_HANDLE device, UINT size, D3DGPU_VIRTUAL_ADDRESS *va)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, size, 0, 0 };
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    expect_status(kmt_api.CreateAllocation2(&ca), STATUS_SUCCESS);
    if (va)
        *va = info.GpuVirtualAddress;
    return info.hAllocation;
}

void kmt_destroy_device(D3DKMT_HANDLE device)
{
    D3DKMT_DESTROYDEVICE dd = { device };

    expect_status(kmt_api.DestroyDevice(&dd), STATUS_SUCCESS);
}

KMT_SOFT_ESCAPE kmt_soft_stats(D3DKMT_HANDLE adapter)
{
    KMT_SOFT_ESCAPE data = { 0 };
    D3DKMT_ESCAPE esc = { 0 };

    data.Code = KMT_SOFT_ESCAPE_GET_STATS;
    esc.hAdapter = adapter;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = &data;
    esc.PrivateDriverDataSize = sizeof(data);
    expect_status(kmt_api.Escape(&esc), STATUS_SUCCESS);
    return data;
}

/* The subtest's fixture: the soft adapter and what it held at the start. */
struct fixture {
    D3DKMT_HANDLE adapter, device;
    LUID luid;
    KMT_SOFT_ESCAPE before;
};

static BOOL fixture_open(struct fixture *f, BOOL with_device)
{
    memset(f, 0, sizeof(*f));
    if (!(f->adapter = kmt_open_soft_adapter(&f->luid))) {
        skip("no software adapter through %s\n", kmt_api_via);
        return FALSE;
    }
    f->before = kmt_soft_stats(f->adapter);
    if (with_device && !(f->device = kmt_create_device(f->adapter)))
        return FALSE;
    return TRUE;
}

/* Destroys the device and checks that the adapter is back where it was. */
static void fixture_close(struct fixture *f)
{
    KMT_SOFT_ESCAPE after;

    if (f->device)
        kmt_destroy_device(f->device);
    after = kmt_soft_stats(f->adapter);
    ok(after.Stats.Devices == f->before.Stats.Devices, "devices %llu, were %llu\n",
       after.Stats.Devices, f->before.Stats.Devices);
    ok(after.Stats.Allocations == f->before.Stats.Allocations, "allocations %llu, were %llu\n",
       after.Stats.Allocations, f->before.Stats.Allocations);
    ok(after.Stats.Resources == f->before.Stats.Resources, "resources %llu, were %llu\n",
       after.Stats.Resources, f->before.Stats.Resources);
    kmt_close_adapter(f->adapter);
}

/* ---- adapters --------------------------------------------------------- */

void kmtc_enum_adapters2(void)
{
    D3DKMT_ADAPTERINFO info[ENUM_MAX];
    D3DKMT_ENUMADAPTERS2 e = { 0 };
    D3DKMT_CLOSEADAPTER c = { 0 };
    NTSTATUS status;

    expect_status(kmt_api.EnumAdapters2(NULL), STATUS_INVALID_PARAMETER);

    /* pAdapters NULL: the count to allocate (Windows 11: 34) */
    e.NumAdapters = 5;
    expect_status(kmt_api.EnumAdapters2(&e), STATUS_SUCCESS);
    ok(e.NumAdapters == ENUM_MAX, "NumAdapters %lu\n", (unsigned long)e.NumAdapters);

    /* a buffer with room for none */
    e.NumAdapters = 0;
    e.pAdapters = info;
    expect_status(kmt_api.EnumAdapters2(&e), STATUS_BUFFER_TOO_SMALL);

    memset(info, 0xcc, sizeof(info));
    e.NumAdapters = ENUM_MAX;
    status = kmt_api.EnumAdapters2(&e);
    expect_status(status, STATUS_SUCCESS);
    if (status)
        return;
    ok(e.NumAdapters > 0 && e.NumAdapters <= ENUM_MAX, "NumAdapters %lu\n", (unsigned long)e.NumAdapters);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        ok(is_local_handle(info[i].hAdapter), "adapter %lu: hAdapter %#x\n", (unsigned long)i,
           info[i].hAdapter);
        ok(info[i].AdapterLuid.LowPart || info[i].AdapterLuid.HighPart, "adapter %lu: zero LUID\n",
           (unsigned long)i);
        if (i)
            ok(info[i].hAdapter > info[i - 1].hAdapter, "adapter %lu: hAdapter %#x after %#x\n",
               (unsigned long)i, info[i].hAdapter, info[i - 1].hAdapter);
    }
    /* each handle is the caller's to close, once */
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        c.hAdapter = info[i].hAdapter;
        expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
        expect_status(kmt_api.CloseAdapter(&c), STATUS_INVALID_PARAMETER);
    }
}

void kmtc_enum_adapters_legacy(void)
{
    D3DKMT_ADAPTERINFO info[ENUM_MAX];
    D3DKMT_ENUMADAPTERS2 e2 = { ENUM_MAX, info };
    D3DKMT_ENUMADAPTERS3 e3 = { 0 };
    D3DKMT_ENUMADAPTERS legacy;
    ULONG count2;

    expect_status(kmt_api.EnumAdapters2(&e2), STATUS_SUCCESS);
    count2 = e2.NumAdapters;
    for (ULONG i = 0; i < count2; i++)
        kmt_close_adapter(info[i].hAdapter);

    /* the Windows 7 call: at most 16, same adapters */
    memset(&legacy, 0, sizeof(legacy));
    expect_status(kmt_api.EnumAdapters(&legacy), STATUS_SUCCESS);
    ok(legacy.NumAdapters == (count2 < MAX_ENUM_ADAPTERS ? count2 : MAX_ENUM_ADAPTERS),
       "EnumAdapters: %lu adapters, EnumAdapters2 %lu\n", (unsigned long)legacy.NumAdapters,
       (unsigned long)count2);
    for (ULONG i = 0; i < legacy.NumAdapters; i++) {
        ok(is_local_handle(legacy.Adapters[i].hAdapter), "hAdapter %#x\n", legacy.Adapters[i].hAdapter);
        ok(!memcmp(&legacy.Adapters[i].AdapterLuid, &info[i].AdapterLuid, sizeof(LUID)),
           "adapter %lu: LUIDs differ\n", (unsigned long)i);
        kmt_close_adapter(legacy.Adapters[i].hAdapter);
    }

    /* EnumAdapters3: the count query, reserved filter bits, no filter */
    expect_status(kmt_api.EnumAdapters3(&e3), STATUS_SUCCESS);
    ok(e3.NumAdapters == ENUM_MAX, "NumAdapters %lu\n", (unsigned long)e3.NumAdapters);
    e3.Filter.Value = 1ull << 5;
    e3.NumAdapters = ENUM_MAX;
    e3.pAdapters = info;
    expect_status(kmt_api.EnumAdapters3(&e3), STATUS_INVALID_PARAMETER);
    e3.Filter.Value = 0;
    e3.NumAdapters = 0;
    expect_status(kmt_api.EnumAdapters3(&e3), STATUS_BUFFER_TOO_SMALL);
    e3.NumAdapters = ENUM_MAX;
    expect_status(kmt_api.EnumAdapters3(&e3), STATUS_SUCCESS);
    ok(e3.NumAdapters == count2, "EnumAdapters3: %lu adapters, EnumAdapters2 %lu\n",
       (unsigned long)e3.NumAdapters, (unsigned long)count2);
    for (ULONG i = 0; i < e3.NumAdapters; i++)
        kmt_close_adapter(info[i].hAdapter);
}

void kmtc_open_close(void)
{
    D3DKMT_OPENADAPTERFROMLUID o = { 0 };
    D3DKMT_CLOSEADAPTER c = { 0 };
    D3DKMT_HANDLE first;
    LUID luid;

    if (!(c.hAdapter = kmt_open_soft_adapter(&luid)))
        return;
    kmt_close_adapter(c.hAdapter);

    expect_status(kmt_api.OpenAdapterFromLuid(NULL), STATUS_INVALID_PARAMETER);
    o.AdapterLuid = luid;
    expect_status(kmt_api.OpenAdapterFromLuid(&o), STATUS_SUCCESS);
    ok(is_local_handle(o.hAdapter), "hAdapter %#x\n", o.hAdapter);
    first = o.hAdapter;

    /* open, close, open again: the next value, no immediate reuse */
    c.hAdapter = first;
    expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
    expect_status(kmt_api.OpenAdapterFromLuid(&o), STATUS_SUCCESS);
    ok(o.hAdapter == first + 0x40, "reopened as %#x after %#x\n", o.hAdapter, first);
    c.hAdapter = o.hAdapter;
    expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);

    /* a LUID no adapter has: Windows says STATUS_INVALID_PARAMETER; through
     * the proxy Wine answers LUIDs kmtshim does not know (Wine 8 "opens"
     * any LUID) */
    o.AdapterLuid.LowPart = luid.LowPart ^ 0x5a5a5a5a;
    o.AdapterLuid.HighPart = luid.HighPart ^ 0x1234;
    o.hAdapter = 0xdead;
    {
        D3DKMT_OPENADAPTERFROMLUID w = o;
        NTSTATUS expected = STATUS_INVALID_PARAMETER, status;

        if (kmt_wine_api.OpenAdapterFromLuid && !(expected = kmt_wine_api.OpenAdapterFromLuid(&w))) {
            c.hAdapter = w.hAdapter;
            kmt_wine_api.CloseAdapter(&c);
        }
        status = kmt_api.OpenAdapterFromLuid(&o);
        ok(status == expected, "unknown LUID: %#lx, expected %#lx\n", (unsigned long)status,
           (unsigned long)expected);
        if (!status) {
            c.hAdapter = o.hAdapter;
            expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
        }
    }

    expect_status(kmt_api.CloseAdapter(NULL), STATUS_INVALID_PARAMETER);
    c.hAdapter = 0;
    expect_status(kmt_api.CloseAdapter(&c), STATUS_INVALID_PARAMETER);
    c.hAdapter = first;                  /* stale */
    expect_status(kmt_api.CloseAdapter(&c), STATUS_INVALID_PARAMETER);
}

void kmtc_handle_formats(void)
{
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER c = { 0 };
    D3DKMT_CREATEDEVICE cd = { 0 };
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    /* one handle space: the device comes after the adapter */
    ok(is_local_handle(f.adapter) && is_local_handle(f.device), "adapter %#x, device %#x\n",
       f.adapter, f.device);
    ok(f.device > f.adapter, "device %#x not after adapter %#x\n", f.device, f.adapter);

    /* a handle of the wrong type is rejected like an invalid one */
    dd.hDevice = f.adapter;
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_INVALID_PARAMETER);
    c.hAdapter = f.device;
    expect_status(kmt_api.CloseAdapter(&c), STATUS_INVALID_PARAMETER);
    cd.hAdapter = f.device;
    expect_status(kmt_api.CreateDevice(&cd), STATUS_INVALID_PARAMETER);
    /* a local handle's neighbours are not handles */
    dd.hDevice = f.device | 1;
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_INVALID_PARAMETER);
    dd.hDevice = f.device + 0x40;
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_INVALID_PARAMETER);
    fixture_close(&f);
}

/* ---- QueryAdapterInfo --------------------------------------------------- */

void kmtc_query_adapter_info(void)
{
    static const struct { KMTQUERYADAPTERINFOTYPE type; UINT size; } sizes[] = {
        { KMTQAITYPE_GETSEGMENTSIZE, sizeof(D3DKMT_SEGMENTSIZEINFO) },
        { KMTQAITYPE_CHECKDRIVERUPDATESTATUS, sizeof(BOOL) },
        { KMTQAITYPE_DRIVERVERSION, sizeof(D3DKMT_DRIVERVERSION) },
        { KMTQAITYPE_ADAPTERTYPE, sizeof(D3DKMT_ADAPTERTYPE) },
        { KMTQAITYPE_PHYSICALADAPTERCOUNT, sizeof(UINT) },
        { KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, sizeof(D3DKMT_QUERY_DEVICE_IDS) },
        { KMTQAITYPE_WDDM_2_7_CAPS, sizeof(D3DKMT_WDDM_2_7_CAPS) },
        { KMTQAITYPE_ADAPTERREGISTRYINFO, sizeof(D3DKMT_ADAPTERREGISTRYINFO) },
        { KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER, sizeof(D3DKMT_ADAPTERREGISTRYINFO) },
        { KMTQAITYPE_WDDM_2_9_CAPS, sizeof(D3DKMT_WDDM_2_9_CAPS) },
        { KMTQAITYPE_WDDM_3_0_CAPS, sizeof(D3DKMT_WDDM_3_0_CAPS) },
        { KMTQAITYPE_DRIVERCAPS_EXT, sizeof(D3DKMT_DRIVERCAPS_EXT) },
        { KMTQAITYPE_NODEPERFDATA, sizeof(D3DKMT_NODE_PERFDATA) },
        { KMTQAITYPE_ADAPTERPERFDATA, sizeof(D3DKMT_ADAPTER_PERFDATA) },
        { KMTQAITYPE_ADAPTERPERFDATA_CAPS, sizeof(D3DKMT_ADAPTER_PERFDATACAPS) },
    };
    union {
        BYTE bytes[4096];
        D3DKMT_DRIVERVERSION version;
        D3DKMT_ADAPTERTYPE type;
        D3DKMT_SEGMENTSIZEINFO segments;
        D3DKMT_QUERY_DEVICE_IDS ids;
        UINT count;
    } u;
    struct fixture f;

    if (!fixture_open(&f, FALSE))
        return;
    expect_status(kmt_api.QueryAdapterInfo(NULL), STATUS_INVALID_PARAMETER);

    for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
        memset(&u, 0, sizeof(u));
        ok(query_info(f.adapter, sizes[i].type, &u, sizes[i].size) == (NTSTATUS)STATUS_SUCCESS,
           "type %d, exact size %u: failed\n", sizes[i].type, sizes[i].size);
        ok(query_info(f.adapter, sizes[i].type, &u, sizes[i].size - 1) == (NTSTATUS)STATUS_INVALID_PARAMETER,
           "type %d, size %u (one less): not STATUS_INVALID_PARAMETER\n", sizes[i].type, sizes[i].size - 1);
        ok(query_info(f.adapter, sizes[i].type, &u, sizes[i].size + 1) == (NTSTATUS)STATUS_INVALID_PARAMETER,
           "type %d, size %u (one more): not STATUS_INVALID_PARAMETER\n", sizes[i].type, sizes[i].size + 1);
        ok(query_info(f.adapter, sizes[i].type, NULL, sizes[i].size) == (NTSTATUS)STATUS_INVALID_PARAMETER,
           "type %d, NULL data: not STATUS_INVALID_PARAMETER\n", sizes[i].type);
        ok(query_info(f.adapter, sizes[i].type, &u, 0) == (NTSTATUS)STATUS_INVALID_PARAMETER,
           "type %d, size 0: not STATUS_INVALID_PARAMETER\n", sizes[i].type);
        ok(query_info(0, sizes[i].type, &u, sizes[i].size) == (NTSTATUS)STATUS_INVALID_PARAMETER,
           "type %d, hAdapter 0: not STATUS_INVALID_PARAMETER\n", sizes[i].type);
    }

    /* what the software adapter answers */
    expect_status(query_info(f.adapter, KMTQAITYPE_DRIVERVERSION, &u.version, sizeof(u.version)),
                  STATUS_SUCCESS);
    ok(u.version == KMT_DRIVERVERSION_WDDM_2_7, "driver version %d\n", u.version);
    expect_status(query_info(f.adapter, KMTQAITYPE_ADAPTERTYPE, &u.type, sizeof(u.type)), STATUS_SUCCESS);
    ok(u.type.RenderSupported && u.type.SoftwareDevice && !u.type.DisplaySupported,
       "adapter type %#x\n", u.type.Value);
    expect_status(query_info(f.adapter, KMTQAITYPE_PHYSICALADAPTERCOUNT, &u.count, sizeof(u.count)),
                  STATUS_SUCCESS);
    ok(u.count == 1, "physical adapters %u\n", u.count);
    memset(&u, 0, sizeof(u));
    expect_status(query_info(f.adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &u.ids, sizeof(u.ids)),
                  STATUS_SUCCESS);
    ok(u.ids.DeviceIds.VendorID == KMT_SOFT_VENDOR_ID && u.ids.DeviceIds.DeviceID == KMT_SOFT_DEVICE_ID,
       "ids %04x:%04x\n", u.ids.DeviceIds.VendorID, u.ids.DeviceIds.DeviceID);
    u.ids.PhysicalAdapterIndex = 1;      /* past the count */
    expect_status(query_info(f.adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &u.ids, sizeof(u.ids)),
                  STATUS_INVALID_PARAMETER);
    expect_status(query_info(f.adapter, KMTQAITYPE_GETSEGMENTSIZE, &u.segments, sizeof(u.segments)),
                  STATUS_SUCCESS);
    ok(u.segments.DedicatedVideoMemorySize + u.segments.DedicatedSystemMemorySize +
       u.segments.SharedSystemMemorySize > 0, "no memory in any segment\n");
    fixture_close(&f);
}

/* The registry strings, the later caps and the performance data: the
 * software adapter has a name and no sensors; indexes past the counts are
 * refused. */
void kmtc_query_adapter_info_ext(void)
{
    union {
        D3DKMT_ADAPTERREGISTRYINFO registry;
        D3DKMT_WDDM_2_9_CAPS c29;
        D3DKMT_WDDM_3_0_CAPS c30;
        D3DKMT_DRIVERCAPS_EXT ext;
        D3DKMT_NODE_PERFDATA node;
        D3DKMT_ADAPTER_PERFDATA perf;
        D3DKMT_ADAPTER_PERFDATACAPS caps;
    } u;
    struct fixture f;

    if (!fixture_open(&f, FALSE))
        return;
    memset(&u, 0, sizeof(u));
    expect_status(query_info(f.adapter, KMTQAITYPE_ADAPTERREGISTRYINFO, &u.registry, sizeof(u.registry)),
                  STATUS_SUCCESS);
    ok(u.registry.AdapterString[0] != 0 && u.registry.ChipType[0] != 0, "empty adapter or chip string\n");
    ok(u.registry.BiosString[0] == 0 && u.registry.DacType[0] == 0, "a BIOS or DAC on the software adapter\n");
    u.c29.Value = 0xffffffff;
    expect_status(query_info(f.adapter, KMTQAITYPE_WDDM_2_9_CAPS, &u.c29, sizeof(u.c29)), STATUS_SUCCESS);
    ok(u.c29.Value == 0, "WDDM 2.9 caps %#x: hardware scheduling?\n", u.c29.Value);
    u.c30.Value = 0xffffffff;
    expect_status(query_info(f.adapter, KMTQAITYPE_WDDM_3_0_CAPS, &u.c30, sizeof(u.c30)), STATUS_SUCCESS);
    ok(u.c30.Value == 0, "WDDM 3.0 caps %#x\n", u.c30.Value);
    u.ext.Value = 0xffffffff;
    expect_status(query_info(f.adapter, KMTQAITYPE_DRIVERCAPS_EXT, &u.ext, sizeof(u.ext)), STATUS_SUCCESS);
    ok(u.ext.Value == 0, "DRIVERCAPS_EXT %#x\n", u.ext.Value);

    memset(&u, 0xcc, sizeof(u));
    u.node.NodeOrdinal = 0;
    u.node.PhysicalAdapterIndex = 0;
    expect_status(query_info(f.adapter, KMTQAITYPE_NODEPERFDATA, &u.node, sizeof(u.node)), STATUS_SUCCESS);
    ok(u.node.Frequency == 0 && u.node.MaxFrequency == 0 && u.node.Voltage == 0 && u.node.Reserved == 0,
       "node perf data not zero\n");
    u.node.NodeOrdinal = 1;              /* one engine */
    expect_status(query_info(f.adapter, KMTQAITYPE_NODEPERFDATA, &u.node, sizeof(u.node)),
                  STATUS_INVALID_PARAMETER);
    u.node.NodeOrdinal = 0;
    u.node.PhysicalAdapterIndex = 1;     /* one physical adapter */
    expect_status(query_info(f.adapter, KMTQAITYPE_NODEPERFDATA, &u.node, sizeof(u.node)),
                  STATUS_INVALID_PARAMETER);

    memset(&u, 0xcc, sizeof(u));
    u.perf.PhysicalAdapterIndex = 0;
    expect_status(query_info(f.adapter, KMTQAITYPE_ADAPTERPERFDATA, &u.perf, sizeof(u.perf)), STATUS_SUCCESS);
    ok(u.perf.Temperature == 0 && u.perf.Power == 0 && u.perf.FanRPM == 0 && u.perf.MemoryFrequency == 0,
       "adapter perf data not zero\n");
    u.perf.PhysicalAdapterIndex = 1;
    expect_status(query_info(f.adapter, KMTQAITYPE_ADAPTERPERFDATA, &u.perf, sizeof(u.perf)),
                  STATUS_INVALID_PARAMETER);
    memset(&u, 0xcc, sizeof(u));
    u.caps.PhysicalAdapterIndex = 0;
    expect_status(query_info(f.adapter, KMTQAITYPE_ADAPTERPERFDATA_CAPS, &u.caps, sizeof(u.caps)),
                  STATUS_SUCCESS);
    ok(u.caps.MaxFanRPM == 0 && u.caps.TemperatureMax == 0, "adapter perf caps not zero\n");
    fixture_close(&f);
}

/* ---- QueryAdapterInfo(KMTQAITYPE_QUERYREGISTRY) --------------------------------- */

/* The Khronos Vulkan loader's way (loader_windows.c,
 * windows_read_manifest_from_d3d_adapters): the bare structure asking for
 * REG_MULTI_SZ with TranslatePath, REG_SZ when that call fails, then
 * sizeof(structure) + OutputValueSize once Status says BUFFER_OVERFLOW.
 * run-wine-tests.sh configures the values (KMTSHIM_CONFIG); elsewhere the
 * adapter has none of these names and the row is skipped. */
static D3DDDI_QUERYREGISTRY_INFO *loader_query(D3DKMT_HANDLE adapter, const WCHAR *name, NTSTATUS *first_status)
{
    D3DDDI_QUERYREGISTRY_INFO first, *full;
    UINT size;
    NTSTATUS status;

    memset(&first, 0, sizeof(first));
    first.QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
    first.QueryFlags.TranslatePath = 1;
    first.ValueType = REG_MULTI_SZ;
    lstrcpynW(first.ValueName, name, MAX_PATH);
    status = *first_status = query_info(adapter, KMTQAITYPE_QUERYREGISTRY, &first, sizeof(first));
    if (status != STATUS_SUCCESS) {
        first.ValueType = REG_SZ;
        status = query_info(adapter, KMTQAITYPE_QUERYREGISTRY, &first, sizeof(first));
    }
    expect_status(status, STATUS_SUCCESS);
    if (status != STATUS_SUCCESS || first.Status != D3DDDI_QUERYREGISTRY_STATUS_BUFFER_OVERFLOW)
        return NULL;
    size = sizeof(first) + first.OutputValueSize;
    if (!(full = HeapAlloc(GetProcessHeap(), 0, size)))
        return NULL;
    memset(full, 0xcc, size);
    memcpy(full, &first, sizeof(first));
    expect_status(query_info(adapter, KMTQAITYPE_QUERYREGISTRY, full, size), STATUS_SUCCESS);
    ok(full->Status == D3DDDI_QUERYREGISTRY_STATUS_SUCCESS, "second call: Status %d\n", full->Status);
    ok(full->OutputValueSize == first.OutputValueSize, "second call: size %u, first %u\n",
       (unsigned)full->OutputValueSize, (unsigned)first.OutputValueSize);
    return full;
}

void kmtc_query_registry(void)
{
    static const WCHAR multi[] = L"Z:\\kmtshim\\one.json\0Z:\\kmtshim\\two.json\0";
    static const WCHAR single[] = L"Z:\\kmtshim\\icd.json";
    D3DDDI_QUERYREGISTRY_INFO *info, small;
    NTSTATUS first;
    struct fixture f;

    if (!fixture_open(&f, FALSE))
        return;
    info = loader_query(f.adapter, L"KmtshimConformanceLayers", &first);
    if (!info) {
        skip("the adapter has no KmtshimConformanceLayers value (no KMTSHIM_CONFIG)\n");
        fixture_close(&f);
        return;
    }
    /* REG_MULTI_SZ: the first try fits, two strings and the list's NUL */
    expect_status(first, STATUS_SUCCESS);
    ok(info->ValueType == REG_MULTI_SZ, "type %u\n", (unsigned)info->ValueType);
    ok(info->OutputValueSize == sizeof(multi) && !memcmp(info->OutputString, multi, sizeof(multi)),
       "multi-string: %u bytes\n", (unsigned)info->OutputValueSize);
    HeapFree(GetProcessHeap(), 0, info);

    /* REG_SZ: the REG_MULTI_SZ try is refused, the REG_SZ one overflows */
    info = loader_query(f.adapter, L"KmtshimConformanceDriver", &first);
    expect_status(first, STATUS_INVALID_PARAMETER);
    ok(info != NULL, "no value\n");
    if (info) {
        ok(info->ValueType == REG_SZ, "type %u\n", (unsigned)info->ValueType);
        ok(info->OutputValueSize == sizeof(single) && !memcmp(info->OutputString, single, sizeof(single)),
           "string: %u bytes\n", (unsigned)info->OutputValueSize);
        HeapFree(GetProcessHeap(), 0, info);
    }

    /* a DWORD comes back in the structure itself */
    memset(&small, 0, sizeof(small));
    small.QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
    small.ValueType = REG_DWORD;
    lstrcpynW(small.ValueName, L"KmtshimConformanceDword", MAX_PATH);
    expect_status(query_info(f.adapter, KMTQAITYPE_QUERYREGISTRY, &small, sizeof(small)), STATUS_SUCCESS);
    ok(small.Status == D3DDDI_QUERYREGISTRY_STATUS_SUCCESS && small.OutputValueSize == 4 &&
       small.OutputDword == 0x1234, "dword: Status %d, size %u, %#x\n", small.Status, (unsigned)small.OutputValueSize,
       (unsigned)small.OutputDword);

    /* an unknown name: success, Status FAIL; bad input: refused */
    lstrcpynW(small.ValueName, L"KmtshimNoSuchValue", MAX_PATH);
    small.ValueType = REG_SZ;
    expect_status(query_info(f.adapter, KMTQAITYPE_QUERYREGISTRY, &small, sizeof(small)), STATUS_SUCCESS);
    ok(small.Status == D3DDDI_QUERYREGISTRY_STATUS_FAIL, "unknown name: Status %d\n", small.Status);
    expect_status(query_info(f.adapter, KMTQAITYPE_QUERYREGISTRY, &small, sizeof(small) - 1),
                  STATUS_INVALID_PARAMETER);
    expect_status(query_info(f.adapter, KMTQAITYPE_QUERYREGISTRY, NULL, sizeof(small)), STATUS_INVALID_PARAMETER);
    small.QueryType = D3DDDI_QUERYREGISTRY_MAX;
    expect_status(query_info(f.adapter, KMTQAITYPE_QUERYREGISTRY, &small, sizeof(small)),
                  STATUS_INVALID_PARAMETER);
    fixture_close(&f);
}

/* ---- QueryVideoMemoryInfo -------------------------------------------------- */

static NTSTATUS query_budget(D3DKMT_HANDLE adapter, HANDLE process, UINT group, UINT physical,
                             D3DKMT_QUERYVIDEOMEMORYINFO *out)
{
    memset(out, 0, sizeof(*out));
    out->hProcess = process;
    out->hAdapter = adapter;
    out->MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)group;
    out->PhysicalAdapterIndex = physical;
    return kmt_api.QueryVideoMemoryInfo(out);
}

NTSTATUS create_soft_allocation(D3DKMT_HANDLE device, UINT64 size, D3DKMT_HANDLE *out)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, size, 0, 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    status = kmt_api.CreateAllocation(&ca);
    *out = info.hAllocation;
    return status;
}

static NTSTATUS destroy_allocations(D3DKMT_HANDLE device, const D3DKMT_HANDLE *list, UINT count)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    da.phAllocationList = list;
    da.AllocationCount = count;
    return kmt_api.DestroyAllocation(&da);
}

void kmtc_video_memory(void)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q, q2;
    D3DKMT_HANDLE alloc;
    HANDLE process, dup;
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    expect_status(kmt_api.QueryVideoMemoryInfo(NULL), STATUS_INVALID_PARAMETER);

    for (UINT group = 0; group <= D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL; group++) {
        ok(query_budget(f.adapter, NULL, group, 0, &q) == (NTSTATUS)STATUS_SUCCESS, "group %u failed\n", group);
        ok(q.Budget >= q.AvailableForReservation, "group %u: budget %llu < available %llu\n", group,
           q.Budget, q.AvailableForReservation);
        ok(q.CurrentUsage <= q.Budget, "group %u: usage %llu > budget %llu\n", group, q.CurrentUsage,
           q.Budget);
    }
    expect_status(query_budget(f.adapter, NULL, D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL + 1, 0, &q),
                  STATUS_INVALID_PARAMETER);
    expect_status(query_budget(f.adapter, NULL, 0, 1, &q), STATUS_INVALID_PARAMETER);
    expect_status(query_budget(0, NULL, 0, 0, &q), STATUS_INVALID_PARAMETER);
    {
        /* a handle nobody here has, in kmtshim's index range (kmtshim
         * answers) and in Wine's (Wine's to answer through the proxy) */
        D3DKMT_HANDLE wines = (f.adapter + 0x40000) & ~0x20000000u;
        NTSTATUS expected = STATUS_INVALID_PARAMETER;

        expect_status(query_budget(f.adapter + 0x40000, NULL, 0, 0, &q), STATUS_INVALID_PARAMETER);
        if (kmt_wine_api.QueryVideoMemoryInfo) {
            D3DKMT_QUERYVIDEOMEMORYINFO w = { 0 };
            w.hAdapter = wines;
            expected = kmt_wine_api.QueryVideoMemoryInfo(&w);
        }
        expect_status(query_budget(wines, NULL, 0, 0, &q), expected);
    }

    /* hProcess: the calling process, however named */
    expect_status(query_budget(f.adapter, NULL, 0, 0, &q), STATUS_SUCCESS);
    expect_status(query_budget(f.adapter, GetCurrentProcess(), 0, 0, &q2), STATUS_SUCCESS);
    ok(q2.Budget == q.Budget, "pseudo-handle: budget %llu, NULL %llu\n", q2.Budget, q.Budget);
    process = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, GetCurrentProcessId());
    ok(process != NULL, "OpenProcess failed: %lu\n", GetLastError());
    expect_status(query_budget(f.adapter, process, 0, 0, &q2), STATUS_SUCCESS);
    ok(q2.Budget == q.Budget && q2.CurrentUsage == q.CurrentUsage,
       "real handle: budget %llu usage %llu, NULL: %llu %llu\n", q2.Budget, q2.CurrentUsage,
       q.Budget, q.CurrentUsage);
    ok(DuplicateHandle(GetCurrentProcess(), GetCurrentProcess(), GetCurrentProcess(), &dup, 0, FALSE,
                       DUPLICATE_SAME_ACCESS), "DuplicateHandle failed\n");
    expect_status(query_budget(f.adapter, dup, 0, 0, &q2), STATUS_SUCCESS);
    CloseHandle(dup);
    CloseHandle(process);
    /* a process handle without query rights: ACCESS_DENIED, however made */
    process = OpenProcess(SYNCHRONIZE, FALSE, GetCurrentProcessId());
    ok(process != NULL, "OpenProcess(SYNCHRONIZE) failed: %lu\n", GetLastError());
    expect_status(query_budget(f.adapter, process, 0, 0, &q2), STATUS_ACCESS_DENIED);
    CloseHandle(process);
    ok(DuplicateHandle(GetCurrentProcess(), GetCurrentProcess(), GetCurrentProcess(), &dup,
                       PROCESS_VM_READ | SYNCHRONIZE, FALSE, 0), "DuplicateHandle failed\n");
    expect_status(query_budget(f.adapter, dup, 0, 0, &q2), STATUS_ACCESS_DENIED);
    CloseHandle(dup);
    process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
    ok(process != NULL, "OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION) failed: %lu\n", GetLastError());
    expect_status(query_budget(f.adapter, process, 0, 0, &q2), STATUS_SUCCESS);
    CloseHandle(process);
    /* a valid handle of another type: INVALID_HANDLE */
    dup = CreateEventW(NULL, FALSE, FALSE, NULL);
    ok(dup != NULL, "CreateEvent failed\n");
    expect_status(query_budget(f.adapter, dup, 0, 0, &q2), STATUS_INVALID_HANDLE);
    CloseHandle(dup);
    process = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, GetCurrentProcessId());
    ok(process != NULL, "OpenProcess failed: %lu\n", GetLastError());
    CloseHandle(process);

    /* not a process handle: checked before the adapter */
    expect_status(query_budget(f.adapter, (HANDLE)(ULONG_PTR)0xdeadbeef, 0, 0, &q2), STATUS_INVALID_HANDLE);
    expect_status(query_budget(0, (HANDLE)(ULONG_PTR)0xdeadbeef, 0, 0, &q2), STATUS_INVALID_HANDLE);
    expect_status(query_budget(f.adapter, process, 0, 0, &q2), STATUS_INVALID_HANDLE);  /* closed */

    /* usage follows allocations, byte for byte */
    expect_status(query_budget(f.adapter, NULL, 0, 0, &q), STATUS_SUCCESS);
    expect_status(create_soft_allocation(f.device, 0x10000, &alloc), STATUS_SUCCESS);
    expect_status(query_budget(f.adapter, NULL, 0, 0, &q2), STATUS_SUCCESS);
    ok(q2.CurrentUsage == q.CurrentUsage + 0x10000, "usage %llu after 64 KiB, was %llu\n",
       q2.CurrentUsage, q.CurrentUsage);
    expect_status(destroy_allocations(f.device, &alloc, 1), STATUS_SUCCESS);
    expect_status(query_budget(f.adapter, NULL, 0, 0, &q2), STATUS_SUCCESS);
    ok(q2.CurrentUsage == q.CurrentUsage, "usage %llu after destroy, was %llu\n", q2.CurrentUsage,
       q.CurrentUsage);
    fixture_close(&f);
}

/* ---- devices ------------------------------------------------------------ */

void kmtc_devices(void)
{
    D3DKMT_CREATEDEVICE cd;
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_HANDLE alloc;
    struct fixture f;

    if (!fixture_open(&f, FALSE))
        return;
    expect_status(kmt_api.CreateDevice(NULL), STATUS_INVALID_PARAMETER);
    memset(&cd, 0, sizeof(cd));
    expect_status(kmt_api.CreateDevice(&cd), STATUS_INVALID_PARAMETER);    /* hAdapter 0 */
    cd.hAdapter = f.adapter;
    cd.Flags.Reserved = 1;
    expect_status(kmt_api.CreateDevice(&cd), STATUS_INVALID_PARAMETER);

    /* the legacy outputs come back NULL and 0, whatever was there */
    memset(&cd, 0xcc, sizeof(cd));
    memset(&cd.Flags, 0, sizeof(cd.Flags));
    cd.hAdapter = f.adapter;
    expect_status(kmt_api.CreateDevice(&cd), STATUS_SUCCESS);
    ok(is_local_handle(cd.hDevice), "hDevice %#x\n", cd.hDevice);
    ok(!cd.pCommandBuffer && !cd.CommandBufferSize, "command buffer %p/%u\n", cd.pCommandBuffer,
       cd.CommandBufferSize);
    ok(!cd.pAllocationList && !cd.AllocationListSize, "allocation list %p/%u\n", cd.pAllocationList,
       cd.AllocationListSize);
    ok(!cd.pPatchLocationList && !cd.PatchLocationListSize, "patch list %p/%u\n",
       cd.pPatchLocationList, cd.PatchLocationListSize);
    ok(kmt_soft_stats(f.adapter).Stats.Devices == f.before.Stats.Devices + 1, "the miniport has no new device\n");

    expect_status(kmt_api.DestroyDevice(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_INVALID_PARAMETER);    /* hDevice 0 */
    dd.hDevice = cd.hDevice;
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_SUCCESS);
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_INVALID_PARAMETER);

    /* a device outlives the adapter handle it was created from */
    {
        D3DKMT_OPENADAPTERFROMLUID o = { f.luid, 0 };
        D3DKMT_CLOSEADAPTER c = { 0 };

        expect_status(kmt_api.OpenAdapterFromLuid(&o), STATUS_SUCCESS);
        cd.hAdapter = o.hAdapter;
        expect_status(kmt_api.CreateDevice(&cd), STATUS_SUCCESS);
        c.hAdapter = o.hAdapter;
        expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
        expect_status(create_soft_allocation(cd.hDevice, 4096, &alloc), STATUS_SUCCESS);
        ok(is_local_handle(alloc), "hAllocation %#x\n", alloc);
        /* destroying the device destroys what was created on it */
        dd.hDevice = cd.hDevice;
        expect_status(kmt_api.DestroyDevice(&dd), STATUS_SUCCESS);
        expect_status(destroy_allocations(cd.hDevice, &alloc, 1), STATUS_INVALID_PARAMETER);
    }
    fixture_close(&f);
}

/* ---- CreateAllocation: windows-semantics.md's table ----------------------- */

/* The base case: a standard existing-heap allocation over a 64 KiB buffer. */
struct base_case {
    D3DKMT_CREATEALLOCATION ca;
    D3DKMT_CREATESTANDARDALLOCATION standard;
    D3DDDI_ALLOCATIONINFO info[2];
    D3DDDI_ALLOCATIONINFO2 info2[2];
};

static void *heap;

static void base_case_init(struct base_case *b, D3DKMT_HANDLE device)
{
    memset(b, 0, sizeof(*b));
    b->standard.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
    b->standard.ExistingHeapData.Size = HEAP_SIZE;
    b->info[0].pSystemMem = heap;
    b->info[1].pSystemMem = heap;
    b->info2[0].pSystemMem = heap;
    b->ca.hDevice = device;
    b->ca.Flags.ExistingSysMem = 1;
    b->ca.Flags.StandardAllocation = 1;
    b->ca.pStandardAllocation = &b->standard;
    b->ca.NumAllocations = 1;
    b->ca.pAllocationInfo = b->info;
    b->ca.hPrivateRuntimeResourceHandle = (HANDLE)(ULONG_PTR)0x1234;
}

/* Destroys what a successful row created. */
static void base_case_cleanup(struct base_case *b, D3DKMT_HANDLE device)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    if (b->ca.hResource) {
        da.hResource = b->ca.hResource;
    } else {
        da.phAllocationList = &b->info[0].hAllocation;
        da.AllocationCount = 1;
    }
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
}

/* One row: change one thing, expect one status. */
#define ROW(change, expected) do {                                                  \
        struct base_case b_;                                                        \
        NTSTATUS s_;                                                                \
        base_case_init(&b_, f.device);                                              \
        { struct base_case *b = &b_; change; }                                      \
        s_ = kmt_api.CreateAllocation(&b_.ca);                                      \
        ok(s_ == (NTSTATUS)(expected), "row \"%s\": %#lx, expected %#lx\n", #change,          \
           (unsigned long)s_, (unsigned long)(expected));                           \
        if (!s_)                                                                    \
            base_case_cleanup(&b_, f.device);                                       \
    } while (0)

static const BYTE const_driver_data[6] = { 1, 2, 3, 4, 5, 6 };

void kmtc_create_allocation(void)
{
    D3DKMT_CREATEALLOCATION zero = { 0 };
    BYTE driver_data[6] = { 1, 2, 3, 4, 5, 6 }, runtime_data[4] = { 9, 8, 7, 6 };
    struct base_case b;
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    heap = VirtualAlloc(NULL, HEAP_SIZE, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
    ok(heap != NULL, "VirtualAlloc failed\n");

    expect_status(kmt_api.CreateAllocation(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CreateAllocation(&zero), STATUS_INVALID_PARAMETER);

    /* base */
    base_case_init(&b, f.device);
    expect_status(kmt_api.CreateAllocation(&b.ca), STATUS_SUCCESS);
    ok(is_local_handle(b.info[0].hAllocation), "hAllocation %#x\n", b.info[0].hAllocation);
    ok(b.ca.hResource == 0, "hResource %#x\n", b.ca.hResource);
    ok(b.ca.hGlobalShare == 0, "hGlobalShare %#x\n", b.ca.hGlobalShare);
    ok(b.ca.hPrivateRuntimeResourceHandle == (HANDLE)(ULONG_PTR)0x1234, "runtime handle %p\n",
       b.ca.hPrivateRuntimeResourceHandle);
    base_case_cleanup(&b, f.device);

    /* base through CreateAllocation2 and D3DDDI_ALLOCATIONINFO2 */
    base_case_init(&b, f.device);
    b.ca.pAllocationInfo2 = b.info2;
    b.info2[0].GpuVirtualAddress = 0xdeadbeef;
    expect_status(kmt_api.CreateAllocation2(&b.ca), STATUS_SUCCESS);
    ok(is_local_handle(b.info2[0].hAllocation), "hAllocation %#x\n", b.info2[0].hAllocation);
    ok(b.ca.hResource == 0 && b.ca.hGlobalShare == 0, "hResource %#x, hGlobalShare %#x\n",
       b.ca.hResource, b.ca.hGlobalShare);
    b.info[0].hAllocation = b.info2[0].hAllocation;
    base_case_cleanup(&b, f.device);

    ROW((b->info[0].pPrivateDriverData = driver_data, b->info[0].PrivateDriverDataSize = 6), STATUS_SUCCESS);
    /* private driver data is input: in read-only memory (a static const
     * array, a PAGE_READONLY page) the call succeeds and nothing is written */
    ROW((b->info[0].pPrivateDriverData = (void *)const_driver_data, b->info[0].PrivateDriverDataSize = 6),
        STATUS_SUCCESS);
    {
        BYTE *ro = VirtualAlloc(NULL, 0x1000, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
        DWORD old;

        ok(ro != NULL, "VirtualAlloc failed\n");
        memcpy(ro, driver_data, sizeof(driver_data));
        ok(VirtualProtect(ro, 0x1000, PAGE_READONLY, &old), "VirtualProtect failed\n");
        ROW((b->info[0].pPrivateDriverData = ro, b->info[0].PrivateDriverDataSize = 6), STATUS_SUCCESS);
        ROW((b->ca.pPrivateRuntimeData = ro, b->ca.PrivateRuntimeDataSize = 6), STATUS_SUCCESS);
        ok(!memcmp(ro, driver_data, sizeof(driver_data)), "read-only private data changed\n");
        VirtualFree(ro, 0, MEM_RELEASE);
    }
    ROW((b->ca.pPrivateRuntimeData = runtime_data, b->ca.PrivateRuntimeDataSize = 4), STATUS_SUCCESS);
    ROW(b->ca.PrivateDriverDataSize = 64, STATUS_INVALID_PARAMETER);
    ROW(b->ca.hDevice = 0, STATUS_INVALID_PARAMETER);
    ROW(b->ca.hResource = 0x1f0fe3c0, STATUS_INVALID_HANDLE);
    ROW(b->ca.NumAllocations = 0, STATUS_INVALID_PARAMETER);
    ROW(b->ca.NumAllocations = 2, STATUS_INVALID_PARAMETER);
    ROW(b->standard.Type = 0, STATUS_INVALID_PARAMETER);
    ROW(b->info[0].pSystemMem = NULL, STATUS_INVALID_PARAMETER);
    ROW(b->standard.ExistingHeapData.Size = HEAP_SIZE - 0x800, STATUS_INVALID_PARAMETER);
    ROW(b->ca.Flags.ExistingSysMem = 0, STATUS_INVALID_PARAMETER);
    ROW(b->ca.Flags.StandardAllocation = 0, STATUS_INVALID_PARAMETER);
    ROW(b->ca.Flags.CreateShared = 1, STATUS_INVALID_PARAMETER);
    ROW((b->ca.Flags.CreateResource = 1, b->ca.hResource = 0x1f0fe3c0), STATUS_INVALID_HANDLE);
    ROW((b->ca.Flags.CreateResource = 1, b->ca.NumAllocations = 0), STATUS_INVALID_PARAMETER);
    ROW(b->ca.pAllocationInfo = NULL, STATUS_INVALID_PARAMETER);
    ROW(b->ca.pStandardAllocation = NULL, STATUS_INVALID_PARAMETER);

    /* The heap must be committed memory, as Windows probes and locks it: a
     * heap whose last page is only reserved (PROT_NONE under Wine) is
     * refused, and taken once that page is committed. */
    {
        BYTE *part = VirtualAlloc(NULL, HEAP_SIZE, MEM_RESERVE, PAGE_NOACCESS);

        ok(part != NULL, "VirtualAlloc(MEM_RESERVE) failed\n");
        ok(VirtualAlloc(part, HEAP_SIZE - 0x1000, MEM_COMMIT, PAGE_READWRITE) == part, "commit failed\n");
        ROW(b->info[0].pSystemMem = part, STATUS_INVALID_PARAMETER);
        ok(VirtualAlloc(part + HEAP_SIZE - 0x1000, 0x1000, MEM_COMMIT, PAGE_READWRITE) != NULL,
           "commit of the last page failed\n");
        ROW(b->info[0].pSystemMem = part, STATUS_SUCCESS);
        VirtualFree(part, 0, MEM_RELEASE);
    }

    /* A refused call hands out no handle: across refused and successful
     * creates (local and global handles alike) each new handle is the
     * previous one + 0x40. */
    {
        BYTE *part = VirtualAlloc(NULL, HEAP_SIZE, MEM_RESERVE, PAGE_NOACCESS);
        D3DKMT_HANDLE prev = 0, prev_global = 0;

        ok(part != NULL, "VirtualAlloc(MEM_RESERVE) failed\n");
        for (unsigned i = 0; i < 4; i++) {
            base_case_init(&b, f.device);
            b.info[0].pSystemMem = part;                  /* not committed: refused */
            b.ca.Flags.CreateResource = i & 1;
            b.ca.Flags.CreateShared = i & 1;
            expect_status(kmt_api.CreateAllocation(&b.ca), STATUS_INVALID_PARAMETER);
            base_case_init(&b, f.device);
            b.ca.Flags.CreateResource = i & 1;
            b.ca.Flags.CreateShared = i & 1;
            expect_status(kmt_api.CreateAllocation(&b.ca), STATUS_SUCCESS);
            if (i & 1) {
                ok(!prev || b.ca.hResource == prev + 0x40, "create %u: hResource %#x after %#x\n", i,
                   b.ca.hResource, prev);
                ok(!prev_global || b.ca.hGlobalShare == prev_global + 0x40,
                   "create %u: hGlobalShare %#x after %#x\n", i, b.ca.hGlobalShare, prev_global);
                prev_global = b.ca.hGlobalShare;
                prev = b.ca.hResource;
            }
            ok(!prev || b.info[0].hAllocation == prev + 0x40, "create %u: hAllocation %#x after %#x\n", i,
               b.info[0].hAllocation, prev);
            prev = b.info[0].hAllocation;
            base_case_cleanup(&b, f.device);
        }
        VirtualFree(part, 0, MEM_RELEASE);
    }

    /* CreateResource: the resource's handle, then its allocation's */
    base_case_init(&b, f.device);
    b.ca.Flags.CreateResource = 1;
    expect_status(kmt_api.CreateAllocation(&b.ca), STATUS_SUCCESS);
    ok(is_local_handle(b.ca.hResource), "hResource %#x\n", b.ca.hResource);
    ok(b.info[0].hAllocation == b.ca.hResource + 0x40, "hAllocation %#x, hResource %#x\n",
       b.info[0].hAllocation, b.ca.hResource);
    ok(b.ca.hGlobalShare == 0, "hGlobalShare %#x\n", b.ca.hGlobalShare);
    {
        /* allocations cannot be added to it later */
        struct base_case more;
        base_case_init(&more, f.device);
        more.ca.hResource = b.ca.hResource;
        expect_status(kmt_api.CreateAllocation(&more.ca), STATUS_INVALID_PARAMETER);
    }
    base_case_cleanup(&b, f.device);

    /* CreateResource + CreateShared: a global share handle */
    base_case_init(&b, f.device);
    b.ca.Flags.CreateResource = 1;
    b.ca.Flags.CreateShared = 1;
    expect_status(kmt_api.CreateAllocation(&b.ca), STATUS_SUCCESS);
    ok(is_local_handle(b.ca.hResource), "hResource %#x\n", b.ca.hResource);
    ok(is_global_handle(b.ca.hGlobalShare), "hGlobalShare %#x\n", b.ca.hGlobalShare);
    base_case_cleanup(&b, f.device);

    VirtualFree(heap, 0, MEM_RELEASE);
    fixture_close(&f);
}

/* Driver-private allocations of the software adapter, with a resource. */
void kmtc_create_resource(void)
{
    KMT_SOFT_ALLOCATION_DESC desc[3];
    D3DDDI_ALLOCATIONINFO info[3];
    D3DKMT_CREATEALLOCATION ca;
    D3DKMT_DESTROYALLOCATION da = { 0 };
    KMT_SOFT_ESCAPE stats;
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    memset(info, 0, sizeof(info));
    for (unsigned i = 0; i < 3; i++) {
        KMT_SOFT_ALLOCATION_DESC d = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION,
                                       (i + 1) * 4096, 0, 0 };
        desc[i] = d;
        info[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    memset(&ca, 0, sizeof(ca));
    ca.hDevice = f.device;
    ca.Flags.CreateResource = 1;
    ca.NumAllocations = 3;
    ca.pAllocationInfo = info;
    expect_status(kmt_api.CreateAllocation(&ca), STATUS_SUCCESS);
    ok(is_local_handle(ca.hResource), "hResource %#x\n", ca.hResource);
    for (unsigned i = 0; i < 3; i++)
        ok(info[i].hAllocation == ca.hResource + 0x40 * (i + 1), "allocation %u: %#x, resource %#x\n",
           i, info[i].hAllocation, ca.hResource);
    stats = kmt_soft_stats(f.adapter);
    ok(stats.Stats.Allocations == f.before.Stats.Allocations + 3, "allocations %llu\n",
       stats.Stats.Allocations);
    ok(stats.Stats.BytesAllocated == f.before.Stats.BytesAllocated + 6 * 4096, "bytes %llu\n",
       stats.Stats.BytesAllocated);

    /* a bad magic is the driver's to refuse: nothing is left behind */
    desc[0].Magic = 0;
    ca.hResource = 0;
    ok(kmt_api.CreateAllocation(&ca) != STATUS_SUCCESS, "bad private data accepted\n");
    stats = kmt_soft_stats(f.adapter);
    ok(stats.Stats.Allocations == f.before.Stats.Allocations + 3, "allocations %llu after a failed create\n",
       stats.Stats.Allocations);

    da.hDevice = f.device;
    da.hResource = info[0].hAllocation - 0x40;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
    fixture_close(&f);
}

/* ---- DestroyAllocation ------------------------------------------------------ */

static NTSTATUS create_soft_resource(D3DKMT_HANDLE device, UINT count, D3DKMT_HANDLE *resource,
                                     D3DKMT_HANDLE *allocs)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, 4096, 0, 0 };
    D3DDDI_ALLOCATIONINFO info[4];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    memset(info, 0, sizeof(info));
    for (UINT i = 0; i < count; i++) {
        info[i].pPrivateDriverData = &desc;
        info[i].PrivateDriverDataSize = sizeof(desc);
    }
    ca.hDevice = device;
    ca.Flags.CreateResource = 1;
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    status = kmt_api.CreateAllocation(&ca);
    *resource = ca.hResource;
    for (UINT i = 0; i < count; i++)
        allocs[i] = info[i].hAllocation;
    return status;
}

void kmtc_destroy_allocation(void)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };
    D3DKMT_DESTROYALLOCATION2 da2 = { 0 };
    D3DKMT_HANDLE alloc, allocs[2], resource;
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    expect_status(kmt_api.DestroyAllocation(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.DestroyAllocation2(NULL), STATUS_INVALID_PARAMETER);

    /* nothing to do */
    da.hDevice = f.device;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
    da.hDevice = 0;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_INVALID_PARAMETER);

    /* a count without a list */
    da.hDevice = f.device;
    da.AllocationCount = 1;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_INVALID_PARAMETER);

    /* a valid list, then the same list again */
    expect_status(create_soft_allocation(f.device, 4096, &alloc), STATUS_SUCCESS);
    expect_status(destroy_allocations(f.device, &alloc, 1), STATUS_SUCCESS);
    expect_status(destroy_allocations(f.device, &alloc, 1), STATUS_INVALID_PARAMETER);

    /* DestroyAllocation2 */
    expect_status(create_soft_allocation(f.device, 4096, &alloc), STATUS_SUCCESS);
    da2.hDevice = f.device;
    da2.phAllocationList = &alloc;
    da2.AllocationCount = 1;
    expect_status(kmt_api.DestroyAllocation2(&da2), STATUS_SUCCESS);
    expect_status(kmt_api.DestroyAllocation2(&da2), STATUS_INVALID_PARAMETER);
    da2.Flags.SystemUseOnly = 1;
    expect_status(create_soft_allocation(f.device, 4096, &alloc), STATUS_SUCCESS);
    expect_status(kmt_api.DestroyAllocation2(&da2), STATUS_INVALID_PARAMETER);
    da2.Flags.Value = 0;
    da2.Flags.SynchronousDestroy = 1;
    expect_status(kmt_api.DestroyAllocation2(&da2), STATUS_SUCCESS);

    /* one allocation of a resource: the resource survives */
    expect_status(create_soft_resource(f.device, 2, &resource, allocs), STATUS_SUCCESS);
    expect_status(destroy_allocations(f.device, &allocs[0], 1), STATUS_SUCCESS);
    ok(kmt_soft_stats(f.adapter).Stats.Resources == f.before.Stats.Resources + 1, "resource gone\n");
    memset(&da, 0, sizeof(da));
    da.hDevice = f.device;
    da.hResource = resource;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_INVALID_PARAMETER);
    /* the resource took its other allocation with it */
    expect_status(destroy_allocations(f.device, &allocs[1], 1), STATUS_INVALID_PARAMETER);

    /* hResource with count 0 frees every allocation of the resource */
    expect_status(create_soft_resource(f.device, 2, &resource, allocs), STATUS_SUCCESS);
    da.hResource = resource;
    da.AllocationCount = 0;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
    expect_status(destroy_allocations(f.device, allocs, 1), STATUS_INVALID_PARAMETER);
    expect_status(destroy_allocations(f.device, allocs + 1, 1), STATUS_INVALID_PARAMETER);
    ok(kmt_soft_stats(f.adapter).Stats.Allocations == f.before.Stats.Allocations, "allocations left\n");

    /* with hResource a count is refused, with or without a list */
    expect_status(create_soft_resource(f.device, 1, &resource, allocs), STATUS_SUCCESS);
    da.hResource = resource;
    da.phAllocationList = allocs;
    da.AllocationCount = 1;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_INVALID_PARAMETER);
    da.phAllocationList = NULL;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_INVALID_PARAMETER);
    ok(kmt_soft_stats(f.adapter).Stats.Resources == f.before.Stats.Resources + 1, "resource gone\n");

    /* count 0 with a stale list left in a reused descriptor: the list is
     * not looked at and the resource goes, through both entry points */
    da.phAllocationList = allocs;
    da.AllocationCount = 0;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
    expect_status(destroy_allocations(f.device, allocs, 1), STATUS_INVALID_PARAMETER);
    ok(kmt_soft_stats(f.adapter).Stats.Resources == f.before.Stats.Resources, "resource leaked\n");
    expect_status(create_soft_resource(f.device, 2, &resource, allocs), STATUS_SUCCESS);
    memset(&da2, 0, sizeof(da2));
    da2.hDevice = f.device;
    da2.hResource = resource;
    da2.phAllocationList = (const D3DKMT_HANDLE *)(ULONG_PTR)0xdead0000;   /* never read */
    expect_status(kmt_api.DestroyAllocation2(&da2), STATUS_SUCCESS);
    expect_status(kmt_api.DestroyAllocation2(&da2), STATUS_INVALID_PARAMETER);
    expect_status(destroy_allocations(f.device, allocs + 1, 1), STATUS_INVALID_PARAMETER);
    ok(kmt_soft_stats(f.adapter).Stats.Resources == f.before.Stats.Resources, "resource leaked\n");
    ok(kmt_soft_stats(f.adapter).Stats.Allocations == f.before.Stats.Allocations, "allocations left\n");
    fixture_close(&f);
}

/* ---- CPU access ------------------------------------------------------------- */

void kmtc_lock(void)
{
    D3DKMT_LOCK2 lock2 = { 0 };
    D3DKMT_UNLOCK2 unlock2 = { 0 };
    D3DKMT_LOCK lock = { 0 };
    D3DKMT_UNLOCK unlock = { 0 };
    D3DKMT_HANDLE alloc;
    BYTE *p;
    BOOL same = TRUE;
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    expect_status(kmt_api.Lock2(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.Unlock2(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.Lock(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.Unlock(NULL), STATUS_INVALID_PARAMETER);
    expect_status(create_soft_allocation(f.device, 8192, &alloc), STATUS_SUCCESS);

    /* Lock2: write through the mapping, then read back through a new one */
    lock2.hDevice = f.device;
    lock2.hAllocation = alloc;
    expect_status(kmt_api.Lock2(&lock2), STATUS_SUCCESS);
    ok(lock2.pData != NULL, "no pointer\n");
    if (lock2.pData) {
        p = lock2.pData;
        for (unsigned i = 0; i < 8192; i++)
            p[i] = (BYTE)(i * 7 + 1);
    }
    unlock2.hDevice = f.device;
    unlock2.hAllocation = alloc;
    expect_status(kmt_api.Unlock2(&unlock2), STATUS_SUCCESS);
    lock2.pData = NULL;
    expect_status(kmt_api.Lock2(&lock2), STATUS_SUCCESS);
    if ((p = lock2.pData)) {
        for (unsigned i = 0; i < 8192; i++)
            same &= p[i] == (BYTE)(i * 7 + 1);
        ok(same, "the data did not survive unlock and lock\n");
    }
    expect_status(kmt_api.Unlock2(&unlock2), STATUS_SUCCESS);

    /* reserved Lock2 flags, bad handles */
    lock2.Flags.Value = 1;
    expect_status(kmt_api.Lock2(&lock2), STATUS_INVALID_PARAMETER);
    lock2.Flags.Value = 0;
    lock2.hAllocation = 0;
    expect_status(kmt_api.Lock2(&lock2), STATUS_INVALID_PARAMETER);
    lock2.hAllocation = f.device;          /* wrong type */
    expect_status(kmt_api.Lock2(&lock2), STATUS_INVALID_PARAMETER);

    /* the Windows 7 pair */
    lock.hDevice = f.device;
    lock.hAllocation = alloc;
    expect_status(kmt_api.Lock(&lock), STATUS_SUCCESS);
    ok(lock.pData != NULL && ((BYTE *)lock.pData)[8191] == (BYTE)(8191 * 7 + 1), "Lock: %p\n", lock.pData);
    unlock.hDevice = f.device;
    unlock.NumAllocations = 1;
    expect_status(kmt_api.Unlock(&unlock), STATUS_INVALID_PARAMETER);      /* no list */
    unlock.phAllocations = &alloc;
    expect_status(kmt_api.Unlock(&unlock), STATUS_SUCCESS);
    lock.NumPages = 1;                     /* pages without a page list */
    expect_status(kmt_api.Lock(&lock), STATUS_INVALID_PARAMETER);

    expect_status(destroy_allocations(f.device, &alloc, 1), STATUS_SUCCESS);
    lock2.hAllocation = alloc;             /* destroyed */
    expect_status(kmt_api.Lock2(&lock2), STATUS_INVALID_PARAMETER);
    fixture_close(&f);
}

/* ---- Escape ------------------------------------------------------------------ */

void kmtc_escape(void)
{
    D3DKMT_ESCAPE esc = { 0 };
    KMT_SOFT_ESCAPE stats;
    struct fixture f;

    if (!fixture_open(&f, TRUE))
        return;
    expect_status(kmt_api.Escape(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.Escape(&esc), STATUS_INVALID_PARAMETER);        /* zeroed */
    stats = kmt_soft_stats(f.adapter);
    ok(stats.Stats.Devices == f.before.Stats.Devices + 1, "devices %llu, were %llu\n",
       stats.Stats.Devices, f.before.Stats.Devices);
    esc.hAdapter = f.adapter;
    esc.pPrivateDriverData = &stats;
    esc.PrivateDriverDataSize = 0;
    expect_status(kmt_api.Escape(&esc), STATUS_INVALID_PARAMETER);        /* no data */
    fixture_close(&f);
}

/* ---- NULL descriptors and NULL arrays: Windows' NTSTATUS, never a crash ------ */

void kmtc_null_descriptors(void)
{
    D3DKMT_QUERYADAPTERINFO qai = { 0 };
    D3DKMT_ESCAPE esc = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_ENUMADAPTERS2 e2 = { 4, NULL };
    struct fixture f;

    /* every implemented function that takes a descriptor, NULL descriptor */
#define KMT_FUNC(name, type) \
    ok(kmt_api.name(NULL) == (NTSTATUS)STATUS_INVALID_PARAMETER, "D3DKMT" #name "(NULL) through %s\n", kmt_api_via);
#define KMT_FUNC_CUSTOM(name, type)
#include "functions.h"

    /* descriptors at addresses no caller's buffer has */
    expect_status(kmt_api.CreateDevice((D3DKMT_CREATEDEVICE *)(ULONG_PTR)0x10), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.EnumAdapters2((D3DKMT_ENUMADAPTERS2 *)(ULONG_PTR)0xfff0), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.Lock2((D3DKMT_LOCK2 *)~(ULONG_PTR)0xff), STATUS_INVALID_PARAMETER);

    if (!fixture_open(&f, TRUE))
        return;
    /* NULL arrays inside valid descriptors */
    expect_status(kmt_api.EnumAdapters2(&e2), STATUS_SUCCESS);            /* count query */
    qai.hAdapter = f.adapter;
    qai.Type = KMTQAITYPE_DRIVERVERSION;
    qai.PrivateDriverDataSize = sizeof(D3DKMT_DRIVERVERSION);
    expect_status(kmt_api.QueryAdapterInfo(&qai), STATUS_INVALID_PARAMETER);
    esc.hAdapter = f.adapter;
    esc.PrivateDriverDataSize = sizeof(KMT_SOFT_ESCAPE);
    expect_status(kmt_api.Escape(&esc), STATUS_INVALID_PARAMETER);
    ca.hDevice = f.device;
    ca.NumAllocations = 1;
    expect_status(kmt_api.CreateAllocation(&ca), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CreateAllocation2(&ca), STATUS_INVALID_PARAMETER);
    fixture_close(&f);
}
