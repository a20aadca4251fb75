/*
 * QueryStatistics: the counters task managers read, from the core's own
 * books.  kmtshim's state is per process, so a PROCESS_* query and its
 * adapter-wide twin give the same numbers (the process is the only one
 * the core knows).  The *2 types are the same queries addressed with a
 * physical adapter index; PHYSICAL_ADAPTER and the memory-usage types are
 * statistics_ext.c's.  What each counter is and where it comes from:
 * docs/architecture.md, "Statistics".
 */
#include <string.h>

#include "dxgkrnl.h"
#include "ddi.h"
#include "statistics.h"
#include "vidsch.h"

static bool is_process_type(D3DKMT_QUERYSTATISTICS_TYPE type)
{
    switch (type) {
    case D3DKMT_QUERYSTATISTICS_PROCESS:
    case D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER:
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT:
    case D3DKMT_QUERYSTATISTICS_PROCESS_NODE:
    case D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE:
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP:
    case D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER2:
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT2:
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2:
    case D3DKMT_QUERYSTATISTICS_PROCESS_NODE2:
        return true;
    default:
        return false;
    }
}

static ULONG vidpn_source_count(const struct dxgk_adapter *adapter)
{
    return adapter->num_sources < DXGK_MAX_VIDPN_SOURCES ? adapter->num_sources : DXGK_MAX_VIDPN_SOURCES;
}

/* The budget group a segment's allocations are counted in; the core books
 * per group, so a group's counts go to its first segment. */
UINT dxgk_stats_segment_group(const DXGK_SEGMENTDESCRIPTOR *seg)
{
    return seg->Flags.NonLocalBudgetGroup ? D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL
                                          : D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
}

static bool first_of_group(const struct dxgk_adapter *adapter, UINT id)
{
    UINT group = dxgk_stats_segment_group(&adapter->segments.pSegmentDescriptor[id]);

    for (UINT i = 0; i < id; i++)
        if (dxgk_stats_segment_group(&adapter->segments.pSegmentDescriptor[i]) == group)
            return false;
    return true;
}

void dxgk_stats_segment_counts(const struct dxgk_adapter *adapter, UINT id, UINT64 *bytes, ULONG *count)
{
    UINT group = dxgk_stats_segment_group(&adapter->segments.pSegmentDescriptor[id]);

    *bytes = 0;
    *count = 0;
    if (!first_of_group(adapter, id))
        return;
    *bytes = atomic_load_explicit(&adapter->usage[group], memory_order_relaxed);
    *count = atomic_load_explicit(&adapter->allocations[group], memory_order_relaxed);
}

static void fill_segment(const struct dxgk_adapter *adapter, UINT id, D3DKMT_QUERYSTATISTICS_SEGMENT_INFORMATION *out)
{
    const DXGK_SEGMENTDESCRIPTOR *seg = &adapter->segments.pSegmentDescriptor[id];
    UINT64 bytes;
    ULONG count;

    dxgk_stats_segment_counts(adapter, id, &bytes, &count);
    out->CommitLimit = seg->CommitLimit ? seg->CommitLimit : seg->Size;
    out->BytesCommitted = bytes;
    out->BytesResident = bytes;          /* nothing is ever evicted */
    out->Memory.AllocsCommitted = count;
    out->Memory.AllocsResident = count;
    out->Aperture = seg->Flags.Aperture;
    out->SegmentProperties.SystemMemory = seg->Flags.Aperture || seg->Flags.PopulatedFromSystemMemory;
    out->SegmentProperties.SegmentGroup = dxgk_stats_segment_group(seg);
    out->SegmentProperties.FullyCPUVisible = seg->Flags.CpuVisible;
}

static void fill_process_segment(const struct dxgk_adapter *adapter, UINT id,
                                 D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_INFORMATION *out)
{
    UINT64 bytes;
    ULONG count;

    dxgk_stats_segment_counts(adapter, id, &bytes, &count);
    out->BytesCommitted = bytes;
    out->VideoMemory.AllocsCommitted = count;
    out->VideoMemory.AllocsResidentInP[0].Count = count;   /* always in the preferred segment */
    out->VideoMemory.AllocsResidentInP[0].Bytes = bytes;
}

/* The miniport's busy time of the node (DXGKQAITYPE_KMT_NODERUNNINGTIME),
 * in RunningTime's 100 ns units; 0 where it keeps none. */
static LONGLONG node_running_time(struct dxgk_adapter *adapter, UINT node)
{
    UINT64 ns = 0;

    if (dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_NODERUNNINGTIME, &node, sizeof(node), &ns,
                                    sizeof(ns)))
        return 0;
    return (LONGLONG)(ns / 100);
}

static ULONG clamp32(UINT64 v)
{
    return v > 0xffffffffu ? 0xffffffffu : (ULONG)v;
}

