/*
 * Lock / Unlock / Lock2 / Unlock2 on the software adapter: real memory,
 * nesting, all-or-nothing unlock lists, existing system memory, Discard,
 * and what a destroy does to a mapping.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "test_util.h"

#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)
#define SIZE 8192u

static D3DKMT_HANDLE adapter, device;

static void setup(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
}

static D3DKMT_HANDLE new_allocation(void)
{
    D3DKMT_HANDLE h;

    ck_assert_status(kmt_test_create_allocations(device, 1, SIZE, &h, NULL), STATUS_SUCCESS);
    return h;
}

static NTSTATUS lock2_on(D3DKMT_HANDLE dev, D3DKMT_HANDLE alloc, void **data)
{
    D3DKMT_LOCK2 l = { 0 };
    NTSTATUS status;

    l.hDevice = dev;
    l.hAllocation = alloc;
    l.pData = (void *)0x1;
    status = D3DKMTLock2(&l);
    if (status)
        ck_assert_ptr_eq(l.pData, (void *)0x1);      /* no output on failure */
    if (data)
        *data = l.pData;
    return status;
}

static NTSTATUS lock2(D3DKMT_HANDLE alloc, void **data)
{
    return lock2_on(device, alloc, data);
}

static NTSTATUS unlock2_on(D3DKMT_HANDLE dev, D3DKMT_HANDLE alloc)
{
    D3DKMT_UNLOCK2 u = { dev, alloc };
    return D3DKMTUnlock2(&u);
}

static NTSTATUS unlock2(D3DKMT_HANDLE alloc)
{
    return unlock2_on(device, alloc);
}

static NTSTATUS unlock_list(const D3DKMT_HANDLE *list, UINT count)
{
    D3DKMT_UNLOCK u = { 0 };

    u.hDevice = device;
    u.NumAllocations = count;
    u.phAllocations = list;
    return D3DKMTUnlock(&u);
}

static NTSTATUS lock1(D3DKMT_HANDLE alloc, UINT flags, void **data)
{
    D3DKMT_LOCK l = { 0 };
    NTSTATUS status;

    l.hDevice = device;
    l.hAllocation = alloc;
    l.Flags.Value = flags;
    l.GpuVirtualAddress = 0x77;
    status = D3DKMTLock(&l);
    if (!status)
        ck_assert_uint_eq(l.GpuVirtualAddress, 0);  /* the software adapter has no GPU VA */
    *data = l.pData;
    return status;
}

static NTSTATUS destroy_one(D3DKMT_HANDLE alloc)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };

    d.hDevice = device;
    d.phAllocationList = &alloc;
    d.AllocationCount = 1;
    return D3DKMTDestroyAllocation(&d);
}

/* Whether [p, p+len) is mapped in this process (mincore fails with ENOMEM
 * on unmapped pages). */
/* Is [p, p+len) still mapped from an allocation's memfd?  Reading
 * /proc/self/maps, not mincore(): once unmapped, the range may be reused by
 * any other mapping of the process (the sanitizer's allocator, say). */
static bool is_mapped(void *p, size_t len)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    uintptr_t start, end, at = (uintptr_t)p;
    char line[512];
    bool found = false;

    ck_assert_ptr_nonnull(maps);
    while (!found && fgets(line, sizeof(line), maps)) {
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) != 2)
            continue;
        found = at < end && at + len > start && strstr(line, "kmtshim-soft-allocation");
    }
    fclose(maps);
    return found;
}

/* ---- basics ---------------------------------------------------------------------------------- */

START_TEST(lock2_maps_real_memory)
{
    D3DKMT_HANDLE a = new_allocation();
    unsigned char *p;

    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 4096, 0);
    for (unsigned i = 0; i < SIZE; i++)
        if (p[i])
            ck_abort_msg("fresh memory: byte %u is %#x", i, p[i]);
    for (unsigned i = 0; i < SIZE; i++)
        p[i] = (unsigned char)(i * 7);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert(!is_mapped(p, SIZE));        /* the last unlock unmaps */

    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    for (unsigned i = 0; i < SIZE; i++)
        if (p[i] != (unsigned char)(i * 7))
            ck_abort_msg("byte %u is %u after a lock cycle", i, p[i]);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

