/*
 * Miracast sessions (kmtmiracast.h, docs/miracast.md): the contract of
 * DxgkDdiMiracastCreateContext / DestroyContext / IoControl as the core
 * keeps it, and the software adapter's virtual sink.
 *
 *   - the three DDIs form one class: one call at a time per adapter, while
 *     other DDIs keep running;
 *   - no IoControl reaches the miniport after DestroyContext, also when
 *     IoControls race the destroy from several threads;
 *   - a destroy that comes while a slow stop routine still runs makes every
 *     later IoControl fail without reaching the miniport;
 *   - the miniport reports the monitor's departure at destroy and the
 *     program sees it (status and event).
 *
 * "mcrec" is the software miniport with its Miracast DDIs replaced by
 * recording ones (everything else stays soft, so allocations work while a
 * Miracast call is held).  Worker threads never call ck_assert: they record
 * what they saw and the main thread asserts after joining.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

/* ---- the recording Miracast miniport ------------------------------------------------------ */

#define REC_MAX_CONTEXTS 64u
#define REC_TARGET_BASE 0x200u

/* Its IoControl input: a command and an argument. */
enum rec_code {
    REC_ECHO = 1,                        /* output = input */
    REC_SLEEP = 2,                       /* stay Arg microseconds */
    REC_GATE = 3,                        /* wait until the test opens the gate */
    REC_MONITOR = 4,                     /* report the monitor: Arg = connected */
    REC_CHUNK = 5,                       /* report a chunk of frame Arg */
};

typedef struct {
    UINT Code;
    UINT Arg;
} REC_CMD;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    DXGKRNL_INTERFACE core;              /* from DxgkDdiStartDevice */
    PVOID adapter_ctx;
    /* steering */
    NTSTATUS create_status;
    bool skip_departure;                 /* DestroyContext reports nothing */
    bool gate_closed;
    /* what happened */
    unsigned creates, destroys, ioctls, late_ioctls, in_gate;
    unsigned next_id;
    atomic_uint in_ddi, overlaps;
    bool destroyed[REC_MAX_CONTEXTS];
    DXGK_MIRACAST_CALLBACKS callbacks[REC_MAX_CONTEXTS];
    UINT last_in_size, last_out_size;
    PVOID last_driver_ctx, last_context;
    NTSTATUS chunk_in_destroy;           /* DxgkCbReportChunkInfo inside DestroyContext */
    NTSTATUS departure_status;           /* DxgkCbIndicateChildStatus inside DestroyContext */
    unsigned start_flag_violations;      /* IoControls seen while `blocked_phase` said no */
} rec = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
};

/* Set by a test while only its own thread may reach the miniport. */
static atomic_bool blocked_phase;
static pthread_t blocked_phase_owner;

static DRIVER_INITIALIZATION_DATA soft_ddi;
static bool with_miracast;

static void rec_enter(void)
{
    if (atomic_fetch_add(&rec.in_ddi, 1))
        atomic_fetch_add(&rec.overlaps, 1);
}

static void rec_leave(void)
{
    atomic_fetch_sub(&rec.in_ddi, 1);
}

static NTSTATUS rec_report_monitor(UINT id, BOOL connected)
{
    DXGK_CHILD_STATUS cs = { .Type = StatusMiracastConnection, .ChildUid = REC_TARGET_BASE + id };

    cs.Miracast.Connected = connected;
    cs.Miracast.MiracastMonitorType = D3DKMDT_VOT_HDMI;
    return rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, &cs);
}

static NTSTATUS rec_report_chunk(UINT id, UINT frame)
{
    DXGK_MIRACAST_CHUNK_INFO info = { .ChunkType = DXGK_MIRACAST_CHUNK_TYPE_ENCODE_COMPLETE };

    info.ChunkId.FrameNumber = frame;
    info.ChunkId.PartNumber = 3;
    info.ProcessingTime = 10;
    return rec.callbacks[id].DxgkCbReportChunkInfo(rec.callbacks[id].MiracastHandle, &info,
                                                   NULL, 0);
}

static NTSTATUS APIENTRY rec_create(PVOID ctx, DXGK_MIRACAST_CALLBACKS *cbs, PVOID *context,
                                    UINT *target)
{
    NTSTATUS status;
    UINT id;

    rec_enter();
    pthread_mutex_lock(&rec.lock);
    rec.adapter_ctx = ctx;
    status = rec.create_status;
    if (!status && rec.next_id + 1 >= REC_MAX_CONTEXTS)
        status = STATUS_NO_MEMORY;
    if (!status) {
        id = ++rec.next_id;
        rec.callbacks[id] = *cbs;
        rec.creates++;
        *context = (PVOID)(uintptr_t)id;
        *target = REC_TARGET_BASE + id;
    }
    pthread_mutex_unlock(&rec.lock);
    rec_leave();
    return status;
}

static void APIENTRY rec_destroy(PVOID ctx, PVOID context)
{
    UINT id = (UINT)(uintptr_t)context;

    rec_enter();
    pthread_mutex_lock(&rec.lock);
    rec.destroys++;
    rec.destroyed[id] = true;
    pthread_cond_broadcast(&rec.cond);
    pthread_mutex_unlock(&rec.lock);
    rec.chunk_in_destroy = rec_report_chunk(id, 99);
    if (!rec.skip_departure)
        rec.departure_status = rec_report_monitor(id, FALSE);
    rec_leave();
}

static NTSTATUS rec_gate(void)
{
    pthread_mutex_lock(&rec.lock);
    rec.in_gate++;
    pthread_cond_broadcast(&rec.cond);
    while (rec.gate_closed)
        pthread_cond_wait(&rec.cond, &rec.lock);
    rec.in_gate--;
    pthread_mutex_unlock(&rec.lock);
    return STATUS_SUCCESS;
}

static NTSTATUS rec_command(UINT id, const REC_CMD *cmd, ULONG in_size, const void *in,
                            ULONG out_size, void *out, ULONG *returned)
{
    switch (cmd->Code) {
    case REC_ECHO:
        *returned = in_size < out_size ? in_size : out_size;
        if (*returned)
            memcpy(out, in, *returned);
        return STATUS_SUCCESS;
    case REC_SLEEP:
        usleep(cmd->Arg);
        return STATUS_SUCCESS;
    case REC_GATE:
        return rec_gate();
    case REC_MONITOR:
        return rec_report_monitor(id, cmd->Arg != 0);
    case REC_CHUNK:
        return rec_report_chunk(id, cmd->Arg);
    default:
        return STATUS_INVALID_PARAMETER;
    }
}

