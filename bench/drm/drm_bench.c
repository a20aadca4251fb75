/*
 * The DRM miniport against the raw libdrm calls it wraps, on the same
 * driver, in the same run:
 *
 *   create+destroy   D3DKMTCreateAllocation + D3DKMTDestroyAllocation
 *                    vs. the family's create ioctl + GEM_CLOSE
 *   lock+unlock      D3DKMTLock2 + D3DKMTUnlock2 (one byte written)
 *                    vs. the family's lock sequence: mmap of the cached fake
 *                    offset + munmap, plus VIRTGPU_WAIT before and
 *                    TRANSFER_TO_HOST after on virtio_gpu (one byte written)
 *
 * A third column calls the miniport's DDIs directly (DxgkDdiCreateAllocation
 * + DxgkDdiDestroyAllocation, DxgkDdiLock + DxgkDdiUnlock on an adapter of
 * its own), so the table splits the overhead into the miniport's and the
 * core's; a last table times the core alone, over a miniport whose DDIs
 * return at once, back to back and between other system calls (getppid(),
 * and a dumb driver's raw create+close where there is one).
 *
 * Blocks of the three kinds alternate (the order rotates every round); the
 * table gives the median block of each and the median of the per-round
 * kmtshim/raw ratios, so drift and noise hit every column alike.
 * Run it where the drivers are: `make bench-drm` boots
 * the QEMU lane; on a GPU machine run bench/drm/drm_bench directly.
 *
 *   drm_bench [rounds] [iterations per block]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <virtgpu_drm.h>

#include "config.h"
#include "kmtshim/kmtshim.h"
#include "miniports/builtin.h"
#include "kmtshim/kmtdrm.h"
#include "common/bench_util.h"
#include "drm_targets.h"

#define MAX_ROUNDS 64

struct target {
    D3DKMT_HANDLE adapter, device;
    KMT_DRM_UMD_PRIVATE umd;
    int fd;
    UINT page;
    PVOID ddi_adapter;                   /* the same device, started directly */
};

static DRIVER_INITIALIZATION_DATA drm_ddi;

static unsigned rounds = 21, block = 200;

static const char usage[] =
    "usage: drm_bench [ROUNDS [ITERATIONS]]\n"
    "Times D3DKMT allocation create/destroy and lock/unlock on every DRM adapter of the\n"
    "dumb or virtio_gpu family next to the raw libdrm calls they wrap, and the same\n"
    "through the miniport's DDIs alone.  `make bench-drm` runs it in the QEMU lane.\n"
    "  ROUNDS       timed blocks per figure, 1-64 (default 21); medians are shown\n"
    "  ITERATIONS   iterations per block (default 200)\n"
    "  --help       this text\n";

/* ---- raw: exactly the calls the miniport's family makes ---------------------- */

static UINT raw_create(const struct target *t, UINT64 size)
{
    if (!strcmp(t->umd.Family, "dumb")) {
        struct drm_mode_create_dumb c = { .width = t->page / 4, .height = (UINT)(size / t->page), .bpp = 32 };
        if (drmIoctl(t->fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
            bench_die("MODE_CREATE_DUMB", errno);
        return c.handle;
    } else {
        struct drm_virtgpu_resource_create c = {
            .target = 2, .format = 2, .bind = (1u << 1) | (1u << 3), .width = t->page / 4,
            .height = (UINT)(size / t->page), .depth = 1, .array_size = 1, .size = (UINT)size,
            .stride = t->page,
        };
        if (drmIoctl(t->fd, DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, &c))
            bench_die("VIRTGPU_RESOURCE_CREATE", errno);
        return c.bo_handle;
    }
}

static void raw_close(const struct target *t, UINT handle)
{
    struct drm_gem_close c = { .handle = handle };

    if (drmIoctl(t->fd, DRM_IOCTL_GEM_CLOSE, &c))
        bench_die("GEM_CLOSE", errno);
}

static UINT64 raw_offset(const struct target *t, UINT handle)
{
    if (!strcmp(t->umd.Family, "dumb")) {
        struct drm_mode_map_dumb m = { .handle = handle };
        if (drmIoctl(t->fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
            bench_die("MODE_MAP_DUMB", errno);
        return m.offset;
    } else {
        struct drm_virtgpu_map m = { .handle = handle };
        if (drmIoctl(t->fd, DRM_IOCTL_VIRTGPU_MAP, &m))
            bench_die("VIRTGPU_MAP", errno);
        return m.offset;
    }
}

static double raw_create_block(const struct target *t, UINT64 size)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < block; i++)
        raw_close(t, raw_create(t, size));
    return (bench_now_ns() - t0) / block;
}

static double raw_lock_block(const struct target *t, UINT handle, UINT64 offset, UINT64 size)
{
    bool virtio = !strcmp(t->umd.Family, "virtio_gpu");
    UINT height = (UINT)(size / t->page);
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < block; i++) {
        void *p;

        if (virtio) {
            struct drm_virtgpu_3d_wait w = { .handle = handle };
            if (drmIoctl(t->fd, DRM_IOCTL_VIRTGPU_WAIT, &w))
                bench_die("VIRTGPU_WAIT", errno);
        }
        if ((p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, (off_t)offset)) == MAP_FAILED)
            bench_die("mmap", errno);
        ((volatile char *)p)[0] = (char)i;
        munmap(p, size);
        if (virtio) {
            struct drm_virtgpu_3d_transfer_to_host x = { .bo_handle = handle };
            x.box.w = t->page / 4;
            x.box.h = height;
            x.box.d = 1;
            if (drmIoctl(t->fd, DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, &x))
                bench_die("VIRTGPU_TRANSFER_TO_HOST", errno);
        }
    }
    return (bench_now_ns() - t0) / block;
}

