/*
 * DRM miniport: retiring submissions.  The watcher takes those the ring
 * says completed off `inflight` and frees them, writing their copies back
 * first (drm_copy_sync.c); an adapter stop frees those left as dropped.
 */
#include <stdlib.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"

bool kdrm_submissions_retire_locked(struct kdrm_adapter *a, UINT64 done, struct list *retired,
                                    DXGKARGCB_NOTIFY_INTERRUPT_DATA *irq)
{
    bool any = false;

    while (!list_empty(&a->exec.inflight)) {
        struct kdrm_submission *s = LIST_ENTRY(a->exec.inflight.next, struct kdrm_submission, entry);

        if (s->point > done)
            break;
        list_remove(&s->entry);
        s->ctx->block->completed_point = s->point;
        s->ctx->block->last_completed_fence = s->fence_id;
        /* fence ids rise per node: the newest retires every older one */
        irq->InterruptType = DXGK_INTERRUPT_DMA_COMPLETED;
        irq->DmaCompleted.SubmissionFenceId = s->fence_id;
        irq->DmaCompleted.NodeOrdinal = s->node;
        atomic_fetch_sub(&a->submissions, 1);
        list_add_tail(retired, &s->entry);
        any = true;
    }
    return any;
}

void kdrm_submissions_free(struct kdrm_adapter *a, struct list *list, bool completed)
{
    while (!list_empty(list)) {
        struct kdrm_submission *s = LIST_ENTRY(list->next, struct kdrm_submission, entry);
        int err;

        list_remove(&s->entry);
        /* the GPU's results cannot reach the caller's pages: the program
         * learns it the way it learns of any lost work, before the completion */
        if ((err = kdrm_copy_finish(a, s, completed)) < 0)
            kdrm_raise_fault(a, s->fence_id, s->node, err, 0);
        free(s);
    }
}
