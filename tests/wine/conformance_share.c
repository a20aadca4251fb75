/*
 * Sharing between Windows processes under Wine: NT handles are Wine
 * handles (kmtshim.so turns the core's file descriptors into them and
 * back, docs/wine.md "NT handles"), global handles are the session's.
 *
 * share_nt_handles: one process: what a Wine handle of an NT share is
 *   (DuplicateHandle, GetHandleInformation's inherit flag, CloseHandle) and
 *   what the NT-handle calls answer for handles that are not kmtshim's.
 * share_processes: the program starts itself as a child (the same exe,
 *   reaching kmtshim the same way) and the two hand a resource, a keyed
 *   mutex and a monitored fence back and forth: an NT handle taken with
 *   DuplicateHandle, one inherited, one opened by name, a global handle
 *   from the command line.
 *
 * The helpers conformance_share.h declares for the other sharing rows
 * live here too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance_share.h"

#define KEYED_MUTEX_FENCE 7              /* the child's release carries it */

static const BYTE runtime_data[4] = { 0x11, 0x22, 0x33, 0x44 };

OBJECT_ATTRIBUTES *nt_name_init(struct nt_name *n, const char *name, ULONG attributes)
{
    unsigned len = 0;

    for (const char *p = "\\BaseNamedObjects\\"; *p; p++)
        n->buffer[len++] = (WCHAR)*p;
    for (const char *p = name; *p && len < ARRAY_SIZE(n->buffer) - 1; p++)
        n->buffer[len++] = (WCHAR)*p;
    n->buffer[len] = 0;
    n->string.Length = (USHORT)(len * sizeof(WCHAR));
    n->string.MaximumLength = (USHORT)((len + 1) * sizeof(WCHAR));
    n->string.Buffer = n->buffer;
    memset(&n->attr, 0, sizeof(n->attr));
    n->attr.Length = sizeof(n->attr);
    n->attr.ObjectName = name ? &n->string : NULL;
    n->attr.Attributes = attributes;
    return &n->attr;
}

/* Unnamed attributes, inheritable or not. */
OBJECT_ATTRIBUTES *nt_attr_init(OBJECT_ATTRIBUTES *attr, ULONG attributes)
{
    memset(attr, 0, sizeof(*attr));
    attr->Length = sizeof(*attr);
    attr->Attributes = attributes;
    return attr;
}

/* A one-allocation resource of SHARE_SIZE bytes on the soft device, with
 * runtime data: NT-shareable (CreateShared|NtSecuritySharing), or with a
 * global handle (CreateShared) in *global. */
NTSTATUS create_shared_resource(D3DKMT_HANDLE device, BOOL nt, D3DKMT_HANDLE *resource,
                                D3DKMT_HANDLE *alloc, D3DKMT_HANDLE *global)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, SHARE_SIZE, 0, 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = 1;
    ca.Flags.NtSecuritySharing = nt ? 1 : 0;
    ca.pPrivateRuntimeData = runtime_data;
    ca.PrivateRuntimeDataSize = sizeof(runtime_data);
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    status = kmt_api.CreateAllocation(&ca);
    *resource = ca.hResource;
    *alloc = info.hAllocation;
    if (global)
        *global = ca.hGlobalShare;
    return status;
}

void destroy_resource(D3DKMT_HANDLE device, D3DKMT_HANDLE resource)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    da.hResource = resource;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);
}

/* Writes `pattern` + index into every word of the allocation, or counts
 * the words that differ from it. */
unsigned touch_words(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, UINT32 pattern, BOOL write)
{
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    unsigned wrong = 0;
    UINT32 *words;

    lock.hDevice = device;
    lock.hAllocation = alloc;
    if (kmt_api.Lock2(&lock) || !lock.pData) {
        ok(FALSE, "Lock2 of %#x failed\n", alloc);
        return SHARE_SIZE / 4;
    }
    words = lock.pData;
    for (unsigned i = 0; i < SHARE_SIZE / 4; i++) {
        if (write)
            words[i] = pattern + i;
        else if (words[i] != pattern + i)
            wrong++;
    }
    unlock.hDevice = device;
    unlock.hAllocation = alloc;
    expect_status(kmt_api.Unlock2(&unlock), STATUS_SUCCESS);
    return wrong;
}

