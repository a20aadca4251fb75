/*
 * Timeout detection and recovery on the software adapter: a command buffer
 * whose WAIT_FENCE is never satisfied hangs the engine; after TdrDelay the
 * scheduler resets the engine (DxgkDdiResetEngine), the hung device is
 * HUNG with its fences at the maximum (unless NoSignalMaxValueOnTdr), and
 * another device's work that was queued behind it on the same engine is
 * submitted again and completes, its device still ACTIVE.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "exec_util.h"

static D3DKMT_HANDLE adapter;

static D3DKMT_HANDLE setup(const char *tdr_ms)
{
    if (tdr_ms)
        setenv("KMTSHIM_TDR_DELAY", tdr_ms, 1);
    else
        unsetenv("KMTSHIM_TDR_DELAY");
    kmt_test_use_miniport("soft");
    return kmt_test_create_device(&adapter);
}

static D3DKMT_HANDLE second_device(void)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    return cd.hDevice;
}

/* Polls GetDeviceState until it leaves ACTIVE or timeout_ms passed. */
static D3DKMT_DEVICEEXECUTION_STATE state_after(D3DKMT_HANDLE device, unsigned timeout_ms)
{
    UINT64 end = kmt_test_now_ms() + timeout_ms;
    D3DKMT_DEVICEEXECUTION_STATE st;

    while ((st = kmt_exec_state(device)) == D3DKMT_DEVICEEXECUTION_ACTIVE && kmt_test_now_ms() < end) {
        struct timespec ts = { 0, 5 * 1000000 };
        nanosleep(&ts, NULL);
    }
    return st;
}

struct hang {
    D3DKMT_HANDLE ctx;
    struct kmt_ring ring;
    struct kmt_fence never, after;
    struct kmt_cmds cmds;                /* waits for `never` to reach 1, then signals `after` */
};

static void hang_prepare(D3DKMT_HANDLE device, struct hang *h)
{
    h->ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &h->ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &h->never), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &h->after), STATUS_SUCCESS);
    kmt_cmds_init(&h->cmds);
    kmt_cmd_fence(&h->cmds, KMT_SOFT_OP_WAIT_FENCE, h->never.gpu, 1);
    kmt_cmd_fence(&h->cmds, KMT_SOFT_OP_SIGNAL_FENCE, h->after.gpu, 1);
}

