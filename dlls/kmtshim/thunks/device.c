/*
 * Device thunks: CreateDevice, DestroyDevice.
 */
#include "thunk.h"

NTSTATUS APIENTRY D3DKMTCreateDevice(D3DKMT_CREATEDEVICE *desc)
{
    D3DKMT_CREATEDEVICE k;
    D3DKMT_HANDLE h = 0;
    UINT flags;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    memcpy(&flags, &k.Flags, sizeof(flags));
    TRACE_(d3dkmt, "hAdapter %#x, Flags %#x\n", k.hAdapter, flags);
    if (k.Flags.Reserved)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_create_device(k.hAdapter, k.Flags, &h);
    if (!status) {
        desc->hDevice = h;
        /* legacy (pre-WDDM 2) outputs: none */
        desc->pCommandBuffer = NULL;
        desc->CommandBufferSize = 0;
        desc->pAllocationList = NULL;
        desc->AllocationListSize = 0;
        desc->pPatchLocationList = NULL;
        desc->PatchLocationListSize = 0;
        TRACE_(d3dkmt, "hDevice %#x\n", h);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hDevice %#x\n", desc->hDevice);
    THUNK_RETURN(dxgk_destroy_device(desc->hDevice));
}
