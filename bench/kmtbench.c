/*
 * kmtbench: what kmtshim's hot paths cost, next to the system calls they
 * wrap on the software adapter.
 *
 *   handle lookup          hmgr_lookup + kmt_object_put, 1K and 1M live handles
 *   create+destroy         D3DKMTCreateAllocation + D3DKMTDestroyAllocation of a
 *                          4 KiB driver-private allocation, 1 and 2 threads
 *   lock+unlock            D3DKMTLock2 + D3DKMTUnlock2 (maps and unmaps), and
 *                          the same on an allocation already locked (no mapping)
 *   raw                    memfd_create+ftruncate+close, mmap+munmap of 4 KiB
 *
 * Every figure is the median of several timed repetitions after a warm-up,
 * measured with CLOCK_MONOTONIC.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtsoft.h"
#include "hmgr/hmgr.h"

#define ALLOC_SIZE 4096u
#define MAX_REPS 99

struct options {
    bool json;
    unsigned reps;
    double scale;                        /* fraction of the default op counts */
};

struct result {
    const char *name;
    const char *what;
    double ns_per_op;                    /* per operation (per pair), per thread */
    double ops_per_s;                    /* all threads together */
    unsigned threads;
};

static struct result results[32];
static unsigned nresults;

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void record(const char *name, const char *what, double ns_per_op, unsigned threads)
{
    struct result *r = &results[nresults++];

    r->name = name;
    r->what = what;
    r->ns_per_op = ns_per_op;
    r->threads = threads;
    r->ops_per_s = threads * 1e9 / ns_per_op;
}

static void die(const char *what, long status)
{
    fprintf(stderr, "kmtbench: %s failed (0x%08lx)\n", what, (unsigned long)status);
    exit(1);
}

static unsigned scaled(const struct options *o, unsigned n)
{
    unsigned v = (unsigned)(n * o->scale);
    return v ? v : 1;
}

/* ---- handle lookups ---------------------------------------------------------------------- */

static void noop_release(struct kmt_object *obj)
{
    (void)obj;
}

static void bench_lookup(const struct options *o, unsigned live, const char *name)
{
    struct hmgr_table *t = malloc(sizeof(*t));
    struct kmt_object *objs = calloc(live, sizeof(*objs));
    D3DKMT_HANDLE *handles = malloc(live * sizeof(*handles));
    unsigned nops = scaled(o, 4000000), *order = malloc(nops * sizeof(*order)), seed = 1;
    double times[MAX_REPS];
    volatile uintptr_t sink = 0;

    if (!t || !objs || !handles || !order)
        die("memory", 0);
    hmgr_init(t, HMGR_INSTANCE_LOCAL);
    for (unsigned i = 0; i < live; i++) {
        kmt_object_init(&objs[i], HMGR_TYPE_ALLOCATION, noop_release);
        if (!(handles[i] = hmgr_alloc(t)))
            die("hmgr_alloc", 0);
        hmgr_publish(t, handles[i], &objs[i]);
    }
    /* random order: with 1M handles most lookups miss the caches, as a
     * program touching many allocations would */
    for (unsigned i = 0; i < nops; i++) {
        seed = seed * 1103515245u + 12345u;
        order[i] = (unsigned)(((uint64_t)seed * live) >> 32);
    }
    for (unsigned r = 0; r <= o->reps; r++) {       /* pass 0 warms up */
        double t0 = now_ns();
        for (unsigned i = 0; i < nops; i++) {
            struct kmt_object *obj = hmgr_lookup(t, handles[order[i]], HMGR_TYPE_ALLOCATION);
            sink += (uintptr_t)obj;
            kmt_object_put(obj);
        }
        if (r)
            times[r - 1] = (now_ns() - t0) / nops;
    }
    record(name, "hmgr_lookup + put, random order", median(times, o->reps), 1);
    for (unsigned i = 0; i < live; i++)
        hmgr_remove(t, handles[i], HMGR_TYPE_ANY);
    hmgr_destroy(t);
    free(t);
    free(objs);
    free(handles);
    free(order);
}

/* ---- the software adapter ---------------------------------------------------------------- */

static D3DKMT_HANDLE device;

