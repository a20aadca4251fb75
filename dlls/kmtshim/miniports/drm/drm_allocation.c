/*
 * DRM miniport: CreateAllocation / DestroyAllocation / OpenAllocation /
 * CloseAllocation.  An allocation is one GEM buffer object made by the
 * adapter's family; a resource is only a count here (the core keeps its
 * list).  Create is all or nothing: a failure at any allocation closes the
 * GEM objects made before it in the same call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_trace.h"
#include "base/user_memory.h"

struct kdrm_resource {
    UINT allocation_count;
};

/* A copy-backed object may still be named by a submission in flight. */
static void bo_free(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    if (bo->backing == KMT_DRM_BACKING_COPY && !kdrm_copy_forget(a, bo))
        return;
    kdrm_bo_release(a, bo);
}

/* Size and flags: the core's Size for standard allocations, else the UMD's
 * KMT_DRM_ALLOCATION_DESC. */
static NTSTATUS request_of(const DXGK_ALLOCATIONINFO *info, KMT_DRM_ALLOCATION_DESC **desc_out,
                           UINT64 *size, UINT *flags)
{
    KMT_DRM_ALLOCATION_DESC *desc = info->pPrivateDriverData;

    *desc_out = NULL;
    if (info->Size) {
        *size = info->Size;
        *flags = 0;
        return STATUS_SUCCESS;
    }
    if (!desc || info->PrivateDriverDataSize < sizeof(*desc) || desc->Magic != KMT_DRM_MAGIC ||
        desc->Version != KMT_DRM_VERSION || !desc->Size || (desc->Flags & ~KMT_DRM_ALLOCATION_VALID_FLAGS) ||
        desc->Reserved)
        return STATUS_INVALID_PARAMETER;
    *desc_out = desc;
    *size = desc->Size;
    *flags = desc->Flags;
    return STATUS_SUCCESS;
}

/* A GEM object holding a copy of the caller's pages, kept in step with
 * them around submissions (drm_copy_sync.c). */
static int create_copy(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem)
{
    UINT64 size = bo->size;              /* the caller's; the driver may pad */
    void *p;
    int err;

    if ((err = a->family->create(a, bo)) < 0)
        return err;
    if ((err = a->family->map(a, bo, PROT_READ | PROT_WRITE, &p)) < 0) {
        a->family->destroy(a, bo);
        return err;
    }
    /* the caller's pages may not cover the size its private data claims:
     * a page that cannot be read fails the create instead of the process */
    if (!kmt_user_copy_in(p, mem, size)) {
        a->family->unmap(a, bo, p);
        a->family->destroy(a, bo);
        return -EFAULT;
    }
    a->family->unmap(a, bo, p);
    if (a->family->cpu_end) {
        DXGK_LOCKFLAGS written = { .Value = 0 };
        a->family->cpu_end(a, bo, written);
    }
    bo->backing = KMT_DRM_BACKING_COPY;
    kdrm_copy_register(a, bo, mem, size);
    return 0;
}

/* The driver has userptr, but not for this memory or on this part.  EPERM:
 * libdrm_amdgpu asks for anonymous memory only, and the kernel refuses
 * shared or file-backed pages (a memfd, a MAP_SHARED mapping) with it. */
static bool userptr_refused(int err)
{
    return err == -ENODEV || err == -EOPNOTSUPP || err == -ENOSYS || err == -ENOTTY || err == -EPERM;
}

static UINT64 memory_limit(const struct kdrm_adapter *a)
{
    return a->memory.local_size + a->memory.nonlocal_size;
}

