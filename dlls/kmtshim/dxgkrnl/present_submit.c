/*
 * D3DKMTPresent: validation, and the Blt present.
 *
 * hContext names a context (or, as Direct3D 10 passes it, a device);
 * hSource and hDestination must be allocations of its device, else
 * STATUS_INVALID_PARAMETER, as for every handle of the wrong device.  A
 * VidPnSourceId that is no source of the adapter is
 * STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE, the status the other
 * source-taking calls give here (vblank.c).  Flags: exactly one of Blt and
 * Flip; set Reserved bits are STATUS_INVALID_PARAMETER; the modes kmtshim
 * does not carry out (ColorFill, stereo, redirected, DDA, indirect, HMD,
 * sub-rectangles, broadcasts...) STATUS_NOT_SUPPORTED.  No Windows run
 * confirmed the order of these checks.
 *
 * A Blt copies SrcRect of hSource to DstRect of hDestination on the CPU,
 * in the context's order, and the call never waits for the context: on an
 * idle context (or a device) it copies at once, through the Lock path,
 * which waits for the GPU work that references either allocation.
 * Otherwise it queues a packet on the context and returns; when the
 * scheduler reaches it (the work before it completed, a GPU wait before
 * it satisfied) a thread of its own copies.  Until then both allocations
 * count as GPU-referenced, so a later Lock of the destination waits for
 * the copy.  A queued Blt the context gives up (destroyed) is dropped.
 * The surfaces' layout is the display's: 32 bits a pixel, rows of
 * the width of VidPnSourceId's current mode (KMTQAITYPE_CURRENTDISPLAYMODE);
 * the rectangles (the whole mode where not marked valid) must have one
 * size and lie in the mode and in both allocations.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "vidsch.h"

#define BYTES_PER_PIXEL 4u

/* The bits this path acts on; any other named bit is a mode it does not
 * carry out. */
#define FLAG_BLT            0x00000001u
#define FLAG_FLIP           0x00000004u
#define FLAG_DST_RECT_VALID 0x00000040u
#define FLAG_SRC_RECT_VALID 0x00000080u
#define FLAG_RESTRICT_VIDPN 0x00000100u
#define FLAG_COUNT_VALID    0x00001000u
#define FLAG_DURATION_VALID 0x08000000u
#define FLAGS_RESERVED      0xc0000000u
#define FLAGS_CARRIED_OUT   (FLAG_BLT | FLAG_FLIP | FLAG_DST_RECT_VALID | FLAG_SRC_RECT_VALID | \
                             FLAG_RESTRICT_VIDPN | FLAG_COUNT_VALID | FLAG_DURATION_VALID)

struct present_target {
    struct dxgk_context *ctx;            /* acquired, or NULL */
    struct dxgk_device *device;          /* acquired when ctx is NULL */
};

static struct dxgk_device *target_acquire(D3DKMT_HANDLE h, struct present_target *t)
{
    t->ctx = dxgk_context_acquire(h);
    t->device = t->ctx ? NULL : dxgk_device_acquire(h);
    return t->ctx ? t->ctx->device : t->device;
}

static void target_release(struct present_target *t)
{
    if (t->ctx)
        dxgk_context_release(t->ctx);
    else if (t->device)
        dxgk_device_release(t->device);
}

static NTSTATUS check_flags(const D3DKMT_PRESENT *p)
{
    UINT v = p->Flags.Value, kind = v & (FLAG_BLT | FLAG_FLIP);

    if (v & FLAGS_RESERVED)
        return STATUS_INVALID_PARAMETER;
    if (v & ~FLAGS_CARRIED_OUT)
        return STATUS_NOT_SUPPORTED;
    if (kind != FLAG_BLT && kind != FLAG_FLIP)
        return STATUS_INVALID_PARAMETER;
    if (p->BroadcastContextCount > D3DDDI_MAX_BROADCAST_CONTEXT ||
        (UINT)p->FlipInterval > D3DDDI_FLIP_INTERVAL_IMMEDIATE_ALLOW_TEARING)
        return STATUS_INVALID_PARAMETER;
    if (p->BroadcastContextCount || p->SubRectCnt)
        return STATUS_NOT_SUPPORTED;
    return STATUS_SUCCESS;
}

/* The size of an allocation of `device`; 0 if `h` is none. */
static SIZE_T allocation_size(struct dxgk_device *device, D3DKMT_HANDLE h)
{
    struct dxgk_allocation *alloc = dxgk_allocation_lookup(device, h);
    SIZE_T size;

    if (!alloc)
        return 0;
    size = alloc->size;
    dxgk_allocation_put(alloc);
    return size;
}

