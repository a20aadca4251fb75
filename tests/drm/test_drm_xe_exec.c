/*
 * Submission on xe through the D3DKMT API, end to end on the fake kernel
 * (fake_drm.c, fake_xe_exec.c): the fake xe device, with timeline
 * syncobjs, is listed with a render node that opens the fake again, so the
 * miniport discovers and drives it as it would a GPU.  Its allocations are
 * bound in the adapter's VM at GPU VAs; a command buffer is a batch at a
 * GPU VA, which the fake runs (MI_NOOP, MI_STORE_DATA_IMM,
 * MI_BATCH_BUFFER_END) through the VM's bindings.  Every test ends with
 * nothing left in the fake kernel: no object, binding, VM, exec queue or
 * syncobj, and no object closed while bound or VA bound twice.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "drm_test.h"
#include "exec_util.h"
#include "fake_drm.h"
#include "fake_xe_exec.h"

#define MI_BATCH_BUFFER_END (0x0au << 23)
#define MI_STORE_DATA_IMM(dwords) ((0x20u << 23) | ((dwords) - 2u))
#define SDI_QWORD (1u << 21)
#define XE2_PAT_WB_1WAY 1
#define XELPG_PAT_WB_1WAY 3
#define XELP_PAT_WB 0

static struct drm_test_adapter adapters[DRM_TEST_MAX];
static D3DKMT_HANDLE adapter;

static void open_fake_xe_config(const struct fake_drm_config *c)
{
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL };
    static char path[64];

    fake_xe_reset();
    ck_assert_int_ge(fake_drm_open(c), 0);
    ck_assert_int_eq(fake_drm_device_path(path, sizeof(path)), 0);
    dev.render_node = path;
    fake_drm_set_devices(&dev, 1, "xe");
    ck_assert_uint_eq(drm_test_use_allocating(adapters), 1);
    adapter = adapters[0].handle;
    ck_assert_uint_eq(fake_xe.vms, 1);
}

static void open_fake_xe(bool discrete)
{
    const struct fake_drm_config c = { .driver = FAKE_XE, .timelines = true, .discrete = discrete };

    open_fake_xe_config(&c);
}

/* Nothing of the test is left, in the miniport or in the fake kernel. */
static void close_fake_xe(void)
{
    drm_test_finish(adapter, false);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
    ck_assert_uint_eq(fake_xe.vms, 0);
    ck_assert_uint_eq(fake_xe.queues, 0);
    ck_assert_uint_eq(fake_xe.mappings, 0);
    ck_assert_uint_eq(fake_xe.closed_while_bound, 0);
    ck_assert_uint_eq(fake_xe.map_over_existing, 0);
    ck_assert_uint_eq(fake_xe.unmap_nothing, 0);
    ck_assert_uint_eq(fake_xe.vm_destroyed_bound, 0);
    ck_assert_uint_eq(fake_xe.binds_unsynced, 0);
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

/* MI_STORE_DATA_IMM of a qword to `dst`, then the end: 6 dwords. */
static UINT batch_store(UINT32 *b, UINT64 dst, UINT32 v0, UINT32 v1)
{
    UINT n = 0;

    b[n++] = MI_STORE_DATA_IMM(5) | SDI_QWORD;
    b[n++] = (UINT32)dst;
    b[n++] = (UINT32)(dst >> 32);
    b[n++] = v0;
    b[n++] = v1;
    b[n++] = MI_BATCH_BUFFER_END;
    return n;
}

START_TEST(allocations_get_distinct_bound_vas)
{
    D3DKMT_HANDLE device;
    struct drm_test_alloc a[3];
    static unsigned char mem[8192] __attribute__((aligned(4096)));
    D3DKMT_HANDLE sys;

    open_fake_xe(true);
    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_create2(device, 8192, 0, &a[0]), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 8192, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &a[1]), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 100, 0, &a[2]), STATUS_SUCCESS);
    drm_test_assert_disjoint(a, 3, 8192, 4096);
    ck_assert_uint_eq(a[1].va % 65536, 0);                 /* VRAM's 64 KiB pages */
    ck_assert_uint_ge(a[0].va, 1u << 20);
    ck_assert_uint_lt(a[2].va, 1ull << 47);
    ck_assert_uint_eq(fake_xe.mappings, 3);
    ck_assert_uint_eq(fake_xe.last_pat_index, XE2_PAT_WB_1WAY);
    ck_assert_uint_ge(fake_xe.bind_waits, 3);              /* each bind waited for */
    /* a copy-backed object is bound too */
    ck_assert_status(drm_test_create_sysmem(device, mem, sizeof(mem), &sys), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_xe.mappings, 4);
    ck_assert_status(drm_test_destroy(device, &sys, 1), STATUS_SUCCESS);
    for (UINT i = 0; i < 3; i++)
        ck_assert_status(drm_test_destroy(device, &a[i].handle, 1), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_xe.mappings, 0);
    /* a range given back is handed out again, bound once */
    ck_assert_status(drm_test_create2(device, 8192, 0, &a[0]), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &a[0].handle, 1), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    close_fake_xe();
}
END_TEST

