/*
 * kmtbench-exec: what kmtshim's synchronization and submission cost on the
 * software adapter, next to the raw primitives of the same shape, measured
 * in the same run:
 *
 *   fence_signal_wait_1t    SignalFromCpu + WaitFromCpu (already satisfied) of a
 *                           monitored fence, one thread
 *   fence_pingpong_2t       two threads, two fences: signal the other's, wait for
 *                           one's own (blocking WaitFromCpu); per round trip
 *   fence_pingpong_async_2t the same, the waits with an async eventfd + poll
 *   submit_nop_fence        SubmitCommand of [NOP, SIGNAL_FENCE] + WaitFromCpu
 *                           (scheduler thread, engine thread, interrupt, wake)
 *   submit_nop_gpu_signal   SubmitCommand of [NOP] + SignalFromGpu + WaitFromCpu
 *                           (the signal is a scheduler packet after the DMA)
 *   raw_eventfd_1t          eventfd write + read, one thread
 *   raw_futex_pingpong_2t   FUTEX_WAKE / FUTEX_WAIT round trip between two threads
 *   raw_eventfd_pingpong_2t blocking eventfd write / read round trip
 *   raw_cond_pingpong_2t    pthread_cond_signal / pthread_cond_wait round trip
 *
 * Every figure is the median of several timed repetitions after a warm-up,
 * measured with CLOCK_MONOTONIC.  The raw-syncobj (DRM) comparison comes
 * with the DRM miniport.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtsoft.h"
#include "common/bench_util.h"

#define WAIT_MS 10000                   /* a wait this long is a bug: stop */

/* ---- two-thread ping-pong harness ---------------------------------------------------
 * The test thread plays "ping", a helper thread "pong"; both run `ops`
 * round trips per repetition.  A round trip: ping hands the turn over,
 * pong hands it back. */

struct pingpong {
    void (*ping)(void *state, unsigned i);
    void (*pong)(void *state, unsigned i);
    void *state;
    unsigned ops;                        /* round trips per repetition */
    unsigned rounds;                     /* repetitions, warm-up included */
};

static void *pong_thread(void *arg)
{
    struct pingpong *p = arg;
    unsigned i = 0;

    for (unsigned r = 0; r < p->rounds; r++)
        for (unsigned k = 0; k < p->ops; k++)
            p->pong(p->state, ++i);
    return NULL;
}

static double pingpong(const struct bench_options *o, struct pingpong *p)
{
    double times[BENCH_MAX_REPS];
    pthread_t t;
    unsigned i = 0;

    p->rounds = o->reps + 1;
    if (pthread_create(&t, NULL, pong_thread, p))
        bench_die("pthread_create", errno);
    for (unsigned r = 0; r < p->rounds; r++) {
        double t0 = bench_now_ns();
        for (unsigned k = 0; k < p->ops; k++)
            p->ping(p->state, ++i);
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / p->ops;
    }
    pthread_join(t, NULL);
    return bench_median(times, o->reps);
}

/* ---- kmtshim: the software adapter ----------------------------------------------------- */

static D3DKMT_HANDLE device, context;

struct fence {
    D3DKMT_HANDLE handle;
    D3DGPU_VIRTUAL_ADDRESS gpu;
};

static void open_soft_device_and_context(void)
{
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };
    NTSTATUS s;

    device = bench_open_soft_device();
    cc.hDevice = device;
    if ((s = D3DKMTCreateContextVirtual(&cc)))
        bench_die("D3DKMTCreateContextVirtual", s);
    context = cc.hContext;
}

static struct fence create_fence(void)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    struct fence f;
    NTSTATUS s;

    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    if ((s = D3DKMTCreateSynchronizationObject2(&cs)))
        bench_die("D3DKMTCreateSynchronizationObject2", s);
    f.handle = cs.hSyncObject;
    f.gpu = cs.Info.MonitoredFence.FenceValueGPUVirtualAddress;
    return f;
}

static void destroy_syncobj(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };
    NTSTATUS s;

    if ((s = D3DKMTDestroySynchronizationObject(&d)))
        bench_die("D3DKMTDestroySynchronizationObject", s);
}

