/*
 * The i915, xe and amdgpu families against a fake kernel (fake_drm.c, and
 * fake_amdgpu.c for libdrm_amdgpu), on any machine: no Intel or AMD GPU
 * reaches the QEMU lane, so this is where their use of each driver's uAPI
 * is checked.  An adapter is put together by hand (a
 * memfd in place of the render node) and driven through the miniport's own
 * DDIs: create, lock, write, read back what the "kernel" holds, unlock,
 * destroy, with the flags each placement and caching mode needs, and
 * failures from the kernel part-way through a multi-allocation create.
 * The same fakes show the watcher's eventfd handling, libdrm_amdgpu's
 * shared device, enumeration of PCI domains above 0xffff (a fake
 * drmGetDevices2 over a sysfs tree of the test's own) and the performance
 * data and registry strings read from such a tree.
 */
#define _GNU_SOURCE
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>
#include <i915_drm.h>
#ifdef KMT_HAVE_DRM_AMDGPU
#include <amdgpu.h>
#include <amdgpu_drm.h>
#endif

#include "test_util.h"
#include "fake_drm.h"
#include "fake_xe_exec.h"
#ifdef KMT_HAVE_DRM_AMDGPU
#include "fake_amdgpu.h"
#endif
#include "miniports/drm/drm_winsys.h"
#include "miniports/drm/drm_bo.h"
#include "miniports/drm/drm_cs.h"
#include "miniports/drm/drm_fault.h"
#include "miniports/drm/drm_trace.h"

static struct kdrm_adapter *adapter;

static const struct kdrm_family *family_of(enum fake_drm_driver driver)
{
    switch (driver) {
    case FAKE_I915: return &kdrm_family_i915;
    case FAKE_XE: return &kdrm_family_xe;
#ifdef KMT_HAVE_DRM_AMDGPU
    case FAKE_AMDGPU: return &kdrm_family_amdgpu;
#endif
    default: ck_abort_msg("no family for fake driver %d", driver);
    }
    return NULL;
}

/* An adapter whose render node is `fd`, an open file of the fake device. */
static void start_on(const struct fake_drm_config *c, int fd)
{
    adapter = calloc(1, sizeof(*adapter));
    ck_assert_ptr_nonnull(adapter);
    adapter->family = family_of(c->driver);
    adapter->fd = adapter->render_fd = fd;
    ck_assert_int_ge(adapter->fd, 0);
    adapter->card_fd = -1;
    adapter->page_size = (UINT)sysconf(_SC_PAGESIZE);
    kdrm_copy_init(adapter);             /* as DxgkDdiAddDevice does */
    kdrm_batches_init(adapter);
    ck_assert_int_eq(adapter->family->start(adapter), 0);
    ck_assert_int_eq(adapter->family->memory(adapter, &adapter->memory), 0);
}

/* xe binds wait on a timeline syncobj: its fake always has them, as xe does. */
static void start_config(const struct fake_drm_config *c)
{
    struct fake_drm_config with = *c;

    with.timelines |= c->driver == FAKE_XE;
    fake_xe_reset();
    start_on(&with, fake_drm_open(&with));
}

static void start(enum fake_drm_driver driver, bool discrete, bool llc)
{
    struct fake_drm_config c = { .driver = driver, .discrete = discrete, .has_llc = llc };

    start_config(&c);
}

static void expect_memory(bool discrete, UINT64 local_size, UINT64 local_free, UINT64 local_visible)
{
    ck_assert_int_eq(adapter->memory.discrete, discrete);
    ck_assert_uint_eq(adapter->memory.local_size, local_size);
    ck_assert_uint_eq(adapter->memory.local_free, local_free);
    ck_assert_uint_eq(adapter->memory.local_visible, local_visible);
}

/* i915's system region says nothing of free memory (its unallocated size
 * is the probed one): free system memory is what Linux has available, read
 * around the adapter's own reading since it moves. */
static void expect_system_free(UINT64 free_bytes)
{
    UINT64 now = kdrm_system_free(), slack = 1ull << 30;

    ck_assert_uint_ne(free_bytes, 8ull << 30);             /* the fake's probed size */
    ck_assert_uint_le(free_bytes, now + slack);
    ck_assert_uint_ge(free_bytes + slack, now);
}

/* Stops the family.  The adapter's fd is its node's again: a library's
 * fd the family worked on may close with the library's device. */
static void stop_family(void)
{
    if (adapter->family->stop)
        adapter->family->stop(adapter);
    ck_assert_int_eq(adapter->fd, adapter->render_fd);
    ck_assert_ptr_null(adapter->family_data);
}

/* Every test ends with nothing left in the kernel. */
static void stop(void)
{
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    stop_family();
    ck_assert_uint_eq(fake_xe.vms, 0);
    ck_assert_uint_eq(fake_xe.mappings, 0);
    ck_assert_uint_eq(fake_xe.closed_while_bound, 0);
    fake_drm_close();
    free(adapter);
}

/* One allocation through DxgkDdiCreateAllocation with the UMD's descriptor. */
static NTSTATUS create(UINT64 size, UINT flags, KMT_DRM_ALLOCATION_DESC *desc, DXGK_ALLOCATIONINFO *info)
{
    DXGKARG_CREATEALLOCATION ca = { 0 };

    *desc = (KMT_DRM_ALLOCATION_DESC){ .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION, .Size = size,
                                       .Flags = flags };
    memset(info, 0, sizeof(*info));
    info->pPrivateDriverData = desc;
    info->PrivateDriverDataSize = sizeof(*desc);
    ca.NumAllocations = 1;
    ca.pAllocationInfo = info;
    return kdrm_create_allocation(adapter, &ca);
}

static void destroy(HANDLE allocation)
{
    DXGKARG_DESTROYALLOCATION da = { 0 };

    da.NumAllocations = 1;
    da.pAllocationList = &allocation;
    ck_assert_status(kdrm_destroy_allocation(adapter, &da), STATUS_SUCCESS);
}

/* Lock, write a pattern, unlock, and find it in the kernel's copy. */
static void write_through_lock(HANDLE allocation, UINT32 handle, UINT64 size, DXGK_LOCKFLAGS flags)
{
    DXGKARG_LOCK lock = { 0 };
    DXGKARG_UNLOCK unlock = { 0 };

    lock.hAllocation = unlock.hAllocation = allocation;
    lock.Flags = flags;
    ck_assert_status(kdrm_lock(adapter, &lock), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(lock.pData);
    memset(lock.pData, 0x5a, size);
    ((uint8_t *)lock.pData)[size - 1] = 0xa5;
    unlock.pData = lock.pData;
    ck_assert_status(kdrm_unlock(adapter, &unlock), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm_bytes(handle)[0], 0x5a);
    ck_assert_uint_eq(fake_drm_bytes(handle)[size - 1], 0xa5);
    ck_assert_uint_eq(atomic_load(&adapter->mappings), 0);
}

/* ---- i915 --------------------------------------------------------------- */

START_TEST(i915_integrated_is_uma_and_maps_write_back_on_llc)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start(FAKE_I915, false, true);
    ck_assert(!adapter->memory.discrete);
    ck_assert_uint_eq(adapter->memory.local_size, kdrm_system_share());
    expect_system_free(adapter->memory.local_free);

    ck_assert_status(create(10000, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.live_objects, 1);
    ck_assert_uint_eq(desc.Backing, KMT_DRM_BACKING_BO);
    ck_assert_uint_eq(desc.AllocatedSize, 12288);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].size, 12288);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, 1);          /* system memory */
    write_through_lock(info.hAllocation, desc.GemHandle, 10000, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_WB);
    ck_assert_int_eq(fake_drm.last_wait_timeout, -1);                         /* waited for the GPU */
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(i915_write_combine_without_llc_or_when_asked)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start(FAKE_I915, false, true);
    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_WRITECOMBINE, &desc, &info), STATUS_SUCCESS);
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_WC);
    destroy(info.hAllocation);
    stop();

    start(FAKE_I915, false, false);      /* no LLC: WB would not be coherent */
    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_WC);
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(i915_discrete_places_device_local_in_vram_with_cpu_access)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start(FAKE_I915, true, false);
    expect_memory(true, 4ull << 30, 3ull << 30, 256u << 20);
    expect_system_free(adapter->memory.nonlocal_free);

    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, 3);          /* local + system */
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].create_flags, I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS);
    ck_assert_uint_eq(desc.AllocatedSize, 65536);                             /* local memory's page */
    ck_assert_uint_eq(info.SupportedReadSegmentSet, 1);                       /* the local segment */
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_FIXED);
    destroy(info.hAllocation);

    /* without the flag it stays in system memory, the aperture segment */
    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, 1);
    ck_assert_uint_eq(info.SupportedReadSegmentSet, 2);
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_FIXED);
    destroy(info.hAllocation);
    stop();
}
END_TEST

/* Without PAT (the nopat boot option, Xen PV guests) i915 refuses WC (and
 * UC) mappings with ENODEV.  The kernel's own dumb-buffer mapping then takes
 * the GTT aperture; so does the lock on a part without LLC, and one with
 * LLC maps write-back (coherent there): the lock works, it does not say
 * the device was removed. */
START_TEST(i915_without_pat_maps_through_the_aperture_or_write_back)
{
    struct fake_drm_config c = { .driver = FAKE_I915, .no_pat = true };
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start_config(&c);                    /* no LLC: WC was the choice */
    ck_assert_status(create(8192, 0, &desc, &info), STATUS_SUCCESS);
    write_through_lock(info.hAllocation, desc.GemHandle, 8192, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_GTT);
    write_through_lock(info.hAllocation, desc.GemHandle, 8192, flags);     /* the offset is kept */
    destroy(info.hAllocation);
    stop();

    c.has_llc = true;                    /* WC only when asked for */
    start_config(&c);
    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_WRITECOMBINE, &desc, &info), STATUS_SUCCESS);
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].mmap_flags, I915_MMAP_OFFSET_WB);
    destroy(info.hAllocation);
    stop();
}
END_TEST

