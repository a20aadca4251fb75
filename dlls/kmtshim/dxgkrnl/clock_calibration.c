/*
 * QueryClockCalibration: a node's GPU timestamp next to the CPU's
 * QueryPerformanceCounter, from the miniport's DxgkDdiCalibrateGpuClock.
 */
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"

NTSTATUS dxgk_query_clock_calibration(D3DKMT_QUERYCLOCKCALIBRATION *query)
{
    DXGKARG_CALIBRATEGPUCLOCK clock = { 0 };
    struct dxgk_adapter *adapter;
    NTSTATUS status;

    if (!(adapter = dxgk_adapter_from_handle(query->hAdapter)))
        return STATUS_INVALID_PARAMETER;
    if (query->NodeOrdinal >= adapter->caps.NodeCount ||
        query->PhysicalAdapterIndex >= adapter->caps.PhysicalAdapterCount) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    /* EngineOrdinal is the physical adapter of a linked adapter */
    status = dxgk_ddi_calibrate_gpu_clock(adapter, query->NodeOrdinal, query->PhysicalAdapterIndex, &clock);
    if (status)
        goto out;
    if (!clock.GpuFrequency) {
        ERR_(dxgk, "%s: DxgkDdiCalibrateGpuClock gave no frequency\n", adapter->miniport->name);
        status = STATUS_UNSUCCESSFUL;
        goto out;
    }
    memset(&query->ClockData, 0, sizeof(query->ClockData));
    query->ClockData.GpuFrequency = clock.GpuFrequency;
    query->ClockData.GpuClockCounter = clock.GpuClockCounter;
    query->ClockData.CpuClockCounter = clock.CpuClockCounter;
out:
    dxgk_adapter_put(adapter);
    return status;
}
