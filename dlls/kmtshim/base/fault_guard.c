/*
 * The fault guard's signal handler (see fault_guard.h).  The handler
 * reads only what was written before it was installed (the previous
 * actions) and the context the kernel hands it, so it is
 * async-signal-safe, re-entrant and the same on every thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "fault_copy.h"
#include "fault_guard.h"

enum guard_state { GUARD_UNTRIED, GUARD_ON, GUARD_OFF };

static const int guarded[] = { SIGSEGV, SIGBUS };
#define GUARDED (sizeof(guarded) / sizeof(guarded[0]))

/* written once before our handler replaces them, read-only afterwards */
static struct sigaction previous[GUARDED];
static int state = GUARD_UNTRIED;
static bool forbidden;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
/* The calling thread: ready is 0 before its check, 1 where it may copy,
 * -1 where a signal is blocked or there is no guard; masked counts the
 * forwarded handlers it runs with a guarded signal blocked (a handler
 * that leaves by siglongjmp leaves it set: the next copy looks again).
 * Initial-exec: the handler's access is a plain load, never an
 * allocation. */
static __thread __attribute__((tls_model("initial-exec"))) struct {
    signed char ready;
    unsigned char masked;
} self;

static const struct sigaction *previous_for(int sig)
{
    for (unsigned i = 0; i < GUARDED; i++)
        if (guarded[i] == sig)
            return &previous[i];
    return NULL;
}

static bool guarded_member(const sigset_t *set)
{
    for (unsigned i = 0; i < GUARDED; i++)
        if (sigismember(set, guarded[i]))
            return true;
    return false;
}

/* The previous action, run the way the kernel would have run it. */
static void forward(int sig, siginfo_t *info, void *context)
{
    const struct sigaction *p = previous_for(sig);
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    bool sent = info->si_code <= 0;          /* kill() and friends, not a fault */
    bool masks;
    sigset_t mask, old;

    /* SIG_DFL and SIG_IGN whatever the flags: SA_SIGINFO with no function
     * is one of them to the kernel too (one union holds both fields) */
    if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN) {
        if (p->sa_handler == SIG_IGN && sent)
            return;
        /* the kernel gives a fault it cannot hand to SIG_IGN the default
         * action too; returning re-runs the faulting instruction, which
         * now gets it with its own siginfo and core dump */
        __atomic_store_n(&state, GUARD_OFF, __ATOMIC_RELAXED);
        sigaction(sig, &dfl, NULL);
        if (sent)
            raise(sig);
        return;
    }
    mask = p->sa_mask;
    if (!(p->sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    if (p->sa_flags & SA_RESETHAND) {
        __atomic_store_n(&state, GUARD_OFF, __ATOMIC_RELAXED);
        sigaction(sig, &dfl, NULL);
    }
    masks = guarded_member(&mask);
    pthread_sigmask(SIG_BLOCK, &mask, &old);
    /* a copy the handler makes would fault with the signal blocked,
     * which kills: until it returns, this thread copies the kernel's way */
    if (masks)
        self.masked++;
    if (p->sa_flags & SA_SIGINFO)
        p->sa_sigaction(sig, info, context);
    else
        p->sa_handler(sig);
    if (masks)
        self.masked--;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    ucontext_t *uc = context;
#if defined(__x86_64__)
    greg_t *pc = &uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
    greg_t *pc = &uc->uc_mcontext.gregs[REG_EIP];
#endif
    uintptr_t resume = 0;
    int saved_errno = errno;

#if KMT_HAVE_FAULT_COPY
    /* only a fault the kernel raised: a SIGSEGV another process sends
     * while the copy runs is the program's */
    if (info->si_code > 0)
        resume = kmt_fault_copy_fixup((uintptr_t)*pc);
    if (resume)
        *pc = (greg_t)resume;
#else
    (void)uc;
#endif
    if (!resume)
        forward(sig, info, context);
    errno = saved_errno;
}

static bool ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fault;
}

