/*
 * The Linux half of kmtshim.dll, natively: dlopen the staged kmtshim.so the
 * way Wine does and drive __wine_unix_call_funcs directly.  Checks what
 * Wine itself cannot show: the exported symbols, argument-struct
 * validation (NULL args, NULL descriptors, NULL arrays give Windows'
 * NTSTATUS, never a crash), the ownership query, a full lifecycle on a
 * 256 KiB thread stack (Wine gives the Linux half about 1 MiB), and the
 * event queue the PE half's pump drains (which events are queued, in what
 * order, when kmtshim lets a handle go), with made-up handle values, and
 * NT handles as Wine handles through a stand-in for Wine's ntdll.so
 * (tests/wine/fake/ntdll.c).
 * Runs in sanitizer builds too.  Output: TAP.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/kmtsoft.h"
#include "unixlib.h"

typedef NTSTATUS (*entry_fn)(void *args);

static const entry_fn *funcs;
static unsigned tap_count, tap_failed;

static void tap(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int pass, const char *fmt, ...)
{
    va_list ap;

    printf("%sok %u - ", pass ? "" : "not ", ++tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!pass)
        tap_failed++;
}

/* Every D3DKMT entry reads struct kmt_desc_params; the KMT_FUNC_EVENT ones
 * read the longer struct kmt_event_params, of which it is the start. */
static NTSTATUS call_desc(enum kmt_unix_code code, void *desc)
{
    struct kmt_event_params params = { (uint64_t)(uintptr_t)desc, 0, 0, 0 };

    return funcs[code](&params);
}

/* A KMT_FUNC_EVENT call handing `event` over; *owned: whether kmtshim kept it. */
static NTSTATUS call_event(enum kmt_unix_code code, void *desc, HANDLE event, uint32_t *owned)
{
    struct kmt_event_params params = { (uint64_t)(uintptr_t)desc, (uint64_t)(uintptr_t)event, 0xff, 0 };
    NTSTATUS status = funcs[code](&params);

    *owned = params.owned;
    return status;
}

static unsigned owned(D3DKMT_HANDLE handle)
{
    struct kmt_owns_handle_params params = { handle, 0xff };

    if (funcs[KMT_UNIX_OWNS_HANDLE](&params))
        return 0xdead;
    return params.owned;
}

static void test_exports(void *so)
{
    tap(dlsym(so, "D3DKMTCreateDevice") == NULL && dlsym(so, "dxgk_process") == NULL &&
        dlsym(so, "KmtGetVersion") == NULL, "kmtshim.so exports nothing of the core");
    for (unsigned i = 0; i < KMT_UNIX_CALL_COUNT; i++)
        if (!funcs[i]) {
            tap(0, "unix call %u is NULL", i);
            return;
        }
    tap(1, "all %u unix calls are set", (unsigned)KMT_UNIX_CALL_COUNT);
}

/* The KMT_FUNC_CUSTOM entries take no descriptor (functions.h). */
static const unsigned char custom_call[KMT_UNIX_CALL_COUNT] = {
#define KMT_FUNC(name, type) [KMT_UNIX_##name] = 0,
#define KMT_FUNC_CUSTOM(name, type) [KMT_UNIX_##name] = 1,
#include "functions.h"
#undef KMT_FUNC
};

/* The custom entries' own arguments: no exclusive owner yet, a class set
 * and read back, a NULL output and a class past REALTIME refused. */
static void test_custom_args(void)
{
    struct kmt_bool_params b = { 0xff };
    struct kmt_priority_params p = { 0, D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH };
    uint32_t class = 0xff;
    NTSTATUS status;

    tap(!funcs[KMT_UNIX_CheckExclusiveOwnership](&b) && b.result == 0,
        "CheckExclusiveOwnership: FALSE without an exclusive owner");
    tap(!funcs[KMT_UNIX_SetProcessSchedulingPriorityClass](&p), "SetProcessSchedulingPriorityClass(NULL, HIGH)");
    p.priority = (uint64_t)(uintptr_t)&class;
    status = funcs[KMT_UNIX_GetProcessSchedulingPriorityClass](&p);
    tap(!status && class == D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH,
        "GetProcessSchedulingPriorityClass reads HIGH back (%#x, %u)", (unsigned)status, class);
    p.priority = 0;
    tap(funcs[KMT_UNIX_GetProcessSchedulingPriorityClass](&p) == STATUS_INVALID_PARAMETER,
        "GetProcessSchedulingPriorityClass with a NULL output: STATUS_INVALID_PARAMETER");
    p.priority = D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME + 1;
    tap(funcs[KMT_UNIX_SetProcessSchedulingPriorityClass](&p) == STATUS_INVALID_PARAMETER,
        "SetProcessSchedulingPriorityClass past REALTIME: STATUS_INVALID_PARAMETER");
    p.priority = D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL;
    funcs[KMT_UNIX_SetProcessSchedulingPriorityClass](&p);
}

