/*
 * The chaos engine (chaos.h): threads over one shared pool of handles.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "chaos_share.h"

#define MAX_THREADS 8                      /* KMT_CHAOS_THREADS: 4 to 8, 6 by default */
#define HEAP_PAGES 16
#define ADAPTER_SLOTS 4
#define DEVICE_SLOTS 4
#define ALLOC_SLOTS 32
#define RESOURCE_SLOTS 8
#define CONTEXT_SLOTS 8
#define SYNC_SLOTS 16
#define SESSION_SLOTS 2
#define TALLIES 64                         /* names of calls, at most */

/* A slot holds (owner << 32) | handle; local handles have their low 6 bits
 * clear, which carry the object's kind. */
#define SLOT(owner, handle, kind) (((uint64_t)(owner) << 32) | (handle) | (kind))
#define SLOT_HANDLE(v) ((D3DKMT_HANDLE)((v) & 0xffffffc0u))
#define SLOT_KIND(v) ((unsigned)((v) & 0x3f))
#define SLOT_OWNER(v) ((D3DKMT_HANDLE)((v) >> 32))
#define SLOT_OWNER_MASK 0xffffffff00000000ull
#define SLOT_KIND_MASK 0x3full

enum { CTX_VIRTUAL, CTX_LEGACY };
enum { SYNC_MUTEX, SYNC_SEMAPHORE, SYNC_FENCE, SYNC_CPU_NOTIFICATION, SYNC_MONITORED, SYNC_KINDS };

static const struct chaos_backend *backend;
static unsigned threads;
/* Slots in use, from the seed: fewer slots, more threads on each object. */
static unsigned n_devices, n_allocs, n_resources, n_contexts, n_syncs;

static unsigned status_bit(NTSTATUS s)
{
    switch (s) {
    case STATUS_SUCCESS: return OK;
    case STATUS_INVALID_PARAMETER: return INVALID;
    case STATUS_DEVICE_REMOVED: return REMOVED;
    case STATUS_TIMEOUT: return TIMEOUT;
    case STATUS_ABANDONED: return ABANDONED;
    case STATUS_INVALID_HANDLE: return BAD_HANDLE;
    case STATUS_GRAPHICS_ALLOCATION_BUSY: return BUSY;
    case STATUS_RESOURCE_IN_USE: return IN_USE;
    case STATUS_DEVICE_NOT_CONNECTED: return NOT_CONNECTED;
    case STATUS_INVALID_DEVICE_STATE: return DEVICE_STATE;
    default:
        for (unsigned i = 0; i < sizeof(backend->fault_status) / sizeof(backend->fault_status[0]); i++)
            if (backend->fault_status[i] && s == backend->fault_status[i])
                return FAULT;
        return 0;
    }
}

struct world {
    D3DKMT_HANDLE adapter;                 /* the test thread's, never in the pool */
    LUID luid;
    _Atomic uint64_t adapters[ADAPTER_SLOTS];
    _Atomic uint64_t devices[DEVICE_SLOTS];
    _Atomic uint64_t allocs[ALLOC_SLOTS];  /* owner: the device */
    _Atomic uint64_t resources[RESOURCE_SLOTS];
    _Atomic uint64_t contexts[CONTEXT_SLOTS];
    _Atomic uint64_t syncs[SYNC_SLOTS];    /* owner: the device it was made on */
    _Atomic uint64_t sessions[SESSION_SLOTS];  /* Miracast */
    atomic_ullong fence_value;             /* values for monitored fence signals and waits */
    int notify_fd;                         /* the event of every CPU notification object */
    /* A stale context handle of the pool may name a thread's legacy context
     * once its index and generation come round again: DestroyContext would
     * destroy it, and the buffers the thread writes with it.  So the pool's
     * DestroyContext spares the handles in `legacy` (checked holding this
     * shared), and a thread makes its context and enters it there holding
     * it exclusively. */
    pthread_rwlock_t legacy_guard;
    _Atomic D3DKMT_HANDLE legacy[MAX_THREADS];
    UINT64 deadline_ns;
};

struct worker {
    struct world *w;
    pthread_t thread;
    unsigned index, seed, ops;
    _Atomic unsigned done;                 /* ops done: the watchdog reads it */
    struct chaos_streams streams;          /* on a device of its own */
    /* a legacy context on another device of its own (remade when lost):
     * only this thread writes its buffers, what they name is in the pool */
    D3DKMT_HANDLE render_device;
    D3DKMT_CREATECONTEXT legacy;
    void *heap;                            /* pages for existing-heap allocations, freed at the end */
    int async_fd;                          /* async CPU waits set this */
    unsigned async_started;
    _Atomic(const char *) current;         /* the call it is in, for the watchdog */
    /* the first unexpected thing */
    const char *what;
    NTSTATUS status;
    unsigned at_op;
    unsigned long long calls, successes;
    struct tally { const char *name; unsigned long long calls, ok, invalid, other; } tally[TALLIES];
};

static UINT64 now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

static unsigned rnd(struct worker *t)
{
    /* xorshift32: cheap, and the same sequence for the same seed */
    unsigned x = t->seed;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return t->seed = x;
}

static unsigned pick(struct worker *t, unsigned n)
{
    return rnd(t) % n;
}

/* Records `s` against what `name` may return, and returns it. */
static NTSTATUS check(struct worker *t, const char *name, NTSTATUS s, unsigned allowed)
{
    struct tally *y = t->tally;

    t->calls++;
    if (s == STATUS_SUCCESS)
        t->successes++;
    /* per call, for the coverage lines a run prints */
    while (y < t->tally + TALLIES && y->name && y->name != name && strcmp(y->name, name))
        y++;
    if (y < t->tally + TALLIES) {
        y->name = name;
        y->calls++;
        y->ok += s == STATUS_SUCCESS;
        y->invalid += s == STATUS_INVALID_PARAMETER;
        y->other += s && s != STATUS_INVALID_PARAMETER;
    }
    if (!(status_bit(s) & allowed) && !t->what) {
        t->what = name;
        t->status = s;
        t->at_op = t->done;
    }
    return s;
}

/* The call it is in is what the watchdog prints if the run hangs. */
#define CALL(t, name, expr, allowed) \
    (atomic_store_explicit(&(t)->current, name, memory_order_relaxed), check(t, name, (expr), allowed))

/* ---- calls, with no Check assertions ---------------------------------------------------------- */

