/*
 * A holder that dies, under Wine: the child opens a (resource, keyed
 * mutex, fence) share through an NT handle it takes with DuplicateHandle,
 * a second keyed mutex and a resource by the global handles on its
 * command line, and acquires both mutexes; then it is killed with
 * TerminateProcess while it waits on the fence (share_holder_killed), or
 * ExitProcess-es without destroying anything (share_holder_exits).
 *
 * The parent's next acquire of either mutex is STATUS_ABANDONED (Windows:
 * the waiter of a mutex whose owner went), the global handles are
 * STATUS_INVALID_PARAMETER once the parent's own handles go too, the
 * fence still works for the parent, and the broker's books are what they
 * were before the row.
 *
 * The fence paces the two: the child signals 1 (holding both mutexes),
 * waits on the CPU for 2, signals 3; the one that is killed then waits
 * with an event for 4, starts an event wait for 100, which never comes,
 * signals 5 and blocks on that event.
 * A child whose own checks failed signals HOLDER_FAILED instead of 1.
 */
#include <stdlib.h>
#include <string.h>

#include "conformance_share.h"

#define KILL_EXIT_CODE 0x4b1             /* TerminateProcess's */
#define HOLDER_FAILED 1000               /* the child's "my checks failed" */
#define PARENT_AFTER 7                   /* the parent's signal once the child is gone */

/* The child: argv = parent pid, the parent's NT handle of the bundle, the
 * keyed mutex's global handle, the resource's global handle, "kill" or
 * "exit". */
int kmtc_share_holder_child(int argc, char **argv)
{
    D3DKMT_HANDLE adapter, device, mutex_global, res_global, km2, res2 = 0, alloc2;
    D3DKMT_OPENKEYEDMUTEX okm = { 0 };
    struct share_opened o = { 0 };
    HANDLE mine, event;
    UINT64 fence = ~0ull;
    BOOL killed;

    if (argc != 5) {
        ok(FALSE, "holder: %d arguments\n", argc);
        return 1;
    }
    mutex_global = (D3DKMT_HANDLE)strtoul(argv[2], NULL, 16);
    res_global = (D3DKMT_HANDLE)strtoul(argv[3], NULL, 16);
    killed = !strcmp(argv[4], "kill");
    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return kmtw_failures();
    device = kmt_create_device(adapter);

    mine = share_take_from_parent(argv[0], argv[1]);
    expect_status(share_open_nt(device, mine, &o), STATUS_SUCCESS);
    CloseHandle(mine);
    ok(o.keyed_mutex && o.sync, "the bundle opened keyed mutex %#x, sync object %#x\n", o.keyed_mutex, o.sync);
    okm.hSharedHandle = mutex_global;
    expect_status(kmt_api.OpenKeyedMutex(&okm), STATUS_SUCCESS);
    km2 = okm.hKeyedMutex;
    expect_status(open_global(device, res_global, &res2, &alloc2), STATUS_SUCCESS);
    ok(res2 && !touch_words(device, alloc2, PATTERN_GLOBAL, FALSE), "holder: the global resource's bytes\n");
    expect_status(acquire_key(o.keyed_mutex, 0, &fence), STATUS_SUCCESS);
    expect_status(acquire_key(km2, 0, &fence), STATUS_SUCCESS);
    if (!o.sync)
        return kmtw_failures();

    expect_status(kmt_cpu_signal(device, o.sync, kmtw_failures() ? HOLDER_FAILED : 1), STATUS_SUCCESS);
    expect_status(kmt_cpu_wait(device, o.sync, 2, NULL), STATUS_SUCCESS);
    expect_status(kmt_cpu_signal(device, o.sync, 3), STATUS_SUCCESS);
    if (!killed)
        ExitProcess(kmtw_failures());    /* holding both mutexes, nothing destroyed */
    ok(wait_fence(device, o.sync, 4), "holder: the parent's signal of 4 never came\n");
    /* waiting for 100 before the parent sees 5: it is killed in the wait */
    event = CreateEventW(NULL, TRUE, FALSE, NULL);
    expect_status(kmt_cpu_wait(device, o.sync, 100, event), STATUS_SUCCESS);
    expect_status(kmt_cpu_signal(device, o.sync, kmtw_failures() ? HOLDER_FAILED : 5), STATUS_SUCCESS);
    WaitForSingleObject(event, INFINITE);
    ok(FALSE, "holder: the wait for 100 returned\n");
    return kmtw_failures();
}

/* OpenKeyedMutex of `global` until it is `want` (a success is destroyed
 * and asked again), for at most CHILD_TIMEOUT_MS. */
static NTSTATUS open_mutex_until(D3DKMT_HANDLE global, NTSTATUS want)
{
    D3DKMT_OPENKEYEDMUTEX o = { 0 };
    NTSTATUS status = STATUS_SUCCESS;

    for (unsigned ms = 0; ms < CHILD_TIMEOUT_MS; ms += 10) {
        o.hSharedHandle = global;
        o.hKeyedMutex = 0;
        if ((status = kmt_api.OpenKeyedMutex(&o)) == want)
            break;
        if (!status)
            destroy_keyed_mutex(o.hKeyedMutex);
        Sleep(10);
    }
    ok(!o.hKeyedMutex || !status, "a failed OpenKeyedMutex left hKeyedMutex %#x\n", o.hKeyedMutex);
    return status;
}

