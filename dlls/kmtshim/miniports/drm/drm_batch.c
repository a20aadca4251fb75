/*
 * DRM miniport: legacy command buffers on adapters with GPU VA.
 *
 * A legacy (Render) submission's stream is CPU memory, but amdgpu, xe and
 * i915 (softpin) run command buffers only at GPU virtual addresses: the
 * family copies the stream into an object of its own (kdrm_batch_copy),
 * which its create() gives a VA, and submits that.  The copy is kept on
 * the adapter until its context completed the submission (the ring point
 * in the context's progress block), and freed by the next submission, at
 * the context's destroy, or at the adapter's stop.  On i915 an early close
 * would hand the VA to the next object, and EXECBUFFER2 softpinning that
 * one in the same context would block until this batch retired.  amdgpu
 * would defer an early unmap's page-table clear behind the VM's
 * submissions (amdgpu_vm_update_range); keeping the copy also keeps its VA
 * range from being handed out again.
 *
 * `batch_lock` is taken before exec.lock (to read a context's progress),
 * never under it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "drm_miniport.h"

void kdrm_batches_init(struct kdrm_adapter *a)
{
    pthread_mutex_init(&a->batch_lock, NULL);
    list_init(&a->batches);
}

int kdrm_batch_copy(struct kdrm_adapter *a, const struct kdrm_context *c, const struct kdrm_job *job, UINT flags,
                    UINT pad_to, UINT32 pad, struct kdrm_batch **out)
{
    struct kdrm_batch *b = calloc(1, sizeof(*b));
    void *p;
    int err;

    if (!b)
        return -ENOMEM;
    b->size = pad_to ? (UINT)(((UINT64)job->size + pad_to - 1) / pad_to * pad_to) : job->size;
    b->bo.magic = KDRM_BO_MAGIC;
    b->bo.adapter = a;
    b->bo.size = ((UINT64)b->size + a->page_size - 1) & ~(UINT64)(a->page_size - 1);
    b->bo.flags = flags;
    b->bo.backing = KMT_DRM_BACKING_BO;
    if ((err = a->family->create(a, &b->bo)) < 0) {
        free(b);
        return err;
    }
    if ((err = a->family->map(a, &b->bo, PROT_WRITE, &p)) < 0) {
        kdrm_batch_free(a, b);
        return err;
    }
    memcpy(p, job->cmds, job->size);
    for (UINT at = job->size; at + 4 <= b->size; at += 4)
        memcpy((char *)p + at, &pad, 4);
    a->family->unmap(a, &b->bo, p);
    b->ctx = c;
    b->point = job->signals[0].point;
    *out = b;
    return 0;
}

void kdrm_batch_free(struct kdrm_adapter *a, struct kdrm_batch *b)
{
    a->family->destroy(a, &b->bo);
    free(b);
}

void kdrm_batch_keep(struct kdrm_adapter *a, struct kdrm_batch *b)
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
        kdrm_batch_free(a, b);
}
