/*
 * Software miniport: a virtual Miracast sink (the IoControl format is in
 * kmtmiracast.h).  One target, one kernel context at a time; the "encoder"
 * checksums what it is sent and logs each chunk with DxgkCbReportChunkInfo.
 *
 * The sink keeps counters a core bug would show: IoControls for a context it
 * no longer has (contexts are ids, never pointers, so a late call is counted
 * instead of touching freed memory) and Miracast-class DDIs running at once.
 */
#include <stdlib.h>
#include <string.h>

#include "soft.h"
#include "base/kmt_time.h"

#define SINK_WIDTH 1920u
#define SINK_HEIGHT 1080u
#define SINK_REFRESH 60u
#define SINK_MAX_CHUNK (64u * 1024u)

struct soft_miracast_context {
    UINT64 id;                           /* what the core holds as MiracastContext */
    DXGK_MIRACAST_CALLBACKS callbacks;
    BOOL monitor_connected;
    INT monitor_type;
};

void soft_miracast_init(struct soft_adapter *a)
{
    pthread_mutex_init(&a->miracast.lock, NULL);
    atomic_init(&a->miracast.in_ddi, 0);
    atomic_init(&a->miracast.overlaps, 0);
}

void soft_miracast_fini(struct soft_adapter *a)
{
    if (a->miracast.live)
        soft_trace(a, KMT_TRACE_ERR, __func__, "removed with a Miracast context alive\n");
    free(a->miracast.live);
    pthread_mutex_destroy(&a->miracast.lock);
}

void soft_miracast_stats(struct soft_adapter *a, KMT_SOFT_MIRACAST_STATS *stats)
{
    pthread_mutex_lock(&a->miracast.lock);
    *stats = a->miracast.stats;
    pthread_mutex_unlock(&a->miracast.lock);
    stats->Overlaps = atomic_load(&a->miracast.overlaps);
}

/* The Miracast class is serialized by the core; count it when it is not. */
static void ddi_enter(struct soft_adapter *a)
{
    if (atomic_fetch_add(&a->miracast.in_ddi, 1))
        atomic_fetch_add(&a->miracast.overlaps, 1);
}

static void ddi_leave(struct soft_adapter *a)
{
    atomic_fetch_sub(&a->miracast.in_ddi, 1);
}

static NTSTATUS report_monitor(struct soft_adapter *a, BOOL connected, INT type)
{
    DXGK_CHILD_STATUS cs;

    if (!a->dxgkrnl.DxgkCbIndicateChildStatus)
        return STATUS_NOT_SUPPORTED;     /* a core older than 1.2 */
    memset(&cs, 0, sizeof(cs));
    cs.Type = StatusMiracastConnection;
    cs.ChildUid = KMT_SOFT_MIRACAST_TARGET_ID;
    cs.Miracast.Connected = connected ? TRUE : FALSE;
    cs.Miracast.MiracastMonitorType = (D3DKMDT_VIDEO_OUTPUT_TECHNOLOGY)type;
    return a->dxgkrnl.DxgkCbIndicateChildStatus(a->dxgkrnl.DeviceHandle, &cs);
}

NTSTATUS APIENTRY soft_miracast_create_context(PVOID ctx, DXGK_MIRACAST_CALLBACKS *callbacks,
                                               PVOID *miracast_context, UINT *target_id)
{
    struct soft_adapter *a = ctx;
    struct soft_miracast_context *mc;
    NTSTATUS status = STATUS_SUCCESS;

    if (!callbacks || !miracast_context || !target_id)
        return STATUS_INVALID_PARAMETER;
    if (!(mc = calloc(1, sizeof(*mc))))
        return STATUS_NO_MEMORY;
    ddi_enter(a);
    mc->callbacks = *callbacks;
    mc->monitor_type = D3DKMDT_VOT_MIRACAST;
    pthread_mutex_lock(&a->miracast.lock);
    if (a->miracast.live) {
        status = STATUS_RESOURCE_IN_USE;     /* the one sink is taken */
    } else {
        mc->id = ++a->miracast.last_id;
        a->miracast.live = mc;
        a->miracast.stats.ContextsCreated++;
    }
    pthread_mutex_unlock(&a->miracast.lock);
    ddi_leave(a);
    if (status) {
        free(mc);
        return status;
    }
    *miracast_context = (PVOID)(uintptr_t)mc->id;
    *target_id = KMT_SOFT_MIRACAST_TARGET_ID;
    soft_trace(a, KMT_TRACE_TRACE, __func__, "context %llu\n", (unsigned long long)mc->id);
    return STATUS_SUCCESS;
}

