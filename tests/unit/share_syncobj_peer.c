/*
 * The other process of test_share_syncobj: a separate program the test
 * posix_spawn()s.  It opens a sync object the test shared and does one
 * thing with it, reporting each step as a line on stdout; it waits for a
 * line on stdin where the test must act first.
 *
 *   share_syncobj_peer open-global G          open G, report, hold it until stdin closes
 *   share_syncobj_peer fence HOW H MODE VALUE  open a monitored fence and
 *       HOW global: H is a global handle; nt: H is an inherited NT handle (fd);
 *           scm: H is a socket that receives the NT handle (SCM_RIGHTS)
 *       MODE cpu: wait on the CPU; event: an async wait with an event;
 *           gpu: a context waits for it, then signals a fence of ours;
 *           signal: signal VALUE after a line on stdin
 * Lines: "ready <fence value>", then "waited <status> <fence value>" or
 * "signalled <status>"; "opened <status>" for open-global; any failure
 * "error <what> <status>".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec_util.h"
#include "fd_pass.h"
#include "peer_util.h"

#define BOUND_MS 20000                   /* a bound on a wait that must end, never a timing */

static D3DKMT_HANDLE device;

static void wait_for_line(void)
{
    char line[64];

    if (!fgets(line, sizeof(line), stdin))
        return;
}

/* exec_util's helpers that assert are for Check cases: these fail plainly. */
static D3DKMT_HANDLE create_context(void)
{
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };

    cc.hDevice = device;
    return D3DKMTCreateContextVirtual(&cc) ? 0 : cc.hContext;
}

static bool event_wait(int fd, int timeout_ms)
{
    struct pollfd p = { fd, POLLIN, 0 };

    return poll(&p, 1, timeout_ms) == 1;
}

static int open_global(D3DKMT_HANDLE global)
{
    D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };
    NTSTATUS status;

    o.hSharedHandle = global;
    status = D3DKMTOpenSynchronizationObject(&o);
    kmt_peer_say("opened %#x", (unsigned)status);
    wait_for_line();                     /* held until the test lets go (or kills us) */
    if (!status)
        D3DKMTDestroySynchronizationObject(&(D3DKMT_DESTROYSYNCHRONIZATIONOBJECT){ o.hSyncObject });
    return 0;
}

/* Opens the monitored fence; *cpu its value in this process. */
static NTSTATUS open_fence(const char *how, unsigned long h, D3DKMT_HANDLE *fence, const volatile UINT64 **cpu)
{
    NTSTATUS status;

    if (!strcmp(how, "global")) {
        D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };

        /* by global handle: no CPU address is given back */
        o.hSharedHandle = (D3DKMT_HANDLE)h;
        if ((status = D3DKMTOpenSynchronizationObject(&o)))
            return status;
        *fence = o.hSyncObject;
        *cpu = NULL;
        return STATUS_SUCCESS;
    } else {
        D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o = { 0 };
        int fd = (int)h;

        if (!strcmp(how, "scm") && (fd = fd_pass_recv((int)h)) < 0)
            return STATUS_INVALID_HANDLE;
        o.hNtHandle = (HANDLE)(intptr_t)fd;
        o.hDevice = device;
        if ((status = D3DKMTOpenSyncObjectFromNtHandle2(&o)))
            return status;
        close(fd);                       /* the local handle keeps the object */
        *fence = o.hSyncObject;
        *cpu = o.MonitoredFence.FenceValueCPUVirtualAddress;
        return STATUS_SUCCESS;
    }
}

static UINT64 value_of(const volatile UINT64 *cpu)
{
    return cpu ? *cpu : UINT64_MAX;
}

static int fence(const char *how, unsigned long h, const char *mode, UINT64 value)
{
    const volatile UINT64 *cpu;
    D3DKMT_HANDLE f;
    NTSTATUS status;

    if ((status = open_fence(how, h, &f, &cpu))) {
        kmt_peer_say("error open %#x", (unsigned)status);
        return 1;
    }
    if (!strcmp(mode, "cpu")) {
        kmt_peer_say("ready %" PRIu64, value_of(cpu));
        status = kmt_fence_wait(device, f, value, BOUND_MS);
        kmt_peer_say("waited %#x %" PRIu64, (unsigned)status, value_of(cpu));
    } else if (!strcmp(mode, "event")) {
        int ev = eventfd(0, EFD_CLOEXEC);

        status = kmt_fence_wait_or_event(device, f, value, kmt_event_handle(ev), 0);
        kmt_peer_say("ready %" PRIu64, value_of(cpu));
        if (!status && !event_wait(ev, BOUND_MS))
            status = STATUS_TIMEOUT;
        kmt_peer_say("waited %#x %" PRIu64, (unsigned)status, value_of(cpu));
    } else if (!strcmp(mode, "gpu")) {
        D3DKMT_HANDLE ctx = create_context();
        struct kmt_fence ours;

        if (!ctx || (status = kmt_fence_create(device, 0, 0, &ours)) || (status = kmt_gpu_wait(ctx, f, value)) ||
            (status = kmt_gpu_signal(ctx, ours.handle, 1))) {
            kmt_peer_say("error gpu %#x", (unsigned)status);
            return 1;
        }
        /* ours stays 0 until the context's wait ends */
        kmt_peer_say("ready %" PRIu64 " %" PRIu64, value_of(cpu), *ours.cpu);
        status = kmt_fence_wait(device, ours.handle, 1, BOUND_MS);
        kmt_peer_say("waited %#x %" PRIu64, (unsigned)status, value_of(cpu));
    } else if (!strcmp(mode, "signal")) {
        kmt_peer_say("ready %" PRIu64, value_of(cpu));
        wait_for_line();
        status = kmt_fence_signal(device, f, value, 0);
        kmt_peer_say("signalled %#x", (unsigned)status);
        wait_for_line();                 /* holds the fence until the test has looked */
    } else {
        kmt_peer_say("error mode 0");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: see the comment at the top of share_syncobj_peer.c\n");
        return 2;
    }
    if (!(device = kmt_peer_open_device())) {
        kmt_peer_say("error device 0");
        return 1;
    }
    if (!strcmp(argv[1], "open-global"))
        return open_global((D3DKMT_HANDLE)strtoul(argv[2], NULL, 0));
    if (!strcmp(argv[1], "fence") && argc == 6)
        return fence(argv[2], strtoul(argv[3], NULL, 0), argv[4], strtoull(argv[5], NULL, 0));
    fprintf(stderr, "unknown command %s\n", argv[1]);
    return 2;
}
