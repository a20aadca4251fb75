/*
 * The DRM miniport's sharing DDIs (KmtDdiExport/ImportAllocation,
 * KmtDdiExport/ImportFence) against the fake kernel (fake_drm.c), on any
 * machine.  Two adapters stand for two processes: each on its own open
 * file of the fake device, as two processes each open the render node, so
 * GEM and syncobj handles of one are unknown to the other and only the
 * dma-buf and syncobj fds carry objects across.  Checked: the same bytes on
 * both sides, the importer's own GPU VA, GEM handles the kernel gives twice
 * on one file (reference-counted, closed by the last allocation), a fence
 * value seen after import and a signal on one side raised on the other,
 * and every bad input answered with a status and nothing left behind.
 */
#define _GNU_SOURCE
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

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

#define SIZE (64u << 10)

static atomic_uint fence_interrupts;

static void APIENTRY notify(HANDLE adapter, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq)
{
    (void)adapter;
    if (irq->InterruptType == DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED)
        atomic_fetch_add(&fence_interrupts, 1);
}

static const struct kdrm_family *family_of(enum fake_drm_driver driver)
{
#ifdef KMT_HAVE_DRM_AMDGPU
    if (driver == FAKE_AMDGPU)
        return &kdrm_family_amdgpu;
#endif
    return driver == FAKE_XE ? &kdrm_family_xe : &kdrm_family_i915;
}

/* An adapter on `fd`, started as DxgkDdiAddDevice and StartDevice do it. */
static struct kdrm_adapter *adapter_on(enum fake_drm_driver driver, int fd, bool fences)
{
    struct kdrm_adapter *a = calloc(1, sizeof(*a));

    ck_assert_ptr_nonnull(a);
    ck_assert_int_ge(fd, 0);
    a->family = family_of(driver);
    a->fd = a->render_fd = fd;
    a->card_fd = -1;
    a->page_size = (UINT)sysconf(_SC_PAGESIZE);
    a->dxgkrnl.DxgkCbNotifyInterrupt = notify;
    if (fences)
        a->caps |= KMT_DRM_CAP_SYNCOBJ | KMT_DRM_CAP_SYNCOBJ_TIMELINE | KMT_DRM_CAP_SYNCOBJ_EVENTFD |
                   KMT_DRM_CAP_FENCES;
    kdrm_exec_init(a);
    kdrm_copy_init(a);
    kdrm_batches_init(a);
    kdrm_share_init(a);
    ck_assert_int_eq(a->family->start(a), 0);
    ck_assert_int_eq(a->family->memory(a, &a->memory), 0);
    return a;
}

/* Two "processes": the fake device's first file and a second one. */
static struct kdrm_adapter *first, *second;

static void start2(enum fake_drm_driver driver)
{
    struct fake_drm_config c = { .driver = driver, .has_llc = true, .timelines = true };

    fake_xe_reset();
    first = adapter_on(driver, fake_drm_open(&c), true);
#ifdef KMT_HAVE_DRM_AMDGPU
    if (driver == FAKE_AMDGPU)
        fake_amdgpu_new_process();       /* else libdrm_amdgpu hands back the first file's device */
#endif
    second = adapter_on(driver, fake_drm_open_file(), true);
    ck_assert_uint_ne(fake_drm_file_of(first->fd), fake_drm_file_of(second->fd));
}

static void adapter_stop(struct kdrm_adapter *a)
{
    kdrm_exec_stop(a);
    ck_assert_uint_eq(atomic_load(&a->buffers), 0);
    ck_assert_uint_eq(atomic_load(&a->fences), 0);
    ck_assert(list_empty(&a->shares));
    if (a->family->stop)
        a->family->stop(a);
    ck_assert_uint_eq(atomic_load(&a->syncobjs), 0);     /* xe's bind timeline goes with the family */
    pthread_mutex_destroy(&a->exec.lock);
    pthread_mutex_destroy(&a->share_lock);
    free(a);
}

