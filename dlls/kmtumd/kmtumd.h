/*
 * kmtumd: a user-mode driver (UMD) host on top of the D3DKMT thunks.
 *
 * The runtime half plays the Direct3D runtime's part towards a UMD: it hands
 * the UMD the D3DDDI_ADAPTERCALLBACKS / D3DDDI_DEVICECALLBACKS tables
 * (pfnAllocateCb, pfnDeallocateCb, pfnDeallocate2Cb, pfnRenderCb, pfnLockCb,
 * pfnUnlockCb, pfnCreateContextCb, pfnDestroyContextCb, pfnQueryAdapterInfoCb)
 * and carries each call out through D3DKMT*.  On the way it checks the
 * resource protocol of d3dumddi.h (docs/umd.md):
 *
 *   flush-before-deallocate  pfnDeallocateCb of an allocation that batched,
 *                            not yet flushed commands still reference
 *   atomic-group             part of a group of allocations created by one
 *                            pfnAllocateCb (one CreateResource) deallocated
 *                            alone, or a shared resource's allocations
 *                            deallocated through a handle list
 *   leak-at-destroy-device   resources, allocations or contexts the UMD
 *                            still held when its DestroyDevice returned
 *   unknown-object           a deallocation naming a resource or an
 *                            allocation the UMD does not own (any more)
 *
 * Each violation is reported as one line (the UMD's name, the rule, the
 * objects) and counted.  The host half loads the UMD the adapter names
 * (QueryAdapterInfo(UMDRIVERNAME)), opens the adapter through its
 * OpenAdapter export and drives CreateDevice, CreateResource, OpenResource,
 * DestroyResource, DestroyDevice and a few rendering entry points.
 *
 * The same C builds natively (the UMD is a .so loaded with dlopen) and with
 * mingw-w64 for Windows programs under Wine (LoadLibraryW).
 */
#ifndef KMTSHIM_KMTUMD_H
#define KMTSHIM_KMTUMD_H

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/d3dumddi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* HRESULT of a failed D3DKMT call: HRESULT_FROM_NT. */
#define KMTUMD_HRESULT_FROM_NT(s) ((HRESULT)((ULONG)(s) | 0x10000000u))
/* The UMD file could not be loaded, or lacks OpenAdapter (HRESULT_FROM_WIN32
 * of ERROR_MOD_NOT_FOUND / ERROR_PROC_NOT_FOUND). */
#define KMTUMD_E_MOD_NOT_FOUND  ((HRESULT)0x8007007Eu)
#define KMTUMD_E_PROC_NOT_FOUND ((HRESULT)0x8007007Fu)

#define KMTUMD_MAX_SURFACES 16

enum kmtumd_rule {
    KMTUMD_RULE_FLUSH_BEFORE_DEALLOCATE,
    KMTUMD_RULE_ATOMIC_GROUP,
    KMTUMD_RULE_LEAK_AT_DESTROY_DEVICE,
    KMTUMD_RULE_UNKNOWN_OBJECT,
    KMTUMD_RULE_COUNT
};

/* "flush-before-deallocate", ... */
const char *kmtumd_rule_name(enum kmtumd_rule rule);

/* One violation.  Handles are D3DKMT handles, 0 where they do not apply. */
struct kmtumd_violation {
    enum kmtumd_rule rule;
    D3DKMT_HANDLE device;
    D3DKMT_HANDLE resource;
    D3DKMT_HANDLE allocation;   /* the allocation concerned (leaks of a
                                   resource: its first allocation) */
    D3DKMT_HANDLE context;      /* flush rule: whose batch references it */
    UINT count;                 /* leaks: allocations the leaked resource holds */
    char line[320];             /* the reported line */
};

/* What the UMD did through the callbacks. */
struct kmtumd_stats {
    unsigned violations[KMTUMD_RULE_COUNT];
    unsigned allocate_calls;
    unsigned deallocate_calls;          /* pfnDeallocateCb and pfnDeallocate2Cb */
    unsigned render_calls;              /* successful pfnRenderCb */
    unsigned lock_calls;
    unsigned unlock_calls;
    unsigned contexts_created;
    unsigned contexts_destroyed;
    /* pfnDeallocateCb of a resource after the UMD's DestroyResource for it
     * had returned (documented as allowed) */
    unsigned deferred_deallocations;
    unsigned live_allocations;          /* tracked now, every device */
};