/* Blocks (event NULL) or arms an async wait on `event`. */
static void wait_fence(D3DKMT_HANDLE h, UINT64 value, HANDLE event)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
    NTSTATUS s;

    w.hDevice = device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &h;
    w.FenceValueArray = &value;
    w.hAsyncEvent = event;
    s = event ? D3DKMTWaitForSynchronizationObjectFromCpu(&w)
              : KmtWaitForSynchronizationObjectFromCpuTimeout(&w, WAIT_MS);
    if (s)
        bench_die("WaitForSynchronizationObjectFromCpu", s);
}

static void wait_eventfd(int fd)
{
    struct pollfd p = { fd, POLLIN, 0 };
    uint64_t v;

    if (poll(&p, 1, WAIT_MS) != 1 || read(fd, &v, sizeof(v)) != sizeof(v))
        bench_die("eventfd wait", errno);
}

struct counted_fence {
    struct fence fence;
    UINT64 value;                        /* last signaled: fences only go up */
};

static void fence_signal_wait_body(void *arg, unsigned ops)
{
    struct counted_fence *f = arg;

    for (unsigned i = 0; i < ops; i++) {
        bench_cpu_signal(device, f->fence.handle, ++f->value);
        wait_fence(f->fence.handle, f->value, NULL);
    }
}

static void bench_fence_signal_wait(const struct bench_options *o)
{
    struct counted_fence f = { create_fence(), 0 };

    bench_record("fence_signal_wait_1t", "SignalFromCpu + WaitFromCpu (satisfied), monitored fence",
           bench_timed(o, bench_scaled(o, 200000), fence_signal_wait_body, &f), 1);
    destroy_syncobj(f.fence.handle);
}

struct fence_pair {
    struct fence ping, pong;
    int ping_fd, pong_fd;                /* async variant: the waiters' eventfds */
};

static void fence_ping(void *state, unsigned i)
{
    struct fence_pair *p = state;

    bench_cpu_signal(device, p->ping.handle, i);
    if (p->ping_fd < 0) {
        wait_fence(p->pong.handle, i, NULL);
    } else {
        wait_fence(p->pong.handle, i, (HANDLE)(intptr_t)p->ping_fd);
        wait_eventfd(p->ping_fd);
    }
}

static void fence_pong(void *state, unsigned i)
{
    struct fence_pair *p = state;

    if (p->pong_fd < 0) {
        wait_fence(p->ping.handle, i, NULL);
    } else {
        wait_fence(p->ping.handle, i, (HANDLE)(intptr_t)p->pong_fd);
        wait_eventfd(p->pong_fd);
    }
    bench_cpu_signal(device, p->pong.handle, i);
}

static void bench_fence_pingpong(const struct bench_options *o, bool async)
{
    struct fence_pair p = { create_fence(), create_fence(), -1, -1 };
    struct pingpong pp = { fence_ping, fence_pong, &p, bench_scaled(o, 20000), 0 };

    if (async) {
        p.ping_fd = eventfd(0, EFD_CLOEXEC);
        p.pong_fd = eventfd(0, EFD_CLOEXEC);
        if (p.ping_fd < 0 || p.pong_fd < 0)
            bench_die("eventfd", errno);
    }
    if (async)
        bench_record("fence_pingpong_async_2t", "signal + async WaitFromCpu on an eventfd + poll, per round trip",
               pingpong(o, &pp), 2);
    else
        bench_record("fence_pingpong_2t", "SignalFromCpu + blocking WaitFromCpu, per round trip",
               pingpong(o, &pp), 2);
    if (async) {
        close(p.ping_fd);
        close(p.pong_fd);
    }
    destroy_syncobj(p.ping.handle);
    destroy_syncobj(p.pong.handle);
}

/* Command buffers live in one GPU-visible allocation; each iteration waits
 * for its own work, so slot 0 can be rewritten every time. */
struct submit_state {
    struct fence fence;
    D3DKMT_HANDLE ring;
    D3DGPU_VIRTUAL_ADDRESS ring_va;
    unsigned char *ring_cpu;
    bool gpu_signal;                     /* SignalFromGpu instead of a SIGNAL_FENCE command */
    UINT64 value;
};

