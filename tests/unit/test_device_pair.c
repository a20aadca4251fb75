/*
 * CreateDevice + DestroyDevice, the pair a runtime makes per device: after
 * a thread's first pair, a pair asks the kernel nothing (no lock sleeps,
 * no memory mapping, no thread), and pairs on several threads at once
 * leave nothing behind.  The per-thread spare blocks the pair reuses come
 * back zeroed and go when their thread does.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>

#include "syscall_trap.h"
#include "test_util.h"
#include "base/kmt_spare.h"

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

/* A freed block comes back from the thread's next create of its kind
 * and size, zeroed; a create of another size gets a block of its own; a
 * second block freed while the slot is taken is freed.  Under
 * AddressSanitizer or ThreadSanitizer no block is kept. */
START_TEST(spare_comes_back_zeroed)
{
    unsigned char *p = kmt_spare_zalloc(KMT_SPARE_DEVICE, 96), *q, *r, *big;

    ck_assert_ptr_nonnull(p);
    memset(p, 0xab, 96);
    q = kmt_spare_zalloc(KMT_SPARE_DEVICE, 96);
    ck_assert_ptr_nonnull(q);
    kmt_spare_free(KMT_SPARE_DEVICE, p, 96);
    /* kept, but under a sanitizer (which a reused block would blind) */
    ck_assert_ptr_eq(kmt_spares_self.slot[KMT_SPARE_DEVICE].block, KMT_SPARES_OFF ? NULL : p);
    /* larger than the spare: never the spare, all of it zeroed */
    big = kmt_spare_zalloc(KMT_SPARE_DEVICE, 4096);
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_ne(big, p);
    for (unsigned i = 0; i < 4096; i++)
        ck_assert_uint_eq(big[i], 0);
    ck_assert_ptr_eq(kmt_spares_self.slot[KMT_SPARE_DEVICE].block, KMT_SPARES_OFF ? NULL : p);
    kmt_spare_free(KMT_SPARE_DEVICE, q, 96);  /* the slot holds p: q is freed */
    kmt_spare_free(KMT_SPARE_DEVICE, big, 4096);
    r = kmt_spare_zalloc(KMT_SPARE_DEVICE, 96);
#if !KMT_SPARES_OFF
    ck_assert_ptr_eq(r, p);
#endif
    for (unsigned i = 0; i < 96; i++)
        ck_assert_uint_eq(r[i], 0);
    kmt_spare_free(KMT_SPARE_DEVICE, r, 96);
    kmt_spare_drain();
}
END_TEST

/* mallinfo2() counts glibc's blocks: not under a sanitizer's allocator */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define BIG_SPARE (8u << 20)             /* above malloc's mmap threshold */

static void *keep_big_spare(void *arg)
{
    size_t *mapped_while_kept = arg;

    kmt_spare_free(KMT_SPARE_SOFT_DEVICE, kmt_spare_zalloc(KMT_SPARE_SOFT_DEVICE, BIG_SPARE), BIG_SPARE);
    *mapped_while_kept = mallinfo2().hblkhd;
    return NULL;
}

/* A thread's spare is freed when the thread exits. */
START_TEST(spare_goes_with_its_thread)
{
    size_t before = mallinfo2().hblkhd, kept = 0;
    pthread_t thread;

    ck_assert_int_eq(pthread_create(&thread, NULL, keep_big_spare, &kept), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_uint_ge(kept, before + BIG_SPARE);
    ck_assert_uint_le(mallinfo2().hblkhd, before);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("device_pair");
    TCase *tc = tcase_create("pair");

    tcase_set_timeout(tc, 60);
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    tcase_add_test(tc, pair_makes_no_system_call);
#endif
    tcase_add_test(tc, pairs_on_threads_leave_nothing);
    tcase_add_test(tc, spare_comes_back_zeroed);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    tcase_add_test(tc, spare_goes_with_its_thread);
#endif
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
