/*
 * VidSch: contexts and the GPU scheduler.
 *
 * Every context has a queue of packets, in the order the program issued
 * them: command buffers (SubmitCommand / Render), signals and waits of sync
 * objects, CPU-event requests.  One scheduler thread per adapter walks the
 * queues, as Windows' VidSch does:
 *   - a command buffer is handed to the miniport at once (DxgkDdiSubmitCommand
 *     or ...Virtual) with a fresh SubmissionFenceId for its node;
 *   - a signal runs when every command buffer the context submitted before
 *     it has completed (DMA_COMPLETED interrupt);
 *   - a wait blocks the context's queue until its objects are signaled
 *     (mutexes and semaphores are acquired then);
 *   - broadcast signals wait for every listed context.
 * The miniport reports progress through DxgkCbNotifyInterrupt.
 *
 * Timeout detection and recovery (Windows 8's per-engine TDR): a command
 * buffer at the head of its node's in-flight list for longer than TdrDelay
 * (2 s, KMTSHIM_TDR_DELAY in ms, 0 turns detection off) hung the engine.
 * The scheduler calls DxgkDdiResetEngine; what the driver aborted counts as
 * completed, the packets it dropped unstarted go back to their contexts to
 * be submitted again, except the hung device's, which is HUNG from then on
 * (its fences jump to the maximum unless NoSignalMaxValueOnTdr).  Without
 * DxgkDdiResetEngine the device is still HUNG and its work stays in flight.
 * Signals queued behind lost work (a reset, a fault, a cancelled queue) are
 * aborted: the fences they name go to the maximum too, never to the value
 * the signal carried, since the work before it never completed.
 */
#ifndef KMTSHIM_VIDSCH_H
#define KMTSHIM_VIDSCH_H

#include "dxgkrnl.h"

#define DXGK_MAX_NODES 16

struct dxgk_syncobj;

struct dxgk_context {
    struct kmt_object obj;
    struct list entry;                   /* device->contexts, under list_lock */
    D3DKMT_HANDLE handle;
    struct dxgk_device *device;          /* referenced */
    HANDLE driver_context;               /* from DxgkDdiCreateContext */
    UINT node;
    UINT engine_affinity;
    bool is_virtual;                     /* CreateContextVirtual: SubmitCommand, no Render */
    UINT dma_private_size;               /* DXGK_CONTEXTINFO: the driver's bytes per DMA buffer */
    atomic_bool destroyed;               /* set once under device->list_lock; lookups
                                          * read it holding only the device rwlock */
    /* legacy (Render) buffers the program writes into */
    void *command_buffer;
    UINT command_buffer_size;
    D3DDDI_ALLOCATIONLIST *allocation_list;
    UINT allocation_list_size;
    D3DDDI_PATCHLOCATIONLIST *patch_list;
    UINT patch_list_size;
    /* scheduling, under sched->lock */
    struct list queue;                   /* struct dxgk_packet, not yet retired */
    struct list active_entry;            /* sched->active while the queue is non-empty */
    bool active;
    UINT64 last_submitted;               /* newest fence id handed to the miniport */
    unsigned packets;                    /* queued packets not yet freed (drain waits for 0) */
    bool closed;                         /* teardown began: no packet may be queued */
};

enum dxgk_packet_type {
    DXGK_PACKET_SUBMIT,
    DXGK_PACKET_SIGNAL,
    DXGK_PACKET_WAIT,
    DXGK_PACKET_CPU_EVENT,
};

/* A signal shared by the contexts of a broadcast: it fires when the last
 * of them reaches it. */
struct dxgk_signal_op {
    unsigned pending;                    /* contexts not there yet, under sched->lock */
    UINT count;
    struct dxgk_syncobj *objs[D3DDDI_MAX_OBJECT_SIGNALED]; /* referenced */
    UINT64 values[D3DDDI_MAX_OBJECT_SIGNALED];
    bool allow_rewind;
    bool at_submission;                  /* SignalAtSubmission: no wait for completion */
    bool aborted;                        /* a context's work before it was given up (TDR,
                                          * fault, cancel): see fire_signal() */
    HANDLE cpu_event;                    /* EnqueueCpuEvent */
    /* A present's CPU work (dxgk_sched_queue_cpu_work), called once when
     * the op fires, outside the scheduler's lock. */
    void (*cpu_work)(void *arg, bool aborted);
    void *cpu_arg;
};