/* ---- through D3DKMT ------------------------------------------------------------ */

static D3DKMT_HANDLE kmt_create(const struct target *t, UINT64 size)
{
    KMT_DRM_ALLOCATION_DESC desc = { KMT_DRM_MAGIC, KMT_DRM_VERSION, size, 0, 0, 0, 0, 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = t->device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    if ((s = D3DKMTCreateAllocation(&ca)))
        bench_die("D3DKMTCreateAllocation", s);
    return info.hAllocation;
}

static void kmt_destroy(const struct target *t, D3DKMT_HANDLE alloc)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };
    NTSTATUS s;

    da.hDevice = t->device;
    da.phAllocationList = &alloc;
    da.AllocationCount = 1;
    if ((s = D3DKMTDestroyAllocation(&da)))
        bench_die("D3DKMTDestroyAllocation", s);
}

static double kmt_create_block(const struct target *t, UINT64 size)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < block; i++)
        kmt_destroy(t, kmt_create(t, size));
    return (bench_now_ns() - t0) / block;
}

static double kmt_lock_block(const struct target *t, D3DKMT_HANDLE alloc)
{
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    double t0 = bench_now_ns();
    NTSTATUS s;

    lock.hDevice = unlock.hDevice = t->device;
    lock.hAllocation = unlock.hAllocation = alloc;
    for (unsigned i = 0; i < block; i++) {
        if ((s = D3DKMTLock2(&lock)))
            bench_die("D3DKMTLock2", s);
        ((volatile char *)lock.pData)[0] = (char)i;
        if ((s = D3DKMTUnlock2(&unlock)))
            bench_die("D3DKMTUnlock2", s);
    }
    return (bench_now_ns() - t0) / block;
}

/* ---- the miniport's DDIs, called directly ------------------------------------------ */

static NTSTATUS APIENTRY capture(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *init)
{
    memcpy(&drm_ddi, init, sizeof(drm_ddi));
    return STATUS_SUCCESS;
}

/* Starts the device at `location` once more, outside the core. */
static PVOID ddi_start(const char *location)
{
    static KMT_PHYSICAL_DEVICE devices[KMT_MAX_PHYSICAL_DEVICES];
    KMT_DXGKRNL_EXPORTS exports = { sizeof(exports), KMT_MINIPORT_INTERFACE_VERSION, capture };
    UINT count = KMT_MAX_PHYSICAL_DEVICES;
    DXGKRNL_INTERFACE iface = { .Size = sizeof(iface), .Version = KMT_MINIPORT_INTERFACE_VERSION };
    DXGK_START_INFO start = { 0 };
    ULONG sources, children;
    PVOID ctx;

    if (!drm_ddi.DxgkDdiCreateAllocation && KmtDrmMiniportDriverEntry(NULL, &exports))
        bench_die("KmtDrmMiniportDriverEntry", 0);
    if (drm_ddi.KmtDdiEnumPhysicalDevices(drm_ddi.DriverContext, &count, devices))
        bench_die("KmtDdiEnumPhysicalDevices", 0);
    for (UINT i = 0; i < count; i++) {
        if (strcmp(devices[i].LocationId, location))
            continue;
        if (drm_ddi.DxgkDdiAddDevice(&devices[i], &ctx) ||
            drm_ddi.DxgkDdiStartDevice(ctx, &start, &iface, &sources, &children))
            bench_die("starting the device directly", 0);
        return ctx;
    }
    bench_die("finding the device again", 0);
    return NULL;
}

