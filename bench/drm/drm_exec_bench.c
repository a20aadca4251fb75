/*
 * Monitored fences and submission through the DRM miniport against the raw
 * kernel calls they stand for, on the same driver, in the same run:
 *
 *   signal+wait       SignalSynchronizationObjectFromCpu + WaitFor...FromCpu
 *                     (already satisfied) of a monitored fence, one thread,
 *                     vs. SYNCOBJ_TIMELINE_SIGNAL + SYNCOBJ_TIMELINE_WAIT of a
 *                     timeline syncobj; a third column with the fence's
 *                     syncobj handed out (QUERY_FENCE: the watcher follows it)
 *   ping-pong         two threads, two fences: signal the other's, wait for
 *                     one's own (blocking); raw: the same with two syncobjs
 *                     and blocking TIMELINE_WAITs; per round trip
 *   submit+fence      (virgl hosts) SubmitCommand of a one-NOP virgl stream +
 *                     SignalSynchronizationObjectFromGpu + WaitFor...FromCpu,
 *                     vs. one VIRTGPU_EXECBUFFER (64-byte form) with an
 *                     out-syncobj point + SYNCOBJ_TIMELINE_WAIT; a third
 *                     column where the submission's own out-syncobj signals
 *                     the fence (KMT_DRM_SUBMIT.Signals); and, below the
 *                     table, the raw submission with its completion seen by
 *                     a second thread (a SYNCOBJ_EVENTFD registration, then an
 *                     eventfd to the submitter): what asynchronous completion
 *                     costs by itself
 *
 * Below the table (virgl hosts): the same submission naming a 4 KiB
 * allocation (KMT_DRM_SUBMIT.BoHandles), a plain one against a copy-backed
 * existing-sysmem one: what refreshing the copy before the submission and
 * writing the GPU's changes back after it costs.
 *
 * Blocks of each kind alternate (the order rotates every round); the table
 * gives the median block and the median of the per-round ratios.
 *
 *   drm_exec_bench [rounds] [iterations per fence block] [per submit block]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <virtgpu_drm.h>

#include "config.h"
#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtdrm.h"
#include "common/bench_util.h"
#include "drm_targets.h"

#define MAX_ROUNDS 64

struct target {
    D3DKMT_HANDLE adapter, device;
    KMT_DRM_UMD_PRIVATE umd;
    bool virgl;
};

/* The kernel's 64-byte execbuffer and its syncobj entries. */
struct bench_execbuffer {
    UINT32 flags, size;
    UINT64 command, bo_handles;
    UINT32 num_bo_handles;
    INT fence_fd;
    UINT32 ring_idx, syncobj_stride, num_in_syncobjs, num_out_syncobjs;
    UINT64 in_syncobjs, out_syncobjs;
};
struct bench_syncobj_point {
    UINT32 handle, flags;
    UINT64 point;
};
#define BENCH_IOCTL_VIRTGPU_EXECBUFFER \
    DRM_IOWR(DRM_COMMAND_BASE + DRM_VIRTGPU_EXECBUFFER, struct bench_execbuffer)

static unsigned rounds = 21, fence_block = 300, submit_block = 40;

static const char usage[] =
    "usage: drm_exec_bench [ROUNDS [FENCE_ITERATIONS [SUBMIT_ITERATIONS]]]\n"
    "Times monitored-fence signal+wait, cross-thread ping-pong and submit+fence on every\n"
    "DRM adapter with kernel-backed fences, next to the raw syncobj and execbuffer\n"
    "ioctls.  `make bench-drm-exec` runs it in the QEMU lane on a virgl host.\n"
    "  ROUNDS              timed blocks per figure, 1-64 (default 21); medians are shown\n"
    "  FENCE_ITERATIONS    iterations per fence block (default 300)\n"
    "  SUBMIT_ITERATIONS   iterations per submit block (default 40)\n"
    "  --help              this text\n";
static struct {
    const char *driver;
    double ns, ratio;
} async_line;
static const UINT32 nop[1];              /* one virgl NOP: a zero header */

/* ---- raw syncobjs ------------------------------------------------------------------ */

