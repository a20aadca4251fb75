/*
 * DRM miniport on real kernel drivers: enumeration, LUIDs, adapter queries
 * and budgets, checked against what the kernel itself says (/dev/dri,
 * sysfs, the driver's own version and caps).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm_test.h"

/* sysfs "<dir>/<name>" as a hex number. */
static unsigned sysfs_hex(const char *dir, const char *name)
{
    char path[PATH_MAX];
    unsigned v = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_ptr_nonnull(f = fopen(path, "re"));
    ck_assert_int_eq(fscanf(f, "%x", &v), 1);
    fclose(f);
    return v;
}

/* "/sys/class/drm/renderD128/device" of an adapter. */
static void sysfs_device(const struct drm_test_adapter *a, char *out, size_t size)
{
    const char *node = strrchr(a->umd.RenderNode, '/');

    ck_assert_ptr_nonnull(node);
    snprintf(out, size, "/sys/class/drm/%s/device", node + 1);
}

static void expected_location(const struct drm_test_adapter *a, char *out, size_t size)
{
    char dev[PATH_MAX], link[PATH_MAX + 16], real[PATH_MAX], sub[PATH_MAX];

    sysfs_device(a, dev, sizeof(dev));
    snprintf(link, sizeof(link), "%s/subsystem", dev);
    ck_assert_ptr_nonnull(realpath(link, sub));
    ck_assert_ptr_nonnull(realpath(dev, real));
    snprintf(out, size, "%s-%s", strrchr(sub, '/') + 1, strrchr(real, '/') + 1);
}

/* The core's documented derivation: FNV-1a over "<miniport>:<LocationId>". */
static LUID expected_luid(const char *location)
{
    UINT64 h = 0xcbf29ce484222325ull;
    char key[96];
    LUID l;

    snprintf(key, sizeof(key), "drm:%s", location);
    for (const char *p = key; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    l.LowPart = (ULONG)h;
    l.HighPart = (LONG)((h >> 32) & 0x7fffffff);
    return l;
}

static bool is_uma(const struct drm_test_adapter *a)
{
    return !strcmp(a->umd.Family, "virtio_gpu") || !strcmp(a->umd.Family, "dumb") ||
           !strcmp(a->umd.Family, "generic");
}

START_TEST(one_adapter_per_render_node)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm,soft");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    ck_assert_uint_eq(n, drm_test_count_render_nodes());
    drm_test_check_expected(a, n);
    for (unsigned i = 0; i < n; i++) {
        char location[128];

        expected_location(&a[i], location, sizeof(location));
        ck_assert_str_eq(a[i].desc.LocationId, location);
        /* sorted by location: stable order across runs */
        if (i)
            ck_assert_int_lt(strcmp(a[i - 1].desc.LocationId, a[i].desc.LocationId), 0);
    }
}
END_TEST

START_TEST(driver_name_and_caps_are_the_kernels)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        int fd = open(a[i].umd.RenderNode, O_RDWR | O_CLOEXEC);
        drmVersionPtr v;
        uint64_t cap = 0;
        UINT expect = 0;

        ck_assert_int_ge(fd, 0);
        ck_assert_ptr_nonnull(v = drmGetVersion(fd));
        ck_assert_str_eq(a[i].umd.DriverName, v->name);
        ck_assert_str_eq(a[i].desc.DriverName, v->name);
        drmFreeVersion(v);
        if (!drmGetCap(fd, DRM_CAP_SYNCOBJ, &cap) && cap)
            expect |= KMT_DRM_CAP_SYNCOBJ;
        if (!drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) && cap)
            expect |= KMT_DRM_CAP_SYNCOBJ_TIMELINE;
        ck_assert_uint_eq(a[i].umd.Caps & (KMT_DRM_CAP_SYNCOBJ | KMT_DRM_CAP_SYNCOBJ_TIMELINE), expect);
        close(fd);
        ck_assert_str_eq(a[i].desc.Miniport, "drm");
        ck_assert_int_eq(a[i].umd.PageSize, (int)sysconf(_SC_PAGESIZE));
        ck_assert_int_ge(a[i].umd.DrmFd, 0);
        if (!strcmp(a[i].umd.DriverName, "virtio_gpu"))
            ck_assert_str_eq(a[i].umd.Family, "virtio_gpu");
        if (!strcmp(a[i].umd.DriverName, "vgem")) {
            ck_assert_str_eq(a[i].umd.Family, "dumb");
            /* dumb buffers need the card node */
            ck_assert_str_ne(a[i].umd.PrimaryNode, "");
        }
        if (!a[i].umd.AllocatorAvailable)
            ck_assert_ptr_nonnull(strstr(a[i].desc.Description, "no kmtshim allocator"));
    }
}
END_TEST

