/*
 * Mutexes, semaphores and legacy fences made with Flags.Shared are one
 * object across processes, as on Windows: GPU waits and signals in this
 * process and in a second program (legacy_sync_peer, started through
 * peer_util) change one state.  A semaphore signalled by the peer's GPU
 * releases a GPU wait here, a mutex goes back and forth, a legacy fence's
 * value is seen by both, concurrent signals from both processes never
 * push a semaphore past MaxCount, and a mutex whose owner is killed with
 * SIGKILL, or destroys its handle, goes to the next waiter.  A wait's end is seen through its
 * context's progress fence; a wait still blocked, through the mark the
 * scheduler of its process puts on the object (shared_state_probe.h).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_util.h"
#include "peer_util.h"
#include "shared_state_probe.h"
#include "broker/broker.h"

#define BOUND_MS 20000                   /* a bound on something that must happen, not a timing */
#define MAX_COUNT 4

static D3DKMT_HANDLE adapter, device, ctx;
static struct kmt_fence progress;        /* ctx signals it after each of its waits */
static UINT64 step;

static void setup(void)
{
    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &progress), STATUS_SUCCESS);
    step = 0;
}

/* A shared object; *global its global handle. */
static D3DKMT_HANDLE create(D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, UINT64 initial, D3DKMT_HANDLE *global)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    info.Type = type;
    info.Flags.Shared = 1;
    if (type == D3DDDI_SEMAPHORE) {
        info.Semaphore.MaxCount = MAX_COUNT;
        info.Semaphore.InitialCount = (UINT)initial;
    } else if (type == D3DDDI_FENCE) {
        info.Fence.FenceValue = initial;
    } else {
        info.SynchronizationMutex.InitialState = initial != 0;
    }
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    *global = info.SharedHandle;
    return h;
}

/* The shared page the object's state lives in. */
static struct dxgk_shared_fence_page *page_of(D3DKMT_HANDLE h)
{
    struct dxgk_shared_fence_page *page = kmt_probe_page(h);

    ck_assert_ptr_nonnull(page);
    return page;
}

/* Our context's GPU wait on h is blocked, `mine` not reached. */
static void blocked_here(D3DKMT_HANDLE h, UINT64 mine)
{
    ck_assert_msg(kmt_probe_gpu_blocked(h, BOUND_MS), "no GPU wait of ours blocked");
    ck_assert_uint_eq(*progress.cpu, mine - 1);
}

/* ctx waits for the object, then signals progress: the step it will reach. */
static UINT64 queue_wait(D3DKMT_HANDLE h, UINT64 value)
{
    ck_assert_status(kmt_wait2(ctx, h, value), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, progress.handle, ++step), STATUS_SUCCESS);
    return step;
}

static void reached(UINT64 s)
{
    ck_assert_status(kmt_fence_wait(device, progress.handle, s, BOUND_MS), STATUS_SUCCESS);
}

static void peer_start(struct kmt_test_peer *p, D3DKMT_HANDLE global)
{
    char arg[32];
    const char *args[] = { arg, NULL };

    snprintf(arg, sizeof(arg), "%#x", global);
    kmt_test_peer_start(p, "legacy_sync_peer", NULL, 0, args);
    ck_assert_str_eq(kmt_test_peer_line(p, "opened "), "0");
}

/* Sends a command; returns the answer after `prefix`. */
static char *peer_do(struct kmt_test_peer *p, const char *prefix, const char *fmt, unsigned long long a,
                     unsigned long long b)
{
    char cmd[64];
    int n = snprintf(cmd, sizeof(cmd), fmt, a, b);

    ck_assert_int_eq(write(p->in, cmd, n), n);
    return kmt_test_peer_line(p, prefix);
}

static void peer_reached(struct kmt_test_peer *p, UINT64 s)
{
    char expect[32];

    snprintf(expect, sizeof(expect), "0 %llu", (unsigned long long)s);
    ck_assert_str_eq(peer_do(p, "progress ", "progress %llu\n", s, 0), expect);
}

static void blocked_there(struct kmt_test_peer *p)
{
    ck_assert_str_eq(peer_do(p, "blocked ", "blocked\n", 0, 0), "1");
}

static void finish(struct kmt_test_peer *p, D3DKMT_HANDLE h)
{
    ck_assert_int_eq(kmt_test_peer_end(p), 0);
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}