/* Nothing left in the kernel by either side. */
static void stop2(void)
{
    adapter_stop(first);
    adapter_stop(second);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
    ck_assert_uint_eq(fake_xe.mappings, 0);
    ck_assert_uint_eq(fake_xe.closed_while_bound, 0);
#ifdef KMT_HAVE_DRM_AMDGPU
    ck_assert_uint_eq(fake_amdgpu.left_at_deinit, 0);            /* every range unmapped and freed */
    ck_assert_uint_eq(fake_amdgpu.bo_freed_mapped, 0);
    ck_assert_uint_eq(fake_amdgpu.range_freed_mapped, 0);
#endif
    fake_drm_close();
    kdrm_fault_arm(NULL, 0, 0);
}

static KMT_DRM_ALLOCATION_DESC desc_of(UINT64 size, UINT flags)
{
    return (KMT_DRM_ALLOCATION_DESC){ .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION, .Size = size,
                                      .Flags = flags };
}

static struct kdrm_bo *create_on(struct kdrm_adapter *a, KMT_DRM_ALLOCATION_DESC *desc)
{
    DXGK_ALLOCATIONINFO info = { .pPrivateDriverData = desc, .PrivateDriverDataSize = sizeof(*desc) };
    DXGKARG_CREATEALLOCATION ca = { .NumAllocations = 1, .pAllocationInfo = &info };

    ck_assert_status(kdrm_create_allocation(a, &ca), STATUS_SUCCESS);
    return info.hAllocation;
}

static void destroy_on(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    DXGKARG_DESTROYALLOCATION da = { .NumAllocations = 1, .pAllocationList = (HANDLE *)&bo };

    ck_assert_status(kdrm_destroy_allocation(a, &da), STATUS_SUCCESS);
}

static int export_of(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    int fd = -2;

    ck_assert_status(kdrm_export_allocation(a, bo, &fd), STATUS_SUCCESS);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    return fd;
}

static NTSTATUS import_on(struct kdrm_adapter *a, int fd, const KMT_DRM_ALLOCATION_DESC *desc, UINT64 size,
                          struct kdrm_bo **out)
{
    KMTARG_IMPORTALLOCATION args = { .Fd = fd, .Size = size, .pPrivateDriverData = desc,
                                     .PrivateDriverDataSize = desc ? sizeof(*desc) : 0,
                                     .hAllocation = (HANDLE)1 };
    NTSTATUS status = kdrm_import_allocation(a, &args);

    if (status)
        ck_assert_ptr_null(args.hAllocation);
    /* the core's allocation reports the importer's own address */
    ck_assert_uint_eq(args.GpuVirtualAddress, status ? 0 : ((struct kdrm_bo *)args.hAllocation)->gpu_va);
    *out = args.hAllocation;
    return status;
}

/* Lock, write `byte` at `offset`, unlock. */
static void poke(struct kdrm_adapter *a, struct kdrm_bo *bo, UINT offset, uint8_t byte)
{
    DXGKARG_LOCK lock = { .hAllocation = bo };
    DXGKARG_UNLOCK unlock = { .hAllocation = bo };

    ck_assert_status(kdrm_lock(a, &lock), STATUS_SUCCESS);
    ((uint8_t *)lock.pData)[offset] = byte;
    unlock.pData = lock.pData;
    ck_assert_status(kdrm_unlock(a, &unlock), STATUS_SUCCESS);
}

static uint8_t peek(struct kdrm_adapter *a, struct kdrm_bo *bo, UINT offset)
{
    DXGKARG_LOCK lock = { .hAllocation = bo };
    DXGKARG_UNLOCK unlock = { .hAllocation = bo };
    uint8_t byte;

    ck_assert_status(kdrm_lock(a, &lock), STATUS_SUCCESS);
    byte = ((uint8_t *)lock.pData)[offset];
    unlock.pData = lock.pData;
    ck_assert_status(kdrm_unlock(a, &unlock), STATUS_SUCCESS);
    return byte;
}

/* ---- allocations ------------------------------------------------------ */

