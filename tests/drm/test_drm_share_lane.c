/*
 * The DRM miniport's sharing DDIs on real kernel drivers, across two
 * processes (the QEMU lane's virtio_gpu and vgem, or a GPU machine): this
 * process starts each device through the miniport's own DDIs, exports an
 * allocation (a PRIME dma-buf) or a monitored fence (a timeline syncobj
 * fd), and a second program, drm_share_peer, started with the fd as its
 * fd 3, imports it on its own open of the device.  Checked: the bytes
 * written on one side are read on the other, both ways; a fence value
 * signalled by one process is raised in the other's memory by its
 * watcher, both ways; the GEM handles are closed once both are done.
 * The first two rows call the DDIs directly: they are about what the
 * kernel drivers do with the miniport's ioctls.  The last one goes through
 * D3DKMT, the core and the session broker: a shared resource made with
 * CreateShared, opened by its global handle in the other process.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm_test.h"
#include "ddi_direct.h"
#include "share_pattern.h"
#include "miniports/drm/drm_winsys.h"

#define SIZE (64u * 1024u)

extern char **environ;

/* Starts drm_share_peer with `fd` as its fd 3 (none for -1). */
static pid_t run_peer(int fd, char **args)
{
    char self[PATH_MAX], peer[PATH_MAX + 32];
    posix_spawn_file_actions_t actions;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    pid_t pid;

    ck_assert_int_gt(n, 0);
    self[n] = 0;
    snprintf(peer, sizeof(peer), "%s/drm_share_peer", dirname(self));
    args[0] = peer;
    ck_assert_int_eq(posix_spawn_file_actions_init(&actions), 0);
    if (fd >= 0)
        ck_assert_int_eq(posix_spawn_file_actions_adddup2(&actions, fd, 3), 0);
    ck_assert_int_eq(posix_spawn(&pid, peer, &actions, NULL, args, environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

static int wait_peer(pid_t pid)
{
    int status;

    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "drm_share_peer died (status %#x)", status);
    return WEXITSTATUS(status);
}

/* The devices the miniport allocates on, started here. */
static unsigned started(PVOID *out, char (*locations)[64])
{
    KMT_PHYSICAL_DEVICE devices[KMT_MAX_PHYSICAL_DEVICES];
    UINT count = ddi_direct_devices(devices);
    unsigned n = 0;

    for (UINT i = 0; i < count; i++) {
        PVOID a = ddi_direct_start(devices[i].LocationId);

        if (!a)
            continue;
        if (!((struct kdrm_adapter *)a)->family->create) {
            ddi_direct_stop(a);
            continue;
        }
        memcpy(locations[n], devices[i].LocationId, sizeof(locations[n]));
        out[n++] = a;
    }
    return n;
}

static void lock_fill_or_check(PVOID a, HANDLE alloc, unsigned seed, bool fill)
{
    DXGKARG_LOCK lock = { .hAllocation = alloc };
    DXGKARG_UNLOCK unlock = { .hAllocation = alloc };

    ck_assert_status(ddi_direct.DxgkDdiLock(a, &lock), STATUS_SUCCESS);
    if (fill)
        share_pattern_fill(lock.pData, SIZE, seed);
    else
        ck_assert_msg(share_pattern_holds(lock.pData, SIZE, seed), "the other process's bytes are not there");
    unlock.pData = lock.pData;
    ck_assert_status(ddi_direct.DxgkDdiUnlock(a, &unlock), STATUS_SUCCESS);
}

/* Every driver KMTSHIM_DRM_EXPECT names is among those tried (", "-joined). */
static void expect_tried(const char *tried)
{
    const char *expect = getenv("KMTSHIM_DRM_EXPECT");
    char *copy, *save = NULL;

    if (!expect)
        return;
    copy = strdup(expect);
    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save))
        ck_assert_msg(strstr(tried, name), "KMTSHIM_DRM_EXPECT names %s, but nothing was shared on it", name);
    free(copy);
}