/* Each platform binds with its own table's coherent write-back index
 * (xe_pat.c): the fake refuses a reserved index and, for a WB object, one
 * without coherency, as xe_vm.c does.  Index 1 is WT on Meteor Lake and
 * WC on Tiger Lake and DG2: both refused for a WB object.  The IP version
 * comes from GT_LIST, or from the device id where the kernel gives none. */
START_TEST(binds_use_the_platforms_coherent_pat_index)
{
    static const struct { int ip; bool discrete, no_ip_ver; uint16_t pat; } cases[] = {
        { FAKE_XE_XE2, false, false, XE2_PAT_WB_1WAY },   /* Lunar Lake */
        { FAKE_XE_XE2, true, true, XE2_PAT_WB_1WAY },     /* Battlemage, by its device id */
        { FAKE_XE_XELPG, false, false, XELPG_PAT_WB_1WAY },
        { FAKE_XE_XELPG, false, true, XELPG_PAT_WB_1WAY },
        { FAKE_XE_XELP, false, true, XELP_PAT_WB },       /* Tiger Lake */
        { FAKE_XE_XELP, true, true, XELP_PAT_WB },        /* DG2 */
    };

    for (UINT i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fake_drm_config c = { .driver = FAKE_XE, .timelines = true, .discrete = cases[i].discrete,
                                     .xe_ip = cases[i].ip, .xe_no_ip_ver = cases[i].no_ip_ver };
        struct drm_test_alloc wb, wc, local;
        D3DKMT_HANDLE device;

        open_fake_xe_config(&c);
        device = drm_test_create_device(adapter);
        ck_assert_status(drm_test_create2(device, 4096, 0, &wb), STATUS_SUCCESS);
        ck_assert_uint_eq(fake_xe.last_pat_index, cases[i].pat);
        ck_assert_status(drm_test_create2(device, 4096, KMT_DRM_ALLOCATION_WRITECOMBINE, &wc), STATUS_SUCCESS);
        ck_assert_status(drm_test_create2(device, 4096, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &local), STATUS_SUCCESS);
        ck_assert_uint_eq(fake_xe.last_pat_index, cases[i].pat);
        ck_assert_uint_eq(fake_xe.mappings, 3);
        ck_assert_status(drm_test_destroy(device, &wb.handle, 1), STATUS_SUCCESS);
        ck_assert_status(drm_test_destroy(device, &wc.handle, 1), STATUS_SUCCESS);
        ck_assert_status(drm_test_destroy(device, &local.handle, 1), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        close_fake_xe();
    }
}
END_TEST

START_TEST(batch_at_a_gpu_va_writes_another_allocation)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc code, dst;
    KMT_DRM_CONTEXT_INFO info;
    struct kmt_fence f;
    UINT32 b[16];
    UINT n;

    open_fake_xe(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    ck_assert_uint_eq(fake_xe.queues, 1);
    ck_assert_uint_eq(fake_xe.last_engine_class, 0);       /* render */
    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 4096, KMT_DRM_ALLOCATION_WRITECOMBINE, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    n = batch_store(b, dst.va + 16, 0xcafef00du, 0x12345678u);
    drm_test_write(device, &code, 256, b, n * 4);
    code.va += 256;                      /* anywhere in the allocation */
    drm_test_run_and_wait(device, ctx, code.va, n * 4, NULL, f.handle, 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 16), 0xcafef00du);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 20), 0x12345678u);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 24), 0);
    ck_assert_uint_eq(fake_xe.execs, 1);
    ck_assert_uint_eq(fake_xe.faults, 0);
    ck_assert_uint_eq(fake_xe.last_batch, code.va);
    info = drm_test_query_context(adapter, device, ctx);
    ck_assert_uint_eq(info.Submissions, 1);
    ck_assert_uint_eq(info.Faults, 0);
    ck_assert_uint_eq(info.CompletedPoint, 1);
    ck_assert_uint_ne(info.KernelContext, 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_xe.queues, 0);
    ck_assert_status(drm_test_destroy(device, &code.handle, 1), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &dst.handle, 1), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    close_fake_xe();
}
END_TEST

