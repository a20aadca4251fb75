/*
 * Monitored fences and CPU waits on the software adapter: the CPU-visible
 * value tracking CPU and GPU signals, rewinds, SignalFromGpu(2) /
 * WaitFromGpu ordering, and WaitForSynchronizationObjectFromCpu: argument
 * rules, any / all, timeouts, async events, destroy during a wait.
 */
#include <pthread.h>
#include <unistd.h>

#include "exec_util.h"

#define NOT_A_HANDLE 0x40fffc00u
#define ALLOW_REWIND 0x4u

static D3DKMT_HANDLE adapter, device;

static void setup_device(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU wait_desc(const D3DKMT_HANDLE *h, const UINT64 *v,
                                                            UINT n)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };

    w.hDevice = device;
    w.ObjectCount = n;
    w.ObjectHandleArray = h;
    w.FenceValueArray = v;
    return w;
}

/* ---- the CPU-visible value ---------------------------------------------------------- */

START_TEST(fence_value_tracks_cpu_signals)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };
    struct kmt_fence f[3];
    D3DKMT_HANDLE h[3];
    UINT64 v[3] = { 10, 20, 30 };

    setup_device();
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_status(kmt_fence_create(device, i, 0, &f[i]), STATUS_SUCCESS);
        ck_assert_uint_eq(*f[i].cpu, i);
        h[i] = f[i].handle;
    }
    ck_assert_status(kmt_fence_signal(device, h[0], 5, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*f[0].cpu, 5);
    s.hDevice = device;
    s.ObjectCount = 3;
    s.ObjectHandleArray = h;
    s.FenceValueArray = v;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromCpu(&s), STATUS_SUCCESS);
    for (unsigned i = 0; i < 3; i++)
        ck_assert_uint_eq(*f[i].cpu, v[i]);
    ck_assert_status(kmt_fence_signal(device, h[1], UINT64_MAX, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*f[1].cpu, UINT64_MAX);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(fence_rewind_needs_the_flag)
{
    struct kmt_fence f;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 10, 0, &f), STATUS_SUCCESS);
    /* Windows: a lower value without the flag is refused */
    ck_assert_status(kmt_fence_signal(device, f.handle, 4, 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(*f.cpu, 10);
    ck_assert_status(kmt_fence_signal(device, f.handle, 10, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 10);
    ck_assert_status(kmt_fence_signal(device, f.handle, 4, ALLOW_REWIND), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 4);
    ck_assert_status(kmt_fence_signal(device, f.handle, 6, ALLOW_REWIND), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 6);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* One fence of the call going down refuses the whole call: none moves. */
START_TEST(fence_rewind_refused_signals_nothing)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };
    struct kmt_fence f[2];
    D3DKMT_HANDLE h[2];
    UINT64 v[2] = { 50, 1 };

    setup_device();
    ck_assert_status(kmt_fence_create(device, 10, 0, &f[0]), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 2, 0, &f[1]), STATUS_SUCCESS);
    h[0] = f[0].handle;
    h[1] = f[1].handle;
    s.hDevice = device;
    s.ObjectCount = 2;
    s.ObjectHandleArray = h;
    s.FenceValueArray = v;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromCpu(&s), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(*f[0].cpu, 10);
    ck_assert_uint_eq(*f[1].cpu, 2);
    s.Flags.AllowFenceRewind = 1;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromCpu(&s), STATUS_SUCCESS);
    ck_assert_uint_eq(*f[0].cpu, 50);
    ck_assert_uint_eq(*f[1].cpu, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(fence_rewind_from_gpu2)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s = { 0 };
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;
    UINT64 value = 3;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 8, 0, &f), STATUS_SUCCESS);
    s.ObjectCount = 1;
    s.ObjectHandleArray = &f.handle;
    s.BroadcastContextCount = 1;
    s.BroadcastContextArray = &ctx;
    s.MonitoredFenceValueArray = &value;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s), STATUS_SUCCESS);
    /* a later signal proves the first one ran */
    ck_assert_status(kmt_gpu_signal(ctx, f.handle, 9), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 9, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 9);
    s.Flags.AllowFenceRewind = 1;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s), STATUS_SUCCESS);
    /* nothing to wait for going down: drain the context */
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 3);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(fence_value_tracks_gpu_signal_commands)
{
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WAIT_FENCE, f.gpu, 100);    /* the CPU lets it go on */
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 200);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 1);
    ck_assert_status(kmt_fence_wait(device, f.handle, 200, 20), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_signal(device, f.handle, 100, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 200, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 200);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(signal_from_gpu_after_the_work_before_it)
{
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, f.handle, 5), STATUS_SUCCESS);
    /* the call returned at once; the value follows the GPU */
    ck_assert_uint_eq(*f.cpu, 0);
    ck_assert_status(kmt_fence_wait(device, f.handle, 5, 0), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_wait(device, f.handle, 5, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 5);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(wait_from_gpu_holds_later_work)
{
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence gate, done;
    struct kmt_buf x;
    D3DKMT_HANDLE ctx, other_dev;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    kmt_buf_create(device, 4096, &x);
    /* the gate belongs to another device of the adapter: fences cross devices */
    other_dev = kmt_test_create_device(NULL);
    ck_assert_status(kmt_fence_create(other_dev, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_wait(ctx, gate.handle, 2), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, x.va, 0x600d);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, done.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, 50), STATUS_TIMEOUT);
    ck_assert_uint_eq(*(const UINT64 *)x.cpu, 0);
    ck_assert_status(kmt_fence_signal(other_dev, gate.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, 50), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_signal(other_dev, gate.handle, 2, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*(const UINT64 *)x.cpu, 0x600d);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(signal_from_gpu_rules)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = { 0 };
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s2 = { 0 };
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU w = { 0 };
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;
    UINT64 value = 1;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu(NULL), STATUS_INVALID_PARAMETER);
    s.hContext = ctx;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &f.handle;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu(&s), STATUS_INVALID_PARAMETER);  /* no values */
    s.MonitoredFenceValueArray = &value;
    s.ObjectCount = 0;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu(&s), STATUS_INVALID_PARAMETER);
    s.ObjectCount = D3DDDI_MAX_OBJECT_SIGNALED + 1;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu(&s), STATUS_INVALID_PARAMETER);
    s.ObjectCount = 1;
    s.hContext = device;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu(&s), STATUS_INVALID_PARAMETER);
    /* FromGpu2: at least one context */
    s2.ObjectCount = 1;
    s2.ObjectHandleArray = &f.handle;
    s2.MonitoredFenceValueArray = &value;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s2), STATUS_INVALID_PARAMETER);
    s2.BroadcastContextCount = 1;
    s2.BroadcastContextArray = &ctx;
    s2.Flags.SignalAtSubmission = 0;
    s2.Flags.Reserved = 1;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s2), STATUS_INVALID_PARAMETER);
    s2.Flags.Value = 0;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s2), STATUS_SUCCESS);
    /* WaitFromGpu: monitored fences need their value array */
    w.hContext = ctx;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &f.handle;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromGpu(&w), STATUS_INVALID_PARAMETER);
    w.ObjectCount = 0;
    w.MonitoredFenceValueArray = &value;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromGpu(&w), STATUS_INVALID_PARAMETER);
    w.ObjectCount = 1;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromGpu(&w), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(signal_from_gpu2_enqueue_cpu_event)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s = { 0 };
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx;
    int fd;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    fd = kmt_eventfd();
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    s.Flags.EnqueueCpuEvent = 1;
    s.BroadcastContextCount = 1;
    s.BroadcastContextArray = &ctx;
    s.CpuEventHandle = kmt_event_handle(fd);
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 0));
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    s.ObjectCount = 1;
    ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s), STATUS_INVALID_PARAMETER);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- WaitForSynchronizationObjectFromCpu ------------------------------------------------ */

