/*
 * The futex locks of base/kmt_lock.h on their own: mutual exclusion under
 * contention, trylock, condition broadcasts that wake every sleeper and
 * lose none, shared readers, exclusive writers, and nested read locks
 * while a writer waits.  A lock that misses a wake-up hangs its case, which
 * Check's timeout turns into a failure.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "base/kmt_lock.h"

#define THREADS 4
#define ROUNDS 200000

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    ck_assert_int_eq(pthread_create(t, NULL, fn, arg), 0);
}

/* A thread sets *stage to 1 before it takes a lock and 2 once it has it:
 * wait for 1, give it time, and check it is still waiting. */
static void expect_blocked(atomic_int *stage)
{
    while (atomic_load(stage) < 1)
        sleep_ms(1);
    sleep_ms(50);
    ck_assert_int_eq(atomic_load(stage), 1);
}

/* ---- mutex ------------------------------------------------------------------ */

static struct kmt_mutex counter_lock;
static unsigned long counter;             /* plain: only the lock protects it */

static void *count_up(void *arg)
{
    for (unsigned i = 0; i < ROUNDS; i++) {
        kmt_mutex_lock(&counter_lock);
        counter++;
        kmt_mutex_unlock(&counter_lock);
    }
    return arg;
}

START_TEST(mutex_excludes_under_contention)
{
    pthread_t t[THREADS];

    kmt_mutex_init(&counter_lock);
    counter = 0;
    for (int i = 0; i < THREADS; i++)
        start(&t[i], count_up, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_uint_eq(counter, (unsigned long)THREADS * ROUNDS);
    /* nobody holds it and nobody sleeps: the word is back to free */
    ck_assert_uint_eq(atomic_load(&counter_lock.word), 0);
    kmt_mutex_destroy(&counter_lock);
}
END_TEST

static atomic_int blocked_stage;

static void *lock_after_holder(void *arg)
{
    struct kmt_mutex *m = arg;

    atomic_store(&blocked_stage, 1);
    kmt_mutex_lock(m);                    /* sleeps: the test holds it */
    atomic_store(&blocked_stage, 2);
    kmt_mutex_unlock(m);
    return NULL;
}

START_TEST(mutex_sleeper_is_woken_by_unlock)
{
    struct kmt_mutex m;
    pthread_t t;

    kmt_mutex_init(&m);
    kmt_mutex_lock(&m);
    atomic_store(&blocked_stage, 0);
    start(&t, lock_after_holder, &m);
    expect_blocked(&blocked_stage);
    ck_assert_uint_eq(atomic_load(&m.word), 2);         /* and marked as sleeping */
    kmt_mutex_unlock(&m);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&blocked_stage), 2);
    ck_assert_uint_eq(atomic_load(&m.word), 0);
}
END_TEST

START_TEST(trylock_fails_only_while_held)
{
    struct kmt_mutex m;

    kmt_mutex_init(&m);
    ck_assert(kmt_mutex_trylock(&m));
    ck_assert(!kmt_mutex_trylock(&m));
    kmt_mutex_unlock(&m);
    ck_assert(kmt_mutex_trylock(&m));
    kmt_mutex_unlock(&m);
}
END_TEST

/* ---- condition ----------------------------------------------------------------- */

static struct kmt_mutex q_lock;
static struct kmt_cond q_cond;
static unsigned q_items, q_taken;         /* under q_lock */
static bool q_done;

static void *consume(void *arg)
{
    unsigned mine = 0;

    kmt_mutex_lock(&q_lock);
    for (;;) {
        while (!q_items && !q_done)
            kmt_cond_wait(&q_cond, &q_lock);
        if (!q_items)
            break;
        q_items--;
        q_taken++;
        mine++;
    }
    kmt_mutex_unlock(&q_lock);
    return (void *)(uintptr_t)mine;
}

START_TEST(cond_loses_no_item)
{
    pthread_t t[THREADS];
    unsigned total = 0;

    kmt_mutex_init(&q_lock);
    kmt_cond_init(&q_cond);
    q_items = q_taken = 0;
    q_done = false;
    for (int i = 0; i < THREADS; i++)
        start(&t[i], consume, NULL);
    for (unsigned i = 0; i < 20000; i++) {
        kmt_mutex_lock(&q_lock);
        q_items++;
        kmt_cond_broadcast(&q_cond);
        kmt_mutex_unlock(&q_lock);
    }
    kmt_mutex_lock(&q_lock);
    q_done = true;
    kmt_cond_broadcast(&q_cond);
    kmt_mutex_unlock(&q_lock);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (unsigned)(uintptr_t)r;
    }
    ck_assert_uint_eq(total, 20000);
    ck_assert_uint_eq(q_taken, 20000);
    ck_assert_uint_eq(q_items, 0);
    ck_assert_uint_eq(atomic_load(&q_cond.sleepers), 0);
}
END_TEST

static atomic_int asleep;

static void *wait_for_done(void *arg)
{
    kmt_mutex_lock(&q_lock);
    atomic_fetch_add(&asleep, 1);
    while (!q_done)
        kmt_cond_wait(&q_cond, &q_lock);
    kmt_mutex_unlock(&q_lock);
    return arg;
}

