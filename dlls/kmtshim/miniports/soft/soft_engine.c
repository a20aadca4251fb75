/*
 * Software miniport: the engine.  One thread per adapter runs submitted
 * command buffers in order, asynchronously to the submitter, and reports
 * each with DxgkCbNotifyInterrupt(DMA_COMPLETED) — after DMA_FAULTED or
 * DMA_PAGE_FAULTED when it went wrong, the way hardware raises a fault.
 * DxgkDdiResetEngine (the scheduler's TDR) aborts the job that is running
 * (only WAIT_FENCE and DELAY can run long; both look at the abort flag),
 * drops the queued ones and reports nothing for any of them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/kmt_thread.h"
#include "soft.h"
#include "base/kmt_list.h"
#include "base/kmt_time.h"

#define MAX_DELAY_US 1000000u
#define DELAY_STEP_NS 10000000ull            /* 10 ms */
#define WAIT_FENCE_TIMEOUT_NS (5ull * 1000000000ull)

/* A submission, kept in its DMA buffer private data (the core's memory
 * until its DMA_COMPLETED interrupt): DxgkDdiSubmitCommand must not fail,
 * so it allocates nothing. */
struct soft_job {
    struct list entry;
    UINT fence_id;
    UINT node;
    bool null_rendering;
    UINT64 va;                           /* virtual submission */
    const void *dma;                     /* or a DMA buffer (the core owns it) */
    UINT length;
};

#define SOFT_NODES 1

struct soft_engine {
    struct soft_adapter *adapter;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_cond_t job_done;             /* a reset waits for the aborted job */
    struct list queue;
    bool running;                        /* under lock: a job runs, of this node and fence */
    UINT running_node, running_fence;
    atomic_bool abort;                   /* the running job stops at its next check */
    bool aborted;                        /* the last job ended by abort, under lock */
    unsigned long long jobs_ended;       /* under lock */
    UINT last_done[SOFT_NODES];          /* fence id of the last job that ran, per node */
    atomic_ullong busy_ns[SOFT_NODES];   /* time jobs ran, per node (RunningTime) */
    bool stop;
};

enum outcome { RAN, PAGE_FAULT, DMA_FAULT, ABORTED };

struct run {
    struct soft_adapter *a;
    UINT64 fault_va;
    NTSTATUS fault_status;
    bool signalled;                      /* a SIGNAL_FENCE ran: interrupt once it is counted */
};

static void interrupt(struct soft_adapter *a, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *data)
{
    a->dxgkrnl.DxgkCbNotifyInterrupt(a->dxgkrnl.DeviceHandle, data);
}

/* Looks two addresses up under one read lock and runs `op` on them. */
static enum outcome with_memory(struct run *r, UINT64 va1, UINT64 size1, UINT64 va2, UINT64 size2,
                                void (*op)(void *p1, void *p2, const void *arg), const void *arg)
{
    struct soft_vaspace *va = &r->a->va;
    void *p1, *p2 = NULL;
    enum outcome out = RAN;

    pthread_rwlock_rdlock(&va->lock);
    if (!(p1 = soft_va_translate(va, va1, size1))) {
        r->fault_va = va1;
        out = PAGE_FAULT;
    } else if (size2 && !(p2 = soft_va_translate(va, va2, size2))) {
        r->fault_va = va2;
        out = PAGE_FAULT;
    } else {
        op(p1, p2, arg);
    }
    pthread_rwlock_unlock(&va->lock);
    return out;
}

static void op_fill(void *dst, void *unused, const void *arg)
{
    const KMT_SOFT_CMD_FILL *c = arg;
    UINT *d = dst;

    for (UINT64 i = 0; i < c->Bytes / 4; i++)
        d[i] = c->Value;
}

static void op_copy(void *dst, void *src, const void *arg)
{
    memmove(dst, src, ((const KMT_SOFT_CMD_COPY *)arg)->Bytes);
}

static void op_store(void *dst, void *unused, const void *arg)
{
    __atomic_store_n((UINT64 *)dst, ((const KMT_SOFT_CMD_FENCE *)arg)->Value, __ATOMIC_RELEASE);
}

static void op_load(void *src, void *unused, const void *arg)
{
    *(UINT64 *)arg = __atomic_load_n((UINT64 *)src, __ATOMIC_ACQUIRE);
}

static bool aborting(const struct run *r)
{
    return atomic_load(&r->a->engine->abort);
}

static enum outcome run_wait(struct run *r, const KMT_SOFT_CMD_FENCE *c)
{
    UINT64 start = kmt_now_ns(), backoff = 20000, value;
    enum outcome out;

