/*
 * Allocation thunks: CreateAllocation(2), DestroyAllocation(2).
 */
#include <stdlib.h>

#include "thunk.h"

#define SMALL_BATCH 8

/* Inline in both thunks: a call and its return cost more than they save
 * under an emulated CPU, and this is the hottest path there is. */
static inline __attribute__((always_inline)) NTSTATUS create_allocation(const char *name, D3DKMT_CREATEALLOCATION *desc, bool v2)
{
    struct dxgk_alloc_request small[SMALL_BATCH], *reqs = small;
    D3DKMT_CREATESTANDARDALLOCATION standard;
    struct dxgk_create_allocation args = { 0 };
    D3DKMT_CREATEALLOCATION k;
    size_t stride = v2 ? sizeof(D3DDDI_ALLOCATIONINFO2) : sizeof(D3DDDI_ALLOCATIONINFO);
    UINT flags;
    NTSTATUS status;

    if (!kmt_user_ptr_ok(desc, sizeof(*desc)))
        return STATUS_INVALID_PARAMETER;
    k = *desc;
    memcpy(&flags, &k.Flags, sizeof(flags));
    TRACE_(d3dkmt, "%s: hDevice %#x, hResource %#x, NumAllocations %u, Flags %#x, "
           "runtime data %p/%u, driver data %p/%u\n", name, k.hDevice, k.hResource,
           k.NumAllocations, flags, k.pPrivateRuntimeData, k.PrivateRuntimeDataSize,
           k.pPrivateDriverData, k.PrivateDriverDataSize);

    if (!k.NumAllocations || k.NumAllocations > D3DKMT_CREATEALLOCATION_MAX ||
        !kmt_user_ptr_ok(k.pAllocationInfo, stride * k.NumAllocations))
        return STATUS_INVALID_PARAMETER;
    if (k.PrivateRuntimeDataSize && !kmt_user_ptr_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize))
        return STATUS_INVALID_PARAMETER;
    if (k.Flags.StandardAllocation) {
        if (!kmt_user_ptr_ok(k.pStandardAllocation, sizeof(standard)))
            return STATUS_INVALID_PARAMETER;
        standard = *k.pStandardAllocation;
        args.standard = &standard;
        args.driver_data_size = k.PrivateDriverDataSize;   /* must be 0: core checks */
    } else {
        if (k.PrivateDriverDataSize && !kmt_user_ptr_ok(k.pPrivateDriverData, k.PrivateDriverDataSize))
            return STATUS_INVALID_PARAMETER;
        args.driver_data = k.pPrivateDriverData;
        args.driver_data_size = k.PrivateDriverDataSize;
    }

    if (k.NumAllocations > SMALL_BATCH && !(reqs = calloc(k.NumAllocations, sizeof(*reqs))))
        return STATUS_NO_MEMORY;
    for (UINT i = 0; i < k.NumAllocations; i++) {
        struct dxgk_alloc_request *r = &reqs[i];
        UINT info_flags;

        if (v2) {
            const D3DDDI_ALLOCATIONINFO2 *info = &k.pAllocationInfo2[i];
            r->sysmem = info->pSystemMem;
            r->private_data = info->pPrivateDriverData;
            r->private_data_size = info->PrivateDriverDataSize;
            r->vidpn_source = info->VidPnSourceId;
            memcpy(&info_flags, &info->Flags, sizeof(info_flags));
        } else {
            const D3DDDI_ALLOCATIONINFO *info = &k.pAllocationInfo[i];
            r->sysmem = info->pSystemMem;
            r->private_data = info->pPrivateDriverData;
            r->private_data_size = info->PrivateDriverDataSize;
            r->vidpn_source = info->VidPnSourceId;
            memcpy(&info_flags, &info->Flags, sizeof(info_flags));
        }
        r->flags = info_flags;
        /* Existing memory must lie in user space (Windows probes and pins
         * it); the miniport maps and hands out this address later. */
        if (r->sysmem && !kmt_user_ptr_ok(r->sysmem, k.Flags.StandardAllocation ?
                                          standard.ExistingHeapData.Size : 1)) {
            status = STATUS_INVALID_PARAMETER;
            goto out;
        }
        if (r->private_data_size && !kmt_user_ptr_ok(r->private_data, r->private_data_size)) {
            status = STATUS_INVALID_PARAMETER;
            goto out;
        }
    }

    args.hDevice = k.hDevice;
    args.hResource = k.hResource;
    args.runtime_data = k.pPrivateRuntimeData;
    args.runtime_data_size = k.PrivateRuntimeDataSize;
    args.flags = k.Flags;
    args.count = k.NumAllocations;
    args.allocs = reqs;
    status = dxgk_create_allocation(&args);
    if (status)
        goto out;

    for (UINT i = 0; i < k.NumAllocations; i++) {
        if (v2) {
            k.pAllocationInfo2[i].hAllocation = reqs[i].hAllocation;
            k.pAllocationInfo2[i].GpuVirtualAddress = reqs[i].gpu_va;
        } else {
            k.pAllocationInfo[i].hAllocation = reqs[i].hAllocation;
        }
    }
    if (k.Flags.CreateResource)
        desc->hResource = args.hResource;
    desc->hGlobalShare = args.hGlobalShare;
    TRACE_(d3dkmt, "hResource %#x, hAllocation[0] %#x, hGlobalShare %#x\n", desc->hResource,
           reqs[0].hAllocation, args.hGlobalShare);
