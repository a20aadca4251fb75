/*
 * The library's own threads (scheduler, soft engine) block asynchronous
 * signals (base/kmt_thread.h): a signal sent to the process reaches the
 * program's thread, never a thread the program did not make.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "exec_util.h"

static atomic_int received_on;           /* the tid the handler ran on, 0: not yet */

static void on_usr1(int sig)
{
    (void)sig;
    atomic_store(&received_on, (int)gettid());
}

/* Starts the scheduler and the engine: a submission and its fence. */
static D3DKMT_HANDLE start_threads(void)
{
    D3DKMT_HANDLE device, ctx;
    struct kmt_ring ring;
    struct kmt_cmds cmds;
    struct kmt_fence f;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(NULL);
    ctx = kmt_exec_virtual_context(device);
    kmt_ring_create(device, 4096, &ring);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    kmt_cmds_init(&cmds);
    kmt_cmd_fence(&cmds, KMT_SOFT_OP_SIGNAL_FENCE, f.gpu, 1);
    ck_assert_status(kmt_ring_submit(&ring, &ctx, 1, &cmds), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, f.handle, 1, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    return device;
}

/* Every thread of the process but this one. */
static unsigned other_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    unsigned n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;
}

START_TEST(library_threads_block_async_signals)
{
    D3DKMT_HANDLE device = start_threads();
    unsigned checked = kmt_test_assert_library_threads_block_signals();

    ck_assert_uint_ge(checked, 2);
#ifndef __SANITIZE_THREAD__              /* ThreadSanitizer has a thread of its own */
    /* each of them is one the check knows (kmt_thread_create names it) */
    ck_assert_uint_eq(checked, other_threads());
#endif
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ .hDevice = device }), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* With the program's only thread blocking SIGUSR1 too, a SIGUSR1 sent to
 * the process stays pending until that thread unblocks it, and is handled
 * there. */
START_TEST(process_signal_waits_for_the_programs_thread)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    D3DKMT_HANDLE device = start_threads();
    sigset_t usr1;
    int on;

    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
    kmt_sleep_ms(100);                   /* time for any thread that takes it */
    on = atomic_load(&received_on);
    ck_assert_msg(on == 0, "thread %d, not the program's, took the process's SIGUSR1", on);
    ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    on = atomic_load(&received_on);
    ck_assert_int_eq(on, (int)gettid());
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ .hDevice = device }), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("signals");

    tcase_add_test(tc, library_threads_block_async_signals);
    tcase_add_test(tc, process_signal_waits_for_the_programs_thread);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
