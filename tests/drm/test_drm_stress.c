/*
 * DRM miniport on real kernel drivers: concurrent create/lock/destroy from
 * two threads, on one device and across adapters.  Afterwards the kernel
 * must hold no object of ours: the next object gets the handle the first
 * one had (GEM handles are the lowest free number of the fd).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "drm_test.h"

#define ROUNDS 150

struct worker {
    D3DKMT_HANDLE device;
    unsigned seed;
    bool racing;                         /* the device may die under us: no touching */
    NTSTATUS failed;                     /* first failure, or 0 */
    unsigned done;
};

static void *churn(void *arg)
{
    struct worker *w = arg;

    for (unsigned r = 0; r < ROUNDS && !w->failed; r++) {
        D3DKMT_HANDLE allocs[2], res;
        NTSTATUS s;
        void *p;

        if ((s = drm_test_create(w->device, 2, 4096 * (1 + r % 4), allocs, r % 2 ? &res : NULL, NULL))) {
            w->failed = s;
            break;
        }
        if ((s = drm_test_lock(w->device, allocs[r % 2], 0, &p))) {
            w->failed = s;
            break;
        }
        if (!w->racing)
            ((volatile unsigned *)p)[0] = w->seed + r;
        if ((s = drm_test_unlock(w->device, allocs[r % 2])))
            w->failed = s;
        s = r % 2 ? drm_test_destroy_resource(w->device, res) : drm_test_destroy(w->device, allocs, 2);
        if (s && !w->failed)
            w->failed = s;
        __atomic_fetch_add(&w->done, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static UINT first_handle(const struct drm_test_adapter *a, D3DKMT_HANDLE device)
{
    D3DKMT_HANDLE alloc;
    UINT h;

    ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, NULL), STATUS_SUCCESS);
    h = drm_test_query(a->handle, alloc).GemHandle;
    ck_assert_status(drm_test_destroy(device, &alloc, 1), STATUS_SUCCESS);
    return h;
}

static void assert_clean(const struct drm_test_adapter *a, D3DKMT_HANDLE device, UINT baseline)
{
    drm_test_assert_no_buffers(a->handle);
    ck_assert_uint_eq(first_handle(a, device), baseline);
}

START_TEST(two_threads_on_one_device)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    drm_test_check_expected(a, n);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        struct worker w[2] = { { device, 1, false, 0, 0 }, { device, 2, false, 0, 0 } };
        pthread_t t[2];
        UINT baseline = first_handle(&a[i], device);

        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(pthread_create(&t[k], NULL, churn, &w[k]), 0);
        for (int k = 0; k < 2; k++) {
            pthread_join(t[k], NULL);
            ck_assert_msg(!w[k].failed, "thread %d failed with 0x%08x", k, (unsigned)w[k].failed);
            ck_assert_uint_eq(w[k].done, ROUNDS);
        }
        assert_clean(&a[i], device, baseline);
        drm_test_destroy_device(device);
    }
}
END_TEST

START_TEST(one_thread_per_adapter)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    struct worker w[DRM_TEST_MAX];
    pthread_t t[DRM_TEST_MAX];
    UINT baseline[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        w[i] = (struct worker){ drm_test_create_device(a[i].handle), i, false, 0, 0 };
        baseline[i] = first_handle(&a[i], w[i].device);
    }
    for (unsigned i = 0; i < n; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn, &w[i]), 0);
    for (unsigned i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(!w[i].failed, "adapter %u failed with 0x%08x", i, (unsigned)w[i].failed);
        assert_clean(&a[i], w[i].device, baseline[i]);
        drm_test_destroy_device(w[i].device);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* One thread destroys the device while another still creates on it: every
 * call either worked or was refused, and nothing is left in the kernel. */
START_TEST(destroy_device_under_a_creating_thread)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE probe_device = drm_test_create_device(a[i].handle);
        UINT baseline = first_handle(&a[i], probe_device);
        struct worker w = { drm_test_create_device(a[i].handle), 7, true, 0, 0 };
        pthread_t t;

        ck_assert_int_eq(pthread_create(&t, NULL, churn, &w), 0);
        while (!__atomic_load_n(&w.done, __ATOMIC_RELAXED))
            sched_yield();
        drm_test_destroy_device(w.device);
        pthread_join(t, NULL);
        /* the worker stopped at the first refused call */
        ck_assert(w.failed == STATUS_INVALID_PARAMETER || w.done == ROUNDS);
        assert_clean(&a[i], probe_device, baseline);
        drm_test_destroy_device(probe_device);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_stress");
    TCase *tc = tcase_create("stress");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, two_threads_on_one_device);
    tcase_add_test(tc, one_thread_per_adapter);
    tcase_add_test(tc, destroy_device_under_a_creating_thread);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