static NTSTATUS APIENTRY rec_io_control(PVOID ctx, PVOID context, ULONG in_size, VOID *in,
                                        ULONG out_size, VOID *out, ULONG *returned)
{
    UINT id = (UINT)(uintptr_t)context;
    NTSTATUS status;

    rec_enter();
    if (atomic_load(&blocked_phase) && !pthread_equal(blocked_phase_owner, pthread_self()))
        __atomic_fetch_add(&rec.start_flag_violations, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&rec.lock);
    if (id >= REC_MAX_CONTEXTS || rec.destroyed[id])
        rec.late_ioctls++;
    rec.ioctls++;
    rec.last_in_size = in_size;
    rec.last_out_size = out_size;
    rec.last_driver_ctx = ctx;
    rec.last_context = context;
    pthread_mutex_unlock(&rec.lock);
    if (in_size < sizeof(REC_CMD))
        status = STATUS_INVALID_PARAMETER;
    else
        status = rec_command(id, in, in_size, in, out_size, out, returned);
    rec_leave();
    return status;
}

static NTSTATUS APIENTRY rec_start_device(PVOID ctx, DXGK_START_INFO *start, DXGKRNL_INTERFACE *iface,
                                          ULONG *sources, ULONG *children)
{
    rec.core = *iface;
    return soft_ddi.DxgkDdiStartDevice(ctx, start, iface, sources, children);
}

/* Miracast DDIs only for "mcrec"; "mcnone" is the plain soft miniport. */
static void rec_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiStartDevice = rec_start_device;
    ddi->DxgkDdiMiracastCreateContext = with_miracast ? rec_create : NULL;
    ddi->DxgkDdiMiracastDestroyContext = with_miracast ? rec_destroy : NULL;
    ddi->DxgkDdiMiracastIoControl = with_miracast ? rec_io_control : NULL;
}

static void rec_set_gate(bool closed)
{
    pthread_mutex_lock(&rec.lock);
    rec.gate_closed = closed;
    pthread_cond_broadcast(&rec.cond);
    pthread_mutex_unlock(&rec.lock);
}

/* Waits (10 s at most) until `count` IoControls sit in the gate. */
static bool rec_wait_in_gate(unsigned count)
{
    struct timespec deadline;
    bool ok = true;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&rec.lock);
    while (rec.in_gate < count && ok)
        ok = pthread_cond_timedwait(&rec.cond, &rec.lock, &deadline) != ETIMEDOUT;
    pthread_mutex_unlock(&rec.lock);
    return ok;
}

