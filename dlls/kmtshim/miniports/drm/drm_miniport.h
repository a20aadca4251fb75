/*
 * The DRM miniport: real GPUs through the kernel's DRM drivers (libdrm).
 *
 * WDDM -> DRM
 *   adapter        one DRM device from drmGetDevices2() with a render node.
 *                  LocationId is its bus id ("pci-0000:00:02.0",
 *                  "platform-vgem"), so the core's LUID is stable across runs
 *                  and processes.  Each process opens the node once per
 *                  adapter (DxgkDdiStartDevice) and closes it at
 *                  DxgkDdiRemoveDevice; GEM handles live on that fd.
 *   allocation     one GEM buffer object, made by the driver's own allocator
 *                  (the family table below).  DestroyAllocation closes it.
 *   Lock/Unlock    mmap of the object's fake offset (looked up once per
 *                  object), munmap at the last unlock (the core counts nested
 *                  locks).  The family waits for the GPU and moves data to
 *                  and from the host where its driver needs it.
 *   existing sysmem  a userptr object where the driver has one (i915,
 *                  amdgpu); otherwise a GEM object holding a copy of the
 *                  caller's pages taken at creation (KMT_DRM_BACKING_COPY).
 *                  The core serves CPU locks of such allocations from the
 *                  caller's memory itself, so the copy is the GPU's view;
 *                  the submission path (issue 5) refreshes it before each
 *                  submission that references it and copies back after.
 *
 * Families (one file each):
 *   virtio_gpu     render node: VIRTGPU_RESOURCE_CREATE, VIRTGPU_MAP,
 *                  TRANSFER_TO_HOST after CPU writes, TRANSFER_FROM_HOST
 *                  before CPU reads (3D hosts only), VIRTGPU_WAIT
 *   dumb           vgem, vkms: dumb buffers on the card node (the render
 *                  node refuses them with EACCES)
 *   amdgpu         libdrm_amdgpu: amdgpu_bo_alloc, cpu_map, userptr, heap info
 *   i915, xe       GEM_CREATE(_EXT), MMAP_OFFSET, USERPTR (i915), memory
 *                  region queries
 *   generic        any other driver: enumerated and named, allocations fail
 *                  with STATUS_NOT_SUPPORTED (said in Description and the
 *                  UMD private data)
 *
 * Contexts and fences (issue 5, designed here, not implemented):
 *   DxgkDdiCreateContext maps to the driver's execution context on the
 *   adapter's fd: virtio_gpu - one VIRTGPU_CONTEXT_INIT per fd (capset from
 *   the UMD's private data) and a ring index per D3D context; amdgpu -
 *   amdgpu_cs_ctx_create per context, NodeOrdinal picking the HW IP;
 *   i915 - I915_GEM_CONTEXT_CREATE_EXT with the engine map of the node;
 *   xe - an exec queue (XE_EXEC_QUEUE_CREATE) on a per-device VM.
 *   A monitored fence is a timeline syncobj (DRM_CAP_SYNCOBJ_TIMELINE): its
 *   value is the timeline point; a submission signals point N through the
 *   driver's out-syncobj array (virtio_gpu: the 64-byte execbuffer with
 *   syncobj arrays, which libdrm 2.4.114 lacks and we declare ourselves);
 *   CPU waits use SYNCOBJ_TIMELINE_WAIT, and a waiter thread uses
 *   SYNCOBJ_EVENTFD (declared ourselves too) to wake the core's fence
 *   callbacks.  Drivers without syncobjs (vgem) get CPU-only fences.
 *   Queued work takes the core's GPU references on the allocations it names
 *   (dxgk_allocation_gpu_ref), so DestroyAllocation and Lock already wait
 *   for it.
 *
 * Test hook (drm_fault.c): KMTSHIM_DRM_FAULT=<call>:<n>[:<errno>] makes the
 * n-th DRM call named <call> ("any" for every call) in this process fail
 * once with errno (ENOMEM by default); the KMT_DRM_ESCAPE_SET_FAULT escape
 * re-arms it at run time.  Calls that release (GEM_CLOSE, munmap,
 * amdgpu_bo_free) are never failed: nothing could undo a failed release.
 */
#ifndef KMTSHIM_DRM_MINIPORT_H
#define KMTSHIM_DRM_MINIPORT_H

#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtdrm.h"

struct kdrm_adapter;
struct kdrm_bo;

/* What the kernel says about the adapter's memory (0: not known). */
struct kdrm_memory {
    bool discrete;                       /* has VRAM of its own */
    UINT64 local_size, local_free;       /* VRAM, or the UMA share of RAM */
    UINT64 local_visible;                /* CPU-visible part of VRAM */
    UINT64 nonlocal_size, nonlocal_free; /* system memory the GPU reaches (GTT) */
};

/* A driver family's allocator.  Calls return 0 or a negative errno. */
struct kdrm_family {
    const char *name;
    bool card_node;                      /* buffers live on the primary node */
    bool has_userptr;
    int (*start)(struct kdrm_adapter *a);                 /* optional */
    void (*stop)(struct kdrm_adapter *a);                 /* optional */
    int (*create)(struct kdrm_adapter *a, struct kdrm_bo *bo);
    int (*create_userptr)(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem);
    void (*destroy)(struct kdrm_adapter *a, struct kdrm_bo *bo);
    int (*map)(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr);
    void (*unmap)(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr);
    /* Before CPU access: wait for the GPU (-EBUSY with DonotWait), fetch
     * from the host.  After it: push CPU writes out.  Both optional. */
    int (*cpu_begin)(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags);
    void (*cpu_end)(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags);
    int (*memory)(struct kdrm_adapter *a, struct kdrm_memory *m);   /* optional */
};