static UINT32 raw_create(int fd)
{
    struct drm_syncobj_create c = { 0 };

    if (ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
        bench_die("SYNCOBJ_CREATE", errno);
    return c.handle;
}

static void raw_destroy(int fd, UINT32 handle)
{
    struct drm_syncobj_destroy d = { .handle = handle };

    ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static void raw_signal(int fd, UINT32 handle, UINT64 point)
{
    struct drm_syncobj_timeline_array s = { (uintptr_t)&handle, (uintptr_t)&point, 1, 0 };

    if (ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &s))
        bench_die("SYNCOBJ_TIMELINE_SIGNAL", errno);
}

static void raw_wait(int fd, UINT32 handle, UINT64 point)
{
    struct drm_syncobj_timeline_wait w = {
        .handles = (uintptr_t)&handle, .points = (uintptr_t)&point, .timeout_nsec = INT64_MAX,
        .count_handles = 1, .flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
    };

    while (ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w))
        if (errno != EINTR)
            bench_die("SYNCOBJ_TIMELINE_WAIT", errno);
}

/* ---- monitored fences --------------------------------------------------------------- */

struct fence {
    D3DKMT_HANDLE handle;
    UINT64 next;
};

static struct fence fence_create(const struct target *t)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    struct fence f = { 0, 0 };
    NTSTATUS s;

    cs.hDevice = t->device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    if ((s = D3DKMTCreateSynchronizationObject2(&cs)))
        bench_die("D3DKMTCreateSynchronizationObject2", s);
    f.handle = cs.hSyncObject;
    return f;
}

/* QUERY_FENCE: hands the fence's syncobj out (the watcher follows it). */
static UINT32 fence_syncobj(const struct target *t, D3DKMT_HANDLE h)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_QUERY_FENCE };
    D3DKMT_ESCAPE esc = { 0 };

    e.Fence.hSyncObject = h;
    esc.hAdapter = t->adapter;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = &e;
    esc.PrivateDriverDataSize = sizeof(e);
    if (D3DKMTEscape(&esc))
        bench_die("KMT_DRM_ESCAPE_QUERY_FENCE", 0);
    return e.Fence.SyncobjHandle;
}

static void fence_destroy(D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };

    D3DKMTDestroySynchronizationObject(&d);
}

/* ---- signal+wait, one thread ----------------------------------------------------------- */

static double raw_signal_wait_block(const struct target *t, UINT32 syncobj, UINT64 *next)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < fence_block; i++) {
        UINT64 v = ++*next;
        raw_signal(t->umd.DrmFd, syncobj, v);
        raw_wait(t->umd.DrmFd, syncobj, v);
    }
    return (bench_now_ns() - t0) / fence_block;
}

static double kmt_signal_wait_block(const struct target *t, struct fence *f)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < fence_block; i++) {
        UINT64 v = ++f->next;
        bench_cpu_signal(t->device, f->handle, v);
        bench_cpu_wait(t->device, f->handle, v);
    }
    return (bench_now_ns() - t0) / fence_block;
}

/* ---- ping-pong, two threads --------------------------------------------------------- */

struct pong {
    const struct target *t;
    bool raw;
    UINT32 syncobj[2];                   /* raw: [0] ping, [1] pong */
    D3DKMT_HANDLE fence[2];
    unsigned count;
    UINT64 base;
};

static void pp_signal(struct pong *p, int which, UINT64 v)
{
    if (p->raw)
        raw_signal(p->t->umd.DrmFd, p->syncobj[which], v);
    else
        bench_cpu_signal(p->t->device, p->fence[which], v);
}

static void pp_wait(struct pong *p, int which, UINT64 v)
{
    if (p->raw)
        raw_wait(p->t->umd.DrmFd, p->syncobj[which], v);
    else
        bench_cpu_wait(p->t->device, p->fence[which], v);
}

static void *ponger(void *arg)
{
    struct pong *p = arg;

    for (unsigned i = 1; i <= p->count; i++) {
        pp_wait(p, 0, p->base + i);
        pp_signal(p, 1, p->base + i);
    }
    return NULL;
}

static double pingpong_block(struct pong *p)
{
    pthread_t thread;
    double t0;

    p->count = fence_block;
    if (pthread_create(&thread, NULL, ponger, p))
        bench_die("pthread_create", 0);
    t0 = bench_now_ns();
    for (unsigned i = 1; i <= p->count; i++) {
        pp_signal(p, 0, p->base + i);
        pp_wait(p, 1, p->base + i);
    }
    t0 = (bench_now_ns() - t0) / p->count;
    pthread_join(thread, NULL);
    p->base += p->count;
    return t0;
}

/* ---- submit+fence (virgl) ----------------------------------------------------------- */

