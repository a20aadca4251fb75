/*
 * A flip present racing with DestroyDevice of its device, in the window
 * where the destroy has removed the handle and told the flip queue, but
 * waits for the present's hold on the device: the flip must not be
 * queued, since the destroy's sweep of the queue is over.  The program
 * is linked with --wrap=dxgk_flip_devices_gone: the present's read of the
 * count is where the test has the destroy run, up to its wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "exec_util.h"

#define SIZE (32u * 1024u)

struct dxgk_adapter;
UINT64 __real_dxgk_flip_devices_gone(struct dxgk_adapter *adapter);
UINT64 __wrap_dxgk_flip_devices_gone(struct dxgk_adapter *adapter);

static D3DKMT_HANDLE device;
static LUID luid;
static bool destroy_in_the_read;
static pthread_t destroyer;
static NTSTATUS destroy_status;

static void *destroy_thread(void *arg)
{
    D3DKMT_DESTROYDEVICE d = { .hDevice = device };

    (void)arg;
    destroy_status = D3DKMTDestroyDevice(&d);
    return NULL;
}

/* Once armed: starts the destroy and returns the count once the destroy
 * has bumped it (it then waits for the present to let the device go). */
UINT64 __wrap_dxgk_flip_devices_gone(struct dxgk_adapter *adapter)
{
    UINT64 before = __real_dxgk_flip_devices_gone(adapter), now;

    if (!destroy_in_the_read)
        return before;
    destroy_in_the_read = false;
    ck_assert_int_eq(pthread_create(&destroyer, NULL, destroy_thread, NULL), 0);
    while ((now = __real_dxgk_flip_devices_gone(adapter)) == before)
        sched_yield();
    return now;
}

static UINT queued_presents(void)
{
    D3DKMT_QUERYSTATISTICS q;

    memset(&q, 0, sizeof(q));
    q.Type = D3DKMT_QUERYSTATISTICS_VIDPNSOURCE;
    q.AdapterLuid = luid;
    ck_assert_status(D3DKMTQueryStatistics(&q), STATUS_SUCCESS);
    return q.QueryResult.VidPnSourceInformation.GlobalInformation.QueuedPresent;
}

/* A Flip present, through the device or one of its contexts, whose
 * device is destroyed while the call holds it. */
static void flip_racing_destroy(bool through_context)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_PRESENT p;
    D3DKMT_HANDLE src;

    unsetenv("KMTSHIM_SOFT_SOURCES");
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(NULL);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    luid = info[0].AdapterLuid;
    ck_assert_status(kmt_test_create_allocations(device, 1, SIZE, &src, NULL), STATUS_SUCCESS);

    memset(&p, 0, sizeof(p));
    p.hDevice = through_context ? kmt_exec_virtual_context(device) : device;
    p.hSource = src;
    p.Flags.Flip = 1;
    p.FlipInterval = D3DDDI_FLIP_INTERVAL_FOUR;
    destroy_in_the_read = true;
    ck_assert_status(D3DKMTPresent(&p), STATUS_INVALID_PARAMETER);
    ck_assert_int_eq(pthread_join(destroyer, NULL), 0);
    ck_assert_status(destroy_status, STATUS_SUCCESS);
    ck_assert_uint_eq(queued_presents(), 0);
    kmt_test_shutdown_no_leaks();
}

START_TEST(flip_through_the_device_racing_destroy_is_not_queued)
{
    flip_racing_destroy(false);
}
END_TEST

START_TEST(flip_through_a_context_racing_destroy_is_not_queued)
{
    flip_racing_destroy(true);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("present_destroy");
    TCase *tc = tcase_create("race");

    tcase_add_test(tc, flip_through_the_device_racing_destroy_is_not_queued);
    tcase_add_test(tc, flip_through_a_context_racing_destroy_is_not_queued);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
