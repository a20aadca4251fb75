/*
 * Two displays on one DRM adapter, and one of them unplugged and plugged
 * back, through the D3DKMT API over the fake KMS card node (fake_kms.c,
 * config.second_output): \\.\DISPLAY1 and \\.\DISPLAY2 name the two
 * sources, each source has its own VidPn owner and its own vblanks, and a
 * poll that finds a monitor unplugged ends the waits on its source with
 * STATUS_DEVICE_REMOVED ("the display device was reset", Microsoft's
 * D3DKMTWaitForVerticalBlankEvent page) while the other source goes on.
 * After the monitor comes back, its source's waits work again.
 *
 * The same without any poll: once a vblank wait has begun, the miniport
 * reads the kernel's DRM uevents (here the fake's socketpair,
 * fake_kms_hotplug) and reports the change itself.  A source whose CRTC
 * drives two connectors (config.clone_output) stays connected while either
 * is, and so does one whose CRTC a connector joins after the start
 * (config.clone_spare, fake_kms_route), beside its first or in its place.
 */
#define _GNU_SOURCE
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "drm_test.h"
#include "fake_drm.h"
#include "fake_kms.h"

static D3DKMT_HANDLE adapter;

static void start_with(const struct fake_kms_config *kc, ULONG sources)
{
    D3DKMT_ADAPTERINFO info[2];
    D3DKMT_ENUMADAPTERS2 e = { 2, info };

    ck_assert_int_eq(fake_kms_device_open(kc), 0);
    kmt_test_use_miniport("drm");
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].NumOfSources, sources);
    adapter = info[0].hAdapter;
}

static void start(void)
{
    start_with(&(struct fake_kms_config){ .second_output = true }, 2);
}

static void stop(void)
{
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ adapter }), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
    fake_kms_device_close();
}

static NTSTATUS open_display(const char *name, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME *o)
{
    memset(o, 0, sizeof(*o));
    for (unsigned i = 0; name[i] && i < 31; i++)
        o->DeviceName[i] = (WCHAR)name[i];
    return D3DKMTOpenAdapterFromGdiDisplayName(o);
}

static D3DKMT_HANDLE create_device(void)
{
    D3DKMT_CREATEDEVICE c = { .hAdapter = adapter };

    ck_assert_status(D3DKMTCreateDevice(&c), STATUS_SUCCESS);
    return c.hDevice;
}

static void destroy_device(D3DKMT_HANDLE device)
{
    ck_assert_status(D3DKMTDestroyDevice(&(D3DKMT_DESTROYDEVICE){ device }), STATUS_SUCCESS);
}

static NTSTATUS set_owner(D3DKMT_HANDLE device, D3DKMT_VIDPNSOURCEOWNER_TYPE type, UINT source)
{
    D3DDDI_VIDEO_PRESENT_SOURCE_ID id = source;
    D3DKMT_SETVIDPNSOURCEOWNER s = { device, &type, &id, 1 };

    return D3DKMTSetVidPnSourceOwner(&s);
}

static NTSTATUS wait_vblank(UINT source)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { adapter, 0, source };

    return D3DKMTWaitForVerticalBlankEvent(&w);
}

static void poll_children(void)
{
    D3DKMT_POLLDISPLAYCHILDREN p;

    memset(&p, 0, sizeof(p));
    p.hAdapter = adapter;
    ck_assert_status(D3DKMTPollDisplayChildren(&p), STATUS_SUCCESS);
}

/* Unplugs or plugs connector 32 back, as the next probe sees it. */
static void plug_vga(bool plugged)
{
    fake_kms.vga_plugged = plugged;
    poll_children();
}

