/*
 * Shared resources, the creator's side: registering a CreateShared
 * resource with the session broker (its description and its allocations'
 * exported memory), the reference its local resource holds, ShareObjects
 * (NT handles naming a resource, its keyed mutex and sync object, or a sync
 * object alone) and the names of NT objects.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resource_share.h"
#include "ddi.h"
#include "base/kmt_debug.h"
#include "base/user_memory.h"

uint64_t dxgk_share_process_token(void)
{
    /* the pid tells processes apart; a process made by fork() gets a new one */
    return (uint64_t)getpid();
}

NTSTATUS dxgk_share_view(const void *blob, uint32_t size, struct dxgk_share_view *v)
{
    const struct dxgk_share_blob *hdr = blob;
    uint64_t need, alloc_bytes = 0;

    memset(v, 0, sizeof(*v));
    if (!blob || size < sizeof(*hdr) || hdr->magic != DXGK_SHARE_BLOB_MAGIC ||
        hdr->version != DXGK_SHARE_BLOB_VERSION || !hdr->num_allocations ||
        hdr->num_allocations > D3DKMT_CREATEALLOCATION_MAX)
        return STATUS_INVALID_PARAMETER;
    need = sizeof(*hdr) + (uint64_t)hdr->num_allocations * sizeof(struct dxgk_share_blob_alloc);
    if (need > size)
        return STATUS_INVALID_PARAMETER;
    v->allocs = (const struct dxgk_share_blob_alloc *)(hdr + 1);
    for (uint32_t i = 0; i < hdr->num_allocations; i++)
        alloc_bytes += v->allocs[i].private_size;
    if (need + hdr->resource_driver_size + alloc_bytes + hdr->runtime_size != size ||
        hdr->resource_driver_size + alloc_bytes > UINT32_MAX)
        return STATUS_INVALID_PARAMETER;
    v->hdr = hdr;
    v->resource_driver_data = (const uint8_t *)blob + need;
    v->alloc_data = v->resource_driver_data + hdr->resource_driver_size;
    v->runtime = v->alloc_data + alloc_bytes;
    v->total_driver_size = (uint32_t)(hdr->resource_driver_size + alloc_bytes);
    return STATUS_SUCCESS;
}

static struct dxgk_resource_share *share_new(uint64_t id, uint64_t connection, uint32_t flags, void *blob,
                                             uint32_t blob_size)
{
    struct dxgk_resource_share *share = calloc(1, sizeof(*share));

    if (!share)
        return NULL;
    share->broker_id = id;
    share->connection = connection;
    share->flags = flags;
    share->blob = blob;
    share->blob_size = blob_size;
    pthread_mutex_init(&share->lock, NULL);
    return share;
}

void dxgk_resource_share_free(struct dxgk_resource_share *share)
{
    NTSTATUS status;

    /* a reference of an ended connection went with it */
    if (share->broker_id && !dxgk_share_lost(share->connection) && (status = kmt_broker_release(share->broker_id)))
        WARN_(dxgk, "broker reference %#llx: %s\n", (unsigned long long)share->broker_id,
              kmt_debugstr_status(status));
    pthread_mutex_destroy(&share->lock);
    free(share->blob);
    free(share);
}

/* The blob of a new shared resource, and the fds of its exportable
 * allocations (memory the miniport cannot hand out has none: it still
 * opens in this process). */
