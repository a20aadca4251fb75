/*
 * The core's side of miniport-backed monitored fences (KmtDdiCreateFence,
 * KmtDdiSignalFence, KmtDdiDestroyFence, d3dkmddi.h 1.2).
 *
 * "fencedrv" is a test miniport: the software miniport plus the three fence
 * DDIs, which record every call.  Its "hardware" can signal a fence the way
 * the DRM miniport's watcher does: raise *pValue with a compare-and-swap,
 * then DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED with no lock held.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "exec_util.h"

#define MAX_FENCES 16
#define MAX_SIGNALS 64
#define FENCE_MAGIC 0x65636e46u          /* "Fnce" */

struct test_fence {
    UINT magic;
    _Atomic UINT64 *value;
    UINT64 initial;
    UINT64 signals[MAX_SIGNALS];         /* SignalFence values, in order */
    UINT64 stored[MAX_SIGNALS];          /* *pValue when each came */
    unsigned nsignals;
    unsigned destroyed;
};

static DRIVER_INITIALIZATION_DATA soft;
static DXGKRNL_INTERFACE core;

static struct {
    struct test_fence fences[MAX_FENCES];
    unsigned nfences;
    NTSTATUS create_status;              /* CreateFence fails with it when set */
    bool memory_only;                    /* CreateFence succeeds with NULL */
    unsigned creates;                    /* CreateFence calls, failed ones too */
    unsigned bad_destroys;               /* DestroyFence of an unknown or dead fence */
    /* SignalFence of this fence posts `stalled` and waits for `resume`
     * (the core holds the fence's lock meanwhile) */
    struct test_fence *stall;
    sem_t stalled, resume;
    pthread_mutex_t lock;
} mp = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct test_fence *known(HANDLE h)
{
    for (unsigned i = 0; i < mp.nfences; i++)
        if ((HANDLE)&mp.fences[i] == h && mp.fences[i].magic == FENCE_MAGIC)
            return &mp.fences[i];
    return NULL;
}

static NTSTATUS APIENTRY fd_create_fence(HANDLE hAdapter, KMTARG_CREATEFENCE *args)
{
    struct test_fence *f;

    pthread_mutex_lock(&mp.lock);
    mp.creates++;
    if (mp.create_status || mp.memory_only || mp.nfences == MAX_FENCES) {
        NTSTATUS status = mp.create_status;
        pthread_mutex_unlock(&mp.lock);
        args->hDriverFence = NULL;
        return status;
    }
    f = &mp.fences[mp.nfences++];
    memset(f, 0, sizeof(*f));
    f->magic = FENCE_MAGIC;
    f->value = args->pValue;
    f->initial = args->InitialValue;
    args->hDriverFence = f;
    pthread_mutex_unlock(&mp.lock);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY fd_signal_fence(HANDLE hAdapter, HANDLE hDriverFence, UINT64 value)
{
    struct test_fence *f;

    pthread_mutex_lock(&mp.lock);
    if ((f = known(hDriverFence)) && !f->destroyed && f->nsignals < MAX_SIGNALS) {
        f->signals[f->nsignals] = value;
        f->stored[f->nsignals++] = atomic_load(f->value);
    }
    pthread_mutex_unlock(&mp.lock);
    if (f && f == mp.stall) {
        mp.stall = NULL;
        sem_post(&mp.stalled);
        while (sem_wait(&mp.resume))
            ;
    }
    return f ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static void APIENTRY fd_destroy_fence(HANDLE hAdapter, HANDLE hDriverFence)
{
    struct test_fence *f;

    pthread_mutex_lock(&mp.lock);
    if (!(f = known(hDriverFence)) || f->destroyed)
        mp.bad_destroys++;
    else
        f->destroyed++;
    pthread_mutex_unlock(&mp.lock);
}

static NTSTATUS APIENTRY fd_start_device(PVOID ctx, DXGK_START_INFO *start, DXGKRNL_INTERFACE *iface,
                                         ULONG *sources, ULONG *children)
{
    core = *iface;
    return soft.DxgkDdiStartDevice(ctx, start, iface, sources, children);
}

static void fencedrv_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiStartDevice = fd_start_device;
    ddi->KmtDdiCreateFence = fd_create_fence;
    ddi->KmtDdiSignalFence = fd_signal_fence;
    ddi->KmtDdiDestroyFence = fd_destroy_fence;
}

/* The "hardware" signals: raise the value, never lower it, then interrupt. */
static void hw_signal(struct test_fence *f, UINT64 value)
{
    UINT64 cur = atomic_load(f->value);
    DXGKARGCB_NOTIFY_INTERRUPT_DATA irq = { .InterruptType = DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED };

    while (value > cur && !atomic_compare_exchange_weak(f->value, &cur, value))
        ;
    core.DxgkCbNotifyInterrupt(core.DeviceHandle, &irq);
}

/* ---- the test side ----------------------------------------------------------- */

static D3DKMT_HANDLE adapter, device;

static void use_fencedrv(void)
{
    pthread_mutex_lock(&mp.lock);
    memset(mp.fences, 0, sizeof(mp.fences));
    mp.nfences = mp.creates = mp.bad_destroys = 0;
    mp.create_status = STATUS_SUCCESS;
    mp.memory_only = false;
    pthread_mutex_unlock(&mp.lock);
    kmt_test_register_soft_variant("fencedrv", fencedrv_patch, &soft);
    kmt_test_use_miniport("fencedrv");
    device = kmt_test_create_device(&adapter);
    ck_assert_ptr_nonnull(core.DxgkCbNotifyInterrupt);
}

static struct test_fence *last_fence(void)
{
    ck_assert_uint_ge(mp.nfences, 1);
    return &mp.fences[mp.nfences - 1];
}

static void expect_signals(const struct test_fence *f, const UINT64 *values, unsigned n)
{
    ck_assert_uint_eq(f->nsignals, n);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_eq(f->signals[i], values[i]);
        /* the core stores first, then tells the miniport */
        ck_assert_uint_eq(f->stored[i], values[i]);
    }
}

