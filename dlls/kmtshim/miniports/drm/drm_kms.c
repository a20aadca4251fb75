/*
 * DRM miniport: VidPn sources from KMS - enumeration, modes, child status.
 *
 * Sources are per CRTC: a connector is counted when it is connected and a
 * CRTC drives it (its encoder's current CRTC) or could (the first CRTC its
 * encoders may use that no earlier connector took, in the resources'
 * connector order).  Connectors cloned on one CRTC make one source.  The
 * sources are then ordered by the CRTC's index in the resources, which is
 * stable for a device across runs.  A connected connector without any
 * mode (and no CRTC mode) is no source: it has nothing to scan out.
 *
 * Child status: DxgkDdiQueryChildStatus re-reads which connectors the
 * source's CRTC drives (drm_kms_connectors.c) and asks the kernel for
 * them, connected while any is; drmModeGetConnector probes them,
 * drmModeGetConnectorCurrent (NonDestructiveOnly) reads the last probed
 * state.  The kernel probes
 * only for DRM master, which the miniport never holds: for it both read
 * the state the kernel's own hotplug handling keeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "base/fd_registry.h"
#include "drm_winsys.h"
#include "drm_fault.h"
#include "drm_trace.h"

UINT64 kdrm_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

void kdrm_kms_init(struct kdrm_adapter *a)
{
    memset(&a->kms, 0, sizeof(a->kms));
    a->kms.fd = a->kms.wake_fd = -1;
    a->kms.hotplug.fd = a->kms.hotplug.stop_fd = -1;
    pthread_mutex_init(&a->kms.lock, NULL);
    pthread_mutex_init(&a->kms.conn_lock, NULL);
}

static UINT64 gcd(UINT64 x, UINT64 y)
{
    while (y) {
        UINT64 t = x % y;
        x = y;
        y = t;
    }
    return x;
}

static bool mode_of(const drmModeModeInfo *m, struct kdrm_mode *out)
{
    UINT64 num = (UINT64)m->clock * 1000, den = (UINT64)m->htotal * m->vtotal, g;

    if (!m->clock || !m->htotal || !m->vtotal || !m->hdisplay || !m->vdisplay)
        return false;
    g = gcd(num, den);
    out->width = m->hdisplay;
    out->height = m->vdisplay;
    out->clock_khz = m->clock;
    out->htotal = m->htotal;
    out->vtotal = m->vtotal;
    out->refresh_num = (UINT)(num / g);
    out->refresh_den = (UINT)(den / g);
    out->frame_ns = den * 1000000ull / m->clock;
    out->interlaced = !!(m->flags & DRM_MODE_FLAG_INTERLACE);
    return out->frame_ns != 0;           /* a clock no frame fits in: no mode */
}

/* The connector's preferred mode, else its first. */
static const drmModeModeInfo *preferred(const drmModeConnector *c)
{
    for (int i = 0; i < c->count_modes; i++)
        if (c->modes[i].type & DRM_MODE_TYPE_PREFERRED)
            return &c->modes[i];
    return c->count_modes > 0 ? &c->modes[0] : NULL;
}

/* Only the first 32 CRTCs: the masks (possible_crtcs, taken) have 32 bits. */
static int crtc_index(const drmModeRes *res, UINT32 crtc_id)
{
    for (int i = 0; i < res->count_crtcs && i < 32; i++)
        if (res->crtcs[i] == crtc_id)
            return i;
    return -1;
}

/* The CRTC index that drives `c`, or the first free one it can use; -1. */
static int crtc_for(int fd, const drmModeRes *res, const drmModeConnector *c, UINT32 taken)
{
    drmModeEncoder *e;
    int idx = -1;

    if (c->encoder_id && (e = drmModeGetEncoder(fd, c->encoder_id))) {
        if (e->crtc_id)
            idx = crtc_index(res, e->crtc_id);
        drmModeFreeEncoder(e);
        if (idx >= 0)
            return idx;
    }
    for (int i = 0; i < c->count_encoders && idx < 0; i++) {
        if (!(e = drmModeGetEncoder(fd, c->encoders[i])))
            continue;
        for (int k = 0; k < res->count_crtcs && k < 32 && idx < 0; k++)
            if ((e->possible_crtcs & (1u << k)) && !(taken & (1u << k)))
                idx = k;
        drmModeFreeEncoder(e);
    }
    return idx;
}

/* The source already made for CRTC `idx`, or NULL. */
static struct kdrm_source *source_on(struct kdrm_kms *k, UINT idx)
{
    for (UINT i = 0; i < k->count; i++)
        if (k->sources[i].crtc_index == idx)
            return &k->sources[i];
    return NULL;
}

/* One connector as a new source (true), or as a clone on the CRTC of one
 * made before (false, as for no source). */
static bool source_of(struct kdrm_kms *k, const drmModeRes *res, UINT32 connector_id, UINT32 *taken,
                      struct kdrm_source *s)
{
    drmModeConnector *c = drmModeGetConnector(k->fd, connector_id);
    const drmModeModeInfo *m;
    struct kdrm_source *first;
    drmModeCrtc *crtc;
    bool ok = false;
    int idx;

