/*
 * The runtime's objects.  What a UMD gets as a runtime handle (hAdapter,
 * hDevice, hResource) is a pointer to one of these; every callback first
 * finds the pointer among the live objects and never dereferences a handle
 * it does not know.
 *
 *   rt_adapter   one opened adapter with its loaded UMD (= kmtumd_host)
 *   rt_device    one UMD device (= kmtumd_device), owns everything below
 *   rt_resource  the runtime's resource handle (= kmtumd_resource)
 *   rt_kres      a D3DKMT resource: its allocations, in groups (one group
 *                per pfnAllocateCb), held by its creator and its openers
 *   rt_alloc     a D3DKMT allocation, in a kres or owned by the device
 *   rt_context   a context from pfnCreateContextCb, with its allocation list
 *
 * Locking: rt_registry_lock guards the list of live devices and adapters;
 * each device's lock guards its objects and is held across the D3DKMT calls
 * that change them (those never call back).  The adapter's lock guards the
 * statistics and the violation record.
 */
#ifndef KMTSHIM_KMTUMD_RUNTIME_H
#define KMTSHIM_KMTUMD_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "kmtumd.h"
#include "portable.h"

#define RT_MAX_VIOLATIONS 64
#define RT_MAX_PRIVATE_DATA (128u * 1024u)

struct rt_device;

struct rt_adapter {
    struct rt_adapter *next;             /* registry */
    D3DKMT_HANDLE hadapter;
    char umd_name[260];                  /* UTF-8, for reports */
    void *module;                        /* NULL for kmtumd_host_open_entry */
    HANDLE umd_adapter;                  /* OpenAdapter's hAdapter out */
    D3DDDI_ADAPTERFUNCS funcs;
    UINT driver_version;
    bool opened;                         /* OpenAdapter succeeded */
    kmtumd_report_fn report;
    void *report_ctx;
    kmtumd_lock lock;                    /* stats, violations */
    struct kmtumd_stats stats;
    struct kmtumd_violation violations[RT_MAX_VIOLATIONS];
    UINT nviolations;
    struct rt_device *devices;           /* under rt_registry_lock */
};

struct rt_kres;

struct rt_alloc {
    struct rt_alloc *next;
    D3DKMT_HANDLE handle;
    struct rt_kres *kres;                /* NULL: owned by the device */
    UINT group;                          /* which pfnAllocateCb made it */
    void *priv;                          /* per-allocation private data, for opens */
    UINT priv_size;
};

struct rt_kres {
    struct rt_kres *next;
    D3DKMT_HANDLE handle;
    D3DKMT_HANDLE share;                 /* global share handle, or 0 */
    bool shared;
    UINT holders;                        /* rt_resources holding it */
    UINT groups;                         /* pfnAllocateCb calls that added to it */
    void *priv;                          /* resource-level private data, for opens */
    UINT priv_size;
    struct rt_alloc *allocs;
};

struct rt_resource {
    struct rt_resource *next;
    struct rt_device *dev;
    HANDLE umd_resource;                 /* CreateResource / OpenResource hResource out */
    struct rt_kres *kres;                /* held, or NULL */
    D3DDDI_RESOURCEFLAGS flags;
    UINT surfaces, width, height;
    bool opened;
    bool live;                           /* between Create/OpenResource and DestroyResource */
    bool destroyed;                      /* DestroyResource returned */
    bool released;                       /* pfnDeallocateCb(hResource) */
    /* what the host last saw, kept after release for kmtumd_resource_info */
    D3DKMT_HANDLE last_handle, last_share;
    UINT last_count;
    D3DKMT_HANDLE last_allocs[KMTUMD_MAX_SURFACES];
};

struct rt_context {
    struct rt_context *next;
    D3DKMT_HANDLE handle;
    D3DDDI_ALLOCATIONLIST *list;         /* the live allocation list (see callbacks.c) */
    UINT list_size;
};

struct rt_device {
    struct rt_device *next;              /* adapter->devices */
    struct rt_adapter *adapter;
    D3DKMT_HANDLE hdevice;
    HANDLE umd_device;
    D3DDDI_DEVICEFUNCS funcs;
    kmtumd_lock lock;
    struct rt_resource *resources;       /* every one made, freed with the device */
    struct rt_kres *kres;
    struct rt_alloc *standalone;
    struct rt_context *contexts;
};

extern kmtumd_lock rt_registry_lock;
extern struct rt_adapter *rt_adapters;   /* under rt_registry_lock */

/* ---- objects.c ---------------------------------------------------------------------- */

/* The live device / adapter behind a runtime handle, or NULL. */
struct rt_device *rt_device_from_handle(HANDLE h);
struct rt_adapter *rt_adapter_from_handle(HANDLE h);
/* Under dev->lock. */
struct rt_resource *rt_resource_find(struct rt_device *dev, HANDLE h);
struct rt_alloc *rt_alloc_find(struct rt_device *dev, D3DKMT_HANDLE h);
struct rt_context *rt_context_find(struct rt_device *dev, HANDLE h);
struct rt_kres *rt_kres_by_share(struct rt_device *dev, D3DKMT_HANDLE share);
void rt_alloc_free(struct rt_alloc *a);
/* Unlinks and frees every allocation of `kres` / the kres itself. */
void rt_kres_free(struct rt_device *dev, struct rt_kres *kres);
/* Drops `count` handles from the device's records (after a successful destroy). */
void rt_forget_allocations(struct rt_device *dev, const D3DKMT_HANDLE *handles, UINT count);
UINT rt_kres_count(const struct rt_kres *kres);
/* Copies what the host may ask about later into res->last_*. */
void rt_resource_snapshot(struct rt_resource *res);
void rt_device_free_objects(struct rt_device *dev);

void rt_stat_add(struct rt_adapter *a, unsigned *counter, int delta);
HRESULT rt_hresult(NTSTATUS status);

/* ---- callbacks.c ---------------------------------------------------------------------- */

extern const D3DDDI_DEVICECALLBACKS rt_device_callbacks;
extern const D3DDDI_ADAPTERCALLBACKS rt_adapter_callbacks;

/* ---- checker.c ---------------------------------------------------------------------------- */

/* Reports a violation (a line and a record). */
void rt_violation(struct rt_device *dev, const struct kmtumd_violation *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports a host-side problem (no rule). */
void rt_report(struct rt_adapter *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Before a deallocation of `handles`: unflushed references (flush rule). */
void rt_check_flushed(struct rt_device *dev, const char *call, D3DKMT_HANDLE resource,
                      const D3DKMT_HANDLE *handles, UINT count);
/* Before a deallocation through a handle list: whole groups, no shared
 * allocation, every handle known. */
void rt_check_list(struct rt_device *dev, const char *call, const D3DKMT_HANDLE *handles, UINT count);
/* After the UMD's DestroyDevice: whatever it still holds. */
void rt_check_leaks(struct rt_device *dev);

#endif /* KMTSHIM_KMTUMD_RUNTIME_H */