static void test_null_args(void)
{
    unsigned bad = 0;

    for (unsigned i = 0; i < KMT_UNIX_CALL_COUNT; i++)
        if (funcs[i](NULL) != STATUS_INVALID_PARAMETER)
            bad++;
    tap(!bad, "NULL argument struct: STATUS_INVALID_PARAMETER from every call (%u wrong)", bad);
    bad = 0;
    for (unsigned i = 0; i < KMT_UNIX_OWNS_HANDLE; i++)
        if (!custom_call[i] && call_desc(i, NULL) != STATUS_INVALID_PARAMETER)
            bad++;
    tap(!bad, "NULL descriptor: STATUS_INVALID_PARAMETER from every D3DKMT call (%u wrong)", bad);
    test_custom_args();
    tap(owned(0x40000000) == 0 && owned(0) == 0, "nothing is owned before a handle was opened");
}

/* The lifecycle a Windows program goes through, entirely through the table. */
static void *lifecycle(void *unused)
{
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_ENUMADAPTERS2 e = { 34, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, 8192, 0, 0 };
    D3DDDI_ALLOCATIONINFO ai = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    D3DKMT_UNLOCK unlock1 = { 0 };
    D3DKMT_DESTROYALLOCATION da = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER close = { 0 };
    int same = 1;
    NTSTATUS status;

    status = call_desc(KMT_UNIX_EnumAdapters2, &e);
    tap(status == STATUS_SUCCESS && e.NumAdapters >= 1, "EnumAdapters2: %u adapters", (unsigned)e.NumAdapters);
    tap(owned(info[0].hAdapter) == 1, "adapter %#x is owned", info[0].hAdapter);
    cd.hAdapter = info[0].hAdapter;
    status = call_desc(KMT_UNIX_CreateDevice, &cd);
    tap(status == STATUS_SUCCESS && owned(cd.hDevice) == 1, "CreateDevice: %#x, owned", cd.hDevice);

    ai.pPrivateDriverData = &desc;
    ai.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = cd.hDevice;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &ai;
    status = call_desc(KMT_UNIX_CreateAllocation, &ca);
    tap(status == STATUS_SUCCESS && ai.hAllocation == cd.hDevice + 0x40, "CreateAllocation: %#x", ai.hAllocation);

    lock.hDevice = cd.hDevice;
    lock.hAllocation = ai.hAllocation;
    status = call_desc(KMT_UNIX_Lock2, &lock);
    tap(status == STATUS_SUCCESS && lock.pData, "Lock2: %p", lock.pData);
    if (lock.pData)
        memset(lock.pData, 0x5a, 8192);
    unlock.hDevice = cd.hDevice;
    unlock.hAllocation = ai.hAllocation;
    tap(call_desc(KMT_UNIX_Unlock2, &unlock) == STATUS_SUCCESS, "Unlock2");
    lock.pData = NULL;
    call_desc(KMT_UNIX_Lock2, &lock);
    for (unsigned i = 0; lock.pData && i < 8192; i++)
        same &= ((unsigned char *)lock.pData)[i] == 0x5a;
    tap(lock.pData && same, "the data reads back");
    call_desc(KMT_UNIX_Unlock2, &unlock);

    /* NULL arrays inside valid descriptors */
    unlock1.hDevice = cd.hDevice;
    unlock1.NumAllocations = 1;
    tap(call_desc(KMT_UNIX_Unlock, &unlock1) == STATUS_INVALID_PARAMETER, "Unlock with a NULL list");
    da.hDevice = cd.hDevice;
    da.AllocationCount = 1;
    tap(call_desc(KMT_UNIX_DestroyAllocation, &da) == STATUS_INVALID_PARAMETER,
        "DestroyAllocation with a NULL list");
    ca.pAllocationInfo = NULL;
    tap(call_desc(KMT_UNIX_CreateAllocation, &ca) == STATUS_INVALID_PARAMETER,
        "CreateAllocation with a NULL pAllocationInfo");

    da.phAllocationList = &ai.hAllocation;
    tap(call_desc(KMT_UNIX_DestroyAllocation, &da) == STATUS_SUCCESS && owned(ai.hAllocation) == 0,
        "DestroyAllocation; the handle is no longer owned");
    dd.hDevice = cd.hDevice;
    tap(call_desc(KMT_UNIX_DestroyDevice, &dd) == STATUS_SUCCESS && owned(cd.hDevice) == 0,
        "DestroyDevice; the handle is no longer owned");
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        close.hAdapter = info[i].hAdapter;
        call_desc(KMT_UNIX_CloseAdapter, &close);
    }
    tap(owned(info[0].hAdapter) == 0, "closed adapter no longer owned");
    return unused;
}