/* Opens what an NT handle names (QueryResourceInfoFromNtHandle for the
 * sizes first); the keyed mutex's runtime data, if any, goes to a buffer
 * of 64 bytes. */
NTSTATUS share_open_nt(D3DKMT_HANDLE device, HANDLE nt, struct share_opened *out)
{
    D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE q = { 0 };
    D3DKMT_OPENRESOURCEFROMNTHANDLE o = { 0 };
    D3DDDI_OPENALLOCATIONINFO2 info = { 0 };
    BYTE runtime[64], driver[0x1000], total[0x1000], alloc_data[0x400], mutex_runtime[64];
    NTSTATUS status;

    memset(out, 0, sizeof(*out));
    info.pPrivateDriverData = alloc_data;           /* the allocation's driver data goes here */
    info.PrivateDriverDataSize = sizeof(alloc_data);
    q.hDevice = device;
    q.hNtHandle = nt;
    if ((status = kmt_api.QueryResourceInfoFromNtHandle(&q)))
        return status;
    ok(q.PrivateRuntimeDataSize == sizeof(runtime_data) && q.NumAllocations == 1,
       "runtime data %u bytes, %u allocations\n", q.PrivateRuntimeDataSize, q.NumAllocations);
    if (q.PrivateRuntimeDataSize > sizeof(runtime) || q.ResourcePrivateDriverDataSize > sizeof(driver) ||
        q.TotalPrivateDriverDataSize > sizeof(total) || q.NumAllocations != 1)
        return STATUS_BUFFER_TOO_SMALL;
    o.hDevice = device;
    o.hNtHandle = nt;
    o.NumAllocations = 1;
    o.pOpenAllocationInfo2 = &info;
    o.PrivateRuntimeDataSize = q.PrivateRuntimeDataSize;
    o.pPrivateRuntimeData = runtime;
    o.ResourcePrivateDriverDataSize = q.ResourcePrivateDriverDataSize;
    o.pResourcePrivateDriverData = driver;
    o.TotalPrivateDriverDataBufferSize = sizeof(total);
    o.pTotalPrivateDriverDataBuffer = total;
    o.pKeyedMutexPrivateRuntimeData = mutex_runtime;
    o.KeyedMutexPrivateRuntimeDataSize = sizeof(mutex_runtime);
    if ((status = kmt_api.OpenResourceFromNtHandle(&o)))
        return status;
    ok(!memcmp(runtime, runtime_data, sizeof(runtime_data)), "runtime data not copied\n");
    ok(is_local_handle(o.hResource) && is_local_handle(info.hAllocation), "hResource %#x, hAllocation %#x\n",
       o.hResource, info.hAllocation);
    out->resource = o.hResource;
    out->alloc = info.hAllocation;
    out->keyed_mutex = o.hKeyedMutex;
    out->sync = o.hSyncObject;
    out->keyed_mutex_runtime_size = o.KeyedMutexPrivateRuntimeDataSize;
    return STATUS_SUCCESS;
}

NTSTATUS open_from_nt(D3DKMT_HANDLE device, HANDLE nt, D3DKMT_HANDLE *resource, D3DKMT_HANDLE *alloc)
{
    struct share_opened o;
    NTSTATUS status = share_open_nt(device, nt, &o);

    ok(!o.keyed_mutex && !o.sync, "a resource-only share opened a keyed mutex %#x, sync object %#x\n",
       o.keyed_mutex, o.sync);
    *resource = o.resource;
    *alloc = o.alloc;
    return status;
}

NTSTATUS share_one(D3DKMT_HANDLE object, OBJECT_ATTRIBUTES *attr, HANDLE *nt)
{
    *nt = NULL;
    return kmt_api.ShareObjects(1, &object, attr, GENERIC_ALL, nt);
}

/* The answer to an NT-handle call for `nt`, a handle that is no NT share. */
static NTSTATUS open_sync_from(HANDLE nt)
{
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE o = { 0 };

    o.hNtHandle = nt;
    return kmt_api.OpenSyncObjectFromNtHandle(&o);
}

