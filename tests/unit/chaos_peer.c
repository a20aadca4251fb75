/*
 * The peer process of the chaos tests (chaos_share.h): opens what the test
 * publishes on fd 10 (global handles, NT handles over SCM_RIGHTS) on a
 * soft adapter of its own, acquires and holds keyed mutexes for a few
 * milliseconds, signals and waits fences, destroys what it opened, until
 * the test kills it (or closes its stdin).  A status outside the set of
 * its call is printed as "bad CALL STATUS"; nothing else is printed.
 *
 *   chaos_peer SEED
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "chaos_share.h"

#define HELD 8

/* What a call may return here: the object may be dead, another
 * process's, on another adapter (the DRM chaos shares from the fake
 * kernel's adapter), or held. */
enum { OK = 1, INVALID = 2, TIMEOUT = 4, ABANDONED = 8, MISMATCH = 16, BAD_HANDLE = 32, NOT_SUPPORTED = 64 };

static unsigned seed;
static D3DKMT_HANDLE device;
static D3DKMT_HANDLE kms[HELD], resources[HELD], fences[HELD];
static UINT64 release_at[HELD];         /* a held keyed mutex's release time, 0: not held */
static UINT64 fence_value;

static unsigned rnd(unsigned n)
{
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed % n;
}

static UINT64 now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000 + (UINT64)ts.tv_nsec / 1000000;
}

static unsigned bit(NTSTATUS s)
{
    switch (s) {
    case STATUS_SUCCESS: return OK;
    case STATUS_INVALID_PARAMETER: return INVALID;
    case STATUS_TIMEOUT: return TIMEOUT;
    case STATUS_ABANDONED: return ABANDONED;
    case STATUS_OBJECT_TYPE_MISMATCH: return MISMATCH;
    case STATUS_INVALID_HANDLE: return BAD_HANDLE;
    case STATUS_NOT_SUPPORTED: return NOT_SUPPORTED;
    default: return 0;
    }
}

static NTSTATUS check(const char *call, NTSTATUS s, unsigned allowed)
{
    if (!(bit(s) & allowed)) {
        printf("bad %s 0x%08x\n", call, (unsigned)s);
        fflush(stdout);
    }
    return s;
}

/* Keeps a new handle in a random place; what was there is destroyed. */
static void keep(D3DKMT_HANDLE *slots, D3DKMT_HANDLE h, void (*destroy)(D3DKMT_HANDLE))
{
    unsigned i = rnd(HELD);

    if (slots[i])
        destroy(slots[i]);
    slots[i] = h;
    if (slots == kms)
        release_at[i] = 0;
}

static void destroy_km(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { h };
    check("DestroyKeyedMutex", D3DKMTDestroyKeyedMutex(&d), OK | INVALID);
}

static void destroy_resource(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYALLOCATION2 d = { .hDevice = device, .hResource = h };
    check("DestroyAllocation2", D3DKMTDestroyAllocation2(&d), OK | INVALID);
}

static void destroy_fence(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };
    check("DestroySynchronizationObject", D3DKMTDestroySynchronizationObject(&d), OK | INVALID);
}

/* OpenResource(FromNtHandle) with the sizes its query gave. */
static void open_resource(const struct chaos_share_msg *m, int nt)
{
    static char runtime[4096], resource[4096], total[16384], km_runtime[256];
    D3DDDI_OPENALLOCATIONINFO2 info[4];
    NTSTATUS s;

    memset(info, 0, sizeof(info));
    if (nt < 0) {
        D3DKMT_QUERYRESOURCEINFO q = { .hDevice = device, .hGlobalShare = m->global };
        D3DKMT_OPENRESOURCE o = { .hDevice = device, .hGlobalShare = m->global };

        if (check("QueryResourceInfo", D3DKMTQueryResourceInfo(&q), OK | INVALID) || q.NumAllocations > 4)
            return;
        CHAOS_OPEN_BUFFERS(o, q, info, runtime, resource, total);
        if (!check("OpenResource2", D3DKMTOpenResource2(&o), OK | INVALID | NOT_SUPPORTED))
            keep(resources, o.hResource, destroy_resource);
        return;
    }

    D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE q = { .hDevice = device, .hNtHandle = (HANDLE)(intptr_t)nt };
    D3DKMT_OPENRESOURCEFROMNTHANDLE o = { .hDevice = device, .hNtHandle = (HANDLE)(intptr_t)nt };

    /* the NT handle holds the objects: only the adapter can be wrong */
    if (check("QueryResourceInfoFromNtHandle", D3DKMTQueryResourceInfoFromNtHandle(&q), OK | INVALID)
        || q.NumAllocations > 4)
        return;
    CHAOS_OPEN_BUFFERS(o, q, info, runtime, resource, total);
    o.pKeyedMutexPrivateRuntimeData = km_runtime;
    o.KeyedMutexPrivateRuntimeDataSize = sizeof(km_runtime);
    s = check("OpenResourceFromNtHandle", D3DKMTOpenResourceFromNtHandle(&o), OK | INVALID | NOT_SUPPORTED);
    if (s)
        return;
    keep(resources, o.hResource, destroy_resource);
    if (m->three && (!o.hKeyedMutex || !o.hSyncObject)) {
        printf("bad OpenResourceFromNtHandle(3) without its keyed mutex or fence\n");
        fflush(stdout);
    }
    if (o.hKeyedMutex)
        keep(kms, o.hKeyedMutex, destroy_km);
    if (o.hSyncObject)
        keep(fences, o.hSyncObject, destroy_fence);
}