/* Inside Wine (its ntdll.so is loaded) the signals are Wine's to
 * dispatch, whichever of kmtshim's libraries asks. */
static bool in_wine(void)
{
    void *ntdll = dlopen("ntdll.so", RTLD_NOLOAD | RTLD_LAZY);

    if (ntdll)
        dlclose(ntdll);
    return ntdll != NULL;
}

/* Our action for `sig`, taking the previous one's delivery: its mask
 * (less the guarded signals: a fault in a copy inside the handler is
 * caught again), SA_RESTART and SA_ONSTACK.  SA_NODEFER for the same
 * reason as the mask. */
static struct sigaction ours_for(const struct sigaction *prev)
{
    struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER };

    sa.sa_mask = prev->sa_mask;
    for (unsigned i = 0; i < GUARDED; i++)
        sigdelset(&sa.sa_mask, guarded[i]);
    sa.sa_flags |= prev->sa_flags & (SA_RESTART | SA_ONSTACK);
    return sa;
}

static bool same_action(const struct sigaction *a, const struct sigaction *b)
{
    return a->sa_handler == b->sa_handler && a->sa_flags == b->sa_flags;
}

static void install(void)
{
    unsigned done = 0;
    int untried = GUARD_UNTRIED;

    if (!KMT_HAVE_FAULT_COPY || __atomic_load_n(&forbidden, __ATOMIC_ACQUIRE) || in_wine()) {
        __atomic_store_n(&state, GUARD_OFF, __ATOMIC_RELEASE);
        return;
    }
    /* previous[] is complete before our handler can run: a fault between
     * the swap and sigaction's return must already find it */
    for (; done < GUARDED; done++) {
        struct sigaction sa, now;

        if (sigaction(guarded[done], NULL, &previous[done]))
            break;
        sa = ours_for(&previous[done]);
        if (sigaction(guarded[done], &sa, &now))
            break;
        /* a program set its handler in between: put it back, no guard */
        if (!same_action(&now, &previous[done])) {
            sigaction(guarded[done], &now, NULL);
            break;
        }
    }
    if (done < GUARDED) {
        while (done--)
            sigaction(guarded[done], &previous[done], NULL);
        __atomic_store_n(&state, GUARD_OFF, __ATOMIC_RELEASE);
        return;
    }
    /* not ON if kmt_fault_guard_forbid() came meanwhile */
    __atomic_compare_exchange_n(&state, &untried, GUARD_ON, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static bool signals_unblocked(void)
{
    sigset_t blocked;

    return !pthread_sigmask(SIG_BLOCK, NULL, &blocked) && !guarded_member(&blocked);
}

/* The per-thread check: neither signal blocked, the handler still ours. */
static bool thread_can_rely(void)
{
    pthread_once(&install_once, install);
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != GUARD_ON || !signals_unblocked())
        return false;
    for (unsigned i = 0; i < GUARDED; i++) {
        struct sigaction now;

        if (sigaction(guarded[i], NULL, &now) || !ours(&now)) {
            __atomic_store_n(&state, GUARD_OFF, __ATOMIC_RELEASE);
            return false;
        }
    }
    return true;
}

bool kmt_fault_guard_ready(void)
{
    if (!self.ready)
        self.ready = thread_can_rely() ? 1 : -1;
    if (self.ready < 0 || __atomic_load_n(&state, __ATOMIC_ACQUIRE) != GUARD_ON)
        return false;
    if (__builtin_expect(self.masked, 0)) {
        if (!signals_unblocked())
            return false;
        self.masked = 0;                 /* a handler left by siglongjmp */
    }
    return true;
}

void kmt_fault_guard_forbid(void)
{
    __atomic_store_n(&forbidden, true, __ATOMIC_RELEASE);
    __atomic_store_n(&state, GUARD_OFF, __ATOMIC_RELEASE);
}
