/*
 * QueryStatistics' Windows 10 1803+ results: PHYSICAL_ADAPTER,
 * PROCESS_SEGMENT_GROUP(2), SEGMENT_USAGE and SEGMENT_GROUP_USAGE, from the
 * core's books (the bytes booked per segment group at allocation) and the
 * miniport's performance data.  kmtshim never demotes, pages or zeroes
 * video memory, so Demoted, ZeroBytes, ModifiedBytes and StandbyBytes are
 * 0 (docs/architecture.md, "Statistics").
 */
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"
#include "statistics.h"

bool dxgk_stats_physical_ok(const struct dxgk_adapter *adapter, UINT physical)
{
    UINT count = adapter->caps.PhysicalAdapterCount ? adapter->caps.PhysicalAdapterCount : 1;

    return physical < count;
}

static UINT64 segment_size(const DXGK_SEGMENTDESCRIPTOR *seg)
{
    return seg->CommitLimit ? seg->CommitLimit : seg->Size;
}

static void usage_of(UINT64 allocated, UINT64 size, D3DKMT_QUERYSTATISTICS_MEMORY_USAGE *out)
{
    memset(out, 0, sizeof(*out));
    out->AllocatedBytes = allocated;
    out->FreeBytes = size > allocated ? size - allocated : 0;
}

NTSTATUS dxgk_stats_segment_usage(struct dxgk_adapter *adapter, UINT physical, UINT segment,
                                  D3DKMT_QUERYSTATISTICS_MEMORY_USAGE *out)
{
    UINT64 bytes;
    ULONG count;

    if (!dxgk_stats_physical_ok(adapter, physical) || segment >= adapter->segments.NbSegment)
        return STATUS_INVALID_PARAMETER;
    dxgk_stats_segment_counts(adapter, segment, &bytes, &count);
    usage_of(bytes, segment_size(&adapter->segments.pSegmentDescriptor[segment]), out);
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_stats_segment_group_usage(struct dxgk_adapter *adapter, UINT physical, UINT group,
                                        D3DKMT_QUERYSTATISTICS_MEMORY_USAGE *out)
{
    UINT64 size = 0;

    if (!dxgk_stats_physical_ok(adapter, physical) || group > D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL)
        return STATUS_INVALID_PARAMETER;
    for (UINT i = 0; i < adapter->segments.NbSegment; i++)
        if (dxgk_stats_segment_group(&adapter->segments.pSegmentDescriptor[i]) == group)
            size += segment_size(&adapter->segments.pSegmentDescriptor[i]);
    usage_of(atomic_load_explicit(&adapter->usage[group], memory_order_relaxed), size, out);
    return STATUS_SUCCESS;
}

/* The budget is QueryVideoMemoryInfo's; everything requested is committed
 * at creation, so Requested is Usage. */
NTSTATUS dxgk_stats_process_segment_group(struct dxgk_adapter *adapter, UINT group,
                                          D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP_INFORMATION *out)
{
    KMT_MEMORY_BUDGET budget = { 0 };
    NTSTATUS status;

    if (group > D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL)
        return STATUS_INVALID_PARAMETER;
    status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_MEMORYUSAGE, &group, sizeof(group), &budget,
                                         sizeof(budget));
    if (status)
        return status;
    memset(out, 0, sizeof(*out));
    out->Budget = budget.Budget;
    out->Usage = atomic_load_explicit(&adapter->usage[group], memory_order_relaxed);
    out->Requested = out->Usage;
    return STATUS_SUCCESS;
}

/* At most n - 1 characters of a registry string, NUL-terminated. */
static void copy_name(WCHAR *out, const WCHAR *in, size_t n)
{
    size_t i;

    for (i = 0; i + 1 < n && in[i]; i++)
        out[i] = in[i];
    out[i] = 0;
}

/* The QueryAdapterInfo performance data and caps of the physical adapter;
 * its version strings are the registry's BiosString and ChipType. */
NTSTATUS dxgk_stats_physical_adapter(struct dxgk_adapter *adapter, UINT physical,
                                     D3DKMT_QUERYSTATISTICS_PHYSICAL_ADAPTER_INFORMATION *out)
{
    D3DKMT_GPUVERSION *version = &out->GpuVersion;
    NTSTATUS status;

    if (!dxgk_stats_physical_ok(adapter, physical))
        return STATUS_INVALID_PARAMETER;
    out->AdapterPerfData.PhysicalAdapterIndex = physical;
    out->AdapterPerfDataCaps.PhysicalAdapterIndex = physical;
    if ((status = dxgk_qai_ext(adapter, KMTQAITYPE_ADAPTERPERFDATA, &out->AdapterPerfData)) ||
        (status = dxgk_qai_ext(adapter, KMTQAITYPE_ADAPTERPERFDATA_CAPS, &out->AdapterPerfDataCaps)))
        return status;
    version->PhysicalAdapterIndex = physical;
    copy_name(version->BiosVersion, adapter->registry_info.BiosString, DXGK_MAX_GPUVERSION_NAME_LENGTH);
    copy_name(version->GpuArchitecture, adapter->registry_info.ChipType, DXGK_MAX_GPUVERSION_NAME_LENGTH);
    return STATUS_SUCCESS;
}
