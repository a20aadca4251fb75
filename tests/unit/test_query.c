/*
 * QueryAdapterInfo, QueryVideoMemoryInfo and Escape on the software adapter.
 */
#include <stdbool.h>
#include <sys/sysinfo.h>

#include "test_util.h"

#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)

static NTSTATUS query(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { 0 };

    q.hAdapter = adapter;
    q.Type = type;
    q.pPrivateDriverData = data;
    q.PrivateDriverDataSize = size;
    return D3DKMTQueryAdapterInfo(&q);
}

/* The types answered with a fixed-size structure, and that size. */
static const struct {
    KMTQUERYADAPTERINFOTYPE type;
    UINT size;
} fixed_types[] = {
    { KMTQAITYPE_UMDRIVERNAME, 0x20c },
    { KMTQAITYPE_UMOPENGLINFO, 0x210 },
    { KMTQAITYPE_GETSEGMENTSIZE, 0x18 },
    { KMTQAITYPE_ADAPTERADDRESS, 0x0c },
    { KMTQAITYPE_CHECKDRIVERUPDATESTATUS, 4 },
    { KMTQAITYPE_DRIVERVERSION, 4 },
    { KMTQAITYPE_ADAPTERTYPE, 4 },
    { KMTQAITYPE_ADAPTERTYPE_RENDER, 4 },
    { KMTQAITYPE_PHYSICALADAPTERCOUNT, 4 },
    { KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, 0x1c },
    { KMTQAITYPE_WDDM_2_7_CAPS, 4 },
    { KMTQAITYPE_ADAPTERREGISTRYINFO, 0x820 },
    { KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER, 0x820 },
    { KMTQAITYPE_WDDM_2_9_CAPS, 4 },
    { KMTQAITYPE_WDDM_3_0_CAPS, 4 },
    { KMTQAITYPE_DRIVERCAPS_EXT, 4 },
    { KMTQAITYPE_NODEPERFDATA, 0x40 },
    { KMTQAITYPE_ADAPTERPERFDATA, 0x40 },
    { KMTQAITYPE_ADAPTERPERFDATA_CAPS, 0x28 },
};
#define N_FIXED ((int)(sizeof(fixed_types) / sizeof(fixed_types[0])))

/* A buffer big enough for every type, aligned for any field. */
union qbuf {
    BYTE bytes[0x2000];                 /* twice the largest type, ADAPTERREGISTRYINFO */
    UINT64 align;
};
_Static_assert(sizeof(union qbuf) >= 2 * sizeof(D3DKMT_ADAPTERREGISTRYINFO), "qai_size_one_more asks twice the size");

/* ---- QueryAdapterInfo: sizes, for every fixed-size type --------------------------- */

