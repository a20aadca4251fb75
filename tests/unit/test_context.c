/*
 * Contexts on the software adapter: CreateContext, CreateContextVirtual,
 * DestroyContext, their validation and their death with the device; the
 * NODEMETADATA query they are validated against; GetDeviceState; Escape
 * with a context.
 */
#include <stdint.h>
#include <unistd.h>

#include "exec_util.h"

#define NOT_A_HANDLE 0x40fffc00u         /* well-formed, never handed out here */

static D3DKMT_HANDLE adapter, device;

static void setup_device(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static D3DKMT_CREATECONTEXTVIRTUAL virtual_desc(void)
{
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };

    cc.hDevice = device;
    return cc;
}

static D3DKMT_CREATECONTEXT legacy_desc(void)
{
    D3DKMT_CREATECONTEXT cc = { 0 };

    cc.hDevice = device;
    return cc;
}

static UINT64 soft_contexts(void)
{
    return kmt_test_soft_stats(adapter).Stats.Contexts;
}

/* A device on the adapter already open (no new adapter handle). */
static D3DKMT_HANDLE create_device_on(D3DKMT_HANDLE on)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = on;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    return cd.hDevice;
}

static NTSTATUS destroy_device(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYDEVICE dd = { h };

    return D3DKMTDestroyDevice(&dd);
}

/* ---- creation --------------------------------------------------------------- */

