/*
 * The raw counterpart of opening a shared resource in another process on
 * DRM: what the kernel and the socket cost with no kmtshim in between, on
 * every DRM device whose card node makes dumb buffers (the lane's vgem and
 * virtio_gpu).  One 64 KiB buffer is made and exported once (a PRIME
 * dma-buf); then, per operation:
 *
 *   scm_rights round trip       the dma-buf fd sent to a second process over
 *                               a Unix socket (SCM_RIGHTS), one byte back
 *   ... + FD_TO_HANDLE + CLOSE  the same, the second process also importing
 *                               it on its own open of the node
 *                               (PRIME_FD_TO_HANDLE) and closing the handle
 *                               (GEM_CLOSE) and the fd before answering
 *   FD_TO_HANDLE + CLOSE        the import and close alone, in this process
 *                               on a second open file of the node
 *
 * The second process is a fork() of this one that makes no DRM call before
 * it opens the node itself.  `make bench-drm-share` runs it in the QEMU lane.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "common/bench_util.h"

#define SIZE (64u << 10)

struct share_target {
    char node[64];
    char driver[32];
    int fd;                              /* this process's file of the node */
    int second;                          /* another file of it, for the in-process row */
    int dmabuf;
    int sock;                            /* to the second process */
    pid_t peer;
};

static const char summary[] =
    "The raw cost of opening a shared DRM buffer in another process: an SCM_RIGHTS round\n"
    "trip of its dma-buf fd, with and without PRIME_FD_TO_HANDLE + GEM_CLOSE there, and the\n"
    "import and close alone, on every DRM card node that makes dumb buffers (vgem,\n"
    "virtio_gpu).  `make bench-drm-share` runs it in the QEMU lane.\n";

static void send_fd(int sock, int fd, char byte)
{
    char control[CMSG_SPACE(sizeof(int))] = { 0 };
    struct iovec iov = { &byte, 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                          .msg_controllen = sizeof(control) };
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    if (sendmsg(sock, &msg, 0) != 1)
        bench_die("sendmsg", errno);
}

/* The byte sent with it (0: close only, 1: import too), the fd in *fd. */
static int recv_fd(int sock, int *fd)
{
    char byte, control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &byte, 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                          .msg_controllen = sizeof(control) };
    struct cmsghdr *c;

    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS)
        return -1;
    memcpy(fd, CMSG_DATA(c), sizeof(int));
    return byte;
}

static void import_close(int node, int dmabuf)
{
    UINT32 handle;
    struct drm_gem_close gc = { 0 };

    if (drmPrimeFDToHandle(node, dmabuf, &handle))
        bench_die("drmPrimeFDToHandle", errno);
    gc.handle = handle;
    if (drmIoctl(node, DRM_IOCTL_GEM_CLOSE, &gc))
        bench_die("GEM_CLOSE", errno);
}

/* The second process: answers each fd it gets, importing it when asked. */
static _Noreturn void peer(const char *node, int sock)
{
    int fd, dmabuf, op;
    char ack = 1;

    if ((fd = open(node, O_RDWR | O_CLOEXEC)) < 0)
        bench_die("opening the node in the second process", errno);
    while ((op = recv_fd(sock, &dmabuf)) >= 0) {
        if (op)
            import_close(fd, dmabuf);
        close(dmabuf);
        if (write(sock, &ack, 1) != 1)
            break;
    }
    _exit(0);
}

