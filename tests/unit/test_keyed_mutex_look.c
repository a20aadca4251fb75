/*
 * A contended AcquireKeyedMutex looks for the release to its key for a
 * moment before it announces itself and sleeps, but only when the owner
 * that will release took the mutex on another CPU (keyed_mutex_page.c,
 * dxgkrnl/look.h).  Two threads of this process, each with its own handle
 * and pinned to a CPU, hand the mutex back and forth; each releases only
 * once the other has started to look or sleep, so every hand-over lands
 * in the other's wait, and the handles' counts (struct dxgk_km_look) say
 * whether it was taken in the look or after a futex wait.  The hand-over
 * rows set each look's length to a second: on a loaded machine the
 * releasing thread may be descheduled for longer than any real look, and
 * how the length adapts has rows of its own.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "cpu_pin.h"
#include "test_util.h"
#include "base/kmt_time.h"
#include "dxgkrnl/keyed_mutex.h"
#include "dxgkrnl/keyed_mutex_page.h"
#include "dxgkrnl/look.h"
#include "dxgkrnl/share.h"

#define HOPS 200
/* the look the hand-over rows ask for: longer than any descheduling */
#define LONG_LOOK_NS 1000000000u
/* how long a side waits for the other to start waiting before it fails */
#define STUCK_NS 10000000000ull

static int cpus[2];
static int ncpus;

static void setup(void)
{
    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
    ncpus = kmt_test_first_cpus(cpus, 2);
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
}

static NTSTATUS acquire(D3DKMT_HANDLE h, UINT64 key, const LONGLONG *timeout)
{
    LARGE_INTEGER t;
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = h, .Key = key };

    if (timeout) {
        t.QuadPart = *timeout;
        a.pTimeout = &t;
    }
    return D3DKMTAcquireKeyedMutex(&a);
}

static NTSTATUS release(D3DKMT_HANDLE h, UINT64 key)
{
    D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = h, .Key = key };

    return D3DKMTReleaseKeyedMutex(&r);
}

static unsigned looks(const struct dxgk_km_look *l)
{
    return atomic_load(&l->looks);
}

static unsigned sleeps(const struct dxgk_km_look *l)
{
    return atomic_load(&l->sleeps);
}

/* One thread's part: its handle, the key it takes and the key it gives. */
struct side {
    D3DKMT_HANDLE h;
    UINT64 take, give;
    int cpu;
    bool yields;                         /* shares its CPU with the other side */
    struct dxgk_km_look *look;           /* h's */
    _Atomic unsigned begun;              /* acquires begun */
    _Atomic unsigned waits_before;       /* looks + sleeps before the acquire under way */
    struct side *other;
    NTSTATUS status;
};

static NTSTATUS take(struct side *s)
{
    atomic_store(&s->look->budget_ns, LONG_LOOK_NS);
    atomic_store(&s->waits_before, looks(s->look) + sleeps(s->look));
    atomic_fetch_add(&s->begun, 1);
    return acquire(s->h, s->take, NULL);
}

/* Until the other side's acquire number `n` looks or sleeps: it cannot
 * succeed before our release, so it does one or the other. */
static NTSTATUS await_waiting(struct side *s, unsigned n)
{
    const struct side *o = s->other;
    uint64_t stuck = kmt_now_ns() + STUCK_NS;

    while (atomic_load(&o->begun) < n ||
           looks(o->look) + sleeps(o->look) == atomic_load(&o->waits_before)) {
        if (kmt_now_ns() > stuck)
            return STATUS_UNSUCCESSFUL;
        if (s->yields)
            sched_yield();
        else
            dxgk_look_pause();
    }
    return STATUS_SUCCESS;
}

/* The first side holds its key first, gives, and takes again `hops`
 * times; the second takes, then gives back, `hops` times. */
static void *play(void *arg)
{
    struct side *s = arg;
    bool first = s->take == 0;

    if ((s->status = kmt_test_pin_to(s->cpu) ? STATUS_UNSUCCESSFUL : STATUS_SUCCESS))
        return NULL;
    if (first && (s->status = take(s)))
        return NULL;
    for (unsigned i = 1; i <= HOPS && !s->status; i++) {
        if (!first && (s->status = take(s)))
            break;
        if ((s->status = await_waiting(s, first ? i : i + 1)) || (s->status = release(s->h, s->give)))
            break;
        if (first)
            s->status = take(s);
    }
    return NULL;
}

/* A mutex released to key 0 and two handles of it, for sides a (key 0)
 * and b (key 1) on cpu_a and cpu_b; plays the hand-overs to the end (a
 * then holds it, taken after a wait) and returns its global handle. */