START_TEST(qai_null_data)
{
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(query(adapter, fixed_types[_i].type, NULL, fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(adapter, fixed_types[_i].type, GARBAGE_PTR, fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(adapter, fixed_types[_i].type, (void *)0x10, fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_size_one_less)
{
    union qbuf buf;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&buf, 0xcc, sizeof(buf));
    ck_assert_status(query(adapter, fixed_types[_i].type, &buf, fixed_types[_i].size - 1),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(buf.bytes[0], 0xcc);           /* nothing written */
    ck_assert_status(query(adapter, fixed_types[_i].type, &buf, 0), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_size_one_more)
{
    union qbuf buf;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&buf, 0, sizeof(buf));
    ck_assert_status(query(adapter, fixed_types[_i].type, &buf, fixed_types[_i].size + 1),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(adapter, fixed_types[_i].type, &buf, 2 * fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_bad_adapter)
{
    union qbuf buf;
    D3DKMT_HANDLE adapter, device;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    memset(&buf, 0, sizeof(buf));
    ck_assert_status(query(0, fixed_types[_i].type, &buf, fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(0xdeadbeef, fixed_types[_i].type, &buf, fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(device, fixed_types[_i].type, &buf, fixed_types[_i].size),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- QueryAdapterInfo: answers ------------------------------------------------------- */

START_TEST(qai_null_desc)
{
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTQueryAdapterInfo(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTQueryAdapterInfo(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_driver_version)
{
    D3DKMT_DRIVERVERSION v = 0;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(query(adapter, KMTQAITYPE_DRIVERVERSION, &v, sizeof(v)), STATUS_SUCCESS);
    ck_assert_int_eq(v, KMT_DRIVERVERSION_WDDM_2_7);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_check_driver_update_status)
{
    BOOL pending = 0x55;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(query(adapter, KMTQAITYPE_CHECKDRIVERUPDATESTATUS, &pending, sizeof(pending)),
                     STATUS_SUCCESS);
    ck_assert_int_eq(pending, FALSE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_adapter_type)
{
    D3DKMT_ADAPTERTYPE t, r;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    t.Value = r.Value = 0xffffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERTYPE, &t, sizeof(t)), STATUS_SUCCESS);
    ck_assert_uint_eq(t.RenderSupported, 1);
    ck_assert_uint_eq(t.SoftwareDevice, 1);
    ck_assert_uint_eq(t.DisplaySupported, 0);
    ck_assert_uint_eq(t.ComputeOnly, 0);
    ck_assert_uint_eq(t.Paravirtualized, 0);
    ck_assert_uint_eq(t.Value, 0x5);                 /* nothing else */
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERTYPE_RENDER, &r, sizeof(r)), STATUS_SUCCESS);
    ck_assert_uint_eq(r.Value, t.Value);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_umd_name_absent)
{
    D3DKMT_UMDFILENAMEINFO info;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    /* No user-mode driver ships for the software adapter. */
    for (int v = KMTUMDVERSION_DX9; v < NUM_KMTUMDVERSIONS; v++) {
        memset(&info, 0xcc, sizeof(info));
        info.Version = v;
        ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERNAME, &info, sizeof(info)),
                         STATUS_OBJECT_NAME_NOT_FOUND);
        ck_assert_uint_eq(info.UmdFileName[0], 0xcccc);   /* untouched */
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_umd_name_bad_version)
{
    D3DKMT_UMDFILENAMEINFO info;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&info, 0, sizeof(info));
    info.Version = NUM_KMTUMDVERSIONS;
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERNAME, &info, sizeof(info)),
                     STATUS_INVALID_PARAMETER);
    info.Version = (KMTUMDVERSION)-1;
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERNAME, &info, sizeof(info)),
                     STATUS_INVALID_PARAMETER);
    info.Version = (KMTUMDVERSION)0x7fffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERNAME, &info, sizeof(info)),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_opengl_info_absent)
{
    D3DKMT_OPENGLINFO info;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&info, 0xcc, sizeof(info));
    /* no OpenGL ICD either: the same answer as a missing UMD name */
    ck_assert_status(query(adapter, KMTQAITYPE_UMOPENGLINFO, &info, sizeof(info)),
                     STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_uint_eq(info.Version, 0xcccccccc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_physical_adapter_count)
{
    UINT count = 77;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(query(adapter, KMTQAITYPE_PHYSICALADAPTERCOUNT, &count, sizeof(count)),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(count, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_physical_adapter_device_ids)
{
    D3DKMT_QUERY_DEVICE_IDS ids;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&ids, 0xcc, sizeof(ids));
    ids.PhysicalAdapterIndex = 0;
    ck_assert_status(query(adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(ids.PhysicalAdapterIndex, 0);
    ck_assert_uint_eq(ids.DeviceIds.VendorID, 0x1414);   /* Microsoft Basic Render Driver */
    ck_assert_uint_eq(ids.DeviceIds.DeviceID, 0x008c);
    ck_assert_uint_eq(ids.DeviceIds.SubVendorID, 0);
    ck_assert_uint_eq(ids.DeviceIds.SubSystemID, 0);
    ck_assert_uint_eq(ids.DeviceIds.RevisionID, 0);
    ck_assert_uint_eq(ids.DeviceIds.BusType, 0);

    ids.PhysicalAdapterIndex = 1;
    ck_assert_status(query(adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)),
                     STATUS_INVALID_PARAMETER);
    ids.PhysicalAdapterIndex = 0xffffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_wddm_2_7_caps)
{
    D3DKMT_WDDM_2_7_CAPS caps;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    caps.Value = 0xffffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_WDDM_2_7_CAPS, &caps, sizeof(caps)), STATUS_SUCCESS);
    /* no hardware scheduling on the software adapter */
    ck_assert_uint_eq(caps.HwSchSupported, 0);
    ck_assert_uint_eq(caps.HwSchEnabled, 0);
    ck_assert_uint_eq(caps.Value, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_segment_size_is_half_of_ram)
{
    D3DKMT_SEGMENTSIZEINFO seg;
    struct sysinfo si;
    D3DKMT_HANDLE adapter;
    UINT64 half, most;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&seg, 0xcc, sizeof(seg));
    ck_assert_status(query(adapter, KMTQAITYPE_GETSEGMENTSIZE, &seg, sizeof(seg)), STATUS_SUCCESS);
    ck_assert_int_eq(sysinfo(&si), 0);
    half = (UINT64)si.totalram * si.mem_unit / 2;
    /* the miniport's segment descriptor holds a SIZE_T: a 32-bit build
     * describes at most SIZE_MAX, in whole pages */
    most = (UINT64)SIZE_MAX & ~(UINT64)0xfff;
    ck_assert_uint_eq(seg.SharedSystemMemorySize, half > most ? most : half);
    ck_assert_uint_eq(seg.DedicatedVideoMemorySize, 0);
    ck_assert_uint_eq(seg.DedicatedSystemMemorySize, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_adapter_address_not_on_a_bus)
{
    D3DKMT_ADAPTERADDRESS addr;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&addr, 0xcc, sizeof(addr));
    /* The software adapter has no PCI location; kmtshim says so rather
     * than inventing one (the notes are silent on Basic Render's answer). */
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERADDRESS, &addr, sizeof(addr)),
                     STATUS_NOT_SUPPORTED);
    ck_assert_uint_eq(addr.BusNumber, 0xcccccccc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_umd_driver_private)
{
    struct {
        KMT_SOFT_UMD_PRIVATE p;
        UINT tail;
    } buf;
    D3DKMT_HANDLE adapter;
    struct sysinfo si;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&buf, 0xcc, sizeof(buf));
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, &buf.p, sizeof(buf.p)),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(buf.p.Magic, KMT_SOFT_ALLOCATION_MAGIC);
    ck_assert_uint_eq(buf.p.Version, KMT_SOFT_ALLOCATION_VERSION);
    ck_assert_uint_eq(buf.p.PageSize, 4096);
    ck_assert_uint_eq(buf.p.NodeCount, 1);
    ck_assert_int_eq(sysinfo(&si), 0);
    ck_assert_uint_eq(buf.p.MaxAllocationSize, (UINT64)si.totalram * si.mem_unit / 2);
    ck_assert_uint_eq(buf.tail, 0xcccccccc);
    /* The size of the driver's private answer is the driver's contract, not
     * the kernel's: the software miniport wants at least its structure and
     * takes a bigger buffer, leaving the rest alone. */
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, &buf, sizeof(buf.p) - 1),
                     STATUS_BUFFER_TOO_SMALL);
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, &buf, sizeof(buf)), STATUS_SUCCESS);
    ck_assert_uint_eq(buf.tail, 0xcccccccc);
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, NULL, sizeof(buf.p)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, &buf, 0), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_unknown_types)
{
    static const int types[] = {
        14, KMTQAITYPE_ADAPTERGUID, KMTQAITYPE_FLIPQUEUEINFO, KMTQAITYPE_WDDM_1_2_CAPS,
        64 /* GPUVERSION */, KMTQAITYPE_WDDM_3_1_CAPS, 81, 1000, -1,
    };
    union qbuf buf;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    /* Types kmtshim does not answer: STATUS_NOT_SUPPORTED (checked after
     * the adapter and the buffer, like every other type). */
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        memset(&buf, 0xcc, sizeof(buf));
        ck_assert_status(query(adapter, (KMTQUERYADAPTERINFOTYPE)types[i], &buf, 64),
                         STATUS_NOT_SUPPORTED);
        ck_assert_uint_eq(buf.bytes[0], 0xcc);
        ck_assert_status(query(0, (KMTQUERYADAPTERINFOTYPE)types[i], &buf, 64),
                         STATUS_INVALID_PARAMETER);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_huge_size)
{
    D3DKMT_HANDLE adapter;
    void *big = malloc(256 * 1024);

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_ptr_nonnull(big);
    /* past dxgkrnl's 128 KiB bound for private data */
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, big, 128 * 1024 + 1),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(adapter, KMTQAITYPE_UMDRIVERPRIVATE, big, 0xffffffff),
                     STATUS_INVALID_PARAMETER);
    free(big);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(qai_after_close)
{
    D3DKMT_DRIVERVERSION v;
    D3DKMT_HANDLE adapter;
    D3DKMT_CLOSEADAPTER c;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    c.hAdapter = adapter;
    ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    ck_assert_status(query(adapter, KMTQAITYPE_DRIVERVERSION, &v, sizeof(v)), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- QueryVideoMemoryInfo ---------------------------------------------------------------- */

static NTSTATUS vidmem(D3DKMT_HANDLE adapter, D3DKMT_QUERYVIDEOMEMORYINFO *q)
{
    memset(q, 0, sizeof(*q));
    q->hAdapter = adapter;
    q->MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    return D3DKMTQueryVideoMemoryInfo(q);
}

static UINT64 current_usage(D3DKMT_HANDLE adapter)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q;

    ck_assert_status(vidmem(adapter, &q), STATUS_SUCCESS);
    return q.CurrentUsage;
}

START_TEST(vmi_local_budget)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q;
    D3DKMT_HANDLE adapter;
    struct sysinfo si;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(vidmem(adapter, &q), STATUS_SUCCESS);
    ck_assert_int_eq(sysinfo(&si), 0);
    ck_assert_uint_eq(q.Budget, (UINT64)si.totalram * si.mem_unit / 2);
    ck_assert_uint_ge(q.Budget, q.AvailableForReservation);
    ck_assert_uint_gt(q.AvailableForReservation, 0);
    ck_assert_uint_le(q.CurrentUsage, q.Budget);
    ck_assert_uint_eq(q.CurrentUsage, 0);
    ck_assert_uint_eq(q.CurrentReservation, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(vmi_non_local_is_empty)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&q, 0xcc, sizeof(q));
    q.hProcess = NULL;
    q.hAdapter = adapter;
    q.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL;
    q.PhysicalAdapterIndex = 0;
    /* UMA: all of the software adapter's memory counts as local */
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.Budget, 0);
    ck_assert_uint_eq(q.AvailableForReservation, 0);
    ck_assert_uint_eq(q.CurrentUsage, 0);
    ck_assert_uint_eq(q.CurrentReservation, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(vmi_process_handle)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(NULL), STATUS_INVALID_PARAMETER);
    memset(&q, 0, sizeof(q));
    q.hAdapter = adapter;
    q.hProcess = (HANDLE)(intptr_t)-1;           /* GetCurrentProcess() */
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_gt(q.Budget, 0);
    q.hProcess = (HANDLE)0xdeadbeef;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_HANDLE);
    q.hProcess = (HANDLE)4;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_HANDLE);
    /* the process is checked before the adapter, as on Windows */
    q.hProcess = (HANDLE)0xdeadbeef;
    q.hAdapter = 0;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_HANDLE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(vmi_bad_arguments)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q;
    D3DKMT_HANDLE adapter, device;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    memset(&q, 0, sizeof(q));
    q.hAdapter = 0;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_PARAMETER);
    q.hAdapter = device;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_PARAMETER);
    q.hAdapter = adapter;
    q.MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)2;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_PARAMETER);
    q.MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)-1;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_PARAMETER);
    q.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    q.PhysicalAdapterIndex = 1;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(q.Budget, 0);                  /* outputs untouched on failure */
    q.PhysicalAdapterIndex = 0;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static D3DKMT_HANDLE create_sized(D3DKMT_HANDLE device, UINT64 size)
{
    D3DKMT_HANDLE h;

    ck_assert_status(kmt_test_create_allocations(device, 1, size, &h, NULL), STATUS_SUCCESS);
    return h;
}

