/*
 * Submission on i915 through the D3DKMT API, over the fake kernel
 * (fake_drm.c): the fake i915 device is listed with a render node that
 * opens the fake again, so the miniport discovers and drives it through
 * its ioctls.  Allocations get GPU virtual addresses; a command buffer is a
 * batch of GPU commands named by its GPU VA; the fake runs MI_STORE_DATA_IMM
 * at the EXECBUFFER2 and signals the timeline points, so what a batch
 * stored is read back with Lock.  Every case ends with nothing left in the
 * miniport or the fake kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <xf86drm.h>
#include <i915_drm.h>

#include "drm_test.h"
#include "exec_util.h"
#include "fake_drm.h"

#define MI_BATCH_BUFFER_END (0x0au << 23)
#define MI_STORE_DWORD (0x20u << 23 | 2u)           /* MI_STORE_DATA_IMM, one dword, PPGTT */
#define PAGE 4096u

static D3DKMT_HANDLE adapter;

static void start_config(const struct fake_drm_config *c)
{
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL };
    struct drm_test_adapter a[DRM_TEST_MAX];
    char path[64];

    ck_assert_int_ge(fake_drm_open(c), 0);
    ck_assert_int_eq(fake_drm_device_path(path, sizeof(path)), 0);
    dev.render_node = path;
    fake_drm_set_devices(&dev, 1, "i915");
    kmt_test_use_miniport("drm");
    ck_assert_uint_eq(drm_test_adapters(a, DRM_TEST_MAX), 1);
    adapter = a[0].handle;
}

static void start(bool discrete)
{
    const struct fake_drm_config c = { .driver = FAKE_I915, .has_llc = true, .timelines = true, .discrete = discrete };

    start_config(&c);
}