    while ((out = with_memory(r, c->Va, 8, 0, 0, op_load, &value)) == RAN && value < c->Value) {
        if (aborting(r))
            return ABORTED;
        if (kmt_now_ns() - start > WAIT_FENCE_TIMEOUT_NS) {
            r->fault_status = STATUS_TIMEOUT;   /* a hang: the GPU waits forever */
            return DMA_FAULT;
        }
        kmt_sleep_ns(backoff);
        if (backoff < 1000000)
            backoff *= 2;
    }
    return out;
}

static enum outcome run_command(struct run *r, const KMT_SOFT_CMD_HEADER *h)
{
    switch (h->Opcode) {
    case KMT_SOFT_OP_NOP:
        return RAN;
    case KMT_SOFT_OP_FILL: {
        const KMT_SOFT_CMD_FILL *c = (const void *)h;
        if (h->Size < sizeof(*c) || c->Bytes % 4)
            break;
        return c->Bytes ? with_memory(r, c->DstVa, c->Bytes, 0, 0, op_fill, c) : RAN;
    }
    case KMT_SOFT_OP_COPY: {
        const KMT_SOFT_CMD_COPY *c = (const void *)h;
        if (h->Size < sizeof(*c))
            break;
        return c->Bytes ? with_memory(r, c->DstVa, c->Bytes, c->SrcVa, c->Bytes, op_copy, c) : RAN;
    }
    case KMT_SOFT_OP_SIGNAL_FENCE:
    case KMT_SOFT_OP_WRITE64: {
        const KMT_SOFT_CMD_FENCE *c = (const void *)h;
        enum outcome out;
        if (h->Size < sizeof(*c) || c->Va % 8)
            break;
        out = with_memory(r, c->Va, 8, 0, 0, op_store, c);
        r->signalled = out == RAN && h->Opcode == KMT_SOFT_OP_SIGNAL_FENCE;
        return out;
    }
    case KMT_SOFT_OP_WAIT_FENCE: {
        const KMT_SOFT_CMD_FENCE *c = (const void *)h;
        if (h->Size < sizeof(*c) || c->Va % 8)
            break;
        return run_wait(r, c);
    }
    case KMT_SOFT_OP_DELAY: {
        const KMT_SOFT_CMD_DELAY *c = (const void *)h;
        if (h->Size < sizeof(*c))
            break;
        UINT64 left = (UINT64)(c->Microseconds < MAX_DELAY_US ? c->Microseconds : MAX_DELAY_US) * 1000;

        while (left) {                       /* in steps, so that a reset stops it */
            UINT64 step = left < DELAY_STEP_NS ? left : DELAY_STEP_NS;

            if (aborting(r))
                return ABORTED;
            kmt_sleep_ns(step);
            left -= step;
        }
        return RAN;
    }
    default:
        break;
    }
    r->fault_status = STATUS_ILLEGAL_INSTRUCTION;
    return DMA_FAULT;
}

/* Where a stream's bytes come from: a DMA buffer the core owns (Render),
 * or GPU memory, read command by command as the engine reaches it, as
 * hardware does.  Nothing is allocated on the engine thread: a job that
 * ran out of memory there would fault a device whose submission had
 * already succeeded. */
struct stream {
    const unsigned char *dma;
    UINT64 va;
    UINT length;
};

/* The largest command the engine reads; a longer one's tail is padding. */
union command {
    KMT_SOFT_CMD_HEADER header;
    KMT_SOFT_CMD_FILL fill;
    KMT_SOFT_CMD_COPY copy;
    KMT_SOFT_CMD_FENCE fence;
    KMT_SOFT_CMD_DELAY delay;
};

struct fetch {
    void *out;
    UINT size;
};

static void op_fetch(void *src, void *unused, const void *arg)
{
    const struct fetch *f = arg;

    memcpy(f->out, src, f->size);
}

static void op_none(void *p1, void *p2, const void *arg)
{
}

static enum outcome fetch(struct run *r, const struct stream *s, UINT offset, void *out, UINT size)
{
    struct fetch f = { out, size };

    if (s->dma) {
        memcpy(out, s->dma + offset, size);
        return RAN;
    }
    return with_memory(r, s->va + offset, size, 0, 0, op_fetch, &f);
}

static enum outcome run_stream(struct run *r, const struct stream *s)
{
    UINT offset = 0;

