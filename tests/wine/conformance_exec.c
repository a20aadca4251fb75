/*
 * The Windows-side conformance suite, execution and synchronization:
 * contexts, device state, SubmitCommand and Render on the software engine,
 * sync objects (issue5-layouts.md §6, Windows-observed rows 1-16 and 24),
 * CPU waits blocking and with Win32 events, CPU notifications,
 * EnqueueCpuEvent, and two Windows threads ping-ponging over monitored
 * fences.  What a Windows program sees: Win32 event handles,
 * WaitForSingleObject, CreateThread.
 *
 * Waits on events are bounded (WAIT_MS): a lost wake-up fails a check
 * instead of hanging the program.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

#define WAIT_MS 10000
#define BAD_VA 0x00007f0000000000ull     /* no mapping of the soft adapter */
#define RING_SIZE 0x10000
#define NOT_AN_EVENT ((HANDLE)(ULONG_PTR)0xdeadbeef)

/* ---- fixture: the soft adapter, a device, and what the adapter held before -- */

struct exec_fixture {
    D3DKMT_HANDLE adapter, device;
    KMT_SOFT_ESCAPE before;
    DWORD handles;                       /* the process's handle count */
};

/* Open handles of the process.  Wine 8's GetProcessHandleCount says 0, so
 * the table is probed there: handles are small multiples of 4, allocated
 * from the lowest free slot, so the search stops 1024 values past the last
 * open one. */
DWORD kmt_count_handles(void)
{
    DWORD count = 0, flags;
    ULONG_PTR last = 0;

    if (GetProcessHandleCount(GetCurrentProcess(), &count) && count)
        return count;
    for (ULONG_PTR h = 4; h < last + 0x1000; h += 4) {
        if (GetHandleInformation((HANDLE)h, &flags)) {
            count++;
            last = h;
        }
    }
    return count;
}

static BOOL exec_open(struct exec_fixture *f)
{
    memset(f, 0, sizeof(*f));
    if (!(f->adapter = kmt_open_soft_adapter(NULL))) {
        skip("no software adapter through %s\n", kmt_api_via);
        return FALSE;
    }
    f->before = kmt_soft_stats(f->adapter);
    if (!(f->device = kmt_create_device(f->adapter))) {
        kmt_close_adapter(f->adapter);
        return FALSE;
    }
    f->handles = kmt_count_handles();
    return TRUE;
}

/* Destroys the device (with every context and fence left on it) and checks
 * that the adapter and the process's handle table are back where they were:
 * kmtshim's event duplicates are all closed by then. */
static void exec_close(struct exec_fixture *f)
{
    KMT_SOFT_ESCAPE after;
    DWORD handles;

    kmt_destroy_device(f->device);
    after = kmt_soft_stats(f->adapter);
    ok(after.Stats.Devices == f->before.Stats.Devices, "devices %llu, were %llu\n",
       after.Stats.Devices, f->before.Stats.Devices);
    ok(after.Stats.Contexts == f->before.Stats.Contexts, "contexts %llu, were %llu\n",
       after.Stats.Contexts, f->before.Stats.Contexts);
    ok(after.Stats.Allocations == f->before.Stats.Allocations, "allocations %llu, were %llu\n",
       after.Stats.Allocations, f->before.Stats.Allocations);
    kmt_close_adapter(f->adapter);
    handles = kmt_count_handles();
    ok(handles == f->handles, "%lu handles, were %lu\n", (unsigned long)handles, (unsigned long)f->handles);
}

/* ---- GPU memory and command streams ---------------------------------------- */

struct gpu_buf {
    D3DKMT_HANDLE handle;
    D3DGPU_VIRTUAL_ADDRESS va;
    BYTE *cpu;
    UINT size, used;                     /* used: as a ring of command buffers */
};

/* A driver-private allocation with a GPU VA, locked for its whole life. */
static BOOL buf_create(D3DKMT_HANDLE device, UINT size, struct gpu_buf *b)
{
    D3DKMT_LOCK2 lock = { 0 };

    memset(b, 0, sizeof(*b));
    b->handle = kmt_create_soft_allocation(device, size, &b->va);
    ok(b->va != 0, "no GPU VA\n");
    lock.hDevice = device;
    lock.hAllocation = b->handle;
    expect_status(kmt_api.Lock2(&lock), STATUS_SUCCESS);
    b->cpu = lock.pData;
    b->size = size;
    return b->cpu && b->va;
}

static void buf_destroy(D3DKMT_HANDLE device, struct gpu_buf *b)
{
    D3DKMT_UNLOCK2 unlock = { device, b->handle };
    D3DKMT_DESTROYALLOCATION2 da = { 0 };

    expect_status(kmt_api.Unlock2(&unlock), STATUS_SUCCESS);
    da.hDevice = device;
    da.phAllocationList = &b->handle;
    da.AllocationCount = 1;
    expect_status(kmt_api.DestroyAllocation2(&da), STATUS_SUCCESS);
}

struct cmds {
    BYTE data[512];
    UINT length;
};

static void *cmd_put(struct cmds *c, UINT opcode, UINT size)
{
    KMT_SOFT_CMD_HEADER *h = (KMT_SOFT_CMD_HEADER *)(c->data + c->length);

    memset(h, 0, size);
    h->Opcode = opcode;
    h->Size = size;
    c->length += size;
    return h;
}

static void cmd_fill(struct cmds *c, UINT64 dst, UINT64 bytes, UINT value)
{
    KMT_SOFT_CMD_FILL *f = cmd_put(c, KMT_SOFT_OP_FILL, sizeof(*f));

    f->DstVa = dst;
    f->Bytes = bytes;
    f->Value = value;
}

static void cmd_copy(struct cmds *c, UINT64 dst, UINT64 src, UINT64 bytes)
{
    KMT_SOFT_CMD_COPY *k = cmd_put(c, KMT_SOFT_OP_COPY, sizeof(*k));

    k->DstVa = dst;
    k->SrcVa = src;
    k->Bytes = bytes;
}

static void cmd_fence(struct cmds *c, UINT opcode, UINT64 va, UINT64 value)
{
    KMT_SOFT_CMD_FENCE *f = cmd_put(c, opcode, sizeof(*f));

    f->Va = va;
    f->Value = value;
}

static void cmd_delay(struct cmds *c, UINT microseconds)
{
    KMT_SOFT_CMD_DELAY *d = cmd_put(c, KMT_SOFT_OP_DELAY, sizeof(*d));

    d->Microseconds = microseconds;
}

/* Copies the stream into fresh ring space and submits it on `ctx`. */
static NTSTATUS submit(D3DKMT_HANDLE ctx, struct gpu_buf *ring, const struct cmds *c)
{
    D3DKMT_SUBMITCOMMAND sc = { 0 };

    if (ring->used + c->length > ring->size)
        return STATUS_NO_MEMORY;
    memcpy(ring->cpu + ring->used, c->data, c->length);
    sc.Commands = ring->va + ring->used;
    sc.CommandLength = c->length;
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = ctx;
    ring->used += (c->length + 7) & ~7u;
    return kmt_api.SubmitCommand(&sc);
}

