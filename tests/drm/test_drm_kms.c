/*
 * The DRM miniport's display side against a fake KMS device (fake_kms.c):
 * VidPn sources and their modes, vblank interrupts from the kernel's
 * events and from the timer that stands in where the kernel has none, the
 * scan line, child status, bad target ids, and teardown while the vblank
 * thread waits.  The adapter is the miniport's own, driven through its
 * DDIs: a fake i915 render node next to the fake card node; one test goes
 * through the core (WaitForVerticalBlankEvent on a dark CRTC).
 */
#define _GNU_SOURCE
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "drm_test.h"
#include "fake_drm.h"
#include "fake_kms.h"
#include "miniports/builtin.h"

#define HANDLE_OF_CORE ((HANDLE)0x5eed)
#define MAX_IRQS 128
#define TOLERANCE_NS 2000000ull          /* the issue's: 16.7 ms +- 2 ms */

static DRIVER_INITIALIZATION_DATA ddi;
static PVOID adapter;
static bool started;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned count, other_targets, wrong_handle;
    UINT64 at[MAX_IRQS];
} irqs = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, { 0 } };

static UINT64 now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

static void APIENTRY on_interrupt(HANDLE h, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq)
{
    UINT64 t = now_ns();

    if (irq->InterruptType != DXGK_INTERRUPT_CRTC_VSYNC)
        return;
    pthread_mutex_lock(&irqs.lock);
    if (h != HANDLE_OF_CORE)
        irqs.wrong_handle++;
    if (irq->CrtcVsync.VidPnTargetId != 0)
        irqs.other_targets++;
    if (irqs.count < MAX_IRQS)
        irqs.at[irqs.count] = t;
    irqs.count++;
    pthread_cond_broadcast(&irqs.cond);
    pthread_mutex_unlock(&irqs.lock);
}

/* The miniport's trace lines, on stderr with KMT_TEST_TRACE set. */
static void APIENTRY on_trace(HANDLE h, KMT_TRACE_LEVEL level, const char *function, const char *message)
{
    (void)h;
    (void)level;
    if (getenv("KMT_TEST_TRACE"))
        fprintf(stderr, "%s: %s", function, message);
}

static NTSTATUS APIENTRY capture(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *init)
{
    (void)driver;
    memcpy(&ddi, init, sizeof(ddi));
    return STATUS_SUCCESS;
}

static void reset_irqs(void)
{
    pthread_mutex_lock(&irqs.lock);
    irqs.count = irqs.other_targets = irqs.wrong_handle = 0;
    pthread_mutex_unlock(&irqs.lock);
}

static unsigned irq_count(void)
{
    unsigned n;

    pthread_mutex_lock(&irqs.lock);
    n = irqs.count;
    pthread_mutex_unlock(&irqs.lock);
    return n;
}

/* Waits until `n` interrupts came, at most `ms` milliseconds; the count. */
static unsigned wait_irqs(unsigned n, unsigned ms)
{
    UINT64 end = now_ns() + ms * 1000000ull;
    struct timespec ts = { (time_t)(end / 1000000000ull), (long)(end % 1000000000ull) };
    unsigned got;

    pthread_mutex_lock(&irqs.lock);
    while (irqs.count < n && pthread_cond_clockwait(&irqs.cond, &irqs.lock, CLOCK_MONOTONIC, &ts) == 0)
        ;
    got = irqs.count;
    pthread_mutex_unlock(&irqs.lock);
    return got;
}

/* The library's vblank threads alive in this process (by their name). */
static unsigned vblank_threads(void)
{
    return drm_test_threads_named("kmt-drm-vblank");
}

/* Waits (at most 1 s) until `n` vblank threads are left: a joined
 * thread stays listed in /proc/self/task until the kernel reaps it. */
static unsigned settle_threads(unsigned n)
{
    unsigned left = vblank_threads();

    for (int i = 0; i < 1000 && left != n; i++) {
        usleep(1000);
        left = vblank_threads();
    }
    return left;
}

