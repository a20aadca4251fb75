/*
 * DRM miniport: contexts (DxgkDdiCreateContext, DxgkDdiDestroyContext) and
 * DxgkDdiRender.
 *
 * A context exists where the kernel driver runs command buffers and the
 * kernel has what completion tracking needs (timeline syncobjs and
 * SYNCOBJ_EVENTFD); elsewhere (vgem, vkms, virtio_gpu on a 2D host,
 * unknown drivers) CreateContext and CreateContextVirtual fail with
 * STATUS_NOT_SUPPORTED and nothing is left behind.  Per driver:
 *   virtio_gpu   the fd's own virgl context (the kernel makes it at the
 *                first 3D call); every D3D context submits through it
 *   i915         a GEM context of its own (reported in KMT_DRM_CONTEXT_DESC)
 *                with its own full PPGTT; submissions run where the adapter
 *                has GPU VA (family_i915.c), elsewhere they fault with
 *                STATUS_NOT_SUPPORTED
 *   amdgpu       an AMDGPU_CTX of its own, reported in KMT_DRM_CONTEXT_DESC;
 *                its submissions are AMDGPU_CS on it (family_amdgpu.c)
 *   xe           an exec queue of its own on the adapter's VM, reported in
 *                KMT_DRM_CONTEXT_DESC; its submissions are XE_EXEC on it
 * Each context's progress block (what a GPU writes into a context's save
 * area) is a context allocation made through DxgkCbCreateContextAllocation
 * and freed at DestroyContext.  The first context of an adapter makes its
 * ring (the submission timeline) and starts the watcher; the last one
 * frees the ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drm_winsys.h"
#include "drm_cs.h"
#include "drm_trace.h"

#define DMA_BUFFER_SIZE (64u * 1024u)
#define ALLOCATION_LIST_SIZE 256u        /* drm_submit.c takes as many */

static bool can_run(const struct kdrm_adapter *a)
{
    return a->family->ctx_create && (a->caps & KMT_DRM_CAP_FENCES);
}

static NTSTATUS check_desc(const DXGKARG_CREATECONTEXT *args, KMT_DRM_CONTEXT_DESC **desc)
{
    KMT_DRM_CONTEXT_DESC *d = args->pPrivateDriverData;

    *desc = NULL;
    if (!args->PrivateDriverDataSize)
        return STATUS_SUCCESS;
    if (args->PrivateDriverDataSize != sizeof(*d) || d->Magic != KMT_DRM_MAGIC || d->Version != KMT_DRM_VERSION)
        return STATUS_INVALID_PARAMETER;
    *desc = d;
    return STATUS_SUCCESS;
}

/* The ring and the watcher come with the adapter's first context. */
static int exec_add_context(struct kdrm_adapter *a)
{
    struct kdrm_exec *x = &a->exec;
    int err = 0;

    pthread_mutex_lock(&x->lock);
    if (!x->ring && (err = kdrm_syncobj_create(a, &x->ring)) < 0)
        x->ring = 0;
    if (!err && (err = kdrm_watch_start_locked(a)) < 0 && !x->contexts) {
        kdrm_syncobj_destroy(a, x->ring);
        x->ring = 0;
    }
    if (!err)
        x->contexts++;
    pthread_mutex_unlock(&x->lock);
    return err;
}

static void exec_remove_context(struct kdrm_adapter *a)
{
    struct kdrm_exec *x = &a->exec;

    pthread_mutex_lock(&x->lock);
    /* the core drained the context: nothing of it is in flight */
    if (!--x->contexts && list_empty(&x->inflight)) {
        kdrm_syncobj_destroy(a, x->ring);
        x->ring = 0;
        x->ring_next = 0;
        x->ring_armed = 0;
    }
    pthread_mutex_unlock(&x->lock);
}

static NTSTATUS make_block(struct kdrm_adapter *a, struct kdrm_context *c)
{
    DXGKARGCB_CREATECONTEXTALLOCATION ca = { 0 };
    NTSTATUS status;

    ca.hAdapter = a->dxgkrnl.DeviceHandle;
    ca.hDevice = c->device->core_device;
    ca.hContext = c->core_context;
    ca.hDriverAllocation = c;
    ca.Size = a->page_size;
    ca.Alignment = a->page_size;
    ca.SupportedSegmentSet = 1;
    if ((status = a->dxgkrnl.DxgkCbCreateContextAllocation(&ca)))
        return status;
    c->block_allocation = ca.hAllocation;
    c->block = ca.pKmtCpuAddress;
    return STATUS_SUCCESS;
}