static D3DKMT_HANDLE virtual_context(D3DKMT_HANDLE device)
{
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };

    cv.hDevice = device;
    expect_status(kmt_api.CreateContextVirtual(&cv), STATUS_SUCCESS);
    ok(is_local_handle(cv.hContext), "hContext %#x\n", cv.hContext);
    return cv.hContext;
}

static NTSTATUS destroy_context(D3DKMT_HANDLE ctx)
{
    D3DKMT_DESTROYCONTEXT dc = { ctx };

    return kmt_api.DestroyContext(&dc);
}

/* ---- sync objects -------------------------------------------------------------- */

struct fence {
    D3DKMT_HANDLE handle;
    const volatile UINT64 *cpu;          /* FenceValueCPUVirtualAddress */
    D3DGPU_VIRTUAL_ADDRESS gpu;
};

static NTSTATUS fence_create(D3DKMT_HANDLE device, UINT64 initial, struct fence *f)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    NTSTATUS status;

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.MonitoredFence.InitialFenceValue = initial;
    status = kmt_api.CreateSynchronizationObject2(&cs);
    memset(f, 0, sizeof(*f));
    if (!status) {
        f->handle = cs.hSyncObject;
        f->cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
        f->gpu = cs.Info.MonitoredFence.FenceValueGPUVirtualAddress;
    }
    return status;
}

static NTSTATUS syncobj_destroy(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };

    return kmt_api.DestroySynchronizationObject(&d);
}

NTSTATUS kmt_cpu_signal(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };

    s.hDevice = device;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &fence;
    s.FenceValueArray = &value;
    return kmt_api.SignalSynchronizationObjectFromCpu(&s);
}

/* event NULL: blocks until the fence reaches `value`. */
NTSTATUS kmt_cpu_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, HANDLE event)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };

    w.hDevice = device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &fence;
    w.FenceValueArray = &value;
    w.hAsyncEvent = event;
    return kmt_api.WaitForSynchronizationObjectFromCpu(&w);
}

static NTSTATUS create_cpu_notification(D3DKMT_HANDLE device, HANDLE event, D3DKMT_HANDLE *out)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    NTSTATUS status;

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_CPU_NOTIFICATION;
    cs.Info.CPUNotification.Event = event;
    status = kmt_api.CreateSynchronizationObject2(&cs);
    *out = status ? 0 : cs.hSyncObject;
    ok(cs.Info.CPUNotification.Event == event, "the descriptor's event changed to %p\n",
       cs.Info.CPUNotification.Event);
    return status;
}

static NTSTATUS enqueue_cpu_event(D3DKMT_HANDLE ctx, HANDLE event)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s = { 0 };

    s.hContext = ctx;
    s.Flags.EnqueueCpuEvent = 1;
    s.CpuEventHandle = event;
    return kmt_api.SignalSynchronizationObject2(&s);
}

static HANDLE new_event(BOOL manual)
{
    HANDLE event = CreateEventW(NULL, manual, FALSE, NULL);

    ok(event != NULL, "CreateEvent failed: %lu\n", (unsigned long)GetLastError());
    return event;
}

/* ---- contexts ------------------------------------------------------------------ */

void kmtc_contexts(void)
{
    D3DKMT_CREATECONTEXT cc = { 0 }, bad;
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 }, vbad;
    struct exec_fixture f;
    KMT_SOFT_ESCAPE stats;

    if (!exec_open(&f))
        return;
    expect_status(kmt_api.CreateContext(&cc), STATUS_INVALID_PARAMETER);          /* hDevice 0 */
    expect_status(kmt_api.CreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);

    /* a patching context comes with its command buffer and lists */
    cc.hDevice = f.device;
    expect_status(kmt_api.CreateContext(&cc), STATUS_SUCCESS);
    ok(is_local_handle(cc.hContext) && cc.hContext != f.device, "hContext %#x, device %#x\n",
       cc.hContext, f.device);
    ok(cc.pCommandBuffer && cc.CommandBufferSize == 64 * 1024, "command buffer %p, %u bytes\n",
       cc.pCommandBuffer, cc.CommandBufferSize);
    ok(cc.pAllocationList && cc.AllocationListSize == 256, "allocation list %p/%u\n",
       (void *)cc.pAllocationList, cc.AllocationListSize);
    ok(cc.pPatchLocationList && cc.PatchLocationListSize == 1024, "patch list %p/%u\n",
       (void *)cc.pPatchLocationList, cc.PatchLocationListSize);
    if (cc.pCommandBuffer)                 /* the program's to write */
        ((BYTE *)cc.pCommandBuffer)[cc.CommandBufferSize - 1] = 0x5a;

    /* a virtual context: another handle of the same space */
    cv.hDevice = f.device;
    expect_status(kmt_api.CreateContextVirtual(&cv), STATUS_SUCCESS);
    ok(is_local_handle(cv.hContext) && cv.hContext != cc.hContext, "hContext %#x after %#x\n",
       cv.hContext, cc.hContext);
    stats = kmt_soft_stats(f.adapter);
    ok(stats.Stats.Contexts == f.before.Stats.Contexts + 2, "contexts %llu\n", stats.Stats.Contexts);

    /* one engine: node 1 and affinity 2 do not exist */
    bad = cc;
    bad.NodeOrdinal = 1;
    expect_status(kmt_api.CreateContext(&bad), STATUS_INVALID_PARAMETER);
    vbad = cv;
    vbad.EngineAffinity = 2;
    expect_status(kmt_api.CreateContextVirtual(&vbad), STATUS_INVALID_PARAMETER);

    /* destroy: once, not twice, not a device */
    expect_status(destroy_context(cc.hContext), STATUS_SUCCESS);
    expect_status(destroy_context(cc.hContext), STATUS_INVALID_PARAMETER);
    expect_status(destroy_context(f.device), STATUS_INVALID_PARAMETER);
    expect_status(destroy_context(0), STATUS_INVALID_PARAMETER);
    /* the virtual one dies with its device (exec_close checks the count) */
    exec_close(&f);
}

/* ---- GetDeviceState, and a device the GPU faulted -------------------------------- */

static NTSTATUS device_state(D3DKMT_HANDLE device, D3DKMT_DEVICESTATE_TYPE type, D3DKMT_GETDEVICESTATE *gs)
{
    memset(gs, 0xcc, sizeof(*gs));
    gs->hDevice = device;
    gs->StateType = type;
    return kmt_api.GetDeviceState(gs);
}