START_TEST(semaphore_signalled_by_peer_releases_local_wait)
{
    D3DKMT_HANDLE global, sem;
    struct dxgk_shared_fence_page *page;
    struct kmt_test_peer p;
    UINT64 first, second;

    setup();
    sem = create(D3DDDI_SEMAPHORE, 1, &global);
    page = page_of(sem);
    first = queue_wait(sem, 0);          /* takes the one count */
    second = queue_wait(sem, 0);
    reached(first);
    peer_start(&p, global);
    blocked_here(sem, second);
    ck_assert_str_eq(peer_do(&p, "signalled ", "signal %llu\n", 0, 0), "0");
    reached(second);
    ck_assert_uint_eq(atomic_load(&page->value), 0);

    /* the peer opened it at count 0, not at the creator's 1: its wait blocks */
    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 0, 0), "1 0");
    blocked_there(&p);
    ck_assert_str_eq(peer_do(&p, "progress ", "progress %llu\n", 0, 0), "0 0");
    ck_assert_status(kmt_signal2(ctx, sem, 0), STATUS_SUCCESS);
    peer_reached(&p, 1);
    ck_assert_uint_eq(atomic_load(&page->value), 0);
    finish(&p, sem);
}
END_TEST

START_TEST(mutex_handed_between_processes)
{
    D3DKMT_HANDLE global, mutex;
    struct dxgk_shared_fence_page *page;
    struct kmt_test_peer p;
    UINT64 mine;

    setup();
    mutex = create(D3DDDI_SYNCHRONIZATION_MUTEX, 0, &global);
    page = page_of(mutex);
    reached(queue_wait(mutex, 0));
    ck_assert_uint_eq(atomic_load(&page->holder), kmt_broker_client_id());

    /* the peer's wait blocks while we own it, and takes it when we signal */
    peer_start(&p, global);
    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 0, 0), "1 0");
    blocked_there(&p);
    ck_assert_str_eq(peer_do(&p, "progress ", "progress %llu\n", 0, 0), "0 0");
    ck_assert_status(kmt_signal2(ctx, mutex, 0), STATUS_SUCCESS);
    peer_reached(&p, 1);
    ck_assert_uint_ne(atomic_load(&page->holder), 0);
    ck_assert_uint_ne(atomic_load(&page->holder), kmt_broker_client_id());

    /* and back */
    mine = queue_wait(mutex, 0);
    blocked_here(mutex, mine);
    ck_assert_str_eq(peer_do(&p, "signalled ", "signal %llu\n", 0, 0), "0");
    reached(mine);
    ck_assert_uint_eq(atomic_load(&page->holder), kmt_broker_client_id());
    finish(&p, mutex);
}
END_TEST

START_TEST(mutex_handle_destroyed_by_its_owner_frees_it)
{
    D3DKMT_HANDLE global, mutex;
    struct kmt_test_peer p;

    setup();
    mutex = create(D3DDDI_SYNCHRONIZATION_MUTEX, 0, &global);
    reached(queue_wait(mutex, 0));
    peer_start(&p, global);
    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 0, 0), "1 0");
    blocked_there(&p);
    ck_assert_status(kmt_syncobj_destroy(mutex), STATUS_SUCCESS);
    peer_reached(&p, 1);
    ck_assert_int_eq(kmt_test_peer_end(&p), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(mutex_created_owned_is_owned_everywhere)
{
    D3DKMT_HANDLE global, mutex;
    struct kmt_test_peer p;

    setup();
    mutex = create(D3DDDI_SYNCHRONIZATION_MUTEX, 1, &global);
    peer_start(&p, global);
    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 0, 0), "1 0");
    blocked_there(&p);
    ck_assert_status(kmt_signal2(ctx, mutex, 0), STATUS_SUCCESS);
    peer_reached(&p, 1);
    finish(&p, mutex);
}
END_TEST

