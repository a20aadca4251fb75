/*
 * kmtbench: what kmtshim's hot paths cost, next to the system calls they
 * wrap on the software adapter.
 *
 *   handle lookup          hmgr_lookup + kmt_object_put, 1K and 1M live handles
 *   device pair            D3DKMTCreateDevice + D3DKMTDestroyDevice on the
 *                          software adapter
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtsoft.h"
#include "hmgr/hmgr.h"
#include "common/bench_util.h"

#define ALLOC_SIZE 4096u

/* ---- handle lookups ---------------------------------------------------------------------- */

static void noop_release(struct kmt_object *obj)
{
    (void)obj;
}

static void bench_lookup(const struct bench_options *o, unsigned live, const char *name)
{
    struct hmgr_table *t = malloc(sizeof(*t));
    struct kmt_object *objs = calloc(live, sizeof(*objs));
    D3DKMT_HANDLE *handles = malloc(live * sizeof(*handles));
    unsigned nops = bench_scaled(o, 4000000), *order = malloc(nops * sizeof(*order)), seed = 1;
    double times[BENCH_MAX_REPS];
    volatile uintptr_t sink = 0;

    if (!t || !objs || !handles || !order)
        bench_die("memory", 0);
    hmgr_init(t, HMGR_INSTANCE_LOCAL);
    for (unsigned i = 0; i < live; i++) {
        kmt_object_init(&objs[i], HMGR_TYPE_ALLOCATION, noop_release);
        if (!(handles[i] = hmgr_alloc(t)))
            bench_die("hmgr_alloc", 0);
        hmgr_publish(t, handles[i], &objs[i]);
    }
    /* random order: with 1M handles most lookups miss the caches, as a
     * program touching many allocations would */
    for (unsigned i = 0; i < nops; i++) {
        seed = seed * 1103515245u + 12345u;
        order[i] = (unsigned)(((uint64_t)seed * live) >> 32);
    }
    for (unsigned r = 0; r <= o->reps; r++) {       /* pass 0 warms up */
        double t0 = bench_now_ns();
        for (unsigned i = 0; i < nops; i++) {
            struct kmt_object *obj = hmgr_lookup(t, handles[order[i]], HMGR_TYPE_ALLOCATION);
            sink += (uintptr_t)obj;
            kmt_object_put(obj);
        }
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / nops;
    }
    bench_record(name, "hmgr_lookup + put, random order", bench_median(times, o->reps), 1);
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
        bench_die("D3DKMTCreateAllocation", s);
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
        bench_die("D3DKMTDestroyAllocation", s);
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
    t0 = bench_now_ns();
    pthread_barrier_wait(&barrier);
    t1 = bench_now_ns();
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    return (t1 - t0) / pairs;
}

static void bench_create_destroy(const struct bench_options *o, unsigned threads, const char *name)
{
    unsigned pairs = bench_scaled(o, 20000);
    double times[BENCH_MAX_REPS];

    time_pairs(threads, pairs / 10 + 1);            /* warm-up */
    for (unsigned r = 0; r < o->reps; r++)
        times[r] = time_pairs(threads, pairs);
    bench_record(name, "CreateAllocation + DestroyAllocation, 4 KiB", bench_median(times, o->reps), threads);
}

/* The adapter of `device`: the software adapter, opened once more. */
static D3DKMT_HANDLE soft_adapter(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    NTSTATUS s;

    if ((s = D3DKMTEnumAdapters2(&e)) || !e.NumAdapters)
        bench_die("D3DKMTEnumAdapters2", s);
    return info[0].hAdapter;
}

static void bench_device_pair(const struct bench_options *o)
{
    D3DKMT_HANDLE adapter = soft_adapter();
    D3DKMT_CLOSEADAPTER close = { adapter };
    unsigned n = bench_scaled(o, 200000);
    double times[BENCH_MAX_REPS];

    for (unsigned r = 0; r <= o->reps; r++) {       /* pass 0 warms up */
        double t0 = bench_now_ns();
        for (unsigned i = 0; i < n; i++) {
            D3DKMT_CREATEDEVICE cd = { .hAdapter = adapter };
            D3DKMT_DESTROYDEVICE dd = { 0 };
            NTSTATUS s;

            if ((s = D3DKMTCreateDevice(&cd)))
                bench_die("D3DKMTCreateDevice", s);
            dd.hDevice = cd.hDevice;
            if ((s = D3DKMTDestroyDevice(&dd)))
                bench_die("D3DKMTDestroyDevice", s);
        }
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / n;
    }
    bench_record("device_pair", "CreateDevice + DestroyDevice, software adapter", bench_median(times, o->reps), 1);
    D3DKMTCloseAdapter(&close);
}

