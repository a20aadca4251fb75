/*
 * The read-side sections of base/kmt_rcu.h on their own: a grace period
 * waits for a reader inside a section and for no reader outside one,
 * readers racing with a writer that frees what it unpublished never see a
 * freed object (ASan reports the use after free, the poison the plain
 * build), threads that exited leave the registry, and a fork() child does
 * not wait for its parent's threads.  A grace period that never ends
 * hangs its case, which Check's timeout turns into a failure.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "base/kmt_rcu.h"

#define READERS 3
#define SWAPS 2000
#define MAGIC 0x52435521u

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    ck_assert_int_eq(pthread_create(t, NULL, fn, arg), 0);
}

/* ---- a reader inside a section ------------------------------------------- */

struct parked {
    atomic_int stage;                    /* 1 inside the section, 2 out */
    atomic_bool leave;
};

static void *park_in_section(void *arg)
{
    struct parked *p = arg;
    struct kmt_rcu_reader *r = kmt_rcu_read_lock();

    atomic_store(&p->stage, 1);
    while (!atomic_load(&p->leave))
        sleep_ms(1);
    kmt_rcu_read_unlock(r);
    atomic_store(&p->stage, 2);
    return NULL;
}

static void *synchronize_once(void *arg)
{
    atomic_int *done = arg;

    kmt_rcu_synchronize();
    atomic_store(done, 1);
    return NULL;
}

START_TEST(synchronize_waits_for_a_reader_inside)
{
    struct parked p = { 0 };
    atomic_int done = 0;
    pthread_t reader, writer;

    start(&reader, park_in_section, &p);
    while (atomic_load(&p.stage) < 1)
        sleep_ms(1);
    start(&writer, synchronize_once, &done);
    sleep_ms(50);
    ck_assert_int_eq(atomic_load(&done), 0);
    atomic_store(&p.leave, true);
    ck_assert_int_eq(pthread_join(writer, NULL), 0);
    ck_assert_int_eq(atomic_load(&done), 1);
    ck_assert_int_eq(pthread_join(reader, NULL), 0);
}
END_TEST

/* ---- readers outside a section, and threads that left --------------------- */

struct idler {
    atomic_int stage;                    /* 1 once it left its one section */
    atomic_bool leave;
};

static void *section_then_idle(void *arg)
{
    struct idler *i = arg;

    kmt_rcu_read_unlock(kmt_rcu_read_lock());
    atomic_store(&i->stage, 1);
    while (!atomic_load(&i->leave))
        sleep_ms(1);
    return NULL;
}

START_TEST(synchronize_ignores_readers_outside)
{
    struct idler i = { 0 };
    pthread_t idle;

    start(&idle, section_then_idle, &i);
    while (atomic_load(&i.stage) < 1)
        sleep_ms(1);
    kmt_rcu_synchronize();                /* returns although the thread is registered */
    atomic_store(&i.leave, true);
    ck_assert_int_eq(pthread_join(idle, NULL), 0);
    /* its record went with it: walking the registry touches no freed TLS */
    kmt_rcu_synchronize();
}
END_TEST

/* ---- readers racing with a writer that frees ------------------------------ */

struct object {
    unsigned magic;
    unsigned value;
};

static _Atomic(struct object *) current;
static atomic_bool writer_done;
static atomic_uint bad_reads;

static struct object *object_new(unsigned value)
{
    struct object *o = malloc(sizeof(*o));

    ck_assert_ptr_nonnull(o);
    o->magic = MAGIC;
    o->value = value;
    return o;
}

static void *read_loop(void *arg)
{
    unsigned long reads = 0;

    while (!atomic_load_explicit(&writer_done, memory_order_relaxed) || reads < 1000) {
        struct kmt_rcu_reader *r = kmt_rcu_read_lock();
        struct object *o = atomic_load_explicit(&current, memory_order_acquire);

        if (o->magic != MAGIC)
            atomic_fetch_add(&bad_reads, 1);
        kmt_rcu_read_unlock(r);
        reads++;
    }
    return arg;
}

START_TEST(readers_never_see_a_freed_object)
{
    pthread_t readers[READERS];

    atomic_store(&current, object_new(0));
    atomic_store(&writer_done, false);
    atomic_store(&bad_reads, 0);
    for (unsigned i = 0; i < READERS; i++)
        start(&readers[i], read_loop, NULL);
    for (unsigned n = 1; n <= SWAPS; n++) {
        struct object *old = atomic_exchange_explicit(&current, object_new(n), memory_order_acq_rel);

        kmt_rcu_synchronize();
        old->magic = 0;                   /* poison: a reader still holding it would see this */
        free(old);
    }
    atomic_store(&writer_done, true);
    for (unsigned i = 0; i < READERS; i++)
        ck_assert_int_eq(pthread_join(readers[i], NULL), 0);
    ck_assert_uint_eq(atomic_load(&bad_reads), 0);
    ck_assert_uint_eq(atomic_load(&current)->value, SWAPS);
    free(atomic_load(&current));
}
END_TEST

/* ---- fork ------------------------------------------------------------------- */

#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
/* The parent has a thread parked inside a section; the child has no such
 * thread and its grace periods end. */
START_TEST(fork_child_forgets_the_parents_readers)
{
    struct parked p = { 0 };
    pthread_t reader;
    int status;
    pid_t pid;

    kmt_rcu_read_unlock(kmt_rcu_read_lock());
    start(&reader, park_in_section, &p);
    while (atomic_load(&p.stage) < 1)
        sleep_ms(1);
    if (!(pid = fork())) {
        kmt_rcu_forget_other_threads();
        kmt_rcu_read_unlock(kmt_rcu_read_lock());
        kmt_rcu_synchronize();
        _exit(0);
    }
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && !WEXITSTATUS(status));
    atomic_store(&p.leave, true);
    ck_assert_int_eq(pthread_join(reader, NULL), 0);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("kmt_rcu");
    TCase *t = tcase_create("rcu");

    tcase_set_timeout(t, 60);
    tcase_add_test(t, synchronize_waits_for_a_reader_inside);
    tcase_add_test(t, synchronize_ignores_readers_outside);
    tcase_add_test(t, readers_never_see_a_freed_object);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
    tcase_add_test(t, fork_child_forgets_the_parents_readers);
#endif
    suite_add_tcase(s, t);
    return kmt_test_run(s);
}