void kmtc_share_nt_handles(void)
{
    D3DKMT_HANDLE adapter, device, resource, alloc, opened, opened_alloc;
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE km = { 0 };
    OBJECT_ATTRIBUTES attr;
    HANDLE nt, nt_inherit, dup, event, file;
    DWORD flags;
    char path[MAX_PATH];

    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return;
    device = kmt_create_device(adapter);
    expect_status(create_shared_resource(device, TRUE, &resource, &alloc, NULL), STATUS_SUCCESS);

    /* a Wine handle: inheritable only with OBJ_INHERIT, duplicated and
     * closed like any other */
    expect_status(share_one(resource, nt_attr_init(&attr, 0), &nt), STATUS_SUCCESS);
    ok(nt != NULL && nt != INVALID_HANDLE_VALUE, "NT handle %p\n", nt);
    ok(GetHandleInformation(nt, &flags) && !(flags & HANDLE_FLAG_INHERIT), "flags %#lx\n", flags);
    expect_status(share_one(resource, nt_attr_init(&attr, OBJ_INHERIT), &nt_inherit), STATUS_SUCCESS);
    ok(GetHandleInformation(nt_inherit, &flags) && (flags & HANDLE_FLAG_INHERIT), "OBJ_INHERIT: flags %#lx\n",
       flags);
    ok(DuplicateHandle(GetCurrentProcess(), nt, GetCurrentProcess(), &dup, 0, FALSE, DUPLICATE_SAME_ACCESS),
       "DuplicateHandle failed: %lu\n", GetLastError());
    ok(CloseHandle(nt), "CloseHandle failed\n");
    expect_status(open_from_nt(device, dup, &opened, &opened_alloc), STATUS_SUCCESS);
    if (opened) {
        touch_words(device, alloc, PATTERN_PARENT, TRUE);
        ok(!touch_words(device, opened_alloc, PATTERN_PARENT, FALSE), "the opened allocation has other bytes\n");
        destroy_resource(device, opened);
    }

    /* handles that are not NT shares: another type, a file, closed, NULL */
    km.hNtHandle = dup;
    expect_status(kmt_api.OpenKeyedMutexFromNtHandle(&km), STATUS_OBJECT_TYPE_MISMATCH);
    expect_status(open_sync_from(dup), STATUS_OBJECT_TYPE_MISMATCH);
    event = CreateEventW(NULL, FALSE, FALSE, NULL);
    expect_status(open_sync_from(event), STATUS_OBJECT_TYPE_MISMATCH);
    CloseHandle(event);
    GetTempPathA(sizeof(path), path);
    strcat(path, "kmtshim-share.tmp");
    file = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                       FILE_FLAG_DELETE_ON_CLOSE, NULL);
    ok(file != INVALID_HANDLE_VALUE, "CreateFile failed: %lu\n", GetLastError());
    expect_status(open_sync_from(file), STATUS_OBJECT_TYPE_MISMATCH);
    CloseHandle(file);
    ok(CloseHandle(dup), "CloseHandle failed\n");
    expect_status(open_sync_from(dup), STATUS_INVALID_HANDLE);
    expect_status(open_sync_from(NULL), STATUS_INVALID_HANDLE);
    expect_status(open_sync_from((HANDLE)(ULONG_PTR)0xdead0), STATUS_INVALID_HANDLE);
    /* the inheritable one still names the resource */
    expect_status(open_from_nt(device, nt_inherit, &opened, &opened_alloc), STATUS_SUCCESS);
    if (opened)
        destroy_resource(device, opened);
    ok(CloseHandle(nt_inherit), "CloseHandle failed\n");

    destroy_resource(device, resource);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

/* ---- two processes ---------------------------------------------------------- */

LARGE_INTEGER *relative_ms(LARGE_INTEGER *t, LONGLONG ms)
{
    t->QuadPart = -ms * 10000;
    return t;
}

