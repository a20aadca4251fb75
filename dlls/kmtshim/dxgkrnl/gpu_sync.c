/*
 * Signals and waits queued on contexts: SignalSynchronizationObject(2),
 * WaitForSynchronizationObject(2), SignalSynchronizationObjectFromGpu(2),
 * WaitForSynchronizationObjectFromGpu.  They return once queued; the
 * scheduler performs them in the context's order.
 */
#include <stdlib.h>
#include <string.h>

#include "vidsch.h"
#include "sync.h"
#include "syncobj_share.h"
#include "base/kmt_debug.h"

#define TYPE_BIT(t) (1u << (t))

static void put_objects(struct dxgk_syncobj **objs, UINT n)
{
    while (n--)
        dxgk_syncobj_put(objs[n]);
}

/* Looks up objects of the adapter whose types are in `allowed`. */
static NTSTATUS lookup_objects(struct dxgk_adapter *adapter, const D3DKMT_HANDLE *handles, UINT n,
                               unsigned allowed, bool for_signal, struct dxgk_syncobj **objs)
{
    for (UINT i = 0; i < n; i++) {
        struct dxgk_syncobj *o = dxgk_syncobj_lookup(handles[i], adapter);
        NTSTATUS status = STATUS_SUCCESS;

        if (!o || !(allowed & TYPE_BIT(o->type)))
            status = STATUS_INVALID_PARAMETER;
        else if (for_signal ? o->flags.NoSignal : o->flags.NoWait)
            status = STATUS_ACCESS_DENIED;
        else if (dxgk_syncobj_link_gone(o))
            status = STATUS_DEVICE_REMOVED;
        if (status) {
            if (o)
                dxgk_syncobj_put(o);
            put_objects(objs, i);
            return status;
        }
        objs[i] = o;
    }
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_gpu_signal(const D3DKMT_HANDLE *contexts, UINT ncontexts, const D3DKMT_HANDLE *handles,
                         UINT nobjs, const UINT64 *values, UINT64 value, D3DDDICB_SIGNALFLAGS flags,
                         HANDLE cpu_event, unsigned allowed)
{
    struct dxgk_context *ctxs[D3DDDI_MAX_BROADCAST_CONTEXT];
    struct dxgk_packet *packets[D3DDDI_MAX_BROADCAST_CONTEXT] = { 0 };
    struct dxgk_signal_op *op;
    NTSTATUS status = STATUS_SUCCESS;
    bool acquired;
    UINT n = 0;

    if (!ncontexts || ncontexts > D3DDDI_MAX_BROADCAST_CONTEXT || !contexts)
        return STATUS_INVALID_PARAMETER;
    if (flags.Reserved || flags.DXGK_SIGNAL_FLAG_INTERNAL0)
        return STATUS_INVALID_PARAMETER;
    if (flags.EnqueueCpuEvent ? (nobjs != 0) : (!nobjs || nobjs > D3DDDI_MAX_OBJECT_SIGNALED || !handles))
        return STATUS_INVALID_PARAMETER;
    if (flags.EnqueueCpuEvent && (status = dxgk_event_validate(cpu_event)))
        return status;
    if (!(op = calloc(1, sizeof(*op))))
        return STATUS_NO_MEMORY;

    for (; n < ncontexts; n++) {
        if (!(ctxs[n] = dxgk_context_lookup(contexts[n]))) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        if (n && ctxs[n]->device->adapter != ctxs[0]->device->adapter) {
            status = STATUS_INVALID_PARAMETER;
            n++;
            break;
        }
        if (atomic_load(&ctxs[n]->device->execution_state) != D3DKMT_DEVICEEXECUTION_ACTIVE) {
            status = STATUS_DEVICE_REMOVED;
            n++;
            break;
        }
    }
    if (!status && !dxgk_contexts_acquire(ctxs, n))
        status = STATUS_INVALID_PARAMETER;
    acquired = !status;
    if (!status)
        status = lookup_objects(ctxs[0]->device->adapter, handles, nobjs, allowed, true, op->objs);
    if (!status) {
        op->count = nobjs;
        for (UINT i = 0; i < nobjs; i++)
            op->values[i] = values ? values[i] : value;
        op->allow_rewind = flags.AllowFenceRewind;
        op->at_submission = flags.SignalAtSubmission;
        op->cpu_event = flags.EnqueueCpuEvent ? cpu_event : NULL;
        op->pending = n;
        for (UINT i = 0; i < n; i++) {
            if (!(packets[i] = calloc(1, sizeof(*packets[i])))) {
                status = STATUS_NO_MEMORY;
                break;
            }
            packets[i]->type = flags.EnqueueCpuEvent ? DXGK_PACKET_CPU_EVENT : DXGK_PACKET_SIGNAL;
            packets[i]->context = ctxs[i];
            kmt_object_get(&ctxs[i]->obj);
            packets[i]->signal = op;
        }
        if (!status)
            status = dxgk_sched_queue(packets, n);
        if (status)
            put_objects(op->objs, nobjs);
    }
    for (UINT i = 0; i < n; i++) {
        if (status && packets[i])
            dxgk_packet_free(packets[i]);
        if (acquired)
            dxgk_context_release(ctxs[i]);
        else
            dxgk_context_put(ctxs[i]);
    }
    if (status)
        free(op);
    return status;
}

NTSTATUS dxgk_gpu_wait(D3DKMT_HANDLE context, const D3DKMT_HANDLE *handles, UINT nobjs,
                       const UINT64 *values, UINT64 value, unsigned allowed)
{
    struct dxgk_context *ctx;
    struct dxgk_packet *p;
    NTSTATUS status;

    if (!nobjs || nobjs > D3DDDI_MAX_OBJECT_WAITED_ON || !handles)
        return STATUS_INVALID_PARAMETER;
    if (!(ctx = dxgk_context_acquire(context)))
        return STATUS_INVALID_PARAMETER;
    if (atomic_load(&ctx->device->execution_state) != D3DKMT_DEVICEEXECUTION_ACTIVE) {
        dxgk_context_release(ctx);
        return STATUS_DEVICE_REMOVED;
    }
    if (!(p = calloc(1, sizeof(*p)))) {
        dxgk_context_release(ctx);
        return STATUS_NO_MEMORY;
    }
    status = lookup_objects(ctx->device->adapter, handles, nobjs, allowed, false, p->wait.objs);
    if (status) {
        free(p);
        dxgk_context_release(ctx);
        return status;
    }
    p->type = DXGK_PACKET_WAIT;
    p->context = ctx;
    kmt_object_get(&ctx->obj);
    p->wait.count = nobjs;
    for (UINT i = 0; i < nobjs; i++)
        p->wait.values[i] = values ? values[i] : value;
    if ((status = dxgk_sched_queue(&p, 1)))
        dxgk_packet_free(p);
    dxgk_context_release(ctx);
    return status;
}

/* Which object types each entry point accepts. */
const unsigned dxgk_types_signal_v1 = TYPE_BIT(D3DDDI_SYNCHRONIZATION_MUTEX) |
                                      TYPE_BIT(D3DDDI_SEMAPHORE) |
                                      TYPE_BIT(D3DDDI_CPU_NOTIFICATION);
const unsigned dxgk_types_signal_v2 = TYPE_BIT(D3DDDI_SYNCHRONIZATION_MUTEX) |
                                      TYPE_BIT(D3DDDI_SEMAPHORE) | TYPE_BIT(D3DDDI_FENCE) |
                                      TYPE_BIT(D3DDDI_CPU_NOTIFICATION) |
                                      TYPE_BIT(D3DDDI_MONITORED_FENCE);
const unsigned dxgk_types_wait_v1 = TYPE_BIT(D3DDDI_SYNCHRONIZATION_MUTEX) | TYPE_BIT(D3DDDI_SEMAPHORE);
const unsigned dxgk_types_wait_v2 = TYPE_BIT(D3DDDI_SYNCHRONIZATION_MUTEX) |
                                    TYPE_BIT(D3DDDI_SEMAPHORE) | TYPE_BIT(D3DDDI_FENCE) |
                                    TYPE_BIT(D3DDDI_MONITORED_FENCE);
const unsigned dxgk_types_monitored = TYPE_BIT(D3DDDI_MONITORED_FENCE);
const unsigned dxgk_types_legacy_fence = TYPE_BIT(D3DDDI_FENCE);
