/*
 * Vertical blanks on the software adapter's virtual 60 Hz outputs:
 * WaitForVerticalBlankEvent(2), GetScanLine, PollDisplayChildren and
 * KMTQAITYPE_CURRENTDISPLAYMODE, with bad input everywhere, the timing the
 * issue asks for (successive waits 16.7 ms +- 2 ms apart), many waiters,
 * waits racing DestroyDevice and CloseAdapter, and the vsync interrupt's
 * switch (a soft variant records DxgkDdiControlInterrupt).  A variant
 * whose vsync never comes shows what else ends a wait: the events of
 * WaitForVerticalBlankEvent2, DestroyDevice, CloseAdapter of the handle
 * the wait named (also racing new waits), process teardown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)
#define GARBAGE_HANDLE 0x40001240u
#define FRAME_NS 16666667ull             /* 1/60 s */
#define FRAME_NS3 50000000ull            /* 1/60 s in thirds of a ns: exact */
#define TOLERANCE_NS 2000000ull          /* the 2 ms */

static D3DKMT_HANDLE adapter, device;

/* ---- the recording variant of soft --------------------------------------------- */

static DRIVER_INITIALIZATION_DATA soft;
static struct {
    pthread_mutex_t lock;
    bool enabled;
    unsigned enables, disables, out_of_order, other_types;
} irq = { PTHREAD_MUTEX_INITIALIZER };

static NTSTATUS APIENTRY rec_control_interrupt(HANDLE a, DXGK_INTERRUPT_TYPE type, BOOLEAN enable)
{
    pthread_mutex_lock(&irq.lock);
    if (type != DXGK_INTERRUPT_CRTC_VSYNC)
        irq.other_types++;
    if (!!enable == irq.enabled)
        irq.out_of_order++;              /* the contract: enable, disable, enable, ... */
    irq.enabled = enable;
    enable ? irq.enables++ : irq.disables++;
    pthread_mutex_unlock(&irq.lock);
    return soft.DxgkDdiControlInterrupt(a, type, enable);
}

static void rec_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiControlInterrupt = rec_control_interrupt;
}

/* Switched on and off, and never raises a vsync: a dark output whose
 * miniport has no timer either. */
static NTSTATUS APIENTRY silent_control_interrupt(HANDLE a, DXGK_INTERRUPT_TYPE type, BOOLEAN enable)
{
    (void)a;
    (void)type;
    pthread_mutex_lock(&irq.lock);
    irq.enabled = enable;
    enable ? irq.enables++ : irq.disables++;
    pthread_mutex_unlock(&irq.lock);
    return STATUS_SUCCESS;
}

static void silent_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiControlInterrupt = silent_control_interrupt;
}

static void no_vsync_patch(DRIVER_INITIALIZATION_DATA *ddi)
{
    ddi->DxgkDdiControlInterrupt = NULL;
    ddi->DxgkDdiGetScanLine = NULL;
}

static void setup(void)
{
    unsetenv("KMTSHIM_SOFT_SOURCES");
    pthread_mutex_lock(&irq.lock);
    irq.enabled = false;
    irq.enables = irq.disables = irq.out_of_order = irq.other_types = 0;
    pthread_mutex_unlock(&irq.lock);
    kmt_test_register_soft_variant("vsyncrec", rec_patch, &soft);
    kmt_test_use_miniport("vsyncrec");
    device = kmt_test_create_device(&adapter);
}

static void setup_silent(void)
{
    setup();
    kmt_test_shutdown_no_leaks();
    kmt_test_register_soft_variant("silent", silent_patch, &soft);
    kmt_test_use_miniport("silent");
    device = kmt_test_create_device(&adapter);
}

static void setup_render_only(void)
{
    setenv("KMTSHIM_SOFT_SOURCES", "0", 1);
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
    unsetenv("KMTSHIM_SOFT_SOURCES");
}

