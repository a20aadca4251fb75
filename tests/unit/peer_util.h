/*
 * A peer program for multi-process tests: started with posix_spawn (a
 * separate program, not a fork of the test), its stdin and stdout on pipes
 * to the test, speaking in lines.
 */
#ifndef KMTSHIM_PEER_UTIL_H
#define KMTSHIM_PEER_UTIL_H

#include <stdio.h>
#include <sys/types.h>

#include "kmtshim/d3dkmthk.h"

struct kmt_test_peer {
    pid_t pid;
    FILE *out;                           /* its stdout */
    int in;                              /* its stdin: closing it tells it to end */
};

/* Starts $KMTSHIM_TEST_BUILDDIR/tests/unit/<program> with args (NULL
 * ended, at most 30); inherit: fds it gets as fd 10, 11... */
void kmt_test_peer_start(struct kmt_test_peer *p, const char *program, const int *inherit,
                         unsigned inherit_count, const char *const *args);
/* Its next line, which must start with `prefix`; returns what follows. */
char *kmt_test_peer_line(struct kmt_test_peer *p, const char *prefix);
/* Closes its stdin and waits for it: its wait status. */
int kmt_test_peer_end(struct kmt_test_peer *p);

/* In the peer program: one line to the test (stdout, flushed). */
void kmt_peer_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* In the peer program: a device on the first adapter, 0 on failure. */
D3DKMT_HANDLE kmt_peer_open_device(void);

#endif
