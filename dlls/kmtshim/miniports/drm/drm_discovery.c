/*
 * DRM miniport: finding the devices (drmGetDevices2), naming them by bus
 * id, picking the allocator family, opening their nodes.
 *
 * Only devices with a render node become adapters: a display-only KMS
 * device (simpledrm, a bare scanout engine) renders nothing.  The card node
 * is opened only for families whose buffers live there (dumb buffers).
 * Enumeration opens each render node briefly to ask the driver's name; the
 * adapter's own fd is opened once, at DxgkDdiStartDevice.
 *
 * PCI domains: libdrm keeps a device's domain in 16 bits, and domains above
 * 0xffff exist (Intel VMD puts its devices in 10000 and up), so two devices
 * could get one bus id, and one LUID.  The full address comes from sysfs:
 * the render node's /sys/dev/char/MAJ:MIN/device is the PCI function's
 * directory, named by its address (for virtio_gpu it is the virtio device,
 * whose parent is the PCI function).  It is taken only where it agrees
 * with libdrm's bus, device, function and low 16 bits of the domain, and
 * printed the same way, so a domain up to 0xffff keeps the bus id (and the
 * LUID) it always had; without sysfs, libdrm's value stands.
 * KMTSHIM_DRM_SYSFS (read when the miniport loads) moves the sysfs root
 * elsewhere, for tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>

#include "base/fd_registry.h"
#include "drm_winsys.h"
#include "drm_fault.h"

/* INTERFACE_TYPE values Windows reports as D3DKMT_DEVICE_IDS.BusType. */
#define KMT_BUS_INTERNAL 0
#define KMT_BUS_PCI 5

#define MAX_DRM_DEVICES 64

/* The devices of the last enumeration; DxgkDdiAddDevice copies its entry.
 * Enumeration runs at process start, under the core's process lock. */
static struct kdrm_physical found[KMT_MAX_PHYSICAL_DEVICES];

static const struct {
    const char *driver;
    const struct kdrm_family *family;
} family_table[] = {
    { "virtio_gpu", &kdrm_family_virtio_gpu },
    { "vgem", &kdrm_family_dumb },
    { "vkms", &kdrm_family_dumb },
#ifdef KMT_HAVE_DRM_AMDGPU
    { "amdgpu", &kdrm_family_amdgpu },
#endif
    { "i915", &kdrm_family_i915 },
    { "xe", &kdrm_family_xe },
};

const struct kdrm_family *kdrm_family_for_driver(const char *driver)
{
    for (size_t i = 0; i < sizeof(family_table) / sizeof(family_table[0]); i++)
        if (!strcmp(family_table[i].driver, driver))
            return family_table[i].family;
    return &kdrm_family_generic;
}

static char sysfs_root[PATH_MAX] = "/sys";

void kdrm_set_sysfs_root(const char *root)
{
    snprintf(sysfs_root, sizeof(sysfs_root), "%s", root && *root ? root : "/sys");
}

const char *kdrm_sysfs_root(void)
{
    return sysfs_root;
}

/* A PCI address as sysfs names a function's directory: "10000:e1:00.0". */
static bool parse_pci_address(const char *name, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *func)
{
    int used = 0;

    if (sscanf(name, "%8x:%2x:%2x.%1u%n", domain, bus, dev, func, &used) != 4 || name[used])
        return false;
    return *dev < 32 && *func < 8;
}

/* The full PCI domain of the device behind `node`, if sysfs knows it and it
 * agrees with libdrm's (truncated) address. */
static bool sysfs_pci_domain(const char *node, const drmPciBusInfo *pci, unsigned *domain)
{
    char link[PATH_MAX + 64], path[PATH_MAX], *slash;
    unsigned bus, dev, func;
    struct stat st;

    if (stat(node, &st) || !S_ISCHR(st.st_mode))
        return false;
    snprintf(link, sizeof(link), "%s/dev/char/%u:%u/device", sysfs_root, major(st.st_rdev), minor(st.st_rdev));
    if (!realpath(link, path))
        return false;
    /* the device's own directory, or its parent (virtio_gpu: virtioN) */
    for (int up = 0; up < 2 && (slash = strrchr(path, '/')); up++, *slash = 0) {
        if (!parse_pci_address(slash + 1, domain, &bus, &dev, &func))
            continue;
        return (*domain & 0xffff) == pci->domain && bus == pci->bus && dev == pci->dev && func == pci->func;
    }
    return false;
}

