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
 *                  caller's pages (KMT_DRM_BACKING_COPY).  The core serves
 *                  CPU locks of such allocations from the caller's memory
 *                  itself; the copy is the GPU's view, refreshed before
 *                  every submission that names it and written back after
 *                  it completed (drm_copy_sync.c).
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
 *
 * Fences (drm_fence.c): a monitored fence is a timeline syncobj on the
 *   adapter's fd (KmtDdiCreateFence, 1.2) where the kernel has timelines and
 *   SYNCOBJ_EVENTFD (virtio_gpu on 6.12); the core keeps the value the
 *   program reads and the miniport mirrors every store of it into the
 *   timeline (KmtDdiSignalFence; a rewind is SYNCOBJ_RESET + the lower
 *   point).  QUERY_FENCE hands the syncobj out; from then on the watcher
 *   follows it and raises the core's value when the kernel signals it (a
 *   submission's out-syncobj, the UMD's own ioctl) - MONITORED_FENCE_SIGNALED.
 *   Elsewhere (vgem) fences live in memory only.  GPU VA of the value: 0.
 * Contexts (drm_context.c): where the kernel runs command buffers (virtio_gpu
 *   on a virgl host: the fd's own virgl context; i915: a GEM context each;
 *   amdgpu: an AMDGPU_CTX each; xe: an exec queue each on the adapter's VM);
 *   elsewhere CreateContext is
 *   STATUS_NOT_SUPPORTED.  Each context keeps its progress in a context
 *   allocation (DxgkCbCreateContextAllocation).
 * GPU VA (kdrm_adapter.gpu_va): where the adapter has it every object gets
 *   an address at create, freed at destroy, and reported as the
 *   allocation's GpuVirtualAddress: i915 (with softpin, a full PPGTT and
 *   timeline fences) and xe from the adapter's allocator (drm_gpuva.c), xe
 *   binding each in the adapter's VM; amdgpu from libdrm_amdgpu's VA
 *   manager, mapped into the fd's VM.  Elsewhere it is 0.  There a legacy
 *   stream is copied into an object with a VA (drm_batch.c), so a family's
 *   submit only ever sees a GPU VA.
 * Submission (drm_submit.c): a command buffer is the driver's native stream
 *   (virgl commands, i915 batches), handed to the kernel as it is: virtual
 *   submissions pass its GPU VA (i915: inside one of the objects, each
 *   softpinned at its address) or, without a GPU VA space, its CPU address;
 *   legacy ones the DMA buffer Render copied.  Each submission signals the
 *   next point of the adapter's ring timeline; the watcher (drm_watch.c)
 *   raises DMA_COMPLETED when the kernel signals it.  A refused submission
 *   faults the device (DMA_PAGE_FAULTED for a bad address).
 *   On amdgpu and xe (GPU VA) a virtual submission's address is a GPU VA
 *   that must lie in one of the adapter's objects; a legacy one is copied
 *   into an IB / batch object of the family's own, kept until its context
 *   completed it.
 *   Legacy (Render) submissions hold the core's GPU references on their
 *   allocation list (dxgk_allocation_gpu_ref), so DestroyAllocation and Lock
 *   wait for them; a virtual one names GEM handles (KMT_DRM_SUBMIT) the core
 *   does not see, but the kernel holds and fences those objects until the
 *   host is done, so VIRTGPU_WAIT at Lock waits and an early GEM_CLOSE frees
 *   nothing the host still uses.
 *
 * Test hook (drm_fault.c): KMTSHIM_DRM_FAULT=<call>:<n>[:<errno>] makes the
 * n-th DRM call named <call> ("any" for every call) in this process fail
 * once with errno (ENOMEM by default); the KMT_DRM_ESCAPE_SET_FAULT escape
 * re-arms it at run time.  Calls that release (GEM_CLOSE, SYNCOBJ_DESTROY,
 * context destroys, munmap, amdgpu_bo_free) are never failed: nothing could
 * undo a failed release.  A negative errno stalls the call after it instead
 * (-errno ms); "submitted", a stall point and never a failure, is the moment
 * the kernel took a submission and the miniport has yet to record it;
 * "recorded", another, the submit DDI's last moment, once it recorded it.
 * KMTSHIM_DRM_SYSFS=<dir> (read when the miniport loads) looks PCI addresses
 * up under <dir> instead of /sys (drm_discovery.c).
 */
