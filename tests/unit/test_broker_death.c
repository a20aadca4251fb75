/*
 * Shared objects whose broker died (SIGKILL) or hung (SIGSTOP): every
 * call on them that needs their session state fails with
 * STATUS_DEVICE_REMOVED within a bounded time, their destroy works, a
 * waiter blocked on one ends, an open across a broker restart fails, and
 * new objects work with the next broker; a call refused for its arguments
 * keeps its own status
 * (docs/architecture.md, "Sharing across processes").
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "broker_util.h"
#include "exec_util.h"
#include "peer_util.h"
#include "share_resource_util.h"
#include "shared_state_probe.h"
#include "dxgkrnl/sync.h"

#define GENERIC_ALL 0x10000000u
#define SHARED_NT 0x3u                   /* Flags.Shared | Flags.NtSecuritySharing */
#define TIMEOUT_MS 300                   /* KMTSHIM_BROKER_TIMEOUT_MS in these tests */
#define BOUND_MS 10000                   /* "bounded": the timeout, with room for a loaded machine */

static D3DKMT_HANDLE adapter, device;

static void setup(void)
{
    kmt_test_private_broker();
    setenv("KMTSHIM_BROKER_TIMEOUT_MS", "300", 1);
    setenv("KMTSHIM_BROKER_LINGER_MS", "60000", 1);   /* a stopped broker is still there after SIGCONT */
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
}

/* What the broker is made to do. */
enum fate { KILLED, HUNG };

/* Kills or stops the broker; a killed one is waited for. */
static pid_t break_broker(enum fate fate)
{
    pid_t pid = broker_stats().broker_pid;

    ck_assert_int_eq(kill(pid, fate == KILLED ? SIGKILL : SIGSTOP), 0);
    for (int i = 0; fate == KILLED && i < 10000 && process_exists(pid); i++)
        usleep(1000);
    return pid;
}

/* The broker's end of an NT handle is closed: its process's main thread
 * can be a zombie while other threads still hold its descriptors. */
static void wait_hung_up(int fd)
{
    struct pollfd p = { fd, POLLRDHUP, 0 };

    ck_assert_int_eq(poll(&p, 1, 10000), 1);
}

/* A stopped broker goes on and is then ended: it served nothing since. */
static void end_broker(enum fate fate, pid_t pid)
{
    if (fate == HUNG) {
        kill(pid, SIGCONT);
        kill(pid, SIGKILL);
        for (int i = 0; i < 10000 && process_exists(pid); i++)
            usleep(1000);
    }
}

static UINT64 now_ms(void)
{
    return kmt_test_now_ms();
}

static NTSTATUS share_objects(UINT count, const D3DKMT_HANDLE *objects, HANDLE *nt)
{
    return D3DKMTShareObjects(count, objects, NULL, GENERIC_ALL, nt);
}

static D3DKMT_HANDLE create_fence(UINT flags, D3DKMT_HANDLE *global)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.Flags.Value = flags;
    ck_assert_status(D3DKMTCreateSynchronizationObject2(&cs), STATUS_SUCCESS);
    if (global)
        *global = cs.Info.SharedHandle;
    return cs.hSyncObject;
}

static NTSTATUS destroy_syncobj(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };

    return D3DKMTDestroySynchronizationObject(&d);
}

static NTSTATUS signal_fence(D3DKMT_HANDLE h, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { .hDevice = device, .ObjectCount = 1,
                                                    .ObjectHandleArray = &h, .FenceValueArray = &value };

    return D3DKMTSignalSynchronizationObjectFromCpu(&s);
}

static NTSTATUS wait_fence(D3DKMT_HANDLE h, UINT64 value, int timeout_ms)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { .hDevice = device, .ObjectCount = 1,
                                                     .ObjectHandleArray = &h, .FenceValueArray = &value };

    return KmtWaitForSynchronizationObjectFromCpuTimeout(&w, timeout_ms);
}