static void fill_node(struct dxgk_adapter *adapter, UINT node, D3DKMT_QUERYSTATISTICS_PROCESS_NODE_INFORMATION *out)
{
    D3DKMT_QUERYSTATISTICS_PACKET_INFORMATION *packets = &out->PacketStatistics;
    struct dxgk_node_counters c;

    dxgk_sched_node_counters(adapter, node, &c);
    out->RunningTime.QuadPart = node_running_time(adapter, node);
    packets->DmaPacket[0].PacketSubmited = clamp32(c.dma_submitted);     /* D3DKMT_ClientRenderBuffer */
    packets->DmaPacket[0].PacketCompleted = clamp32(c.dma_completed);
    packets->QueuePacket[0].PacketSubmited = clamp32(c.dma_submitted + c.render_waiting);  /* Render */
    packets->QueuePacket[0].PacketCompleted = clamp32(c.dma_completed);
}

/* 1 where every segment is in the local group, 2 where some are non-local. */
static UINT memory_group_count(const struct dxgk_adapter *adapter)
{
    for (UINT i = 0; i < adapter->segments.NbSegment; i++)
        if (dxgk_stats_segment_group(&adapter->segments.pSegmentDescriptor[i]) == D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL)
            return 2;
    return 1;
}

/* Preemption, paging, renaming and lock counters stay 0: kmtshim never
 * preempts, evicts, renames or pages (docs/architecture.md, "Statistics"). */
static void fill_adapter(struct dxgk_adapter *adapter, D3DKMT_QUERYSTATISTICS_ADAPTER_INFORMATION *out)
{
    out->NbSegments = adapter->segments.NbSegment;
    out->NodeCount = adapter->caps.NodeCount;
    out->VidPnSourceCount = vidpn_source_count(adapter);
    out->TdrDetectedCount = dxgk_sched_tdr_count(adapter);
    out->Allocations.Created.Count = atomic_load_explicit(&adapter->allocs_created, memory_order_relaxed);
    out->Allocations.Created.Bytes = atomic_load_explicit(&adapter->bytes_created, memory_order_relaxed);
    out->Allocations.Destroyed.Count = atomic_load_explicit(&adapter->allocs_destroyed, memory_order_relaxed);
    out->Allocations.Destroyed.Bytes = atomic_load_explicit(&adapter->bytes_destroyed, memory_order_relaxed);
    out->Flags.NumberOfMemoryGroups = memory_group_count(adapter);
}

static void fill_process_adapter(struct dxgk_adapter *adapter,
                                 D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER_INFORMATION *out)
{
    out->NbSegments = adapter->segments.NbSegment;
    out->NodeCount = adapter->caps.NodeCount;
    out->VidPnSourceCount = vidpn_source_count(adapter);
    /* Every allocation lives in its preferred segment. */
    for (UINT group = 0; group < 2; group++)
        out->CommitmentData.BytesBySegmentPreference[0] +=
            atomic_load_explicit(&adapter->usage[group], memory_order_relaxed);
}

/* A *2 query as its plain twin: its physical adapter index checked, its
 * id moved to where the plain type reads it. */