static void same_bytes_across_files(enum fake_drm_driver driver, UINT flags)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, flags);
    struct kdrm_bo *mine, *theirs;
    int fd;

    start2(driver);
    mine = create_on(first, &desc);
    poke(first, mine, 0, 0x11);
    poke(first, mine, SIZE - 1, 0x22);
    fd = export_of(first, mine);
    ck_assert_status(import_on(second, fd, &desc, 0, &theirs), STATUS_SUCCESS);
    close(fd);                           /* the import keeps what it needs */

    ck_assert_uint_ne(theirs->handle, mine->handle);             /* a handle of the second file */
    ck_assert_uint_eq(fake_drm_object(theirs->handle)->file, fake_drm_file_of(second->fd));
    ck_assert_uint_eq(fake_drm_object(theirs->handle)->memory, mine->handle);
    ck_assert_uint_eq(theirs->size, mine->size);
    ck_assert_uint_eq(theirs->flags, flags);
    ck_assert_uint_ne(theirs->gpu_va, 0);                        /* in the importer's own VM */
    ck_assert_uint_eq(peek(second, theirs, 0), 0x11);
    ck_assert_uint_eq(peek(second, theirs, SIZE - 1), 0x22);
    poke(second, theirs, 4096, 0x33);
    ck_assert_uint_eq(peek(first, mine, 4096), 0x33);
    ck_assert_uint_eq(atomic_load(&second->buffers), 1);

    destroy_on(first, mine);             /* the importer's object outlives the creator's */
    ck_assert_uint_eq(peek(second, theirs, 0), 0x11);
    destroy_on(second, theirs);
    stop2();
}

START_TEST(i915_export_import_gives_the_same_bytes_on_another_file)
{
    same_bytes_across_files(FAKE_I915, 0);
}
END_TEST

START_TEST(xe_import_is_bound_in_the_importers_vm)
{
    unsigned before;

    same_bytes_across_files(FAKE_XE, KMT_DRM_ALLOCATION_WRITECOMBINE);
    /* and the binds themselves: one per side while both live */
    start2(FAKE_XE);
    {
        KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
        struct kdrm_bo *mine = create_on(first, &desc), *theirs;
        int fd = export_of(first, mine);

        before = fake_xe.mappings;
        ck_assert_status(import_on(second, fd, &desc, 0, &theirs), STATUS_SUCCESS);
        ck_assert_uint_eq(fake_xe.mappings, before + 1);
        destroy_on(second, theirs);
        ck_assert_uint_eq(fake_xe.mappings, before);
        destroy_on(first, mine);
        close(fd);
    }
    stop2();
}
END_TEST

/* The kernel gives a file the handle it already has for a buffer, with no
 * reference of its own: the creator importing its own export, or a second
 * import on one file.  Each allocation over it keeps it open; the last
 * one closes it, whichever order they go in. */
static void handle_given_twice(enum fake_drm_driver driver)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
    struct kdrm_bo *mine, *again, *theirs, *theirs2;
    UINT32 handle;
    int fd;

    start2(driver);
    mine = create_on(first, &desc);
    handle = mine->handle;
    fd = export_of(first, mine);
    ck_assert_status(import_on(first, fd, &desc, 0, &again), STATUS_SUCCESS);
    ck_assert_uint_eq(again->handle, handle);
    ck_assert_uint_eq(again->gpu_va, mine->gpu_va);              /* one object, one address */
    ck_assert_uint_eq(fake_drm.live_objects, 1);
    poke(first, again, 8, 0x44);

    destroy_on(first, mine);             /* the creator's first */
    ck_assert_ptr_nonnull(fake_drm_object(handle));
    ck_assert_uint_eq(peek(first, again, 8), 0x44);

    ck_assert_status(import_on(second, fd, &desc, 0, &theirs), STATUS_SUCCESS);
    ck_assert_status(import_on(second, fd, &desc, 0, &theirs2), STATUS_SUCCESS);
    ck_assert_uint_eq(theirs2->handle, theirs->handle);
    ck_assert_uint_eq(fake_drm.live_objects, 2);                 /* one handle per file */
    destroy_on(second, theirs2);
    ck_assert_ptr_nonnull(fake_drm_object(theirs->handle));
    ck_assert_uint_eq(peek(second, theirs, 8), 0x44);
    destroy_on(second, theirs);
    ck_assert_uint_eq(fake_drm.live_objects, 1);

    destroy_on(first, again);
    ck_assert_ptr_null(fake_drm_object(handle));                 /* closed by the last one */
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    close(fd);
    stop2();
}

