/*
 * Sync objects shared across processes: the rows of the sharing table in
 * ../shared/notes/windows-semantics.md about sync objects (global handles,
 * NT handles, names, bad input), and shared monitored fences between this
 * process and a second program (share_syncobj_peer): CPU, async-event and
 * GPU waits woken by a signal in the other process, one value seen by both,
 * NT handles carried by inheritance and SCM_RIGHTS, a holder killed with
 * SIGKILL.  Each case runs its own broker (kmt_test_private_broker).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_util.h"
#include "fd_pass.h"
#include "peer_util.h"
#include "broker/broker.h"
#include "dxgkrnl/share.h"
#include "dxgkrnl/shared_fence.h"

#define BOUND_MS 20000                   /* a bound on something that must happen, not a timing */
#define SYNC_ALL 0x1f0003u               /* D3DDDI_SYNC_OBJECT_ALL_ACCESS */

static D3DKMT_HANDLE adapter, device;

static void setup(void)
{
    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static NTSTATUS create(D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type, UINT flags, D3DKMT_HANDLE *h,
                       D3DKMT_HANDLE *global)
{
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 info = { 0 };
    NTSTATUS status;

    info.Type = type;
    info.Flags.Value = flags;
    if (type == D3DDDI_SEMAPHORE)
        info.Semaphore.MaxCount = 4;
    info.SharedHandle = 0xdeadbeef;
    status = kmt_syncobj_create2(device, &info, h);
    if (global)
        *global = info.SharedHandle;
    return status;
}

/* A monitored fence made with `flags`, asserted to succeed; the
 * descriptor gives back its handles and addresses. */
static void create_fence(UINT flags, UINT64 initial, D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *cs)
{
    memset(cs, 0, sizeof(*cs));
    cs->hDevice = device;
    cs->Info.Type = D3DDDI_MONITORED_FENCE;
    cs->Info.Flags.Value = flags;
    cs->Info.MonitoredFence.InitialFenceValue = initial;
    ck_assert_status(D3DKMTCreateSynchronizationObject2(cs), STATUS_SUCCESS);
}

static NTSTATUS open_global(D3DKMT_HANDLE global, D3DKMT_HANDLE *out)
{
    D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };
    NTSTATUS status;

    o.hSharedHandle = global;
    o.hSyncObject = 0x1234;
    status = D3DKMTOpenSynchronizationObject(&o);
    if (status)
        ck_assert_uint_eq(o.hSyncObject, 0x1234);    /* untouched */
    *out = o.hSyncObject;
    return status;
}

/* A new NT handle to a NtSecuritySharing object (what ShareObjects of
 * one sync object does), named or not. */
static int share_nt(D3DKMT_HANDLE h, const char *name)
{
    uint64_t id;
    int fd = -1;

    ck_assert_status(dxgk_syncobj_share_id(h, &id, &(uint64_t){ 0 }), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_share_nt(&id, 1, name, SYNC_ALL, &fd), STATUS_SUCCESS);
    ck_assert_int_ge(fd, 0);
    return fd;
}

static NTSTATUS open_nt2(int fd, D3DKMT_HANDLE dev, D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 *o)
{
    memset(o, 0, sizeof(*o));
    o->hNtHandle = (HANDLE)(intptr_t)fd;
    o->hDevice = dev;
    return D3DKMTOpenSyncObjectFromNtHandle2(o);
}

/* Windows' OBJECT_ATTRIBUTES and UNICODE_STRING (x86_64). */
struct test_unicode_string {
    USHORT Length, MaximumLength;
    WCHAR *Buffer;
};
struct test_object_attributes {
    ULONG Length;
    HANDLE RootDirectory;
    struct test_unicode_string *ObjectName;
    ULONG Attributes;
    void *SecurityDescriptor, *SecurityQualityOfService;
};

