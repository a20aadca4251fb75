/*
 * DRM miniport on real kernel drivers: monitored fences as timeline
 * syncobjs, contexts, submission.  Expectations come from the kernel
 * itself: a driver with timeline syncobjs and SYNCOBJ_EVENTFD gets fences
 * backed by the kernel (the test reads the timeline with its own
 * SYNCOBJ_QUERY); a virtio_gpu whose host runs 3D (VIRTGPU_GETPARAM) runs
 * command buffers; everything else gets memory-only fences and refuses
 * contexts with STATUS_NOT_SUPPORTED.  Nothing may be left in the kernel:
 * a SYNCOBJ_DESTROY of a handle the miniport freed fails with EINVAL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm_test.h"
#include "exec_util.h"

#define REWIND 4u                        /* D3DDDICB_SIGNALFLAGS.AllowFenceRewind */
#define VIRGL_NOP 0u                     /* a virgl command header: NOP, no payload */

static UINT32 nop_stream[64];            /* zeros: up to 64 virgl NOPs */

static bool kernel_fences(const struct drm_test_adapter *a)
{
    return (a->umd.Caps & KMT_DRM_CAP_SYNCOBJ_TIMELINE) && drm_test_kernel_has_eventfd(a->umd.DrmFd);
}

/* Kernel contexts exist for these families (amdgpu: no submission through
 * kmtshim yet); on virtio_gpu only a virgl host runs command buffers. */
static bool makes_contexts(const struct drm_test_adapter *a)
{
    return kernel_fences(a) && (drm_test_virgl(a) || !strcmp(a->umd.Family, "amdgpu") ||
                                !strcmp(a->umd.Family, "i915"));
}

static unsigned open_adapters(struct drm_test_adapter *a)
{
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    drm_test_check_expected(a, n);
    return n;
}

static unsigned open_virgl(struct drm_test_adapter *out)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a), kept = 0;

    for (unsigned i = 0; i < n; i++)
        if (drm_test_virgl(&a[i]))
            out[kept++] = a[i];
    return kept;
}

static int raw_signal(int fd, UINT handle, UINT64 point)
{
    struct drm_syncobj_timeline_array s = {
        .handles = (uintptr_t)&handle, .points = (uintptr_t)&point, .count_handles = 1,
    };

    return ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &s) ? errno : 0;
}

/* The kernel's own wait: 0, or ETIME when the point has not signalled. */
static int raw_wait_now(int fd, UINT handle, UINT64 point)
{
    struct drm_syncobj_timeline_wait w = {
        .handles = (uintptr_t)&handle, .points = (uintptr_t)&point, .timeout_nsec = 0, .count_handles = 1,
        .flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
    };

    return ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w) ? errno : 0;
}

static void assert_destroyed(int fd, UINT handle)
{
    ck_assert_msg(drm_test_syncobj_destroy_errno(fd, handle) == EINVAL, "syncobj %u is still alive on fd %d",
                  handle, fd);
}

static NTSTATUS submit(D3DKMT_HANDLE context, const void *cmds, UINT length, KMT_DRM_SUBMIT *priv)
{
    return drm_test_submit(context, (D3DGPU_VIRTUAL_ADDRESS)(uintptr_t)cmds, length, priv);
}

/* ---- fences ------------------------------------------------------------------------- */

START_TEST(fence_backing_follows_the_kernel)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        bool backed = kernel_fences(&a[i]);
        KMT_DRM_STATS before = drm_test_stats(a[i].handle), after;
        KMT_DRM_FENCE_INFO info;
        struct kmt_fence f;

        ck_assert_uint_eq((a[i].umd.Caps & KMT_DRM_CAP_FENCES) != 0, backed);
        ck_assert_uint_eq((a[i].umd.Caps & KMT_DRM_CAP_SYNCOBJ_EVENTFD) != 0, backed);
        ck_assert_status(kmt_fence_create(device, 3, 0, &f), STATUS_SUCCESS);
        after = drm_test_stats(a[i].handle);
        ck_assert_uint_eq(after.Fences, before.Fences + backed);
        ck_assert_uint_eq(after.Syncobjs, before.Syncobjs + backed);
        /* the monitored fence works either way */
        ck_assert_uint_eq(*f.cpu, 3);
        ck_assert_uint_eq(f.gpu, 0);       /* no GPU VA behind this miniport */
        ck_assert_status(kmt_fence_signal(device, f.handle, 8, 0), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 8, 0), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 9, 10), STATUS_TIMEOUT);
        if (backed) {
            /* signalled before it was handed out: the kernel has it too */
            info = drm_test_export_fence(a[i].handle, f.handle);
            ck_assert_int_eq(info.Fd, a[i].umd.DrmFd);
            ck_assert_uint_eq(info.KernelValue, 8);
            ck_assert_uint_eq(drm_test_timeline_value(info.Fd, info.SyncobjHandle), 8);
            ck_assert_int_eq(raw_wait_now(info.Fd, info.SyncobjHandle, 8), 0);
            ck_assert_int_eq(raw_wait_now(info.Fd, info.SyncobjHandle, 9), ETIME);
        } else {
            ck_assert_status(drm_test_query_fence(a[i].handle, f.handle, &info), STATUS_INVALID_PARAMETER);
            ck_assert_uint_eq(info.SyncobjHandle, 0);
        }
        ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);
        if (backed)
            assert_destroyed(a[i].umd.DrmFd, info.SyncobjHandle);
        after = drm_test_stats(a[i].handle);
        ck_assert_uint_eq(after.Fences, before.Fences);
        ck_assert_uint_eq(after.Syncobjs, before.Syncobjs);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(cpu_signals_and_rewinds_move_the_timeline)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a), tested = 0;

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device;
        KMT_DRM_FENCE_INFO info;
        struct kmt_fence f;
        int fd = a[i].umd.DrmFd;

        if (!kernel_fences(&a[i]))
            continue;
        tested++;
        device = drm_test_create_device(a[i].handle);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        info = drm_test_export_fence(a[i].handle, f.handle);
        ck_assert_uint_eq(info.KernelValue, 0);
        ck_assert_status(kmt_fence_signal(device, f.handle, 10, 0), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_timeline_value(fd, info.SyncobjHandle), 10);
        /* lower without the flag: refused, nothing moves anywhere */
        ck_assert_status(kmt_fence_signal(device, f.handle, 4, 0), STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(*f.cpu, 10);
        ck_assert_uint_eq(drm_test_timeline_value(fd, info.SyncobjHandle), 10);
        /* a rewind restarts the timeline at the lower value */
        ck_assert_status(kmt_fence_signal(device, f.handle, 4, REWIND), STATUS_SUCCESS);
        ck_assert_uint_eq(*f.cpu, 4);
        ck_assert_uint_eq(drm_test_timeline_value(fd, info.SyncobjHandle), 4);
        ck_assert_int_eq(raw_wait_now(fd, info.SyncobjHandle, 4), 0);
        ck_assert_int_eq(raw_wait_now(fd, info.SyncobjHandle, 5), ETIME);
        ck_assert_status(kmt_fence_wait(device, f.handle, 5, 10), STATUS_TIMEOUT);
        ck_assert_status(kmt_fence_signal(device, f.handle, 6, 0), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_timeline_value(fd, info.SyncobjHandle), 6);
        /* rewinding to 0 empties it */
        ck_assert_status(kmt_fence_signal(device, f.handle, 0, REWIND), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_timeline_value(fd, info.SyncobjHandle), 0);
        ck_assert_uint_eq(*f.cpu, 0);
        drm_test_destroy_device(device);
        assert_destroyed(fd, info.SyncobjHandle);
    }
    ck_assert_msg(tested || !getenv("KMTSHIM_DRM_EXPECT"), "no adapter with timeline syncobjs in the lane");
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct waiter {
    D3DKMT_HANDLE device, fence;
    UINT64 value;
    _Atomic NTSTATUS status;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;

    atomic_store(&w->status, kmt_fence_wait(w->device, w->fence, w->value, KMT_EXEC_WAIT_MS));
    return NULL;
}

