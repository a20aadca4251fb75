/*
 * kmtshim.dll: the Win32 events inside D3DKMT descriptors.
 *
 * CPU notifications (CreateSynchronizationObject2), async CPU waits
 * (WaitForSynchronizationObjectFromCpu.hAsyncEvent) and EnqueueCpuEvent
 * signals (SignalSynchronizationObject2, ...FromGpu2) carry an event the
 * core sets later, from its own threads.  The Linux half cannot call
 * SetEvent(), so it queues each set (unix/events.c) and this file delivers
 * them:
 *   - right after every D3DKMT call, on the calling thread, when that call
 *     queued something (a CPU signal satisfying an async wait sets its event
 *     before the signal returns, as on Windows);
 *   - otherwise on one pump thread, started with the first event, that
 *     sleeps in the Linux half until something is queued.
 * One deliverer at a time, so the sets of a handle and its closing happen
 * in the order the core asked for them.
 *
 * The core never sees the program's handle: it gets a duplicate, so a
 * program that closes its handle before the event fired breaks nothing
 * (Windows keeps a reference too).  The duplicate is closed when the core
 * is done with it: a one-shot event after it was set, a CPU notification's
 * after its object was destroyed, at once when the call failed.  An async
 * CPU wait's duplicate is kept for the next wait on the same event instead
 * (event_cache.c).
 */
#include "pe.h"

/* What the core gets for a handle that is not an event: a value no event
 * has, so the core answers STATUS_INVALID_HANDLE in its own order of checks
 * (a zero hDevice still gives STATUS_INVALID_PARAMETER first). */
#define KMT_NOT_AN_EVENT ((HANDLE)~(ULONG_PTR)0xff)

volatile LONG *volatile kmt_events_pending;
volatile LONG kmt_events_delivering;
static SRWLOCK deliver_lock = SRWLOCK_INIT;
static INIT_ONCE pump_once = INIT_ONCE_STATIC_INIT;
static NTSTATUS pump_status;

/* ---- delivery ------------------------------------------------------------------- */

static void deliver_one(const struct kmt_event_op *op)
{
    HANDLE event = (HANDLE)(ULONG_PTR)op->event;

    if (op->ops & KMT_EVENT_SET) {
        if (SetEvent(event))
            PE_TRACE("event %p set\n", event);
        else
            PE_WARN("SetEvent(%p) failed, error %lu\n", event, (unsigned long)GetLastError());
    }
    if (op->ops & KMT_EVENT_CLOSE) {
        PE_TRACE("event %p released\n", event);
        if (!kmt_event_cache_release(event))
            CloseHandle(event);
    }
}

void kmt_events_deliver(void)
{
    struct kmt_events_take_params take;

    AcquireSRWLockExclusive(&deliver_lock);
    /* a caller that finds the queue empty now waits for what we took */
    InterlockedExchange(&kmt_events_delivering, 1);
    do {
        if (kmt_unix_call(KMT_UNIX_EVENTS_TAKE, &take))
            break;
        for (UINT i = 0; i < take.count; i++)
            deliver_one(&take.ops[i]);
    } while (take.count == KMT_EVENTS_BATCH);
    InterlockedExchange(&kmt_events_delivering, 0);
    ReleaseSRWLockExclusive(&deliver_lock);
}

static DWORD WINAPI pump_thread(void *unused)
{
    struct kmt_events_wait_params wait = { 0, 0 };

    PE_TRACE("event pump running\n");
    while (!kmt_unix_call(KMT_UNIX_EVENTS_WAIT, &wait))
        kmt_events_deliver();
    PE_TRACE("event pump stopped\n");
    return 0;
}

/* The pump runs this DLL's code until the process ends: the DLL is pinned
 * (a FreeLibrary cannot pull the code from under it, and DLL detach then
 * only happens at process exit). */
static BOOL CALLBACK start_pump(INIT_ONCE *once, void *param, void **context)
{
    struct kmt_events_init_params init = { 0 };
    HMODULE self;
    HANDLE thread;

    if ((pump_status = kmt_unix_call(KMT_UNIX_EVENTS_INIT, &init)))
        return TRUE;
    GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                       (const WCHAR *)(void *)start_pump, &self);
    if (!(thread = CreateThread(NULL, 0, pump_thread, NULL, 0, NULL))) {
        PE_ERR("cannot start the event pump, error %lu\n", (unsigned long)GetLastError());
        pump_status = STATUS_NO_MEMORY;
        return TRUE;
    }
    CloseHandle(thread);
    InterlockedExchangePointer((void *volatile *)&kmt_events_pending, (void *)(ULONG_PTR)init.pending);
    return TRUE;
}

static NTSTATUS pump_start(void)
{
    InitOnceExecuteOnce(&pump_once, start_pump, NULL, NULL);
    return pump_status;
}

void kmt_events_detach(void)
{
    struct kmt_events_wait_params stop = { 0, 0 };

    if (kmt_events_pending)
        kmt_unix_call(KMT_UNIX_EVENTS_STOP, &stop);
}

/* ---- capture ------------------------------------------------------------------------ */

