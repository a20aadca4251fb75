/*
 * The DRM miniport: real GPUs through the kernel's DRM drivers (libdrm).
 * This header holds the adapter, its devices and the driver families'
 * table; buffer objects are in drm_bo.h, command submission in drm_cs.h,
 * the DRM calls and their fault hook in drm_fault.h, tracing in
 * drm_trace.h.
 *
 * WDDM -> DRM
 *   adapter        one DRM device from drmGetDevices2() with a render node.
 *                  LocationId is its bus id ("pci-0000:00:02.0",
 *                  "platform-vgem"), so the core's LUID is stable across runs
 *                  and processes.  Each process opens the node once per
 *                  adapter (DxgkDdiStartDevice) and closes it at
 *                  DxgkDdiRemoveDevice; GEM handles live on that fd.
 *
 * Families (one file each):
 *   virtio_gpu     render node: VIRTGPU_RESOURCE_CREATE, VIRTGPU_MAP,
 *                  TRANSFER_TO_HOST after CPU writes, TRANSFER_FROM_HOST
 *                  before CPU reads (3D hosts only), VIRTGPU_WAIT
 *   dumb           vgem, vkms: dumb buffers on the card node (the render
 *                  node refuses them with EACCES)
 *   amdgpu         libdrm_amdgpu: amdgpu_bo_alloc, cpu_map, userptr, heap info;
 *                  every object mapped at a GPU VA of the fd's VM (the
 *                  allocation's GpuVirtualAddress); AMDGPU_CS submission
 *   i915, xe       GEM_CREATE(_EXT), MMAP_OFFSET, USERPTR (i915), memory
 *                  region queries; i915 also EXECBUFFER2 with softpin; xe
 *                  binds every object at a GPU VA of the adapter's VM
 *                  (XE_VM_BIND, waited), XE_EXEC submission
 *   generic        any other driver: enumerated and named, allocations fail
 *                  with STATUS_NOT_SUPPORTED (said in Description and the
 *                  UMD private data)
 */
#ifndef KMTSHIM_DRM_WINSYS_H
#define KMTSHIM_DRM_WINSYS_H

#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtshim/kmtdrm.h"
#include "base/kmt_list.h"
#include "drm_cs.h"                    /* struct kdrm_exec, kdrm_batch_shape: held by value */
#include "drm_kms.h"                   /* struct kdrm_kms: held by value */
#include "drm_perf.h"                  /* struct kdrm_perf: held by value */

struct kdrm_bo;

/* What the kernel says about the adapter's memory (0: not known). */
struct kdrm_memory {
    bool discrete;                       /* has VRAM of its own */
    UINT64 local_size, local_free;       /* VRAM, or the UMA share of RAM */
    UINT64 local_visible;                /* CPU-visible part of VRAM */
    UINT64 nonlocal_size, nonlocal_free; /* system memory the GPU reaches (GTT) */
};

/* A driver family's allocator.  Calls return 0 or a negative errno. */
/* A GPU timestamp and the CPU's QPC (kmt_qpc_now) read around it. */
struct kdrm_gpu_clock {
    uint64_t frequency;                  /* GPU ticks per second */
    uint64_t gpu;                        /* the counter as read: `width` bits */
    uint64_t cpu_qpc;
    uint32_t width;                      /* bits the counter has; 0: 64 */
};

/* The last calibration, from which the next one extends a counter narrower
 * than 64 bits across its wrap (drm_clock.c). */
struct kdrm_clock_state {
    pthread_mutex_t lock;
    bool valid;
    uint64_t gpu;                        /* extended */
    uint64_t cpu_qpc;
};

struct kdrm_family {
    const char *name;
    bool card_node;                      /* buffers live on the primary node */
    bool has_userptr;
    int (*start)(struct kdrm_adapter *a);                 /* optional */
    void (*stop)(struct kdrm_adapter *a);                 /* optional */
    int (*create)(struct kdrm_adapter *a, struct kdrm_bo *bo);
    int (*create_userptr)(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem);
    /* Sharing (optional: without it ImportAllocation is not supported).
     * An object PRIME just gave this file (bo->handle, bo->size, bo->flags
     * set) gets what create() would have given it; the caller closes the
     * handle if it fails. */
    int (*import)(struct kdrm_adapter *a, struct kdrm_bo *bo);
    /* Optional, for a library that owns the file's GEM handles
     * (libdrm_amdgpu): the handle of dma-buf `fd` on this file, taken
     * through the library (PRIME_FD_TO_HANDLE otherwise); import_drop
     * gives back what import_fd took, for a handle the file already had or
     * after import failed, in place of the caller's GEM_CLOSE. */
    int (*import_fd)(struct kdrm_adapter *a, struct kdrm_bo *bo, int fd, UINT32 *handle);
    void (*import_drop)(struct kdrm_adapter *a, struct kdrm_bo *bo);
    void (*destroy)(struct kdrm_adapter *a, struct kdrm_bo *bo);
    int (*map)(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr);
    void (*unmap)(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr);
    /* Before CPU access: wait for the GPU (-EBUSY with DonotWait), fetch
     * from the host.  After it: push CPU writes out.  Both optional. */
    int (*cpu_begin)(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags);
    void (*cpu_end)(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags);
    int (*memory)(struct kdrm_adapter *a, struct kdrm_memory *m);   /* optional */
    /* The GPU's timestamp with the CPU's QueryPerformanceCounter next to
     * it (optional: DxgkDdiCalibrateGpuClock is not supported without). */
    int (*gpu_clock)(struct kdrm_adapter *a, struct kdrm_gpu_clock *out);
    /* Execution (optional).  ctx_create fails with -EOPNOTSUPP where this
     * adapter runs no command buffers; submit queues a job and returns (the
     * kernel signals job->signals when it completed), -ENOSYS where the
     * family makes contexts but does not submit to them. */
    int (*ctx_create)(struct kdrm_adapter *a, struct kdrm_context *c);
    void (*ctx_destroy)(struct kdrm_adapter *a, struct kdrm_context *c);
    int (*submit)(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job);
    /* Where the adapter has GPU VA, submit never sees a legacy stream:
     * drm_batch.c copies it into an object shaped so and passes its VA. */
    struct kdrm_batch_shape batch;
};