START_TEST(a_handle_given_twice_is_closed_by_the_last_allocation)
{
    handle_given_twice(FAKE_I915);
}
END_TEST

#ifdef KMT_HAVE_DRM_AMDGPU
/* ---- amdgpu: libdrm_amdgpu owns the file's handles ------------------------ */

START_TEST(amdgpu_export_import_gives_the_same_bytes_on_another_file)
{
    same_bytes_across_files(FAKE_AMDGPU, 0);
}
END_TEST

/* The importer's object is mapped in its own VM as a created one is, and
 * unmapped before libdrm_amdgpu closes it (stop2 checks the order). */
START_TEST(amdgpu_import_is_mapped_in_the_importers_vm)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, KMT_DRM_ALLOCATION_DEVICE_LOCAL);
    struct kdrm_bo *mine, *theirs;
    unsigned before;
    int fd;

    start2(FAKE_AMDGPU);
    mine = create_on(first, &desc);
    fd = export_of(first, mine);
    before = fake_amdgpu.mappings;
    ck_assert_status(import_on(second, fd, &desc, 0, &theirs), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_amdgpu.mappings, before + 1);
    ck_assert_uint_ne(theirs->gpu_va, mine->gpu_va);             /* a range of its own */
    ck_assert_uint_eq(theirs->gpu_va % (64u << 10), 0);           /* VRAM's, as create aligns it */
    destroy_on(second, theirs);
    ck_assert_uint_eq(fake_amdgpu.mappings, before);
    destroy_on(first, mine);
    close(fd);
    stop2();
}
END_TEST

START_TEST(amdgpu_a_handle_given_twice_is_closed_by_the_last_allocation)
{
    handle_given_twice(FAKE_AMDGPU);
}
END_TEST

/* A VA the importer cannot map gives libdrm_amdgpu's record back, which
 * closes the handle; a dma-buf fd that is none is the caller's error. */
START_TEST(amdgpu_failed_imports_leave_nothing)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
    struct kdrm_bo *mine, *bo;
    int fd, not_a_buffer;

    start2(FAKE_AMDGPU);
    mine = create_on(first, &desc);
    fd = export_of(first, mine);
    kdrm_fault_arm("amdgpu_bo_va_op", 1, ENOMEM);
    ck_assert_status(import_on(second, fd, &desc, 0, &bo), STATUS_NO_MEMORY);
    kdrm_fault_arm(NULL, 0, 0);
    ck_assert_uint_eq(fake_drm.live_objects, 1);                 /* the creator's only */
    ck_assert(list_empty(&second->shares));
    kdrm_fault_arm("amdgpu_bo_import", 1, ENOMEM);
    ck_assert_status(import_on(second, fd, &desc, 0, &bo), STATUS_NO_MEMORY);
    kdrm_fault_arm(NULL, 0, 0);
    ck_assert_uint_eq(fake_drm.live_objects, 1);
    ck_assert_int_ge(not_a_buffer = memfd_create("not-a-dma-buf", MFD_CLOEXEC), 0);
    ck_assert_int_eq(ftruncate(not_a_buffer, SIZE), 0);
    ck_assert_status(import_on(second, not_a_buffer, &desc, 0, &bo), STATUS_INVALID_PARAMETER);
    close(not_a_buffer);
    /* and the next import works */
    ck_assert_status(import_on(second, fd, &desc, 0, &bo), STATUS_SUCCESS);
    destroy_on(second, bo);
    close(fd);
    destroy_on(first, mine);
    stop2();
}
END_TEST
#endif

/* Exporting again gives another fd of the same dma-buf. */
START_TEST(exports_of_one_allocation_name_one_buffer)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
    struct kdrm_bo *mine, *a, *b;
    int fd1, fd2;

    start2(FAKE_I915);
    mine = create_on(first, &desc);
    fd1 = export_of(first, mine);
    fd2 = export_of(first, mine);
    ck_assert_int_ne(fd1, fd2);
    ck_assert_uint_eq(fake_drm.dmabufs, 1);
    ck_assert_status(import_on(second, fd1, &desc, 0, &a), STATUS_SUCCESS);
    ck_assert_status(import_on(second, fd2, &desc, 0, &b), STATUS_SUCCESS);
    ck_assert_uint_eq(a->handle, b->handle);
    destroy_on(second, a);
    destroy_on(second, b);
    destroy_on(first, mine);
    close(fd1);
    close(fd2);
    stop2();
}
END_TEST

