/*
 * Shared-resource thunks: QueryResourceInfo(FromNtHandle),
 * OpenResource(2), OpenResourceFromNtHandle, ShareObjects,
 * OpenNtHandleFromName.  Natively an NT handle is a file descriptor in the
 * HANDLE-sized field (broker/broker.h).
 */
#include <stdlib.h>

#include "thunk.h"
#include "dxgkrnl/resource_share.h"

#define SMALL_BATCH 8

/* An NT handle's fd; -1 for NULL and values no fd can have. */
static int nt_fd(HANDLE h)
{
    intptr_t v = (intptr_t)h;

    return v <= 0 || v > INT32_MAX ? -1 : (int)v;   /* NULL is no handle */
}

/* The answer of both QueryResourceInfo forms (the runtime buffer is
 * never written). */
#define PUT_INFO(desc, info) do {                                       \
        (desc)->PrivateRuntimeDataSize = (info).runtime_size;           \
        (desc)->TotalPrivateDriverDataSize = (info).total_driver_size;  \
        (desc)->ResourcePrivateDriverDataSize = (info).resource_driver_size; \
        (desc)->NumAllocations = (info).num_allocations;                \
    } while (0)

NTSTATUS APIENTRY D3DKMTQueryResourceInfo(D3DKMT_QUERYRESOURCEINFO *desc)
{
    struct dxgk_resource_info info;
    D3DKMT_QUERYRESOURCEINFO k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hGlobalShare %#x\n", k.hDevice, k.hGlobalShare);
    if (!(status = dxgk_query_resource_global(k.hDevice, k.hGlobalShare, &info)))
        PUT_INFO(desc, info);
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTQueryResourceInfoFromNtHandle(D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE *desc)
{
    struct dxgk_resource_info info;
    D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hNtHandle %p\n", k.hDevice, k.hNtHandle);
    if (!(status = dxgk_query_resource_nt(k.hDevice, nt_fd(k.hNtHandle), &info)))
        PUT_INFO(desc, info);
    THUNK_RETURN(status);
}

/* The caller's per-allocation infos, captured (v2: D3DDDI_OPENALLOCATIONINFO2). */
static NTSTATUS capture_infos(const void *infos, UINT count, bool v2, struct dxgk_open_alloc *small,
                              struct dxgk_open_alloc **out)
{
    size_t stride = v2 ? sizeof(D3DDDI_OPENALLOCATIONINFO2) : sizeof(D3DDDI_OPENALLOCATIONINFO);
    struct dxgk_open_alloc *a = small;

    *out = NULL;
    if (!count || count > D3DKMT_CREATEALLOCATION_MAX || !kmt_user_ptr_ok(infos, stride * count))
        return STATUS_INVALID_PARAMETER;
    if (count > SMALL_BATCH && !(a = calloc(count, sizeof(*a))))
        return STATUS_NO_MEMORY;
    for (UINT i = 0; i < count; i++) {
        if (v2) {
            const D3DDDI_OPENALLOCATIONINFO2 *info = (const D3DDDI_OPENALLOCATIONINFO2 *)infos + i;
            a[i] = (struct dxgk_open_alloc){ 0, (void *)info->pPrivateDriverData, info->PrivateDriverDataSize, 0 };
        } else {
            const D3DDDI_OPENALLOCATIONINFO *info = (const D3DDDI_OPENALLOCATIONINFO *)infos + i;
            a[i] = (struct dxgk_open_alloc){ 0, (void *)info->pPrivateDriverData, info->PrivateDriverDataSize, 0 };
        }
        if (a[i].private_data_size && !kmt_user_ptr_ok(a[i].private_data, a[i].private_data_size)) {
            if (a != small)
                free(a);
            return STATUS_INVALID_PARAMETER;
        }
    }
    *out = a;
    return STATUS_SUCCESS;
}

static void write_infos(void *infos, const struct dxgk_open_alloc *a, UINT count, bool v2)
{
    for (UINT i = 0; i < count; i++) {
        if (v2) {
            D3DDDI_OPENALLOCATIONINFO2 *info = (D3DDDI_OPENALLOCATIONINFO2 *)infos + i;
            info->hAllocation = a[i].hAllocation;
            info->PrivateDriverDataSize = a[i].private_data_size;
            info->GpuVirtualAddress = a[i].gpu_va;
        } else {
            D3DDDI_OPENALLOCATIONINFO *info = (D3DDDI_OPENALLOCATIONINFO *)infos + i;
            info->hAllocation = a[i].hAllocation;
            info->PrivateDriverDataSize = a[i].private_data_size;
        }
    }
}

static bool buffer_ok(const void *p, UINT size)
{
    return !size || kmt_user_ptr_ok(p, size);
}

static NTSTATUS open_resource(D3DKMT_OPENRESOURCE *desc, bool v2)
{
    struct dxgk_open_alloc small[SMALL_BATCH], *allocs;
    struct dxgk_open_resource args;
    D3DKMT_OPENRESOURCE k = *desc;
    void *infos = v2 ? (void *)k.pOpenAllocationInfo2 : (void *)k.pOpenAllocationInfo;
    NTSTATUS status;

    TRACE_(d3dkmt, "hDevice %#x, hGlobalShare %#x, NumAllocations %u, runtime %p/%u, resource %p/%u, "
           "total %p/%u\n", k.hDevice, k.hGlobalShare, k.NumAllocations, k.pPrivateRuntimeData,
           k.PrivateRuntimeDataSize, k.pResourcePrivateDriverData, k.ResourcePrivateDriverDataSize,
           k.pTotalPrivateDriverDataBuffer, k.TotalPrivateDriverDataBufferSize);
    if (!buffer_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize) ||
        !buffer_ok(k.pResourcePrivateDriverData, k.ResourcePrivateDriverDataSize) ||
        (k.pTotalPrivateDriverDataBuffer && !buffer_ok(k.pTotalPrivateDriverDataBuffer, k.TotalPrivateDriverDataBufferSize)))
        return STATUS_INVALID_PARAMETER;
    if ((status = capture_infos(infos, k.NumAllocations, v2, small, &allocs)))
        return status;
    args = (struct dxgk_open_resource){
        .hDevice = k.hDevice,
        .count = k.NumAllocations,
        .allocs = allocs,
        .runtime = k.pPrivateRuntimeData,
        .runtime_size = k.PrivateRuntimeDataSize,
        .resource_driver = k.pResourcePrivateDriverData,
        .resource_driver_size = k.ResourcePrivateDriverDataSize,
        .total = k.pTotalPrivateDriverDataBuffer,
        .total_size = k.TotalPrivateDriverDataBufferSize,
    };
    if (!(status = dxgk_open_resource_global(k.hGlobalShare, &args))) {
        write_infos(infos, allocs, k.NumAllocations, v2);
        desc->hResource = args.hResource;
    }
    if (allocs != small)
        free(allocs);
    return status;
}