static void assert_interrupt_off(void)
{
    pthread_mutex_lock(&irq.lock);
    ck_assert(!irq.enabled);
    ck_assert_uint_eq(irq.enables, irq.disables);
    ck_assert_uint_eq(irq.out_of_order, 0);
    ck_assert_uint_eq(irq.other_types, 0);
    pthread_mutex_unlock(&irq.lock);
}

static NTSTATUS wait_vblank(D3DKMT_HANDLE a, D3DKMT_HANDLE d, UINT source)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { a, d, source };

    return D3DKMTWaitForVerticalBlankEvent(&w);
}

static NTSTATUS scan_line(D3DKMT_HANDLE a, UINT source, D3DKMT_GETSCANLINE *out)
{
    memset(out, 0xcc, sizeof(*out));
    out->hAdapter = a;
    out->VidPnSourceId = source;
    return D3DKMTGetScanLine(out);
}

static NTSTATUS poll_children(D3DKMT_HANDLE a, UINT flags)
{
    D3DKMT_POLLDISPLAYCHILDREN p;

    memcpy(&p, (UINT[2]){ a, flags }, sizeof(p));
    return D3DKMTPollDisplayChildren(&p);
}

static NTSTATUS current_mode(D3DKMT_HANDLE a, UINT source, D3DKMT_CURRENTDISPLAYMODE *mode)
{
    D3DKMT_QUERYADAPTERINFO q = { a, KMTQAITYPE_CURRENTDISPLAYMODE, mode, sizeof(*mode) };

    memset(mode, 0xcc, sizeof(*mode));
    mode->VidPnSourceId = source;
    return D3DKMTQueryAdapterInfo(&q);
}

static UINT64 now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

/* ---- the default: one 1080p60 output ---------------------------------------------- */

START_TEST(soft_has_one_output_by_default)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CURRENTDISPLAYMODE mode;

    kmt_test_shutdown_no_leaks();
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].NumOfSources, 1);
    ck_assert_status(current_mode(info[0].hAdapter, 0, &mode), STATUS_SUCCESS);
    ck_assert_uint_eq(mode.VidPnSourceId, 0);
    ck_assert_uint_eq(mode.DisplayMode.Width, 1920);
    ck_assert_uint_eq(mode.DisplayMode.Height, 1080);
    ck_assert_uint_eq(mode.DisplayMode.IntegerRefreshRate, 60);
    ck_assert_uint_eq(mode.DisplayMode.RefreshRate.Numerator, 60);
    ck_assert_uint_eq(mode.DisplayMode.RefreshRate.Denominator, 1);
    ck_assert_int_eq(mode.DisplayMode.Format, D3DDDIFMT_X8R8G8B8);
    ck_assert_int_eq(mode.DisplayMode.ScanLineOrdering, D3DDDI_VSSLO_PROGRESSIVE);
    ck_assert_int_eq(mode.DisplayMode.DisplayOrientation, D3DDDI_ROTATION_IDENTITY);
    ck_assert_status(current_mode(info[0].hAdapter, 1, &mode), STATUS_INVALID_PARAMETER);
    mode.VidPnSourceId = 0;
    ck_assert_status(D3DKMTQueryAdapterInfo(&(D3DKMT_QUERYADAPTERINFO){ info[0].hAdapter,
                         KMTQAITYPE_CURRENTDISPLAYMODE, &mode, sizeof(mode) - 1 }), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ info[0].hAdapter }), STATUS_SUCCESS);
}
END_TEST

START_TEST(sources_come_from_the_environment)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_GETSCANLINE sl;

    kmt_test_shutdown_no_leaks();
    setenv("KMTSHIM_SOFT_SOURCES", "3", 1);
    kmt_test_use_miniport("soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(info[0].NumOfSources, 3);
    ck_assert_status(wait_vblank(info[0].hAdapter, 0, 2), STATUS_SUCCESS);
    ck_assert_status(scan_line(info[0].hAdapter, 2, &sl), STATUS_SUCCESS);
    ck_assert_status(wait_vblank(info[0].hAdapter, 0, 3), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ info[0].hAdapter }), STATUS_SUCCESS);
}
END_TEST

