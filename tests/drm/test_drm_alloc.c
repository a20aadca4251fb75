/*
 * DRM miniport on real kernel drivers: allocations are the driver's GEM
 * objects.  Every check looks at the kernel's side too: the GEM handle the
 * miniport reports, a mapping of it made here with the driver's own
 * ioctls, and a second GEM_CLOSE that must fail once the object is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>
#include <virtgpu_drm.h>

#include "drm_test.h"

#define SIZE (64u * 1024u)

static void fill(void *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size / 4; i++)
        ((uint32_t *)p)[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

static bool holds(const void *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size / 4; i++)
        if (((const uint32_t *)p)[i] != ((uint32_t)(i * 2654435761u) ^ seed))
            return false;
    return true;
}

/* What a client writing to a virtio_gpu object itself owes the host: the
 * host copy is the GPU's (and, on a virgl host, what a read fetches). */
static void raw_flush(const struct drm_test_adapter *a, int fd, UINT handle, UINT64 size)
{
    struct drm_virtgpu_3d_transfer_to_host t = { .bo_handle = handle };

    if (strcmp(a->umd.Family, "virtio_gpu"))
        return;
    t.box.w = a->umd.PageSize / 4;
    t.box.h = (UINT)(size / a->umd.PageSize);
    t.box.d = 1;
    ck_assert_int_eq(drmIoctl(fd, DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, &t), 0);
}

static void assert_closed(int fd, UINT handle)
{
    ck_assert_msg(drm_test_gem_close_errno(fd, handle) == EINVAL,
                  "GEM handle %u is still open on fd %d", handle, fd);
}

START_TEST(create_write_read_back_destroy)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    drm_test_check_expected(a, n);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        KMT_DRM_ALLOCATION_DESC desc;
        KMT_DRM_ALLOCATION_INFO info;
        KMT_DRM_STATS stats;
        void *p, *raw;

        ck_assert_status(drm_test_create(device, 1, SIZE, &alloc, NULL, &desc), STATUS_SUCCESS);
        info = drm_test_query(a[i].handle, alloc);
        ck_assert_uint_eq(desc.Backing, KMT_DRM_BACKING_BO);
        ck_assert_uint_eq(desc.AllocatedSize, SIZE);
        ck_assert_uint_ne(desc.GemHandle, 0);
        ck_assert_uint_eq(desc.GemHandle, info.GemHandle);
        ck_assert_int_eq(info.Fd, a[i].umd.DrmFd);
        ck_assert_uint_eq(info.Size, SIZE);
        stats = drm_test_stats(a[i].handle);
        ck_assert_uint_eq(stats.Buffers, 1);
        ck_assert_uint_eq(stats.BytesAllocated, SIZE);
        ck_assert_uint_eq(stats.Bindings, 1);

        ck_assert_status(drm_test_lock(device, alloc, 0, &p), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Mappings, 1);
        fill(p, SIZE, 0x1234 + i);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Mappings, 0);

        /* the bytes are in the kernel's object, not in a copy of ours */
        if ((raw = drm_test_raw_map(&a[i], info.Fd, info.GemHandle, SIZE))) {
            ck_assert(holds(raw, SIZE, 0x1234 + i));
            fill(raw, SIZE, 0x7777);
            munmap(raw, SIZE);
            raw_flush(&a[i], info.Fd, info.GemHandle, SIZE);
        }
        ck_assert_status(drm_test_lock(device, alloc, 0, &p), STATUS_SUCCESS);
        ck_assert(holds(p, SIZE, raw ? 0x7777 : 0x1234 + i));
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);

        ck_assert_status(drm_test_destroy(device, &alloc, 1), STATUS_SUCCESS);
        assert_closed(info.Fd, info.GemHandle);
        drm_test_assert_no_buffers(a[i].handle);
        drm_test_destroy_device(device);
    }
}
END_TEST