static NTSTATUS create_allocations(D3DKMT_HANDLE dev, UINT n, bool resource, D3DKMT_HANDLE *res,
                                   D3DKMT_HANDLE *allocs, D3DGPU_VIRTUAL_ADDRESS *va)
{
    UINT64 desc[4][CHAOS_DESC_MAX / 8];
    D3DDDI_ALLOCATIONINFO2 info[4];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    memset(info, 0, sizeof(info));
    for (UINT i = 0; i < n; i++) {
        info[i].pPrivateDriverData = desc[i];
        info[i].PrivateDriverDataSize = backend->alloc_desc(desc[i]);
    }
    ca.hDevice = dev;
    ca.NumAllocations = n;
    ca.pAllocationInfo2 = info;
    ca.Flags.CreateResource = resource;
    ca.Flags.CreateShared = resource && (n & 1);     /* a global handle too */
    if ((s = D3DKMTCreateAllocation2(&ca)))
        return s;
    for (UINT i = 0; i < n; i++) {
        allocs[i] = info[i].hAllocation;
        if (va)
            va[i] = info[i].GpuVirtualAddress;
    }
    if (resource)
        *res = ca.hResource;
    return s;
}

static NTSTATUS destroy_allocations(D3DKMT_HANDLE dev, D3DKMT_HANDLE res, const D3DKMT_HANDLE *list,
                                    UINT count, UINT flags)
{
    D3DKMT_DESTROYALLOCATION2 d = { 0 };

    d.hDevice = dev;
    d.hResource = res;
    d.phAllocationList = list;
    d.AllocationCount = count;
    d.Flags.Value = flags;
    return D3DKMTDestroyAllocation2(&d);
}

static NTSTATUS destroy_device(D3DKMT_HANDLE dev)
{
    D3DKMT_DESTROYDEVICE d = { dev };
    return D3DKMTDestroyDevice(&d);
}

static NTSTATUS close_adapter(D3DKMT_HANDLE a)
{
    D3DKMT_CLOSEADAPTER c = { a };
    return D3DKMTCloseAdapter(&c);
}

/* ---- the operations ---------------------------------------------------------------------------- */

static uint64_t any(struct worker *t, _Atomic uint64_t *slots, unsigned n)
{
    return atomic_load(&slots[pick(t, n)]);
}

/* Puts a new object in a random slot; the caller destroys what it displaced. */
static uint64_t put(struct worker *t, _Atomic uint64_t *slots, unsigned n, uint64_t v)
{
    return atomic_exchange(&slots[pick(t, n)], v);
}

/* Puts a new object in an empty slot if there is one, else (`replace`) in
 * a random one; the caller destroys what it displaced, or the new object
 * if it found no place.  For the objects whose replacement would destroy
 * much (devices, contexts). */
static uint64_t fill(struct worker *t, _Atomic uint64_t *slots, unsigned n, uint64_t v, bool replace)
{
    unsigned from = pick(t, n);

    for (unsigned i = 0; i < n; i++) {
        uint64_t empty = 0;

        if (atomic_compare_exchange_strong(&slots[(from + i) % n], &empty, v))
            return 0;
    }
    return replace ? atomic_exchange(&slots[from], v) : v;
}

/* From a random place on, the first value whose bits under `mask` are
 * `want` (an owner, a kind), else the one at that place. */
static uint64_t find(struct worker *t, _Atomic uint64_t *slots, unsigned n, uint64_t want, uint64_t mask)
{
    unsigned from = pick(t, n);

    for (unsigned i = 0; i < n; i++) {
        uint64_t v = atomic_load(&slots[(from + i) % n]);

        if (v && (v & mask) == want)
            return v;
    }
    return atomic_load(&slots[from]);
}

/* Takes a handle out of its slot (so no one else destroys it by the pool),
 * or, half of the time, leaves it there to go stale. */
static uint64_t take(struct worker *t, _Atomic uint64_t *slots, unsigned n)
{
    unsigned i = pick(t, n);

    return pick(t, 2) ? atomic_exchange(&slots[i], 0) : atomic_load(&slots[i]);
}

static D3DKMT_HANDLE any_adapter(struct worker *t)
{
    uint64_t v = any(t, t->w->adapters, ADAPTER_SLOTS);

    return v ? SLOT_HANDLE(v) : t->w->adapter;
}

static void drop_adapter(struct worker *t, uint64_t v)
{
    if (v)
        CALL(t, "CloseAdapter", close_adapter(SLOT_HANDLE(v)), OK | INVALID);
}

static void drop_device(struct worker *t, uint64_t v)
{
    if (v)
        CALL(t, "DestroyDevice", destroy_device(SLOT_HANDLE(v)), OK | INVALID);
}

/* SynchronousDestroy half of the time; AssumeNotInUse (which lets the
 * memory go under queued work, faulting its device) more rarely. */
static UINT destroy_flags(struct worker *t)
{
    return (pick(t, 8) ? 0 : 1) | (pick(t, 2) ? 2 : 0);
}

static void drop_alloc(struct worker *t, uint64_t v)
{
    D3DKMT_HANDLE h = SLOT_HANDLE(v);

    if (v)
        CALL(t, "DestroyAllocation2", destroy_allocations(SLOT_OWNER(v), 0, &h, 1, destroy_flags(t)), OK | INVALID);
}

static void drop_resource(struct worker *t, uint64_t v)
{
    if (v)
        CALL(t, "DestroyAllocation2(resource)", destroy_allocations(SLOT_OWNER(v), SLOT_HANDLE(v), NULL, 0, destroy_flags(t)),
             OK | INVALID);
}

static void drop_context(struct worker *t, uint64_t v)
{
    bool spare = false;

    if (!v)
        return;
    pthread_rwlock_rdlock(&t->w->legacy_guard);
    for (unsigned i = 0; i < threads; i++)
        spare |= atomic_load(&t->w->legacy[i]) == SLOT_HANDLE(v);
    if (!spare)
        CALL(t, "DestroyContext", kmt_exec_destroy_context(SLOT_HANDLE(v)), OK | INVALID);
    pthread_rwlock_unlock(&t->w->legacy_guard);
}

static void drop_sync(struct worker *t, uint64_t v)
{
    if (v)
        CALL(t, "DestroySynchronizationObject", kmt_syncobj_destroy(SLOT_HANDLE(v)), OK | INVALID);
}