START_TEST(dma_buf_written_in_one_process_is_read_in_the_other)
{
    PVOID adapters[KMT_MAX_PHYSICAL_DEVICES];
    char locations[KMT_MAX_PHYSICAL_DEVICES][64];
    unsigned n = started(adapters, locations);
    char tried[256] = "";

    for (unsigned i = 0; i < n; i++) {
        struct kdrm_adapter *k = adapters[i];
        KMT_DRM_ALLOCATION_DESC desc = { .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION, .Size = SIZE };
        DXGK_ALLOCATIONINFO info = { .pPrivateDriverData = &desc, .PrivateDriverDataSize = sizeof(desc) };
        DXGKARG_CREATEALLOCATION ca = { .NumAllocations = 1, .pAllocationInfo = &info };
        DXGKARG_DESTROYALLOCATION da = { .NumAllocations = 1, .pAllocationList = &info.hAllocation };
        char size[32], seed[16], new_seed[16];
        char *args[] = { NULL, "alloc", locations[i], size, seed, new_seed, NULL };
        UINT gem;
        int fd = -1;

        ck_assert_status(ddi_direct.DxgkDdiCreateAllocation(k, &ca), STATUS_SUCCESS);
        gem = desc.GemHandle;
        lock_fill_or_check(k, info.hAllocation, 0x1234, true);
        ck_assert_status(ddi_direct.KmtDdiExportAllocation(k, info.hAllocation, &fd), STATUS_SUCCESS);
        snprintf(size, sizeof(size), "%u", SIZE);
        snprintf(seed, sizeof(seed), "%u", 0x1234);
        snprintf(new_seed, sizeof(new_seed), "%u", 0x5678);
        ck_assert_msg(wait_peer(run_peer(fd, args)) == 0, "%s (%s): the peer's checks failed", locations[i],
                      k->phys.driver);
        close(fd);
        lock_fill_or_check(k, info.hAllocation, 0x5678, false);
        ck_assert_status(ddi_direct.DxgkDdiDestroyAllocation(k, &da), STATUS_SUCCESS);
        ck_assert_int_eq(drm_test_gem_close_errno(k->fd, gem), EINVAL);  /* closed */
        strncat(tried, k->phys.driver, sizeof(tried) - strlen(tried) - 2);
        strcat(tried, ",");
        ddi_direct_stop(k);
    }
    expect_tried(tried);
}
END_TEST

START_TEST(syncobj_fence_signalled_in_one_process_wakes_the_other)
{
    PVOID adapters[KMT_MAX_PHYSICAL_DEVICES];
    char locations[KMT_MAX_PHYSICAL_DEVICES][64];
    unsigned n = started(adapters, locations), tried = 0;

    for (unsigned i = 0; i < n; i++) {
        struct kdrm_adapter *k = adapters[i];
        _Atomic UINT64 value = 10;
        KMTARG_CREATEFENCE cf = { .pValue = &value, .InitialValue = 10 };
        char *args[] = { NULL, "fence", locations[i], "10", NULL };
        pid_t pid;
        int fd = -1;

        if (!(k->caps & KMT_DRM_CAP_FENCES)) {   /* vgem: no syncobjs, memory-only fences */
            ck_assert_status(ddi_direct.KmtDdiExportFence(k, NULL, &fd), STATUS_NOT_SUPPORTED);
            ddi_direct_stop(k);
            continue;
        }
        tried++;
        ck_assert_status(ddi_direct.KmtDdiCreateFence(k, &cf), STATUS_SUCCESS);
        ck_assert_status(ddi_direct.KmtDdiExportFence(k, cf.hDriverFence, &fd), STATUS_SUCCESS);
        pid = run_peer(fd, args);
        close(fd);
        for (int t = 0; t < 20000 && atomic_load(&value) < 11; t++)
            usleep(1000);                /* the peer's signal, raised here by the watcher */
        ck_assert_msg(atomic_load(&value) >= 11, "%s: the peer's signal never arrived", locations[i]);
        atomic_store(&value, 12);
        ck_assert_status(ddi_direct.KmtDdiSignalFence(k, cf.hDriverFence, 12), STATUS_SUCCESS);
        ck_assert_msg(wait_peer(pid) == 0, "%s: the peer's checks failed", locations[i]);
        ddi_direct.KmtDdiDestroyFence(k, cf.hDriverFence);
        ddi_direct_stop(k);
    }
    /* virtio_gpu on the lane's kernel has timeline syncobjs */
    if (getenv("KMTSHIM_DRM_EXPECT") && strstr(getenv("KMTSHIM_DRM_EXPECT"), "virtio_gpu"))
        ck_assert_uint_gt(tried, 0);
}
END_TEST

