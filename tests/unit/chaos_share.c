/*
 * Sharing under chaos (chaos_share.h): the threads' sharing operations and
 * the keeper of the peer process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "chaos.h"
#include "chaos_share.h"
#include "peer_util.h"

#define KM_SLOTS 6
#define RES_SLOTS 6
#define FENCE_SLOTS 6
#define GLOBAL_SLOTS 16
#define GENERIC_ALL 0x10000000u

/* Keyed mutexes: the local handle.  Resources and fences: (device << 32) | handle.
 * Globals: (kind << 32) | global handle, the kinds of chaos_share_msg. */
static _Atomic uint64_t kms[KM_SLOTS], resources[RES_SLOTS], fences[FENCE_SLOTS], globals[GLOBAL_SLOTS];
static atomic_ullong fence_value;
/* The device every shared resource and fence is made on: no work is ever
 * submitted to it, so it is never removed (a thread's own device faults). */
static D3DKMT_HANDLE share_device;

#define DEV(v) ((D3DKMT_HANDLE)((v) >> 32))
#define HND(v) ((D3DKMT_HANDLE)(v))
#define PACK(hi, lo) (((uint64_t)(hi) << 32) | (lo))

/* The keeper: one peer at a time, killed and started again. */
static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    int sock;                              /* the live peer's end, -1 between peers */
    unsigned seed, peers, bad;
    unsigned long long sent;
    char first_bad[160];
} keeper = { .lock = PTHREAD_MUTEX_INITIALIZER, .sock = -1 };

/* Sends without blocking: a peer that is dead, killed or behind misses it. */
static void publish(char kind, bool three, D3DKMT_HANDLE global, int nt)
{
    struct chaos_share_msg m = { kind, three, global };
    struct iovec iov = { &m, sizeof(m) };
    char control[CMSG_SPACE(sizeof(int))] = { 0 };
    struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };

    if (nt >= 0) {
        struct cmsghdr *c;

        h.msg_control = control;
        h.msg_controllen = sizeof(control);
        c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &nt, sizeof(int));
    }
    pthread_mutex_lock(&keeper.lock);
    if (keeper.sock >= 0 && sendmsg(keeper.sock, &h, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m))
        keeper.sent++;
    pthread_mutex_unlock(&keeper.lock);
}

static unsigned rnd(const struct chaos_share_thread *t, unsigned n)
{
    return t->rnd(t->worker) % n;
}

#define CHECK(t, name, expr, allowed) ((t)->check((t)->worker, name, (expr), allowed))

/* ---- destroying ------------------------------------------------------------------------------ */

static NTSTATUS destroy_km(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { h };
    return D3DKMTDestroyKeyedMutex(&d);
}

static NTSTATUS destroy_device(D3DKMT_HANDLE dev)
{
    D3DKMT_DESTROYDEVICE d = { dev };
    return D3DKMTDestroyDevice(&d);
}

static NTSTATUS destroy_resource(D3DKMT_HANDLE dev, D3DKMT_HANDLE res)
{
    D3DKMT_DESTROYALLOCATION2 d = { .hDevice = dev, .hResource = res };
    return D3DKMTDestroyAllocation2(&d);
}

static void drop_km(const struct chaos_share_thread *t, uint64_t v)
{
    if (v)
        CHECK(t, "DestroyKeyedMutex(shared)", destroy_km(HND(v)), OK | INVALID);
}

static void drop_resource(const struct chaos_share_thread *t, uint64_t v)
{
    if (v)
        CHECK(t, "DestroyAllocation2(shared resource)", destroy_resource(DEV(v), HND(v)), OK | INVALID);
}

static void drop_fence(const struct chaos_share_thread *t, uint64_t v)
{
    if (v)
        CHECK(t, "DestroySynchronizationObject(shared)", kmt_syncobj_destroy(HND(v)), OK | INVALID);
}

static uint64_t put(const struct chaos_share_thread *t, _Atomic uint64_t *slots, unsigned n, uint64_t v)
{
    return atomic_exchange(&slots[rnd(t, n)], v);
}

static void remember_global(const struct chaos_share_thread *t, char kind, D3DKMT_HANDLE global)
{
    if (global)
        atomic_store(&globals[rnd(t, GLOBAL_SLOTS)], PACK(kind, global));
}

