/*
 * Miracast sessions: the Miracast DDI class, its serialization and the
 * session state machine (miracast.h, docs/miracast.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/kmt_thread.h"
#include "miracast.h"
#include "sync.h"
#include "base/kmt_debug.h"
#include "ddi.h"
#include "base/kmt_time.h"

struct dxgk_miracast {
    pthread_mutex_t class_lock;          /* held across every Miracast-class DDI */
    pthread_mutex_t state_lock;          /* sessions' states; never across a DDI */
    pthread_cond_t state_changed;        /* CLOCK_MONOTONIC, with state_lock */
    struct list sessions;                /* under state_lock */
};

struct dxgk_miracast_session {
    struct kmt_object obj;               /* refs: the handle table, callers */
    struct list entry;                   /* mc->sessions */
    D3DKMT_HANDLE handle;
    struct dxgk_adapter *adapter;        /* referenced */
    struct dxgk_miracast *mc;
    KMT_MIRACAST_SESSION_DESC desc;      /* routines, event, stop timeout */
    DXGK_MIRACAST_CALLBACKS callbacks;   /* the table the miniport got */
    PVOID driver_context;                /* MiracastContext */
    /* under mc->state_lock */
    KMT_MIRACAST_SESSION_STATUS status;  /* status.State is the session's state */
    bool linked;                         /* on mc->sessions */
    bool context_live;                   /* DestroyContext has not returned */
    bool in_destroy;                     /* DestroyContext is running */
    bool has_phase_thread;
    pthread_t phase_thread;              /* runs the start or the stop routine */
    bool stop_done;                      /* the stop routine returned */
};

/* ---- per-adapter state ---------------------------------------------------------- */

static struct dxgk_miracast *miracast_new(void)
{
    struct dxgk_miracast *mc = calloc(1, sizeof(*mc));

    if (!mc)
        return NULL;
    pthread_mutex_init(&mc->class_lock, NULL);
    pthread_mutex_init(&mc->state_lock, NULL);
    kmt_cond_init_monotonic(&mc->state_changed);
    list_init(&mc->sessions);
    dxgk_count_object(+1);
    return mc;
}

static void miracast_free(struct dxgk_miracast *mc)
{
    pthread_mutex_destroy(&mc->class_lock);
    pthread_mutex_destroy(&mc->state_lock);
    pthread_cond_destroy(&mc->state_changed);
    free(mc);
    dxgk_count_object(-1);
}

/* The adapter's Miracast state, made by the first session that needs it. */
static struct dxgk_miracast *miracast_of(struct dxgk_adapter *adapter)
{
    struct dxgk_miracast *mc = __atomic_load_n(&adapter->miracast, __ATOMIC_ACQUIRE);
    struct dxgk_miracast *fresh;