NTSTATUS acquire_key_ms(D3DKMT_HANDLE mutex, UINT64 key, LONGLONG ms, UINT64 *fence)
{
    D3DKMT_ACQUIREKEYEDMUTEX a = { 0 };
    LARGE_INTEGER timeout;
    NTSTATUS status;

    a.hKeyedMutex = mutex;
    a.Key = key;
    a.pTimeout = relative_ms(&timeout, ms);
    status = kmt_api.AcquireKeyedMutex(&a);
    *fence = a.FenceValue;
    return status;
}

NTSTATUS acquire_key(D3DKMT_HANDLE mutex, UINT64 key, UINT64 *fence)
{
    return acquire_key_ms(mutex, key, CHILD_TIMEOUT_MS, fence);
}

NTSTATUS release_key(D3DKMT_HANDLE mutex, UINT64 key, UINT64 fence)
{
    D3DKMT_RELEASEKEYEDMUTEX r = { 0 };

    r.hKeyedMutex = mutex;
    r.Key = key;
    r.FenceValue = fence;
    return kmt_api.ReleaseKeyedMutex(&r);
}

void destroy_keyed_mutex(D3DKMT_HANDLE mutex)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { 0 };

    d.hKeyedMutex = mutex;
    expect_status(kmt_api.DestroyKeyedMutex(&d), STATUS_SUCCESS);
}

void destroy_sync(D3DKMT_HANDLE sync)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { 0 };

    d.hSyncObject = sync;
    expect_status(kmt_api.DestroySynchronizationObject(&d), STATUS_SUCCESS);
}

/* An async wait on a Win32 event, bounded: TRUE when the fence got there. */
BOOL wait_fence(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value)
{
    HANDLE event = CreateEventW(NULL, TRUE, FALSE, NULL);
    NTSTATUS status = kmt_cpu_wait(device, fence, value, event);
    DWORD r;

    ok(!status, "WaitForSynchronizationObjectFromCpu: %#lx\n", (unsigned long)status);
    r = status ? WAIT_FAILED : WaitForSingleObject(event, CHILD_TIMEOUT_MS);
    CloseHandle(event);
    return r == WAIT_OBJECT_0;
}

/* Opens a resource by global handle (QueryResourceInfo for the sizes). */
NTSTATUS open_global(D3DKMT_HANDLE device, D3DKMT_HANDLE global, D3DKMT_HANDLE *resource,
                     D3DKMT_HANDLE *alloc)
{
    D3DKMT_QUERYRESOURCEINFO q = { 0 };
    D3DKMT_OPENRESOURCE o = { 0 };
    D3DDDI_OPENALLOCATIONINFO info = { 0 };
    BYTE runtime[64], driver[0x1000], total[0x1000], alloc_data[0x400];
    NTSTATUS status;

    *resource = *alloc = 0;
    info.pPrivateDriverData = alloc_data;
    info.PrivateDriverDataSize = sizeof(alloc_data);
    q.hDevice = device;
    q.hGlobalShare = global;
    if ((status = kmt_api.QueryResourceInfo(&q)))
        return status;
    if (q.PrivateRuntimeDataSize > sizeof(runtime) || q.ResourcePrivateDriverDataSize > sizeof(driver) ||
        q.TotalPrivateDriverDataSize > sizeof(total) || q.NumAllocations != 1)
        return STATUS_BUFFER_TOO_SMALL;
    o.hDevice = device;
    o.hGlobalShare = global;
    o.NumAllocations = 1;
    o.pOpenAllocationInfo = &info;
    o.pPrivateRuntimeData = runtime;
    o.PrivateRuntimeDataSize = q.PrivateRuntimeDataSize;
    o.pResourcePrivateDriverData = driver;
    o.ResourcePrivateDriverDataSize = q.ResourcePrivateDriverDataSize;
    o.pTotalPrivateDriverDataBuffer = total;
    o.TotalPrivateDriverDataBufferSize = sizeof(total);
    if ((status = kmt_api.OpenResource(&o)))
        return status;
    ok(!memcmp(runtime, runtime_data, sizeof(runtime_data)), "runtime data not copied\n");
    *resource = o.hResource;
    *alloc = info.hAllocation;
    return STATUS_SUCCESS;
}

