/*
 * VidSch: one scheduler thread per adapter runs the contexts' packet queues
 * (see vidsch.h) and the miniport's interrupts retire what completed.
 *
 * Lock order: sched->lock > sync object locks.  Signals and DDI calls are
 * made with sched->lock released (a signal kicks the scheduler again).
 */
#include <stdlib.h>
#include <string.h>

#include "base/kmt_thread.h"
#include "vidsch.h"
#include "sync.h"
#include "base/kmt_debug.h"
#include "ddi.h"
#include "base/kmt_time.h"

/* ---- packets ---------------------------------------------------------------- */

static void signal_op_put(struct dxgk_signal_op *op)
{
    for (UINT i = 0; i < op->count; i++)
        dxgk_syncobj_put(op->objs[i]);
    free(op);
}

void dxgk_packet_free(struct dxgk_packet *p)
{
    struct dxgk_context *ctx;
    struct dxgk_sched *s = p->context->device->adapter->sched;
    bool queued;

    switch (p->type) {
    case DXGK_PACKET_SUBMIT:
        for (UINT i = 0; i < p->submit.allocation_count; i++)
            dxgk_allocation_gpu_unref(p->submit.allocations[i]);
        free(p->submit.allocations);
        free(p->submit.dxgk_allocations);
        free(p->submit.private_data);
        free(p->submit.dma);
        break;
    case DXGK_PACKET_SIGNAL:
    case DXGK_PACKET_CPU_EVENT:
        /* a broadcast op is freed by whoever retires its last packet */
        break;
    case DXGK_PACKET_WAIT:
        for (UINT i = 0; i < p->wait.count; i++)
            dxgk_syncobj_put(p->wait.objs[i]);
        break;
    }
    ctx = p->context;
    queued = p->queued;
    free(p);
    /* Our context reference is never the last while we are counted: the
     * drain of a dying context waits for the count, so once it returns no
     * packet holds anything any more (nor frees the device or adapter
     * behind its destroyer's back, on the engine or scheduler thread). */
    dxgk_context_put(ctx);
    if (queued) {
        pthread_mutex_lock(&s->lock);
        if (!--ctx->packets)
            pthread_cond_broadcast(&s->idle);
        pthread_mutex_unlock(&s->lock);
    }
}

/* Frees every packet of a list of retired or dropped ones. */
static void free_packets(struct list *packets)
{
    while (!list_empty(packets)) {
        struct dxgk_packet *p = LIST_ENTRY(packets->next, struct dxgk_packet, entry);

        list_remove(&p->entry);
        dxgk_packet_free(p);
    }
}

/* Fence ids travel as 32 bits through the DDI: widen one next to `ref`. */
static UINT64 widen_fence(UINT64 ref, UINT id32)
{
    UINT64 v = (ref & ~0xffffffffull) | id32;

    if (v + 0x80000000ull < ref)
        v += 0x100000000ull;
    else if (v > ref + 0x80000000ull && v >= 0x100000000ull)
        v -= 0x100000000ull;
    return v;
}

/* ---- the scheduler thread ------------------------------------------------------- */

/* What a pass decided to do once sched->lock is released. */
struct deferred {
    struct list done_packets;            /* retired packets to free */
    struct dxgk_signal_op *fire[64];     /* signal ops whose last context arrived */
    unsigned nfire;
    struct dxgk_packet *submit;          /* at most one DDI submission per pass */
};

static void deferred_init(struct deferred *d)
{
    list_init(&d->done_packets);
    d->nfire = 0;
    d->submit = NULL;
}

static void fire_signal(struct dxgk_signal_op *op);

/* With sched->lock released: fires the ops, then frees the packets. */
static void deferred_finish(struct deferred *d)
{
    for (unsigned i = 0; i < d->nfire; i++)
        fire_signal(d->fire[i]);
    free_packets(&d->done_packets);
}

static bool context_idle(const struct dxgk_sched *s, const struct dxgk_context *ctx)
{
    return s->completed[ctx->node] >= ctx->last_submitted;
}

static void deactivate(struct dxgk_sched *s, struct dxgk_context *ctx)
{
    if (ctx->active && list_empty(&ctx->queue)) {
        list_remove(&ctx->active_entry);
        ctx->active = false;
        pthread_cond_broadcast(&s->idle);
    }
}

static void activate(struct dxgk_sched *s, struct dxgk_context *ctx)
{
    if (!ctx->active) {
        list_add_tail(&s->active, &ctx->active_entry);
        ctx->active = true;
    }
}

/* A signal (or CPU event) packet may fire: it fires at submission, or the
 * context's earlier command buffers completed. */
static bool signal_ready(const struct dxgk_sched *s, const struct dxgk_context *ctx, const struct dxgk_packet *p)
{
    return p->signal->at_submission || context_idle(s, ctx);
}

/* Whether the scheduler thread has something to do: a context whose next
 * packet is a submission (it may have waited for the submission token) or
 * a wait (a sync object may have changed).  Signals waiting for completion
 * are run where the completion is reported, so they need no thread.
 * Wakes are rationed by this: each one is a thread switch.  s->lock held. */