/* Threads of one process import and drop the buffer the process created
 * while the creator's allocation stays: the handle is never closed under
 * the creator. */
struct churn {
    struct kdrm_adapter *a;
    int fd;
    const KMT_DRM_ALLOCATION_DESC *desc;
};

static void *churn_thread(void *arg)
{
    struct churn *c = arg;

    for (int i = 0; i < 200; i++) {
        struct kdrm_bo *bo;

        ck_assert_status(import_on(c->a, c->fd, c->desc, 0, &bo), STATUS_SUCCESS);
        destroy_on(c->a, bo);
    }
    return NULL;
}

START_TEST(concurrent_imports_and_releases_keep_the_creators_handle)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
    struct kdrm_bo *mine;
    struct churn c;
    pthread_t t[2];

    start2(FAKE_I915);
    mine = create_on(first, &desc);
    poke(first, mine, 0, 0x55);
    c = (struct churn){ first, export_of(first, mine), &desc };
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn_thread, &c), 0);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    ck_assert_ptr_nonnull(fake_drm_object(mine->handle));
    ck_assert_uint_eq(peek(first, mine, 0), 0x55);
    destroy_on(first, mine);
    close(c.fd);
    stop2();
}
END_TEST

/* The program's own pages are not the adapter's to hand out. */
START_TEST(program_memory_is_not_exported)
{
    struct fake_drm_config c = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
    void *mem = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    DXGK_ALLOCATIONINFO info = { .Size = SIZE, .pKmtSystemMem = mem };
    DXGKARG_CREATEALLOCATION ca = { .NumAllocations = 1, .pAllocationInfo = &info };
    int fd = 7;

    info.Flags.ExistingSysMem = 1;
    for (int refused = 0; refused < 2; refused++) {
        c.userptr_refused = refused;     /* userptr, then a copy-backed object */
        fake_xe_reset();
        first = adapter_on(FAKE_I915, fake_drm_open(&c), true);
        second = adapter_on(FAKE_I915, fake_drm_open_file(), true);
        ck_assert_status(kdrm_create_allocation(first, &ca), STATUS_SUCCESS);
        ck_assert_uint_eq(((struct kdrm_bo *)info.hAllocation)->backing,
                          refused ? KMT_DRM_BACKING_COPY : KMT_DRM_BACKING_USERPTR);
        ck_assert_status(kdrm_export_allocation(first, info.hAllocation, &fd), STATUS_NOT_SUPPORTED);
        ck_assert_int_eq(fd, -1);
        ck_assert_uint_eq(fake_drm.prime_exports, 0);
        destroy_on(first, info.hAllocation);
        stop2();
    }
    munmap(mem, SIZE);
}
END_TEST

START_TEST(bad_imports_are_refused_without_a_trace)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0), bad = desc;
    struct kdrm_bo *mine, *bo;
    int fd, memfd, closed;

    start2(FAKE_I915);
    mine = create_on(first, &desc);
    fd = export_of(first, mine);
    memfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
    ck_assert_int_eq(ftruncate(memfd, SIZE), 0);
    closed = dup(fd);
    close(closed);

    ck_assert_status(import_on(second, -1, &desc, 0, &bo), STATUS_INVALID_PARAMETER);
    ck_assert_status(import_on(second, closed, &desc, 0, &bo), STATUS_INVALID_PARAMETER);
    ck_assert_status(import_on(second, memfd, &desc, 0, &bo), STATUS_INVALID_PARAMETER);
    ck_assert_status(import_on(second, fd, NULL, 0, &bo), STATUS_INVALID_PARAMETER);   /* no size at all */
    ck_assert_status(import_on(second, fd, &desc, 2 * SIZE, &bo), STATUS_INVALID_PARAMETER);
    bad.Version++;
    ck_assert_status(import_on(second, fd, &bad, 0, &bo), STATUS_INVALID_PARAMETER);
    bad = desc;
    bad.Flags = ~0u;
    ck_assert_status(import_on(second, fd, &bad, 0, &bo), STATUS_INVALID_PARAMETER);
    kdrm_fault_arm("PRIME_FD_TO_HANDLE", 1, ENOMEM);
    ck_assert_status(import_on(second, fd, &desc, 0, &bo), STATUS_NO_MEMORY);
    ck_assert_uint_eq(fake_drm.live_objects, 1);
    ck_assert_uint_eq(atomic_load(&second->buffers), 0);
    ck_assert(list_empty(&second->shares));

    /* a standard allocation has no private data: the core's size serves */
    ck_assert_status(import_on(second, fd, NULL, SIZE, &bo), STATUS_SUCCESS);
    destroy_on(second, bo);
    close(memfd);
    close(fd);
    destroy_on(first, mine);
    stop2();
}
END_TEST