static void run_on_small_stack(void)
{
    pthread_attr_t attr;
    pthread_t thread;

    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&thread, &attr, lifecycle, NULL)) {
        tap(0, "pthread_create");
        return;
    }
    pthread_join(thread, NULL);
    pthread_attr_destroy(&attr);
}

/* ---- the event queue ---------------------------------------------------------- */

#define EV(n) ((HANDLE)(uintptr_t)(0x1000 + 4 * (n)))

struct events_env {
    D3DKMT_HANDLE adapters[34], device, ctx;
    ULONG nadapters;
    const volatile uint32_t *pending;
};

/* Takes what is queued: exactly `n` operations, equal to `want`. */
static int take_is(const struct kmt_event_op *want, unsigned n)
{
    struct kmt_events_take_params take;

    memset(&take, 0xcc, sizeof(take));
    if (funcs[KMT_UNIX_EVENTS_TAKE](&take) || take.count != n)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (take.ops[i].event != want[i].event || take.ops[i].ops != want[i].ops)
            return 0;
    return 1;
}

static NTSTATUS events_wait(void)
{
    struct kmt_events_wait_params wait = { 0, 0 };

    return funcs[KMT_UNIX_EVENTS_WAIT](&wait);
}

static void *waiter(void *arg)
{
    *(NTSTATUS *)arg = events_wait();
    return NULL;
}

static NTSTATUS create_notification(struct events_env *env, HANDLE event, uint32_t *owned, D3DKMT_HANDLE *out)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    NTSTATUS status;

    memset(&cs, 0, sizeof(cs));
    cs.hDevice = env->device;
    cs.Info.Type = D3DDDI_CPU_NOTIFICATION;
    cs.Info.CPUNotification.Event = event;
    status = call_event(KMT_UNIX_CreateSynchronizationObject2, &cs, event, owned);
    *out = cs.hSyncObject;
    return status;
}

static NTSTATUS create_fence(struct events_env *env, D3DKMT_HANDLE *out)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    uint32_t owned;
    NTSTATUS status;

    memset(&cs, 0, sizeof(cs));
    cs.hDevice = env->device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    status = call_event(KMT_UNIX_CreateSynchronizationObject2, &cs, NULL, &owned);
    *out = cs.hSyncObject;
    return status;
}

static NTSTATUS destroy_syncobj(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };

    return call_desc(KMT_UNIX_DestroySynchronizationObject, &d);
}

static NTSTATUS cpu_signal(struct events_env *env, D3DKMT_HANDLE fence, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s;

    memset(&s, 0, sizeof(s));
    s.hDevice = env->device;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &fence;
    s.FenceValueArray = &value;
    return call_desc(KMT_UNIX_SignalSynchronizationObjectFromCpu, &s);
}

static NTSTATUS async_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, HANDLE event,
                           uint32_t *owned)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w;

    memset(&w, 0, sizeof(w));
    w.hDevice = device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &fence;
    w.FenceValueArray = &value;
    w.hAsyncEvent = event;
    return call_event(KMT_UNIX_WaitForSynchronizationObjectFromCpu, &w, event, owned);
}

static NTSTATUS gpu_signal_v1(struct events_env *env, D3DKMT_HANDLE obj)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s;

    memset(&s, 0, sizeof(s));
    s.hContext = env->ctx;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = obj;
    return call_desc(KMT_UNIX_SignalSynchronizationObject, &s);
}

/* Closes the context's queue behind a GPU wait on a new fence: what is
 * queued next runs on the scheduler's thread once the gate opens, not on
 * the calling thread (which delivers its own sets). */
static D3DKMT_HANDLE close_gate(struct events_env *env)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU wg;
    D3DKMT_HANDLE gate = 0;
    UINT64 one = 1;

    tap(create_fence(env, &gate) == STATUS_SUCCESS, "events: a gate fence");
    memset(&wg, 0, sizeof(wg));
    wg.hContext = env->ctx;
    wg.ObjectCount = 1;
    wg.ObjectHandleArray = &gate;
    wg.MonitoredFenceValueArray = &one;
    tap(call_desc(KMT_UNIX_WaitForSynchronizationObjectFromGpu, &wg) == STATUS_SUCCESS,
        "events: the context waits behind the gate");
    return gate;
}