START_TEST(virtio_resource_is_the_size_asked)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device, alloc;
        KMT_DRM_ALLOCATION_INFO info;
        struct drm_virtgpu_resource_info ri = { 0 };

        if (strcmp(a[i].umd.Family, "virtio_gpu"))
            continue;
        device = drm_test_create_device(a[i].handle);
        ck_assert_status(drm_test_create(device, 1, 3 * 4096 + 1, &alloc, NULL, NULL), STATUS_SUCCESS);
        info = drm_test_query(a[i].handle, alloc);
        ri.bo_handle = info.GemHandle;
        ck_assert_int_eq(drmIoctl(info.Fd, DRM_IOCTL_VIRTGPU_RESOURCE_INFO, &ri), 0);
        ck_assert_uint_eq(ri.size, 4 * 4096);
        ck_assert_uint_eq(info.Size, 4 * 4096);
        ck_assert_uint_eq(ri.res_handle, info.ResourceId);
        drm_test_destroy_device(device);
        assert_closed(info.Fd, info.GemHandle);
    }
}
END_TEST

START_TEST(nested_locks_share_one_mapping)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        void *p, *q;
        char perms[8];

        ck_assert_status(drm_test_create(device, 1, SIZE, &alloc, NULL, NULL), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device, alloc, 0, &p), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device, alloc, 0, &q), STATUS_SUCCESS);
        ck_assert_ptr_eq(p, q);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Mappings, 1);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        /* still mapped after the inner unlock */
        ck_assert_uint_eq(drm_test_query(a[i].handle, alloc).Mapped, 1);
        drm_test_maps_perms(p, perms);
        ck_assert_str_eq(perms, "rw-s");
        ((volatile char *)p)[SIZE - 1] = 1;
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_query(a[i].handle, alloc).Mapped, 0);
        drm_test_maps_perms(p, perms);
        ck_assert_str_eq(perms, "");
        /* one unlock too many */
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_INVALID_PARAMETER);
        drm_test_destroy_device(device);
        drm_test_assert_no_buffers(a[i].handle);
    }
}
END_TEST

START_TEST(lock_flags_are_honoured)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        D3DDDICB_LOCKFLAGS ro = { .Value = 0 }, nowait = { .Value = 0 }, discard = { .Value = 0 };
        char perms[8];
        void *p, *q;

        ro.ReadOnly = 1;
        nowait.DonotWait = 1;
        discard.Discard = 1;
        discard.WriteOnly = 1;
        ck_assert_status(drm_test_create(device, 1, SIZE, &alloc, NULL, NULL), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device, alloc, discard.Value, &p), STATUS_SUCCESS);
        fill(p, SIZE, 99);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device, alloc, ro.Value, &p), STATUS_SUCCESS);
        ck_assert(holds(p, SIZE, 99));
        /* a locked address is readable and writable whatever the flags: a
         * nested write lock gets the same address and writes through it */
        drm_test_maps_perms(p, perms);
        ck_assert_str_eq(perms, "rw-s");
        ck_assert_status(drm_test_lock(device, alloc, 0, &q), STATUS_SUCCESS);
        ck_assert_ptr_eq(p, q);
        fill(q, SIZE, 77);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Mappings, 0);
        /* those writes reached the GPU's copy: a virgl host's is fetched here */
        ck_assert_status(drm_test_lock(device, alloc, ro.Value, &p), STATUS_SUCCESS);
        ck_assert(holds(p, SIZE, 77));
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        /* idle: DonotWait does not refuse */
        ck_assert_status(drm_test_lock(device, alloc, nowait.Value, &p), STATUS_SUCCESS);
        ck_assert(holds(p, SIZE, 77));
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        drm_test_assert_no_buffers(a[i].handle);
    }
}
END_TEST

START_TEST(resource_destroyed_through_hresource)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), allocs[3], res;
        KMT_DRM_ALLOCATION_INFO info[3];

        ck_assert_status(drm_test_create(device, 3, 8192, allocs, &res, NULL), STATUS_SUCCESS);
        for (int k = 0; k < 3; k++) {
            info[k] = drm_test_query(a[i].handle, allocs[k]);
            ck_assert_uint_eq(allocs[k], res + 0x40u * (k + 1));
        }
        ck_assert_uint_ne(info[0].GemHandle, info[1].GemHandle);
        ck_assert_uint_ne(info[1].GemHandle, info[2].GemHandle);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Buffers, 3);
        ck_assert_status(drm_test_destroy_resource(device, res), STATUS_SUCCESS);
        for (int k = 0; k < 3; k++)
            assert_closed(info[k].Fd, info[k].GemHandle);
        drm_test_assert_no_buffers(a[i].handle);
        drm_test_destroy_device(device);
    }
}
END_TEST