/* The live context with this id; counts a stale one.  Sink lock held. */
static struct soft_miracast_context *live_context_locked(struct soft_adapter *a, PVOID id)
{
    struct soft_miracast_context *mc = a->miracast.live;

    if (mc && mc->id == (uintptr_t)id)
        return mc;
    a->miracast.stats.StaleIoControls++;
    return NULL;
}

void APIENTRY soft_miracast_destroy_context(PVOID ctx, PVOID miracast_context)
{
    struct soft_adapter *a = ctx;
    struct soft_miracast_context *mc;

    ddi_enter(a);
    pthread_mutex_lock(&a->miracast.lock);
    mc = a->miracast.live;
    if (mc && mc->id == (uintptr_t)miracast_context) {
        a->miracast.live = NULL;
        a->miracast.stats.ContextsDestroyed++;
    } else {
        mc = NULL;
    }
    pthread_mutex_unlock(&a->miracast.lock);
    if (!mc) {
        soft_trace(a, KMT_TRACE_ERR, __func__, "unknown context %p\n", miracast_context);
        ddi_leave(a);
        return;
    }
    /* dispmprt: report the monitor's departure at once */
    report_monitor(a, FALSE, mc->monitor_type);
    free(mc);
    ddi_leave(a);
}

/* ---- IoControl commands ----------------------------------------------------------------- */

static NTSTATUS sink_info(struct soft_adapter *a, struct soft_miracast_context *mc, VOID *out,
                          ULONG out_size, ULONG *returned)
{
    KMT_SOFT_MIRACAST_SINK_INFO info = {
        .TargetId = KMT_SOFT_MIRACAST_TARGET_ID,
        .Width = SINK_WIDTH,
        .Height = SINK_HEIGHT,
        .RefreshRate = SINK_REFRESH,
        .MaxChunkSize = SINK_MAX_CHUNK,
    };

    if (out_size < sizeof(info))
        return STATUS_BUFFER_TOO_SMALL;
    pthread_mutex_lock(&a->miracast.lock);
    info.MonitorConnected = mc->monitor_connected;
    pthread_mutex_unlock(&a->miracast.lock);
    memcpy(out, &info, sizeof(info));
    *returned = sizeof(info);
    return STATUS_SUCCESS;
}

static NTSTATUS set_monitor(struct soft_adapter *a, struct soft_miracast_context *mc,
                            const VOID *in, ULONG in_size)
{
    const KMT_SOFT_MIRACAST_SET_MONITOR_IN *req = in;

    if (in_size != sizeof(*req))
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&a->miracast.lock);
    mc->monitor_connected = req->Connected ? TRUE : FALSE;
    if (req->Connected)
        mc->monitor_type = req->MonitorType;
    pthread_mutex_unlock(&a->miracast.lock);
    return report_monitor(a, req->Connected, req->MonitorType);
}

