/*
 * Submission on amdgpu through the D3DKMT API, end to end on the fake
 * kernel (fake_drm.c, fake_amdgpu.c): the fake amdgpu device, with
 * timeline syncobjs, is listed with a render node that opens the fake
 * again, so the miniport discovers and drives it as it would a GPU.  Its
 * allocations have GPU VAs; a command buffer is PM4 at a GPU VA, which the
 * fake runs (NOP, WRITE_DATA to memory) through its VA mappings.  Every
 * test ends with nothing left in the fake kernel: no object, context,
 * syncobj, VA range or mapping, and no range or object freed while mapped.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <amdgpu_drm.h>

#include "drm_test.h"
#include "exec_util.h"
#include "fake_amdgpu.h"
#include "fake_drm.h"

#define PKT3(op, body_dwords) ((3u << 30) | (((body_dwords) - 1u) << 16) | ((op) << 8))
#define PKT3_NOP 0x10u
#define PKT3_NOP_PAD 0xffff1000u          /* PACKET3(NOP, 0x3fff): the header alone (soc15d.h, gfx rings' nop) */
#define PKT3_WRITE_DATA 0x37u
#define WRITE_DATA_DST_MEM (5u << 8)
#define WRITE_DATA_CONFIRM (1u << 20)

static struct drm_test_adapter adapters[DRM_TEST_MAX];
static D3DKMT_HANDLE adapter;

/* The fake kernel and its one amdgpu device, before anything enumerates it. */
static void install_fake_amdgpu(void)
{
    const struct fake_drm_config c = { .driver = FAKE_AMDGPU, .timelines = true };
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL };
    static char path[64];

    ck_assert_int_ge(fake_drm_open(&c), 0);
    ck_assert_int_eq(fake_drm_device_path(path, sizeof(path)), 0);
    dev.render_node = path;
    fake_drm_set_devices(&dev, 1, "amdgpu");
}

static void open_fake_amdgpu(void)
{
    install_fake_amdgpu();
    ck_assert_uint_eq(drm_test_use_allocating(adapters), 1);
    adapter = adapters[0].handle;
}

/* Nothing of the test is left, in the miniport or in the fake kernel. */
static void close_fake_amdgpu(void)
{
    drm_test_finish(adapter, false);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
    ck_assert_uint_eq(fake_amdgpu.va_ranges, 0);
    ck_assert_uint_eq(fake_amdgpu.mappings, 0);
    ck_assert_uint_eq(fake_amdgpu.range_freed_mapped, 0);
    ck_assert_uint_eq(fake_amdgpu.bo_freed_mapped, 0);
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

/* A NOP, then WRITE_DATA of two dwords to `dst`: 6 + 2 dwords. */
static UINT pm4_write(UINT32 *ib, UINT64 dst, UINT32 v0, UINT32 v1)
{
    UINT n = 0;

    ib[n++] = PKT3(PKT3_NOP, 1);
    ib[n++] = 0;
    ib[n++] = PKT3(PKT3_WRITE_DATA, 5);
    ib[n++] = WRITE_DATA_DST_MEM | WRITE_DATA_CONFIRM;
    ib[n++] = (UINT32)dst;
    ib[n++] = (UINT32)(dst >> 32);
    ib[n++] = v0;
    ib[n++] = v1;
    return n;
}

START_TEST(allocations_get_distinct_mapped_vas)
{
    D3DKMT_HANDLE device;
    struct drm_test_alloc a[3];
    static unsigned char mem[8192] __attribute__((aligned(4096)));
    D3DKMT_HANDLE sys;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_create2(device, 8192, 0, &a[0]), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 8192, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &a[1]), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 100, 0, &a[2]), STATUS_SUCCESS);
    drm_test_assert_disjoint(a, 3, 8192, 4096);
    ck_assert_uint_eq(a[1].va % 65536, 0);                 /* VRAM: the kernel's large fragments */
    ck_assert_uint_eq(fake_amdgpu.mappings, 3);
    ck_assert_uint_eq(fake_amdgpu.last_map_flags,
                      AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE | AMDGPU_VM_PAGE_EXECUTABLE);
    /* a userptr object is mapped too */
    ck_assert_status(drm_test_create_sysmem(device, mem, sizeof(mem), &sys), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_amdgpu.mappings, 4);
    ck_assert_status(drm_test_destroy(device, &sys, 1), STATUS_SUCCESS);
    for (UINT i = 0; i < 3; i++)
        ck_assert_status(drm_test_destroy(device, &a[i].handle, 1), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_amdgpu.mappings, 0);
    ck_assert_uint_eq(fake_amdgpu.va_ranges, 0);
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