static void start_waiter(struct waiter *w, pthread_t *t)
{
    atomic_store(&w->status, STATUS_PENDING);
    ck_assert_int_eq(pthread_create(t, NULL, wait_thread, w), 0);
    kmt_sleep_ms(50);
    ck_assert_uint_eq(atomic_load(&w->status), STATUS_PENDING);
}

START_TEST(waiter_thread_woken_by_a_cpu_signal)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        struct waiter w = { .device = device, .value = 3 };
        struct kmt_fence f;
        pthread_t t;

        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        w.fence = f.handle;
        start_waiter(&w, &t);
        ck_assert_status(kmt_fence_signal(device, f.handle, 2, 0), STATUS_SUCCESS);
        kmt_sleep_ms(20);
        ck_assert_uint_eq(atomic_load(&w.status), STATUS_PENDING);
        ck_assert_status(kmt_fence_signal(device, f.handle, 3, 0), STATUS_SUCCESS);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_status(atomic_load(&w.status), STATUS_SUCCESS);
        if (kernel_fences(&a[i]))
            ck_assert_uint_eq(drm_test_export_fence(a[i].handle, f.handle).KernelValue, 3);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Someone else signals the syncobj in the kernel (here: this test, with
 * the raw ioctl): the watcher raises the core's value and wakes waiters. */