struct blt {
    D3DKMT_HANDLE device, src, dst;
    RECT src_rect, dst_rect;
    UINT pitch;
};

static bool rect_ok(const RECT *r, UINT width, UINT height, UINT pitch, SIZE_T size)
{
    if (r->left < 0 || r->top < 0 || r->right <= r->left || r->bottom <= r->top ||
        (UINT)r->right > width || (UINT)r->bottom > height)
        return false;
    return (UINT64)(r->bottom - 1) * pitch + (UINT64)r->right * BYTES_PER_PIXEL <= size;
}

static NTSTATUS check_blt(struct dxgk_device *device, const D3DKMT_PRESENT *p, struct blt *b)
{
    D3DKMT_CURRENTDISPLAYMODE mode = { .VidPnSourceId = p->VidPnSourceId };
    RECT whole;
    NTSTATUS status;

    if ((status = dxgk_current_display_mode(device->adapter, &mode)))
        return status;
    whole = (RECT){ 0, 0, (LONG)mode.DisplayMode.Width, (LONG)mode.DisplayMode.Height };
    b->device = device->handle;
    b->src = p->hSource;
    b->dst = p->hDestination;
    b->pitch = mode.DisplayMode.Width * BYTES_PER_PIXEL;
    b->src_rect = p->Flags.SrcRectValid ? p->SrcRect : whole;
    b->dst_rect = p->Flags.DstRectValid ? p->DstRect : whole;
    if (b->src_rect.right - b->src_rect.left != b->dst_rect.right - b->dst_rect.left ||
        b->src_rect.bottom - b->src_rect.top != b->dst_rect.bottom - b->dst_rect.top)
        return STATUS_INVALID_PARAMETER;    /* kmtshim does not stretch */
    if (!rect_ok(&b->src_rect, mode.DisplayMode.Width, mode.DisplayMode.Height, b->pitch,
                 allocation_size(device, b->src)) ||
        !rect_ok(&b->dst_rect, mode.DisplayMode.Width, mode.DisplayMode.Height, b->pitch,
                 allocation_size(device, b->dst)))
        return STATUS_INVALID_PARAMETER;
    return STATUS_SUCCESS;
}

static void copy_rows(unsigned char *dst, const unsigned char *src, const struct blt *b)
{
    UINT rows = (UINT)(b->src_rect.bottom - b->src_rect.top);
    size_t bytes = (size_t)(b->src_rect.right - b->src_rect.left) * BYTES_PER_PIXEL;
    /* bottom up where the destination lies below an overlapping source */
    bool up = dst == src && b->dst_rect.top > b->src_rect.top;

    for (UINT i = 0; i < rows; i++) {
        UINT row = up ? rows - 1 - i : i;
        size_t s = (size_t)(b->src_rect.top + row) * b->pitch + (size_t)b->src_rect.left * BYTES_PER_PIXEL;
        size_t d = (size_t)(b->dst_rect.top + row) * b->pitch + (size_t)b->dst_rect.left * BYTES_PER_PIXEL;

        memmove(dst + d, src + s, bytes);
    }
}

/* Outside the device's lock: Lock takes it itself, and waits for the GPU
 * unless `queued` (the Blt's own GPU references would hold it). */
static NTSTATUS run_blt(const struct blt *b, bool queued)
{
    D3DDDICB_LOCKFLAGS ro = { .ReadOnly = 1, .IgnoreSync = queued },
                       wo = { .WriteOnly = 1, .IgnoreSync = queued };
    D3DGPU_VIRTUAL_ADDRESS va;
    void *src, *dst;
    NTSTATUS status;

    if (b->src == b->dst)
        ro.ReadOnly = 0;                 /* one mapping, read and written */
    if ((status = dxgk_lock(b->device, b->src, ro, 0, NULL, &src, &va)))
        return status;
    if (!(status = dxgk_lock(b->device, b->dst, b->src == b->dst ? ro : wo, 0, NULL, &dst, &va))) {
        copy_rows(dst, src, b);
        dxgk_unlock(b->device, &b->dst, 1);
    }
    dxgk_unlock(b->device, &b->src, 1);
    return status;
}

/* A Blt waiting in a context's queue. */
struct queued_blt {
    struct blt b;
    struct dxgk_adapter *adapter;        /* referenced */
    UINT source;
    struct dxgk_allocation *held[2];     /* GPU-referenced until the copy is done */
};

/* The adapter goes first: once the references go a Lock may return and
 * the program tear everything down. */
static void queued_blt_free(struct queued_blt *q)
{
    dxgk_adapter_put(q->adapter);
    for (UINT i = 0; i < 2; i++)
        if (q->held[i])
            dxgk_allocation_gpu_unref(q->held[i]);
    free(q);
}