/* ---- bad input ----------------------------------------------------------------------- */

START_TEST(wait_bad_input)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT zero = { 0 };

    ck_assert_status(D3DKMTWaitForVerticalBlankEvent(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent(&zero), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_vblank(GARBAGE_HANDLE, 0, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_vblank(device, 0, 0), STATUS_INVALID_PARAMETER);         /* not an adapter */
    ck_assert_status(wait_vblank(adapter, GARBAGE_HANDLE, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_vblank(adapter, adapter, 0), STATUS_INVALID_PARAMETER);  /* not a device */
    ck_assert_status(wait_vblank(adapter, 0, 1), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(wait_vblank(adapter, device, 0xffffffffu), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(wait_vblank(adapter, 0, 0), STATUS_SUCCESS);
    ck_assert_status(wait_vblank(adapter, device, 0), STATUS_SUCCESS);
    assert_interrupt_off();
}
END_TEST

START_TEST(wait2_bad_input)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT2 w = { adapter, device, 0, 0, { 0 } };
    int fd = eventfd(0, EFD_CLOEXEC);

    ck_assert_int_ge(fd, 0);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    w.NumObjects = D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS + 1;
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_INVALID_PARAMETER);
    w.NumObjects = 1;                    /* a NULL event */
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_INVALID_HANDLE);
    w.ObjectHandleArray[0] = (HANDLE)(intptr_t)fd;
    w.ObjectHandleArray[1] = (HANDLE)(intptr_t)0x7ffffff0;
    w.NumObjects = 2;
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_INVALID_HANDLE);
    w.NumObjects = 1;
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_WAIT_0);
    w.NumObjects = 0;
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_WAIT_0);
    w.VidPnSourceId = 1;
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    w.VidPnSourceId = 0;
    w.hAdapter = 0;
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_INVALID_PARAMETER);
    close(fd);
    assert_interrupt_off();
}
END_TEST

