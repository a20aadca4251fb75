/*
 * DRM miniport: connector changes reported unasked, as a WDDM miniport
 * reports a hotplug interrupt through DxgkCbIndicateChildStatus.
 *
 * The kernel announces each hotplug it handles with a uevent on
 * NETLINK_KOBJECT_UEVENT (multicast group 1): "change@<devpath>", then
 * NUL-separated KEY=VALUE strings, among them SUBSYSTEM=drm, HOTPLUG=1,
 * DEVNAME=dri/cardN and, when the kernel knows which connector changed,
 * CONNECTOR=<id> (and PROPERTY=<id>).  One thread per adapter with VidPn
 * sources reads them.  For a message that names the adapter's card node
 * (by its file name, cardN) it reads the connectors as the kernel's own
 * probe left them (no new probe: the kernel made one before it sent the
 * message) and reports each source's connection, only the sources with
 * that connector when CONNECTOR= is there; the core ignores a report that
 * changes nothing.  Each report first re-reads which connectors the
 * sources' CRTCs drive (drm_kms_connectors.c).  Other devices, other
 * subsystems, messages without HOTPLUG=1 and malformed ones are ignored.
 *
 * A synthetic uevent counts as the kernel's own when it carries the same
 * keys as arguments: root writing "change <uuid> HOTPLUG=1" to
 * /sys/class/drm/cardN/uevent makes the kernel send SYNTH_ARG_HOTPLUG=1.
 * Some drivers never send HOTPLUG=1 themselves: virtio_gpu has no output
 * poll, so a connector forced through its sysfs status file changes with
 * no uevent, and the synthetic one is how a tool says so.  udev's own
 * synthetic "change" (udevadm trigger) has no HOTPLUG argument and is
 * ignored.
 *
 * The thread starts when a vblank wait first enables CRTC_VSYNC, not with
 * the adapter: a netlink uevent socket hears every device of the machine,
 * and a process that never waits for vblank (compute, allocations, most
 * test programs) should not wake for each of them.  Before that, changes
 * are seen when polled (PollDisplayChildren) as DxgkDdiQueryChildStatus
 * reads them; the thread's first act is one report of every source, so a
 * monitor unplugged before the first wait ends that wait (unless the
 * source's first vblank comes sooner, then the next one).
 *
 * Where the socket cannot be opened (a sandbox without netlink) a trace
 * line says so, and PollDisplayChildren stays the way changes are seen.
 * KMTSHIM_DRM_UEVENT_FD, a test hook, names a descriptor to read the
 * messages from instead (a socketpair a fake kernel writes into); the
 * miniport reads a duplicate of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/fd_registry.h"
#include "base/kmt_thread.h"
#include "drm_winsys.h"
#include "drm_trace.h"

#define UEVENT_MAX 8192                  /* the kernel's UEVENT_BUFFER_SIZE is 2048 */
#define ANY_CONNECTOR 0u                 /* DRM object ids start at 1 */

static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* The uevent source: the test hook's descriptor, else the kernel's
 * socket; -errno. */
static int open_source(void)
{
    struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
    const char *hook = getenv("KMTSHIM_DRM_UEVENT_FD");
    char *end;
    long n;
    int fd;

    if (hook && *hook) {
        n = strtol(hook, &end, 10);
        if (*end || n < 0 || n > INT32_MAX)
            return -EBADF;
        return (fd = fcntl((int)n, F_DUPFD_CLOEXEC, 0)) < 0 ? -errno : fd;
    }
    if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT)) < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* A synthetic uevent's argument as the key the kernel's own would have
 * ("SYNTH_ARG_HOTPLUG=1": "HOTPLUG=1"), other fields as they are. */
static const char *field(const char *p)
{
    return strncmp(p, "SYNTH_ARG_", 10) ? p : p + 10;
}

/* The connector a hotplug message of this adapter names (ANY_CONNECTOR
 * when it names none), or -1 when the message is not one. */
static int64_t parse(const struct kdrm_adapter *a, const char *msg, size_t len)
{
    bool drm = false, hotplug = false, mine = false;
    int64_t connector = ANY_CONNECTOR;
    const char *p = msg, *end = msg + len;

    if (!len || msg[len - 1] || !strchr(msg, '@'))   /* "action@devpath", NUL-ended */
        return -1;
    for (p += strlen(p) + 1; p < end; p += strlen(p) + 1) {
        const char *f = field(p);
        char *stop;

        if (!strcmp(p, "SUBSYSTEM=drm"))
            drm = true;
        else if (!strcmp(f, "HOTPLUG=1"))
            hotplug = true;
        else if (!strncmp(p, "DEVNAME=", 8))
            mine = !strcmp(file_name(p + 8), file_name(a->phys.card_node));
        else if (!strncmp(f, "CONNECTOR=", 10)) {
            /* unsigned long long: a 32-bit unsigned long would clamp an
             * out-of-range id to UINT32_MAX and pass the range check */
            unsigned long long id = strtoull(f + 10, &stop, 10);

            if (f[10] < '0' || f[10] > '9' || *stop || !id || id > UINT32_MAX)
                return -1;
            connector = (int64_t)id;
        }
    }
    return drm && hotplug && mine ? connector : -1;
}