static void create_ring(struct submit_state *st)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, 4096, 0, 0 };
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };
    NTSTATUS s;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    if ((s = D3DKMTCreateAllocation2(&ca)))
        bench_die("D3DKMTCreateAllocation2", s);
    lock.hDevice = device;
    lock.hAllocation = info.hAllocation;
    if ((s = D3DKMTLock2(&lock)))
        bench_die("D3DKMTLock2", s);
    st->ring = info.hAllocation;
    st->ring_va = info.GpuVirtualAddress;
    st->ring_cpu = lock.pData;
}

static void destroy_ring(struct submit_state *st)
{
    D3DKMT_UNLOCK2 unlock = { device, st->ring };
    D3DKMT_DESTROYALLOCATION2 d = { 0 };
    NTSTATUS s;

    if ((s = D3DKMTUnlock2(&unlock)))
        bench_die("D3DKMTUnlock2", s);
    d.hDevice = device;
    d.phAllocationList = &st->ring;
    d.AllocationCount = 1;
    if ((s = D3DKMTDestroyAllocation2(&d)))
        bench_die("D3DKMTDestroyAllocation2", s);
}

static void submit_body(void *arg, unsigned ops)
{
    struct submit_state *st = arg;

    for (unsigned i = 0; i < ops; i++) {
        struct {
            KMT_SOFT_CMD_HEADER nop;
            KMT_SOFT_CMD_FENCE signal;
        } cmds = { { KMT_SOFT_OP_NOP, sizeof(KMT_SOFT_CMD_HEADER) },
                   { { KMT_SOFT_OP_SIGNAL_FENCE, sizeof(KMT_SOFT_CMD_FENCE) }, st->fence.gpu, ++st->value } };
        D3DKMT_SUBMITCOMMAND sc = { 0 };
        NTSTATUS s;

        memcpy(st->ring_cpu, &cmds, sizeof(cmds));
        sc.Commands = st->ring_va;
        sc.CommandLength = st->gpu_signal ? sizeof(cmds.nop) : sizeof(cmds);
        sc.BroadcastContextCount = 1;
        sc.BroadcastContext[0] = context;
        if ((s = D3DKMTSubmitCommand(&sc)))
            bench_die("D3DKMTSubmitCommand", s);
        if (st->gpu_signal) {
            D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU sg = { 0 };

            sg.hContext = context;
            sg.ObjectCount = 1;
            sg.ObjectHandleArray = &st->fence.handle;
            sg.MonitoredFenceValueArray = &st->value;
            if ((s = D3DKMTSignalSynchronizationObjectFromGpu(&sg)))
                bench_die("D3DKMTSignalSynchronizationObjectFromGpu", s);
        }
        wait_fence(st->fence.handle, st->value, NULL);
    }
}

static void bench_submit(const struct bench_options *o, bool gpu_signal)
{
    struct submit_state st = { .gpu_signal = gpu_signal };

    st.fence = create_fence();
    create_ring(&st);
    if (gpu_signal)
        bench_record("submit_nop_gpu_signal", "SubmitCommand [NOP] + SignalFromGpu + WaitFromCpu",
               bench_timed(o, bench_scaled(o, 5000), submit_body, &st), 1);
    else
        bench_record("submit_nop_fence", "SubmitCommand [NOP, SIGNAL_FENCE] + WaitFromCpu",
               bench_timed(o, bench_scaled(o, 5000), submit_body, &st), 1);
    destroy_ring(&st);
    destroy_syncobj(st.fence.handle);
}

/* ---- raw baselines ------------------------------------------------------------------------ */

static void eventfd_body(void *arg, unsigned ops)
{
    int fd = *(int *)arg;
    uint64_t v = 1;

    for (unsigned i = 0; i < ops; i++)
        if (write(fd, &v, sizeof(v)) != sizeof(v) || read(fd, &v, sizeof(v)) != sizeof(v))
            bench_die("eventfd", errno);
}

static void bench_raw_eventfd(const struct bench_options *o)
{
    int fd = eventfd(0, EFD_CLOEXEC);

    if (fd < 0)
        bench_die("eventfd", errno);
    bench_record("raw_eventfd_1t", "eventfd write + read", bench_timed(o, bench_scaled(o, 200000), eventfd_body, &fd), 1);
    close(fd);
}

