/*
 * DRM miniport: command submission - contexts, submissions, legacy
 * batches, fences, syncobjs and the watcher.
 *
 * Fences (drm_fence.c): a monitored fence is a timeline syncobj on the
 *   adapter's fd (KmtDdiCreateFence, 1.2) where the kernel has timelines and
 *   SYNCOBJ_EVENTFD (virtio_gpu on 6.12); the core keeps the value the
 *   program reads and the miniport mirrors every store of it into the
 *   timeline (KmtDdiSignalFence; a rewind is SYNCOBJ_RESET + the lower
 *   point).  QUERY_FENCE hands the syncobj out; from then on the watcher
 *   follows it and raises the core's value when the kernel signals it (a
 *   submission's out-syncobj, the UMD's own ioctl) - MONITORED_FENCE_SIGNALED.
 *   Elsewhere (vgem) fences live in memory only.  GPU VA of the value: 0.
 * Contexts (drm_context.c): where the kernel runs command buffers (virtio_gpu
 *   on a virgl host: the fd's own virgl context; i915: a GEM context each;
 *   amdgpu: an AMDGPU_CTX each; xe: an exec queue each on the adapter's VM);
 *   elsewhere CreateContext is
 *   STATUS_NOT_SUPPORTED.  Each context keeps its progress in a context
 *   allocation (DxgkCbCreateContextAllocation).
 * Submission (drm_submit.c): a command buffer is the driver's native stream
 *   (virgl commands, i915 batches), handed to the kernel as it is: virtual
 *   submissions pass its GPU VA (i915: inside one of the objects, each
 *   softpinned at its address) or, without a GPU VA space, its CPU address;
 *   legacy ones the DMA buffer Render copied.  Each submission signals the
 *   next point of the adapter's ring timeline; the watcher (drm_watch.c)
 *   raises DMA_COMPLETED when the kernel signals it.  A refused submission
 *   faults the device (DMA_PAGE_FAULTED for a bad address).
 *   On amdgpu and xe (GPU VA) a virtual submission's address is a GPU VA
 *   that must lie in one of the adapter's objects; a legacy one is copied
 *   into an IB / batch object of the family's own, kept until its context
 *   completed it.
 *   Legacy (Render) submissions hold the core's GPU references on their
 *   allocation list (dxgk_allocation_gpu_ref), so DestroyAllocation and Lock
 *   wait for them; a virtual one names GEM handles (KMT_DRM_SUBMIT) the core
 *   does not see, but the kernel holds and fences those objects until the
 *   host is done, so VIRTGPU_WAIT at Lock waits and an early GEM_CLOSE frees
 *   nothing the host still uses.
 */
#ifndef KMTSHIM_DRM_CS_H
#define KMTSHIM_DRM_CS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtshim/kmtdrm.h"
#include "base/kmt_list.h"

struct kdrm_adapter;
struct kdrm_copy_ref;
struct kdrm_device;

/* A kernel timeline point, laid out as virtio_gpu's execbuffer takes it. */
struct kdrm_sync_point {
    UINT32 handle;                       /* syncobj on the adapter's fd */
    UINT32 flags;
    UINT64 point;
};

/* A command buffer for the kernel: the driver's native stream.  Where the
 * adapter gives allocations GPU virtual addresses (kdrm_adapter.gpu_va), a
 * virtual submission names it by GPU VA (`cmd_va`, `cmds` NULL): it lies in
 * one of the process's allocations.  A legacy one, and every submission on
 * the other adapters, is CPU memory (`cmds`, `cmd_va` 0). */
struct kdrm_job {
    const void *cmds;
    UINT64 cmd_va;
    UINT size;
    const UINT32 *bos;                   /* GEM handles it names */
    UINT nbos;
    const struct kdrm_sync_point *waits;
    UINT nwaits;
    const struct kdrm_sync_point *signals; /* [0] is the adapter's ring point */
    UINT nsignals;
};

/* How a legacy stream becomes a command buffer of the family's own. */
struct kdrm_batch_shape {
    UINT flags;                          /* the copy's KMT_DRM_ALLOCATION_* */
    UINT32 end;                          /* a dword after the stream (0: none) */
    UINT pad_to;                         /* padded to a multiple of these bytes (0: not) */
    UINT32 pad;                          /* with this dword */
};