out:
    if (reqs != small)
        free(reqs);
    return status;
}

NTSTATUS APIENTRY D3DKMTCreateAllocation(D3DKMT_CREATEALLOCATION *desc)
{
    THUNK_ENTER();
    TRACE_(d3dkmt, "desc %p\n", desc);
    THUNK_RETURN(create_allocation(__func__, desc, false));
}

NTSTATUS APIENTRY D3DKMTCreateAllocation2(D3DKMT_CREATEALLOCATION *desc)
{
    THUNK_ENTER();
    TRACE_(d3dkmt, "desc %p\n", desc);
    THUNK_RETURN(create_allocation(__func__, desc, true));
}

static inline __attribute__((always_inline))
NTSTATUS destroy_allocation(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hResource, const D3DKMT_HANDLE *list,
                            UINT count, D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    D3DKMT_HANDLE copy[D3DKMT_CREATEALLOCATION_MAX];

    TRACE_(d3dkmt, "hDevice %#x, hResource %#x, list %p, count %u, flags %#x\n", hDevice, hResource,
           list, count, flags.Value);
    /* The count says whether there is a list: with a count of 0 the
     * pointer is never probed, read or passed on (runtimes reuse one
     * descriptor and leave a stale one there).  With a resource a count is
     * refused by the core, so the list is not captured either. */
    if (!count)
        list = NULL;
    else if (!hResource && count <= D3DKMT_CREATEALLOCATION_MAX) {
        if (!kmt_user_ptr_ok(list, count * sizeof(*list)))
            return STATUS_INVALID_PARAMETER;
        memcpy(copy, list, count * sizeof(*list));
        list = copy;
    }
    return dxgk_destroy_allocation(hDevice, hResource, list, count, flags);
}

NTSTATUS APIENTRY D3DKMTDestroyAllocation(const D3DKMT_DESTROYALLOCATION *desc)
{
    D3DDDICB_DESTROYALLOCATION2FLAGS none = { .Value = 0 };

    THUNK_ENTER_DESC(desc);
    THUNK_RETURN(destroy_allocation(desc->hDevice, desc->hResource, desc->phAllocationList,
                                    desc->AllocationCount, none));
}

NTSTATUS APIENTRY D3DKMTDestroyAllocation2(const D3DKMT_DESTROYALLOCATION2 *desc)
{
    THUNK_ENTER_DESC(desc);
    THUNK_RETURN(destroy_allocation(desc->hDevice, desc->hResource, desc->phAllocationList,
                                    desc->AllocationCount, desc->Flags));
}
