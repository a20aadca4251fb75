/*
 * kmtbench-keyedmutex: what a keyed mutex costs next to the raw futex code
 * it is built on, measured in the same run.
 *
 *   uncontended  AcquireKeyedMutex + ReleaseKeyedMutex on one handle, next
 *                to a futex lock/unlock pair on a MAP_SHARED page (one
 *                compare-and-swap, one exchange, no system call); goal 1.2x
 *   ping-pong    a keyed mutex handed back and forth between two processes
 *                (key 0 to the parent, key 1 to a fork()ed child that opened
 *                the global handle), next to a raw futex turn word handed
 *                back and forth the same way; one row is a round trip (two
 *                hand-overs, each a wake of a sleeping process); goal 1.2x;
 *                timed where the scheduler puts the two processes, both
 *                on one CPU, and on two CPUs (bench_place); on two CPUs
 *                also a raw row whose waits poll before they sleep, as
 *                a contended acquire looks when the owner runs on
 *                another CPU: the like-for-like counterpart
 */
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/bench_util.h"

static D3DKMT_HANDLE keyed_mutex, global_handle;

static void futex_wait(atomic_uint *word, unsigned value)
{
    syscall(SYS_futex, word, FUTEX_WAIT, value, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* ---- uncontended ---------------------------------------------------------- */

/* Acquire `take`, release to `give`: uncontended when both are 0, one
 * side of the ping-pong when they differ. */
struct keyed_loop {
    UINT64 take, give;
};

static void keyed_body(void *arg, unsigned ops)
{
    const struct keyed_loop *l = arg;
    D3DKMT_ACQUIREKEYEDMUTEX a = { .hKeyedMutex = keyed_mutex, .Key = l->take };
    D3DKMT_RELEASEKEYEDMUTEX r = { .hKeyedMutex = keyed_mutex, .Key = l->give };
    NTSTATUS s;

    for (unsigned i = 0; i < ops; i++) {
        if ((s = D3DKMTAcquireKeyedMutex(&a)))
            bench_die("D3DKMTAcquireKeyedMutex", s);
        r.FenceValue = i;
        if ((s = D3DKMTReleaseKeyedMutex(&r)))
            bench_die("D3DKMTReleaseKeyedMutex", s);
    }
}

/* The classic three-state futex mutex (0 free, 1 held, 2 held with
 * sleepers), shared between processes. */
static void raw_lock(atomic_uint *m)
{
    unsigned expected = 0;

    if (atomic_compare_exchange_strong_explicit(m, &expected, 1, memory_order_acquire, memory_order_relaxed))
        return;
    while (atomic_exchange_explicit(m, 2, memory_order_acquire))
        futex_wait(m, 2);
}

static void raw_unlock(atomic_uint *m)
{
    if (atomic_exchange_explicit(m, 0, memory_order_release) == 2)
        futex_wake(m);
}

static void raw_body(void *arg, unsigned ops)
{
    atomic_uint *m = arg;

    for (unsigned i = 0; i < ops; i++) {
        raw_lock(m);
        raw_unlock(m);
    }
}

/* ---- ping-pong between two processes ------------------------------------------- */

/* The child's side: `rounds` times, take key 1 and give key 0 back, on
 * its own handle (a fork() child starts the library afresh). */
static _Noreturn void keyed_child(unsigned rounds)
{
    static const struct keyed_loop child = { 1, 0 };
    D3DKMT_OPENKEYEDMUTEX o = { .hSharedHandle = global_handle };
    NTSTATUS s;

    if ((s = D3DKMTOpenKeyedMutex(&o)))
        bench_die("child: D3DKMTOpenKeyedMutex", s);
    keyed_mutex = o.hKeyedMutex;
    keyed_body((void *)&child, rounds);
    _exit(0);
}

/* How long the raw look row polls before it sleeps: the longest look a
 * contended acquire makes (DXGK_LOOK_MAX_NS, dxgkrnl/look.h). */
#define RAW_LOOK_NS 16000.0

static bool raw_look;                    /* this run's raw waits poll first */

/* A turn word: 0 the parent's turn, 1 the child's; whoever waits sleeps
 * in the kernel (after polling, in the look row), whoever hands over
 * wakes it. */
static void raw_take(atomic_uint *turn, unsigned me)
{
    unsigned t;

    if (raw_look)
        for (double end = bench_now_ns() + RAW_LOOK_NS;
             atomic_load_explicit(turn, memory_order_acquire) != me && bench_now_ns() < end;)
            bench_relax();
    while ((t = atomic_load_explicit(turn, memory_order_acquire)) != me)
        futex_wait(turn, t);
}

static void raw_give(atomic_uint *turn, unsigned other)
{
    atomic_store_explicit(turn, other, memory_order_release);
    futex_wake(turn);
}

static _Noreturn void raw_child(atomic_uint *turn, unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++) {
        raw_take(turn, 1);
        raw_give(turn, 0);
    }
    _exit(0);
}

static void raw_pingpong_body(void *arg, unsigned ops)
{
    atomic_uint *turn = arg;

    for (unsigned i = 0; i < ops; i++) {
        raw_take(turn, 0);
        raw_give(turn, 1);
    }
}

static void reap(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        bench_die("the other process", status);
}

/* The ping-pongs in one placement: rows of the same suffix compare. */
struct placement {
    enum bench_placement where;
    const char *keyed, *raw, *keyed_what, *raw_what;
    const char *raw_look, *raw_look_what;   /* NULL: no such row */
};

static const struct placement placements[] = {
    { BENCH_ANY_CPU, "keyed_pingpong", "raw_pingpong", "keyed mutex round trip between two processes",
      "raw futex round trip between two processes" },
    { BENCH_ONE_CPU, "keyed_pingpong_one_cpu", "raw_pingpong_one_cpu",
      "keyed mutex round trip, both processes on one CPU", "raw futex round trip, both processes on one CPU" },
    { BENCH_TWO_CPUS, "keyed_pingpong_two_cpus", "raw_pingpong_two_cpus",
      "keyed mutex round trip, each process on a CPU of its own",
      "raw futex round trip, each process on a CPU of its own", "raw_look_pingpong_two_cpus",
      "the raw row, each wait polling up to 16 us before it sleeps (as contended acquires look)" },
};

static pid_t start_child(const struct placement *pl)
{
    pid_t pid = fork();

    if (pid < 0)
        bench_die("fork", 0);
    if (!pid && !bench_place(pl->where, 1))
        bench_die("child: sched_setaffinity", 0);
    return pid;
}

/* The raw ping-pong of a placement; look: its waits poll first. */
static void raw_pingpong(const struct bench_options *o, unsigned rounds, atomic_uint *turn,
                         const struct placement *pl, bool look)
{
    pid_t pid;

    atomic_store(turn, 0);
    raw_look = look;
    if (!(pid = start_child(pl)))
        raw_child(turn, rounds * (o->reps + 1));
    bench_record(look ? pl->raw_look : pl->raw, look ? pl->raw_look_what : pl->raw_what,
                 bench_timed(o, rounds, raw_pingpong_body, turn), 2);
    reap(pid);
    raw_look = false;
}

static void pingpongs(const struct bench_options *o, unsigned rounds, atomic_uint *shared,
                      const struct placement *pl)
{
    pid_t pid;

    if (!bench_place(pl->where, 0))
        return;                         /* one CPU only: no row of its own */
    /* the child does as many rounds as the warm-up and every repetition */
    if (!(pid = start_child(pl)))
        keyed_child(rounds * (o->reps + 1));
    bench_record(pl->keyed, pl->keyed_what, bench_timed(o, rounds, keyed_body, &(struct keyed_loop){ 0, 1 }), 2);
    reap(pid);
    raw_pingpong(o, rounds, &shared[16], pl, false);
    if (pl->raw_look)
        raw_pingpong(o, rounds, &shared[16], pl, true);
    bench_place(BENCH_ANY_CPU, 0);
}

int main(int argc, char **argv)
{
    struct bench_options o = { false, 5, 1.0 };
    D3DKMT_CREATEKEYEDMUTEX c = { 0 };
    D3DKMT_DESTROYKEYEDMUTEX d;
    atomic_uint *shared;
    unsigned ops, rounds;
    NTSTATUS s;

    bench_parse_options(argc, argv,
                        "Times an uncontended AcquireKeyedMutex + ReleaseKeyedMutex pair next to a raw\n"
                        "futex lock/unlock pair on shared memory, and a keyed mutex handed back and forth\n"
                        "between two processes next to a raw futex ping-pong (on two CPUs also one whose\n"
                        "waits poll up to 16 us before they sleep), in the same run.\n", &o);
    ops = bench_scaled(&o, 1000000);
    rounds = bench_scaled(&o, 20000);
    shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        bench_die("mmap", 0);
    setenv("KMTSHIM_MINIPORT", "soft", 1);
    if ((s = D3DKMTCreateKeyedMutex(&c)))
        bench_die("D3DKMTCreateKeyedMutex", s);
    keyed_mutex = c.hKeyedMutex;
    global_handle = c.hSharedHandle;

    bench_record("keyed_uncontended", "AcquireKeyedMutex + ReleaseKeyedMutex, uncontended",
                 bench_timed(&o, ops, keyed_body, &(struct keyed_loop){ 0, 0 }), 1);
    atomic_store(&shared[0], 0);
    bench_record("raw_uncontended", "raw futex lock + unlock on a MAP_SHARED page",
                 bench_timed(&o, ops, raw_body, &shared[0]), 1);

    for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++)
        pingpongs(&o, rounds, shared, &placements[i]);

    d.hKeyedMutex = keyed_mutex;
    if ((s = D3DKMTDestroyKeyedMutex(&d)))
        bench_die("D3DKMTDestroyKeyedMutex", s);
    KmtProcessShutdown();
    if (KmtLiveObjectCount())
        bench_die("leak check", KmtLiveObjectCount());
    bench_print(&o);
    return 0;
}