    if (mc)
        return mc;
    if (!(fresh = miracast_new()))
        return NULL;
    if (__atomic_compare_exchange_n(&adapter->miracast, &mc, fresh, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return fresh;
    miracast_free(fresh);               /* another thread made it first */
    return mc;
}

/* ---- sessions -------------------------------------------------------------------- */

static void session_release(struct kmt_object *obj)
{
    struct dxgk_miracast_session *s = (struct dxgk_miracast_session *)obj;

    dxgk_adapter_put(s->adapter);
    free(s);
    dxgk_count_object(-1);
}

static struct dxgk_miracast_session *session_lookup(D3DKMT_HANDLE h)
{
    return (struct dxgk_miracast_session *)hmgr_lookup(&dxgk_process.handles, h,
                                                       HMGR_TYPE_MIRACAST);
}

static void session_put(struct dxgk_miracast_session *s)
{
    kmt_object_put(&s->obj);
}

static bool own_phase(const struct dxgk_miracast_session *s)
{
    return s->has_phase_thread && pthread_equal(s->phase_thread, pthread_self());
}

/* Every status change sets the owner's event.  Under state_lock: the owner
 * closes the event only after StopSession, which passes that lock after the
 * last change. */
static void status_changed_locked(struct dxgk_miracast_session *s)
{
    if (s->desc.hStatusEvent)
        dxgk_event_set(s->desc.hStatusEvent);
    pthread_cond_broadcast(&s->mc->state_changed);
}

static void set_state_locked(struct dxgk_miracast_session *s, KMT_MIRACAST_SESSION_STATE state,
                             bool phase)
{
    s->status.State = state;
    s->has_phase_thread = phase;
    if (phase)
        s->phase_thread = pthread_self();
    status_changed_locked(s);
}

static NTSTATUS APIENTRY cb_report_chunk_info(HANDLE, DXGK_MIRACAST_CHUNK_INFO *, PVOID, UINT);

static struct dxgk_miracast_session *session_new(struct dxgk_adapter *adapter,
                                                 struct dxgk_miracast *mc,
                                                 const KMT_MIRACAST_SESSION_DESC *desc)
{
    struct dxgk_miracast_session *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    if (!(s->handle = hmgr_alloc(&dxgk_process.handles))) {
        free(s);
        return NULL;
    }
    kmt_object_init(&s->obj, HMGR_TYPE_MIRACAST, session_release);
    list_init(&s->entry);
    kmt_object_get(&adapter->obj);
    s->adapter = adapter;
    s->mc = mc;
    s->desc = *desc;
    if (!s->desc.StopTimeoutMs)
        s->desc.StopTimeoutMs = KMT_MIRACAST_DEFAULT_STOP_TIMEOUT_MS;
    s->callbacks.MiracastHandle = (HANDLE)(uintptr_t)s->handle;
    s->callbacks.DxgkCbReportChunkInfo = cb_report_chunk_info;
    s->status.MonitorType = D3DKMDT_VOT_UNINITIALIZED;
    dxgk_count_object(+1);
    return s;
}

/* Drops the handle (the table's reference) and the list link. */
static void session_close(struct dxgk_miracast_session *s)
{
    struct kmt_object *obj = hmgr_remove(&dxgk_process.handles, s->handle, HMGR_TYPE_MIRACAST);

    pthread_mutex_lock(&s->mc->state_lock);
    if (s->linked) {
        list_remove(&s->entry);
        s->linked = false;
    }
    pthread_mutex_unlock(&s->mc->state_lock);
    if (obj)
        kmt_object_put(obj);
}

/* ---- the Miracast-class DDIs -------------------------------------------------------- */

static NTSTATUS create_context(struct dxgk_miracast_session *s)
{
    struct dxgk_adapter *adapter = s->adapter;
    PVOID context = NULL;
    UINT target = 0;
    NTSTATUS status;

    pthread_mutex_lock(&s->mc->class_lock);
    status = dxgk_ddi_miracast_create_context(adapter, &s->callbacks, &context, &target);
    pthread_mutex_unlock(&s->mc->class_lock);
    if (status)
        return status;
    /* not published yet: no other thread sees these */
    s->driver_context = context;
    s->status.TargetId = target;
    s->context_live = true;
    return STATUS_SUCCESS;
}

/* Destroys the kernel context once; a second caller waits for the first.
 * IoControl checks the state again holding class_lock, so one queued behind
 * this destroy finds DESTROYED and never reaches the miniport. */
static void destroy_context(struct dxgk_miracast_session *s)
{
    struct dxgk_miracast *mc = s->mc;
    struct dxgk_adapter *adapter = s->adapter;

    pthread_mutex_lock(&mc->state_lock);
    if (s->status.State == KMT_MIRACAST_SESSION_DESTROYED) {
        while (s->context_live)
            pthread_cond_wait(&mc->state_changed, &mc->state_lock);
        pthread_mutex_unlock(&mc->state_lock);
        return;
    }
    s->status.State = KMT_MIRACAST_SESSION_DESTROYED;
    status_changed_locked(s);
    pthread_mutex_unlock(&mc->state_lock);

    pthread_mutex_lock(&mc->class_lock);
    pthread_mutex_lock(&mc->state_lock);
    s->in_destroy = true;
    pthread_mutex_unlock(&mc->state_lock);
    dxgk_ddi_miracast_destroy_context(adapter, s->driver_context);
    pthread_mutex_unlock(&mc->class_lock);

    pthread_mutex_lock(&mc->state_lock);
    s->in_destroy = false;
    s->context_live = false;
    if (s->status.MonitorConnected) {
        /* the contract says it reports the departure at once; the target
         * is gone either way */
        WARN_(dxgk, "%s: DxgkDdiMiracastDestroyContext reported no monitor departure\n",
              adapter->miniport->name);
        s->status.MonitorConnected = FALSE;
        status_changed_locked(s);
    } else {
        pthread_cond_broadcast(&mc->state_changed);   /* context_live waiters */
    }
    pthread_mutex_unlock(&mc->state_lock);
}

/* May this thread's IoControl reach the miniport now?  STATUS_PENDING: wait
 * for the start routine (run by another thread) to finish.  state_lock held. */
static NTSTATUS io_control_allowed(const struct dxgk_miracast_session *s)
{
    switch (s->status.State) {
    case KMT_MIRACAST_SESSION_STARTING:
        return own_phase(s) ? STATUS_SUCCESS : STATUS_PENDING;
    case KMT_MIRACAST_SESSION_ACTIVE:
        return STATUS_SUCCESS;
    case KMT_MIRACAST_SESSION_STOPPING:
        return own_phase(s) ? STATUS_SUCCESS : STATUS_INVALID_DEVICE_STATE;
    default:
        return STATUS_DEVICE_NOT_CONNECTED;
    }
}

static NTSTATUS io_control_admit(struct dxgk_miracast_session *s, bool may_wait)
{
    struct dxgk_miracast *mc = s->mc;
    NTSTATUS status;

    pthread_mutex_lock(&mc->state_lock);
    while ((status = io_control_allowed(s)) == STATUS_PENDING && may_wait)
        pthread_cond_wait(&mc->state_changed, &mc->state_lock);
    if (status)
        s->status.IoControlsRefused++;
    pthread_mutex_unlock(&mc->state_lock);
    return status;
}

static NTSTATUS io_control_refused(struct dxgk_miracast_session *s, NTSTATUS status)
{
    TRACE_(dxgk, "session %#x: IoControl refused: %s\n", s->handle, kmt_debugstr_status(status));
    session_put(s);
    return status;
}

NTSTATUS dxgk_miracast_io_control(D3DKMT_HANDLE h, void *in, UINT in_size, void *out,
                                  UINT out_size, UINT *returned)
{
    struct dxgk_miracast_session *s = session_lookup(h);
    struct dxgk_adapter *adapter;
    ULONG bytes = 0;
    NTSTATUS status;

    *returned = 0;
    if (!s)
        return STATUS_INVALID_PARAMETER;
    adapter = s->adapter;
    /* Wait out another thread's start without class_lock (the start routine
     * needs it for its own IoControls), then check again holding it. */
    if ((status = io_control_admit(s, true)))
        return io_control_refused(s, status);
    pthread_mutex_lock(&s->mc->class_lock);
    if ((status = io_control_admit(s, false))) {
        pthread_mutex_unlock(&s->mc->class_lock);
        return io_control_refused(s, status);
    }
    status = dxgk_ddi_miracast_io_control(adapter, s->driver_context, in_size, in, out_size, out, &bytes);
    /* counted before a destroy can follow it */
    pthread_mutex_lock(&s->mc->state_lock);
    s->status.IoControlsCompleted++;
    pthread_mutex_unlock(&s->mc->state_lock);
    pthread_mutex_unlock(&s->mc->class_lock);
    if (bytes > out_size) {
        WARN_(dxgk, "%s: IoControl returned %u bytes into %u\n", adapter->miniport->name,
              (unsigned)bytes, out_size);
        bytes = out_size;
    }
    *returned = bytes;
    session_put(s);
    return status;
}

/* ---- starting and stopping ----------------------------------------------------------- */

static NTSTATUS start_check(struct dxgk_adapter *adapter, const KMT_MIRACAST_SESSION_DESC *desc)
{
    if (!dxgk_ddi_has_miracast(adapter))
        return STATUS_NOT_SUPPORTED;
    if (desc->StopTimeoutMs > KMT_MIRACAST_MAX_STOP_TIMEOUT_MS)
        return STATUS_INVALID_PARAMETER;
    if (desc->hStatusEvent)
        return dxgk_event_validate(desc->hStatusEvent);
    return STATUS_SUCCESS;
}

/* Makes the kernel context and publishes the session, STARTING in this thread. */
static NTSTATUS session_open(struct dxgk_adapter *adapter, const KMT_MIRACAST_SESSION_DESC *desc,
                             struct dxgk_miracast_session **out)
{
    struct dxgk_miracast *mc = miracast_of(adapter);
    struct dxgk_miracast_session *s;
    NTSTATUS status;

    if (!mc || !(s = session_new(adapter, mc, desc)))
        return STATUS_NO_MEMORY;
    if ((status = create_context(s))) {
        hmgr_cancel(&dxgk_process.handles, s->handle);
        session_put(s);
        return status;
    }
    pthread_mutex_lock(&mc->state_lock);
    list_add_tail(&mc->sessions, &s->entry);
    s->linked = true;
    set_state_locked(s, KMT_MIRACAST_SESSION_STARTING, true);
    pthread_mutex_unlock(&mc->state_lock);
    kmt_object_get(&s->obj);             /* the table's */
    hmgr_publish(&dxgk_process.handles, s->handle, &s->obj);
    *out = s;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_miracast_start_session(const KMT_MIRACAST_SESSION_DESC *desc,
                                     D3DKMT_HANDLE *session, UINT *target_id)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(desc->hAdapter);
    struct dxgk_miracast_session *s = NULL;
    NTSTATUS status;

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    if (!(status = start_check(adapter, desc)))
        status = session_open(adapter, desc, &s);
    dxgk_adapter_put(adapter);
    if (status)
        return status;
    if (desc->pfnStartSession)
        status = desc->pfnStartSession(desc->pContext, s->handle);
    if (status) {
        /* a session that never started is not stopped: no stop routine */
        TRACE_(dxgk, "session %#x: start routine failed: %s\n", s->handle,
               kmt_debugstr_status(status));
        destroy_context(s);
        session_close(s);
        session_put(s);
        return status;
    }
    pthread_mutex_lock(&s->mc->state_lock);
    if (s->status.State == KMT_MIRACAST_SESSION_STARTING)
        set_state_locked(s, KMT_MIRACAST_SESSION_ACTIVE, false);
    *target_id = s->status.TargetId;
    pthread_mutex_unlock(&s->mc->state_lock);
    *session = s->handle;
    TRACE_(dxgk, "session %#x started on target %#x\n", s->handle, *target_id);
    session_put(s);
    return STATUS_SUCCESS;
}

/* Windows does not let a slow StopMiracastSession hold the kernel context:
 * when the routine outruns the timeout, the context is destroyed under it. */
static void *stop_watchdog(void *arg)
{
    struct dxgk_miracast_session *s = arg;
    struct dxgk_miracast *mc = s->mc;
    struct timespec deadline = kmt_deadline_after(s->desc.StopTimeoutMs);
    bool late = false;

    pthread_mutex_lock(&mc->state_lock);
    while (!s->stop_done && !late)
        late = pthread_cond_timedwait(&mc->state_changed, &mc->state_lock, &deadline) == ETIMEDOUT &&
               !s->stop_done;
    if (late)
        s->status.DestroyedDuringStop = TRUE;
    pthread_mutex_unlock(&mc->state_lock);
    if (late) {
        WARN_(dxgk, "session %#x: the stop routine outran %u ms; destroying the context under it\n",
              s->handle, s->desc.StopTimeoutMs);
        destroy_context(s);
    }
    return NULL;
}

static void run_stop_routine(struct dxgk_miracast_session *s)
{
    struct dxgk_miracast *mc = s->mc;
    pthread_t watchdog;
    bool watched = !kmt_thread_create(&watchdog, "kmt-miracast", stop_watchdog, s);

    if (!watched)
        WARN_(dxgk, "session %#x: no watchdog thread, the stop routine has no time limit\n",
              s->handle);
    s->desc.pfnStopSession(s->desc.pContext, s->handle);
    pthread_mutex_lock(&mc->state_lock);
    s->stop_done = true;
    pthread_cond_broadcast(&mc->state_changed);
    pthread_mutex_unlock(&mc->state_lock);
    if (watched)
        pthread_join(watchdog, NULL);
}

NTSTATUS dxgk_miracast_stop_session(D3DKMT_HANDLE h, KMT_MIRACAST_SESSION_STATUS *final_status)
{
    struct dxgk_miracast_session *s = session_lookup(h);
    struct dxgk_miracast *mc;

    if (!s)
        return STATUS_INVALID_PARAMETER;
    mc = s->mc;
    pthread_mutex_lock(&mc->state_lock);
    if (s->status.State != KMT_MIRACAST_SESSION_ACTIVE) {
        /* starting, or another stop is under way (maybe this very thread's) */
        pthread_mutex_unlock(&mc->state_lock);
        session_put(s);
        return STATUS_INVALID_DEVICE_STATE;
    }
    set_state_locked(s, KMT_MIRACAST_SESSION_STOPPING, true);
    pthread_mutex_unlock(&mc->state_lock);

    if (s->desc.pfnStopSession)
        run_stop_routine(s);
    destroy_context(s);
    if (final_status) {
        pthread_mutex_lock(&mc->state_lock);
        *final_status = s->status;
        pthread_mutex_unlock(&mc->state_lock);
    }
    session_close(s);
    TRACE_(dxgk, "session %#x stopped\n", h);
    session_put(s);
    return STATUS_SUCCESS;
}

/* ---- status ------------------------------------------------------------------------------ */

NTSTATUS dxgk_miracast_query_status(D3DKMT_HANDLE h, KMT_MIRACAST_SESSION_STATUS *status)
{
    struct dxgk_miracast_session *s = session_lookup(h);

    if (!s)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&s->mc->state_lock);
    *status = s->status;
    pthread_mutex_unlock(&s->mc->state_lock);
    session_put(s);
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_miracast_report_status(D3DKMT_HANDLE h, MIRACAST_STATUS miracast_status,
                                     NTSTATUS status)
{
    struct dxgk_miracast_session *s;

    if ((UINT)miracast_status > MIRACAST_STATUS_COMPANION_DRIVER_DISCONNECT)
        return STATUS_INVALID_PARAMETER;
    if (!(s = session_lookup(h)))
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&s->mc->state_lock);
    s->status.ErrorReported = TRUE;
    s->status.ReportedMiracastStatus = miracast_status;
    s->status.ReportedStatus = status;
    status_changed_locked(s);
    pthread_mutex_unlock(&s->mc->state_lock);
    TRACE_(dxgk, "session %#x: user mode reports Miracast status %u (%s)\n", h,
           (unsigned)miracast_status, kmt_debugstr_status(status));
    session_put(s);
    return STATUS_SUCCESS;
}

/* ---- the miniport's callbacks -------------------------------------------------------------- */

/* The session whose live kernel context owns a target.  state_lock held. */
static struct dxgk_miracast_session *find_target_locked(struct dxgk_miracast *mc, ULONG target)
{
    struct dxgk_miracast_session *s;