static double raw_submit_block(const struct target *t, UINT32 syncobj, UINT64 *next)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < submit_block; i++) {
        struct bench_syncobj_point out = { syncobj, 0, ++*next };
        struct bench_execbuffer eb = {
            .size = sizeof(nop), .command = (uintptr_t)nop, .fence_fd = -1,
            .syncobj_stride = sizeof(out), .num_out_syncobjs = 1, .out_syncobjs = (uintptr_t)&out,
        };

        if (ioctl(t->umd.DrmFd, BENCH_IOCTL_VIRTGPU_EXECBUFFER, &eb))
            bench_die("VIRTGPU_EXECBUFFER", errno);
        raw_wait(t->umd.DrmFd, syncobj, out.point);
    }
    return (bench_now_ns() - t0) / submit_block;
}

/* Completion on a second thread: the kernel signals `from`, the helper
 * passes it on through `to`, the way a driver's interrupt thread would. */
struct relay {
    int from, to;
    unsigned count;
};

static void *relay_thread(void *arg)
{
    struct relay *r = arg;
    UINT64 v;

    for (unsigned i = 0; i < r->count; i++) {
        if (read(r->from, &v, sizeof(v)) != sizeof(v))
            bench_die("eventfd read", errno);
        v = 1;
        if (write(r->to, &v, sizeof(v)) != sizeof(v))
            bench_die("eventfd write", errno);
    }
    return NULL;
}

static double raw_submit_async_block(const struct target *t, UINT32 syncobj, UINT64 *next)
{
    struct relay r = { eventfd(0, EFD_CLOEXEC), eventfd(0, EFD_CLOEXEC), submit_block };
    pthread_t thread;
    double t0;
    UINT64 v;

    if (r.from < 0 || r.to < 0 || pthread_create(&thread, NULL, relay_thread, &r))
        bench_die("relay", errno);
    t0 = bench_now_ns();
    for (unsigned i = 0; i < submit_block; i++) {
        struct bench_syncobj_point out = { syncobj, 0, ++*next };
        struct bench_execbuffer eb = {
            .size = sizeof(nop), .command = (uintptr_t)nop, .fence_fd = -1,
            .syncobj_stride = sizeof(out), .num_out_syncobjs = 1, .out_syncobjs = (uintptr_t)&out,
        };
        struct { UINT32 handle, flags; UINT64 point; INT fd; UINT32 pad; } reg = {
            syncobj, 0, out.point, r.from, 0,
        };

        if (ioctl(t->umd.DrmFd, BENCH_IOCTL_VIRTGPU_EXECBUFFER, &eb))
            bench_die("VIRTGPU_EXECBUFFER", errno);
        if (ioctl(t->umd.DrmFd, DRM_IOWR(0xCF, reg), &reg))
            bench_die("SYNCOBJ_EVENTFD", errno);
        if (read(r.to, &v, sizeof(v)) != sizeof(v))
            bench_die("eventfd read", errno);
    }
    t0 = (bench_now_ns() - t0) / submit_block;
    pthread_join(thread, NULL);
    close(r.from);
    close(r.to);
    return t0;
}

static void kmt_submit(D3DKMT_HANDLE ctx, KMT_DRM_SUBMIT *priv)
{
    D3DKMT_SUBMITCOMMAND sc = { 0 };
    NTSTATUS s;

    sc.Commands = (D3DGPU_VIRTUAL_ADDRESS)(uintptr_t)nop;
    sc.CommandLength = sizeof(nop);
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = ctx;
    sc.pPrivateDriverData = priv;
    sc.PrivateDriverDataSize = priv ? sizeof(*priv) : 0;
    if ((s = D3DKMTSubmitCommand(&sc)))
        bench_die("D3DKMTSubmitCommand", s);
}

static double kmt_submit_block(const struct target *t, D3DKMT_HANDLE ctx, struct fence *f)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < submit_block; i++) {
        D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU s = { 0 };
        UINT64 v = ++f->next;
        NTSTATUS st;

        kmt_submit(ctx, NULL);
        s.hContext = ctx;
        s.ObjectCount = 1;
        s.ObjectHandleArray = &f->handle;
        s.MonitoredFenceValueArray = &v;
        if ((st = D3DKMTSignalSynchronizationObjectFromGpu(&s)))
            bench_die("D3DKMTSignalSynchronizationObjectFromGpu", st);
        bench_cpu_wait(t->device, f->handle, v);
    }
    return (bench_now_ns() - t0) / submit_block;
}

