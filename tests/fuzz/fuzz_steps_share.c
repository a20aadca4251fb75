/*
 * Steps on sharing: ShareObjects (1 or 3 objects, named or not), the
 * opens of resources, keyed mutexes and sync objects by global handle, by
 * NT handle and by name, QueryResourceInfo(FromNtHandle), the keyed-mutex
 * calls with timeouts of 0 or a few milliseconds (never infinite: one
 * thread would wait for itself), and the two Wine escapes.  Shared
 * resources and sync objects are made by the allocation and sync steps
 * (CreateShared, NtSecuritySharing, Shared); their global handles and the
 * NT handles these steps get are kept in fuzz_prog.shares.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "fuzz_steps.h"

_Static_assert(offsetof(D3DDDI_OPENALLOCATIONINFO, pPrivateDriverData) ==
               offsetof(D3DDDI_OPENALLOCATIONINFO2, pPrivateDriverData) &&
               offsetof(D3DDDI_OPENALLOCATIONINFO, PrivateDriverDataSize) ==
               offsetof(D3DDDI_OPENALLOCATIONINFO2, PrivateDriverDataSize), "one layout for both infos' heads");

#define OPEN_MAX 16                     /* allocations an open lists, at most */
#define GENERIC_ALL 0x10000000u

/* An access mask: all, none, the documented bits, or anything. */
static DWORD access_mask(struct fuzz_prog *p)
{
    switch (fuzz_u8(&p->in) % 4) {
    case 0: return 0;
    case 1: return fuzz_u32(&p->in);
    case 2: return D3DDDI_SYNC_OBJECT_ALL_ACCESS;
    default: return GENERIC_ALL;
    }
}

/* Runtime data for a create: none, a few bytes, or sizes the input picks. */
static void runtime_data(struct fuzz_prog *p, void **data, UINT *size)
{
    *size = fuzz_u8(&p->in) % 2 ? 0 : fuzz_size(p, 6);
    *data = *size || fuzz_u8(&p->in) % 4 == 0 ? fuzz_ptr(p, *size, true) : NULL;
}

void step_share_objects(struct fuzz_prog *p)
{
    static const enum fuzz_kind order[] = { FK_RESOURCE, FK_KEYED_MUTEX, FK_SYNC };
    UINT count = fuzz_u8(&p->in) % 4 ? (fuzz_u8(&p->in) & 1 ? 3 : 1) : fuzz_count(p, 3);
    unsigned first = fuzz_u8(&p->in) % 3;  /* a resource first, as the rules want, or not */
    D3DKMT_HANDLE objects[4] = { 0 };
    OBJECT_ATTRIBUTES *attrs;
    HANDLE *out;
    DWORD access;

    for (UINT i = 0; i < count && i < 4; i++)
        objects[i] = fuzz_pool_handle(&p->pool, order[(first + i) % 3], &p->in);
    attrs = fuzz_share_name(p);
    access = access_mask(p);
    out = fuzz_ptr(p, sizeof(*out), false);
    if (fuzz_in_arena(out))
        *out = (HANDLE)(intptr_t)-1;
    if (!D3DKMTShareObjects(count, fuzz_u8(&p->in) % 16 ? objects : NULL, attrs, access, out)
        && fuzz_in_arena(out))
        fuzz_share_add_nt(p, *out, "ShareObjects");
}

void step_close_nt(struct fuzz_prog *p)
{
    fuzz_share_close_one(p);
}

/* The sizes OpenResource wants, from a query of the same resource, or the input's. */
struct open_sizes {
    UINT runtime, resource, total, allocations;
};