    if (!c)
        return false;
    if (c->connection != DRM_MODE_CONNECTED || (idx = crtc_for(k->fd, res, c, *taken)) < 0) {
        drmModeFreeConnector(c);
        return false;
    }
    if (*taken & (1u << idx)) {
        if ((first = source_on(k, (UINT)idx)) && first->connectors < KDRM_MAX_CLONES)
            first->connector_ids[first->connectors++] = connector_id;
        drmModeFreeConnector(c);
        return false;
    }
    memset(s, 0, sizeof(*s));
    s->crtc_id = res->crtcs[idx];
    s->crtc_index = (UINT)idx;
    s->connector_ids[0] = connector_id;
    s->connectors = 1;
    if ((crtc = drmModeGetCrtc(k->fd, s->crtc_id))) {
        ok = crtc->mode_valid && mode_of(&crtc->mode, &s->mode);
        drmModeFreeCrtc(crtc);
    }
    if (!ok && (m = preferred(c)))
        ok = mode_of(m, &s->mode);
    drmModeFreeConnector(c);
    if (ok)
        *taken |= 1u << idx;
    return ok;
}

static int by_crtc(const void *x, const void *y)
{
    const struct kdrm_source *p = x, *q = y;

    return (p->crtc_index > q->crtc_index) - (p->crtc_index < q->crtc_index);
}

static int open_card(struct kdrm_adapter *a)
{
    int fd;

    if (a->card_fd >= 0)
        return a->card_fd;
    if (!*a->phys.card_node)
        return -ENODEV;
    if ((fd = kdrm_open(a->phys.card_node, O_RDWR)) < 0)
        return fd;
    drmDropMaster(fd);                   /* as kdrm_open_nodes: a display server keeps its master */
    a->kms.own_fd = true;
    return fd;
}

UINT kdrm_kms_start(struct kdrm_adapter *a)
{
    struct kdrm_kms *k = &a->kms;
    UINT32 taken = 0;
    drmModeRes *res;
    int fd, err;

    kdrm_kms_stop(a);                    /* a start after a stop: the card fd it opened goes */
    k->epoch_ns = kdrm_now_ns();
    if ((fd = open_card(a)) < 0) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: no card node (%s): no VidPn sources\n", a->phys.location,
                   strerror(-fd));
        return 0;
    }
    k->fd = fd;
    /* EOPNOTSUPP: a driver without KMS (vgem) */
    if ((err = kdrm_fault_check("MODE_GETRESOURCES")) || !(res = drmModeGetResources(fd))) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: no KMS resources (%s): no VidPn sources\n",
                   a->phys.location, strerror(err ? -err : errno));
        kdrm_kms_stop(a);
        return 0;
    }
    for (int i = 0; i < res->count_connectors && k->count < KDRM_MAX_SOURCES; i++)
        if (source_of(k, res, res->connectors[i], &taken, &k->sources[k->count]))
            k->count++;
    drmModeFreeResources(res);
    qsort(k->sources, k->count, sizeof(k->sources[0]), by_crtc);
    for (UINT i = 0; i < k->count; i++)
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: source %u: CRTC %u, connector %u (+%u), %ux%u @ %u/%u Hz\n",
                   a->phys.location, i, k->sources[i].crtc_id, k->sources[i].connector_ids[0],
                   k->sources[i].connectors - 1,
                   k->sources[i].mode.width, k->sources[i].mode.height, k->sources[i].mode.refresh_num,
                   k->sources[i].mode.refresh_den);
    if (!k->count)
        kdrm_kms_stop(a);
    return k->count;
}

void kdrm_kms_stop(struct kdrm_adapter *a)
{
    if (a->kms.own_fd)
        kmt_fd_close(a->kms.fd);
    a->kms.fd = -1;
    a->kms.own_fd = false;
    a->kms.count = 0;
}

struct kdrm_source *kdrm_kms_source(struct kdrm_adapter *a, UINT id)
{
    return id < a->kms.count ? &a->kms.sources[id] : NULL;
}

NTSTATUS kdrm_kms_current_mode(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    KMT_CURRENT_DISPLAY_MODE *out = q->pOutputData;
    const struct kdrm_source *s;

    if (q->InputDataSize != sizeof(UINT) || !q->pInputData || q->OutputDataSize != sizeof(*out) || !out)
        return STATUS_INVALID_PARAMETER;
    if (!(s = kdrm_kms_source(a, *(const UINT *)q->pInputData)))
        return STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE;
    memset(out, 0, sizeof(*out));
    out->Width = s->mode.width;
    out->Height = s->mode.height;
    out->RefreshRateNumerator = s->mode.refresh_num;
    out->RefreshRateDenominator = s->mode.refresh_den;
    out->ScanLineTotal = s->mode.vtotal;
    out->VerticalBlankStart = s->mode.height;
    out->HorizontalTotal = s->mode.htotal;
    out->Interlaced = s->mode.interlaced;
    out->PixelRate = (UINT64)s->mode.clock_khz * 1000;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_query_child_status(PVOID ctx, DXGK_CHILD_STATUS *status, BOOLEAN non_destructive)
{
    struct kdrm_adapter *a = ctx;
    struct kdrm_source *s;
    bool connected;
    int err;

    if (!status || !(s = kdrm_kms_source(a, status->ChildUid)))
        return STATUS_INVALID_PARAMETER;
    if (status->Type != StatusConnection)
        return STATUS_NOT_SUPPORTED;
    kdrm_kms_refresh_connectors(a);
    if ((err = kdrm_kms_source_connected(a, s, non_destructive, &connected)))
        return kdrm_status_from_errno(err);
    status->HotPlug.Connected = connected;
    return STATUS_SUCCESS;
}
