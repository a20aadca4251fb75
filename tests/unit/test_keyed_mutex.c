/*
 * Keyed mutexes: CreateKeyedMutex(2), OpenKeyedMutex(2),
 * OpenKeyedMutexFromNtHandle, DestroyKeyedMutex, AcquireKeyedMutex(2),
 * ReleaseKeyedMutex(2).  Every row of the notes' "Keyed mutexes" table has
 * a case here, then bad input, threads, and other processes
 * (tests/unit/keyed_mutex_peer, started with posix_spawn): a mutex handed
 * back and forth with fence values, a holder killed with SIGKILL while
 * this process waits, and the global handle dying with its last holder.
 * Each case has a private session broker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peer_util.h"
#include "syscall_trap.h"
#include "test_util.h"
#include "broker/broker.h"
#include "dxgkrnl/share.h"

#define GARBAGE_HANDLE 0x40001240u
#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)
#define PRESET 0xcdcdcdcdu
#define PRESET64 0xcdcdcdcdcdcdcdcdull
/* 10 ms, relative, in 100 ns units */
#define TEN_MS (-100000ll)

static void setup(void)
{
    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
}

/* ---- helpers ------------------------------------------------------------- */

static D3DKMT_HANDLE create(UINT64 initial, D3DKMT_HANDLE *global)
{
    D3DKMT_CREATEKEYEDMUTEX c = { .InitialValue = initial, .hSharedHandle = PRESET, .hKeyedMutex = PRESET };

    ck_assert_status(D3DKMTCreateKeyedMutex(&c), STATUS_SUCCESS);
    ck_assert_local_handle(c.hKeyedMutex);
    if (global)
        *global = c.hSharedHandle;
    return c.hKeyedMutex;
}

static D3DKMT_HANDLE create2(const void *runtime, UINT size, bool nt, D3DKMT_HANDLE *global)
{
    D3DKMT_CREATEKEYEDMUTEX2 c = { .hSharedHandle = PRESET, .hKeyedMutex = PRESET,
                                   .pPrivateRuntimeData = (void *)runtime,
                                   .PrivateRuntimeDataSize = size };

    c.Flags.NtSecuritySharing = nt;
    ck_assert_status(D3DKMTCreateKeyedMutex2(&c), STATUS_SUCCESS);
    ck_assert_local_handle(c.hKeyedMutex);
    if (global)
        *global = c.hSharedHandle;
    return c.hKeyedMutex;
}

static D3DKMT_HANDLE open_global(D3DKMT_HANDLE global)
{
    D3DKMT_OPENKEYEDMUTEX o = { .hSharedHandle = global, .hKeyedMutex = PRESET };

    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_SUCCESS);
    ck_assert_local_handle(o.hKeyedMutex);
    return o.hKeyedMutex;
}

static NTSTATUS destroy(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { h };

    return D3DKMTDestroyKeyedMutex(&d);
}

/* Acquires with `timeout` (NULL: infinite); *fence gets FenceValue. */
static NTSTATUS acquire(D3DKMT_HANDLE h, UINT64 key, const LONGLONG *timeout, UINT64 *fence)
{
    LARGE_INTEGER t;
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = h, .Key = key, .FenceValue = PRESET64 };
    NTSTATUS status;

    if (timeout) {
        t.QuadPart = *timeout;
        a.pTimeout = &t;
    }
    status = D3DKMTAcquireKeyedMutex(&a);
    ck_assert_uint_eq(a.Key, key);
    if (fence)
        *fence = a.FenceValue;
    return status;
}

static NTSTATUS release(D3DKMT_HANDLE h, UINT64 key, UINT64 fence)
{
    D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = h, .Key = key, .FenceValue = fence };

    return D3DKMTReleaseKeyedMutex(&r);
}

static const LONGLONG ten_ms = TEN_MS;

static struct kmt_broker_stats broker_stats(void)
{
    struct kmt_broker_stats s;

    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
    return s;
}

/* The broker learns of a peer's exit on its own connection: wait (bounded)
 * until its books show no object. */
static void assert_broker_frees_everything(void)
{
    struct kmt_broker_stats s;

    for (int i = 0; i < 1000; i++) {
        s = broker_stats();
        if (!s.objects)
            break;
        usleep(10000);
    }
    ck_assert_uint_eq(s.objects, 0);
    ck_assert_uint_eq(s.global_handles, 0);
    ck_assert_uint_eq(s.fds, 0);
}

/* ---- the notes' table ---------------------------------------------------- */