static NTSTATUS create_one(struct kdrm_adapter *a, DXGK_ALLOCATIONINFO *info)
{
    KMT_DRM_ALLOCATION_DESC *desc;
    struct kdrm_bo *bo;
    UINT64 size;
    UINT flags;
    NTSTATUS status;
    int err;

    if ((status = request_of(info, &desc, &size, &flags)))
        return status;
    if (info->Flags.ExistingSysMem && !info->pKmtSystemMem)
        return STATUS_INVALID_PARAMETER;
    if (size > memory_limit(a))
        return STATUS_GRAPHICS_NO_VIDEO_MEMORY;
    size = (size + a->page_size - 1) & ~(UINT64)(a->page_size - 1);
    if (!(bo = kdrm_bo_new(a, size, flags)))
        return STATUS_NO_MEMORY;

    if (!info->Flags.ExistingSysMem)
        err = a->family->create(a, bo);
    else if (!a->family->create_userptr || userptr_refused(err = a->family->create_userptr(
                                                  a, bo, (void *)info->pKmtSystemMem)))
        err = create_copy(a, bo, (void *)info->pKmtSystemMem);
    if (err < 0) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: %llu-byte %s failed: %s\n", a->family->name,
                   (unsigned long long)size, info->Flags.ExistingSysMem ? "sysmem object" : "object",
                   strerror(-err));
        free(bo);
        return kdrm_status_from_errno(err);
    }
    atomic_fetch_add(&a->buffers, 1);
    atomic_fetch_add(&a->bytes, bo->size);

    info->Size = bo->size;
    info->Alignment = a->page_size;
    info->SupportedReadSegmentSet = info->SupportedWriteSegmentSet =
        a->memory.discrete && !(flags & KMT_DRM_ALLOCATION_DEVICE_LOCAL) ? 2 : 1;
    info->EvictionSegmentSet = 0;
    info->Flags.CpuVisible = 1;
    info->Flags.Cached = !(flags & KMT_DRM_ALLOCATION_WRITECOMBINE);
    info->hAllocation = bo;
    info->KmtGpuVirtualAddress = bo->gpu_va;
    if (desc) {
        desc->Backing = bo->backing;
        desc->AllocatedSize = bo->size;
        desc->GemHandle = bo->handle;
    }
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_resource *res = NULL;
    NTSTATUS status = STATUS_SUCCESS;
    UINT i;

    if (!a->family->create)
        return STATUS_NOT_SUPPORTED;   /* a driver we have no allocator for */
    if (args->Flags.Resource && !args->hResource && !(res = calloc(1, sizeof(*res))))
        return STATUS_NO_MEMORY;
    for (i = 0; i < args->NumAllocations; i++)
        if ((status = create_one(a, &args->pAllocationInfo[i])))
            break;
    if (status) {
        while (i--) {
            bo_free(a, args->pAllocationInfo[i].hAllocation);
            args->pAllocationInfo[i].hAllocation = NULL;
        }
        free(res);
        return status;
    }
    if (res) {
        res->allocation_count = args->NumAllocations;
        args->hResource = res;
    } else if (args->hResource) {
        ((struct kdrm_resource *)args->hResource)->allocation_count += args->NumAllocations;
    }
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_resource *res = args->hResource;

    for (UINT i = 0; i < args->NumAllocations; i++) {
        struct kdrm_bo *bo = args->pAllocationList[i];
        unsigned opens = atomic_load(&bo->open_count);

        if (opens)
            kdrm_trace(a, KMT_TRACE_ERR, __func__,
                       "contract violation: allocation %p destroyed with %u open bindings\n", bo, opens);
        bo_free(a, bo);
        if (res && res->allocation_count)
            res->allocation_count--;
    }
    if (args->Flags.DestroyResource && res)
        free(res);
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args)
{
    struct kdrm_device *d = hDevice;
    const DXGKRNL_INTERFACE *k = &d->adapter->dxgkrnl;

    for (UINT i = 0; i < args->NumAllocations; i++) {
        DXGK_OPENALLOCATIONINFO *o = &args->pOpenAllocation[i];
        DXGKARGCB_GETHANDLEDATA q = { .hObject = o->hAllocation, .Type = DXGK_HANDLE_ALLOCATION };
        struct kdrm_bo *bo = k->DxgkCbGetHandleData(&q);

        if (!bo) {
            while (i--) {
                struct kdrm_bo *t = args->pOpenAllocation[i].hDeviceSpecificAllocation;
                atomic_fetch_sub(&t->open_count, 1);
                atomic_fetch_sub(&d->adapter->bindings, 1);
                args->pOpenAllocation[i].hDeviceSpecificAllocation = NULL;
            }
            return STATUS_INVALID_PARAMETER;
        }
        atomic_fetch_add(&bo->open_count, 1);
        atomic_fetch_add(&d->adapter->bindings, 1);
        /* GEM handles are per fd, and the fd is the adapter's: a device's
         * binding needs no object of its own. */
        o->hDeviceSpecificAllocation = bo;
    }
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args)
{
    struct kdrm_device *d = hDevice;

    for (UINT i = 0; i < args->NumAllocations; i++) {
        struct kdrm_bo *bo = args->pOpenHandleList[i];
        atomic_fetch_sub(&bo->open_count, 1);
        atomic_fetch_sub(&d->adapter->bindings, 1);
    }
    return STATUS_SUCCESS;
}