static void query_sizes(struct fuzz_prog *p, struct open_sizes *z, bool nt, D3DKMT_HANDLE dev,
                        D3DKMT_HANDLE global, HANDLE handle)
{
    NTSTATUS s;

    memset(z, 0, sizeof(*z));
    if (nt) {
        D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE q = { .hDevice = dev, .hNtHandle = handle };

        q.pPrivateRuntimeData = fuzz_ptr(p, 64, false);
        s = D3DKMTQueryResourceInfoFromNtHandle(&q);
        *z = (struct open_sizes){ q.PrivateRuntimeDataSize, q.ResourcePrivateDriverDataSize,
                                  q.TotalPrivateDriverDataSize, q.NumAllocations };
    } else {
        D3DKMT_QUERYRESOURCEINFO q = { .hDevice = dev, .hGlobalShare = global };

        q.pPrivateRuntimeData = fuzz_ptr(p, 64, false);
        s = D3DKMTQueryResourceInfo(&q);
        *z = (struct open_sizes){ q.PrivateRuntimeDataSize, q.ResourcePrivateDriverDataSize,
                                  q.TotalPrivateDriverDataSize, q.NumAllocations };
    }
    if (s)
        memset(z, 0, sizeof(*z));
    /* now and then a size off by some: exactly the creator's is the rule */
    if (fuzz_u8(&p->in) % 4 == 0) {
        switch (fuzz_u8(&p->in) % 4) {
        case 0: z->runtime = fuzz_size(p, z->runtime); break;
        case 1: z->resource = fuzz_size(p, z->resource); break;
        case 2: z->total = fuzz_size(p, z->total); break;
        default: z->allocations = fuzz_count(p, z->allocations ? z->allocations : 1);
        }
    }
}

void step_query_resource(struct fuzz_prog *p)
{
    struct open_sizes z;
    bool nt = fuzz_u8(&p->in) & 1;
    D3DKMT_HANDLE dev = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);

    query_sizes(p, &z, nt, dev, nt ? 0 : fuzz_share_global(p), nt ? fuzz_share_nt(p) : NULL);
}

/* Enters what an open gave: the resource, its allocations, a keyed mutex, a sync object. */
static void opened(struct fuzz_prog *p, D3DKMT_HANDLE dev, D3DKMT_HANDLE res, const D3DKMT_HANDLE *allocs,
                   UINT n, D3DKMT_HANDLE mutex, D3DKMT_HANDLE sync)
{
    fuzz_pool_add(&p->pool, FK_RESOURCE, res, dev);
    for (UINT i = 0; i < n && i < OPEN_MAX; i++) {
        struct fuzz_object *o = fuzz_pool_add(&p->pool, FK_ALLOCATION, allocs[i], dev);

        if (o)
            o->resource = res;
    }
    if (mutex)
        fuzz_pool_add(&p->pool, FK_KEYED_MUTEX, mutex, 0);
    if (sync)
        fuzz_pool_add(&p->pool, FK_SYNC, sync, 0);
}

/* The buffers of an OpenResource(2) or OpenResourceFromNtHandle `o`, with z's sizes. */
#define OPEN_BUFFERS(o) do {                                         \
        (o).pOpenAllocationInfo2 = info;                             \
        (o).pPrivateRuntimeData = runtime;                           \
        (o).PrivateRuntimeDataSize = z.runtime;                      \
        (o).pResourcePrivateDriverData = resource;                   \
        (o).ResourcePrivateDriverDataSize = z.resource;              \
        (o).pTotalPrivateDriverDataBuffer = total;                   \
        (o).TotalPrivateDriverDataBufferSize = z.total;              \
    } while (0)