/* The parent's checks while the child holds both mutexes. */
static void expect_held(D3DKMT_HANDLE device, const struct share_bundle *b, D3DKMT_HANDLE km2,
                        D3DKMT_HANDLE res_global)
{
    D3DKMT_QUERYRESOURCEINFO q = { 0 };
    UINT64 fence = ~0ull;

    ok(*b->fence_value == 1, "the holder's fence value %llu, expected 1 (%u: its checks failed)\n",
       (unsigned long long)*b->fence_value, HOLDER_FAILED);
    expect_status(acquire_key_ms(b->keyed_mutex, 0, 10, &fence), STATUS_TIMEOUT);
    ok(fence == 0, "a timed-out acquire's FenceValue %llu\n", (unsigned long long)fence);
    expect_status(acquire_key_ms(km2, 0, 10, &fence), STATUS_TIMEOUT);
    /* the parent's resource is destroyed: the child's keeps the global handle */
    q.hDevice = device;
    q.hGlobalShare = res_global;
    expect_status(kmt_api.QueryResourceInfo(&q), STATUS_SUCCESS);
}

static void holder_rows(BOOL kill)
{
    D3DKMT_HANDLE adapter, device, res2, alloc2, res_global, other, other_alloc;
    D3DKMT_CREATEKEYEDMUTEX km = { 0 };
    struct share_broker_stats before;
    struct share_bundle b;
    PROCESS_INFORMATION pi;
    OBJECT_ATTRIBUTES attr;
    HANDLE event = NULL;
    UINT64 fence = ~0ull;
    DWORD code = ~0u;

    if (!share_broker_stats_before(&before) || !(adapter = kmt_open_soft_adapter(NULL)))
        return;
    device = kmt_create_device(adapter);
    if (!share_create_bundle(device, nt_attr_init(&attr, 0), &b))
        goto done;
    expect_status(kmt_api.CreateKeyedMutex(&km), STATUS_SUCCESS);
    expect_status(create_shared_resource(device, FALSE, &res2, &alloc2, &res_global), STATUS_SUCCESS);
    touch_words(device, alloc2, PATTERN_GLOBAL, TRUE);
    if (!share_start_child(&pi, FALSE, "holder", "%lu %llx %x %x %s", GetCurrentProcessId(),
                           (unsigned long long)(ULONG_PTR)b.nt, km.hSharedHandle, res_global,
                           kill ? "kill" : "exit")) {
        destroy_resource(device, res2);
        destroy_keyed_mutex(km.hKeyedMutex);
        goto done;
    }

    ok(wait_fence(device, b.fence, 1), "the holder never signalled 1\n");
    destroy_resource(device, res2);
    expect_held(device, &b, km.hKeyedMutex, res_global);
    if (kill) {
        /* a wait of the parent's that must outlive the child */
        event = CreateEventW(NULL, TRUE, FALSE, NULL);
        expect_status(kmt_cpu_wait(device, b.fence, PARENT_AFTER, event), STATUS_SUCCESS);
    }
    /* the signal wakes the child's CPU wait, then its event wait */
    expect_status(kmt_cpu_signal(device, b.fence, 2), STATUS_SUCCESS);
    ok(wait_fence(device, b.fence, 3), "the holder's CPU wait did not wake\n");
    if (kill) {
        expect_status(kmt_cpu_signal(device, b.fence, 4), STATUS_SUCCESS);
        ok(wait_fence(device, b.fence, 5), "the holder's event wait did not wake\n");
        ok(*b.fence_value == 5, "fence value %llu, expected 5\n", (unsigned long long)*b.fence_value);
        /* its wait for 100 is pending */
        ok(TerminateProcess(pi.hProcess, KILL_EXIT_CODE), "TerminateProcess failed: %lu\n", GetLastError());
        ok(WaitForSingleObject(pi.hProcess, CHILD_TIMEOUT_MS) == WAIT_OBJECT_0, "the holder did not end\n");
        GetExitCodeProcess(pi.hProcess, &code);
        ok(code == KILL_EXIT_CODE, "the killed holder's exit status %#lx\n", code);
        CloseHandle(pi.hProcess);
        CloseHandle(pi.hThread);
    } else {
        share_end_child(&pi, 0);
    }

    /* the owner went: both mutexes are abandoned, for every acquire after */
    expect_status(acquire_key(b.keyed_mutex, 0, &fence), STATUS_ABANDONED);
    ok(fence == 0, "abandoned: FenceValue %llu\n", (unsigned long long)fence);
    expect_status(acquire_key(km.hKeyedMutex, 0, &fence), STATUS_ABANDONED);
    expect_status(acquire_key_ms(km.hKeyedMutex, 5, 10, &fence), STATUS_ABANDONED);
    /* the fence outlives the child's waits */
    if (kill) {
        expect_status(kmt_cpu_signal(device, b.fence, PARENT_AFTER), STATUS_SUCCESS);
        ok(WaitForSingleObject(event, CHILD_TIMEOUT_MS) == WAIT_OBJECT_0, "the parent's wait was not satisfied\n");
        ok(*b.fence_value == PARENT_AFTER, "fence value %llu\n", (unsigned long long)*b.fence_value);
        CloseHandle(event);
    }
    ok(wait_fence(device, b.fence, 3), "the fence stopped answering after the holder went\n");

    /* the last holders are gone: the global handles are invalid */
    destroy_keyed_mutex(km.hKeyedMutex);
    expect_status(open_mutex_until(km.hSharedHandle, STATUS_INVALID_PARAMETER), STATUS_INVALID_PARAMETER);
    expect_status(global_status_until(device, res_global, STATUS_INVALID_PARAMETER), STATUS_INVALID_PARAMETER);
    expect_status(open_global(device, res_global, &other, &other_alloc), STATUS_INVALID_PARAMETER);
    share_destroy_bundle(device, &b);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
    share_expect_broker_stats(&before, kill ? "after the killed holder" : "after the holder's exit");
    return;

done:
    share_destroy_bundle(device, &b);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

void kmtc_share_holder_killed(void)
{
    holder_rows(TRUE);
}

void kmtc_share_holder_exits(void)
{
    holder_rows(FALSE);
}
