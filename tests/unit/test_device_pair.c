/*
 * CreateDevice + DestroyDevice, the pair a runtime makes per device: after
 * a thread's first pair, a pair asks the kernel nothing (no lock sleeps,
 * no memory mapping, no thread), and pairs on several threads at once
 * leave nothing behind.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>

#include "syscall_trap.h"
#include "test_util.h"

static D3DKMT_HANDLE adapter;

static NTSTATUS pair(void)
{
    D3DKMT_CREATEDEVICE cd = { .hAdapter = adapter };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    NTSTATUS status = D3DKMTCreateDevice(&cd);

    if (status)
        return status;
    dd.hDevice = cd.hDevice;
    return D3DKMTDestroyDevice(&dd);
}

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/* What a pair could ask the kernel for: sleeping on a lock, memory,
 * threads, files, signals. */
static const int watched[] = { SYS_futex, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_brk, SYS_madvise,
                               SYS_clone, SYS_clone3, SYS_membarrier, SYS_read, SYS_write, SYS_ioctl,
                               SYS_openat, SYS_close, SYS_rt_sigprocmask, SYS_getpid, SYS_gettid };

struct quiet_pairs {
    int filter_status;
    NTSTATUS status;
    unsigned trapped;
};

static void *quiet_thread(void *arg)
{
    struct quiet_pairs *q = arg;

    /* the thread's first pair may set up per-thread state */
    if ((q->status = pair()))
        return NULL;
    if ((q->filter_status = kmt_test_trap_syscalls(watched, sizeof(watched) / sizeof(watched[0]))))
        return NULL;
    for (unsigned i = 0; i < 1000 && !q->status; i++)
        q->status = pair();
    q->trapped = kmt_test_trapped_syscalls();
    return NULL;
}

START_TEST(pair_makes_no_system_call)
{
    struct quiet_pairs q = { 0 };
    pthread_t thread;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_int_eq(pthread_create(&thread, NULL, quiet_thread, &q), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_msg(!q.filter_status, "seccomp: %s", strerror(q.filter_status));
    ck_assert_status(q.status, STATUS_SUCCESS);
    ck_assert_uint_eq(q.trapped, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST
#endif

/* Pairs on several threads at once keep every handle distinct and leave
 * nothing behind. */
static void *pairs_thread(void *arg)
{
    NTSTATUS *status = arg;

    for (unsigned i = 0; i < 2000 && !*status; i++)
        *status = pair();
    return NULL;
}

START_TEST(pairs_on_threads_leave_nothing)
{
    pthread_t threads[4];
    NTSTATUS status[4] = { 0 };

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (unsigned i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, pairs_thread, &status[i]), 0);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        ck_assert_status(status[i], STATUS_SUCCESS);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("device_pair");
    TCase *tc = tcase_create("pair");

    tcase_set_timeout(tc, 60);
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    tcase_add_test(tc, pair_makes_no_system_call);
#endif
    tcase_add_test(tc, pairs_on_threads_leave_nothing);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
