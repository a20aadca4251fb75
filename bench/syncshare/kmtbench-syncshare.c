/*
 * kmtbench-syncshare: shared monitored fences across processes on the
 * software adapter.  A ping-pong of two shared fences between this process
 * and a second one (each side signals from the CPU what the other waits
 * for), next to the same ping-pong on raw shared futexes between two
 * processes, measured in the same run: the figure is one round trip, two
 * signal-to-wake latencies.  Also the calls that must stay in the process:
 * a wait already satisfied and a signal nobody waits for, on a shared fence
 * and on a private one.
 *
 * The second process is this program again, started with
 * KMTBENCH_SYNCSHARE_PEER in its environment (never from the command line).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/bench_util.h"
#include "kmtshim/d3dkmthk.h"

#define PEER_ENV "KMTBENCH_SYNCSHARE_PEER"

extern char **environ;

static D3DKMT_HANDLE device;

/* ---- the raw baseline: two futex words in shared memory ----------------------------- */

struct raw_pair {
    _Atomic uint32_t ping, pong;
};

static void futex_wait(_Atomic uint32_t *w, uint32_t v)
{
    syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* How long the raw look rows poll before they sleep: the longest look
 * the library's shared-fence waits make (DXGK_LOOK_MAX_NS, dxgkrnl/look.h). */
#define RAW_LOOK_NS 16000.0

static bool raw_look;                    /* this run's raw waits poll first */

/* Waits until *w reaches v (they only grow). */
static void wait_reach(_Atomic uint32_t *w, uint32_t v)
{
    uint32_t cur;

    if (raw_look)
        for (double end = bench_now_ns() + RAW_LOOK_NS; atomic_load(w) < v && bench_now_ns() < end;)
            bench_relax();
    while ((cur = atomic_load(w)) < v)
        futex_wait(w, cur);
}

struct raw_run {
    struct raw_pair *pair;
    uint32_t next;
};

static void raw_body(void *arg, unsigned ops)
{
    struct raw_run *r = arg;

    for (unsigned i = 0; i < ops; i++) {
        uint32_t v = ++r->next;

        atomic_store(&r->pair->ping, v);
        futex_wake(&r->pair->ping);
        wait_reach(&r->pair->pong, v);
    }
}

/* The ping-pongs of one placement: rows of the same suffix compare. */
struct placement {
    enum bench_placement where;
    const char *raw, *fence, *raw_what, *fence_what;
    const char *raw_look, *raw_look_what;   /* NULL: no such row */
};

static const struct placement placements[] = {
    { BENCH_ANY_CPU, "raw_futex_pingpong", "fence_pingpong", "two processes, shared futexes: one round trip",
      "two processes, shared fences, CPU signal/wait: one round trip" },
    { BENCH_ONE_CPU, "raw_futex_pingpong_one_cpu", "fence_pingpong_one_cpu",
      "the same, both processes on one CPU", "the same, both processes on one CPU" },
    { BENCH_TWO_CPUS, "raw_futex_pingpong_two_cpus", "fence_pingpong_two_cpus",
      "the same, each process on a CPU of its own", "the same, each process on a CPU of its own",
      "raw_futex_look_pingpong_two_cpus",
      "the raw row, each wait polling up to 16 us before it sleeps (as fence waits look)" },
};

static void raw_pingpong(const struct bench_options *o, unsigned ops, const struct placement *pl, bool look)
{
    struct raw_pair *pair = mmap(NULL, sizeof(*pair), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    unsigned total = ops * (o->reps + 1);
    struct raw_run r = { pair, 0 };
    pid_t pid;

    if (pair == MAP_FAILED)
        bench_die("mmap", 0);
    raw_look = look;
    /* before the library starts: the child is a plain process */
    if (!(pid = fork())) {
        if (!bench_place(pl->where, 1))
            _exit(1);
        for (uint32_t v = 1; v <= total; v++) {
            wait_reach(&pair->ping, v);
            atomic_store(&pair->pong, v);
            futex_wake(&pair->pong);
        }
        _exit(0);
    }
    if (pid < 0)
        bench_die("fork", 0);
    bench_record(look ? pl->raw_look : pl->raw, look ? pl->raw_look_what : pl->raw_what,
                 bench_timed(o, ops, raw_body, &r), 2);
    waitpid(pid, NULL, 0);
    raw_look = false;
    munmap(pair, sizeof(*pair));
}

/* ---- shared fences ---------------------------------------------------------------------- */

static D3DKMT_HANDLE fence_create(bool shared, D3DKMT_HANDLE *global)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 c = { 0 };
    NTSTATUS status;

    c.hDevice = device;
    c.Info.Type = D3DDDI_MONITORED_FENCE;
    c.Info.Flags.Shared = shared;
    if ((status = D3DKMTCreateSynchronizationObject2(&c)))
        bench_die("D3DKMTCreateSynchronizationObject2", status);
    if (global)
        *global = c.Info.SharedHandle;
    return c.hSyncObject;
}

static D3DKMT_HANDLE fence_open(D3DKMT_HANDLE global)
{
    D3DKMT_OPENSYNCHRONIZATIONOBJECT o = { 0 };
    NTSTATUS status;

    o.hSharedHandle = global;
    if ((status = D3DKMTOpenSynchronizationObject(&o)))
        bench_die("D3DKMTOpenSynchronizationObject", status);
    return o.hSyncObject;
}

/* The second process: answers each ping with a pong, `total` times. */
static int peer_main(const char *spec)
{
    unsigned ping_global, pong_global, total;
    D3DKMT_HANDLE ping, pong;
    int cpu;

    /* the CPU comes from the parent, which knew them all before it pinned
     * itself (and so this process) */
    if (sscanf(spec, "%x %x %u %d", &ping_global, &pong_global, &total, &cpu) != 4 || !bench_pin(cpu))
        return 2;
    device = bench_open_soft_device();
    ping = fence_open(ping_global);
    pong = fence_open(pong_global);
    for (UINT64 v = 1; v <= total; v++) {
        bench_cpu_wait(device, ping, v);
        bench_cpu_signal(device, pong, v);
    }
    KmtProcessShutdown();
    return 0;
}

struct fence_run {
    D3DKMT_HANDLE ping, pong;
    UINT64 next;
};

static void fence_pingpong_body(void *arg, unsigned ops)
{
    struct fence_run *r = arg;

    for (unsigned i = 0; i < ops; i++) {
        UINT64 v = ++r->next;

        bench_cpu_signal(device, r->ping, v);
        bench_cpu_wait(device, r->pong, v);
    }
}

static void fence_pingpong(const struct bench_options *o, unsigned ops, const struct placement *pl)
{
    struct fence_run r = { 0 };
    D3DKMT_HANDLE ping_global, pong_global;
    char self[4096], env[128];
    char *argv[] = { self, NULL };
    char **envp;
    size_t n = 0;
    ssize_t len;
    pid_t pid;
    int status;

    r.ping = fence_create(true, &ping_global);
    r.pong = fence_create(true, &pong_global);
    snprintf(env, sizeof(env), PEER_ENV "=%x %x %u %d", ping_global, pong_global, ops * (o->reps + 1),
             bench_place_cpu(pl->where, 1));
    while (environ[n])
        n++;
    if (!(envp = calloc(n + 2, sizeof(*envp))))
        bench_die("calloc", 0);
    memcpy(envp, environ, n * sizeof(*envp));
    envp[n] = env;
    if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
        bench_die("readlink", 0);
    self[len] = 0;
    if (posix_spawn(&pid, self, NULL, NULL, argv, envp))
        bench_die("posix_spawn", 0);
    free(envp);
    bench_record(pl->fence, pl->fence_what, bench_timed(o, ops, fence_pingpong_body, &r), 2);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        bench_die("the peer process", status);
}

struct one_fence {
    D3DKMT_HANDLE fence;
    UINT64 next;
};

static void satisfied_wait_body(void *arg, unsigned ops)
{
    struct one_fence *f = arg;

    for (unsigned i = 0; i < ops; i++)
        bench_cpu_wait(device, f->fence, 1);
}

static void unwaited_signal_body(void *arg, unsigned ops)
{
    struct one_fence *f = arg;

    for (unsigned i = 0; i < ops; i++)
        bench_cpu_signal(device, f->fence, ++f->next);
}

static void in_process(const struct bench_options *o, unsigned ops, bool shared)
{
    struct one_fence f = { fence_create(shared, NULL), 1 };

    bench_cpu_signal(device, f.fence, 1);
    bench_record(shared ? "shared_satisfied_wait" : "private_satisfied_wait",
                 shared ? "WaitFromCpu already satisfied, shared fence" : "WaitFromCpu already satisfied, private fence",
                 bench_timed(o, ops, satisfied_wait_body, &f), 1);
    bench_record(shared ? "shared_unwaited_signal" : "private_unwaited_signal",
                 shared ? "SignalFromCpu nobody waits for, shared fence" : "SignalFromCpu nobody waits for, private fence",
                 bench_timed(o, ops, unwaited_signal_body, &f), 1);
}

/* The broker leaves its socket and lock behind when it exits. */
static void remove_broker_dir(const char *dir)
{
    static const char *const files[] = { "socket", "lock" };
    char path[128];

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

int main(int argc, char **argv)
{
    struct bench_options o = { false, 5, 1.0 };
    const char *peer = getenv(PEER_ENV);
    char dir[] = "/tmp/kmtbench-syncshare-XXXXXX";
    unsigned pingpongs, calls;

    if (peer)
        return peer_main(peer);
    bench_parse_options(argc, argv,
                        "Times a ping-pong of two shared monitored fences between two processes (CPU\n"
                        "signal and wait) next to the same ping-pong on raw shared futexes, in the same\n"
                        "run, and a satisfied wait and an unwaited signal on a shared and a private\n"
                        "fence.  Runs a broker of its own (KMTSHIM_BROKER_DIR in a temporary directory;\n"
                        "KMTSHIM_BROKER names the daemon when it is not installed).\n",
                        &o);
    pingpongs = bench_scaled(&o, 5000);
    calls = bench_scaled(&o, 200000);
    if (!mkdtemp(dir))
        bench_die("mkdtemp", 0);
    setenv("KMTSHIM_BROKER_DIR", dir, 1);
    for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++) {
        if (!bench_place(placements[i].where, 0))
            continue;                   /* one CPU only: no row of its own */
        /* the raw child only makes system calls and _exit()s, so a fork
         * after the library started its threads is fine too */
        raw_pingpong(&o, pingpongs, &placements[i], false);
        if (placements[i].raw_look)
            raw_pingpong(&o, pingpongs, &placements[i], true);
        if (!device)
            device = bench_open_soft_device();
        fence_pingpong(&o, pingpongs, &placements[i]);
        bench_place(BENCH_ANY_CPU, 0);
    }
    in_process(&o, calls, true);
    in_process(&o, calls, false);
    KmtProcessShutdown();
    if (KmtLiveObjectCount())
        bench_die("leak check", KmtLiveObjectCount());
    remove_broker_dir(dir);
    bench_print(&o);
    return 0;
}