#ifndef KMTSHIM_DRM_MINIPORT_H
#define KMTSHIM_DRM_MINIPORT_H

#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <xf86drm.h>

#include "kmtshim/d3dkmddi.h"
#include "base/kmt_list.h"
#include "kmtshim/kmtdrm.h"

struct kdrm_adapter;
struct kdrm_bo;
struct kdrm_context;

/* A kernel timeline point, laid out as virtio_gpu's execbuffer takes it. */
struct kdrm_sync_point {
    UINT32 handle;                       /* syncobj on the adapter's fd */
    UINT32 flags;
    UINT64 point;
};

/* A command buffer for the kernel: the driver's native stream.  Where the
 * adapter gives allocations GPU virtual addresses (kdrm_adapter.gpu_va), a
 * virtual submission names it by GPU VA (`cmd_va`, `cmds` NULL): it lies in
 * one of the process's allocations.  A legacy one, and every submission on
 * the other adapters, is CPU memory (`cmds`, `cmd_va` 0). */
struct kdrm_job {
    const void *cmds;
    UINT64 cmd_va;
    UINT size;
    const UINT32 *bos;                   /* GEM handles it names */
    UINT nbos;
    const struct kdrm_sync_point *waits;
    UINT nwaits;
    const struct kdrm_sync_point *signals; /* [0] is the adapter's ring point */
    UINT nsignals;
};

/* A GPU virtual address space handed out by the miniport (drm_gpuva.c):
 * page-aligned, non-overlapping ranges of [base, limit), each spanning a
 * multiple of `align`, thread-safe. */
struct kdrm_gpuva_range {
    UINT64 start;
    UINT64 span;                         /* the address space it takes */
    UINT64 size;                         /* the object's bytes */
    UINT32 handle;                       /* the GEM object it was given for */
};

struct kdrm_gpuva {
    pthread_mutex_t lock;
    UINT64 base, limit, align;
    struct kdrm_gpuva_range *ranges;     /* sorted by start */
    UINT count, capacity;
};

/* 0 or -EINVAL (align not a power of two, base 0 or unaligned, empty). */
int kdrm_gpuva_init(struct kdrm_gpuva *v, UINT64 base, UINT64 limit, UINT64 align);
void kdrm_gpuva_fini(struct kdrm_gpuva *v);
/* A free range for `size` bytes of object `handle`, starting at a multiple
 * of `align` (a power of two; 0 or less than the granule: the granule):
 * 0, -EINVAL, -ENOSPC or -ENOMEM. */
int kdrm_gpuva_alloc(struct kdrm_gpuva *v, UINT32 handle, UINT64 size, UINT64 align, UINT64 *va);
void kdrm_gpuva_free(struct kdrm_gpuva *v, UINT64 va);
/* The range whose object's bytes hold `va`, or that was given to `handle`. */
bool kdrm_gpuva_find_address(struct kdrm_gpuva *v, UINT64 va, struct kdrm_gpuva_range *out);
bool kdrm_gpuva_find_handle(struct kdrm_gpuva *v, UINT32 handle, struct kdrm_gpuva_range *out);

/* What the kernel says about the adapter's memory (0: not known). */
struct kdrm_memory {
    bool discrete;                       /* has VRAM of its own */
    UINT64 local_size, local_free;       /* VRAM, or the UMA share of RAM */
    UINT64 local_visible;                /* CPU-visible part of VRAM */
    UINT64 nonlocal_size, nonlocal_free; /* system memory the GPU reaches (GTT) */
};

