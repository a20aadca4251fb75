/*
 * Conformance: QueryStatistics and QueryClockCalibration as a Windows
 * program sees them, on the software adapter.  Through the gdi32 proxy a
 * LUID kmtshim does not have is Wine's to answer (routing.txt, luid@4).
 */
#include "conformance.h"

static NTSTATUS stats(const LUID *luid, D3DKMT_QUERYSTATISTICS_TYPE type, HANDLE process, ULONG id,
                      D3DKMT_QUERYSTATISTICS *q)
{
    memset(q, 0, sizeof(*q));
    q->Type = type;
    q->AdapterLuid = *luid;
    q->hProcess = process;
    q->QuerySegment.SegmentId = id;
    return kmt_api.QueryStatistics(q);
}

void kmtc_statistics(void)
{
    enum { SIZE = 0x10000 };
    D3DKMT_QUERYSTATISTICS q, before;
    D3DKMT_DESTROYALLOCATION da = { 0 };
    D3DKMT_HANDLE adapter, device, alloc;
    HANDLE process;
    LUID luid, other;

    if (!(adapter = kmt_open_soft_adapter(&luid)) || !(device = kmt_create_device(adapter)))
        return;
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_ADAPTER, NULL, 0, &q), STATUS_SUCCESS);
    ok(q.QueryResult.AdapterInformation.NbSegments == 1 && q.QueryResult.AdapterInformation.NodeCount == 1,
       "%lu segments, %lu nodes\n", q.QueryResult.AdapterInformation.NbSegments,
       q.QueryResult.AdapterInformation.NodeCount);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_SEGMENT, NULL, 1, &q), STATUS_INVALID_PARAMETER);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_NODE, NULL, 1, &q), STATUS_INVALID_PARAMETER);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_PROCESS_NODE2 + 1, NULL, 0, &q), STATUS_INVALID_PARAMETER);

    /* an allocation moves the segment's and the process's counts */
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_SEGMENT, NULL, 0, &before), STATUS_SUCCESS);
    expect_status(create_soft_allocation(device, SIZE, &alloc), STATUS_SUCCESS);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_SEGMENT, NULL, 0, &q), STATUS_SUCCESS);
    ok(q.QueryResult.SegmentInformation.Memory.AllocsCommitted ==
           before.QueryResult.SegmentInformation.Memory.AllocsCommitted + 1,
       "AllocsCommitted %lu, before %lu\n", q.QueryResult.SegmentInformation.Memory.AllocsCommitted,
       before.QueryResult.SegmentInformation.Memory.AllocsCommitted);
    ok(q.QueryResult.SegmentInformation.BytesCommitted == before.QueryResult.SegmentInformation.BytesCommitted + SIZE,
       "BytesCommitted %llu, before %llu\n", q.QueryResult.SegmentInformation.BytesCommitted,
       before.QueryResult.SegmentInformation.BytesCommitted);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT, GetCurrentProcess(), 0, &q), STATUS_SUCCESS);
    ok(q.QueryResult.ProcessSegmentInformation.BytesCommitted >= SIZE, "process BytesCommitted %llu\n",
       q.QueryResult.ProcessSegmentInformation.BytesCommitted);
    da.hDevice = device;
    da.phAllocationList = &alloc;
    da.AllocationCount = 1;
    expect_status(kmt_api.DestroyAllocation(&da), STATUS_SUCCESS);

    /* hProcess of the PROCESS_* types, as QueryVideoMemoryInfo's */
    process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_PROCESS_NODE, process, 0, &q), STATUS_SUCCESS);
    CloseHandle(process);
    process = OpenProcess(SYNCHRONIZE, FALSE, GetCurrentProcessId());
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_PROCESS_NODE, process, 0, &q), STATUS_ACCESS_DENIED);
    CloseHandle(process);
    process = CreateEventW(NULL, FALSE, FALSE, NULL);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_PROCESS_NODE, process, 0, &q), STATUS_INVALID_HANDLE);
    /* the adapter-wide types take no process */
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_NODE, process, 0, &q), STATUS_SUCCESS);
    CloseHandle(process);
    expect_status(stats(&luid, D3DKMT_QUERYSTATISTICS_PROCESS_NODE, (HANDLE)(ULONG_PTR)0xdeadbeef, 0, &q),
                  STATUS_INVALID_HANDLE);

    /* a LUID kmtshim does not have */
    other = luid;
    other.LowPart ^= 0x5a5a;
    {
        NTSTATUS expected = STATUS_INVALID_PARAMETER;

        if (kmt_wine_api.QueryStatistics) {
            D3DKMT_QUERYSTATISTICS w = { 0 };
            w.Type = D3DKMT_QUERYSTATISTICS_ADAPTER;
            w.AdapterLuid = other;
            expected = kmt_wine_api.QueryStatistics(&w);
        }
        expect_status(stats(&other, D3DKMT_QUERYSTATISTICS_ADAPTER, NULL, 0, &q), expected);
    }
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

void kmtc_clock_calibration(void)
{
    D3DKMT_QUERYCLOCKCALIBRATION q = { 0 };
    LARGE_INTEGER freq, before, after;
    D3DKMT_HANDLE adapter;

    expect_status(kmt_api.QueryClockCalibration(&q), STATUS_INVALID_PARAMETER);     /* hAdapter 0 */
    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return;
    q.hAdapter = adapter;
    q.NodeOrdinal = 1;
    expect_status(kmt_api.QueryClockCalibration(&q), STATUS_INVALID_PARAMETER);
    q.NodeOrdinal = 0;
    q.PhysicalAdapterIndex = 1;
    expect_status(kmt_api.QueryClockCalibration(&q), STATUS_INVALID_PARAMETER);
    q.PhysicalAdapterIndex = 0;
    /* CpuClockCounter is QueryPerformanceCounter's clock */
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&before);
    expect_status(kmt_api.QueryClockCalibration(&q), STATUS_SUCCESS);
    QueryPerformanceCounter(&after);
    ok(freq.QuadPart == 10000000, "QPC frequency %lld\n", freq.QuadPart);
    ok(q.ClockData.CpuClockCounter >= (UINT64)before.QuadPart && q.ClockData.CpuClockCounter <= (UINT64)after.QuadPart,
       "CpuClockCounter %llu not within QPC %lld..%lld\n", q.ClockData.CpuClockCounter, before.QuadPart,
       after.QuadPart);
    ok(q.ClockData.GpuFrequency == 1000000000ull, "GpuFrequency %llu\n", q.ClockData.GpuFrequency);
    kmt_close_adapter(adapter);
}