static void op_open_adapter(struct worker *t)
{
    D3DKMT_OPENADAPTERFROMLUID o = { 0 };

    o.AdapterLuid = t->w->luid;
    if (!CALL(t, "OpenAdapterFromLuid", D3DKMTOpenAdapterFromLuid(&o), OK))
        drop_adapter(t, put(t, t->w->adapters, ADAPTER_SLOTS, SLOT(0, o.hAdapter, 0)));
}

static void op_close_adapter(struct worker *t)
{
    drop_adapter(t, take(t, t->w->adapters, ADAPTER_SLOTS));
}

static void op_create_device(struct worker *t)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = any_adapter(t);
    if (!CALL(t, "CreateDevice", D3DKMTCreateDevice(&cd), OK | FAULT | INVALID))
        drop_device(t, fill(t, t->w->devices, n_devices, SLOT(0, cd.hDevice, 0), false));
}

/* Out of the pool: an empty slot is refilled, a stale one would stay (its
 * children's slots keep stale devices anyway). */
static void op_destroy_device(struct worker *t)
{
    drop_device(t, atomic_exchange(&t->w->devices[pick(t, n_devices)], 0));
}

static void op_create_alloc(struct worker *t)
{
    D3DKMT_HANDLE dev = SLOT_HANDLE(any(t, t->w->devices, n_devices)), h;

    /* some on the thread's own device, for its legacy context to render with */
    if (t->render_device && !pick(t, 4))
        dev = t->render_device;
    if (!CALL(t, "CreateAllocation2", create_allocations(dev, 1, false, NULL, &h, NULL), OK | FAULT | INVALID))
        drop_alloc(t, put(t, t->w->allocs, n_allocs, SLOT(dev, h, 0)));
}

/* An allocation over one of the thread's own pages (the core probes
 * them; the miniport maps or copies them). */
static void op_create_sysmem(struct worker *t)
{
    D3DKMT_HANDLE dev = SLOT_HANDLE(any(t, t->w->devices, n_devices)), h;
    char *page = (char *)t->heap + pick(t, HEAP_PAGES) * CHAOS_ALLOC_SIZE;

    if (!CALL(t, "CreateAllocation(existing heap)", kmt_test_create_existing_heap(dev, page, CHAOS_ALLOC_SIZE, &h),
              OK | FAULT | INVALID))
        drop_alloc(t, put(t, t->w->allocs, n_allocs, SLOT(dev, h, 2)));
}

/* A resource; its allocations go to the allocation pool too, where others
 * lock and destroy them while the resource is destroyed. */
static void op_create_resource(struct worker *t)
{
    D3DKMT_HANDLE dev = SLOT_HANDLE(any(t, t->w->devices, n_devices)), res, h[3];
    UINT n = 1 + pick(t, 3);

    if (CALL(t, "CreateAllocation2(resource)", create_allocations(dev, n, true, &res, h, NULL), OK | FAULT | INVALID))
        return;
    for (UINT i = 0; i < n; i++)
        drop_alloc(t, put(t, t->w->allocs, n_allocs, SLOT(dev, h[i], 1)));
    drop_resource(t, put(t, t->w->resources, n_resources, SLOT(dev, res, 0)));
}

/* A new allocation joining a pool resource that others destroy meanwhile. */
static void op_join_resource(struct worker *t)
{
    uint64_t r = any(t, t->w->resources, n_resources);
    UINT64 desc[CHAOS_DESC_MAX / 8];
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };

    info.pPrivateDriverData = desc;
    info.PrivateDriverDataSize = backend->alloc_desc(desc);
    ca.hDevice = SLOT_OWNER(r);
    ca.hResource = SLOT_HANDLE(r);
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    if (!CALL(t, "CreateAllocation2(join)", D3DKMTCreateAllocation2(&ca), OK | FAULT | INVALID | BAD_HANDLE))
        drop_alloc(t, put(t, t->w->allocs, n_allocs, SLOT(ca.hDevice, info.hAllocation, 1)));
}

/* Several at once, all or nothing: any stale or foreign one refuses the
 * whole list. */
static void op_destroy_alloc_list(struct worker *t)
{
    D3DKMT_HANDLE list[3];
    uint64_t first = take(t, t->w->allocs, n_allocs);
    UINT n = 1 + pick(t, 3);

    list[0] = SLOT_HANDLE(first);
    for (UINT i = 1; i < n; i++)
        list[i] = SLOT_HANDLE(any(t, t->w->allocs, n_allocs));
    CALL(t, "DestroyAllocation2(list)", destroy_allocations(SLOT_OWNER(first), 0, list, n, destroy_flags(t)), OK | INVALID);
}

static void op_destroy_alloc(struct worker *t)
{
    drop_alloc(t, take(t, t->w->allocs, n_allocs));
}

static void op_destroy_resource(struct worker *t)
{
    drop_resource(t, take(t, t->w->resources, n_resources));
}

/* Never touches the memory: another thread may destroy (and unmap) it. */
static void op_lock(struct worker *t)
{
    uint64_t v = any(t, t->w->allocs, n_allocs);
    D3DKMT_LOCK2 l = { 0 };
    D3DKMT_UNLOCK2 u = { 0 };

    /* now and then on the wrong device */
    l.hDevice = u.hDevice = pick(t, 8) ? SLOT_OWNER(v) : SLOT_HANDLE(any(t, t->w->devices, n_devices));
    l.hAllocation = u.hAllocation = SLOT_HANDLE(v);
    if (!CALL(t, "Lock2", D3DKMTLock2(&l), OK | FAULT | INVALID) && !l.pData && !t->what) {
        t->what = "Lock2 succeeded without an address";
        t->at_op = t->done;
    }
    CALL(t, "Unlock2", D3DKMTUnlock2(&u), OK | INVALID);
}

/* The first Lock, with DonotWait (refused while queued work uses the
 * allocation) or IgnoreSync now and then; never touches the memory. */
static void op_lock1(struct worker *t)
{
    uint64_t v = any(t, t->w->allocs, n_allocs);
    D3DKMT_LOCK l = { 0 };
    D3DKMT_UNLOCK u = { 0 };
    D3DKMT_HANDLE h = SLOT_HANDLE(v);
    NTSTATUS s;

    l.hDevice = u.hDevice = SLOT_OWNER(v);
    l.hAllocation = h;
    l.Flags.DonotWait = pick(t, 2);
    l.Flags.IgnoreSync = !pick(t, 4);
    l.Flags.ReadOnly = !pick(t, 4);
    u.NumAllocations = 1;
    u.phAllocations = &h;
    s = CALL(t, "Lock", D3DKMTLock(&l), OK | FAULT | INVALID | (l.Flags.DonotWait ? BUSY : 0));
    if (!s)
        CALL(t, "Unlock", D3DKMTUnlock(&u), OK | INVALID);
}

