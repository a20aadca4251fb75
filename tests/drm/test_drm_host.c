/*
 * The DRM miniport on any machine, /dev/dri or not (a build host, CI): it
 * loads, enumerates exactly the render nodes the kernel has (none here
 * means zero adapters, quietly), and the software adapter stays last.
 */
#define _GNU_SOURCE
#include "config.h"

#include <sys/wait.h>
#include <unistd.h>

#include "drm_test.h"
#include "miniports/builtin.h"

static DRIVER_INITIALIZATION_DATA captured;

static NTSTATUS APIENTRY capture(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *init)
{
    memcpy(&captured, init, sizeof(captured));
    return STATUS_SUCCESS;
}

START_TEST(entry_fills_the_ddi_table_and_enumerates_the_kernels_devices)
{
    KMT_DXGKRNL_EXPORTS exports = { sizeof(exports), KMT_MINIPORT_INTERFACE_VERSION, capture };
    KMT_PHYSICAL_DEVICE devices[KMT_MAX_PHYSICAL_DEVICES];
    UINT count = KMT_MAX_PHYSICAL_DEVICES;

    ck_assert_status(KmtDrmMiniportDriverEntry(NULL, &exports), STATUS_SUCCESS);
    ck_assert_uint_eq(captured.Version, KMT_MINIPORT_INTERFACE_VERSION);
    ck_assert_uint_eq(captured.Size, sizeof(DRIVER_INITIALIZATION_DATA));
    ck_assert_str_eq(captured.DriverName, "drm");
    ck_assert_ptr_nonnull(captured.DxgkDdiCreateAllocation);
    ck_assert_ptr_nonnull(captured.DxgkDdiDestroyAllocation);
    ck_assert_ptr_nonnull(captured.DxgkDdiLock);
    ck_assert_ptr_nonnull(captured.DxgkDdiUnlock);
    ck_assert_ptr_nonnull(captured.DxgkDdiEscape);
    ck_assert_status(captured.KmtDdiEnumPhysicalDevices(captured.DriverContext, &count, devices),
                     STATUS_SUCCESS);
    ck_assert_uint_eq(count, drm_test_count_render_nodes());
    for (UINT i = 0; i < count; i++) {
        ck_assert_ptr_nonnull(devices[i].Context);
        ck_assert(!strncmp(devices[i].LocationId, "pci-", 4) || !strncmp(devices[i].LocationId, "platform-", 9) ||
                  !strncmp(devices[i].LocationId, "usb-", 4) || !strncmp(devices[i].LocationId, "host1x-", 7));
    }
}
END_TEST

/* The default selection loads "drm" first, then "soft": with the GPUs the
 * kernel has and the soft adapter last, and not a word on stderr. */
START_TEST(default_selection_is_quiet_and_keeps_soft_last)
{
    int err[2], status;
    char buf[512];
    ssize_t got;
    pid_t pid;

    ck_assert_int_eq(pipe(err), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        D3DKMT_ADAPTERINFO info[DRM_TEST_MAX + 1];
        D3DKMT_ENUMADAPTERS2 e = { DRM_TEST_MAX + 1, info };
        KMT_ADAPTER_DESCRIPTION d;

        dup2(err[1], 2);
        close(err[0]);
        unsetenv("KMTSHIM_MINIPORT");
        unsetenv("WINEDEBUG");
        unsetenv("KMTSHIM_DEBUG");
        if (D3DKMTEnumAdapters2(&e) || e.NumAdapters != drm_test_count_render_nodes() + 1)
            _exit(2);
        if (KmtQueryAdapterDescription(info[e.NumAdapters - 1].hAdapter, &d) || strcmp(d.Miniport, "soft"))
            _exit(3);
        for (ULONG i = 0; i + 1 < e.NumAdapters; i++)
            if (KmtQueryAdapterDescription(info[i].hAdapter, &d) || strcmp(d.Miniport, "drm"))
                _exit(4);
        KmtProcessShutdown();
        _exit(KmtLiveObjectCount() ? 5 : 0);
    }
    close(err[1]);
    got = read(err[0], buf, sizeof(buf) - 1);
    close(err[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    buf[got > 0 ? got : 0] = 0;
    ck_assert_msg(got == 0, "stderr was not quiet: %s", buf);
}
END_TEST

START_TEST(drm_alone_lists_only_gpus)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    D3DKMT_ADAPTERINFO info[DRM_TEST_MAX + 1];
    D3DKMT_ENUMADAPTERS2 e = { DRM_TEST_MAX + 1, info };

    kmt_test_use_miniport("drm");
    setenv("KMTSHIM_DEBUG", "-all", 1);     /* no devices is an error only for an explicit choice */
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, drm_test_count_render_nodes());
    ck_assert_uint_eq(drm_test_adapters(a, DRM_TEST_MAX), e.NumAdapters);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_host");
    TCase *tc = tcase_create("host");

    tcase_add_test(tc, entry_fills_the_ddi_table_and_enumerates_the_kernels_devices);
    tcase_add_test(tc, default_selection_is_quiet_and_keeps_soft_last);
    tcase_add_test(tc, drm_alone_lists_only_gpus);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
