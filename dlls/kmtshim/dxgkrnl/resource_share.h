/*
 * Shared resources: what resource_share.c (registration at create,
 * ShareObjects, the Wine escape) and resource_open.c (QueryResourceInfo,
 * OpenResource and their NT-handle forms) have in common.
 *
 * A shared resource is a broker object of kind KMT_BROKER_RESOURCE.  Its
 * blob describes it to an opener in any process: a header, one record per
 * allocation, then the resource's driver data, each allocation's private
 * driver data and the runtime data last (so the escape that replaces the
 * runtime data rewrites only the tail).  Its fds are the allocations'
 * exported memory, in order, for those that have one.
 */
#ifndef KMTSHIM_RESOURCE_SHARE_H
#define KMTSHIM_RESOURCE_SHARE_H

#include <stdint.h>

#include "dxgkrnl.h"
#include "share.h"

#define DXGK_SHARE_BLOB_MAGIC 0x4b4d5352u       /* "RSMK" */
#define DXGK_SHARE_BLOB_VERSION 1u
#define DXGK_SHARE_NT 0x1u                      /* made with NtSecuritySharing */

struct dxgk_share_blob {
    uint32_t magic, version;
    LUID luid;                                  /* the creator's adapter */
    uint64_t creator;                           /* dxgk_share_process_token() */
    uint32_t flags;                             /* DXGK_SHARE_* */
    uint32_t num_allocations;
    uint32_t resource_driver_size;
    uint32_t runtime_size;
};

struct dxgk_share_blob_alloc {
    uint64_t size;                              /* bytes */
    uint64_t sysmem;                            /* the creator's ExistingSysMem address, or 0 */
    uint32_t private_size;
    int32_t fd_index;                           /* into the object's fds, -1: none */
};

/* A resource's registration, owned by the local resource: the broker
 * reference it holds and the blob it was registered (or opened) with. */
struct dxgk_resource_share {
    uint64_t broker_id;
    uint64_t connection;                        /* the broker connection it is on (share.h) */
    uint32_t flags;                             /* DXGK_SHARE_* */
    pthread_mutex_t lock;                       /* blob, blob_size */
    void *blob;
    uint32_t blob_size;
};

/* This process, as creators are told apart: a process opening its own
 * ExistingSysMem resource re-creates it over the same pages. */
uint64_t dxgk_share_process_token(void);

/* A blob's parts, checked against its size; NULL parts where malformed. */
struct dxgk_share_view {
    const struct dxgk_share_blob *hdr;
    const struct dxgk_share_blob_alloc *allocs;
    const uint8_t *resource_driver_data;
    const uint8_t *alloc_data;                  /* the allocations' data, in order */
    const uint8_t *runtime;
    uint32_t total_driver_size;                 /* resource + every allocation's */
};
NTSTATUS dxgk_share_view(const void *blob, uint32_t size, struct dxgk_share_view *view);

/* CreateAllocation with CreateShared: registers a new resource (its
 * allocations created and bound) with the broker.  Sets res->share and
 * res->global_handle (0 with NtSecuritySharing). */
NTSTATUS dxgk_resource_share_register(struct dxgk_resource *res, struct dxgk_allocation **allocs,
                                      UINT count, bool nt_sharing);
/* Drops the broker reference; from dxgk_resource_free. */
void dxgk_resource_share_free(struct dxgk_resource_share *share);

/* QueryResourceInfo / OpenResource and the NT forms (resource_open.c). */
struct dxgk_open_alloc {
    D3DKMT_HANDLE hAllocation;                  /* out */
    void *private_data;                         /* the caller's buffer */
    UINT private_data_size;                     /* in: its size, out: the data's */
    D3DGPU_VIRTUAL_ADDRESS gpu_va;              /* out */
};

struct dxgk_open_resource {
    D3DKMT_HANDLE hDevice;
    UINT count;
    struct dxgk_open_alloc *allocs;
    void *runtime;
    UINT runtime_size;
    void *resource_driver;
    UINT resource_driver_size;
    void *total;
    UINT total_size;
    D3DKMT_HANDLE hResource;                    /* out */
};

struct dxgk_resource_info {
    UINT runtime_size, total_driver_size, resource_driver_size, num_allocations;
};

NTSTATUS dxgk_query_resource_global(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE global, struct dxgk_resource_info *info);
NTSTATUS dxgk_query_resource_nt(D3DKMT_HANDLE hDevice, int nt_fd, struct dxgk_resource_info *info);
NTSTATUS dxgk_open_resource_global(D3DKMT_HANDLE global, struct dxgk_open_resource *args);

/* OpenResourceFromNtHandle: the resource and the keyed mutex and sync
 * object shared with it (0 where none). */
struct dxgk_open_resource_nt {
    struct dxgk_open_resource res;
    const void *mutex_runtime;
    UINT mutex_runtime_size;                    /* in/out */
    D3DKMT_HANDLE hKeyedMutex, hSyncObject;     /* out */
};
NTSTATUS dxgk_open_resource_nt(int nt_fd, struct dxgk_open_resource_nt *args);

/* ShareObjects, OpenNtHandleFromName. */
NTSTATUS dxgk_share_objects(UINT count, const D3DKMT_HANDLE *handles, const void *attributes,
                            DWORD access, int *nt_fd);
NTSTATUS dxgk_open_nt_handle_from_name(DWORD access, const void *attributes, int *nt_fd);

/* The Wine escapes (escape.c calls these). */
NTSTATUS dxgk_update_resource_runtime(D3DKMT_HANDLE hResource, const void *data, UINT size);
NTSTATUS dxgk_set_present_rect(D3DKMT_HANDLE hwnd, const void *data, UINT size);
/* The rectangle last set for a window; false if none. */
bool dxgk_get_present_rect(D3DKMT_HANDLE hwnd, LONG rect[4]);

#endif /* KMTSHIM_RESOURCE_SHARE_H */
