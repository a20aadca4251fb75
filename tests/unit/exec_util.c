/*
 * Helpers shared by the execution tests (see exec_util.h).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "exec_util.h"

D3DKMT_HANDLE kmt_exec_virtual_context(D3DKMT_HANDLE device)
{
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };

    cc.hDevice = device;
    ck_assert_status(D3DKMTCreateContextVirtual(&cc), STATUS_SUCCESS);
    ck_assert_local_handle(cc.hContext);
    return cc.hContext;
}

D3DKMT_HANDLE kmt_exec_legacy_context(D3DKMT_HANDLE device, D3DKMT_CREATECONTEXT *out)
{
    D3DKMT_CREATECONTEXT cc = { 0 };

    cc.hDevice = device;
    ck_assert_status(D3DKMTCreateContext(&cc), STATUS_SUCCESS);
    ck_assert_local_handle(cc.hContext);
    if (out)
        *out = cc;
    return cc.hContext;
}

NTSTATUS kmt_exec_destroy_context(D3DKMT_HANDLE context)
{
    D3DKMT_DESTROYCONTEXT dc = { context };

    return D3DKMTDestroyContext(&dc);
}

void kmt_buf_create(D3DKMT_HANDLE device, UINT64 size, struct kmt_buf *buf)
{
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(size);
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    ck_assert_status(D3DKMTCreateAllocation2(&ca), STATUS_SUCCESS);
    ck_assert_uint_ne(info.GpuVirtualAddress, 0);

    lock.hDevice = device;
    lock.hAllocation = info.hAllocation;
    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(lock.pData);

    buf->handle = info.hAllocation;
    buf->va = info.GpuVirtualAddress;
    buf->cpu = lock.pData;
    buf->size = size;
}

NTSTATUS kmt_buf_destroy(D3DKMT_HANDLE device, struct kmt_buf *buf, UINT flags)
{
    D3DKMT_UNLOCK2 unlock = { device, buf->handle };
    D3DKMT_DESTROYALLOCATION2 da = { 0 };

    if (buf->cpu)
        ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
    buf->cpu = NULL;
    da.hDevice = device;
    da.phAllocationList = &buf->handle;
    da.AllocationCount = 1;
    da.Flags.Value = flags;
    return D3DKMTDestroyAllocation2(&da);
}

void kmt_ring_create(D3DKMT_HANDLE device, UINT64 size, struct kmt_ring *ring)
{
    kmt_buf_create(device, size, &ring->buf);
    ring->used = 0;
}

void kmt_ring_destroy(D3DKMT_HANDLE device, struct kmt_ring *ring)
{
    ck_assert_status(kmt_buf_destroy(device, &ring->buf, 0), STATUS_SUCCESS);
}

D3DGPU_VIRTUAL_ADDRESS kmt_ring_put(struct kmt_ring *ring, const struct kmt_cmds *cmds)
{
    D3DGPU_VIRTUAL_ADDRESS va;

    ck_assert_uint_le(ring->used + cmds->length, ring->buf.size);
    memcpy((char *)ring->buf.cpu + ring->used, cmds->data, cmds->length);
    va = ring->buf.va + ring->used;
    ring->used += (cmds->length + 7u) & ~7u;
    return va;
}

NTSTATUS kmt_ring_submit(struct kmt_ring *ring, const D3DKMT_HANDLE *contexts, UINT count,
                         const struct kmt_cmds *cmds)
{
    D3DKMT_SUBMITCOMMAND sc = { 0 };

    ck_assert_uint_le(count, D3DDDI_MAX_BROADCAST_CONTEXT);
    sc.Commands = kmt_ring_put(ring, cmds);
    sc.CommandLength = cmds->length;
    sc.BroadcastContextCount = count;
    memcpy(sc.BroadcastContext, contexts, count * sizeof(*contexts));
    return D3DKMTSubmitCommand(&sc);
}

NTSTATUS kmt_submit_va(D3DKMT_HANDLE context, D3DGPU_VIRTUAL_ADDRESS va, UINT length)
{
    D3DKMT_SUBMITCOMMAND sc = { 0 };

    sc.Commands = va;
    sc.CommandLength = length;
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = context;
    return D3DKMTSubmitCommand(&sc);
}

/* ---- command streams ------------------------------------------------------ */

void kmt_cmds_init(struct kmt_cmds *c)
{
    memset(c, 0, sizeof(*c));
}

static void *cmd_alloc(struct kmt_cmds *c, UINT opcode, UINT size)
{
    KMT_SOFT_CMD_HEADER *h;

    ck_assert_uint_le(c->length + size, sizeof(c->data));
    h = (KMT_SOFT_CMD_HEADER *)(c->data + c->length);
    memset(h, 0, size);
    h->Opcode = opcode;
    h->Size = size;
    c->length += size;
    return h;
}

void kmt_cmd_nop(struct kmt_cmds *c)
{
    cmd_alloc(c, KMT_SOFT_OP_NOP, sizeof(KMT_SOFT_CMD_HEADER));
}

void kmt_cmd_fill(struct kmt_cmds *c, UINT64 dst, UINT64 bytes, UINT value)
{
    KMT_SOFT_CMD_FILL *f = cmd_alloc(c, KMT_SOFT_OP_FILL, sizeof(*f));

    f->DstVa = dst;
    f->Bytes = bytes;
    f->Value = value;
}

void kmt_cmd_copy(struct kmt_cmds *c, UINT64 dst, UINT64 src, UINT64 bytes)
{
    KMT_SOFT_CMD_COPY *k = cmd_alloc(c, KMT_SOFT_OP_COPY, sizeof(*k));

    k->DstVa = dst;
    k->SrcVa = src;
    k->Bytes = bytes;
}