START_TEST(scan_line_and_poll_bad_input)
{
    D3DKMT_GETSCANLINE sl;

    ck_assert_status(D3DKMTGetScanLine(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTGetScanLine(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(scan_line(0, 0, &sl), STATUS_INVALID_PARAMETER);
    ck_assert_status(scan_line(GARBAGE_HANDLE, 0, &sl), STATUS_INVALID_PARAMETER);
    ck_assert_status(scan_line(device, 0, &sl), STATUS_INVALID_PARAMETER);
    ck_assert_status(scan_line(adapter, 1, &sl), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_uint_eq(sl.ScanLine, 0xccccccccu);   /* outputs untouched on failure */

    ck_assert_status(D3DKMTPollDisplayChildren(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTPollDisplayChildren(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(poll_children(0, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(poll_children(GARBAGE_HANDLE, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(poll_children(adapter, 1u << 5), STATUS_INVALID_PARAMETER);   /* Reserved */
    ck_assert_status(poll_children(adapter, 1u << 31), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(device_of_another_adapter)
{
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CREATEDEVICE cd = { 0 };

    kmt_test_shutdown_no_leaks();
    kmt_test_use_miniport("vsyncrec,soft");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 2);
    cd.hAdapter = info[1].hAdapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ck_assert_status(wait_vblank(info[0].hAdapter, cd.hDevice, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_vblank(info[1].hAdapter, cd.hDevice, 0), STATUS_SUCCESS);
    /* every adapter's children, in one call */
    ck_assert_status(poll_children(info[0].hAdapter, 1u << 3), STATUS_SUCCESS);
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ cd.hDevice }), STATUS_SUCCESS);
    for (unsigned i = 0; i < 2; i++)
        ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ info[i].hAdapter }), STATUS_SUCCESS);
}
END_TEST

START_TEST(render_only_adapter_has_no_vblank)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT2 w2 = { adapter, 0, 0, 0, { 0 } };
    D3DKMT_CURRENTDISPLAYMODE mode;
    D3DKMT_GETSCANLINE sl;

    ck_assert_status(wait_vblank(adapter, 0, 0), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(wait_vblank(adapter, device, 0), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w2), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(scan_line(adapter, 0, &sl), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ck_assert_status(current_mode(adapter, 0, &mode), STATUS_INVALID_PARAMETER);
    ck_assert_status(poll_children(adapter, 0), STATUS_SUCCESS);   /* nothing to poll */
}
END_TEST

START_TEST(miniport_without_vsync)
{
    D3DKMT_GETSCANLINE sl;

    kmt_test_shutdown_no_leaks();
    kmt_test_register_soft_variant("novsync", no_vsync_patch, &soft);
    kmt_test_use_miniport("novsync");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(wait_vblank(adapter, 0, 0), STATUS_NOT_SUPPORTED);
    ck_assert_status(scan_line(adapter, 0, &sl), STATUS_NOT_SUPPORTED);
    ck_assert_status(poll_children(adapter, 0), STATUS_SUCCESS);
}
END_TEST

/* ---- timing ---------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    UINT64 x = *(const UINT64 *)a, y = *(const UINT64 *)b;

    return x < y ? -1 : x > y;
}

static UINT64 median(UINT64 *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp_u64);
    return v[n / 2];
}

/* The index of the last 60 Hz boundary of CLOCK_MONOTONIC at or before t. */
static UINT64 frame_of(UINT64 t)
{
    return t * 3 / FRAME_NS3;
}

/* One run of successive waits: every wait must cross a boundary (none
 * returns for a blank that began before the call); gives the median
 * interval between returns and the median lateness after the boundary. */
static void measure_waits(UINT64 *median_gap, UINT64 *median_late)
{
    enum { WAITS = 25 };
    UINT64 start, end[WAITS], gap[WAITS - 1], late[WAITS];

    for (unsigned i = 0; i < WAITS; i++) {
        start = now_ns();
        ck_assert_status(wait_vblank(adapter, device, 0), STATUS_SUCCESS);
        end[i] = now_ns();
        ck_assert_msg(frame_of(end[i]) > frame_of(start), "wait %u returned inside the frame it began in", i);
        late[i] = end[i] * 3 % FRAME_NS3 / 3;
        if (i)
            gap[i - 1] = end[i] - end[i - 1];
    }
    *median_gap = median(gap, WAITS - 1);
    *median_late = median(late, WAITS);
}

/* The tolerance: successive waits 16.7 ms +- 2 ms apart.  A
 * thread that wakes late on a shared machine shortens the interval after
 * it, and a machine that starves the test for whole frames stretches
 * them, so the tolerance applies to medians, and to the best of three
 * runs. */
START_TEST(successive_waits_are_one_frame_apart)
{
    UINT64 g = 0, l = 0;
    bool met = false;

    for (unsigned run = 0; run < 3 && !met; run++) {
        measure_waits(&g, &l);
        met = g + TOLERANCE_NS >= FRAME_NS && g <= FRAME_NS + TOLERANCE_NS && l <= TOLERANCE_NS;
    }
    ck_assert_msg(met, "median interval %llu ns, median wake-up %llu ns after the boundary",
                  (unsigned long long)g, (unsigned long long)l);
    assert_interrupt_off();
}
END_TEST

struct waiter {
    D3DKMT_HANDLE adapter, device;
    unsigned waits;
    NTSTATUS status[4];
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;

    for (unsigned i = 0; i < w->waits; i++)
        w->status[i] = wait_vblank(w->adapter, w->device, 0);
    return NULL;
}

START_TEST(many_threads_wake_together)
{
    enum { THREADS = 16 };
    struct waiter w[THREADS];
    pthread_t th[THREADS];

    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (struct waiter){ adapter, i % 2 ? device : 0, 3, { 0 } };
        ck_assert_int_eq(pthread_create(&th[i], NULL, wait_thread, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        for (unsigned j = 0; j < 3; j++)
            ck_assert_status(w[i].status[j], STATUS_SUCCESS);
    }
    assert_interrupt_off();
    pthread_mutex_lock(&irq.lock);
    ck_assert_uint_ge(irq.enables, 1);
    pthread_mutex_unlock(&irq.lock);
}
END_TEST

/* Nobody waits: the interrupt is off, and it is on while somebody does. */
START_TEST(interrupt_only_while_waiting)
{
    struct waiter w = { adapter, 0, 4, { 0 } };
    pthread_t th;
    bool seen_on = false;

    assert_interrupt_off();
    pthread_mutex_lock(&irq.lock);
    ck_assert_uint_eq(irq.enables, 0);   /* nothing turns it on before a wait */
    pthread_mutex_unlock(&irq.lock);
    ck_assert_int_eq(pthread_create(&th, NULL, wait_thread, &w), 0);
    for (UINT64 end = now_ns() + 4 * FRAME_NS; now_ns() < end && !seen_on;) {
        pthread_mutex_lock(&irq.lock);
        seen_on = irq.enabled;
        pthread_mutex_unlock(&irq.lock);
        usleep(200);
    }
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert(seen_on);
    assert_interrupt_off();
}
END_TEST

static void *destroy_soon(void *arg)
{
    (void)arg;
    usleep(20000);
    D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ device });
    D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ adapter });
    return NULL;
}

START_TEST(waits_race_destroy_and_close)
{
    enum { THREADS = 6 };
    struct waiter w[THREADS];
    pthread_t th[THREADS], killer;

    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (struct waiter){ adapter, i % 2 ? device : 0, 4, { 0 } };
        ck_assert_int_eq(pthread_create(&th[i], NULL, wait_thread, &w[i]), 0);
    }
    ck_assert_int_eq(pthread_create(&killer, NULL, destroy_soon, NULL), 0);
    for (unsigned i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        for (unsigned j = 0; j < 4; j++)
            ck_assert_msg(w[i].status[j] == STATUS_SUCCESS || w[i].status[j] == STATUS_INVALID_PARAMETER ||
                              w[i].status[j] == STATUS_DEVICE_REMOVED,
                          "thread %u wait %u: %#x", i, j, (unsigned)w[i].status[j]);
    }
    ck_assert_int_eq(pthread_join(killer, NULL), 0);
    ck_assert_status(wait_vblank(adapter, 0, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(wait_vblank(adapter, device, 0), STATUS_INVALID_PARAMETER);
    assert_interrupt_off();
}
END_TEST

/* ---- what ends a wait besides the vblank ------------------------------------------ */

static D3DKMT_WAITFORVERTICALBLANKEVENT2 wait2_desc(D3DKMT_HANDLE d, const int *fds, UINT n)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT2 w = { adapter, d, 0, n, { 0 } };

    for (UINT i = 0; i < n; i++)
        w.ObjectHandleArray[i] = (HANDLE)(intptr_t)fds[i];
    return w;
}

static void signal_fd(int fd)
{
    uint64_t one = 1;

    ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
}

/* Waits until the vsync interrupt is on: a wait has joined. */
static void until_interrupt_on(void)
{
    bool on = false;

    while (!on) {
        pthread_mutex_lock(&irq.lock);
        on = irq.enabled;
        pthread_mutex_unlock(&irq.lock);
        usleep(1000);
    }
}

struct wait2_call {
    D3DKMT_WAITFORVERTICALBLANKEVENT2 desc;
    bool plain;                          /* WaitForVerticalBlankEvent */
    NTSTATUS status;
};

static void *wait2_thread(void *arg)
{
    struct wait2_call *c = arg;

    if (c->plain)
        c->status = wait_vblank(c->desc.hAdapter, c->desc.hDevice, c->desc.VidPnSourceId);
    else
        c->status = D3DKMTWaitForVerticalBlankEvent2(&c->desc);
    return NULL;
}

/* Microsoft: STATUS_WAIT_1 .. STATUS_WAIT_8, the event that ended the
 * wait.  The event stays signalled: the wait only looks at it. */
START_TEST(wait2_ends_on_a_signalled_event)
{
    int fds[3];
    uint64_t value = 0;

    for (unsigned i = 0; i < 3; i++)
        ck_assert_int_ge(fds[i] = eventfd(0, EFD_CLOEXEC), 0);
    signal_fd(fds[0]);
    D3DKMT_WAITFORVERTICALBLANKEVENT2 w = wait2_desc(device, fds, 1);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_WAIT_0 + 1);
    ck_assert_int_eq(read(fds[0], &value, sizeof(value)), sizeof(value));
    ck_assert_uint_eq(value, 1);
    /* the lowest signalled index wins */
    signal_fd(fds[1]);
    signal_fd(fds[2]);
    w = wait2_desc(0, fds, 3);
    ck_assert_status(D3DKMTWaitForVerticalBlankEvent2(&w), STATUS_WAIT_0 + 2);
    for (unsigned i = 0; i < 3; i++)
        close(fds[i]);
    assert_interrupt_off();
}
END_TEST

/* An event signalled by another thread while the call waits ends it. */
START_TEST(wait2_ends_when_an_event_is_signalled_during_the_wait)
{
    struct wait2_call c = { .desc = { 0 } };
    int fds[D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS];
    pthread_t th;

    for (unsigned i = 0; i < D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS; i++)
        ck_assert_int_ge(fds[i] = eventfd(0, EFD_CLOEXEC), 0);
    c.desc = wait2_desc(device, fds, D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS);
    ck_assert_int_eq(pthread_create(&th, NULL, wait2_thread, &c), 0);
    until_interrupt_on();
    usleep(150000);                      /* past any time limit a wait once had */
    signal_fd(fds[D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS - 1]);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_status(c.status, STATUS_WAIT_0 + D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS);
    for (unsigned i = 0; i < D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS; i++)
        close(fds[i]);
    assert_interrupt_off();
}
END_TEST

/* No vsync comes: the waits last until DestroyDevice ends those that
 * named the device, with STATUS_DEVICE_REMOVED; one without a device
 * goes on. */
START_TEST(destroy_device_ends_its_waits)
{
    struct wait2_call c[3] = { { .plain = true }, { .plain = false }, { .plain = true } };
    int fd = eventfd(0, EFD_CLOEXEC);
    pthread_t th[3];

    ck_assert_int_ge(fd, 0);
    c[0].desc = wait2_desc(device, NULL, 0);
    c[1].desc = wait2_desc(device, &fd, 1);
    c[2].desc = wait2_desc(0, NULL, 0);
    for (unsigned i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, wait2_thread, &c[i]), 0);
    until_interrupt_on();
    usleep(150000);
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ device }), STATUS_SUCCESS);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_status(c[i].status, STATUS_DEVICE_REMOVED);
    }
    usleep(50000);
    ck_assert_uint_eq(pthread_tryjoin_np(th[2], NULL), EBUSY);   /* still waiting */
    signal_fd(fd);                       /* no part in that wait */
    KmtProcessShutdown();
    ck_assert_int_eq(pthread_join(th[2], NULL), 0);
    ck_assert_status(c[2].status, STATUS_DEVICE_REMOVED);
    close(fd);
    assert_interrupt_off();
}
END_TEST