/* Nothing left: the miniport's books, the fake kernel's, the core's. */
static void finish(void)
{
    drm_test_finish(adapter, true);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

static struct drm_test_alloc create(D3DKMT_HANDLE device, UINT64 size)
{
    struct drm_test_alloc a;

    ck_assert_status(drm_test_create2(device, size, 0, &a), STATUS_SUCCESS);
    return a;
}

static void destroy(D3DKMT_HANDLE device, const struct drm_test_alloc *a)
{
    ck_assert_status(drm_test_destroy(device, &a->handle, 1), STATUS_SUCCESS);
}

static bool overlap(const struct drm_test_alloc *a, const struct drm_test_alloc *b)
{
    return a->va < b->va + b->size && b->va < a->va + a->size;
}

/* A batch storing `value` at `va`, then ending; its length in bytes. */
static UINT store_batch(UINT32 *dw, UINT64 va, UINT32 value)
{
    dw[0] = MI_STORE_DWORD;
    dw[1] = (UINT32)va;
    dw[2] = (UINT32)(va >> 32);
    dw[3] = value;
    dw[4] = MI_BATCH_BUFFER_END;
    dw[5] = 0;
    return 24;
}

static KMT_DRM_SUBMIT submit_desc(const UINT *gems, UINT n)
{
    KMT_DRM_SUBMIT d = drm_test_submit_desc();

    d.NumBoHandles = n;
    if (n)                                          /* gems may be NULL then */
        memcpy(d.BoHandles, gems, n * sizeof(*gems));
    return d;
}

/* ---- addresses ---------------------------------------------------------------- */

static void check_distinct_aligned(bool discrete, UINT64 align)
{
    D3DKMT_HANDLE device;
    struct drm_test_alloc a[6];

    start(discrete);
    device = drm_test_create_device(adapter);
    for (UINT i = 0; i < 6; i++) {
        a[i] = create(device, PAGE * (1 + i * 3));
        ck_assert_uint_lt(a[i].va + a[i].size, 1ull << 47);     /* canonical as it is */
    }
    drm_test_assert_disjoint(a, 6, 0, align);
    for (UINT i = 0; i < 6; i++)
        destroy(device, &a[i]);
    drm_test_destroy_device(device);
    finish();
}

START_TEST(allocations_get_distinct_aligned_addresses)
{
    check_distinct_aligned(false, PAGE);
}
END_TEST

/* Local memory wants 64 KiB (2 MiB with compact page tables), and local and
 * system objects may not share a page table: each object its own 2 MiB. */
START_TEST(discrete_addresses_are_2mib_granules)
{
    check_distinct_aligned(true, 2u << 20);
}
END_TEST

START_TEST(freed_addresses_are_reused_without_overlap)
{
    D3DKMT_HANDLE device;
    struct drm_test_alloc a, b, c, d, e;

    start(false);
    device = drm_test_create_device(adapter);
    a = create(device, PAGE);
    b = create(device, 4 * PAGE);
    c = create(device, PAGE);
    destroy(device, &b);
    d = create(device, 2 * PAGE);
    ck_assert_uint_eq(d.va, b.va);                  /* first fit: b's hole */
    e = create(device, 4 * PAGE);                   /* no longer fits there */
    ck_assert(!overlap(&d, &a) && !overlap(&d, &c) && !overlap(&e, &a) && !overlap(&e, &c) && !overlap(&e, &d));
    destroy(device, &a);
    destroy(device, &c);
    destroy(device, &d);
    destroy(device, &e);
    drm_test_destroy_device(device);
    finish();
}
END_TEST

#define PER_THREAD 24

struct creator {
    D3DKMT_HANDLE device;
    struct drm_test_alloc a[PER_THREAD];
};

static void *create_many(void *arg)
{
    struct creator *c = arg;

    for (UINT i = 0; i < PER_THREAD; i++)
        if (drm_test_create2(c->device, PAGE * (1 + i % 3), 0, &c->a[i]))
            c->a[i].handle = 0;
    return NULL;
}

START_TEST(concurrent_creates_never_overlap)
{
    struct creator c[2];
    pthread_t t[2];

    start(false);
    for (UINT k = 0; k < 2; k++) {
        c[k].device = drm_test_create_device(adapter);
        ck_assert_int_eq(pthread_create(&t[k], NULL, create_many, &c[k]), 0);
    }
    for (UINT k = 0; k < 2; k++)
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
    for (UINT i = 0; i < 2 * PER_THREAD; i++) {
        const struct drm_test_alloc *x = &c[i / PER_THREAD].a[i % PER_THREAD];

        ck_assert_uint_ne(x->handle, 0);
        for (UINT j = 0; j < i; j++)
            ck_assert(!overlap(x, &c[j / PER_THREAD].a[j % PER_THREAD]));
    }
    for (UINT k = 0; k < 2; k++) {
        for (UINT i = 0; i < PER_THREAD; i++)
            destroy(c[k].device, &c[k].a[i]);
        drm_test_destroy_device(c[k].device);
    }
    finish();
}
END_TEST

/* ---- submission ------------------------------------------------------------------ */

/* The batch in one allocation stores into another, which Lock then reads. */
static void store_and_read(bool discrete, UINT flags)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc batch, target;
    UINT32 dw[8];
    struct kmt_fence f;
    KMT_DRM_SUBMIT d;
    UINT len;

    start(discrete);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    batch = create(device, PAGE);
    ck_assert_status(drm_test_create2(device, PAGE, flags, &target), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    len = store_batch(dw, target.va + 64, 0xc0ffee);
    drm_test_write(device, &batch, 256, dw, len);
    d = submit_desc(&target.gem, 1);                /* the batch's own object is added */
    drm_test_run_and_wait(device, ctx, batch.va + 256, len, &d, f.handle, 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &target, 64), 0xc0ffee);
    ck_assert_uint_eq(fake_drm.execs, 1);
    ck_assert_uint_eq(fake_drm.last_exec_ctx, drm_test_query_context(adapter, device, ctx).KernelContext);
    ck_assert_uint_eq(fake_drm.exec_hangs, 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);

    /* an object the submission does not name is not in the context's
     * address space: the store goes to the scratch page */
    len = store_batch(dw, target.va + 68, 0xbad);
    drm_test_write(device, &batch, 0, dw, len);
    drm_test_run_and_wait(device, ctx, batch.va, len, NULL, f.handle, 2);
    ck_assert_uint_eq(drm_test_read_u32(device, &target, 68), 0);
    ck_assert_uint_eq(fake_drm.exec_lost_writes, 1);
    ck_assert_uint_eq(drm_test_query_context(adapter, device, ctx).Submissions, 2);

    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    destroy(device, &batch);
    destroy(device, &target);
    drm_test_destroy_device(device);
    finish();
}

START_TEST(batch_stores_into_another_allocation)
{
    store_and_read(false, 0);
}
END_TEST

START_TEST(discrete_batch_stores_into_local_memory)
{
    store_and_read(true, KMT_DRM_ALLOCATION_DEVICE_LOCAL);
}
END_TEST

/* Waits and signals of KMT_DRM_SUBMIT are timeline fences of the
 * EXECBUFFER2: the out-fence moves without a CPU signal; a wait for a point
 * nothing will signal is refused by the kernel (EINVAL), a device fault. */
