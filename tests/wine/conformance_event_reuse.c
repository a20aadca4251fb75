/*
 * Async CPU waits that use one event again and again, as a runtime's
 * SetEventOnCompletion does every frame.  Under Wine, kmtshim.dll keeps its
 * duplicate of such an event between waits (docs/wine.md, "Events"); what a
 * program sees must not change: the event named by the handle at the time
 * of the call is the one set, also after the program closed its handle and
 * got the same handle value for another object, and no handle of
 * kmtshim's is left once the device is gone.
 */
#include "conformance.h"

#define WAIT_MS 5000

static D3DKMT_HANDLE fence_new(D3DKMT_HANDLE device)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    expect_status(kmt_api.CreateSynchronizationObject2(&cs), STATUS_SUCCESS);
    return cs.hSyncObject;
}

static void fence_free(D3DKMT_HANDLE fence)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { fence };

    expect_status(kmt_api.DestroySynchronizationObject(&d), STATUS_SUCCESS);
}

/* An async wait armed, the CPU signal that satisfies it (the event is set
 * when the signal returns), the program's own wait. */
static BOOL one_round(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, HANDLE event)
{
    return !kmt_cpu_wait(device, fence, value, event) && !kmt_cpu_signal(device, fence, value) &&
           WaitForSingleObject(event, 0) == WAIT_OBJECT_0;
}

static HANDLE same_object(HANDLE h)
{
    HANDLE dup = NULL;

    ok(DuplicateHandle(GetCurrentProcess(), h, GetCurrentProcess(), &dup, 0, FALSE, DUPLICATE_SAME_ACCESS),
       "DuplicateHandle failed\n");
    return dup;
}

void kmtc_event_reuse(void)
{
    D3DKMT_HANDLE adapter, device, fence, fence2;
    HANDLE event, kept, other, mutex;
    unsigned failed = 0;
    DWORD handles;
    UINT64 v = 0;

    if (!(adapter = kmt_open_soft_adapter(NULL))) {
        skip("no software adapter through %s\n", kmt_api_via);
        return;
    }
    device = kmt_create_device(adapter);
    handles = kmt_count_handles();
    fence = fence_new(device);
    fence2 = fence_new(device);

    event = CreateEventW(NULL, FALSE, FALSE, NULL);
    for (int i = 0; i < 100; i++)
        failed += !one_round(device, fence, ++v, event);
    ok(!failed, "%u of 100 rounds on one event failed\n", failed);

    /* the program closes its event and gets the same value for another
     * one: the new event is set, never the old object */
    kept = same_object(event);
    CloseHandle(event);
    other = CreateEventW(NULL, FALSE, FALSE, NULL);
    trace("the new event's handle is %s value\n", other == event ? "the same" : "another");
    expect_status(kmt_cpu_wait(device, fence, ++v, other), STATUS_SUCCESS);
    expect_status(kmt_cpu_signal(device, fence, v), STATUS_SUCCESS);
    ok(WaitForSingleObject(other, 0) == WAIT_OBJECT_0, "the program's new event was not set\n");
    ok(WaitForSingleObject(kept, 0) == WAIT_TIMEOUT, "the closed event's object was set\n");
    CloseHandle(kept);

    /* the value now names a mutex: refused as any handle that is no event */
    kept = same_object(other);
    CloseHandle(other);
    mutex = CreateMutexW(NULL, FALSE, NULL);
    expect_status(kmt_cpu_wait(device, fence, ++v, mutex), STATUS_INVALID_HANDLE);
    expect_status(kmt_cpu_signal(device, fence, v), STATUS_SUCCESS);
    ok(WaitForSingleObject(kept, 0) == WAIT_TIMEOUT, "the event the value named before was set\n");
    CloseHandle(mutex);
    CloseHandle(kept);

    /* closed early while kmtshim holds its reused duplicate */
    event = CreateEventW(NULL, FALSE, FALSE, NULL);
    ok(one_round(device, fence, ++v, event), "round failed\n");
    kept = same_object(event);
    expect_status(kmt_cpu_wait(device, fence, ++v, event), STATUS_SUCCESS);
    CloseHandle(event);
    expect_status(kmt_cpu_signal(device, fence, v), STATUS_SUCCESS);
    ok(WaitForSingleObject(kept, WAIT_MS) == WAIT_OBJECT_0, "closed early: the event was not set\n");

    /* two waits at once on one event: each sets it */
    event = kept;
    expect_status(kmt_cpu_wait(device, fence, v + 1, event), STATUS_SUCCESS);
    expect_status(kmt_cpu_wait(device, fence2, 1, event), STATUS_SUCCESS);
    expect_status(kmt_cpu_signal(device, fence2, 1), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_OBJECT_0, "the second wait did not set the event\n");
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "set twice\n");
    expect_status(kmt_cpu_signal(device, fence, ++v), STATUS_SUCCESS);
    ok(WaitForSingleObject(event, 0) == WAIT_OBJECT_0, "the first wait did not set the event\n");

    /* a wait that fails gives nothing back to the cache it could not use */
    expect_status(kmt_cpu_wait(device, 0, ++v, event), STATUS_INVALID_PARAMETER);
    ok(one_round(device, fence, v, event), "round after a failed wait failed\n");
    CloseHandle(event);

    fence_free(fence);
    fence_free(fence2);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
    ok(kmt_count_handles() == handles, "%lu handles, were %lu\n", (unsigned long)kmt_count_handles(),
       (unsigned long)handles);
}

/* The steady state the runner counts wineserver requests of
 * (WINEDEBUG=+server): KMT_EVENT_ROUNDS rounds on one event between two
 * named events that mark them in the trace. */
void kmtc_event_rounds(void)
{
    D3DKMT_HANDLE adapter, device, fence;
    HANDLE event, begin, end;
    unsigned failed = 0;
    UINT64 v = 0;

    if (!(adapter = kmt_open_soft_adapter(NULL))) {
        skip("no software adapter through %s\n", kmt_api_via);
        return;
    }
    device = kmt_create_device(adapter);
    fence = fence_new(device);
    event = CreateEventW(NULL, FALSE, FALSE, NULL);
    for (int i = 0; i < 3; i++)          /* the first takes the duplicate */
        failed += !one_round(device, fence, ++v, event);
    begin = CreateEventW(NULL, TRUE, FALSE, L"kmtshim-event-rounds-begin");
    for (int i = 0; i < KMT_EVENT_ROUNDS; i++)
        failed += !one_round(device, fence, ++v, event);
    end = CreateEventW(NULL, TRUE, FALSE, L"kmtshim-event-rounds-end");
    CloseHandle(begin);
    CloseHandle(end);
    ok(!failed, "%u rounds failed\n", failed);
    CloseHandle(event);
    fence_free(fence);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}
