/*
 * The registry of readers and the writer's grace period (kmt_rcu.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kmt_rcu.h"

__thread __attribute__((tls_model("initial-exec"))) struct kmt_rcu_reader kmt_rcu_self;
bool kmt_rcu_readers_fence;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list readers = LIST_INIT(readers);
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
/* set before any reader's first section (its registration locks a mutex
 * after it, a full barrier): a writer that finds it clear after
 * unpublishing has no reader to wait for */
static atomic_bool started;

static long membarrier(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

/* A thread exits: its record goes with its TLS. */
static void unregister(void *arg)
{
    struct kmt_rcu_reader *r = arg;
    unsigned long s = atomic_load_explicit(&r->seq, memory_order_relaxed);

    /* a thread ended inside a section (pthread_exit from a signal handler)
     * leaves it first: a writer waiting on it holds the lock we need */
    if (s & 1)
        atomic_store_explicit(&r->seq, s + 1, memory_order_release);
    pthread_mutex_lock(&registry_lock);
    list_remove(&r->entry);
    r->registered = false;
    r->plain = false;
    pthread_mutex_unlock(&registry_lock);
}

static void init(void)
{
    long cmds;

    atomic_store_explicit(&started, true, memory_order_seq_cst);
    cmds = membarrier(MEMBARRIER_CMD_QUERY);
    pthread_key_create(&exit_key, unregister);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
        kmt_rcu_readers_fence = true;
}

void kmt_rcu_init(void)
{
    pthread_once(&once, init);
}

void kmt_rcu_register(struct kmt_rcu_reader *r)
{
    kmt_rcu_init();
    pthread_mutex_lock(&registry_lock);
    list_add_tail(&readers, &r->entry);
    r->registered = true;
    r->plain = !kmt_rcu_readers_fence;   /* decided by kmt_rcu_init() above, for good */
    pthread_mutex_unlock(&registry_lock);
    pthread_setspecific(exit_key, r);
}

/* Every thread of the process executes a full barrier between the call's
 * start and its return (or the readers fence by themselves). */
static void barrier_everywhere(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (kmt_rcu_readers_fence)
        return;
    for (int tries = 0; membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED); tries++) {
        /* a fork() child: the registration may not have come along */
        if (errno == EPERM && !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
            continue;
        if (tries >= 100) {
            /* no barrier to be had (ENOMEM, a sandbox): a reader's store
             * leaves its CPU's store buffer well within a millisecond */
            usleep(1000);
            return;
        }
        sched_yield();
    }
}

void kmt_rcu_synchronize(void)
{
    struct kmt_rcu_reader *r;

    /* a process that never read under RCU (most tables' teardown) skips
     * the membarrier registration, which can take the kernel a grace
     * period of its own */
    if (!atomic_load_explicit(&started, memory_order_seq_cst))
        return;
    kmt_rcu_init();
    pthread_mutex_lock(&registry_lock);
    barrier_everywhere();
    /* a reader seen outside a section enters its next one after the
     * barrier, so it cannot find what was unpublished before; one seen
     * inside is waited for until its sequence moves on */
    LIST_FOR_EACH_ENTRY(r, &readers, struct kmt_rcu_reader, entry) {
        unsigned long s = atomic_load_explicit(&r->seq, memory_order_acquire);

        while ((s & 1) && atomic_load_explicit(&r->seq, memory_order_acquire) == s)
            sched_yield();
    }
    pthread_mutex_unlock(&registry_lock);
}

void kmt_rcu_forget_other_threads(void)
{
    struct kmt_rcu_reader *me = &kmt_rcu_self;

    /* another thread may have held the lock at the fork */
    registry_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    list_init(&readers);
    if (me->registered)
        list_add_tail(&readers, &me->entry);
}