START_TEST(submission_waits_and_signals_timeline_points)
{
    D3DKMT_HANDLE device, ctx;
    struct kmt_fence fin, fout;
    KMT_DRM_FENCE_INFO in, out;
    struct drm_test_alloc batch;
    UINT32 end[2] = { MI_BATCH_BUFFER_END, 0 };
    KMT_DRM_SUBMIT d;

    start(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    batch = create(device, PAGE);
    drm_test_write(device, &batch, 0, end, sizeof(end));
    ck_assert_status(kmt_fence_create(device, 2, 0, &fin), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fout), STATUS_SUCCESS);
    in = drm_test_export_fence(adapter, fin.handle);
    out = drm_test_export_fence(adapter, fout.handle);
    d = submit_desc(NULL, 0);
    d.NumWaits = 1;
    d.Waits[0] = (KMT_DRM_SYNC_POINT){ in.SyncobjHandle, 0, 2 };
    d.NumSignals = 1;
    d.Signals[0] = (KMT_DRM_SYNC_POINT){ out.SyncobjHandle, 0, 5 };
    ck_assert_status(drm_test_submit(ctx, batch.va, sizeof(end), &d), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fout.handle, 5, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*fout.cpu, 5);
    ck_assert_uint_eq(fake_drm.execs, 1);
    /* the fence watcher and the scheduler run now: neither takes the process's signals */
    ck_assert_uint_ge(kmt_test_assert_library_threads_block_signals(), 2);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);

    d.Waits[0].Point = 9;                           /* never submitted */
    d.Signals[0].Point = 6;
    ck_assert_status(drm_test_submit(ctx, batch.va, sizeof(end), &d), STATUS_SUCCESS);
    drm_test_expect_fault(device, fout.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    ck_assert_uint_eq(fake_drm.execs, 1);
    drm_test_destroy_device(device);
    finish();
}
END_TEST

/* A stream at an address no allocation holds, or running past the end of
 * its allocation, never reaches the kernel: the device page-faults there. */
static void bad_stream(UINT64 offset, UINT length)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc batch;
    struct kmt_fence f;

    start(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    batch = create(device, PAGE);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(drm_test_submit(ctx, batch.va + offset, length, NULL), STATUS_SUCCESS);
    drm_test_expect_page_fault(device, f.handle, batch.va + offset);
    ck_assert_uint_eq(fake_drm.execs, 0);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    finish();
}

START_TEST(stream_in_no_allocation_page_faults)
{
    bad_stream(1ull << 32, 64);
}
END_TEST

START_TEST(stream_past_its_allocation_page_faults)
{
    bad_stream(PAGE - 16, 32);
}
END_TEST

/* Render copies the stream into the context's DMA buffer; the miniport
 * copies it into a batch object of its own, ends it, and closes that
 * object once the context completed it (here: with the context). */
START_TEST(legacy_render_runs_a_copied_batch)
{
    D3DKMT_HANDLE device, ctx;
    D3DKMT_CREATECONTEXT cc;
    struct drm_test_alloc target;
    struct kmt_fence f;

    start(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_legacy_context(device, &cc);
    target = create(device, PAGE);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    drm_test_render(ctx, &cc, store_batch(cc.pCommandBuffer, target.va + 8, 0x1234) - 8,   /* no batch end */
                    target.handle);
    drm_test_signal_and_wait(device, ctx, f.handle, 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &target, 8), 0x1234);
    ck_assert_uint_eq(fake_drm.execs, 1);
    ck_assert_uint_eq(fake_drm.exec_hangs, 0);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.live_objects, 1);    /* the batch copy went with its context */
    destroy(device, &target);
    drm_test_destroy_device(device);
    finish();
}
END_TEST

/* Two legacy submissions in one context while the first still runs: the
 * first copy is kept until its context completed it, so the second copy
 * gets an address of its own.  Were the first closed at once, the second
 * would take its VA (first fit) and EXECBUFFER2 would block until the
 * first batch retired (eb_reserve evicting an active VMA). */
START_TEST(legacy_copy_is_kept_until_its_batch_retires)
{
    D3DKMT_HANDLE device, ctx;
    D3DKMT_CREATECONTEXT cc;
    struct drm_test_alloc target;
    struct kmt_fence f;

    start(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_legacy_context(device, &cc);
    target = create(device, PAGE);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    fake_drm.exec_hold = true;
    drm_test_render(ctx, &cc, store_batch(cc.pCommandBuffer, target.va, 1) - 8, target.handle);
    drm_test_render(ctx, &cc, store_batch(cc.pCommandBuffer, target.va + 4, 2) - 8, target.handle);
    ck_assert_uint_eq(fake_drm.execs, 2);
    ck_assert_uint_eq(fake_drm.exec_stalls, 0);
    ck_assert_uint_eq(fake_drm.live_objects, 3);    /* both copies, still running */
    fake_drm.exec_hold = false;
    fake_drm_i915_retire();
    drm_test_signal_and_wait(device, ctx, f.handle, 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &target, 0), 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &target, 4), 2);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.live_objects, 1);    /* the copies went with their context */
    destroy(device, &target);
    drm_test_destroy_device(device);
    finish();
}
END_TEST