static void op_create_context(struct worker *t)
{
    D3DKMT_HANDLE dev = SLOT_HANDLE(any(t, t->w->devices, n_devices));
    D3DKMT_HANDLE ctx;
    unsigned kind = pick(t, 4) ? CTX_VIRTUAL : CTX_LEGACY;

    if (kind == CTX_VIRTUAL) {
        D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };

        cc.hDevice = dev;
        if (CALL(t, "CreateContextVirtual", D3DKMTCreateContextVirtual(&cc), OK | FAULT | INVALID | REMOVED))
            return;
        ctx = cc.hContext;
    } else {
        D3DKMT_CREATECONTEXT cc = { 0 };

        cc.hDevice = dev;
        if (CALL(t, "CreateContext", D3DKMTCreateContext(&cc), OK | FAULT | INVALID | REMOVED))
            return;
        ctx = cc.hContext;
    }
    drop_context(t, fill(t, t->w->contexts, n_contexts, SLOT(dev, ctx, kind), true));
}

static void op_destroy_context(struct worker *t)
{
    drop_context(t, take(t, t->w->contexts, n_contexts));
}

/* One of the thread's fixed streams (never rewritten, so queued work reads
 * what was written), or now and then one that faults the device. */
static void op_submit(struct worker *t)
{
    uint64_t v = any(t, t->w->contexts, n_contexts);
    unsigned s = pick(t, 4);

    if (SLOT_KIND(v) == CTX_LEGACY) {
        D3DKMT_RENDER r = { 0 };

        r.hContext = SLOT_HANDLE(v);
        CALL(t, "Render", D3DKMTRender(&r), OK | FAULT | INVALID | REMOVED);
        return;
    }
    if (!backend->streams_create)
        return;                             /* the adapter runs no streams of ours */
    if (!pick(t, 512))
        s = 3;                              /* the faulting one */
    if (!pick(t, 4)) {
        D3DKMT_SUBMITCOMMAND sc = { 0 };

        /* broadcast to two contexts, of one device or not */
        sc.Commands = t->streams.va[s];
        sc.CommandLength = t->streams.length[s];
        sc.BroadcastContextCount = 2;
        sc.BroadcastContext[0] = SLOT_HANDLE(v);
        sc.BroadcastContext[1] = SLOT_HANDLE(any(t, t->w->contexts, n_contexts));
        CALL(t, "SubmitCommand(broadcast)", D3DKMTSubmitCommand(&sc), OK | FAULT | INVALID | REMOVED);
        return;
    }
    CALL(t, "SubmitCommand", kmt_submit_va(SLOT_HANDLE(v), t->streams.va[s], t->streams.length[s]),
         OK | FAULT | INVALID | REMOVED);
}

/* The thread's device for Render and its legacy context; 0 if it could
 * not be made (an injected failure). */
static void make_render_device(struct worker *t)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CREATECONTEXT cc = { 0 };

    t->render_device = 0;
    cd.hAdapter = t->w->adapter;
    if (CALL(t, "CreateDevice(render)", D3DKMTCreateDevice(&cd), OK | FAULT))
        return;
    cc.hDevice = cd.hDevice;
    pthread_rwlock_wrlock(&t->w->legacy_guard);
    if (!CALL(t, "CreateContext(render)", D3DKMTCreateContext(&cc), OK | FAULT))
        atomic_store(&t->w->legacy[t->index], cc.hContext);
    pthread_rwlock_unlock(&t->w->legacy_guard);
    if (cc.hContext) {
        t->render_device = cd.hDevice;
        t->legacy = cc;
    } else {
        CALL(t, "DestroyDevice(render)", destroy_device(cd.hDevice), OK);
    }
}

static void drop_render_device(struct worker *t)
{
    CALL(t, "DestroyDevice(render)", destroy_device(t->render_device), OK);
    atomic_store(&t->w->legacy[t->index], 0);
    t->render_device = 0;
}

/* Render on the thread's own legacy context, filling pool allocations
 * (patched in) that others lock and destroy meanwhile: queued work holds
 * their reclaim back, a lock waits for it or (DonotWait) is refused.  An
 * allocation destroyed with AssumeNotInUse may fault the device: a new
 * one is made. */
static void op_render(struct worker *t)
{
    D3DKMT_RENDER r = { 0 };
    UINT n = 1 + pick(t, 2);

    if (!backend->fill_patched)
        return;
    if (!t->render_device && (make_render_device(t), !t->render_device))
        return;
    for (UINT i = 0; i < n; i++) {
        uint64_t v = find(t, t->w->allocs, n_allocs, SLOT(t->render_device, 0, 0), SLOT_OWNER_MASK);
        D3DDDI_PATCHLOCATIONLIST *p = &t->legacy.pPatchLocationList[i];
        UINT start = r.CommandLength, patch;

        t->legacy.pAllocationList[i].hAllocation = SLOT_HANDLE(v);
        t->legacy.pAllocationList[i].Value = 0;
        t->legacy.pAllocationList[i].WriteOperation = 1;
        r.CommandLength += backend->fill_patched((char *)t->legacy.pCommandBuffer + start, 256,
                                                 pick(t, 2) ? 0 : 300, &patch);
        memset(p, 0, sizeof(*p));
        p->AllocationIndex = i;
        p->AllocationOffset = 256 * pick(t, 8);
        p->PatchOffset = start + patch;
    }
    r.hContext = t->legacy.hContext;
    r.AllocationCount = n;
    r.PatchLocationCount = n;
    /* an allocation of another device, or one destroyed: STATUS_INVALID_HANDLE */
    if (CALL(t, "Render(allocations)", D3DKMTRender(&r), OK | BAD_HANDLE | REMOVED) == STATUS_DEVICE_REMOVED)
        drop_render_device(t);
}

