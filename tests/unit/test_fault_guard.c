/*
 * The fault guard (base/fault_guard.h, base/fault_copy.h): a heap answer
 * buffer of QueryAdapterInfo is written without a system call, a bad one
 * still gives STATUS_ACCESS_VIOLATION and stays untouched, and the
 * program's own SIGSEGV handling (a handler before or after the library,
 * SIG_DFL, SIG_IGN, a thread that blocks the signal) is what it was.
 * Each case runs in its own child (Check's fork mode), so each starts
 * with no guard installed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "qai_buffer.h"
#include "syscall_trap.h"
#include "test_util.h"
#include "base/fault_copy.h"
#include "base/fault_guard.h"
#include "base/user_memory.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#else
#define UNDER_SANITIZER 0
#endif

#define PAGE 4096

/* An unreadable buffer: x86_64 refuses it when the write faults; a 32-bit
 * thunk, with no address hole to reject garbage by value, probes each
 * pointer's range first and refuses it as a parameter (thunks/thunk.h). */
#if UINTPTR_MAX > 0xffffffffu
#define UNREADABLE_STATUS STATUS_ACCESS_VIOLATION
#else
#define UNREADABLE_STATUS STATUS_INVALID_PARAMETER
#endif

/* ---- the program's own handler -------------------------------------------------- */

static sigjmp_buf program_env;
static volatile sig_atomic_t program_faults;
static void *volatile program_fault_addr;
static volatile sig_atomic_t usr2_blocked_inside;

static void program_handler(int sig, siginfo_t *info, void *context)
{
    sigset_t now;

    (void)sig;
    (void)context;
    program_faults++;
    program_fault_addr = info->si_addr;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    usr2_blocked_inside = sigismember(&now, SIGUSR2);
    siglongjmp(program_env, 1);
}

static void plain_program_handler(int sig)
{
    sigset_t now;

    (void)sig;
    program_faults++;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    usr2_blocked_inside = sigismember(&now, SIGUSR2);
    siglongjmp(program_env, 1);
}

static void install_program_handler(bool siginfo)
{
    struct sigaction sa = { .sa_flags = siginfo ? SA_SIGINFO : 0 };

    if (siginfo)
        sa.sa_sigaction = program_handler;
    else
        sa.sa_handler = plain_program_handler;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
}

/* A fault in the program's own code; whether its handler took it. */
static bool program_fault_reaches_handler(void)
{
    char *none = qai_page_with(PROT_NONE);
    bool reached = false;

    program_faults = 0;
    program_fault_addr = NULL;
    usr2_blocked_inside = 0;
    if (!sigsetjmp(program_env, 1))
        (void)*(volatile char *)(none + 8);
    else
        reached = program_faults == 1;
    ck_assert_int_eq(munmap(none, PAGE), 0);
    if (reached && program_fault_addr)       /* the plain handler does not see it */
        reached = program_fault_addr == none + 8;
    return reached;
}

/* A query into a read-only heap-like page: refused, and the page unchanged. */
static void assert_read_only_refused(void)
{
    char *ro = qai_page_with(PROT_READ);

    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, ro, sizeof(D3DKMT_DRIVERVERSION)), STATUS_ACCESS_VIOLATION);
    for (int i = 0; i < PAGE; i++)
        ck_assert_int_eq(ro[i], 0);
    ck_assert_int_eq(munmap(ro, PAGE), 0);
}

/* ---- no system call for a heap buffer -------------------------------------------- */

#if defined(__x86_64__) && !UNDER_SANITIZER
/* every call the kernel's way could make, and the guard's own checks */
static const int watched[] = { SYS_process_vm_readv, SYS_process_vm_writev, SYS_pipe2, SYS_pipe,
                               SYS_read, SYS_write, SYS_msync, SYS_rt_sigaction, SYS_rt_sigprocmask };

struct quiet_heap {
    int filter_status;
    NTSTATUS status, ro_status;
    bool answers_right;
    unsigned trapped, sanity_trapped;
    D3DKMT_DRIVERVERSION expected;
};

