/*
 * Out of memory at every allocation: each case runs one D3DKMT call again
 * and again, failing its 1st, 2nd, 3rd... allocation (fail_alloc.h: heap,
 * mappings, memfds, eventfds, threads, core and soft miniport alike) until
 * a run makes no allocation fail.  A failed call must return
 * STATUS_NO_MEMORY (STATUS_INSUFFICIENT_RESOURCES for a thread or a file
 * descriptor), write no output, and leave the core's and the miniport's
 * object counts where they were: all or nothing.  It hands out no handle
 * either: the next local and global values are the ones that were next
 * before it, as on Windows, where a refused call leaves the +0x40 sequence
 * as it was.  A call that copes with
 * the failure and succeeds must have done its whole job.  The ASan lane
 * adds that nothing leaks and nothing is touched after a free.
 */
#include <sys/mman.h>

#include "exec_util.h"
#include "fail_alloc.h"
#include "dxgkrnl/dxgkrnl.h"          /* the handle tables: what comes next */
#include "kmtshim/kmtmiracast.h"

/* Far more allocations than any one call makes: a loop that gets here
 * never stops failing. */
#define MAX_FAILURE_POINTS 400

static D3DKMT_HANDLE adapter, device;

static void setup_device(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

struct counts {
    unsigned live;
    KMT_SOFT_ESCAPE soft;
};

static struct counts counts_now(void)
{
    struct counts c = { KmtLiveObjectCount(), kmt_test_soft_stats(adapter) };

    c.soft.Stats.CommandsExecuted = 0;   /* work done is no object */
    return c;
}

static void assert_counts(const struct counts *before, const char *what, unsigned n)
{
    struct counts now = counts_now();

    ck_assert_msg(now.live == before->live, "%s, allocation %u failing: %u core objects, %u before", what,
                  n, now.live, before->live);
    ck_assert_msg(!memcmp(&now.soft, &before->soft, sizeof(now.soft)),
                  "%s, allocation %u failing: the soft miniport's counts moved (%llu allocations, "
                  "%llu resources, %llu contexts, %llu devices; %llu, %llu, %llu, %llu before)", what, n,
                  (unsigned long long)now.soft.Stats.Allocations, (unsigned long long)now.soft.Stats.Resources,
                  (unsigned long long)now.soft.Stats.Contexts, (unsigned long long)now.soft.Stats.Devices,
                  (unsigned long long)before->soft.Stats.Allocations,
                  (unsigned long long)before->soft.Stats.Resources,
                  (unsigned long long)before->soft.Stats.Contexts,
                  (unsigned long long)before->soft.Stats.Devices);
}

/* One call under test.  prepare (optional) sets up its inputs before each
 * run; after a failure `failed` checks nothing was written or lost and puts
 * back what prepare made; after a success `undo` checks the job was done
 * and undoes it.  Either way the counts must then be where they started. */
struct oom_call {
    const char *what;
    void (*prepare)(void);
    NTSTATUS (*run)(void);
    void (*failed)(void);
    void (*undo)(void);
};

/* Runs the call with each of its allocations failing in turn; returns how
 * many failure points it had. */
static unsigned each_failure(const struct oom_call *c)
{
    struct counts before = counts_now();

    for (unsigned n = 1; n < MAX_FAILURE_POINTS; n++) {
        NTSTATUS status;
        bool hit;

        D3DKMT_HANDLE next_local, next_global;

        if (c->prepare)
            c->prepare();
        next_local = hmgr_next_value(&dxgk_process.handles);
        next_global = hmgr_next_value(&dxgk_process.global_handles);
        fail_alloc_arm(n);
        status = c->run();
        hit = fail_alloc_disarm();
        if (!status) {
            c->undo();
            assert_counts(&before, c->what, n);
            if (!hit) {
                printf("# %s: %u failure points\n", c->what, n - 1);
                return n - 1;
            }
            continue;
        }
        ck_assert_msg(hit, "%s failed with 0x%08x with no allocation failing", c->what, (unsigned)status);
        ck_assert_msg(status == STATUS_NO_MEMORY || status == STATUS_INSUFFICIENT_RESOURCES,
                      "%s, allocation %u failing: 0x%08x, expected STATUS_NO_MEMORY", c->what, n,
                      (unsigned)status);
        ck_assert_msg(hmgr_next_value(&dxgk_process.handles) == next_local,
                      "%s, allocation %u failing: next handle %#x, %#x before: a refused call used one up",
                      c->what, n, hmgr_next_value(&dxgk_process.handles), next_local);
        ck_assert_msg(hmgr_next_value(&dxgk_process.global_handles) == next_global,
                      "%s, allocation %u failing: next global handle %#x, %#x before", c->what, n,
                      hmgr_next_value(&dxgk_process.global_handles), next_global);
        if (c->failed)
            c->failed();
        assert_counts(&before, c->what, n);
    }
    ck_abort_msg("%s still fails after %u allocations", c->what, MAX_FAILURE_POINTS);
    return 0;
}

#define RUN_EACH_FAILURE(...) do {                                                       \
        const struct oom_call _c = { __VA_ARGS__ };                                      \
        ck_assert_uint_ge(each_failure(&_c), 1);                                         \
    } while (0)