static void op_create_sync(struct worker *t)
{
    D3DKMT_HANDLE dev = SLOT_HANDLE(any(t, t->w->devices, n_devices));
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    unsigned kind = pick(t, SYNC_KINDS);

    cs.hDevice = dev;
    cs.Info.Flags.Shared = pick(t, 4) == 0;  /* a global handle too, gone with the object */
    switch (kind) {
    case SYNC_MUTEX:
        cs.Info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
        cs.Info.SynchronizationMutex.InitialState = pick(t, 2);
        break;
    case SYNC_SEMAPHORE:
        cs.Info.Type = D3DDDI_SEMAPHORE;
        cs.Info.Semaphore.MaxCount = 4;
        cs.Info.Semaphore.InitialCount = pick(t, 5);
        break;
    case SYNC_FENCE:
        cs.Info.Type = D3DDDI_FENCE;
        break;
    case SYNC_CPU_NOTIFICATION:
        cs.Info.Type = D3DDDI_CPU_NOTIFICATION;
        cs.Info.CPUNotification.Event = kmt_event_handle(t->w->notify_fd);
        break;
    default:
        cs.Info.Type = D3DDDI_MONITORED_FENCE;
        cs.Info.MonitoredFence.InitialFenceValue = atomic_load(&t->w->fence_value);
        break;
    }
    if (!CALL(t, "CreateSynchronizationObject2", D3DKMTCreateSynchronizationObject2(&cs), OK | FAULT | INVALID))
        drop_sync(t, put(t, t->w->syncs, n_syncs, SLOT(dev, cs.hSyncObject, kind)));
}

static void op_destroy_sync(struct worker *t)
{
    drop_sync(t, take(t, t->w->syncs, n_syncs));
}

/* A fence value near the latest: mostly reached already, sometimes not yet. */
static UINT64 near_value(struct worker *t)
{
    UINT64 v = atomic_load(&t->w->fence_value);

    return v + 2 - pick(t, 6);
}

static void op_cpu_signal(struct worker *t)
{
    uint64_t v = find(t, t->w->syncs, n_syncs, SYNC_MONITORED, SLOT_KIND_MASK);
    UINT64 value = atomic_fetch_add(&t->w->fence_value, 1) + 1;
    UINT rewind = pick(t, 16) ? 0 : 4;      /* AllowFenceRewind, to a lower value */

    if (rewind)
        value -= 1 + pick(t, 8);
    CALL(t, "SignalSynchronizationObjectFromCpu", kmt_fence_signal(SLOT_OWNER(v), SLOT_HANDLE(v), value, rewind),
         OK | INVALID);
}

static void op_cpu_wait(struct worker *t)
{
    uint64_t v = find(t, t->w->syncs, n_syncs, SYNC_MONITORED, SLOT_KIND_MASK);

    if (!pick(t, 4)) {
        NTSTATUS s = CALL(t, "WaitForSynchronizationObjectFromCpu(async)",
                          kmt_fence_wait_or_event(SLOT_OWNER(v), SLOT_HANDLE(v), near_value(t), kmt_event_handle(t->async_fd), 0),
                          OK | INVALID);
        if (!s)
            t->async_started++;
        return;
    }
    if (!pick(t, 3)) {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
        D3DKMT_HANDLE h[3];
        UINT64 values[3];

        for (unsigned i = 0; i < 3; i++) {
            h[i] = SLOT_HANDLE(i ? find(t, t->w->syncs, n_syncs, SYNC_MONITORED, SLOT_KIND_MASK) : v);
            values[i] = near_value(t);
        }
        w.hDevice = SLOT_OWNER(v);
        w.ObjectCount = 3;
        w.ObjectHandleArray = h;
        w.FenceValueArray = values;
        w.Flags.WaitAny = pick(t, 2);
        CALL(t, "WaitForSynchronizationObjectFromCpu(3)", KmtWaitForSynchronizationObjectFromCpuTimeout(&w, (int)pick(t, 20)),
             OK | INVALID | TIMEOUT | ABANDONED);
        return;
    }
    CALL(t, "WaitForSynchronizationObjectFromCpu",
         kmt_fence_wait_or_event(SLOT_OWNER(v), SLOT_HANDLE(v), near_value(t), NULL, (int)pick(t, 20)),
         OK | INVALID | TIMEOUT | ABANDONED);
}

/* Signals and waits queued on a context: monitored fences by value, the
 * others (mutexes, semaphores, fences, CPU notifications) the legacy way. */
static void op_gpu_sync(struct worker *t)
{
    uint64_t c = any(t, t->w->contexts, n_contexts), v = any(t, t->w->syncs, n_syncs);
    D3DKMT_HANDLE ctx = SLOT_HANDLE(c), h = SLOT_HANDLE(v);
    bool signal = pick(t, 2);

    if (SLOT_KIND(v) == SYNC_MONITORED && !pick(t, 4)) {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s2 = { 0 };
        D3DKMT_HANDLE ctxs[2] = { ctx, SLOT_HANDLE(any(t, t->w->contexts, n_contexts)) };
        UINT64 value = atomic_fetch_add(&t->w->fence_value, 1) + 1;

        /* one fence from two queues, or a CPU event when both passed it */
        s2.ObjectCount = 1;
        s2.ObjectHandleArray = &h;
        s2.BroadcastContextCount = 1 + pick(t, 2);
        s2.BroadcastContextArray = ctxs;
        if (pick(t, 2)) {
            s2.MonitoredFenceValueArray = &value;
        } else {
            s2.ObjectCount = 0;
            s2.ObjectHandleArray = NULL;
            s2.Flags.EnqueueCpuEvent = 1;
            s2.CpuEventHandle = kmt_event_handle(t->w->notify_fd);
        }
        CALL(t, "SignalSynchronizationObjectFromGpu2", D3DKMTSignalSynchronizationObjectFromGpu2(&s2),
             OK | INVALID | REMOVED);
    } else if (SLOT_KIND(v) == SYNC_MONITORED) {
        if (signal)
            CALL(t, "SignalSynchronizationObjectFromGpu",
                 kmt_gpu_signal(ctx, h, atomic_fetch_add(&t->w->fence_value, 1) + 1), OK | INVALID | REMOVED);
        else
            CALL(t, "WaitForSynchronizationObjectFromGpu", kmt_gpu_wait(ctx, h, near_value(t)),
                 OK | INVALID | REMOVED);
    } else if (signal) {
        CALL(t, "SignalSynchronizationObject2", kmt_signal2(ctx, h, atomic_fetch_add(&t->w->fence_value, 1) + 1),
             OK | INVALID | REMOVED);
    } else {
        CALL(t, "WaitForSynchronizationObject2", kmt_wait2(ctx, h, near_value(t)), OK | INVALID | REMOVED);
    }
}

/* Miracast sessions: one sink, so a start often finds it busy; IoControls,
 * status queries and reports race the stop of their session. */
