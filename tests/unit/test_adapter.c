/*
 * Adapters and devices through the public API, on the software adapter:
 * EnumAdapters/2/3, OpenAdapterFromLuid, CloseAdapter, CreateDevice,
 * DestroyDevice, with Windows' status codes and handle values.
 */
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define FIRST_HANDLE KMT_FIRST_HANDLE
#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)

static NTSTATUS close_adapter(D3DKMT_HANDLE h)
{
    D3DKMT_CLOSEADAPTER c = { h };
    return D3DKMTCloseAdapter(&c);
}

static NTSTATUS destroy_device(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYDEVICE d = { h };
    return D3DKMTDestroyDevice(&d);
}

static NTSTATUS create_device(D3DKMT_HANDLE adapter, D3DKMT_HANDLE *device)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    NTSTATUS status;

    cd.hAdapter = adapter;
    status = D3DKMTCreateDevice(&cd);
    *device = cd.hDevice;
    return status;
}

/* One EnumAdapters2 over a 16-entry buffer; the soft adapter only. */
static D3DKMT_ADAPTERINFO enum_one(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };

    memset(info, 0, sizeof(info));
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    return info[0];
}

static bool luid_eq(LUID a, LUID b)
{
    return a.LowPart == b.LowPart && a.HighPart == b.HighPart;
}

/* A standalone 4 KiB allocation on the soft adapter. */
static NTSTATUS create_one_allocation(D3DKMT_HANDLE device, D3DKMT_HANDLE *out)
{
    return kmt_test_create_allocations(device, 1, 4096, out, NULL);
}

/* ---- EnumAdapters2 --------------------------------------------------------------- */

START_TEST(enum2_null_desc)
{
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTEnumAdapters2(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_count_query_gives_34)
{
    D3DKMT_ENUMADAPTERS2 e = { 0, NULL };

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 34);       /* Windows 11's maximum */
    e.NumAdapters = 5;                           /* the input count does not matter */
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 34);
    ck_assert_ptr_null(e.pAdapters);
    /* no handle was opened */
    ck_assert_uint_eq(enum_one().hAdapter, FIRST_HANDLE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_zero_capacity)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 0, info };

    kmt_test_use_miniport("soft");
    memset(info, 0xcc, sizeof(info));
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_BUFFER_TOO_SMALL);
    ck_assert_uint_eq(info[0].hAdapter, 0xccccccccu);   /* nothing written */
    /* and nothing opened: the next handle is still the first */
    ck_assert_uint_eq(enum_one().hAdapter, FIRST_HANDLE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_garbage_buffer)
{
    D3DKMT_ENUMADAPTERS2 e = { 4, (D3DKMT_ADAPTERINFO *)(void *)0x10 };

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_INVALID_PARAMETER);
    e.pAdapters = GARBAGE_PTR;
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_fills_fresh_handles)
{
    D3DKMT_ADAPTERINFO a, b;

    kmt_test_use_miniport("soft");
    a = enum_one();
    ck_assert_uint_eq(a.hAdapter, FIRST_HANDLE);
    ck_assert_local_handle(a.hAdapter);
    ck_assert(a.AdapterLuid.LowPart || a.AdapterLuid.HighPart);
    ck_assert_uint_eq(a.NumOfSources, 1);           /* one virtual output */
    ck_assert_int_eq(a.bPrecisePresentRegionsPreferred, FALSE);

    /* every call opens new handles to the same adapter */
    b = enum_one();
    ck_assert_uint_eq(b.hAdapter, a.hAdapter + 0x40);
    ck_assert(luid_eq(a.AdapterLuid, b.AdapterLuid));
    ck_assert_uint_eq(KmtLiveObjectCount(), 3);    /* the adapter + 2 handles */
    ck_assert_status(close_adapter(a.hAdapter), STATUS_SUCCESS);
    ck_assert_status(close_adapter(b.hAdapter), STATUS_SUCCESS);
    ck_assert_uint_eq(KmtLiveObjectCount(), 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_exact_capacity)
{
    D3DKMT_ADAPTERINFO info[2];
    D3DKMT_ENUMADAPTERS2 e = { 1, info };

    kmt_test_use_miniport("soft");
    memset(info, 0xcc, sizeof(info));
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].hAdapter, FIRST_HANDLE);
    ck_assert_uint_eq(info[1].hAdapter, 0xccccccccu);   /* past the count: untouched */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_luid_stable_across_restart)
{
    D3DKMT_ADAPTERINFO a, b;

    kmt_test_use_miniport("soft");
    a = enum_one();
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    /* the old handle died with the process state */
    ck_assert_status(close_adapter(a.hAdapter), STATUS_INVALID_PARAMETER);
    b = enum_one();
    ck_assert(luid_eq(a.AdapterLuid, b.AdapterLuid));
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum2_luid_identical_in_two_processes)
{
    D3DKMT_ADAPTERINFO mine;
    LUID theirs;
    int fds[2], status;
    pid_t pid;

    kmt_test_use_miniport("soft");
    /* fork before the first D3DKMT call: both processes start fresh */
    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        D3DKMT_ADAPTERINFO info[16];
        D3DKMT_ENUMADAPTERS2 e = { 16, info };
        int ok = D3DKMTEnumAdapters2(&e) == STATUS_SUCCESS && e.NumAdapters == 1;

        if (ok)
            ok = write(fds[1], &info[0].AdapterLuid, sizeof(LUID)) == sizeof(LUID);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], &theirs, sizeof(theirs)), (int)sizeof(theirs));
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    mine = enum_one();
    ck_assert(luid_eq(mine.AdapterLuid, theirs));
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- EnumAdapters (legacy) and EnumAdapters3 ------------------------------------------- */

