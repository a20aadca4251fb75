/*
 * Steps on synchronization objects of every type: create (v1 and v2),
 * destroy, signal and wait queued on contexts (v1, v2, FromGpu, FromGpu2),
 * signal and wait from the CPU.  CPU waits are bounded: a timeout of a
 * few milliseconds, or an event to set later.
 */
#include "config.h"

#include <string.h>

#include "fuzz_steps.h"

#define OBJECTS_MAX 32                  /* D3DDDI_MAX_OBJECT_SIGNALED / _WAITED_ON */

static D3DDDI_SYNCHRONIZATIONOBJECT_TYPE sync_type(struct fuzz_prog *p)
{
    uint8_t t = fuzz_u8(&p->in);

    return (D3DDDI_SYNCHRONIZATIONOBJECT_TYPE)(t < 0xf0 ? t % 8 : fuzz_u32(&p->in));
}

void step_create_sync(struct fuzz_prog *p)
{
    D3DKMT_HANDLE dev = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
    struct fuzz_object *o;
    bool adapter_object;

    if (fuzz_u8(&p->in) % 4 == 0) {
        D3DKMT_CREATESYNCHRONIZATIONOBJECT c = { .hDevice = dev };

        c.Info.Type = sync_type(p);
        c.Info.Semaphore.MaxCount = fuzz_u8(&p->in) % 4;
        c.Info.Semaphore.InitialCount = fuzz_u8(&p->in) % 4;
        if (!D3DKMTCreateSynchronizationObject(&c))
            fuzz_pool_add(&p->pool, FK_SYNC, c.hSyncObject, 0);
        return;
    }

    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c = { .hDevice = dev };

    c.Info.Type = sync_type(p);
    c.Info.Flags.Value = fuzz_flags(p, 11);
    switch (c.Info.Type) {
    case D3DDDI_CPU_NOTIFICATION:
        c.Info.CPUNotification.Event = fuzz_event(p);
        break;
    case D3DDDI_MONITORED_FENCE:
        c.Info.MonitoredFence.InitialFenceValue = fuzz_fence_value(p);
        c.Info.MonitoredFence.EngineAffinity = fuzz_u8(&p->in) % 4 ? 0 : fuzz_u32(&p->in);
        break;
    case D3DDDI_PERIODIC_MONITORED_FENCE:
        c.Info.PeriodicMonitoredFence.hAdapter = fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in);
        c.Info.PeriodicMonitoredFence.VidPnTargetId = fuzz_u8(&p->in);
        c.Info.PeriodicMonitoredFence.Time = fuzz_u64(&p->in);
        break;
    default:                            /* mutex, semaphore, fence and the rest */
        c.Info.Fence.FenceValue = fuzz_u8(&p->in) % 4 ? fuzz_u8(&p->in) % 4 : fuzz_u64(&p->in);
    }
    if (D3DKMTCreateSynchronizationObject2(&c))
        return;
    /* mutexes, semaphores, fences and CPU notifications outlive the device;
     * the rest (monitored fences) are the device's */
    adapter_object = c.Info.Type >= D3DDDI_SYNCHRONIZATION_MUTEX && c.Info.Type <= D3DDDI_CPU_NOTIFICATION;
    o = fuzz_pool_add(&p->pool, FK_SYNC, c.hSyncObject, adapter_object ? 0 : dev);
    fuzz_share_add_global(p, c.Info.SharedHandle);
    if (o && c.Info.Type == D3DDDI_MONITORED_FENCE)
        o->gpu_va = c.Info.MonitoredFence.FenceValueGPUVirtualAddress;
}

void step_destroy_sync(struct fuzz_prog *p)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { fuzz_pool_handle(&p->pool, FK_SYNC, &p->in) };

    if (D3DKMTDestroySynchronizationObject(&d))
        return;
    fuzz_pool_expect_live(&p->pool, d.hSyncObject, "DestroySynchronizationObject");
    fuzz_pool_kill(&p->pool, d.hSyncObject);
}

/* `n` sync handles into a fixed array (the v1/v2 descriptors carry them inline). */
static void fill_handles(struct fuzz_prog *p, D3DKMT_HANDLE *dst, UINT n, UINT max, enum fuzz_kind kind)
{
    for (UINT i = 0; i < n && i < max; i++)
        dst[i] = fuzz_pool_handle(&p->pool, kind, &p->in);
}

/* A caller array of `n` handles (blocks no longer than the documented maximum). */
static D3DKMT_HANDLE *handle_array(struct fuzz_prog *p, UINT n, enum fuzz_kind kind)
{
    UINT room = n < OBJECTS_MAX + 1 ? n : OBJECTS_MAX + 1;
    D3DKMT_HANDLE *a = fuzz_ptr(p, room * sizeof(*a), false);

    if (fuzz_in_arena(a))
        fill_handles(p, a, n, room, kind);
    return a;
}

static UINT64 *value_array(struct fuzz_prog *p, UINT n)
{
    UINT room = n < OBJECTS_MAX + 1 ? n : OBJECTS_MAX + 1;
    UINT64 *v = fuzz_ptr(p, room * sizeof(*v), false);

    for (UINT i = 0; fuzz_in_arena(v) && i < room && i < 4; i++)
        v[i] = fuzz_fence_value(p);
    return v;
}

