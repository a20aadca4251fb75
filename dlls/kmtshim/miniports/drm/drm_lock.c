/*
 * DRM miniport: DxgkDdiLock / DxgkDdiUnlock.
 *
 * The core calls Lock on an allocation's first lock and Unlock at its last
 * unlock (it counts nested locks and hands every nested lock the same
 * address), so one Lock is one mapping of the whole object.  Flags:
 *   ReadOnly    nothing is pushed back at Unlock (the mapping is writable
 *               all the same: a locked address is readable and writable,
 *               and the core pushes writes made under a nested write lock)
 *   DonotWait   the family's busy check fails with ALLOCATION_BUSY instead
 *               of waiting for the GPU
 *   IgnoreSync  no wait at all
 *   Discard, WriteOnly  the old contents are not fetched from the host
 * Partial locks (NumPages/pPages) map the whole object; the address is its
 * start, as Windows returns for a whole-allocation lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_fault.h"
#include "drm_trace.h"

int kdrm_map_offset(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    void *p = kdrm_mmap(bo->size, prot, a->fd, bo->mmap_offset);

    if (p == MAP_FAILED)
        return -errno;
    *ptr = p;
    return 0;
}

void kdrm_unmap_plain(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr)
{
    if (munmap(ptr, bo->size))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "munmap(%p) failed: %s\n", ptr, strerror(errno));
}

NTSTATUS APIENTRY kdrm_lock(HANDLE hAdapter, DXGKARG_LOCK *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_bo *bo = args->hAllocation;
    void *p;
    int err;

    if (bo->cpu) {
        /* the core maps once; a second Lock is a contract violation */
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "allocation %p is already locked\n", bo);
        return STATUS_INVALID_PARAMETER;
    }
    if (a->family->cpu_begin && (err = a->family->cpu_begin(a, bo, args->Flags)) < 0)
        return kdrm_status_from_errno(err);
    if ((err = a->family->map(a, bo, PROT_READ | PROT_WRITE, &p)) < 0) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "mapping %p failed: %s\n", bo, strerror(-err));
        return err == -EINVAL ? STATUS_UNSUCCESSFUL : kdrm_status_from_errno(err);
    }
    bo->cpu = p;
    bo->lock_flags = args->Flags;
    atomic_fetch_add(&a->mappings, 1);
    args->pData = p;
    args->GpuVirtualAddress = 0;         /* GPU VAs arrive with contexts */
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_bo *bo = args->hAllocation;

    if (!bo->cpu || bo->cpu != args->pData) {
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "allocation %p: unlock of %p, mapped at %p\n", bo,
                   args->pData, bo->cpu);
        return STATUS_INVALID_PARAMETER;
    }
    a->family->unmap(a, bo, bo->cpu);
    bo->cpu = NULL;
    atomic_fetch_sub(&a->mappings, 1);
    if (a->family->cpu_end && !bo->lock_flags.ReadOnly)
        a->family->cpu_end(a, bo, bo->lock_flags);
    return STATUS_SUCCESS;
}
