/*
 * dxgkrnl: kmtshim's userland re-creation of the Windows graphics kernel.
 *
 * The thunks (../thunks) capture a caller's descriptor, validate pointers and
 * call in here with kernel-side copies.  The core validates handles and
 * object relations, owns every object's lifetime and talks to the miniport
 * only through the gateway of ddi.h, the one caller of the DxgkDdi* table of
 * include/kmtshim/d3dkmddi.h.
 *
 * Object graph (one process):
 *     dxgk_adapter        a started miniport device, shared by every handle
 *       <- dxgk_adapter_handle   an open hAdapter (EnumAdapters2, OpenAdapterFromLuid)
 *       <- dxgk_device           holds a reference on the adapter, not on a
 *                                handle: devices outlive CloseAdapter
 *            -> dxgk_resource    list of its allocations
 *            -> dxgk_allocation  standalone, or owned by a resource
 *
 * Locks, outermost first: device->rwlock (shared for every call on the
 * device or its children, exclusive for DestroyDevice) > resource->ddi_lock
 * (DDI calls carrying hResource) > device->list_lock (lists, destroy
 * validation) > allocation->cpu_lock > hmgr slot locks; the scheduler's
 * sched->lock > sync-object locks.  A call on several devices takes their
 * rwlocks in address order.  No lock spanning more than one device is ever
 * held across a DDI call.
 */
#ifndef KMTSHIM_DXGKRNL_H
#define KMTSHIM_DXGKRNL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/d3dkmddi.h"
#include "hmgr/hmgr.h"
#include "base/kmt_list.h"

struct dxgk_sched;
struct dxgk_resource_share;
struct dxgk_miracast;

/* Most VidPn sources an adapter's ownership state covers (vidpn.c): ids
 * at or past min(num_sources, this) are not sources. */
#define DXGK_MAX_VIDPN_SOURCES 16u

/* Who owns one VidPn source: a device of this process, or nobody (0). */
struct dxgk_vidpn_owner {
    D3DKMT_HANDLE device;
    D3DKMT_VIDPNSOURCEOWNER_TYPE type;   /* EXCLUSIVE or EMULATED while owned */
};

/* Largest private data blob accepted anywhere (dxgkrnl's VM-bus bound). */
#define DXGK_MAX_PRIVATE_DATA (128u * 1024u)

/* ---- miniports and adapters ------------------------------------------------ */

struct dxgk_miniport {
    struct list entry;
    char name[32];
    DRIVER_INITIALIZATION_DATA ddi;
    void *dl_handle;                     /* plugin, or NULL when built in */
};

struct dxgk_reg_value;

/* Vertical blanks of an adapter's sources (vblank.c). */
struct dxgk_vblank {
    pthread_mutex_t ctl_lock;            /* the CRTC_VSYNC switch; ranks above lock */
    unsigned joined;                     /* waits, under ctl_lock: enabled while nonzero */
    pthread_mutex_t lock;
    pthread_cond_t cond;                 /* a wait ended (CLOCK_MONOTONIC) */
    UINT64 count[DXGK_MAX_VIDPN_SOURCES]; /* vsyncs seen per source, under lock */
    struct list waiters;                 /* struct dxgk_vblank_waiter, under lock */
    bool stopped;                        /* process teardown: every wait ends, under lock */
};

/* Flip presents of an adapter's sources (present_flip.c). */
struct dxgk_flip_source {
    struct list pending;                 /* struct dxgk_flip, oldest first */
    unsigned queued;                     /* entries of pending */
    ULONG frames;                        /* presents that reached the source */
    ULONG cancelled;                     /* flips that never showed */
    D3DKMT_HANDLE scanned_out;           /* the allocation shown now, or 0 */
};

struct dxgk_flips {
    pthread_mutex_t lock;                /* ranks below vblank.lock */
    pthread_cond_t retired;              /* a flip left a queue */
    struct dxgk_flip_source source[DXGK_MAX_VIDPN_SOURCES]; /* under lock */
    /* flips queued on every source; changed under lock, read without it
     * by DestroyDevice (present_flip.c) */
    atomic_uint queued;
    atomic_bool joined;                  /* holds a vsync-interrupt join; as queued */
    bool stopped;                        /* process teardown, under lock */
    _Atomic UINT64 devices_gone;         /* DestroyDevice calls seen, bumped without lock */
};

