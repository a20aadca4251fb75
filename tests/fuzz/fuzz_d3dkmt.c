/*
 * The harness: an input is a program of D3DKMT calls.  Each step is one
 * byte choosing the call, then the bytes its arguments are drawn from
 * (fuzz_steps_*.c).  After the program, everything it may have left (sync
 * objects, devices with their cascade, adapter handles) is destroyed and
 * the library's live object count must be back where it was: a leak, a
 * crash, a sanitizer report or a hang is a finding.
 */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "fuzz_steps.h"

#define MAX_STEPS 64

LUID fuzz_luids[4];
unsigned fuzz_nluids;
int fuzz_eventfds[2] = { -1, -1 };

const fuzz_step fuzz_steps[] = {
    step_enum_adapters, step_open_adapter, step_close_adapter, step_query_adapter_info,
    step_query_video_memory, step_create_device, step_destroy_device, step_get_device_state,
    step_escape, step_create_allocation, step_destroy_allocation, step_lock, step_unlock,
    step_create_context, step_destroy_context, step_submit, step_render, step_create_sync,
    step_destroy_sync, step_signal_gpu, step_wait_gpu, step_signal_cpu, step_wait_cpu,
    /* the common creates again, so random programs build something to use */
    step_create_device, step_create_allocation, step_create_context, step_create_sync,
    step_open_adapter, step_shutdown, step_bad_desc,
    /* sharing (new steps go last: the seed corpus names steps by index) */
    step_share_objects, step_close_nt, step_query_resource, step_open_resource, step_open_nt_from_name,
    step_create_keyed_mutex, step_open_keyed_mutex, step_destroy_keyed_mutex, step_acquire_keyed_mutex,
    step_release_keyed_mutex, step_open_sync, step_escape_wine,
};
const unsigned fuzz_nsteps = sizeof(fuzz_steps) / sizeof(fuzz_steps[0]);

static unsigned baseline;
static struct fuzz_counts baseline_counts;
static bool found;

void fuzz_finding(const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "fuzz: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, " (%s)\n", fuzz_target.name);
    found = true;
}

void fuzz_count_add(struct fuzz_counts *c, const char *name, UINT64 value)
{
    if (c->n < FUZZ_MAX_COUNTS) {
        c->name[c->n] = name;
        c->value[c->n++] = value;
    }
}

/* The process's fds, pipes left out: the library makes none, and the
 * sanitizers' symbolizer (libFuzzer's NEW_FUNC lines) talks through two. */
static unsigned open_fds(void)
{
    char path[300], target[64];
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");
    unsigned n = 0;
    ssize_t len;

    while (d && (e = readdir(d))) {
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        len = readlink(path, target, sizeof(target) - 1);
        if (fuzz_target.kernel_fd && e->d_name[0] != '.' && fuzz_target.kernel_fd(atoi(e->d_name)))
            continue;
        n += len > 0 && strncmp(target, "pipe:", 5);
    }
    if (d)
        closedir(d);
    return n;
}

/* The fds before the first input, for a report of those that went. */
#define KEPT_FDS 64
static struct { int fd; char target[64]; } kept[KEPT_FDS];
static unsigned nkept;

/* What each fd is (with `keep`, remembered as the baseline's), for a report. */
static void print_fds(bool keep)
{
    char path[300], target[256];
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");
    ssize_t n;

    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        if (keep && nkept < KEPT_FDS) {
            kept[nkept].fd = atoi(e->d_name);
            snprintf(kept[nkept++].target, sizeof(kept[0].target), "%.63s", target);
        } else if (!keep) {
            fprintf(stderr, "fuzz:   fd %s -> %s\n", e->d_name, target);
        }
    }
    if (d)
        closedir(d);
    for (unsigned i = 0; !keep && i < nkept; i++) {
        snprintf(path, sizeof(path), "/proc/self/fd/%d", kept[i].fd);
        n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        if (strncmp(target, kept[i].target, sizeof(kept[0].target) - 1))
            fprintf(stderr, "fuzz:   fd %d was %s before the first input\n", kept[i].fd, kept[i].target);
    }
}

/* The broker's books: what the program shared dies with its last handle
 * (the broker hears of a closed NT handle a moment later: settled() waits). */
