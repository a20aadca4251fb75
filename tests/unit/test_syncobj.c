/*
 * Synchronization objects on the software adapter: creation rules (with
 * Wine's Windows-observed expectations, issue5-layouts.md §6), destruction,
 * and the GPU-side signal / wait of mutexes, semaphores, legacy fences,
 * CPU notifications and monitored fences, ordered on contexts.
 */
#include <unistd.h>

#include "exec_util.h"

#define NOT_A_HANDLE 0x40fffc00u
#define FLAG_SHARED 0x1u
#define FLAG_NT_SHARING 0x2u
#define FLAG_NO_SIGNAL 0x10u
#define FLAG_NO_WAIT 0x20u
#define FLAG_NO_GPU_ACCESS 0x80u

static D3DKMT_HANDLE adapter, device;

static void setup_device(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static NTSTATUS create_v1(D3DKMT_HANDLE dev, D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, UINT a, UINT b,
                          D3DKMT_HANDLE *out)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT cs = { 0 };
    NTSTATUS status;

    cs.hDevice = dev;
    cs.Info.Type = type;
    cs.Info.Semaphore.MaxCount = a;       /* InitialState for a mutex */
    cs.Info.Semaphore.InitialCount = b;
    status = D3DKMTCreateSynchronizationObject(&cs);
    if (out)
        *out = status ? 0 : cs.hSyncObject;
    return status;
}

static NTSTATUS create_v2(D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, UINT flags, D3DKMT_HANDLE *out)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };

    info.Type = type;
    info.Flags.Value = flags;
    return kmt_syncobj_create2(device, &info, out);
}

/* Signals (v1) or waits (v1) one object on a context. */
static NTSTATUS signal_v1(D3DKMT_HANDLE ctx, D3DKMT_HANDLE obj)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s = { 0 };

    s.hContext = ctx;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = obj;
    return D3DKMTSignalSynchronizationObject(&s);
}

static NTSTATUS wait_v1(D3DKMT_HANDLE ctx, D3DKMT_HANDLE obj)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECT w = { 0 };

    w.hContext = ctx;
    w.ObjectCount = 1;
    w.ObjectHandleArray[0] = obj;
    return D3DKMTWaitForSynchronizationObject(&w);
}

/* The fence reaches `value` within the test bound, and not before. */
static void expect_not_yet(const struct kmt_fence *f, UINT64 value)
{
    ck_assert_status(kmt_fence_wait(device, f->handle, value, 50), STATUS_TIMEOUT);
    ck_assert_uint_lt(*f->cpu, value);
}