struct dxgk_adapter {
    struct kmt_object obj;               /* refs: the process, handles, devices */
    struct list entry;                   /* process adapter list */
    struct dxgk_miniport *miniport;
    const DRIVER_INITIALIZATION_DATA *ddi;
    PVOID ctx;                           /* MiniportDeviceContext (hAdapter for DDIs) */
    LUID luid;
    KMT_PHYSICAL_DEVICE pdo;
    KMT_ADAPTER_DESC desc;
    struct dxgk_reg_value *registry;     /* KMTQAITYPE_QUERYREGISTRY's values (umd_config.c) */
    D3DKMT_ADAPTERREGISTRYINFO registry_info; /* KMTQAITYPE_ADAPTERREGISTRYINFO (adapter_info_ext.c) */
    DXGK_DRIVERCAPS caps;
    DXGK_QUERYSEGMENTOUT segments;
    DXGKRNL_INTERFACE iface;
    ULONG num_sources;
    bool started;                        /* between DxgkDdiStartDevice and StopDevice */
    bool removed;                        /* DxgkDdiRemoveDevice was called (ddi_adapter.c) */
    atomic_ullong usage[2];              /* bytes per D3DKMT_MEMORY_SEGMENT_GROUP */
    atomic_uint allocations[2];          /* allocations counted in usage[] (QueryStatistics) */
    atomic_uint allocs_created, allocs_destroyed;      /* since start: QueryStatistics' */
    atomic_ullong bytes_created, bytes_destroyed;      /* Allocations.Created/Destroyed */
    struct dxgk_sched *sched;            /* GPU scheduler, started with the first context */
    pthread_mutex_t sched_init_lock;
    pthread_mutex_t fence_lock;          /* monitored fences of the adapter */
    struct list fences;                  /* under fence_lock */
    pthread_mutex_t ctx_alloc_lock;
    struct list context_allocations;     /* DxgkCbCreateContextAllocation, under ctx_alloc_lock */
    struct dxgk_miracast *miracast;      /* Miracast sessions, made on first use (miracast.c) */
    pthread_mutex_t vidpn_lock;          /* ranks below device->rwlock */
    struct dxgk_vidpn_owner vidpn[DXGK_MAX_VIDPN_SOURCES]; /* under vidpn_lock */
    struct dxgk_vblank vblank;
    struct dxgk_flips flips;
    ULONG num_children;                  /* monitor connectors (DxgkDdiStartDevice) */
    atomic_bool child_connected[DXGK_MAX_VIDPN_SOURCES]; /* vblank.c */
};

/* The sources the core keeps state for: ids at or past this are none. */
static inline UINT dxgk_source_count(const struct dxgk_adapter *adapter)
{
    return adapter->num_sources < DXGK_MAX_VIDPN_SOURCES ? adapter->num_sources : DXGK_MAX_VIDPN_SOURCES;
}

struct dxgk_adapter_handle {
    struct kmt_object obj;
    struct list entry;                   /* process adapter-handle list */
    D3DKMT_HANDLE handle;
    struct dxgk_adapter *adapter;        /* referenced */
};

/* ---- devices, resources, allocations ---------------------------------------- */

