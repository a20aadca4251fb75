/*
 * Shared mutexes, semaphores and legacy fences (dxgkrnl/syncobj_shared_state.h)
 * over the DRM miniport, end to end on the fake kernel (fake_drm.c, the
 * fake i915 with timeline syncobjs, found through its render node as a
 * GPU would be).  One process here: the object is created shared and
 * opened again by its global handle, and the two local objects, as two
 * processes' would, meet only in the shared page.  A GPU wait on one
 * context through one handle is released by a GPU signal on another
 * context through the other; the progress fences the contexts signal
 * after their waits are the miniport's timeline syncobjs.
 * tests/unit/test_share_legacy_sync does the same across two processes on
 * the soft adapter.
 */
#include "config.h"

#include "drm_test.h"
#include "exec_util.h"
#include "fake_drm.h"
#include "shared_state_probe.h"

#define BOUND_MS 20000                   /* a bound on something that must happen, not a timing */

static D3DKMT_HANDLE adapter, device, waiter, signaller;
static struct kmt_fence progress;        /* the waiter signals it after each of its waits */
static UINT64 step;

static void start(void)
{
    const struct fake_drm_config c = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
    static struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL };
    static char path[64];

    ck_assert_int_ge(fake_drm_open(&c), 0);
    ck_assert_int_eq(fake_drm_device_path(path, sizeof(path)), 0);
    dev.render_node = path;
    fake_drm_set_devices(&dev, 1, "i915");
    kmt_test_private_broker();
    kmt_test_use_miniport("drm");
    device = kmt_test_create_device(&adapter);
    waiter = kmt_exec_virtual_context(device);
    signaller = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &progress), STATUS_SUCCESS);
    ck_assert_uint_gt(fake_drm.live_syncobjs, 0);    /* the miniport's fence: the fake drives it */
    step = 0;
}

static void stop(void)
{
    kmt_test_shutdown_no_leaks();
    ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

/* A shared object and a second local object opened by its global handle. */
static void create_pair(D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, D3DKMT_HANDLE *created, D3DKMT_HANDLE *opened)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };

    info.Type = type;
    info.Flags.Shared = 1;
    if (type == D3DDDI_SEMAPHORE)
        info.Semaphore.MaxCount = 2;
    ck_assert_status(kmt_syncobj_create2(device, &info, created), STATUS_SUCCESS);
    o.hSharedHandle = info.SharedHandle;
    ck_assert_status(D3DKMTOpenSynchronizationObject(&o), STATUS_SUCCESS);
    *opened = o.hSyncObject;
    ck_assert_ptr_ne(kmt_probe_page(*created), kmt_probe_page(*opened));   /* two mappings, one page */
}

/* The waiter waits for `h` (a legacy fence: for `value`) and then signals
 * progress; the step it reaches. */
static UINT64 queue_wait(D3DKMT_HANDLE h, UINT64 value)
{
    ck_assert_status(kmt_wait2(waiter, h, value), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(waiter, progress.handle, ++step), STATUS_SUCCESS);
    return step;
}

static void blocked(D3DKMT_HANDLE h, UINT64 s)
{
    ck_assert_msg(kmt_probe_gpu_blocked(h, BOUND_MS), "the GPU wait did not block");
    ck_assert_uint_eq(*progress.cpu, s - 1);
}

static void reached(UINT64 s)
{
    ck_assert_status(kmt_fence_wait(device, progress.handle, s, BOUND_MS), STATUS_SUCCESS);
}

static void destroy_pair(D3DKMT_HANDLE a, D3DKMT_HANDLE b)
{
    ck_assert_status(kmt_syncobj_destroy(a), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(b), STATUS_SUCCESS);
}

/* A wait through the opened handle blocks until the other context signals
 * through the created one (a mutex: taken through the created one
 * first); the page's value after. */
static UINT64 released_through_the_other(D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, UINT64 value)
{
    D3DKMT_HANDLE created, opened;
    UINT64 s, after;

    start();
    create_pair(type, &created, &opened);
    if (type == D3DDDI_SYNCHRONIZATION_MUTEX)
        reached(queue_wait(created, 0));
    s = queue_wait(opened, value);
    blocked(opened, s);
    ck_assert_status(kmt_signal2(signaller, created, value), STATUS_SUCCESS);
    reached(s);
    after = atomic_load(&kmt_probe_page(opened)->value);
    destroy_pair(created, opened);
    stop();
    return after;
}

START_TEST(semaphore_signalled_through_one_handle_releases_a_wait_through_the_other)
{
    ck_assert_uint_eq(released_through_the_other(D3DDDI_SEMAPHORE, 0), 0);   /* the wait took the count */
}
END_TEST

START_TEST(mutex_taken_through_one_handle_is_owned_for_the_other)
{
    released_through_the_other(D3DDDI_SYNCHRONIZATION_MUTEX, 0);
}
END_TEST

START_TEST(legacy_fence_value_is_one)
{
    ck_assert_uint_eq(released_through_the_other(D3DDDI_FENCE, 5), 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_shared_state");
    TCase *tc = tcase_create("drm_shared_state");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, semaphore_signalled_through_one_handle_releases_a_wait_through_the_other);
    tcase_add_test(tc, mutex_taken_through_one_handle_is_owned_for_the_other);
    tcase_add_test(tc, legacy_fence_value_is_one);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