/* A lock with DonotWait on an object the GPU still uses is busy and maps
 * nothing; without it the lock waits (an unbounded wait: timeout -1). */
static void lock_busy_object(const KMT_DRM_ALLOCATION_DESC *desc, HANDLE allocation)
{
    DXGKARG_LOCK lock = { 0 };
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    fake_drm.objects[desc->GemHandle].busy = true;
    lock.hAllocation = allocation;
    lock.Flags.DonotWait = 1;
    ck_assert_status(kdrm_lock(adapter, &lock), STATUS_GRAPHICS_ALLOCATION_BUSY);
    ck_assert_int_eq(fake_drm.last_wait_timeout, 0);
    ck_assert_uint_eq(atomic_load(&adapter->mappings), 0);
    ck_assert_uint_eq(fake_drm.objects[desc->GemHandle].cpu_maps, 0);
    write_through_lock(allocation, desc->GemHandle, 4096, flags);
    ck_assert_int_eq(fake_drm.last_wait_timeout, -1);
    ck_assert(!fake_drm.objects[desc->GemHandle].busy);
}

START_TEST(i915_lock_donotwait_on_a_busy_object_is_busy)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;

    start(FAKE_I915, false, true);
    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    lock_busy_object(&desc, info.hAllocation);
    destroy(info.hAllocation);
    stop();
}
END_TEST

static NTSTATUS create_sysmem(void *mem, UINT64 size, DXGK_ALLOCATIONINFO *info)
{
    DXGKARG_CREATEALLOCATION ca = { 0 };

    memset(info, 0, sizeof(*info));
    info->Size = size;
    info->Flags.ExistingSysMem = 1;
    info->pKmtSystemMem = mem;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = info;
    return kdrm_create_allocation(adapter, &ca);
}

START_TEST(i915_existing_sysmem_is_userptr_or_a_copy_when_refused)
{
    DXGK_ALLOCATIONINFO info;
    struct kdrm_bo *bo;
    void *mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(mem, MAP_FAILED);
    memset(mem, 0x33, 8192);
    start(FAKE_I915, false, true);
    ck_assert_status(create_sysmem(mem, 8192, &info), STATUS_SUCCESS);
    bo = info.hAllocation;
    ck_assert_uint_eq(bo->backing, KMT_DRM_BACKING_USERPTR);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].userptr, (uintptr_t)mem);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].size, 8192);
    destroy(info.hAllocation);
    stop();

    start(FAKE_I915, false, true);
    fake_drm.config.userptr_refused = true;          /* e.g. a part without snooping */
    ck_assert_status(create_sysmem(mem, 8192, &info), STATUS_SUCCESS);
    bo = info.hAllocation;
    ck_assert_uint_eq(bo->backing, KMT_DRM_BACKING_COPY);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].userptr, 0);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[0], 0x33);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[8191], 0x33);
    ck_assert_uint_eq(atomic_load(&adapter->mappings), 0);
    destroy(info.hAllocation);
    stop();
    munmap(mem, 8192);
}
END_TEST

/* A copy-backed object reads the caller's pages while it is created: pages
 * the caller's size runs past (unmapped, or PROT_NONE as Wine's reserved
 * memory) fail the create with STATUS_INVALID_PARAMETER, leaving no object,
 * instead of a SIGSEGV in the copy. */
START_TEST(i915_copy_of_unreadable_pages_is_refused)
{
    char *mem = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    DXGK_ALLOCATIONINFO info;

    ck_assert_ptr_ne(mem, MAP_FAILED);
    ck_assert_int_eq(munmap(mem + 2 * 4096, 4096), 0);
    start(FAKE_I915, false, true);
    fake_drm.config.userptr_refused = true;
    ck_assert_status(create_sysmem(mem + 4096, 8192, &info), STATUS_INVALID_PARAMETER);
    ck_assert_int_eq(mprotect(mem + 4096, 4096, PROT_NONE), 0);
    ck_assert_status(create_sysmem(mem, 8192, &info), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(atomic_load(&adapter->buffers), 0);
    ck_assert_uint_eq(atomic_load(&adapter->mappings), 0);
    ck_assert_int_eq(mprotect(mem + 4096, 4096, PROT_READ | PROT_WRITE), 0);
    ck_assert_status(create_sysmem(mem, 8192, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(((struct kdrm_bo *)info.hAllocation)->backing, KMT_DRM_BACKING_COPY);
    destroy(info.hAllocation);
    stop();
    munmap(mem, 2 * 4096);
}
END_TEST

/* The n-th create of a resource's three allocations fails (arm() makes the
 * kernel or the library refuse it): the miniport closes the ones it made
 * and answers with the errno's status. */
static unsigned long fail_request;
static int fail_errno;
static const char *fail_call;

static void arm_ioctl(unsigned nth)
{
    fake_drm_fail(fail_request, nth, fail_errno);
}

static void arm_library(unsigned nth)
{
    kdrm_fault_arm(fail_call, nth, fail_errno);
}

static void failing_create(void (*arm)(unsigned nth), NTSTATUS expected)
{
    KMT_DRM_ALLOCATION_DESC desc[3];
    DXGK_ALLOCATIONINFO info[3];
    DXGKARG_CREATEALLOCATION ca = { 0 };

    for (unsigned nth = 1; nth <= 3; nth++) {
        memset(info, 0, sizeof(info));
        for (unsigned i = 0; i < 3; i++) {
            desc[i] = (KMT_DRM_ALLOCATION_DESC){ .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION,
                                                 .Size = 4096 * (i + 1) };
            info[i].pPrivateDriverData = &desc[i];
            info[i].PrivateDriverDataSize = sizeof(desc[i]);
        }
        ca = (DXGKARG_CREATEALLOCATION){ .NumAllocations = 3, .pAllocationInfo = info };
        ca.Flags.Resource = 1;
        arm(nth);
        ck_assert_status(kdrm_create_allocation(adapter, &ca), expected);
        ck_assert_uint_eq(fake_drm.live_objects, 0);
        ck_assert_uint_eq(atomic_load(&adapter->buffers), 0);
        ck_assert_uint_eq(atomic_load(&adapter->bytes), 0);
        ck_assert_ptr_null(ca.hResource);
        for (unsigned i = 0; i < 3; i++)
            ck_assert_ptr_null(info[i].hAllocation);
    }
    fake_drm_fail(0, 0, 0);
    kdrm_fault_arm(NULL, 0, 0);
}

static void failing_ioctl(unsigned long request, int err, NTSTATUS expected)
{
    fail_request = request;
    fail_errno = err;
    failing_create(arm_ioctl, expected);
}

START_TEST(i915_failure_half_way_leaves_no_object)
{
    start(FAKE_I915, false, true);
    failing_ioctl(DRM_IOCTL_I915_GEM_CREATE, ENOMEM, STATUS_NO_MEMORY);
    failing_ioctl(DRM_IOCTL_I915_GEM_CREATE, ENOSPC, STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    stop();
}
END_TEST

START_TEST(i915_lock_fails_cleanly_when_the_kernel_will_not_map)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGKARG_LOCK lock = { 0 };
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start(FAKE_I915, false, true);
    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    lock.hAllocation = info.hAllocation;
    fake_drm_fail(DRM_IOCTL_I915_GEM_MMAP_OFFSET, 1, ENOMEM);
    ck_assert_status(kdrm_lock(adapter, &lock), STATUS_NO_MEMORY);
    ck_assert_uint_eq(atomic_load(&adapter->mappings), 0);
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);    /* the next one maps */
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(i915_contexts_are_kernel_contexts)
{
    struct kdrm_context c1 = { 0 }, c2 = { 0 };

    start(FAKE_I915, false, true);
    ck_assert_int_eq(adapter->family->ctx_create(adapter, &c1), 0);
    ck_assert_int_eq(adapter->family->ctx_create(adapter, &c2), 0);
    ck_assert_uint_ne(c1.kernel_ctx, 0);
    ck_assert_uint_ne(c1.kernel_ctx, c2.kernel_ctx);
    ck_assert_uint_eq(fake_drm.live_contexts, 2);
    adapter->family->ctx_destroy(adapter, &c1);
    adapter->family->ctx_destroy(adapter, &c2);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    stop();
}
END_TEST

/* i915 answers ENODEV to GEM_CONTEXT_CREATE on a GPU with no hardware
 * contexts (before Sandy Bridge): the GPU is there, contexts are not, and
 * CreateContext says STATUS_NOT_SUPPORTED, not STATUS_DEVICE_REMOVED. */
START_TEST(i915_without_hardware_contexts_is_not_supported)
{
    struct fake_drm_config c = { .driver = FAKE_I915, .no_logical_contexts = true };
    struct kdrm_device device = { 0 };
    DXGKARG_CREATECONTEXT cc = { 0 };
    struct kdrm_context ctx = { 0 };

    start_config(&c);
    adapter->caps |= KMT_DRM_CAP_FENCES;
    device.adapter = adapter;
    ck_assert_int_eq(adapter->family->ctx_create(adapter, &ctx), -EOPNOTSUPP);
    ck_assert_status(kdrm_create_context(&device, &cc), STATUS_NOT_SUPPORTED);
    ck_assert_ptr_null(cc.hContext);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    stop();
}
END_TEST

/* ---- xe ----------------------------------------------------------------- */

static void expect_xe_object(UINT32 handle, UINT32 placement, uint16_t caching, UINT32 flags)
{
    ck_assert_uint_eq(fake_drm.objects[handle].placement, placement);
    ck_assert_uint_eq(fake_drm.objects[handle].cpu_caching, caching);
    ck_assert_uint_eq(fake_drm.objects[handle].create_flags, flags);
}

START_TEST(xe_integrated_creates_write_back_system_objects)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start(FAKE_XE, false, false);
    expect_memory(false, kdrm_system_share(), 6ull << 30, 0);    /* total - used of system memory */

    ck_assert_status(create(5000, 0, &desc, &info), STATUS_SUCCESS);
    expect_xe_object(desc.GemHandle, 1, 1, 0);                              /* system, WB */
    ck_assert_uint_eq(desc.AllocatedSize, 8192);
    write_through_lock(info.hAllocation, desc.GemHandle, 5000, flags);
    destroy(info.hAllocation);

    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_WRITECOMBINE, &desc, &info), STATUS_SUCCESS);
    expect_xe_object(desc.GemHandle, 1, 2, 0);                              /* system, WC */
    destroy(info.hAllocation);
    /* DEVICE_LOCAL without VRAM: system memory, write-back */
    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &desc, &info), STATUS_SUCCESS);
    expect_xe_object(desc.GemHandle, 1, 1, 0);
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(xe_discrete_device_local_is_visible_vram_write_combined)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };

    start(FAKE_XE, true, false);
    expect_memory(true, 4ull << 30, 3ull << 30, 256u << 20);

    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &desc, &info), STATUS_SUCCESS);
    expect_xe_object(desc.GemHandle, 3, 2, 4);      /* VRAM + system, WC, NEEDS_VISIBLE_VRAM */
    ck_assert_uint_eq(desc.AllocatedSize, 65536);                            /* VRAM's minimum page */
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    destroy(info.hAllocation);

    /* system memory only: its own page, not VRAM's 64 KiB */
    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, 1);
    ck_assert_uint_eq(info.SupportedReadSegmentSet, 2);
    ck_assert_uint_eq(desc.AllocatedSize, 4096);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].size, 4096);
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(xe_existing_sysmem_is_a_copy)
{
    DXGK_ALLOCATIONINFO info;
    struct kdrm_bo *bo;
    static uint8_t mem[8192] __attribute__((aligned(4096)));

    memset(mem, 0x77, sizeof(mem));
    start(FAKE_XE, false, false);
    ck_assert_status(create_sysmem(mem, sizeof(mem), &info), STATUS_SUCCESS);
    bo = info.hAllocation;
    ck_assert_uint_eq(bo->backing, KMT_DRM_BACKING_COPY);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[0], 0x77);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[8191], 0x77);
    destroy(info.hAllocation);
    stop();
}
END_TEST