struct dxgk_device {
    struct kmt_object obj;
    struct list entry;                   /* process device list */
    D3DKMT_HANDLE handle;
    struct dxgk_adapter *adapter;        /* referenced */
    HANDLE driver_device;                /* from DxgkDdiCreateDevice */
    bool ddi_destroyed;                  /* DxgkDdiDestroyDevice was called (ddi_device.c) */
    struct kmt_rwlock rwlock;
    struct kmt_mutex list_lock;
    bool destroyed;                      /* under rwlock (exclusive) */
    atomic_bool handle_gone;             /* DestroyDevice removed its handle (present_flip.c) */
    bool owned_source;                   /* SetVidPnSourceOwner gave it a source once (vidpn.c) */
    struct list resources;               /* under list_lock */
    struct list allocations;             /* standalone ones, under list_lock */
    struct kmt_cond children_gone;       /* with list_lock: a child was reclaimed */
    struct list contexts;                /* under list_lock */
    struct list syncobjs;                /* monitored fences (device-level), under list_lock */
    /* GetDeviceState(EXECUTION) and the last GPU page fault */
    atomic_int execution_state;          /* D3DKMT_DEVICEEXECUTION_STATE */
    D3DGPU_VIRTUAL_ADDRESS fault_address;
    atomic_uint queued_present_limit;    /* SetQueuedLimit; 0: the default (present.c) */
};

struct dxgk_resource {
    struct kmt_object obj;
    struct list entry;                   /* device->resources */
    D3DKMT_HANDLE handle;
    D3DKMT_HANDLE global_handle;         /* CreateShared without NT sharing (the broker's) */
    struct dxgk_resource_share *share;   /* CreateShared or opened: resource_share.h */
    struct dxgk_device *device;          /* referenced */
    HANDLE driver_resource;              /* DXGKARG_CREATEALLOCATION.hResource */
    void *runtime_data;
    UINT runtime_data_size;
    void *driver_data;                   /* resource-level UMD data, for opens */
    UINT driver_data_size;
    bool shared;                         /* sealed: no additions, no partial destroy */
    bool standard;                       /* created as a standard allocation */
    bool destroying;                     /* handle gone, waiting for last ref */
    /* Serializes the DDI calls that carry hResource: the KMD may rewrite it
     * (in/out), so read, call and write back must not interleave.  Taken
     * before device->list_lock. */
    struct kmt_mutex ddi_lock;
    struct list allocations;             /* under device->list_lock */
    struct dxgk_reclaim_wait *waiter;
};

struct dxgk_allocation {
    struct kmt_object obj;
    struct list entry;                   /* device->allocations or resource->allocations */
    D3DKMT_HANDLE handle;
    struct dxgk_device *device;          /* referenced */
    struct dxgk_resource *resource;      /* referenced, or NULL if standalone */
    HANDLE driver_allocation;            /* DXGK_ALLOCATIONINFO.hAllocation */
    HANDLE device_allocation;            /* DXGK_OPENALLOCATIONINFO.hDeviceSpecificAllocation */
    bool opened;                         /* the creating device's binding is open */
    bool destroy_mark;                   /* scratch for list validation, under list_lock */
    SIZE_T size;
    const void *sysmem;                  /* ExistingSysMem backing, or NULL */
    D3DGPU_VIRTUAL_ADDRESS gpu_va;       /* the driver's, 0 if none */
    void *private_data;                  /* per-allocation UMD data, trails the object */
    UINT private_data_size;
    UINT segment_group;                  /* what usage[] it is counted in */
    /* CPU access (Lock/Unlock), under cpu_lock */
    struct kmt_mutex cpu_lock;
    unsigned lock_count;
    void *cpu_address;
    bool mapped_read_only;               /* the miniport's Lock said ReadOnly */
    bool written_under_read_only;        /* a nested lock of that mapping did not */
    /* Queued GPU work referencing the allocation (submission holds these).
     * Reclaim waits for 0 unless the destroy said AssumeNotInUse. */
    unsigned gpu_refs;                   /* under cpu_lock */
    struct kmt_cond gpu_idle;            /* with cpu_lock */
    /* deferred destruction, under cpu_lock */
    bool destroyed;                      /* handle removed */
    bool assume_not_in_use;
    bool reclaim_pending;                /* CPU refs gone, waiting for the GPU */
    bool free_pending;                   /* reclaimed under queued GPU work (AssumeNotInUse) */
    struct dxgk_reclaim_wait *waiter;    /* SynchronousDestroy caller, or NULL */
};

/* A SynchronousDestroy caller waits on this until every object it destroyed
 * is reclaimed (the miniport's DestroyAllocation returned). */
struct dxgk_reclaim_wait {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    unsigned pending;
};