static void expect_reached(const struct kmt_fence *f, UINT64 value)
{
    ck_assert_status(kmt_fence_wait(device, f->handle, value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_ge(*f->cpu, value);
}

/* ---- creation: Windows-observed rows -------------------------------------------- */

START_TEST(create_null_and_zeroed)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT c1 = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c2 = { 0 };

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTCreateSynchronizationObject(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateSynchronizationObject(&c1), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateSynchronizationObject2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateSynchronizationObject2(&c2), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroySynchronizationObject(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(c1.hSyncObject, 0);
    ck_assert_uint_eq(c2.hSyncObject, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_bad_type)
{
    D3DKMT_HANDLE h;

    setup_device();
    ck_assert_status(create_v1(device, 0, 0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(D3DDDI_SYNCHRONIZATION_TYPE_LIMIT, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2((D3DDDI_SYNCHRONIZATIONOBJECT_TYPE)0x7fffffff, 0, &h), STATUS_INVALID_PARAMETER);
    /* WDDM 3.1 native fences are not re-created */
    ck_assert_status(create_v2(D3DDDI_NATIVE_FENCE, 0, &h), STATUS_NOT_SUPPORTED);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_without_device)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c2 = { 0 };
    D3DKMT_HANDLE h, ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(create_v1(0, D3DDDI_SYNCHRONIZATION_MUTEX, 0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v1(NOT_A_HANDLE, D3DDDI_SYNCHRONIZATION_MUTEX, 0, 0, &h),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v1(adapter, D3DDDI_SYNCHRONIZATION_MUTEX, 0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v1(ctx, D3DDDI_SEMAPHORE, 1, 0, &h), STATUS_INVALID_PARAMETER);
    c2.Info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    ck_assert_status(D3DKMTCreateSynchronizationObject2(&c2), STATUS_INVALID_PARAMETER);
    c2.Info.Type = D3DDDI_MONITORED_FENCE;
    ck_assert_status(D3DKMTCreateSynchronizationObject2(&c2), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_mutex_local_handles)
{
    D3DKMT_HANDLE a, b;

    setup_device();
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, FALSE, 0, &a), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, TRUE, 0, &b), STATUS_SUCCESS);
    ck_assert_local_handle(a);
    ck_assert_local_handle(b);
    ck_assert_uint_eq(a & 0xc0000000u, 0x40000000u);
    ck_assert_uint_eq(b, a + 0x40);
    ck_assert_status(kmt_syncobj_destroy(a), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(b), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_semaphore_counts)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    setup_device();
    ck_assert_status(create_v1(device, D3DDDI_SEMAPHORE, 0, 0, &h), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SEMAPHORE, 4, 4, &h), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SEMAPHORE, 1, 2, &h), STATUS_INVALID_PARAMETER);
    info.Type = D3DDDI_SEMAPHORE;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    info.Semaphore.MaxCount = 3;
    info.Semaphore.InitialCount = 4;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_v1_takes_mutex_and_semaphore_only)
{
    D3DKMT_HANDLE h;

    setup_device();
    ck_assert_status(create_v1(device, D3DDDI_FENCE, 0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v1(device, D3DDDI_CPU_NOTIFICATION, 0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v1(device, D3DDDI_MONITORED_FENCE, 0, 0, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v1(device, D3DDDI_PERIODIC_MONITORED_FENCE, 0, 0, &h), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_v2_each_type_zeroed)
{
    static const D3DDDI_SYNCHRONIZATIONOBJECT_TYPE types[] = {
        D3DDDI_SYNCHRONIZATION_MUTEX, D3DDDI_SEMAPHORE, D3DDDI_FENCE, D3DDDI_MONITORED_FENCE,
    };
    D3DKMT_HANDLE h[4];

    setup_device();
    for (unsigned i = 0; i < 4; i++) {
        D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };

        info.Type = types[i];
        ck_assert_status(kmt_syncobj_create2(device, &info, &h[i]), STATUS_SUCCESS);
        ck_assert_local_handle(h[i]);
        ck_assert_uint_eq(info.SharedHandle, 0);
    }
    for (unsigned i = 0; i < 4; i++)
        ck_assert_status(kmt_syncobj_destroy(h[i]), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_twice)
{
    D3DKMT_HANDLE h;
    struct kmt_fence f;

    setup_device();
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, 0, 0, &h), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_INVALID_PARAMETER);
    /* other types are not sync objects */
    ck_assert_status(kmt_syncobj_destroy(device), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_syncobj_destroy(0), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_shared_gives_global_handle)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    setup_device();
    info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    info.Flags.Shared = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    ck_assert_local_handle(h);
    ck_assert_uint_ne(info.SharedHandle, 0);
    ck_assert_uint_eq(info.SharedHandle & 0x3f, 2);
    ck_assert_uint_ne(info.SharedHandle, h);
    /* a global handle is not the object's local handle (row 9) */
    ck_assert_status(kmt_syncobj_destroy(info.SharedHandle), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    /* a shared monitored fence too */
    memset(&info, 0, sizeof(info));
    info.Type = D3DDDI_MONITORED_FENCE;
    info.Flags.Shared = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    ck_assert_uint_eq(info.SharedHandle & 0x3f, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_nt_sharing_rules)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    setup_device();
    info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    info.Flags.NtSecuritySharing = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_INVALID_PARAMETER);
    info.Flags.Shared = 1;
    info.SharedHandle = 0;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    ck_assert_local_handle(h);
    ck_assert_uint_eq(info.SharedHandle, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_flag_rules)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info;
    D3DKMT_HANDLE h;

    setup_device();
    ck_assert_status(create_v2(D3DDDI_MONITORED_FENCE, FLAG_NO_SIGNAL | FLAG_NO_WAIT, &h),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(D3DDDI_MONITORED_FENCE, 1u << 9, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(D3DDDI_MONITORED_FENCE, 1u << 11, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(D3DDDI_MONITORED_FENCE, 1u << 31, &h), STATUS_INVALID_PARAMETER);
    /* flags of other types */
    ck_assert_status(create_v2(D3DDDI_SYNCHRONIZATION_MUTEX, 0x100 /* SignalByKmd */, &h),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(D3DDDI_SEMAPHORE, 0x08 /* TopOfPipeline */, &h), STATUS_INVALID_PARAMETER);
    ck_assert_status(create_v2(D3DDDI_FENCE, FLAG_NO_GPU_ACCESS, &h), STATUS_INVALID_PARAMETER);
    /* one adapter per object here */
    ck_assert_status(create_v2(D3DDDI_MONITORED_FENCE, 0x04 /* CrossAdapter */, &h), STATUS_NOT_SUPPORTED);
    memset(&info, 0, sizeof(info));
    info.Type = D3DDDI_MONITORED_FENCE;
    info.MonitoredFence.EngineAffinity = 2;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_INVALID_PARAMETER);
    info.MonitoredFence.EngineAffinity = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_cpu_notification_event_rules)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;
    int fd, closed;

    setup_device();
    info.Type = D3DDDI_CPU_NOTIFICATION;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_INVALID_HANDLE);
    closed = kmt_eventfd();
    close(closed);
    info.CPUNotification.Event = kmt_event_handle(closed);
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_INVALID_HANDLE);
    fd = kmt_eventfd();
    info.CPUNotification.Event = kmt_event_handle(fd);
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    ck_assert_local_handle(h);
    /* creating sets nothing */
    ck_assert(!kmt_event_wait(fd, 0));
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_periodic_fence_without_outputs)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    setup_device();
    /* tied to a display target's vsync: target 1 is past the soft
     * adapter's one output */
    info.Type = D3DDDI_PERIODIC_MONITORED_FENCE;
    info.PeriodicMonitoredFence.hAdapter = adapter;
    info.PeriodicMonitoredFence.VidPnTargetId = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(monitored_fence_addresses)
{
    struct kmt_fence a, b, nogpu;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0xfedcba9876543210ull, 0, &a), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &b), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 3, FLAG_NO_GPU_ACCESS, &nogpu), STATUS_SUCCESS);
    ck_assert_ptr_nonnull((const void *)a.cpu);
    ck_assert_ptr_nonnull((const void *)b.cpu);
    ck_assert_ptr_ne((const void *)a.cpu, (const void *)b.cpu);
    ck_assert_uint_eq((uintptr_t)a.cpu % 8, 0);
    ck_assert_uint_eq(*a.cpu, 0xfedcba9876543210ull);
    ck_assert_uint_eq(*b.cpu, 0);
    ck_assert_uint_eq(*nogpu.cpu, 3);
    ck_assert_uint_ne(a.gpu, 0);
    ck_assert_uint_ne(b.gpu, 0);
    ck_assert_uint_ne(a.gpu, b.gpu);
    ck_assert_uint_eq(a.gpu % 8, 0);
    ck_assert_uint_eq(nogpu.gpu, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(objects_and_their_device)
{
    D3DKMT_HANDLE mutex, sem, dev2;
    struct kmt_fence fence;
    D3DKMT_DESTROYDEVICE dd;

    setup_device();
    dev2 = kmt_test_create_device(NULL);
    ck_assert_status(create_v1(dev2, D3DDDI_SYNCHRONIZATION_MUTEX, 0, 0, &mutex), STATUS_SUCCESS);
    ck_assert_status(create_v1(dev2, D3DDDI_SEMAPHORE, 1, 1, &sem), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(dev2, 0, 0, &fence), STATUS_SUCCESS);
    dd.hDevice = dev2;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    /* monitored fences die with their device; the others are the adapter's */
    ck_assert_status(kmt_syncobj_destroy(fence.handle), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_v1(kmt_exec_legacy_context(device, NULL), sem), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(mutex), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(sem), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- GPU signal and wait ---------------------------------------------------------------- */

START_TEST(mutex_wait_acquires_signal_releases)
{
    D3DKMT_HANDLE a, b, mutex;
    struct kmt_fence fa, fb;

    setup_device();
    a = kmt_exec_legacy_context(device, NULL);
    b = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fa), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fb), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, TRUE, 0, &mutex), STATUS_SUCCESS);

    /* created owned: A's wait blocks A's queue */
    ck_assert_status(wait_v1(a, mutex), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, fa.handle, 1), STATUS_SUCCESS);
    expect_not_yet(&fa, 1);
    /* B releases it; A acquires it */
    ck_assert_status(signal_v1(b, mutex), STATUS_SUCCESS);
    expect_reached(&fa, 1);
    /* A owns it now: B waits until A releases */
    ck_assert_status(wait_v1(b, mutex), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(b, fb.handle, 1), STATUS_SUCCESS);
    expect_not_yet(&fb, 1);
    ck_assert_status(signal_v1(a, mutex), STATUS_SUCCESS);
    expect_reached(&fb, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(mutex_of_destroyed_context_is_released)
{
    D3DKMT_HANDLE a, b, mutex;
    struct kmt_fence fa, fb;

    setup_device();
    a = kmt_exec_legacy_context(device, NULL);
    b = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fa), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fb), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, FALSE, 0, &mutex), STATUS_SUCCESS);
    ck_assert_status(wait_v1(a, mutex), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, fa.handle, 1), STATUS_SUCCESS);
    expect_reached(&fa, 1);
    ck_assert_status(wait_v1(b, mutex), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(b, fb.handle, 1), STATUS_SUCCESS);
    expect_not_yet(&fb, 1);
    /* the owner dies: its mutexes are abandoned, B gets it */
    ck_assert_status(kmt_exec_destroy_context(a), STATUS_SUCCESS);
    expect_reached(&fb, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(semaphore_counts_waits)
{
    D3DKMT_HANDLE a, b, sem;
    struct kmt_fence f;

    setup_device();
    a = kmt_exec_legacy_context(device, NULL);
    b = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SEMAPHORE, 2, 0, &sem), STATUS_SUCCESS);
    for (UINT64 i = 1; i <= 3; i++) {
        ck_assert_status(wait_v1(a, sem), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(a, f.handle, i), STATUS_SUCCESS);
    }
    /* each signal lets one wait through */
    expect_not_yet(&f, 1);
    ck_assert_status(signal_v1(b, sem), STATUS_SUCCESS);
    expect_reached(&f, 1);
    expect_not_yet(&f, 2);
    ck_assert_status(signal_v1(b, sem), STATUS_SUCCESS);
    expect_reached(&f, 2);
    expect_not_yet(&f, 3);
    ck_assert_status(signal_v1(b, sem), STATUS_SUCCESS);
    expect_reached(&f, 3);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(semaphore_count_stops_at_max)
{
    D3DKMT_HANDLE a, b, sem;
    struct kmt_fence f, signaled;

    setup_device();
    a = kmt_exec_legacy_context(device, NULL);
    b = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &signaled), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SEMAPHORE, 2, 1, &sem), STATUS_SUCCESS);
    /* three signals with nobody waiting: the count stops at MaxCount (2) */
    for (unsigned i = 0; i < 3; i++)
        ck_assert_status(signal_v1(b, sem), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(b, signaled.handle, 1), STATUS_SUCCESS);
    expect_reached(&signaled, 1);
    for (UINT64 i = 1; i <= 3; i++) {
        ck_assert_status(wait_v1(a, sem), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(a, f.handle, i), STATUS_SUCCESS);
    }
    expect_reached(&f, 2);
    expect_not_yet(&f, 3);
    ck_assert_status(signal_v1(b, sem), STATUS_SUCCESS);
    expect_reached(&f, 3);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(legacy_fence_wait2_signal2)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU wg = { 0 };
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE a, b, fence;
    struct kmt_fence f;

    setup_device();
    a = kmt_exec_legacy_context(device, NULL);
    b = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    info.Type = D3DDDI_FENCE;
    info.Fence.FenceValue = 2;
    ck_assert_status(kmt_syncobj_create2(device, &info, &fence), STATUS_SUCCESS);
    /* already at 2: passes */
    ck_assert_status(kmt_wait2(a, fence, 2), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, f.handle, 1), STATUS_SUCCESS);
    expect_reached(&f, 1);
    ck_assert_status(kmt_wait2(a, fence, 5), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, f.handle, 2), STATUS_SUCCESS);
    ck_assert_status(kmt_signal2(b, fence, 3), STATUS_SUCCESS);
    expect_not_yet(&f, 2);
    ck_assert_status(kmt_signal2(b, fence, 5), STATUS_SUCCESS);
    expect_reached(&f, 2);
    /* WaitForSynchronizationObjectFromGpu takes a legacy fence's value in FenceValue */
    wg.hContext = b;
    wg.ObjectCount = 1;
    wg.ObjectHandleArray = &fence;
    wg.FenceValue = 9;
    ck_assert_status(D3DKMTWaitForSynchronizationObjectFromGpu(&wg), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(b, f.handle, 3), STATUS_SUCCESS);
    expect_not_yet(&f, 3);
    ck_assert_status(kmt_signal2(a, fence, 9), STATUS_SUCCESS);
    expect_reached(&f, 3);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A legacy fence only rises: a signal with a lower value than it holds
 * is ignored, as a monitored fence's without AllowFenceRewind. */
