/*
 * DRM miniport: which connectors each VidPn source's CRTC drives now, and
 * whether any of them is connected.
 *
 * A compositor may point another connector at a source's CRTC after the
 * adapter started: a monitor plugged as a clone, or one that replaces the
 * first.  That modeset sends no uevent (the kernel's uevent comes with the
 * plug, before the compositor reacts), so the lists are re-read at each
 * poll and each uevent report, whichever connector a message names:
 * connector -> encoder -> CRTC from the kernel's current state, with no
 * probe.  A CRTC that drives no connector now (turned off, or one the
 * start picked for a connector that could use it) keeps its last list, so
 * its last monitors still say whether it is connected.
 *
 * Sources are fixed at the start, as WDDM children are: a connector that
 * starts driving a CRTC without a source is in no list.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "drm_winsys.h"
#include "drm_fault.h"
#include "drm_trace.h"

/* The CRTC connector `id` drives now (its encoder's), 0 for none. */
static UINT32 crtc_driving(int fd, UINT32 id)
{
    drmModeConnector *c = drmModeGetConnectorCurrent(fd, id);
    drmModeEncoder *e = NULL;
    UINT32 crtc = 0;

    if (c && c->encoder_id && (e = drmModeGetEncoder(fd, c->encoder_id)))
        crtc = e->crtc_id;
    drmModeFreeEncoder(e);
    drmModeFreeConnector(c);
    return crtc;
}

static int source_index(const struct kdrm_kms *k, UINT32 crtc_id)
{
    for (UINT i = 0; i < k->count; i++)
        if (k->sources[i].crtc_id == crtc_id)
            return (int)i;
    return -1;
}

void kdrm_kms_refresh_connectors(struct kdrm_adapter *a)
{
    struct kdrm_kms *k = &a->kms;
    UINT32 ids[KDRM_MAX_SOURCES][KDRM_MAX_CLONES];
    UINT n[KDRM_MAX_SOURCES] = { 0 };
    drmModeRes *res;
    int err;

    /* under the lock: two refreshes cannot leave the older one's lists */
    pthread_mutex_lock(&k->conn_lock);
    if ((err = kdrm_fault_check("MODE_GETRESOURCES")) || !(res = drmModeGetResources(k->fd))) {
        pthread_mutex_unlock(&k->conn_lock);
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: no KMS resources (%s): the connector lists stay\n",
                   a->phys.location, strerror(err ? -err : errno));
        return;
    }
    for (int i = 0; i < res->count_connectors; i++) {
        UINT32 crtc = crtc_driving(k->fd, res->connectors[i]);
        int s = crtc ? source_index(k, crtc) : -1;

        if (s >= 0 && n[s] < KDRM_MAX_CLONES)
            ids[s][n[s]++] = res->connectors[i];
    }
    drmModeFreeResources(res);
    for (UINT s = 0; s < k->count; s++) {
        if (!n[s])
            continue;
        memcpy(k->sources[s].connector_ids, ids[s], n[s] * sizeof(ids[s][0]));
        k->sources[s].connectors = n[s];
    }
    pthread_mutex_unlock(&k->conn_lock);
}

UINT kdrm_kms_source_connectors(struct kdrm_adapter *a, const struct kdrm_source *s, UINT32 ids[KDRM_MAX_CLONES])
{
    UINT n;

    pthread_mutex_lock(&a->kms.conn_lock);
    n = s->connectors;
    memcpy(ids, s->connector_ids, n * sizeof(ids[0]));
    pthread_mutex_unlock(&a->kms.conn_lock);
    return n;
}

/* Whether connector `id` is connected: probed, or the kernel's last
 * probe (non_destructive).  0, or a negative errno. */
static int connector_connected(struct kdrm_adapter *a, UINT32 id, bool non_destructive, bool *connected)
{
    drmModeConnector *c;
    int err;

    if ((err = kdrm_fault_check("MODE_GETCONNECTOR")))
        return err;
    c = non_destructive ? drmModeGetConnectorCurrent(a->kms.fd, id) : drmModeGetConnector(a->kms.fd, id);
    if (!c)
        return -errno;
    *connected = c->connection == DRM_MODE_CONNECTED;
    drmModeFreeConnector(c);
    return 0;
}

/* Outside the lock: a probe may take a while. */
int kdrm_kms_source_connected(struct kdrm_adapter *a, const struct kdrm_source *s, bool non_destructive,
                              bool *connected)
{
    UINT32 ids[KDRM_MAX_CLONES];
    UINT n = kdrm_kms_source_connectors(a, s, ids);
    int err = 0;

    *connected = false;
    for (UINT i = 0; i < n && !*connected && !err; i++)
        err = connector_connected(a, ids[i], non_destructive, connected);
    return err;
}