    LIST_FOR_EACH_ENTRY(s, &mc->sessions, struct dxgk_miracast_session, entry)
        if (s->context_live && s->status.TargetId == target)
            return s;
    return NULL;
}

static void record_child_status_locked(struct dxgk_miracast_session *s, const DXGK_CHILD_STATUS *cs)
{
    if (cs->Miracast.Connected) {
        s->status.MonitorArrivals++;
        s->status.MonitorType = cs->Miracast.MiracastMonitorType;
    } else {
        s->status.MonitorDepartures++;
        if (s->in_destroy)
            s->status.DepartureReportedAtDestroy = TRUE;
    }
    s->status.MonitorConnected = cs->Miracast.Connected ? TRUE : FALSE;
    status_changed_locked(s);
}

static NTSTATUS APIENTRY cb_indicate_child_status(HANDLE hAdapter, PDXGK_CHILD_STATUS cs)
{
    struct dxgk_adapter *adapter = hAdapter;
    struct dxgk_miracast_session *s;
    struct dxgk_miracast *mc;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (!adapter || !cs)
        return STATUS_INVALID_PARAMETER;
    if (cs->Type == StatusConnection)
        return dxgk_child_connection(adapter, cs->ChildUid, cs->HotPlug.Connected);
    if (cs->Type == StatusRotation)
        return STATUS_NOT_SUPPORTED;     /* no rotation in kmtshim */
    if (cs->Type != StatusMiracastConnection ||
        !(mc = __atomic_load_n(&adapter->miracast, __ATOMIC_ACQUIRE)))
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&mc->state_lock);
    if ((s = find_target_locked(mc, cs->ChildUid))) {
        record_child_status_locked(s, cs);
        status = STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&mc->state_lock);
    TRACE_(dxgk, "%s: Miracast target %#x %s -> %s\n", adapter->miniport->name,
           (unsigned)cs->ChildUid, cs->Miracast.Connected ? "connected" : "departed",
           kmt_debugstr_status(status));
    return status;
}