/* How a legacy stream becomes a command buffer of the family's own. */
struct kdrm_batch_shape {
    UINT flags;                          /* the copy's KMT_DRM_ALLOCATION_* */
    UINT32 end;                          /* a dword after the stream (0: none) */
    UINT pad_to;                         /* padded to a multiple of these bytes (0: not) */
    UINT32 pad;                          /* with this dword */
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

/* A monitored fence's timeline syncobj (drm_fence.c). */
struct kdrm_fence {
    struct list entry;                   /* kdrm_exec.fences */
    _Atomic UINT64 *value;               /* the core's fence value */
    UINT32 syncobj;
    UINT64 point;                        /* the timeline's value as last set or seen */
    UINT64 armed;                        /* pending SYNCOBJ_EVENTFD point, 0: none */
    bool exported;                       /* handed out: others may signal it */
    bool seen;                           /* the watcher saw `point` signal, not yet raised */
};

/* A copy-backed object a submission names, and which push it saw. */
struct kdrm_copy_ref {
    struct kdrm_bo *bo;                  /* referenced (kdrm_bo.copy_refs) */
    UINT64 generation;
};

/* A submission the kernel has not completed yet (drm_submit.c). */
struct kdrm_submission {
    struct list entry;                   /* kdrm_exec.inflight, in ring point order */
    struct kdrm_context *ctx;
    UINT64 point;                        /* ring point that completes it */
    UINT fence_id;
    UINT node;
    struct kdrm_copy_ref *copies;        /* written back when it completed */
    UINT ncopies;
};

/* An adapter's fences and submissions, and the watcher thread that turns
 * the kernel's signals into interrupts (drm_watch.c).  `lock` is a leaf:
 * nothing calls into the core while holding it. */
struct kdrm_exec {
    pthread_mutex_t lock;
    struct list fences;                  /* struct kdrm_fence */
    struct list inflight;                /* struct kdrm_submission */
    UINT32 ring;                         /* submission timeline, while contexts exist */
    UINT64 ring_next;                    /* last ring point handed out */
    UINT64 ring_armed;                   /* pending SYNCOBJ_EVENTFD point, 0: none */
    /* Submissions the kernel may have taken that are not on `inflight` yet
     * (their point is handed out before the ioctl, recorded after it): a
     * fence one of them signalled waits for its write-backs (drm_watch.c). */
    unsigned unrecorded;
    UINT64 unrecorded_point;             /* the oldest one's ring point */
    bool fences_held;                    /* the watcher waits for a recording */
    unsigned contexts;
    int evfd;                            /* the watcher's eventfd, -1 when none; under `lock` */
    pthread_t thread;
    bool watching;
    bool stop;
    bool degraded;                       /* a registration failed: the watcher polls */
    bool unread;                         /* a timeline could not be read: it polls too */
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
    pthread_mutex_t copy_lock;           /* copy-backed objects (drm_copy_sync.c); a leaf */
    struct list copies;                  /* struct kdrm_bo.copy_entry, under copy_lock */
    pthread_mutex_t batch_lock;          /* legacy batch copies (drm_batch.c); before exec.lock */
    struct list batches;                 /* struct kdrm_batch.entry, under batch_lock */
    atomic_ullong devices, buffers, bytes, bindings, mappings;
    atomic_ullong contexts, fences, syncobjs, submissions;
};

struct kdrm_device {
    struct kdrm_adapter *adapter;
    HANDLE core_device;
};

/* The context's progress, kept in its context allocation: what a GPU
 * writes into a context's save area, here written by the miniport. */
struct kdrm_context_block {
    UINT64 submitted_point, completed_point;
    UINT submissions, faults;
    UINT last_submitted_fence, last_completed_fence;
};

struct kdrm_context {
    struct kdrm_device *device;
    HANDLE core_context;
    UINT node;
    UINT kernel_ctx;                     /* amdgpu / i915 context id, 0 on virtio_gpu */
    HANDLE block_allocation;             /* DxgkCbCreateContextAllocation's handle */
    struct kdrm_context_block *block;    /* its CPU memory */
};

#define KDRM_BO_MAGIC 0x6f624b44u           /* "DKbo", cleared when freed */

struct kdrm_bo {
    UINT32 magic;                        /* first: escapes check it before trusting a pointer */
    struct kdrm_adapter *adapter;
    UINT32 handle;                       /* GEM handle on adapter->fd */
    UINT32 resource_id;                  /* virtio_gpu */
    UINT64 size;
    UINT64 gpu_va;                       /* adapters with GPU VA; else 0 */
    UINT flags;                          /* KMT_DRM_ALLOCATION_* */
    UINT backing;                        /* KMT_DRM_BACKING_* */
    UINT32 width, height;                /* layout the driver was given */
    bool has_offset;
    UINT64 mmap_offset;                  /* cached fake offset */
    void *family_bo;                     /* amdgpu_bo_handle */
    void *cpu;                           /* mapping between Lock and Unlock */
    DXGK_LOCKFLAGS lock_flags;
    atomic_uint open_count;
    /* KMT_DRM_BACKING_COPY, under adapter->copy_lock */
    struct list copy_entry;              /* adapter->copies while the allocation lives */
    void *user;                          /* the caller's pages; NULL once destroyed */
    UINT64 user_size;
    unsigned char *shadow;               /* what the last push copied, while unpulled */
    void *copy_map;                      /* kept from the first push to the free */
    bool shadow_live;
    UINT64 pushed;                       /* generation of the last push */
    unsigned copy_refs;                  /* the allocation + submissions naming it */
};

/* drm_trace.c */
void kdrm_trace(struct kdrm_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* drm_errno.c */
NTSTATUS kdrm_status_from_errno(int err);

/* drm_discovery.c */
NTSTATUS APIENTRY kdrm_enum_physical_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices);
const struct kdrm_family *kdrm_family_for_driver(const char *driver);
int kdrm_open_nodes(struct kdrm_adapter *a);
void kdrm_close_nodes(struct kdrm_adapter *a);
/* Where enumeration reads sysfs (NULL or "": /sys); a test hook. */
void kdrm_set_sysfs_root(const char *root);

/* drm_query.c */
NTSTATUS APIENTRY kdrm_query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q);