static unsigned rec_count(unsigned *field)
{
    unsigned v;

    pthread_mutex_lock(&rec.lock);
    v = *field;
    pthread_mutex_unlock(&rec.lock);
    return v;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static D3DKMT_HANDLE adapter;

static void use_rec(void)
{
    with_miracast = true;
    kmt_test_register_soft_variant("mcrec", rec_patch, &soft_ddi);
    kmt_test_use_miniport("mcrec");
    adapter = kmt_test_open_adapter();
    ck_assert_ptr_nonnull(rec.core.DxgkCbIndicateChildStatus);
}

static void use_soft(void)
{
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
}

static KMT_MIRACAST_SESSION_DESC session_desc(void)
{
    KMT_MIRACAST_SESSION_DESC d;

    memset(&d, 0, sizeof(d));
    d.hAdapter = adapter;
    return d;
}

static D3DKMT_HANDLE start_plain(void)
{
    KMT_MIRACAST_SESSION_DESC d = session_desc();

    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_local_handle(d.hSession);
    return d.hSession;
}

static NTSTATUS rec_ioctl(D3DKMT_HANDLE session, UINT code, UINT arg)
{
    REC_CMD cmd = { code, arg };
    UINT returned = 0xdead;
    NTSTATUS status = KmtMiracastIoControl(session, &cmd, sizeof(cmd), NULL, 0, &returned);

    return status ? status : (returned ? STATUS_INTERNAL_ERROR : STATUS_SUCCESS);
}

static KMT_MIRACAST_SESSION_STATUS query(D3DKMT_HANDLE session)
{
    KMT_MIRACAST_SESSION_STATUS st;

    memset(&st, 0xcc, sizeof(st));
    ck_assert_status(KmtMiracastQueryStatus(session, &st), STATUS_SUCCESS);
    return st;
}

static KMT_SOFT_MIRACAST_STATS soft_sink_stats(void)
{
    KMT_SOFT_ESCAPE e = kmt_test_soft_escape(adapter, KMT_SOFT_ESCAPE_GET_MIRACAST_STATS);
    KMT_SOFT_MIRACAST_STATS stats;

    memcpy(&stats, e.Data, sizeof(stats));
    return stats;
}

static uint64_t read_event(int fd)
{
    uint64_t v = 0;

    if (read(fd, &v, sizeof(v)) != sizeof(v))
        return 0;                        /* EAGAIN: never set */
    return v;
}

static int new_eventfd(void)
{
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

    ck_assert_int_ge(fd, 0);
    return fd;
}

/* Polls a session (10 s at most) until it is in `state` with at least
 * `departures` departures reported; usable from worker threads. */
static bool wait_state(D3DKMT_HANDLE session, UINT state, UINT departures)
{
    KMT_MIRACAST_SESSION_STATUS st;

    for (int i = 0; i < 10000; i++) {
        if (KmtMiracastQueryStatus(session, &st))
            return false;
        if (st.State == state && st.MonitorDepartures >= departures)
            return true;
        usleep(1000);
    }
    return false;
}

static void finish(void)
{
    kmt_test_shutdown_no_leaks();
}

/* ---- the software adapter's sink --------------------------------------------------------- */

static NTSTATUS sink_set_monitor(D3DKMT_HANDLE session, BOOL connected, INT type)
{
    KMT_SOFT_MIRACAST_SET_MONITOR_IN in = {
        { KMT_SOFT_MIRACAST_SET_MONITOR, sizeof(in) }, connected, type,
    };

    return KmtMiracastIoControl(session, &in, sizeof(in), NULL, 0, NULL);
}

static UINT fnv1a(const BYTE *p, UINT n)
{
    UINT h = 0x811c9dc5u;

    while (n--)
        h = (h ^ *p++) * 0x01000193u;
    return h;
}

struct chunk_msg {
    KMT_SOFT_MIRACAST_CHUNK_IN in;
    BYTE data[1000];
};

static NTSTATUS sink_send_chunk(D3DKMT_HANDLE session, UINT64 frame, UINT part, UINT encode_us,
                                KMT_SOFT_MIRACAST_CHUNK_OUT *out)
{
    struct chunk_msg m;
    UINT returned = 0;
    NTSTATUS status;

    memset(&m, 0, sizeof(m));
    m.in.Header.Code = KMT_SOFT_MIRACAST_SEND_CHUNK;
    m.in.Header.Size = sizeof(m);
    m.in.FrameNumber = frame;
    m.in.PartNumber = part;
    m.in.EncodeMicroseconds = encode_us;
    m.in.DataSize = sizeof(m.data);
    for (unsigned i = 0; i < sizeof(m.data); i++)
        m.data[i] = (BYTE)(i * 13 + frame);
    status = KmtMiracastIoControl(session, &m, sizeof(m), out, sizeof(*out), &returned);
    if (!status && returned != sizeof(*out))
        return STATUS_INTERNAL_ERROR;
    return status;
}

START_TEST(soft_session_round_trip)
{
    KMT_MIRACAST_SESSION_DESC d;
    KMT_SOFT_MIRACAST_HEADER hdr = { KMT_SOFT_MIRACAST_GET_SINK_INFO, sizeof(hdr) };
    KMT_SOFT_MIRACAST_SINK_INFO info;
    KMT_MIRACAST_SESSION_STATUS st, final;
    KMT_SOFT_MIRACAST_STATS stats;
    UINT returned = 0;

    use_soft();
    d = session_desc();
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_local_handle(d.hSession);
    ck_assert_uint_eq(d.TargetId, KMT_SOFT_MIRACAST_TARGET_ID);

    memset(&info, 0xcc, sizeof(info));
    ck_assert_status(KmtMiracastIoControl(d.hSession, &hdr, sizeof(hdr), &info, sizeof(info),
                                          &returned), STATUS_SUCCESS);
    ck_assert_uint_eq(returned, sizeof(info));
    ck_assert_uint_eq(info.TargetId, KMT_SOFT_MIRACAST_TARGET_ID);
    ck_assert_uint_eq(info.Width, 1920);
    ck_assert_uint_eq(info.Height, 1080);
    ck_assert_uint_eq(info.RefreshRate, 60);
    ck_assert_uint_eq(info.MaxChunkSize, 65536);
    ck_assert_int_eq(info.MonitorConnected, FALSE);

    st = query(d.hSession);
    ck_assert_uint_eq(st.State, KMT_MIRACAST_SESSION_ACTIVE);
    ck_assert_uint_eq(st.TargetId, KMT_SOFT_MIRACAST_TARGET_ID);
    ck_assert_uint_eq(st.IoControlsCompleted, 1);
    ck_assert_uint_eq(st.IoControlsRefused, 0);

    ck_assert_status(KmtMiracastStopSession(d.hSession, &final), STATUS_SUCCESS);
    ck_assert_uint_eq(final.State, KMT_MIRACAST_SESSION_DESTROYED);
    ck_assert_int_eq(final.DestroyedDuringStop, FALSE);
    /* the handle is gone */
    ck_assert_status(KmtMiracastQueryStatus(d.hSession, &st), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastIoControl(d.hSession, &hdr, sizeof(hdr), &info, sizeof(info), NULL),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastStopSession(d.hSession, NULL), STATUS_INVALID_PARAMETER);

    stats = soft_sink_stats();
    ck_assert_uint_eq(stats.ContextsCreated, 1);
    ck_assert_uint_eq(stats.ContextsDestroyed, 1);
    ck_assert_uint_eq(stats.IoControls, 1);
    ck_assert_uint_eq(stats.StaleIoControls, 0);
    ck_assert_uint_eq(stats.Overlaps, 0);
    finish();
}
END_TEST

START_TEST(soft_second_session_is_resource_in_use)
{
    KMT_MIRACAST_SESSION_DESC a = session_desc(), b;
    KMT_SOFT_MIRACAST_STATS stats;

    use_soft();
    a = session_desc();
    b = session_desc();
    ck_assert_status(KmtMiracastStartSession(&a), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStartSession(&b), STATUS_RESOURCE_IN_USE);
    ck_assert_uint_eq(b.hSession, 0);
    ck_assert_uint_eq(b.TargetId, 0);
    /* the first session is untouched by the refusal */
    ck_assert_uint_eq(query(a.hSession).State, KMT_MIRACAST_SESSION_ACTIVE);
    ck_assert_status(KmtMiracastStopSession(a.hSession, NULL), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStartSession(&b), STATUS_SUCCESS);
    ck_assert_uint_ne(b.hSession, a.hSession);
    ck_assert_status(KmtMiracastStopSession(b.hSession, NULL), STATUS_SUCCESS);
    stats = soft_sink_stats();
    ck_assert_uint_eq(stats.ContextsCreated, 2);
    ck_assert_uint_eq(stats.ContextsDestroyed, 2);
    finish();
}
END_TEST

static NTSTATUS APIENTRY connect_monitor(PVOID ctx, D3DKMT_HANDLE session)
{
    return sink_set_monitor(session, TRUE, D3DKMDT_VOT_HDMI);
}

START_TEST(soft_departure_is_observable)
{
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS st, final;
    int fd;

    use_soft();
    fd = new_eventfd();
    d = session_desc();
    d.hStatusEvent = (HANDLE)(intptr_t)fd;
    d.pfnStartSession = connect_monitor;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    /* STARTING, the sink's arrival report, ACTIVE */
    ck_assert_uint_eq(read_event(fd), 3);
    st = query(d.hSession);
    ck_assert_int_eq(st.MonitorConnected, TRUE);
    ck_assert_int_eq(st.MonitorType, D3DKMDT_VOT_HDMI);
    ck_assert_uint_eq(st.MonitorArrivals, 1);
    ck_assert_uint_eq(st.MonitorDepartures, 0);

    ck_assert_status(KmtMiracastStopSession(d.hSession, &final), STATUS_SUCCESS);
    /* STOPPING, DESTROYED, the sink's departure report */
    ck_assert_uint_eq(read_event(fd), 3);
    ck_assert_uint_eq(final.State, KMT_MIRACAST_SESSION_DESTROYED);
    ck_assert_int_eq(final.MonitorConnected, FALSE);
    ck_assert_uint_eq(final.MonitorArrivals, 1);
    ck_assert_uint_eq(final.MonitorDepartures, 1);
    ck_assert_int_eq(final.DepartureReportedAtDestroy, TRUE);
    close(fd);
    finish();
}
END_TEST

START_TEST(soft_chunks_are_encoded_and_reported)
{
    KMT_SOFT_MIRACAST_CHUNK_OUT out;
    KMT_MIRACAST_SESSION_STATUS st;
    KMT_SOFT_MIRACAST_STATS stats;
    DXGK_MIRACAST_CHUNK_ID id = { .Value = 0 };
    BYTE data[1000];
    D3DKMT_HANDLE s;

    use_soft();
    s = start_plain();
    /* no monitor yet: the chunk is dropped */
    memset(&out, 0xcc, sizeof(out));
    ck_assert_status(sink_send_chunk(s, 7, 1, 0, &out), STATUS_SUCCESS);
    ck_assert_int_eq(out.Dropped, TRUE);
    st = query(s);
    ck_assert_uint_eq(st.ChunksReported, 1);
    ck_assert_uint_eq(st.LastChunkType, DXGK_MIRACAST_CHUNK_TYPE_FRAME_DROPPED);

    ck_assert_status(sink_set_monitor(s, TRUE, D3DKMDT_VOT_MIRACAST), STATUS_SUCCESS);
    ck_assert_status(sink_send_chunk(s, 0x12345678ull, 0xabcd, 500, &out), STATUS_SUCCESS);
    id.FrameNumber = 0x12345678ull;
    id.PartNumber = 0xabcd;
    for (unsigned i = 0; i < sizeof(data); i++)
        data[i] = (BYTE)(i * 13 + 0x12345678ull);
    ck_assert_uint_eq(out.ChunkId, id.Value);
    ck_assert_uint_eq(out.ChunkId, 0x12345678ull | (0xabcdull << 40));
    ck_assert_uint_eq(out.Checksum, fnv1a(data, sizeof(data)));
    ck_assert_int_eq(out.Dropped, FALSE);
    st = query(s);
    ck_assert_uint_eq(st.ChunksReported, 2);
    ck_assert_uint_eq(st.LastChunkId, id.Value);
    ck_assert_uint_eq(st.LastChunkType, DXGK_MIRACAST_CHUNK_TYPE_ENCODE_COMPLETE);
    ck_assert_uint_eq(st.IoControlsCompleted, 3);

    /* frame numbers are 40 bits, parts 24 */
    ck_assert_status(sink_send_chunk(s, 1ull << 40, 0, 0, &out), STATUS_INVALID_PARAMETER);
    ck_assert_status(sink_send_chunk(s, 0, 1u << 24, 0, &out), STATUS_INVALID_PARAMETER);
    ck_assert_status(sink_send_chunk(s, 0, 0, KMT_SOFT_MIRACAST_MAX_ENCODE_US + 1, &out),
                     STATUS_INVALID_PARAMETER);
    stats = soft_sink_stats();
    ck_assert_uint_eq(stats.Chunks, 2);
    ck_assert_uint_eq(stats.DroppedChunks, 1);
    ck_assert_uint_eq(stats.BytesReceived, 2 * sizeof(data));
    ck_assert_status(KmtMiracastStopSession(s, NULL), STATUS_SUCCESS);
    finish();
}
END_TEST

START_TEST(soft_io_control_validates_input)
{
    KMT_SOFT_MIRACAST_HEADER hdr = { KMT_SOFT_MIRACAST_GET_SINK_INFO, sizeof(hdr) };
    KMT_SOFT_MIRACAST_SINK_INFO info;
    BYTE big[16] = { 0 };
    UINT returned = 0xdead;
    D3DKMT_HANDLE s;

    use_soft();
    s = start_plain();
    /* the miniport checks sizes itself (its answers, not the core's) */
    hdr.Size = 4;
    ck_assert_status(KmtMiracastIoControl(s, &hdr, sizeof(hdr), &info, sizeof(info), &returned),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(returned, 0);
    hdr.Size = sizeof(hdr);
    ck_assert_status(KmtMiracastIoControl(s, &hdr, sizeof(hdr), &info, sizeof(info) - 1, &returned),
                     STATUS_BUFFER_TOO_SMALL);
    ck_assert_status(KmtMiracastIoControl(s, &hdr, 4, &info, sizeof(info), &returned),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastIoControl(s, NULL, 0, &info, sizeof(info), &returned),
                     STATUS_INVALID_PARAMETER);
    hdr.Code = 77;
    ck_assert_status(KmtMiracastIoControl(s, &hdr, sizeof(hdr), big, sizeof(big), &returned),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(query(s).IoControlsCompleted, 5);
    ck_assert_uint_eq(soft_sink_stats().IoControls, 5);
    ck_assert_status(KmtMiracastStopSession(s, NULL), STATUS_SUCCESS);
    finish();
}
END_TEST

/* Many threads sending chunks through one session: the sink never sees two
 * Miracast-class DDIs at once. */
struct chunk_worker {
    D3DKMT_HANDLE session;
    unsigned index, ok;
    NTSTATUS bad;
};

static void *chunk_thread(void *arg)
{
    struct chunk_worker *w = arg;
    KMT_SOFT_MIRACAST_CHUNK_OUT out;

    for (unsigned i = 0; i < 40; i++) {
        NTSTATUS status = sink_send_chunk(w->session, w->index * 1000 + i, i, 200, &out);

        if (status)
            w->bad = status;
        else
            w->ok++;
    }
    return NULL;
}

START_TEST(soft_sink_sees_one_call_at_a_time)
{
    struct chunk_worker w[4];
    pthread_t t[4];
    KMT_SOFT_MIRACAST_STATS stats;
    D3DKMT_HANDLE s;

    use_soft();
    s = start_plain();
    for (unsigned i = 0; i < 4; i++) {
        w[i] = (struct chunk_worker){ .session = s, .index = i };
        ck_assert_int_eq(pthread_create(&t[i], NULL, chunk_thread, &w[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(!w[i].bad, "thread %u: 0x%08x", i, (unsigned)w[i].bad);
        ck_assert_uint_eq(w[i].ok, 40);
    }
    stats = soft_sink_stats();
    ck_assert_uint_eq(stats.Chunks, 160);
    ck_assert_uint_eq(stats.Overlaps, 0);
    ck_assert_uint_eq(query(s).ChunksReported, 160);
    ck_assert_status(KmtMiracastStopSession(s, NULL), STATUS_SUCCESS);
    finish();
}
END_TEST

/* ---- arguments and handles ------------------------------------------------------------------ */

START_TEST(bad_arguments_are_refused)
{
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS st;
    BYTE buf[16] = { 0 };
    D3DKMT_HANDLE s;
    unsigned live;

    use_soft();
    live = KmtLiveObjectCount();
    ck_assert_status(KmtMiracastStartSession(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastStartSession((KMT_MIRACAST_SESSION_DESC *)(uintptr_t)0x100),
                     STATUS_INVALID_PARAMETER);
    d = session_desc();
    d.hAdapter = 0;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_INVALID_PARAMETER);
    d.hAdapter = adapter + 0x40;         /* a free slot */
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_INVALID_PARAMETER);
    d = session_desc();
    d.hStatusEvent = (HANDLE)(intptr_t)9999;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_INVALID_HANDLE);
    d = session_desc();
    d.StopTimeoutMs = KMT_MIRACAST_MAX_STOP_TIMEOUT_MS + 1;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(d.hSession, 0);
    ck_assert_uint_eq(soft_sink_stats().ContextsCreated, 0);   /* nothing reached the sink */
    ck_assert_uint_eq(KmtLiveObjectCount(), live);

    s = start_plain();
    /* other handles are not sessions, and a session is not an adapter */
    ck_assert_status(KmtMiracastIoControl(0, buf, sizeof(buf), NULL, 0, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastIoControl(adapter, buf, sizeof(buf), NULL, 0, NULL),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastQueryStatus(adapter, &st), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastStopSession(adapter, NULL), STATUS_INVALID_PARAMETER);
    d = session_desc();
    d.hAdapter = s;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_INVALID_PARAMETER);
    /* buffers */
    ck_assert_status(KmtMiracastIoControl(s, NULL, 8, NULL, 0, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastIoControl(s, buf, sizeof(buf), NULL, 8, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastIoControl(s, buf, KMT_MIRACAST_MAX_IO_CONTROL_SIZE + 1, NULL, 0, NULL),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastIoControl(s, buf, sizeof(buf), NULL, 0, (UINT *)(uintptr_t)8),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastQueryStatus(s, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastStopSession(s, (KMT_MIRACAST_SESSION_STATUS *)(uintptr_t)8),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastReportSessionStatus(s, (MIRACAST_STATUS)6, STATUS_SUCCESS),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtMiracastReportSessionStatus(0, MIRACAST_STATUS_CRITICAL_ERROR, STATUS_SUCCESS),
                     STATUS_INVALID_PARAMETER);
    /* none of that reached the sink or changed the session */
    ck_assert_uint_eq(soft_sink_stats().IoControls, 0);
    st = query(s);
    ck_assert_uint_eq(st.State, KMT_MIRACAST_SESSION_ACTIVE);
    ck_assert_uint_eq(st.IoControlsCompleted, 0);
    ck_assert_uint_eq(st.IoControlsRefused, 0);
    ck_assert_int_eq(st.ErrorReported, FALSE);
    ck_assert_status(KmtMiracastStopSession(s, NULL), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStopSession(s, NULL), STATUS_INVALID_PARAMETER);
    finish();
}
END_TEST

START_TEST(reported_session_status_is_recorded)
{
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS st;
    int fd;

    use_soft();
    fd = new_eventfd();
    d = session_desc();
    d.hStatusEvent = (HANDLE)(intptr_t)fd;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_uint_eq(read_event(fd), 2);          /* STARTING, ACTIVE */
    ck_assert_status(KmtMiracastReportSessionStatus(d.hSession, MIRACAST_STATUS_MISSING_KEEPALIVE,
                                                    STATUS_TIMEOUT), STATUS_SUCCESS);
    ck_assert_uint_eq(read_event(fd), 1);
    st = query(d.hSession);
    ck_assert_int_eq(st.ErrorReported, TRUE);
    ck_assert_uint_eq(st.ReportedMiracastStatus, MIRACAST_STATUS_MISSING_KEEPALIVE);
    ck_assert_int_eq(st.ReportedStatus, STATUS_TIMEOUT);
    ck_assert_uint_eq(st.State, KMT_MIRACAST_SESSION_ACTIVE);   /* stopping is the owner's call */
    ck_assert_status(KmtMiracastStopSession(d.hSession, NULL), STATUS_SUCCESS);
    close(fd);
    finish();
}
END_TEST

START_TEST(miniport_without_miracast_is_not_supported)
{
    KMT_MIRACAST_SESSION_DESC d;

    with_miracast = false;
    kmt_test_register_soft_variant("mcnone", rec_patch, &soft_ddi);
    kmt_test_use_miniport("mcnone");
    adapter = kmt_test_open_adapter();
    d = session_desc();
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_NOT_SUPPORTED);
    ck_assert_uint_eq(d.hSession, 0);
    finish();
}
END_TEST

/* ---- the DDI contract, from the recording miniport --------------------------------------------- */

START_TEST(ddi_arguments_are_exact)
{
    BYTE in[24], out[32];
    REC_CMD *cmd = (REC_CMD *)in;
    KMT_MIRACAST_SESSION_DESC d;
    UINT returned = 0;

    use_rec();
    d = session_desc();
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_uint_eq(rec.creates, 1);
    ck_assert_uint_eq(d.TargetId, REC_TARGET_BASE + 1);
    /* the callback table names the session by its handle */
    ck_assert_ptr_eq(rec.callbacks[1].MiracastHandle, (HANDLE)(uintptr_t)d.hSession);
    ck_assert_ptr_nonnull(rec.callbacks[1].DxgkCbReportChunkInfo);

    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = (BYTE)(0x40 + i);
    cmd->Code = REC_ECHO;
    memset(out, 0xee, sizeof(out));
    ck_assert_status(KmtMiracastIoControl(d.hSession, in, sizeof(in), out, sizeof(out), &returned),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(rec.ioctls, 1);
    ck_assert_uint_eq(rec.last_in_size, sizeof(in));
    ck_assert_uint_eq(rec.last_out_size, sizeof(out));
    ck_assert_ptr_eq(rec.last_context, (PVOID)(uintptr_t)1);
    ck_assert_ptr_eq(rec.last_driver_ctx, rec.adapter_ctx);
    ck_assert_uint_eq(returned, sizeof(in));
    ck_assert_mem_eq(out, in, sizeof(in));
    for (unsigned i = sizeof(in); i < sizeof(out); i++)
        ck_assert_uint_eq(out[i], 0xee);    /* beyond BytesReturned: untouched */
    ck_assert_status(KmtMiracastStopSession(d.hSession, NULL), STATUS_SUCCESS);
    ck_assert_uint_eq(rec.destroys, 1);
    ck_assert_uint_eq(rec.late_ioctls, 0);
    finish();
}
END_TEST

START_TEST(create_failure_comes_back)
{
    KMT_MIRACAST_SESSION_DESC d;
    unsigned live;

    use_rec();
    live = KmtLiveObjectCount();
    rec.create_status = STATUS_RESOURCE_IN_USE;
    d = session_desc();
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_RESOURCE_IN_USE);
    ck_assert_uint_eq(d.hSession, 0);
    ck_assert_uint_eq(rec.destroys, 0);               /* nothing to destroy */
    /* only the adapter's Miracast state stays */
    ck_assert_uint_eq(KmtLiveObjectCount(), live + 1);
    rec.create_status = STATUS_SUCCESS;
    ck_assert_status(KmtMiracastStopSession(start_plain(), NULL), STATUS_SUCCESS);
    finish();
}
END_TEST

/* ---- start --------------------------------------------------------------------------------------- */

struct start_ctx {
    D3DKMT_HANDLE session;
    NTSTATUS own_ioctl, stop_from_start;
    NTSTATUS result;                     /* what the routine returns */
    /* another thread's IoControl during the start */
    pthread_t other;
    bool other_started;
    atomic_bool other_done;
    NTSTATUS other_status;
    bool other_done_during_start;
};

static void *other_ioctl_thread(void *arg)
{
    struct start_ctx *c = arg;

    c->other_status = rec_ioctl(c->session, REC_ECHO, 0);
    atomic_store(&c->other_done, true);
    return NULL;
}

static NTSTATUS APIENTRY start_routine(PVOID ctx, D3DKMT_HANDLE session)
{
    struct start_ctx *c = ctx;

    c->session = session;
    blocked_phase_owner = pthread_self();
    atomic_store(&blocked_phase, true);
    c->own_ioctl = rec_ioctl(session, REC_MONITOR, 1);
    c->stop_from_start = KmtMiracastStopSession(session, NULL);
    c->other_started = !pthread_create(&c->other, NULL, other_ioctl_thread, c);
    usleep(100 * 1000);                  /* time for the other thread to get wrongly through */
    c->other_done_during_start = atomic_load(&c->other_done);
    atomic_store(&blocked_phase, false);
    return c->result;
}

START_TEST(start_routine_owns_the_session)
{
    struct start_ctx c = { .result = STATUS_SUCCESS };
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS st;

    use_rec();
    d = session_desc();
    d.pfnStartSession = start_routine;
    d.pContext = &c;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_uint_eq(c.session, d.hSession);
    ck_assert_status(c.own_ioctl, STATUS_SUCCESS);               /* its own thread goes through */
    ck_assert_status(c.stop_from_start, STATUS_INVALID_DEVICE_STATE);
    ck_assert(c.other_started);
    pthread_join(c.other, NULL);
    ck_assert_int_eq(c.other_done_during_start, false);          /* others wait for the start */
    ck_assert_status(c.other_status, STATUS_SUCCESS);            /* ... and then go through */
    ck_assert_uint_eq(rec.start_flag_violations, 0);
    ck_assert_uint_eq(rec.ioctls, 2);
    st = query(d.hSession);
    ck_assert_int_eq(st.MonitorConnected, TRUE);
    ck_assert_uint_eq(st.IoControlsCompleted, 2);
    ck_assert_status(KmtMiracastStopSession(d.hSession, NULL), STATUS_SUCCESS);
    finish();
}
END_TEST

START_TEST(failed_start_destroys_the_context)
{
    struct start_ctx c = { .result = STATUS_DEVICE_NOT_CONNECTED };
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS st;

    use_rec();
    d = session_desc();
    d.pfnStartSession = start_routine;
    d.pContext = &c;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_DEVICE_NOT_CONNECTED);
    ck_assert_uint_eq(d.hSession, 0);
    pthread_join(c.other, NULL);
    /* the waiting thread is refused, not let through to a dead context */
    ck_assert_status(c.other_status, STATUS_DEVICE_NOT_CONNECTED);
    ck_assert_uint_eq(rec.creates, 1);
    ck_assert_uint_eq(rec.destroys, 1);
    ck_assert_uint_eq(rec.ioctls, 1);
    ck_assert_uint_eq(rec.late_ioctls, 0);
    ck_assert_status(rec.departure_status, STATUS_SUCCESS);
    ck_assert_status(KmtMiracastQueryStatus(c.session, &st), STATUS_INVALID_PARAMETER);
    finish();
}
END_TEST

/* ---- stop ------------------------------------------------------------------------------------------ */

struct stop_ctx {
    NTSTATUS own_before, own_after, other, stop_again;
    bool saw_destroyed;
    KMT_MIRACAST_SESSION_STATUS during;
    unsigned destroys_seen, ioctls_seen;
    bool wait_for_destroy;
};

struct other_call {
    D3DKMT_HANDLE session;
    NTSTATUS status;
};

static void *other_call_thread(void *arg)
{
    struct other_call *o = arg;

    o->status = rec_ioctl(o->session, REC_ECHO, 0);
    return NULL;
}

static NTSTATUS ioctl_from_other_thread(D3DKMT_HANDLE session)
{
    struct other_call o = { session, STATUS_INTERNAL_ERROR };
    pthread_t t;

    if (pthread_create(&t, NULL, other_call_thread, &o))
        return STATUS_INTERNAL_ERROR;
    pthread_join(t, NULL);
    return o.status;
}

static void APIENTRY stop_routine(PVOID ctx, D3DKMT_HANDLE session)
{
    struct stop_ctx *c = ctx;

    c->own_before = rec_ioctl(session, REC_ECHO, 0);
    c->stop_again = KmtMiracastStopSession(session, NULL);
    if (c->wait_for_destroy) {
        /* the slow stop: still running when the core destroys the context */
        c->saw_destroyed = wait_state(session, KMT_MIRACAST_SESSION_DESTROYED, 1);
        c->destroys_seen = rec_count(&rec.destroys);
        KmtMiracastQueryStatus(session, &c->during);
    }
    c->other = ioctl_from_other_thread(session);
    c->own_after = rec_ioctl(session, REC_ECHO, 0);
    c->ioctls_seen = rec_count(&rec.ioctls);
}

START_TEST(stop_refuses_other_threads)
{
    struct stop_ctx c = { 0 };
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS final;

    use_rec();
    d = session_desc();
    d.pfnStopSession = stop_routine;
    d.pContext = &c;
    d.StopTimeoutMs = 60000;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStopSession(d.hSession, &final), STATUS_SUCCESS);
    ck_assert_status(c.own_before, STATUS_SUCCESS);
    ck_assert_status(c.stop_again, STATUS_INVALID_DEVICE_STATE);
    ck_assert_status(c.other, STATUS_INVALID_DEVICE_STATE);       /* the OS fails it */
    ck_assert_status(c.own_after, STATUS_SUCCESS);                /* context still alive */
    ck_assert_uint_eq(c.ioctls_seen, 2);
    ck_assert_uint_eq(rec.destroys, 1);
    ck_assert_uint_eq(rec.late_ioctls, 0);
    ck_assert_int_eq(final.DestroyedDuringStop, FALSE);
    ck_assert_uint_eq(final.IoControlsCompleted, 2);
    ck_assert_uint_eq(final.IoControlsRefused, 1);
    finish();
}
END_TEST

START_TEST(destroy_during_slow_stop_blocks_io_control)
{
    struct stop_ctx c = { .wait_for_destroy = true };
    KMT_MIRACAST_SESSION_DESC d;
    KMT_MIRACAST_SESSION_STATUS final;
    int fd;

    use_rec();
    fd = new_eventfd();
    d = session_desc();
    d.pfnStopSession = stop_routine;
    d.pContext = &c;
    d.StopTimeoutMs = 50;
    d.hStatusEvent = (HANDLE)(intptr_t)fd;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    ck_assert_status(rec_ioctl(d.hSession, REC_MONITOR, 1), STATUS_SUCCESS);
    ck_assert_uint_eq(read_event(fd), 3);        /* STARTING, ACTIVE, arrival */

    ck_assert_status(KmtMiracastStopSession(d.hSession, &final), STATUS_SUCCESS);
    ck_assert_status(c.own_before, STATUS_SUCCESS);
    ck_assert(c.saw_destroyed);
    ck_assert_uint_eq(c.destroys_seen, 1);       /* DestroyContext ran under the stop routine */
    /* the departure was visible to the stop routine already */
    ck_assert_uint_eq(c.during.State, KMT_MIRACAST_SESSION_DESTROYED);
    ck_assert_int_eq(c.during.MonitorConnected, FALSE);
    ck_assert_uint_eq(c.during.MonitorDepartures, 1);
    ck_assert_int_eq(c.during.DestroyedDuringStop, TRUE);
    /* from then on nothing reaches the miniport, not even the stop routine's own calls */
    ck_assert_status(c.other, STATUS_DEVICE_NOT_CONNECTED);
    ck_assert_status(c.own_after, STATUS_DEVICE_NOT_CONNECTED);
    ck_assert_uint_eq(c.ioctls_seen, 2);         /* the arrival and own_before */
    ck_assert_uint_eq(rec.ioctls, 2);
    ck_assert_uint_eq(rec.late_ioctls, 0);
    ck_assert_uint_eq(rec.destroys, 1);          /* once, not again at the end of the stop */
    ck_assert_uint_eq(atomic_load(&rec.overlaps), 0);
    ck_assert_int_eq(final.DestroyedDuringStop, TRUE);
    ck_assert_int_eq(final.DepartureReportedAtDestroy, TRUE);
    ck_assert_uint_eq(final.IoControlsRefused, 2);
    /* STOPPING, DESTROYED, departure */
    ck_assert_uint_eq(read_event(fd), 3);
    close(fd);
    finish();
}
END_TEST

START_TEST(departure_not_reported_is_noted)
{
    KMT_MIRACAST_SESSION_STATUS final;
    D3DKMT_HANDLE s;

    use_rec();
    rec.skip_departure = true;
    s = start_plain();
    ck_assert_status(rec_ioctl(s, REC_MONITOR, 1), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStopSession(s, &final), STATUS_SUCCESS);
    /* the target is gone either way, but the miniport broke the contract */
    ck_assert_int_eq(final.MonitorConnected, FALSE);
    ck_assert_uint_eq(final.MonitorDepartures, 0);
    ck_assert_int_eq(final.DepartureReportedAtDestroy, FALSE);
    finish();
}
END_TEST

/* ---- callbacks ---------------------------------------------------------------------------------------- */

START_TEST(callbacks_follow_the_context)
{
    DXGK_CHILD_STATUS cs = { .Type = StatusMiracastConnection };
    KMT_MIRACAST_SESSION_STATUS st;
    DXGK_MIRACAST_CALLBACKS cbs;
    DXGK_MIRACAST_CHUNK_INFO info = { 0 };
    D3DKMT_HANDLE s;
    int dummy;

    use_rec();
    s = start_plain();
    cbs = rec.callbacks[1];
    /* chunk reports */
    ck_assert_status(rec_ioctl(s, REC_CHUNK, 5), STATUS_SUCCESS);
    st = query(s);
    ck_assert_uint_eq(st.ChunksReported, 1);
    ck_assert_uint_eq(st.LastChunkId, 5ull | (3ull << 40));
    ck_assert_status(cbs.DxgkCbReportChunkInfo(cbs.MiracastHandle, &info, &dummy, 0),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(cbs.DxgkCbReportChunkInfo(cbs.MiracastHandle, &info, NULL, 4),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(cbs.DxgkCbReportChunkInfo(cbs.MiracastHandle, NULL, NULL, 0),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(cbs.DxgkCbReportChunkInfo((HANDLE)(uintptr_t)adapter, &info, NULL, 0),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(cbs.DxgkCbReportChunkInfo((HANDLE)(uintptr_t)0x1234567890ull, &info, NULL, 0),
                     STATUS_INVALID_PARAMETER);
    /* child status: only the live Miracast target */
    cs.ChildUid = REC_TARGET_BASE + 7;
    cs.Miracast.Connected = TRUE;
    ck_assert_status(rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, &cs),
                     STATUS_INVALID_PARAMETER);
    cs.Type = StatusConnection;          /* a monitor child, and the adapter has none */
    cs.ChildUid = REC_TARGET_BASE + 1;
    ck_assert_status(rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, &cs),
                     STATUS_INVALID_PARAMETER);
    cs.Type = StatusRotation;
    ck_assert_status(rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, &cs),
                     STATUS_NOT_SUPPORTED);
    cs.Type = (DXGK_CHILD_STATUS_TYPE)9;
    ck_assert_status(rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, &cs),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, NULL),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(query(s).MonitorArrivals, 0);

    ck_assert_status(KmtMiracastStopSession(s, NULL), STATUS_SUCCESS);
    /* inside DestroyContext: no more chunks, but the departure is taken */
    ck_assert_status(rec.chunk_in_destroy, STATUS_DEVICE_NOT_CONNECTED);
    ck_assert_status(rec.departure_status, STATUS_SUCCESS);
    /* after it: the handle and the target are gone */
    ck_assert_status(cbs.DxgkCbReportChunkInfo(cbs.MiracastHandle, &info, NULL, 0),
                     STATUS_INVALID_PARAMETER);
    cs.Type = StatusMiracastConnection;
    cs.Miracast.Connected = FALSE;
    ck_assert_status(rec.core.DxgkCbIndicateChildStatus(rec.core.DeviceHandle, &cs),
                     STATUS_INVALID_PARAMETER);
    finish();
}
END_TEST

/* ---- serialization -------------------------------------------------------------------------------------- */

struct gate_call {
    D3DKMT_HANDLE session;
    UINT code;
    NTSTATUS status;
    atomic_bool done;
};

static void *gate_call_thread(void *arg)
{
    struct gate_call *g = arg;

    g->status = rec_ioctl(g->session, g->code, 0);
    atomic_store(&g->done, true);
    return NULL;
}

static void *start_session_thread(void *arg)
{
    struct gate_call *g = arg;
    KMT_MIRACAST_SESSION_DESC d = session_desc();

    g->status = KmtMiracastStartSession(&d);
    g->session = d.hSession;
    atomic_store(&g->done, true);
    return NULL;
}

START_TEST(class_is_serialized_other_ddis_run)
{
    struct gate_call held = { .code = REC_GATE }, queued = { .code = REC_ECHO }, creating = { 0 };
    pthread_t t_held, t_queued, t_create;
    D3DKMT_HANDLE a, b, device, alloc[2];
    D3DKMT_DESTROYALLOCATION2 da = { 0 };
    KMT_SOFT_ESCAPE e;

    use_rec();
    a = start_plain();
    b = start_plain();                   /* two sessions: the class spans the adapter */
    held.session = a;
    queued.session = b;
    rec_set_gate(true);
    ck_assert_int_eq(pthread_create(&t_held, NULL, gate_call_thread, &held), 0);
    ck_assert(rec_wait_in_gate(1));
    ck_assert_int_eq(pthread_create(&t_queued, NULL, gate_call_thread, &queued), 0);
    ck_assert_int_eq(pthread_create(&t_create, NULL, start_session_thread, &creating), 0);

    /* a Miracast call is held in the miniport: every other DDI still runs */
    device = kmt_test_create_device(NULL);
    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, alloc, NULL), STATUS_SUCCESS);
    e = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(e.Stats.Allocations, 2);
    da.hDevice = device;
    da.phAllocationList = alloc;
    da.AllocationCount = 2;
    ck_assert_status(D3DKMTDestroyAllocation2(&da), STATUS_SUCCESS);
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ device }), STATUS_SUCCESS);

    /* ... but no other Miracast-class call gets in, whatever its session */
    usleep(100 * 1000);
    ck_assert_int_eq(atomic_load(&queued.done), false);
    ck_assert_int_eq(atomic_load(&creating.done), false);
    ck_assert_uint_eq(rec_count(&rec.ioctls), 1);
    ck_assert_uint_eq(rec_count(&rec.creates), 2);

    rec_set_gate(false);
    pthread_join(t_held, NULL);
    pthread_join(t_queued, NULL);
    pthread_join(t_create, NULL);
    ck_assert_status(held.status, STATUS_SUCCESS);
    ck_assert_status(queued.status, STATUS_SUCCESS);
    ck_assert_status(creating.status, STATUS_SUCCESS);
    ck_assert_uint_eq(rec.ioctls, 2);
    ck_assert_uint_eq(rec.creates, 3);
    ck_assert_uint_eq(atomic_load(&rec.overlaps), 0);
    ck_assert_status(KmtMiracastStopSession(a, NULL), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStopSession(b, NULL), STATUS_SUCCESS);
    ck_assert_status(KmtMiracastStopSession(creating.session, NULL), STATUS_SUCCESS);
    finish();
}
END_TEST

