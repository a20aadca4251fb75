/*
 * A fake DRM kernel for the families no QEMU driver exercises (i915, xe,
 * amdgpu).
 *
 * The test program defines drmIoctl(): calls on the fake's fd are answered
 * here, with the rules the kernel's uAPI documents for each ioctl (sizes
 * rounded to the region's page, placements and caching modes checked,
 * unknown handles refused with the kernel's errno); every other fd goes to
 * the real ioctl.  The fd is a memfd: each GEM object owns a window of it at
 * its fake mmap offset, so the miniport's mmap(fd, offset) reaches the very
 * bytes the fake sees, and a test reads "the GPU's view" from fake_drm_bytes().
 *
 * For amdgpu, whose family talks to libdrm_amdgpu rather than to ioctls,
 * fake_amdgpu.c stands in for the library's functions over the same books.
 *
 * Sharing: PRIME_HANDLE_TO_FD gives a dma-buf (a memfd of the object's
 * size, one per object), PRIME_FD_TO_HANDLE a handle on the caller's file
 * over the same memory window, or the handle the file already has for it;
 * SYNCOBJ_HANDLE_TO_FD / FD_TO_HANDLE carry a timeline to another file,
 * whose handles then share one value and its registrations.
 *
 * Open files: the device can be opened more than once (fake_drm_open_file,
 * another open(2) of the same memfd) and fds duplicated (fake_drm_dup, which
 * shares the file, as dup(2) does).  GEM handles and contexts belong to the
 * file they were made on, as in the kernel: an ioctl on another file of the
 * device does not find them.
 *
 * Enumeration: fake_drm_set_devices() makes drmGetDevices2 list PCI devices
 * of the test's own, and drmGetVersion name their driver; without it both
 * are libdrm's.
 *
 * Not a model of the hardware: it checks that the miniport speaks each
 * driver's uAPI the way the kernel requires, and keeps the books (live
 * objects, contexts, last arguments) a test asserts on.
 */
#ifndef KMTSHIM_FAKE_DRM_H
#define KMTSHIM_FAKE_DRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_DRM_MAX_OBJECTS 64
#define FAKE_DRM_WINDOW (4u << 20)          /* bytes of the memfd per object */

enum fake_drm_driver { FAKE_I915, FAKE_XE, FAKE_AMDGPU };

struct fake_drm_config {
    enum fake_drm_driver driver;
    bool discrete;                      /* a VRAM region next to system memory */
    bool has_llc;                       /* i915 */
    bool userptr_refused;               /* i915: GEM_USERPTR answers ENODEV */
    bool no_logical_contexts;           /* i915: a GPU before Sandy Bridge */
    bool no_pat;                        /* i915: x86 PAT is off (nopat, Xen PV): no WC or UC maps */
    bool no_softpin;                    /* i915: an old kernel: no softpin, aliasing PPGTT, no timeline fences */
    bool apu;                           /* amdgpu: a FUSION part (UMA) */
    uint32_t vram_min_page;             /* xe: 64 KiB on discrete parts */
    bool no_system_region;              /* xe: the region query lists VRAM only */
    /* xe: the graphics IP, hence the PAT table (xe_pat.c xe_pat_init_early)
     * and the device id: Xe2 (Lunar Lake, Battlemage when discrete),
     * Xe_LPG (Meteor Lake) or Xe_LP (Tiger Lake, DG2 when discrete). */
    enum { FAKE_XE_XE2, FAKE_XE_XELPG, FAKE_XE_XELP } xe_ip;
    bool xe_no_ip_ver;                  /* xe: GT_LIST's ip_ver 0 (an older kernel, or no GMD_ID) */
    int xe_config_params;               /* xe: CONFIG's parameters (0: all five; <0: none) */
    /* Timeline syncobjs: GET_CAP says SYNCOBJ and SYNCOBJ_TIMELINE, the
     * SYNCOBJ ioctls keep syncobjs with a value, and SYNCOBJ_EVENTFD takes
     * registrations on them and sets the eventfd when the value reaches the
     * point.  Off: GET_CAP is unknown and SYNCOBJ_EVENTFD takes any handle
     * but 0 without keeping anything. */
    bool timelines;
    /* The GPU timestamp: CLOCK_MONOTONIC_RAW scaled to this many ticks per
     * second (fake_drm_gpu_ticks), 0 a kernel without one (i915 before
     * CS_TIMESTAMP_FREQUENCY, xe without ENGINE_CYCLES, amdgpu with no
     * counter frequency). */
    uint64_t timestamp_hz;
    /* The counter's width in bits (0: 64; xe reports it in ENGINE_CYCLES)
     * and ticks added before it wraps, so a test starts near the wrap. */
    unsigned timestamp_bits;
    uint64_t timestamp_offset;
};

