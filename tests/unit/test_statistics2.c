/*
 * D3DKMTQueryStatistics' Windows 10 1803+ types on the software adapter:
 * PHYSICAL_ADAPTER, the *2 twins (the plain query addressed with a
 * physical adapter index), PROCESS_SEGMENT_GROUP(2), SEGMENT_USAGE and
 * SEGMENT_GROUP_USAGE.  Their numbers follow the allocations the test
 * makes; bad input gets the statuses of the plain types.
 */
#include <stddef.h>

#include "exec_util.h"

static D3DKMT_HANDLE adapter, device;
static LUID luid;

static void setup(void)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_ge(e.NumAdapters, 1);
    luid = info[0].AdapterLuid;
}

/* A query of `type`; `a` and `b` are the two 16-bit halves of the *2 and
 * usage queries (physical adapter index first), or a and b in one ULONG
 * for the plain ones. */
static NTSTATUS query2(D3DKMT_QUERYSTATISTICS_TYPE type, USHORT a, USHORT b, D3DKMT_QUERYSTATISTICS *q)
{
    memset(q, 0, sizeof(*q));
    q->Type = type;
    q->AdapterLuid = luid;
    q->QueryNode2.PhysicalAdapterIndex = a;
    q->QueryNode2.NodeOrdinal = b;
    return D3DKMTQueryStatistics(q);
}

static NTSTATUS query(D3DKMT_QUERYSTATISTICS_TYPE type, ULONG id, D3DKMT_QUERYSTATISTICS *q)
{
    memset(q, 0, sizeof(*q));
    q->Type = type;
    q->AdapterLuid = luid;
    q->QuerySegment.SegmentId = id;
    return D3DKMTQueryStatistics(q);
}

START_TEST(new_types_refuse_bad_input)
{
    D3DKMT_QUERYSTATISTICS q;

    setup();
    /* a physical adapter index past the adapter's one */
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PHYSICAL_ADAPTER, 1, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_ADAPTER2, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER2, 0xffff, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT2, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT2, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_USAGE, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_NODE2, 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_NODE2, 1, 0, &q), STATUS_INVALID_PARAMETER);
    /* a segment, group or node that is not there (soft: one segment, one node) */
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT2, 0, 1, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT2, 0, 1, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_USAGE, 0, 1, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE, 0, 2, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2, 0, 2, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP, 2, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_NODE2, 0, 1, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_PROCESS_NODE2, 0, 1, &q), STATUS_INVALID_PARAMETER);
    /* the process types take no process handle natively, checked first */
    memset(&q, 0, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2;
    q.hProcess = (HANDLE)(intptr_t)0x1234;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_HANDLE);
    /* no adapter of that LUID */
    memset(&q, 0, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(refused_new_query_writes_nothing)
{
    D3DKMT_QUERYSTATISTICS q;

    setup();
    memset(&q, 0xcc, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_SEGMENT_USAGE;
    q.AdapterLuid = luid;
    q.hProcess = NULL;
    q.QuerySegmentUsage.PhysicalAdapterIndex = 0;
    q.QuerySegmentUsage.SegmentId = 7;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_PARAMETER);
    for (size_t i = 0; i < sizeof(q.QueryResult); i++)
        ck_assert_uint_eq(((const unsigned char *)&q.QueryResult)[i], 0xcc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Each *2 type answers exactly what its plain twin answers. */
START_TEST(twins_equal_the_plain_types)
{
    static const struct {
        D3DKMT_QUERYSTATISTICS_TYPE two, plain;
    } twins[] = {
        { D3DKMT_QUERYSTATISTICS_ADAPTER2, D3DKMT_QUERYSTATISTICS_ADAPTER },
        { D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER2, D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER },
        { D3DKMT_QUERYSTATISTICS_SEGMENT2, D3DKMT_QUERYSTATISTICS_SEGMENT },
        { D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT2, D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT },
        { D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP2, D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP },
        { D3DKMT_QUERYSTATISTICS_NODE2, D3DKMT_QUERYSTATISTICS_NODE },
        { D3DKMT_QUERYSTATISTICS_PROCESS_NODE2, D3DKMT_QUERYSTATISTICS_PROCESS_NODE },
    };
    D3DKMT_QUERYSTATISTICS two, plain;
    D3DKMT_HANDLE allocs[2];

    setup();
    ck_assert_status(kmt_test_create_allocations(device, 2, 65536, allocs, NULL), STATUS_SUCCESS);
    for (size_t i = 0; i < sizeof(twins) / sizeof(twins[0]); i++) {
        ck_assert_status(query2(twins[i].two, 0, 0, &two), STATUS_SUCCESS);
        ck_assert_status(query(twins[i].plain, 0, &plain), STATUS_SUCCESS);
        ck_assert_msg(!memcmp(&two.QueryResult, &plain.QueryResult, sizeof(plain.QueryResult)),
                      "type %d differs from type %d", twins[i].two, twins[i].plain);
    }
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT2, 0, 0, &two), STATUS_SUCCESS);
    ck_assert_uint_ge(two.QueryResult.SegmentInformation.BytesCommitted, 2 * 65536);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static D3DKMT_QUERYSTATISTICS_MEMORY_USAGE segment_usage0(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_USAGE, 0, 0, &q), STATUS_SUCCESS);
    return q.QueryResult.SegmentUsageInformation;
}