NTSTATUS APIENTRY D3DKMTOpenResource(D3DKMT_OPENRESOURCE *desc)
{
    THUNK_ENTER_DESC(desc);
    THUNK_RETURN(open_resource(desc, false));
}

NTSTATUS APIENTRY D3DKMTOpenResource2(D3DKMT_OPENRESOURCE *desc)
{
    THUNK_ENTER_DESC(desc);
    THUNK_RETURN(open_resource(desc, true));
}

NTSTATUS APIENTRY D3DKMTOpenResourceFromNtHandle(D3DKMT_OPENRESOURCEFROMNTHANDLE *desc)
{
    struct dxgk_open_alloc small[SMALL_BATCH], *allocs;
    struct dxgk_open_resource_nt args;
    D3DKMT_OPENRESOURCEFROMNTHANDLE k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hDevice %#x, hNtHandle %p, NumAllocations %u, runtime %p/%u, total %p/%u, "
           "mutex runtime %p/%u\n", k.hDevice, k.hNtHandle, k.NumAllocations, k.pPrivateRuntimeData,
           k.PrivateRuntimeDataSize, k.pTotalPrivateDriverDataBuffer, k.TotalPrivateDriverDataBufferSize,
           k.pKeyedMutexPrivateRuntimeData, k.KeyedMutexPrivateRuntimeDataSize);
    /* Windows wants the runtime and total buffers even where empty */
    if (!k.pPrivateRuntimeData || !k.pTotalPrivateDriverDataBuffer ||
        !buffer_ok(k.pPrivateRuntimeData, k.PrivateRuntimeDataSize) ||
        !buffer_ok(k.pResourcePrivateDriverData, k.ResourcePrivateDriverDataSize) ||
        !buffer_ok(k.pTotalPrivateDriverDataBuffer, k.TotalPrivateDriverDataBufferSize) ||
        (k.pKeyedMutexPrivateRuntimeData &&
         !buffer_ok(k.pKeyedMutexPrivateRuntimeData, k.KeyedMutexPrivateRuntimeDataSize)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if ((status = capture_infos(k.pOpenAllocationInfo2, k.NumAllocations, true, small, &allocs)))
        THUNK_RETURN(status);
    args = (struct dxgk_open_resource_nt){
        .res = {
            .hDevice = k.hDevice,
            .count = k.NumAllocations,
            .allocs = allocs,
            .runtime = k.pPrivateRuntimeData,
            .runtime_size = k.PrivateRuntimeDataSize,
            .resource_driver = k.pResourcePrivateDriverData,
            .resource_driver_size = k.ResourcePrivateDriverDataSize,
            .total = k.pTotalPrivateDriverDataBuffer,
            .total_size = k.TotalPrivateDriverDataBufferSize,
        },
        .mutex_runtime = k.pKeyedMutexPrivateRuntimeData,
        .mutex_runtime_size = k.KeyedMutexPrivateRuntimeDataSize,
    };
    if (!(status = dxgk_open_resource_nt(nt_fd(k.hNtHandle), &args))) {
        write_infos(k.pOpenAllocationInfo2, allocs, k.NumAllocations, true);
        desc->hResource = args.res.hResource;
        desc->hKeyedMutex = args.hKeyedMutex;
        desc->hSyncObject = args.hSyncObject;
        desc->KeyedMutexPrivateRuntimeDataSize = args.mutex_runtime_size;
    }
    if (allocs != small)
        free(allocs);
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTShareObjects(UINT count, const D3DKMT_HANDLE *objects, OBJECT_ATTRIBUTES *attributes,
                                     DWORD access, HANDLE *nt_handle)
{
    D3DKMT_HANDLE k[KMT_BROKER_MAX_NT_OBJECTS];
    NTSTATUS status;
    int fd = -1;

    THUNK_ENTER();
    TRACE_(d3dkmt, "count %u, objects %p, attributes %p, access %#x, nt_handle %p\n", count, (const void *)objects,
           (void *)attributes, access, (void *)nt_handle);
    if (!count || count > KMT_BROKER_MAX_NT_OBJECTS || !kmt_user_ptr_ok(objects, count * sizeof(*objects)) ||
        !kmt_user_ptr_ok(nt_handle, sizeof(*nt_handle)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    memcpy(k, objects, count * sizeof(*objects));
    if (attributes && !kmt_user_ptr_ok(attributes, sizeof(*attributes)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if ((status = dxgk_share_objects(count, k, attributes, access, &fd)))
        THUNK_RETURN(status);
    *nt_handle = (HANDLE)(intptr_t)fd;
    THUNK_RETURN(STATUS_SUCCESS);
}

NTSTATUS APIENTRY D3DKMTOpenNtHandleFromName(D3DKMT_OPENNTHANDLEFROMNAME *desc)
{
    D3DKMT_OPENNTHANDLEFROMNAME k;
    NTSTATUS status;
    int fd = -1;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "access %#x, attributes %p\n", k.dwDesiredAccess, (void *)k.pObjAttrib);
    if (!kmt_user_ptr_ok(k.pObjAttrib, sizeof(*k.pObjAttrib)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if ((status = dxgk_open_nt_handle_from_name(k.dwDesiredAccess, k.pObjAttrib, &fd)))
        THUNK_RETURN(status);
    desc->hNtHandle = (HANDLE)(intptr_t)fd;
    THUNK_RETURN(STATUS_SUCCESS);
}