extern const struct kdrm_family kdrm_family_virtio_gpu;
extern const struct kdrm_family kdrm_family_dumb;
extern const struct kdrm_family kdrm_family_i915;
extern const struct kdrm_family kdrm_family_xe;
extern const struct kdrm_family kdrm_family_generic;
#ifdef KMT_HAVE_DRM_AMDGPU
extern const struct kdrm_family kdrm_family_amdgpu;
#endif

/* A device found by enumeration (drm_discovery.c). */
struct kdrm_physical {
    char location[64];
    char description[128];
    char driver[32];
    char render_node[64];
    char card_node[64];
    int bustype;                         /* DRM_BUS_* */
    D3DKMT_DEVICE_IDS ids;
    D3DKMT_ADAPTERADDRESS address;
    bool has_address;
    int version[3];
    const struct kdrm_family *family;
};

struct kdrm_adapter {
    DXGKRNL_INTERFACE dxgkrnl;
    struct kdrm_physical phys;
    const struct kdrm_family *family;
    int render_fd;                       /* -1 when none */
    int card_fd;                         /* opened only for card-node families */
    int fd;                              /* the one the family allocates on */
    UINT caps;                           /* KMT_DRM_CAP_* */
    UINT page_size;
    struct kdrm_memory memory;           /* from the family's start */
    void *family_data;                   /* the family's own state */
    atomic_ullong devices, buffers, bytes, bindings, mappings;
};

struct kdrm_device {
    struct kdrm_adapter *adapter;
    HANDLE core_device;
};

#define KDRM_BO_MAGIC 0x6f624b44u           /* "DKbo", cleared when freed */

struct kdrm_bo {
    UINT32 magic;                        /* first: escapes check it before trusting a pointer */
    struct kdrm_adapter *adapter;
    UINT32 handle;                       /* GEM handle on adapter->fd */
    UINT32 resource_id;                  /* virtio_gpu */
    UINT64 size;
    UINT flags;                          /* KMT_DRM_ALLOCATION_* */
    UINT backing;                        /* KMT_DRM_BACKING_* */
    UINT32 width, height;                /* layout the driver was given */
    bool has_offset;
    UINT64 mmap_offset;                  /* cached fake offset */
    void *family_bo;                     /* amdgpu_bo_handle */
    void *cpu;                           /* mapping between Lock and Unlock */
    DXGK_LOCKFLAGS lock_flags;
    atomic_uint open_count;
};

/* drm_driver.c */
void kdrm_trace(struct kdrm_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
NTSTATUS kdrm_status_from_errno(int err);

/* drm_discovery.c */
NTSTATUS APIENTRY kdrm_enum_physical_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices);
const struct kdrm_family *kdrm_family_for_driver(const char *driver);
int kdrm_open_nodes(struct kdrm_adapter *a);
void kdrm_close_nodes(struct kdrm_adapter *a);

/* drm_query.c */
NTSTATUS APIENTRY kdrm_query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q);

/* drm_budget.c */
void kdrm_memory_probe(struct kdrm_adapter *a);
NTSTATUS kdrm_memory_budget(struct kdrm_adapter *a, UINT group, KMT_MEMORY_BUDGET *out);
UINT64 kdrm_system_share(void);
/* Bytes the process has in the driver's buckets, from fdinfo; false if the
 * driver does not report them. */
bool kdrm_fdinfo_usage(int fd, UINT64 *local, UINT64 *nonlocal);

/* drm_allocation.c */
NTSTATUS APIENTRY kdrm_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args);
NTSTATUS APIENTRY kdrm_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args);
NTSTATUS APIENTRY kdrm_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args);
NTSTATUS APIENTRY kdrm_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args);

/* drm_lock.c */
NTSTATUS APIENTRY kdrm_lock(HANDLE hAdapter, DXGKARG_LOCK *args);
NTSTATUS APIENTRY kdrm_unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args);
/* mmap of a fake offset on the adapter's fd, for the families. */
int kdrm_map_offset(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr);
void kdrm_unmap_plain(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr);

/* family_dumb.c: shared by families that fall back to dumb buffers. */
int kdrm_dumb_create(struct kdrm_adapter *a, struct kdrm_bo *bo);
int kdrm_dumb_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr);
void kdrm_gem_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo);   /* GEM_CLOSE */

/* drm_escape.c */
NTSTATUS APIENTRY kdrm_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args);

/* drm_fault.c: every DRM call of the miniport goes through these. */
int kdrm_ioctl(int fd, unsigned long request, void *arg, const char *name);
int kdrm_open(const char *path, int flags);
void *kdrm_mmap(size_t size, int prot, int fd, UINT64 offset);
int kdrm_gem_close(int fd, UINT32 handle);     /* never injected */
/* For library calls (libdrm_amdgpu): -errno to fail with, or 0. */
int kdrm_fault_check(const char *name);
void kdrm_fault_arm(const char *call, unsigned nth, int err);
void kdrm_fault_arm_from_env(void);
void kdrm_fault_counts(UINT64 *fired, UINT64 *seen);

#endif /* KMTSHIM_DRM_MINIPORT_H */