static D3DKMT_QUERYSTATISTICS_MEMORY_USAGE local_group_usage(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE, 0, D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL, &q),
                     STATUS_SUCCESS);
    return q.QueryResult.SegmentGroupUsageInformation;
}

static D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP_INFORMATION local_group(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP, D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL, &q),
                     STATUS_SUCCESS);
    return q.QueryResult.ProcessSegmentGroupInformation;
}

START_TEST(usage_follows_the_allocations)
{
    enum { N = 4, SIZE = 256 * 1024 };
    D3DKMT_QUERYSTATISTICS_MEMORY_USAGE seg_before, seg_after, grp_before, grp_after;
    D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_GROUP_INFORMATION proc_before, proc_after;
    D3DKMT_QUERYVIDEOMEMORYINFO vm = { 0 };
    D3DKMT_QUERYSTATISTICS q;
    D3DKMT_HANDLE allocs[N];
    D3DKMT_DESTROYALLOCATION2 d = { 0 };
    UINT64 limit;

    setup();
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_SEGMENT, 0, &q), STATUS_SUCCESS);
    limit = q.QueryResult.SegmentInformation.CommitLimit;
    seg_before = segment_usage0();
    grp_before = local_group_usage();
    proc_before = local_group();
    ck_assert_uint_eq(seg_before.AllocatedBytes + seg_before.FreeBytes, limit);
    ck_assert_status(kmt_test_create_allocations(device, N, SIZE, allocs, NULL), STATUS_SUCCESS);
    seg_after = segment_usage0();
    grp_after = local_group_usage();
    proc_after = local_group();
    ck_assert_uint_eq(seg_after.AllocatedBytes, seg_before.AllocatedBytes + (UINT64)N * SIZE);
    ck_assert_uint_eq(seg_after.FreeBytes, seg_before.FreeBytes - (UINT64)N * SIZE);
    ck_assert_uint_eq(grp_after.AllocatedBytes, grp_before.AllocatedBytes + (UINT64)N * SIZE);
    ck_assert_uint_eq(grp_after.FreeBytes, grp_before.FreeBytes - (UINT64)N * SIZE);
    ck_assert_uint_eq(proc_after.Usage, proc_before.Usage + (UINT64)N * SIZE);
    ck_assert_uint_eq(proc_after.Requested, proc_after.Usage);
    ck_assert_uint_eq(seg_after.StandbyBytes, 0);                /* never paged */
    ck_assert_uint_eq(proc_after.Demoted[0], 0);
    /* the process's budget and use are QueryVideoMemoryInfo's */
    vm.hAdapter = adapter;
    vm.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&vm), STATUS_SUCCESS);
    ck_assert_uint_gt(proc_after.Budget, 0);
    ck_assert_uint_eq(proc_after.Budget, vm.Budget);
    ck_assert_uint_eq(proc_after.Usage, vm.CurrentUsage);
    /* soft has no non-local segment: that group holds nothing */
    ck_assert_status(query2(D3DKMT_QUERYSTATISTICS_SEGMENT_GROUP_USAGE, 0, D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL, &q),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.SegmentGroupUsageInformation.AllocatedBytes, 0);

    d.hDevice = device;
    d.phAllocationList = allocs;
    d.AllocationCount = N;
    d.Flags.SynchronousDestroy = 1;
    ck_assert_status(D3DKMTDestroyAllocation2(&d), STATUS_SUCCESS);
    seg_after = segment_usage0();
    grp_after = local_group_usage();
    proc_after = local_group();
    ck_assert_uint_eq(seg_after.AllocatedBytes, seg_before.AllocatedBytes);
    ck_assert_uint_eq(grp_after.AllocatedBytes, grp_before.AllocatedBytes);
    ck_assert_uint_eq(proc_after.Usage, proc_before.Usage);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* The physical adapter's version strings are the registry's, cut to
 * Windows' 31 characters; its performance data QueryAdapterInfo's. */