static NTSTATUS plain_query(struct dxgk_adapter *adapter, D3DKMT_QUERYSTATISTICS *q)
{
    UINT physical;

    switch (q->Type) {
    case D3DKMT_QUERYSTATISTICS_ADAPTER2:
    case D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER2:
        physical = q->QueryAdapter2.PhysicalAdapterIndex;
        q->Type = q->Type == D3DKMT_QUERYSTATISTICS_ADAPTER2 ? D3DKMT_QUERYSTATISTICS_ADAPTER
                                                             : D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER;
        break;
    case D3DKMT_QUERYSTATISTICS_SEGMENT2:
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT2:
        physical = q->QuerySegment2.PhysicalAdapterIndex;
        q->QuerySegment.SegmentId = q->QuerySegment2.SegmentId;
        q->Type = q->Type == D3DKMT_QUERYSTATISTICS_SEGMENT2 ? D3DKMT_QUERYSTATISTICS_SEGMENT
                                                             : D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT;
        break;
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2:
        physical = q->QueryProcessSegmentGroup2.PhysicalAdapterIndex;
        q->QueryProcessSegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)q->QueryProcessSegmentGroup2.SegmentGroup;
        q->Type = D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP;
        break;
    case D3DKMT_QUERYSTATISTICS_NODE2:
    case D3DKMT_QUERYSTATISTICS_PROCESS_NODE2:
        physical = q->QueryNode2.PhysicalAdapterIndex;
        q->QueryNode.NodeId = q->QueryNode2.NodeOrdinal;
        q->Type = q->Type == D3DKMT_QUERYSTATISTICS_NODE2 ? D3DKMT_QUERYSTATISTICS_NODE
                                                          : D3DKMT_QUERYSTATISTICS_PROCESS_NODE;
        break;
    default:
        return STATUS_SUCCESS;
    }
    return dxgk_stats_physical_ok(adapter, physical) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS fill(struct dxgk_adapter *adapter, D3DKMT_QUERYSTATISTICS *q, D3DKMT_QUERYSTATISTICS_RESULT *r)
{
    NTSTATUS status = plain_query(adapter, q);

    if (status)
        return status;
    switch (q->Type) {
    case D3DKMT_QUERYSTATISTICS_ADAPTER:
        fill_adapter(adapter, &r->AdapterInformation);
        return STATUS_SUCCESS;
    case D3DKMT_QUERYSTATISTICS_PROCESS:
        r->ProcessInformation.NodeCount = adapter->caps.NodeCount;
        r->ProcessInformation.VidPnSourceCount = vidpn_source_count(adapter);
        return STATUS_SUCCESS;
    case D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER:
        fill_process_adapter(adapter, &r->ProcessAdapterInformation);
        return STATUS_SUCCESS;
    case D3DKMT_QUERYSTATISTICS_SEGMENT:
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT:
        if (q->QuerySegment.SegmentId >= adapter->segments.NbSegment)
            return STATUS_INVALID_PARAMETER;
        if (q->Type == D3DKMT_QUERYSTATISTICS_SEGMENT)
            fill_segment(adapter, q->QuerySegment.SegmentId, &r->SegmentInformation);
        else
            fill_process_segment(adapter, q->QuerySegment.SegmentId, &r->ProcessSegmentInformation);
        return STATUS_SUCCESS;
    case D3DKMT_QUERYSTATISTICS_NODE:
    case D3DKMT_QUERYSTATISTICS_PROCESS_NODE:
        if (q->QueryNode.NodeId >= adapter->caps.NodeCount)
            return STATUS_INVALID_PARAMETER;
        fill_node(adapter, q->QueryNode.NodeId, q->Type == D3DKMT_QUERYSTATISTICS_NODE
                                                     ? &r->NodeInformation.GlobalInformation
                                                     : &r->ProcessNodeInformation);
        if (q->Type == D3DKMT_QUERYSTATISTICS_NODE)
            r->NodeInformation.NodePerfData.NodeOrdinal = q->QueryNode.NodeId;
        return STATUS_SUCCESS;
    case D3DKMT_QUERYSTATISTICS_VIDPNSOURCE:
    case D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE:
        /* the process is the only one: its counters are the source's */
        if (q->QueryVidPnSource.VidPnSourceId >= vidpn_source_count(adapter))
            return STATUS_INVALID_PARAMETER;
        if (q->Type == D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE) {
            dxgk_flip_counters(adapter, q->QueryVidPnSource.VidPnSourceId, &r->ProcessVidPnSourceInformation);
        } else {
            dxgk_flip_counters(adapter, q->QueryVidPnSource.VidPnSourceId,
                               &r->VidPnSourceInformation.GlobalInformation);
            r->VidPnSourceInformation.SystemInformation = r->VidPnSourceInformation.GlobalInformation;
        }
        return STATUS_SUCCESS;
    case D3DKMT_QUERYSTATISTICS_PHYSICAL_ADAPTER:
        return dxgk_stats_physical_adapter(adapter, q->QueryPhysAdapter.PhysicalAdapterIndex,
                                           &r->PhysAdapterInformation);
    case D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP:
        return dxgk_stats_process_segment_group(adapter, (UINT)q->QueryProcessSegmentGroup,
                                                &r->ProcessSegmentGroupInformation);
    case D3DKMT_QUERYSTATISTICS_SEGMENT_USAGE:
        return dxgk_stats_segment_usage(adapter, q->QuerySegmentUsage.PhysicalAdapterIndex,
                                        q->QuerySegmentUsage.SegmentId, &r->SegmentUsageInformation);
    case D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE:
        return dxgk_stats_segment_group_usage(adapter, q->QuerySegmentGroupUsage.PhysicalAdapterIndex,
                                              q->QuerySegmentGroupUsage.SegmentGroup,
                                              &r->SegmentGroupUsageInformation);
    default:
        return STATUS_INVALID_PARAMETER;   /* not reached: the type was checked */
    }
}

NTSTATUS dxgk_query_statistics(D3DKMT_QUERYSTATISTICS *q)
{
    D3DKMT_QUERYSTATISTICS_RESULT result;
    D3DKMT_QUERYSTATISTICS query;
    struct dxgk_adapter *adapter;
    NTSTATUS status;

    if ((UINT)q->Type > D3DKMT_QUERYSTATISTICS_PROCESS_NODE2)
        return STATUS_INVALID_PARAMETER;
    /* As QueryVideoMemoryInfo: the process before the adapter, and natively
     * only the calling process is one. */
    if (is_process_type(q->Type) && q->hProcess && q->hProcess != (HANDLE)(intptr_t)-1)
        return STATUS_INVALID_HANDLE;
    if (!(adapter = dxgk_adapter_from_luid(q->AdapterLuid)))
        return STATUS_INVALID_PARAMETER;
    memset(&result, 0, sizeof(result));
    query = *q;                          /* fill() rewrites a *2 query */
    status = fill(adapter, &query, &result);
    if (!status)
        q->QueryResult = result;
    dxgk_adapter_put(adapter);
    return status;
}