START_TEST(create_null)
{
    ck_assert_status(D3DKMTCreateKeyedMutex(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateKeyedMutex2(NULL), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(create_zeroed_gives_local_and_global)
{
    D3DKMT_HANDLE g1, g2, h1 = create(0, &g1), h2 = create2(NULL, 0, false, &g2);

    ck_assert_uint_eq(g1 & 0x3f, 2);
    ck_assert_uint_eq(g2 & 0x3f, 2);
    ck_assert_uint_ne(g1, g2);
    ck_assert_uint_ne(h1, h2);
    ck_assert_status(destroy(h1), STATUS_SUCCESS);
    ck_assert_status(destroy(h2), STATUS_SUCCESS);
}
END_TEST

START_TEST(create2_nt_sharing_has_no_global)
{
    D3DKMT_HANDLE global, h = create2(NULL, 0, true, &global);
    uint64_t id = 0;

    ck_assert_uint_eq(global, 0);
    ck_assert_status(dxgk_keyed_mutex_share_id(h, &id, &(uint64_t){ 0 }), STATUS_SUCCESS);
    ck_assert_uint_ne(id, 0);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

START_TEST(open_zeroed)
{
    D3DKMT_OPENKEYEDMUTEX o = { 0 };
    D3DKMT_OPENKEYEDMUTEX2 o2 = { 0 };

    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenKeyedMutex2(&o2), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hKeyedMutex, 0);
    ck_assert_status(D3DKMTOpenKeyedMutex(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenKeyedMutex2(NULL), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(open_global_until_last_handle_goes)
{
    D3DKMT_HANDLE global, h = create(0, &global), o1 = open_global(global), o2;
    D3DKMT_OPENKEYEDMUTEX2 o = { .hSharedHandle = global };

    ck_assert_uint_ne(o1, h);
    ck_assert_status(D3DKMTOpenKeyedMutex2(&o), STATUS_SUCCESS);
    o2 = o.hKeyedMutex;
    ck_assert_local_handle(o2);
    /* destroy and reopen works while another holder lives */
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    ck_assert_status(destroy(o1), STATUS_SUCCESS);
    o1 = open_global(global);
    ck_assert_status(destroy(o1), STATUS_SUCCESS);
    ck_assert_status(destroy(o2), STATUS_SUCCESS);
    /* every local handle is gone: the global one with them */
    o = (D3DKMT_OPENKEYEDMUTEX2){ .hSharedHandle = global };
    ck_assert_status(D3DKMTOpenKeyedMutex2(&o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hKeyedMutex, 0);
    ck_assert_uint_eq(broker_stats().objects, 0);
}
END_TEST

static NTSTATUS open2(D3DKMT_HANDLE global, void *buf, UINT *size)
{
    D3DKMT_OPENKEYEDMUTEX2 o = { .hSharedHandle = global, .pPrivateRuntimeData = buf,
                                 .PrivateRuntimeDataSize = *size };
    NTSTATUS status = D3DKMTOpenKeyedMutex2(&o);

    *size = o.PrivateRuntimeDataSize;
    if (!status) {
        ck_assert_local_handle(o.hKeyedMutex);
        ck_assert_status(destroy(o.hKeyedMutex), STATUS_SUCCESS);
    } else {
        ck_assert_uint_eq(o.hKeyedMutex, 0);
    }
    return status;
}

START_TEST(open2_runtime_data_sizes)
{
    static const unsigned char six[6] = { 1, 2, 3, 4, 5, 6 };
    unsigned char buf[64];
    D3DKMT_HANDLE g0, g6, h0 = create2(NULL, 0, false, &g0), h6 = create2(six, 6, false, &g6);
    UINT size;

    /* made without runtime data */
    size = 64;
    ck_assert_status(open2(g0, NULL, &size), STATUS_INVALID_PARAMETER);
    size = 64;
    ck_assert_status(open2(g0, buf, &size), STATUS_SUCCESS);
    ck_assert_uint_eq(size, 64);
    /* made with 6 bytes */
    size = 0;
    ck_assert_status(open2(g6, NULL, &size), STATUS_SUCCESS);
    ck_assert_uint_eq(size, 0);
    size = 64;
    ck_assert_status(open2(g6, NULL, &size), STATUS_INVALID_PARAMETER);
    size = 5;
    ck_assert_status(open2(g6, buf, &size), STATUS_INVALID_PARAMETER);
    memset(buf, 0xab, sizeof(buf));
    size = 6;
    ck_assert_status(open2(g6, buf, &size), STATUS_SUCCESS);
    ck_assert_uint_eq(size, 6);
    for (unsigned i = 0; i < sizeof(buf); i++)
        ck_assert_uint_eq(buf[i], 0xab);            /* not written */
    ck_assert_status(destroy(h0), STATUS_SUCCESS);
    ck_assert_status(destroy(h6), STATUS_SUCCESS);
}
END_TEST

START_TEST(destroy_zeroed_and_twice)
{
    D3DKMT_HANDLE global, h = create(0, &global);

    ck_assert_status(destroy(0), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyKeyedMutex(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy(global), STATUS_INVALID_PARAMETER);   /* a global handle is never local */
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    ck_assert_status(destroy(h), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(acquire_bad_handle_leaves_outputs)
{
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = GARBAGE_HANDLE, .Key = 7, .FenceValue = PRESET64 };
    D3DKMT_ACQUIREKEYEDMUTEX2 a2 = { .hKeyedMutex = 0, .Key = 7, .FenceValue = PRESET64 };

    ck_assert_status(D3DKMTAcquireKeyedMutex(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTAcquireKeyedMutex2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTAcquireKeyedMutex(&a), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(a.Key, 7);
    ck_assert_uint_eq(a.FenceValue, PRESET64);
    ck_assert_status(D3DKMTAcquireKeyedMutex2(&a2), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(a2.Key, 7);
    ck_assert_uint_eq(a2.FenceValue, PRESET64);
}
END_TEST

START_TEST(acquire_fresh_key0)
{
    D3DKMT_HANDLE h = create(0, NULL);
    UINT64 fence;

    ck_assert_status(acquire(h, 0, NULL, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(release(h, 0, 0), STATUS_SUCCESS);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

START_TEST(acquire_wrong_key_times_out)
{
    D3DKMT_HANDLE h = create(0, NULL);
    UINT64 fence;

    ck_assert_status(acquire(h, 1, &ten_ms, &fence), STATUS_TIMEOUT);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

START_TEST(release_carries_key_and_fence)
{
    D3DKMT_HANDLE h = create(0, NULL);
    UINT64 fence;

    ck_assert_status(acquire(h, 0, NULL, &fence), STATUS_SUCCESS);
    ck_assert_status(release(h, 1, 1234), STATUS_SUCCESS);
    ck_assert_status(acquire(h, 0, &ten_ms, &fence), STATUS_TIMEOUT);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(acquire(h, 1, &ten_ms, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, 1234);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

START_TEST(release_by_non_owner)
{
    D3DKMT_HANDLE global, h = create(0, &global), other = open_global(global);

    ck_assert_status(release(h, 0, 0), STATUS_INVALID_PARAMETER);       /* not held */
    ck_assert_status(acquire(h, 0, NULL, NULL), STATUS_SUCCESS);
    ck_assert_status(release(other, 1, 5), STATUS_INVALID_PARAMETER);   /* held by h */
    ck_assert_status(D3DKMTReleaseKeyedMutex(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTReleaseKeyedMutex2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(release(GARBAGE_HANDLE, 1, 5), STATUS_INVALID_PARAMETER);
    ck_assert_status(release(0, 1, 5), STATUS_INVALID_PARAMETER);
    /* the failed releases changed nothing: h still owns it, released to key 0 */
    ck_assert_status(acquire(other, 0, &ten_ms, NULL), STATUS_TIMEOUT);
    ck_assert_status(release(h, 2, 9), STATUS_SUCCESS);
    ck_assert_status(release(h, 2, 9), STATUS_INVALID_PARAMETER);       /* twice */
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    ck_assert_status(destroy(other), STATUS_SUCCESS);
}
END_TEST

/* With +d3dkmt the plain thunks leave their inline path for the full one:
 * the same answers, and each call traced under its own name. */
START_TEST(traced_pair_answers_as_the_plain_one)
{
    D3DKMT_HANDLE global, h = create(0, &global), other = open_global(global);
    const char *text;
    UINT64 fence;

    setenv("KMTSHIM_DEBUG", "+d3dkmt", 1);
    kmt_debug_reset();
    kmt_test_capture_begin();
    ck_assert_status(acquire(h, 0, NULL, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(release(other, 1, 5), STATUS_INVALID_PARAMETER);   /* held by h */
    ck_assert_status(release(h, 1, 7), STATUS_SUCCESS);
    ck_assert_status(release(h, 1, 7), STATUS_INVALID_PARAMETER);       /* twice */
    text = kmt_test_capture_end();
    unsetenv("KMTSHIM_DEBUG");
    kmt_debug_reset();
    ck_assert_int_eq(kmt_test_count_lines(text, "D3DKMTAcquireKeyedMutex", "-> STATUS_SUCCESS"), 1);
    ck_assert_int_eq(kmt_test_count_lines(text, "D3DKMTReleaseKeyedMutex", "-> STATUS_SUCCESS"), 1);
    ck_assert_int_eq(kmt_test_count_lines(text, "D3DKMTReleaseKeyedMutex", "-> STATUS_INVALID_PARAMETER"), 2);
    /* untraced again: the inline path, released to key 1 with fence 7 */
    ck_assert_status(acquire(other, 1, NULL, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, 7);
    ck_assert_status(release(other, 0, 0), STATUS_SUCCESS);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    ck_assert_status(destroy(other), STATUS_SUCCESS);
}
END_TEST

struct waiter {
    D3DKMT_HANDLE h;
    _Atomic pid_t tid;
    UINT64 key;
    UINT64 fence;
    NTSTATUS status;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = w->h, .Key = w->key, .FenceValue = PRESET64 };

    w->tid = gettid();
    w->status = D3DKMTAcquireKeyedMutex(&a);
    w->fence = a.FenceValue;
    return NULL;
}

/* Waits (bounded) until thread `tid` of this process sleeps in a futex
 * call: the keyed mutex's sleep, so the case tests the wake, not a race. */
static void wait_for_futex_sleep(pid_t tid)
{
    char path[64], buf[64];

    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    for (int i = 0; i < 5000; i++) {
        FILE *f = fopen(path, "r");
        long nr = -1;

        if (f) {
            if (fgets(buf, sizeof(buf), f))
                nr = strtol(buf, NULL, 10);
            fclose(f);
        }
        if (nr == SYS_futex || nr == 449 /* futex_waitv */)
            return;
        usleep(1000);
    }
    ck_abort_msg("thread %d never slept in a futex", (int)tid);
}

START_TEST(destroying_the_owner_abandons)
{
    D3DKMT_HANDLE global, h = create(0, &global), other = open_global(global);
    struct waiter w = { .h = other, .key = 0 };
    pthread_t thread;
    UINT64 fence;

    ck_assert_status(acquire(h, 0, NULL, NULL), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_create(&thread, NULL, wait_thread, &w), 0);
    while (!w.tid)
        usleep(1000);
    wait_for_futex_sleep(w.tid);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_status(w.status, STATUS_ABANDONED);
    ck_assert_uint_eq(w.fence, 0);
    /* and for good, whatever the key */
    ck_assert_status(acquire(other, 0, &ten_ms, &fence), STATUS_ABANDONED);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(acquire(other, 5, NULL, &fence), STATUS_ABANDONED);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(release(other, 0, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy(other), STATUS_SUCCESS);
}
END_TEST

START_TEST(destroying_a_non_owner_abandons_nothing)
{
    D3DKMT_HANDLE global, h = create(0, &global), other = open_global(global);
    UINT64 fence;

    ck_assert_status(acquire(h, 0, NULL, NULL), STATUS_SUCCESS);
    ck_assert_status(destroy(other), STATUS_SUCCESS);
    ck_assert_status(release(h, 3, 33), STATUS_SUCCESS);
    ck_assert_status(acquire(h, 3, NULL, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, 33);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

/* ---- the 2 forms' runtime data -------------------------------------------- */

START_TEST(release2_hands_data_to_acquire2)
{
    static const char eight[8] = "abcdefgh";
    char out[8], seven[7];
    D3DKMT_HANDLE h = create2(eight, 8, false, NULL);
    D3DKMT_ACQUIREKEYEDMUTEX2 a = { .hKeyedMutex = h, .Key = 0, .pPrivateRuntimeData = out,
                                    .PrivateRuntimeDataSize = sizeof(out) };
    D3DKMT_RELEASEKEYEDMUTEX2 r = { .hKeyedMutex = h, .Key = 4, .FenceValue = 44,
                                    .pPrivateRuntimeData = "12345678", .PrivateRuntimeDataSize = 8 };

    memset(out, 'x', sizeof(out));
    ck_assert_status(D3DKMTAcquireKeyedMutex2(&a), STATUS_SUCCESS);
    ck_assert_mem_eq(out, "\0\0\0\0\0\0\0\0", 8);    /* nothing released with data yet */
    /* a size other than the creator's is refused, and changes nothing */
    r.PrivateRuntimeDataSize = 7;
    ck_assert_status(D3DKMTReleaseKeyedMutex2(&r), STATUS_INVALID_PARAMETER);
    r.PrivateRuntimeDataSize = 8;
    r.pPrivateRuntimeData = NULL;
    ck_assert_status(D3DKMTReleaseKeyedMutex2(&r), STATUS_INVALID_PARAMETER);
    r.pPrivateRuntimeData = "12345678";
    ck_assert_status(D3DKMTReleaseKeyedMutex2(&r), STATUS_SUCCESS);

    a.Key = 4;
    a.pPrivateRuntimeData = seven;
    a.PrivateRuntimeDataSize = sizeof(seven);
    ck_assert_status(D3DKMTAcquireKeyedMutex2(&a), STATUS_INVALID_PARAMETER);
    a.pPrivateRuntimeData = GARBAGE_PTR;
    a.PrivateRuntimeDataSize = 8;
    ck_assert_status(D3DKMTAcquireKeyedMutex2(&a), STATUS_INVALID_PARAMETER);
    a.pPrivateRuntimeData = out;
    ck_assert_status(D3DKMTAcquireKeyedMutex2(&a), STATUS_SUCCESS);
    ck_assert_uint_eq(a.FenceValue, 44);
    ck_assert_mem_eq(out, "12345678", 8);
    /* the 1 forms carry no data: the next Acquire2 reads none */
    ck_assert_status(release(h, 5, 55), STATUS_SUCCESS);
    a.Key = 5;
    ck_assert_status(D3DKMTAcquireKeyedMutex2(&a), STATUS_SUCCESS);
    ck_assert_mem_eq(out, "\0\0\0\0\0\0\0\0", 8);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

START_TEST(create2_bad_input)
{
    char buf[16] = { 0 };
    D3DKMT_CREATEKEYEDMUTEX2 c = { .hKeyedMutex = PRESET, .hSharedHandle = PRESET };

    c.Flags.Value = 2;                                 /* reserved bit */
    ck_assert_status(D3DKMTCreateKeyedMutex2(&c), STATUS_INVALID_PARAMETER);
    c.Flags.Value = 0;
    c.PrivateRuntimeDataSize = 16;                     /* NULL with a size */
    ck_assert_status(D3DKMTCreateKeyedMutex2(&c), STATUS_INVALID_PARAMETER);
    c.pPrivateRuntimeData = GARBAGE_PTR;
    ck_assert_status(D3DKMTCreateKeyedMutex2(&c), STATUS_INVALID_PARAMETER);
    c.pPrivateRuntimeData = buf;
    c.PrivateRuntimeDataSize = 0xffffffffu;            /* garbage size */
    ck_assert_status(D3DKMTCreateKeyedMutex2(&c), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(c.hKeyedMutex, PRESET);
    ck_assert_uint_eq(c.hSharedHandle, PRESET);
    ck_assert_status(D3DKMTCreateKeyedMutex((void *)GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(broker_stats().objects, 0);
}
END_TEST

/* ---- bad handles and timeouts ------------------------------------------- */

START_TEST(wrong_type_and_stale_handles)
{
    D3DKMT_HANDLE adapter, device = kmt_test_create_device(&adapter);
    D3DKMT_HANDLE global, h = create(0, &global);
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds = { h };
    D3DKMT_OPENKEYEDMUTEX o = { .hSharedHandle = h };

    ck_assert_status(acquire(device, 0, &ten_ms, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(acquire(adapter, 0, &ten_ms, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(acquire(global, 0, &ten_ms, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(release(device, 0, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy(device), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroySynchronizationObject(&ds), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_INVALID_PARAMETER);   /* a local handle */
    o.hSharedHandle = GARBAGE_HANDLE | 2;
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    /* stale: the local handle and the global one */
    ck_assert_status(acquire(h, 0, &ten_ms, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(release(h, 0, 0), STATUS_INVALID_PARAMETER);
    o.hSharedHandle = global;
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hKeyedMutex, 0);
    /* the device still works, and no keyed mutex became one */
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ device }), STATUS_SUCCESS);
}
END_TEST

/* A broker that died took its objects and this process's references:
 * the handle stays until destroyed, but no longer works, and the global
 * handle names nothing in the broker that follows. */
START_TEST(broker_death_removes_the_mutex)
{
    D3DKMT_OPENKEYEDMUTEX o = { .hKeyedMutex = PRESET };
    D3DKMT_HANDLE global, h = create(0, &global);
    struct kmt_broker_stats s;
    pid_t pid = broker_stats().broker_pid;
    UINT64 fence;

    ck_assert_status(acquire(h, 0, NULL, &fence), STATUS_SUCCESS);
    ck_assert_status(release(h, 1, 0), STATUS_SUCCESS);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    for (int i = 0; i < 10000 && !kill(pid, 0); i++)
        usleep(1000);
    kmt_test_capture_begin();
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);   /* a new broker */
    ck_assert_status(acquire(h, 1, &ten_ms, &fence), STATUS_DEVICE_REMOVED);
    ck_assert_uint_eq(fence, PRESET64);  /* as for a bad handle */
    o.hSharedHandle = global;
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    kmt_test_capture_end();
}
END_TEST

START_TEST(timeout_forms)
{
    D3DKMT_HANDLE h = create(0, NULL);
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = h, .Key = 1, .pTimeout = GARBAGE_PTR,
                                   .FenceValue = PRESET64 };
    struct timespec now;
    LONGLONG t;
    UINT64 fence;

    ck_assert_status(D3DKMTAcquireKeyedMutex(&a), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(a.FenceValue, PRESET64);
    t = 0;                                             /* a poll */
    ck_assert_status(acquire(h, 1, &t, &fence), STATUS_TIMEOUT);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(acquire(h, 0, &t, &fence), STATUS_SUCCESS);
    ck_assert_status(release(h, 0, 0), STATUS_SUCCESS);
    t = 1;                                             /* absolute, in 1601 */
    ck_assert_status(acquire(h, 1, &t, NULL), STATUS_TIMEOUT);
    /* absolute, 20 ms from now on the wall clock */
    clock_gettime(CLOCK_REALTIME, &now);
    t = (LONGLONG)now.tv_sec * 10000000 + now.tv_nsec / 100 + 116444736000000000ll + 200000;
    ck_assert_status(acquire(h, 1, &t, NULL), STATUS_TIMEOUT);
    t = LLONG_MIN + 1;                                 /* relative, longer than anyone waits */
    ck_assert_status(acquire(h, 0, &t, NULL), STATUS_SUCCESS);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

/* ---- threads ---------------------------------------------------------------- */

#define RING 4
#define ROUNDS 500

struct ring_member {
    D3DKMT_HANDLE h;
    unsigned index;
    unsigned *counter;
    bool ok;
};

/* Member i acquires key i and releases to key i+1: the mutex goes round
 * the ring, each release's fence value the count so far. */
static void *ring_thread(void *arg)
{
    struct ring_member *m = arg;

    m->ok = true;
    for (unsigned r = 0; r < ROUNDS && m->ok; r++) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = m->h, .Key = m->index };
        D3DKMT_RELEASEKEYEDMUTEX rel = { .hKeyedMutex = m->h, .Key = (m->index + 1) % RING };

        if (D3DKMTAcquireKeyedMutex(&a) || a.FenceValue != *m->counter) {
            m->ok = false;
            break;
        }
        rel.FenceValue = ++*m->counter;
        if (D3DKMTReleaseKeyedMutex(&rel))
            m->ok = false;
    }
    return NULL;
}

START_TEST(threads_pass_it_round_a_ring)
{
    D3DKMT_HANDLE global, h = create(0, &global);
    struct ring_member m[RING];
    pthread_t threads[RING];
    unsigned counter = 0;
    UINT64 fence;

    for (unsigned i = 0; i < RING; i++) {
        /* half share the creator's handle, half have their own */
        m[i] = (struct ring_member){ .h = i % 2 ? open_global(global) : h, .index = i, .counter = &counter };
        ck_assert_int_eq(pthread_create(&threads[i], NULL, ring_thread, &m[i]), 0);
    }
    for (unsigned i = 0; i < RING; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        ck_assert_msg(m[i].ok, "ring member %u failed", i);
    }
    ck_assert_uint_eq(counter, RING * ROUNDS);
    ck_assert_status(acquire(h, 0, &ten_ms, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, RING * ROUNDS);
    for (unsigned i = 1; i < RING; i += 2)
        ck_assert_status(destroy(m[i].h), STATUS_SUCCESS);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

struct racer {
    D3DKMT_HANDLE h;
    unsigned *inside;
    bool ok;
};

/* Every thread wants key 0 and gives it back to key 0: plain mutual
 * exclusion, checked by a counter no two owners may see raised. */
static void *exclusion_thread(void *arg)
{
    struct racer *r = arg;

    r->ok = true;
    for (unsigned i = 0; i < ROUNDS; i++) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = r->h, .Key = 0 };
        D3DKMT_RELEASEKEYEDMUTEX rel = { .hKeyedMutex = r->h, .Key = 0 };

        if (D3DKMTAcquireKeyedMutex(&a)) {
            r->ok = false;
            return NULL;
        }
        if (__atomic_fetch_add(r->inside, 1, __ATOMIC_SEQ_CST))
            r->ok = false;
        __atomic_fetch_sub(r->inside, 1, __ATOMIC_SEQ_CST);
        if (D3DKMTReleaseKeyedMutex(&rel))
            r->ok = false;
    }
    return NULL;
}

START_TEST(threads_exclude_each_other)
{
    D3DKMT_HANDLE global, h = create(0, &global);
    struct racer r[RING];
    pthread_t threads[RING];
    unsigned inside = 0;

    for (unsigned i = 0; i < RING; i++) {
        r[i] = (struct racer){ .h = open_global(global), .inside = &inside };
        ck_assert_int_eq(pthread_create(&threads[i], NULL, exclusion_thread, &r[i]), 0);
    }
    for (unsigned i = 0; i < RING; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        ck_assert_msg(r[i].ok, "thread %u saw another owner or failed", i);
        ck_assert_status(destroy(r[i].h), STATUS_SUCCESS);
    }
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

struct churner {
    D3DKMT_HANDLE h;
    _Atomic bool stop;
};

/* Acquires and releases key 0 on one handle until it is destroyed. */
static void *churn_thread(void *arg)
{
    struct churner *c = arg;

    while (!c->stop) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = c->h, .Key = 0 };
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = c->h, .Key = 0 };

        if (D3DKMTAcquireKeyedMutex(&a))
            break;
        if (D3DKMTReleaseKeyedMutex(&r))
            break;
    }
    return NULL;
}

/* A handle destroyed while another thread acquires and releases through
 * it: whatever the interleaving, the mutex ends free or abandoned, never
 * owned by a handle that is gone. */
START_TEST(destroy_races_with_acquire)
{
    for (unsigned round = 0; round < 50; round++) {
        D3DKMT_HANDLE global, h = create(0, &global), other = open_global(global);
        struct churner c = { .h = h };
        pthread_t thread;
        NTSTATUS status;

        ck_assert_int_eq(pthread_create(&thread, NULL, churn_thread, &c), 0);
        usleep(round * 20);
        ck_assert_status(destroy(h), STATUS_SUCCESS);
        c.stop = true;
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        status = acquire(other, 0, &ten_ms, NULL);
        ck_assert_msg(status == STATUS_SUCCESS || status == STATUS_ABANDONED, "round %u: 0x%08x", round,
                      (unsigned)status);
        ck_assert_status(destroy(other), STATUS_SUCCESS);
    }
}
END_TEST

/* Threads acquire and release through a handle, and through a second
 * handle of the same mutex, while the main thread destroys the first:
 * acquire and release look the handle up with no reference (an RCU read
 * section, keyed_mutex.c), so this is the row that sees a freed object
 * used (a crash here, a report under ASan or TSan).  Every call answers
 * with a status a live or a destroyed handle gives. */
struct storm {
    D3DKMT_HANDLE h;
    _Atomic bool stop;
    NTSTATUS bad;                        /* the first status outside those, 0 if none */
};

static bool storm_acquire_ok(NTSTATUS s)
{
    return s == STATUS_SUCCESS || s == STATUS_TIMEOUT || s == STATUS_ABANDONED ||
           s == STATUS_INVALID_PARAMETER;
}

static void *storm_thread(void *arg)
{
    struct storm *st = arg;
    LARGE_INTEGER now = { .QuadPart = 0 };

    for (unsigned i = 0; !atomic_load(&st->stop) && !st->bad; i++) {
        /* odd turns take the untimed path the uncontended pair takes */
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = st->h, .Key = 0, .pTimeout = i & 1 ? NULL : &now };
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = st->h, .Key = 0, .FenceValue = i };
        NTSTATUS s = D3DKMTAcquireKeyedMutex(&a);

        if (!storm_acquire_ok(s))
            st->bad = s;
        else if (s == STATUS_SUCCESS && (s = D3DKMTReleaseKeyedMutex(&r)) && s != STATUS_INVALID_PARAMETER)
            st->bad = s;
    }
    return NULL;
}

START_TEST(destroy_races_with_threads_on_two_handles)
{
    enum { THREADS = 4 };

    for (unsigned round = 0; round < 100; round++) {
        D3DKMT_HANDLE global, h = create(0, &global), other = open_global(global);
        struct storm st[THREADS];
        pthread_t thread[THREADS];

        for (unsigned i = 0; i < THREADS; i++) {
            st[i] = (struct storm){ .h = i & 1 ? other : h };
            ck_assert_int_eq(pthread_create(&thread[i], NULL, storm_thread, &st[i]), 0);
        }
        usleep(round % 10 * 30);
        ck_assert_status(destroy(h), STATUS_SUCCESS);
        usleep(100);                     /* the survivors go on through the other handle */
        for (unsigned i = 0; i < THREADS; i++)
            atomic_store(&st[i].stop, true);
        for (unsigned i = 0; i < THREADS; i++) {
            ck_assert_int_eq(pthread_join(thread[i], NULL), 0);
            ck_assert_msg(!st[i].bad, "round %u, thread %u: 0x%08x", round, i, (unsigned)st[i].bad);
        }
        ck_assert_status(destroy(h), STATUS_INVALID_PARAMETER);
        {
            /* no hold outlived its handle: the mutex is free or abandoned */
            LARGE_INTEGER second = { .QuadPart = -10000000 };
            D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = other, .Key = 0, .pTimeout = &second };
            NTSTATUS s = D3DKMTAcquireKeyedMutex(&a);

            ck_assert_msg(s == STATUS_SUCCESS || s == STATUS_ABANDONED, "round %u: 0x%08x", round, (unsigned)s);
        }
        ck_assert_status(destroy(other), STATUS_SUCCESS);
    }
}
END_TEST

/* Two threads release one handle at the same time, with different keys
 * and fence values: exactly one succeeds, the other gets
 * STATUS_INVALID_PARAMETER, and the mutex ends free, released to one of
 * the two keys with one of the two fence values (the loser may have
 * written its own before it lost: keyed_mutex_page.h). */
struct releaser {
    D3DKMT_HANDLE h;
    UINT64 key;
    atomic_int *go;
    NTSTATUS status;
};

static void *release_thread(void *arg)
{
    struct releaser *r = arg;

    while (!atomic_load(r->go))
        ;
    r->status = release(r->h, r->key, r->key + 100);
    return NULL;
}

START_TEST(racing_releases_of_one_handle)
{
    D3DKMT_HANDLE h = create(0, NULL);

    for (unsigned round = 0; round < 200; round++) {
        atomic_int go = 0;
        struct releaser r[2] = { { h, 1, &go, PRESET }, { h, 2, &go, PRESET } };
        pthread_t t[2];
        UINT64 fence = 0, key;

        ck_assert_status(acquire(h, 0, NULL, NULL), STATUS_SUCCESS);
        for (unsigned i = 0; i < 2; i++)
            ck_assert_int_eq(pthread_create(&t[i], NULL, release_thread, &r[i]), 0);
        atomic_store(&go, 1);
        for (unsigned i = 0; i < 2; i++)
            ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_msg((r[0].status == STATUS_SUCCESS) != (r[1].status == STATUS_SUCCESS),
                      "round %u: 0x%08x and 0x%08x", round, (unsigned)r[0].status, (unsigned)r[1].status);
        for (unsigned i = 0; i < 2; i++)
            if (r[i].status)
                ck_assert_status(r[i].status, STATUS_INVALID_PARAMETER);
        key = acquire(h, 1, &(LONGLONG){ 0 }, &fence) == STATUS_SUCCESS ? 1 : 2;
        if (key == 2)
            ck_assert_status(acquire(h, 2, &(LONGLONG){ 0 }, &fence), STATUS_SUCCESS);
        ck_assert_msg(fence == 101 || fence == 102, "round %u: key %llu, fence %llu", round,
                      (unsigned long long)key, (unsigned long long)fence);
        ck_assert_status(release(h, 0, 0), STATUS_SUCCESS);
    }
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

/* ---- no system call when uncontended ------------------------------------------ */

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/* The calls a keyed mutex could make to sleep, wake or reach the broker;
 * the loop's thread traps them and counts them. */
static const int watched[] = { SYS_futex, 449 /* futex_waitv */, SYS_sendmsg, SYS_recvmsg, SYS_sendto,
                               SYS_recvfrom, SYS_connect, SYS_socket, SYS_read, SYS_write, SYS_poll,
                               SYS_ppoll, SYS_clock_gettime, SYS_clock_nanosleep };

struct quiet_loop {
    D3DKMT_HANDLE h;
    int filter_status;
    unsigned calls_made;
    NTSTATUS status;
};

static void *quiet_thread(void *arg)
{
    struct quiet_loop *q = arg;

    if ((q->filter_status = kmt_test_trap_syscalls(watched, sizeof(watched) / sizeof(watched[0]))))
        return NULL;
    for (unsigned i = 0; i < 1000 && !q->status; i++) {
        D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = q->h, .Key = 0 };
        D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = q->h, .Key = 0, .FenceValue = i };

        q->status = D3DKMTAcquireKeyedMutex(&a);
        if (!q->status)
            q->status = D3DKMTReleaseKeyedMutex(&r);
    }
    q->calls_made = kmt_test_trapped_syscalls();
    return NULL;
}

START_TEST(uncontended_pairs_make_no_system_call)
{
    D3DKMT_HANDLE h = create(0, NULL);
    struct quiet_loop q = { .h = h };
    pthread_t thread;

    ck_assert_int_eq(pthread_create(&thread, NULL, quiet_thread, &q), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_msg(!q.filter_status, "seccomp: %s", strerror(q.filter_status));
    ck_assert_status(q.status, STATUS_SUCCESS);
    ck_assert_uint_eq(q.calls_made, 0);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST
#endif

/* ---- NT handles -------------------------------------------------------------- */

START_TEST(open_from_nt_handle)
{
    D3DKMT_HANDLE global, h = create2("rt", 2, true, &global), shared = create(0, NULL);
    D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE o = { 0 };
    uint64_t id, res_id;
    int fd, res_fd, memfd;
    UINT64 fence;

    ck_assert_status(dxgk_keyed_mutex_share_id(shared, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);  /* has a global */
    ck_assert_status(dxgk_keyed_mutex_share_id(0, &id, &(uint64_t){ 0 }), STATUS_INVALID_PARAMETER);
    ck_assert_status(dxgk_keyed_mutex_share_id(h, &id, &(uint64_t){ 0 }), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_share_nt(&id, 1, NULL, 0x1, &fd), STATUS_SUCCESS);

    o.hNtHandle = (HANDLE)(intptr_t)fd;
    o.PrivateRuntimeDataSize = 1;
    o.pPrivateRuntimeData = "r";
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(&o), STATUS_INVALID_PARAMETER);  /* smaller */
    o.PrivateRuntimeDataSize = 0;
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(&o), STATUS_SUCCESS);
    ck_assert_local_handle(o.hKeyedMutex);
    /* it is the same mutex */
    ck_assert_status(acquire(h, 0, NULL, NULL), STATUS_SUCCESS);
    ck_assert_status(release(h, 8, 88), STATUS_SUCCESS);
    ck_assert_status(acquire(o.hKeyedMutex, 8, &ten_ms, &fence), STATUS_SUCCESS);
    ck_assert_uint_eq(fence, 88);
    ck_assert_status(destroy(o.hKeyedMutex), STATUS_SUCCESS);

    /* a resource's NT handle: another object type */
    memfd = memfd_create("test-resource", MFD_CLOEXEC);
    ck_assert_int_ge(memfd, 0);
    ck_assert_int_eq(ftruncate(memfd, 4096), 0);
    ck_assert_status(kmt_broker_create(&(struct kmt_broker_create){ .kind = KMT_BROKER_RESOURCE, .blob = "x",
                                                                    .blob_size = 1, .fds = &memfd,
                                                                    .fd_count = 1, .holder_offset = -1 },
                                       &res_id, &(D3DKMT_HANDLE){ 0 }),
                     STATUS_SUCCESS);
    ck_assert_status(kmt_broker_share_nt(&res_id, 1, NULL, 0x1, &res_fd), STATUS_SUCCESS);
    o = (D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE){ .hNtHandle = (HANDLE)(intptr_t)res_fd };
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(&o), STATUS_OBJECT_TYPE_MISMATCH);
    ck_assert_uint_eq(o.hKeyedMutex, 0);
    close(res_fd);
    close(memfd);
    ck_assert_status(kmt_broker_release(res_id), STATUS_SUCCESS);

    /* closed and impossible NT handles */
    close(fd);
    o.hNtHandle = (HANDLE)(intptr_t)fd;
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(&o), STATUS_INVALID_HANDLE);
    o.hNtHandle = (HANDLE)(intptr_t)-1;
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(&o), STATUS_INVALID_HANDLE);
    ck_assert_status(D3DKMTOpenKeyedMutexFromNtHandle(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    ck_assert_status(destroy(shared), STATUS_SUCCESS);
    assert_broker_frees_everything();
}
END_TEST

/* ---- other processes ----------------------------------------------------------- */

/* Starts keyed_mutex_peer: `command` on the mutex `global`. */
static void peer_start(struct kmt_test_peer *p, const char *command, D3DKMT_HANDLE global, unsigned rounds)
{
    char handle[16], count[16];

    snprintf(handle, sizeof(handle), "%#x", global);
    snprintf(count, sizeof(count), "%u", rounds);
    kmt_test_peer_start(p, "keyed_mutex_peer", NULL, 0, (const char *[]){ command, handle, count, NULL });
}

#define PINGPONG_ROUNDS 200

START_TEST(processes_hand_it_back_and_forth)
{
    D3DKMT_HANDLE global, h = create(0, &global);
    struct kmt_test_peer p;
    int status;

    peer_start(&p, "pingpong", global, PINGPONG_ROUNDS);
    for (unsigned i = 0; i < PINGPONG_ROUNDS; i++) {
        UINT64 fence;

        ck_assert_status(acquire(h, 0, NULL, &fence), STATUS_SUCCESS);
        ck_assert_uint_eq(fence, 2 * i);
        ck_assert_status(release(h, 1, 2 * i + 1), STATUS_SUCCESS);
    }
    status = kmt_test_peer_end(&p);
    ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "peer status 0x%x", status);
    ck_assert_status(acquire(h, 0, &ten_ms, NULL), STATUS_SUCCESS);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    assert_broker_frees_everything();
}
END_TEST

struct killer {
    pid_t pid;
    pid_t waiter;
};

static void *kill_thread(void *arg)
{
    struct killer *k = arg;

    wait_for_futex_sleep(k->waiter);
    kill(k->pid, SIGKILL);
    return NULL;
}

START_TEST(holder_killed_abandons_for_waiters_in_other_processes)
{
    D3DKMT_HANDLE global, h = create(0, &global);
    struct kmt_test_peer p;
    struct killer k;
    pthread_t thread;
    UINT64 fence;
    int status;

    peer_start(&p, "hold", global, 0);
    kmt_test_peer_line(&p, "held");
    ck_assert_status(acquire(h, 0, &ten_ms, &fence), STATUS_TIMEOUT);   /* it holds it */
    k.pid = p.pid;
    k.waiter = gettid();
    ck_assert_int_eq(pthread_create(&thread, NULL, kill_thread, &k), 0);
    ck_assert_status(acquire(h, 0, NULL, &fence), STATUS_ABANDONED);
    ck_assert_uint_eq(fence, 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    status = kmt_test_peer_end(&p);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ck_assert_status(acquire(h, 0, &ten_ms, &fence), STATUS_ABANDONED);
    ck_assert_uint_eq(fence, 0);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    /* the dead peer's reference went with it: nothing is left */
    assert_broker_frees_everything();
    ck_assert_status(D3DKMTOpenKeyedMutex(&(D3DKMT_OPENKEYEDMUTEX){ .hSharedHandle = global }),
                     STATUS_INVALID_PARAMETER);
}
END_TEST

/* The holder (another process) dies after the broker died: no broker is
 * left to abandon the mutex, so a waiter with no timeout ends when it sees
 * its own broker link gone (docs/architecture.md, "Waiters whose broker
 * died"), in bounded time. */
START_TEST(waiter_ends_when_the_holder_dies_after_the_broker)
{
    D3DKMT_HANDLE global, h = create(0, &global);
    struct waiter w = { .h = h, .key = 0 };
    pid_t broker = broker_stats().broker_pid;
    struct kmt_test_peer p;
    pthread_t thread;
    UINT64 start;

    peer_start(&p, "hold", global, 0);
    kmt_test_peer_line(&p, "held");
    ck_assert_int_eq(pthread_create(&thread, NULL, wait_thread, &w), 0);
    while (!w.tid)
        usleep(1000);
    wait_for_futex_sleep(w.tid);
    kmt_test_capture_begin();
    ck_assert_int_eq(kill(broker, SIGKILL), 0);
    for (int i = 0; i < 10000 && !kill(broker, 0); i++)
        usleep(1000);
    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    start = kmt_test_now_ms();
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_uint_lt(kmt_test_now_ms() - start, 10000);
    kmt_test_capture_end();
    ck_assert_status(w.status, STATUS_DEVICE_REMOVED);
    kmt_test_peer_end(&p);
    ck_assert_status(destroy(h), STATUS_SUCCESS);
}
END_TEST

START_TEST(global_handle_dies_with_its_last_holder)
{
    D3DKMT_HANDLE global, h = create(0, &global), again;
    D3DKMT_OPENKEYEDMUTEX o = { .hSharedHandle = 0 };
    struct kmt_test_peer p;
    int status;

    peer_start(&p, "open", global, 0);
    kmt_test_peer_line(&p, "open");
    ck_assert_status(destroy(h), STATUS_SUCCESS);
    /* the peer holds it: the global handle lives */
    again = open_global(global);
    ck_assert_status(destroy(again), STATUS_SUCCESS);
    /* the peer exits without destroying its handle */
    status = kmt_test_peer_end(&p);
    ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "peer status 0x%x", status);
    assert_broker_frees_everything();
    o.hSharedHandle = global;
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hKeyedMutex, 0);
}
END_TEST

static Suite *keyed_mutex_suite(void)
{
    Suite *s = suite_create("keyed_mutex");
    TCase *table = tcase_create("table"), *data = tcase_create("runtime data"),
          *bad = tcase_create("bad input"), *threads = tcase_create("threads"),
          *nt = tcase_create("NT handles"), *procs = tcase_create("processes");

    tcase_add_checked_fixture(table, setup, teardown);
    tcase_add_test(table, create_null);
    tcase_add_test(table, create_zeroed_gives_local_and_global);
    tcase_add_test(table, create2_nt_sharing_has_no_global);
    tcase_add_test(table, open_zeroed);
    tcase_add_test(table, open_global_until_last_handle_goes);
    tcase_add_test(table, open2_runtime_data_sizes);
    tcase_add_test(table, destroy_zeroed_and_twice);
    tcase_add_test(table, acquire_bad_handle_leaves_outputs);
    tcase_add_test(table, acquire_fresh_key0);
    tcase_add_test(table, acquire_wrong_key_times_out);
    tcase_add_test(table, release_carries_key_and_fence);
    tcase_add_test(table, release_by_non_owner);
    tcase_add_test(table, destroying_the_owner_abandons);
    tcase_add_test(table, destroying_a_non_owner_abandons_nothing);
    tcase_add_test(table, traced_pair_answers_as_the_plain_one);
    suite_add_tcase(s, table);

    tcase_add_checked_fixture(data, setup, teardown);
    tcase_add_test(data, release2_hands_data_to_acquire2);
    tcase_add_test(data, create2_bad_input);
    suite_add_tcase(s, data);

    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, wrong_type_and_stale_handles);
    tcase_add_test(bad, timeout_forms);
    tcase_add_test(bad, broker_death_removes_the_mutex);
    suite_add_tcase(s, bad);

    tcase_add_checked_fixture(threads, setup, teardown);
    tcase_add_test(threads, threads_pass_it_round_a_ring);
    tcase_add_test(threads, threads_exclude_each_other);
    tcase_add_test(threads, destroy_races_with_acquire);
    tcase_add_test(threads, destroy_races_with_threads_on_two_handles);
    tcase_add_test(threads, racing_releases_of_one_handle);
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    tcase_add_test(threads, uncontended_pairs_make_no_system_call);
#endif
    tcase_set_timeout(threads, 60);
    suite_add_tcase(s, threads);

    tcase_add_checked_fixture(nt, setup, teardown);
    tcase_add_test(nt, open_from_nt_handle);
    suite_add_tcase(s, nt);

    tcase_add_checked_fixture(procs, setup, teardown);
    tcase_add_test(procs, processes_hand_it_back_and_forth);
    tcase_add_test(procs, holder_killed_abandons_for_waiters_in_other_processes);
    tcase_add_test(procs, global_handle_dies_with_its_last_holder);
    tcase_add_test(procs, waiter_ends_when_the_holder_dies_after_the_broker);
    tcase_set_timeout(procs, 60);
    suite_add_tcase(s, procs);
    return s;
}

int main(void)
{
    return kmt_test_run(keyed_mutex_suite());
}
