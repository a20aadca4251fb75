/*
 * DRM miniport: driver-private escapes (see kmtdrm.h).  GET_STATS,
 * QUERY_ALLOCATION, QUERY_FENCE and QUERY_CONTEXT let a test (or a UMD)
 * reach the kernel's side (GEM handles, syncobjs, the fds they live on);
 * SET_FAULT is the fault-injection hook of drm_fault.c.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"

static void get_stats(struct kdrm_adapter *a, KMT_DRM_STATS *s)
{
    memset(s, 0, sizeof(*s));
    s->Devices = atomic_load(&a->devices);
    s->Buffers = atomic_load(&a->buffers);
    s->BytesAllocated = atomic_load(&a->bytes);
    s->Bindings = atomic_load(&a->bindings);
    s->Mappings = atomic_load(&a->mappings);
    kdrm_fault_counts(&s->FaultsFired, &s->FaultCallsSeen);
    s->RenderFd = a->render_fd;
    s->CardFd = a->card_fd;
    s->Contexts = atomic_load(&a->contexts);
    s->Fences = atomic_load(&a->fences);
    s->Syncobjs = atomic_load(&a->syncobjs);
    s->Submissions = atomic_load(&a->submissions);
}

/* A copy of the object behind a driver allocation handle, if it is one of
 * this adapter's.  Another miniport's handle (or a stale one) may point
 * anywhere: the kernel reads it for us, so a bad pointer is EFAULT, not a
 * crash, and the magic and adapter fields tell ours from anything else. */
static bool peek_bo(struct kdrm_adapter *a, const void *ptr, struct kdrm_bo *out)
{
    struct iovec local = { out, sizeof(*out) }, remote = { (void *)ptr, sizeof(*out) };

    if (!ptr || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(*out))
        return false;
    return out->magic == KDRM_BO_MAGIC && out->adapter == a;
}

static NTSTATUS query_allocation(struct kdrm_adapter *a, KMT_DRM_ALLOCATION_INFO *info)
{
    DXGKARGCB_GETHANDLEDATA q = { .hObject = info->hAllocation, .Type = DXGK_HANDLE_ALLOCATION };
    D3DKMT_HANDLE h = info->hAllocation;
    struct kdrm_bo bo;

    memset(info, 0, sizeof(*info));
    info->hAllocation = h;
    if (!peek_bo(a, a->dxgkrnl.DxgkCbGetHandleData(&q), &bo))
        return STATUS_INVALID_PARAMETER;
    info->GemHandle = bo.handle;
    info->Fd = a->fd;
    info->Backing = bo.backing;
    info->Size = bo.size;
    info->ResourceId = bo.resource_id;
    info->Mapped = bo.cpu != NULL;
    return STATUS_SUCCESS;
}

static NTSTATUS set_fault(KMT_DRM_FAULT *f)
{
    if (memchr(f->Call, 0, sizeof(f->Call)) == NULL || f->Errno < -KMT_DRM_FAULT_MAX_STALL_MS)
        return STATUS_INVALID_PARAMETER;
    kdrm_fault_arm(f->Call, f->Nth, f->Errno);
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args)
{
    struct kdrm_adapter *a = hAdapter;
    KMT_DRM_ESCAPE *e = args->pPrivateDriverData;

    if (args->PrivateDriverDataSize != sizeof(*e) || e->Reserved)
        return STATUS_INVALID_PARAMETER;
    switch (e->Code) {
    case KMT_DRM_ESCAPE_GET_STATS:
        get_stats(a, &e->Stats);
        return STATUS_SUCCESS;
    case KMT_DRM_ESCAPE_QUERY_ALLOCATION:
        return query_allocation(a, &e->Allocation);
    case KMT_DRM_ESCAPE_SET_FAULT:
        return set_fault(&e->Fault);
    case KMT_DRM_ESCAPE_QUERY_FENCE:
        return kdrm_fence_export(a, e->Fence.hSyncObject, &e->Fence);
    case KMT_DRM_ESCAPE_QUERY_CONTEXT:
        return kdrm_context_info(a, args->hContext, &e->Context);
    default:
        return STATUS_INVALID_PARAMETER;
    }
}