/* drm_copy_sync.c on the fake kernel: the refresh before a submission and
 * the write-back after it, around a copy-backed object.  The test plays the
 * GPU by writing the fake kernel's bytes between the two. */
START_TEST(xe_copy_backed_object_follows_submissions)
{
    static uint8_t mem[8192] __attribute__((aligned(4096))), mem2[4096] __attribute__((aligned(4096)));
    struct kdrm_submission s1 = { 0 }, s2 = { 0 };
    DXGK_ALLOCATIONINFO info, info2;
    struct kdrm_bo *bo;
    UINT32 handles[3];

    memset(mem, 0x11, sizeof(mem));
    start(FAKE_XE, false, false);
    ck_assert_status(create_sysmem(mem, sizeof(mem), &info), STATUS_SUCCESS);
    bo = info.hAllocation;
    handles[0] = bo->handle + 100;                   /* not a copy-backed object: left alone */
    handles[1] = handles[2] = bo->handle;            /* named twice: one refresh */

    /* written by the CPU after creation: the refresh carries it */
    memset(mem, 0x22, sizeof(mem));
    ck_assert_int_eq(kdrm_copy_push(adapter, handles, 3, &s1), 0);
    ck_assert_uint_eq(s1.ncopies, 1);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[0], 0x22);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[8191], 0x22);
    /* the GPU writes the first page, the CPU the last byte meanwhile */
    memset(fake_drm_bytes(bo->handle), 0x33, 4096);
    mem[8191] = 0x44;
    kdrm_copy_finish(adapter, &s1, true);
    ck_assert_ptr_null(s1.copies);
    for (unsigned i = 0; i < sizeof(mem); i++)
        ck_assert_uint_eq(mem[i], i < 4096 ? 0x33 : i < 8191 ? 0x22 : 0x44);

    /* two in flight: the second refresh writes the first one's results back
     * first; the first completion then writes nothing */
    ck_assert_int_eq(kdrm_copy_push(adapter, handles + 1, 1, &s1), 0);
    fake_drm_bytes(bo->handle)[0] = 0x55;
    ck_assert_int_eq(kdrm_copy_push(adapter, handles + 1, 1, &s2), 0);
    ck_assert_uint_eq(mem[0], 0x55);
    fake_drm_bytes(bo->handle)[1] = 0x66;
    kdrm_copy_finish(adapter, &s1, true);
    ck_assert_uint_eq(mem[1], 0x33);
    kdrm_copy_finish(adapter, &s2, true);
    ck_assert_uint_eq(mem[1], 0x66);

    /* an object's first refresh maps it; one the kernel refuses records nothing */
    ck_assert_status(create_sysmem(mem2, sizeof(mem2), &info2), STATUS_SUCCESS);
    handles[0] = ((struct kdrm_bo *)info2.hAllocation)->handle;
    kdrm_fault_arm("mmap", 1, ENOMEM);
    ck_assert_int_eq(kdrm_copy_push(adapter, handles, 1, &s1), -ENOMEM);
    kdrm_fault_arm(NULL, 0, 0);
    ck_assert_uint_eq(s1.ncopies, 0);
    ck_assert_ptr_null(s1.copies);
    destroy(info2.hAllocation);
    ck_assert_uint_eq(fake_drm.live_objects, 1);

    /* destroyed while a submission names it: the caller's pages are not
     * written again, the object goes with the submission */
    ck_assert_int_eq(kdrm_copy_push(adapter, handles + 1, 1, &s1), 0);
    destroy(info.hAllocation);
    ck_assert_uint_eq(fake_drm.live_objects, 1);
    memset(fake_drm_bytes(s1.copies[0].bo->handle), 0x99, 8192);
    memset(mem, 0, sizeof(mem));
    kdrm_copy_finish(adapter, &s1, true);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    for (unsigned i = 0; i < sizeof(mem); i++)
        ck_assert_uint_eq(mem[i], 0);
    stop();
}
END_TEST

/* A device whose region query lists no system memory has nowhere to put
 * buffers: the start fails with ENODEV and keeps nothing (a failed start is
 * not stopped; the sanitizer lane's leak check sees what it would keep). */
START_TEST(xe_without_system_memory_does_not_start)
{
    struct fake_drm_config c = { .driver = FAKE_XE, .discrete = true, .vram_min_page = 65536,
                                 .no_system_region = true };
    struct kdrm_adapter *a = calloc(1, sizeof(*a));

    ck_assert_ptr_nonnull(a);
    a->family = &kdrm_family_xe;
    a->fd = a->render_fd = fake_drm_open(&c);
    ck_assert_int_ge(a->fd, 0);
    a->card_fd = -1;
    a->page_size = (UINT)sysconf(_SC_PAGESIZE);
    ck_assert_int_eq(a->family->start(a), -ENODEV);
    ck_assert_ptr_null(a->family_data);
    fake_drm_close();
    free(a);
}
END_TEST

START_TEST(xe_failure_half_way_leaves_no_object)
{
    start(FAKE_XE, true, false);
    failing_ioctl(DRM_IOWR(DRM_COMMAND_BASE + 0x01, struct { uint64_t q[7]; }), ENOMEM, STATUS_NO_MEMORY);
    ck_assert_uint_gt(fake_drm.calls, 0);
    stop();
}
END_TEST

/* What this process has in the driver's regions, from the fdinfo text the
 * fake prints as the driver does (fake_drm_fdinfo). */
static void expect_fdinfo(UINT64 local, UINT64 nonlocal)
{
    char text[2048];
    size_t n = fake_drm_fdinfo(text, sizeof(text));
    FILE *f = fmemopen(text, n, "r");
    UINT64 got_local = ~0ull, got_nonlocal = ~0ull;

    ck_assert_uint_lt(n, sizeof(text) - 1);
    ck_assert_ptr_nonnull(f);
    ck_assert(kdrm_fdinfo_parse(f, &got_local, &got_nonlocal));
    fclose(f);
    ck_assert_uint_eq(got_local, local);
    ck_assert_uint_eq(got_nonlocal, nonlocal);
}

/* Two objects, one asked for in device-local memory, and what fdinfo says
 * of them: xe since Linux 6.11 prints drm-total-cycles-<engine> (a GPU
 * clock) beside its drm-total-<region> bytes, i915 6.8 its regions by
 * uAPI name, amdgpu before 6.9 only its own drm-memory-* keys. */
static void fdinfo_of_two_objects(UINT64 local, UINT64 nonlocal)
{
    KMT_DRM_ALLOCATION_DESC desc[2];
    DXGK_ALLOCATIONINFO info[2];

    expect_fdinfo(0, 0);
    ck_assert_status(create(65536, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &desc[0], &info[0]), STATUS_SUCCESS);
    ck_assert_status(create(131072, 0, &desc[1], &info[1]), STATUS_SUCCESS);
    expect_fdinfo(local, nonlocal);
    destroy(info[0].hAllocation);
    destroy(info[1].hAllocation);
    stop();
}

START_TEST(fdinfo_counts_region_bytes_not_engine_clocks)
{
    start(FAKE_XE, true, false);
    fdinfo_of_two_objects(65536, 131072);
    start(FAKE_I915, true, false);
    fdinfo_of_two_objects(65536, 131072);
#ifdef KMT_HAVE_DRM_AMDGPU
    {
        struct fake_drm_config c = { .driver = FAKE_AMDGPU };

        start_config(&c);
        fdinfo_of_two_objects(65536, 131072);
    }
#endif
}
END_TEST

/* The render engine's time, from the fdinfo text the fake prints as the
 * driver does: i915's drm-engine-render and amdgpu's drm-engine-gfx in
 * ns; xe prints cycles, which are no time. */
static bool engine_ns(const char *engine, UINT64 *ns)
{
    char text[2048];
    size_t n = fake_drm_fdinfo(text, sizeof(text));
    FILE *f = fmemopen(text, n, "r");
    bool found;

    ck_assert_ptr_nonnull(f);
    found = kdrm_fdinfo_engine_parse(f, engine, ns);
    fclose(f);
    return found;
}

