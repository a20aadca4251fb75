/*
 * Adapter thunks: EnumAdapters, EnumAdapters2/3, OpenAdapterFromLuid,
 * CloseAdapter, QueryAdapterInfo, QueryVideoMemoryInfo.
 */
#include <stdlib.h>

#include "thunk.h"
#include "base/user_memory.h"

/* What Windows 11 answers for the size of the adapter array: callers
 * allocate this many entries, then enumerate. */
#define KMT_ENUMADAPTERS2_MAX 34

NTSTATUS APIENTRY D3DKMTEnumAdapters2(D3DKMT_ENUMADAPTERS2 *desc)
{
    D3DKMT_ENUMADAPTERS2 k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "NumAdapters %u, pAdapters %p\n", k.NumAdapters, k.pAdapters);
    if (!k.pAdapters) {
        desc->NumAdapters = KMT_ENUMADAPTERS2_MAX;
        THUNK_RETURN(STATUS_SUCCESS);
    }
    if (!kmt_user_ptr_ok(k.pAdapters, (size_t)k.NumAdapters * sizeof(D3DKMT_ADAPTERINFO)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_enum_adapters(k.pAdapters, &k.NumAdapters, k.NumAdapters, false);
    if (!status)
        desc->NumAdapters = k.NumAdapters;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTEnumAdapters3(D3DKMT_ENUMADAPTERS3 *desc)
{
    D3DKMT_ENUMADAPTERS3 k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    if (k.Filter.Reserved)
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (!k.pAdapters) {
        desc->NumAdapters = KMT_ENUMADAPTERS2_MAX;
        THUNK_RETURN(STATUS_SUCCESS);
    }
    if (!kmt_user_ptr_ok(k.pAdapters, (size_t)k.NumAdapters * sizeof(D3DKMT_ADAPTERINFO)))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    status = dxgk_enum_adapters(k.pAdapters, &k.NumAdapters, k.NumAdapters,
                                k.Filter.IncludeComputeOnly);
    if (!status)
        desc->NumAdapters = k.NumAdapters;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTEnumAdapters(D3DKMT_ENUMADAPTERS *desc)
{
    D3DKMT_ADAPTERINFO info[MAX_ENUM_ADAPTERS];
    ULONG count = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    /* The legacy call returns at most 16: ask for the count, then fill. */
    status = dxgk_enum_adapters(NULL, &count, 0, false);
    if (!status) {
        if (count > MAX_ENUM_ADAPTERS)
            count = MAX_ENUM_ADAPTERS;
        status = dxgk_enum_adapters(info, &count, count, false);
        if (status == STATUS_BUFFER_TOO_SMALL)      /* hot-plugged meanwhile */
            status = STATUS_UNSUCCESSFUL;
    }
    if (!status) {
        desc->NumAdapters = count;
        memcpy(desc->Adapters, info, count * sizeof(info[0]));
    }
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTOpenAdapterFromLuid(D3DKMT_OPENADAPTERFROMLUID *desc)
{
    D3DKMT_HANDLE h = 0;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "luid %08x:%08x\n", (unsigned)desc->AdapterLuid.HighPart,
           (unsigned)desc->AdapterLuid.LowPart);
    status = dxgk_open_adapter_from_luid(desc->AdapterLuid, &h);
    if (!status)
        desc->hAdapter = h;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTCloseAdapter(const D3DKMT_CLOSEADAPTER *desc)
{
    THUNK_ENTER_DESC(desc);
    TRACE_(d3dkmt, "hAdapter %#x\n", desc->hAdapter);
    THUNK_RETURN(dxgk_close_adapter(desc->hAdapter));
}

NTSTATUS APIENTRY D3DKMTQueryAdapterInfo(const D3DKMT_QUERYADAPTERINFO *desc)
{
    D3DKMT_QUERYADAPTERINFO k;
    unsigned char small[sizeof(D3DKMT_OPENGLINFO) + 16], *buf = small;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, Type %d, pPrivateDriverData %p, size %u\n", k.hAdapter, k.Type,
           k.pPrivateDriverData, k.PrivateDriverDataSize);
    if (!k.PrivateDriverDataSize || k.PrivateDriverDataSize > DXGK_MAX_PRIVATE_DATA ||
        !kmt_user_ptr_ok(k.pPrivateDriverData, k.PrivateDriverDataSize))
        THUNK_RETURN(STATUS_INVALID_PARAMETER);
    if (k.PrivateDriverDataSize > sizeof(small) && !(buf = malloc(k.PrivateDriverDataSize)))
        THUNK_RETURN(STATUS_NO_MEMORY);
    /* in/out: some types read input fields (UMD version, adapter index) */
    if (!kmt_user_copy_in(buf, k.pPrivateDriverData, k.PrivateDriverDataSize))
        status = STATUS_ACCESS_VIOLATION;     /* an unmapped or PROT_NONE answer buffer */
    else if (!(status = dxgk_query_adapter_info(k.hAdapter, k.Type, buf, k.PrivateDriverDataSize)) &&
             !kmt_user_write_back(k.pPrivateDriverData, buf, k.PrivateDriverDataSize))
        status = STATUS_ACCESS_VIOLATION;     /* a read-only answer buffer */
    if (buf != small)
        free(buf);
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTQueryVideoMemoryInfo(D3DKMT_QUERYVIDEOMEMORYINFO *desc)
{
    D3DKMT_QUERYVIDEOMEMORYINFO k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hProcess %p, hAdapter %#x, group %d, physical adapter %u\n", k.hProcess,
           k.hAdapter, k.MemorySegmentGroup, k.PhysicalAdapterIndex);
    status = dxgk_query_video_memory_info(&k);
    if (!status) {
        desc->Budget = k.Budget;
        desc->CurrentUsage = k.CurrentUsage;
        desc->CurrentReservation = k.CurrentReservation;
        desc->AvailableForReservation = k.AvailableForReservation;
    }
    THUNK_RETURN(status);
}