/* ---- the process ---------------------------------------------------------------- */

struct dxgk_process {
    pthread_mutex_t lock;                /* adapter lists, init */
    bool initialized;
    NTSTATUS init_status;
    struct list miniports;
    struct list adapters;                /* started adapters, enumeration order */
    struct kmt_mutex devices_lock;       /* devices; a leaf: held for list work only */
    struct list devices;
    struct list adapter_handles;
    struct list syncobjs;                /* adapter-level sync objects (outlive devices) */
    struct list async_waits;             /* pending CPU waits with an async event */
    struct hmgr_table handles;           /* local handles */
    struct hmgr_table global_handles;    /* share handles (low bits 2) */
    atomic_uint live_objects;            /* every core object, for leak checks */
};

extern struct dxgk_process dxgk_process;

/* Out of memory (or of threads, file descriptors): a failure that says
 * nothing about the devices, so a process start that meets it is undone and
 * tried again by the next call. */
static inline bool dxgk_status_is_exhaustion(NTSTATUS status)
{
    return status == STATUS_NO_MEMORY || status == STATUS_INSUFFICIENT_RESOURCES;
}

/* Initializes on first use: loads the miniports, starts their adapters.
 * Every thunk calls it; once up, the answer is one load, inline.  A start
 * that ran out of memory leaves the process as it was before. */
NTSTATUS dxgk_process_init_slow(void);

static inline NTSTATUS dxgk_process_init(void)
{
    /* once initialized, the flag never goes back while calls run */
    if (__atomic_load_n(&dxgk_process.initialized, __ATOMIC_ACQUIRE))
        return dxgk_process.init_status;
    return dxgk_process_init_slow();
}
/* Tears the process down as dxgkrnl does at process exit. */
void dxgk_process_shutdown(void);
/* In a fork() child: back to a process that never started (fork.c). */
void dxgk_process_forget(void);
/* The library starts: a fork() child from now on starts it afresh (fork.c). */
void dxgk_fork_watch(void);

/* Miniport loading (miniport_loader.c). */
NTSTATUS dxgk_register_builtin(const char *name, PKMT_MINIPORT_DRIVER_ENTRY entry);
NTSTATUS dxgk_load_miniports(void);
void dxgk_unload_miniports(void);

/* Adapters (adapter.c). */
NTSTATUS dxgk_start_adapters(struct dxgk_miniport *mp);
void dxgk_stop_adapters(void);
void dxgk_release_adapters_locked(void);
struct dxgk_adapter *dxgk_adapter_from_handle(D3DKMT_HANDLE h);  /* referenced */
struct dxgk_adapter *dxgk_adapter_from_luid(LUID luid);          /* referenced, or NULL */
NTSTATUS dxgk_open_adapter(struct dxgk_adapter *adapter, D3DKMT_HANDLE *out);
NTSTATUS dxgk_enum_adapters(D3DKMT_ADAPTERINFO *out, ULONG *count, ULONG capacity,
                            bool include_compute_only);
/* The process's adapters in enumeration order, referenced, taken under
 * dxgk_process.lock and used outside it (at most DXGK_MAX_LISTED). */
#define DXGK_MAX_LISTED 64
ULONG dxgk_adapters_snapshot(struct dxgk_adapter **out, bool include_compute_only);
void dxgk_adapters_release(struct dxgk_adapter **list, ULONG n);
NTSTATUS dxgk_open_adapter_from_luid(LUID luid, D3DKMT_HANDLE *out);
/* display_open.c: opens by GDI display name (`chars` WCHARs at most, the
 * VidPn source in *source) and by device interface path (a NUL-terminated
 * copy; flags as KMT_DEVICE_PATH_* in kmtshim.h, `out` unused with
 * DXGK_PATH_NO_HANDLE), and an adapter's own path (256 WCHARs). */
#define DXGK_PATH_DEFAULT_ADAPTER 0x1u
#define DXGK_PATH_NEED_SOURCE     0x2u
#define DXGK_PATH_NO_HANDLE       0x4u
NTSTATUS dxgk_open_adapter_from_display_name(const WCHAR *name, size_t chars, D3DKMT_HANDLE *out,
                                             LUID *luid, UINT *source);