struct fake_drm_object {
    bool live;
    unsigned file;                      /* the open file it was made on (fake_drm_file_of) */
    uint64_t size;
    uint32_t mmap_flags;                /* i915 MMAP_OFFSET flags */
    uint32_t placement;                 /* i915: bit 0 system, bit 1 local; xe: region mask */
    uint32_t create_flags;
    uint16_t cpu_caching;               /* xe */
    uint64_t userptr;                   /* the caller's pages of a userptr object, 0 otherwise */
    unsigned cpu_maps;                  /* amdgpu: amdgpu_bo_cpu_map references */
    bool busy;                          /* GEM_WAIT reports it busy */
    /* The handle whose memfd window holds the bytes: its own, or for a
     * handle PRIME_FD_TO_HANDLE gave, the exported object's. */
    uint32_t memory;
};

struct fake_drm {
    struct fake_drm_config config;
    int fd;
    struct fake_drm_object objects[FAKE_DRM_MAX_OBJECTS + 1];   /* by GEM handle, 0 unused */
    unsigned live_objects, live_contexts;
    uint64_t contexts;                  /* live context ids, bit per id */
    unsigned context_file[64];          /* the file each live context was made on */
    unsigned calls;                     /* ioctls answered */
    /* fail the fail_nth ioctl numbered fail_nr (from now on) with fail_errno */
    unsigned fail_nr, fail_nth, fail_errno;
    int64_t last_wait_timeout;
    unsigned eventfd_calls;             /* SYNCOBJ_EVENTFD calls, answered or refused */
    unsigned live_syncobjs;             /* config.timelines */
    int last_eventfd;                   /* the fd the last registration took */
    /* i915 EXECBUFFER2, run at the call (fake_drm.c): batches taken, the
     * last one's context, stores that reached no listed object (lost to
     * the scratch page), and batches that stopped on a command the fake
     * does not run (a hang on hardware) */
    unsigned execs;
    uint32_t last_exec_ctx;
    unsigned exec_lost_writes, exec_hangs;
    /* i915: with exec_hold set, a batch's request stays active after it ran
     * (its signal points wait) until fake_drm_i915_retire().  exec_stalls
     * counts EXECBUFFER2 calls that softpinned over a VMA still active in
     * the context's VM: the kernel evicts it, waiting for that request
     * (eb_reserve, i915_gem_evict_for_node), where the fake cannot wait. */
    bool exec_hold;
    unsigned exec_stalls;
    /* PRIME: dma-bufs made (one per exported object), exports and imports
     * answered (an import of a buffer the file has gives its handle) */
    unsigned dmabufs, prime_exports, prime_imports;
};

extern struct fake_drm fake_drm;

/* Resets the books and returns the fake device's fd (its first file). */
int fake_drm_open(const struct fake_drm_config *config);
/* Closes every fd of the device the books know. */
void fake_drm_close(void);
/* True for an fd the fake holds as the kernel's reference (an exported
 * dma-buf or syncobj file, an eventfd registration). */
bool fake_drm_holds_fd(int fd);
/* Drops the kernel's reference to the exported files of timelines no
 * handle names, and to every exported file when no GEM object lives, so
 * nothing can be imported by them any more (the state between fuzz
 * inputs): a long run that exports more than the fake's tables hold goes
 * on. */
void fake_drm_forget_shared_files(void);
/* Another open file of the same device, and a dup sharing an fd's file;
 * -1 on failure.  fake_drm_close_fd closes one of the fake's fds. */