NTSTATUS open_name(const char *name, HANDLE *nt)
{
    D3DKMT_OPENNTHANDLEFROMNAME o = { 0 };
    struct nt_name n;
    NTSTATUS status;

    o.dwDesiredAccess = GENERIC_ALL;
    o.pObjAttrib = nt_name_init(&n, name, 0);
    status = kmt_api.OpenNtHandleFromName(&o);
    *nt = o.hNtHandle;
    return status;
}

/* A status that follows another process's exit (the broker sees the
 * connection or the NT handle go): asked again until it is `want`, for at
 * most CHILD_TIMEOUT_MS. */
NTSTATUS name_status_until(const char *name, NTSTATUS want)
{
    NTSTATUS status = STATUS_SUCCESS;
    HANDLE nt;

    for (unsigned ms = 0; ms < CHILD_TIMEOUT_MS; ms += 10) {
        if ((status = open_name(name, &nt)) == want)
            break;
        if (!status)
            CloseHandle(nt);
        Sleep(10);
    }
    return status;
}

NTSTATUS global_status_until(D3DKMT_HANDLE device, D3DKMT_HANDLE global, NTSTATUS want)
{
    D3DKMT_QUERYRESOURCEINFO q = { 0 };
    NTSTATUS status = STATUS_SUCCESS;

    q.hDevice = device;
    q.hGlobalShare = global;
    for (unsigned ms = 0; ms < CHILD_TIMEOUT_MS; ms += 10) {
        if ((status = kmt_api.QueryResourceInfo(&q)) == want)
            break;
        Sleep(10);
    }
    return status;
}

/* The child: argv = parent pid, the parent's NT handle to duplicate, the
 * inherited NT handle, the share's name, the global handle of the second
 * resource, the keyed mutex's global handle, the parent's fence NT handle
 * to duplicate.  Returns the exit status: its failures. */