/* drm_budget.c */
void kdrm_memory_probe(struct kdrm_adapter *a);
NTSTATUS kdrm_memory_budget(struct kdrm_adapter *a, UINT group, KMT_MEMORY_BUDGET *out);
UINT64 kdrm_system_share(void);
UINT64 kdrm_system_free(void);           /* MemAvailable */
/* Bytes the process has in the driver's buckets, from fdinfo; false if the
 * driver does not report them. */
bool kdrm_fdinfo_usage(int fd, UINT64 *local, UINT64 *nonlocal);
/* The same from an fdinfo text already open. */
bool kdrm_fdinfo_parse(FILE *f, UINT64 *local, UINT64 *nonlocal);

/* drm_allocation.c */
NTSTATUS APIENTRY kdrm_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args);
NTSTATUS APIENTRY kdrm_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args);
NTSTATUS APIENTRY kdrm_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args);
NTSTATUS APIENTRY kdrm_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args);

/* drm_bo.c: frees the GEM object and the record (the last reference of a
 * copy-backed one). */
void kdrm_bo_release(struct kdrm_adapter *a, struct kdrm_bo *bo);

/* drm_batch.c: legacy streams on adapters with GPU VA.  submit is the
 * family's submit, a legacy stream first copied into an object with a VA
 * (kdrm_family.batch) and kept until its context completed it; release
 * frees the kept copies of context `c` (NULL: of every context), all of
 * them or only those completed. */
void kdrm_batches_init(struct kdrm_adapter *a);
int kdrm_batch_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job);
void kdrm_batches_release(struct kdrm_adapter *a, const struct kdrm_context *c, bool all);

