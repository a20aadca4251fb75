/*
 * The fuzzer's peer process (docs/fuzzing.md): the same binary run as
 * `--peer FD`, started at an input's first global or NT handle.  The
 * fuzzer hands it every global handle and NT handle (an fd, SCM_RIGHTS)
 * its program gets, over a SOCK_SEQPACKET pair (broker/wire.h); the peer
 * opens them and makes random calls on what it opened (query, open,
 * acquire and release, signal and wait, destroy) while the fuzzer goes on
 * with its input.  When the input ends the fuzzer closes the pair; the
 * peer destroys all it has and exits, and the fuzzer waits for it before
 * it reads the broker's books, which must be back where they were.  Soft
 * target only: the DRM targets' fake kernel lives in the fuzzer's process.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "broker/wire.h"

#define PEER_FD 3                        /* the pair's end in the peer */
#define PEER_MAX 64                      /* handles the peer keeps */
#define PEER_WAIT_S 20                   /* a peer slower than this hangs */

struct peer_msg {
    uint32_t global;                     /* 0: an NT handle came with it */
};

bool fuzz_peer_enabled;
static int link_fd = -1;
static pid_t peer_pid;

extern char **environ;

static bool wanted(void)
{
    const char *env = getenv("KMT_FUZZ_PEER");

    return fuzz_peer_enabled && !strcmp(fuzz_target.name, "soft") && (!env || strcmp(env, "0"));
}

static bool start(void)
{
    char exe[4096], fd_arg[16];
    char *argv[] = { exe, "--peer", fd_arg, NULL };
    posix_spawn_file_actions_t fa;
    int pair[2];
    ssize_t n;
    int r;

    if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
        return false;
    exe[n] = 0;
    snprintf(fd_arg, sizeof(fd_arg), "%d", PEER_FD);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair))
        return false;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pair[1], PEER_FD);   /* dup2 clears CLOEXEC */
    r = posix_spawn(&peer_pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pair[1]);
    if (r) {
        close(pair[0]);
        return false;
    }
    link_fd = pair[0];
    return true;
}

static void offer(uint32_t global, int fd)
{
    struct peer_msg m = { global };
    struct iovec iov = { &m, sizeof(m) };

    if (!wanted() || (link_fd < 0 && !start()))
        return;
    /* a peer that stopped reading (it died) is found by fuzz_peer_finish */
    kmt_wire_send(link_fd, &iov, 1, &fd, fd >= 0);
}

void fuzz_peer_offer_global(D3DKMT_HANDLE global)
{
    offer(global, -1);
}

void fuzz_peer_offer_nt(int fd)
{
    offer(0, fd);
}

bool fuzz_peer_finish(void)
{
    int status = 0;
    pid_t r;

    if (link_fd < 0)
        return true;
    close(link_fd);
    link_fd = -1;
    for (int i = 0; i < PEER_WAIT_S * 1000; i++) {
        struct timespec tick = { 0, 1000000 };

        if ((r = waitpid(peer_pid, &status, WNOHANG)) == peer_pid)
            break;
        if (r < 0 && errno != EINTR)
            break;
        nanosleep(&tick, NULL);
    }
    if (r != peer_pid) {
        kill(peer_pid, SIGKILL);
        waitpid(peer_pid, &status, 0);
        fuzz_finding("the peer process did not finish in %d s", PEER_WAIT_S);
        return false;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        fuzz_finding("the peer process ended with status %#x", status);
        return false;
    }
    return true;
}

/* ---- the peer --------------------------------------------------------------- */

enum held_kind { H_GLOBAL, H_NT, H_RESOURCE, H_KEYED_MUTEX, H_SYNC };

struct held {
    enum held_kind kind;
    uint32_t value;                      /* a handle, or the NT fd */
};

static struct held held[PEER_MAX];
static unsigned nheld;
static D3DKMT_HANDLE device;
static uint64_t rng;

static uint32_t pick(uint32_t n)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static void destroy(const struct held *h);

static void keep(enum held_kind kind, uint32_t value)
{
    struct held h = { kind, value };

    if (nheld < PEER_MAX)
        held[nheld++] = h;
    else
        destroy(&h);
}