/* futex: one word holds whose turn it is (odd: pong's, even: ping's). */
static atomic_uint futex_word;

static void futex_wait_for(unsigned want)
{
    unsigned cur;

    while ((cur = atomic_load(&futex_word)) != want)
        syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, cur, NULL, NULL, 0);
}

static void futex_set(unsigned value)
{
    atomic_store(&futex_word, value);
    syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_ping(void *state, unsigned i)
{
    (void)state;
    futex_set(2 * i - 1);
    futex_wait_for(2 * i);
}

static void futex_pong(void *state, unsigned i)
{
    (void)state;
    futex_wait_for(2 * i - 1);
    futex_set(2 * i);
}

static void eventfd_ping(void *state, unsigned i)
{
    int *fds = state;
    uint64_t v = 1;

    (void)i;
    if (write(fds[0], &v, sizeof(v)) != sizeof(v) || read(fds[1], &v, sizeof(v)) != sizeof(v))
        bench_die("eventfd", errno);
}

static void eventfd_pong(void *state, unsigned i)
{
    int *fds = state;
    uint64_t v;

    (void)i;
    if (read(fds[0], &v, sizeof(v)) != sizeof(v) || write(fds[1], &v, sizeof(v)) != sizeof(v))
        bench_die("eventfd", errno);
}

struct cond_state {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned turn;
};

static void cond_handover(struct cond_state *c, unsigned set, unsigned want)
{
    pthread_mutex_lock(&c->lock);
    if (set) {
        c->turn = set;
        pthread_cond_broadcast(&c->cond);
    }
    while (want && c->turn != want)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

static void cond_ping(void *state, unsigned i)
{
    cond_handover(state, 2 * i - 1, 2 * i);
}

static void cond_pong(void *state, unsigned i)
{
    cond_handover(state, 0, 2 * i - 1);
    cond_handover(state, 2 * i, 0);
}

static void bench_raw_pingpongs(const struct bench_options *o)
{
    struct cond_state c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
    int fds[2] = { eventfd(0, EFD_CLOEXEC), eventfd(0, EFD_CLOEXEC) };
    struct pingpong futex_pp = { futex_ping, futex_pong, NULL, bench_scaled(o, 50000), 0 };
    struct pingpong eventfd_pp = { eventfd_ping, eventfd_pong, fds, bench_scaled(o, 50000), 0 };
    struct pingpong cond_pp = { cond_ping, cond_pong, &c, bench_scaled(o, 50000), 0 };

    if (fds[0] < 0 || fds[1] < 0)
        bench_die("eventfd", errno);
    atomic_store(&futex_word, 0);
    bench_record("raw_futex_pingpong_2t", "FUTEX_WAKE + FUTEX_WAIT, per round trip", pingpong(o, &futex_pp), 2);
    bench_record("raw_eventfd_pingpong_2t", "blocking eventfd write + read, per round trip",
           pingpong(o, &eventfd_pp), 2);
    bench_record("raw_cond_pingpong_2t", "pthread_cond_broadcast + pthread_cond_wait, per round trip",
           pingpong(o, &cond_pp), 2);
    close(fds[0]);
    close(fds[1]);
}

int main(int argc, char **argv)
{
    struct bench_options o = { false, 5, 1.0 };

    bench_parse_options(argc, argv,
                        "Times monitored-fence signal/wait round trips, cross-thread ping-pong and\n"
                        "SubmitCommand + fence latency on the software adapter, with futex, eventfd and\n"
                        "pthread_cond baselines of the same shape measured in the same run.\n", &o);
    open_soft_device_and_context();
    bench_fence_signal_wait(&o);
    bench_fence_pingpong(&o, false);
    bench_fence_pingpong(&o, true);
    bench_submit(&o, false);
    bench_submit(&o, true);
    KmtProcessShutdown();
    if (KmtLiveObjectCount())
        bench_die("leak check", KmtLiveObjectCount());
    bench_raw_eventfd(&o);
    bench_raw_pingpongs(&o);
    bench_print(&o);
    return 0;
}