static void free_block(struct kdrm_adapter *a, struct kdrm_context *c)
{
    NTSTATUS status = a->dxgkrnl.DxgkCbDestroyContextAllocation(a->dxgkrnl.DeviceHandle, c->block_allocation);

    if (status)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "context allocation %p: %#x\n", c->block_allocation,
                   (unsigned)status);
}

NTSTATUS APIENTRY kdrm_create_context(HANDLE hDevice, DXGKARG_CREATECONTEXT *args)
{
    struct kdrm_device *d = hDevice;
    struct kdrm_adapter *a = d->adapter;
    KMT_DRM_CONTEXT_DESC *desc;
    struct kdrm_context *c;
    NTSTATUS status;
    int err;

    if (!can_run(a))
        return STATUS_NOT_SUPPORTED;
    if (args->NodeOrdinal != 0 || (status = check_desc(args, &desc)))
        return STATUS_INVALID_PARAMETER;
    if (!(c = calloc(1, sizeof(*c))))
        return STATUS_NO_MEMORY;
    c->device = d;
    c->core_context = args->hContext;
    c->node = args->NodeOrdinal;
    if ((err = a->family->ctx_create(a, c)) < 0) {
        free(c);
        return err == -EOPNOTSUPP ? STATUS_NOT_SUPPORTED : kdrm_status_from_errno(err);
    }
    if ((status = make_block(a, c))) {
        a->family->ctx_destroy(a, c);
        free(c);
        return status;
    }
    if ((err = exec_add_context(a)) < 0) {
        free_block(a, c);
        a->family->ctx_destroy(a, c);
        free(c);
        return kdrm_status_from_errno(err);
    }
    if (desc) {
        desc->KernelContext = c->kernel_ctx;
        desc->CanSubmit = (a->caps & KMT_DRM_CAP_SUBMIT) != 0;
    }
    memset(&args->ContextInfo, 0, sizeof(args->ContextInfo));
    args->ContextInfo.DmaBufferSize = DMA_BUFFER_SIZE;
    args->ContextInfo.AllocationListSize = ALLOCATION_LIST_SIZE;
    args->ContextInfo.Caps.NoPatchingRequired = 1;   /* the stream names objects, not addresses */
    args->hContext = c;
    atomic_fetch_add(&a->contexts, 1);
    kdrm_trace(a, KMT_TRACE_TRACE, __func__, "context %p (kernel context %u)\n", (void *)c, c->kernel_ctx);
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_destroy_context(HANDLE hContext)
{
    struct kdrm_context *c = hContext;
    struct kdrm_adapter *a = c->device->adapter;

    exec_remove_context(a);
    kdrm_batches_release(a, c, true);    /* the core drained it: its batches are done */
    a->family->ctx_destroy(a, c);
    free_block(a, c);
    atomic_fetch_sub(&a->contexts, 1);
    free(c);
    return STATUS_SUCCESS;
}

/* No patching: the stream is copied as it is.  Its objects travel in the
 * allocation list (their GEM handles reach the kernel with it); there are
 * no GPU addresses to write, so a patch location is an error. */
NTSTATUS APIENTRY kdrm_render(HANDLE hContext, DXGKARG_RENDER *args)
{
    if (args->PatchLocationListInSize)
        return STATUS_INVALID_PARAMETER;
    if (args->CommandLength > args->DmaSize)
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    memcpy(args->pDmaBuffer, args->pCommand, args->CommandLength);
    args->pDmaBuffer = (char *)args->pDmaBuffer + args->CommandLength;
    return STATUS_SUCCESS;
}

NTSTATUS kdrm_context_info(struct kdrm_adapter *a, HANDLE hContext, KMT_DRM_CONTEXT_INFO *info)
{
    struct kdrm_context *c = hContext;
    int err = 0;

    memset(info, 0, sizeof(*info));
    if (!c || c->device->adapter != a)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&a->exec.lock);
    info->RingSyncobj = a->exec.ring;
    info->Fd = a->fd;
    if (a->exec.ring)
        err = kdrm_syncobj_query(a, a->exec.ring, false, &info->RingKernelValue);
    info->SubmittedPoint = c->block->submitted_point;
    info->CompletedPoint = c->block->completed_point;
    info->Submissions = c->block->submissions;
    info->Faults = c->block->faults;
    info->LastFenceId = c->block->last_completed_fence;
    info->KernelContext = c->kernel_ctx;
    pthread_mutex_unlock(&a->exec.lock);
    return kdrm_status_from_errno(err);
}