static bool thread_has_work(const struct dxgk_sched *s)
{
    const struct dxgk_context *ctx;

    if (s->stop)
        return true;
    LIST_FOR_EACH_ENTRY(ctx, &s->active, const struct dxgk_context, active_entry) {
        const struct dxgk_packet *p;

        if (list_empty(&ctx->queue))
            continue;
        p = LIST_ENTRY(ctx->queue.next, const struct dxgk_packet, entry);
        if (p->type == DXGK_PACKET_SUBMIT || p->type == DXGK_PACKET_WAIT || signal_ready(s, ctx, p))
            return true;
    }
    return false;
}

/* Takes a device reference from an in-flight packet, to use outside
 * s->lock (see dxgk_sched.borrowed).  s->lock held. */
static struct dxgk_device *device_borrow(struct dxgk_sched *s, struct dxgk_device *device)
{
    kmt_object_get(&device->obj);
    s->borrowed++;
    return device;
}

/* Drops it; a drain waiting for the borrowers may go on.  s->lock not held. */
static void device_return(struct dxgk_sched *s, struct dxgk_device *device)
{
    dxgk_device_put(device);
    pthread_mutex_lock(&s->lock);
    if (!--s->borrowed)
        pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
}

/* A submission takes the next fence id of its node and the submission
 * token: DDI calls then happen in fence order, one at a time (WDDM's
 * level-1 scheduler class).  s->lock held. */
static void assign_fence(struct dxgk_sched *s, struct dxgk_packet *p)
{
    struct dxgk_context *ctx = p->context;

    p->submit.fence_id = ++s->next_fence[ctx->node];
    ctx->last_submitted = p->submit.fence_id;
    if (list_empty(&s->inflight[ctx->node]))
        p->submit.running_since = kmt_now_ns();   /* the TDR clock of the node's head */
    list_add_tail(&s->inflight[ctx->node], &p->entry);
    s->submitting = true;
    s->submitting_ctx = ctx;
}

/* A signal (or CPU event) packet leaves its context's queue; the op fires
 * once its last context got there.  Behind the work of a device that lost
 * it (hung, faulted) the signal is aborted.  s->lock held. */
static void take_signal(struct dxgk_packet *p, struct deferred *d)
{
    if (atomic_load(&p->context->device->execution_state) != D3DKMT_DEVICEEXECUTION_ACTIVE)
        p->signal->aborted = true;
    list_remove(&p->entry);
    if (!--p->signal->pending)
        d->fire[d->nfire++] = p->signal;
    list_add_tail(&d->done_packets, &p->entry);
}

/* Advances one context as far as it can; returns true if it moved. */
static bool run_context(struct dxgk_sched *s, struct dxgk_context *ctx, struct deferred *d)
{
    bool moved = false;

    while (!list_empty(&ctx->queue) && !d->submit) {
        struct dxgk_packet *p = LIST_ENTRY(ctx->queue.next, struct dxgk_packet, entry);

        switch (p->type) {
        case DXGK_PACKET_SUBMIT:
            if (atomic_load(&ctx->device->execution_state) != D3DKMT_DEVICEEXECUTION_ACTIVE) {
                /* hung or faulted since it was queued: it takes no more
                 * work (submit.c), this queued work included */
                list_remove(&p->entry);
                list_add_tail(&d->done_packets, &p->entry);
                moved = true;
                break;
            }
            if (s->submitting)
                return moved;                /* a caller is submitting directly: wait for it */
            list_remove(&p->entry);
            assign_fence(s, p);
            d->submit = p;
            return true;
        case DXGK_PACKET_SIGNAL:
        case DXGK_PACKET_CPU_EVENT:
            if (!signal_ready(s, ctx, p) || d->nfire == 64)
                return moved;                /* (a full fire list waits for the next pass) */
            take_signal(p, d);
            moved = true;
            break;
        case DXGK_PACKET_WAIT:
            if (!dxgk_syncobj_try_wait(p->wait.objs, p->wait.values, p->wait.count, ctx))
                return moved;
            list_remove(&p->entry);
            list_add_tail(&d->done_packets, &p->entry);
            moved = true;
            break;
        }
    }
    return moved;
}

/* The signals that a completion made ready, run where the completion is
 * reported (like VidSch's DPC) rather than after a hop to the scheduler
 * thread: a waiter on the fence wakes one thread switch sooner.  Submissions
 * and waits stay with the scheduler thread.  s->lock held. */
static void take_ready_signals(struct dxgk_sched *s, struct dxgk_context *ctx, struct deferred *d)
{
    while (!list_empty(&ctx->queue) && d->nfire < 64) {
        struct dxgk_packet *p = LIST_ENTRY(ctx->queue.next, struct dxgk_packet, entry);

        if ((p->type != DXGK_PACKET_SIGNAL && p->type != DXGK_PACKET_CPU_EVENT) ||
            !signal_ready(s, ctx, p))
            break;
        take_signal(p, d);
    }
    deactivate(s, ctx);
}