START_TEST(legacy_fence_value_seen_by_both)
{
    D3DKMT_HANDLE global, fence;
    struct dxgk_shared_fence_page *page;
    struct kmt_test_peer p;
    UINT64 mine;

    setup();
    fence = create(D3DDDI_FENCE, 2, &global);
    page = page_of(fence);
    peer_start(&p, global);
    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 2, 0), "1 0");   /* the creator's value */
    peer_reached(&p, 1);

    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 5, 0), "2 0");
    blocked_there(&p);
    ck_assert_status(kmt_signal2(ctx, fence, 4), STATUS_SUCCESS);
    reached(queue_wait(fence, 4));       /* our signal of 4 is done */
    ck_assert_uint_eq(atomic_load(&page->value), 4);
    ck_assert_str_eq(peer_do(&p, "progress ", "progress %llu\n", 1, 0), "0 1");
    ck_assert_status(kmt_signal2(ctx, fence, 5), STATUS_SUCCESS);
    peer_reached(&p, 2);

    /* the peer's signal reaches our wait; a lower value never lowers it */
    mine = queue_wait(fence, 7);
    blocked_here(fence, mine);
    ck_assert_str_eq(peer_do(&p, "signalled ", "signal %llu\n", 7, 0), "0");
    reached(mine);
    ck_assert_str_eq(peer_do(&p, "signalled ", "signal %llu\n", 3, 0), "0");
    ck_assert_str_eq(peer_do(&p, "queued ", "mark\n", 0, 0), "3 0");
    peer_reached(&p, 3);
    ck_assert_uint_eq(atomic_load(&page->value), 7);
    reached(queue_wait(fence, 7));
    finish(&p, fence);
}
END_TEST

START_TEST(semaphore_concurrent_signals_stay_within_max)
{
    enum { SIGNALS = 200 };
    D3DKMT_HANDLE global, sem;
    struct dxgk_shared_fence_page *page;
    struct kmt_test_peer p;
    UINT64 last = 0;
    char cmd[32];
    int n;

    setup();
    sem = create(D3DDDI_SEMAPHORE, 0, &global);
    page = page_of(sem);
    peer_start(&p, global);
    /* both processes' contexts signal at once */
    n = snprintf(cmd, sizeof(cmd), "signals %d 0\n", SIGNALS);
    ck_assert_int_eq(write(p.in, cmd, n), n);
    for (int i = 0; i < SIGNALS; i++)
        ck_assert_status(kmt_signal2(ctx, sem, 0), STATUS_SUCCESS);
    ck_assert_str_eq(kmt_test_peer_line(&p, "signalled "), "0");
    /* a progress signal after them on each context: they are all done */
    ck_assert_str_eq(peer_do(&p, "queued ", "mark\n", 0, 0), "1 0");
    ck_assert_status(kmt_gpu_signal(ctx, progress.handle, ++step), STATUS_SUCCESS);
    peer_reached(&p, 1);
    reached(step);
    ck_assert_uint_eq(atomic_load(&page->value), MAX_COUNT);

    /* exactly MaxCount waits get through; the next blocks */
    for (int i = 0; i < MAX_COUNT; i++)
        last = queue_wait(sem, 0);
    reached(last);
    last = queue_wait(sem, 0);
    blocked_here(sem, last);
    ck_assert_uint_eq(atomic_load(&page->value), 0);
    ck_assert_str_eq(peer_do(&p, "signalled ", "signal %llu\n", 0, 0), "0");
    reached(last);
    finish(&p, sem);
}
END_TEST

START_TEST(mutex_owner_killed_goes_to_the_next_waiter)
{
    D3DKMT_HANDLE global, mutex;
    struct dxgk_shared_fence_page *page;
    struct kmt_test_peer p;
    UINT64 mine;
    int status;

    setup();
    mutex = create(D3DDDI_SYNCHRONIZATION_MUTEX, 0, &global);
    page = page_of(mutex);
    peer_start(&p, global);
    ck_assert_str_eq(peer_do(&p, "queued ", "wait %llu\n", 0, 0), "1 0");
    peer_reached(&p, 1);
    mine = queue_wait(mutex, 0);
    blocked_here(mutex, mine);

    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    status = kmt_test_peer_end(&p);
    ck_assert(WIFSIGNALED(status));
    reached(mine);                       /* the broker freed it for the dead owner */
    ck_assert_uint_eq(atomic_load(&page->holder), kmt_broker_client_id());
    ck_assert_status(kmt_syncobj_destroy(mutex), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("share_legacy_sync");
    TCase *tc = tcase_create("share_legacy_sync");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, semaphore_signalled_by_peer_releases_local_wait);
    tcase_add_test(tc, mutex_handed_between_processes);
    tcase_add_test(tc, mutex_handle_destroyed_by_its_owner_frees_it);
    tcase_add_test(tc, mutex_created_owned_is_owned_everywhere);
    tcase_add_test(tc, legacy_fence_value_seen_by_both);
    tcase_add_test(tc, semaphore_concurrent_signals_stay_within_max);
    tcase_add_test(tc, mutex_owner_killed_goes_to_the_next_waiter);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