static D3DKMT_HANDLE create_mutex(bool nt, D3DKMT_HANDLE *global)
{
    D3DKMT_CREATEKEYEDMUTEX2 c = { 0 };

    c.Flags.NtSecuritySharing = nt;
    ck_assert_status(D3DKMTCreateKeyedMutex2(&c), STATUS_SUCCESS);
    if (global)
        *global = c.hSharedHandle;
    return c.hKeyedMutex;
}

static NTSTATUS open_mutex(D3DKMT_HANDLE global, D3DKMT_HANDLE *h)
{
    D3DKMT_OPENKEYEDMUTEX o = { .hSharedHandle = global };
    NTSTATUS status = D3DKMTOpenKeyedMutex(&o);

    *h = o.hKeyedMutex;
    return status;
}

static NTSTATUS acquire(D3DKMT_HANDLE h, UINT64 key, LONGLONG timeout)
{
    LARGE_INTEGER t = { .QuadPart = timeout };
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = h, .Key = key, .pTimeout = &t };

    return D3DKMTAcquireKeyedMutex(&a);
}

static NTSTATUS release(D3DKMT_HANDLE h, UINT64 key)
{
    D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = h, .Key = key };

    return D3DKMTReleaseKeyedMutex(&r);
}

static NTSTATUS destroy_mutex(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { h };

    return D3DKMTDestroyKeyedMutex(&d);
}

static NTSTATUS update_runtime(D3DKMT_HANDLE resource)
{
    unsigned char desc[16] = { 0 };
    D3DKMT_ESCAPE e = { 0 };

    e.Type = D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE;
    e.hContext = resource;
    e.pPrivateDriverData = desc;
    e.PrivateDriverDataSize = sizeof(desc);
    return D3DKMTEscape(&e);
}