void kmtc_device_state(void)
{
    D3DKMT_GETDEVICESTATE gs;
    struct exec_fixture f;
    struct gpu_buf ring;
    struct fence canary;
    struct cmds c = { { 0 }, 0 };
    D3DKMT_HANDLE ctx;
    HANDLE event;

    if (!exec_open(&f))
        return;
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_SUCCESS);
    ok(gs.ExecutionState == D3DKMT_DEVICEEXECUTION_ACTIVE, "execution state %d\n", gs.ExecutionState);
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_RESET, &gs), STATUS_SUCCESS);
    ok(gs.ResetState.Value == 0, "reset state %#x\n", gs.ResetState.Value);
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_PAGE_FAULT, &gs), STATUS_SUCCESS);
    ok(gs.PageFaultState.FaultedVirtualAddress == 0, "fault address %#llx\n",
       (unsigned long long)gs.PageFaultState.FaultedVirtualAddress);
    /* the present states of a source past the adapter's one output */
    gs.PresentState.VidPnSourceId = 1;
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_PRESENT, &gs), STATUS_INVALID_PARAMETER);
    expect_status(device_state(f.device, (D3DKMT_DEVICESTATE_TYPE)0, &gs), STATUS_INVALID_PARAMETER);
    expect_status(device_state(0, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_INVALID_PARAMETER);
    expect_status(device_state(f.adapter, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_INVALID_PARAMETER);

    /* a fill of an address nothing maps: a GPU page fault.  The device's
     * fences jump to their maximum, which releases the async wait. */
    ctx = virtual_context(f.device);
    if (!buf_create(f.device, 4096, &ring))
        goto out;
    ring.used = 0;
    expect_status(fence_create(f.device, 0, &canary), STATUS_SUCCESS);
    event = new_event(TRUE);
    expect_status(kmt_cpu_wait(f.device, canary.handle, 1, event), STATUS_SUCCESS);
    cmd_fill(&c, BAD_VA + 0x40, 64, 1);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "the fault released no waiter\n");
    ok(*canary.cpu == ~0ull, "fence value %#llx after the fault\n", (unsigned long long)*canary.cpu);
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_SUCCESS);
    ok(gs.ExecutionState == D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT, "execution state %d\n",
       gs.ExecutionState);
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_PAGE_FAULT, &gs), STATUS_SUCCESS);
    ok(gs.PageFaultState.FaultedVirtualAddress == BAD_VA + 0x40, "fault address %#llx\n",
       (unsigned long long)gs.PageFaultState.FaultedVirtualAddress);
    expect_status(submit(ctx, &ring, &c), STATUS_DEVICE_REMOVED);
    CloseHandle(event);
    buf_destroy(f.device, &ring);
out:
    exec_close(&f);
}

/* A command buffer that waits for a fence nobody signals hangs the engine:
 * after TdrDelay (2 s) the engine is reset, the device is HUNG, its fences
 * jump to their maximum (releasing the async wait) and it takes no more
 * work. */
void kmtc_device_hang(void)
{
    D3DKMT_GETDEVICESTATE gs;
    struct exec_fixture f;
    struct gpu_buf ring;
    struct fence never, canary;
    struct cmds c = { { 0 }, 0 };
    D3DKMT_HANDLE ctx;
    DWORD start;
    HANDLE event;

    if (!exec_open(&f))
        return;
    ctx = virtual_context(f.device);
    if (!buf_create(f.device, 4096, &ring))
        goto out;
    ring.used = 0;
    expect_status(fence_create(f.device, 0, &never), STATUS_SUCCESS);
    expect_status(fence_create(f.device, 0, &canary), STATUS_SUCCESS);
    event = new_event(TRUE);
    expect_status(kmt_cpu_wait(f.device, canary.handle, 1, event), STATUS_SUCCESS);
    cmd_fence(&c, KMT_SOFT_OP_WAIT_FENCE, never.gpu, 1);
    cmd_fence(&c, KMT_SOFT_OP_SIGNAL_FENCE, canary.gpu, 1);
    start = GetTickCount();
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "the hang released no waiter\n");
    ok(GetTickCount() - start >= 1900, "released after %lu ms, before TdrDelay\n", GetTickCount() - start);
    ok(*canary.cpu == ~0ull, "fence value %#llx after the reset\n", (unsigned long long)*canary.cpu);
    expect_status(device_state(f.device, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_SUCCESS);
    ok(gs.ExecutionState == D3DKMT_DEVICEEXECUTION_HUNG, "execution state %d\n", gs.ExecutionState);
    c.length = 0;
    cmd_fence(&c, KMT_SOFT_OP_SIGNAL_FENCE, canary.gpu, 2);
    expect_status(submit(ctx, &ring, &c), STATUS_DEVICE_REMOVED);
    CloseHandle(event);
    buf_destroy(f.device, &ring);
out:
    exec_close(&f);
}

/* ---- SubmitCommand ------------------------------------------------------------- */

/* Every 32-bit word of buf[first, first + count) is `value`, the rest `other`. */
static BOOL words_are(const struct gpu_buf *b, UINT first, UINT count, UINT value, UINT other)
{
    const UINT *w = (const UINT *)b->cpu;

    for (UINT i = 0; i < b->size / 4; i++)
        if (w[i] != (i >= first && i < first + count ? value : other))
            return FALSE;
    return TRUE;
}

