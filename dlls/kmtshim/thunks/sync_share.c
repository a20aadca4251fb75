/*
 * Opening sync objects another process shared: by global handle, by NT
 * handle (natively a file descriptor in the HANDLE) and by name.
 */
#include <stdint.h>

#include "kmtshim/kmtshim.h"
#include "thunk.h"
#include "dxgkrnl/syncobj_share.h"

/* Natively an NT handle is a file descriptor in the HANDLE-sized field. */
static int nt_fd(HANDLE h)
{
    intptr_t v = (intptr_t)h;

    return v > 0 && v <= INT32_MAX ? (int)v : -1;
}

NTSTATUS APIENTRY D3DKMTOpenSynchronizationObject(D3DKMT_OPENSYNCHRONIZATIONOBJECT *desc)
{
    D3DKMT_HANDLE global, h = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    global = desc->hSharedHandle;
    TRACE_(d3dkmt, "hSharedHandle %#x\n", global);
    status = dxgk_open_syncobj_global(global, &h);
    if (!status) {
        desc->hSyncObject = h;
        TRACE_(d3dkmt, "hSyncObject %#x\n", h);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenSyncObjectFromNtHandle(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE *desc)
{
    struct dxgk_syncobj_opened opened = { 0 };
    HANDLE nt;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    nt = desc->hNtHandle;
    TRACE_(d3dkmt, "hNtHandle %p\n", nt);
    if (nt_fd(nt) < 0)
        THUNK_RETURN(STATUS_INVALID_HANDLE);
    status = dxgk_open_syncobj_nt(nt_fd(nt), 0, NULL, &opened);
    if (!status) {
        desc->hSyncObject = opened.handle;
        TRACE_(d3dkmt, "hSyncObject %#x\n", opened.handle);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenSyncObjectFromNtHandle2(D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 *desc)
{
    struct dxgk_syncobj_opened opened = { 0 };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hNtHandle %p, hDevice %#x, Flags %#x\n", k.hNtHandle, k.hDevice, k.Flags.Value);
    /* the device first: Windows refuses a valid NT handle without one */
    if (!k.hDevice || k.MonitoredFence.EngineAffinity > 1)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (nt_fd(k.hNtHandle) < 0)
        THUNK_RETURN(STATUS_INVALID_HANDLE);
    status = dxgk_open_syncobj_nt(nt_fd(k.hNtHandle), k.hDevice, &k.Flags, &opened);
    if (!status) {
        desc->hSyncObject = opened.handle;
        if (opened.cpu_va) {
            desc->MonitoredFence.FenceValueCPUVirtualAddress = opened.cpu_va;
            desc->MonitoredFence.FenceValueGPUVirtualAddress = opened.gpu_va;
        }
        TRACE_(d3dkmt, "hSyncObject %#x, CPU VA %p, GPU VA %#llx\n", opened.handle, opened.cpu_va,
               (unsigned long long)opened.gpu_va);
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenSyncObjectNtHandleFromName(D3DKMT_OPENSYNCOBJECTNTHANDLEFROMNAME *desc)
{
    D3DKMT_OPENSYNCOBJECTNTHANDLEFROMNAME k;
    NTSTATUS status;
    int fd = -1;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "access %#x, attributes %p\n", k.dwDesiredAccess, (void *)k.pObjAttrib);
    status = dxgk_open_syncobj_name(k.pObjAttrib, k.dwDesiredAccess, &fd);
    if (!status) {
        desc->hNtHandle = (HANDLE)(intptr_t)fd;
        TRACE_(d3dkmt, "hNtHandle %d\n", fd);
    }
    THUNK_RETURN(status);
}
