/*
 * Helpers of the DRM miniport tests.  These tests run wherever DRM devices
 * exist: in the QEMU lane (virtio_gpu + vgem, scripts/qemu-drm-lane) and,
 * unchanged, on a machine with a real GPU.  They never assume a device:
 * they look at what the kernel has (/dev/dri, sysfs, the driver's own
 * ioctls) and check the miniport against that.  KMTSHIM_DRM_EXPECT (a
 * comma-separated list of kernel driver names) makes a missing driver a
 * failure; the lane sets it to "virtio_gpu,vgem".
 */
#ifndef KMTSHIM_DRM_TEST_H
#define KMTSHIM_DRM_TEST_H

#include <stdbool.h>

#include "test_util.h"
#include "kmtshim/kmtdrm.h"

#define DRM_TEST_MAX 16

struct drm_test_adapter {
    D3DKMT_HANDLE handle;
    LUID luid;
    KMT_ADAPTER_DESCRIPTION desc;
    KMT_DRM_UMD_PRIVATE umd;
    UINT sources;                        /* NumOfSources: its KMS outputs */
};

/* Opens every adapter of the "drm" miniport; returns how many. */
unsigned drm_test_adapters(struct drm_test_adapter *out, unsigned max);
/* The adapters that can allocate (a known driver family). */
unsigned drm_test_allocating_adapters(struct drm_test_adapter *out, unsigned max);
/* Selects the "drm" miniport for this case and opens the adapters that can
 * allocate, at most DRM_TEST_MAX: the start of most lane tests. */
unsigned drm_test_use_allocating(struct drm_test_adapter *out);
/* Fails the test unless every driver named in KMTSHIM_DRM_EXPECT is present. */
void drm_test_check_expected(const struct drm_test_adapter *a, unsigned n);
/* The render nodes the kernel has, counted from /dev/dri. */
unsigned drm_test_count_render_nodes(void);
/* The threads of this process named `name` (their comm), alive or not
 * yet reaped. */
unsigned drm_test_threads_named(const char *name);

D3DKMT_HANDLE drm_test_create_device(D3DKMT_HANDLE adapter);
void drm_test_destroy_device(D3DKMT_HANDLE device);

KMT_DRM_ALLOCATION_DESC drm_test_desc(UINT64 size, UINT flags);
/* Creates `count` allocations of `size` bytes (a resource when res != NULL);
 * descs (optional) receive the driver's answers. */
NTSTATUS drm_test_create(D3DKMT_HANDLE device, UINT count, UINT64 size, D3DKMT_HANDLE *allocs,
                         D3DKMT_HANDLE *res, KMT_DRM_ALLOCATION_DESC *descs);
/* A standard existing-heap allocation over `mem`. */
NTSTATUS drm_test_create_sysmem(D3DKMT_HANDLE device, void *mem, SIZE_T size, D3DKMT_HANDLE *alloc);
NTSTATUS drm_test_destroy(D3DKMT_HANDLE device, const D3DKMT_HANDLE *allocs, UINT count);
NTSTATUS drm_test_destroy_resource(D3DKMT_HANDLE device, D3DKMT_HANDLE res);
NTSTATUS drm_test_lock(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, UINT flags, void **data);
NTSTATUS drm_test_unlock(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc);

KMT_DRM_STATS drm_test_stats(D3DKMT_HANDLE adapter);
/* The adapter holds no GEM object, mapping or device binding. */
void drm_test_assert_no_buffers(D3DKMT_HANDLE adapter);
KMT_DRM_ALLOCATION_INFO drm_test_query(D3DKMT_HANDLE adapter, D3DKMT_HANDLE alloc);
NTSTATUS drm_test_set_fault(D3DKMT_HANDLE adapter, const char *call, UINT nth, INT err);

/* Execution (test_drm_exec.c).  QUERY_FENCE hands the fence's syncobj out
 * (status returned: INVALID_PARAMETER for a memory-only fence). */
NTSTATUS drm_test_query_fence(D3DKMT_HANDLE adapter, D3DKMT_HANDLE fence, KMT_DRM_FENCE_INFO *info);
/* QUERY_FENCE that must succeed with a syncobj. */
KMT_DRM_FENCE_INFO drm_test_export_fence(D3DKMT_HANDLE adapter, D3DKMT_HANDLE fence);
/* An empty KMT_DRM_SUBMIT, and SubmitCommand of `length` bytes at `commands`
 * on one context with it (NULL: no private data). */
KMT_DRM_SUBMIT drm_test_submit_desc(void);
NTSTATUS drm_test_submit(D3DKMT_HANDLE context, D3DGPU_VIRTUAL_ADDRESS commands, UINT length, KMT_DRM_SUBMIT *priv);
KMT_DRM_CONTEXT_INFO drm_test_query_context(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, D3DKMT_HANDLE context);
/* What the kernel says: a timeline's value (SYNCOBJ_QUERY), whether the
 * adapter's virtio_gpu host runs 3D (VIRTGPU_GETPARAM), whether the kernel
 * has SYNCOBJ_EVENTFD (a registration on a syncobj of our own). */
UINT64 drm_test_timeline_value(int fd, UINT handle);
bool drm_test_virgl(const struct drm_test_adapter *a);
bool drm_test_kernel_has_eventfd(int fd);
/* errno of a SYNCOBJ_DESTROY of `handle` (0: it existed, now destroyed) */
int drm_test_syncobj_destroy_errno(int fd, UINT handle);