void step_open_resource(struct fuzz_prog *p)
{
    bool nt = fuzz_u8(&p->in) % 3 == 0, v2 = fuzz_u8(&p->in) & 1;
    D3DKMT_HANDLE dev = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in), global = 0;
    HANDLE handle = NULL;
    D3DKMT_HANDLE allocs[OPEN_MAX] = { 0 };
    struct open_sizes z;
    size_t stride = v2 || nt ? sizeof(D3DDDI_OPENALLOCATIONINFO2) : sizeof(D3DDDI_OPENALLOCATIONINFO);
    void *info, *runtime, *resource, *total;
    UINT room;

    if (nt)
        handle = fuzz_share_nt(p);
    else
        global = fuzz_share_global(p);
    query_sizes(p, &z, nt, dev, global, handle);
    room = z.allocations < OPEN_MAX ? z.allocations : OPEN_MAX;
    info = fuzz_ptr(p, room * stride, false);
    if (z.allocations > OPEN_MAX && fuzz_in_arena(info))
        info = NULL;                    /* a count the block covers */
    runtime = fuzz_ptr(p, z.runtime, false);
    resource = fuzz_ptr(p, z.resource, false);
    total = fuzz_ptr(p, z.total, false);
    /* each allocation's driver data goes into the total buffer (all of
     * it: the library writes each where its info points) */
    if (fuzz_u8(&p->in) % 4 && fuzz_in_arena(info) && fuzz_in_arena(total) && z.allocations <= OPEN_MAX)
        for (UINT i = 0; i < room; i++) {
            D3DDDI_OPENALLOCATIONINFO *a = (void *)((char *)info + i * stride);

            a->pPrivateDriverData = total;
            a->PrivateDriverDataSize = z.total;
        }
    if (nt) {
        D3DKMT_OPENRESOURCEFROMNTHANDLE o = { .hDevice = dev, .hNtHandle = handle, .NumAllocations = z.allocations };

        OPEN_BUFFERS(o);
        o.KeyedMutexPrivateRuntimeDataSize = fuzz_u8(&p->in) % 2 ? 0 : fuzz_size(p, 6);
        o.pKeyedMutexPrivateRuntimeData = fuzz_ptr(p, o.KeyedMutexPrivateRuntimeDataSize, false);
        if (D3DKMTOpenResourceFromNtHandle(&o))
            return;
        for (UINT i = 0; i < room; i++)
            allocs[i] = ((D3DDDI_OPENALLOCATIONINFO2 *)info)[i].hAllocation;
        opened(p, dev, o.hResource, allocs, room, o.hKeyedMutex, o.hSyncObject);
        return;
    }

    D3DKMT_OPENRESOURCE o = { .hDevice = dev, .hGlobalShare = global, .NumAllocations = z.allocations };

    OPEN_BUFFERS(o);
    if (v2 ? D3DKMTOpenResource2(&o) : D3DKMTOpenResource(&o))
        return;
    for (UINT i = 0; i < room; i++)
        allocs[i] = v2 ? o.pOpenAllocationInfo2[i].hAllocation : o.pOpenAllocationInfo[i].hAllocation;
    opened(p, dev, o.hResource, allocs, room, 0, 0);
}

void step_open_nt_from_name(struct fuzz_prog *p)
{
    OBJECT_ATTRIBUTES *attrs = fuzz_share_name(p);
    DWORD access = access_mask(p);

    if (fuzz_u8(&p->in) & 1) {
        D3DKMT_OPENNTHANDLEFROMNAME o = { access, attrs, (HANDLE)(intptr_t)-1 };

        if (!D3DKMTOpenNtHandleFromName(&o))
            fuzz_share_add_nt(p, o.hNtHandle, "OpenNtHandleFromName");
    } else {
        D3DKMT_OPENSYNCOBJECTNTHANDLEFROMNAME o = { access, attrs, (HANDLE)(intptr_t)-1 };

        if (!D3DKMTOpenSyncObjectNtHandleFromName(&o))
            fuzz_share_add_nt(p, o.hNtHandle, "OpenSyncObjectNtHandleFromName");
    }
}

/* ---- keyed mutexes ------------------------------------------------------------ */

void step_create_keyed_mutex(struct fuzz_prog *p)
{
    UINT64 key = fuzz_u8(&p->in) % 4 ? fuzz_u8(&p->in) % 3 : fuzz_u64(&p->in);

    if (fuzz_u8(&p->in) & 1) {
        D3DKMT_CREATEKEYEDMUTEX c = { .InitialValue = key };

        if (!D3DKMTCreateKeyedMutex(&c)) {
            fuzz_pool_add(&p->pool, FK_KEYED_MUTEX, c.hKeyedMutex, 0);
            fuzz_share_add_global(p, c.hSharedHandle);
        }
        return;
    }

    D3DKMT_CREATEKEYEDMUTEX2 c = { .InitialValue = key };

    runtime_data(p, &c.pPrivateRuntimeData, &c.PrivateRuntimeDataSize);
    c.Flags.Value = fuzz_flags(p, 1);
    if (!D3DKMTCreateKeyedMutex2(&c)) {
        fuzz_pool_add(&p->pool, FK_KEYED_MUTEX, c.hKeyedMutex, 0);
        fuzz_share_add_global(p, c.hSharedHandle);
        if (c.Flags.NtSecuritySharing && c.hSharedHandle)
            fuzz_finding("CreateKeyedMutex2 with NtSecuritySharing gave global handle %#x", c.hSharedHandle);
    }
}