START_TEST(hung_engine_is_reset_and_the_device_is_hung)
{
    D3DKMT_HANDLE device = setup("200"), other, octx;
    struct kmt_fence keep, ofence;
    struct kmt_ring oring;
    struct kmt_cmds cmds;
    struct hang h;
    UINT64 start;

    hang_prepare(device, &h);
    ck_assert_status(kmt_fence_create(device, 0, 0x40 /* NoSignalMaxValueOnTdr */, &keep), STATUS_SUCCESS);
    /* an innocent device whose work sits behind the hang on the one engine */
    other = second_device();
    octx = kmt_exec_virtual_context(other);
    kmt_ring_create(other, 4096, &oring);
    ck_assert_status(kmt_fence_create(other, 0, 0, &ofence), STATUS_SUCCESS);

    start = kmt_test_now_ms();
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, ofence.gpu, 7);
    ck_assert_status(kmt_ring_submit(&oring, &octx, 1, &cmds), STATUS_SUCCESS);

    ck_assert_int_eq(state_after(device, KMT_EXEC_WAIT_MS), D3DKMT_DEVICEEXECUTION_HUNG);
    ck_assert_uint_ge(kmt_test_now_ms() - start, 200);           /* not before TdrDelay */
    /* the hung device's fences jump to the maximum, except NoSignalMaxValueOnTdr */
    ck_assert_status(kmt_fence_wait(device, h.after.handle, UINT64_MAX, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*keep.cpu, 0);
    /* the innocent device's command buffer ran after the reset, for real */
    ck_assert_status(kmt_fence_wait(other, ofence.handle, 7, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_uint_eq(*ofence.cpu, 7);
    ck_assert_int_eq(kmt_exec_state(other), D3DKMT_DEVICEEXECUTION_ACTIVE);
    /* a hung device takes no more work; the other one does */
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &cmds), STATUS_DEVICE_REMOVED);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, ofence.gpu, 8);
    ck_assert_status(kmt_ring_submit(&oring, &octx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(other, ofence.handle, 8, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A submission made directly from the caller's thread does not wake the
 * scheduler thread while it sleeps to a deadline: a hang submitted while it
 * sleeps after quick work is still caught, not before TdrDelay and not much
 * after. */
START_TEST(hang_submitted_after_quick_work_is_caught)
{
    D3DKMT_HANDLE device = setup("200");
    struct kmt_fence quick;
    struct kmt_cmds cmds;
    struct hang h;
    UINT64 start;

    hang_prepare(device, &h);
    ck_assert_status(kmt_fence_create(device, 0, 0, &quick), STATUS_SUCCESS);
    /* quick work spread over more than twice TdrDelay */
    for (UINT64 v = 1; v <= 8; v++) {
        struct timespec pause = { 0, 60 * 1000000 };

        kmt_cmds_init(&cmds);
        kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, quick.gpu, v);
        ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &cmds), STATUS_SUCCESS);
        ck_assert_status(kmt_fence_wait(device, quick.handle, v, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
        nanosleep(&pause, NULL);
    }
    start = kmt_test_now_ms();
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, 3000), D3DKMT_DEVICEEXECUTION_HUNG);
    ck_assert_uint_ge(kmt_test_now_ms() - start, 200);
    ck_assert_uint_lt(kmt_test_now_ms() - start, 3000);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* The engine is reset while it sleeps in a DELAY as much as in a wait. */
START_TEST(long_command_buffer_is_a_hang_too)
{
    D3DKMT_HANDLE device = setup("100"), ctx;
    struct kmt_fence done;
    struct kmt_ring ring;
    struct kmt_cmds cmds;

    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &done), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    for (int i = 0; i < 5; i++)
        kmt_cmd_delay(&cmds, 1000000);    /* 5 s of work, far past 100 ms */
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, done.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, 3000), D3DKMT_DEVICEEXECUTION_HUNG);
    ck_assert_status(kmt_fence_wait(device, done.handle, UINT64_MAX, 3000), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Work that finishes within TdrDelay is never reset, and KMTSHIM_TDR_DELAY=0
 * turns detection off: the hang is then the soft engine's own (much later)
 * wait timeout, not a TDR, and the CPU can still release it. */
START_TEST(work_within_the_delay_or_detection_off_is_left_alone)
{
    /* 1 s: ten times each piece of work, so a starved engine thread on a
     * loaded machine is not a hang */
    D3DKMT_HANDLE device = setup("1000"), ctx;
    struct kmt_fence after;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct hang h;

    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &after), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 100000);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, after.gpu, 1);
    for (int i = 0; i < 3; i++)           /* 3 x 100 ms, each well within 1000 */
        ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, after.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, 1200), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();

    device = setup("0");
    hang_prepare(device, &h);
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, 500), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_status(kmt_fence_signal(device, h.never.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, h.after.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* The hung device's work that was still queued when the engine was reset
 * never reaches the engine: like a new submission (DEVICE_REMOVED), it is
 * dropped, not run (and maybe hung) on the engine after the reset. */
START_TEST(hung_device_queued_work_is_not_run_after_the_reset)
{
    D3DKMT_HANDLE device = setup("150");
    struct kmt_fence keep, sig;
    struct kmt_cmds cmds;
    struct hang h;

    hang_prepare(device, &h);
    ck_assert_status(kmt_fence_create(device, 0, 0x40 /* NoSignalMaxValueOnTdr */, &keep), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &sig), STATUS_SUCCESS);
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    /* a signal waits for the hang; the command buffer behind it stays queued */
    ck_assert_status(kmt_gpu_signal(h.ctx, sig.handle, 1), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, keep.gpu, 9);
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, KMT_EXEC_WAIT_MS), D3DKMT_DEVICEEXECUTION_HUNG);
    /* DestroyContext returns once the context's queue is done with */
    ck_assert_status(kmt_exec_destroy_context(h.ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(*keep.cpu, 0);
    ck_assert_uint_eq(*sig.cpu, UINT64_MAX);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static D3DKMT_HANDLE legacy_fence(D3DKMT_HANDLE device, UINT flags)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    D3DKMT_HANDLE h;

    info.Type = D3DDDI_FENCE;
    info.Flags.Value = flags;
    ck_assert_status(kmt_syncobj_create2(device, &info, &h), STATUS_SUCCESS);
    return h;
}

/* Whether a legacy fence reached `value`: a context of `device` waits for
 * it and then signals a monitored fence the CPU can read. */
static bool legacy_reached(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, UINT64 value, int timeout_ms)
{
    D3DKMT_HANDLE ctx = kmt_exec_virtual_context(device);
    struct kmt_fence probe;
    bool reached;

    ck_assert_status(kmt_fence_create(device, 0, 0, &probe), STATUS_SUCCESS);
    ck_assert_status(kmt_wait2(ctx, fence, value), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, probe.handle, 1), STATUS_SUCCESS);
    reached = kmt_fence_wait(device, probe.handle, 1, timeout_ms) == STATUS_SUCCESS;
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);   /* gives up a blocked wait */
    ck_assert_status(kmt_syncobj_destroy(probe.handle), STATUS_SUCCESS);
    return reached;
}