START_TEST(fdinfo_gives_the_render_engines_time)
{
    static const char several[] = "drm-driver:\tmsm\ndrm-engine-gpu:\t700 ns\n"
                                  "drm-engine-copy:\t300 ns\ndrm-cycles-gpu:\t99\n";
    UINT64 ns;
    FILE *f;

    start(FAKE_I915, false, true);
    ck_assert(engine_ns("render", &ns));
    ck_assert_uint_eq(ns, 5000000);
    ck_assert(!engine_ns("gfx", &ns));
    stop();
    start(FAKE_XE, true, false);
    ck_assert(!engine_ns(NULL, &ns));
    stop();
#ifdef KMT_HAVE_DRM_AMDGPU
    {
        struct fake_drm_config c = { .driver = FAKE_AMDGPU };

        start_config(&c);
        ck_assert(engine_ns("gfx", &ns));
        ck_assert_uint_eq(ns, 5000000);
        stop();
    }
#endif
    /* a driver without a known render engine: every engine's time */
    f = fmemopen((void *)several, sizeof(several) - 1, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert(kdrm_fdinfo_engine_parse(f, NULL, &ns));
    fclose(f);
    ck_assert_uint_eq(ns, 1000);
}
END_TEST

START_TEST(unknown_ioctls_and_handles_get_the_kernels_errno)
{
    struct drm_gem_close close_args = { .handle = 7 };

    start(FAKE_I915, false, true);
    /* the fake itself: what the families rely on it to refuse */
    ck_assert_int_eq(drmIoctl(adapter->fd, DRM_IOCTL_GEM_CLOSE, &close_args), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(kdrm_gem_close(adapter->fd, 7), -EINVAL);
    stop();
}
END_TEST


/* The fake's own rules where the kernel's differ from the obvious guess
 * (the miniport keeps them; a later change that does not must fail here
 * first).  Each is the kernel's errno for that call. */
struct xe_query_args { uint64_t extensions; uint32_t query, size; uint64_t data, reserved[2]; };
struct xe_create_args {
    uint64_t extensions, size;
    uint32_t placement, flags, vm_id, handle;
    uint16_t cpu_caching, pad[3];
    uint64_t reserved[2];
};
#define XE_QUERY_IOCTL DRM_IOWR(DRM_COMMAND_BASE + 0x00, struct xe_query_args)
#define XE_CREATE_IOCTL DRM_IOWR(DRM_COMMAND_BASE + 0x01, struct xe_create_args)

static int raw_ioctl(unsigned long request, void *arg)
{
    return drmIoctl(adapter->fd, request, arg) ? -errno : 0;
}

START_TEST(fake_kernel_refuses_what_the_kernel_refuses)
{
    struct drm_i915_gem_memory_class_instance sys = { I915_MEMORY_CLASS_SYSTEM, 0 };
    struct drm_i915_gem_create_ext_memory_regions one = {
        .base = { .name = I915_GEM_CREATE_EXT_MEMORY_REGIONS }, .num_regions = 1, .regions = (uintptr_t)&sys };
    struct drm_i915_gem_create_ext ext = { .size = 4096, .flags = I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS,
                                           .extensions = (uintptr_t)&one };
    struct drm_i915_gem_create create4k = { .size = 4096 };
    struct drm_i915_gem_mmap_offset mo = { .flags = I915_MMAP_OFFSET_FIXED };
    struct { uint32_t num_regions, rsvd[3]; uint8_t regions[512]; } regions = { .num_regions = 1 };
    struct drm_i915_query_item item = { .query_id = DRM_I915_QUERY_MEMORY_REGIONS, .length = sizeof(regions),
                                        .data_ptr = (uintptr_t)&regions };
    struct drm_i915_query q = { .num_items = 1, .items_ptr = (uintptr_t)&item };
    struct xe_query_args xq = { .query = 1 };
    struct xe_create_args xc = { .size = 4096, .placement = 1, .handle = 5, .cpu_caching = 1 };
    uint8_t big[512];

    /* i915 (i915_query.c, i915_gem_create.c, i915_gem_mman.c) */
    start(FAKE_I915, true, false);
    ck_assert_int_eq(raw_ioctl(DRM_IOCTL_I915_QUERY, &q), 0);
    ck_assert_int_eq(item.length, -EINVAL);                     /* caller's num_regions MBZ */
    ck_assert_int_eq(raw_ioctl(DRM_IOCTL_I915_GEM_CREATE_EXT, &ext), -EINVAL);   /* CPU access, one place */
    stop();
    start(FAKE_I915, false, true);
    ck_assert_int_eq(raw_ioctl(DRM_IOCTL_I915_GEM_CREATE, &create4k), 0);
    mo.handle = create4k.handle;
    mo.pad = 0xdead;                                            /* never checked */
    ck_assert_int_eq(raw_ioctl(DRM_IOCTL_I915_GEM_MMAP_OFFSET, &mo), -ENODEV);  /* FIXED, integrated */
    mo.flags = I915_MMAP_OFFSET_WB;
    ck_assert_int_eq(raw_ioctl(DRM_IOCTL_I915_GEM_MMAP_OFFSET, &mo), 0);
    ck_assert_int_eq(kdrm_gem_close(adapter->fd, create4k.handle), 0);
    stop();

    /* xe (xe_query.c, xe_bo.c) */
    start(FAKE_XE, false, false);
    ck_assert_int_eq(raw_ioctl(XE_QUERY_IOCTL, &xq), 0);
    ck_assert_uint_gt(xq.size, 8);
    xq.size += 8;                                               /* exactly the size, not more */
    xq.data = (uintptr_t)big;
    ck_assert_int_eq(raw_ioctl(XE_QUERY_IOCTL, &xq), -EINVAL);
    ck_assert_int_eq(raw_ioctl(XE_CREATE_IOCTL, &xc), -EINVAL);                 /* handle MBZ */
    stop();

#ifdef KMT_HAVE_DRM_AMDGPU
    {
        /* amdgpu_ctx.c: above NORMAL needs CAP_SYS_NICE or master; garbage is NORMAL */
        struct fake_drm_config c = { .driver = FAKE_AMDGPU };
        union drm_amdgpu_ctx ctx;
        uint32_t id;

        start_config(&c);
        memset(&ctx, 0, sizeof(ctx));
        ctx.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
        ctx.in.priority = AMDGPU_CTX_PRIORITY_HIGH;
        ck_assert_int_eq(raw_ioctl(DRM_IOCTL_AMDGPU_CTX, &ctx), -EACCES);
        ctx.in.priority = 77;
        ck_assert_int_eq(raw_ioctl(DRM_IOCTL_AMDGPU_CTX, &ctx), 0);
        id = ctx.out.alloc.ctx_id;                              /* out overlays in */
        memset(&ctx, 0, sizeof(ctx));
        ctx.in.op = AMDGPU_CTX_OP_FREE_CTX;
        ctx.in.ctx_id = id;
        ck_assert_int_eq(raw_ioctl(DRM_IOCTL_AMDGPU_CTX, &ctx), 0);
        ck_assert_int_eq(raw_ioctl(DRM_IOCTL_AMDGPU_CTX, &ctx), -EINVAL);   /* amdgpu_ctx_free */
        stop();
    }
#endif
}
END_TEST

/* ---- the watcher's eventfd ------------------------------------------------ */

/* What the watcher needs of an adapter: its exec state and a fake kernel
 * that takes SYNCOBJ_EVENTFD registrations. */
static void start_watching(void)
{
    start(FAKE_I915, false, true);
    kdrm_exec_init(adapter);
    pthread_mutex_lock(&adapter->exec.lock);
    ck_assert_int_eq(kdrm_watch_start_locked(adapter), 0);
    pthread_mutex_unlock(&adapter->exec.lock);
    ck_assert_int_ge(adapter->exec.evfd, 0);
}

static void stop_watching(void)
{
    kdrm_exec_stop(adapter);
    pthread_mutex_destroy(&adapter->exec.lock);
    stop();
}

static off_t file_size(int fd)
{
    struct stat st;

    ck_assert_int_eq(fstat(fd, &st), 0);
    return st.st_size;
}

/* Once the watcher is stopped its eventfd's number is free for the next
 * file the process opens.  A kick or a registration that comes after the
 * stop (a submission's, QUERY_FENCE's) must not reach that file: no 8
 * bytes written into it, no SYNCOBJ_EVENTFD naming it.  The number is -1
 * before it is closed. */
START_TEST(watcher_eventfd_number_is_not_used_after_close)
{
    struct kdrm_fence f = { .syncobj = 7, .exported = true };
    int evfd, other;

    start_watching();
    evfd = adapter->exec.evfd;
    pthread_mutex_lock(&adapter->exec.lock);
    kdrm_watch_arm_fence_locked(adapter, &f);
    pthread_mutex_unlock(&adapter->exec.lock);
    ck_assert_uint_eq(fake_drm.eventfd_calls, 1);
    ck_assert_int_eq(fake_drm.last_eventfd, evfd);           /* registered on the eventfd */
    ck_assert_uint_eq(f.armed, 1);

    kdrm_exec_stop(adapter);
    ck_assert_int_eq(adapter->exec.evfd, -1);
    ck_assert(!adapter->exec.watching);
    other = memfd_create("unrelated", MFD_CLOEXEC);
    ck_assert_int_eq(other, evfd);                           /* the number was reused */
    pthread_mutex_lock(&adapter->exec.lock);
    kdrm_watch_kick_locked(adapter);
    f.armed = 0;
    kdrm_watch_arm_fence_locked(adapter, &f);
    pthread_mutex_unlock(&adapter->exec.lock);
    ck_assert_uint_eq(fake_drm.eventfd_calls, 1);            /* no registration on it */
    ck_assert_uint_eq(f.armed, 0);
    ck_assert_int_eq(file_size(other), 0);                   /* nothing written into it */
    close(other);
    stop_watching();
}
END_TEST

struct kicker {
    pthread_t thread;
    atomic_bool done;
    atomic_uint kicks;
};

/* Kicks the way a submission does: the number read under exec.lock. */
static void *kick_loop(void *arg)
{
    struct kicker *k = arg;

    while (!atomic_load(&k->done)) {
        pthread_mutex_lock(&adapter->exec.lock);
        kdrm_watch_kick_locked(adapter);
        pthread_mutex_unlock(&adapter->exec.lock);
        atomic_fetch_add(&k->kicks, 1);
    }
    return NULL;
}

static void wait_kicks(struct kicker *k, unsigned n)
{
    unsigned from = atomic_load(&k->kicks);

    while (atomic_load(&k->kicks) - from < n)
        sched_yield();
}

/* Kicks race the stop: every one sees the eventfd or -1, never the number
 * as it is being closed (a sanitizer build with threads checks the number
 * is only ever changed under the lock), and none lands in the file that
 * gets the number next. */
START_TEST(watcher_stop_races_kicks_without_touching_a_reused_number)
{
    struct kicker k = { .done = false };
    int evfd, other;

    start_watching();
    evfd = adapter->exec.evfd;
    ck_assert_int_eq(pthread_create(&k.thread, NULL, kick_loop, &k), 0);
    wait_kicks(&k, 100);
    kdrm_exec_stop(adapter);
    other = memfd_create("unrelated", MFD_CLOEXEC);
    ck_assert_int_eq(other, evfd);
    wait_kicks(&k, 100);
    atomic_store(&k.done, true);
    ck_assert_int_eq(pthread_join(k.thread, NULL), 0);
    ck_assert_int_eq(adapter->exec.evfd, -1);
    ck_assert_int_eq(file_size(other), 0);
    close(other);
    stop_watching();
}
END_TEST

/* ---- enumeration: PCI domains above 0xffff -------------------------------- */

/* A sysfs tree of the test's own (KMTSHIM_DRM_SYSFS), and devices whose
 * render nodes are character devices every machine has: their major:minor
 * is what the miniport looks sysfs up by. */
static char sysfs[64];

static void make_dirs(const char *path)
{
    char p[PATH_MAX];

    snprintf(p, sizeof(p), "%s", path);
    for (char *c = p + 1; *c; c++)
        if (*c == '/') {
            *c = 0;
            mkdir(p, 0755);
            *c = '/';
        }
    ck_assert_msg(!mkdir(p, 0755) || errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
}

/* <sysfs>/dev/char/MAJ:MIN/device -> ../../../devices/<device>, as sysfs
 * links a node to its device. */
static void sysfs_device(const char *node, const char *device)
{
    char dir[PATH_MAX], target[PATH_MAX], link[PATH_MAX + 8];
    struct stat st;

    ck_assert_int_eq(stat(node, &st), 0);
    snprintf(dir, sizeof(dir), "%s/dev/char/%u:%u", sysfs, major(st.st_rdev), minor(st.st_rdev));
    make_dirs(dir);
    snprintf(target, sizeof(target), "%s/devices/%s", sysfs, device);
    make_dirs(target);
    snprintf(target, sizeof(target), "../../../devices/%s", device);
    snprintf(link, sizeof(link), "%s/device", dir);
    ck_assert_int_eq(symlink(target, link), 0);
}

static void make_sysfs(void)
{
    snprintf(sysfs, sizeof(sysfs), "/tmp/kmt-sysfs-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(sysfs));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_sysfs(void)
{
    ck_assert_int_eq(nftw(sysfs, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

struct found_adapter {
    char location[64];
    LUID luid;
    D3DKMT_ADAPTERADDRESS address;
};

/* One process start over the fake devices: what the core made of them. */
static unsigned enumerate(const struct fake_drm_pci_device *devices, unsigned n, struct found_adapter *out)
{
    D3DKMT_ADAPTERINFO info[8];
    D3DKMT_ENUMADAPTERS2 e = { 8, info };

    fake_drm_set_devices(devices, n, "fakegpu");
    kmt_test_use_miniport("drm");
    setenv("KMTSHIM_DRM_SYSFS", sysfs, 1);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        D3DKMT_QUERYADAPTERINFO q = { info[i].hAdapter, KMTQAITYPE_ADAPTERADDRESS, &out[i].address,
                                      sizeof(out[i].address) };
        D3DKMT_CLOSEADAPTER c = { info[i].hAdapter };
        KMT_ADAPTER_DESCRIPTION d;

        ck_assert_status(KmtQueryAdapterDescription(info[i].hAdapter, &d), STATUS_SUCCESS);
        ck_assert_str_eq(d.Miniport, "drm");
        memcpy(out[i].location, d.LocationId, sizeof(out[i].location));
        out[i].luid = info[i].AdapterLuid;
        ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_SUCCESS);
        ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    }
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    fake_drm_set_devices(NULL, 0, NULL);
    return e.NumAdapters;
}

static bool same_luid(LUID a, LUID b)
{
    return a.LowPart == b.LowPart && a.HighPart == b.HighPart;
}

static void expect_address(const struct found_adapter *f, UINT bus, UINT dev, UINT func)
{
    ck_assert_uint_eq(f->address.BusNumber, bus);
    ck_assert_uint_eq(f->address.DeviceNumber, dev);
    ck_assert_uint_eq(f->address.FunctionNumber, func);
}

/* Intel VMD: the device at 10000:e1:00.0, which libdrm reports in domain
 * 0000, next to a device really at 0000:e1:00.0.  Each gets its own bus id,
 * and the LUID each gets alone (another process, another run) is its own,
 * whichever else the process sees. */
START_TEST(pci_domain_above_16_bits_gets_its_own_bus_id_and_luid)
{
    const struct fake_drm_pci_device vmd = { 0x0000, 0xe1, 0x00, 0, "/dev/null" };
    const struct fake_drm_pci_device plain = { 0x0000, 0xe1, 0x00, 0, "/dev/zero" };
    const struct fake_drm_pci_device both[2] = { vmd, plain };
    struct found_adapter f[8], vmd_alone, plain_alone;

    make_sysfs();
    sysfs_device("/dev/null", "pci10000:e0/10000:e0:06.0/10000:e1:00.0");
    sysfs_device("/dev/zero", "pci0000:e0/0000:e0:01.0/0000:e1:00.0");

    ck_assert_uint_eq(enumerate(&vmd, 1, f), 1);
    vmd_alone = f[0];
    ck_assert_str_eq(vmd_alone.location, "pci-10000:e1:00.0");
    expect_address(&vmd_alone, 0xe1, 0, 0);
    ck_assert_uint_eq(enumerate(&plain, 1, f), 1);
    plain_alone = f[0];
    ck_assert_str_eq(plain_alone.location, "pci-0000:e1:00.0");
    expect_address(&plain_alone, 0xe1, 0, 0);
    ck_assert(!same_luid(vmd_alone.luid, plain_alone.luid));

    ck_assert_uint_eq(enumerate(both, 2, f), 2);
    ck_assert_str_eq(f[0].location, "pci-0000:e1:00.0");        /* in bus id order */
    ck_assert_str_eq(f[1].location, "pci-10000:e1:00.0");
    ck_assert(same_luid(f[0].luid, plain_alone.luid));
    ck_assert(same_luid(f[1].luid, vmd_alone.luid));
    remove_sysfs();
}
END_TEST

/* A domain up to 0xffff keeps the bus id it always had (its LUID with
 * it); so does any device when sysfs cannot say (no link, a name that is no
 * PCI address) or says something libdrm does not agree with.  virtio_gpu's
 * device is the virtio device, whose parent is the PCI function. */
START_TEST(pci_bus_id_is_unchanged_up_to_16_bits_and_without_sysfs)
{
    const struct fake_drm_pci_device devices[4] = {
        { 0x0001, 0x03, 0x00, 0, "/dev/null" },      /* sysfs agrees */
        { 0x0001, 0x00, 0x02, 0, "/dev/zero" },      /* virtio: the parent, domain 10001 */
        { 0x0000, 0x04, 0x00, 1, "/dev/full" },      /* sysfs names another function */
        { 0x0000, 0x05, 0x1f, 7, "/dev/random" },    /* no sysfs link */
    };
    struct found_adapter f[8];

    make_sysfs();
    sysfs_device("/dev/null", "pci0001:00/0001:00:01.0/0001:03:00.0");
    sysfs_device("/dev/zero", "pci10001:00/10001:00:02.0/virtio3");
    sysfs_device("/dev/full", "pci0000:00/0000:00:1c.0/0000:04:00.0");

    ck_assert_uint_eq(enumerate(devices, 4, f), 4);
    ck_assert_str_eq(f[0].location, "pci-0000:04:00.1");
    expect_address(&f[0], 0x04, 0, 1);
    ck_assert_str_eq(f[1].location, "pci-0000:05:1f.7");
    expect_address(&f[1], 0x05, 0x1f, 7);
    ck_assert_str_eq(f[2].location, "pci-0001:03:00.0");
    expect_address(&f[2], 0x03, 0, 0);
    ck_assert_str_eq(f[3].location, "pci-10001:00:02.0");
    expect_address(&f[3], 0x00, 0x02, 0);
    remove_sysfs();
}
END_TEST

/* ---- performance data and registry strings from sysfs ---------------------- */

/* <sysfs>/devices/<device>/<file> holding `text`. */
static void sysfs_file(const char *device, const char *file, const char *text)
{
    char path[PATH_MAX], *slash;
    FILE *f;

    snprintf(path, sizeof(path), "%s/devices/%s/%s", sysfs, device, file);
    slash = strrchr(path, '/');
    *slash = 0;
    make_dirs(path);
    *slash = '/';
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

struct perf_answers {
    D3DKMT_NODE_PERFDATA node;
    D3DKMT_ADAPTER_PERFDATA adapter;
    D3DKMT_ADAPTER_PERFDATACAPS caps;
    D3DKMT_ADAPTERREGISTRYINFO registry;
};

static void query_ok(D3DKMT_HANDLE h, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { h, type, data, size };

    ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_SUCCESS);
}

static void query_perf(D3DKMT_HANDLE h, struct perf_answers *out)
{
    memset(out, 0xcc, sizeof(*out));
    out->node.NodeOrdinal = out->node.PhysicalAdapterIndex = 0;
    out->adapter.PhysicalAdapterIndex = out->caps.PhysicalAdapterIndex = 0;
    query_ok(h, KMTQAITYPE_NODEPERFDATA, &out->node, sizeof(out->node));
    query_ok(h, KMTQAITYPE_ADAPTERPERFDATA, &out->adapter, sizeof(out->adapter));
    query_ok(h, KMTQAITYPE_ADAPTERPERFDATA_CAPS, &out->caps, sizeof(out->caps));
    query_ok(h, KMTQAITYPE_ADAPTERREGISTRYINFO, &out->registry, sizeof(out->registry));
}

/* The one fake device on /dev/null, over the test's sysfs tree: its
 * answers; between the two rounds `between` (if any) runs. */
static void perf_of_device(struct perf_answers *first, void (*between)(void), struct perf_answers *second)
{
    const struct fake_drm_pci_device dev = { 0x0000, 0x03, 0x00, 0, "/dev/null" };
    D3DKMT_ADAPTERINFO info[8];
    D3DKMT_ENUMADAPTERS2 e = { 8, info };

    fake_drm_set_devices(&dev, 1, "fakegpu");
    kmt_test_use_miniport("drm");
    setenv("KMTSHIM_DRM_SYSFS", sysfs, 1);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    query_perf(info[0].hAdapter, first);
    if (between) {
        between();
        query_perf(info[0].hAdapter, second);
    }
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    fake_drm_set_devices(NULL, 0, NULL);
}

static bool wide_eq(const WCHAR *w, const char *s)
{
    size_t i = 0;

    for (; s[i]; i++)
        if (w[i] != (WCHAR)(unsigned char)s[i])
            return false;
    return !w[i];
}

#define AMD_DEV "pci0000:00/0000:00:01.0/0000:03:00.0"
#define AMD_HWMON AMD_DEV "/hwmon/hwmon4"

static void amd_gets_warmer(void)
{
    sysfs_file(AMD_HWMON, "temp1_input", "71500\n");
    sysfs_file(AMD_HWMON, "freq1_input", "500000000\n");
}

/* amdgpu's hwmon and pp_dpm files, in the units the kernel writes them
 * (millidegrees, microwatts, Hz, MHz, mV), come back in Windows' (tenths
 * of a degree, tenths of a percent of the cap, Hz, mV); what changes is
 * read at each call. */
START_TEST(amdgpu_hwmon_values_are_scaled_to_windows_units)
{
    struct perf_answers a, b;

    make_sysfs();
    sysfs_device("/dev/null", AMD_DEV);
    sysfs_file(AMD_HWMON, "temp1_input", "45000\n");
    sysfs_file(AMD_HWMON, "temp1_crit", "100000\n");
    sysfs_file(AMD_HWMON, "temp1_emergency", "105000\n");
    sysfs_file(AMD_HWMON, "power1_average", "50000000\n");
    sysfs_file(AMD_HWMON, "power1_cap", "200000000\n");
    sysfs_file(AMD_HWMON, "fan1_input", "1200\n");
    sysfs_file(AMD_HWMON, "fan1_max", "3300\n");
    sysfs_file(AMD_HWMON, "freq1_input", "1800000000\n");
    sysfs_file(AMD_HWMON, "freq2_input", "1000000000\n");
    sysfs_file(AMD_HWMON, "in0_input", "850\n");
    sysfs_file(AMD_HWMON, "in0_max", "1200\n");
    sysfs_file(AMD_DEV, "pp_dpm_sclk", "0: 500Mhz\n1: 1800Mhz *\n2: 2105Mhz\n");
    sysfs_file(AMD_DEV, "pp_dpm_mclk", "0: 96Mhz\n1: 1000Mhz *\n");
    sysfs_file(AMD_DEV, "vbios_version", "113-D4120100-100\n");

    perf_of_device(&a, amd_gets_warmer, &b);
    ck_assert_uint_eq(a.node.Frequency, 1800000000ull);
    ck_assert_uint_eq(a.node.MaxFrequency, 2105000000ull);
    ck_assert_uint_eq(a.node.MaxFrequencyOC, 0);
    ck_assert_uint_eq(a.node.Voltage, 850);
    ck_assert_uint_eq(a.node.VoltageMax, 1200);
    ck_assert_uint_eq(a.node.Reserved, 0);
    ck_assert_uint_eq(a.adapter.MemoryFrequency, 1000000000ull);
    ck_assert_uint_eq(a.adapter.MaxMemoryFrequency, 1000000000ull);
    ck_assert_uint_eq(a.adapter.Temperature, 450);
    ck_assert_uint_eq(a.adapter.Power, 250);                 /* 50 W of 200 W: 25.0% */
    ck_assert_uint_eq(a.adapter.FanRPM, 1200);
    ck_assert_uint_eq(a.adapter.MemoryBandwidth, 0);
    ck_assert_uint_eq(a.caps.MaxFanRPM, 3300);
    ck_assert_uint_eq(a.caps.TemperatureMax, 1050);
    ck_assert_uint_eq(a.caps.TemperatureWarning, 1000);
    ck_assert(wide_eq(a.registry.BiosString, "113-D4120100-100"));
    ck_assert(wide_eq(a.registry.DacType, "Integrated RAMDAC"));
    ck_assert(wide_eq(a.registry.ChipType, "fakegpu (0x744C)"));
    ck_assert_uint_ne(a.registry.AdapterString[0], 0);
    /* read again at the next call */
    ck_assert_uint_eq(b.adapter.Temperature, 715);
    ck_assert_uint_eq(b.node.Frequency, 500000000ull);
    ck_assert_uint_eq(b.node.MaxFrequency, 2105000000ull);
    remove_sysfs();
}
END_TEST

#define INTEL_DEV "pci0000:00/0000:00:02.0"

static void intel_clocks_up(void)
{
    sysfs_file(INTEL_DEV "/drm/card1", "gt_cur_freq_mhz", "1250\n");
}

/* i915's card directory: the GT clock in MHz; no hwmon (an integrated
 * GPU): no temperature, power or fan, and no BIOS string. */
START_TEST(i915_gt_frequency_in_hz_and_zeros_without_hwmon)
{
    struct perf_answers a, b;

    make_sysfs();
    sysfs_device("/dev/null", INTEL_DEV);
    sysfs_file(INTEL_DEV "/drm/card1", "gt_cur_freq_mhz", "350\n");
    sysfs_file(INTEL_DEV "/drm/card1", "gt_max_freq_mhz", "1300\n");
    sysfs_file(INTEL_DEV "/drm/renderD128", "dev", "226:128\n");      /* not the card */

    perf_of_device(&a, intel_clocks_up, &b);
    ck_assert_uint_eq(a.node.Frequency, 350000000ull);
    ck_assert_uint_eq(a.node.MaxFrequency, 1300000000ull);
    ck_assert_uint_eq(a.node.Voltage, 0);
    ck_assert_uint_eq(a.adapter.Temperature, 0);
    ck_assert_uint_eq(a.adapter.Power, 0);
    ck_assert_uint_eq(a.adapter.FanRPM, 0);
    ck_assert_uint_eq(a.adapter.MemoryFrequency, 0);
    ck_assert_uint_eq(a.caps.TemperatureMax, 0);
    ck_assert(wide_eq(a.registry.BiosString, ""));
    ck_assert_uint_eq(b.node.Frequency, 1250000000ull);
    remove_sysfs();
}
END_TEST

/* Where newer kernels keep the GT clock: i915 per GT, xe per tile and GT. */
START_TEST(per_gt_i915_and_xe_clocks)
{
    struct perf_answers a;

    make_sysfs();
    sysfs_device("/dev/null", INTEL_DEV);
    sysfs_file(INTEL_DEV "/drm/card0/gt/gt0", "rps_cur_freq_mhz", "700\n");
    sysfs_file(INTEL_DEV "/drm/card0/gt/gt0", "rps_max_freq_mhz", "2250\n");
    perf_of_device(&a, NULL, NULL);
    ck_assert_uint_eq(a.node.Frequency, 700000000ull);
    ck_assert_uint_eq(a.node.MaxFrequency, 2250000000ull);
    remove_sysfs();

    make_sysfs();
    sysfs_device("/dev/null", INTEL_DEV);
    sysfs_file(INTEL_DEV "/tile0/gt0/freq0", "act_freq", "1100\n");
    sysfs_file(INTEL_DEV "/tile0/gt0/freq0", "max_freq", "2400\n");
    perf_of_device(&a, NULL, NULL);
    ck_assert_uint_eq(a.node.Frequency, 1100000000ull);
    ck_assert_uint_eq(a.node.MaxFrequency, 2400000000ull);
    remove_sysfs();
}
END_TEST

/* A driver with none of the files (virtio_gpu, vgem), or files with no
 * number in them: every value 0, and the queries still succeed.  A power
 * reading with no cap to compare it with is no percentage either. */
START_TEST(missing_or_unreadable_files_give_zeros)
{
    struct perf_answers a;

    make_sysfs();
    sysfs_device("/dev/null", AMD_DEV);
    sysfs_file(AMD_HWMON, "temp1_input", "garbage\n");
    sysfs_file(AMD_HWMON, "power1_average", "50000000\n");
    sysfs_file(AMD_HWMON, "fan1_input", "");
    sysfs_file(AMD_DEV, "pp_dpm_sclk", "no levels here\n");

    perf_of_device(&a, NULL, NULL);
    ck_assert_uint_eq(a.node.Frequency, 0);
    ck_assert_uint_eq(a.node.MaxFrequency, 0);
    ck_assert_uint_eq(a.adapter.Temperature, 0);
    ck_assert_uint_eq(a.adapter.Power, 0);
    ck_assert_uint_eq(a.adapter.FanRPM, 0);
    ck_assert_uint_eq(a.caps.MaxFanRPM, 0);
    remove_sysfs();

    make_sysfs();                                  /* no sysfs entry at all */
    perf_of_device(&a, NULL, NULL);
    ck_assert_uint_eq(a.node.Frequency, 0);
    ck_assert_uint_eq(a.adapter.Temperature, 0);
    ck_assert(wide_eq(a.registry.BiosString, ""));
    remove_sysfs();
}
END_TEST

/* ---- dumb buffers ------------------------------------------------------- */

/* The kernel computes a dumb buffer's pitch and size in 32 bits: 4 GiB or
 * more cannot be made, and the miniport says so as an out-of-memory (as for
 * virtio_gpu's 32-bit sizes), not as a bad argument, on a machine whose RAM
 * share allows that much. */
START_TEST(dumb_buffer_of_4_gib_is_no_video_memory)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    unsigned calls;

    start(FAKE_I915, false, true);
    adapter->family = &kdrm_family_dumb;
    adapter->memory.local_size = 64ull << 30;
    calls = fake_drm.calls;
    ck_assert_status(create(4ull << 30, 0, &desc, &info), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    ck_assert_uint_eq(fake_drm.calls, calls);                /* refused before the kernel */
    ck_assert_status(create((4ull << 30) + 4096, 0, &desc, &info), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    /* a size the kernel takes still reaches it */
    ck_assert_status(create(8192, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].size, 8192);
    destroy(info.hAllocation);
    adapter->family = &kdrm_family_i915;
    stop();
}
END_TEST

/* ---- amdgpu (through libdrm_amdgpu) ---------------------------------------- */
#ifdef KMT_HAVE_DRM_AMDGPU

START_TEST(amdgpu_discrete_heaps_and_flags)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };

    start_config(&c);
    expect_memory(true, 8ull << 30, 7ull << 30, 256u << 20);
    ck_assert_uint_eq(adapter->memory.nonlocal_size, 16ull << 30);
    ck_assert_uint_eq(adapter->memory.nonlocal_free, 14ull << 30);

    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, AMDGPU_GEM_DOMAIN_GTT);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].create_flags, 0);
    ck_assert_uint_eq(info.SupportedReadSegmentSet, 2);
    write_through_lock(info.hAllocation, desc.GemHandle, 4096, flags);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].cpu_maps, 0);      /* unmapped at unlock */
    destroy(info.hAllocation);

    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_WRITECOMBINE, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, AMDGPU_GEM_DOMAIN_GTT);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].create_flags, AMDGPU_GEM_CREATE_CPU_GTT_USWC);
    destroy(info.hAllocation);

    ck_assert_status(create(8192, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, AMDGPU_GEM_DOMAIN_VRAM);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].create_flags, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
    ck_assert_uint_eq(info.SupportedReadSegmentSet, 1);
    write_through_lock(info.hAllocation, desc.GemHandle, 8192, flags);
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(amdgpu_apu_is_uma_and_never_asks_for_vram)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    struct fake_drm_config c = { .driver = FAKE_AMDGPU, .apu = true };

    start_config(&c);
    expect_memory(false, kdrm_system_share(), 14ull << 30, 0);     /* GTT's free */
    /* the fake refuses VRAM on an APU, as the family must not ask for it */
    ck_assert_status(create(4096, KMT_DRM_ALLOCATION_DEVICE_LOCAL, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, AMDGPU_GEM_DOMAIN_GTT);
    destroy(info.hAllocation);
    stop();
}
END_TEST