static HANDLE ddi_create(const struct target *t, UINT64 size)
{
    KMT_DRM_ALLOCATION_DESC desc = { KMT_DRM_MAGIC, KMT_DRM_VERSION, size, 0, 0, 0, 0, 0 };
    DXGK_ALLOCATIONINFO info = { 0 };
    DXGKARG_CREATEALLOCATION ca = { 0 };
    NTSTATUS s;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    if ((s = drm_ddi.DxgkDdiCreateAllocation(t->ddi_adapter, &ca)))
        bench_die("DxgkDdiCreateAllocation", s);
    return info.hAllocation;
}

static void ddi_destroy(const struct target *t, HANDLE h)
{
    DXGKARG_DESTROYALLOCATION da = { .NumAllocations = 1, .pAllocationList = &h };

    drm_ddi.DxgkDdiDestroyAllocation(t->ddi_adapter, &da);
}

static double ddi_create_block(const struct target *t, UINT64 size)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < block; i++)
        ddi_destroy(t, ddi_create(t, size));
    return (bench_now_ns() - t0) / block;
}

static double ddi_lock_block(const struct target *t, HANDLE h)
{
    DXGKARG_LOCK lock = { .hAllocation = h };
    DXGKARG_UNLOCK unlock = { .hAllocation = h };
    double t0 = bench_now_ns();
    NTSTATUS s;

    for (unsigned i = 0; i < block; i++) {
        if ((s = drm_ddi.DxgkDdiLock(t->ddi_adapter, &lock)))
            bench_die("DxgkDdiLock", s);
        ((volatile char *)lock.pData)[0] = (char)i;
        unlock.pData = lock.pData;
        drm_ddi.DxgkDdiUnlock(t->ddi_adapter, &unlock);
    }
    return (bench_now_ns() - t0) / block;
}

/* ---- measuring ---------------------------------------------------------------- */

static void report(const struct target *t, const char *op, UINT64 size, double *raw, double *ddi, double *kmt)
{
    double ddi_ratio[MAX_ROUNDS], kmt_ratio[MAX_ROUNDS];

    for (unsigned i = 0; i < rounds; i++) {
        ddi_ratio[i] = ddi[i] / raw[i];
        kmt_ratio[i] = kmt[i] / raw[i];
    }
    printf("| %-10s | %-14s | %5llu KiB | %9.0f | %9.0f | %9.0f | %7.3f | %10.3f |\n", t->umd.DriverName, op,
           (unsigned long long)(size >> 10), bench_median(raw, rounds), bench_median(ddi, rounds), bench_median(kmt, rounds),
           bench_median(ddi_ratio, rounds), bench_median(kmt_ratio, rounds));
    fflush(stdout);
}

static void bench_create(const struct target *t, UINT64 size)
{
    double raw[MAX_ROUNDS], ddi[MAX_ROUNDS], kmt[MAX_ROUNDS];

    raw_create_block(t, size);           /* warm every path up */
    ddi_create_block(t, size);
    kmt_create_block(t, size);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned k = 0; k < 3; k++) {
            switch ((r + k) % 3) {
            case 0: raw[r] = raw_create_block(t, size); break;
            case 1: ddi[r] = ddi_create_block(t, size); break;
            default: kmt[r] = kmt_create_block(t, size); break;
            }
        }
    }
    report(t, "create+destroy", size, raw, ddi, kmt);
}

static void bench_lock(const struct target *t, UINT64 size)
{
    double raw[MAX_ROUNDS], ddi[MAX_ROUNDS], kmt[MAX_ROUNDS];
    UINT handle = raw_create(t, size);
    UINT64 offset = raw_offset(t, handle);
    HANDLE direct = ddi_create(t, size);
    D3DKMT_HANDLE alloc = kmt_create(t, size);

    raw_lock_block(t, handle, offset, size);
    ddi_lock_block(t, direct);
    kmt_lock_block(t, alloc);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned k = 0; k < 3; k++) {
            switch ((r + k) % 3) {
            case 0: raw[r] = raw_lock_block(t, handle, offset, size); break;
            case 1: ddi[r] = ddi_lock_block(t, direct); break;
            default: kmt[r] = kmt_lock_block(t, alloc); break;
            }
        }
    }
    report(t, "lock+unlock", size, raw, ddi, kmt);
    kmt_destroy(t, alloc);
    ddi_destroy(t, direct);
    raw_close(t, handle);
}

/* ---- the core alone: a miniport whose DDIs return at once ---------------------- */