START_TEST(create_context_returns_legacy_buffers)
{
    D3DKMT_CREATECONTEXT cc;

    setup_device();
    cc = legacy_desc();
    ck_assert_status(D3DKMTCreateContext(&cc), STATUS_SUCCESS);
    ck_assert_local_handle(cc.hContext);
    ck_assert_ptr_nonnull(cc.pCommandBuffer);
    ck_assert_uint_eq(cc.CommandBufferSize, 64 * 1024);
    ck_assert_ptr_nonnull(cc.pAllocationList);
    ck_assert_uint_eq(cc.AllocationListSize, 256);
    ck_assert_ptr_nonnull(cc.pPatchLocationList);
    ck_assert_uint_eq(cc.PatchLocationListSize, 1024);
    ck_assert_uint_eq(cc.CommandBuffer, 0);
    /* the program writes into all of them */
    memset(cc.pCommandBuffer, 0x5a, cc.CommandBufferSize);
    memset(cc.pAllocationList, 0, cc.AllocationListSize * sizeof(D3DDDI_ALLOCATIONLIST));
    memset(cc.pPatchLocationList, 0, cc.PatchLocationListSize * sizeof(D3DDDI_PATCHLOCATIONLIST));
    ck_assert_uint_eq(soft_contexts(), 1);
    ck_assert_status(kmt_exec_destroy_context(cc.hContext), STATUS_SUCCESS);
    ck_assert_uint_eq(soft_contexts(), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_virtual_returns_handle)
{
    D3DKMT_CREATECONTEXTVIRTUAL a, b;

    setup_device();
    a = virtual_desc();
    b = virtual_desc();
    b.ClientHint = D3DKMT_CLIENTHINT_DX12;
    ck_assert_status(D3DKMTCreateContextVirtual(&a), STATUS_SUCCESS);
    ck_assert_status(D3DKMTCreateContextVirtual(&b), STATUS_SUCCESS);
    ck_assert_local_handle(a.hContext);
    ck_assert_local_handle(b.hContext);
    ck_assert_uint_ne(a.hContext, b.hContext);
    ck_assert_uint_ne(a.hContext, device);
    ck_assert_uint_eq(soft_contexts(), 2);
    ck_assert_status(kmt_exec_destroy_context(a.hContext), STATUS_SUCCESS);
    ck_assert_uint_eq(soft_contexts(), 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_null_desc)
{
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTCreateContext(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateContextVirtual(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyContext(NULL), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_bad_device)
{
    D3DKMT_HANDLE bad[4];
    D3DKMT_HANDLE dead;

    setup_device();
    dead = kmt_test_create_device(NULL);
    ck_assert_status(destroy_device(dead), STATUS_SUCCESS);
    bad[0] = 0;
    bad[1] = NOT_A_HANDLE;
    bad[2] = adapter;                    /* a handle of another type */
    bad[3] = dead;
    for (unsigned i = 0; i < 4; i++) {
        D3DKMT_CREATECONTEXT cc = legacy_desc();
        D3DKMT_CREATECONTEXTVIRTUAL cv = virtual_desc();

        cc.hDevice = bad[i];
        cv.hDevice = bad[i];
        ck_assert_status(D3DKMTCreateContext(&cc), STATUS_INVALID_PARAMETER);
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(cc.hContext, 0);
        ck_assert_uint_eq(cv.hContext, 0);
    }
    ck_assert_uint_eq(soft_contexts(), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_node_out_of_range)
{
    static const UINT nodes[] = { 1, 2, 16, 0xffff, 0xffffffffu };

    setup_device();
    for (unsigned i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
        D3DKMT_CREATECONTEXT cc = legacy_desc();
        D3DKMT_CREATECONTEXTVIRTUAL cv = virtual_desc();

        cc.NodeOrdinal = nodes[i];
        cv.NodeOrdinal = nodes[i];
        ck_assert_status(D3DKMTCreateContext(&cc), STATUS_INVALID_PARAMETER);
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    }
    ck_assert_uint_eq(soft_contexts(), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_engine_affinity)
{
    D3DKMT_CREATECONTEXTVIRTUAL cv;

    setup_device();
    /* one physical adapter: affinity 0 (any) and 1 (the first) */
    for (UINT affinity = 0; affinity <= 1; affinity++) {
        cv = virtual_desc();
        cv.EngineAffinity = affinity;
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    }
    cv = virtual_desc();
    cv.EngineAffinity = 2;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    cv.EngineAffinity = 0x80000000u;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(soft_contexts(), 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_flags)
{
    static const UINT accepted[] = { 0x01, 0x02, 0x04, 0x08, 0x20, 0x40 };
    D3DKMT_CREATECONTEXTVIRTUAL cv;
    D3DKMT_CREATECONTEXT cc;

    setup_device();
    for (unsigned i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        cv = virtual_desc();
        cv.Flags.Value = accepted[i];
        ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    }
    ck_assert_uint_eq(soft_contexts(), 6);
    /* reserved bits */
    cv = virtual_desc();
    cv.Flags.Value = 0x80;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    cv.Flags.Value = 0x80000000u;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    cc = legacy_desc();
    cc.Flags.Value = 0x100;
    ck_assert_status(D3DKMTCreateContext(&cc), STATUS_INVALID_PARAMETER);
    /* hardware queues are not re-created */
    cv.Flags.Value = 0;
    cv.Flags.HwQueueSupported = 1;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_NOT_SUPPORTED);
    ck_assert_uint_eq(soft_contexts(), 6);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_client_hint)
{
    D3DKMT_CREATECONTEXTVIRTUAL cv;

    setup_device();
    cv = virtual_desc();
    cv.ClientHint = D3DKMT_CLIENTHINT_ONEAPI_LEVEL0;   /* the last one */
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    cv.ClientHint = D3DKMT_CLIENTHINT_VULKAN;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    cv.ClientHint = D3DKMT_CLIENTHINT_MAX;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    cv.ClientHint = (D3DKMT_CLIENTHINT)0x7fffffff;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(soft_contexts(), 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(create_context_private_data)
{
    const UINT max = 128 * 1024;
    unsigned char *big = calloc(1, max + 1);
    D3DKMT_CREATECONTEXTVIRTUAL cv;
    D3DKMT_CREATECONTEXT cc;

    ck_assert_ptr_nonnull(big);
    setup_device();
    /* a pointer with size 0 is ignored; the largest blob is accepted */
    cv = virtual_desc();
    cv.pPrivateDriverData = big;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    cv.PrivateDriverDataSize = max;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    /* one byte more, a size without a pointer, a pointer no program owns */
    cv.PrivateDriverDataSize = max + 1;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    cv.pPrivateDriverData = NULL;
    cv.PrivateDriverDataSize = 16;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_INVALID_PARAMETER);
    cc = legacy_desc();
    cc.pPrivateDriverData = (void *)(uintptr_t)0x1000;
    cc.PrivateDriverDataSize = 16;
    ck_assert_status(D3DKMTCreateContext(&cc), STATUS_INVALID_PARAMETER);
    cc.pPrivateDriverData = big;
    cc.PrivateDriverDataSize = max + 1;
    ck_assert_status(D3DKMTCreateContext(&cc), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(soft_contexts(), 2);
    free(big);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- destruction --------------------------------------------------------------- */

START_TEST(destroy_context_twice)
{
    D3DKMT_HANDLE ctx, legacy;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    legacy = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(legacy), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(legacy), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(soft_contexts(), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_context_wrong_type)
{
    D3DKMT_HANDLE alloc, ctx;
    struct kmt_fence fence;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &alloc, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(0), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(NOT_A_HANDLE), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(device), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(adapter), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(alloc), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(fence.handle), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_exec_destroy_context(ctx | 1), STATUS_INVALID_PARAMETER);
    /* nothing was harmed */
    ck_assert_uint_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_status(kmt_fence_signal(device, fence.handle, 3, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*fence.cpu, 3);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 1);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(contexts_die_with_device)
{
    D3DKMT_HANDLE ctx[3], other;
    unsigned before;
    struct kmt_ring ring;
    struct kmt_cmds cmds;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    before = KmtLiveObjectCount();
    device = create_device_on(adapter);
    other = create_device_on(adapter);
    kmt_ring_create(other, 4096, &ring);
    ctx[0] = kmt_exec_virtual_context(device);
    ctx[1] = kmt_exec_virtual_context(device);
    ctx[2] = kmt_exec_legacy_context(device, NULL);
    ck_assert_uint_eq(soft_contexts(), 3);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_eq(soft_contexts(), 0);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_status(kmt_ring_submit(&ring, &ctx[i], 1, &cmds), STATUS_INVALID_PARAMETER);
        ck_assert_status(kmt_exec_destroy_context(ctx[i]), STATUS_INVALID_PARAMETER);
    }
    kmt_ring_destroy(other, &ring);
    ck_assert_status(destroy_device(other), STATUS_SUCCESS);
    ck_assert_uint_eq(KmtLiveObjectCount(), before);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_context_waits_for_its_work)
{
    struct kmt_fence fence;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 100000);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 7);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    /* pfnDestroyContextCb returns once the context's queued work ran */
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(*fence.cpu, 7);
    ck_assert_uint_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_ring_destroy(device, &ring);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(destroy_device_cancels_blocked_gpu_wait)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    struct kmt_fence gate, after;
    D3DKMT_HANDLE ctx, legacy, mutex;
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECT w = { 0 };

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    legacy = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(kmt_fence_create(device, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &after), STATUS_SUCCESS);
    /* nobody will ever signal the gate, nor release the owned mutex */
    ck_assert_status(kmt_gpu_wait(ctx, gate.handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, after.handle, 1), STATUS_SUCCESS);
    info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    info.SynchronizationMutex.InitialState = TRUE;
    ck_assert_status(kmt_syncobj_create2(device, &info, &mutex), STATUS_SUCCESS);
    w.hContext = legacy;
    w.ObjectCount = 1;
    w.ObjectHandleArray[0] = mutex;
    ck_assert_status(D3DKMTWaitForSynchronizationObject(&w), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(legacy, after.handle, 2), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, after.handle, 1, 50), STATUS_TIMEOUT);
    ck_assert_uint_eq(*after.cpu, 0);
    /* the queued work is cancelled: DestroyDevice completes */
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Contexts, 0);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Devices, 0);
    ck_assert_status(kmt_syncobj_destroy(mutex), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Cancelling a context's queue treats every signal packet alike, however
 * many there are: each one whose op has no other context to wait for fires
 * (and is freed).  The cancel used to collect at most 64 of them and drop
 * the rest on the floor: never fired, their objects never released. */
START_TEST(destroy_device_fires_every_cancelled_signal)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECT s = { 0 };
    enum { SIGNALS = 70 };
    struct kmt_fence gate;
    D3DKMT_HANDLE ctx, note;
    uint64_t count = 0;
    int fd;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &gate), STATUS_SUCCESS);
    fd = kmt_eventfd();
    info.Type = D3DDDI_CPU_NOTIFICATION;        /* an adapter object: outlives the device */
    info.CPUNotification.Event = kmt_event_handle(fd);
    ck_assert_status(kmt_syncobj_create2(device, &info, &note), STATUS_SUCCESS);
    /* everything after this wait stays queued: nobody signals the gate */
    ck_assert_status(kmt_gpu_wait(ctx, gate.handle, 1), STATUS_SUCCESS);
    s.hContext = ctx;
    s.ObjectCount = 1;
    s.ObjectHandleArray[0] = note;
    for (int i = 0; i < SIGNALS; i++)
        ck_assert_status(D3DKMTSignalSynchronizationObject(&s), STATUS_SUCCESS);
    ck_assert(!kmt_event_wait(fd, 0));
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_int_eq(read(fd, &count, sizeof(count)), (int)sizeof(count));
    ck_assert_uint_eq(count, SIGNALS);
    ck_assert_status(kmt_syncobj_destroy(note), STATUS_SUCCESS);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Wine's Windows-observed expectations (issue5-layouts.md §6, row 24). */
START_TEST(device_calls_reject_null_and_zeroed)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER ca = { 0 };

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTCreateDevice(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyDevice(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCloseAdapter(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCloseAdapter(&ca), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- NODEMETADATA ------------------------------------------------------------------ */

static NTSTATUS query_node(UINT node_and_adapter, D3DKMT_NODEMETADATA *meta, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { 0 };

    memset(meta, 0xcc, sizeof(*meta));
    meta->NodeOrdinalAndAdapterIndex = node_and_adapter;
    q.hAdapter = adapter;
    q.Type = KMTQAITYPE_NODEMETADATA;
    q.pPrivateDriverData = meta;
    q.PrivateDriverDataSize = size;
    return D3DKMTQueryAdapterInfo(&q);
}

START_TEST(node_metadata_of_the_3d_engine)
{
    static const char name[] = "soft 3D";
    D3DKMT_NODEMETADATA meta;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(query_node(0, &meta, sizeof(meta)), STATUS_SUCCESS);
    ck_assert_int_eq(meta.NodeData.EngineType, DXGK_ENGINE_TYPE_3D);
    for (unsigned i = 0; i < sizeof(name); i++)
        ck_assert_uint_eq(meta.NodeData.FriendlyName[i], (WCHAR)name[i]);
    ck_assert_uint_eq(meta.NodeData.Flags.Value, 0);
    ck_assert_uint_eq(meta.NodeData.GpuMmuSupported, TRUE);
    ck_assert_uint_eq(meta.NodeData.IoMmuSupported, FALSE);
    ck_assert_uint_eq(meta.NodeOrdinalAndAdapterIndex, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(node_metadata_out_of_range)
{
    KMT_SOFT_UMD_PRIVATE priv = { 0 };
    D3DKMT_QUERYADAPTERINFO q = { 0 };
    D3DKMT_NODEMETADATA meta;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    /* the adapter reports one node */
    q.hAdapter = adapter;
    q.Type = KMTQAITYPE_UMDRIVERPRIVATE;
    q.pPrivateDriverData = &priv;
    q.PrivateDriverDataSize = sizeof(priv);
    ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(priv.NodeCount, 1);
    ck_assert_status(query_node(1, &meta, sizeof(meta)), STATUS_INVALID_PARAMETER);
    ck_assert_status(query_node(0xffff, &meta, sizeof(meta)), STATUS_INVALID_PARAMETER);
    /* physical adapter 1 of a single-adapter GPU */
    ck_assert_status(query_node(0x10000, &meta, sizeof(meta)), STATUS_INVALID_PARAMETER);
    /* the size must be exactly D3DKMT_NODEMETADATA's */
    ck_assert_status(query_node(0, &meta, sizeof(meta) - 4), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- GetDeviceState ------------------------------------------------------------------ */

static NTSTATUS get_state(D3DKMT_HANDLE h, D3DKMT_DEVICESTATE_TYPE type, D3DKMT_GETDEVICESTATE *gs)
{
    memset(gs, 0xcc, sizeof(*gs));
    gs->hDevice = h;
    gs->StateType = type;
    if (type == D3DKMT_DEVICESTATE_PRESENT || type == D3DKMT_DEVICESTATE_PRESENT_DWM ||
        type == D3DKMT_DEVICESTATE_PRESENT_QUEUE)
        gs->PresentState.VidPnSourceId = 0;
    return D3DKMTGetDeviceState(gs);
}

START_TEST(device_state_execution_active)
{
    D3DKMT_GETDEVICESTATE gs;

    setup_device();
    ck_assert_status(get_state(device, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_SUCCESS);
    ck_assert_int_eq(gs.ExecutionState, D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_uint_eq(gs.hDevice, device);
    ck_assert_int_eq(gs.StateType, D3DKMT_DEVICESTATE_EXECUTION);
    ck_assert_status(get_state(device, D3DKMT_DEVICESTATE_RESET, &gs), STATUS_SUCCESS);
    ck_assert_uint_eq(gs.ResetState.Value, 0);
    ck_assert_status(get_state(device, D3DKMT_DEVICESTATE_PAGE_FAULT, &gs), STATUS_SUCCESS);
    ck_assert_uint_eq(gs.PageFaultState.FaultedVirtualAddress, 0);
    ck_assert_uint_eq(gs.PageFaultState.FaultedPrimitiveAPISequenceNumber, 0);
    ck_assert_uint_eq(gs.PageFaultState.FaultErrorCode, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(device_state_present_on_render_only_adapter)
{
    static const D3DKMT_DEVICESTATE_TYPE types[] = {
        D3DKMT_DEVICESTATE_PRESENT, D3DKMT_DEVICESTATE_PRESENT_DWM, D3DKMT_DEVICESTATE_PRESENT_QUEUE,
    };
    D3DKMT_GETDEVICESTATE gs;

    setenv("KMTSHIM_SOFT_SOURCES", "0", 1);
    setup_device();
    for (unsigned i = 0; i < 3; i++)
        ck_assert_status(get_state(device, types[i], &gs), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
    unsetenv("KMTSHIM_SOFT_SOURCES");
}
END_TEST

START_TEST(device_state_bad_arguments)
{
    D3DKMT_GETDEVICESTATE gs;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(D3DKMTGetDeviceState(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(get_state(0, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_INVALID_PARAMETER);
    ck_assert_status(get_state(ctx, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_INVALID_PARAMETER);
    ck_assert_status(get_state(adapter, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_INVALID_PARAMETER);
    ck_assert_status(get_state(device, (D3DKMT_DEVICESTATE_TYPE)0, &gs), STATUS_INVALID_PARAMETER);
    ck_assert_status(get_state(device, (D3DKMT_DEVICESTATE_TYPE)7, &gs), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(get_state(device, D3DKMT_DEVICESTATE_EXECUTION, &gs), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- Escape with a context --------------------------------------------------------- */

static NTSTATUS escape(D3DKMT_HANDLE dev, D3DKMT_HANDLE ctx, D3DKMT_ESCAPETYPE type, void *data, UINT size)
{
    D3DKMT_ESCAPE e = { 0 };

    e.hAdapter = adapter;
    e.hDevice = dev;
    e.hContext = ctx;
    e.Type = type;
    e.pPrivateDriverData = data;
    e.PrivateDriverDataSize = size;
    return D3DKMTEscape(&e);
}

START_TEST(escape_with_context_of_the_device)
{
    KMT_SOFT_ESCAPE stats = { .Code = KMT_SOFT_ESCAPE_GET_STATS };
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_legacy_context(device, NULL);
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, &stats, sizeof(stats)),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(stats.Stats.Contexts, 1);
    ck_assert_uint_eq(stats.Stats.Devices, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_context_rules)
{
    KMT_SOFT_ESCAPE stats = { .Code = KMT_SOFT_ESCAPE_GET_STATS };
    D3DKMT_HANDLE ctx, other, other_ctx, dead;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    other = kmt_test_create_device(NULL);
    other_ctx = kmt_exec_virtual_context(other);
    dead = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_exec_destroy_context(dead), STATUS_SUCCESS);
    /* a context comes with the device that owns it */
    ck_assert_status(escape(0, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, &stats, sizeof(stats)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, other_ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, &stats, sizeof(stats)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, dead, D3DKMT_ESCAPE_DRIVERPRIVATE, &stats, sizeof(stats)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, device, D3DKMT_ESCAPE_DRIVERPRIVATE, &stats, sizeof(stats)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(other, other_ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, &stats, sizeof(stats)),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(stats.Stats.Contexts, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(escape_size_rules)
{
    const UINT max = 128 * 1024;
    unsigned char *big = calloc(1, max + 8);
    KMT_SOFT_ESCAPE *e = (KMT_SOFT_ESCAPE *)big;
    D3DKMT_HANDLE ctx;

    ck_assert_ptr_nonnull(big);
    setup_device();
    ctx = kmt_exec_virtual_context(device);
    e->Code = KMT_SOFT_ESCAPE_GET_STATS;
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, e, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, NULL, sizeof(*e)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, e, max + 1),
                     STATUS_INVALID_PARAMETER);
    /* the core passes what it accepts on; the driver wants its exact size */
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, e, max), STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, e, sizeof(*e) - 8),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_DRIVERPRIVATE, e, sizeof(*e)), STATUS_SUCCESS);
    ck_assert_uint_eq(e->Stats.Contexts, 1);
    /* dxgkrnl's own escapes are not re-created */
    ck_assert_status(escape(device, ctx, D3DKMT_ESCAPE_VIDSCH, e, sizeof(*e)), STATUS_NOT_SUPPORTED);
    free(big);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("context");
    TCase *create = tcase_create("create");
    TCase *destroy = tcase_create("destroy");
    TCase *query = tcase_create("query");

    tcase_add_test(create, create_context_returns_legacy_buffers);
    tcase_add_test(create, create_context_virtual_returns_handle);
    tcase_add_test(create, create_context_null_desc);
    tcase_add_test(create, create_context_bad_device);
    tcase_add_test(create, create_context_node_out_of_range);
    tcase_add_test(create, create_context_engine_affinity);
    tcase_add_test(create, create_context_flags);
    tcase_add_test(create, create_context_client_hint);
    tcase_add_test(create, create_context_private_data);
    suite_add_tcase(s, create);

    tcase_set_timeout(destroy, 30);
    tcase_add_test(destroy, destroy_context_twice);
    tcase_add_test(destroy, destroy_context_wrong_type);
    tcase_add_test(destroy, contexts_die_with_device);
    tcase_add_test(destroy, destroy_context_waits_for_its_work);
    tcase_add_test(destroy, destroy_device_cancels_blocked_gpu_wait);
    tcase_add_test(destroy, destroy_device_fires_every_cancelled_signal);
    tcase_add_test(destroy, device_calls_reject_null_and_zeroed);
    suite_add_tcase(s, destroy);

    tcase_add_test(query, node_metadata_of_the_3d_engine);
    tcase_add_test(query, node_metadata_out_of_range);
    tcase_add_test(query, device_state_execution_active);
    tcase_add_test(query, device_state_present_on_render_only_adapter);
    tcase_add_test(query, device_state_bad_arguments);
    tcase_add_test(query, escape_with_context_of_the_device);
    tcase_add_test(query, escape_context_rules);
    tcase_add_test(query, escape_size_rules);
    suite_add_tcase(s, query);
    return kmt_test_run(s);
}