START_TEST(kernel_signal_wakes_a_waiter)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device;
        KMT_DRM_FENCE_INFO info;
        struct waiter w = { .value = 9 };
        struct kmt_fence f;
        pthread_t t;

        if (!kernel_fences(&a[i]))
            continue;
        device = w.device = drm_test_create_device(a[i].handle);
        ck_assert_status(kmt_fence_create(device, 1, 0, &f), STATUS_SUCCESS);
        info = drm_test_export_fence(a[i].handle, f.handle);
        w.fence = f.handle;
        start_waiter(&w, &t);
        ck_assert_int_eq(raw_signal(info.Fd, info.SyncobjHandle, 5), 0);
        for (int ms = 0; ms < KMT_EXEC_WAIT_MS && *f.cpu != 5; ms++)
            kmt_sleep_ms(1);
        ck_assert_uint_eq(*f.cpu, 5);        /* raised, not enough for the waiter */
        ck_assert_uint_eq(atomic_load(&w.status), STATUS_PENDING);
        ck_assert_int_eq(raw_signal(info.Fd, info.SyncobjHandle, 12), 0);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_status(atomic_load(&w.status), STATUS_SUCCESS);
        ck_assert_uint_eq(*f.cpu, 12);
        /* and again: the watcher re-armed itself */
        ck_assert_int_eq(raw_signal(info.Fd, info.SyncobjHandle, 13), 0);
        ck_assert_status(kmt_fence_wait(device, f.handle, 13, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        assert_destroyed(info.Fd, info.SyncobjHandle);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct racer {
    D3DKMT_HANDLE device, fence;
    const volatile UINT64 *value;        /* the fence's CPU view, for the CPU racer */
    int fd;
    UINT syncobj;
    unsigned rounds;
    bool kernel;                         /* raw ioctls on the syncobj, else D3DKMT */
    int failures;
};

static _Atomic unsigned racers_done;

static void *race_thread(void *arg)
{
    struct racer *r = arg;

    for (unsigned i = 1; i <= r->rounds; i++) {
        UINT64 v = 2 * i - (r->kernel ? 0 : 1);   /* CPU: odd values, kernel: even */
        if (r->kernel)
            r->failures += raw_signal(r->fd, r->syncobj, v) != 0;
        else {
            NTSTATUS status = kmt_fence_signal(r->device, r->fence, v, 0);
            /* refused only when the kernel's signals already took the fence past v */
            r->failures += status != STATUS_SUCCESS && !(status == STATUS_INVALID_PARAMETER && *r->value > v);
        }
    }
    atomic_fetch_add(&racers_done, 1);
    return NULL;
}

/* CPU signals and kernel signals of one fence interleave: its value only
 * ever rises, ends at the highest, and the kernel's timeline agrees. */
START_TEST(cpu_and_kernel_signals_race)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        struct racer cpu = { .rounds = 400 }, kernel = { .rounds = 400, .kernel = true };
        KMT_DRM_FENCE_INFO info;
        struct kmt_fence f;
        pthread_t t[2];
        UINT64 last = 0;

        if (!kernel_fences(&a[i]))
            continue;
        cpu.device = drm_test_create_device(a[i].handle);
        ck_assert_status(kmt_fence_create(cpu.device, 0, 0, &f), STATUS_SUCCESS);
        info = drm_test_export_fence(a[i].handle, f.handle);
        cpu.fence = f.handle;
        cpu.value = f.cpu;
        kernel.fd = info.Fd;
        kernel.syncobj = info.SyncobjHandle;
        atomic_store(&racers_done, 0);
        ck_assert_int_eq(pthread_create(&t[0], NULL, race_thread, &cpu), 0);
        ck_assert_int_eq(pthread_create(&t[1], NULL, race_thread, &kernel), 0);
        while (atomic_load(&racers_done) < 2) {
            UINT64 now = *f.cpu;
            ck_assert_msg(now >= last, "fence value fell from %llu to %llu", (unsigned long long)last,
                          (unsigned long long)now);
            last = now;
            sched_yield();
        }
        ck_assert_int_eq(pthread_join(t[0], NULL), 0);
        ck_assert_int_eq(pthread_join(t[1], NULL), 0);
        ck_assert_int_eq(cpu.failures, 0);
        ck_assert_int_eq(kernel.failures, 0);
        ck_assert_status(kmt_fence_wait(cpu.device, f.handle, 800, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_uint_eq(*f.cpu, 800);
        ck_assert_uint_eq(drm_test_timeline_value(info.Fd, info.SyncobjHandle), 800);
        ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);

        /* fences destroyed while the kernel side still signals them */
        for (unsigned k = 0; k < 20; k++) {
            ck_assert_status(kmt_fence_create(cpu.device, 0, 0, &f), STATUS_SUCCESS);
            info = drm_test_export_fence(a[i].handle, f.handle);
            kernel.syncobj = info.SyncobjHandle;
            kernel.rounds = 50;
            kernel.failures = 0;
            ck_assert_int_eq(pthread_create(&t[1], NULL, race_thread, &kernel), 0);
            ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);
            ck_assert_int_eq(pthread_join(t[1], NULL), 0);
        }
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);
        drm_test_destroy_device(cpu.device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(no_syncobj_outlives_its_fence)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        UINT handles[8];
        struct kmt_fence f[8];
        D3DKMT_HANDLE device;
        struct drm_syncobj_create c = { 0 };
        int fd = a[i].umd.DrmFd;

        if (!kernel_fences(&a[i]))
            continue;
        device = drm_test_create_device(a[i].handle);
        for (unsigned k = 0; k < 8; k++) {
            ck_assert_status(kmt_fence_create(device, k, 0, &f[k]), STATUS_SUCCESS);
            handles[k] = drm_test_export_fence(a[i].handle, f[k].handle).SyncobjHandle;
        }
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 8);
        for (unsigned k = 0; k < 4; k++)
            ck_assert_status(kmt_syncobj_destroy(f[k].handle), STATUS_SUCCESS);
        drm_test_destroy_device(device);    /* the other four */
        for (unsigned k = 0; k < 8; k++)
            assert_destroyed(fd, handles[k]);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Fences, 0);
        /* the kernel hands out the lowest free id: nothing is left below */
        ck_assert_int_eq(ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c), 0);
        ck_assert_uint_eq(c.handle, 1);
        ck_assert_int_eq(drm_test_syncobj_destroy_errno(fd, c.handle), 0);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(fence_faults_leave_nothing)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device;
        struct kmt_fence f;

        if (!kernel_fences(&a[i]))
            continue;
        device = drm_test_create_device(a[i].handle);
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_CREATE", 1, ENOMEM), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_NO_MEMORY);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        /* the initial value cannot be set: the syncobj made goes again */
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_TIMELINE_SIGNAL", 1, EINVAL), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_create(device, 7, 0, &f), STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Fences, 0);
        /* a failed mirror does not fail the signal: the core's value moves */
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_TIMELINE_SIGNAL", 1, ENOMEM), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_signal(device, f.handle, 2, 0), STATUS_SUCCESS);
        ck_assert_uint_eq(*f.cpu, 2);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        ck_assert_status(drm_test_set_fault(a[i].handle, "", 0, 0), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- contexts ------------------------------------------------------------------------- */

START_TEST(contexts_only_where_the_kernel_runs_commands)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_adapters(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        bool virgl = drm_test_virgl(&a[i]) && kernel_fences(&a[i]), makes = makes_contexts(&a[i]);
        /* i915 runs submissions where it has softpin (test_drm_i915_exec) */
        bool runs = virgl || (makes && !strcmp(a[i].umd.Family, "i915"));
        KMT_DRM_CONTEXT_DESC desc = { KMT_DRM_MAGIC, KMT_DRM_VERSION, 0xffff, 0xffff };
        D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
        D3DKMT_CREATECONTEXT cc = { 0 };
        UINT64 objects = KmtLiveObjectCount();
        KMT_DRM_STATS s;

        ck_assert_uint_eq((a[i].umd.Caps & KMT_DRM_CAP_SUBMIT) != 0, runs);
        cv.hDevice = cc.hDevice = device;
        cv.pPrivateDriverData = &desc;
        cv.PrivateDriverDataSize = sizeof(desc);
        if (!makes) {
            ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_NOT_SUPPORTED);
            ck_assert_status(D3DKMTCreateContext(&cc), STATUS_NOT_SUPPORTED);
            ck_assert_uint_eq(cv.hContext, 0);
            ck_assert_uint_eq(KmtLiveObjectCount(), objects);
            s = drm_test_stats(a[i].handle);
            ck_assert_uint_eq(s.Contexts, 0);
            ck_assert_uint_eq(s.Syncobjs, 0);
            drm_test_destroy_device(device);
            continue;
        }
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
        ck_assert_local_handle(cv.hContext);
        if (virgl)
            ck_assert_uint_eq(desc.KernelContext, 0);  /* virtio_gpu: the fd's own virgl context */
        else
            ck_assert_uint_ne(desc.KernelContext, 0);  /* amdgpu / i915 context ids start at 1 */
        ck_assert_uint_eq(desc.CanSubmit, runs);
        ck_assert_status(D3DKMTCreateContext(&cc), STATUS_SUCCESS);
        ck_assert_ptr_nonnull(cc.pCommandBuffer);
        ck_assert_uint_eq(cc.CommandBufferSize, 64 * 1024);
        ck_assert_uint_eq(cc.AllocationListSize, 256);
        s = drm_test_stats(a[i].handle);
        ck_assert_uint_eq(s.Contexts, 2);
        ck_assert_uint_eq(s.Syncobjs, 1);          /* the adapter's ring */
        /* context, its context allocation (the progress block) and handle */
        ck_assert_uint_gt(KmtLiveObjectCount(), objects);
        {
            KMT_DRM_CONTEXT_INFO info = drm_test_query_context(a[i].handle, device, cv.hContext);
            ck_assert_uint_ne(info.RingSyncobj, 0);
            ck_assert_uint_eq(info.RingKernelValue, 0);
            ck_assert_uint_eq(info.Submissions, 0);
            ck_assert_status(kmt_exec_destroy_context(cv.hContext), STATUS_SUCCESS);
            ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 1);
            ck_assert_status(kmt_exec_destroy_context(cc.hContext), STATUS_SUCCESS);
            /* the last context frees the ring */
            assert_destroyed(a[i].umd.DrmFd, info.RingSyncobj);
        }
        s = drm_test_stats(a[i].handle);
        ck_assert_uint_eq(s.Contexts, 0);
        ck_assert_uint_eq(s.Syncobjs, 0);
        ck_assert_uint_eq(KmtLiveObjectCount(), objects);
        /* a descriptor that is not ours is refused */
        desc.Magic = 0;
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- submission (a virgl host) ---------------------------------------------------------- */

