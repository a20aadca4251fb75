/*
 * Caller memory the library reads and writes (base/user_memory.h): a
 * buffer in the calling thread's live stack takes no system call, any
 * other one goes through the fault guard or, where it is forbidden (as in
 * Wine's unix half), the kernel, and a read-only or unmapped buffer is
 * refused (STATUS_ACCESS_VIOLATION from QueryAdapterInfo) instead of
 * crashing, wherever the calling thread's stack pointer is.  The guard's
 * own cases are in test_fault_guard.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "qai_buffer.h"
#include "syscall_trap.h"
#include "test_util.h"
#include "base/fault_guard.h"
#include "base/live_stack.h"
#include "base/user_memory.h"

/* ---- the live stack ---------------------------------------------------------- */

static int global_word;

START_TEST(live_stack_holds_only_the_callers_frames)
{
    char local[64] = { 0 };
    void *heap = malloc(64);

    ck_assert(kmt_live_stack_holds(local, sizeof(local)));
    ck_assert(kmt_live_stack_holds(local + 10, 1));
    ck_assert(!kmt_live_stack_holds(heap, 64));
    ck_assert(!kmt_live_stack_holds(&global_word, sizeof(global_word)));
    /* a range that runs past the top of the stack (SIZE_MAX / 2: half the
     * address space on either width, where 1 << 40 is 0 in a 32-bit size_t) */
    ck_assert(!kmt_live_stack_holds(local, SIZE_MAX / 2));
    ck_assert(!kmt_live_stack_holds(local, SIZE_MAX));
    ck_assert(!kmt_live_stack_holds((void *)UINTPTR_MAX, 1));
    free(heap);
}
END_TEST

static void *holds_own_local(void *arg)
{
    char local[16] = { 0 };

    *(bool *)arg = kmt_live_stack_holds(local, sizeof(local));
    return NULL;
}

START_TEST(live_stack_of_a_new_thread)
{
    pthread_t t;
    bool held = false;

    ck_assert_int_eq(pthread_create(&t, NULL, holds_own_local, &held), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert(held);
}
END_TEST

/* ---- buffers off the live stack ----------------------------------------------- */

/* Each case is a child of its own (fork mode): forbidding the guard there
 * is what Wine's unix half does. */
static void kernel_only(void)
{
    kmt_fault_guard_forbid();
}

START_TEST(heap_buffer_answered)
{
    D3DKMT_DRIVERVERSION expected, *heap = calloc(1, sizeof(*heap));

    qai_open_soft();
    expected = qai_driver_version();
    ck_assert(!kmt_live_stack_holds(heap, sizeof(*heap)));
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, heap, sizeof(*heap)), STATUS_SUCCESS);
    ck_assert_int_eq(*heap, expected);
    free(heap);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(read_only_buffer_refused)
{
    D3DKMT_DRIVERVERSION *ro = qai_page_with(PROT_READ), v = 7;

    qai_open_soft();
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, ro, sizeof(*ro)), STATUS_ACCESS_VIOLATION);
    ck_assert_int_eq(*ro, 0);
    ck_assert(kmt_user_range_readable(ro, sizeof(*ro)));
    ck_assert(!kmt_user_range_writable(ro, sizeof(*ro)));
    ck_assert(!kmt_user_copy_out(ro, &v, sizeof(v)));
    /* unchanged, so not written: read-only input stays valid input */
    ck_assert(kmt_user_write_back(ro, ro, sizeof(*ro)));
    ck_assert(!kmt_user_write_back(ro, &v, sizeof(v)));
    ck_assert_int_eq(munmap(ro, 4096), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(unmapped_buffer_refused)
{
    char *gone = qai_page_with(PROT_READ | PROT_WRITE), copy[16] = { 0 };

    ck_assert_int_eq(munmap(gone, 4096), 0);
    ck_assert(!kmt_live_stack_holds(gone, sizeof(copy)));
    ck_assert(!kmt_user_range_readable(gone, sizeof(copy)));
    ck_assert(!kmt_user_range_writable(gone, sizeof(copy)));
    ck_assert(!kmt_user_copy_in(copy, gone, sizeof(copy)));
    ck_assert(!kmt_user_copy_out(gone, copy, sizeof(copy)));
}
END_TEST

/* A buffer on another thread's stack is not in the caller's live stack:
 * it takes the kernel's way and is answered all the same. */
struct other_stack {
    pthread_barrier_t ready, done;
    D3DKMT_DRIVERVERSION *buffer;
    D3DKMT_DRIVERVERSION seen;
};

static void *lend_stack_buffer(void *arg)
{
    struct other_stack *o = arg;
    D3DKMT_DRIVERVERSION v = 0;

    o->buffer = &v;
    pthread_barrier_wait(&o->ready);
    pthread_barrier_wait(&o->done);
    o->seen = v;
    return NULL;
}

START_TEST(other_threads_stack_buffer_answered)
{
    struct other_stack o = { .buffer = NULL };
    D3DKMT_DRIVERVERSION expected;
    pthread_t t;

    qai_open_soft();
    expected = qai_driver_version();
    pthread_barrier_init(&o.ready, NULL, 2);
    pthread_barrier_init(&o.done, NULL, 2);
    ck_assert_int_eq(pthread_create(&t, NULL, lend_stack_buffer, &o), 0);
    pthread_barrier_wait(&o.ready);
    ck_assert(!kmt_live_stack_holds(o.buffer, sizeof(*o.buffer)));
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, o.buffer, sizeof(*o.buffer)), STATUS_SUCCESS);
    pthread_barrier_wait(&o.done);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(o.seen, expected);
    pthread_barrier_destroy(&o.ready);
    pthread_barrier_destroy(&o.done);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* On a sigaltstack the stack pointer is outside the thread's stack: even
 * the handler's own locals take the kernel's way, and a read-only buffer
 * is still refused there. */