static void finish(void)
{
    D3DKMT_DESTROYDEVICE dd = { device };

    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}

static void assert_lockable(D3DKMT_HANDLE alloc)
{
    D3DKMT_LOCK2 lock = { device, alloc };
    D3DKMT_UNLOCK2 unlock = { device, alloc };

    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(lock.pData);
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
}

static void assert_not_lockable(D3DKMT_HANDLE alloc)
{
    D3DKMT_LOCK2 lock = { device, alloc };

    ck_assert_status(D3DKMTLock2(&lock), STATUS_INVALID_PARAMETER);
}

/* ---- process start -------------------------------------------------------------- */

/* The first call starts the process: miniports, adapters, the scheduler's
 * threads.  A start that fails leaves nothing, and the next call starts
 * afresh. */
START_TEST(process_start)
{
    unsigned n;

    kmt_test_use_miniport("soft");
    for (n = 1; n < MAX_FAILURE_POINTS; n++) {
        D3DKMT_ADAPTERINFO info[4];
        D3DKMT_ENUMADAPTERS2 e = { 4, info };
        NTSTATUS status;
        bool hit;

        fail_alloc_arm(n);
        status = D3DKMTEnumAdapters2(&e);
        hit = fail_alloc_disarm();
        if (status) {
            ck_assert_msg(hit, "start failed with 0x%08x with no allocation failing", (unsigned)status);
            ck_assert_msg(status == STATUS_NO_MEMORY || status == STATUS_INSUFFICIENT_RESOURCES,
                          "start, allocation %u failing: 0x%08x", n, (unsigned)status);
        } else {
            D3DKMT_CREATEDEVICE cd = { 0 };
            D3DKMT_DESTROYDEVICE dd;

            /* a start that coped must give a working adapter */
            ck_assert_uint_eq(e.NumAdapters, 1);
            cd.hAdapter = info[0].hAdapter;
            ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
            dd.hDevice = cd.hDevice;
            ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
        }
        kmt_test_shutdown_no_leaks();
        if (!hit)
            break;
    }
    ck_assert_uint_gt(n, 1);
    ck_assert_uint_lt(n, MAX_FAILURE_POINTS);
}
END_TEST

/* ---- adapters and devices ------------------------------------------------------- */

static void second_soft_adapter(DRIVER_INITIALIZATION_DATA *ddi)
{
    (void)ddi;
}

static D3DKMT_ADAPTERINFO enum_info[4];
static D3DKMT_ENUMADAPTERS2 enum_args;

static void enum_prepare(void)
{
    memset(enum_info, 0xa5, sizeof(enum_info));
    enum_args.NumAdapters = 4;
    enum_args.pAdapters = enum_info;
}

static NTSTATUS enum_run(void)
{
    return D3DKMTEnumAdapters2(&enum_args);
}

static void enum_failed(void)
{
    for (size_t i = 0; i < sizeof(enum_info); i++)
        ck_assert_uint_eq(((unsigned char *)enum_info)[i], 0xa5);
}