/* CloseAdapter ends the waits that named that handle (plain, with events,
 * with a device of the adapter) with STATUS_DEVICE_REMOVED; a wait through
 * another handle of the same adapter goes on, and the device lives on. */
START_TEST(close_adapter_ends_its_waits)
{
    D3DKMT_HANDLE second = kmt_test_open_adapter();
    struct wait2_call c[4] = { { .plain = true }, { .plain = false }, { .plain = true }, { .plain = true } };
    int fd = eventfd(0, EFD_CLOEXEC);
    pthread_t th[4];

    ck_assert_int_ge(fd, 0);
    ck_assert_uint_ne(second, adapter);
    c[0].desc = wait2_desc(0, NULL, 0);
    c[1].desc = wait2_desc(0, &fd, 1);
    c[2].desc = wait2_desc(device, NULL, 0);
    c[3].desc = wait2_desc(device, NULL, 0);
    for (unsigned i = 0; i < 3; i++)
        c[i].desc.hAdapter = second;
    for (unsigned i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, wait2_thread, &c[i]), 0);
    until_interrupt_on();
    usleep(150000);
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ second }), STATUS_SUCCESS);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_status(c[i].status, STATUS_DEVICE_REMOVED);
    }
    usleep(50000);
    ck_assert_uint_eq(pthread_tryjoin_np(th[3], NULL), EBUSY);   /* the other handle's wait */
    ck_assert_status(wait_vblank(second, 0, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ device }), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_join(th[3], NULL), 0);
    ck_assert_status(c[3].status, STATUS_DEVICE_REMOVED);
    close(fd);
    assert_interrupt_off();
}
END_TEST