void kmtc_submit(void)
{
    D3DKMT_SUBMITCOMMAND sc;
    struct exec_fixture f;
    struct gpu_buf ring, x, y;
    struct fence fence;
    struct cmds c = { { 0 }, 0 };
    KMT_SOFT_ESCAPE stats;
    D3DKMT_CREATECONTEXT legacy = { 0 };
    D3DKMT_HANDLE ctx;
    HANDLE event;

    if (!exec_open(&f))
        return;
    ctx = virtual_context(f.device);
    if (!buf_create(f.device, RING_SIZE, &ring) || !buf_create(f.device, 4096, &x) ||
        !buf_create(f.device, 4096, &y))
        goto out;
    memset(x.cpu, 0, x.size);
    memset(y.cpu, 0xee, y.size);
    expect_status(fence_create(f.device, 0, &fence), STATUS_SUCCESS);
    ok(fence.cpu && *fence.cpu == 0 && fence.gpu, "fence %p (%#llx), GPU VA %#llx\n", (void *)fence.cpu,
       fence.cpu ? (unsigned long long)*fence.cpu : 0ull, (unsigned long long)fence.gpu);

    /* FILL x[64, 1088), COPY x[64, 320) to y[0, 256), then SIGNAL_FENCE 1 */
    cmd_fill(&c, x.va + 64, 1024, 0xc0ffee11);
    cmd_copy(&c, y.va, x.va + 64, 256);
    cmd_fence(&c, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    event = new_event(TRUE);
    expect_status(kmt_cpu_wait(f.device, fence.handle, 1, event), STATUS_SUCCESS);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "the fence never signaled\n");
    /* the GPU's write, seen through the read-only CPU mapping */
    ok(*fence.cpu == 1, "fence value %llu\n", (unsigned long long)*fence.cpu);
    ok(words_are(&x, 16, 256, 0xc0ffee11, 0), "x is not filled exactly\n");
    ok(words_are(&y, 0, 64, 0xc0ffee11, 0xeeeeeeee), "y is not copied exactly\n");
    stats = kmt_soft_stats(f.adapter);
    /* (the engine counts a command after running it: the signal may not be in yet) */
    ok(stats.Stats.CommandsExecuted >= f.before.Stats.CommandsExecuted + 2, "commands %llu, were %llu\n",
       stats.Stats.CommandsExecuted, f.before.Stats.CommandsExecuted);

    /* the same read back through a new lock */
    {
        D3DKMT_LOCK2 lock = { 0 };
        D3DKMT_UNLOCK2 unlock = { f.device, x.handle };

        lock.hDevice = f.device;
        lock.hAllocation = x.handle;
        expect_status(kmt_api.Lock2(&lock), STATUS_SUCCESS);
        ok(lock.pData && ((UINT *)lock.pData)[16] == 0xc0ffee11 && ((UINT *)lock.pData)[15] == 0,
           "Lock2 reads %p\n", lock.pData);
        expect_status(kmt_api.Unlock2(&unlock), STATUS_SUCCESS);
    }

    /* what SubmitCommand refuses */
    memset(&sc, 0, sizeof(sc));
    sc.Commands = ring.va;
    sc.CommandLength = c.length;
    expect_status(kmt_api.SubmitCommand(&sc), STATUS_INVALID_PARAMETER);     /* no context */
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = ctx;
    sc.Commands = 0;
    expect_status(kmt_api.SubmitCommand(&sc), STATUS_INVALID_PARAMETER);     /* no commands */
    sc.Commands = ring.va;
    sc.CommandLength = 0;
    expect_status(kmt_api.SubmitCommand(&sc), STATUS_INVALID_PARAMETER);
    sc.CommandLength = c.length;
    sc.BroadcastContext[0] = f.device;
    expect_status(kmt_api.SubmitCommand(&sc), STATUS_INVALID_PARAMETER);     /* not a context */
    legacy.hDevice = f.device;
    expect_status(kmt_api.CreateContext(&legacy), STATUS_SUCCESS);
    sc.BroadcastContext[0] = legacy.hContext;
    expect_status(kmt_api.SubmitCommand(&sc), STATUS_INVALID_PARAMETER);     /* patching: Render */
    expect_status(destroy_context(legacy.hContext), STATUS_SUCCESS);

    /* DestroyContext returns once its work ran */
    memset(&c, 0, sizeof(c));
    cmd_delay(&c, 50000);
    cmd_fill(&c, x.va, 4, 0x77777777);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(destroy_context(ctx), STATUS_SUCCESS);
    ok(((UINT *)x.cpu)[0] == 0x77777777, "x[0] %#x after DestroyContext\n", ((UINT *)x.cpu)[0]);

    CloseHandle(event);
    expect_status(syncobj_destroy(fence.handle), STATUS_SUCCESS);
    buf_destroy(f.device, &y);
    buf_destroy(f.device, &x);
    buf_destroy(f.device, &ring);
out:
    exec_close(&f);
}

/* ---- Render: the context's command buffer, allocation list and patch list ------- */

void kmtc_render(void)
{
    D3DKMT_CREATECONTEXT cc = { 0 };
    D3DKMT_RENDER r, bad;
    D3DDDI_PATCHLOCATIONLIST *patch;
    struct exec_fixture f;
    struct gpu_buf x;
    struct fence fence;
    struct cmds c = { { 0 }, 0 };
    D3DKMT_HANDLE vctx;
    HANDLE event;

    if (!exec_open(&f))
        return;
    cc.hDevice = f.device;
    expect_status(kmt_api.CreateContext(&cc), STATUS_SUCCESS);
    if (!cc.pCommandBuffer || !cc.pAllocationList || !cc.pPatchLocationList || !buf_create(f.device, 4096, &x))
        goto out;
    memset(x.cpu, 0, x.size);
    expect_status(fence_create(f.device, 0, &fence), STATUS_SUCCESS);

    /* FILL with DstVa 0, patched to allocation 0 + 128 by the driver */
    cmd_fill(&c, 0, 64, 0x51515151);
    cmd_fence(&c, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 7);
    memcpy(cc.pCommandBuffer, c.data, c.length);
    memset(cc.pAllocationList, 0, sizeof(*cc.pAllocationList));
    cc.pAllocationList[0].hAllocation = x.handle;
    cc.pAllocationList[0].WriteOperation = 1;
    patch = &cc.pPatchLocationList[0];
    memset(patch, 0, sizeof(*patch));
    patch->AllocationIndex = 0;
    patch->AllocationOffset = 128;
    patch->PatchOffset = offsetof(KMT_SOFT_CMD_FILL, DstVa);

    memset(&r, 0, sizeof(r));
    r.hContext = cc.hContext;
    r.CommandLength = c.length;
    r.AllocationCount = 1;
    r.PatchLocationCount = 1;
    bad = r;
    event = new_event(FALSE);
    expect_status(kmt_cpu_wait(f.device, fence.handle, 7, event), STATUS_SUCCESS);
    expect_status(kmt_api.Render(&r), STATUS_SUCCESS);
    /* the same buffers serve the next batch */
    ok(r.pNewCommandBuffer == cc.pCommandBuffer && r.NewCommandBufferSize == cc.CommandBufferSize,
       "new command buffer %p/%u\n", r.pNewCommandBuffer, r.NewCommandBufferSize);
    ok(r.pNewAllocationList == cc.pAllocationList && r.NewAllocationListSize == cc.AllocationListSize,
       "new allocation list %p/%u\n", (void *)r.pNewAllocationList, r.NewAllocationListSize);
    ok(r.pNewPatchLocationList == cc.pPatchLocationList && r.NewPatchLocationListSize == cc.PatchLocationListSize,
       "new patch list %p/%u\n", (void *)r.pNewPatchLocationList, r.NewPatchLocationListSize);
    ok(r.QueuedBufferCount <= 1, "QueuedBufferCount %lu\n", (unsigned long)r.QueuedBufferCount);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "the fence never reached 7\n");
    ok(*fence.cpu == 7, "fence value %llu\n", (unsigned long long)*fence.cpu);
    ok(words_are(&x, 32, 16, 0x51515151, 0), "x is not filled at the patched address\n");

    /* what Render refuses */
    bad.AllocationCount = cc.AllocationListSize + 1;
    expect_status(kmt_api.Render(&bad), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.AllocationCount = 1;
    bad.PatchLocationCount = 1;
    bad.CommandLength = cc.CommandBufferSize + 1;
    expect_status(kmt_api.Render(&bad), STATUS_INVALID_PARAMETER);
    bad.CommandLength = c.length;
    patch->AllocationIndex = 1;            /* past AllocationCount: the driver refuses */
    expect_status(kmt_api.Render(&bad), STATUS_INVALID_PARAMETER);
    patch->AllocationIndex = 0;
    cc.pAllocationList[0].hAllocation = f.device;   /* not an allocation */
    expect_status(kmt_api.Render(&bad), STATUS_INVALID_HANDLE);
    vctx = virtual_context(f.device);
    bad.hContext = vctx;                   /* virtual contexts use SubmitCommand */
    expect_status(kmt_api.Render(&bad), STATUS_INVALID_PARAMETER);

    CloseHandle(event);
    expect_status(destroy_context(cc.hContext), STATUS_SUCCESS);
    buf_destroy(f.device, &x);
out:
    exec_close(&f);
}

