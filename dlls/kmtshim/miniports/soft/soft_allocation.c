/*
 * Software miniport: allocations.  A driver-private allocation is described
 * by KMT_SOFT_ALLOCATION_DESC and backed by a memfd of its size; an
 * existing-sysmem allocation is the caller's memory.  Every create is all
 * or nothing on this side too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fd_registry.h"
#include "soft.h"

static int memfd_of_size(UINT64 size)
{
    int fd = memfd_create("kmtshim-soft-allocation", MFD_CLOEXEC);

    if (fd < 0)
        return -1;
    kmt_fd_track(fd);
    if (ftruncate(fd, (off_t)size) < 0) {
        kmt_fd_close(fd);
        return -1;
    }
    return fd;
}

void soft_allocation_free(struct soft_adapter *a, struct soft_allocation *s)
{
    void *view;

    if (s->gpu_va)
        soft_va_remove(&a->va, s->gpu_va);   /* waits for a command using it */
    view = atomic_load(&s->engine_map);
    if (view && !s->sysmem)
        munmap(view, s->size);
    if (s->fd >= 0) {
        kmt_fd_close(s->fd);
        atomic_fetch_sub(&a->bytes, s->size);
    }
    atomic_fetch_sub(&a->allocations, 1);
    free(s);
}

bool soft_allocation_place(struct soft_adapter *a, struct soft_allocation *s)
{
    s->gpu_va = soft_va_reserve(&a->va, s->size);
    atomic_fetch_add(&a->allocations, 1);
    if (soft_va_insert(&a->va, s->gpu_va, s->size, s, NULL)) {
        s->gpu_va = 0;
        soft_allocation_free(a, s);
        return false;
    }
    return true;
}