/* An NT handle for what `objects` name: published, then closed (the peer has its copy). */
static void share_nt(const struct chaos_share_thread *t, char kind, const D3DKMT_HANDLE *objects, UINT n)
{
    HANDLE nt = NULL;

    if (!CHECK(t, n == 3 ? "ShareObjects(3)" : "ShareObjects", D3DKMTShareObjects(n, objects, NULL, GENERIC_ALL, &nt),
               OK | INVALID)) {
        publish(kind, n == 3, 0, (int)(intptr_t)nt);
        close((int)(intptr_t)nt);
    }
}

/* ---- making ---------------------------------------------------------------------------------- */

static D3DKMT_HANDLE make_km(const struct chaos_share_thread *t, bool nt)
{
    D3DKMT_CREATEKEYEDMUTEX2 c = { .InitialValue = 0 };

    c.Flags.NtSecuritySharing = nt;
    if (CHECK(t, "CreateKeyedMutex2", D3DKMTCreateKeyedMutex2(&c), OK))
        return 0;
    remember_global(t, 'K', c.hSharedHandle);
    if (!nt)
        publish('K', false, c.hSharedHandle, -1);
    return c.hKeyedMutex;
}

static D3DKMT_HANDLE make_fence(const struct chaos_share_thread *t, bool nt)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c = { .hDevice = share_device };

    c.Info.Type = D3DDDI_MONITORED_FENCE;
    c.Info.Flags.Shared = 1;
    c.Info.Flags.NtSecuritySharing = nt;
    c.Info.MonitoredFence.InitialFenceValue = atomic_load(&fence_value);
    if (CHECK(t, "CreateSynchronizationObject2(shared)", D3DKMTCreateSynchronizationObject2(&c),
              OK | FAULT | REMOVED))
        return 0;
    remember_global(t, 'F', c.Info.SharedHandle);
    if (!nt)
        publish('F', false, c.Info.SharedHandle, -1);
    return c.hSyncObject;
}

static void op_make_km(const struct chaos_share_thread *t)
{
    D3DKMT_HANDLE h = make_km(t, false);

    if (h)
        drop_km(t, put(t, kms, KM_SLOTS, h));
}

static void op_make_fence(const struct chaos_share_thread *t)
{
    bool nt = rnd(t, 3) == 0;
    D3DKMT_HANDLE h = make_fence(t, nt);

    if (h && nt)
        share_nt(t, 'f', &h, 1);
    if (h)
        drop_fence(t, put(t, fences, FENCE_SLOTS, PACK(share_device, h)));
}

/* A shared resource of one allocation; with NtSecuritySharing, shared
 * alone or with a new keyed mutex and fence (ShareObjects of three). */
static void op_make_resource(const struct chaos_share_thread *t)
{
    UINT64 desc[CHAOS_DESC_MAX / 8];
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_HANDLE three[3] = { 0 };
    bool nt = rnd(t, 2);

    info.pPrivateDriverData = desc;
    info.PrivateDriverDataSize = t->alloc_desc(desc);
    ca.hDevice = share_device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = 1;
    ca.Flags.NtSecuritySharing = nt;
    if (CHECK(t, "CreateAllocation2(shared)", D3DKMTCreateAllocation2(&ca), OK | FAULT | REMOVED))
        return;
    remember_global(t, 'R', ca.hGlobalShare);
    if (!nt) {
        publish('R', false, ca.hGlobalShare, -1);
    } else if (rnd(t, 2) && (three[1] = make_km(t, true)) && (three[2] = make_fence(t, true))) {
        three[0] = ca.hResource;
        share_nt(t, 'r', three, 3);
        drop_km(t, put(t, kms, KM_SLOTS, three[1]));
        drop_fence(t, put(t, fences, FENCE_SLOTS, PACK(share_device, three[2])));
    } else {
        if (three[1])                   /* a keyed mutex made without its fence */
            drop_km(t, put(t, kms, KM_SLOTS, three[1]));
        share_nt(t, 'r', &ca.hResource, 1);
    }
    drop_resource(t, put(t, resources, RES_SLOTS, PACK(share_device, ca.hResource)));
}

/* ---- using ----------------------------------------------------------------------------------- */

/* Acquires with a timeout of 0 to 2 ms, releases at once to either key. */
static void op_keyed_mutex(const struct chaos_share_thread *t)
{
    LARGE_INTEGER timeout = { .QuadPart = -(LONGLONG)rnd(t, 3) * 10000 };
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = HND(atomic_load(&kms[rnd(t, KM_SLOTS)])), .pTimeout = &timeout };
    D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = a.hKeyedMutex };

    a.Key = rnd(t, 2);
    if (CHECK(t, "AcquireKeyedMutex", D3DKMTAcquireKeyedMutex(&a), OK | TIMEOUT | ABANDONED | INVALID))
        return;
    r.Key = rnd(t, 2);
    r.FenceValue = a.FenceValue + 1;
    /* another thread may release it first (the handle owns it, not the thread) or destroy it */
    CHECK(t, "ReleaseKeyedMutex", D3DKMTReleaseKeyedMutex(&r), OK | INVALID);
}