static void open_soft_device(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    NTSTATUS s;

    setenv("KMTSHIM_MINIPORT", "soft", 1);
    if ((s = D3DKMTEnumAdapters2(&e)) || !e.NumAdapters)
        die("D3DKMTEnumAdapters2", s);
    cd.hAdapter = info[0].hAdapter;
    if ((s = D3DKMTCreateDevice(&cd)))
        die("D3DKMTCreateDevice", s);
    device = cd.hDevice;
}

static D3DKMT_HANDLE create_alloc(void)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION,
                                      ALLOC_SIZE, 0, 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    if ((s = D3DKMTCreateAllocation(&ca)))
        die("D3DKMTCreateAllocation", s);
    return info.hAllocation;
}

static void destroy_alloc(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYALLOCATION d = { 0 };
    NTSTATUS s;

    d.hDevice = device;
    d.phAllocationList = &h;
    d.AllocationCount = 1;
    if ((s = D3DKMTDestroyAllocation(&d)))
        die("D3DKMTDestroyAllocation", s);
}

struct pair_worker {
    unsigned pairs;
    pthread_barrier_t *barrier;
};

static void *pair_loop(void *p)
{
    struct pair_worker *w = p;

    pthread_barrier_wait(w->barrier);
    for (unsigned i = 0; i < w->pairs; i++)
        destroy_alloc(create_alloc());
    pthread_barrier_wait(w->barrier);
    return NULL;
}

/* Wall time of `threads` threads each doing `pairs` create+destroy pairs,
 * in ns per pair of one thread. */
static double time_pairs(unsigned threads, unsigned pairs)
{
    pthread_barrier_t barrier;
    struct pair_worker w = { pairs, &barrier };
    pthread_t th[8];
    double t0, t1;

    pthread_barrier_init(&barrier, NULL, threads + 1);
    for (unsigned i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, pair_loop, &w);
    pthread_barrier_wait(&barrier);
    t0 = now_ns();
    pthread_barrier_wait(&barrier);
    t1 = now_ns();
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    return (t1 - t0) / pairs;
}

static void bench_create_destroy(const struct options *o, unsigned threads, const char *name)
{
    unsigned pairs = scaled(o, 20000);
    double times[MAX_REPS];

    time_pairs(threads, pairs / 10 + 1);            /* warm-up */
    for (unsigned r = 0; r < o->reps; r++)
        times[r] = time_pairs(threads, pairs);
    record(name, "CreateAllocation + DestroyAllocation, 4 KiB", median(times, o->reps), threads);
}

static void lock_unlock(D3DKMT_HANDLE h)
{
    D3DKMT_LOCK2 l = { 0 };
    D3DKMT_UNLOCK2 u = { device, h };
    NTSTATUS s;

    l.hDevice = device;
    l.hAllocation = h;
    if ((s = D3DKMTLock2(&l)))
        die("D3DKMTLock2", s);
    if ((s = D3DKMTUnlock2(&u)))
        die("D3DKMTUnlock2", s);
}

static void bench_lock(const struct options *o, bool held, const char *name, const char *what)
{
    D3DKMT_HANDLE h = create_alloc();
    unsigned n = scaled(o, held ? 1000000 : 100000);
    double times[MAX_REPS];

    /* an outer lock keeps the mapping: the pair then costs no system call */
    if (held) {
        D3DKMT_LOCK2 l = { 0 };
        l.hDevice = device;
        l.hAllocation = h;
        if (D3DKMTLock2(&l))
            die("D3DKMTLock2", 0);
    }
    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = now_ns();
        for (unsigned i = 0; i < n; i++)
            lock_unlock(h);
        if (r)
            times[r - 1] = (now_ns() - t0) / n;
    }
    record(name, what, median(times, o->reps), 1);
    destroy_alloc(h);                              /* also drops the outer lock */
}

/* ---- what the pairs wrap -------------------------------------------------------------------- */