static void *quiet_heap_thread(void *arg)
{
    struct quiet_heap *q = arg;
    D3DKMT_DRIVERVERSION *v = calloc(1, sizeof(*v));
    D3DKMT_NODEMETADATA *meta = calloc(1, sizeof(*meta));
    D3DDDI_QUERYREGISTRY_INFO *reg = calloc(1, sizeof(*reg));
    char *ro = qai_page_with(PROT_READ);

    /* the first heap call of the thread installs the guard and checks it */
    qai_query(KMTQAITYPE_DRIVERVERSION, v, sizeof(*v));
    if ((q->filter_status = kmt_test_trap_syscalls(watched, sizeof(watched) / sizeof(watched[0]))))
        goto out;
    q->answers_right = true;
    for (unsigned i = 0; i < 100 && !q->status; i++) {
        *v = 0;
        memset(meta, 0, sizeof(*meta));
        memset(reg, 0, sizeof(*reg));
        reg->QueryType = D3DDDI_QUERYREGISTRY_ADAPTERKEY;
        reg->ValueType = 1;
        reg->ValueName[0] = 'x';
        if ((q->status = qai_query(KMTQAITYPE_DRIVERVERSION, v, sizeof(*v))) ||
            (q->status = qai_query(KMTQAITYPE_NODEMETADATA, meta, sizeof(*meta))) ||
            (q->status = qai_query(KMTQAITYPE_QUERYREGISTRY, reg, sizeof(*reg))))
            break;
        q->answers_right &= *v == q->expected && reg->Status == D3DDDI_QUERYREGISTRY_STATUS_FAIL;
    }
    /* a refused buffer takes none either: the fault is the answer */
    q->ro_status = qai_query(KMTQAITYPE_DRIVERVERSION, ro, sizeof(*v));
    q->trapped = kmt_test_trapped_syscalls();
    /* the filter does see a watched call */
    (void)!write(-1, "", 0);
    q->sanity_trapped = kmt_test_trapped_syscalls() - q->trapped;
out:
    munmap(ro, PAGE);
    free(v);
    free(meta);
    free(reg);
    return NULL;
}

START_TEST(heap_buffer_answered_without_system_call)
{
    struct quiet_heap q = { 0 };
    pthread_t thread;

    qai_open_soft();
    q.expected = qai_driver_version();
    ck_assert_int_eq(pthread_create(&thread, NULL, quiet_heap_thread, &q), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_msg(!q.filter_status, "seccomp: %s", strerror(q.filter_status));
    ck_assert_status(q.status, STATUS_SUCCESS);
    ck_assert(q.answers_right);
    ck_assert_status(q.ro_status, STATUS_ACCESS_VIOLATION);
    ck_assert_uint_eq(q.trapped, 0);
    ck_assert_uint_eq(q.sanity_trapped, 1);
    kmt_test_shutdown_no_leaks();
}
END_TEST
#endif

/* ---- bad buffers ------------------------------------------------------------------ */

START_TEST(bad_buffers_refused_untouched)
{
    D3DKMT_DRIVERVERSION expected, *heap = calloc(1, sizeof(*heap));
    char *ro = qai_page_with(PROT_READ), *none = qai_page_with(PROT_NONE), *gone = qai_page_with(PROT_READ | PROT_WRITE);

    qai_open_soft();
    expected = qai_driver_version();
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, heap, sizeof(*heap)), STATUS_SUCCESS);
    ck_assert_int_eq(*heap, expected);
    ck_assert(kmt_fault_guard_ready() == (KMT_HAVE_FAULT_COPY != 0));

    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, ro, sizeof(*heap)), STATUS_ACCESS_VIOLATION);
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, none, sizeof(*heap)), UNREADABLE_STATUS);
    ck_assert_int_eq(munmap(gone, PAGE), 0);
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, gone, sizeof(*heap)), UNREADABLE_STATUS);
    ck_assert_int_eq(mprotect(none, PAGE, PROT_READ), 0);
    for (int i = 0; i < PAGE; i++) {
        ck_assert_int_eq(ro[i], 0);
        ck_assert_int_eq(none[i], 0);
    }
    /* the helpers: a short copy says so */
    ck_assert(!kmt_user_copy_out(ro, &expected, sizeof(expected)));
    ck_assert(!kmt_user_copy_in(&expected, gone, sizeof(expected)));
    ck_assert(!kmt_user_range_readable(gone, 1));
    ck_assert(!kmt_user_range_writable(ro, 1));
    ck_assert(kmt_user_range_readable(ro, PAGE));
    munmap(ro, PAGE);
    munmap(none, PAGE);
    free(heap);
    kmt_test_shutdown_no_leaks();
}
END_TEST

#if !UNDER_SANITIZER
/* A large block goes back to the kernel on free (glibc's mmap threshold);
 * the sanitizers' allocators keep freed memory, so it is skipped there. */
START_TEST(freed_buffer_refused)
{
    /* mmap itself: malloc's threshold may keep even a large block mapped */
    char *block = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uintptr_t inside = (uintptr_t)block + PAGE;

    qai_open_soft();
    qai_driver_version();
    ck_assert_ptr_ne(block, MAP_FAILED);
    ck_assert_int_eq(munmap(block, 4 << 20), 0);
    ck_assert_status(qai_query(KMTQAITYPE_DRIVERVERSION, (void *)inside, sizeof(D3DKMT_DRIVERVERSION)),
                     UNREADABLE_STATUS);
    kmt_test_shutdown_no_leaks();
}
END_TEST
#endif

