/*
 * The sharing rows' other processes: the child (this program again, in a
 * role), and the session broker's books read through a Linux helper.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance_share.h"

#define STATS_HELPER "broker_stats"      /* tests/wine/broker_stats, next to the .exe */

int kmtc_share_child(int argc, char **argv)
{
    static const struct {
        const char *role;
        int (*run)(int argc, char **argv);
    } roles[] = {
        { "processes", kmtc_share_processes_child },
        { "holder", kmtc_share_holder_child },
        { "objects", kmtc_share_objects_child },
    };

    for (unsigned i = 0; argc > 0 && i < ARRAY_SIZE(roles); i++)
        if (!strcmp(argv[0], roles[i].role))
            return roles[i].run(argc - 1, argv + 1);
    ok(FALSE, "share-child: no role %s\n", argc > 0 ? argv[0] : "(none)");
    return 1;
}

BOOL share_start_child(PROCESS_INFORMATION *pi, BOOL inherit, const char *role, const char *fmt, ...)
{
    STARTUPINFOA si = { sizeof(si) };
    char exe[MAX_PATH], cmd[2 * MAX_PATH];
    int len;
    va_list ap;

    memset(pi, 0, sizeof(*pi));
    GetModuleFileNameA(NULL, exe, sizeof(exe));
    len = snprintf(cmd, sizeof(cmd), "\"%s\" %s %s ", exe, KMT_SHARE_CHILD_ARG, role);
    va_start(ap, fmt);
    vsnprintf(cmd + len, sizeof(cmd) - len, fmt, ap);
    va_end(ap);
    return ok(CreateProcessA(NULL, cmd, NULL, NULL, inherit, 0, NULL, NULL, &si, pi),
              "CreateProcess(%s) failed: %lu\n", role, GetLastError());
}

HANDLE share_take_from_parent(const char *pid, const char *value)
{
    HANDLE parent = OpenProcess(PROCESS_DUP_HANDLE, FALSE, strtoul(pid, NULL, 10)), mine = NULL;

    ok(parent != NULL, "OpenProcess(parent) failed: %lu\n", GetLastError());
    ok(DuplicateHandle(parent, (HANDLE)(ULONG_PTR)strtoull(value, NULL, 16), GetCurrentProcess(), &mine, 0, FALSE,
                       DUPLICATE_SAME_ACCESS),
       "DuplicateHandle from the parent failed: %lu\n", GetLastError());
    if (parent)
        CloseHandle(parent);
    return mine;
}

void share_end_child(PROCESS_INFORMATION *pi, DWORD want_code)
{
    DWORD code = ~0u;

    ok(WaitForSingleObject(pi->hProcess, CHILD_TIMEOUT_MS) == WAIT_OBJECT_0, "the child did not end\n");
    GetExitCodeProcess(pi->hProcess, &code);
    ok(code == want_code, "the child's exit status %lu, expected %lu (its failures)\n", code, want_code);
    CloseHandle(pi->hProcess);
    CloseHandle(pi->hThread);
}

/* Reads the helper's one line once it is there (it renames it into place). */
static BOOL read_stats(const char *file, char *line, DWORD size)
{
    HANDLE f = CreateFileA(file, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL, OPEN_EXISTING, 0, NULL);
    DWORD got = 0;

    if (f == INVALID_HANDLE_VALUE)
        return FALSE;
    ReadFile(f, line, size - 1, &got, NULL);
    CloseHandle(f);
    line[got] = 0;
    DeleteFileA(file);
    return TRUE;
}

BOOL share_broker_stats(struct share_broker_stats *s)
{
    static unsigned serial;
    STARTUPINFOA si = { sizeof(si) };
    PROCESS_INFORMATION pi;
    char helper[MAX_PATH], *slash, file[64], cmd[2 * MAX_PATH], line[128];
    BOOL have = FALSE;

    memset(s, 0, sizeof(*s));
    GetModuleFileNameA(NULL, helper, sizeof(helper));
    if ((slash = strrchr(helper, '\\')))
        slash[1] = 0;
    strcat(helper, STATS_HELPER);
    /* relative: Wine starts a Linux program in the caller's directory */
    snprintf(file, sizeof(file), "kmtshim-broker-stats-%lu-%u.txt", GetCurrentProcessId(), serial++);
    DeleteFileA(file);
    snprintf(cmd, sizeof(cmd), "\"%s\" %s", helper, file);
    if (!ok(CreateProcessA(helper, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi),
            "CreateProcess(%s) failed: %lu\n", helper, GetLastError()))
        return FALSE;
    /* Wine gives no process handle for a Linux program: the file says when */
    if (pi.hProcess)
        CloseHandle(pi.hProcess);
    if (pi.hThread)
        CloseHandle(pi.hThread);
    for (DWORD start = GetTickCount(); !have && GetTickCount() - start < CHILD_TIMEOUT_MS;)
        if (!(have = read_stats(file, line, sizeof(line))))
            Sleep(5);
    if (!ok(have, "%s wrote no %s\n", STATS_HELPER, file))
        return FALSE;
    return ok(sscanf(line, "%u %u %u %u %u %u", &s->clients, &s->objects, &s->global_handles, &s->nt_shares,
                     &s->names, &s->fds) == 6,
              "%s: %s\n", STATS_HELPER, line);
}