/* Takes what the fuzzer sent; false at its end. */
static bool receive(int fd)
{
    struct peer_msg m;
    unsigned n = 0, trouble = 0;
    int nt = -1;
    ssize_t got = kmt_wire_recv(fd, &m, sizeof(m), &nt, &n, 1, &trouble);

    if (got <= 0)
        return got < 0 && (errno == EINTR || errno == EAGAIN);
    if (n)
        keep(H_NT, (uint32_t)nt);
    else if (m.global)
        keep(H_GLOBAL, m.global);
    return true;
}

static void open_resource_global(D3DKMT_HANDLE global)
{
    unsigned char runtime[0x100], driver[0x1000], total[0x1000], alloc_data[16][0x400];
    D3DDDI_OPENALLOCATIONINFO info[16] = { 0 };
    D3DKMT_QUERYRESOURCEINFO q = { .hDevice = device, .hGlobalShare = global, .pPrivateRuntimeData = runtime,
                                   .PrivateRuntimeDataSize = sizeof(runtime) };
    D3DKMT_OPENRESOURCE o = { 0 };

    if (D3DKMTQueryResourceInfo(&q) || q.NumAllocations > 16 || q.ResourcePrivateDriverDataSize > sizeof(driver)
        || q.PrivateRuntimeDataSize > sizeof(runtime))
        return;
    for (UINT i = 0; i < q.NumAllocations; i++) {
        info[i].pPrivateDriverData = alloc_data[i];
        info[i].PrivateDriverDataSize = sizeof(alloc_data[i]);
    }
    o = (D3DKMT_OPENRESOURCE){ .hDevice = device, .hGlobalShare = global, .NumAllocations = q.NumAllocations,
                               .pOpenAllocationInfo = info, .pPrivateRuntimeData = runtime,
                               .PrivateRuntimeDataSize = q.PrivateRuntimeDataSize,
                               .pResourcePrivateDriverData = driver,
                               .ResourcePrivateDriverDataSize = q.ResourcePrivateDriverDataSize,
                               .pTotalPrivateDriverDataBuffer = total,
                               .TotalPrivateDriverDataBufferSize = sizeof(total) };
    if (!D3DKMTOpenResource(&o))
        keep(H_RESOURCE, o.hResource);
}

static void open_resource_nt(int fd)
{
    unsigned char runtime[0x100], total[0x1000], alloc_data[16][0x400], mutex_runtime[0x100];
    D3DDDI_OPENALLOCATIONINFO2 info[16] = { 0 };
    D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE q = { .hDevice = device, .hNtHandle = (HANDLE)(intptr_t)fd,
                                               .pPrivateRuntimeData = runtime,
                                               .PrivateRuntimeDataSize = sizeof(runtime) };
    D3DKMT_OPENRESOURCEFROMNTHANDLE o;

    if (D3DKMTQueryResourceInfoFromNtHandle(&q) || q.NumAllocations > 16 || q.PrivateRuntimeDataSize > sizeof(runtime))
        return;
    for (UINT i = 0; i < q.NumAllocations; i++) {
        info[i].pPrivateDriverData = alloc_data[i];
        info[i].PrivateDriverDataSize = sizeof(alloc_data[i]);
    }
    o = (D3DKMT_OPENRESOURCEFROMNTHANDLE){ .hDevice = device, .hNtHandle = (HANDLE)(intptr_t)fd,
                                           .NumAllocations = q.NumAllocations, .pOpenAllocationInfo2 = info,
                                           .pPrivateRuntimeData = runtime,
                                           .PrivateRuntimeDataSize = q.PrivateRuntimeDataSize,
                                           .pTotalPrivateDriverDataBuffer = total,
                                           .TotalPrivateDriverDataBufferSize = sizeof(total),
                                           .pKeyedMutexPrivateRuntimeData = mutex_runtime,
                                           .KeyedMutexPrivateRuntimeDataSize = 0 };
    if (D3DKMTOpenResourceFromNtHandle(&o))
        return;
    keep(H_RESOURCE, o.hResource);
    if (o.hKeyedMutex)
        keep(H_KEYED_MUTEX, o.hKeyedMutex);
    if (o.hSyncObject)
        keep(H_SYNC, o.hSyncObject);
}