static void drop_session(struct worker *t, uint64_t v)
{
    if (v)
        CALL(t, "KmtMiracastStopSession", KmtMiracastStopSession(SLOT_HANDLE(v), NULL), OK | INVALID | DEVICE_STATE);
}

static void op_miracast(struct worker *t)
{
    uint64_t v = any(t, t->w->sessions, SESSION_SLOTS);
    D3DKMT_HANDLE h = SLOT_HANDLE(v);

    if (!backend->miracast_io)
        return;
    switch (pick(t, 6)) {
    case 0: {
        KMT_MIRACAST_SESSION_DESC d = { 0 };

        d.hAdapter = any_adapter(t);
        if (!CALL(t, "KmtMiracastStartSession", KmtMiracastStartSession(&d), OK | INVALID | IN_USE))
            drop_session(t, put(t, t->w->sessions, SESSION_SLOTS, SLOT(0, d.hSession, 0)));
        break;
    }
    case 1:
        drop_session(t, take(t, t->w->sessions, SESSION_SLOTS));
        break;
    case 2: {
        KMT_MIRACAST_SESSION_STATUS st;

        CALL(t, "KmtMiracastQueryStatus", KmtMiracastQueryStatus(h, &st), OK | INVALID);
        break;
    }
    case 3:
        CALL(t, "KmtMiracastReportSessionStatus",
             KmtMiracastReportSessionStatus(h, MIRACAST_STATUS_MISSING_KEEPALIVE, STATUS_TIMEOUT), OK | INVALID);
        break;
    default: {
        UINT64 in[32], out[8];
        UINT out_size, in_size = backend->miracast_io(in, &out_size, rnd(t)), returned;

        CALL(t, "KmtMiracastIoControl", KmtMiracastIoControl(h, in, in_size, out, out_size, &returned),
             OK | INVALID | NOT_CONNECTED | DEVICE_STATE);
        break;
    }
    }
}

/* Driver-private escapes through any adapter handle, naming pool objects
 * (the miniport looks them up while others destroy them). */
static void op_escape(struct worker *t)
{
    UINT64 data[CHAOS_ESCAPE_MAX / 8];
    D3DKMT_ESCAPE e = { 0 };

    if (!backend->escape)
        return;
    e.hAdapter = any_adapter(t);
    if (pick(t, 2))
        e.hDevice = SLOT_HANDLE(any(t, t->w->devices, n_devices));
    e.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    e.pPrivateDriverData = data;
    e.PrivateDriverDataSize = backend->escape(data, SLOT_HANDLE(any(t, t->w->allocs, n_allocs)),
                                              SLOT_HANDLE(any(t, t->w->syncs, n_syncs)), rnd(t));
    CALL(t, "Escape", D3DKMTEscape(&e), OK | FAULT | INVALID);    /* QUERY_FENCE asks the kernel */
}

/* The backend's failures, armed by one thread: the miniport's next kernel
 * calls fail now and then. */
static void op_inject(struct worker *t)
{
    if (backend->inject && t->index == 0)
        backend->inject(t->w->adapter, rnd(t));
}

static void op_query(struct worker *t)
{
    D3DKMT_HANDLE a = any_adapter(t);

    switch (pick(t, 3)) {
    case 0: {
        D3DKMT_DRIVERVERSION version;
        D3DKMT_QUERYADAPTERINFO q = { a, KMTQAITYPE_DRIVERVERSION, &version, sizeof(version) };

        CALL(t, "QueryAdapterInfo", D3DKMTQueryAdapterInfo(&q), OK | INVALID);
        break;
    }
    case 1: {
        D3DKMT_GETDEVICESTATE gs = { 0 };

        unsigned i = pick(t, n_devices);
        uint64_t v = atomic_load(&t->w->devices[i]);

        gs.hDevice = SLOT_HANDLE(v);
        gs.StateType = D3DKMT_DEVICESTATE_EXECUTION;
        /* a program that finds its device lost makes a new one */
        if (!CALL(t, "GetDeviceState", D3DKMTGetDeviceState(&gs), OK | INVALID) &&
            gs.ExecutionState != D3DKMT_DEVICEEXECUTION_ACTIVE && atomic_compare_exchange_strong(&t->w->devices[i], &v, 0))
            drop_device(t, v);
        break;
    }
    default: {
        D3DKMT_QUERYVIDEOMEMORYINFO q = { 0 };

        q.hAdapter = a;
        CALL(t, "QueryVideoMemoryInfo", D3DKMTQueryVideoMemoryInfo(&q), OK | INVALID);
        break;
    }
    }
}

/* Sharing (chaos_share.c), with the thread's own device. */
static unsigned share_rnd(void *worker)
{
    return rnd(worker);
}

static NTSTATUS share_check(void *worker, const char *name, NTSTATUS s, unsigned allowed)
{
    return check(worker, name, s, allowed);
}

static void op_share(struct worker *t)
{
    const struct chaos_share_thread s = { t, share_rnd, share_check, backend->alloc_desc };

    if (backend->share) {
        atomic_store_explicit(&t->current, "sharing", memory_order_relaxed);
        chaos_share_op(&s);
    }
}

/* Weights: uses far more often than the destroys that make them stale, a
 * device or an adapter handle (which take much with them) rarest. */
static const struct {
    void (*fn)(struct worker *);
    unsigned weight;
} ops[] = {
    { op_open_adapter, 1 }, { op_close_adapter, 1 },
    { op_create_device, 6 }, { op_destroy_device, 1 },
    { op_create_alloc, 28 }, { op_create_sysmem, 4 }, { op_create_resource, 12 }, { op_join_resource, 6 }, { op_destroy_alloc, 16 },
    { op_destroy_alloc_list, 4 }, { op_destroy_resource, 8 },
    { op_lock, 40 }, { op_lock1, 12 },
    { op_create_context, 12 }, { op_destroy_context, 8 },
    { op_submit, 40 }, { op_render, 16 },
    { op_create_sync, 20 }, { op_destroy_sync, 12 },
    { op_cpu_signal, 24 }, { op_cpu_wait, 24 }, { op_gpu_sync, 32 },
    { op_query, 16 }, { op_escape, 8 }, { op_inject, 8 }, { op_miracast, 12 },
    { op_share, 40 },
};

static void random_op(struct worker *t)
{
    unsigned total = 0, r;

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        total += ops[i].weight;
    r = pick(t, total);
    for (size_t i = 0;; i++) {
        if (r < ops[i].weight)
            return ops[i].fn(t);
        r -= ops[i].weight;
    }
}