BOOL share_broker_stats_before(struct share_broker_stats *s)
{
    D3DKMT_CREATEKEYEDMUTEX km = { 0 };

    expect_status(kmt_api.CreateKeyedMutex(&km), STATUS_SUCCESS);
    if (km.hKeyedMutex)
        destroy_keyed_mutex(km.hKeyedMutex);
    return share_broker_stats(s);
}

static BOOL stats_equal(const struct share_broker_stats *a, const struct share_broker_stats *b)
{
    return a->clients == b->clients && a->objects == b->objects && a->global_handles == b->global_handles &&
           a->nt_shares == b->nt_shares && a->names == b->names && a->fds == b->fds;
}

void share_expect_broker_stats(const struct share_broker_stats *before, const char *when)
{
    struct share_broker_stats now;
    BOOL have;

    /* each ask starts a process: bounded by the clock, not by a count */
    for (DWORD start = GetTickCount();
         (have = share_broker_stats(&now)) && !stats_equal(&now, before) && GetTickCount() - start < CHILD_TIMEOUT_MS;)
        Sleep(50);
    if (have)
        ok(stats_equal(&now, before),
           "%s: the broker has %u clients, %u objects, %u global handles, %u NT shares, %u names, %u fds; "
           "before: %u, %u, %u, %u, %u, %u\n", when, now.clients, now.objects, now.global_handles, now.nt_shares,
           now.names, now.fds, before->clients, before->objects, before->global_handles, before->nt_shares,
           before->names, before->fds);
}

BOOL share_create_bundle(D3DKMT_HANDLE device, OBJECT_ATTRIBUTES *attr, struct share_bundle *b)
{
    static const BYTE mutex_runtime[BUNDLE_MUTEX_RUNTIME_SIZE] = { 'b', 'u', 'n', 'd', 'l', 'e' };
    D3DKMT_CREATEKEYEDMUTEX2 km = { 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_HANDLE objects[3];
    NTSTATUS status;

    memset(b, 0, sizeof(*b));
    expect_status(create_shared_resource(device, TRUE, &b->resource, &b->alloc, NULL), STATUS_SUCCESS);
    km.Flags.NtSecuritySharing = 1;
    km.pPrivateRuntimeData = (void *)mutex_runtime;
    km.PrivateRuntimeDataSize = sizeof(mutex_runtime);
    expect_status(kmt_api.CreateKeyedMutex2(&km), STATUS_SUCCESS);
    ok(!km.hSharedHandle, "NtSecuritySharing keyed mutex: hSharedHandle %#x\n", km.hSharedHandle);
    b->keyed_mutex = km.hKeyedMutex;
    cs.hDevice = device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    cs.Info.Flags.Shared = 1;
    cs.Info.Flags.NtSecuritySharing = 1;
    expect_status(kmt_api.CreateSynchronizationObject2(&cs), STATUS_SUCCESS);
    b->fence = cs.hSyncObject;
    b->fence_value = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    objects[0] = b->resource;
    objects[1] = b->keyed_mutex;
    objects[2] = b->fence;
    status = kmt_api.ShareObjects(3, objects, attr, GENERIC_ALL, &b->nt);
    expect_status(status, STATUS_SUCCESS);
    return !status && b->alloc && b->keyed_mutex && b->fence && b->fence_value;
}

void share_destroy_bundle(D3DKMT_HANDLE device, struct share_bundle *b)
{
    if (b->nt)
        ok(CloseHandle(b->nt), "CloseHandle(the bundle's NT handle) failed\n");
    if (b->fence)
        destroy_sync(b->fence);
    if (b->keyed_mutex)
        destroy_keyed_mutex(b->keyed_mutex);
    if (b->resource)
        destroy_resource(device, b->resource);
    memset(b, 0, sizeof(*b));
}