void step_open_keyed_mutex(struct fuzz_prog *p)
{
    D3DKMT_HANDLE h = 0;
    NTSTATUS s;

    switch (fuzz_u8(&p->in) % 3) {
    case 0: {
        D3DKMT_OPENKEYEDMUTEX o = { fuzz_share_global(p) };

        s = D3DKMTOpenKeyedMutex(&o);
        h = o.hKeyedMutex;
        break;
    }
    case 1: {
        D3DKMT_OPENKEYEDMUTEX2 o = { fuzz_share_global(p) };

        o.PrivateRuntimeDataSize = fuzz_u8(&p->in) % 2 ? 0 : fuzz_size(p, 6);
        o.pPrivateRuntimeData = fuzz_ptr(p, o.PrivateRuntimeDataSize, true);
        s = D3DKMTOpenKeyedMutex2(&o);
        h = o.hKeyedMutex;
        break;
    }
    default: {
        D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE o = { fuzz_share_nt(p) };

        o.PrivateRuntimeDataSize = fuzz_u8(&p->in) % 2 ? 0 : fuzz_size(p, 6);
        o.pPrivateRuntimeData = fuzz_ptr(p, o.PrivateRuntimeDataSize, false);
        s = D3DKMTOpenKeyedMutexFromNtHandle(&o);
        h = o.hKeyedMutex;
    }
    }
    if (!s)
        fuzz_pool_add(&p->pool, FK_KEYED_MUTEX, h, 0);
}

void step_destroy_keyed_mutex(struct fuzz_prog *p)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { fuzz_pool_handle(&p->pool, FK_KEYED_MUTEX, &p->in) };

    if (D3DKMTDestroyKeyedMutex(&d))
        return;
    fuzz_pool_expect_live(&p->pool, d.hKeyedMutex, "DestroyKeyedMutex");
    fuzz_pool_kill(&p->pool, d.hKeyedMutex);
}

/* A bounded timeout: 0, a few milliseconds (relative, negative), or an
 * absolute time long past.  NULL (infinite) would wait for this thread. */
static LARGE_INTEGER *timeout(struct fuzz_prog *p)
{
    LARGE_INTEGER *t = fuzz_arena_alloc(sizeof(*t));

    if (t) {
        switch (fuzz_u8(&p->in) % 4) {
        case 0: t->QuadPart = -(LONGLONG)(fuzz_u8(&p->in) % 3) * 10000; break;
        case 1: t->QuadPart = 1 + fuzz_u8(&p->in); break;
        default: t->QuadPart = 0;
        }
    }
    return t;
}

static UINT64 key(struct fuzz_prog *p)
{
    return fuzz_u8(&p->in) % 8 ? fuzz_u8(&p->in) % 3 : fuzz_u64(&p->in);
}

void step_acquire_keyed_mutex(struct fuzz_prog *p)
{
    D3DKMT_HANDLE h = fuzz_pool_handle(&p->pool, FK_KEYED_MUTEX, &p->in);

    if (fuzz_u8(&p->in) & 1) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = h, .Key = key(p) };

        if ((a.pTimeout = timeout(p)))
            D3DKMTAcquireKeyedMutex(&a);
        return;
    }

    D3DKMT_ACQUIREKEYEDMUTEX2 a = { .hKeyedMutex = h, .Key = key(p) };

    a.PrivateRuntimeDataSize = fuzz_u8(&p->in) % 2 ? 0 : fuzz_size(p, 16);
    a.pPrivateRuntimeData = fuzz_ptr(p, a.PrivateRuntimeDataSize, false);
    if ((a.pTimeout = timeout(p)))
        D3DKMTAcquireKeyedMutex2(&a);
}

