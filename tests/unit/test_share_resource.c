/*
 * Shared resources: CreateAllocation with CreateShared (and
 * NtSecuritySharing), QueryResourceInfo(FromNtHandle), OpenResource(2),
 * OpenResourceFromNtHandle, ShareObjects, OpenNtHandleFromName and Wine's
 * two escapes, row by row of windows-semantics.md, "Sharing"; the other
 * process is share_resource_peer (peer_util.h).
 *
 * Every case runs its own session broker (kmt_test_private_broker), which
 * the peers it starts share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "exec_util.h"
#include "share_resource_util.h"
#include "broker/broker.h"
#include "fd_pass.h"
#include "peer_util.h"

#define GARBAGE 0xdeadbeefu

static D3DKMT_HANDLE device;

static void setup(void)
{
    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(NULL);
}

static struct share_test_resource create_shared(bool nt)
{
    struct share_test_resource r;

    ck_assert_status(share_test_create(device, nt, NULL, &r), STATUS_SUCCESS);
    ck_assert_local_handle(r.resource);
    ck_assert_local_handle(r.allocation);
    return r;
}

static HANDLE share_one(D3DKMT_HANDLE object, const char *name)
{
    WCHAR wname[64];
    UNICODE_STRING us = { 0 };
    OBJECT_ATTRIBUTES attrs = { sizeof(attrs) };
    HANDLE nt = NULL;
    size_t n = 0;

    if (name) {
        for (; name[n]; n++)
            wname[n] = (WCHAR)name[n];
        us.Buffer = wname;
        us.Length = us.MaximumLength = (USHORT)(n * 2);
        attrs.ObjectName = &us;
    }
    ck_assert_status(D3DKMTShareObjects(1, &object, &attrs, 0x10000000 /* GENERIC_ALL */, &nt), STATUS_SUCCESS);
    ck_assert_int_ge((intptr_t)nt, 0);
    return nt;
}

static OBJECT_ATTRIBUTES *named(const char *name)
{
    static WCHAR wname[64];
    static UNICODE_STRING us;
    static OBJECT_ATTRIBUTES attrs;
    size_t n = 0;

    for (; name[n]; n++)
        wname[n] = (WCHAR)name[n];
    us = (UNICODE_STRING){ (USHORT)(n * 2), (USHORT)(n * 2), wname };
    attrs = (OBJECT_ATTRIBUTES){ .Length = sizeof(attrs), .ObjectName = &us };
    return &attrs;
}

/* ---- global handles ------------------------------------------------------------ */

START_TEST(create_shared_gives_global_handle)
{
    struct share_test_resource r = create_shared(false), nt = create_shared(true);

    ck_assert_uint_ne(r.global, 0);
    ck_assert_uint_eq(r.global & 3, 2);
    ck_assert_uint_eq(nt.global, 0);           /* NtSecuritySharing: NT handles only */
    /* a global handle is no local one */
    ck_assert_status(share_test_destroy(device, r.global), STATUS_INVALID_PARAMETER);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, nt.resource), STATUS_SUCCESS);
}
END_TEST

START_TEST(query_resource_info)
{
    struct share_test_resource r = create_shared(false);
    D3DKMT_QUERYRESOURCEINFO q = { 0 };
    unsigned char runtime[0x100];

    memset(runtime, 0xcc, sizeof(runtime));
    q.hDevice = device;
    q.hGlobalShare = r.global;
    q.pPrivateRuntimeData = runtime;
    q.PrivateRuntimeDataSize = sizeof(runtime);
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.PrivateRuntimeDataSize, 4);
    ck_assert_uint_gt(q.TotalPrivateDriverDataSize, 0);
    ck_assert_uint_lt(q.TotalPrivateDriverDataSize, 0x1000);
    ck_assert_uint_eq(q.ResourcePrivateDriverDataSize, 0);
    ck_assert_uint_eq(q.NumAllocations, 1);
    for (unsigned i = 0; i < sizeof(runtime); i++)
        ck_assert_uint_eq(runtime[i], 0xcc);   /* never written */
}
END_TEST

