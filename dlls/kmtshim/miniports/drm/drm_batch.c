/*
 * DRM miniport: legacy command buffers on adapters with GPU VA.
 *
 * A legacy (Render) submission's stream is CPU memory, but amdgpu, xe and
 * i915 (softpin) run command buffers only at GPU virtual addresses.  So
 * kdrm_batch_submit, the one way drm_submit.c hands a job to the family,
 * copies such a stream into an object of the family's own (shaped by
 * kdrm_family.batch: the object's flags, a dword after the stream, the
 * padding), which the family's create() gives a VA, and passes the family
 * that object's address as a virtual submission's.  The copy is kept on the
 * adapter until its context completed the submission (the ring point in
 * the context's progress block), and freed by a later submission, at the
 * context's destroy (drm_context.c), or at the adapter's stop
 * (drm_driver.c).  On i915 an early close would hand the VA to the next
 * object, and EXECBUFFER2 softpinning that one in the same context would
 * block until this batch retired.  amdgpu would defer an early unmap's
 * page-table clear behind the VM's submissions (amdgpu_vm_update_range);
 * keeping the copy also keeps its VA range from being handed out again.
 *
 * `batch_lock` is taken before exec.lock (to read a context's progress),
 * never under it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"

void kdrm_batches_init(struct kdrm_adapter *a)
{
    pthread_mutex_init(&a->batch_lock, NULL);
    list_init(&a->batches);
}

/* A legacy command buffer copied into an object of the family's own. */
struct kdrm_batch {
    struct kdrm_bo bo;
    const struct kdrm_context *ctx;
    UINT64 point;                        /* the ring point that completes it */
    UINT size;                           /* the stream with its end and padding: what the GPU runs */
    struct list entry;                   /* kdrm_adapter.batches */
};

static void batch_free(struct kdrm_adapter *a, struct kdrm_batch *b)
{
    a->family->destroy(a, &b->bo);
    free(b);
}

/* The stream, the family's end dword after it, its padding dwords up to a
 * multiple of pad_to.  A stream is whole dwords; an empty one only where an
 * end dword makes it a batch. */
static int batch_copy(struct kdrm_adapter *a, const struct kdrm_context *c, const struct kdrm_job *job,
                      struct kdrm_batch **out)
{
    const struct kdrm_batch_shape *shape = &a->family->batch;
    UINT64 size = (UINT64)job->size + (shape->end ? 4 : 0);
    struct kdrm_batch *b;
    void *p;
    int err;

    if (job->size % 4 || (!job->size && !shape->end) || size + shape->pad_to > UINT32_MAX)
        return -EINVAL;
    if (shape->pad_to)
        size = (size + shape->pad_to - 1) / shape->pad_to * shape->pad_to;
    if (!(b = calloc(1, sizeof(*b))))
        return -ENOMEM;
    b->size = (UINT)size;
    b->bo.magic = KDRM_BO_MAGIC;
    b->bo.adapter = a;
    b->bo.size = (size + a->page_size - 1) & ~(UINT64)(a->page_size - 1);
    b->bo.flags = shape->flags;
    b->bo.backing = KMT_DRM_BACKING_BO;
    if ((err = a->family->create(a, &b->bo)) < 0) {
        free(b);
        return err;
    }
    if ((err = a->family->map(a, &b->bo, PROT_WRITE, &p)) < 0) {
        batch_free(a, b);
        return err;
    }
    memcpy(p, job->cmds, job->size);
    if (shape->end)
        memcpy((char *)p + job->size, &shape->end, 4);
    for (UINT at = job->size + (shape->end ? 4 : 0); at + 4 <= b->size; at += 4)
        memcpy((char *)p + at, &shape->pad, 4);
    a->family->unmap(a, &b->bo, p);
    b->ctx = c;
    b->point = job->signals[0].point;
    *out = b;
    return 0;
}

static void batch_keep(struct kdrm_adapter *a, struct kdrm_batch *b)
{
    pthread_mutex_lock(&a->batch_lock);
    list_add_tail(&a->batches, &b->entry);
    pthread_mutex_unlock(&a->batch_lock);
}

static bool batch_done(struct kdrm_adapter *a, const struct kdrm_batch *b)
{
    bool done;

    pthread_mutex_lock(&a->exec.lock);
    done = b->ctx->block->completed_point >= b->point;
    pthread_mutex_unlock(&a->exec.lock);
    return done;
}

void kdrm_batches_release(struct kdrm_adapter *a, const struct kdrm_context *c, bool all)
{
    struct kdrm_batch *b, *next;
    struct list done = LIST_INIT(done);

    pthread_mutex_lock(&a->batch_lock);
    LIST_FOR_EACH_ENTRY_SAFE(b, next, &a->batches, struct kdrm_batch, entry)
        if ((!c || b->ctx == c) && (all || batch_done(a, b))) {
            list_remove(&b->entry);
            list_add_tail(&done, &b->entry);
        }
    pthread_mutex_unlock(&a->batch_lock);
    /* freed outside the lock: a family's destroy may take its own locks */
    LIST_FOR_EACH_ENTRY_SAFE(b, next, &done, struct kdrm_batch, entry)
        batch_free(a, b);
}

int kdrm_batch_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job)
{
    struct kdrm_batch *b;
    struct kdrm_job copy;
    int err;

    if (!a->gpu_va)
        return a->family->submit(a, c, job);
    kdrm_batches_release(a, NULL, false);
    if (!job->cmds)
        return a->family->submit(a, c, job);
    if ((err = batch_copy(a, c, job, &b)) < 0)
        return err;
    copy = *job;
    copy.cmds = NULL;
    copy.cmd_va = b->bo.gpu_va;
    copy.size = b->size;
    /* one the kernel took runs until its context completes it; one it refused is gone */
    if ((err = a->family->submit(a, c, &copy)) < 0)
        batch_free(a, b);
    else
        batch_keep(a, b);
    return err;
}