/* A signal queued behind the work the reset aborted does not claim that
 * work completed: a fence it names goes to its maximum, like the hung
 * device's own fences, and one made with NoSignalMaxValueOnTdr keeps its
 * value; the signal's own value is never stored.  Legacy fences (adapter
 * objects another device can wait on) follow the same rule. */
START_TEST(hung_device_signals_behind_the_hang_do_not_claim_completion)
{
    D3DKMT_HANDLE device = setup("150"), other, lf, lf_keep;
    struct kmt_fence keep;
    struct hang h;

    hang_prepare(device, &h);
    other = second_device();
    ck_assert_status(kmt_fence_create(device, 0, 0x40 /* NoSignalMaxValueOnTdr */, &keep), STATUS_SUCCESS);
    lf = legacy_fence(device, 0);
    lf_keep = legacy_fence(device, 0x40);
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(h.ctx, keep.handle, 5), STATUS_SUCCESS);
    ck_assert_status(kmt_signal2(h.ctx, lf, 5), STATUS_SUCCESS);
    ck_assert_status(kmt_signal2(h.ctx, lf_keep, 5), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, KMT_EXEC_WAIT_MS), D3DKMT_DEVICEEXECUTION_HUNG);
    ck_assert_status(kmt_exec_destroy_context(h.ctx), STATUS_SUCCESS);   /* the queue is done with */
    ck_assert_uint_eq(*keep.cpu, 0);
    ck_assert(legacy_reached(other, lf, UINT64_MAX, KMT_EXEC_WAIT_MS));
    ck_assert(!legacy_reached(other, lf_keep, 5, 100));
    ck_assert(!legacy_reached(other, lf_keep, 1, 100));
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct cpu_signal_later {
    D3DKMT_HANDLE device, fence;
    unsigned delay_ms;
};

static void *signal_later(void *arg)
{
    struct cpu_signal_later *l = arg;

    kmt_sleep_ms(l->delay_ms);
    ck_assert_status(kmt_fence_signal(l->device, l->fence, 1, 0), STATUS_SUCCESS);
    return NULL;
}

/* A context whose queue is: a GPU wait for `gate` to reach 1, a command
 * buffer that signals `ran` to 1, a signal of `after` and `keep`
 * (NoSignalMaxValueOnTdr) to 3. */
struct gated {
    D3DKMT_HANDLE ctx;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence gate, ran, after, keep;
};

static void gated_queue(D3DKMT_HANDLE device, struct gated *g)
{
    g->ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &g->ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &g->gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &g->ran), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &g->after), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0x40 /* NoSignalMaxValueOnTdr */, &g->keep), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_wait(g->ctx, g->gate.handle, 1), STATUS_SUCCESS);
    kmt_cmds_init(&g->cmds);
    kmt_cmd_fence(&g->cmds, KMT_SOFT_OP_SIGNAL_FENCE, g->ran.gpu, 1);
    ck_assert_status(kmt_ring_submit(&g->ring, &g->ctx, 1, &g->cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(g->ctx, g->after.handle, 3), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(g->ctx, g->keep.handle, 3), STATUS_SUCCESS);
}