START_TEST(luid_is_derived_from_the_bus_id)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        LUID l = expected_luid(a[i].desc.LocationId);
        ck_assert_uint_eq(a[i].luid.LowPart, l.LowPart);
        ck_assert_int_eq(a[i].luid.HighPart, l.HighPart);
    }
}
END_TEST

/* Another process (its own fds, its own enumeration) sees the same LUIDs,
 * and this one can open the adapters by them. */
START_TEST(luid_is_stable_across_processes)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    LUID theirs[DRM_TEST_MAX];
    unsigned n, m = 0;
    int pipefd[2], status;
    pid_t pid;

    kmt_test_use_miniport("drm");
    ck_assert_int_eq(pipe(pipefd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        struct drm_test_adapter b[DRM_TEST_MAX];
        unsigned k = drm_test_adapters(b, DRM_TEST_MAX);

        for (unsigned i = 0; i < k; i++)
            if (write(pipefd[1], &b[i].luid, sizeof(LUID)) != sizeof(LUID))
                _exit(2);
        _exit(0);
    }
    close(pipefd[1]);
    while (m < DRM_TEST_MAX && read(pipefd[0], &theirs[m], sizeof(LUID)) == sizeof(LUID))
        m++;
    close(pipefd[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    n = drm_test_adapters(a, DRM_TEST_MAX);
    ck_assert_uint_eq(m, n);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_OPENADAPTERFROMLUID o = { .AdapterLuid = theirs[i] };
        KMT_ADAPTER_DESCRIPTION d;

        ck_assert_uint_eq(theirs[i].LowPart, a[i].luid.LowPart);
        ck_assert_int_eq(theirs[i].HighPart, a[i].luid.HighPart);
        ck_assert_status(D3DKMTOpenAdapterFromLuid(&o), STATUS_SUCCESS);
        ck_assert_status(KmtQueryAdapterDescription(o.hAdapter, &d), STATUS_SUCCESS);
        ck_assert_str_eq(d.LocationId, a[i].desc.LocationId);
    }
}
END_TEST

START_TEST(luid_is_stable_across_restarts)
{
    struct drm_test_adapter a[DRM_TEST_MAX], b[DRM_TEST_MAX];
    unsigned n, m;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    kmt_test_shutdown_no_leaks();
    m = drm_test_adapters(b, DRM_TEST_MAX);
    ck_assert_uint_eq(n, m);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_eq(a[i].luid.LowPart, b[i].luid.LowPart);
        ck_assert_int_eq(a[i].luid.HighPart, b[i].luid.HighPart);
    }
}
END_TEST

static NTSTATUS qai(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };
    return D3DKMTQueryAdapterInfo(&q);
}