START_TEST(legacy_fence_never_goes_backwards)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE a, b, fence;
    struct kmt_fence f;

    setup_device();
    a = kmt_exec_legacy_context(device, NULL);
    b = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    info.Type = D3DDDI_FENCE;
    info.Fence.FenceValue = 4;
    ck_assert_status(kmt_syncobj_create2(device, &info, &fence), STATUS_SUCCESS);
    ck_assert_status(kmt_signal2(b, fence, 7), STATUS_SUCCESS);
    ck_assert_status(kmt_signal2(b, fence, 3), STATUS_SUCCESS);     /* lower: ignored */
    ck_assert_status(kmt_wait2(a, fence, 7), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, f.handle, 1), STATUS_SUCCESS);
    expect_reached(&f, 1);
    /* and the lower signal did not undo it for a later waiter either */
    ck_assert_status(kmt_wait2(a, fence, 6), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, f.handle, 2), STATUS_SUCCESS);
    expect_reached(&f, 2);
    ck_assert_status(kmt_wait2(a, fence, 8), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(a, f.handle, 3), STATUS_SUCCESS);
    expect_not_yet(&f, 3);
    ck_assert_status(kmt_signal2(b, fence, 8), STATUS_SUCCESS);
    expect_reached(&f, 3);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(cpu_notification_set_by_gpu_signal)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx, note;
    int fd;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    fd = kmt_eventfd();
    info.Type = D3DDDI_CPU_NOTIFICATION;
    info.CPUNotification.Event = kmt_event_handle(fd);
    ck_assert_status(kmt_syncobj_create2(device, &info, &note), STATUS_SUCCESS);
    /* the signal waits for the work queued before it */
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(signal_v1(ctx, note), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 0));
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    /* Signal2 sets it too */
    ck_assert_status(kmt_signal2(ctx, note, 0), STATUS_SUCCESS);
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    /* it cannot be waited for on a context */
    ck_assert_status(wait_v1(ctx, note), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_wait2(ctx, note, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_syncobj_destroy(note), STATUS_SUCCESS);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(enqueue_cpu_event)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s = { 0 };
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s1 = { 0 };
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    D3DKMT_HANDLE ctx;
    int fd;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fd = kmt_eventfd();
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);

    s.hContext = ctx;
    s.Flags.EnqueueCpuEvent = 1;
    s.CpuEventHandle = kmt_event_handle(fd);
    ck_assert_status(D3DKMTSignalSynchronizationObject2(&s), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 0));
    ck_assert(kmt_event_wait(fd, KMT_EXEC_WAIT_MS));
    /* set after the work before it completed */
    ck_assert_uint_eq(*f.cpu, 1);

    /* ObjectCount must be 0, the event valid; Signal (v1) has no event */
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = f.handle;
    ck_assert_status(D3DKMTSignalSynchronizationObject2(&s), STATUS_INVALID_PARAMETER);
    s.ObjectCount = 0;
    s.CpuEventHandle = NULL;
    ck_assert_status(D3DKMTSignalSynchronizationObject2(&s), STATUS_INVALID_HANDLE);
    s1.hContext = ctx;
    s1.Flags.EnqueueCpuEvent = 1;
    ck_assert_status(D3DKMTSignalSynchronizationObject(&s1), STATUS_INVALID_PARAMETER);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(signal2_monitored_fence_and_broadcast)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s = { 0 };
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;
    D3DKMT_HANDLE a, b;

    setup_device();
    a = kmt_exec_virtual_context(device);
    b = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    ck_assert_status(kmt_ring_submit(&ring, &a, 1, &cmds), STATUS_SUCCESS);
    /* broadcast: fires when the last of the contexts got there */
    s.hContext = b;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = f.handle;
    s.BroadcastContextCount = 2;
    s.BroadcastContext[0] = a;
    s.BroadcastContext[1] = b;
    s.Fence.FenceValue = 11;
    ck_assert_status(D3DKMTSignalSynchronizationObject2(&s), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 0);
    expect_reached(&f, 11);
    ck_assert_uint_eq(*f.cpu, 11);
    s.BroadcastContextCount = D3DDDI_MAX_BROADCAST_CONTEXT + 1;
    ck_assert_status(D3DKMTSignalSynchronizationObject2(&s), STATUS_INVALID_PARAMETER);
    s.BroadcastContextCount = 1;
    s.BroadcastContext[0] = NOT_A_HANDLE;
    ck_assert_status(D3DKMTSignalSynchronizationObject2(&s), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(no_signal_no_wait_access)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    struct kmt_fence nosig, nowait;
    D3DKMT_HANDLE ctx, legacy, mutex;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    legacy = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 1, FLAG_NO_SIGNAL, &nosig), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 1, FLAG_NO_WAIT, &nowait), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, nosig.handle, 2, 0), STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_gpu_signal(ctx, nosig.handle, 2), STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_signal2(ctx, nosig.handle, 2), STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_fence_wait(device, nosig.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_wait(ctx, nosig.handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, nowait.handle, 1, 0), STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_gpu_wait(ctx, nowait.handle, 1), STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_wait2(ctx, nowait.handle, 1), STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_fence_signal(device, nowait.handle, 2, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*nowait.cpu, 2);
    ck_assert_uint_eq(*nosig.cpu, 1);
    info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    info.Flags.NoSignal = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &mutex), STATUS_SUCCESS);
    ck_assert_status(signal_v1(legacy, mutex), STATUS_ACCESS_DENIED);
    ck_assert_status(wait_v1(legacy, mutex), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(signal_wait_type_and_count_rules)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s = { 0 };
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECT w = { 0 };
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE ctx, fence, mutex;
    struct kmt_fence mf;

    setup_device();
    ctx = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &mf), STATUS_SUCCESS);
    info.Type = D3DDDI_FENCE;
    ck_assert_status(kmt_syncobj_create2(device, &info, &fence), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, 0, 0, &mutex), STATUS_SUCCESS);
    /* Signal / Wait (v1): mutexes, semaphores (and CPU notifications for Signal) */
    ck_assert_status(signal_v1(ctx, fence), STATUS_INVALID_PARAMETER);
    ck_assert_status(signal_v1(ctx, mf.handle), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_v1(ctx, fence), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_v1(ctx, mf.handle), STATUS_INVALID_PARAMETER);
    /* the CPU paths take monitored fences only */
    ck_assert_status(kmt_fence_signal(device, mutex, 1, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_fence_wait(device, fence, 0, 0), STATUS_INVALID_PARAMETER);
    /* FromGpu with a mutex */
    ck_assert_status(kmt_gpu_signal(ctx, mutex, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_gpu_wait(ctx, mutex, 1), STATUS_INVALID_PARAMETER);
    /* counts */
    s.hContext = ctx;
    s.ObjectCount = 0;
    ck_assert_status(D3DKMTSignalSynchronizationObject(&s), STATUS_INVALID_PARAMETER);
    s.ObjectCount = D3DDDI_MAX_OBJECT_SIGNALED + 1;
    ck_assert_status(D3DKMTSignalSynchronizationObject(&s), STATUS_INVALID_PARAMETER);
    w.hContext = ctx;
    w.ObjectCount = 0;
    ck_assert_status(D3DKMTWaitForSynchronizationObject(&w), STATUS_INVALID_PARAMETER);
    w.ObjectCount = D3DDDI_MAX_OBJECT_WAITED_ON + 1;
    ck_assert_status(D3DKMTWaitForSynchronizationObject(&w), STATUS_INVALID_PARAMETER);
    /* unknown objects and contexts */
    ck_assert_status(signal_v1(ctx, NOT_A_HANDLE), STATUS_INVALID_PARAMETER);
    ck_assert_status(signal_v1(NOT_A_HANDLE, mutex), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_v1(device, mutex), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTSignalSynchronizationObject(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTWaitForSynchronizationObject2(NULL), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(gpu_wait_on_destroyed_object_does_not_block)
{
    D3DKMT_HANDLE ctx, mutex;
    struct kmt_fence f;

    setup_device();
    ctx = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(create_v1(device, D3DDDI_SYNCHRONIZATION_MUTEX, TRUE, 0, &mutex), STATUS_SUCCESS);
    ck_assert_status(wait_v1(ctx, mutex), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, f.handle, 1), STATUS_SUCCESS);
    expect_not_yet(&f, 1);
    /* an abandoned object never holds a queue forever */
    ck_assert_status(kmt_syncobj_destroy(mutex), STATUS_SUCCESS);
    expect_reached(&f, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("syncobj");
    TCase *create = tcase_create("create");
    TCase *gpu = tcase_create("gpu");

    tcase_add_test(create, create_null_and_zeroed);
    tcase_add_test(create, create_bad_type);
    tcase_add_test(create, create_without_device);
    tcase_add_test(create, create_mutex_local_handles);
    tcase_add_test(create, create_semaphore_counts);
    tcase_add_test(create, create_v1_takes_mutex_and_semaphore_only);
    tcase_add_test(create, create_v2_each_type_zeroed);
    tcase_add_test(create, destroy_twice);
    tcase_add_test(create, create_shared_gives_global_handle);
    tcase_add_test(create, create_nt_sharing_rules);
    tcase_add_test(create, create_flag_rules);
    tcase_add_test(create, create_cpu_notification_event_rules);
    tcase_add_test(create, create_periodic_fence_without_outputs);
    tcase_add_test(create, monitored_fence_addresses);
    tcase_add_test(create, objects_and_their_device);
    suite_add_tcase(s, create);

    tcase_set_timeout(gpu, 30);
    tcase_add_test(gpu, mutex_wait_acquires_signal_releases);
    tcase_add_test(gpu, mutex_of_destroyed_context_is_released);
    tcase_add_test(gpu, semaphore_counts_waits);
    tcase_add_test(gpu, semaphore_count_stops_at_max);
    tcase_add_test(gpu, legacy_fence_wait2_signal2);
    tcase_add_test(gpu, legacy_fence_never_goes_backwards);
    tcase_add_test(gpu, cpu_notification_set_by_gpu_signal);
    tcase_add_test(gpu, enqueue_cpu_event);
    tcase_add_test(gpu, signal2_monitored_fence_and_broadcast);
    tcase_add_test(gpu, no_signal_no_wait_access);
    tcase_add_test(gpu, signal_wait_type_and_count_rules);
    tcase_add_test(gpu, gpu_wait_on_destroyed_object_does_not_block);
    suite_add_tcase(s, gpu);
    return kmt_test_run(s);
}
