/*
 * DRM miniport: buffer objects - allocations, GEM objects, GPU virtual
 * addresses, the memory budget, copy-backed objects.
 *
 * WDDM -> DRM
 *   allocation     one GEM buffer object, made by the driver's own allocator
 *                  (the family table, drm_winsys.h).  DestroyAllocation
 *                  closes it.
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
 * GPU VA (kdrm_adapter.gpu_va): where the adapter has it every object gets
 *   an address at create, freed at destroy, and reported as the
 *   allocation's GpuVirtualAddress: i915 (with softpin, a full PPGTT and
 *   timeline fences) and xe from the adapter's allocator (drm_gpuva.c), xe
 *   binding each in the adapter's VM; amdgpu from libdrm_amdgpu's VA
 *   manager, mapped into the fd's VM.  Elsewhere it is 0.  There a legacy
 *   stream is copied into an object with a VA (drm_batch.c), so a family's
 *   submit only ever sees a GPU VA.
 */
#ifndef KMTSHIM_DRM_BO_H
#define KMTSHIM_DRM_BO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "kmtshim/d3dkmddi.h"
#include "base/kmt_list.h"

struct kdrm_adapter;
struct kdrm_submission;
struct kdrm_gem_share;

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
    struct kdrm_gem_share *share;        /* exported or imported: the handle's references */
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

/* One GEM handle of the adapter's fd that more than this process knows,
 * and the object as the family left it (every allocation over the handle
 * starts as a copy).  drm_share.c makes one at the first export or import;
 * kdrm_bo_release drops an allocation's reference. */
struct kdrm_gem_share {
    struct list entry;                   /* kdrm_adapter.shares */
    unsigned refs;                       /* allocations over the handle */
    struct kdrm_bo proto;
};

/* A copy-backed object a submission names, and which push it saw. */
struct kdrm_copy_ref {
    struct kdrm_bo *bo;                  /* referenced (kdrm_bo.copy_refs) */
    UINT64 generation;
};

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

/* drm_engine_time.c: node 0's running time (DXGKQAITYPE_KMT_NODERUNNINGTIME);
 * the parser sums the "drm-engine-<engine>: N ns" lines (every engine's
 * when `engine` is NULL), false when there is none. */
NTSTATUS kdrm_node_running_time(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q);
bool kdrm_fdinfo_engine_parse(FILE *f, const char *engine, UINT64 *ns);

/* drm_allocation.c */
NTSTATUS APIENTRY kdrm_create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args);
NTSTATUS APIENTRY kdrm_destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args);
NTSTATUS APIENTRY kdrm_open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args);
NTSTATUS APIENTRY kdrm_close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args);

/* drm_bo.c: a record for an object of `size` bytes (no GEM object yet),
 * NULL without memory; kdrm_bo_release frees the GEM object and the record
 * (the last reference of a copy-backed one). */
struct kdrm_bo *kdrm_bo_new(struct kdrm_adapter *a, UINT64 size, UINT flags);
void kdrm_bo_release(struct kdrm_adapter *a, struct kdrm_bo *bo);

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
int kdrm_dumb_import(struct kdrm_adapter *a, struct kdrm_bo *bo);

/* drm_gem.c */
void kdrm_gem_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo);   /* GEM_CLOSE */

#endif /* KMTSHIM_DRM_BO_H */
