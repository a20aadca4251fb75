/*
 * The other process of test_keyed_mutex's multi-process cases, started with
 * posix_spawn (a separate program, not a fork of the test).  One command
 * per run, the keyed mutex named by its global handle:
 *
 *   keyed_mutex_peer pingpong GLOBAL ROUNDS
 *       acquires key 1 ROUNDS times, each time expecting the fence value
 *       2*i+1 from the other side, and releases to key 0 with 2*i+2
 *   keyed_mutex_peer hold GLOBAL
 *       acquires key 0, writes "held\n" to stdout, then sleeps until killed
 *   keyed_mutex_peer open GLOBAL
 *       opens it, writes "open\n", waits for stdin to close, exits without
 *       destroying its handle (process exit drops it)
 *
 * Exit status 0 when every call gave what was expected; otherwise 1, with
 * the failing call on stderr.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"

static int fail(const char *what, NTSTATUS status)
{
    fprintf(stderr, "keyed_mutex_peer: %s: 0x%08x\n", what, (unsigned)status);
    return 1;
}

static int say(const char *word)
{
    return printf("%s\n", word) < 0 || fflush(stdout) ? 1 : 0;
}

static int pingpong(D3DKMT_HANDLE km, unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = km, .Key = 1 };
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = km, .Key = 0, .FenceValue = 2 * i + 2 };
        NTSTATUS status;

        if ((status = D3DKMTAcquireKeyedMutex(&a)))
            return fail("AcquireKeyedMutex", status);
        if (a.FenceValue != 2 * i + 1) {
            fprintf(stderr, "keyed_mutex_peer: round %u: fence %" PRIu64 "\n", i, (uint64_t)a.FenceValue);
            return 1;
        }
        if ((status = D3DKMTReleaseKeyedMutex(&r)))
            return fail("ReleaseKeyedMutex", status);
    }
    return 0;
}

int main(int argc, char **argv)
{
    D3DKMT_OPENKEYEDMUTEX open = { 0 };
    NTSTATUS status;
    char c;

    if (argc < 3) {
        fprintf(stderr, "usage: keyed_mutex_peer pingpong|hold|open GLOBAL [ROUNDS]\n");
        return 2;
    }
    open.hSharedHandle = (D3DKMT_HANDLE)strtoul(argv[2], NULL, 0);
    if ((status = D3DKMTOpenKeyedMutex(&open)))
        return fail("OpenKeyedMutex", status);

    if (!strcmp(argv[1], "pingpong") && argc == 4)
        return pingpong(open.hKeyedMutex, (unsigned)strtoul(argv[3], NULL, 0));
    if (!strcmp(argv[1], "hold")) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = open.hKeyedMutex, .Key = 0 };

        if ((status = D3DKMTAcquireKeyedMutex(&a)))
            return fail("AcquireKeyedMutex", status);
        if (say("held"))
            return 1;
        for (;;)
            pause();
    }
    if (!strcmp(argv[1], "open")) {
        if (say("open"))
            return 1;
        while (read(0, &c, 1) > 0)
            ;
        return 0;
    }
    fprintf(stderr, "keyed_mutex_peer: unknown command %s\n", argv[1]);
    return 2;
}