START_TEST(create_passes_the_value_slot)
{
    struct kmt_fence k;
    struct test_fence *f;

    use_fencedrv();
    ck_assert_status(kmt_fence_create(device, 0x123456789ull, 0, &k), STATUS_SUCCESS);
    f = last_fence();
    ck_assert_uint_eq(mp.creates, 1);
    ck_assert_uint_eq(f->initial, 0x123456789ull);
    ck_assert_ptr_nonnull(f->value);
    ck_assert_uint_eq(atomic_load(f->value), 0x123456789ull);
    /* pValue is the slot the program reads through its CPU VA */
    atomic_store(f->value, 0x42);
    ck_assert_uint_eq(*k.cpu, 0x42);
    ck_assert_uint_eq(f->nsignals, 0);
    ck_assert_status(kmt_syncobj_destroy(k.handle), STATUS_SUCCESS);
    ck_assert_uint_eq(f->destroyed, 1);
    ck_assert_uint_eq(mp.bad_destroys, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(other_types_get_no_driver_fence)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    use_fencedrv();
    info.Type = D3DDDI_SEMAPHORE;
    info.Semaphore.MaxCount = 2;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    memset(&info, 0, sizeof(info));
    info.Type = D3DDDI_FENCE;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    ck_assert_uint_eq(mp.creates, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(cpu_signals_reach_the_miniport)
{
    static const UINT64 expected[] = { 5, 9, 3, 4, UINT64_MAX - 1 };
    struct kmt_fence k;
    struct test_fence *f;

    use_fencedrv();
    ck_assert_status(kmt_fence_create(device, 1, 0, &k), STATUS_SUCCESS);
    f = last_fence();
    ck_assert_status(kmt_fence_signal(device, k.handle, 5, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, k.handle, 9, 0), STATUS_SUCCESS);
    /* an equal value changes nothing, a lower one is refused: no call */
    ck_assert_status(kmt_fence_signal(device, k.handle, 9, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, k.handle, 2, 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(*k.cpu, 9);
    /* a rewind is a lower value, with the flag */
    ck_assert_status(kmt_fence_signal(device, k.handle, 3, 4 /* AllowFenceRewind */), STATUS_SUCCESS);
    ck_assert_uint_eq(*k.cpu, 3);
    /* the flag with the same value is no change; with a higher one, a signal */
    ck_assert_status(kmt_fence_signal(device, k.handle, 3, 4), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, k.handle, 4, 4), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, k.handle, UINT64_MAX - 1, 0), STATUS_SUCCESS);
    expect_signals(f, expected, 5);
    ck_assert_status(kmt_syncobj_destroy(k.handle), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(scheduled_signals_reach_the_miniport)
{
    static const UINT64 expected[] = { 7, 8 };
    struct kmt_fence k;
    struct test_fence *f;
    D3DKMT_HANDLE ctx;

    use_fencedrv();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_SUCCESS);
    f = last_fence();
    ck_assert_status(kmt_gpu_signal(ctx, k.handle, 7), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, k.handle, 8), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, k.handle, 8, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    expect_signals(f, expected, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_device_destroys_driver_fences)
{
    struct kmt_fence a, b;
    D3DKMT_DESTROYDEVICE dd;

    use_fencedrv();
    ck_assert_status(kmt_fence_create(device, 0, 0, &a), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &b), STATUS_SUCCESS);
    ck_assert_uint_eq(mp.nfences, 2);
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    ck_assert_uint_eq(mp.fences[0].destroyed, 1);
    ck_assert_uint_eq(mp.fences[1].destroyed, 1);
    ck_assert_uint_eq(mp.bad_destroys, 0);
    ck_assert_status(kmt_syncobj_destroy(a.handle), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_failure_fails_the_fence)
{
    struct kmt_fence k;

    use_fencedrv();
    mp.create_status = STATUS_NO_MEMORY;
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_NO_MEMORY);
    mp.create_status = STATUS_INSUFFICIENT_RESOURCES;
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_INSUFFICIENT_RESOURCES);
    ck_assert_uint_eq(mp.creates, 2);
    ck_assert_uint_eq(mp.nfences, 0);
    mp.create_status = STATUS_SUCCESS;
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_SUCCESS);
    ck_assert_uint_eq(mp.bad_destroys, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(null_driver_fence_is_memory_only)
{
    struct kmt_fence k;
    DXGKARGCB_GETHANDLEDATA q = { 0 };

    use_fencedrv();
    mp.memory_only = true;
    ck_assert_status(kmt_fence_create(device, 2, 0, &k), STATUS_SUCCESS);
    ck_assert_uint_eq(mp.creates, 1);
    ck_assert_status(kmt_fence_signal(device, k.handle, 6, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, k.handle, 6, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*k.cpu, 6);
    q.hObject = k.handle;
    q.Type = DXGK_HANDLE_KMT_FENCE;
    ck_assert_ptr_null(core.DxgkCbGetHandleData(&q));
    ck_assert_status(kmt_syncobj_destroy(k.handle), STATUS_SUCCESS);
    ck_assert_uint_eq(mp.bad_destroys, 0);    /* no Signal or Destroy of NULL */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(handle_data_finds_the_driver_fence)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    DXGKARGCB_GETHANDLEDATA q = { 0 };
    struct kmt_fence k;
    D3DKMT_HANDLE sem;

    use_fencedrv();
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_SUCCESS);
    q.hObject = k.handle;
    q.Type = DXGK_HANDLE_KMT_FENCE;
    ck_assert_ptr_eq(core.DxgkCbGetHandleData(&q), last_fence());
    info.Type = D3DDDI_SEMAPHORE;
    info.Semaphore.MaxCount = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &sem), STATUS_SUCCESS);
    q.hObject = sem;
    ck_assert_ptr_null(core.DxgkCbGetHandleData(&q));
    q.hObject = device;
    ck_assert_ptr_null(core.DxgkCbGetHandleData(&q));
    q.hObject = 0x40001fc0;
    ck_assert_ptr_null(core.DxgkCbGetHandleData(&q));
    ck_assert_status(kmt_syncobj_destroy(k.handle), STATUS_SUCCESS);
    q.hObject = k.handle;
    ck_assert_ptr_null(core.DxgkCbGetHandleData(&q));
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct waiter {
    D3DKMT_HANDLE fence;
    UINT64 value;
    NTSTATUS status;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;

    w->status = kmt_fence_wait(device, w->fence, w->value, KMT_EXEC_WAIT_MS);
    return NULL;
}

START_TEST(hardware_signal_wakes_a_cpu_waiter)
{
    struct waiter w = { .value = 11, .status = STATUS_PENDING };
    struct kmt_fence k;
    struct test_fence *f;
    pthread_t t;

    use_fencedrv();
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_SUCCESS);
    f = last_fence();
    w.fence = k.handle;
    ck_assert_int_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
    kmt_sleep_ms(50);
    ck_assert_uint_eq(w.status, STATUS_PENDING);
    hw_signal(f, 10);                      /* not enough */
    kmt_sleep_ms(20);
    ck_assert_uint_eq(w.status, STATUS_PENDING);
    hw_signal(f, 12);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_status(w.status, STATUS_SUCCESS);
    ck_assert_uint_eq(*k.cpu, 12);
    /* the hardware's signals are not echoed back to it */
    ck_assert_uint_eq(f->nsignals, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct any_waiter {
    D3DKMT_HANDLE fences[2];
    NTSTATUS status;
};

static void *wait_any_thread(void *arg)
{
    struct any_waiter *w = arg;
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU wait = { 0 };
    UINT64 values[2] = { 100, 100 };

    wait.hDevice = device;
    wait.ObjectCount = 2;
    wait.ObjectHandleArray = w->fences;
    wait.FenceValueArray = values;
    wait.Flags.WaitAny = 1;
    w->status = KmtWaitForSynchronizationObjectFromCpuTimeout(&wait, KMT_EXEC_WAIT_MS);
    return NULL;
}

static void *signal_thread(void *arg)
{
    struct kmt_fence *k = arg;

    kmt_fence_signal(device, k->handle, 1, 0);
    return NULL;
}

/* A wait on A and B ends (A is destroyed) while a signal of B holds B's
 * lock.  The waiter unlinks from A, then waits for B's lock; the signal
 * then looks at every waiter of B, the ended wait included, and reads A's
 * value: A must still be alive (a sanitizer build sees the read).  The
 * DDI's stall holds the signal there. */
START_TEST(signal_reads_no_fence_freed_by_an_ending_wait)
{
    struct any_waiter w = { .status = STATUS_PENDING };
    struct kmt_fence a, b;
    pthread_t waiter, signaler;

    use_fencedrv();
    ck_assert_int_eq(sem_init(&mp.stalled, 0, 0), 0);
    ck_assert_int_eq(sem_init(&mp.resume, 0, 0), 0);
    ck_assert_status(kmt_fence_create(device, 0, 0, &a), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &b), STATUS_SUCCESS);
    w.fences[0] = a.handle;
    w.fences[1] = b.handle;
    ck_assert_int_eq(pthread_create(&waiter, NULL, wait_any_thread, &w), 0);
    kmt_sleep_ms(50);                      /* linked to both */
    mp.stall = last_fence();
    ck_assert_int_eq(pthread_create(&signaler, NULL, signal_thread, &b), 0);
    ck_assert_int_eq(sem_wait(&mp.stalled), 0);
    ck_assert_status(kmt_syncobj_destroy(a.handle), STATUS_SUCCESS);
    kmt_sleep_ms(50);                      /* A dropped, the waiter blocked on B's lock */
    sem_post(&mp.resume);
    ck_assert_int_eq(pthread_join(signaler, NULL), 0);
    ck_assert_int_eq(pthread_join(waiter, NULL), 0);
    ck_assert_status(w.status, STATUS_ABANDONED);
    ck_assert_uint_eq(*b.cpu, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(cpu_signal_never_lowers_a_hardware_value)
{
    static const UINT64 expected[] = { 30 };
    struct kmt_fence k;
    struct test_fence *f;

    use_fencedrv();
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_SUCCESS);
    f = last_fence();
    hw_signal(f, 20);
    /* below what the hardware reached: refused, as any lower value */
    ck_assert_status(kmt_fence_signal(device, k.handle, 15, 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(*k.cpu, 20);
    ck_assert_status(kmt_fence_signal(device, k.handle, 30, 0), STATUS_SUCCESS);
    expect_signals(f, expected, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(device_fault_signals_max)
{
    static const UINT64 expected[] = { 1, UINT64_MAX };
    struct kmt_fence k, keep;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx;

    use_fencedrv();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &k), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0x40 /* NoSignalMaxValueOnTdr */, &keep), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, k.handle, 1, 0), STATUS_SUCCESS);
    kmt_ring_create(device, 4096, &ring);
    kmt_cmds_init(&cmds);
    kmt_cmd_raw(&cmds, 0x7777, 16);        /* no such opcode: a DMA fault */
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, k.handle, UINT64_MAX, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    expect_signals(&mp.fences[0], expected, 2);
    ck_assert_uint_eq(mp.fences[1].nsignals, 0);
    ck_assert_uint_eq(*keep.cpu, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fence_ddi");
    TCase *tc = tcase_create("fence_ddi");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, create_passes_the_value_slot);
    tcase_add_test(tc, other_types_get_no_driver_fence);
    tcase_add_test(tc, cpu_signals_reach_the_miniport);
    tcase_add_test(tc, scheduled_signals_reach_the_miniport);
    tcase_add_test(tc, destroy_device_destroys_driver_fences);
    tcase_add_test(tc, create_failure_fails_the_fence);
    tcase_add_test(tc, null_driver_fence_is_memory_only);
    tcase_add_test(tc, handle_data_finds_the_driver_fence);
    tcase_add_test(tc, hardware_signal_wakes_a_cpu_waiter);
    tcase_add_test(tc, signal_reads_no_fence_freed_by_an_ending_wait);
    tcase_add_test(tc, cpu_signal_never_lowers_a_hardware_value);
    tcase_add_test(tc, device_fault_signals_max);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