static void enum_undo(void)
{
    ck_assert_uint_eq(enum_args.NumAdapters, 2);
    for (ULONG i = 0; i < 2; i++) {
        D3DKMT_CLOSEADAPTER c = { enum_info[i].hAdapter };

        ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    }
}

/* Several adapters: the handles opened before the failing one are closed
 * and the caller's array is not written. */
START_TEST(enum_adapters_opens_all_or_none)
{
    DRIVER_INITIALIZATION_DATA soft;

    kmt_test_register_soft_variant("soft2", second_soft_adapter, &soft);
    kmt_test_use_miniport("soft,soft2");
    adapter = kmt_test_open_adapter();
    RUN_EACH_FAILURE("EnumAdapters2", enum_prepare, enum_run, enum_failed, enum_undo);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static D3DKMT_OPENADAPTERFROMLUID open_args;

static NTSTATUS open_run(void)
{
    return D3DKMTOpenAdapterFromLuid(&open_args);
}

static void open_failed(void)
{
    ck_assert_uint_eq(open_args.hAdapter, 0);
}

static void open_undo(void)
{
    D3DKMT_CLOSEADAPTER c = { open_args.hAdapter };

    ck_assert_local_handle(open_args.hAdapter);
    ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    open_args.hAdapter = 0;
}

START_TEST(open_adapter_from_luid)
{
    D3DKMT_ADAPTERINFO info[1];
    D3DKMT_ENUMADAPTERS2 e = { 1, info };

    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    adapter = info[0].hAdapter;
    open_args.AdapterLuid = info[0].AdapterLuid;
    RUN_EACH_FAILURE("OpenAdapterFromLuid", NULL, open_run, open_failed, open_undo);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static D3DKMT_CREATEDEVICE device_args;

static void device_prepare(void)
{
    memset(&device_args, 0, sizeof(device_args));
    device_args.hAdapter = adapter;
}

static NTSTATUS device_run(void)
{
    return D3DKMTCreateDevice(&device_args);
}

static void device_failed(void)
{
    ck_assert_uint_eq(device_args.hDevice, 0);
}

static void device_undo(void)
{
    D3DKMT_DESTROYDEVICE dd = { device_args.hDevice };

    ck_assert_local_handle(device_args.hDevice);
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
}

START_TEST(create_device)
{
    setup_device();
    RUN_EACH_FAILURE("CreateDevice", device_prepare, device_run, device_failed, device_undo);
    finish();
}
END_TEST

/* A device with an allocation, a resource, two contexts and a fence: its
 * destroy either takes everything or (failing) leaves it all working. */
static D3DKMT_HANDLE cascade_device, cascade_alloc;

static void cascade_prepare(void)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_HANDLE res, allocs[2];
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    struct kmt_fence fence;

    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    cascade_device = cd.hDevice;
    ck_assert_status(kmt_test_create_allocations(cascade_device, 1, 4096, &cascade_alloc, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_test_create_allocations(cascade_device, 2, 4096, allocs, &res), STATUS_SUCCESS);
    cv.hDevice = cascade_device;
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    kmt_exec_legacy_context(cascade_device, NULL);
    ck_assert_status(kmt_fence_create(cascade_device, 0, 0, &fence), STATUS_SUCCESS);
}

static NTSTATUS cascade_run(void)
{
    D3DKMT_DESTROYDEVICE dd = { cascade_device };

    return D3DKMTDestroyDevice(&dd);
}

static void cascade_failed(void)
{
    D3DKMT_LOCK2 lock = { cascade_device, cascade_alloc };
    D3DKMT_UNLOCK2 unlock = { cascade_device, cascade_alloc };

    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
    ck_assert_status(cascade_run(), STATUS_SUCCESS);
}

static void cascade_undo(void)
{
    D3DKMT_DESTROYDEVICE dd = { cascade_device };

    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_INVALID_PARAMETER);
}

START_TEST(destroy_device_with_children)
{
    setup_device();
    RUN_EACH_FAILURE("DestroyDevice", cascade_prepare, cascade_run, cascade_failed, cascade_undo);
    finish();
}
END_TEST

/* ---- allocations ---------------------------------------------------------------- */

#define ALLOCS 3
#define ALLOCS_PAST_BATCH 9             /* the thunk and the core keep 8 on the stack */

static unsigned alloc_count = ALLOCS;
static KMT_SOFT_ALLOCATION_DESC alloc_desc[ALLOCS_PAST_BATCH];
static D3DDDI_ALLOCATIONINFO2 alloc_info[ALLOCS_PAST_BATCH];
static D3DKMT_CREATEALLOCATION alloc_args;
static unsigned char runtime_data[64];
static D3DKMT_HANDLE existing_res, existing_alloc;

static void alloc_prepare(void)
{
    memset(alloc_info, 0, sizeof(alloc_info));
    memset(&alloc_args, 0, sizeof(alloc_args));
    for (int i = 0; i < (int)alloc_count; i++) {
        alloc_desc[i] = kmt_test_soft_desc(4096 << i);
        alloc_info[i].pPrivateDriverData = &alloc_desc[i];
        alloc_info[i].PrivateDriverDataSize = sizeof(alloc_desc[i]);
    }
    alloc_args.hDevice = device;
    alloc_args.NumAllocations = alloc_count;
    alloc_args.pAllocationInfo2 = alloc_info;
    alloc_args.Flags.CreateResource = 1;
    alloc_args.pPrivateRuntimeData = runtime_data;
    alloc_args.PrivateRuntimeDataSize = sizeof(runtime_data);
}

static NTSTATUS alloc_run(void)
{
    return D3DKMTCreateAllocation2(&alloc_args);
}

static void destroy_resource(D3DKMT_HANDLE res)
{
    D3DKMT_DESTROYALLOCATION2 da = { 0 };

    da.hDevice = device;
    da.hResource = res;
    ck_assert_status(D3DKMTDestroyAllocation2(&da), STATUS_SUCCESS);
}

static void alloc_failed(void)
{
    ck_assert_uint_eq(alloc_args.hResource, existing_res);
    for (int i = 0; i < (int)alloc_count; i++) {
        ck_assert_uint_eq(alloc_info[i].hAllocation, 0);
        ck_assert_uint_eq(alloc_info[i].GpuVirtualAddress, 0);
    }
    if (existing_res) {
        assert_lockable(existing_alloc);
        destroy_resource(existing_res);
    }
}

static void alloc_undo(void)
{
    for (int i = 0; i < (int)alloc_count; i++) {
        ck_assert_local_handle(alloc_info[i].hAllocation);
        ck_assert_uint_ne(alloc_info[i].GpuVirtualAddress, 0);
        assert_lockable(alloc_info[i].hAllocation);
    }
    ck_assert_local_handle(alloc_args.hResource);
    destroy_resource(alloc_args.hResource);
    for (int i = 0; i < (int)alloc_count; i++)
        assert_not_lockable(alloc_info[i].hAllocation);
    if (existing_res)
        assert_not_lockable(existing_alloc);
}

START_TEST(create_allocations_with_a_resource)
{
    setup_device();
    RUN_EACH_FAILURE("CreateAllocation2", alloc_prepare, alloc_run, alloc_failed, alloc_undo);
    finish();
}
END_TEST

/* More allocations than the stack arrays hold: the core's own arrays come
 * from the heap, and running out of memory there is one more failure. */
START_TEST(create_allocations_past_the_batch)
{
    setup_device();
    alloc_count = ALLOCS_PAST_BATCH;
    RUN_EACH_FAILURE("CreateAllocation2 of 9", alloc_prepare, alloc_run, alloc_failed, alloc_undo);
    finish();
}
END_TEST

/* Each run adds to a fresh resource of one allocation. */
static void add_prepare(void)
{
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &existing_alloc, &existing_res), STATUS_SUCCESS);
    alloc_prepare();
    alloc_args.Flags.CreateResource = 0;
    alloc_args.hResource = existing_res;
    alloc_args.pPrivateRuntimeData = NULL;
    alloc_args.PrivateRuntimeDataSize = 0;
}

