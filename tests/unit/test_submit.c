/*
 * Command submission on the software adapter: SubmitCommand (virtual
 * contexts) and Render (patching contexts) running the soft engine's
 * command set asynchronously on its engine thread; GPU faults and the
 * device state they leave; allocation lifetimes tied to queued work.
 */
#include <stdatomic.h>
#include <stddef.h>

#include "exec_util.h"

#define BAD_VA 0x00007f0000000000ull       /* below 2^47, never mapped by the soft adapter */

static D3DKMT_HANDLE adapter, device;

static void setup_device(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static D3DKMT_HANDLE create_device_on(D3DKMT_HANDLE on)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = on;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    return cd.hDevice;
}

static const UINT *words(const struct kmt_buf *b, UINT64 offset)
{
    return (const UINT *)((const char *)b->cpu + offset);
}

static UINT64 commands_executed(void)
{
    return kmt_test_soft_stats(adapter).Stats.CommandsExecuted;
}

/* ---- SubmitCommand ------------------------------------------------------------ */

START_TEST(submit_fill_copy_write64)
{
    struct kmt_buf a, b;
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    D3DKMT_HANDLE ctx;
    UINT64 before;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_buf_create(device, 8192, &a);
    kmt_buf_create(device, 8192, &b);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    before = commands_executed();

    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, a.va, 4096, 0xdeadbeef);
    kmt_cmd_fill(&cmds, a.va + 4096, 4096, 0x01020304);
    kmt_cmd_copy(&cmds, b.va, a.va + 4096, 4096);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, b.va + 4096, 0x1122334455667788ull);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);

    /* read back through a fresh Lock2 of each */
    lock.hDevice = device;
    lock.hAllocation = a.handle;
    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    for (unsigned i = 0; i < 1024; i++) {
        ck_assert_uint_eq(((const UINT *)lock.pData)[i], 0xdeadbeef);
        ck_assert_uint_eq(((const UINT *)lock.pData)[1024 + i], 0x01020304);
    }
    unlock.hDevice = device;
    unlock.hAllocation = a.handle;
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
    for (unsigned i = 0; i < 1024; i++)
        ck_assert_uint_eq(words(&b, 0)[i], 0x01020304);
    ck_assert_uint_eq(*(const UINT64 *)words(&b, 4096), 0x1122334455667788ull);
    for (unsigned i = 2; i < 1024; i++)
        ck_assert_uint_eq(words(&b, 4096)[i], 0);
    ck_assert_uint_eq(commands_executed() - before, 5);
    ck_assert_uint_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_copy_overlapping)
{
    struct kmt_buf a;
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx;
    UINT expect[32];

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_buf_create(device, 4096, &a);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    for (unsigned i = 0; i < 32; i++)
        ((UINT *)a.cpu)[i] = i + 1;
    /* the documented COPY may overlap: memmove semantics */
    for (unsigned i = 0; i < 32; i++)
        expect[i] = i < 2 ? i + 1 : i - 1;
    kmt_cmds_init(&cmds);
    kmt_cmd_copy(&cmds, a.va + 8, a.va, 30 * 4);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    for (unsigned i = 0; i < 32; i++)
        ck_assert_uint_eq(((const UINT *)a.cpu)[i], expect[i]);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_runs_asynchronously)
{
    struct kmt_buf a;
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_buf_create(device, 4096, &a);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    kmt_cmd_fill(&cmds, a.va, 4096, 0xabababab);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    /* the call returned while the engine is still busy: nothing written yet */
    ck_assert_uint_eq(words(&a, 0)[0], 0);
    ck_assert_uint_eq(words(&a, 0)[1023], 0);
    ck_assert_uint_eq(*fence.cpu, 0);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, 0), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(words(&a, 0)[0], 0xabababab);
    ck_assert_uint_eq(words(&a, 0)[1023], 0xabababab);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_keeps_order_on_a_context)
{
    struct kmt_buf a;
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds first, second;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_buf_create(device, 4096, &a);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&first);
    kmt_cmd_delay(&first, 50000);
    kmt_cmd_fence(&first, KMT_SOFT_OP_WRITE64, a.va, 1);
    kmt_cmds_init(&second);
    kmt_cmd_fence(&second, KMT_SOFT_OP_WRITE64, a.va, 2);
    kmt_cmd_fence(&second, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &first), STATUS_SUCCESS);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &second), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*(const UINT64 *)a.cpu, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_broadcast_runs_on_every_context)
{
    struct kmt_ring ring;
    struct kmt_fence f1, f2;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx[2];
    UINT64 before;

    setup_device();
    ctx[0] = kmt_exec_virtual_context(device);
    ctx[1] = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f2), STATUS_SUCCESS);
    before = commands_executed();
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    kmt_cmd_nop(&cmds);
    kmt_cmd_nop(&cmds);
    ck_assert_status(kmt_ring_submit(&ring, ctx, 2, &cmds), STATUS_SUCCESS);
    /* each context signals once its copy completed */
    ck_assert_status(kmt_gpu_signal(ctx[0], f1.handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx[1], f2.handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f1.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f2.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(commands_executed() - before, 6);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_broadcast_rules)
{
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_SUBMITCOMMAND sc = { 0 };
    D3DKMT_HANDLE ctx, other_ctx, pair[2];
    UINT64 before;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    other_ctx = kmt_exec_virtual_context(create_device_on(adapter));
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    before = commands_executed();

    sc.Commands = kmt_ring_put(&ring, &cmds);
    sc.CommandLength = cmds.length;
    for (unsigned i = 0; i < D3DDDI_MAX_BROADCAST_CONTEXT; i++)
        sc.BroadcastContext[i] = ctx;
    sc.BroadcastContextCount = 0;
    ck_assert_status(D3DKMTSubmitCommand(&sc), STATUS_INVALID_PARAMETER);
    sc.BroadcastContextCount = D3DDDI_MAX_BROADCAST_CONTEXT + 1;
    ck_assert_status(D3DKMTSubmitCommand(&sc), STATUS_INVALID_PARAMETER);
    /* all contexts of one device, all valid: else nothing runs anywhere */
    pair[0] = ctx;
    pair[1] = other_ctx;
    ck_assert_status(kmt_ring_submit(&ring, pair, 2, &cmds), STATUS_INVALID_PARAMETER);
    pair[1] = 0x40fffc00u;
    ck_assert_status(kmt_ring_submit(&ring, pair, 2, &cmds), STATUS_INVALID_PARAMETER);
    pair[1] = device;
    ck_assert_status(kmt_ring_submit(&ring, pair, 2, &cmds), STATUS_INVALID_PARAMETER);

    ck_assert_status(kmt_gpu_signal(ctx, fence.handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(commands_executed(), before);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_argument_rules)
{
    unsigned char data[16] = { 0 };
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_SUBMITCOMMAND sc = { 0 }, bad;
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    sc.Commands = kmt_ring_put(&ring, &cmds);
    sc.CommandLength = cmds.length;
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = ctx;

    ck_assert_status(D3DKMTSubmitCommand(NULL), STATUS_INVALID_PARAMETER);
    bad = sc;
    bad.Commands = 0;
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    bad = sc;
    bad.CommandLength = 0;
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    bad = sc;
    memset(&bad.Flags, 0xff, sizeof(bad.Flags));
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    bad = sc;
    bad.NumPrimaries = D3DDDI_MAX_WRITTEN_PRIMARIES + 1;
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    bad = sc;
    bad.PrivateDriverDataSize = sizeof(data);
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    bad.pPrivateDriverData = data;
    bad.PrivateDriverDataSize = 128 * 1024 + 1;
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    bad = sc;
    bad.BroadcastContext[0] = 0;
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_INVALID_PARAMETER);
    /* the same with valid private data goes through */
    bad = sc;
    bad.pPrivateDriverData = data;
    bad.PrivateDriverDataSize = sizeof(data);
    ck_assert_status(D3DKMTSubmitCommand(&bad), STATUS_SUCCESS);
    ck_assert_status(D3DKMTSubmitCommand(&sc), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_null_rendering_skips_the_commands)
{
    struct kmt_buf a;
    struct kmt_ring ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds, signal;
    D3DKMT_SUBMITCOMMAND sc = { 0 };
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    kmt_buf_create(device, 4096, &a);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, a.va, 4096, 0x77777777);
    sc.Commands = kmt_ring_put(&ring, &cmds);
    sc.CommandLength = cmds.length;
    sc.Flags.NullRendering = 1;
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = ctx;
    ck_assert_status(D3DKMTSubmitCommand(&sc), STATUS_SUCCESS);
    kmt_cmds_init(&signal);
    kmt_cmd_fence(&signal, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &signal), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(words(&a, 0)[0], 0);
    ck_assert_uint_eq(words(&a, 0)[1023], 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(submit_on_legacy_context_is_refused)
{
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE legacy;

    setup_device();
    legacy = kmt_exec_legacy_context(device, NULL);
    kmt_ring_create(device, 4096, &ring);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    /* patching contexts submit with Render */
    ck_assert_status(kmt_ring_submit(&ring, &legacy, 1, &cmds), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- GPU faults ------------------------------------------------------------------ */

/* Submits `cmds` on a new context of `dev` and returns once the device
 * faulted: its monitored fences jump to the maximum value then. */
static void submit_and_fault(D3DKMT_HANDLE dev, const struct kmt_cmds *cmds, struct kmt_ring *ring)
{
    struct kmt_fence canary;
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(dev);

    ck_assert_status(kmt_fence_create(dev, 0, 0, &canary), STATUS_SUCCESS);
    ck_assert_status(kmt_ring_submit(ring, &ctx, 1, cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(dev, canary.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*canary.cpu, UINT64_MAX);
}

START_TEST(page_fault_sets_device_state)
{
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_GETDEVICESTATE gs = { 0 };

    setup_device();
    kmt_ring_create(device, 4096, &ring);
    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, BAD_VA + 0x40, 64, 1);
    submit_and_fault(device, &cmds, &ring);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    gs.hDevice = device;
    gs.StateType = D3DKMT_DEVICESTATE_PAGE_FAULT;
    ck_assert_status(D3DKMTGetDeviceState(&gs), STATUS_SUCCESS);
    ck_assert_uint_eq(gs.PageFaultState.FaultedVirtualAddress, BAD_VA + 0x40);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(page_fault_on_command_buffer_address)
{
    struct kmt_fence canary;
    D3DKMT_GETDEVICESTATE gs = { 0 };
    D3DKMT_HANDLE ctx;

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &canary), STATUS_SUCCESS);
    /* the engine reads the commands from GPU memory when they run */
    ck_assert_status(kmt_submit_va(ctx, BAD_VA, 64), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, canary.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    gs.hDevice = device;
    gs.StateType = D3DKMT_DEVICESTATE_PAGE_FAULT;
    ck_assert_status(D3DKMTGetDeviceState(&gs), STATUS_SUCCESS);
    ck_assert_uint_eq(gs.PageFaultState.FaultedVirtualAddress, BAD_VA);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(faulted_device_refuses_work)
{
    struct kmt_fence keep, fence;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE ctx, legacy;
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_RENDER r = { 0 };

    setup_device();
    ctx = kmt_exec_virtual_context(device);
    legacy = kmt_exec_legacy_context(device, NULL);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 5, 0, &fence), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 5, 0x40 /* NoSignalMaxValueOnTdr */, &keep), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, BAD_VA, 1);
    submit_and_fault(device, &cmds, &ring);

    /* TDR rule: fences jump to the maximum unless NoSignalMaxValueOnTdr */
    ck_assert_uint_eq(*fence.cpu, UINT64_MAX);
    ck_assert_uint_eq(*keep.cpu, 5);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_DEVICE_REMOVED);
    r.hContext = legacy;
    ck_assert_status(D3DKMTRender(&r), STATUS_DEVICE_REMOVED);
    ck_assert_status(kmt_gpu_signal(ctx, keep.handle, 6), STATUS_DEVICE_REMOVED);
    ck_assert_status(kmt_gpu_wait(ctx, keep.handle, 6), STATUS_DEVICE_REMOVED);
    cv.hDevice = device;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_DEVICE_REMOVED);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(fault_stays_on_its_device)
{
    struct kmt_ring bad_ring, ring;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE other, ctx;

    setup_device();
    other = create_device_on(adapter);
    ctx = kmt_exec_virtual_context(other);
    kmt_ring_create(device, 4096, &bad_ring);
    kmt_ring_create(other, 4096, &ring);
    ck_assert_status(kmt_fence_create(other, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_copy(&cmds, ring.buf.va, BAD_VA, 8);
    submit_and_fault(device, &cmds, &bad_ring);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    ck_assert_int_eq(kmt_exec_state(other), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_uint_eq(*fence.cpu, 0);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(other, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*fence.cpu, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* "failsubmit": the software miniport, whose DxgkDdiSubmitCommandVirtual
 * refuses the next submission once armed (a driver that lost a command
 * buffer: Windows bugchecks, kmtshim faults the submitting device). */
static DRIVER_INITIALIZATION_DATA fs_soft;
static atomic_bool fs_fail_next;

static NTSTATUS APIENTRY fs_submit_virtual(HANDLE hAdapter, const DXGKARG_SUBMITCOMMANDVIRTUAL *args)
{
    if (atomic_exchange(&fs_fail_next, false))
        return STATUS_UNSUCCESSFUL;
    return fs_soft.DxgkDdiSubmitCommandVirtual(hAdapter, args);
}

static void failsubmit_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiSubmitCommandVirtual = fs_submit_virtual;
}

/* A refused submission faults its own device and completes nothing else:
 * another device's command buffer, still running on the engine ahead of
 * it, is not taken for done (its signal waits for it, and the allocations
 * it uses stay referenced). */
START_TEST(failed_submission_completes_no_earlier_work)
{
    struct kmt_ring ring, oring;
    struct kmt_fence gate, done;
    struct kmt_cmds cmds;
    D3DKMT_HANDLE other, ctx, octx;

    /* the engine waits on a gate only the test opens: no timing involved,
     * and no TDR on a machine so loaded the test thread stalls for seconds */
    setenv("KMTSHIM_TDR_DELAY", "0", 1);
    kmt_test_register_soft_variant("failsubmit", failsubmit_patch, &fs_soft);
    kmt_test_use_miniport("failsubmit");
    device = kmt_test_create_device(&adapter);
    other = create_device_on(adapter);
    ctx = kmt_exec_virtual_context(device);
    octx = kmt_exec_virtual_context(other);
    kmt_ring_create(device, 4096, &ring);
    kmt_ring_create(other, 4096, &oring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    /* work on the engine until the gate opens, and a signal behind it */
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WAIT_FENCE, gate.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, done.handle, 1), STATUS_SUCCESS);
    /* the other device's submission is refused by the driver */
    atomic_store(&fs_fail_next, true);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    ck_assert_status(kmt_ring_submit(&oring, &octx, 1, &cmds), STATUS_SUCCESS);
    ck_assert(!atomic_load(&fs_fail_next));
    ck_assert_int_eq(kmt_exec_state(other), D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    /* the first device's work still runs: its signal has not fired */
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, 200), STATUS_TIMEOUT);
    ck_assert_uint_eq(*done.cpu, 0);
    ck_assert_status(kmt_fence_signal(device, gate.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*done.cpu, 1);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    /* the refused packet retired too: its context can be destroyed */
    ck_assert_status(kmt_exec_destroy_context(octx), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
    unsetenv("KMTSHIM_TDR_DELAY");
}
END_TEST

START_TEST(bad_commands_are_dma_faults)
{
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    D3DKMT_GETDEVICESTATE gs = { 0 };
    D3DKMT_HANDLE dev;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (unsigned kind = 0; kind < 5; kind++) {
        dev = create_device_on(adapter);
        kmt_ring_create(dev, 4096, &ring);
        kmt_cmds_init(&cmds);
        kmt_cmd_nop(&cmds);
        switch (kind) {
        case 0: kmt_cmd_raw(&cmds, 7, 8); break;                        /* unknown opcode */
        case 1: kmt_cmd_raw(&cmds, 0xffffffffu, 16); break;
        case 2: kmt_cmd_fill(&cmds, ring.buf.va + 2048, 6, 1); break;   /* Bytes not a multiple of 4 */
        case 3: kmt_cmd_raw(&cmds, KMT_SOFT_OP_FILL, 16); break;        /* shorter than a FILL */
        case 4: kmt_cmd_raw(&cmds, KMT_SOFT_OP_NOP, 8);                 /* a torn stream */
                cmds.length -= 4;
                break;
        }
        submit_and_fault(dev, &cmds, &ring);
        ck_assert_msg(kmt_exec_state(dev) == D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT, "case %u", kind);
        gs.hDevice = dev;
        gs.StateType = D3DKMT_DEVICESTATE_PAGE_FAULT;
        ck_assert_status(D3DKMTGetDeviceState(&gs), STATUS_SUCCESS);
        ck_assert_uint_eq(gs.PageFaultState.FaultedVirtualAddress, 0);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- Render ------------------------------------------------------------------------ */

struct legacy {
    D3DKMT_HANDLE ctx;
    D3DKMT_CREATECONTEXT cc;
};

static void legacy_create(struct legacy *l)
{
    l->ctx = kmt_exec_legacy_context(device, &l->cc);
}

/* Copies the stream into the context's command buffer and renders it. */
static NTSTATUS legacy_render(struct legacy *l, const struct kmt_cmds *cmds, UINT allocations,
                              UINT patches, D3DKMT_RENDER *out)
{
    D3DKMT_RENDER r = { 0 };
    NTSTATUS status;

    memcpy(l->cc.pCommandBuffer, cmds->data, cmds->length);
    r.hContext = l->ctx;
    r.CommandLength = cmds->length;
    r.AllocationCount = allocations;
    r.PatchLocationCount = patches;
    status = D3DKMTRender(&r);
    if (out)
        *out = r;
    return status;
}

static void legacy_patch(struct legacy *l, UINT slot, UINT alloc_index, UINT alloc_offset, UINT patch_offset)
{
    D3DDDI_PATCHLOCATIONLIST *p = &l->cc.pPatchLocationList[slot];

    memset(p, 0, sizeof(*p));
    p->AllocationIndex = alloc_index;
    p->AllocationOffset = alloc_offset;
    p->PatchOffset = patch_offset;
}

static void legacy_allocation(struct legacy *l, UINT slot, D3DKMT_HANDLE h, bool write)
{
    l->cc.pAllocationList[slot].hAllocation = h;
    l->cc.pAllocationList[slot].Value = 0;
    l->cc.pAllocationList[slot].WriteOperation = write;
}

START_TEST(render_writes_through_patched_address)
{
    struct legacy l;
    struct kmt_buf x;
    struct kmt_fence fence;
    struct kmt_cmds cmds;
    D3DKMT_RENDER r;

    setup_device();
    legacy_create(&l);
    kmt_buf_create(device, 4096, &x);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, 0 /* patched */, 64, 0x51515151);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    legacy_allocation(&l, 0, x.handle, true);
    legacy_patch(&l, 0, 0, 128, offsetof(KMT_SOFT_CMD_FILL, DstVa));
    ck_assert_status(legacy_render(&l, &cmds, 1, 1, &r), STATUS_SUCCESS);
    /* the same buffers serve the next batch */
    ck_assert_ptr_eq(r.pNewCommandBuffer, l.cc.pCommandBuffer);
    ck_assert_uint_eq(r.NewCommandBufferSize, 64 * 1024);
    ck_assert_ptr_eq(r.pNewAllocationList, l.cc.pAllocationList);
    ck_assert_uint_eq(r.NewAllocationListSize, 256);
    ck_assert_ptr_eq(r.pNewPatchLocationList, l.cc.pPatchLocationList);
    ck_assert_uint_eq(r.NewPatchLocationListSize, 1024);
    ck_assert_uint_le(r.QueuedBufferCount, 1);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    for (unsigned i = 0; i < 1024; i++)
        ck_assert_uint_eq(words(&x, 0)[i], i >= 32 && i < 48 ? 0x51515151 : 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(render_snapshots_the_command_buffer)
{
    struct legacy l;
    struct kmt_buf x;
    struct kmt_fence fence;
    struct kmt_cmds cmds;

    setup_device();
    legacy_create(&l);
    kmt_buf_create(device, 4096, &x);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fence), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 100000);
    kmt_cmd_fill(&cmds, 0, 4, 0x11111111);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, fence.gpu, 1);
    legacy_allocation(&l, 0, x.handle, true);
    legacy_patch(&l, 0, 0, 0, sizeof(KMT_SOFT_CMD_DELAY) + offsetof(KMT_SOFT_CMD_FILL, DstVa));
    ck_assert_status(legacy_render(&l, &cmds, 1, 1, NULL), STATUS_SUCCESS);
    /* the program reuses its buffer at once; the GPU runs what was rendered */
    memset(l.cc.pCommandBuffer, 0xee, cmds.length);
    ck_assert_status(kmt_fence_wait(device, fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(words(&x, 0)[0], 0x11111111);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(render_argument_rules)
{
    struct legacy l;
    struct kmt_buf x, foreign;
    struct kmt_cmds cmds;
    D3DKMT_RENDER r = { 0 }, bad;
    D3DKMT_HANDLE ctx, other;

    setup_device();
    legacy_create(&l);
    ctx = kmt_exec_virtual_context(device);
    other = create_device_on(adapter);
    kmt_buf_create(device, 4096, &x);
    kmt_buf_create(other, 4096, &foreign);
    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, 0, 4, 1);
    memcpy(l.cc.pCommandBuffer, cmds.data, cmds.length);
    legacy_allocation(&l, 0, x.handle, true);
    legacy_patch(&l, 0, 0, 0, offsetof(KMT_SOFT_CMD_FILL, DstVa));
    r.hContext = l.ctx;
    r.CommandLength = cmds.length;
    r.AllocationCount = 1;
    r.PatchLocationCount = 1;

    ck_assert_status(D3DKMTRender(NULL), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.hContext = ctx;                              /* a virtual context */
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad.hContext = device;
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.CommandOffset = 64 * 1024 - 8;               /* runs past the buffer */
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.AllocationCount = 257;
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.PatchLocationCount = 1025;
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.Flags.PresentRedirected = 1;
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad = r;
    bad.BroadcastContextCount = 1;
    bad.BroadcastContext[0] = ctx;
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    bad.BroadcastContextCount = 2;
    bad.BroadcastContext[0] = l.ctx;
    bad.BroadcastContext[1] = l.ctx;
    ck_assert_status(D3DKMTRender(&bad), STATUS_INVALID_PARAMETER);
    /* allocation list entries: unknown handle, another device's allocation */
    legacy_allocation(&l, 0, 0x40fffc00u, true);
    ck_assert_status(D3DKMTRender(&r), STATUS_INVALID_HANDLE);
    legacy_allocation(&l, 0, foreign.handle, true);
    ck_assert_status(D3DKMTRender(&r), STATUS_INVALID_HANDLE);
    /* the driver checks the patch list */
    legacy_allocation(&l, 0, x.handle, true);
    legacy_patch(&l, 0, 1, 0, offsetof(KMT_SOFT_CMD_FILL, DstVa));
    ck_assert_status(D3DKMTRender(&r), STATUS_INVALID_PARAMETER);
    legacy_patch(&l, 0, 0, 0, cmds.length);
    ck_assert_status(D3DKMTRender(&r), STATUS_INVALID_PARAMETER);
    /* and a good one after all that */
    legacy_patch(&l, 0, 0, 0, offsetof(KMT_SOFT_CMD_FILL, DstVa));
    ck_assert_status(D3DKMTRender(&r), STATUS_SUCCESS);
    bad = r;
    bad.BroadcastContextCount = 1;
    bad.BroadcastContext[0] = l.ctx;
    ck_assert_status(D3DKMTRender(&bad), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(l.ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(words(&x, 0)[0], 1);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A Render whose GPU work waits on `gate` first, then does `body`, then
 * signals `done` to 1. */
static void render_gated(struct legacy *l, const struct kmt_fence *gate, const struct kmt_fence *done,
                         D3DKMT_HANDLE alloc, bool fill_it)
{
    struct kmt_cmds cmds;
    UINT patches = 0;

    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WAIT_FENCE, gate->gpu, 1);
    if (fill_it) {
        legacy_patch(l, 0, 0, 0, cmds.length + offsetof(KMT_SOFT_CMD_FILL, DstVa));
        kmt_cmd_fill(&cmds, 0, 4096, 0x42424242);
        patches = 1;
    }
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, done->gpu, 1);
    legacy_allocation(l, 0, alloc, fill_it);
    ck_assert_status(legacy_render(l, &cmds, 1, patches, NULL), STATUS_SUCCESS);
}

START_TEST(render_reference_keeps_destroyed_allocation)
{
    struct kmt_fence gate, done;
    struct legacy l;
    struct kmt_buf x;
    D3DKMT_LOCK lock = { 0 };

    setup_device();
    legacy_create(&l);
    kmt_buf_create(device, 4096, &x);
    ck_assert_status(kmt_fence_create(device, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    render_gated(&l, &gate, &done, x.handle, true);

    /* queued work references it: a CPU lock that may not wait is refused */
    lock.hDevice = device;
    lock.hAllocation = x.handle;
    lock.Flags.DonotWait = 1;
    ck_assert_status(D3DKMTLock(&lock), STATUS_GRAPHICS_ALLOCATION_BUSY);
    /* the default DestroyAllocation2: the handle goes, the memory stays */
    ck_assert_status(kmt_buf_destroy(device, &x, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 1);
    ck_assert_status(D3DKMTLock(&lock), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_fence_signal(device, gate.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    /* the GPU wrote into live memory, then the memory went */
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_uint_eq(kmt_soft_stat_wait(adapter, KMT_SOFT_STAT(Allocations), 0, KMT_EXEC_WAIT_MS), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(render_assume_not_in_use_reclaims_at_once)
{
    struct kmt_fence gate, done;
    struct legacy l;
    struct kmt_buf x;

    setup_device();
    legacy_create(&l);
    kmt_buf_create(device, 4096, &x);
    ck_assert_status(kmt_fence_create(device, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    /* listed in the allocation list, never touched by the commands */
    render_gated(&l, &gate, &done, x.handle, false);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 1);
    ck_assert_status(kmt_buf_destroy(device, &x, 1 /* AssumeNotInUse */), STATUS_SUCCESS);
    /* the GPU is still held at the gate: the memory went regardless */
    ck_assert_uint_eq(*done.cpu, 0);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 0);
    ck_assert_status(kmt_fence_signal(device, gate.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, done.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(render_synchronous_destroy_waits_for_the_gpu)
{
    struct kmt_fence done;
    struct legacy l;
    struct kmt_buf x;
    struct kmt_cmds cmds;

    setup_device();
    legacy_create(&l);
    kmt_buf_create(device, 4096, &x);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 100000);
    legacy_patch(&l, 0, 0, 0, cmds.length + offsetof(KMT_SOFT_CMD_FILL, DstVa));
    kmt_cmd_fill(&cmds, 0, 4096, 9);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, done.gpu, 1);
    legacy_allocation(&l, 0, x.handle, true);
    ck_assert_status(legacy_render(&l, &cmds, 1, 1, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_buf_destroy(device, &x, 2 /* SynchronousDestroy */), STATUS_SUCCESS);
    /* returned only after the GPU finished with it and the driver freed it */
    ck_assert_uint_eq(*done.cpu, 1);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.Allocations, 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(render_lock_waits_for_the_gpu)
{
    struct kmt_fence gate, done;
    struct legacy l;
    struct kmt_buf x;
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };

    setup_device();
    legacy_create(&l);
    kmt_buf_create(device, 4096, &x);
    ck_assert_status(kmt_fence_create(device, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    render_gated(&l, &gate, &done, x.handle, true);
    /* open the gate late; Lock2 must wait until the FILL ran */
    ck_assert_status(kmt_fence_signal(device, gate.handle, 1, 0), STATUS_SUCCESS);
    lock.hDevice = device;
    lock.hAllocation = x.handle;
    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    ck_assert_uint_eq(((const UINT *)lock.pData)[1023], 0x42424242);
    unlock.hDevice = device;
    unlock.hAllocation = x.handle;
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(render_on_virtual_context_is_refused)
{
    D3DKMT_RENDER r = { 0 };

    setup_device();
    r.hContext = kmt_exec_virtual_context(device);
    r.CommandLength = 8;
    ck_assert_status(D3DKMTRender(&r), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("submit");
    TCase *submit = tcase_create("submit");
    TCase *fault = tcase_create("fault");
    TCase *render = tcase_create("render");

    tcase_set_timeout(submit, 30);
    tcase_add_test(submit, submit_fill_copy_write64);
    tcase_add_test(submit, submit_copy_overlapping);
    tcase_add_test(submit, submit_runs_asynchronously);
    tcase_add_test(submit, submit_keeps_order_on_a_context);
    tcase_add_test(submit, submit_broadcast_runs_on_every_context);
    tcase_add_test(submit, submit_broadcast_rules);
    tcase_add_test(submit, submit_argument_rules);
    tcase_add_test(submit, submit_null_rendering_skips_the_commands);
    tcase_add_test(submit, submit_on_legacy_context_is_refused);
    suite_add_tcase(s, submit);

    tcase_set_timeout(fault, 30);
    tcase_add_test(fault, page_fault_sets_device_state);
    tcase_add_test(fault, page_fault_on_command_buffer_address);
    tcase_add_test(fault, faulted_device_refuses_work);
    tcase_add_test(fault, fault_stays_on_its_device);
    tcase_add_test(fault, bad_commands_are_dma_faults);
    tcase_add_test(fault, failed_submission_completes_no_earlier_work);
    suite_add_tcase(s, fault);

    tcase_set_timeout(render, 30);
    tcase_add_test(render, render_writes_through_patched_address);
    tcase_add_test(render, render_snapshots_the_command_buffer);
    tcase_add_test(render, render_argument_rules);
    tcase_add_test(render, render_reference_keeps_destroyed_allocation);
    tcase_add_test(render, render_assume_not_in_use_reclaims_at_once);
    tcase_add_test(render, render_synchronous_destroy_waits_for_the_gpu);
    tcase_add_test(render, render_lock_waits_for_the_gpu);
    tcase_add_test(render, render_on_virtual_context_is_refused);
    suite_add_tcase(s, render);
    return kmt_test_run(s);
}