START_TEST(wait_argument_rules)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    D3DKMT_HANDLE h[D3DDDI_MAX_OBJECT_WAITED_ON + 1], mutex;
    UINT64 v[D3DDDI_MAX_OBJECT_WAITED_ON + 1] = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT cm = { 0 };
    struct kmt_fence f;
    int closed;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 1, 0, &f), STATUS_SUCCESS);
    for (unsigned i = 0; i <= D3DDDI_MAX_OBJECT_WAITED_ON; i++)
        h[i] = f.handle;
    cm.hDevice = device;
    cm.Info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    ck_assert_status(D3DKMTCreateSynchronizationObject(&cm), STATUS_SUCCESS);
    mutex = cm.hSyncObject;

    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(NULL), STATUS_INVALID_PARAMETER);
    w = wait_desc(h, v, 0);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    w = wait_desc(h, v, D3DDDI_MAX_OBJECT_WAITED_ON + 1);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    w = wait_desc(NULL, v, 1);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    w = wait_desc(h, NULL, 1);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    w = wait_desc(h, v, 1);
    w.Flags.Reserved = 1;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    w = wait_desc(h, v, 1);
    w.hDevice = NOT_A_HANDLE;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    w = wait_desc(&mutex, v, 1);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    h[1] = NOT_A_HANDLE;
    w = wait_desc(h, v, 2);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_PARAMETER);
    h[1] = f.handle;
    closed = kmt_eventfd();
    close(closed);
    w = wait_desc(h, v, 1);
    w.hAsyncEvent = kmt_event_handle(closed);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_INVALID_HANDLE);
    /* 32 objects (the same one 32 times) is the most */
    w = wait_desc(h, v, D3DDDI_MAX_OBJECT_WAITED_ON);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(wait_already_satisfied_returns_at_once)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_fence f;
    UINT64 v = 5;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 5, 0, &f), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 5, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 0, 0), STATUS_SUCCESS);
    /* the blocking call, no timeout anywhere */
    w = wait_desc(&f.handle, &v, 1);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    /* another device of the adapter may wait for it */
    w.hDevice = kmt_test_create_device(NULL);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(wait_times_out)
{
    struct kmt_fence f;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 5, 0, &f), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 6, 0), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_wait(device, f.handle, 6, 30), STATUS_TIMEOUT);
    ck_assert_uint_eq(*f.cpu, 5);
    /* a timed-out wait leaves nothing behind: the next signal works normally */
    ck_assert_status(kmt_fence_signal(device, f.handle, 6, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 6, 0), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(wait_all_and_wait_any)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_fence a, b;
    D3DKMT_HANDLE h[2];
    UINT64 v[2] = { 1, 1 };

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &a), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &b), STATUS_SUCCESS);
    h[0] = a.handle;
    h[1] = b.handle;
    w = wait_desc(h, v, 2);
    ck_assert_status(KmtWaitForSynchronizationObjectFromCpuTimeout(&w, 0), STATUS_TIMEOUT);
    w.Flags.WaitAny = 1;
    ck_assert_status(KmtWaitForSynchronizationObjectFromCpuTimeout(&w, 0), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_signal(device, b.handle, 1, 0), STATUS_SUCCESS);
    /* one of two: any is done, all is not */
    ck_assert_status(KmtWaitForSynchronizationObjectFromCpuTimeout(&w, 0), STATUS_SUCCESS);
    w.Flags.WaitAny = 0;
    ck_assert_status(KmtWaitForSynchronizationObjectFromCpuTimeout(&w, 20), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_signal(device, a.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(KmtWaitForSynchronizationObjectFromCpuTimeout(&w, 0), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct delayed {
    D3DKMT_HANDLE device, fence;
    UINT64 value;
    unsigned delay_ms;
    bool destroy;                        /* destroy the fence (or the device) instead */
    bool destroy_device;
    NTSTATUS status;
};

static void *delayed_thread(void *arg)
{
    struct delayed *d = arg;

    kmt_sleep_ms(d->delay_ms);
    if (d->destroy_device) {
        D3DKMT_DESTROYDEVICE dd = { d->device };
        d->status = D3DKMTDestroyDevice(&dd);
    } else if (d->destroy) {
        d->status = kmt_syncobj_destroy(d->fence);
    } else {
        d->status = kmt_fence_signal(d->device, d->fence, d->value, 0);
    }
    return NULL;
}

static void start_delayed(pthread_t *t, struct delayed *d)
{
    ck_assert_int_eq(pthread_create(t, NULL, delayed_thread, d), 0);
}

START_TEST(blocking_wait_wakes_on_signal)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct delayed d = { 0 };
    struct kmt_fence f;
    pthread_t t;
    UINT64 v = 7;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    d.device = device;
    d.fence = f.handle;
    d.value = 7;
    d.delay_ms = 50;
    start_delayed(&t, &d);
    w = wait_desc(&f.handle, &v, 1);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    ck_assert_uint_ge(*f.cpu, 7);
    pthread_join(t, NULL);
    ck_assert_status(d.status, STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(async_wait_sets_event_later)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_fence f;
    UINT64 v = 3;
    int fd;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    w = wait_desc(&f.handle, &v, 1);
    w.hAsyncEvent = kmt_event_handle(fd);
    /* returns at once */
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 20));
    ck_assert_status(kmt_fence_signal(device, f.handle, 2, 0), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 20));
    ck_assert_status(kmt_fence_signal(device, f.handle, 3, 0), STATUS_SUCCESS);
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    /* set once only */
    ck_assert_status(kmt_fence_signal(device, f.handle, 4, 0), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 20));
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(async_wait_already_satisfied)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_fence f;
    UINT64 v = 3;
    int fd;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 3, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    w = wait_desc(&f.handle, &v, 1);
    w.hAsyncEvent = kmt_event_handle(fd);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    ck_assert(kmt_event_wait(fd, 0));
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(async_wait_on_gpu_signal)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;
    UINT64 v = 1;
    int fd;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    w = wait_desc(&f.handle, &v, 1);
    w.hAsyncEvent = kmt_event_handle(fd);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    /* the engine writes the value and raises MONITORED_FENCE_SIGNALED */
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 50000);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    ck_assert_uint_eq(*f.cpu, 1);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_during_blocking_wait_abandons_it)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct delayed d = { 0 };
    struct kmt_fence f, g;
    D3DKMT_HANDLE h[2];
    UINT64 v[2] = { 1, 1 };
    pthread_t t;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &g), STATUS_SUCCESS);
    h[0] = g.handle;
    h[1] = f.handle;
    d.fence = f.handle;
    d.destroy = true;
    d.delay_ms = 50;
    start_delayed(&t, &d);
    /* any of the objects going away ends the wait */
    w = wait_desc(h, v, 2);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_ABANDONED);
    pthread_join(t, NULL);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(*g.cpu, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_during_async_wait_sets_event)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_fence f;
    UINT64 v = 1;
    int fd;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    w = wait_desc(&f.handle, &v, 1);
    w.hAsyncEvent = kmt_event_handle(fd);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 0));
    ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_device_during_wait_abandons_it)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct delayed d = { 0 };
    struct kmt_fence f;
    D3DKMT_HANDLE waiter_dev;
    UINT64 v = 1;
    pthread_t t;

    setup_device();
    waiter_dev = kmt_test_create_device(NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    d.device = device;
    d.destroy_device = true;
    d.delay_ms = 50;
    start_delayed(&t, &d);
    /* waiting through another device: the fence dies in its device's cascade */
    w = wait_desc(&f.handle, &v, 1);
    w.hDevice = waiter_dev;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_ABANDONED);
    pthread_join(t, NULL);
    ck_assert_status(d.status, STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(pending_async_wait_at_shutdown)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_fence f;
    UINT64 v = 1;
    int fd;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    w = wait_desc(&f.handle, &v, 1);
    w.hAsyncEvent = kmt_event_handle(fd);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    /* process teardown ends it (the fence dies), and nothing leaks */
    kmt_test_shutdown_no_leaks();
    ck_assert(kmt_event_wait(fd, 0));
    close(fd);
}
END_TEST