/* Adding to a resource that exists: a failure leaves it as it was. */
START_TEST(add_allocations_to_a_resource)
{
    setup_device();
    RUN_EACH_FAILURE("CreateAllocation2 into a resource", add_prepare, alloc_run, alloc_failed, alloc_undo);
    finish();
}
END_TEST

static D3DKMT_HANDLE doomed[ALLOCS], doomed_res;

static void destroy_prepare(void)
{
    ck_assert_status(kmt_test_create_allocations(device, ALLOCS, 4096, doomed, &doomed_res), STATUS_SUCCESS);
}

static NTSTATUS destroy_run(void)
{
    D3DKMT_DESTROYALLOCATION2 da = { 0 };

    da.hDevice = device;
    da.hResource = doomed_res;
    return D3DKMTDestroyAllocation2(&da);
}

static void destroy_failed(void)
{
    for (int i = 0; i < ALLOCS; i++)
        assert_lockable(doomed[i]);
    ck_assert_status(destroy_run(), STATUS_SUCCESS);
}

static void destroy_undo(void)
{
    for (int i = 0; i < ALLOCS; i++)
        assert_not_lockable(doomed[i]);
}

START_TEST(destroy_a_resource)
{
    setup_device();
    RUN_EACH_FAILURE("DestroyAllocation2 of a resource", destroy_prepare, destroy_run, destroy_failed,
                     destroy_undo);
    finish();
}
END_TEST