void step_signal_gpu(struct fuzz_prog *p)
{
    D3DKMT_HANDLE ctx = fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in);
    UINT n = fuzz_count(p, OBJECTS_MAX);
    UINT flags = fuzz_flags(p, 3);

    switch (fuzz_u8(&p->in) % 4) {
    case 0: {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s = { .hContext = ctx, .ObjectCount = n };

        fill_handles(p, s.ObjectHandleArray, n, OBJECTS_MAX, FK_SYNC);
        s.Flags.Value = flags;
        D3DKMTSignalSynchronizationObject(&s);
        break;
    }
    case 1: {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s = { .hContext = ctx, .ObjectCount = n };

        fill_handles(p, s.ObjectHandleArray, n, OBJECTS_MAX, FK_SYNC);
        s.Flags.Value = flags;
        s.BroadcastContextCount = fuzz_u8(&p->in) % 4 ? 0 : fuzz_count(p, 2);
        fill_handles(p, s.BroadcastContext, s.BroadcastContextCount, D3DDDI_MAX_BROADCAST_CONTEXT, FK_CONTEXT);
        if (s.Flags.EnqueueCpuEvent)
            s.CpuEventHandle = fuzz_event(p);
        else
            s.Fence.FenceValue = fuzz_fence_value(p);
        D3DKMTSignalSynchronizationObject2(&s);
        break;
    }
    case 2: {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = { .hContext = ctx, .ObjectCount = n };

        s.ObjectHandleArray = handle_array(p, n, FK_SYNC);
        s.MonitoredFenceValueArray = value_array(p, n);
        D3DKMTSignalSynchronizationObjectFromGpu(&s);
        break;
    }
    default: {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s = { .ObjectCount = n };
        UINT nctx = fuzz_count(p, 2);
        D3DKMT_HANDLE *contexts = handle_array(p, nctx, FK_CONTEXT);

        if (fuzz_in_arena(contexts) && nctx)
            contexts[0] = ctx;
        s.ObjectHandleArray = handle_array(p, n, FK_SYNC);
        s.Flags.Value = flags;
        s.BroadcastContextCount = nctx;
        s.BroadcastContextArray = contexts;
        if (s.Flags.EnqueueCpuEvent)
            s.CpuEventHandle = fuzz_event(p);
        else
            s.MonitoredFenceValueArray = value_array(p, n);
        D3DKMTSignalSynchronizationObjectFromGpu2(&s);
    }
    }
}

/* FenceValue shares its union with MonitoredFenceValueArray, which the
 * library reads when the first object is a monitored fence: a value that
 * could be a user address would be a wild pointer of the harness's making. */
static UINT64 not_a_pointer(UINT64 v)
{
    return v >= 0x10000 && v < 0x800000000000ull ? v | 1ull << 63 : v;
}

void step_wait_gpu(struct fuzz_prog *p)
{
    D3DKMT_HANDLE ctx = fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in);
    UINT n = fuzz_count(p, OBJECTS_MAX);
    NTSTATUS s;

    switch (fuzz_u8(&p->in) % 3) {
    case 0: {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECT w = { .hContext = ctx, .ObjectCount = n };

        fill_handles(p, w.ObjectHandleArray, n, OBJECTS_MAX, FK_SYNC);
        s = D3DKMTWaitForSynchronizationObject(&w);
        break;
    }
    case 1: {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 w = { .hContext = ctx, .ObjectCount = n };

        fill_handles(p, w.ObjectHandleArray, n, OBJECTS_MAX, FK_SYNC);
        w.Fence.FenceValue = fuzz_fence_value(p);
        s = D3DKMTWaitForSynchronizationObject2(&w);
        break;
    }
    default: {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = { .hContext = ctx, .ObjectCount = n };

        w.ObjectHandleArray = handle_array(p, n, FK_SYNC);
        if (fuzz_u8(&p->in) & 1)
            w.FenceValue = not_a_pointer(fuzz_fence_value(p));
        else
            w.MonitoredFenceValueArray = value_array(p, n);
        s = D3DKMTWaitForSynchronizationObjectFromGpu(&w);
    }
    }
    if (!s)
        p->gpu_waited = true;
}

/* The CPU calls' common head: device, count, objects and their values. */
#define CPU_OBJECTS(d) do {                                                     \
        (d).hDevice = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);            \
        (d).ObjectCount = fuzz_count(p, OBJECTS_MAX);                           \
        (d).ObjectHandleArray = handle_array(p, (d).ObjectCount, FK_SYNC);      \
        (d).FenceValueArray = value_array(p, (d).ObjectCount);                  \
    } while (0)

void step_signal_cpu(struct fuzz_prog *p)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };

    CPU_OBJECTS(s);
    s.Flags.Value = fuzz_flags(p, 3);
    D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

void step_wait_cpu(struct fuzz_prog *p)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };

    CPU_OBJECTS(w);
    w.hAsyncEvent = fuzz_event(p);
    w.Flags.Value = fuzz_flags(p, 1);
    /* without an event the D3DKMT call would wait for ever: the timed variant */
    if (w.hAsyncEvent)
        D3DKMTWaitForSynchronizationObjectFromCpu(&w);
    else
        KmtWaitForSynchronizationObjectFromCpuTimeout(&w, fuzz_u8(&p->in) % 3);
}