static void pci_location(const drmDevice *dev, const char *node, char *out, size_t size)
{
    const drmPciBusInfo *pci = dev->businfo.pci;
    unsigned domain;

    if (!sysfs_pci_domain(node, pci, &domain))
        domain = pci->domain;
    snprintf(out, size, "pci-%04x:%02x:%02x.%u", domain, pci->bus, pci->dev, pci->func);
}

static bool location_of(const drmDevice *dev, char *out, size_t size)
{
    switch (dev->bustype) {
    case DRM_BUS_PCI:
        pci_location(dev, dev->nodes[DRM_NODE_RENDER], out, size);
        return true;
    case DRM_BUS_PLATFORM:
        snprintf(out, size, "platform-%.54s", dev->businfo.platform->fullname);
        return true;
    case DRM_BUS_USB:
        snprintf(out, size, "usb-%03u:%03u", dev->businfo.usb->bus, dev->businfo.usb->dev);
        return true;
    case DRM_BUS_HOST1X:
        snprintf(out, size, "host1x-%.56s", dev->businfo.host1x->fullname);
        return true;
    default:
        return false;
    }
}

static void ids_of(const drmDevice *dev, struct kdrm_physical *p)
{
    memset(&p->ids, 0, sizeof(p->ids));
    p->has_address = false;
    if (dev->bustype != DRM_BUS_PCI) {
        p->ids.BusType = KMT_BUS_INTERNAL;
        return;
    }
    p->ids.VendorID = dev->deviceinfo.pci->vendor_id;
    p->ids.DeviceID = dev->deviceinfo.pci->device_id;
    p->ids.SubVendorID = dev->deviceinfo.pci->subvendor_id;
    p->ids.SubSystemID = dev->deviceinfo.pci->subdevice_id;
    p->ids.RevisionID = dev->deviceinfo.pci->revision_id;
    p->ids.BusType = KMT_BUS_PCI;
    p->address.BusNumber = dev->businfo.pci->bus;
    p->address.DeviceNumber = dev->businfo.pci->dev;
    p->address.FunctionNumber = dev->businfo.pci->func;
    p->has_address = true;
}

/* The driver's name and version, from its render node. */
static bool driver_of(const char *node, struct kdrm_physical *p, char *desc, size_t desc_size)
{
    int fd = kdrm_open(node, O_RDWR);
    drmVersionPtr v;

    if (fd < 0)
        return false;
    v = drmGetVersion(fd);
    kmt_fd_close(fd);
    if (!v)
        return false;
    snprintf(p->driver, sizeof(p->driver), "%s", v->name ? v->name : "unknown");
    snprintf(desc, desc_size, "%s", v->desc && *v->desc ? v->desc : p->driver);
    p->version[0] = v->version_major;
    p->version[1] = v->version_minor;
    p->version[2] = v->version_patchlevel;
    drmFreeVersion(v);
    return true;
}

static bool describe(const drmDevice *dev, struct kdrm_physical *p)
{
    char desc[64], driver[32];

    memset(p, 0, sizeof(*p));
    if (!(dev->available_nodes & (1 << DRM_NODE_RENDER)) || !location_of(dev, p->location, sizeof(p->location)))
        return false;
    snprintf(p->render_node, sizeof(p->render_node), "%s", dev->nodes[DRM_NODE_RENDER]);
    if (dev->available_nodes & (1 << DRM_NODE_PRIMARY))
        snprintf(p->card_node, sizeof(p->card_node), "%s", dev->nodes[DRM_NODE_PRIMARY]);
    if (!driver_of(p->render_node, p, desc, sizeof(desc)))
        return false;
    p->bustype = dev->bustype;
    ids_of(dev, p);
    p->family = kdrm_family_for_driver(p->driver);
    memcpy(driver, p->driver, sizeof(driver));
    if (p->family == &kdrm_family_generic)
        snprintf(p->description, sizeof(p->description), "%.40s (%.31s, no kmtshim allocator for this driver)",
                 desc, driver);
    else
        snprintf(p->description, sizeof(p->description), "%s (%s)", desc, driver);
    return true;
}

