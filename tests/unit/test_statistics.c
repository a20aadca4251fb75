/*
 * D3DKMTQueryStatistics on the software adapter: Windows' statuses for bad
 * input, and counters that follow what the test does (allocations created
 * and destroyed, command buffers submitted), per process.
 */
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_util.h"

static D3DKMT_HANDLE adapter, device;
static LUID luid;

static LUID first_luid(void)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };

    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_ge(e.NumAdapters, 1);
    return info[0].AdapterLuid;
}

static void setup(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    luid = first_luid();
}

static NTSTATUS query(D3DKMT_QUERYSTATISTICS_TYPE type, ULONG id, D3DKMT_QUERYSTATISTICS *q)
{
    memset(q, 0, sizeof(*q));
    q->Type = type;
    q->AdapterLuid = luid;
    q->QuerySegment.SegmentId = id;     /* the id of every per-object type */
    return D3DKMTQueryStatistics(q);
}

static D3DKMT_QUERYSTATISTICS_SEGMENT_INFORMATION segment0(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_SEGMENT, 0, &q), STATUS_SUCCESS);
    return q.QueryResult.SegmentInformation;
}

static D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_INFORMATION process_segment0(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT, 0, &q), STATUS_SUCCESS);
    return q.QueryResult.ProcessSegmentInformation;
}

static D3DKMT_QUERYSTATISTICS_PROCESS_NODE_INFORMATION node0(D3DKMT_QUERYSTATISTICS_TYPE type)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query(type, 0, &q), STATUS_SUCCESS);
    return type == D3DKMT_QUERYSTATISTICS_NODE ? q.QueryResult.NodeInformation.GlobalInformation
                                               : q.QueryResult.ProcessNodeInformation;
}