START_TEST(ib_at_a_gpu_va_writes_another_allocation)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc code, dst;
    KMT_DRM_CONTEXT_INFO info;
    KMT_DRM_SUBMIT d = drm_test_submit_desc();
    struct kmt_fence f;
    UINT32 ib[16];
    UINT n;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 4096, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    n = pm4_write(ib, dst.va + 16, 0xcafef00du, 0x12345678u);
    drm_test_write(device, &code, 256, ib, n * 4);
    code.va += 256;                      /* anywhere in the allocation */
    d.NumBoHandles = 1;
    d.BoHandles[0] = dst.gem;
    drm_test_run_and_wait(device, ctx, code.va, n * 4, &d, f.handle, 1);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 16), 0xcafef00du);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 20), 0x12345678u);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 24), 0);
    ck_assert_uint_eq(fake_amdgpu.submissions, 1);
    ck_assert_uint_eq(fake_amdgpu.faults, 0);
    ck_assert_uint_eq(fake_amdgpu.last_ib_va, code.va);
    ck_assert_uint_eq(fake_amdgpu.last_bo_count, 2);       /* dst and the IB's object */
    info = drm_test_query_context(adapter, device, ctx);
    ck_assert_uint_eq(info.Submissions, 1);
    ck_assert_uint_eq(info.Faults, 0);
    ck_assert_uint_eq(info.CompletedPoint, 1);
    ck_assert_uint_ne(info.KernelContext, 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &code.handle, 1), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &dst.handle, 1), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

/* The UMD's own waits and signals reach the CS as timeline chunks; a wait
 * the kernel refuses (a point nothing will signal) faults the device. */
START_TEST(waits_and_signals_through_the_private_data)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc code, dst;
    KMT_DRM_FENCE_INFO in, out;
    struct kmt_fence fin, fout;
    KMT_DRM_SUBMIT d = drm_test_submit_desc();
    UINT32 ib[16];
    UINT n;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 4096, 0, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 2, 0, &fin), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &fout), STATUS_SUCCESS);
    in = drm_test_export_fence(adapter, fin.handle);
    out = drm_test_export_fence(adapter, fout.handle);
    n = pm4_write(ib, dst.va, 7, 8);
    drm_test_write(device, &code, 0, ib, n * 4);
    d.NumBoHandles = 1;
    d.BoHandles[0] = dst.gem;
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
    ck_assert_uint_eq(drm_test_query_context(adapter, device, ctx).Faults, 0);

    d.Waits[0].Point = 3;                /* not signalled: EINVAL without WAIT_FOR_SUBMIT */
    ck_assert_status(drm_test_submit(ctx, code.va, n * 4, &d), STATUS_SUCCESS);
    drm_test_expect_fault(device, fout.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    ck_assert_uint_eq(fake_amdgpu.submissions, 1);
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

/* A command buffer the miniport finds in no allocation, or running past
 * the end of one, never reaches the kernel: a DMA page fault at its VA. */
START_TEST(ib_outside_every_allocation_is_a_page_fault)
{
    open_fake_amdgpu();
    drm_test_stream_page_faults(adapter, false, 0x1000, 64, &fake_amdgpu.submissions);     /* below everything */
    drm_test_stream_page_faults(adapter, true, 4096 - 8, 16, &fake_amdgpu.submissions);     /* across the end */
    close_fake_amdgpu();
}
END_TEST

/* The VA steps failing leave no object, range or mapping behind. */
START_TEST(va_failures_leave_no_half_made_object)
{
    static const char *const calls[] = { "amdgpu_va_range_alloc", "amdgpu_bo_va_op" };
    D3DKMT_HANDLE device;
    struct drm_test_alloc a;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    for (UINT k = 0; k < 2; k++) {
        ck_assert_status(drm_test_set_fault(adapter, calls[k], 1, ENOMEM), STATUS_SUCCESS);
        ck_assert_status(drm_test_create2(device, 4096, 0, &a), STATUS_NO_MEMORY);
        ck_assert_uint_eq(fake_drm.live_objects, 0);
        ck_assert_uint_eq(fake_amdgpu.va_ranges, 0);
        ck_assert_uint_eq(fake_amdgpu.mappings, 0);
        drm_test_assert_no_buffers(adapter);
    }
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

/* The CS ioctl failing faults the device; the fake ran nothing. */
START_TEST(cs_failure_faults_the_device)
{
    UINT32 stream[2] = { PKT3(PKT3_NOP, 1), 0 };

    open_fake_amdgpu();
    drm_test_failed_submit_faults(adapter, stream, sizeof(stream), "AMDGPU_CS");
    ck_assert_uint_eq(fake_amdgpu.submissions, 0);
    close_fake_amdgpu();
}
END_TEST

/* Render copies the stream into an IB object of the family's own, kept until
 * its context completed it and freed at the next submission. */
START_TEST(legacy_render_runs_a_copy_of_the_stream)
{
    open_fake_amdgpu();
    drm_test_legacy_copies(adapter, pm4_write, &fake_drm.live_objects, &fake_amdgpu.faults);
    close_fake_amdgpu();
}
END_TEST

/* The one-dword NOP (count 0x3fff) the kernel pads its rings and IBs with,
 * and Mesa its IBs, runs as one dword: what follows it still runs. */
START_TEST(one_dword_nops_pad_an_ib)
{
    D3DKMT_HANDLE device, ctx;
    struct drm_test_alloc code, dst;
    KMT_DRM_SUBMIT d = drm_test_submit_desc();
    struct kmt_fence f;
    UINT32 ib[16];
    UINT n = 0;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(drm_test_create2(device, 4096, 0, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ib[n++] = PKT3_NOP_PAD;
    ib[n++] = PKT3_NOP_PAD;
    n += pm4_write(ib + n, dst.va, 0x5a5a0001u, 0x5a5a0002u);
    ib[n++] = PKT3_NOP_PAD;
    drm_test_write(device, &code, 0, ib, n * 4);
    d.NumBoHandles = 1;
    d.BoHandles[0] = dst.gem;
    drm_test_run_and_wait(device, ctx, code.va, n * 4, &d, f.handle, 1);
    ck_assert_uint_eq(fake_amdgpu.faults, 0);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 0), 0x5a5a0001u);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 4), 0x5a5a0002u);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &code.handle, 1), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &dst.handle, 1), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