static NTSTATUS APIENTRY cb_report_chunk_info(HANDLE handle, DXGK_MIRACAST_CHUNK_INFO *info,
                                              PVOID private_data, UINT private_size)
{
    struct dxgk_miracast_session *s = NULL;
    NTSTATUS status = STATUS_SUCCESS;

    if ((uintptr_t)handle > UINT32_MAX || !(s = session_lookup((D3DKMT_HANDLE)(uintptr_t)handle)))
        return STATUS_INVALID_PARAMETER;
    if (!info || private_data || private_size) {
        session_put(s);
        return STATUS_INVALID_PARAMETER;
    }
    pthread_mutex_lock(&s->mc->state_lock);
    if (!s->context_live || s->in_destroy) {
        status = STATUS_DEVICE_NOT_CONNECTED;
    } else {
        s->status.ChunksReported++;
        s->status.LastChunkId = info->ChunkId.Value;
        s->status.LastChunkType = info->ChunkType;
    }
    pthread_mutex_unlock(&s->mc->state_lock);
    TRACE_(dxgk, "session %#x: chunk type %u frame %llu part %u, %u us, %u kbit/s -> %s\n",
           s->handle, (unsigned)info->ChunkType, (unsigned long long)info->ChunkId.FrameNumber,
           (unsigned)info->ChunkId.PartNumber, info->ProcessingTime, info->EncodeRate,
           kmt_debugstr_status(status));
    session_put(s);
    return status;
}