START_TEST(amdgpu_donotwait_userptr_and_contexts)
{
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };
    struct kdrm_context ctx = { 0 };
    static uint8_t mem[8192] __attribute__((aligned(4096)));
    struct kdrm_bo *bo;

    start_config(&c);
    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    lock_busy_object(&desc, info.hAllocation);              /* -1: AMDGPU_TIMEOUT_INFINITE */
    destroy(info.hAllocation);

    ck_assert_status(create_sysmem(mem, sizeof(mem), &info), STATUS_SUCCESS);
    bo = info.hAllocation;
    ck_assert_uint_eq(bo->backing, KMT_DRM_BACKING_USERPTR);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].userptr, (uintptr_t)mem);
    destroy(info.hAllocation);

    ck_assert_int_eq(adapter->family->ctx_create(adapter, &ctx), 0);
    ck_assert_uint_ne(ctx.kernel_ctx, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 1);
    adapter->family->ctx_destroy(adapter, &ctx);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    stop();
}
END_TEST

/* libdrm_amdgpu's userptr is ANONONLY: the kernel refuses shared or file
 * memory (a memfd, a MAP_SHARED mapping) with EPERM.  That is a refusal for
 * this memory, like ENODEV on i915: the allocation is a copy, not a failure. */
START_TEST(amdgpu_userptr_refused_for_shared_memory_is_a_copy)
{
    DXGK_ALLOCATIONINFO info;
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };
    struct kdrm_bo *bo;
    int fd = memfd_create("sysmem", MFD_CLOEXEC);
    uint8_t *mem;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 8192), 0);
    mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    memset(mem, 0x3c, 8192);
    start_config(&c);
    ck_assert_status(create_sysmem(mem, 8192, &info), STATUS_SUCCESS);
    bo = info.hAllocation;
    ck_assert_uint_eq(bo->backing, KMT_DRM_BACKING_COPY);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].userptr, 0);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].placement, AMDGPU_GEM_DOMAIN_GTT);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[0], 0x3c);
    ck_assert_uint_eq(fake_drm_bytes(bo->handle)[8191], 0x3c);
    ck_assert_uint_eq(fake_drm.objects[bo->handle].cpu_maps, 0);
    destroy(info.hAllocation);
    stop();
    munmap(mem, 8192);
    close(fd);
}
END_TEST