START_TEST(virgl_submission_completes_and_fence_follows)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx = kmt_exec_virtual_context(device);
        KMT_DRM_CONTEXT_INFO info;
        KMT_DRM_FENCE_INFO fi;
        struct kmt_fence f;

        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        fi = drm_test_export_fence(a[i].handle, f.handle);
        ck_assert_status(submit(ctx, nop_stream, 4, NULL), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 1), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        info = drm_test_query_context(a[i].handle, device, ctx);
        /* the fence moved after the kernel signalled the submission's point */
        ck_assert_uint_eq(info.Submissions, 1);
        ck_assert_uint_eq(info.Faults, 0);
        ck_assert_uint_eq(info.SubmittedPoint, 1);
        ck_assert_uint_eq(info.CompletedPoint, 1);
        ck_assert_uint_ge(info.RingKernelValue, 1);
        ck_assert_uint_eq(info.LastFenceId, 1);
        ck_assert_uint_eq(drm_test_timeline_value(fi.Fd, fi.SyncobjHandle), 1);
        ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);

        /* many, in order, with the fence signalled after the last */
        for (unsigned k = 0; k < 40; k++)
            ck_assert_status(submit(ctx, nop_stream, 4 * (1 + k % 8), NULL), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 41), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 41, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        info = drm_test_query_context(a[i].handle, device, ctx);
        ck_assert_uint_eq(info.Submissions, 41);
        ck_assert_uint_eq(info.CompletedPoint, 41);
        ck_assert_uint_ge(info.RingKernelValue, 41);
        ck_assert_uint_eq(info.LastFenceId, 41);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Submissions, 0);
        ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        assert_destroyed(info.Fd, info.RingSyncobj);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* The submission's own out-syncobj signals the monitored fence: no CPU
 * signal in between, the watcher raises the value when the host is done. */