static D3DKMT_HANDLE hand_over(struct side *a, struct side *b, int cpu_a, int cpu_b)
{
    D3DKMT_CREATEKEYEDMUTEX c = { 0 };
    D3DKMT_OPENKEYEDMUTEX o = { 0 };
    pthread_t ta, tb;

    ck_assert_status(D3DKMTCreateKeyedMutex(&c), STATUS_SUCCESS);
    o.hSharedHandle = c.hSharedHandle;
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_SUCCESS);
    *a = (struct side){ .h = c.hKeyedMutex, .take = 0, .give = 1, .cpu = cpu_a, .other = b };
    *b = (struct side){ .h = o.hKeyedMutex, .take = 1, .give = 0, .cpu = cpu_b, .other = a };
    a->yields = b->yields = cpu_a == cpu_b;
    ck_assert_ptr_nonnull(a->look = dxgk_keyed_mutex_look(a->h));
    ck_assert_ptr_nonnull(b->look = dxgk_keyed_mutex_look(b->h));
    ck_assert_int_eq(pthread_create(&ta, NULL, play, a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, play, b), 0);
    ck_assert_int_eq(pthread_join(ta, NULL), 0);
    ck_assert_int_eq(pthread_join(tb, NULL), 0);
    ck_assert_status(a->status, STATUS_SUCCESS);
    ck_assert_status(b->status, STATUS_SUCCESS);
    return c.hSharedHandle;
}

static NTSTATUS destroy(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYKEYEDMUTEX d = { h };

    return D3DKMTDestroyKeyedMutex(&d);
}

/* Across two CPUs: the first hand-over finds no CPU recorded and sleeps;
 * from then on every wait looks (the other side waits, or took the mutex
 * after waiting, on its CPU), and the releases land in the looks: no
 * other wait makes a futex call.  Without the look every wait sleeps. */
START_TEST(release_from_another_cpu_is_taken_without_sleeping)
{
    struct side a, b;
    unsigned all_looks, all_sleeps;

    if (ncpus < 2)
        return;                          /* one CPU: every release comes from here */
    hand_over(&a, &b, cpus[0], cpus[1]);
    all_looks = looks(a.look) + looks(b.look);
    all_sleeps = sleeps(a.look) + sleeps(b.look);
    ck_assert_uint_eq(all_looks, 2 * HOPS - 1);
    /* the first: once more if the other side's first take changed the
     * holder word as it went to sleep */
    ck_assert_msg(all_sleeps <= 2, "%u futex waits in %u hand-overs", all_sleeps, 2 * HOPS);
    ck_assert_status(destroy(b.h), STATUS_SUCCESS);
    ck_assert_status(destroy(a.h), STATUS_SUCCESS);
}
END_TEST

/* On one CPU the owner cannot release while we poll: no wait looks, and
 * each sleeps until the release wakes it. */
START_TEST(release_from_the_same_cpu_is_not_looked_for)
{
    struct side a, b;

    hand_over(&a, &b, cpus[0], cpus[0]);
    ck_assert_uint_eq(looks(a.look) + looks(b.look), 0);
    ck_assert_uint_ge(sleeps(a.look) + sleeps(b.look), 2 * HOPS);
    ck_assert_status(destroy(b.h), STATUS_SUCCESS);
    ck_assert_status(destroy(a.h), STATUS_SUCCESS);
}
END_TEST

/* An owner on another CPU that never releases: a timeout shorter than the
 * look ends the look on time (the deadline counts from the call, and a
 * look set to last long ends with it), and teaches it nothing; a longer one looks its whole budget, sleeps, times
 * out, and halves the next look. */
START_TEST(timeout_during_the_look_is_on_time)
{
    static const LONGLONG one_us = -10, one_ms = -10000;
    D3DKMT_OPENKEYEDMUTEX o = { 0 };
    struct dxgk_km_look *look;
    struct side a, b;
    uint64_t start, took, fastest = UINT64_MAX;

    if (ncpus < 2)
        return;
    o.hSharedHandle = hand_over(&a, &b, cpus[0], cpus[1]);   /* a holds it, taken on cpus[0] */
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_SUCCESS);
    look = dxgk_keyed_mutex_look(o.hKeyedMutex);   /* a fresh handle: no look yet */
    ck_assert_uint_eq(atomic_load(&look->budget_ns), 0);
    /* a long look, so that one ignoring the deadline stands out by far
     * more than any slowness of the machine or a sanitizer */
    atomic_store(&look->budget_ns, LONG_LOOK_NS);
    kmt_test_pin(cpus[1]);
    for (int i = 0; i < 20; i++) {
        unsigned before = looks(look);

        start = kmt_now_ns();
        ck_assert_status(acquire(o.hKeyedMutex, 1, &one_us), STATUS_TIMEOUT);
        took = kmt_now_ns() - start;
        ck_assert_uint_ge(took, 1000);
        fastest = took < fastest ? took : fastest;
        ck_assert_uint_eq(looks(look), before + 1);
    }
    /* a look that ignored the deadline would last its whole budget */
    ck_assert_msg(fastest < LONG_LOOK_NS / 10, "a 1 us timeout took %llu ns at best",
                  (unsigned long long)fastest);
    ck_assert_uint_eq(atomic_load(&look->budget_ns), LONG_LOOK_NS);
    ck_assert_uint_eq(sleeps(look), 0);
    atomic_store(&look->budget_ns, 0);             /* the first budget again */
    start = kmt_now_ns();
    ck_assert_status(acquire(o.hKeyedMutex, 1, &one_ms), STATUS_TIMEOUT);
    ck_assert_uint_ge(kmt_now_ns() - start, 1000000);
    ck_assert_uint_eq(atomic_load(&look->budget_ns), DXGK_LOOK_MAX_NS / 2);
    kmt_test_unpin(cpus, ncpus);
    ck_assert_status(destroy(o.hKeyedMutex), STATUS_SUCCESS);
    ck_assert_status(destroy(b.h), STATUS_SUCCESS);
    ck_assert_status(destroy(a.h), STATUS_SUCCESS);
}
END_TEST