/* The UMD's own waits and signals reach the exec as timeline syncs; a wait
 * the kernel refuses (a point nothing will signal) faults the device. */
START_TEST(waits_and_signals_through_the_private_data)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc code, dst;
    KMT_DRM_FENCE_INFO in, out;
    struct kmt_fence fin, fout;
    KMT_DRM_SUBMIT d = drm_test_submit_desc();
    UINT32 b[16];
    UINT n;

    open_fake_xe(false);
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 4096, 0, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 2, 0, &fin), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fout), STATUS_SUCCESS);
    in = drm_test_export_fence(adapter, fin.handle);
    out = drm_test_export_fence(adapter, fout.handle);
    n = batch_store(b, dst.va, 7, 8);
    drm_test_write(device, &code, 0, b, n * 4);
    d.NumWaits = 1;
    d.Waits[0].SyncobjHandle = in.SyncobjHandle;
    d.Waits[0].Point = 2;
    d.NumSignals = 1;
    d.Signals[0].SyncobjHandle = out.SyncobjHandle;
    d.Signals[0].Point = 5;
    ck_assert_status(drm_test_submit(ctx, code.va, n * 4, &d), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fout.handle, 5, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*fout.cpu, 5);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 0), 7);
    ck_assert_uint_eq(fake_xe.last_num_syncs, 3);          /* the wait, the ring point, the signal */
    ck_assert_uint_eq(drm_test_query_context(adapter, device, ctx).Faults, 0);

    d.Waits[0].Point = 3;                /* not signalled: no fence at that point */
    ck_assert_status(drm_test_submit(ctx, code.va, n * 4, &d), STATUS_SUCCESS);
    drm_test_expect_fault(device, fout.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    ck_assert_uint_eq(fake_xe.execs, 1);
    drm_test_destroy_device(device);
    close_fake_xe();
}
END_TEST

/* A batch the miniport finds in no allocation, or running past the end of
 * one, never reaches the kernel: a DMA page fault at its VA. */
START_TEST(batch_outside_every_allocation_is_a_page_fault)
{
    open_fake_xe(false);
    drm_test_stream_page_faults(adapter, false, 0x1000, 64, &fake_xe.execs);     /* below everything */
    drm_test_stream_page_faults(adapter, true, 4096 - 8, 16, &fake_xe.execs);     /* across the end */
    close_fake_xe();
}
END_TEST

/* The bind or its wait failing leaves no object, range or binding behind;
 * a range a failed create held is handed out again. */