/* A first few of everything, so that the threads start on a full pool. */
static void fill_pool(struct worker *t)
{
    for (unsigned i = 0; i < n_devices; i++)
        op_create_device(t);
    for (unsigned i = 0; i < n_allocs / 2; i++)
        op_create_alloc(t);
    for (unsigned i = 0; i < n_resources / 2; i++)
        op_create_resource(t);
    for (unsigned i = 0; i < n_contexts; i++)
        op_create_context(t);
    for (unsigned i = 0; i < n_syncs; i++)
        op_create_sync(t);
}

static void *worker_main(void *arg)
{
    struct worker *t = arg;

    for (t->done = 0; t->done < t->ops; t->done++) {
        if (!(t->done & 63) && now_ns() > t->w->deadline_ns)
            break;
        random_op(t);
    }
    atomic_store(&t->current, "finished");
    return NULL;
}

/* ---- setup, the watchdog, the end ------------------------------------------------------------------ */

/* The thread's own device and command streams, before the threads start
 * (Check asserts are fine here). */
static void worker_init(struct worker *t, struct world *w, unsigned index, unsigned seed, unsigned ops)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    memset(t, 0, sizeof(*t));
    t->w = w;
    t->index = index;
    t->seed = seed * 2654435761u + index * 40503u + 1;
    t->ops = ops;
    t->async_fd = kmt_eventfd();
    ck_assert_ptr_nonnull(t->heap = aligned_alloc(CHAOS_ALLOC_SIZE, HEAP_PAGES * CHAOS_ALLOC_SIZE));
    memset(t->heap, 0, HEAP_PAGES * CHAOS_ALLOC_SIZE);
    atomic_init(&t->current, "not started");
    cd.hAdapter = w->adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    t->streams.device = cd.hDevice;
    if (backend->streams_create)
        backend->streams_create(&t->streams);
    if (backend->fill_patched) {
        make_render_device(t);
        ck_assert_msg(t->render_device, "no device to render with: 0x%08x", (unsigned)t->status);
    }
}

struct watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    UINT64 limit_ns;
    struct worker *workers;
    unsigned n, seed;
};

/* A hang fails the run with what each thread was doing, rather than
 * waiting for Check's timeout to kill it silently. */