static void destroy_list(D3DKMT_HANDLE device, const D3DKMT_HANDLE *list, UINT count)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };

    d.hDevice = device;
    d.phAllocationList = list;
    d.AllocationCount = count;
    ck_assert_status(D3DKMTDestroyAllocation(&d), STATUS_SUCCESS);
}

START_TEST(vmi_usage_follows_allocations)
{
    D3DKMT_HANDLE adapter, device, a[3], res, r[3];
    D3DKMT_DESTROYALLOCATION d = { 0 };
    UINT64 base;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    base = current_usage(adapter);
    ck_assert_uint_eq(base, 0);
    a[0] = create_sized(device, 4096);
    ck_assert_uint_eq(current_usage(adapter), base + 4096);
    a[1] = create_sized(device, 5000);               /* rounded up to 8 KiB */
    ck_assert_uint_eq(current_usage(adapter), base + 4096 + 8192);
    a[2] = create_sized(device, 1);
    ck_assert_uint_eq(current_usage(adapter), base + 4096 + 8192 + 4096);
    ck_assert_status(kmt_test_create_allocations(device, 3, 65536, r, &res), STATUS_SUCCESS);
    ck_assert_uint_eq(current_usage(adapter), base + 16384 + 3 * 65536);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.BytesAllocated, 16384 + 3 * 65536);

    destroy_list(device, &a[1], 1);
    ck_assert_uint_eq(current_usage(adapter), base + 8192 + 3 * 65536);
    d.hDevice = device;
    d.hResource = res;
    ck_assert_status(D3DKMTDestroyAllocation(&d), STATUS_SUCCESS);
    ck_assert_uint_eq(current_usage(adapter), base + 8192);
    destroy_list(device, a, 1);
    destroy_list(device, &a[2], 1);
    ck_assert_uint_eq(current_usage(adapter), base);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(vmi_existing_sysmem_not_counted)
{
    D3DKMT_HANDLE adapter, device, a, b;
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(0x10000);
    void *mem = aligned_alloc(4096, 0x10000);

    kmt_test_use_miniport("soft");
    ck_assert_ptr_nonnull(mem);
    device = kmt_test_create_device(&adapter);
    /* a standard existing-heap allocation */
    std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
    std.ExistingHeapData.Size = 0x10000;
    info.pSystemMem = mem;
    ca.hDevice = device;
    ca.Flags.ExistingSysMem = 1;
    ca.Flags.StandardAllocation = 1;
    ca.pStandardAllocation = &std;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    a = info.hAllocation;
    ck_assert_uint_eq(current_usage(adapter), 0);
    /* a driver-private allocation over existing memory */
    memset(&ca, 0, sizeof(ca));
    memset(&info, 0, sizeof(info));
    info.pSystemMem = mem;
    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.Flags.ExistingSysMem = 1;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    b = info.hAllocation;
    ck_assert_uint_eq(current_usage(adapter), 0);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.BytesAllocated, 0);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 2);
    destroy_list(device, &a, 1);
    destroy_list(device, &b, 1);
    ck_assert_uint_eq(current_usage(adapter), 0);
    kmt_test_shutdown_no_leaks();
    free(mem);
}
END_TEST