    /* a stream outside GPU memory faults at its start, before any of it runs */
    if (!s->dma && with_memory(r, s->va, s->length, 0, 0, op_none, NULL) != RAN)
        return PAGE_FAULT;
    while (offset < s->length) {
        const UINT left = s->length - offset;
        union command cmd = { 0 };
        enum outcome out;

        if (left < sizeof(cmd.header))
            break;
        if ((out = fetch(r, s, offset, &cmd, left < sizeof(cmd) ? left : sizeof(cmd))) != RAN)
            return out;
        if (cmd.header.Size < sizeof(cmd.header) || cmd.header.Size % 8 || cmd.header.Size > left)
            break;
        if ((out = run_command(r, &cmd.header)) != RAN)
            return out;
        atomic_fetch_add(&r->a->commands, 1);
        /* counted before the waiter it wakes can read the statistics */
        if (r->signalled) {
            DXGKARGCB_NOTIFY_INTERRUPT_DATA data = { .InterruptType = DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED };
            r->signalled = false;
            interrupt(r->a, &data);
        }
        offset += cmd.header.Size;
    }
    if (offset == s->length)
        return RAN;
    r->fault_status = STATUS_ILLEGAL_INSTRUCTION;   /* a torn or malformed command */
    return DMA_FAULT;
}

/* Returns false when a reset aborted it: then nothing is reported.  The
 * job is not read once a fault or completion is reported: the core may
 * free it from then on. */
static bool run_job(struct soft_adapter *a, struct soft_job *job)
{
    const UINT fence = job->fence_id, node = job->node;
    struct run r = { .a = a };
    enum outcome out = RAN;
    DXGKARGCB_NOTIFY_INTERRUPT_DATA data = { 0 };

    if (!job->null_rendering) {
        const struct stream stream = { job->dma, job->va, job->length };

        out = run_stream(&r, &stream);
    }
    if (out == ABORTED) {
        soft_trace(a, KMT_TRACE_WARN, __func__, "fence %u aborted by an engine reset\n", fence);
        return false;
    }
    if (out == PAGE_FAULT) {
        data.InterruptType = DXGK_INTERRUPT_DMA_PAGE_FAULTED;
        data.DmaPageFaulted.FaultedFenceId = fence;
        data.DmaPageFaulted.NodeOrdinal = node;
        data.DmaPageFaulted.FaultedVirtualAddress = r.fault_va;
        soft_trace(a, KMT_TRACE_WARN, __func__, "page fault at %#llx (fence %u)\n",
                   (unsigned long long)r.fault_va, fence);
        interrupt(a, &data);
    } else if (out == DMA_FAULT) {
        data.InterruptType = DXGK_INTERRUPT_DMA_FAULTED;
        data.DmaFaulted.FaultedFenceId = fence;
        data.DmaFaulted.Status = r.fault_status;
        data.DmaFaulted.NodeOrdinal = node;
        soft_trace(a, KMT_TRACE_WARN, __func__, "DMA fault %#x (fence %u)\n", (unsigned)r.fault_status,
                   fence);
        interrupt(a, &data);
    }
    memset(&data, 0, sizeof(data));
    data.InterruptType = DXGK_INTERRUPT_DMA_COMPLETED;
    data.DmaCompleted.SubmissionFenceId = fence;
    data.DmaCompleted.NodeOrdinal = node;
    interrupt(a, &data);
    return true;
}