NTSTATUS dxgk_open_adapter_from_device_path(const WCHAR *path, UINT flags, UINT source,
                                            D3DKMT_HANDLE *out, LUID *luid);
NTSTATUS dxgk_adapter_device_path(D3DKMT_HANDLE h, WCHAR out[256]);
NTSTATUS dxgk_close_adapter(D3DKMT_HANDLE h);
NTSTATUS dxgk_query_adapter_info(D3DKMT_HANDLE h, KMTQUERYADAPTERINFOTYPE type,
                                 void *data, UINT size);
/* adapter_info_ext.c: the later QueryAdapterInfo types; their exact size
 * (0: not one of them), the answer, and the strings cached at start. */
UINT dxgk_qai_ext_size(KMTQUERYADAPTERINFOTYPE type);
NTSTATUS dxgk_qai_ext(struct dxgk_adapter *adapter, KMTQUERYADAPTERINFOTYPE type, void *data);
NTSTATUS dxgk_adapter_registry_info_init(struct dxgk_adapter *adapter);
NTSTATUS dxgk_query_video_memory_info(D3DKMT_QUERYVIDEOMEMORYINFO *info);
/* QueryStatistics (statistics.c) and QueryClockCalibration (clock_calibration.c). */
NTSTATUS dxgk_query_statistics(D3DKMT_QUERYSTATISTICS *stats);
NTSTATUS dxgk_query_clock_calibration(D3DKMT_QUERYCLOCKCALIBRATION *query);
void dxgk_adapter_put(struct dxgk_adapter *adapter);

/* Devices (device.c). */
NTSTATUS dxgk_create_device(D3DKMT_HANDLE adapter, D3DKMT_CREATEDEVICEFLAGS flags,
                            D3DKMT_HANDLE *out);
NTSTATUS dxgk_destroy_device(D3DKMT_HANDLE h);
/* The miniport's hResource: written under the device's list lock, and read
 * without it by DxgkCbGetHandleData (inside a DDI, under locks that rank
 * below the list lock). */
static inline HANDLE dxgk_resource_driver_handle(const struct dxgk_resource *res)
{
    return __atomic_load_n(&res->driver_resource, __ATOMIC_RELAXED);
}

static inline void dxgk_resource_set_driver_handle(struct dxgk_resource *res, HANDLE h)
{
    __atomic_store_n(&res->driver_resource, h, __ATOMIC_RELAXED);
}

static inline void dxgk_device_put(struct dxgk_device *device)
{
    kmt_object_put(&device->obj);
}

/* Looks a device up and takes its rwlock shared; NULL if not a live device.
 * Inline (with the lookup and the lock) because nearly every call starts
 * and ends here. */
static inline struct dxgk_device *dxgk_device_acquire(D3DKMT_HANDLE h)
{
    struct dxgk_device *device =
        (struct dxgk_device *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_DEVICE);

    if (!device)
        return NULL;
    kmt_rwlock_rdlock(&device->rwlock);
    if (device->destroyed) {
        /* destroyed between our lookup and the lock */
        kmt_rwlock_unlock(&device->rwlock);
        dxgk_device_put(device);
        return NULL;
    }
    return device;
}

static inline void dxgk_device_release(struct dxgk_device *device)
{
    kmt_rwlock_unlock(&device->rwlock);
    kmt_object_put(&device->obj);
}

/* Allocations and resources: created in allocation_create.c, destroyed in
 * allocation_destroy.c, reclaimed and freed in allocation_reclaim.c. */
struct dxgk_alloc_request {
    D3DKMT_HANDLE hAllocation;           /* out */
    D3DGPU_VIRTUAL_ADDRESS gpu_va;       /* out */
    const void *sysmem;
    void *private_data;                  /* caller's buffer, updated in place */
    UINT private_data_size;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID vidpn_source;
    UINT flags;                          /* D3DDDI_ALLOCATIONINFOFLAGS bits */
};