static bool has_connector(struct kdrm_adapter *a, const struct kdrm_source *s, UINT32 id)
{
    UINT32 ids[KDRM_MAX_CLONES];
    UINT n = kdrm_kms_source_connectors(a, s, ids);

    for (UINT i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Reports the connection of the sources with `connector` (all for
 * ANY_CONNECTOR), as the kernel last probed them.  Which connectors a
 * source has is read again first: a compositor's modeset that moved one
 * onto its CRTC sent no uevent of its own.  A source the connector left in
 * that re-read is reported too. */
static void report(struct kdrm_adapter *a, UINT32 connector)
{
    bool had[KDRM_MAX_SOURCES] = { false };

    for (UINT i = 0; i < a->kms.count && connector != ANY_CONNECTOR; i++)
        had[i] = has_connector(a, &a->kms.sources[i], connector);
    kdrm_kms_refresh_connectors(a);
    for (UINT i = 0; i < a->kms.count; i++) {
        struct kdrm_source *s = &a->kms.sources[i];
        DXGK_CHILD_STATUS cs = { .Type = StatusConnection, .ChildUid = i };
        bool connected;
        int err;

        if (connector != ANY_CONNECTOR && !had[i] && !has_connector(a, s, connector))
            continue;
        if ((err = kdrm_kms_source_connected(a, s, true, &connected))) {
            kdrm_trace(a, KMT_TRACE_WARN, __func__, "source %u: cannot read its connectors: %s\n", i,
                       strerror(-err));
            continue;
        }
        cs.HotPlug.Connected = connected;
        a->dxgkrnl.DxgkCbIndicateChildStatus(a->dxgkrnl.DeviceHandle, &cs);
    }
}

/* Reads every message waiting on the source. */
static void drain(struct kdrm_adapter *a, int fd)
{
    char *msg = malloc(UEVENT_MAX + 1);
    struct sockaddr_nl from;
    ssize_t n;

    if (!msg)
        return;
    for (;;) {
        struct iovec iov = { msg, UEVENT_MAX };
        struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
        int64_t connector;

        memset(&from, 0, sizeof(from));
        if ((n = recvmsg(fd, &mh, MSG_DONTWAIT)) < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        /* on netlink only the kernel (port 0) speaks for the devices */
        if (mh.msg_namelen >= sizeof(from) && from.nl_family == AF_NETLINK && from.nl_pid)
            continue;
        if ((mh.msg_flags & MSG_TRUNC) || (connector = parse(a, msg, (size_t)n)) < 0)
            continue;
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: hotplug (connector %u)\n", a->phys.location,
                   (unsigned)connector);
        report(a, (UINT32)connector);
    }
    free(msg);
}

static void *hotplug_thread(void *arg)
{
    struct kdrm_adapter *a = arg;
    struct kdrm_hotplug *h = &a->kms.hotplug;
    struct pollfd p[2] = { { .fd = h->fd, .events = POLLIN }, { .fd = h->stop_fd, .events = POLLIN } };

    report(a, ANY_CONNECTOR);            /* what changed before the socket listened */
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
            kdrm_trace(a, KMT_TRACE_WARN, __func__, "%s: the uevent source closed: polling only\n",
                       a->phys.location);
            break;
        }
        if (p[0].revents & POLLIN)
            drain(a, h->fd);
    }
    return NULL;
}

void kdrm_hotplug_start(struct kdrm_adapter *a)
{
    struct kdrm_hotplug *h = &a->kms.hotplug;
    int fd;

    if (h->tried || !a->kms.count || !a->dxgkrnl.DxgkCbIndicateChildStatus)
        return;
    h->tried = true;
    if ((fd = open_source()) < 0) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: no uevent socket (%s): hotplug is seen when polled\n",
                   a->phys.location, strerror(-fd));
        return;
    }
    kmt_fd_track(fd);
    if ((h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0)
        kmt_fd_track(h->stop_fd);
    h->fd = fd;
    if (h->stop_fd < 0 || kmt_thread_create(&h->thread, "kmt-drm-hotplug", hotplug_thread, a)) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "%s: no hotplug thread: hotplug is seen when polled\n",
                   a->phys.location);
        kdrm_hotplug_stop(a);
        h->tried = true;                 /* polling it is, until the adapter stops */
        return;
    }
    h->running = true;
}

void kdrm_hotplug_stop(struct kdrm_adapter *a)
{
    struct kdrm_hotplug *h = &a->kms.hotplug;
    UINT64 one = 1;

    if (h->running) {
        (void)!write(h->stop_fd, &one, sizeof(one));
        pthread_join(h->thread, NULL);
        h->running = false;
    }
    if (h->stop_fd >= 0)
        kmt_fd_close(h->stop_fd);
    if (h->fd >= 0)
        kmt_fd_close(h->fd);
    h->fd = h->stop_fd = -1;
    h->tried = false;                    /* a restarted adapter listens again */
}