/* DestroyContext returns once the context's queued work ran (Microsoft's
 * pfnDestroyContextCb page): a GPU wait that another thread satisfies in
 * time is waited for, and the work queued behind it runs. */
START_TEST(destroy_context_waits_for_a_wait_satisfied_in_time)
{
    D3DKMT_HANDLE device = setup("1000");
    struct cpu_signal_later later;
    struct gated g;
    pthread_t t;

    gated_queue(device, &g);
    later = (struct cpu_signal_later){ device, g.gate.handle, 100 };
    ck_assert_int_eq(pthread_create(&t, NULL, signal_later, &later), 0);
    ck_assert_status(kmt_exec_destroy_context(g.ctx), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_uint_eq(*g.ran.cpu, 1);
    ck_assert_uint_eq(*g.after.cpu, 3);
    ck_assert_uint_eq(*g.keep.cpu, 3);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A GPU wait nobody satisfies does not hold DestroyContext for ever:
 * after TdrDelay with the wait still blocked, the context's queue is given
 * up as a reset would: the command buffer behind the wait never reaches the
 * engine, and the signal behind it takes the TDR rule (maximum, or the
 * value kept with NoSignalMaxValueOnTdr).  The device stays usable. */
START_TEST(destroy_context_gives_up_a_wait_never_satisfied)
{
    D3DKMT_HANDLE device = setup("150"), ctx2;
    struct gated g;
    UINT64 start;

    gated_queue(device, &g);
    start = kmt_test_now_ms();
    ck_assert_status(kmt_exec_destroy_context(g.ctx), STATUS_SUCCESS);
    ck_assert_uint_ge(kmt_test_now_ms() - start, 150);
    ck_assert_uint_lt(kmt_test_now_ms() - start, KMT_EXEC_WAIT_MS);
    ck_assert_uint_eq(*g.ran.cpu, 0);
    ck_assert_uint_eq(*g.after.cpu, UINT64_MAX);
    ck_assert_uint_eq(*g.keep.cpu, 0);
    /* the device is not hung: another context of it still works */
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ctx2 = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_ring_submit(&g.ring, &ctx2, 1, &g.cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, g.ran.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* DestroyContext racing the thread that satisfies the wait, around the
 * moment it gives the queue up: whichever wins, a signal never claims work
 * that did not run (ran 0 with `after` at 3), and nothing is lost or freed
 * twice (ThreadSanitizer and ASan watch the lanes' runs of this). */
START_TEST(destroy_context_racing_the_wait_never_claims_lost_work)
{
    D3DKMT_HANDLE device = setup("30");
    unsigned outcomes[3] = { 0 };

    for (unsigned i = 0; i < 24; i++) {
        struct cpu_signal_later later;
        struct gated g;
        pthread_t t;
        UINT64 ran, after;

        gated_queue(device, &g);
        later = (struct cpu_signal_later){ device, g.gate.handle, (i * 7) % 60 };
        ck_assert_int_eq(pthread_create(&t, NULL, signal_later, &later), 0);
        ck_assert_status(kmt_exec_destroy_context(g.ctx), STATUS_SUCCESS);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        /* final: a command buffer that went in completed before the destroy returned */
        ran = *g.ran.cpu;
        after = *g.after.cpu;
        if (kmt_exec_state(device) == D3DKMT_DEVICEEXECUTION_HUNG) {
            /* On a loaded machine the engine thread may not run for 30 ms
             * while the command buffer is on it: a real TDR, whose rule puts
             * every fence of the device at its maximum.  Not this race's
             * outcome; go on with a fresh device. */
            D3DKMT_DESTROYDEVICE dd = { .hDevice = device };

            ck_assert_uint_eq(ran, UINT64_MAX);
            ck_assert_uint_eq(after, UINT64_MAX);
            ck_assert_uint_eq(*g.keep.cpu, 0);
            ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
            device = second_device();
            continue;
        }
        if (ran == 1 && after == 3)
            outcomes[0]++;                   /* the wait was satisfied in time */
        else if (ran == 1 && after == UINT64_MAX)
            outcomes[1]++;                   /* given up after the command buffer went in */
        else if (ran == 0 && after == UINT64_MAX)
            outcomes[2]++;                   /* given up before it */
        else
            ck_abort_msg("iteration %u: ran %llu, after %#llx", i, (unsigned long long)ran,
                         (unsigned long long)after);
        ck_assert_uint_eq(*g.keep.cpu, after == 3 ? 3 : 0);
        kmt_ring_destroy(device, &g.ring);
        ck_assert_status(kmt_syncobj_destroy(g.gate.handle), STATUS_SUCCESS);
        ck_assert_status(kmt_syncobj_destroy(g.ran.handle), STATUS_SUCCESS);
        ck_assert_status(kmt_syncobj_destroy(g.after.handle), STATUS_SUCCESS);
        ck_assert_status(kmt_syncobj_destroy(g.keep.handle), STATUS_SUCCESS);
    }
    /* both sides of the race were reached */
    ck_assert_uint_gt(outcomes[0], 0);
    ck_assert_uint_gt(outcomes[1] + outcomes[2], 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* "stallsubmit": the soft miniport whose next DxgkDdiSubmitCommandVirtual,
 * once armed, posts `entered`, waits for `resume` and then loses the
 * submission (the scheduler thread stays inside it, holding the
 * submission token; the lost work is caught by TDR only). */
static DRIVER_INITIALIZATION_DATA soft;
static sem_t entered, resume;
static atomic_bool stall_armed;

static NTSTATUS APIENTRY stalling_submit(HANDLE adapter_ctx, const DXGKARG_SUBMITCOMMANDVIRTUAL *args)
{
    if (atomic_exchange(&stall_armed, false)) {
        sem_post(&entered);
        while (sem_wait(&resume))
            ;
        return STATUS_SUCCESS;
    }
    return soft.DxgkDdiSubmitCommandVirtual(adapter_ctx, args);
}

static void stallsubmit_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiSubmitCommandVirtual = stalling_submit;
}

struct destroyer {
    D3DKMT_HANDLE ctx;
    NTSTATUS status;
    atomic_bool done;
};

static void *destroy_thread(void *arg)
{
    struct destroyer *d = arg;

    d->status = kmt_exec_destroy_context(d->ctx);
    atomic_store(&d->done, true);
    return NULL;
}

/* DestroyContext's drain sleeps without a deadline while no GPU wait heads
 * the queue.  Here a submission heads it, on a device that faulted
 * meanwhile, with a wait nobody satisfies behind it; the scheduler drops
 * the submission (its device takes no more work) and the wait is the head:
 * the drain must hear of it and give the queue up TdrDelay later.  The
 * stage: the scheduler thread is held inside a submission DDI of a second
 * device's context (so the victim's submission is queued, not made
 * directly) while the victim's device faults and the drain starts; that
 * DDI then loses its work, so nothing wakes the drain until TDR catches
 * the lost work one TdrDelay after it was submitted: a drain that did not
 * hear of the wait returns a good second later than one that did.  The
 * fences live on a third device, which neither fault raises. */
START_TEST(destroy_context_hears_a_wait_come_to_the_head)
{
    D3DKMT_HANDLE victim_dev, holder_dev, fence_dev, victim, faulting, holder;
    struct kmt_fence gate, never;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct destroyer d = { 0 };
    D3DGPU_VIRTUAL_ADDRESS nop;
    pthread_t t;
    UINT64 start;

    setenv("KMTSHIM_TDR_DELAY", "2000", 1);
    ck_assert_int_eq(sem_init(&entered, 0, 0), 0);
    ck_assert_int_eq(sem_init(&resume, 0, 0), 0);
    kmt_test_register_soft_variant("stallsubmit", stallsubmit_patch, &soft);
    kmt_test_use_miniport("stallsubmit");
    victim_dev = kmt_test_create_device(&adapter);
    holder_dev = second_device();
    fence_dev = second_device();
    victim = kmt_exec_virtual_context(victim_dev);
    faulting = kmt_exec_virtual_context(victim_dev);
    holder = kmt_exec_virtual_context(holder_dev);
    ck_assert_status(kmt_fence_create(fence_dev, 0, 0, &gate), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(fence_dev, 0, 0, &never), STATUS_SUCCESS);
    kmt_ring_create(fence_dev, 4096, &ring);
    kmt_cmds_init(&cmds);
    kmt_cmd_nop(&cmds);
    nop = kmt_ring_put(&ring, &cmds);

    /* the victim's device faults in 300 ms, on the engine */
    kmt_cmds_init(&cmds);
    kmt_cmd_delay(&cmds, 300000);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_WRITE64, 0x10000 /* no such address */, 1);
    ck_assert_status(kmt_ring_submit(&ring, &faulting, 1, &cmds), STATUS_SUCCESS);
    /* the scheduler thread submits the holder's work once the gate opens, and stays in the DDI */
    ck_assert_status(kmt_gpu_wait(holder, gate.handle, 1), STATUS_SUCCESS);
    ck_assert_status(kmt_submit_va(holder, nop, 8), STATUS_SUCCESS);
    atomic_store(&stall_armed, true);
    ck_assert_status(kmt_fence_signal(fence_dev, gate.handle, 1, 0), STATUS_SUCCESS);
    ck_assert_int_eq(sem_wait(&entered), 0);
    /* token held: the victim's submission is queued, a wait nobody satisfies behind it */
    ck_assert_status(kmt_submit_va(victim, nop, 8), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_wait(victim, never.handle, 1), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(victim_dev, 5000), D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    d.ctx = victim;
    ck_assert_int_eq(pthread_create(&t, NULL, destroy_thread, &d), 0);
    kmt_sleep_ms(100);                     /* draining, the submission at the head */
    start = kmt_test_now_ms();
    sem_post(&resume);
    /* TdrDelay (2 s) after the drop; not TdrDelay after the lost work's TDR (3.5 s) */
    while (!atomic_load(&d.done) && kmt_test_now_ms() - start < 2800)
        kmt_sleep_ms(10);
    ck_assert_msg(atomic_load(&d.done), "DestroyContext still waits %llu ms after the wait came to the head",
                  (unsigned long long)(kmt_test_now_ms() - start));
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_uint_eq(*never.cpu, 0);      /* given up, not satisfied */
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Destroying the hung device after the reset frees everything. */
START_TEST(hung_device_can_be_destroyed)
{
    D3DKMT_HANDLE device = setup("100");
    D3DKMT_DESTROYDEVICE dd = { 0 };
    struct hang h;

    hang_prepare(device, &h);
    for (int i = 0; i < 3; i++)           /* two more queued behind the hang */
        ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    ck_assert_int_eq(state_after(device, KMT_EXEC_WAIT_MS), D3DKMT_DEVICEEXECUTION_HUNG);
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* DestroyDevice while its command buffer hangs the engine: the teardown
 * waits for the work to end, which the TDR brings about. */
START_TEST(destroy_during_a_hang_ends_after_the_reset)
{
    D3DKMT_HANDLE device = setup("150");
    D3DKMT_DESTROYDEVICE dd = { 0 };
    struct hang h;
    UINT64 start;

    hang_prepare(device, &h);
    ck_assert_status(kmt_ring_submit(&h.ring, &h.ctx, 1, &h.cmds), STATUS_SUCCESS);
    start = kmt_test_now_ms();
    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    ck_assert_uint_lt(kmt_test_now_ms() - start, KMT_EXEC_WAIT_MS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tdr");
    TCase *tc = tcase_create("tdr");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, hung_engine_is_reset_and_the_device_is_hung);
    tcase_add_test(tc, hang_submitted_after_quick_work_is_caught);
    tcase_add_test(tc, long_command_buffer_is_a_hang_too);
    tcase_add_test(tc, work_within_the_delay_or_detection_off_is_left_alone);
    tcase_add_test(tc, hung_device_queued_work_is_not_run_after_the_reset);
    tcase_add_test(tc, hung_device_signals_behind_the_hang_do_not_claim_completion);
    tcase_add_test(tc, destroy_context_waits_for_a_wait_satisfied_in_time);
    tcase_add_test(tc, destroy_context_gives_up_a_wait_never_satisfied);
    tcase_add_test(tc, destroy_context_racing_the_wait_never_claims_lost_work);
    tcase_add_test(tc, destroy_context_hears_a_wait_come_to_the_head);
    tcase_add_test(tc, hung_device_can_be_destroyed);
    tcase_add_test(tc, destroy_during_a_hang_ends_after_the_reset);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
