/*
 * Concurrency of execution on the software adapter: producer/consumer
 * threads over monitored fences (no lost, early or spurious wake-ups),
 * concurrent submission from several threads and contexts, and signals,
 * waits and submissions racing with the destruction of what they use.
 *
 * Threads never call ck_assert (Check is not thread-safe): they count what
 * went wrong and the test thread asserts the counts.  Every wait has a
 * generous timeout, so a lost wake-up fails as STATUS_TIMEOUT instead of
 * hanging the suite.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "exec_util.h"

#define ITERATIONS 10000
#define MAX_CONSUMERS 3

static D3DKMT_HANDLE adapter, device;

static void setup_device(void)
{
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

/* ---- producer / consumer ------------------------------------------------------------- */

struct pc {
    struct kmt_fence ping, pong[MAX_CONSUMERS];
    unsigned consumers;
    bool async_consumers;                /* consumers wait with an eventfd */
    D3DKMT_HANDLE producer_context;      /* non-zero: the producer signals from the GPU queue */
};

struct pc_thread {
    struct pc *pc;
    unsigned index;
    unsigned timeouts, bad_status, early, skipped;
};

static void *producer(void *arg)
{
    struct pc_thread *t = arg;
    struct pc *pc = t->pc;
    D3DKMT_HANDLE h[MAX_CONSUMERS];

    for (unsigned j = 0; j < pc->consumers; j++)
        h[j] = pc->pong[j].handle;
    for (UINT64 i = 1; i <= ITERATIONS; i++) {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
        UINT64 v[MAX_CONSUMERS] = { i, i, i };
        NTSTATUS status = pc->producer_context ? kmt_gpu_signal(pc->producer_context, pc->ping.handle, i)
                                               : kmt_fence_signal(device, pc->ping.handle, i, 0);

        if (status)
            t->bad_status++;
        w.hDevice = device;
        w.ObjectCount = pc->consumers;
        w.ObjectHandleArray = h;
        w.FenceValueArray = v;
        status = KmtWaitForSynchronizationObjectFromCpuTimeout(&w, KMT_EXEC_WAIT_MS);
        if (status == STATUS_TIMEOUT) {
            t->timeouts++;
            break;
        }
        if (status)
            t->bad_status++;
        for (unsigned j = 0; j < pc->consumers; j++)
            if (*pc->pong[j].cpu < i)
                t->early++;
    }
    return NULL;
}

static NTSTATUS consumer_wait(struct pc *pc, UINT64 i, int fd)
{
    NTSTATUS status;

    if (!pc->async_consumers)
        return kmt_fence_wait_or_event(device, pc->ping.handle, i, NULL, KMT_EXEC_WAIT_MS);
    if ((status = kmt_fence_wait_or_event(device, pc->ping.handle, i, kmt_event_handle(fd), 0)))
        return status;
    {
        struct pollfd p = { fd, POLLIN, 0 };
        uint64_t count;

        if (poll(&p, 1, KMT_EXEC_WAIT_MS) != 1)
            return STATUS_TIMEOUT;
        if (read(fd, &count, sizeof(count)) != sizeof(count) || count != 1)
            return STATUS_UNSUCCESSFUL;    /* set more than once */
    }
    return STATUS_SUCCESS;
}