START_TEST(two_outputs_are_two_displays_with_their_own_owners)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;
    D3DKMT_HANDLE a, b;

    start();
    ck_assert_status(open_display("\\\\.\\DISPLAY1", &o), STATUS_SUCCESS);
    ck_assert_uint_eq(o.VidPnSourceId, 0);
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ o.hAdapter }), STATUS_SUCCESS);
    ck_assert_status(open_display("\\\\.\\DISPLAY2", &o), STATUS_SUCCESS);
    ck_assert_uint_eq(o.VidPnSourceId, 1);
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ o.hAdapter }), STATUS_SUCCESS);
    ck_assert_status(open_display("\\\\.\\DISPLAY3", &o), STATUS_INVALID_PARAMETER);

    a = create_device();
    b = create_device();
    ck_assert_status(set_owner(a, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE, 1), STATUS_SUCCESS);
    ck_assert_status(set_owner(b, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE, 1), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    ck_assert_status(set_owner(b, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE, 0), STATUS_SUCCESS);
    ck_assert_status(set_owner(a, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE, 2),
                     STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
        ck_assert_status(wait_vblank(1), STATUS_SUCCESS);
    }
    ck_assert_status(wait_vblank(2), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    destroy_device(b);
    destroy_device(a);
    stop();
}
END_TEST

/* Waits on source (intptr_t)arg, one after another, until one does not
 * succeed. */
static void *wait_until_refused(void *arg)
{
    UINT source = (UINT)(intptr_t)arg;
    NTSTATUS status;

    while ((status = wait_vblank(source)) == STATUS_SUCCESS)
        ;
    return (void *)(intptr_t)status;
}

START_TEST(unplugged_display_ends_its_waits_until_plugged_back)
{
    D3DKMT_HANDLE owner, other;
    pthread_t waiter;
    void *ended;

    start();
    owner = create_device();
    other = create_device();
    ck_assert_status(set_owner(owner, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE, 1), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_create(&waiter, NULL, wait_until_refused, (void *)(intptr_t)1), 0);
    ck_assert_status(wait_vblank(1), STATUS_SUCCESS);
    plug_vga(false);
    ck_assert_int_eq(pthread_join(waiter, &ended), 0);
    ck_assert_status((NTSTATUS)(intptr_t)ended, STATUS_DEVICE_REMOVED);
    /* at once while it stays unplugged; the other display goes on */
    ck_assert_status(wait_vblank(1), STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    /* the source is still there, and still owned */
    ck_assert_status(set_owner(other, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE, 1), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);

    plug_vga(true);
    ck_assert_status(wait_vblank(1), STATUS_SUCCESS);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    destroy_device(other);
    destroy_device(owner);
    stop();
}
END_TEST

START_TEST(polled_clones_keep_their_source_while_either_is_plugged)
{
    pthread_t waiter;
    void *ended;

    /* CRTC 41 drives HDMI and DVI: one source */
    start_with(&(struct fake_kms_config){ .clone_output = true }, 1);
    fake_kms_set_cable(FAKE_KMS_CLONE_CONNECTOR, false);
    poll_children();
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    fake_kms_set_cable(FAKE_KMS_CLONE_CONNECTOR, true);
    fake_kms_set_cable(FAKE_KMS_CONNECTOR, false);
    poll_children();
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);

    ck_assert_int_eq(pthread_create(&waiter, NULL, wait_until_refused, (void *)(intptr_t)0), 0);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    fake_kms_set_cable(FAKE_KMS_CLONE_CONNECTOR, false);
    poll_children();
    ck_assert_int_eq(pthread_join(waiter, &ended), 0);
    ck_assert_status((NTSTATUS)(intptr_t)ended, STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_vblank(0), STATUS_DEVICE_REMOVED);

    fake_kms_set_cable(FAKE_KMS_CONNECTOR, true);
    poll_children();
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    stop();
}
END_TEST

/* ---- uevents ------------------------------------------------------------------------------ */

/* Waits (at most 10 s, in 1 ms steps) for what another thread does. */
#define WAIT_FOR(cond)                                                     \
    do {                                                                   \
        for (int i_ = 0; i_ < 10000 && !(cond); i_++)                      \
            usleep(1000);                                                  \
        ck_assert(cond);                                                   \
    } while (0)

/* The miniport read connector `id`'s state (without a probe) since
 * `before` reads. */
static bool read_since(uint32_t id, unsigned before)
{
    return atomic_load(&fake_kms.reads_of[id - FAKE_KMS_CONNECTOR]) > before;
}

static unsigned reads(uint32_t id)
{
    return atomic_load(&fake_kms.reads_of[id - FAKE_KMS_CONNECTOR]);
}

/* A waiter on `source` ended by a uevent unplugging `connector`, and a
 * new wait refused at once. */
static void uevent_unplug_ends_waits(UINT source, uint32_t connector)
{
    pthread_t waiter;
    void *ended;

    ck_assert_int_eq(pthread_create(&waiter, NULL, wait_until_refused, (void *)(intptr_t)source), 0);
    ck_assert_status(wait_vblank(source), STATUS_SUCCESS);
    ck_assert_int_eq(fake_kms_hotplug(connector, false), 0);
    ck_assert_int_eq(pthread_join(waiter, &ended), 0);
    ck_assert_status((NTSTATUS)(intptr_t)ended, STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_vblank(source), STATUS_DEVICE_REMOVED);
}

/* The first vblank wait starts the uevent reader, which first reads every
 * source once; `last` is the connector it reads last. */
static void listen(uint32_t last)
{
    unsigned before = reads(last);

    ck_assert_uint_eq(drm_test_threads_named("kmt-drm-hotplug"), 0);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    WAIT_FOR(read_since(last, before));
    ck_assert_uint_eq(drm_test_threads_named("kmt-drm-hotplug"), 1);
}

START_TEST(uevent_unplug_ends_a_pending_wait_without_a_poll)
{
    unsigned probes;

    start();
    listen(FAKE_KMS_VGA_CONNECTOR);
    probes = fake_kms.probes;
    uevent_unplug_ends_waits(1, FAKE_KMS_VGA_CONNECTOR);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    /* the kernel probed; the miniport only read what it found */
    ck_assert_uint_eq(fake_kms.probes, probes);

    ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_VGA_CONNECTOR, true), 0);
    WAIT_FOR(wait_vblank(1) == STATUS_SUCCESS);
    ck_assert_status(wait_vblank(1), STATUS_SUCCESS);
    ck_assert_uint_eq(fake_kms.probes, probes);
    stop();
}
END_TEST

