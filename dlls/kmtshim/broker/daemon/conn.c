/*
 * A client's connection: requests arrive in pieces and are run once
 * complete; a reply the socket cannot take at once waits in a queue.
 * Anything that breaks the framing (an oversized or short message, fds
 * that do not match its head, more than one request before a reply is
 * out) drops the client, never the broker.  A request whose fds the
 * kernel could not install (the broker is out of fds) fails alone with
 * STATUS_INSUFFICIENT_RESOURCES: the client did nothing wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/wire.h"
#include "daemon.h"

/* The fds a request of this op may carry. */
static unsigned max_fds(uint32_t op)
{
    switch (op) {
    case KMT_BROKER_OP_CREATE: return KMT_BROKER_MAX_FDS;
    case KMT_BROKER_OP_OPEN_NT: return 1;
    default: return 0;
    }
}

static ssize_t receive(struct client *c, void *buf, size_t len, bool *bad)
{
    unsigned trouble = 0;
    ssize_t got = kmt_wire_recv(c->sock, buf, len, c->fds, &c->fd_count, KMT_BROKER_MAX_FDS, &trouble);

    if (trouble & KMT_WIRE_EXCESS)
        *bad = true;
    else if (trouble & KMT_WIRE_TRUNCATED)
        c->fds_truncated = true;
    return got;
}

bool conn_read(struct client *c)
{
    bool bad = false;

    while (!c->out_len && !c->closing) {
        ssize_t got;

        if (c->head_got < sizeof(c->head)) {
            got = receive(c, (char *)&c->head + c->head_got, sizeof(c->head) - c->head_got, &bad);
            if (got > 0 && (c->head_got += got) == sizeof(c->head)) {
                if (c->head.size > KMT_BROKER_MAX_REQUEST || c->head.fd_count > max_fds(c->head.op))
                    return false;
                if (c->head.size && !(c->payload = malloc(c->head.size)))
                    return false;
                c->payload_got = 0;
            }
        } else {
            got = receive(c, c->payload + c->payload_got, c->head.size - c->payload_got, &bad);
            if (got > 0)
                c->payload_got += got;
        }
        if (bad || !got)
            return false;                /* too many fds, or the client hung up */
        if (got < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK;
        if (c->head_got < sizeof(c->head) || c->payload_got < c->head.size)
            continue;
        if (c->fds_truncated ? c->fd_count >= c->head.fd_count : c->fd_count != c->head.fd_count)
            return false;
        bool ok = requests_run(c);
        kmt_wire_close_fds(c->fds, c->fd_count);
        c->fd_count = 0;
        c->fds_truncated = false;
        free(c->payload);
        c->payload = NULL;
        c->head_got = c->payload_got = 0;
        if (!ok)
            return false;
    }
    return true;
}

bool conn_write(struct client *c)
{
    while (c->out_sent < c->out_len) {
        struct iovec iov = { c->out + c->out_sent, c->out_len - c->out_sent };
        ssize_t sent = kmt_wire_send(c->sock, &iov, 1, c->out_fds, c->out_fd_count);

        if (sent < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK;
        /* the fds went with the first byte */
        kmt_wire_close_fds(c->out_fds, c->out_fd_count);
        c->out_fd_count = 0;
        c->out_sent += sent;
    }
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_sent = 0;
    return !c->closing;
}

bool conn_reply(struct client *c, NTSTATUS status, const struct iovec *parts, unsigned part_count,
                const int *fds, unsigned fd_count)
{
    struct kmt_broker_head head = { c->head.op, (uint32_t)status, 0, 0 };
    size_t size = sizeof(head);
    uint8_t *p;

    for (unsigned i = 0; i < part_count; i++)
        size += parts[i].iov_len;
    if (!(c->out = malloc(size))) {
        errno = ENOMEM;
        return false;
    }
    for (unsigned i = 0; i < fd_count; i++) {
        if ((c->out_fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0)) < 0) {
            int err = errno;

            kmt_wire_close_fds(c->out_fds, i);
            free(c->out);
            c->out = NULL;
            errno = err;
            return false;
        }
    }
    c->out_fd_count = fd_count;
    head.size = size - sizeof(head);
    head.fd_count = fd_count;
    memcpy(c->out, &head, sizeof(head));
    p = c->out + sizeof(head);
    for (unsigned i = 0; i < part_count; i++) {
        memcpy(p, parts[i].iov_base, parts[i].iov_len);
        p += parts[i].iov_len;
    }
    c->out_len = size;
    c->out_sent = 0;
    return true;
}