static void open_gate(struct events_env *env, D3DKMT_HANDLE gate)
{
    tap(cpu_signal(env, gate, 1) == STATUS_SUCCESS, "events: the gate opens");
}

static int events_setup(struct events_env *env)
{
    struct kmt_events_init_params init = { 0 };
    D3DKMT_ENUMADAPTERS2 e = { 34, NULL };
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };

    memset(env, 0, sizeof(*env));
    tap(funcs[KMT_UNIX_EVENTS_INIT](&init) == STATUS_SUCCESS && init.pending, "events: init gives the pending count");
    env->pending = (const volatile uint32_t *)(uintptr_t)init.pending;
    e.pAdapters = info;
    if (call_desc(KMT_UNIX_EnumAdapters2, &e) || !e.NumAdapters || !env->pending)
        return 0;
    env->nadapters = e.NumAdapters;
    for (ULONG i = 0; i < e.NumAdapters; i++)
        env->adapters[i] = info[i].hAdapter;
    cd.hAdapter = info[0].hAdapter;
    cv.hDevice = call_desc(KMT_UNIX_CreateDevice, &cd) ? 0 : cd.hDevice;
    if (!cv.hDevice || call_desc(KMT_UNIX_CreateContextVirtual, &cv))
        return 0;
    env->device = cd.hDevice;
    env->ctx = cv.hContext;
    return 1;
}

static void events_teardown(struct events_env *env)
{
    D3DKMT_DESTROYDEVICE dd = { env->device };
    D3DKMT_CLOSEADAPTER close = { 0 };

    tap(call_desc(KMT_UNIX_DestroyDevice, &dd) == STATUS_SUCCESS, "events: DestroyDevice");
    for (ULONG i = 0; i < env->nadapters; i++) {
        close.hAdapter = env->adapters[i];
        call_desc(KMT_UNIX_CloseAdapter, &close);
    }
}

/* CPU notifications: registered at create, set by the GPU queue, released
 * at destroy, after the sets queued before. */
static void test_notification_events(struct events_env *env)
{
    const struct kmt_event_op set1 = { (uintptr_t)EV(1), KMT_EVENT_SET, 0 };
    const struct kmt_event_op set_close1 = { (uintptr_t)EV(1), KMT_EVENT_SET | KMT_EVENT_CLOSE, 0 };
    const struct kmt_event_op close1 = { (uintptr_t)EV(1), KMT_EVENT_CLOSE, 0 };
    D3DKMT_HANDLE note = 0, other;
    uint32_t owned;
    NTSTATUS status;

    tap(create_notification(env, NULL, &owned, &other) == STATUS_INVALID_HANDLE && !owned,
        "events: a CPU notification without an event is STATUS_INVALID_HANDLE");
    {
        /* a handle the PE half did not hand over is no event to the core */
        D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;

        memset(&cs, 0, sizeof(cs));
        cs.hDevice = env->device;
        cs.Info.Type = D3DDDI_CPU_NOTIFICATION;
        cs.Info.CPUNotification.Event = EV(9);
        tap(call_event(KMT_UNIX_CreateSynchronizationObject2, &cs, NULL, &owned) == STATUS_INVALID_HANDLE,
            "events: an unregistered handle is STATUS_INVALID_HANDLE");
    }
    status = create_notification(env, EV(1), &owned, &note);
    tap(status == STATUS_SUCCESS && owned == 1, "events: CPU notification %#x keeps its event", note);
    tap(*env->pending == 0, "events: creating it queues nothing");
    {
        D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;

        /* the same duplicate twice would be a PE-half bug: refused, not kept */
        printf("# expected next: an err line \"event 0x1004 is registered twice\"\n");
        memset(&cs, 0, sizeof(cs));
        cs.hDevice = env->device;
        cs.Info.Type = D3DDDI_CPU_NOTIFICATION;
        cs.Info.CPUNotification.Event = EV(1);
        tap(call_event(KMT_UNIX_CreateSynchronizationObject2, &cs, EV(1), &owned) == STATUS_INVALID_HANDLE &&
            !owned, "events: a handle registered twice is refused and not kept");
    }
    {
        /* a pump asleep in the Linux half wakes for a set on the core's thread */
        pthread_t thread;
        NTSTATUS woke = 1;

        D3DKMT_HANDLE gate;

        tap(pthread_create(&thread, NULL, waiter, &woke) == 0, "events: a pump thread waits");
        usleep(50000);
        tap(woke == 1, "events: the pump sleeps while nothing is queued");
        gate = close_gate(env);
        tap(gpu_signal_v1(env, note) == STATUS_SUCCESS, "events: a GPU-queued signal of the notification");
        usleep(20000);
        tap(woke == 1 && *env->pending == 0, "events: nothing set while the gate is closed");
        open_gate(env, gate);
        pthread_join(thread, NULL);
        tap(woke == STATUS_SUCCESS, "events: the scheduler's set woke the pump");
        tap(destroy_syncobj(gate) == STATUS_SUCCESS, "events: the gate goes");
    }
    tap(take_is(&set1, 1) && *env->pending == 0, "events: one SET of the event, queue empty after");
    /* two sets nobody delivered are one; the destroy's release follows them */
    tap(gpu_signal_v1(env, note) == STATUS_SUCCESS && gpu_signal_v1(env, note) == STATUS_SUCCESS,
        "events: signaled twice");
    {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s;
        HANDLE fence_event = EV(2);
        const struct kmt_event_op marker = { (uintptr_t)EV(2), KMT_EVENT_SET | KMT_EVENT_CLOSE, 0 };

        /* an EnqueueCpuEvent after both: once it is queued, both sets are too */
        memset(&s, 0, sizeof(s));
        s.hContext = env->ctx;
        s.Flags.EnqueueCpuEvent = 1;
        s.CpuEventHandle = fence_event;
        tap(call_event(KMT_UNIX_SignalSynchronizationObject2, &s, fence_event, &owned) == STATUS_SUCCESS &&
            owned == 1, "events: EnqueueCpuEvent keeps its event");
        for (int i = 0; i < 1000 && *env->pending < 2; i++)
            usleep(1000);
        tap(*env->pending == 2, "events: %u queued (the two sets merged, and the marker)", *env->pending);
        tap(destroy_syncobj(note) == STATUS_SUCCESS, "events: destroy the notification");
        {
            const struct kmt_event_op want[] = { set_close1, marker };
            tap(take_is(want, 2), "events: SET+CLOSE of the notification's event, then the marker's");
        }
    }
    tap(create_notification(env, EV(1), &owned, &note) == STATUS_SUCCESS && owned == 1,
        "events: the released handle value can be registered again");
    tap(destroy_syncobj(note) == STATUS_SUCCESS && take_is(&close1, 1),
        "events: destroyed without a set: CLOSE alone");
    tap(destroy_syncobj(note) == STATUS_INVALID_PARAMETER && *env->pending == 0,
        "events: destroyed again: nothing queued");
}