/* A GPU VA the importer cannot get closes the handle PRIME gave. */
START_TEST(failed_family_import_closes_the_new_handle)
{
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
    struct kdrm_bo *mine, *bo;
    int fd;

    start2(FAKE_XE);
    mine = create_on(first, &desc);
    fd = export_of(first, mine);
    kdrm_fault_arm("XE_VM_BIND", 1, ENOMEM);
    ck_assert_status(import_on(second, fd, &desc, 0, &bo), STATUS_NO_MEMORY);
    kdrm_fault_arm(NULL, 0, 0);
    ck_assert_uint_eq(fake_drm.live_objects, 1);                 /* the creator's only */
    ck_assert(list_empty(&second->shares));
    close(fd);
    destroy_on(first, mine);
    stop2();
}
END_TEST

START_TEST(import_without_a_family_importer_is_not_supported)
{
    struct kdrm_adapter a = { .family = &kdrm_family_generic, .fd = -1, .page_size = 4096 };
    KMTARG_IMPORTALLOCATION args = { .Fd = 0, .Size = SIZE };

    ck_assert_status(kdrm_import_allocation(&a, &args), STATUS_NOT_SUPPORTED);
    ck_assert_ptr_null(args.hAllocation);
}
END_TEST

/* ---- fences -------------------------------------------------------------- */

static struct kdrm_fence *fence_on(struct kdrm_adapter *a, _Atomic UINT64 *value, UINT64 initial)
{
    KMTARG_CREATEFENCE args = { .pValue = value, .InitialValue = initial };

