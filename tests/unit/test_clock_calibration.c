/*
 * D3DKMTQueryClockCalibration: Windows' statuses for bad input, and the
 * software adapter's clocks (GPU: CLOCK_MONOTONIC in ns; CPU: the
 * QueryPerformanceCounter clock, CLOCK_MONOTONIC_RAW in 100 ns units).
 */
#include <time.h>

#include "test_util.h"

static D3DKMT_HANDLE adapter;

static UINT64 clock_value(clockid_t id, UINT64 unit_ns)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return ((UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec) / unit_ns;
}

static D3DKMT_QUERYCLOCKCALIBRATION calibration_of(D3DKMT_HANDLE h)
{
    D3DKMT_QUERYCLOCKCALIBRATION q = { .hAdapter = h };

    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_SUCCESS);
    return q;
}

START_TEST(bad_input_gets_windows_status)
{
    D3DKMT_QUERYCLOCKCALIBRATION q = { 0 };
    D3DKMT_CLOSEADAPTER close;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(D3DKMTQueryClockCalibration(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_INVALID_PARAMETER);   /* hAdapter 0 */
    q.hAdapter = 0x40001240;                                                        /* nobody's */
    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_INVALID_PARAMETER);
    q.hAdapter = adapter;
    q.NodeOrdinal = 1;                                                              /* soft: one node */
    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_INVALID_PARAMETER);
    q.NodeOrdinal = 0;
    q.PhysicalAdapterIndex = 1;
    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(q.ClockData.GpuFrequency, 0);                                /* nothing written */
    close.hAdapter = adapter;
    ck_assert_status(D3DKMTCloseAdapter(&close), STATUS_SUCCESS);
    q.PhysicalAdapterIndex = 0;
    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_INVALID_PARAMETER);   /* closed */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(soft_clocks_are_monotonic_ns_and_qpc)
{
    D3DKMT_QUERYCLOCKCALIBRATION q, later;
    UINT64 gpu0, cpu0, gpu1, cpu1;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    gpu0 = clock_value(CLOCK_MONOTONIC, 1);
    cpu0 = clock_value(CLOCK_MONOTONIC_RAW, 100);
    q = calibration_of(adapter);
    gpu1 = clock_value(CLOCK_MONOTONIC, 1);
    cpu1 = clock_value(CLOCK_MONOTONIC_RAW, 100);
    ck_assert_uint_eq(q.ClockData.GpuFrequency, 1000000000ull);
    ck_assert_uint_ge(q.ClockData.GpuClockCounter, gpu0);
    ck_assert_uint_le(q.ClockData.GpuClockCounter, gpu1);
    ck_assert_uint_ge(q.ClockData.CpuClockCounter, cpu0);
    ck_assert_uint_le(q.ClockData.CpuClockCounter, cpu1);
    ck_assert_uint_eq(q.ClockData.Flags.Value, 0);
    later = calibration_of(adapter);
    ck_assert_uint_ge(later.ClockData.GpuClockCounter, q.ClockData.GpuClockCounter);
    ck_assert_uint_ge(later.ClockData.CpuClockCounter, q.ClockData.CpuClockCounter);
    kmt_test_shutdown_no_leaks();
}
END_TEST

static void no_clock_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiCalibrateGpuClock = NULL;
}

/* A miniport without DxgkDdiCalibrateGpuClock: the GPU has no timestamp
 * the driver can read (virtio_gpu and vgem on DRM). */
START_TEST(miniport_without_a_gpu_clock_is_not_supported)
{
    static DRIVER_INITIALIZATION_DATA soft;
    D3DKMT_QUERYCLOCKCALIBRATION q = { 0 };

    kmt_test_register_soft_variant("noclock", no_clock_patch, &soft);
    kmt_test_use_miniport("noclock");
    q.hAdapter = kmt_test_open_adapter();
    ck_assert_status(D3DKMTQueryClockCalibration(&q), STATUS_NOT_SUPPORTED);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clock_calibration");
    TCase *t = tcase_create("clock_calibration");

    tcase_add_test(t, bad_input_gets_windows_status);
    tcase_add_test(t, soft_clocks_are_monotonic_ns_and_qpc);
    tcase_add_test(t, miniport_without_a_gpu_clock_is_not_supported);
    suite_add_tcase(s, t);
    return kmt_test_run(s);
}