/* One-shot events: released once set; a failed call gives the handle back. */
static void test_oneshot_events(struct events_env *env)
{
    const struct kmt_event_op done3 = { (uintptr_t)EV(3), KMT_EVENT_SET | KMT_EVENT_CLOSE, 0 };
    const struct kmt_event_op done4 = { (uintptr_t)EV(4), KMT_EVENT_SET | KMT_EVENT_CLOSE, 0 };
    const struct kmt_event_op done5 = { (uintptr_t)EV(5), KMT_EVENT_SET | KMT_EVENT_CLOSE, 0 };
    D3DKMT_HANDLE fence;
    pthread_t thread;
    NTSTATUS woke = 1;
    uint32_t owned;

    tap(create_fence(env, &fence) == STATUS_SUCCESS, "events: a monitored fence");
    tap(async_wait(0, fence, 1, EV(3), &owned) == STATUS_INVALID_PARAMETER && owned == 0 && *env->pending == 0,
        "events: a failed async wait gives its event back at once");
    tap(async_wait(env->device, fence, 1, EV(3), &owned) == STATUS_SUCCESS && owned == 1 && *env->pending == 0,
        "events: an async wait keeps its event, unset");
    /* set inside the caller's call: queued for the caller, the pump sleeps on */
    tap(pthread_create(&thread, NULL, waiter, &woke) == 0, "events: a pump thread waits");
    usleep(50000);                       /* asleep before the signal */
    tap(cpu_signal(env, fence, 1) == STATUS_SUCCESS && *env->pending == 1,
        "events: the CPU signal satisfies the wait and queues its event");
    usleep(50000);
    tap(woke == 1 && take_is(&done3, 1), "events: the pump was not woken; SET+CLOSE, once, for the caller");
    {
        /* EnqueueCpuEvent: set on the scheduler's thread, the pump wakes */
        const struct kmt_event_op marker = { (uintptr_t)EV(6), KMT_EVENT_SET | KMT_EVENT_CLOSE, 0 };
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 s;
        D3DKMT_HANDLE gate = close_gate(env);

        memset(&s, 0, sizeof(s));
        s.hContext = env->ctx;
        s.Flags.EnqueueCpuEvent = 1;
        s.CpuEventHandle = EV(6);
        tap(call_event(KMT_UNIX_SignalSynchronizationObject2, &s, EV(6), &owned) == STATUS_SUCCESS && owned,
            "events: EnqueueCpuEvent");
        open_gate(env, gate);
        pthread_join(thread, NULL);
        tap(woke == STATUS_SUCCESS && take_is(&marker, 1), "events: the pump woke for it; SET+CLOSE");
        tap(destroy_syncobj(gate) == STATUS_SUCCESS, "events: the gate goes");
    }
    tap(async_wait(env->device, fence, 1, EV(4), &owned) == STATUS_SUCCESS && owned == 1 && take_is(&done4, 1),
        "events: a wait satisfied already queues SET+CLOSE before it returns");
    tap(async_wait(env->device, fence, 9, EV(5), &owned) == STATUS_SUCCESS && owned == 1,
        "events: an async wait for 9");
    tap(destroy_syncobj(fence) == STATUS_SUCCESS && take_is(&done5, 1),
        "events: destroying the fence sets the waiting event and releases it");
    tap(*env->pending == 0, "events: nothing left queued");
}