struct close_race {
    D3DKMT_HANDLE handle;
    NTSTATUS status[4];
};

static void *wait_closing_handle(void *arg)
{
    struct close_race *r = arg;

    for (unsigned i = 0; i < 4; i++)
        r->status[i] = wait_vblank(r->handle, i % 2 ? device : 0, 0);
    return NULL;
}

/* New waits race CloseAdapter of the handle they name: each one ends,
 * STATUS_DEVICE_REMOVED when it had looked the handle up, else
 * STATUS_INVALID_PARAMETER; none is left waiting (no vsync ever comes). */
START_TEST(close_adapter_races_new_waits)
{
    enum { THREADS = 6, ROUNDS = 20 };
    struct close_race r[THREADS];
    pthread_t th[THREADS];
    unsigned removed = 0;

    for (unsigned round = 0; round < ROUNDS; round++) {
        D3DKMT_HANDLE h = kmt_test_open_adapter();

        for (unsigned i = 0; i < THREADS; i++) {
            r[i] = (struct close_race){ h, { 0 } };
            ck_assert_int_eq(pthread_create(&th[i], NULL, wait_closing_handle, &r[i]), 0);
        }
        usleep(round * 100);
        ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ h }), STATUS_SUCCESS);
        for (unsigned i = 0; i < THREADS; i++) {
            ck_assert_int_eq(pthread_join(th[i], NULL), 0);
            for (unsigned j = 0; j < 4; j++) {
                ck_assert_msg(r[i].status[j] == STATUS_DEVICE_REMOVED || r[i].status[j] == STATUS_INVALID_PARAMETER,
                              "round %u thread %u wait %u: %#x", round, i, j, (unsigned)r[i].status[j]);
                removed += r[i].status[j] == STATUS_DEVICE_REMOVED;
            }
        }
    }
    ck_assert_uint_gt(removed, 0);
    assert_interrupt_off();
}
END_TEST

