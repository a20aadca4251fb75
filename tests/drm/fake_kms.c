/*
 * The fake KMS device of fake_kms.h.  Each handler follows the kernel's
 * rules for the ioctl (drm_mode_config.c, drm_connector.c, drm_crtc.c,
 * drm_encoder.c, drm_vblank.c): arrays are copied only when the caller's
 * count has room for all of them, counts always come back, unknown object
 * ids answer ENOENT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "fake_drm.h"
#include "fake_kms.h"

struct fake_kms fake_kms;

#define ENCODER_HDMI 21u
#define ENCODER_VGA 22u
#define ENCODER_CLONE 23u
#define CONNECTOR_VGA FAKE_KMS_VGA_CONNECTOR
#define CONNECTOR_CLONE FAKE_KMS_CLONE_CONNECTOR
#define MAX_PENDING 16

static struct {
    char dir[64], path[80];
    int fd;                             /* the fake's own end of the FIFO: events are written here */
    struct stat node;
    bool reported;                      /* connector 31's status as last probed */
    bool vga_reported;                  /* connector 32's */
    bool clone_reported;                /* connector 33's */
    uint32_t route[3];                  /* the CRTC connectors 31, 32, 33 drive while connected, 0: none */
    int uevent[2];                      /* [0]: the miniport's end (a duplicate of it), [1]: the fake's */
    uint64_t t0;                        /* vblank 0 */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool running;
    struct { uint64_t seq, user_data; } pending[MAX_PENDING];
    unsigned npending;
} k = { .fd = -1, .uevent = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void mode(struct drm_mode_modeinfo *m, uint16_t w, uint16_t h, uint32_t clock, uint16_t htotal,
                 uint16_t vtotal, uint32_t type)
{
    memset(m, 0, sizeof(*m));
    m->hdisplay = w;
    m->vdisplay = h;
    m->clock = clock;
    m->htotal = htotal;
    m->vtotal = vtotal;
    m->hsync_start = (uint16_t)(w + 88);
    m->hsync_end = (uint16_t)(w + 132);
    m->vsync_start = (uint16_t)(h + 4);
    m->vsync_end = (uint16_t)(h + 9);
    m->vrefresh = 60;
    m->type = DRM_MODE_TYPE_DRIVER | type;
    snprintf(m->name, sizeof(m->name), "%ux%u", w, h);
}

static void mode_1080p(struct drm_mode_modeinfo *m)
{
    mode(m, 1920, 1080, 148500, 2200, 1125, 0);
}

static void mode_720p(struct drm_mode_modeinfo *m)
{
    mode(m, 1280, 720, 74176, 1650, 750, DRM_MODE_TYPE_PREFERRED);
}

static bool crtc_on(void)
{
    return !fake_kms.config.crtc_off;
}

/* CRTC 42 drives connector 32 (config.second_output). */
static bool second_on(void)
{
    return fake_kms.config.second_output;
}

/* Connector 33 is there (config.clone_output or config.clone_spare). */
static bool clone_there(void)
{
    return fake_kms.config.clone_output || fake_kms.config.clone_spare;
}

/* A GETCONNECTOR without room for modes probes: the cable's state becomes
 * the reported one. */
static bool probe(const struct drm_mode_get_connector *c, bool *reported, bool cable)
{
    if (!c->count_modes) {
        fake_kms.probes++;
        *reported = cable;
    } else {
        fake_kms.current_reads++;
        fake_kms.reads_of[c->connector_id - FAKE_KMS_CONNECTOR]++;
    }
    return *reported;
}

/* Copies `n` ids to `ptr` when `*count` has room; *count becomes n. */
static void put_ids(uint64_t ptr, uint32_t *count, const uint32_t *ids, uint32_t n)
{
    if (*count >= n && n && ptr)
        memcpy((void *)(uintptr_t)ptr, ids, n * sizeof(*ids));
    *count = n;
}

static int get_resources(struct drm_mode_card_res *r)
{
    static const uint32_t crtcs[] = { FAKE_KMS_CRTC, FAKE_KMS_IDLE_CRTC };
    static const uint32_t connectors[] = { FAKE_KMS_CONNECTOR, CONNECTOR_VGA, CONNECTOR_CLONE };
    static const uint32_t encoders[] = { ENCODER_HDMI, ENCODER_VGA, ENCODER_CLONE };
    uint32_t n = clone_there() ? 3 : 2;

    if (!r->connector_id_ptr)
        fake_kms.resource_lists++;       /* libdrm's first call of a drmModeGetResources */
    put_ids(r->fb_id_ptr, &r->count_fbs, NULL, 0);
    put_ids(r->crtc_id_ptr, &r->count_crtcs, crtcs, 2);
    put_ids(r->connector_id_ptr, &r->count_connectors, connectors, n);
    put_ids(r->encoder_id_ptr, &r->count_encoders, encoders, n);
    r->min_width = r->min_height = 1;
    r->max_width = r->max_height = 8192;
    return 0;
}

static int get_connector(struct drm_mode_get_connector *c)
{
    struct drm_mode_modeinfo modes[2];
    uint32_t encoder, nmodes = 0;
    bool connected = false;

    if (c->connector_id == FAKE_KMS_CONNECTOR) {
        connected = probe(c, &k.reported, fake_kms.plugged);
        encoder = ENCODER_HDMI;
        c->connector_type = DRM_MODE_CONNECTOR_HDMIA;
        c->encoder_id = connected && k.route[0] ? ENCODER_HDMI : 0;
    } else if (c->connector_id == CONNECTOR_VGA) {
        connected = second_on() && probe(c, &k.vga_reported, fake_kms.vga_plugged);
        encoder = ENCODER_VGA;
        c->connector_type = DRM_MODE_CONNECTOR_VGA;
        c->encoder_id = connected && k.route[1] ? ENCODER_VGA : 0;
    } else if (c->connector_id == CONNECTOR_CLONE && clone_there()) {
        connected = probe(c, &k.clone_reported, fake_kms.clone_plugged);
        encoder = ENCODER_CLONE;
        c->connector_type = DRM_MODE_CONNECTOR_DVID;
        c->encoder_id = connected && k.route[2] ? ENCODER_CLONE : 0;
    } else {
        return -ENOENT;
    }
    if (connected) {
        mode_1080p(&modes[0]);
        mode_720p(&modes[1]);
        nmodes = 2;
    }
    if (c->count_modes >= nmodes && nmodes && c->modes_ptr)
        memcpy((void *)(uintptr_t)c->modes_ptr, modes, nmodes * sizeof(modes[0]));
    c->count_modes = nmodes;
    put_ids(c->encoders_ptr, &c->count_encoders, &encoder, 1);
    c->count_props = 0;
    c->connector_type_id = 1;
    c->connection = connected ? DRM_MODE_CONNECTED : DRM_MODE_DISCONNECTED;
    c->mm_width = connected ? 527 : 0;
    c->mm_height = connected ? 296 : 0;
    c->subpixel = DRM_MODE_SUBPIXEL_UNKNOWN;
    return 0;
}

static int get_encoder(struct drm_mode_get_encoder *e)
{
    if (e->encoder_id == ENCODER_HDMI) {
        e->encoder_type = DRM_MODE_ENCODER_TMDS;
        e->crtc_id = k.route[0];
        e->possible_crtcs = 3;
    } else if (e->encoder_id == ENCODER_VGA) {
        e->encoder_type = DRM_MODE_ENCODER_DAC;
        e->crtc_id = k.route[1];
        e->possible_crtcs = 2;
    } else if (e->encoder_id == ENCODER_CLONE && clone_there()) {
        e->encoder_type = DRM_MODE_ENCODER_TMDS;
        e->crtc_id = k.route[2];
        e->possible_crtcs = 3;
    } else {
        return -ENOENT;
    }
    e->possible_clones = 0;
    return 0;
}

static int get_crtc(struct drm_mode_crtc *c)
{
    if (c->crtc_id != FAKE_KMS_CRTC && c->crtc_id != FAKE_KMS_IDLE_CRTC)
        return -ENOENT;
    c->count_connectors = 0;
    c->x = c->y = 0;
    c->gamma_size = 256;
    c->mode_valid = c->crtc_id == FAKE_KMS_CRTC ? crtc_on() : second_on();
    c->fb_id = c->mode_valid ? 1 : 0;
    if (c->mode_valid)
        mode_1080p(&c->mode);
    else
        memset(&c->mode, 0, sizeof(c->mode));
    return 0;
}

static uint64_t sequence_at(uint64_t t)
{
    return (t - k.t0) / FAKE_KMS_FRAME_NS;
}

/* The vblank ioctls' checks: EOPNOTSUPP without vblank, ENOENT for an
 * unknown CRTC, EINVAL for one that is off. */
static int vblank_check(uint32_t crtc_id)
{
    int err = 0;

    if (fake_kms.config.no_vblank)
        err = -EOPNOTSUPP;
    else if (crtc_id != FAKE_KMS_CRTC && crtc_id != FAKE_KMS_IDLE_CRTC)
        err = -ENOENT;
    else if (crtc_id == FAKE_KMS_CRTC ? !crtc_on() : !second_on())
        err = -EINVAL;
    if (err)
        fake_kms.refused++;
    return err;
}

static int get_sequence(struct drm_crtc_get_sequence *g)
{
    int err = vblank_check(g->crtc_id);

    if (err)
        return err;
    g->active = 1;
    g->sequence = sequence_at(now_ns());
    g->sequence_ns = k.t0 + g->sequence * FAKE_KMS_FRAME_NS;
    return 0;
}

static int queue_sequence(struct drm_crtc_queue_sequence *q)
{
    uint64_t target;
    int err = vblank_check(q->crtc_id);

    if (err)
        return err;
    if (q->flags & ~(uint32_t)(DRM_CRTC_SEQUENCE_RELATIVE | DRM_CRTC_SEQUENCE_NEXT_ON_MISS))
        return -EINVAL;
    if (k.npending == MAX_PENDING)
        return -ENOMEM;
    target = q->flags & DRM_CRTC_SEQUENCE_RELATIVE ? sequence_at(now_ns()) + q->sequence : q->sequence;
    k.pending[k.npending].seq = target;
    k.pending[k.npending].user_data = q->user_data;
    k.npending++;
    q->sequence = target;
    fake_kms.queued++;
    pthread_cond_signal(&k.cond);
    return 0;
}

static int answer(unsigned long request, void *arg)
{
    switch (request) {
    case DRM_IOCTL_MODE_GETRESOURCES: return get_resources(arg);
    case DRM_IOCTL_MODE_GETCONNECTOR: return get_connector(arg);
    case DRM_IOCTL_MODE_GETENCODER: return get_encoder(arg);
    case DRM_IOCTL_MODE_GETCRTC: return get_crtc(arg);
    case DRM_IOCTL_CRTC_GET_SEQUENCE: return get_sequence(arg);
    case DRM_IOCTL_CRTC_QUEUE_SEQUENCE: return queue_sequence(arg);
    case DRM_IOCTL_DROP_MASTER: return -EINVAL;          /* the fake never makes a master */
    }
    return -ENOTTY;
}

/* fake_drm.c's drmIoctl asks first: true when `fd` is the fake card node. */
static bool kms_ioctl(int fd, unsigned long request, void *arg, int *ret)
{
    struct stat st;

    if (fd < 0 || fstat(fd, &st) || st.st_dev != k.node.st_dev || st.st_ino != k.node.st_ino)
        return false;
    pthread_mutex_lock(&k.lock);
    *ret = answer(request, arg);
    pthread_mutex_unlock(&k.lock);
    return true;
}

/* Writes the events whose vblank came, at each vblank. */
static void *vblank_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&k.lock);
    while (k.running) {
        uint64_t seq = sequence_at(now_ns()) + 1, at = k.t0 + seq * FAKE_KMS_FRAME_NS;
        struct timespec ts = { (time_t)(at / 1000000000ull), (long)(at % 1000000000ull) };

        if (!k.npending) {
            pthread_cond_wait(&k.cond, &k.lock);
            continue;
        }
        pthread_mutex_unlock(&k.lock);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        pthread_mutex_lock(&k.lock);
        for (unsigned i = 0; i < k.npending;) {
            struct drm_event_crtc_sequence ev = { .base = { DRM_EVENT_CRTC_SEQUENCE, sizeof(ev) } };

            if (k.pending[i].seq > seq) {
                i++;
                continue;
            }
            ev.user_data = k.pending[i].user_data;
            ev.sequence = (int64_t)seq;
            ev.time_ns = (int64_t)at;
            if (write(k.fd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev))
                fake_kms.delivered++;
            k.pending[i] = k.pending[--k.npending];
        }
    }
    pthread_mutex_unlock(&k.lock);
    return NULL;
}