/* Receives every report line (violations and host errors), without '\n'. */
typedef void (*kmtumd_report_fn)(void *ctx, const char *line);

struct kmtumd_host;
struct kmtumd_device;
struct kmtumd_resource;

/* Opens the adapter `luid` (NULL: the first one), loads the UMD it names
 * for `version` and calls its OpenAdapter.  `report` NULL prints to stderr. */
HRESULT kmtumd_host_open(const LUID *luid, KMTUMDVERSION version, kmtumd_report_fn report,
                         void *report_ctx, struct kmtumd_host **out);
/* The same with a UMD already in the process (tests): `name` is used in reports. */
HRESULT kmtumd_host_open_entry(const LUID *luid, PFND3DDDI_OPENADAPTER entry, const char *name,
                               kmtumd_report_fn report, void *report_ctx, struct kmtumd_host **out);
/* Destroys what is left (devices first), calls the UMD's CloseAdapter,
 * unloads it and closes the adapter. */
void kmtumd_host_close(struct kmtumd_host *host);

const char *kmtumd_host_umd_name(const struct kmtumd_host *host);   /* file name, UTF-8 */
D3DKMT_HANDLE kmtumd_host_adapter(const struct kmtumd_host *host);
UINT kmtumd_host_driver_version(const struct kmtumd_host *host);    /* OpenAdapter's DriverVersion */
void kmtumd_host_stats(struct kmtumd_host *host, struct kmtumd_stats *out);
/* Copies up to `max` recorded violations (the first 64), returns how many
 * were recorded. */
UINT kmtumd_host_violations(struct kmtumd_host *host, struct kmtumd_violation *out, UINT max);

/* ---- devices ---------------------------------------------------------------------- */

HRESULT kmtumd_create_device(struct kmtumd_host *host, struct kmtumd_device **out);
/* DestroyResource for every resource still live, then the UMD's
 * DestroyDevice, then the leak check, then D3DKMTDestroyDevice.  `dev` is
 * gone afterwards whatever the UMD returned. */
HRESULT kmtumd_destroy_device(struct kmtumd_device *dev);
D3DKMT_HANDLE kmtumd_device_handle(const struct kmtumd_device *dev);

/* ---- resources ---------------------------------------------------------------------- */

struct kmtumd_resource_desc {
    UINT surfaces;              /* 1..KMTUMD_MAX_SURFACES, created as one group */
    UINT width;                 /* pixels, D3DDDIFMT_A8R8G8B8 */
    UINT height;
    BOOL shared;                /* D3DDDI_RESOURCEFLAGS.SharedResource */
};

HRESULT kmtumd_create_resource(struct kmtumd_device *dev, const struct kmtumd_resource_desc *desc,
                               struct kmtumd_resource **out);
/* Opens a shared resource of the same device by its share handle. */
HRESULT kmtumd_open_resource(struct kmtumd_device *dev, D3DKMT_HANDLE share, struct kmtumd_resource **out);
/* The UMD's DestroyResource.  The runtime's record stays readable with
 * kmtumd_resource_info until the device is destroyed. */
HRESULT kmtumd_destroy_resource(struct kmtumd_resource *res);

/* The UMD's ColorFill of a whole surface (batched), Flush, and a read
 * through its Lock / Unlock. */
HRESULT kmtumd_color_fill(struct kmtumd_resource *res, UINT surface, D3DCOLOR color);
HRESULT kmtumd_flush(struct kmtumd_device *dev);
HRESULT kmtumd_read(struct kmtumd_resource *res, UINT surface, void *out, UINT size);

struct kmtumd_resource_info {
    D3DKMT_HANDLE resource;     /* hKMResource, 0 before the first pfnAllocateCb */
    D3DKMT_HANDLE share;        /* global share handle of a shared resource */
    UINT count;
    D3DKMT_HANDLE allocations[KMTUMD_MAX_SURFACES];
    BOOL opened;                /* made by OpenResource */
    BOOL destroyed;             /* DestroyResource returned */
    BOOL deallocated;           /* the UMD released it with pfnDeallocateCb(hResource) */
    BOOL kernel_alive;          /* the D3DKMT resource still exists */
};
void kmtumd_resource_info(const struct kmtumd_resource *res, struct kmtumd_resource_info *out);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_KMTUMD_H */