static D3DKMT_LOCK2 lock_args;

static void lock_prepare(void)
{
    memset(&lock_args, 0, sizeof(lock_args));
    lock_args.hDevice = device;
    lock_args.hAllocation = existing_alloc;
}

static NTSTATUS lock_run(void)
{
    return D3DKMTLock2(&lock_args);
}

static void lock_failed(void)
{
    ck_assert_ptr_null(lock_args.pData);
    assert_lockable(existing_alloc);
}

static void lock_undo(void)
{
    D3DKMT_UNLOCK2 unlock = { device, existing_alloc };

    ck_assert_ptr_nonnull(lock_args.pData);
    memset(lock_args.pData, 0x3c, 4096);
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
}

START_TEST(lock)
{
    setup_device();
    ck_assert_status(kmt_test_create_allocations(device, 1, 4096, &existing_alloc, NULL), STATUS_SUCCESS);
    RUN_EACH_FAILURE("Lock2", lock_prepare, lock_run, lock_failed, lock_undo);
    finish();
}
END_TEST

/* ---- contexts ------------------------------------------------------------------- */

static D3DKMT_CREATECONTEXTVIRTUAL virtual_args;

static void virtual_prepare(void)
{
    memset(&virtual_args, 0, sizeof(virtual_args));
    virtual_args.hDevice = device;
}

static NTSTATUS virtual_run(void)
{
    return D3DKMTCreateContextVirtual(&virtual_args);
}

static void virtual_failed(void)
{
    ck_assert_uint_eq(virtual_args.hContext, 0);
}

static void virtual_undo(void)
{
    ck_assert_local_handle(virtual_args.hContext);
    ck_assert_status(kmt_exec_destroy_context(virtual_args.hContext), STATUS_SUCCESS);
}

START_TEST(create_virtual_context)
{
    setup_device();
    RUN_EACH_FAILURE("CreateContextVirtual", virtual_prepare, virtual_run, virtual_failed, virtual_undo);
    finish();
}
END_TEST

static D3DKMT_CREATECONTEXT legacy_args;

static void legacy_prepare(void)
{
    memset(&legacy_args, 0, sizeof(legacy_args));
    legacy_args.hDevice = device;
}

static NTSTATUS legacy_run(void)
{
    return D3DKMTCreateContext(&legacy_args);
}

static void legacy_failed(void)
{
    ck_assert_uint_eq(legacy_args.hContext, 0);
    ck_assert_ptr_null(legacy_args.pCommandBuffer);
    ck_assert_ptr_null(legacy_args.pAllocationList);
    ck_assert_ptr_null(legacy_args.pPatchLocationList);
}

static void legacy_undo(void)
{
    ck_assert_local_handle(legacy_args.hContext);
    ck_assert_ptr_nonnull(legacy_args.pCommandBuffer);
    memset(legacy_args.pCommandBuffer, 0, legacy_args.CommandBufferSize);
    ck_assert_status(kmt_exec_destroy_context(legacy_args.hContext), STATUS_SUCCESS);
}