static void broker_counts(struct fuzz_counts *c)
{
    struct kmt_broker_stats st;

    if (kmt_broker_query_stats(&st))
        return;
    fuzz_count_add(c, "broker objects", st.objects);
    fuzz_count_add(c, "broker global handles", st.global_handles);
    fuzz_count_add(c, "broker NT shares", st.nt_shares);
    fuzz_count_add(c, "broker names", st.names);
    fuzz_count_add(c, "broker fds", st.fds);
}

/* The process's fds and the miniport's books, through an adapter handle
 * of the harness's own; the target's reset runs on it first. */
static void take_counts(struct fuzz_counts *c)
{
    D3DKMT_OPENADAPTERFROMLUID o = { fuzz_luids[0] };
    D3DKMT_CLOSEADAPTER close_it;
    uint64_t v;

    memset(c, 0, sizeof(*c));
    if (!D3DKMTOpenAdapterFromLuid(&o)) {
        if (fuzz_target.reset)
            fuzz_target.reset(o.hAdapter);
        if (fuzz_target.counts)
            fuzz_target.counts(o.hAdapter, c);
        close_it.hAdapter = o.hAdapter;
        D3DKMTCloseAdapter(&close_it);
    }
    for (int i = 0; i < 2; i++)
        while (read(fuzz_eventfds[i], &v, sizeof(v)) == sizeof(v))
            ;
    fuzz_count_add(c, "open fds", open_fds());
    broker_counts(c);
}

/* What the process makes once and keeps (the monitored-fence page pool;
 * the DRM miniport's fence watcher and its eventfd, started by an adapter's
 * first context; the broker connection of its first shared object): made
 * before the baseline, so only what an input leaves counts. */
static void warm_up(D3DKMT_HANDLE adapter)
{
    D3DKMT_CREATEDEVICE cd = { .hAdapter = adapter };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT ds;
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_DESTROYCONTEXT dc;
    D3DKMT_DESTROYDEVICE dd;

    if (D3DKMTCreateDevice(&cd))
        return;
    cv.hDevice = cd.hDevice;
    if (!D3DKMTCreateContextVirtual(&cv)) {
        dc.hContext = cv.hContext;
        D3DKMTDestroyContext(&dc);
    }
    cs.hDevice = cd.hDevice;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    for (int shared = 1; shared >= 0; shared--) {
        cs.Info.Flags.Shared = shared;
        if (!D3DKMTCreateSynchronizationObject2(&cs)) {
            ds.hSyncObject = cs.hSyncObject;
            D3DKMTDestroySynchronizationObject(&ds);
        }
    }
    dd.hDevice = cd.hDevice;
    D3DKMTDestroyDevice(&dd);
}

/* Starts the process's adapters (again, after a shutdown) and makes what
 * it keeps; false if there is no adapter. */
static bool start(void)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };

    if (D3DKMTEnumAdapters2(&e) || !e.NumAdapters)
        return false;
    fuzz_nluids = 0;
    for (ULONG i = 0; i < e.NumAdapters && i < 4; i++) {
        D3DKMT_CLOSEADAPTER c = { info[i].hAdapter };

        fuzz_luids[fuzz_nluids++] = info[i].AdapterLuid;
        if (fuzz_target.reset)           /* a fault the input armed outlives a shutdown */
            fuzz_target.reset(info[i].hAdapter);
        warm_up(info[i].hAdapter);
        D3DKMTCloseAdapter(&c);
    }
    return true;
}

void fuzz_init(void)
{
    static bool done;

    if (done)
        return;
    done = true;
    /* hung GPU work (an unsatisfied wait) ends in milliseconds, not seconds */
    setenv("KMTSHIM_TDR_DELAY", "20", 0);
    fuzz_share_private_broker();
    fuzz_target.setup();
    for (int i = 0; i < 2; i++)
        fuzz_eventfds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!start()) {
        fprintf(stderr, "fuzz: no adapter on target %s\n", fuzz_target.name);
        abort();
    }
    take_counts(&baseline_counts);
    print_fds(true);
    baseline = KmtLiveObjectCount();
}

/* Destroys what the program may have left, newest first, and closes the
 * NT handles it got. */