/* The miniport's adapter over a fake i915 render node and, unless
 * `no_card`, the fake KMS card node; returns its VidPn source count. */
static ULONG start_with(const struct fake_kms_config *kc, bool no_card)
{
    const struct fake_drm_config dc = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
    KMT_DXGKRNL_EXPORTS exports = { sizeof(exports), KMT_MINIPORT_INTERFACE_VERSION, capture };
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL, NULL };
    DXGKRNL_INTERFACE iface = { .Size = sizeof(iface), .DeviceHandle = HANDLE_OF_CORE,
                                .KmtCbTrace = on_trace, .DxgkCbNotifyInterrupt = on_interrupt };
    KMT_PHYSICAL_DEVICE devices[4];
    DXGK_START_INFO info;
    char render[64], card[80];
    UINT count = 4;
    ULONG sources = 99, children = 99;

    ck_assert_int_ge(fake_drm_open(&dc), 0);
    ck_assert_int_eq(fake_kms_open(kc, card, sizeof(card)), 0);
    ck_assert_int_eq(fake_drm_device_path(render, sizeof(render)), 0);
    dev.render_node = render;
    dev.card_node = no_card ? NULL : card;
    fake_drm_set_devices(&dev, 1, "i915");
    ck_assert_status(KmtDrmMiniportDriverEntry(NULL, &exports), STATUS_SUCCESS);
    ck_assert_status(ddi.KmtDdiEnumPhysicalDevices(ddi.DriverContext, &count, devices), STATUS_SUCCESS);
    ck_assert_uint_eq(count, 1);
    ck_assert_status(ddi.DxgkDdiAddDevice(&devices[0], &adapter), STATUS_SUCCESS);
    memset(&info, 0, sizeof(info));
    ck_assert_status(ddi.DxgkDdiStartDevice(adapter, &info, &iface, &sources, &children), STATUS_SUCCESS);
    ck_assert_uint_eq(children, sources);
    started = true;
    reset_irqs();
    return sources;
}

static ULONG start(const struct fake_kms_config *kc)
{
    return start_with(kc, false);
}

static void stop(void)
{
    if (started) {
        ck_assert_status(ddi.DxgkDdiStopDevice(adapter), STATUS_SUCCESS);
        ck_assert_status(ddi.DxgkDdiRemoveDevice(adapter), STATUS_SUCCESS);
    }
    started = false;
    ck_assert_uint_eq(settle_threads(0), 0);
    fake_kms_close();
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}

static NTSTATUS control(BOOLEAN enable)
{
    return ddi.DxgkDdiControlInterrupt(adapter, DXGK_INTERRUPT_CRTC_VSYNC, enable);
}

/* DXGKQAITYPE_KMT_CURRENTDISPLAYMODE of `source`. */
static NTSTATUS query_mode(UINT source, KMT_CURRENT_DISPLAY_MODE *mode)
{
    DXGKARG_QUERYADAPTERINFO q = { .Type = DXGKQAITYPE_KMT_CURRENTDISPLAYMODE, .pInputData = &source,
                                   .InputDataSize = sizeof(source), .pOutputData = mode,
                                   .OutputDataSize = sizeof(*mode) };

    memset(mode, 0xcc, sizeof(*mode));
    return ddi.DxgkDdiQueryAdapterInfo(adapter, &q);
}

static int by_value(const void *x, const void *y)
{
    UINT64 p = *(const UINT64 *)x, q = *(const UINT64 *)y;

    return (p > q) - (p < q);
}

static void expect_near(const char *what, UINT64 got, UINT64 frame_ns)
{
    ck_assert_msg(got + TOLERANCE_NS >= frame_ns && got <= frame_ns + TOLERANCE_NS,
                  "%s interval %llu ns, not %llu ns +- 2 ms", what, (unsigned long long)got,
                  (unsigned long long)frame_ns);
}

