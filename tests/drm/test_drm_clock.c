/*
 * QueryClockCalibration on the DRM families, through the D3DKMT API over
 * the fake kernel: i915 (the render ring's timestamp register, at
 * CS_TIMESTAMP_FREQUENCY), xe (DEVICE_QUERY_ENGINE_CYCLES, at the GT's
 * reference clock) and amdgpu (AMDGPU_INFO_TIMESTAMP, at the device's
 * counter frequency).  The fake's GPU counter is CLOCK_MONOTONIC_RAW
 * scaled to the configured frequency, so the counter the call gives lies
 * between the GPU times of the test's own QueryPerformanceCounter reads
 * around the call, and the CPU counter between those reads themselves.
 * A kernel without the timestamp gives STATUS_NOT_SUPPORTED, as does a
 * family without one (dumb: the fake's "fakegpu").
 */
#include "config.h"

#include <time.h>

#include "drm_test.h"
#include "fake_drm.h"
#include "fake_xe_exec.h"

#define QPC_HZ 10000000ull

static struct drm_test_adapter adapters[DRM_TEST_MAX];
static D3DKMT_HANDLE adapter;

static UINT64 qpc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (UINT64)ts.tv_sec * QPC_HZ + (UINT64)ts.tv_nsec / 100;
}

static void open_fake(enum fake_drm_driver driver, const char *name, UINT64 hz)
{
    const struct fake_drm_config c = { .driver = driver, .timelines = true, .timestamp_hz = hz };
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL };
    static char path[64];

    fake_xe_reset();
    ck_assert_int_ge(fake_drm_open(&c), 0);
    ck_assert_int_eq(fake_drm_device_path(path, sizeof(path)), 0);
    dev.render_node = path;
    fake_drm_set_devices(&dev, 1, name);
    ck_assert_uint_eq(drm_test_use_allocating(adapters), 1);
    adapter = adapters[0].handle;
}

static void close_fake(void)
{
    drm_test_finish(adapter, false);
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

static NTSTATUS calibrate(UINT node, UINT physical, D3DKMT_QUERYCLOCKCALIBRATION *q)
{
    memset(q, 0xcc, sizeof(*q));
    q->hAdapter = adapter;
    q->NodeOrdinal = node;
    q->PhysicalAdapterIndex = physical;
    return D3DKMTQueryClockCalibration(q);
}

/* The GPU counter at QPC time `qpc`, as the fake counts it: floor(ns * hz /
 * 1e9), split at whole seconds so no product needs 128 bits (i386 has none). */
static UINT64 gpu_at(UINT64 qpc, UINT64 hz)
{
    UINT64 ns = qpc * 100;

    return ns / 1000000000ull * hz + ns % 1000000000ull * hz / 1000000000ull;
}

static void expect_calibrated(UINT64 hz)
{
    D3DKMT_QUERYCLOCKCALIBRATION q;

    for (unsigned i = 0; i < 3; i++) {
        UINT64 before = qpc_now(), after;

        ck_assert_status(calibrate(0, 0, &q), STATUS_SUCCESS);
        after = qpc_now();
        ck_assert_uint_eq(q.ClockData.GpuFrequency, hz);
        ck_assert_uint_le(before, q.ClockData.CpuClockCounter);
        ck_assert_uint_le(q.ClockData.CpuClockCounter, after);
        ck_assert_uint_le(gpu_at(before, hz), q.ClockData.GpuClockCounter);
        ck_assert_uint_le(q.ClockData.GpuClockCounter, gpu_at(after + 1, hz));
        ck_assert_uint_eq(q.ClockData.Flags.Value, 0);
    }
    /* one node, one physical adapter */
    ck_assert_status(calibrate(1, 0, &q), STATUS_INVALID_PARAMETER);
    ck_assert_status(calibrate(0, 1, &q), STATUS_INVALID_PARAMETER);
}

static void expect_not_supported(void)
{
    D3DKMT_QUERYCLOCKCALIBRATION q;

    ck_assert_status(calibrate(0, 0, &q), STATUS_NOT_SUPPORTED);
    ck_assert_uint_eq(q.ClockData.GpuFrequency, 0xccccccccccccccccull);   /* untouched */
}

static const struct family {
    enum fake_drm_driver driver;
    const char *name;
    UINT64 hz;                           /* a rate the kernel could give */
} families[] = {
    { FAKE_I915, "i915", 12000000 },     /* the render ring's timestamp register */
    { FAKE_XE, "xe", 19200000 },         /* ENGINE_CYCLES at the GT's reference clock */
#ifdef KMT_HAVE_DRM_AMDGPU
    { FAKE_AMDGPU, "amdgpu", 100000000 },   /* AMDGPU_INFO_TIMESTAMP */
#endif
};

START_TEST(each_family_reads_its_gpu_timestamp)
{
    const struct family *f = &families[_i];

    open_fake(f->driver, f->name, f->hz);
    expect_calibrated(f->hz);
    close_fake();
}
END_TEST

/* i915 before CS_TIMESTAMP_FREQUENCY, xe without ENGINE_CYCLES, amdgpu
 * with no counter frequency. */
START_TEST(a_kernel_without_the_timestamp_is_not_supported)
{
    const struct family *f = &families[_i];

    open_fake(f->driver, f->name, 0);
    expect_not_supported();
    close_fake();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_clock");
    TCase *tc = tcase_create("families");

    tcase_add_loop_test(tc, each_family_reads_its_gpu_timestamp, 0, (int)(sizeof(families) / sizeof(families[0])));
    tcase_add_loop_test(tc, a_kernel_without_the_timestamp_is_not_supported, 0,
                        (int)(sizeof(families) / sizeof(families[0])));
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
