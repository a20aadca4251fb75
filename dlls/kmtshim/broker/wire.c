/*
 * sendmsg / recvmsg with SCM_RIGHTS (wire.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/protocol.h"
#include "broker/wire.h"

ssize_t kmt_wire_send(int sock, const struct iovec *iov, int iovcnt, const int *fds, unsigned nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * KMT_BROKER_MAX_MSG_FDS)];
        struct cmsghdr align;
    } control;
    struct msghdr msg = { 0 };
    ssize_t ret;

    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = iovcnt;
    if (nfds) {
        struct cmsghdr *cmsg;

        if (nfds > KMT_BROKER_MAX_MSG_FDS) {
            errno = EINVAL;
            return -1;
        }
        memset(&control, 0, sizeof(control));
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * nfds);
    }
    do
        ret = sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (ret < 0 && errno == EINTR);
    return ret;
}

ssize_t kmt_wire_recv(int sock, void *buf, size_t len, int *fds, unsigned *nfds, unsigned max,
                      unsigned *trouble)
{
    /* room for more than a message may carry, so an excess is seen, not lost */
    union {
        char buf[CMSG_SPACE(sizeof(int) * (KMT_BROKER_MAX_MSG_FDS + 8))];
        struct cmsghdr align;
    } control;
    struct iovec iov = { buf, len };
    struct msghdr msg = { 0 };
    struct cmsghdr *cmsg;
    ssize_t ret;

    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    do
        ret = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    while (ret < 0 && errno == EINTR);
    if (ret < 0)
        return ret;
    /* the receiver's fd table is full (RLIMIT_NOFILE): the kernel installed
     * what fit and dropped the rest */
    if (msg.msg_flags & MSG_CTRUNC)
        *trouble |= KMT_WIRE_TRUNCATED;
    for (cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
        unsigned n;
        const unsigned char *data;

        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
            continue;
        n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        data = CMSG_DATA(cmsg);
        for (unsigned i = 0; i < n; i++) {
            int fd;

            memcpy(&fd, data + i * sizeof(int), sizeof(int));
            if (*nfds < max)
                fds[(*nfds)++] = fd;
            else {
                close(fd);
                *trouble |= KMT_WIRE_EXCESS;
            }
        }
    }
    return ret;
}

void kmt_wire_close_fds(const int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}
