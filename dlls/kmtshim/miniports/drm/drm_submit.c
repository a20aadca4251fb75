/*
 * DRM miniport: DxgkDdiSubmitCommand and DxgkDdiSubmitCommandVirtual.
 *
 * A command buffer is the kernel driver's native stream, handed over as it
 * is (kmtdrm.h): on virtio_gpu, virgl commands in one VIRTGPU_EXECBUFFER.
 * virtio_gpu has no GPU virtual address space, so there a virtual
 * submission's DmaBufferVirtualAddress is the stream's CPU address in this
 * process (D3DKMT_SUBMITCOMMAND.Commands), read by the kernel right here.
 * Adapters with GPU VA (kdrm_adapter.gpu_va: i915 with softpin, xe,
 * amdgpu) get the address as a GPU VA in one of the process's allocations
 * (kdrm_job.cmd_va); one in no allocation is a page fault at that
 * address.  A legacy submission
 * is the DMA buffer DxgkDdiRender filled, with the GEM objects of its
 * allocation list; on an adapter with GPU VA drm_batch.c first copies it
 * into an object of the family's own, so the family sees a GPU VA there too.
 *
 * Completion: every submission also signals the next point of the
 * adapter's ring (a timeline syncobj, kernel out-syncobj [0]); the watcher
 * reports DMA_COMPLETED when the ring reaches it.  The kernel may complete
 * a submission before the miniport recorded it on `inflight`: until it is,
 * it counts as unrecorded, and the watcher holds back the fences it may
 * have signalled (drm_watch.c).  Copy-backed objects the
 * submission names are refreshed from the caller's pages before it and
 * written back after it (drm_copy_sync.c).  A submission the kernel
 * refuses faults the device like hardware would (DMA_PAGE_FAULTED at the
 * stream's address for EFAULT, DMA_FAULTED with the errno's status
 * otherwise) and completes after the submissions before it; the DDI itself
 * then succeeds, so the core never sees the two interrupts out of order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"

#define MAX_LIST_BOS 256u                /* the context's allocation list (drm_context.c) */

struct plan {
    struct kdrm_job job;
    UINT32 bos[MAX_LIST_BOS];
    struct kdrm_sync_point waits[KMT_DRM_SUBMIT_MAX_SYNCS];
    struct kdrm_sync_point signals[1 + KMT_DRM_SUBMIT_MAX_SYNCS];
};

static void plan_init(struct plan *p, const void *cmds, UINT size)
{
    memset(&p->job, 0, sizeof(p->job));
    p->job.cmds = cmds;
    p->job.size = size;
    p->job.bos = p->bos;
    p->job.waits = p->waits;
    p->job.signals = p->signals;
    p->job.nsignals = 1;                 /* the ring point, filled at submission */
}

/* The kernel takes each object once: a repeated handle fails the whole
 * submission (EALREADY from its reservation lock), and an allocation list
 * may name an allocation twice (read in one entry, written in another). */
static void plan_add_bo(struct plan *p, UINT32 handle)
{
    for (UINT i = 0; i < p->job.nbos; i++)
        if (p->bos[i] == handle)
            return;
    p->bos[p->job.nbos++] = handle;
}

/* Where the stream is, as a fault reports it: its GPU VA, or its CPU address. */
static D3DGPU_VIRTUAL_ADDRESS job_address(const struct kdrm_job *job)
{
    return job->cmds ? (D3DGPU_VIRTUAL_ADDRESS)(uintptr_t)job->cmds : job->cmd_va;
}

/* Hands the plan to the kernel (unless `err` already refused it or it is
 * NullRendering) and records its completion point. */
static NTSTATUS submit_plan(struct kdrm_adapter *a, struct kdrm_context *c, UINT fence_id, UINT node,
                            struct plan *p, int err, bool null_rendering)
{
    struct kdrm_exec *x = &a->exec;
    struct kdrm_submission *s = calloc(1, sizeof(*s));
    UINT64 point;

    if (!s)
        return STATUS_NO_MEMORY;
    pthread_mutex_lock(&x->lock);
    point = ++x->ring_next;
    if (!x->unrecorded++)
        x->unrecorded_point = point;
    p->signals[0].handle = x->ring;
    p->signals[0].flags = 0;
    p->signals[0].point = point;
    pthread_mutex_unlock(&x->lock);