extern const struct kdrm_family kdrm_family_virtio_gpu;
extern const struct kdrm_family kdrm_family_dumb;
extern const struct kdrm_family kdrm_family_i915;
extern const struct kdrm_family kdrm_family_xe;
extern const struct kdrm_family kdrm_family_generic;
#ifdef KMT_HAVE_DRM_AMDGPU
extern const struct kdrm_family kdrm_family_amdgpu;
/* The amdgpu_device_handle the adapter works on (NULL when stopped). */
void *kdrm_amdgpu_device(struct kdrm_adapter *a);
/* In a fork() child: refuses amdgpu starts if the parent held devices. */
void kdrm_amdgpu_forget(void);
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
    /* Set by the family's start(): create() gives every object a GPU VA
     * (kdrm_bo.gpu_va, the allocation's GpuVirtualAddress) and the kernel
     * runs command buffers that name objects by it.  Per adapter, not per
     * family: an old i915 without softpin has no VAs to give. */
    bool gpu_va;
    UINT page_size;
    struct kdrm_memory memory;           /* from the family's start */
    void *family_data;                   /* the family's own state */
    struct kdrm_exec exec;
    struct kdrm_kms kms;                 /* VidPn sources from the card node (drm_kms.c) */
    pthread_mutex_t copy_lock;           /* copy-backed objects (drm_copy_sync.c); a leaf */
    struct list copies;                  /* struct kdrm_bo.copy_entry, under copy_lock */
    pthread_mutex_t batch_lock;          /* legacy batch copies (drm_batch.c); before exec.lock */
    struct list batches;                 /* struct kdrm_batch.entry, under batch_lock */
    pthread_mutex_t share_lock;          /* GEM handles other processes know (drm_share.c) */
    struct list shares;                  /* struct kdrm_gem_share, under share_lock */
    atomic_ullong devices, buffers, bytes, bindings, mappings;
    atomic_ullong contexts, fences, syncobjs, submissions;
    struct kdrm_perf perf;               /* sysfs paths and limits (drm_perf.c) */
    struct kdrm_clock_state clock;       /* DxgkDdiCalibrateGpuClock (drm_clock.c) */
};

struct kdrm_device {
    struct kdrm_adapter *adapter;
    HANDLE core_device;
};

/* drm_discovery.c */
NTSTATUS APIENTRY kdrm_enum_physical_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices);
const struct kdrm_family *kdrm_family_for_driver(const char *driver);
int kdrm_open_nodes(struct kdrm_adapter *a);
void kdrm_close_nodes(struct kdrm_adapter *a);
/* Where enumeration reads sysfs (NULL or "": /sys); a test hook. */
void kdrm_set_sysfs_root(const char *root);
const char *kdrm_sysfs_root(void);

/* drm_query.c */
NTSTATUS APIENTRY kdrm_query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q);
void kdrm_clock_init(struct kdrm_adapter *a);
uint64_t kdrm_clock_extend(struct kdrm_clock_state *state, const struct kdrm_gpu_clock *clock);
NTSTATUS APIENTRY kdrm_calibrate_gpu_clock(HANDLE hAdapter, UINT32 node, UINT32 engine,
                                           DXGKARG_CALIBRATEGPUCLOCK *args);

/* drm_share.c: allocations as PRIME dma-bufs (DDI 1.6). */
void kdrm_share_init(struct kdrm_adapter *a);
NTSTATUS APIENTRY kdrm_export_allocation(HANDLE hAdapter, HANDLE hAllocation, int *pFd);
NTSTATUS APIENTRY kdrm_import_allocation(HANDLE hAdapter, KMTARG_IMPORTALLOCATION *p);

/* drm_escape.c */
NTSTATUS APIENTRY kdrm_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args);

#endif /* KMTSHIM_DRM_WINSYS_H */
