/*
 * Statistics thunks: QueryStatistics, QueryClockCalibration.
 */
#include "thunk.h"

NTSTATUS APIENTRY D3DKMTQueryStatistics(const D3DKMT_QUERYSTATISTICS *desc)
{
    D3DKMT_QUERYSTATISTICS k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "Type %d, AdapterLuid %08x:%08x, hProcess %p, id %u\n", k.Type,
           (unsigned)k.AdapterLuid.HighPart, (unsigned)k.AdapterLuid.LowPart, k.hProcess,
           k.QuerySegment.SegmentId);
    status = dxgk_query_statistics(&k);
    /* the descriptor is const in the prototype, as on Windows, but the
     * result is written into it */
    if (!status)
        ((D3DKMT_QUERYSTATISTICS *)desc)->QueryResult = k.QueryResult;
    THUNK_RETURN(status);
}

NTSTATUS APIENTRY D3DKMTQueryClockCalibration(D3DKMT_QUERYCLOCKCALIBRATION *desc)
{
    D3DKMT_QUERYCLOCKCALIBRATION k;
    NTSTATUS status;

    THUNK_ENTER_DESC(desc);
    k = *desc;
    TRACE_(d3dkmt, "hAdapter %#x, NodeOrdinal %u, PhysicalAdapterIndex %u\n", k.hAdapter, k.NodeOrdinal,
           k.PhysicalAdapterIndex);
    status = dxgk_query_clock_calibration(&k);
    if (!status)
        desc->ClockData = k.ClockData;
    THUNK_RETURN(status);
}