static void op_fence(const struct chaos_share_thread *t)
{
    uint64_t v = atomic_load(&fences[rnd(t, FENCE_SLOTS)]);
    UINT64 value = atomic_load(&fence_value);

    if (rnd(t, 2)) {
        value = atomic_fetch_add(&fence_value, 1) + 1;
        /* a peer may have signalled higher: no rewind, INVALID_PARAMETER */
        CHECK(t, "SignalSynchronizationObjectFromCpu(shared)", kmt_fence_signal(DEV(v), HND(v), value, 0),
              OK | INVALID | REMOVED | FAULT);
        return;
    }
    CHECK(t, "WaitForSynchronizationObjectFromCpu(shared)",
          kmt_fence_wait_or_event(DEV(v), HND(v), value + rnd(t, 3), NULL, (int)rnd(t, 4)),
          OK | INVALID | TIMEOUT | ABANDONED | REMOVED | FAULT);
}

/* Opens in this process what a global handle names (perhaps dead by now). */
static void op_open_global(const struct chaos_share_thread *t)
{
    uint64_t g = atomic_load(&globals[rnd(t, GLOBAL_SLOTS)]);

    if (DEV(g) == 'K') {
        D3DKMT_OPENKEYEDMUTEX o = { HND(g) };

        if (!CHECK(t, "OpenKeyedMutex", D3DKMTOpenKeyedMutex(&o), OK | INVALID))
            drop_km(t, put(t, kms, KM_SLOTS, o.hKeyedMutex));
    } else if (DEV(g) == 'F') {
        D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { HND(g) };

        if (!CHECK(t, "OpenSynchronizationObject", D3DKMTOpenSynchronizationObject(&o), OK | INVALID | FAULT))
            CHECK(t, "DestroySynchronizationObject(opened)", kmt_syncobj_destroy(o.hSyncObject), OK | INVALID);
    } else if (DEV(g) == 'R') {
        D3DKMT_QUERYRESOURCEINFO q = { .hDevice = share_device, .hGlobalShare = HND(g) };
        D3DDDI_OPENALLOCATIONINFO2 info[4];
        char runtime[256], resource[256], total[1024];
        D3DKMT_OPENRESOURCE o = { .hDevice = share_device, .hGlobalShare = HND(g) };

        if (CHECK(t, "QueryResourceInfo", D3DKMTQueryResourceInfo(&q), OK | INVALID)
            || q.NumAllocations > 4 || q.PrivateRuntimeDataSize > sizeof(runtime)
            || q.ResourcePrivateDriverDataSize > sizeof(resource) || q.TotalPrivateDriverDataSize > sizeof(total))
            return;
        memset(info, 0, sizeof(info));
        CHAOS_OPEN_BUFFERS(o, q, info, runtime, resource, total);
        if (!CHECK(t, "OpenResource2", D3DKMTOpenResource2(&o), OK | INVALID | FAULT | REMOVED))
            drop_resource(t, put(t, resources, RES_SLOTS, PACK(share_device, o.hResource)));
    }
}

static void op_destroy(const struct chaos_share_thread *t)
{
    switch (rnd(t, 3)) {
    case 0: drop_km(t, atomic_exchange(&kms[rnd(t, KM_SLOTS)], 0)); break;
    case 1: drop_resource(t, atomic_exchange(&resources[rnd(t, RES_SLOTS)], 0)); break;
    default: drop_fence(t, atomic_exchange(&fences[rnd(t, FENCE_SLOTS)], 0));
    }
}

void chaos_share_op(const struct chaos_share_thread *t)
{
    static void (*const ops[])(const struct chaos_share_thread *) = {
        op_make_km, op_make_resource, op_make_fence, op_keyed_mutex, op_keyed_mutex, op_keyed_mutex,
        op_fence, op_fence, op_open_global, op_destroy,
    };

    ops[rnd(t, sizeof(ops) / sizeof(ops[0]))](t);
}