START_TEST(bad_input_gets_windows_status)
{
    D3DKMT_QUERYSTATISTICS q;
    D3DKMT_QUERYSTATISTICS_ADAPTER_INFORMATION info;

    setup();
    ck_assert_status(D3DKMTQueryStatistics(NULL), STATUS_INVALID_PARAMETER);
    memset(&q, 0, sizeof(q));                                    /* LUID 0: no adapter */
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_NODE2 + 1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query((D3DKMT_QUERYSTATISTICS_TYPE)0x7fffffff, 0, &q), STATUS_INVALID_PARAMETER);

    memset(&q, 0, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_ADAPTER;
    q.AdapterLuid = luid;
    q.AdapterLuid.LowPart ^= 0x5a5a;                             /* nobody's LUID */
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_PARAMETER);

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_ADAPTER, 0, &q), STATUS_SUCCESS);
    info = q.QueryResult.AdapterInformation;
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_SEGMENT, info.NbSegments, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT, ~0u, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_NODE, info.NodeCount, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_NODE, info.NodeCount, &q), STATUS_INVALID_PARAMETER);
    /* the software adapter has no VidPn source by default */
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_VIDPNSOURCE, info.VidPnSourceCount, &q),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE, info.VidPnSourceCount, &q),
                     STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(process_handle_rules)
{
    D3DKMT_QUERYSTATISTICS q;

    setup();
    memset(&q, 0, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT;
    q.AdapterLuid = luid;
    q.hProcess = (HANDLE)(intptr_t)0x1234;                       /* natively no process handle */
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_HANDLE);
    /* checked before the adapter, as QueryVideoMemoryInfo does */
    q.AdapterLuid.LowPart ^= 0x5a5a;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_HANDLE);
    q.AdapterLuid = luid;
    q.hProcess = (HANDLE)(intptr_t)-1;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_SUCCESS);
    q.hProcess = NULL;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_SUCCESS);
    /* the adapter-wide types take no process */
    q.Type = D3DKMT_QUERYSTATISTICS_SEGMENT;
    q.hProcess = (HANDLE)(intptr_t)0x1234;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(refused_query_writes_nothing)
{
    D3DKMT_QUERYSTATISTICS q;

    setup();
    memset(&q, 0xcc, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_SEGMENT;
    q.AdapterLuid = luid;
    q.hProcess = NULL;
    q.QuerySegment.SegmentId = 1000;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_INVALID_PARAMETER);
    for (size_t i = 0; i < sizeof(q.QueryResult); i++)
        ck_assert_uint_eq(((const unsigned char *)&q.QueryResult)[i], 0xcc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(adapter_counts_match_the_adapter)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_QUERYSTATISTICS q;

    setup();
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_ADAPTER, 0, &q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.AdapterInformation.NbSegments, 1);       /* soft: one UMA segment */
    ck_assert_uint_eq(q.QueryResult.AdapterInformation.NodeCount, 1);
    ck_assert_uint_eq(q.QueryResult.AdapterInformation.VidPnSourceCount, info[0].NumOfSources);
    ck_assert_uint_eq(q.QueryResult.AdapterInformation.TdrDetectedCount, 0);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER, 0, &q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.ProcessAdapterInformation.NbSegments, 1);
    ck_assert_uint_eq(q.QueryResult.ProcessAdapterInformation.NodeCount, 1);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS, 0, &q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.ProcessInformation.NodeCount, 1);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_SEGMENT, 0, &q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.SegmentInformation.Aperture, 1);          /* soft's segment */
    ck_assert_uint_gt(q.QueryResult.SegmentInformation.CommitLimit, 0);
    ck_assert_uint_eq(q.QueryResult.SegmentInformation.SegmentProperties.SegmentGroup,
                      D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(allocations_move_the_segment_counts)
{
    enum { N = 5, SIZE = 64 * 1024 };
    D3DKMT_QUERYSTATISTICS_SEGMENT_INFORMATION before, after;
    D3DKMT_QUERYSTATISTICS_PROCESS_SEGMENT_INFORMATION pbefore, pafter;
    D3DKMT_HANDLE allocs[N];
    D3DKMT_DESTROYALLOCATION2 d = { 0 };

    setup();
    before = segment0();
    pbefore = process_segment0();
    ck_assert_status(kmt_test_create_allocations(device, N, SIZE, allocs, NULL), STATUS_SUCCESS);
    after = segment0();
    pafter = process_segment0();
    ck_assert_uint_eq(after.Memory.AllocsCommitted, before.Memory.AllocsCommitted + N);
    ck_assert_uint_eq(after.Memory.AllocsResident, before.Memory.AllocsResident + N);
    ck_assert_uint_eq(after.BytesCommitted, before.BytesCommitted + (UINT64)N * SIZE);
    ck_assert_uint_eq(after.BytesResident, before.BytesResident + (UINT64)N * SIZE);
    ck_assert_uint_eq(pafter.BytesCommitted, pbefore.BytesCommitted + (UINT64)N * SIZE);
    ck_assert_uint_eq(pafter.VideoMemory.AllocsCommitted, pbefore.VideoMemory.AllocsCommitted + N);
    ck_assert_uint_eq(pafter.VideoMemory.AllocsResidentInP[0].Bytes,
                      pbefore.VideoMemory.AllocsResidentInP[0].Bytes + (UINT64)N * SIZE);

    d.hDevice = device;
    d.phAllocationList = allocs;
    d.AllocationCount = 2;
    d.Flags.SynchronousDestroy = 1;
    ck_assert_status(D3DKMTDestroyAllocation2(&d), STATUS_SUCCESS);
    after = segment0();
    ck_assert_uint_eq(after.Memory.AllocsCommitted, before.Memory.AllocsCommitted + N - 2);
    ck_assert_uint_eq(after.BytesCommitted, before.BytesCommitted + (UINT64)(N - 2) * SIZE);
    d.phAllocationList = allocs + 2;
    d.AllocationCount = N - 2;
    ck_assert_status(D3DKMTDestroyAllocation2(&d), STATUS_SUCCESS);
    after = segment0();
    pafter = process_segment0();
    ck_assert_uint_eq(after.Memory.AllocsCommitted, before.Memory.AllocsCommitted);
    ck_assert_uint_eq(after.BytesCommitted, before.BytesCommitted);
    ck_assert_uint_eq(pafter.BytesCommitted, pbefore.BytesCommitted);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static D3DKMT_QUERYSTATISTICS_ADAPTER_INFORMATION adapter_info(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_ADAPTER, 0, &q), STATUS_SUCCESS);
    return q.QueryResult.AdapterInformation;
}