/* `n` intervals between interrupts at `frame_ns`: their median within the
 * issue's tolerance.  Each interval as seen here also holds the wake-up
 * latency of two threads (the fake's and the miniport's) on a build
 * machine others share, which alone can exceed 2 ms or skip a frame; a
 * minority of such late wakes cannot move the median, while a lost,
 * doubled or mis-timed vblank on every frame does. */
static void expect_paced(unsigned n, UINT64 frame_ns)
{
    UINT64 d[MAX_IRQS];

    ck_assert_uint_lt(n, MAX_IRQS);
    ck_assert_uint_ge(wait_irqs(n + 1, (n + 10) * 50), n + 1);
    pthread_mutex_lock(&irqs.lock);
    for (unsigned i = 1; i <= n; i++) {
        d[i - 1] = irqs.at[i] - irqs.at[i - 1];
        if (getenv("KMT_TEST_TRACE"))
            fprintf(stderr, "interval %u: %llu ns\n", i, (unsigned long long)d[i - 1]);
    }
    ck_assert_uint_eq(irqs.other_targets, 0);
    ck_assert_uint_eq(irqs.wrong_handle, 0);
    pthread_mutex_unlock(&irqs.lock);
    qsort(d, n, sizeof(d[0]), by_value);
    expect_near("median", d[n / 2], frame_ns);
}

