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
 * family without one (dumb: the fake's "fakegpu").  Counters narrower
 * than 64 bits (i915's 36, xe's reported width) come back extended: they
 * never go back across the wrap, however far apart the calls are.
 */
#include "config.h"

#include <time.h>

#include "drm_test.h"
#include "fake_drm.h"
#include "fake_xe_exec.h"
#include "miniports/drm/drm_winsys.h"

#define QPC_HZ 10000000ull

static struct drm_test_adapter adapters[DRM_TEST_MAX];
static D3DKMT_HANDLE adapter;

static UINT64 qpc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (UINT64)ts.tv_sec * QPC_HZ + (UINT64)ts.tv_nsec / 100;
}

static void open_fake_counter(enum fake_drm_driver driver, const char *name, UINT64 hz, unsigned bits,
                              UINT64 offset)
{
    const struct fake_drm_config c = {
        .driver = driver, .timelines = true, .timestamp_hz = hz, .timestamp_bits = bits, .timestamp_offset = offset,
    };
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

static void open_fake(enum fake_drm_driver driver, const char *name, UINT64 hz)
{
    open_fake_counter(driver, name, hz, 0, 0);
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

/* The offset that puts a `bits`-wide counter at `hz` `ahead` ticks before
 * its wrap now. */
static UINT64 offset_before_wrap(UINT64 hz, unsigned bits, UINT64 ahead)
{
    UINT64 span = 1ull << bits;

    return span - gpu_at(qpc_now(), hz) % span - ahead;
}

/* One calibration, with the QPC reads around it. */
struct sample {
    UINT64 before, after, gpu;
};

static struct sample sample(void)
{
    D3DKMT_QUERYCLOCKCALIBRATION q;
    struct sample s;

    s.before = qpc_now();
    ck_assert_status(calibrate(0, 0, &q), STATUS_SUCCESS);
    s.after = qpc_now();
    s.gpu = q.ClockData.GpuClockCounter;
    return s;
}

/* Between two calibrations the counter went as far as the GPU ran: no
 * less than between the inner QPC reads, no more than between the outer. */
static void expect_advance(struct sample a, struct sample b, UINT64 hz)
{
    ck_assert_uint_ge(b.gpu, a.gpu);
    ck_assert_uint_ge(b.gpu - a.gpu, gpu_at(b.before, hz) - gpu_at(a.after + 1, hz));
    ck_assert_uint_le(b.gpu - a.gpu, gpu_at(b.after + 1, hz) - gpu_at(a.before, hz));
}

/* The fake's counter at `qpc`: `bits` wide (0: 64) from `offset`. */
static UINT64 counter_at(UINT64 qpc, UINT64 hz, unsigned bits, UINT64 offset)
{
    UINT64 v = gpu_at(qpc, hz) + offset;

    return bits ? v & ((1ull << bits) - 1) : v;
}

/* A `bits`-wide counter started at 0 now, so that the test's reads
 * come long before its wrap: the first calibration gives it as it is. */
static void expect_calibrated(UINT64 hz, unsigned bits)
{
    UINT64 offset = bits ? offset_before_wrap(hz, bits, 0) : 0;
    D3DKMT_QUERYCLOCKCALIBRATION q;

    fake_drm.config.timestamp_offset = offset;
    for (unsigned i = 0; i < 3; i++) {
        UINT64 before = qpc_now(), after;

        ck_assert_status(calibrate(0, 0, &q), STATUS_SUCCESS);
        after = qpc_now();
        ck_assert_uint_eq(q.ClockData.GpuFrequency, hz);
        ck_assert_uint_le(before, q.ClockData.CpuClockCounter);
        ck_assert_uint_le(q.ClockData.CpuClockCounter, after);
        ck_assert_uint_le(counter_at(before, hz, bits, offset), q.ClockData.GpuClockCounter);
        ck_assert_uint_le(q.ClockData.GpuClockCounter, counter_at(after + 1, hz, bits, offset));
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
    unsigned bits;                       /* the hardware counter's width (0: 64) */
} families[] = {
    { FAKE_I915, "i915", 12000000, 36 },    /* the render ring's timestamp register */
    { FAKE_XE, "xe", 19200000, 36 },        /* ENGINE_CYCLES at the GT's reference clock */
#ifdef KMT_HAVE_DRM_AMDGPU
    { FAKE_AMDGPU, "amdgpu", 100000000, 0 },   /* AMDGPU_INFO_TIMESTAMP */
#endif
};

START_TEST(each_family_reads_its_gpu_timestamp)
{
    const struct family *f = &families[_i];

    open_fake_counter(f->driver, f->name, f->hz, f->bits, 0);
    expect_calibrated(f->hz, f->bits);
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

/* i915's 36-bit ring timestamp 30 ms before its wrap: calibrations every
 * few ms through the wrap keep counting up past 2^36.  The offset is set
 * once the adapter is open, and a first read that comes after the wrap
 * anyway (the test was descheduled) starts over on a fresh adapter. */
START_TEST(i915_counter_is_extended_across_its_wrap)
{
    const UINT64 hz = 12000000;
    const struct timespec step = { 0, 5000000 };
    struct sample first, prev, cur;

    for (unsigned tries = 0;; tries++) {
        open_fake_counter(FAKE_I915, "i915", hz, 36, 0);
        fake_drm.config.timestamp_offset = offset_before_wrap(hz, 36, hz * 30 / 1000);
        first = sample();
        if (first.gpu >= 1ull << 35 || tries == 9)
            break;
        close_fake();
    }
    ck_assert_uint_ge(first.gpu, 1ull << 35);   /* read before the wrap */
    ck_assert_uint_lt(first.gpu, 1ull << 36);
    prev = first;
    for (unsigned i = 0; i < 400 && prev.gpu < 1ull << 36; i++) {
        nanosleep(&step, NULL);
        cur = sample();
        expect_advance(prev, cur, hz);
        prev = cur;
    }
    ck_assert_uint_ge(prev.gpu, 1ull << 36);     /* it went through the wrap */
    expect_advance(first, prev, hz);
    close_fake();
}
END_TEST

/* xe reports a 20-bit counter (a 55 ms wrap at 19.2 MHz); calls 150 ms
 * apart, more than two wraps, still give the time that passed. */
START_TEST(xe_counter_is_extended_by_its_reported_width)
{
    const UINT64 hz = 19200000;
    const struct timespec gap = { 0, 150000000 };
    struct sample a, b, c;

    open_fake_counter(FAKE_XE, "xe", hz, 20, 0);
    a = sample();
    ck_assert_uint_lt(a.gpu, 1ull << 20);
    nanosleep(&gap, NULL);
    b = sample();
    expect_advance(a, b, hz);
    ck_assert_uint_ge(b.gpu, 1ull << 20);
    nanosleep(&gap, NULL);
    c = sample();
    expect_advance(b, c, hz);
    close_fake();
}
END_TEST

/* Two threads calibrate at once and the later sample takes the lock
 * first: the earlier one is extended from the saved state but leaves it
 * alone, so the next sample still pairs the later GPU value with its own
 * CPU time. */
START_TEST(an_older_sample_leaves_the_saved_state)
{
    struct kdrm_clock_state state = { .valid = true, .gpu = (1ull << 36) + 5000, .cpu_qpc = 20000000 };
    struct kdrm_gpu_clock older = { .frequency = 10000000, .gpu = 4000, .cpu_qpc = 19999900, .width = 36 };
    struct kdrm_gpu_clock newer = { .frequency = 10000000, .gpu = 6000, .cpu_qpc = 20001000, .width = 36 };

    pthread_mutex_init(&state.lock, NULL);
    ck_assert_uint_eq(kdrm_clock_extend(&state, &older), (1ull << 36) + 4000);
    ck_assert_uint_eq(state.gpu, (1ull << 36) + 5000);
    ck_assert_uint_eq(state.cpu_qpc, 20000000);
    ck_assert_uint_eq(kdrm_clock_extend(&state, &newer), (1ull << 36) + 6000);
    ck_assert_uint_eq(state.cpu_qpc, 20001000);
    pthread_mutex_destroy(&state.lock);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_clock");
    TCase *tc = tcase_create("families");

    tcase_add_loop_test(tc, each_family_reads_its_gpu_timestamp, 0, (int)(sizeof(families) / sizeof(families[0])));
    tcase_add_loop_test(tc, a_kernel_without_the_timestamp_is_not_supported, 0,
                        (int)(sizeof(families) / sizeof(families[0])));
    tcase_add_test(tc, i915_counter_is_extended_across_its_wrap);
    tcase_add_test(tc, xe_counter_is_extended_by_its_reported_width);
    tcase_add_test(tc, an_older_sample_leaves_the_saved_state);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