void kmt_cmd_fence(struct kmt_cmds *c, UINT opcode, UINT64 va, UINT64 value)
{
    KMT_SOFT_CMD_FENCE *f = cmd_alloc(c, opcode, sizeof(*f));

    f->Va = va;
    f->Value = value;
}

void kmt_cmd_delay(struct kmt_cmds *c, UINT microseconds)
{
    KMT_SOFT_CMD_DELAY *d = cmd_alloc(c, KMT_SOFT_OP_DELAY, sizeof(*d));

    d->Microseconds = microseconds;
}

void kmt_cmd_raw(struct kmt_cmds *c, UINT opcode, UINT size)
{
    cmd_alloc(c, opcode, size);
}

/* ---- sync objects ------------------------------------------------------------ */

NTSTATUS kmt_fence_create(D3DKMT_HANDLE device, UINT64 initial, UINT flags, struct kmt_fence *fence)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    NTSTATUS status;

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.Flags.Value = flags;
    cs.Info.MonitoredFence.InitialFenceValue = initial;
    status = D3DKMTCreateSynchronizationObject2(&cs);
    if (!status) {
        fence->handle = cs.hSyncObject;
        fence->cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
        fence->gpu = cs.Info.MonitoredFence.FenceValueGPUVirtualAddress;
    }
    return status;
}

NTSTATUS kmt_fence_signal(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, UINT flags)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };

    s.hDevice = device;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &fence;
    s.FenceValueArray = &value;
    s.Flags.Value = flags;
    return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

NTSTATUS kmt_fence_wait_or_event(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, HANDLE event,
                                 int timeout_ms)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };

    w.hDevice = device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &fence;
    w.FenceValueArray = &value;
    w.hAsyncEvent = event;
    return event ? D3DKMTWaitForSynchronizationObjectFromCpu(&w)
                 : KmtWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ms);
}

NTSTATUS kmt_fence_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, int timeout_ms)
{
    return kmt_fence_wait_or_event(device, fence, value, NULL, timeout_ms);
}

NTSTATUS kmt_gpu_signal(D3DKMT_HANDLE context, D3DKMT_HANDLE fence, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = { 0 };

    s.hContext = context;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &fence;
    s.MonitoredFenceValueArray = &value;
    return D3DKMTSignalSynchronizationObjectFromGpu(&s);
}

NTSTATUS kmt_gpu_wait(D3DKMT_HANDLE context, D3DKMT_HANDLE fence, UINT64 value)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = { 0 };

    w.hContext = context;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &fence;
    w.MonitoredFenceValueArray = &value;
    return D3DKMTWaitForSynchronizationObjectFromGpu(&w);
}

NTSTATUS kmt_syncobj_destroy(D3DKMT_HANDLE handle)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { handle };

    return D3DKMTDestroySynchronizationObject(&d);
}

NTSTATUS kmt_signal2(D3DKMT_HANDLE context, D3DKMT_HANDLE obj, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s = { 0 };

    s.hContext = context;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = obj;
    s.Fence.FenceValue = value;
    return D3DKMTSignalSynchronizationObject2(&s);
}

NTSTATUS kmt_wait2(D3DKMT_HANDLE context, D3DKMT_HANDLE obj, UINT64 value)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 w = { 0 };

    w.hContext = context;
    w.ObjectCount = 1;
    w.ObjectHandleArray[0] = obj;
    w.Fence.FenceValue = value;
    return D3DKMTWaitForSynchronizationObject2(&w);
}

NTSTATUS kmt_syncobj_create2(D3DKMT_HANDLE device, D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                             D3DKMT_HANDLE *out)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    NTSTATUS status;

    cs.hDevice = device;
    cs.Info = *info;
    status = D3DKMTCreateSynchronizationObject2(&cs);
    *info = cs.Info;
    if (!status)
        *out = cs.hSyncObject;
    return status;
}

/* ---- events and state ------------------------------------------------------------ */

int kmt_eventfd(void)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    ck_assert_int_ge(fd, 0);
    return fd;
}

HANDLE kmt_event_handle(int fd)
{
    return (HANDLE)(intptr_t)fd;
}

bool kmt_event_wait(int fd, int timeout_ms)
{
    struct pollfd p = { fd, POLLIN, 0 };
    uint64_t v;
    int r;

    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return false;
    ck_assert_int_eq(read(fd, &v, sizeof(v)), (int)sizeof(v));
    ck_assert_uint_ge(v, 1);
    return true;
}

D3DKMT_DEVICEEXECUTION_STATE kmt_exec_state(D3DKMT_HANDLE device)
{
    D3DKMT_GETDEVICESTATE gs = { 0 };

    gs.hDevice = device;
    gs.StateType = D3DKMT_DEVICESTATE_EXECUTION;
    ck_assert_status(D3DKMTGetDeviceState(&gs), STATUS_SUCCESS);
    return gs.ExecutionState;
}

UINT64 kmt_soft_stat_wait(D3DKMT_HANDLE adapter, size_t field, UINT64 value, int timeout_ms)
{
    UINT64 got = 0;

    for (int waited = 0;; waited++) {
        KMT_SOFT_ESCAPE e = kmt_test_soft_stats(adapter);

        memcpy(&got, (const char *)&e + field, sizeof(got));
        if (got == value || waited >= timeout_ms)
            return got;
        kmt_sleep_ms(1);
    }
}

void kmt_sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}