START_TEST(connected_crtc_is_one_source_with_its_current_mode)
{
    const struct fake_kms_config c = { 0 };
    KMT_CURRENT_DISPLAY_MODE m;

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_status(query_mode(0, &m), STATUS_SUCCESS);
    ck_assert_uint_eq(m.Width, 1920);
    ck_assert_uint_eq(m.Height, 1080);
    ck_assert_uint_eq(m.RefreshRateNumerator, 60);
    ck_assert_uint_eq(m.RefreshRateDenominator, 1);
    ck_assert_uint_eq(m.ScanLineTotal, 1125);
    ck_assert_uint_eq(m.VerticalBlankStart, 1080);
    ck_assert_uint_eq(m.HorizontalTotal, 2200);
    ck_assert_uint_eq(m.Interlaced, 0);
    ck_assert_uint_eq(m.PixelRate, 148500000);
    ck_assert_status(query_mode(1, &m), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    stop();
}
END_TEST

/* No CRTC drives the connector: the first CRTC it may use, with the
 * connector's preferred mode (not its first). */
START_TEST(idle_crtc_takes_the_connectors_preferred_mode)
{
    const struct fake_kms_config c = { .crtc_off = true };
    KMT_CURRENT_DISPLAY_MODE m;

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_status(query_mode(0, &m), STATUS_SUCCESS);
    ck_assert_uint_eq(m.Width, 1280);
    ck_assert_uint_eq(m.Height, 720);
    ck_assert_uint_eq(m.RefreshRateNumerator, 148352);  /* 74.176 MHz / (1650 * 750) */
    ck_assert_uint_eq(m.RefreshRateDenominator, 2475);
    ck_assert_uint_eq(m.ScanLineTotal, 750);
    stop();
}
END_TEST

START_TEST(no_connected_output_or_no_card_node_is_no_source)
{
    const struct fake_kms_config unplugged = { .unplugged = true }, c = { 0 };
    DXGKARG_GETSCANLINE sl = { .VidPnTargetId = 0 };
    KMT_CURRENT_DISPLAY_MODE m;

    ck_assert_uint_eq(start(&unplugged), 0);
    ck_assert_status(control(TRUE), STATUS_NOT_SUPPORTED);
    ck_assert_status(control(FALSE), STATUS_SUCCESS);
    ck_assert_status(ddi.DxgkDdiGetScanLine(adapter, &sl), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_TARGET);
    ck_assert_status(query_mode(0, &m), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    stop();
    ck_assert_uint_eq(start_with(&c, true), 0);
    ck_assert_uint_eq(fake_kms.probes + fake_kms.current_reads, 0);
    stop();
}
END_TEST

START_TEST(vblank_interrupts_come_at_60_hz)
{
    const struct fake_kms_config c = { 0 };

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_status(control(TRUE), STATUS_SUCCESS);
    expect_paced(30, FAKE_KMS_FRAME_NS);
    ck_assert_uint_ge(fake_kms.delivered, 30);
    ck_assert_uint_eq(fake_kms.refused, 0);
    stop();
}
END_TEST

START_TEST(disabling_stops_the_thread_and_enabling_starts_it)
{
    const struct fake_kms_config c = { 0 };
    unsigned n;

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_uint_eq(vblank_threads(), 0);
    ck_assert_uint_eq(fake_kms.queued, 0);
    ck_assert_status(control(TRUE), STATUS_SUCCESS);
    ck_assert_status(control(TRUE), STATUS_SUCCESS);     /* twice: still one thread */
    ck_assert_uint_ge(wait_irqs(3, 1000), 3);
    ck_assert_uint_eq(vblank_threads(), 1);
    ck_assert_status(control(FALSE), STATUS_SUCCESS);
    ck_assert_uint_eq(settle_threads(0), 0);
    n = irq_count();
    usleep(100000);                      /* six frames */
    ck_assert_uint_eq(irq_count(), n);
    ck_assert_status(control(TRUE), STATUS_SUCCESS);
    ck_assert_uint_ge(wait_irqs(n + 3, 1000), n + 3);
    ck_assert_uint_eq(vblank_threads(), 1);
    ck_assert_status(control(FALSE), STATUS_SUCCESS);
    ck_assert_status(control(FALSE), STATUS_SUCCESS);
    ck_assert_uint_eq(settle_threads(0), 0);
    stop();
}
END_TEST

/* virtio_gpu: the kernel has no vblank events; the timer paces at the
 * mode's rate. */
START_TEST(without_kernel_vblank_a_timer_paces_at_the_mode_rate)
{
    const struct fake_kms_config c = { .no_vblank = true };

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_status(control(TRUE), STATUS_SUCCESS);
    expect_paced(30, FAKE_KMS_FRAME_NS);
    ck_assert_uint_ge(fake_kms.refused, 1);
    ck_assert_uint_eq(fake_kms.queued, 0);
    stop();
}
END_TEST

/* A CRTC that is off refuses vblank events (EINVAL): the timer, at the
 * preferred mode's 59.94 Hz. */
START_TEST(idle_crtc_vblank_is_the_timer_at_its_modes_rate)
{
    const struct fake_kms_config c = { .crtc_off = true };

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_status(control(TRUE), STATUS_SUCCESS);
    expect_paced(20, 2475ull * 1000000000ull / 148352ull);
    ck_assert_uint_eq(fake_kms.queued, 0);
    ck_assert_uint_ge(fake_kms.refused, 1);
    stop();
}
END_TEST

/* Scan lines read for up to 200 ms: each inside the 1080p frame's 1125
 * lines, in vertical blank exactly from line 1080 on, and both an active
 * line and a blank one met (the blank is 45 lines, 4% of the frame). */
static void expect_scan_lines(void)
{
    bool seen_blank = false, seen_active = false;
    UINT64 end = now_ns() + 200000000ull;

    while (now_ns() < end && !(seen_blank && seen_active)) {
        DXGKARG_GETSCANLINE sl = { .VidPnTargetId = 0 };
        ck_assert_status(ddi.DxgkDdiGetScanLine(adapter, &sl), STATUS_SUCCESS);
        ck_assert_uint_lt(sl.ScanLine, 1125);
        ck_assert_int_eq(!!sl.InVerticalBlank, sl.ScanLine >= 1080);
        seen_blank |= !!sl.InVerticalBlank;
        seen_active |= !sl.InVerticalBlank;
    }
    ck_assert(seen_blank && seen_active);
}

/* From CRTC_GET_SEQUENCE's timestamps: the line the fake's clock says,
 * between the lines at the instants before and after the call. */
START_TEST(scan_line_follows_the_crtcs_vblank_clock)
{
    const struct fake_kms_config c = { 0 };

    ck_assert_uint_eq(start(&c), 1);
    expect_scan_lines();
    for (int i = 0; i < 20; i++) {
        DXGKARG_GETSCANLINE sl = { .VidPnTargetId = 0 };
        UINT64 before = fake_kms_scan_line(now_ns()), after;

        ck_assert_status(ddi.DxgkDdiGetScanLine(adapter, &sl), STATUS_SUCCESS);
        after = fake_kms_scan_line(now_ns());
        if (before <= after)             /* no frame boundary in between */
            ck_assert(sl.ScanLine >= before && sl.ScanLine <= after);
        usleep(3000);
    }
    stop();
}
END_TEST

/* Without kernel vblank: the timer's grid. */
START_TEST(scan_line_of_a_timer_source_stays_in_the_mode)
{
    const struct fake_kms_config c = { .no_vblank = true };

    ck_assert_uint_eq(start(&c), 1);
    expect_scan_lines();
    stop();
}
END_TEST

static BOOLEAN connected(BOOLEAN non_destructive)
{
    DXGK_CHILD_STATUS s = { .Type = StatusConnection, .ChildUid = 0 };

    s.HotPlug.Connected = 0xcc;
    ck_assert_status(ddi.DxgkDdiQueryChildStatus(adapter, &s, non_destructive), STATUS_SUCCESS);
    return s.HotPlug.Connected;
}

/* A probe sees the cable; NonDestructiveOnly reads the last probed state. */
START_TEST(child_status_probes_unless_non_destructive)
{
    const struct fake_kms_config c = { 0 };
    unsigned probes;

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_uint_eq(connected(FALSE), TRUE);
    fake_kms.plugged = false;
    probes = fake_kms.probes;
    ck_assert_uint_eq(connected(TRUE), TRUE);
    ck_assert_uint_eq(fake_kms.probes, probes);
    ck_assert_uint_eq(connected(FALSE), FALSE);
    ck_assert_uint_eq(fake_kms.probes, probes + 1);
    ck_assert_uint_eq(connected(TRUE), FALSE);
    fake_kms.plugged = true;
    ck_assert_uint_eq(connected(FALSE), TRUE);
    stop();
}
END_TEST

START_TEST(bad_targets_and_types_are_refused)
{
    const struct fake_kms_config c = { 0 };
    DXGK_CHILD_STATUS s = { .Type = StatusConnection, .ChildUid = 1 };
    DXGKARG_GETSCANLINE sl = { .VidPnTargetId = 1 };

    ck_assert_uint_eq(start(&c), 1);
    ck_assert_status(ddi.DxgkDdiGetScanLine(adapter, &sl), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_TARGET);
    sl.VidPnTargetId = 0xffffffffu;
    ck_assert_status(ddi.DxgkDdiGetScanLine(adapter, &sl), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_TARGET);
    ck_assert_status(ddi.DxgkDdiGetScanLine(adapter, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(ddi.DxgkDdiQueryChildStatus(adapter, &s, FALSE), STATUS_INVALID_PARAMETER);
    ck_assert_status(ddi.DxgkDdiQueryChildStatus(adapter, NULL, FALSE), STATUS_INVALID_PARAMETER);
    s.ChildUid = 0;
    s.Type = StatusRotation;
    ck_assert_status(ddi.DxgkDdiQueryChildStatus(adapter, &s, FALSE), STATUS_NOT_SUPPORTED);
    ck_assert_status(ddi.DxgkDdiControlInterrupt(adapter, DXGK_INTERRUPT_DMA_COMPLETED, TRUE),
                     STATUS_NOT_IMPLEMENTED);
    ck_assert_uint_eq(vblank_threads(), 0);
    stop();
}
END_TEST

/* The adapter goes while the thread sleeps on the card node (kernel
 * events) or on its timer: it is woken and joined, nothing is raised after. */
START_TEST(teardown_while_waiting_for_vblank)
{
    const struct fake_kms_config configs[] = { { 0 }, { .no_vblank = true } };

    for (unsigned i = 0; i < 2; i++) {
        unsigned n;

        ck_assert_uint_eq(start(&configs[i]), 1);
        ck_assert_status(control(TRUE), STATUS_SUCCESS);
        ck_assert_uint_ge(wait_irqs(1, 1000), 1);
        ck_assert_status(ddi.DxgkDdiStopDevice(adapter), STATUS_SUCCESS);
        ck_assert_uint_eq(vblank_threads(), 0);
        ck_assert_status(ddi.DxgkDdiRemoveDevice(adapter), STATUS_SUCCESS);
        started = false;
        n = irq_count();
        usleep(50000);
        ck_assert_uint_eq(irq_count(), n);
        stop();
    }
}
END_TEST

/* Through the core: a WaitForVerticalBlankEvent on the dark CRTC's source
 * returns at the timer's vblanks, a frame of the preferred mode apart,
 * with no time limit standing in; and a wait on a source past the
 * adapter's one fails at once. */
START_TEST(wait_on_a_dark_crtc_is_paced_by_the_timer)
{
    const struct fake_kms_config kc = { .crtc_off = true };
    D3DKMT_ADAPTERINFO info[2];
    D3DKMT_ENUMADAPTERS2 e = { 2, info };
    enum { WAITS = 16 };
    UINT64 at[WAITS], d[WAITS - 1];

    ck_assert_int_eq(fake_kms_device_open(&kc), 0);
    kmt_test_use_miniport("drm");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].NumOfSources, 1);
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { info[0].hAdapter, 0, 1 };
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent(&w), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    w.VidPnSourceId = 0;
    for (unsigned i = 0; i < WAITS; i++) {
        ck_assert_status(D3DKMTWaitForVerticalBlankEvent(&w), STATUS_SUCCESS);
        at[i] = now_ns();
        if (i)
            d[i - 1] = at[i] - at[i - 1];
    }
    ck_assert_uint_ge(fake_kms.refused, 1);
    ck_assert_uint_eq(fake_kms.queued, 0);
    qsort(d, WAITS - 1, sizeof(d[0]), by_value);
    expect_near("median", d[(WAITS - 1) / 2], 2475ull * 1000000000ull / 148352ull);
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ info[0].hAdapter }), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
    ck_assert_uint_eq(settle_threads(0), 0);
    fake_kms_device_close();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_kms");
    TCase *tc = tcase_create("kms");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, connected_crtc_is_one_source_with_its_current_mode);
    tcase_add_test(tc, idle_crtc_takes_the_connectors_preferred_mode);
    tcase_add_test(tc, no_connected_output_or_no_card_node_is_no_source);
    tcase_add_test(tc, vblank_interrupts_come_at_60_hz);
    tcase_add_test(tc, disabling_stops_the_thread_and_enabling_starts_it);
    tcase_add_test(tc, without_kernel_vblank_a_timer_paces_at_the_mode_rate);
    tcase_add_test(tc, idle_crtc_vblank_is_the_timer_at_its_modes_rate);
    tcase_add_test(tc, scan_line_follows_the_crtcs_vblank_clock);
    tcase_add_test(tc, scan_line_of_a_timer_source_stays_in_the_mode);
    tcase_add_test(tc, child_status_probes_unless_non_destructive);
    tcase_add_test(tc, bad_targets_and_types_are_refused);
    tcase_add_test(tc, teardown_while_waiting_for_vblank);
    tcase_add_test(tc, wait_on_a_dark_crtc_is_paced_by_the_timer);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
