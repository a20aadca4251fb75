/*
 * A real kernel's hotplug uevent, heard by the DRM miniport with no poll
 * (the QEMU lane: virtio_gpu's one output).  The output is forced off
 * through its sysfs status file (drm_sysfs re-probes the connector: the
 * kernel's own state says disconnected), the kernel is asked to announce
 * it, and a vblank wait on the source ends with STATUS_DEVICE_REMOVED with
 * no PollDisplayChildren call; forced back to detection, waits work again.
 *
 * virtio_gpu never sends HOTPLUG=1 itself on Debian's 6.12 kernel: it
 * starts no output poll, so the re-probe's status change goes unannounced
 * (checked with a netlink listener in the guest).  The announcement is the
 * kernel's synthetic uevent instead: "change <uuid> HOTPLUG=1" written to
 * the card's uevent file, which the kernel sends on the netlink socket as
 * SYNTH_ARG_HOTPLUG=1.
 *
 * Only a virtio_gpu output is forced off (never a real monitor, when run
 * on a machine's own GPU); without one, or where the status file cannot be
 * written (not root), the program is one TAP SKIP line with the reason.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm_test.h"

static char card[64], status_path[PATH_MAX], uevent_path[PATH_MAX];
static D3DKMT_HANDLE adapter;

/* Whether /dev/dri/cardN's driver is virtio_gpu, as the kernel names it. */
static bool virtio_gpu(unsigned n)
{
    char path[32];
    drmVersionPtr v;
    bool is = false;
    int fd;

    snprintf(path, sizeof(path), "/dev/dri/card%u", n);
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        return false;
    if ((v = drmGetVersion(fd))) {
        is = v->name && !strcmp(v->name, "virtio_gpu");
        drmFreeVersion(v);
    }
    close(fd);
    return is;
}

/* The first virtio_gpu connector's files; NULL, or why the test skips. */
static const char *find_output(void)
{
    static char why[PATH_MAX + 64];
    DIR *d = opendir("/sys/class/drm");
    struct dirent *e;
    unsigned n;
    int fd, len;

    if (!d)
        return "no /sys/class/drm";
    while ((e = readdir(d)) && !*status_path) {
        len = 0;                         /* "cardN-<connector>": %n is reached only past the dash */
        if (sscanf(e->d_name, "card%u-%n", &n, &len) == 1 && len > 0 && virtio_gpu(n)) {
            snprintf(status_path, sizeof(status_path), "/sys/class/drm/%s/status", e->d_name);
            snprintf(uevent_path, sizeof(uevent_path), "/sys/class/drm/card%u/uevent", n);
            snprintf(card, sizeof(card), "/dev/dri/card%u", n);
        }
    }
    closedir(d);
    if (!*status_path)
        return "no virtio_gpu output (only a virtual GPU's output is forced off)";
    if ((fd = open(status_path, O_WRONLY | O_CLOEXEC)) < 0) {
        snprintf(why, sizeof(why), "cannot write %s: %s", status_path, strerror(errno));
        return why;
    }
    close(fd);
    return NULL;
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);

    ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static bool status_is(const char *want)
{
    char buf[32] = "";
    FILE *f = fopen(status_path, "re");

    if (f) {
        if (!fgets(buf, sizeof(buf), f))
            buf[0] = 0;
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
    return !strcmp(buf, want);
}

/* The connector forced ("off") or back to detection ("detect"), then the
 * kernel's uevent announcing it. */
static void force(const char *how)
{
    write_file(status_path, how);
    write_file(uevent_path, "change 00000000-0000-0000-0000-000000000000 HOTPLUG=1");
}

static NTSTATUS wait_vblank(void)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { adapter, 0, 0 };

    return D3DKMTWaitForVerticalBlankEvent(&w);
}

static void *wait_until_refused(void *arg)
{
    NTSTATUS status;

    (void)arg;
    while ((status = wait_vblank()) == STATUS_SUCCESS)
        ;
    return (void *)(intptr_t)status;
}

/* Waits again until one answers `want`, for at most 10 s. */
static bool waits_reach(NTSTATUS want)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (wait_vblank() == want)
            return true;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < 10);
    return false;
}

START_TEST(forced_off_output_ends_waits_without_a_poll)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    pthread_t waiter;
    void *ended;
    unsigned n, i;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    for (i = 0; i < n && strcmp(a[i].umd.PrimaryNode, card); i++)
        ;
    ck_assert_msg(i < n, "no adapter on %s", card);
    ck_assert_uint_ge(a[i].sources, 1);
    adapter = a[i].handle;
    /* the first wait: the miniport listens from now on */
    ck_assert_status(wait_vblank(), STATUS_SUCCESS);
    ck_assert_int_eq(pthread_create(&waiter, NULL, wait_until_refused, NULL), 0);
    ck_assert_status(wait_vblank(), STATUS_SUCCESS);

    force("off");
    ck_assert(status_is("disconnected"));
    ck_assert_msg(waits_reach(STATUS_DEVICE_REMOVED), "no wait ended within 10 s of the uevent");
    ck_assert_int_eq(pthread_join(waiter, &ended), 0);
    ck_assert_status((NTSTATUS)(intptr_t)ended, STATUS_DEVICE_REMOVED);

    force("detect");
    ck_assert(status_is("connected"));
    ck_assert_msg(waits_reach(STATUS_SUCCESS), "waits still refused 10 s after the output came back");
    ck_assert_status(wait_vblank(), STATUS_SUCCESS);
    for (i = 0; i < n; i++)
        ck_assert_status(D3DKMTCloseAdapter(&(D3DKMT_CLOSEADAPTER){ a[i].handle }), STATUS_SUCCESS);
}
END_TEST

int main(void)
{
    const char *why = find_output();
    Suite *s;
    TCase *tc;
    int rc, fd;

    if (why) {
        printf("1..1\nok 1 - forced_off_output_ends_waits_without_a_poll # SKIP %s\n", why);
        return 0;
    }
    s = suite_create("drm_hotplug_lane");
    tc = tcase_create("uevent");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, forced_off_output_ends_waits_without_a_poll);
    suite_add_tcase(s, tc);
    rc = kmt_test_run(s);
    /* the output detected again whatever the test did */
    if ((fd = open(status_path, O_WRONLY | O_CLOEXEC)) >= 0) {
        (void)!write(fd, "detect", 6);
        close(fd);
    }
    return rc;
}
