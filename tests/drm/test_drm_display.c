/*
 * The DRM miniport's display side against the real kernel (the QEMU lane:
 * virtio_gpu with its KMS outputs, vgem without KMS; or a machine's own
 * GPU).  The expectations come from the kernel: the test reads the card
 * node's resources itself and counts what the miniport must report.
 * Through the D3DKMT API: NumOfSources, SetVidPnSourceOwner on the
 * sources; through the miniport's DDIs (a second instance of it, as
 * test_drm_host loads it): the mode of each source, and what a vblank
 * does there.  Lines starting with "#" say what the kernel answered.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "drm_test.h"
#include "miniports/builtin.h"
#include "miniports/drm/drm_winsys.h"

static DRIVER_INITIALIZATION_DATA ddi;
static atomic_uint vsyncs;

static NTSTATUS APIENTRY capture(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *init)
{
    (void)driver;
    memcpy(&ddi, init, sizeof(ddi));
    return STATUS_SUCCESS;
}

static void APIENTRY on_interrupt(HANDLE h, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq)
{
    (void)h;
    if (irq->InterruptType == DXGK_INTERRUPT_CRTC_VSYNC && irq->CrtcVsync.VidPnTargetId == 0)
        atomic_fetch_add(&vsyncs, 1);
}

/* What the kernel has on a card node: CRTCs driving a connected connector
 * (or able to), the first such CRTC's mode. */
struct kernel_view {
    unsigned sources;
    drmModeModeInfo mode;                /* of the lowest CRTC index */
    int queue_errno;                     /* CRTC_QUEUE_SEQUENCE on it: 0 or errno, -1: no CRTC */
};

static struct kernel_view kernel_view(const char *card)
{
    struct kernel_view v = { .queue_errno = -1 };
    int fd = open(card, O_RDWR | O_CLOEXEC), best = 1 << 30;
    unsigned taken = 0;
    drmModeRes *res;

    if (fd < 0 || !(res = drmModeGetResources(fd))) {
        if (fd >= 0)
            close(fd);
        return v;
    }
    drmDropMaster(fd);
    for (int i = 0; i < res->count_connectors; i++) {
        drmModeConnector *c = drmModeGetConnectorCurrent(fd, res->connectors[i]);
        int idx = -1;

        if (!c)
            continue;
        for (int e = 0; c->connection == DRM_MODE_CONNECTED && e < c->count_encoders && idx < 0; e++) {
            drmModeEncoder *enc = drmModeGetEncoder(fd, c->encoders[e]);
            for (int k = 0; enc && k < res->count_crtcs && idx < 0; k++) {
                bool usable = (enc->possible_crtcs & (1u << k)) && !(taken & (1u << k));
                if (enc->crtc_id ? res->crtcs[k] == enc->crtc_id : usable)
                    idx = k;
            }
            drmModeFreeEncoder(enc);
        }
        if (idx >= 0 && c->count_modes > 0) {
            drmModeCrtc *crtc = drmModeGetCrtc(fd, res->crtcs[idx]);
            taken |= 1u << idx;
            v.sources++;
            if (idx < best) {
                best = idx;
                v.mode = crtc && crtc->mode_valid ? crtc->mode : c->modes[0];
                for (int m = 0; !(crtc && crtc->mode_valid) && m < c->count_modes; m++)
                    if (c->modes[m].type & DRM_MODE_TYPE_PREFERRED) {
                        v.mode = c->modes[m];
                        break;
                    }
                uint64_t queued;
                v.queue_errno = drmCrtcQueueSequence(fd, res->crtcs[idx], DRM_CRTC_SEQUENCE_RELATIVE, 1, &queued, 0)
                                    ? errno : 0;
            }
            drmModeFreeCrtc(crtc);
        }
        drmModeFreeConnector(c);
    }
    drmModeFreeResources(res);
    close(fd);
    return v;
}

/* NumOfSources and SetVidPnSourceOwner through the D3DKMT API. */
START_TEST(kms_outputs_are_vidpn_sources)
{
    struct drm_test_adapter a[DRM_TEST_MAX];
    unsigned n;

    kmt_test_use_miniport("drm");
    n = drm_test_adapters(a, DRM_TEST_MAX);
    drm_test_check_expected(a, n);
    for (unsigned i = 0; i < n; i++) {
        struct kernel_view v = kernel_view(a[i].umd.PrimaryNode);
        D3DKMT_VIDPNSOURCEOWNER_TYPE t = D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE;
        D3DDDI_VIDEO_PRESENT_SOURCE_ID id = 0;
        D3DKMT_HANDLE device;

        printf("# %s (%s): %u sources, kernel: %u; mode %ux%u clock %u htotal %u vtotal %u; "
               "CRTC_QUEUE_SEQUENCE: %s\n", a[i].umd.DriverName, a[i].umd.PrimaryNode, a[i].sources,
               v.sources, v.mode.hdisplay, v.mode.vdisplay, v.mode.clock, v.mode.htotal, v.mode.vtotal,
               v.queue_errno < 0 ? "no CRTC" : v.queue_errno ? strerror(v.queue_errno) : "queued");
        ck_assert_uint_eq(a[i].sources, v.sources);
        if (!strcmp(a[i].umd.DriverName, "vgem"))
            ck_assert_uint_eq(a[i].sources, 0);
        if (!strcmp(a[i].umd.DriverName, "virtio_gpu"))
            ck_assert_uint_ge(a[i].sources, 1);
        device = drm_test_create_device(a[i].handle);
        if (v.sources) {
            D3DKMT_SETVIDPNSOURCEOWNER s = { device, &t, &id, 1 };
            ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_SUCCESS);
        }
        id = v.sources;
        {
            D3DKMT_SETVIDPNSOURCEOWNER s = { device, &t, &id, 1 };
            ck_assert_status(D3DKMTSetVidPnSourceOwner(&s), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
        }
        drm_test_destroy_device(device);
    }
}
END_TEST

