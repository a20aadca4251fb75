/*
 * Reaching the session's broker: connect to its socket, and when nothing
 * listens there, start kmtshim-broker (the path in $KMTSHIM_BROKER, else
 * the installed one) under a lock, so that processes starting at once
 * start one broker between them.
 */
#ifndef KMTSHIM_BROKER_SPAWN_H
#define KMTSHIM_BROKER_SPAWN_H

#include <stdint.h>

#include "kmtshim/d3dkmthk.h"

/* A socket connected to the broker of `dir` (O_CLOEXEC, O_NONBLOCK),
 * started if needed, by deadline_ms (CLOCK_MONOTONIC); -1 with *status
 * (and an ERR line) when none can be reached. */
int kmt_broker_connect(const char *dir, uint64_t deadline_ms, NTSTATUS *status);

/* The caller now tracks sock (fd_registry.h): it is no longer the
 * connect's to close in a fork() child.  (A child closes the fds a
 * connect of its parent had open: an atfork handler here.) */
void kmt_broker_connect_done(int sock);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t kmt_broker_now_ms(void);

#endif /* KMTSHIM_BROKER_SPAWN_H */