void step_release_keyed_mutex(struct fuzz_prog *p)
{
    D3DKMT_HANDLE h = fuzz_pool_handle(&p->pool, FK_KEYED_MUTEX, &p->in);
    bool v1 = fuzz_u8(&p->in) & 1;
    UINT64 k = key(p), value = fuzz_fence_value(p);

    if (v1) {
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = h, .Key = k, .FenceValue = value };

        D3DKMTReleaseKeyedMutex(&r);
        return;
    }

    D3DKMT_RELEASEKEYEDMUTEX2 r = { .hKeyedMutex = h, .Key = k, .FenceValue = value };

    r.PrivateRuntimeDataSize = fuzz_u8(&p->in) % 2 ? 0 : fuzz_size(p, 16);
    r.pPrivateRuntimeData = fuzz_ptr(p, r.PrivateRuntimeDataSize, true);
    D3DKMTReleaseKeyedMutex2(&r);
}

/* ---- sync objects ------------------------------------------------------------- */

void step_open_sync(struct fuzz_prog *p)
{
    switch (fuzz_u8(&p->in) % 3) {
    case 0: {
        D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { fuzz_share_global(p) };

        if (!D3DKMTOpenSynchronizationObject(&o))
            fuzz_pool_add(&p->pool, FK_SYNC, o.hSyncObject, 0);
        break;
    }
    case 1: {
        D3DKMT_OPENSYNCOBJECTFROMNTHANDLE o = { fuzz_share_nt(p) };

        if (!D3DKMTOpenSyncObjectFromNtHandle(&o))
            fuzz_pool_add(&p->pool, FK_SYNC, o.hSyncObject, 0);
        break;
    }
    default: {
        D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o = { fuzz_share_nt(p) };
        struct fuzz_object *obj;

        o.hDevice = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
        o.Flags.Value = fuzz_flags(p, 8);
        o.MonitoredFence.EngineAffinity = fuzz_u8(&p->in) % 4 ? 0 : fuzz_u32(&p->in);
        if (D3DKMTOpenSyncObjectFromNtHandle2(&o))
            return;
        /* a monitored fence opened on a device is the device's */
        obj = fuzz_pool_add(&p->pool, FK_SYNC, o.hSyncObject, o.MonitoredFence.FenceValueCPUVirtualAddress ? o.hDevice : 0);
        if (obj)
            obj->gpu_va = o.MonitoredFence.FenceValueGPUVirtualAddress;
    }
    }
}

/* ---- Wine's escapes ------------------------------------------------------------- */

void step_escape_wine(struct fuzz_prog *p)
{
    D3DKMT_ESCAPE e = { 0 };
    bool update = fuzz_u8(&p->in) & 1;

    e.Type = update ? D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE : D3DKMT_ESCAPE_SET_PRESENT_RECT_WINE;
    e.hAdapter = fuzz_u8(&p->in) % 4 ? 0 : fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in);
    e.hDevice = fuzz_u8(&p->in) % 4 ? 0 : fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
    /* hContext: the resource, or a window's handle */
    e.hContext = update ? fuzz_pool_handle(&p->pool, FK_RESOURCE, &p->in) : fuzz_u32(&p->in);
    e.PrivateDriverDataSize = fuzz_size(p, update ? 24 : D3DKMT_WINE_PRESENT_RECT_SIZE);
    if (fuzz_u8(&p->in) % 8 == 0)      /* the runtime data's limit, and one past it */
        e.PrivateDriverDataSize = D3DKMT_WINE_RUNTIME_DATA_MAX + (fuzz_u8(&p->in) & 1);
    e.pPrivateDriverData = fuzz_ptr(p, e.PrivateDriverDataSize, true);
    D3DKMTEscape(&e);
}