BOOL kmt_pe_is_event(HANDLE handle)
{
    static const WCHAR event_type[] = { 'E', 'v', 'e', 'n', 't' };
    union {
        PUBLIC_OBJECT_TYPE_INFORMATION info;
        BYTE bytes[512];
    } u;
    const WCHAR *name;
    ULONG len;

    if (NtQueryObject(handle, ObjectTypeInformation, &u, sizeof(u), &len))
        return FALSE;
    if (u.info.TypeName.Length != sizeof(event_type) || !(name = u.info.TypeName.Buffer))
        return FALSE;
    for (unsigned i = 0; i < ARRAYSIZE(event_type); i++)
        if (name[i] != event_type[i])
            return FALSE;
    return TRUE;
}

/* `event` is the program's; *for_core what goes into the core's copy of
 * the descriptor, *dup the duplicate kmtshim owns (NULL if none). */
static NTSTATUS capture_event(HANDLE event, HANDLE *for_core, HANDLE *dup)
{
    HANDLE self = GetCurrentProcess();
    NTSTATUS status;

    *dup = NULL;
    *for_core = event;
    if (!event)
        return STATUS_SUCCESS;              /* the core knows what NULL means here */
    *for_core = KMT_NOT_AN_EVENT;
    if (!kmt_pe_is_event(event)) {
        PE_TRACE("%p is not an event handle\n", event);
        return STATUS_SUCCESS;
    }
    if ((status = pump_start()))
        return status;
    /* SetEvent needs EVENT_MODIFY_STATE, which the program's handle may lack */
    if (!DuplicateHandle(self, event, self, dup, EVENT_MODIFY_STATE | SYNCHRONIZE, FALSE, 0) &&
        !DuplicateHandle(self, event, self, dup, 0, FALSE, DUPLICATE_SAME_ACCESS)) {
        PE_WARN("cannot duplicate event %p, error %lu\n", event, (unsigned long)GetLastError());
        *dup = NULL;
        return STATUS_SUCCESS;
    }
    *for_core = *dup;
    PE_TRACE("event %p, kmtshim's duplicate %p\n", event, *dup);
    return STATUS_SUCCESS;
}

/* Calls the Linux half with the descriptor and the duplicate it takes
 * over; gets the duplicate back (and closes it, cached or not) when the
 * call failed. */
static NTSTATUS call_with_event(enum kmt_unix_code code, const void *desc, HANDLE dup)
{
    struct kmt_event_params params = { (uint64_t)(ULONG_PTR)desc, (uint64_t)(ULONG_PTR)dup, 0, 0 };
    NTSTATUS status = kmt_unix_call(code, &params);

    if (dup && !params.owned)
        kmt_event_cache_discard(dup);
    kmt_events_after_call();
    return status;
}

/* ---- the functions ---------------------------------------------------------------------- */

NTSTATUS pe_CreateSynchronizationObject2(D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *desc)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 k;
    NTSTATUS status;
    HANDLE dup;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)) || desc->Info.Type != D3DDDI_CPU_NOTIFICATION)
        return call_with_event(KMT_UNIX_CreateSynchronizationObject2, desc, NULL);
    k = *desc;
    if ((status = capture_event(k.Info.CPUNotification.Event, &k.Info.CPUNotification.Event, &dup)))
        return status;
    status = call_with_event(KMT_UNIX_CreateSynchronizationObject2, &k, dup);
    if (!status) {
        desc->hSyncObject = k.hSyncObject;
        desc->Info.SharedHandle = k.Info.SharedHandle;
    }
    return status;
}

NTSTATUS pe_WaitForSynchronizationObjectFromCpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *desc)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU k;
    NTSTATUS status;
    HANDLE dup, event;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)) || !desc->hAsyncEvent)
        return call_with_event(KMT_UNIX_WaitForSynchronizationObjectFromCpu, desc, NULL);
    k = *desc;
    /* the same event as in an earlier wait: its duplicate again */
    if ((dup = kmt_event_cache_take(k.hDevice, k.hAsyncEvent))) {
        k.hAsyncEvent = dup;
        return call_with_event(KMT_UNIX_WaitForSynchronizationObjectFromCpu, &k, dup);
    }
    event = k.hAsyncEvent;
    if ((status = capture_event(event, &k.hAsyncEvent, &dup)))
        return status;
    if (dup)
        kmt_event_cache_adopt(k.hDevice, event, dup);
    return call_with_event(KMT_UNIX_WaitForSynchronizationObjectFromCpu, &k, dup);
}

NTSTATUS pe_SignalSynchronizationObject2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 *desc)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 k;
    NTSTATUS status;
    HANDLE dup;

    /* CpuEventHandle shares its place with Fence.FenceValue */
    if (!kmt_win_desc_ok(desc, sizeof(*desc)) || !desc->Flags.EnqueueCpuEvent)
        return call_with_event(KMT_UNIX_SignalSynchronizationObject2, desc, NULL);
    k = *desc;
    if ((status = capture_event(k.CpuEventHandle, &k.CpuEventHandle, &dup)))
        return status;
    return call_with_event(KMT_UNIX_SignalSynchronizationObject2, &k, dup);
}

NTSTATUS pe_SignalSynchronizationObjectFromGpu2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 *desc)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 k;
    NTSTATUS status;
    HANDLE dup;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)) || !desc->Flags.EnqueueCpuEvent)
        return call_with_event(KMT_UNIX_SignalSynchronizationObjectFromGpu2, desc, NULL);
    k = *desc;
    if ((status = capture_event(k.CpuEventHandle, &k.CpuEventHandle, &dup)))
        return status;
    return call_with_event(KMT_UNIX_SignalSynchronizationObjectFromGpu2, &k, dup);
}