/* What the adapter does on its fd, all on one file: an allocation whose
 * GEM handle is on a->fd (the handle the UMD is given with that fd), which
 * locks and unlocks, and a kernel context on the same file. */
static void allocate_on_one_file(void)
{
    unsigned file = fake_drm_file_of(adapter->fd);
    KMT_DRM_ALLOCATION_DESC desc;
    DXGK_ALLOCATIONINFO info;
    DXGK_LOCKFLAGS flags = { .Value = 0 };
    struct kdrm_context ctx = { 0 };

    ck_assert_uint_ne(file, 0);
    ck_assert_status(create(8192, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].file, file);
    write_through_lock(info.hAllocation, desc.GemHandle, 8192, flags);
    ck_assert_int_eq(adapter->family->ctx_create(adapter, &ctx), 0);
    ck_assert_uint_eq(fake_drm.context_file[ctx.kernel_ctx], file);
    adapter->family->ctx_destroy(adapter, &ctx);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    destroy(info.hAllocation);
}

/* Alone, the device libdrm_amdgpu makes is on a dup of the adapter's fd:
 * the adapter's own file. */
START_TEST(amdgpu_fresh_device_is_on_the_adapters_file)
{
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };

    start_config(&c);
    ck_assert_uint_eq(fake_drm_file_of(adapter->fd), fake_drm_file_of(adapter->render_fd));
    allocate_on_one_file();
    stop();
}
END_TEST