/* A monitored fence's timeline syncobj (drm_fence.c). */
struct kdrm_fence {
    struct list entry;                   /* kdrm_exec.fences */
    _Atomic UINT64 *value;               /* the core's fence value */
    UINT32 syncobj;
    UINT64 point;                        /* the timeline's value as last set or seen */
    UINT64 armed;                        /* pending SYNCOBJ_EVENTFD point, 0: none */
    bool exported;                       /* handed out: others may signal it */
    bool seen;                           /* the watcher saw `point` signal, not yet raised */
};

/* A submission the kernel has not completed yet (drm_submit.c). */
struct kdrm_submission {
    struct list entry;                   /* kdrm_exec.inflight, in ring point order */
    struct kdrm_context *ctx;
    UINT64 point;                        /* ring point that completes it */
    UINT fence_id;
    UINT node;
    struct kdrm_copy_ref *copies;        /* written back when it completed */
    UINT ncopies;
};

/* An adapter's fences and submissions, and the watcher thread that turns
 * the kernel's signals into interrupts (drm_watch.c).  `lock` is a leaf:
 * nothing calls into the core while holding it. */
struct kdrm_exec {
    pthread_mutex_t lock;
    struct list fences;                  /* struct kdrm_fence */
    struct list inflight;                /* struct kdrm_submission */
    UINT32 ring;                         /* submission timeline, while contexts exist */
    UINT64 ring_next;                    /* last ring point handed out */
    UINT64 ring_armed;                   /* pending SYNCOBJ_EVENTFD point, 0: none */
    /* Submissions the kernel may have taken that are not on `inflight` yet
     * (their point is handed out before the ioctl, recorded after it): a
     * fence one of them signalled waits for its write-backs (drm_watch.c). */
    unsigned unrecorded;
    UINT64 unrecorded_point;             /* the oldest one's ring point */
    bool fences_held;                    /* the watcher waits for a recording */
    unsigned contexts;
    int evfd;                            /* the watcher's eventfd, -1 when none; under `lock` */
    pthread_t thread;
    bool watching;
    bool stop;
    bool degraded;                       /* a registration failed: the watcher polls */
    bool unread;                         /* a timeline could not be read: it polls too */
};

/* The context's progress, kept in its context allocation: what a GPU
 * writes into a context's save area, here written by the miniport. */
struct kdrm_context_block {
    UINT64 submitted_point, completed_point;
    UINT submissions, faults;
    UINT last_submitted_fence, last_completed_fence;
};

struct kdrm_context {
    struct kdrm_device *device;
    HANDLE core_context;
    UINT node;
    UINT kernel_ctx;                     /* amdgpu / i915 context id, 0 on virtio_gpu */
    HANDLE block_allocation;             /* DxgkCbCreateContextAllocation's handle */
    struct kdrm_context_block *block;    /* its CPU memory */
};

/* drm_batch.c: legacy streams on adapters with GPU VA.  submit is the
 * family's submit, a legacy stream first copied into an object with a VA
 * (kdrm_family.batch) and kept until its context completed it; release
 * frees the kept copies of context `c` (NULL: of every context), all of
 * them or only those completed. */
void kdrm_batches_init(struct kdrm_adapter *a);
int kdrm_batch_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job);
void kdrm_batches_release(struct kdrm_adapter *a, const struct kdrm_context *c, bool all);

/* drm_syncobj.c: the kernel's syncobj calls (0 or -errno) */
int kdrm_syncobj_create(struct kdrm_adapter *a, UINT32 *handle);
void kdrm_syncobj_destroy(struct kdrm_adapter *a, UINT32 handle);   /* never injected */
int kdrm_syncobj_signal(struct kdrm_adapter *a, UINT32 handle, UINT64 point);
int kdrm_syncobj_reset(struct kdrm_adapter *a, UINT32 handle);
int kdrm_syncobj_query(struct kdrm_adapter *a, UINT32 handle, bool last_submitted, UINT64 *point);
/* The kernel signals the eventfd once `point` signalled (one shot). */
int kdrm_syncobj_eventfd(struct kdrm_adapter *a, UINT32 handle, UINT64 point, int evfd);
/* Does the kernel have SYNCOBJ_EVENTFD?  (Creates and frees a syncobj.) */
bool kdrm_syncobj_probe_eventfd(struct kdrm_adapter *a);

