/*
 * Shared resources in tests (see share_resource_util.h).
 */
#include <string.h>

#include "kmtshim/kmtsoft.h"
#include "share_resource_util.h"

NTSTATUS share_test_create(D3DKMT_HANDLE device, bool nt, void *sysmem, struct share_test_resource *out)
{
    KMT_SOFT_ALLOCATION_DESC desc = { 0 };
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    UINT runtime = SHARE_TEST_RUNTIME;
    NTSTATUS status;

    desc.Magic = KMT_SOFT_ALLOCATION_MAGIC;
    desc.Version = KMT_SOFT_ALLOCATION_VERSION;
    desc.Size = SHARE_TEST_SIZE;
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ca.pPrivateRuntimeData = &runtime;
    ca.PrivateRuntimeDataSize = sizeof(runtime);
    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = 1;
    ca.Flags.NtSecuritySharing = nt;
    if (sysmem) {
        std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
        std.ExistingHeapData.Size = SHARE_TEST_SIZE;
        info.pSystemMem = sysmem;
        ca.pStandardAllocation = &std;
        ca.Flags.StandardAllocation = 1;
        ca.Flags.ExistingSysMem = 1;
    } else {
        info.pPrivateDriverData = &desc;
        info.PrivateDriverDataSize = sizeof(desc);
    }
    if ((status = D3DKMTCreateAllocation(&ca)))
        return status;
    out->resource = ca.hResource;
    out->allocation = info.hAllocation;
    out->global = ca.hGlobalShare;
    return STATUS_SUCCESS;
}

NTSTATUS share_test_open(D3DKMT_HANDLE device, D3DKMT_HANDLE global, struct share_test_resource *out)
{
    D3DKMT_QUERYRESOURCEINFO q = { 0 };
    D3DDDI_OPENALLOCATIONINFO info = { 0 };
    D3DKMT_OPENRESOURCE o = { 0 };
    unsigned char runtime[0x100], driver[0x1000], total[0x1000], alloc_data[0x400];
    NTSTATUS status;

    q.hDevice = device;
    q.hGlobalShare = global;
    q.pPrivateRuntimeData = runtime;
    q.PrivateRuntimeDataSize = sizeof(runtime);
    if ((status = D3DKMTQueryResourceInfo(&q)))
        return status;
    info.pPrivateDriverData = alloc_data;
    info.PrivateDriverDataSize = sizeof(alloc_data);
    o.hDevice = device;
    o.hGlobalShare = global;
    o.NumAllocations = q.NumAllocations;
    o.pOpenAllocationInfo = &info;
    o.pPrivateRuntimeData = runtime;
    o.PrivateRuntimeDataSize = q.PrivateRuntimeDataSize;
    o.pResourcePrivateDriverData = driver;
    o.ResourcePrivateDriverDataSize = q.ResourcePrivateDriverDataSize;
    o.pTotalPrivateDriverDataBuffer = total;
    o.TotalPrivateDriverDataBufferSize = sizeof(total);
    if ((status = D3DKMTOpenResource(&o)))
        return status;
    out->resource = o.hResource;
    out->allocation = info.hAllocation;
    out->global = global;
    return STATUS_SUCCESS;
}

NTSTATUS share_test_open_nt(D3DKMT_HANDLE device, HANDLE nt, struct share_test_resource *out)
{
    D3DDDI_OPENALLOCATIONINFO2 info = { 0 };
    D3DKMT_OPENRESOURCEFROMNTHANDLE o = { 0 };
    unsigned char runtime[4], total[0x1000], alloc_data[0x400];
    NTSTATUS status;

    info.pPrivateDriverData = alloc_data;
    info.PrivateDriverDataSize = sizeof(alloc_data);
    o.hDevice = device;
    o.hNtHandle = nt;
    o.NumAllocations = 1;
    o.pOpenAllocationInfo2 = &info;
    o.pPrivateRuntimeData = runtime;
    o.PrivateRuntimeDataSize = sizeof(runtime);
    o.pTotalPrivateDriverDataBuffer = total;
    o.TotalPrivateDriverDataBufferSize = sizeof(total);
    if ((status = D3DKMTOpenResourceFromNtHandle(&o)))
        return status;
    out->resource = o.hResource;
    out->allocation = info.hAllocation;
    out->global = 0;
    return STATUS_SUCCESS;
}

unsigned char *share_test_map(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation)
{
    D3DKMT_LOCK lock = { 0 };

    lock.hDevice = device;
    lock.hAllocation = allocation;
    return D3DKMTLock(&lock) ? NULL : lock.pData;
}

void share_test_unmap(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation)
{
    D3DKMT_UNLOCK unlock = { device, 1, &allocation };

    D3DKMTUnlock(&unlock);
}

NTSTATUS share_test_destroy(D3DKMT_HANDLE device, D3DKMT_HANDLE resource)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };

    d.hDevice = device;
    d.hResource = resource;
    return D3DKMTDestroyAllocation(&d);
}

D3DKMT_HANDLE share_test_device(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    D3DKMT_CREATEDEVICE cd = { 0 };

    if (D3DKMTEnumAdapters2(&e) || !e.NumAdapters)
        return 0;
    cd.hAdapter = info[0].hAdapter;
    return D3DKMTCreateDevice(&cd) ? 0 : cd.hDevice;
}