START_TEST(enum_legacy)
{
    D3DKMT_ENUMADAPTERS e;
    D3DKMT_ADAPTERINFO two;

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters(NULL), STATUS_INVALID_PARAMETER);
    memset(&e, 0xcc, sizeof(e));
    ck_assert_status(D3DKMTEnumAdapters(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_le(e.NumAdapters, MAX_ENUM_ADAPTERS);
    ck_assert_uint_eq(e.Adapters[0].hAdapter, FIRST_HANDLE);
    ck_assert_uint_eq(e.Adapters[0].NumOfSources, 1);
    two = enum_one();
    ck_assert_uint_eq(two.hAdapter, FIRST_HANDLE + 0x40);
    ck_assert(luid_eq(e.Adapters[0].AdapterLuid, two.AdapterLuid));
    ck_assert_status(close_adapter(e.Adapters[0].hAdapter), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enum3_filters)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS3 e;

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters3(NULL), STATUS_INVALID_PARAMETER);

    memset(&e, 0, sizeof(e));
    ck_assert_status(D3DKMTEnumAdapters3(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 34);

    /* reserved filter bits */
    e.Filter.Value = 1ull << 2;
    e.NumAdapters = 4;
    e.pAdapters = info;
    ck_assert_status(D3DKMTEnumAdapters3(&e), STATUS_INVALID_PARAMETER);
    e.Filter.Value = 1ull << 63;
    ck_assert_status(D3DKMTEnumAdapters3(&e), STATUS_INVALID_PARAMETER);

    /* the software adapter is not compute-only: listed either way */
    e.Filter.Value = 0;
    ck_assert_status(D3DKMTEnumAdapters3(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].hAdapter, FIRST_HANDLE);
    e.Filter.IncludeComputeOnly = 1;
    e.NumAdapters = 4;
    ck_assert_status(D3DKMTEnumAdapters3(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].hAdapter, FIRST_HANDLE + 0x40);

    e.NumAdapters = 0;
    ck_assert_status(D3DKMTEnumAdapters3(&e), STATUS_BUFFER_TOO_SMALL);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- OpenAdapterFromLuid ------------------------------------------------------------------ */

START_TEST(open_from_luid_bad_input)
{
    D3DKMT_OPENADAPTERFROMLUID o = { { 0, 0 }, 0x1234 };
    D3DKMT_ADAPTERINFO a;

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTOpenAdapterFromLuid(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenAdapterFromLuid(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hAdapter, 0x1234);      /* untouched on failure */
    a = enum_one();
    o.AdapterLuid = a.AdapterLuid;
    o.AdapterLuid.LowPart ^= 1;                 /* near miss */
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o), STATUS_INVALID_PARAMETER);
    o.AdapterLuid = a.AdapterLuid;
    o.AdapterLuid.HighPart ^= 0x100;
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_from_luid_gives_new_handle)
{
    D3DKMT_OPENADAPTERFROMLUID o = { { 0, 0 }, 0 };
    D3DKMT_HANDLE device;
    D3DKMT_ADAPTERINFO a;

    kmt_test_use_miniport("soft");
    a = enum_one();
    ck_assert_status(close_adapter(a.hAdapter), STATUS_SUCCESS);
    o.AdapterLuid = a.AdapterLuid;
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o), STATUS_SUCCESS);
    ck_assert_uint_eq(o.hAdapter, a.hAdapter + 0x40);
    ck_assert_local_handle(o.hAdapter);
    /* the handle works like an enumerated one */
    ck_assert_status(create_device(o.hAdapter, &device), STATUS_SUCCESS);
    ck_assert_uint_eq(device, o.hAdapter + 0x40);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(close_adapter(o.hAdapter), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_from_luid_twice_gives_two_handles)
{
    D3DKMT_OPENADAPTERFROMLUID o1 = { { 0, 0 }, 0 }, o2;
    D3DKMT_ADAPTERINFO a;

    kmt_test_use_miniport("soft");
    a = enum_one();
    o1.AdapterLuid = a.AdapterLuid;
    o2 = o1;
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o1), STATUS_SUCCESS);
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o2), STATUS_SUCCESS);
    ck_assert_uint_eq(o1.hAdapter, a.hAdapter + 0x40);
    ck_assert_uint_eq(o2.hAdapter, a.hAdapter + 0x80);
    /* closing one leaves the others usable */
    ck_assert_status(close_adapter(o1.hAdapter), STATUS_SUCCESS);
    ck_assert_status(close_adapter(o1.hAdapter), STATUS_INVALID_PARAMETER);
    ck_assert_status(close_adapter(o2.hAdapter), STATUS_SUCCESS);
    ck_assert_status(close_adapter(a.hAdapter), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- CloseAdapter ----------------------------------------------------------------------- */

START_TEST(close_adapter_bad_input)
{
    D3DKMT_HANDLE adapter, device;

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTCloseAdapter(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCloseAdapter(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(close_adapter(0), STATUS_INVALID_PARAMETER);
    ck_assert_status(close_adapter(0xdeadbeef), STATUS_INVALID_PARAMETER);
    ck_assert_status(close_adapter(FIRST_HANDLE | 500u << 6), STATUS_INVALID_PARAMETER);
    device = kmt_test_create_device(&adapter);
    /* a device handle is the wrong type: refused, and the device lives on */
    ck_assert_status(close_adapter(device), STATUS_INVALID_PARAMETER);
    ck_assert_status(close_adapter(adapter | 2), STATUS_INVALID_PARAMETER);
    ck_assert_status(close_adapter(adapter + 0x40000000u), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(close_adapter(adapter), STATUS_SUCCESS);
    ck_assert_status(close_adapter(adapter), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(closed_adapter_handle_is_dead)
{
    D3DKMT_HANDLE adapter = 0, device;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(close_adapter(adapter), STATUS_SUCCESS);
    ck_assert_status(create_device(adapter, &device), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), 1);      /* the adapter itself */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(devices_outlive_closed_adapter)
{
    D3DKMT_HANDLE adapter, device, alloc;
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };

    kmt_test_use_miniport("soft");
    /* vkd3d-proton's pattern: open, create the device, close at once */
    device = kmt_test_create_device(&adapter);
    ck_assert_status(close_adapter(adapter), STATUS_SUCCESS);
    ck_assert_status(create_one_allocation(device, &alloc), STATUS_SUCCESS);
    ck_assert_local_handle(alloc);
    lock.hDevice = unlock.hDevice = device;
    lock.hAllocation = unlock.hAllocation = alloc;
    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    memset(lock.pData, 0x5a, 4096);
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- CreateDevice ------------------------------------------------------------------------ */

START_TEST(create_device_bad_input)
{
    D3DKMT_HANDLE adapter, device, other;
    D3DKMT_CREATEDEVICE cd = { 0 };

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTCreateDevice(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateDevice(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(cd.hDevice, 0);
    ck_assert_status(create_device(0xdeadbeef, &other), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_device(FIRST_HANDLE | 77u << 6, &other), STATUS_INVALID_PARAMETER);
    device = kmt_test_create_device(&adapter);
    /* a device is not an adapter */
    ck_assert_status(create_device(device, &other), STATUS_INVALID_PARAMETER);
    /* reserved flag bits */
    cd.hAdapter = adapter;
    memset(&cd.Flags, 0xff, sizeof(cd.Flags));
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), 3);      /* adapter, its handle, one device */
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_device_handle_follows_adapter)
{
    D3DKMT_HANDLE adapter, d1, d2;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_uint_eq(adapter, FIRST_HANDLE);
    ck_assert_status(create_device(adapter, &d1), STATUS_SUCCESS);
    ck_assert_uint_eq(d1, adapter + 0x40);           /* as in a fresh Windows process */
    ck_assert_status(create_device(adapter, &d2), STATUS_SUCCESS);
    ck_assert_uint_eq(d2, adapter + 0x80);
    ck_assert_status(destroy_device(d1), STATUS_SUCCESS);
    ck_assert_status(destroy_device(d2), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_device_legacy_outputs_cleared)
{
    D3DKMT_CREATEDEVICE cd;

    kmt_test_use_miniport("soft");
    memset(&cd, 0xcc, sizeof(cd));
    cd.pAdapter = NULL;
    cd.hAdapter = kmt_test_open_adapter();
    memset(&cd.Flags, 0, sizeof(cd.Flags));
    cd.Flags.LegacyMode = 1;
    cd.Flags.RequestVSync = 1;
    cd.Flags.DisableGpuTimeout = 1;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ck_assert_uint_eq(cd.hDevice, cd.hAdapter + 0x40);
    ck_assert_ptr_null(cd.pCommandBuffer);
    ck_assert_uint_eq(cd.CommandBufferSize, 0);
    ck_assert_ptr_null(cd.pAllocationList);
    ck_assert_uint_eq(cd.AllocationListSize, 0);
    ck_assert_ptr_null(cd.pPatchLocationList);
    ck_assert_uint_eq(cd.PatchLocationListSize, 0);
    ck_assert_status(destroy_device(cd.hDevice), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_device_counts_in_miniport)
{
    D3DKMT_HANDLE adapter, d[3];

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (int i = 0; i < 3; i++)
        ck_assert_status(create_device(adapter, &d[i]), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 3);
    ck_assert_status(destroy_device(d[1]), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 2);
    KmtProcessShutdown();           /* destroys the other two */
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
}
END_TEST

/* ---- DestroyDevice ------------------------------------------------------------------------- */

START_TEST(destroy_device_bad_input)
{
    D3DKMT_HANDLE adapter, device;

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTDestroyDevice(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyDevice(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_device(0), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_device(0xdeadbeef), STATUS_INVALID_PARAMETER);
    device = kmt_test_create_device(&adapter);
    /* an adapter is not a device: refused, and the adapter still works */
    ck_assert_status(destroy_device(adapter), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 1);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(destroy_device(device), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroyed_device_refuses_calls)
{
    D3DKMT_HANDLE adapter, device, alloc;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(create_one_allocation(device, &alloc), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_device_reclaims_children)
{
    D3DKMT_HANDLE adapter, device, allocs[4], res;
    KMT_SOFT_ESCAPE st;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, allocs, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_test_create_allocations(device, 2, 8192, allocs + 2, &res), STATUS_SUCCESS);
    st = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(st.Stats.Allocations, 4);
    ck_assert_uint_eq(st.Stats.Resources, 1);
    ck_assert_uint_eq(KmtLiveObjectCount(), 2 + 1 + 4 + 1);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    st = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(st.Stats.Devices, 0);
    ck_assert_uint_eq(st.Stats.Allocations, 0);
    ck_assert_uint_eq(st.Stats.Resources, 0);
    ck_assert_uint_eq(st.Stats.BytesAllocated, 0);
    ck_assert_uint_eq(st.Stats.OpenBindings, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), 2);      /* adapter and its handle */
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- the Linux extras ---------------------------------------------------------------------- */

START_TEST(adapter_description)
{
    KMT_ADAPTER_DESCRIPTION d;
    D3DKMT_HANDLE adapter, device;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    memset(&d, 0xcc, sizeof(d));
    ck_assert_status(KmtQueryAdapterDescription(adapter, &d), STATUS_SUCCESS);
    ck_assert_str_eq(d.Miniport, "soft");
    ck_assert_str_eq(d.DriverName, "soft");
    ck_assert_str_eq(d.LocationId, "soft0");
    ck_assert_uint_gt(strlen(d.Description), 0);
    ck_assert_status(KmtQueryAdapterDescription(adapter, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtQueryAdapterDescription(0, &d), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtQueryAdapterDescription(device, &d), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* KmtOwnsHandle: exactly the live handles, of every type, and asking never
 * starts the process. */
START_TEST(owns_handle)
{
    D3DKMT_HANDLE adapter, device, alloc;
    D3DKMT_DESTROYALLOCATION da = { 0 };

    kmt_test_use_miniport("soft");
    ck_assert_int_eq(KmtOwnsHandle(FIRST_HANDLE), FALSE);
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);         /* still not started */

    device = kmt_test_create_device(&adapter);
    ck_assert_status(create_one_allocation(device, &alloc), STATUS_SUCCESS);
    ck_assert_int_eq(KmtOwnsHandle(adapter), TRUE);
    ck_assert_int_eq(KmtOwnsHandle(device), TRUE);
    ck_assert_int_eq(KmtOwnsHandle(alloc), TRUE);
    ck_assert_int_eq(KmtOwnsHandle(0), FALSE);
    /* a share handle's instance bits, another generation, a free slot */
    ck_assert_int_eq(KmtOwnsHandle(device | 2), FALSE);
    ck_assert_int_eq(KmtOwnsHandle((device & 0x3fffffffu) | 0x80000000u), FALSE);
    ck_assert_int_eq(KmtOwnsHandle(alloc + 0x40), FALSE);

    da.hDevice = device;
    da.AllocationCount = 1;
    da.phAllocationList = &alloc;
    ck_assert_status(D3DKMTDestroyAllocation(&da), STATUS_SUCCESS);
    ck_assert_int_eq(KmtOwnsHandle(alloc), FALSE);
    ck_assert_int_eq(KmtOwnsHandle(device), TRUE);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_int_eq(KmtOwnsHandle(device), FALSE);
    ck_assert_status(close_adapter(adapter), STATUS_SUCCESS);
    ck_assert_int_eq(KmtOwnsHandle(adapter), FALSE);

    KmtProcessShutdown();
    ck_assert_int_eq(KmtOwnsHandle(FIRST_HANDLE), FALSE);
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
}
END_TEST

START_TEST(shutdown_closes_everything)
{
    D3DKMT_HANDLE adapter, device, allocs[3];

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    enum_one();
    enum_one();
    ck_assert_status(kmt_test_create_allocations(device, 3, 4096, allocs, NULL), STATUS_SUCCESS);
    ck_assert_uint_eq(KmtLiveObjectCount(), 1 + 3 + 1 + 3);
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    /* the process starts afresh: handle values start over */
    ck_assert_uint_eq(enum_one().hAdapter, FIRST_HANDLE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adapter");
    TCase *enum2 = tcase_create("enum2");
    TCase *enums = tcase_create("enum");
    TCase *luid = tcase_create("open_from_luid");
    TCase *close = tcase_create("close");
    TCase *create = tcase_create("create_device");
    TCase *destroy = tcase_create("destroy_device");
    TCase *extras = tcase_create("extras");

    tcase_add_test(enum2, enum2_null_desc);
    tcase_add_test(enum2, enum2_count_query_gives_34);
    tcase_add_test(enum2, enum2_zero_capacity);
    tcase_add_test(enum2, enum2_garbage_buffer);
    tcase_add_test(enum2, enum2_fills_fresh_handles);
    tcase_add_test(enum2, enum2_exact_capacity);
    tcase_add_test(enum2, enum2_luid_stable_across_restart);
    tcase_add_test(enum2, enum2_luid_identical_in_two_processes);
    suite_add_tcase(s, enum2);

    tcase_add_test(enums, enum_legacy);
    tcase_add_test(enums, enum3_filters);
    suite_add_tcase(s, enums);

    tcase_add_test(luid, open_from_luid_bad_input);
    tcase_add_test(luid, open_from_luid_gives_new_handle);
    tcase_add_test(luid, open_from_luid_twice_gives_two_handles);
    suite_add_tcase(s, luid);

    tcase_add_test(close, close_adapter_bad_input);
    tcase_add_test(close, closed_adapter_handle_is_dead);
    tcase_add_test(close, devices_outlive_closed_adapter);
    suite_add_tcase(s, close);

    tcase_add_test(create, create_device_bad_input);
    tcase_add_test(create, create_device_handle_follows_adapter);
    tcase_add_test(create, create_device_legacy_outputs_cleared);
    tcase_add_test(create, create_device_counts_in_miniport);
    suite_add_tcase(s, create);

    tcase_add_test(destroy, destroy_device_bad_input);
    tcase_add_test(destroy, destroyed_device_refuses_calls);
    tcase_add_test(destroy, destroy_device_reclaims_children);
    suite_add_tcase(s, destroy);

    tcase_add_test(extras, adapter_description);
    tcase_add_test(extras, owns_handle);
    tcase_add_test(extras, shutdown_closes_everything);
    suite_add_tcase(s, extras);
    return kmt_test_run(s);
}