static char null_page[4096];
static int null_object;

static NTSTATUS APIENTRY null_enum(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices)
{
    memset(devices, 0, sizeof(*devices));
    strcpy(devices[0].LocationId, "null0");
    *count = 1;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_add(const KMT_PHYSICAL_DEVICE *pdo, PVOID *ctx)
{
    *ctx = &null_object;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_start(PVOID ctx, DXGK_START_INFO *s, DXGKRNL_INTERFACE *i, ULONG *src, ULONG *ch)
{
    *src = *ch = 0;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_query(HANDLE a, const DXGKARG_QUERYADAPTERINFO *q)
{
    memset(q->pOutputData, 0, q->OutputDataSize);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_create_device(HANDLE a, DXGKARG_CREATEDEVICE *args)
{
    args->hDevice = null_page;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_ok(HANDLE h)
{
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_create(HANDLE a, DXGKARG_CREATEALLOCATION *args)
{
    for (UINT i = 0; i < args->NumAllocations; i++) {
        args->pAllocationInfo[i].hAllocation = &null_object;
        args->pAllocationInfo[i].Size = sizeof(null_page);
    }
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_destroy(HANDLE a, const DXGKARG_DESTROYALLOCATION *args)
{
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_open(HANDLE d, const DXGKARG_OPENALLOCATION *args)
{
    for (UINT i = 0; i < args->NumAllocations; i++)
        args->pOpenAllocation[i].hDeviceSpecificAllocation = &null_object;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_close(HANDLE d, const DXGKARG_CLOSEALLOCATION *args)
{
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_lock(HANDLE a, DXGKARG_LOCK *args)
{
    args->pData = null_page;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_unlock(HANDLE a, const DXGKARG_UNLOCK *args)
{
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY null_entry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    DRIVER_INITIALIZATION_DATA init = {
        .Version = KMT_MINIPORT_INTERFACE_VERSION,
        .Size = sizeof(init),
        .DriverName = "bench-null",
        .KmtDdiEnumPhysicalDevices = null_enum,
        .DxgkDdiAddDevice = null_add,
        .DxgkDdiStartDevice = null_start,
        .DxgkDdiQueryAdapterInfo = null_query,
        .DxgkDdiCreateDevice = null_create_device,
        .DxgkDdiDestroyDevice = null_ok,
        .DxgkDdiCreateAllocation = null_create,
        .DxgkDdiDestroyAllocation = null_destroy,
        .DxgkDdiOpenAllocation = null_open,
        .DxgkDdiCloseAllocation = null_close,
        .DxgkDdiLock = null_lock,
        .DxgkDdiUnlock = null_unlock,
    };
    return dxgkrnl->DxgkInitialize(driver, &init);
}

/* The core's pair run between other system calls: what it adds there,
 * against what it costs back to back.  Between a dumb driver's raw
 * create+close ioctls an emulated CPU makes it dearer (the kernel's work in
 * between evicts the emulator's translated code and TLB); between getppid()
 * calls, which do next to nothing in the kernel, it should not.  The rows
 * split the D3DKMT/raw gap into the core's own cost and that amplification. */
static const struct target *neighbour;

static void neighbour_ioctls(void)
{
    raw_close(neighbour, raw_create(neighbour, 4096));
}

static volatile long getppid_result;

static void neighbour_getppid(void)
{
    getppid_result = syscall(SYS_getppid);   /* a real system call, never cached by libc */
}

static double neighbour_block(void (*op)(void), const struct target *core)
{
    double t0 = bench_now_ns();

    for (unsigned i = 0; i < block; i++) {
        op();
        if (core)
            kmt_destroy(core, kmt_create(core, 4096));
    }
    return (bench_now_ns() - t0) / block;
}

static void bench_core_between(const char *what, void (*op)(void), const struct target *core)
{
    double alone[MAX_ROUNDS], mixed[MAX_ROUNDS], added[MAX_ROUNDS], base[MAX_ROUNDS];

    neighbour_block(op, core);
    for (unsigned i = 0; i < rounds; i++) {
        for (unsigned k = 0; k < 3; k++) {
            switch ((i + k) % 3) {
            case 0: base[i] = neighbour_block(op, NULL); break;
            case 1: alone[i] = kmt_create_block(core, 4096); break;
            default: mixed[i] = neighbour_block(op, core); break;
            }
        }
        added[i] = mixed[i] - base[i];
    }
    printf("between %s (%.0f ns each): the core's create+destroy adds %.0f ns (back to back: %.0f)\n",
           what, bench_median(base, rounds), bench_median(added, rounds), bench_median(alone, rounds));
}

static void bench_core_between_calls(const struct target *core, const char *node)
{
    struct target r = { .page = 4096 };
    char what[96];

    bench_core_between("getppid() calls", neighbour_getppid, core);
    if (!node || (r.fd = open(node, O_RDWR | O_CLOEXEC)) < 0)
        return;
    strcpy(r.umd.Family, "dumb");
    neighbour = &r;
    snprintf(what, sizeof(what), "raw create+close pairs on %s (4 KiB)", node);
    bench_core_between(what, neighbour_ioctls, core);
    close(r.fd);
}

/* What the core costs by itself, per create+destroy and lock+unlock pair;
 * node: a dumb-buffer device to interleave with, or NULL. */
static void bench_core(const char *node)
{
    double create[MAX_ROUNDS], lock[MAX_ROUNDS];
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    struct target t = { 0 };
    D3DKMT_HANDLE alloc;

    KmtProcessShutdown();
    if (KmtRegisterMiniport("bench-null", null_entry))
        bench_die("KmtRegisterMiniport", 0);
    setenv("KMTSHIM_MINIPORT", "bench-null", 1);
    if (D3DKMTEnumAdapters2(&e) || e.NumAdapters != 1)
        bench_die("enumerating the null adapter", 0);
    cd.hAdapter = info[0].hAdapter;
    if (D3DKMTCreateDevice(&cd))
        bench_die("D3DKMTCreateDevice", 0);
    t.device = cd.hDevice;
    alloc = kmt_create(&t, sizeof(null_page));
    for (unsigned r = 0; r < rounds; r++) {
        create[r] = kmt_create_block(&t, sizeof(null_page));
        lock[r] = kmt_lock_block(&t, alloc);
    }
    kmt_destroy(&t, alloc);
    printf("\nthe core alone (a miniport whose DDIs return at once): create+destroy %.0f ns, "
           "lock+unlock %.0f ns\n", bench_median(create, rounds), bench_median(lock, rounds));
    bench_core_between_calls(&t, node);
    KmtProcessShutdown();
}

static bool has_raw_baseline(const KMT_DRM_UMD_PRIVATE *umd)
{
    if (!strcmp(umd->Family, "dumb") || !strcmp(umd->Family, "virtio_gpu"))
        return true;
    printf("(%s: %s family has no raw baseline here, skipped)\n", umd->DriverName, umd->Family);
    return false;
}

static unsigned open_targets(struct target *out, unsigned max)
{
    struct drm_target found[16];
    unsigned n = drm_open_targets(found, max < 16 ? max : 16, has_raw_baseline);

    for (unsigned i = 0; i < n; i++) {
        out[i].adapter = found[i].adapter;
        out[i].device = found[i].device;
        out[i].umd = found[i].umd;
        out[i].fd = found[i].umd.DrmFd;
        out[i].page = found[i].umd.PageSize;
        out[i].ddi_adapter = ddi_start(found[i].location);
    }
    return n;
}

int main(int argc, char **argv)
{
    static const UINT64 sizes[] = { 4096, 1 << 20 };
    struct target t[16];
    char *dumb_node = NULL;
    unsigned n;

    bench_parse_counts(argc, argv, usage, 2, (unsigned *const[]){ &rounds, &block });
    if (!rounds || rounds > MAX_ROUNDS || !block) {
        fputs(usage, stderr);
        return 2;
    }
    setenv("KMTSHIM_MINIPORT", "drm", 0);
    n = open_targets(t, 16);
    if (!n) {
        printf("drm_bench: no DRM adapter with a raw baseline (dumb or virtio_gpu family)\n");
        bench_core(NULL);
        return 0;
    }
    printf("median of %u blocks of %u iterations, ns per iteration; ratios: medians of the per-round "
           "ratios\n\n", rounds, block);
    printf("| driver     | operation      |   size    |    raw ns |    DDI ns | D3DKMT ns | DDI/raw | D3DKMT/raw |\n");
    printf("|------------|----------------|-----------|-----------|-----------|-----------|---------|------------|\n");
    for (unsigned i = 0; i < n; i++)
        for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            bench_create(&t[i], sizes[s]);
            bench_lock(&t[i], sizes[s]);
        }
    for (unsigned i = 0; i < n; i++) {
        if (!dumb_node && !strcmp(t[i].umd.Family, "dumb"))
            dumb_node = drmGetDeviceNameFromFd2(t[i].fd);
        drm_ddi.DxgkDdiRemoveDevice(t[i].ddi_adapter);
    }
    bench_core(dumb_node);
    free(dumb_node);
    return 0;
}