    if (!err && !null_rendering) {
        if (!a->family->submit)
            err = -ENOSYS;
        else if (!(err = kdrm_copy_push(a, p->job.bos, p->job.nbos, s)) &&
                 (err = kdrm_batch_submit(a, c, &p->job)) < 0)
            kdrm_copy_finish(a, s, false);
        if (!err)
            kdrm_fault_stall_point("submitted");
    }
    if (err) {
        /* the fault first: once recorded, the watcher may complete it */
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "submission %u refused: %s\n", fence_id, strerror(-err));
        kdrm_raise_fault(a, fence_id, node, err, job_address(&p->job));
    }

    pthread_mutex_lock(&x->lock);
    if (err || null_rendering) {
        /* no ring point was added: it completes with the one before it */
        if (x->ring_next == point)
            x->ring_next--;
        point = x->ring_next;
    }
    s->ctx = c;
    s->point = point;
    s->fence_id = fence_id;
    s->node = node;
    list_add_tail(&x->inflight, &s->entry);
    atomic_fetch_add(&a->submissions, 1);
    c->block->submitted_point = point;
    c->block->last_submitted_fence = fence_id;
    if (err)
        c->block->faults++;
    else if (!null_rendering)
        c->block->submissions++;
    if (!--x->unrecorded && x->fences_held) {
        x->fences_held = false;
        kdrm_watch_kick_locked(a);       /* it may retire now, then raise the fences */
    }
    kdrm_watch_arm_ring_locked(a);
    if (err || null_rendering)
        kdrm_watch_kick_locked(a);       /* its point may have signalled long ago */
    pthread_mutex_unlock(&x->lock);
    /* recorded: the watcher may complete it before this returns */
    kdrm_fault_stall_point("recorded");
    return STATUS_SUCCESS;
}

/* Waits and signals name fences whose syncobj was handed out; never the
 * ring or a syncobj the miniport does not own. */
static int take_points(struct kdrm_adapter *a, const KMT_DRM_SYNC_POINT *in, UINT n, struct kdrm_sync_point *out)
{
    for (UINT i = 0; i < n; i++) {
        struct kdrm_fence *f = kdrm_fence_find(a, NULL, in[i].SyncobjHandle);

        if (!in[i].SyncobjHandle || in[i].Reserved || !f || !f->exported)
            return -EINVAL;
        out[i].handle = in[i].SyncobjHandle;
        out[i].flags = 0;
        out[i].point = in[i].Point;
    }
    return 0;
}

static int parse_private(struct kdrm_adapter *a, const void *data, UINT size, struct plan *p)
{
    const KMT_DRM_SUBMIT *d = data;
    int err;

    if (!size)
        return 0;
    if (size != sizeof(*d) || d->Magic != KMT_DRM_MAGIC || d->Version != KMT_DRM_VERSION || d->Reserved ||
        d->NumBoHandles > KMT_DRM_SUBMIT_MAX_BOS || d->NumWaits > KMT_DRM_SUBMIT_MAX_SYNCS ||
        d->NumSignals > KMT_DRM_SUBMIT_MAX_SYNCS)
        return -EINVAL;
    for (UINT i = 0; i < d->NumBoHandles; i++)
        plan_add_bo(p, d->BoHandles[i]);
    pthread_mutex_lock(&a->exec.lock);
    err = take_points(a, d->Waits, d->NumWaits, p->waits);
    if (!err)
        err = take_points(a, d->Signals, d->NumSignals, p->signals + 1);
    pthread_mutex_unlock(&a->exec.lock);
    p->job.nwaits = d->NumWaits;
    p->job.nsignals = 1 + d->NumSignals;
    return err;
}

NTSTATUS APIENTRY kdrm_submit_command_virtual(HANDLE hAdapter, const DXGKARG_SUBMITCOMMANDVIRTUAL *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_context *c = args->hContext;
    struct plan *p = malloc(sizeof(*p));
    NTSTATUS status;
    int err;

    if (!p)
        return STATUS_NO_MEMORY;
    if (a->gpu_va) {
        plan_init(p, NULL, args->DmaBufferSize);
        p->job.cmd_va = args->DmaBufferVirtualAddress;
    } else {
        plan_init(p, (const void *)(uintptr_t)args->DmaBufferVirtualAddress, args->DmaBufferSize);
    }
    err = parse_private(a, args->pDmaBufferPrivateData, args->DmaBufferUmdPrivateDataSize, p);
    status = submit_plan(a, c, args->SubmissionFenceId, args->NodeOrdinal, p, err, args->Flags.NullRendering);
    free(p);
    return status;
}

NTSTATUS APIENTRY kdrm_submit_command(HANDLE hAdapter, const DXGKARG_SUBMITCOMMAND *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_context *c = args->hContext;
    UINT start = args->DmaBufferSubmissionStartOffset, end = args->DmaBufferSubmissionEndOffset;
    struct plan *p = malloc(sizeof(*p));
    NTSTATUS status;
    int err = 0;

    if (!p)
        return STATUS_NO_MEMORY;
    plan_init(p, (const char *)args->pKmtDmaBuffer + start, end >= start ? end - start : 0);
    if (end < start || end > args->DmaBufferSize || args->KmtAllocationListSize > MAX_LIST_BOS)
        err = -EINVAL;
    for (UINT i = 0; !err && i < args->KmtAllocationListSize; i++) {
        const struct kdrm_bo *bo = args->pKmtAllocationList[i].hDeviceSpecificAllocation;

        if (bo)
            plan_add_bo(p, bo->handle);
    }
    status = submit_plan(a, c, args->SubmissionFenceId, args->NodeOrdinal, p, err, args->Flags.NullRendering);
    free(p);
    return status;
}