static bool target_open(struct share_target *t, const char *node, const char *driver)
{
    struct drm_mode_create_dumb c = { .width = 1024, .height = SIZE / 4096, .bpp = 32 };
    int pair[2];

    snprintf(t->node, sizeof(t->node), "%s", node);
    snprintf(t->driver, sizeof(t->driver), "%s", driver);
    if ((t->fd = open(node, O_RDWR | O_CLOEXEC)) < 0)
        return false;
    if (drmIoctl(t->fd, DRM_IOCTL_MODE_CREATE_DUMB, &c) || drmPrimeHandleToFD(t->fd, c.handle, DRM_CLOEXEC, &t->dmabuf)) {
        close(t->fd);
        return false;
    }
    drmDropMaster(t->fd);                /* the first opener of a card node gets it; nobody here needs it */
    if ((t->second = open(node, O_RDWR | O_CLOEXEC)) < 0)
        bench_die("opening the node again", errno);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair))
        bench_die("socketpair", errno);
    if ((t->peer = fork()) < 0)
        bench_die("fork", errno);
    if (!t->peer) {
        close(pair[0]);
        peer(node, pair[1]);
    }
    close(pair[1]);
    t->sock = pair[0];
    return true;
}

static void target_close(struct share_target *t)
{
    close(t->sock);                      /* the peer's recvmsg ends, and so does it */
    waitpid(t->peer, NULL, 0);
    close(t->dmabuf);
    close(t->second);
    close(t->fd);
}

static void round_trips(struct share_target *t, unsigned ops, char op)
{
    char ack;

    for (unsigned i = 0; i < ops; i++) {
        send_fd(t->sock, t->dmabuf, op);
        if (read(t->sock, &ack, 1) != 1)
            bench_die("the round trip", errno);
    }
}

static void body_rights(void *arg, unsigned ops)
{
    round_trips(arg, ops, 0);
}

static void body_rights_import(void *arg, unsigned ops)
{
    round_trips(arg, ops, 1);
}

static void body_import(void *arg, unsigned ops)
{
    struct share_target *t = arg;

    for (unsigned i = 0; i < ops; i++)
        import_close(t->second, t->dmabuf);
}

/* One row, named "<driver>: <row>" (the table keeps the name). */
static void record(const char *driver, const char *row, const char *what, void (*body)(void *, unsigned),
                   struct share_target *t, unsigned ops, unsigned threads, const struct bench_options *o)
{
    char *name;

    if (asprintf(&name, "%s: %s", driver, row) < 0)
        bench_die("asprintf", errno);
    bench_record(name, what, bench_timed(o, ops, body, t), threads);
}

int main(int argc, char **argv)
{
    struct bench_options o = { .reps = 11, .scale = 1 };
    drmDevicePtr devices[16];
    int n;
    unsigned ops, found = 0;

    bench_parse_options(argc, argv, summary, &o);
    ops = bench_scaled(&o, 500);
    if ((n = drmGetDevices2(0, devices, 16)) < 0)
        bench_die("drmGetDevices2", n);
    for (int i = 0; i < n; i++) {
        struct share_target t;
        drmVersionPtr v;
        char driver[32];
        int probe;

        if (!(devices[i]->available_nodes & (1 << DRM_NODE_PRIMARY)))
            continue;
        if ((probe = open(devices[i]->nodes[DRM_NODE_PRIMARY], O_RDWR | O_CLOEXEC)) < 0)
            continue;
        v = drmGetVersion(probe);
        snprintf(driver, sizeof(driver), "%s", v ? v->name : "unknown");
        drmFreeVersion(v);
        close(probe);
        if (!target_open(&t, devices[i]->nodes[DRM_NODE_PRIMARY], driver))
            continue;
        found++;
        record(t.driver, "scm_rights round trip", "dma-buf fd there, a byte back", body_rights, &t, ops, 2, &o);
        record(t.driver, "... + FD_TO_HANDLE + GEM_CLOSE", "the peer imports and closes it", body_rights_import,
               &t, ops, 2, &o);
        record(t.driver, "FD_TO_HANDLE + GEM_CLOSE", "in this process, a second file", body_import, &t, ops, 1, &o);
        target_close(&t);
    }
    drmFreeDevices(devices, n);
    if (!found)
        bench_die("finding a DRM card node that makes dumb buffers", 0);
    bench_print(&o);
    return 0;
}