static void *engine_thread(void *arg)
{
    struct soft_engine *e = arg;

    pthread_mutex_lock(&e->lock);
    for (;;) {
        struct soft_job *job;
        UINT64 started;
        UINT node;
        bool ran;

        while (!e->stop && list_empty(&e->queue))
            pthread_cond_wait(&e->cond, &e->lock);
        if (list_empty(&e->queue))
            break;                         /* stopping, and drained */
        job = LIST_ENTRY(e->queue.next, struct soft_job, entry);
        list_remove(&job->entry);
        e->running = true;
        e->running_node = job->node;
        e->running_fence = job->fence_id;
        pthread_mutex_unlock(&e->lock);
        started = kmt_now_ns();
        node = job->node;
        ran = run_job(e->adapter, job);     /* the job may be gone after this */
        if (node < SOFT_NODES)
            atomic_fetch_add_explicit(&e->busy_ns[node], kmt_now_ns() - started, memory_order_relaxed);
        pthread_mutex_lock(&e->lock);
        e->aborted = !ran;
        if (ran && e->running_node < SOFT_NODES)
            e->last_done[e->running_node] = e->running_fence;
        e->running = false;
        e->jobs_ended++;
        pthread_cond_broadcast(&e->job_done);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

UINT64 soft_engine_busy_ns(struct soft_adapter *a, UINT node)
{
    struct soft_engine *e = a->engine;

    if (!e || node >= SOFT_NODES)
        return 0;
    return atomic_load_explicit(&e->busy_ns[node], memory_order_relaxed);
}

NTSTATUS soft_engine_start(struct soft_adapter *a)
{
    struct soft_engine *e = calloc(1, sizeof(*e));

    if (!e)
        return STATUS_NO_MEMORY;
    e->adapter = a;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    pthread_cond_init(&e->job_done, NULL);
    atomic_init(&e->abort, false);
    list_init(&e->queue);
    if (kmt_thread_create(&e->thread, "kmt-soft-engine", engine_thread, e)) {
        free(e);
        return STATUS_NO_MEMORY;
    }
    a->engine = e;
    return STATUS_SUCCESS;
}

void soft_engine_stop(struct soft_adapter *a)
{
    struct soft_engine *e = a->engine;

    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    e->stop = true;
    pthread_cond_signal(&e->cond);
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->thread, NULL);
    pthread_cond_destroy(&e->job_done);
    pthread_cond_destroy(&e->cond);
    pthread_mutex_destroy(&e->lock);
    free(e);
    a->engine = NULL;
}

static NTSTATUS queue_job(struct soft_adapter *a, struct soft_job *job)
{
    struct soft_engine *e = a->engine;

    pthread_mutex_lock(&e->lock);
    list_add_tail(&e->queue, &job->entry);
    pthread_cond_signal(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return STATUS_SUCCESS;
}

const UINT soft_job_size = sizeof(struct soft_job);

static struct soft_job *job_in(void *private_data, UINT size)
{
    struct soft_job *job = private_data;

    if (!job || size < sizeof(*job) || (uintptr_t)job % _Alignof(struct soft_job))
        return NULL;
    memset(job, 0, sizeof(*job));
    return job;
}

NTSTATUS APIENTRY soft_submit_command(HANDLE hAdapter, const DXGKARG_SUBMITCOMMAND *args)
{
    struct soft_job *job = job_in(args->pDmaBufferPrivateData, args->DmaBufferPrivateDataSize);

    if (!job)
        return STATUS_INVALID_PARAMETER;
    job->fence_id = args->SubmissionFenceId;
    job->node = args->NodeOrdinal;
    job->null_rendering = args->Flags.NullRendering;
    job->dma = (const char *)args->pKmtDmaBuffer + args->DmaBufferSubmissionStartOffset;
    job->length = args->DmaBufferSubmissionEndOffset - args->DmaBufferSubmissionStartOffset;
    return queue_job(hAdapter, job);
}

NTSTATUS APIENTRY soft_submit_command_virtual(HANDLE hAdapter, const DXGKARG_SUBMITCOMMANDVIRTUAL *args)
{
    /* the UMD's private data is not read: the job may overwrite it */
    struct soft_job *job = job_in(args->pDmaBufferPrivateData, args->DmaBufferPrivateDataSize);

    if (!job)
        return STATUS_INVALID_PARAMETER;
    job->fence_id = args->SubmissionFenceId;
    job->node = args->NodeOrdinal;
    job->null_rendering = args->Flags.NullRendering;
    job->va = args->DmaBufferVirtualAddress;
    job->length = args->DmaBufferSize;
    return queue_job(hAdapter, job);
}

/* The scheduler's TDR.  Returns once the node's queue is empty and nothing
 * of it runs: the aborted job's id, or the last that ran when the hung one
 * finished by itself meanwhile (the scheduler then aborted nothing). */
NTSTATUS APIENTRY soft_reset_engine(HANDLE hAdapter, DXGKARG_RESETENGINE *args)
{
    struct soft_adapter *a = hAdapter;
    struct soft_engine *e = a->engine;
    struct soft_job *job, *next;
    UINT node = args->NodeOrdinal;

    if (!e || node >= SOFT_NODES || args->EngineOrdinal)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&e->lock);
    LIST_FOR_EACH_ENTRY_SAFE(job, next, &e->queue, struct soft_job, entry) {
        if (job->node != node)
            continue;
        list_remove(&job->entry);        /* dropped unstarted: the scheduler resubmits it */
    }
    args->LastAbortedFenceId = e->last_done[node];
    if (e->running && e->running_node == node) {
        UINT fence = e->running_fence;
        unsigned long long ended = e->jobs_ended;

        /* no job can start behind it: the queue holds none of this node,
         * and submissions wait while the scheduler resets */
        atomic_store(&e->abort, true);
        while (e->jobs_ended == ended)
            pthread_cond_wait(&e->job_done, &e->lock);
        atomic_store(&e->abort, false);
        args->LastAbortedFenceId = e->aborted ? fence : e->last_done[node];
    }
    pthread_mutex_unlock(&e->lock);
    soft_trace(a, KMT_TRACE_WARN, __func__, "node %u reset, last aborted fence %u\n", node,
               args->LastAbortedFenceId);
    return STATUS_SUCCESS;
}