/* Last: the pump's way out (DLL detach). */
static void test_events_stop(void)
{
    struct kmt_events_wait_params stop = { 0, 0 };
    pthread_t thread;
    NTSTATUS woke = 1;

    tap(funcs[KMT_UNIX_EVENTS_STOP](NULL) == STATUS_INVALID_PARAMETER, "events: STOP without arguments");
    tap(pthread_create(&thread, NULL, waiter, &woke) == 0, "events: a pump thread waits");
    usleep(50000);
    tap(woke == 1, "events: ... and still sleeps (the STOP without arguments did nothing)");
    tap(funcs[KMT_UNIX_EVENTS_STOP](&stop) == STATUS_SUCCESS, "events: STOP");
    pthread_join(thread, NULL);
    tap(woke == KMT_STATUS_EVENTS_STOPPED && events_wait() == KMT_STATUS_EVENTS_STOPPED,
        "events: the pump returns STATUS_CANCELLED, and every later wait at once");
}

static void test_events(void)
{
    struct events_env env;

    if (!events_setup(&env)) {
        tap(0, "events: no device and context on the first adapter");
        return;
    }
    test_notification_events(&env);
    test_oneshot_events(&env);
    events_teardown(&env);
    test_events_stop();
}

/* ---- NT handles through a stand-in for Wine's ntdll.so (tests/wine/fake/ntdll.c) ---- */

#define FAKE_EVENT ((HANDLE)(uintptr_t)0x1000)

static int (*fake_info)(HANDLE handle, unsigned *access, unsigned *attributes);
static int (*fake_close)(HANDLE handle);
static void (*fake_fail_next)(NTSTATUS status);
static unsigned (*fake_live)(void);

/* Loads the stand-in where kmtshim.so looks for ntdll.so (by soname, in the
 * global scope), before kmtshim.so's first NT-handle call: Wine 8.0's
 * (tests/wine/fake), or the one KMT_FAKE_NTDLL names (fake10: Wine 10.0's,
 * test_unixlib_wine10.sh). */
static int load_fake_ntdll(const char *builddir)
{
    const char *dir = getenv("KMT_FAKE_NTDLL");
    char path[4096];
    void *so;

    snprintf(path, sizeof(path), "%s/tests/wine/%s/.libs/ntdll.so", builddir ? builddir : ".",
             dir && *dir ? dir : "fake");
    so = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    tap(so != NULL, "dlopen %s (the stand-in for Wine's ntdll.so)%s%s", path, so ? "" : ": ",
        so ? "" : dlerror());
    if (!so)
        return 0;
    fake_info = (int (*)(HANDLE, unsigned *, unsigned *))dlsym(so, "fake_ntdll_info");
    fake_close = (int (*)(HANDLE))dlsym(so, "fake_ntdll_close");
    fake_fail_next = (void (*)(NTSTATUS))dlsym(so, "fake_ntdll_fail_next");
    fake_live = (unsigned (*)(void))dlsym(so, "fake_ntdll_live");
    tap(fake_info && fake_close && fake_live && fake_fail_next, "the stand-in exports its test calls");
    return fake_info && fake_close && fake_live && fake_fail_next;
}