/* The copy itself stops at the first byte it cannot touch. */
START_TEST(copy_stops_at_the_bad_page)
{
    char *two, src[64];

    if (!KMT_HAVE_FAULT_COPY)
        return;                          /* no copy routine on this architecture */
    ck_assert(kmt_fault_guard_ready());
    two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(two, MAP_FAILED);
    memset(src, 0x5a, sizeof(src));
    ck_assert_int_eq(mprotect(two + PAGE, PAGE, PROT_READ), 0);
    ck_assert_uint_eq(kmt_fault_copy(two + PAGE - 16, src, sizeof(src)), sizeof(src) - 16);
    ck_assert_int_eq(two[PAGE - 1], 0x5a);
    ck_assert_int_eq(two[PAGE], 0);
    ck_assert_uint_eq(kmt_fault_copy(two, src, sizeof(src)), 0);
    munmap(two, 2 * PAGE);
}
END_TEST

/* ---- the program's signal dispositions --------------------------------------------- */

START_TEST(handler_before_library_gets_its_faults)
{
    install_program_handler(_i);
    qai_open_soft();
    qai_driver_version();
    assert_read_only_refused();
    ck_assert_int_eq(program_faults, 0);
    ck_assert(program_fault_reaches_handler());
    /* run as the kernel runs it: its sa_mask blocked inside */
    ck_assert_int_eq(usr2_blocked_inside, 1);
    /* and the guard still holds after a forwarded fault */
    assert_read_only_refused();
    ck_assert(program_fault_reaches_handler());
    kmt_test_shutdown_no_leaks();
}
END_TEST

struct refusal {
    NTSTATUS status;
    bool ready;
};

static void *refuse_read_only(void *arg)
{
    struct refusal *r = arg;
    char *ro = qai_page_with(PROT_READ);

    r->status = qai_query(KMTQAITYPE_DRIVERVERSION, ro, sizeof(D3DKMT_DRIVERVERSION));
    r->ready = kmt_fault_guard_ready();
    munmap(ro, PAGE);
    return NULL;
}

