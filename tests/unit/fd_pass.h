/*
 * One fd over a Unix stream socket (SCM_RIGHTS), for the tests and their
 * peer programs: the library's wire helpers (broker/wire.h), waiting
 * for the socket first, so that one implementation of SCM_RIGHTS serves
 * the library, the broker and the tests.
 */
#ifndef KMTSHIM_TEST_FD_PASS_H
#define KMTSHIM_TEST_FD_PASS_H

#include <poll.h>
#include <stdbool.h>
#include <unistd.h>

#include "broker/wire.h"

/* Sends one byte carrying fd (the caller keeps its copy). */
static inline bool fd_pass_send(int sock, int fd)
{
    char byte = 0;
    struct iovec iov = { &byte, 1 };
    struct pollfd p = { sock, POLLOUT, 0 };

    return poll(&p, 1, -1) == 1 && kmt_wire_send(sock, &iov, 1, &fd, 1) == 1;
}

/* Waits for one byte carrying exactly one fd: the fd (O_CLOEXEC), or -1. */
static inline int fd_pass_recv(int sock)
{
    struct pollfd p = { sock, POLLIN, 0 };
    unsigned n = 0, trouble = 0;
    char byte;
    int fd = -1;

    if (poll(&p, 1, -1) != 1 || kmt_wire_recv(sock, &byte, 1, &fd, &n, 1, &trouble) != 1 || n != 1 || trouble) {
        if (n)
            close(fd);
        return -1;
    }
    return fd;
}

#endif /* KMTSHIM_TEST_FD_PASS_H */