/* A UMD (or the program) opened the GPU through libdrm_amdgpu first, on an
 * open of the node of its own: the adapter's initialize gets that device,
 * whose buffers live on the UMD's file.  The adapter works on the device's
 * fd, so the handles it reports, its contexts and the fd it names are one
 * file. */
START_TEST(amdgpu_device_opened_first_elsewhere_is_used_on_its_file)
{
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };
    amdgpu_device_handle umd_dev;
    uint32_t major, minor;
    int umd_fd = fake_drm_open(&c);

    ck_assert_int_ge(umd_fd, 0);
    ck_assert_int_eq(amdgpu_device_initialize(umd_fd, &major, &minor, &umd_dev), 0);
    start_on(&c, fake_drm_open_file());
    ck_assert_ptr_eq(kdrm_amdgpu_device(adapter), umd_dev);                   /* the library's sharing */
    ck_assert_uint_ne(fake_drm_file_of(adapter->render_fd), fake_drm_file_of(umd_fd));
    ck_assert_uint_eq(fake_drm_file_of(adapter->fd), fake_drm_file_of(umd_fd));
    allocate_on_one_file();
    ck_assert_int_eq(amdgpu_device_deinitialize(umd_dev), 0);
    stop();
}
END_TEST

/* An adapter started again in the process (after a failed process start,
 * a shutdown) while a UMD kept the library's device: the device still
 * lives on the first adapter's file, through the library's dup, and the
 * new adapter follows it there. */
START_TEST(amdgpu_adapter_started_again_follows_the_librarys_device)
{
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };
    amdgpu_device_handle umd_dev;
    uint32_t major, minor;
    unsigned first;
    int umd_fd;

    start_config(&c);
    first = fake_drm_file_of(adapter->render_fd);
    umd_fd = fake_drm_open_file();
    ck_assert_int_eq(amdgpu_device_initialize(umd_fd, &major, &minor, &umd_dev), 0);
    ck_assert_ptr_eq(kdrm_amdgpu_device(adapter), umd_dev);
    stop_family();
    fake_drm_close_fd(adapter->render_fd);
    free(adapter);

    start_on(&c, fake_drm_open_file());
    ck_assert_uint_ne(fake_drm_file_of(adapter->render_fd), first);
    ck_assert_uint_eq(fake_drm_file_of(adapter->fd), first);
    allocate_on_one_file();
    ck_assert_int_eq(amdgpu_device_deinitialize(umd_dev), 0);
    stop();
}
END_TEST

/* libdrm_amdgpu failing at the n-th alloc or export of a resource's
 * allocations (the miniport's fault hook names the library calls). */
START_TEST(amdgpu_failure_half_way_leaves_no_object)
{
    static const char *const calls[] = { "amdgpu_bo_alloc", "amdgpu_bo_export", "amdgpu_va_range_alloc",
                                         "amdgpu_bo_va_op" };
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };

    start_config(&c);
    fail_errno = ENOMEM;
    for (unsigned k = 0; k < 4; k++) {
        fail_call = calls[k];
        failing_create(arm_library, STATUS_NO_MEMORY);
        ck_assert_uint_eq(fake_amdgpu.va_ranges, 0);
        ck_assert_uint_eq(fake_amdgpu.mappings, 0);
    }
    stop();
}
END_TEST
#endif

