/*
 * CreateAllocation / CreateAllocation2: Windows' table of rules (see
 * shared/notes/windows-semantics.md), resources, sharing, the software
 * miniport's descriptor rules, and all-or-nothing creation.
 *
 * Most cases run twice (Check loop index 0: CreateAllocation with
 * D3DDDI_ALLOCATIONINFO, 1: CreateAllocation2 with D3DDDI_ALLOCATIONINFO2).
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "test_util.h"

#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)
#define HEAP_SIZE 0x10000u
#define RUNTIME_HANDLE ((HANDLE)(uintptr_t)0x1234567u)

/* Handles of a fresh process: adapter, device, then the first free one. */
#define H_ADAPTER KMT_FIRST_HANDLE
#define H_DEVICE (KMT_FIRST_HANDLE + 0x40)
#define H_NEXT (KMT_FIRST_HANDLE + 0x80)

/* ---- a request in both forms ------------------------------------------------------ */

struct req {
    D3DKMT_CREATEALLOCATION ca;
    D3DKMT_CREATESTANDARDALLOCATION std;
    D3DDDI_ALLOCATIONINFO info[2];
    D3DDDI_ALLOCATIONINFO2 info2[2];
    bool v2;
};

static void *heap;                 /* the base case's existing memory */
static D3DKMT_HANDLE adapter, device;
static unsigned live_at_start;

static void setup(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_uint_eq(adapter, H_ADAPTER);
    ck_assert_uint_eq(device, H_DEVICE);
    heap = aligned_alloc(4096, HEAP_SIZE);
    ck_assert_ptr_nonnull(heap);
    memset(heap, 0, HEAP_SIZE);
    live_at_start = KmtLiveObjectCount();
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
    free(heap);
}

static void set_sysmem(struct req *r, UINT i, const void *p)
{
    r->info[i].pSystemMem = p;
    r->info2[i].pSystemMem = p;
}

static void set_private(struct req *r, UINT i, void *p, UINT size)
{
    r->info[i].pPrivateDriverData = p;
    r->info[i].PrivateDriverDataSize = size;
    r->info2[i].pPrivateDriverData = p;
    r->info2[i].PrivateDriverDataSize = size;
}

/* The base case of the notes: one standard existing-heap allocation. */
static void base(struct req *r, bool v2)
{
    memset(r, 0, sizeof(*r));
    r->v2 = v2;
    r->std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
    r->std.ExistingHeapData.Size = HEAP_SIZE;
    set_sysmem(r, 0, heap);
    r->info[0].hAllocation = r->info2[0].hAllocation = 0xcccccccc;
    r->ca.hDevice = device;
    r->ca.Flags.ExistingSysMem = 1;
    r->ca.Flags.StandardAllocation = 1;
    r->ca.pStandardAllocation = &r->std;
    r->ca.NumAllocations = 1;
    if (v2)
        r->ca.pAllocationInfo2 = r->info2;
    else
        r->ca.pAllocationInfo = r->info;
    r->ca.hPrivateRuntimeResourceHandle = RUNTIME_HANDLE;
}

static NTSTATUS submit(struct req *r)
{
    return r->v2 ? D3DKMTCreateAllocation2(&r->ca) : D3DKMTCreateAllocation(&r->ca);
}

static D3DKMT_HANDLE out_handle(const struct req *r, UINT i)
{
    return r->v2 ? r->info2[i].hAllocation : r->info[i].hAllocation;
}

/* After a refused call: no miniport object, no core object, no output. */
static void assert_nothing_created(const struct req *r)
{
    KMT_SOFT_ESCAPE st = kmt_test_soft_stats(adapter);

    ck_assert_uint_eq(st.Stats.Allocations, 0);
    ck_assert_uint_eq(st.Stats.Resources, 0);
    ck_assert_uint_eq(st.Stats.BytesAllocated, 0);
    ck_assert_uint_eq(st.Stats.OpenBindings, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live_at_start);
    if (r)
        ck_assert_uint_eq(out_handle(r, 0), 0xcccccccc);
}

static NTSTATUS lock2(D3DKMT_HANDLE alloc, void **data)
{
    D3DKMT_LOCK2 l = { 0 };
    NTSTATUS status;

    l.hDevice = device;
    l.hAllocation = alloc;
    status = D3DKMTLock2(&l);
    if (data)
        *data = l.pData;
    return status;
}

static NTSTATUS unlock2(D3DKMT_HANDLE alloc)
{
    D3DKMT_UNLOCK2 u = { device, alloc };
    return D3DKMTUnlock2(&u);
}

static NTSTATUS destroy_one(D3DKMT_HANDLE alloc)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };

    d.hDevice = device;
    d.phAllocationList = &alloc;
    d.AllocationCount = 1;
    return D3DKMTDestroyAllocation(&d);
}

static NTSTATUS destroy_resource(D3DKMT_HANDLE res)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };

    d.hDevice = device;
    d.hResource = res;
    return D3DKMTDestroyAllocation(&d);
}

/* ---- Windows' table, row by row ---------------------------------------------------------- */