int kmtc_share_processes_child(int argc, char **argv)
{
    D3DKMT_HANDLE adapter, device, res, alloc, other, other_alloc, km_global, global;
    D3DKMT_OPENKEYEDMUTEX okm = { 0 };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 of = { 0 };
    D3DKMT_DESTROYKEYEDMUTEX dkm = { 0 };
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds = { 0 };
    HANDLE parent, nt_dup, nt_inherit, nt_named, fence_nt, mine;
    UINT64 fence_value;

    if (argc != 7) {
        ok(FALSE, "share-child: %d arguments\n", argc);
        return 1;
    }
    parent = OpenProcess(PROCESS_DUP_HANDLE, FALSE, strtoul(argv[0], NULL, 10));
    nt_dup = (HANDLE)(ULONG_PTR)strtoull(argv[1], NULL, 16);
    nt_inherit = (HANDLE)(ULONG_PTR)strtoull(argv[2], NULL, 16);
    global = (D3DKMT_HANDLE)strtoul(argv[4], NULL, 16);
    km_global = (D3DKMT_HANDLE)strtoul(argv[5], NULL, 16);
    fence_nt = (HANDLE)(ULONG_PTR)strtoull(argv[6], NULL, 16);
    ok(parent != NULL, "OpenProcess(parent) failed: %lu\n", GetLastError());
    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return kmtw_failures();
    device = kmt_create_device(adapter);

    /* DuplicateHandle from the parent */
    ok(DuplicateHandle(parent, nt_dup, GetCurrentProcess(), &mine, 0, FALSE, DUPLICATE_SAME_ACCESS),
       "DuplicateHandle from the parent failed: %lu\n", GetLastError());
    expect_status(open_from_nt(device, mine, &res, &alloc), STATUS_SUCCESS);
    ok(CloseHandle(mine), "CloseHandle failed\n");
    ok(res && !touch_words(device, alloc, PATTERN_PARENT, FALSE), "child: the parent's bytes differ\n");
    /* inherited */
    expect_status(open_from_nt(device, nt_inherit, &other, &other_alloc), STATUS_SUCCESS);
    ok(other && !touch_words(device, other_alloc, PATTERN_PARENT, FALSE), "child: inherited handle's bytes\n");
    if (other)
        destroy_resource(device, other);
    ok(CloseHandle(nt_inherit), "CloseHandle(inherited) failed\n");
    /* by name, in other letter case */
    CharUpperA(argv[3]);
    expect_status(open_name(argv[3], &nt_named), STATUS_SUCCESS);
    expect_status(open_from_nt(device, nt_named, &other, &other_alloc), STATUS_SUCCESS);
    ok(other && !touch_words(device, other_alloc, PATTERN_PARENT, FALSE), "child: named share's bytes\n");
    if (other)
        destroy_resource(device, other);
    ok(CloseHandle(nt_named), "CloseHandle(named) failed\n");
    /* the global handle from the command line */
    expect_status(open_global(device, global, &other, &other_alloc), STATUS_SUCCESS);
    ok(other && !touch_words(device, other_alloc, PATTERN_GLOBAL, FALSE), "child: global resource's bytes\n");
    if (other)
        destroy_resource(device, other);

    /* the keyed mutex: the parent releases key 1, the child writes and
     * hands key 2 back with a fence value */
    okm.hSharedHandle = km_global;
    expect_status(kmt_api.OpenKeyedMutex(&okm), STATUS_SUCCESS);
    expect_status(acquire_key(okm.hKeyedMutex, 1, &fence_value), STATUS_SUCCESS);
    if (res)
        touch_words(device, alloc, PATTERN_CHILD, TRUE);
    expect_status(release_key(okm.hKeyedMutex, 2, KEYED_MUTEX_FENCE), STATUS_SUCCESS);
    dkm.hKeyedMutex = okm.hKeyedMutex;
    expect_status(kmt_api.DestroyKeyedMutex(&dkm), STATUS_SUCCESS);

    /* the fence: the child signals 5, waits for the parent's 6 */
    ok(DuplicateHandle(parent, fence_nt, GetCurrentProcess(), &mine, 0, FALSE, DUPLICATE_SAME_ACCESS),
       "DuplicateHandle(fence) failed: %lu\n", GetLastError());
    of.hNtHandle = mine;
    of.hDevice = device;
    expect_status(kmt_api.OpenSyncObjectFromNtHandle2(&of), STATUS_SUCCESS);
    CloseHandle(mine);
    ok(of.MonitoredFence.FenceValueCPUVirtualAddress != NULL, "no CPU VA for the opened fence\n");
    expect_status(kmt_cpu_signal(device, of.hSyncObject, 5), STATUS_SUCCESS);
    ok(wait_fence(device, of.hSyncObject, 6), "child: the parent's signal of 6 never came\n");
    if (of.MonitoredFence.FenceValueCPUVirtualAddress)
        ok(*(volatile UINT64 *)of.MonitoredFence.FenceValueCPUVirtualAddress >= 6, "child: fence value %llu\n",
           *(volatile UINT64 *)of.MonitoredFence.FenceValueCPUVirtualAddress);
    ds.hSyncObject = of.hSyncObject;
    expect_status(kmt_api.DestroySynchronizationObject(&ds), STATUS_SUCCESS);

    if (res)
        destroy_resource(device, res);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
    CloseHandle(parent);
    return kmtw_failures();
}