static NTSTATUS create_one(struct soft_adapter *a, DXGK_ALLOCATIONINFO *info, struct soft_allocation **out)
{
    const KMT_SOFT_ALLOCATION_DESC *desc = info->pPrivateDriverData;
    struct soft_allocation *s;
    UINT64 size = info->Size;            /* set by the core for standard allocations */

    if (!size) {
        if (!desc || info->PrivateDriverDataSize < sizeof(*desc) ||
            desc->Magic != KMT_SOFT_ALLOCATION_MAGIC || desc->Version != KMT_SOFT_ALLOCATION_VERSION ||
            desc->Flags || !desc->Size)
            return STATUS_INVALID_PARAMETER;
        size = desc->Size;
    }
    if (size > a->budget)
        return STATUS_GRAPHICS_NO_VIDEO_MEMORY;
    size = (size + SOFT_PAGE_SIZE - 1) & ~(UINT64)(SOFT_PAGE_SIZE - 1);
    if (!(s = calloc(1, sizeof(*s))))
        return STATUS_NO_MEMORY;
    s->size = size;
    s->fd = -1;
    atomic_init(&s->open_count, 0);
    atomic_init(&s->engine_map, NULL);
    if (info->Flags.ExistingSysMem) {
        if (!info->pKmtSystemMem) {
            free(s);
            return STATUS_INVALID_PARAMETER;
        }
        s->sysmem = (void *)info->pKmtSystemMem;
    } else if ((s->fd = memfd_of_size(size)) < 0) {
        /* out of file descriptors is out of resources, not a broken call */
        NTSTATUS status = errno == ENOMEM || errno == ENOSPC ? STATUS_NO_MEMORY
                        : errno == EMFILE || errno == ENFILE ? STATUS_INSUFFICIENT_RESOURCES
                        : STATUS_UNSUCCESSFUL;
        free(s);
        return status;
    } else {
        atomic_fetch_add(&a->bytes, size);
    }
    if (!soft_allocation_place(a, s))
        return STATUS_NO_MEMORY;
    info->KmtGpuVirtualAddress = s->gpu_va;
    info->Size = size;
    info->Alignment = SOFT_PAGE_SIZE;
    info->SupportedReadSegmentSet = info->SupportedWriteSegmentSet = 1;
    info->EvictionSegmentSet = 0;
    info->Flags.CpuVisible = 1;
    info->Flags.Cached = 1;
    info->hAllocation = s;
    *out = s;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args)
{
    struct soft_adapter *a = hAdapter;
    struct soft_resource *res = NULL;
    NTSTATUS status = STATUS_SUCCESS;
    UINT i;

    if (args->Flags.Resource && !args->hResource) {
        if (!(res = calloc(1, sizeof(*res))))
            return STATUS_NO_MEMORY;
    }
    for (i = 0; i < args->NumAllocations; i++) {
        struct soft_allocation *s;
        if ((status = create_one(a, &args->pAllocationInfo[i], &s)))
            break;
    }
    if (status) {
        while (i--) {
            soft_allocation_free(a, args->pAllocationInfo[i].hAllocation);
            args->pAllocationInfo[i].hAllocation = NULL;
        }
        free(res);
        return status;
    }
    if (res) {
        atomic_init(&res->allocation_count, args->NumAllocations);
        args->hResource = res;
        atomic_fetch_add(&a->resources, 1);
    } else if (args->hResource) {
        atomic_fetch_add(&((struct soft_resource *)args->hResource)->allocation_count,
                         args->NumAllocations);
    }
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args)
{
    struct soft_adapter *a = hAdapter;

    for (UINT i = 0; i < args->NumAllocations; i++) {
        struct soft_allocation *s = args->pAllocationList[i];
        unsigned opens = atomic_load(&s->open_count);

        if (opens)
            soft_trace(a, KMT_TRACE_ERR, __func__,
                       "contract violation: allocation %p destroyed with %u open bindings\n", s, opens);
        soft_allocation_free(a, s);
    }
    if (args->Flags.DestroyResource && args->hResource) {
        free(args->hResource);
        atomic_fetch_sub(&a->resources, 1);
    }
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args)
{
    struct soft_device *d = hDevice;
    const DXGKRNL_INTERFACE *k = &d->adapter->dxgkrnl;

    for (UINT i = 0; i < args->NumAllocations; i++) {
        DXGK_OPENALLOCATIONINFO *o = &args->pOpenAllocation[i];
        DXGKARGCB_GETHANDLEDATA q = { .hObject = o->hAllocation, .Type = DXGK_HANDLE_ALLOCATION };
        struct soft_allocation *s = k->DxgkCbGetHandleData(&q);

        if (!s) {
            while (i--) {
                struct soft_allocation *t = args->pOpenAllocation[i].hDeviceSpecificAllocation;
                atomic_fetch_sub(&t->open_count, 1);
                atomic_fetch_sub(&d->adapter->bindings, 1);
                args->pOpenAllocation[i].hDeviceSpecificAllocation = NULL;
            }
            return STATUS_INVALID_PARAMETER;
        }
        atomic_fetch_add(&s->open_count, 1);
        atomic_fetch_add(&d->adapter->bindings, 1);
        /* One binding per device needs no state of its own: the allocation is it. */
        o->hDeviceSpecificAllocation = s;
    }
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args)
{
    struct soft_device *d = hDevice;

    for (UINT i = 0; i < args->NumAllocations; i++) {
        struct soft_allocation *s = args->pOpenHandleList[i];
        atomic_fetch_sub(&s->open_count, 1);
        atomic_fetch_sub(&d->adapter->bindings, 1);
    }
    return STATUS_SUCCESS;
}

/* Discard lets the old contents go, as a driver would rename the buffer.
 * Dropping the memfd's pages gives zeros at once and gives the memory back;
 * writing zeros would cost the whole size and commit all of it. */
static void discard_contents(struct soft_allocation *s, void *mapping)
{
    if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)s->size))
        memset(mapping, 0, s->size);     /* a memfd that cannot punch holes */
}

NTSTATUS APIENTRY soft_lock(HANDLE hAdapter, DXGKARG_LOCK *args)
{
    struct soft_allocation *s = args->hAllocation;
    void *p;

    if (s->sysmem) {
        args->pData = s->sysmem;
        return STATUS_SUCCESS;
    }
    /* writable even for ReadOnly: a locked address is readable and writable
     * (the runtime's guarantee), and a nested write lock gets this address */
    p = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (p == MAP_FAILED)
        return STATUS_NO_MEMORY;
    if (args->Flags.Discard)
        discard_contents(s, p);
    args->pData = p;
    args->GpuVirtualAddress = 0;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args)
{
    struct soft_allocation *s = args->hAllocation;

    if (!s->sysmem && args->pData)
        munmap(args->pData, s->size);
    return STATUS_SUCCESS;
}