static int by_location(const void *x, const void *y)
{
    return strcmp(((const struct kdrm_physical *)x)->location, ((const struct kdrm_physical *)y)->location);
}

NTSTATUS APIENTRY kdrm_enum_physical_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices)
{
    drmDevicePtr devs[MAX_DRM_DEVICES];
    struct kdrm_physical scratch[MAX_DRM_DEVICES];
    int n = drmGetDevices2(DRM_DEVICE_GET_PCI_REVISION, devs, MAX_DRM_DEVICES);
    UINT kept = 0;

    /* No /dev/dri (a server, a container) is no error: zero devices. */
    for (int i = 0; i < n && i < MAX_DRM_DEVICES; i++)
        if (describe(devs[i], &scratch[kept]))
            kept++;
    if (n > 0)
        drmFreeDevices(devs, n < MAX_DRM_DEVICES ? n : MAX_DRM_DEVICES);
    qsort(scratch, kept, sizeof(scratch[0]), by_location);
    if (kept > *count)
        kept = *count;
    if (kept > KMT_MAX_PHYSICAL_DEVICES)
        kept = KMT_MAX_PHYSICAL_DEVICES;
    for (UINT i = 0; i < kept; i++) {
        found[i] = scratch[i];
        memset(&devices[i], 0, sizeof(devices[i]));
        _Static_assert(sizeof(devices[i].LocationId) == sizeof(found[i].location), "same size");
        _Static_assert(sizeof(devices[i].Description) == sizeof(found[i].description), "same size");
        memcpy(devices[i].LocationId, found[i].location, sizeof(found[i].location));
        memcpy(devices[i].Description, found[i].description, sizeof(found[i].description));
        devices[i].Context = &found[i];
    }
    *count = kept;
    return STATUS_SUCCESS;
}

static bool cap(int fd, UINT64 which, UINT64 *value)
{
    struct drm_get_cap args = { .capability = which };

    if (kdrm_ioctl(fd, DRM_IOCTL_GET_CAP, &args, "GET_CAP"))
        return false;
    *value = args.value;
    return true;
}

static void read_caps(struct kdrm_adapter *a)
{
    UINT64 v;

    a->caps = 0;
    if (cap(a->fd, DRM_CAP_PRIME, &v)) {
        if (v & DRM_PRIME_CAP_IMPORT)
            a->caps |= KMT_DRM_CAP_PRIME_IMPORT;
        if (v & DRM_PRIME_CAP_EXPORT)
            a->caps |= KMT_DRM_CAP_PRIME_EXPORT;
    }
    if (cap(a->fd, DRM_CAP_SYNCOBJ, &v) && v)
        a->caps |= KMT_DRM_CAP_SYNCOBJ;
    if (cap(a->fd, DRM_CAP_SYNCOBJ_TIMELINE, &v) && v)
        a->caps |= KMT_DRM_CAP_SYNCOBJ_TIMELINE;
    if (cap(a->fd, DRM_CAP_DUMB_BUFFER, &v) && v)
        a->caps |= KMT_DRM_CAP_DUMB_BUFFER;
    if (a->family->has_userptr)
        a->caps |= KMT_DRM_CAP_USERPTR;
}

int kdrm_open_nodes(struct kdrm_adapter *a)
{
    int fd;

    if ((fd = kdrm_open(a->phys.render_node, O_RDWR)) < 0)
        return fd;
    a->render_fd = a->fd = fd;
    if (a->family->card_node) {
        if (!*a->phys.card_node) {
            kdrm_close_nodes(a);
            return -ENODEV;
        }
        if ((fd = kdrm_open(a->phys.card_node, O_RDWR)) < 0) {
            kdrm_close_nodes(a);
            return fd;
        }
        /* The kernel makes the first opener of a primary node DRM master;
         * buffers need no master, and holding it would lock a display
         * server out (vkms).  A release: never injected, EINVAL if not master. */
        drmDropMaster(fd);
        a->card_fd = a->fd = fd;
    }
    read_caps(a);
    return 0;
}

void kdrm_close_nodes(struct kdrm_adapter *a)
{
    kmt_fd_close(a->card_fd);
    kmt_fd_close(a->render_fd);
    a->card_fd = a->render_fd = a->fd = -1;
}