START_TEST(create_legacy_context)
{
    setup_device();
    RUN_EACH_FAILURE("CreateContext", legacy_prepare, legacy_run, legacy_failed, legacy_undo);
    finish();
}
END_TEST

/* ---- synchronization and submission --------------------------------------------- */

static struct kmt_fence fence_out;

static void fence_prepare(void)
{
    memset(&fence_out, 0, sizeof(fence_out));
}

static NTSTATUS fence_run(void)
{
    return kmt_fence_create(device, 7, 0, &fence_out);
}

static void fence_undo(void)
{
    ck_assert_local_handle(fence_out.handle);
    ck_assert_uint_eq(*fence_out.cpu, 7);
    ck_assert_status(kmt_syncobj_destroy(fence_out.handle), STATUS_SUCCESS);
}

START_TEST(create_monitored_fence)
{
    setup_device();
    RUN_EACH_FAILURE("CreateSynchronizationObject2 (monitored fence)", fence_prepare, fence_run, NULL,
                     fence_undo);
    finish();
}
END_TEST

static D3DKMT_HANDLE sync_out;
static UINT sync_type;

static NTSTATUS sync_run(void)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    NTSTATUS status;

    cs.hDevice = device;
    cs.Info.Type = sync_type;
    if (sync_type == D3DDDI_SEMAPHORE) {
        cs.Info.Semaphore.MaxCount = 4;
        cs.Info.Semaphore.InitialCount = 1;
    }
    status = D3DKMTCreateSynchronizationObject2(&cs);
    sync_out = cs.hSyncObject;
    return status;
}

static void sync_failed(void)
{
    ck_assert_uint_eq(sync_out, 0);
}

static void sync_undo(void)
{
    ck_assert_local_handle(sync_out);
    ck_assert_status(kmt_syncobj_destroy(sync_out), STATUS_SUCCESS);
}

START_TEST(create_mutex_and_semaphore)
{
    setup_device();
    sync_type = D3DDDI_SYNCHRONIZATION_MUTEX;
    RUN_EACH_FAILURE("CreateSynchronizationObject2 (mutex)", NULL, sync_run, sync_failed, sync_undo);
    sync_type = D3DDDI_SEMAPHORE;
    RUN_EACH_FAILURE("CreateSynchronizationObject2 (semaphore)", NULL, sync_run, sync_failed, sync_undo);
    finish();
}
END_TEST

/* Submission, GPU signal and GPU wait on one context: a failed call queues
 * nothing, so the fence reaches exactly the values of the calls that
 * succeeded. */
static D3DKMT_HANDLE exec_ctx;
static struct kmt_ring exec_ring;
static struct kmt_fence exec_fence;
static UINT64 exec_value;

static void exec_setup(void)
{
    setup_device();
    exec_ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 1 << 20, &exec_ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &exec_fence), STATUS_SUCCESS);
    exec_value = 0;
}

static void exec_finish(void)
{
    ck_assert_status(kmt_fence_wait(device, exec_fence.handle, exec_value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(exec_fence.handle), STATUS_SUCCESS);
    kmt_ring_destroy(device, &exec_ring);
    ck_assert_status(kmt_exec_destroy_context(exec_ctx), STATUS_SUCCESS);
    finish();
}

/* Check's assertions allocate: the helpers that assert run before arming. */
static D3DGPU_VIRTUAL_ADDRESS submit_va;
static UINT submit_length;

static void submit_prepare(void)
{
    struct kmt_cmds cmds;

    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, exec_fence.gpu, exec_value + 1);
    submit_va = kmt_ring_put(&exec_ring, &cmds);
    submit_length = cmds.length;
}

static NTSTATUS submit_run(void)
{
    return kmt_submit_va(exec_ctx, submit_va, submit_length);
}