#ifndef __SANITIZE_THREAD__
static struct {
    bool local_held;
    NTSTATUS local_status, ro_status;
    D3DKMT_DRIVERVERSION local_answer;
    D3DKMT_DRIVERVERSION *ro;
} on_alt;

static void query_on_altstack(int sig)
{
    D3DKMT_DRIVERVERSION v = 0;

    (void)sig;
    on_alt.local_held = kmt_live_stack_holds(&v, sizeof(v));
    on_alt.local_status = qai_query(KMTQAITYPE_DRIVERVERSION, &v, sizeof(v));
    on_alt.local_answer = v;
    on_alt.ro_status = qai_query(KMTQAITYPE_DRIVERVERSION, on_alt.ro, sizeof(*on_alt.ro));
}

START_TEST(sigaltstack_buffers)
{
    size_t size = 256 * 1024;
    stack_t alt = { .ss_sp = malloc(size), .ss_size = size }, old;
    struct sigaction sa = { .sa_handler = query_on_altstack, .sa_flags = SA_ONSTACK }, old_sa;
    D3DKMT_DRIVERVERSION expected;

    qai_open_soft();
    expected = qai_driver_version();
    on_alt.ro = qai_page_with(PROT_READ);
    ck_assert_ptr_nonnull(alt.ss_sp);
    ck_assert_int_eq(sigaltstack(&alt, &old), 0);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old_sa), 0);
    ck_assert_int_eq(raise(SIGUSR1), 0);
    ck_assert_int_eq(sigaction(SIGUSR1, &old_sa, NULL), 0);
    alt.ss_flags = SS_DISABLE;
    ck_assert_int_eq(sigaltstack(&alt, NULL), 0);
    ck_assert(!on_alt.local_held);
    ck_assert_status(on_alt.local_status, STATUS_SUCCESS);
    ck_assert_int_eq(on_alt.local_answer, expected);
    ck_assert_status(on_alt.ro_status, STATUS_ACCESS_VIOLATION);
    ck_assert_int_eq(*on_alt.ro, 0);
    ck_assert_int_eq(munmap(on_alt.ro, 4096), 0);
    free(alt.ss_sp);
    kmt_test_shutdown_no_leaks();
}
END_TEST
#endif

/* ---- no system call for a stack buffer ---------------------------------------- */

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/* Every call the kernel's way could make (user_memory.c). */
static const int watched[] = { SYS_process_vm_readv, SYS_process_vm_writev, SYS_pipe2, SYS_pipe,
                               SYS_read, SYS_write, SYS_msync };

