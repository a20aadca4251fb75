/*
 * The other process of test_share_legacy_sync: opens a shared mutex,
 * semaphore or legacy fence by its global handle, makes a context and a
 * monitored fence of its own ("progress"), and runs the test's commands,
 * one per line on stdin, answering each with a line on stdout:
 *
 *   wait V       the context waits for the object (a legacy fence: for V),
 *                then signals progress to its next step: "queued <step> <status>"
 *   signal V     the context signals the object (V: a legacy fence's value)
 *   signals K V  the same, K times in a row; both answer "signalled <status>"
 *   mark         signals progress to its next step: "queued <step> <status>"
 *   progress N   waits (bounded) until progress reaches N:
 *                "progress <status> <value>"
 *   blocked      waits (bounded) until a GPU wait of its context is blocked
 *                on the object: "blocked <1 or 0>"
 *
 * It ends when stdin closes.  First line: "opened <status>"; any failure
 * "error <what> <status>".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_util.h"
#include "peer_util.h"
#include "shared_state_probe.h"

#define BOUND_MS 20000                   /* a bound on a wait that must end, never a timing */

int main(int argc, char **argv)
{
    D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };
    struct kmt_fence progress;
    UINT64 step = 0;
    NTSTATUS status;
    char line[128];

    if (argc != 2) {
        fprintf(stderr, "usage: legacy_sync_peer GLOBAL-HANDLE\n");
        return 2;
    }
    if (!(cc.hDevice = kmt_peer_open_device())) {
        kmt_peer_say("error device 0");
        return 1;
    }
    if ((status = D3DKMTCreateContextVirtual(&cc)) || (status = kmt_fence_create(cc.hDevice, 0, 0, &progress))) {
        kmt_peer_say("error context %#x", (unsigned)status);
        return 1;
    }
    o.hSharedHandle = (D3DKMT_HANDLE)strtoul(argv[1], NULL, 0);
    status = D3DKMTOpenSynchronizationObject(&o);
    kmt_peer_say("opened %#x", (unsigned)status);
    if (status)
        return 1;
    while (fgets(line, sizeof(line), stdin)) {
        unsigned long long v = 0, k = 0;

        if (sscanf(line, "wait %llu", &v) == 1) {
            if (!(status = kmt_wait2(cc.hContext, o.hSyncObject, v)))
                status = kmt_gpu_signal(cc.hContext, progress.handle, ++step);
            kmt_peer_say("queued %" PRIu64 " %#x", step, (unsigned)status);
        } else if (sscanf(line, "signals %llu %llu", &k, &v) == 2 || sscanf(line, "signal %llu", &v) == 1) {
            status = STATUS_SUCCESS;
            for (unsigned long long i = 0; i < (k ? k : 1) && !status; i++)
                status = kmt_signal2(cc.hContext, o.hSyncObject, v);
            kmt_peer_say("signalled %#x", (unsigned)status);
        } else if (!strcmp(line, "mark\n")) {
            status = kmt_gpu_signal(cc.hContext, progress.handle, ++step);
            kmt_peer_say("queued %" PRIu64 " %#x", step, (unsigned)status);
        } else if (!strcmp(line, "blocked\n")) {
            kmt_peer_say("blocked %d", kmt_probe_gpu_blocked(o.hSyncObject, BOUND_MS));
        } else if (sscanf(line, "progress %llu", &v) == 1) {
            status = kmt_fence_wait(cc.hDevice, progress.handle, v, BOUND_MS);
            kmt_peer_say("progress %#x %" PRIu64, (unsigned)status, *progress.cpu);
        } else {
            kmt_peer_say("error command 0");
        }
    }
    D3DKMTDestroySynchronizationObject(&(D3DKMT_DESTROYSYNCHRONIZATIONOBJECT){ o.hSyncObject });
    return 0;
}