static NTSTATUS build(struct dxgk_resource *res, struct dxgk_allocation **allocs, UINT count, uint32_t flags,
                      void **out, uint32_t *out_size, int *fds, unsigned *fd_count)
{
    struct dxgk_adapter *adapter = res->device->adapter;
    struct dxgk_share_blob *hdr;
    struct dxgk_share_blob_alloc *rec;
    uint64_t size = sizeof(*hdr) + (uint64_t)count * sizeof(*rec) + res->driver_data_size + res->runtime_data_size;
    uint8_t *p;

    for (UINT i = 0; i < count; i++)
        size += allocs[i]->private_data_size;
    if (size > KMT_BROKER_MAX_BLOB)
        return STATUS_INVALID_PARAMETER;
    if (!(hdr = calloc(1, size)))
        return STATUS_NO_MEMORY;
    *hdr = (struct dxgk_share_blob){
        .magic = DXGK_SHARE_BLOB_MAGIC,
        .version = DXGK_SHARE_BLOB_VERSION,
        .luid = adapter->luid,
        .creator = dxgk_share_process_token(),
        .flags = flags,
        .num_allocations = count,
        .resource_driver_size = res->driver_data_size,
        .runtime_size = res->runtime_data_size,
    };
    rec = (struct dxgk_share_blob_alloc *)(hdr + 1);
    p = (uint8_t *)(rec + count);
    if (res->driver_data_size)
        memcpy(p, res->driver_data, res->driver_data_size);
    p += res->driver_data_size;
    *fd_count = 0;
    for (UINT i = 0; i < count; i++) {
        NTSTATUS status;
        int fd = -1;

        rec[i] = (struct dxgk_share_blob_alloc){
            .size = allocs[i]->size,
            .sysmem = (uint64_t)(uintptr_t)allocs[i]->sysmem,
            .private_size = allocs[i]->private_data_size,
            .fd_index = -1,
        };
        if (allocs[i]->private_data_size)
            memcpy(p, allocs[i]->private_data, allocs[i]->private_data_size);
        p += allocs[i]->private_data_size;
        if (*fd_count == KMT_BROKER_MAX_FDS)
            continue;                   /* past what one object carries: this process only */
        status = dxgk_ddi_export_allocation(adapter, allocs[i]->driver_allocation, &fd);
        if (status == STATUS_NOT_SUPPORTED)
            continue;
        if (status) {
            for (unsigned j = 0; j < *fd_count; j++)
                close(fds[j]);
            free(hdr);
            return status;
        }
        rec[i].fd_index = (int32_t)*fd_count;
        fds[(*fd_count)++] = fd;
    }
    if (res->runtime_data_size)
        memcpy(p, res->runtime_data, res->runtime_data_size);
    *out = hdr;
    *out_size = (uint32_t)size;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_resource_share_register(struct dxgk_resource *res, struct dxgk_allocation **allocs,
                                      UINT count, bool nt_sharing)
{
    uint32_t flags = nt_sharing ? DXGK_SHARE_NT : 0, blob_size;
    int fds[KMT_BROKER_MAX_FDS];
    unsigned fd_count;
    struct kmt_broker_create c;
    D3DKMT_HANDLE global = 0;
    uint64_t id = 0;
    NTSTATUS status;
    void *blob;

    if ((status = build(res, allocs, count, flags, &blob, &blob_size, fds, &fd_count)))
        return status;
    c = (struct kmt_broker_create){
        .kind = KMT_BROKER_RESOURCE,
        .global = !nt_sharing,
        .blob = blob,
        .blob_size = blob_size,
        .fds = fds,
        .fd_count = fd_count,
        .holder_offset = -1,
    };
    status = kmt_broker_create(&c, &id, &global);
    for (unsigned i = 0; i < fd_count; i++)
        close(fds[i]);
    if (status) {
        free(blob);
        return status;
    }
    if (!(res->share = share_new(id, kmt_broker_call_connection(), flags, blob, blob_size))) {
        kmt_broker_release(id);
        free(blob);
        return STATUS_NO_MEMORY;
    }
    res->global_handle = nt_sharing ? 0 : global;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_resource_share_id(D3DKMT_HANDLE h, uint64_t *broker_id, uint64_t *connection)
{
    struct dxgk_resource *res =
        (struct dxgk_resource *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_RESOURCE);
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (!res)
        return STATUS_INVALID_PARAMETER;
    if (res->share && (res->share->flags & DXGK_SHARE_NT) && !res->destroying) {
        *broker_id = res->share->broker_id;
        *connection = res->share->connection;
        status = dxgk_share_lost(res->share->connection) ? STATUS_DEVICE_REMOVED : STATUS_SUCCESS;
    }
    kmt_object_put(&res->obj);
    return status;
}

/* UTF-16 to UTF-8; false for an unpaired surrogate or too long a name. */
static bool utf16_to_utf8(const WCHAR *in, size_t n, char *out, size_t size)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t c = in[i];
        char buf[4];
        size_t len;

        if (c >= 0xd800 && c < 0xdc00) {
            if (i + 1 >= n || in[i + 1] < 0xdc00 || in[i + 1] >= 0xe000)
                return false;
            c = 0x10000 + ((c - 0xd800) << 10) + (in[++i] - 0xdc00);
        } else if (c >= 0xdc00 && c < 0xe000) {
            return false;
        }
        if (c < 0x80) {
            buf[0] = (char)c;
            len = 1;
        } else if (c < 0x800) {
            buf[0] = (char)(0xc0 | (c >> 6));
            buf[1] = (char)(0x80 | (c & 0x3f));
            len = 2;
        } else if (c < 0x10000) {
            buf[0] = (char)(0xe0 | (c >> 12));
            buf[1] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[2] = (char)(0x80 | (c & 0x3f));
            len = 3;
        } else {
            buf[0] = (char)(0xf0 | (c >> 18));
            buf[1] = (char)(0x80 | ((c >> 12) & 0x3f));
            buf[2] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[3] = (char)(0x80 | (c & 0x3f));
            len = 4;
        }
        if (o + len + 1 > size)
            return false;
        memcpy(out + o, buf, len);
        o += len;
    }
    out[o] = 0;
    return true;
}

