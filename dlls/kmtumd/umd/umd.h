/*
 * The core of kmtshim's UMDs for the software adapter: adapter, device,
 * one patching context, resources made of A8R8G8B8 surfaces, ColorFill
 * batched as KMT_SOFT_OP_FILL commands, Flush, Lock / Unlock.  A UMD only
 * ever talks to the kernel through the runtime's callbacks.
 *
 * How DestroyResource is done is the UMD's policy: the reference UMD
 * follows d3dumddi.h (flush, then deallocate, possibly later, the whole
 * group at once), the broken one does not.  Both are this core plus a
 * struct umd_policy.
 *
 * Batching: ColorFill writes the command, a patch-list entry and, at the
 * same time, the allocation-list entry for the surface, so the allocation
 * list always names what the unflushed batch references (the runtime's
 * checker reads it; docs/umd.md).
 */
#ifndef KMTSHIM_KMTUMD_UMD_H
#define KMTSHIM_KMTUMD_UMD_H

#include <stdbool.h>

#include "kmtshim/d3dumddi.h"
#include "kmtshim/kmtsoft.h"

#ifdef _WIN32
# define UMD_EXPORT __declspec(dllexport)
#else
# define UMD_EXPORT __attribute__((visibility("default")))
#endif

#define UMD_MAX_SURFACES 16
#define UMD_RESOURCE_MAGIC 0x444d554bu          /* "KUMD" */

/* The resource-level private data of pfnAllocateCb: what OpenResource gets back. */
typedef struct _UMD_RESOURCE_DATA {
    UINT Magic;
    UINT Surfaces;
    UINT Width;
    UINT Height;
    UINT SurfaceSize;                    /* bytes of one surface */
} UMD_RESOURCE_DATA;

struct umd_resource {
    struct umd_resource *next;
    UINT magic;
    HANDLE rt_resource;                  /* the runtime's handle, for pfnAllocateCb / pfnDeallocateCb */
    D3DKMT_HANDLE kmt_resource;
    UINT count, width, height, size;     /* size: bytes of one surface */
    D3DKMT_HANDLE allocs[UMD_MAX_SURFACES];
    bool opened;
};

struct umd_device;

struct umd_policy {
    UINT driver_version;                 /* D3DDDIARG_OPENADAPTER.DriverVersion */
    /* The resource is still on the live list; the policy takes it off. */
    HRESULT (*destroy_resource)(struct umd_device *dev, struct umd_resource *res);
    /* After a Flush's pfnRenderCb, and first thing in DestroyDevice. */
    HRESULT (*after_flush)(struct umd_device *dev);
};

struct umd_adapter {
    UINT magic;
    HANDLE rt_adapter;
    D3DDDI_ADAPTERCALLBACKS cb;
    const struct umd_policy *policy;
    KMT_SOFT_UMD_PRIVATE kmd;            /* what the KMD says about itself */
};

struct umd_device {
    UINT magic;
    struct umd_adapter *adapter;
    HANDLE rt_device;
    D3DDDI_DEVICECALLBACKS cb;
    HANDLE context;
    BYTE *cmd;
    UINT cmd_size, cmd_used;
    D3DDDI_ALLOCATIONLIST *alist;
    UINT alist_size, alist_used;
    D3DDDI_PATCHLOCATIONLIST *plist;
    UINT plist_size, plist_used;
    struct umd_resource *resources;      /* live: created or opened, not destroyed */
    struct umd_resource *deferred;       /* destroyed, deallocation pending (policy's) */
    UINT deferred_count;
};

/* OpenAdapter with a policy: what each UMD's export calls. */
HRESULT umd_open_adapter(D3DDDIARG_OPENADAPTER *args, const struct umd_policy *policy);

/* For the policies. */
bool umd_batch_references(const struct umd_device *dev, const struct umd_resource *res);
HRESULT umd_flush_batch(struct umd_device *dev);
HRESULT umd_deallocate_resource(struct umd_device *dev, const struct umd_resource *res);
HRESULT umd_deallocate_list(struct umd_device *dev, const D3DKMT_HANDLE *handles, UINT count);
void umd_unlink_resource(struct umd_device *dev, struct umd_resource *res);
void umd_resource_free(struct umd_resource *res);

#endif /* KMTSHIM_KMTUMD_UMD_H */