START_TEST(pci_ids_and_address_are_the_buss)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_QUERY_DEVICE_IDS ids = { 0 };
        D3DKMT_ADAPTERADDRESS addr;
        char dev[PATH_MAX];

        sysfs_device(&a[i], dev, sizeof(dev));
        ck_assert_status(qai(a[i].handle, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)),
                         STATUS_SUCCESS);
        if (strncmp(a[i].desc.LocationId, "pci-", 4)) {
            ck_assert_uint_eq(ids.DeviceIds.VendorID, 0);
            ck_assert_uint_eq(ids.DeviceIds.BusType, 0);
            ck_assert_status(qai(a[i].handle, KMTQAITYPE_ADAPTERADDRESS, &addr, sizeof(addr)),
                             STATUS_NOT_SUPPORTED);
            continue;
        }
        ck_assert_uint_eq(ids.DeviceIds.VendorID, sysfs_hex(dev, "vendor"));
        ck_assert_uint_eq(ids.DeviceIds.DeviceID, sysfs_hex(dev, "device"));
        ck_assert_uint_eq(ids.DeviceIds.SubVendorID, sysfs_hex(dev, "subsystem_vendor"));
        ck_assert_uint_eq(ids.DeviceIds.SubSystemID, sysfs_hex(dev, "subsystem_device"));
        ck_assert_uint_eq(ids.DeviceIds.RevisionID, sysfs_hex(dev, "revision"));
        ck_assert_uint_eq(ids.DeviceIds.BusType, 5);   /* PCIBus */
        ck_assert_status(qai(a[i].handle, KMTQAITYPE_ADAPTERADDRESS, &addr, sizeof(addr)), STATUS_SUCCESS);
        {
            unsigned dom, bus, slot, fn;
            ck_assert_int_eq(sscanf(a[i].desc.LocationId, "pci-%x:%x:%x.%u", &dom, &bus, &slot, &fn), 4);
            ck_assert_uint_eq(addr.BusNumber, bus);
            ck_assert_uint_eq(addr.DeviceNumber, slot);
            ck_assert_uint_eq(addr.FunctionNumber, fn);
        }
    }
}
END_TEST

START_TEST(adapter_type_and_driver_version)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_ADAPTERTYPE type;
        D3DKMT_DRIVERVERSION version;

        ck_assert_status(qai(a[i].handle, KMTQAITYPE_ADAPTERTYPE, &type, sizeof(type)), STATUS_SUCCESS);
        ck_assert_uint_eq(type.RenderSupported, 1);
        ck_assert_uint_eq(type.SoftwareDevice, 0);
        ck_assert_uint_eq(type.DisplaySupported, a[i].sources > 0);    /* KMS outputs (test_drm_display) */
        ck_assert_uint_eq(type.Paravirtualized, !strcmp(a[i].umd.DriverName, "virtio_gpu"));
        ck_assert_status(qai(a[i].handle, KMTQAITYPE_DRIVERVERSION, &version, sizeof(version)), STATUS_SUCCESS);
        ck_assert_int_eq(version, KMT_DRIVERVERSION_WDDM_2_7);
    }
}
END_TEST

START_TEST(uma_segment_is_half_of_ram)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    struct sysinfo si;
    unsigned n;

    kmt_test_use_miniport("drm");
    ck_assert_int_eq(sysinfo(&si), 0);
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_SEGMENTSIZEINFO s;

        if (!is_uma(&a[i]))
            continue;
        ck_assert_status(qai(a[i].handle, KMTQAITYPE_GETSEGMENTSIZE, &s, sizeof(s)), STATUS_SUCCESS);
        ck_assert_uint_eq(s.DedicatedVideoMemorySize, 0);
        ck_assert_uint_eq(s.DedicatedSystemMemorySize, 0);
        ck_assert_uint_eq(s.SharedSystemMemorySize, (UINT64)si.totalram * si.mem_unit / 2);
    }
}
END_TEST

static D3DKMT_QUERYVIDEOMEMORYINFO vidmem(D3DKMT_HANDLE adapter, D3DKMT_MEMORY_SEGMENT_GROUP group)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q = { 0 };

    q.hAdapter = adapter;
    q.MemorySegmentGroup = group;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    return q;
}