static unsigned open_fds(void)
{
    unsigned n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static NTSTATUS share_objects(D3DKMT_HANDLE object, uint32_t attributes, uint32_t access, HANDLE *nt)
{
    struct kmt_share_objects_params p = { 0 };
    OBJECT_ATTRIBUTES attr = { 0 };

    attr.Length = sizeof(attr);
    attr.Attributes = attributes;
    p.count = 1;
    p.access = access;
    p.handles = (uint64_t)(uintptr_t)&object;
    p.attributes = (uint64_t)(uintptr_t)&attr;
    p.nt_handle = (uint64_t)(uintptr_t)nt;
    return funcs[KMT_UNIX_ShareObjects](&p);
}

static NTSTATUS open_fence_from(D3DKMT_HANDLE device, HANDLE nt, D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 *o)
{
    memset(o, 0, sizeof(*o));
    o->hNtHandle = nt;
    o->hDevice = device;
    return call_desc(KMT_UNIX_OpenSyncObjectFromNtHandle2, o);
}

/* ShareObjects gives a Wine handle with the call's access and OBJ_INHERIT,
 * a call takes it back, kmtshim.so keeps no fd, and a handle the
 * wineserver refuses fails the call with nothing left behind. */
static void test_nt_handles_out(void)
{
    D3DKMT_ENUMADAPTERS2 e = { 34, NULL };
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o;
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER close_adapter = { 0 };
    HANDLE nt = NULL, inherit = NULL, untouched = (HANDLE)(uintptr_t)0x5150;
    unsigned access = 0, attributes = 0, fds;
    NTSTATUS status;

    e.pAdapters = info;
    if (call_desc(KMT_UNIX_EnumAdapters2, &e) || !e.NumAdapters) {
        tap(0, "nt handles: no adapter");
        return;
    }
    cd.hAdapter = info[0].hAdapter;
    tap(call_desc(KMT_UNIX_CreateDevice, &cd) == STATUS_SUCCESS, "nt handles: CreateDevice");
    cs.hDevice = cd.hDevice;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.Flags.Shared = 1;
    cs.Info.Flags.NtSecuritySharing = 1;
    tap(call_desc(KMT_UNIX_CreateSynchronizationObject2, &cs) == STATUS_SUCCESS,
        "nt handles: a Shared|NtSecuritySharing monitored fence");
    fds = open_fds();

    status = share_objects(cs.hSyncObject, 0, 0x1f0003, &nt);
    tap(status == STATUS_SUCCESS && fake_info(nt, &access, &attributes) && access == 0x1f0003 && attributes == 0,
        "ShareObjects returns a Wine handle with the access asked for (%#x, %p, %#x, %#x)", (unsigned)status, nt,
        access, attributes);
    status = share_objects(cs.hSyncObject, 0x2 /* OBJ_INHERIT */, 0x1f0003, &inherit);
    tap(status == STATUS_SUCCESS && fake_info(inherit, &access, &attributes) && attributes == 0x2,
        "OBJ_INHERIT makes it inheritable (%#x, %#x)", (unsigned)status, attributes);
    tap(open_fds() == fds + 2, "the wineserver holds the fds, kmtshim.so none (%u, %u)", open_fds(), fds);

    status = open_fence_from(cd.hDevice, nt, &o);
    tap(status == STATUS_SUCCESS && o.hNtHandle == nt && o.hSyncObject,
        "OpenSyncObjectFromNtHandle2 takes the Wine handle, leaves it in the descriptor (%#x, %p)",
        (unsigned)status, o.hNtHandle);
    tap(open_fds() == fds + 2, "the call's fd is closed after it (%u)", open_fds());
    ds.hSyncObject = o.hSyncObject;
    call_desc(KMT_UNIX_DestroySynchronizationObject, &ds);

    fake_fail_next(STATUS_INSUFFICIENT_RESOURCES);
    status = share_objects(cs.hSyncObject, 0, 0x1f0003, &untouched);
    tap(status == STATUS_INSUFFICIENT_RESOURCES && untouched == (HANDLE)(uintptr_t)0x5150 && open_fds() == fds + 2,
        "a handle the wineserver refuses: its status, the output untouched, no fd (%#x, %u)", (unsigned)status,
        open_fds());

    fake_close(nt);
    fake_close(inherit);
    ds.hSyncObject = cs.hSyncObject;
    tap(call_desc(KMT_UNIX_DestroySynchronizationObject, &ds) == STATUS_SUCCESS, "nt handles: destroy the fence");
    tap(fake_live() == 0 && open_fds() == fds, "every handle and fd is gone (%u, %u)", fake_live(), open_fds());
    dd.hDevice = cd.hDevice;
    call_desc(KMT_UNIX_DestroyDevice, &dd);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        close_adapter.hAdapter = info[i].hAdapter;
        call_desc(KMT_UNIX_CloseAdapter, &close_adapter);
    }
}

static NTSTATUS open_keyed_mutex_from(HANDLE nt, D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE *o)
{
    memset(o, 0, sizeof(*o));
    o->hNtHandle = nt;
    return call_desc(KMT_UNIX_OpenKeyedMutexFromNtHandle, o);
}

