/*
 * The escapes Wine defines for its D3D-over-Vulkan layers (DXVK,
 * vkd3d-proton, DXMT): UPDATE_RESOURCE_WINE replaces a resource's runtime
 * data (the layer's own description of a shared image, read back by the
 * process that opens it), SET_PRESENT_RECT_WINE records the part of a
 * window a swap chain presents to.
 */
#include <stdlib.h>
#include <string.h>

#include "resource_share.h"
#include "base/kmt_debug.h"

NTSTATUS dxgk_update_resource_runtime(D3DKMT_HANDLE hResource, const void *data, UINT size)
{
    struct dxgk_resource *res;
    struct dxgk_resource_share *share;
    NTSTATUS status = STATUS_SUCCESS;

    if (size > D3DKMT_WINE_RUNTIME_DATA_MAX || (size && !data))
        return STATUS_INVALID_PARAMETER;
    res = (struct dxgk_resource *)hmgr_lookup(&dxgk_process.handles, hResource, HMGR_TYPE_RESOURCE);
    if (!res)
        return STATUS_INVALID_PARAMETER;
    if ((share = res->share)) {
        /* the runtime data is the blob's tail: keep the rest, swap it */
        struct dxgk_share_view v;
        uint32_t head, blob_size;
        void *blob = NULL;

        pthread_mutex_lock(&share->lock);
        if (!(status = dxgk_share_view(share->blob, share->blob_size, &v))) {
            head = share->blob_size - v.hdr->runtime_size;
            blob_size = head + size;
            if (!(blob = malloc(blob_size)))
                status = STATUS_NO_MEMORY;
        }
        if (!status) {
            memcpy(blob, share->blob, head);
            if (size)
                memcpy((uint8_t *)blob + head, data, size);
            ((struct dxgk_share_blob *)blob)->runtime_size = size;
            status = dxgk_share_lost(share->connection)
                         ? STATUS_DEVICE_REMOVED
                         : dxgk_share_call_status(share->connection,
                                                  kmt_broker_set_blob(share->broker_id, blob, blob_size));
        }
        if (!status) {
            free(share->blob);
            share->blob = blob;
            share->blob_size = blob_size;
        } else {
            free(blob);
        }
        pthread_mutex_unlock(&share->lock);
    }
    kmt_object_put(&res->obj);
    return status;
}

/* Rectangles per window, a few at a time: one per swap chain. */
struct present_rect {
    D3DKMT_HANDLE hwnd;
    LONG rect[4];
};

static pthread_mutex_t rects_lock = PTHREAD_MUTEX_INITIALIZER;
static struct present_rect *rects;
static size_t rect_count, rect_cap;

NTSTATUS dxgk_set_present_rect(D3DKMT_HANDLE hwnd, const void *data, UINT size)
{
    NTSTATUS status = STATUS_SUCCESS;
    size_t i;

    if (!hwnd || !data || size != D3DKMT_WINE_PRESENT_RECT_SIZE)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&rects_lock);
    for (i = 0; i < rect_count && rects[i].hwnd != hwnd; i++)
        ;
    if (i == rect_count) {
        if (rect_count == rect_cap) {
            size_t cap = rect_cap ? rect_cap * 2 : 8;
            struct present_rect *grown = realloc(rects, cap * sizeof(*rects));

            if (!grown) {
                status = STATUS_NO_MEMORY;
                goto out;
            }
            rects = grown;
            rect_cap = cap;
        }
        rects[rect_count++].hwnd = hwnd;
    }
    memcpy(rects[i].rect, data, sizeof(rects[i].rect));
out:
    pthread_mutex_unlock(&rects_lock);
    return status;
}

bool dxgk_get_present_rect(D3DKMT_HANDLE hwnd, LONG rect[4])
{
    bool found = false;

    pthread_mutex_lock(&rects_lock);
    for (size_t i = 0; i < rect_count; i++) {
        if (rects[i].hwnd == hwnd) {
            memcpy(rect, rects[i].rect, sizeof(rects[i].rect));
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&rects_lock);
    return found;
}