static void exec_failed(void)
{
    /* nothing was queued: signalling the next value must be what moves it */
    ck_assert_status(kmt_gpu_signal(exec_ctx, exec_fence.handle, exec_value + 1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, exec_fence.handle, ++exec_value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
}

static void exec_undo(void)
{
    ck_assert_status(kmt_fence_wait(device, exec_fence.handle, ++exec_value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*exec_fence.cpu, exec_value);
}

START_TEST(submit_command)
{
    exec_setup();
    RUN_EACH_FAILURE("SubmitCommand", submit_prepare, submit_run, exec_failed, exec_undo);
    exec_finish();
}
END_TEST

static NTSTATUS gpu_signal_run(void)
{
    return kmt_gpu_signal(exec_ctx, exec_fence.handle, exec_value + 1);
}

/* The threads behind a submission (the soft engine that runs it, the core's
 * interrupt handling on it) need no memory per job: with every allocation
 * of every other thread failing, virtual and DMA-buffer work still runs and
 * signals its fence, and the device stays ACTIVE (DxgkDdiSubmitCommand and
 * the work it queued cannot fail once the call succeeded).  The engine's
 * one allocation is its view of an allocation's memory, mapped on first
 * use: a first round, before the starving, makes those. */
START_TEST(engine_runs_without_memory)
{
    D3DKMT_CREATECONTEXT legacy;
    D3DKMT_RENDER render = { 0 };
    struct kmt_cmds cmds;
    struct kmt_buf buf;
    D3DKMT_HANDLE lctx;

    exec_setup();
    kmt_buf_create(device, 4096, &buf);
    lctx = kmt_exec_legacy_context(device, &legacy);
    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, buf.va, 64, 0x5a5a5a5a);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, exec_fence.gpu, 1);
    submit_va = kmt_ring_put(&exec_ring, &cmds);
    render.hContext = lctx;
    render.CommandLength = cmds.length;
    for (unsigned i = 0; i < 21; i++) {
        if (i == 1) {
            ck_assert_status(kmt_fence_wait(device, exec_fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
            fail_alloc_starve_other_threads(true);
        }
        ck_assert_status(kmt_submit_va(exec_ctx, submit_va, cmds.length), STATUS_SUCCESS);
        memcpy(legacy.pCommandBuffer, cmds.data, cmds.length);
        ck_assert_status(D3DKMTRender(&render), STATUS_SUCCESS);
    }
    ck_assert_status(kmt_fence_wait(device, exec_fence.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(exec_ctx, exec_fence.handle, 2), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(lctx, exec_fence.handle, 3), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, exec_fence.handle, 3, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    fail_alloc_starve_other_threads(false);
    ck_assert_uint_eq(fail_alloc_starved(), 0);      /* no other thread even asked */
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_uint_eq(((const UINT *)buf.cpu)[15], 0x5a5a5a5a);
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.CommandsExecuted, 84);
    exec_value = 3;
    ck_assert_status(kmt_exec_destroy_context(lctx), STATUS_SUCCESS);
    ck_assert_status(kmt_buf_destroy(device, &buf, 0), STATUS_SUCCESS);
    exec_finish();
}
END_TEST

START_TEST(signal_from_gpu)
{
    exec_setup();
    RUN_EACH_FAILURE("SignalSynchronizationObjectFromGpu", NULL, gpu_signal_run, exec_failed, exec_undo);
    exec_finish();
}
END_TEST

static NTSTATUS gpu_wait_run(void)
{
    return kmt_gpu_wait(exec_ctx, exec_fence.handle, exec_value);
}

static void gpu_wait_undo(void)
{
    /* the wait is satisfied already: work behind it runs */
    ck_assert_status(gpu_signal_run(), STATUS_SUCCESS);
    exec_undo();
}

START_TEST(wait_from_gpu)
{
    exec_setup();
    RUN_EACH_FAILURE("WaitForSynchronizationObjectFromGpu", NULL, gpu_wait_run, exec_failed, gpu_wait_undo);
    exec_finish();
}
END_TEST

static struct legacy_state {
    D3DKMT_HANDLE ctx;
    D3DKMT_CREATECONTEXT cc;
    struct kmt_buf buf;
} legacy;

static UINT render_length;

static void render_prepare(void)
{
    struct kmt_cmds cmds;

    kmt_cmds_init(&cmds);
    kmt_cmd_fill(&cmds, legacy.buf.va, 64, (UINT)exec_value + 1);
    memcpy(legacy.cc.pCommandBuffer, cmds.data, cmds.length);
    render_length = cmds.length;
    legacy.cc.pAllocationList[0].hAllocation = legacy.buf.handle;
    legacy.cc.pAllocationList[0].WriteOperation = 1;
}

static NTSTATUS render_run(void)
{
    D3DKMT_RENDER r = { 0 };

    r.hContext = legacy.ctx;
    r.CommandLength = render_length;
    r.AllocationCount = 1;
    return D3DKMTRender(&r);
}

static void render_done(void)
{
    D3DKMT_HANDLE ctx = legacy.ctx;

    /* a signal behind the render: the fill is done when it fires */
    ck_assert_status(kmt_gpu_signal(ctx, exec_fence.handle, exec_value + 1), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, exec_fence.handle, ++exec_value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
}

static void render_undo(void)
{
    render_done();
    ck_assert_uint_eq(((UINT *)legacy.buf.cpu)[15], (UINT)exec_value);
}

static void render_failed(void)
{
    UINT before = ((UINT *)legacy.buf.cpu)[15];

    render_done();
    ck_assert_uint_eq(((UINT *)legacy.buf.cpu)[15], before);
}

START_TEST(render)
{
    exec_setup();
    legacy.ctx = kmt_exec_legacy_context(device, &legacy.cc);
    kmt_buf_create(device, 4096, &legacy.buf);
    RUN_EACH_FAILURE("Render", render_prepare, render_run, render_failed, render_undo);
    ck_assert_status(kmt_buf_destroy(device, &legacy.buf, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_exec_destroy_context(legacy.ctx), STATUS_SUCCESS);
    exec_finish();
}
END_TEST

/* ---- Miracast ------------------------------------------------------------------- */

static KMT_MIRACAST_SESSION_DESC session;

static NTSTATUS session_run(void)
{
    memset(&session, 0, sizeof(session));
    session.hAdapter = adapter;
    return KmtMiracastStartSession(&session);
}

static void session_failed(void)
{
    ck_assert_uint_eq(session.hSession, 0);
}

static void session_undo(void)
{
    KMT_MIRACAST_SESSION_STATUS final;

    ck_assert_uint_ne(session.hSession, 0);
    ck_assert_status(KmtMiracastStopSession(session.hSession, &final), STATUS_SUCCESS);
}

START_TEST(miracast_session)
{
    setup_device();
    /* the adapter's Miracast state is made by its first session, for good */
    ck_assert_status(session_run(), STATUS_SUCCESS);
    session_undo();
    RUN_EACH_FAILURE("MiracastStartSession", NULL, session_run, session_failed, session_undo);
    finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("out_of_memory");
    TCase *start = tcase_create("start"), *objects = tcase_create("objects"), *exec = tcase_create("exec");

    tcase_add_test(start, process_start);
    tcase_add_test(start, enum_adapters_opens_all_or_none);
    tcase_add_test(start, open_adapter_from_luid);
    tcase_add_test(objects, create_device);
    tcase_add_test(objects, destroy_device_with_children);
    tcase_add_test(objects, create_allocations_with_a_resource);
    tcase_add_test(objects, create_allocations_past_the_batch);
    tcase_add_test(objects, add_allocations_to_a_resource);
    tcase_add_test(objects, destroy_a_resource);
    tcase_add_test(objects, lock);
    tcase_add_test(objects, create_virtual_context);
    tcase_add_test(objects, create_legacy_context);
    tcase_add_test(exec, create_monitored_fence);
    tcase_add_test(exec, create_mutex_and_semaphore);
    tcase_add_test(exec, submit_command);
    tcase_add_test(exec, engine_runs_without_memory);
    tcase_add_test(exec, signal_from_gpu);
    tcase_add_test(exec, wait_from_gpu);
    tcase_add_test(exec, render);
    tcase_add_test(exec, miracast_session);
    suite_add_tcase(s, start);
    suite_add_tcase(s, objects);
    suite_add_tcase(s, exec);
    return kmt_test_run(s);
}