START_TEST(virgl_submission_signals_a_fence_itself)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx = kmt_exec_virtual_context(device);
        KMT_DRM_SUBMIT d = drm_test_submit_desc();
        KMT_DRM_ALLOCATION_DESC ad;
        KMT_DRM_FENCE_INFO in, out;
        struct kmt_fence fin, fout;
        struct waiter w = { .device = device, .value = 5 };
        D3DKMT_HANDLE alloc;
        pthread_t t;
        void *p;

        ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, &ad), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_create(device, 2, 0, &fin), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_create(device, 0, 0, &fout), STATUS_SUCCESS);
        in = drm_test_export_fence(a[i].handle, fin.handle);
        out = drm_test_export_fence(a[i].handle, fout.handle);
        w.fence = fout.handle;
        start_waiter(&w, &t);
        d.NumBoHandles = 1;
        d.BoHandles[0] = ad.GemHandle;
        d.NumWaits = 1;
        d.Waits[0].SyncobjHandle = in.SyncobjHandle;
        d.Waits[0].Point = 2;
        d.NumSignals = 1;
        d.Signals[0].SyncobjHandle = out.SyncobjHandle;
        d.Signals[0].Point = 5;
        ck_assert_status(submit(ctx, nop_stream, 8, &d), STATUS_SUCCESS);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_status(atomic_load(&w.status), STATUS_SUCCESS);
        ck_assert_uint_eq(*fout.cpu, 5);
        ck_assert_uint_eq(drm_test_timeline_value(out.Fd, out.SyncobjHandle), 5);
        /* the object it named was fenced by the kernel: Lock waits and works */
        ck_assert_status(drm_test_lock(device, alloc, 0, &p), STATUS_SUCCESS);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_query_context(a[i].handle, device, ctx).Faults, 0);

        /* the ring and anything not handed out cannot be named */
        d.Signals[0].SyncobjHandle = drm_test_query_context(a[i].handle, device, ctx).RingSyncobj;
        ck_assert_status(submit(ctx, nop_stream, 4, &d), STATUS_SUCCESS);
        drm_test_expect_fault(device, fout.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
        ck_assert_uint_eq(drm_test_query_context(a[i].handle, device, ctx).Faults, 1);
        drm_test_destroy_device(device);
        assert_destroyed(in.Fd, in.SyncobjHandle);
        assert_destroyed(out.Fd, out.SyncobjHandle);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A legacy Render of four virgl NOPs naming `count` entries of the context's
 * allocation list (filled by the caller), then a GPU signal of `f` to 1 and
 * the wait for it. */
static void render_nops_and_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE ctx, D3DKMT_CREATECONTEXT *cc,
                                 D3DKMT_RENDER *r, UINT count, const struct kmt_fence *f)
{
    memset(cc->pCommandBuffer, 0, 16);
    r->hContext = ctx;
    r->CommandLength = 16;
    r->AllocationCount = count;
    ck_assert_status(D3DKMTRender(r), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, f->handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f->handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
}

START_TEST(virgl_legacy_render_path)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        D3DKMT_CREATECONTEXT cc;
        D3DKMT_HANDLE ctx = kmt_exec_legacy_context(device, &cc);
        D3DKMT_RENDER r = { 0 };
        KMT_DRM_CONTEXT_INFO info;
        struct kmt_fence f;

        ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, NULL), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        cc.pAllocationList[0].hAllocation = alloc;
        cc.pAllocationList[0].WriteOperation = 1;
        render_nops_and_wait(device, ctx, &cc, &r, 1, &f);
        info = drm_test_query_context(a[i].handle, device, ctx);
        ck_assert_uint_eq(info.Submissions, 1);
        ck_assert_uint_eq(info.CompletedPoint, 1);
        /* no GPU addresses to patch here */
        r.PatchLocationCount = 1;
        ck_assert_status(D3DKMTRender(&r), STATUS_INVALID_PARAMETER);
        ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* An allocation list may name an object twice (read here, written there):
 * the kernel locks each object it is handed once and refuses a repeated
 * handle (EALREADY from the reservation lock), so it must reach the kernel
 * once. */
START_TEST(virgl_render_names_an_allocation_twice)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc[2];
        D3DKMT_CREATECONTEXT cc;
        D3DKMT_HANDLE ctx = kmt_exec_legacy_context(device, &cc);
        D3DKMT_RENDER r = { 0 };
        KMT_DRM_CONTEXT_INFO info;
        struct kmt_fence f;

        ck_assert_status(drm_test_create(device, 2, 4096, alloc, NULL, NULL), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        cc.pAllocationList[0].hAllocation = alloc[0];
        cc.pAllocationList[1].hAllocation = alloc[1];
        cc.pAllocationList[2].hAllocation = alloc[0];
        cc.pAllocationList[2].WriteOperation = 1;
        render_nops_and_wait(device, ctx, &cc, &r, 3, &f);
        info = drm_test_query_context(a[i].handle, device, ctx);
        ck_assert_uint_eq(info.Faults, 0);
        ck_assert_uint_eq(info.Submissions, 1);
        ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(virgl_bad_stream_address_page_faults)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx = kmt_exec_virtual_context(device);
        struct kmt_fence f;

        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        ck_assert_status(submit(ctx, nop_stream, 4, NULL), STATUS_SUCCESS);
        ck_assert_status(submit(ctx, (const void *)(uintptr_t)0x1000, 64, NULL), STATUS_SUCCESS);
        /* the device faults: its fences jump to the maximum */
        drm_test_expect_page_fault(device, f.handle, 0x1000);
        ck_assert_status(submit(ctx, nop_stream, 4, NULL), STATUS_DEVICE_REMOVED);
        ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Submissions, 0);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(virgl_destroy_device_with_work_in_flight)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx[2];
        UINT ring, fences[2];
        struct kmt_fence f[2];
        KMT_DRM_STATS s;

        ctx[0] = kmt_exec_virtual_context(device);
        ctx[1] = kmt_exec_virtual_context(device);
        for (unsigned k = 0; k < 2; k++) {
            ck_assert_status(kmt_fence_create(device, 0, 0, &f[k]), STATUS_SUCCESS);
            fences[k] = drm_test_export_fence(a[i].handle, f[k].handle).SyncobjHandle;
        }
        ring = drm_test_query_context(a[i].handle, device, ctx[0]).RingSyncobj;
        for (unsigned k = 0; k < 30; k++) {
            ck_assert_status(submit(ctx[k % 2], nop_stream, sizeof(nop_stream), NULL), STATUS_SUCCESS);
            ck_assert_status(kmt_gpu_signal(ctx[k % 2], f[k % 2].handle, k + 1), STATUS_SUCCESS);
        }
        ck_assert_status(kmt_gpu_wait(ctx[0], f[1].handle, 1000), STATUS_SUCCESS); /* never signalled */
        drm_test_destroy_device(device);
        s = drm_test_stats(a[i].handle);
        ck_assert_uint_eq(s.Contexts, 0);
        ck_assert_uint_eq(s.Submissions, 0);
        ck_assert_uint_eq(s.Fences, 0);
        ck_assert_uint_eq(s.Syncobjs, 0);
        assert_destroyed(a[i].umd.DrmFd, ring);
        assert_destroyed(a[i].umd.DrmFd, fences[0]);
        assert_destroyed(a[i].umd.DrmFd, fences[1]);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- copy-backed existing-sysmem allocations ------------------------------------ */

#define VIRGL_CCMD_RESOURCE_COPY_REGION 17u
#define ROW 4096u                        /* the miniport's resources: one page a row, B8G8R8X8 */

/* virgl's RESOURCE_COPY_REGION of the first `rows` rows: header, then the
 * destination (resource, level, x, y, z) and the source (resource, level,
 * x, y, z, w, h, d). */
static UINT copy_stream(UINT32 *s, UINT dst, UINT src, UINT rows)
{
    const UINT32 cmd[14] = {
        VIRGL_CCMD_RESOURCE_COPY_REGION | 13u << 16, dst, 0, 0, 0, 0, src, 0, 0, 0, 0, ROW / 4, rows, 1,
    };

    memcpy(s, cmd, sizeof(cmd));
    return sizeof(cmd);
}