struct dxgk_create_allocation {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hResource;             /* in/out */
    D3DKMT_HANDLE hGlobalShare;          /* out */
    const void *runtime_data;
    UINT runtime_data_size;
    const void *driver_data;             /* resource-level */
    UINT driver_data_size;
    const D3DKMT_CREATESTANDARDALLOCATION *standard; /* or NULL */
    D3DKMT_CREATEALLOCATIONFLAGS flags;
    UINT count;
    struct dxgk_alloc_request *allocs;
};

NTSTATUS dxgk_create_allocation(struct dxgk_create_allocation *args);
/* An allocation this thread is creating, not yet published, for
 * DxgkCbGetHandleData inside the create and open DDIs. */
struct dxgk_allocation *dxgk_allocation_find_creating(D3DKMT_HANDLE h);
void dxgk_allocation_set_creating(struct dxgk_allocation **allocs, UINT count);
/* Unpublished objects for a create or an open (resource_open.c). */
struct dxgk_allocation *dxgk_allocation_new(struct dxgk_device *device, const struct dxgk_alloc_request *req);
struct dxgk_resource *dxgk_resource_new(struct dxgk_device *device, const struct dxgk_create_allocation *a);
/* Frees reserved, unpublished objects and gives their handles back. */
void dxgk_unreserve(struct dxgk_resource *res, struct dxgk_allocation **allocs, UINT count);
/* Counts a published allocation in its adapter's usage (QueryStatistics). */
void dxgk_allocation_account(struct dxgk_allocation *alloc);

NTSTATUS dxgk_destroy_allocation(D3DKMT_HANDLE device, D3DKMT_HANDLE resource,
                                 const D3DKMT_HANDLE *list, UINT count,
                                 D3DDDICB_DESTROYALLOCATION2FLAGS flags);
/* Destroys everything a device owns, in dxgkrnl's order (device.c calls it). */
void dxgk_device_destroy_children(struct dxgk_device *device);

static inline void dxgk_allocation_put(struct dxgk_allocation *alloc)
{
    kmt_object_put(&alloc->obj);
}

/* A live allocation of `device`, referenced; NULL otherwise. */
static inline struct dxgk_allocation *dxgk_allocation_lookup(struct dxgk_device *device, D3DKMT_HANDLE h)
{
    struct dxgk_allocation *alloc =
        (struct dxgk_allocation *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_ALLOCATION);

    if (alloc && alloc->device != device) {
        dxgk_allocation_put(alloc);
        return NULL;
    }
    return alloc;
}

/* Queued GPU work referencing an allocation (the submission path takes
 * these; reclaim and CPU locks wait for them).  A GPU reference also keeps
 * the struct itself: AssumeNotInUse reclaims the memory under queued work,
 * and the last GPU reference frees what is left. */
void dxgk_allocation_gpu_ref(struct dxgk_allocation *alloc);
void dxgk_allocation_gpu_unref(struct dxgk_allocation *alloc);
/* The miniport frees the allocations now, in one DDI call per kind; every
 * one is destroyed, unreferenced and not locked. */
void dxgk_reclaim_allocations(struct dxgk_allocation **allocs, UINT count);
/* Frees what is left of an allocation (now, or at its last GPU reference)
 * and of a resource, after the miniport freed them or never made them. */
void dxgk_allocation_free(struct dxgk_allocation *alloc);
void dxgk_resource_free(struct dxgk_resource *res);
/* Release callbacks of destroyed allocations and resources: the last
 * reference reclaims. */
void dxgk_allocation_last_ref(struct kmt_object *obj);
void dxgk_resource_last_ref(struct kmt_object *obj);
/* SynchronousDestroy: the caller waits until `pending` objects (and those
 * added) are reclaimed. */
void dxgk_reclaim_wait_init(struct dxgk_reclaim_wait *w, unsigned pending);
void dxgk_reclaim_wait_add(struct dxgk_reclaim_wait *w);
void dxgk_reclaim_wait(struct dxgk_reclaim_wait *w);