/* ---- the scan line ------------------------------------------------------------------ */

/* The line the soft output scans at t: a vertical blank (lines 1080..1124)
 * begins at each 60 Hz boundary, then lines 0..1079 follow. */
static UINT line_at(UINT64 t)
{
    return (UINT)((t * 3 % FRAME_NS3 * 1125 / FRAME_NS3 + 1080) % 1125);
}

/* Whether `line` lies on the way from line `a` to line `b`, wrapping. */
static bool line_between(UINT line, UINT a, UINT b)
{
    return a <= b ? a <= line && line <= b : line >= a || line <= b;
}

START_TEST(scan_line_runs_with_the_frame)
{
    D3DKMT_GETSCANLINE sl;
    UINT prev = UINT32_MAX, wraps = 0, checked = 0;
    UINT64 prev_t = 0;

    ck_assert_status(wait_vblank(adapter, 0, 0), STATUS_SUCCESS);
    for (UINT64 end = now_ns() + 3 * FRAME_NS; now_ns() < end;) {
        UINT64 before = now_ns(), after;

        ck_assert_status(scan_line(adapter, 0, &sl), STATUS_SUCCESS);
        after = now_ns();
        ck_assert_uint_lt(sl.ScanLine, 1125);
        ck_assert_int_eq(sl.InVerticalBlank, sl.ScanLine >= 1080);
        /* the line follows the clock, whatever the machine's load */
        if (after - before < FRAME_NS / 2)
            ck_assert_msg(line_between(sl.ScanLine, line_at(before), line_at(after)),
                          "line %u outside %u..%u", sl.ScanLine, line_at(before), line_at(after));
        /* within a frame it only grows: between samples less than a frame
         * apart it goes down only where the clock passed 1124 -> 0 */
        if (prev != UINT32_MAX && after - prev_t < FRAME_NS / 2) {
            checked++;
            if (sl.ScanLine < prev) {
                ck_assert_msg(line_at(after) < line_at(prev_t) || line_at(after) < prev,
                              "line went %u -> %u", prev, sl.ScanLine);
                wraps++;
            }
        }
        prev = sl.ScanLine;
        prev_t = before;
    }
    ck_assert_uint_ge(checked, 3);
    ck_assert_uint_le(wraps, 4);
}
END_TEST

