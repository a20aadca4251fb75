/*
 * Helpers shared by the execution tests (contexts, submission, sync
 * objects) on the software adapter: allocations kept mapped, command
 * streams in the soft engine's format (kmtsoft.h), monitored fences,
 * eventfds.  Every helper that cannot fail in a correct program asserts.
 */
#ifndef KMTSHIM_EXEC_UTIL_H
#define KMTSHIM_EXEC_UTIL_H

#include <stdbool.h>

#include "test_util.h"

/* Generous bound on every wait of the tests: a lost wake-up fails the test
 * with STATUS_TIMEOUT instead of hanging it. */
#define KMT_EXEC_WAIT_MS 10000

/* An allocation with its GPU VA, locked (mapped) for its whole life. */
struct kmt_buf {
    D3DKMT_HANDLE handle;
    D3DGPU_VIRTUAL_ADDRESS va;
    void *cpu;
    UINT64 size;
};

/* A command stream in the soft engine's format, built on the CPU. */
struct kmt_cmds {
    _Alignas(8) unsigned char data[2048];   /* commands hold 64-bit fields: aligned in arrays too */
    UINT length;
};

/* Command buffers in GPU memory: every submission gets fresh space, so
 * queued work never reads bytes a later submission overwrote. */
struct kmt_ring {
    struct kmt_buf buf;
    UINT used;
};

struct kmt_fence {
    D3DKMT_HANDLE handle;
    const volatile UINT64 *cpu;          /* FenceValueCPUVirtualAddress */
    D3DGPU_VIRTUAL_ADDRESS gpu;          /* FenceValueGPUVirtualAddress */
};

/* Contexts on node 0. */
D3DKMT_HANDLE kmt_exec_virtual_context(D3DKMT_HANDLE device);
D3DKMT_HANDLE kmt_exec_legacy_context(D3DKMT_HANDLE device, D3DKMT_CREATECONTEXT *out);
NTSTATUS kmt_exec_destroy_context(D3DKMT_HANDLE context);

/* CreateAllocation2 of a driver-private soft allocation, then Lock2. */
void kmt_buf_create(D3DKMT_HANDLE device, UINT64 size, struct kmt_buf *buf);
/* Unlock2 and DestroyAllocation2 with `flags`. */
NTSTATUS kmt_buf_destroy(D3DKMT_HANDLE device, struct kmt_buf *buf, UINT flags);

void kmt_ring_create(D3DKMT_HANDLE device, UINT64 size, struct kmt_ring *ring);
void kmt_ring_destroy(D3DKMT_HANDLE device, struct kmt_ring *ring);
/* Copies the stream into the ring and returns its GPU VA. */
D3DGPU_VIRTUAL_ADDRESS kmt_ring_put(struct kmt_ring *ring, const struct kmt_cmds *cmds);
/* SubmitCommand of the stream on one or several (broadcast) contexts. */
NTSTATUS kmt_ring_submit(struct kmt_ring *ring, const D3DKMT_HANDLE *contexts, UINT count,
                         const struct kmt_cmds *cmds);
NTSTATUS kmt_submit_va(D3DKMT_HANDLE context, D3DGPU_VIRTUAL_ADDRESS va, UINT length);

void kmt_cmds_init(struct kmt_cmds *c);
void kmt_cmd_nop(struct kmt_cmds *c);
void kmt_cmd_fill(struct kmt_cmds *c, UINT64 dst, UINT64 bytes, UINT value);
void kmt_cmd_copy(struct kmt_cmds *c, UINT64 dst, UINT64 src, UINT64 bytes);
/* KMT_SOFT_OP_SIGNAL_FENCE, _WAIT_FENCE or _WRITE64. */
void kmt_cmd_fence(struct kmt_cmds *c, UINT opcode, UINT64 va, UINT64 value);
void kmt_cmd_delay(struct kmt_cmds *c, UINT microseconds);
/* A header alone, `size` bytes with zeros after it (for malformed streams). */
void kmt_cmd_raw(struct kmt_cmds *c, UINT opcode, UINT size);

/* Monitored fences. */
NTSTATUS kmt_fence_create(D3DKMT_HANDLE device, UINT64 initial, UINT flags, struct kmt_fence *fence);
NTSTATUS kmt_fence_signal(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, UINT flags);
/* Waits for one fence with the Timeout extension. */
NTSTATUS kmt_fence_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, int timeout_ms);
/* The same, or with `event` (non-NULL) an async wait that sets it later. */
NTSTATUS kmt_fence_wait_or_event(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, HANDLE event,
                                 int timeout_ms);
NTSTATUS kmt_gpu_signal(D3DKMT_HANDLE context, D3DKMT_HANDLE fence, UINT64 value);
NTSTATUS kmt_gpu_wait(D3DKMT_HANDLE context, D3DKMT_HANDLE fence, UINT64 value);
NTSTATUS kmt_syncobj_destroy(D3DKMT_HANDLE handle);

/* Legacy objects through CreateSynchronizationObject2. */
NTSTATUS kmt_syncobj_create2(D3DKMT_HANDLE device, D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                             D3DKMT_HANDLE *out);
/* SignalSynchronizationObject2 / WaitForSynchronizationObject2 of one
 * object (a legacy fence's value in Fence.FenceValue). */
NTSTATUS kmt_signal2(D3DKMT_HANDLE context, D3DKMT_HANDLE obj, UINT64 value);
NTSTATUS kmt_wait2(D3DKMT_HANDLE context, D3DKMT_HANDLE obj, UINT64 value);

/* Native events are eventfds. */
int kmt_eventfd(void);
HANDLE kmt_event_handle(int fd);
/* Polls an eventfd; true (and the event consumed) if it was set in time. */
bool kmt_event_wait(int fd, int timeout_ms);

D3DKMT_DEVICEEXECUTION_STATE kmt_exec_state(D3DKMT_HANDLE device);

/* Polls the soft adapter's statistics until `field` (an offset into
 * KMT_SOFT_ESCAPE.Stats) equals `value` or the time runs out; returns the
 * last value read. */
UINT64 kmt_soft_stat_wait(D3DKMT_HANDLE adapter, size_t field, UINT64 value, int timeout_ms);
#define KMT_SOFT_STAT(name) offsetof(KMT_SOFT_ESCAPE, Stats.name)

/* Sleeps `ms` milliseconds. */
void kmt_sleep_ms(unsigned ms);

#endif