START_TEST(budget_and_usage_follow_allocations)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    n = drm_test_use_allocating(a);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device = drm_test_create_device(a[i].handle), alloc;
        D3DKMT_QUERYVIDEOMEMORYINFO q = vidmem(a[i].handle, D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL);
        D3DKMT_SEGMENTSIZEINFO s;
        UINT64 total;

        ck_assert_status(qai(a[i].handle, KMTQAITYPE_GETSEGMENTSIZE, &s, sizeof(s)), STATUS_SUCCESS);
        total = s.DedicatedVideoMemorySize + s.SharedSystemMemorySize + s.DedicatedSystemMemorySize;
        ck_assert_uint_gt(q.Budget, 0);
        ck_assert_uint_le(q.Budget, total);
        ck_assert_uint_le(q.AvailableForReservation, q.Budget);
        ck_assert_uint_eq(q.CurrentUsage, 0);
        ck_assert_status(drm_test_create(device, 1, 1 << 20, &alloc, NULL, NULL), STATUS_SUCCESS);
        q = vidmem(a[i].handle, D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL);
        ck_assert_uint_eq(q.CurrentUsage, 1 << 20);
        ck_assert_uint_ge(q.Budget, q.CurrentUsage);
        if (is_uma(&a[i]))
            ck_assert_uint_eq(vidmem(a[i].handle, D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL).Budget, 0);
        ck_assert_status(drm_test_destroy(device, &alloc, 1), STATUS_SUCCESS);
        ck_assert_uint_eq(vidmem(a[i].handle, D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL).CurrentUsage, 0);
        drm_test_destroy_device(device);
    }
}
END_TEST

/* The default selection: GPUs first, the software adapter last. */
START_TEST(soft_adapter_comes_last)
{
    D3DKMT_ADAPTERINFO info[DRM_TEST_MAX + 1];
    D3DKMT_ENUMADAPTERS2 e = { DRM_TEST_MAX + 1, info };
    KMT_ADAPTER_DESCRIPTION d;

    unsetenv("KMTSHIM_MINIPORT");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, drm_test_count_render_nodes() + 1);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        ck_assert_status(KmtQueryAdapterDescription(info[i].hAdapter, &d), STATUS_SUCCESS);
        ck_assert_str_eq(d.Miniport, i + 1 == e.NumAdapters ? "soft" : "drm");
    }
}
END_TEST

/* An unknown driver says so and refuses allocations. */
START_TEST(unknown_driver_refuses_allocations)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        D3DKMT_HANDLE device, alloc;

        if (a[i].umd.AllocatorAvailable)
            continue;
        device = drm_test_create_device(a[i].handle);
        ck_assert_status(drm_test_create(device, 1, 4096, &alloc, NULL, NULL), STATUS_NOT_SUPPORTED);
        drm_test_destroy_device(device);
    }
}
END_TEST

/* The first opener of a primary node becomes DRM master when nobody holds
 * it: the card node the dumb family opens must give that up, or a display
 * server (on vkms, say) started after a kmtshim program could not take the
 * device. */
START_TEST(card_node_never_holds_drm_master)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n, checked = 0;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (unsigned i = 0; i < n; i++) {
        KMT_DRM_STATS s = drm_test_stats(a[i].handle);
        int server;

        if (s.CardFd < 0)
            continue;
        ck_assert_msg(!drmIsMaster(s.CardFd), "%s: the miniport's card fd %d is DRM master",
                      a[i].umd.PrimaryNode, s.CardFd);
        server = open(a[i].umd.PrimaryNode, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(server, 0);
        ck_assert_int_eq(drmSetMaster(server), 0);
        ck_assert_int_eq(drmIsMaster(server), 1);
        close(server);
        checked++;
    }
    if (getenv("KMTSHIM_DRM_EXPECT") && strstr(getenv("KMTSHIM_DRM_EXPECT"), "vgem"))
        ck_assert_uint_gt(checked, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_enum");
    TCase *tc = tcase_create("enum");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, one_adapter_per_render_node);
    tcase_add_test(tc, driver_name_and_caps_are_the_kernels);
    tcase_add_test(tc, luid_is_derived_from_the_bus_id);
    tcase_add_test(tc, luid_is_stable_across_processes);
    tcase_add_test(tc, luid_is_stable_across_restarts);
    tcase_add_test(tc, pci_ids_and_address_are_the_buss);
    tcase_add_test(tc, adapter_type_and_driver_version);
    tcase_add_test(tc, uma_segment_is_half_of_ram);
    tcase_add_test(tc, budget_and_usage_follow_allocations);
    tcase_add_test(tc, soft_adapter_comes_last);
    tcase_add_test(tc, unknown_driver_refuses_allocations);
    tcase_add_test(tc, card_node_never_holds_drm_master);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