int fake_kms_open(const struct fake_kms_config *config, char *path, size_t size)
{
    char num[16];

    fake_kms_close();
    memset(&fake_kms, 0, sizeof(fake_kms));
    fake_kms.config = *config;
    fake_kms.plugged = k.reported = !config->unplugged;
    fake_kms.vga_plugged = k.vga_reported = config->second_output;
    fake_kms.clone_plugged = k.clone_reported = config->clone_output;
    k.route[0] = config->crtc_off ? 0 : FAKE_KMS_CRTC;
    k.route[1] = config->second_output ? FAKE_KMS_IDLE_CRTC : 0;
    k.route[2] = config->clone_output && !config->crtc_off ? FAKE_KMS_CRTC : 0;
    k.npending = 0;
    k.t0 = now_ns();
    snprintf(k.dir, sizeof(k.dir), "/tmp/fake-kms-XXXXXX");
    if (!mkdtemp(k.dir))
        return -1;
    snprintf(k.path, sizeof(k.path), "%s/card0", k.dir);
    /* O_RDWR on a FIFO never blocks: the fake holds both ends open */
    if (mkfifo(k.path, 0600) || (k.fd = open(k.path, O_RDWR | O_CLOEXEC)) < 0 || fstat(k.fd, &k.node) ||
        snprintf(path, size, "%s", k.path) >= (int)size)
        return -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, k.uevent))
        return -1;
    snprintf(num, sizeof(num), "%d", k.uevent[0]);
    setenv("KMTSHIM_DRM_UEVENT_FD", num, 1);
    fake_drm_kms = kms_ioctl;
    k.running = true;
    if (pthread_create(&k.thread, NULL, vblank_thread, NULL)) {
        k.running = false;
        return -1;
    }
    return 0;
}