/* gem: a GEM handle the submission names (0: none) */
static double kmt_submit_signals_block(const struct target *t, D3DKMT_HANDLE ctx, struct fence *f, UINT32 syncobj,
                                       UINT32 gem)
{
    KMT_DRM_SUBMIT d;
    double t0 = bench_now_ns();

    memset(&d, 0, sizeof(d));
    d.Magic = KMT_DRM_MAGIC;
    d.Version = KMT_DRM_VERSION;
    d.NumBoHandles = gem != 0;
    d.BoHandles[0] = gem;
    d.NumSignals = 1;
    d.Signals[0].SyncobjHandle = syncobj;
    for (unsigned i = 0; i < submit_block; i++) {
        d.Signals[0].Point = ++f->next;
        kmt_submit(ctx, &d);
        bench_cpu_wait(t->device, f->handle, f->next);
    }
    return (bench_now_ns() - t0) / submit_block;
}

/* ---- a copy-backed allocation named by the submission (virgl) -------------------------- */

static UINT32 gem_of(const struct target *t, D3DKMT_HANDLE alloc)
{
    KMT_DRM_ESCAPE e;
    D3DKMT_ESCAPE esc = { 0 };
    NTSTATUS s;

    memset(&e, 0, sizeof(e));
    e.Code = KMT_DRM_ESCAPE_QUERY_ALLOCATION;
    e.Allocation.hAllocation = alloc;
    esc.hAdapter = t->adapter;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = &e;
    esc.PrivateDriverDataSize = sizeof(e);
    if ((s = D3DKMTEscape(&esc)))
        bench_die("D3DKMTEscape(QUERY_ALLOCATION)", s);
    return e.Allocation.GemHandle;
}

/* sysmem: an existing-sysmem allocation over it (copy-backed here), else a plain one */
static D3DKMT_HANDLE alloc_4k(const struct target *t, void *sysmem)
{
    KMT_DRM_ALLOCATION_DESC desc = { KMT_DRM_MAGIC, KMT_DRM_VERSION, 4096, 0, 0, 0, 0, 0 };
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    ca.hDevice = t->device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    if (sysmem) {
        std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
        std.ExistingHeapData.Size = 4096;
        ca.pStandardAllocation = &std;
        ca.Flags.StandardAllocation = 1;
        ca.Flags.ExistingSysMem = 1;
        info.pSystemMem = sysmem;
    } else {
        info.pPrivateDriverData = &desc;
        info.PrivateDriverDataSize = sizeof(desc);
    }
    if ((s = D3DKMTCreateAllocation(&ca)))
        bench_die("D3DKMTCreateAllocation", s);
    return info.hAllocation;
}

static void bench_copy_backed(const struct target *t)
{
    double plain[MAX_ROUNDS], copy[MAX_ROUNDS];
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_DESTROYCONTEXT dc = { 0 };
    D3DKMT_DESTROYALLOCATION da = { 0 };
    D3DKMT_HANDLE allocs[2];
    UINT32 gems[2], syncobj;
    void *mem;
    struct fence f;
    NTSTATUS s;

    if (posix_memalign(&mem, 4096, 4096))
        bench_die("posix_memalign", STATUS_NO_MEMORY);
    memset(mem, 0x5a, 4096);
    cv.hDevice = t->device;
    if ((s = D3DKMTCreateContextVirtual(&cv)))
        bench_die("D3DKMTCreateContextVirtual", s);
    allocs[0] = alloc_4k(t, NULL);
    allocs[1] = alloc_4k(t, mem);
    for (unsigned i = 0; i < 2; i++)
        gems[i] = gem_of(t, allocs[i]);
    f = fence_create(t);
    syncobj = fence_syncobj(t, f.handle);
    kmt_submit_signals_block(t, cv.hContext, &f, syncobj, gems[0]);
    kmt_submit_signals_block(t, cv.hContext, &f, syncobj, gems[1]);
    for (unsigned r = 0; r < rounds; r++) {
        if (r % 2) {
            plain[r] = kmt_submit_signals_block(t, cv.hContext, &f, syncobj, gems[0]);
            copy[r] = kmt_submit_signals_block(t, cv.hContext, &f, syncobj, gems[1]);
        } else {
            copy[r] = kmt_submit_signals_block(t, cv.hContext, &f, syncobj, gems[1]);
            plain[r] = kmt_submit_signals_block(t, cv.hContext, &f, syncobj, gems[0]);
        }
    }
    printf("%s: submit+fence naming a 4 KiB allocation: plain %.0f ns, copy-backed existing-sysmem %.0f ns "
           "(+%.0f ns: refresh before, write-back after)\n",
           t->umd.DriverName, bench_median(plain, rounds), bench_median(copy, rounds),
           bench_median(copy, rounds) - bench_median(plain, rounds));
    dc.hContext = cv.hContext;
    D3DKMTDestroyContext(&dc);
    fence_destroy(f.handle);
    da.hDevice = t->device;
    da.AllocationCount = 2;
    da.phAllocationList = allocs;
    if ((s = D3DKMTDestroyAllocation(&da)))
        bench_die("D3DKMTDestroyAllocation", s);
    free(mem);
}