static void run_ready_signals(struct dxgk_sched *s, UINT node, struct deferred *d)
{
    struct dxgk_context *ctx, *next;

    LIST_FOR_EACH_ENTRY_SAFE(ctx, next, &s->active, struct dxgk_context, active_entry)
        if (ctx->node == node)
            take_ready_signals(s, ctx, d);
}

static void submission_refused(struct dxgk_sched *s, UINT node, UINT64 fence_id);

/* Called holding the submission token (sched->submitting), never s->lock.
 * The packet may complete, and be freed by the interrupt, before the DDI
 * even returns: nothing of it is read after the call. */
static void submit_to_miniport(struct dxgk_sched *s, struct dxgk_packet *p)
{
    struct dxgk_context *ctx = p->context;
    const UINT64 fence_id = p->submit.fence_id;   /* the DDIs carry its low 32 bits */
    const UINT node = ctx->node;
    const bool is_virtual = p->submit.is_virtual;
    NTSTATUS status;

    if (is_virtual) {
        DXGKARG_SUBMITCOMMANDVIRTUAL args = {
            .hContext = ctx->driver_context,
            .DmaBufferVirtualAddress = p->submit.va,
            .DmaBufferSize = p->submit.length,
            .pDmaBufferPrivateData = p->submit.private_data,
            .DmaBufferPrivateDataSize = p->submit.private_data_size,
            .DmaBufferUmdPrivateDataSize = p->submit.umd_private_size,
            .SubmissionFenceId = (UINT)fence_id,
            .NodeOrdinal = ctx->node,
        };
        args.Flags.NullRendering = p->submit.null_rendering;
        status = dxgk_ddi_submit_command_virtual(s->adapter, &args);
    } else {
        DXGKARG_SUBMITCOMMAND args = {
            .hContext = ctx->driver_context,
            .DmaBufferSize = p->submit.dma_size,
            .DmaBufferSubmissionEndOffset = p->submit.dma_size,
            .SubmissionFenceId = (UINT)fence_id,
            .NodeOrdinal = ctx->node,
            .pDmaBufferPrivateData = p->submit.private_data,
            .DmaBufferPrivateDataSize = p->submit.private_data_size,
            .DmaBufferPrivateDataSubmissionEndOffset = p->submit.private_data_size,
            .pKmtDmaBuffer = p->submit.dma,
            .pKmtAllocationList = p->submit.dxgk_allocations,
            .KmtAllocationListSize = p->submit.allocation_count,
        };
        args.Flags.NullRendering = p->submit.null_rendering;
        status = dxgk_ddi_submit_command(s->adapter, &args);
    }
    /* The call is over: a drain of the context may end now (DestroyDevice
     * drains contexts that are not closed, so every drain is woken). */
    pthread_mutex_lock(&s->lock);
    s->submitting_ctx = NULL;
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
    if (status) {
        /* Windows bugchecks here; we mark the device faulted instead. */
        DXGKARGCB_NOTIFY_INTERRUPT_DATA fault = { .InterruptType = DXGK_INTERRUPT_DMA_FAULTED };

        ERR_(dxgk, "%s: submission failed: %s\n", s->adapter->miniport->name, kmt_debugstr_status(status));
        fault.DmaFaulted.FaultedFenceId = (UINT)fence_id;
        fault.DmaFaulted.Status = status;
        fault.DmaFaulted.NodeOrdinal = node;
        dxgk_sched_interrupt(s->adapter, &fault);
        submission_refused(s, node, fence_id);
    }
}

/* An aborted op does not claim that the work before it completed: a fence
 * it names goes to its maximum, as a reset device's own fences do, or keeps
 * its value (NoSignalMaxValueOnTdr).  Mutexes, semaphores and events are
 * still released, so nobody waits for ever on work that is gone. */
static void fire_signal(struct dxgk_signal_op *op)
{
    for (UINT i = 0; i < op->count; i++) {
        struct dxgk_syncobj *o = op->objs[i];

        if (!op->aborted || (o->type != D3DDDI_FENCE && o->type != D3DDDI_MONITORED_FENCE))
            dxgk_syncobj_signal(o, op->values[i], op->allow_rewind);
        else if (!o->flags.NoSignalMaxValueOnTdr)
            dxgk_syncobj_signal(o, UINT64_MAX, false);
    }
    if (op->cpu_event)
        dxgk_event_set(op->cpu_event);
    if (op->cpu_work)
        op->cpu_work(op->cpu_arg, op->aborted);
    signal_op_put(op);
}

/* ---- timeout detection and recovery ------------------------------------------ */

#define TDR_DEFAULT_MS 2000u             /* Windows' TdrDelay */

static bool device_lose(struct dxgk_device *device, D3DKMT_DEVICEEXECUTION_STATE state,
                        D3DGPU_VIRTUAL_ADDRESS va);