int fake_drm_open_file(void);
int fake_drm_dup(int fd);
void fake_drm_close_fd(int fd);
/* A path that opens the device again (/proc/<pid>/fd/N): a render node
 * to list in fake_drm_set_devices, so that the miniport itself opens and
 * drives the fake (its ioctls are answered, each fd a file of its own).
 * Ioctls may then come from several threads: they are answered one at a
 * time.  0, or -1 if `size` is too small. */
int fake_drm_device_path(char *path, size_t size);
/* The open file an fd refers to (1, 2, ...), 0: not the fake device's. */
unsigned fake_drm_file_of(int fd);

/* The object's bytes as the kernel holds them (its memfd window). */
uint8_t *fake_drm_bytes(uint32_t handle);

/* A new zero-filled object of size bytes on open file `file` (its GEM
 * handle in *handle), and GEM_CLOSE's bookkeeping (-EINVAL for a handle
 * another file owns); 0 or a negative errno. */
int fake_drm_new_object(unsigned file, uint64_t size, uint32_t *handle);
int fake_drm_close_object(unsigned file, uint32_t handle);
/* The live object behind a handle, whichever file owns it (the test's view). */
struct fake_drm_object *fake_drm_object(uint32_t handle);

/* The text /proc/<pid>/fdinfo/<fd> holds for the device's file as the
 * driver prints it (its live objects' bytes per region, engine clocks); the
 * length written, at most size - 1. */
size_t fake_drm_fdinfo(char *buf, size_t size);

/* The nth (1-based) call of ioctl number nr fails with err. */
void fake_drm_fail(unsigned long request, unsigned nth, int err);

/* A PCI device drmGetDevices2 lists: the domain as libdrm holds it (16
 * bits), the render node the miniport opens (any character device: its
 * major:minor is what sysfs is looked up by). */
struct fake_drm_pci_device {
    uint16_t domain;
    uint8_t bus, dev, func;
    const char *render_node;
    const char *card_node;              /* NULL: the device has none */
};

/* From now on drmGetDevices2 lists these (at most 8) and drmGetVersion
 * calls every driver `driver`; n = 0 gives both back to libdrm. */
void fake_drm_set_devices(const struct fake_drm_pci_device *devices, unsigned n, const char *driver);

/* ---- for fake_amdgpu.c (the amdgpu CS ioctl and its books) ---- */
/* The CS ioctl's handler: fake_amdgpu.c sets it when it is linked in
 * (called with the fake's lock held, for open file `file`). */
extern int (*fake_drm_amdgpu_cs)(unsigned file, void *args);
/* The lock the ioctls are answered under: library calls take it too. */
void fake_drm_lock(void);
void fake_drm_unlock(void);
/* With the lock held: a timeline's value (-ENOENT: no syncobj of `file`),
 * and moving it up to `point` (never down), setting the eventfds due. */
int fake_drm_syncobj_value(unsigned file, uint32_t handle, uint64_t *value);
void fake_drm_syncobj_reach(uint32_t handle, uint64_t point);
/* i915: the held requests retire (fake_drm.exec_hold): their points signal. */
void fake_drm_i915_retire(void);
/* The GPU timestamp now, at config.timestamp_hz, plus timestamp_offset,
 * wrapped at timestamp_bits. */
uint64_t fake_drm_gpu_ticks(void);

/* ---- for fake_kms.c (a card node's KMS ioctls) ---- */
/* Asked first by drmIoctl, without the fake's lock: true when `fd` is its
 * card node, the ioctl's result (0 or -errno) in *ret.  Set by fake_kms_open. */
extern bool (*fake_drm_kms)(int fd, unsigned long request, void *arg, int *ret);

/* ---- for fake_xe_exec.c (xe VMs, exec queues, exec) ---- */
/* Its handler of the xe ioctls fake_drm.c lacks, and of GEM_CLOSE before
 * the close (its books follow the object); -ENOTTY for ones it lacks too.
 * Set when fake_xe_exec.c is linked in; called with the fake's lock held. */
extern int (*fake_drm_xe_exec)(unsigned file, unsigned long request, void *args);

#endif
