/*
 * DRM miniport on real kernel drivers: a failure injected at each DRM call
 * (KMTSHIM_DRM_FAULT / KMT_DRM_ESCAPE_SET_FAULT) fails the D3DKMT call that
 * made it with the errno's NTSTATUS and leaves nothing half made: no GEM
 * object (the next object gets the first free handle again), no mapping,
 * no binding, no core object.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "drm_test.h"

#define ALLOC_SIZE 8192u
#define SYSMEM_SIZE 16384u

/* A scenario touching every DRM call of the create and lock paths.
 * Returns the step that failed (0: none) and its status. */
static int scenario(D3DKMT_HANDLE device, NTSTATUS *status)
{
    D3DKMT_HANDLE allocs[2], res, sys;
    int step = 0;
    void *mem, *p;
    NTSTATUS s;

    ck_assert_int_eq(posix_memalign(&mem, 4096, SYSMEM_SIZE), 0);
    memset(mem, 0x5a, SYSMEM_SIZE);
    *status = STATUS_SUCCESS;
    if ((s = drm_test_create(device, 2, ALLOC_SIZE, allocs, &res, NULL))) {
        step = 1;
        goto out;
    }
    if ((s = drm_test_lock(device, allocs[0], 0, &p))) {
        step = 2;
        goto destroy_res;
    }
    memset(p, 0xa5, ALLOC_SIZE);
    ck_assert_status(drm_test_unlock(device, allocs[0]), STATUS_SUCCESS);
    if ((s = drm_test_create_sysmem(device, mem, SYSMEM_SIZE, &sys))) {
        step = 3;
        goto destroy_res;
    }
    ck_assert_status(drm_test_destroy(device, &sys, 1), STATUS_SUCCESS);
destroy_res:
    ck_assert_status(drm_test_destroy_resource(device, res), STATUS_SUCCESS);
out:
    free(mem);
    *status = s;
    return step;
}

static UINT first_handle(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device)
{
    D3DKMT_HANDLE alloc;
    UINT h;

    ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, NULL), STATUS_SUCCESS);
    h = drm_test_query(adapter, alloc).GemHandle;
    ck_assert_status(drm_test_destroy(device, &alloc, 1), STATUS_SUCCESS);
    return h;
}

static void assert_nothing_left(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, UINT baseline, unsigned live)
{
    drm_test_assert_no_buffers(adapter);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    ck_assert_uint_eq(first_handle(adapter, device), baseline);
}

START_TEST(every_call_fails_cleanly)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    drm_test_check_expected(a, n);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        UINT baseline = first_handle(a[i].handle, device);
        unsigned live = KmtLiveObjectCount(), failures = 0, nth;

        for (nth = 1; nth < 64; nth++) {
            NTSTATUS status;
            int step;
            KMT_DRM_STATS st;

            ck_assert_status(drm_test_set_fault(a[i].handle, "any", nth, ENOMEM), STATUS_SUCCESS);
            step = scenario(device, &status);
            st = drm_test_stats(a[i].handle);
            ck_assert_status(drm_test_set_fault(a[i].handle, "", 0, 0), STATUS_SUCCESS);
            if (!st.FaultsFired) {
                ck_assert_int_eq(step, 0);   /* fewer calls than nth: all went through */
                break;
            }
            ck_assert_uint_eq(st.FaultsFired, 1);
            if (step) {
                ck_assert_status(status, STATUS_NO_MEMORY);
                failures++;
            }
            assert_nothing_left(a[i].handle, device, baseline, live);
        }
        ck_assert_uint_lt(nth, 64);
        /* create x2, lock (map, mmap), sysmem create (create, map, mmap) at least */
        ck_assert_uint_ge(failures, 5);
        drm_test_destroy_device(device);
    }
}
END_TEST

struct named_fault {
    const char *family, *call;
    int err;
    int step;                            /* the scenario step that fails; 0: none */
    NTSTATUS status;
};

static const struct named_fault named[] = {
    { "dumb", "MODE_CREATE_DUMB", ENOSPC, 1, STATUS_GRAPHICS_NO_VIDEO_MEMORY },
    { "dumb", "MODE_MAP_DUMB", ENOMEM, 2, STATUS_NO_MEMORY },
    { "dumb", "mmap", ENOMEM, 2, STATUS_NO_MEMORY },
    { "virtio_gpu", "VIRTGPU_RESOURCE_CREATE", ENOMEM, 1, STATUS_NO_MEMORY },
    { "virtio_gpu", "VIRTGPU_WAIT", EBUSY, 2, STATUS_GRAPHICS_ALLOCATION_BUSY },
    { "virtio_gpu", "VIRTGPU_MAP", ENOMEM, 2, STATUS_NO_MEMORY },
    { "virtio_gpu", "mmap", ENOMEM, 2, STATUS_NO_MEMORY },
    /* Unlock cannot fail: the push to the host is retried at the next one */
    { "virtio_gpu", "VIRTGPU_TRANSFER_TO_HOST", EIO, 0, STATUS_SUCCESS },
    { "i915", "I915_GEM_CREATE", ENOMEM, 1, STATUS_NO_MEMORY },
    { "i915", "I915_GEM_MMAP_OFFSET", ENOMEM, 2, STATUS_NO_MEMORY },
    { "i915", "I915_GEM_WAIT", ETIME, 2, STATUS_GRAPHICS_ALLOCATION_BUSY },
    { "i915", "I915_GEM_USERPTR", ENOMEM, 3, STATUS_NO_MEMORY },
    { "xe", "XE_GEM_CREATE", ENOMEM, 1, STATUS_NO_MEMORY },
    { "xe", "XE_GEM_MMAP_OFFSET", ENOMEM, 2, STATUS_NO_MEMORY },
    { "amdgpu", "amdgpu_bo_alloc", ENOMEM, 1, STATUS_NO_MEMORY },
    { "amdgpu", "amdgpu_bo_export", EINVAL, 1, STATUS_INVALID_PARAMETER },
    { "amdgpu", "amdgpu_bo_cpu_map", ENOMEM, 2, STATUS_NO_MEMORY },
    { "amdgpu", "amdgpu_create_bo_from_user_mem", ENOMEM, 3, STATUS_NO_MEMORY },
};