/* Sends `n` NUL-ended fields as one message; `len` 0: up to the last NUL. */
static void send_fields(const char *const *fields, unsigned n, size_t cut)
{
    char msg[1024];
    size_t len = 0;

    for (unsigned i = 0; i < n; i++) {
        size_t l = strlen(fields[i]) + 1;

        ck_assert_uint_lt(len + l, sizeof(msg));
        memcpy(msg + len, fields[i], l);
        len += l;
    }
    ck_assert_int_eq(fake_kms_uevent(msg, len - cut), 0);
}

#define SEND(cut, ...)                                                                    \
    do {                                                                                  \
        static const char *const f_[] = { __VA_ARGS__ };                                  \
        send_fields(f_, sizeof(f_) / sizeof(f_[0]), cut);                                 \
    } while (0)

#define HEAD "change@/devices/pci0000:00/0000:00:02.0/drm/card0", "ACTION=change"

/* The messages the miniport acted on: each re-reads the resources once. */
static unsigned handled(void)
{
    return atomic_load(&fake_kms.resource_lists);
}

/* A message for a connector no source has: once it is handled, every
 * message before it was. */
static void settle(unsigned before)
{
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=99");
    WAIT_FOR(handled() > before);
}

START_TEST(uevents_of_other_devices_and_malformed_ones_are_ignored)
{
    unsigned base;

    start();
    listen(FAKE_KMS_VGA_CONNECTOR);
    /* the kernel found VGA unplugged; only a message for card0 tells */
    fake_kms_set_cable(FAKE_KMS_VGA_CONNECTOR, false);
    base = handled();
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card1");                  /* another card */
    SEND(0, HEAD, "SUBSYSTEM=usb", "HOTPLUG=1", "DEVNAME=dri/card0");                  /* another subsystem */
    SEND(0, HEAD, "SUBSYSTEM=drm", "DEVNAME=dri/card0");                               /* no HOTPLUG */
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=0", "DEVNAME=dri/card0");
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1");                                        /* no DEVNAME */
    SEND(0, "ACTION=change", "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0");       /* no action@path */
    SEND(0, "libudev", "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0");             /* udev's, not the kernel's */
    SEND(1, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0");                  /* not NUL-ended */
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=abc");
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=");
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=0");
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=99999999999");
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=-4294967265");   /* 31 once wrapped */
    /* then one for HDMI alone: it reports source 0 only */
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0", "CONNECTOR=31", "PROPERTY=5");
    settle(base + 1);
    ck_assert_uint_eq(handled(), base + 2);
    ck_assert_status(wait_vblank(1), STATUS_SUCCESS);

    /* one without CONNECTOR= reads every source's */
    SEND(0, HEAD, "SUBSYSTEM=drm", "HOTPLUG=1", "DEVNAME=dri/card0");
    WAIT_FOR(wait_vblank(1) == STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    ck_assert_uint_eq(handled(), base + 3);
    stop();
}
END_TEST

/* Root's synthetic uevent with a HOTPLUG=1 argument (the kernel sends it
 * as SYNTH_ARG_HOTPLUG=1) is heard as the kernel's own; udev's synthetic
 * "change" (udevadm trigger: no arguments) is not. */
START_TEST(synthetic_hotplug_uevent_is_heard)
{
    unsigned base;

    start();
    listen(FAKE_KMS_VGA_CONNECTOR);
    fake_kms_set_cable(FAKE_KMS_VGA_CONNECTOR, false);
    base = handled();
    SEND(0, HEAD, "SUBSYSTEM=drm", "SYNTH_UUID=0", "DEVNAME=dri/card0");
    SEND(0, HEAD, "SUBSYSTEM=drm", "SYNTH_UUID=0", "SYNTH_ARG_HOTPLUG=1", "SYNTH_ARG_CONNECTOR=32",
         "DEVNAME=dri/card0");
    WAIT_FOR(wait_vblank(1) == STATUS_DEVICE_REMOVED);
    ck_assert_uint_eq(handled(), base + 1);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    stop();
}
END_TEST

/* An unplug and a replug reported back to back: a wait that begins after
 * both is not ended by the unplug (the core records a connection and
 * ends the source's waits in one hold of its vblank lock). */
START_TEST(unplug_then_replug_leaves_later_waits_alone)
{
    unsigned before;

    start();
    listen(FAKE_KMS_VGA_CONNECTOR);
    for (int round = 0; round < 20; round++) {
        before = handled();
        ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_VGA_CONNECTOR, false), 0);
        ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_VGA_CONNECTOR, true), 0);
        settle(before + 2);
        ck_assert_status(wait_vblank(1), STATUS_SUCCESS);
    }
    stop();
}
END_TEST