static void on_global(D3DKMT_HANDLE global)
{
    switch (pick(3)) {
    case 0:
        open_resource_global(global);
        break;
    case 1: {
        D3DKMT_OPENKEYEDMUTEX o = { .hSharedHandle = global };

        if (!D3DKMTOpenKeyedMutex(&o))
            keep(H_KEYED_MUTEX, o.hKeyedMutex);
        break;
    }
    default: {
        D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { .hSharedHandle = global };

        if (!D3DKMTOpenSynchronizationObject(&o))
            keep(H_SYNC, o.hSyncObject);
    }
    }
}

static void on_nt(int fd)
{
    switch (pick(3)) {
    case 0:
        open_resource_nt(fd);
        break;
    case 1: {
        D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE o = { .hNtHandle = (HANDLE)(intptr_t)fd };

        if (!D3DKMTOpenKeyedMutexFromNtHandle(&o))
            keep(H_KEYED_MUTEX, o.hKeyedMutex);
        break;
    }
    default: {
        D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o = { .hNtHandle = (HANDLE)(intptr_t)fd, .hDevice = device };

        if (!D3DKMTOpenSyncObjectFromNtHandle2(&o))
            keep(H_SYNC, o.hSyncObject);
    }
    }
}

static void destroy(const struct held *h)
{
    if (h->kind == H_NT) {
        close((int)h->value);
    } else if (h->kind == H_RESOURCE) {
        D3DKMT_DESTROYALLOCATION2 d = { .hDevice = device, .hResource = h->value };
        D3DKMTDestroyAllocation2(&d);
    } else if (h->kind == H_KEYED_MUTEX) {
        D3DKMT_DESTROYKEYEDMUTEX d = { h->value };
        D3DKMTDestroyKeyedMutex(&d);
    } else if (h->kind == H_SYNC) {
        D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h->value };
        D3DKMTDestroySynchronizationObject(&d);
    }
}

static void on_local(struct held *h)
{
    UINT64 value = pick(4);
    LARGE_INTEGER zero = { .QuadPart = 0 };

    if (!pick(8)) {
        destroy(h);
        *h = held[--nheld];
        return;
    }
    if (h->kind == H_KEYED_MUTEX) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = h->value, .Key = value, .pTimeout = &zero };
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = h->value, .Key = pick(4) };

        if (!D3DKMTAcquireKeyedMutex(&a))
            D3DKMTReleaseKeyedMutex(&r);
    } else if (h->kind == H_SYNC) {
        D3DKMT_HANDLE obj = h->value;
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { .hDevice = device, .ObjectCount = 1,
                                                        .ObjectHandleArray = &obj, .FenceValueArray = &value };
        D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { .hDevice = device, .ObjectCount = 1,
                                                         .ObjectHandleArray = &obj, .FenceValueArray = &value };

        if (pick(2))
            D3DKMTSignalSynchronizationObjectFromCpu(&s);
        else
            KmtWaitForSynchronizationObjectFromCpuTimeout(&w, (int)pick(3));
    }
}

int fuzz_peer_main(int argc, char **argv)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    int fd = argc > 2 ? atoi(argv[2]) : -1;
    bool open = true;

    fuzz_target.setup();
    rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
    if (fd < 0 || D3DKMTEnumAdapters2(&e) || !e.NumAdapters)
        return 2;
    cd.hAdapter = info[0].hAdapter;
    if (D3DKMTCreateDevice(&cd))
        return 2;
    device = cd.hDevice;
    while (open) {
        struct pollfd p = { fd, POLLIN, 0 };

        /* while it holds something it keeps calling, as fast as the fuzzer */
        if (poll(&p, 1, nheld ? 0 : 1000) > 0)
            open = receive(fd);
        for (int i = 0; i < 4 && nheld; i++) {
            struct held *h = &held[pick(nheld)];

            if (h->kind == H_GLOBAL)
                on_global(h->value);
            else if (h->kind == H_NT)
                on_nt((int)h->value);
            else
                on_local(h);
        }
    }
    while (nheld)
        destroy(&held[--nheld]);
    {
        D3DKMT_DESTROYDEVICE dd = { device };
        D3DKMT_CLOSEADAPTER ca;

        D3DKMTDestroyDevice(&dd);
        for (ULONG i = 0; i < e.NumAdapters && i < 4; i++) {
            ca.hAdapter = info[i].hAdapter;
            D3DKMTCloseAdapter(&ca);
        }
    }
    return 0;
}