void fake_kms_close(void)
{
    pthread_mutex_lock(&k.lock);
    bool join = k.running;
    k.running = false;
    pthread_cond_signal(&k.cond);
    pthread_mutex_unlock(&k.lock);
    if (join)
        pthread_join(k.thread, NULL);
    fake_drm_kms = NULL;
    if (k.fd >= 0)
        close(k.fd);
    k.fd = -1;
    unsetenv("KMTSHIM_DRM_UEVENT_FD");
    for (int i = 0; i < 2; i++) {
        if (k.uevent[i] >= 0)
            close(k.uevent[i]);
        k.uevent[i] = -1;
    }
    if (*k.path)
        unlink(k.path);
    if (*k.dir)
        rmdir(k.dir);
    k.path[0] = k.dir[0] = 0;
    memset(&k.node, 0, sizeof(k.node));
}

int fake_kms_device_open(const struct fake_kms_config *config)
{
    const struct fake_drm_config dc = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
    static struct fake_drm_pci_device dev;
    static char render[64], card[80];

    memset(&dev, 0, sizeof(dev));
    dev.bus = 3;
    if (fake_drm_open(&dc) < 0 || fake_kms_open(config, card, sizeof(card)) ||
        fake_drm_device_path(render, sizeof(render)))
        return -1;
    dev.render_node = render;
    dev.card_node = card;
    fake_drm_set_devices(&dev, 1, "i915");
    return 0;
}