START_TEST(broadcast_wakes_every_sleeper)
{
    pthread_t t[THREADS];

    kmt_mutex_init(&q_lock);
    kmt_cond_init(&q_cond);
    q_done = false;
    atomic_store(&asleep, 0);
    for (int i = 0; i < THREADS; i++)
        start(&t[i], wait_for_done, NULL);
    while (atomic_load(&asleep) < THREADS)
        sleep_ms(1);
    sleep_ms(20);                         /* let them reach the futex */
    kmt_mutex_lock(&q_lock);
    ck_assert_uint_eq(atomic_load(&q_cond.sleepers), THREADS);
    q_done = true;
    kmt_cond_broadcast(&q_cond);
    kmt_mutex_unlock(&q_lock);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}
END_TEST

/* ---- reader/writer ------------------------------------------------------------- */

static struct kmt_rwlock rw;
static unsigned long pair_a, pair_b;      /* a writer moves both; readers see them equal */
static atomic_uint torn, readers_in;

static void *read_pairs(void *arg)
{
    for (unsigned i = 0; i < ROUNDS / 4; i++) {
        kmt_rwlock_rdlock(&rw);
        if (pair_a != pair_b)
            atomic_fetch_add(&torn, 1);
        kmt_rwlock_unlock(&rw);
    }
    return arg;
}

static void *write_pairs(void *arg)
{
    for (unsigned i = 0; i < ROUNDS / 20; i++) {
        kmt_rwlock_wrlock(&rw);
        pair_a++;
        pair_b++;
        kmt_rwlock_unlock(&rw);
    }
    return arg;
}

START_TEST(writers_exclude_readers)
{
    pthread_t t[THREADS];

    kmt_rwlock_init(&rw);
    pair_a = pair_b = 0;
    atomic_store(&torn, 0);
    start(&t[0], write_pairs, NULL);
    start(&t[1], write_pairs, NULL);
    start(&t[2], read_pairs, NULL);
    start(&t[3], read_pairs, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_uint_eq(atomic_load(&torn), 0);
    ck_assert_uint_eq(pair_a, 2ul * (ROUNDS / 20));
    ck_assert_uint_eq(atomic_load(&rw.word), 0);
    kmt_rwlock_destroy(&rw);
}
END_TEST

static void *read_until_two(void *arg)
{
    kmt_rwlock_rdlock(&rw);
    atomic_fetch_add(&readers_in, 1);
    /* both readers inside at once, or this never ends */
    while (atomic_load(&readers_in) < 2)
        sleep_ms(1);
    kmt_rwlock_unlock(&rw);
    return arg;
}

START_TEST(readers_share)
{
    pthread_t t[2];

    kmt_rwlock_init(&rw);
    atomic_store(&readers_in, 0);
    start(&t[0], read_until_two, NULL);
    start(&t[1], read_until_two, NULL);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    ck_assert_uint_eq(atomic_load(&rw.word), 0);
}
END_TEST

static atomic_int writer_stage;

static void *write_once(void *arg)
{
    atomic_store(&writer_stage, 1);
    kmt_rwlock_wrlock(&rw);
    atomic_store(&writer_stage, 2);
    kmt_rwlock_unlock(&rw);
    return arg;
}

/* The device lock is taken shared again by a thread that holds it (a call
 * that looks its device up twice): a writer waiting meanwhile must not
 * block that second read lock, and gets the lock once both are gone. */
START_TEST(nested_read_lock_while_a_writer_waits)
{
    pthread_t t;

    kmt_rwlock_init(&rw);
    atomic_store(&writer_stage, 0);
    kmt_rwlock_rdlock(&rw);
    start(&t, write_once, NULL);
    expect_blocked(&writer_stage);
    ck_assert(atomic_load(&rw.word) & KMT_RW_SLEEPERS);
    kmt_rwlock_rdlock(&rw);               /* must not deadlock */
    kmt_rwlock_unlock(&rw);
    ck_assert_int_eq(atomic_load(&writer_stage), 1);
    kmt_rwlock_unlock(&rw);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&writer_stage), 2);
    ck_assert_uint_eq(atomic_load(&rw.word), 0);
}
END_TEST

static atomic_int reader_stage;

static void *read_once(void *arg)
{
    atomic_store(&reader_stage, 1);
    kmt_rwlock_rdlock(&rw);
    atomic_store(&reader_stage, 2);
    kmt_rwlock_unlock(&rw);
    return arg;
}

START_TEST(reader_waits_for_the_writer)
{
    pthread_t t;

    kmt_rwlock_init(&rw);
    atomic_store(&reader_stage, 0);
    kmt_rwlock_wrlock(&rw);
    start(&t, read_once, NULL);
    expect_blocked(&reader_stage);
    kmt_rwlock_unlock(&rw);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&reader_stage), 2);
    ck_assert_uint_eq(atomic_load(&rw.word), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kmt_lock");
    TCase *m = tcase_create("mutex"), *c = tcase_create("cond"), *r = tcase_create("rwlock");

    tcase_set_timeout(m, 60);
    tcase_set_timeout(c, 60);
    tcase_set_timeout(r, 60);
    tcase_add_test(m, mutex_excludes_under_contention);
    tcase_add_test(m, mutex_sleeper_is_woken_by_unlock);
    tcase_add_test(m, trylock_fails_only_while_held);
    tcase_add_test(c, cond_loses_no_item);
    tcase_add_test(c, broadcast_wakes_every_sleeper);
    tcase_add_test(r, writers_exclude_readers);
    tcase_add_test(r, readers_share);
    tcase_add_test(r, nested_read_lock_while_a_writer_waits);
    tcase_add_test(r, reader_waits_for_the_writer);
    suite_add_tcase(s, m);
    suite_add_tcase(s, c);
    suite_add_tcase(s, r);
    return kmt_test_run(s);
}