/* A CONFIG answer without VA_BITS, or with no parameter at all, is a
 * device the family cannot give addresses: its start is refused and leaves
 * nothing (and reads nothing past the answer: the ASan lane). */
START_TEST(xe_short_config_answer_refuses_the_start)
{
    static const int params[] = { -1, 1, 3 };

    for (unsigned i = 0; i < 3; i++) {
        struct fake_drm_config c = { .driver = FAKE_XE, .timelines = true, .xe_config_params = params[i] };
        struct kdrm_adapter *a = calloc(1, sizeof(*a));

        ck_assert_ptr_nonnull(a);
        fake_xe_reset();
        a->family = &kdrm_family_xe;
        a->fd = a->render_fd = fake_drm_open(&c);
        ck_assert_int_ge(a->fd, 0);
        a->card_fd = -1;
        a->page_size = (UINT)sysconf(_SC_PAGESIZE);
        kdrm_copy_init(a);
        kdrm_batches_init(a);
        ck_assert_int_eq(a->family->start(a), -ENODEV);
        ck_assert_ptr_null(a->family_data);
        ck_assert(!a->gpu_va);
        ck_assert_uint_eq(fake_xe.vms, 0);
        ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
        fake_drm_close();
        free(a);
    }
}
END_TEST

/* What a kernel errno becomes for the program: a context the kernel gave up
 * after a GPU reset (EIO on i915, ECANCELED on amdgpu and xe) reads as a
 * removed device, as a wedged or unplugged GPU does. */
START_TEST(kernel_errnos_map_to_windows_statuses)
{
    ck_assert_status(kdrm_status_from_errno(0), STATUS_SUCCESS);
    ck_assert_status(kdrm_status_from_errno(-EIO), STATUS_DEVICE_REMOVED);
    ck_assert_status(kdrm_status_from_errno(-ECANCELED), STATUS_DEVICE_REMOVED);
    ck_assert_status(kdrm_status_from_errno(-ENODEV), STATUS_DEVICE_REMOVED);
    ck_assert_status(kdrm_status_from_errno(-ENOMEM), STATUS_NO_MEMORY);
    ck_assert_status(kdrm_status_from_errno(-ENOSPC), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    ck_assert_status(kdrm_status_from_errno(-EBUSY), STATUS_GRAPHICS_ALLOCATION_BUSY);
    ck_assert_status(kdrm_status_from_errno(-EINVAL), STATUS_INVALID_PARAMETER);
    ck_assert_status(kdrm_status_from_errno(-EOPNOTSUPP), STATUS_NOT_SUPPORTED);
    ck_assert_status(kdrm_status_from_errno(-EPERM), STATUS_UNSUCCESSFUL);
}
END_TEST

/* ---- the GPU VA allocator (drm_gpuva.c) ------------------------------------ */

/* First fit at the granule or at a larger alignment the object asks for,
 * ranges never overlap, a freed range is found again, and lookups answer
 * inside an object's bytes only. */
START_TEST(gpuva_first_fit_honours_each_objects_alignment)
{
    struct kdrm_gpuva v;
    struct kdrm_gpuva_range r;
    UINT64 a, b, c, d;

    ck_assert_int_eq(kdrm_gpuva_init(&v, 2u << 20, 1ull << 32, 4096), 0);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 1, 4096, 0, &a), 0);
    ck_assert_uint_eq(a, 2u << 20);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 2, 5000, 65536, &b), 0);    /* 64 KiB-aligned, past `a` */
    ck_assert_uint_eq(b, (2u << 20) + 65536);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 3, 4096, 0, &c), 0);        /* the gap before `b` */
    ck_assert_uint_eq(c, a + 4096);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 4, 4096, 3 * 4096, &d), -EINVAL);
    ck_assert(kdrm_gpuva_find_address(&v, b + 4999, &r));
    ck_assert_uint_eq(r.handle, 2);
    ck_assert(!kdrm_gpuva_find_address(&v, b + 5000, &r));            /* past its bytes, inside its span */
    ck_assert(kdrm_gpuva_find_handle(&v, 3, &r));
    ck_assert_uint_eq(r.start, c);
    kdrm_gpuva_free(&v, a);
    ck_assert(!kdrm_gpuva_find_handle(&v, 1, &r));
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 5, 4096, 0, &d), 0);        /* first fit: `a` again */
    ck_assert_uint_eq(d, a);
    kdrm_gpuva_fini(&v);
}
END_TEST

START_TEST(gpuva_refuses_what_does_not_fit)
{
    struct kdrm_gpuva v;
    UINT64 a;

    ck_assert_int_eq(kdrm_gpuva_init(&v, 0, 1 << 20, 4096), -EINVAL);       /* 0 is never an address */
    ck_assert_int_eq(kdrm_gpuva_init(&v, 4096, 4096, 4096), -EINVAL);       /* empty */
    ck_assert_int_eq(kdrm_gpuva_init(&v, 65536, 65536 + 3 * 65536, 4096), 0);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 1, 0, 0, &a), -ENOSPC);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 1, 4 * 65536, 0, &a), -ENOSPC);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 1, 4096, 0, &a), 0);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 2, 65536, 262144, &a), -ENOSPC);    /* no aligned room left */
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 2, 2 * 65536, 65536, &a), 0);
    ck_assert_uint_eq(a, 2 * 65536);
    ck_assert_int_eq(kdrm_gpuva_alloc(&v, 3, 4096, 0, &a), 0);                /* the gap after the first */
    ck_assert_uint_eq(a, 65536 + 4096);
    kdrm_gpuva_fini(&v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_families");
    TCase *i915 = tcase_create("i915"), *xe = tcase_create("xe"), *watch = tcase_create("watch");
    TCase *discovery = tcase_create("discovery"), *gpuva = tcase_create("miniport");

    tcase_add_test(i915, i915_integrated_is_uma_and_maps_write_back_on_llc);
    tcase_add_test(i915, i915_write_combine_without_llc_or_when_asked);
    tcase_add_test(i915, i915_discrete_places_device_local_in_vram_with_cpu_access);
    tcase_add_test(i915, i915_without_pat_maps_through_the_aperture_or_write_back);
    tcase_add_test(i915, i915_lock_donotwait_on_a_busy_object_is_busy);
    tcase_add_test(i915, i915_existing_sysmem_is_userptr_or_a_copy_when_refused);
    tcase_add_test(i915, i915_copy_of_unreadable_pages_is_refused);
    tcase_add_test(i915, i915_failure_half_way_leaves_no_object);
    tcase_add_test(i915, i915_lock_fails_cleanly_when_the_kernel_will_not_map);
    tcase_add_test(i915, i915_contexts_are_kernel_contexts);
    tcase_add_test(i915, i915_without_hardware_contexts_is_not_supported);
    tcase_add_test(i915, unknown_ioctls_and_handles_get_the_kernels_errno);
    tcase_add_test(i915, fdinfo_counts_region_bytes_not_engine_clocks);
    tcase_add_test(i915, fdinfo_gives_the_render_engines_time);
    tcase_add_test(i915, fake_kernel_refuses_what_the_kernel_refuses);
    tcase_add_test(i915, dumb_buffer_of_4_gib_is_no_video_memory);
    tcase_add_test(xe, xe_integrated_creates_write_back_system_objects);
    tcase_add_test(xe, xe_discrete_device_local_is_visible_vram_write_combined);
    tcase_add_test(xe, xe_existing_sysmem_is_a_copy);
    tcase_add_test(xe, xe_failure_half_way_leaves_no_object);
    tcase_add_test(xe, xe_without_system_memory_does_not_start);
    tcase_add_test(xe, xe_copy_backed_object_follows_submissions);
    tcase_add_test(watch, watcher_eventfd_number_is_not_used_after_close);
    tcase_add_test(watch, watcher_stop_races_kicks_without_touching_a_reused_number);
    tcase_add_test(discovery, pci_domain_above_16_bits_gets_its_own_bus_id_and_luid);
    tcase_add_test(discovery, pci_bus_id_is_unchanged_up_to_16_bits_and_without_sysfs);
    tcase_add_test(discovery, amdgpu_hwmon_values_are_scaled_to_windows_units);
    tcase_add_test(discovery, i915_gt_frequency_in_hz_and_zeros_without_hwmon);
    tcase_add_test(discovery, per_gt_i915_and_xe_clocks);
    tcase_add_test(discovery, missing_or_unreadable_files_give_zeros);
    tcase_add_test(gpuva, kernel_errnos_map_to_windows_statuses);
    tcase_add_test(gpuva, xe_short_config_answer_refuses_the_start);
    tcase_add_test(gpuva, gpuva_first_fit_honours_each_objects_alignment);
    tcase_add_test(gpuva, gpuva_refuses_what_does_not_fit);
    suite_add_tcase(s, gpuva);
    suite_add_tcase(s, i915);
    suite_add_tcase(s, xe);
    suite_add_tcase(s, watch);
    suite_add_tcase(s, discovery);
#ifdef KMT_HAVE_DRM_AMDGPU
    TCase *amdgpu = tcase_create("amdgpu");

    tcase_add_test(amdgpu, amdgpu_discrete_heaps_and_flags);
    tcase_add_test(amdgpu, amdgpu_apu_is_uma_and_never_asks_for_vram);
    tcase_add_test(amdgpu, amdgpu_donotwait_userptr_and_contexts);
    tcase_add_test(amdgpu, amdgpu_userptr_refused_for_shared_memory_is_a_copy);
    tcase_add_test(amdgpu, amdgpu_failure_half_way_leaves_no_object);
    tcase_add_test(amdgpu, amdgpu_fresh_device_is_on_the_adapters_file);
    tcase_add_test(amdgpu, amdgpu_device_opened_first_elsewhere_is_used_on_its_file);
    tcase_add_test(amdgpu, amdgpu_adapter_started_again_follows_the_librarys_device);
    suite_add_tcase(s, amdgpu);
#endif
    return kmt_test_run(s);
}