struct dxgk_packet {
    struct list entry;                   /* context queue, then sched->inflight[node] */
    enum dxgk_packet_type type;
    bool queued;                         /* counted in context->packets */
    struct dxgk_context *context;        /* referenced */
    union {
        struct {
            bool is_virtual;
            bool null_rendering;         /* Flags.NullRendering: the driver skips it */
            D3DGPU_VIRTUAL_ADDRESS va;   /* virtual submissions */
            UINT length;
            void *private_data;          /* the driver's bytes, the UMD's first */
            UINT private_data_size;
            UINT umd_private_size;
            void *dma;                   /* legacy: the DMA buffer DxgkDdiRender built */
            UINT dma_size;
            DXGK_ALLOCATIONLIST *dxgk_allocations;
            struct dxgk_allocation **allocations; /* GPU-referenced (see dxgk_allocation_gpu_ref) */
            UINT allocation_count;
            UINT64 fence_id;             /* assigned at submission */
            UINT64 running_since;        /* TDR clock: head of its node's in-flight list since */
            bool timed_out;              /* TDR handled it: not twice */
            bool refused;                /* the DDI failed it: done once all before it are */
        } submit;
        struct dxgk_signal_op *signal;   /* shared by a broadcast */
        struct {
            UINT count;
            struct dxgk_syncobj *objs[D3DDDI_MAX_OBJECT_WAITED_ON]; /* referenced */
            UINT64 values[D3DDDI_MAX_OBJECT_WAITED_ON];
        } wait;
    };
};

struct dxgk_sched {
    struct dxgk_adapter *adapter;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;                 /* work arrived, something completed */
    pthread_cond_t idle;                 /* a context drained (DestroyContext waits) */
    bool stop;
    bool submitting;                     /* a thread is inside a submission DDI */
    /* The context whose packet that DDI is making: its drain waits for the
     * call to return, as the work may complete (and the packet be freed)
     * before it does, and DxgkDdiDestroyContext must not overlap it. */
    const struct dxgk_context *submitting_ctx;
    struct list active;                  /* contexts with packets */
    UINT64 next_fence[DXGK_MAX_NODES];
    UINT64 completed[DXGK_MAX_NODES];
    struct list inflight[DXGK_MAX_NODES]; /* submitted, not completed, fence order */
    UINT64 tdr_ns;                       /* TdrDelay (KMTSHIM_TDR_DELAY); 0: no detection */
    /* Device references taken from in-flight packets and held outside the
     * lock (TDR, faults): a drain waits for 0, so such a put is never the
     * device's last (that would free it, and maybe the adapter, on a
     * scheduler or miniport thread after its destroyer returned). */
    unsigned borrowed;
    unsigned tdr_detected;               /* packets that ran past TdrDelay, under lock */
    bool sleeping_untimed;               /* the thread sleeps with no TDR deadline */
    bool token_wanted;                   /* TDR recovery waits for the submission token */
    bool flips_settle;                   /* the thread calls dxgk_flip_settle() */
};

/* context.c */
NTSTATUS dxgk_create_context(D3DKMT_HANDLE hDevice, UINT node, UINT affinity,
                             D3DDDI_CREATECONTEXTFLAGS flags, void *private_data,
                             UINT private_size, D3DKMT_CLIENTHINT hint, bool is_virtual,
                             D3DKMT_CREATECONTEXT *out);
NTSTATUS dxgk_destroy_context(D3DKMT_HANDLE h);
/* Looks a context up and acquires its device (shared); NULL if invalid. */
struct dxgk_context *dxgk_context_acquire(D3DKMT_HANDLE h);
/* The contexts of one call (a broadcast): looked up (referenced) first,
 * then acquired together, their devices' locks taken in one order; false
 * if one died meanwhile (nothing acquired, the references kept). */
struct dxgk_context *dxgk_context_lookup(D3DKMT_HANDLE h);
bool dxgk_contexts_acquire(struct dxgk_context *const *ctxs, UINT n);
void dxgk_context_release(struct dxgk_context *ctx);
void dxgk_context_put(struct dxgk_context *ctx);
/* Frees the context allocations the miniport left behind for a context or
 * (context NULL) a device. */
void dxgk_free_context_allocations(struct dxgk_adapter *adapter, HANDLE core_device, HANDLE core_context);
void dxgk_device_destroy_contexts(struct dxgk_device *device);
void dxgk_device_terminate_execution(struct dxgk_device *device);
void dxgk_context_callbacks(DXGKRNL_INTERFACE *iface);