/* A command the GPU cannot run stops the batch (a hang and a context reset
 * on hardware); its fence still signals. */
START_TEST(unknown_command_stops_the_batch)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc batch, target;
    UINT32 dw[8] = { 0x7a000004u };                 /* a 3D command the fake does not run */
    struct kmt_fence f;
    KMT_DRM_SUBMIT d;

    start(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    batch = create(device, PAGE);
    target = create(device, PAGE);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    store_batch(dw + 1, target.va, 7);
    drm_test_write(device, &batch, 0, dw, sizeof(dw));
    d = submit_desc(&target.gem, 1);
    drm_test_run_and_wait(device, ctx, batch.va, sizeof(dw), &d, f.handle, 1);
    ck_assert_uint_eq(fake_drm.exec_hangs, 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &target, 0), 0);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    destroy(device, &batch);
    destroy(device, &target);
    drm_test_destroy_device(device);
    finish();
}
END_TEST

/* A failed EXECBUFFER2, or a failure making a legacy batch's copy, faults
 * the device and leaves no object behind. */
static void failing_call(const char *call, bool legacy)
{
    D3DKMT_HANDLE device, ctx;
    D3DKMT_CREATECONTEXT cc;
    struct drm_test_alloc batch;
    UINT32 end[2] = { MI_BATCH_BUFFER_END, 0 };
    struct kmt_fence f;

    start(false);
    device = drm_test_create_device(adapter);
    ctx = legacy ? kmt_exec_legacy_context(device, &cc) : kmt_exec_virtual_context(device);
    batch = create(device, PAGE);
    drm_test_write(device, &batch, 0, end, sizeof(end));
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(drm_test_set_fault(adapter, call, 1, ENOMEM), STATUS_SUCCESS);
    if (legacy) {
        memcpy(cc.pCommandBuffer, end, 8);
        drm_test_render(ctx, &cc, 8, 0);
    } else {
        ck_assert_status(drm_test_submit(ctx, batch.va, sizeof(end), NULL), STATUS_SUCCESS);
    }
    drm_test_expect_fault(device, f.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    ck_assert_uint_eq(drm_test_stats(adapter).FaultsFired, 1);
    ck_assert_uint_eq(fake_drm.execs, 0);
    ck_assert_uint_eq(fake_drm.live_objects, 1);    /* only the allocation */
    drm_test_destroy_device(device);
    finish();
}

START_TEST(failed_execbuffer_faults_and_leaks_nothing)
{
    failing_call("I915_GEM_EXECBUFFER2", false);
}
END_TEST

START_TEST(failed_legacy_execbuffer_closes_its_batch)
{
    failing_call("I915_GEM_EXECBUFFER2", true);
}
END_TEST

START_TEST(failed_legacy_batch_map_closes_its_batch)
{
    failing_call("I915_GEM_MMAP_OFFSET", true);
}
END_TEST

/* A submission made from a thread of its own: the caller's thread runs
 * the submit DDI itself (the direct path). */
struct submit_call {
    D3DKMT_HANDLE ctx;
    UINT64 va;
    UINT length;
    NTSTATUS status;
};

static void *submit_thread(void *arg)
{
    struct submit_call *call = arg;

    call->status = drm_test_submit(call->ctx, call->va, call->length, NULL);
    return NULL;
}

/* Until the armed stall point is reached. */
static void wait_for_stall(void)
{
    while (!drm_test_stats(adapter).FaultsFired)
        sched_yield();
}

#define DDI_STALL_MS 300

/* The kernel may complete a submission, and the core retire it, before the
 * submit DDI returned.  DestroyContext, or DestroyDevice (which drains the
 * contexts before it closes them), still returns only after the call:
 * DxgkDdiDestroyContext never overlaps a submission on its context, and
 * nothing the call holds outlives the teardown.  The first submission, held
 * in the DDI by a thread of its own, keeps the second from being made
 * directly: the scheduler thread makes it, and is held in the DDI too. */
static void teardown_waits_for_submit_call(bool whole_device)
{
    UINT32 end[2] = { MI_BATCH_BUFFER_END, 0 };
    struct drm_test_alloc batch;
    struct submit_call call;
    D3DKMT_HANDLE device;
    UINT64 start_ms;
    pthread_t t;

    start(false);
    device = drm_test_create_device(adapter);
    call.ctx = kmt_exec_virtual_context(device);
    batch = create(device, PAGE);
    drm_test_write(device, &batch, 0, end, sizeof(end));
    call.va = batch.va;
    call.length = sizeof(end);
    ck_assert_status(drm_test_set_fault(adapter, "recorded", 1, -DDI_STALL_MS / 3), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_create(&t, NULL, submit_thread, &call), 0);
    wait_for_stall();
    ck_assert_status(drm_test_set_fault(adapter, "recorded", 1, -DDI_STALL_MS), STATUS_SUCCESS);
    start_ms = kmt_test_now_ms();
    ck_assert_status(drm_test_submit(call.ctx, batch.va, sizeof(end), NULL), STATUS_SUCCESS);
    wait_for_stall();
    if (whole_device)
        drm_test_destroy_device(device);
    else
        ck_assert_status(kmt_exec_destroy_context(call.ctx), STATUS_SUCCESS);
    ck_assert_uint_ge(kmt_test_now_ms() - start_ms, DDI_STALL_MS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_status(call.status, STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.execs, 2);
    if (!whole_device) {
        destroy(device, &batch);
        drm_test_destroy_device(device);
    }
    finish();
}

START_TEST(context_teardown_waits_for_its_submit_call)
{
    teardown_waits_for_submit_call(false);
}
END_TEST

START_TEST(device_teardown_waits_for_its_submit_call)
{
    teardown_waits_for_submit_call(true);
}
END_TEST

/* Without softpin (or a full PPGTT, or timeline fences) allocations have no
 * GPU VA and submissions fault the device as not supported. */
START_TEST(old_kernel_without_softpin_has_no_gpu_va)
{
    const struct fake_drm_config c = { .driver = FAKE_I915, .has_llc = true, .timelines = true, .no_softpin = true };
    KMT_DRM_CONTEXT_DESC desc = { KMT_DRM_MAGIC, KMT_DRM_VERSION, 0, 0xffff };
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_HANDLE device;
    struct drm_test_alloc a;
    struct kmt_fence f;

    start_config(&c);
    device = drm_test_create_device(adapter);
    a = create(device, PAGE);
    ck_assert_uint_eq(a.va, 0);
    cv.hDevice = device;
    cv.pPrivateDriverData = &desc;
    cv.PrivateDriverDataSize = sizeof(desc);
    ck_assert_status(D3DKMTCreateContextVirtual(&cv), STATUS_SUCCESS);
    ck_assert_uint_eq(desc.CanSubmit, 0);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ck_assert_status(drm_test_submit(cv.hContext, 0x10000, 8, NULL), STATUS_SUCCESS);
    drm_test_expect_fault(device, f.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    ck_assert_uint_eq(fake_drm.execs, 0);
    drm_test_destroy_device(device);
    finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_i915_exec");
    TCase *va = tcase_create("gpu_va"), *exec = tcase_create("submission");

    tcase_add_test(va, allocations_get_distinct_aligned_addresses);
    tcase_add_test(va, discrete_addresses_are_2mib_granules);
    tcase_add_test(va, freed_addresses_are_reused_without_overlap);
    tcase_add_test(va, concurrent_creates_never_overlap);
    tcase_add_test(exec, batch_stores_into_another_allocation);
    tcase_add_test(exec, discrete_batch_stores_into_local_memory);
    tcase_add_test(exec, submission_waits_and_signals_timeline_points);
    tcase_add_test(exec, stream_in_no_allocation_page_faults);
    tcase_add_test(exec, stream_past_its_allocation_page_faults);
    tcase_add_test(exec, legacy_render_runs_a_copied_batch);
    tcase_add_test(exec, legacy_copy_is_kept_until_its_batch_retires);
    tcase_add_test(exec, unknown_command_stops_the_batch);
    tcase_add_test(exec, failed_execbuffer_faults_and_leaks_nothing);
    tcase_add_test(exec, failed_legacy_execbuffer_closes_its_batch);
    tcase_add_test(exec, failed_legacy_batch_map_closes_its_batch);
    tcase_add_test(exec, old_kernel_without_softpin_has_no_gpu_va);
    tcase_add_test(exec, context_teardown_waits_for_its_submit_call);
    tcase_add_test(exec, device_teardown_waits_for_its_submit_call);
    suite_add_tcase(s, va);
    suite_add_tcase(s, exec);
    return kmt_test_run(s);
}