static void cleanup(struct fuzz_prog *p)
{
    struct fuzz_pool *pool = &p->pool;

    for (unsigned i = pool->count; i-- > 0;) {
        struct fuzz_object *o = &pool->objects[i];

        if (o->kind == FK_SYNC && !o->dead) {
            D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { o->handle };
            D3DKMTDestroySynchronizationObject(&d);
        } else if (o->kind == FK_KEYED_MUTEX && !o->dead) {
            D3DKMT_DESTROYKEYEDMUTEX d = { o->handle };
            D3DKMTDestroyKeyedMutex(&d);
        }
    }
    fuzz_share_close_all(p);
    for (unsigned i = pool->count; i-- > 0;) {
        struct fuzz_object *o = &pool->objects[i];

        if (o->kind == FK_DEVICE && !o->dead) {
            D3DKMT_DESTROYDEVICE d = { o->handle };
            D3DKMTDestroyDevice(&d);
        }
    }
    for (unsigned i = pool->count; i-- > 0;) {
        struct fuzz_object *o = &pool->objects[i];

        if (o->kind == FK_ADAPTER && !o->dead) {
            D3DKMT_CLOSEADAPTER c = { o->handle };
            D3DKMTCloseAdapter(&c);
        }
    }
}

/* False (with a line per difference unless quiet) if a count is not where it was. */
static bool same_counts(const struct fuzz_counts *now, bool quiet)
{
    bool same = now->n == baseline_counts.n;

    for (unsigned i = 0; i < now->n && i < baseline_counts.n; i++)
        if (now->value[i] != baseline_counts.value[i]) {
            if (!quiet)
                fprintf(stderr, "fuzz: %s: %llu after the input, %llu before (%s)\n", now->name[i],
                        (unsigned long long)now->value[i], (unsigned long long)baseline_counts.value[i],
                        fuzz_target.name);
            same = false;
        }
    return same;
}

/* Objects are reclaimed when their last user leaves, which may be a
 * scheduler or watcher thread finishing up, or the broker hearing of a
 * closed NT handle: give them five seconds (a loaded machine) before
 * calling it a leak.  Five seconds of the clock: a round of counts asks
 * the broker, which takes its time on a loaded machine too. */
static bool settled(struct fuzz_counts *counts, unsigned *live)
{
    struct timespec tick = { 0, 1000000 }, start, now;

    *live = KmtLiveObjectCount();
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (now = start; now.tv_sec - start.tv_sec < 5; clock_gettime(CLOCK_MONOTONIC, &now)) {
        if ((*live = KmtLiveObjectCount()) == baseline) {
            take_counts(counts);
            if (same_counts(counts, true))
                return true;
        }
        nanosleep(&tick, NULL);
    }
    take_counts(counts);
    return false;
}

bool fuzz_run_one(const uint8_t *data, size_t size)
{
    static struct fuzz_prog prog;
    struct fuzz_counts counts;
    unsigned live;

    fuzz_init();
    memset(&prog.pool, 0, sizeof(prog.pool));
    memset(&prog.shares, 0, sizeof(prog.shares));
    prog.restarted = false;
    prog.gpu_waited = false;
    found = false;
    prog.in = (struct fuzz_input){ data, size, 0 };
    fuzz_arena_reset();
    for (int step = 0; step < MAX_STEPS && !fuzz_done(&prog.in); step++)
        fuzz_steps[fuzz_u8(&prog.in) % fuzz_nsteps](&prog);
    if (fuzz_target.disarm)
        fuzz_target.disarm();
    cleanup(&prog);
    fuzz_peer_finish();                 /* a failed peer is a finding */
    if (prog.restarted && !start())
        fprintf(stderr, "fuzz: no adapter after a restart (%s)\n", fuzz_target.name);
    if (settled(&counts, &live))
        return !found;
    if (live != baseline)
        fprintf(stderr, "fuzz: %u live objects after the input, %u before (%s)\n", live, baseline,
                fuzz_target.name);
    if (!same_counts(&counts, false))
        print_fds(false);
    baseline = live;                    /* one report per leak */
    baseline_counts = counts;
    return false;
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_run_one(data, size))
        abort();
    return 0;
}