/* Every fourth byte is the X of B8G8R8X8, which a copy may set to 0xff. */
static void pattern(void *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        ((unsigned char *)p)[i] = i % 4 == 3 ? 0xff : (unsigned char)(i * 13 + seed);
}

static bool has_pattern(const void *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        if (((const unsigned char *)p)[i] != (i % 4 == 3 ? 0xff : (unsigned char)(i * 13 + seed)))
            return false;
    return true;
}

/* signal: a handed-out fence's syncobj the submission signals itself (0: none) */
static NTSTATUS submit_copy(D3DKMT_HANDLE ctx, const KMT_DRM_ALLOCATION_INFO *dst,
                            const KMT_DRM_ALLOCATION_INFO *src, UINT rows, UINT signal, UINT64 point)
{
    static UINT32 stream[14];
    KMT_DRM_SUBMIT d = drm_test_submit_desc();
    UINT length = copy_stream(stream, dst->ResourceId, src->ResourceId, rows);

    d.NumSignals = signal != 0;
    d.Signals[0].SyncobjHandle = signal;
    d.Signals[0].Point = point;
    d.NumBoHandles = 2;
    d.BoHandles[0] = dst->GemHandle;
    d.BoHandles[1] = src->GemHandle;
    return submit(ctx, stream, length, &d);
}

/* Fresh pages (two rows of pattern 1, returned) under a copy-backed
 * allocation, and a plain allocation of the same size. */
static unsigned char *copy_pair_create(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, D3DKMT_HANDLE *hsys,
                                       KMT_DRM_ALLOCATION_INFO *sys, D3DKMT_HANDLE *hplain,
                                       KMT_DRM_ALLOCATION_INFO *plain)
{
    unsigned char *mem = mmap(NULL, 2 * ROW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(mem, MAP_FAILED);
    pattern(mem, 2 * ROW, 1);
    ck_assert_status(drm_test_create_sysmem(device, mem, 2 * ROW, hsys), STATUS_SUCCESS);
    ck_assert_status(drm_test_create(device, 1, 2 * ROW, hplain, NULL, NULL), STATUS_SUCCESS);
    *sys = drm_test_query(adapter, *hsys);
    *plain = drm_test_query(adapter, *hplain);
    ck_assert_uint_eq(sys->Backing, KMT_DRM_BACKING_COPY);
    return mem;
}

/* Long enough for the GPU to finish a small copy under the emulator. */
#define RECORDING_STALL_MS 300

/* The GPU copies `plain` (filled with pattern `seed`) over copy-backed
 * `sys` (the caller's `mem`) and signals a handed-out fence itself, the
 * submitter stalled `stall_ms` once the kernel has it: when the program sees
 * the fence page move, the copy is in its pages. */
static void own_fence_shows_write_back(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, D3DKMT_HANDLE ctx,
                                       D3DKMT_HANDLE hplain, const KMT_DRM_ALLOCATION_INFO *sys,
                                       const KMT_DRM_ALLOCATION_INFO *plain, const unsigned char *mem,
                                       unsigned seed, int stall_ms)
{
    struct kmt_fence out;
    void *p;

    ck_assert_status(drm_test_lock(device, hplain, 0, &p), STATUS_SUCCESS);
    pattern(p, 2 * ROW, seed);
    ck_assert_status(drm_test_unlock(device, hplain), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &out), STATUS_SUCCESS);
    if (stall_ms)
        ck_assert_status(drm_test_set_fault(adapter, "submitted", 1, -stall_ms), STATUS_SUCCESS);
    ck_assert_status(submit_copy(ctx, sys, plain, 2, drm_test_export_fence(adapter, out.handle).SyncobjHandle, 1),
                     STATUS_SUCCESS);
    for (unsigned spins = 0; *out.cpu < 1; spins++) {
        ck_assert_msg(spins < 10000000, "the submission's fence never moved (stall %d ms)", stall_ms);
        sched_yield();
    }
    /* satisfied at once; it orders the reads below for ThreadSanitizer,
     * which cannot see through the fence page's second mapping */
    ck_assert_status(kmt_fence_wait(device, out.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_msg(has_pattern(mem, 2 * ROW, seed), "the fence moved before the GPU's writes were back (stall %d ms)",
                  stall_ms);
}

/* The GPU sees the caller's pages as they are at each submission, and what
 * it writes there reaches them before a fence signalled after it; bytes it
 * did not write keep what the CPU put there meanwhile; a destroyed
 * allocation's pages are never written again. */
START_TEST(virgl_copy_backed_sysmem_follows_submissions)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx = kmt_exec_virtual_context(device);
        KMT_DRM_ALLOCATION_INFO sys, plain;
        D3DKMT_HANDLE hsys, hplain;
        struct kmt_fence f;
        unsigned char *mem;
        void *p;

        mem = copy_pair_create(a[i].handle, device, &hsys, &sys, &hplain, &plain);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);

        /* written by the CPU after creation: the GPU reads the new contents */
        pattern(mem, 2 * ROW, 2);
        ck_assert_status(submit_copy(ctx, &plain, &sys, 2, 0, 0), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 1), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device, hplain, 0, &p), STATUS_SUCCESS);
        ck_assert_msg(has_pattern(p, 2 * ROW, 2), "the GPU read a stale copy of the caller's pages");
        pattern(p, 2 * ROW, 3);
        ck_assert_status(drm_test_unlock(device, hplain), STATUS_SUCCESS);
        ck_assert_msg(has_pattern(mem, 2 * ROW, 2), "a read-only use wrote the caller's pages");

        /* the GPU writes the first row; the CPU writes the second meanwhile */
        ck_assert_status(submit_copy(ctx, &sys, &plain, 1, 0, 0), STATUS_SUCCESS);
        memset(mem + ROW, 0x5a, ROW);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 2), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 2, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_msg(has_pattern(mem, ROW, 3), "the GPU's writes did not reach the caller's pages");
        for (unsigned k = ROW; k < 2 * ROW; k++)
            ck_assert_uint_eq(mem[k], 0x5a);

        /* the submission signals a handed-out fence itself: once the program
         * can read the new value, the data is in its pages; the same when
         * the kernel completes the submission before the miniport recorded
         * it (the stall hook holds the submitter between the two while the
         * GPU finishes: the race a loaded machine hits) */
        own_fence_shows_write_back(a[i].handle, device, ctx, hplain, &sys, &plain, mem, 4, 0);
        own_fence_shows_write_back(a[i].handle, device, ctx, hplain, &sys, &plain, mem, 5, RECORDING_STALL_MS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);

        /* destroyed and unmapped while the GPU writes it: nothing touches
         * the pages (a write-back would fault here), the object goes once
         * the submission completed */
        ck_assert_status(submit_copy(ctx, &sys, &plain, 2, 0, 0), STATUS_SUCCESS);
        ck_assert_status(drm_test_destroy(device, &hsys, 1), STATUS_SUCCESS);
        ck_assert_int_eq(munmap(mem, 2 * ROW), 0);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 3), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 3, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_int_eq(drm_test_gem_close_errno(sys.Fd, sys.GemHandle), EINVAL);
        ck_assert_uint_eq(drm_test_query_context(a[i].handle, device, ctx).Faults, 0);
        ck_assert_status(drm_test_destroy(device, &hplain, 1), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Buffers, 0);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A write-back the kernel refuses (the read from the host fails): the
 * GPU's results cannot reach the caller's pages, and the program learns it
 * as lost work, a DMA fault of the submission's device. */
