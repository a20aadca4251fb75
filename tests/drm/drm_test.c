/*
 * Helpers of the DRM miniport tests.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>
#include <virtgpu_drm.h>

#include "drm_test.h"
#include "exec_util.h"

unsigned drm_test_adapters(struct drm_test_adapter *out, unsigned max)
{
    D3DKMT_ADAPTERINFO info[DRM_TEST_MAX + 1];
    D3DKMT_ENUMADAPTERS2 e = { DRM_TEST_MAX + 1, info };
    unsigned n = 0;

    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        struct drm_test_adapter a = { .handle = info[i].hAdapter, .luid = info[i].AdapterLuid,
                                      .sources = info[i].NumOfSources };
        D3DKMT_QUERYADAPTERINFO q = { 0 };

        ck_assert_status(KmtQueryAdapterDescription(a.handle, &a.desc), STATUS_SUCCESS);
        if (strcmp(a.desc.Miniport, "drm") || n == max) {
            D3DKMT_CLOSEADAPTER c = { a.handle };
            ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
            continue;
        }
        q.hAdapter = a.handle;
        q.Type = KMTQAITYPE_UMDRIVERPRIVATE;
        q.pPrivateDriverData = &a.umd;
        q.PrivateDriverDataSize = sizeof(a.umd);
        ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_SUCCESS);
        ck_assert_uint_eq(a.umd.Magic, KMT_DRM_MAGIC);
        out[n++] = a;
    }
    return n;
}

unsigned drm_test_allocating_adapters(struct drm_test_adapter *out, unsigned max)
{
    struct drm_test_adapter all[DRM_TEST_MAX];
    unsigned n = drm_test_adapters(all, DRM_TEST_MAX), kept = 0;

    for (unsigned i = 0; i < n; i++)
        if (all[i].umd.AllocatorAvailable && kept < max)
            out[kept++] = all[i];
    return kept;
}

unsigned drm_test_use_allocating(struct drm_test_adapter *out)
{
    kmt_test_use_miniport("drm");
    return drm_test_allocating_adapters(out, DRM_TEST_MAX);
}

void drm_test_check_expected(const struct drm_test_adapter *a, unsigned n)
{
    const char *expect = getenv("KMTSHIM_DRM_EXPECT");
    char *copy, *save = NULL;

    if (!expect || !*expect)
        return;
    copy = strdup(expect);
    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (unsigned i = 0; i < n; i++)
            found |= !strcmp(a[i].umd.DriverName, name);
        ck_assert_msg(found, "KMTSHIM_DRM_EXPECT names %s, but no drm adapter drives it", name);
    }
    free(copy);
}

unsigned drm_test_count_render_nodes(void)
{
    DIR *d = opendir("/dev/dri");
    struct dirent *e;
    unsigned n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)))
        n += !strncmp(e->d_name, "renderD", 7);
    closedir(d);
    return n;
}

D3DKMT_HANDLE drm_test_create_device(D3DKMT_HANDLE adapter)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = adapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ck_assert_local_handle(cd.hDevice);
    return cd.hDevice;
}

void drm_test_destroy_device(D3DKMT_HANDLE device)
{
    D3DKMT_DESTROYDEVICE dd = { device };

    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
}

KMT_DRM_ALLOCATION_DESC drm_test_desc(UINT64 size, UINT flags)
{
    KMT_DRM_ALLOCATION_DESC d = { 0 };

    d.Magic = KMT_DRM_MAGIC;
    d.Version = KMT_DRM_VERSION;
    d.Size = size;
    d.Flags = flags;
    return d;
}

NTSTATUS drm_test_create(D3DKMT_HANDLE device, UINT count, UINT64 size, D3DKMT_HANDLE *allocs,
                         D3DKMT_HANDLE *res, KMT_DRM_ALLOCATION_DESC *descs)
{
    D3DDDI_ALLOCATIONINFO info[16] = { { 0 } };
    KMT_DRM_ALLOCATION_DESC desc[16];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    ck_assert_uint_le(count, 16);
    for (UINT i = 0; i < count; i++) {
        desc[i] = drm_test_desc(size, 0);
        info[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    ca.hDevice = device;
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = res != NULL;
    status = D3DKMTCreateAllocation(&ca);
    if (status)
        return status;
    for (UINT i = 0; i < count; i++) {
        allocs[i] = info[i].hAllocation;
        if (descs)
            descs[i] = desc[i];
    }
    if (res)
        *res = ca.hResource;
    return status;
}

NTSTATUS drm_test_create_sysmem(D3DKMT_HANDLE device, void *mem, SIZE_T size, D3DKMT_HANDLE *alloc)
{
    return kmt_test_create_existing_heap(device, mem, size, alloc);
}

NTSTATUS drm_test_destroy(D3DKMT_HANDLE device, const D3DKMT_HANDLE *allocs, UINT count)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    da.phAllocationList = allocs;
    da.AllocationCount = count;
    return D3DKMTDestroyAllocation(&da);
}

NTSTATUS drm_test_destroy_resource(D3DKMT_HANDLE device, D3DKMT_HANDLE res)
{
    D3DKMT_DESTROYALLOCATION da = { 0 };

    da.hDevice = device;
    da.hResource = res;
    return D3DKMTDestroyAllocation(&da);
}

NTSTATUS drm_test_lock(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, UINT flags, void **data)
{
    D3DKMT_LOCK l = { 0 };
    NTSTATUS status;

    l.hDevice = device;
    l.hAllocation = alloc;
    l.Flags.Value = flags;
    status = D3DKMTLock(&l);
    *data = l.pData;
    return status;
}

NTSTATUS drm_test_unlock(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc)
{
    D3DKMT_UNLOCK u = { 0 };

    u.hDevice = device;
    u.NumAllocations = 1;
    u.phAllocations = &alloc;
    return D3DKMTUnlock(&u);
}

static NTSTATUS escape(D3DKMT_HANDLE adapter, KMT_DRM_ESCAPE *e)
{
    D3DKMT_ESCAPE esc = { 0 };

    esc.hAdapter = adapter;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = e;
    esc.PrivateDriverDataSize = sizeof(*e);
    return D3DKMTEscape(&esc);
}

KMT_DRM_STATS drm_test_stats(D3DKMT_HANDLE adapter)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_GET_STATS };

    ck_assert_status(escape(adapter, &e), STATUS_SUCCESS);
    return e.Stats;
}

void drm_test_assert_no_buffers(D3DKMT_HANDLE adapter)
{
    KMT_DRM_STATS s = drm_test_stats(adapter);

    ck_assert_uint_eq(s.Buffers, 0);
    ck_assert_uint_eq(s.BytesAllocated, 0);
    ck_assert_uint_eq(s.Mappings, 0);
    ck_assert_uint_eq(s.Bindings, 0);
}

KMT_DRM_ALLOCATION_INFO drm_test_query(D3DKMT_HANDLE adapter, D3DKMT_HANDLE alloc)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_QUERY_ALLOCATION };

    e.Allocation.hAllocation = alloc;
    ck_assert_status(escape(adapter, &e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.Allocation.hAllocation, alloc);
    return e.Allocation;
}

NTSTATUS drm_test_set_fault(D3DKMT_HANDLE adapter, const char *call, UINT nth, INT err)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_SET_FAULT };

    snprintf(e.Fault.Call, sizeof(e.Fault.Call), "%s", call ? call : "");
    e.Fault.Nth = nth;
    e.Fault.Errno = err;
    return escape(adapter, &e);
}

NTSTATUS drm_test_query_fence(D3DKMT_HANDLE adapter, D3DKMT_HANDLE fence, KMT_DRM_FENCE_INFO *info)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_QUERY_FENCE };
    NTSTATUS status;

    e.Fence.hSyncObject = fence;
    status = escape(adapter, &e);
    *info = e.Fence;
    ck_assert_uint_eq(info->hSyncObject, fence);
    return status;
}

KMT_DRM_CONTEXT_INFO drm_test_query_context(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, D3DKMT_HANDLE context)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_QUERY_CONTEXT };
    D3DKMT_ESCAPE esc = { 0 };

    esc.hAdapter = adapter;
    esc.hDevice = device;
    esc.hContext = context;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = &e;
    esc.PrivateDriverDataSize = sizeof(e);
    ck_assert_status(D3DKMTEscape(&esc), STATUS_SUCCESS);
    return e.Context;
}

UINT64 drm_test_timeline_value(int fd, UINT handle)
{
    UINT64 point = 0;
    struct drm_syncobj_timeline_array q = {
        .handles = (uintptr_t)&handle, .points = (uintptr_t)&point, .count_handles = 1,
    };

    ck_assert_int_eq(ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &q), 0);
    return point;
}

bool drm_test_virgl(const struct drm_test_adapter *a)
{
    int value = 0;
    struct drm_virtgpu_getparam gp = { .param = VIRTGPU_PARAM_3D_FEATURES, .value = (uintptr_t)&value };

    if (strcmp(a->umd.DriverName, "virtio_gpu"))
        return false;
    ck_assert_int_eq(ioctl(a->umd.DrmFd, DRM_IOCTL_VIRTGPU_GETPARAM, &gp), 0);
    return value != 0;
}

struct test_syncobj_eventfd {
    UINT handle, flags;
    UINT64 point;
    INT fd;
    UINT pad;
};
#define TEST_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct test_syncobj_eventfd)

bool drm_test_kernel_has_eventfd(int fd)
{
    struct drm_syncobj_create c = { 0 };
    struct test_syncobj_eventfd r = { 0 };
    int evfd = eventfd(0, EFD_CLOEXEC);
    bool ok;

    ck_assert_int_ge(evfd, 0);
    if (ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c)) {
        close(evfd);
        return false;
    }
    r.handle = c.handle;
    r.point = 1;
    r.fd = evfd;
    ok = ioctl(fd, TEST_IOCTL_SYNCOBJ_EVENTFD, &r) == 0;
    ck_assert_int_eq(drm_test_syncobj_destroy_errno(fd, c.handle), 0);
    close(evfd);
    return ok;
}

int drm_test_syncobj_destroy_errno(int fd, UINT handle)
{
    struct drm_syncobj_destroy d = { .handle = handle };

    return ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d) ? errno : 0;
}

int drm_test_gem_close_errno(int fd, UINT handle)
{
    struct drm_gem_close c = { .handle = handle };

    return ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c) ? errno : 0;
}

void *drm_test_raw_map(const struct drm_test_adapter *a, int fd, UINT handle, UINT64 size)
{
    UINT64 offset;
    void *p;

    if (!strcmp(a->umd.Family, "dumb")) {
        struct drm_mode_map_dumb m = { .handle = handle };
        ck_assert_int_eq(ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m), 0);
        offset = m.offset;
    } else if (!strcmp(a->umd.Family, "virtio_gpu")) {
        struct drm_virtgpu_map m = { .handle = handle };
        ck_assert_int_eq(ioctl(fd, DRM_IOCTL_VIRTGPU_MAP, &m), 0);
        offset = m.offset;
    } else {
        return NULL;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
    ck_assert_ptr_ne(p, MAP_FAILED);
    return p;
}

void drm_test_maps_perms(const void *p, char perms[8])
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512];

    perms[0] = 0;
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char pr[8];

        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, pr) == 3 && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
            snprintf(perms, 8, "%s", pr);
            break;
        }
    }
    fclose(f);
}

KMT_DRM_FENCE_INFO drm_test_export_fence(D3DKMT_HANDLE adapter, D3DKMT_HANDLE fence)
{
    KMT_DRM_FENCE_INFO info;

    ck_assert_status(drm_test_query_fence(adapter, fence, &info), STATUS_SUCCESS);
    ck_assert_uint_ne(info.SyncobjHandle, 0);
    return info;
}

KMT_DRM_SUBMIT drm_test_submit_desc(void)
{
    KMT_DRM_SUBMIT d;

    memset(&d, 0, sizeof(d));
    d.Magic = KMT_DRM_MAGIC;
    d.Version = KMT_DRM_VERSION;
    return d;
}

NTSTATUS drm_test_submit(D3DKMT_HANDLE context, D3DGPU_VIRTUAL_ADDRESS commands, UINT length, KMT_DRM_SUBMIT *priv)
{
    D3DKMT_SUBMITCOMMAND sc = { 0 };

    sc.Commands = commands;
    sc.CommandLength = length;
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = context;
    sc.pPrivateDriverData = priv;
    sc.PrivateDriverDataSize = priv ? sizeof(*priv) : 0;
    return D3DKMTSubmitCommand(&sc);
}

NTSTATUS drm_test_create2(D3DKMT_HANDLE device, UINT64 size, UINT flags, struct drm_test_alloc *out)
{
    KMT_DRM_ALLOCATION_DESC desc = drm_test_desc(size, flags);
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    if ((status = D3DKMTCreateAllocation2(&ca)))
        return status;
    out->handle = info.hAllocation;
    out->va = info.GpuVirtualAddress;
    out->size = desc.AllocatedSize;
    out->gem = desc.GemHandle;
    return STATUS_SUCCESS;
}

struct creator {
    D3DKMT_HANDLE device;
    UINT64 size;
    UINT count;
    struct drm_test_alloc *out;
};

static void *create_many(void *arg)
{
    const struct creator *c = arg;

    for (UINT i = 0; i < c->count; i++)
        ck_assert_status(drm_test_create2(c->device, c->size, i % 2 ? KMT_DRM_ALLOCATION_DEVICE_LOCAL : 0, &c->out[i]),
                         STATUS_SUCCESS);
    return NULL;
}

void drm_test_create_from_two_threads(D3DKMT_HANDLE device, UINT64 size, UINT per_thread, struct drm_test_alloc *all)
{
    struct creator c[2];
    pthread_t t[2];

    for (UINT i = 0; i < 2; i++) {
        c[i] = (struct creator){ device, size, per_thread, all + i * per_thread };
        ck_assert_int_eq(pthread_create(&t[i], NULL, create_many, &c[i]), 0);
    }
    for (UINT i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
}

void drm_test_destroy_all(D3DKMT_HANDLE device, struct drm_test_alloc *all, UINT count)
{
    for (UINT i = 0; i < count; i++)
        ck_assert_status(drm_test_destroy(device, &all[i].handle, 1), STATUS_SUCCESS);
}

void drm_test_failed_submit_faults(D3DKMT_HANDLE adapter, const void *stream, UINT bytes, const char *call)
{
    D3DKMT_HANDLE device = drm_test_create_device(adapter), ctx = kmt_exec_virtual_context(device);
    struct drm_test_alloc code;
    struct kmt_fence f;

    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    drm_test_write(device, &code, 0, stream, bytes);
    ck_assert_status(drm_test_set_fault(adapter, call, 1, ENOMEM), STATUS_SUCCESS);
    ck_assert_status(drm_test_submit(ctx, code.va, bytes, NULL), STATUS_SUCCESS);
    drm_test_expect_fault(device, f.handle, D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT);
    drm_test_destroy_device(device);
}

void drm_test_render(D3DKMT_HANDLE ctx, D3DKMT_CREATECONTEXT *cc, UINT length, D3DKMT_HANDLE written)
{
    D3DKMT_RENDER r = { .hContext = ctx, .CommandLength = length, .AllocationCount = written ? 1 : 0 };

    if (written) {
        memset(&cc->pAllocationList[0], 0, sizeof(cc->pAllocationList[0]));
        cc->pAllocationList[0].hAllocation = written;
        cc->pAllocationList[0].WriteOperation = 1;
    }
    ck_assert_status(D3DKMTRender(&r), STATUS_SUCCESS);
    cc->pCommandBuffer = r.pNewCommandBuffer;
    cc->pAllocationList = r.pNewAllocationList;
}

void drm_test_write(D3DKMT_HANDLE device, const struct drm_test_alloc *a, UINT offset, const void *data, UINT bytes)
{
    void *p;

    ck_assert_status(drm_test_lock(device, a->handle, 0, &p), STATUS_SUCCESS);
    memcpy((char *)p + offset, data, bytes);
    ck_assert_status(drm_test_unlock(device, a->handle), STATUS_SUCCESS);
}

UINT32 drm_test_read_u32(D3DKMT_HANDLE device, const struct drm_test_alloc *a, UINT offset)
{
    UINT32 v;
    void *p;

    ck_assert_status(drm_test_lock(device, a->handle, 0, &p), STATUS_SUCCESS);
    memcpy(&v, (char *)p + offset, sizeof(v));
    ck_assert_status(drm_test_unlock(device, a->handle), STATUS_SUCCESS);
    return v;
}

void drm_test_assert_disjoint(const struct drm_test_alloc *a, UINT n, UINT64 size, UINT64 align)
{
    for (UINT i = 0; i < n; i++) {
        UINT64 si = size ? size : a[i].size;

        ck_assert_uint_ne(a[i].va, 0);
        ck_assert_uint_eq(a[i].va % align, 0);
        for (UINT j = 0; j < i; j++) {
            UINT64 sj = size ? size : a[j].size;

            ck_assert_msg(a[i].va + si <= a[j].va || a[j].va + sj <= a[i].va,
                          "allocations %u and %u overlap: VAs %#llx and %#llx", i, j,
                          (unsigned long long)a[i].va, (unsigned long long)a[j].va);
        }
    }
}

void drm_test_signal_and_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE context, D3DKMT_HANDLE fence, UINT64 value)
{
    ck_assert_status(kmt_gpu_signal(context, fence, value), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_wait(device, fence, value, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
}

void drm_test_run_and_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE context, D3DGPU_VIRTUAL_ADDRESS commands,
                           UINT length, KMT_DRM_SUBMIT *priv, D3DKMT_HANDLE fence, UINT64 value)
{
    ck_assert_status(drm_test_submit(context, commands, length, priv), STATUS_SUCCESS);
    drm_test_signal_and_wait(device, context, fence, value);
}

void drm_test_expect_fault(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, D3DKMT_DEVICEEXECUTION_STATE state)
{
    ck_assert_status(kmt_fence_wait(device, fence, UINT64_MAX, KMT_EXEC_WAIT_MS), STATUS_SUCCESS);
    ck_assert_int_eq(kmt_exec_state(device), state);
}

void drm_test_expect_page_fault(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, D3DGPU_VIRTUAL_ADDRESS va)
{
    D3DKMT_GETDEVICESTATE gs = { 0 };

    drm_test_expect_fault(device, fence, D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT);
    gs.hDevice = device;
    gs.StateType = D3DKMT_DEVICESTATE_PAGE_FAULT;
    ck_assert_status(D3DKMTGetDeviceState(&gs), STATUS_SUCCESS);
    ck_assert_uint_eq(gs.PageFaultState.FaultedVirtualAddress, va);
}

void drm_test_stream_page_faults(D3DKMT_HANDLE adapter, bool in_alloc, UINT64 va, UINT length,
                                 const unsigned *kernel_runs)
{
    D3DKMT_HANDLE device = drm_test_create_device(adapter), ctx = kmt_exec_virtual_context(device);
    struct drm_test_alloc code;
    struct kmt_fence f;

    ck_assert_status(drm_test_create2(device, 4096, 0, &code), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    if (in_alloc)
        va += code.va;
    ck_assert_status(drm_test_submit(ctx, va, length, NULL), STATUS_SUCCESS);
    drm_test_expect_page_fault(device, f.handle, va);
    ck_assert_uint_eq(*kernel_runs, 0);
    ck_assert_uint_eq(drm_test_query_context(adapter, device, ctx).Faults, 1);
    drm_test_destroy_device(device);
}

void drm_test_legacy_copies(D3DKMT_HANDLE adapter, drm_test_store_fn store, const unsigned *live_objects,
                            const unsigned *faults)
{
    D3DKMT_HANDLE device, ctx;
    D3DKMT_CREATECONTEXT cc;
    struct drm_test_alloc dst;
    struct kmt_fence f;
    unsigned base;
    UINT n;

    device = drm_test_create_device(adapter);
    ck_assert_status(drm_test_create2(device, 4096, 0, &dst), STATUS_SUCCESS);
    ck_assert_status(kmt_fence_create(device, 0, 0, &f), STATUS_SUCCESS);
    ctx = kmt_exec_legacy_context(device, &cc);
    base = *live_objects;
    for (UINT k = 1; k <= 2; k++) {
        n = store(cc.pCommandBuffer, dst.va + 8, 0xa0 + k, 0xb0 + k);
        drm_test_render(ctx, &cc, n * 4, dst.handle);
        drm_test_signal_and_wait(device, ctx, f.handle, k);
        ck_assert_uint_eq(drm_test_read_u32(device, &dst, 8), 0xa0 + k);
        ck_assert_uint_eq(drm_test_read_u32(device, &dst, 12), 0xb0 + k);
        ck_assert_uint_eq(*live_objects, base + 1);        /* this one's copy; the last freed */
    }
    ck_assert_uint_eq(*faults, 0);
    ck_assert_int_eq(kmt_exec_state(device), D3DKMT_DEVICEEXECUTION_ACTIVE);
    ck_assert_status(kmt_exec_destroy_context(ctx), STATUS_SUCCESS);
    ck_assert_uint_eq(*live_objects, base);                /* the copy went with its context */
    ck_assert_status(drm_test_destroy(device, &dst.handle, 1), STATUS_SUCCESS);
    drm_test_destroy_device(device);
}

void drm_test_finish(D3DKMT_HANDLE adapter, bool idle)
{
    drm_test_set_fault(adapter, "", 0, 0);
    drm_test_assert_no_buffers(adapter);
    if (idle) {
        KMT_DRM_STATS st = drm_test_stats(adapter);

        ck_assert_uint_eq(st.Contexts, 0);
        ck_assert_uint_eq(st.Submissions, 0);
    }
    kmt_test_shutdown_no_leaks();
}

unsigned drm_test_threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    size_t len = strlen(name);
    struct dirent *e;
    unsigned n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        char path[300], comm[32] = "";
        FILE *f;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (fgets(comm, sizeof(comm), f) && !strncmp(comm, name, len) && comm[len] == '\n')
                n++;
            fclose(f);
        }
    }
    closedir(d);
    return n;
}