/* A monitor unplugged while nobody listened: the reader's first report
 * ends the first wait on its source, with no uevent and no poll. */
START_TEST(unplug_before_the_first_wait_ends_that_wait)
{
    start();
    fake_kms_set_cable(FAKE_KMS_VGA_CONNECTOR, false);
    WAIT_FOR(wait_vblank(1) == STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    stop();
}
END_TEST

/* No reader before a wait asks for vblanks (a process that never waits
 * does not hear every device of the machine); one after, until the
 * adapter goes. */
START_TEST(no_thread_or_descriptor_outlives_the_adapter)
{
    start();
    ck_assert_uint_eq(drm_test_threads_named("kmt-drm-hotplug"), 0);
    ck_assert_uint_eq(fake_kms_uevent_readers(), 1);     /* the fake's end */
    listen(FAKE_KMS_VGA_CONNECTOR);
    ck_assert_status(wait_vblank(1), STATUS_SUCCESS);
    ck_assert_uint_eq(drm_test_threads_named("kmt-drm-hotplug"), 1);
    ck_assert_uint_eq(fake_kms_uevent_readers(), 2);     /* and the miniport's copy */
    ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ adapter }), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
    ck_assert_uint_eq(fake_kms_uevent_readers(), 1);
    /* a joined thread stays listed until the kernel reaps it */
    WAIT_FOR(drm_test_threads_named("kmt-drm-hotplug") == 0);
    fake_kms_device_close();
}
END_TEST

START_TEST(uevents_for_clones_keep_their_source_while_either_is_plugged)
{
    unsigned before;

    /* CRTC 41 drives HDMI and DVI: one source */
    start_with(&(struct fake_kms_config){ .clone_output = true }, 1);
    listen(FAKE_KMS_CONNECTOR);
    before = handled();
    ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_CLONE_CONNECTOR, false), 0);
    settle(before + 1);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);

    before = handled();
    ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_CLONE_CONNECTOR, true), 0);
    ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_CONNECTOR, false), 0);
    settle(before + 2);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);

    uevent_unplug_ends_waits(0, FAKE_KMS_CLONE_CONNECTOR);

    ck_assert_int_eq(fake_kms_hotplug(FAKE_KMS_CLONE_CONNECTOR, true), 0);
    WAIT_FOR(wait_vblank(0) == STATUS_SUCCESS);
    stop();
}
END_TEST

/* ---- connectors that join CRTC 41 after the start ----------------------------------------- */

static void tell_by_poll(uint32_t id, bool plugged)
{
    fake_kms_set_cable(id, plugged);
    poll_children();
}

/* The kernel's uevent, handled before it returns. */
static void tell_by_uevent(uint32_t id, bool plugged)
{
    unsigned before = handled();

    ck_assert_int_eq(fake_kms_hotplug(id, plugged), 0);
    settle(before + 1);
}

