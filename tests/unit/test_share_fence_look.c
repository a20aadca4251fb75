/*
 * A blocking CPU wait on a shared monitored fence looks at the value for a
 * moment before it counts itself a watcher and sleeps, but only when the
 * last CPU signal of the fence came from another CPU (wait.c,
 * shared_fence.c): the page records that CPU, a look that finds nothing
 * shortens the next one, and hand-overs between threads on two CPUs still
 * lose no wake-up.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "cpu_pin.h"
#include "exec_util.h"
#include "shared_state_probe.h"

#define ROUNDS 2000

static D3DKMT_HANDLE adapter, device;
static int cpus[2];                      /* the first two CPUs this process may run on */
static int ncpus;

static void setup(void)
{
    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ncpus = kmt_test_first_cpus(cpus, 2);
}

static D3DKMT_HANDLE shared_fence(const struct dxgk_shared_fence_page **page)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.Flags.Shared = 1;
    ck_assert_status(D3DKMTCreateSynchronizationObject2(&cs), STATUS_SUCCESS);
    *page = (const void *)cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    return cs.hSyncObject;
}

/* The page names the CPU the last CPU signal ran on. */
START_TEST(cpu_signal_records_its_cpu)
{
    const struct dxgk_shared_fence_page *page;
    D3DKMT_HANDLE fence;

    setup();
    fence = shared_fence(&page);
    ck_assert_uint_eq(atomic_load(&page->signal_cpu), 0);
    for (int i = 0; i < ncpus; i++) {
        kmt_test_pin(cpus[i]);
        ck_assert_status(kmt_fence_signal(device, fence, i + 1, 0), STATUS_SUCCESS);
        ck_assert_uint_eq(atomic_load(&page->signal_cpu), (unsigned)cpus[i] + 1);
    }
    kmt_test_unpin(cpus, ncpus);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Signalled from the waiter's own CPU, a wait never looks (the signaller
 * cannot run meanwhile); from another CPU it looks, and each look that
 * finds nothing makes the next one shorter, down to a floor above 0.
 * The timed waits end in STATUS_TIMEOUT either way. */
START_TEST(wait_looks_only_after_a_signal_elsewhere)
{
    const struct dxgk_shared_fence_page *page;
    unsigned last, now;
    D3DKMT_HANDLE fence;

    setup();
    if (ncpus < 2) {
        kmt_test_shutdown_no_leaks();
        return;                          /* one CPU: every signal comes from here */
    }
    fence = shared_fence(&page);
    kmt_test_pin(cpus[0]);
    ck_assert_status(kmt_fence_signal(device, fence, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence, 2, 1), STATUS_TIMEOUT);
    ck_assert_uint_eq(kmt_probe_spin_ns(fence), 0);
    kmt_test_pin(cpus[1]);
    ck_assert_status(kmt_fence_wait(device, fence, 2, 1), STATUS_TIMEOUT);
    last = kmt_probe_spin_ns(fence);
    ck_assert_uint_gt(last, 0);
    for (int i = 0; i < 16; i++) {
        ck_assert_status(kmt_fence_wait(device, fence, 2, 1), STATUS_TIMEOUT);
        now = kmt_probe_spin_ns(fence);
        ck_assert_uint_gt(now, 0);
        ck_assert_uint_le(now, last);
        last = now;
    }
    /* settled at the floor: one more look that finds nothing keeps it */
    ck_assert_status(kmt_fence_wait(device, fence, 2, 1), STATUS_TIMEOUT);
    ck_assert_uint_eq(kmt_probe_spin_ns(fence), last);
    ck_assert_uint_eq(atomic_load(&page->watchers), 0);
    kmt_test_unpin(cpus, ncpus);
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct side {
    D3DKMT_HANDLE mine, theirs;          /* signals mine, waits for theirs */
    int cpu;
    bool first;                          /* signals before it waits */
    NTSTATUS status;
};

static void *play(void *arg)
{
    struct side *s = arg;

    if (kmt_test_pin_to(s->cpu))
        s->status = STATUS_UNSUCCESSFUL;
    for (UINT64 v = 1; v <= ROUNDS && !s->status; v++) {
        if (s->first && (s->status = kmt_fence_signal(device, s->mine, v, 0)))
            break;
        if ((s->status = kmt_fence_wait(device, s->theirs, v, -1)))
            break;
        if (!s->first)
            s->status = kmt_fence_signal(device, s->mine, v, 0);
    }
    return NULL;
}

/* Two threads on two CPUs hand two shared fences back and forth: whether
 * a hand-over lands in the look, between the look and the sleep, or in
 * the sleep, every wait ends (a lost wake-up hangs the row until its
 * timeout fails it) and nobody stays counted a watcher. */
START_TEST(pingpong_across_cpus_loses_no_wakeup)
{
    const struct dxgk_shared_fence_page *ping_page, *pong_page;
    D3DKMT_HANDLE ping, pong;
    struct side a, b;
    pthread_t ta, tb;

    setup();
    ping = shared_fence(&ping_page);
    pong = shared_fence(&pong_page);
    a = (struct side){ ping, pong, cpus[0], true, 0 };
    b = (struct side){ pong, ping, cpus[ncpus - 1], false, 0 };
    ck_assert_int_eq(pthread_create(&ta, NULL, play, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, play, &b), 0);
    ck_assert_int_eq(pthread_join(ta, NULL), 0);
    ck_assert_int_eq(pthread_join(tb, NULL), 0);
    ck_assert_status(a.status, STATUS_SUCCESS);
    ck_assert_status(b.status, STATUS_SUCCESS);
    ck_assert_uint_eq(atomic_load(&ping_page->value), ROUNDS);
    ck_assert_uint_eq(atomic_load(&pong_page->value), ROUNDS);
    ck_assert_uint_eq(atomic_load(&ping_page->watchers), 0);
    ck_assert_uint_eq(atomic_load(&pong_page->watchers), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("share_fence_look");
    TCase *tc = tcase_create("share_fence_look");

    (void)argc;
    (void)argv;
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cpu_signal_records_its_cpu);
    tcase_add_test(tc, wait_looks_only_after_a_signal_elsewhere);
    tcase_add_test(tc, pingpong_across_cpus_loses_no_wakeup);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