static NTSTATUS open_name(const char *name, UINT access, int *fd)
{
    D3DKMT_OPENSYNCOBJECTNTHANDLEFROMNAME o = { 0 };
    struct test_object_attributes oa = { sizeof(oa) };
    struct test_unicode_string us;
    WCHAR buffer[128];
    size_t n = strlen(name);
    NTSTATUS status;

    for (size_t i = 0; i < n; i++)
        buffer[i] = (unsigned char)name[i];
    us.Length = us.MaximumLength = n * sizeof(WCHAR);
    us.Buffer = buffer;
    oa.ObjectName = &us;
    o.dwDesiredAccess = access;
    o.pObjAttrib = (struct _OBJECT_ATTRIBUTES *)&oa;
    status = D3DKMTOpenSyncObjectNtHandleFromName(&o);
    *fd = status ? -1 : (int)(intptr_t)o.hNtHandle;
    return status;
}

/* Waits (bounded) until `n` processes' watchers sleep on the fence whose
 * CPU VA is `cpu` (the page's count, shared_fence.h), so that a signal
 * now must wake them through the page rather than be seen when they arm. */
static void wait_watched(const volatile void *cpu, unsigned n)
{
    const struct dxgk_shared_fence_page *page = (const void *)cpu;
    UINT64 end = kmt_test_now_ms() + BOUND_MS;

    while (atomic_load(&page->watchers) < n && kmt_test_now_ms() < end)
        usleep(1000);
    ck_assert_uint_ge(atomic_load(&page->watchers), n);
    usleep(10000);                       /* let it reach its sleep (either way it must wake) */
}

/* ---- the peer program ----------------------------------------------------------- */

/* Starts the peer (peer_util.h) with up to five arguments; `give` (if
 * >= 0) becomes its fd 10. */
static void peer_start(struct kmt_test_peer *p, int give, const char *a1, const char *a2, const char *a3,
                       const char *a4, const char *a5)
{
    const char *args[] = { a1, a2, a3, a4, a5, NULL };

    kmt_test_peer_start(p, "share_syncobj_peer", &give, give >= 0, args);
}

static void peer_read(struct kmt_test_peer *p, char *line, size_t size)
{
    ck_assert_msg(fgets(line, size, p->out) != NULL, "the peer said nothing");
    line[strcspn(line, "\n")] = 0;
}

static void peer_go(struct kmt_test_peer *p)
{
    ck_assert_int_eq(write(p->in, "go\n", 3), 3);
}

static int peer_end(struct kmt_test_peer *p)
{
    return kmt_test_peer_end(p);
}

/* ---- creation ------------------------------------------------------------------ */