/* New objects, and sharing them, work with the broker up now. */
static void fresh_objects_work(void)
{
    struct share_test_resource r;
    D3DKMT_HANDLE fence = create_fence(SHARED_NT, NULL), opened, mutex;
    D3DKMT_HANDLE global;
    HANDLE nt;

    ck_assert_status(share_test_create(device, true, NULL, &r), STATUS_SUCCESS);
    ck_assert_status(share_objects(1, &r.resource, &nt), STATUS_SUCCESS);
    close((int)(intptr_t)nt);
    ck_assert_status(share_objects(1, &fence, &nt), STATUS_SUCCESS);
    close((int)(intptr_t)nt);
    mutex = create_mutex(false, &global);
    ck_assert_status(open_mutex(global, &opened), STATUS_SUCCESS);
    ck_assert_status(acquire(mutex, 0, -100000), STATUS_SUCCESS);
    ck_assert_status(release(mutex, 1), STATUS_SUCCESS);
    ck_assert_status(acquire(opened, 1, -100000), STATUS_SUCCESS);
    ck_assert_status(release(opened, 0), STATUS_SUCCESS);
    ck_assert_status(destroy_mutex(opened), STATUS_SUCCESS);
    ck_assert_status(destroy_mutex(mutex), STATUS_SUCCESS);
    ck_assert_status(destroy_syncobj(fence), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    ck_assert_uint_eq(broker_wait_objects(0).objects, 0);
}

/* ---- each kind of object ------------------------------------------------- */

START_TEST(resource_calls_fail_device_removed)
{
    enum fate fate = _i;
    struct share_test_resource r;
    UINT64 start;
    HANDLE nt;
    pid_t pid;

    ck_assert_status(share_test_create(device, true, NULL, &r), STATUS_SUCCESS);
    pid = break_broker(fate);
    kmt_test_capture_begin();
    start = now_ms();
    ck_assert_status(share_objects(1, &r.resource, &nt), STATUS_DEVICE_REMOVED);
    ck_assert_uint_lt(now_ms() - start, BOUND_MS);
    ck_assert_status(share_objects(1, &r.resource, &nt), STATUS_DEVICE_REMOVED);
    ck_assert_status(update_runtime(r.resource), STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    end_broker(fate, pid);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

START_TEST(sync_object_calls_fail_device_removed)
{
    enum fate fate = _i;
    D3DKMT_HANDLE fence = create_fence(SHARED_NT, NULL);
    UINT64 start;
    HANDLE nt;
    pid_t pid;

    ck_assert_status(signal_fence(fence, 1), STATUS_SUCCESS);
    pid = break_broker(fate);
    kmt_test_capture_begin();
    start = now_ms();
    ck_assert_status(share_objects(1, &fence, &nt), STATUS_DEVICE_REMOVED);
    ck_assert_uint_lt(now_ms() - start, BOUND_MS);
    ck_assert_status(signal_fence(fence, 2), STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_fence(fence, 1, 0), STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    end_broker(fate, pid);
    ck_assert_status(destroy_syncobj(fence), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

START_TEST(keyed_mutex_calls_fail_device_removed)
{
    enum fate fate = _i;
    D3DKMT_HANDLE global, h = create_mutex(false, &global), nt_mutex = create_mutex(true, NULL);
    struct share_test_resource r;
    D3DKMT_HANDLE three[3];
    HANDLE nt;
    pid_t pid;

    ck_assert_status(share_test_create(device, true, NULL, &r), STATUS_SUCCESS);
    three[0] = r.resource;
    three[1] = nt_mutex;
    three[2] = create_fence(SHARED_NT, NULL);
    pid = break_broker(fate);
    kmt_test_capture_begin();
    /* the first call that reaches the broker notices (the acquire alone
     * makes none); from then on the mutex is gone */
    ck_assert_status(share_objects(3, three, &nt), STATUS_DEVICE_REMOVED);
    ck_assert_status(acquire(h, 0, -100000), STATUS_DEVICE_REMOVED);
    ck_assert_status(release(h, 0), STATUS_DEVICE_REMOVED);
    ck_assert_status(acquire(nt_mutex, 0, -100000), STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    end_broker(fate, pid);
    ck_assert_status(destroy_mutex(h), STATUS_SUCCESS);
    ck_assert_status(destroy_mutex(nt_mutex), STATUS_SUCCESS);
    ck_assert_status(destroy_syncobj(three[2]), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

START_TEST(nt_handle_of_a_dead_broker_fails_device_removed)
{
    struct share_test_resource r, opened;
    D3DKMT_HANDLE fence = create_fence(SHARED_NT, NULL);
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o = { 0 };
    HANDLE nt_res, nt_fence;

    ck_assert_status(share_test_create(device, true, NULL, &r), STATUS_SUCCESS);
    ck_assert_status(share_objects(1, &r.resource, &nt_res), STATUS_SUCCESS);
    ck_assert_status(share_objects(1, &fence, &nt_fence), STATUS_SUCCESS);
    break_broker(KILLED);
    wait_hung_up((int)(intptr_t)nt_res);
    wait_hung_up((int)(intptr_t)nt_fence);
    kmt_test_capture_begin();
    ck_assert_status(share_test_open_nt(device, nt_res, &opened), STATUS_DEVICE_REMOVED);
    o.hNtHandle = nt_fence;
    o.hDevice = device;
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle2(&o), STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    close((int)(intptr_t)nt_res);
    close((int)(intptr_t)nt_fence);
    ck_assert_status(destroy_syncobj(fence), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

START_TEST(nt_handle_of_a_hung_broker_works_after_it_goes_on)
{
    struct share_test_resource r, opened;
    HANDLE nt;
    UINT64 start;
    pid_t pid;

    ck_assert_status(share_test_create(device, true, NULL, &r), STATUS_SUCCESS);
    ck_assert_status(share_objects(1, &r.resource, &nt), STATUS_SUCCESS);
    pid = break_broker(HUNG);
    kmt_test_capture_begin();
    start = now_ms();
    ck_assert_status(share_test_open_nt(device, nt, &opened), STATUS_IO_TIMEOUT);
    ck_assert_uint_lt(now_ms() - start, BOUND_MS);
    kmt_test_capture_end();
    /* the NT handle holds the object at the broker, not the connection */
    ck_assert_int_eq(kill(pid, SIGCONT), 0);
    ck_assert_status(share_test_open_nt(device, nt, &opened), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, opened.resource), STATUS_SUCCESS);
    close((int)(intptr_t)nt);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
    end_broker(HUNG, pid);
}
END_TEST

/* ---- waiters ---------------------------------------------------------------- */

struct waiter {
    D3DKMT_HANDLE h;
    bool fence;
    NTSTATUS status;
};

static void *waiter_thread(void *arg)
{
    struct waiter *w = arg;

    /* 30 s: far past the bound the test asserts */
    w->status = w->fence ? wait_fence(w->h, 100, 30000) : acquire(w->h, 1, -300000000ll);
    return NULL;
}

/* A waiter blocked while the broker dies ends with STATUS_DEVICE_REMOVED
 * in bounded time, not at its timeout: a holder (signaller) that died
 * after the broker would be noticed by nobody. */
START_TEST(blocked_waiter_ends_when_the_broker_dies)
{
    bool fence = _i;
    D3DKMT_HANDLE global, holder = 0, waited;
    struct waiter w = { 0 };
    pthread_t t;
    UINT64 start;

    if (fence) {
        waited = create_fence(SHARED_NT, NULL);
    } else {
        holder = create_mutex(false, &global);
        ck_assert_status(open_mutex(global, &waited), STATUS_SUCCESS);
        ck_assert_status(acquire(holder, 0, -100000), STATUS_SUCCESS);
    }
    w.h = waited;
    w.fence = fence;
    ck_assert_int_eq(pthread_create(&t, NULL, waiter_thread, &w), 0);
    usleep(200000);                      /* asleep by now, on a loaded machine or not */
    kmt_test_capture_begin();
    break_broker(KILLED);
    start = now_ms();
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_uint_lt(now_ms() - start, BOUND_MS);
    kmt_test_capture_end();
    ck_assert_status(w.status, STATUS_DEVICE_REMOVED);
    if (fence) {
        ck_assert_status(destroy_syncobj(waited), STATUS_SUCCESS);
    } else {
        ck_assert_status(destroy_mutex(waited), STATUS_SUCCESS);
        ck_assert_status(destroy_mutex(holder), STATUS_SUCCESS);
    }
    fresh_objects_work();
}
END_TEST

/* What the process learns of a stopped broker: a call that times out. */
static void notice_hung_broker(void)
{
    struct kmt_broker_stats stats;

    ck_assert_status(kmt_broker_query_stats(&stats), STATUS_IO_TIMEOUT);
}

/* An async CPU wait (an eventfd) on a shared fence whose broker died or
 * hung: nothing may ever signal the fence, so its event is set in bounded
 * time, and the next call on the fence sees the device removed. */
START_TEST(async_wait_ends_when_the_broker_dies)
{
    enum fate fate = _i;
    D3DKMT_HANDLE fence = create_fence(SHARED_NT, NULL);
    int ev = kmt_eventfd();
    UINT64 start;
    pid_t pid;

    ck_assert_status(kmt_fence_wait_or_event(device, fence, 1, kmt_event_handle(ev), 0), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(ev, 100));
    kmt_test_capture_begin();
    pid = break_broker(fate);
    if (fate == HUNG)
        notice_hung_broker();
    start = now_ms();
    ck_assert_msg(kmt_event_wait(ev, BOUND_MS), "the async wait did not end");
    ck_assert_uint_lt(now_ms() - start, BOUND_MS);
    ck_assert_status(wait_fence(fence, 1, 0), STATUS_DEVICE_REMOVED);
    ck_assert_status(kmt_fence_wait_or_event(device, fence, 1, kmt_event_handle(ev), 0),
                     STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    end_broker(fate, pid);
    close(ev);
    ck_assert_status(destroy_syncobj(fence), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

/* A shared object a GPU wait is blocked on: a mutex this process owns, a
 * semaphore with no count, a monitored or legacy fence below the value. */
static D3DKMT_HANDLE create_blocking(D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    info.Type = type;
    info.Flags.Shared = 1;
    if (type == D3DDDI_SEMAPHORE)
        info.Semaphore.MaxCount = 1;
    else if (type == D3DDDI_SYNCHRONIZATION_MUTEX)
        info.SynchronizationMutex.InitialState = TRUE;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    return h;
}

static NTSTATUS gpu_wait(D3DKMT_HANDLE ctx, D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, D3DKMT_HANDLE h)
{
    return type == D3DDDI_MONITORED_FENCE ? kmt_gpu_wait(ctx, h, 1) : kmt_wait2(ctx, h, 1);
}

static const D3DDDI_SYNCHRONIZATIONOBJECT_TYPE gpu_waited[] = {
    D3DDDI_SYNCHRONIZATION_MUTEX, D3DDDI_SEMAPHORE, D3DDDI_FENCE, D3DDDI_MONITORED_FENCE,
};

/* A GPU wait queued on a context and blocked on a shared object whose
 * broker dies is released, so the context's later work runs; queueing
 * another wait on the object then fails.  A CPU wait cannot block on a
 * mutex, semaphore or legacy fence (INVALID_PARAMETER, as on Windows):
 * a context's wait is the only one there is on them. */
START_TEST(gpu_wait_ends_when_the_broker_dies)
{
    D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type = gpu_waited[_i];
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(device), h = create_blocking(type);
    struct kmt_fence later;
    UINT64 start;

    ck_assert_status(kmt_fence_create(device, 0, 0, &later), STATUS_SUCCESS);
    if (type != D3DDDI_MONITORED_FENCE)
        ck_assert_status(wait_fence(h, 1, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(gpu_wait(ctx, type, h), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, later.handle, 1), STATUS_SUCCESS);
    ck_assert_msg(kmt_probe_gpu_blocked(h, BOUND_MS), "the GPU wait did not block");
    ck_assert_status(kmt_fence_wait(device, later.handle, 1, 0), STATUS_TIMEOUT);
    kmt_test_capture_begin();
    break_broker(KILLED);
    start = now_ms();
    ck_assert_status(kmt_fence_wait(device, later.handle, 1, BOUND_MS), STATUS_SUCCESS);
    ck_assert_uint_lt(now_ms() - start, BOUND_MS);
    ck_assert_status(gpu_wait(ctx, type, h), STATUS_DEVICE_REMOVED);
    if (type != D3DDDI_MONITORED_FENCE)
        ck_assert_status(wait_fence(h, 1, 0), STATUS_INVALID_PARAMETER);
    kmt_test_capture_end();
    ck_assert_status(destroy_syncobj(h), STATUS_SUCCESS);
    ck_assert_status(destroy_syncobj(later.handle), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

/* A shared mutex another process (legacy_sync_peer) holds. */
static D3DKMT_HANDLE create_held_elsewhere(struct kmt_test_peer *p)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    const char *args[] = { NULL, NULL };
    D3DKMT_HANDLE h;
    char global[32];

    info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    info.Flags.Shared = 1;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    snprintf(global, sizeof(global), "%#x", info.SharedHandle);
    args[0] = global;
    kmt_test_peer_start(p, "legacy_sync_peer", NULL, 0, args);
    ck_assert_str_eq(kmt_test_peer_line(p, "opened "), "0");
    ck_assert_int_eq(write(p->in, "wait 0\nprogress 1\n", 18), 18);
    ck_assert_str_eq(kmt_test_peer_line(p, "queued "), "1 0");
    ck_assert_str_eq(kmt_test_peer_line(p, "progress "), "0 1");
    return h;
}

/* wait(M), signal(M) on a context, M held by another process: once the
 * broker died the wait passes over M and takes nothing, so the signal
 * after it must not free the other process's hold. */
START_TEST(gpu_signal_after_a_passed_over_wait_keeps_another_hold)
{
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(device), h;
    struct dxgk_shared_fence_page *page;
    struct kmt_test_peer p;
    struct kmt_fence later;
    uint32_t held, now_held;

    h = create_held_elsewhere(&p);
    page = kmt_probe_page(h);
    ck_assert_ptr_nonnull(page);
    held = atomic_load(&page->holder);
    ck_assert_uint_ne(held, 0);
    ck_assert_uint_ne(held, kmt_broker_client_id());
    ck_assert_status(kmt_fence_create(device, 0, 0, &later), STATUS_SUCCESS);
    ck_assert_status(kmt_wait2(ctx, h, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_signal2(ctx, h, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, later.handle, 1), STATUS_SUCCESS);
    ck_assert_msg(kmt_probe_gpu_blocked(h, BOUND_MS), "the GPU wait did not block");
    kmt_test_capture_begin();
    break_broker(KILLED);
    ck_assert_status(kmt_fence_wait(device, later.handle, 1, BOUND_MS), STATUS_SUCCESS);
    now_held = atomic_load(&page->holder);
    kmt_test_capture_end();
    ck_assert_uint_eq(now_held, held);
    ck_assert_int_eq(kmt_test_peer_end(&p), 0);
    ck_assert_status(destroy_syncobj(h), STATUS_SUCCESS);
    ck_assert_status(destroy_syncobj(later.handle), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

/* ---- a link that ends as a GPU wait is judged ------------------------------- */

/* Linked with --wrap=dxgk_shared_state_ready (broker.mk): the scheduler
 * calls it for a shared mutex after it judged which objects of a wait are
 * gone.  The hook runs once there, in a judgement of a wait not marked
 * blocked (the watcher looks at a marked one's link anyway). */
bool __real_dxgk_shared_state_ready(struct dxgk_syncobj *obj, UINT64 wanted, UINT uses);
bool __wrap_dxgk_shared_state_ready(struct dxgk_syncobj *obj, UINT64 wanted, UINT uses);
static void (*_Atomic ready_hook)(void);

bool __wrap_dxgk_shared_state_ready(struct dxgk_syncobj *obj, UINT64 wanted, UINT uses)
{
    void (*hook)(void);

    if (atomic_load(&ready_hook) && !atomic_load(&obj->shared_fence->gpu_blocked) &&
        (hook = atomic_exchange(&ready_hook, NULL)))
        hook();
    return __real_dxgk_shared_state_ready(obj, wanted, uses);
}

static pid_t doomed;                     /* the broker drop_link kills */
static _Atomic bool link_dropped;

/* What a broker call of another thread would do right then: find the
 * broker dead and drop the connection (no asserts: the scheduler's thread). */
static void drop_link(void)
{
    uint64_t connection = kmt_broker_connection();

    kill(doomed, SIGKILL);
    for (int i = 0; i < 10000 && (process_exists(doomed) || !kmt_broker_connection_lost(connection)); i++)
        usleep(1000);
    atomic_store(&link_dropped, kmt_broker_connection() != connection);
}

/* The link ends after the scheduler judged a blocked wait's object not
 * gone and before it marked the wait blocked for the watcher: the wait
 * is still marked, the watcher finds the ended link, and the context's
 * later work runs.  The judgement is the one after another process took
 * the mutex over: the watcher cleared the mark then, and nothing else
 * kicks the scheduler after it. */
START_TEST(gpu_wait_ends_when_the_link_ends_as_it_is_judged)
{
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(device);
    D3DKMT_HANDLE h = create_blocking(D3DDDI_SYNCHRONIZATION_MUTEX);
    struct dxgk_shared_fence_page *page = kmt_probe_page(h);
    struct kmt_fence later;
    uint32_t me;

    ck_assert_ptr_nonnull(page);
    ck_assert_status(kmt_fence_create(device, 0, 0, &later), STATUS_SUCCESS);
    ck_assert_status(kmt_wait2(ctx, h, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, later.handle, 1), STATUS_SUCCESS);
    ck_assert_msg(kmt_probe_gpu_blocked(h, BOUND_MS), "the GPU wait did not block");
    me = atomic_load(&page->holder);
    doomed = broker_stats().broker_pid;
    atomic_store(&link_dropped, false);
    atomic_store(&ready_hook, drop_link);
    kmt_test_capture_begin();
    /* the watcher sees the move, clears the mark and has the wait judged
     * again; once more if the look that armed it saw the move first */
    for (uint32_t k = 1; atomic_load(&ready_hook) && k < 100; k++) {
        kmt_probe_store_holder(h, me + k);
        for (int ms = 0; atomic_load(&ready_hook) && ms < 100; ms++)
            usleep(1000);
    }
    ck_assert_status(kmt_fence_wait(device, later.handle, 1, BOUND_MS), STATUS_SUCCESS);
    ck_assert_msg(atomic_load(&link_dropped) && !atomic_load(&ready_hook),
                  "the link did not end as the wait was judged");
    ck_assert_status(kmt_wait2(ctx, h, 0), STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    ck_assert_status(destroy_syncobj(h), STATUS_SUCCESS);
    ck_assert_status(destroy_syncobj(later.handle), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

/* ---- a broker replaced while an object opens ---------------------------- */

/* Linked with --wrap=mmap (broker.mk): the hook runs once, on this thread,
 * at its next read-only shared mapping of a file; an open maps the
 * object's page that way after its broker call. */
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
static _Thread_local void (*mmap_hook)(void);

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    void (*hook)(void) = mmap_hook;

    if (hook && fd >= 0 && prot == PROT_READ && (flags & MAP_SHARED)) {
        mmap_hook = NULL;
        hook();
    }
    return __real_mmap(addr, len, prot, flags, fd, offset);
}

static bool replaced;

/* What another thread's broker call would do between the open's broker
 * call and the rest of it: find the broker dead and start the next. */
static void replace_broker(void)
{
    pid_t old = break_broker(KILLED);
    struct kmt_broker_stats stats;
    NTSTATUS status;
    int tries = 0;

    /* a call that still found the dead broker's socket open fails; the
     * next one connects to the broker it starts */
    while ((status = kmt_broker_query_stats(&stats)) && ++tries < 3)
        continue;
    replaced = !status && stats.broker_pid != (uint32_t)old;
}

/* Makes a shared mutex and opens it with `hook` run in the open after its
 * broker call; the open must fail with STATUS_DEVICE_REMOVED.  Returns
 * the mutex made. */
static D3DKMT_HANDLE open_while(void (*hook)(void))
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    cs.Info.Flags.Shared = 1;
    ck_assert_status(D3DKMTCreateSynchronizationObject2(&cs), STATUS_SUCCESS);
    o.hSharedHandle = cs.Info.SharedHandle;
    mmap_hook = hook;
    kmt_test_capture_begin();
    ck_assert_status(D3DKMTOpenSynchronizationObject(&o), STATUS_DEVICE_REMOVED);
    kmt_test_capture_end();
    return cs.hSyncObject;
}

/* The reference of an open went with its connection: a mutex that then
 * learned its holder id from the next connection would write an id whose
 * end never frees it, so the open fails. */
START_TEST(open_across_a_broker_restart_fails_device_removed)
{
    D3DKMT_HANDLE h;

    replaced = false;
    h = open_while(replace_broker);
    ck_assert_msg(replaced && !mmap_hook, "the broker was not replaced during the open");
    ck_assert_status(destroy_syncobj(h), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

static bool ended;

/* The same, with no next broker to start (its program is not there): the
 * broker is found dead and the connection dropped. */
static void end_broker_for_good(void)
{
    uint64_t connection = kmt_broker_connection();

    break_broker(KILLED);
    setenv("KMTSHIM_BROKER", "/nonexistent/kmtshim-broker", 1);
    for (int i = 0; i < 10000 && !kmt_broker_connection_lost(connection); i++)
        usleep(1000);
    ended = !kmt_broker_connection();
}

/* The open's connection is over and no broker can be reached: the object
 * went with the connection, as above, not "no broker". */
START_TEST(open_after_the_last_broker_died_fails_device_removed)
{
    char *broker = strdup(getenv("KMTSHIM_BROKER"));
    D3DKMT_HANDLE h;

    ended = false;
    h = open_while(end_broker_for_good);
    setenv("KMTSHIM_BROKER", broker, 1);
    free(broker);
    ck_assert_msg(ended && !mmap_hook, "the broker did not end during the open");
    ck_assert_status(destroy_syncobj(h), STATUS_SUCCESS);
    fresh_objects_work();
}
END_TEST

/* ---- what never reached the broker -------------------------------------- */

struct refused_share {
    D3DKMT_HANDLE object;
    NTSTATUS status;
};

/* ShareObjects with a name that starts with NUL, which the broker client
 * refuses before it sends anything. */
static void *share_with_empty_name(void *arg)
{
    struct refused_share *r = arg;
    WCHAR name[] = { 0, 'x' };
    UNICODE_STRING us = { sizeof(name), sizeof(name), name };
    OBJECT_ATTRIBUTES attrs = { .Length = sizeof(attrs), .ObjectName = &us };
    HANDLE nt = NULL;

    r->status = D3DKMTShareObjects(1, &r->object, &attrs, GENERIC_ALL, &nt);
    return NULL;
}

/* A call refused for its arguments before it reaches the broker keeps its
 * own status, also on a thread that never called the broker (no
 * connection of its own to compare): the object's connection is up. */
START_TEST(refused_before_the_broker_keeps_its_status)
{
    struct share_test_resource r;
    D3DKMT_HANDLE fence = create_fence(SHARED_NT, NULL);
    struct refused_share on[2];
    pthread_t t;

    ck_assert_status(share_test_create(device, true, NULL, &r), STATUS_SUCCESS);
    on[0] = (struct refused_share){ r.resource, STATUS_PENDING };
    on[1] = (struct refused_share){ fence, STATUS_PENDING };
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&t, NULL, share_with_empty_name, &on[i]), 0);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_status(on[i].status, STATUS_INVALID_PARAMETER);
        share_with_empty_name(&on[i]);   /* and on this thread, whose last call ran */
        ck_assert_status(on[i].status, STATUS_INVALID_PARAMETER);
    }
    ck_assert_status(destroy_syncobj(fence), STATUS_SUCCESS);
    ck_assert_status(share_test_destroy(device, r.resource), STATUS_SUCCESS);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("broker_death");
    TCase *tc = tcase_create("death");

    tcase_add_checked_fixture(tc, setup, teardown);
    /* _i: KILLED, HUNG */
    tcase_add_loop_test(tc, resource_calls_fail_device_removed, KILLED, HUNG + 1);
    tcase_add_loop_test(tc, sync_object_calls_fail_device_removed, KILLED, HUNG + 1);
    tcase_add_loop_test(tc, keyed_mutex_calls_fail_device_removed, KILLED, HUNG + 1);
    tcase_add_test(tc, nt_handle_of_a_dead_broker_fails_device_removed);
    tcase_add_test(tc, nt_handle_of_a_hung_broker_works_after_it_goes_on);
    /* _i: a keyed mutex, a shared fence */
    tcase_add_loop_test(tc, blocked_waiter_ends_when_the_broker_dies, 0, 2);
    tcase_add_loop_test(tc, async_wait_ends_when_the_broker_dies, KILLED, HUNG + 1);
    /* _i: an index in gpu_waited */
    tcase_add_loop_test(tc, gpu_wait_ends_when_the_broker_dies, 0, 4);
    tcase_add_test(tc, gpu_signal_after_a_passed_over_wait_keeps_another_hold);
    tcase_add_test(tc, gpu_wait_ends_when_the_link_ends_as_it_is_judged);
    tcase_add_test(tc, open_across_a_broker_restart_fails_device_removed);
    tcase_add_test(tc, open_after_the_last_broker_died_fails_device_removed);
    tcase_add_test(tc, refused_before_the_broker_keeps_its_status);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kmt_test_run(suite());
}