START_TEST(virgl_lost_write_back_faults_the_device)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx = kmt_exec_virtual_context(device);
        KMT_DRM_ALLOCATION_INFO sys, plain;
        D3DKMT_HANDLE hsys, hplain;
        struct kmt_fence f;
        unsigned char *mem;
        NTSTATUS signal;

        mem = copy_pair_create(a[i].handle, device, &hsys, &sys, &hplain, &plain);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);

        ck_assert_status(drm_test_set_fault(a[i].handle, "VIRTGPU_TRANSFER_FROM_HOST", 1, EIO), STATUS_SUCCESS);
        ck_assert_status(submit_copy(ctx, &sys, &plain, 2, 0, 0), STATUS_SUCCESS);
        signal = kmt_gpu_signal(ctx, f.handle, 1);       /* refused once the fault is in */
        ck_assert_msg(signal == STATUS_SUCCESS || signal == STATUS_DEVICE_REMOVED, "GPU signal: %#x",
                      (unsigned)signal);
        ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
        ck_assert_msg(has_pattern(mem, 2 * ROW, 1), "a failed write-back wrote the caller's pages");
        ck_assert_status(drm_test_destroy(device, &hsys, 1), STATUS_SUCCESS);
        ck_assert_status(drm_test_destroy(device, &hplain, 1), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        ck_assert_int_eq(munmap(mem, 2 * ROW), 0);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Buffers, 0);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A legacy Render names its objects through the allocation list: a
 * copy-backed one written by the GPU there shows it in the caller's pages. */