void dxgk_miracast_callbacks(DXGKRNL_INTERFACE *iface)
{
    iface->DxgkCbIndicateChildStatus = cb_indicate_child_status;
}

/* ---- process exit ----------------------------------------------------------------------------- */

static void shutdown_adapter(struct dxgk_adapter *adapter)
{
    struct dxgk_miracast *mc = __atomic_load_n(&adapter->miracast, __ATOMIC_ACQUIRE);

    for (;;) {
        struct dxgk_miracast_session *s = NULL;

        pthread_mutex_lock(&mc->state_lock);
        if (!list_empty(&mc->sessions)) {
            s = LIST_ENTRY(mc->sessions.next, struct dxgk_miracast_session, entry);
            kmt_object_get(&s->obj);
        }
        pthread_mutex_unlock(&mc->state_lock);
        if (!s)
            break;
        TRACE_(dxgk, "session %#x outlived the process: destroying it\n", s->handle);
        destroy_context(s);
        session_close(s);
        session_put(s);
    }
    __atomic_store_n(&adapter->miracast, NULL, __ATOMIC_RELEASE);
    miracast_free(mc);
}

void dxgk_miracast_process_shutdown(void)
{
    struct dxgk_adapter **adapters = NULL, *a;
    unsigned count = 0, n = 0;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(a, &dxgk_process.adapters, struct dxgk_adapter, entry)
        count++;
    if (count && (adapters = calloc(count, sizeof(*adapters)))) {
        LIST_FOR_EACH_ENTRY(a, &dxgk_process.adapters, struct dxgk_adapter, entry) {
            if (!__atomic_load_n(&a->miracast, __ATOMIC_ACQUIRE))
                continue;
            kmt_object_get(&a->obj);
            adapters[n++] = a;
        }
    }
    pthread_mutex_unlock(&dxgk_process.lock);
    /* no lock across the DDIs */
    for (unsigned i = 0; i < n; i++) {
        shutdown_adapter(adapters[i]);
        dxgk_adapter_put(adapters[i]);
    }
    free(adapters);
}
