/*
 * DRM miniport: the display side.  The adapter's primary node (card node)
 * answers KMS queries and vblank ioctls without DRM master; the render
 * node refuses them.
 *
 *   VidPn source   one per CRTC that drives (or can drive) a connected
 *                  connector, in the CRTC's order in the kernel's resources
 *                  (drm_kms.c).  Target id = source id; the connector is
 *                  the source's child (ChildUid = target id), connected
 *                  while any connector the CRTC drives is
 *   hotplug        a thread per adapter with sources reads the kernel's
 *                  DRM uevents and reports connection changes unasked
 *                  (DxgkCbIndicateChildStatus) (drm_hotplug.c)
 *   mode           the CRTC's current mode, else the connector's preferred
 *                  one, else its first
 *   vblank         a thread per adapter while CRTC_VSYNC is enabled:
 *                  CRTC_QUEUE_SEQUENCE events on the card node, or a timer
 *                  at the mode's refresh rate on a CRTC whose kernel
 *                  refuses vblank (virtio_gpu) (drm_vblank.c)
 */
#ifndef KMTSHIM_DRM_KMS_H
#define KMTSHIM_DRM_KMS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"

#define KDRM_MAX_SOURCES 8
#define KDRM_MAX_CLONES 4                /* connectors one CRTC drives */

struct kdrm_adapter;

/* A KMS mode's timings, as the 0x1003 query and the scan line need them. */
struct kdrm_mode {
    UINT width, height;
    UINT clock_khz, htotal, vtotal;
    UINT refresh_num, refresh_den;       /* Hz, reduced: clock * 1000 / (htotal * vtotal) */
    UINT64 frame_ns;                     /* one refresh period */
    bool interlaced;
};

struct kdrm_source {
    UINT32 crtc_id;
    /* under kdrm_kms.conn_lock once the adapter started: the connectors
       the CRTC drives, re-read at each child status query and uevent */
    UINT32 connector_ids[KDRM_MAX_CLONES];
    UINT connectors;
    UINT crtc_index;                     /* the CRTC's place in the resources (vblank's high-crtc bits) */
    struct kdrm_mode mode;
    /* the vblank thread's own; `timer` is read by GetScanLine too */
    atomic_bool timer;                   /* the kernel refused vblank events: the timer stands in */
    bool no_events;                      /* refused for good (EOPNOTSUPP): no retry at the next enable */
    bool queued;                         /* a CRTC_QUEUE_SEQUENCE event is pending on the fd */
    UINT64 next_ns;                      /* the timer's next deadline (CLOCK_MONOTONIC) */
};

/* The uevent reader (drm_hotplug.c); the adapter's start and stop only. */
struct kdrm_hotplug {
    int fd;                              /* the uevent source, -1: none */
    int stop_fd;                         /* eventfd: the thread leaves */
    pthread_t thread;
    bool running;
    bool tried;                          /* started (or failed to) since the last stop */
};

struct kdrm_kms {
    int fd;                              /* the card node, -1: no display side */
    bool own_fd;                         /* opened for KMS, not the family's card fd */
    UINT count;
    struct kdrm_source sources[KDRM_MAX_SOURCES];
    pthread_mutex_t conn_lock;           /* the sources' connector lists */
    UINT64 epoch_ns;                     /* the timer's grid: vblanks at epoch + n * frame */
    /* the vblank thread */
    pthread_mutex_t lock;
    pthread_t thread;
    bool joinable;                       /* under lock */
    bool stopping;                       /* under lock: the adapter stops */
    atomic_bool enabled;                 /* CRTC_VSYNC */
    atomic_uint generation;              /* of the thread that may raise: one per enable */
    UINT64 enabled_ns;                   /* events older than this are stale */
    int wake_fd;                         /* eventfd: the thread re-reads its state */
    struct kdrm_hotplug hotplug;
};

/* drm_kms.c: sources from the card node at DxgkDdiStartDevice (0 without
 * one, or where the driver has no KMS), and their release (after
 * kdrm_vblank_stop). */
void kdrm_kms_init(struct kdrm_adapter *a);
UINT kdrm_kms_start(struct kdrm_adapter *a);
void kdrm_kms_stop(struct kdrm_adapter *a);
UINT64 kdrm_now_ns(void);
/* The source of a VidPn target id, NULL past the count. */
struct kdrm_source *kdrm_kms_source(struct kdrm_adapter *a, UINT id);
/* drm_kms_connectors.c: the connectors each source's CRTC drives, re-read
 * from the kernel's current state (no probe; a CRTC that drives none keeps
 * its last ones); a copy of one source's list (their count); whether any
 * of them is connected (0 or -errno). */
void kdrm_kms_refresh_connectors(struct kdrm_adapter *a);
UINT kdrm_kms_source_connectors(struct kdrm_adapter *a, const struct kdrm_source *s, UINT32 ids[KDRM_MAX_CLONES]);
int kdrm_kms_source_connected(struct kdrm_adapter *a, const struct kdrm_source *s, bool non_destructive,
                              bool *connected);
NTSTATUS APIENTRY kdrm_query_child_status(PVOID ctx, DXGK_CHILD_STATUS *status, BOOLEAN non_destructive);
/* DXGKQAITYPE_KMT_CURRENTDISPLAYMODE */
NTSTATUS kdrm_kms_current_mode(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q);

/* drm_hotplug.c: the uevent thread of an adapter with sources, started by
 * the first CRTC_VSYNC enable (kdrm_control_interrupt; later calls do
 * nothing; none where no uevent source opens); its stop joins it and
 * closes its descriptors, before the sources go. */
void kdrm_hotplug_start(struct kdrm_adapter *a);
void kdrm_hotplug_stop(struct kdrm_adapter *a);

/* drm_vblank.c */
NTSTATUS APIENTRY kdrm_control_interrupt(HANDLE hAdapter, DXGK_INTERRUPT_TYPE type, BOOLEAN enable);
NTSTATUS APIENTRY kdrm_get_scan_line(HANDLE hAdapter, DXGKARG_GETSCANLINE *args);
/* Stops the thread and waits for it (the adapter stops). */
void kdrm_vblank_stop(struct kdrm_adapter *a);

#endif /* KMTSHIM_DRM_KMS_H */