/* drm_fence.c */
NTSTATUS APIENTRY kdrm_create_fence(HANDLE hAdapter, KMTARG_CREATEFENCE *args);
void APIENTRY kdrm_destroy_fence(HANDLE hAdapter, HANDLE hDriverFence);
NTSTATUS APIENTRY kdrm_signal_fence(HANDLE hAdapter, HANDLE hDriverFence, UINT64 value);
/* Fences as syncobj fds across processes (DDI 1.6). */
NTSTATUS APIENTRY kdrm_export_fence(HANDLE hAdapter, HANDLE hDriverFence, int *pFd);
NTSTATUS APIENTRY kdrm_import_fence(HANDLE hAdapter, KMTARG_IMPORTFENCE *p);
/* One of the adapter's fences by pointer or syncobj; exec.lock held. */
struct kdrm_fence *kdrm_fence_find(struct kdrm_adapter *a, const void *ptr, UINT32 syncobj);
NTSTATUS kdrm_fence_export(struct kdrm_adapter *a, D3DKMT_HANDLE h, KMT_DRM_FENCE_INFO *info);

/* drm_watch.c */
void kdrm_exec_init(struct kdrm_adapter *a);
/* Starts the watcher if it is not running; exec.lock held. */
int kdrm_watch_start_locked(struct kdrm_adapter *a);
/* Stops it and frees what is left; no lock held. */
void kdrm_exec_stop(struct kdrm_adapter *a);
/* Makes the watcher look again (a record it may have missed); exec.lock
 * held (the eventfd's number is read under it). */
void kdrm_watch_kick_locked(struct kdrm_adapter *a);
/* Keeps a SYNCOBJ_EVENTFD registration pending for the oldest submission
 * and for an exported fence's next point; exec.lock held. */
void kdrm_watch_arm_ring_locked(struct kdrm_adapter *a);
void kdrm_watch_arm_fence_locked(struct kdrm_adapter *a, struct kdrm_fence *f);

/* drm_context.c */
NTSTATUS APIENTRY kdrm_create_context(HANDLE hDevice, DXGKARG_CREATECONTEXT *args);
NTSTATUS APIENTRY kdrm_destroy_context(HANDLE hContext);
NTSTATUS APIENTRY kdrm_render(HANDLE hContext, DXGKARG_RENDER *args);
NTSTATUS kdrm_context_info(struct kdrm_adapter *a, HANDLE hContext, KMT_DRM_CONTEXT_INFO *info);

/* drm_submit.c */
NTSTATUS APIENTRY kdrm_submit_command(HANDLE hAdapter, const DXGKARG_SUBMITCOMMAND *args);
NTSTATUS APIENTRY kdrm_submit_command_virtual(HANDLE hAdapter, const DXGKARG_SUBMITCOMMANDVIRTUAL *args);

/* drm_retire.c */
/* Moves the submissions up to ring point `done` to `retired`; exec.lock
 * held.  True if any: *irq is then their DMA_COMPLETED (the newest fence
 * id), to raise once kdrm_submissions_free() wrote their copies back. */
bool kdrm_submissions_retire_locked(struct kdrm_adapter *a, UINT64 done, struct list *retired,
                                    DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq);
/* Frees a list of retired (`completed`) or dropped submissions, writing
 * back their copies first; no lock held. */
void kdrm_submissions_free(struct kdrm_adapter *a, struct list *list, bool completed);

/* drm_interrupt.c */
void kdrm_raise(struct kdrm_adapter *a, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq);
/* DMA_PAGE_FAULTED at `va` for -EFAULT, else DMA_FAULTED with the errno's
 * status. */
void kdrm_raise_fault(struct kdrm_adapter *a, UINT fence_id, UINT node, int err, D3DGPU_VIRTUAL_ADDRESS va);

#endif /* KMTSHIM_DRM_CS_H */