/* drm_copy_sync.c: keeping copy-backed objects and the caller's pages in
 * step around submissions. */
void kdrm_copy_init(struct kdrm_adapter *a);
void kdrm_copy_register(struct kdrm_adapter *a, struct kdrm_bo *bo, void *user, UINT64 size);
/* The allocation is destroyed: true if the object can go now, false if a
 * submission still names it (its completion frees it). */
bool kdrm_copy_forget(struct kdrm_adapter *a, struct kdrm_bo *bo);
/* Before a job: refreshes the copies it names from the caller's pages and
 * records them in `s`.  0 or -errno (nothing is recorded then). */
int kdrm_copy_push(struct kdrm_adapter *a, const UINT32 *handles, UINT n, struct kdrm_submission *s);
/* After it completed (`pull`) or was dropped: writes back what the GPU
 * changed and drops the submission's references. */
int kdrm_copy_finish(struct kdrm_adapter *a, struct kdrm_submission *s, bool pull);

/* drm_lock.c */
NTSTATUS APIENTRY kdrm_lock(HANDLE hAdapter, DXGKARG_LOCK *args);
NTSTATUS APIENTRY kdrm_unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args);
/* mmap of a fake offset on the adapter's fd, for the families. */
int kdrm_map_offset(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr);
void kdrm_unmap_plain(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr);

/* family_dumb.c: shared by families that fall back to dumb buffers. */
int kdrm_dumb_create(struct kdrm_adapter *a, struct kdrm_bo *bo);
int kdrm_dumb_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr);

/* drm_gem.c */
void kdrm_gem_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo);   /* GEM_CLOSE */

/* drm_syncobj.c: the kernel's syncobj calls (0 or -errno) */
int kdrm_syncobj_create(struct kdrm_adapter *a, UINT32 *handle);
void kdrm_syncobj_destroy(struct kdrm_adapter *a, UINT32 handle);   /* never injected */
int kdrm_syncobj_signal(struct kdrm_adapter *a, UINT32 handle, UINT64 point);
int kdrm_syncobj_reset(struct kdrm_adapter *a, UINT32 handle);
int kdrm_syncobj_query(struct kdrm_adapter *a, UINT32 handle, bool last_submitted, UINT64 *point);
/* The kernel signals the eventfd once `point` signalled (one shot). */
int kdrm_syncobj_eventfd(struct kdrm_adapter *a, UINT32 handle, UINT64 point, int evfd);
/* Does the kernel have SYNCOBJ_EVENTFD?  (Creates and frees a syncobj.) */
bool kdrm_syncobj_probe_eventfd(struct kdrm_adapter *a);

/* drm_fence.c */
NTSTATUS APIENTRY kdrm_create_fence(HANDLE hAdapter, KMTARG_CREATEFENCE *args);
void APIENTRY kdrm_destroy_fence(HANDLE hAdapter, HANDLE hDriverFence);
NTSTATUS APIENTRY kdrm_signal_fence(HANDLE hAdapter, HANDLE hDriverFence, UINT64 value);
/* One of the adapter's fences by pointer or syncobj; exec.lock held. */
struct kdrm_fence *kdrm_fence_find(struct kdrm_adapter *a, const void *ptr, UINT32 syncobj);
NTSTATUS kdrm_fence_export(struct kdrm_adapter *a, D3DKMT_HANDLE h, KMT_DRM_FENCE_INFO *info);

/* drm_watch.c */
void kdrm_exec_init(struct kdrm_adapter *a);
/* Starts the watcher if it is not running; exec.lock held. */
int kdrm_watch_start_locked(struct kdrm_adapter *a);
/* Stops it and frees what is left; no lock held. */
void kdrm_exec_stop(struct kdrm_adapter *a);
/* Makes the watcher look again (a record it may have missed); exec.lock
 * held (the eventfd's number is read under it). */
void kdrm_watch_kick_locked(struct kdrm_adapter *a);
/* Keeps a SYNCOBJ_EVENTFD registration pending for the oldest submission
 * and for an exported fence's next point; exec.lock held. */