/* ---- sync objects: the Windows-observed rows (issue5-layouts.md §6) ------------- */

static NTSTATUS create_v1(D3DKMT_HANDLE device, D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, D3DKMT_HANDLE *out)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT cs = { 0 };
    NTSTATUS status;

    cs.hDevice = device;
    cs.Info.Type = type;
    status = kmt_api.CreateSynchronizationObject(&cs);
    *out = status ? 0 : cs.hSyncObject;
    return status;
}

static NTSTATUS create_v2(D3DKMT_HANDLE device, D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, UINT flags,
                          D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *cs)
{
    memset(cs, 0, sizeof(*cs));
    cs->hDevice = device;
    cs->Info.Type = type;
    cs->Info.Flags.Value = flags;
    return kmt_api.CreateSynchronizationObject2(cs);
}

void kmtc_syncobj_rows(void)
{
    static const D3DDDI_SYNCHRONIZATIONOBJECT_TYPE v2_types[] = {
        D3DDDI_SYNCHRONIZATION_MUTEX, D3DDDI_SEMAPHORE, D3DDDI_FENCE, D3DDDI_MONITORED_FENCE,
    };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT c1 = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c2;
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER ca = { 0 };
    D3DKMT_HANDLE a, b, h;
    struct exec_fixture f;
    HANDLE event, mutex;

    if (!exec_open(&f))
        return;
    /* 1, 2: NULL and zeroed */
    expect_status(kmt_api.CreateSynchronizationObject(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CreateSynchronizationObject(&c1), STATUS_INVALID_PARAMETER);
    /* 3: Type 0 on a valid device */
    expect_status(create_v1(f.device, (D3DDDI_SYNCHRONIZATIONOBJECT_TYPE)0, &h), STATUS_INVALID_PARAMETER);
    /* 4: a mutex without a device */
    expect_status(create_v1(0, D3DDDI_SYNCHRONIZATION_MUTEX, &h), STATUS_INVALID_PARAMETER);
    /* 5: local handles, one apart */
    expect_status(create_v1(f.device, D3DDDI_SYNCHRONIZATION_MUTEX, &a), STATUS_SUCCESS);
    expect_status(create_v1(f.device, D3DDDI_SYNCHRONIZATION_MUTEX, &b), STATUS_SUCCESS);
    ok(is_local_handle(a) && b == a + 0x40, "mutexes %#x, %#x\n", a, b);
    /* 6: a semaphore with MaxCount = InitialCount = 0 */
    expect_status(create_v1(f.device, D3DDDI_SEMAPHORE, &h), STATUS_SUCCESS);
    expect_status(syncobj_destroy(h), STATUS_SUCCESS);
    /* 7: no fences through the v1 call */
    expect_status(create_v1(f.device, D3DDDI_FENCE, &h), STATUS_INVALID_PARAMETER);
    /* 8: destroy twice */
    expect_status(syncobj_destroy(a), STATUS_SUCCESS);
    expect_status(syncobj_destroy(a), STATUS_INVALID_PARAMETER);
    expect_status(syncobj_destroy(b), STATUS_SUCCESS);

    /* 10: the v2 call, NULL, zeroed, Type 0, hDevice 0 */
    expect_status(kmt_api.CreateSynchronizationObject2(NULL), STATUS_INVALID_PARAMETER);
    expect_status(create_v2(0, 0, 0, &c2), STATUS_INVALID_PARAMETER);
    expect_status(create_v2(f.device, 0, 0, &c2), STATUS_INVALID_PARAMETER);
    expect_status(create_v2(0, D3DDDI_SYNCHRONIZATION_MUTEX, 0, &c2), STATUS_INVALID_PARAMETER);
    /* 11: every type with an otherwise zeroed info */
    for (unsigned i = 0; i < ARRAY_SIZE(v2_types); i++) {
        ok(create_v2(f.device, v2_types[i], 0, &c2) == (NTSTATUS)STATUS_SUCCESS, "type %d failed\n",
           v2_types[i]);
        ok(is_local_handle(c2.hSyncObject), "type %d: handle %#x\n", v2_types[i], c2.hSyncObject);
        if (v2_types[i] == D3DDDI_MONITORED_FENCE)
            ok(c2.Info.MonitoredFence.FenceValueCPUVirtualAddress != NULL &&
               *(const UINT64 *)c2.Info.MonitoredFence.FenceValueCPUVirtualAddress == 0,
               "fence CPU VA %p\n", c2.Info.MonitoredFence.FenceValueCPUVirtualAddress);
        expect_status(syncobj_destroy(c2.hSyncObject), STATUS_SUCCESS);
    }
    /* 12: a CPU notification needs an event */
    expect_status(create_v2(f.device, D3DDDI_CPU_NOTIFICATION, 0, &c2), STATUS_INVALID_HANDLE);
    /* ... a real event handle: not a mutex, not a process, not garbage */
    mutex = CreateMutexW(NULL, FALSE, NULL);
    expect_status(create_cpu_notification(f.device, mutex, &h), STATUS_INVALID_HANDLE);
    expect_status(create_cpu_notification(f.device, GetCurrentProcess(), &h), STATUS_INVALID_HANDLE);
    expect_status(create_cpu_notification(f.device, NOT_AN_EVENT, &h), STATUS_INVALID_HANDLE);
    CloseHandle(mutex);
    /* 13: with a CreateEvent handle */
    event = new_event(FALSE);
    expect_status(create_cpu_notification(f.device, event, &h), STATUS_SUCCESS);
    ok(is_local_handle(h), "CPU notification %#x\n", h);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "creating it set the event\n");
    expect_status(syncobj_destroy(h), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "destroying it set the event\n");
    CloseHandle(event);
    /* 14: Shared alone gives a global share handle ... */
    expect_status(create_v2(f.device, D3DDDI_SYNCHRONIZATION_MUTEX, 1 /* Shared */, &c2), STATUS_SUCCESS);
    ok(is_local_handle(c2.hSyncObject), "hSyncObject %#x\n", c2.hSyncObject);
    ok(is_global_handle(c2.Info.SharedHandle), "SharedHandle %#x\n", c2.Info.SharedHandle);
    /* 9: ... which DestroySynchronizationObject does not take */
    expect_status(syncobj_destroy(c2.Info.SharedHandle), STATUS_INVALID_PARAMETER);
    expect_status(syncobj_destroy(c2.hSyncObject), STATUS_SUCCESS);
    /* 15: NtSecuritySharing needs Shared */
    expect_status(create_v2(f.device, D3DDDI_SYNCHRONIZATION_MUTEX, 2, &c2), STATUS_INVALID_PARAMETER);
    /* 16: both: no global handle (NT handles come from ShareObjects) */
    expect_status(create_v2(f.device, D3DDDI_SYNCHRONIZATION_MUTEX, 3, &c2), STATUS_SUCCESS);
    ok(!is_global_handle(c2.Info.SharedHandle) && c2.Info.SharedHandle == 0, "SharedHandle %#x\n",
       c2.Info.SharedHandle);
    expect_status(syncobj_destroy(c2.hSyncObject), STATUS_SUCCESS);

    /* 24: NULL or zeroed device and adapter calls */
    expect_status(kmt_api.CreateDevice(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CreateDevice(&cd), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.DestroyDevice(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CloseAdapter(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CloseAdapter(&ca), STATUS_INVALID_PARAMETER);
    exec_close(&f);
}

/* ---- CPU waits --------------------------------------------------------------- */

struct signaler {
    D3DKMT_HANDLE device, fence;
    UINT64 value;
    DWORD delay_ms;
    volatile LONG signaled;              /* set right before the signal */
    NTSTATUS status;
};

static DWORD WINAPI signal_later(void *arg)
{
    struct signaler *s = arg;

    Sleep(s->delay_ms);
    InterlockedExchange(&s->signaled, 1);
    s->status = kmt_cpu_signal(s->device, s->fence, s->value);
    return 0;
}

void kmtc_cpu_wait_blocking(void)
{
    struct signaler s = { 0 };
    struct exec_fixture f;
    struct fence fence;
    HANDLE thread;

    if (!exec_open(&f))
        return;
    expect_status(fence_create(f.device, 3, &fence), STATUS_SUCCESS);
    /* satisfied already: returns at once */
    expect_status(kmt_cpu_wait(f.device, fence.handle, 3, NULL), STATUS_SUCCESS);
    /* another Windows thread signals; the wait returns after it did */
    s.device = f.device;
    s.fence = fence.handle;
    s.value = 5;
    s.delay_ms = 100;
    thread = CreateThread(NULL, 0, signal_later, &s, 0, NULL);
    ok(thread != NULL, "CreateThread failed\n");
    expect_status(kmt_cpu_wait(f.device, fence.handle, 5, NULL), STATUS_SUCCESS);
    ok(s.signaled && *fence.cpu == 5, "the wait returned before the signal (value %llu)\n",
       (unsigned long long)*fence.cpu);
    ok(WaitForSingleObject(thread, WAIT_MS) == WAIT_OBJECT_0, "the signaler did not end\n");
    expect_status(s.status, STATUS_SUCCESS);
    CloseHandle(thread);
    /* a lower value without AllowFenceRewind is refused: the fence is monotonic */
    expect_status(kmt_cpu_signal(f.device, fence.handle, 4), STATUS_INVALID_PARAMETER);
    ok(*fence.cpu == 5, "fence value %llu after signaling 4\n", (unsigned long long)*fence.cpu);
    /* bad arguments */
    expect_status(kmt_cpu_wait(0, fence.handle, 1, NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_cpu_wait(f.device, f.device, 1, NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_cpu_signal(f.device, f.adapter, 1), STATUS_INVALID_PARAMETER);
    expect_status(syncobj_destroy(fence.handle), STATUS_SUCCESS);
    exec_close(&f);
}

void kmtc_cpu_wait_async(void)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
    D3DKMT_HANDLE both[2];
    UINT64 values[2];
    struct exec_fixture f;
    struct fence a, b;
    HANDLE event, autoreset, mutex, closed;

    if (!exec_open(&f))
        return;
    expect_status(fence_create(f.device, 0, &a), STATUS_SUCCESS);
    expect_status(fence_create(f.device, 0, &b), STATUS_SUCCESS);
    event = new_event(TRUE);

    /* returns at once; the event waits for the fence */
    expect_status(kmt_cpu_wait(f.device, a.handle, 2, event), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 50) == WAIT_TIMEOUT, "the event was set before the signal\n");
    expect_status(kmt_cpu_signal(f.device, a.handle, 1), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 50) == WAIT_TIMEOUT, "the event was set at value 1\n");
    expect_status(kmt_cpu_signal(f.device, a.handle, 2), STATUS_SUCCESS);
    /* set by the time the satisfying signal returned */
    ok(WaitForSingleObject(event, 0) == WAIT_OBJECT_0, "not set when the signal returned\n");
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "never set\n");

    /* a wait satisfied already sets its event before it returns */
    ResetEvent(event);
    expect_status(kmt_cpu_wait(f.device, a.handle, 2, event), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_OBJECT_0, "a satisfied wait did not set its event\n");

    /* an auto-reset event is set once: one waiter wakes */
    autoreset = new_event(FALSE);
    expect_status(kmt_cpu_wait(f.device, a.handle, 3, autoreset), STATUS_SUCCESS);
    expect_status(kmt_cpu_signal(f.device, a.handle, 3), STATUS_SUCCESS);
    ok(WaitForSingleObject(autoreset, WAIT_MS) == WAIT_OBJECT_0, "auto-reset event not set\n");
    ok(WaitForSingleObject(autoreset, 50) == WAIT_TIMEOUT, "auto-reset event set twice\n");

    /* WaitAny on two fences, then wait-all */
    ResetEvent(event);
    both[0] = a.handle;
    both[1] = b.handle;
    values[0] = 10;
    values[1] = 1;
    w.hDevice = f.device;
    w.ObjectCount = 2;
    w.ObjectHandleArray = both;
    w.FenceValueArray = values;
    w.hAsyncEvent = event;
    w.Flags.WaitAny = 1;
    expect_status(kmt_api.WaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    expect_status(kmt_cpu_signal(f.device, b.handle, 1), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "WaitAny: not set by the second fence\n");
    ResetEvent(event);
    w.Flags.WaitAny = 0;
    expect_status(kmt_api.WaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 50) == WAIT_TIMEOUT, "wait-all: set with one fence short\n");
    expect_status(kmt_cpu_signal(f.device, a.handle, 10), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "wait-all: never set\n");

    /* handles that are no events: STATUS_INVALID_HANDLE, and nothing set */
    mutex = CreateMutexW(NULL, FALSE, NULL);
    closed = new_event(TRUE);
    CloseHandle(closed);
    expect_status(kmt_cpu_wait(f.device, a.handle, 100, mutex), STATUS_INVALID_HANDLE);
    expect_status(kmt_cpu_wait(f.device, a.handle, 100, GetCurrentProcess()), STATUS_INVALID_HANDLE);
    expect_status(kmt_cpu_wait(f.device, a.handle, 100, NOT_AN_EVENT), STATUS_INVALID_HANDLE);
    expect_status(kmt_cpu_wait(f.device, a.handle, 100, closed), STATUS_INVALID_HANDLE);
    ResetEvent(event);
    expect_status(kmt_cpu_wait(f.device, f.device, 1, event), STATUS_INVALID_PARAMETER);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "a failed wait set its event\n");
    CloseHandle(mutex);

    expect_status(syncobj_destroy(a.handle), STATUS_SUCCESS);
    expect_status(syncobj_destroy(b.handle), STATUS_SUCCESS);
    CloseHandle(autoreset);
    CloseHandle(event);
    exec_close(&f);
}