/* DVI (33), unplugged at the start, is plugged and routed to CRTC 41 by
 * the compositor (a modeset: no uevent), beside HDMI or in its place.
 * HDMI's unplug leaves the source connected through DVI; DVI's then ends
 * its waits; DVI back, they work again.  `tell` makes each cable change
 * known: a poll or the kernel's uevent. */
static void connector_joining_later(bool replace, void (*tell)(uint32_t id, bool plugged))
{
    pthread_t waiter;
    void *ended;

    start_with(&(struct fake_kms_config){ .clone_spare = true }, 1);
    listen(FAKE_KMS_CONNECTOR);
    if (replace)
        fake_kms_route(FAKE_KMS_CONNECTOR, 0);
    fake_kms_route(FAKE_KMS_CLONE_CONNECTOR, FAKE_KMS_CRTC);
    tell(FAKE_KMS_CLONE_CONNECTOR, true);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);

    ck_assert_int_eq(pthread_create(&waiter, NULL, wait_until_refused, (void *)(intptr_t)0), 0);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    tell(FAKE_KMS_CONNECTOR, false);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    tell(FAKE_KMS_CLONE_CONNECTOR, false);
    ck_assert_int_eq(pthread_join(waiter, &ended), 0);
    ck_assert_status((NTSTATUS)(intptr_t)ended, STATUS_DEVICE_REMOVED);
    ck_assert_status(wait_vblank(0), STATUS_DEVICE_REMOVED);

    tell(FAKE_KMS_CLONE_CONNECTOR, true);
    ck_assert_status(wait_vblank(0), STATUS_SUCCESS);
    stop();
}

START_TEST(clone_plugged_later_keeps_its_source_when_polled)
{
    connector_joining_later(false, tell_by_poll);
}
END_TEST

START_TEST(clone_plugged_later_keeps_its_source_by_uevent)
{
    connector_joining_later(false, tell_by_uevent);
}
END_TEST

START_TEST(replacing_connector_keeps_its_source_when_polled)
{
    connector_joining_later(true, tell_by_poll);
}
END_TEST

START_TEST(replacing_connector_keeps_its_source_by_uevent)
{
    connector_joining_later(true, tell_by_uevent);
}
END_TEST

/* A connector that starts driving the idle CRTC 42, which had no source,
 * makes none: WDDM children are fixed at the start. */
START_TEST(connector_on_a_crtc_without_source_stays_out)
{
    start_with(&(struct fake_kms_config){ .clone_spare = true }, 1);
    listen(FAKE_KMS_CONNECTOR);
    fake_kms_route(FAKE_KMS_CLONE_CONNECTOR, FAKE_KMS_IDLE_CRTC);
    tell_by_uevent(FAKE_KMS_CLONE_CONNECTOR, true);
    ck_assert_status(wait_vblank(1), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    /* nor does it keep source 0 connected */
    tell_by_uevent(FAKE_KMS_CONNECTOR, false);
    ck_assert_status(wait_vblank(0), STATUS_DEVICE_REMOVED);
    stop();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_hotplug");
    TCase *tc = tcase_create("displays");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, two_outputs_are_two_displays_with_their_own_owners);
    tcase_add_test(tc, unplugged_display_ends_its_waits_until_plugged_back);
    tcase_add_test(tc, polled_clones_keep_their_source_while_either_is_plugged);
    tcase_add_test(tc, uevent_unplug_ends_a_pending_wait_without_a_poll);
    tcase_add_test(tc, uevents_of_other_devices_and_malformed_ones_are_ignored);
    tcase_add_test(tc, synthetic_hotplug_uevent_is_heard);
    tcase_add_test(tc, unplug_then_replug_leaves_later_waits_alone);
    tcase_add_test(tc, unplug_before_the_first_wait_ends_that_wait);
    tcase_add_test(tc, no_thread_or_descriptor_outlives_the_adapter);
    tcase_add_test(tc, uevents_for_clones_keep_their_source_while_either_is_plugged);
    tcase_add_test(tc, clone_plugged_later_keeps_its_source_when_polled);
    tcase_add_test(tc, clone_plugged_later_keeps_its_source_by_uevent);
    tcase_add_test(tc, replacing_connector_keeps_its_source_when_polled);
    tcase_add_test(tc, replacing_connector_keeps_its_source_by_uevent);
    tcase_add_test(tc, connector_on_a_crtc_without_source_stays_out);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