/* The broker the library starts: the build tree's, beside this program. */
static void use_build_broker(void)
{
    char self[PATH_MAX], broker[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    ck_assert_int_gt(n, 0);
    self[n] = 0;
    snprintf(broker, sizeof(broker), "%s/../../dlls/kmtshim/broker/daemon/kmtshim-broker", dirname(self));
    setenv("KMTSHIM_BROKER", broker, 0);
    kmt_test_private_broker();
}

static D3DKMT_HANDLE create_shared(D3DKMT_HANDLE device, D3DKMT_HANDLE *alloc, D3DKMT_HANDLE *global)
{
    KMT_DRM_ALLOCATION_DESC desc = drm_test_desc(SIZE, 0);
    D3DDDI_ALLOCATIONINFO info = { .pPrivateDriverData = &desc, .PrivateDriverDataSize = sizeof(desc) };
    D3DKMT_CREATEALLOCATION ca = { .hDevice = device, .NumAllocations = 1, .pAllocationInfo = &info };

    ca.Flags.CreateResource = 1;
    ca.Flags.CreateShared = 1;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    *alloc = info.hAllocation;
    *global = ca.hGlobalShare;
    return ca.hResource;
}

static void d3dkmt_fill_or_check(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, unsigned seed, bool fill)
{
    void *p;

    ck_assert_status(drm_test_lock(device, alloc, 0, &p), STATUS_SUCCESS);
    if (fill)
        share_pattern_fill(p, SIZE, seed);
    else
        ck_assert_msg(share_pattern_holds(p, SIZE, seed), "the other process's bytes are not there");
    ck_assert_status(drm_test_unlock(device, alloc), STATUS_SUCCESS);
}

START_TEST(shared_resource_opened_by_global_handle_in_another_process)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;
    char tried[256] = "";

    use_build_broker();
    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc, global, res;
        char luid_high[16], luid_low[16], handle[16], size[16];
        char *args[] = { NULL, "open-global", luid_high, luid_low, handle, size, "0x1111", "0x2222", NULL };

        res = create_shared(device, &alloc, &global);
        d3dkmt_fill_or_check(device, alloc, 0x1111, true);
        snprintf(luid_high, sizeof(luid_high), "%ld", (long)a[i].luid.HighPart);
        snprintf(luid_low, sizeof(luid_low), "%lu", (unsigned long)a[i].luid.LowPart);
        snprintf(handle, sizeof(handle), "%#x", global);
        snprintf(size, sizeof(size), "%u", SIZE);
        ck_assert_msg(wait_peer(run_peer(-1, args)) == 0, "%s: the peer's open failed", a[i].umd.DriverName);
        d3dkmt_fill_or_check(device, alloc, 0x2222, false);
        ck_assert_status(drm_test_destroy_resource(device, res), STATUS_SUCCESS);
        drm_test_destroy_device(device);
        strncat(tried, a[i].umd.DriverName, sizeof(tried) - strlen(tried) - 2);
        strcat(tried, ",");
    }
    expect_tried(tried);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("drm_share_lane");
    TCase *t = tcase_create("share");

    tcase_set_timeout(t, 120);
    tcase_add_test(t, dma_buf_written_in_one_process_is_read_in_the_other);
    tcase_add_test(t, syncobj_fence_signalled_in_one_process_wakes_the_other);
    tcase_add_test(t, shared_resource_opened_by_global_handle_in_another_process);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return kmt_test_run(suite());
}