START_TEST(bind_failures_leave_no_half_made_object)
{
    static const char *const calls[] = { "XE_VM_BIND", "XE_VM_BIND_WAIT" };
    D3DKMT_HANDLE device;
    struct drm_test_alloc a, first;

    open_fake_xe(false);
    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_create2(device, 4096, 0, &first), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &first.handle, 1), STATUS_SUCCESS);
    for (UINT k = 0; k < 2; k++) {
        ck_assert_status(drm_test_set_fault(adapter, calls[k], 1, ENOMEM), STATUS_SUCCESS);
        ck_assert_status(drm_test_create2(device, 4096, 0, &a), STATUS_NO_MEMORY);
        ck_assert_uint_eq(fake_drm.live_objects, 0);
        ck_assert_uint_eq(fake_xe.mappings, 0);
        drm_test_assert_no_buffers(adapter);
        ck_assert_status(drm_test_create2(device, 4096, 0, &a), STATUS_SUCCESS);
        ck_assert_uint_eq(a.va, first.va);                 /* the range went back */
        ck_assert_status(drm_test_destroy(device, &a.handle, 1), STATUS_SUCCESS);
    }
    drm_test_destroy_device(device);
    close_fake_xe();
}
END_TEST

/* EXEC_QUEUE_CREATE failing fails CreateContext and leaves no context. */
START_TEST(exec_queue_failure_fails_create_context)
{
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };
    D3DKMT_HANDLE device;

    open_fake_xe(false);
    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_set_fault(adapter, "XE_EXEC_QUEUE_CREATE", 1, ENOMEM), STATUS_SUCCESS);
    cc.hDevice = device;
    ck_assert_status(D3DKMTCreateContextVirtual(&cc), STATUS_NO_MEMORY);
    ck_assert_uint_eq(fake_xe.queues, 0);
    ck_assert_uint_eq(drm_test_stats(adapter).Contexts, 0);
    drm_test_destroy_device(device);
    close_fake_xe();
}
END_TEST

/* The exec ioctl failing faults the device; the fake ran nothing. */
START_TEST(exec_failure_faults_the_device)
{
    UINT32 stream[2] = { 0, MI_BATCH_BUFFER_END };

    open_fake_xe(false);
    drm_test_failed_submit_faults(adapter, stream, sizeof(stream), "XE_EXEC");
    ck_assert_uint_eq(fake_xe.execs, 0);
    close_fake_xe();
}
END_TEST

/* Render copies the stream into a batch object of the family's own, kept until
 * its context completed it and freed at the next submission. */
START_TEST(legacy_render_runs_a_copy_of_the_stream)
{
    open_fake_xe(false);
    drm_test_legacy_copies(adapter, batch_store, &fake_drm.live_objects, &fake_xe.faults);
    close_fake_xe();
}
END_TEST

#define PER_THREAD 12

START_TEST(concurrent_creates_get_disjoint_vas)
{
    struct drm_test_alloc all[2 * PER_THREAD];
    D3DKMT_HANDLE device;

    open_fake_xe(true);
    device = drm_test_create_device(adapter);
    drm_test_create_from_two_threads(device, 8192, PER_THREAD, all);
    drm_test_assert_disjoint(all, 2 * PER_THREAD, 8192, 4096);
    ck_assert_uint_eq(fake_xe.mappings, 2 * PER_THREAD);
    drm_test_destroy_all(device, all, 2 * PER_THREAD);
    drm_test_destroy_device(device);
    close_fake_xe();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_xe_exec");
    TCase *tc = tcase_create("xe");

    tcase_add_test(tc, allocations_get_distinct_bound_vas);
    tcase_add_test(tc, binds_use_the_platforms_coherent_pat_index);
    tcase_add_test(tc, batch_at_a_gpu_va_writes_another_allocation);
    tcase_add_test(tc, waits_and_signals_through_the_private_data);
    tcase_add_test(tc, batch_outside_every_allocation_is_a_page_fault);
    tcase_add_test(tc, bind_failures_leave_no_half_made_object);
    tcase_add_test(tc, exec_queue_failure_fails_create_context);
    tcase_add_test(tc, exec_failure_faults_the_device);
    tcase_add_test(tc, legacy_render_runs_a_copy_of_the_stream);
    tcase_add_test(tc, concurrent_creates_get_disjoint_vas);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