struct quiet_loop {
    int filter_status;
    NTSTATUS status;
    bool answers_right, helpers_right;
    unsigned stack_calls_trapped, sanity_calls_trapped;
    D3DKMT_DRIVERVERSION expected;
};

static void *quiet_thread(void *arg)
{
    struct quiet_loop *q = arg;
    D3DKMT_DRIVERVERSION first = 0;
    char in[32], out[32];

    /* the first call of a thread learns its stack's bounds, which may ask
     * the kernel; the calls after it are the ones watched */
    qai_query(KMTQAITYPE_DRIVERVERSION, &first, sizeof(first));
    if ((q->filter_status = kmt_test_trap_syscalls(watched, sizeof(watched) / sizeof(watched[0]))))
        goto out;
    q->answers_right = true;
    for (unsigned i = 0; i < 100 && !q->status; i++) {
        D3DKMT_DRIVERVERSION v = 0;
        D3DKMT_NODEMETADATA meta = { 0 };
        D3DDDI_QUERYREGISTRY_INFO reg = { .QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY, .ValueType = 1 };

        reg.ValueName[0] = 'x';
        if ((q->status = qai_query(KMTQAITYPE_DRIVERVERSION, &v, sizeof(v))) ||
            (q->status = qai_query(KMTQAITYPE_NODEMETADATA, &meta, sizeof(meta))) ||
            (q->status = qai_query(KMTQAITYPE_QUERYREGISTRY, &reg, sizeof(reg))))
            break;
        q->answers_right &= v == q->expected && reg.Status == D3DDDI_QUERYREGISTRY_STATUS_FAIL;
    }
    memset(in, 0x5a, sizeof(in));
    q->helpers_right = kmt_user_range_readable(in, sizeof(in)) && kmt_user_range_writable(out, sizeof(out)) &&
                       kmt_user_copy_in(out, in, sizeof(in)) && !memcmp(in, out, sizeof(in)) &&
                       kmt_user_copy_out(in, "answer", 7) && !strcmp(in, "answer");
    q->stack_calls_trapped = kmt_test_trapped_syscalls();
    /* the filter does see a watched call */
    (void)!write(-1, "", 0);
    q->sanity_calls_trapped = kmt_test_trapped_syscalls() - q->stack_calls_trapped;
out:
    return NULL;
}

START_TEST(stack_buffer_answered_without_system_call)
{
    struct quiet_loop q = { 0 };
    pthread_t thread;

    qai_open_soft();
    q.expected = qai_driver_version();
    ck_assert_int_eq(pthread_create(&thread, NULL, quiet_thread, &q), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_msg(!q.filter_status, "seccomp: %s", strerror(q.filter_status));
    ck_assert_status(q.status, STATUS_SUCCESS);
    ck_assert(q.answers_right);
    ck_assert(q.helpers_right);
    ck_assert_uint_eq(q.stack_calls_trapped, 0);
    ck_assert_uint_eq(q.sanity_calls_trapped, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("user_memory");
    TCase *stack = tcase_create("live_stack");
    TCase *kernel = tcase_create("kernel_way");
    TCase *guarded = tcase_create("fault_guard");

    tcase_add_test(stack, live_stack_holds_only_the_callers_frames);
    tcase_add_test(stack, live_stack_of_a_new_thread);
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    tcase_add_test(stack, stack_buffer_answered_without_system_call);
#endif
    suite_add_tcase(s, stack);

    /* the same cases through the kernel and through the fault guard */
    tcase_add_checked_fixture(kernel, kernel_only, NULL);
    for (int i = 0; i < 2; i++) {
        TCase *tc = i ? guarded : kernel;

        tcase_add_test(tc, heap_buffer_answered);
        tcase_add_test(tc, read_only_buffer_refused);
        tcase_add_test(tc, unmapped_buffer_refused);
        tcase_add_test(tc, other_threads_stack_buffer_answered);
#ifndef __SANITIZE_THREAD__
        /* the handler calls into the library: TSan rightly calls that
         * signal-unsafe; the row is about stacks, not signals */
        tcase_add_test(tc, sigaltstack_buffers);
#endif
        suite_add_tcase(s, tc);
    }
    return kmt_test_run(s);
}
