/*
 * One sendmsg / recvmsg on a non-blocking Unix stream socket, with the
 * fds of SCM_RIGHTS: what the client and the broker both need.
 */
#ifndef KMTSHIM_BROKER_WIRE_H
#define KMTSHIM_BROKER_WIRE_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Sends what it can of iov (MSG_NOSIGNAL), with fds when nfds > 0: bytes
 * sent, or -1 with errno. */
ssize_t kmt_wire_send(int sock, const struct iovec *iov, int iovcnt, const int *fds, unsigned nfds);

/* What kmt_wire_recv saw go wrong with the fds, or'ed into *trouble. */
#define KMT_WIRE_EXCESS 1u               /* more fds than fit: the extra ones were closed */
#define KMT_WIRE_TRUNCATED 2u            /* MSG_CTRUNC: the kernel dropped some (out of fds) */

/* Receives up to len bytes; fds that came with them (O_CLOEXEC) are
 * appended to fds[*nfds..max-1].  Returns bytes read (0: the peer hung
 * up), or -1 with errno. */
ssize_t kmt_wire_recv(int sock, void *buf, size_t len, int *fds, unsigned *nfds, unsigned max,
                      unsigned *trouble);

/* Closes fds[0..n-1]. */
void kmt_wire_close_fds(const int *fds, unsigned n);

#endif /* KMTSHIM_BROKER_WIRE_H */