START_TEST(physical_adapter_reports_the_adapter)
{
    D3DKMT_ADAPTERREGISTRYINFO reg;
    D3DKMT_ADAPTER_PERFDATACAPS caps = { .PhysicalAdapterIndex = 0 };
    D3DKMT_QUERYADAPTERINFO qai = { 0 };
    D3DKMT_QUERYSTATISTICS q;
    const D3DKMT_GPUVERSION *v;
    size_t i;

    setup();
    qai.hAdapter = adapter;
    qai.Type = KMTQAITYPE_ADAPTERREGISTRYINFO;
    qai.pPrivateDriverData = &reg;
    qai.PrivateDriverDataSize = sizeof(reg);
    ck_assert_status(D3DKMTQueryAdapterInfo(&qai), STATUS_SUCCESS);
    qai.Type = KMTQAITYPE_ADAPTERPERFDATA_CAPS;
    qai.pPrivateDriverData = &caps;
    qai.PrivateDriverDataSize = sizeof(caps);
    ck_assert_status(D3DKMTQueryAdapterInfo(&qai), STATUS_SUCCESS);

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PHYSICAL_ADAPTER, 0, &q), STATUS_SUCCESS);
    v = &q.QueryResult.PhysAdapterInformation.GpuVersion;
    ck_assert_uint_eq(v->PhysicalAdapterIndex, 0);
    ck_assert_uint_ne(v->GpuArchitecture[0], 0);
    for (i = 0; i + 1 < DXGK_MAX_GPUVERSION_NAME_LENGTH && reg.ChipType[i]; i++)
        ck_assert_uint_eq(v->GpuArchitecture[i], reg.ChipType[i]);
    ck_assert_uint_eq(v->GpuArchitecture[i], 0);
    for (i = 0; i + 1 < DXGK_MAX_GPUVERSION_NAME_LENGTH && reg.BiosString[i]; i++)
        ck_assert_uint_eq(v->BiosVersion[i], reg.BiosString[i]);
    ck_assert_uint_eq(v->BiosVersion[i], 0);
    ck_assert(!memcmp(&q.QueryResult.PhysAdapterInformation.AdapterPerfDataCaps, &caps, sizeof(caps)));
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("statistics2");
    TCase *t = tcase_create("statistics2");

    tcase_set_timeout(t, 30);
    tcase_add_test(t, new_types_refuse_bad_input);
    tcase_add_test(t, refused_new_query_writes_nothing);
    tcase_add_test(t, twins_equal_the_plain_types);
    tcase_add_test(t, usage_follows_the_allocations);
    tcase_add_test(t, physical_adapter_reports_the_adapter);
    suite_add_tcase(s, t);
    return kmt_test_run(s);
}
