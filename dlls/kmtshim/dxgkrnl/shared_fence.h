/*
 * Shared monitored fences: the value of a monitored fence made with
 * Flags.Shared lives in a memfd page of its own, which every process that
 * opened the fence maps (read-write for the core and, through its GPU VA,
 * the miniport; read-only for the program), so all of them see one value.
 *
 * Waking across processes: the page also holds a wake word, the number
 * of processes watching the fence and the CPU of its last CPU signal.  A signal stores the value and, only
 * when some process watches, bumps the wake word and wakes it (a shared
 * futex).  Each process has one watcher thread ("kmt-fencewatch",
 * shared_fence_watch.c) that watches the shared fences its async CPU
 * waits and its scheduler's GPU waits are blocked on, sleeps on their wake
 * words at once (futex_waitv), and re-evaluates those waits when a word
 * moves; a blocking CPU wait sleeps on the words itself (wait.c).  An
 * already-satisfied wait and a signal that no process watches make no
 * system call and never involve another process or the broker.
 */
#ifndef KMTSHIM_SHARED_FENCE_H
#define KMTSHIM_SHARED_FENCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "dxgkrnl.h"

struct dxgk_syncobj;

/* The page's layout: the same in every process.  A shared mutex,
 * semaphore or legacy fence keeps its state in the same page
 * (syncobj_shared_state.c): a semaphore's count or a legacy fence's value
 * in `value`, a mutex's owner in `holder`. */
struct dxgk_shared_fence_page {
    _Atomic uint64_t value;              /* the fence value */
    _Atomic uint32_t wake;               /* bumped by a signal that found watchers */
    _Atomic uint32_t watchers;           /* processes sleeping (or about to) on wake */
    _Atomic uint32_t holder;             /* a mutex's owner: the broker's holder word */
    _Atomic uint32_t signal_cpu;         /* 1 + the CPU of the last CPU signal, 0: none yet */
};
#define DXGK_SHARED_HOLDER_OFFSET 16     /* offsetof(struct dxgk_shared_fence_page, holder) */

/* One process's mapping of a shared fence. */
struct dxgk_shared_fence {
    struct dxgk_shared_fence_page *rw;
    const void *ro;                      /* the value, read-only: FenceValueCPUVirtualAddress */
    _Atomic uint64_t seen;               /* the value last announced from this process */
    _Atomic unsigned spin_ns;            /* how long a blocking wait looks before it sleeps (wait.c) */
    /* watching (shared_fence_watch.c), under its lock */
    struct list entry;
    struct dxgk_syncobj *obj;            /* not referenced: unwatched when it is retired */
    bool watched;
    bool armed;                          /* counted in rw->watchers */
    uint32_t seq;                        /* rw->wake when last looked at */
    atomic_bool gpu_blocked;             /* a GPU wait of the scheduler waits on it */
    bool watch_holder;                   /* a mutex: the broker may change holder */
    uint32_t holder_seen;                /* holder when last looked at */
};

/* A new page holding `initial`; *fd (O_CLOEXEC, the caller's) names it
 * for the broker (sealed against shrinking: it may carry a holder word). */
NTSTATUS dxgk_shared_fence_create(UINT64 initial, struct dxgk_shared_fence **out, int *fd);
/* Maps the page another process made (fd is not consumed). */
NTSTATUS dxgk_shared_fence_map(int fd, struct dxgk_shared_fence **out);
/* Unmaps; the fence must be unwatched. */
void dxgk_shared_fence_free(struct dxgk_shared_fence *sf);
/* This process stored a new value (a signal, a rewind): wake the
 * processes that watch the fence. */
void dxgk_shared_fence_stored(struct dxgk_shared_fence *sf);
/* The GPU may have written the value: the same, if it differs from what
 * this process last announced. */
void dxgk_shared_fence_changed(struct dxgk_shared_fence *sf);

/* The last CPU signal came from a CPU other than the caller's: its
 * process may still run there (a blocking wait then looks before it
 * sleeps, wait.c). */
bool dxgk_shared_fence_signalled_elsewhere(const struct dxgk_shared_fence *sf);

/* A blocking CPU wait sleeps on its fences' wake words itself (one thread
 * hop less than through the watcher): it counts itself a watcher of each
 * while it sleeps. */
void dxgk_shared_fence_arm(struct dxgk_shared_fence *sf);
void dxgk_shared_fence_disarm(struct dxgk_shared_fence *sf);
uint32_t dxgk_shared_fence_seq(const struct dxgk_shared_fence *sf);
/* Sleeps until *word (private to the process) differs from `value`, a
 * fence's wake word differs from seqs[i], or `deadline` (CLOCK_MONOTONIC,
 * NULL: none) passes; false once it has passed.  May return early. */
bool dxgk_shared_fence_sleep(_Atomic uint32_t *word, uint32_t value, struct dxgk_shared_fence *const *sfs,
                             const uint32_t *seqs, unsigned count, const struct timespec *deadline);
/* A wait on one shared fence alone sleeps on its wake word alone: a plain
 * futex wait, as cheap as a raw one.  Whatever completes it in this
 * process then kicks that word instead of the waiter's own. */
bool dxgk_shared_fence_sleep_one(struct dxgk_shared_fence *sf, uint32_t seq, const struct timespec *deadline);
/* Bumps the wake word and wakes every sleeper on it, in every process
 * (those another wait sleeps there look again and sleep on). */
void dxgk_shared_fence_kick(struct dxgk_shared_fence *sf);

/* futex_waitv (Linux 5.16): false on a kernel without it. */
struct dxgk_waitv {                      /* struct futex_waitv */
    uint64_t val;
    uint64_t uaddr;
    uint32_t flags;
    uint32_t reserved;
};
#define DXGK_WAITV_MAX 128               /* the kernel's limit */
#define DXGK_WAITV_U32 0x02              /* FUTEX2_SIZE_U32 */
#define DXGK_WAITV_PRIVATE 0x80          /* FUTEX2_PRIVATE */
bool dxgk_futex_waitv(struct dxgk_waitv *w, unsigned count, const struct timespec *deadline);

/* shared_fence_watch.c: the process's watcher thread, started with the
 * first watched fence.  STATUS_INSUFFICIENT_RESOURCES if it cannot start. */
NTSTATUS dxgk_shared_fence_watch(struct dxgk_shared_fence *sf, struct dxgk_syncobj *obj);
void dxgk_shared_fence_unwatch(struct dxgk_shared_fence *sf);
/* An async CPU wait on shared fences is pending: the watcher looks again. */
void dxgk_shared_fence_cpu_blocked(void);
/* A GPU wait on this fence stays blocked (the scheduler's locks held). */
void dxgk_shared_fence_gpu_blocked(struct dxgk_shared_fence *sf);
/* Process teardown: stops the watcher (no fence is watched any more). */
void dxgk_shared_fence_watch_stop(void);
/* In a fork() child: no watcher thread exists (fork.c). */
void dxgk_shared_fence_watch_forget(void);

#endif /* KMTSHIM_SHARED_FENCE_H */