START_TEST(query_resource_info_bad_input)
{
    struct share_test_resource r = create_shared(false);
    D3DKMT_QUERYRESOURCEINFO q = { 0 };

    ck_assert_status(D3DKMTQueryResourceInfo(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_INVALID_PARAMETER);    /* zeroed */
    q.hDevice = device;
    q.hGlobalShare = r.resource;                  /* a local handle */
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_INVALID_PARAMETER);
    q.hGlobalShare = r.allocation;
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_INVALID_PARAMETER);
    q.hGlobalShare = GARBAGE;
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_INVALID_PARAMETER);
    q.hGlobalShare = r.global;
    q.hDevice = r.resource;                       /* not a device */
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_INVALID_PARAMETER);
    /* stale: the last holder is gone */
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    q.hDevice = device;
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_INVALID_PARAMETER);
}
END_TEST

/* OpenResource's descriptor as the note's row gives it. */
struct open_desc {
    D3DKMT_OPENRESOURCE o;
    D3DDDI_OPENALLOCATIONINFO info;
    D3DDDI_OPENALLOCATIONINFO2 info2;
    UINT runtime;
    unsigned char driver[0x1000], total[0x1000], alloc_data[0x400];
};

static void open_desc_init(struct open_desc *d, D3DKMT_HANDLE global)
{
    memset(d, 0, sizeof(*d));
    d->info.pPrivateDriverData = d->alloc_data;
    d->info.PrivateDriverDataSize = sizeof(d->alloc_data);
    d->info2.pPrivateDriverData = d->alloc_data;
    d->info2.PrivateDriverDataSize = sizeof(d->alloc_data);
    d->o.hDevice = device;
    d->o.hGlobalShare = global;
    d->o.NumAllocations = 1;
    d->o.pOpenAllocationInfo = &d->info;
    d->o.pPrivateRuntimeData = &d->runtime;
    d->o.PrivateRuntimeDataSize = sizeof(d->runtime);
    d->o.pResourcePrivateDriverData = d->driver;
    d->o.ResourcePrivateDriverDataSize = 0;
    d->o.pTotalPrivateDriverDataBuffer = d->total;
    d->o.TotalPrivateDriverDataBufferSize = sizeof(d->total);
    d->o.hResource = GARBAGE;
}

START_TEST(open_resource_same_process_same_bytes)
{
    struct share_test_resource r = create_shared(false);
    KMT_SOFT_ALLOCATION_DESC desc;
    struct open_desc d;
    unsigned char *a, *b;

    open_desc_init(&d, r.global);
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_SUCCESS);
    ck_assert_uint_eq(d.o.hGlobalShare, r.global);
    ck_assert_local_handle(d.o.hResource);
    ck_assert_local_handle(d.info.hAllocation);
    ck_assert_uint_ne(d.o.hResource, r.resource);
    ck_assert_uint_eq(d.runtime, SHARE_TEST_RUNTIME);
    ck_assert_uint_gt(d.info.PrivateDriverDataSize, 0);
    ck_assert_uint_lt(d.info.PrivateDriverDataSize, 0x400);
    memcpy(&desc, d.alloc_data, sizeof(desc));
    ck_assert_uint_eq(desc.Size, SHARE_TEST_SIZE);

    ck_assert_ptr_nonnull(a = share_test_map(device, r.allocation));
    ck_assert_ptr_nonnull(b = share_test_map(device, d.info.hAllocation));
    memset(a, 0x5a, SHARE_TEST_SIZE);
    ck_assert_uint_eq(b[0], 0x5a);
    ck_assert_uint_eq(b[SHARE_TEST_SIZE - 1], 0x5a);
    share_test_unmap(device, r.allocation);
    share_test_unmap(device, d.info.hAllocation);

    /* the creator's handle goes, the opened one holds the object */
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    open_desc_init(&d, r.global);
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, d.o.hResource), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_resource2)
{
    struct share_test_resource r = create_shared(false);
    struct open_desc d;

    open_desc_init(&d, r.global);
    d.o.pOpenAllocationInfo2 = &d.info2;
    ck_assert_status(D3DKMTOpenResource2(&d.o), STATUS_SUCCESS);
    ck_assert_local_handle(d.o.hResource);
    ck_assert_local_handle(d.info2.hAllocation);
    ck_assert_uint_gt(d.info2.PrivateDriverDataSize, 0);
    ck_assert_uint_eq(d.runtime, SHARE_TEST_RUNTIME);
    ck_assert_status(share_test_destroy(device, d.o.hResource), STATUS_SUCCESS);
}
END_TEST

/* The opened allocation is mapped into the engine's address space as a
 * created one is: OpenResource2 reports its own GPU VA, and a command
 * written through it lands in the creator's bytes. */