/* ---- IoControl racing the destroy ---------------------------------------------------------------------- */

#define RACERS 4

struct racer {
    D3DKMT_HANDLE session;
    atomic_uint ok;
    unsigned refused, after_refusal_ok;
    NTSTATUS unexpected;
};

static atomic_bool race_go;

static void *racer_thread(void *arg)
{
    struct racer *r = arg;

    while (!atomic_load(&race_go))
        ;
    for (;;) {
        NTSTATUS status = rec_ioctl(r->session, REC_SLEEP, 50);

        if (!status) {
            atomic_fetch_add(&r->ok, 1);
            if (r->refused)
                r->after_refusal_ok++;   /* refused, then through again: wrong */
        } else if (status == STATUS_INVALID_DEVICE_STATE || status == STATUS_DEVICE_NOT_CONNECTED) {
            r->refused++;
        } else if (status == STATUS_INVALID_PARAMETER) {
            break;                       /* the handle is closed: the session is over */
        } else {
            r->unexpected = status;
            break;
        }
    }
    return NULL;
}

static void race_once(UINT stop_timeout, PKMT_MIRACAST_STOP_SESSION stop, void *stop_ctx)
{
    struct racer r[RACERS];
    pthread_t t[RACERS];
    KMT_MIRACAST_SESSION_DESC d = session_desc();
    KMT_MIRACAST_SESSION_STATUS final;
    unsigned ok = 0;

    d.StopTimeoutMs = stop_timeout;
    d.pfnStopSession = stop;
    d.pContext = stop_ctx;
    ck_assert_status(KmtMiracastStartSession(&d), STATUS_SUCCESS);
    atomic_store(&race_go, false);
    for (unsigned i = 0; i < RACERS; i++) {
        r[i] = (struct racer){ .session = d.hSession };
        ck_assert_int_eq(pthread_create(&t[i], NULL, racer_thread, &r[i]), 0);
    }
    atomic_store(&race_go, true);
    /* every racer is in its loop when the stop comes */
    for (unsigned i = 0, waited = 0; i < RACERS; waited++) {
        ck_assert_uint_lt(waited, 10000);
        if (atomic_load(&r[i].ok) || r[i].unexpected)
            i++;
        else
            usleep(1000);
    }
    ck_assert_status(KmtMiracastStopSession(d.hSession, &final), STATUS_SUCCESS);
    for (unsigned i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(!r[i].unexpected, "racer %u: 0x%08x", i, (unsigned)r[i].unexpected);
        ck_assert_uint_eq(r[i].after_refusal_ok, 0);
        ck_assert_uint_gt(atomic_load(&r[i].ok), 0);
        ok += atomic_load(&r[i].ok);
    }
    /* each IoControl completed before the destroy or was refused: every
     * success reached the miniport, nothing reached it late */
    ck_assert_uint_eq(final.IoControlsCompleted, ok);
    ck_assert_uint_eq(rec_count(&rec.late_ioctls), 0);
    ck_assert_uint_eq(atomic_load(&rec.overlaps), 0);
}