static void *queued_blt_thread(void *arg)
{
    struct queued_blt *q = arg;

    if (!run_blt(&q->b, true))
        dxgk_flip_count_blt(q->adapter, q->source);
    queued_blt_free(q);
    return NULL;
}

/* The scheduler reached the Blt.  A thread of its own copies: Lock takes
 * the device's lock, which a DestroyDevice draining this context holds. */
static void queued_blt_reached(void *arg, bool aborted)
{
    struct queued_blt *q = arg;
    pthread_attr_t attr;
    pthread_t thread;
    bool started = false;

    if (!aborted && !pthread_attr_init(&attr)) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started = !pthread_create(&thread, &attr, queued_blt_thread, q);
        pthread_attr_destroy(&attr);
    }
    if (!started)
        queued_blt_free(q);
}

/* Holds both allocations GPU-referenced; false if one is gone. */
static bool hold_allocations(struct dxgk_device *device, struct queued_blt *q)
{
    D3DKMT_HANDLE h[2] = { q->b.src, q->b.dst };

    for (UINT i = 0; i < 2; i++) {
        struct dxgk_allocation *alloc = dxgk_allocation_lookup(device, h[i]);

        if (!alloc)
            return false;
        dxgk_allocation_gpu_ref(alloc);
        dxgk_allocation_put(alloc);
        q->held[i] = alloc;
    }
    return true;
}

/* Queues the Blt behind the context's work; *queued false when the
 * context is idle and the caller copies. */
static NTSTATUS queue_blt(struct dxgk_context *ctx, const struct blt *b, UINT source, bool *queued)
{
    struct queued_blt *q = calloc(1, sizeof(*q));
    NTSTATUS status;

    *queued = false;
    if (!q)
        return STATUS_NO_MEMORY;
    q->b = *b;
    q->source = source;
    q->adapter = ctx->device->adapter;
    kmt_object_get(&q->adapter->obj);
    if (!hold_allocations(ctx->device, q))
        status = STATUS_INVALID_PARAMETER;
    else
        status = dxgk_sched_queue_cpu_work(ctx, queued_blt_reached, q, queued);
    if (status || !*queued)
        queued_blt_free(q);
    return status;
}

NTSTATUS dxgk_present(const D3DKMT_PRESENT *p)
{
    struct present_target t;
    struct dxgk_device *device = target_acquire(p->hContext, &t);
    struct dxgk_adapter *adapter;
    D3DKMT_HANDLE device_handle;
    UINT64 gone_seen;
    bool queued;
    unsigned limit;
    struct blt b;
    NTSTATUS status;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    if ((status = check_flags(p)))
        goto done;
    if (p->VidPnSourceId >= dxgk_source_count(device->adapter)) {
        status = STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE;
        goto done;
    }
    if (!allocation_size(device, p->hSource) || (p->Flags.Blt && !allocation_size(device, p->hDestination))) {
        status = STATUS_INVALID_PARAMETER;
        goto done;
    }
    if (p->Flags.Blt && (status = check_blt(device, p, &b)))
        goto done;
    if (p->Flags.Blt && t.ctx) {
        if ((status = queue_blt(t.ctx, &b, p->VidPnSourceId, &queued)) || queued)
            goto done;                   /* or queued: the scheduler runs it */
    }
    /* DestroyDevice may have removed the handle and bumped devices_gone
     * before or since we took the device's read lock (it takes the write
     * lock only then): the mark, read after gone_seen, says gone_seen
     * predates the bump, which the flip queue then sees (present_flip.c) */
    gone_seen = dxgk_flip_devices_gone(device->adapter);
    if (!p->Flags.Blt && atomic_load(&device->handle_gone)) {
        status = STATUS_INVALID_PARAMETER;
        goto done;
    }
    adapter = device->adapter;
    kmt_object_get(&adapter->obj);
    device_handle = device->handle;
    limit = dxgk_device_present_limit(device);
    target_release(&t);

    if (p->Flags.Blt) {
        if (!(status = run_blt(&b, false)))
            dxgk_flip_count_blt(adapter, p->VidPnSourceId);
    } else {
        UINT interval = p->FlipInterval == D3DDDI_FLIP_INTERVAL_IMMEDIATE_ALLOW_TEARING ? 0 : p->FlipInterval;

        status = dxgk_flip_queue(adapter, device_handle, p->VidPnSourceId, p->hSource, interval, limit, gone_seen);
    }
    dxgk_adapter_put(adapter);
    return status;

done:
    target_release(&t);
    return status;
}