START_TEST(create_shared_gives_global_handle)
{
    static const D3DDDI_SYNCHRONIZATIONOBJECT_TYPE types[] = {
        D3DDDI_SYNCHRONIZATION_MUTEX, D3DDDI_SEMAPHORE, D3DDDI_FENCE, D3DDDI_MONITORED_FENCE,
    };
    D3DKMT_HANDLE h, global;

    setup();
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        ck_assert_status(create(types[i], 0x1, &h, &global), STATUS_SUCCESS);
        ck_assert_local_handle(h);
        ck_assert_uint_eq(global & 3, 2);
        ck_assert_uint_ne(global, h);
        /* a global handle is no local one */
        ck_assert_status(kmt_syncobj_destroy(global), STATUS_INVALID_PARAMETER);
        ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    }
    /* NtSecuritySharing needs Shared; with it the global handle stays internal */
    ck_assert_status(create(D3DDDI_SYNCHRONIZATION_MUTEX, 0x2, &h, &global), STATUS_INVALID_PARAMETER);
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0x3, &h, &global), STATUS_SUCCESS);
    ck_assert_uint_eq(global, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- OpenSynchronizationObject --------------------------------------------------- */

START_TEST(open_global_bad_input)
{
    D3DKMT_HANDLE h, global, out;

    setup();
    ck_assert_status(D3DKMTOpenSynchronizationObject(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(open_global(0xdeadbeef, &out), STATUS_INVALID_PARAMETER);
    ck_assert_status(open_global(0, &out), STATUS_INVALID_PARAMETER);
    ck_assert_status(create(D3DDDI_SYNCHRONIZATION_MUTEX, 0x1, &h, &global), STATUS_SUCCESS);
    /* a local handle is no global one */
    ck_assert_status(open_global(h, &out), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    /* stale: its last holder destroyed it */
    ck_assert_status(open_global(global, &out), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_global_while_a_holder_lives)
{
    D3DKMT_HANDLE h, global, a, b;

    setup();
    ck_assert_status(create(D3DDDI_SEMAPHORE, 0x1, &h, &global), STATUS_SUCCESS);
    ck_assert_status(open_global(global, &a), STATUS_SUCCESS);
    ck_assert_local_handle(a);
    ck_assert_uint_ne(a, h);
    /* destroy and reopen while the creator holds it */
    ck_assert_status(kmt_syncobj_destroy(a), STATUS_SUCCESS);
    ck_assert_status(open_global(global, &a), STATUS_SUCCESS);
    /* the creator goes; the opener keeps it alive */
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    ck_assert_status(open_global(global, &b), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(a), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(b), STATUS_SUCCESS);
    ck_assert_status(open_global(global, &b), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_global_monitored_fence_shares_its_value)
{
    struct kmt_fence f;
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    D3DKMT_HANDLE opened;

    setup();
    create_fence(0x1, 3, &cs);
    f.handle = cs.hSyncObject;
    f.cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    ck_assert_uint_eq(*f.cpu, 3);
    ck_assert_status(open_global(cs.Info.SharedHandle, &opened), STATUS_SUCCESS);
    /* a signal through one handle is seen, and waited for, through the other */
    ck_assert_status(kmt_fence_signal(device, opened, 8, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*f.cpu, 8);
    ck_assert_status(kmt_fence_wait(device, f.handle, 8, 0), STATUS_SUCCESS);
    /* no rewind without AllowFenceRewind, through either */
    ck_assert_status(kmt_fence_signal(device, f.handle, 2, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_fence_signal(device, opened, 2, 4), STATUS_SUCCESS);   /* AllowFenceRewind */
    ck_assert_uint_eq(*f.cpu, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Two local objects of one shared fence in one process wake each other's
 * waits the way two processes do: through the page's wake word and the
 * watcher thread, not the object's own waiter list. */
static void *blocking_wait(void *arg)
{
    return (void *)(intptr_t)kmt_fence_wait(device, *(const D3DKMT_HANDLE *)arg, 4, BOUND_MS);
}

START_TEST(two_opens_wake_each_other)
{
    pthread_t waiter;
    void *result;
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    const volatile UINT64 *cpu;
    D3DKMT_HANDLE h, other, ctx;
    struct kmt_fence ours;
    int ev = kmt_eventfd();

    setup();
    create_fence(0x1, 0, &cs);
    h = cs.hSyncObject;
    cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    ck_assert_status(open_global(cs.Info.SharedHandle, &other), STATUS_SUCCESS);
    /* an async CPU wait on one, a signal of the other */
    ck_assert_status(kmt_fence_wait_or_event(device, h, 2, kmt_event_handle(ev), 0), STATUS_SUCCESS);
    wait_watched(cpu, 1);
    ck_assert(!kmt_event_wait(ev, 0));
    ck_assert_status(kmt_fence_signal(device, other, 2, 0), STATUS_SUCCESS);
    ck_assert(kmt_event_wait(ev, BOUND_MS));
    /* a GPU wait on one: the context runs on once the other is signalled */
    ctx = kmt_exec_virtual_context(device);
    ck_assert_status(kmt_fence_create(device, 0, 0, &ours), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_wait(ctx, h, 3), STATUS_SUCCESS);
    ck_assert_status(kmt_gpu_signal(ctx, ours.handle, 1), STATUS_SUCCESS);
    wait_watched(cpu, 1);
    ck_assert_status(kmt_fence_wait(device, ours.handle, 1, 0), STATUS_TIMEOUT);
    ck_assert_status(kmt_fence_signal(device, other, 3, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, ours.handle, 1, BOUND_MS), STATUS_SUCCESS);
    /* a blocking CPU wait on one, in another thread, sleeps on the page itself */
    ck_assert_int_eq(pthread_create(&waiter, NULL, blocking_wait, &h), 0);
    wait_watched(cpu, 1);
    ck_assert_status(kmt_fence_signal(device, other, 4, 0), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(waiter, &result), 0);
    ck_assert_status((NTSTATUS)(intptr_t)result, STATUS_SUCCESS);
    close(ev);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static void *endless_wait(void *arg)
{
    return (void *)(intptr_t)kmt_fence_wait(device, *(const D3DKMT_HANDLE *)arg, 4, -1);
}

/* A blocking wait on one shared fence sleeps on the fence's wake word
 * alone: a destroy in this process must still end an endless one (else
 * the test's timeout fails it), a timeout must still end a timed one, and
 * neither may leave it counted a watcher. */
START_TEST(one_shared_fence_wait_ends_on_destroy_and_timeout)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    const struct dxgk_shared_fence_page *page;
    pthread_t waiter;
    void *result;

    setup();
    create_fence(0x1, 0, &cs);
    page = (const void *)cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    ck_assert_status(kmt_fence_wait(device, cs.hSyncObject, 4, 50), STATUS_TIMEOUT);
    ck_assert_uint_eq(atomic_load(&page->watchers), 0);
    ck_assert_int_eq(pthread_create(&waiter, NULL, endless_wait, &cs.hSyncObject), 0);
    wait_watched(page, 1);
    ck_assert_status(D3DKMTDestroySynchronizationObject(&(D3DKMT_DESTROYSYNCHRONIZATIONOBJECT){ cs.hSyncObject }),
                     STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(waiter, &result), 0);
    ck_assert_status((NTSTATUS)(intptr_t)result, STATUS_ABANDONED);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- NT handles -------------------------------------------------------------------- */

/* An NT handle to a broker object of another kind; *id its reference. */
static int other_kind_nt_handle(uint64_t *id)
{
    static const char blob[] = "not a sync object";
    struct kmt_broker_create c = {
        .kind = KMT_BROKER_KEYED_MUTEX, .blob = blob, .blob_size = sizeof(blob), .holder_offset = -1,
    };
    int fd = -1;

    ck_assert_status(kmt_broker_create(&c, id, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_share_nt(id, 1, NULL, SYNC_ALL, &fd), STATUS_SUCCESS);
    return fd;
}

START_TEST(open_nt_bad_input)
{
    uint64_t other;
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE o = { 0 };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o2;
    D3DKMT_HANDLE h;
    int fd, pipes[2];

    setup();
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle(&o), STATUS_INVALID_HANDLE);       /* NULL */
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0x3, &h, NULL), STATUS_SUCCESS);
    fd = share_nt(h, NULL);
    /* zeroed; a valid NT handle without a device */
    memset(&o2, 0, sizeof(o2));
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle2(&o2), STATUS_INVALID_PARAMETER);
    ck_assert_status(open_nt2(fd, 0, &o2), STATUS_INVALID_PARAMETER);
    /* an NT handle is no local handle */
    ck_assert_status(kmt_syncobj_destroy((D3DKMT_HANDLE)fd), STATUS_INVALID_PARAMETER);
    close(fd);
    /* closed */
    o.hNtHandle = (HANDLE)(intptr_t)fd;
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle(&o), STATUS_INVALID_HANDLE);
    ck_assert_status(open_nt2(fd, device, &o2), STATUS_INVALID_HANDLE);
    /* a descriptor that is no kmtshim NT handle */
    ck_assert_int_eq(pipe2(pipes, O_CLOEXEC), 0);
    o.hNtHandle = (HANDLE)(intptr_t)pipes[0];
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle(&o), STATUS_OBJECT_TYPE_MISMATCH);
    close(pipes[0]);
    close(pipes[1]);
    /* an NT handle of another type (a keyed mutex's, as the broker keeps it) */
    fd = other_kind_nt_handle(&other);
    o.hNtHandle = (HANDLE)(intptr_t)fd;
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle(&o), STATUS_OBJECT_TYPE_MISMATCH);
    ck_assert_status(open_nt2(fd, device, &o2), STATUS_OBJECT_TYPE_MISMATCH);
    close(fd);
    ck_assert_status(kmt_broker_release(other), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_nt_monitored_fence)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE o = { 0 };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o2;
    const volatile UINT64 *mine, *theirs;
    uint64_t id;
    int fd, again;

    setup();
    create_fence(0x3, 5, &cs);
    mine = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    fd = share_nt(cs.hSyncObject, NULL);
    ck_assert_status(open_nt2(fd, device, &o2), STATUS_SUCCESS);
    ck_assert_local_handle(o2.hSyncObject);
    theirs = o2.MonitoredFence.FenceValueCPUVirtualAddress;
    ck_assert_ptr_nonnull((void *)theirs);
    ck_assert_uint_eq(*theirs, 5);
    ck_assert_status(kmt_fence_signal(device, o2.hSyncObject, 7, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(*mine, 7);
    ck_assert_status(kmt_fence_wait(device, cs.hSyncObject, 7, 0), STATUS_SUCCESS);
    /* the opened object can be shared again */
    ck_assert_status(dxgk_syncobj_share_id(o2.hSyncObject, &id, &(uint64_t){ 0 }), STATUS_SUCCESS);
    again = share_nt(o2.hSyncObject, NULL);
    /* and the object outlives its creator's handle and the first NT handle */
    ck_assert_status(kmt_syncobj_destroy(cs.hSyncObject), STATUS_SUCCESS);
    close(fd);
    o.hNtHandle = (HANDLE)(intptr_t)again;
    ck_assert_status(D3DKMTOpenSyncObjectFromNtHandle(&o), STATUS_SUCCESS);
    ck_assert_local_handle(o.hSyncObject);
    ck_assert_status(kmt_fence_wait(device, o.hSyncObject, 7, 0), STATUS_SUCCESS);
    close(again);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(share_id_rules)
{
    D3DKMT_HANDLE v1, plain, global_only, nt;
    D3DKMT_CREATESYNCHRONIZATIONOBJECT cs = { 0 };
    uint64_t id;

    setup();
    cs.hDevice = device;
    cs.Info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
    ck_assert_status(D3DKMTCreateSynchronizationObject(&cs), STATUS_SUCCESS);
    v1 = cs.hSyncObject;
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0, &plain, NULL), STATUS_SUCCESS);
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0x1, &global_only, NULL), STATUS_SUCCESS);
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0x3, &nt, NULL), STATUS_SUCCESS);
    ck_assert_status(dxgk_syncobj_share_id(0, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);
    ck_assert_status(dxgk_syncobj_share_id(v1, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);
    ck_assert_status(dxgk_syncobj_share_id(plain, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);
    ck_assert_status(dxgk_syncobj_share_id(global_only, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);
    ck_assert_status(dxgk_syncobj_share_id(nt, &id, &(uint64_t){ 0 }), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(nt), STATUS_SUCCESS);
    ck_assert_status(dxgk_syncobj_share_id(nt, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(open_by_name)
{
    static const char name[] = "\\BaseNamedObjects\\kmt-test-syncshare";
    D3DKMT_OPENSYNCOBJECTNTHANDLEFROMNAME zero = { 0 };
    D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2 o2;
    D3DKMT_HANDLE h;
    int fd, named;

    setup();
    ck_assert_status(D3DKMTOpenSyncObjectNtHandleFromName(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenSyncObjectNtHandleFromName(&zero), STATUS_INVALID_PARAMETER);
    ck_assert_status(open_name(name, SYNC_ALL, &fd), STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0x3, &h, NULL), STATUS_SUCCESS);
    named = share_nt(h, name);
    ck_assert_status(open_name(name, 0, &fd), STATUS_ACCESS_DENIED);
    ck_assert_status(open_name("\\BaseNamedObjects\\KMT-TEST-SYNCSHARE", 0x1, &fd), STATUS_SUCCESS);
    ck_assert_int_ge(fd, 0);
    ck_assert_status(open_nt2(fd, device, &o2), STATUS_SUCCESS);
    close(fd);
    /* once every NT handle to it is closed the name is gone, the object not */
    close(named);
    ck_assert_status(open_name(name, SYNC_ALL, &fd), STATUS_OBJECT_NAME_NOT_FOUND);
    named = share_nt(o2.hSyncObject, name);
    ck_assert_status(open_name(name, SYNC_ALL, &fd), STATUS_SUCCESS);
    close(fd);
    close(named);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- two processes ----------------------------------------------------------------- */

/* The peer waits (MODE) for `value` on a fence it opened by `how`; this
 * process signals it; both see the same value. */
static void remote_wait(const char *how, const char *mode)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    char line[128], arg[32], expect[64];
    const volatile UINT64 *cpu;
    struct kmt_test_peer p;
    int fd = -1, sv[2] = { -1, -1 };

    setup();
    create_fence(!strcmp(how, "global") ? 0x1 : 0x3, 0, &cs);
    cpu = cs.Info.MonitoredFence.FenceValueCPUVirtualAddress;
    if (!strcmp(how, "global")) {
        snprintf(arg, sizeof(arg), "%#x", cs.Info.SharedHandle);
        peer_start(&p, -1, "fence", how, arg, mode, "5");
    } else if (!strcmp(how, "nt")) {
        fd = share_nt(cs.hSyncObject, NULL);
        peer_start(&p, fd, "fence", how, "10", mode, "5");   /* inherited as fd 10 */
    } else {
        fd = share_nt(cs.hSyncObject, NULL);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        peer_start(&p, sv[1], "fence", how, "10", mode, "5");
        ck_assert(fd_pass_send(sv[0], fd));                            /* SCM_RIGHTS */
    }
    peer_read(&p, line, sizeof(line));
    ck_assert_msg(!strncmp(line, "ready", 5), "peer: %s", line);
    if (!strcmp(mode, "gpu"))
        ck_assert_msg(!strcmp(line, !strcmp(how, "global") ? "ready 18446744073709551615 0" : "ready 0 0"),
                      "the peer's context did not wait: %s", line);
    wait_watched(cpu, 1);
    /* below the value: nothing ends */
    ck_assert_status(kmt_fence_signal(device, cs.hSyncObject, 4, 0), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, cs.hSyncObject, 5, 0), STATUS_SUCCESS);
    peer_read(&p, line, sizeof(line));
    if (!strcmp(how, "global"))
        snprintf(expect, sizeof(expect), "waited 0 18446744073709551615");   /* no address by global handle */
    else
        snprintf(expect, sizeof(expect), "waited 0 %" PRIu64, (uint64_t)*cpu);
    ck_assert_str_eq(line, expect);
    ck_assert_uint_eq(*cpu, 5);
    ck_assert_int_eq(peer_end(&p), 0);
    if (fd >= 0)
        close(fd);
    if (sv[0] >= 0) {
        close(sv[0]);
        close(sv[1]);
    }
    kmt_test_shutdown_no_leaks();
}

START_TEST(remote_cpu_wait_nt_inherited)
{
    remote_wait("nt", "cpu");
}
END_TEST

START_TEST(remote_event_wait_nt_scm_rights)
{
    remote_wait("scm", "event");
}
END_TEST

START_TEST(remote_gpu_wait_global)
{
    remote_wait("global", "gpu");
}
END_TEST

START_TEST(remote_gpu_wait_nt)
{
    remote_wait("nt", "gpu");
}
END_TEST

START_TEST(remote_signal_wakes_local_waits)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs;
    char line[128];
    struct kmt_test_peer p;
    int fd, ev = kmt_eventfd();

    setup();
    create_fence(0x3, 0, &cs);
    fd = share_nt(cs.hSyncObject, NULL);
    peer_start(&p, fd, "fence", "nt", "10", "signal", "11");
    peer_read(&p, line, sizeof(line));
    ck_assert_str_eq(line, "ready 0");
    ck_assert_status(kmt_fence_wait_or_event(device, cs.hSyncObject, 11, kmt_event_handle(ev), 0),
                     STATUS_SUCCESS);
    wait_watched(cs.Info.MonitoredFence.FenceValueCPUVirtualAddress, 1);
    ck_assert(!kmt_event_wait(ev, 0));
    peer_go(&p);
    peer_read(&p, line, sizeof(line));
    ck_assert_str_eq(line, "signalled 0");
    ck_assert(kmt_event_wait(ev, BOUND_MS));
    ck_assert_uint_eq(*(const volatile UINT64 *)cs.Info.MonitoredFence.FenceValueCPUVirtualAddress, 11);
    ck_assert_status(kmt_fence_wait(device, cs.hSyncObject, 11, 0), STATUS_SUCCESS);
    ck_assert_int_eq(peer_end(&p), 0);
    close(fd);
    close(ev);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(remote_opens_legacy_objects)
{
    static const D3DDDI_SYNCHRONIZATIONOBJECT_TYPE types[] = {
        D3DDDI_SYNCHRONIZATION_MUTEX, D3DDDI_SEMAPHORE, D3DDDI_FENCE,
    };
    char line[64], arg[32];
    D3DKMT_HANDLE h, global;
    struct kmt_test_peer p;

    setup();
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        ck_assert_status(create(types[i], 0x1, &h, &global), STATUS_SUCCESS);
        snprintf(arg, sizeof(arg), "%#x", global);
        peer_start(&p, -1, "open-global", arg, NULL, NULL, NULL);
        peer_read(&p, line, sizeof(line));
        ck_assert_str_eq(line, "opened 0");
        ck_assert_int_eq(peer_end(&p), 0);
        ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Waits (bounded) until the broker has seen the peer's connection end. */
static NTSTATUS open_global_after_death(D3DKMT_HANDLE global, D3DKMT_HANDLE *out)
{
    UINT64 end = kmt_test_now_ms() + BOUND_MS;
    struct kmt_broker_stats st;
    NTSTATUS status;

    for (;;) {
        ck_assert_status(kmt_broker_query_stats(&st), STATUS_SUCCESS);
        if (st.clients == 1 || kmt_test_now_ms() > end)
            break;
        usleep(1000);
    }
    status = open_global(global, out);
    return status;
}

START_TEST(holder_killed)
{
    struct kmt_broker_stats before, after;
    char line[64], arg[32];
    D3DKMT_HANDLE h, global, again;
    struct kmt_test_peer p;
    int status;

    setup();
    ck_assert_status(create(D3DDDI_MONITORED_FENCE, 0x1, &h, &global), STATUS_SUCCESS);
    snprintf(arg, sizeof(arg), "%#x", global);

    /* the peer dies holding it: the object stays for us */
    peer_start(&p, -1, "open-global", arg, NULL, NULL, NULL);
    peer_read(&p, line, sizeof(line));
    ck_assert_str_eq(line, "opened 0");
    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    status = peer_end(&p);
    ck_assert(WIFSIGNALED(status));
    ck_assert_status(open_global_after_death(global, &again), STATUS_SUCCESS);
    ck_assert_status(kmt_syncobj_destroy(again), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_signal(device, h, 1, 0), STATUS_SUCCESS);

    /* we let go, the peer holds it and dies: the global handle dies with it */
    peer_start(&p, -1, "open-global", arg, NULL, NULL, NULL);
    peer_read(&p, line, sizeof(line));
    ck_assert_str_eq(line, "opened 0");
    ck_assert_status(kmt_syncobj_destroy(h), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_query_stats(&before), STATUS_SUCCESS);
    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    peer_end(&p);
    ck_assert_status(open_global_after_death(global, &again), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_query_stats(&after), STATUS_SUCCESS);
    ck_assert_uint_gt(after.objects_freed, before.objects_freed);
    ck_assert_uint_eq(after.objects, 0);
    ck_assert_uint_eq(after.global_handles, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("share_syncobj");
    TCase *tc = tcase_create("share_syncobj");

    (void)argc;
    (void)argv;
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, create_shared_gives_global_handle);
    tcase_add_test(tc, open_global_bad_input);
    tcase_add_test(tc, open_global_while_a_holder_lives);
    tcase_add_test(tc, open_global_monitored_fence_shares_its_value);
    tcase_add_test(tc, two_opens_wake_each_other);
    tcase_add_test(tc, one_shared_fence_wait_ends_on_destroy_and_timeout);
    tcase_add_test(tc, open_nt_bad_input);
    tcase_add_test(tc, open_nt_monitored_fence);
    tcase_add_test(tc, share_id_rules);
    tcase_add_test(tc, open_by_name);
    tcase_add_test(tc, remote_cpu_wait_nt_inherited);
    tcase_add_test(tc, remote_event_wait_nt_scm_rights);
    tcase_add_test(tc, remote_gpu_wait_global);
    tcase_add_test(tc, remote_gpu_wait_nt);
    tcase_add_test(tc, remote_signal_wakes_local_waits);
    tcase_add_test(tc, remote_opens_legacy_objects);
    tcase_add_test(tc, holder_killed);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