START_TEST(allocations_have_separate_memory)
{
    D3DKMT_HANDLE a = new_allocation(), b = new_allocation();
    unsigned char *pa, *pb;

    ck_assert_status(lock2(a, (void **)&pa), STATUS_SUCCESS);
    ck_assert_status(lock2(b, (void **)&pb), STATUS_SUCCESS);
    ck_assert_ptr_ne(pa, pb);
    memset(pa, 0x11, SIZE);
    memset(pb, 0x22, SIZE);
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, b }, 2), STATUS_SUCCESS);
    ck_assert_status(lock2(a, (void **)&pa), STATUS_SUCCESS);
    ck_assert_uint_eq(pa[0], 0x11);
    ck_assert_uint_eq(pa[SIZE - 1], 0x11);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

START_TEST(lock_v1_and_unlock_list)
{
    D3DKMT_HANDLE a = new_allocation();
    unsigned char *p;

    ck_assert_status(lock1(a, 0, (void **)&p), STATUS_SUCCESS);
    memset(p, 0x42, SIZE);
    ck_assert_status(unlock_list(&a, 1), STATUS_SUCCESS);
    /* Lock2 sees what Lock wrote, and Unlock2 undoes a Lock */
    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    ck_assert_uint_eq(p[123], 0x42);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert_status(lock1(a, 0, (void **)&p), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(lock_read_only)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DDDICB_LOCKFLAGS f = { .Value = 0 };
    unsigned char *p;

    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    p[5] = 0x99;
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    f.ReadOnly = 1;
    ck_assert_status(lock1(a, f.Value, (void **)&p), STATUS_SUCCESS);
    ck_assert_uint_eq(p[5], 0x99);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

/* A locked address is readable and writable whatever the flags: a nested
 * write lock of a ReadOnly lock's mapping writes through it. */
START_TEST(nested_write_lock_under_a_read_only_lock)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DDDICB_LOCKFLAGS f = { .Value = 0 };
    unsigned char *p, *q;

    f.ReadOnly = 1;
    ck_assert_status(lock1(a, f.Value, (void **)&p), STATUS_SUCCESS);
    ck_assert_status(lock2(a, (void **)&q), STATUS_SUCCESS);
    ck_assert_ptr_eq(p, q);
    q[7] = 0x5a;
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    ck_assert_uint_eq(p[7], 0x5a);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

START_TEST(nested_locks_share_the_mapping)
{
    D3DKMT_HANDLE a = new_allocation();
    void *p1, *p2, *p3;

    ck_assert_status(lock2(a, &p1), STATUS_SUCCESS);
    ck_assert_status(lock2(a, &p2), STATUS_SUCCESS);
    ck_assert_status(lock1(a, 0, &p3), STATUS_SUCCESS);
    ck_assert_ptr_eq(p1, p2);
    ck_assert_ptr_eq(p1, p3);
    /* locks count per allocation: as many unlocks as locks */
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    memset(p1, 0x33, SIZE);                /* still mapped */
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert(is_mapped(p1, SIZE));
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert(!is_mapped(p1, SIZE));
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(unlock_of_unlocked)
{
    D3DKMT_HANDLE a = new_allocation();

    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
    ck_assert_status(unlock_list(&a, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(a, NULL), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(unlock_list_all_or_nothing)
{
    D3DKMT_HANDLE a = new_allocation(), b = new_allocation();
    void *pa;

    ck_assert_status(lock2(a, &pa), STATUS_SUCCESS);
    /* b is not locked: the whole call fails and a stays locked */
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, b }, 2), STATUS_INVALID_PARAMETER);
    ck_assert(is_mapped(pa, SIZE));
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ b, a }, 2), STATUS_INVALID_PARAMETER);
    /* a listed twice but locked once */
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, a }, 2), STATUS_INVALID_PARAMETER);
    /* an invalid handle anywhere */
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, 0xdeadbeef }, 2), STATUS_INVALID_PARAMETER);
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, device }, 2), STATUS_INVALID_PARAMETER);
    ck_assert(is_mapped(pa, SIZE));
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(unlock_list_twice_listed)
{
    D3DKMT_HANDLE a = new_allocation(), b = new_allocation();
    void *pa, *pb;

    ck_assert_status(lock2(a, &pa), STATUS_SUCCESS);
    ck_assert_status(lock2(a, NULL), STATUS_SUCCESS);
    ck_assert_status(lock2(b, &pb), STATUS_SUCCESS);
    /* a locked twice may be listed twice */
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, b, a }, 3), STATUS_SUCCESS);
    ck_assert(!is_mapped(pa, SIZE));
    ck_assert(!is_mapped(pb, SIZE));
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
    ck_assert_status(unlock2(b), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(unlock_bad_lists)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DKMT_HANDLE *many = calloc(D3DKMT_CREATEALLOCATION_MAX + 1, sizeof(*many));
    D3DKMT_UNLOCK u = { 0 };

    ck_assert_ptr_nonnull(many);
    ck_assert_status(lock2(a, NULL), STATUS_SUCCESS);
    ck_assert_status(D3DKMTUnlock(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTUnlock(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    u.hDevice = device;
    u.NumAllocations = 0;
    u.phAllocations = &a;
    ck_assert_status(D3DKMTUnlock(&u), STATUS_INVALID_PARAMETER);
    u.NumAllocations = 1;
    u.phAllocations = NULL;
    ck_assert_status(D3DKMTUnlock(&u), STATUS_INVALID_PARAMETER);
    u.phAllocations = GARBAGE_PTR;
    ck_assert_status(D3DKMTUnlock(&u), STATUS_INVALID_PARAMETER);
    for (unsigned i = 0; i <= D3DKMT_CREATEALLOCATION_MAX; i++)
        many[i] = a;
    u.phAllocations = many;
    u.NumAllocations = D3DKMT_CREATEALLOCATION_MAX + 1;
    ck_assert_status(D3DKMTUnlock(&u), STATUS_INVALID_PARAMETER);
    u.phAllocations = &a;
    u.NumAllocations = 1;
    u.hDevice = 0;
    ck_assert_status(D3DKMTUnlock(&u), STATUS_INVALID_PARAMETER);
    free(many);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

/* ---- existing system memory -------------------------------------------------------------------- */

START_TEST(existing_sysmem_lock_returns_callers_buffer)
{
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    unsigned char *mem = aligned_alloc(4096, 0x10000), *p, *q;

    ck_assert_ptr_nonnull(mem);
    memset(mem, 0x6b, 0x10000);
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

    ck_assert_status(lock2(info.hAllocation, (void **)&p), STATUS_SUCCESS);
    ck_assert_ptr_eq(p, mem);
    ck_assert_status(lock1(info.hAllocation, 0, (void **)&q), STATUS_SUCCESS);
    ck_assert_ptr_eq(q, mem);
    p[100] = 0x01;
    ck_assert_uint_eq(mem[100], 0x01);
    ck_assert_status(unlock2(info.hAllocation), STATUS_SUCCESS);
    ck_assert_status(unlock2(info.hAllocation), STATUS_SUCCESS);
    ck_assert_status(unlock2(info.hAllocation), STATUS_INVALID_PARAMETER);
    /* Discard never wipes the caller's own memory */
    {
        D3DDDICB_LOCKFLAGS f = { .Value = 0 };
        f.Discard = 1;
        ck_assert_status(lock1(info.hAllocation, f.Value, (void **)&p), STATUS_SUCCESS);
        ck_assert_uint_eq(p[200], 0x6b);
        ck_assert_status(unlock2(info.hAllocation), STATUS_SUCCESS);
    }
    /* destroying it leaves the memory to its owner */
    ck_assert_status(lock2(info.hAllocation, NULL), STATUS_SUCCESS);
    ck_assert_status(destroy_one(info.hAllocation), STATUS_SUCCESS);
    ck_assert_uint_eq(mem[100], 0x01);
    mem[0] = 0;                            /* still ours, still mapped */
    free(mem);
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------------- */

START_TEST(lock2_reserved_flags)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DKMT_LOCK2 l = { 0 };

    l.hDevice = device;
    l.hAllocation = a;
    l.Flags.Value = 1;
    ck_assert_status(D3DKMTLock2(&l), STATUS_INVALID_PARAMETER);
    l.Flags.Value = 0x80000000u;
    ck_assert_status(D3DKMTLock2(&l), STATUS_INVALID_PARAMETER);
    ck_assert_ptr_null(l.pData);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);   /* nothing was locked */
}
END_TEST

START_TEST(lock_null_and_garbage_desc)
{
    ck_assert_status(D3DKMTLock2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTLock2(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTLock(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTLock((void *)0x10), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTUnlock2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTUnlock2(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(lock_bad_pages)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DKMT_LOCK l = { 0 };

    l.hDevice = device;
    l.hAllocation = a;
    l.NumPages = 1;
    l.pPages = NULL;
    ck_assert_status(D3DKMTLock(&l), STATUS_INVALID_PARAMETER);
    l.pPages = GARBAGE_PTR;
    ck_assert_status(D3DKMTLock(&l), STATUS_INVALID_PARAMETER);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(lock_bad_handles)
{
    D3DKMT_HANDLE a = new_allocation(), a2[2], res;

    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, a2, &res), STATUS_SUCCESS);
    ck_assert_status(lock2_on(0, a, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2_on(0xdeadbeef, a, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2_on(adapter, a, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2_on(a, a, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(0, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(0xdeadbeef, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(a | 2, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(a + 0x40000000u, NULL), STATUS_INVALID_PARAMETER);   /* stale form */
    ck_assert_status(lock2(device, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(adapter, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(res, NULL), STATUS_INVALID_PARAMETER);   /* a resource is not mappable */
    ck_assert_status(unlock2_on(0, a), STATUS_INVALID_PARAMETER);
    ck_assert_status(unlock2(res), STATUS_INVALID_PARAMETER);
    /* its allocations are */
    ck_assert_status(lock2(a2[1], NULL), STATUS_SUCCESS);
    ck_assert_status(unlock2(a2[1]), STATUS_SUCCESS);
}
END_TEST

START_TEST(lock_wrong_device)
{
    D3DKMT_HANDLE a = new_allocation(), other;
    D3DKMT_CREATEDEVICE cd = { 0 };
    void *p;

    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    other = cd.hDevice;
    ck_assert_status(lock2_on(other, a, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(lock2(a, &p), STATUS_SUCCESS);
    ck_assert_status(unlock2_on(other, a), STATUS_INVALID_PARAMETER);
    ck_assert(is_mapped(p, SIZE));
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

START_TEST(lock_after_destroy)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DKMT_DESTROYDEVICE dd = { 0 };

    ck_assert_status(destroy_one(a), STATUS_SUCCESS);
    ck_assert_status(lock2(a, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
    a = new_allocation();
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    ck_assert_status(lock2(a, NULL), STATUS_INVALID_PARAMETER);
}
END_TEST

/* ---- destroy of a locked allocation ----------------------------------------------------------- */

START_TEST(destroy_locked_allocation_unmaps)
{
    D3DKMT_HANDLE a = new_allocation();
    KMT_SOFT_ESCAPE st;
    void *p;

    ck_assert_status(lock2(a, &p), STATUS_SUCCESS);
    ck_assert_status(lock2(a, NULL), STATUS_SUCCESS);
    memset(p, 0x7f, SIZE);
    ck_assert(is_mapped(p, SIZE));
    ck_assert_status(destroy_one(a), STATUS_SUCCESS);
    ck_assert(!is_mapped(p, SIZE));
    st = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(st.Stats.Allocations, 0);
    ck_assert_uint_eq(st.Stats.BytesAllocated, 0);
    ck_assert_status(unlock2(a), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(destroy_device_with_locked_allocations)
{
    D3DKMT_HANDLE a[3], res;
    D3DKMT_DESTROYDEVICE dd = { 0 };
    void *p[3];

    ck_assert_status(kmt_test_create_allocations(device, 3, SIZE, a, &res), STATUS_SUCCESS);
    for (int i = 0; i < 3; i++)
        ck_assert_status(lock2(a[i], &p[i]), STATUS_SUCCESS);
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    for (int i = 0; i < 3; i++)
        ck_assert(!is_mapped(p[i], SIZE));
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 0);
}
END_TEST

START_TEST(shutdown_with_locked_allocation)
{
    D3DKMT_HANDLE a = new_allocation();
    void *p;

    ck_assert_status(lock2(a, &p), STATUS_SUCCESS);
    KmtProcessShutdown();
    ck_assert(!is_mapped(p, SIZE));
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
}
END_TEST

/* ---- Discard ----------------------------------------------------------------------------------- */

START_TEST(discard_zeroes)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DDDICB_LOCKFLAGS f = { .Value = 0 };
    unsigned char *p;

    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    memset(p, 0xee, SIZE);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    f.Discard = 1;
    ck_assert_status(lock1(a, f.Value, (void **)&p), STATUS_SUCCESS);
    for (unsigned i = 0; i < SIZE; i++)
        if (p[i])
            ck_abort_msg("byte %u survived a Discard lock: %#x", i, p[i]);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

/* The old pages are dropped, not overwritten: a Discard lock leaves none of
 * them resident (writing zeros over a large allocation took time in
 * proportion to its size and committed all of its memory). */
START_TEST(discard_drops_the_pages)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DDDICB_LOCKFLAGS f = { .Value = 0 };
    unsigned char *p, resident[SIZE / 4096];

    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    memset(p, 0xee, SIZE);
    ck_assert_int_eq(mincore(p, SIZE, resident), 0);
    for (unsigned i = 0; i < SIZE / 4096; i++)
        ck_assert_uint_eq(resident[i] & 1, 1);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    f.Discard = 1;
    ck_assert_status(lock1(a, f.Value, (void **)&p), STATUS_SUCCESS);
    ck_assert_int_eq(mincore(p, SIZE, resident), 0);
    for (unsigned i = 0; i < SIZE / 4096; i++)
        ck_assert_msg(!(resident[i] & 1), "page %u still resident after a Discard lock", i);
    ck_assert_uint_eq(p[SIZE - 1], 0);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

START_TEST(discard_on_nested_lock_keeps_data)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DDDICB_LOCKFLAGS f = { .Value = 0 };
    unsigned char *p, *q;

    ck_assert_status(lock2(a, (void **)&p), STATUS_SUCCESS);
    memset(p, 0xee, SIZE);
    /* The contents are discarded when a mapping is made; a nested lock
     * reuses the mapping someone is writing through, so nothing is wiped. */
    f.Discard = 1;
    ck_assert_status(lock1(a, f.Value, (void **)&q), STATUS_SUCCESS);
    ck_assert_ptr_eq(p, q);
    ck_assert_uint_eq(q[SIZE - 1], 0xee);
    ck_assert_status(unlock_list((D3DKMT_HANDLE[]){ a, a }, 2), STATUS_SUCCESS);
}
END_TEST

START_TEST(lock_flags_pass)
{
    D3DKMT_HANDLE a = new_allocation();
    D3DDDICB_LOCKFLAGS f = { .Value = 0 };
    void *p;

    /* no GPU work is ever queued on the software adapter: no flag waits */
    f.DonotWait = 1;
    ck_assert_status(lock1(a, f.Value, &p), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
    f.Value = 0;
    f.IgnoreSync = 1;
    f.WriteOnly = 1;
    f.LockEntire = 1;
    ck_assert_status(lock1(a, f.Value, &p), STATUS_SUCCESS);
    ck_assert_status(unlock2(a), STATUS_SUCCESS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lock");
    TCase *basic = tcase_create("basic");
    TCase *unlock = tcase_create("unlock");
    TCase *sysmem = tcase_create("sysmem");
    TCase *bad = tcase_create("bad_input");
    TCase *destroy = tcase_create("destroy");
    TCase *flags = tcase_create("flags");

    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, lock2_maps_real_memory);
    tcase_add_test(basic, allocations_have_separate_memory);
    tcase_add_test(basic, lock_v1_and_unlock_list);
    tcase_add_test(basic, lock_read_only);
    tcase_add_test(basic, nested_write_lock_under_a_read_only_lock);
    tcase_add_test(basic, nested_locks_share_the_mapping);
    suite_add_tcase(s, basic);

    tcase_add_checked_fixture(unlock, setup, teardown);
    tcase_add_test(unlock, unlock_of_unlocked);
    tcase_add_test(unlock, unlock_list_all_or_nothing);
    tcase_add_test(unlock, unlock_list_twice_listed);
    tcase_add_test(unlock, unlock_bad_lists);
    suite_add_tcase(s, unlock);

    tcase_add_checked_fixture(sysmem, setup, teardown);
    tcase_add_test(sysmem, existing_sysmem_lock_returns_callers_buffer);
    suite_add_tcase(s, sysmem);

    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, lock2_reserved_flags);
    tcase_add_test(bad, lock_null_and_garbage_desc);
    tcase_add_test(bad, lock_bad_pages);
    tcase_add_test(bad, lock_bad_handles);
    tcase_add_test(bad, lock_wrong_device);
    tcase_add_test(bad, lock_after_destroy);
    suite_add_tcase(s, bad);

    tcase_add_checked_fixture(destroy, setup, teardown);
    tcase_add_test(destroy, destroy_locked_allocation_unmaps);
    tcase_add_test(destroy, destroy_device_with_locked_allocations);
    tcase_add_test(destroy, shutdown_with_locked_allocation);
    suite_add_tcase(s, destroy);

    tcase_add_checked_fixture(flags, setup, teardown);
    tcase_add_test(flags, discard_zeroes);
    tcase_add_test(flags, discard_drops_the_pages);
    tcase_add_test(flags, discard_on_nested_lock_keeps_data);
    tcase_add_test(flags, lock_flags_pass);
    suite_add_tcase(s, flags);
    return kmt_test_run(s);
}