void chaos_share_destroy(void)
{
    for (unsigned i = 0; i < KM_SLOTS; i++)
        if (kms[i])
            destroy_km(HND(atomic_exchange(&kms[i], 0)));
    for (unsigned i = 0; i < RES_SLOTS; i++)
        if (resources[i]) {
            uint64_t v = atomic_exchange(&resources[i], 0);
            destroy_resource(DEV(v), HND(v));
        }
    for (unsigned i = 0; i < FENCE_SLOTS; i++)
        if (fences[i])
            kmt_syncobj_destroy(HND(atomic_exchange(&fences[i], 0)));
    memset(globals, 0, sizeof(globals));
    ck_assert_status(destroy_device(share_device), STATUS_SUCCESS);
}

/* ---- the peer's keeper ----------------------------------------------------------------------- */

static unsigned keeper_rnd(void)
{
    unsigned x = keeper.seed;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return keeper.seed = x;
}

/* Waits `ms` or until stopped; true when stopped. */
static bool keeper_wait(unsigned ms)
{
    struct timespec until;
    bool stop;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&keeper.lock);
    while (!keeper.stop && !pthread_cond_timedwait(&keeper.cond, &keeper.lock, &until))
        ;
    stop = keeper.stop;
    pthread_mutex_unlock(&keeper.lock);
    return stop;
}

/* The lines a killed peer left: any "bad" one fails the run. */
static void read_report(struct kmt_test_peer *p)
{
    char line[160];

    while (fgets(line, sizeof(line), p->out))
        if (!strncmp(line, "bad ", 4) && !keeper.bad++)
            snprintf(keeper.first_bad, sizeof(keeper.first_bad), "%s", line);
}

static void *keeper_main(void *arg)
{
    bool stop = false;

    (void)arg;
    while (!stop) {
        struct kmt_test_peer p;
        char seed[16];
        const char *args[] = { seed, NULL };
        int sv[2], status;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
            break;
        snprintf(seed, sizeof(seed), "%u", keeper_rnd());
        kmt_test_peer_start(&p, "chaos_peer", &sv[1], 1, args);
        close(sv[1]);
        pthread_mutex_lock(&keeper.lock);
        keeper.sock = sv[0];
        keeper.peers++;
        pthread_mutex_unlock(&keeper.lock);
        /* killed at a random point of its life: starting, opening, holding a mutex */
        stop = keeper_wait(10 + keeper_rnd() % 400);
        pthread_mutex_lock(&keeper.lock);
        keeper.sock = -1;
        pthread_mutex_unlock(&keeper.lock);
        kill(p.pid, SIGKILL);
        close(sv[0]);
        close(p.in);
        while (waitpid(p.pid, &status, 0) < 0 && errno == EINTR)
            ;
        read_report(&p);
        fclose(p.out);
    }
    return NULL;
}

void chaos_share_start(D3DKMT_HANDLE adapter, unsigned seed)
{
    D3DKMT_CREATEDEVICE cd = { .hAdapter = adapter };
    pthread_condattr_t monotonic;

    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    share_device = cd.hDevice;

    keeper.seed = seed * 2246822519u + 1;
    keeper.stop = false;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&keeper.cond, &monotonic);
    atomic_store(&fence_value, 1);
    ck_assert_int_eq(pthread_create(&keeper.thread, NULL, keeper_main, NULL), 0);
}

void chaos_share_stop(void)
{
    pthread_mutex_lock(&keeper.lock);
    keeper.stop = true;
    pthread_cond_signal(&keeper.cond);
    pthread_mutex_unlock(&keeper.lock);
    ck_assert_int_eq(pthread_join(keeper.thread, NULL), 0);
    fprintf(stderr, "chaos share: %u peers killed, %llu objects published to them\n", keeper.peers, keeper.sent);
    ck_assert_msg(!keeper.bad, "%u peer calls returned a status outside their set; first: %s", keeper.bad,
                  keeper.first_bad);
    ck_assert_uint_gt(keeper.peers, 0);
}

void chaos_share_expect_broker_empty(void)
{
    struct kmt_broker_stats st = { 0 };

    for (unsigned waited = 0; waited < 5000; waited += 5) {
        ck_assert_status(kmt_broker_query_stats(&st), STATUS_SUCCESS);
        if (!st.objects && !st.global_handles && !st.nt_shares && !st.names)
            break;
        kmt_sleep_ms(5);
    }
    ck_assert_msg(!st.objects && !st.global_handles && !st.nt_shares && !st.names,
                  "the broker still holds %u objects, %u global handles, %u NT shares, %u names", st.objects,
                  st.global_handles, st.nt_shares, st.names);
}
