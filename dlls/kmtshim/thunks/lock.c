/*
 * CPU access thunks: Lock, Unlock, Lock2, Unlock2.
 */
#include "thunk.h"

NTSTATUS APIENTRY D3DKMTLock(D3DKMT_LOCK *desc)
{
    D3DKMT_LOCK k;
    D3DGPU_VIRTUAL_ADDRESS va = 0;
    void *data = NULL;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hAllocation %#x, NumPages %u, Flags %#x\n", k.hDevice,
           k.hAllocation, k.NumPages, k.Flags.Value);
    if (k.NumPages && !kmt_user_ptr_ok(k.pPages, (size_t)k.NumPages * sizeof(UINT)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_lock(k.hDevice, k.hAllocation, k.Flags, k.NumPages, k.pPages, &data, &va);
    if (!status) {
        desc->pData = data;
        desc->GpuVirtualAddress = va;
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTLock2(D3DKMT_LOCK2 *desc)
{
    D3DKMT_LOCK2 k;
    D3DDDICB_LOCKFLAGS flags = { .Value = 0 };
    D3DGPU_VIRTUAL_ADDRESS va = 0;
    void *data = NULL;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hAllocation %#x\n", k.hDevice, k.hAllocation);
    if (k.Flags.Value)                    /* reserved */
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_lock(k.hDevice, k.hAllocation, flags, 0, NULL, &data, &va);
    if (!status)
        desc->pData = data;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTUnlock(const D3DKMT_UNLOCK *desc)
{
    D3DKMT_HANDLE copy[D3DKMT_CREATEALLOCATION_MAX];
    D3DKMT_UNLOCK k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, NumAllocations %u, phAllocations %p\n", k.hDevice,
           k.NumAllocations, k.phAllocations);
    if (!k.NumAllocations || k.NumAllocations > D3DKMT_CREATEALLOCATION_MAX ||
        !kmt_user_ptr_ok(k.phAllocations, k.NumAllocations * sizeof(D3DKMT_HANDLE)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    memcpy(copy, k.phAllocations, k.NumAllocations * sizeof(D3DKMT_HANDLE));
    THUNK_RETURN(dxgk_unlock(k.hDevice, copy, k.NumAllocations));
}

NTSTATUS APIENTRY D3DKMTUnlock2(const D3DKMT_UNLOCK2 *desc)
{
    D3DKMT_UNLOCK2 k;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hAllocation %#x\n", k.hDevice, k.hAllocation);
    THUNK_RETURN(dxgk_unlock(k.hDevice, &k.hAllocation, 1));
}