/* A legacy stream's copy is padded with one-dword NOPs to the GFX ring's IB
 * size alignment, 32 bytes (amdgpu_kms.c, as Mesa pads its IBs). */
START_TEST(legacy_copy_is_padded_to_eight_dwords)
{
    D3DKMT_HANDLE device, ctx;
    D3DKMT_CREATECONTEXT cc;
    struct drm_test_alloc dst;
    struct kmt_fence f;
    UINT32 *cmd;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_create2(device, 4096, 0, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ctx = kmt_exec_legacy_context(device, &cc);
    cmd = cc.pCommandBuffer;
    cmd[0] = PKT3(PKT3_WRITE_DATA, 4);   /* five dwords */
    cmd[1] = WRITE_DATA_DST_MEM | WRITE_DATA_CONFIRM;
    cmd[2] = (UINT32)(dst.va + 4);
    cmd[3] = (UINT32)((dst.va + 4) >> 32);
    cmd[4] = 0x77u;
    drm_test_render(ctx, &cc, 5 * 4, dst.handle);
    drm_test_signal_and_wait(device, ctx, f.handle, 1);
    ck_assert_uint_eq(fake_amdgpu.last_ib_bytes, 32);
    ck_assert_uint_eq(fake_amdgpu.faults, 0);
    ck_assert_uint_eq(drm_test_read_u32(device, &dst, 4), 0x77u);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_status(drm_test_destroy(device, &dst.handle, 1), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

#define PER_THREAD 12

START_TEST(concurrent_creates_get_disjoint_vas)
{
    struct drm_test_alloc all[2 * PER_THREAD];
    D3DKMT_HANDLE device;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    drm_test_create_from_two_threads(device, 8192, PER_THREAD, all);
    drm_test_assert_disjoint(all, 2 * PER_THREAD, 8192, 4096);
    ck_assert_uint_eq(fake_amdgpu.mappings, 2 * PER_THREAD);
    drm_test_destroy_all(device, all, 2 * PER_THREAD);
    drm_test_destroy_device(device);
    close_fake_amdgpu();
}
END_TEST

/* libdrm_amdgpu hands a fork() child the parent's device (and so the
 * parent's open file): a child of a process holding amdgpu adapters does
 * not start them, and the parent's go on; once the parent let them go, a
 * child starts its own. */
static int child_allocating_adapters(void)
{
    struct drm_test_adapter mine[DRM_TEST_MAX];
    int status;
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (!pid) {
        unsigned n = drm_test_allocating_adapters(mine, DRM_TEST_MAX);

        KmtProcessShutdown();
        _exit((int)n);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(fork_child_of_an_amdgpu_user_does_not_start_it)
{
    D3DKMT_HANDLE device, alloc;
    UINT32 *p;

    open_fake_amdgpu();
    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, NULL), STATUS_SUCCESS);
    ck_assert_int_eq(child_allocating_adapters(), 0);
    ck_assert_status(drm_test_lock(device, alloc, 0, (void **)&p), STATUS_SUCCESS);
    p[0] = 0x1234;
    ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
    drm_test_destroy_device(device);
    KmtProcessShutdown();                /* the parent holds no amdgpu device now */
    ck_assert_int_eq(child_allocating_adapters(), 1);
    ck_assert_uint_eq(drm_test_use_allocating(adapters), 1);
    adapter = adapters[0].handle;
    close_fake_amdgpu();
}
END_TEST

/* A fork() at any moment of the parent's amdgpu start, here just after
 * libdrm_amdgpu made its device and before the miniport holds it: the child
 * inherits libdrm_amdgpu's device list all the same, so it does not start
 * amdgpu adapters either. */
static int forked_child_adapters = -1;

static void fork_inside_the_start(void)
{
    int status;
    pid_t pid;

    fake_amdgpu_after_initialize = NULL;          /* once, in the parent's start */
    if ((pid = fork()) < 0)
        return;
    if (!pid) {
        struct drm_test_adapter mine[DRM_TEST_MAX];
        unsigned n = drm_test_allocating_adapters(mine, DRM_TEST_MAX);

        KmtProcessShutdown();
        _exit((int)n);
    }
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
        forked_child_adapters = WEXITSTATUS(status);
}

START_TEST(fork_during_the_amdgpu_start_does_not_start_it_in_the_child)
{
    install_fake_amdgpu();
    fake_amdgpu_after_initialize = fork_inside_the_start;
    ck_assert_uint_eq(drm_test_use_allocating(adapters), 1);
    adapter = adapters[0].handle;
    ck_assert_int_eq(forked_child_adapters, 0);
    close_fake_amdgpu();
}
END_TEST

/* A program's fork handler, registered before its first D3DKMT call, that
 * starts the library in the child: the miniport's own handler ran before
 * it, so the child refuses amdgpu there as anywhere else. */
static bool handler_armed;
static int handler_adapters = -1;

static void program_child_handler(void)
{
    struct drm_test_adapter mine[DRM_TEST_MAX];

    if (handler_armed)
        handler_adapters = (int)drm_test_allocating_adapters(mine, DRM_TEST_MAX);
}

START_TEST(programs_fork_handler_does_not_start_amdgpu_in_the_child)
{
    int status;
    pid_t pid;

    ck_assert_int_eq(pthread_atfork(NULL, NULL, program_child_handler), 0);
    open_fake_amdgpu();
    handler_armed = true;
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        KmtProcessShutdown();
        _exit(handler_adapters == 0 ? 0 : 1);
    }
    handler_armed = false;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the program's fork handler started amdgpu in the child on the parent's device");
    close_fake_amdgpu();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_amdgpu_exec");
    TCase *tc = tcase_create("amdgpu");

    tcase_add_test(tc, allocations_get_distinct_mapped_vas);
    tcase_add_test(tc, ib_at_a_gpu_va_writes_another_allocation);
    tcase_add_test(tc, waits_and_signals_through_the_private_data);
    tcase_add_test(tc, ib_outside_every_allocation_is_a_page_fault);
    tcase_add_test(tc, va_failures_leave_no_half_made_object);
    tcase_add_test(tc, cs_failure_faults_the_device);
    tcase_add_test(tc, legacy_render_runs_a_copy_of_the_stream);
    tcase_add_test(tc, one_dword_nops_pad_an_ib);
    tcase_add_test(tc, legacy_copy_is_padded_to_eight_dwords);
    tcase_add_test(tc, concurrent_creates_get_disjoint_vas);
    tcase_add_test(tc, fork_child_of_an_amdgpu_user_does_not_start_it);
    tcase_add_test(tc, fork_during_the_amdgpu_start_does_not_start_it_in_the_child);
    tcase_add_test(tc, programs_fork_handler_does_not_start_amdgpu_in_the_child);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
