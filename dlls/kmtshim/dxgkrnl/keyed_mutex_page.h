/*
 * The shared page of a keyed mutex: its state, seen by every process that
 * has a handle to it, and the lock protocol on it (keyed_mutex_page.c).
 *
 * holder is the broker's holder word (broker/broker.h): the client id of
 * the process whose handle owns the mutex, 0 when free, and
 * KMT_BROKER_HOLDER_ABANDONED for good once an owner went away holding it
 * (its handle destroyed, or its process died: then the broker writes it).
 * key and fence are the last release's, written by the owner only.
 *
 * Sleepers wait on two words at once (futex_waitv): holder, which the
 * broker wakes when it abandons the mutex for a dead process, and seq,
 * which a release or abandonment bumps when it wakes someone.  seq makes a
 * release to the sleeper's key between its check and its sleep visible
 * (holder alone reads 0 before and after).  A release wakes only when
 * `waiters` says someone may sleep, so the uncontended acquire and release
 * are one compare-and-swap and one store, no system call.
 */
#ifndef KMTSHIM_KEYED_MUTEX_PAGE_H
#define KMTSHIM_KEYED_MUTEX_PAGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "kmtshim/d3dkmthk.h"

#define DXGK_KM_PAGE_MAGIC 0x4b4d5450u   /* "PTMK" */
#define DXGK_KM_HOLDER_OFFSET 0           /* offsetof(struct dxgk_km_page, holder) */

struct dxgk_km_page {
    atomic_uint holder;                  /* the broker's holder word */
    atomic_uint seq;                     /* bumped by every release that wakes */
    atomic_uint waiters;                 /* sleepers, of every process */
    uint32_t data_size;                  /* the last ReleaseKeyedMutex2's data, owner only */
    _Atomic uint64_t key;                /* the key it was released to */
    _Atomic uint64_t fence;              /* the fence value it was released with */
    uint32_t magic;
    uint32_t capacity;                   /* bytes of data[] */
    uint8_t reserved[24];
    uint8_t data[];                      /* runtime data between Release2 and Acquire2 */
};

/* Bytes of the memfd for `capacity` bytes of runtime data. */
size_t dxgk_km_page_size(uint32_t capacity);
void dxgk_km_page_init(struct dxgk_km_page *p, uint64_t initial_key, uint32_t capacity);

/* An NT timeout (NULL: infinite) as an absolute CLOCK_MONOTONIC deadline;
 * false when there is none (infinite). */
bool dxgk_km_deadline(const LONGLONG *timeout, struct timespec *deadline);

/* Takes the mutex for `me` once it is free and released to `key`; sleeps
 * until then or until the deadline (NULL: none).  STATUS_SUCCESS,
 * STATUS_TIMEOUT or STATUS_ABANDONED. */
NTSTATUS dxgk_km_page_acquire(struct dxgk_km_page *p, uint32_t me, uint64_t key,
                              const struct timespec *deadline);
/* The owner releases to `key` (key, fence and data already written by the
 * caller are published with it). */
void dxgk_km_page_release(struct dxgk_km_page *p, uint64_t key, uint64_t fence);
/* The owner `me` goes away holding it: abandoned for good.  false if `me`
 * did not hold it. */
bool dxgk_km_page_abandon(struct dxgk_km_page *p, uint32_t me);

#endif /* KMTSHIM_KEYED_MUTEX_PAGE_H */