/* A wait longer than the slices the link watch cuts it into
 * (DXGK_SHARE_LINK_CHECK_NS): it looks once, at its start, and the later
 * slices go straight to sleep, so the budget learns from it once. */
START_TEST(wait_of_several_slices_looks_once)
{
    /* two and a half slices, in 100 ns units */
    static const LONGLONG slices = -(LONGLONG)(DXGK_SHARE_LINK_CHECK_NS * 5 / 2 / 100);
    D3DKMT_OPENKEYEDMUTEX o = { 0 };
    struct dxgk_km_look *look;
    struct side a, b;

    if (ncpus < 2)
        return;
    o.hSharedHandle = hand_over(&a, &b, cpus[0], cpus[1]);   /* a holds it, taken on cpus[0] */
    ck_assert_status(D3DKMTOpenKeyedMutex(&o), STATUS_SUCCESS);
    look = dxgk_keyed_mutex_look(o.hKeyedMutex);
    kmt_test_pin(cpus[1]);
    ck_assert_status(acquire(o.hKeyedMutex, 1, &slices), STATUS_TIMEOUT);
    ck_assert_uint_eq(looks(look), 1);
    ck_assert_uint_ge(sleeps(look), 3);  /* one slice or more each */
    ck_assert_uint_eq(atomic_load(&look->budget_ns), DXGK_LOOK_MAX_NS / 2);
    kmt_test_unpin(cpus, ncpus);
    ck_assert_status(destroy(o.hKeyedMutex), STATUS_SUCCESS);
    ck_assert_status(destroy(b.h), STATUS_SUCCESS);
    ck_assert_status(destroy(a.h), STATUS_SUCCESS);
}
END_TEST

struct abandon_wait {
    D3DKMT_HANDLE h;
    int cpu;
    NTSTATUS status;
};

static void *wait_for_key1(void *arg)
{
    struct abandon_wait *w = arg;

    w->status = kmt_test_pin_to(w->cpu) ? STATUS_UNSUCCESSFUL : acquire(w->h, 1, NULL);
    return NULL;
}

/* The owner's handle destroyed while a waiter on another CPU looks (for
 * up to a second): the waiter gets
 * STATUS_ABANDONED, as it would asleep, without sleeping. */
START_TEST(abandoned_during_the_look)
{
    struct side a, b;
    struct abandon_wait w;
    pthread_t t;
    uint64_t stuck;
    unsigned sleeps_before;

    if (ncpus < 2)
        return;
    hand_over(&a, &b, cpus[0], cpus[1]);   /* a holds it, taken on cpus[0] after a wait */
    w = (struct abandon_wait){ b.h, cpus[1], STATUS_PENDING };
    kmt_test_pin(cpus[0]);
    atomic_store(&b.look->budget_ns, LONG_LOOK_NS);
    sleeps_before = sleeps(b.look);
    {
        unsigned before = looks(b.look);

        ck_assert_int_eq(pthread_create(&t, NULL, wait_for_key1, &w), 0);
        stuck = kmt_now_ns() + STUCK_NS;
        while (looks(b.look) == before && kmt_now_ns() < stuck)
            dxgk_look_pause();
        ck_assert_uint_gt(looks(b.look), before);
    }
    ck_assert_status(destroy(a.h), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_status(w.status, STATUS_ABANDONED);
    ck_assert_uint_eq(sleeps(b.look), sleeps_before);   /* seen in the look */
    kmt_test_unpin(cpus, ncpus);
    ck_assert_status(destroy(b.h), STATUS_SUCCESS);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("keyed_mutex_look");
    TCase *tc = tcase_create("keyed_mutex_look");

    (void)argc;
    (void)argv;
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, release_from_another_cpu_is_taken_without_sleeping);
    tcase_add_test(tc, release_from_the_same_cpu_is_not_looked_for);
    tcase_add_test(tc, timeout_during_the_look_is_on_time);
    tcase_add_test(tc, abandoned_during_the_look);
    tcase_add_test(tc, wait_of_several_slices_looks_once);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