START_TEST(named_calls_fail_with_their_errno)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n, tried = 0;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        UINT baseline = first_handle(a[i].handle, device);
        unsigned live = KmtLiveObjectCount();

        for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
            const struct named_fault *f = &named[k];
            NTSTATUS status;
            int step;

            if (strcmp(f->family, a[i].umd.Family))
                continue;
            ck_assert_status(drm_test_set_fault(a[i].handle, f->call, 1, f->err), STATUS_SUCCESS);
            step = scenario(device, &status);
            ck_assert_msg(drm_test_stats(a[i].handle).FaultsFired == 1, "%s was never called", f->call);
            ck_assert_msg(step == f->step, "%s: step %d failed, expected %d", f->call, step, f->step);
            ck_assert_status(status, f->status);
            assert_nothing_left(a[i].handle, device, baseline, live);
            tried++;
        }
        drm_test_destroy_device(device);
    }
    if (getenv("KMTSHIM_DRM_EXPECT"))
        ck_assert_uint_gt(tried, 0);
}
END_TEST

/* The second object of a resource fails: the first one is closed again. */
START_TEST(second_allocation_failing_rolls_back_the_first)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), allocs[3], res = 0;
        UINT baseline = first_handle(a[i].handle, device);
        unsigned live = KmtLiveObjectCount();

        /* the second DRM call: the second create (dumb, virtio_gpu, i915, xe),
         * or the first object's export (amdgpu) */
        ck_assert_status(drm_test_set_fault(a[i].handle, "any", 2, ENOSPC), STATUS_SUCCESS);
        ck_assert_status(drm_test_create(device, 3, 4096, allocs, &res, NULL), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
        ck_assert_uint_eq(res, 0);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        ck_assert_status(drm_test_set_fault(a[i].handle, "", 0, 0), STATUS_SUCCESS);
        assert_nothing_left(a[i].handle, device, baseline, live);
        drm_test_destroy_device(device);
    }
}
END_TEST

/* A negative errno stalls the call instead of failing it (a test widens a
 * race window with it): the create succeeds, later; absurd stalls are
 * refused. */
START_TEST(negative_errno_stalls_instead_of_failing)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        UINT64 start;

        ck_assert_status(drm_test_set_fault(a[i].handle, "any", 1, -(KMT_DRM_FAULT_MAX_STALL_MS + 1)),
                         STATUS_INVALID_PARAMETER);
        ck_assert_status(drm_test_set_fault(a[i].handle, "any", 1, -200), STATUS_SUCCESS);
        start = kmt_test_now_ms();
        ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, NULL), STATUS_SUCCESS);
        ck_assert_uint_ge(kmt_test_now_ms() - start, 200);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).FaultsFired, 1);
        ck_assert_status(drm_test_destroy(device, &alloc, 1), STATUS_SUCCESS);
        drm_test_destroy_device(device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* KMTSHIM_DRM_FAULT, read when the miniport loads: the first open (of the
 * first render node looked at) fails, and that device is not an adapter. */
START_TEST(environment_variable_arms_a_fault)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned nodes = drm_test_count_render_nodes();

    kmt_test_use_miniport("drm,soft");
    setenv("KMTSHIM_DRM_FAULT", "open:1", 1);
    ck_assert_uint_eq(drm_test_adapters(a, DRM_TEST_MAX), nodes ? nodes - 1 : 0);
    kmt_test_shutdown_no_leaks();
    setenv("KMTSHIM_DRM_FAULT", "nonsense", 1);
    ck_assert_uint_eq(drm_test_adapters(a, DRM_TEST_MAX), nodes);
    unsetenv("KMTSHIM_DRM_FAULT");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_fault");
    TCase *tc = tcase_create("fault");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_call_fails_cleanly);
    tcase_add_test(tc, named_calls_fail_with_their_errno);
    tcase_add_test(tc, second_allocation_failing_rolls_back_the_first);
    tcase_add_test(tc, negative_errno_stalls_instead_of_failing);
    tcase_add_test(tc, environment_variable_arms_a_fault);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