/* Each adapter started by the miniport alone: source 0's mode is the
 * kernel's, and with CRTC_VSYNC on the vblank interrupts come - from the
 * kernel's events, or from the timer where the kernel refuses them
 * (virtio_gpu) - no faster than the mode's rate. */
START_TEST(source_mode_and_vblank_follow_the_kernel)
{
    KMT_DXGKRNL_EXPORTS exports = { sizeof(exports), KMT_MINIPORT_INTERFACE_VERSION, capture };
    KMT_PHYSICAL_DEVICE devices[KMT_MAX_PHYSICAL_DEVICES];
    UINT count = KMT_MAX_PHYSICAL_DEVICES;

    ck_assert_status(KmtDrmMiniportDriverEntry(NULL, &exports), STATUS_SUCCESS);
    ck_assert_status(ddi.KmtDdiEnumPhysicalDevices(ddi.DriverContext, &count, devices), STATUS_SUCCESS);
    for (UINT i = 0; i < count; i++) {
        DXGKRNL_INTERFACE iface = { .Size = sizeof(iface), .DxgkCbNotifyInterrupt = on_interrupt };
        DXGK_START_INFO start = { 0 };
        KMT_CURRENT_DISPLAY_MODE m;
        UINT source = 0;
        DXGKARG_QUERYADAPTERINFO q = { .Type = DXGKQAITYPE_KMT_CURRENTDISPLAYMODE, .pInputData = &source,
                                       .InputDataSize = sizeof(source), .pOutputData = &m,
                                       .OutputDataSize = sizeof(m) };
        ULONG sources = 0, children = 0;
        PVOID ctx;
        KMT_ADAPTER_DESC desc;
        DXGKARG_QUERYADAPTERINFO dq = { .Type = DXGKQAITYPE_KMT_ADAPTERDESC, .pOutputData = &desc,
                                        .OutputDataSize = sizeof(desc) };
        struct kernel_view v;
        unsigned got;
        double rate;

        ck_assert_status(ddi.DxgkDdiAddDevice(&devices[i], &ctx), STATUS_SUCCESS);
        ck_assert_status(ddi.DxgkDdiStartDevice(ctx, &start, &iface, &sources, &children), STATUS_SUCCESS);
        ck_assert_status(ddi.DxgkDdiQueryAdapterInfo(ctx, &dq), STATUS_SUCCESS);
        ck_assert_uint_eq(desc.NumOfSources, sources);
        if (!sources) {
            ck_assert_status(ddi.DxgkDdiQueryAdapterInfo(ctx, &q), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
        } else {
            const struct kdrm_physical *phys = devices[i].Context;

            ck_assert_status(ddi.DxgkDdiQueryAdapterInfo(ctx, &q), STATUS_SUCCESS);
            printf("# %s: source 0 %ux%u @ %u/%u Hz, vtotal %u\n", devices[i].LocationId, m.Width, m.Height,
                   m.RefreshRateNumerator, m.RefreshRateDenominator, m.ScanLineTotal);
            ck_assert_uint_gt(m.Width, 0);
            ck_assert_uint_gt(m.RefreshRateNumerator, 0);
            v = kernel_view(phys->card_node);
            if (v.sources) {
                ck_assert_uint_eq(m.Width, v.mode.hdisplay);
                ck_assert_uint_eq(m.Height, v.mode.vdisplay);
                ck_assert_uint_eq(m.ScanLineTotal, v.mode.vtotal);
            }
            atomic_store(&vsyncs, 0);
            ck_assert_status(ddi.DxgkDdiControlInterrupt(ctx, DXGK_INTERRUPT_CRTC_VSYNC, TRUE), STATUS_SUCCESS);
            usleep(1000000);
            ck_assert_status(ddi.DxgkDdiControlInterrupt(ctx, DXGK_INTERRUPT_CRTC_VSYNC, FALSE), STATUS_SUCCESS);
            got = atomic_load(&vsyncs);
            rate = (double)m.RefreshRateNumerator / m.RefreshRateDenominator;
            printf("# %s: %u vblank interrupts in 1 s (mode %.2f Hz)\n", devices[i].LocationId, got, rate);
            ck_assert_uint_gt(got, 0);
            ck_assert_uint_le(got, (unsigned)(rate * 1.05) + 2);
        }
        ck_assert_status(ddi.DxgkDdiStopDevice(ctx), STATUS_SUCCESS);
        ck_assert_status(ddi.DxgkDdiRemoveDevice(ctx), STATUS_SUCCESS);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_display");
    TCase *tc = tcase_create("display");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, kms_outputs_are_vidpn_sources);
    tcase_add_test(tc, source_mode_and_vblank_follow_the_kernel);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