    atomic_store(value, initial);
    ck_assert_status(kdrm_create_fence(a, &args), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(args.hDriverFence);
    return args.hDriverFence;
}

static bool reaches(_Atomic UINT64 *value, UINT64 want)
{
    for (int i = 0; i < 10000 && atomic_load(value) < want; i++)
        usleep(1000);                    /* the watcher's thread raises it */
    return atomic_load(value) >= want;
}

START_TEST(fence_signalled_on_either_side_is_seen_on_the_other)
{
    _Atomic UINT64 mine_value, their_value = 0;
    struct kdrm_fence *mine, *theirs;
    KMTARG_IMPORTFENCE args = { .pValue = &their_value };
    int fd = -2;

    start2(FAKE_I915);
    mine = fence_on(first, &mine_value, 5);
    ck_assert_status(kdrm_export_fence(first, mine, &fd), STATUS_SUCCESS);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    args.Fd = fd;
    ck_assert_status(kdrm_import_fence(second, &args), STATUS_SUCCESS);
    close(fd);
    theirs = args.hDriverFence;
    ck_assert_ptr_nonnull(theirs);
    ck_assert_uint_ne(theirs->syncobj, 0);
    ck_assert_uint_eq(atomic_load(&their_value), 5);             /* the value at import */

    atomic_store(&their_value, 9);       /* the core's CPU signal in the second process */
    ck_assert_status(kdrm_signal_fence(second, theirs, 9), STATUS_SUCCESS);
    ck_assert(reaches(&mine_value, 9));
    atomic_store(&mine_value, 12);
    ck_assert_status(kdrm_signal_fence(first, mine, 12), STATUS_SUCCESS);
    ck_assert(reaches(&their_value, 12));
    ck_assert_uint_ge(atomic_load(&fence_interrupts), 2);

    kdrm_destroy_fence(first, mine);     /* the creator goes first: the import still works */
    ck_assert_uint_eq(fake_drm.live_syncobjs, 1);
    atomic_store(&their_value, 13);
    ck_assert_status(kdrm_signal_fence(second, theirs, 13), STATUS_SUCCESS);
    kdrm_destroy_fence(second, theirs);
    stop2();
}
END_TEST

START_TEST(bad_fence_exports_and_imports)
{
    _Atomic UINT64 value;
    struct kdrm_fence *mine;
    struct kdrm_bo *bo;
    KMT_DRM_ALLOCATION_DESC desc = desc_of(SIZE, 0);
    KMTARG_IMPORTFENCE args = { .pValue = &value };
    int fd = 3, dmabuf, syncfd;

    start2(FAKE_I915);
    ck_assert_status(kdrm_export_fence(first, NULL, &fd), STATUS_NOT_SUPPORTED);   /* memory only */
    ck_assert_int_eq(fd, -1);
    mine = fence_on(first, &value, 0);
    ck_assert_status(kdrm_export_fence(second, mine, &fd), STATUS_INVALID_PARAMETER); /* not its fence */
    ck_assert_status(kdrm_export_fence(first, mine, &syncfd), STATUS_SUCCESS);

    bo = create_on(first, &desc);
    dmabuf = export_of(first, bo);
    for (int i = 0; i < 3; i++) {
        args.Fd = i == 0 ? -1 : i == 1 ? dmabuf : 1000;          /* none, a dma-buf, not open */
        args.hDriverFence = (HANDLE)1;
        ck_assert_status(kdrm_import_fence(second, &args), STATUS_INVALID_PARAMETER);
        ck_assert_ptr_null(args.hDriverFence);
    }
    args.Fd = syncfd;
    args.pValue = NULL;
    ck_assert_status(kdrm_import_fence(second, &args), STATUS_INVALID_PARAMETER);
    second->caps &= ~KMT_DRM_CAP_FENCES;                         /* an adapter of memory-only fences */
    args.pValue = &value;
    ck_assert_status(kdrm_import_fence(second, &args), STATUS_NOT_SUPPORTED);
    second->caps |= KMT_DRM_CAP_FENCES;
    kdrm_fault_arm("SYNCOBJ_FD_TO_HANDLE", 1, ENOMEM);
    ck_assert_status(kdrm_import_fence(second, &args), STATUS_NO_MEMORY);
    /* an import made to fail (the allocation's fd as a fence) left no handle */
    ck_assert_uint_eq(fake_drm.live_syncobjs, 1);
    ck_assert_uint_eq(atomic_load(&second->fences), 0);

    close(dmabuf);
    close(syncfd);
    destroy_on(first, bo);
    kdrm_destroy_fence(first, mine);
    stop2();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("drm_share");
    TCase *t = tcase_create("share");

    tcase_set_timeout(t, 60);
    tcase_add_test(t, i915_export_import_gives_the_same_bytes_on_another_file);
    tcase_add_test(t, xe_import_is_bound_in_the_importers_vm);
    tcase_add_test(t, a_handle_given_twice_is_closed_by_the_last_allocation);
#ifdef KMT_HAVE_DRM_AMDGPU
    tcase_add_test(t, amdgpu_export_import_gives_the_same_bytes_on_another_file);
    tcase_add_test(t, amdgpu_import_is_mapped_in_the_importers_vm);
    tcase_add_test(t, amdgpu_a_handle_given_twice_is_closed_by_the_last_allocation);
    tcase_add_test(t, amdgpu_failed_imports_leave_nothing);
#endif
    tcase_add_test(t, exports_of_one_allocation_name_one_buffer);
    tcase_add_test(t, concurrent_imports_and_releases_keep_the_creators_handle);
    tcase_add_test(t, program_memory_is_not_exported);
    tcase_add_test(t, bad_imports_are_refused_without_a_trace);
    tcase_add_test(t, failed_family_import_closes_the_new_handle);
    tcase_add_test(t, import_without_a_family_importer_is_not_supported);
    tcase_add_test(t, fence_signalled_on_either_side_is_seen_on_the_other);
    tcase_add_test(t, bad_fence_exports_and_imports);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return kmt_test_run(suite());
}
