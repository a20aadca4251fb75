/*
 * A fake KMS device: the display side of a card node, for the DRM
 * miniport's VidPn sources, vblank, scan line and child status.
 *
 * The card node is a FIFO in a directory of the fake's own: the miniport
 * opens it by path as it opens /dev/dri/cardN, fake_drm.c's drmIoctl hands
 * the ioctls made on it to this fake, and the vblank events the fake
 * writes into the FIFO are what the miniport's drmHandleEvent reads.
 *
 * The device: CRTCs 41 and 42; connector 31 (HDMI, encoder 21, which may
 * use either CRTC) with modes 1920x1080@60 and 1280x720@59.94 (the
 * preferred one); connector 32 (VGA, encoder 22, CRTC 42 only), connected
 * only with config.second_output, when CRTC 42 scans it out at the same
 * 1920x1080@60 and has vblanks as CRTC 41.  CRTC 41 scans 1920x1080@60 out
 * on connector 31 unless config.crtc_off.  Vblanks of CRTC 41 come every frame of that mode
 * (148.5 MHz, 2200 x 1125: 16.67 ms) on CLOCK_MONOTONIC from the open;
 * CRTC_QUEUE_SEQUENCE events are written into the FIFO by a thread at
 * their vblank.  Connector status follows the kernel's rules for probing:
 * a GETCONNECTOR with count_modes 0 probes (copies fake_kms.plugged to the
 * status reported), one with room for modes reads the last probed status;
 * fake_kms.vga_plugged is connector 32's cable.  With config.clone_output,
 * connector 33 (DVI, encoder 23, which may use either CRTC) is connected and cloned on
 * CRTC 41 with connector 31; fake_kms.clone_plugged is its cable.  With
 * config.clone_spare it is there but unplugged and on no CRTC at the
 * start.  A connected connector's encoder drives the CRTC it is routed to
 * (fake_kms_route: what a compositor's modeset does), a disconnected
 * one's none.
 *
 * Uevents: the fake opens a socketpair and names its reading end in
 * KMTSHIM_DRM_UEVENT_FD, so the miniport reads the messages a test writes
 * with fake_kms_uevent() instead of the kernel's; fake_kms_hotplug() does
 * what the kernel does on a hotplug interrupt: it probes the connector and
 * sends the uevent.
 */
#ifndef KMTSHIM_FAKE_KMS_H
#define KMTSHIM_FAKE_KMS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_KMS_CRTC 41u
#define FAKE_KMS_IDLE_CRTC 42u
#define FAKE_KMS_CONNECTOR 31u
#define FAKE_KMS_VGA_CONNECTOR 32u
#define FAKE_KMS_CLONE_CONNECTOR 33u
#define FAKE_KMS_FRAME_NS 16666666ull   /* 2200 * 1125 / 148.5 MHz */

struct fake_kms_config {
    bool no_vblank;                     /* vblank ioctls answer EOPNOTSUPP (virtio_gpu) */
    bool crtc_off;                      /* no CRTC drives connector 31: QUEUE_SEQUENCE answers EINVAL */
    bool unplugged;                     /* connector 31 starts disconnected */
    bool second_output;                 /* connector 32 on CRTC 42, plugged at the start */
    bool clone_output;                  /* connector 33 on CRTC 41 beside 31, plugged at the start */
    bool clone_spare;                   /* connector 33 there, unplugged and on no CRTC at the start */
};

struct fake_kms {
    struct fake_kms_config config;
    bool plugged;                       /* the cable; a probe makes it the reported status */
    bool vga_plugged;                   /* connector 32's, with config.second_output */
    bool clone_plugged;                 /* connector 33's, with config.clone_output */
    unsigned probes, current_reads;     /* GETCONNECTOR calls of connector 31 (and 32 with
                                           config.second_output) that probed / did not */
    atomic_uint reads_of[3];            /* GETCONNECTOR calls that did not probe, of 31, 32, 33 */
    atomic_uint resource_lists;         /* drmModeGetResources calls (their first GETRESOURCES) */
    /* counted on the miniport's vblank thread and the fake's own */
    atomic_uint queued, delivered;      /* CRTC_QUEUE_SEQUENCE events taken, and written */
    atomic_uint refused;                /* vblank ioctls refused */
};

extern struct fake_kms fake_kms;

/* Creates the device and starts its vblanks; its card node's path in
 * `path`.  0, or -1. */
int fake_kms_open(const struct fake_kms_config *config, char *path, size_t size);
/* Stops the vblanks and removes the FIFO. */
void fake_kms_close(void);
/* The whole display device for a test through the D3DKMT API: a fake i915
 * render node with this card node next to it, the one device the DRM
 * miniport enumerates.  0, or -1; fake_kms_device_close() undoes it. */
int fake_kms_device_open(const struct fake_kms_config *config);
void fake_kms_device_close(void);
/* Sends one uevent message of `len` bytes (NULs included) to the
 * miniport.  0, or -1. */
int fake_kms_uevent(const void *msg, size_t len);
/* Connector `id`'s cable set and probed, as the kernel does before it
 * sends a uevent; no uevent. */
void fake_kms_set_cable(uint32_t id, bool plugged);
/* Connector `id` routed to CRTC `crtc` (0: none) while it is connected,
 * as a compositor's modeset does it: no uevent. */
void fake_kms_route(uint32_t id, uint32_t crtc);
/* The kernel's answer to a hotplug interrupt: connector `id`'s cable set,
 * probed, and the uevent naming card0 and the connector sent.  0, or -1. */
int fake_kms_hotplug(uint32_t id, bool plugged);
/* The descriptors in this process open on the uevents' reading end, the
 * fake's own included. */
unsigned fake_kms_uevent_readers(void);
/* The line CRTC 41 scans at CLOCK_MONOTONIC time `ns` (1125 per frame). */
unsigned fake_kms_scan_line(uint64_t ns);

#endif