/* ---- measuring -------------------------------------------------------------------------- */

static void report(const struct target *t, const char *op, double *raw, double *kmt, double *third)
{
    double r1[MAX_ROUNDS], r2[MAX_ROUNDS];

    for (unsigned i = 0; i < rounds; i++) {
        r1[i] = kmt[i] / raw[i];
        r2[i] = third ? third[i] / raw[i] : 0;
    }
    printf("| %-10s | %-14s | %9.0f | %9.0f | %10.3f |", t->umd.DriverName, op, bench_median(raw, rounds),
           bench_median(kmt, rounds), bench_median(r1, rounds));
    if (third)
        printf(" %9.0f | %10.3f |\n", bench_median(third, rounds), bench_median(r2, rounds));
    else
        printf(" %9s | %10s |\n", "-", "-");
    fflush(stdout);
}

static void bench_signal_wait(const struct target *t)
{
    double raw[MAX_ROUNDS], kmt[MAX_ROUNDS], watched[MAX_ROUNDS];
    UINT32 syncobj = raw_create(t->umd.DrmFd);
    UINT64 raw_next = 0;
    struct fence plain = fence_create(t), exported = fence_create(t);

    fence_syncobj(t, exported.handle);
    raw_signal_wait_block(t, syncobj, &raw_next);
    kmt_signal_wait_block(t, &plain);
    kmt_signal_wait_block(t, &exported);
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned k = 0; k < 3; k++)
            switch ((r + k) % 3) {
            case 0: raw[r] = raw_signal_wait_block(t, syncobj, &raw_next); break;
            case 1: kmt[r] = kmt_signal_wait_block(t, &plain); break;
            default: watched[r] = kmt_signal_wait_block(t, &exported); break;
            }
    report(t, "signal+wait", raw, kmt, watched);
    fence_destroy(plain.handle);
    fence_destroy(exported.handle);
    raw_destroy(t->umd.DrmFd, syncobj);
}

static void bench_pingpong(const struct target *t)
{
    double raw[MAX_ROUNDS], kmt[MAX_ROUNDS];
    struct pong rp = { .t = t, .raw = true }, kp = { .t = t, .raw = false };

    for (int i = 0; i < 2; i++) {
        rp.syncobj[i] = raw_create(t->umd.DrmFd);
        kp.fence[i] = fence_create(t).handle;
    }
    pingpong_block(&rp);
    pingpong_block(&kp);
    for (unsigned r = 0; r < rounds; r++) {
        if (r % 2) {
            raw[r] = pingpong_block(&rp);
            kmt[r] = pingpong_block(&kp);
        } else {
            kmt[r] = pingpong_block(&kp);
            raw[r] = pingpong_block(&rp);
        }
    }
    report(t, "ping-pong (2t)", raw, kmt, NULL);
    for (int i = 0; i < 2; i++) {
        raw_destroy(t->umd.DrmFd, rp.syncobj[i]);
        fence_destroy(kp.fence[i]);
    }
}

