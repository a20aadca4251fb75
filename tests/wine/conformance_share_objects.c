/*
 * Three objects through one NT handle, under Wine (share_objects): the
 * parent shares a resource, its keyed mutex and a monitored fence with one
 * named ShareObjects call; the child takes the NT handle with
 * DuplicateHandle, and OpenResourceFromNtHandle gives it all three as
 * local handles (OpenKeyedMutexFromNtHandle on the same handle is
 * STATUS_OBJECT_TYPE_MISMATCH: its type is the resource's).  The two hand
 * the keyed mutex back and forth with fence values around the child's
 * write, the child's signal of the fence wakes the parent's wait, and the
 * child opens the share a second time by name (OpenNtHandleFromName):
 * the same mutex and fence.  Then the name and the broker's objects go
 * with the last handles.
 */
#include <stdio.h>

#include "conformance_share.h"

#define PARENT_RELEASE_FENCE 11          /* the parent's release of key 1 */
#define NAMED_RELEASE_FENCE 33           /* key 3: the child to itself, by name */
#define CHILD_RELEASE_FENCE 22           /* the child's release of key 2 */

static void expect_mismatch(HANDLE nt)
{
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE km = { 0 };

    km.hNtHandle = nt;
    expect_status(kmt_api.OpenKeyedMutexFromNtHandle(&km), STATUS_OBJECT_TYPE_MISMATCH);
    ok(!km.hKeyedMutex, "hKeyedMutex %#x\n", km.hKeyedMutex);
}

static void expect_three(const struct share_opened *o, const char *how)
{
    ok(is_local_handle(o->resource) && is_local_handle(o->alloc) && is_local_handle(o->keyed_mutex) &&
       is_local_handle(o->sync), "%s: resource %#x, allocation %#x, keyed mutex %#x, sync object %#x\n", how,
       o->resource, o->alloc, o->keyed_mutex, o->sync);
    ok(o->keyed_mutex_runtime_size == BUNDLE_MUTEX_RUNTIME_SIZE, "%s: the keyed mutex's runtime size %u\n", how,
       o->keyed_mutex_runtime_size);
}

static void close_opened(D3DKMT_HANDLE device, const struct share_opened *o)
{
    if (o->sync)
        destroy_sync(o->sync);
    if (o->keyed_mutex)
        destroy_keyed_mutex(o->keyed_mutex);
    if (o->resource)
        destroy_resource(device, o->resource);
}

/* The child: argv = parent pid, the parent's NT handle, the share's name. */
int kmtc_share_objects_child(int argc, char **argv)
{
    D3DKMT_HANDLE adapter, device;
    struct share_opened o = { 0 }, n = { 0 };
    HANDLE mine, named = NULL;
    UINT64 fence = ~0ull;

    if (argc != 3) {
        ok(FALSE, "objects: %d arguments\n", argc);
        return 1;
    }
    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return kmtw_failures();
    device = kmt_create_device(adapter);

    mine = share_take_from_parent(argv[0], argv[1]);
    expect_mismatch(mine);
    expect_status(share_open_nt(device, mine, &o), STATUS_SUCCESS);
    CloseHandle(mine);
    expect_three(&o, "by DuplicateHandle");
    expect_status(open_name(argv[2], &named), STATUS_SUCCESS);
    expect_mismatch(named);
    expect_status(share_open_nt(device, named, &n), STATUS_SUCCESS);
    CloseHandle(named);
    expect_three(&n, "by name");
    ok(n.keyed_mutex != o.keyed_mutex && n.sync != o.sync, "two opens gave the same handles\n");
    if (!o.keyed_mutex || !n.keyed_mutex || !o.sync || !n.sync)
        goto done;

    /* key 1 from the parent, with its fence value and bytes */
    expect_status(acquire_key(o.keyed_mutex, 1, &fence), STATUS_SUCCESS);
    ok(fence == PARENT_RELEASE_FENCE, "objects: FenceValue %llu from the parent's release\n",
       (unsigned long long)fence);
    ok(!touch_words(device, o.alloc, PATTERN_PARENT, FALSE), "objects: the parent's bytes differ\n");
    touch_words(device, o.alloc, PATTERN_CHILD, TRUE);
    /* the named open's mutex is the same one */
    expect_status(release_key(o.keyed_mutex, 3, NAMED_RELEASE_FENCE), STATUS_SUCCESS);
    expect_status(acquire_key(n.keyed_mutex, 3, &fence), STATUS_SUCCESS);
    ok(fence == NAMED_RELEASE_FENCE, "objects: FenceValue %llu by name\n", (unsigned long long)fence);
    expect_status(release_key(n.keyed_mutex, 2, CHILD_RELEASE_FENCE), STATUS_SUCCESS);
    /* the signal wakes the parent; the named open's fence sees it */
    expect_status(kmt_cpu_signal(device, o.sync, 1), STATUS_SUCCESS);
    ok(wait_fence(device, n.sync, 1), "objects: the named open's fence is another\n");

done:
    close_opened(device, &n);
    close_opened(device, &o);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
    return kmtw_failures();
}

void kmtc_share_objects(void)
{
    D3DKMT_HANDLE adapter, device;
    struct share_broker_stats before;
    struct share_bundle b;
    PROCESS_INFORMATION pi;
    struct nt_name n;
    HANDLE event = NULL, again = NULL;
    UINT64 fence = ~0ull;
    char name[64];

    if (!share_broker_stats_before(&before) || !(adapter = kmt_open_soft_adapter(NULL)))
        return;
    device = kmt_create_device(adapter);
    snprintf(name, sizeof(name), "kmtshim_objects_%lu", GetCurrentProcessId());
    if (!share_create_bundle(device, nt_name_init(&n, name, 0), &b))
        goto done;
    expect_mismatch(b.nt);
    expect_status(open_name(name, &again), STATUS_SUCCESS);
    CloseHandle(again);
    touch_words(device, b.alloc, PATTERN_PARENT, TRUE);
    expect_status(acquire_key(b.keyed_mutex, 0, &fence), STATUS_SUCCESS);
    expect_status(release_key(b.keyed_mutex, 1, PARENT_RELEASE_FENCE), STATUS_SUCCESS);
    event = CreateEventW(NULL, TRUE, FALSE, NULL);
    expect_status(kmt_cpu_wait(device, b.fence, 1, event), STATUS_SUCCESS);
    if (!share_start_child(&pi, FALSE, "objects", "%lu %llx %s", GetCurrentProcessId(),
                           (unsigned long long)(ULONG_PTR)b.nt, name))
        goto done;

    expect_status(acquire_key(b.keyed_mutex, 2, &fence), STATUS_SUCCESS);
    ok(fence == CHILD_RELEASE_FENCE, "FenceValue %llu from the child's release\n", (unsigned long long)fence);
    ok(!touch_words(device, b.alloc, PATTERN_CHILD, FALSE), "the child's bytes differ\n");
    ok(WaitForSingleObject(event, CHILD_TIMEOUT_MS) == WAIT_OBJECT_0, "the child's signal did not wake the wait\n");
    ok(*b.fence_value == 1, "fence value %llu\n", (unsigned long long)*b.fence_value);
    share_end_child(&pi, 0);
    expect_status(release_key(b.keyed_mutex, 0, 0), STATUS_SUCCESS);

done:
    if (event)
        CloseHandle(event);
    /* the last NT handle takes the name along */
    share_destroy_bundle(device, &b);
    expect_status(name_status_until(name, STATUS_OBJECT_NAME_NOT_FOUND), STATUS_OBJECT_NAME_NOT_FOUND);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
    share_expect_broker_stats(&before, "after the three objects' share");
}