static UINT64 tdr_delay_ns(void)
{
    const char *v = getenv("KMTSHIM_TDR_DELAY");
    unsigned long ms;
    char *end;

    if (!v || !*v)
        return TDR_DEFAULT_MS * 1000000ull;
    ms = strtoul(v, &end, 10);
    if (*end || ms > 3600000ul) {
        WARN_(dxgk, "KMTSHIM_TDR_DELAY=%s is not a delay in milliseconds (0-3600000); using %u\n", v,
              TDR_DEFAULT_MS);
        return TDR_DEFAULT_MS * 1000000ull;
    }
    return ms * 1000000ull;
}

/* When the oldest unhandled head of a node times out; 0: nothing to watch.
 * s->lock held. */
static UINT64 tdr_deadline(const struct dxgk_sched *s)
{
    UINT64 deadline = 0;

    if (!s->tdr_ns)
        return 0;
    for (unsigned n = 0; n < DXGK_MAX_NODES; n++) {
        const struct dxgk_packet *p;

        if (list_empty(&s->inflight[n]))
            continue;
        p = LIST_ENTRY(s->inflight[n].next, struct dxgk_packet, entry);
        if (!p->submit.timed_out && (!deadline || p->submit.running_since + s->tdr_ns < deadline))
            deadline = p->submit.running_since + s->tdr_ns;
    }
    return deadline;
}

/* After a successful DxgkDdiResetEngine: the aborted packet and everything
 * before it completed; what the engine dropped unstarted goes back to the
 * front of its context's queue (new fence ids at resubmission), except the
 * hung device's, which is dropped.  s->lock held. */
static void requeue_after_reset(struct dxgk_sched *s, UINT node, UINT64 last_aborted,
                                const struct dxgk_device *culprit, struct deferred *d)
{
    struct list dropped = LIST_INIT(dropped);
    UINT64 done = last_aborted > s->completed[node] && last_aborted <= s->next_fence[node]
                  ? last_aborted : s->completed[node];

    while (!list_empty(&s->inflight[node])) {
        struct dxgk_packet *p = LIST_ENTRY(s->inflight[node].next, struct dxgk_packet, entry);

        list_remove(&p->entry);
        if (p->submit.fence_id <= done || p->context->device == culprit || p->submit.refused)
            list_add_tail(&d->done_packets, &p->entry);
        else
            list_add_tail(&dropped, &p->entry);
    }
    /* every fence id handed out so far is spent: nothing will complete them */
    s->completed[node] = s->next_fence[node];
    while (!list_empty(&dropped)) {
        struct dxgk_packet *p = LIST_ENTRY(dropped.prev, struct dxgk_packet, entry);

        list_remove(&p->entry);
        p->submit.timed_out = false;
        list_add_tail(p->context->queue.next, &p->entry);   /* in front, order kept */
        activate(s, p->context);
    }
    run_ready_signals(s, node, d);
}

/* The engine of `node` hung on a packet of `culprit` (referenced). */
static void tdr_recover(struct dxgk_sched *s, UINT node, UINT64 fence, struct dxgk_device *culprit)
{
    DXGKARG_RESETENGINE reset = { .NodeOrdinal = node };
    struct deferred d;
    bool lost;

    deferred_init(&d);
    pthread_mutex_lock(&s->lock);
    s->tdr_detected++;
    pthread_mutex_unlock(&s->lock);
    /* HUNG before the requeue: the signals the reset makes ready behind the
     * aborted work are aborted too (take_signal) */
    lost = device_lose(culprit, D3DKMT_DEVICEEXECUTION_HUNG, 0);
    WARN_(dxgk, "TDR: fence %llu on node %u (device %#x) ran past %llu ms; %s\n", (unsigned long long)fence,
          node, culprit->handle, (unsigned long long)(s->tdr_ns / 1000000),
          dxgk_ddi_has_reset_engine(s->adapter) ? "resetting the engine" : "the miniport cannot reset it");
    if (dxgk_ddi_has_reset_engine(s->adapter)) {
        NTSTATUS status;

        pthread_mutex_lock(&s->lock);
        s->token_wanted = true;
        while (s->submitting)                /* ResetEngine is in the submission class */
            pthread_cond_wait(&s->cond, &s->lock);
        s->token_wanted = false;
        s->submitting = true;
        pthread_mutex_unlock(&s->lock);
        status = dxgk_ddi_reset_engine(s->adapter, &reset);
        pthread_mutex_lock(&s->lock);
        if (!status)
            requeue_after_reset(s, node, widen_fence(s->completed[node], reset.LastAbortedFenceId), culprit,
                                &d);
        s->submitting = false;
        pthread_cond_broadcast(&s->idle);
        pthread_mutex_unlock(&s->lock);
        if (status)
            ERR_(dxgk, "%s: DxgkDdiResetEngine(node %u) failed: %s; its work stays in flight\n",
                 s->adapter->miniport->name, node, kmt_debugstr_status(status));
        else
            TRACE_(dxgk, "engine %u reset, last aborted fence %u\n", node, reset.LastAbortedFenceId);
    }
    /* after the reset: the engine must not see the culprit's fences jump */
    if (lost)
        dxgk_device_fences_to_max(culprit);
    deferred_finish(&d);
}

