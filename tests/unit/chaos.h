/*
 * Chaos: several threads share one pool of D3DKMT handles (adapter handles,
 * devices, allocations, resources, contexts, sync objects of every type)
 * and each runs a seeded random mix of creates, destroys and uses of
 * whatever the pool holds.  A handle taken from the pool may be stale,
 * freshly destroyed or reused, so the test cannot know the one right
 * answer; it checks that every call returns success or one of the statuses
 * the core gives for a stale handle, a removed device or an expired wait,
 * that nothing crashes or hangs (every wait is bounded, a watchdog aborts a
 * hung run), and that once everything is destroyed nothing is left: the
 * core's live objects are back to where they started and the miniport
 * holds nothing.  Each thread also has devices of its own: one holds its
 * command streams (submitted to the pool's contexts: the GPU address space
 * is the adapter's), one a legacy context whose Render fills pool
 * allocations, so that queued work holds their reclaim and their locks back
 * while others destroy them.  Async CPU waits must each set their event
 * once, satisfied or abandoned.  Backends: test_chaos.c (soft), and
 * tests/drm/test_drm_chaos.c (the DRM miniport on the fake kernel, with
 * injected kernel failures).
 *
 * Replay: the seed and the operation count are printed; KMT_CHAOS_SEED,
 * KMT_CHAOS_THREADS (4 to 8, 6 by default), KMT_CHAOS_OPS (per thread)
 * and KMT_CHAOS_SECONDS (a bound on the run) choose them.  Odd seeds use
 * every slot of the pool, even ones fewer (more threads on each object).  The interleaving is not replayable, each thread's sequence
 * of calls is.
 *
 * Worker threads never call ck_assert: they record the first unexpected
 * thing and the test thread asserts after joining.
 */
#ifndef KMTSHIM_CHAOS_H
#define KMTSHIM_CHAOS_H

#include "exec_util.h"

/* Statuses, as a bit each, for the allowed sets. */
enum {
    OK = 1u << 0,
    INVALID = 1u << 1,                     /* STATUS_INVALID_PARAMETER: stale or mismatched handle */
    REMOVED = 1u << 2,                     /* STATUS_DEVICE_REMOVED: the device hung or faulted */
    TIMEOUT = 1u << 3,
    ABANDONED = 1u << 4,                   /* the object was destroyed under the wait */
    BAD_HANDLE = 1u << 5,                  /* STATUS_INVALID_HANDLE: hResource names no resource of the device */
    FAULT = 1u << 6,                       /* the backend's injected failures, in calls that reach the kernel */
    BUSY = 1u << 7,                        /* STATUS_GRAPHICS_ALLOCATION_BUSY: DonotWait on queued work */
    IN_USE = 1u << 8,                      /* STATUS_RESOURCE_IN_USE: the Miracast sink has a session */
    NOT_CONNECTED = 1u << 9,               /* STATUS_DEVICE_NOT_CONNECTED: the session's context is gone */
    DEVICE_STATE = 1u << 10,               /* STATUS_INVALID_DEVICE_STATE: another thread stops it */
};

#define CHAOS_ALLOC_SIZE 4096u
#define CHAOS_DESC_MAX 64u                 /* bytes of an allocation's private driver data, at most */
#define CHAOS_ESCAPE_MAX 256u

/* A thread's command streams, in a device of its own: va[0..2] run, va[3]
 * faults the device. */
struct chaos_streams {
    D3DKMT_HANDLE device;
    struct kmt_buf ring;
    D3DGPU_VIRTUAL_ADDRESS va[4];
    UINT length[4];
};

/* What differs between miniports. */
struct chaos_backend {
    const char *name;
    unsigned default_ops;                  /* per thread without KMT_CHAOS_OPS; 0: 30000 */
    /* Writes the private driver data of one allocation of CHAOS_ALLOC_SIZE
     * bytes (8-byte aligned, CHAOS_DESC_MAX at most); returns its size. */
    UINT (*alloc_desc)(void *desc);
    /* NULL: the adapter runs no streams of ours, SubmitCommand is left out. */
    void (*streams_create)(struct chaos_streams *s);
    void (*streams_destroy)(struct chaos_streams *s);
    /* Writes a command that fills `bytes` at a patched address, then waits
     * `delay_us`; returns its length and the offset of the address to
     * patch.  NULL: no Render with allocations. */
    UINT (*fill_patched)(void *buffer, UINT bytes, UINT delay_us, UINT *patch_offset);
    /* Writes a driver-private escape (CHAOS_ESCAPE_MAX bytes at most) that
     * may name a pool allocation and sync object; returns its size. */
    UINT (*escape)(void *data, D3DKMT_HANDLE allocation, D3DKMT_HANDLE syncobj, unsigned random);
    /* Writes a Miracast IoControl input for the adapter's sink (returns its
     * size; *out_size: the output it wants).  NULL: no Miracast sessions. */
    UINT (*miracast_io)(void *in, UINT *out_size, unsigned random);
    /* Called now and then by one thread: arms a failure of the miniport's
     * kernel calls (NULL: none).  Calls that reach the kernel may then
     * return one of fault_status. */
    void (*inject)(D3DKMT_HANDLE adapter, unsigned random);
    NTSTATUS fault_status[2];
    /* A peer process opens, uses and dies holding what the threads share
     * (chaos_share.h). */
    bool share;
    /* Everything destroyed, before the shutdown: the miniport holds nothing. */
    void (*check_empty)(D3DKMT_HANDLE adapter);
};

/* One run over the first adapter of the selected miniport (the only one):
 * asserts, and shuts the process down. */
void chaos_run(const struct chaos_backend *b);

#endif