static void *consumer(void *arg)
{
    struct pc_thread *t = arg;
    struct pc *pc = t->pc;
    int fd = pc->async_consumers ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;

    if (pc->async_consumers && fd < 0) {
        t->bad_status++;
        return NULL;
    }
    for (UINT64 i = 1; i <= ITERATIONS; i++) {
        NTSTATUS status = consumer_wait(pc, i, fd);
        UINT64 seen;

        if (status == STATUS_TIMEOUT) {
            t->timeouts++;
            break;
        }
        if (status)
            t->bad_status++;
        /* never early; and the producer waits for us, so never past i either */
        seen = *pc->ping.cpu;
        if (seen < i)
            t->early++;
        if (seen > i)
            t->skipped++;
        if (kmt_fence_signal(device, pc->pong[t->index].handle, i, 0))
            t->bad_status++;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void run_producer_consumer(struct pc *pc)
{
    struct pc_thread threads[1 + MAX_CONSUMERS];
    pthread_t tid[1 + MAX_CONSUMERS];

    ck_assert_status(kmt_fence_create(device, 0, 0, &pc->ping), STATUS_SUCCESS);
    for (unsigned j = 0; j < pc->consumers; j++)
        ck_assert_status(kmt_fence_create(device, 0, 0, &pc->pong[j]), STATUS_SUCCESS);
    memset(threads, 0, sizeof(threads));
    for (unsigned j = 0; j <= pc->consumers; j++) {
        threads[j].pc = pc;
        threads[j].index = j ? j - 1 : 0;
        ck_assert_int_eq(pthread_create(&tid[j], NULL, j ? consumer : producer, &threads[j]), 0);
    }
    for (unsigned j = 0; j <= pc->consumers; j++) {
        pthread_join(tid[j], NULL);
        ck_assert_msg(!threads[j].timeouts, "thread %u: a wait timed out (lost wake-up)", j);
        ck_assert_msg(!threads[j].bad_status, "thread %u: %u calls failed", j, threads[j].bad_status);
        ck_assert_msg(!threads[j].early, "thread %u: %u waits returned early", j, threads[j].early);
        ck_assert_msg(!threads[j].skipped, "thread %u: %u values skipped", j, threads[j].skipped);
    }
    ck_assert_uint_eq(*pc->ping.cpu, ITERATIONS);
    for (unsigned j = 0; j < pc->consumers; j++)
        ck_assert_uint_eq(*pc->pong[j].cpu, ITERATIONS);
}

START_TEST(producer_consumer_two_threads)
{
    struct pc pc = { .consumers = 1 };

    setup_device();
    run_producer_consumer(&pc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(producer_consumer_four_threads)
{
    struct pc pc = { .consumers = 3 };

    setup_device();
    run_producer_consumer(&pc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(producer_consumer_async_events)
{
    struct pc pc = { .consumers = 3, .async_consumers = true };

    setup_device();
    run_producer_consumer(&pc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(producer_consumer_through_the_gpu_queue)
{
    struct pc pc = { .consumers = 1 };

    setup_device();
    pc.producer_context = kmt_exec_virtual_context(device);
    run_producer_consumer(&pc);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- concurrent submission ----------------------------------------------------------------- */

#define SUBMITTERS 4
#define SUBMISSIONS 500

struct submitter {
    D3DKMT_HANDLE device, context;
    struct kmt_fence fence;
    struct kmt_buf target, ring;
    unsigned timeouts, bad_status, wrong_value;
};

static void *submit_thread(void *arg)
{
    struct submitter *s = arg;

    for (UINT64 i = 1; i <= SUBMISSIONS; i++) {
        D3DKMT_SUBMITCOMMAND sc = { 0 };
        KMT_SOFT_CMD_FENCE cmds[2] = { 0 };
        NTSTATUS status;

        cmds[0].Header.Opcode = KMT_SOFT_OP_WRITE64;
        cmds[0].Header.Size = sizeof(cmds[0]);
        cmds[0].Va = s->target.va + (i % 64) * 8;
        cmds[0].Value = i;
        cmds[1].Header.Opcode = KMT_SOFT_OP_SIGNAL_FENCE;
        cmds[1].Header.Size = sizeof(cmds[1]);
        cmds[1].Va = s->fence.gpu;
        cmds[1].Value = i;
        /* the previous buffer was read: its fence signaled after it ran */
        memcpy(s->ring.cpu, cmds, sizeof(cmds));
        sc.Commands = s->ring.va;
        sc.CommandLength = sizeof(cmds);
        sc.BroadcastContextCount = 1;
        sc.BroadcastContext[0] = s->context;
        if (D3DKMTSubmitCommand(&sc)) {
            s->bad_status++;
            break;
        }
        status = kmt_fence_wait_or_event(s->device, s->fence.handle, i, NULL, KMT_EXEC_WAIT_MS);
        if (status == STATUS_TIMEOUT) {
            s->timeouts++;
            break;
        }
        if (status)
            s->bad_status++;
        if (*s->fence.cpu != i || ((const UINT64 *)s->target.cpu)[i % 64] != i)
            s->wrong_value++;
    }
    return NULL;
}

START_TEST(concurrent_submissions)
{
    struct submitter s[SUBMITTERS];
    pthread_t t[SUBMITTERS];
    D3DKMT_HANDLE other;
    UINT64 before;

    setup_device();
    other = kmt_test_create_device(NULL);
    memset(s, 0, sizeof(s));
    before = kmt_test_soft_stats(adapter).Stats.CommandsExecuted;
    for (unsigned i = 0; i < SUBMITTERS; i++) {
        /* three contexts on one device, one on another */
        s[i].device = i == SUBMITTERS - 1 ? other : device;
        s[i].context = kmt_exec_virtual_context(s[i].device);
        ck_assert_status(kmt_fence_create(s[i].device, 0, 0, &s[i].fence), STATUS_SUCCESS);
        kmt_buf_create(s[i].device, 4096, &s[i].target);
        kmt_buf_create(s[i].device, 4096, &s[i].ring);
    }
    for (unsigned i = 0; i < SUBMITTERS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, submit_thread, &s[i]), 0);
    for (unsigned i = 0; i < SUBMITTERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(!s[i].timeouts, "submitter %u: a wait timed out", i);
        ck_assert_msg(!s[i].bad_status, "submitter %u: %u calls failed", i, s[i].bad_status);
        ck_assert_msg(!s[i].wrong_value, "submitter %u: %u wrong values", i, s[i].wrong_value);
    }
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.CommandsExecuted - before,
                      SUBMITTERS * SUBMISSIONS * 2);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_int_eq(kmt_exec_state(other), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- racing with destruction ----------------------------------------------------------------- */

struct victim {
    D3DKMT_HANDLE fence, context;
    atomic_bool stop;
    atomic_uint bad_status, timeouts, async_started, async_set;
};

static void *cpu_signaler(void *arg)
{
    struct victim *v = arg;

    for (UINT64 i = 1; !atomic_load(&v->stop); i++) {
        NTSTATUS status = kmt_fence_signal(device, v->fence, i, 0);
        if (status == STATUS_INVALID_PARAMETER)
            break;                              /* destroyed */
        if (status)
            atomic_fetch_add(&v->bad_status, 1);
    }
    return NULL;
}

static void *gpu_signaler(void *arg)
{
    struct victim *v = arg;

    for (UINT64 i = 1; !atomic_load(&v->stop); i++) {
        NTSTATUS status = kmt_gpu_signal(v->context, v->fence, i);
        if (status == STATUS_INVALID_PARAMETER)
            break;
        if (status)
            atomic_fetch_add(&v->bad_status, 1);
    }
    return NULL;
}

static void *blocking_waiter(void *arg)
{
    struct victim *v = arg;

    while (!atomic_load(&v->stop)) {
        NTSTATUS status = kmt_fence_wait_or_event(device, v->fence, UINT64_MAX - 1, NULL, KMT_EXEC_WAIT_MS);
        if (status == STATUS_ABANDONED || status == STATUS_INVALID_PARAMETER)
            break;
        if (status == STATUS_TIMEOUT)
            atomic_fetch_add(&v->timeouts, 1);
        else if (status)
            atomic_fetch_add(&v->bad_status, 1);
    }
    return NULL;
}

static void *async_waiter(void *arg)
{
    struct victim *v = arg;
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    if (fd < 0) {
        atomic_fetch_add(&v->bad_status, 1);
        return NULL;
    }
    for (UINT64 i = 1; !atomic_load(&v->stop); i++) {
        NTSTATUS status = kmt_fence_wait_or_event(device, v->fence, i * 7, kmt_event_handle(fd), 0);
        if (status == STATUS_INVALID_PARAMETER)
            break;
        if (status) {
            atomic_fetch_add(&v->bad_status, 1);
            continue;
        }
        atomic_fetch_add(&v->async_started, 1);
    }
    /* every wait that started sets the event once: satisfied or abandoned */
    for (unsigned waited = 0; waited < KMT_EXEC_WAIT_MS; waited++) {
        uint64_t count;
        if (read(fd, &count, sizeof(count)) == sizeof(count))
            atomic_fetch_add(&v->async_set, (unsigned)count);
        if (atomic_load(&v->async_set) >= atomic_load(&v->async_started))
            break;
        kmt_sleep_ms(1);
    }
    close(fd);
    return NULL;
}

START_TEST(signal_and_wait_race_with_destroy)
{
    void *(*const roles[])(void *) = { cpu_signaler, gpu_signaler, blocking_waiter, async_waiter };
    const unsigned nroles = sizeof(roles) / sizeof(roles[0]);

    setup_device();
    for (unsigned round = 0; round < 100; round++) {
        struct victim v = { 0 };
        struct kmt_fence f;
        pthread_t t[4];

        ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
        v.fence = f.handle;
        v.context = kmt_exec_virtual_context(device);
        for (unsigned i = 0; i < nroles; i++)
            ck_assert_int_eq(pthread_create(&t[i], NULL, roles[i], &v), 0);
        kmt_sleep_ms(round % 4);
        ck_assert_status(kmt_syncobj_destroy(f.handle), STATUS_SUCCESS);
        atomic_store(&v.stop, true);
        for (unsigned i = 0; i < nroles; i++)
            pthread_join(t[i], NULL);
        ck_assert_uint_eq(atomic_load(&v.bad_status), 0);
        ck_assert_uint_eq(atomic_load(&v.timeouts), 0);
        ck_assert_uint_eq(atomic_load(&v.async_set), atomic_load(&v.async_started));
        ck_assert_status(kmt_exec_destroy_context(v.context), STATUS_SUCCESS);
    }
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct any_race {
    struct kmt_fence a, b;
    atomic_bool stop;
    atomic_uint bad_status, timeouts;
};

static void *any_signaler(void *arg)
{
    struct any_race *r = arg;

    for (UINT64 i = 1; !atomic_load(&r->stop); i++)
        if (kmt_fence_signal(device, r->a.handle, i, 0))
            atomic_fetch_add(&r->bad_status, 1);
    return NULL;
}

/* An async wait on several objects, completed by a signal on the first
 * while the waiter is still registering on the others. */
START_TEST(async_wait_any_races_with_signal)
{
    struct any_race r = { 0 };
    pthread_t t;
    int fd;

    setup_device();
    ck_assert_status(kmt_fence_create(device, 0, 0, &r.a), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &r.b), STATUS_SUCCESS);
    fd = kmt_eventfd();
    ck_assert_int_eq(pthread_create(&t, NULL, any_signaler, &r), 0);
    for (unsigned i = 0; i < 20000; i++) {
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
        D3DKMT_HANDLE h[4] = { r.a.handle, r.b.handle, r.b.handle, r.b.handle };
        UINT64 v[4] = { *r.a.cpu + 1, UINT64_MAX, UINT64_MAX, UINT64_MAX };

        w.hDevice = device;
        w.ObjectCount = 4;
        w.ObjectHandleArray = h;
        w.FenceValueArray = v;
        w.Flags.WaitAny = 1;
        w.hAsyncEvent = kmt_event_handle(fd);
        if (D3DKMTWaitForSynchronizationObjectFromCpu(&w)) {
            atomic_fetch_add(&r.bad_status, 1);
            break;
        }
        if (!kmt_event_wait(fd, KMT_EXEC_WAIT_MS)) {
            atomic_fetch_add(&r.timeouts, 1);
            break;
        }
    }
    atomic_store(&r.stop, true);
    pthread_join(t, NULL);
    ck_assert_uint_eq(atomic_load(&r.bad_status), 0);
    ck_assert_uint_eq(atomic_load(&r.timeouts), 0);
    close(fd);
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct submit_race {
    D3DKMT_HANDLE context;
    struct kmt_buf ring;
    atomic_uint bad_status, accepted;
};

static void *nop_submitter(void *arg)
{
    struct submit_race *r = arg;

    for (;;) {
        NTSTATUS status = kmt_submit_va(r->context, r->ring.va, 8);
        if (status == STATUS_INVALID_PARAMETER)
            break;                              /* the context is gone */
        if (status) {
            atomic_fetch_add(&r->bad_status, 1);
            break;
        }
        atomic_fetch_add(&r->accepted, 1);
    }
    return NULL;
}

START_TEST(submit_races_with_destroy_context)
{
    struct kmt_buf ring;
    UINT64 before;
    unsigned accepted = 0;

    setup_device();
    kmt_buf_create(device, 4096, &ring);
    ((KMT_SOFT_CMD_HEADER *)ring.cpu)->Opcode = KMT_SOFT_OP_NOP;
    ((KMT_SOFT_CMD_HEADER *)ring.cpu)->Size = sizeof(KMT_SOFT_CMD_HEADER);
    before = kmt_test_soft_stats(adapter).Stats.CommandsExecuted;
    for (unsigned round = 0; round < 50; round++) {
        struct submit_race r = { 0 };
        pthread_t t[2];

        r.context = kmt_exec_virtual_context(device);
        r.ring = ring;
        for (unsigned i = 0; i < 2; i++)
            ck_assert_int_eq(pthread_create(&t[i], NULL, nop_submitter, &r), 0);
        kmt_sleep_ms(round % 3);
        ck_assert_status(kmt_exec_destroy_context(r.context), STATUS_SUCCESS);
        for (unsigned i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        ck_assert_uint_eq(atomic_load(&r.bad_status), 0);
        accepted += atomic_load(&r.accepted);
    }
    /* every accepted submission ran before its context died */
    ck_assert_uint_eq(kmt_test_soft_stats(adapter).Stats.CommandsExecuted - before, accepted);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Broadcasts naming contexts of two devices in both orders.  A device's
 * lock is taken for each context; without one order between two devices'
 * locks the two calls take them in opposite orders, which ThreadSanitizer
 * reports as a lock-order inversion (so this fails in the TSan lane). */
START_TEST(broadcasts_lock_two_devices_in_one_order)
{
    D3DKMT_HANDLE other, ab[2], ba[2];
    struct kmt_fence f;
    UINT64 value = 1;

    setup_device();
    other = kmt_test_create_device(NULL);
    ab[0] = ba[1] = kmt_exec_virtual_context(device);
    ab[1] = ba[0] = kmt_exec_virtual_context(other);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    for (int round = 0; round < 2; round++) {
        const D3DKMT_HANDLE *order = round ? ba : ab;
        D3DKMT_SUBMITCOMMAND sc = { 0 };
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 s = { 0 };

        /* one submission is for one device's contexts */
        sc.Commands = 0x100000000ull;
        sc.CommandLength = 8;
        sc.BroadcastContextCount = 2;
        memcpy(sc.BroadcastContext, order, sizeof(ab));
        ck_assert_status(D3DKMTSubmitCommand(&sc), STATUS_INVALID_PARAMETER);
        /* a signal may come from contexts of two devices of the adapter */
        s.ObjectCount = 1;
        s.ObjectHandleArray = &f.handle;
        s.BroadcastContextCount = 2;
        s.BroadcastContextArray = order;
        s.MonitoredFenceValueArray = &value;
        ck_assert_status(D3DKMTSignalSynchronizationObjectFromGpu2(&s), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, f.handle, value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        value++;
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exec_race");
    TCase *pc = tcase_create("producer_consumer");
    TCase *submit = tcase_create("submit");
    TCase *destroy = tcase_create("destroy");

    tcase_set_timeout(pc, 120);
    tcase_add_test(pc, producer_consumer_two_threads);
    tcase_add_test(pc, producer_consumer_four_threads);
    tcase_add_test(pc, producer_consumer_async_events);
    tcase_add_test(pc, producer_consumer_through_the_gpu_queue);
    suite_add_tcase(s, pc);

    tcase_set_timeout(submit, 120);
    tcase_add_test(submit, concurrent_submissions);
    suite_add_tcase(s, submit);

    tcase_set_timeout(destroy, 120);
    tcase_add_test(destroy, signal_and_wait_race_with_destroy);
    tcase_add_test(destroy, async_wait_any_races_with_signal);
    tcase_add_test(destroy, submit_races_with_destroy_context);
    tcase_add_test(destroy, broadcasts_lock_two_devices_in_one_order);
    suite_add_tcase(s, destroy);
    return kmt_test_run(s);
}