/* Handles every node whose head packet ran past TdrDelay.  s->lock held;
 * released around the recovery. */
static void tdr_check(struct dxgk_sched *s)
{
    if (!s->tdr_ns)
        return;
    for (unsigned n = 0; n < DXGK_MAX_NODES && !s->stop; n++) {
        struct dxgk_device *culprit;
        struct dxgk_packet *p;
        UINT64 fence;

        if (list_empty(&s->inflight[n]))
            continue;
        p = LIST_ENTRY(s->inflight[n].next, struct dxgk_packet, entry);
        if (p->submit.timed_out || kmt_now_ns() - p->submit.running_since < s->tdr_ns)
            continue;
        p->submit.timed_out = true;
        fence = p->submit.fence_id;
        culprit = device_borrow(s, p->context->device);
        pthread_mutex_unlock(&s->lock);
        tdr_recover(s, n, fence, culprit);
        device_return(s, culprit);
        pthread_mutex_lock(&s->lock);
    }
}

static void *sched_thread(void *arg)
{
    struct dxgk_sched *s = arg;

    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct dxgk_context *ctx, *next;
        struct deferred d;
        bool moved = false;

        if (s->flips_settle) {
            s->flips_settle = false;
            pthread_mutex_unlock(&s->lock);
            dxgk_flip_settle(s->adapter);
            pthread_mutex_lock(&s->lock);
            continue;
        }

        deferred_init(&d);
        LIST_FOR_EACH_ENTRY_SAFE(ctx, next, &s->active, struct dxgk_context, active_entry) {
            bool ran = run_context(s, ctx, &d);

            /* A draining context's head moved: a drain sleeps without a
             * deadline unless a wait heads the queue, and nothing else may
             * come to wake it (dropped submissions, taken signals). */
            if (ran && ctx->closed)
                pthread_cond_broadcast(&s->idle);
            moved |= ran;
            deactivate(s, ctx);
            if (d.submit)
                break;
        }
        /* Kicks take s->lock, so none can slip between this pass and the wait. */
        if (!moved) {
            UINT64 deadline = tdr_deadline(s);

            if (!deadline) {
                /* a submission made directly from a caller's thread wakes it */
                s->sleeping_untimed = true;
                pthread_cond_wait(&s->cond, &s->lock);
                s->sleeping_untimed = false;
            } else {
                struct timespec ts = kmt_timespec_of(deadline);

                pthread_cond_timedwait(&s->cond, &s->lock, &ts);
            }
            tdr_check(s);
            continue;
        }
        pthread_mutex_unlock(&s->lock);
        if (d.submit)
            submit_to_miniport(s, d.submit);
        deferred_finish(&d);
        pthread_mutex_lock(&s->lock);
        if (d.submit)
            s->submitting = false;
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

NTSTATUS dxgk_sched_start(struct dxgk_adapter *adapter)
{
    struct dxgk_sched *s;
    NTSTATUS status = STATUS_SUCCESS;

    pthread_mutex_lock(&adapter->sched_init_lock);
    if (adapter->sched)
        goto out;
    if (!(s = calloc(1, sizeof(*s)))) {
        status = STATUS_NO_MEMORY;
        goto out;
    }
    s->adapter = adapter;
    s->tdr_ns = tdr_delay_ns();
    pthread_mutex_init(&s->lock, NULL);
    kmt_cond_init_monotonic(&s->cond);   /* the sched thread sleeps until a TDR deadline */
    kmt_cond_init_monotonic(&s->idle);   /* DestroyContext gives a blocked wait up by a deadline */
    list_init(&s->active);
    for (unsigned i = 0; i < DXGK_MAX_NODES; i++)
        list_init(&s->inflight[i]);
    if (kmt_thread_create(&s->thread, "kmt-vidsch", sched_thread, s)) {
        free(s);
        status = STATUS_NO_MEMORY;
        goto out;
    }
    __atomic_store_n(&adapter->sched, s, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&adapter->sched_init_lock);
    return status;
}

void dxgk_sched_stop(struct dxgk_adapter *adapter)
{
    struct dxgk_sched *s = adapter->sched;

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    /* every context was drained by its teardown: nothing is queued */
    for (unsigned i = 0; i < DXGK_MAX_NODES; i++)
        free_packets(&s->inflight[i]);
    pthread_cond_destroy(&s->idle);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    adapter->sched = NULL;
    free(s);
}

void dxgk_sched_defer_flip_settle(struct dxgk_adapter *adapter)
{
    struct dxgk_sched *s = __atomic_load_n(&adapter->sched, __ATOMIC_ACQUIRE);

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->flips_settle = true;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

void dxgk_sched_kick(struct dxgk_adapter *adapter)
{
    struct dxgk_sched *s = __atomic_load_n(&adapter->sched, __ATOMIC_ACQUIRE);

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    if (thread_has_work(s))
        pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

NTSTATUS dxgk_sched_queue(struct dxgk_packet **packets, UINT count)
{
    struct dxgk_sched *s = packets[0]->context->device->adapter->sched;

    pthread_mutex_lock(&s->lock);
    for (UINT i = 0; i < count; i++) {
        if (packets[i]->context->closed) {
            pthread_mutex_unlock(&s->lock);
            return STATUS_INVALID_PARAMETER;
        }
    }
    /* Direct submission: a command buffer with nothing queued ahead of it in
     * its context goes to the miniport from the caller's thread, saving the
     * hop to the scheduler thread (and its wake-up) on the common path. */
    if (count == 1 && packets[0]->type == DXGK_PACKET_SUBMIT &&
        list_empty(&packets[0]->context->queue) && !s->submitting) {
        struct dxgk_packet *p = packets[0];

        p->queued = true;
        p->context->packets++;
        assign_fence(s, p);
        pthread_mutex_unlock(&s->lock);
        submit_to_miniport(s, p);
        pthread_mutex_lock(&s->lock);
        s->submitting = false;
        /* the scheduler may wait for the token, or have no TDR deadline to
         * sleep to (one it has is never later than this submission's) */
        if ((s->tdr_ns && s->sleeping_untimed) || s->token_wanted || thread_has_work(s))
            pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
        return STATUS_SUCCESS;
    }
    for (UINT i = 0; i < count; i++) {
        struct dxgk_packet *p = packets[i];
        struct dxgk_context *ctx = p->context;

        list_add_tail(&ctx->queue, &p->entry);
        p->queued = true;
        ctx->packets++;
        activate(s, ctx);
    }
    /* A signal on a context whose work already completed runs now, from
     * the caller's thread (waiters wake without a hop to the scheduler). */
    if (packets[0]->type == DXGK_PACKET_SIGNAL || packets[0]->type == DXGK_PACKET_CPU_EVENT) {
        struct deferred d;

        deferred_init(&d);
        for (UINT i = 0; i < count; i++)
            take_ready_signals(s, packets[i]->context, &d);
        if (thread_has_work(s))
            pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
        deferred_finish(&d);
        return STATUS_SUCCESS;
    }
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return STATUS_SUCCESS;
}

/* A call that looked the context up before its teardown began may still be
 * on its way to dxgk_sched_queue(): closing under the scheduler lock makes
 * that packet either queued before the drain or refused. */
void dxgk_sched_close(struct dxgk_context *ctx)
{
    struct dxgk_sched *s = ctx->device->adapter->sched;

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    ctx->closed = true;
    pthread_cond_broadcast(&s->idle);    /* a waiter for the context gives up */
    pthread_mutex_unlock(&s->lock);
}

static bool drained(const struct dxgk_sched *s, const struct dxgk_context *ctx)
{
    return list_empty(&ctx->queue) && context_idle(s, ctx) && !ctx->packets && !s->borrowed &&
           s->submitting_ctx != ctx;
}

NTSTATUS dxgk_sched_queue_cpu_work(struct dxgk_context *ctx, void (*work)(void *arg, bool aborted),
                                   void *arg, bool *queued)
{
    struct dxgk_sched *s = ctx->device->adapter->sched;
    struct dxgk_packet *p;
    struct dxgk_signal_op *op;
    NTSTATUS status;
    bool idle;

    *queued = false;
    if (!s)
        return STATUS_SUCCESS;
    pthread_mutex_lock(&s->lock);
    idle = list_empty(&ctx->queue) && context_idle(s, ctx);
    pthread_mutex_unlock(&s->lock);
    if (idle)
        return STATUS_SUCCESS;
    if (!(op = calloc(1, sizeof(*op))) || !(p = calloc(1, sizeof(*p)))) {
        free(op);
        return STATUS_NO_MEMORY;
    }
    op->pending = 1;
    op->cpu_work = work;
    op->cpu_arg = arg;
    p->type = DXGK_PACKET_CPU_EVENT;
    p->context = ctx;
    p->signal = op;
    kmt_object_get(&ctx->obj);
    if ((status = dxgk_sched_queue(&p, 1))) {
        dxgk_context_put(ctx);
        free(p);
        free(op);
        return status;
    }
    *queued = true;
    return STATUS_SUCCESS;
}

/* The wait at the head of the context's queue, if one blocks it. */
static const struct dxgk_packet *blocking_wait(const struct dxgk_context *ctx)
{
    const struct dxgk_packet *p;

    if (list_empty(&ctx->queue))
        return NULL;
    p = LIST_ENTRY(ctx->queue.next, const struct dxgk_packet, entry);
    return p->type == DXGK_PACKET_WAIT ? p : NULL;
}

/* Waits until the context's queue ran, everything it submitted completed
 * and every packet of it was freed.  The context is closed: its queue only
 * shrinks, so a head packet seen twice did not move in between.  A wait
 * that heads it for TdrDelay gives the queue up (Windows would block for
 * ever; a wait nobody satisfies must not hold the destroyer). */
void dxgk_sched_drain(struct dxgk_context *ctx)
{
    struct dxgk_sched *s = ctx->device->adapter->sched;
    const struct dxgk_packet *head = NULL;
    UINT64 deadline = 0;

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    while (!drained(s, ctx)) {
        const struct dxgk_packet *wait = s->tdr_ns ? blocking_wait(ctx) : NULL;
        struct timespec ts;

        if (!wait) {
            head = NULL;
            pthread_cond_wait(&s->idle, &s->lock);
            continue;
        }
        if (wait != head) {
            head = wait;
            deadline = kmt_now_ns() + s->tdr_ns;
        } else if (kmt_now_ns() >= deadline) {
            pthread_mutex_unlock(&s->lock);
            WARN_(dxgk, "context %#x: a GPU wait blocked its teardown for %llu ms; giving its queue up\n",
                  ctx->handle, (unsigned long long)(s->tdr_ns / 1000000));
            dxgk_sched_cancel(ctx);
            pthread_mutex_lock(&s->lock);
            head = NULL;
            continue;
        }
        ts = kmt_timespec_of(deadline);
        pthread_cond_timedwait(&s->idle, &s->lock, &ts);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Drops a context's packets that did not reach the miniport yet (the
 * device is terminating, or DestroyContext gave up a wait); their signals
 * are aborted (fire_signal) and broadcast ones lose this context's vote.  An
 * op whose count reaches 0 here is freed only by firing it, so the queue
 * is taken in batches of what the fire list holds. */
void dxgk_sched_cancel(struct dxgk_context *ctx)
{
    struct dxgk_sched *s = ctx->device->adapter->sched;
    struct list dropped = LIST_INIT(dropped);
    struct dxgk_signal_op *fire[64];
    unsigned nfire;

    if (!s)
        return;
    do {
        nfire = 0;
        pthread_mutex_lock(&s->lock);
        while (!list_empty(&ctx->queue) && nfire < 64) {
            struct dxgk_packet *p = LIST_ENTRY(ctx->queue.next, struct dxgk_packet, entry);

            list_remove(&p->entry);
            if (p->type == DXGK_PACKET_SIGNAL || p->type == DXGK_PACKET_CPU_EVENT) {
                p->signal->aborted = true;
                if (!--p->signal->pending)
                    fire[nfire++] = p->signal; /* others already arrived: let it fire */
            }
            list_add_tail(&dropped, &p->entry);
        }
        deactivate(s, ctx);
        pthread_mutex_unlock(&s->lock);
        for (unsigned i = 0; i < nfire; i++)
            fire_signal(fire[i]);
    } while (nfire == 64);
    free_packets(&dropped);
}

/* ---- interrupts ---------------------------------------------------------------- */

static struct dxgk_context *inflight_context(struct dxgk_sched *s, UINT node, UINT64 fence)
{
    struct dxgk_packet *p;

    LIST_FOR_EACH_ENTRY(p, &s->inflight[node], struct dxgk_packet, entry)
        if (p->submit.fence_id == fence)
            return p->context;
    return NULL;
}

/* Takes a device out of ACTIVE; true if this call did (the caller then
 * raises its fences to the maximum, dxgk_device_fences_to_max). */
static bool device_lose(struct dxgk_device *device, D3DKMT_DEVICEEXECUTION_STATE state,
                        D3DGPU_VIRTUAL_ADDRESS va)
{
    int active = D3DKMT_DEVICEEXECUTION_ACTIVE;

    if (!atomic_compare_exchange_strong(&device->execution_state, &active, (int)state))
        return false;
    device->fault_address = va;
    WARN_(dxgk, "device %#x lost its work (state %d, address %#llx)\n", device->handle, state,
          (unsigned long long)va);
    return true;
}

static void device_faulted(struct dxgk_device *device, D3DKMT_DEVICEEXECUTION_STATE state,
                           D3DGPU_VIRTUAL_ADDRESS va)
{
    if (device_lose(device, state, va))
        dxgk_device_fences_to_max(device);
}

/* The node's completed fence moved (or a refused packet may now count as
 * done): retires what completed, in fence order, and takes the signals that
 * became ready.  A refused packet completes only once every packet before
 * it did: its fence id does not say the earlier work is done.  s->lock held. */
static void node_progress_locked(struct dxgk_sched *s, UINT node, struct deferred *d)
{
    bool moved = false;

    while (!list_empty(&s->inflight[node])) {
        struct dxgk_packet *p = LIST_ENTRY(s->inflight[node].next, struct dxgk_packet, entry);

        if (p->submit.fence_id > s->completed[node]) {
            if (!p->submit.refused)
                break;
            s->completed[node] = p->submit.fence_id;
        }
        list_remove(&p->entry);
        list_add_tail(&d->done_packets, &p->entry);
        moved = true;
    }
    if (moved && !list_empty(&s->inflight[node]))   /* the next one starts */
        LIST_ENTRY(s->inflight[node].next, struct dxgk_packet, entry)->submit.running_since = kmt_now_ns();
    run_ready_signals(s, node, d);
    if (thread_has_work(s))
        pthread_cond_signal(&s->cond);
    pthread_cond_broadcast(&s->idle);
}

/* The miniport refused a submission (its device was faulted for it): the
 * packet never runs, and retires when the work before it did. */
static void submission_refused(struct dxgk_sched *s, UINT node, UINT64 fence_id)
{
    struct dxgk_packet *p;
    struct deferred d;

    deferred_init(&d);
    pthread_mutex_lock(&s->lock);
    LIST_FOR_EACH_ENTRY(p, &s->inflight[node], struct dxgk_packet, entry) {
        if (p->submit.fence_id == fence_id) {
            p->submit.refused = true;
            break;
        }
    }
    node_progress_locked(s, node, &d);
    pthread_mutex_unlock(&s->lock);
    deferred_finish(&d);
}

void dxgk_sched_interrupt(struct dxgk_adapter *adapter, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *data)
{
    struct dxgk_sched *s = __atomic_load_n(&adapter->sched, __ATOMIC_ACQUIRE);
    struct dxgk_device *faulted = NULL;
    D3DKMT_DEVICEEXECUTION_STATE fault_state = D3DKMT_DEVICEEXECUTION_ACTIVE;
    D3DGPU_VIRTUAL_ADDRESS fault_va = 0;
    struct deferred d;
    UINT node;

    deferred_init(&d);
    if (data->InterruptType == DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED) {
        dxgk_fences_changed(adapter);
        return;
    }
    if (data->InterruptType == DXGK_INTERRUPT_CRTC_VSYNC) {
        dxgk_vblank_interrupt(adapter, data->CrtcVsync.VidPnTargetId);
        return;
    }
    if (!s)
        return;

    switch (data->InterruptType) {
    case DXGK_INTERRUPT_DMA_COMPLETED: {
        UINT64 fence;

        node = data->DmaCompleted.NodeOrdinal;
        if (node >= DXGK_MAX_NODES)
            return;
        pthread_mutex_lock(&s->lock);
        fence = widen_fence(s->completed[node], data->DmaCompleted.SubmissionFenceId);
        if (fence > s->completed[node] && fence <= s->next_fence[node])
            s->completed[node] = fence;
        node_progress_locked(s, node, &d);
        pthread_mutex_unlock(&s->lock);
        break;
    }
    case DXGK_INTERRUPT_DMA_FAULTED:
    case DXGK_INTERRUPT_DMA_PAGE_FAULTED: {
        bool page = data->InterruptType == DXGK_INTERRUPT_DMA_PAGE_FAULTED;
        UINT id = page ? data->DmaPageFaulted.FaultedFenceId : data->DmaFaulted.FaultedFenceId;
        struct dxgk_context *ctx;

        node = page ? data->DmaPageFaulted.NodeOrdinal : data->DmaFaulted.NodeOrdinal;
        if (node >= DXGK_MAX_NODES)
            return;
        pthread_mutex_lock(&s->lock);
        ctx = inflight_context(s, node, widen_fence(s->completed[node], id));
        if (ctx)
            faulted = device_borrow(s, ctx->device);
        pthread_mutex_unlock(&s->lock);
        fault_state = page ? D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT : D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT;
        fault_va = page ? data->DmaPageFaulted.FaultedVirtualAddress : 0;
        break;
    }
    default:
        break;
    }

    if (faulted) {
        device_faulted(faulted, fault_state, fault_va);
        device_return(s, faulted);
    }
    deferred_finish(&d);
}

static void APIENTRY cb_notify_interrupt(HANDLE hAdapter, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *data)
{
    if (hAdapter && data)
        dxgk_sched_interrupt(hAdapter, data);
}

void dxgk_sched_callbacks(DXGKRNL_INTERFACE *iface)
{
    iface->DxgkCbNotifyInterrupt = cb_notify_interrupt;
}

void dxgk_sched_node_counters(struct dxgk_adapter *adapter, UINT node, struct dxgk_node_counters *out)
{
    struct dxgk_sched *s = __atomic_load_n(&adapter->sched, __ATOMIC_ACQUIRE);
    const struct dxgk_context *ctx;
    const struct dxgk_packet *p;

    memset(out, 0, sizeof(*out));
    if (!s || node >= DXGK_MAX_NODES)
        return;                          /* no context yet: nothing ran */
    pthread_mutex_lock(&s->lock);
    out->dma_submitted = s->next_fence[node];
    out->dma_completed = s->completed[node];
    LIST_FOR_EACH_ENTRY(ctx, &s->active, const struct dxgk_context, active_entry) {
        if (ctx->node != node)
            continue;
        LIST_FOR_EACH_ENTRY(p, &ctx->queue, const struct dxgk_packet, entry)
            out->render_waiting += p->type == DXGK_PACKET_SUBMIT;
    }
    pthread_mutex_unlock(&s->lock);
}

unsigned dxgk_sched_tdr_count(struct dxgk_adapter *adapter)
{
    struct dxgk_sched *s = __atomic_load_n(&adapter->sched, __ATOMIC_ACQUIRE);
    unsigned n;

    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    n = s->tdr_detected;
    pthread_mutex_unlock(&s->lock);
    return n;
}