/* CPU access (lock.c). */
NTSTATUS dxgk_lock(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation, D3DDDICB_LOCKFLAGS flags,
                   UINT num_pages, const UINT *pages, void **data, D3DGPU_VIRTUAL_ADDRESS *gpuva);
NTSTATUS dxgk_unlock(D3DKMT_HANDLE device, const D3DKMT_HANDLE *allocations, UINT count);
/* Drops any CPU mapping of an allocation that is being reclaimed. */
void dxgk_allocation_unmap(struct dxgk_allocation *alloc);


/* Escape (escape.c). */
NTSTATUS dxgk_escape(const D3DKMT_ESCAPE *desc, void *data);

/* VidPn source ownership and occlusion (vidpn.c).  The state is per
 * adapter and source; two devices of the process compete for a source. */
NTSTATUS dxgk_set_vidpn_owner(D3DKMT_HANDLE device, const D3DKMT_VIDPNSOURCEOWNER_TYPE *types,
                              const D3DDDI_VIDEO_PRESENT_SOURCE_ID *sources, UINT count);
NTSTATUS dxgk_check_vidpn_exclusive(D3DKMT_HANDLE adapter, D3DDDI_VIDEO_PRESENT_SOURCE_ID source);
/* Whether any source of any adapter has an EXCLUSIVE owner. */
bool dxgk_vidpn_any_exclusive(void);
/* DestroyDevice: the device gives up every source it owns. */
void dxgk_vidpn_release_device(struct dxgk_device *device);

/* Vertical blanks, scan lines, monitor children, the current mode
 * (vblank.c; the waits: vblank_wait.c). */
/* The adapter of hAdapter (referenced) with `source` one of its sources,
 * and hDevice, when given, a device of that adapter. */
NTSTATUS dxgk_vblank_lookup(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, UINT source, struct dxgk_adapter **out);
void dxgk_vblank_init(struct dxgk_adapter *adapter);
void dxgk_vblank_fini(struct dxgk_adapter *adapter);
/* DxgkCbNotifyInterrupt(CRTC_VSYNC) of `target`. */
void dxgk_vblank_interrupt(struct dxgk_adapter *adapter, D3DDDI_VIDEO_PRESENT_TARGET_ID target);
NTSTATUS dxgk_wait_for_vblank(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, UINT source);
/* WaitForVerticalBlankEvent2: STATUS_WAIT_0 at the vblank, STATUS_WAIT_0
 * + 1 + i when events[i] (checked by the caller) was signalled first. */
NTSTATUS dxgk_wait_for_vblank_or_events(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, UINT source,
                                        const HANDLE *events, UINT count);
/* DestroyDevice: the waits that named the device end. */
void dxgk_vblank_device_gone(struct dxgk_adapter *adapter, D3DKMT_HANDLE device);
/* Records whether `source`'s monitor is connected; a disconnection ends
 * the waits on it.  True when that changed the record. */
bool dxgk_vblank_connection(struct dxgk_adapter *adapter, UINT source, bool connected);
/* Ends the waits that named the adapter handle `h`, which CloseAdapter
 * removed. */
void dxgk_vblank_adapter_closed(struct dxgk_adapter *adapter, D3DKMT_HANDLE h);
/* Process teardown: every wait on every adapter ends, none starts again. */
void dxgk_vblank_stop_all(void);
NTSTATUS dxgk_get_scan_line(D3DKMT_HANDLE adapter, UINT source, BOOLEAN *in_vblank, UINT *line);
NTSTATUS dxgk_poll_display_children(D3DKMT_HANDLE adapter, bool non_destructive, bool all_adapters);
NTSTATUS dxgk_child_connection(struct dxgk_adapter *adapter, ULONG child, bool connected);
bool dxgk_child_connected(struct dxgk_adapter *adapter, ULONG child);
/* out->VidPnSourceId in, the rest out. */
NTSTATUS dxgk_current_display_mode(struct dxgk_adapter *adapter, D3DKMT_CURRENTDISPLAYMODE *out);