START_TEST(io_control_races_destroy)
{
    use_rec();
    for (unsigned i = 0; i < 20; i++)
        race_once(0, NULL, NULL);
    ck_assert_uint_eq(rec.destroys, 20);
    finish();
}
END_TEST

static void APIENTRY slow_stop(PVOID ctx, D3DKMT_HANDLE session)
{
    wait_state(session, KMT_MIRACAST_SESSION_DESTROYED, 0);
    usleep(2000);                        /* racers keep knocking on a destroyed context */
}

START_TEST(io_control_races_destroy_during_slow_stop)
{
    use_rec();
    for (unsigned i = 0; i < 10; i++)
        race_once(5, slow_stop, NULL);
    ck_assert_uint_eq(rec.destroys, 10);
    finish();
}
END_TEST

/* ---- process exit ---------------------------------------------------------------------------------------- */

START_TEST(shutdown_destroys_open_sessions)
{
    D3DKMT_HANDLE s;

    use_rec();
    s = start_plain();
    ck_assert_status(rec_ioctl(s, REC_MONITOR, 1), STATUS_SUCCESS);
    start_plain();
    KmtProcessShutdown();
    ck_assert_uint_eq(rec.destroys, 2);
    ck_assert_status(rec.departure_status, STATUS_SUCCESS);
    ck_assert_uint_eq(rec.late_ioctls, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    /* a fresh start: the old handle means nothing */
    adapter = kmt_test_open_adapter();
    ck_assert_status(KmtMiracastIoControl(s, &(REC_CMD){ REC_ECHO, 0 }, sizeof(REC_CMD), NULL, 0, NULL),
                     STATUS_INVALID_PARAMETER);
    finish();
}
END_TEST

START_TEST(soft_shutdown_with_open_session)
{
    use_soft();
    ck_assert_status(sink_set_monitor(start_plain(), TRUE, D3DKMDT_VOT_HDMI), STATUS_SUCCESS);
    finish();                            /* the sink's context is destroyed, nothing leaks */
}
END_TEST

static Suite *miracast_suite(void)
{
    Suite *s = suite_create("miracast");
    TCase *soft = tcase_create("soft_sink");
    TCase *api = tcase_create("api");
    TCase *ddi = tcase_create("ddi_contract");
    TCase *race = tcase_create("races");

    tcase_add_test(soft, soft_session_round_trip);
    tcase_add_test(soft, soft_second_session_is_resource_in_use);
    tcase_add_test(soft, soft_departure_is_observable);
    tcase_add_test(soft, soft_chunks_are_encoded_and_reported);
    tcase_add_test(soft, soft_io_control_validates_input);
    tcase_add_test(soft, soft_sink_sees_one_call_at_a_time);
    tcase_add_test(soft, soft_shutdown_with_open_session);
    suite_add_tcase(s, soft);

    tcase_add_test(api, bad_arguments_are_refused);
    tcase_add_test(api, reported_session_status_is_recorded);
    tcase_add_test(api, miniport_without_miracast_is_not_supported);
    suite_add_tcase(s, api);

    tcase_add_test(ddi, ddi_arguments_are_exact);
    tcase_add_test(ddi, create_failure_comes_back);
    tcase_add_test(ddi, start_routine_owns_the_session);
    tcase_add_test(ddi, failed_start_destroys_the_context);
    tcase_add_test(ddi, stop_refuses_other_threads);
    tcase_add_test(ddi, destroy_during_slow_stop_blocks_io_control);
    tcase_add_test(ddi, departure_not_reported_is_noted);
    tcase_add_test(ddi, callbacks_follow_the_context);
    tcase_add_test(ddi, shutdown_destroys_open_sessions);
    suite_add_tcase(s, ddi);

    tcase_set_timeout(race, 120);
    tcase_add_test(race, class_is_serialized_other_ddis_run);
    tcase_add_test(race, io_control_races_destroy);
    tcase_add_test(race, io_control_races_destroy_during_slow_stop);
    suite_add_tcase(s, race);
    return s;
}

int main(void)
{
    return kmt_test_run(miracast_suite());
}