START_TEST(fault_releases_cpu_waiters)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;
    UINT64 v = 1000;
    int fd;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    w = wait_desc(&f.handle, &v, 1);
    w.hAsyncEvent = kmt_event_handle(fd);
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 20000);
    kmt_cmd_fill(&cmds, 0x10000, 4, 0);            /* never mapped */
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    /* a blocked waiter and an async one are both released by the TDR rule */
    w.hAsyncEvent = NULL;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromCpu(&w), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, UINT64_MAX);
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fence_wait");
    TCase *value = tcase_create("value");
    TCase *wait = tcase_create("wait");

    tcase_set_timeout(value, 30);
    tcase_add_test(value, fence_value_tracks_cpu_signals);
    tcase_add_test(value, fence_rewind_needs_the_flag);
    tcase_add_test(value, fence_rewind_refused_signals_nothing);
    tcase_add_test(value, fence_rewind_from_gpu2);
    tcase_add_test(value, fence_value_tracks_gpu_signal_commands);
    tcase_add_test(value, signal_from_gpu_after_the_work_before_it);
    tcase_add_test(value, wait_from_gpu_holds_later_work);
    tcase_add_test(value, signal_from_gpu_rules);
    tcase_add_test(value, signal_from_gpu2_enqueue_cpu_event);
    suite_add_tcase(s, value);

    tcase_set_timeout(wait, 30);
    tcase_add_test(wait, wait_argument_rules);
    tcase_add_test(wait, wait_already_satisfied_returns_at_once);
    tcase_add_test(wait, wait_times_out);
    tcase_add_test(wait, wait_all_and_wait_any);
    tcase_add_test(wait, blocking_wait_wakes_on_signal);
    tcase_add_test(wait, async_wait_sets_event_later);
    tcase_add_test(wait, async_wait_already_satisfied);
    tcase_add_test(wait, async_wait_on_gpu_signal);
    tcase_add_test(wait, destroy_during_blocking_wait_abandons_it);
    tcase_add_test(wait, destroy_during_async_wait_sets_event);
    tcase_add_test(wait, destroy_device_during_wait_abandons_it);
    tcase_add_test(wait, pending_async_wait_at_shutdown);
    tcase_add_test(wait, fault_releases_cpu_waiters);
    suite_add_tcase(s, wait);
    return kmt_test_run(s);
}