NTSTATUS dxgk_nt_name(const void *object_attributes, char *name, size_t size, const char **out)
{
    OBJECT_ATTRIBUTES attrs;
    UNICODE_STRING us;
    WCHAR *chars;

    *out = NULL;
    if (!object_attributes)
        return STATUS_SUCCESS;
    if (!kmt_user_copy_in(&attrs, object_attributes, sizeof(attrs)))
        return STATUS_INVALID_PARAMETER;
    if (attrs.Length != sizeof(attrs))
        return STATUS_INVALID_PARAMETER;
    if (!attrs.ObjectName)
        return STATUS_SUCCESS;
    if (!kmt_user_copy_in(&us, attrs.ObjectName, sizeof(us)))
        return STATUS_INVALID_PARAMETER;
    if ((us.Length & 1) || us.Length > us.MaximumLength || (us.Length && !us.Buffer))
        return STATUS_INVALID_PARAMETER;
    if (!us.Length)
        return STATUS_SUCCESS;
    if (us.Length / 2 >= KMT_BROKER_MAX_NAME)
        return STATUS_NAME_TOO_LONG;
    if (!(chars = malloc(us.Length)))
        return STATUS_NO_MEMORY;
    if (!kmt_user_copy_in(chars, us.Buffer, us.Length)) {
        free(chars);
        return STATUS_INVALID_PARAMETER;
    }
    if (!utf16_to_utf8(chars, us.Length / 2, name, size < KMT_BROKER_MAX_NAME ? size : KMT_BROKER_MAX_NAME)) {
        free(chars);
        return STATUS_NAME_TOO_LONG;
    }
    free(chars);
    *out = name;
    return STATUS_SUCCESS;
}

/* Windows' combinations: one NT-shareable resource or sync object, or a
 * resource with its keyed mutex and sync object, in that order. */
static NTSTATUS share_ids(UINT count, const D3DKMT_HANDLE *handles, uint64_t *ids, uint64_t *connections)
{
    NTSTATUS status;

    switch (count) {
    case 1:
        if ((status = dxgk_resource_share_id(handles[0], &ids[0], &connections[0])) == STATUS_INVALID_PARAMETER)
            status = dxgk_syncobj_share_id(handles[0], &ids[0], &connections[0]);
        return status;
    case 3:
        if ((status = dxgk_resource_share_id(handles[0], &ids[0], &connections[0])) ||
            (status = dxgk_keyed_mutex_share_id(handles[1], &ids[1], &connections[1])))
            return status;
        return dxgk_syncobj_share_id(handles[2], &ids[2], &connections[2]);
    default:
        return STATUS_INVALID_PARAMETER;
    }
}

NTSTATUS dxgk_share_objects(UINT count, const D3DKMT_HANDLE *handles, const void *attributes,
                            DWORD access, int *nt_fd)
{
    uint64_t ids[KMT_BROKER_MAX_NT_OBJECTS], connections[KMT_BROKER_MAX_NT_OBJECTS];
    char buf[KMT_BROKER_MAX_NAME];
    const char *name;
    NTSTATUS status, shared;

    if ((status = share_ids(count, handles, ids, connections)) ||
        (status = dxgk_nt_name(attributes, buf, sizeof(buf), &name)))
        return status;
    shared = kmt_broker_share_nt(ids, count, name, access, nt_fd);
    status = shared;
    for (UINT i = 0; i < count; i++)
        status = dxgk_share_call_status(connections[i], status);
    if (status == STATUS_DEVICE_REMOVED) {
        WARN_(dxgk, "ShareObjects: the broker connection of the objects ended\n");
        if (shared == STATUS_SUCCESS)
            close(*nt_fd);               /* a new broker's, naming what the old one's ids alias */
    }
    return status;
}

NTSTATUS dxgk_open_nt_handle_from_name(DWORD access, const void *attributes, int *nt_fd)
{
    char buf[KMT_BROKER_MAX_NAME];
    const char *name;
    NTSTATUS status;

    if (!attributes)
        return STATUS_INVALID_PARAMETER;
    if ((status = dxgk_nt_name(attributes, buf, sizeof(buf), &name)))
        return status;
    if (!name)
        return STATUS_INVALID_PARAMETER;
    return kmt_broker_open_name(name, KMT_BROKER_RESOURCE, access, nt_fd);
}
