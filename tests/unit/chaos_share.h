/*
 * Sharing under chaos (chaos.h): the threads make shared keyed mutexes,
 * resources and monitored fences (on a device only they use), acquire, release,
 * signal, wait, open by global handle and destroy them, and publish their
 * global handles and NT handles (fds, over SCM_RIGHTS) to a peer process,
 * tests/unit/chaos_peer.c.  The peer opens what it gets, acquires and
 * holds keyed mutexes, signals and waits fences, and is SIGKILLed at a
 * random point and started again, over and over, while the threads run.
 * The threads see only Windows statuses (a dead holder's mutex is
 * ABANDONED); the peer reports any other status it sees as a "bad" line,
 * which fails the run; once everything is destroyed and the last peer is
 * gone, the broker holds no object.
 *
 * The peer is a separate program (posix_spawn), so the sanitizer builds
 * run this part too.
 */
#ifndef KMTSHIM_CHAOS_SHARE_H
#define KMTSHIM_CHAOS_SHARE_H

#include <stdint.h>

#include "kmtshim/kmtshim.h"

/* What the peer gets, one datagram each (SOCK_SEQPACKET on its fd 10),
 * with the NT handle as SCM_RIGHTS when the kind is a lower-case letter:
 * K a keyed mutex (alone it has no NT handle: ShareObjects refuses it),
 * R/r a resource (r: with a keyed mutex and a fence when `three`), F/f a
 * monitored fence. */
struct chaos_share_msg {
    char kind;
    unsigned char three;
    D3DKMT_HANDLE global;
};
#define CHAOS_PEER_FD 10

/* Fills an OpenResource(2) or OpenResourceFromNtHandle descriptor `o`
 * with the sizes its query `q` gave and caller buffers (`info`, `runtime`,
 * `resource`, `total`: arrays at least that large); each allocation's
 * driver data goes into the total buffer. */
#define CHAOS_OPEN_BUFFERS(o, q, info, runtime, resource, total) do {       \
        (o).NumAllocations = (q).NumAllocations;                             \
        (o).pOpenAllocationInfo2 = (info);                                   \
        (o).pPrivateRuntimeData = (runtime);                                 \
        (o).PrivateRuntimeDataSize = (q).PrivateRuntimeDataSize;             \
        (o).pResourcePrivateDriverData = (resource);                         \
        (o).ResourcePrivateDriverDataSize = (q).ResourcePrivateDriverDataSize; \
        (o).pTotalPrivateDriverDataBuffer = (total);                         \
        (o).TotalPrivateDriverDataBufferSize = (q).TotalPrivateDriverDataSize; \
        for (UINT i_ = 0; i_ < (q).NumAllocations; i_++) {                  \
            (info)[i_].pPrivateDriverData = (total);                         \
            (info)[i_].PrivateDriverDataSize = (q).TotalPrivateDriverDataSize; \
        }                                                                    \
    } while (0)

/* A worker thread, as the sharing ops see it (chaos.c fills it). */
struct chaos_share_thread {
    void *worker;
    unsigned (*rnd)(void *worker);
    /* chaos.c's check: records `s` against the allowed set (chaos.h) */
    NTSTATUS (*check)(void *worker, const char *name, NTSTATUS s, unsigned allowed);
    UINT (*alloc_desc)(void *desc);        /* the backend's */
};

/* Makes the device the shared objects live on, on `adapter`, and starts
 * the peer's keeper thread (Check asserts: the test thread). */
void chaos_share_start(D3DKMT_HANDLE adapter, unsigned seed);
/* One random sharing operation (worker threads: no Check asserts). */
void chaos_share_op(const struct chaos_share_thread *t);
/* Kills the last peer and asserts that no peer saw a status outside its
 * set; prints how many peers ran and what they did. */
void chaos_share_stop(void);
/* Destroys what the sharing slots still hold, and their device. */
void chaos_share_destroy(void);
/* Asserts the broker holds no object, global handle, NT share or name
 * (within a few seconds: it hears of a dead peer asynchronously). */
void chaos_share_expect_broker_empty(void);

#endif