static void bench_submit(const struct target *t)
{
    double raw[MAX_ROUNDS], kmt[MAX_ROUNDS], direct[MAX_ROUNDS], async[MAX_ROUNDS], ratio[MAX_ROUNDS];
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DKMT_DESTROYCONTEXT dc = { 0 };
    UINT32 syncobj = raw_create(t->umd.DrmFd), fence_obj;
    UINT64 raw_next = 0;
    struct fence f, g;
    NTSTATUS s;

    cv.hDevice = t->device;
    if ((s = D3DKMTCreateContextVirtual(&cv)))
        bench_die("D3DKMTCreateContextVirtual", s);
    f = fence_create(t);
    g = fence_create(t);
    fence_obj = fence_syncobj(t, g.handle);
    raw_submit_block(t, syncobj, &raw_next);
    kmt_submit_block(t, cv.hContext, &f);
    kmt_submit_signals_block(t, cv.hContext, &g, fence_obj, 0);
    raw_submit_async_block(t, syncobj, &raw_next);
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned k = 0; k < 4; k++)
            switch ((r + k) % 4) {
            case 0: raw[r] = raw_submit_block(t, syncobj, &raw_next); break;
            case 1: kmt[r] = kmt_submit_block(t, cv.hContext, &f); break;
            case 2: direct[r] = kmt_submit_signals_block(t, cv.hContext, &g, fence_obj, 0); break;
            default: async[r] = raw_submit_async_block(t, syncobj, &raw_next); break;
            }
    report(t, "submit+fence", raw, kmt, direct);
    for (unsigned r = 0; r < rounds; r++)
        ratio[r] = async[r] / raw[r];
    async_line.ns = bench_median(async, rounds);
    async_line.ratio = bench_median(ratio, rounds);
    async_line.driver = t->umd.DriverName;
    dc.hContext = cv.hContext;
    D3DKMTDestroyContext(&dc);
    fence_destroy(f.handle);
    fence_destroy(g.handle);
    raw_destroy(t->umd.DrmFd, syncobj);
}

static bool is_virgl(const KMT_DRM_UMD_PRIVATE *umd)
{
    int value = 0;
    struct drm_virtgpu_getparam gp = { .param = VIRTGPU_PARAM_3D_FEATURES, .value = (uintptr_t)&value };

    return !strcmp(umd->DriverName, "virtio_gpu") && !ioctl(umd->DrmFd, DRM_IOCTL_VIRTGPU_GETPARAM, &gp) && value;
}

static bool has_kernel_fences(const KMT_DRM_UMD_PRIVATE *umd)
{
    if (umd->Caps & KMT_DRM_CAP_FENCES)
        return true;
    printf("(%s: no timeline syncobjs with SYNCOBJ_EVENTFD: memory-only fences, skipped)\n", umd->DriverName);
    return false;
}

static unsigned open_targets(struct target *out, unsigned max)
{
    struct drm_target found[16];
    unsigned n = drm_open_targets(found, max < 16 ? max : 16, has_kernel_fences);

    for (unsigned i = 0; i < n; i++) {
        out[i].adapter = found[i].adapter;
        out[i].device = found[i].device;
        out[i].umd = found[i].umd;
        out[i].virgl = is_virgl(&out[i].umd) && (out[i].umd.Caps & KMT_DRM_CAP_SUBMIT);
    }
    return n;
}

int main(int argc, char **argv)
{
    struct target t[16];
    unsigned n;

    bench_parse_counts(argc, argv, usage, 3, (unsigned *const[]){ &rounds, &fence_block, &submit_block });
    if (!rounds || rounds > MAX_ROUNDS || !fence_block || !submit_block) {
        fputs(usage, stderr);
        return 2;
    }
    setenv("KMTSHIM_MINIPORT", "drm", 0);
    if (!(n = open_targets(t, 16))) {
        printf("drm_exec_bench: no DRM adapter with kernel-backed fences\n");
        return 0;
    }
    printf("median of %u blocks (%u fence / %u submit iterations), ns per iteration; ratios: medians of the "
           "per-round ratios\n\n", rounds, fence_block, submit_block);
    printf("| driver     | operation      |    raw ns | D3DKMT ns | D3DKMT/raw |  third ns |  third/raw |\n");
    printf("|------------|----------------|-----------|-----------|------------|-----------|------------|\n");
    for (unsigned i = 0; i < n; i++) {
        bench_signal_wait(&t[i]);
        bench_pingpong(&t[i]);
        if (t[i].virgl)
            bench_submit(&t[i]);
        else
            printf("(%s: the host runs no command buffers: submit+fence skipped)\n", t[i].umd.DriverName);
    }
    printf("\nthird column: signal+wait with the fence's syncobj handed out (the watcher follows it);\n"
           "submit+fence with the fence signalled by the submission's own out-syncobj (KMT_DRM_SUBMIT)\n");
    if (async_line.driver)
        printf("%s: raw submit+fence with the completion seen by a second thread: %.0f ns (%.3f x raw)\n",
               async_line.driver, async_line.ns, async_line.ratio);
    for (unsigned i = 0; i < n; i++)
        if (t[i].virgl)
            bench_copy_backed(&t[i]);
    KmtProcessShutdown();
    return 0;
}