START_TEST(opened_allocation_has_a_gpu_va_of_its_own)
{
    struct share_test_resource r = create_shared(false);
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(device);
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    struct open_desc d;
    UINT64 *mine;

    open_desc_init(&d, r.global);
    d.o.pOpenAllocationInfo2 = &d.info2;
    ck_assert_status(D3DKMTOpenResource2(&d.o), STATUS_SUCCESS);
    ck_assert_uint_ne(d.info2.GpuVirtualAddress, 0);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, d.info2.GpuVirtualAddress + 8, 0x0b5e55edull);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_ptr_nonnull(mine = (UINT64 *)share_test_map(device, r.allocation));
    ck_assert_uint_eq(mine[1], 0x0b5e55edull);
    share_test_unmap(device, r.allocation);
    ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);
    kmt_ring_destroy(device, &ring);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, d.o.hResource), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_resource_exact_sizes)
{
    struct share_test_resource r = create_shared(false);
    struct open_desc d;

    open_desc_init(&d, r.global);
    d.o.NumAllocations = 0;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(d.o.hResource, GARBAGE);
    open_desc_init(&d, r.global);
    d.o.NumAllocations = 2;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.global);
    d.o.PrivateRuntimeDataSize = 5;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.global);
    d.o.PrivateRuntimeDataSize = 3;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.global);
    d.o.ResourcePrivateDriverDataSize = 1;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.global);
    d.o.pTotalPrivateDriverDataBuffer = NULL;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.global);
    d.o.TotalPrivateDriverDataBufferSize = sizeof(KMT_SOFT_ALLOCATION_DESC) - 1;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_NO_MEMORY);
    open_desc_init(&d, r.global);
    d.o.pOpenAllocationInfo = NULL;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    /* nothing was made by the refusals */
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_resource_bad_handles)
{
    struct share_test_resource r = create_shared(false);
    struct open_desc d;

    ck_assert_status(D3DKMTOpenResource(NULL), STATUS_INVALID_PARAMETER);
    memset(&d, 0, sizeof(d));
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.resource);               /* local handle as hGlobalShare */
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, 0);
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    open_desc_init(&d, r.global);
    d.o.hDevice = GARBAGE;
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    open_desc_init(&d, r.global);                 /* stale */
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(existing_sysmem_opens_in_its_process)
{
    struct share_test_resource r, o;
    unsigned char *mem = aligned_alloc(4096, SHARE_TEST_SIZE), *p;

    ck_assert_ptr_nonnull(mem);
    memset(mem, 0x33, SHARE_TEST_SIZE);
    ck_assert_status(share_test_create(device, false, mem, &r), STATUS_SUCCESS);
    ck_assert_uint_eq(r.global & 3, 2);
    ck_assert_status(share_test_open(device, r.global, &o), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(p = share_test_map(device, o.allocation));
    ck_assert_uint_eq(p[100], 0x33);
    share_test_unmap(device, o.allocation);
    ck_assert_status(share_test_destroy(device, o.resource), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
    free(mem);
}
END_TEST

/* ---- ShareObjects, NT handles, names ----------------------------------------------- */

START_TEST(share_objects_invalid_combinations)
{
    struct share_test_resource g = create_shared(false), n = create_shared(true);
    D3DKMT_HANDLE three[4] = { n.resource, n.resource, n.resource, n.resource };
    HANDLE nt = (HANDLE)(intptr_t)GARBAGE;

    ck_assert_status(D3DKMTShareObjects(1, &n.allocation, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(1, &g.resource, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(1, &g.global, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(0, three, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(2, three, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(3, three, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(4, three, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(1, NULL, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTShareObjects(1, &n.resource, NULL, 0x10000000, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_ptr_eq(nt, (HANDLE)(intptr_t)GARBAGE);
    ck_assert_status(share_test_destroy(device, n.resource), STATUS_SUCCESS);
    ck_assert_status(D3DKMTShareObjects(1, &n.resource, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
}
END_TEST

/* The keyed mutex's rows: it shares only bundled with a resource and a
 * sync object, and a resource's NT handle is no keyed mutex's. */
START_TEST(share_objects_with_keyed_mutex)
{
    struct share_test_resource r = create_shared(true);
    D3DKMT_CREATEKEYEDMUTEX2 km = { 0 };
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE open = { 0 };
    D3DKMT_DESTROYKEYEDMUTEX destroy = { 0 };
    HANDLE nt = (HANDLE)(intptr_t)GARBAGE;
    D3DKMT_HANDLE objects[3];
    UINT runtime = 0;

    km.Flags.NtSecuritySharing = 1;
    ck_assert_status(D3DKMTCreateKeyedMutex2(&km), STATUS_SUCCESS);
    ck_assert_status(D3DKMTShareObjects(1, &km.hKeyedMutex, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    objects[0] = r.resource;
    objects[1] = km.hKeyedMutex;
    ck_assert_status(D3DKMTShareObjects(2, objects, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    objects[2] = r.resource;                      /* no sync object in the third place */
    ck_assert_status(D3DKMTShareObjects(3, objects, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    objects[0] = km.hKeyedMutex;                  /* out of order */
    objects[1] = r.resource;
    ck_assert_status(D3DKMTShareObjects(3, objects, NULL, 0x10000000, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_ptr_eq(nt, (HANDLE)(intptr_t)GARBAGE);

    nt = share_one(r.resource, NULL);
    open.hNtHandle = nt;
    open.pPrivateRuntimeData = &runtime;
    open.PrivateRuntimeDataSize = sizeof(runtime);
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(&open), STATUS_OBJECT_TYPE_MISMATCH);
    close((int)(intptr_t)nt);
    destroy.hKeyedMutex = km.hKeyedMutex;
    ck_assert_status(D3DKMTDestroyKeyedMutex(&destroy), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

START_TEST(nt_handle_query_and_open)
{
    struct share_test_resource r = create_shared(true), o;
    D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE q = { 0 };
    HANDLE nt = share_one(r.resource, NULL);
    unsigned char *a, *b;

    q.hDevice = device;
    q.hNtHandle = nt;
    q.PrivateRuntimeDataSize = GARBAGE;
    q.TotalPrivateDriverDataSize = GARBAGE;
    q.NumAllocations = GARBAGE;
    ck_assert_status(D3DKMTQueryResourceInfoFromNtHandle(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.PrivateRuntimeDataSize, 4);
    ck_assert_uint_eq(q.NumAllocations, 1);
    ck_assert_uint_gt(q.TotalPrivateDriverDataSize, 0);

    ck_assert_status(share_test_open_nt(device, nt, &o), STATUS_SUCCESS);
    ck_assert_local_handle(o.resource);
    ck_assert_ptr_nonnull(a = share_test_map(device, r.allocation));
    ck_assert_ptr_nonnull(b = share_test_map(device, o.allocation));
    a[7] = 0x77;
    ck_assert_uint_eq(b[7], 0x77);
    share_test_unmap(device, r.allocation);
    share_test_unmap(device, o.allocation);
    ck_assert_status(share_test_destroy(device, o.resource), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    /* the NT handle alone keeps the object */
    ck_assert_status(share_test_open_nt(device, nt, &o), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, o.resource), STATUS_SUCCESS);
    close((int)(intptr_t)nt);
    ck_assert_status(D3DKMTQueryResourceInfoFromNtHandle(&q), STATUS_INVALID_HANDLE);   /* closed */
}
END_TEST

START_TEST(open_from_nt_handle_rows)
{
    struct share_test_resource r = create_shared(true);
    HANDLE nt = share_one(r.resource, NULL);
    D3DDDI_OPENALLOCATIONINFO2 info = { 0 };
    D3DKMT_OPENRESOURCEFROMNTHANDLE o, base = { 0 };
    unsigned char runtime[4], total[0x1000], alloc_data[0x400];
    int pipefd[2];

    info.pPrivateDriverData = alloc_data;
    info.PrivateDriverDataSize = sizeof(alloc_data);
    base.hDevice = device;
    base.hNtHandle = nt;
    base.NumAllocations = 1;
    base.pOpenAllocationInfo2 = &info;
    base.pPrivateRuntimeData = runtime;
    base.PrivateRuntimeDataSize = sizeof(runtime);
    base.pTotalPrivateDriverDataBuffer = total;
    base.TotalPrivateDriverDataBufferSize = sizeof(total);
    base.hKeyedMutex = base.hSyncObject = GARBAGE;
    base.KeyedMutexPrivateRuntimeDataSize = GARBAGE;

    o = base;
    o.pOpenAllocationInfo2 = NULL;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_INVALID_PARAMETER);
    o = base;
    o.NumAllocations = 0;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_INVALID_PARAMETER);
    o = base;
    o.pPrivateRuntimeData = NULL;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_INVALID_PARAMETER);
    o = base;
    o.PrivateRuntimeDataSize++;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_INVALID_PARAMETER);
    o = base;
    o.pTotalPrivateDriverDataBuffer = NULL;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_INVALID_PARAMETER);
    o = base;
    o.TotalPrivateDriverDataBufferSize = sizeof(KMT_SOFT_ALLOCATION_DESC) - 1;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_NO_MEMORY);

    /* NT handles that are not a resource's */
    ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
    o = base;
    o.hNtHandle = (HANDLE)(intptr_t)pipefd[0];
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_OBJECT_TYPE_MISMATCH);
    close(pipefd[0]);
    close(pipefd[1]);
    o = base;
    o.hNtHandle = NULL;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_INVALID_HANDLE);

    o = base;
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&o), STATUS_SUCCESS);
    ck_assert_local_handle(o.hResource);
    ck_assert_local_handle(info.hAllocation);
    ck_assert_uint_eq(o.hKeyedMutex, 0);
    ck_assert_uint_eq(o.hSyncObject, 0);
    ck_assert_uint_eq(o.KeyedMutexPrivateRuntimeDataSize, 0);
    ck_assert_uint_eq(*(UINT *)runtime, SHARE_TEST_RUNTIME);
    ck_assert_status(share_test_destroy(device, o.hResource), STATUS_SUCCESS);
    close((int)(intptr_t)nt);
    ck_assert_status(D3DKMTOpenResourceFromNtHandle(&base), STATUS_INVALID_HANDLE);    /* closed */
}
END_TEST

START_TEST(open_nt_handle_from_name)
{
    struct share_test_resource r = create_shared(true), o;
    D3DKMT_OPENNTHANDLEFROMNAME n = { 0 };
    HANDLE nt = share_one(r.resource, "\\BaseNamedObjects\\kmtshim-share-test");

    ck_assert_status(D3DKMTOpenNtHandleFromName(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenNtHandleFromName(&n), STATUS_INVALID_PARAMETER);    /* zeroed */
    n.dwDesiredAccess = 0x10000000;
    n.pObjAttrib = named("\\BaseNamedObjects\\no-such-share");
    ck_assert_status(D3DKMTOpenNtHandleFromName(&n), STATUS_OBJECT_NAME_NOT_FOUND);
    n.pObjAttrib = named("\\BaseNamedObjects\\KMTSHIM-SHARE-TEST");   /* any case */
    n.dwDesiredAccess = 0;
    ck_assert_status(D3DKMTOpenNtHandleFromName(&n), STATUS_ACCESS_DENIED);
    n.dwDesiredAccess = DXGK_SHARED_RESOURCE_MODIFY_STATE;
    ck_assert_status(D3DKMTOpenNtHandleFromName(&n), STATUS_SUCCESS);
    ck_assert_int_ge((intptr_t)n.hNtHandle, 0);
    ck_assert_status(share_test_open_nt(device, n.hNtHandle, &o), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, o.resource), STATUS_SUCCESS);
    /* the name lives while an NT handle to it does */
    close((int)(intptr_t)nt);
    close((int)(intptr_t)n.hNtHandle);
    ck_assert_status(D3DKMTOpenNtHandleFromName(&n), STATUS_OBJECT_NAME_NOT_FOUND);
    /* the object can be shared again */
    nt = share_one(r.resource, "\\BaseNamedObjects\\kmtshim-share-test");
    close((int)(intptr_t)nt);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

/* ---- Wine's escapes ---------------------------------------------------------------- */

static NTSTATUS wine_escape(D3DKMT_ESCAPETYPE type, D3DKMT_HANDLE context, void *data, UINT size)
{
    D3DKMT_ESCAPE e = { 0 };

    e.Type = type;
    e.hContext = context;
    e.pPrivateDriverData = data;
    e.PrivateDriverDataSize = size;
    return D3DKMTEscape(&e);
}

START_TEST(escape_update_resource)
{
    struct share_test_resource r = create_shared(false);
    unsigned char desc[40], got[40];
    struct open_desc d;
    D3DKMT_QUERYRESOURCEINFO q = { 0 };

    memset(desc, 0xd5, sizeof(desc));
    ck_assert_status(wine_escape(D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE, r.resource, desc, sizeof(desc)),
                     STATUS_SUCCESS);
    q.hDevice = device;
    q.hGlobalShare = r.global;
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.PrivateRuntimeDataSize, sizeof(desc));
    open_desc_init(&d, r.global);
    d.o.pPrivateRuntimeData = got;
    d.o.PrivateRuntimeDataSize = sizeof(got);
    ck_assert_status(D3DKMTOpenResource(&d.o), STATUS_SUCCESS);
    ck_assert_mem_eq(got, desc, sizeof(desc));
    ck_assert_status(share_test_destroy(device, d.o.hResource), STATUS_SUCCESS);

    ck_assert_status(wine_escape(D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE, r.allocation, desc, sizeof(desc)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(wine_escape(D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE, GARBAGE, desc, sizeof(desc)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(wine_escape(D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE, r.resource, NULL, 0), STATUS_SUCCESS);
    ck_assert_status(D3DKMTQueryResourceInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.PrivateRuntimeDataSize, 0);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

START_TEST(escape_set_present_rect)
{
    LONG rect[4] = { 0, 0, 640, 480 };

    ck_assert_status(wine_escape(D3DKMT_ESCAPE_SET_PRESENT_RECT_WINE, 0x10020, rect, sizeof(rect)), STATUS_SUCCESS);
    ck_assert_status(wine_escape(D3DKMT_ESCAPE_SET_PRESENT_RECT_WINE, 0x10020, rect, sizeof(rect) - 4),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(wine_escape(D3DKMT_ESCAPE_SET_PRESENT_RECT_WINE, 0, rect, sizeof(rect)),
                     STATUS_INVALID_PARAMETER);
}
END_TEST

/* ---- another process ------------------------------------------------------------------ */

/* Runs the peer (peer_util.h) with args; `give` (if >= 0) becomes its
 * fd 10.  Its exit status. */
static int run_peer(const char *const *args, int give)
{
    struct kmt_test_peer p;
    int status;

    kmt_test_peer_start(&p, "share_resource_peer", &give, give >= 0, args);
    status = kmt_test_peer_end(&p);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void fill(D3DKMT_HANDLE allocation, int byte)
{
    unsigned char *p = share_test_map(device, allocation);

    ck_assert_ptr_nonnull(p);
    memset(p, byte, SHARE_TEST_SIZE);
    share_test_unmap(device, allocation);
}

static unsigned char byte_at(D3DKMT_HANDLE allocation, size_t i)
{
    unsigned char *p = share_test_map(device, allocation), b;

    ck_assert_ptr_nonnull(p);
    b = p[i];
    share_test_unmap(device, allocation);
    return b;
}

START_TEST(other_process_by_global_handle)
{
    struct share_test_resource r = create_shared(false);
    char handle[16];

    fill(r.allocation, 0x11);
    snprintf(handle, sizeof(handle), "%#x", r.global);
    ck_assert_int_eq(run_peer((const char *[]){ "open-global", handle, "0x11", "0x22", NULL }, -1), 0);
    ck_assert_uint_eq(byte_at(r.allocation, 0), 0x22);
    ck_assert_uint_eq(byte_at(r.allocation, SHARE_TEST_SIZE - 1), 0x22);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

START_TEST(other_process_by_inherited_nt_handle)
{
    struct share_test_resource r = create_shared(true);
    int fd = (int)(intptr_t)share_one(r.resource, NULL);

    fill(r.allocation, 0x31);
    /* inheritance: a copy without O_CLOEXEC as the peer's fd 10 */
    ck_assert_int_eq(run_peer((const char *[]){ "open-nt", "10", "0x31", "0x32", NULL }, fd), 0);
    ck_assert_uint_eq(byte_at(r.allocation, 4096), 0x32);
    close(fd);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

START_TEST(other_process_by_scm_rights)
{
    struct share_test_resource r = create_shared(true);
    int fd = (int)(intptr_t)share_one(r.resource, NULL), sv[2], status;
    struct kmt_test_peer p;

    fill(r.allocation, 0x41);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    kmt_test_peer_start(&p, "share_resource_peer", &sv[1], 1,
                        (const char *[]){ "open-scm", "10", "0x41", "0x42", NULL });
    close(sv[1]);
    ck_assert(fd_pass_send(sv[0], fd));
    close(fd);                                    /* the peer's copy holds it now */
    status = kmt_test_peer_end(&p);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    close(sv[0]);
    ck_assert_uint_eq(byte_at(r.allocation, 123), 0x42);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

START_TEST(existing_sysmem_does_not_leave_its_process)
{
    struct share_test_resource r;
    unsigned char *mem = aligned_alloc(4096, SHARE_TEST_SIZE);
    char handle[16], status[16];

    ck_assert_ptr_nonnull(mem);
    ck_assert_status(share_test_create(device, false, mem, &r), STATUS_SUCCESS);
    snprintf(handle, sizeof(handle), "%#x", r.global);
    snprintf(status, sizeof(status), "%#x", (unsigned)STATUS_NOT_SUPPORTED);
    ck_assert_int_eq(run_peer((const char *[]){ "open-status", handle, status, NULL }, -1), 0);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    free(mem);
}
END_TEST

/* Polls the broker's books (it learns of a dead client asynchronously). */
static struct kmt_broker_stats stats_when(uint32_t objects)
{
    struct kmt_broker_stats s = { 0 };

    for (int i = 0; i < 500; i++) {
        ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
        if (s.objects == objects)
            break;
        usleep(10000);
    }
    return s;
}

START_TEST(creator_killed_opener_keeps_bytes)
{
    struct kmt_broker_stats before, after;
    struct share_test_resource o;
    struct kmt_test_peer p;
    D3DKMT_HANDLE global;

    ck_assert_status(kmt_broker_query_stats(&before), STATUS_SUCCESS);
    kmt_test_peer_start(&p, "share_resource_peer", NULL, 0, (const char *[]){ "create", "0x5c", NULL });
    global = (D3DKMT_HANDLE)strtoul(kmt_test_peer_line(&p, ""), NULL, 0);
    ck_assert_uint_eq(global & 3, 2);

    ck_assert_status(share_test_open(device, global, &o), STATUS_SUCCESS);
    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    ck_assert(WIFSIGNALED(kmt_test_peer_end(&p)));
    ck_assert_uint_eq(byte_at(o.allocation, 0), 0x5c);
    ck_assert_uint_eq(byte_at(o.allocation, SHARE_TEST_SIZE - 1), 0x5c);
    /* the global handle lives with its last holder, this process */
    ck_assert_status(share_test_destroy(device, o.resource), STATUS_SUCCESS);
    after = stats_when(before.objects);
    ck_assert_uint_eq(after.objects, before.objects);
    ck_assert_uint_eq(after.global_handles, before.global_handles);
    ck_assert_uint_eq(after.fds, before.fds);
    ck_assert_uint_gt(after.objects_freed, before.objects_freed);
    ck_assert_status(share_test_open(device, global, &o), STATUS_INVALID_PARAMETER);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("share_resource");
    TCase *tc = tcase_create("global");

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, create_shared_gives_global_handle);
    tcase_add_test(tc, query_resource_info);
    tcase_add_test(tc, query_resource_info_bad_input);
    tcase_add_test(tc, open_resource_same_process_same_bytes);
    tcase_add_test(tc, open_resource2);
    tcase_add_test(tc, opened_allocation_has_a_gpu_va_of_its_own);
    tcase_add_test(tc, open_resource_exact_sizes);
    tcase_add_test(tc, open_resource_bad_handles);
    tcase_add_test(tc, existing_sysmem_opens_in_its_process);
    suite_add_tcase(s, tc);

    tc = tcase_create("nt");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, share_objects_invalid_combinations);
    tcase_add_test(tc, share_objects_with_keyed_mutex);
    tcase_add_test(tc, nt_handle_query_and_open);
    tcase_add_test(tc, open_from_nt_handle_rows);
    tcase_add_test(tc, open_nt_handle_from_name);
    suite_add_tcase(s, tc);

    tc = tcase_create("escapes");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, escape_update_resource);
    tcase_add_test(tc, escape_set_present_rect);
    suite_add_tcase(s, tc);

    tc = tcase_create("processes");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, other_process_by_global_handle);
    tcase_add_test(tc, other_process_by_inherited_nt_handle);
    tcase_add_test(tc, other_process_by_scm_rights);
    tcase_add_test(tc, existing_sysmem_does_not_leave_its_process);
    tcase_add_test(tc, creator_killed_opener_keeps_bytes);
    suite_add_tcase(s, tc);

    return kmt_test_run(s);
}