static void opened(const struct chaos_share_msg *m, int nt)
{
    switch (m->kind) {
    case 'K': {
        D3DKMT_OPENKEYEDMUTEX o = { m->global };

        if (!check("OpenKeyedMutex", D3DKMTOpenKeyedMutex(&o), OK | INVALID))
            keep(kms, o.hKeyedMutex, destroy_km);
        break;
    }
    case 'F': {
        D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { m->global };

        if (!check("OpenSynchronizationObject", D3DKMTOpenSynchronizationObject(&o), OK | INVALID))
            keep(fences, o.hSyncObject, destroy_fence);
        break;
    }
    case 'f': {
        D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o = { (HANDLE)(intptr_t)nt, device };

        if (!check("OpenSyncObjectFromNtHandle2", D3DKMTOpenSyncObjectFromNtHandle2(&o), OK | INVALID | NOT_SUPPORTED))
            keep(fences, o.hSyncObject, destroy_fence);
        break;
    }
    case 'R':
    case 'r':
        open_resource(m, nt);
        break;
    }
}

/* One message from the test, with its NT handle; false at the end. */
static bool receive(int sock)
{
    struct chaos_share_msg m;
    struct iovec iov = { &m, sizeof(m) };
    char control[CMSG_SPACE(sizeof(int))];
    struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof(control) };
    struct cmsghdr *c;
    int nt = -1;
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);

    if (n <= 0)
        return false;
    for (c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&nt, CMSG_DATA(c), sizeof(int));
    if (n == sizeof(m))
        opened(&m, nt);
    if (nt >= 0)
        close(nt);                      /* CloseHandle: what it opened stays */
    return true;
}

static void use_km(void)
{
    unsigned i = rnd(HELD);
    LARGE_INTEGER timeout = { .QuadPart = -(LONGLONG)rnd(4) * 10000 };

    if (!kms[i])
        return;
    if (release_at[i]) {
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = kms[i], .Key = rnd(2), .FenceValue = ++fence_value };

        if (now_ms() < release_at[i])
            return;
        release_at[i] = 0;
        check("ReleaseKeyedMutex", D3DKMTReleaseKeyedMutex(&r), OK | INVALID);
        return;
    }

    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = kms[i], .Key = rnd(2), .pTimeout = &timeout };

    if (!check("AcquireKeyedMutex", D3DKMTAcquireKeyedMutex(&a), OK | TIMEOUT | ABANDONED | INVALID))
        release_at[i] = now_ms() + rnd(30);     /* held a while: the test's threads time out or see it abandoned */
}

static void use_fence(void)
{
    D3DKMT_HANDLE h = fences[rnd(HELD)];
    UINT64 value = ++fence_value;

    if (!h)
        return;
    if (rnd(2)) {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { .hDevice = device, .ObjectCount = 1,
                                                        .ObjectHandleArray = &h, .FenceValueArray = &value };

        check("SignalSynchronizationObjectFromCpu", D3DKMTSignalSynchronizationObjectFromCpu(&s), OK | INVALID);
        return;
    }

    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { .hDevice = device, .ObjectCount = 1,
                                                     .ObjectHandleArray = &h, .FenceValueArray = &value };

    check("WaitForSynchronizationObjectFromCpu", KmtWaitForSynchronizationObjectFromCpuTimeout(&w, (int)rnd(4)),
          OK | INVALID | TIMEOUT | ABANDONED);
}

int main(int argc, char **argv)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    struct pollfd p[2] = { { CHAOS_PEER_FD, POLLIN, 0 }, { 0, POLLIN, 0 } };

    seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) | 1 : 1;
    /* an adapter of its own: the DRM chaos's fake kernel lives in the test */
    setenv("KMTSHIM_MINIPORT", "soft", 1);
    if (D3DKMTEnumAdapters2(&e) || !e.NumAdapters)
        return 2;
    cd.hAdapter = info[0].hAdapter;
    if (D3DKMTCreateDevice(&cd))
        return 2;
    device = cd.hDevice;
    for (;;) {
        if (poll(p, 2, 1) > 0) {
            if (p[1].revents)           /* stdin closed: the end */
                break;
            if ((p[0].revents & POLLIN) && !receive(CHAOS_PEER_FD))
                break;
            if (p[0].revents & (POLLHUP | POLLERR))
                break;
        }
        switch (rnd(4)) {
        case 0: case 1: use_km(); break;
        case 2: use_fence(); break;
        default:
            if (!rnd(8)) {
                unsigned i = rnd(HELD);

                if (kms[i])
                    destroy_km(kms[i]);
                kms[i] = 0;
                release_at[i] = 0;
            }
        }
    }
    return 0;
}