/* ---- events set by the GPU queue -------------------------------------------------- */

static NTSTATUS signal_v1(D3DKMT_HANDLE ctx, D3DKMT_HANDLE obj)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s = { 0 };

    s.hContext = ctx;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = obj;
    return kmt_api.SignalSynchronizationObject(&s);
}

static NTSTATUS signal_v2(D3DKMT_HANDLE ctx, D3DKMT_HANDLE obj)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s = { 0 };

    s.hContext = ctx;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = obj;
    return kmt_api.SignalSynchronizationObject2(&s);
}

void kmtc_cpu_notification(void)
{
    struct exec_fixture f;
    struct gpu_buf ring;
    struct cmds c = { { 0 }, 0 };
    D3DKMT_HANDLE ctx, note, other;
    HANDLE event, event2;

    if (!exec_open(&f))
        return;
    ctx = virtual_context(f.device);
    if (!buf_create(f.device, RING_SIZE, &ring))
        goto out;
    event = new_event(FALSE);
    expect_status(create_cpu_notification(f.device, event, &note), STATUS_SUCCESS);

    /* a GPU-queued signal sets it once the work before it completed */
    cmd_delay(&c, 300000);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(signal_v1(ctx, note), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "set before the work completed\n");
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "Signal: never set\n");
    /* Signal2 sets it again */
    expect_status(signal_v2(ctx, note), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "Signal2: never set\n");
    /* a second notification on the same event: each sets it */
    expect_status(create_cpu_notification(f.device, event, &other), STATUS_SUCCESS);
    ok(is_local_handle(other) && other != note, "second notification %#x after %#x\n", other, note);
    expect_status(signal_v1(ctx, other), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "second notification: never set\n");
    expect_status(syncobj_destroy(other), STATUS_SUCCESS);
    /* no one waits for a CPU notification on a context */
    {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECT w = { 0 };

        w.hContext = ctx;
        w.ObjectCount = 1;
        w.ObjectHandleArray[0] = note;
        expect_status(kmt_api.WaitForSynchronizationObject(&w), STATUS_INVALID_PARAMETER);
    }
    /* destroyed while a signal of it is queued: the event may no longer be set
     * after the destroy returned */
    memset(&c, 0, sizeof(c));
    cmd_delay(&c, 100000);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(signal_v1(ctx, note), STATUS_SUCCESS);
    expect_status(syncobj_destroy(note), STATUS_SUCCESS);
    event2 = new_event(TRUE);
    expect_status(enqueue_cpu_event(ctx, event2), STATUS_SUCCESS);   /* after the signal */
    ok(WaitForSingleObject(event2, WAIT_MS) == WAIT_OBJECT_0, "the queue did not drain\n");
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "a destroyed notification set its event\n");
    CloseHandle(event2);
    CloseHandle(event);
    expect_status(destroy_context(ctx), STATUS_SUCCESS);
    buf_destroy(f.device, &ring);