void fake_kms_device_close(void)
{
    fake_kms_close();
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

int fake_kms_uevent(const void *msg, size_t len)
{
    return send(k.uevent[1], msg, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

void fake_kms_set_cable(uint32_t id, bool plugged)
{
    pthread_mutex_lock(&k.lock);
    if (id == FAKE_KMS_CONNECTOR)
        fake_kms.plugged = k.reported = plugged;
    else if (id == CONNECTOR_VGA)
        fake_kms.vga_plugged = k.vga_reported = plugged;
    else if (id == CONNECTOR_CLONE)
        fake_kms.clone_plugged = k.clone_reported = plugged;
    pthread_mutex_unlock(&k.lock);
}

void fake_kms_route(uint32_t id, uint32_t crtc)
{
    pthread_mutex_lock(&k.lock);
    if (id >= FAKE_KMS_CONNECTOR && id <= CONNECTOR_CLONE)
        k.route[id - FAKE_KMS_CONNECTOR] = crtc;
    pthread_mutex_unlock(&k.lock);
}

int fake_kms_hotplug(uint32_t id, bool plugged)
{
    static const char head[] = "change@/devices/pci0000:00/0000:00:02.0/drm/card0\0ACTION=change\0"
                               "DEVPATH=/devices/pci0000:00/0000:00:02.0/drm/card0\0SUBSYSTEM=drm\0HOTPLUG=1\0"
                               "DEVNAME=dri/card0\0DEVTYPE=drm_minor\0MAJOR=226\0MINOR=0\0";
    char msg[sizeof(head) + 64];
    int n;

    fake_kms_set_cable(id, plugged);
    memcpy(msg, head, sizeof(head) - 1);
    n = snprintf(msg + sizeof(head) - 1, sizeof(msg) - sizeof(head) + 1, "CONNECTOR=%u", (unsigned)id);
    return fake_kms_uevent(msg, sizeof(head) - 1 + (size_t)n + 1);
}

unsigned fake_kms_uevent_readers(void)
{
    char want[64], link[64], path[300];
    struct stat st;
    struct dirent *e;
    unsigned n = 0;
    DIR *d;

    if (fstat(k.uevent[0], &st) || !(d = opendir("/proc/self/fd")))
        return 0;
    snprintf(want, sizeof(want), "socket:[%lu]", (unsigned long)st.st_ino);
    while ((e = readdir(d))) {
        ssize_t len;

        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        if ((len = readlink(path, link, sizeof(link) - 1)) > 0) {
            link[len] = 0;
            n += !strcmp(link, want);
        }
    }
    closedir(d);
    return n;
}

unsigned fake_kms_scan_line(uint64_t ns)
{
    return (unsigned)((ns - k.t0) % FAKE_KMS_FRAME_NS * 1125 / FAKE_KMS_FRAME_NS);
}