/* A device's present settings: queued-present limit, overlays (present.c). */
NTSTATUS dxgk_queued_limit(D3DKMT_SETQUEUEDLIMIT *args);
/* SetQueuedLimit's present limit of a device, the default where unset. */
unsigned dxgk_device_present_limit(struct dxgk_device *device);
/* D3DKMTPresent (present_submit.c): a Blt now, or a Flip queued on its
 * source (present_flip.c). */
NTSTATUS dxgk_present(const D3DKMT_PRESENT *args);
void dxgk_flips_init(struct dxgk_adapter *adapter);
void dxgk_flips_fini(struct dxgk_adapter *adapter);
/* Queues hSource to be shown on `source` `interval` vblanks after the
 * flip queued before it (0: now); blocks while the device has `limit`
 * flips queued there.  `gone_seen` is dxgk_flip_devices_gone() read while
 * the device was acquired, and followed by a look that found its
 * `handle_gone` clear: a flip never outlives its device. */
NTSTATUS dxgk_flip_queue(struct dxgk_adapter *adapter, D3DKMT_HANDLE device, UINT source,
                         D3DKMT_HANDLE allocation, UINT interval, unsigned limit, UINT64 gone_seen);
UINT64 dxgk_flip_devices_gone(struct dxgk_adapter *adapter);
/* A Blt present reached `source`. */
void dxgk_flip_count_blt(struct dxgk_adapter *adapter, UINT source);
/* Called by dxgk_vblank_interrupt under the vblank lock: the flips of
 * `source` due at vblank `count` reach the screen. */
void dxgk_flip_vblank_locked(struct dxgk_adapter *adapter, UINT source, UINT64 count);
/* Lets the vsync interrupt go once no flip is queued (never from the
 * interrupt itself: the miniport's switch joins its thread). */
void dxgk_flip_settle(struct dxgk_adapter *adapter);
/* Called by dxgk_vblank_connection under the vblank lock: the monitor of
 * `source` went, its queued flips are cancelled. */
void dxgk_flip_unplugged_locked(struct dxgk_adapter *adapter, UINT source);
/* DestroyDevice: the device's queued flips are cancelled. */
void dxgk_flip_device_gone(struct dxgk_adapter *adapter, D3DKMT_HANDLE device);
/* Process teardown: every queue is cancelled, the interrupt let go. */
void dxgk_flip_stop(struct dxgk_adapter *adapter);
/* QueryStatistics' VidPn source counters. */
void dxgk_flip_counters(struct dxgk_adapter *adapter, UINT source,
                        D3DKMT_QUERYSTATISTICS_PROCESS_VIDPNSOURCE_INFORMATION *out);
/* The vsync interrupt's switch (vblank_wait.c): joined while anyone waits
 * for a vblank or a flip is queued. */
NTSTATUS dxgk_vblank_join(struct dxgk_adapter *adapter);
void dxgk_vblank_leave(struct dxgk_adapter *adapter);
NTSTATUS dxgk_get_overlay_state(D3DKMT_HANDLE device, D3DKMT_HANDLE overlay, BOOLEAN *enabled);

/* The process's GPU scheduling priority class (priority.c). */
NTSTATUS dxgk_set_priority_class(HANDLE process, D3DKMT_SCHEDULINGPRIORITYCLASS priority);
NTSTATUS dxgk_get_priority_class(HANDLE process, D3DKMT_SCHEDULINGPRIORITYCLASS *priority);
/* In a fork() child: a new process starts at NORMAL. */
void dxgk_priority_forget(void);

/* Execution: contexts, scheduling, sync objects (vidsch.h, sync.h). */
NTSTATUS dxgk_get_device_state(D3DKMT_GETDEVICESTATE *state);

/* Callbacks given to miniports (callbacks.c). */
void dxgk_fill_interface(struct dxgk_adapter *adapter, DXGKRNL_INTERFACE *iface);

/* Live core objects (leak checks in tests and at shutdown). */
static inline void dxgk_count_object(int delta)
{
    atomic_fetch_add_explicit(&dxgk_process.live_objects, (unsigned)delta, memory_order_relaxed);
}

#endif /* KMTSHIM_DXGKRNL_H */
