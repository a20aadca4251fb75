/*
 * The i915, xe and amdgpu families against a fake kernel (fake_drm.c, and
 * fake_amdgpu.c for libdrm_amdgpu), on any machine: no Intel or AMD GPU
 * reaches the QEMU lane, so this is where their use of each driver's uAPI
 * is checked.  An adapter is put together by hand (a
 * memfd in place of the render node) and driven through the miniport's own
 * DDIs: create, lock, write, read back what the "kernel" holds, unlock,
 * destroy, with the flags each placement and caching mode needs, and
 * failures from the kernel part-way through a multi-allocation create.
 */
#define _GNU_SOURCE
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>
#include <i915_drm.h>
#ifdef KMT_HAVE_DRM_AMDGPU
#include <amdgpu_drm.h>
#endif

#include "test_util.h"
#include "fake_drm.h"
#include "miniports/drm/drm_miniport.h"

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

static void start_config(const struct fake_drm_config *c)
{
    adapter = calloc(1, sizeof(*adapter));
    ck_assert_ptr_nonnull(adapter);
    adapter->family = family_of(c->driver);
    adapter->fd = adapter->render_fd = fake_drm_open(c);
    ck_assert_int_ge(adapter->fd, 0);
    adapter->card_fd = -1;
    adapter->page_size = (UINT)sysconf(_SC_PAGESIZE);
    kdrm_copy_init(adapter);             /* as DxgkDdiAddDevice does */
    ck_assert_int_eq(adapter->family->start(adapter), 0);
    ck_assert_int_eq(adapter->family->memory(adapter, &adapter->memory), 0);
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

/* Every test ends with nothing left in the kernel. */
static void stop(void)
{
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    if (adapter->family->stop)
        adapter->family->stop(adapter);
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
    expect_memory(false, kdrm_system_share(), 6ull << 30, 0);    /* the system region's unallocated */

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
    ck_assert_uint_eq(adapter->memory.nonlocal_free, 6ull << 30);

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

    ck_assert_status(create(4096, 0, &desc, &info), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_drm.objects[desc.GemHandle].placement, 1);
    ck_assert_uint_eq(info.SupportedReadSegmentSet, 2);
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

/* libdrm_amdgpu failing at the n-th alloc or export of a resource's
 * allocations (the miniport's fault hook names the library calls). */
START_TEST(amdgpu_failure_half_way_leaves_no_object)
{
    static const char *const calls[] = { "amdgpu_bo_alloc", "amdgpu_bo_export" };
    struct fake_drm_config c = { .driver = FAKE_AMDGPU };

    start_config(&c);
    fail_errno = ENOMEM;
    for (unsigned k = 0; k < 2; k++) {
        fail_call = calls[k];
        failing_create(arm_library, STATUS_NO_MEMORY);
    }
    stop();
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("drm_families");
    TCase *i915 = tcase_create("i915"), *xe = tcase_create("xe");

    tcase_add_test(i915, i915_integrated_is_uma_and_maps_write_back_on_llc);
    tcase_add_test(i915, i915_write_combine_without_llc_or_when_asked);
    tcase_add_test(i915, i915_discrete_places_device_local_in_vram_with_cpu_access);
    tcase_add_test(i915, i915_lock_donotwait_on_a_busy_object_is_busy);
    tcase_add_test(i915, i915_existing_sysmem_is_userptr_or_a_copy_when_refused);
    tcase_add_test(i915, i915_failure_half_way_leaves_no_object);
    tcase_add_test(i915, i915_lock_fails_cleanly_when_the_kernel_will_not_map);
    tcase_add_test(i915, i915_contexts_are_kernel_contexts);
    tcase_add_test(i915, unknown_ioctls_and_handles_get_the_kernels_errno);
    tcase_add_test(i915, dumb_buffer_of_4_gib_is_no_video_memory);
    tcase_add_test(xe, xe_integrated_creates_write_back_system_objects);
    tcase_add_test(xe, xe_discrete_device_local_is_visible_vram_write_combined);
    tcase_add_test(xe, xe_existing_sysmem_is_a_copy);
    tcase_add_test(xe, xe_failure_half_way_leaves_no_object);
    tcase_add_test(xe, xe_without_system_memory_does_not_start);
    tcase_add_test(xe, xe_copy_backed_object_follows_submissions);
    suite_add_tcase(s, i915);
    suite_add_tcase(s, xe);
#ifdef KMT_HAVE_DRM_AMDGPU
    TCase *amdgpu = tcase_create("amdgpu");

    tcase_add_test(amdgpu, amdgpu_discrete_heaps_and_flags);
    tcase_add_test(amdgpu, amdgpu_apu_is_uma_and_never_asks_for_vram);
    tcase_add_test(amdgpu, amdgpu_donotwait_userptr_and_contexts);
    tcase_add_test(amdgpu, amdgpu_userptr_refused_for_shared_memory_is_a_copy);
    tcase_add_test(amdgpu, amdgpu_failure_half_way_leaves_no_object);
    suite_add_tcase(s, amdgpu);
#endif
    return kmt_test_run(s);
}