/* Allocations with GPU VAs and submission through them (the exec tests). */
struct drm_test_alloc {
    D3DKMT_HANDLE handle;
    D3DGPU_VIRTUAL_ADDRESS va;
    UINT64 size;                         /* the driver's AllocatedSize */
    UINT32 gem;
};

/* CreateAllocation2 of one allocation of `size` bytes with KMT_DRM_ALLOCATION_*
 * `flags`; `out` gets its handle, GPU VA, allocated size and GEM handle. */
NTSTATUS drm_test_create2(D3DKMT_HANDLE device, UINT64 size, UINT flags, struct drm_test_alloc *out);
/* Two threads each create `per_thread` allocations of `size` bytes on
 * `device` at once, every other one DEVICE_LOCAL (each must succeed); the
 * records land in all[0 .. 2 * per_thread).  destroy_all destroys them. */
void drm_test_create_from_two_threads(D3DKMT_HANDLE device, UINT64 size, UINT per_thread, struct drm_test_alloc *all);
void drm_test_destroy_all(D3DKMT_HANDLE device, struct drm_test_alloc *all, UINT count);
/* A device and a virtual context on `adapter`; `stream` written into an
 * allocation and submitted at its GPU VA while the DRM call `call` is armed
 * to fail with ENOMEM: the device must be DMA-faulted.  Then it is destroyed. */
void drm_test_failed_submit_faults(D3DKMT_HANDLE adapter, const void *stream, UINT bytes, const char *call);
/* A legacy Render of the `length` bytes the caller wrote at
 * cc->pCommandBuffer, naming `written` (0: nothing) as written in the
 * allocation list (must succeed); cc then points at the new buffers. */
void drm_test_render(D3DKMT_HANDLE ctx, D3DKMT_CREATECONTEXT *cc, UINT length, D3DKMT_HANDLE written);
/* Lock, copy `bytes` of `data` to `offset`, Unlock (each must succeed). */
void drm_test_write(D3DKMT_HANDLE device, const struct drm_test_alloc *a, UINT offset, const void *data, UINT bytes);
/* Lock, read the dword at `offset`, Unlock (each must succeed). */
UINT32 drm_test_read_u32(D3DKMT_HANDLE device, const struct drm_test_alloc *a, UINT offset);
/* Each VA is non-zero and a multiple of `align`, and no two ranges overlap,
 * each `size` bytes long (0: its own allocated size). */
void drm_test_assert_disjoint(const struct drm_test_alloc *a, UINT n, UINT64 size, UINT64 align);
/* A GPU signal of `fence` to `value` on `context`, and the CPU's wait for it. */
void drm_test_signal_and_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE context, D3DKMT_HANDLE fence, UINT64 value);
/* drm_test_submit, which must succeed, then drm_test_signal_and_wait. */
void drm_test_run_and_wait(D3DKMT_HANDLE device, D3DKMT_HANDLE context, D3DGPU_VIRTUAL_ADDRESS commands,
                           UINT length, KMT_DRM_SUBMIT *priv, D3DKMT_HANDLE fence, UINT64 value);
/* The device faulted: a wait for UINT64_MAX on `fence` returns and its
 * execution state is `state`. */
void drm_test_expect_fault(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, D3DKMT_DEVICEEXECUTION_STATE state);
/* The same as a DMA page fault that GetDeviceState places at `va`. */
void drm_test_expect_page_fault(D3DKMT_HANDLE device, D3DKMT_HANDLE fence, D3DGPU_VIRTUAL_ADDRESS va);
/* On a new device and context, a stream of `length` bytes at `va` (past the
 * VA of a fresh 4 KiB allocation when `in_alloc`) never reaches the kernel:
 * a page fault there, one fault on the context, *kernel_runs still 0. */
void drm_test_stream_page_faults(D3DKMT_HANDLE adapter, bool in_alloc, UINT64 va, UINT length,
                                 const unsigned *kernel_runs);
/* Writes a store of two dwords, v0 and v1, at `dst` as the family's GPU
 * runs it; returns the stream's length in dwords. */
typedef UINT (*drm_test_store_fn)(UINT32 *stream, UINT64 dst, UINT32 v0, UINT32 v1);
/* On a GPU-VA family (xe, amdgpu): a new device and legacy context, and two
 * Renders of `store`'s stream.  Each runs from a copy in an object of the
 * family's own and stores its dwords; the copy is kept until its context
 * completed it and freed at the next submission (*live_objects: the
 * kernel's objects), the last one goes with its context, *faults stays 0. */
void drm_test_legacy_copies(D3DKMT_HANDLE adapter, drm_test_store_fn store, const unsigned *live_objects,
                            const unsigned *faults);
/* The miniport's end of a test: fault injection off, no buffers (with
 * `idle`, no context or submission either), kmt_test_shutdown_no_leaks. */
void drm_test_finish(D3DKMT_HANDLE adapter, bool idle);

/* The kernel's view.  A closed GEM handle makes a second GEM_CLOSE fail
 * with EINVAL; returns that errno (0 if the close succeeded: it was open). */
int drm_test_gem_close_errno(int fd, UINT handle);
/* Maps a GEM object through the driver's own ioctls, as the miniport's
 * families do (dumb and virtio_gpu families); NULL if the family is not
 * one the test knows how to map. */
void *drm_test_raw_map(const struct drm_test_adapter *a, int fd, UINT handle, UINT64 size);
/* Protection of the mapping holding `p` in /proc/self/maps ("rw-s"), or
 * "" when nothing is mapped there. */
void drm_test_maps_perms(const void *p, char perms[8]);

#endif