START_TEST(poll_children_of_soft)
{
    ck_assert_status(poll_children(adapter, 0), STATUS_SUCCESS);
    ck_assert_status(poll_children(adapter, 1), STATUS_SUCCESS);         /* NonDestructiveOnly */
    ck_assert_status(poll_children(adapter, 0x1f), STATUS_SUCCESS);      /* every defined flag */
    /* still one output with a mode after the poll */
    ck_assert_status(wait_vblank(adapter, device, 0), STATUS_SUCCESS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vblank");
    TCase *def = tcase_create("defaults");
    TCase *bad = tcase_create("bad_input");
    TCase *render = tcase_create("render_only");
    TCase *timing = tcase_create("timing");
    TCase *threads = tcase_create("threads");
    TCase *silent = tcase_create("no_vsync_comes");

    tcase_add_checked_fixture(def, setup, teardown);
    tcase_add_test(def, soft_has_one_output_by_default);
    tcase_add_test(def, sources_come_from_the_environment);
    tcase_add_test(def, poll_children_of_soft);
    suite_add_tcase(s, def);

    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, wait_bad_input);
    tcase_add_test(bad, wait2_bad_input);
    tcase_add_test(bad, scan_line_and_poll_bad_input);
    tcase_add_test(bad, device_of_another_adapter);
    tcase_add_test(bad, miniport_without_vsync);
    suite_add_tcase(s, bad);

    tcase_add_checked_fixture(render, setup_render_only, teardown);
    tcase_add_test(render, render_only_adapter_has_no_vblank);
    suite_add_tcase(s, render);

    tcase_add_checked_fixture(timing, setup, teardown);
    tcase_add_test(timing, successive_waits_are_one_frame_apart);
    tcase_add_test(timing, scan_line_runs_with_the_frame);
    suite_add_tcase(s, timing);

    tcase_add_checked_fixture(threads, setup, teardown);
    tcase_add_test(threads, many_threads_wake_together);
    tcase_add_test(threads, interrupt_only_while_waiting);
    tcase_add_test(threads, waits_race_destroy_and_close);
    suite_add_tcase(s, threads);

    tcase_add_checked_fixture(silent, setup_silent, teardown);
    tcase_add_test(silent, wait2_ends_on_a_signalled_event);
    tcase_add_test(silent, wait2_ends_when_an_event_is_signalled_during_the_wait);
    tcase_add_test(silent, destroy_device_ends_its_waits);
    tcase_add_test(silent, close_adapter_ends_its_waits);
    tcase_add_test(silent, close_adapter_races_new_waits);
    suite_add_tcase(s, silent);
    return kmt_test_run(s);
}