static void *watchdog_main(void *arg)
{
    struct watchdog *d = arg;
    struct timespec until;
    UINT64 at;

    clock_gettime(CLOCK_MONOTONIC, &until);
    at = (UINT64)until.tv_sec * 1000000000ull + (UINT64)until.tv_nsec + d->limit_ns;
    until.tv_sec = (time_t)(at / 1000000000ull);
    until.tv_nsec = (long)(at % 1000000000ull);
    pthread_mutex_lock(&d->lock);
    while (!d->done)
        if (pthread_cond_timedwait(&d->cond, &d->lock, &until) == ETIMEDOUT)
            break;
    if (!d->done) {
        fprintf(stderr, "chaos: hung after %llu s (seed %u)\n", (unsigned long long)(d->limit_ns / 1000000000ull), d->seed);
        for (unsigned i = 0; i < d->n; i++)
            fprintf(stderr, "  thread %u: op %u, in %s\n", i, d->workers[i].done,
                    atomic_load(&d->workers[i].current));
        abort();
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static unsigned env_uint(const char *name, unsigned fallback)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n;

    if (!v || !*v)
        return fallback;
    n = strtoul(v, &end, 0);
    return *end ? fallback : (unsigned)n;
}

/* Everything the pool still names is destroyed (the statuses say nothing:
 * much of it is stale); the threads' async waits have all been set. */
static void destroy_pool(struct world *w, struct worker *t)
{
    if (backend->share)
        chaos_share_destroy();
    for (unsigned i = 0; i < CONTEXT_SLOTS; i++)
        if (w->contexts[i])
            kmt_exec_destroy_context(SLOT_HANDLE(w->contexts[i]));
    for (unsigned i = 0; i < SYNC_SLOTS; i++)
        if (w->syncs[i])
            kmt_syncobj_destroy(SLOT_HANDLE(w->syncs[i]));
    for (unsigned i = 0; i < ALLOC_SLOTS; i++)
        if (w->allocs[i]) {
            D3DKMT_HANDLE h = SLOT_HANDLE(w->allocs[i]);
            destroy_allocations(SLOT_OWNER(w->allocs[i]), 0, &h, 1, 0);
        }
    for (unsigned i = 0; i < RESOURCE_SLOTS; i++)
        if (w->resources[i])
            destroy_allocations(SLOT_OWNER(w->resources[i]), SLOT_HANDLE(w->resources[i]), NULL, 0, 0);
    for (unsigned i = 0; i < SESSION_SLOTS; i++)
        if (w->sessions[i])
            KmtMiracastStopSession(SLOT_HANDLE(w->sessions[i]), NULL);
    for (unsigned i = 0; i < DEVICE_SLOTS; i++)
        if (w->devices[i])
            destroy_device(SLOT_HANDLE(w->devices[i]));
    for (unsigned i = 0; i < ADAPTER_SLOTS; i++)
        if (w->adapters[i])
            close_adapter(SLOT_HANDLE(w->adapters[i]));
    for (unsigned i = 0; i < threads; i++) {
        if (backend->streams_destroy)
            backend->streams_destroy(&t[i].streams);
        if (t[i].render_device) {
            drop_render_device(&t[i]);
            ck_assert_msg(!t[i].what, "%s: 0x%08x", t[i].what, (unsigned)t[i].status);
        }
        ck_assert_status(destroy_device(t[i].streams.device), STATUS_SUCCESS);
    }
}

static void expect_async_waits_set(struct worker *t)
{
    for (unsigned i = 0; i < threads; i++) {
        unsigned set = 0;

        for (unsigned waited = 0; set < t[i].async_started && waited < KMT_EXEC_WAIT_MS; waited++) {
            uint64_t count;

            if (read(t[i].async_fd, &count, sizeof(count)) == sizeof(count))
                set += (unsigned)count;
            else
                kmt_sleep_ms(1);
        }
        ck_assert_msg(set == t[i].async_started, "thread %u: %u async waits started, %u set", i,
                      t[i].async_started, set);
        close(t[i].async_fd);
    }
}

/* Calls made and succeeded, summed over the threads: what the run covered. */
static void print_tally(const struct worker *t)
{
    struct tally sum[TALLIES];
    unsigned n = 0;

    memset(sum, 0, sizeof(sum));
    for (unsigned i = 0; i < threads; i++)
        for (const struct tally *y = t[i].tally; y < t[i].tally + TALLIES && y->name; y++) {
            unsigned j = 0;

            while (j < n && strcmp(sum[j].name, y->name))
                j++;
            if (j == TALLIES)
                break;
            if (j == n)
                sum[n++].name = y->name;
            sum[j].calls += y->calls;
            sum[j].ok += y->ok;
            sum[j].invalid += y->invalid;
            sum[j].other += y->other;
        }
    for (unsigned j = 0; j < n; j++)
        fprintf(stderr, "  %-44s %8llu calls %8llu ok %8llu invalid %8llu other\n", sum[j].name, sum[j].calls,
                sum[j].ok, sum[j].invalid, sum[j].other);
}

void chaos_run(const struct chaos_backend *b)
{
    const char *name = b->name;
    static struct world w;
    static struct worker t[MAX_THREADS];
    struct watchdog d = { .lock = PTHREAD_MUTEX_INITIALIZER };
    pthread_condattr_t monotonic;
    unsigned seed = env_uint("KMT_CHAOS_SEED", 1);
    unsigned ops = env_uint("KMT_CHAOS_OPS", b->default_ops ? b->default_ops : 30000);
    unsigned seconds = env_uint("KMT_CHAOS_SECONDS", 20), live;
    unsigned long long calls = 0, successes = 0;
    UINT64 start;
    double elapsed;
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };

    threads = env_uint("KMT_CHAOS_THREADS", 6);
    threads = threads < 4 ? 4 : threads > MAX_THREADS ? MAX_THREADS : threads;
    /* odd seeds use every slot, even ones fewer (from a hash of the seed) */
    n_devices = DEVICE_SLOTS, n_allocs = ALLOC_SLOTS, n_resources = RESOURCE_SLOTS;
    n_contexts = CONTEXT_SLOTS, n_syncs = SYNC_SLOTS;
    if (!(seed & 1)) {
        unsigned h = seed * 2654435761u;

        n_devices = 1 + (h & 0xff) % DEVICE_SLOTS;
        n_allocs = 4 + (h >> 8 & 0xff) % (ALLOC_SLOTS - 3);
        n_resources = 1 + (h >> 16 & 0xf) % RESOURCE_SLOTS;
        n_contexts = 1 + (h >> 20 & 0xf) % CONTEXT_SLOTS;
        n_syncs = 2 + (h >> 24 & 0xff) % (SYNC_SLOTS - 1);
    }
    fprintf(stderr, "chaos %s: seed %u, %u threads, %u ops each (KMT_CHAOS_SEED, KMT_CHAOS_THREADS, KMT_CHAOS_OPS); "
            "slots: %u devices, %u allocations, %u resources, %u contexts, %u sync objects\n",
            name, seed, threads, ops, n_devices, n_allocs, n_resources, n_contexts, n_syncs);
    memset(&w, 0, sizeof(w));
    {
        pthread_rwlockattr_t writers_first;

        /* a thread remaking its context is not starved by a stream of destroys */
        pthread_rwlockattr_init(&writers_first);
        pthread_rwlockattr_setkind_np(&writers_first, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&w.legacy_guard, &writers_first);
    }
    backend = b;
    kmt_test_private_broker();
    /* a queue blocked by a GPU wait nobody satisfies is given up sooner */
    setenv("KMTSHIM_TDR_DELAY", "250", 1);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    w.adapter = info[0].hAdapter;
    w.luid = info[0].AdapterLuid;
    w.notify_fd = kmt_eventfd();
    if (b->miracast_io) {
        /* the adapter's Miracast state lives as long as the adapter: make it now */
        KMT_MIRACAST_SESSION_DESC d = { .hAdapter = w.adapter };

        ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
        ck_assert_status(KmtMiracastStopSession(d.hSession, NULL), STATUS_SUCCESS);
    }
    live = KmtLiveObjectCount();
    for (unsigned i = 0; i < threads; i++)
        worker_init(&t[i], &w, i, seed, ops);

    fill_pool(&t[0]);
    ck_assert_msg(!t[0].what, "filling the pool: %s returned 0x%08x", t[0].what, (unsigned)t[0].status);
    start = now_ns();
    w.deadline_ns = start + (UINT64)seconds * 1000000000ull;
    d.limit_ns = ((UINT64)seconds + 30) * 1000000000ull;
    d.workers = t;
    d.n = threads;
    d.seed = seed;
    /* the deadline is on CLOCK_MONOTONIC, as now_ns() */
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&d.cond, &monotonic);
    ck_assert_int_eq(pthread_create(&d.thread, NULL, watchdog_main, &d), 0);
    if (b->share)
        chaos_share_start(w.adapter, seed);
    for (unsigned i = 0; i < threads; i++)
        ck_assert_int_eq(pthread_create(&t[i].thread, NULL, worker_main, &t[i]), 0);
    for (unsigned i = 0; i < threads; i++)
        ck_assert_int_eq(pthread_join(t[i].thread, NULL), 0);
    elapsed = (double)(now_ns() - start) / 1e9;
    if (b->share)
        chaos_share_stop();

    for (unsigned i = 0; i < threads; i++) {
        if (t[i].done < t[i].ops)
            fprintf(stderr, "chaos %s: thread %u stopped at the time bound after %u ops\n", name, i, t[i].done);
        ck_assert_msg(!t[i].what, "seed %u thread %u op %u: %s returned 0x%08x", seed, i, t[i].at_op, t[i].what,
                      (unsigned)t[i].status);
        calls += t[i].calls;
        successes += t[i].successes;
    }
    fprintf(stderr, "chaos %s: %llu calls (%llu succeeded) in %.2f s: %.0f calls/s\n", name, calls, successes,
            elapsed, (double)calls / elapsed);

    print_tally(t);
    destroy_pool(&w, t);
    pthread_mutex_lock(&d.lock);
    d.done = true;
    pthread_cond_signal(&d.cond);
    pthread_mutex_unlock(&d.lock);
    ck_assert_int_eq(pthread_join(d.thread, NULL), 0);

    expect_async_waits_set(t);
    for (unsigned i = 0; i < threads; i++)
        free(t[i].heap);               /* no allocation over it is left */
    close(w.notify_fd);
    if (b->check_empty)
        b->check_empty(w.adapter);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    if (b->share)
        chaos_share_expect_broker_empty();
    kmt_test_shutdown_no_leaks();
}