static UINT fnv1a(const BYTE *data, UINT size)
{
    UINT h = 0x811c9dc5u;

    for (UINT i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x01000193u;
    return h;
}

static NTSTATUS send_chunk(struct soft_adapter *a, struct soft_miracast_context *mc,
                           const VOID *in, ULONG in_size, VOID *out, ULONG out_size,
                           ULONG *returned)
{
    const KMT_SOFT_MIRACAST_CHUNK_IN *req = in;
    DXGK_MIRACAST_CHUNK_INFO info;
    KMT_SOFT_MIRACAST_CHUNK_OUT res;

    if (in_size < sizeof(*req) || req->DataSize > SINK_MAX_CHUNK ||
        in_size != sizeof(*req) + req->DataSize || req->FrameNumber >> 40 ||
        req->PartNumber >> 24 || req->EncodeMicroseconds > KMT_SOFT_MIRACAST_MAX_ENCODE_US)
        return STATUS_INVALID_PARAMETER;
    if (out_size < sizeof(res))
        return STATUS_BUFFER_TOO_SMALL;
    kmt_sleep_ns((UINT64)req->EncodeMicroseconds * 1000);
    memset(&info, 0, sizeof(info));
    memset(&res, 0, sizeof(res));
    info.ChunkId.FrameNumber = req->FrameNumber;
    info.ChunkId.PartNumber = req->PartNumber;
    info.ProcessingTime = req->EncodeMicroseconds;
    if (req->EncodeMicroseconds)
        info.EncodeRate = (UINT)((UINT64)req->DataSize * 8 * 1000 / req->EncodeMicroseconds);
    res.ChunkId = info.ChunkId.Value;
    res.Checksum = fnv1a((const BYTE *)(req + 1), req->DataSize);
    pthread_mutex_lock(&a->miracast.lock);
    res.Dropped = !mc->monitor_connected;
    a->miracast.stats.Chunks++;
    a->miracast.stats.BytesReceived += req->DataSize;
    a->miracast.stats.DroppedChunks += res.Dropped ? 1 : 0;
    pthread_mutex_unlock(&a->miracast.lock);
    info.ChunkType = res.Dropped ? DXGK_MIRACAST_CHUNK_TYPE_FRAME_DROPPED
                                 : DXGK_MIRACAST_CHUNK_TYPE_ENCODE_COMPLETE;
    mc->callbacks.DxgkCbReportChunkInfo(mc->callbacks.MiracastHandle, &info, NULL, 0);
    memcpy(out, &res, sizeof(res));
    *returned = sizeof(res);
    return STATUS_SUCCESS;
}

static NTSTATUS sink_stats(struct soft_adapter *a, VOID *out, ULONG out_size, ULONG *returned)
{
    KMT_SOFT_MIRACAST_STATS stats;

    if (out_size < sizeof(stats))
        return STATUS_BUFFER_TOO_SMALL;
    soft_miracast_stats(a, &stats);
    memcpy(out, &stats, sizeof(stats));
    *returned = sizeof(stats);
    return STATUS_SUCCESS;
}

static NTSTATUS dispatch(struct soft_adapter *a, struct soft_miracast_context *mc, ULONG in_size,
                         VOID *in, ULONG out_size, VOID *out, ULONG *returned)
{
    const KMT_SOFT_MIRACAST_HEADER *hdr = in;

    /* C16: the miniport checks sizes itself */
    if (!in || in_size < sizeof(*hdr) || hdr->Size != in_size || (out_size && !out))
        return STATUS_INVALID_PARAMETER;
    switch (hdr->Code) {
    case KMT_SOFT_MIRACAST_GET_SINK_INFO:
        return sink_info(a, mc, out, out_size, returned);
    case KMT_SOFT_MIRACAST_SET_MONITOR:
        return set_monitor(a, mc, in, in_size);
    case KMT_SOFT_MIRACAST_SEND_CHUNK:
        return send_chunk(a, mc, in, in_size, out, out_size, returned);
    case KMT_SOFT_MIRACAST_GET_STATS:
        return sink_stats(a, out, out_size, returned);
    default:
        return STATUS_INVALID_PARAMETER;
    }
}

NTSTATUS APIENTRY soft_miracast_io_control(PVOID ctx, PVOID miracast_context, ULONG in_size,
                                           VOID *in, ULONG out_size, VOID *out, ULONG *returned)
{
    struct soft_adapter *a = ctx;
    struct soft_miracast_context *mc;
    NTSTATUS status;

    ddi_enter(a);
    *returned = 0;
    pthread_mutex_lock(&a->miracast.lock);
    if ((mc = live_context_locked(a, miracast_context)))
        a->miracast.stats.IoControls++;
    pthread_mutex_unlock(&a->miracast.lock);
    if (!mc) {
        soft_trace(a, KMT_TRACE_ERR, __func__, "IoControl for unknown context %p\n",
                   miracast_context);
        ddi_leave(a);
        return STATUS_INVALID_PARAMETER;
    }
    /* mc stays valid: destroy is never called while an IoControl runs */
    status = dispatch(a, mc, in_size, in, out_size, out, returned);
    ddi_leave(a);
    return status;
}