static void bench_memfd(const struct options *o)
{
    unsigned n = scaled(o, 20000);
    double times[MAX_REPS];

    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = now_ns();
        for (unsigned i = 0; i < n; i++) {
            int fd = memfd_create("kmtbench", MFD_CLOEXEC);
            if (fd < 0 || ftruncate(fd, ALLOC_SIZE))
                die("memfd_create/ftruncate", fd);
            close(fd);
        }
        if (r)
            times[r - 1] = (now_ns() - t0) / n;
    }
    record("raw_memfd", "memfd_create + ftruncate + close, 4 KiB", median(times, o->reps), 1);
}

static void bench_mmap(const struct options *o)
{
    unsigned n = scaled(o, 100000);
    double times[MAX_REPS];
    int fd = memfd_create("kmtbench", MFD_CLOEXEC);

    if (fd < 0 || ftruncate(fd, ALLOC_SIZE))
        die("memfd_create/ftruncate", fd);
    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = now_ns();
        for (unsigned i = 0; i < n; i++) {
            void *p = mmap(NULL, ALLOC_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED)
                die("mmap", 0);
            munmap(p, ALLOC_SIZE);
        }
        if (r)
            times[r - 1] = (now_ns() - t0) / n;
    }
    close(fd);
    record("raw_mmap", "mmap + munmap of a 4 KiB memfd", median(times, o->reps), 1);
}

/* ---- output ---------------------------------------------------------------------------------- */

static void print_table(const struct options *o)
{
    printf("kmtshim %s, %ld CPUs, median of %u runs\n\n", KmtGetVersion(), sysconf(_SC_NPROCESSORS_ONLN),
           o->reps);
    printf("%-22s %7s %12s %14s  %s\n", "benchmark", "threads", "ns/op", "ops/s (all)", "what");
    for (unsigned i = 0; i < nresults; i++)
        printf("%-22s %7u %12.1f %14.0f  %s\n", results[i].name, results[i].threads,
               results[i].ns_per_op, results[i].ops_per_s, results[i].what);
}

static void print_json(const struct options *o)
{
    printf("{\n  \"version\": \"%s\",\n  \"cpus\": %ld,\n  \"repetitions\": %u,\n  \"results\": [\n",
           KmtGetVersion(), sysconf(_SC_NPROCESSORS_ONLN), o->reps);
    for (unsigned i = 0; i < nresults; i++)
        printf("    {\"name\": \"%s\", \"threads\": %u, \"ns_per_op\": %.1f, \"ops_per_s\": %.0f, "
               "\"what\": \"%s\"}%s\n", results[i].name, results[i].threads, results[i].ns_per_op,
               results[i].ops_per_s, results[i].what, i + 1 < nresults ? "," : "");
    printf("  ]\n}\n");
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kmtbench [--json] [--reps N] [--quick]\n"
            "Times kmtshim's handle lookups, allocation create/destroy and lock/unlock on the\n"
            "software adapter, and the system calls those wrap.\n"
            "  --json      machine-readable output\n"
            "  --reps N    timed repetitions per figure (default 7, at most %d); the median is shown\n"
            "  --quick     a tenth of the operations (a smoke run)\n"
            "  --help      this text\n", MAX_REPS);
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "reps", required_argument, NULL, 'r' },
        { "quick", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, "jr:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': o->json = true; break;
        case 'r': o->reps = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'q': o->scale = 0.1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind < argc || !o->reps || o->reps > MAX_REPS) {
        usage(stderr);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    struct options o = { false, 7, 1.0 };

    parse(argc, argv, &o);
    bench_lookup(&o, 1000, "lookup_1k");
    bench_lookup(&o, 1000000, "lookup_1m");
    open_soft_device();
    bench_create_destroy(&o, 1, "create_destroy_1t");
    bench_create_destroy(&o, 2, "create_destroy_2t");
    bench_lock(&o, false, "lock2_unlock2", "Lock2 + Unlock2, 4 KiB (maps, unmaps)");
    bench_lock(&o, true, "lock2_unlock2_held", "Lock2 + Unlock2 under an outer lock (no mapping)");
    bench_memfd(&o);
    bench_mmap(&o);
    KmtProcessShutdown();
    if (KmtLiveObjectCount())
        die("leak check", KmtLiveObjectCount());
    if (o.json)
        print_json(&o);
    else
        print_table(&o);
    return 0;
}