START_TEST(vmi_usage_released_by_destroy_device)
{
    D3DKMT_HANDLE adapter, device, a[4];
    D3DKMT_DESTROYDEVICE dd = { 0 };

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(kmt_test_create_allocations(device, 4, 12288, a, NULL), STATUS_SUCCESS);
    ck_assert_uint_eq(current_usage(adapter), 4 * 12288);
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    ck_assert_uint_eq(current_usage(adapter), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- Escape ----------------------------------------------------------------------------------- */

static NTSTATUS escape(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, D3DKMT_ESCAPETYPE type,
                       void *data, UINT size)
{
    D3DKMT_ESCAPE e = { 0 };

    e.hAdapter = adapter;
    e.hDevice = device;
    e.Type = type;
    e.pPrivateDriverData = data;
    e.PrivateDriverDataSize = size;
    return D3DKMTEscape(&e);
}

static KMT_SOFT_ESCAPE stats_request(void)
{
    KMT_SOFT_ESCAPE e;

    memset(&e, 0xcc, sizeof(e));
    e.Code = KMT_SOFT_ESCAPE_GET_STATS;
    e.Reserved = 0;
    return e;
}

START_TEST(escape_zeroed_and_null)
{
    D3DKMT_ESCAPE e;

    kmt_test_use_miniport("soft");
    memset(&e, 0, sizeof(e));
    ck_assert_status(D3DKMTEscape(&e), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTEscape(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTEscape(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_bad_buffer)
{
    KMT_SOFT_ESCAPE req = stats_request();
    D3DKMT_HANDLE adapter;
    void *big = calloc(1, 128 * 1024 + 64);

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_ptr_nonnull(big);
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, NULL, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, GARBAGE_PTR, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, big, 128 * 1024 + 1),
                     STATUS_INVALID_PARAMETER);
    free(big);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_bad_adapter)
{
    KMT_SOFT_ESCAPE req = stats_request();
    D3DKMT_HANDLE adapter, device;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(escape(0, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(0xdeadbeef, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    /* the adapter is checked before the escape type */
    ck_assert_status(escape(0, 0, D3DKMT_ESCAPE_VIDMM, &req, sizeof(req)), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_kernel_types_not_supported)
{
    KMT_SOFT_ESCAPE req = stats_request();
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    /* dxgkrnl's own escapes (VidMm, TDR, scheduler...) are not re-created */
    for (int t = D3DKMT_ESCAPE_VIDMM; t <= D3DKMT_ESCAPE_DEBUG_SNAPSHOT; t++)
        ck_assert_status(escape(adapter, 0, (D3DKMT_ESCAPETYPE)t, &req, sizeof(req)),
                         STATUS_NOT_SUPPORTED);
    ck_assert_status(escape(adapter, 0, (D3DKMT_ESCAPETYPE)1000, &req, sizeof(req)),
                     STATUS_NOT_SUPPORTED);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_device_must_be_a_device)
{
    KMT_SOFT_ESCAPE req = stats_request();
    D3DKMT_HANDLE adapter, device, alloc;
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_ESCAPE e = { 0 };

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &alloc, NULL), STATUS_SUCCESS);
    ck_assert_status(escape(adapter, adapter, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(adapter, alloc, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(adapter, 0xdeadbeef, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(adapter, device, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_SUCCESS);
    /* contexts are not there yet: any hContext is unknown */
    e.hAdapter = adapter;
    e.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    e.pPrivateDriverData = &req;
    e.PrivateDriverDataSize = sizeof(req);
    e.hContext = 0x40000000;
    ck_assert_status(D3DKMTEscape(&e), STATUS_INVALID_PARAMETER);
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    ck_assert_status(escape(adapter, device, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_soft_rejects_bad_requests)
{
    KMT_SOFT_ESCAPE req = stats_request();
    BYTE bigger[sizeof(KMT_SOFT_ESCAPE) + 8];
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    /* the miniport's own rules: exact size, known code */
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req) - 1),
                     STATUS_INVALID_PARAMETER);
    memset(bigger, 0, sizeof(bigger));
    memcpy(bigger, &req, sizeof(req));
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, bigger, sizeof(bigger)),
                     STATUS_INVALID_PARAMETER);
    req.Code = 0;
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    req.Code = 99;
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_stats_are_live_counts)
{
    KMT_SOFT_ESCAPE req = stats_request();
    D3DKMT_HANDLE adapter, device, d2, a[2], r[3], res;
    D3DKMT_CREATEDEVICE cd = { 0 };

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(escape(adapter, 0, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)), STATUS_SUCCESS);
    ck_assert_uint_eq(req.Code, KMT_SOFT_ESCAPE_GET_STATS);
    ck_assert_uint_eq(req.Stats.Devices, 1);
    ck_assert_uint_eq(req.Stats.Allocations, 0);
    ck_assert_uint_eq(req.Stats.Resources, 0);
    ck_assert_uint_eq(req.Stats.BytesAllocated, 0);
    ck_assert_uint_eq(req.Stats.OpenBindings, 0);

    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    d2 = cd.hDevice;
    ck_assert_status(kmt_test_create_allocations(device, 2, 5000, a, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_test_create_allocations(d2, 3, 4096, r, &res), STATUS_SUCCESS);
    req = stats_request();
    ck_assert_status(escape(adapter, d2, D3DKMT_ESCAPE_DRIVERPRIVATE, &req, sizeof(req)), STATUS_SUCCESS);
    ck_assert_uint_eq(req.Stats.Devices, 2);
    ck_assert_uint_eq(req.Stats.Allocations, 5);
    ck_assert_uint_eq(req.Stats.Resources, 1);
    ck_assert_uint_eq(req.Stats.BytesAllocated, 2 * 8192 + 3 * 4096);
    ck_assert_uint_eq(req.Stats.OpenBindings, 5);
    for (unsigned i = 40; i < sizeof(req.Data); i++)
        ck_assert_uint_eq(req.Data[i], 0);           /* the rest is cleared */

    {
        D3DKMT_DESTROYDEVICE dd = { d2 };
        ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    }
    req = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(req.Stats.Devices, 1);
    ck_assert_uint_eq(req.Stats.Allocations, 2);
    ck_assert_uint_eq(req.Stats.Resources, 0);
    ck_assert_uint_eq(req.Stats.BytesAllocated, 2 * 8192);
    ck_assert_uint_eq(req.Stats.OpenBindings, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("query");
    TCase *sizes = tcase_create("qai_sizes");
    TCase *qai = tcase_create("qai");
    TCase *vmi = tcase_create("video_memory");
    TCase *esc = tcase_create("escape");

    tcase_add_loop_test(sizes, qai_null_data, 0, N_FIXED);
    tcase_add_loop_test(sizes, qai_size_one_less, 0, N_FIXED);
    tcase_add_loop_test(sizes, qai_size_one_more, 0, N_FIXED);
    tcase_add_loop_test(sizes, qai_bad_adapter, 0, N_FIXED);
    suite_add_tcase(s, sizes);

    tcase_add_test(qai, qai_null_desc);
    tcase_add_test(qai, qai_driver_version);
    tcase_add_test(qai, qai_check_driver_update_status);
    tcase_add_test(qai, qai_adapter_type);
    tcase_add_test(qai, qai_umd_name_absent);
    tcase_add_test(qai, qai_umd_name_bad_version);
    tcase_add_test(qai, qai_opengl_info_absent);
    tcase_add_test(qai, qai_physical_adapter_count);
    tcase_add_test(qai, qai_physical_adapter_device_ids);
    tcase_add_test(qai, qai_wddm_2_7_caps);
    tcase_add_test(qai, qai_segment_size_is_half_of_ram);
    tcase_add_test(qai, qai_adapter_address_not_on_a_bus);
    tcase_add_test(qai, qai_umd_driver_private);
    tcase_add_test(qai, qai_unknown_types);
    tcase_add_test(qai, qai_huge_size);
    tcase_add_test(qai, qai_after_close);
    suite_add_tcase(s, qai);

    tcase_add_test(vmi, vmi_local_budget);
    tcase_add_test(vmi, vmi_non_local_is_empty);
    tcase_add_test(vmi, vmi_process_handle);
    tcase_add_test(vmi, vmi_bad_arguments);
    tcase_add_test(vmi, vmi_usage_follows_allocations);
    tcase_add_test(vmi, vmi_existing_sysmem_not_counted);
    tcase_add_test(vmi, vmi_usage_released_by_destroy_device);
    suite_add_tcase(s, vmi);

    tcase_add_test(esc, escape_zeroed_and_null);
    tcase_add_test(esc, escape_bad_buffer);
    tcase_add_test(esc, escape_bad_adapter);
    tcase_add_test(esc, escape_kernel_types_not_supported);
    tcase_add_test(esc, escape_device_must_be_a_device);
    tcase_add_test(esc, escape_soft_rejects_bad_requests);
    tcase_add_test(esc, escape_stats_are_live_counts);
    suite_add_tcase(s, esc);
    return kmt_test_run(s);
}