/* A call that takes an NT handle gets the fd behind the program's Wine
 * handle, closed after the call; the program's descriptor keeps its handle;
 * handles that are not NT shares get the native path's statuses. */
static void test_nt_handles_in(void)
{
    NTSTATUS (*make_handle)(int, unsigned, HANDLE *);
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE o;
    HANDLE file = NULL;
    unsigned fds;
    int pipe_fds[2];
    NTSTATUS status;

    make_handle = (NTSTATUS (*)(int, unsigned, HANDLE *))dlsym(RTLD_DEFAULT, "fake_ntdll_make_handle");
    if (!make_handle || pipe(pipe_fds)) {
        tap(0, "nt handles: no fake_ntdll_make_handle or pipe");
        return;
    }
    /* a handle of a file that is no NT share: the broker says so */
    status = make_handle(pipe_fds[0], 0x1f01ff, &file);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    tap(!status && fake_live() == 1, "nt handles: a Wine handle of a pipe (%#x)", (unsigned)status);
    status = open_keyed_mutex_from(file, &o);
    tap(status == STATUS_OBJECT_TYPE_MISMATCH && o.hNtHandle == file && !o.hKeyedMutex,
        "a file handle that is no NT share: STATUS_OBJECT_TYPE_MISMATCH, the descriptor keeps it (%#x, %p)",
        (unsigned)status, o.hNtHandle);
    /* (the first call connected to the broker: one fd for good) */
    fds = open_fds();
    open_keyed_mutex_from(file, &o);
    tap(open_fds() == fds, "the call's fd is closed after it (%u, %u)", open_fds(), fds);
    status = open_keyed_mutex_from(FAKE_EVENT, &o);
    tap(status == STATUS_OBJECT_TYPE_MISMATCH && o.hNtHandle == FAKE_EVENT,
        "a handle of another type (an event): STATUS_OBJECT_TYPE_MISMATCH (%#x)", (unsigned)status);
    fake_close(file);
    status = open_keyed_mutex_from(file, &o);
    tap(status == STATUS_INVALID_HANDLE, "a closed handle: STATUS_INVALID_HANDLE (%#x)", (unsigned)status);
    status = open_keyed_mutex_from(NULL, &o);
    tap(status == STATUS_INVALID_HANDLE, "NULL: STATUS_INVALID_HANDLE (%#x)", (unsigned)status);
    tap(fake_live() == 0 && open_fds() == fds - 1, "no handle or fd left (%u, %u)", fake_live(), open_fds());
}

/* A broker of this program's own (never the session's), removed at exit. */
static char broker_dir[64];

static void remove_broker_dir(void)
{
    char path[sizeof(broker_dir) + 256];
    DIR *d = opendir(broker_dir);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", broker_dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(broker_dir);
}

static void private_broker(void)
{
    snprintf(broker_dir, sizeof(broker_dir), "/tmp/kmtshim-unixlib-XXXXXX");
    if (!mkdtemp(broker_dir)) {
        tap(0, "mkdtemp for the broker");
        return;
    }
    setenv("KMTSHIM_BROKER_DIR", broker_dir, 1);
    setenv("KMTSHIM_BROKER_LINGER_MS", "100", 0);
    atexit(remove_broker_dir);
}

int main(void)
{
    const char *builddir = getenv("KMTSHIM_TEST_BUILDDIR");
    char path[4096];
    int have_fake_ntdll;
    void *so;

    setvbuf(stdout, NULL, _IONBF, 0);
    setenv("KMTSHIM_MINIPORT", "soft", 1);
    private_broker();
    have_fake_ntdll = load_fake_ntdll(builddir);
    snprintf(path, sizeof(path), "%s/dlls/kmtshim/wine/tree/x86_64-unix/kmtshim.so", builddir ? builddir : ".");
    so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    tap(so != NULL, "dlopen %s%s%s", path, so ? "" : ": ", so ? "" : dlerror());
    if (!so) {
        printf("1..%u\n", tap_count);
        return 1;
    }
    funcs = dlsym(so, "__wine_unix_call_funcs");
    tap(funcs != NULL, "__wine_unix_call_funcs is exported");
    /* a new-WoW64 Wine's 32-bit kmtshim.dll calls through this one */
    tap(dlsym(so, "__wine_unix_call_wow64_funcs") != NULL, "__wine_unix_call_wow64_funcs is exported");
    if (funcs) {
        test_exports(so);
        test_null_args();
        run_on_small_stack();
        test_events();
        if (have_fake_ntdll) {
            test_nt_handles_in();
            test_nt_handles_out();
        }
    }
    /* kmtshim.so stays loaded, as in Wine: its state is the process's */
    printf("1..%u\n", tap_count);
    return tap_failed ? 1 : 0;
}