START_TEST(handler_after_library_gets_its_faults)
{
    struct refusal r = { 0 };
    pthread_t t;

    qai_open_soft();
    qai_driver_version();
    assert_read_only_refused();
    install_program_handler(true);
    ck_assert(program_fault_reaches_handler());
    /* a thread that checks now finds the handler replaced: the kernel's
     * way, so the program's handler never sees the library's refusals */
    program_faults = 0;
    ck_assert_int_eq(pthread_create(&t, NULL, refuse_read_only, &r), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_status(r.status, STATUS_ACCESS_VIOLATION);
    ck_assert(!r.ready);
    /* and so does every thread from then on */
    ck_assert(!kmt_fault_guard_ready());
    assert_read_only_refused();
    ck_assert_int_eq(program_faults, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(default_and_ignore_before_library)
{
    struct sigaction sa = { .sa_handler = _i ? SIG_IGN : SIG_DFL };

    ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
    ck_assert_int_eq(sigaction(SIGBUS, &sa, NULL), 0);
    qai_open_soft();
    qai_driver_version();
    assert_read_only_refused();
    if (_i) {
        /* a sent, not raised-by-a-fault, SIGSEGV stays ignored */
        ck_assert_int_eq(raise(SIGSEGV), 0);
        assert_read_only_refused();
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

#if !UNDER_SANITIZER
/* With SIG_DFL before, a fault in program code still kills with SIGSEGV
 * (the sanitizers' own handlers report and exit instead). */
START_TEST(default_before_library_real_fault_kills)
{
    struct sigaction sa = { .sa_handler = SIG_DFL };
    char *none = qai_page_with(PROT_NONE);

    ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
    qai_open_soft();
    qai_driver_version();
    assert_read_only_refused();
    (void)*(volatile char *)none;
}
END_TEST
#endif

static void *refuse_with_segv_blocked(void *arg)
{
    struct refusal *r = arg;
    sigset_t block;

    sigemptyset(&block);
    sigaddset(&block, SIGSEGV);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    return refuse_read_only(r);
}

/* A blocked SIGSEGV would kill the process at the fault: that thread
 * takes the kernel's way, the others keep the guard. */
START_TEST(thread_with_segv_blocked_uses_the_kernel)
{
    struct refusal r = { 0 };
    pthread_t t;

    qai_open_soft();
    qai_driver_version();
    ck_assert_int_eq(pthread_create(&t, NULL, refuse_with_segv_blocked, &r), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_status(r.status, STATUS_ACCESS_VIOLATION);
    ck_assert(!r.ready);
    assert_read_only_refused();
    ck_assert(kmt_fault_guard_ready() == (KMT_HAVE_FAULT_COPY != 0));
    kmt_test_shutdown_no_leaks();
}
END_TEST

#ifndef __SANITIZE_THREAD__
/* A copy that faults inside the program's SIGSEGV handler (ours forwarded
 * to it): SA_NODEFER lets the nested fault reach the guard again. */
static volatile NTSTATUS nested_status;
static char *nested_ro;

static void query_in_handler(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    (void)context;
    program_faults++;
    nested_status = qai_query(KMTQAITYPE_DRIVERVERSION, nested_ro, sizeof(D3DKMT_DRIVERVERSION));
    siglongjmp(program_env, 1);
}

START_TEST(fault_in_copy_inside_program_handler)
{
    struct sigaction sa = { .sa_sigaction = query_in_handler, .sa_flags = SA_SIGINFO };
    char *none = qai_page_with(PROT_NONE);

    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
    nested_ro = qai_page_with(PROT_READ);
    qai_open_soft();
    qai_driver_version();
    assert_read_only_refused();
    nested_status = STATUS_SUCCESS;
    if (!sigsetjmp(program_env, 1))
        (void)*(volatile char *)none;
    ck_assert_int_eq(program_faults, 1);
    ck_assert_status(nested_status, STATUS_ACCESS_VIOLATION);
    ck_assert_int_eq(nested_ro[0], 0);
    munmap(none, PAGE);
    munmap(nested_ro, PAGE);
    kmt_test_shutdown_no_leaks();
}
END_TEST
#endif

/* ---- threads -------------------------------------------------------------------- */

#define THREADS 8
#define ROUNDS 2000

struct worker {
    D3DKMT_DRIVERVERSION expected;
    char *ro, *none;
    unsigned wrong;
};

static void *mixed_queries(void *arg)
{
    struct worker *w = arg;
    D3DKMT_DRIVERVERSION *heap = malloc(sizeof(*heap));

    for (unsigned i = 0; i < ROUNDS; i++) {
        *heap = 0;
        w->wrong += qai_query(KMTQAITYPE_DRIVERVERSION, heap, sizeof(*heap)) != STATUS_SUCCESS || *heap != w->expected;
        w->wrong += qai_query(KMTQAITYPE_DRIVERVERSION, w->ro, sizeof(*heap)) != STATUS_ACCESS_VIOLATION;
        w->wrong += qai_query(KMTQAITYPE_DRIVERVERSION, w->none, sizeof(*heap)) != UNREADABLE_STATUS;
    }
    free(heap);
    return NULL;
}

START_TEST(threads_in_parallel)
{
    struct worker w[THREADS];
    pthread_t t[THREADS];
    char *ro = qai_page_with(PROT_READ), *none = qai_page_with(PROT_NONE);
    D3DKMT_DRIVERVERSION expected;

    qai_open_soft();
    expected = qai_driver_version();
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){ expected, ro, none, 0 };
        ck_assert_int_eq(pthread_create(&t[i], NULL, mixed_queries, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_uint_eq(w[i].wrong, 0);
    }
    ck_assert_int_eq(ro[0], 0);
    munmap(ro, PAGE);
    munmap(none, PAGE);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fault_guard");
    TCase *bad = tcase_create("bad_buffers");
    TCase *program = tcase_create("program_signals");
    TCase *threads = tcase_create("threads");

#if defined(__x86_64__) && !UNDER_SANITIZER
    tcase_add_test(bad, heap_buffer_answered_without_system_call);
#endif
    tcase_add_test(bad, bad_buffers_refused_untouched);
#if !UNDER_SANITIZER
    tcase_add_test(bad, freed_buffer_refused);
#endif
    tcase_add_test(bad, copy_stops_at_the_bad_page);
    suite_add_tcase(s, bad);

    /* 0: a plain handler, 1: an SA_SIGINFO one */
    tcase_add_loop_test(program, handler_before_library_gets_its_faults, 0, 2);
    tcase_add_test(program, handler_after_library_gets_its_faults);
    /* 0: SIG_DFL, 1: SIG_IGN */
    tcase_add_loop_test(program, default_and_ignore_before_library, 0, 2);
#if !UNDER_SANITIZER
    tcase_add_test_raise_signal(program, default_before_library_real_fault_kills, SIGSEGV);
#endif
    tcase_add_test(program, thread_with_segv_blocked_uses_the_kernel);
#ifndef __SANITIZE_THREAD__
    /* the handler calls into the library, which TSan calls signal-unsafe */
    tcase_add_test(program, fault_in_copy_inside_program_handler);
#endif
    suite_add_tcase(s, program);

    tcase_add_test(threads, threads_in_parallel);
    tcase_set_timeout(threads, 60);
    suite_add_tcase(s, threads);
    return kmt_test_run(s);
}