void kmtc_share_processes(void)
{
    D3DKMT_HANDLE adapter, device, res, alloc, res2, alloc2, global2, fence_handle;
    D3DKMT_CREATEKEYEDMUTEX ckm = { 0 };
    D3DKMT_DESTROYKEYEDMUTEX dkm = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds = { 0 };
    OBJECT_ATTRIBUTES attr;
    PROCESS_INFORMATION pi;
    HANDLE nt_dup, nt_inherit, nt_named, fence_nt;
    char name[64];
    struct nt_name n;
    UINT64 fence_value = ~0ull;

    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return;
    device = kmt_create_device(adapter);
    expect_status(create_shared_resource(device, TRUE, &res, &alloc, NULL), STATUS_SUCCESS);
    expect_status(create_shared_resource(device, FALSE, &res2, &alloc2, &global2), STATUS_SUCCESS);
    ok(is_global_handle(global2), "hGlobalShare %#x\n", global2);
    touch_words(device, alloc, PATTERN_PARENT, TRUE);
    touch_words(device, alloc2, PATTERN_GLOBAL, TRUE);
    snprintf(name, sizeof(name), "kmtshim_share_%lu", GetCurrentProcessId());
    expect_status(share_one(res, nt_attr_init(&attr, 0), &nt_dup), STATUS_SUCCESS);
    expect_status(share_one(res, nt_attr_init(&attr, OBJ_INHERIT), &nt_inherit), STATUS_SUCCESS);
    expect_status(share_one(res, nt_name_init(&n, name, 0), &nt_named), STATUS_SUCCESS);
    /* a second share of the name while it lives */
    {
        HANDLE again;
        expect_status(share_one(res, nt_name_init(&n, name, 0), &again), STATUS_OBJECT_NAME_COLLISION);
    }
    expect_status(kmt_api.CreateKeyedMutex(&ckm), STATUS_SUCCESS);
    ok(is_global_handle(ckm.hSharedHandle), "keyed mutex hSharedHandle %#x\n", ckm.hSharedHandle);
    expect_status(acquire_key(ckm.hKeyedMutex, 0, &fence_value), STATUS_SUCCESS);
    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.Flags.Shared = 1;
    cs.Info.Flags.NtSecuritySharing = 1;
    expect_status(kmt_api.CreateSynchronizationObject2(&cs), STATUS_SUCCESS);
    fence_handle = cs.hSyncObject;
    fence_nt = NULL;
    expect_status(kmt_api.ShareObjects(1, &fence_handle, nt_attr_init(&attr, 0), GENERIC_ALL, &fence_nt),
                  STATUS_SUCCESS);

    if (!share_start_child(&pi, TRUE, "processes", "%lu %llx %llx %s %x %x %llx", GetCurrentProcessId(),
                           (unsigned long long)(ULONG_PTR)nt_dup, (unsigned long long)(ULONG_PTR)nt_inherit,
                           name, global2, ckm.hSharedHandle, (unsigned long long)(ULONG_PTR)fence_nt))
        goto done;

    /* hand key 1 over; the child writes and hands key 2 back */
    expect_status(release_key(ckm.hKeyedMutex, 1, 0), STATUS_SUCCESS);
    expect_status(acquire_key(ckm.hKeyedMutex, 2, &fence_value), STATUS_SUCCESS);
    ok(fence_value == KEYED_MUTEX_FENCE, "fence value %llu from the child's release\n", fence_value);
    ok(!touch_words(device, alloc, PATTERN_CHILD, FALSE), "the child's bytes differ\n");
    /* the child signals 5 and waits for 6 */
    ok(wait_fence(device, fence_handle, 5), "the child's signal of 5 never came\n");
    ok(*(volatile UINT64 *)cs.Info.MonitoredFence.FenceValueCPUVirtualAddress >= 5, "fence value %llu\n",
       *(volatile UINT64 *)cs.Info.MonitoredFence.FenceValueCPUVirtualAddress);
    expect_status(kmt_cpu_signal(device, fence_handle, 6), STATUS_SUCCESS);
    share_end_child(&pi, 0);

done:
    /* CloseHandle closes an NT handle; the name goes with the last one */
    ok(CloseHandle(nt_named), "CloseHandle(named) failed\n");
    expect_status(name_status_until(name, STATUS_OBJECT_NAME_NOT_FOUND), STATUS_OBJECT_NAME_NOT_FOUND);
    CloseHandle(nt_dup);
    CloseHandle(nt_inherit);
    CloseHandle(fence_nt);
    ds.hSyncObject = fence_handle;
    expect_status(kmt_api.DestroySynchronizationObject(&ds), STATUS_SUCCESS);
    dkm.hKeyedMutex = ckm.hKeyedMutex;
    expect_status(kmt_api.DestroyKeyedMutex(&dkm), STATUS_SUCCESS);
    destroy_resource(device, res);
    /* the global handle dies with its last holder, the child's included */
    destroy_resource(device, res2);
    expect_status(global_status_until(device, global2, STATUS_INVALID_PARAMETER), STATUS_INVALID_PARAMETER);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}