/* DestroyDevice takes everything with it, a mapping still held included. */
START_TEST(device_destroy_closes_every_gem_handle)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), allocs[4], res;
        KMT_DRM_ALLOCATION_INFO info[4];
        char perms[8];
        void *p;

        ck_assert_status(drm_test_create(device, 2, 4096, allocs, NULL, NULL), STATUS_SUCCESS);
        ck_assert_status(drm_test_create(device, 2, 8192, allocs + 2, &res, NULL), STATUS_SUCCESS);
        for (int k = 0; k < 4; k++)
            info[k] = drm_test_query(a[i].handle, allocs[k]);
        ck_assert_status(drm_test_lock(device, allocs[3], 0, &p), STATUS_SUCCESS);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Buffers, 4);
        drm_test_destroy_device(device);
        for (int k = 0; k < 4; k++)
            assert_closed(info[k].Fd, info[k].GemHandle);
        drm_test_maps_perms(p, perms);
        ck_assert_str_eq(perms, "");
        drm_test_assert_no_buffers(a[i].handle);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Devices, 0);
    }
}
END_TEST

START_TEST(existing_sysmem_is_userptr_or_a_copy)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        KMT_DRM_ALLOCATION_INFO info;
        void *mem, *p, *raw;

        ck_assert_int_eq(posix_memalign(&mem, 4096, SIZE), 0);
        fill(mem, SIZE, 0xabc);
        ck_assert_status(drm_test_create_sysmem(device, mem, SIZE, &alloc), STATUS_SUCCESS);
        info = drm_test_query(a[i].handle, alloc);
        ck_assert_uint_eq(info.Backing, (a[i].umd.Caps & KMT_DRM_CAP_USERPTR) ? KMT_DRM_BACKING_USERPTR
                                                                              : KMT_DRM_BACKING_COPY);
        ck_assert_uint_eq(info.Size, SIZE);
        if ((raw = drm_test_raw_map(&a[i], info.Fd, info.GemHandle, SIZE))) {
            ck_assert(holds(raw, SIZE, 0xabc));
            munmap(raw, SIZE);
        }
        /* CPU access is the caller's own memory */
        ck_assert_status(drm_test_lock(device, alloc, 0, &p), STATUS_SUCCESS);
        ck_assert_ptr_eq(p, mem);
        ck_assert_uint_eq(drm_test_stats(a[i].handle).Mappings, 0);
        ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
        ck_assert_status(drm_test_destroy(device, &alloc, 1), STATUS_SUCCESS);
        assert_closed(info.Fd, info.GemHandle);
        drm_test_assert_no_buffers(a[i].handle);
        drm_test_destroy_device(device);
        free(mem);
    }
}
END_TEST

START_TEST(bad_descriptors_make_nothing)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle);
        D3DDDI_ALLOCATIONINFO info = { 0 };
        D3DKMT_CREATEALLOCATION ca = { 0 };
        KMT_DRM_ALLOCATION_DESC d;

        ca.hDevice = device;
        ca.NumAllocations = 1;
        ca.pAllocationInfo = &info;
        info.pPrivateDriverData = &d;
        info.PrivateDriverDataSize = sizeof(d);

        d = drm_test_desc(4096, 0);
        d.Magic = 0;
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_INVALID_PARAMETER);
        d = drm_test_desc(4096, 0x80);
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_INVALID_PARAMETER);
        d = drm_test_desc(0, 0);
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_INVALID_PARAMETER);
        d = drm_test_desc(4096, 0);
        info.PrivateDriverDataSize = sizeof(d) - 1;
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_INVALID_PARAMETER);
        info.PrivateDriverDataSize = sizeof(d);
        d = drm_test_desc(1ull << 50, 0);
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
        drm_test_assert_no_buffers(a[i].handle);
        drm_test_destroy_device(device);
    }
}
END_TEST