START_TEST(row_zeroed_struct)
{
    D3DKMT_CREATEALLOCATION ca;

    memset(&ca, 0, sizeof(ca));
    ck_assert_status(_i ? D3DKMTCreateAllocation2(&ca) : D3DKMTCreateAllocation(&ca),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(_i ? D3DKMTCreateAllocation2(NULL) : D3DKMTCreateAllocation(NULL),
                     STATUS_INVALID_PARAMETER);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(row_base)
{
    struct req r;
    void *p;

    base(&r, _i);
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(out_handle(&r, 0), H_NEXT);
    ck_assert_local_handle(out_handle(&r, 0));
    ck_assert_uint_eq(r.ca.hResource, 0);
    ck_assert_uint_eq(r.ca.hGlobalShare, 0);
    ck_assert_ptr_eq(r.ca.hPrivateRuntimeResourceHandle, RUNTIME_HANDLE);
    if (r.v2) {
        /* the software adapter maps every allocation into its GPU VA space:
         * above 4 GiB, 64 KiB aligned */
        ck_assert_uint_ge(r.info2[0].GpuVirtualAddress, 0x100000000ull);
        ck_assert_uint_eq(r.info2[0].GpuVirtualAddress % 0x10000, 0);
    }
    /* the allocation is the caller's memory */
    ck_assert_status(lock2(out_handle(&r, 0), &p), STATUS_SUCCESS);
    ck_assert_ptr_eq(p, heap);
    ck_assert_status(unlock2(out_handle(&r, 0)), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 1);
    ck_assert_uint_eq(KmtLiveObjectCount(), live_at_start + 1);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(row_private_driver_and_runtime_data)
{
    BYTE six[6] = { 1, 2, 3, 4, 5, 6 }, four[4] = { 9, 8, 7, 6 };
    struct req r;

    base(&r, _i);
    set_private(&r, 0, six, sizeof(six));
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_local_handle(out_handle(&r, 0));
    ck_assert_mem_eq(six, ((BYTE[]){ 1, 2, 3, 4, 5, 6 }), 6);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);

    base(&r, _i);
    r.ca.pPrivateRuntimeData = four;
    r.ca.PrivateRuntimeDataSize = sizeof(four);
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(out_handle(&r, 0), H_NEXT + 0x40);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(row_driver_data_with_standard_allocation)
{
    BYTE data[64] = { 0 };
    struct req r;

    base(&r, _i);
    /* pStandardAllocation shares its slot with pPrivateDriverData: a size
     * says the caller meant both */
    r.ca.PrivateDriverDataSize = sizeof(data);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_bad_device)
{
    struct req r;

    base(&r, _i);
    r.ca.hDevice = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.ca.hDevice = 0xdeadbeef;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.ca.hDevice = adapter;                /* wrong type */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.ca.hDevice = H_NEXT;                 /* never issued */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_garbage_resource_handle)
{
    struct req r;

    base(&r, _i);
    r.ca.hResource = 0xdeadbeef;
    ck_assert_status(submit(&r), STATUS_INVALID_HANDLE);
    r.ca.hResource = H_NEXT + 0x1000;
    ck_assert_status(submit(&r), STATUS_INVALID_HANDLE);
    r.ca.hResource = device;               /* a handle, but no resource */
    ck_assert_status(submit(&r), STATUS_INVALID_HANDLE);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_allocation_count)
{
    struct req r;

    base(&r, _i);
    r.ca.NumAllocations = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    base(&r, _i);
    set_sysmem(&r, 1, (char *)heap);
    r.ca.NumAllocations = 2;               /* a standard allocation is one */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_standard_descriptor)
{
    struct req r;

    base(&r, _i);
    r.std.Type = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.std.Type = D3DKMT_STANDARDALLOCATIONTYPE_INTERNALBACKINGSTORE;   /* not for user mode */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.std.Type = D3DKMT_STANDARDALLOCATIONTYPE_MAX;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

    base(&r, _i);
    set_sysmem(&r, 0, NULL);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    set_sysmem(&r, 0, (char *)heap + 64);  /* not page aligned */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

    base(&r, _i);
    r.std.ExistingHeapData.Size = HEAP_SIZE - 1;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.std.ExistingHeapData.Size = 0x1800;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.std.ExistingHeapData.Size = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

    base(&r, _i);
    r.std.Flags.Value = 1;                 /* reserved */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

    base(&r, _i);
    r.ca.pStandardAllocation = NULL;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_flag_pairs)
{
    struct req r;

    base(&r, _i);
    r.ca.Flags.ExistingSysMem = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    base(&r, _i);
    /* StandardAllocation 0: pStandardAllocation is read as (empty) driver
     * data and the software miniport finds no descriptor */
    r.ca.Flags.StandardAllocation = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_shared_needs_resource)
{
    struct req r;

    base(&r, _i);
    r.ca.Flags.CreateShared = 1;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    r.ca.Flags.NtSecuritySharing = 1;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_create_resource_with_garbage_handle)
{
    struct req r;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    r.ca.hResource = 0xdeadbeef;           /* must be 0 on create */
    ck_assert_status(submit(&r), STATUS_INVALID_HANDLE);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_create_resource)
{
    struct req r;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(r.ca.hResource, H_NEXT);
    ck_assert_local_handle(r.ca.hResource);
    ck_assert_uint_eq(out_handle(&r, 0), r.ca.hResource + 0x40);
    ck_assert_uint_eq(r.ca.hGlobalShare, 0);
    ck_assert_ptr_eq(r.ca.hPrivateRuntimeResourceHandle, RUNTIME_HANDLE);
    ck_assert_uint_eq(KmtLiveObjectCount(), live_at_start + 2);
    ck_assert_status(destroy_resource(r.ca.hResource), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(row_add_to_existing_standard_resource)
{
    struct req r;
    D3DKMT_HANDLE res;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    res = r.ca.hResource;
    base(&r, _i);
    r.ca.hResource = res;                  /* allocations cannot join it later */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(out_handle(&r, 0), 0xcccccccc);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 1);
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(row_create_resource_without_allocations)
{
    struct req r;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    r.ca.NumAllocations = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(r.ca.hResource, 0);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(row_create_shared)
{
    struct req r;
    D3DKMT_HANDLE first;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    r.ca.Flags.CreateShared = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(r.ca.hResource, H_NEXT);
    ck_assert_uint_eq(out_handle(&r, 0), H_NEXT + 0x40);
    /* a global handle: same layout, low bits 2, from the session's broker */
    ck_assert_uint_eq(r.ca.hGlobalShare & 0x3f, 2);
    ck_assert_uint_ne(r.ca.hGlobalShare & 0xc0000000u, 0);
    first = r.ca.hGlobalShare;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    r.ca.Flags.CreateShared = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(r.ca.hGlobalShare & 0x3f, 2);
    ck_assert_uint_ne(r.ca.hGlobalShare, first);   /* never reused */
    /* a global handle is no local handle */
    ck_assert_status(destroy_resource(r.ca.hGlobalShare), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_resource(r.ca.hResource), STATUS_SUCCESS);
    ck_assert_status(destroy_resource(H_NEXT), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(row_create_shared_nt_security)
{
    struct req r;

    base(&r, _i);
    r.ca.Flags.CreateResource = 1;
    r.ca.Flags.CreateShared = 1;
    r.ca.Flags.NtSecuritySharing = 1;
    r.ca.hGlobalShare = 0x77;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(r.ca.hGlobalShare, 0);        /* NT handles come from ShareObjects */
    ck_assert_local_handle(r.ca.hResource);
    ck_assert_status(destroy_resource(r.ca.hResource), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(shared_resource_is_sealed)
{
    KMT_SOFT_ALLOCATION_DESC desc[2] = { kmt_test_soft_desc(4096), kmt_test_soft_desc(4096) };
    D3DKMT_HANDLE res, a;
    struct req r;

    memset(&r, 0, sizeof(r));
    r.v2 = _i;
    set_private(&r, 0, &desc[0], sizeof(desc[0]));
    r.ca.hDevice = device;
    r.ca.NumAllocations = 1;
    r.ca.pAllocationInfo = r.v2 ? (void *)r.info2 : (void *)r.info;
    r.ca.Flags.CreateResource = 1;
    r.ca.Flags.CreateShared = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    res = r.ca.hResource;
    a = out_handle(&r, 0);
    /* no additions */
    r.ca.Flags.CreateResource = r.ca.Flags.CreateShared = 0;
    r.ca.hResource = res;
    set_private(&r, 0, &desc[1], sizeof(desc[1]));
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    /* no destroying its allocations one by one */
    ck_assert_status(destroy_one(a), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 1);
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* ---- more descriptor rules ----------------------------------------------------------------- */

START_TEST(reserved_and_unsupported_flags)
{
    struct req r;
    UINT v;

    base(&r, _i);
    memcpy(&v, &r.ca.Flags, sizeof(v));
    v |= 1u << 22;                         /* first reserved bit */
    memcpy(&r.ca.Flags, &v, sizeof(v));
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    v |= 1u << 31;
    memcpy(&r.ca.Flags, &v, sizeof(v));
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

    /* Features kmtshim does not implement are refused as such rather than
     * faked (no protected memory, sections, cross-adapter or write watch). */
    base(&r, _i);
    r.ca.Flags.CreateProtected = 1;
    ck_assert_status(submit(&r), STATUS_NOT_SUPPORTED);
    base(&r, _i);
    r.ca.Flags.ExistingSection = 1;
    ck_assert_status(submit(&r), STATUS_NOT_SUPPORTED);
    base(&r, _i);
    r.ca.Flags.CrossAdapter = 1;
    ck_assert_status(submit(&r), STATUS_NOT_SUPPORTED);
    base(&r, _i);
    r.ca.Flags.OpenCrossAdapter = 1;
    ck_assert_status(submit(&r), STATUS_NOT_SUPPORTED);
    base(&r, _i);
    r.ca.Flags.WriteWatch = 1;
    ck_assert_status(submit(&r), STATUS_NOT_SUPPORTED);
    base(&r, _i);
    r.ca.Flags.PhysicallyContiguous = 1;
    ck_assert_status(submit(&r), STATUS_NOT_SUPPORTED);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(harmless_flags_accepted)
{
    struct req r;

    /* cache and access hints change nothing on the software adapter */
    base(&r, _i);
    r.ca.Flags.CreateCached = 1;
    r.ca.Flags.ReadOnly = 1;
    r.ca.Flags.NonSecure = 1;
    r.ca.Flags.AllowNotZeroed = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(out_handle(&r, 0), H_NEXT);
    ck_assert_status(destroy_one(H_NEXT), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(null_allocation_info)
{
    struct req r;

    base(&r, _i);
    r.ca.pAllocationInfo = NULL;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(garbage_pointers)
{
    static void *const bad[] = { (void *)0x10, (void *)0xffff, GARBAGE_PTR, (void *)~(uintptr_t)0 };
    BYTE data[16] = { 0 };
    struct req r;

    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        base(&r, _i);
        r.ca.pAllocationInfo = bad[i];
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

        base(&r, _i);
        r.ca.pStandardAllocation = bad[i];
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

        base(&r, _i);
        r.ca.pPrivateRuntimeData = bad[i];
        r.ca.PrivateRuntimeDataSize = 4;
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

        base(&r, _i);
        set_private(&r, 0, bad[i], 8);
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);

        /* resource-level driver data (a driver-private resource) */
        base(&r, _i);
        r.ca.Flags.StandardAllocation = 0;
        r.ca.Flags.CreateResource = 1;
        r.ca.pPrivateDriverData = bad[i];
        r.ca.PrivateDriverDataSize = 8;
        set_private(&r, 0, data, sizeof(data));
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    }
    assert_nothing_created(&r);
}
END_TEST

START_TEST(garbage_system_memory)
{
    struct req r;

    /* page aligned, but no user address: refused, never dereferenced */
    base(&r, _i);
    set_sysmem(&r, 0, (void *)0xdeadbeefdead0000ull);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    set_sysmem(&r, 0, (void *)0x1000);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    /* a range that runs off the end of user space */
    set_sysmem(&r, 0, (void *)(0x800000000000ull - 0x1000));
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
}
END_TEST

START_TEST(too_many_allocations)
{
    enum { N = D3DKMT_CREATEALLOCATION_MAX + 1 };
    D3DDDI_ALLOCATIONINFO2 *info2 = calloc(N, sizeof(*info2));
    D3DDDI_ALLOCATIONINFO *info = calloc(N, sizeof(*info));
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(4096);
    D3DKMT_CREATEALLOCATION ca = { 0 };

    ck_assert_ptr_nonnull(info);
    ck_assert_ptr_nonnull(info2);
    for (unsigned i = 0; i < N; i++) {
        info[i].pPrivateDriverData = info2[i].pPrivateDriverData = &desc;
        info[i].PrivateDriverDataSize = info2[i].PrivateDriverDataSize = sizeof(desc);
    }
    ca.hDevice = device;
    ca.NumAllocations = N;
    if (_i)
        ca.pAllocationInfo2 = info2;
    else
        ca.pAllocationInfo = info;
    ck_assert_status(_i ? D3DKMTCreateAllocation2(&ca) : D3DKMTCreateAllocation(&ca),
                     STATUS_INVALID_PARAMETER);
    ca.NumAllocations = 0xffffffff;
    ck_assert_status(_i ? D3DKMTCreateAllocation2(&ca) : D3DKMTCreateAllocation(&ca),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(info[0].hAllocation, 0);
    free(info);
    free(info2);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(private_data_limits)
{
    enum { MAX = 128 * 1024 };
    BYTE *big = calloc(1, MAX + 1);
    struct req r;

    ck_assert_ptr_nonnull(big);
    /* dxgkrnl's bound on every private blob is 128 KiB */
    base(&r, _i);
    set_private(&r, 0, big, MAX + 1);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    base(&r, _i);
    r.ca.pPrivateRuntimeData = big;
    r.ca.PrivateRuntimeDataSize = MAX + 1;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    base(&r, _i);
    r.ca.PrivateRuntimeDataSize = 4;       /* size without data */
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);

    /* exactly the bound is fine */
    base(&r, _i);
    set_private(&r, 0, big, MAX);
    r.ca.pPrivateRuntimeData = big;
    r.ca.PrivateRuntimeDataSize = MAX;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    free(big);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(sysmem_all_or_none)
{
    KMT_SOFT_ALLOCATION_DESC desc[2] = { kmt_test_soft_desc(4096), kmt_test_soft_desc(4096) };
    struct req r;

    memset(&r, 0, sizeof(r));
    r.v2 = _i;
    r.info[0].hAllocation = r.info2[0].hAllocation = 0xcccccccc;
    set_private(&r, 0, &desc[0], sizeof(desc[0]));
    set_private(&r, 1, &desc[1], sizeof(desc[1]));
    set_sysmem(&r, 0, heap);
    r.ca.hDevice = device;
    r.ca.NumAllocations = 2;
    r.ca.pAllocationInfo = r.v2 ? (void *)r.info2 : (void *)r.info;
    /* with ExistingSysMem, every allocation brings its memory */
    r.ca.Flags.ExistingSysMem = 1;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    /* and without it, none may */
    r.ca.Flags.ExistingSysMem = 0;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
    /* both with memory: fine */
    set_sysmem(&r, 1, (char *)heap + 0x8000);
    r.ca.Flags.ExistingSysMem = 1;
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(out_handle(&r, 1), out_handle(&r, 0) + 0x40);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.BytesAllocated, 0);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    ck_assert_status(destroy_one(out_handle(&r, 1)), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* One allocation of the soft driver's private data in existing memory. */
static void sysmem_request(struct req *r, bool v2, KMT_SOFT_ALLOCATION_DESC *desc, const void *mem)
{
    memset(r, 0, sizeof(*r));
    r->v2 = v2;
    r->info[0].hAllocation = r->info2[0].hAllocation = 0xcccccccc;
    set_private(r, 0, desc, sizeof(*desc));
    set_sysmem(r, 0, mem);
    r->ca.hDevice = device;
    r->ca.NumAllocations = 1;
    r->ca.pAllocationInfo = v2 ? (void *)r->info2 : (void *)r->info;
    r->ca.Flags.ExistingSysMem = 1;
}

/* Existing memory must cover the allocation, as Windows probes and locks
 * it: pages of [pSystemMem, +size) that are unmapped or PROT_NONE (Wine's
 * reserved, uncommitted memory) refuse the call, whether the size came from
 * the driver's private data or from the standard descriptor. */
START_TEST(sysmem_must_cover_the_allocation)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(3 * 4096);
    char *mem = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct req r;

    ck_assert_ptr_ne(mem, MAP_FAILED);
    ck_assert_int_eq(munmap(mem + 3 * 4096, 4096), 0);   /* the 4th page is a hole */
    /* three pages of private-data size, starting one page before the hole */
    sysmem_request(&r, _i, &desc, mem + 4096);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
    /* a PROT_NONE page in the middle */
    set_sysmem(&r, 0, mem);
    ck_assert_int_eq(mprotect(mem + 4096, 4096, PROT_NONE), 0);
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
    /* the standard descriptor's size, over the same pages */
    base(&r, _i);
    set_sysmem(&r, 0, mem);
    r.std.ExistingHeapData.Size = 3 * 4096;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    assert_nothing_created(&r);
    /* once all three pages can be read, both are created */
    ck_assert_int_eq(mprotect(mem + 4096, 4096, PROT_READ | PROT_WRITE), 0);
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    sysmem_request(&r, _i, &desc, mem);
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    assert_nothing_created(NULL);
    ck_assert_int_eq(munmap(mem, 3 * 4096), 0);
}
END_TEST

/* Windows: a refused call hands out no handle, so across any mix of
 * refused and successful creates each new handle (local or global) is the
 * previous one + 0x40.  Refusals after the handles were reserved: existing
 * memory that cannot be read (standard size and driver size), the
 * miniport refusing the 5th of 8 allocations, alone and in a resource, and
 * a shared resource refused after its global handle was reserved. */
static NTSTATUS create_eight_with_bad_fifth(bool v2, bool resource, struct req *r8,
                                            D3DDDI_ALLOCATIONINFO *info,
                                            D3DDDI_ALLOCATIONINFO2 *info2,
                                            KMT_SOFT_ALLOCATION_DESC *desc);

START_TEST(refused_creates_hand_out_nothing)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(2 * 4096), descs[8];
    D3DDDI_ALLOCATIONINFO info[8];
    D3DDDI_ALLOCATIONINFO2 info2[8];
    char *mem = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    D3DKMT_HANDLE prev = H_NEXT - 0x40, prev_global = 0, made[16];
    unsigned n = 0;
    struct req r;

    ck_assert_ptr_ne(mem, MAP_FAILED);
    ck_assert_int_eq(mprotect(mem + 4096, 4096, PROT_NONE), 0);
    for (unsigned round = 0; round < 2; round++) {
        /* refused: a standard heap over a PROT_NONE page */
        base(&r, _i);
        set_sysmem(&r, 0, mem);
        r.std.ExistingHeapData.Size = 2 * 4096;
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
        /* then a success */
        base(&r, _i);
        ck_assert_status(submit(&r), STATUS_SUCCESS);
        ck_assert_uint_eq(out_handle(&r, 0), prev + 0x40);
        made[n++] = prev = out_handle(&r, 0);
        /* refused: the driver's size runs into the PROT_NONE page */
        sysmem_request(&r, _i, &desc, mem);
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
        /* refused by the miniport, 8 reserved, standalone and in a resource */
        ck_assert_status(create_eight_with_bad_fifth(_i, false, &r, info, info2, descs),
                         STATUS_INVALID_PARAMETER);
        ck_assert_status(create_eight_with_bad_fifth(_i, true, &r, info, info2, descs),
                         STATUS_INVALID_PARAMETER);
        /* a shared resource: local handles step by 0x40, global ones are new */
        base(&r, _i);
        r.ca.Flags.CreateResource = 1;
        r.ca.Flags.CreateShared = 1;
        ck_assert_status(submit(&r), STATUS_SUCCESS);
        ck_assert_uint_eq(r.ca.hResource, prev + 0x40);
        ck_assert_uint_eq(out_handle(&r, 0), prev + 0x80);
        if (prev_global)
            ck_assert_uint_ne(r.ca.hGlobalShare, prev_global);
        prev_global = r.ca.hGlobalShare;
        made[n++] = r.ca.hResource;
        prev = out_handle(&r, 0);
        /* refused after both were reserved: the heap cannot be read */
        base(&r, _i);
        r.ca.Flags.CreateResource = 1;
        r.ca.Flags.CreateShared = 1;
        set_sysmem(&r, 0, mem);
        r.std.ExistingHeapData.Size = 2 * 4096;
        ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(r.ca.hGlobalShare, 0);
    }
    for (unsigned i = 0; i < n; i++)
        ck_assert_status(i % 2 ? destroy_resource(made[i]) : destroy_one(made[i]), STATUS_SUCCESS);
    assert_nothing_created(NULL);
    ck_assert_int_eq(munmap(mem, 2 * 4096), 0);
}
END_TEST

/* The caller's input is input: private data the driver does not answer in
 * is never written, so it may live in read-only memory (Windows: SUCCESS;
 * kmtshim wrote it back and died of SIGSEGV). */
static const BYTE ro_driver_data[6] = { 1, 2, 3, 4, 5, 6 };

static NTSTATUS create_private(bool v2, void *data, UINT size, D3DKMT_HANDLE *out);

START_TEST(read_only_private_data_is_input)
{
    static const KMT_SOFT_ALLOCATION_DESC ro_desc = {
        .Magic = KMT_SOFT_ALLOCATION_MAGIC, .Version = KMT_SOFT_ALLOCATION_VERSION, .Size = 4096,
    };
    BYTE *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct req r;
    D3DKMT_HANDLE h;

    ck_assert_ptr_ne(page, MAP_FAILED);
    /* the notes' row: 6 bytes of private driver data, here a static const */
    base(&r, _i);
    set_private(&r, 0, (void *)ro_driver_data, sizeof(ro_driver_data));
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(out_handle(&r, 0), H_NEXT);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    /* a page made read-only, and the soft driver's own descriptor in .rodata */
    memcpy(page, ro_driver_data, sizeof(ro_driver_data));
    ck_assert_int_eq(mprotect(page, 4096, PROT_READ), 0);
    base(&r, _i);
    set_private(&r, 0, page, sizeof(ro_driver_data));
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_status(destroy_one(out_handle(&r, 0)), STATUS_SUCCESS);
    ck_assert_status(create_private(_i, (void *)&ro_desc, sizeof(ro_desc), &h), STATUS_SUCCESS);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
    ck_assert_int_eq(munmap(page, 4096), 0);
}
END_TEST

/* An answer buffer that cannot be written fails the call with Windows'
 * access-violation status instead of a crash (Escape and QueryAdapterInfo
 * write the driver's answer into the caller's buffer). */
START_TEST(read_only_answer_buffers_are_refused)
{
    KMT_SOFT_ESCAPE *e = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    D3DKMT_QUERYADAPTERINFO q = { 0 };
    D3DKMT_ESCAPE esc = { 0 };

    ck_assert_ptr_ne(e, MAP_FAILED);
    e->Code = KMT_SOFT_ESCAPE_GET_STATS;
    ck_assert_int_eq(mprotect(e, 4096, PROT_READ), 0);
    esc.hAdapter = adapter;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = e;
    esc.PrivateDriverDataSize = sizeof(*e);
    ck_assert_status(D3DKMTEscape(&esc), STATUS_ACCESS_VIOLATION);
    q.hAdapter = adapter;
    q.Type = KMTQAITYPE_DRIVERVERSION;
    q.pPrivateDriverData = e;
    q.PrivateDriverDataSize = sizeof(D3DKMT_DRIVERVERSION);
    ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_ACCESS_VIOLATION);
    ck_assert_int_eq(mprotect(e, 4096, PROT_READ | PROT_WRITE), 0);
    ck_assert_status(D3DKMTEscape(&esc), STATUS_SUCCESS);
    ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_SUCCESS);
    ck_assert_int_eq(munmap(e, 4096), 0);
}
END_TEST

START_TEST(stale_handle_after_slot_reuse)
{
    D3DKMT_HANDLE first, h = 0;
    unsigned n = 0;

    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &first, NULL), STATUS_SUCCESS);
    ck_assert_status(destroy_one(first), STATUS_SUCCESS);
    /* churn until the slot comes back (after at least 128 other handles) */
    do {
        if (h)
            ck_assert_status(destroy_one(h), STATUS_SUCCESS);
        ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &h, NULL), STATUS_SUCCESS);
        n++;
    } while ((h & 0x3fffffc0u) != (first & 0x3fffffc0u) && n < 5000);
    ck_assert_uint_ge(n, 129);
    ck_assert_uint_eq(h, first + 0x40000000u);          /* same slot, next generation */
    ck_assert_status(lock2(first, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_one(first), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(h, NULL), STATUS_SUCCESS);
    ck_assert_status(unlock2(h), STATUS_SUCCESS);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* ---- the software miniport's descriptor ---------------------------------------------------- */

static NTSTATUS create_private(bool v2, void *data, UINT size, D3DKMT_HANDLE *out)
{
    struct req r;
    NTSTATUS status;

    memset(&r, 0, sizeof(r));
    r.v2 = v2;
    set_private(&r, 0, data, size);
    r.info[0].hAllocation = r.info2[0].hAllocation = 0xcccccccc;
    r.ca.hDevice = device;
    r.ca.NumAllocations = 1;
    r.ca.pAllocationInfo = v2 ? (void *)r.info2 : (void *)r.info;
    status = submit(&r);
    *out = out_handle(&r, 0);
    return status;
}

START_TEST(soft_descriptor_accepted)
{
    KMT_SOFT_ALLOCATION_DESC d = kmt_test_soft_desc(10000);
    D3DKMT_HANDLE h;
    BYTE *p;

    ck_assert_status(create_private(_i, &d, sizeof(d), &h), STATUS_SUCCESS);
    ck_assert_uint_eq(h, H_NEXT);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.BytesAllocated, 12288);
    ck_assert_status(lock2(h, (void **)&p), STATUS_SUCCESS);
    p[0] = 1;
    p[12287] = 2;                          /* the whole rounded size is usable */
    ck_assert_status(unlock2(h), STATUS_SUCCESS);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(soft_descriptor_rejected)
{
    KMT_SOFT_ALLOCATION_DESC d;
    D3DKMT_HANDLE h;

    ck_assert_status(create_private(_i, NULL, 0, &h), STATUS_INVALID_PARAMETER);
    d = kmt_test_soft_desc(4096);
    ck_assert_status(create_private(_i, &d, sizeof(d) - 1, &h), STATUS_INVALID_PARAMETER);
    d.Magic ^= 1;
    ck_assert_status(create_private(_i, &d, sizeof(d), &h), STATUS_INVALID_PARAMETER);
    d = kmt_test_soft_desc(4096);
    d.Version = 2;
    ck_assert_status(create_private(_i, &d, sizeof(d), &h), STATUS_INVALID_PARAMETER);
    d = kmt_test_soft_desc(4096);
    d.Flags = 1;
    ck_assert_status(create_private(_i, &d, sizeof(d), &h), STATUS_INVALID_PARAMETER);
    d = kmt_test_soft_desc(0);
    ck_assert_status(create_private(_i, &d, sizeof(d), &h), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(h, 0xcccccccc);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(soft_descriptor_too_big)
{
    KMT_SOFT_ALLOCATION_DESC d = kmt_test_soft_desc(1ull << 60);
    D3DKMT_HANDLE h;

    /* more than the adapter's budget (half of RAM) */
    ck_assert_status(create_private(_i, &d, sizeof(d), &h), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(soft_descriptor_in_longer_blob)
{
    struct {
        KMT_SOFT_ALLOCATION_DESC d;
        BYTE umd_extra[40];
    } blob;
    D3DKMT_HANDLE h;

    memset(&blob, 0x3c, sizeof(blob));
    blob.d = kmt_test_soft_desc(4096);
    ck_assert_status(create_private(_i, &blob, sizeof(blob), &h), STATUS_SUCCESS);
    ck_assert_uint_eq(blob.umd_extra[39], 0x3c);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* ---- resources with N allocations ---------------------------------------------------------- */

static const UINT resource_sizes[] = { 1, 8, 9, 1024 };

static void raise_fd_limit(UINT need)
{
    struct rlimit rl;

    /* the software miniport backs each allocation with a memfd */
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < need + 64) {
        rl.rlim_cur = rl.rlim_max;
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        ck_assert_uint_ge(rl.rlim_cur, need + 64);
    }
}

START_TEST(resource_with_n_allocations)
{
    const UINT n = resource_sizes[_i];
    D3DKMT_HANDLE *h = calloc(n, sizeof(*h)), res = 0;
    KMT_SOFT_ESCAPE st;

    ck_assert_ptr_nonnull(h);
    raise_fd_limit(n);
    ck_assert_status(kmt_test_create_allocations(device, n, 4096, h, &res), STATUS_SUCCESS);
    ck_assert_uint_eq(res, H_NEXT);
    for (UINT i = 0; i < n; i++)
        if (h[i] != res + 0x40 * (i + 1))
            ck_abort_msg("allocation %u is 0x%08x, resource 0x%08x", i, h[i], res);
    st = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(st.Stats.Allocations, n);
    ck_assert_uint_eq(st.Stats.Resources, 1);
    ck_assert_uint_eq(st.Stats.OpenBindings, n);
    ck_assert_uint_eq(st.Stats.BytesAllocated, (UINT64)n * 4096);
    ck_assert_uint_eq(KmtLiveObjectCount(), live_at_start + n + 1);
    /* each one is usable */
    ck_assert_status(lock2(h[n - 1], NULL), STATUS_SUCCESS);
    ck_assert_status(unlock2(h[n - 1]), STATUS_SUCCESS);
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    ck_assert_status(lock2(h[0], NULL), STATUS_INVALID_PARAMETER);
    free(h);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(standalone_batch_of_1024)
{
    enum { N = D3DKMT_CREATEALLOCATION_MAX };
    D3DKMT_HANDLE *h = calloc(N, sizeof(*h));
    D3DKMT_DESTROYALLOCATION d = { 0 };

    ck_assert_ptr_nonnull(h);
    raise_fd_limit(N);
    ck_assert_status(kmt_test_create_allocations(device, N, 4096, h, NULL), STATUS_SUCCESS);
    for (UINT i = 0; i < N; i++)
        if (h[i] != H_NEXT + 0x40 * i)
            ck_abort_msg("allocation %u is 0x%08x", i, h[i]);
    d.hDevice = device;
    d.phAllocationList = h;
    d.AllocationCount = N;
    ck_assert_status(D3DKMTDestroyAllocation(&d), STATUS_SUCCESS);
    free(h);
    assert_nothing_created(NULL);
}
END_TEST

/* ---- all or nothing ------------------------------------------------------------------------ */

/* 8 driver-private allocations, the 5th with a descriptor the miniport
 * refuses after it has created the first four. */
static NTSTATUS create_eight_with_bad_fifth(bool v2, bool resource, struct req *r8,
                                            D3DDDI_ALLOCATIONINFO *info,
                                            D3DDDI_ALLOCATIONINFO2 *info2,
                                            KMT_SOFT_ALLOCATION_DESC *desc)
{
    memset(r8, 0, sizeof(*r8));
    for (UINT i = 0; i < 8; i++) {
        desc[i] = kmt_test_soft_desc(4096);
        memset(&info[i], 0, sizeof(info[i]));
        memset(&info2[i], 0, sizeof(info2[i]));
        info[i].pPrivateDriverData = info2[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = info2[i].PrivateDriverDataSize = sizeof(desc[i]);
        info[i].hAllocation = info2[i].hAllocation = 0xcccccccc;
    }
    desc[4].Magic = 0x12345678;
    r8->v2 = v2;
    r8->ca.hDevice = device;
    r8->ca.NumAllocations = 8;
    r8->ca.Flags.CreateResource = resource;
    if (v2)
        r8->ca.pAllocationInfo2 = info2;
    else
        r8->ca.pAllocationInfo = info;
    return submit(r8);
}

START_TEST(failure_half_way_leaves_nothing)
{
    D3DDDI_ALLOCATIONINFO info[8];
    D3DDDI_ALLOCATIONINFO2 info2[8];
    KMT_SOFT_ALLOCATION_DESC desc[8];
    D3DKMT_HANDLE h;
    struct req r;

    ck_assert_status(create_eight_with_bad_fifth(_i, false, &r, info, info2, desc),
                     STATUS_INVALID_PARAMETER);
    for (UINT i = 0; i < 8; i++)
        ck_assert_uint_eq(_i ? info2[i].hAllocation : info[i].hAllocation, 0xcccccccc);
    assert_nothing_created(NULL);
    /* The handles were reserved, then given back: none of them is live,
     * and the refused call handed out nothing, as on Windows: the next
     * create gets the value that was next before it. */
    for (UINT i = 0; i < 8; i++)
        ck_assert_status(lock2(H_NEXT + 0x40 * i, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &h, NULL), STATUS_SUCCESS);
    ck_assert_uint_eq(h, H_NEXT);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(failure_half_way_in_resource)
{
    D3DDDI_ALLOCATIONINFO info[8];
    D3DDDI_ALLOCATIONINFO2 info2[8];
    KMT_SOFT_ALLOCATION_DESC desc[8];
    D3DKMT_HANDLE h;
    struct req r;

    ck_assert_status(create_eight_with_bad_fifth(_i, true, &r, info, info2, desc),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(r.ca.hResource, 0);
    assert_nothing_created(NULL);
    ck_assert_status(destroy_resource(H_NEXT), STATUS_INVALID_PARAMETER);
    /* resource + 8 allocations reserved, all 9 values given back */
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &h, NULL), STATUS_SUCCESS);
    ck_assert_uint_eq(h, H_NEXT);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(failure_when_joining_resource)
{
    D3DDDI_ALLOCATIONINFO info[8];
    D3DDDI_ALLOCATIONINFO2 info2[8];
    KMT_SOFT_ALLOCATION_DESC desc[8];
    D3DKMT_HANDLE a[2], res;
    struct req r;

    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, a, &res), STATUS_SUCCESS);
    ck_assert_status(create_eight_with_bad_fifth(_i, false, &r, info, info2, desc),
                     STATUS_INVALID_PARAMETER);
    r.ca.hResource = res;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    /* the resource keeps exactly what it had */
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 2);
    ck_assert_uint_eq(KmtLiveObjectCount(), live_at_start + 3);
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* ---- adding to driver-private resources ------------------------------------------------------ */

static NTSTATUS add_to_resource(bool v2, D3DKMT_HANDLE res, UINT n, D3DKMT_HANDLE *out)
{
    KMT_SOFT_ALLOCATION_DESC desc[2] = { kmt_test_soft_desc(8192), kmt_test_soft_desc(8192) };
    struct req r;
    NTSTATUS status;

    memset(&r, 0, sizeof(r));
    r.v2 = v2;
    for (UINT i = 0; i < n; i++)
        set_private(&r, i, &desc[i], sizeof(desc[i]));
    r.ca.hDevice = device;
    r.ca.hResource = res;
    r.ca.NumAllocations = n;
    r.ca.pAllocationInfo = v2 ? (void *)r.info2 : (void *)r.info;
    r.ca.hPrivateRuntimeResourceHandle = RUNTIME_HANDLE;
    status = submit(&r);
    for (UINT i = 0; i < n; i++)
        out[i] = out_handle(&r, i);
    if (!status) {
        ck_assert_uint_eq(r.ca.hResource, res);      /* in only, without CreateResource */
        ck_assert_ptr_eq(r.ca.hPrivateRuntimeResourceHandle, RUNTIME_HANDLE);
    }
    return status;
}

START_TEST(add_to_private_resource)
{
    D3DKMT_HANDLE a[2], more[2], res;
    KMT_SOFT_ESCAPE st;

    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, a, &res), STATUS_SUCCESS);
    ck_assert_status(add_to_resource(_i, res, 2, more), STATUS_SUCCESS);
    ck_assert_uint_eq(more[0], a[1] + 0x40);
    ck_assert_uint_eq(more[1], a[1] + 0x80);
    st = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(st.Stats.Allocations, 4);
    ck_assert_uint_eq(st.Stats.Resources, 1);
    ck_assert_uint_eq(st.Stats.BytesAllocated, 2 * 4096 + 2 * 8192);
    /* they belong to the resource: destroying it takes them along */
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    ck_assert_status(lock2(more[1], NULL), STATUS_INVALID_PARAMETER);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(add_to_resource_wrong_handles)
{
    D3DKMT_HANDLE a[2], res, other_dev, other_res, oa, more[1];
    D3DKMT_CREATEDEVICE cd = { 0 };
    struct req r;

    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, a, &res), STATUS_SUCCESS);
    /* an allocation is not a resource */
    ck_assert_status(add_to_resource(_i, a[0], 1, more), STATUS_INVALID_HANDLE);
    /* a resource of another device */
    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    other_dev = cd.hDevice;
    ck_assert_status(kmt_test_create_allocations(other_dev, 1, 4096, &oa, &other_res), STATUS_SUCCESS);
    ck_assert_status(add_to_resource(_i, other_res, 1, more), STATUS_INVALID_HANDLE);
    /* a destroyed resource */
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    ck_assert_status(add_to_resource(_i, res, 1, more), STATUS_INVALID_HANDLE);
    /* a standard allocation cannot join a driver-private resource */
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, a, &res), STATUS_SUCCESS);
    base(&r, _i);
    r.ca.hResource = res;
    ck_assert_status(submit(&r), STATUS_INVALID_PARAMETER);
    /* CreateResource with an existing resource named */
    r.ca.Flags.CreateResource = 1;
    ck_assert_status(submit(&r), STATUS_INVALID_HANDLE);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 2);
    {
        D3DKMT_DESTROYDEVICE dd = { other_dev };
        ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    }
    ck_assert_status(destroy_resource(res), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

START_TEST(resource_level_driver_data)
{
    KMT_SOFT_ALLOCATION_DESC d = kmt_test_soft_desc(4096);
    BYTE res_data[16] = { 0xaa };
    struct req r;

    memset(&r, 0, sizeof(r));
    r.v2 = _i;
    set_private(&r, 0, &d, sizeof(d));
    r.ca.hDevice = device;
    r.ca.NumAllocations = 1;
    r.ca.pAllocationInfo = r.v2 ? (void *)r.info2 : (void *)r.info;
    r.ca.Flags.CreateResource = 1;
    r.ca.pPrivateDriverData = res_data;
    r.ca.PrivateDriverDataSize = sizeof(res_data);
    ck_assert_status(submit(&r), STATUS_SUCCESS);
    ck_assert_uint_eq(out_handle(&r, 0), r.ca.hResource + 0x40);
    ck_assert_status(destroy_resource(r.ca.hResource), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* ---- private data is in/out: a miniport that writes into it ---------------------------------- */

static DRIVER_INITIALIZATION_DATA soft_ddi;   /* the wrapped miniport's DDIs */
static bool fail_open;

/* Like a KMD that writes its results into the UMD's per-allocation data. */
static NTSTATUS APIENTRY scribble_create(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args)
{
    NTSTATUS status = soft_ddi.DxgkDdiCreateAllocation(hAdapter, args);

    for (UINT i = 0; !status && i < args->NumAllocations; i++) {
        KMT_SOFT_ALLOCATION_DESC *d = args->pAllocationInfo[i].pPrivateDriverData;
        d->Reserved = 0x5c000000u | i;
    }
    return status;
}

static NTSTATUS APIENTRY failing_open(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args)
{
    return fail_open ? STATUS_NO_MEMORY : soft_ddi.DxgkDdiOpenAllocation(hDevice, args);
}

/* The software miniport with two DDIs wrapped. */
static void scribble_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiCreateAllocation = scribble_create;
    ddi->DxgkDdiOpenAllocation = failing_open;
}

static void setup_scribble(void)
{
    kmt_test_register_soft_variant("soft-scribble", scribble_patch, &soft_ddi);
    kmt_test_use_miniport("soft-scribble");
    device = kmt_test_create_device(&adapter);
    heap = aligned_alloc(4096, HEAP_SIZE);
    ck_assert_ptr_nonnull(heap);
    live_at_start = KmtLiveObjectCount();
}

/* A resource of three driver-private allocations whose private data is
 * descs[i]; the outputs start as 0xcccccccc. */
static NTSTATUS create_three_in_resource(bool v2, KMT_SOFT_ALLOCATION_DESC *const descs[3],
                                         D3DKMT_CREATEALLOCATION *ca)
{
    D3DDDI_ALLOCATIONINFO info[3];
    D3DDDI_ALLOCATIONINFO2 info2[3];
    NTSTATUS status;

    memset(info, 0, sizeof(info));
    memset(info2, 0, sizeof(info2));
    for (UINT i = 0; i < 3; i++) {
        info[i].pPrivateDriverData = info2[i].pPrivateDriverData = descs[i];
        info[i].PrivateDriverDataSize = info2[i].PrivateDriverDataSize = sizeof(*descs[i]);
        info[i].hAllocation = info2[i].hAllocation = 0xcccccccc;
    }
    memset(ca, 0, sizeof(*ca));
    ca->hDevice = device;
    ca->NumAllocations = 3;
    ca->Flags.CreateResource = 1;
    if (v2)
        ca->pAllocationInfo2 = info2;
    else
        ca->pAllocationInfo = info;
    status = v2 ? D3DKMTCreateAllocation2(ca) : D3DKMTCreateAllocation(ca);
    for (UINT i = 0; status && i < 3; i++)
        ck_assert_uint_eq(v2 ? info2[i].hAllocation : info[i].hAllocation, 0xcccccccc);
    ca->pAllocationInfo = NULL;      /* the arrays end here */
    return status;
}

START_TEST(private_data_is_in_out)
{
    KMT_SOFT_ALLOCATION_DESC desc[3] = {
        kmt_test_soft_desc(4096), kmt_test_soft_desc(4096), kmt_test_soft_desc(4096),
    };
    KMT_SOFT_ALLOCATION_DESC *const descs[3] = { &desc[0], &desc[1], &desc[2] };
    D3DKMT_CREATEALLOCATION ca;

    ck_assert_status(create_three_in_resource(_i, descs, &ca), STATUS_SUCCESS);
    for (UINT i = 0; i < 3; i++) {
        ck_assert_uint_eq(desc[i].Reserved, 0x5c000000u | i);   /* the driver's answer */
        ck_assert_uint_eq(desc[i].Magic, KMT_SOFT_ALLOCATION_MAGIC);
    }
    ck_assert_status(destroy_resource(ca.hResource), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

/* The driver answers in the private data: a read-only buffer refuses the
 * whole call with STATUS_ACCESS_VIOLATION before anything is written or
 * published, and hands out no handle. */
START_TEST(answer_into_read_only_private_data_is_refused)
{
    KMT_SOFT_ALLOCATION_DESC *desc = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                          -1, 0);
    KMT_SOFT_ALLOCATION_DESC *ro = (KMT_SOFT_ALLOCATION_DESC *)((char *)desc + 4096);
    KMT_SOFT_ALLOCATION_DESC *const descs[3] = { &desc[0], &desc[1], ro };
    D3DKMT_CREATEALLOCATION ca;
    D3DKMT_HANDLE h;

    ck_assert_ptr_ne(desc, MAP_FAILED);
    desc[0] = desc[1] = *ro = kmt_test_soft_desc(4096);
    ck_assert_int_eq(mprotect(ro, 4096, PROT_READ), 0);
    ck_assert_status(create_three_in_resource(_i, descs, &ca), STATUS_ACCESS_VIOLATION);
    ck_assert_uint_eq(ca.hResource, 0);
    ck_assert_uint_eq(desc[0].Reserved, 0);        /* all or nothing: no answer written */
    ck_assert_uint_eq(desc[1].Reserved, 0);
    assert_nothing_created(NULL);
    ck_assert_status(create_private(_i, ro, sizeof(*ro), &h), STATUS_ACCESS_VIOLATION);
    ck_assert_status(create_private(_i, &desc[0], sizeof(desc[0]), &h), STATUS_SUCCESS);
    ck_assert_uint_eq(h, H_NEXT);                  /* the refused calls handed out nothing */
    ck_assert_uint_eq(desc[0].Reserved, 0x5c000000u);
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
    ck_assert_int_eq(munmap(desc, 2 * 4096), 0);
}
END_TEST

START_TEST(failed_open_undoes_create)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(4096);
    D3DKMT_HANDLE h, a[3], res;

    fail_open = true;
    /* the miniport created them, then binding failed: everything goes */
    ck_assert_status(kmt_test_create_allocations(device, 3, 4096, a, &res), STATUS_NO_MEMORY);
    ck_assert_status(create_private(_i, &desc, sizeof(desc), &h), STATUS_NO_MEMORY);
    ck_assert_uint_eq(h, 0xcccccccc);
    ck_assert_uint_eq(desc.Reserved, 0);   /* no output on failure */
    assert_nothing_created(NULL);
    fail_open = false;
    ck_assert_status(create_private(_i, &desc, sizeof(desc), &h), STATUS_SUCCESS);
    ck_assert_uint_eq(h, H_NEXT);                 /* the refused calls handed out nothing */
    ck_assert_status(destroy_one(h), STATUS_SUCCESS);
    assert_nothing_created(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("allocation");
    TCase *rows = tcase_create("windows_rows");
    TCase *rules = tcase_create("rules");
    TCase *soft = tcase_create("soft_descriptor");
    TCase *res = tcase_create("resources");
    TCase *atomic = tcase_create("all_or_nothing");
    TCase *inout = tcase_create("in_out");

    tcase_add_checked_fixture(rows, setup, teardown);
    tcase_add_loop_test(rows, row_zeroed_struct, 0, 2);
    tcase_add_loop_test(rows, row_base, 0, 2);
    tcase_add_loop_test(rows, row_private_driver_and_runtime_data, 0, 2);
    tcase_add_loop_test(rows, row_driver_data_with_standard_allocation, 0, 2);
    tcase_add_loop_test(rows, row_bad_device, 0, 2);
    tcase_add_loop_test(rows, row_garbage_resource_handle, 0, 2);
    tcase_add_loop_test(rows, row_allocation_count, 0, 2);
    tcase_add_loop_test(rows, row_standard_descriptor, 0, 2);
    tcase_add_loop_test(rows, row_flag_pairs, 0, 2);
    tcase_add_loop_test(rows, row_shared_needs_resource, 0, 2);
    tcase_add_loop_test(rows, row_create_resource_with_garbage_handle, 0, 2);
    tcase_add_loop_test(rows, row_create_resource, 0, 2);
    tcase_add_loop_test(rows, row_add_to_existing_standard_resource, 0, 2);
    tcase_add_loop_test(rows, row_create_resource_without_allocations, 0, 2);
    tcase_add_loop_test(rows, row_create_shared, 0, 2);
    tcase_add_loop_test(rows, row_create_shared_nt_security, 0, 2);
    tcase_add_loop_test(rows, shared_resource_is_sealed, 0, 2);
    suite_add_tcase(s, rows);

    tcase_add_checked_fixture(rules, setup, teardown);
    tcase_add_loop_test(rules, reserved_and_unsupported_flags, 0, 2);
    tcase_add_loop_test(rules, harmless_flags_accepted, 0, 2);
    tcase_add_loop_test(rules, null_allocation_info, 0, 2);
    tcase_add_loop_test(rules, garbage_pointers, 0, 2);
    tcase_add_loop_test(rules, garbage_system_memory, 0, 2);
    tcase_add_loop_test(rules, too_many_allocations, 0, 2);
    tcase_add_loop_test(rules, private_data_limits, 0, 2);
    tcase_add_loop_test(rules, sysmem_all_or_none, 0, 2);
    tcase_add_loop_test(rules, sysmem_must_cover_the_allocation, 0, 2);
    tcase_add_loop_test(rules, refused_creates_hand_out_nothing, 0, 2);
    tcase_add_loop_test(rules, read_only_private_data_is_input, 0, 2);
    tcase_add_test(rules, read_only_answer_buffers_are_refused);
    tcase_add_test(rules, stale_handle_after_slot_reuse);
    suite_add_tcase(s, rules);

    tcase_add_checked_fixture(soft, setup, teardown);
    tcase_add_loop_test(soft, soft_descriptor_accepted, 0, 2);
    tcase_add_loop_test(soft, soft_descriptor_rejected, 0, 2);
    tcase_add_loop_test(soft, soft_descriptor_too_big, 0, 2);
    tcase_add_loop_test(soft, soft_descriptor_in_longer_blob, 0, 2);
    suite_add_tcase(s, soft);

    tcase_add_checked_fixture(res, setup, teardown);
    tcase_set_timeout(res, 60);
    tcase_add_loop_test(res, resource_with_n_allocations, 0,
                        (int)(sizeof(resource_sizes) / sizeof(resource_sizes[0])));
    tcase_add_test(res, standalone_batch_of_1024);
    tcase_add_loop_test(res, add_to_private_resource, 0, 2);
    tcase_add_loop_test(res, add_to_resource_wrong_handles, 0, 2);
    tcase_add_loop_test(res, resource_level_driver_data, 0, 2);
    suite_add_tcase(s, res);

    tcase_add_checked_fixture(atomic, setup, teardown);
    tcase_add_loop_test(atomic, failure_half_way_leaves_nothing, 0, 2);
    tcase_add_loop_test(atomic, failure_half_way_in_resource, 0, 2);
    tcase_add_loop_test(atomic, failure_when_joining_resource, 0, 2);
    suite_add_tcase(s, atomic);

    tcase_add_checked_fixture(inout, setup_scribble, teardown);
    tcase_add_loop_test(inout, private_data_is_in_out, 0, 2);
    tcase_add_loop_test(inout, failed_open_undoes_create, 0, 2);
    tcase_add_loop_test(inout, answer_into_read_only_private_data_is_refused, 0, 2);
    suite_add_tcase(s, inout);
    return kmt_test_run(s);
}
