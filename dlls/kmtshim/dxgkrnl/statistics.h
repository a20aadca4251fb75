/*
 * What statistics.c and statistics_ext.c share: the core's books read per
 * segment and per segment group, and the Windows 10 1803+ result fills.
 */
#ifndef KMT_DXGKRNL_STATISTICS_H
#define KMT_DXGKRNL_STATISTICS_H

#include "dxgkrnl.h"

/* The D3DKMT_MEMORY_SEGMENT_GROUP a segment's allocations are booked in. */
UINT dxgk_stats_segment_group(const DXGK_SEGMENTDESCRIPTOR *seg);
/* Bytes and allocations booked for segment `id`: a group's all go to its
 * first segment, the others read 0. */
void dxgk_stats_segment_counts(const struct dxgk_adapter *adapter, UINT id, UINT64 *bytes, ULONG *count);
/* A physical adapter index names one of the adapter's (kmtshim's have one). */
bool dxgk_stats_physical_ok(const struct dxgk_adapter *adapter, UINT physical);

NTSTATUS dxgk_stats_physical_adapter(struct dxgk_adapter *adapter, UINT physical,
                                     D3DKMT_QUERYSTATISTICS_PHYSICAL_ADAPTER_INFORMATION *out);
NTSTATUS dxgk_stats_process_segment_group(struct dxgk_adapter *adapter, UINT group,
                                          D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP_INFORMATION *out);
NTSTATUS dxgk_stats_segment_usage(struct dxgk_adapter *adapter, UINT physical, UINT segment,
                                  D3DKMT_QUERYSTATISTICS_MEMORY_USAGE *out);
NTSTATUS dxgk_stats_segment_group_usage(struct dxgk_adapter *adapter, UINT physical, UINT group,
                                        D3DKMT_QUERYSTATISTICS_MEMORY_USAGE *out);

#endif