void kdrm_watch_arm_ring_locked(struct kdrm_adapter *a);
void kdrm_watch_arm_fence_locked(struct kdrm_adapter *a, struct kdrm_fence *f);

/* drm_context.c */
NTSTATUS APIENTRY kdrm_create_context(HANDLE hDevice, DXGKARG_CREATECONTEXT *args);
NTSTATUS APIENTRY kdrm_destroy_context(HANDLE hContext);
NTSTATUS APIENTRY kdrm_render(HANDLE hContext, DXGKARG_RENDER *args);
NTSTATUS kdrm_context_info(struct kdrm_adapter *a, HANDLE hContext, KMT_DRM_CONTEXT_INFO *info);

/* drm_submit.c */
NTSTATUS APIENTRY kdrm_submit_command(HANDLE hAdapter, const DXGKARG_SUBMITCOMMAND *args);
NTSTATUS APIENTRY kdrm_submit_command_virtual(HANDLE hAdapter, const DXGKARG_SUBMITCOMMANDVIRTUAL *args);

/* drm_retire.c */
/* Moves the submissions up to ring point `done` to `retired`; exec.lock
 * held.  True if any: *irq is then their DMA_COMPLETED (the newest fence
 * id), to raise once kdrm_submissions_free() wrote their copies back. */
bool kdrm_submissions_retire_locked(struct kdrm_adapter *a, UINT64 done, struct list *retired,
                                    DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq);
/* Frees a list of retired (`completed`) or dropped submissions, writing
 * back their copies first; no lock held. */
void kdrm_submissions_free(struct kdrm_adapter *a, struct list *list, bool completed);

/* drm_interrupt.c */
void kdrm_raise(struct kdrm_adapter *a, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq);
/* DMA_PAGE_FAULTED at `va` for -EFAULT, else DMA_FAULTED with the errno's
 * status. */
void kdrm_raise_fault(struct kdrm_adapter *a, UINT fence_id, UINT node, int err, D3DGPU_VIRTUAL_ADDRESS va);

/* drm_escape.c */
NTSTATUS APIENTRY kdrm_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args);

/* drm_fault.c: every DRM call of the miniport goes through these.  The
 * unarmed check and the ioctl wrappers are inline: they sit on every
 * create and destroy, where a call and return cost more than the check. */
extern atomic_bool kdrm_fault_armed;
int kdrm_fault_check_armed(const char *name, bool may_fail);

/* For library calls (libdrm_amdgpu): -errno to fail with, or 0 (after the
 * stall, when one was armed on it). */
static inline int kdrm_fault_check(const char *name)
{
    if (!atomic_load_explicit(&kdrm_fault_armed, memory_order_relaxed))
        return 0;
    return kdrm_fault_check_armed(name, true);
}

/* A stall point: never fails, stalls when armed. */
static inline void kdrm_fault_stall_point(const char *name)
{
    if (atomic_load_explicit(&kdrm_fault_armed, memory_order_relaxed))
        kdrm_fault_check_armed(name, false);
}

static inline int kdrm_ioctl(int fd, unsigned long request, void *arg, const char *name)
{
    int err = kdrm_fault_check(name);

    if (err)
        return err;
    return drmIoctl(fd, request, arg) ? -errno : 0;
}

static inline int kdrm_gem_close(int fd, UINT32 handle)   /* never injected */
{
    struct drm_gem_close args = { .handle = handle };

    return drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &args) ? -errno : 0;
}

int kdrm_open(const char *path, int flags);
void *kdrm_mmap(size_t size, int prot, int fd, UINT64 offset);
void kdrm_fault_arm(const char *call, unsigned nth, int err);
void kdrm_fault_arm_from_env(void);
void kdrm_fault_forget(void);
void kdrm_fault_counts(UINT64 *fired, UINT64 *seen);

#endif /* KMTSHIM_DRM_MINIPORT_H */