static D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER_INFORMATION process_adapter_info(void)
{
    D3DKMT_QUERYSTATISTICS q;

    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER, 0, &q), STATUS_SUCCESS);
    return q.QueryResult.ProcessAdapterInformation;
}

/* Created/Destroyed count since the adapter started and never go down;
 * the process's commitment follows what is alive. */
START_TEST(allocations_move_the_adapter_counts)
{
    enum { N = 3, SIZE = 128 * 1024 };
    D3DKMT_QUERYSTATISTICS_ADAPTER_INFORMATION before, after;
    D3DKMT_QUERYSTATISTICS_PROCESS_ADAPTER_INFORMATION pbefore, pafter;
    D3DKMT_HANDLE allocs[N];
    D3DKMT_DESTROYALLOCATION2 d = { 0 };

    setup();
    before = adapter_info();
    pbefore = process_adapter_info();
    ck_assert_uint_eq(before.Flags.NumberOfMemoryGroups, 1);             /* soft: local only */
    ck_assert_uint_eq(pbefore.ClientHint, D3DKMT_CLIENTHINT_UNKNOWN);
    ck_assert_status(kmt_test_create_allocations(device, N, SIZE, allocs, NULL), STATUS_SUCCESS);
    after = adapter_info();
    pafter = process_adapter_info();
    ck_assert_uint_eq(after.Allocations.Created.Count, before.Allocations.Created.Count + N);
    ck_assert_uint_eq(after.Allocations.Created.Bytes, before.Allocations.Created.Bytes + (UINT64)N * SIZE);
    ck_assert_uint_eq(after.Allocations.Destroyed.Count, before.Allocations.Destroyed.Count);
    ck_assert_uint_eq(pafter.CommitmentData.BytesBySegmentPreference[0],
                      pbefore.CommitmentData.BytesBySegmentPreference[0] + (UINT64)N * SIZE);

    d.hDevice = device;
    d.phAllocationList = allocs;
    d.AllocationCount = N;
    d.Flags.SynchronousDestroy = 1;
    ck_assert_status(D3DKMTDestroyAllocation2(&d), STATUS_SUCCESS);
    after = adapter_info();
    pafter = process_adapter_info();
    ck_assert_uint_eq(after.Allocations.Created.Count, before.Allocations.Created.Count + N);
    ck_assert_uint_eq(after.Allocations.Destroyed.Count, before.Allocations.Destroyed.Count + N);
    ck_assert_uint_eq(after.Allocations.Destroyed.Bytes,
                      before.Allocations.Destroyed.Bytes + (UINT64)N * SIZE);
    ck_assert_uint_eq(pafter.CommitmentData.BytesBySegmentPreference[0],
                      pbefore.CommitmentData.BytesBySegmentPreference[0]);
    /* nothing is ever preempted, evicted or paged: those stay 0 */
    ck_assert_uint_eq(after.PagingFault.Evictions.Count, 0);
    ck_assert_uint_eq(after.Preparation.AllocationsTrimmed.Count, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submissions_move_the_node_counts)
{
    enum { K = 3, DELAY_US = 2000 };
    D3DKMT_QUERYSTATISTICS_PROCESS_NODE_INFORMATION before, after, pafter;
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx;

    setup();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 16384, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    before = node0(D3DKMT_QUERYSTATISTICS_NODE);
    for (UINT i = 1; i <= K; i++) {
        kmt_cmds_init(&cmds);
        kmt_cmd_delay(&cmds, DELAY_US);
        kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, i);
        ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    }
    ck_assert_status(kmt_fence_wait(device, fence.handle, K, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    /* the fence is written before the completion interrupt: wait for it too */
    for (int i = 0; i < 1000; i++) {
        after = node0(D3DKMT_QUERYSTATISTICS_NODE);
        if (after.PacketStatistics.DmaPacket[0].PacketCompleted == before.PacketStatistics.DmaPacket[0].PacketCompleted + K)
            break;
        kmt_sleep_ms(1);
    }
    ck_assert_uint_eq(after.PacketStatistics.DmaPacket[0].PacketSubmited,
                      before.PacketStatistics.DmaPacket[0].PacketSubmited + K);
    ck_assert_uint_eq(after.PacketStatistics.DmaPacket[0].PacketCompleted,
                      before.PacketStatistics.DmaPacket[0].PacketCompleted + K);
    ck_assert_uint_eq(after.PacketStatistics.QueuePacket[0].PacketSubmited,
                      before.PacketStatistics.QueuePacket[0].PacketSubmited + K);
    /* the engine ran at least the delays (RunningTime counts 100 ns) */
    ck_assert_int_ge(after.RunningTime.QuadPart - before.RunningTime.QuadPart, K * DELAY_US * 10);
    pafter = node0(D3DKMT_QUERYSTATISTICS_PROCESS_NODE);
    ck_assert_uint_eq(pafter.PacketStatistics.DmaPacket[0].PacketSubmited,
                      after.PacketStatistics.DmaPacket[0].PacketSubmited);
    ck_assert_int_ge(pafter.RunningTime.QuadPart, after.RunningTime.QuadPart);
    kmt_ring_destroy(device, &ring);
    ck_assert_status(kmt_syncobj_destroy(fence.handle), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(vidpn_sources_are_counted)
{
    D3DKMT_QUERYSTATISTICS q;

    setenv("KMTSHIM_SOFT_SOURCES", "2", 1);
    setup();
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_ADAPTER, 0, &q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.AdapterInformation.VidPnSourceCount, 2);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_VIDPNSOURCE, 1, &q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.QueryResult.VidPnSourceInformation.GlobalInformation.Frame, 0);  /* no present yet */
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE, 1, &q), STATUS_SUCCESS);
    ck_assert_status(query(D3DKMT_QUERYSTATISTICS_VIDPNSOURCE, 2, &q), STATUS_INVALID_PARAMETER);
    unsetenv("KMTSHIM_SOFT_SOURCES");
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A fork() child is another process: it starts with its own books. */
START_TEST(each_process_has_its_own_counts)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    return;                              /* the child would start library threads */
#else
    enum { N = 3, SIZE = 8192 };
    D3DKMT_HANDLE allocs[N];
    D3DKMT_QUERYSTATISTICS_SEGMENT_INFORMATION parent;
    int status;
    pid_t pid;

    setup();
    ck_assert_status(kmt_test_create_allocations(device, N, SIZE, allocs, NULL), STATUS_SUCCESS);
    parent = segment0();
    ck_assert_uint_ge(parent.Memory.AllocsCommitted, N);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        D3DKMT_HANDLE child_device = kmt_test_create_device(&adapter);
        D3DKMT_HANDLE one;
        D3DKMT_QUERYSTATISTICS_SEGMENT_INFORMATION child;

        luid = first_luid();
        child = segment0();
        if (child.Memory.AllocsCommitted != 0 || child.BytesCommitted != 0)
            _exit(1);
        if (kmt_test_create_allocations(child_device, 1, SIZE, &one, NULL))
            _exit(2);
        child = segment0();
        _exit(child.Memory.AllocsCommitted == 1 && child.BytesCommitted == SIZE ? 0 : 3);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    /* the child's allocation is not the parent's */
    ck_assert_uint_eq(segment0().Memory.AllocsCommitted, parent.Memory.AllocsCommitted);
    kmt_test_shutdown_no_leaks();
#endif
}
END_TEST

int main(void)
{
    Suite *s = suite_create("statistics");
    TCase *t = tcase_create("statistics");

    tcase_set_timeout(t, 30);
    tcase_add_test(t, bad_input_gets_windows_status);
    tcase_add_test(t, process_handle_rules);
    tcase_add_test(t, refused_query_writes_nothing);
    tcase_add_test(t, adapter_counts_match_the_adapter);
    tcase_add_test(t, allocations_move_the_segment_counts);
    tcase_add_test(t, allocations_move_the_adapter_counts);
    tcase_add_test(t, submissions_move_the_node_counts);
    tcase_add_test(t, vidpn_sources_are_counted);
    tcase_add_test(t, each_process_has_its_own_counts);
    suite_add_tcase(s, t);
    return kmt_test_run(s);
}