out:
    exec_close(&f);
}

void kmtc_enqueue_cpu_event(void)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s2 = { 0 };
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 bad = { 0 };
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT v1 = { 0 };
    struct exec_fixture f;
    struct gpu_buf ring;
    struct fence fence;
    struct cmds c = { { 0 }, 0 };
    D3DKMT_HANDLE ctx;
    HANDLE event, mutex;

    if (!exec_open(&f))
        return;
    ctx = virtual_context(f.device);
    if (!buf_create(f.device, RING_SIZE, &ring))
        goto out;
    expect_status(fence_create(f.device, 0, &fence), STATUS_SUCCESS);
    event = new_event(TRUE);

    /* Signal2: set when the context got there, after the work before it */
    cmd_delay(&c, 300000);
    cmd_fence(&c, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(enqueue_cpu_event(ctx, event), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "set before the work completed\n");
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "Signal2: never set\n");
    ok(*fence.cpu == 1, "the work before it did not complete: fence %llu\n", (unsigned long long)*fence.cpu);

    /* SignalFromGpu2: the same, its context in the broadcast array */
    ResetEvent(event);
    memset(&c, 0, sizeof(c));
    cmd_delay(&c, 100000);
    cmd_fence(&c, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 2);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    s2.Flags.EnqueueCpuEvent = 1;
    s2.BroadcastContextCount = 1;
    s2.BroadcastContextArray = &ctx;
    s2.CpuEventHandle = event;
    expect_status(kmt_api.SignalSynchronizationObjectFromGpu2(&s2), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0, "FromGpu2: never set\n");
    ok(*fence.cpu == 2, "fence %llu\n", (unsigned long long)*fence.cpu);

    /* the rules: an event, no objects, not through Signal (v1) */
    expect_status(enqueue_cpu_event(ctx, NULL), STATUS_INVALID_HANDLE);
    mutex = CreateMutexW(NULL, FALSE, NULL);
    expect_status(enqueue_cpu_event(ctx, mutex), STATUS_INVALID_HANDLE);
    CloseHandle(mutex);
    s2.CpuEventHandle = NULL;
    expect_status(kmt_api.SignalSynchronizationObjectFromGpu2(&s2), STATUS_INVALID_HANDLE);
    bad.hContext = ctx;
    bad.Flags.EnqueueCpuEvent = 1;
    bad.CpuEventHandle = event;
    bad.ObjectCount = 1;
    bad.ObjectHandleArray[0] = fence.handle;
    ResetEvent(event);
    expect_status(kmt_api.SignalSynchronizationObject2(&bad), STATUS_INVALID_PARAMETER);
    bad.ObjectCount = 0;
    bad.hContext = f.device;
    expect_status(kmt_api.SignalSynchronizationObject2(&bad), STATUS_INVALID_PARAMETER);
    v1.hContext = ctx;
    v1.Flags.EnqueueCpuEvent = 1;
    expect_status(kmt_api.SignalSynchronizationObject(&v1), STATUS_INVALID_PARAMETER);
    ok(WaitForSingleObject(event, 50) == WAIT_TIMEOUT, "a refused signal set the event\n");

    /* queued on a context that is destroyed: the context's work runs first */
    memset(&c, 0, sizeof(c));
    cmd_delay(&c, 100000);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(enqueue_cpu_event(ctx, event), STATUS_SUCCESS);
    expect_status(destroy_context(ctx), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_OBJECT_0, "not set when DestroyContext returned\n");

    CloseHandle(event);
    expect_status(syncobj_destroy(fence.handle), STATUS_SUCCESS);
    buf_destroy(f.device, &ring);
out:
    exec_close(&f);
}

/* ---- object lifetimes and event lifetimes ------------------------------------------- */