static void lock_unlock(D3DKMT_HANDLE h)
{
    D3DKMT_LOCK2 l = { 0 };
    D3DKMT_UNLOCK2 u = { device, h };
    NTSTATUS s;

    l.hDevice = device;
    l.hAllocation = h;
    if ((s = D3DKMTLock2(&l)))
        bench_die("D3DKMTLock2", s);
    if ((s = D3DKMTUnlock2(&u)))
        bench_die("D3DKMTUnlock2", s);
}

static void bench_lock(const struct bench_options *o, bool held, const char *name, const char *what)
{
    D3DKMT_HANDLE h = create_alloc();
    unsigned n = bench_scaled(o, held ? 1000000 : 100000);
    double times[BENCH_MAX_REPS];

    /* an outer lock keeps the mapping: the pair then costs no system call */
    if (held) {
        D3DKMT_LOCK2 l = { 0 };
        l.hDevice = device;
        l.hAllocation = h;
        if (D3DKMTLock2(&l))
            bench_die("D3DKMTLock2", 0);
    }
    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = bench_now_ns();
        for (unsigned i = 0; i < n; i++)
            lock_unlock(h);
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / n;
    }
    bench_record(name, what, bench_median(times, o->reps), 1);
    destroy_alloc(h);                              /* also drops the outer lock */
}

/* ---- what the pairs wrap -------------------------------------------------------------------- */

static void bench_memfd(const struct bench_options *o)
{
    unsigned n = bench_scaled(o, 20000);
    double times[BENCH_MAX_REPS];

    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = bench_now_ns();
        for (unsigned i = 0; i < n; i++) {
            int fd = memfd_create("kmtbench", MFD_CLOEXEC);
            if (fd < 0 || ftruncate(fd, ALLOC_SIZE))
                bench_die("memfd_create/ftruncate", fd);
            close(fd);
        }
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / n;
    }
    bench_record("raw_memfd", "memfd_create + ftruncate + close, 4 KiB", bench_median(times, o->reps), 1);
}

static void bench_mmap(const struct bench_options *o)
{
    unsigned n = bench_scaled(o, 100000);
    double times[BENCH_MAX_REPS];
    int fd = memfd_create("kmtbench", MFD_CLOEXEC);

    if (fd < 0 || ftruncate(fd, ALLOC_SIZE))
        bench_die("memfd_create/ftruncate", fd);
    for (unsigned r = 0; r <= o->reps; r++) {
        double t0 = bench_now_ns();
        for (unsigned i = 0; i < n; i++) {
            void *p = mmap(NULL, ALLOC_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED)
                bench_die("mmap", 0);
            munmap(p, ALLOC_SIZE);
        }
        if (r)
            times[r - 1] = (bench_now_ns() - t0) / n;
    }
    close(fd);
    bench_record("raw_mmap", "mmap + munmap of a 4 KiB memfd", bench_median(times, o->reps), 1);
}

int main(int argc, char **argv)
{
    struct bench_options o = { false, 7, 1.0 };

    bench_parse_options(argc, argv,
                        "Times kmtshim's handle lookups, allocation create/destroy and lock/unlock on the\n"
                        "software adapter, and the system calls those wrap.\n", &o);
    bench_lookup(&o, 1000, "lookup_1k");
    bench_lookup(&o, 1000000, "lookup_1m");
    device = bench_open_soft_device();
    bench_device_pair(&o);
    bench_create_destroy(&o, 1, "create_destroy_1t");
    bench_create_destroy(&o, 2, "create_destroy_2t");
    bench_lock(&o, false, "lock2_unlock2", "Lock2 + Unlock2, 4 KiB (maps, unmaps)");
    bench_lock(&o, true, "lock2_unlock2_held", "Lock2 + Unlock2 under an outer lock (no mapping)");
    bench_memfd(&o);
    bench_mmap(&o);
    KmtProcessShutdown();
    if (KmtLiveObjectCount())
        bench_die("leak check", KmtLiveObjectCount());
    bench_print(&o);
    return 0;
}