/* vidsch.c */
NTSTATUS dxgk_sched_start(struct dxgk_adapter *adapter);
void dxgk_sched_stop(struct dxgk_adapter *adapter);
/* Queues one packet per context (all of one adapter), taking over the
 * caller's references, and wakes the scheduler.  All or none: a context
 * whose teardown began since the caller looked it up refuses with
 * STATUS_INVALID_PARAMETER, and the caller still owns the packets. */
NTSTATUS dxgk_sched_queue(struct dxgk_packet **packets, UINT count);
/* Refuses further packets for a context (its teardown begins). */
void dxgk_sched_close(struct dxgk_context *ctx);
/* Has the scheduler thread call dxgk_flip_settle(): the vsync interrupt
 * retired the last flip and cannot switch itself off. */
void dxgk_sched_defer_flip_settle(struct dxgk_adapter *adapter);
/* Re-examines blocked waits (a sync object changed). */
void dxgk_sched_kick(struct dxgk_adapter *adapter);
/* Blocks until the context's queue is empty, its work completed, its
 * packets were freed (they hold nothing any more) and no scheduler or
 * interrupt thread still holds a device reference it took from one.
 * A GPU wait that blocks the queue's head for TdrDelay is given up, with
 * the rest of the queue (dxgk_sched_cancel), so that a wait nobody will
 * satisfy cannot hold DestroyContext for ever; with detection off
 * (KMTSHIM_TDR_DELAY=0) the drain waits as long as it takes. */
void dxgk_sched_drain(struct dxgk_context *ctx);
/* Queues `work` behind the work queued on the context so far; it is
 * called (on whichever thread retires the packet, without locks) once that
 * work completed, `aborted` if it was given up.  *queued is false, and
 * nothing is queued, when the context has nothing queued or running: the
 * caller does the work itself. */
NTSTATUS dxgk_sched_queue_cpu_work(struct dxgk_context *ctx, void (*work)(void *arg, bool aborted),
                                   void *arg, bool *queued);
/* Drops the packets of a context that did not reach the miniport yet; its
 * signals among them are aborted. */
void dxgk_sched_cancel(struct dxgk_context *ctx);
void dxgk_sched_callbacks(DXGKRNL_INTERFACE *iface);
/* QueryStatistics' view of a node, read under the scheduler's lock (no
 * counter of its own on the submission path): DMA buffers handed to the
 * miniport (fence ids given out, resubmissions after a reset included) and
 * completed, and command buffers still queued on contexts. */
struct dxgk_node_counters {
    UINT64 dma_submitted;
    UINT64 dma_completed;
    UINT64 render_waiting;
};
void dxgk_sched_node_counters(struct dxgk_adapter *adapter, UINT node, struct dxgk_node_counters *out);
/* Engine hangs detected since the scheduler started (TdrDetectedCount). */
unsigned dxgk_sched_tdr_count(struct dxgk_adapter *adapter);
void dxgk_sched_interrupt(struct dxgk_adapter *adapter, const DXGKARGCB_NOTIFY_INTERRUPT_DATA *data);
void dxgk_packet_free(struct dxgk_packet *packet);

/* gpu_sync.c: signals and waits queued on contexts.  `values` gives one
 * value per object, or NULL to use `value` for all. */
NTSTATUS dxgk_gpu_signal(const D3DKMT_HANDLE *contexts, UINT ncontexts, const D3DKMT_HANDLE *handles,
                         UINT nobjs, const UINT64 *values, UINT64 value, D3DDDICB_SIGNALFLAGS flags,
                         HANDLE cpu_event, unsigned allowed_types);
NTSTATUS dxgk_gpu_wait(D3DKMT_HANDLE context, const D3DKMT_HANDLE *handles, UINT nobjs,
                       const UINT64 *values, UINT64 value, unsigned allowed_types);
extern const unsigned dxgk_types_signal_v1, dxgk_types_signal_v2, dxgk_types_wait_v1,
    dxgk_types_wait_v2, dxgk_types_monitored, dxgk_types_legacy_fence;

/* submit.c */
NTSTATUS dxgk_submit_command(const D3DKMT_SUBMITCOMMAND *desc, const void *private_data);
NTSTATUS dxgk_render(D3DKMT_RENDER *desc);

#endif /* KMTSHIM_VIDSCH_H */