/* Two adapters at once, each with its own fd and GEM handle space. */
/* A device on `a` with one SIZE allocation, locked and filled with `seed`. */
static KMT_DRM_ALLOCATION_INFO create_filled(const struct drm_test_adapter *a, unsigned seed,
                                             D3DKMT_HANDLE *device, D3DKMT_HANDLE *alloc)
{
    KMT_DRM_ALLOCATION_INFO info;
    void *p;

    *device = drm_test_create_device(a->handle);
    ck_assert_status(drm_test_create(*device, 1, SIZE, alloc, NULL, NULL), STATUS_SUCCESS);
    info = drm_test_query(a->handle, *alloc);
    ck_assert_status(drm_test_lock(*device, *alloc, 0, &p), STATUS_SUCCESS);
    fill(p, SIZE, seed);
    return info;
}

START_TEST(adapters_are_independent)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    D3DKMT_HANDLE device[DRM_TEST_MAX], alloc[DRM_TEST_MAX];
    KMT_DRM_ALLOCATION_INFO info[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        info[i] = create_filled(&a[i], i, &device[i], &alloc[i]);
        /* another adapter's allocation is not this adapter's */
        if (i) {
            KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_QUERY_ALLOCATION };
            D3DKMT_ESCAPE esc = { .hAdapter = a[i].handle, .Type = D3DKMT_ESCAPE_DRIVERPRIVATE };

            e.Allocation.hAllocation = alloc[0];
            esc.pPrivateDriverData = &e;
            esc.PrivateDriverDataSize = sizeof(e);
            ck_assert_status(D3DKMTEscape(&esc), STATUS_INVALID_PARAMETER);
            ck_assert_int_ne(info[i].Fd, info[0].Fd);
        }
    }
    for (unsigned i = 0; i < n; i++) {
        void *p;
        ck_assert_status(drm_test_unlock(device[i], alloc[i]), STATUS_SUCCESS);
        ck_assert_status(drm_test_lock(device[i], alloc[i], 0, &p), STATUS_SUCCESS);
        ck_assert(holds(p, SIZE, i));
        ck_assert_status(drm_test_unlock(device[i], alloc[i]), STATUS_SUCCESS);
    }
    for (unsigned i = 0; i < n; i++) {
        drm_test_destroy_device(device[i]);
        assert_closed(info[i].Fd, info[i].GemHandle);
        drm_test_assert_no_buffers(a[i].handle);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Two processes on the same device: each has its own fd, so each has its
 * own GEM handle space, and neither sees the other's objects. */
START_TEST(processes_are_independent)
{
    int go[2], done[2], status;
    pid_t pid;
    char c = 0;

    kmt_test_use_miniport("drm");
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(done), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    /* each side keeps only its ends, so a dead peer reads as EOF */
    close(pid ? go[0] : go[1]);
    close(pid ? done[1] : done[0]);
    {
        struct drm_test_adapter a[DRM_TEST_MAX];
        unsigned n = drm_test_allocating_adapters(a, DRM_TEST_MAX);
        D3DKMT_HANDLE device[DRM_TEST_MAX], alloc[DRM_TEST_MAX];
        unsigned seed = pid ? 1 : 2;

        for (unsigned i = 0; i < n; i++) {
            void *p;

            device[i] = drm_test_create_device(a[i].handle);
            ck_assert_status(drm_test_create(device[i], 1, SIZE, &alloc[i], NULL, NULL), STATUS_SUCCESS);
            /* a fresh fd: its first object gets the first handle */
            ck_assert_uint_eq(drm_test_query(a[i].handle, alloc[i]).GemHandle, 1);
            ck_assert_status(drm_test_lock(device[i], alloc[i], 0, &p), STATUS_SUCCESS);
            fill(p, SIZE, seed);
            ck_assert_status(drm_test_unlock(device[i], alloc[i]), STATUS_SUCCESS);
        }
        /* both processes hold their objects at the same time */
        if (pid) {
            ck_assert_int_eq(write(go[1], &c, 1), 1);
            ck_assert_int_eq(read(done[0], &c, 1), 1);
        } else {
            if (read(go[0], &c, 1) != 1)
                _exit(3);
        }
        for (unsigned i = 0; i < n; i++) {
            void *p;
            ck_assert_status(drm_test_lock(device[i], alloc[i], 0, &p), STATUS_SUCCESS);
            ck_assert(holds(p, SIZE, seed));
            ck_assert_status(drm_test_unlock(device[i], alloc[i]), STATUS_SUCCESS);
            drm_test_destroy_device(device[i]);
        }
        if (!pid) {
            kmt_test_shutdown_no_leaks();
            _exit(write(done[1], &c, 1) == 1 ? 0 : 4);
        }
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A fork() child is a new process (dxgkrnl/fork.c): it must not keep the
 * parent's DRM file, where every GEM handle is the parent's.  Before its
 * first call it has none of the parent's fds; the parent's handles mean
 * nothing to it; its own objects go on a file of its own (the first object
 * there gets GEM handle 1, while the parent's file already has one); and
 * the parent's objects are untouched after it exits. */
START_TEST(fork_child_opens_its_own_files)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    D3DKMT_HANDLE device[DRM_TEST_MAX], alloc[DRM_TEST_MAX];
    KMT_DRM_ALLOCATION_INFO info[DRM_TEST_MAX];
    int status;
    unsigned n;
    pid_t pid;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        info[i] = create_filled(&a[i], 7, &device[i], &alloc[i]);
        ck_assert_status(drm_test_unlock(device[i], alloc[i]), STATUS_SUCCESS);
    }
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        struct drm_test_adapter mine[DRM_TEST_MAX];
        unsigned m;

        for (unsigned i = 0; i < n; i++)      /* before any call: the child's start reuses numbers */
            ck_assert_msg(fcntl(info[i].Fd, F_GETFD) < 0 && errno == EBADF,
                          "the parent's DRM fd %d is open in the child", info[i].Fd);
        for (unsigned i = 0; i < n; i++) {
            void *p;

            ck_assert_status(drm_test_lock(device[i], alloc[i], 0, &p), STATUS_INVALID_PARAMETER);
        }
        m = drm_test_allocating_adapters(mine, DRM_TEST_MAX);
        ck_assert_uint_eq(m, n);
        for (unsigned i = 0; i < m; i++) {
            D3DKMT_HANDLE d = drm_test_create_device(mine[i].handle), own;
            void *p;

            ck_assert_status(drm_test_create(d, 1, SIZE, &own, NULL, NULL), STATUS_SUCCESS);
            ck_assert_uint_eq(drm_test_query(mine[i].handle, own).GemHandle, 1);
            ck_assert_status(drm_test_lock(d, own, 0, &p), STATUS_SUCCESS);
            fill(p, SIZE, 8);
            ck_assert_status(drm_test_unlock(d, own), STATUS_SUCCESS);
            drm_test_destroy_device(d);
        }
        kmt_test_shutdown_no_leaks();
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (unsigned i = 0; i < n; i++) {
        void *p;

        ck_assert_status(drm_test_lock(device[i], alloc[i], 0, &p), STATUS_SUCCESS);
        ck_assert(holds(p, SIZE, 7));
        ck_assert_status(drm_test_unlock(device[i], alloc[i]), STATUS_SUCCESS);
        drm_test_destroy_device(device[i]);
        assert_closed(info[i].Fd, info[i].GemHandle);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_alloc");
    TCase *tc = tcase_create("alloc");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, create_write_read_back_destroy);
    tcase_add_test(tc, virtio_resource_is_the_size_asked);
    tcase_add_test(tc, nested_locks_share_one_mapping);
    tcase_add_test(tc, lock_flags_are_honoured);
    tcase_add_test(tc, resource_destroyed_through_hresource);
    tcase_add_test(tc, device_destroy_closes_every_gem_handle);
    tcase_add_test(tc, existing_sysmem_is_userptr_or_a_copy);
    tcase_add_test(tc, bad_descriptors_make_nothing);
    tcase_add_test(tc, adapters_are_independent);
    tcase_add_test(tc, processes_are_independent);
    tcase_add_test(tc, fork_child_opens_its_own_files);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
