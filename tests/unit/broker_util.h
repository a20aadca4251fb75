/*
 * What the broker tests share: the peer program (tests/unit/broker_peer)
 * and the broker's books.
 */
#ifndef KMTSHIM_TEST_BROKER_UTIL_H
#define KMTSHIM_TEST_BROKER_UTIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "broker/broker.h"
#include "peer_util.h"
#include "test_util.h"

/* A running tests/unit/broker_peer (peer_util.h). */
struct peer {
    struct kmt_test_peer peer;
};

/* Starts broker_peer with the steps (NULL-terminated); inherit: fds the
 * peer gets as fd 10, 11... */
void peer_start(struct peer *p, const int *inherit, unsigned inherit_count, const char *const *steps);
/* The peer's next line, which must start with `prefix`: what follows it. */
char *peer_line(struct peer *p, const char *prefix);
/* Ends "wait" and asserts the peer exited with 0. */
void peer_finish(struct peer *p);
void peer_kill(struct peer *p);

/* The broker's books, asserted to be readable. */
struct kmt_broker_stats broker_stats(void);
/* Waits (at most 10 s) until the live object count is `objects`. */
struct kmt_broker_stats broker_wait_objects(uint32_t objects);
/* The same for the count of connected clients. */
struct kmt_broker_stats broker_wait_clients(uint32_t clients);

/* A 4 KiB memfd named kmt-broker-test starting with `text`. */
int test_memfd(const char *text);
/* kmt_broker_create, asserted to succeed; fd < 0: no fd. */
uint64_t broker_create(uint32_t kind, bool global, const char *blob, int fd, int32_t holder,
                       D3DKMT_HANDLE *handle);
/* How many of pid's fds are memfds named `name`. */
unsigned count_memfds(pid_t pid, const char *name);
/* pid runs (a zombie does not). */
bool process_exists(pid_t pid);
/* A blocking socket connected to the broker of dir, bypassing the
 * library; -1 with errno when nothing answers. */
int broker_raw_connect(const char *dir);

#endif