START_TEST(virgl_render_writes_copy_backed_sysmem)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), hsys, hplain;
        D3DKMT_CREATECONTEXT cc;
        D3DKMT_HANDLE ctx = kmt_exec_legacy_context(device, &cc);
        KMT_DRM_ALLOCATION_INFO sys, plain;
        D3DKMT_RENDER r = { 0 };
        struct kmt_fence f;
        void *mem, *p;

        ck_assert_int_eq(posix_memalign(&mem, ROW, 2 * ROW), 0);
        pattern(mem, 2 * ROW, 7);
        ck_assert_status(drm_test_create_sysmem(device, mem, 2 * ROW, &hsys), STATUS_SUCCESS);
        ck_assert_status(drm_test_create(device, 1, 2 * ROW, &hplain, NULL, NULL), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device, hplain, 0, &p), STATUS_SUCCESS);
        pattern(p, 2 * ROW, 8);
        ck_assert_status(drm_test_unlock(device, hplain), STATUS_SUCCESS);
        sys = drm_test_query(a[i].handle, hsys);
        plain = drm_test_query(a[i].handle, hplain);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        ck_assert_uint_ge(cc.AllocationListSize, 2);
        r.CommandLength = copy_stream(cc.pCommandBuffer, sys.ResourceId, plain.ResourceId, 2);
        cc.pAllocationList[0].hAllocation = hsys;
        cc.pAllocationList[0].WriteOperation = 1;
        cc.pAllocationList[1].hAllocation = hplain;
        r.hContext = ctx;
        r.AllocationCount = 2;
        ck_assert_status(D3DKMTRender(&r), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 1), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_msg(has_pattern(mem, 2 * ROW, 8), "the Render's writes did not reach the caller's pages");
        ck_assert_uint_eq(drm_test_query_context(a[i].handle, device, ctx).Faults, 0);
        drm_test_destroy_device(device);
        free(mem);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(virgl_kernel_faults)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx;
        D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
        struct kmt_fence f, e;
        KMT_DRM_SUBMIT d;

        /* no ring, no context */
        cv.hDevice = device;
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_CREATE", 1, ENOMEM), STATUS_SUCCESS);
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_NO_MEMORY);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Contexts, 0);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);

        /* a registration the watcher cannot make: it polls, nothing is lost */
        ctx = kmt_exec_virtual_context(device);
        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_EVENTFD", 1, ENOMEM), STATUS_SUCCESS);
        ck_assert_status(submit(ctx, nop_stream, 4, NULL), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 1), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);

        /* the watcher's reading of the ring fails once (its registration
         * fired and is gone): it polls until a reading works, and the
         * completion arrives, not a TDR */
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_QUERY", 1, EIO), STATUS_SUCCESS);
        ck_assert_status(submit(ctx, nop_stream, 4, NULL), STATUS_SUCCESS);
        ck_assert_status(kmt_gpu_signal(ctx, f.handle, 2), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, 2, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
        ck_assert_uint_eq(*f.cpu, 2);

        /* the same for a handed-out fence the submission signals itself:
         * its reading fails, the fence still rises */
        ck_assert_status(kmt_fence_create(device, 0, 0, &e), STATUS_SUCCESS);
        d = drm_test_submit_desc();
        d.NumSignals = 1;
        d.Signals[0].SyncobjHandle = drm_test_export_fence(a[i].handle, e.handle).SyncobjHandle;
        d.Signals[0].Point = 1;
        ck_assert_status(drm_test_set_fault(a[i].handle, "SYNCOBJ_QUERY", 1, EIO), STATUS_SUCCESS);
        ck_assert_status(submit(ctx, nop_stream, 4, &d), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, e.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
        ck_assert_uint_eq(*e.cpu, 1);

        /* the kernel refuses a submission: a DMA fault, in order */
        ck_assert_status(drm_test_set_fault(a[i].handle, "VIRTGPU_EXECBUFFER", 1, EINVAL), STATUS_SUCCESS);
        ck_assert_status(submit(ctx, nop_stream, 4, NULL), STATUS_SUCCESS);
        drm_test_expect_fault(device, f.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
        ck_assert_uint_eq(drm_test_query_context(a[i].handle, device, ctx).Faults, 1);
        drm_test_destroy_device(device);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Submissions, 0);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A failure injected at the 1st, 2nd, ... DRM call of a submission that
 * signals a handed-out fence itself, followed by a GPU signal, until one
 * runs clean: whichever call fails (the submission, the ring's
 * registration, the watcher's readings and registrations, the fence
 * mirror), both fences arrive without a TDR, the device is ACTIVE or, when
 * the kernel refused the submission, faulted by it, and nothing is left. */
START_TEST(virgl_every_exec_call_fails_cleanly)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n = open_virgl(a);

    for (unsigned i = 0; i < n; i++) {
        bool clean = false;

        for (unsigned nth = 1; !clean; nth++) {
            D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), ctx = kmt_exec_virtual_context(device);
            D3DKMT_DEVICEEXECUTION_STATE state;
            KMT_DRM_SUBMIT d = drm_test_submit_desc();
            NTSTATUS signal;
            struct kmt_fence f, e;

            ck_assert_uint_le(nth, 64);
            ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
            ck_assert_status(kmt_fence_create(device, 0, 0, &e), STATUS_SUCCESS);
            d.NumSignals = 1;
            d.Signals[0].SyncobjHandle = drm_test_export_fence(a[i].handle, e.handle).SyncobjHandle;
            d.Signals[0].Point = 1;
            ck_assert_status(drm_test_set_fault(a[i].handle, "any", nth, EIO), STATUS_SUCCESS);
            ck_assert_status(submit(ctx, nop_stream, 4, &d), STATUS_SUCCESS);
            /* a refused submission faults the device before the call returns:
             * it takes no more work, and its fences jump to the maximum */
            signal = kmt_gpu_signal(ctx, f.handle, 1);
            ck_assert_msg(signal == STATUS_SUCCESS || (signal == STATUS_DEVICE_REMOVED &&
                                                       kmt_exec_state(device) == D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT),
                          "failing DRM call %u: the GPU signal returned %#x", nth, (unsigned)signal);
            ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
            ck_assert_status(kmt_fence_wait(device, e.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
            clean = drm_test_stats(a[i].handle).FaultsFired == 0;
            ck_assert_status(drm_test_set_fault(a[i].handle, "", 0, 0), STATUS_SUCCESS);
            state = kmt_exec_state(device);
            ck_assert_msg(state == D3DKMT_DEVICEEXECUTION_ACTIVE ||
                              (state == D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT &&
                               drm_test_query_context(a[i].handle, device, ctx).Faults == 1),
                          "failing DRM call %u left the device in state %d", nth, state);
            if (clean)
                ck_assert_int_eq(state, D3DKMT_DEVICEEXECUTION_ACTIVE);
            drm_test_destroy_device(device);
            ck_assert_uint_eq(drm_test_stats(a[i].handle).Syncobjs, 0);
            ck_assert_uint_eq(drm_test_stats(a[i].handle).Submissions, 0);
        }
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_exec");
    TCase *fences = tcase_create("fences");
    TCase *exec = tcase_create("exec");

    tcase_set_timeout(fences, 60);
    tcase_add_test(fences, fence_backing_follows_the_kernel);
    tcase_add_test(fences, cpu_signals_and_rewinds_move_the_timeline);
    tcase_add_test(fences, waiter_thread_woken_by_a_cpu_signal);
    tcase_add_test(fences, kernel_signal_wakes_a_waiter);
    tcase_add_test(fences, cpu_and_kernel_signals_race);
    tcase_add_test(fences, no_syncobj_outlives_its_fence);
    tcase_add_test(fences, fence_faults_leave_nothing);
    suite_add_tcase(s, fences);

    tcase_set_timeout(exec, 60);
    tcase_add_test(exec, contexts_only_where_the_kernel_runs_commands);
    tcase_add_test(exec, virgl_submission_completes_and_fence_follows);
    tcase_add_test(exec, virgl_submission_signals_a_fence_itself);
    tcase_add_test(exec, virgl_legacy_render_path);
    tcase_add_test(exec, virgl_render_names_an_allocation_twice);
    tcase_add_test(exec, virgl_bad_stream_address_page_faults);
    tcase_add_test(exec, virgl_destroy_device_with_work_in_flight);
    tcase_add_test(exec, virgl_kernel_faults);
    tcase_add_test(exec, virgl_lost_write_back_faults_the_device);
    tcase_add_test(exec, virgl_every_exec_call_fails_cleanly);
    tcase_add_test(exec, virgl_copy_backed_sysmem_follows_submissions);
    tcase_add_test(exec, virgl_render_writes_copy_backed_sysmem);
    suite_add_tcase(s, exec);
    return kmt_test_run(s);
}