void kmtc_destroy_sets_event(void)
{
    struct exec_fixture f;
    struct fence fence, other;
    HANDLE event, event2;
    D3DKMT_HANDLE device2;

    if (!exec_open(&f))
        return;
    expect_status(fence_create(f.device, 0, &fence), STATUS_SUCCESS);
    event = new_event(TRUE);
    /* an async wait on a fence that is destroyed: released, its event set */
    expect_status(kmt_cpu_wait(f.device, fence.handle, 5, event), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "set early\n");
    expect_status(syncobj_destroy(fence.handle), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_OBJECT_0, "not set when the destroy returned\n");

    /* a device destroyed under an async wait on its fence */
    device2 = kmt_create_device(f.adapter);
    expect_status(fence_create(device2, 0, &other), STATUS_SUCCESS);
    event2 = new_event(TRUE);
    expect_status(kmt_cpu_wait(device2, other.handle, 1, event2), STATUS_SUCCESS);
    kmt_destroy_device(device2);
    ok(WaitForSingleObject(event2, 0) == WAIT_OBJECT_0, "not set when DestroyDevice returned\n");
    expect_status(syncobj_destroy(other.handle), STATUS_INVALID_PARAMETER);   /* died with it */
    CloseHandle(event2);
    CloseHandle(event);
    exec_close(&f);
}

/* The program closes its event handle while kmtshim still holds the event:
 * nothing breaks, and the event object itself is still set (a handle the
 * test kept sees it), as on Windows, where the kernel holds a reference. */
void kmtc_event_closed_early(void)
{
    struct exec_fixture f;
    struct gpu_buf ring;
    struct fence fence;
    struct cmds c = { { 0 }, 0 };
    D3DKMT_HANDLE ctx, note;
    HANDLE event, kept;

    if (!exec_open(&f))
        return;
    ctx = virtual_context(f.device);
    if (!buf_create(f.device, RING_SIZE, &ring))
        goto out;
    expect_status(fence_create(f.device, 0, &fence), STATUS_SUCCESS);

    /* async wait */
    event = new_event(TRUE);
    ok(DuplicateHandle(GetCurrentProcess(), event, GetCurrentProcess(), &kept, 0, FALSE,
                       DUPLICATE_SAME_ACCESS), "DuplicateHandle failed\n");
    expect_status(kmt_cpu_wait(f.device, fence.handle, 1, event), STATUS_SUCCESS);
    ok(CloseHandle(event), "CloseHandle failed\n");
    expect_status(kmt_cpu_signal(f.device, fence.handle, 1), STATUS_SUCCESS);
    ok(WaitForSingleObject(kept, WAIT_MS) == WAIT_OBJECT_0, "async wait: the event was not set\n");
    CloseHandle(kept);

    /* CPU notification, closed at once, signaled twice from the GPU queue */
    event = new_event(FALSE);
    DuplicateHandle(GetCurrentProcess(), event, GetCurrentProcess(), &kept, 0, FALSE, DUPLICATE_SAME_ACCESS);
    expect_status(create_cpu_notification(f.device, event, &note), STATUS_SUCCESS);
    CloseHandle(event);
    cmd_delay(&c, 50000);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(signal_v1(ctx, note), STATUS_SUCCESS);
    ok(WaitForSingleObject(kept, WAIT_MS) == WAIT_OBJECT_0, "notification: the event was not set\n");
    expect_status(signal_v2(ctx, note), STATUS_SUCCESS);
    ok(WaitForSingleObject(kept, WAIT_MS) == WAIT_OBJECT_0, "notification: not set again\n");
    expect_status(syncobj_destroy(note), STATUS_SUCCESS);
    CloseHandle(kept);

    /* EnqueueCpuEvent with no one left to see it */
    event = new_event(TRUE);
    expect_status(submit(ctx, &ring, &c), STATUS_SUCCESS);
    expect_status(enqueue_cpu_event(ctx, event), STATUS_SUCCESS);
    CloseHandle(event);
    expect_status(destroy_context(ctx), STATUS_SUCCESS);   /* its event was set meanwhile */

    expect_status(syncobj_destroy(fence.handle), STATUS_SUCCESS);
    buf_destroy(f.device, &ring);
out:
    exec_close(&f);                        /* no duplicate left open */
}

/* ---- two Windows threads over monitored fences ---------------------------------------- */

#define PINGPONG_ROUNDS 1000

struct pingpong {
    D3DKMT_HANDLE device;
    struct fence produced, consumed;
    volatile UINT64 slot;                /* written before `produced` is signaled */
    UINT64 bad_reads, failures;
};

/* The consumer waits for each round, blocking on even rounds and through
 * an async event on odd ones, reads the slot and acknowledges. */
static DWORD WINAPI consumer(void *arg)
{
    struct pingpong *p = arg;
    HANDLE event = CreateEventW(NULL, FALSE, FALSE, NULL);

    for (UINT64 i = 1; i <= PINGPONG_ROUNDS; i++) {
        if (i & 1) {
            if (kmt_cpu_wait(p->device, p->produced.handle, i, event) ||
                WaitForSingleObject(event, WAIT_MS) != WAIT_OBJECT_0) {
                p->failures++;
                break;
            }
        } else if (kmt_cpu_wait(p->device, p->produced.handle, i, NULL)) {
            p->failures++;
            break;
        }
        if (p->slot != i * 3)
            p->bad_reads++;
        if (kmt_cpu_signal(p->device, p->consumed.handle, i)) {
            p->failures++;
            break;
        }
    }
    CloseHandle(event);
    return 0;
}

void kmtc_producer_consumer(void)
{
    struct exec_fixture f;
    struct pingpong p;
    UINT64 i, failures = 0;
    HANDLE thread;

    if (!exec_open(&f))
        return;
    memset(&p, 0, sizeof(p));
    p.device = f.device;
    expect_status(fence_create(f.device, 0, &p.produced), STATUS_SUCCESS);
    expect_status(fence_create(f.device, 0, &p.consumed), STATUS_SUCCESS);
    thread = CreateThread(NULL, 0, consumer, &p, 0, NULL);
    ok(thread != NULL, "CreateThread failed\n");
    for (i = 1; thread && i <= PINGPONG_ROUNDS; i++) {
        p.slot = i * 3;
        if (kmt_cpu_signal(f.device, p.produced.handle, i) || kmt_cpu_wait(f.device, p.consumed.handle, i, NULL)) {
            failures++;
            break;
        }
        /* the consumer acknowledged round i, and no more */
        if (*p.consumed.cpu != i)
            failures++;
    }
    ok(thread && WaitForSingleObject(thread, WAIT_MS) == WAIT_OBJECT_0, "the consumer did not finish\n");
    ok(!failures && !p.failures, "failed calls: producer %llu, consumer %llu\n", failures, p.failures);
    ok(!p.bad_reads, "%llu rounds read a stale slot\n", p.bad_reads);
    ok(*p.produced.cpu == PINGPONG_ROUNDS && *p.consumed.cpu == PINGPONG_ROUNDS, "fences %llu, %llu\n",
       (unsigned long long)*p.produced.cpu, (unsigned long long)*p.consumed.cpu);
    if (thread)
        CloseHandle(thread);
    exec_close(&f);
}
